"""Cross-checks of the transient engine: schemes against a reference computed another way, and
links on dofs with an imposed motion.

1. A scheme against the same system run with ``exact`` (or, where exact does not offer the
   feature, with the same scheme at a 100x smaller step or tolerance, and solve_ivp or a closed
   form written independently), within an error derived from the scheme's order and step:
   Coulomb friction with modal central differences, a plane with modal De Vogelaere, a circle
   with modal rk54, a rigid impact with physical Newmark. Where fem refuses the exact
   reference as not available yet, the closed form of closed_forms.py replaces it (printed).
2. Links on dofs with an imposed motion: a constant offset of the obstacle's node is the same
   system shifted (to round-off); a support moving as a sine against solve_ivp of the one-dof
   equation whose gap uses the total motion; the energy balance with the support's work
   through the link counted as external work.

Figures: ``pytest -s`` prints each comparison's error and tolerance.
"""

from __future__ import annotations

import re
import textwrap
from functools import lru_cache

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

import closed_forms as cf
import postpro
from fem.errors import NotAvailableError
from fem import catalog
from fem.runner import run_study
from postpro.energy import energy_balance_error

#: every tolerance is SAFETY times the error its comment derives
SAFETY = 3.0
#: time error of an event located by root finding on a step's dense output (s); it does not
#: build up
FLOOR = 1e-10
#: 9 significant digits of the approach speed in the events table (m/s, for speeds <= 10)
TABLE_DIGITS = 1e-8


# ------------------------------------------------------------------------------------------
# running studies

def _run(directory, text, name):
    path = directory / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    out = directory / f"{name}.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    return postpro.open(out)


@pytest.fixture
def study(tmp_path):
    """study(text, name) -> the transient analysis "run" of the study (closed at teardown)."""
    opened = []

    def run(text, name):
        results = _run(tmp_path, text, name)
        opened.append(results)
        return results.analysis("run")
    yield run
    for results in opened:
        results.close()


def if_available(run, text, name):
    """The analysis "run", or None when fem refuses its scheme as not available yet (exit
    code 2, "... not available ..."): the caller then uses its closed form."""
    try:
        return run(text, name)
    except NotAvailableError as exc:
        assert "not available" in str(exc), exc
        print(f"  reference run '{name}' not available yet ({exc}): closed form instead")
        return None


def report(label, error, tolerance):
    """Assert error <= tolerance elementwise, printing the worst case."""
    error, tolerance = np.broadcast_arrays(np.atleast_1d(np.asarray(error, float)),
                                           np.atleast_1d(np.asarray(tolerance, float)))
    worst = int(np.argmax(error / tolerance))
    e, tol = float(error[worst]), float(tolerance[worst])
    print(f"  {label}: error {e:.3e}, tolerance {tol:.3e} (max error {error.max():.3e})")
    assert e <= tol, f"{label}: error {e:.3e} > tolerance {tol:.3e}"


_SPEED = re.compile(r"approach speed (\S+) m/s")


def shock_events(analysis, link):
    """[(time, kind, normal velocity)] of a shock link from the events table."""
    out = []
    for row in analysis.events:
        if row["link"] == link:
            speed = _SPEED.search(row["detail"])
            out.append((float(row["time"]), str(row["kind"]),
                        float(speed.group(1)) if speed else np.nan))
    return out


def fields(analysis, dofs):
    """Archived instants (k,), displacements and velocities (k, len(dofs))."""
    t, x = analysis.columns("displacement", dofs)
    _, v = analysis.columns("velocity", dofs)
    return t, x, v


def same_instants(t, t_ref):
    assert len(t) == len(t_ref) and np.allclose(t, t_ref, rtol=0.0, atol=1e-12), \
        "the runs archive different instants"


def modes_block(count):
    """The modes analysis "modes" of a modal basis (``count`` modes: all of them here)."""
    return f'[[analysis]]\nname = "modes"\nkind = "modes"\ncount = {count}\n\n'


def transient_block(basis, scheme, end, links, keys, events="locate"):
    lines = ['[[analysis]]', 'name = "run"', 'kind = "transient"', f'basis = "{basis}"',
             f'scheme = "{scheme}"', f'end = {end}',
             'links = [' + ", ".join(f'"{name}"' for name in links) + ']',
             f'events = "{events}"', keys]
    if basis == "modal":
        lines.insert(4, 'modes = "modes"')
    return "\n".join(lines) + "\n"


def adaptive_drift(order, tolerance):
    """Relative time error per second of an embedded or De Vogelaere step control holding
    the local error of steps of about tol^(1/p) radians below tol: tol^((p - 1) / p)."""
    return tolerance ** ((order - 1) / order)


# ------------------------------------------------------------------------------------------
# 1a. Coulomb friction, modal central differences: a mass on a spring along X (w = 10 rad/s)
# pressed by 10 N on a plane below it, thrown at 1 m/s: it slides, stops and slides back twice,
# then sticks for good (rigid Coulomb: stops at 0.137, 0.451, 0.766 s). The regularised law's
# stick spring (kt = 1e6 N/m, damping ratio 0.2) makes each reversal a short stick phase at
# w_t = sqrt((k + kt) / m) = 1000 rad/s (0.6 to 1 ms) before the slide back starts.
#
# Error of central differences (order 2) at step h: a phase of circular frequency w drifts by
# c (w h)^2 of the time spent in it (c = 1/24) and shifts its crossings by 1.2 a (w h)^2 / w
# (amplitude error a = 1/8 set where it starts). Time budget: the slides drift at w, each
# stick phase adds its drift and offset at w_t:
#     B(t) = FLOOR + c (w h)^2 t + 1.2 a (w h)^2 / w
#            + n(t) [c (w_t h)^2 tau + 1.2 a (w_t h)^2 / w_t]
# with n(t) the stick phases begun before t and tau the longest one. h = 2e-4 s (w_t h = 0.2):
# 7.6e-6 s per transition. Events are off by B, the states by max|x'| B and max|x''| B; once
# stuck for good, each run oscillates on the stick spring within (k |x_rest| + mu N) / kt of
# its anchor (and that times w_t in velocity). The reference, at h / 100, is 1e4 times closer.
FR_M, FR_K, FR_N, FR_MU, FR_KC, FR_KT = 1.0, 100.0, 10.0, 0.2, 1e4, 1e6
FR_CT = float(2 * 0.2 * np.sqrt(FR_KT * FR_M))
FR_V0, FR_END, FR_STEP = 1.0, 1.0, 2e-4
CD_PERIOD, CD_AMPLITUDE = 1.0 / 24.0, 1.0 / 8.0

FRICTION_SPRING = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX", "DZ"]
[[discrete]]
nodes = ["P"]
mass = {FR_M}
stiffness = [{FR_K}, 0.0, 0.0]
[[load]]
nodes = ["P"]
FZ = {-FR_N}
[[initial]]
nodes = ["P"]
displacement = {{ DZ = {-FR_N / FR_KC!r} }}
velocity = {{ DX = {FR_V0} }}
[[link]]
name = "floor"
kind = "shock"
nodes = ["P"]
normal = [0.0, 0.0, -1.0]
gap = 0.0
stiffness = {FR_KC}
friction = {FR_MU}
tangential_stiffness = {FR_KT}
tangential_damping = {FR_CT!r}
"""


def friction_events(analysis):
    return [(float(r["time"]), str(r["kind"])) for r in analysis.events if r["link"] == "floor"]


def test_coulomb_friction_modal_central_difference(study):
    """Slides, stops and the final stick against the same run at h / 100; the first slide and
    its stop time against the rigid Coulomb closed form."""
    closed = cf.coulomb_oscillator(FR_M, FR_K, FR_N, FR_MU, FR_V0, FR_END)
    runs = {}
    for name, step, every in (("run", FR_STEP, 1), ("reference", FR_STEP / 100, 100)):
        keys = f"step = {step!r}\narchive = {{ every = {every} }}"
        runs[name] = study(FRICTION_SPRING + modes_block(2)
                           + transient_block("modal", "central_difference", FR_END, ["floor"],
                                             keys), name)
    run, ref = runs["run"], runs["reference"]
    dofs = [("P", "DX"), ("P", "DZ")]
    t, x, v = fields(run, dofs)
    t_ref, x_ref, v_ref = fields(ref, dofs)
    same_instants(t, t_ref)

    # the sequence of the closed form: stick, slip, stick, slip, stick (for good)
    found, expected = friction_events(run), friction_events(ref)
    kinds = [e.kind for e in closed.events]
    assert [k for _, k in expected] == kinds, expected
    assert [k for _, k in found] == kinds, found
    assert not [r for r in run.events if r["kind"] in ("impact", "separation")]   # never lifts

    w = np.sqrt(FR_K / FR_M)
    w_t = np.sqrt((FR_K + FR_KT) / FR_M)
    sticks = [s for s, k in expected if k == "stick"]
    slips = [s for s, k in expected if k == "slip"]
    tau = max(b - a for a, b in zip(sticks, slips))
    per_transition = (CD_PERIOD * (w_t * FR_STEP) ** 2 * tau
                      + 1.2 * CD_AMPLITUDE * (w_t * FR_STEP) ** 2 / w_t)
    slide_offset = 1.2 * CD_AMPLITUDE * (w * FR_STEP) ** 2 / w

    def slide_budget(times):
        times = np.atleast_1d(np.asarray(times, float))
        return FLOOR + CD_PERIOD * (w * FR_STEP) ** 2 * times + slide_offset

    def budget(times):
        n = np.searchsorted(sticks, times, side="left")       # stick phases begun before
        return slide_budget(times) + n * per_transition

    for (time, kind), (time_ref, _) in zip(found, expected):
        report(f"{kind} at {time_ref:.6f} s", abs(time - time_ref), SAFETY * budget(time_ref))

    x_max = float(np.max(np.abs(x_ref[:, 0])))
    v_max = float(np.max(np.abs(v_ref[:, 0])))
    a_max = (FR_K * x_max + FR_MU * FR_N) / FR_M          # spring and a friction <= mu N
    stuck = t > sticks[-1]
    rest_force = FR_K * abs(closed.values["rest"]) + FR_MU * FR_N
    b = SAFETY * budget(np.minimum(t, sticks[-1]))
    report("displacement X", np.abs(x[:, 0] - x_ref[:, 0]),
           v_max * b + np.where(stuck, 2 * rest_force / FR_KT, 0.0))
    report("velocity X", np.abs(v[:, 0] - v_ref[:, 0]),
           a_max * b + np.where(stuck, 2 * rest_force / FR_KT * w_t, 0.0))
    # the normal dof stays in its equilibrium (the modal Z coordinate is never loaded off it)
    report("displacement Z", np.abs(x[:, 1] + FR_N / FR_KC), 1e-15)

    # closed form: the first slide (no stick phase before it: the stick damper's ct v0 >> mu N
    # makes it slip at once) is the rigid Coulomb oscillator, to the slide budget
    t1 = closed.values["stop_times"][0]
    b1 = SAFETY * slide_budget(t1)[0]
    report("first stop time vs closed form", abs(found[0][0] - t1), b1)
    report("first stop time of the reference vs closed form", abs(expected[0][0] - t1),
           b1 / 1e4 + FLOOR)
    sliding = t < t1
    xc, vc = closed.state(t[sliding])
    report("first slide, displacement vs closed form", np.abs(x[sliding, 0] - xc[:, 0]),
           v_max * SAFETY * slide_budget(t[sliding]))
    report("first slide, velocity vs closed form", np.abs(v[sliding, 0] - vc[:, 0]),
           a_max * SAFETY * slide_budget(t[sliding]))


# ------------------------------------------------------------------------------------------
# 1b. A plane obstacle, modal De Vogelaere (order 4, tolerance 1e-8) against exact: a 1 kg mass
# on a 100 N/m spring thrown at 1 m/s against a penalty plane (1e4 N/m, 20 N.s/m, release
# "force") 5 cm away: two contacts of about 30 ms in 0.6 s.
#
# Error: the step control keeps the local error of steps of about tol^(1/4) rad below tol, a
# relative time drift tol^(3/4) = 1e-6 per second: B(t) = FLOOR + tol^(3/4) t (3e-7 s at the
# last exit). Event times are off by B; the normal velocity at an event by |x''| there times B
# (|x''| <= (k0 x_max + c |v|) / m, the contact force being 0 at the entry and at a "force"
# exit); states by max|x'| B and max|x''| B. exact is exact between events located to
# round-off.
PL_M, PL_K0, PL_V0, PL_GAP, PL_KC, PL_C, PL_END = 1.0, 100.0, 1.0, 0.05, 1e4, 20.0, 0.6
PL_TOL = 1e-8

PLANE = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {PL_M}
stiffness = {PL_K0}
[[initial]]
nodes = ["P"]
velocity = {{ DX = {PL_V0} }}
[[link]]
name = "stop"
kind = "shock"
nodes = ["P"]
normal = [1.0, 0.0, 0.0]
gap = {PL_GAP}
stiffness = {PL_KC}
damping = {PL_C}
release = "force"
"""


def test_plane_modal_devogelaere_against_exact(study):
    """Contact entries and exits, the rebound (exit) velocities and the displacement at the
    archived instants against exact (closed form if exact is not available yet)."""
    keys = f"tolerance = {PL_TOL}\nstep = 1e-3"
    run = study(PLANE + modes_block(1)
                + transient_block("modal", "devogelaere", PL_END, ["stop"], keys), "run")
    t, x, v = fields(run, [("P", "DX")])
    exact = if_available(study, PLANE + modes_block(1)
                         + transient_block("modal", "exact", PL_END, ["stop"], "step = 1e-3"),
                         "exact")
    if exact is not None:
        expected = shock_events(exact, "stop")
        t_ref, x_ref, v_ref = fields(exact, [("P", "DX")])
        same_instants(t, t_ref)
    else:
        closed = cf.plane(PL_M, PL_K0, PL_V0, PL_GAP, PL_KC, PL_C, "force", PL_END)
        expected = [(e.time, e.kind, e.velocity) for e in closed.events if e.time < PL_END]
        x_ref, v_ref = closed.state(t)
    found = shock_events(run, "stop")
    assert [k for _, k, _ in found] == [k for _, k, _ in expected], (found, expected)
    assert [k for _, k, _ in expected] == ["impact", "separation"] * 2

    drift = adaptive_drift(4, PL_TOL)

    def budget(times):
        return FLOOR + drift * np.asarray(times, float)

    x_max = PL_V0 / np.sqrt(PL_K0 / PL_M)
    for (time, kind, speed), (time_ref, _, speed_ref) in zip(found, expected):
        b = SAFETY * budget(time_ref)
        report(f"{kind} at {time_ref:.6f} s: time", abs(time - time_ref), b)
        a_event = (PL_K0 * x_max + PL_C * abs(speed_ref)) / PL_M
        report(f"{kind} at {time_ref:.6f} s: normal velocity", abs(speed - speed_ref),
               a_event * b + TABLE_DIGITS)
    for i in (0, 2):
        report(f"contact {i // 2 + 1} duration",
               abs((found[i + 1][0] - found[i][0]) - (expected[i + 1][0] - expected[i][0])),
               SAFETY * (budget(expected[i][0]) + budget(expected[i + 1][0])))
    a_max = (PL_KC * (x_max - PL_GAP) + PL_K0 * x_max + PL_C * PL_V0) / PL_M
    b = SAFETY * budget(t)
    report("displacement", np.abs(x - x_ref)[:, 0], PL_V0 * b)
    report("velocity", np.abs(v - v_ref)[:, 0], a_max * b)


# ------------------------------------------------------------------------------------------
# 1c. A circular obstacle, modal rk54: a mass on springs of 100 and 225 N/m along X and Y
# (10 and 15 rad/s) starting at the centre of a round hole (radius 5 cm, 1e4 N/m, 10 N.s/m,
# release "force") at (0.8, 0.6) m/s: a Lissajous path that meets the wall at changing angles.
# exact does not offer the circle (the radial penetration is not linear): references are the
# same run at a 100x tighter tolerance and solve_ivp (DOP853, rtol 1e-12) written below.
#
# Error: rk54 (order 5) drifts by tol^(4/5) per second (4e-7 at tol 1e-8, 1e-8 at 1e-10):
# B(t) = FLOOR + tol^(4/5) t; events by B, normal velocities by |x''| B, states by
# max|x'| B and max|x''| B; the tight run's own budget is added to the tolerance.
CI_M, CI_KX, CI_KY, CI_R, CI_KC, CI_C = 1.0, 100.0, 225.0, 0.05, 1e4, 10.0
CI_VX, CI_VY, CI_END, CI_TOL = 0.8, 0.6, 0.5, 1e-8

CIRCLE = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX", "DY"]
[[discrete]]
nodes = ["P"]
mass = {CI_M}
stiffness = [{CI_KX}, {CI_KY}, 0.0]
[[initial]]
nodes = ["P"]
velocity = {{ DX = {CI_VX}, DY = {CI_VY} }}
[[link]]
name = "hole"
kind = "shock"
nodes = ["P"]
obstacle = "circle"
axis = [0.0, 0.0, 1.0]
gap = {CI_R}
stiffness = {CI_KC}
damping = {CI_C}
release = "force"
"""


def _circle_contact(y):
    """Penetration p, its rate p' and the radial unit vector at y = (x, y, vx, vy)."""
    r = np.hypot(y[0], y[1])
    n = y[:2] / r
    return r - CI_R, n @ y[2:], n


def _circle_rhs(closed):
    k = np.array([CI_KX, CI_KY])

    def rhs(t, y):
        a = -k * y[:2] / CI_M
        if closed:
            p, pd, n = _circle_contact(y)
            a = a - (CI_KC * p + CI_C * pd) * n / CI_M
        return np.concatenate([y[2:], a])
    return rhs


@lru_cache(maxsize=None)
def circle_solve_ivp():
    """solve_ivp of the mass in the hole, restarted at every contact entry (|r| - R rising
    through 0) and exit (kc p + c p' falling through 0): events [(t, kind, p')] and the
    dense solution of each phase."""
    def entry(t, y):
        return np.hypot(y[0], y[1]) - CI_R

    def exit_(t, y):
        p, pd, _ = _circle_contact(y)
        return CI_KC * p + CI_C * pd
    entry.terminal, entry.direction = True, 1
    exit_.terminal, exit_.direction = True, -1
    t, y, closed = 0.0, np.array([0.0, 0.0, CI_VX, CI_VY]), False
    events, phases = [], []
    while t < CI_END:
        sol = solve_ivp(_circle_rhs(closed), (t, CI_END), y, method="DOP853", rtol=1e-12,
                        atol=1e-15, events=exit_ if closed else entry, dense_output=True)
        phases.append((t, sol.sol))
        if sol.status != 1:
            break
        t, y = float(sol.t_events[0][0]), sol.y_events[0][0]
        events.append((t, "separation" if closed else "impact", _circle_contact(y)[1]))
        closed = not closed
    starts = np.array([s for s, _ in phases])

    def state(times):
        index = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(phases) - 1)
        return np.array([phases[i][1](s) for i, s in zip(index, times)])
    return events, state


def test_circle_modal_rk54_against_tight_run_and_solve_ivp(study):
    """Entries, exits, normal velocities and both components at the archived instants against
    the run at tolerance 1e-10 and against solve_ivp."""
    runs = {}
    for name, tol in (("run", CI_TOL), ("tight", CI_TOL / 100)):
        keys = f"tolerance = {tol!r}\nstep = 1e-3"
        runs[name] = study(CIRCLE + modes_block(2)
                           + transient_block("modal", "rk54", CI_END, ["hole"], keys), name)
    dofs = [("P", "DX"), ("P", "DY")]
    t, x, v = fields(runs["run"], dofs)
    t_tight, x_tight, v_tight = fields(runs["tight"], dofs)
    same_instants(t, t_tight)
    ivp_events, ivp_state = circle_solve_ivp()
    y_ivp = ivp_state(t)
    assert len(ivp_events) >= 6          # three contacts at least, at different angles
    found = shock_events(runs["run"], "hole")
    tight = shock_events(runs["tight"], "hole")
    kinds = [k for _, k, _ in ivp_events]
    assert [k for _, k, _ in found] == kinds, found
    assert [k for _, k, _ in tight] == kinds, tight

    def budget(tol, times):
        return FLOOR + adaptive_drift(5, tol) * np.asarray(times, float)

    v_max = float(np.max(np.linalg.norm(y_ivp[:, 2:], axis=1)))
    x_max = float(np.max(np.linalg.norm(y_ivp[:, :2], axis=1)))
    a_max = (CI_KY * x_max + CI_KC * (x_max - CI_R) + CI_C * v_max) / CI_M
    references = (("tight run", tight, x_tight, v_tight, budget(CI_TOL / 100, t)),
                  ("solve_ivp", ivp_events, y_ivp[:, :2], y_ivp[:, 2:], 1e-11 + 0 * t))
    for label, events, x_ref, v_ref, b_ref in references:
        for (time, kind, speed), (time_ref, _, speed_ref) in zip(found, events):
            b = SAFETY * budget(CI_TOL, time_ref) + np.interp(time_ref, t, b_ref)
            report(f"{label}: {kind} at {time_ref:.6f} s", abs(time - time_ref), b)
            # |p''| <= the springs, the damper at an entry, and the centripetal |v|^2 / R
            a_event = (CI_KY * x_max + CI_C * abs(speed_ref)) / CI_M + v_max ** 2 / CI_R
            report(f"{label}: {kind} at {time_ref:.6f} s, normal velocity",
                   abs(speed - speed_ref), a_event * b + TABLE_DIGITS)
        b = SAFETY * budget(CI_TOL, t) + b_ref
        report(f"{label}: displacement", np.abs(x - x_ref).max(axis=1), v_max * b)
        report(f"{label}: velocity", np.abs(v - v_ref).max(axis=1), a_max * b)


# ------------------------------------------------------------------------------------------
# 1d. A rigid impact, physical Newmark (events "locate"): masses of 1 and 2 kg on ground
# springs of 100 and 800 N/m (10 and 20 rad/s), 2 cm apart, thrown towards each other at 1 and
# -0.5 m/s, restitution 0.8: three impacts in 0.8 s.
#
# Error: trapezoidal Newmark keeps the amplitude of an oscillator and drifts by (w h)^2 / 12 of
# the time spent; with the faster body: B(t) = FLOOR + (w2 h)^2 / 12 t (h = 5e-4 s: 8.3e-6 s
# per second). Impact times are off by B; the gap rate before an impact by |r''|max B
# (r'' = a2 - a1, |a_i| <= w_i^2 max|x_i|), the rate after by e times that (Newton's law is
# applied exactly); the ratio of the two is e to round-off. The states are off by max|x'| B,
# plus, after each impact, the jump of the velocities times that impact's time error (the
# bodies fly apart that much earlier or later); velocities by max|x''| B plus w2 times the
# latter (away from the impacts, where the velocity jumps).
IM_M1, IM_K1, IM_M2, IM_K2 = 1.0, 100.0, 2.0, 800.0
IM_V1, IM_V2, IM_GAP, IM_E, IM_END, IM_STEP = 1.0, -0.5, 0.02, 0.8, 0.8, 5e-4

IMPACT_SPRINGS = f"""
[mesh.nodes]
M1 = [0.0, 0.0, 0.0]
M2 = [0.1, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["M1"]
mass = {IM_M1}
stiffness = {IM_K1}
[[discrete]]
nodes = ["M2"]
mass = {IM_M2}
stiffness = {IM_K2}
[[initial]]
nodes = ["M1"]
velocity = {{ DX = {IM_V1} }}
[[initial]]
nodes = ["M2"]
velocity = {{ DX = {IM_V2} }}
[[link]]
name = "pair"
kind = "impact"
nodes = ["M1", "M2"]
component = "DX"
gap = {IM_GAP}
restitution = {IM_E}
"""


def impact_rows(analysis):
    return [(float(r["time"]), str(r["kind"]), float(r["velocity_before"]),
             float(r["velocity_after"])) for r in analysis.events if r["link"] == "pair"]


def test_impact_physical_newmark_against_exact(study):
    """Impact times, gap rates before and after (velocities after), restitution and the states
    against exact (the closed form if exact is not available yet)."""
    keys = f"step = {IM_STEP}\narchive = {{ every = 2 }}"
    run = study(IMPACT_SPRINGS + transient_block("physical", "newmark", IM_END, ["pair"],
                                                 keys), "run")
    dofs = [("M1", "DX"), ("M2", "DX")]
    t, x, v = fields(run, dofs)
    exact = if_available(study, IMPACT_SPRINGS + transient_block(
        "physical", "exact", IM_END, ["pair"], f"step = {2 * IM_STEP}"), "exact")
    if exact is not None:
        expected = impact_rows(exact)
        t_ref, x_ref, v_ref = fields(exact, dofs)
        same_instants(t, t_ref)
    else:
        closed = cf.impact_oscillators(IM_M1, IM_K1, IM_M2, IM_K2, IM_V1, IM_V2, IM_GAP,
                                       IM_E, IM_END)
        expected = [(ti, "impact", b, a) for ti, b, a in
                    zip(*(closed.values[k] for k in ("impact_times", "gap_rate_before",
                                                     "gap_rate_after")))]
        x_ref, v_ref = closed.state(t)
    found = impact_rows(run)
    assert [k for _, k, _, _ in found] == [k for _, k, _, _ in expected] == ["impact"] * 3

    w = np.sqrt([IM_K1 / IM_M1, IM_K2 / IM_M2])
    drift = (w.max() * IM_STEP) ** 2 / 12.0

    def budget(times):
        return FLOOR + drift * np.asarray(times, float)

    r_acc = float(w @ (w * np.max(np.abs(x_ref), axis=0)))   # |r''| <= w1^2 |x1| + w2^2 |x2|
    for time, kind, before, after in found:
        assert abs(-after / before - IM_E) <= 1e-12, (time, before, after)
    for (time, _, before, after), (time_ref, _, before_ref, after_ref) in zip(found, expected):
        assert abs(-after_ref / before_ref - IM_E) <= 1e-12
        b = SAFETY * budget(time_ref)
        report(f"impact at {time_ref:.6f} s: time", abs(time - time_ref), b)
        report(f"impact at {time_ref:.6f} s: gap rate before", abs(before - before_ref),
               r_acc * b)
        report(f"impact at {time_ref:.6f} s: gap rate after", abs(after - after_ref),
               IM_E * r_acc * b)

    # the states: a shift B, and after each impact its jump times its time error
    v_max = float(np.max(np.abs(v_ref)))
    a_max = float(np.max(w * w * np.max(np.abs(x_ref), axis=0)))
    jumps = np.zeros_like(t)
    near = np.zeros(t.shape, bool)
    for time_ref, _, before_ref, after_ref in expected:
        b = SAFETY * budget(time_ref)
        jumps += np.where(t >= time_ref, abs(after_ref - before_ref) * b, 0.0)
        near |= np.abs(t - time_ref) <= b + 1e-12
    b = SAFETY * budget(t)
    report("displacement", np.abs(x - x_ref).max(axis=1), v_max * b + jumps)
    report("velocity (away from the impacts)", np.abs(v - v_ref).max(axis=1)[~near],
           (a_max * b + w.max() * jumps)[~near])


# ------------------------------------------------------------------------------------------
# 2a. A constant imposed displacement of the obstacle's node. Two nodes on X: the mass P and
# the obstacle node O 0.1 m on its -X side; the link acts on d = u(P) - u(O) with its normal
# from P to O (-X). O imposed at DX = 0.02 (a [[constraint]] without function) moves the obstacle
# 0.02 towards P:
#   "ground": P on a spring to the ground, gap 0.05  ==  O fixed, gap 0.03: same motion of P;
#   "coupled": P on a spring to O, gap 0.05, P starting from 0.02  ==  O fixed, P from 0: the
#   same motion shifted by 0.02 (the offset enters as the imposed-motion load of the spring).
# The pairs do the same arithmetic on P's coordinates up to the rounding of the gap (one ulp
# of 0.05) and of the shift, so they agree to round-off: the event locator's root finding
# stops within some tens of ulps of t (1e-15 s), and ulp-level differences are carried over
# up to 1e4 steps. Tolerance: event times 1e-12 s, displacements and penetrations
# max|x'| 1e-12, velocities max|x''| 1e-12, forces kc and c times those (a shift of the
# obstacle mishandled by 1e-9 m would show). Adaptive schemes choose their steps from the
# scale of the response, which the shift of "coupled" changes: that variant is run with the
# fixed-step schemes and exact only.
OFF_SHIFT, OFF_GAP, OFF_V0, OFF_END = 0.02, 0.05, -1.0, 0.6
OFF_K0, OFF_KC, OFF_C = 100.0, 1e4, 20.0
ROUND_T = 1e-12
OFF_V_MAX = abs(OFF_V0)
OFF_A_MAX = OFF_KC * (abs(OFF_V0) / np.sqrt(OFF_K0) - (OFF_GAP - OFF_SHIFT)) \
    + OFF_K0 * abs(OFF_V0) / np.sqrt(OFF_K0) + OFF_C * abs(OFF_V0)

OFFSET = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
O = [-0.1, 0.0, 0.0]
[mesh.cells]
SPRING = {{ type = "SEG2", nodes = ["O", "P"] }}
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = 1.0
[[discrete]]
{spring}
stiffness = {k0}
[[constraint]]
nodes = ["O"]
DX = {offset!r}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {x0!r} }}
velocity = {{ DX = {v0} }}
[[link]]
name = "stop"
kind = "shock"
nodes = ["P", "O"]
normal = [-1.0, 0.0, 0.0]
gap = {gap!r}
stiffness = {kc}
damping = {c}
release = "force"
"""

#: accuracy keys of each scheme (the runs of a pair share them)
SCHEME_KEYS = {
    "newmark": "step = 2e-4", "hht": "step = 2e-4", "central_difference": "step = 2e-4",
    "rk4": "step = 2e-4", "exact": "step = 1e-3",
    "euler": "tolerance = 1e-3\nmax_step = 2e-4", "adaptive2": "tolerance = 1e-6\nstep = 1e-3",
    "devogelaere": "tolerance = 1e-8\nstep = 1e-3", "rk32": "tolerance = 1e-7\nstep = 1e-3",
    "rk54": "tolerance = 1e-8\nstep = 1e-3",
}


def offset_cells():
    cells = []
    for (basis, scheme), row in catalog.SCHEMES.items():
        if not row.offers("shock.plane"):
            continue
        cells.append(pytest.param(basis, scheme, "ground", id=f"{basis}-{scheme}-ground"))
        if not row.adaptive:
            cells.append(pytest.param(basis, scheme, "coupled", id=f"{basis}-{scheme}-coupled"))
    return cells


@pytest.mark.parametrize("basis,scheme,variant", offset_cells())
def test_constant_imposed_offset_is_a_shifted_system(study, basis, scheme, variant):
    """Same events, same motion of P (shifted in "coupled"), same penetration and force."""
    spring = 'nodes = ["P"]' if variant == "ground" else 'cells = ["SPRING"]'
    moved = dict(offset=OFF_SHIFT, gap=OFF_GAP,
                 x0=OFF_SHIFT if variant == "coupled" else 0.0)
    fixed = dict(offset=0.0, gap=OFF_GAP - OFF_SHIFT if variant == "ground" else OFF_GAP,
                 x0=0.0)
    shift = OFF_SHIFT if variant == "coupled" else 0.0
    runs = {}
    for name, values in (("moved", moved), ("fixed", fixed)):
        text = OFFSET.format(spring=spring, k0=OFF_K0, v0=OFF_V0, kc=OFF_KC, c=OFF_C,
                             **values)
        modes = modes_block(1) if basis == "modal" else ""
        runs[name] = study(text + modes + transient_block(
            basis, scheme, OFF_END, ["stop"], SCHEME_KEYS[scheme]), name)
    moved_run, fixed_run = runs["moved"], runs["fixed"]
    t, x, v = fields(moved_run, [("P", "DX"), ("O", "DX")])
    t_fixed, x_fixed, v_fixed = fields(fixed_run, [("P", "DX"), ("O", "DX")])
    same_instants(t, t_fixed)
    report("imposed displacement of O", np.abs(x[:, 1] - OFF_SHIFT), 1e-15)
    report("O at rest", np.abs(v[:, 1]), 1e-15)

    found, expected = shock_events(moved_run, "stop"), shock_events(fixed_run, "stop")
    assert [k for _, k, _ in found] == [k for _, k, _ in expected], (found, expected)
    assert [k for _, k, _ in expected] == ["impact", "separation"] * 2, expected
    report("event times", [abs(a[0] - b[0]) for a, b in zip(found, expected)], ROUND_T)
    x_tol, v_tol = OFF_V_MAX * ROUND_T, OFF_A_MAX * ROUND_T
    report("displacement of P (shifted)", np.abs(x[:, 0] - shift - x_fixed[:, 0]), x_tol)
    report("velocity of P", np.abs(v[:, 0] - v_fixed[:, 0]), v_tol)
    moved_link, fixed_link = moved_run.link("stop"), fixed_run.link("stop")
    report("penetration", np.abs(moved_link["penetration"] - fixed_link["penetration"]), x_tol)
    report("normal force", np.abs(moved_link["normal_force"] - fixed_link["normal_force"]),
           OFF_KC * x_tol + OFF_C * v_tol)
    assert np.max(fixed_link["normal_force"]) > 10.0        # the contacts push


# ------------------------------------------------------------------------------------------
# 2b, 2c. A support moving as a sine: the node S is imposed at DX = 0.04 sin(15 t) (a
# [[constraint]] with a function); the mass P (1 kg) hangs on it by a spring of 100 N/m and a
# damper of 0.4 N.s/m, and a penalty stop (1e4 N/m, 20 N.s/m, release "force") keeps
# u(P) - u(S) >= -0.01 (link from P to S, normal -X). The one-dof equation, with the gap from the
# total motion (s = 0.04 sin(15 t), p = s - x - 0.01):
#     m x'' + c (x' - s') + k (x - s) = (kc p + cc p') [in contact]
# three contacts in 1 s, each faster than the last. On a modal basis (one mode, S fixed) the
# support's motion enters as the imposed-motion loads k s + c s' and through the link's gap.
SU_M, SU_K, SU_C, SU_KC, SU_CC, SU_GAP = 1.0, 100.0, 0.4, 1e4, 20.0, 0.01
SU_A, SU_W, SU_END = 0.04, 15.0, 1.0

SINE_SUPPORT = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
S = [-0.1, 0.0, 0.0]
[mesh.cells]
HANGER = {{ type = "SEG2", nodes = ["S", "P"] }}
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {SU_M}
[[discrete]]
cells = ["HANGER"]
stiffness = {SU_K}
damping = {SU_C}
[functions.shake]
expression = "sin({SU_W}*t)"
[[constraint]]
nodes = ["S"]
DX = {SU_A}
function = "shake"
[[link]]
name = "stop"
kind = "shock"
nodes = ["P", "S"]
normal = [-1.0, 0.0, 0.0]
gap = {SU_GAP}
stiffness = {SU_KC}
damping = {SU_CC}
release = "force"
"""


def support(t):
    """s, s' of the support (m, m/s)."""
    return SU_A * np.sin(SU_W * t), SU_A * SU_W * np.cos(SU_W * t)


def _support_rhs(closed):
    """y = (x, x', W, D): W the external work (the imposed-motion loads' power (k s + c s') x'
    and the support's power through the link F s', F the link's push on P), D the energy the
    dampers dissipate (c x'^2 of the reduced system and cc p'^2 in contact)."""
    def rhs(t, y):
        x, v = y[0], y[1]
        s, sd = support(t)
        p, pd = s - x - SU_GAP, sd - v
        force = SU_KC * p + SU_CC * pd if closed else 0.0
        a = (-SU_K * (x - s) - SU_C * (v - sd) + force) / SU_M
        work = (SU_K * s + SU_C * sd) * v + force * sd
        dissipation = SU_C * v * v + (SU_CC * pd * pd if closed else 0.0)
        return [v, a, work, dissipation]
    return rhs


@lru_cache(maxsize=None)
def support_solve_ivp():
    """solve_ivp (DOP853, rtol 1e-11) restarted at each contact entry (p rising through 0)
    and exit (kc p + cc p' falling through 0; the spring energy still held then, kc p^2 / 2,
    is dissipated, as the link law does): events [(t, kind, p')] and state(times) ->
    (k, 4) rows (x, x', W, D)."""
    def entry(t, y):
        return support(t)[0] - y[0] - SU_GAP

    def exit_(t, y):
        s, sd = support(t)
        return SU_KC * (s - y[0] - SU_GAP) + SU_CC * (sd - y[1])
    entry.terminal, entry.direction = True, 1
    exit_.terminal, exit_.direction = True, -1
    t, y, closed = 0.0, np.zeros(4), False
    events, phases = [], []
    while t < SU_END:
        sol = solve_ivp(_support_rhs(closed), (t, SU_END), y, method="DOP853", rtol=1e-11,
                        atol=1e-14, events=exit_ if closed else entry, dense_output=True)
        phases.append((t, sol.sol))
        if sol.status != 1:
            break
        t, y = float(sol.t_events[0][0]), sol.y_events[0][0].copy()
        s, sd = support(t)
        if closed:
            y[3] += 0.5 * SU_KC * max(s - y[0] - SU_GAP, 0.0) ** 2
        events.append((t, "separation" if closed else "impact", sd - y[1]))
        closed = not closed
    starts = np.array([s for s, _ in phases])

    def state(times):
        index = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(phases) - 1)
        return np.array([phases[i][1](s) for i, s in zip(index, times)])
    return events, state


#: the sine-support runs: newmark at a small step, rk54 on a modal basis (archived on a 1 ms
#: grid from its dense output, and at every accepted step), and exact. Error budgets B(t):
#: newmark drifts by (w_c h)^2 / 12 with the contact's w_c = sqrt((k + kc) / m) = 100.5 rad/s
#: (h = 1e-5 s: 8.4e-8 s per second; the sine at 15 rad/s is integrated to the same order);
#: rk54 by tol^(4/5) = 4e-7 per second; exact not at all.
SU_W_CONTACT = np.sqrt((SU_K + SU_KC) / SU_M)
SUPPORT_RUNS = {
    "newmark": ("physical", "newmark", "step = 1e-5\narchive = { every = 100 }",
                (SU_W_CONTACT * 1e-5) ** 2 / 12.0),
    "rk54": ("modal", "rk54", "tolerance = 1e-8\nstep = 1e-3", adaptive_drift(5, 1e-8)),
    "rk54-accepted-steps": ("modal", "rk54", "tolerance = 1e-8", adaptive_drift(5, 1e-8)),
    "exact": ("physical", "exact", "step = 1e-3", 0.0),
}


@pytest.fixture(scope="module")
def support_runs(tmp_path_factory):
    """name -> the analysis "run" of each SUPPORT_RUNS entry, or the NotAvailableError that
    refused it."""
    directory = tmp_path_factory.mktemp("sine_support")
    opened, runs = [], {}
    for name, (basis, scheme, keys, _) in SUPPORT_RUNS.items():
        modes = modes_block(1) if basis == "modal" else ""
        text = SINE_SUPPORT + modes + transient_block(basis, scheme, SU_END, ["stop"], keys)
        try:
            results = _run(directory, text, name)
        except NotAvailableError as exc:
            runs[name] = exc
            continue
        opened.append(results)
        runs[name] = results.analysis("run")
    yield runs
    for results in opened:
        results.close()


def support_run(support_runs, name):
    found = support_runs[name]
    if isinstance(found, NotAvailableError):
        raise found
    return found


@pytest.mark.parametrize("name", list(SUPPORT_RUNS))
def test_sine_support_against_solve_ivp(support_runs, name):
    """Contact entries and exits, the normal velocities there, and the displacement and
    velocity of P against solve_ivp of the one-dof equation."""
    run = support_run(support_runs, name)
    drift = SUPPORT_RUNS[name][3]
    events, state = support_solve_ivp()
    found = shock_events(run, "stop")
    assert [k for _, k, _ in found] == [k for _, k, _ in events], (found, events)
    assert [k for _, k, _ in events] == ["impact", "separation"] * 3

    def budget(times):
        return FLOOR + drift * np.asarray(times, float)

    t, x, v = fields(run, [("P", "DX")])
    y = state(t)
    x_max, v_max = float(np.max(np.abs(y[:, 0]))), float(np.max(np.abs(y[:, 1])))
    s_max, sd_max = SU_A, SU_A * SU_W
    p_max = s_max + x_max - SU_GAP
    a_max = (SU_K * (x_max + s_max) + SU_C * (v_max + sd_max) + SU_KC * p_max
             + SU_CC * (v_max + sd_max)) / SU_M
    for (time, kind, speed), (time_ref, _, speed_ref) in zip(found, events):
        b = SAFETY * budget(time_ref)
        report(f"{kind} at {time_ref:.6f} s: time", abs(time - time_ref), b)
        # the contact force is 0 at both ends: |p''| <= |s''| + |x''| without it
        a_event = SU_A * SU_W ** 2 + (SU_K * (x_max + s_max) + SU_C * (v_max + sd_max)) / SU_M
        report(f"{kind} at {time_ref:.6f} s: normal velocity", abs(speed - speed_ref),
               a_event * b + TABLE_DIGITS)
    b = SAFETY * budget(t)
    report("displacement", np.abs(x[:, 0] - y[:, 0]), v_max * b)
    report("velocity", np.abs(v[:, 0] - y[:, 1]), a_max * b)


@pytest.mark.parametrize("name", list(SUPPORT_RUNS))
def test_sine_support_energy_balance(support_runs, name):
    """The energy balance closes with the support's work through the link counted as external
    work (postpro.energy.energy_balance_error).

    Newmark's average-acceleration step satisfies the energy identity of the trapezoidal rule
    exactly (linear phases, events landed on), and exact integrates every term exactly:
    round-off, 1e-10 (1e5 steps of sums of about 10 J at 1e-16). rk54 computes its states to
    its budget, tol^(4/5) per second relative (4e-7), and integrates the work of loads and
    dampers with its own stages: the balance to that budget. Without the support's work
    through the link the balance would be off by that work's share of the external work,
    checked to be 1000 times the tolerance at least.
    """
    run = support_run(support_runs, name)
    energy = run.energy()
    terms = [energy[k] for k in ("kinetic", "potential", "link_energy", "dissipated",
                                 "external_work")]
    balance = energy_balance_error(*terms)
    tolerance = 1e-10 if name in ("newmark", "exact") else \
        SAFETY * SUPPORT_RUNS[name][3] * SU_END
    through_link = _support_work_through_link()
    share = abs(through_link) / np.sqrt(np.mean(energy["external_work"] ** 2))
    print(f"  support's work through the link (solve_ivp): {through_link:.6f} J, "
          f"{share:.2f} of the rms external work")
    assert share > 1e3 * tolerance
    report("energy balance error", balance, tolerance)


@pytest.mark.parametrize("name", list(SUPPORT_RUNS))
def test_sine_support_external_work(support_runs, name):
    """The external work (imposed-motion loads and the support's work through the link) and
    the dissipated energy against their integrals in solve_ivp.

    W is the change of K + V + L + D, so its error follows from the run's own state errors,
    measured at the archived instants against the same solve_ivp (dx, dv): m |v| dv +
    (k |x| + kc p) dx for the stored terms, plus the dampers' 2 (c + cc) |v| dv over the run
    for D; D's own error is bounded the same way.
    """
    run = support_run(support_runs, name)
    energy = run.energy()
    _, state = support_solve_ivp()
    y = state(energy["time"])
    _, x, v = fields(run, [("P", "DX")])
    dx = float(np.max(np.abs(x[:, 0] - y[:, 0])))
    dv = float(np.max(np.abs(v[:, 0] - y[:, 1])))
    x_max, v_max = float(np.max(np.abs(y[:, 0]))), float(np.max(np.abs(y[:, 1])))
    p_max = SU_A + x_max - SU_GAP
    tolerance = SAFETY * (SU_M * v_max * dv + (SU_K * x_max + SU_KC * p_max) * dx
                          + 2 * (SU_C + SU_CC) * (v_max + SU_A * SU_W) * dv * SU_END) + 1e-9
    print(f"  state errors: displacement {dx:.3e} m, velocity {dv:.3e} m/s; final W "
          f"{energy['external_work'][-1]:.9f} J (solve_ivp {y[-1, 2]:.9f}), D "
          f"{energy['dissipated'][-1]:.9f} J (solve_ivp {y[-1, 3]:.9f})")
    report("external work vs solve_ivp", np.abs(energy["external_work"] - y[:, 2]), tolerance)
    report("dissipated vs solve_ivp", np.abs(energy["dissipated"] - y[:, 3]), tolerance)


@lru_cache(maxsize=None)
def _support_work_through_link():
    """The work F s' of the support on the mass through the link over the run (J), F the
    link's push: quad over solve_ivp's contact phases."""
    events, state = support_solve_ivp()
    total = 0.0
    for (t0, kind, _), (t1, _, _) in zip(events[::2], events[1::2]):
        assert kind == "impact"

        def power(t):
            x, v = state(np.array([t]))[0, :2]
            s, sd = support(t)
            return (SU_KC * (s - x - SU_GAP) + SU_CC * (sd - v)) * sd
        total += quad(power, t0, t1, epsabs=1e-12, limit=200)[0]
    return total
