"""Internal forces of the discrete elements and reactions at the imposed dofs, as linear
operators on the motion of every dof.

The force of an element (a SEG2 cell between nodes 1 and 2, or a POI1 cell from the ground
to its node) is what its springs and dampers carry: f = K_e (u2 - u1) + C_e (v2 - v1), summed
over the ``[[discrete]]`` blocks that target the cell, given in the element's frame:
components N, VY, VZ along its local x, y, z (N positive in tension), MT, MFY, MFZ about
them. A SEG2's local x runs from its first node to its second (y and z as for a local frame;
a block's ``orientation`` sets y); a POI1 cell, or a SEG2 of zero length, uses the global
axes. Discrete blocks that target nodes (not cells) have no element.

The reaction at an imposed dof is the force the support exerts there: R = M a + C v + K u - F
on that dof's row (F: the loads applied there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from fem.mesh import POI1, SEG2
from fem.model.dofs import DofMap
from fem.model.elements import Triplets, local_frames
from fem.study.specs import ROTATIONS, TRANSLATIONS

#: the components of an element force, in the element's frame
FORCE_COMPONENTS = ("N", "VY", "VZ", "MT", "MFY", "MFZ")
#: the components of a reaction on each kind of dof
REACTION_COMPONENTS = {"DX": "FX", "DY": "FY", "DZ": "FZ", "DRX": "MX", "DRY": "MY",
                       "DRZ": "MZ"}


@dataclass
class ElementForces:
    """Element forces = stiffness @ u + damping @ v, one row per element and component.

    Attributes
    ----------
    cells : (ne,) mesh cell indices of the elements, in mesh order
    names : list of ne cell names
    components : the components kept (N VY VZ if the model has translations, MT MFY MFZ if
        it has rotations), in the order of each element's rows
    stiffness, damping : (ne * len(components), ndof) csr
    """
    cells: np.ndarray
    names: list
    components: tuple
    stiffness: sp.csr_matrix
    damping: sp.csr_matrix

    @property
    def count(self) -> int:
        return len(self.cells)

    @property
    def width(self) -> int:
        return self.count * len(self.components)

    def units(self) -> list[str]:
        return [("N.m" if c.startswith("M") else "N") for c in self.components] * self.count

    def of(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Rows of element forces (k, width) from rows of u and v (k, ndof)."""
        return (self.stiffness @ u.T + self.damping @ v.T).T


def element_forces(blocks, mesh, dofmap: DofMap) -> ElementForces:
    """The operator of the forces of every element targeted by a block with stiffness or
    damping. ``blocks``: (spec, cell indices) of the ``[[discrete]]`` blocks."""
    kinds = []
    if any(dofmap.position(c) >= 0 for c in TRANSLATIONS):
        kinds.append((0, TRANSLATIONS))
    if any(dofmap.position(c) >= 0 for c in ROTATIONS):
        kinds.append((3, ROTATIONS))
    components = tuple(FORCE_COMPONENTS[first + j] for first, _ in kinds for j in range(3))
    used = sorted({int(c) for spec, cells in blocks
                   if spec.stiffness is not None or spec.damping is not None
                   for c in cells if mesh.cell_type[c] in (SEG2, POI1)})
    cells = np.asarray(used, np.int64)
    row_of = {c: i for i, c in enumerate(used)}
    frames = _output_frames(mesh, cells, blocks)
    width = len(components)
    parts = (Triplets(), Triplets())
    for spec, block_cells in blocks:
        block_cells = np.asarray([c for c in block_cells if int(c) in row_of], np.int64)
        if not len(block_cells):
            continue
        rows = np.array([row_of[int(c)] for c in block_cells])
        conn = mesh.connectivity[block_cells]
        seg = mesh.cell_type[block_cells] == SEG2
        block_frames = np.broadcast_to(np.eye(3), (len(block_cells), 3, 3)).copy()
        if spec.frame == "local" and seg.any():
            block_frames[seg] = local_frames(mesh.coordinates, conn[seg], spec.orientation,
                                             None, spec.where)
        for values, target in ((spec.stiffness, parts[0]), (spec.damping, parts[1])):
            if values is None:
                continue
            for k, (first, comps) in enumerate(kinds):
                vals = np.asarray(values[first:first + 3], float)
                if len(values) < first + 3 or not vals.any():
                    continue
                # the block's matrix in global axes, then seen in the element's frame
                k_glob = np.einsum("eai,a,eaj->eij", block_frames, vals, block_frames)
                out = np.einsum("eab,ebj->eaj", frames[rows], k_glob)
                first_row = rows * width + 3 * k
                _add(target, out, first_row, dofmap, conn, seg, comps)
    n = dofmap.size
    shape = (len(cells) * width, n)
    matrices = [sp.csr_matrix((t.arrays()[2], (t.arrays()[0], t.arrays()[1])), shape=shape)
                for t in parts]
    return ElementForces(cells, [mesh.cell_names[c] for c in cells], components, *matrices)


def _add(target: Triplets, out, first_row, dofmap, conn, seg, comps):
    """Rows first_row + (0, 1, 2) of each element: out @ (u2 - u1) (u1 = 0 for POI1)."""
    second = np.where(seg, conn[:, 1], conn[:, 0])
    for j, comp in enumerate(comps):
        if dofmap.position(comp) < 0:
            continue
        d2 = dofmap.dof(second, comp)
        d1 = np.where(seg, dofmap.dof(np.where(seg, conn[:, 0], 0), comp), -1)
        for a in range(3):
            target.add(first_row + a, d2, out[:, a, j])
            target.add(first_row + a, d1, -out[:, a, j])


def _output_frames(mesh, cells, blocks) -> np.ndarray:
    """(ne, 3, 3) rows: the local x, y, z of each element (identity for POI1 and zero-length
    SEG2); a block with a local frame and an ``orientation`` sets its cells' y."""
    frames = np.broadcast_to(np.eye(3), (len(cells), 3, 3)).copy()
    if not len(cells):
        return frames
    conn = mesh.connectivity[cells]
    seg = mesh.cell_type[cells] == SEG2
    length = np.zeros(len(cells))
    length[seg] = np.linalg.norm(mesh.coordinates[conn[seg, 1]] - mesh.coordinates[conn[seg, 0]],
                                 axis=1)
    axis = seg & (length > 0)
    if axis.any():
        frames[axis] = local_frames(mesh.coordinates, conn[axis])
    position = {int(c): i for i, c in enumerate(cells)}
    for spec, block_cells in blocks:
        if spec.frame != "local" or spec.orientation is None:
            continue
        chosen = [position[int(c)] for c in block_cells if int(c) in position]
        chosen = np.asarray([i for i in chosen if axis[i]], np.int64)
        if len(chosen):
            frames[chosen] = local_frames(mesh.coordinates, conn[chosen], spec.orientation,
                                          None, spec.where)
    return frames


@dataclass
class Reactions:
    """Reactions at the imposed dofs: rows of M, C, K there, and the loads applied there."""
    dofs: np.ndarray              # (nr,) dof numbers
    names: list                   # (nr,) "NODE FX", ...
    mass: sp.csr_matrix
    damping: sp.csr_matrix
    stiffness: sp.csr_matrix

    def units(self, dofmap: DofMap) -> list[str]:
        return [("N.m" if c in ROTATIONS else "N") for c in dofmap.dof_component[self.dofs]]

    def of(self, u, v, a, loads: np.ndarray) -> np.ndarray:
        """Rows (k, nr) from rows of u, v, a (k, ndof) and of the loads there (k, nr)."""
        return (self.mass @ a.T + self.damping @ v.T + self.stiffness @ u.T).T - loads


def reactions(M, C, K, imposed: np.ndarray, dofmap: DofMap, node_names) -> Reactions:
    dofs = np.flatnonzero(imposed)
    names = [f"{node_names[dofmap.dof_node[d]]} "
             f"{REACTION_COMPONENTS[dofmap.dof_component[d]]}" for d in dofs]
    return Reactions(dofs, names, M[dofs].tocsr(), C[dofs].tocsr(), K[dofs].tocsr())
