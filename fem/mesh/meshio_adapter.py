"""Reader of every format meshio reads (gmsh, MED, Abaqus, VTK/VTU, XDMF...), as a `Mesh`.

Names follow code_aster's convention for unnamed entities: nodes ``N1..Nn`` by
point index, cells ``M1..Mc`` in the order meshio gives them (by cell type, then file
order). The nodes and elements of an ASCII gmsh file (MSH 2.2 or 4.1) are named by their
tags instead, ``N<tag>`` and ``M<tag>``, so that sparse or shuffled tags keep the names the
user sees in gmsh (as code_aster names the entities of a gmsh mesh). meshio ``vertex`` cells
become POI1, ``line`` cells SEG2; any other cell type is refused.

Groups are taken from whatever the format stores:

* gmsh physical groups (``gmsh:physical`` cell data named by ``field_data``,
  and meshio's ``cell_sets`` for MSH 4.1 entities in several physical groups):
  each gives a cell group and a node group of the same name holding its
  cells' nodes, as code_aster does for gmsh meshes. An unnamed physical group
  number ``k`` is called ``GMk``.
* MED families (``point_tags``/``cell_tags`` data with meshio's family tables):
  node groups from node families, cell groups from cell families.
* meshio ``point_sets`` (node groups) and ``cell_sets`` (cell groups, whose
  cells' nodes also give a node group of that name unless one exists).

Groups that end up empty are left out.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from fem.errors import MeshError
from fem.mesh.core import POI1, SEG2, Mesh

#: meshio cell type -> (fem cell type code, topological dimension used by gmsh tags).
_KEPT_TYPES = {"vertex": (POI1, 0), "line": (SEG2, 1)}


def read(path) -> Mesh:
    """Read a mesh file with meshio.

    Parameters
    ----------
    path : str or Path
        Any file meshio reads; the format follows the suffix.

    Returns
    -------
    Mesh
        ``source`` is the file path.

    Raises
    ------
    MeshError
        When meshio fails (its message, on one line) or the file holds cells
        other than vertices and lines.
    """
    import meshio  # imported on first use: it is slow to import and .mail files do not need it

    path = Path(path)
    # meshio prints each failed format's error and calls sys.exit when all fail: capture it.
    chatter = io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            mesh = meshio.read(path)
    except (Exception, SystemExit) as exc:
        said = "" if isinstance(exc, SystemExit) else str(exc)
        said = said or chatter.getvalue() or type(exc).__name__
        message = " ".join(said.replace("Error:", " ").split())
        raise MeshError(f"cannot read mesh file {path}: {message}") from None
    names = cells = None
    if path.suffix.lower() == ".msh":
        tags = gmsh_node_tags(path)
        if tags is not None and len(tags) == len(mesh.points):
            names = [f"N{t}" for t in tags]
            cells = _gmsh_cell_names(path, mesh, tags)
    return from_meshio(mesh, str(path), node_names=names, cell_names=cells)


def _gmsh_section(path, section: str, parse):
    """``parse(version, lines)`` on the lines that follow ``section`` (e.g. "$Nodes") of an
    ASCII gmsh file; None for a binary file, a file without that section, or lines ``parse``
    cannot read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = iter(f)
            version = None
            for line in lines:
                word = line.strip()
                if word == "$MeshFormat":
                    head = next(lines).split()
                    if len(head) < 2 or head[1] != "0":
                        return None                  # binary
                    version = head[0]
                elif word == section:
                    return None if version is None else parse(version, lines)
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return None


def gmsh_node_tags(path) -> list[int] | None:
    """The node tags of an ASCII gmsh file (MSH 2.2 or 4.1) in file order (the order of
    meshio's points); None for a binary file or another version."""
    return _gmsh_section(path, "$Nodes", _node_tags)


def _node_tags(version: str, lines):
    if version.startswith("2"):
        count = int(next(lines).split()[0])
        return [int(next(lines).split()[0]) for _ in range(count)]
    if version.startswith("4"):
        blocks = int(next(lines).split()[0])
        tags: list[int] = []
        for _ in range(blocks):
            count = int(next(lines).split()[3])
            block = [int(next(lines).split()[0]) for _ in range(count)]
            for _ in range(count):
                next(lines)
            tags += block
        return tags
    return None


#: gmsh element types kept: 1 the 2-node line, 15 the point; the meshio cell type of each
_GMSH_TYPES = {1: "line", 15: "vertex"}


def gmsh_element_tags(path) -> list[tuple[int, str, tuple[int, ...]]] | None:
    """(element tag, meshio cell type, node tags) of the points and 2-node lines of an ASCII
    gmsh file (MSH 2.2 or 4.1), in file order; None for a binary file or another version."""
    return _gmsh_section(path, "$Elements", _element_tags)


def _element_tags(version: str, lines):
    out = []
    if version.startswith("2"):
        for _ in range(int(next(lines).split()[0])):
            v = [int(x) for x in next(lines).split()]
            kind = _GMSH_TYPES.get(v[1])
            if kind:
                out.append((v[0], kind, tuple(v[3 + v[2]:])))
        return out
    if version.startswith("4"):
        for _ in range(int(next(lines).split()[0])):
            head = next(lines).split()
            kind = _GMSH_TYPES.get(int(head[2]))
            for _ in range(int(head[3])):
                v = [int(x) for x in next(lines).split()]
                if kind:
                    out.append((v[0], kind, tuple(v[1:])))
        return out
    return None


def _gmsh_cell_names(path, mesh, node_tags) -> list[str] | None:
    """``M<element tag>`` for each meshio cell (block order), matched on cell type and node
    tags (copies of one element match in file order); None when they do not all match."""
    elements = gmsh_element_tags(path)
    if elements is None:
        return None
    queues: dict = {}
    for tag, kind, nodes in elements:
        queues.setdefault((kind, nodes), []).append(tag)
    for queue in queues.values():
        queue.reverse()
    names = []
    try:
        for block in mesh.cells:
            for row in np.asarray(block.data).reshape(len(block.data), -1):
                queue = queues.get((block.type, tuple(node_tags[i] for i in row)))
                if not queue:
                    return None
                names.append(f"M{queue.pop()}")
    except IndexError:
        return None
    return names


def from_meshio(mesh, source: str = "inline", node_names=None, cell_names=None) -> Mesh:
    """Convert a ``meshio.Mesh`` into a `Mesh`.

    Parameters
    ----------
    mesh : meshio.Mesh
        Points (n, d) with d <= 3, in m; cell blocks of type ``vertex`` or ``line``.
    source : str
        File name used in the mesh and in error messages.
    node_names : list of str, optional
        Names of the points (default ``N1..Nn``).
    cell_names : list of str, optional
        Names of the cells in block order, before copies of one element are merged
        (default ``M1..Mc`` after merging).

    Returns
    -------
    Mesh
    """
    points = np.asarray(mesh.points, dtype=float)
    if points.ndim != 2 or points.shape[1] > 3:
        raise MeshError(f"{source}: points of shape {points.shape}, expected (n, 1..3)")
    n = len(points)
    coordinates = np.zeros((n, 3))
    coordinates[:, :points.shape[1]] = points

    blocks = list(mesh.cells)
    cell_type, connectivity, dims = _cells(blocks, n, source)
    starts = np.concatenate([[0], np.cumsum([len(b.data) for b in blocks])]).astype(np.int64)

    cell_members: dict[str, list] = {}
    node_members: dict[str, list] = {}
    with_nodes: set[str] = set()  # cell groups that also give a node group

    keep, new_index = _gmsh_duplicates(mesh, blocks, cell_type, connectivity)
    _gmsh_physical(mesh, blocks, dims, cell_members, with_nodes)
    _cell_sets(mesh, blocks, starts, source, cell_members, with_nodes)
    _point_sets(mesh, n, source, node_members)
    _med_families(mesh, blocks, n, source, cell_members, node_members)

    cell_type, connectivity = cell_type[keep], connectivity[keep]
    cell_groups = {}
    for name, parts in cell_members.items():
        idx = np.unique(new_index[np.concatenate(parts)])
        if idx.size:
            cell_groups[name] = idx
    node_groups = {}
    for name, parts in node_members.items():
        idx = np.unique(np.concatenate(parts))
        if idx.size:
            node_groups[name] = idx
    for name in sorted(with_nodes):
        if name in node_members or name not in cell_groups:
            continue
        nodes = connectivity[cell_groups[name]].ravel()
        node_groups[name] = np.unique(nodes[nodes >= 0])

    names = node_names if node_names is not None else [f"N{i + 1}" for i in range(n)]
    cells = None
    if cell_names is not None and len(cell_names) == len(new_index):
        cells = [cell_names[i] for i in keep]
        if len(set(cells)) != len(cells):
            cells = None
    if cells is None:
        cells = [f"M{i + 1}" for i in range(len(cell_type))]
    return Mesh(node_names=names, coordinates=coordinates, cell_names=cells,
                cell_type=cell_type, connectivity=connectivity,
                node_groups=node_groups, cell_groups=cell_groups, source=source)


def _cells(blocks, n: int, source: str):
    """Type codes (c,), connectivity (c, 2) and gmsh dimension (c,) of all cell blocks."""
    types, conns, dims = [], [], []
    for block in blocks:
        if block.type not in _KEPT_TYPES:
            raise MeshError(f"{source}: cell type '{block.type}' is not supported (fem handles "
                            f"POI1 and SEG2 cells: meshio's 'vertex' and 'line')")
        code, dim = _KEPT_TYPES[block.type]
        data = np.asarray(block.data, dtype=np.int64).reshape(len(block.data), -1)
        conn = np.full((len(data), 2), -1, dtype=np.int64)
        conn[:, :data.shape[1]] = data
        types.append(np.full(len(data), code, dtype=np.int8))
        conns.append(conn)
        dims.append(np.full(len(data), dim, dtype=np.int64))
    if not blocks:
        return np.zeros(0, np.int8), np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    connectivity = np.vstack(conns)
    used = connectivity[connectivity >= 0]
    if used.size and used.max() >= n:
        raise MeshError(f"{source}: a cell refers to point {int(used.max()) + 1}, "
                        f"the file has {n} points")
    return np.concatenate(types), connectivity, np.concatenate(dims)


def _flat(data, blocks) -> np.ndarray | None:
    """Per-block cell data concatenated to (c,), or None when it does not match the blocks."""
    if data is None or len(data) != len(blocks):
        return None
    parts = [np.asarray(d).reshape(-1) for d in data]
    if any(len(p) != len(b.data) for p, b in zip(parts, blocks)):
        return None
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _gmsh_duplicates(mesh, blocks, cell_type, connectivity):
    """Cells to keep and old -> new cell index, merging gmsh 2 copies of one element.

    MSH 2 files store an element once per physical group it belongs to: copies
    share type, nodes and elementary entity and only differ by physical tag.
    """
    count = len(cell_type)
    identity = np.arange(count)
    geometrical = _flat(mesh.cell_data.get("gmsh:geometrical"), blocks)
    if geometrical is None or "gmsh:physical" not in mesh.cell_data or count == 0:
        return identity, identity
    key = np.column_stack([cell_type.astype(np.int64), connectivity,
                           geometrical.astype(np.int64)])
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    if len(first) == count:
        return identity, identity
    order = np.argsort(first)  # merged cells keep the place of their first copy
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def _gmsh_physical(mesh, blocks, dims, cell_members, with_nodes):
    tags = _flat(mesh.cell_data.get("gmsh:physical"), blocks)
    if tags is None or tags.size == 0:
        return
    tags = tags.astype(np.int64)
    # gmsh numbers physical groups per dimension, so a name is keyed by (tag, dimension).
    names = {}
    for name, value in mesh.field_data.items():
        value = np.asarray(value).reshape(-1)
        if value.size == 2:
            names[(int(value[0]), int(value[1]))] = name
    for tag, dim in np.unique(np.column_stack([tags, dims]), axis=0):
        if tag <= 0:
            continue  # MSH 2 marks elements outside any physical group with 0
        name = names.get((int(tag), int(dim)), f"GM{int(tag)}")
        cell_members.setdefault(name, []).append(np.flatnonzero((tags == tag) & (dims == dim)))
        with_nodes.add(name)


def _cell_sets(mesh, blocks, starts, source, cell_members, with_nodes):
    for name, per_block in (getattr(mesh, "cell_sets", None) or {}).items():
        if name.startswith("gmsh:"):
            continue  # meshio bookkeeping (bounding entities), not a set of cells
        if len(per_block) != len(blocks):
            raise MeshError(f"{source}: cannot interpret cell set '{name}' "
                            f"({len(per_block)} parts for {len(blocks)} cell blocks)")
        for b, (block, part) in enumerate(zip(blocks, per_block)):
            try:
                idx = np.asarray(part if part is not None else [], dtype=np.int64).reshape(-1)
            except (TypeError, ValueError):
                raise MeshError(f"{source}: cannot interpret cell set '{name}'") from None
            if idx.size and (idx.min() < 0 or idx.max() >= len(block.data)):
                raise MeshError(f"{source}: cell set '{name}' refers to a missing cell")
            cell_members.setdefault(name, []).append(starts[b] + idx)
        with_nodes.add(name)


def _point_sets(mesh, n, source, node_members):
    for name, part in (getattr(mesh, "point_sets", None) or {}).items():
        try:
            idx = np.asarray(part, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            raise MeshError(f"{source}: cannot interpret point set '{name}'") from None
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise MeshError(f"{source}: point set '{name}' refers to a missing point")
        node_members.setdefault(name, []).append(idx)


def _med_families(mesh, blocks, n, source, cell_members, node_members):
    """Groups of MED families: each family number lists the groups its entities belong to."""
    point_families = getattr(mesh, "point_tags", None) or {}
    numbers = mesh.point_data.get("point_tags")
    if point_families and numbers is not None:
        numbers = np.asarray(numbers).reshape(-1)
        if len(numbers) != n:
            raise MeshError(f"{source}: MED node families do not match the {n} points")
        _add_families(point_families, numbers, node_members)
    cell_families = getattr(mesh, "cell_tags", None) or {}
    numbers = _flat(mesh.cell_data.get("cell_tags"), blocks)
    if cell_families and numbers is not None:
        _add_families(cell_families, numbers, cell_members)


def _add_families(families: dict, numbers: np.ndarray, members: dict):
    for number, names in families.items():
        idx = np.flatnonzero(numbers == number)
        for name in names:
            members.setdefault(str(name), []).append(idx)
