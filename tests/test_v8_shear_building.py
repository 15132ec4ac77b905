"""studies/v8_shear_building.toml: a three-storey shear building with elasto-plastic storeys
and fluid viscous dampers under a ground acceleration record, against a solution written here.

The reference integrates the floors' motion relative to the ground,

    m_i y_i'' = -S_i + S_(i+1) - m_i a_g(t),    S_i = F_i + c_s d_i' + c_d |d_i'|^alpha sign d_i'

(d_1 = y_1, d_i = y_i - y_(i-1) the storey drifts, F_i the storey's plastic spring, S_4 = 0)
with scipy's solve_ivp (DOP853, rtol 1e-9); the ground's motion is the record integrated twice
in closed form.
Each storey's bilinear spring with kinematic hardening is linear in the state between two
events: elastic, F = k (d - u_p) with u_p frozen; yielding towards s = +-1, on the hardening
line F = k_t d + s F_y (1 - k_t / k). solve_ivp locates the events and the integration restarts
from them with the storey's new phase:

* yield, from the elastic phase: the force reaches the elastic domain's edge,
  s (F - H u_p) = F_y, H = k k_t / (k - k_t) (Prager's back force H u_p);
* unload, from the yielding phase: the drift rate d' changes sign; the storey turns elastic
  with the plastic elongation u_p = d - F / k of that instant.

The plastic work int F du_p (on the hardening line du_p = (1 - k_t / k) dd) and the dampers'
work are integrated with the state. The dampers' power law is in the right-hand side as fem
states it (linear below 1e-6 m/s).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import fem
from closed_forms import Record, record_motion
from conftest import ROOT
from postpro.energy import energy_balance_error

STUDY = ROOT / "studies" / "v8_shear_building.toml"
FLOORS = ("F1", "F2", "F3")
MASS = np.array([2.0e4, 2.0e4, 1.5e4])          # kg, F1 F2 F3
K = np.array([2.4e7, 2.0e7, 1.6e7])             # N/m, elastic stiffness of each storey
FY = np.array([1.5e5, 1.2e5, 0.8e5])            # N, elastic limit
KT = 0.05 * K                                   # N/m, hardening slope (5 %)
H = K * KT / (K - KT)                           # N/m, Prager's back-force slope
C_LINEAR = 2.0e4                                # N.s/m, a linear damper in every storey
C_FLUID = np.array([8.0e4, 8.0e4, 0.0])         # N (s/m)^alpha, fluid dampers in storeys 1, 2
ALPHA, LINEAR_BELOW = 0.4, 1.0e-6
END, STEP = 6.0, 1.0e-3
ANALYSES = ("newmark", "hht")


def ground_record() -> tuple[np.ndarray, np.ndarray]:
    """The record as the study's header describes it: every 10 ms from 0 to 5 s,
    1.47 e(t) (sin(2 pi 1.6 t) + 0.8 sin(2 pi 2.3 t + 1) + 0.5 sin(2 pi 3.7 t + 2)
    + 0.3 sin(2 pi 6.1 t + 0.5)), rounded to 1e-4 m/s^2; e(t) rises linearly over 0.8 s,
    decays as exp(-(t - 2.5) / 0.9) after 2.5 s and goes linearly to zero over the last
    0.5 s."""
    t = np.round(np.arange(501) * 0.01, 10)
    envelope = (np.minimum(t / 0.8, 1.0) * np.where(t > 2.5, np.exp(-(t - 2.5) / 0.9), 1.0)
                * np.where(t > 4.5, (5.0 - t) / 0.5, 1.0))
    wave = (np.sin(2 * np.pi * 1.6 * t) + 0.8 * np.sin(2 * np.pi * 2.3 * t + 1.0)
            + 0.5 * np.sin(2 * np.pi * 3.7 * t + 2.0) + 0.3 * np.sin(2 * np.pi * 6.1 * t + 0.5))
    return t, np.round(1.47 * envelope * wave, 4) + 0.0


def study_table() -> dict:
    return tomllib.loads(STUDY.read_text())


def damper_force(rate: float, c: float) -> float:
    """c |v|^alpha sign v, linear below LINEAR_BELOW (fem's damper law)."""
    if abs(rate) < LINEAR_BELOW:
        return c * LINEAR_BELOW ** (ALPHA - 1.0) * rate
    return math.copysign(c * abs(rate) ** ALPHA, rate)


# ------------------------------------------------------------------------------------------
# the reference
#: state: y (3), y' (3), plastic work of each storey (3), work of the fluid dampers, work of
#: the linear dampers
Y, V, WP, WF, WL = slice(0, 3), slice(3, 6), slice(6, 9), 9, 10
ATOL = np.array([1e-12] * 3 + [1e-11] * 3 + [1e-6] * 5)
#: the same as Python floats (the right-hand side runs 1e5 times: no numpy scalars in it)
KL, KTL, FYL, HL, CFL, MASS_L = (x.tolist() for x in (K, KT, FY, H, C_FLUID, MASS))


def ground_motion(t) -> tuple[np.ndarray, np.ndarray]:
    """The ground's displacement and velocity: the record integrated twice in closed form."""
    return record_motion(*ground_record(), t)


def _drifts(y):
    return (y[0], y[1] - y[0], y[2] - y[1])


def _spring(i: int, d: float, mode: float, up: float) -> float:
    """The storey's plastic force: elastic about up (mode 0), or on the hardening line."""
    if mode == 0.0:
        return KL[i] * (d - up)
    return KTL[i] * d + mode * FYL[i] * (1.0 - KTL[i] / KL[i])


def _rhs(t, z, mode, up, record):
    y1, y2, y3, v1, v2, v3 = z[:6].tolist()
    d, rate = (y1, y2 - y1, y3 - y2), (v1, v2 - v1, v3 - v2)
    shear = [0.0, 0.0, 0.0, 0.0]
    out = [v1, v2, v3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for i in range(3):
        f = _spring(i, d[i], mode[i], up[i])
        fd = damper_force(rate[i], CFL[i]) if CFL[i] else 0.0
        shear[i] = f + C_LINEAR * rate[i] + fd
        if mode[i] != 0.0:
            out[6 + i] = f * rate[i] * (1.0 - KTL[i] / KL[i])
        out[WF] += fd * rate[i]
        out[WL] += C_LINEAR * rate[i] ** 2
    ag = record(t)
    for i in range(3):
        out[3 + i] = (shear[i + 1] - shear[i]) / MASS_L[i] - ag
    return out



def _events():
    """(kind, storey, side, function) of every event; a function is inactive (constant 1)
    in the phase where its event cannot occur."""
    out = []
    for i in range(3):
        for s in (1.0, -1.0):
            def yield_(t, z, mode, up, record, i=i, s=s):
                if mode[i] != 0.0:
                    return 1.0
                f = KL[i] * (float(_drifts(z)[i]) - up[i])
                return s * (f - HL[i] * up[i]) - FYL[i]
            yield_.terminal, yield_.direction = True, 1.0
            out.append(("yield", i, s, yield_))

        def unload(t, z, mode, up, record, i=i):
            if mode[i] == 0.0:
                return 1.0
            return mode[i] * float(_drifts(z[V])[i])
        unload.terminal, unload.direction = True, -1.0
        out.append(("unload", i, 0.0, unload))
    return out


@dataclass
class Reference:
    t: np.ndarray                 # (nt,) s
    y: np.ndarray                 # (nt, 3) m, floors relative to the ground
    v: np.ndarray                 # (nt, 3) m/s
    ground: np.ndarray            # (nt,) m, the ground's displacement
    ground_velocity: np.ndarray   # (nt,) m/s
    plastic: np.ndarray           # (nt, 3) m, plastic elongation of each storey
    work: np.ndarray              # (nt, 3) J, plastic work of each storey
    fluid: np.ndarray             # (nt,) J, work of the fluid dampers
    linear: np.ndarray            # (nt,) J, work of the linear dampers
    events: list                  # (time, "yield" or "unload", storey 0..2, side)

    @property
    def drift(self) -> np.ndarray:
        return np.diff(self.y, axis=1, prepend=0.0)


def reference(times, record=None) -> Reference:
    """The reference (module docstring) at ``times`` (increasing, within [0, END])."""
    record = Record(*(ground_record() if record is None else record))
    events = _events()
    functions = [e[3] for e in events]
    mode, up = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    t0, z0, pieces, located = 0.0, np.zeros(11), [], []
    while True:
        sol = solve_ivp(_rhs, (t0, times[-1]), z0, args=(list(mode), list(up), record),
                        events=functions, method="DOP853", rtol=1e-9, atol=ATOL,
                        max_step=0.01, dense_output=True)
        assert sol.success, sol.message
        pieces.append((t0, sol.t[-1], sol.sol, list(mode), list(up)))
        if sol.status != 1:
            break
        t0, z0 = sol.t[-1], sol.y[:, -1].copy()
        kind, i, s, _ = events[next(j for j, te in enumerate(sol.t_events) if len(te))]
        if kind == "yield":
            mode[i] = s
        else:
            d = float(_drifts(z0)[i])
            up[i] = d - _spring(i, d, mode[i], up[i]) / KL[i]
            mode[i] = 0.0
        located.append((t0, kind, i, s))
    z = np.zeros((len(times), 11))
    plastic = np.zeros((len(times), 3))
    for a, b, dense, mode, up in pieces:
        inside = np.flatnonzero((times >= a) & (times <= b))
        if not len(inside):
            continue
        z[inside] = dense(times[inside]).T
        d = np.diff(z[inside][:, Y], axis=1, prepend=0.0)
        for i in range(3):
            if mode[i] == 0.0:
                plastic[inside, i] = up[i]
            else:
                force = KT[i] * d[:, i] + mode[i] * FY[i] * (1.0 - KT[i] / K[i])
                plastic[inside, i] = d[:, i] - force / K[i]
    ground, ground_velocity = ground_motion(times)
    return Reference(np.asarray(times), z[:, Y], z[:, V], ground, ground_velocity, plastic,
                     z[:, WP], z[:, WF], z[:, WL], located)


# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ref():
    return reference(np.round(np.arange(int(round(END / STEP)) + 1) * STEP, 12))


@pytest.fixture(scope="module")
def results():
    res = fem.run(fem.Study.load(STUDY))
    yield res
    res.close()


def floors(analysis):
    """(t, drifts of the floors relative to the ground (nt, 3)) of a fem analysis."""
    t, ground = analysis.series("displacement", "G", "DX")
    y = np.stack([analysis.series("displacement", n, "DX")[1] - ground for n in FLOORS], 1)
    return t, y


def excursions(plastic: np.ndarray) -> list:
    """The yield excursions of one storey from its plastic elongation sampled at every step:
    (first index, last index, increment) of each run of consecutive steps where it changes."""
    moving = np.abs(np.diff(plastic)) > 1e-12
    edges = np.flatnonzero(np.diff(np.concatenate([[0], moving.astype(int), [0]])))
    return [(a, b, plastic[b] - plastic[a]) for a, b in zip(edges[::2], edges[1::2])]


def test_the_study_is_the_reference_model():
    """The study's masses, storey curves, dampers and record are the ones the reference
    integrates (the record also as its header's formula gives it)."""
    data = study_table()
    t, a = ground_record()
    table = np.array(data["functions"]["ground"]["table"])
    assert np.array_equal(table[:, 0], t) and np.array_equal(table[:, 1], a)
    assert data["functions"]["ground"]["right"] == "constant"
    assert np.max(np.abs(a)) == pytest.approx(3.5, abs=0.01)
    masses = {n: b["mass"] for b in data["discrete"] if "mass" in b for n in b["nodes"]}
    assert [masses[n] for n in FLOORS] == list(MASS)
    damping = [b for b in data["discrete"] if "damping" in b]
    assert len(damping) == 1 and damping[0]["damping"] == C_LINEAR
    assert sorted(damping[0]["cells"]) == ["S1", "S2", "S3"]
    nodes = ("G",) + FLOORS
    links = {b["name"]: b for b in data["link"]}
    for i in range(3):
        link = links[f"storey{i + 1}"]
        assert link["kind"] == "plastic" and link["nodes"] == [nodes[i + 1], nodes[i]]
        assert link.get("hardening", "kinematic") == "kinematic"
        (d1, f1), (d2, f2) = link["curve"]
        assert f1 / d1 == pytest.approx(K[i], rel=1e-12) and f1 == FY[i]
        assert (f2 - f1) / (d2 - d1) == pytest.approx(KT[i], rel=1e-12)
    for i in range(2):
        link = links[f"damper{i + 1}"]
        assert link["kind"] == "damper" and link["nodes"] == [nodes[i + 1], nodes[i]]
        assert link["damping"] == C_FLUID[i] and link["exponent"] == ALPHA
        assert link.get("linear_below", LINEAR_BELOW) == LINEAR_BELOW
    for b in data["link"]:
        assert b["direction"] == [1.0, 0.0, 0.0]
    assert {a["name"] for a in data["analysis"]} == set(ANALYSES)
    for a in data["analysis"]:
        assert a["step"] == STEP and a["end"] == END and sorted(a["links"]) == sorted(links)


def test_the_reference_yields_and_unloads(ref):
    """What the study is built for: every storey yields several times in both directions,
    the dampers dissipate a large share of the input, and the reference closes its own energy
    balance (kinetic + stored + dissipated = the ground's input, relative motion)."""
    yields = [[e for e in ref.events if e[1] == "yield" and e[2] == i] for i in range(3)]
    assert [len(y) for y in yields] == [7, 7, 4]
    assert all({e[3] for e in y} == {1.0, -1.0} for y in yields)
    # the relative motion's input, -int sum m a_g y' dt, by the trapezoid rule on 1 ms
    ag = np.interp(ref.t, *ground_record())
    power = -(ref.v @ MASS) * ag
    inp = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(ref.t))])
    force = np.array([[_spring(i, d, 0.0, up) for i, (d, up) in enumerate(zip(dr, pl))]
                      for dr, pl in zip(ref.drift, ref.plastic)])
    stored = np.sum(force ** 2 / (2 * K), axis=1)
    kinetic = 0.5 * (ref.v ** 2) @ MASS
    dissipated = ref.work.sum(axis=1) + ref.fluid + ref.linear
    assert np.max(np.abs(kinetic + stored + dissipated - inp)) < 2e-5 * inp[-1]
    assert 0.4 < ref.fluid[-1] / inp[-1] < 0.6
    assert 0.4 < ref.work[-1].sum() / inp[-1] < 0.6


@pytest.mark.parametrize("name", ANALYSES)
def test_floors_and_drifts(results, ref, name):
    """The floors' motion relative to the ground at every step within 0.2 % of its peak
    (measured 2.0e-4 with Newmark, 2.3e-4 with HHT at 1 ms; 7e-4 and 9e-4 at 2 ms, 6e-5 at
    0.5 ms, 2e-5 at 0.25 ms: the schemes' second order), the peak storey drifts within
    0.2 % (measured 4.6e-4 at most), and the ground's own motion (the record integrated
    twice, in closed form) to round-off."""
    a = results.analysis(name)
    t, y = floors(a)
    assert np.array_equal(np.round(t, 12), ref.t)
    peak = np.max(np.abs(ref.y), axis=0)
    assert np.all(np.max(np.abs(y - ref.y), axis=0) <= 2e-3 * peak)
    drift = np.diff(y, axis=1, prepend=0.0)
    assert np.max(np.abs(drift), axis=0) == pytest.approx(np.max(np.abs(ref.drift), axis=0),
                                                          rel=2e-3)
    assert np.max(np.abs(ref.drift), axis=0) == pytest.approx(
        [0.01524, 0.01089, 0.00768], abs=1e-5)        # 2.4, 1.8, 1.5 times the yield drift
    assert np.max(np.abs(a.series("displacement", "G", "DX")[1] - ref.ground)) < 1e-14


@pytest.mark.parametrize("name", ANALYSES)
def test_plastic_states(results, ref, name):
    """Each storey's yield excursions (count, direction, start within 2 steps of the located
    yield, plastic increment), its residual plastic elongation, and its plastic work (the
    link's `dissipated` series) against the reference's. Measured at 1 ms: the increments
    within 4.4e-4 of the storey's peak drift, the residual plastic elongations within
    1.5e-4 of it; the plastic work within 1.1e-3 of its final value (the top storey, which
    yields least: 0.4 % of the energy; 2.5e-4 at 0.5 ms)."""
    a = results.analysis(name)
    for i in range(3):
        link = a.link(f"storey{i + 1}")
        plastic = link["plastic_elongation"]
        peak_drift = np.max(np.abs(ref.drift[:, i]))
        found = excursions(plastic)
        expect = excursions(ref.plastic[:, i])
        yields = [e for e in ref.events if e[1] == "yield" and e[2] == i]
        assert len(found) == len(expect) == len(yields), (name, i)
        for (a0, _, inc), (b0, _, ref_inc), (ty, _, _, side) in zip(found, expect, yields):
            assert abs(ref.t[a0] - ty) <= 2 * STEP and abs(ref.t[b0] - ty) <= STEP
            assert np.sign(inc) == side
            assert abs(inc - ref_inc) <= 2e-3 * peak_drift, (name, i, inc, ref_inc)
        assert abs(plastic[-1] - ref.plastic[-1, i]) <= 1e-3 * peak_drift
        assert np.max(np.abs(plastic - ref.plastic[:, i])) <= 2e-3 * peak_drift
        work = link["dissipated"]
        assert np.max(np.abs(work - ref.work[:, i])) <= 3e-3 * ref.work[-1, i]
        assert work[-1] == pytest.approx(ref.work[-1, i], rel=3e-3)


@pytest.mark.parametrize("name", ANALYSES)
def test_energy_balance(results, ref, name):
    """fem's energy terms: external work = kinetic + potential + link energy + dissipated
    within 1e-4 of the input (measured 2.3e-5), and the kinetic and dissipated energies
    against the reference's.

    The energy terms are those of the motion y = u - Psi u_b (docs/study_format.md,
    [[support]]). The floors are held by links alone: the model has no stiffness, the static
    modes Psi are zero and y is the absolute motion. So the kinetic energy is the absolute
    one, and the linear dampers' term of the dissipated energy is int u'^T C_ff u' dt over
    the floors' absolute velocities: it charges the damper G-F1 with c u'_F1^2 rather than
    c (u'_F1 - u'_G)^2, the difference going to the external work (the coupling force
    -C_fb u_b' works on y). The plastic links and the fluid dampers dissipate what they
    physically do."""
    e = results.analysis(name).energy()
    terms = [e[k] for k in ("kinetic", "potential", "link_energy", "dissipated",
                            "external_work")]
    inp = e["external_work"][-1]
    balance = terms[0] + terms[1] + terms[2] + terms[3] - terms[4]
    assert np.max(np.abs(balance)) <= 1e-4 * inp
    assert energy_balance_error(*terms) <= 1e-4
    absolute = ref.v + ref.ground_velocity[:, None]
    kinetic = 0.5 * absolute ** 2 @ MASS
    assert np.max(np.abs(e["kinetic"] - kinetic)) <= 2e-3 * np.max(kinetic)
    c_ff = C_LINEAR * np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]])
    power = np.einsum("ti,ij,tj->t", absolute, c_ff, absolute)
    linear = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * STEP)])
    dissipated = ref.work.sum(axis=1) + ref.fluid + linear
    assert np.max(np.abs(e["dissipated"] - dissipated)) <= 2e-3 * dissipated[-1]
    # physically the dampers and springs dissipate less: 4 % of it is the ground's share
    physical = ref.work.sum(axis=1) + ref.fluid + ref.linear
    assert 0.03 < e["dissipated"][-1] / physical[-1] - 1.0 < 0.06


def test_study_checks(results, ref):
    """The references of the study's checks are the reference solution's (absolute
    displacements: the ground's plus the floor's relative one), and the study passes them."""
    checks = study_table()["check"]
    nodes = ("G",) + FLOORS
    seen = set()
    for check in checks:
        seen.add(check["quantity"])
        if check["quantity"] == "energy_balance_error":
            assert check["reference"] == 0.0
            continue
        assert check["quantity"] == "displacement" and check["component"] == "DX"
        k = int(round(check["time"] / STEP))
        j = nodes.index(check["node"])
        expect = ref.ground[k] + (ref.y[k, j - 1] if j else 0.0)
        assert check["reference"] == pytest.approx(expect, rel=1e-7, abs=1e-10), check
    assert seen == {"displacement", "energy_balance_error"}
    assert {c["analysis"] for c in checks} == set(ANALYSES)
    table = results.checks
    assert len(table) == len(checks) and table["passed"].all()


def test_the_same_building_under_a_base_acceleration(ref):
    """The ground clamped and the record applied as a base acceleration load: fem then
    integrates the motion relative to the ground, the reference's, and its dissipated
    energy is what the springs and dampers dissipate."""
    data = fem.Study.load(STUDY).to_dict()
    del data["support"]
    data["constraint"] = [{"nodes": ["G"], "DX": 0.0}]
    data["load"] = [{"name": "ground", "kind": "base_acceleration", "direction": [1.0, 0, 0],
                     "function": "ground"}]
    data["analysis"] = [a for a in data["analysis"] if a["name"] == "newmark"]
    data["check"] = []
    res = fem.run(fem.Study.from_dict(data, root=STUDY.parent))
    a = res.analysis("newmark")
    y = np.stack([a.series("displacement", n, "DX")[1] for n in FLOORS], 1)
    assert np.all(np.max(np.abs(y - ref.y), axis=0) <= 2e-3 * np.max(np.abs(ref.y), axis=0))
    for i in range(3):
        link = a.link(f"storey{i + 1}")
        assert link["dissipated"][-1] == pytest.approx(ref.work[-1, i], rel=2e-3)
    physical = ref.work.sum(axis=1) + ref.fluid + ref.linear
    e = a.energy()
    assert np.max(np.abs(e["dissipated"] - physical)) <= 2e-3 * physical[-1]
    assert energy_balance_error(*(e[k] for k in ("kinetic", "potential", "link_energy",
                                                  "dissipated", "external_work"))) <= 1e-4
    res.close()


def test_fem_post_hysteresis_draws_the_storeys_loops(results):
    """``fem post hysteresis`` on the first storey's plastic spring: each cycle's loop area
    (closed by the chord from its last point back to its first) is, once that chord and the
    change of the spring's stored energy F^2 / 2 k are taken out, the increase of the link's
    plastic work over the cycle (int F du = plastic work + change of F^2 / 2 k), and the
    figure's curve is the archived force against the elongation."""
    from postpro.jobs import hysteresis

    analysis = results.analysis("newmark")
    loops = hysteresis.link_loops(analysis, "storey1")
    assert loops.series == ("elongation", "force") and loops.units == ("m", "N")
    assert len(loops.cycles) >= 3
    link = analysis.link("storey1")
    t = analysis.time
    force, u, work = link["force"], link["elongation"], link["dissipated"]
    k = 2.4e7
    for cycle in loops.cycles:
        f0, f1 = np.interp([cycle.start, cycle.end], t, force)
        u0, u1 = np.interp([cycle.start, cycle.end], t, u)
        along = cycle.area - 0.5 * (f0 + f1) * (u0 - u1)       # int F du along the path
        assert cycle.dissipated == pytest.approx(along - (f1 ** 2 - f0 ** 2) / (2.0 * k),
                                                 rel=2e-3, abs=1e-6 * work[-1])
    assert sum(c.dissipated for c in loops.cycles) > 0.1 * work[-1]
    ax = hysteresis.figure(loops).axes[0]
    drawn = np.concatenate([line.get_xydata() for line in ax.lines])
    # thinned for long records, the drawn points are archived (elongation, force) pairs
    pairs = {(a, b) for a, b in zip(u.tolist(), force.tolist())}
    assert all((a, b) in pairs for a, b in drawn.tolist())
