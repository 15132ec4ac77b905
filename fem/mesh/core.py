"""The Mesh data class: named nodes with coordinates, POI1/SEG2 cells, node and cell groups."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fem.errors import MeshError

#: Cell type codes stored in ``Mesh.cell_type``.
POI1 = 1
SEG2 = 2
CELL_TYPE_NAMES = {POI1: "POI1", SEG2: "SEG2"}
CELL_TYPE_CODES = {"POI1": POI1, "SEG2": SEG2}


@dataclass
class Mesh:
    """A mesh of discrete elements.

    Attributes
    ----------
    node_names : list[str], length n
    coordinates : (n, 3) float64, m
    cell_names : list[str], length c
    cell_type : (c,) int8, ``POI1`` (1) or ``SEG2`` (2)
    connectivity : (c, 2) int64, node indices; the second column is -1 for POI1 cells
    node_groups : dict name -> (k,) int64 node indices
    cell_groups : dict name -> (k,) int64 cell indices
    source : where the mesh came from (file path or "inline"), used in messages
    """

    node_names: list[str]
    coordinates: np.ndarray
    cell_names: list[str] = field(default_factory=list)
    cell_type: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    connectivity: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    node_groups: dict[str, np.ndarray] = field(default_factory=dict)
    cell_groups: dict[str, np.ndarray] = field(default_factory=dict)
    source: str = "inline"

    def __post_init__(self):
        self.coordinates = np.asarray(self.coordinates, dtype=float).reshape(-1, 3)
        self.cell_type = np.asarray(self.cell_type, dtype=np.int8).reshape(-1)
        self.connectivity = np.asarray(self.connectivity, dtype=np.int64).reshape(-1, 2)
        if len(self.node_names) != len(self.coordinates):
            raise MeshError(f"{self.source}: {len(self.node_names)} node names for "
                            f"{len(self.coordinates)} coordinate rows")
        if not (len(self.cell_names) == len(self.cell_type) == len(self.connectivity)):
            raise MeshError(f"{self.source}: cell names, types and connectivity differ in length")
        self._node_index = _unique_index(self.node_names, "node", self.source)
        self._cell_index = _unique_index(self.cell_names, "cell", self.source)
        if not np.all(np.isfinite(self.coordinates)):
            bad = int(np.where(~np.all(np.isfinite(self.coordinates), axis=1))[0][0])
            raise MeshError(f"{self.source}: node {self.node_names[bad]} has non-finite coordinates")

    @property
    def node_count(self) -> int:
        return len(self.node_names)

    @property
    def cell_count(self) -> int:
        return len(self.cell_names)

    def has_node(self, name: str) -> bool:
        return name in self._node_index

    def has_cell(self, name: str) -> bool:
        return name in self._cell_index

    def node_index(self, name: str, where: str = "") -> int:
        """Index of node ``name``; ``where`` (a study key) goes into the error message."""
        try:
            return self._node_index[name]
        except KeyError:
            raise MeshError(f"{where + ': ' if where else ''}unknown node '{name}' "
                            f"(mesh {self.source})") from None

    def cell_index(self, name: str, where: str = "") -> int:
        try:
            return self._cell_index[name]
        except KeyError:
            raise MeshError(f"{where + ': ' if where else ''}unknown cell '{name}' "
                            f"(mesh {self.source})") from None

    def node_group(self, name: str, where: str = "") -> np.ndarray:
        try:
            return self.node_groups[name]
        except KeyError:
            raise MeshError(f"{where + ': ' if where else ''}unknown node group '{name}' "
                            f"(mesh {self.source})") from None

    def cell_group(self, name: str, where: str = "") -> np.ndarray:
        try:
            return self.cell_groups[name]
        except KeyError:
            raise MeshError(f"{where + ': ' if where else ''}unknown cell group '{name}' "
                            f"(mesh {self.source})") from None

    def merged(self, other: "Mesh") -> "Mesh":
        """A new mesh with ``other``'s nodes, cells and groups added to this one's.

        Names must not clash, except groups: a group defined in both gets the union.
        """
        offset = self.node_count
        conn = other.connectivity.copy()
        conn[conn >= 0] += offset
        node_groups = dict(self.node_groups)
        for name, idx in other.node_groups.items():
            idx = idx + offset
            node_groups[name] = np.union1d(node_groups[name], idx) if name in node_groups else idx
        cell_groups = dict(self.cell_groups)
        coff = self.cell_count
        for name, idx in other.cell_groups.items():
            idx = idx + coff
            cell_groups[name] = np.union1d(cell_groups[name], idx) if name in cell_groups else idx
        return Mesh(
            node_names=list(self.node_names) + list(other.node_names),
            coordinates=np.vstack([self.coordinates, other.coordinates]),
            cell_names=list(self.cell_names) + list(other.cell_names),
            cell_type=np.concatenate([self.cell_type, other.cell_type]),
            connectivity=np.vstack([self.connectivity, conn]),
            node_groups=node_groups,
            cell_groups=cell_groups,
            source=f"{self.source} + {other.source}",
        )

    def summary(self, listed: int | None = 20) -> str:
        """What ``fem mesh`` prints: counts, then the cells by name (type and nodes) and the
        groups by name with their members; at most ``listed`` entries of each list (None:
        every one)."""
        nseg = int(np.sum(self.cell_type == SEG2))
        npoi = int(np.sum(self.cell_type == POI1))
        lines = [f"mesh {self.source}", f"  nodes: {self.node_count}",
                 f"  cells: {self.cell_count} (SEG2: {nseg}, POI1: {npoi})"]
        shown = range(self.cell_count if listed is None else min(listed, self.cell_count))
        for c in shown:
            kind = "SEG2" if self.cell_type[c] == SEG2 else "POI1"
            nodes = [self.node_names[i] for i in self.connectivity[c] if i >= 0]
            lines.append(f"    {self.cell_names[c]}: {kind} {' '.join(nodes)}")
        if len(shown) < self.cell_count:
            lines.append(f"    ... {self.cell_count - len(shown)} more (fem mesh --all)")
        for title, groups, names in (("node groups", self.node_groups, self.node_names),
                                     ("cell groups", self.cell_groups, self.cell_names)):
            lines.append(f"  {title}: {len(groups)}")
            for name, idx in sorted(groups.items()):
                members = [names[i] for i in idx[:listed]] if listed is not None else \
                    [names[i] for i in idx]
                more = f" ... {len(idx) - len(members)} more" if len(members) < len(idx) else ""
                lines.append(f"    {name} ({len(idx)}): {' '.join(members)}{more}")
        return "\n".join(lines)


def _unique_index(names, what, source):
    index = {}
    for i, name in enumerate(names):
        if name in index:
            raise MeshError(f"{source}: {what} '{name}' is defined twice")
        index[name] = i
    return index
