"""Response spectra (postpro.spectra, fem post spectrum) against independent solutions: the
closed-form response of an oscillator to a sine from rest, and scipy's solve_ivp at tight
tolerance on a random piecewise-linear record with uneven steps; and their bad inputs."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import postpro
from postpro import PostproError
from postpro.cli import main as post
from postpro.spectra import log_frequencies, parse_dampings, parse_frequencies


def sine_response(t, A, W, w, xi):
    """x, x' of x'' + 2 xi w x' + w^2 x = -A sin(W t) from rest, in closed form."""
    if xi == 0 and W == w:                      # undamped resonance: the response grows
        x = A / (2 * w ** 2) * (w * t * np.cos(w * t) - np.sin(w * t))
        v = A / (2 * w ** 2) * (-w ** 2 * t * np.sin(w * t))
        return x, v
    k, c = w ** 2, 2 * xi * w
    S, D = np.linalg.solve([[k - W ** 2, -c * W], [c * W, k - W ** 2]], [-A, 0.0])
    al, wd = -xi * w, w * np.sqrt(1 - xi ** 2)
    E = -D
    F = (-al * E - W * S) / wd
    env = np.exp(al * t)
    x = S * np.sin(W * t) + D * np.cos(W * t) + env * (E * np.cos(wd * t) + F * np.sin(wd * t))
    v = (W * (S * np.cos(W * t) - D * np.sin(W * t))
         + env * ((al * E + wd * F) * np.cos(wd * t) + (al * F - wd * E) * np.sin(wd * t)))
    return x, v


def test_a_sine_record_against_the_closed_form():
    """a = A sin(2 pi f t) sampled finely: the spectrum at f itself (resonance, undamped and
    damped) and at other frequencies matches the closed-form peaks at the same instants
    (the record's linear interpolation differs from the sine by (W h)^2 / 8 of A)."""
    A, f0 = 3.0, 2.0
    W = 2 * np.pi * f0
    t = np.linspace(0.0, 5.0, 20001)            # W h = 0.0031
    a = A * np.sin(W * t)
    freqs = np.array([0.5, f0, 3.7, 25.0])
    dampings = np.array([0.0, 0.02, 0.2])
    spectrum = postpro.response_spectrum(t, a, freqs, dampings)
    for i, f in enumerate(freqs):
        w = 2 * np.pi * f
        for j, xi in enumerate(dampings):
            x, v = sine_response(t, A, W, w, xi)
            sd = np.max(np.abs(x))
            sa = np.max(np.abs(2 * xi * w * v + w ** 2 * x))
            assert spectrum.sd[i, j] == pytest.approx(sd, rel=2e-6), (f, xi)
            assert spectrum.sv[i, j] == pytest.approx(np.max(np.abs(v)), rel=2e-6), (f, xi)
            assert spectrum.sa[i, j] == pytest.approx(sa, rel=2e-6), (f, xi)
            assert spectrum.psa[i, j] == pytest.approx(w ** 2 * sd, rel=2e-6)
            assert spectrum.psv[i, j] == pytest.approx(w * sd, rel=2e-6)
    # the undamped resonance grows as A t / (2 w): at the end, 5 s
    assert spectrum.sd[1, 0] == pytest.approx(A * 5.0 / (2 * W), rel=1e-3)
    assert spectrum.period == pytest.approx(1 / freqs)


def _reference(t, a, omega, xi):
    """Peaks of every oscillator by solve_ivp (rtol 1e-10), one interval of the record at a
    time with its linear acceleration: (sd, sv, sa) per oscillator."""
    m = len(omega)
    y = np.zeros(2 * m)
    peaks = np.zeros((m, 3))
    for i in range(len(t) - 1):
        slope = (a[i + 1] - a[i]) / (t[i + 1] - t[i])

        def rhs(s, z, i=i, slope=slope):
            x, v = z[:m], z[m:]
            return np.concatenate([v, -(a[i] + slope * (s - t[i])) - 2 * xi * omega * v
                                   - omega ** 2 * x])

        y = solve_ivp(rhs, (t[i], t[i + 1]), y, method="DOP853", rtol=1e-10,
                      atol=1e-14).y[:, -1]
        x, v = y[:m], y[m:]
        peaks = np.maximum(peaks, np.abs(np.stack([x, v, 2 * xi * omega * v
                                                   + omega ** 2 * x], axis=1)))
    return peaks


def test_the_recurrence_against_solve_ivp_on_an_uneven_record():
    """A random piecewise-linear record with steps from 2 to 40 ms, oscillators from 0.3 to
    80 Hz (up to 3 cycles in a step) with damping 0, 0.05, just below, at and above critical
    and 3 (overdamped)."""
    rng = np.random.default_rng(7)
    t = np.concatenate([[0.25], 0.25 + np.cumsum(rng.uniform(0.002, 0.04, 60))])
    a = rng.normal(0.0, 2.0, t.size)
    freqs = np.array([0.3, 2.0, 11.0, 80.0])
    dampings = np.array([0.0, 0.05, 0.999, 1.0, 1.001, 3.0])
    spectrum = postpro.response_spectrum(t, a, freqs, dampings)
    omega = np.repeat(2 * np.pi * freqs, dampings.size)
    xi = np.tile(dampings, freqs.size)
    expected = _reference(t, a, omega, xi).reshape(freqs.size, dampings.size, 3)
    for k, got in enumerate((spectrum.sd, spectrum.sv, spectrum.sa)):
        assert np.allclose(got, expected[:, :, k], rtol=1e-8, atol=0), k
    # and the uneven steps matter: the same values on an even grid differ
    even = postpro.response_spectrum(np.linspace(t[0], t[-1], t.size), a, freqs, dampings)
    assert np.max(np.abs(even.sd / spectrum.sd - 1)) > 1e-2


def test_steps_of_two_lengths_in_any_order():
    """Steps of 10 and 25 ms in random order (cumulated: their lengths differ by round-off
    from one to the next) take two sets of coefficients, and the result is solve_ivp's."""
    from postpro.spectra import _kernels

    rng = np.random.default_rng(3)
    t = np.concatenate([[0.0], np.cumsum(rng.choice([0.01, 0.025], 120))])
    a = np.sin(3 * t) + 0.3 * rng.normal(size=t.size)
    tolerance = 16 * np.finfo(float).eps * t[-1]
    group, lengths = _kernels().step_groups(t, tolerance)
    assert sorted(lengths) == pytest.approx([0.01, 0.025], rel=1e-12)
    assert lengths[group[0]] == pytest.approx(t[1] - t[0], rel=1e-12)
    assert len(set(np.diff(t))) > 2
    spectrum = postpro.response_spectrum(t, a, [1.0, 7.0], [0.0, 0.05])
    ref = _reference(t, a, 2 * np.pi * np.repeat([1.0, 7.0], 2),
                     np.tile([0.0, 0.05], 2)).reshape(2, 2, 3)
    assert np.allclose(spectrum.sd, ref[:, :, 0], rtol=1e-8)
    assert np.allclose(spectrum.sa, ref[:, :, 2], rtol=1e-8)


def test_jumps_an_instant_given_twice():
    """With jumps=True an instant given twice is a jump of the acceleration: the same as a
    record whose jump takes a step of 1e-12 s."""
    t = np.array([0.0, 0.5, 0.5, 1.0, 2.0])
    a = np.array([0.0, 1.0, -2.0, 0.5, 0.0])
    jumped = postpro.response_spectrum(t, a, [0.7, 3.0], [0.0, 0.05], jumps=True)
    t2 = t.copy()
    t2[2] += 1e-12
    close = postpro.response_spectrum(t2, a, [0.7, 3.0], [0.0, 0.05])
    assert np.allclose(jumped.sd, close.sd, rtol=1e-9)
    with pytest.raises(PostproError, match="instant 3 .* must increase strictly"):
        postpro.response_spectrum(t, a, [1.0])


@pytest.mark.parametrize("time, acceleration, freqs, damping, message", [
    ([0.0, 1.0, 1.0, 2.0], [0, 1, 2, 3], [1.0], 0.05, "instant 3 .* not after"),
    ([0.0, 2.0, 1.0], [0, 1, 2], [1.0], 0.05, "instant 3 .* not after"),
    ([0.0, 1.0, np.nan], [0, 1, 2], [1.0], 0.05, "time: value 3 is not finite"),
    ([0.0, 1.0, 2.0], [0, np.inf, 2], [1.0], 0.05, "acceleration: value 2 is not finite"),
    ([0.0, 1.0, 2.0], [0, 1], [1.0], 0.05, "3 instants for 2 accelerations"),
    ([0.0], [0.0], [1.0], 0.05, "at least 2"),
    ([0.0, 1.0], [0, 1], [1.0], -0.01, "damping ratios must be finite and >= 0"),
    ([0.0, 1.0], [0, 1], [1.0], np.nan, "damping ratios must be finite and >= 0"),
    ([0.0, 1.0], [0, 1], [0.0, 1.0], 0.05, "0 Hz: frequencies must be finite and > 0"),
    ([0.0, 1.0], [0, 1], [-2.0], 0.05, "frequencies must be finite and > 0"),
    ([0.0, 1.0], [0, 1], "1:0.5:10", 0.05, "f0 must not exceed f1"),
    ([0.0, 1.0], [0, 1], "1:5", 0.05, "expected f0:f1:count"),
    ([0.0, 1.0], [0, 1], "a,b", 0.05, "numbers separated by commas"),
    ([0.0, 1.0], [0, 1], [1.0], "0.05,x", "numbers separated by commas"),
    ([0.0, 1.0], [0, 1], "1:10:20000", np.linspace(0, 0.1, 60), "at most 1,000,000"),
])
def test_bad_inputs(time, acceleration, freqs, damping, message):
    with pytest.raises(PostproError, match=message):
        postpro.response_spectrum(time, acceleration, freqs, damping)


def test_frequency_and_damping_texts():
    f = parse_frequencies("0.1:100:4")
    assert f == pytest.approx([0.1, 1.0, 10.0, 100.0]) and f[0] == 0.1 and f[-1] == 100.0
    assert list(parse_frequencies("1, 2.5,4")) == [1.0, 2.5, 4.0]
    assert list(parse_dampings("0,0.02,0.05")) == [0.0, 0.02, 0.05]
    assert len(log_frequencies(0.1, 100, 200)) == 200


def test_import_postpro_does_not_import_numba():
    code = "import sys, postpro; assert 'numba' not in sys.modules; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


# -- fem post spectrum ------------------------------------------------------------------------

def _table(text: str):
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("frequency"))
    return lines[0], lines[k].split("  "), [list(map(float, line.split()))
                                            for line in lines[k + 2:]
                                            if line.strip() and not line.startswith("wrote")]


def test_cli_record_against_the_closed_form(tmp_path, capsys):
    A, f0 = 2.0, 1.5
    W = 2 * np.pi * f0
    t = np.linspace(0.0, 4.0, 8001)
    record = tmp_path / "quake.csv"
    record.write_text("time [s],acceleration [m/s2]\n" + "".join(
        f"{float(ti)!r},{float(A * np.sin(W * ti))!r}\n" for ti in t))
    csv = tmp_path / "spectrum.csv"
    plot = tmp_path / "spectrum.png"
    assert post(["spectrum", "--record", str(record), "--frequencies", "1,1.5,6",
                 "--damping", "0.02,0.1", "--csv", str(csv), "--plot", str(plot)]) == 0
    head, _, _ = _table(capsys.readouterr().out)
    assert "the record" in head and "8001 instants" in head
    rows = np.loadtxt(csv, delimiter=",", skiprows=1)
    header = csv.read_text().splitlines()[0].split(",")
    assert header[:4] == ["frequency [Hz]", "period [s]", "SD xi=0.02 [m]", "PSV xi=0.02 [m/s]"]
    assert header[4:6] == ["PSA xi=0.02 [m/s^2]", "SA xi=0.02 [m/s^2]"]
    for i, f in enumerate([1.0, 1.5, 6.0]):
        w = 2 * np.pi * f
        for j, xi in enumerate([0.02, 0.1]):
            x, _ = sine_response(t, A, W, w, xi)
            sd = np.max(np.abs(x))
            assert rows[i, 2 + 4 * j] == pytest.approx(sd, rel=1e-5)
            assert rows[i, 4 + 4 * j] == pytest.approx(w ** 2 * sd, rel=1e-5)
    assert plot.stat().st_size > 10_000


STUDY = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = 1.0
stiffness = 400.0
damping = 1.0
[functions.ground]
table = [[0.0, 0.0], [0.1, 1.0], [0.25, -2.0], [0.4, 0.5], [0.6, 0.0]]
right = "constant"
[functions.other]
file = "elsewhere/record.csv"
right = "constant"
[[load]]
name = "quake"
kind = "base_acceleration"
direction = [1.0, 0.0, 0.0]
value = 2.0
function = "ground"
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
end = 0.6
step = 1e-3
{fields}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from fem.runner import run_study

    folder = tmp_path_factory.mktemp("spectrum")
    (folder / "elsewhere").mkdir()
    (folder / "elsewhere" / "record.csv").write_text("0,0\n1,1\n")
    (folder / "results").mkdir()     # the record is not found relative to the results
    out = {}
    for name, fields in (("default", ""), ("relative", 'fields = ["acceleration"]')):
        study = folder / f"{name}.toml"
        study.write_text(textwrap.dedent(STUDY.format(fields=fields)))
        run_study(study, folder / "results" / f"{name}.h5")
        out[name] = folder / "results" / f"{name}.h5"
    return out


def test_cli_function_of_the_study(runs, capsys):
    assert post(["spectrum", str(runs["default"]), "--function", "ground", "--frequencies",
                 "2,5", "--damping", "0.05"]) == 0
    head, _, rows = _table(capsys.readouterr().out)
    assert "function 'ground'" in head and "load 'quake' multiplies it by value 2" in head
    expected = postpro.response_spectrum([0.0, 0.1, 0.25, 0.4, 0.6], [0.0, 1.0, -2.0, 0.5, 0.0],
                                         [2.0, 5.0], 0.05)
    assert [r[2] for r in rows] == pytest.approx(expected.sd[:, 0], rel=1e-5)
    # a window cuts the table at its ends; --scale multiplies
    assert post(["spectrum", str(runs["default"]), "--function", "ground", "--end", "0.3",
                 "--scale", "2", "--frequencies", "2", "--damping", "0"]) == 0
    _, _, rows = _table(capsys.readouterr().out)
    window = postpro.response_spectrum([0.0, 0.1, 0.25, 0.3], [0.0, 2.0, -4.0, -7.0 / 3.0],
                                       [2.0], 0.0)
    assert rows[0][2] == pytest.approx(window.sd[0, 0], rel=1e-5)


def test_cli_node_takes_the_absolute_acceleration(runs, capsys):
    with postpro.open(runs["default"]) as results:
        t, a = results.analysis("a").series("absolute_acceleration", "P", "DX")
    assert post(["spectrum", str(runs["default"]), "-n", "P", "-c", "DX", "--frequencies",
                 "3,10", "--damping", "0.02"]) == 0
    head, _, rows = _table(capsys.readouterr().out)
    assert "absolute acceleration (the floor spectrum)" in head and "601 instants" in head
    expected = postpro.response_spectrum(t, a, [3.0, 10.0], 0.02)
    assert [r[4] for r in rows] == pytest.approx(expected.psa[:, 0], rel=1e-5)


def test_cli_errors(runs, tmp_path, capsys):
    cases = [
        (["spectrum", str(runs["relative"]), "-n", "P", "-c", "DX"],
         "applies the base acceleration load 'quake' but did not archive absolute_acceleration"),
        (["spectrum", str(runs["default"]), "--function", "nope"],
         "no function 'nope' in the study .* \\(functions: ground, other\\)"),
        (["spectrum", str(runs["default"]), "--function", "other"],
         "reads the file 'elsewhere/record.csv' relative to the study file.*--record FILE"),
        (["spectrum", str(runs["default"])], "give one of --node"),
        (["spectrum", str(runs["default"]), "-n", "P"], "give --component too"),
        (["spectrum", str(runs["default"]), "-n", "P", "-c", "DX", "--damping", "-1"],
         "damping ratios must be finite and >= 0"),
        (["spectrum", str(runs["default"]), "-n", "P", "-c", "DX", "--frequencies", "0:1:5"],
         "frequencies must be finite and > 0"),
        (["spectrum", "--record", str(tmp_path / "missing.csv")], "--record: file not found"),
    ]
    bad = tmp_path / "bad.csv"
    bad.write_text("t,a\n0,0\n0.1,1\n0.1,2\n")
    cases.append((["spectrum", "--record", str(bad)], "--record: .*increas"))
    text = tmp_path / "text.csv"
    text.write_text("t,a\n0,0\n0.1,one\n")
    cases.append((["spectrum", "--record", str(text)], "--record: .* is not a number"))
    import re
    for argv, message in cases:
        assert post(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.search(message, err), (argv, err)
    # the relative acceleration on request, and said so
    assert post(["spectrum", str(runs["relative"]), "-n", "P", "-c", "DX", "-f",
                 "acceleration", "--frequencies", "3"]) == 0
    assert "relative to the support (not the floor spectrum)" in capsys.readouterr().out
