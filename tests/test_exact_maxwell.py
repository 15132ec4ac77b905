"""The exact scheme with Maxwell links (a spring k in series with a dashpot c), whose dashpot
elongations join the propagated state: against references computed here.

* free vibration of a mass on a Maxwell element to ground with a parallel spring, on both
  bases: scipy's matrix exponential of the state (x, v, e);
* relaxation under a displacement held from t = 0: F = k u0 exp(-k t / c);
* a Maxwell element and a damped plane stop on one mass under a ramp and a sine: scipy's
  DOP853 chained on the contact events, and the physical rk4 scheme at a short step; the
  ramp's stretch runs on the matrix-exponential propagator, the rest in closed-form pieces;
* a Maxwell element on a block that sticks and slips on a floor (unidirectional friction,
  events located by the driver): the physical rk4 scheme at a short step;
* two Maxwell elements (to ground, and between two masses) with a shock contact listed
  between them: the matrix exponential of their 6-state system.

Conventions: u = n . x the elongation, e the dashpot's elongation (0 at the start), the force
F = k (u - e) = c e' in tension, -F n on the node; the link stores F^2 / (2 k) and dissipates
F^2 / c.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

ENERGY = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


def maxwell_block(name, stiffness, damping):
    return f"""
[[link]]
name = "{name}"
kind = "maxwell"
nodes = ["P"]
direction = [1.0, 0.0, 0.0]
stiffness = {stiffness!r}
damping = {damping!r}
"""


def analysis(name, scheme, *, end, step, links, basis="physical"):
    text = (f'[[analysis]]\nname = "{name}"\nkind = "transient"\nscheme = "{scheme}"\n'
            f"end = {end!r}\nstep = {step!r}\nlinks = [" + ", ".join(f'"{x}"' for x in links)
            + "]\n")
    if basis == "modal":
        text += 'basis = "modal"\nmodes = "modes"\n'
    return text


MODES = '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 1\n'


def data_of(f, name):
    """{dataset path: array} of analysis ``name``."""
    import h5py

    found = {}
    f["analyses"][name].visititems(
        lambda key, obj: found.__setitem__(key, obj[()]) if isinstance(obj, h5py.Dataset)
        else None)
    return found


def relative(computed, reference):
    return float(np.max(np.abs(np.asarray(computed) - reference)) / np.max(np.abs(reference)))


def balance(d):
    """Largest drift of kinetic + potential + link energy + dissipated - external work,
    relative to the largest of the terms."""
    total = (d["energy/kinetic"] + d["energy/potential"] + d["energy/link_energy"]
             + d["energy/dissipated"] - d["energy/external_work"])
    scale = max(float(np.max(np.abs(d[f"energy/{k}"]))) for k in ENERGY)
    return float(np.max(np.abs(total - total[0])) / scale)


# ------------------------------------------------------------------------------------------
# 1. free vibration with a parallel spring
M, KP, K, C = 2.0, 16.0, 300.0, 20.0       # kg, N/m, N/m, N s/m
X0, V0 = 0.01, -0.2                         # m, m/s
END = 1.5


def free_study():
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {M!r}
stiffness = {KP!r}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r} }}
velocity = {{ DX = {V0!r} }}
{maxwell_block("mx", K, C)}
{MODES}
{analysis("physical", "exact", end=END, step=0.01, links=["mx"])}
{analysis("modal", "exact", end=END, step=0.01, links=["mx"], basis="modal")}
"""


def test_free_vibration_on_a_maxwell_element_against_the_matrix_exponential(run_toml):
    """m x'' = -kp x - k (x - e), c e' = k (x - e), from (x0, v0, 0): the motion, the link's
    force and dashpot elongation and every energy term against expm of the 3x3 system, on
    the physical and the modal basis; the energy balance closes to round-off."""
    f = run_toml(free_study())
    assert f.report.failed_analysis is None, f.report.message
    a = np.array([[0.0, 1.0, 0.0],
                  [-(KP + K) / M, 0.0, K / M],
                  [K / C, 0.0, -K / C]])
    for name in ("physical", "modal"):
        d = data_of(f, name)
        t = d["time"]
        assert t[0] == 0.0 and t[-1] == pytest.approx(END, abs=1e-12)
        y = np.array([scipy.linalg.expm(a * s) @ [X0, V0, 0.0] for s in t])
        x, v, e = y.T
        force = K * (x - e)
        assert relative(d["displacement"][:, 0], x) < 1e-9, name
        assert relative(d["velocity"][:, 0], v) < 1e-9, name
        assert relative(d["links/mx/force"], force) < 1e-9, name
        assert relative(d["links/mx/elongation"], x) < 1e-9, name
        assert relative(d["links/mx/dashpot_elongation"], e) < 1e-9, name
        assert d["links/mx/force"][0] == pytest.approx(K * X0, rel=1e-12)
        kinetic, potential, stored = 0.5 * M * v ** 2, 0.5 * KP * x ** 2, force ** 2 / (2 * K)
        scale = float(np.max(kinetic + potential + stored))
        expected = dict(kinetic=kinetic, potential=potential, link_energy=stored,
                        dissipated=(kinetic + potential + stored)[0] - kinetic - potential
                        - stored, external_work=np.zeros_like(t))
        for term in ENERGY:
            assert np.max(np.abs(d[f"energy/{term}"] - expected[term])) < 1e-9 * scale, \
                (name, term)
        assert d["energy/dissipated"][-1] > 0.5 * scale
        assert balance(d) < 1e-9, name


# ------------------------------------------------------------------------------------------
# 2. relaxation under a held displacement
U0, KR, CR = 1.0e-3, 1.0e4, 2.0e2          # m, N/m, N s/m: tau = 0.02 s


def test_relaxation_under_a_held_displacement(run_toml):
    """Node P held at u0 from t = 0 (a constraint), the Maxwell element to ground: the
    spring takes u0 at once, then F = k u0 exp(-k t / c), e = u0 - F / k; the stored energy
    F^2 / (2 k) is all dissipated. Node Q, a free oscillator nothing moves, is the model's
    dof."""
    tau = CR / KR
    end = 5 * tau
    f = run_toml(f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
Q = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["Q"]
mass = 1.0
stiffness = 100.0
[[constraint]]
nodes = ["P"]
DX = {U0!r}
{maxwell_block("mx", KR, CR)}
{analysis("a", "exact", end=end, step=tau / 50, links=["mx"])}
""")
    assert f.report.failed_analysis is None, f.report.message
    d = data_of(f, "a")
    t = d["time"]
    assert t[-1] == pytest.approx(end, abs=1e-12)
    force = KR * U0 * np.exp(-t / tau)
    assert relative(d["links/mx/force"], force) < 1e-9
    assert relative(d["links/mx/dashpot_elongation"], U0 - force / KR) < 1e-9
    assert np.all(d["links/mx/elongation"] == pytest.approx(U0, rel=1e-14))
    assert d["links/mx/force"][0] == pytest.approx(KR * U0, rel=1e-12)
    stored = force ** 2 / (2 * KR)
    assert np.max(np.abs(d["energy/link_energy"] - stored)) < 1e-9 * stored[0]
    assert np.max(np.abs(d["energy/dissipated"] - (stored[0] - stored))) < 1e-9 * stored[0]
    assert np.max(np.abs(d["energy/external_work"])) < 1e-12 * stored[0]
    assert balance(d) < 1e-9
    # the archived displacement holds P (held at u0) and Q (still)
    assert np.all(d["displacement"][:, 0] == U0)
    assert np.max(np.abs(d["displacement"][:, 1])) < 1e-12


# ------------------------------------------------------------------------------------------
# 3. a Maxwell element and a damped plane stop on one mass
GAP, KS, CS = 0.01, 2.0e4, 10.0            # the stop: m, N/m, N s/m (release at the gap)
F_SINE, W_SINE = 20.0, 9.0                 # N, rad/s
RAMP = ((0.0, 0.0), (0.25, 6.0))           # N: a ramp to 6 N, constant after 0.25 s
END_STOP = 2.0
RK4_STEP = 2e-5


def stop_study():
    body = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {M!r}
stiffness = {KP!r}
[[initial]]
nodes = ["P"]
velocity = {{ DX = 0.3 }}
[functions.sine]
expression = "{F_SINE!r}*sin({W_SINE!r}*t)"
[functions.ramp]
table = {[list(p) for p in RAMP]}
right = "constant"
[[load]]
name = "sine"
nodes = ["P"]
FX = 1.0
function = "sine"
[[load]]
name = "ramp"
nodes = ["P"]
FX = 1.0
function = "ramp"
{maxwell_block("mx", K, C)}
[[link]]
name = "stop"
kind = "shock"
nodes = ["P"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = {GAP!r}
stiffness = {KS!r}
damping = {CS!r}
release = "gap"
{MODES}
"""
    links = ["mx", "stop"]
    return (body + analysis("exact", "exact", end=END_STOP, step=0.01, links=links)
            + analysis("modal", "exact", end=END_STOP, step=0.01, links=links, basis="modal")
            + analysis("rk4", "rk4", end=END_STOP, step=RK4_STEP, links=links)
            + "archive = { every = 500 }\n")


def load(t):
    return F_SINE * np.sin(W_SINE * t) + np.interp(t, [p[0] for p in RAMP],
                                                    [p[1] for p in RAMP])


def stop_rhs(t, y, closed):
    x, v, e = y
    force = load(t) - KP * x - K * (x - e)
    if closed:
        force -= KS * (x - GAP) + CS * v
    return [v, force / M, K / C * (x - e)]


def stop_reference():
    """(event times, dense pieces) of the motion from (0, 0.3, 0): DOP853 at tight
    tolerance, restarted at the ramp's corner and at each crossing of the gap."""
    def crossing(t, y, closed):
        return y[0] - GAP
    crossing.terminal = True

    t, y, closed = 0.0, np.array([0.0, 0.3, 0.0]), False
    events, pieces = [], []
    while t < END_STOP - 1e-12:
        t_stop = RAMP[-1][0] if t < RAMP[-1][0] - 1e-12 else END_STOP
        crossing.direction = -1 if closed else 1
        sol = solve_ivp(stop_rhs, (t, t_stop), y, method="DOP853", rtol=1e-12, atol=1e-15,
                        events=crossing, args=(closed,), dense_output=True)
        pieces.append((t, float(sol.t[-1]), sol.sol))
        t, y = float(sol.t[-1]), sol.y[:, -1].copy()
        if sol.status == 1:
            closed = not closed
            events.append(t)
            # leave the root just handled behind
            t_next = t + 1e-10
            y = solve_ivp(stop_rhs, (t, t_next), y, method="DOP853", rtol=1e-12, atol=1e-15,
                          args=(closed,)).y[:, -1]
            pieces.append((t, t_next, None))
            t = t_next
    return np.array(events), pieces


def dense(pieces, times):
    out = np.empty((len(times), 3))
    for i, t in enumerate(times):
        for a, b, sol in pieces:
            if sol is not None and a <= t <= b:
                out[i] = sol(t)
                break
    return out


def event_times(f, name):
    table = f["analyses"][name]["events"][:]
    links = [x.decode() if isinstance(x, bytes) else x for x in table["link"]]
    assert set(links) <= {"stop"}
    return np.asarray(table["time"], float)


def test_maxwell_element_with_a_plane_stop(run_toml):
    """One mass on a spring, a Maxwell element and a damped stop, under a ramp then a sine:
    the exact scheme (physical and modal) against DOP853 chained on the contact events
    (event times to 1e-9 s, states to 1e-8 of their size), and against rk4 at a step of
    2e-5 s (w h = 0.002 in contact, 1e5 steps: its events to 1e-8 s, states and energies
    to 1e-7 of their size, fifty times what it is off by here); the energy balance to
    round-off."""
    f = run_toml(stop_study())
    assert f.report.failed_analysis is None, f.report.message
    events, pieces = stop_reference()
    assert len(events) >= 6
    rk4 = data_of(f, "rk4")
    for name in ("exact", "modal"):
        d = data_of(f, name)
        t = d["time"]
        found = event_times(f, name)
        assert len(found) == len(events), (name, found, events)
        assert np.max(np.abs(found - events)) < 1e-9, name
        ref = dense(pieces, t)
        assert relative(d["displacement"][:, 0], ref[:, 0]) < 1e-8, name
        assert relative(d["velocity"][:, 0], ref[:, 1]) < 1e-8, name
        assert relative(d["links/mx/dashpot_elongation"], ref[:, 2]) < 1e-8, name
        assert relative(d["links/mx/force"], K * (ref[:, 0] - ref[:, 2])) < 1e-8, name
        assert balance(d) < 1e-9, name
        assert d["energy/dissipated"][-1] > 0
        # rk4 on the same grid (every 500th of its steps: the exact scheme's 0.01 s)
        assert np.allclose(rk4["time"], t, rtol=0, atol=1e-12)
        assert len(event_times(f, "rk4")) == len(events)
        assert np.max(np.abs(event_times(f, "rk4") - found)) < 1e-8, name
        assert relative(rk4["displacement"][:, 0], d["displacement"][:, 0]) < 1e-7, name
        assert relative(rk4["velocity"][:, 0], d["velocity"][:, 0]) < 1e-7, name
        for series in ("force", "dashpot_elongation"):
            assert relative(rk4[f"links/mx/{series}"], d[f"links/mx/{series}"]) < 1e-7, \
                (name, series)
        scale = max(float(np.max(np.abs(d[f"energy/{k}"]))) for k in ENERGY)
        for term in ENERGY:
            assert np.max(np.abs(rk4[f"energy/{term}"] - d[f"energy/{term}"])) < 1e-7 * scale, \
                (name, term)


# ------------------------------------------------------------------------------------------
# 4. a Maxwell element on a block that sticks and slips (events located by the driver)
def friction_study():
    links = ["mx", "floor"]
    text = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX", "DZ"]
[[discrete]]
nodes = ["P"]
mass = 1.0
stiffness = [400.0, 0.0, 1000.0]
[[initial]]
nodes = ["P"]
displacement = {{ DX = 0.05 }}
[[load]]
name = "press"
nodes = ["P"]
FZ = -10.0
{maxwell_block("mx", K, C)}
[[link]]
name = "floor"
kind = "shock"
nodes = ["P"]
normal = [0.0, 0.0, -1.0]
gap = 0.0
stiffness = 1e5
damping = 100.0
friction = 0.3
tangential_stiffness = 1e5
friction_direction = [1.0, 0.0, 0.0]
[[analysis]]
name = "modes"
kind = "modes"
count = 2
"""
    return (text + analysis("exact", "exact", end=1.0, step=0.01, links=links)
            + analysis("modal", "exact", end=1.0, step=0.01, links=links, basis="modal")
            + analysis("rk4", "rk4", end=1.0, step=1e-5, links=links)
            + "archive = { every = 1000 }\n")


def test_maxwell_element_on_a_block_that_sticks_and_slips(run_toml):
    """A block pressed on a floor with unidirectional friction, held back by a spring and a
    Maxwell element: the driver locates its stick and slip events (the pieces do not take
    friction events). The exact scheme (physical and modal) against rk4 at a step of 1e-5 s
    (w h below 0.004 on every dof): the same events within 1e-9 s, the motion and the
    Maxwell element's force and dashpot elongation within 1e-8 of their size."""
    f = run_toml(friction_study())
    assert f.report.failed_analysis is None, f.report.message
    rk4 = data_of(f, "rk4")
    table = f["analyses"]["rk4"]["events"][:]
    assert len(table) >= 4 and set(table["kind"]) == {b"stick", b"slip"}
    for name in ("exact", "modal"):
        d = data_of(f, name)
        events = f["analyses"][name]["events"][:]
        assert list(events["kind"]) == list(table["kind"]), name
        assert np.max(np.abs(events["time"] - table["time"])) < 1e-9, name
        assert np.allclose(rk4["time"], d["time"], rtol=0, atol=1e-12)
        for dof in (0, 1):
            assert relative(d["displacement"][:, dof], rk4["displacement"][:, dof]) < 1e-8
        assert relative(d["velocity"][:, 0], rk4["velocity"][:, 0]) < 1e-8, name
        for series in ("force", "dashpot_elongation"):
            assert relative(d[f"links/mx/{series}"], rk4[f"links/mx/{series}"]) < 1e-8, \
                (name, series)


# ------------------------------------------------------------------------------------------
# 5. two Maxwell elements among other contacts
MA, MB, KA, KB = 1.0, 3.0, 40.0, 90.0       # kg, N/m
KM1, CM1, KM2, CM2 = 300.0, 20.0, 150.0, 4.0


def test_two_maxwell_elements_against_the_matrix_exponential(run_toml):
    """A (1 kg on 40 N/m) and B (3 kg on 90 N/m); a Maxwell element from A to ground and one
    from A to B along -X (u = x_B - x_A), with a stop listed between them that is never
    reached (the dashpots are the state's entries of contacts 0 and 2): the motion and both
    elements' series against expm of (x_A, x_B, v_A, v_B, e_1, e_2), on both bases."""
    links = ["m1", "stop", "m2"]
    text = f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["A"]
mass = {MA!r}
stiffness = {KA!r}
[[discrete]]
nodes = ["B"]
mass = {MB!r}
stiffness = {KB!r}
[[initial]]
nodes = ["A"]
displacement = {{ DX = 0.01 }}
[[initial]]
nodes = ["B"]
velocity = {{ DX = -0.1 }}
[[link]]
name = "m1"
kind = "maxwell"
nodes = ["A"]
direction = [1.0, 0.0, 0.0]
stiffness = {KM1!r}
damping = {CM1!r}
[[link]]
name = "stop"
kind = "shock"
nodes = ["B"]
normal = [1.0, 0.0, 0.0]
gap = 1.0
stiffness = 1e4
[[link]]
name = "m2"
kind = "maxwell"
nodes = ["A", "B"]
direction = [-1.0, 0.0, 0.0]
stiffness = {KM2!r}
damping = {CM2!r}
[[analysis]]
name = "modes"
kind = "modes"
count = 2
{analysis("physical", "exact", end=2.0, step=0.01, links=links)}
{analysis("modal", "exact", end=2.0, step=0.01, links=links, basis="modal")}
"""
    f = run_toml(text)
    assert f.report.failed_analysis is None, f.report.message
    # y = (xA, xB, vA, vB, e1, e2); u1 = xA, u2 = xB - xA
    l1, l2 = np.array([1.0, 0.0]), np.array([-1.0, 1.0])
    minv = np.diag([1.0 / MA, 1.0 / MB])
    a = np.zeros((6, 6))
    a[:2, 2:4] = np.eye(2)
    a[2:4, :2] = -minv @ (np.diag([KA, KB]) + KM1 * np.outer(l1, l1) + KM2 * np.outer(l2, l2))
    a[2:4, 4] = minv @ (KM1 * l1)
    a[2:4, 5] = minv @ (KM2 * l2)
    a[4, :2], a[4, 4] = KM1 / CM1 * l1, -KM1 / CM1
    a[5, :2], a[5, 5] = KM2 / CM2 * l2, -KM2 / CM2
    for name in ("physical", "modal"):
        d = data_of(f, name)
        t = d["time"]
        y = np.array([scipy.linalg.expm(a * s) @ [0.01, 0.0, 0.0, -0.1, 0.0, 0.0] for s in t])
        for dof in (0, 1):
            assert relative(d["displacement"][:, dof], y[:, dof]) < 1e-9, (name, dof)
            assert relative(d["velocity"][:, dof], y[:, 2 + dof]) < 1e-9, (name, dof)
        for link, row, k, j in (("m1", l1, KM1, 4), ("m2", l2, KM2, 5)):
            u = y[:, :2] @ row
            assert relative(d[f"links/{link}/elongation"], u) < 1e-9, (name, link)
            assert relative(d[f"links/{link}/dashpot_elongation"], y[:, j]) < 1e-9, (name, link)
            assert relative(d[f"links/{link}/force"], k * (u - y[:, j])) < 1e-9, (name, link)
        assert np.all(d["links/stop/state"] == 0)
        assert balance(d) < 1e-9, name
