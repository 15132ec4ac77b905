"""Obstacles that follow a moving support (``support`` on a link), and the multi-support
validation study, against solutions written here: scipy's solve_ivp carried through the
contact switches by its event location, and closed forms."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import fem
from conftest import ROOT
from postpro.energy import energy_balance_error

# a mass P on a spring to the support "left" (A), against a stop carried by the support
# "right" (B) that moves with its own record
M, K, KC, GAP = 1.0, 400.0, 1e5, 2e-3
ACC_LEFT = [[0.0, 0.0], [0.05, 6.0], [0.1, -6.0], [0.15, 0.0]]
ACC_RIGHT = [[0.0, 0.0], [0.1, -4.0], [0.2, 4.0], [0.3, 0.0]]
END = 0.2


def tables(analyses, link=None):
    return {
        "mesh": {"nodes": {"A": [0.0, 0, 0], "P": [1.0, 0, 0], "B": [2.0, 0, 0]},
                 "cells": {"AP": {"type": "SEG2", "nodes": ["A", "P"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["AP"], "stiffness": K}, {"nodes": ["P"], "mass": M}],
        "functions": {"a1": {"table": ACC_LEFT, "right": "constant"},
                      "a2": {"table": ACC_RIGHT, "right": "constant"}},
        "support": [{"name": "left", "nodes": ["A"], "acceleration": {"DX": "a1"}},
                    {"name": "right", "nodes": ["B"], "acceleration": {"DX": "a2"}}],
        "link": [link or {"name": "stop", "kind": "shock", "nodes": ["P"],
                          "normal": [1.0, 0, 0], "gap": GAP, "stiffness": KC,
                          "release": "gap", "support": "right"}],
        "analysis": analyses,
    }


def reference(times):
    """(x, v of P, events): m x'' = -k (x - u_1) - kc max(0, x - u_2 - gap), the supports'
    motion integrated in the same ODE, phase by phase between the located contact changes."""
    accelerations = [np.array(ACC_LEFT).T, np.array(ACC_RIGHT).T]

    def rhs(t, z, contact):
        x, v, u1, v1, u2, v2 = z
        f = -K * (x - u1) - (KC * (x - u2 - GAP) if contact else 0.0)
        return [v, f / M, v1, np.interp(t, *accelerations[0]), v2,
                np.interp(t, *accelerations[1])]

    def penetration(t, z, contact):
        return z[0] - z[4] - GAP
    penetration.terminal = True

    t0, z0, contact, pieces, events = times[0], np.zeros(6), False, [], []
    while True:
        penetration.direction = -1.0 if contact else 1.0
        sol = solve_ivp(rhs, (t0, times[-1]), z0, args=(contact,), events=penetration,
                        rtol=1e-11, atol=1e-14, method="DOP853", first_step=1e-7,
                        max_step=1e-3, dense_output=True)
        pieces.append((t0, sol.t[-1], sol.sol))
        if sol.status != 1:
            break
        events.append(sol.t[-1])
        t0, z0, contact = sol.t[-1], sol.y[:, -1], not contact
    out = np.zeros((len(times), 6))
    for a, b, s in pieces:
        inside = (times >= a) & (times <= b)
        out[inside] = s(times[inside]).T
    return out[:, 0], out[:, 1], np.array(events)


PHYSICAL = {"newmark": 1e-5, "hht": 2e-6, "central_difference": 2e-6, "exact": None,
            "rk4": 2e-5}
MODAL = {"central_difference": 2e-6, "euler": None, "adaptive2": None, "devogelaere": None,
         "rk32": None, "rk54": None, "newmark": 1e-5, "exact": None, "rk4": 2e-5}
#: relative error of the displacement of P expected of each scheme at its step
TOLERANCE = {"exact": 1e-8, "rk4": 1e-6, "rk54": 1e-5, "rk32": 1e-4, "devogelaere": 1e-4,
             "adaptive2": 1e-3, "euler": 2e-2, "newmark": 1e-4, "hht": 1e-3,
             "central_difference": 1e-4}


def _analyses():
    out = [{"name": "modes", "kind": "modes", "count": 1}]
    for basis, schemes in (("physical", PHYSICAL), ("modal", MODAL)):
        for scheme, step in schemes.items():
            a = {"name": f"{basis}_{scheme}", "kind": "transient", "basis": basis,
                 "scheme": scheme, "end": END, "links": ["stop"], "archive": {"times":
                                                                               list(TIMES)}}
            if basis == "modal":
                a["modes"] = "modes"
            if step is not None:
                a["step"] = step
                a["events"] = "locate"
            elif scheme != "exact":
                # euler's error control cannot start from rest under a load that starts
                # at zero below about 1e-5 (its steps collapse, whatever the supports)
                a["tolerance"] = 1e-9 if scheme != "euler" else 1e-3
            else:
                a["step"] = 0.01
            out.append(a)
    return out


TIMES = np.linspace(0.0, END, 21)


def test_obstacle_following_a_support_every_scheme():
    """The stop moves with the right support: every scheme, physical and modal, against the
    reference; event times; the energy balance of the exact scheme, whose external work
    holds the work of the moving obstacle."""
    res = fem.run(fem.Study.from_dict(tables(_analyses())))
    x, _, events = reference(TIMES)
    assert len(events) >= 6
    for name in res.analyses:
        if name == "modes":
            continue
        a = res.analysis(name)
        scheme = name.split("_", 1)[1]
        t, u = a.series("displacement", "P", "DX")
        keep = np.isin(np.round(t, 12), np.round(TIMES, 12))
        t, u = t[keep], u[keep]
        _, first = np.unique(t, return_index=True)
        err = np.max(np.abs(u[first] - x)) / np.max(np.abs(x))
        assert err <= TOLERANCE[scheme], (name, err)
        kinds = np.array([str(k) for k in a.events["kind"]])
        impacts = a.events["time"][kinds == "impact"]
        assert len(impacts) == len(events[::2]), name
        assert np.max(np.abs(impacts - events[::2])) <= (5e-3 if scheme == "euler" else 2e-5), \
            name
    for name in ("physical_exact", "modal_exact"):
        energy = res.analysis(name).energy()
        terms = [energy[k] for k in ("kinetic", "potential", "link_energy", "dissipated",
                                     "external_work")]
        assert energy_balance_error(*terms) <= 1e-9, name
        assert np.max(np.abs(energy["external_work"])) > 1e-3      # the supports work


def test_wall_following_a_support():
    """A free mass at rest hit by a wall that moves at constant velocity V from a gap g
    (impact link, restitution e): contact at g / V, then the mass leaves at (1 + e) V."""
    V, g, e = 0.5, 0.01, 0.6
    link = {"name": "wall", "kind": "impact", "nodes": ["P"], "component": "DX", "gap": g,
            "restitution": e, "support": "right"}
    data = tables([{"name": name, "kind": "transient", "scheme": name, "step": 1e-3,
                    "end": 0.05, "links": ["wall"], "events": "locate"}
                   for name in ("newmark", "exact")],
                  link=link)
    data["discrete"] = [{"nodes": ["P"], "mass": M}]
    data["mesh"] = {"nodes": {"P": [1.0, 0, 0], "B": [2.0, 0, 0]}}
    data["functions"]["still"] = {"table": [[0.0, 0.0]]}
    data["support"] = [{"name": "right", "nodes": ["B"], "acceleration": {"DX": "still"},
                        "initial_velocity": {"DX": V}}]
    res = fem.run(fem.Study.from_dict(data))
    for name in ("newmark", "exact"):
        a = res.analysis(name)
        assert a.events["time"][0] == pytest.approx(g / V, rel=1e-9)
        t, u = a.series("displacement", "P", "DX")
        expect = np.where(t > g / V, (1 + e) * V * (t - g / V), 0.0)
        assert np.max(np.abs(u - expect)) <= 1e-9 * np.max(expect)
        assert np.max(np.abs(a.series("displacement", "B", "DX")[1] - V * t)) <= 1e-15


def test_link_to_an_undriven_support_is_fixed():
    """An analysis that does not drive the support its obstacle follows: the obstacle stays
    put, as a fixed one does."""
    moving = tables([{"name": "a", "kind": "transient", "scheme": "exact", "step": 0.01,
                      "end": END, "links": ["stop"], "supports": ["left"]}])
    fixed = tables([{"name": "a", "kind": "transient", "scheme": "exact", "step": 0.01,
                     "end": END, "links": ["stop"], "supports": ["left"]}])
    del fixed["link"][0]["support"]
    ua = fem.run(fem.Study.from_dict(moving)).analysis("a").series("displacement", "P", "DX")
    ub = fem.run(fem.Study.from_dict(fixed)).analysis("a").series("displacement", "P", "DX")
    assert np.max(np.abs(ua[1] - ub[1])) == 0.0
    assert np.max(np.abs(ua[1])) > GAP


# ---------------------------------------------------------------------------- the study
V7 = {"k": 3.0e4, "c": 6.0, "m": 3.0, "kc": 5.0e5, "gap": 1.0e-3,
      "left": [[0.0, 0.0], [0.04, 4.0], [0.08, -5.0], [0.12, 3.0], [0.16, -2.0], [0.2, 0.0]],
      "right": [[0.0, 0.0], [0.03, -6.0], [0.06, 0.0], [0.09, 6.0], [0.12, 0.0], [0.15, -4.0],
                [0.18, 0.0], [0.21, 4.0], [0.24, 0.0]]}


def v7_reference(times):
    """The V7 chain A - N1 ... N4 - B: (u, v, a) (nt, 6) absolute, nodes in that order, and
    the contact changes. m u'' = k (neighbours) + c (neighbours) on N1..N4, the supports'
    motion integrated in the ODE, the snubber's force on N4: -kc (d - gap) above the gap and
    -kc (d + gap) below it, d = u_N4 - u_B."""
    k, c, m, kc, gap = (V7[x] for x in ("k", "c", "m", "kc", "gap"))
    records = [np.array(V7["left"]).T, np.array(V7["right"]).T]
    L = np.zeros((4, 6))                       # the springs' pull on N1..N4 from all 6 nodes
    for i in range(4):
        L[i, i:i + 3] += [1.0, -2.0, 1.0]

    def accel(t, z, side):
        u, v = z[:6], z[6:]
        ab = [np.interp(t, *r) for r in records]
        f = k * (L @ u) + c * (L @ v)
        d = u[4] - u[5]
        f[3] -= kc * (d - gap) if side > 0 else kc * (d + gap) if side < 0 else 0.0
        a = np.zeros(6)
        a[1:5] = f / m
        a[0], a[5] = ab
        return a

    def rhs(t, z, side):
        return np.concatenate([z[6:], accel(t, z, side)])

    t0, z0, side, pieces, events = 0.0, np.zeros(12), 0, [], []
    while True:
        # free flight ends on either plane, a contact when its own plane is left
        if side == 0:
            def crossing(t, z, side):
                d = z[4] - z[5]
                return min(gap - d, d + gap)
        else:
            def crossing(t, z, side):
                return side * (z[4] - z[5]) - gap
        crossing.direction = -1.0
        crossing.terminal = True
        # a first step short enough to leave the plane just crossed, and steps shorter
        # than the briefest flight or contact, so that no sign change is missed
        sol = solve_ivp(rhs, (t0, times[-1]), z0, args=(side,), events=crossing, rtol=1e-11,
                        atol=1e-14, method="DOP853", first_step=1e-7, max_step=1e-4,
                        dense_output=True)
        pieces.append((t0, sol.t[-1], sol.sol, side))
        if sol.status != 1:
            break
        t0, z0 = sol.t[-1], sol.y[:, -1]
        events.append((t0, "impact" if side == 0 else "separation"))
        side = (1 if z0[4] - z0[5] > 0 else -1) if side == 0 else 0
    u = np.zeros((len(times), 6))
    v = np.zeros_like(u)
    a = np.zeros_like(u)
    for t_a, t_b, sl, sd in pieces:
        for i in np.flatnonzero((times >= t_a) & (times <= t_b)):
            z = sl(times[i])
            u[i], v[i], a[i] = z[:6], z[6:], accel(times[i], z, sd)
    return u, v, a, events


def test_v7_study_references(tmp_path):
    """studies/v7_multi_support.toml: the references of its checks agree with the solution
    computed here (and the closed-form frequencies of the clamped chain), and the study
    passes them all."""
    import tomllib

    study = tomllib.loads((ROOT / "studies" / "v7_multi_support.toml").read_text())
    checks = study["check"]
    times = np.array(sorted({c["time"] for c in checks if "time" in c}))
    u, v, acc, events = v7_reference(times)
    nodes = ["A", "N1", "N2", "N3", "N4", "B"]
    k, c = V7["k"], V7["c"]
    psi = np.array([[4, 1], [3, 2], [2, 3], [1, 4]]) / 5.0      # static modes of the chain
    w = 2.0 * np.sqrt(k / V7["m"]) * np.sin(np.arange(1, 5) * np.pi / 10.0)
    seen = set()
    for check in checks:
        q = check["quantity"]
        seen.add(q)
        if q == "frequency":
            expect = w[check["mode"] - 1] / (2 * np.pi)
        elif q == "event_time":
            expect = [t for t, kind in events if kind == check.get("kind", kind)][
                check["event"] - 1]
        else:
            i = int(np.flatnonzero(np.isclose(times, check["time"]))[0])
            if q in ("displacement", "velocity", "acceleration"):
                expect = {"displacement": u, "velocity": v, "acceleration": acc}[q][
                    i, nodes.index(check["node"])]
            elif q == "relative_displacement":
                j = nodes.index(check["node"])
                expect = u[i, j] - psi[j - 1] @ u[i, [0, 5]]
            elif q == "element_force":            # the spring S5 from N4 to B
                expect = k * (u[i, 5] - u[i, 4]) + c * (v[i, 5] - v[i, 4])
            elif q == "reaction":                  # at A: the force of S1 on A, reversed
                expect = k * (u[i, 0] - u[i, 1]) + c * (v[i, 0] - v[i, 1])
            else:
                raise AssertionError(q)
        assert check["reference"] == pytest.approx(expect, rel=1e-6, abs=1e-12), check
    assert {"displacement", "relative_displacement", "element_force", "reaction",
            "event_time", "frequency"} <= seen
    out = tmp_path / "v7.h5"
    results = fem.run(fem.Study.load(ROOT / "studies" / "v7_multi_support.toml"), out=out)
    table = results.checks
    assert len(table) == len(checks) and table["passed"].all()
    results.close()
    # every dataset and attribute the file holds is documented, with a unit where it is a float
    page = (ROOT / "docs" / "results_format.md").read_text()
    names, unitless = set(), []
    with h5py.File(out, "r") as f:
        def visit(name, obj):
            parts = [p for p in name.split("/") if p not in ("analyses", "links", "exact",
                                                            "newmark", "modes", "modal_cd",
                                                            "snubber")]
            names.update(parts)
            names.update(obj.attrs)
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f" and \
                    "units" not in obj.attrs:
                unitless.append(name)
        f.visititems(visit)
    assert sorted(n for n in names if f"`{n}" not in page and f"{n}`" not in page
                  and f"/{n}" not in page) == []
    assert unitless == []
    with h5py.File(out, "r") as f:
        assert f["analyses/exact/relative_displacement"].attrs["units"] == "m"
        assert f["analyses/exact/links/snubber"].attrs["support"] == "right"
