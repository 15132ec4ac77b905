"""The compiled steps of the Newmark family (``fem.integrators.newmark_family`` states the
equations): the predictors and the solve for each form of S (diagonal, dense, banded), the
links and the new state of a step: the general step (``step``, from one buffer into the
other, so that a step can be computed, found to contain an event, and not taken). The loop
that runs it is ``fem.integrators.newmark_loop``, with the steps that have nothing to undo
and link forces from the predictor (``fem.integrators.newmark_lean`` and
``fem.integrators.newmark_direct``)."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from fem.integrators.kernels import (DIVERGED, DIVERGENCE_LIMIT, DONE, NOT_SETTLED,
                                     close_energy_inline, csr_product, step_powers,
                                     step_powers_dia)
from fem.integrators.newmark_links import solve_links
from fem.integrators.newmark_tangent import Tangent, solve_tangent
from fem.linalg import banded_solve_into, csr_matvec_add


class StepOperators(NamedTuple):
    """Per step size: the factor of S (band, perm), or on a modal basis S^-1 applied mode by
    mode (diag_inv (n,), kind 1) or folded into the dense products (kind 2): SK, SC, SB the
    transposes of S^-1 K, S^-1 C, S^-1 B; kind 0 is the banded factor. The links: ``act``
    the link rows that can carry a force over the step (whole links; every row with
    events = "step", the rows of the links in a closed or bonded mode with "locate"),
    ``slot`` (m,) the position of each link among them (-1: not there), Z = S^-1 L^T on those
    columns (CSC parts) and Wl = L Z = W[:, act] (3 m, na); ``tg`` the parts of the whole
    system's Newton iteration (``fem.integrators.newmark_tangent``; ``tg.on`` 0: the
    condensed one)."""
    band: np.ndarray
    perm: np.ndarray
    Zd: np.ndarray
    Zi: np.ndarray
    Zp: np.ndarray
    Wl: np.ndarray
    act: np.ndarray
    slot: np.ndarray
    kind: int
    diag_inv: np.ndarray
    SK: np.ndarray
    SC: np.ndarray
    SB: np.ndarray
    tg: Tangent


class Coefficients(NamedTuple):
    beta: float
    gamma: float
    alpha: float


class Work(NamedTuple):
    """Scratch arrays of a step: predictors, right-hand sides and a solve's scratch (n,), the
    link unknowns and residuals (3 m,), the Jacobian of the link system, and the flags of
    imposed modes."""
    ut: np.ndarray
    vt: np.ndarray
    rhs: np.ndarray
    xs: np.ndarray
    rk: np.ndarray
    Dut: np.ndarray
    Dvt: np.ndarray
    Da0: np.ndarray
    y: np.ndarray
    d: np.ndarray
    dd: np.ndarray
    R: np.ndarray
    g: np.ndarray
    Law: np.ndarray
    Jd: np.ndarray
    Jv: np.ndarray
    Jac: np.ndarray
    z: np.ndarray
    bonded: np.ndarray
    rhs_l: np.ndarray
    res_l: np.ndarray
    quad: np.ndarray
    flags: np.ndarray
    mask: np.ndarray


# --------------------------------------------------------------------------- formulas
@numba.njit(cache=True, nogil=True, inline="always")
def predict(u, v, a, dt, beta, gamma):
    """The Newmark predictors (u~, v~) of one coordinate."""
    return u + dt * v + dt * dt * (0.5 - beta) * a, v + dt * (1.0 - gamma) * a


@numba.njit(cache=True, nogil=True, inline="always")
def advance_state(ut, vt, a, dt, beta, gamma):
    """u_n+1, v_n+1 of one coordinate from the predictors and a_n+1."""
    return ut + beta * dt * dt * a, vt + gamma * dt * a


@numba.njit(cache=True, nogil=True, inline="always")
def _predict(dt, co, ops, W, i, s0, wk):
    """Predictors and the right-hand side r of S a_n+1 = r (loads W[i - 1] -> W[i])."""
    x, v, a = s0.x, s0.v, s0.a
    ut, vt, rhs = wk.ut, wk.vt, wk.rhs
    B = ops.B
    n = x.size
    nb = B.shape[1]
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    for j in range(n):
        ut[j], vt[j] = predict(x[j], v[j], a[j], dt, beta, gamma)
        f = 0.0
        for c in range(nb):
            f += B[j, c] * (s * W[i, c] - alpha * W[i - 1, c])
        rhs[j] = f
    if ops.offsets.size and alpha == 0.0:
        dia_products(ops.offsets, ops.Kdia, ops.Cdia, ut, vt, -s, rhs)
        return
    csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, ut, -s, rhs)
    csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, vt, -s, rhs)
    if alpha != 0.0:
        csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, x, alpha, rhs)
        csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, v, alpha, rhs)


@numba.njit(cache=True, nogil=True)
def dia_products(offsets, Kdia, Cdia, u, v, scale, out):
    """out += scale (K u + C v), K and C by diagonals (``dynamics.Operators``): a loop over
    the contiguous entries of each diagonal, which the compiler vectorizes (on slices that
    start where the diagonal does: an index i + o that might be negative would take the
    wrap-around test of a negative index at every entry, and the loop would not vectorize).
    A call of its own, not compiled into the step loops (their compile time grows with what
    they inline)."""
    n = out.size
    for q in range(offsets.size):
        o = offsets[q]
        lo = max(0, -o)
        hi = min(n, n - o)
        kd = Kdia[q, lo:hi]
        cd = Cdia[q, lo:hi]
        uo = u[lo + o:hi + o]
        vo = v[lo + o:hi + o]
        oo = out[lo:hi]
        for i in range(hi - lo):
            oo[i] += scale * (kd[i] * uo[i] + cd[i] * vo[i])


@numba.njit(cache=True, nogil=True, inline="always")
def loads_diagonal(co, B, W, i, f):
    """f = B ((1 + alpha) w_i - alpha w_i-1), the first column assigned rather than added to
    zeros (a zeroing loop becomes a call to memset, costly in a step of a few coordinates)."""
    alpha = co.alpha
    s = 1.0 + alpha
    n = f.size
    nb = B.shape[1]
    if nb == 0:
        for j in range(n):
            f[j] = 0.0
    else:
        wc = s * W[i, 0] - alpha * W[i - 1, 0]
        for j in range(n):
            f[j] = B[j, 0] * wc
    for c in range(1, nb):
        wc = s * W[i, c] - alpha * W[i - 1, c]
        for j in range(n):
            f[j] += B[j, c] * wc


@numba.njit(cache=True, nogil=True, inline="always")
def _predict_diagonal(dt, co, ops, W, i, x, v, a, ut, vt, f, inv, a1):
    """``_predict`` and the solve for diagonal K, C and S, in simple loops over the
    coordinates (which the compiler vectorizes): the predictors to ut, vt, the loads of the
    step to f, a0 = S^-1 r to a1 (which may be a itself)."""
    kd, cd = ops.Kdiag, ops.Cdiag
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    n = x.size
    loads_diagonal(co, ops.B, W, i, f)
    for j in range(n):
        u1, v1, aj = diagonal_solve(j, dt, beta, gamma, alpha, x, v, a, f, kd, cd, inv)
        ut[j] = u1
        vt[j] = v1
        a1[j] = aj


@numba.njit(cache=True, nogil=True, inline="always")
def diagonal_solve(j, dt, beta, gamma, alpha, x, v, a, f, kd, cd, inv):
    """Coordinate j of an uncoupled step: its predictors and a0 = S^-1 r (loads f)."""
    s = 1.0 + alpha
    u1, v1 = predict(x[j], v[j], a[j], dt, beta, gamma)
    r = f[j] - s * (kd[j] * u1 + cd[j] * v1) + alpha * (kd[j] * x[j] + cd[j] * v[j])
    return u1, v1, inv[j] * r


@numba.njit(cache=True, nogil=True, inline="always")
def _predict_dense(dt, co, W, i, s0, wk, sops, a1):
    """``_predict`` and the solve with S^-1 K, S^-1 C and S^-1 B formed (transposed, so that
    the inner loops run over contiguous memory)."""
    x, v, a = s0.x, s0.v, s0.a
    ut, vt = wk.ut, wk.vt
    SK, SC, SB = sops.SK, sops.SC, sops.SB
    n = x.size
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    for j in range(n):
        ut[j], vt[j] = predict(x[j], v[j], a[j], dt, beta, gamma)
    # column by column, the first one assigned (a zeroing loop becomes a call to memset)
    for q in range(n):
        uq = s * ut[q] - alpha * x[q]
        vq = s * vt[q] - alpha * v[q]
        if q == 0:
            for j in range(n):
                a1[j] = -(SK[0, j] * uq + SC[0, j] * vq)
        else:
            for j in range(n):
                a1[j] -= SK[q, j] * uq + SC[q, j] * vq
    for c in range(SB.shape[0]):
        wc = s * W[i, c] - alpha * W[i - 1, c]
        for j in range(n):
            a1[j] += SB[c, j] * wc


# --------------------------------------------------------------------------- one step
@numba.njit(cache=True, nogil=True, _nrt=False)
def finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links):
    """Links, state update and energies of a step whose predictors are in wk and whose
    a0 = S^-1 r is in s1.a: the new state goes to s1. DONE or NOT_SETTLED."""
    ut, vt = wk.ut, wk.vt
    a1 = s1.a
    n = ut.size
    alpha = co.alpha
    s = 1.0 + alpha
    if has_links:
        Wl, act = sops.Wl, sops.act
        m3 = Wl.shape[0]
        Dut, Dvt, Law = wk.Dut, wk.Dvt, wk.Law
        tangent = sops.tg.on == 1
        csr_product(kin.Ld, kin.Li, kin.Lp, ut, Dut)
        csr_product(kin.Ld, kin.Li, kin.Lp, vt, Dvt)
        if not tangent:
            csr_product(kin.Ld, kin.Li, kin.Lp, a1, wk.Da0)
        for r in range(m3):
            Law[r] = 0.0
        if kin.imposed:
            Lw, Lv, La = kin.Lw, kin.Lv, kin.La
            for r in range(m3):
                sw = 0.0
                sv = 0.0
                sa = 0.0
                for c in range(W.shape[1]):
                    sw += Lw[r, c] * W[i, c]
                    sv += Lv[r, c] * W[i, c]
                    sa += La[r, c] * W[i, c]
                Dut[r] += sw
                Dvt[r] += sv
                Law[r] = sa
        if tangent:
            # a_n+1 and the link forces by Newton's method on the whole system
            its = solve_tangent(dt, co, kin, P, sops.tg, s0, s1, wk, flags)
        else:
            its = solve_links(dt, co, Wl, act, sops.slot, P, s0, s1, wk, flags)
        if its < 0:
            return NOT_SETTLED
        d, dd, db1, dd1 = wk.d, wk.dd, s1.db, s1.dd
        for r in range(m3):
            db1[r] = d[r]
            dd1[r] = dd[r]
        if not tangent:
            phi0, phi1 = s0.phi, s1.phi
            Zd, Zi, Zp = sops.Zd, sops.Zi, sops.Zp
            for kc in range(act.size):
                col = act[kc]
                gc = s * phi1[col] - alpha * phi0[col]
                if gc != 0.0:
                    for k in range(Zp[kc], Zp[kc + 1]):
                        a1[Zi[k]] += Zd[k] * gc
    # the new state and the divergence test, then its energy terms (a damper between two
    # dofs needs the new velocity of both)
    x0, v0, x1, v1 = s0.x, s0.v, s1.x, s1.v
    B, Cd, Ci, Cp = ops.B, ops.Cd, ops.Ci, ops.Cp
    w0, w1 = W[i - 1], W[i]
    beta, gamma = co.beta, co.gamma
    bad = 0
    for j in range(n):
        x1[j], v1[j] = advance_state(ut[j], vt[j], a1[j], dt, beta, gamma)
        bad += 0 if abs(x1[j]) <= DIVERGENCE_LIMIT else 1
    if wk.quad[3] > 0.0:
        if ops.offsets.size:
            work, damped = step_powers_dia(B, ops.offsets, ops.Cdia, w0, w1, x0, x1, v0, v1)
        else:
            work, damped = step_powers(B, Cd, Ci, Cp, w0, w1, x0, x1, v0, v1)
        close_energy_inline(work, damped, kin.Lw, kin.imposed, P, w0, w1, s0.cv, s1.cv, s0.phi,
                            s1.phi, s0.db, s1.db, s0.e, s1.e, wk.quad)
    return DIVERGED if bad else DONE


@numba.njit(cache=True, nogil=True, inline="always")
def predict_solve(dt, co, ops, sops, W, i, s0, wk, a1):
    """The predictors (wk.ut, wk.vt) and a0 = S^-1 r into a1 (which may be s0.a), for each
    form of S."""
    if sops.kind == 1 and ops.Kdiag.size == a1.size:
        # uncoupled equations: predictor, right-hand side and solve mode by mode
        _predict_diagonal(dt, co, ops, W, i, s0.x, s0.v, s0.a, wk.ut, wk.vt, wk.rhs,
                          sops.diag_inv, a1)
    elif sops.kind == 2:
        # a small dense system: a = S^-1 B w - S^-1 K u~ - S^-1 C v~ with the products formed
        _predict_dense(dt, co, W, i, s0, wk, sops, a1)
    else:
        _predict(dt, co, ops, W, i, s0, wk)
        if sops.kind == 1:
            inv = sops.diag_inv
            for j in range(a1.size):
                a1[j] = inv[j] * wk.rhs[j]
        else:
            banded_solve_into(sops.band, sops.perm, wk.rhs, a1, wk.xs)


@numba.njit(cache=True, nogil=True, _nrt=False)
def step(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links):
    """One step (banded factor) from s0 to s1."""
    if sops.tg.on == 1 and has_links:
        # the right-hand side alone: the whole system's Newton iteration solves with J
        _predict(dt, co, ops, W, i, s0, wk)
    else:
        predict_solve(dt, co, ops, sops, W, i, s0, wk, s1.a)
    return finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)


@numba.njit(cache=True, nogil=True, _nrt=False)
def predict_step(dt, co, ops, W, i, s0, wk):
    """``_predict`` on its own (the steps of a sparse factor, driven from Python)."""
    _predict(dt, co, ops, W, i, s0, wk)
