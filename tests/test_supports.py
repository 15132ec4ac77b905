"""Multi-support excitation ([[support]]) against solutions written here: the records
integrated by quadrature, uniform base excitation, the absolute equations of motion solved by
scipy's solve_ivp, modal equations built with scipy's eigh, and closed forms."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp
from scipy.linalg import eigh

import fem
from fem.errors import FunctionError
from fem.functions import Table
from fem.functions.integrated import IntegratedTable

# a chain A - N1 - N2 - N3 - B along X: masses on N1..N3 (and on the supports, for their
# reactions), springs and dampers between neighbours, a spring from N2 to the ground
K_SPRING, C_SPRING, K_GROUND = 4000.0, 0.8, 1500.0
MASSES = {"A": 0.5, "N1": 1.0, "N2": 2.0, "N3": 1.5, "B": 0.7}
NODES = ("A", "N1", "N2", "N3", "B")
ACC_A = [[0.0, 0.0], [0.05, 3.0], [0.12, -2.0], [0.2, 1.0], [0.3, 0.0]]
ACC_B = [[0.0, 0.0], [0.08, -4.0], [0.16, 2.5], [0.25, 0.0]]


def chain(ground=True, damping=C_SPRING):
    """The chain as study tables (no analysis)."""
    cells = {f"S{i}": {"type": "SEG2", "nodes": [a, b]}
             for i, (a, b) in enumerate(zip(NODES, NODES[1:]), 1)}
    discrete = [{"cells": list(cells), "stiffness": K_SPRING, "damping": damping}]
    discrete += [{"nodes": [n], "mass": m} for n, m in MASSES.items()]
    if ground:
        discrete.append({"nodes": ["N2"], "stiffness": K_GROUND})
    return {
        "mesh": {"nodes": {n: [float(i), 0.0, 0.0] for i, n in enumerate(NODES)},
                 "cells": cells},
        "model": {"components": ["DX"]},
        "discrete": discrete,
        "functions": {"acc_a": {"table": ACC_A, "right": "constant"},
                      "acc_b": {"table": ACC_B, "right": "constant"}},
        "support": [{"name": "left", "nodes": ["A"], "acceleration": {"DX": "acc_a"}},
                    {"name": "right", "nodes": ["B"], "acceleration": {"DX": "acc_b"}}],
    }


def matrices(ground=True, damping=C_SPRING):
    """M, C, K (5 x 5) of the chain, dofs in the order of NODES."""
    n = len(NODES)
    M = np.diag([MASSES[x] for x in NODES])
    K, C = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n - 1):
        for A, v in ((K, K_SPRING), (C, damping)):
            A[i:i + 2, i:i + 2] += v * np.array([[1.0, -1.0], [-1.0, 1.0]])
    if ground:
        K[2, 2] += K_GROUND
    return M, C, K


def table_fn(rows):
    t, a = np.array(rows).T
    return lambda s: np.interp(s, t, a)


def absolute_reference(times, accelerations, u0=None, v0=None, ground=True,
                       damping=C_SPRING, coupled=True, mass_damping=0.0, support_v0=(0, 0)):
    """Absolute motion of the 5 dofs by solve_ivp of the absolute equations of the free dofs
    (with the supports' motion integrated in the same ODE from rest, or from the velocities
    ``support_v0``; ``accelerations``: tables or functions). ``coupled = False`` writes the
    relative equations without the damping coupling instead. Returns (u, v, a) (nt, 5)."""
    M, C, K = matrices(ground, damping)
    C = C + mass_damping * M
    f, b = [1, 2, 3], [0, 4]
    Mff, Cff, Kff = (X[np.ix_(f, f)] for X in (M, C, K))
    Cfb, Kfb = C[np.ix_(f, b)], K[np.ix_(f, b)]
    psi = -np.linalg.solve(Kff, Kfb)
    acc = [r if callable(r) else table_fn(r) for r in accelerations]

    def rhs(t, z):
        x, v, ub, vb = z[:3], z[3:6], z[6:8], z[8:10]
        ab = np.array([a(t) for a in acc])
        if coupled:
            force = -Cff @ v - Kff @ x - Cfb @ vb - Kfb @ ub
        else:
            # the relative motion y = x - Psi u_b: Mff y'' + Cff y' + Kff y = -Mff Psi a_b,
            # so that Mff x'' = -Cff y' - Kff y
            force = -Cff @ (v - psi @ vb) - Kff @ (x - psi @ ub)
        return np.concatenate([v, np.linalg.solve(Mff, force), vb, ab])

    z0 = np.zeros(10)
    if u0 is not None:
        z0[:3] = u0
    if v0 is not None:
        z0[3:6] = v0
    z0[8:10] = support_v0
    sol = solve_ivp(rhs, (times[0], times[-1]), z0, t_eval=times, rtol=1e-11, atol=1e-14,
                    method="DOP853", max_step=0.01, first_step=1e-5)
    assert sol.success
    z = sol.y.T
    u = np.zeros((len(times), 5))
    v = np.zeros_like(u)
    u[:, f], u[:, b] = z[:, :3], z[:, 6:8]
    v[:, f], v[:, b] = z[:, 3:6], z[:, 8:10]
    a = np.array([rhs(t, zz) for t, zz in zip(times, z)])
    acc_all = np.zeros_like(u)
    acc_all[:, f], acc_all[:, b] = a[:, 3:6], a[:, 8:10]
    return u, v, acc_all


def run(tables, analyses, checks=()):
    data = copy.deepcopy(tables)
    data["analysis"] = analyses
    return fem.run(fem.Study.from_dict(data))


def fields(results, name, field):
    a = results.analysis(name)
    return a.time, np.column_stack([a.series(field, n, "DX")[1] for n in NODES])


# ---------------------------------------------------------------------------- the records
@pytest.mark.parametrize("left,right", [("error", "error"), ("constant", "linear"),
                                        ("linear", "constant")])
def test_acceleration_table_integrated_exactly(left, right):
    rows = [[0.2, 1.0], [0.5, -2.0], [0.9, 0.5], [1.4, 3.0]]
    table = Table("acc", *np.array(rows).T, left=left, right=right)
    fn = IntegratedTable("u", table, scale=2.0, velocity=0.3, displacement=-0.1)
    t0 = 0.2
    lo = 0.2 if left == "error" else -0.3
    hi = 1.4 if right == "error" else 2.0
    times = np.linspace(lo, hi, 37)

    def a(s):
        return 2.0 * float(table(s))

    for t in times:
        # Cauchy's formula: d(t) = d0 + v0 (t - t0) + int_t0^t (t - s) a(s) ds
        pts = [p for p, _ in rows if min(t, t0) < p < max(t, t0)]
        vel = 0.3 + quad(a, t0, t, points=pts or None, epsabs=1e-13, epsrel=1e-12)[0]
        disp = -0.1 + 0.3 * (t - t0) + quad(lambda s: (t - s) * a(s), t0, t, points=pts or None,
                                          epsabs=1e-13, epsrel=1e-12)[0]
        assert fn(t) == pytest.approx(disp, abs=1e-12)
        assert fn.derivative(t, 1) == pytest.approx(vel, abs=1e-12)
        assert fn.derivative(t, 2) == pytest.approx(a(t), abs=1e-12)
    # right-continuous slope of the acceleration at a breakpoint, none beyond
    assert fn.derivative(0.5, 3) == pytest.approx(2.0 * (0.5 + 2.0) / 0.4)
    assert fn.derivative(0.7, 4) == 0.0
    if left == "error":
        with pytest.raises(FunctionError, match="before"):
            fn(0.1)


# ------------------------------------------------------- (a) equal records = base excitation
def test_equal_records_equal_uniform_base_excitation():
    """The same record on both supports, no spring to the ground: the static modes are the
    rigid motion and the relative motion is that of the base acceleration load; the absolute
    motion adds the ground's, integrated here by quadrature."""
    multi = chain(ground=False)
    multi["support"][1]["acceleration"] = {"DX": "acc_a"}
    uniform = chain(ground=False)
    del uniform["support"]
    uniform["constraint"] = [{"nodes": ["A", "B"], "DX": 0.0}]
    uniform["load"] = [{"kind": "base_acceleration", "direction": [1.0, 0.0, 0.0],
                        "function": "acc_a"}]
    analyses = [{"name": "nm", "kind": "transient", "step": 0.002, "end": 0.6},
                {"name": "modes", "kind": "modes", "count": 3},
                {"name": "modal", "kind": "transient", "basis": "modal", "modes": "modes",
                 "scheme": "central_difference", "step": 0.001, "end": 0.6}]
    a, b = run(multi, analyses), run(uniform, analyses)
    acc = table_fn(ACC_A)
    for name in ("nm", "modal"):
        t, rel = fields(a, name, "relative_displacement")
        _, ref = fields(b, name, "displacement")
        assert np.max(np.abs(rel - ref)) <= 1e-12 * np.max(np.abs(ref))
        _, rel_a = fields(a, name, "relative_acceleration")
        _, ref_a = fields(b, name, "acceleration")
        assert np.max(np.abs(rel_a - ref_a)) <= 1e-10 * np.max(np.abs(ref_a))
        ground = np.array([quad(lambda s: (tt - s) * acc(s), 0, tt,
                                points=[p for p, _ in ACC_A if 0 < p < tt] or None,
                                epsabs=1e-15)[0] for tt in t[::25]])
        _, absolute = fields(a, name, "displacement")
        expect = ref[::25] + ground[:, None]
        assert np.max(np.abs(absolute[::25] - expect)) <= 1e-11 * np.max(np.abs(expect))


# ----------------------------------------- (b) different records = the absolute equations
def test_different_records_equal_absolute_equations():
    """Exact scheme (physical and modal with every mode) against solve_ivp of the absolute
    equations; Newmark and central differences at their second-order accuracy; the reactions
    at the supports from the absolute motion."""
    tables = chain()
    tables["initial"] = [{"nodes": ["N1"], "displacement": {"DX": 2e-3}},
                         {"nodes": ["N3"], "velocity": {"DX": -0.05}}]
    analyses = [{"name": "exact", "kind": "transient", "scheme": "exact", "step": 0.01,
                 "end": 0.5},
                {"name": "modes", "kind": "modes", "count": 3},
                {"name": "modal_exact", "kind": "transient", "basis": "modal", "modes": "modes",
                 "scheme": "exact", "step": 0.01, "end": 0.5},
                {"name": "nm", "kind": "transient", "step": 5e-4, "end": 0.5,
                 "archive": {"every": 20}},
                {"name": "cd", "kind": "transient", "scheme": "central_difference",
                 "step": 2e-4, "end": 0.5, "archive": {"every": 50}}]
    res = run(tables, analyses)
    t = res.analysis("exact").time
    u, v, acc = absolute_reference(t, [ACC_A, ACC_B], u0=[2e-3, 0, 0], v0=[0, 0, -0.05])
    scale = np.max(np.abs(u))
    for name, tol in (("exact", 1e-8), ("modal_exact", 1e-8), ("nm", 2e-3), ("cd", 2e-3)):
        _, x = fields(res, name, "displacement")
        assert np.max(np.abs(x - u)) <= tol * scale, name
        _, xv = fields(res, name, "velocity")
        assert np.max(np.abs(xv - v)) <= 10 * tol * np.max(np.abs(v)), name
        _, xa = fields(res, name, "acceleration")
        assert np.max(np.abs(xa - acc)) <= 100 * tol * np.max(np.abs(acc)), name
    # relative = absolute - Psi u_b on the free dofs, 0 on the supports
    M, C, K = matrices()
    psi = -np.linalg.solve(K[1:4, 1:4], K[1:4][:, [0, 4]])
    _, rel = fields(res, "exact", "relative_displacement")
    expect = u.copy()
    expect[:, 1:4] -= u[:, [0, 4]] @ psi.T
    expect[:, [0, 4]] = 0.0
    assert np.max(np.abs(rel - expect)) <= 1e-8 * scale
    # reactions: the row of the support, R = M a + C v + K u
    run_ = res.analysis("exact")
    for node, row in (("A", 0), ("B", 4)):
        _, r = run_.reaction(node, "FX")
        ref = acc @ M[row] + v @ C[row] + u @ K[row]
        assert np.max(np.abs(r - ref)) <= 1e-7 * np.max(np.abs(ref))
    # element force of the spring A-N1 from the absolute motion
    _, s1 = run_.element_force("S1", "N")
    ref = K_SPRING * (u[:, 1] - u[:, 0]) + C_SPRING * (v[:, 1] - v[:, 0])
    assert np.max(np.abs(s1 - ref)) <= 1e-7 * np.max(np.abs(ref))


def test_displacement_expressions_exact_scheme():
    """Supports driven by displacement expressions (their derivatives are exact): the exact
    scheme, physical and modal, against solve_ivp of the absolute equations."""
    tables = chain()
    tables["functions"].update({"ua": {"expression": "0.002*sin(2*pi*5*t)"},
                                "ub": {"expression": "0.003*(1 - cos(2*pi*3*t))"}})
    tables["support"] = [{"name": "left", "nodes": ["A"], "displacement": {"DX": "ua"}},
                         {"name": "right", "nodes": ["B"], "displacement": {"DX": "ub"}}]
    analyses = [{"name": "exact", "kind": "transient", "scheme": "exact", "step": 0.01,
                 "end": 0.3},
                {"name": "modes", "kind": "modes", "count": 3},
                {"name": "modal", "kind": "transient", "basis": "modal", "modes": "modes",
                 "scheme": "exact", "step": 0.01, "end": 0.3, "nodes": ["N2", "B"]}]
    res = run(tables, analyses)
    w1, w2 = 2 * np.pi * 5, 2 * np.pi * 3
    t = res.analysis("exact").time
    u, v, _ = absolute_reference(t, [lambda s: -0.002 * w1 ** 2 * np.sin(w1 * s),
                                     lambda s: 0.003 * w2 ** 2 * np.cos(w2 * s)],
                                 support_v0=(0.002 * w1, 0.0))
    _, x = fields(res, "exact", "displacement")
    assert np.max(np.abs(x - u)) <= 1e-8 * np.max(np.abs(u))
    modal = res.analysis("modal")
    for node in ("N2", "B"):
        j = NODES.index(node)
        assert np.max(np.abs(modal.series("displacement", node, "DX")[1] - u[:, j])) <= \
            1e-8 * np.max(np.abs(u))
        # relative fields on the recombined nodes only: the same as on every dof
        assert np.max(np.abs(modal.series("relative_displacement", node, "DX")[1]
                             - res.analysis("exact").series("relative_displacement", node,
                                                            "DX")[1])) <= \
            1e-8 * np.max(np.abs(u))


def test_acceleration_records_equal_their_doubly_integrated_displacements():
    """Supports driven by acceleration records move the model exactly as supports driven by
    the displacements those records integrate to. Triangular pulses: a_A rises at 50 m/s^3
    from 0 to 5 m/s^2 at 0.1 s and back to 0 at 0.2 s, a_B to -3 m/s^2 at 0.15 s between
    0.05 and 0.25 s; their double integrals are sums of (t - t_i)+^3 / 6. The runs against
    solve_ivp of the absolute equations (the exact scheme to 1e-8; Newmark and central
    differences to their accuracy), and against each other on two schemes."""
    acc = chain()
    acc["functions"] = {
        "aa": {"table": [[0.0, 0.0], [0.1, 5.0], [0.2, 0.0]], "right": "constant"},
        "ab": {"table": [[0.0, 0.0], [0.05, 0.0], [0.15, -3.0], [0.25, 0.0]],
               "right": "constant"},
        "ua": {"expression": "50/6*(max(t,0)**3 - 2*max(t-0.1,0)**3 + max(t-0.2,0)**3)"},
        "ub": {"expression": "-30/6*(max(t-0.05,0)**3 - 2*max(t-0.15,0)**3"
                             " + max(t-0.25,0)**3)"}}
    disp = copy.deepcopy(acc)
    acc["support"] = [{"name": "left", "nodes": ["A"], "acceleration": {"DX": "aa"}},
                      {"name": "right", "nodes": ["B"], "acceleration": {"DX": "ab"}}]
    disp["support"] = [{"name": "left", "nodes": ["A"], "displacement": {"DX": "ua"}},
                       {"name": "right", "nodes": ["B"], "displacement": {"DX": "ub"}}]
    analyses = [{"name": "nm", "kind": "transient", "step": 5e-4, "end": 0.4,
                 "archive": {"every": 20}},
                {"name": "cd", "kind": "transient", "scheme": "central_difference",
                 "step": 2e-4, "end": 0.4, "archive": {"every": 50}}]
    exact = {"name": "exact", "kind": "transient", "scheme": "exact", "step": 0.01, "end": 0.4}
    # the displacements' second derivatives vanish after the pulses, to round-off: the exact
    # scheme must not chase that round-off with ever shorter steps
    a, d = run(acc, analyses + [exact]), run(disp, analyses + [exact])
    t = a.analysis("exact").time
    u, _, _ = absolute_reference(t, [table_fn([[0.0, 0.0], [0.1, 5.0], [0.2, 0.0],
                                               [1.0, 0.0]]),
                                     table_fn([[0.0, 0.0], [0.05, 0.0], [0.15, -3.0],
                                               [0.25, 0.0], [1.0, 0.0]])])
    scale = np.max(np.abs(u))
    for res in (a, d):
        _, x = fields(res, "exact", "displacement")
        assert np.max(np.abs(x - u)) <= 1e-8 * scale
        assert res.analysis("exact").steps < 200
    for name in ("nm", "cd"):
        _, x = fields(d, name, "displacement")
        assert np.max(np.abs(x - u)) <= 2e-3 * scale, name
        for field in ("displacement", "velocity", "relative_displacement"):
            _, ya = fields(a, name, field)
            _, yd = fields(d, name, field)
            assert np.max(np.abs(ya - yd)) <= 1e-8 * np.max(np.abs(yd)), (name, field)


def test_neglected_damping_coupling():
    """support_damping = "neglected" drops -(C_ff Psi + C_fb) u_b' from the relative
    equations: against solve_ivp of those equations (mass-proportional damping added, so the
    term is not zero), and different from the coupled analysis."""
    tables = chain()
    tables["model"]["rayleigh"] = {"mass": 3.0}
    analyses = [{"name": name, "kind": "transient", "scheme": "exact", "step": 0.01,
                 "end": 0.4, "support_damping": name} for name in ("coupled", "neglected")]
    res = run(tables, analyses)
    t = res.analysis("coupled").time
    _, coupled = fields(res, "coupled", "displacement")
    _, neglected = fields(res, "neglected", "displacement")
    ref_c = absolute_reference(t, [ACC_A, ACC_B], mass_damping=3.0)[0]
    ref_n = absolute_reference(t, [ACC_A, ACC_B], mass_damping=3.0, coupled=False)[0]
    scale = np.max(np.abs(ref_c))
    assert np.max(np.abs(coupled - ref_c)) <= 1e-8 * scale
    assert np.max(np.abs(neglected - ref_n)) <= 1e-8 * scale
    assert np.max(np.abs(ref_n - ref_c)) > 1e-3 * scale


# ------------------------------------------------------ (c) modal basis with modal damping
def test_modal_damping_acts_on_relative_motion():
    """Modal damping ratios on the modes of the structure with its supports clamped act on
    the relative motion y only: against the modal equations built here with eigh and
    integrated by solve_ivp, recombined as Phi eta + Psi u_b."""
    tables = chain(damping=0.0)
    xi = [0.02, 0.05, 0.1]
    analyses = [{"name": "modes", "kind": "modes", "count": 3},
                {"name": "modal", "kind": "transient", "basis": "modal", "modes": "modes",
                 "scheme": "exact", "step": 0.01, "end": 0.5, "damping": "modal",
                 "modal_damping": xi},
                {"name": "rk54", "kind": "transient", "basis": "modal", "modes": "modes",
                 "scheme": "rk54", "step": 0.01, "end": 0.5, "damping": "modal",
                 "modal_damping": xi, "tolerance": 1e-10}]
    res = run(tables, analyses)
    M, _, K = matrices(damping=0.0)
    f, b = [1, 2, 3], [0, 4]
    w2, phi = eigh(K[np.ix_(f, f)], M[np.ix_(f, f)])
    w = np.sqrt(w2)
    psi = -np.linalg.solve(K[np.ix_(f, f)], K[np.ix_(f, b)])
    gen = phi.T @ M[np.ix_(f, f)] @ psi          # (3, 2): the generalized inertia of the supports
    acc = [table_fn(ACC_A), table_fn(ACC_B)]

    def rhs(t, z):
        eta, etad, vb = z[:3], z[3:6], z[8:]
        ab = np.array([a(t) for a in acc])
        return np.concatenate([etad, -gen @ ab - 2 * np.array(xi) * w * etad - w2 * eta, vb, ab])

    t = res.analysis("modal").time
    sol = solve_ivp(rhs, (0, 0.5), np.zeros(10), t_eval=t, rtol=1e-11, atol=1e-14,
                    method="DOP853", max_step=0.01)
    z = sol.y.T
    u = np.zeros((len(t), 5))
    u[:, f] = z[:, :3] @ phi.T + z[:, 6:8] @ psi.T
    u[:, b] = z[:, 6:8]
    for name, tol in (("modal", 1e-8), ("rk54", 1e-6)):
        _, x = fields(res, name, "displacement")
        assert np.max(np.abs(x - u)) <= tol * np.max(np.abs(u)), name


# ------------------------------------------- (d) a spring between two supports, static modes
def test_spring_between_supports_and_static_analysis():
    """A spring and a damper between two supports moving with displacement expressions, a
    mass on its own spring to the ground (it never moves): the element force is
    k (u_b2 - u_b1) + c (v_b2 - v_b1), the reaction its opposite; a static analysis at a time
    places a node between two supports at its spring-weighted mean, at rest without a time."""
    tables = {
        "mesh": {"nodes": {"A": [0.0, 0, 0], "B": [1.0, 0, 0], "P": [0.5, 1.0, 0],
                           "Q": [2.0, 0, 0]},
                 "cells": {"AB": {"type": "SEG2", "nodes": ["A", "B"]},
                           "AQ": {"type": "SEG2", "nodes": ["A", "Q"]},
                           "QB": {"type": "SEG2", "nodes": ["Q", "B"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["AB"], "stiffness": 700.0, "damping": 3.0},
                     {"cells": ["AQ"], "stiffness": 100.0},
                     {"cells": ["QB"], "stiffness": 300.0},
                     {"nodes": ["P", "Q"], "mass": 2.0}, {"nodes": ["P"], "stiffness": 50.0}],
        "functions": {"ua": {"expression": "0.01*sin(2*pi*3*t)"},
                      "ub": {"expression": "0.02*t**2"}},
        "support": [{"name": "a", "nodes": ["A"], "displacement": {"DX": "ua"}},
                    {"name": "b", "nodes": ["B"], "displacement": {"DX": "ub"}, "scale": 2.0}],
    }
    analyses = [{"name": "nm", "kind": "transient", "step": 0.01, "end": 0.5},
                {"name": "st", "kind": "static", "time": 0.3},
                {"name": "rest", "kind": "static"}]
    res = run(tables, analyses)
    a = res.analysis("nm")
    t = a.time
    ua, ub = 0.01 * np.sin(6 * np.pi * t), 0.04 * t ** 2
    va, vb = 0.06 * np.pi * np.cos(6 * np.pi * t), 0.08 * t
    _, force = a.element_force("AB", "N")
    ref = 700.0 * (ub - ua) + 3.0 * (vb - va)
    assert np.max(np.abs(force - ref)) <= 1e-12 * np.max(np.abs(ref))
    assert np.max(np.abs(a.series("displacement", "P", "DX")[1])) == 0.0
    st = res.analysis("st")
    ua3, ub3 = 0.01 * np.sin(6 * np.pi * 0.3), 0.04 * 0.09
    assert st.value("Q", "DX") == pytest.approx((100 * ua3 + 300 * ub3) / 400, rel=1e-12)
    assert st.value("B", "DX") == pytest.approx(ub3, rel=1e-12)
    assert st.element_force("AB", "N") == pytest.approx(700 * (ub3 - ua3), rel=1e-12)
    assert res.analysis("rest").value("Q", "DX") == 0.0


def test_relation_to_a_support_dof():
    """A node tied to a support by a linear relation u(N1) = u(A) moves with it."""
    tables = chain()
    tables["constraint"] = [{"terms": [{"node": "N1", "component": "DX", "coef": 1.0},
                                       {"node": "A", "component": "DX", "coef": -1.0}]}]
    res = run(tables, [{"name": "nm", "kind": "transient", "step": 0.002, "end": 0.3}])
    a = res.analysis("nm")
    assert np.max(np.abs(a.series("displacement", "N1", "DX")[1]
                         - a.series("displacement", "A", "DX")[1])) <= 1e-15
    assert np.max(np.abs(a.series("displacement", "A", "DX")[1])) > 1e-3


def test_scale_through_with_values():
    """``support.NAME.scale`` varies a support's record: the response is linear in it."""
    data = chain()
    data["support"][1]["acceleration"] = {"DX": "acc_a"}
    data["analysis"] = [{"name": "nm", "kind": "transient", "step": 0.002, "end": 0.2}]
    study = fem.Study.from_dict(data)
    doubled = study.with_values({"support.left.scale": 2.0, "support.right.scale": 2.0})
    _, one = fields(fem.run(study), "nm", "displacement")
    _, two = fields(fem.run(doubled), "nm", "displacement")
    assert np.max(np.abs(two - 2.0 * one)) <= 1e-14 * np.max(np.abs(two))
    assert np.max(np.abs(one)) > 1e-4


def test_restart_keeps_the_absolute_state():
    """An analysis that starts from the end of another goes on as one analysis would."""
    tables = chain()
    whole = [{"name": "one", "kind": "transient", "scheme": "exact", "step": 0.01, "end": 0.4}]
    split = [{"name": "first", "kind": "transient", "scheme": "exact", "step": 0.01,
              "end": 0.2},
             {"name": "second", "kind": "transient", "scheme": "exact", "step": 0.01,
              "start": 0.2, "end": 0.4, "initial": {"analysis": "first"}}]
    one, two = run(tables, whole), run(tables, split)
    t, u = fields(one, "one", "displacement")
    t2, u2 = fields(two, "second", "displacement")
    assert np.max(np.abs(u2 - u[t >= 0.2 - 1e-12])) <= 1e-10 * np.max(np.abs(u))


# ------------------------------------------------------------------------ (e) bad inputs
def _refused(change, match):
    tables = chain()
    tables["analysis"] = [{"name": "nm", "kind": "transient", "step": 0.01, "end": 0.3}]
    change(tables)
    with pytest.raises(fem.StudyError, match=match):
        fem.run(fem.Study.from_dict(tables))


def _group(t):
    t["support"][0] = {"name": "left", "node_groups": ["nope"], "acceleration": {"DX": "acc_a"}}


def _constrained(t):
    t["constraint"] = [{"nodes": ["B"], "DX": 0.0}]


def _shared(t):
    t["support"][1]["nodes"] = ["B", "A"]


def _link(t):
    t["link"] = [{"name": "stop", "kind": "shock", "nodes": ["N2"], "normal": [1.0, 0, 0],
                  "gap": 0.01, "stiffness": 1e5, "support": "middle"}]


def _two_nodes(t):
    t["link"] = [{"name": "stop", "kind": "shock", "nodes": ["N2", "N3"], "normal": [1.0, 0, 0],
                  "gap": 0.01, "stiffness": 1e5, "support": "left"}]


def _initial(t):
    t["initial"] = [{"nodes": ["A"], "velocity": {"DX": 1.0}}]


def _set(path, value):
    def change(t):
        target = t
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize("change,match", [
    (_group, r"support\[1\]\.node_groups: unknown node group 'nope'"),
    (_constrained, r"support\[2\]: DX of node B is also imposed by constraint\[1\]"),
    (_set(("support", 0, "acceleration"), {"DX": "missing"}),
     r"support\[1\]\.acceleration\.DX: unknown function 'missing'"),
    (_shared, r"support\[2\]: node A already belongs to support 'left'"),
    (_link, r"link\[1\]\.support: unknown support 'middle'"),
    (_two_nodes, r"link\[1\]\.support: applies to a link of one node"),
    (_set(("analysis", 0, "supports"), ["left", "up"]),
     r"analysis\[1\]\.supports: unknown support 'up'"),
    (_set(("support", 0, "displacement"), {"DX": "acc_a"}), r"support\[1\]: give one record"),
    (_set(("support", 0, "acceleration"), {"DY": "acc_a"}),
     r"support\[1\]\.acceleration\.DY: component DY is not in the model"),
    (_initial, r"initial\[1\]\.velocity\.DX: DX of node A is driven by support 'left'"),
    (_set(("functions", "acc_a"), {"expression": "sin(t)"}),
     r"support\[1\]\.acceleration\.DX: an acceleration record must be a table"),
    (_set(("support", 1), {"name": "right", "nodes": ["B"], "displacement": {"DX": "acc_b"}}),
     r"support\[2\]\.displacement\.DX: function 'acc_b' is a table"),
    (_set(("functions", "acc_b"), {"table": ACC_B}),
     r"analysis\[1\]: the record 'acc_b' of support 'right'.*defined over \[0, 0.25\] s"),
    (_set(("support", 0, "initial_velocity"), {"DY": 1.0}), r"initial_velocity\.DY"),
    (_set(("analysis", 0, "supports"), ["left", "left"]), r"lists a support twice"),
])
def test_bad_inputs(change, match):
    _refused(change, match)


@pytest.mark.parametrize("key,value,match", [
    ("fields", ["relative_displacement"], "'relative_displacement' needs supports"),
    ("support_damping", "neglected", "support_damping: applies only to an analysis that "
                                     "drives supports"),
])
def test_relative_keys_need_supports(key, value, match):
    tables = chain()
    del tables["support"]
    tables["constraint"] = [{"nodes": ["A", "B"], "DX": 0.0}]
    tables["analysis"] = [{"name": "nm", "kind": "transient", "step": 0.01, "end": 0.1,
                           key: value}]
    with pytest.raises(fem.StudyError, match=match):
        fem.Study.from_dict(tables)


def test_cli_refuses_a_bad_support_in_one_line(tmp_path, capsys):
    """fem run: exit code 2, one line naming the block, no results file."""
    from fem.cli import main

    tables = chain()
    tables["support"][1]["nodes"] = ["B", "A"]
    tables["analysis"] = [{"name": "nm", "kind": "transient", "step": 0.01, "end": 0.1}]
    study = tmp_path / "bad.toml"
    fem.Study.from_dict(tables).save(study)
    assert main(["run", str(study), "--out", str(tmp_path / "bad.h5")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "support[2]: node A already belongs to support 'left'" in err[0]
    assert not (tmp_path / "bad.h5").exists()


def test_mechanism_held_by_a_support():
    """A node on a diagonal spring with axial stiffness only, from a support that moves along
    X and Y: its motion across the spring is free (a zero-frequency mode), its static mode is
    the support's motion along the spring. The absolute motion against solve_ivp of
    m x'' = -k e e^T (x - u_A)."""
    e = np.array([1.0, 1.0]) / np.sqrt(2.0)
    tables = {
        "mesh": {"nodes": {"A": [0.0, 0, 0], "P": [1.0, 1.0, 0]},
                 "cells": {"AP": {"type": "SEG2", "nodes": ["A", "P"]}}},
        "model": {"components": ["DX", "DY"]},
        "discrete": [{"cells": ["AP"], "stiffness": [400.0, 0.0, 0.0], "frame": "local"},
                     {"nodes": ["P"], "mass": 1.0}],
        "functions": {"acc_a": {"table": ACC_A, "right": "constant"},
                      "acc_b": {"table": ACC_B, "right": "constant"}},
        "support": [{"name": "a", "nodes": ["A"],
                     "acceleration": {"DX": "acc_a", "DY": "acc_b"}}],
        "analysis": [{"name": "exact", "kind": "transient", "scheme": "exact", "step": 0.01,
                      "end": 0.4}],
    }
    a = fem.run(fem.Study.from_dict(tables)).analysis("exact")
    t = a.time
    acc = [table_fn(ACC_A), table_fn(ACC_B)]

    def rhs(_t, z):
        x, v, ub, vb = z[:2], z[2:4], z[4:6], z[6:]
        return np.concatenate([v, -400.0 * e * (e @ (x - ub)), vb, [f(_t) for f in acc]])

    z = solve_ivp(rhs, (0, 0.4), np.zeros(8), t_eval=t, rtol=1e-11, atol=1e-14,
                  method="DOP853", max_step=0.01).y.T
    for k, comp in enumerate(("DX", "DY")):
        x = a.series("displacement", "P", comp)[1]
        assert np.max(np.abs(x - z[:, k])) <= 1e-8 * np.max(np.abs(z[:, :2])), comp
