"""``fem post modes``: the modal table against quantities computed here from the model."""

from __future__ import annotations

import csv
import math

import numpy as np
import scipy.linalg

from fem.cli import main

# a clamped node G carrying 5 kg (which no mode moves) and three free masses of 1, 2 and
# 3 kg on springs of different stiffness along X, Y and Z
STUDY = """
[mesh.nodes]
G = [0.0, 0.0, 0.0]
A = [1.0, 0.0, 0.0]
B = [2.0, 0.0, 0.0]
C = [3.0, 0.0, 0.0]
[mesh.cells]
GA = { type = "SEG2", nodes = ["G", "A"] }
AB = { type = "SEG2", nodes = ["A", "B"] }
BC = { type = "SEG2", nodes = ["B", "C"] }
[[discrete]]
cells = ["GA"]
stiffness = [4.0e4, 3.0e4, 2.0e4]
[[discrete]]
cells = ["AB", "BC"]
stiffness = [1.0e4, 2.0e4, 5.0e4]
[[discrete]]
nodes = ["G"]
mass = 5.0
[[discrete]]
nodes = ["A"]
mass = 1.0
[[discrete]]
nodes = ["B"]
mass = 2.0
[[discrete]]
nodes = ["C"]
mass = 3.0
[[constraint]]
nodes = ["G"]
DX = 0.0
DY = 0.0
DZ = 0.0
[[analysis]]
name = "modes"
kind = "modes"
count = 9
"""

MASSES = np.array([1.0, 2.0, 3.0])


def _chain_frequencies(k_ground, k_between) -> np.ndarray:
    K = np.array([[k_ground + k_between, -k_between, 0.0],
                  [-k_between, 2 * k_between, -k_between],
                  [0.0, -k_between, k_between]])
    return np.sqrt(scipy.linalg.eigh(K, np.diag(MASSES), eigvals_only=True)) / (2 * math.pi)


def _table(tmp_path, capsys, text=STUDY):
    study = tmp_path / "s.toml"
    study.write_text(text, encoding="utf-8")
    assert main(["run", str(study), "--out", str(tmp_path / "r.h5"), "--quiet"]) == 0
    assert main(["post", "modes", str(tmp_path / "r.h5"), "--csv", str(tmp_path / "m.csv")]) == 0
    with open(tmp_path / "m.csv", newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(v) for v in row] for row in rows[1:]])


def test_modal_table_frequencies_periods_and_effective_masses(tmp_path, capsys):
    headers, table = _table(tmp_path, capsys)
    assert headers[:4] == ["mode", "frequency [Hz]", "period [s]", "generalized mass [kg]"]
    assert len(table) == 9
    expected = np.sort(np.concatenate([_chain_frequencies(4.0e4, 1.0e4),
                                       _chain_frequencies(3.0e4, 2.0e4),
                                       _chain_frequencies(2.0e4, 5.0e4)]))
    np.testing.assert_allclose(table[:, 1], expected, rtol=1e-10)
    np.testing.assert_allclose(table[:, 2], 1.0 / expected, rtol=1e-10)
    np.testing.assert_allclose(table[:, 3], 1.0, rtol=1e-12)     # mass-normalized
    column = {h: table[:, i] for i, h in enumerate(headers)}
    for d in "XYZ":
        effective = column[f"effective mass {d} [kg]"]
        # all the modes: the effective masses add up to the free mass, 6 kg (not G's 5 kg)
        assert math.isclose(effective.sum(), MASSES.sum(), rel_tol=1e-10)
        np.testing.assert_allclose(column[f"cumulative ratio {d}"],
                                   np.cumsum(effective) / MASSES.sum(), rtol=1e-10)
        np.testing.assert_allclose(effective, column[f"participation {d}"] ** 2, rtol=1e-10)
        assert math.isclose(column[f"cumulative ratio {d}"][-1], 1.0, rel_tol=1e-10)


def test_modal_table_printed(tmp_path, capsys):
    _table(tmp_path, capsys)
    capsys.readouterr()
    assert main(["post", "modes", str(tmp_path / "r.h5")]) == 0
    out = capsys.readouterr().out
    assert "cumulative ratio X" in out
    assert "total mass X 6 kg, Y 6 kg, Z 6 kg" in out


def test_complex_modes_table(tmp_path, capsys):
    """Rayleigh damping with equal ratios at two of the modes' frequencies."""
    f = [float(v) for v in _chain_frequencies(4.0e4, 1.0e4)]
    text = STUDY.replace('[[discrete]]\ncells = ["GA"]',
                         f'[model]\nrayleigh = {{ frequencies = [{f[0]!r}, {f[2]!r}], '
                         f'ratios = [0.02, 0.02] }}\n[[discrete]]\ncells = ["GA"]', 1)
    text = text.replace('kind = "modes"\ncount = 9', 'kind = "complex_modes"\ncount = 9')
    headers, table = _table(tmp_path, capsys, text.replace("np.float64", ""))
    assert headers == ["mode", "frequency [Hz]", "damped frequency [Hz]", "damping ratio",
                       "period [s]"]
    x_modes = [np.argmin(abs(table[:, 1] - fk)) for fk in f]
    np.testing.assert_allclose(table[x_modes[0], 3], 0.02, rtol=1e-8)
    np.testing.assert_allclose(table[x_modes[2], 3], 0.02, rtol=1e-8)
    assert table[x_modes[1], 3] < 0.02                          # less between the two
    np.testing.assert_allclose(table[:, 4], 1.0 / table[:, 2], rtol=1e-12)
    np.testing.assert_allclose(table[:, 2], table[:, 1] * np.sqrt(1 - table[:, 3] ** 2),
                               rtol=1e-9)
