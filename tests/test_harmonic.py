"""Harmonic response against closed forms and independent dense solves."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from fem.analyses.harmonic import frequencies


def oscillator(m, k, c, force, freqs, extra=""):
    """One dof along X, spring and damper to the ground, a force whose time function (0 at
    t = 0 and beyond 2 s) the harmonic analysis ignores."""
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {m}
stiffness = {k}
damping = {c}
[functions.ramp]
table = [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]
[[load]]
name = "f"
nodes = ["P"]
FX = {force}
function = "ramp"
[[analysis]]
name = "modes"
kind = "modes"
count = 1
[[analysis]]
name = "physical"
kind = "harmonic"
frequencies = {freqs}
[[analysis]]
name = "modal"
kind = "harmonic"
basis = "modal"
modes = "modes"
frequencies = {freqs}
{extra}
"""


def test_one_dof_matches_the_closed_form(run_toml):
    m, k, c, force = 2.0, 8.0e3, 12.0, 3.0
    freqs = [0.0, 1.0, 9.5, 10.0, 10.0658, 10.5, 40.0]          # resonance near 10.066 Hz
    f = run_toml(oscillator(m, k, c, force, freqs))
    w = 2 * np.pi * np.array(freqs)
    exact = force / (k - m * w ** 2 + 1j * c * w)
    for name in ("physical", "modal"):
        g = f["analyses"][name]
        assert g.attrs["status"] == "complete"
        assert g["frequency"][:].tolist() == freqs
        u = g["displacement"][:, 0]
        assert u.dtype == np.complex128
        assert np.abs(u) == pytest.approx(np.abs(exact), rel=1e-12)
        assert np.angle(u) == pytest.approx(np.angle(exact), abs=1e-12)
        assert g["velocity"][:, 0] == pytest.approx(1j * w * exact, rel=1e-12)
        assert g["acceleration"][:, 0] == pytest.approx(-(w ** 2) * exact, rel=1e-12)
    # static at 0 Hz, and a quarter period behind the force at resonance
    u = f["analyses/physical/displacement"][:, 0]
    assert u[0] == pytest.approx(force / k, rel=1e-14)
    resonance = np.sqrt(k / m) / (2 * np.pi)
    g = run_toml(oscillator(m, k, c, force, f"[{float(resonance)!r}]"), name="resonance")
    assert np.angle(g["analyses/physical/displacement"][0, 0]) == pytest.approx(-np.pi / 2,
                                                                                abs=1e-12)


def two_dofs(freqs, fields='["displacement", "velocity", "acceleration"]'):
    """A (clamped) - k1, c1 - P1 - k2 - P2, a damper c3 from P2 to the ground
    (non-proportional damping), 1 N on P1 and 2 N on P2 as two loads."""
    return f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
P1 = [1.0, 0.0, 0.0]
P2 = [2.0, 0.0, 0.0]
[mesh.cells]
AP1 = {{ type = "SEG2", nodes = ["A", "P1"] }}
P1P2 = {{ type = "SEG2", nodes = ["P1", "P2"] }}
[model]
components = ["DX"]
[[discrete]]
cells = ["AP1"]
stiffness = 4.0e4
damping = 30.0
[[discrete]]
cells = ["P1P2"]
stiffness = 1.0e4
[[discrete]]
nodes = ["P1"]
mass = 3.0
[[discrete]]
nodes = ["P2"]
mass = 1.5
damping = 8.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[[load]]
name = "one"
nodes = ["P1"]
FX = 1.0
[[load]]
name = "two"
nodes = ["P2"]
FX = 2.0
[[analysis]]
name = "modes"
kind = "modes"
count = 2
[[analysis]]
name = "physical"
kind = "harmonic"
frequencies = {freqs}
fields = {fields}
[[analysis]]
name = "modal"
kind = "harmonic"
basis = "modal"
modes = "modes"
frequencies = {freqs}
fields = {fields}
"""


TWO_M = np.diag([3.0, 1.5])
TWO_K = np.array([[5.0e4, -1.0e4], [-1.0e4, 1.0e4]])
TWO_C = np.array([[30.0, 0.0], [0.0, 8.0]])
TWO_F = np.array([1.0, 2.0])


def test_two_dofs_modal_with_all_modes_equals_physical(run_toml):
    spec = {"start": 0.5, "stop": 40.0, "count": 300}
    f = run_toml(two_dofs("{ start = 0.5, stop = 40.0, count = 300 }"))
    freqs = np.linspace(0.5, 40.0, 300)
    assert np.array_equal(frequencies(spec), freqs)
    physical, modal = f["analyses/physical"], f["analyses/modal"]
    assert np.array_equal(physical["frequency"][:], freqs)
    w = 2 * np.pi * freqs
    exact = np.array([np.linalg.solve(TWO_K - wi ** 2 * TWO_M + 1j * wi * TWO_C, TWO_F)
                      for wi in w])
    u = physical["displacement"][:]                            # dofs A, P1, P2
    assert u.shape == (300, 3) and np.all(u[:, 0] == 0)       # A is held at zero
    scale = np.abs(exact).max()
    assert np.abs(u[:, 1:] - exact).max() <= 1e-12 * scale
    for field in ("displacement", "velocity", "acceleration"):
        a, b = modal[field][:], physical[field][:]
        assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max()


def test_truncated_modal_basis_is_the_projection_on_that_basis(run_toml):
    f = run_toml(two_dofs("[3.0, 12.0, 25.0]").replace("count = 2", "count = 1"))
    w2, phi = scipy.linalg.eigh(TWO_K, TWO_M)
    p = phi[:, :1]                                              # lowest mode, mass-normalized
    w = 2 * np.pi * np.array([3.0, 12.0, 25.0])
    expected = np.array([p @ np.linalg.solve(p.T @ (TWO_K - wi ** 2 * TWO_M + 1j * wi * TWO_C) @ p,
                                             p.T @ TWO_F) for wi in w])
    u = f["analyses/modal/displacement"][:, 1:]
    assert np.abs(u - expected).max() <= 1e-12 * np.abs(expected).max()
    # the second mode is left out indeed: the full response differs
    physical = f["analyses/physical/displacement"][:, 1:]
    assert np.abs(physical[2] - u[2]).max() > 1e-3 * np.abs(physical[2]).max()


def test_only_the_fields_asked_are_stored(run_toml):
    f = run_toml(two_dofs("[1.0, 2.0]", fields='["acceleration"]'))
    g = f["analyses/physical"]
    assert set(g) == {"frequency", "acceleration"}
    assert g["acceleration"].attrs["units"] == "m/s^2" and g["frequency"].attrs["units"] == "Hz"


def test_singular_dynamic_stiffness_fails_the_analysis(run_toml):
    text = oscillator(2.0, 0.0, 0.0, 1.0, "[0.0, 1.0]").replace("stiffness = 0.0\n", "")
    f = run_toml(text)
    report = f.report
    assert report.failed_analysis == "physical"
    assert "singular at 0 Hz" in report.message
    assert f["analyses/physical"].attrs["status"] == "failed"


def test_v4_frequency_response_matches_a_dense_solve(tmp_path):
    import h5py
    from conftest import ROOT
    from fem.runner import run_study

    out = tmp_path / "v4.h5"
    run_study(ROOT / "studies" / "v4_chain8.toml", out)
    with h5py.File(out, "r") as f:
        freqs = f["analyses/frf/frequency"][:]
        u = f["analyses/frf/displacement"][:]
    # the chain written by hand: 10 kg masses, k = 1e5 N/m, dampers 250, 50 (x7), 25 N.s/m
    k, c = 1e5, [250.0] + [50.0] * 7 + [25.0]
    K = 2 * k * np.eye(8) - k * (np.eye(8, k=1) + np.eye(8, k=-1))
    C = np.zeros((8, 8))
    for e, ce in enumerate(c):                 # damper e joins P(e) and P(e + 1), P0 = A, P9 = B
        i, j = e - 1, e
        if i >= 0:
            C[i, i] += ce
        if j < 8:
            C[j, j] += ce
        if i >= 0 and j < 8:
            C[i, j] -= ce
            C[j, i] -= ce
    F = np.zeros(8)
    F[3] = 1.0                                 # 1 N on P4
    assert np.array_equal(freqs, np.linspace(0.5, 35.0, 691))
    w = 2 * np.pi * freqs
    exact = np.array([np.linalg.solve(K - wi ** 2 * 10.0 * np.eye(8) + 1j * wi * C, F)
                      for wi in w])
    assert np.all(u[:, [0, 9]] == 0)
    assert np.abs(u[:, 1:9] - exact).max() <= 1e-12 * np.abs(exact).max()


@pytest.mark.parametrize("offset", [0.0, 1e-13, 3e-9])
def test_an_undamped_mode_at_its_natural_frequency_is_refused(tmp_path, capsys, offset):
    from fem.cli import EXIT_INVALID, main

    m, k = 2.0, 8.0e3
    natural = float(np.sqrt(k / m) / (2 * np.pi))        # 10.0658 Hz
    frequency = natural * (1 + offset)                   # the same within round-off
    for basis, owner in (("physical", "of the structure"), ("modal", "of 'modes'")):
        text = oscillator(m, k, 0.0, 3.0, f"[1.0, {frequency!r}]")
        physical = text.index('[[analysis]]\nname = "physical"')
        modal = text.index('[[analysis]]\nname = "modal"')
        # the analysis of the other basis left out
        text = text[:modal] if basis == "physical" else text[:physical] + text[modal:]
        study = tmp_path / f"{basis}.toml"
        study.write_text(text)
        out = tmp_path / f"{basis}.h5"
        code = main(["run", str(study), "--out", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert code == EXIT_INVALID, err
        assert err.startswith("error: analysis[") and err.count("\n") == 1, err
        assert (f".frequencies: {frequency:.12g} Hz is the natural frequency of mode 1 {owner} "
                f"({natural:.12g} Hz), which no damping reaches") in err
        assert not out.exists() and not out.with_name(out.name + ".partial").exists()


def test_a_damped_mode_or_a_frequency_beside_resonance_is_computed(run_toml):
    m, k, force = 2.0, 8.0e3, 3.0
    natural = float(np.sqrt(k / m) / (2 * np.pi))
    for c, frequency in ((1e-3, natural), (0.0, natural * (1 + 1e-6))):
        f = run_toml(oscillator(m, k, c, force, f"[{frequency!r}]"), name=f"c{c}")
        w = 2 * np.pi * frequency
        exact = force / (k - m * w ** 2 + 1j * c * w)
        for name in ("physical", "modal"):
            assert f[f"analyses/{name}"].attrs["status"] == "complete"
            assert f[f"analyses/{name}/displacement"][0, 0] == pytest.approx(exact, rel=1e-6)
