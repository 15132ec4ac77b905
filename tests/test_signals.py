"""fem post psd and fem post fft, and postpro.psd / postpro.fft: sines of known amplitude
and phase, white noise of known variance, on results files written here; irregular
sampling and other bad inputs."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import postpro
from fem.results import ResultsWriter
from postpro.cli import main
from postpro.errors import PostproError

FS = 1000.0                     # Hz, sampling rate of the synthetic series
N = 8192                        # samples
A1, F1, PHI1 = 2.5e-3, 125.0, 30.0    # m, Hz, deg: B DX = A1 cos(2 pi F1 t + PHI1)
A2, F2 = 40.0, 62.5             # N: the element force of S1, A2 sin(2 pi F2 t), on a bin
SIGMA = 0.3                     # m/s, white noise of B DX velocity
SEED = 20240611


def _series(t):
    """(displacement (n, 2), velocity (n, 2), element force (n, 3), reaction (n, 1))."""
    rng = np.random.default_rng(SEED)
    z = 0 * t
    u = np.column_stack([z, A1 * np.cos(2 * np.pi * F1 * t + np.radians(PHI1))])
    v = np.column_stack([z, rng.normal(0.0, SIGMA, len(t))])
    force = np.column_stack([A2 * np.sin(2 * np.pi * F2 * t), z, z])
    reaction = -force[:, :1] + 7.0                 # a mean of 7 N
    return u, v, force, reaction


def write_file(path, time):
    writer = ResultsWriter(path, title="spectra", study_source="", node_names=["A", "B"],
                           coordinates=[[0, 0, 0], [1, 0, 0]], dof_node=[0, 1],
                           dof_component=["DX", "DX"], dof_imposed=[True, False],
                           cells={"SEG2": ([[0, 1]], ["S1"])})
    run = writer.analysis("run", "transient", basis="physical", scheme="newmark")
    series = run.series({"displacement": 2, "velocity": 2, "element_force": 3, "reaction": 1},
                        units={"element_force": "N", "reaction": "N"})
    u, v, force, reaction = _series(time)
    for block in np.array_split(np.arange(len(time)), 3):
        series.append(time=time[block], displacement=u[block], velocity=v[block],
                      element_force=force[block], reaction=reaction[block])
    run.dataset("element_names", np.array(["S1"], dtype=object))
    run.dataset("element_components", np.array(["N", "VY", "VZ"], dtype=object))
    run.dataset("reaction_dofs", np.array([0]))
    run.dataset("reaction_names", np.array(["A FX"], dtype=object))
    run.finish(steps=len(time) - 1)
    sweep = writer.analysis("sweep", "harmonic")
    sweep.dataset("frequency", np.array([1.0, 2.0]))
    sweep.dataset("displacement", np.ones((2, 2), complex))
    sweep.finish()
    writer.close(complete=True)
    return path


@pytest.fixture(scope="module")
def uniform(tmp_path_factory):
    return write_file(tmp_path_factory.mktemp("spectra") / "uniform.h5", np.arange(N) / FS)


@pytest.fixture(scope="module")
def irregular(tmp_path_factory):
    """The instants of an adaptive scheme: steps that grow and shrink around 1 ms, and one
    instant archived twice (an event)."""
    steps = 1e-3 * (1.0 + 0.3 * np.sin(np.arange(N - 1) / 50.0))
    t = np.concatenate([[0.0], np.cumsum(steps)])
    t[4001] = t[4000]
    return write_file(tmp_path_factory.mktemp("spectra") / "irregular.h5", t)


def post(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], np.array(rows[1:], dtype=float)


# -- the functions ----------------------------------------------------------------------------

def test_fft_gives_the_amplitude_and_phase_of_a_sine_on_a_bin():
    t = np.arange(N) / FS
    x = A1 * np.cos(2 * np.pi * F1 * t + np.radians(PHI1)) + 0.1
    f, amplitude, phase = postpro.fft(t, x)
    assert f[1] == pytest.approx(FS / N) and f[-1] == pytest.approx(FS / 2)
    k = int(np.argmax(amplitude[1:])) + 1
    assert f[k] == pytest.approx(F1)
    assert amplitude[k] == pytest.approx(A1, rel=1e-12)
    assert phase[k] == pytest.approx(PHI1, abs=1e-9)
    assert amplitude[0] == pytest.approx(0.1, rel=1e-12)             # the mean at 0 Hz
    others = np.delete(amplitude, [0, k])
    assert others.max() < 1e-12 * A1
    # a window keeps the amplitude of a sine on a bin (its coherent gain is divided out)
    _, hann, _ = postpro.fft(t, x, window="hann", detrend="mean")
    assert hann[k] == pytest.approx(A1, rel=1e-12) and hann[0] < 1e-15
    # between two bins the flat-top window is within 0.2 % where the rectangle loses 36 %
    x = np.sin(2 * np.pi * (F1 + FS / N / 2) * t)
    assert postpro.fft(t, x)[1].max() < 0.65
    assert postpro.fft(t, x, window="flattop")[1].max() == pytest.approx(1.0, abs=2e-3)


def test_fft_of_an_odd_count_and_of_the_nyquist_bin():
    """cos(pi fs t) alternates +-1: amplitude 1 at fs/2 (a bin counted once); with an odd
    count every bin but 0 Hz is doubled."""
    t = np.arange(64) / FS
    f, amplitude, _ = postpro.fft(t, np.cos(np.pi * FS * t))
    assert f[-1] == FS / 2 and amplitude[-1] == pytest.approx(1.0, rel=1e-12)
    t = np.arange(63) / FS
    f, amplitude, _ = postpro.fft(t, 3.0 * np.cos(2 * np.pi * (5 * FS / 63) * t))
    assert amplitude[5] == pytest.approx(3.0, rel=1e-12) and len(f) == 32


def test_psd_of_a_sine_integrates_to_half_its_square():
    t = np.arange(N) / FS
    x = A1 * np.cos(2 * np.pi * F1 * t + 1.0)
    f, S = postpro.psd(t, x)
    assert f[1] == pytest.approx(FS / 2048)                 # default segment: N / 4
    assert np.sum(S) * f[1] == pytest.approx(A1 ** 2 / 2, rel=1e-6)
    assert f[int(np.argmax(S))] == pytest.approx(F1)
    # Parseval: one rectangular segment without detrending holds the mean square exactly
    f, S = postpro.psd(t, x + 0.2, segment=N, window="boxcar", detrend="none")
    assert np.sum(S) * f[1] == pytest.approx(np.mean((x + 0.2) ** 2), rel=1e-12)


def test_psd_of_white_noise_is_flat_at_two_sigma_squared_over_fs():
    rng = np.random.default_rng(SEED)
    n, sigma = 1 << 16, 0.7
    t = np.arange(n) / FS
    x = rng.normal(0.0, sigma, (n, 2)) * [1.0, 2.0]
    f, S = postpro.psd(t, x, segment=1024)
    level = 2 * sigma ** 2 / FS * np.array([1.0, 4.0])
    inner = S[1:-1]                       # 0 Hz (mean removed) and fs/2 are not doubled
    # 127 half-overlapping Hann segments: each bin within ~10 %, their mean within 1 %
    assert np.allclose(inner.mean(axis=0), level, rtol=0.01)
    assert np.all(np.abs(inner / level - 1).max(axis=0) < 0.5)
    assert np.all(np.abs(inner / level - 1).std(axis=0) < 0.15)
    assert np.allclose(np.sum(S, axis=0) * f[1], sigma ** 2 * np.array([1.0, 4.0]), rtol=0.01)


def test_resample_interpolates_linearly_and_keeps_the_state_after_an_event():
    t = np.array([0.0, 0.3, 0.3, 1.0, 1.7])
    x = np.array([0.0, 3.0, -3.0, 4.0, 11.0])
    grid, y = postpro.spectral.resample(t, x, 0.5)
    assert np.allclose(grid, [0.0, 0.5, 1.0, 1.5])
    assert np.allclose(y, [0.0, -3.0 + 7.0 * 0.2 / 0.7, 4.0, 9.0])
    with pytest.raises(PostproError, match="not uniformly spaced"):
        postpro.psd(t, x)
    f, S = postpro.psd(t, x, resample=0.25)
    assert len(f) == 4


@pytest.mark.parametrize("call, message", [
    (lambda t, x: postpro.psd(t, x, segment=N + 1), "segment: 8193 samples"),
    (lambda t, x: postpro.psd(t, x, overlap=1.0), "overlap"),
    (lambda t, x: postpro.psd(t, x, window="kaiser"), "unknown window 'kaiser'"),
    (lambda t, x: postpro.fft(t, x, detrend="square"), "unknown detrend"),
    (lambda t, x: postpro.psd(t[:3], x[:3]), "at least 4 samples"),
    (lambda t, x: postpro.fft(t[:1], x[:1]), "at least 2 instants"),
    (lambda t, x: postpro.fft(t, x[:-1]), "do not match"),
    (lambda t, x: postpro.psd(t, x, resample=-1.0), "step must be > 0"),
    (lambda t, x: postpro.fft(t, np.where(t > 1, np.nan, x)), "not finite"),
])
def test_bad_arguments_of_the_functions(call, message):
    t = np.arange(N) / FS
    with pytest.raises(PostproError, match=message):
        call(t, np.sin(t))


# -- fem post psd / fft -----------------------------------------------------------------------

def test_fem_post_fft_of_nodal_fields_and_forces(capsys, uniform, tmp_path):
    figure = tmp_path / "fft.png"
    code, out, err = post(capsys, "fft", uniform, "-n", "B", "-f", "displacement",
                          "-f", "element_force", "-e", "S1", "--plot", figure)
    assert code == 0, err
    header, data = read_csv(out)
    assert header[:5] == ["frequency [Hz]", "B DX displacement amplitude [m]",
                          "B DX displacement phase [deg]", "S1 N element_force amplitude [N]",
                          "S1 N element_force phase [deg]"]
    assert header[5:] == [f"S1 {c} element_force {what}" for c in ("VY", "VZ")
                          for what in ("amplitude [N]", "phase [deg]")]
    assert not data[:, 5:].any()
    f = data[:, 0]
    k1, k2 = np.argmin(np.abs(f - F1)), np.argmin(np.abs(f - F2))
    assert data[k1, 1] == pytest.approx(A1, rel=1e-9) and data[k1, 2] == pytest.approx(PHI1)
    assert data[k2, 3] == pytest.approx(A2, rel=1e-9) and data[k2, 4] == pytest.approx(-90.0)
    assert "largest amplitude" in err and "wrote" in err
    assert figure.stat().st_size > 1000


def test_fem_post_psd_csv_and_rms(capsys, uniform, tmp_path):
    out_csv = tmp_path / "psd.csv"
    code, out, err = post(capsys, "psd", uniform, "-n", "B", "-c", "DX", "-f", "displacement",
                          "-f", "velocity", "--segment", "1024", "--csv", out_csv)
    assert code == 0 and err == ""
    header, data = read_csv(out_csv.read_text())
    assert header == ["frequency [Hz]", "B DX displacement PSD [m^2/Hz]",
                      "B DX velocity PSD [(m/s)^2/Hz]"]
    f = data[:, 0]
    assert f[1] == pytest.approx(FS / 1024) and f[-1] == pytest.approx(FS / 2)
    assert np.sum(data[:, 1]) * f[1] == pytest.approx(A1 ** 2 / 2, rel=1e-6)
    noise = data[1:-1, 2]
    assert noise.mean() == pytest.approx(2 * SIGMA ** 2 / FS, rel=0.03)
    # the summary: segments, and the RMS from the PSD beside that of the series
    assert "segments of 1024 samples" in out and "15 averaged" in out
    line = next(row for row in out.splitlines() if row.startswith("B DX displacement"))
    from_psd, from_series = (float(v) for v in line.split()[3:5])
    assert from_psd == pytest.approx(A1 / np.sqrt(2), rel=1e-5)
    assert from_series == pytest.approx(A1 / np.sqrt(2), rel=1e-5)


def test_fem_post_psd_of_a_reaction_removes_its_mean(capsys, uniform):
    code, out, err = post(capsys, "psd", uniform, "-f", "reaction", "-n", "A",
                          "--window", "boxcar", "--segment", "4096", "--overlap", "0")
    assert code == 0, err
    header, data = read_csv(out)
    assert header == ["frequency [Hz]", "A FX reaction PSD [N^2/Hz]"]
    assert data[0, 1] < 1e-20                                    # the mean of 7 N is gone
    assert np.sum(data[:, 1]) * data[1, 0] == pytest.approx(A2 ** 2 / 2, rel=1e-9)
    assert "2 averaged" in err


def test_irregular_instants_are_refused_or_resampled(capsys, irregular):
    code, out, err = post(capsys, "psd", irregular, "-n", "B", "-c", "DX")
    assert code == 2 and out == ""
    assert err.startswith("error: analysis 'run': the instants are not uniformly spaced")
    assert "--resample" in err and len(err.splitlines()) == 1
    code, out, err = post(capsys, "fft", irregular, "-n", "B", "-c", "DX", "--resample",
                          "5e-4", "--end", "4.0")
    assert code == 0, err
    _, data = read_csv(out)
    samples = round(1 / (data[1, 0] * 5e-4))      # 0 .. 4 s (a little less) by 0.5 ms
    assert 7990 <= samples <= 8000 and len(data) == samples // 2 + 1
    assert data[1, 0] == pytest.approx(1 / (samples * 5e-4), rel=1e-9)
    # the same by hand: linear interpolation (the value after the repeated instant),
    # then the FFT scaled to single-sided amplitudes
    with postpro.open(irregular) as results:
        t, u = results.analysis("run").series("displacement", "B", "DX", end=4.0)
    keep = np.append(np.diff(t) > 0, True)
    grid = np.arange(samples) * 5e-4
    spectrum = np.fft.rfft(np.interp(grid, t[keep], u[keep]))
    expected = 2 * np.abs(spectrum) / samples
    expected[0] /= 2
    assert np.allclose(data[:, 1], expected, rtol=1e-9, atol=1e-12 * A1)
    # the cosine of 125 Hz, interpolated between instants about 1 ms apart, loses about
    # (sin(x) / x)^2 with x = pi 125 Hz 1 ms: 5 %
    k = int(np.argmax(data[1:, 1])) + 1
    assert data[k, 0] == pytest.approx(F1, abs=0.3)
    assert data[k, 1] == pytest.approx(A1, rel=0.08)


@pytest.mark.parametrize("args, message", [
    (["-n", "B", "--start", "100"], "no archived instant within the window"),
    (["-n", "B", "--start", "1.0", "--end", "1.002"], "at least 4 samples"),
    (["-n", "C"], "C"),
    (["-n", "B", "-c", "DY"], "DY"),
    (["-f", "pressure"], "unknown field 'pressure'"),
    (["-f", "element_force", "-e", "S9"], "no element 'S9'"),
    (["-a", "sweep"], "of kind 'harmonic'; this needs transient"),
    (["-n", "B", "--segment", "9000"], "segment: 9000 samples"),
    (["-n", "B", "--overlap", "1.5"], "overlap"),
    (["-n", "B", "--window", "kaiser"], "invalid choice: 'kaiser'"),
    (["-n", "B", "--resample", "0"], "step must be > 0"),
    (["-n", "B", "--plot", "out.gif"], "unsupported suffix '.gif'"),
])
def test_bad_inputs_exit_2_with_one_line(capsys, uniform, args, message):
    code, out, err = post(capsys, "psd", uniform, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1


def test_help_lists_both_subcommands(capsys):
    code, out, _ = post(capsys, "help")
    assert code == 0 and "psd" in out and "fft" in out
