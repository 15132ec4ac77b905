"""De Vogelaere's fourth-order method for second-order systems, with Fu's treatment of
velocity-dependent forces, on a modal basis (code_aster DEVOGE), with an adaptive step.

De Vogelaere (1955) integrates x'' = f(t, x) with half steps. From (x_n, v_n, f_n) and f at
t_n - h/2 (f_-1/2, carried from the previous step):

    x_n+1/2 = x_n + h/2 v_n + h^2/24 (4 f_n - f_-1/2)
    x_n+1   = x_n + h v_n   + h^2/6  (f_n + 2 f_n+1/2)
    v_n+1   = v_n + h/6 (f_n + 4 f_n+1/2 + f_n+1)

Local errors O(h^5) for x_n+1 and v_n+1: fourth order. With damping, f = f(t, x, v) also
needs the velocity at t_n + h/2 and t_n + 1; following Fu (1970) they are predicted by
integrating the quadratic extrapolation of f through the last three values (t_n - h, t_n - h/2,
t_n; then t_n - h/2, t_n, t_n + h/2):

    v*_n+1/2 = v_n + h (5/24 f_-1 - 2/3 f_-1/2 + 23/24 f_n)
    v*_n+1   = v_n + h (1/6 f_-1/2 - 1/3 f_n + 7/6 f_n+1/2)

(local errors O(h^4), which enter x_n+1 and v_n+1 multiplied by h^2 and h: the method stays
fourth order), f_n+1/2 and a first f_n+1 use them, and f_n+1 is evaluated again with the
corrected v_n+1. With a variable step, f_-1 and f_-1/2 come from the quadratic through the
three values of the previous step; at the start of a driver call (and of the analysis) they
are extrapolated with the exact slope f'_n = Bg w'(t_n) - diag(omega^2) v_n - Cg f_n.

Step control: e = v_n+1 - v*_n+1 (the error of the extrapolated quadrature, O(h^4)) is
measured as in ``fem.integrators.modal_common`` (velocity components) against ``tolerance``;
a step with a ratio r above 1 is taken again with h max(0.2, 0.9 r^-1/4); after an accepted
step the step follows the proportional-integral rule of ``fem.integrators.runge_kutta``
with the exponent 1/4, at most ``max_step``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.integrators.modal_common import (ACCEPTED, DONE, FULL, H, HISTORY, HMAX, HMIN,
                                          LAST_REJECTED, MINSTEP, NONFINITE, REJECTED, SV,
                                          TAU, TOL, AdaptiveModalScheme, accel, accel_at,
                                          all_finite, count_archived, emit_step, force,
                                          load_at, next_archived, plan_step, step_growth,
                                          track_scales)


class Devogelaere(AdaptiveModalScheme):
    """De Vogelaere-Fu, fourth order, adaptive (see the module docstring)."""

    estimate_order = 3

    def __init__(self, basis, **kw):
        super().__init__(basis, "devogelaere", **kw)
        m = basis.size
        self._hist_t = np.zeros(3)
        self._hist_f = np.zeros((3, m))

    def run(self, dt, k, W, state, archive, out_t, out_u, out_v, out_a):
        return _devogelaere_loop(dt, k, W, self.Bt, self.kk, self.C, self.diag, state.u,
                                 state.v, state.a, archive, self.every, self.ctl, self._hist_t,
                                 self._hist_f, out_t, out_u, out_v, out_a)


@numba.njit(cache=True, nogil=True)
def _quadratic(ts, fs, t, out):
    """out = the quadratic through (ts[i], fs[i]) (i = 0, 1, 2) evaluated at t."""
    l0 = (t - ts[1]) * (t - ts[2]) / ((ts[0] - ts[1]) * (ts[0] - ts[2]))
    l1 = (t - ts[0]) * (t - ts[2]) / ((ts[1] - ts[0]) * (ts[1] - ts[2]))
    l2 = (t - ts[0]) * (t - ts[1]) / ((ts[2] - ts[0]) * (ts[2] - ts[1]))
    for i in range(out.size):
        out[i] = l0 * fs[0, i] + l1 * fs[1, i] + l2 * fs[2, i]


@numba.njit(cache=True, nogil=True)
def _devogelaere_loop(dt, k, W, Bt, kk, C, diag, x, v, a, archive, every, ctl, hist_t, hist_f,
                      out_t, out_u, out_v, out_a):
    m = x.size
    nb = W.shape[1]
    w = np.empty(nb)
    slope = np.empty(nb)
    f = np.empty(m)
    fdot = np.empty(m)
    fm1 = np.empty(m)
    fmh = np.empty(m)
    xh = np.empty(m)
    vh = np.empty(m)
    ah = np.empty(m)
    x1 = np.empty(m)
    v1 = np.empty(m)
    a1 = np.empty(m)
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
        if ctl[HISTORY] > 0.0:
            _quadratic(hist_t, hist_f, tau - hs, fm1)
            _quadratic(hist_t, hist_f, tau - 0.5 * hs, fmh)
        else:
            # restart: the exact slope of f = a at tau (right-hand load slope)
            load_at(tau, dt, k, W, w, slope)
            force(Bt, slope, f)
            accel(f, kk, C, diag, v, a, fdot)
            for i in range(m):
                fm1[i] = a[i] - hs * fdot[i]
                fmh[i] = a[i] - 0.5 * hs * fdot[i]
        for i in range(m):
            xh[i] = x[i] + 0.5 * hs * v[i] + hs * hs / 24.0 * (4.0 * a[i] - fmh[i])
            vh[i] = v[i] + hs * (5.0 / 24.0 * fm1[i] - 2.0 / 3.0 * fmh[i] + 23.0 / 24.0 * a[i])
        accel_at(tau + 0.5 * hs, dt, k, W, Bt, kk, C, diag, xh, vh, w, slope, f, ah)
        for i in range(m):
            x1[i] = x[i] + hs * v[i] + hs * hs / 6.0 * (a[i] + 2.0 * ah[i])
            v1[i] = v[i] + hs * (fmh[i] / 6.0 - a[i] / 3.0 + 7.0 / 6.0 * ah[i])
        accel_at(tau + hs, dt, k, W, Bt, kk, C, diag, x1, v1, w, slope, f, a1)
        err = 0.0
        scale = ctl[SV]
        for i in range(m):
            corrected = v[i] + hs / 6.0 * (a[i] + 4.0 * ah[i] + a1[i])
            ev[i] = corrected - v1[i]
            v1[i] = corrected
            scale = max(scale, abs(corrected))
        for i in range(m):
            d = tol * max(abs(v[i]), abs(v1[i]), scale)
            r = abs(ev[i]) / d if d > 0.0 else (0.0 if ev[i] == 0.0 else math.inf)
            if not r <= err:
                err = r
        if not err == err:
            status = NONFINITE
            break
        if err > 1.0 and hs > hmin * (1.0 + 1e-12):
            ctl[REJECTED] += 1
            ctl[LAST_REJECTED] = 1.0
            h = hs * max(0.2, 0.9 * err ** -0.25)
            if h < hmin:
                status = MINSTEP
                break
            continue
        accel(f, kk, C, diag, x1, v1, a1)
        if not all_finite(x1):
            status = NONFINITE
            break
        ctl[ACCEPTED] += 1
        j, row = emit_step(tau, hs, dt, k, W, Bt, kk, C, diag, archive, j, x, v, a, x1, v1, a1,
                           every, int(ctl[ACCEPTED]), out_t, out_u, out_v, out_a, row, w, slope,
                           f, xo, vo)
        hist_t[0] = tau
        hist_t[1] = tau + 0.5 * hs
        hist_t[2] = tau + hs
        for i in range(m):
            hist_f[0, i] = a[i]
            hist_f[1, i] = ah[i]
            hist_f[2, i] = a1[i]
        ctl[HISTORY] = 1.0
        tau = tend if lands else tau + hs
        hist_t[2] = tau
        for i in range(m):
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = a1[i]
        track_scales(ctl, x, v)
        grow = step_growth(err, 0.25, ctl)
        h = max(hs * grow, h if lands else 0.0)
    ctl[TAU] = tau
    ctl[H] = h
    return status, row
