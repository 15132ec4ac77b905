"""The exact scheme with shock links: V1 against closed forms computed here."""

import h5py
import numpy as np
import pytest
from scipy.optimize import brentq

from conftest import ROOT
from fem.cli import main
from fem.runner import run_study

G, M, K, V0, H = 10.0, 1.0, 100.0, -1.0, -2.0


def first_root(fn, a, b, n=20000):
    s = np.linspace(a, b, n)
    v = fn(s)
    i = np.flatnonzero(np.sign(v[1:]) != np.sign(v[:-1]))[0]
    return brentq(fn, s[i], s[i + 1], xtol=1e-15, rtol=1e-15)


def contact(c):
    """Impact time, and z(s), z'(s) of the contact phase (s from the impact), damping c."""
    tc = (np.sqrt(V0 ** 2 - 2 * G * H) + V0) / G
    vin = V0 - G * tc
    w = np.sqrt(K / M)
    zeta = c / (2 * np.sqrt(K * M))
    wd = w * np.sqrt(1 - zeta ** 2)
    zeq = H - M * G / K
    a = H - zeq
    b = (vin + zeta * w * a) / wd

    def z(s):
        return zeq + np.exp(-zeta * w * s) * (a * np.cos(wd * s) + b * np.sin(wd * s))

    def v(s):
        return np.exp(-zeta * w * s) * ((-zeta * w * a + wd * b) * np.cos(wd * s)
                                        + (-zeta * w * b - wd * a) * np.sin(wd * s))
    return tc, z, v, 2 * np.pi / wd


def flight(t0, z0, v0, t):
    s = t - t0
    return z0 + v0 * s - 0.5 * G * s * s


def read(path, analysis):
    with h5py.File(path) as f:
        g = f["analyses"][analysis]
        return g["time"][:], g["displacement"][:, 2], g["events"][:], dict(g.attrs)


@pytest.fixture(scope="module")
def v1(tmp_path_factory):
    out = tmp_path_factory.mktemp("v1")
    reports = {}
    for name in ("v1a_falling_mass_elastic", "v1b_falling_mass_absorbent"):
        reports[name] = run_study(ROOT / "studies" / f"{name}.toml", out / f"{name}.h5")
        assert reports[name].checks_passed
    return out


def test_v1a_exact_event_times_and_flight(v1):
    tc, z, v, period = contact(0.0)
    assert tc == pytest.approx((np.sqrt(41) - 1) / 10, abs=1e-15)
    sd = first_root(lambda s: z(s) - H, 1e-6, period)
    t, zs, events, _ = read(v1 / "v1a_falling_mass_elastic.h5", "exact")
    times = [e["time"] for e in events]
    assert times[0] == pytest.approx(tc, abs=1e-12)
    assert times[1] == pytest.approx(tc + sd, abs=1e-12)
    assert times[1] == pytest.approx(0.885456153076, abs=1e-12)
    after = t > times[1]
    expected = flight(tc + sd, H, v(sd), t[after])
    assert np.max(np.abs(zs[after] - expected)) < 1e-10
    before = t < tc
    assert np.max(np.abs(zs[before] - (V0 * t[before] - 0.5 * G * t[before] ** 2))) < 1e-13
    during = (t > tc) & (t < tc + sd)
    assert np.max(np.abs(zs[during] - z(t[during] - tc))) < 1e-10


@pytest.mark.parametrize("analysis,release", [("exact_gap", "gap"), ("exact_force", "force")])
def test_v1b_exact_both_release_rules(v1, analysis, release):
    c = 5.0
    tc, z, v, period = contact(c)
    if release == "gap":
        sd = first_root(lambda s: z(s) - H, 1e-6, period)          # back at ground level
    else:
        sd = first_root(lambda s: K * (H - z(s)) - c * v(s), 1e-6, period)   # force to zero
    t, zs, events, _ = read(v1 / "v1b_falling_mass_absorbent.h5", analysis)
    assert [e["kind"].decode() if isinstance(e["kind"], bytes) else e["kind"]
            for e in events[:2]] == ["impact", "separation"]
    assert events[1]["time"] == pytest.approx(tc + sd, abs=1e-12)
    after = t > tc + sd
    expected = flight(tc + sd, z(sd), v(sd), t[after])
    assert np.max(np.abs(zs[after] - expected)) < 1e-10
    if release == "force":
        assert z(sd) < H - 0.1          # released while still 0.14 m below ground level


def test_links_with_other_schemes_or_kinds_are_refused(tmp_path):
    text = (ROOT / "studies" / "v1a_falling_mass_elastic.toml").read_text()
    cases = [
        (text.replace('kind = "shock"\nnodes = ["NO1"]\nobstacle = "plane"\nnormal = [0.0, 0.0, '
                      '-1.0]     # the gap closes when the node moves down\ngap = 2.0\n'
                      'stiffness = 100.0\ndamping = 0.0\n',
                      'kind = "impact"\nnodes = ["NO1"]\ncomponent = "DZ"\nrestitution = 0.5\n'
                      'gap = 2.0\n'), "link kind 'impact' is not available"),
        (text.replace('obstacle = "plane"\nnormal = [0.0, 0.0, -1.0]     # the gap closes when '
                      'the node moves down', 'obstacle = "circle"\naxis = [0.0, 0.0, 1.0]'),
         "circular obstacle is not available yet"),
        (text.replace('damping = 0.0\n', 'damping = 0.0\nfriction = 0.3\n'),
         "friction is not available yet"),
    ]
    for i, (study, message) in enumerate(cases):
        assert study != text, message
        path = tmp_path / f"case{i}.toml"
        path.write_text(study)
        out = tmp_path / f"case{i}.h5"
        code = main(["run", str(path), "--out", str(out), "--quiet"])
        assert code == 2, message
        assert not out.exists(), message
