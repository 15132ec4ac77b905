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

With links in the ``locate`` mode, a step whose end shows a crossing of a law's event function
stops the loop (status EVENT) with the step pending; the modes are held over every step, so that
the right-hand side is smooth inside a step and the error control keeps its meaning.

The steps themselves, the acceleration and the quadratures of the energy terms are in
``fem.integrators.explicit_steps``; on an undamped uncoupled modal basis with plane contacts
that have neither damper nor friction, adaptive2 takes the steps that provably keep every
contact's mode in ``fem.integrators.explicit_lean``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.errors import NotAvailableError, SolverError
from fem.integrators.base import Scheme
from fem.integrators.kernels import (DIVERGED, DONE, EVENT, FULL, MINSTEP, archive_row,
                                     crossed_inline, diverged, record_changes, step_energy,
                                     step_energy_inline)
from fem.integrators.adaptive import (ACCEPTED, ADAPTIVE, CONTROL, ERR_PREV, EXPONENT, H, H0,
                                      HISTORY, HMAX, HMIN, HSTAB, LAST_REJECTED, METHOD,
                                      RATE_FREE, REJECTED, SV, SX, TAU, TOL, hermite,
                                      load_at, plan_step,
                                      step_growth)
from fem.integrators.explicit_lean import qualifies, segment
from fem.integrators.explicit_steps import (DEVOGE, EULER, RK, VERLET, Mass, Rigid, Tableau,
                                            Work, _link_powers, _powers, accel_inline,
                                            apparent_step_inline, step, tableau)
from fem.integrators.newmark_lean import contact_rows
from fem.linalg import Factor
from fem.links.columns import MODE
from fem.links.law import rate_free, stored_energy

# --------------------------------------------------------------------------- the loop
#: the most steps (taken or refused) one call of the loop makes before it returns FULL
CALL_STEPS = 1 << 20


@numba.njit(cache=True, nogil=True, inline="always")
def _modes_changed(cv0, cv1):
    """Whether a contact's mode differs between two value rows."""
    for c in range(cv0.shape[0]):
        if cv0[c, MODE] != cv1[c, MODE]:
            return True
    return False


@numba.njit(cache=True, nogil=True, _nrt=False)
def loop(ctl, tab, ops, kin, mass, P, rig, dt, k, times, W, archive, every, buf, cur, ws,
         hist_t, hist_f, out, row, locate, log, lean, R, RS):
    """Steps from local time ctl[TAU] to the end of the chunk (k knots of spacing dt);
    returns (status, rows). On EVENT the pending step [TAU, TAU + H] is in buffer 1 - cur.
    With ``lean``, the steps that qualify run in ``explicit_lean.segment`` (R, RS: the rows
    of the plane contacts and M^-1 times them)."""
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
    per_dt = 1.0 / dt
    method = int(ctl[METHOD])
    j = int(math.floor(tau / dt * (1.0 + 1e-14))) + 1
    while j <= k and not archive[j]:
        j += 1
    # the loads at the start of the step (those at its end are left in ws.w by the step)
    wp = ws.wp
    load_at(tau, dt, k, W, wp, ws.slope)
    taken = 0
    while tau < tend * (1.0 - 1e-15):
        taken += 1
        if taken > CALL_STEPS:
            # back to the driver now and then (step budget, progress, signals)
            ctl[TAU] = tau
            ctl[H] = h
            return FULL, row
        if lean:
            knot = j
            while knot <= k and not archive[knot]:
                knot += 1
            tau, h, got = segment(ctl, ops, kin, P, R, RS, mass.inv, tau, h, hmax, hmin, tend,
                                  dt, k, W, archive, knot, x, v, a, cv, phi, db, dd, E, wp,
                                  ws.w, ws.slope, x1, v1, a1, cv1, flags, rig.J)
            if got:
                # the segment leaves the chunk's last step to this loop
                taken += got
                _track(ctl, x, v)
        if adaptive:
            hs, lands = plan_step(tau, max(h, hmin), tend, hmax)
        else:
            # the knots are the steps
            i_next = int(math.floor(tau / dt * (1.0 + 1e-14) + 1e-9)) + 1
            hs = i_next * dt - tau
            lands = i_next >= k
        if row + 2 + (int(hs * per_dt) + 1 if j <= k else 0) > cap:
            ctl[TAU] = tau
            ctl[H] = h
            return FULL, row
        for c in range(P.shape[0]):
            flags[c] = cv[c, MODE] if locate else -1.0
        if method == EULER or method == VERLET:
            r = apparent_step_inline(ctl, ops, kin, mass, P, rig, tau, hs, dt, k, W, x, v, a, cv,
                                     x1, v1, a1, cv1, phi1, db1, dd1, flags, ws)
        else:
            r = step(ctl, tab, ops, kin, mass, P, rig, tau, hs, dt, k, W, x, v, a, cv, phi, dd,
                     x1, v1, a1, cv1, phi1, db1, dd1, flags, ws, hist_t, hist_f)
        if not r == r:
            ctl[TAU] = tau
            return DIVERGED, row
        if adaptive:
            if method == EULER or method == VERLET:
                if not locate and _modes_changed(cv, cv1):
                    # events = "step": a law changes its mode at the end of this step; the
                    # jump of the acceleration it brings is no frequency of the motion (a
                    # shorter step would keep it and want shorter still)
                    r = max(r, hs)
                if r < hmin:
                    ctl[TAU] = tau
                    ctl[H] = r
                    return MINSTEP, row
                wanted = min(r, hmax)
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
                    ctl[H] = h
                    return MINSTEP, row
                continue
        if diverged(x1):
            ctl[TAU] = tau
            ctl[H] = hs
            return DIVERGED, row
        step_energy_inline(ops, kin, P, x, x1, v, v1, wp, ws.w, cv, cv1, phi, phi1, db, db1, E,
                           E1, ws.quad)
        if P.shape[0]:
            if locate:
                if crossed_inline(P, cv, cv1, db, dd, db1, dd1, hs):
                    ctl[TAU] = tau
                    ctl[H] = hs
                    return EVENT, row
            else:
                record_changes(P, cv, cv1, times[0] + tau + hs, log)
        # take the step: archived knots it covers by dense output (which use ws.w), then the
        # new state
        for c in range(wp.size):
            wp[c] = ws.w[c]
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
def trial_step(ctl, tab, ops, kin, mass, P, rig, tau, h, dt, k, W, buf, cur, flags, ws, hist_t,
               hist_f, w1):
    """The step [tau, tau + h] from buffer cur into the other one, with its energy terms;
    w1 gets the loads at its end. Returns what ``step`` returns."""
    c, o = cur, 1 - cur
    r = step(ctl, tab, ops, kin, mass, P, rig, tau, h, dt, k, W, buf.X[c], buf.V[c], buf.A[c],
             buf.CV[c], buf.PHI[c], buf.DD[c], buf.X[o], buf.V[o], buf.A[o], buf.CV[o],
             buf.PHI[o], buf.DB[o], buf.DD[o], flags, ws, hist_t, hist_f)
    load_at(tau, dt, k, W, ws.wp, ws.slope)
    load_at(tau + h, dt, k, W, w1, ws.slope)
    step_energy(ops, kin, P, buf.X[c], buf.X[o], buf.V[c], buf.V[o], ws.wp, w1, buf.CV[c],
                buf.CV[o], buf.PHI[c], buf.PHI[o], buf.DB[c], buf.DB[o], buf.E[c], buf.E[o],
                ws.quad)
    return r


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
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
    the state, the acceleration and the links from the equation of motion there, the energy
    terms integrated from tau on that dense output (three-point Gauss rule for the schemes of
    order 4 and 5, the midpoint rule for euler and adaptive2: each to the scheme's order)."""
    theta = min(max((j * dt - tau) / h, 0.0), 1.0)
    cvo = ws.cvo
    q0 = 0.0
    q1 = 0.0
    q4 = 0.0
    q5 = 0.0
    # the three-point rule for the schemes of order 4 and 5, the midpoint rule (order 2) for
    # euler and adaptive2; then the knot itself (one site for the acceleration, compiled in)
    low = ctl[METHOD] == EULER or ctl[METHOD] == VERLET
    points = (1 if low else 3) if 0.0 < theta < 1.0 else 0
    for g in range(points + 1):
        if g < points:
            xg = 0.0 if low else GAUSS_X[g]
            th = 0.5 * theta * (1.0 + xg)
            wg = theta * h if low else 0.5 * theta * h * GAUSS_W[g]
            load_at(tau + th * h, dt, k, W, ws.w, ws.slope)
        else:
            th = theta
            wg = 0.0
            for c in range(W.shape[1]):
                ws.w[c] = W[j, c]
        hermite(th, h, x, v, a, x1, v1, a1, ws.xo, ws.vo)
        accel_inline(ops, kin, mass, P, rig, ws.xo, ws.vo, ws.w, cv, cvo, ws.phio, ws.do,
                     ws.ddo, flags, ws.f, ws.ao)
        if g < points:
            pw, pd = _powers(ops, ws.w, ws.vo)
            pl, ps = _link_powers(kin, P, ws.phio, ws.ddo, ws.w)
            q0 += wg * pw
            q1 += wg * pd
            q4 += wg * pl
            q5 += wg * ps
    if theta >= 1.0:
        for q in range(E0.size):
            ws.eo[q] = E1[q]
    else:
        ws.eo[0] = E0[0] + q0 - q5
        ws.eo[1] = E0[1] + q1
        ws.eo[2] = E0[2]
        if P.shape[0]:
            ws.eo[2] -= q4 + stored_energy(cvo) - stored_energy(cv)
    archive_row(out, row, times[j], ops, ws.xo, ws.vo, ws.ao, cvo, ws.eo, 0.0)
    return row + 1


#: three-point Gauss-Legendre rule on [-1, 1]
GAUSS_X = np.array([-math.sqrt(0.6), 0.0, math.sqrt(0.6)])
GAUSS_W = np.array([5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0])


# --------------------------------------------------------------------------- the scheme


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
                       np.zeros(3), np.full(nc, -1.0), np.zeros(6), np.empty(nb))
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
        undamped = dynamics.damping.count_nonzero() == 0
        ctl[RATE_FREE] = 1.0 if undamped and rate_free(self.P) else 0.0
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
        self.lean = qualifies(self.method, self.adaptive, self.locate, dynamics, self.P,
                              self.ops, self.rig.index)
        R = contact_rows(self.P, self.L) if self.lean else np.zeros((0, n))
        self.lean_rows = (np.ascontiguousarray(R),
                          np.ascontiguousarray(R * self.mass.inv) if self.lean else R)

    def check_resolution(self, step: float):
        if not self.adaptive:
            return super().check_resolution(step)
        super().check_resolution(float(self.ctl[HMIN]))
        if self.ctl[HSTAB] < self.ctl[HMIN]:
            raise SolverError(
                f"{self.label}: the stability limit of {self.name}, {self.ctl[HSTAB]:.3g} s "
                f"(highest frequency with every contact closed: "
                f"{1.8 / self.ctl[HSTAB]:.3g} rad/s), is below min_step = "
                f"{self.ctl[HMIN]:.3g} s")

    def min_step_message(self) -> str:
        return (f"{self.label}: {self.name} needs a step of {self.ctl[H]:.3g} s at "
                f"t = {self.t:.12g} s, below min_step = {self.ctl[HMIN]:.3g} s: the motion is "
                f"faster than the scheme can follow there (a contact stiffness or a parameter "
                f"out of physical range, or a tolerance too tight)")

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
        status, row = self.call(loop)(self.ctl, self.tab, self.ops, self.kin, self.mass, self.P,
                                      self.rig, ch.dt, ch.k, ch.times, ch.W, ch.archive,
                                      self.every, self.buf, self.cur, self.ws, self.hist_t,
                                      self.hist_f, out, row, self.locate, self.log,
                                      self.lean and self.every == 0, *self.lean_rows)
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
        c = self.cur
        b = self.buf
        tau = self.t - float(ch.times[0])
        h = t_end - self.t
        flags = self._flags()
        w1 = np.empty(ch.W.shape[1])
        r = self.call(trial_step)(self.ctl, self.tab, self.ops, self.kin, self.mass, self.P,
                                  self.rig, float(tau), float(h), ch.dt, ch.k, ch.W, b, c, flags,
                                  self.ws, self.hist_t, self.hist_f, w1)
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
        first = max(int(np.searchsorted(ch.times, self.t, side="right")), 1)
        last = int(np.searchsorted(ch.times, t_end, side="right"))
        for j in range(first, last):
            if ch.archive[j]:
                row = self.call(_emit)(self.ctl, self.ops, self.kin, self.mass, self.P,
                                       self.rig, float(tau), float(h), ch.dt, ch.k, ch.W,
                                       ch.times, j, b.X[c], b.V[c], b.A[c], b.X[x], b.V[x],
                                       b.A[x], b.CV[c], b.E[c], b.E[x], flags, self.ws, out,
                                       row)
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
