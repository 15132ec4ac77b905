"""Modal adaptive2 with shock links (a compiled loop; contacts and energies in
``fem.integrators.modal_shock.common``).

adaptive2 (velocity Verlet with the apparent-frequency step rule of ``fem.integrators.adapt``).
Within a step the set of contacts in contact is frozen, so that the step is smooth and its
quintic Hermite dense output is as accurate as the step. With events "locate", after each
accepted step the state function of every contact (p, or min(k p, F) with
``release = "force"``, positive in contact) is sampled on the dense output; at a change the
instant is found by bisection on the Hermite interpolant, the step is taken again up to that
instant, and the contact changes state there. With events "step", states change at the step
ends. The contact stiffness enters the step rule through the apparent frequency.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.integrators.base import State
from fem.integrators.modal_common import (ACCEPTED, DONE, FULL, H, HMAX, HMIN, HSTAB, NONFINITE,
                                          REJECTED, TAU, TOL, AdaptiveModalScheme, accel,
                                          all_finite, count_archived, force, hermite, load_at,
                                          next_archived, plan_step, track_scales)
from fem.integrators.modal_shock.common import (DISSIPATED, DISSIPATION, POWER, RELEASE_FORCE,
                                                RELEASE_GAP, SAMPLES, WORK, ModalContacts,
                                                _LinkScheme)

# ------------------------------------------------------------------------------------------
# adaptive2
class ShockAdaptive2(_LinkScheme, AdaptiveModalScheme):
    """``adaptive2`` (velocity Verlet, apparent-frequency step rule) with plane contacts.

    Parameters as ``fem.integrators.adapt.ApparentFrequencyScheme`` (order 2), plus the
    contacts, the driver's grid ``times`` (s), ``archive_first`` and ``locate`` (events
    located on the dense output, or states changed at the step ends).
    """

    def __init__(self, basis, contacts: ModalContacts, times, archive_first=True,
                 locate=True, **kw):
        AdaptiveModalScheme.__init__(self, basis, "adaptive2", **kw)
        self._setup_links(contacts, times, archive_first)
        self.locate = bool(locate)
        self.rho_c = float(np.max(np.abs(np.linalg.eigvalsh(self.C)), initial=0.0))
        self.omax = self.highest_frequency()
        fastest = max(self.omax, 0.5 * self.rho_c)
        self.ctl[HSTAB] = 1.8 / fastest if fastest > 0 else math.inf
        self.ctl[H] = min(self.first_step(), self.ctl[HSTAB])
        self.kr2 = contacts.stiffness * np.sum(contacts.R ** 2, axis=1)
        self.cr2 = contacts.damping * np.sum(contacts.R ** 2, axis=1)

    def advance(self, dt, W, state: State, archive):
        self._t_call = self.times[self.cursor]
        result = super().advance(dt, W, state, archive)
        self.cursor += W.shape[0] - 1
        return result

    def extra_widths(self):
        return [self.contacts.count, 2]        # contact states, energy accumulators

    def after_run(self):
        self._collect(self._t_call)

    def keep_extras(self, extras):
        self.pending.append(tuple(extras))

    def run(self, dt, k, W, state, archive, out_t, out_u, out_v, out_a, out_s, out_e):
        return _adapt2_loop(
            dt, k, W, self.Bt, self.kk, self.C, self.diag, self.struct_damped,
            state.u, state.v, state.a, archive, self.every, self.ctl, self.R, self.gap,
            self.ks, self.cs, self.release, self.active, self.locate, self.acc,
            self.omax, self.rho_c, self.kr2, self.cr2, out_t, out_u, out_v, out_a, out_s, out_e,
            self._ev.time, self._ev.contact, self._ev.kind, self._ev.speed, self._ev.count)


@numba.njit(cache=True, nogil=True)
def _phase_forces(R, gap, ks, cs, active, x, v, out):
    """out (m,) = sum over the contacts in contact of F_j r_j (frozen phase: linear)."""
    m = x.size
    for i in range(m):
        out[i] = 0.0
    for j in range(R.shape[0]):
        if active[j] == 1:
            p = -gap[j]
            pd = 0.0
            for i in range(m):
                p += R[j, i] * x[i]
                pd += R[j, i] * v[i]
            F = ks[j] * p + cs[j] * pd
            for i in range(m):
                out[i] += F * R[j, i]


@numba.njit(cache=True, nogil=True)
def _accel_links(f, kk, C, diag, R, gap, ks, cs, active, x, v, fl, out):
    accel(f, kk, C, diag, x, v, out)
    _phase_forces(R, gap, ks, cs, active, x, v, fl)
    for i in range(x.size):
        out[i] -= fl[i]


@numba.njit(cache=True, nogil=True)
def _dissipation(C, diag, struct_damped, R, cs, active, v):
    """q'.Cg q' + sum over the contacts in contact of c_j (r_j . q')^2 (W)."""
    m = v.size
    d = 0.0
    if struct_damped:
        if diag:
            for i in range(m):
                d += C[i, i] * v[i] * v[i]
        else:
            for i in range(m):
                s = 0.0
                for c in range(m):
                    s += C[i, c] * v[c]
                d += v[i] * s
    for j in range(R.shape[0]):
        if active[j] == 1 and cs[j] > 0.0:
            s = 0.0
            for i in range(m):
                s += R[j, i] * v[i]
            d += cs[j] * s * s
    return d


@numba.njit(cache=True, nogil=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i]
    return s


@numba.njit(cache=True, nogil=True)
def _hermite1(theta, h, x0, v0, a0, x1, v1, a1):
    """Scalar quintic Hermite (as ``modal_common.hermite``): value and derivative."""
    t2 = theta * theta
    t3 = t2 * theta
    t4 = t3 * theta
    t5 = t4 * theta
    h0 = 1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5
    g0 = theta - 6.0 * t3 + 8.0 * t4 - 3.0 * t5
    g1 = -4.0 * t3 + 7.0 * t4 - 3.0 * t5
    j0 = 0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5
    j1 = 0.5 * t3 - t4 + 0.5 * t5
    dh0 = -30.0 * t2 + 60.0 * t3 - 30.0 * t4
    dg0 = 1.0 - 18.0 * t2 + 32.0 * t3 - 15.0 * t4
    dg1 = -12.0 * t2 + 28.0 * t3 - 15.0 * t4
    dj0 = theta - 4.5 * t2 + 6.0 * t3 - 2.5 * t4
    dj1 = 1.5 * t2 - 4.0 * t3 + 2.5 * t4
    x = h0 * x0 + (1.0 - h0) * x1 + h * (g0 * v0 + g1 * v1) + h * h * (j0 * a0 + j1 * a1)
    xd = dh0 * (x0 - x1) / h + dg0 * v0 + dg1 * v1 + h * (dj0 * a0 + dj1 * a1)
    return x, xd


@numba.njit(cache=True, nogil=True)
def _state_value(theta, h, x0, v0, a0, x1, v1, a1, gap, k, c, release):
    """State function of a contact at fraction theta of the step (positive in contact),
    from the projections (r . x, r . v, r . a) at both ends."""
    P, Pd = _hermite1(theta, h, x0, v0, a0, x1, v1, a1)
    p = P - gap
    if release == RELEASE_GAP:
        return p
    return min(k * p, k * p + c * Pd)


@numba.njit(cache=True, nogil=True)
def _first_change(h, x0, v0, a0, x1, v1, a1, gap, k, c, release, state):
    """Smallest fraction of the step where a contact leaves the state ``state`` (2.0 if
    it does not at the samples): bisection on the dense output."""
    lo = 0.0
    for s in range(1, SAMPLES + 1):
        th = s / SAMPLES
        val = _state_value(th, h, x0, v0, a0, x1, v1, a1, gap, k, c, release)
        if (1 if val > 0.0 else 0) != state:
            hi = th
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if mid <= lo or mid >= hi:
                    break
                val = _state_value(mid, h, x0, v0, a0, x1, v1, a1, gap, k, c, release)
                if (1 if val > 0.0 else 0) != state:
                    hi = mid
                else:
                    lo = mid
            return hi
        lo = th
    return 2.0


@numba.njit(cache=True, nogil=True)
def _adapt2_loop(dt, k, W, Bt, kk, C, diag, struct_damped, x, v, a, archive, every, ctl,
                 R, gap, ks, cs, release, active, locate, acc, omax, rho_c, kr2, cr2,
                 out_t, out_u, out_v, out_a, out_s, out_e,
                 ev_time, ev_contact, ev_kind, ev_speed, ev_count):
    # the step is written out here rather than in functions of its own: a call passing many
    # arrays costs more than a step of a small basis
    m = x.size
    nb = W.shape[1]
    nc = R.shape[0]
    w = np.empty(nb)
    slope = np.empty(nb)
    f = np.empty(m)
    fo = np.empty(m)
    fl = np.empty(m)
    x1 = np.empty(m)
    v1 = np.empty(m)
    a1 = np.empty(m)
    vh = np.empty(m)
    xo = np.empty(m)
    vo = np.empty(m)
    S0 = np.zeros((nc, 3))
    S1 = np.zeros((nc, 3))
    tend = k * dt
    tau = ctl[TAU]
    h = ctl[H]
    tol = ctl[TOL]
    hmin = ctl[HMIN]
    factor = math.sqrt(24.0 * tol)
    cap = out_u.shape[0]
    capacity = ev_time.size
    row = 0
    status = DONE
    forced = 0.0            # a step taken again up to a change of contact state
    forced_contact = -1
    j = next_archived(archive, int(math.floor(tau / dt)) + 1 if tau > 0 else 1, k)
    while tau < tend:
        # stability bound of the phase: the closed contacts stiffen the system
        w2 = omax * omax
        rc = rho_c
        for c in range(nc):
            if active[c] == 1:
                w2 += kr2[c]
                rc += cr2[c]
        fastest = max(math.sqrt(w2), 0.5 * rc)
        hmax = ctl[HMAX]
        if fastest > 0.0:
            hmax = min(hmax, 1.8 / fastest)
        if forced > 0.0:
            hs = forced
            lands = False
        else:
            hs, lands = plan_step(tau, max(h, hmin), tend, hmax)
        if row + count_archived(archive, j, k, tau + hs, dt) + 1 > cap or \
                ev_count[0] + nc > capacity:
            status = FULL
            break
        # velocity Verlet in the frozen phase (contacts in contact act as linear springs)
        for i in range(m):
            vh[i] = v[i] + 0.5 * hs * a[i]
            x1[i] = x[i] + hs * vh[i]
            v1[i] = vh[i] + 0.5 * hs * a[i]          # predicted velocity for the damping
        load_at(tau + hs, dt, k, W, w, slope)
        force(Bt, w, f)
        for sweep in range(2):
            accel(f, kk, C, diag, x1, v1, a1)
            for c in range(nc):
                if active[c] == 1:
                    p = -gap[c]
                    pd = 0.0
                    for i in range(m):
                        p += R[c, i] * x1[i]
                        pd += R[c, i] * v1[i]
                    F = ks[c] * p + cs[c] * pd
                    for i in range(m):
                        a1[i] -= F * R[c, i]
            if sweep == 0:
                for i in range(m):
                    v1[i] = vh[i] + 0.5 * hs * a1[i]
        dx = 0.0
        da = 0.0
        for i in range(m):
            dx += (x1[i] - x[i]) ** 2
            da += (a1[i] - a[i]) ** 2
        if dx > 0.0 and da > 0.0:
            wanted = factor / math.sqrt(math.sqrt(da) / math.sqrt(dx))
        elif dx > 0.0 or fastest == 0.0:
            wanted = hmax
        else:
            # no displacement over the step (a start from rest under a load that starts
            # from zero): no apparent frequency, the highest one of the phase instead
            wanted = factor / fastest
        wanted = max(min(wanted, hmax), hmin)
        if forced == 0.0 and hs > 1.5 * wanted and not hs <= hmin * (1.0 + 1e-12):
            ctl[REJECTED] += 1
            h = wanted
            continue
        if not all_finite(x1):
            status = NONFINITE
            break
        # contact state changes within the step
        switching = -1
        if nc > 0:
            for c in range(nc):
                s0 = 0.0
                s1 = 0.0
                s2 = 0.0
                e0 = 0.0
                e1 = 0.0
                e2 = 0.0
                for i in range(m):
                    s0 += R[c, i] * x[i]
                    s1 += R[c, i] * v[i]
                    s2 += R[c, i] * a[i]
                    e0 += R[c, i] * x1[i]
                    e1 += R[c, i] * v1[i]
                    e2 += R[c, i] * a1[i]
                S0[c, 0] = s0
                S0[c, 1] = s1
                S0[c, 2] = s2
                S1[c, 0] = e0
                S1[c, 1] = e1
                S1[c, 2] = e2
            if forced > 0.0:
                switching = forced_contact
            elif locate:
                first = 2.0
                for c in range(nc):
                    th = _first_change(hs, S0[c, 0], S0[c, 1], S0[c, 2], S1[c, 0], S1[c, 1],
                                       S1[c, 2], gap[c], ks[c], cs[c], release[c], active[c])
                    if th < first:
                        first = th
                        switching = c
                if switching >= 0 and first < 1.0:
                    # take the step again up to the change
                    forced = max(first * hs, min(hmin, hs))
                    forced_contact = switching
                    h = max(h, hs)
                    continue
        forced = 0.0
        ctl[ACCEPTED] += 1
        # energies over the step (frozen phase), archived rows, then the new state
        fv1 = 0.0
        for i in range(m):
            fv1 += f[i] * v1[i]
        dp1 = _dissipation(C, diag, struct_damped, R, cs, active, v1) \
            if struct_damped or nc > 0 else 0.0
        if every > 0 or (j <= k and j * dt <= (tau + hs) * (1.0 + 1e-14) + 1e-300):
            j, row = _emit(tau, hs, dt, k, W, Bt, kk, C, diag, struct_damped, archive, j,
                           x, v, a, x1, v1, a1, every, int(ctl[ACCEPTED]), R, gap, ks, cs,
                           active, acc, fv1, dp1, out_t, out_u, out_v, out_a, out_s, out_e,
                           row, w, fo, fl, xo, vo)
        acc[WORK] += 0.5 * hs * (acc[POWER] + fv1)
        acc[DISSIPATED] += 0.5 * hs * (acc[DISSIPATION] + dp1)
        acc[POWER] = fv1
        acc[DISSIPATION] = dp1
        tau = tend if lands else tau + hs
        for i in range(m):
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = a1[i]
        changed = False
        for c in range(nc):
            flip = c == switching
            if not locate:
                val = _state_value(1.0, hs, S0[c, 0], S0[c, 1], S0[c, 2], S1[c, 0], S1[c, 1],
                                   S1[c, 2], gap[c], ks[c], cs[c], release[c])
                flip = (1 if val > 0.0 else 0) != active[c]
            if flip:
                p = S1[c, 0] - gap[c]
                new = 1 - active[c]
                if p > 0.0 and release[c] == RELEASE_FORCE and cs[c] > 0.0 and \
                        ks[c] * p > 1e-9 * abs(ks[c] * p + cs[c] * S1[c, 1]):
                    # opened or closed while penetrated (force release)
                    sign = 1.0 if new == 0 else -1.0
                    acc[DISSIPATED] += sign * 0.5 * ks[c] * p * p
                active[c] = new
                e = ev_count[0]
                ev_time[e] = tau
                ev_contact[e] = c
                ev_kind[e] = new
                ev_speed[e] = S1[c, 1]
                ev_count[0] = e + 1
                changed = True
        if changed:
            _accel_links(f, kk, C, diag, R, gap, ks, cs, active, x, v, fl, a)
            acc[DISSIPATION] = _dissipation(C, diag, struct_damped, R, cs, active, v)
        track_scales(ctl, x, v)
        h = min(wanted, 1.2 * max(h, hs))
    ctl[TAU] = tau
    ctl[H] = h
    return status, row


@numba.njit(cache=True, nogil=True)
def _emit(tau, h, dt, k, W, Bt, kk, C, diag, struct_damped, archive, j, x0, v0, a0,
          x1, v1, a1, every, count, R, gap, ks, cs, active, acc, fv1, dp1,
          out_t, out_u, out_v, out_a, out_s, out_e, row, w, f, fl, xo, vo):
    """Rows of an accepted step [tau, tau + h]: the archived knots it covers (dense output,
    the contact forces of the frozen phase), then the step end when it is an every-th step;
    with the cumulative energies (trapezoidal rule from the start of the step)."""
    end = tau + h
    m = x0.size
    nc = R.shape[0]
    last_time = -1.0
    while j <= k and j * dt <= end * (1.0 + 1e-14) + 1e-300:
        if archive[j]:
            tj = j * dt
            theta = min(max((tj - tau) / h, 0.0), 1.0)
            hermite(theta, h, x0, v0, a0, x1, v1, a1, xo, vo)
            for c in range(W.shape[1]):
                w[c] = W[j, c]
            force(Bt, w, f)
            _accel_links(f, kk, C, diag, R, gap, ks, cs, active, xo, vo, fl, out_a[row])
            for i in range(m):
                out_u[row, i] = xo[i]
                out_v[row, i] = vo[i]
            for c in range(nc):
                out_s[row, c] = active[c]
            s = theta * h
            out_e[row, 0] = acc[WORK] + 0.5 * s * (acc[POWER] + _dot(f, vo))
            out_e[row, 1] = acc[DISSIPATED] + 0.5 * s * (
                acc[DISSIPATION] + _dissipation(C, diag, struct_damped, R, cs, active, vo))
            out_t[row] = tj
            last_time = tj
            row += 1
        j += 1
    if every > 0 and count % every == 0 and last_time < end * (1.0 - 1e-14):
        for i in range(m):
            out_u[row, i] = x1[i]
            out_v[row, i] = v1[i]
            out_a[row, i] = a1[i]
        for c in range(nc):
            out_s[row, c] = active[c]
        out_e[row, 0] = acc[WORK] + 0.5 * h * (acc[POWER] + fv1)
        out_e[row, 1] = acc[DISSIPATED] + 0.5 * h * (acc[DISSIPATION] + dp1)
        out_t[row] = end
        row += 1
    return j, row
