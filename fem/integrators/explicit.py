"""The explicit schemes, on either basis, with every link law: the classical fourth-order
Runge-Kutta method at a fixed step (``rk4``), the embedded pairs with error control ``rk32``
(Bogacki and Shampine 1989) and ``rk54`` (Dormand and Prince 1980), semi-implicit Euler
(``euler``, fixed step, or ADAPT_ORDRE1), velocity Verlet with the apparent-frequency step
(``adaptive2``, ADAPT_ORDRE2) and De Vogelaere-Fu (``devogelaere``, DEVOGE).

All of them advance (x, x') with the acceleration of ``accel``:

    a = M^-1 (B w(t) - C x' - K x + L^T phi(d, d')),

the link forces phi from the laws at d = L x + Lw w, d' = L x' + Lv w; a bonded rigid contact
adds its bond force lambda, solved so that its relative acceleration n . (L a + La w) vanishes
(lambda = (R M^-1 R^T)^-1 (R a_free + n . La w), R the rows n^T L of the bonded contacts): every
one of these schemes keeps linear invariants, so the bodies stay together exactly. The load
between the driver's knots is the cubic through the four nearest knots (``adaptive.load_at``:
exact for piecewise-linear tables, whose breakpoints are knots).

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

With links in the ``locate`` mode, a step whose end shows a crossing of a law's event function
stops the loop (status EVENT) with the step pending; the modes are held over every step, so that
the right-hand side is smooth inside a step and the error control keeps its meaning.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.errors import NotAvailableError
from fem.integrators.base import Scheme
from fem.integrators.kernels import (DIVERGED, DONE, EVENT, FULL, MINSTEP, archive_row,
                                     crossed, csr_transpose_add, dense_add, diverged,
                                     link_kinematics, record_changes, step_energy)
from fem.integrators.adaptive import (ACCEPTED, ADAPTIVE, CONTROL, ERR_PREV, EXPONENT, H, H0,
                                      HISTORY, HMAX, HMIN, HSTAB, LAST_REJECTED, METHOD,
                                      REJECTED, SV, SX, TAU, TOL, error_ratio, hermite, load_at,
                                      plan_step, step_growth)
from fem.linalg import Factor, banded_solve_into, csr_matvec_add, small_solve
from fem.links.columns import BLK, BONDED, CMP, DIR, FN, G0, KIND, LAM, MODE, RIGID
from fem.links.law import evaluate

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
def accel(ops, kin, mass, P, rig, x, v, w, cv_old, cv_new, phi, d, dd, flags, work, out):
    """out = the acceleration at (x, v) under the loads w and the links (module docstring);
    writes the contact values cv_new (from cv_old: anchors, modes), phi, d, d'."""
    n = x.size
    nb = w.size
    B = ops.B
    for j in range(n):
        f = 0.0
        for c in range(nb):
            f += B[j, c] * w[c]
        work[j] = f
    csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, x, -1.0, work)
    csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, v, -1.0, work)
    if P.shape[0]:
        link_kinematics(kin, x, v, w, d, dd)
        evaluate(P, d, dd, cv_old, cv_new, phi, rig.J, rig.J, flags, False)
        csr_transpose_add(kin.Ld, kin.Li, kin.Lp, phi, 1.0, work)
    _mass_solve(mass, work, out)
    if rig.index.size:
        _bonds(kin, mass, P, rig, w, cv_new, phi, out)


@numba.njit(cache=True, nogil=True, _nrt=False)
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
    if not small_solve(Ws, rhs, k):
        for i in range(k):
            rhs[i] = math.nan
    for i in range(k):
        ri = rig.active[i]
        c = rig.index[ri]
        lam = rhs[i]
        for j in range(a.size):
            a[j] -= rig.Z[j, ri] * lam
        cv[c, LAM] = lam
        cv[c, FN] = lam
        cv[c, G0] = lam
        if lam > 0.0:
            cv[c, CMP] = 1.0
        o = 3 * int(P[c, BLK])
        for q in range(3):
            phi[o + q] -= lam * P[c, DIR + q]


# --------------------------------------------------------------------------- one step
@numba.njit(cache=True, nogil=True, _nrt=False)
def step(ctl, tab, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, x1, v1, a1, cv1,
         phi1, d1, dd1, flags, ws, hist_t, hist_f):
    """One step of size h from (x, v, a) at local time tau into (x1, v1, a1); returns the
    error ratio (embedded methods), the wanted step (apparent-frequency methods) or 0."""
    method = int(ctl[METHOD])
    n = x.size
    w, slope = ws.w, ws.slope
    ws.quad[2] = 0.0
    if method == EULER or method == VERLET:
        for i in range(n):
            if method == EULER:
                v1[i] = v[i] + h * a[i]
                x1[i] = x[i] + h * v1[i]
            else:
                ws.vh[i] = v[i] + 0.5 * h * a[i]
                x1[i] = x[i] + h * ws.vh[i]
                v1[i] = ws.vh[i] + 0.5 * h * a[i]
        load_at(tau + h, dt, k, W, w, slope)
        accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1)
        if method == VERLET:
            for i in range(n):
                v1[i] = ws.vh[i] + 0.5 * h * a1[i]
            accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1)
        dx = 0.0
        da = 0.0
        for i in range(n):
            dx += (x1[i] - x[i]) ** 2
            da += (a1[i] - a[i]) ** 2
        factor = math.sqrt(24.0 * ctl[TOL]) if method == VERLET else 2.0 * ctl[TOL]
        if dx > 0.0 and da > 0.0:
            return factor / math.sqrt(math.sqrt(da) / math.sqrt(dx))
        if dx > 0.0:
            return math.inf
        # no displacement over the step (a start from rest under a load that starts from
        # zero): no apparent frequency, the highest one of the system instead
        return factor * ctl[H0]
    if method == DEVOGE:
        return _devogelaere(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, x1, v1,
                            a1, cv1, phi1, d1, dd1, flags, ws, hist_t, hist_f)
    A, b, e, c = tab.A, tab.b, tab.e, tab.c
    s = b.size
    KX, KV = ws.KX, ws.KV
    for i in range(n):
        KX[0, i] = v[i]
        KV[0, i] = a[i]
    # the work of the loads and dampers by the method's own quadrature (its order)
    load_at(tau, dt, k, W, w, slope)
    pw, pd = _powers(ops, w, v)
    ws.quad[0] = h * b[0] * pw
    ws.quad[1] = h * b[0] * pd
    ws.quad[2] = 1.0
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
              KV[st])
        for i in range(n):
            KX[st, i] = ws.vs[i]
        if b[st] != 0.0:
            pw, pd = _powers(ops, w, ws.vs)
            ws.quad[0] += h * b[st] * pw
            ws.quad[1] += h * b[st] * pd
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
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1)
    if ctl[ADAPTIVE] > 0.0:
        return error_ratio(ws.ex, ws.ev, x, x1, v, v1, ctl[SX], ctl[SV], ctl[TOL])
    return 0.0


@numba.njit(cache=True, nogil=True, _nrt=False)
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
    B = ops.B
    for j in range(x.size):
        f = 0.0
        for c in range(w.size):
            f += B[j, c] * w[c]
        work[j] = f
    csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, x, -1.0, work)
    csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, v, -1.0, work)
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
        accel(ops, kin, mass, P, rig, xx, vv, w, cv, cv1, phi1, d1, dd1, flags, ws.f, ws.xo)
        _linear_accel(ops, mass, xx, vv, w, ws.f, ws.vo)
        scale = 1.0 / eps if sgn == 0 else -1.0 / eps
        for i in range(n):
            ws.ev[i] += scale * (ws.xo[i] - ws.vo[i])


@numba.njit(cache=True, nogil=True, _nrt=False)
def _devogelaere(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, x, v, a, cv, x1, v1, a1, cv1,
                 phi1, d1, dd1, flags, ws, hist_t, hist_f):
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
    accel(ops, kin, mass, P, rig, xh, vh, w, cv, cv1, phi1, d1, dd1, flags, ws.f, ah)
    for i in range(n):
        x1[i] = x[i] + h * v[i] + h * h / 6.0 * (a[i] + 2.0 * ah[i])
        v1[i] = v[i] + h * (fmh[i] / 6.0 - a[i] / 3.0 + 7.0 / 6.0 * ah[i])
    load_at(tau + h, dt, k, W, w, slope)
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1)
    # Simpson's rule on the powers at t, t + h/2 and t + h (fourth order, as the method)
    load_at(tau, dt, k, W, ws.w0, slope)
    p0w, p0d = _powers(ops, ws.w0, v)
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
    accel(ops, kin, mass, P, rig, x1, v1, w, cv, cv1, phi1, d1, dd1, flags, ws.f, a1)
    p1w, p1d = _powers(ops, w, v1)
    ws.quad[0] = h / 6.0 * (p0w + 4.0 * phw + p1w)
    ws.quad[1] = h / 6.0 * (p0d + 4.0 * phd + p1d)
    ws.quad[2] = 1.0
    # keep f_1/2 for the history of the step (set when the step is taken)
    for i in range(n):
        ws.vh[i] = ah[i]
    return err


# --------------------------------------------------------------------------- the loop
@numba.njit(cache=True, nogil=True, _nrt=False)
def loop(ctl, tab, ops, kin, mass, P, rig, dt, k, times, W, archive, every, buf, cur, ws,
         hist_t, hist_f, out, row, locate, log):
    """Steps from local time ctl[TAU] to the end of the chunk (k knots of spacing dt);
    returns (status, rows). On EVENT the pending step [TAU, TAU + H] is in buffer 1 - cur."""
    n = ops.B.shape[0]
    nxt = 1 - cur
    x, v, a, cv = buf.X[cur], buf.V[cur], buf.A[cur], buf.CV[cur]
    phi, db, dd, E = buf.PHI[cur], buf.DB[cur], buf.DD[cur], buf.E[cur]
    x1, v1, a1, cv1 = buf.X[nxt], buf.V[nxt], buf.A[nxt], buf.CV[nxt]
    phi1, db1, dd1, E1 = buf.PHI[nxt], buf.DB[nxt], buf.DD[nxt], buf.E[nxt]
    flags = ws.flags
    adaptive = ctl[ADAPTIVE] > 0.0
    tend = k * dt
    tau = ctl[TAU]
    h = ctl[H]
    hmax = min(ctl[HMAX], ctl[HSTAB])
    hmin = ctl[HMIN]
    cap = out.T.size
    method = int(ctl[METHOD])
    j = int(math.floor(tau / dt * (1.0 + 1e-14))) + 1
    while j <= k and not archive[j]:
        j += 1
    while tau < tend * (1.0 - 1e-15):
        if adaptive:
            hs, lands = plan_step(tau, max(h, hmin), tend, hmax)
        else:
            # the knots are the steps
            i_next = int(math.floor(tau / dt * (1.0 + 1e-14) + 1e-9)) + 1
            hs = i_next * dt - tau
            lands = i_next >= k
        if row + 2 + (int(hs / dt) + 1 if j <= k else 0) > cap:
            ctl[TAU] = tau
            ctl[H] = h
            return FULL, row
        for c in range(P.shape[0]):
            flags[c] = cv[c, MODE] if locate else -1.0
        r = step(ctl, tab, ops, kin, mass, P, rig, tau, hs, dt, k, W, x, v, a, cv, x1, v1, a1,
                 cv1, phi1, db1, dd1, flags, ws, hist_t, hist_f)
        if not r == r:
            ctl[TAU] = tau
            return DIVERGED, row
        if adaptive:
            if method == EULER or method == VERLET:
                wanted = max(min(r, hmax), hmin)
                if hs > 1.5 * wanted and hs > hmin * (1.0 + 1e-12):
                    ctl[REJECTED] += 1
                    h = wanted
                    continue
            elif r > 1.0 and hs > hmin * (1.0 + 1e-12):
                ctl[REJECTED] += 1
                ctl[LAST_REJECTED] = 1.0
                h = hs * max(0.2, 0.9 * r ** -ctl[EXPONENT])
                if h < hmin:
                    ctl[TAU] = tau
                    return MINSTEP, row
                continue
        if diverged(x1):
            ctl[TAU] = tau
            ctl[H] = hs
            return DIVERGED, row
        load_at(tau, dt, k, W, ws.w0, ws.slope)
        load_at(tau + hs, dt, k, W, ws.w, ws.slope)
        step_energy(ops, kin, P, x, x1, v, v1, ws.w0, ws.w, cv, cv1, phi, phi1, db, db1, E, E1,
                    ws.quad)
        if P.shape[0]:
            if locate:
                if crossed(P, cv, cv1, db, dd, db1, dd1, hs):
                    ctl[TAU] = tau
                    ctl[H] = hs
                    return EVENT, row
            else:
                record_changes(P, cv, cv1, times[0] + tau + hs, log)
        # take the step: archived knots it covers by dense output, then the new state
        end = tend if lands else tau + hs
        while j <= k and j * dt <= end * (1.0 + 1e-14) + 1e-300:
            if archive[j]:
                row = _emit(ctl, ops, kin, mass, P, rig, tau, hs, dt, k, W, times, j, x, v, a,
                            x1, v1, a1, cv, E, E1, flags, ws, out, row)
            j += 1
        ctl[ACCEPTED] += 1
        last_knot = j - 1 >= 1 and archive[j - 1] and (j - 1) * dt >= end * (1.0 - 1e-14)
        if every > 0 and int(ctl[ACCEPTED]) % every == 0 and not last_knot:
            archive_row(out, row, times[0] + end, ops, x1, v1, a1, cv1, E1, 0.0)
            row += 1
        if method == DEVOGE:
            hist_t[0] = tau
            hist_t[1] = tau + 0.5 * hs
            hist_t[2] = end
            for i in range(n):
                hist_f[0, i] = a[i]
                hist_f[1, i] = ws.vh[i]
                hist_f[2, i] = a1[i]
            ctl[HISTORY] = 1.0
        tau = end
        for i in range(n):
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = a1[i]
        for c in range(cv.shape[0]):
            for q in range(cv.shape[1]):
                cv[c, q] = cv1[c, q]
        for q in range(phi.size):
            phi[q] = phi1[q]
            db[q] = db1[q]
            dd[q] = dd1[q]
        for q in range(E.size):
            E[q] = E1[q]
        _track(ctl, x, v)
        if adaptive:
            if method == EULER or method == VERLET:
                h = min(max(r, hmin), hmax, 1.2 * max(h, hs))
            else:
                grow = step_growth(r, ctl[EXPONENT], ctl)
                h = max(hs * grow, h if lands else 0.0)
    ctl[TAU] = tau
    ctl[H] = h
    return DONE, row


@numba.njit(cache=True, nogil=True, _nrt=False)
def _track(ctl, x, v):
    for i in range(x.size):
        if abs(x[i]) > ctl[SX]:
            ctl[SX] = abs(x[i])
        if abs(v[i]) > ctl[SV]:
            ctl[SV] = abs(v[i])


@numba.njit(cache=True, nogil=True, _nrt=False)
def _emit(ctl, ops, kin, mass, P, rig, tau, h, dt, k, W, times, j, x, v, a, x1, v1, a1, cv,
          E0, E1, flags, ws, out, row):
    """Archive knot j inside the step [tau, tau + h] by dense output: the quintic Hermite of
    the state, the acceleration and the links from the equation of motion there, the
    cumulative energy terms interpolated linearly."""
    theta = min(max((j * dt - tau) / h, 0.0), 1.0)
    hermite(theta, h, x, v, a, x1, v1, a1, ws.xo, ws.vo)
    for c in range(W.shape[1]):
        ws.w[c] = W[j, c]
    cvo = ws.cvo
    accel(ops, kin, mass, P, rig, ws.xo, ws.vo, ws.w, cv, cvo, ws.phio, ws.do, ws.ddo, flags,
          ws.f, ws.ao)
    for q in range(E0.size):
        ws.eo[q] = (1.0 - theta) * E0[q] + theta * E1[q]
    archive_row(out, row, times[j], ops, ws.xo, ws.vo, ws.ao, cvo, ws.eo, 0.0)
    return row + 1


# --------------------------------------------------------------------------- the scheme
from typing import NamedTuple  # noqa: E402


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


METHODS = {"rk4": RK, "rk32": RK, "rk54": RK, "euler": EULER, "adaptive2": VERLET,
           "devogelaere": DEVOGE}


class Explicit(Scheme):
    """rk4, rk32, rk54, euler, adaptive2 or devogelaere (module docstring).

    ``fixed``: steps are the driver's knots (rk4; euler with ``step``); otherwise the scheme
    chooses its steps with ``tolerance`` within [min_step, max_step] (defaults: 1e-12 and
    1/100 of the analysis span) and archives every ``every``-th accepted step when > 0.
    """

    dense_values = None

    def __init__(self, dynamics, links, *, name, events="locate", label="analysis",
                 fixed=False, tolerance=1e-6, max_step=None, min_step=None, span=1.0,
                 every=0):
        super().__init__(dynamics, links, name=name, events=events, label=label)
        self.method = METHODS[name]
        A, b, e, c, q = tableau(name if name in ("rk4", "rk32", "rk54") else "rk4")
        self.tab = Tableau(np.ascontiguousarray(A), b, e, c)
        self.fixed_step = bool(fixed)
        self.adaptive = not fixed
        self.every = int(every)
        n, nc = self.n, self.P.shape[0]
        self.mass = _mass(dynamics, name, label)
        self.rig = _rigid(self, self.mass)
        m3 = self.L.shape[0]
        nb = dynamics.B.shape[1]
        s = max(self.tab.b.size, 4)
        from fem.links.columns import NV
        self.ws = Work(np.empty(nb), np.empty(nb), np.empty(nb), np.empty(n), np.empty(n),
                       np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.zeros((s, n)),
                       np.zeros((s, n)), np.empty(n), np.empty(n), np.empty(n),
                       np.zeros((nc, NV)), np.zeros(m3), np.zeros(m3), np.zeros(m3),
                       np.zeros(3), np.full(nc, -1.0), np.zeros(3))
        self.hist_t = np.zeros(3)
        self.hist_f = np.zeros((3, n))
        ctl = np.zeros(CONTROL)
        ctl[METHOD] = self.method
        ctl[ADAPTIVE] = 0.0 if fixed else 1.0
        ctl[TOL] = float(tolerance)
        ctl[EXPONENT] = 1.0 / (q + 1) if self.method == RK else 0.25
        ctl[HMAX] = float(max_step) if max_step else span / 100.0
        ctl[HMIN] = float(min_step) if min_step else 1e-12 * span
        ctl[HSTAB] = math.inf
        ctl[ERR_PREV] = 1.0
        self.span = span
        omega = self.highest_frequency()
        ctl[H0] = 1.0 / omega if omega > 0 else math.inf
        if self.method in (EULER, VERLET) and not fixed:
            C = dynamics.damping.toarray() if self.n <= 2000 else None
            rho = float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (C + C.T))), initial=0.0)) \
                if C is not None else 0.0
            fastest = max(omega, 0.5 * rho)
            ctl[HSTAB] = 1.8 / fastest if fastest > 0 else math.inf
            ctl[H] = min(ctl[HMAX], ctl[HSTAB])
        elif self.method == RK:
            h = 0.5 * tolerance ** (1.0 / (q + 1)) / omega if omega > 0 else ctl[HMAX]
            ctl[H] = max(min(h, ctl[HMAX]), ctl[HMIN])
        else:
            h = 0.01 * 2 * math.pi / omega if omega > 0 else ctl[HMAX]
            ctl[H] = max(min(h, ctl[HMAX]), ctl[HMIN])
        self.ctl = ctl
        self._w_static = None

    def stability_limit(self):
        if not self.fixed_step:
            return None
        omega = self.highest_frequency()
        if omega == 0:
            return None
        return (2.8 if self.method == RK else 2.0) / omega

    # ------------------------------------------------------------------ protocol
    def begin(self, chunk):
        super().begin(chunk)
        ctl = self.ctl
        t0 = float(chunk.times[0])
        if getattr(self, "_t0", None) is not None:
            self.hist_t -= t0 - self._t0          # the history in the new chunk's time
        self._t0 = t0
        ctl[TAU] = self.t - t0
        # the scales of the error control: the largest static response to the loads of
        # this chunk and the largest state so far
        if self.adaptive and chunk.W.size:
            if self._w_static is None:
                omega = self.dyn.omega if self.dyn.omega is not None else None
                floor = 2 * math.pi / self.span
                self._w_static = (np.maximum(omega, floor) if omega is not None
                                  else np.full(self.n, max(self.highest_frequency(), floor)))
            peak = np.max(np.abs(chunk.W @ np.asarray(self.dyn.B).T), axis=0)
            ctl[SX] = max(ctl[SX], float(np.max(peak / self._w_static ** 2, initial=0.0)))
            ctl[SV] = max(ctl[SV], float(np.max(peak / self._w_static, initial=0.0)))
        c = self.cur
        ctl[SX] = max(ctl[SX], float(np.max(np.abs(self.buf.X[c]), initial=0.0)))
        ctl[SV] = max(ctl[SV], float(np.max(np.abs(self.buf.V[c]), initial=0.0)))

    def advance(self, out, row):
        ch = self.chunk
        before = self.ctl[ACCEPTED]
        status, row = loop(self.ctl, self.tab, self.ops, self.kin, self.mass, self.P, self.rig,
                           ch.dt, ch.k, ch.times, ch.W, ch.archive, self.every, self.buf,
                           self.cur, self.ws, self.hist_t, self.hist_f, out, row, self.locate,
                           self.log)
        self.steps = int(self.ctl[ACCEPTED])
        self.rejected = int(self.ctl[REJECTED])
        t0 = float(ch.times[0])
        self.t = t0 + self.ctl[TAU] if status != DONE else float(ch.times[-1])
        if status == DONE:
            self.t = float(ch.times[-1])
            self.w = ch.W[-1]
        else:
            w = np.empty(ch.W.shape[1])
            load_at(self.ctl[TAU], ch.dt, ch.k, ch.W, w, np.empty_like(w))
            self.w = w
        if status in (EVENT, DIVERGED):
            self.pending = (self.t + self.ctl[H], None)
            self._trial = None
        del before
        return status, row

    def trial(self, t_end):
        """The pending step again, from t to t_end, with the modes held."""
        ch = self.chunk
        c, x = self.cur, 1 - self.cur
        b = self.buf
        tau = self.t - float(ch.times[0])
        h = t_end - self.t
        flags = self._flags()
        r = step(self.ctl, self.tab, self.ops, self.kin, self.mass, self.P, self.rig, tau, h,
                 ch.dt, ch.k, ch.W, b.X[c], b.V[c], b.A[c], b.CV[c], b.X[x], b.V[x], b.A[x],
                 b.CV[x], b.PHI[x], b.DB[x], b.DD[x], flags, self.ws, self.hist_t, self.hist_f)
        w0 = np.empty(ch.W.shape[1])
        w1 = np.empty(ch.W.shape[1])
        load_at(tau, ch.dt, ch.k, ch.W, w0, np.empty_like(w0))
        load_at(tau + h, ch.dt, ch.k, ch.W, w1, np.empty_like(w1))
        step_energy(self.ops, self.kin, self.P, b.X[c], b.X[x], b.V[c], b.V[x], w0, w1,
                    b.CV[c], b.CV[x], b.PHI[c], b.PHI[x], b.DB[c], b.DB[x], b.E[c], b.E[x],
                    self.ws.quad)
        self._trial = (float(t_end), w1)
        return DONE if r == r else DIVERGED

    def accept(self, out, row):
        """Take the trial step: archive the knots it covers, then its end is the state."""
        t_end, w1 = self._trial
        ch = self.chunk
        c, x = self.cur, 1 - self.cur
        b = self.buf
        t0 = float(ch.times[0])
        tau, h = self.t - t0, t_end - self.t
        flags = self._flags()
        for j in range(1, ch.k + 1):
            tj = ch.times[j]
            if ch.archive[j] and self.t < tj <= t_end:
                row = _emit(self.ctl, self.ops, self.kin, self.mass, self.P, self.rig, tau, h,
                            ch.dt, ch.k, ch.W, ch.times, j, b.X[c], b.V[c], b.A[c], b.X[x],
                            b.V[x], b.A[x], b.CV[c], b.E[c], b.E[x], flags, self.ws, out, row)
        if self.method == DEVOGE:
            self.hist_t[:] = (tau, tau + 0.5 * h, t_end - t0)
            self.hist_f[0] = b.A[c]
            self.hist_f[1] = self.ws.vh
            self.hist_f[2] = b.A[x]
            self.ctl[HISTORY] = 1.0
        for arr in b:
            arr[c] = arr[x]
        self.t, self.w = float(t_end), w1
        self.ctl[TAU] = self.t - t0
        self.ctl[ACCEPTED] += 1
        self.steps = int(self.ctl[ACCEPTED])
        return row

    def restart(self):
        self.equilibrium()
        self.ctl[HISTORY] = 0.0


def _mass(dynamics, name, label) -> Mass:
    """M^-1 for the explicit steps; every free dof needs mass."""
    import scipy.sparse as sp

    M = sp.csr_matrix(dynamics.mass)
    n = M.shape[0]
    d = M.diagonal()
    if dynamics.basis == "modal" or (M.nnz == np.count_nonzero(d) and np.all(d > 0)):
        inv = 1.0 / d if n else np.zeros(0)
        return Mass(True, np.ascontiguousarray(inv), np.zeros((1, 0)), np.zeros(0, np.int64),
                    np.zeros(0))
    massless = np.flatnonzero(np.asarray(abs(M).sum(axis=1)).ravel() == 0)
    if len(massless):
        what = dynamics.describe(int(massless[0]))
        raise NotAvailableError(f"{label}: scheme '{name}' is explicit and needs mass on every "
                                f"free dof ({what} has none): give it mass, or use an "
                                f"implicit scheme (newmark, hht)")
    factor = Factor(M, what="mass matrix")
    if not factor.banded:
        raise NotAvailableError(f"{label}: scheme '{name}' needs a mass matrix of moderate "
                                f"bandwidth in physical space; use a modal basis")
    return Mass(False, np.zeros(0), factor.band, factor.perm, np.empty(n))


def _rigid(scheme, mass) -> Rigid:
    """Rows, W and Z of the rigid contacts."""
    idx = np.asarray(scheme.links.rigid if scheme.links else [], np.int64)
    n = scheme.n
    m3 = scheme.L.shape[0]
    if idx.size:
        R = scheme.bond_rows(idx)
        Z = scheme.mass_solve(R.T)
        W = R @ Z
    else:
        Z = np.zeros((n, 0))
        W = np.zeros((0, 0))
    k = max(idx.size, 1)
    return Rigid(idx, np.ascontiguousarray(W), np.ascontiguousarray(Z), np.zeros(k, np.int64),
                 np.zeros((k, k)), np.zeros(k), np.zeros(m3), np.zeros((0, 3, 3)))
