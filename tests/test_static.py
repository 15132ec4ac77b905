"""kind = "static": K u = F against systems assembled and solved here by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fem
from fem.cli import main


def _run(text, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return fem.run(path)


# a square A B C D in the XY plane, A clamped, axial springs along the four sides and the
# diagonal A-C (local frame: stiffness along the cell only), ground springs on B, C, D
NETWORK = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
C = [1.0, 1.0, 0.0]
D = [0.0, 1.0, 0.0]
[mesh.cells]
AB = { type = "SEG2", nodes = ["A", "B"] }
BC = { type = "SEG2", nodes = ["B", "C"] }
CD = { type = "SEG2", nodes = ["C", "D"] }
DA = { type = "SEG2", nodes = ["D", "A"] }
AC = { type = "SEG2", nodes = ["A", "C"] }
[model]
components = ["DX", "DY"]
[[discrete]]
cells = ["AB", "BC", "CD", "DA"]
frame = "local"
stiffness = [1.0e4, 0.0, 0.0]
[[discrete]]
cells = ["AC"]
frame = "local"
stiffness = [2.0e4, 0.0, 0.0]
[[discrete]]
nodes = ["B", "C", "D"]
stiffness = [500.0, 700.0, 0.0]
[[constraint]]
nodes = ["A"]
DX = 0.0
DY = 0.0
[[load]]
name = "push"
nodes = ["C"]
FX = 30.0
FY = -50.0
[[load]]
name = "side"
nodes = ["D"]
FX = 12.0
[[analysis]]
name = "st"
kind = "static"
"""

XY = {"A": (0.0, 0.0), "B": (1.0, 0.0), "C": (1.0, 1.0), "D": (0.0, 1.0)}


def _network_by_hand():
    names = ["A", "B", "C", "D"]
    K = np.zeros((8, 8))
    for (a, b), k in [(("A", "B"), 1e4), (("B", "C"), 1e4), (("C", "D"), 1e4),
                      (("D", "A"), 1e4), (("A", "C"), 2e4)]:
        d = np.subtract(XY[b], XY[a])
        e = d / np.linalg.norm(d)
        ke = k * np.outer(e, e)
        ia, ib = 2 * names.index(a), 2 * names.index(b)
        for i, j, sign in ((ia, ia, 1), (ib, ib, 1), (ia, ib, -1), (ib, ia, -1)):
            K[i:i + 2, j:j + 2] += sign * ke
    for n in ("B", "C", "D"):
        i = 2 * names.index(n)
        K[i, i] += 500.0
        K[i + 1, i + 1] += 700.0
    F = np.zeros(8)
    F[4], F[5], F[6] = 30.0, -50.0, 12.0
    free = np.arange(2, 8)
    u = np.zeros(8)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], F[free])
    return u, K, F


def test_spring_network_against_a_hand_solved_system(tmp_path):
    u, K, F = _network_by_hand()
    with _run(NETWORK, tmp_path) as results:
        st = results.analysis("st")
        assert st.kind == "static"
        computed = [st.value(n, c) for n in "ABCD" for c in ("DX", "DY")]
        np.testing.assert_allclose(computed, u, rtol=1e-10, atol=1e-15)
        # the support's reaction: K u - F on A's rows
        reaction = (K @ u - F)[:2]
        assert st.reaction("A", "FX") == pytest.approx(reaction[0], rel=1e-10)
        assert st.reaction("A", "FY") == pytest.approx(reaction[1], rel=1e-10)
        # the diagonal's axial force: k times its elongation along A->C
        e = np.array([1.0, 1.0]) / math.sqrt(2.0)
        stretch = e @ (u[4:6] - u[0:2])
        assert st.element_force("AC", "N") == pytest.approx(2e4 * stretch, rel=1e-10)
        assert st.element_force("AC", "VY") == pytest.approx(0.0, abs=1e-9)


CHAIN = """
[mesh.nodes]
N1 = [0.0, 0.0, 0.0]
N2 = [1.0, 0.0, 0.0]
N3 = [2.0, 0.0, 0.0]
N4 = [3.0, 0.0, 0.0]
[mesh.cells]
S1 = { type = "SEG2", nodes = ["N1", "N2"] }
S2 = { type = "SEG2", nodes = ["N2", "N3"] }
S3 = { type = "SEG2", nodes = ["N3", "N4"] }
[model]
components = ["DX"]
[[discrete]]
cells = ["S1"]
stiffness = 1.0e4
[[discrete]]
cells = ["S2"]
stiffness = 2.5e4
[[discrete]]
cells = ["S3"]
stiffness = 4.0e4
[functions.ramp]
table = [[0.0, 0.0], [0.1, 1.0]]
[[constraint]]
nodes = ["N1"]
DX = 0.0
[[load]]
name = "end"
nodes = ["N4"]
FX = 80.0
function = "ramp"
"""


def test_a_chain_under_an_end_load_carries_it_in_every_element(tmp_path):
    text = CHAIN + '[[analysis]]\nname = "st"\nkind = "static"\n'
    with _run(text, tmp_path) as results:
        st = results.analysis("st")
        for cell in ("S1", "S2", "S3"):
            assert st.element_force(cell, "N") == pytest.approx(80.0, rel=1e-12)
        assert st.reaction("N1", "FX") == pytest.approx(-80.0, rel=1e-12)
        tip = 80.0 / 1e4 + 80.0 / 2.5e4 + 80.0 / 4e4
        assert st.value("N4", "DX") == pytest.approx(tip, rel=1e-12)


def test_time_takes_the_functions_at_that_instant(tmp_path):
    text = CHAIN + '[[analysis]]\nname = "st"\nkind = "static"\ntime = 0.025\n'
    with _run(text, tmp_path) as results:
        assert results.analysis("st").element_force("S2", "N") == pytest.approx(20.0,
                                                                               rel=1e-12)


def test_an_imposed_displacement_stretches_the_chain(tmp_path):
    """N1 moved by 2 mm, N4 clamped, no load: the springs in series share the motion."""
    text = CHAIN.replace('nodes = ["N1"]\nDX = 0.0', 'nodes = ["N1"]\nDX = 0.002') + \
        '[[constraint]]\nnodes = ["N4"]\nDX = 0.0\n[[analysis]]\nname = "st"\nkind = "static"\n' \
        'loads = []\n'
    k = 1.0 / (1 / 1e4 + 1 / 2.5e4 + 1 / 4e4)
    with _run(text, tmp_path) as results:
        st = results.analysis("st")
        for cell in ("S1", "S2", "S3"):
            assert st.element_force(cell, "N") == pytest.approx(-k * 0.002, rel=1e-12)
        assert st.reaction("N1", "FX") == pytest.approx(k * 0.002, rel=1e-12)
        assert st.reaction("N4", "FX") == pytest.approx(-k * 0.002, rel=1e-12)
        assert st.value("N2", "DX") == pytest.approx(0.002 - k * 0.002 / 1e4, rel=1e-12)


def test_checks_on_a_static_analysis_take_no_time(tmp_path, capsys):
    base = CHAIN + '[[analysis]]\nname = "st"\nkind = "static"\n'
    good = base + ('[[check]]\nanalysis = "st"\nquantity = "element_force"\nelement = "S3"\n'
                   'component = "N"\nreference = 80.0\n')
    path = tmp_path / "s.toml"
    path.write_text(good, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "r.h5")]) == 0
    assert "OK" in capsys.readouterr().out
    with pytest.raises(fem.StudyError, match=r"check\[1\]\.time: analysis 'st' is static"):
        _run(good.replace('reference = 80.0', 'time = 0.1\nreference = 80.0'), tmp_path)
    with pytest.raises(fem.StudyError, match=r"'velocity' needs a transient analysis"):
        _run(base + ('[[check]]\nanalysis = "st"\nquantity = "velocity"\nnode = "N2"\n'
                     'component = "DX"\nreference = 0.0\n'), tmp_path)


def test_a_mechanism_fails_naming_the_loose_dof(tmp_path, capsys):
    text = CHAIN.replace('[mesh.cells]', 'N5 = [4.0, 0.0, 0.0]\n[mesh.cells]') + \
        '[[discrete]]\nnodes = ["N5"]\nmass = 1.0\n[[analysis]]\nname = "st"\nkind = "static"\n'
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "r.h5")]) == 3
    err = capsys.readouterr().err
    assert "N5 DX has no stiffness" in err and "Traceback" not in err
