"""Study + mesh -> Model: resolve names to indices, assemble M, K, C, constraints, loads."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from fem.assembly import coo_to_csr
from fem.errors import StudyError
from fem.functions import ONE
from fem.mesh import POI1, SEG2, Mesh
from fem.mesh import read as read_mesh
from fem.model.constraints import Constraints, build_constraints
from fem.model.dofs import DofMap
from fem.model.element_forces import ElementForces, Reactions, element_forces, reactions
from fem.model.elements import Triplets, add_discrete
from fem.model.supports import Supports, assign_columns, build_supports, check_initial
from fem.study.specs import TRANSLATIONS, Study, Targets


@dataclass
class Load:
    """A load vector (n,) over all dofs (N, N.m) multiplied by a time function."""
    name: str
    kind: str
    vector: np.ndarray
    function: object


@dataclass
class Model:
    """Everything about the structure, on all dofs (imposed ones included)."""
    mesh: Mesh
    dofs: DofMap
    mass: sp.csr_matrix
    stiffness: sp.csr_matrix
    damping: sp.csr_matrix
    constraints: Constraints
    loads: dict[str, Load]
    initial_displacement: np.ndarray
    initial_velocity: np.ndarray
    elements: ElementForces | None = None
    reactions: Reactions | None = None
    supports: Supports = field(default_factory=lambda: Supports([]))

    @property
    def size(self) -> int:
        return self.dofs.size

    def dof(self, node: str, component: str, where: str = "") -> int:
        """Dof number of ``component`` at ``node``; ``where`` is the key path of the block
        naming them (its ``node`` and ``component`` keys go into the messages)."""
        d = int(self.dofs.dof([self.mesh.node_index(node, f"{where}.node" if where else "")],
                              component)[0])
        if d < 0:
            raise StudyError(f"{where + '.component: ' if where else ''}component {component} "
                             f"is not in the model (components: {' '.join(self.dofs.components)})")
        return d


def build_mesh(study: Study) -> Mesh:
    """The study's mesh: its file, plus inline nodes, cells and groups (which may name the
    file's nodes and cells; a group defined in both gets the union)."""
    spec = study.mesh
    base = read_mesh(spec.file) if spec.file is not None else Mesh([], np.zeros((0, 3)))
    if not (spec.nodes or spec.cells or spec.node_groups or spec.cell_groups):
        return base
    names = list(base.node_names) + list(spec.nodes)
    coords = np.vstack([base.coordinates, np.array(list(spec.nodes.values()), float).reshape(-1, 3)])
    node_index = {n: i for i, n in enumerate(names)}
    if len(node_index) != len(names):
        dup = next(n for n in spec.nodes if base.has_node(n))
        raise StudyError(f"mesh.nodes.{dup}: node '{dup}' is already defined in {base.source}")

    def node_ref(name, where):
        try:
            return node_index[name]
        except KeyError:
            raise StudyError(f"{where}: unknown node '{name}'") from None

    cell_names = list(base.cell_names) + list(spec.cells)
    cell_index = {c: i for i, c in enumerate(cell_names)}
    if len(cell_index) != len(cell_names):
        dup = next(c for c in spec.cells if base.has_cell(c))
        raise StudyError(f"mesh.cells.{dup}: cell '{dup}' is already defined in {base.source}")
    ctype = [SEG2 if spec.cells[c][0] == "SEG2" else POI1 for c in spec.cells]
    conn = np.full((len(spec.cells), 2), -1, np.int64)
    for i, (c, (_, cnodes)) in enumerate(spec.cells.items()):
        for j, nname in enumerate(cnodes):
            conn[i, j] = node_ref(nname, f"mesh.cells.{c}.nodes")
    node_groups = dict(base.node_groups)
    for g, members in spec.node_groups.items():
        idx = np.array([node_ref(m, f"mesh.node_groups.{g}") for m in members], np.int64)
        node_groups[g] = np.union1d(node_groups[g], idx) if g in node_groups else idx
    cell_groups = dict(base.cell_groups)
    for g, members in spec.cell_groups.items():
        idx = []
        for m in members:
            if m not in cell_index:
                raise StudyError(f"mesh.cell_groups.{g}: unknown cell '{m}'")
            idx.append(cell_index[m])
        idx = np.array(idx, np.int64)
        cell_groups[g] = np.union1d(cell_groups[g], idx) if g in cell_groups else idx
    source = "study inline mesh" if spec.file is None else f"{base.source} + study inline mesh"
    return Mesh(node_names=names, coordinates=coords, cell_names=cell_names,
                cell_type=np.concatenate([base.cell_type, np.array(ctype, np.int8)]),
                connectivity=np.vstack([base.connectivity, conn]), node_groups=node_groups,
                cell_groups=cell_groups, source=source)


class _LazyNames:
    """Cell names by position, looked up only when an error message needs one."""

    def __init__(self, names, indices):
        self.names, self.indices = names, indices

    def __getitem__(self, i):
        return self.names[self.indices[i]]


def _distinct(parts, size: int) -> np.ndarray:
    """Sorted distinct indices in [0, size) of the arrays ``parts`` (a mask: O(n), no sort)."""
    mask = np.zeros(size, bool)
    for part in parts:
        mask[part] = True
    return np.flatnonzero(mask)


def _targets_to_indices(mesh: Mesh, targets: Targets, where: str):
    """(seg_nodes (k,2), point_nodes (p,), seg_cell_indices (k,)) of a block's targets."""
    cells = [np.array([mesh.cell_index(c, f"{where}.cells") for c in targets.cells], np.int64)]
    cells += [mesh.cell_group(g, f"{where}.cell_groups") for g in targets.cell_groups]
    cells = _distinct(cells, mesh.cell_count)
    nodes = target_nodes(mesh, targets, where)
    kind = mesh.cell_type[cells]
    seg = cells[kind == SEG2]
    poi = cells[kind == POI1]
    point_nodes = _distinct([nodes, mesh.connectivity[poi, 0]], mesh.node_count) if len(poi) \
        else nodes
    return mesh.connectivity[seg], point_nodes, seg


def target_nodes(mesh: Mesh, targets: Targets, where: str) -> np.ndarray:
    nodes = [np.array([mesh.node_index(n, f"{where}.nodes") for n in targets.nodes], np.int64)]
    nodes += [mesh.node_group(g, f"{where}.node_groups") for g in targets.node_groups]
    return _distinct(nodes, mesh.node_count)


def build_model(study: Study, mesh: Mesh) -> Model:
    """Assemble the model of ``study`` on ``mesh``; every name is resolved here."""
    dofmap = DofMap(mesh.node_count, study.components)
    n = dofmap.size
    blocks = []
    for spec in study.discrete:
        seg_nodes, point_nodes, seg_cells = _targets_to_indices(mesh, spec.targets, spec.where)
        if len(seg_nodes) == 0 and len(point_nodes) == 0:
            raise StudyError(f"{spec.where}: its targets hold no node or cell")
        blocks.append((spec, seg_nodes, point_nodes, _LazyNames(mesh.cell_names, seg_cells)))
    matrices = []
    for which in range(3):
        # one matrix at a time: its triplets are freed before the next one is built
        triplets = Triplets()
        parts = [triplets if k == which else None for k in range(3)]
        for spec, seg_nodes, point_nodes, names in blocks:
            add_discrete(*parts, dofmap, mesh.coordinates, spec, seg_nodes, point_nodes, names)
        matrices.append(coo_to_csr(*triplets.arrays(), n))
        del triplets, parts
    M, K, C = matrices
    if study.rayleigh is not None:
        C = (C + study.rayleigh.mass * M + study.rayleigh.stiffness * K).tocsr()
        C.eliminate_zeros()
    constraints, supports = _constraints(study, mesh, dofmap)
    _check_singular(M, K, C, constraints, dofmap, mesh)
    loads = _loads(study, mesh, dofmap, M)
    u0, v0 = _initial(study, mesh, dofmap)
    check_initial(study, mesh, dofmap, supports, target_nodes)
    _check_initial_on_imposed(study, mesh, dofmap, constraints)
    cells = [(spec, _block_cells(mesh, spec.targets, spec.where)) for spec in study.discrete]
    return Model(mesh, dofmap, M, K, C, constraints, loads, u0, v0,
                 element_forces(cells, mesh, dofmap),
                 reactions(M, C, K, constraints.imposed, dofmap, mesh.node_names), supports)


def _block_cells(mesh: Mesh, targets: Targets, where: str) -> np.ndarray:
    """The cells (SEG2 and POI1) a block targets by name or group."""
    cells = [np.array([mesh.cell_index(c, f"{where}.cells") for c in targets.cells], np.int64)]
    cells += [mesh.cell_group(g, f"{where}.cell_groups") for g in targets.cell_groups]
    return _distinct(cells, mesh.cell_count)


def _node_dofs(mesh, dofmap, targets, where, comp):
    nodes = target_nodes(mesh, targets, where)
    return nodes, dofmap.dof(nodes, comp)


def _constraints(study: Study, mesh: Mesh, dofmap: DofMap) -> tuple[Constraints, Supports]:
    imposed = []
    for spec in study.imposed:
        nodes = target_nodes(mesh, spec.targets, spec.where)
        fn = study.functions[spec.function] if spec.function else None
        dofs, values, names = [], [], []
        for comp, value in spec.values.items():
            dofs.append(dofmap.dof(nodes, comp))
            values.append(np.full(len(nodes), value))
            names += [f"node {mesh.node_names[i]} {comp}" for i in nodes]
        imposed.append((spec.where, np.concatenate(dofs), np.concatenate(values), fn, names))
    supports, support_blocks = build_supports(study, mesh, dofmap, imposed, target_nodes)
    assign_columns(supports, len(imposed))
    relations = []
    for spec in study.relations:
        dofs, coefs = [], []
        for k, (node, comp, coef) in enumerate(spec.terms):
            idx = mesh.node_index(node, f"{spec.where}.terms[{k + 1}].node")
            dofs.append(int(dofmap.dof([idx], comp)[0]))
            coefs.append(coef)
        fn = study.functions[spec.function] if spec.function else None
        relations.append((spec.where, np.array(dofs), np.array(coefs), spec.value, fn))
    return build_constraints(dofmap.size, imposed + support_blocks, relations), supports


def _check_singular(M, K, C, constraints: Constraints, dofmap: DofMap, mesh: Mesh):
    """A free dof with neither mass nor stiffness makes every scheme singular: name it."""
    R = (abs(M) + abs(K)) @ constraints.T
    weight = np.asarray(abs(constraints.T.T) @ abs(R).sum(axis=1)).ravel() if R.nnz else \
        np.zeros(constraints.size)
    if constraints.size and np.any(weight == 0):
        j = int(np.where(weight == 0)[0][0])
        dof = int(constraints.free[j])
        raise StudyError(f"{dofmap.name(dof, mesh.node_names)} has neither mass nor stiffness: "
                         f"the system is singular (add a [[discrete]] mass or spring, or impose it)")


def _loads(study: Study, mesh: Mesh, dofmap: DofMap, M) -> dict[str, Load]:
    loads = {}
    n = dofmap.size
    for spec in study.loads:
        fn = study.functions[spec.function] if spec.function else ONE
        vector = np.zeros(n)
        if spec.kind == "force":
            nodes = target_nodes(mesh, spec.targets, spec.where)
            for comp, value in spec.values.items():
                np.add.at(vector, dofmap.dof(nodes, comp), value)
        else:
            # uniform acceleration field r (m/s^2 per unit) on the translations of every node
            r = np.zeros(n)
            for k, comp in enumerate(TRANSLATIONS):
                d = dofmap.dof(np.arange(mesh.node_count), comp)
                if d[0] >= 0 if len(d) else False:
                    r[d] = spec.direction[k]
            sign = 1.0 if spec.kind == "gravity" else -1.0      # base motion: F = -M r a_g
            vector = sign * spec.g * (M @ r)
        loads[spec.name] = Load(spec.name, spec.kind, vector, fn)
    return loads


def _check_initial_on_imposed(study: Study, mesh: Mesh, dofmap: DofMap, constraints):
    """A non-zero initial value on a dof whose motion a constraint imposes would be
    overridden: refuse it rather than ignore it. (Dofs tied by a linear relation take the
    initial values given, which the relation must then hold.)"""
    fixed = np.asarray(constraints.imposed, bool)
    for spec in study.initial:
        nodes = target_nodes(mesh, spec.targets, spec.where)
        for key, values in (("displacement", spec.displacement), ("velocity", spec.velocity)):
            for comp, value in values.items():
                if value == 0.0:
                    continue
                dofs = np.asarray(dofmap.dof(nodes, comp))
                bad = np.flatnonzero(fixed[dofs])
                if len(bad):
                    node = mesh.node_names[np.atleast_1d(nodes)[bad[0]]]
                    raise StudyError(
                        f"{spec.where}.{key}.{comp}: {comp} of node {node} is imposed by a "
                        f"[[constraint]], so its initial {key} is that of the constraint; "
                        f"leave it out of [[initial]]")


def _initial(study: Study, mesh: Mesh, dofmap: DofMap):
    u0, v0 = np.zeros(dofmap.size), np.zeros(dofmap.size)
    for spec in study.initial:
        nodes = target_nodes(mesh, spec.targets, spec.where)
        for target, values in ((u0, spec.displacement), (v0, spec.velocity)):
            for comp, value in values.items():
                target[dofmap.dof(nodes, comp)] = value
    return u0, v0
