"""Rayleigh damping of the whole model, ``[model] rayleigh``: the damping ratios of the
complex modes it gives, a free decay against the closed form, and the refused inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import fem
import postpro
from fem.cli import main

M1, M2, K1, K2 = 2.0, 1.0, 3.0e4, 1.0e4


def _two_masses(rayleigh: str, analysis: str) -> str:
    """Ground - k1 - m1 - k2 - m2 along X."""
    return f"""
[mesh.nodes]
G = [0.0, 0.0, 0.0]
A = [1.0, 0.0, 0.0]
B = [2.0, 0.0, 0.0]
[mesh.cells]
GA = {{ type = "SEG2", nodes = ["G", "A"] }}
AB = {{ type = "SEG2", nodes = ["A", "B"] }}
[model]
components = ["DX"]
rayleigh = {rayleigh}
[[discrete]]
cells = ["GA"]
stiffness = {K1}
[[discrete]]
cells = ["AB"]
stiffness = {K2}
[[discrete]]
nodes = ["A"]
mass = {M1}
[[discrete]]
nodes = ["B"]
mass = {M2}
[[constraint]]
nodes = ["G"]
DX = 0.0
{analysis}
"""


COMPLEX = '[[analysis]]\nname = "cm"\nkind = "complex_modes"\ncount = 2\n'


def _undamped_omegas() -> np.ndarray:
    K = np.array([[K1 + K2, -K2], [-K2, K2]])
    M = np.diag([M1, M2])
    return np.sqrt(scipy.linalg.eigh(K, M, eigvals_only=True))


def _ratios(study_text, tmp_path) -> np.ndarray:
    path = tmp_path / "s.toml"
    path.write_text(study_text, encoding="utf-8")
    with fem.run(path) as results:
        return np.asarray(results.analysis("cm")["damping_ratio"])


def test_two_frequencies_and_ratios_give_those_ratios_to_the_modes_there(tmp_path):
    f1, f2 = (float(w) / (2 * math.pi) for w in _undamped_omegas())
    text = _two_masses(f"{{ frequencies = [{f1!r}, {f2!r}], ratios = [0.02, 0.03] }}", COMPLEX)
    np.testing.assert_allclose(_ratios(text, tmp_path), [0.02, 0.03], rtol=1e-9)


def test_ratios_between_and_beyond_the_two_frequencies(tmp_path):
    """Frequencies that are not the modes': each mode's ratio is a/(2w) + b w/2, with a, b
    solved here as a 2 x 2 linear system."""
    fa, fb, xa, xb = 5.0, 40.0, 0.03, 0.01
    wa, wb = 2 * math.pi * fa, 2 * math.pi * fb
    a, b = np.linalg.solve([[1 / (2 * wa), wa / 2], [1 / (2 * wb), wb / 2]], [xa, xb])
    w = _undamped_omegas()
    text = _two_masses(f"{{ frequencies = [{fa}, {fb}], ratios = [{xa}, {xb}] }}", COMPLEX)
    np.testing.assert_allclose(_ratios(text, tmp_path), a / (2 * w) + b * w / 2, rtol=1e-9)


def test_coefficients_give_the_closed_form_free_decay(tmp_path):
    """One mass on one spring, C = a M + b K, released from u0: the exact scheme against
    u(t) = u0 e^(-xi w t) (cos wd t + xi w / wd sin wd t)."""
    m, k, a, b, u0 = 3.0, 1.2e4, 0.8, 2.0e-4, 1e-3
    text = f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
rayleigh = {{ mass = {a}, stiffness = {b} }}
[[discrete]]
nodes = ["P"]
mass = {m}
stiffness = {k}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {u0} }}
[[analysis]]
name = "decay"
kind = "transient"
scheme = "exact"
end = 0.5
step = 1e-3
"""
    path = tmp_path / "decay.toml"
    path.write_text(text, encoding="utf-8")
    with fem.run(path) as results:
        t, u = results.analysis("decay").series("displacement", "P", "DX")
    w = math.sqrt(k / m)
    xi = a / (2 * w) + b * w / 2
    wd = w * math.sqrt(1 - xi * xi)
    exact = u0 * np.exp(-xi * w * t) * (np.cos(wd * t) + xi * w / wd * np.sin(wd * t))
    np.testing.assert_allclose(u, exact, rtol=0, atol=1e-12 * u0 * 1e3)
    assert np.abs(u - u0 * np.cos(w * t)).max() > 0.2 * u0    # the damping shows


def test_the_run_prints_and_stores_the_coefficients(tmp_path, capsys):
    f1, f2 = 10.0, 30.0
    text = _two_masses(f"{{ frequencies = [{f1}, {f2}], ratios = [0.02, 0.02] }}", COMPLEX)
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "r.h5")]) == 0
    out = capsys.readouterr().out
    w1, w2 = 2 * math.pi * f1, 2 * math.pi * f2
    a, b = 2 * 0.02 * w1 * w2 / (w1 + w2), 2 * 0.02 / (w1 + w2)   # equal ratios
    assert f"a = {a:.9g} 1/s" in out and f"b = {b:.9g} s" in out, out
    with postpro.open(tmp_path / "r.h5") as results:
        import h5py

        with h5py.File(tmp_path / "r.h5", "r") as f:
            assert f.attrs["rayleigh_mass"] == pytest.approx(a, rel=1e-12)
            assert f.attrs["rayleigh_stiffness"] == pytest.approx(b, rel=1e-12)
        assert results.status == "complete"


@pytest.mark.parametrize("rayleigh, words", [
    ("{ mass = 1.0, frequencies = [1.0, 2.0], ratios = [0.1, 0.1] }", ["not both"]),
    ("{ }", ["model.rayleigh: give mass and stiffness"]),
    ("{ mass = -1.0 }", ["model.rayleigh.mass: must be >= 0"]),
    ("{ frequencies = [2.0, 2.0], ratios = [0.1, 0.1] }", ["two distinct frequencies"]),
    ("{ frequencies = [0.0, 2.0], ratios = [0.1, 0.1] }", ["frequencies[1]: must be > 0"]),
    ("{ frequencies = [1.0, 2.0], ratios = [0.1, -0.1] }", ["ratios[2]: must be >= 0"]),
    ("{ frequencies = [1.0, 10.0], ratios = [0.01, 0.5] }", ["negative mass", "between 0.1 "
                                                              "and 10"]),
    ("{ frequencies = [1.0, 10.0], ratios = [0.5, 0.01] }", ["negative stiffness"]),
    ("{ frequencies = [1.0, 10.0] }", ["model.rayleigh.ratios: missing"]),
    ("{ mass = 1.0, colour = 2 }", ["model.rayleigh: unknown key 'colour'"]),
    ("3.0", ["model.rayleigh: expected a table"]),
])
def test_refused_rayleigh_inputs_name_the_key(rayleigh, words):
    with pytest.raises(fem.StudyError) as info:
        fem.Study.from_dict(__import__("tomllib").loads(_two_masses(rayleigh, COMPLEX)))
    for word in words:
        assert word in str(info.value), str(info.value)
