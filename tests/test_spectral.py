"""Response spectrum analysis (kind = "spectral") against modal combinations worked out in
the tests: modes from scipy's eigh of the hand-assembled matrices, Der Kiureghian's CQC
written again here, the static response solved by hand."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import postpro
from fem.cli import main
from fem.errors import StudyError
from fem.functions.spectrum import DesignSpectrum
from fem.study import load_study

# two masses in series along X (and Y, with springs YFACTOR as stiff): ground -k1- N1 -k2- N2
M1, M2, K1, K2 = 2.0, 1.0, 4000.0, 1500.0
YFACTOR = 3.0


def _study(tmp_path, analysis: str, spectra: str = "", k2=K2, extra: str = "", m2=M2) -> str:
    text = f"""
[study]
title = "two masses in series under a design spectrum"
[mesh.nodes]
G = [0.0, 0.0, 0.0]
N1 = [1.0, 0.0, 0.0]
N2 = [2.0, 0.0, 0.0]
[mesh.cells]
S1 = {{ type = "SEG2", nodes = ["G", "N1"] }}
S2 = {{ type = "SEG2", nodes = ["N1", "N2"] }}
[model]
components = ["DX", "DY"]
[[discrete]]
cells = ["S1"]
stiffness = [{K1}, {K1 * YFACTOR}, 0.0]
[[discrete]]
cells = ["S2"]
stiffness = [{k2}, {k2 * YFACTOR}, 0.0]
[[discrete]]
nodes = ["N1"]
mass = {M1}
[[discrete]]
nodes = ["N2"]
mass = {m2}
[[constraint]]
nodes = ["G"]
DX = 0.0
DY = 0.0
[spectra.flat]
frequencies = [0.1, 100.0]
damping = [0.02, 0.05]
values = [[3.0, 3.0], [2.0, 2.0]]
{spectra}
[[analysis]]
name = "modes"
kind = "modes"
count = 4
[[analysis]]
name = "peak"
kind = "spectral"
modes = "modes"
{analysis}
{extra}
"""
    path = tmp_path / "spectral.toml"
    path.write_text(text)
    return path


def _run(tmp_path, analysis, **kw):
    path = _study(tmp_path, analysis, **kw)
    out = tmp_path / "spectral.h5"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) in (0, 1)
    return postpro.open(out)


def _modes(k2=K2, factor=1.0, m2=M2):
    """Modes along X (along Y with factor = YFACTOR)."""
    M = np.diag([M1, m2])
    K = factor * np.array([[K1 + k2, -k2], [-k2, k2]])
    w2, phi = scipy.linalg.eigh(K, M)          # mass-normalized
    return np.sqrt(w2), phi, M, K


def _cqc(omega, xi):
    m = len(omega)
    rho = np.eye(m)
    for i in range(m):
        for j in range(m):
            if i != j:
                b = omega[j] / omega[i]
                rho[i, j] = (8 * np.sqrt(xi[i] * xi[j]) * (xi[i] + b * xi[j]) * b ** 1.5
                             / ((1 - b ** 2) ** 2 + 4 * xi[i] * xi[j] * b * (1 + b ** 2)
                                + 4 * (xi[i] ** 2 + xi[j] ** 2) * b ** 2))
    return rho


def test_srss_of_a_flat_spectrum_by_hand(tmp_path):
    """Each mode's peak is phi G A / w^2 (A = 3 m/s^2 at 2 % damping); SRSS of the two."""
    omega, phi, M, K = _modes()
    gamma = phi.T @ M @ np.ones(2)
    peaks = phi * (gamma * 3.0 / omega ** 2)[None, :]          # (dof, mode)
    with _run(tmp_path, 'spectrum = "flat"\ndirections = ["X"]\ncombination = "SRSS"\n'
                        'modal_damping = 0.02') as results:
        peak = results.analysis("peak")
        assert peak.value("N2", "DX") == pytest.approx(np.sqrt(np.sum(peaks[1] ** 2)), rel=1e-10)
        assert peak.value("N1", "DX") == pytest.approx(np.sqrt(np.sum(peaks[0] ** 2)), rel=1e-10)
        assert peak.value("N2", "DY") == 0.0
        # modes 1 and 3 are along X (those along Y are YFACTOR as stiff)
        for mode, x_mode in ((1, 0), (3, 1)):
            assert abs(peak.modal_peak("displacement", "N2", "DX", mode, "X")) == \
                pytest.approx(abs(peaks[1, x_mode]), rel=1e-10)
        assert peak.modal_peak("displacement", "N2", "DX", 2, "X") == 0.0
        # the spring S2 carries k2 (u2 - u1) in each mode
        s2 = np.sqrt(np.sum((K2 * (peaks[1] - peaks[0])) ** 2))
        assert peak.element_force("S2", "N") == pytest.approx(s2, rel=1e-10)
        assert peak.spectral_acceleration[:, 0] == pytest.approx([3.0] * 4)
        assert np.abs(peak.participation_factor[[0, 2], 0]) == pytest.approx(np.abs(gamma),
                                                                             rel=1e-10)


def test_cqc_of_two_close_modes_by_hand_and_srss_as_its_limit_for_distant_ones(tmp_path):
    """A light mass tuned to the first (m2/k2 = m1/k1, as a tuned-mass damper): two close
    frequencies, correlated at 5 % damping; the chain of the other tests: well separated
    modes, where CQC comes within 1 % of SRSS."""
    for k2, m2, close in ((K1 * 0.04 / M1, 0.04, True), (K2, M2, False)):
        omega, phi, M, K = _modes(k2, m2=m2)
        xi = np.array([0.05, 0.05])
        gamma = phi.T @ M @ np.ones(2)
        peaks = phi * (gamma * 2.0 / omega ** 2)[None, :]
        rho = _cqc(omega, xi)
        cqc = np.sqrt(np.einsum("ki,ij,kj->k", peaks, rho, peaks))
        srss = np.sqrt(np.sum(peaks ** 2, axis=1))
        folder = tmp_path / str(k2)
        folder.mkdir()
        with _run(folder, 'spectrum = "flat"\ndirections = ["X"]\nmodal_damping = 0.05',
                  k2=k2, m2=m2) as results:
            peak = results.analysis("peak")
            got = np.array([peak.value("N1", "DX"), peak.value("N2", "DX")])
        assert got == pytest.approx(cqc, rel=1e-10)
        if close:
            assert rho[0, 1] > 0.3 and np.max(np.abs(cqc / srss - 1)) > 0.05
        else:
            assert rho[0, 1] < 0.03 and got == pytest.approx(srss, rel=0.01)


def test_the_residual_recovers_the_static_response_when_every_mode_is_cut(tmp_path):
    """max_frequency below the first mode: no mode is combined and the pseudo-mode is the
    whole static response to the inertia load M r A (A the zero-period acceleration: the
    spectrum's value at its highest frequency, the larger of its rows, 3 m/s^2)."""
    omega, phi, M, K = _modes()
    static = np.linalg.solve(K, M @ np.ones(2) * 3.0)
    with _run(tmp_path, 'spectrum = "flat"\ndirections = ["X"]\nresidual = true\n'
                        'max_frequency = 0.01\nmodal_damping = 0.02') as results:
        peak = results.analysis("peak")
        assert [peak.value("N1", "DX"), peak.value("N2", "DX")] == pytest.approx(static,
                                                                                  rel=1e-12)
        # the clamp holds the whole inertia load: (m1 + m2) A
        assert peak.reaction("G", "FX") == pytest.approx((M1 + M2) * 3.0, rel=1e-12)
        assert len(peak.frequency) == 0


def test_with_every_mode_the_residual_vanishes_and_modes_add_up_to_the_static_response(
        tmp_path):
    omega, phi, M, K = _modes()
    static = np.linalg.solve(K, M @ np.ones(2) * 3.0)
    with _run(tmp_path, 'spectrum = "flat"\ndirections = ["X"]\nresidual = true\n'
                        'modal_damping = 0.02') as results:
        peak = results.analysis("peak")
        residual = peak._dataset("residual/displacement")[()]
        assert np.max(np.abs(residual)) < 1e-12 * np.max(static)
        total = sum(peak.modal_peak("displacement", "N2", "DX", m, "X") for m in range(1, 5))
        assert total == pytest.approx(static[1], rel=1e-10)
        reactions = sum(peak.modal_peak("reaction", "G", "FX", m, "X") for m in range(1, 5))
        assert abs(reactions) == pytest.approx((M1 + M2) * 3.0, rel=1e-10)


def test_two_directions_by_srss_and_by_100_40_40(tmp_path):
    """The Y spectrum is scaled by 0.5; the Y springs are YFACTOR as stiff."""
    def srss(factor, level):
        omega, phi, M, K = _modes(factor=factor)
        gamma = phi.T @ M @ np.ones(2)
        peaks = phi * (gamma * level / omega ** 2)[None, :]
        return np.sqrt(np.sum(peaks ** 2, axis=1))

    x, y = srss(1.0, 3.0), srss(YFACTOR, 1.5)
    for rule, expected in (("SRSS", x), ("100-40-40", x + 0.4 * y)):
        folder = tmp_path / rule
        folder.mkdir()
        with _run(folder, f'spectrum = {{ X = "flat", Y = "flat" }}\ndirections = ["X", "Y"]\n'
                          f'combination = "SRSS"\nscale = {{ Y = 0.5 }}\nmodal_damping = 0.02\n'
                          f'direction_combination = "{rule}"') as results:
            peak = results.analysis("peak")
            # node N2 moves along X under X and along Y under Y: each combined separately
            assert peak.direction_peak("displacement", "N2", "DX", "X") == \
                pytest.approx(x[1], rel=1e-10)
            assert peak.direction_peak("displacement", "N2", "DY", "Y") == \
                pytest.approx(y[1], rel=1e-10)
            # each dof moves along one axis only: the other direction adds nothing to it
            assert peak.value("N2", "DX") == pytest.approx(x[1], rel=1e-10)
            assert peak.value("N2", "DY") == pytest.approx(y[1], rel=1e-10)
            # the spring S1's axial force takes X only; its shear VY takes Y only
            fx = peak.direction_peak("element_force", "S1", "N", "X")
            fy = peak.direction_peak("element_force", "S1", "VY", "Y")
            assert peak.element_force("S1", "N") == pytest.approx(fx, rel=1e-10)
            assert peak.element_force("S1", "VY") == pytest.approx(fy, rel=1e-10)
            # the clamp's FX under X and under Y (zero): combined by the rule
            rx = peak.direction_peak("reaction", "G", "FX", "X")
            assert peak.direction_peak("reaction", "G", "FX", "Y") == pytest.approx(0, abs=1e-9)
            assert peak.reaction("G", "FX") == pytest.approx(rx, rel=1e-10)
            assert expected is not None


def test_damping_is_interpolated_between_rows_and_frequency_on_log_axes():
    spectrum = DesignSpectrum("s", np.array([1.0, 10.0]), np.array([0.02, 0.05]),
                              np.array([[1.0, 4.0], [0.5, 2.0]]))
    # log-log between (1, 1) and (10, 4): at f = sqrt(10) the value is sqrt(4) = 2
    assert spectrum(np.sqrt(10.0), 0.02) == pytest.approx(2.0, rel=1e-12)
    # halfway in damping: the mean of the two rows at that frequency (2 and 1)
    assert spectrum(np.sqrt(10.0), 0.035) == pytest.approx(1.5, rel=1e-12)
    assert spectrum(0.1, 0.02) == 1.0 and spectrum(100.0, 0.05) == 2.0   # held flat outside
    with pytest.raises(StudyError, match="damping ratio 0.1 is outside"):
        spectrum(2.0, 0.1)
    linear = DesignSpectrum("s", np.array([1.0, 3.0]), np.array([0.05]),
                            np.array([[1.0, 3.0]]), "linear")
    assert linear(2.0, 0.3) == pytest.approx(2.0)      # one row: any damping


def test_projected_damping_is_the_default_modal_damping(tmp_path):
    """Rayleigh damping C = b K gives each mode xi = b w / 2."""
    omega, phi, M, K = _modes()
    b = 2e-3
    path = _study(tmp_path, 'spectrum = "wide"\ndirections = ["X"]',
                  spectra="[spectra.wide]\nfrequencies = [0.1, 100.0]\ndamping = [0.0, 0.2]\n"
                          "values = [[3.0, 3.0], [2.0, 2.0]]")
    text = path.read_text().replace('components = ["DX", "DY"]',
                                    f'components = ["DX", "DY"]\nrayleigh = {{ mass = 0.0, '
                                    f'stiffness = {b} }}')
    path.write_text(text)
    out = tmp_path / "rayleigh.h5"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    with postpro.open(out) as results:
        # X modes are 1 and 3; Y modes (YFACTOR as stiff) 2 and 4
        omega_y = _modes(factor=YFACTOR)[0]
        expected = b * np.array([omega[0], omega_y[0], omega[1], omega_y[1]]) / 2
        assert results.analysis("peak").damping == pytest.approx(expected, rel=1e-10)


def test_checks_on_a_spectral_analysis_take_no_time(tmp_path, capsys):
    omega, phi, M, K = _modes()
    gamma = phi.T @ M @ np.ones(2)
    peaks = phi * (gamma * 3.0 / omega ** 2)[None, :]
    expected = np.sqrt(np.sum(peaks[1] ** 2))
    check = (f'[[check]]\nanalysis = "peak"\nquantity = "displacement"\nnode = "N2"\n'
             f'component = "DX"\nreference = {float(expected)!r}\ntolerance = 1e-9\n')
    path = _study(tmp_path, 'spectrum = "flat"\ndirections = ["X"]\ncombination = "SRSS"\n'
                            'modal_damping = 0.02', extra=check)
    assert main(["run", str(path), "--out", str(tmp_path / "c.h5")]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    path.write_text(path.read_text() + "time = 0.5\n")
    with pytest.raises(StudyError, match="is spectral: its checks take no time"):
        load_study(path)


@pytest.mark.parametrize("analysis, words", [
    ('spectrum = "nope"\ndirections = ["X"]', "unknown spectrum 'nope'"),
    ('spectrum = "flat"\ndirections = ["W"]', "directions: expected distinct directions"),
    ('spectrum = { X = "flat" }\ndirections = ["X", "Y"]', "spectrum.Y: missing"),
    ('spectrum = "flat"\ndirections = ["X"]\ncombination = "ABS"', 'unknown value "ABS"'),
    ('spectrum = "flat"\ndirections = ["X"]\nmodal_damping = [0.02, 0.02, 0.02]',
     "3 ratios for the 4 modes"),
    ('spectrum = "flat"\ndirections = ["X"]\nmodal_damping = 0.2',
     "damping ratio 0.2 is outside"),
    ('spectrum = "flat"\ndirections = ["X"]\nresidual_acceleration = 2.0',
     "give it with residual = true"),
])
def test_bad_spectral_inputs_name_the_key(tmp_path, capsys, analysis, words):
    path = _study(tmp_path, analysis)
    code = main(["run", str(path), "--out", str(tmp_path / "bad.h5"), "--quiet"])
    assert code == 2 and words in capsys.readouterr().err


@pytest.mark.parametrize("spectra, words", [
    ("[spectra.bad]\nfrequencies = [1.0, 0.5]\ndamping = 0.05\nvalues = [1.0, 1.0]",
     "spectra.bad.frequencies: must increase strictly"),
    ("[spectra.bad]\nfrequencies = [1.0, 2.0]\ndamping = [0.02, 0.05]\nvalues = [1.0, 1.0]",
     "expected 2 row(s)"),
    ("[spectra.bad]\nfrequencies = [1.0, 2.0]\ndamping = 0.05\nvalues = [1.0, -1.0]",
     "pseudo-accelerations >= 0"),
    ("[spectra.bad]\nfrequencies = [1.0, 2.0]\ndamping = 0.05\nvalues = [1.0, 0.0]",
     "cannot be interpolated on log axes"),
])
def test_bad_spectra_name_the_key(tmp_path, spectra, words):
    path = _study(tmp_path, 'spectrum = "flat"\ndirections = ["X"]', spectra=spectra)
    with pytest.raises(StudyError) as info:
        load_study(path)
    assert words in str(info.value)


FRAME = Path(__file__).resolve().parents[1] / "studies" / "spectral_frame.toml"


def _frame_peaks():
    """The peaks of studies/spectral_frame.toml worked out here: eigh of each direction's
    3 x 3 chain, the spectrum read on log-log axes and interpolated in damping, CQC of the
    modes below 9 Hz, the residual of the others at the zero-period acceleration, by SRSS."""
    data = tomllib.loads(FRAME.read_text())
    table = data["spectra"]["design"]
    f_table, rows = np.array(table["frequencies"]), np.array(table["values"])
    xi = 0.03
    w = (xi - 0.02) / (0.05 - 0.02)

    def spectrum(f):
        read = [np.exp(np.interp(np.log(f), np.log(f_table), np.log(r))) for r in rows]
        return (1 - w) * read[0] + w * read[1]

    m = 1.0e4
    out = {}
    for axis, k in (("X", np.array([2.0e7, 1.5e7, 1.0e7])),
                    ("Y", 1.25 * np.array([2.0e7, 1.5e7, 1.0e7]))):
        K = np.diag(k + np.append(k[1:], 0.0)) - np.diag(k[1:], 1) - np.diag(k[1:], -1)
        M = m * np.eye(3)
        w2, phi = scipy.linalg.eigh(K, M)
        omega = np.sqrt(w2)
        kept = omega / (2 * np.pi) <= 9.0
        gamma = phi.T @ M @ np.ones(3)
        peaks = phi[:, kept] * (gamma[kept] * spectrum(omega[kept] / (2 * np.pi))
                                / w2[kept])[None, :]
        rho = _cqc(omega[kept], np.full(kept.sum(), xi))
        modal = np.sqrt(np.einsum("ki,ij,kj->k", peaks, rho, peaks))
        static = np.linalg.solve(K, M @ np.ones(3))
        residual = (static - phi[:, kept] @ (gamma[kept] / w2[kept])) * rows[:, -1].max()
        u = np.sqrt(modal ** 2 + residual ** 2)
        # base shear: the first storey's spring force, mode by mode, then combined
        shear_modes = k[0] * peaks[0]
        shear = np.sqrt(np.einsum("i,ij,j->", shear_modes, rho, shear_modes)
                        + (k[0] * residual[0]) ** 2)
        out[axis] = (u, shear)
    return out


def test_the_spectral_frame_study_against_peaks_worked_out_by_hand(tmp_path, capsys):
    peaks = _frame_peaks()
    data = tomllib.loads(FRAME.read_text())
    references = {(c["quantity"], c.get("node"), c["component"]): c["reference"]
                  for c in data["check"]}
    assert references == pytest.approx({
        ("displacement", "F3", "DX"): peaks["X"][0][2],
        ("displacement", "F3", "DY"): peaks["Y"][0][2],
        ("reaction", "G", "FX"): peaks["X"][1],
        ("reaction", "G", "FY"): peaks["Y"][1]}, rel=1e-6)
    assert main(["run", str(FRAME), "--out", str(tmp_path / "frame.h5")]) == 0
    assert "4 passed, 0 failed" in capsys.readouterr().out
    with postpro.open(tmp_path / "frame.h5") as results:
        seismic = results.analysis("seismic")
        for axis, component in (("X", "DX"), ("Y", "DY")):
            got = [seismic.value(node, component) for node in ("F1", "F2", "F3")]
            assert got == pytest.approx(peaks[axis][0], rel=1e-10)
