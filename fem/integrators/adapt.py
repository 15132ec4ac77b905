"""Explicit schemes whose step follows the apparent frequency of the response (the ADAPT
family of code_aster): ``euler`` (first order, ADAPT_ORDRE1) and ``adaptive2`` (second order,
ADAPT_ORDRE2), on a modal basis.

Steps, on q'' = f(t) - diag(omega^2) q - Cg q' = a(t, q, q'):

* euler (semi-implicit Euler): v+ = v + h a, x+ = x + h v+, a+ = a(t + h, x+, v+).
  First order; with ``step`` given it runs with that fixed step.
* adaptive2 (velocity Verlet): v_1/2 = v + h/2 a, x+ = x + h v_1/2, then the damping force
  uses the predicted velocity v_1/2 + h/2 a to get a+, the velocity v+ = v_1/2 + h/2 a+, and
  a+ is re-evaluated with v+. Second order, explicit, without any solve.

Step rule. After a step from (x, a) to (x+, a+) the apparent circular frequency of the
response is omega_app = sqrt(|a+ - a| / |x+ - x|) (Euclidean norms of the generalized vectors,
that is mass norms of the physical ones). The step wanted at that frequency is

* adaptive2: h* = sqrt(24 tol) / omega_app: the relative period error of the Verlet step,
  (omega h)^2 / 24, stays below ``tolerance``;
* euler: h* = 2 tol / omega_app: the velocity lag of the first-order step, omega h / 2 in
  relative terms, stays below ``tolerance``;

bounded by ``max_step`` (default (end - start) / 100), by the stability bound
1.8 / max(omega_max, rho(Cg) / 2) of the explicit step (omega_max the highest frequency of the
basis, rho the spectral radius, a 10 % margin under the undamped limit 2 / omega_max) and from
below by ``min_step`` (default 1e-12 (end - start)), which is then used even if h* is smaller.
A step longer than 1.5 h* is rejected and taken again with h*; otherwise the next step is
h*, growing by at most 20 % per step. Accepted and rejected steps are counted.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.integrators.base import State
from fem.integrators.modal_common import (ACCEPTED, DONE, FULL, H, HMAX, HMIN, HSTAB,
                                          NONFINITE, REJECTED, TAU, TOL, AdaptiveModalScheme,
                                          ModalScheme, accel, accel_at, all_finite,
                                          count_archived, emit_step, force, next_archived,
                                          plan_step, track_scales)


class ApparentFrequencyScheme(AdaptiveModalScheme):
    """``euler`` (order 1) or ``adaptive2`` (order 2) with the step rule of the module."""

    def __init__(self, basis, order: int, **kw):
        self.order = int(order)
        super().__init__(basis, "adaptive2" if order == 2 else "euler", **kw)
        rho = float(np.max(np.abs(np.linalg.eigvalsh(self.C)), initial=0.0))
        fastest = max(self.highest_frequency(), 0.5 * rho)
        self.ctl[HSTAB] = 1.8 / fastest if fastest > 0 else math.inf
        self.ctl[H] = min(self.max_step, self.ctl[HSTAB])

    def run(self, dt, k, W, state, archive, out_t, out_u, out_v, out_a):
        return _adapt_loop(self.order, dt, k, W, self.Bt, self.kk, self.C, self.diag,
                           state.u, state.v, state.a, archive, self.every, self.ctl,
                           out_t, out_u, out_v, out_a)


class FixedEuler(ModalScheme):
    """Semi-implicit Euler with the driver's fixed step (first order, stable for
    omega_max dt < 2 without damping)."""

    def __init__(self, basis):
        super().__init__(basis, "euler")

    def stability_limit(self):
        w = self.highest_frequency()
        return 2.0 / w if w > 0 else None

    def advance(self, dt, W, state: State, archive):
        k = W.shape[0] - 1
        count = int(np.count_nonzero(archive[1:]))
        m = state.u.size
        out = [np.empty((count, m)) for _ in range(3)]
        ok = _euler_fixed(k, dt, np.ascontiguousarray(W, np.float64), self.Bt, self.kk, self.C,
                          self.diag, state.u, state.v, state.a, archive, *out)
        self.accepted += k
        return tuple(out), ok


@numba.njit(cache=True, nogil=True)
def _euler_fixed(k, dt, W, Bt, kk, C, diag, x, v, a, archive, out_u, out_v, out_a):
    m = x.size
    f = np.empty(m)
    row = 0
    for n in range(1, k + 1):
        for i in range(m):
            v[i] += dt * a[i]
            x[i] += dt * v[i]
        force(Bt, W[n], f)
        accel(f, kk, C, diag, x, v, a)
        if archive[n]:
            for i in range(m):
                out_u[row, i] = x[i]
                out_v[row, i] = v[i]
                out_a[row, i] = a[i]
            row += 1
    return all_finite(x)


@numba.njit(cache=True, nogil=True)
def _adapt_loop(order, dt, k, W, Bt, kk, C, diag, x, v, a, archive, every, ctl,
                out_t, out_u, out_v, out_a):
    m = x.size
    nb = W.shape[1]
    w = np.empty(nb)
    slope = np.empty(nb)
    f = np.empty(m)
    x1 = np.empty(m)
    v1 = np.empty(m)
    a1 = np.empty(m)
    vh = np.empty(m)
    xo = np.empty(m)
    vo = np.empty(m)
    tend = k * dt
    tau = ctl[TAU]
    h = ctl[H]
    tol = ctl[TOL]
    hmin = ctl[HMIN]
    hmax = min(ctl[HMAX], ctl[HSTAB])
    factor = math.sqrt(24.0 * tol) if order == 2 else 2.0 * tol
    cap = out_u.shape[0]
    row = 0
    status = DONE
    j = next_archived(archive, int(math.floor(tau / dt)) + 1 if tau > 0 else 1, k)
    while tau < tend:
        hs, lands = plan_step(tau, max(h, hmin), tend, hmax)
        if row + count_archived(archive, j, k, tau + hs, dt) + 1 > cap:
            status = FULL
            break
        if order == 2:
            for i in range(m):
                vh[i] = v[i] + 0.5 * hs * a[i]
                x1[i] = x[i] + hs * vh[i]
                v1[i] = vh[i] + 0.5 * hs * a[i]          # predicted velocity for the damping
            accel_at(tau + hs, dt, k, W, Bt, kk, C, diag, x1, v1, w, slope, f, a1)
            for i in range(m):
                v1[i] = vh[i] + 0.5 * hs * a1[i]
            accel(f, kk, C, diag, x1, v1, a1)
        else:
            for i in range(m):
                v1[i] = v[i] + hs * a[i]
                x1[i] = x[i] + hs * v1[i]
            accel_at(tau + hs, dt, k, W, Bt, kk, C, diag, x1, v1, w, slope, f, a1)
        dx = 0.0
        da = 0.0
        for i in range(m):
            dx += (x1[i] - x[i]) ** 2
            da += (a1[i] - a[i]) ** 2
        if dx > 0.0 and da > 0.0:
            wanted = factor / math.sqrt(math.sqrt(da) / math.sqrt(dx))
        else:
            wanted = hmax
        wanted = max(min(wanted, hmax), hmin)
        if hs > 1.5 * wanted and not at_min_step(hs, hmin):
            ctl[REJECTED] += 1
            h = wanted
            continue
        if not all_finite(x1):
            status = NONFINITE
            break
        ctl[ACCEPTED] += 1
        j, row = emit_step(tau, hs, dt, k, W, Bt, kk, C, diag, archive, j, x, v, a, x1, v1, a1,
                           every, int(ctl[ACCEPTED]), out_t, out_u, out_v, out_a, row, w, slope,
                           f, xo, vo)
        tau = tend if lands else tau + hs
        for i in range(m):
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = a1[i]
        track_scales(ctl, x, v)
        h = min(wanted, 1.2 * max(h, hs))
    ctl[TAU] = tau
    ctl[H] = h
    return status, row


@numba.njit(cache=True, nogil=True)
def at_min_step(hs, hmin):
    """True when a step cannot be shortened any more (it is already at min_step)."""
    return hs <= hmin * (1.0 + 1e-12)
