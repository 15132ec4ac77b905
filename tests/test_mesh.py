"""Tests of the mesh readers: code_aster .mail, meshio formats, shipped meshes, Mesh helpers."""

import time
from pathlib import Path

import meshio
import numpy as np
import pytest

from fem.errors import MeshError
from fem.mesh import POI1, SEG2, Mesh, read
from fem.mesh.aster import parse
from fem.mesh.meshio_adapter import from_meshio

MESHES = Path(__file__).resolve().parent.parent / "meshes"
CHAIN_XYZ = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
# Cells of the MED chain (and of meshio-written ones): three vertices then two lines.
CHAIN_CELL_TYPES = [POI1, POI1, POI1, SEG2, SEG2]
CHAIN_CONNECTIVITY = [[0, -1], [1, -1], [2, -1], [0, 1], [1, 2]]
CHAIN_CELL_GROUPS = {"CLAMP": ["M1"], "MASSES": ["M2", "M3"], "SPRING1": ["M4"],
                     "SPRING2": ["M5"], "SPRINGS": ["M4", "M5"]}


def named(groups, names):
    """Group name -> member names, to compare groups readably."""
    return {name: [names[i] for i in idx] for name, idx in groups.items()}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def chain_meshio(**kwargs):
    """The three-node chain as a meshio mesh: vertices at the three nodes, two lines."""
    cells = [("vertex", np.array([[0], [1], [2]])), ("line", np.array([[0, 1], [1, 2]]))]
    return meshio.Mesh(np.array(CHAIN_XYZ), cells, **kwargs)


# -- shipped meshes -------------------------------------------------------------------------


def test_chain3_mail():
    mesh = read(MESHES / "chain3.mail")
    assert mesh.node_names == ["N1", "N2", "N3"]
    np.testing.assert_array_equal(mesh.coordinates, CHAIN_XYZ)
    assert mesh.cell_names == ["AC", "CB"]
    assert mesh.cell_type.tolist() == [SEG2, SEG2]
    assert mesh.connectivity.tolist() == [[0, 1], [1, 2]]
    assert named(mesh.node_groups, mesh.node_names) == {"MASSES": ["N2", "N3"], "CLAMP": ["N1"]}
    assert named(mesh.cell_groups, mesh.cell_names) == {"SPRINGS": ["AC", "CB"]}
    assert mesh.source == str(MESHES / "chain3.mail")


def test_chain3_msh():
    mesh = read(MESHES / "chain3.msh")
    assert mesh.node_names == ["N1", "N2", "N3"]
    np.testing.assert_array_equal(mesh.coordinates, CHAIN_XYZ)
    # The file lists the line elements first: M1 and M2 are the springs.
    assert mesh.cell_names == ["M1", "M2", "M3", "M4", "M5"]
    assert mesh.cell_type.tolist() == [SEG2, SEG2, POI1, POI1, POI1]
    assert mesh.connectivity.tolist() == [[0, 1], [1, 2], [0, -1], [1, -1], [2, -1]]
    assert named(mesh.cell_groups, mesh.cell_names) == {
        "SPRING1": ["M1"], "SPRING2": ["M2"], "SPRINGS": ["M1", "M2"], "CLAMP": ["M3"],
        "MASSES": ["M4", "M5"]}
    # Each physical group also gives the node group of its cells' nodes.
    assert named(mesh.node_groups, mesh.node_names) == {
        "CLAMP": ["N1"], "MASSES": ["N2", "N3"], "SPRING1": ["N1", "N2"],
        "SPRING2": ["N2", "N3"], "SPRINGS": ["N1", "N2", "N3"]}


def test_chain3_med():
    mesh = read(MESHES / "chain3.med")
    assert mesh.node_names == ["N1", "N2", "N3"]
    np.testing.assert_array_equal(mesh.coordinates, CHAIN_XYZ)
    assert mesh.cell_type.tolist() == CHAIN_CELL_TYPES
    assert mesh.connectivity.tolist() == CHAIN_CONNECTIVITY
    assert named(mesh.cell_groups, mesh.cell_names) == CHAIN_CELL_GROUPS
    # MED keeps node and cell groups apart, as code_aster does.
    assert named(mesh.node_groups, mesh.node_names) == {"CLAMP": ["N1"], "MASSES": ["N2", "N3"]}


@pytest.mark.parametrize("name", ["chain3.mail", "chain3.msh", "chain3.med"])
def test_shipped_chains_agree(name):
    mesh = read(MESHES / name)
    springs = mesh.connectivity[mesh.cell_group("SPRINGS")]
    assert sorted(map(tuple, springs.tolist())) == [(0, 1), (1, 2)]
    assert mesh.node_group("CLAMP").tolist() == [0]
    assert mesh.node_group("MASSES").tolist() == [1, 2]


# -- code_aster .mail ------------------------------------------------------------------------

FEATURES = """\
% a comment before the title, even naming FINSF or SEG2
titre
  A TITLE LINE WITH COOR_3D AND FIN IN IT
finsf
COOR_2D NOM=INDEFINI
        NBOBJ=4
  A  0.0  0.0   B 1.5D+00 2.0   % two nodes on one line
\tC  -1e-3\t4
  D  3 4
FINSF
coor_1d
  E 7.25
FinSf
SEG2
  S1 A B  S2 B C
  S3 C
     D
FINSF
POI1 NOM=INDEFINI
  P1 E
FINSF
SEG2
  S4 D E
FINSF
GROUP_NO NOM = ENDS NBOBJ=3
  A
  E
  A   % repeated: kept once
FINSF
GROUP_NO
  ALL  A B C
       D E
FINSF
group_ma
  CHAIN
  S1 S2 S3
  S4
FINSF
GROUP_MA NOM=POINTS P1 FINSF
GROUP_NO
  EMPTY
FINSF
FIN
anything after FIN is ignored
"""


def test_mail_features(tmp_path):
    path = write(tmp_path, "features.mail", FEATURES.replace("\n", "\r\n"))
    mesh = read(path)
    assert mesh.node_names == ["A", "B", "C", "D", "E"]
    np.testing.assert_allclose(mesh.coordinates, [[0, 0, 0], [1.5, 2, 0], [-1e-3, 4, 0],
                                                  [3, 4, 0], [7.25, 0, 0]])
    # Cells keep the file order across sections.
    assert mesh.cell_names == ["S1", "S2", "S3", "P1", "S4"]
    assert mesh.cell_type.tolist() == [SEG2, SEG2, SEG2, POI1, SEG2]
    assert mesh.connectivity.tolist() == [[0, 1], [1, 2], [2, 3], [4, -1], [3, 4]]
    assert named(mesh.node_groups, mesh.node_names) == {
        "ENDS": ["A", "E"], "ALL": ["A", "B", "C", "D", "E"], "EMPTY": []}
    assert named(mesh.cell_groups, mesh.cell_names) == {
        "CHAIN": ["S1", "S2", "S3", "S4"], "POINTS": ["P1"]}
    assert all(g.dtype == np.int64 for g in [*mesh.node_groups.values(),
                                             *mesh.cell_groups.values()])


def test_mail_parse_inline():
    mesh = parse("COOR_3D\nN1 1 2 3\nFINSF\nPOI1\nP N1\nFINSF\nFIN\n")
    assert mesh.source == "inline"
    np.testing.assert_array_equal(mesh.coordinates, [[1, 2, 3]])
    assert mesh.connectivity.tolist() == [[0, -1]]


def test_mail_non_ascii_title(tmp_path):
    # Upper-casing "ß" changes the text length: the section search must not rely on it.
    path = tmp_path / "accents.mail"
    path.write_bytes("TITRE\n Étude ß du ressort\nfinsf\nCOOR_1D\n N1 1\nFINSF\n"
                     "GROUP_NO\n G N2\nFINSF\nFIN\n".encode())
    with pytest.raises(MeshError, match="line 8: unknown node 'N2' in GROUP_NO G"):
        read(path)
    path.write_bytes("TITRE\n Étude ß\nfinsf\nCOOR_1D\n N1 1\nFINSF\nFIN\n".encode("latin-1"))
    assert read(path).node_names == ["N1"]


def test_mail_large_file_is_fast(tmp_path):
    n = 100_000
    x = np.arange(n) * 1e-3
    nodes = "\n".join(f" N{i + 1} {v:.6e} 0.0 0.0" for i, v in enumerate(x))
    cells = "\n".join(f" M{i + 1} N{i + 1} N{i + 2}" for i in range(n - 1))
    members = "\n".join(" ".join(f"N{j + 1}" for j in range(i, i + 10)) for i in range(0, n, 10))
    path = write(tmp_path, "big.mail", f"COOR_3D NOM=INDEFINI\n{nodes}\nFINSF\nSEG2\n{cells}\n"
                                       f"FINSF\nGROUP_NO NOM=ALL\n{members}\nFINSF\nFIN\n")
    start = time.perf_counter()
    mesh = read(path)
    elapsed = time.perf_counter() - start
    assert mesh.node_count == n and mesh.cell_count == n - 1
    np.testing.assert_allclose(mesh.coordinates[:, 0], x)
    assert mesh.connectivity[-1].tolist() == [n - 2, n - 1]
    assert mesh.node_group("ALL").tolist() == list(range(n))
    assert elapsed < 2.0  # about 0.3 s on a laptop; the bound leaves room for slow machines


GOOD_NODES = "COOR_3D\n N1 0 0 0\n N2 1 0 0\nFINSF\n"
MAIL_ERRORS = [
    # (file text, fragments the message must hold besides the file name)
    (GOOD_NODES + "TRIA3\n T1 N1 N2 N1\nFINSF\nFIN\n",
     ["line 5", "cell type TRIA3 is not supported", "fem handles POI1 and SEG2 cells"]),
    (GOOD_NODES + "HEXA8 NOM=INDEFINI\nFINSF\n", ["line 5", "HEXA8", "not supported"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\n M2 N2 N9\nFINSF\n",
     ["line 7", "unknown node 'N9' in SEG2 cell 'M2'"]),
    (GOOD_NODES + "POI1\n P1 N3\nFINSF\n", ["line 6", "unknown node 'N3' in POI1 cell 'P1'"]),
    (GOOD_NODES + "GROUP_NO\n G\n N1\n N7\nFINSF\n", ["line 8", "unknown node 'N7' in GROUP_NO G"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\nFINSF\nGROUP_MA NOM=G\n M1 M5\nFINSF\n",
     ["line 9", "unknown cell 'M5' in GROUP_MA G"]),
    (GOOD_NODES + "COOR_2D\n N3 0 1\n N1 5 5\nFINSF\n", ["line 7", "node 'N1' is defined twice"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\nFINSF\nPOI1\n M1 N1\nFINSF\n",
     ["line 9", "cell 'M1' is defined twice"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\n M2 N2\nFINSF\n",
     ["line 7", "SEG2 cell 'M2' has 1 node(s), expected 2"]),
    (GOOD_NODES + "POI1\n P1 N1 N2\nFINSF\n",
     ["line 6", "POI1 cell 'P1' has 2 node(s), expected 1"]),
    ("COOR_3D\n N1 0 0 0\n N2 1 x 0\nFINSF\n",
     ["line 3", "coordinate 'x' of node 'N2' is not a number"]),
    ("COOR_3D\n N1 0 0 0\n N2 1 0\nFINSF\n",
     ["line 3", "node 'N2' has 2 coordinate(s), expected 3"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\nFIN\n", ["line 5", "section SEG2 is not closed by FINSF"]),
    (GOOD_NODES + "SEG2\n M1 N1 N2\nGROUP_MA\n G\n M1\nFINSF\nFIN\n",
     ["line 5", "section SEG2 is not closed by FINSF before 'GROUP_MA' at line 7"]),
    (GOOD_NODES + "NOEUDS\n N3\nFINSF\n", ["line 5", "unknown section keyword 'NOEUDS'"]),
    (GOOD_NODES + "GROUP_NO\n G N1\nFINSF\nGROUP_NO NOM=G\n N2\nFINSF\n",
     ["line 8", "node group 'G' is defined twice (first at line 5)"]),
    (GOOD_NODES + "GROUP_NO\nFINSF\n", ["line 5", "GROUP_NO section without a group name"]),
    ("TITRE\n nothing\nFINSF\nFIN\n", ["no COOR_1D, COOR_2D or COOR_3D section"]),
]


@pytest.mark.parametrize("text,fragments", MAIL_ERRORS)
def test_mail_errors(tmp_path, text, fragments):
    path = write(tmp_path, "bad.mail", text)
    with pytest.raises(MeshError) as error:
        read(path)
    message = str(error.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    assert "\n" not in message


# -- dispatch and meshio errors ---------------------------------------------------------------


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.mail"
    with pytest.raises(MeshError, match="mesh file not found: .*nowhere.mail"):
        read(path)


def test_suffix_is_case_insensitive(tmp_path):
    path = write(tmp_path, "CHAIN.MAIL", (MESHES / "chain3.mail").read_text())
    assert read(path).cell_names == ["AC", "CB"]


@pytest.mark.parametrize("name,content,fragment", [
    ("garbage.msh", "not a gmsh file\n", "gmsh"),
    ("garbage.med", "not an HDF5 file\n", "file signature not found"),
    ("mesh.xyz", "1 2 3\n", "Could not deduce file format"),
])
def test_meshio_failure_is_one_line(tmp_path, capsys, name, content, fragment):
    path = write(tmp_path, name, content)
    with pytest.raises(MeshError) as error:
        read(path)
    message = str(error.value)
    assert message.startswith(f"cannot read mesh file {path}: ")
    assert fragment in message
    assert "\n" not in message and "Traceback" not in message
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # meshio's own printing is swallowed


def test_meshio_unsupported_cell_type(tmp_path):
    path = tmp_path / "tri.vtu"
    meshio.write(path, meshio.Mesh(np.array(CHAIN_XYZ) + [[0, 0, 0], [0, 0, 0], [0, 1, 0]],
                                   [("triangle", np.array([[0, 1, 2]]))]))
    with pytest.raises(MeshError, match="cell type 'triangle' is not supported") as error:
        read(path)
    assert str(path) in str(error.value)
    assert "POI1 and SEG2" in str(error.value)


# -- meshio round trips -------------------------------------------------------------------------


def test_gmsh22_round_trip(tmp_path):
    path = tmp_path / "chain.msh"
    mesh = chain_meshio(
        cell_data={"gmsh:physical": [np.array([1, 2, 2]), np.array([7, 8])],
                   "gmsh:geometrical": [np.array([1, 2, 3]), np.array([1, 2])]},
        field_data={"CLAMP": np.array([1, 0]), "MASSES": np.array([2, 0]),
                    "SPRING1": np.array([7, 1])})
    meshio.write(path, mesh, file_format="gmsh22", binary=False)
    got = read(path)
    assert got.node_names == ["N1", "N2", "N3"]
    assert got.cell_type.tolist() == CHAIN_CELL_TYPES
    assert got.connectivity.tolist() == CHAIN_CONNECTIVITY
    # Physical group 8 has no name: it is called GM8, as code_aster does.
    assert named(got.cell_groups, got.cell_names) == {
        "CLAMP": ["M1"], "MASSES": ["M2", "M3"], "SPRING1": ["M4"], "GM8": ["M5"]}
    assert named(got.node_groups, got.node_names) == {
        "CLAMP": ["N1"], "MASSES": ["N2", "N3"], "SPRING1": ["N1", "N2"], "GM8": ["N2", "N3"]}


GMSH22_TWO_GROUPS = """\
$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
3
1 10 "SPRINGS"
1 11 "SPRING1"
1 12 "SPRING2"
$EndPhysicalNames
$Nodes
3
1 0 0 0
2 1 0 0
3 2 0 0
$EndNodes
$Elements
5
1 1 2 11 1 1 2
2 1 2 10 1 1 2
3 1 2 12 2 2 3
4 1 2 10 2 2 3
5 15 2 0 3 3
$EndElements
"""


def test_gmsh22_copies_of_an_element_are_merged(tmp_path):
    # MSH 2 writes an element once per physical group: the copies are one cell, named by
    # the tag of its first copy.
    got = read(write(tmp_path, "two_groups.msh", GMSH22_TWO_GROUPS))
    assert got.cell_names == ["M1", "M3", "M5"]
    assert got.connectivity.tolist() == [[0, 1], [1, 2], [2, -1]]
    # The vertex has physical tag 0 (no physical group): it belongs to no group.
    assert named(got.cell_groups, got.cell_names) == {
        "SPRINGS": ["M1", "M3"], "SPRING1": ["M1"], "SPRING2": ["M3"]}


def test_med_round_trip_in_2d(tmp_path):
    path = tmp_path / "plane.med"
    points = np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 1.0], [3.0, 1.5]])
    mesh = meshio.Mesh(points, [("line", np.array([[0, 1], [1, 2], [2, 3]]))],
                       point_data={"point_tags": np.array([1, 0, 0, 2])},
                       cell_data={"cell_tags": [np.array([-1, -2, -1])]})
    mesh.point_tags = {1: ["FIXED", "ENDS"], 2: ["ENDS"]}
    mesh.cell_tags = {-1: ["OUTER"], -2: ["INNER", "ALL_LINKS"]}
    meshio.write(path, mesh)
    got = read(path)
    np.testing.assert_array_equal(got.coordinates[:, :2], points)
    np.testing.assert_array_equal(got.coordinates[:, 2], 0.0)
    assert got.connectivity.tolist() == [[0, 1], [1, 2], [2, 3]]
    assert named(got.node_groups, got.node_names) == {"FIXED": ["N1"], "ENDS": ["N1", "N4"]}
    assert named(got.cell_groups, got.cell_names) == {
        "OUTER": ["M1", "M3"], "INNER": ["M2"], "ALL_LINKS": ["M2"]}


def test_abaqus_round_trip_with_sets(tmp_path):
    path = tmp_path / "chain.inp"
    mesh = meshio.Mesh(np.array(CHAIN_XYZ), [("line", np.array([[0, 1], [1, 2]]))],
                       point_sets={"MASSES": np.array([1, 2]), "FIRST": np.array([2])},
                       cell_sets={"SPRINGS": [np.array([0, 1])], "FIRST": [np.array([0])]})
    meshio.write(path, mesh)
    got = read(path)
    np.testing.assert_array_equal(got.coordinates, CHAIN_XYZ)
    assert got.connectivity.tolist() == [[0, 1], [1, 2]]
    assert named(got.cell_groups, got.cell_names) == {"SPRINGS": ["M1", "M2"], "FIRST": ["M1"]}
    # An element set gives a node group of its nodes, unless a node set has that name.
    assert named(got.node_groups, got.node_names) == {
        "MASSES": ["N2", "N3"], "FIRST": ["N3"], "SPRINGS": ["N1", "N2", "N3"]}


def test_vtu_round_trip(tmp_path):
    path = tmp_path / "chain.vtu"
    meshio.write(path, chain_meshio())
    got = read(path)
    assert got.node_names == ["N1", "N2", "N3"]
    np.testing.assert_array_equal(got.coordinates, CHAIN_XYZ)
    assert got.cell_names == ["M1", "M2", "M3", "M4", "M5"]
    assert got.cell_type.tolist() == CHAIN_CELL_TYPES
    assert got.connectivity.tolist() == CHAIN_CONNECTIVITY
    assert got.node_groups == {} and got.cell_groups == {}


def test_from_meshio_sets():
    mesh = chain_meshio(point_sets={"TIP": np.array([2]), "NONE": np.array([], int)},
                        cell_sets={"TIP": [np.array([2]), np.array([1])],
                                   "LINKS": [np.array([], int), np.array([0, 1])]})
    got = from_meshio(mesh, "sets")
    assert named(got.cell_groups, got.cell_names) == {"TIP": ["M3", "M5"], "LINKS": ["M4", "M5"]}
    # TIP keeps its point set; the empty NONE is left out.
    assert named(got.node_groups, got.node_names) == {"TIP": ["N3"], "LINKS": ["N1", "N2", "N3"]}


def test_from_meshio_bad_cell_set():
    mesh = chain_meshio(cell_sets={"ODD": [np.array([0])]})
    with pytest.raises(MeshError, match="sets: cannot interpret cell set 'ODD'"):
        from_meshio(mesh, "sets")
    mesh = chain_meshio(cell_sets={"FAR": [np.array([5]), np.array([], int)]})
    with pytest.raises(MeshError, match="sets: cell set 'FAR' refers to a missing cell"):
        from_meshio(mesh, "sets")


# -- Mesh helpers ------------------------------------------------------------------------------


def test_merged():
    first = read(MESHES / "chain3.mail")
    second = parse("COOR_1D\n B1 5\n B2 6\nFINSF\nPOI1\n P B2\nFINSF\nSEG2\n L B1 B2\nFINSF\n"
                   "GROUP_NO\n MASSES B2\nFINSF\nGROUP_MA\n SPRINGS L\nFINSF\nFIN\n", "second")
    merged = first.merged(second)
    assert merged.node_names == ["N1", "N2", "N3", "B1", "B2"]
    np.testing.assert_array_equal(merged.coordinates[3:], [[5, 0, 0], [6, 0, 0]])
    assert merged.cell_names == ["AC", "CB", "P", "L"]
    assert merged.cell_type.tolist() == [SEG2, SEG2, POI1, SEG2]
    assert merged.connectivity.tolist() == [[0, 1], [1, 2], [4, -1], [3, 4]]
    assert named(merged.node_groups, merged.node_names) == {
        "MASSES": ["N2", "N3", "B2"], "CLAMP": ["N1"]}
    assert named(merged.cell_groups, merged.cell_names) == {"SPRINGS": ["AC", "CB", "L"]}
    assert merged.source == f"{first.source} + second"
    with pytest.raises(MeshError, match="node 'N1' is defined twice"):
        first.merged(first)


def test_summary():
    text = read(MESHES / "chain3.med").summary()
    lines = text.splitlines()
    assert lines[0] == f"mesh {MESHES / 'chain3.med'}"
    assert "  nodes: 3" in lines
    assert "  cells: 5 (SEG2: 2, POI1: 3)" in lines
    assert lines[3:8] == ["    M1: POI1 N1", "    M2: POI1 N2", "    M3: POI1 N3",
                          "    M4: SEG2 N1 N2", "    M5: SEG2 N2 N3"]
    assert lines[8:11] == ["  node groups: 2", "    CLAMP (1): N1", "    MASSES (2): N2 N3"]
    assert lines[11] == "  cell groups: 5" and "    SPRINGS (2): M4 M5" in lines[12:]
    short = read(MESHES / "chain3.med").summary(listed=2).splitlines()
    assert short[3:6] == ["    M1: POI1 N1", "    M2: POI1 N2", "    ... 3 more (fem mesh --all)"]
    assert "    SPRINGS (2): M4 M5" in short and "    MASSES (2): N2 N3" in short


def test_mesh_lookups_name_the_mesh():
    mesh = read(MESHES / "chain3.mail")
    assert mesh.node_index("N3") == 2 and mesh.cell_index("CB") == 1
    with pytest.raises(MeshError, match=r"k: unknown node group 'NOPE' \(mesh .*chain3.mail\)"):
        mesh.node_group("NOPE", where="k")
    assert isinstance(mesh, Mesh)
