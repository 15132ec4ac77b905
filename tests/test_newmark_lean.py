"""The lean loop of the Newmark family (steps never undone, link forces from the predictor):
central differences with undamped frictionless plane shocks, on both bases, against the
central-difference recurrence written here; the same runs through the general loop; and an
event log that fills up inside a chunk loses no event."""

from __future__ import annotations

import textwrap

import h5py
import numpy as np
import pytest

from fem.integrators import loops, newmark_family
from fem.integrators.kernels import make_log
from fem.runner import run_study


def general_only(choose):
    """``loops.choose`` that sends every Newmark-family analysis to the general loop."""
    def wrapped(*args, **kwargs):
        choice = choose(*args, **kwargs)
        if choice.loop in ("newmark lean", "newmark direct"):
            return loops.Choice("newmark general", "forced by the test")
        return choice
    return wrapped


#: chain A - P1 - P2 (A clamped): masses, springs, a damper on the second spring
M = np.diag([2.0, 1.5])
K = np.array([[7e4, -3e4], [-3e4, 3e4]])
C = np.array([[4.0, -4.0], [-4.0, 4.0]])
GAP1, KN1 = 0.002, 2e5          # P1 against a plane along +X
GAP2, KN2 = 0.003, 3e5          # P2 between two planes along X
DT, END = 2e-4, 0.5


def study(basis: str, events_damping: float = 0.0) -> str:
    modal = 'basis = "modal"\nmodes = "modes"' if basis == "modal" else ""
    modes = '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 2\n' if basis == "modal" \
        else ""
    return textwrap.dedent(f"""
    [mesh.nodes]
    A = [0.0, 0.0, 0.0]
    P1 = [1.0, 0.0, 0.0]
    P2 = [2.0, 0.0, 0.0]
    [mesh.cells]
    S1 = {{ type = "SEG2", nodes = ["A", "P1"] }}
    S2 = {{ type = "SEG2", nodes = ["P1", "P2"] }}
    [model]
    components = ["DX"]
    [[discrete]]
    cells = ["S1"]
    stiffness = 4.0e4
    [[discrete]]
    cells = ["S2"]
    stiffness = 3.0e4
    damping = 4.0
    [[discrete]]
    nodes = ["P1"]
    mass = 2.0
    [[discrete]]
    nodes = ["P2"]
    mass = 1.5
    [[constraint]]
    nodes = ["A"]
    DX = 0.0
    [functions.f]
    expression = "80*sin(40*t)"
    [[load]]
    name = "f"
    nodes = ["P2"]
    FX = 1.0
    function = "f"
    [[initial]]
    nodes = ["P2"]
    velocity = {{ DX = 0.2 }}
    [[link]]
    name = "stop"
    kind = "shock"
    nodes = ["P1"]
    normal = [1.0, 0.0, 0.0]
    gap = {GAP1}
    stiffness = {KN1}
    [[link]]
    name = "box"
    kind = "shock"
    nodes = ["P2"]
    obstacle = "two_planes"
    normal = [1.0, 0.0, 0.0]
    gap = {GAP2}
    stiffness = {KN2}
    damping = {events_damping}
    {modes}
    [[analysis]]
    name = "cd"
    kind = "transient"
    scheme = "central_difference"
    {modal}
    end = {END}
    step = {DT}
    links = ["stop", "box"]
    """)


def run(tmp_path, text, name):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    out = tmp_path / f"{name}.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    with h5py.File(out) as f:
        g = f["analyses/cd"]
        found = {"time": g["time"][()], "x": g["displacement"][()], "v": g["velocity"][()],
                 "a": g["acceleration"][()],
                 "force": np.column_stack([g["links/stop/normal_force"][()],
                                           g["links/box/normal_force"][()]]),
                 "energy": {k: g[f"energy/{k}"][()] for k in g["energy"]},
                 "events": [(round(float(e["time"]) / DT), e["kind"], e["link"])
                            for e in g["events"][()]]}
    return found


def recurrence():
    """Central differences (beta = 0, gamma = 1/2, velocity at the step) with the contacts
    decided at each step's end, written out: states at every step and the mode changes."""
    n_steps = round(END / DT)
    S = M + 0.5 * DT * C
    planes = [(0, 1.0, GAP1, KN1), (1, 1.0, GAP2, KN2), (1, -1.0, GAP2, KN2)]

    def contact(x):
        f = np.zeros(2)
        closed = []
        for dof, sign, gap, k in planes:
            p = sign * x[dof] - gap
            closed.append(p > 0)
            if p > 0:
                f[dof] -= k * p * sign
        return f, closed

    def load(t):
        return np.array([0.0, 80 * np.sin(40 * t)])

    x, v = np.zeros(2), np.array([0.0, 0.2])
    f, closed = contact(x)
    a = np.linalg.solve(M, load(0.0) - K @ x - C @ v + f)
    xs, changes = [x], []
    for i in range(1, n_steps + 1):
        x = x + DT * v + 0.5 * DT * DT * a
        vt = v + 0.5 * DT * a
        f, now = contact(x)
        a = np.linalg.solve(S, load(i * DT) - K @ x - C @ vt + f)
        v = vt + 0.5 * DT * a
        for j, (before, after) in enumerate(zip(closed, now)):
            if before != after:
                changes.append((i, "impact" if after else "separation", j))
        closed = now
        xs.append(x)
    return np.array(xs), changes


@pytest.fixture(scope="module")
def expected():
    return recurrence()


@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_lean_central_differences_follow_the_recurrence(tmp_path, monkeypatch, expected,
                                                        basis):
    xs, changes = expected
    calls = []
    loop = newmark_family.RUNS[newmark_family.LEAN]

    def spy(*args):
        calls.append(1)
        return loop(*args)
    monkeypatch.setitem(newmark_family.RUNS, newmark_family.LEAN, spy)
    found = run(tmp_path, study(basis), basis)
    assert calls, "the lean loop did not run"
    steps = np.rint(found["time"] / DT).astype(int)
    ref = xs[steps]
    scale = np.max(np.abs(ref))
    # round-off of 2500 steps through the contacts (modal: the basis' own round-off too)
    assert np.max(np.abs(found["x"][:, 1:] - ref)) < 1e-9 * scale
    links = {"stop": 0, "box": 1}
    # the events: each mode change at its step (the two planes of "box" are one link)
    expected_events = [(i, kind, "stop" if j == 0 else "box") for i, kind, j in changes]
    got = [(i, k.decode() if isinstance(k, bytes) else k,
            ln.decode() if isinstance(ln, bytes) else ln) for i, k, ln in found["events"]]
    assert len(expected_events) > 10
    assert got == expected_events
    # the archived contact forces are k p on the archived displacements
    p1 = found["x"][:, 1] - GAP1
    assert np.allclose(found["force"][:, links["stop"]], np.where(p1 > 0, KN1 * p1, 0.0),
                       rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_lean_and_general_loops_agree(tmp_path, monkeypatch, basis):
    lean = run(tmp_path, study(basis), "lean")
    monkeypatch.setattr(loops, "choose", general_only(loops.choose))
    general = run(tmp_path, study(basis), "general")
    scale = np.max(np.abs(general["x"]))
    assert np.max(np.abs(lean["x"] - general["x"])) < 1e-9 * scale
    assert np.max(np.abs(lean["v"] - general["v"])) < 1e-9 * np.max(np.abs(general["v"]))
    assert lean["events"] == general["events"]
    assert np.allclose(lean["force"], general["force"], rtol=1e-8, atol=1e-6)
    for name, series in general["energy"].items():
        assert np.allclose(lean["energy"][name], series, rtol=1e-8, atol=1e-9), name


@pytest.mark.parametrize("damping", [0.0, 20.0], ids=["lean", "general"])
def test_a_full_event_log_loses_no_event(tmp_path, monkeypatch, damping):
    """With a log of 4 entries, a chunk holds more mode changes than the log: the loop stops,
    the driver empties the log, and the loop goes on."""
    text = study("physical", events_damping=damping)
    reference = run(tmp_path, text, "big")
    original = newmark_family.NewmarkFamily.__init__

    def small_log(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.log = make_log(4)
    monkeypatch.setattr(newmark_family.NewmarkFamily, "__init__", small_log)
    small = run(tmp_path, text, "small")
    assert len(reference["events"]) > 10
    assert small["events"] == reference["events"]
    assert np.array_equal(small["x"], reference["x"])


def test_damper_energy_between_two_moving_dofs(tmp_path):
    """The energy a damper between P1 and P2 dissipates over a step is dx . C (v0 + v1) / 2
    with the new velocities of both dofs (computed here from the archived rows), in the
    general loop (newmark with links) as in the lean one; the undamped contacts dissipate
    nothing."""
    for scheme in ("newmark", "central_difference"):
        text = study("physical").replace('scheme = "central_difference"',
                                         f'scheme = "{scheme}"')
        found = run(tmp_path, text, scheme)
        x, v = found["x"][:, 1:], found["v"][:, 1:]
        dx = np.diff(x, axis=0)
        steps = np.einsum("ij,jk,ik->i", dx, C, v[:-1] + v[1:]) / 2
        expected = np.concatenate([[0.0], np.cumsum(steps)])
        dissipated = found["energy"]["dissipated"]
        assert expected[-1] > 1e-3
        assert np.max(np.abs(dissipated - expected)) < 1e-9 * expected[-1], scheme
