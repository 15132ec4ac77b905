"""The link matrix: every (basis, scheme) x link feature that the scheme catalog marks True is
run on a small system whose answer is known in closed form (tests/closed_forms.py), and
compared with it within a tolerance derived from the scheme's order and step (or its
tolerance). No cell is checked by agreement with another fem scheme.

Cells the catalog refuses (with a physical reason) are not parametrized: every cell offered
runs.
"""

from __future__ import annotations

import doctest
import re
import textwrap
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.optimize import brentq

import closed_forms as cf
import postpro
from postpro.jobs.shocks import link_shocks
from fem import catalog
from fem.runner import run_study

# ------------------------------------------------------------------------------------------
# Tolerances, one row per (basis, scheme), and how they are derived.
#
# Every phase of these scenarios is linear: an oscillator of circular frequency w, or a
# polynomial motion (free masses, slides: w = 0). A fixed-step scheme of order p integrates
# an oscillator phase with
#   * a relative period error c (w h)^p, which shifts every instant of the phase by that
#     fraction of the time spent in it ("drift", it builds up);
#   * a relative amplitude error a (w h)^p set where the phase starts, which moves the
#     crossings of the phase by a (w h)^p / (w cos theta) <= 1.2 a (w h)^p / w (the crossings
#     here are met at theta <= 30 degrees from the equilibrium) ("offset", per phase).
# The constants come from each scheme's amplification matrix on x'' + w^2 x = 0: trapezoidal
# Newmark c = 1/12, a = 0 (energy conserving); HHT (alpha = -0.1) c = 0.105, a = 0.04 (its
# gamma = 0.6 velocity update); central differences c = 1/24, a = 1/8 (the start
# u1 = u0 + h v0 + h^2 a0 / 2); classical RK4 c = 1/120, a = 0 (amplitude error of order 5
# per radian). Shifts of successive phases add: the time budget
#
#     B(t) = floor + sum over the phases begun before t of drift(w) (time spent) + offset(w)
#
# bounds the error of an event time; a state at t is off by at most max|x'| B(t) (position)
# and max|x''| B(t) (velocity), the velocity at an event by |x''| there times B(t) plus |v|
# times the amplitude errors. ``floor`` is the round-off of the root finding that locates
# an event. Adaptive schemes hold their error near their tolerance: adaptive2 keeps the
# period error (w h)^2 / 24 below tol (drift tol; velocity Verlet's start offset
# (w h)^2 / 8 = 3 tol); the embedded pairs of order p keep the local error of steps of about
# tol^(1/p) radians below tol (drift tol^((p - 1) / p)); first-order euler keeps the velocity
# lag w h / 2 below tol, a time lag h / 2 = tol / w per phase (max_step / 2 for a polynomial
# motion: the floor) and a period error tol^2 / 6. The exact scheme is exact between events
# located to round-off: floor only. Each tolerance is SAFETY times its estimate; events =
# "step" adds one step (an event is dated at the end of the step where it is detected) and
# the contact impulse missed over it (see check_shock_run).
# Friction adds the regularisation of its stick spring (kt, ct), stated with its scenario.
# ------------------------------------------------------------------------------------------
SAFETY = 3.0
STEP = 2e-4          # fixed-step schemes (s): w h = 0.02 in contact, 150 steps per contact
GRID = 1e-3          # the output grid of the adaptive schemes (s); exact: its default grid
_CROSSING = 1.2      # 1 / cos(30 degrees), rounded up


@dataclass(frozen=True)
class Accuracy:
    """How a row is run and its error model (see above).

    keys : the analysis keys that set its accuracy (TOML lines); order : p, as in the
    catalog; step : fixed step (s) or None; period, amplitude : c and a of a fixed-step
    scheme; tolerance : of an adaptive scheme; floor : time error that does not build up (s)
    """
    keys: str
    order: int
    step: float | None = None
    period: float = 0.0
    amplitude: float = 0.0
    tolerance: float | None = None
    floor: float = 1e-10

    def drift(self, w: float) -> float:
        """Relative time error per second spent in a phase of circular frequency w (rad/s)."""
        if self.step is not None:
            return self.period * (w * self.step) ** self.order
        if self.tolerance is None or w == 0.0:
            return 0.0
        tol = self.tolerance
        return {1: tol * tol / 6.0, 2: tol}.get(self.order,
                                               tol ** ((self.order - 1) / self.order))

    def amplitude_error(self, w: float) -> float:
        """Relative amplitude error set where a phase of circular frequency w starts."""
        if w == 0.0:
            return 0.0
        if self.step is not None:
            return self.amplitude * (w * self.step) ** self.order
        if self.tolerance is None:
            return 0.0
        return {1: self.tolerance, 2: 3.0 * self.tolerance}.get(self.order, 0.0)

    def offset(self, w: float) -> float:
        """The time error (s) of the crossings of a phase from its amplitude error."""
        return _CROSSING * self.amplitude_error(w) / w if w > 0.0 else 0.0


def _fixed(order, period, amplitude):
    return Accuracy(f"step = {STEP}", order, step=STEP, period=period, amplitude=amplitude)


def _adaptive(order, tolerance):
    return Accuracy(f"tolerance = {tolerance}\nstep = {GRID}", order, tolerance=tolerance)


#: euler without ``step`` (with one it would run at that fixed step), every accepted step
#: archived; max_step bounds the lag of its polynomial motions
_EULER_MAX_STEP = 2e-4


ACCURACY = {
    ("physical", "newmark"): _fixed(2, 1 / 12, 0.0),
    ("physical", "hht"): _fixed(2, 0.105, 0.04),
    ("physical", "central_difference"): _fixed(2, 1 / 24, 1 / 8),
    ("physical", "exact"): Accuracy("", 0),
    ("physical", "rk4"): _fixed(4, 1 / 120, 0.0),
    ("modal", "central_difference"): _fixed(2, 1 / 24, 1 / 8),
    ("modal", "euler"): Accuracy(f"tolerance = 1e-3\nmax_step = {_EULER_MAX_STEP}", 1,
                                 tolerance=1e-3, floor=_EULER_MAX_STEP / 2),
    ("modal", "adaptive2"): _adaptive(2, 1e-6),
    ("modal", "devogelaere"): _adaptive(4, 1e-8),
    ("modal", "rk32"): _adaptive(3, 1e-7),
    ("modal", "rk54"): _adaptive(5, 1e-8),
    ("modal", "newmark"): _fixed(2, 1 / 12, 0.0),
    ("modal", "exact"): Accuracy("", 0),
    ("modal", "rk4"): _fixed(4, 1 / 120, 0.0),
}


def test_accuracy_table_covers_the_catalog():
    """One accuracy row per catalog row, with the catalog's order of accuracy."""
    assert set(ACCURACY) == set(catalog.SCHEMES)
    for key, row in catalog.SCHEMES.items():
        assert ACCURACY[key].order == row.order, key
        assert (ACCURACY[key].step is not None) == row.needs_step, key


def test_closed_forms_against_solve_ivp():
    """The docstring examples of closed_forms: phases against solve_ivp at rtol 1e-12."""
    result = doctest.testmod(cf, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 20 and result.failed == 0


# ------------------------------------------------------------------------------------------
# studies

def analysis_blocks(basis, scheme, *, ndof, end, links, events="locate"):
    """A modes analysis of all ``ndof`` modes first on a modal basis (a complete basis),
    then the transient analysis "run" with the scheme's accuracy keys."""
    modal = ""
    if basis == "modal":
        modal = f'[[analysis]]\nname = "modes"\nkind = "modes"\ncount = {ndof}\n\n'
    names = ", ".join(f'"{name}"' for name in links)
    lines = ['name = "run"', 'kind = "transient"', f'basis = "{basis}"',
             f'scheme = "{scheme}"', f"end = {end}", f"links = [{names}]",
             f'events = "{events}"', ACCURACY[(basis, scheme)].keys]
    if basis == "modal":
        lines.insert(3, 'modes = "modes"')
    return modal + "[[analysis]]\n" + "\n".join(lines) + "\n"


def run(tmp_path, model, analyses, name="study"):
    """Write the study, run it, and open its results: the transient analysis "run"."""
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(model) + "\n" + analyses)
    out = tmp_path / f"{name}.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    results = postpro.open(out)
    return results, results.analysis("run")


@pytest.fixture
def study(tmp_path):
    """study(model, analyses) -> the transient analysis "run" (closed at teardown)."""
    opened = []

    def _run(model, analyses, name="study"):
        results, analysis = run(tmp_path, model, analyses, name)
        opened.append(results)
        return analysis
    yield _run
    for results in opened:
        results.close()


def cells(feature):
    """(basis, scheme) of every catalog row that offers ``feature``."""
    return [pytest.param(b, s, id=f"{b}-{s}") for (b, s), row in catalog.SCHEMES.items()
            if row.offers(feature)]


def fixed_step_cells(feature):
    """The rows of :func:`cells` that need a step."""
    return [pytest.param(b, s, id=f"{b}-{s}") for (b, s), row in catalog.SCHEMES.items()
            if row.offers(feature) and row.needs_step]


# ------------------------------------------------------------------------------------------
# comparison helpers

def budget(accuracy, phases, times):
    """B(t) of the module header (s) at ``times``: phases [(t0, t1, w)] cover the run."""
    times = np.atleast_1d(np.asarray(times, float))
    total = np.full(times.shape, accuracy.floor)
    for t0, t1, w in phases:
        total += accuracy.drift(w) * np.clip(times - t0, 0.0, t1 - t0)
        total += np.where(times >= t0, accuracy.offset(w), 0.0)
    return total


def amplitude_budget(accuracy, phases, times):
    """Sum of the relative amplitude errors of the phases begun at ``times``."""
    times = np.atleast_1d(np.asarray(times, float))
    return sum(np.where(times >= t0, accuracy.amplitude_error(w), 0.0) for t0, _, w in phases)


def shock_phases(ref, end):
    """[(t0, t1, w)]: free flights at W0, contacts at WC, from the closed form's events."""
    bounds = [0.0] + [e.time for e in ref.events if e.time < end] + [end]
    return [(a, b, WC if i % 2 else W0) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


_SPEED = re.compile(r"approach speed (\S+) m/s")
_SIDE = re.compile(r"side ([^,]+),")


def shock_events(analysis, link):
    """[(time, kind, side, normal velocity)] of one shock link from the events table."""
    out = []
    for row in analysis.events:
        if row["link"] != link:
            continue
        speed = _SPEED.search(row["detail"])
        side = _SIDE.search(row["detail"])
        out.append((float(row["time"]), str(row["kind"]), side.group(1) if side else "",
                    float(speed.group(1)) if speed else np.nan))
    return out


def fields(analysis, dofs):
    t, x = analysis.columns("displacement", dofs)
    _, v = analysis.columns("velocity", dofs)
    return t, x, v


def report(label, error, tolerance):
    """Assert error <= tolerance elementwise, printing the worst case (the figures of the
    cell: pytest -s shows them)."""
    error, tolerance = np.broadcast_arrays(np.atleast_1d(error), np.atleast_1d(tolerance))
    worst = int(np.argmax(error / tolerance))
    e, tol = float(error[worst]), float(tolerance[worst])
    print(f"  {label}: error {e:.3e}, tolerance {tol:.3e} (max error {error.max():.3e})")
    assert e <= tol, f"{label}: error {e:.3e} > tolerance {tol:.3e}"


def check_shock_run(analysis, ref, accuracy, *, link, dofs, end, damping=0.0,
                    step_events=False):
    """Events (kinds, sides, times, normal velocities) and states against the closed form.

    Located events: the budget B and the amplitude errors A of the module header; the
    normal velocity at an event is off by |x''| B + |v| A, with |x''| = (k0 gap + c |v|) / m
    at a crossing (p = 0). Events at the step ends (``step_events``) come up to one step
    late, and each switch misses (or adds) the contact force's impulse over that step,
    kc |v| h^2 / (2 m), a velocity error that moves the position by at most that over w0.
    """
    phases = shock_phases(ref, end)
    h = accuracy.step if step_events else 0.0
    expected = [e for e in ref.events if e.time < end - h - 1e-3]
    found = shock_events(analysis, link)
    assert [(k, s) for _, k, s, _ in found[:len(expected)]] == \
           [(e.kind, e.side) for e in expected], found
    assert len(found) <= len([e for e in ref.events if e.time < end])
    for (t, kind, _, speed), e in zip(found, expected):
        b = budget(accuracy, phases, e.time)
        report(f"{kind} at {e.time:.9f} s: time", abs(t - e.time), SAFETY * b + h)
        if step_events:
            assert t > e.time - SAFETY * b, f"{kind} at {t} s dated before {e.time} s"
        if not np.isnan(speed):
            v = abs(e.velocity)
            a = (K0 * GAP + damping * v) / M + KC * v * h / (2 * M)
            tol = SAFETY * (a * b + v * amplitude_budget(accuracy, phases, e.time)) + a * h
            # + the 9 significant digits of the events table
            report(f"{kind} at {e.time:.9f} s: normal velocity", abs(speed - e.velocity),
                   tol + 1e-9)
    if len(expected) > 1:                 # the first contact's duration: both ends' errors
        ends = budget(accuracy, phases, [expected[0].time, expected[1].time])
        report("contact duration", abs(found[1][0] - found[0][0]
                                       - ref.values["contact_duration"]),
               SAFETY * ends.sum() + 2 * h)
    t, x, v = fields(analysis, dofs)
    xr, vr = ref.state(t)
    b = SAFETY * budget(accuracy, phases, t)
    switches = np.searchsorted([e.time for e in ref.events], t)
    kicks = SAFETY * switches * KC * V0 * h * h / (2 * M)
    report("displacement", np.abs(x - xr).max(axis=1), V0 * b + kicks / W0)
    report("velocity", np.abs(v - vr).max(axis=1), ACCELERATION_BOUND * b + kicks)


# ------------------------------------------------------------------------------------------
# shock.plane, shock.two_planes, shock.circle: a 1 kg mass on a 100 N/m spring launched at
# 1 m/s towards penalty walls (1e4 N/m) 5 cm away; contacts last 0.030 s
M, K0, V0, GAP, KC = 1.0, 100.0, 1.0, 0.05, 1e4
W0, WC = np.sqrt(K0 / M), np.sqrt((K0 + KC) / M)
#: a bound of |x''|: kc times the largest penetration (below the free amplitude v0 / w0
#: minus the gap: no contact gives energy) plus k0 times that amplitude, over the mass;
#: |x'| <= V0 for the same reason
ACCELERATION_BOUND = (KC * (V0 / W0 - GAP) + K0 * V0 / W0) / M
#: plane cases: contact damping (N.s/m, damping ratio 0.1) and release
PLANE_CASES = {"undamped": (0.0, "gap", 0.55), "damped_gap": (20.0, "gap", 0.58),
               "damped_force": (20.0, "force", 0.12)}

ONE_DOF = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {m}
stiffness = {k0}
[[initial]]
nodes = ["P"]
velocity = {{ DX = {v0} }}
[[link]]
name = "{name}"
kind = "shock"
nodes = ["P"]
obstacle = "{obstacle}"
normal = [1.0, 0.0, 0.0]
gap = {gap}
stiffness = {kc}
damping = {c}
release = "{release}"
"""


@pytest.mark.parametrize("case", list(PLANE_CASES))
@pytest.mark.parametrize("basis,scheme", cells("shock.plane"))
def test_shock_plane(study, basis, scheme, case):
    """First contact, exit (contact duration), rebound velocity and second contact of the
    oscillator against a plane; damped cases with release "gap" and "force" (the latter to
    its first exit only)."""
    c, release, end = PLANE_CASES[case]
    ref = cf.plane(M, K0, V0, GAP, KC, c, release, end)
    model = ONE_DOF.format(m=M, k0=K0, v0=V0, name="stop", obstacle="plane", gap=GAP, kc=KC,
                           c=c, release=release)
    analysis = study(model, analysis_blocks(basis, scheme, ndof=1, end=end, links=["stop"]))
    check_shock_run(analysis, ref, ACCURACY[(basis, scheme)], link="stop", dofs=[("P", "DX")],
                    end=end, damping=c)


@pytest.mark.parametrize("basis,scheme", fixed_step_cells("shock.plane"))
def test_shock_plane_events_at_step_ends(study, basis, scheme):
    """events = "step": each event is dated at the end of the step where it is detected, so
    it comes within one step of the closed form (and the states within one step's travel)."""
    c, release, end = PLANE_CASES["undamped"]
    ref = cf.plane(M, K0, V0, GAP, KC, c, release, end)
    model = ONE_DOF.format(m=M, k0=K0, v0=V0, name="stop", obstacle="plane", gap=GAP, kc=KC,
                           c=c, release=release)
    analysis = study(model, analysis_blocks(basis, scheme, ndof=1, end=end, links=["stop"],
                                            events="step"))
    check_shock_run(analysis, ref, ACCURACY[(basis, scheme)], link="stop", dofs=[("P", "DX")],
                    end=end, step_events=True)


@pytest.mark.parametrize("basis,scheme", cells("shock.two_planes"))
def test_shock_two_planes(study, basis, scheme):
    """Contact on side +, exit, then the second contact on the other side across the gap."""
    end = 0.25
    ref = cf.two_planes(M, K0, V0, GAP, KC, end)
    model = ONE_DOF.format(m=M, k0=K0, v0=V0, name="walls", obstacle="two_planes", gap=GAP,
                           kc=KC, c=0.0, release="gap")
    analysis = study(model, analysis_blocks(basis, scheme, ndof=1, end=end, links=["walls"]))
    check_shock_run(analysis, ref, ACCURACY[(basis, scheme)], link="walls", dofs=[("P", "DX")],
                    end=end)


CIRCLE = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX", "DY"]
[[discrete]]
nodes = ["P"]
mass = {m}
stiffness = [{k0}, {k0}, 0.0]
[[initial]]
nodes = ["P"]
velocity = {{ DX = {vx!r}, DY = {vy!r} }}
[[link]]
name = "hole"
kind = "shock"
nodes = ["P"]
obstacle = "circle"
axis = [0.0, 0.0, 1.0]
gap = {gap}
stiffness = {kc}
release = "gap"
"""


@pytest.mark.parametrize("basis,scheme", cells("shock.circle"))
def test_shock_circle(study, basis, scheme):
    """Launched from the centre of a round hole at 30 degrees from X with isotropic springs:
    the motion stays radial (the two-planes answer along that direction), both components
    checked, the second contact across the hole."""
    end = 0.25
    ref = cf.circle(M, K0, V0, 30.0, GAP, KC, end)
    vx, vy = V0 * ref.values["direction"]
    model = CIRCLE.format(m=M, k0=K0, vx=float(vx), vy=float(vy), gap=GAP, kc=KC)
    analysis = study(model, analysis_blocks(basis, scheme, ndof=2, end=end, links=["hole"]))
    check_shock_run(analysis, ref, ACCURACY[(basis, scheme)], link="hole",
                    dofs=[("P", "DX"), ("P", "DY")], end=end)


# ------------------------------------------------------------------------------------------
# friction.coulomb, friction.unidirectional: a 1 kg mass pressed on a plane below it
# (normal -Z) by 10 N, resting in normal equilibrium (penetration N / kc, so that the normal
# force stays N). The rigid Coulomb law is regularised by the stick spring kt and damper ct
# (damping ratio 0.2, w_t h = 0.2): the mass stays within mu N / kt of its anchor (2e-6 m);
# once stuck it moves at most mu N / sqrt(kt m) (2e-3 m/s, decaying at ct / 2m = 200 /s);
# while stuck under a force growing at F' it creeps at F' / kt, and starts its slip with
# that velocity. A fixed-step scheme meets a stick-slip switch inside a step: the jump of the
# acceleration there costs at most that jump times the step in velocity ("transition").
# (With kt = 1e7, w_t h = 0.63, Newmark and HHT stop where the slide ends: "the contact
# state of the links does not settle within the step".)
N_FORCE, MU, KT, ZETA_T = 10.0, 0.21, 1e6, 0.2       # stops and slips off the step grid
CT = 2 * ZETA_T * np.sqrt(KT * M)
W_T = np.sqrt(KT / M)


def transition(accuracy):
    """The time (s) within which a scheme resolves a stick-slip switch: one fixed step; the
    adaptive schemes shrink their step there (their floor)."""
    return accuracy.step if accuracy.step is not None else accuracy.floor


def ramp_transition(accuracy, rate):
    """The time (s) within which a scheme finds the slip of a contact stuck under a load
    ramp of ``rate`` (N/s): ``transition``, and for an adaptive scheme the error its control
    allows on the displacement, tol times the solution's scale (the normal penetration
    N / kc), which the stick spring turns into a force error kt tol N / kc."""
    extra = KT * accuracy.tolerance * (N_FORCE / KC) / rate if accuracy.tolerance else 0.0
    return transition(accuracy) + extra
STICK_DEFLECTION = MU * N_FORCE / KT
STICK_SPEED = MU * N_FORCE / np.sqrt(KT * M)

FRICTION = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = [{components}]
[[discrete]]
nodes = ["P"]
mass = {m}
[[load]]
name = "press"
nodes = ["P"]
FZ = {fz}
{loads}
[[initial]]
nodes = ["P"]
displacement = {{ DZ = {z0!r} }}
velocity = {{ {velocity} }}
[[link]]
name = "floor"
kind = "shock"
nodes = ["P"]
normal = [0.0, 0.0, -1.0]
gap = 0.0
stiffness = {kc}
friction = {mu}
tangential_stiffness = {kt}
tangential_damping = {ct!r}
{keys}
"""


def friction_model(components, velocity="", loads="", keys="", mu=MU):
    return FRICTION.format(components=", ".join(f'"{c}"' for c in components), m=M,
                           fz=-N_FORCE, loads=loads, z0=-N_FORCE / KC, velocity=velocity,
                           kc=KC, mu=mu, kt=KT, ct=float(CT), keys=keys)


def link_events(analysis, link, kinds):
    return [(float(r["time"]), str(r["kind"])) for r in analysis.events
            if r["link"] == link and r["kind"] in kinds]


def stop_time(analysis, link, t, speed, v0):
    """The end of the slide: the link's first "stick" event if fem writes one, else the
    root of the straight line fitted to the sliding speed (above v0 / 5)."""
    stick = link_events(analysis, link, ("stick",))
    if stick:
        return stick[0][0]
    sliding = speed > 0.2 * v0
    sliding &= np.arange(len(t)) < np.argmin(sliding)   # the first sliding stretch only
    slope, intercept = np.polyfit(t[sliding], speed[sliding], 1)
    return -intercept / slope


def check_slide(analysis, ref, accuracy, *, dofs, direction, v0):
    """Friction slide to rest along ``direction`` against the rigid Coulomb closed form. Up
    to the stop the regularised law is the rigid one (the stick spring starts at the limit
    and carries mu N while sliding): the scheme's budget of a polynomial motion; after it,
    the stick spring's bounds (the budget stops with the motion)."""
    assert link_events(analysis, "floor", ("impact", "separation")) == []   # never lifts
    stop = ref.values["stop_time"]
    phases = [(0.0, stop, 0.0)]
    t, x, v = fields(analysis, dofs)
    xr, vr = ref.state(t)
    b = SAFETY * budget(accuracy, phases, np.minimum(t, stop))
    a = ref.values["deceleration"]
    stuck = t > stop
    # the stop inside a step: the deceleration a stops up to one transition late
    h = transition(accuracy)
    report("displacement", np.abs(x - xr).max(axis=1), 2 * STICK_DEFLECTION + v0 * b
           + a * h * h)
    report("velocity", np.abs(v - vr).max(axis=1), np.where(stuck, STICK_SPEED, 0.0) + a * b
           + 1e-12)
    speed = np.abs(v @ direction)
    found = stop_time(analysis, "floor", t, speed, v0)
    report("stop time", abs(found - stop), SAFETY * budget(accuracy, phases, stop))
    final = x[-1] @ direction - xr[-1] @ direction
    report("slide distance", abs(final), 2 * STICK_DEFLECTION + v0 * b[-1] + a * h * h)


@pytest.mark.parametrize("basis,scheme", cells("friction.coulomb"))
def test_friction_slide_to_rest(study, basis, scheme):
    """Thrown at 1 m/s along 30 degrees in the plane: straight deceleration mu N / m, stop
    at v0 m / (mu N) = 0.476 s after v0^2 m / (2 mu N) = 0.238 m, then stuck."""
    v0, angle, end = 1.0, 30.0, 0.6
    ref = cf.coulomb_slide(M, N_FORCE, MU, v0, angle, KC)
    d = np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle)), 0.0])
    velocity = f"DX = {float(v0 * d[0])!r}, DY = {float(v0 * d[1])!r}"
    model = friction_model(["DX", "DY", "DZ"], velocity)
    analysis = study(model, analysis_blocks(basis, scheme, ndof=3, end=end, links=["floor"]))
    check_slide(analysis, ref, ACCURACY[(basis, scheme)],
                dofs=[("P", "DX"), ("P", "DY"), ("P", "DZ")], direction=d, v0=v0)
    _, x, _ = fields(analysis, [("P", "DX"), ("P", "DY")])
    report("off the straight line", np.abs(x[:, 0] * d[1] - x[:, 1] * d[0]),
           2 * STICK_DEFLECTION)


@pytest.mark.parametrize("basis,scheme", cells("friction.coulomb"))
def test_friction_static_then_sliding(study, basis, scheme):
    """At rest, pulled along X by F = 9.7 t N: it sticks until F = mu_s N (mu_s = 0.3, at
    0.309 s), then slides with m a = F - mu N (mu = 0.21)."""
    mu_s, rate, end = 0.3, 9.7, 0.6
    ref = cf.static_friction_ramp(M, N_FORCE, mu_s, MU, rate, KC)
    slip = ref.values["slip_start"]
    loads = f'[functions.ramp]\ntable = [[0.0, 0.0], [1.0, {rate}]]\n' \
            f'[[load]]\nname = "pull"\nnodes = ["P"]\nFX = 1.0\nfunction = "ramp"\n'
    model = friction_model(["DX", "DZ"], loads=loads, keys=f"static_friction = {mu_s}")
    accuracy = ACCURACY[(basis, scheme)]
    analysis = study(model, analysis_blocks(basis, scheme, ndof=2, end=end, links=["floor"]))
    assert link_events(analysis, "floor", ("impact", "separation")) == []
    t, x, v = fields(analysis, [("P", "DX"), ("P", "DZ")])
    xr, vr = ref.state(t)
    # the stick spring holds mu_s N / kt when the slip starts; the velocity then leads by the
    # creep F' / kt and by the force drop from mu_s N to mu N (a_slip) times the transition
    # (plus the creep again: the ramp's start sets the stick spring oscillating that fast)
    a_slip = (mu_s - MU) * N_FORCE / M
    phases = [(slip, end, 0.0)]               # the stick phase has the spring's bounds
    b = SAFETY * budget(accuracy, phases, t)
    lead = rate / KT + a_slip * ramp_transition(accuracy, rate)
    v_max = float(np.max(np.abs(vr)))
    # (the stick spring's oscillation set by the ramp's start: rate / (kt w_t) at most)
    report("displacement", np.abs(x - xr).max(axis=1), mu_s * N_FORCE / KT
           + rate / (KT * W_T) + v_max * b + lead * np.maximum(t - slip, 0.0))
    a_max = (rate * end - MU * N_FORCE) / M
    report("velocity", np.abs(v - vr).max(axis=1), a_max * b + lead + rate / KT)
    # slip start: the "slip" event if written (within a transition), else where the speed
    # passes 1 cm/s (velocity error over a_slip), read by linear interpolation between
    # archived instants (v'' h^2 / 8 over a_slip)
    slipped = link_events(analysis, "floor", ("slip",))
    threshold = 0.01
    if slipped:
        found, expected, reading = slipped[0][0], slip, ramp_transition(accuracy, rate)
    else:
        i = int(np.flatnonzero(v[:, 0] > threshold)[0])
        found = np.interp(threshold, v[i - 1:i + 1, 0], t[i - 1:i + 1])
        expected = brentq(lambda s: ref.v([s])[0, 0] - threshold, slip, end)
        reading = (lead + rate / KT + rate / M * (t[i] - t[i - 1]) ** 2 / 8) / a_slip
    report("slip start", abs(found - expected),
           SAFETY * budget(accuracy, phases, slip)[0] + reading)


@pytest.mark.parametrize("basis,scheme", cells("friction.unidirectional"))
def test_friction_unidirectional(study, basis, scheme):
    """Friction along X only (friction_direction = [1, 0, 0]): thrown at (vx, vy) = (0.866,
    0.5) m/s, X stops at vx m / (mu N) = 0.412 s after vx^2 m / (2 mu N), Y keeps vy."""
    v0, angle, end = 1.0, 30.0, 0.55
    ref = cf.unidirectional_slide(M, N_FORCE, MU, v0, angle, KC)
    vx, vy = v0 * np.cos(np.radians(angle)), ref.values["vy"]
    model = friction_model(["DX", "DY", "DZ"], f"DX = {float(vx)!r}, DY = {float(vy)!r}",
                           keys="friction_direction = [1.0, 0.0, 0.0]")
    analysis = study(model, analysis_blocks(basis, scheme, ndof=3, end=end, links=["floor"]))
    check_slide(analysis, ref, ACCURACY[(basis, scheme)],
                dofs=[("P", "DX"), ("P", "DY"), ("P", "DZ")],
                direction=np.array([1.0, 0.0, 0.0]), v0=vx)
    t, y = analysis.series("displacement", "P", "DY")
    _, vy_found = analysis.series("velocity", "P", "DY")
    report("Y, no friction", np.abs(y - vy * t), 1e-12 + 1e-12 * t)
    report("Y velocity", np.abs(vy_found - vy), 1e-12)


# ------------------------------------------------------------------------------------------
# impact: rigid walls and bodies, Newton's law with momentum conserved. Free flights are
# polynomial: the budget is the floor, and the velocities are exact away from the events.
IMPACT_WALL = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {m}
[[initial]]
nodes = ["P"]
velocity = {{ DX = {v0} }}
[[link]]
name = "wall"
kind = "impact"
nodes = ["P"]
component = "DX"
gap = {gap}
restitution = {e}
"""

IMPACT_PAIR = """
[mesh.nodes]
M1 = [0.0, 0.0, 0.0]
M2 = [0.1, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["M1"]
mass = {m1}
[[discrete]]
nodes = ["M2"]
mass = {m2}
[[initial]]
nodes = ["M1"]
velocity = {{ DX = {v1} }}
[[initial]]
nodes = ["M2"]
velocity = {{ DX = {v2} }}
{load}
[[link]]
name = "pair"
kind = "impact"
nodes = ["M1", "M2"]
component = "DX"
gap = {gap}
restitution = {e}
"""

#: name -> (closed form, model, dofs, link, end)
IMPACT_CASES = {
    "wall": (lambda: cf.impact_wall(1.0, -1.0, 0.1, 0.8),
             IMPACT_WALL.format(m=1.0, v0=-1.0, gap=0.1, e=0.8), [("P", "DX")], "wall", 0.2),
    "two_masses": (lambda: cf.impact_pair(1.0, 3.0, 1.0, -0.5, 0.1, 0.8),
                   IMPACT_PAIR.format(m1=1.0, m2=3.0, v1=1.0, v2=-0.5, gap=0.1, e=0.8,
                                      load=""),
                   [("M1", "DX"), ("M2", "DX")], "pair", 0.2),
    "sticking": (lambda: cf.impact_pair(1.0, 3.0, 1.0, 0.0, 0.1, 0.0, force=2.0),
                 IMPACT_PAIR.format(m1=1.0, m2=3.0, v1=1.0, v2=0.0, gap=0.1, e=0.0,
                                    load='[[load]]\nnodes = ["M1"]\nFX = 2.0\n'),
                 [("M1", "DX"), ("M2", "DX")], "pair", 0.3),
}


@pytest.mark.parametrize("case", list(IMPACT_CASES))
@pytest.mark.parametrize("basis,scheme", cells("impact"))
def test_impact(study, basis, scheme, case):
    """A mass on a rigid wall (e = 0.8), two masses 1 and 3 kg (e = 0.8), and two masses
    that stick (e = 0) and go on together under a 2 N push: impact time, velocities after
    (momentum and Newton's law), restitution, and the states."""
    closed, model, dofs, link, end = IMPACT_CASES[case]
    ref = closed()
    accuracy = ACCURACY[(basis, scheme)]
    analysis = study(model, analysis_blocks(basis, scheme, ndof=len(dofs), end=end,
                                            links=[link]))
    (expected,) = ref.events
    rows = [r for r in analysis.events if r["link"] == link]
    assert [str(r["kind"]) for r in rows] == [expected.kind], rows
    row = rows[0]
    tol_t = SAFETY * accuracy.floor
    report("impact time", abs(row["time"] - expected.time), tol_t)
    before, after = ref.values["gap_rate_before"], ref.values["gap_rate_after"]
    scale = abs(before)
    # r' is exact in free flight (no force, or a constant one): round-off, and the force
    # (2 N / kg at most) times the time tolerance
    tol_v = 1e-12 * scale + 2.0 * tol_t
    report("relative velocity before", abs(row["velocity_before"] - before), tol_v)
    report("relative velocity after", abs(row["velocity_after"] - after), tol_v)
    e = -row["velocity_after"] / row["velocity_before"]
    report("restitution", abs(e - (-after / before)), 1e-12)
    t, x, v = fields(analysis, dofs)
    xr, vr = ref.state(t)
    away = np.abs(t - expected.time) > 2 * tol_t + 1e-12
    report("displacement", np.abs(x - xr).max(axis=1), 2.0 * scale * tol_t + 1e-12)
    report("velocity (away from the impact)", np.abs(v - vr).max(axis=1)[away],
           1e-12 * scale + 2.0 * tol_t)


# ------------------------------------------------------------------------------------------
# A mass rubbing on a shaken support: 1 kg pressed by 10 N, mu = 0.1, the support shaken
# along X at A sin(2 pi t) m/s^2 (a base acceleration: the results are relative to it). The
# wear work mu N int |v_slip| dt from the link's sliding velocity against the rigid-stick
# closed form. Its tolerance: the trapezoidal rule on the archive (end h^2 / 12 max|v''|),
# the creep F' / kt <= m A 2 pi / kt each slip starts with, kept over its half period at
# most, and the scheme's velocity error over the run. (The slips start with no jump of the
# acceleration, and a stop ends the velocity whatever its error.)
SHAKE_MU, SHAKE_END = 0.1, 2.0


@pytest.mark.parametrize("amplitude", [1.5, 0.8])
@pytest.mark.parametrize("basis,scheme", cells("friction.coulomb"))
def test_shaken_rubbing_wear(study, basis, scheme, amplitude):
    """A = 1.5 m/s^2 slips twice a period (mean wear power 0.0407 W); A = 0.8 never slips."""
    ref = cf.shaken_rubbing(M, N_FORCE, SHAKE_MU, amplitude, 1.0, SHAKE_END)
    loads = f'[functions.shake]\nexpression = "sin(2*pi*t)"\n' \
            f'[[load]]\nname = "support"\nkind = "base_acceleration"\n' \
            f'direction = [1.0, 0.0, 0.0]\nvalue = {amplitude}\nfunction = "shake"\n'
    model = friction_model(["DX", "DZ"], loads=loads, mu=SHAKE_MU)
    accuracy = ACCURACY[(basis, scheme)]
    analysis = study(model, analysis_blocks(basis, scheme, ndof=2, end=SHAKE_END,
                                            links=["floor"]))
    assert "sliding_velocity" in analysis.link_series_names("floor")
    series = analysis.link("floor")
    t, slip = series["time"], np.asarray(series["sliding_velocity"])
    speed = np.linalg.norm(slip, axis=1) if slip.ndim == 2 else np.abs(slip)
    work = SHAKE_MU * N_FORCE * np.trapezoid(speed, t)
    h_out = float(np.max(np.diff(t)))
    a_max = amplitude + SHAKE_MU * N_FORCE / M
    b = budget(accuracy, [(0.0, SHAKE_END, 0.0)], SHAKE_END)[0]
    creep = M * amplitude * 2 * np.pi / KT
    sliding = (SHAKE_END * h_out ** 2 / 12 * amplitude * (2 * np.pi) ** 2
               + ref.values["slips"] * creep * 0.5 + SHAKE_END * a_max * b)
    tolerance = SAFETY * SHAKE_MU * N_FORCE * sliding + 1e-9
    report("wear work", abs(work - ref.values["wear_work"]), tolerance)
    report("mean wear power", abs(work / SHAKE_END - ref.values["mean_wear_power"]),
           tolerance / SHAKE_END)
    # the wear power of `fem post shocks` (code_aster's: the mean of |F_n| |v_slip|, F_n = N
    # here) is the mean friction power over mu
    stats = link_shocks(analysis, "floor")
    report("wear power of the shock statistics",
           abs(stats.wear_power - ref.values["mean_wear_power"] / SHAKE_MU),
           tolerance / SHAKE_END / SHAKE_MU)
