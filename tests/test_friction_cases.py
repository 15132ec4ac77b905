"""Four friction studies that once went wrong, as a user writes them: a Coulomb-damped
oscillator released at rest (friction must take energy from the first instant, in every
scheme and event mode), a block on a shaking table (stick-slip must not end in a cascade),
an archive instant at the instant where a slide stops and goes back (the run must not
stall), and the exact scheme with unidirectional friction on a block sliding from its
contact equilibrium (it must start, and stop where Coulomb's law says). Each is compared with
its closed form, written here or in tests/closed_forms.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import closed_forms as cf
import fem
from fem import catalog

# ------------------------------------------------------------------------------------------
# 1. A 1 kg mass on a 1e4 N/m spring released at rest from DX = 0.85 mm, pressed on a plane
# by 10 N with mu = 0.1: each half period ends 2 mu N / k = 0.2 mm closer to zero.
K, MU, NF, KT = 1e4, 0.1, 10.0, 4e5
X0 = 0.85e-3
HALF = math.pi / math.sqrt(K)
#: the stick spring's own elastic give mu N / kt
GIVE = MU * NF / KT


def released(basis, scheme, events, end, archive):
    link = {"name": "shock", "kind": "shock", "nodes": ["N1"], "normal": [0, 0, 1],
            "gap": -0.5, "stiffness": 20.0, "friction": MU, "tangential_stiffness": KT}
    if not catalog.SCHEMES[(basis, scheme)].offers("friction.coulomb"):
        link["friction_direction"] = [1.0, 0.0, 0.0]          # the same motion along X
    study = {
        "mesh": {"nodes": {"N1": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DY", "DZ"]},
        "discrete": [{"nodes": ["N1"], "stiffness": [K, K, K], "mass": 1.0}],
        "constraint": [{"nodes": ["N1"], "DY": 0.0, "DZ": 0.0}],
        "initial": [{"nodes": ["N1"], "displacement": {"DX": X0}}],
        "link": [link],
        "analysis": [],
    }
    run = {"name": "tr", "kind": "transient", "basis": basis, "scheme": scheme, "end": end,
           "events": events, "links": ["shock"],
           "archive": {"times": list(archive)} if archive else {"every": 100}}
    if basis == "modal":
        study["analysis"].append({"name": "modes", "kind": "modes", "count": 1})
        run.update(modes="modes", damping="modal", modal_damping=[0.0])
    row = catalog.SCHEMES[(basis, scheme)]
    if row.needs_step:
        run["step"] = 1e-5
    elif row.adaptive:
        run["max_step"] = 1e-4
    study["analysis"].append(run)
    return fem.run(fem.Study.from_dict(study)).analysis("tr")


FRICTION_CELLS = [pytest.param(b, s, e, id=f"{b}-{s}-{e}")
                  for (b, s), row in catalog.SCHEMES.items()
                  if row.offers("friction.unidirectional") for e in row.event_modes]


@pytest.mark.parametrize("basis,scheme,events", FRICTION_CELLS)
def test_released_at_rest_loses_energy_from_the_start(basis, scheme, events):
    """DX = -0.65 mm at t = pi / 100 s and 0.45 mm at 2 pi / 100 s, within mu N / kt (the
    closed form: tests/closed_forms.py, coulomb_oscillator from rest)."""
    times = [HALF, 2 * HALF]
    ref = cf.coulomb_oscillator(1.0, K, NF, MU, 0.0, 2.5 * HALF, x0=X0)
    assert ref.x(times)[:, 0] == pytest.approx([-0.65e-3, 0.45e-3], abs=1e-15)
    analysis = released(basis, scheme, events, 2.2 * HALF, times)
    t, x = analysis.series("displacement", "N1", "DX")
    assert t == pytest.approx(times, abs=1e-15)
    assert np.abs(x - ref.x(t)[:, 0]).max() <= GIVE, (x, ref.x(t)[:, 0])
    dissipated = analysis.energy()["dissipated"]
    # friction has taken mu N times the distance slid: 1 N x (0.85 + 0.65) mm, then 1.1 mm
    assert dissipated == pytest.approx([1.5e-3, 2.6e-3], abs=MU * NF * GIVE * 4)


# ------------------------------------------------------------------------------------------
# 2. A block (1 kg, a spring of 3e-5 N/m) on a table shaken at 15 sin(2 pi t) m/s^2 along X,
# pressed by 10 N with mu = 0.1 (the table drives it beyond mu g = 1 m/s^2), stick spring
# 9e6 N/m: modal adaptive2, max_step = 1e-4, to 4 s.
SHAKE = {
    "mesh": {"nodes": {"N1": [0.0, 0.0, 0.0]}},
    "model": {"components": ["DX", "DY", "DZ"]},
    "discrete": [{"nodes": ["N1"], "stiffness": [3e-5, 3e-5, 3e-5], "mass": 1.0}],
    "constraint": [{"nodes": ["N1"], "DY": 0.0, "DZ": 0.0}],
    "functions": {"table": {"expression": "15*sin(2*pi*t)"}},
    "load": [{"kind": "base_acceleration", "direction": [1, 0, 0], "function": "table"}],
    "link": [{"name": "shock", "kind": "shock", "nodes": ["N1"], "normal": [0, 0, 1],
              "gap": -0.5, "stiffness": 20.0, "friction": 0.1,
              "tangential_stiffness": 9e6}],
    "analysis": [{"name": "modes", "kind": "modes", "count": 1},
                 {"name": "tr", "kind": "transient", "basis": "modal", "modes": "modes",
                  "scheme": "adaptive2", "damping": "modal", "modal_damping": [0.0],
                  "end": 4.0, "max_step": 1e-4, "links": ["shock"]}],
}


def test_shaking_table_stick_slip_runs_to_its_end():
    """No cascade: the run reaches 4 s with the stick and slip instants of the rigid-stick
    solution (a slide that stops and goes back at once is a stick and a slip at one
    instant) within 1e-4 s; the first slip, from rest, within the stick spring's
    turn-over time 1 / w_t = 3.3e-4 s (its force swings by F' / w_t about the force that
    holds the block, F' = m 15 2 pi N/s at the start: it is 3.3e-4 s late)."""
    analysis = fem.run(fem.Study.from_dict(SHAKE)).analysis("tr")
    t, _ = analysis.series("displacement", "N1", "DX")
    assert t[-1] == pytest.approx(4.0, abs=1e-12)
    ref = cf.shaken_rubbing(1.0, 10.0, 0.1, 15.0, 1.0, 4.0)
    expected = [(e.time, e.kind) for e in ref.events if e.time < 4.0]
    found = [(float(r["time"]), str(r["kind"])) for r in analysis.events]
    assert [k for _, k in found] == [k for _, k in expected], found
    errors = np.abs(np.array([f for f, _ in found]) - np.array([e for e, _ in expected]))
    # the swing F'(0) / w_t crossed at the rate F'(t1) = F'(0) cos(2 pi t1), and adaptive2's
    # own error (1e-5 s: the later instants are within 1.6e-5 s)
    first = expected[0][0]
    assert errors[0] <= 1.0 / (math.sqrt(9e6) * math.cos(2 * math.pi * first)) + 1e-5, errors
    assert errors[1:].max() <= 1e-4, errors
    # the wear: friction never gives energy back
    assert np.diff(analysis.energy()["dissipated"]).min() >= -1e-12


# ------------------------------------------------------------------------------------------
# 3. Study 1 on a physical basis with rk4, step 1e-5 to 0.04 s, archived only at pi / 100 s:
# the instant where the block stops and goes back.

def test_archive_instant_at_an_event_costs_nothing():
    """The run ends, archives the instant once (after the event: -0.65 mm), and takes the
    steps of the same run archived every 100 steps (give or take the instant's own)."""
    at = released("physical", "rk4", "locate", 0.04, [0.031415926535897934])
    t, x = at.series("displacement", "N1", "DX")
    assert t == pytest.approx([0.031415926535897934], abs=1e-17)
    assert abs(x[0] + 0.65e-3) <= GIVE
    assert [str(r["kind"]) for r in at.events] == ["stick", "slip"]
    every = released("physical", "rk4", "locate", 0.04, [])
    assert abs(at.steps - every.steps) <= 3, (at.steps, every.steps)


# ------------------------------------------------------------------------------------------
# 4. A 1 kg block (no spring) pressed on a plane of normal +X (gap 0.1 m, 3947.84 N/m) by
# 10 N, resting at its contact equilibrium, sliding along Y at 1 m/s and free along Z at
# 0.5 m/s, with unidirectional friction (mu = 0.3 along Y, kt = 1e6): the exact scheme.

@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_exact_unidirectional_friction_starts_and_stops(basis):
    """Y decelerates at mu N / m = 3 m/s^2 and stops at 1/3 s after 1/6 m (then stays,
    within the stick spring's give mu N / kt); Z moves on at 0.5 m/s; X stays at the
    contact equilibrium 0.1 + 10 / 3947.84 m."""
    kc, fx, mu, kt = 3947.84, 10.0, 0.3, 1e6
    x_eq = 0.1 + fx / kc
    study = {
        "mesh": {"nodes": {"N1": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DY", "DZ"]},
        "discrete": [{"nodes": ["N1"], "mass": 1.0}],
        "initial": [{"nodes": ["N1"], "displacement": {"DX": x_eq},
                     "velocity": {"DY": 1.0, "DZ": 0.5}}],
        "load": [{"nodes": ["N1"], "FX": fx}],
        "link": [{"name": "shock", "kind": "shock", "nodes": ["N1"], "normal": [1, 0, 0],
                  "gap": 0.1, "stiffness": kc, "friction": mu, "tangential_stiffness": kt,
                  "friction_direction": [0, 1, 0]}],
        "analysis": [],
    }
    run = {"name": "tr", "kind": "transient", "basis": basis, "scheme": "exact",
           "end": 0.5, "step": 1e-3, "links": ["shock"]}
    if basis == "modal":
        study["analysis"].append({"name": "modes", "kind": "modes", "count": 3})
        run["modes"] = "modes"
    study["analysis"].append(run)
    analysis = fem.run(fem.Study.from_dict(study)).analysis("tr")
    t, y = analysis.series("displacement", "N1", "DY")
    _, z = analysis.series("displacement", "N1", "DZ")
    _, x = analysis.series("displacement", "N1", "DX")
    assert t[-1] == pytest.approx(0.5, abs=1e-12)
    s = np.minimum(t, 1.0 / 3.0)
    assert np.abs(y - (s - 1.5 * s * s)).max() <= 2 * mu * fx / kt + 1e-12
    assert np.abs(z - 0.5 * t).max() <= 1e-12
    assert np.abs(x - x_eq).max() <= 1e-12
    stops = [float(r["time"]) for r in analysis.events if r["kind"] == "stick"]
    assert stops and abs(stops[0] - 1.0 / 3.0) <= 1e-12
    assert [str(r["kind"]) for r in analysis.events] == ["stick"]


# ------------------------------------------------------------------------------------------
# 5. A 1000 kg block on a floor through two identical friction contacts on its one node
# (mu = 0.1, each carrying half its weight), pushed along X by 2000 t N: both reach their
# limit at the same instant, t0 = mu m g / 2000, and the block then slides with
# a = (2000 t - mu m g) / m, so x(t) = (t - t0)^3 / 3 (beyond the contacts' elastic give).
TOGETHER = [("newmark", "locate"), ("newmark", "step"), ("rk4", "locate"), ("rk4", "step")]


@pytest.mark.parametrize("scheme, events", TOGETHER)
def test_two_contacts_on_one_body_break_away_together(scheme, events):
    mass, mu, g, rate = 1000.0, 0.1, 9.81, 2000.0
    links = [{"name": name, "kind": "shock", "nodes": ["P"], "normal": [0.0, 0.0, -1.0],
              "stiffness": 1.0e8, "gap": 0.0, "friction": mu} for name in ("a", "b")]
    study = {
        "mesh": {"nodes": {"P": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DY", "DZ"]},
        "discrete": [{"nodes": ["P"], "mass": mass}],
        "functions": {"ramp": {"expression": "t"}},
        "load": [{"kind": "gravity", "g": g},
                 {"nodes": ["P"], "FX": rate, "function": "ramp"}],
        "initial": [{"nodes": ["P"], "displacement": {"DZ": -mass * g / 2.0e8}}],
        "link": links,
        "analysis": [{"name": "tr", "kind": "transient", "scheme": scheme, "end": 1.0,
                      "step": 1e-3, "events": events, "links": ["a", "b"]}],
    }
    a = fem.run(fem.Study.from_dict(study)).analysis("tr")
    t, x = a.series("displacement", "P", "DX")
    t0 = mu * mass * g / rate
    limit = mu * mass * g / 2.0
    for name in ("a", "b"):
        assert np.max(a.link(name)["tangential_force"]) <= limit * (1.0 + 1e-9)
    late = t > t0 + 0.2
    assert np.max(np.abs(x[late] - (t[late] - t0) ** 3 / 3.0)) < 1e-3 * x[-1]
