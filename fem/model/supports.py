"""Multi-support excitation: supports that move with their own records.

A ``[[support]]`` block drives components of its nodes with a record: every dof it drives is
imposed (eliminated from the free dofs like a ``[[constraint]]``), its motion u_b(t) being the
record's displacement (an acceleration table integrated twice exactly, or a displacement
function: ``fem.functions.integrated``). The model keeps one column of the constraints' G per
(support, component), with the motion function of that column.

A transient analysis that drives supports splits the motion of the free dofs into the
pseudo-static motion of the supports and the relative (dynamic) motion y:

    u_f = Psi u_b(t) + y,    Psi = -K_ff^-1 K_fb   (the static modes: the static response of
                                                   the free dofs to a unit motion of each
                                                   support column)
    M_ff y'' + C_ff y' + K_ff y = F(t) - (M_ff Psi + M_fb) u_b'' - (C_ff Psi + C_fb) u_b'

(the stiffness term -(K_ff Psi + K_fb) u_b vanishes by the definition of Psi). The damping
coupling is kept ("coupled", the default: the absolute motion is then that of the model driven
by imposed displacements, exactly) or dropped ("neglected", as code_aster's MULT_APPUI does).
This is the elimination u = T q + G h(t) of ``fem.assembly`` with a lifted G: the support
columns of G carry Psi on the free dofs (``G' = G + T Psi``), so that q = y and every scheme,
basis, link and recombination of fem works unchanged on it; the recombined fields are the
absolute motion. The supports an analysis does not drive are held at rest (their columns are
zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.sparse.csgraph import connected_components

from fem.assembly import System, free_matrices
from fem.errors import StudyError
from fem.functions.integrated import IntegratedTable, Scaled
from fem.study.specs import RELATIVE_FIELDS, TRANSLATIONS

#: the largest set of free dofs whose singular stiffness is solved densely (least squares)
DENSE_LIMIT = 4000
#: the absolute field and derivative order behind each relative field
RELATIVE_OF = {"relative_displacement": ("displacement", 0),
               "relative_velocity": ("velocity", 1),
               "relative_acceleration": ("acceleration", 2)}


@dataclass
class Support:
    """One ``[[support]]`` block on the model.

    nodes : (k,) node indices; components : the components it drives; dofs : component ->
    (k,) dofs; functions : component -> its motion (displacement, m, a TimeFunction);
    columns : component -> column of the model's constraints G.
    """
    name: str
    where: str
    nodes: np.ndarray
    components: tuple
    dofs: dict
    functions: dict
    columns: dict


@dataclass
class Supports:
    """The supports of a model (possibly none)."""
    items: list

    def __bool__(self):
        return bool(self.items)

    @property
    def names(self) -> list:
        return [s.name for s in self.items]

    def get(self, name: str) -> Support:
        for s in self.items:
            if s.name == name:
                return s
        raise KeyError(name)

    def columns(self, names=None) -> np.ndarray:
        """The G columns of the named supports (every support by default)."""
        wanted = self.names if names is None else list(names)
        return np.array([c for s in self.items if s.name in wanted for c in s.columns.values()],
                        np.int64)


def motion_function(spec, comp: str, functions):
    """The displacement (m) of support ``spec`` along ``comp``: its record integrated twice
    (acceleration) or scaled (displacement)."""
    fname = spec.functions[comp]
    label = f"{fname} (support {spec.name} {comp})"
    if spec.record == "acceleration":
        return IntegratedTable(label, functions[fname], spec.scale,
                               spec.velocity.get(comp, 0.0), spec.displacement.get(comp, 0.0))
    return Scaled(label, functions[fname], spec.scale)


def build_supports(study, mesh, dofmap, imposed_blocks, target_nodes):
    """(Supports without their columns, the imposed blocks of their dofs for
    ``build_constraints``): one block per (support, component), value 1 times the motion.
    ``imposed_blocks``: those of the ``[[constraint]]`` blocks, which may not share a dof with
    a support."""
    owner = {}
    constrained = {}
    for where, dofs, _, _, names in imposed_blocks:
        for d, name in zip(dofs, names):
            constrained.setdefault(int(d), (where, name))
    items, blocks = [], []
    for spec in study.supports:
        nodes = target_nodes(mesh, spec.targets, spec.where)
        if len(nodes) == 0:
            raise StudyError(f"{spec.where}: its node groups hold no node")
        for i in nodes:
            other = owner.get(int(i))
            if other is not None:
                raise StudyError(f"{spec.where}: node {mesh.node_names[i]} already belongs to "
                                 f"support '{other}': a node moves with one support")
            owner[int(i)] = spec.name
        dofs, functions = {}, {}
        for comp in spec.functions:
            d = dofmap.dof(nodes, comp)
            for node, dof in zip(nodes, d):
                if int(dof) in constrained:
                    where, _ = constrained[int(dof)]
                    raise StudyError(f"{spec.where}: {comp} of node {mesh.node_names[node]} is "
                                     f"also imposed by {where}: a support dof moves with its "
                                     f"record only")
            dofs[comp] = d
            functions[comp] = motion_function(spec, comp, study.functions)
            names = [f"node {mesh.node_names[i]} {comp}" for i in nodes]
            blocks.append((spec.where, d, np.ones(len(d)), functions[comp], names))
        items.append(Support(spec.name, spec.where, nodes, tuple(spec.functions), dofs,
                             functions, {}))
    return Supports(items), blocks


def assign_columns(supports: Supports, first: int) -> None:
    """Number the G columns of the support blocks, which follow the ``first`` columns of
    the ``[[constraint]]`` blocks (one column per imposed block, in order)."""
    col = first
    for s in supports.items:
        for comp in s.components:
            s.columns[comp] = col
            col += 1


def check_initial(study, mesh, dofmap, supports: Supports, target_nodes) -> None:
    """Non-zero ``[[initial]]`` values on a support dof are refused: the record sets its
    motion."""
    driven = {}
    for s in supports.items:
        for comp, dofs in s.dofs.items():
            for d in dofs:
                driven[int(d)] = s.name
    if not driven:
        return
    for spec in study.initial:
        nodes = target_nodes(mesh, spec.targets, spec.where)
        for key, values in (("displacement", spec.displacement), ("velocity", spec.velocity)):
            for comp, value in values.items():
                if value == 0.0:
                    continue
                for node, d in zip(np.atleast_1d(nodes), dofmap.dof(nodes, comp)):
                    if int(d) in driven:
                        raise StudyError(
                            f"{spec.where}.{key}.{comp}: {comp} of node {mesh.node_names[node]} "
                            f"is driven by support '{driven[int(d)]}', whose record sets its "
                            f"motion; leave it out of [[initial]]")


def support_translation(model, name: str) -> sp.csr_matrix:
    """(3, n): the translation of support ``name`` (its motion along the translations it
    drives, read at its first node; zero along the others)."""
    s = model.supports.get(name)
    rows, cols = [], []
    for k, comp in enumerate(TRANSLATIONS):
        if comp in s.dofs:
            rows.append(k)
            cols.append(int(s.dofs[comp][0]))
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(3, model.size))


# --------------------------------------------------------------------------- static modes
def static_modes(model, columns, where: str) -> np.ndarray:
    """Psi (nf, k): the static response of the free dofs to a unit motion of each support
    column, -K_ff^-1 K_fb. Free dofs that no spring path links to a support stay at rest
    (their rows are zero: a part free to move as a rigid body is not moved statically)."""
    con = model.constraints
    T = con.T
    TT = T.T.tocsr()
    Kff = (TT @ model.stiffness @ T).tocsr()
    Kfb = np.asarray((TT @ (model.stiffness @ con.G[:, columns])).todense()).reshape(
        Kff.shape[0], len(columns))
    psi = np.zeros_like(Kfb)
    if not Kfb.size or not np.any(Kfb):
        return psi
    pattern = sp.csr_matrix((np.ones(Kff.nnz), Kff.indices, Kff.indptr), shape=Kff.shape)
    _, labels = connected_components(pattern, directed=False)
    touched = np.unique(labels[np.any(Kfb != 0, axis=1)])
    sel = np.flatnonzero(np.isin(labels, touched))
    Ks = sp.csc_matrix(Kff[sel][:, sel])
    rhs = -Kfb[sel]
    solved = _solve(Ks, rhs)
    if solved is None and len(sel) <= DENSE_LIMIT:
        # a mechanism among the free dofs a support holds (springs that leave some motion
        # free, a rigid-body mode): K is semi-definite, so -K_fb lies in the range of K_ff
        # and the least-squares solution (no static motion along the free motion) solves it
        dense = scipy.linalg.lstsq(Ks.toarray(), rhs, cond=1e-12)[0]
        if _residual(Ks, dense, rhs) <= 1e-8:
            solved = dense
    if solved is None:
        raise StudyError(f"{where}: the static modes of the supports are not defined: the "
                         f"stiffness of the free dofs held by springs to a support is singular "
                         f"({len(sel)} dofs); hold them with springs or constraints")
    psi[sel] = solved
    return psi


def _residual(A, x, rhs) -> float:
    if not np.all(np.isfinite(x)):
        return np.inf
    return float(np.linalg.norm(A @ x - rhs) / max(np.linalg.norm(rhs), 1e-300))


def _solve(A, rhs):
    """A^-1 rhs by a sparse LU, or None when A is singular."""
    try:
        x = scipy.sparse.linalg.splu(A).solve(rhs)
    except RuntimeError:
        return None
    return x if _residual(A, x, rhs) <= 1e-8 else None


@dataclass
class SupportMotion:
    """The supports a transient analysis drives.

    names : their names; columns : (k,) their G columns; functions : their k motions;
    psi : (nf, k) static modes on the free coordinates; S : (n, k) csr, the pseudo-static
    motion of every dof per unit motion of each column (Psi on the free dofs, 1 on the
    support's own dofs, the relations' share on their slaves).
    """
    names: list
    columns: np.ndarray
    functions: list
    psi: np.ndarray
    S: sp.csr_matrix

    def values(self, t, order: int = 0) -> np.ndarray:
        """d^order u_b / dt^order (len(t), k) at the times t (s)."""
        t = np.atleast_1d(np.asarray(t, float))
        out = np.empty((len(t), len(self.functions)))
        for j, fn in enumerate(self.functions):
            out[:, j] = np.broadcast_to(fn.derivative(t, order), t.shape)
        return out

    def relative_state(self, state, t: float):
        """A state of the free dofs (absolute) -> the relative state y at time t."""
        return self._shift(state, t, -1.0)

    def absolute_state(self, state, t: float):
        """A relative state y of the free dofs -> the absolute state at time t."""
        return self._shift(state, t, 1.0)

    def _shift(self, state, t, sign):
        from fem.model.dofs import State

        parts = [state.u, state.v, state.a]
        out = []
        for order, x in enumerate(parts):
            if x is None:
                out.append(None)
                continue
            out.append(np.asarray(x, float) + sign * (self.psi @ self.values([t], order)[0]))
        return State(*out)


def support_system(model, load_names, names, *, damping: str = "coupled", start: float = 0.0,
                   where: str = "analysis"):
    """(System on the relative coordinates y, SupportMotion or None): the equations of a
    transient analysis that drives the supports ``names`` (module docstring); the model's
    other supports are held at rest. ``damping``: "coupled" keeps -(C_ff Psi + C_fb) u_b',
    "neglected" drops it. ``start``: the analysis' first instant, where the initial state
    (absolute, ``[[initial]]``) is made relative."""
    con = model.constraints
    supports = model.supports
    every = supports.columns()
    active = supports.columns(names)
    T = con.T
    TT = T.T.tocsr()
    ng = con.G.shape[1]
    keep = np.ones(ng)
    keep[every] = 0.0
    G = (con.G @ sp.diags(keep)).tocsr()
    psi = np.zeros((T.shape[1], 0))
    if len(active):
        psi = static_modes(model, active, where)
        place = sp.csr_matrix((np.ones(len(active)), (np.arange(len(active)), active)),
                              shape=(len(active), ng))
        G_active = con.G[:, active] + sp.csr_matrix(T @ psi)
        G = (G + G_active @ place).tocsr()
        G.eliminate_zeros()
    M, C, K = free_matrices(model)
    drop = {(int(j), 0) for j in active}
    if damping == "neglected":
        drop |= {(int(j), 1) for j in active}
    silent = set(int(j) for j in every) - set(int(j) for j in active)
    cols, keys = [], []
    for name in load_names:
        load = model.loads[name]
        cols.append(TT @ load.vector)
        keys.append((load.function, 0))
    if ng:
        for matrix, order in ((model.stiffness, 0), (model.damping, 1), (model.mass, 2)):
            coupling = np.asarray((TT @ (matrix @ G)).todense())
            for j, fn in enumerate(con.functions):
                if j in silent or (j, order) in drop:
                    continue
                if np.any(coupling[:, j]) and not (order > 0 and fn.kind == "constant"):
                    cols.append(-coupling[:, j])
                    keys.append((fn, order))
    B, columns = _merge(cols, keys, T.shape[1])
    functions = [con.functions[j] for j in active]
    motion = None
    u0 = model.initial_displacement[con.free]
    v0 = model.initial_velocity[con.free]
    if len(active):
        S = G[:, active].tocsr()
        motion = SupportMotion(list(names), active, functions, psi, S)
        u0 = u0 - psi @ motion.values([start], 0)[0]
        v0 = v0 - psi @ motion.values([start], 1)[0]
    return System(M, K, C, B, columns, T, G, con.functions, u0, v0), motion


def _merge(cols, keys, nf):
    """Sum the columns that share a function and a derivative order."""
    merged, out = [], []
    for col, key in zip(cols, keys):
        for k, other in enumerate(out):
            if other[0] is key[0] and other[1] == key[1]:
                merged[k] = merged[k] + col
                break
        else:
            out.append(key)
            merged.append(np.array(col, float))
    B = np.column_stack(merged) if merged else np.zeros((nf, 0))
    return B, out


class RelativeFields:
    """The relative fields an analysis archives, u - S u_b^(order)(t) on the archived dofs
    (``dofs``, or every dof), from the absolute fields of the same rows."""

    def __init__(self, motion: SupportMotion, fields, dofs=None):
        self.fields = [f for f in RELATIVE_FIELDS if f in fields]
        self.S = motion.S if dofs is None else motion.S[np.asarray(dofs)]
        self.motion = motion

    def __bool__(self):
        return bool(self.fields)

    @property
    def needs(self) -> set:
        """The absolute fields the relative ones are made from."""
        return {RELATIVE_OF[f][0] for f in self.fields}

    def columns(self, width: int) -> dict:
        return {f: width for f in self.fields}

    def rows(self, t, full: dict) -> dict:
        out = {}
        for f in self.fields:
            base, order = RELATIVE_OF[f]
            out[f] = full[base] - (self.S @ self.motion.values(t, order).T).T
        return out
