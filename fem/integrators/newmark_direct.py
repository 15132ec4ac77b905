"""Central differences with link forces that depend on the displacements alone: the step of
the Newmark family without the links' Newton iteration (the body ``DIRECT`` of
``fem.integrators.newmark_loop``).

With beta = 0 (and alpha = 0) the displacement at the end of a step is the predictor,
u_n+1 = u~, so the link displacements d = L u~ are known before the acceleration.
When no contact's force depends on the rate d' -- plane and circle penalty contacts without a
normal damper, with or without friction whose tangential spring has no damper (the return
mapping of ``fem.laws.friction`` is a function of d and of the anchor the previous step
left) -- the law gives the forces phi_n+1 at once, and

    a_n+1 = a0 + S^-1 L^T phi_n+1,    v_n+1 = v~ + gamma dt a_n+1,

with no iteration: the same step as the general one (``newmark_steps.step``, whose
Newton iteration converges there in one update), in the same arithmetic. The step reads L
and S^-1 L^T on the rows of the links' blocks only; on a modal basis these rows are dense
(every mode moves every link) and are held as dense arrays, so that the product runs over
contiguous memory (as axpy updates, in the order a row-by-row sum takes); otherwise (a
physical basis: a few entries per row) the CSR parts of L and of Z = S^-1 L^T serve.

Each step evaluates the law (``fem.links.law.evaluate``) at the new displacements with the
values of the previous step (modes, anchors, sliding directions); its forces do not depend
on the rates, so it is given zero rates, and the columns that do -- the penetration rate,
the slip rate and the friction event function of a sliding contact -- are computed from the
new velocity (``settle_rates``) where they are read: at a step that changes a contact's mode
(the event log records the penetration rate as the speed of the change), at an archived step,
at the end of the call and before the loop returns with a full event log (the state the
driver reads). The energy terms are those of the general step (``kernels.close_energy``: the
loads' and dampers' work by the trapezoidal rule, the links' slip work and the stored energy
lost at a release), which use no rate either.

Everything else (a damper on a contact, rigid contacts, links on dofs with an imposed motion,
events = "locate", Newmark and HHT) takes the general step; plane contacts without damper
nor friction the lean one (``fem.integrators.newmark_lean``).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from fem.integrators.kernels import (DIVERGED, DIVERGENCE_LIMIT, DONE, close_energy_inline,
                                     step_powers)
from fem.integrators.newmark_steps import advance_state, predict_solve
from fem.laws.columns import BLK, MODE
from fem.links.law import JACOBIAN, evaluate_inline as evaluate, refresh_rates

#: a row block denser than this is held dense (a modal basis)
DENSE_FILL = 0.25


def link_rows(P, L) -> np.ndarray:
    """The rows of d (3 m,) the contacts read whose L row is not zero (sorted)."""
    blocks = np.unique(P[:, BLK].astype(np.int64))
    rows = (3 * blocks[:, None] + np.arange(3)).ravel()
    L = sp.csr_matrix(L)
    return np.ascontiguousarray(rows[np.diff(L.indptr)[rows] > 0], np.int64)


def dense_rows(L, rows, Z) -> tuple[np.ndarray, np.ndarray]:
    """(L[rows]^T (n, r8), Z[:, rows]^T (r, n)) as dense arrays when the rows of L are
    dense enough (``DENSE_FILL``), else two empty arrays (the loop then reads the CSR
    parts). r8: len(rows) rounded up to a multiple of 8, the columns beyond it zero; both
    start on a 64-byte boundary, so that each row of L^T does too (a row across two cache
    lines, or stores to the sums that alias the loads, cost up to half the product here)."""
    L = sp.csr_matrix(L)
    n = L.shape[1]
    sub = L[rows]
    if rows.size == 0 or sub.nnz <= DENSE_FILL * rows.size * n:
        return np.zeros((0, 0)), np.zeros((0, 0))
    LT = aligned((n, padded(rows.size)))
    LT[:, :rows.size] = sub.toarray().T
    ZR = aligned((rows.size, n))
    ZR[:] = sp.csc_matrix(Z)[:, rows].toarray().T
    return LT, ZR


def padded(size: int) -> int:
    """``size`` rounded up to a multiple of 8 (the width of the products' sums)."""
    return -(-size // 8) * 8


def aligned(shape) -> np.ndarray:
    """A C-contiguous array of zeros whose first entry lies on a 64-byte boundary."""
    size = int(np.prod(shape))
    raw = np.zeros(size + 8)
    start = (-raw.ctypes.data % 64) // 8
    return raw[start:start + size].reshape(shape)


@numba.njit(cache=True, nogil=True, inline="always")
def direct_step(i, dt, co, ops, kin, P, sops, W, s0, s1, wk, parts, energy):
    """Step i from s0 into s1 (module docstring); returns (status, whether a contact changed
    mode). parts (``newmark_loop.DirectParts``): the rows of d the contacts read, L^T and
    S^-1 L^T on them (dense, or (0, 0): the CSR parts of kin and sops), the zero rates the
    law is given and scratch sums."""
    rows, LT, ZR, sums = parts.rows, parts.LT, parts.ZR, parts.sums
    nc = P.shape[0]
    n = wk.ut.size
    beta, gamma = co.beta, co.gamma
    predict_solve(dt, co, ops, sops, W, i, s0, wk, s1.a)
    ut, vt, a1, d1 = wk.ut, wk.vt, s1.a, s1.db
    _rows_product(kin, rows, LT, ut, sums)
    for r in range(rows.size):
        d1[rows[r]] = sums[r]
    evaluate(P, d1, parts.zero, s0.cv, s1.cv, s1.phi, wk.Jd, wk.Jv, wk.flags, JACOBIAN[0], dt)
    _scatter(sops, rows, ZR, s1.phi, a1)
    x1, v1 = s1.x, s1.v
    bad = 0
    for j in range(n):
        x1[j], v1[j] = advance_state(ut[j], vt[j], a1[j], dt, beta, gamma)
        bad += 0 if abs(x1[j]) <= DIVERGENCE_LIMIT else 1
    if energy:
        work, damped = step_powers(ops.B, ops.Cd, ops.Ci, ops.Cp, W[i - 1], W[i], s0.x, x1,
                                   s0.v, v1)
        close_energy_inline(work, damped, kin.Lw, kin.imposed, P, W[i - 1], W[i], s0.cv,
                            s1.cv, s0.phi, s1.phi, s0.db, s1.db, s0.e, s1.e, wk.quad)
    if bad:
        return DIVERGED, False
    changed = False
    for q in range(nc):
        changed = changed or s0.cv[q, MODE] != s1.cv[q, MODE]
    return DONE, changed


@numba.njit(cache=True, nogil=True, inline="always")
def settle_rates(P, kin, parts, s):
    """The link rates of state s and the law's columns that depend on them (``_rates``)."""
    _rates(P, kin, parts.rows, parts.LT, s.v, s.cv, s.dd, parts.sums)


@numba.njit(cache=True, nogil=True, inline="always")
def _rows_product(kin, rows, LT, u, sums):
    """sums = L[rows] u: dense, as axpy updates over the coordinates, four at a time (each
    sum in the order of its row, so the same numbers as a row-by-row sum); else from the CSR
    parts of L."""
    if LT.shape[0]:
        width = LT.shape[1]
        n = u.size
        for r in range(width):
            sums[r] = 0.0
        j = 0
        while j + 4 <= n:
            u0, u1, u2, u3 = u[j], u[j + 1], u[j + 2], u[j + 3]
            for r in range(width):
                s = sums[r] + LT[j, r] * u0
                s = s + LT[j + 1, r] * u1
                s = s + LT[j + 2, r] * u2
                sums[r] = s + LT[j + 3, r] * u3
            j += 4
        while j < n:
            uj = u[j]
            for r in range(width):
                sums[r] += LT[j, r] * uj
            j += 1
    else:
        Ld, Li, Lp = kin.Ld, kin.Li, kin.Lp
        for r in range(rows.size):
            q = rows[r]
            s = 0.0
            for e in range(Lp[q], Lp[q + 1]):
                s += Ld[e] * u[Li[e]]
            sums[r] = s


@numba.njit(cache=True, nogil=True, inline="always")
def _scatter(sops, rows, ZR, phi, a):
    """a += S^-1 L^T phi over the rows the contacts load (in the order of the rows)."""
    dense = ZR.shape[0] > 0
    Zd, Zi, Zp = sops.Zd, sops.Zi, sops.Zp
    for r in range(rows.size):
        g = phi[rows[r]]
        if g == 0.0:
            continue
        if dense:
            for j in range(a.size):
                a[j] += ZR[r, j] * g
        else:
            q = rows[r]
            for e in range(Zp[q], Zp[q + 1]):
                a[Zi[e]] += Zd[e] * g


@numba.njit(cache=True, nogil=True, inline="always")
def _rates(P, kin, rows, LT, v, cv, dd, sums):
    """The link rates dd = L v on the rows the contacts read, and the columns of the law
    that depend on them (forces do not, here: ``fem.links.law.refresh_rates``)."""
    _rows_product(kin, rows, LT, v, sums)
    for r in range(rows.size):
        dd[rows[r]] = sums[r]
    refresh_rates(P, dd, cv)
