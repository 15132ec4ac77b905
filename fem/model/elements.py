"""Discrete element library: mass, stiffness and damping as COO triplets, fully vectorized.

A ``[[discrete]]`` block acts
- on SEG2 cells: stiffness and damping between the two nodes; a mass is split equally
  between them;
- on POI1 cells and on nodes: stiffness and damping from the node to the ground; mass at the node.

Values are per direction (DX DY DZ [DRX DRY DRZ]) in the global frame, or in the local frame
of a SEG2 (x along the cell). Terms on components the model does not have are dropped: those
components are held at zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fem.errors import StudyError
from fem.model.dofs import DofMap
from fem.study.specs import ROTATIONS, TRANSLATIONS


@dataclass
class Triplets:
    """COO entries of one global matrix, accumulated block by block."""
    rows: list = field(default_factory=list)
    cols: list = field(default_factory=list)
    vals: list = field(default_factory=list)

    def add(self, r, c, v):
        r, c, v = (np.asarray(x).ravel() for x in (r, c, v))
        keep = (r >= 0) & (c >= 0) & (v != 0)
        if not keep.all():
            r, c, v = r[keep], c[keep], v[keep]
        if not len(r):
            return
        self.rows.append(r.astype(np.int64))
        self.cols.append(c.astype(np.int64))
        self.vals.append(v.astype(np.float64))

    def arrays(self):
        if not self.rows:
            z = np.zeros(0, np.int64)
            return z, z, np.zeros(0)
        return (np.concatenate(self.rows), np.concatenate(self.cols), np.concatenate(self.vals))


def local_frames(coordinates: np.ndarray, seg_nodes: np.ndarray, orientation=None,
                 cell_names=None, where="") -> np.ndarray:
    """Rotation matrices (k, 3, 3) whose rows are the local x, y, z axes of each SEG2.

    x runs from the first node to the second; y is normal to x in the plane of x and
    ``orientation`` (default: global Z x x, or global Y for a cell along Z); z = x cross y.
    """
    d = coordinates[seg_nodes[:, 1]] - coordinates[seg_nodes[:, 0]]
    length = np.linalg.norm(d, axis=1)
    if np.any(length == 0):
        bad = int(np.where(length == 0)[0][0])
        name = cell_names[bad] if cell_names is not None else str(bad)
        raise StudyError(f"{where}: SEG2 cell {name} has zero length: a local frame is undefined "
                         f'(use frame = "global")')
    x = d / length[:, None]
    if orientation is not None:
        v = np.broadcast_to(np.asarray(orientation, float), x.shape)
        y = v - np.sum(v * x, axis=1)[:, None] * x
    else:
        y = np.cross(np.array([0.0, 0.0, 1.0]), x)
        along_z = np.linalg.norm(y, axis=1) < 1e-12
        y[along_z] = np.array([0.0, 1.0, 0.0])
    ny = np.linalg.norm(y, axis=1)
    if np.any(ny < 1e-12):
        bad = int(np.where(ny < 1e-12)[0][0])
        name = cell_names[bad] if cell_names is not None else str(bad)
        raise StudyError(f"{where}.orientation: parallel to SEG2 cell {name}")
    y /= ny[:, None]
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=1)


def _block_dofs(dofmap: DofMap, nodes: np.ndarray, comps: tuple[str, ...]) -> np.ndarray:
    """(k, 3) dof numbers of the three components ``comps`` at ``nodes`` (-1 where absent)."""
    return np.stack([dofmap.dof(nodes, c) for c in comps], axis=1)


def add_ground(t: Triplets, dofmap: DofMap, nodes: np.ndarray, values, comps) -> None:
    """Diagonal node-to-ground terms ``values`` (3,) on components ``comps`` of ``nodes``."""
    for comp, value in zip(comps, values):
        if value != 0 and dofmap.position(comp) >= 0:
            dofs = dofmap.dof(nodes, comp)
            t.add(dofs, dofs, np.full(len(dofs), float(value)))


def add_full_block(t: Triplets, dofmap: DofMap, nodes: np.ndarray, matrix, comps) -> None:
    """A full 3x3 block ``matrix`` on components ``comps`` of each node (e.g. a 3x3 mass)."""
    m = np.asarray(matrix, float)
    if np.count_nonzero(m - np.diag(np.diagonal(m))) == 0:
        add_ground(t, dofmap, nodes, np.diagonal(m), comps)     # diagonal: no 3x3 blocks
        return
    dofs = _block_dofs(dofmap, nodes, comps)
    r = np.broadcast_to(dofs[:, :, None], (len(nodes), 3, 3))
    c = np.broadcast_to(dofs[:, None, :], (len(nodes), 3, 3))
    t.add(r, c, np.broadcast_to(m, r.shape))


def add_two_node(t: Triplets, dofmap: DofMap, seg_nodes: np.ndarray, values, comps,
                 frames: np.ndarray | None) -> None:
    """Spring-like terms between the two nodes of each SEG2.

    ``values`` (3,) per direction; global frame when ``frames`` is None, else the element
    matrix is R^T diag(values) R with R = frames (k, 3, 3).
    """
    k = len(seg_nodes)
    values = np.asarray(values, float)
    if frames is None:
        # one direction at a time, and only those the model has with a non-zero value
        for comp, value in zip(comps, values):
            if value == 0 or dofmap.position(comp) < 0:
                continue
            d1 = dofmap.dof(seg_nodes[:, 0], comp)
            d2 = dofmap.dof(seg_nodes[:, 1], comp)
            v = np.full(k, value)
            t.add(np.concatenate([d1, d2, d1, d2]), np.concatenate([d1, d2, d2, d1]),
                  np.concatenate([v, v, -v, -v]))
        return
    d1 = _block_dofs(dofmap, seg_nodes[:, 0], comps)
    d2 = _block_dofs(dofmap, seg_nodes[:, 1], comps)
    block = np.einsum("kai,a,kaj->kij", frames, values, frames)    # R^T diag(v) R
    for da, db, sign in ((d1, d1, 1.0), (d2, d2, 1.0), (d1, d2, -1.0), (d2, d1, -1.0)):
        r = np.broadcast_to(da[:, :, None], (k, 3, 3))
        c = np.broadcast_to(db[:, None, :], (k, 3, 3))
        t.add(r, c, sign * block)


def add_discrete(mass: Triplets | None, stiffness: Triplets | None, damping: Triplets | None,
                 dofmap: DofMap, coordinates: np.ndarray, spec, seg_nodes: np.ndarray,
                 point_nodes: np.ndarray, seg_names=None) -> None:
    """Add the terms of one ``[[discrete]]`` block on its SEG2 cells and point nodes
    (to the matrices whose triplets are given; None skips one)."""
    frames = None
    if spec.frame == "local" and len(point_nodes):
        raise StudyError(f"{spec.where}.frame: \"local\" needs SEG2 cells (their axis defines "
                         f"the frame); this block targets POI1 cells or nodes, which have no "
                         f"axis: give their values in the global frame")
    if spec.frame == "local" and len(seg_nodes):
        frames = local_frames(coordinates, seg_nodes, spec.orientation, seg_names, spec.where)
    for values, target in ((spec.stiffness, stiffness), (spec.damping, damping)):
        if values is None or target is None:
            continue
        groups = [(values[:3], TRANSLATIONS)]
        if len(values) == 6:
            groups.append((values[3:], ROTATIONS))
        for vals, comps in groups:
            if len(seg_nodes):
                add_two_node(target, dofmap, seg_nodes, vals, comps, frames)
            if len(point_nodes):
                add_ground(target, dofmap, point_nodes, vals, comps)
    for value, comps in ((spec.mass, TRANSLATIONS), (spec.inertia, ROTATIONS)):
        if value is None or mass is None:
            continue
        matrix = np.eye(3) * value if np.isscalar(value) else np.asarray(value, float)
        if len(point_nodes):
            add_full_block(mass, dofmap, point_nodes, matrix, comps)
        if len(seg_nodes):
            # a lumped mass: half the cell's mass at each end
            for col in (0, 1):
                add_full_block(mass, dofmap, seg_nodes[:, col], 0.5 * matrix, comps)
