"""Friction as a law that holds from every state, in every scheme that offers it (property
tests, hypothesis): parameters are drawn over wide ranges and each run is compared with a
closed form of rigid Coulomb friction (tests/closed_forms.py), and its energy balance is
checked (friction never gives energy).

Each example draws a cell (basis, scheme, events = "step" or "locate") among the catalog's
rows that offer friction (the exact scheme runs unidirectional friction: the motions here are
along one direction, so the two laws are the same), and the problem's parameters: friction
coefficients mu and mu_s >= mu, the stick spring kt from 10 to 1e6 times the problem's own
stiffness (m w^2, w its circular frequency; up to 1e4 for the exact scheme, which follows
the stick spring's vibration exactly at a cost that grows with its frequency), the starting
displacement or velocity, the forcing's rate or frequency.

Profiles (tests/conftest.py): "ci" runs a few examples per property; "deep" (HYPOTHESIS_PROFILE
=deep) runs 2,000:

    HYPOTHESIS_PROFILE=deep python -m pytest -n 2 tests/test_friction_properties.py

Tolerances. The rigid law is the limit of the regularized one (kt -> infinity), and each
check allows what separates them, with the scheme's error:

* the stick spring's give mu_s N / kt (a sticking contact's position), and the time its
  force takes to turn over, 1 / w_t (w_t = sqrt(kt / m)), at each stick-slip transition;
* the scheme's error, from its order p and step h on the problem's frequency w and on w_t
  (drift c (w h)^p per radian, c = 1 taken for every scheme: a bound, not an estimate), or
  from its tolerance for the adaptive schemes;
* with events = "step", a transition found at the end of the step where it happens: one step
  of the motion (velocity times h, acceleration times h^2).

Each tolerance is SAFETY times the sum of its terms, stated next to the check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import closed_forms as cf  # noqa: E402
import fem  # noqa: E402
from fem import catalog  # noqa: E402

SAFETY = 4.0
M = 1.0
N = 10.0
#: the damping ratio of the stick spring (none: its vibration is part of what is checked)
ZETA_T = 0.0
#: the number of examples of each property: a handful in the suite (the same ones at every
#: run: a suite's time does not depend on its draw), the profile's otherwise
DEEP = settings().max_examples > 100
EXAMPLES = settings().max_examples if DEEP else 6
#: the largest kt / (m w^2) drawn for the exact scheme: it follows the stick spring's
#: vibration exactly, at a cost that grows with its frequency (steps of 4 / omega_max)
EXACT_STIFFNESS = 1e4

#: (basis, scheme, events) of every catalog row offering friction, and the event modes;
#: but first-order euler, whose steps amplify an undamped stick spring's vibration until it
#: slips or diverges (its step control does not see it): it is checked with a damped stick
#: spring in tests/test_link_matrix.py
CELLS = [(b, s, e) for (b, s), row in catalog.SCHEMES.items()
         if row.offers("friction.unidirectional") and s != "euler" for e in row.event_modes]
#: the order of each scheme, and whether it chooses its own steps
ORDER = {key: row.order for key, row in catalog.SCHEMES.items()}
#: adaptive schemes: their tolerance
TOLERANCE = 1e-8


def _coulomb(basis, scheme):
    return catalog.SCHEMES[(basis, scheme)].offers("friction.coulomb")


def _adaptive(basis, scheme):
    return catalog.SCHEMES[(basis, scheme)].adaptive


# ------------------------------------------------------------------------------------------
# studies

def _study(cell, *, kt, mu, mus, k=0.0, x0=0.0, v0=0.0, loads=(), functions=None, end,
           h, archive=None):
    """One node P with DX and DZ, pressed on the plane below it (normal -Z) by N, resting in
    normal equilibrium (the normal force stays N; stiffness kt, like the stick spring's,
    the normal contact damped at ratio 0.2); a spring k along X; the transient
    analysis "run" of ``cell`` with step h (fixed-step schemes; the largest step of the
    adaptive ones)."""
    basis, scheme, events = cell
    kc = kt
    # the normal contact damped (ratio 0.2): it rests in equilibrium, and first-order euler
    # would pump an undamped one
    link = {"name": "floor", "kind": "shock", "nodes": ["P"], "normal": [0.0, 0.0, -1.0],
            "gap": 0.0, "stiffness": kc, "damping": 0.4 * math.sqrt(kc * M), "friction": mu,
            "static_friction": mus, "tangential_stiffness": kt,
            "tangential_damping": 2 * ZETA_T * math.sqrt(kt * M)}
    if not _coulomb(basis, scheme) or events == "locate" and scheme == "exact":
        link["friction_direction"] = [1.0, 0.0, 0.0]
    discrete = {"nodes": ["P"], "mass": M}
    if k:
        discrete["stiffness"] = [k, 0.0, 0.0]
    study = {
        "mesh": {"nodes": {"P": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DZ"]},
        "discrete": [discrete],
        "load": [{"name": "press", "nodes": ["P"], "FZ": -N}] + list(loads),
        "initial": [{"nodes": ["P"], "displacement": {"DX": x0, "DZ": -N / kc},
                     "velocity": {"DX": v0}}],
        "link": [link],
        "analysis": [],
    }
    if functions:
        study["functions"] = functions
    run = {"name": "run", "kind": "transient", "basis": basis, "scheme": scheme, "end": end,
           "links": ["floor"], "events": events}
    if basis == "modal":
        study["analysis"].append({"name": "modes", "kind": "modes", "count": 2})
        run["modes"] = "modes"
    if scheme == "exact":
        run["step"] = end / 200
    elif _adaptive(basis, scheme):
        run["tolerance"] = TOLERANCE
        run["max_step"] = h
        run["step"] = end / 200
    else:
        run["step"] = h
    if archive is not None:
        run["archive"] = {"times": [float(t) for t in archive]}
    study["analysis"].append(run)
    return fem.Study.from_dict(study)


def _run(study):
    results = fem.run(study)
    return results.analysis("run")


def _step(kt, w, cell=None):
    """The step of the fixed-step schemes (the largest of the adaptive ones): w_t h = 0.2,
    and at most 1/200 of a period; for first-order euler, ten times shorter (its step
    control bounds the velocity lag of an oscillator, not the time lag of a polynomial
    motion: that is max_step / 2)."""
    wt = math.sqrt(kt / M)
    h = min(0.2 / wt, 2 * math.pi / w / 200.0)
    return 0.1 * h if cell is not None and cell[1] == "euler" else h


def _scheme_error(cell, w, h, span):
    """A bound of the scheme's relative error over ``span`` seconds of a motion of circular
    frequency w: (w h)^p w span (drift), or the adaptive tolerance times w span and its
    stick spring resolution."""
    basis, scheme, _ = cell
    order = ORDER[(basis, scheme)]
    if scheme == "exact":
        return 1e-11
    if scheme == "euler":
        return w * h * (1.0 + w * span)
    if _adaptive(basis, scheme):
        return 1e3 * TOLERANCE * (1.0 + w * span)
    return (w * h) ** order * (1.0 + w * span) + 1e-11


def _late(cell, h):
    """The time by which a transition may come late: one step with events = "step", or for
    first-order euler (its time lag)."""
    return h if cell[2] == "step" or cell[1] == "euler" else 0.0


def _swing(cell, mus, kt):
    """With events = "step" a slide that stops leaves the stick spring holding the sliding
    force instead of the one sticking needs: it swings by up to 2 mu_s N / kt, at up to
    2 mu_s N / sqrt(kt m) (returns the speed)."""
    return 2 * mus * N / math.sqrt(kt * M) if cell[2] == "step" else 0.0

#: the worst error / tolerance of each check (read by a run that studies the margins)
RATIOS: list = []


def compare(cell, name, t, found, expected, tol):
    """Assert |found - expected| <= tol at every archived instant t, naming the worst."""
    error = np.abs(np.asarray(found) - np.asarray(expected))
    tol = np.broadcast_to(np.asarray(tol, float), error.shape)
    worst = int(np.argmax(error / tol))
    RATIOS.append((cell, name, float(error[worst] / tol[worst]), float(error[worst])))
    assert error[worst] <= tol[worst], (
        f"{cell}: {name} at {t[worst]:.9g} s: {found[worst]:.9g}, closed form "
        f"{expected[worst]:.9g} (error {error[worst]:.3e} > {tol[worst]:.3e})")


#: the schemes that integrate the links' power with their own stages (their energy terms
#: carry the stages' quadrature error, of the order of the balance's)
QUADRATURE = ("rk4", "euler", "adaptive2", "devogelaere", "rk32", "rk54")


def check_energy(analysis, scale, cell=None, slack=0.0):
    """Friction never gives energy: the dissipated energy never decreases beyond round-off
    (1e-9 of the energy ``scale``, J) where the links' dissipation is the laws' own (the
    Newmark family, central differences, exact: the slip work of a step is mu F_n times the
    slide along its direction, never negative), and beyond the balance's own tolerance where
    the scheme integrates the links' power with its stages; and the balance kinetic +
    potential + link energy + dissipated - external work stays at its start within 1e-3 of
    the scale and ``slack`` (J): with events = "step", a stick-slip switch inside a step
    misses the friction force's work over that step by up to mu_s N v h (the switch in the
    middle of a trapezoidal rule)."""
    energy = analysis.energy()
    dissipated = np.asarray(energy["dissipated"])
    drops = np.diff(dissipated)
    floor = 1e-3 if cell is not None and cell[1] in QUADRATURE else 1e-9
    assert drops.min(initial=0.0) >= -floor * scale - 1e-12, \
        f"dissipated energy decreases by {-drops.min():.3e} J"
    balance = (np.asarray(energy["kinetic"]) + np.asarray(energy["potential"])
               + np.asarray(energy["link_energy"]) + dissipated
               - np.asarray(energy["external_work"]))
    drift = np.abs(balance - balance[0]).max()
    assert drift <= 1e-3 * scale + slack + 1e-12, f"energy balance off by {drift:.3e} J"


def stick_resets(ref, mu, mus, kt):
    """The energy (J) the stick springs may take where slides stop: each stick starts with
    its spring holding the rigid stick force, up to mu_s N, where it held mu N while sliding
    (docs/study_format.md): (mu_s^2 - mu^2) N^2 / (2 kt) per event of the closed form."""
    return len(ref.events) * (mus * mus - mu * mu) * N * N / (2.0 * kt)


def transitions_before(ref, t):
    """1 + the number of the closed form's events before each instant t."""
    return 1 + np.searchsorted([e.time for e in ref.events], t)


# ------------------------------------------------------------------------------------------
# strategies

cells = st.sampled_from(CELLS)
mus_ratio = st.floats(1.0, 1.5)
mu_values = st.floats(0.05, 0.5)
stiffness_ratio = st.floats(1.0, 6.0).map(lambda e: 10.0 ** e)      # kt / (m w^2)


@settings(max_examples=EXAMPLES, derandomize=not DEEP)
@given(cell=cells, mu=mu_values, ratio=mus_ratio, stiff=stiffness_ratio,
       k=st.floats(100.0, 1e4), start=st.floats(0.3, 12.0), sign=st.sampled_from([1, -1]))
def test_released_at_rest(cell, mu, ratio, stiff, k, start, sign):
    """A mass on a spring k released at rest from x0, pressed by N on a plane with friction:
    it stays if k |x0| <= mu_s N, else each half period pi / w ends 2 mu N / k closer to
    zero, until k |x| <= mu_s N at a stop. The positions at the stops (archived there) and
    the final rest position against the closed form.

    Tolerance: the stick spring's give 2 mu_s N / kt at each transition (a stop is at rest:
    the turn-over of the spring there moves nothing to first order, x (w / w_t)^2), the
    scheme's drift over the run on the amplitude, and with events = "step" a transition one
    step late (w |x0| h + a h^2, a = (k |x0| + mu_s N) / m)."""
    mus = mu * ratio
    stiff = min(stiff, EXACT_STIFFNESS) if cell[1] == "exact" else stiff
    w = math.sqrt(k / M)
    kt = stiff * k
    wt = math.sqrt(kt / M)
    x0 = sign * start * mus * N / k
    half = math.pi / w
    ref = cf.coulomb_oscillator(M, k, N, mu, 0.0, 5.5 * half, x0=x0, mu_static=mus)
    stops = [s for s in ref.values["stop_times"] if s < 5 * half]
    end = (stops[-1] if stops else 0.0) + 0.5 * half
    h = _step(kt, w, cell)
    analysis = _run(_study(cell, kt=kt, mu=mu, mus=mus, k=k, x0=x0, end=end, h=h,
                           archive=stops + [end]))
    t, x = analysis.series("displacement", "P", "DX")
    xr = ref.x(t)[:, 0]
    late = _late(cell, h)
    a = (k * abs(x0) + mus * N) / M
    per = 2 * mus * N / kt + abs(x0) * (w / wt) ** 2 + w * abs(x0) * late + a * late ** 2
    tol = SAFETY * (transitions_before(ref, t) * per
                    + abs(x0) * _scheme_error(cell, w, h, end))
    compare(cell, "displacement", t, x, xr, tol)
    check_energy(analysis, 0.5 * k * x0 * x0, cell,
                 SAFETY * len(ref.events) * mus * N * w * abs(x0) * late
                 + stick_resets(ref, mu, mus, kt))


@settings(max_examples=EXAMPLES, derandomize=not DEEP)
@given(cell=cells, mu=mu_values, ratio=mus_ratio, stiff=stiffness_ratio,
       slip=st.floats(0.05, 0.5))
def test_ramp_force(cell, mu, ratio, stiff, slip):
    """A block at rest pulled along X by F = rate t: it sticks until F = mu_s N (at t_s,
    drawn), then slides with m x'' = F - mu N. Position and velocity against the closed
    form.

    Tolerance: the slide starts late by up to 1 / w_t (the stick spring's force swings by
    F' / w_t about F: its turn-over time) and a step with events = "step"; over that lag
    the closed form gains the velocity (mu_s - mu) N / m lag + F' lag^2 / (2 m), which the
    position keeps gaining after; the stuck spring creeps at F' / kt and gives mu_s N / kt;
    the scheme's drift."""
    mus = mu * ratio
    stiff = min(stiff, EXACT_STIFFNESS) if cell[1] == "exact" else stiff
    rate = mus * N / slip
    end = 2.0 * slip
    w = 2 * math.pi / end
    kt = stiff * M * w * w
    wt = math.sqrt(kt / M)
    ref = cf.static_friction_ramp(M, N, mus, mu, rate, kt)
    h = _step(kt, w, cell)
    functions = {"ramp": {"table": [[0.0, 0.0], [1.0, rate]], "right": "linear"}}
    loads = [{"name": "pull", "nodes": ["P"], "FX": 1.0, "function": "ramp"}]
    analysis = _run(_study(cell, kt=kt, mu=mu, mus=mus, loads=loads, functions=functions,
                           end=end, h=h))
    t, x = analysis.series("displacement", "P", "DX")
    _, v = analysis.series("velocity", "P", "DX")
    xr, vr = ref.x(t)[:, 0], ref.v(t)[:, 0]
    lag = 1.0 / wt + _late(cell, h)
    dv = ((mus - mu) * N * lag + 0.5 * rate * lag * lag) / M + rate / kt
    error = _scheme_error(cell, w, h, end)
    tol_v = SAFETY * (dv + float(np.max(np.abs(vr))) * error)
    tol_x = SAFETY * (mus * N / kt + dv * (np.maximum(t - slip, 0.0) + lag)
                      + float(np.max(np.abs(xr))) * error)
    compare(cell, "velocity", t, v, vr, tol_v)
    compare(cell, "displacement", t, x, xr, tol_x)
    check_energy(analysis, rate * end * float(np.max(np.abs(xr))) + mus * N * mus * N / kt,
                 cell, SAFETY * mus * N * float(np.max(np.abs(vr))) * _late(cell, h))


@settings(max_examples=EXAMPLES, derandomize=not DEEP)
@given(cell=cells, mu=mu_values, ratio=mus_ratio, stiff=stiffness_ratio,
       v0=st.floats(0.05, 3.0), sign=st.sampled_from([1, -1]))
def test_slide_to_rest(cell, mu, ratio, stiff, v0, sign):
    """A block thrown at v0 along X: it decelerates by mu N / m, stops at v0 m / (mu N)
    after v0^2 m / (2 mu N) (both archived), and stays (no force drives it).

    Tolerance: the stick spring's give 2 mu_s N / kt, the scheme's drift on the distance,
    and with events = "step" a stop one step late (v0 h + a h^2)."""
    mus = mu * ratio
    stiff = min(stiff, EXACT_STIFFNESS) if cell[1] == "exact" else stiff
    a = mu * N / M
    stop = v0 / a
    end = 1.5 * stop
    w = 2 * math.pi / end
    kt = stiff * M * w * w
    h = _step(kt, w, cell)
    analysis = _run(_study(cell, kt=kt, mu=mu, mus=mus, v0=sign * v0, end=end, h=h,
                           archive=[stop, end]))
    t, x = analysis.series("displacement", "P", "DX")
    s = np.minimum(t, stop)
    xr = sign * (v0 * s - 0.5 * a * s * s)
    late = _late(cell, h)
    tol = SAFETY * (2 * mus * N / kt + v0 * v0 / a * _scheme_error(cell, w, h, end)
                    + v0 * late + a * late * late)
    compare(cell, "displacement", t, x, xr, tol)
    _, v = analysis.series("velocity", "P", "DX")
    # at rest: still with located events (the spring holds no force); with events = "step"
    # the stop leaves the stick spring swinging, at mu N / sqrt(kt m) at most
    swing = mu * N / math.sqrt(kt * M) + a * late if cell[2] == "step" else 0.0
    compare(cell, "velocity at rest", t[t > stop], v[t > stop], 0.0 * v[t > stop],
            SAFETY * swing + 1e-9 * v0)
    check_energy(analysis, 0.5 * M * v0 * v0, cell, SAFETY * mus * N * v0 * late)


@settings(max_examples=EXAMPLES, derandomize=not DEEP)
@given(cell=cells, mu=mu_values, ratio=mus_ratio, stiff=stiffness_ratio,
       shake=st.one_of(st.floats(0.2, 0.9), st.floats(1.3, 5.0)),
       frequency=st.floats(0.5, 5.0))
def test_shaking_table(cell, mu, ratio, stiff, shake, frequency):
    """A block on a table shaken along X with the acceleration A sin(2 pi f t), A = shake
    mu_s N / m (a base acceleration: the results are relative to the table): rigid stick
    while m A |sin| <= mu_s N, the slides of the rigid-stick solution otherwise
    (tests/closed_forms.py). A slip starts where the drive crosses the limit at a slope of
    at least sqrt(1 - 1 / 1.3^2) = 0.64 of its largest (shake >= 1.3).

    Tolerance: each slip from a stick starts late by up to 1 / (0.64 w_t) (the stick
    spring's turn-over) and a step with events = "step"; over that lag the closed form gains
    the velocity ((mu_s - mu) N / m + A w lag) lag, kept by the slide (and by the position
    after it); the stuck spring's creep m A w / kt and give mu_s N / kt; the scheme's
    drift."""
    mus = mu * ratio
    stiff = min(stiff, EXACT_STIFFNESS) if cell[1] == "exact" else stiff
    amplitude = shake * mus * N / M
    end = 2.0 / frequency
    w = 2 * math.pi * frequency
    kt = stiff * M * w * w
    wt = math.sqrt(kt / M)
    ref = cf.shaken_rubbing(M, N, mu, amplitude, frequency, end, mu_static=mus)
    h = _step(kt, w, cell)
    functions = {"shake": {"expression": f"sin({w!r}*t)"}}
    loads = [{"name": "table", "kind": "base_acceleration", "direction": [1.0, 0.0, 0.0],
              "value": amplitude, "function": "shake"}]
    analysis = _run(_study(cell, kt=kt, mu=mu, mus=mus, loads=loads, functions=functions,
                           end=end, h=h))
    t, x = analysis.series("displacement", "P", "DX")
    _, v = analysis.series("velocity", "P", "DX")
    xr, vr = ref.x(t)[:, 0], ref.v(t)[:, 0]
    lag = 1.0 / (0.64 * wt) + _late(cell, h)
    n = transitions_before(ref, t)
    dv = (((mus - mu) * N / M + amplitude * w * lag) * lag + M * amplitude * w / kt
          + _swing(cell, mus, kt))
    v_scale = 2 * amplitude / w
    error = _scheme_error(cell, w, h, end)
    tol_v = SAFETY * (n * dv + v_scale * error)
    tol_x = SAFETY * (2 * mus * N / kt + n * dv * (t + lag) + v_scale / w * error)
    compare(cell, "velocity", t, v, vr, tol_v)
    compare(cell, "displacement", t, x, xr, tol_x)
    check_energy(analysis, M * amplitude * amplitude / (w * w) + mus * N * mus * N / kt,
                 cell, SAFETY * (len(ref.events) + 1) * mus * N * v_scale * _late(cell, h)
                 + stick_resets(ref, mu, mus, kt))
