"""The steps of the explicit schemes of ``fem.integrators.explicit``: the acceleration
with the links (``accel``), one step of each method (``step``) with the integrals of the
energy terms by the method's own quadrature, and the arrays they work on.

Steps:

* rk4, rk32, rk54: the Butcher tableau of the method on y = (x, x'); the embedded pairs are
  FSAL and advance with the higher-order solution, the difference with the lower-order one
  estimating the error (``adaptive.error_ratio``, proportional-integral step control);
* euler: v+ = v + h a, x+ = x + h v+; adaptive2: v_1/2 = v + h/2 a, x+ = x + h v_1/2, the
  damping force with the predicted velocity v_1/2 + h/2 a, then v+ = v_1/2 + h/2 a+. Without
  ``step`` the step follows the apparent frequency of the response, omega_app =
  sqrt(|a+ - a| / |x+ - x|): h* = sqrt(24 tol) / omega_app (adaptive2, the relative period
  error of Verlet (omega h)^2 / 24) or 2 tol / omega_app (euler), bounded by max_step and by
  1.8 / max(omega_max, rho(C) / 2); a step longer than 1.5 h* is taken again with h*;
* devogelaere: x_1/2 = x + h/2 v + h^2/24 (4 f - f_-1/2), x+ = x + h v + h^2/6 (f + 2 f_1/2),
  v+ = v + h/6 (f + 4 f_1/2 + f+), the velocities the damping needs at t + h/2 and t + h
  predicted by Fu's extrapolation of f through the last three values (with a variable step, f_-1
  and f_-1/2 from the quadratic through the previous step, or from the exact slope of f after a
  restart); the error of that prediction, v+ - v*_1, controls the step.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from fem.integrators.kernels import (csr_transpose_add, dense_add, linear_force,
                                     link_kinematics, link_rates)
from fem.integrators.adaptive import (ADAPTIVE, H0, HISTORY, METHOD, RATE_FREE, SV, SX, TOL,
                                      error_ratio, load_at)
from fem.linalg import NO, YES, banded_solve_into, small_solve
from fem.laws.columns import BLK, BONDED, DIR, MODE
from fem.links.law import JACOBIAN, evaluate, internal, refresh_rates, set_bond

# methods
RK, EULER, VERLET, DEVOGE = 0, 1, 2, 3


def tableau(name):
    """(A (s, s), b (s,), e = b - b* (s,), c (s,), order of the error estimate)."""
    if name == "rk4":
        A = np.zeros((4, 4))
        A[1, 0] = A[2, 1] = 0.5
        A[3, 2] = 1.0
        return A, np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]), np.zeros(4), \
            np.array([0.0, 0.5, 0.5, 1.0]), 3
    if name == "rk32":
        A = np.array([[0, 0, 0, 0], [1 / 2, 0, 0, 0], [0, 3 / 4, 0, 0],
                      [2 / 9, 1 / 3, 4 / 9, 0]], float)
        b = np.array([2 / 9, 1 / 3, 4 / 9, 0])
        bstar = np.array([7 / 24, 1 / 4, 1 / 3, 1 / 8])
        return A, b, b - bstar, np.array([0, 1 / 2, 3 / 4, 1]), 2
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
    return A, b, b - bstar, np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1]), 4


# --------------------------------------------------------------------------- acceleration
@numba.njit(cache=True, nogil=True, _nrt=False)
def accel(ops, kin, mass, P, rig, x, v, w, cv_old, cv_new, phi, d, dd, flags, work, out, h):
    """out = the acceleration at (x, v) under the loads w and the links (module docstring),
    h (s) after the committed link values cv_old; writes the contact values cv_new, phi, d,
    d'."""
    linear_force(ops, x, v, w, work)
    if P.shape[0]:
        link_kinematics(kin, x, v, w, d, dd)
        evaluate(P, d, dd, cv_old, cv_new, phi, rig.J, rig.J, flags, JACOBIAN[0], h)
        csr_transpose_add(kin.Ld, kin.Li, kin.Lp, phi, 1.0, work)
    _mass_solve(mass, work, out)
    if rig.index.size:
        _bonds(kin, mass, P, rig, w, cv_new, phi, out)


#: ``accel`` compiled into its caller: a call passes every array of the operators by value,
#: which costs more than the acceleration of a small system
accel_inline = numba.njit(cache=True, nogil=True, _nrt=False, inline="always")(accel.py_func)


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def _mass_solve(mass, rhs, out):
    if mass.diagonal:
        for j in range(rhs.size):
            out[j] = rhs[j] * mass.inv[j]
    else:
        banded_solve_into(mass.band, mass.perm, rhs, out, mass.work)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _bonds(kin, mass, P, rig, w, cv, phi, a):
    """The bond forces of the bonded rigid contacts, and their effect on a (in place)."""
    nr = rig.index.size
    k = 0
    for r in range(nr):
        c = rig.index[r]
        if cv[c, MODE] == BONDED:
            rig.active[k] = r
            k += 1
    if k == 0:
        return
    la = rig.la
    for q in range(la.size):
        la[q] = 0.0
    # the rows' accelerations: n . (L a + La w)
    for q in range(la.size):
        s = 0.0
        for kk in range(kin.Lp[q], kin.Lp[q + 1]):
            s += kin.Ld[kk] * a[kin.Li[kk]]
        la[q] = s
    if kin.imposed:
        dense_add(kin.La, w, 1.0, la)
    Ws = rig.Ws
    rhs = rig.rhs
    for i in range(k):
        ri = rig.active[i]
        c = rig.index[ri]
        o = 3 * int(P[c, BLK])
        rhs[i] = (P[c, DIR] * la[o] + P[c, DIR + 1] * la[o + 1] + P[c, DIR + 2] * la[o + 2])
        for j in range(k):
            Ws[i, j] = rig.W[ri, rig.active[j]]
    if not small_solve(Ws, rhs, np.int64(k)):   # an int64 from the first typing on
        for i in range(k):
            rhs[i] = math.nan
    for i in range(k):
        ri = rig.active[i]
        c = rig.index[ri]
        lam = rhs[i]
        for j in range(a.size):
            a[j] -= rig.Z[j, ri] * lam
        set_bond(P, c, cv, lam, YES)
        o = 3 * int(P[c, BLK])
        for q in range(3):
            phi[o + q] -= lam * P[c, DIR + q]


# --------------------------------------------------------------------------- one step
@numba.njit(cache=True, nogil=True, _nrt=False)
def step(ctl, tab, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, phi, dd, x1, v1,
         a1, cv1, phi1, d1, dd1, flags, ws, hist_t, hist_f):
    """One step of size h from (x, v, a) at local time tau (link forces phi and rates dd
    there) into (x1, v1, a1); returns the error ratio (embedded methods), the wanted step
    (apparent-frequency methods) or 0."""
    method = int(ctl[METHOD])
    n = x.size
    w, slope = ws.w, ws.slope
    ws.quad[2] = 0.0
    if method == EULER or method == VERLET:
        return apparent_step(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, x1, v1,
                             a1, cv1, phi1, d1, dd1, flags, ws)
    if method == DEVOGE:
        return _devogelaere(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, phi,
                            dd, x1, v1, a1, cv1, phi1, d1, dd1, flags, ws, hist_t, hist_f)
    A, b, e, c = tab.A, tab.b, tab.e, tab.c
    s = b.size
    KX, KV = ws.KX, ws.KV
    for i in range(n):
        KX[0, i] = v[i]
        KV[0, i] = a[i]
    # the work of the loads, dampers and links by the method's own quadrature (its order)
    load_at(tau, dt, k, W, w, slope)
    pw, pd = _powers(ops, w, v)
    pl, ps = _link_powers(kin, P, phi, dd, w)
    ws.quad[0] = h * b[0] * pw
    ws.quad[1] = h * b[0] * pd
    ws.quad[4] = h * b[0] * pl
    ws.quad[5] = h * b[0] * ps
    ws.quad[2] = 1.0
    _rates_into(P, ws, cv, b[0], YES)
    for st in range(1, s):
        for i in range(n):
            sx = 0.0
            sv = 0.0
            for r in range(st):
                sx += A[st, r] * KX[r, i]
                sv += A[st, r] * KV[r, i]
            ws.xs[i] = x[i] + h * sx
            ws.vs[i] = v[i] + h * sv
        load_at(tau + c[st] * h, dt, k, W, w, slope)
        accel(ops, kin, mass, P, rig, ws.xs, ws.vs, w, cv, cv1, phi1, d1, dd1, flags, ws.f,
              KV[st], c[st] * h)
        for i in range(n):
            KX[st, i] = ws.vs[i]
        if b[st] != 0.0:
            pw, pd = _powers(ops, w, ws.vs)
            pl, ps = _link_powers(kin, P, phi1, dd1, w)
            ws.quad[0] += h * b[st] * pw
            ws.quad[1] += h * b[st] * pd
            ws.quad[4] += h * b[st] * pl
            ws.quad[5] += h * b[st] * ps
            _rates_into(P, ws, cv1, b[st], NO)
    for i in range(n):
        sx = 0.0
        sv = 0.0
        gx = 0.0
        gv = 0.0
        for r in range(s):
            sx += b[r] * KX[r, i]
            sv += b[r] * KV[r, i]
            gx += e[r] * KX[r, i]
            gv += e[r] * KV[r, i]
        x1[i] = x[i] + h * sx
        v1[i] = v[i] + h * sv
        ws.ex[i] = h * gx
        ws.ev[i] = h * gv
    # the acceleration and the links at the new state (the last stage of an FSAL pair)
    load_at(tau + h, dt, k, W, w, slope)
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1, h)
    if ctl[ADAPTIVE] > 0.0:
        return max(error_ratio(ws.ex, ws.ev, x, x1, v, v1, ctl[SX], ctl[SV], ctl[TOL]),
                   internal_error(P, ws, cv, cv1, h, ctl[TOL]))
    return 0.0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _rates_into(P, ws, cv, weight, first):
    """Add weight times the rates of the evolving internal variables at cv to the step's
    quadrature (``first``: start it)."""
    for i in range(ws.evolving.size):
        rate = internal(P, ws.evolving[i], cv)[1]
        ws.zq[i] = weight * rate if first else ws.zq[i] + weight * rate


@numba.njit(cache=True, nogil=True, _nrt=False)
def internal_error(P, ws, cv0, cv1, h, tol):
    """The error ratio of the evolving internal variables over a step h: the law integrates
    them along the step's path (``fem.links.law.evaluate``); the method's own quadrature of
    their rates at its stages, z0 + h sum b_i z'_i, differs from that by about the error of
    both, measured against tol times the largest scale of the link's motion seen so far."""
    err = 0.0
    for i in range(ws.evolving.size):
        c = ws.evolving[i]
        z0 = internal(P, c, cv0)[0]
        z1, _, scale = internal(P, c, cv1)
        if scale > ws.zs[i]:
            ws.zs[i] = scale
        diff = z0 + h * ws.zq[i] - z1
        bound = tol * ws.zs[i]
        r = abs(diff) / bound if bound > 0.0 else (0.0 if diff == 0.0 else math.inf)
        if not r <= err:
            err = r
    return err


@numba.njit(cache=True, nogil=True, _nrt=False)
def apparent_step(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, x1, v1, a1, cv1,
                  phi1, d1, dd1, flags, ws):
    """One step of euler or adaptive2 (``step``); returns the wanted step (adaptive) from the
    apparent frequency of the step."""
    method = int(ctl[METHOD])
    n = x.size
    w, slope = ws.w, ws.slope
    ws.quad[2] = 0.0
    for i in range(n):
        if method == EULER:
            v1[i] = v[i] + h * a[i]
            x1[i] = x[i] + h * v1[i]
        else:
            ws.vh[i] = v[i] + 0.5 * h * a[i]
            x1[i] = x[i] + h * ws.vh[i]
            v1[i] = ws.vh[i] + 0.5 * h * a[i]
    load_at(tau + h, dt, k, W, w, slope)
    accel_inline(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1, h)
    if method == VERLET:
        for i in range(n):
            v1[i] = ws.vh[i] + 0.5 * h * a1[i]
        if ctl[RATE_FREE] > 0.0:
            # the same acceleration: only the links' rates change
            if P.shape[0]:
                link_rates(kin, v1, w, dd1)
                refresh_rates(P, dd1, cv1)
        else:
            accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f,
                  a1, h)
    dx = 0.0
    da = 0.0
    for i in range(n):
        dx += (x1[i] - x[i]) ** 2
        da += (a1[i] - a[i]) ** 2
    return apparent_rule(ctl, method, dx, da)


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def apparent_rule(ctl, method, dx, da):
    """The step euler (order 1) or adaptive2 (VERLET) wants after a step whose increments
    of displacement and acceleration have squared norms dx and da: the tolerance's step at
    the apparent frequency sqrt(da / dx)."""
    factor = math.sqrt(24.0 * ctl[TOL]) if method == VERLET else 2.0 * ctl[TOL]
    if dx > 0.0 and da > 0.0:
        # factor / sqrt(omega), omega = sqrt(da / dx) the apparent frequency
        return factor * math.sqrt(math.sqrt(dx / da))
    if dx > 0.0:
        return math.inf
    # no displacement over the step (a start from rest under a load that starts from
    # zero): no apparent frequency, the highest one of the system instead
    return factor * ctl[H0]


#: ``apparent_step`` compiled into the step loop (one call per step, with many arrays)
apparent_step_inline = numba.njit(cache=True, nogil=True, _nrt=False,
                                  inline="always")(apparent_step.py_func)


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def _powers(ops, w, v):
    """(power of the loads (B w) . v, power of the structural dampers v . C v)."""
    B = ops.B
    pw = 0.0
    pd = 0.0
    for j in range(v.size):
        f = 0.0
        for c in range(w.size):
            f += B[j, c] * w[c]
        cv = 0.0
        for k in range(ops.Cp[j], ops.Cp[j + 1]):
            cv += ops.Cd[k] * v[ops.Ci[k]]
        pw += f * v[j]
        pd += v[j] * cv
    return pw, pd


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def _link_powers(kin, P, phi, dd, w):
    """(phi . d', phi . (Lv w)): the power of the links' forces on their relative rates, and
    its part along the imposed motion of their dofs."""
    if P.shape[0] == 0:
        return 0.0, 0.0
    pl = 0.0
    for r in range(phi.size):
        pl += phi[r] * dd[r]
    ps = 0.0
    if kin.imposed:
        Lv = kin.Lv
        for r in range(phi.size):
            s = 0.0
            for c in range(w.size):
                s += Lv[r, c] * w[c]
            ps += phi[r] * s
    return pl, ps


@numba.njit(cache=True, nogil=True, _nrt=False)
def _quadratic(ts, fs, t, out):
    l0 = (t - ts[1]) * (t - ts[2]) / ((ts[0] - ts[1]) * (ts[0] - ts[2]))
    l1 = (t - ts[0]) * (t - ts[2]) / ((ts[1] - ts[0]) * (ts[1] - ts[2]))
    l2 = (t - ts[0]) * (t - ts[1]) / ((ts[2] - ts[0]) * (ts[2] - ts[1]))
    for i in range(out.size):
        out[i] = l0 * fs[0, i] + l1 * fs[1, i] + l2 * fs[2, i]


@numba.njit(cache=True, nogil=True, _nrt=False)
def _linear_accel(ops, mass, x, v, w, work, out):
    """M^-1 (B w - C v - K x)."""
    linear_force(ops, x, v, w, work)
    _mass_solve(mass, work, out)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _restart_slope(ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, cv1, phi1, d1, dd1,
                   flags, ws):
    """ws.ev = the slope of the acceleration at tau along the motion."""
    n = x.size
    w, slope = ws.w, ws.slope
    load_at(tau, dt, k, W, w, slope)
    # exact: M^-1 (B w' - C a - K v)
    _linear_accel(ops, mass, v, a, slope, ws.f, ws.ev)
    if P.shape[0] == 0:
        return
    # the links' part by a difference: (full - linear) at tau + eps minus at tau
    eps = 1e-6 * h
    for i in range(n):
        ws.xs[i] = x[i] + eps * v[i]
        ws.vs[i] = v[i] + eps * a[i]
    for sgn in range(2):
        t = tau + eps if sgn == 0 else tau
        xx = ws.xs if sgn == 0 else x
        vv = ws.vs if sgn == 0 else v
        load_at(t, dt, k, W, w, slope)
        accel(ops, kin, mass, P, rig, xx, vv, w, cv, cv1, phi1, d1, dd1, flags, ws.f, ws.xo,
              eps if sgn == 0 else 0.0)
        _linear_accel(ops, mass, xx, vv, w, ws.f, ws.vo)
        scale = 1.0 / eps if sgn == 0 else -1.0 / eps
        for i in range(n):
            ws.ev[i] += scale * (ws.xo[i] - ws.vo[i])


@numba.njit(cache=True, nogil=True, _nrt=False)
def _devogelaere(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, phi, dd, x1, v1,
                 a1, cv1, phi1, d1, dd1, flags, ws, hist_t, hist_f):
    n = x.size
    w, slope = ws.w, ws.slope
    fm1, fmh, xh, vh, ah = ws.KX[0], ws.KX[1], ws.KX[2], ws.KX[3], ws.KV[0]
    if ctl[HISTORY] > 0.0:
        _quadratic(hist_t, hist_f, tau - h, fm1)
        _quadratic(hist_t, hist_f, tau - 0.5 * h, fmh)
    else:
        # restart: the slope of f = a at tau, exact for the linear part (the load's slope),
        # by a difference along the motion for the links' part
        _restart_slope(ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, cv1, phi1, d1,
                       dd1, flags, ws)
        for i in range(n):
            fm1[i] = a[i] - h * ws.ev[i]
            fmh[i] = a[i] - 0.5 * h * ws.ev[i]
    for i in range(n):
        xh[i] = x[i] + 0.5 * h * v[i] + h * h / 24.0 * (4.0 * a[i] - fmh[i])
        vh[i] = v[i] + h * (5.0 / 24.0 * fm1[i] - 2.0 / 3.0 * fmh[i] + 23.0 / 24.0 * a[i])
    load_at(tau + 0.5 * h, dt, k, W, w, slope)
    accel(ops, kin, mass, P, rig, xh, vh, w, cv, cv1, phi1, d1, dd1, flags, ws.f, ah, 0.5 * h)
    # Simpson's rule on the rates of the evolving internal variables (their error control)
    _rates_into(P, ws, cv, 1.0 / 6.0, YES)
    _rates_into(P, ws, cv1, 4.0 / 6.0, NO)
    plh, psh = _link_powers(kin, P, phi1, dd1, w)
    for i in range(n):
        x1[i] = x[i] + h * v[i] + h * h / 6.0 * (a[i] + 2.0 * ah[i])
        v1[i] = v[i] + h * (fmh[i] / 6.0 - a[i] / 3.0 + 7.0 / 6.0 * ah[i])
    load_at(tau + h, dt, k, W, w, slope)
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1, h)
    # Simpson's rule on the powers at t, t + h/2 and t + h (fourth order, as the method)
    load_at(tau, dt, k, W, ws.w0, slope)
    p0w, p0d = _powers(ops, ws.w0, v)
    pl0, ps0 = _link_powers(kin, P, phi, dd, ws.w0)
    load_at(tau + 0.5 * h, dt, k, W, ws.w0, slope)
    phw, phd = _powers(ops, ws.w0, vh)
    err = 0.0
    scale = ctl[SV]
    for i in range(n):
        corrected = v[i] + h / 6.0 * (a[i] + 4.0 * ah[i] + a1[i])
        ws.ev[i] = corrected - v1[i]
        v1[i] = corrected
        scale = max(scale, abs(corrected))
    for i in range(n):
        dd_ = ctl[TOL] * max(abs(v[i]), abs(v1[i]), scale)
        r = abs(ws.ev[i]) / dd_ if dd_ > 0.0 else (0.0 if ws.ev[i] == 0.0 else math.inf)
        if not r <= err:
            err = r
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1, h)
    p1w, p1d = _powers(ops, w, v1)
    pl1, ps1 = _link_powers(kin, P, phi1, dd1, w)
    ws.quad[0] = h / 6.0 * (p0w + 4.0 * phw + p1w)
    ws.quad[1] = h / 6.0 * (p0d + 4.0 * phd + p1d)
    ws.quad[4] = h / 6.0 * (pl0 + 4.0 * plh + pl1)
    ws.quad[5] = h / 6.0 * (ps0 + 4.0 * psh + ps1)
    ws.quad[2] = 1.0
    # keep f_1/2 for the history of the step (set when the step is taken)
    for i in range(n):
        ws.vh[i] = ah[i]
    _rates_into(P, ws, cv1, 1.0 / 6.0, NO)
    return max(err, internal_error(P, ws, cv, cv1, h, ctl[TOL]))


class Tableau(NamedTuple):
    A: np.ndarray
    b: np.ndarray
    e: np.ndarray
    c: np.ndarray


class Mass(NamedTuple):
    """M^-1: diagonal (inv) or a banded Cholesky factor (band, perm, work)."""
    diagonal: bool
    inv: np.ndarray
    band: np.ndarray
    perm: np.ndarray
    work: np.ndarray


class Rigid(NamedTuple):
    """Rigid contacts: their indices, W = R M^-1 R^T, Z = M^-1 R^T, and scratch arrays."""
    index: np.ndarray
    W: np.ndarray
    Z: np.ndarray
    active: np.ndarray
    Ws: np.ndarray
    rhs: np.ndarray
    la: np.ndarray
    J: np.ndarray


class Work(NamedTuple):
    w: np.ndarray
    slope: np.ndarray
    w0: np.ndarray
    f: np.ndarray
    vh: np.ndarray
    xs: np.ndarray
    vs: np.ndarray
    ex: np.ndarray
    ev: np.ndarray
    KX: np.ndarray
    KV: np.ndarray
    xo: np.ndarray
    vo: np.ndarray
    ao: np.ndarray
    cvo: np.ndarray
    phio: np.ndarray
    do: np.ndarray
    ddo: np.ndarray
    eo: np.ndarray
    flags: np.ndarray
    quad: np.ndarray
    wp: np.ndarray
    #: the contacts whose internal variable evolves (``fem.links.law.internal``), the method's
    #: quadrature of its rate over the step, and the largest scale seen of each
    evolving: np.ndarray
    zq: np.ndarray
    zs: np.ndarray
