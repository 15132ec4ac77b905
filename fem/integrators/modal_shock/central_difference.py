"""Modal central differences with shock links (a compiled loop; contacts and energies in
``fem.integrators.modal_shock.common``).

Central differences (events "step", fixed step). The scheme of ``fem.integrators.
modal_newmark`` with beta = 0, gamma = 1/2: x_n+1 = x_n + dt v_n + dt^2/2 a_n, then
a_n+1 from the equation of motion at n+1 with the velocity v_n+1 = v_n + dt/2 (a_n + a_n+1)
(the damping, structural and of the contacts, is taken at n+1: a small linear solve over the
contacts in contact, none without contact damping). The state of a contact is decided at
each step from p_n+1 (and F_n+1 for ``release = "force"``): it changes at the first step where
p changes sign, and the event is dated at that step (accuracy O(dt)).
"""

from __future__ import annotations

import numba
import numpy as np

from fem.integrators.base import State
from fem.integrators.modal_common import DONE, FULL, ModalScheme, all_finite
from fem.integrators.modal_shock.common import (DISSIPATED, DISSIPATION, POWER, RELEASE_FORCE,
                                                WORK, ModalContacts, _LinkScheme)
from fem.linalg import small_solve

# ------------------------------------------------------------------------------------------
# central differences
class ShockCentralDifference(_LinkScheme, ModalScheme):
    """Central differences on a modal basis with plane contacts (module docstring).

    Parameters
    ----------
    basis : fem.modal.basis.ModalBasis
    contacts : ModalContacts
    times : (N + 1,) float
        The driver's grid (s): event times are its instants.
    archive_first : bool
        Whether the driver archives the initial instant.
    """

    def __init__(self, basis, contacts: ModalContacts, times, archive_first=True):
        ModalScheme.__init__(self, basis, "central_difference")
        self._setup_links(contacts, times, archive_first)
        self._operators = {}
        self._work = None

    def stability_limit(self):
        w = self.contacts.stiffest_frequency(self.kk)
        return 2.0 / w if w > 0 else None

    def operators(self, dt):
        ops = self._operators.get(dt)
        if ops is None:
            m = len(self.kk)
            hdt = 0.5 * dt
            if self.diag:
                cd = np.diag(self.C).copy()
                sinv = 1.0 / (1.0 + hdt * cd)
                RS = np.ascontiguousarray(self.R * sinv[None, :])
                dense = (np.zeros((0, 0)),) * 3
            else:
                cd = np.zeros(m)
                Si = np.linalg.inv(np.eye(m) + hdt * self.C)
                sinv = np.zeros(m)
                RS = np.ascontiguousarray((Si @ self.R.T).T)
                dense = (np.ascontiguousarray(Si.T),
                         np.ascontiguousarray((Si * self.kk[None, :]).T),
                         np.ascontiguousarray((Si @ self.C).T))
            SIG = np.ascontiguousarray(self.R @ RS.T)
            ops = (cd, sinv, RS, SIG) + dense
            self._operators[dt] = ops
        return ops

    def advance(self, dt, W, state: State, archive):
        cd, sinv, RS, SIG, SiT, PtT, QtT = self.operators(dt)
        W = np.ascontiguousarray(W, np.float64)
        archive = np.ascontiguousarray(archive, np.bool_)
        k = W.shape[0] - 1
        m = state.u.size
        nc = self.contacts.count
        count = int(np.count_nonzero(archive[1:]))
        out_u, out_v, out_a = (np.empty((count, m)) for _ in range(3))
        out_s = np.empty((count, nc))
        out_e = np.empty((count, 2))
        if self._work is None:
            self._work = (np.empty(m), np.empty(m), np.empty(nc), np.empty(nc), np.empty(nc),
                          np.empty(nc), np.zeros(nc, np.int64), np.empty((nc, nc)),
                          np.empty(nc), np.zeros(nc, np.int64))
        n0, row = 1, 0
        ev = self._ev
        while True:
            status, n0, row = _cd_loop(
                n0, k, dt, W, self.Bt, self.kk, cd, sinv, self.diag, SiT, PtT, QtT, self.C,
                self.struct_damped, state.u, state.v, state.a, archive, row, self.R, RS, SIG,
                self.gap, self.ks, self.cs, self.release, self.active, self.acc, *self._work,
                out_u, out_v, out_a, out_s, out_e, ev.time, ev.contact, ev.kind, ev.speed,
                ev.count)
            self._collect()
            if status == DONE:
                break
        self.pending.append((out_s, out_e))
        self.cursor += k
        self.accepted += k
        return (out_u, out_v, out_a), all_finite(state.u)


@numba.njit(cache=True, nogil=True)
def _cd_loop(n0, k, dt, W, Bt, kk, cd, sinv, diag, SiT, PtT, QtT, C, struct_damped, x, v, a,
             archive, row, R, RS, SIG, gap, ks, cs, release, active, acc,
             f, vt, pj, pprev, Fj, vs, cand, Mw, rhs, order,
             out_u, out_v, out_a, out_s, out_e, ev_time, ev_contact, ev_kind, ev_speed,
             ev_count):
    m = x.size
    nb = Bt.shape[0]
    nc = R.shape[0]
    h2 = 0.5 * dt * dt
    hdt = 0.5 * dt
    capacity = ev_time.size
    for j in range(nc):
        pprev[j] = -gap[j]
        for i in range(m):
            pprev[j] += R[j, i] * x[i]
    for n in range(n0, k + 1):
        if ev_count[0] + nc > capacity:
            return FULL, n, row
        # prediction, external force, acceleration and velocity without the contacts
        for j in range(nc):
            pj[j] = -gap[j]
        fv = 0.0
        dp = 0.0
        if diag:
            # simple loops over the modes, which the compiler vectorizes
            for i in range(m):
                f[i] = 0.0
            for c in range(nb):
                wc = W[n, c]
                for i in range(m):
                    f[i] += Bt[c, i] * wc
            for i in range(m):
                ut = x[i] + dt * v[i] + h2 * a[i]
                vti = v[i] + hdt * a[i]
                ai = (f[i] - kk[i] * ut - cd[i] * vti) * sinv[i]
                x[i] = ut
                a[i] = ai
                v[i] = vti + hdt * ai
                vt[i] = vti
            for i in range(m):
                fv += f[i] * v[i]
            if struct_damped:
                for i in range(m):
                    dp += cd[i] * v[i] * v[i]
            for j in range(nc):
                s = pj[j]
                for i in range(m):
                    s += R[j, i] * x[i]
                pj[j] = s
        else:
            for i in range(m):
                fi = 0.0
                for c in range(nb):
                    fi += Bt[c, i] * W[n, c]
                f[i] = fi
                vt[i] = v[i] + hdt * a[i]
                x[i] = x[i] + dt * v[i] + h2 * a[i]
                a[i] = 0.0
            for col in range(m):
                uj = x[col]
                vj = vt[col]
                fj = f[col]
                for i in range(m):
                    a[i] += SiT[col, i] * fj - PtT[col, i] * uj - QtT[col, i] * vj
            for i in range(m):
                v[i] = vt[i] + hdt * a[i]
                fv += f[i] * v[i]
                for j in range(nc):
                    pj[j] += R[j, i] * x[i]
        # contact forces
        any_force = False
        damped = False
        for j in range(nc):
            cand[j] = 1 if pj[j] > 0.0 else 0
            Fj[j] = 0.0
            if cand[j] == 1:
                any_force = True
                if cs[j] > 0.0:
                    damped = True
        if any_force:
            if not damped:
                for j in range(nc):
                    if cand[j] == 1:
                        Fj[j] = ks[j] * pj[j]
            else:
                _damped_forces(v, R, SIG, ks, cs, release, pj, hdt, cand, Fj, vs, Mw, rhs,
                               order)
            any_force = False
            for j in range(nc):
                if cand[j] == 1:
                    any_force = True
        if any_force:
            fv = 0.0
            dp = 0.0
            for i in range(m):
                corr = 0.0
                for j in range(nc):
                    corr += Fj[j] * RS[j, i]
                ai = a[i] - corr
                vi = vt[i] + hdt * ai
                a[i] = ai
                v[i] = vi
                fv += f[i] * vi
                if struct_damped:
                    dp += cd[i] * vi * vi
        if struct_damped and not diag:
            dp = 0.0
            for i in range(m):
                s = 0.0
                for col in range(m):
                    s += C[i, col] * v[col]
                dp += v[i] * s
        if damped:
            for j in range(nc):
                if cand[j] == 1 and cs[j] > 0.0:
                    s = 0.0
                    for i in range(m):
                        s += R[j, i] * v[i]
                    dp += cs[j] * s * s
        acc[WORK] += hdt * (acc[POWER] + fv)
        acc[POWER] = fv
        acc[DISSIPATED] += hdt * (acc[DISSIPATION] + dp)
        acc[DISSIPATION] = dp
        # state changes
        for j in range(nc):
            if cand[j] != active[j]:
                if pj[j] > 0.0 and pprev[j] > 0.0:
                    # opened or closed while penetrated: the elastic energy moves to or from
                    # the dissipated energy
                    sign = 1.0 if cand[j] == 0 else -1.0
                    acc[DISSIPATED] += sign * 0.5 * ks[j] * pj[j] * pj[j]
                s = 0.0
                for i in range(m):
                    s += R[j, i] * v[i]
                e = ev_count[0]
                ev_time[e] = n
                ev_contact[e] = j
                ev_kind[e] = cand[j]
                ev_speed[e] = s
                ev_count[0] = e + 1
                active[j] = cand[j]
            pprev[j] = pj[j]
        if archive[n]:
            for i in range(m):
                out_u[row, i] = x[i]
                out_v[row, i] = v[i]
                out_a[row, i] = a[i]
            for j in range(nc):
                out_s[row, j] = active[j]
            out_e[row, 0] = acc[WORK]
            out_e[row, 1] = acc[DISSIPATED]
            row += 1
    return DONE, k + 1, row


@numba.njit(cache=True, nogil=True)
def _damped_forces(v, R, SIG, ks, cs, release, pj, hdt, cand, Fj, vs, Mw, rhs, order):
    """Forces of the candidate contacts (cand) with contact damping at the new velocity:
    F_j + hdt c_j sum_l SIG_jl F_l = k_j p_j + c_j r_j . v*, v* the velocity without the
    contacts. A contact with release = "force" whose force comes out negative is dropped and
    the others solved again."""
    nc = R.shape[0]
    m = v.size
    for j in range(nc):
        vs[j] = 0.0
        if cand[j] == 1:
            s = 0.0
            for i in range(m):
                s += R[j, i] * v[i]
            vs[j] = s
    for _ in range(nc + 1):
        na = 0
        for j in range(nc):
            if cand[j] == 1:
                order[na] = j
                na += 1
        for r in range(na):
            jr = order[r]
            rhs[r] = ks[jr] * pj[jr] + cs[jr] * vs[jr]
            for s in range(na):
                Mw[r, s] = hdt * cs[jr] * SIG[jr, order[s]]
            Mw[r, r] += 1.0
        small_solve(Mw, rhs, na)
        dropped = False
        for r in range(na):
            jr = order[r]
            Fj[jr] = rhs[r]
            if release[jr] == RELEASE_FORCE and rhs[r] <= 0.0:
                cand[jr] = 0
                Fj[jr] = 0.0
                dropped = True
        if not dropped:
            return
