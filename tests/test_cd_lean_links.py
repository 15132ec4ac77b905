"""Central differences with plane and circle shocks, with and without Coulomb friction, and no
damper on the contacts: the loop that takes each step's link forces from its displacements
without the links' Newton iteration (``fem.integrators.newmark_direct``).

Against solutions written here: the central-difference recurrence of the same model with the
contact and friction laws written out (penalty contacts, friction by the return mapping of an
elastic-plastic tangential spring), on a physical basis and on modal bases of four of the six
modes (modal and projected damping); and, without friction, a node in a round hole
integrated by scipy's DOP853 at tight tolerances in phases chained on the contact events. The
loop runs for such models, and not when a contact has a damper, the events are located or an
obstacle follows a moving support."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

import fem
from fem.integrators import loops, newmark_family
from fem.integrators.kernels import make_log


def general_only(choose):
    """``loops.choose`` that sends every Newmark-family analysis to the general loop."""
    def wrapped(*args, **kwargs):
        choice = choose(*args, **kwargs)
        if choice.loop in ("newmark lean", "newmark direct"):
            return loops.Choice("newmark general", "forced by the test")
        return choice
    return wrapped


DT, END, EVERY = 1e-4, 0.6, 7
MASSES = [1.0, 1.5, 2.0]
KX, KY, CD = 4e4, 1.5e4, 3.0
#: (name, node, obstacle, direction (normal or axis), gap, stiffness, friction, static)
LINKS = [("ring", "N3", "circle", (0.0, 0.0, 1.0), 2.0e-3, 2.0e5, 0.3, 0.4),
         ("stop", "N2", "plane", (0.0, 1.0, 0.0), 1.0e-3, 3.0e5, 0.25, 0.3),
         ("wall", "N1", "plane", (-1.0, 0.0, 0.0), 2.0e-4, 1.0e5, 0.0, 0.0)]
OPEN, STICK, SLIP = 0, 1, 2


def loads(t):
    """The loads on (N1 DX, N1 DY, N2 DX, N2 DY, N3 DX, N3 DY) (N)."""
    return np.array([0.0, 0.0, 30.0 * np.sin(21.0 * t), 0.0, 8.0 * np.sin(13.0 * t),
                     40.0 * np.sin(30.0 * t)])


def study(basis="physical", links=LINKS, damper=0.0, events="step", tangential_damping=0.0,
          end=END, every=EVERY):
    nodes = {"N0": [0.0, 0.0, 0.0], "N1": [1.0, 0.0, 0.0], "N2": [2.0, 0.0, 0.0],
             "N3": [3.0, 0.0, 0.0]}
    data = {
        "mesh": {"nodes": nodes,
                 "cells": {f"S{i}": {"type": "SEG2", "nodes": [f"N{i}", f"N{i + 1}"]}
                           for i in range(3)}},
        "model": {"components": ["DX", "DY"]},
        "discrete": [{"cells": ["S0", "S1", "S2"], "stiffness": [KX, KY, KY],
                      "damping": CD}]
        + [{"nodes": [f"N{i + 1}"], "mass": m} for i, m in enumerate(MASSES)],
        "constraint": [{"nodes": ["N0"], "DX": 0.0, "DY": 0.0}],
        "functions": {"f2": {"expression": "30*sin(21*t)"},
                      "g3": {"expression": "8*sin(13*t)"},
                      "f3": {"expression": "40*sin(30*t)"}},
        "load": [{"name": "a", "nodes": ["N2"], "FX": 1.0, "function": "f2"},
                 {"name": "b", "nodes": ["N3"], "FX": 1.0, "function": "g3"},
                 {"name": "c", "nodes": ["N3"], "FY": 1.0, "function": "f3"}],
        "link": [],
        "analysis": [],
    }
    for name, node, obstacle, direction, gap, k, mu, mus in links:
        link = {"name": name, "kind": "shock", "nodes": [node], "obstacle": obstacle,
                "gap": gap, "stiffness": k, "damping": damper}
        link["axis" if obstacle == "circle" else "normal"] = list(direction)
        if mu:
            link.update(friction=mu, static_friction=mus,
                        tangential_damping=tangential_damping)
        data["link"].append(link)
    analysis = {"name": "cd", "kind": "transient", "scheme": "central_difference",
                "end": end, "step": DT, "archive": {"every": every}, "events": events,
                "links": [lk[0] for lk in links]}
    if basis != "physical":
        data["analysis"].append({"name": "modes", "kind": "modes", "count": 4})
        analysis.update(basis="modal", modes="modes")
        if basis == "modal":
            analysis.update(damping="modal", modal_damping=[0.02, 0.03, 0.01, 0.05])
    data["analysis"].append(analysis)
    return data


def run(tmp_path, data, name="run"):
    out = tmp_path / f"{name}.h5"
    fem.run(fem.Study.from_dict(data, name=name), out=out)
    with h5py.File(out) as f:
        g = f["analyses/cd"]
        found = {"time": g["time"][()], "u": g["displacement"][()],
                 "energy": {k: g[f"energy/{k}"][()] for k in g["energy"]},
                 "links": {lk: {s: g[f"links/{lk}/{s}"][()] for s in g[f"links/{lk}"]}
                           for lk in g["links"]},
                 "events": [(int(round(float(e["time"]) / DT)), _text(e["kind"]),
                             _text(e["link"]), _text(e["detail"])) for e in g["events"][()]]}
    return found


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


# ------------------------------------------------------------------------------------------
# the model written out: dofs (N1 DX, N1 DY, N2 DX, N2 DY, N3 DX, N3 DY)
def matrices():
    n = 6
    M = np.diag(np.repeat(MASSES, 2))
    K = np.zeros((n, n))
    C = np.zeros((n, n))
    for i in range(3):          # spring i joins node i (0: the clamped one) to node i + 1
        for comp, k in ((0, KX), (1, KY)):
            b = 2 * i + comp
            a = b - 2
            for A, value in ((K, k), (C, CD)):
                A[b, b] += value
                if a >= 0:
                    A[a, a] += value
                    A[a, b] -= value
                    A[b, a] -= value
    return M, K, C


def link_rows(links=LINKS):
    """L (2 nl, 6): DX and DY of each link's node."""
    L = np.zeros((2 * len(links), 6))
    for j, lk in enumerate(links):
        node = int(lk[1][1:]) - 1
        L[2 * j, 2 * node] = 1.0
        L[2 * j + 1, 2 * node + 1] = 1.0
    return L


def contact_law(link, d, state):
    """The force (2,) on the node of a penalty contact with Coulomb friction at its
    displacement d (2,) (the state: mode, anchor of the tangential spring, its stored energy),
    the new state, the slip work of the step, the normal and the sliding direction."""
    _, _, obstacle, direction, gap, k, mu, mus = link
    mode, anchor, stored = state
    if obstacle == "circle":
        rho = float(np.hypot(d[0], d[1]))
        p = rho - gap
        normal = d / rho if rho > 0 else np.zeros(2)
    else:
        normal = np.array(direction[:2])
        p = float(normal @ d) - gap
    if p <= 0.0:
        return np.zeros(2), (OPEN, d.copy(), 0.0), 0.0, normal, None
    fn = k * p
    force = -fn * normal
    if mu <= 0.0:
        return force, (STICK, anchor, 0.0), 0.0, normal, None
    kt = k
    stretch = (d - anchor) - ((d - anchor) @ normal) * normal
    trial = kt * stretch
    size = float(np.linalg.norm(trial))
    if size <= (mu if mode == SLIP else mus) * fn:
        return force - trial, (STICK, anchor, 0.5 * kt * stretch @ stretch), 0.0, normal, None
    e = trial / size
    slide = mu * fn * e
    work = float(slide @ (stretch - slide / kt))
    return (force - slide, (SLIP, d - slide / kt, 0.5 * (mu * fn) ** 2 / kt), work, normal,
            e)


def recurrence(M, K, C, force, L, links=LINKS, dt=DT, end=END):
    """Central differences (velocity at the step, the contacts decided at each step's end):
    displacements at every step, the mode changes (step, kind, link, approach speed), the
    links' series at every step and the external work and dissipated energy."""
    n = M.shape[0]
    steps = int(round(end / dt))
    S = M + 0.5 * dt * C
    x, v = np.zeros(n), np.zeros(n)
    states = [(OPEN, np.zeros(2), 0.0) for _ in links]

    def link_forces(x, states):
        d = L @ x
        phi = np.zeros(L.shape[0])
        out = []
        for j, lk in enumerate(links):
            f, state, work, normal, e = contact_law(lk, d[2 * j:2 * j + 2], states[j])
            phi[2 * j:2 * j + 2] = f
            out.append((state, work, normal, e, f))
        return phi, out

    phi, _ = link_forces(x, states)
    a = np.linalg.solve(M, force(0.0) - K @ x - C @ v + L.T @ phi)
    xs, changes = [x], []
    series = {"normal_force": [np.zeros(len(links))], "tangential_force":
              [np.zeros(len(links))], "sliding_velocity": [np.zeros(len(links))]}
    external, dissipated = [0.0], [0.0]
    f0 = force(0.0)
    for i in range(1, steps + 1):
        x1 = x + dt * v + 0.5 * dt * dt * a
        vt = v + 0.5 * dt * a
        phi, values = link_forces(x1, states)
        f1 = force(i * dt)
        a = np.linalg.solve(S, f1 - K @ x1 - C @ vt + L.T @ phi)
        v1 = vt + 0.5 * dt * a
        dd = L @ v1
        lost = 0.5 * (x1 - x) @ C @ (v + v1)
        fn, ft, vs = np.zeros(len(links)), np.zeros(len(links)), np.zeros(len(links))
        for j, (lk, (state, work, normal, e, f)) in enumerate(zip(links, values)):
            before, after = states[j][0], state[0]
            lost += work
            if before != OPEN and after == OPEN:
                lost += states[j][2]
            if before != after:
                kind = ("impact" if after != OPEN else "separation") \
                    if (before == OPEN) != (after == OPEN) else \
                    ("slip" if after == SLIP else "stick")
                changes.append((i, kind, lk[0], float(normal @ dd[2 * j:2 * j + 2])))
            if after != OPEN:
                fn[j] = -(f @ normal)
                tangential = f + fn[j] * normal
                ft[j] = np.linalg.norm(tangential)
            if e is not None:
                rate = dd[2 * j:2 * j + 2] - (dd[2 * j:2 * j + 2] @ normal) * normal
                vs[j] = max(float(e @ rate), 0.0)
            states[j] = state
        external.append(external[-1] + 0.5 * (x1 - x) @ (f0 + f1))
        dissipated.append(dissipated[-1] + lost)
        for key, value in zip(("normal_force", "tangential_force", "sliding_velocity"),
                              (fn, ft, vs)):
            series[key].append(value)
        x, v, f0 = x1, v1, f1
        xs.append(x)
    return (np.array(xs), changes, {k: np.array(s) for k, s in series.items()},
            np.array(external), np.array(dissipated))


def modal_problem(basis):
    """(M, K, C, force, L) of the recurrence in the coordinates of ``basis``, and the matrix
    that takes them to the six physical dofs."""
    M, K, C = matrices()
    L = link_rows()
    if basis == "physical":
        return M, K, C, loads, L, np.eye(6)
    omega2, phi = scipy.linalg.eigh(K, M, subset_by_index=[0, 3])
    omega = np.sqrt(omega2)
    if basis == "modal":
        Cm = np.diag(2.0 * np.array([0.02, 0.03, 0.01, 0.05]) * omega)
    else:
        Cm = phi.T @ C @ phi
    return (np.eye(4), np.diag(omega2), Cm, lambda t: phi.T @ loads(t), L @ phi, phi)


@pytest.fixture
def spy(monkeypatch):
    """Calls of the loop under test: the dense or CSR form of each."""
    calls = []
    loop = newmark_family.RUNS[newmark_family.DIRECT]

    def wrapper(*args):
        calls.append("dense" if args[-2].LT.shape[0] else "csr")
        return loop(*args)
    monkeypatch.setitem(newmark_family.RUNS, newmark_family.DIRECT, wrapper)
    return calls


# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("basis", ["physical", "modal", "projected"])
def test_steps_follow_the_recurrence(tmp_path, spy, basis):
    M, K, C, force, L, back = modal_problem(basis)
    xs, changes, series, external, dissipated = recurrence(M, K, C, force, L)
    found = run(tmp_path, study(basis), basis)
    assert spy and set(spy) == {"csr" if basis == "physical" else "dense"}
    steps = np.rint(found["time"] / DT).astype(int)
    assert steps[-1] == round(END / DT) and steps[1] == EVERY
    # every mode change at its step, with its approach speed (the rate at a step that is not
    # archived); all four kinds, on the circle as on the planes
    got = [(i, kind, link) for i, kind, link, _ in found["events"]]
    assert got == [(i, kind, link) for i, kind, link, _ in changes]
    kinds = {(kind, link) for _, kind, link in got}
    assert {("impact", "ring"), ("separation", "ring"), ("slip", "ring"), ("stick", "ring"),
            ("slip", "stop"), ("stick", "stop"), ("impact", "wall")} <= kinds
    assert sum(1 for i, *_ in changes if i % EVERY) > 20
    for (_, kind, _, detail), (*_, speed) in zip(found["events"], changes):
        if kind in ("impact", "separation"):
            value = float(re.search(r"approach speed (\S+) m/s", detail).group(1))
            assert value == pytest.approx(speed, rel=1e-6, abs=1e-9)
    # the displacements of the six dofs (fem's columns: N0 DX, N0 DY, N1 DX, ...)
    u = xs[steps] @ back.T
    scale = np.max(np.abs(u))
    assert np.max(np.abs(found["u"][:, 2:] - u)) < 1e-9 * scale
    # the links' archived series
    for j, name in enumerate(lk[0] for lk in LINKS):
        for key, values in series.items():
            if key in found["links"][name]:
                ref = values[steps, j]
                assert np.max(np.abs(found["links"][name][key] - ref)) \
                    <= 1e-7 * max(np.max(np.abs(ref)), 1e-300), (name, key)
    assert np.max(series["sliding_velocity"][steps]) > 1e-3
    # the energy terms: the loads' work, and what the dampers and the friction dissipate
    energy = found["energy"]
    assert dissipated[-1] > 0.05 * external[-1] > 0
    assert np.max(np.abs(energy["external_work"] - external[steps])) < 1e-8 * external[-1]
    assert np.max(np.abs(energy["dissipated"] - dissipated[steps])) < 1e-8 * dissipated[-1]


def test_the_general_loop_agrees(tmp_path, spy, monkeypatch):
    """The same run through the general loop (the links' Newton iteration)."""
    data = study("modal")
    direct = run(tmp_path, data, "direct")
    assert spy
    monkeypatch.setattr(loops, "choose", general_only(loops.choose))
    general = run(tmp_path, data, "general")
    scale = np.max(np.abs(general["u"]))
    assert np.max(np.abs(direct["u"] - general["u"])) < 1e-12 * scale
    assert [e[:3] for e in direct["events"]] == [e[:3] for e in general["events"]]
    for name, series in general["energy"].items():
        assert np.allclose(direct["energy"][name], series, rtol=1e-10, atol=1e-12), name
    for link, values in general["links"].items():
        for key, ref in values.items():
            assert np.allclose(direct["links"][link][key], ref, rtol=1e-8, atol=1e-9 *
                               max(np.max(np.abs(ref)), 1e-300)), (link, key)


@pytest.mark.parametrize("change", ["damper", "tangential_damping", "locate"])
def test_not_taken_with_a_rate_or_located_events(tmp_path, spy, change):
    """A contact damper or a tangential damper makes a force depend on the rates; located
    events hold the modes over a step: the general loop then runs."""
    kwargs = {"damper": dict(damper=50.0),
              "tangential_damping": dict(tangential_damping=5.0),
              "locate": dict(events="locate")}[change]
    found = run(tmp_path, study("modal", end=0.05, **kwargs), change)
    assert not spy
    assert found["time"][-1] == pytest.approx(0.05)


def test_not_taken_on_a_moving_support(tmp_path, spy):
    """An obstacle that follows a support (the links' dofs have an imposed motion): the
    general loop."""
    data = {
        "mesh": {"nodes": {"A": [0.0, 0, 0], "P": [1.0, 0, 0], "B": [2.0, 0, 0]},
                 "cells": {"AP": {"type": "SEG2", "nodes": ["A", "P"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["AP"], "stiffness": 1e4}, {"nodes": ["P"], "mass": 1.0}],
        "functions": {"a": {"table": [[0.0, 0.0], [0.02, 6.0], [0.04, -6.0], [0.06, 0.0]],
                            "right": "constant"}},
        "support": [{"name": "left", "nodes": ["A"], "acceleration": {"DX": "a"}},
                    {"name": "right", "nodes": ["B"], "acceleration": {"DX": "a"}}],
        "link": [{"name": "stop", "kind": "shock", "nodes": ["P"], "normal": [1.0, 0, 0],
                  "gap": 1e-4, "stiffness": 1e5, "support": "right"}],
        "analysis": [{"name": "cd", "kind": "transient", "scheme": "central_difference",
                      "end": 0.05, "step": 1e-4, "links": ["stop"]}],
    }
    found = run(tmp_path, data, "support")
    assert not spy
    assert found["time"][-1] == pytest.approx(0.05)


def test_a_full_event_log_loses_no_event(tmp_path, spy, monkeypatch):
    """With a log of 4 entries a chunk holds more mode changes than the log: the loop stops
    with the state reached brought up to date, the driver empties the log and the loop goes
    on, the same steps."""
    data = study("modal")
    reference = run(tmp_path, data, "big")
    original = newmark_family.NewmarkFamily.__init__

    def small_log(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.log = make_log(4)
    monkeypatch.setattr(newmark_family.NewmarkFamily, "__init__", small_log)
    small = run(tmp_path, data, "small")
    assert len(spy) > len(reference["events"]) / 4
    assert small["events"] == reference["events"]
    assert np.array_equal(small["u"], reference["u"])
    for name, series in reference["energy"].items():
        assert np.array_equal(small["energy"][name], series), name


# ------------------------------------------------------------------------------------------
# a node in a round hole without friction, against DOP853
HOLE = ("hole", "N1", "circle", (0.0, 0.0, 1.0), 1.0e-3, 1.0e5, 0.0, 0.0)
M1, K1X, K1Y = 1.0, 2.0e4, 1.2e4


def hole_study(basis):
    data = study(basis, links=[HOLE], end=0.25, every=10)
    data["mesh"]["nodes"] = {"N0": [0.0, 0.0, 0.0], "N1": [1.0, 0.0, 0.0]}
    data["mesh"]["cells"] = {"S0": {"type": "SEG2", "nodes": ["N0", "N1"]}}
    data["discrete"] = [{"cells": ["S0"], "stiffness": [K1X, K1Y, K1Y]},
                        {"nodes": ["N1"], "mass": M1}]
    data["functions"] = {"fx": {"expression": "25*sin(35*t)"},
                         "fy": {"expression": "30*cos(47*t) - 30"}}
    data["load"] = [{"name": "x", "nodes": ["N1"], "FX": 1.0, "function": "fx"},
                    {"name": "y", "nodes": ["N1"], "FY": 1.0, "function": "fy"}]
    for a in data["analysis"]:
        if a["kind"] == "modes":
            a["count"] = 2
        else:
            a.pop("damping", None)
            a.pop("modal_damping", None)
    return data


def hole_reference(times):
    """(x (len(times), 2), impact and separation times) of the node in its hole: phases of
    DOP853 at tight tolerances, chained on rho = gap."""
    gap, k = HOLE[4], HOLE[5]

    def rhs(t, y, closed):
        x, v = y[:2], y[2:]
        f = np.array([25 * np.sin(35 * t) - K1X * x[0], 30 * np.cos(47 * t) - 30 - K1Y * x[1]])
        rho = np.hypot(*x)
        if closed:
            f -= k * (rho - gap) * x / rho
        return np.concatenate([v, f / M1])

    y, t, closed, pieces, events = np.zeros(4), 0.0, False, [], []
    while t < times[-1]:
        def crossing(t, y, closed):
            return np.hypot(y[0], y[1]) - gap
        crossing.terminal = True
        # closing from below, opening from above (the phase starts at zero)
        crossing.direction = -1.0 if closed else 1.0
        sol = solve_ivp(rhs, (t, times[-1]), y, method="DOP853", rtol=1e-12, atol=1e-15,
                        events=crossing, dense_output=True, args=(closed,))
        pieces.append((t, sol.t[-1], sol.sol))
        y = sol.y[:, -1].copy()
        if sol.status != 1:
            break
        t = sol.t_events[0][0]
        closed = not closed
        events.append(t)
    x = np.array([next(dense for t0, t1, dense in pieces if t0 <= s <= t1 + 1e-15)(s)[:2]
                  for s in times])
    return x, np.array(events)


@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_a_node_in_a_hole_follows_dop853(tmp_path, spy, basis):
    found = run(tmp_path, hole_study(basis), f"hole_{basis}")
    assert spy
    x, crossings = hole_reference(found["time"])
    u = found["u"][:, 2:]
    scale = np.max(np.abs(x))
    assert scale > 1.5 * HOLE[4]
    # central differences are second order: (omega dt)^2 ~ 1e-4 at the contact's frequency
    assert np.max(np.abs(u - x)) < 2e-3 * scale
    times = np.array([i * DT for i, kind, *_ in found["events"]])
    assert len(times) == len(crossings) > 6
    assert np.max(np.abs(times - crossings)) < 1.5 * DT
