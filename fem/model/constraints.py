"""Imposed dofs and linear relations, enforced exactly by elimination.

Every dof vector is written u = T q + G h(t): q are the independent (free) dofs, T (n, nf)
is sparse, and each column of G (n, ng) is one constraint block's values, multiplied by its
time function h_j(t) (constant 1 when the block has none). Imposed dofs have zero rows in T;
a linear relation makes one of its dofs a "slave" expressed through the others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from fem.errors import StudyError
from fem.functions import ONE


@dataclass
class Constraints:
    """u = T q + G h(t).

    Attributes
    ----------
    T : (n, nf) csr, maps free dofs to all dofs
    G : (n, ng) csr, constraint values per block
    functions : list of ng time functions h_j
    free : (nf,) int64, the dof number of each free dof (T has an identity row there)
    imposed : (n,) bool, dofs with an imposed value
    slaves : (n,) bool, dofs eliminated by a linear relation
    """

    T: sp.csr_matrix
    G: sp.csr_matrix
    functions: list
    free: np.ndarray
    imposed: np.ndarray
    slaves: np.ndarray

    @property
    def size(self) -> int:
        return self.T.shape[1]

    def values(self, t) -> np.ndarray:
        """h(t) for every block: (ng,) for a scalar t, (len(t), ng) for an array."""
        t_arr = np.atleast_1d(np.asarray(t, float))
        h = np.stack([np.broadcast_to(f(t_arr), t_arr.shape) for f in self.functions], axis=-1) \
            if self.functions else np.zeros(t_arr.shape + (0,))
        return h[0] if np.ndim(t) == 0 else h

    def derivatives(self, t) -> np.ndarray:
        t_arr = np.atleast_1d(np.asarray(t, float))
        h = np.stack([np.broadcast_to(f.derivative(t_arr), t_arr.shape) for f in self.functions],
                     axis=-1) if self.functions else np.zeros(t_arr.shape + (0,))
        return h[0] if np.ndim(t) == 0 else h


def build_constraints(n: int, imposed_blocks, relation_blocks) -> Constraints:
    """Eliminate imposed dofs and linear relations.

    Parameters
    ----------
    n : number of dofs
    imposed_blocks : list of (where, dofs (k,), values (k,), function or None, names (k,))
    relation_blocks : list of (where, dofs (k,), coefficients (k,), value, function or None)
    """
    functions, g_rows, g_cols, g_vals = [], [], [], []
    imposed = np.zeros(n, bool)
    imposed_value = np.zeros(n)
    imposed_owner = np.full(n, -1)
    for where, dofs, values, function, names in imposed_blocks:
        col = len(functions)
        functions.append(function or ONE)
        again = imposed[dofs]
        if again.any():
            i = int(np.where(again)[0][0])
            other = imposed_owner[dofs[i]]
            same = (imposed_value[dofs[i]] == values[i] and functions[other] is functions[col])
            if not same:
                raise StudyError(f"{where}: {names[i]} is already imposed by another "
                                 f"[[constraint]] block with a different value or function")
            keep = ~again
            dofs, values = dofs[keep], values[keep]
        imposed[dofs] = True
        imposed_value[dofs] = values
        imposed_owner[dofs] = col
        g_rows.append(dofs)
        g_cols.append(np.full(len(dofs), col))
        g_vals.append(values)
    ncols_imposed = len(functions)
    G_imp = sp.csr_matrix((np.concatenate(g_vals) if g_vals else np.zeros(0),
                           (np.concatenate(g_rows) if g_rows else np.zeros(0, int),
                            np.concatenate(g_cols) if g_cols else np.zeros(0, int))),
                          shape=(n, max(ncols_imposed, 0)))
    slaves = np.zeros(n, bool)
    if not relation_blocks:
        free = np.where(~imposed)[0]
        T = sp.csr_matrix((np.ones(len(free)), (free, np.arange(len(free)))), shape=(n, len(free)))
        return Constraints(T, G_imp, functions, free, imposed, slaves)
    return _with_relations(n, imposed, G_imp, functions, relation_blocks)


def _with_relations(n, imposed, G_imp, functions, relation_blocks) -> Constraints:
    r = len(relation_blocks)
    involved = np.unique(np.concatenate([b[1] for b in relation_blocks]))
    local = {int(d): i for i, d in enumerate(involved)}
    A = np.zeros((r, len(involved)))
    B = np.zeros((r, len(functions) + r))       # right-hand sides, one column per function
    for i, (where, dofs, coefs, value, function) in enumerate(relation_blocks):
        for d, c in zip(dofs, coefs):
            A[i, local[int(d)]] += c
        B[i, len(functions) + i] = value
    rel_functions = [b[4] or ONE for b in relation_blocks]
    # move imposed dofs to the right-hand side: A_F u_F = b - A_I G_I h
    imp_cols = np.array([imposed[d] for d in involved], bool)
    if imp_cols.any():
        A_I = A[:, imp_cols]
        G_I = G_imp[involved[imp_cols]].toarray()
        B[:, :len(functions)] -= A_I @ G_I
    A_F = A[:, ~imp_cols]
    free_involved = involved[~imp_cols]
    if A_F.shape[1] < r:
        raise StudyError(f"{relation_blocks[0][0]}: {r} linear relations on only "
                         f"{A_F.shape[1]} free dofs")
    # pivoted QR picks, for each relation, a well-conditioned dof to eliminate
    _, R, piv = scipy.linalg.qr(A_F, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R)) if R.size else np.zeros(0)
    tol = max(A_F.shape) * np.finfo(float).eps * (diag[0] if len(diag) else 1.0)
    rank = int(np.sum(diag > tol))
    if rank < r:
        bad = _redundant_relation(A_F)
        raise StudyError(f"{relation_blocks[bad][0]}: linear relation is redundant with or "
                         f"contradicts the other relations (or acts on imposed dofs only)")
    slave_local, master_local = piv[:r], piv[r:]
    A_S, A_M = A_F[:, slave_local], A_F[:, master_local]
    S_inv = np.linalg.inv(A_S)
    slave_dofs = free_involved[slave_local]
    slaves = np.zeros(n, bool)
    slaves[slave_dofs] = True
    free = np.where(~imposed & ~slaves)[0]
    col_of = np.full(n, -1)
    col_of[free] = np.arange(len(free))
    # T: identity on free dofs; slave rows = -A_S^-1 A_M on the masters of the relations
    coupling = -S_inv @ A_M
    master_dofs = free_involved[master_local]
    rows = [free, np.repeat(slave_dofs, len(master_dofs))]
    cols = [np.arange(len(free)), np.tile(col_of[master_dofs], len(slave_dofs))]
    vals = [np.ones(len(free)), coupling.ravel()]
    T = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, len(free)))
    T.eliminate_zeros()
    # G: imposed columns, plus slave rows S^-1 B for every function column
    all_functions = functions + rel_functions
    G = sp.lil_matrix((n, len(all_functions)))
    G[:, :len(functions)] = G_imp
    slave_g = S_inv @ B
    for k, d in enumerate(slave_dofs):
        G[d, :] = slave_g[k]
    return Constraints(T.tocsr(), G.tocsr(), all_functions, free, imposed, slaves)


def _redundant_relation(A: np.ndarray) -> int:
    """Index of the first relation whose row depends on the previous ones."""
    for i in range(A.shape[0]):
        if np.linalg.matrix_rank(A[: i + 1]) <= i:
            return i
    return A.shape[0] - 1
