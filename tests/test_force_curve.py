"""Force-curve contacts (``kind = "force_curve"``) against solutions written here, in every
scheme of the catalog that offers them, on both bases and in both event modes of the Newmark
family:

* a mass launched at V0 onto a nonlinear elastic support (a curve of three stiffening
  segments, crossed to its third): the contact duration by quadrature of the energy
  equation, t_c = 2 int dx / sqrt(V0^2 - 2 U(x) / m), the peak from U(x_max) = m V0^2 / 2,
  the rebound speed equal to the speed at contact (no energy lost), the instants where the
  contact passes each breakpoint (located events), and the energy balance;
* two free masses colliding through the curve (the relative motion, with the reduced mass);
* a mass shuttling between two planes: the period of the motion;
* curves that the reader refuses, naming the key and the link.

The potential U(x) = k0 x^2 / 2 + E(x - g), E(p) = int_0^p F the curve's integral (computed
here from the points, the last slope going on), holds the whole motion: the mass is on a
weak spring k0 (so that the modal basis has its mode), the contact has the gap g.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from fem import catalog
from conftest import bad_link_toml, one_mass_toml, two_masses_toml
from test_maxwell import ACCURACY, ROWS, assert_refused, modes, run, transient

MASS = 1.0                  # kg
K0 = 100.0                  # N/m, the weak spring that holds the mass
GAP = 1.0e-3                # m
V0 = 3.0                    # m/s, the launch speed
CURVE = [(1.0e-3, 1.0e3), (2.0e-3, 4.0e3), (3.0e-3, 1.0e4)]     # slopes 1e6, 3e6, 6e6 N/m
STEP = 2.0e-6               # s: 2 pi / (w_max STEP) = 1280 steps per period of the stiffest
END = 3.0e-3                # s: contact from 0.33 ms to about 1.7 ms, then flight

OFFERING = [key for key in ROWS if catalog.SCHEMES[key].offers("force_curve")]
NEWMARK_FAMILY = [key for key in ROWS if key[1] in ("newmark", "hht", "central_difference")]
#: each scheme in its default event mode, and the Newmark family in the other one too
CASES = [(b, s, catalog.SCHEMES[(b, s)].events) for b, s in OFFERING] + [
    (b, s, "locate") for b, s in NEWMARK_FAMILY]


def _case_ids(cases):
    return [f"{b}-{s}-{e}" for b, s, e in cases]


def test_every_scheme_offers_force_curves():
    """The curve is linear between its events: every scheme runs it, the exact one
    included."""
    for key, row in catalog.SCHEMES.items():
        assert row.offers("force_curve"), (key, row.reason("force_curve"))


# ------------------------------------------------------------------------------------------
# the curve, written here
def curve_force(p, curve=CURVE):
    """F(p) of the curve from (0, 0), the last slope going on; 0 for p <= 0."""
    if p <= 0.0:
        return 0.0
    pts = [(0.0, 0.0)] + list(curve)
    for (p0, f0), (p1, f1) in zip(pts[:-1], pts[1:]):
        if p < p1:
            return f0 + (f1 - f0) / (p1 - p0) * (p - p0)
    (p0, f0), (p1, f1) = pts[-2], pts[-1]
    return f1 + (f1 - f0) / (p1 - p0) * (p - p1)


def curve_energy(p, curve=CURVE):
    """E(p) = int_0^p F (0 for p <= 0), by quadrature of ``curve_force`` between the
    breakpoints (each piece linear: exact to round-off)."""
    if p <= 0.0:
        return 0.0
    edges = [0.0] + [b for b, _ in curve if b < p] + [p]
    return sum(quad(curve_force, a, b, args=(curve,))[0] for a, b in zip(edges[:-1], edges[1:]))


def potential(x):
    return 0.5 * K0 * x * x + curve_energy(x - GAP)


def rate_squared(x):
    """v^2 at x from the energy equation m v^2 / 2 + U(x) = m V0^2 / 2."""
    return V0 * V0 - 2.0 * potential(x) / MASS


def peak():
    """x_max: U(x_max) = m V0^2 / 2."""
    return brentq(rate_squared, GAP, GAP + 0.1, xtol=1e-16, rtol=1e-15)


def curve_slope(p, curve=CURVE):
    """dF/dp on the segment that holds p > 0."""
    pts = [(0.0, 0.0)] + list(curve)
    for (p0, f0), (p1, f1) in zip(pts[:-1], pts[1:]):
        if p < p1:
            return (f1 - f0) / (p1 - p0)
    (p0, f0), (p1, f1) = pts[-2], pts[-1]
    return (f1 - f0) / (p1 - p0)


def time_between(a, b, x_max, speed2, drop):
    """int_a^b dx / |v(x)| for a < b <= x_max, v^2 = speed2(x), a and b breakpoints of the
    curve or its ends (the integrand smooth between them). Near the turning point the
    substitution x = x_max - s^2 removes the singularity: dx / |v| = 2 s ds / |v|, with
    v^2 = 2 (U(x_max) - U(x)) / m = 2 s^2 drop(s) / m, drop(s) = (U(x_max) - U(x)) / s^2
    written without the cancellation of the difference (U is quadratic on the segment)."""
    if b < x_max:
        return quad(lambda x: 1.0 / math.sqrt(speed2(x)), a, b, epsabs=0.0, epsrel=1e-13,
                    limit=200)[0]
    return quad(lambda s: 2.0 / math.sqrt(2.0 * drop(s)), 0.0, math.sqrt(x_max - a),
                epsabs=0.0, epsrel=1e-13, limit=200)[0]


def contact_time(speed2, pen_max, mass):
    """The duration 2 int_0^pen_max dp / |v(p)| of a contact on the curve alone (no other
    force) of a body of mass ``mass``, v^2 = speed2(p), split at the curve's breakpoints."""
    k = curve_slope(pen_max)

    def drop(s):
        # (E(pen_max) - E(p)) / s^2 / m at p = pen_max - s^2: F(p) + k s^2 / 2 over the mass
        return (curve_force(pen_max - s * s) + 0.5 * k * s * s) / mass
    edges = [0.0] + [b for b, _ in CURVE if b < pen_max] + [pen_max]
    return 2.0 * sum(time_between(a, b, pen_max, speed2, drop)
                     for a, b in zip(edges[:-1], edges[1:]))


def reference():
    """(contact instant, contact duration, x_max, speed at contact, the instants the contact
    passes the breakpoints on the way in and out), from the energy equation: the flight to
    the gap on the spring k0 (x = (V0 / w0) sin(w0 t)), then the quadratures."""
    w0 = math.sqrt(K0 / MASS)
    t_in = math.asin(GAP * w0 / V0) / w0
    x_max = peak()
    inner = [GAP + b for b, _ in CURVE if GAP + b < x_max]
    edges = [GAP] + inner + [x_max]
    k = curve_slope(x_max - GAP)

    def drop(s):
        # (U(x_max) - U(x)) / s^2 / m at x = x_max - s^2: the spring's and the curve's parts
        x = x_max - s * s
        return (0.5 * K0 * (2.0 * x_max - s * s) + curve_force(x - GAP) + 0.5 * k * s * s) / MASS
    pieces = [time_between(a, b, x_max, rate_squared, drop)
              for a, b in zip(edges[:-1], edges[1:])]
    half = sum(pieces)
    into = [t_in + sum(pieces[:i + 1]) for i in range(len(inner))]
    out = [t_in + 2.0 * half - (t - t_in) for t in reversed(into)]
    return t_in, 2.0 * half, x_max, math.sqrt(rate_squared(GAP)), into + out


# ------------------------------------------------------------------------------------------
# studies
def curve_text(curve):
    return "[" + ", ".join(f"[{p!r}, {f!r}]" for p, f in curve) + "]"


def force_curve_link(nodes, name="fc", normal=(1.0, 0.0, 0.0), gap=GAP, curve=CURVE,
                     extra=""):
    quoted = ", ".join(f'"{n}"' for n in nodes)
    vector = ", ".join(repr(float(x)) for x in normal)
    return (f'[[link]]\nkind = "force_curve"\nname = "{name}"\nnodes = [{quoted}]\n'
            f"normal = [{vector}]\ngap = {gap!r}\ncurve = {curve_text(curve)}\n{extra}")


def launch_study(basis, scheme, events):
    """A mass on the weak spring k0, launched at V0 towards the support at the gap."""
    return one_mass_toml(MASS, f"stiffness = {K0!r}", "velocity", V0) + f"""
{force_curve_link(["A"])}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=END, step=STEP, links=("fc",))}
events = "{events}"
"""


def crossings(t, p, rising):
    """The instants where the archived p crosses 0 upwards (``rising``) or downwards, by
    linear interpolation between the archived instants."""
    s = p > 0.0
    idx = np.flatnonzero(s[1:] & ~s[:-1]) if rising else np.flatnonzero(~s[1:] & s[:-1])
    return [t[i] + (t[i + 1] - t[i]) * (0.0 - p[i]) / (p[i + 1] - p[i]) for i in idx]


def archived_peak(x):
    """The largest x, from the parabola through the archived instants about the largest
    one (the archive samples the peak to within a dt^2 / 8 of its curvature)."""
    i = int(np.argmax(x))
    a, b, c = x[i - 1], x[i], x[i + 1]
    return b + 0.125 * (c - a) ** 2 / (2.0 * b - a - c)


def balance_error(data, scale):
    total = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
             + data["energy/dissipated"] - data["energy/external_work"])
    return float(np.max(np.abs(total - total[0])) / scale)


#: the relative error bounds of each case's quantities, from the accuracy of its scheme on
#: the stiffest segment (test_maxwell.ACCURACY) and, in step mode, the slope's change inside a
#: step (a kink passed at the step's end: an error of order (w h)^2 per kink)
W_MAX = math.sqrt((CURVE[-1][1] - CURVE[-2][1]) / (CURVE[-1][0] - CURVE[-2][0]) / MASS)


def bound(basis, scheme, events, duration):
    acc = ACCURACY[(basis, scheme)]
    base = acc.bound(W_MAX, duration, STEP)
    if events == "step":
        base += 3.0 * (W_MAX * STEP / acc.refine) ** 2
    return base


@pytest.mark.parametrize("basis, scheme, events", CASES, ids=_case_ids(CASES))
def test_a_mass_launched_onto_a_nonlinear_elastic_support(tmp_path, basis, scheme, events):
    """The contact duration and its instants, the peak penetration, the rebound speed (the
    speed at contact: no energy lost), the force on the curve, the stored energy its
    integral, the energy balance; with located events, the instants where the contact passes
    each breakpoint."""
    data = run(tmp_path, launch_study(basis, scheme, events))["a"]
    t_in, t_c, x_max, v_gap, breaks = reference()
    t = data["time"]
    p = data["links/fc/penetration"]
    force = data["links/fc/normal_force"]
    x, v = data["displacement"][:, 0], data["velocity"][:, 0]
    tol = bound(basis, scheme, events, t_c)
    kinds = [e[1].decode() for e in data["events"]]
    if events == "locate":
        times = [float(e[0]) for e in data["events"]]
        assert kinds == ["impact"] + ["segment"] * 4 + ["separation"], kinds
        start, end = times[0], times[-1]
        err_breaks = max(abs(a - b) for a, b in zip(times[1:-1], breaks)) / t_c
        assert err_breaks < tol, (err_breaks, tol)
    else:
        assert kinds == ["impact", "separation"], kinds
        (start,), (end,) = crossings(t, p, True), crossings(t, p, False)
        err_breaks = float("nan")
    err_start = abs(start - t_in) / t_c
    err_duration = abs((end - start) - t_c) / t_c
    err_peak = abs((archived_peak(x) - x_max) / (x_max - GAP))
    # the rebound: the speed at the gap on the way out, from the flight after it on k0
    w0 = math.sqrt(K0 / MASS)
    after = t > end + 10 * STEP
    energy = 0.5 * MASS * v[after] ** 2 + 0.5 * K0 * x[after] ** 2
    speed_out = math.sqrt(2.0 * float(np.mean(energy)) / MASS - w0 * w0 * GAP * GAP)
    err_rebound = abs(speed_out - v_gap) / v_gap
    assert np.all(v[after] < 0.0)
    # the force on the curve and the stored energy its integral, at every archived instant
    closed = p > 0.0
    expect_f = np.array([curve_force(q) for q in p])
    expect_e = np.array([curve_energy(q) for q in p])
    f_scale = curve_force(x_max - GAP)
    err_force = float(np.max(np.abs(force - expect_f))) / f_scale
    err_energy = float(np.max(np.abs(data["links/fc/energy"] - expect_e))) / (0.5 * MASS * V0 ** 2)
    assert np.array_equal(data["links/fc/state"] > 0.5, closed)
    assert np.all(force[~closed] == 0.0) and np.all(force[closed] > 0.0)
    assert np.allclose(data["energy/link_energy"], data["links/fc/energy"], rtol=1e-12,
                       atol=1e-12)
    err_balance = balance_error(data, 0.5 * MASS * V0 ** 2)
    print(f"{basis} {scheme} {events}: start {err_start:.2e}, duration {err_duration:.2e}, "
          f"breakpoints {err_breaks:.2e}, peak {err_peak:.2e}, rebound {err_rebound:.2e}, "
          f"force {err_force:.2e}, energy {err_energy:.2e}, balance {err_balance:.2e}; "
          f"bound {tol:.2e}")
    for name, err in (("start", err_start), ("duration", err_duration), ("peak", err_peak),
                      ("rebound", err_rebound), ("balance", err_balance)):
        assert err < tol, (name, err, tol)
    # the series are the law at the archived state: to round-off in every scheme
    assert err_force < 1e-12 and err_energy < 1e-12


def test_the_exact_scheme_lands_on_every_breakpoint_to_round_off(tmp_path):
    """Between its events the curve is linear: the exact scheme's contact, breakpoint and
    release instants and its peak agree with the quadratures to round-off."""
    data = run(tmp_path, launch_study("physical", "exact", "locate"))["a"]
    t_in, t_c, x_max, v_gap, breaks = reference()
    times = [float(e[0]) for e in data["events"]]
    assert times[0] == pytest.approx(t_in, rel=1e-12)
    assert times[-1] - times[0] == pytest.approx(t_c, rel=1e-10)
    assert np.array(times[1:-1]) == pytest.approx(np.array(breaks), rel=1e-10)


# ------------------------------------------------------------------------------------------
# two masses
M1, M2 = 1.0, 3.0
V_REL = 2.0


def test_two_masses_collide_through_the_curve(tmp_path):
    """Two free masses, the first launched at V_REL at the second at rest, the link between
    them (normal from the first to the second): the relative motion is that of the reduced
    mass mu = m1 m2 / (m1 + m2) on the curve; its duration by quadrature, and the momentum
    and kinetic energy after it (an elastic collision: v1' = (m1 - m2) / (m1 + m2) V, v2' =
    2 m1 / (m1 + m2) V), in each physical scheme."""
    mu = M1 * M2 / (M1 + M2)
    pen_max = brentq(lambda q: 0.5 * mu * V_REL ** 2 - curve_energy(q), 0.0, 0.1, xtol=1e-16)
    duration = contact_time(lambda q: V_REL ** 2 - 2.0 * curve_energy(q) / mu, pen_max, mu)
    for scheme in ("newmark", "exact", "rk4", "central_difference", "hht"):
        text = two_masses_toml(M1, M2, "velocity", V_REL) + f"""
{force_curve_link(["A", "B"], gap=1e-4)}
{transient("physical", scheme, end=4e-3, step=STEP, links=("fc",))}
events = "locate"
"""
        data = run(tmp_path, text, name=scheme)["a"]
        times = [float(e[0]) for e in data["events"]]
        kinds = [e[1].decode() for e in data["events"]]
        assert kinds[0] == "impact" and kinds[-1] == "separation", (scheme, kinds)
        v = data["velocity"][-1]
        err = abs((times[-1] - times[0]) - duration) / duration
        tol = 1e-12 if scheme == "exact" else 1e-4
        print(f"{scheme}: duration {err:.2e}, v {v}")
        assert err < tol, (scheme, err)
        assert v[0] == pytest.approx((M1 - M2) / (M1 + M2) * V_REL, rel=tol, abs=tol)
        assert v[1] == pytest.approx(2.0 * M1 / (M1 + M2) * V_REL, rel=tol)
        assert archived_peak(data["links/fc/penetration"]) == pytest.approx(
            pen_max, rel=max(tol, 1e-8))


def test_a_mass_shuttles_between_two_planes(tmp_path):
    """A free mass between two planes (``obstacle = "two_planes"``, gap g on each side),
    launched from the middle at V0: it flies 2 g between the contacts, each as long as the
    quadrature gives, and bounces forever with the period 2 (2 g / V0 + t_c): seven impacts
    over 3.2 periods, half a period apart (exact scheme, and Newmark with located
    events)."""
    e_max = 0.5 * MASS * V0 ** 2
    pen_max = brentq(lambda q: e_max - curve_energy(q), 0.0, 0.1, xtol=1e-16)
    t_c = contact_time(lambda q: V0 ** 2 - 2.0 * curve_energy(q) / MASS, pen_max, MASS)
    period = 2.0 * (2.0 * GAP / V0 + t_c)
    for scheme, tol in (("exact", 1e-11), ("newmark", 1e-4)):
        text = one_mass_toml(MASS, "", "velocity", V0) + f"""
{force_curve_link(["A"], extra='obstacle = "two_planes"')}
{transient("physical", scheme, end=3.2 * period, step=STEP, links=("fc",))}
events = "locate"
"""
        data = run(tmp_path, text, name=scheme)["a"]
        impacts = [float(e[0]) for e in data["events"] if e[1].decode() == "impact"]
        assert len(impacts) == 7, (scheme, impacts)
        # alternately on the + and - planes, half a period apart
        gaps = np.diff(impacts)
        print(f"{scheme}: half periods {gaps} against {period / 2}")
        assert np.max(np.abs(gaps - 0.5 * period)) < tol * period
        peak = archived_peak(data["links/fc/penetration"])
        assert peak == pytest.approx(pen_max, rel=max(tol, 1e-8))


# ------------------------------------------------------------------------------------------
def test_its_group_names_the_force_penetration_curve(tmp_path):
    """``fem post hysteresis`` draws a force-curve link: its group's ``loop`` names the
    penetration and the contact force, and the loop of an elastic contact encloses no area
    (the curve is walked in and out along the same path)."""
    import postpro
    from postpro.jobs import hysteresis

    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(launch_study("physical", "newmark", "locate")))
    out = tmp_path / "study.h5"
    from fem.runner import run_study

    assert run_study(path, out).failed_analysis is None
    with postpro.open(out) as results:
        analysis = results.analysis("a")
        assert hysteresis.loop_series(analysis, "fc") == ("penetration", "normal_force")
        loops = hysteresis.link_loops(analysis, "fc")
        assert loops.units == ("m", "N")


# ------------------------------------------------------------------------------------------
# bad input
def bad_study(keys):
    return bad_link_toml("force_curve", "fc", keys, head="gap = 0.0\n")


BAD = [
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-3, 100.0], [0.5e-3, 150.0]]',
     ["link[1].curve", "penetrations must increase strictly", "point 2"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-3, 100.0], [2e-3, 100.0]]',
     ["link[1].curve", "forces must increase strictly", "point 2"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-3, 100.0], [2e-3, 90.0]]',
     ["link[1].curve", "forces must increase strictly"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[-1e-3, 100.0]]',
     ["link[1].curve", "penetrations must increase strictly from 0"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-3, -100.0]]',
     ["link[1].curve", "forces must increase strictly from 0"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[0.0, 10.0], [1e-3, 100.0]]',
     ["link[1].curve", "penetrations must increase strictly from 0"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[0.0, 0.0]]', ["link[1].curve", "origin alone"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [1e-3, 100.0]',
     ["link[1].curve", "list of [penetration, force] points"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-300, 1e300]]',
     ["link[1].curve", "not a finite stiffness"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [' + ", ".join(
        f"[{i}e-3, {i}e2]" for i in range(1, 19)) + "]",
     ["link[1].curve", "at most 16 points"]),
    ('curve = [[1e-3, 100.0]]', ["link[1].normal", "missing"]),
    ('normal = [1.0, 0.0, 0.0]', ["link[1].curve", "missing"]),
    ('obstacle = "circle"\naxis = [0.0, 0.0, 1.0]\ncurve = [[1e-3, 100.0]]',
     ["link[1].obstacle", "acts along a normal"]),
    ('normal = [1.0, 0.0, 0.0]\ncurve = [[1e-3, 100.0]]\nstiffness = 1e5',
     ["link[1]", "unknown key 'stiffness'"]),
]


@pytest.mark.parametrize("keys, expected", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_curves_are_refused_naming_the_key(tmp_path, capsys, keys, expected):
    assert_refused(tmp_path, capsys, bad_study(keys), expected)


@pytest.mark.parametrize("scheme", ["rk54", "rk32", "adaptive2"])
def test_a_contact_shorter_than_a_step_is_found(tmp_path, scheme):
    """A mass launched slowly at a stiff one-segment curve (modal basis, adaptive schemes):
    its contact (2.0 ms) is shorter than the steps of the smooth flight (up to 5 ms, the
    default largest step). The contact is followed on the step's dense output, found and
    located: one impact at the flight's end, the contact half the period of the curve's
    stiffness, the rebound at the launch speed."""
    basis = "modal"
    k = (math.pi / 2.0e-3) ** 2 * MASS                  # half a period: 2 ms
    speed = 0.01
    text = one_mass_toml(MASS, "stiffness = 1e-3", "velocity", speed) + f"""
{force_curve_link(["A"], gap=2.1e-3, curve=[(1.0e-3, k * 1.0e-3)])}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=0.5, step=4e-3, links=("fc",))}
events = "locate"
"""
    data = run(tmp_path, text)["a"]
    kinds = [e[1].decode() for e in data["events"]]
    times = [float(e[0]) for e in data["events"]]
    assert kinds == ["impact", "separation"], kinds
    assert times[0] == pytest.approx(2.1e-3 / speed, rel=1e-3)
    assert times[1] - times[0] == pytest.approx(2.0e-3, rel=1e-4)
    assert data["velocity"][-1, 0] == pytest.approx(-speed, rel=1e-4)
