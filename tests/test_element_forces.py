"""Element forces and reactions archived by transient analyses, against the equilibrium of
the free body and against k du + c dv computed here in each element's frame."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fem
import postpro

# A chain along X: N1 (5 kg) moved as a sine by its constraint, springs with dampers to N2,
# N3, N4 (1, 2, 3 kg); a ramped force on N4 and a constant one on the imposed N1 (which the
# support takes)
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
cells = ["S1", "S2", "S3"]
stiffness = 2.0e4
damping = 15.0
[[discrete]]
nodes = ["N1"]
mass = 5.0
[[discrete]]
nodes = ["N2"]
mass = 1.0
[[discrete]]
nodes = ["N3"]
mass = 2.0
[[discrete]]
nodes = ["N4"]
mass = 3.0
[functions.shake]
expression = "0.002*sin(2*pi*7*t)"
[functions.ramp]
table = [[0.0, 0.0], [0.1, 1.0]]
right = "constant"
[[constraint]]
nodes = ["N1"]
DX = 1.0
function = "shake"
[[load]]
name = "pull"
nodes = ["N4"]
FX = 40.0
function = "ramp"
[[load]]
name = "onsupport"
nodes = ["N1"]
FX = 7.0
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.3
step = 1e-4
"""

MASSES = {"N1": 5.0, "N2": 1.0, "N3": 2.0, "N4": 3.0}


def _run(text, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return fem.run(path)


def test_reactions_balance_loads_and_inertia_at_every_instant(tmp_path):
    """Springs and dampers between nodes carry no net force: the support's reaction is the
    total inertia force minus every applied load, row by row."""
    with _run(CHAIN, tmp_path) as results:
        run = results.analysis("run")
        assert run.reactions == ("N1 FX",)
        t, reaction = run.reaction("N1", "FX")
        inertia = sum(m * run.series("acceleration", n, "DX")[1] for n, m in MASSES.items())
    applied = 40.0 * np.minimum(t / 0.1, 1.0) + 7.0
    expected = inertia - applied
    assert np.abs(reaction - expected).max() <= 1e-9 * np.abs(expected).max()
    assert np.abs(expected).max() > 10.0                   # the test is not about zeros


def test_chain_element_forces_are_k_du_plus_c_dv(tmp_path):
    with _run(CHAIN, tmp_path) as results:
        run = results.analysis("run")
        assert run.elements == ("S1", "S2", "S3")
        assert run.element_components == ("N", "VY", "VZ")
        for cell, (a, b) in {"S1": ("N1", "N2"), "S2": ("N2", "N3"),
                             "S3": ("N3", "N4")}.items():
            _, n = run.element_force(cell, "N")
            du = run.series("displacement", b, "DX")[1] - run.series("displacement", a, "DX")[1]
            dv = run.series("velocity", b, "DX")[1] - run.series("velocity", a, "DX")[1]
            np.testing.assert_allclose(n, 2.0e4 * du + 15.0 * dv, rtol=1e-12, atol=1e-12)
            assert np.all(run.element_force(cell, "VY")[1] == 0.0)
        assert np.abs(run.element_force("S3", "N")[1]).max() > 10.0


# one oblique SEG2 A-B in the XY plane and a POI1 cell on B: a block in the cell's local
# frame, one in global axes, and a ground spring on B; B free in DX DY DZ, A clamped
OBLIQUE = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 1.0, 0.0]
[mesh.cells]
AB = { type = "SEG2", nodes = ["A", "B"] }
PB = { type = "POI1", nodes = ["B"] }
[[discrete]]
cells = ["AB"]
frame = "local"
stiffness = [3.0e4, 1.0e3, 2.0e3]
damping = [5.0, 1.0, 2.0]
[[discrete]]
cells = ["AB"]
stiffness = [4.0e3, 5.0e3, 6.0e3]
[[discrete]]
cells = ["PB"]
stiffness = [1.0e3, 2.0e3, 3.0e3]
damping = [0.5, 0.5, 0.5]
[[discrete]]
nodes = ["B"]
mass = 2.0
[[constraint]]
nodes = ["A"]
DX = 0.0
DY = 0.0
DZ = 0.0
[[initial]]
nodes = ["B"]
velocity = { DX = 0.3, DY = -0.1, DZ = 0.2 }
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.05
step = 1e-4
"""


def test_oblique_element_forces_in_the_local_frame(tmp_path):
    with _run(OBLIQUE, tmp_path) as results:
        run = results.analysis("run")
        u = np.column_stack([run.series("displacement", "B", c)[1] for c in ("DX", "DY", "DZ")])
        v = np.column_stack([run.series("velocity", "B", c)[1] for c in ("DX", "DY", "DZ")])
        forces = {c: run.element_force("AB", c)[1] for c in ("N", "VY", "VZ")}
        ground = {c: run.element_force("PB", c)[1] for c in ("N", "VY", "VZ")}
        reactions = {c: run.reaction("A", c)[1] for c in ("FX", "FY", "FZ")}
    s = 1 / math.sqrt(2)
    R = np.array([[s, s, 0.0], [-s, s, 0.0], [0.0, 0.0, 1.0]])   # rows: local x, y, z
    local = np.diag([3.0e4, 1.0e3, 2.0e3]) @ (R @ u.T) + np.diag([5.0, 1.0, 2.0]) @ (R @ v.T)
    glob = R @ (np.diag([4.0e3, 5.0e3, 6.0e3]) @ u.T)
    expected = local + glob
    for k, c in enumerate(("N", "VY", "VZ")):
        np.testing.assert_allclose(forces[c], expected[k], rtol=1e-10,
                                   atol=1e-10 * np.abs(expected).max())
    # the ground spring in global axes, u of the ground 0
    ground_expected = np.diag([1.0e3, 2.0e3, 3.0e3]) @ u.T + 0.5 * v.T
    for k, c in enumerate(("N", "VY", "VZ")):
        np.testing.assert_allclose(ground[c], ground_expected[k], rtol=1e-10,
                                   atol=1e-10 * np.abs(ground_expected).max())
    # the support at A holds the element: its reaction is minus the element force, in
    # global axes
    in_global = R.T @ expected
    for k, c in enumerate(("FX", "FY", "FZ")):
        np.testing.assert_allclose(reactions[c], -in_global[k], rtol=1e-10,
                                   atol=1e-10 * np.abs(in_global).max())


def test_checks_on_element_forces_and_reactions(tmp_path):
    with _run(CHAIN, tmp_path) as results:
        run = results.analysis("run")
        n = float(run.element_force("S2", "N")[1][1000])
        r = float(run.reaction("N1", "FX")[1][1000])
        t = float(run.time[1000])
    text = CHAIN + f"""
[[check]]
analysis = "run"
quantity = "element_force"
element = "S2"
component = "N"
time = {t!r}
reference = {n!r}
tolerance = 1e-12
[[check]]
analysis = "run"
quantity = "reaction"
node = "N1"
component = "FX"
time = {t!r}
reference = {r!r}
tolerance = 1e-12
"""
    with _run(text, tmp_path) as results:
        table = results.checks
        assert len(table) == 2 and table["passed"].all()
        assert list(table["node"]) == ["S2", "N1"]


@pytest.mark.parametrize("check, words", [
    ('quantity = "element_force"\nelement = "S9"\ncomponent = "N"',
     ["check[1].element", "no element 'S9'", "S1, S2, S3"]),
    ('quantity = "element_force"\nelement = "S1"\ncomponent = "MT"',
     ["check[1].component", "MT is not a force component"]),
    ('quantity = "element_force"\nelement = "S1"\ncomponent = "DX"',
     ["check[1].component", "unknown component", "N, VY"]),
    ('quantity = "reaction"\nnode = "N2"\ncomponent = "FX"',
     ["check[1].node", "N2 DX is not imposed"]),
    ('quantity = "reaction"\nnode = "N1"\ncomponent = "N"',
     ["check[1].component", "FX, FY"]),
])
def test_refused_force_checks_name_the_key(tmp_path, check, words):
    text = CHAIN + f'[[check]]\nanalysis = "run"\n{check}\ntime = 0.1\nreference = 1.0\n'
    with pytest.raises(fem.StudyError) as info:
        _run(text, tmp_path).close()
    for word in words:
        assert word in str(info.value), str(info.value)


def test_fields_select_them_and_reading_what_was_not_archived_is_an_error(tmp_path):
    text = CHAIN.replace('step = 1e-4\n', 'step = 1e-4\nfields = ["displacement"]\n')
    with _run(text, tmp_path) as results:
        run = results.analysis("run")
        assert run.elements == () and run.reactions == ()
        with pytest.raises(postpro.PostproError, match="did not archive 'element_force'"):
            run.element_force("S1", "N")


def test_fem_post_series_writes_element_forces_and_reactions(tmp_path, capsys):
    from fem.cli import main

    path = tmp_path / "s.toml"
    path.write_text(CHAIN, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "r.h5"), "--quiet"]) == 0
    csv = tmp_path / "f.csv"
    assert main(["post", "series", str(tmp_path / "r.h5"), "--field", "element_force",
                 "--element", "S3", "--element", "S1", "--field", "reaction", "--digits", "17",
                 "-o", str(csv)]) == 0
    lines = csv.read_text().splitlines()
    assert lines[0] == ("time [s],S1 N element_force [N],S1 VY element_force [N],"
                        "S1 VZ element_force [N],S3 N element_force [N],"
                        "S3 VY element_force [N],S3 VZ element_force [N],"
                        "N1 FX reaction [N]")
    table = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    with postpro.open(tmp_path / "r.h5") as results:
        run = results.analysis("run")
        np.testing.assert_array_equal(table[:, 0], run.time)
        np.testing.assert_array_equal(table[:, 1], run.element_force("S1", "N")[1])
        np.testing.assert_array_equal(table[:, 4], run.element_force("S3", "N")[1])
        np.testing.assert_array_equal(table[:, 7], run.reaction("N1", "FX")[1])
    assert main(["post", "series", str(tmp_path / "r.h5"), "--element", "S1"]) == 2
    assert "give --field element_force" in capsys.readouterr().err


HARMONIC = """
[mesh.nodes]
G = [0.0, 0.0, 0.0]
A = [1.0, 0.0, 0.0]
B = [2.0, 0.0, 0.0]
[mesh.cells]
GA = { type = "SEG2", nodes = ["G", "A"] }
AB = { type = "SEG2", nodes = ["A", "B"] }
[model]
components = ["DX"]
[[discrete]]
cells = ["GA"]
stiffness = 3.0e4
damping = 20.0
[[discrete]]
cells = ["AB"]
stiffness = 1.0e4
damping = 5.0
[[discrete]]
nodes = ["A"]
mass = 2.0
[[discrete]]
nodes = ["B"]
mass = 1.0
[[constraint]]
nodes = ["G"]
DX = 0.0
[[load]]
name = "shake"
nodes = ["B"]
FX = 10.0
[[analysis]]
name = "frf"
kind = "harmonic"
frequencies = [3.0, 17.0, 40.0]
"""


def test_harmonic_element_forces_and_reactions_are_complex_amplitudes(tmp_path):
    """(K - w^2 M + i w C) U = F solved here; N = (k + i w c) du, R = -(k + i w c) u_A."""
    with _run(HARMONIC, tmp_path) as results:
        frf = results.analysis("frf")
        forces = {c: frf.element_force(c, "N")[1] for c in ("GA", "AB")}
        reaction = frf.reaction("G", "FX")[1]
    for k, f in enumerate((3.0, 17.0, 40.0)):
        w = 2 * math.pi * f
        z1, z2 = 3.0e4 + 1j * w * 20.0, 1.0e4 + 1j * w * 5.0
        Z = np.array([[z1 + z2 - w * w * 2.0, -z2], [-z2, z2 - w * w * 1.0]])
        ua, ub = np.linalg.solve(Z, [0.0, 10.0])
        assert forces["GA"][k] == pytest.approx(z1 * ua, rel=1e-10)
        assert forces["AB"][k] == pytest.approx(z2 * (ub - ua), rel=1e-10)
        assert reaction[k] == pytest.approx(-z1 * ua, rel=1e-10)
