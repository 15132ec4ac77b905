"""The links of a Newmark-family step by Newton's method on the whole system, with the tangent
matrix in the band of S: the way a step takes many links that always act (springs that
yield, dampers, hysteretic elements).

The links' Newton iteration of ``fem.integrators.newmark_links`` condenses the system onto the
links: it needs Z = S^-1 L^T (a solve per link row) and W = L Z, and solves a dense system of
the active link rows at every iteration, O(m^3) for m links. A link that is closed only now
and then (a shock) is rarely active, and that system stays small; a link that always acts (a
plastic spring, a damper) is always in it, and a thousand of them make a step cost seconds.

Here the unknown is the whole acceleration a_n+1, and the residual

    R(a) = S a - r - L^T g(L a),   g = (1 + alpha) phi(d, d') - alpha phi_n,
    d = L u~ + Lw w + beta dt^2 L a,   d' = L v~ + Lv w + gamma dt L a,

(``fem.integrators.newmark_family``) has the Jacobian J = S - L^T G L with G = dg/dy the
links' tangent, a block (3, 3) per link, G = (1 + alpha)(beta dt^2 dphi/dd + gamma dt
dphi/dd'). A link acts between the dofs of its nodes, so L^T G L has entries only where a
spring between those nodes would: with those entries in the band of S (``Factor(...,
pattern=...)``), J is factorized in S's band storage, O(n b^2), and Newton's update solves

    J a_k+1 = r + L^T (g_k - G y_k),   y_k = L a_k

(no product with S: the residual of a_k+1 is L^T times the links' linearization error
g_k+1 - g_k - G (y_k+1 - y_k), whose size is the test of convergence). The first update takes
the links' forces linearized at the state the step starts from: their forces, displacements
and tangent at the end of the last step, kept (``d0``, ``dd0``, ``f0``, and the derivatives in
one of the two buffers ``Jd2``, ``Jv2``, the laws' evaluations writing into the other) and
used when the step starts from that very state (otherwise the laws are evaluated at the last
step's accelerations first). A link whose force is linear gives that error at round-off, so a
step whose links all stay linear takes one solve and one evaluation of the laws; J is
factorized again only when a tangent changes by more than SAME_TANGENT (a link that yields,
unloads, or whose tangent is not constant).

The laws must give a symmetric tangent: the trait ``axial`` (a force along a fixed direction,
function of the elongation along it and of its rate) says so; a rigid contact's bond force is
a constraint and takes the condensed iteration. A tangent that softens so much that J is not
positive definite is left out of J for that iteration (the iteration goes on with the
stiffness of the others: a chord, which converges more slowly).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp

from fem.integrators.kernels import csr_product, largest_abs
from fem.integrators.newmark_links import (HOLD_AFTER, MAX_ITERATIONS, SMALLEST_NORMAL,
                                           TOLERANCE, hold_changing, laws_at)
from fem.linalg import NO, YES, banded_solve_into, banded_sum_factor


#: the relative change of a link's tangent below which J is not factorized again (a tangent
#: that moves with the iterate, as the path of a plastic link that turns back inside the step,
#: changes by about the size of the last update: a factor of J costs more than the iteration
#: it would save)
SAME_TANGENT = 1e-6


class Tangent(NamedTuple):
    """The tangent matrix's parts of a step size: ``on`` (1 when the step takes this
    iteration), S in the band storage of its factor (n, b + 1) and the permutation of that
    factor; the links' entries of L (``lp`` (m + 1,) pointers of each link's entries, ``lq``
    their row of the link in 0..2, ``li`` the position of their dof in the band's ordering,
    ``lv`` the value); the links' part of J in the band storage of S (``Db``: -L^T G L, zero
    off the links' entries) and the factor of J (``Fb``), ``Gf``
    (m, 3, 3) the links' tangent in that factor and ``Gn`` the one of the last evaluation,
    ``valid`` (3,): whether it holds one,
    whether the state at the end of the last step solved is kept, and which buffer of
    ``Jd2``, ``Jv2`` (2, m, 3, 3) holds its derivatives; its link displacements, rates and
    forces (3 m,); ``counts`` (3,): the steps solved, their iterations and the
    factorizations of J (for the benchmarks); ``live`` (m, 4) the number of each link's rows
    of L that are not zero and those rows (0..2): a link along an axis of the model has one,
    and the loops over its tangent's block take that one entry."""
    on: int
    Sb: np.ndarray
    perm: np.ndarray
    lp: np.ndarray
    lq: np.ndarray
    li: np.ndarray
    lv: np.ndarray
    Db: np.ndarray
    Fb: np.ndarray
    Gf: np.ndarray
    Gn: np.ndarray
    valid: np.ndarray
    d0: np.ndarray
    dd0: np.ndarray
    f0: np.ndarray
    Jd2: np.ndarray
    Jv2: np.ndarray
    counts: np.ndarray
    live: np.ndarray


def no_tangent() -> Tangent:
    """The parts of a step size that takes the condensed iteration."""
    return Tangent(0, np.zeros((0, 1)), np.zeros(0, np.int64), np.zeros(1, np.int64),
                   np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                   np.zeros((0, 1)), np.zeros((0, 1)), np.zeros((0, 3, 3)),
                   np.zeros((0, 3, 3)), np.zeros(3, np.int64), np.zeros(0), np.zeros(0),
                   np.zeros(0),
                   np.zeros((2, 0, 3, 3)), np.zeros((2, 0, 3, 3)), np.zeros(3, np.int64),
                   np.zeros((0, 4), np.int64))


def pattern(L) -> sp.csr_matrix:
    """The entries L^T G L can have (n, n): those the band of S must hold. (On a copy: taking
    the absolute value sorts a matrix's indices in place, and the compiled loops hold L's
    entries in their order.)"""
    A = abs(sp.csr_matrix(L, copy=True))
    return (A.T @ A).tocsr()


def tangent_parts(L, Sb: np.ndarray, perm: np.ndarray) -> Tangent:
    """The Tangent of a step size whose S is ``Sb`` in the band storage of the ordering
    ``perm``; None when an entry of L^T G L falls outside the band."""
    L = sp.csr_matrix(L, copy=True)
    n, width = Sb.shape[0], Sb.shape[1] - 1
    m = L.shape[0] // 3
    where = np.empty(n, np.int64)
    where[perm] = np.arange(n, dtype=np.int64)
    lp = np.zeros(m + 1, np.int64)
    lq, li, lv = [], [], []
    live = np.zeros((m, 4), np.int64)
    for b in range(m):
        positions = []
        for q in range(3):
            r = 3 * b + q
            if L.indptr[r + 1] > L.indptr[r]:
                live[b, 1 + live[b, 0]] = q
                live[b, 0] += 1
            for k in range(L.indptr[r], L.indptr[r + 1]):
                lq.append(q)
                li.append(int(where[L.indices[k]]))
                lv.append(float(L.data[k]))
                positions.append(li[-1])
        if positions and max(positions) - min(positions) > width:
            return None
        lp[b + 1] = len(lq)
    return Tangent(1, np.ascontiguousarray(Sb), np.ascontiguousarray(perm, np.int64), lp,
                   np.array(lq, np.int64), np.array(li, np.int64), np.array(lv, float),
                   np.zeros_like(Sb), np.zeros_like(Sb), np.zeros((m, 3, 3)),
                   np.zeros((m, 3, 3)), np.zeros(3, np.int64), np.zeros(3 * m), np.zeros(3 * m),
                   np.zeros(3 * m),
                   np.zeros((2, m, 3, 3)), np.zeros((2, m, 3, 3)), np.zeros(3, np.int64),
                   live)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _factor(tg, leave_out):
    """The links' part -L^T G L of J into tg.Db (G = tg.Gf), and the factor of J = S + Db
    into tg.Fb (summed as the factor goes: S is not copied); with ``leave_out``, without the
    links whose tangent softens (a positive entry on G's diagonal). False when J is not
    positive definite."""
    Db, Gf, lp, lq, li, lv = tg.Db, tg.Gf, tg.lp, tg.lq, tg.li, tg.lv
    # (Db is zero but at the links' entries: those of the last factor are cleared first)
    for b in range(Gf.shape[0]):
        for k1 in range(lp[b], lp[b + 1]):
            for k2 in range(lp[b], lp[b + 1]):
                i, j = li[k1], li[k2]
                if i >= j:
                    Db[j, i - j] = 0.0
    for b in range(Gf.shape[0]):
        if leave_out and (Gf[b, 0, 0] > 0.0 or Gf[b, 1, 1] > 0.0 or Gf[b, 2, 2] > 0.0):
            continue
        for k1 in range(lp[b], lp[b + 1]):
            for k2 in range(lp[b], lp[b + 1]):
                i, j = li[k1], li[k2]
                if i >= j:
                    Db[j, i - j] -= lv[k1] * Gf[b, lq[k1], lq[k2]] * lv[k2]
    return banded_sum_factor(tg.Sb, Db, Db, 1.0, 0.0, tg.Fb)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _refactor(tg, Jd, Jv, s, bd, gd):
    """G = s (bd Jd + gd Jv) (its symmetric part) into tg.Gf, and J factorized again, when G
    changed by more than SAME_TANGENT of an entry (otherwise the iteration goes on with the
    G of the factor: the residual stays L^T times the linearization error about that G, and
    the iteration converges as fast, to the same tolerance); False when J cannot be made
    positive definite."""
    Gf, Gn, live = tg.Gf, tg.Gn, tg.live
    changed = tg.valid[0] == 0
    for b in range(Gf.shape[0]):
        nl = live[b, 0]
        for i in range(nl):
            p = live[b, 1 + i]
            for j in range(nl):
                q = live[b, 1 + j]
                gb = 0.5 * s * (bd * (Jd[b, p, q] + Jd[b, q, p])
                                + gd * (Jv[b, p, q] + Jv[b, q, p]))
                Gn[b, p, q] = gb
                if abs(gb - Gf[b, p, q]) > SAME_TANGENT * (abs(gb) + abs(Gf[b, p, q])):
                    changed = True
    if not changed:
        return True
    # (the entries off the links' rows are zero in both)
    for b in range(Gf.shape[0]):
        for p in range(3):
            for q in range(3):
                Gf[b, p, q] = Gn[b, p, q]
    tg.valid[0] = 0
    tg.counts[2] += 1
    if _factor(tg, NO):
        tg.valid[0] = 1
        return True
    if not _factor(tg, YES):
        return False
    # the links left out of J are left out of the update too (and J is made again next time)
    for b in range(Gf.shape[0]):
        if Gf[b, 0, 0] > 0.0 or Gf[b, 1, 1] > 0.0 or Gf[b, 2, 2] > 0.0:
            for p in range(3):
                for q in range(3):
                    Gf[b, p, q] = 0.0
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _update(tg, kin, wk, g, y, a1):
    """Newton's update a1 = J^-1 (r + L^T (g - G y)), then y = L a1 (the iterate's g and y
    kept as the previous ones)."""
    Gf, gp, yp = tg.Gf, wk.R, wk.rhs_l
    rhs, rk = wk.rhs, wk.rk
    Ld, Li, Lp = kin.Ld, kin.Li, kin.Lp
    for j in range(rk.size):
        rk[j] = rhs[j]
    live = tg.live
    for b in range(Gf.shape[0]):
        nl = live[b, 0]
        for i in range(nl):
            p = live[b, 1 + i]
            r = 3 * b + p
            v = g[r]
            for j in range(nl):
                q = live[b, 1 + j]
                v -= Gf[b, p, q] * y[3 * b + q]
            if v != 0.0:
                for k in range(Lp[r], Lp[r + 1]):
                    rk[Li[k]] += Ld[k] * v
    banded_solve_into(tg.Fb, tg.perm, rk, a1, wk.xs)
    for r in range(y.size):
        gp[r] = g[r]
        yp[r] = y[r]
    csr_product(Ld, Li, Lp, a1, y)


@numba.njit(cache=True, nogil=True, _nrt=False)
def solve_tangent(dt, co, kin, P, tg, s0, s1, wk, flags):
    """The accelerations a_n+1 (into s1.a) and the link forces of the step by Newton's method
    on the whole system (module docstring), the predictors and the right-hand side r in wk;
    returns the number of iterations, or -1 when no consistent mode set is found."""
    cv_old, cv_new, phi_old, phi = s0.cv, s1.cv, s0.phi, s1.phi
    Dut, Dvt, y, d, dd, g = wk.Dut, wk.Dvt, wk.y, wk.d, wk.dd, wk.g
    gp, yp = wk.R, wk.rhs_l
    Gf, live = tg.Gf, tg.live
    a1 = s1.a
    rhs = wk.rhs
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    bd = beta * dt * dt
    gd = gamma * dt
    m3 = y.size
    m = m3 // 3
    n = a1.size
    scale0 = largest_abs(rhs)
    mask = wk.mask
    for c in range(P.shape[0]):
        mask[c] = flags[c]
    # the state the step starts from: the one the last step solved, kept with its tangent?
    kept = tg.valid[1] == 1
    if kept:
        for r in range(m3):
            if s0.db[r] != tg.d0[r] or s0.dd[r] != tg.dd0[r] or phi_old[r] != tg.f0[r]:
                kept = False
                break
    it = 0
    if kept:
        # the first update with the links linearized there (y = 0 about the predictors)
        Jd0, Jv0 = tg.Jd2[tg.valid[2]], tg.Jv2[tg.valid[2]]
        for r in range(m3):
            y[r] = 0.0
        for b in range(m):
            nl = live[b, 0]
            for i in range(nl):
                p = live[b, 1 + i]
                r = 3 * b + p
                f = phi_old[r]
                for j in range(nl):
                    q = live[b, 1 + j]
                    f += Jd0[b, p, q] * (Dut[3 * b + q] - tg.d0[3 * b + q]) + \
                        Jv0[b, p, q] * (Dvt[3 * b + q] - tg.dd0[3 * b + q])
                g[r] = s * f - alpha * phi_old[r]
        if not _refactor(tg, Jd0, Jv0, s, bd, gd):
            return -1
        _update(tg, kin, wk, g, y, a1)
        it = 1
    else:
        # from the last step's accelerations (the first update is exact for linear links)
        for j in range(n):
            a1[j] = s0.a[j]
        csr_product(kin.Ld, kin.Li, kin.Lp, a1, y)
    # the laws' derivatives go to the buffer that does not hold the kept state's
    w = 1 - tg.valid[2]
    Jd, Jv = tg.Jd2[w], tg.Jv2[w]
    held = False
    while it < MAX_ITERATIONS:
        laws_at(P, Dut, Dvt, y, bd, gd, d, dd, cv_old, cv_new, phi, Jd, Jv, mask, dt)
        if it >= HOLD_AFTER and not held:
            held = hold_changing(P, mask, cv_old, cv_new)
            if held:
                continue
        for r in range(m3):
            g[r] = s * phi[r] - alpha * phi_old[r]
        if it > 0:
            # the links' linearization error: the residual of the whole system is L^T of it
            rn = 0.0
            scale = scale0
            gross = 0.0
            for b in range(m):
                nl = live[b, 0]
                for i in range(nl):
                    p = live[b, 1 + i]
                    r = 3 * b + p
                    lin = gp[r]
                    f = 0.0
                    for j in range(nl):
                        q = live[b, 1 + j]
                        lin += Gf[b, p, q] * (y[3 * b + q] - yp[3 * b + q])
                        f += abs(Jd[b, p, q]) * abs(d[3 * b + q])
                    rn = max(rn, abs(g[r] - lin))
                    scale = max(scale, abs(g[r]))
                    gross = max(gross, f)
            scale = max(scale, s * gross)
            if rn <= TOLERANCE * scale or scale * TOLERANCE < SMALLEST_NORMAL:
                # kept: the next step starts from this state
                for r in range(m3):
                    tg.d0[r] = d[r]
                    tg.dd0[r] = dd[r]
                    tg.f0[r] = phi[r]
                tg.valid[1] = 1
                tg.valid[2] = w
                tg.counts[0] += 1
                tg.counts[1] += it
                return it
        if not _refactor(tg, Jd, Jv, s, bd, gd):
            return -1
        _update(tg, kin, wk, g, y, a1)
        it += 1
    return -1
