"""Shock links on a modal basis: central differences and ``adaptive2`` with unilateral plane
contacts (``fem.links.shock``).

Contacts. A plane contact j has the penetration p_j = ell_j . u - gap_j (positive in contact)
on the physical displacement u = T Phi q (the link's dofs must not carry an imposed motion).
With the row r_j = Phi^T T^T ell_j (m,) of the modal matrix at the link's dofs,
p_j = r_j . q - gap_j and p_j' = r_j . q'. In contact the link force on the structure is
-F_j ell_j with F_j = k_j p_j + c_j p_j' (N), so the generalized equations are

    q'' + Cg q' + diag(omega^2) q = Bg w(t) - sum_j F_j r_j   (contacts in contact).

A contact is in contact when p_j > 0, and, with ``release = "force"``, F_j > 0 as well (it
never pulls); with ``release = "gap"`` the force may pull while p_j > 0. The forces are worked
out from the penetrations at the link's dofs every step (O(m) per contact).

Central differences (events "step", fixed step). The scheme of ``fem.integrators.
modal_newmark`` with beta = 0, gamma = 1/2: x_n+1 = x_n + dt v_n + dt^2/2 a_n, then
a_n+1 from the equation of motion at n+1 with the velocity v_n+1 = v_n + dt/2 (a_n + a_n+1)
(the damping, structural and of the contacts, is taken at n+1: a small linear solve over the
contacts in contact, none without contact damping). The state of a contact is decided at
each step from p_n+1 (and F_n+1 for ``release = "force"``): it changes at the first step where
p changes sign, and the event is dated at that step (accuracy O(dt)).

adaptive2 (velocity Verlet with the apparent-frequency step rule of ``fem.integrators.adapt``).
Within a step the set of contacts in contact is frozen, so that the step is smooth and its
quintic Hermite dense output is as accurate as the step. With events "locate", after each
accepted step the state function of every contact (p, or min(k p, F) with
``release = "force"``, positive in contact) is sampled on the dense output; at a change the
instant is found by bisection on the Hermite interpolant, the step is taken again up to that
instant, and the contact changes state there. With events "step", states change at the step
ends. The contact stiffness enters the step rule through the apparent frequency.

Energies (J), cumulative terms tallied in the loops at the scheme's own instants:

* external work W = sum over steps of (h/2) (f_i . q'_i + f_i+1 . q'_i+1), f = Bg w (the
  trapezoidal rule of the power, consistent with the kinetic energy 1/2 |q'|^2 at the steps:
  for central differences the increment is f_i . (q_i+1 - q_i-1)/2 = f_i v_i dt to second
  order, as in the classical E_inj = sum f_i v_i dt);
* dissipated D: the same rule on q'.Cg q' + sum over contacts in contact of c_j p_j'^2, plus
  the elastic energy 1/2 k p^2 of a contact that opens while still penetrated (possible with
  ``release = "force"`` and contact damping), minus that of one that closes while penetrated.

The kinetic, potential and link energies are worked out from the archived states
(``row_energies``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from fem.errors import NotAvailableError, SolverError
from fem.integrators.base import State
from fem.integrators.modal_common import (ACCEPTED, DONE, FULL, H, HMAX, HMIN, HSTAB,
                                          NONFINITE, REJECTED, TAU, TOL, AdaptiveModalScheme,
                                          ModalScheme, accel, all_finite, count_archived, force,
                                          hermite, load_at, next_archived, plan_step,
                                          track_scales)
from fem.linalg import small_solve

RELEASE = {"force": 0, "gap": 1}
RELEASE_FORCE, RELEASE_GAP = 0, 1
#: slots of the accumulator array: external work, dissipated energy, their powers at the
#: current state
WORK, DISSIPATED, POWER, DISSIPATION = range(4)
#: samples of the dense output per step where the contact states are checked
SAMPLES = 4


@dataclass
class ModalContacts:
    """The plane contacts of an analysis, on the modal basis.

    R (nc, m): rows r_j = Phi^T T^T ell_j; gap, stiffness, damping (nc,); release (nc,) int
    (0 "force", 1 "gap"); link and side names per contact.
    """
    links: list
    sides: list
    R: np.ndarray
    gap: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    release: np.ndarray

    @property
    def count(self) -> int:
        return len(self.gap)

    @classmethod
    def build(cls, contacts, basis, model, where="analysis") -> "ModalContacts":
        """From ``fem.links.shock.PlaneContact`` objects (ell on all model dofs)."""
        T, G = model.constraints.T, model.constraints.G
        rows = []
        for c in contacts:
            if G.shape[1] and np.any(np.asarray(G.T @ c.ell).ravel() != 0):
                raise NotAvailableError(f"{where}.links: link '{c.link}' acts on dofs with an "
                                        f"imposed motion, which is not available yet on a "
                                        f"modal basis")
            free = np.asarray(T.T @ c.ell, float).ravel()
            rows.append(basis.shapes.T @ free)
        m = basis.size
        R = np.ascontiguousarray(np.array(rows, float).reshape(len(contacts), m))
        return cls(links=[c.link for c in contacts], sides=[c.side for c in contacts], R=R,
                   gap=np.array([c.gap for c in contacts], float),
                   stiffness=np.array([c.stiffness for c in contacts], float),
                   damping=np.array([c.damping for c in contacts], float),
                   release=np.array([RELEASE[c.release] for c in contacts], np.int64))

    def states(self, q, v) -> np.ndarray:
        """(nc,) int: 1 for the contacts in contact at (q, q') (module docstring)."""
        p = self.R @ q - self.gap
        f = self.stiffness * p + self.damping * (self.R @ v)
        closed = (p > 0) & ((self.release == RELEASE_GAP) | (f > 0))
        return closed.astype(np.int64)

    def forces(self, q, v, states) -> np.ndarray:
        """(rows, nc) normal forces F_j (N) of archived rows q, v (rows, m) and states."""
        p = q @ self.R.T - self.gap
        return states * (self.stiffness * p + self.damping * (v @ self.R.T))

    def stiffest_frequency(self, kk) -> float:
        """An upper estimate (rad/s) of the highest frequency with the links closed: every
        link closed on its first side (the sides of a two-planes obstacle exclude each other),
        damping left out."""
        K = np.diag(np.asarray(kk, float))
        seen = set()
        for j, name in enumerate(self.links):
            if name in seen:
                continue
            seen.add(name)
            K = K + self.stiffness[j] * np.outer(self.R[j], self.R[j])
        lam = np.linalg.eigvalsh(K)[-1] if len(K) else 0.0
        return float(np.sqrt(max(lam, 0.0)))


def row_energies(contacts: ModalContacts, kk, q, v, states):
    """Kinetic, potential and link energies (rows,) J of archived rows."""
    kinetic = 0.5 * np.sum(v * v, axis=1)
    potential = 0.5 * np.sum(kk[None, :] * q * q, axis=1)
    p = q @ contacts.R.T - contacts.gap
    link = np.sum(states * 0.5 * contacts.stiffness * p * p, axis=1)
    return kinetic, potential, link


class _Events:
    """Event buffers filled by the compiled loops, drained after each call."""

    def __init__(self, nc, capacity=1024):
        self.capacity = max(capacity, 4 * nc + 4)
        self.time = np.zeros(self.capacity)      # step index (fixed step) or local time (s)
        self.contact = np.zeros(self.capacity, np.int64)
        self.kind = np.zeros(self.capacity, np.int64)
        self.speed = np.zeros(self.capacity)
        self.count = np.zeros(1, np.int64)

    def drain(self):
        n = int(self.count[0])
        out = [(self.time[i], int(self.contact[i]), int(self.kind[i]), self.speed[i])
               for i in range(n)]
        self.count[0] = 0
        return out


class _LinkScheme:
    """What both schemes with links share: contacts, states, accumulators, archived extras
    and events."""

    def _setup_links(self, contacts: ModalContacts, times, archive_first: bool):
        self.contacts = contacts
        self.R = contacts.R
        self.gap = contacts.gap
        self.ks = contacts.stiffness
        self.cs = contacts.damping
        self.release = contacts.release
        self.active = np.zeros(contacts.count, np.int64)
        self.acc = np.zeros(4)
        self.times = np.asarray(times, float)
        self.cursor = 0
        self.archive_first = bool(archive_first)
        self.pending = []          # (states (rows, nc), energies (rows, 2)) per archived block
        self.events = []           # (time s, contact, kind 1 impact / 0 separation, speed)
        self._ev = _Events(contacts.count)
        self.struct_damped = bool(np.any(self.C != 0))

    def initial_acceleration(self, t0, u, v, w0) -> np.ndarray:
        self.active[:] = self.contacts.states(u, v)
        f = self.basis.B @ w0
        p = self.R @ u - self.gap
        pd = self.R @ v
        F = self.active * (self.ks * p + self.cs * pd)
        self.acc[:] = 0.0
        self.acc[POWER] = float(f @ v)
        self.acc[DISSIPATION] = float(v @ (self.C @ v)) + float(np.sum(self.active * self.cs
                                                                      * pd * pd))
        if self.archive_first:
            self.pending.append((self.active[None, :].astype(float), np.zeros((1, 2))))
        return f - self.C @ v - self.kk * u - F @ self.R

    def take_extras(self, rows: int):
        """(states (rows, nc), energies (rows, 2)) of the next ``rows`` archived rows."""
        while self.pending and len(self.pending[0][0]) == 0:
            self.pending.pop(0)          # a call that archived nothing
        s, e = self.pending.pop(0)
        if len(s) != rows:
            raise RuntimeError(f"archived link rows out of step ({len(s)} for {rows})")
        return s, e

    def _collect(self, base_time=None):
        """Move the events of the compiled loop to ``events``: their times are step indices
        from the call's start (``base_time`` None) or local times from ``base_time`` (s)."""
        for t, j, kind, speed in self._ev.drain():
            when = self.times[self.cursor + int(t)] if base_time is None else base_time + t
            self.events.append((float(when), j, kind, float(speed)))

    def event_rows(self):
        """(time, kind, link, detail) rows of the events, in time order."""
        rows = []
        for t, j, kind, speed in sorted(self.events, key=lambda e: e[0]):
            rows.append((t, "impact" if kind else "separation", self.contacts.links[j],
                         f"side {self.contacts.sides[j]}, approach speed {speed:.9g} m/s"))
        return rows


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
        W = np.ascontiguousarray(W, np.float64)
        k = W.shape[0] - 1
        archive = np.ascontiguousarray(archive, np.bool_)
        m = state.u.size
        nc = self.contacts.count
        cap = int(np.count_nonzero(archive[1:])) + (256 if self.every else 0) + 1
        ctl = self.start_call(W, state)
        t_call = self.times[self.cursor]
        parts = []
        ok = True
        while True:
            out_t = np.empty(cap)
            out = [np.empty((cap, m)) for _ in range(3)]
            out_s = np.empty((cap, nc))
            out_e = np.empty((cap, 2))
            status, rows = _adapt2_loop(
                dt, k, W, self.Bt, self.kk, self.C, self.diag, self.struct_damped,
                state.u, state.v, state.a, archive, self.every, ctl, self.R, self.gap,
                self.ks, self.cs, self.release, self.active, self.locate, self.acc,
                self.omax, self.rho_c, self.kr2, self.cr2, out_t, *out, out_s, out_e,
                self._ev.time, self._ev.contact, self._ev.kind, self._ev.speed,
                self._ev.count)
            self._collect(t_call)
            parts.append((out_t[:rows], out[0][:rows], out[1][:rows], out[2][:rows],
                          out_s[:rows], out_e[:rows]))
            if status == DONE:
                break
            if status == FULL:
                cap *= 2
                continue
            if status == NONFINITE:
                ok = False
                break
            raise SolverError(f"{self.name}: the step needed near t = "
                              f"{t_call + ctl[TAU]:.9g} s is below min_step = "
                              f"{self.min_step:.3g} s (loosen the tolerance or lower min_step)")
        self.time += k * dt
        self.cursor += k
        self.accepted = int(ctl[ACCEPTED])
        self.rejected = int(ctl[REJECTED])
        t, u, v, a, s, e = (np.concatenate([p[i] for p in parts]) for i in range(6))
        self.row_offsets = t if self.every else None
        self.pending.append((s, e))
        return (u, v, a), ok

    def run(self, *args):
        """Not used: ``advance`` calls the compiled loop with the contacts' arrays."""
        raise TypeError("ShockAdaptive2 integrates through advance()")


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
