"""Shock links in physical space with the Newmark family (Newmark, HHT, central differences),
against solutions computed here: closed forms, and scipy's solve_ivp carried through the
contact switches by its event location."""

from __future__ import annotations

import textwrap

import h5py
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from conftest import ROOT
from fem.cli import main
from fem.runner import run_study
from postpro.energy import energy_balance_error, link_force_error

SCHEMES = ("newmark", "hht", "central_difference")
ENERGY = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


def run(tmp_path, text, name="study"):
    """Run a study written inline; {analysis: {dataset path: array}} plus events."""
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / f"{name}.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    return read(out)


def read(out):
    found = {}
    with h5py.File(out) as f:
        for name, g in f["analyses"].items():
            data = {}
            g.visititems(lambda key, obj: data.__setitem__(key, obj[()])
                         if isinstance(obj, h5py.Dataset) else None)
            data["events"] = [(float(e["time"]), _text(e["kind"]), _text(e["link"]),
                               _text(e["detail"])) for e in g["events"][()]] \
                if "events" in g else []
            data["link_attrs"] = {k: dict(v.attrs) for k, v in g["links"].items()} \
                if "links" in g else {}
            found[name] = data
    return found


def _text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def hybrid(rhs, functions, y0, t_end, closed):
    """solve_ivp through contact switches: ``rhs(t, y, closed)`` with ``closed`` a tuple of
    contact states; contact i switches where ``functions[i](y)`` crosses 0 (closed where > 0).
    Returns the switches [(t, i, closed)] and the solution at any times."""
    t0, y, closed = 0.0, np.asarray(y0, float), tuple(closed)
    pieces, switches = [], []
    while True:
        watch = []
        for i, g in enumerate(functions):
            def event(t, y, g=g):
                return g(y)
            event.terminal = True
            event.direction = -1 if closed[i] else 1
            watch.append(event)
        sol = solve_ivp(lambda t, y: rhs(t, y, closed), (t0, t_end), y, method="DOP853",
                        rtol=1e-12, atol=1e-14, dense_output=True, events=watch)
        pieces.append((t0, sol.t[-1], sol.sol))
        if sol.status != 1:
            break
        i = next(j for j, te in enumerate(sol.t_events) if len(te))
        t0, y = sol.t_events[i][0], sol.y_events[i][0]
        closed = tuple(not c if j == i else c for j, c in enumerate(closed))
        switches.append((t0, i, closed[i]))

    def at(times):
        out = np.empty((len(times), len(y0)))
        for k, t in enumerate(times):
            out[k] = next(s(t) for a, b, s in pieces if a <= t <= b)
        return out
    return switches, at


# ----------------------------------------------------------------------------- V1

G, MASS, K, V0, H = 10.0, 1.0, 100.0, -1.0, -2.0
T_IMPACT = (np.sqrt(41.0) - 1.0) / 10.0


def v1_closed_form(c, release):
    """Impact and detachment times and z(t) of V1 (contact damping c), built here."""
    tc = (np.sqrt(V0 ** 2 - 2 * G * H) + V0) / G
    vin = V0 - G * tc
    w = np.sqrt(K / MASS)
    zeta = c / (2 * np.sqrt(K * MASS))
    wd = w * np.sqrt(1 - zeta ** 2)
    zeq = H - MASS * G / K
    a, b = H - zeq, (vin + zeta * w * (H - zeq)) / wd

    def zc(s):
        return zeq + np.exp(-zeta * w * s) * (a * np.cos(wd * s) + b * np.sin(wd * s))

    def vc(s):
        return np.exp(-zeta * w * s) * ((-zeta * w * a + wd * b) * np.cos(wd * s)
                                        + (-zeta * w * b - wd * a) * np.sin(wd * s))
    def f(s):
        """Zero at the detachment: back at ground level, or the contact force back to 0."""
        if release == "gap" or c == 0:
            return zc(s) - H
        return K * (H - zc(s)) - c * vc(s)
    s = np.linspace(1e-6, 2 * np.pi / wd, 20001)
    i = np.flatnonzero(np.sign(f(s[1:])) != np.sign(f(s[:-1])))[0]
    sd = brentq(f, s[i], s[i + 1], xtol=1e-15, rtol=1e-15)
    td = tc + sd

    def z(t):
        t = np.asarray(t, float)
        free = V0 * t - 0.5 * G * t * t
        after = zc(sd) + vc(sd) * (t - td) - 0.5 * G * (t - td) ** 2
        return np.where(t < tc, free, np.where(t < td, zc(np.maximum(t - tc, 0.0)), after))
    return tc, td, z


def v1_text(scheme, events, c, release, dt=1e-3):
    return f"""
    [mesh.nodes]
    NO1 = [0.0, 0.0, 0.0]
    [[discrete]]
    nodes = ["NO1"]
    mass = 1.0
    [[constraint]]
    nodes = ["NO1"]
    DX = 0.0
    DY = 0.0
    [[load]]
    kind = "gravity"
    g = 10.0
    [[initial]]
    nodes = ["NO1"]
    velocity = {{ DZ = -1.0 }}
    [[link]]
    name = "ground"
    kind = "shock"
    nodes = ["NO1"]
    normal = [0.0, 0.0, -1.0]
    gap = 2.0
    stiffness = 100.0
    damping = {c}
    release = "{release}"
    [[analysis]]
    name = "a"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.2
    step = {dt}
    links = ["ground"]
    events = "{events}"
    """


@pytest.fixture(scope="module")
def v1_studies(tmp_path_factory):
    out = tmp_path_factory.mktemp("v1")
    found = {}
    for name in ("v1a_falling_mass_elastic", "v1b_falling_mass_absorbent"):
        report = run_study(ROOT / "studies" / f"{name}.toml", out / f"{name}.h5")
        assert report.checks_passed
        found.update(read(out / f"{name}.h5"))
    return found


@pytest.mark.parametrize("analysis,c,release", [
    ("newmark", 0.0, "force"), ("newmark_gap", 5.0, "gap"), ("newmark_force", 5.0, "force")])
def test_v1_newmark_studies_against_closed_form(v1_studies, analysis, c, release):
    tc, td, z = v1_closed_form(c, release)
    located, stepped = v1_studies[analysis], v1_studies[analysis + "_step"]
    for data in (located, stepped):
        assert [e[1] for e in data["events"]] == ["impact", "separation"]
    t_loc = [e[0] for e in located["events"]]
    t_step = [e[0] for e in stepped["events"]]
    # located: the impact to round-off (free flight is exact), the detachment to the
    # trapezoidal rule's period error; stepped: dated at the end of their step
    assert abs(t_loc[0] - tc) < 1e-10
    assert abs(t_loc[1] - td) < 1e-5
    assert 0 < t_step[0] - tc <= 1e-3
    assert abs(t_step[1] - td) <= 1e-3
    assert abs(t_loc[0] - tc) < 1e-6 * abs(t_step[0] - tc)
    assert abs(t_loc[1] - td) < 0.1 * abs(t_step[1] - td)
    t = located["time"]
    assert np.max(np.abs(located["displacement"][:, 2] - z(t))) < 5e-5
    # the approach speed of the impact is the closed-form sqrt(41)
    assert f"approach speed {np.sqrt(41):.8f}" in located["events"][0][3]


@pytest.mark.parametrize("scheme", ["hht", "central_difference"])
@pytest.mark.parametrize("c,release", [(0.0, "force"), (5.0, "gap"), (5.0, "force")])
def test_v1_other_schemes_against_closed_form(tmp_path, scheme, c, release):
    tc, td, z = v1_closed_form(c, release)
    located = run(tmp_path, v1_text(scheme, "locate", c, release), "loc")["a"]
    stepped = run(tmp_path, v1_text(scheme, "step", c, release), "step")["a"]
    t_loc = [e[0] for e in located["events"]]
    t_step = [e[0] for e in stepped["events"]]
    assert len(t_loc) == len(t_step) == 2
    assert abs(t_loc[0] - tc) < 1e-10
    assert abs(t_loc[1] - td) < 1e-5
    assert 0 < t_step[0] - tc <= 1e-3 and abs(t_step[1] - td) <= 1e-3
    t = located["time"]
    assert np.max(np.abs(located["displacement"][:, 2] - z(t))) < 5e-5


# ----------------------------------------------------------------------------- two nodes

def test_node_to_node_against_solve_ivp(tmp_path):
    """Node A (1 kg, 1 m/s) strikes node B (2 kg on a 50 N/m spring) through a damped
    contact between them (normal from A to B, gap 0.1 m); the contact opens when its force
    falls to zero."""
    m1, m2, k2, k, c, gap, v0 = 1.0, 2.0, 50.0, 1000.0, 2.0, 0.1, 1.0

    def rhs(t, y, closed):
        f = k * (y[0] - y[1] - gap) + c * (y[2] - y[3]) if closed[0] else 0.0
        return [y[2], y[3], -f / m1, (f - k2 * y[1]) / m2]

    def contact(y):
        p = y[0] - y[1] - gap
        return min(p, p + c * (y[2] - y[3]) / k)
    switches, at = hybrid(rhs, [contact], [0.0, 0.0, v0, 0.0], 1.5, [False])
    assert [s[2] for s in switches] == [True, False]
    text = f"""
    [mesh.nodes]
    A = [0.0, 0.0, 0.0]
    B = [1.0, 0.0, 0.0]
    [model]
    components = ["DX"]
    [[discrete]]
    nodes = ["A"]
    mass = {m1}
    [[discrete]]
    nodes = ["B"]
    mass = {m2}
    stiffness = {k2}
    [[initial]]
    nodes = ["A"]
    velocity = {{ DX = {v0} }}
    [[link]]
    name = "pair"
    kind = "shock"
    nodes = ["A", "B"]
    normal = [1.0, 0.0, 0.0]
    gap = {gap}
    stiffness = {k}
    damping = {c}
    """
    for scheme in ("newmark", "central_difference"):
        text += f"""
    [[analysis]]
    name = "{scheme}"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.5
    step = 2e-4
    links = ["pair"]
    events = "locate"
    """
    found = run(tmp_path, text)
    for scheme, data in found.items():
        times = [e[0] for e in data["events"]]
        assert [e[1] for e in data["events"]] == ["impact", "separation"]
        assert abs(times[0] - switches[0][0]) < 1e-10
        assert abs(times[1] - switches[1][0]) < 2e-6
        reference = at(data["time"])
        assert np.max(np.abs(data["displacement"] - reference[:, :2])) < 2e-6, scheme
        # the archived force follows the contact law on the reference state
        p = reference[:, 0] - reference[:, 1] - gap
        closed = (data["time"] > times[0] + 1e-3) & (data["time"] < times[1] - 1e-3)
        law = k * p + c * (reference[:, 2] - reference[:, 3])
        assert np.max(np.abs(data["links/pair/normal_force"][closed] - law[closed])) < 5e-3
        assert data["link_attrs"]["pair"]["stiffness"] == k


# ----------------------------------------------------------------------------- circle

def test_circular_hole_against_solve_ivp(tmp_path):
    """A node on a centring spring (4 N/m) launched obliquely in a round hole of radius
    0.05 m (axis Z): it strikes the wall again and again; radial contact law k p + c p'."""
    m, ks, k, c, radius, vx, vy = 1.0, 4.0, 2000.0, 1.0, 0.05, 0.3, 0.1

    def rhs(t, y, closed):
        fx, fy = -ks * y[0], -ks * y[1]
        if closed[0]:
            rho = np.hypot(y[0], y[1])
            n = np.array([y[0], y[1]]) / rho
            fn = k * (rho - radius) + c * (n[0] * y[2] + n[1] * y[3])
            fx, fy = fx - fn * n[0], fy - fn * n[1]
        return [y[2], y[3], fx / m, fy / m]

    def contact(y):
        rho = np.hypot(y[0], y[1])
        p = rho - radius
        return min(p, p + c * (y[0] * y[2] + y[1] * y[3]) / max(rho, 1e-300) / k)
    switches, at = hybrid(rhs, [contact], [0.0, 0.0, vx, vy], 1.2, [False])
    assert len(switches) == 6
    text = f"""
    [mesh.nodes]
    N = [0.0, 0.0, 0.0]
    [model]
    components = ["DX", "DY"]
    [[discrete]]
    nodes = ["N"]
    mass = {m}
    stiffness = [{ks}, {ks}, 0.0]
    [[initial]]
    nodes = ["N"]
    velocity = {{ DX = {vx}, DY = {vy} }}
    [[link]]
    name = "hole"
    kind = "shock"
    nodes = ["N"]
    obstacle = "circle"
    axis = [0.0, 0.0, 1.0]
    gap = {radius}
    stiffness = {k}
    damping = {c}
    """
    for scheme in SCHEMES:
        text += f"""
    [[analysis]]
    name = "{scheme}"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.2
    step = 1e-4
    links = ["hole"]
    events = "locate"
    [[analysis]]
    name = "{scheme}_step"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.2
    step = 1e-4
    links = ["hole"]
    """
    found = run(tmp_path, text)
    for name, data in found.items():
        events = data["events"]
        assert [e[1] == "impact" for e in events] == [s[2] for s in switches], name
        assert all(e[3].startswith("side radial,") for e in events)
        located = not name.endswith("_step")
        error = max(abs(e[0] - s[0]) for e, s in zip(events, switches))
        assert error < (2e-6 if located else 1e-4), name
        reference = at(data["time"])
        tolerance = 1e-6 if located else 5e-6
        assert np.max(np.abs(data["displacement"] - reference[:, :2])) < tolerance, name
        rho = np.hypot(reference[:, 0], reference[:, 1])
        assert np.max(np.abs(data["links/hole/penetration"] - (rho - radius))) < tolerance


# ----------------------------------------------------------------------------- friction

FRICTION_BLOCK = """
    [mesh.nodes]
    N = [0.0, 0.0, 0.0]
    [model]
    components = {components}
    [[discrete]]
    nodes = ["N"]
    mass = {m}
    [[initial]]
    nodes = ["N"]
    displacement = {{ DZ = {z0} }}
    velocity = {velocity}
    [[link]]
    name = "floor"
    kind = "shock"
    nodes = ["N"]
    normal = [0.0, 0.0, -1.0]
    gap = 0.0
    stiffness = {k}
    friction = {mu}
    tangential_stiffness = {kt}
"""


def test_friction_stick_then_slip_under_a_ramp(tmp_path):
    """A block pressed on the floor by 10 N (mu = 0.5) and pulled along X by a force
    ramping at 10 N/s: the tangential spring (1000 N/m) holds it until it carries 5 N, then
    it slides against a constant 5 N. Closed forms for both phases."""
    m, fn, mu, kt, k, rate = 1.0, 10.0, 0.5, 1000.0, 1e5, 10.0
    w = np.sqrt(kt / m)

    def stick(t):
        return rate / kt * (t - np.sin(w * t) / w)
    t_slip = brentq(lambda t: kt * stick(t) - mu * fn, 0.3, 0.7, xtol=1e-15)
    x_s, v_s = stick(t_slip), rate / kt * (1 - np.cos(w * t_slip))

    def slide(t):
        s = t - t_slip
        return x_s + v_s * s + (rate * ((t ** 3 - t_slip ** 3) / 6 - t_slip ** 2 * s / 2)
                                - mu * fn * s * s / 2) / m
    text = FRICTION_BLOCK.format(components='["DX", "DZ"]', m=m, z0=-fn / k, velocity="{}",
                                 k=k, mu=mu, kt=kt) + f"""
    [functions.ramp]
    table = [[0.0, 0.0], [10.0, {10 * rate}]]
    [[load]]
    nodes = ["N"]
    FZ = {-fn}
    [[load]]
    nodes = ["N"]
    FX = 1.0
    function = "ramp"
    """
    for scheme in SCHEMES:
        text += f"""
    [[analysis]]
    name = "{scheme}"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.0
    step = 1e-4
    links = ["floor"]
    """
    for scheme, data in run(tmp_path, text).items():
        t = data["time"]
        x = data["displacement"][:, 0]
        reference = np.where(t < t_slip, stick(t), slide(t))
        assert np.max(np.abs(x - reference)) < 5e-8, scheme
        force = data["links/floor/tangential_force"]
        first = t[np.flatnonzero(force >= mu * fn * (1 - 1e-12))[0]]
        assert t_slip <= first < t_slip + 1e-4, scheme           # the step that slips
        assert np.max(np.abs(force[t > t_slip + 1e-4] - mu * fn)) < 1e-9
        assert np.max(np.abs(force[t < t_slip] - kt * stick(t[t < t_slip]))) < 1e-4
        # the block never lifts: its only event is the start of the slide, in the step of t_slip
        assert [e[1] for e in data["events"]] == ["slip"], scheme
        assert t_slip <= data["events"][0][0] < t_slip + 1e-4, scheme
        assert np.max(np.abs(data["links/floor/normal_force"] - fn)) < 1e-9
        terms = [data[f"energy/{name}"] for name in ENERGY]
        assert energy_balance_error(*terms) < (1e-8 if scheme == "newmark" else 1e-6)


def test_friction_sliding_to_rest(tmp_path):
    """A block thrown at 2 m/s on the floor under gravity (mu = 0.4) stops after
    v0^2 / (2 mu g) = 0.5 m, along its initial direction. tangential_stiffness = 0: the stick
    spring takes the normal stiffness, so the stop is exact up to mu m g / k."""
    m, g, mu, k, v0 = 2.0, 10.0, 0.4, 1e6, 2.0
    text = FRICTION_BLOCK.format(components='["DX", "DY", "DZ"]', m=m, z0=-m * g / k,
                                 velocity=f"{{ DX = {0.6 * v0}, DY = {0.8 * v0} }}", k=k,
                                 mu=mu, kt=0.0) + f"""
    [[load]]
    kind = "gravity"
    g = {g}
    """
    for scheme in SCHEMES:
        text += f"""
    [[analysis]]
    name = "{scheme}"
    kind = "transient"
    scheme = "{scheme}"
    end = 0.8
    step = 1e-4
    links = ["floor"]
    """
    t_stop, distance = v0 / (mu * g), v0 ** 2 / (2 * mu * g)
    for scheme, data in run(tmp_path, text).items():
        t = data["time"]
        u = data["displacement"]
        s = np.hypot(u[:, 0], u[:, 1])
        reference = np.where(t < t_stop, v0 * t - 0.5 * mu * g * t * t, distance)
        assert np.max(np.abs(s - reference)) < 2.5 * mu * m * g / k, scheme
        assert np.max(np.abs(0.8 * u[:, 0] - 0.6 * u[:, 1])) < 1e-12        # a straight line
        sliding = t < t_stop - 1e-3
        assert np.max(np.abs(data["links/floor/tangential_force"][sliding] - mu * m * g)) < 1e-8
        terms = [data[f"energy/{name}"] for name in ENERGY]
        # the kinetic energy goes to friction: 4 J dissipated
        assert data["energy/dissipated"][-1] == pytest.approx(0.5 * m * v0 ** 2, rel=1e-4)
        assert energy_balance_error(*terms) < (1e-8 if scheme == "newmark" else 1e-4)


# ----------------------------------------------------------------------------- energies

def test_energy_balance_of_an_elastic_shock(tmp_path):
    """V1a: the energy terms against the closed form, a balance that closes to round-off with
    located events (and to the entry and exit errors with events at the step ends), and the
    archived force k p exactly."""
    tc, td, z = v1_closed_form(0.0, "force")
    for events, tolerance in (("locate", 1e-12), ("step", 1e-4)):
        data = run(tmp_path, v1_text("newmark", events, 0.0, "force"), events)["a"]
        terms = [data[f"energy/{name}"] for name in ENERGY]
        error = energy_balance_error(*terms)
        assert error < tolerance, events
        force, pen = data["links/ground/normal_force"], data["links/ground/penetration"]
        assert link_force_error(force, pen, 100.0) < 1e-14
        t = data["time"]
        # independent values: work of gravity m g (z0 - z), stored energy 1/2 k p^2
        work = MASS * G * (0.0 - data["displacement"][:, 2])
        assert np.max(np.abs(data["energy/external_work"] - work)) < 1e-9
        p = np.maximum(H - z(t), 0.0)
        assert np.max(np.abs(data["energy/link_energy"] - 0.5 * K * p * p)) < 1e-2
        assert np.all(data["energy/potential"] == 0.0)
        velocity = data["velocity"][:, 2]
        assert np.allclose(data["energy/kinetic"], 0.5 * MASS * velocity ** 2, rtol=1e-13)
        if events == "locate":
            assert np.max(np.abs(data["energy/dissipated"])) < 1e-12


# ----------------------------------------------------------------------------- two planes

def test_two_planes_rattle(tmp_path):
    """A 1 kg mass launched at 1 m/s between two elastic walls 0.1 m either side: closed
    form, half-sine contacts of pi / omega, alternating sides."""
    m, k, gap, v0 = 1.0, 1e4, 0.1, 1.0
    duration = np.pi / np.sqrt(k / m)
    expected, t = [], gap / v0
    for j in range(6):
        side = "+" if j % 2 == 0 else "-"
        expected += [(t, "impact", side), (t + duration, "separation", side)]
        t += duration + 2 * gap / v0
    text = f"""
    [mesh.nodes]
    N = [0.0, 0.0, 0.0]
    [model]
    components = ["DX"]
    [[discrete]]
    nodes = ["N"]
    mass = {m}
    [[initial]]
    nodes = ["N"]
    velocity = {{ DX = {v0} }}
    [[link]]
    name = "walls"
    kind = "shock"
    nodes = ["N"]
    obstacle = "two_planes"
    normal = [1.0, 0.0, 0.0]
    gap = {gap}
    stiffness = {k}
    """
    for scheme in SCHEMES:
        text += f"""
    [[analysis]]
    name = "{scheme}"
    kind = "transient"
    scheme = "{scheme}"
    end = 1.3
    step = 1e-4
    links = ["walls"]
    events = "locate"
    """
    for scheme, data in run(tmp_path, text).items():
        events = data["events"]
        assert len(events) == len(expected), scheme
        for (t, kind, link, detail), (te, ke, side) in zip(events, expected):
            assert (kind, link) == (ke, "walls")
            assert detail.startswith(f"side {side},")
            assert abs(t - te) < 1e-5, scheme
        assert abs(events[0][0] - expected[0][0]) < 1e-12
        x = data["displacement"][:, 0]
        assert np.max(np.abs(x)) == pytest.approx(gap + v0 / np.sqrt(k / m), abs=1e-5)


# ----------------------------------------------------------------------------- bad input

def _bad(tmp_path, capsys, old, new, name):
    text = (ROOT / "studies" / "v1a_falling_mass_elastic.toml").read_text()
    assert old in text
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(old, new, 1))
    out = tmp_path / f"{name}.h5"
    code = main(["run", str(path), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert not out.exists()
    assert len(err.splitlines()) == 1
    return err


@pytest.mark.parametrize("old,new,message", [
    ('normal = [0.0, 0.0, -1.0]', 'normal = [0.0, 0.0, 0.0]',
     "error: link[1].normal: must not be the zero vector"),
    ('stiffness = 100.0', 'stiffness = -100.0', "error: link[1].stiffness: must be > 0"),
    ('damping = 0.0\n', 'damping = 0.0\nfriction = 0.2\n',
     "error: analysis[1].links: Coulomb friction (link[1].friction, link 'ground') cannot "
     "run with scheme 'exact': sliding in a plane follows the direction of the sliding"),
    ('obstacle = "plane"\nnormal = [0.0, 0.0, -1.0]     # the gap closes when the node moves '
     'down', 'obstacle = "circle"\naxis = [0.0, 0.0, 1.0]',
     "error: analysis[1].links: shock, circle (link[1].obstacle, link 'ground') cannot run "
     "with scheme 'exact': the radial penetration |r| - gap of a circular obstacle"),
    ('obstacle = "plane"\nnormal = [0.0, 0.0, -1.0]     # the gap closes when the node moves '
     'down\ngap = 2.0', 'obstacle = "circle"\naxis = [0.0, 0.0, 1.0]\ngap = 0.0',
     "error: link[1].gap: must be > 0"),
])
def test_bad_link_inputs(tmp_path, capsys, old, new, message):
    assert _bad(tmp_path, capsys, old, new, "bad").startswith(message)


def test_unknown_link_node_stops_before_the_results_file(tmp_path, capsys):
    err = _bad(tmp_path, capsys, 'kind = "shock"\nnodes = ["NO1"]',
               'kind = "shock"\nnodes = ["NO9"]', "node")
    assert err.startswith("error: link[1].nodes: unknown node 'NO9'")


@pytest.mark.parametrize("scheme", ["newmark", "central_difference"])
def test_v1_with_a_sparse_lu_factor(tmp_path, monkeypatch, scheme):
    """The same results when the iteration matrix is too wide for the banded solver."""
    import fem.linalg

    monkeypatch.setattr(fem.linalg, "MAX_BANDWIDTH", -1)
    tc, td, z = v1_closed_form(5.0, "gap")
    data = run(tmp_path, v1_text(scheme, "locate", 5.0, "gap"))["a"]
    times = [e[0] for e in data["events"]]
    assert abs(times[0] - tc) < 1e-10 and abs(times[1] - td) < 1e-5
    assert np.max(np.abs(data["displacement"][:, 2] - z(data["time"]))) < 5e-5
