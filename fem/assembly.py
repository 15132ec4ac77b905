"""Sparse assembly (COO -> CSR) and reduction of the model to its free dofs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


def coo_to_csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int) -> sp.csr_matrix:
    """Sum duplicate COO entries into an (n, n) CSR matrix."""
    m = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    m.eliminate_zeros()
    return m


@dataclass
class System:
    """The equations on the free dofs q:  M q'' + C q' + K q = B w(t).

    u = T q + G h(t) on all dofs. The right-hand side is a few fixed columns B (nf, nb)
    times time values w(t) (nb,): the load functions f(t) and the constraint functions h(t)
    with their derivatives (imposed motion enters as -K_fc G h - C_fc G h' - M_fc G h'').

    Attributes
    ----------
    mass, stiffness, damping : (nf, nf) csr
    B : (nf, nb) float
    q0, v0 : (nf,) initial free displacement and velocity
    """
    mass: sp.csr_matrix
    stiffness: sp.csr_matrix
    damping: sp.csr_matrix
    B: np.ndarray
    columns: list            # (function, derivative order) for each column of B
    T: sp.csr_matrix
    G: sp.csr_matrix
    g_functions: list
    q0: np.ndarray
    v0: np.ndarray

    @property
    def size(self) -> int:
        return self.mass.shape[0]

    def load_values(self, t: np.ndarray) -> np.ndarray:
        """w(t) for an array of times: (len(t), nb)."""
        t = np.asarray(t, float)
        w = np.empty((len(t), len(self.columns)))
        for j, (fn, order) in enumerate(self.columns):
            w[:, j] = _evaluate(fn, order, t)
        return w

    def expand(self, q: np.ndarray, t: np.ndarray, order: int = 0) -> np.ndarray:
        """All dofs (k, n) from free dofs q (k, nf) at times t (k,): T q + G h^(order)(t)."""
        u = (self.T @ q.T).T
        if self.G.shape[1]:
            h = np.stack([_evaluate(f, order, t) for f in self.g_functions], axis=1)
            u = u + (self.G @ h.T).T
        return u


def _evaluate(fn, order: int, t: np.ndarray) -> np.ndarray:
    """d^order fn / dt^order (len(t),) at the times t (s): exact for every function of a study
    (right-continuous where a table's slope jumps), see ``TimeFunction.derivative``."""
    return np.broadcast_to(fn.derivative(t, order), t.shape).astype(float)


def free_matrices(model):
    """(M, C, K) on the free dofs: T^T A T for each of the model's matrices, (nf, nf) csr."""
    T = model.constraints.T
    TT = T.T.tocsr()
    return tuple((TT @ a @ T).tocsr() for a in (model.mass, model.damping, model.stiffness))


def reduce(model, load_names) -> System:
    """Project the model on its free dofs for the loads named ``load_names``."""
    con = model.constraints
    T, TT = con.T, con.T.T.tocsr()
    M, C, K = free_matrices(model)
    cols, funcs = [], []
    for name in load_names:
        load = model.loads[name]
        cols.append(TT @ load.vector)
        funcs.append((load.function, 0))
    if con.G.shape[1]:
        for matrix, order in ((model.stiffness, 0), (model.damping, 1), (model.mass, 2)):
            coupling = (TT @ (matrix @ con.G)).toarray()
            for j, fn in enumerate(con.functions):
                if np.any(coupling[:, j]) and not (order > 0 and fn.kind == "constant"):
                    cols.append(-coupling[:, j])
                    funcs.append((fn, order))
    B = np.column_stack(cols) if cols else np.zeros((T.shape[1], 0))
    # merge columns that share a function and derivative order
    merged, keys = [], []
    for j, key in enumerate(funcs):
        for k, other in enumerate(keys):
            if other[0] is key[0] and other[1] == key[1]:
                merged[k] = merged[k] + B[:, j]
                break
        else:
            keys.append(key)
            merged.append(B[:, j].copy())
    B = np.column_stack(merged) if merged else np.zeros((T.shape[1], 0))
    g0 = con.G @ con.values(0.0) if con.G.shape[1] else 0.0
    q0 = (model.initial_displacement - g0)[con.free]
    v0 = model.initial_velocity[con.free]
    return System(M, K, C, B, keys, T, con.G, con.functions, q0, v0)
