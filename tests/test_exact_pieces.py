"""The exact scheme's compiled pieces on several shock contacts (the events taken inside the
pieces, the forms of each mode set and of each stretch of the loads), against an independent
integration written here: scipy's DOP853 at tight tolerance chained on the contact events."""

import numpy as np
from scipy.integrate import solve_ivp

from postpro.energy import energy_balance_error

M1, M2, K1, K2, KS, C1, CS = 2.0, 1.0, 800.0, 400.0, 300.0, 1.0, 0.5
F0, W0, F1 = 30.0, 2 * np.pi * 1.0, 5.0
STOP_GAP, STOP_K, STOP_C = 0.02, 2e5, 40.0          # P2 against a plane: force release
PAIR_GAP, PAIR_K = 0.01, 1e5                        # P1 - P2 between two planes
#: the table load on P1: zero, a ramp from 0.15 s to 0.2 s (no closed form there), then -8 N
RAMP = ((0.0, 0.0), (0.15, 0.0), (0.2, -8.0))
END = 0.8

STUDY = f"""
[mesh.nodes]
P1 = [0.0, 0.0, 0.0]
P2 = [1.0, 0.0, 0.0]
[mesh.cells]
S = {{ type = "SEG2", nodes = ["P1", "P2"] }}
[model]
components = ["DX"]
[[discrete]]
nodes = ["P1"]
mass = {M1}
stiffness = {K1}
damping = {C1}
[[discrete]]
nodes = ["P2"]
mass = {M2}
stiffness = {K2}
[[discrete]]
cells = ["S"]
stiffness = {KS}
damping = {CS}
[functions.sine]
expression = "{F0}*sin({W0}*t) + {F1}"
[functions.ramp]
table = {[list(p) for p in RAMP]}
right = "constant"
[[load]]
name = "sine"
nodes = ["P2"]
FX = 1.0
function = "sine"
[[load]]
name = "ramp"
nodes = ["P1"]
FX = 1.0
function = "ramp"
[[link]]
name = "stop"
kind = "shock"
nodes = ["P2"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = {STOP_GAP}
stiffness = {STOP_K}
damping = {STOP_C}
[[link]]
name = "pair"
kind = "shock"
nodes = ["P1", "P2"]
obstacle = "two_planes"
normal = [1.0, 0.0, 0.0]
gap = {PAIR_GAP}
stiffness = {PAIR_K}
[[analysis]]
name = "physical"
kind = "transient"
scheme = "exact"
end = {END}
step = 0.01
links = ["stop", "pair"]
[[analysis]]
name = "modes"
kind = "modes"
count = 2
[[analysis]]
name = "modal"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "exact"
end = {END}
step = 0.01
links = ["stop", "pair"]
"""


def ramp(t):
    return np.interp(t, [p[0] for p in RAMP], [p[1] for p in RAMP])


def stop_functions(y):
    """(p, p + c p' / k) of the stop: its contact function is their minimum (force rule)."""
    p, pd = y[1] - STOP_GAP, y[3]
    return p, p + STOP_C * pd / STOP_K


def pair_penetrations(y):
    return y[0] - y[1] - PAIR_GAP, y[1] - y[0] - PAIR_GAP


def rhs(t, y, closed):
    u1, u2, v1, v2 = y
    f1 = ramp(t) - K1 * u1 - C1 * v1 - KS * (u1 - u2) - CS * (v1 - v2)
    f2 = F0 * np.sin(W0 * t) + F1 - K2 * u2 - KS * (u2 - u1) - CS * (v2 - v1)
    if closed[0]:
        f2 -= STOP_K * (y[1] - STOP_GAP) + STOP_C * v2
    plus, minus = pair_penetrations(y)
    if closed[1]:
        f1 -= PAIR_K * plus
        f2 += PAIR_K * plus
    if closed[2]:
        f1 += PAIR_K * minus
        f2 -= PAIR_K * minus
    return [v1, v2, f1 / M1, f2 / M2]


def reference_events(end=END):
    """(time, link) of every contact entry and exit, and the dense solutions, from rest."""
    def make(index, sign):
        def g(t, y, closed):
            values = (*stop_functions(y), *pair_penetrations(y))
            return values[index]
        g.terminal = True
        g.direction = sign
        return g

    t, y, closed = 0.0, np.zeros(4), [False, False, False]
    events, pieces = [], []
    stops = [p[0] for p in RAMP[1:]] + [end]
    while t < end - 1e-12:
        t_stop = min(s for s in stops if s > t + 1e-12)
        # the stop: closed while min(p, q) > 0; the pair's planes: while p > 0
        functions = [make(0, -1 if closed[0] else 1), make(1, -1 if closed[0] else 1),
                     make(2, -1 if closed[1] else 1), make(3, -1 if closed[2] else 1)]
        sol = solve_ivp(rhs, (t, t_stop), y, method="DOP853", rtol=1e-12, atol=1e-14,
                        events=functions, args=(list(closed),), dense_output=True)
        pieces.append((t, sol.t[-1], sol.sol))
        t, y = float(sol.t[-1]), sol.y[:, -1].copy()
        if sol.status != 1:
            continue
        which = next(i for i, te in enumerate(sol.t_events) if len(te))
        if which < 2:
            p, q = stop_functions(y)
            if closed[0] or min(p, q) >= -1e-12 * STOP_GAP:
                closed[0] = not closed[0]
                events.append((t, "stop"))
            # else: one of the two functions crossed while the other is negative: no event
        else:
            closed[which - 1] = not closed[which - 1]
            events.append((t, "pair"))
        # leave the root just handled behind
        t_next = t + 1e-9
        y = solve_ivp(rhs, (t, t_next), y, method="DOP853", rtol=1e-12, atol=1e-14,
                      args=(list(closed),)).y[:, -1]
        t = t_next
    return events, pieces


def dense(pieces, times):
    out = np.empty((len(times), 4))
    for i, t in enumerate(times):
        for a, b, sol in pieces:
            if a <= t <= b:
                out[i] = sol(t)
                break
    return out


def test_two_shock_links_with_a_damped_force_release_against_dop853(run_toml):
    """Entries and exits of three contacts (a damped stop releasing at zero force, two planes
    between the masses) in the exact scheme on both bases against DOP853 chained on the
    events; the archived motion against its dense output; the energy balance to round-off."""
    f = run_toml(STUDY)
    assert f.report.failed_analysis is None
    events, pieces = reference_events()
    assert len(events) >= 8 and {link for _, link in events} == {"stop", "pair"}
    for name in ("physical", "modal"):
        g = f["analyses"][name]
        table = g["events"][:]
        links = [x.decode() if isinstance(x, bytes) else x for x in table["link"]]
        assert links == [link for _, link in events]
        error = np.max(np.abs(table["time"] - [t for t, _ in events]))
        assert error < 1e-8, (name, error)
        t = g["time"][:]
        ref = dense(pieces, t)
        u = g["displacement"][:]
        assert np.max(np.abs(u - ref[:, :2])) < 1e-8 * np.max(np.abs(ref[:, :2]))
        v = g["velocity"][:]
        assert np.max(np.abs(v - ref[:, 2:])) < 1e-7 * np.max(np.abs(ref[:, 2:]))
        e = {k: g["energy"][k][:] for k in g["energy"]}
        assert energy_balance_error(*(e[k] for k in ("kinetic", "potential", "link_energy",
                                                     "dissipated", "external_work"))) < 1e-10


def test_the_exact_scheme_stops_at_the_step_limit(tmp_path):
    """The pieces take their events themselves: the step limit still bounds them (V2 takes
    141 pieces over 4 s)."""
    from fem.runner import run_study

    from conftest import ROOT

    text = (ROOT / "studies" / "v2_impact_oscillator.toml").read_text()
    head = text.split("[[check]]")[0]            # the model and the exact analysis
    path = tmp_path / "v2.toml"
    path.write_text(head.replace("step = 1e-3", "step = 0.5"))
    report = run_study(path, tmp_path / "v2.h5", max_steps=60)
    assert report.failed_analysis == "exact"
    assert "exact took more than 60 steps" in report.message
