"""The compiled loop of the explicit schemes (``fem.integrators.explicit``): the steps from
knot to knot with the event test, the dense output at the archive knots, and, as modes of
the same loop, the trial step that the driver computes alone (a step cut at an event:
``TRIAL``) and the taking of that step (``TAKE``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.integrators.adaptive import (ACCEPTED, ADAPTIVE, EXPONENT, H, HISTORY, HMAX, HMIN,
                                      HSTAB, LAST_REJECTED, METHOD, REJECTED, SV, SX, TAU,
                                      hermite, load_at, plan_step, step_growth)
from fem.integrators.explicit_lean import segment
from fem.integrators.explicit_steps import (DEVOGE, EULER, VERLET, _link_powers, _powers,
                                            accel, apparent_step_inline, step)
from fem.integrators.kernels import (DIVERGED, DONE, EVENT, FULL, MINSTEP, archive_row,
                                     crossed_inline, diverged, record_changes,
                                     step_energy_inline)
from fem.laws.columns import MODE
from fem.links.law import stored_energy

# --------------------------------------------------------------------------- the loop
#: the most steps (taken or refused) one call of the loop makes before it returns FULL
CALL_STEPS = 1 << 20
#: what a call of the loop does: run the steps to the end of the chunk; compute the step
#: [TAU, TAU + H] into the other buffer with the modes held and return (a trial step of the
#: event search); take the step the last trial computed
RUN, TRIAL, TAKE = 0, 1, 2


@numba.njit(cache=True, nogil=True, inline="always")
def _modes_changed(cv0, cv1):
    """Whether a contact's mode differs between two value rows."""
    for c in range(cv0.shape[0]):
        if cv0[c, MODE] != cv1[c, MODE]:
            return True
    return False


@numba.njit(cache=True, nogil=True, _nrt=False)
def loop(mode, ctl, tab, ops, kin, mass, P, rig, dt, k, times, W, archive, every, buf, cur,
         ws, hist_t, hist_f, out, row, locate, log, lean, R, RS):
    """Steps from local time ctl[TAU] to the end of the chunk (k knots of spacing dt);
    returns (status, rows). On EVENT the pending step [TAU, TAU + H] is in buffer 1 - cur.
    With ``lean``, the steps that qualify run in ``explicit_lean.segment`` (R, RS: the rows
    of the plane contacts and M^-1 times them). ``mode`` TRIAL computes the step [TAU,
    TAU + H] into buffer 1 - cur with its energy terms (ws.w: the loads at its end) and
    returns DONE or DIVERGED; TAKE takes the step the last trial left there (the archived
    knots it covers, then its end is the state); RUN runs the steps."""
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
    r = 0.0
    while mode != RUN or tau < tend * (1.0 - 1e-15):
        if mode == RUN:
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
                tau, h, got = segment(ctl, ops, kin, P, R, RS, mass.inv, tau, h, hmax, hmin,
                                      tend, dt, k, W, archive, knot, x, v, a, cv, phi, db, dd,
                                      E, wp, ws.w, ws.slope, x1, v1, a1, cv1, flags, rig.J)
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
        else:
            # the driver's step [TAU, TAU + H]
            hs = h
            lands = False
        if mode == TAKE:
            # the step the last trial computed (its loads at the end again)
            load_at(tau + hs, dt, k, W, ws.w, ws.slope)
        else:
            for c in range(P.shape[0]):
                flags[c] = cv[c, MODE] if locate else -1.0
            if method == EULER or method == VERLET:
                r = apparent_step_inline(ctl, ops, kin, mass, P, rig, tau, hs, dt, k, W, x, v,
                                         a, cv, x1, v1, a1, cv1, phi1, db1, dd1, flags, ws)
            else:
                r = step(ctl, tab, ops, kin, mass, P, rig, tau, hs, dt, k, W, x, v, a, cv, phi,
                         dd, x1, v1, a1, cv1, phi1, db1, dd1, flags, ws, hist_t, hist_f)
            if not r == r:
                ctl[TAU] = tau
                return DIVERGED, row
            if mode == TRIAL:
                load_at(tau + hs, dt, k, W, ws.w, ws.slope)
                step_energy_inline(ops, kin, P, x, x1, v, v1, wp, ws.w, cv, cv1, phi, phi1, db,
                                   db1, E, E1, ws.quad)
                return DONE, row
            if adaptive:
                if method == EULER or method == VERLET:
                    if not locate and _modes_changed(cv, cv1):
                        # events = "step": a law changes its mode at the end of this step;
                        # the jump of the acceleration it brings is no frequency of the
                        # motion (a shorter step would keep it and want shorter still)
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
            step_energy_inline(ops, kin, P, x, x1, v, v1, wp, ws.w, cv, cv1, phi, phi1, db,
                               db1, E, E1, ws.quad)
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
        if mode == RUN and every > 0 and int(ctl[ACCEPTED]) % every == 0 and not last_knot:
            # (a step the driver takes is not counted: its rows are the driver's to reserve)
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
        if mode == TAKE:
            ctl[TAU] = tau
            return DONE, row
        if adaptive:
            if method == EULER or method == VERLET:
                h = min(max(r, hmin), hmax, 1.2 * max(h, hs))
            else:
                grow = step_growth(r, ctl[EXPONENT], ctl)
                h = max(hs * grow, h if lands else 0.0)
    ctl[TAU] = tau
    ctl[H] = h
    return DONE, row


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
        accel(ops, kin, mass, P, rig, ws.xo, ws.vo, ws.w, cv, cvo, ws.phio, ws.do,
                     ws.ddo, flags, ws.f, ws.ao, th * h)
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
