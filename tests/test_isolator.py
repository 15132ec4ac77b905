"""Friction pendulum bearings (``kind = "isolator"``, ``device = "pendulum"``) against closed
forms written here, in every scheme and on both bases of the catalog that offer them:

* the period 2 pi sqrt(R / g) of a mass on a frictionless bearing under its weight, whatever
  the mass (two masses twenty times apart, in one study);
* the free decay under a constant friction coefficient: each half cycle loses 2 mu R of
  amplitude and lasts pi sqrt(R / g); the slider stops at the first reversal where
  |u| <= mu R; the friction work is mu W times the path;
* an imposed slow cycle of amplitude u0: the loop area of the horizontal force is 4 mu W u0
  (and, with a coefficient that grows with the speed, the quadrature of mu(v) W |du| over the
  cycle), as ``fem post hysteresis`` reads it;
* an imposed circular orbit of radius r at the rate w: the friction force is mu(r w) W,
  opposite to the 2-D velocity (both horizontal directions coupled), and it works at the
  rate mu(r w) W r w;
* uplift: a slider thrown upwards leaves the bearing where the spring's compression vanishes
  (the harmonic phase's closed form) and flies a ballistic arc, 2 v / g long, with no force
  from the bearing at all: its horizontal velocity is constant;
* input that validation refuses, and the exact scheme's refusal.

The model (docs/study_format.md): the compression p = |u|^2 / (2 R) - a . d, the vertical
load N = k_v p while p > 0, the force on the node N a - (N / R) u - f. A mass m under its
weight W = m g rests at the start at its static compression W / k_v, at the height
|u0|^2 / (2 R) - W / k_v of the surface below its initial horizontal position, so that
N = W from the start (no vertical ringing). The closed forms hold for a constant N = W and a
small |u| / R: the rise of the slider along the surface changes N by W |u'|^2 / (g R) and
the period by a fraction of order (|u| / R)^2, which the amplitudes here keep below 1e-4.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from scipy.integrate import quad

from fem import catalog
from fem.cli import EXIT_INVALID, main
from fem.errors import NotAvailableError
from fem.runner import run_study
from test_maxwell import ACCURACY, ROWS, _ids, assert_refused, modes, run, transient

G = 9.81                     # m/s^2
STIFF = 1.0e4                # k_v / m (1/s^2): the vertical frequency 100 rad/s
TRANSIENT = [key for key in ROWS if key[1] != "exact"]


def require(basis, scheme, feature="isolator.pendulum"):
    """Every scheme but the exact one offers isolators (the catalog's reason otherwise)."""
    row = catalog.SCHEMES[(basis, scheme)]
    assert row.offers(feature), (basis, scheme, row.reason(feature))


def bearing(name, node, radius, kv, extra=""):
    return (f'[[link]]\nkind = "isolator"\ndevice = "pendulum"\nname = "{name}"\n'
            f'nodes = ["{node}"]\nradius = {radius!r}\nvertical_stiffness = {kv!r}\n{extra}')


def mass_block(node, mass, *, dx=0.0, dz=0.0, vx=0.0, vy=0.0, vz=0.0):
    """A node's mass, its weight along -Z and its initial state."""
    return (f'[[discrete]]\nnodes = ["{node}"]\nmass = {mass!r}\n'
            f'[[load]]\nnodes = ["{node}"]\nFZ = {-mass * G!r}\n'
            f'[[initial]]\nnodes = ["{node}"]\n'
            f"displacement = {{ DX = {dx!r}, DZ = {dz!r} }}\n"
            f"velocity = {{ DX = {vx!r}, DY = {vy!r}, DZ = {vz!r} }}\n")


def resting(u0, radius, kv, mass):
    """The height of a slider at rest on the surface at the horizontal distance u0 from its
    centre, at its static compression: N = W."""
    return u0 * u0 / (2.0 * radius) - mass * G / kv


def study(basis, scheme, body, *, end, step, links, dofs, nodes="P = [0.0, 0.0, 0.0]"):
    return f"""
[mesh.nodes]
{nodes}
[model]
components = ["DX", "DY", "DZ"]
{body}
{modes(dofs) if basis == "modal" else ""}
{transient(basis, scheme, end=end, step=step, links=links)}
"""


def crossings(t, x):
    """The instants where x changes sign (linear interpolation)."""
    i = np.nonzero(np.sign(x[1:]) * np.sign(x[:-1]) < 0)[0]
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


def reversals(t, x, swing):
    """(instants, values) of the extrema of x whose swing from the last one kept exceeds
    ``swing`` (the stick's tiny oscillations make no reversal)."""
    kept_t, kept_x = [t[0]], [x[0]]
    i = np.nonzero(np.diff(np.sign(np.diff(x))) != 0)[0] + 1
    for k in i:
        if abs(x[k] - kept_x[-1]) > swing:
            kept_t.append(t[k])
            kept_x.append(x[k])
    return np.array(kept_t[1:]), np.array(kept_x[1:])


def balance(data):
    return (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
            + data["energy/dissipated"] - data["energy/external_work"])


# ------------------------------------------------------------------------------------------
# 1. the period, whatever the mass
R1, A1 = 1.0, 0.02                        # m: |u| / R = 0.02
MASSES = (100.0, 2000.0)                  # kg


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_period_of_a_frictionless_bearing_whatever_the_mass(tmp_path, basis, scheme):
    """Two masses, 100 and 2000 kg, each on its frictionless bearing of radius 1 m, released
    at 0.02 m: both swing at the period 2 pi sqrt(R / g) (the zero crossings of the
    horizontal displacement, half a period apart), the vertical load stays W, and the
    energy balance closes."""
    require(basis, scheme)
    nodes = "P = [0.0, 0.0, 0.0]\nQ = [5.0, 0.0, 0.0]"
    body = ""
    for node, m in zip("PQ", MASSES):
        kv = STIFF * m
        body += mass_block(node, m, dx=A1, dz=resting(A1, R1, kv, m))
        body += bearing(f"fp{node}", node, R1, kv, "friction = 0.0\n")
    period = 2.0 * math.pi * math.sqrt(R1 / G)
    data = run(tmp_path, study(basis, scheme, body, end=2.2 * period, step=2e-3,
                               links=("fpP", "fpQ"), dofs=6, nodes=nodes))["a"]
    t = data["time"]
    for node, m in zip("PQ", MASSES):
        zeros = crossings(t, data[f"links/fp{node}/displacement_1"])
        assert len(zeros) >= 4
        halves = np.diff(zeros)
        print(f"{node} ({m:g} kg): half periods {halves}, closed form {period / 2:.9f}")
        assert np.max(np.abs(halves - period / 2)) < 1e-3 * period
        load = data[f"links/fp{node}/vertical_load"]
        assert np.max(np.abs(load - m * G)) < 1e-3 * m * G
        assert np.all(data[f"links/fp{node}/state"] == 1.0)
        assert np.max(np.abs(data[f"links/fp{node}/friction_force"])) == 0.0
        assert np.max(np.abs(data[f"links/fp{node}/dissipated"])) == 0.0
    energy = m * G * A1 ** 2 / (2.0 * R1)
    # (semi-implicit Euler, of order one, keeps the energy to its own order)
    bound = 1e-3 if scheme == "euler" else 1e-4
    assert np.max(np.abs(balance(data) - balance(data)[0])) < bound * energy


def test_a_bearing_between_two_nodes(tmp_path):
    """The slider P on a concave plate B (the link's second node) that an imposed motion
    carries at a constant horizontal velocity: relative to the plate, P swings at
    2 pi sqrt(R / g) about it (d = u_P - u_B), the plate's motion being uniform (newmark)."""
    m = 100.0
    kv = STIFF * m
    speed = 0.5
    nodes = "P = [0.0, 0.0, 1.0]\nB = [0.0, 0.0, 0.0]"
    body = (mass_block("P", m, dx=A1, dz=resting(A1, R1, kv, m), vx=speed)
            + '[functions.ramp]\nexpression = "t"\n'
            + f'[[constraint]]\nnodes = ["B"]\nDX = {speed!r}\nfunction = "ramp"\n'
            + '[[constraint]]\nnodes = ["B"]\nDY = 0.0\nDZ = 0.0\n'
            + bearing("fp", "P", R1, kv, "friction = 0.0\n").replace('nodes = ["P"]',
                                                                     'nodes = ["P", "B"]'))
    period = 2.0 * math.pi * math.sqrt(R1 / G)
    data = run(tmp_path, study("physical", "newmark", body, end=2.2 * period, step=2e-3,
                               links=("fp",), dofs=3, nodes=nodes))["a"]
    t, u = data["time"], data["links/fp/displacement_1"]
    assert u[0] == pytest.approx(A1, rel=1e-12)
    halves = np.diff(crossings(t, u))
    assert len(halves) >= 3
    assert np.max(np.abs(halves - period / 2)) < 1e-3 * period
    assert np.max(np.abs(data["links/fp/vertical_load"] - m * G)) < 1e-3 * m * G


# ------------------------------------------------------------------------------------------
# 2. free decay under Coulomb friction
R2, MU2, A2, M2 = 2.0, 0.01, 0.105, 100.0       # mu R = 0.02 m


def decay(a0, mu_r, limit=10):
    """The reversals of a free decay from a0 at rest: each half cycle about +-mu R, until the
    slider stops at a reversal within mu R of the centre."""
    out = []
    u = a0
    while abs(u) > mu_r and len(out) < limit:
        s = 1.0 if u > 0 else -1.0
        u = -(u - 2.0 * s * mu_r)
        out.append(u)
    return out


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_free_decay_under_constant_friction(tmp_path, basis, scheme):
    """R = 2 m, mu = 0.01 (mu R = 0.02 m), released at 0.105 m: the reversals
    -0.065, 0.025, 0.015 m (2 mu R lost each half cycle, pi sqrt(R / g) apart), then the
    slider sticks there (|u| <= mu R); the friction work mu W times the path 0.27 m, the
    link's and the energy balance's."""
    require(basis, scheme)
    kv = STIFF * M2
    body = mass_block("P", M2, dx=A2, dz=resting(A2, R2, kv, M2))
    body += bearing("fp", "P", R2, kv, f"friction = {MU2!r}\n")
    half = math.pi * math.sqrt(R2 / G)
    data = run(tmp_path, study(basis, scheme, body, end=4.0 * half, step=2e-3, links=("fp",),
                               dofs=3))["a"]
    t, u = data["time"], data["links/fp/displacement_1"]
    expected = decay(A2, MU2 * R2)
    assert expected == pytest.approx([-0.065, 0.025, 0.015], abs=1e-12)
    times, values = reversals(t, u, 1e-3)
    print(f"reversals {values} at {times}; closed form {expected}")
    assert len(values) == len(expected)
    assert np.max(np.abs(values - expected)) < 2e-4
    # each slide lasts half a period: the first two (the last, a swing of 0.01 m, ends too
    # slowly for its instant to be told from its value: within 2e-4 m of its end for 0.1 s)
    assert np.max(np.abs(times[:2] - half * np.arange(1, 3))) < 0.01 * half
    # stopped within mu R, and stuck there
    after = t > times[-1] + 0.1 * half
    assert np.max(np.abs(u[after] - expected[-1])) < 2e-4
    assert abs(u[-1]) <= MU2 * R2
    weight = M2 * G
    path = A2 - expected[0] + sum(abs(b - a) for a, b in zip(expected, expected[1:]))
    work = MU2 * weight * path
    dissipated = data["links/fp/dissipated"]
    print(f"friction work {dissipated[-1]:.6f} J, closed form {work:.6f} J, "
          f"energy/dissipated {data['energy/dissipated'][-1]:.6f} J")
    assert dissipated[-1] == pytest.approx(work, rel=5e-3)
    assert data["energy/dissipated"][-1] == pytest.approx(work, rel=5e-3)
    # sliding, the friction force is mu N; N is W to within the slider's rise along the
    # surface, W |u'|^2 / (g R) < 0.3 %
    sliding = data["links/fp/sliding_speed"] > 1e-3
    load = data["links/fp/vertical_load"]
    assert np.max(np.abs(data["links/fp/friction_force"][sliding] - MU2 * load[sliding])) \
        < 1e-9 * MU2 * weight
    assert np.max(np.abs(load - weight)) < 5e-3 * weight
    energy = weight * A2 ** 2 / (2.0 * R2)
    assert np.max(np.abs(balance(data) - balance(data)[0])) < 2e-3 * energy


# ------------------------------------------------------------------------------------------
# 3. an imposed slow cycle, and the hysteresis loop
R3, M3, U3, W3 = 1.0, 100.0, 0.05, 1.0          # m, kg, m, rad/s
SLOW, FAST, RATE = 0.04, 0.08, 20.0             # mu(v) = 0.08 - 0.04 exp(-20 v)


def mu_of(v, slow=SLOW, fast=FAST, rate=RATE):
    return fast - (fast - slow) * np.exp(-rate * np.abs(v))


def imposed(basis, scheme, friction, *, end, step, y=False, r=U3, w=W3):
    """Node P, its DX (and with ``y`` its DY: a circle) imposed: r sin(w t) (r cos(w t),
    r sin(w t)); its DZ free, a mass M3 under its weight, at rest on the surface at its
    static compression (the imposed motion keeps |u| constant on the circle)."""
    kv = STIFF * M3
    u0 = r if y else 0.0
    functions = f'[functions.s]\nexpression = "sin({w!r}*t)"\n'
    if y:
        functions += f'[functions.c]\nexpression = "cos({w!r}*t)"\n'
        constraints = (f'[[constraint]]\nnodes = ["P"]\nDX = {r!r}\nfunction = "c"\n'
                       f'[[constraint]]\nnodes = ["P"]\nDY = {r!r}\nfunction = "s"\n')
    else:
        constraints = (f'[[constraint]]\nnodes = ["P"]\nDX = {r!r}\nfunction = "s"\n'
                       f'[[constraint]]\nnodes = ["P"]\nDY = 0.0\n')
    body = (f'[[discrete]]\nnodes = ["P"]\nmass = {M3!r}\n'
            f'[[load]]\nnodes = ["P"]\nFZ = {-M3 * G!r}\n'
            f'[[initial]]\nnodes = ["P"]\ndisplacement = {{ DZ = {resting(u0, R3, kv, M3)!r} }}\n'
            + functions + constraints + bearing("fp", "P", R3, kv, friction))
    text = study(basis, scheme, body, end=end, step=step, links=("fp",), dofs=1)
    if ACCURACY[(basis, scheme)].adaptive:
        # the imposed motion moves no free dof: the step control would take the largest step,
        # over which a sliding direction is held
        text = text.replace("tolerance = ", f"max_step = {step!r}\ntolerance = ")
    return text


def loop_area(u, f):
    """oint f du by the trapezoidal rule, clockwise positive."""
    return float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(u)))


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_loop_area_under_an_imposed_slow_cycle(tmp_path, basis, scheme):
    """u = u0 sin(w t), u0 = 0.05 m, w = 1 rad/s, W = 981 N, mu = 0.04: over the second cycle
    the loop of the horizontal force against the displacement encloses 4 mu W u0, which the
    link's friction work gives too; the force is (W / R) u +- mu W."""
    require(basis, scheme)
    period = 2.0 * math.pi / W3
    data = run(tmp_path, imposed(basis, scheme, f"friction = {SLOW!r}\n", end=2 * period,
                                 step=period / 1000))["a"]
    t, u, f = data["time"], data["links/fp/displacement_1"], data["links/fp/force_1"]
    weight = M3 * G
    second = t >= period - 1e-9
    area = loop_area(u[second], f[second])
    closed = 4.0 * SLOW * weight * U3
    dissipated = data["links/fp/dissipated"]
    work = dissipated[-1] - np.interp(period, t, dissipated)
    print(f"loop area {area:.6f} J, friction work {work:.6f} J, closed form {closed:.6f} J")
    assert area == pytest.approx(closed, rel=5e-3)
    assert work == pytest.approx(closed, rel=5e-3)
    # away from the reversals the bearing slides: f = (W / R) u + mu W sign(u')
    v = U3 * W3 * np.cos(W3 * t)
    slide = np.abs(v) > 0.2 * U3 * W3
    expect = weight * u / R3 + SLOW * weight * np.sign(v)
    assert np.max(np.abs(f[slide] - expect[slide])) < 2e-3 * SLOW * weight
    assert np.max(np.abs(data["links/fp/vertical_load"] - weight)) < 1e-3 * weight


def test_loop_area_with_a_coefficient_that_grows_with_speed_and_fem_post_hysteresis(tmp_path):
    """mu(v) = 0.08 - 0.04 exp(-20 v) under the same cycle (newmark): each cycle's loop
    area, as ``fem post hysteresis`` cuts the cycles, and its friction work, against the
    quadrature of mu(|u'|) W |u'| over a period."""
    import postpro
    from postpro.jobs import hysteresis

    period = 2.0 * math.pi / W3
    text = imposed("physical", "newmark", f"friction_slow = {SLOW!r}\nfriction_fast = "
                   f"{FAST!r}\nrate_parameter = {RATE!r}\n", end=3 * period,
                   step=period / 2000)
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / "study.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    weight = M3 * G

    def power(s):
        v = U3 * W3 * math.cos(W3 * s)
        return mu_of(v) * weight * abs(v)
    closed = quad(power, 0.0, period, limit=200)[0]
    assert closed > 4.0 * SLOW * weight * U3 * 1.05        # the rate shows
    with postpro.open(out) as results:
        loops = hysteresis.link_loops(results.analysis("a"), "fp")
        assert loops.series == ("displacement_1", "force_1") and loops.units == ("m", "N")
        assert len(loops.cycles) == 2
        for cycle in loops.cycles:
            print(f"cycle {cycle.number}: area {cycle.area:.6f} J, dissipated "
                  f"{cycle.dissipated:.6f} J, quadrature {closed:.6f} J")
            assert cycle.area == pytest.approx(closed, rel=5e-3)
            assert cycle.dissipated == pytest.approx(closed, rel=5e-3)


# ------------------------------------------------------------------------------------------
# 4. a circular orbit: the friction force is a 2-D vector
R4 = 0.1                                        # m, the orbit's radius
W4 = 2.0                                        # rad/s: the speed r w = 0.2 m/s


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_friction_on_a_circular_orbit_opposes_the_2d_velocity(tmp_path, basis, scheme):
    """(u1, u2) = r (cos w t, sin w t): the slider slides at the constant speed r w and the
    friction force is mu(r w) W, opposite to the velocity r w (-sin w t, cos w t) (to within
    the turn of a step), both directions at once; it works at the rate mu(r w) W r w."""
    require(basis, scheme)
    period = 2.0 * math.pi / W4
    step = period / 1000
    data = run(tmp_path, imposed(basis, scheme, f"friction_slow = {SLOW!r}\nfriction_fast = "
                                 f"{FAST!r}\nrate_parameter = {RATE!r}\n", end=period,
                                 step=step, y=True, r=R4, w=W4))["a"]
    t = data["time"]
    weight = M3 * G
    speed = R4 * W4
    mu = float(mu_of(speed))
    u1, u2 = data["links/fp/displacement_1"], data["links/fp/displacement_2"]
    assert np.max(np.abs(u1 - R4 * np.cos(W4 * t))) < 1e-9
    assert np.max(np.abs(u2 - R4 * np.sin(W4 * t))) < 1e-9
    load = data["links/fp/vertical_load"]
    assert np.max(np.abs(load - weight)) < 1e-3 * weight
    later = t > 0.05 * period
    friction = data["links/fp/friction_force"][later]
    print(f"friction {friction.min():.6f}..{friction.max():.6f} N, closed form "
          f"{mu * weight:.6f} N")
    assert np.max(np.abs(friction - mu * weight)) < 2e-3 * mu * weight
    assert np.max(np.abs(data["links/fp/sliding_speed"][later] - speed)) < 1e-6 * speed
    # the friction part of the horizontal force the bearing carries, against the velocity
    f1 = data["links/fp/force_1"] - load * u1 / R3
    f2 = data["links/fp/force_2"] - load * u2 / R3
    along = (-np.sin(W4 * t), np.cos(W4 * t))
    parallel = f1 * along[0] + f2 * along[1]
    normal = -f1 * along[1] + f2 * along[0]
    assert np.max(np.abs(parallel[later] - mu * weight)) < 2e-3 * mu * weight
    assert np.max(np.abs(normal[later])) < 2.0 * W4 * step * mu * weight
    dissipated = data["links/fp/dissipated"]
    rate = mu * weight * speed
    assert dissipated[-1] - np.interp(0.1 * period, t, dissipated) == pytest.approx(
        rate * 0.9 * period, rel=2e-3)


# ------------------------------------------------------------------------------------------
# 5. uplift
R5, M5, V5, H5 = 1.0, 100.0, 1.0, 0.3        # m, kg, m/s upwards, m/s horizontally
MU5 = 0.02                                   # Q keeps sliding through its landing


def first_flight(state):
    """(first, last) archived rows of the first run of state 0."""
    first = int(np.argmax(state == 0.0))
    assert state[first] == 0.0
    return first, first + int(np.argmax(state[first:] == 1.0)) - 1


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_uplift_leaves_no_force_from_the_bearing(tmp_path, basis, scheme):
    """Two sliders at rest at their static compression delta = W / k_v, thrown upwards at
    1 m/s; Q also at 0.3 m/s horizontally (mu = 0.02: it slides through its landing). On
    the spring, z = -delta + (v / w_v) sin(w_v t): P lifts off where z = 0, at asin(w_v delta / v) / w_v, at the speed
    sqrt(v^2 - g delta), and lands 2 v_l / g later. In flight both bearings carry nothing:
    no vertical load, no horizontal force, no friction; Q's horizontal velocity is
    constant."""
    require(basis, scheme)
    kv = STIFF * M5
    delta = M5 * G / kv
    nodes = "P = [0.0, 0.0, 0.0]\nQ = [5.0, 0.0, 0.0]"
    body = (mass_block("P", M5, dz=-delta, vz=V5) + bearing("fpP", "P", R5, kv,
                                                             f"friction = {MU5!r}\n")
            + mass_block("Q", M5, dz=-delta, vx=H5, vz=V5) + bearing("fpQ", "Q", R5, kv,
                                                                      f"friction = {MU5!r}\n"))
    wv = math.sqrt(kv / M5)
    t_off = math.asin(wv * delta / V5) / wv
    v_off = math.sqrt(V5 ** 2 - G * delta)
    t_on = t_off + 2.0 * v_off / G
    data = run(tmp_path, study(basis, scheme, body, end=t_on + 0.05, step=5e-4,
                               links=("fpP", "fpQ"), dofs=6, nodes=nodes))["a"]
    t = data["time"]
    # the first flight (the undamped spring throws the slider up again after it lands)
    first, last = first_flight(data["links/fpP/state"])
    print(f"flight {t[first]:.6f}..{t[last]:.6f} s; closed form {t_off:.6f}..{t_on:.6f}")
    assert t[first] - 5e-4 <= t_off <= t[first] + 1e-9
    assert t[last] - 1e-9 <= t_on <= t[last] + 5e-4 + 1e-4
    for name in ("fpP", "fpQ"):
        up = data[f"links/{name}/state"] == 0.0
        assert up.sum() > 100
        for series in ("vertical_load", "force_1", "force_2", "friction_force"):
            assert np.max(np.abs(data[f"links/{name}/{series}"][up])) == 0.0, (name, series)
    # Q's horizontal motion in flight: a straight line in time
    first, last = first_flight(data["links/fpQ/state"])
    tq, xq = t[first:last + 1], data["links/fpQ/displacement_1"][first:last + 1]
    fit = np.polyfit(tq, xq, 1)
    assert np.max(np.abs(np.polyval(fit, tq) - xq)) < 1e-9
    assert 0.0 < fit[0] < H5


# ------------------------------------------------------------------------------------------
# 6. what validation refuses
VALID = study("physical", "newmark",
              mass_block("P", 100.0) + bearing("fp", "P", 1.0, 1e6, "friction = 0.05\n"),
              end=0.01, step=1e-3, links=("fp",), dofs=3)
LINK = bearing("fp", "P", 1.0, 1e6, "friction = 0.05\n")


def with_link(new):
    assert VALID.count(LINK) == 1
    return VALID.replace(LINK, new)


BAD = [
    ("missing_radius", LINK.replace("radius = 1.0\n", ""), ["link[1].radius", "missing"]),
    ("negative_radius", LINK.replace("radius = 1.0", "radius = -1.0"), ["link[1].radius"]),
    ("zero_stiffness", LINK.replace("vertical_stiffness = 1000000.0",
                                    "vertical_stiffness = 0.0"),
     ["link[1].vertical_stiffness"]),
    ("no_friction", LINK.replace("friction = 0.05\n", ""), ["link[1].friction", "missing"]),
    ("negative_friction", LINK.replace("friction = 0.05", "friction = -0.05"),
     ["link[1].friction"]),
    ("both_frictions", LINK + "friction_fast = 0.1\n", ["link[1].friction_fast", "not both"]),
    ("fast_below_slow", LINK.replace("friction = 0.05\n", "friction_slow = 0.05\n"
                                     "friction_fast = 0.02\nrate_parameter = 10.0\n"),
     ["link[1].friction_fast", "friction_slow"]),
    ("missing_rate", LINK.replace("friction = 0.05\n", "friction_slow = 0.05\n"
                                  "friction_fast = 0.08\n"),
     ["link[1].rate_parameter", "missing"]),
    ("zero_vertical", LINK + "vertical = [0.0, 0.0, 0.0]\n", ["link[1].vertical"]),
    ("oblique_horizontal", LINK + "horizontal = [1.0, 0.0, 1.0]\n",
     ["link[1].horizontal", "orthogonal"]),
    ("unknown_device", LINK.replace('device = "pendulum"', 'device = "rubber"'),
     ["link[1].device", "rubber"]),
    ("unknown_key", LINK + "damping = 3.0\n", ["link[1]", "unknown key 'damping'"]),
    ("sticking_stiffness", LINK + "sticking_stiffness = -1.0\n",
     ["link[1].sticking_stiffness"]),
]


def test_the_valid_study_runs(tmp_path):
    run(tmp_path, VALID)


@pytest.mark.parametrize("link, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_bearing_is_refused(tmp_path, capsys, link, expected):
    """``fem run`` exits with code 2 and one error line naming the key; no results file."""
    assert_refused(tmp_path, capsys, with_link(link), expected)


def test_a_vertical_outside_the_model_is_refused(tmp_path, capsys):
    """The vertical load needs the vertical translation in the model."""
    text = VALID.replace('components = ["DX", "DY", "DZ"]', 'components = ["DX", "DY"]')
    text = text.replace("FZ = -981.0", "FX = 0.0").replace(", DZ = 0.0 }", " }").replace(
        ", DZ = 0.0 }", " }")
    path = tmp_path / "study.toml"
    path.write_text(text)
    out = tmp_path / "results.h5"
    assert main(["run", str(path), "--out", str(out)]) == EXIT_INVALID
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: link[1].vertical")
    assert "DZ" in lines[0] and not out.exists()


@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_the_exact_scheme_refuses_isolators_with_the_catalogs_reason(tmp_path, basis):
    """Neither device is linear between events: the exact scheme refuses both, with the
    feature's reason."""
    row = catalog.SCHEMES[(basis, "exact")]
    for feature in ("isolator.pendulum", "isolator.anti_seismic"):
        assert not row.offers(feature)
        assert "not linear" in row.reason(feature) or "neither is linear" in \
            row.reason(feature)
    path = tmp_path / "exact.toml"
    path.write_text(study(basis, "exact", mass_block("P", 100.0)
                          + bearing("fp", "P", 1.0, 1e6, "friction = 0.05\n"),
                          end=0.01, step=1e-3, links=("fp",), dofs=3))
    with pytest.raises(NotAvailableError) as caught:
        run_study(path, tmp_path / "exact.h5")
    assert "link[1].device" in str(caught.value)
    assert row.reason("isolator.pendulum") in str(caught.value)
