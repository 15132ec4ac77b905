"""Embedded Runge-Kutta pairs with error control on a modal basis: ``rk32`` (Bogacki and
Shampine 1989, orders 3 and 2) and ``rk54`` (Dormand and Prince 1980, orders 5 and 4).

The first-order form y = (q, q'), y' = (q', a(t, q, q')) with a = Bg w(t) - diag(omega^2) q -
Cg q' is advanced with the higher-order solution (local extrapolation); the difference with
the embedded lower-order one estimates the local error. Both pairs are FSAL: the last stage is
the derivative at the new point, so the acceleration of an accepted step comes for free.

Step control: the error ratio r of ``fem.integrators.modal_common`` (relative tolerance with an
absolute floor scaled by the solution, displacement and velocity components) accepts a step
when r <= 1; a rejected step is taken again with h max(0.2, 0.9 r^(-1/(q+1))), q the order of
the embedded solution (2 or 4); after an accepted step the next one is
h 0.9 r^(-0.7/(q+1)) r_prev^(0.4/(q+1)) within [0.2 h, 5 h] (proportional-integral control:
fewer rejections where stability rather than accuracy limits the step), not growing right
after a rejection, and within [min_step, max_step]. A step that would go below min_step
stops the analysis with an error. The step scales as tol^(1/(q+1)) and the global error of
the propagated solution, of order q + 1, as h^(q+1): the global error is proportional to the
tolerance, and the number of steps to tol^(-1/(q+1)).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.integrators.modal_common import (ACCEPTED, DONE, FULL, H, HMAX, HMIN, LAST_REJECTED,
                                          MINSTEP, NONFINITE, REJECTED, SV, SX, TAU, TOL,
                                          AdaptiveModalScheme, accel_at, all_finite,
                                          count_archived, emit_step, error_ratio, next_archived,
                                          plan_step, step_growth, track_scales)


def _tableau(name):
    """(A (s, s), b (s,), e = b - b* (s,), c (s,), q) of a pair."""
    if name == "rk32":
        A = np.array([[0, 0, 0, 0],
                      [1 / 2, 0, 0, 0],
                      [0, 3 / 4, 0, 0],
                      [2 / 9, 1 / 3, 4 / 9, 0]], float)
        b = np.array([2 / 9, 1 / 3, 4 / 9, 0])
        bstar = np.array([7 / 24, 1 / 4, 1 / 3, 1 / 8])
        c = np.array([0, 1 / 2, 3 / 4, 1])
        return A, b, b - bstar, c, 2
    A = np.zeros((7, 7))
    A[1, :1] = [1 / 5]
    A[2, :2] = [3 / 40, 9 / 40]
    A[3, :3] = [44 / 45, -56 / 15, 32 / 9]
    A[4, :4] = [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729]
    A[5, :5] = [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]
    A[6, :6] = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
    b = A[6].copy()
    bstar = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100,
                      1 / 40])
    c = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
    return A, b, b - bstar, c, 4


class RungeKutta(AdaptiveModalScheme):
    """``rk32`` or ``rk54`` (see the module docstring)."""

    def __init__(self, basis, name: str, **kw):
        self.A, self.b, self.e, self.c, self.estimate_order = _tableau(name)
        super().__init__(basis, name, **kw)

    def first_step(self) -> float:
        # the tolerance sets how many steps a period takes: tol^(1/(q+1)) of the period
        w = self.highest_frequency()
        if w <= 0:
            return self.max_step
        h = 0.5 * self.tolerance ** (1.0 / (self.estimate_order + 1)) / w
        return max(min(h, self.max_step), self.min_step)

    def run(self, dt, k, W, state, archive, out_t, out_u, out_v, out_a):
        return _rk_loop(self.A, self.b, self.e, self.c, 1.0 / (self.estimate_order + 1), dt, k,
                        W, self.Bt, self.kk, self.C, self.diag, state.u, state.v, state.a,
                        archive, self.every, self.ctl, out_t, out_u, out_v, out_a)


@numba.njit(cache=True, nogil=True)
def _rk_loop(A, b, e, c, exponent, dt, k, W, Bt, kk, C, diag, x, v, a, archive, every, ctl,
             out_t, out_u, out_v, out_a):
    m = x.size
    s = b.size
    nb = W.shape[1]
    KX = np.empty((s, m))
    KV = np.empty((s, m))
    w = np.empty(nb)
    slope = np.empty(nb)
    f = np.empty(m)
    xs = np.empty(m)
    vs = np.empty(m)
    x1 = np.empty(m)
    v1 = np.empty(m)
    ex = np.empty(m)
    ev = np.empty(m)
    xo = np.empty(m)
    vo = np.empty(m)
    tend = k * dt
    tau = ctl[TAU]
    h = ctl[H]
    tol = ctl[TOL]
    hmin = ctl[HMIN]
    hmax = ctl[HMAX]
    cap = out_u.shape[0]
    row = 0
    status = DONE
    j = next_archived(archive, int(math.floor(tau / dt)) + 1 if tau > 0 else 1, k)
    while tau < tend:
        hs, lands = plan_step(tau, h, tend, hmax)
        if row + count_archived(archive, j, k, tau + hs, dt) + 1 > cap:
            status = FULL
            break
        for i in range(m):
            KX[0, i] = v[i]
            KV[0, i] = a[i]
        for st in range(1, s):
            for i in range(m):
                sx = 0.0
                sv = 0.0
                for r in range(st):
                    sx += A[st, r] * KX[r, i]
                    sv += A[st, r] * KV[r, i]
                xs[i] = x[i] + hs * sx
                vs[i] = v[i] + hs * sv
            accel_at(tau + c[st] * hs, dt, k, W, Bt, kk, C, diag, xs, vs, w, slope, f, KV[st])
            for i in range(m):
                KX[st, i] = vs[i]
        for i in range(m):
            sx = 0.0
            sv = 0.0
            gx = 0.0
            gv = 0.0
            for r in range(s):
                sx += b[r] * KX[r, i]
                sv += b[r] * KV[r, i]
                gx += e[r] * KX[r, i]
                gv += e[r] * KV[r, i]
            x1[i] = x[i] + hs * sx
            v1[i] = v[i] + hs * sv
            ex[i] = hs * gx
            ev[i] = hs * gv
        err = error_ratio(ex, ev, x, x1, v, v1, ctl[SX], ctl[SV], tol)
        if not err == err:
            status = NONFINITE
            break
        if err > 1.0:
            ctl[REJECTED] += 1
            ctl[LAST_REJECTED] = 1.0
            h = hs * max(0.2, 0.9 * err ** -exponent)
            if h < hmin:
                status = MINSTEP
                break
            continue
        if not all_finite(x1):
            status = NONFINITE
            break
        ctl[ACCEPTED] += 1
        # FSAL: the last stage is the acceleration at the new point
        j, row = emit_step(tau, hs, dt, k, W, Bt, kk, C, diag, archive, j, x, v, a, x1, v1,
                           KV[s - 1], every, int(ctl[ACCEPTED]), out_t, out_u, out_v, out_a,
                           row, w, slope, f, xo, vo)
        tau = tend if lands else tau + hs
        for i in range(m):
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = KV[s - 1, i]
        track_scales(ctl, x, v)
        grow = step_growth(err, exponent, ctl)
        h = max(hs * grow, h if lands else 0.0)
    ctl[TAU] = tau
    ctl[H] = h
    return status, row
