"""Shock links in physical space with the Newmark family (Newmark, HHT-alpha, central
differences).

Kinematics. Each link has a relative translation d = D u (3,) on the free dofs (see
``fem.links.shock``); the m links of an analysis stack into vectors of 3 m entries. The force
of the links on the structure is D^T phi, phi (3 m,) the force on each link's first node.

Step. With the predictors u~, v~ and the linear right-hand side of ``fem.integrators.newmark``,
the acceleration of a step solves  S a = r + (1 + alpha) D^T phi_n+1 - alpha D^T phi_n, so
    a = a0 + Z ((1 + alpha) phi_n+1 - alpha phi_n),   a0 = S^-1 r,   Z = S^-1 D^T  (n, 3 m)
and the link accelerations y = D a solve the small system (3 m unknowns, W = D Z)
    y = D a0 + W ((1 + alpha) phi(y) - alpha phi_n),
    phi(y) = contact law at d = D u~ + beta dt^2 y, d' = D v~ + gamma dt y.
The law is piecewise smooth (contact open or closed, stick or slip): a semismooth Newton
iteration, started from the force of the previous step, runs until the residual vanishes to
round-off; for plane contacts without friction the law is affine for a given contact set, so
this is an active-set iteration that stops when the set no longer changes. When no set is
consistent (a force that jumps where p = 0, a damped contact reached at the very end of the
step), the contacts still changing after a few iterations keep their state over the step and
change at the next one; a residual that still does not vanish stops the analysis with a
SolverError. With central differences (beta = 0) the displacement of the step is explicit and
only the dampers of the links are implicit, as the structural ones are. Z and W are computed
once per step size; a step with every contact open costs three sparse products of D.

Events. A contact closing or opening is an event. With ``events = "step"`` it is dated at the
end of the step where the contact state changed. With ``events = "locate"`` the step is
split at the crossing: a first estimate is the root of the contact function (penetration, or
with release = "force" min(p, p + c p' / k)) along the cubic Hermite interpolant of d from
(d, d') at both ends of the step; the step is redone up to it with that contact in its former
state, and the estimate corrected by Newton steps on the contact function of the redone state,
so that the state switches where the computed motion crosses. There the contact state is
switched (the acceleration jumps by M^-1 D^T (phi_new - phi_old) when the force jumps, as at a
damped impact), and the rest of the step is computed from that instant, itself split again if
another contact changes.

Energies (J). kinetic 1/2 v^T M v, potential 1/2 u^T K u (free dofs), link_energy (1/2 k p^2 of
the closed contacts, 1/2 kt |delta|^2 of their tangential springs), and cumulated over the
steps with the trapezoidal rule: external_work += du . B (w_n + w_n+1)/2, dissipated +=
du . C (v_n + v_n+1)/2 (structural dampers) + dp (c p'_n + c p'_n+1)/2 (link dampers, while
closed) + the tangential damper work in stick + the friction slip work f_t . (slip increment),
+ the energy a contact holds when it opens (1/2 k p^2 with release = "force" and the
tangential spring), - the energy it gets when it closes already penetrated. For the
trapezoidal rule (beta = 1/4, gamma = 1/2) without links the balance is exact; for a plane
contact it is exact while the contact state does not change within a step.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from fem.errors import NotAvailableError, SolverError
from fem.integrators.base import initial_acceleration
from fem.integrators.newmark import NewmarkFamily, _predict
from fem.linalg import Factor, banded_solve, csr_parts, small_solve
from fem.links.contact_law import (ACT, ANC, BLK, CIRCLE, CN, CT, DIR, ENN, ENT, FDN, FN, FTD,
                                   FTM, GAP, KIND, KN, KT, MU, NP, NV, PDOT, PEN, PLANE, REL,
                                   RELEASE_FORCE, RELEASE_GAP, SLIP, contact_law)

# energy accumulators E (2, 3): external work, structural damping, link dissipation
EW, ES, EL = 0, 1, 2
# event modes of the compiled step
STEP_EVENTS, LOCATE, IGNORE = 0, 1, 2
# statuses of the compiled loops
DONE, EVENT, NOT_SETTLED = 0, 1, 2
MAX_ITERATIONS = 40
#: iterations after which the contacts still changing keep their state for the step
HOLD_AFTER = 12
TOLERANCE = 1e-11
#: step splits allowed within one step of the grid (events = "locate")
MAX_SPLITS = 16
#: a crossing within this fraction of a step from one of its ends is dated at that end
END_FRACTION = 1e-9


@numba.njit(cache=True, nogil=True)
def _rows_product(Dd, Di, Dp, x, out):
    for r in range(out.size):
        s = 0.0
        for kk in range(Dp[r], Dp[r + 1]):
            s += Dd[kk] * x[Di[kk]]
        out[r] = s


@numba.njit(cache=True, nogil=True)
def _solve_links(dt, beta, gamma, alpha, Wl, P, cv_old, cv_new, phi_old, phi, wv, Jd, Jv, Jac,
                 flags):
    """The link accelerations y of the step (see the module docstring); wv rows: 0 D u~,
    1 D v~, 2 D a0, 3 y, 4 d, 5 d', 6 residual, 7 forcing, 8 correction. Returns the number of
    iterations, or -1 when the contact state does not settle."""
    m3 = Wl.shape[0]
    s = 1.0 + alpha
    bd = beta * dt * dt
    gd = gamma * dt
    Dut, Dvt, Da0, y, d, dd, R, g, dy = (wv[0], wv[1], wv[2], wv[3], wv[4], wv[5], wv[6],
                                         wv[7], wv[8])
    any_old = False
    for r in range(m3):
        if phi_old[r] != 0.0:
            any_old = True
    for r in range(m3):
        acc = Da0[r]
        if any_old:
            for q in range(m3):
                acc += Wl[r, q] * phi_old[q]
        y[r] = acc
    # the size of the link accelerations of the step: the residual is judged against it
    scale0 = 0.0
    for r in range(m3):
        scale0 = max(scale0, abs(y[r]), abs(Da0[r]))
    mask = flags
    for it in range(MAX_ITERATIONS):
        for r in range(m3):
            d[r] = Dut[r] + bd * y[r]
            dd[r] = Dvt[r] + gd * y[r]
        contact_law(P, d, dd, cv_old, cv_new, phi, Jd, Jv, mask)
        if it >= HOLD_AFTER:
            # no consistent contact set (a force that jumps where p = 0, e.g. a damped
            # contact reached at the very end of the step): the contacts that would change
            # keep their state over this step, and change at the next one
            held = False
            for c in range(P.shape[0]):
                if mask[c] < 0.0 and cv_new[c, ACT] != cv_old[c, ACT]:
                    if not held and mask is flags:
                        mask = flags.copy()
                    mask[c] = cv_old[c, ACT]
                    held = True
            if held:
                contact_law(P, d, dd, cv_old, cv_new, phi, Jd, Jv, mask)
        for r in range(m3):
            g[r] = s * phi[r] - alpha * phi_old[r]
        rn = 0.0
        scale = scale0
        for r in range(m3):
            wg = 0.0
            for q in range(m3):
                wg += Wl[r, q] * g[q]
            R[r] = y[r] - Da0[r] - wg
            rn = max(rn, abs(R[r]))
            scale = max(scale, abs(y[r]), abs(Da0[r]), abs(wg))
        if rn <= TOLERANCE * scale:
            return it
        m = m3 // 3
        for r in range(m3):
            for q in range(m3):
                Jac[r, q] = 1.0 if r == q else 0.0
            for b in range(m):
                for p in range(3):
                    w = Wl[r, 3 * b + p]
                    if w == 0.0:
                        continue
                    for q in range(3):
                        Jac[r, 3 * b + q] -= s * w * (bd * Jd[b, p, q] + gd * Jv[b, p, q])
            dy[r] = -R[r]
        if not small_solve(Jac, dy, dy.size):
            return -1
        for r in range(m3):
            y[r] += dy[r]
    return -1


# --------------------------------------------------------------------------- one step

@numba.njit(cache=True, nogil=True)
def _finish_step(i, dt, beta, gamma, alpha, ut, vt, Cd, Ci, Cp, B, W, U, V, A, cur,
                 Dd, Di, Dp, Zd, Zi, Zp, Wl, P, PHI, CV, DB, E, event_mode, ev_step,
                 ev_contact, ev_kind, ev_speed, nev, wv, Jd, Jv, Jac, flags):
    """Links, state update, energies and events of step i (W[i - 1] -> W[i]); the new state
    goes to buffer 1 - cur, whose acceleration A[1 - cur] holds a0 on entry. Returns DONE,
    EVENT (a contact state changed and event_mode is LOCATE) or NOT_SETTLED."""
    nxt = 1 - cur
    n = ut.size
    m3 = Wl.shape[0]
    s = 1.0 + alpha
    _rows_product(Dd, Di, Dp, ut, wv[0])
    _rows_product(Dd, Di, Dp, vt, wv[1])
    a0 = A[nxt]
    _rows_product(Dd, Di, Dp, a0, wv[2])
    its = _solve_links(dt, beta, gamma, alpha, Wl, P, CV[cur], CV[nxt], PHI[cur], PHI[nxt],
                       wv, Jd, Jv, Jac, flags)
    if its < 0:
        return NOT_SETTLED
    for r in range(m3):
        DB[nxt, r] = wv[4, r]
    for col in range(m3):
        g = s * PHI[nxt, col] - alpha * PHI[cur, col]
        if g != 0.0:
            for kk in range(Zp[col], Zp[col + 1]):
                A[nxt, Zi[kk]] += Zd[kk] * g
    bd = beta * dt * dt
    gd = gamma * dt
    nb = B.shape[1]
    u0, u1, v0, v1, a1 = U[cur], U[nxt], V[cur], V[nxt], A[nxt]
    for j in range(n):
        u1[j] = ut[j] + bd * a1[j]
        v1[j] = vt[j] + gd * a1[j]
    # work of the loads and of the structural dampers over the step (trapezoidal rule)
    work = 0.0
    damped = 0.0
    w0 = W[i - 1]
    w1 = W[i]
    for j in range(n):
        du = u1[j] - u0[j]
        f = 0.0
        for c in range(nb):
            f += B[j, c] * (w1[c] + w0[c])
        cv = 0.0
        for kk in range(Cp[j], Cp[j + 1]):
            q = Ci[kk]
            cv += Cd[kk] * (v0[q] + v1[q])
        work += du * f
        damped += du * cv
    work *= 0.5
    damped *= 0.5
    lost = 0.0
    changed = False
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        old = CV[cur, c, ACT] > 0.5
        new = CV[nxt, c, ACT] > 0.5
        lost += 0.5 * (CV[cur, c, FDN] + CV[nxt, c, FDN]) * (CV[nxt, c, PEN] - CV[cur, c, PEN])
        for q in range(3):
            lost += (0.5 * (CV[cur, c, FTD + q] + CV[nxt, c, FTD + q])
                     * (DB[nxt, o + q] - DB[cur, o + q]))
        lost += CV[nxt, c, SLIP]
        if old and not new:
            pen = max(CV[nxt, c, PEN], 0.0)
            lost += 0.5 * P[c, KN] * pen * pen + CV[cur, c, ENT]
        elif new and not old:
            pen = max(CV[cur, c, PEN], 0.0)
            lost -= 0.5 * P[c, KN] * pen * pen
        if old != new:
            changed = True
            if event_mode == STEP_EVENTS:
                e = nev[0]
                ev_step[e] = i
                ev_contact[e] = c
                ev_kind[e] = 1 if new else 0
                ev_speed[e] = CV[nxt, c, PDOT]
                nev[0] = e + 1
    E[nxt, EW] = E[cur, EW] + work
    E[nxt, ES] = E[cur, ES] + damped
    E[nxt, EL] = E[cur, EL] + lost
    if changed and event_mode == LOCATE:
        return EVENT
    return DONE


@numba.njit(cache=True, nogil=True)
def archive_row(row, u, v, a, out_u, out_v, out_a, out_c, out_e, Md, Mi, Mp, Kd, Ki, Kp,
                cv, e):
    """Archived values of one instant: the state, per contact (normal force, penetration,
    closed, friction force) and the energies (kinetic, potential, link, dissipated, work)."""
    n = u.size
    kinetic = 0.0
    potential = 0.0
    for j in range(n):
        out_u[row, j] = u[j]
        out_v[row, j] = v[j]
        out_a[row, j] = a[j]
        mv = 0.0
        for kk in range(Mp[j], Mp[j + 1]):
            mv += Md[kk] * v[Mi[kk]]
        ku = 0.0
        for kk in range(Kp[j], Kp[j + 1]):
            ku += Kd[kk] * u[Ki[kk]]
        kinetic += 0.5 * v[j] * mv
        potential += 0.5 * u[j] * ku
    stored = 0.0
    for c in range(cv.shape[0]):
        out_c[row, c, 0] = cv[c, FN]
        out_c[row, c, 1] = cv[c, PEN]
        out_c[row, c, 2] = cv[c, ACT]
        out_c[row, c, 3] = cv[c, FTM]
        stored += cv[c, ENN] + cv[c, ENT]
    out_e[row, 0] = kinetic
    out_e[row, 1] = potential
    out_e[row, 2] = stored
    out_e[row, 3] = e[ES] + e[EL]
    out_e[row, 4] = e[EW]


@numba.njit(cache=True, nogil=True)
def _linked_banded(i0, k, dt, beta, gamma, alpha, Kd, Ki, Kp, Cd, Ci, Cp, Md, Mi, Mp, band,
                   perm, B, W, U, V, A, cur, archive, row, out_u, out_v, out_a, out_c, out_e,
                   Dd, Di, Dp, Zd, Zi, Zp, Wl, P, PHI, CV, DB, E, event_mode, ev_step,
                   ev_contact, ev_kind, ev_speed, nev, flags):
    """Steps i0 + 1 ... k; returns (status, step, buffer holding the state, archived rows).
    On EVENT the step ``step`` is computed into the other buffer and not taken."""
    n = U.shape[1]
    m3 = Wl.shape[0]
    m = m3 // 3
    ut = np.empty(n)
    vt = np.empty(n)
    rhs = np.empty(n)
    wv = np.empty((9, m3))
    Jd = np.empty((m, 3, 3))
    Jv = np.empty((m, 3, 3))
    Jac = np.empty((m3, m3))
    for i in range(i0 + 1, k + 1):
        _predict(dt, beta, gamma, alpha, Kd, Ki, Kp, Cd, Ci, Cp, B, W, i, U[cur], V[cur],
                 A[cur], ut, vt, rhs)
        banded_solve(band, perm, rhs, A[1 - cur])
        status = _finish_step(i, dt, beta, gamma, alpha, ut, vt, Cd, Ci, Cp, B, W, U, V,
                              A, cur, Dd, Di, Dp, Zd, Zi, Zp, Wl, P, PHI, CV, DB, E,
                              event_mode, ev_step, ev_contact, ev_kind, ev_speed, nev, wv, Jd,
                              Jv, Jac, flags)
        if status != DONE:
            return status, i, cur, row
        cur = 1 - cur
        if archive[i]:
            archive_row(row, U[cur], V[cur], A[cur], out_u, out_v, out_a, out_c, out_e, Md, Mi,
                        Mp, Kd, Ki, Kp, CV[cur], E[cur])
            row += 1
    return DONE, k, cur, row


# --------------------------------------------------------------------------- the scheme

class LinkedNewmark(NewmarkFamily):
    """The Newmark family with shock links (``fem.links.shock.ShockLink``) on the free dofs.

    ``start`` must be called before the driver: it sets the grid times, the initial contact
    state and the initial acceleration (with the link forces). After the run, ``events``
    holds (time, kind, link, detail) rows and ``take_rows`` gives the link and energy series
    of the archived instants, in order.
    """

    def __init__(self, system, links, T, beta=0.25, gamma=0.5, alpha=0.0, name="newmark",
                 events="step"):
        super().__init__(system, beta, gamma, alpha, name)
        self.links = links
        self.mode = LOCATE if events == "locate" else STEP_EVENTS
        D = sp.vstack([lk.D @ T for lk in links]).tocsr()
        D.eliminate_zeros()
        self.D = D
        self._D = csr_parts(D)
        self._M = csr_parts(system.mass)
        self.contacts = [(b, c) for b, lk in enumerate(links) for c in lk.contacts]
        P = np.zeros((len(self.contacts), NP))
        for i, (b, c) in enumerate(self.contacts):
            P[i, BLK] = b
            P[i, KIND] = CIRCLE if c.kind == "circle" else PLANE
            P[i, DIR:DIR + 3] = c.direction
            P[i, GAP] = c.gap
            P[i, KN] = c.stiffness
            P[i, CN] = c.damping
            P[i, REL] = RELEASE_GAP if c.release == "gap" else RELEASE_FORCE
            P[i, MU] = c.friction
            P[i, KT] = c.tangential_stiffness if c.tangential_stiffness > 0 else c.stiffness
            P[i, CT] = c.tangential_damping
        self.P = P
        self._free = np.full(len(self.contacts), -1.0)
        nc, m3, n = len(self.contacts), 3 * len(links), system.size
        self.U, self.V, self.A = (np.zeros((2, n)) for _ in range(3))
        self.PHI = np.zeros((2, m3))
        self.DB = np.zeros((2, m3))
        self.CV = np.zeros((2, nc, NV))
        self.E = np.zeros((2, 3))
        self.cur = 0
        self._ops: dict[float, tuple] = {}
        self._spare: dict[float, tuple] = {}
        self.events: list[tuple] = []
        self._pending: list[tuple] = []
        self._times = None
        self._pos = 0
        self._where = name

    # ------------------------------------------------------------------ set-up
    def stability_limit(self):
        """Central differences: the contact stiffnesses count in the highest frequency."""
        if 2 * self.beta >= self.gamma >= 0.5:
            return None
        from types import SimpleNamespace

        from fem.integrators.base import highest_frequency

        K = self.system.stiffness.copy()
        for i, (b, c) in enumerate(self.contacts):
            rows = self.D[3 * b:3 * b + 3]
            K = K + (c.stiffness + (self.P[i, KT] if c.friction > 0 else 0.0)) * (rows.T @ rows)
        omega = highest_frequency(SimpleNamespace(mass=self.system.mass, stiffness=K.tocsr()))
        if omega == 0:
            return None
        return 1.0 / (omega * np.sqrt(max(self.gamma / 2 - self.beta, 1e-300)))

    def start(self, times, state, w0, archived: bool):
        """Initial contact state and acceleration at times[0]; queues the initial row."""
        self._times = np.asarray(times, float)
        self._pos = 0
        c = self.cur = 0
        self.U[c], self.V[c] = state.u, state.v
        d = self.D @ state.u
        dd = self.D @ state.v
        self.CV[c] = 0.0
        self.CV[c][:, ANC:ANC + 3] = d.reshape(-1, 3)[self.P[:, BLK].astype(int)]
        cv = self.CV[c].copy()
        phi = np.zeros_like(self.PHI[c])
        m = len(self.links)
        J = np.zeros((m, 3, 3))
        contact_law(self.P, d, dd, self.CV[c], cv, phi, J, J.copy(), self._free)
        # a contact closed at the start while its surfaces slide is sliding: its tangential
        # spring starts at the friction limit, against the sliding velocity
        for i in range(len(self.contacts)):
            if cv[i, ACT] > 0.5 and self.P[i, MU] > 0:
                o = 3 * int(self.P[i, BLK])
                n = self._normal(i, d)
                vt = dd[o:o + 3] - (n @ dd[o:o + 3]) * n
                speed = float(np.linalg.norm(vt))
                if speed > 0:
                    slip = self.P[i, MU] * max(cv[i, FN], 0.0) / self.P[i, KT]
                    self.CV[c][i, ANC:ANC + 3] = d[o:o + 3] - slip * vt / speed
        contact_law(self.P, d, dd, self.CV[c], cv, phi, J, J.copy(), self._free)
        self.CV[c], self.PHI[c], self.DB[c] = cv, phi, d
        self.E[c] = 0.0
        force = self.system.B @ w0 + self.D.T @ phi
        self.A[c] = initial_acceleration(self.system, force, state.u, state.v)
        state.a = self.A[c].copy()
        if archived:
            self._queue_row(self.U[c], self.V[c], self.A[c], self.CV[c], self.E[c])

    def _queue_row(self, u, v, a, cv, e):
        n = u.size
        out = [np.empty((1, n)) for _ in range(3)]
        oc = np.empty((1, len(self.contacts), 4))
        oe = np.empty((1, 5))
        archive_row(0, u, v, a, *out, oc, oe, *self._M, *self._K, cv, e)
        self._pending.append((oc, oe))

    def operators(self, dt: float, keep: bool = True):
        """(factor, Z as CSC parts, W) for a step size; the grid's sizes are kept, the
        sizes of split steps in a small cache."""
        ops = self._ops.get(dt) or self._spare.get(dt)
        if ops is not None:
            return ops
        if keep:
            factor = self.factor(dt)
        else:
            s = 1.0 + self.alpha
            S = (self.system.mass + (s * self.gamma * dt) * self.system.damping
                 + (s * self.beta * dt * dt) * self.system.stiffness)
            factor = Factor(S, what=f"iteration matrix of {self.name} (dt = {dt:g} s)")
        DT = self.D.T.toarray()
        Z = np.column_stack([factor.solve(np.ascontiguousarray(DT[:, j]))
                             for j in range(DT.shape[1])]) if DT.shape[1] else DT
        Wl = np.asarray(self.D @ Z)
        Wl = np.ascontiguousarray(0.5 * (Wl + Wl.T))
        Zc = sp.csc_matrix(Z)
        Zc.eliminate_zeros()
        ops = (factor, csr_parts_csc(Zc), Wl)
        if keep:
            self._ops[dt] = ops
        else:
            if len(self._spare) >= 4:
                self._spare.pop(next(iter(self._spare)))
            self._spare[dt] = ops
        return ops

    # ------------------------------------------------------------------ stepping
    def advance(self, dt, W, state, archive):
        k = W.shape[0] - 1
        count = int(np.count_nonzero(archive[1:]))
        n = state.u.size
        out_u, out_v, out_a = (np.empty((count, n)) for _ in range(3))
        out_c = np.empty((count, len(self.contacts), 4))
        out_e = np.empty((count, 5))
        outs = (out_u, out_v, out_a, out_c, out_e)
        W = np.ascontiguousarray(W, np.float64)
        archive = np.ascontiguousarray(archive, np.bool_)
        times = self._times[self._pos:self._pos + k + 1]
        ops = self.operators(dt)
        ev = self._event_buffers(k)
        i0, row = 0, 0
        while True:
            status, i, row = self._run(ops, dt, W, i0, k, archive, row, outs, self.mode, ev)
            if status == DONE:
                break
            if status == NOT_SETTLED:
                self._not_settled(times[i])
            self._locate(times[i - 1], times[i], W[i - 1], W[i])
            if archive[i]:
                c = self.cur
                archive_row(row, self.U[c], self.V[c], self.A[c], *outs, *self._M, *self._K,
                            self.CV[c], self.E[c])
                row += 1
            i0 = i
        self._record_step_events(times, ev)
        self._pos += k
        c = self.cur
        state.u[:], state.v[:], state.a[:] = self.U[c], self.V[c], self.A[c]
        self._pending.append((out_c, out_e))
        ok = bool(np.isfinite(self.U[c]).all() and np.isfinite(out_u).all())
        return (out_u, out_v, out_a), ok

    def _event_buffers(self, k):
        size = k * max(len(self.contacts), 1) + 1
        return (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64),
                np.zeros(size), np.zeros(1, np.int64))

    def _run(self, ops, dt, W, i0, k, archive, row, outs, mode, ev, flags=None):
        factor, Z, Wl = ops
        flags = self._free if flags is None else flags
        if factor.banded:
            status, i, cur, row = _linked_banded(
                i0, k, dt, self.beta, self.gamma, self.alpha, *self._K, *self._C, *self._M,
                factor.band, factor.perm, self._B, W, self.U, self.V, self.A, self.cur,
                archive, row, *outs, *self._D, *Z, Wl, self.P, self.PHI, self.CV, self.DB,
                self.E, mode, *ev, flags)
            self.cur = cur
            return status, i, row
        return self._run_sparse(factor, Z, Wl, dt, W, i0, k, archive, row, outs, mode, ev, flags)

    def _run_sparse(self, factor, Z, Wl, dt, W, i0, k, archive, row, outs, mode, ev, flags):
        n = self.system.size
        m3 = Wl.shape[0]
        ut, vt, rhs = np.empty(n), np.empty(n), np.empty(n)
        wv = np.empty((9, m3))
        Jd = np.empty((m3 // 3, 3, 3))
        Jv = np.empty((m3 // 3, 3, 3))
        Jac = np.empty((m3, m3))
        for i in range(i0 + 1, k + 1):
            c = self.cur
            _predict(dt, self.beta, self.gamma, self.alpha, *self._K, *self._C, self._B, W, i,
                     self.U[c], self.V[c], self.A[c], ut, vt, rhs)
            self.A[1 - c] = factor.solve(rhs)
            status = _finish_step(i, dt, self.beta, self.gamma, self.alpha, ut, vt,
                                  *self._C, self._B, W, self.U, self.V, self.A, c, *self._D,
                                  *Z, Wl, self.P, self.PHI, self.CV, self.DB, self.E, mode,
                                  *ev, wv, Jd, Jv, Jac, flags)
            if status != DONE:
                return status, i, row
            self.cur = c = 1 - c
            if archive[i]:
                archive_row(row, self.U[c], self.V[c], self.A[c], *outs, *self._M, *self._K,
                            self.CV[c], self.E[c])
                row += 1
        return DONE, k, row

    def _single(self, h, w_a, w_b, mode, t_end, flags=None):
        """One step of size h from the current state; DONE (taken) or EVENT (computed into
        the other buffer). ``flags`` imposes contact states (see ``contact_law``)."""
        ops = self.operators(h, keep=False)
        W = np.ascontiguousarray(np.vstack([w_a, w_b]), np.float64)
        archive = np.zeros(2, np.bool_)
        empty = (np.empty((0, self.system.size)),) * 3 + (np.empty((0, len(self.contacts), 4)),
                                                        np.empty((0, 5)))
        status, _, _ = self._run(ops, h, W, 0, 1, archive, 0, empty, mode,
                                 self._event_buffers(1), flags)
        if status == NOT_SETTLED:
            self._not_settled(t_end)
        return status

    def _not_settled(self, t):
        raise SolverError(f"{self._where}: the contact state of the links does not settle "
                          f"within the step ending at t = {t:.9g} s (no consistent set of "
                          f"closed contacts after {MAX_ITERATIONS} iterations); reduce the step")

    # ------------------------------------------------------------------ events
    def _locate(self, t_a, t_b, w_a, w_b):
        """The step t_a -> t_b has been computed into the other buffer and a contact state
        changed: split it at the crossings (see the module docstring)."""
        h = t_b - t_a
        for _ in range(MAX_SPLITS):
            theta, which = self._crossing(h)
            before = self.CV[self.cur][:, ACT].copy()
            new = self.CV[1 - self.cur][:, ACT].copy()
            if theta <= END_FRACTION:
                t_star, w_star = t_a, w_a
            else:
                t_star, w_star = self._land(t_a, t_b, w_a, w_b, theta, which)
            flags = self.CV[self.cur][:, ACT].copy()
            flags[which] = new[which]
            self._switch(flags, t_star, before)
            if t_star == t_b:
                return
            t_a, w_a, h = t_star, w_star, t_b - t_star
            if self._single(h, w_a, w_b, LOCATE, t_b) == DONE:
                return
        # too many crossings in one step: take it as computed, its changes dated at t_b
        before = self.CV[self.cur][:, ACT].copy()
        self.cur = 1 - self.cur
        self._record(t_b, before)

    def _land(self, t_a, t_b, w_a, w_b, theta, which):
        """Redo the step from t_a up to the crossing at t_a + theta (t_b - t_a), contact
        ``which`` kept in its former state; the crossing estimate is then corrected by Newton
        steps on the contact function of the computed state, so that the contact state
        switches where the computed motion crosses. Returns the crossing time and loads."""
        h = t_b - t_a
        saved = self._save()
        flags = self._free.copy()
        flags[which] = self.CV[self.cur][which, ACT]       # still in its state before
        for attempt in range(4):
            if theta >= 1.0 - END_FRACTION:
                t_star, w_star = t_b, w_b
            else:
                t_star = t_a + theta * h
                w_star = self.system.load_values(np.array([t_star]))[0]
            self._single(t_star - t_a, w_a, w_star, IGNORE, t_star, flags)
            if t_star == t_b:
                break
            f, rate = self._contact_now(which)
            if attempt == 3 or rate == 0.0 or abs(f) <= 1e-13 * abs(rate) * h:
                break
            step = -f / (rate * h)
            if not END_FRACTION < theta + step < 1.0 - END_FRACTION or abs(step) > 0.5:
                break
            self._restore(saved)
            theta += step
        return t_star, w_star

    def _save(self):
        c = self.cur
        return c, [x[c].copy() for x in (self.U, self.V, self.A, self.PHI, self.CV, self.DB,
                                          self.E)]

    def _restore(self, saved):
        c, arrays = saved
        self.cur = c
        for x, y in zip((self.U, self.V, self.A, self.PHI, self.CV, self.DB, self.E), arrays):
            x[c] = y

    def _normal(self, i, d):
        """The contact normal of contact i at link displacements d."""
        P = self.P[i]
        if P[KIND] == PLANE:
            return P[DIR:DIR + 3].copy()
        o = 3 * int(P[BLK])
        a = P[DIR:DIR + 3]
        r = d[o:o + 3] - (a @ d[o:o + 3]) * a
        return r / max(float(np.linalg.norm(r)), 1e-300)

    def _contact_now(self, i):
        """The contact function of contact i at the current state and its rate."""
        c = self.cur
        d, dd, ddd = self.DB[c], self.D @ self.V[c], self.D @ self.A[c]
        P = self.P[i]
        o = 3 * int(P[BLK])
        n = self._normal(i, d)
        xd, xdd = dd[o:o + 3], ddd[o:o + 3]
        f = self._contact_function(i, d, dd)
        p, pd, pdd = self.CV[c][i, PEN], n @ xd, n @ xdd
        if P[REL] == RELEASE_FORCE and f < p:
            return f, pd + P[CN] * pdd / P[KN]
        return f, pd

    def _hermite(self, h):
        c, x = self.cur, 1 - self.cur
        d0, d1 = self.DB[c], self.DB[x]
        v0, v1 = self.D @ self.V[c], self.D @ self.V[x]

        def at(theta):
            t2, t3 = theta * theta, theta ** 3
            d = ((2 * t3 - 3 * t2 + 1) * d0 + (t3 - 2 * t2 + theta) * h * v0
                 + (-2 * t3 + 3 * t2) * d1 + (t3 - t2) * h * v1)
            dd = ((6 * t2 - 6 * theta) * d0 / h + (3 * t2 - 4 * theta + 1) * v0
                  + (-6 * t2 + 6 * theta) * d1 / h + (3 * t2 - 2 * theta) * v1)
            return d, dd
        return at

    def _contact_function(self, c, d, dd):
        """> 0 where the law closes contact c (at link displacements d, rates dd)."""
        P = self.P[c]
        o = 3 * int(P[BLK])
        x, xd = d[o:o + 3], dd[o:o + 3]
        if P[KIND] == PLANE:
            n = P[DIR:DIR + 3]
            p, pd = n @ x - P[GAP], n @ xd
        else:
            a = P[DIR:DIR + 3]
            r = x - (a @ x) * a
            rho = float(np.linalg.norm(r))
            p = rho - P[GAP]
            pd = (r @ xd) / rho if rho > 0 else 0.0
        if P[REL] == RELEASE_GAP:
            return p
        return min(p, p + P[CN] * pd / P[KN])

    def _crossing(self, h):
        """Earliest crossing (fraction of the step, contact) among the contacts whose state
        changed over the step; 1 when none is found inside."""
        from scipy.optimize import brentq

        old = self.CV[self.cur][:, ACT] > 0.5
        new = self.CV[1 - self.cur][:, ACT] > 0.5
        at = self._hermite(h)
        grid = np.linspace(0.0, 1.0, 33)
        samples = [at(th) for th in grid]
        best, which = 1.0, int(np.flatnonzero(old != new)[0])
        for c in np.flatnonzero(old != new):
            def g(th, c=c):
                return self._contact_function(c, *at(th))
            values = np.array([self._contact_function(c, *s) for s in samples])
            values[-1] = 1.0 if new[c] else -1.0      # the end state decides at theta = 1
            if (values[0] > 0) == new[c]:
                theta = 0.0                             # already across at the start
            else:
                hit = np.flatnonzero((values[1:] > 0) == new[c])[0] + 1
                lo, hi = grid[hit - 1], grid[hit]
                if hit == len(grid) - 1 and (g(hi) > 0) != new[c]:
                    theta = 1.0
                else:
                    theta = brentq(g, lo, hi, xtol=1e-14, rtol=1e-15)
            if theta < best:
                best, which = theta, c
        return best, which

    def _switch(self, flags, t, before):
        """Impose the closed states ``flags`` at the current instant t: forces, acceleration
        jump, stored-energy transfer; events for the states that differ from ``before``."""
        c = self.cur
        d = self.DB[c]
        dd = self.D @ self.V[c]
        cv = self.CV[c].copy()
        phi = np.zeros_like(self.PHI[c])
        m = len(self.links)
        contact_law(self.P, d, dd, self.CV[c], cv, phi, np.zeros((m, 3, 3)), np.zeros((m, 3, 3)),
                    np.asarray(flags, float))
        jump = phi - self.PHI[c]
        if np.any(jump != 0):
            n = self.system.size
            self.A[c] += initial_acceleration(self.system, self.D.T @ jump, np.zeros(n),
                                              np.zeros(n))
        old = self.CV[c][:, ACT] > 0.5
        for i in np.flatnonzero(old != (cv[:, ACT] > 0.5)):
            pen = max(cv[i, PEN], 0.0)
            if old[i]:
                self.E[c, EL] += 0.5 * self.P[i, KN] * pen * pen + self.CV[c][i, ENT]
            else:
                self.E[c, EL] -= 0.5 * self.P[i, KN] * pen * pen
        cv[:, SLIP] = 0.0
        self.CV[c], self.PHI[c] = cv, phi
        self._record(t, before)

    def _record(self, t, before):
        cv = self.CV[self.cur]
        for i in np.flatnonzero((before > 0.5) != (cv[:, ACT] > 0.5)):
            self._event(t, i, cv[i, ACT] > 0.5, cv[i, PDOT])

    def _event(self, t, i, closed, speed):
        b, c = self.contacts[i]
        self.events.append((float(t), "impact" if closed else "separation", c.link,
                            f"side {c.side}, approach speed {speed:.9g} m/s"))

    def _record_step_events(self, times, ev):
        steps, contacts, kinds, speeds, count = ev
        for e in range(int(count[0])):
            self._event(times[steps[e]], int(contacts[e]), bool(kinds[e]), speeds[e])

    # ------------------------------------------------------------------ output
    def take_rows(self, count: int) -> dict:
        """Link and energy columns of the next ``count`` archived rows."""
        oc = np.concatenate([np.empty((0, len(self.contacts), 4))] + [c for c, _ in self._pending])
        oe = np.concatenate([np.empty((0, 5))] + [e for _, e in self._pending])
        self._pending = [(oc[count:], oe[count:])]
        oc, oe = oc[:count], oe[:count]
        cols = {}
        for b, lk in enumerate(self.links):
            idx = [i for i, (bb, _) in enumerate(self.contacts) if bb == b]
            cols[f"links/{lk.name}/normal_force"] = oc[:, idx, 0].sum(axis=1)
            cols[f"links/{lk.name}/penetration"] = oc[:, idx, 1].max(axis=1)
            cols[f"links/{lk.name}/state"] = oc[:, idx, 2].max(axis=1)
            if lk.has_friction:
                cols[f"links/{lk.name}/tangential_force"] = oc[:, idx, 3].sum(axis=1)
        for j, name in enumerate(ENERGY_TERMS):
            cols[f"energy/{name}"] = oe[:, j]
        return cols

    def columns(self) -> dict:
        """Series columns (all of width 0) this scheme archives."""
        names = []
        for lk in self.links:
            names += [f"links/{lk.name}/{w}" for w in ("normal_force", "penetration", "state")]
            if lk.has_friction:
                names.append(f"links/{lk.name}/tangential_force")
        names += [f"energy/{t}" for t in ENERGY_TERMS]
        return {name: 0 for name in names}


ENERGY_TERMS = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


def csr_parts_csc(Z: sp.csc_matrix):
    """(data, row indices, column pointers) of a CSC matrix, as the compiled loops take them."""
    return (np.ascontiguousarray(Z.data, np.float64), np.ascontiguousarray(Z.indices, np.int64),
            np.ascontiguousarray(Z.indptr, np.int64))


def make(system, scheme: str, params: dict, links, constraints, where: str = "analysis",
         label: str = "transient"):
    """The scheme of a physical transient analysis with shock links; ``where`` is the key
    path of the analysis, ``label`` names it in the messages."""
    G = constraints.G
    for lk in links:
        if G.shape[1] and abs(lk.D @ G).sum() > 0:
            raise NotAvailableError(f"{where}.links: link '{lk.name}' acts on dofs with an "
                                    f"imposed motion, which is not available yet")
    kw = dict(events=params.get("events", "step"))
    if scheme == "central_difference":
        s = LinkedNewmark(system, links, constraints.T, beta=0.0, gamma=0.5, name=scheme, **kw)
    elif scheme == "hht":
        s = LinkedNewmark(system, links, constraints.T, params["beta"], params["gamma"],
                          params["alpha"], name=scheme, **kw)
    else:
        s = LinkedNewmark(system, links, constraints.T, params["beta"], params["gamma"],
                          name=scheme, **kw)
    s._where = label
    return s
