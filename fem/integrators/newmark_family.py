"""The Newmark family: Newmark (beta, gamma), HHT-alpha and central differences (beta = 0,
gamma = 1/2), on either basis (``fem.integrators.dynamics``), with every link law.

Step. With u~ = u_n + dt v_n + dt^2 (1/2 - beta) a_n and v~ = v_n + dt (1 - gamma) a_n, the
HHT-alpha equation (Hilber, Hughes, Taylor 1977; alpha in [-1/3, 0], alpha = 0 is Newmark)

    M a_n+1 + (1 + alpha)(C v_n+1 + K u_n+1) - alpha (C v_n + K u_n)
        = (1 + alpha) F_n+1 - alpha F_n + L^T ((1 + alpha) phi_n+1 - alpha phi_n)

gives S a_n+1 = r + L^T g with S = M + (1 + alpha) gamma dt C + (1 + alpha) beta dt^2 K, then
u_n+1 = u~ + beta dt^2 a_n+1 and v_n+1 = v~ + gamma dt a_n+1 (``advance_state``, the one place
these formulas live). S is factorized once per step size. ``equilibrium = "modified"`` (code_
aster's MODI_EQUI = 'NON') keeps HHT's beta and gamma with alpha = 0 in the equation.

Links. With a0 = S^-1 r and Z = S^-1 L^T (n, 3 m), a_n+1 = a0 + Z g, and the link accelerations
y = L a_n+1 solve the small system (W = L Z)

    y = L a0 + W ((1 + alpha) phi(y) - alpha phi_n),
    phi(y) = link laws at d = L u~ + Lw w + beta dt^2 y, d' = L v~ + Lv w + gamma dt y,

by Newton's method; a bonded rigid contact adds its bond force lambda as an unknown and
n . (y + La w) = 0 as an equation. With ``events = "step"`` the laws choose their modes at the
end of the step (semismooth Newton; contacts whose mode keeps changing keep it over the step);
with ``"locate"`` the modes hold over the step and ``fem.integrators.events`` locates their
changes. Central differences archive the velocity at the step, or with ``velocity =
"half_step"`` v_n - dt/2 a_n = (u_n - u_n-1)/dt, the one code_aster's DIFF_CENTRE archives.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp

from fem.errors import SolverError
from fem.integrators.base import Scheme
from fem.integrators.kernels import (DIVERGED, DIVERGENCE_LIMIT, DONE, EVENT, NOT_SETTLED,
                                     archive_row, archive_row_of, close_energy_inline, crossed,
                                     csr_product, diverged, dof_powers, frozen_modes,
                                     record_changes, record_changes_of, state_arrays, state_at)
from fem.integrators.newmark_links import MAX_ITERATIONS, resolvable, solve_links
from fem.linalg import Factor, banded_solve_into, csr_matvec_add



class StepOperators(NamedTuple):
    """Per step size: the factor of S (band, perm), or on a modal basis S^-1 itself (inv:
    (n,) when S is diagonal, (n, n) otherwise; kind 1 diagonal, 2 dense, 0 banded factor);
    Z = S^-1 L^T (CSC parts) and W = L Z."""
    band: np.ndarray
    perm: np.ndarray
    Zd: np.ndarray
    Zi: np.ndarray
    Zp: np.ndarray
    Wl: np.ndarray
    kind: int
    diag_inv: np.ndarray
    dense_inv: np.ndarray
    SK: np.ndarray
    SC: np.ndarray
    SB: np.ndarray


class Coefficients(NamedTuple):
    beta: float
    gamma: float
    alpha: float


class Work(NamedTuple):
    """Scratch arrays of a step: predictors and right-hand side (n,), the link unknowns and
    residuals (3 m,), the Jacobian of the link system, and the flags of imposed modes."""
    ut: np.ndarray
    vt: np.ndarray
    rhs: np.ndarray
    xs: np.ndarray
    Dut: np.ndarray
    Dvt: np.ndarray
    Da0: np.ndarray
    y: np.ndarray
    d: np.ndarray
    dd: np.ndarray
    R: np.ndarray
    g: np.ndarray
    Law: np.ndarray
    Jd: np.ndarray
    Jv: np.ndarray
    Jac: np.ndarray
    z: np.ndarray
    bonded: np.ndarray
    rhs_l: np.ndarray
    res_l: np.ndarray
    quad: np.ndarray
    flags: np.ndarray
    mask: np.ndarray


# --------------------------------------------------------------------------- formulas
@numba.njit(cache=True, nogil=True, inline="always")
def predict(u, v, a, dt, beta, gamma):
    """The Newmark predictors (u~, v~) of one coordinate."""
    return u + dt * v + dt * dt * (0.5 - beta) * a, v + dt * (1.0 - gamma) * a


@numba.njit(cache=True, nogil=True, inline="always")
def advance_state(ut, vt, a, dt, beta, gamma):
    """u_n+1, v_n+1 of one coordinate from the predictors and a_n+1."""
    return ut + beta * dt * dt * a, vt + gamma * dt * a


@numba.njit(cache=True, nogil=True, inline="always")
def _predict(dt, co, ops, W, i, s0, wk):
    """Predictors and the right-hand side r of S a_n+1 = r (loads W[i - 1] -> W[i])."""
    x, v, a = s0.x, s0.v, s0.a
    ut, vt, rhs = wk.ut, wk.vt, wk.rhs
    B = ops.B
    n = x.size
    nb = B.shape[1]
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    for j in range(n):
        ut[j], vt[j] = predict(x[j], v[j], a[j], dt, beta, gamma)
        f = 0.0
        for c in range(nb):
            f += B[j, c] * (s * W[i, c] - alpha * W[i - 1, c])
        rhs[j] = f
    csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, ut, -s, rhs)
    csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, vt, -s, rhs)
    if alpha != 0.0:
        csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, x, alpha, rhs)
        csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, v, alpha, rhs)


@numba.njit(cache=True, nogil=True, inline="always")
def _predict_diagonal(dt, co, ops, W, i, s0, wk, inv, a1):
    """``_predict`` and the solve for diagonal K, C and S: one pass over the coordinates."""
    x, v, a = s0.x, s0.v, s0.a
    ut, vt = wk.ut, wk.vt
    B, kd, cd = ops.B, ops.Kdiag, ops.Cdiag
    nb = B.shape[1]
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    for j in range(x.size):
        ut[j], vt[j] = predict(x[j], v[j], a[j], dt, beta, gamma)
        f = 0.0
        for c in range(nb):
            f += B[j, c] * (s * W[i, c] - alpha * W[i - 1, c])
        f -= s * (kd[j] * ut[j] + cd[j] * vt[j])
        if alpha != 0.0:
            f += alpha * (kd[j] * x[j] + cd[j] * v[j])
        a1[j] = inv[j] * f


@numba.njit(cache=True, nogil=True, inline="always")
def _predict_dense(dt, co, W, i, s0, wk, sops, a1):
    """``_predict`` and the solve with S^-1 K, S^-1 C and S^-1 B formed (transposed, so that
    the inner loops run over contiguous memory)."""
    x, v, a = s0.x, s0.v, s0.a
    ut, vt = wk.ut, wk.vt
    SK, SC, SB = sops.SK, sops.SC, sops.SB
    n = x.size
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    s = 1.0 + alpha
    for j in range(n):
        ut[j], vt[j] = predict(x[j], v[j], a[j], dt, beta, gamma)
        a1[j] = 0.0
    for c in range(SB.shape[0]):
        wc = s * W[i, c] - alpha * W[i - 1, c]
        for j in range(n):
            a1[j] += SB[c, j] * wc
    for q in range(n):
        uq = s * ut[q] - alpha * x[q]
        vq = s * vt[q] - alpha * v[q]
        for j in range(n):
            a1[j] -= SK[q, j] * uq + SC[q, j] * vq


# --------------------------------------------------------------------------- one step
@numba.njit(cache=True, nogil=True, inline="always")
def _finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links):
    """Links, state update and energies of a step whose predictors are in wk and whose
    a0 = S^-1 r is in s1.a: the new state goes to s1. DONE or NOT_SETTLED."""
    ut, vt = wk.ut, wk.vt
    a1 = s1.a
    n = ut.size
    alpha = co.alpha
    s = 1.0 + alpha
    if has_links:
        Wl = sops.Wl
        m3 = Wl.shape[0]
        Dut, Dvt, Law = wk.Dut, wk.Dvt, wk.Law
        csr_product(kin.Ld, kin.Li, kin.Lp, ut, Dut)
        csr_product(kin.Ld, kin.Li, kin.Lp, vt, Dvt)
        csr_product(kin.Ld, kin.Li, kin.Lp, a1, wk.Da0)
        for r in range(m3):
            Law[r] = 0.0
        if kin.imposed:
            Lw, Lv, La = kin.Lw, kin.Lv, kin.La
            for r in range(m3):
                sw = 0.0
                sv = 0.0
                sa = 0.0
                for c in range(W.shape[1]):
                    sw += Lw[r, c] * W[i, c]
                    sv += Lv[r, c] * W[i, c]
                    sa += La[r, c] * W[i, c]
                Dut[r] += sw
                Dvt[r] += sv
                Law[r] = sa
        its = solve_links(dt, co, Wl, P, s0, s1, wk, flags)
        if its < 0:
            return NOT_SETTLED
        d, dd, db1, dd1 = wk.d, wk.dd, s1.db, s1.dd
        for r in range(m3):
            db1[r] = d[r]
            dd1[r] = dd[r]
        phi0, phi1 = s0.phi, s1.phi
        Zd, Zi, Zp = sops.Zd, sops.Zi, sops.Zp
        for col in range(m3):
            gc = s * phi1[col] - alpha * phi0[col]
            if gc != 0.0:
                for k in range(Zp[col], Zp[col + 1]):
                    a1[Zi[k]] += Zd[k] * gc
    # the new state, its energy terms and the divergence test in one pass
    x0, v0, x1, v1 = s0.x, s0.v, s1.x, s1.v
    B, Cd, Ci, Cp = ops.B, ops.Cd, ops.Ci, ops.Cp
    w0, w1 = W[i - 1], W[i]
    beta, gamma = co.beta, co.gamma
    work = 0.0
    damped = 0.0
    finite = True
    energy = wk.quad[3] > 0.0
    for j in range(n):
        x1[j], v1[j] = advance_state(ut[j], vt[j], a1[j], dt, beta, gamma)
        if energy:
            pw, pd = dof_powers(j, x1[j] - x0[j], B, Cd, Ci, Cp, w0, w1, v0, v1)
            work += pw
            damped += pd
        finite = finite and abs(x1[j]) <= DIVERGENCE_LIMIT
    if energy:
        close_energy_inline(work, damped, kin.Lw, kin.imposed, P, w0, w1, s0.cv, s1.cv, s0.phi,
                     s1.phi, s0.db, s1.db, s0.e, s1.e, wk.quad)
    return DONE if finite else DIVERGED


@numba.njit(cache=True, nogil=True, inline="always")
def _step(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links):
    """One step (banded factor) from s0 to s1."""
    rhs, a1 = wk.rhs, s1.a
    if sops.kind == 1 and ops.Kdiag.size == a1.size:
        # uncoupled equations: predictor, right-hand side and solve mode by mode
        _predict_diagonal(dt, co, ops, W, i, s0, wk, sops.diag_inv, a1)
    elif sops.kind == 2:
        # a small dense system: a = S^-1 B w - S^-1 K u~ - S^-1 C v~ with the products formed
        _predict_dense(dt, co, W, i, s0, wk, sops, a1)
    else:
        _predict(dt, co, ops, W, i, s0, wk)
        if sops.kind == 1:
            inv = sops.diag_inv
            for j in range(a1.size):
                a1[j] = inv[j] * rhs[j]
        else:
            banded_solve_into(sops.band, sops.perm, rhs, a1, wk.xs)
    return _finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)


@numba.njit(cache=True, nogil=True, _nrt=False)
def single(dt, co, ops, kin, P, sops, W, s0, s1, wk, flags, has_links):
    """One step from W[0] to W[1] (a step cut at an event)."""
    return _step(dt, co, ops, kin, P, sops, W, 1, s0, s1, wk, flags, has_links)


@numba.njit(cache=True, nogil=True, _nrt=False)
def predict_step(dt, co, ops, W, i, s0, wk):
    """``_predict`` on its own (the steps of a sparse factor, driven from Python)."""
    _predict(dt, co, ops, W, i, s0, wk)


@numba.njit(cache=True, nogil=True, _nrt=False)
def finish_step(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links):
    """``_finish`` on its own (the steps of a sparse factor, driven from Python)."""
    return _finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _loop(i0, k, times, dt, co, ops, kin, P, sops, W, archive, buf, cur, wk, out, row, locate,
          log, half_dt, has_links):
    """Steps i0 + 1 ... k of a chunk from the state in buffer ``cur`` of ``buf``, alternating
    between the two buffers; returns (status, step, parity, rows): the state is in buffer cur
    when parity is 0, in the other one otherwise. On EVENT the step ``step`` is computed into
    the other buffer, not taken."""
    flags = wk.flags
    parity = 0
    for i in range(i0 + 1, k + 1):
        c = cur if parity == 0 else 1 - cur
        s0 = state_at(buf, c)
        s1 = state_at(buf, 1 - c)
        if locate:
            frozen_modes(s0.cv, flags)
        status = _step(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)
        if status != DONE:
            return status, i, parity, row
        if has_links:
            if locate:
                if crossed(P, s0.cv, s1.cv, s0.db, s0.dd, s1.db, s1.dd, dt):
                    return EVENT, i, parity, row
            else:
                record_changes_of(P, s0.cv, s1.cv, times[i], log.time, log.contact, log.kind,
                                  log.speed, log.count)
        if archive[i]:
            archive_row_of(out.T, out.X, out.V, out.A, out.CV, out.EN, row, times[i], ops.Md,
                           ops.Mi, ops.Mp, ops.Kd, ops.Ki, ops.Kp, s1.x, s1.v, s1.a, s1.cv,
                           s1.e, half_dt)
            row += 1
        parity = 1 - parity
    return DONE, k, parity, row


# --------------------------------------------------------------------------- the scheme
class NewmarkFamily(Scheme):
    """Newmark, HHT-alpha or central differences (module docstring)."""

    fixed_step = True
    keeps_acceleration = True

    def check_resolution(self, step: float):
        """Central differences (beta = 0) as the explicit schemes; the implicit members test
        stiff contacts where their step operators are formed."""
        if self.co.beta == 0.0:
            super().check_resolution(step)

    def __init__(self, dynamics, links, *, beta=0.25, gamma=0.5, alpha=0.0, name="newmark",
                 events="step", velocity="step", equilibrium="alpha", label="analysis"):
        super().__init__(dynamics, links, name=name, events=events, label=label)
        self.co = Coefficients(float(beta), float(gamma),
                               0.0 if equilibrium == "modified" else float(alpha))
        self.half_step_velocity = velocity == "half_step"
        self._ops_cache: dict[float, tuple] = {}
        self._spare: dict[float, tuple] = {}
        m3 = self.L.shape[0]
        nr = len(links.rigid) if links else 0
        nc = self.P.shape[0]
        n, m = self.n, max(m3 // 3, 1)
        self.wk = Work(*(np.zeros(n) for _ in range(4)), *(np.zeros(m3) for _ in range(9)),
                       np.zeros((m, 3, 3)), np.zeros((m, 3, 3)), np.zeros((m3 + nr, m3 + nr)),
                       np.zeros(m3 + nr), np.zeros(max(nr, 1), np.int64), np.zeros(m3 + nr),
                       np.zeros(max(nr, 1)), np.zeros(4), np.full(nc, -1.0),
                       np.full(nc, -1.0))
        self.wk.quad[3] = 1.0 if self.energy else 0.0     # whether steps sum energy terms

    # ------------------------------------------------------------------ set-up
    def stability_limit(self):
        co = self.co
        if 2 * co.beta >= co.gamma >= 0.5:
            return None
        omega = self.highest_frequency()
        if omega == 0:
            return None
        if co.beta == 0:
            return 2.0 / omega
        return 1.0 / (omega * np.sqrt(max(co.gamma / 2 - co.beta, 1e-300)))

    def step_operators(self, dt: float, keep: bool = True):
        """(Factor, StepOperators) for a step size; the grid's sizes are kept, those of the
        steps cut at events in a small cache."""
        found = self._ops_cache.get(dt) or self._spare.get(dt)
        if found is not None:
            return found
        s = 1.0 + self.co.alpha
        S = (self.dyn.mass + (s * self.co.gamma * dt) * self.dyn.damping
             + (s * self.co.beta * dt * dt) * self.dyn.stiffness)
        factor = Factor(S, what=f"iteration matrix of {self.name} (dt = {dt:g} s)")
        m3 = self.L.shape[0]
        if m3:
            LT = self.L.T.toarray()
            Z = np.column_stack([factor.solve(np.ascontiguousarray(LT[:, j]))
                                 for j in range(m3)])
            Wl = np.asarray(self.L @ Z)
            Wl = np.ascontiguousarray(0.5 * (Wl + Wl.T))
            resolvable(self.P, Wl, s * self.co.beta * dt * dt, self.links, self.label, self.t)
            Zc = sp.csc_matrix(Z)
            Zc.eliminate_zeros()
            zparts = (np.ascontiguousarray(Zc.data, np.float64),
                      np.ascontiguousarray(Zc.indices, np.int64),
                      np.ascontiguousarray(Zc.indptr, np.int64))
        else:
            Wl = np.zeros((0, 0))
            zparts = (np.zeros(0), np.zeros(0, np.int64), np.zeros(1, np.int64))
        band = factor.band if factor.banded else np.zeros((1, 0))
        perm = factor.perm if factor.banded else np.zeros(0, np.int64)
        kind, diag_inv, dense_inv = 0, np.zeros(0), np.zeros((0, 0))
        SK = SC = SB = np.zeros((0, 0))
        if self.dyn.basis == "modal":
            # a small dense system: S^-1 itself, applied mode by mode (diagonal) or folded
            # into S^-1 K, S^-1 C and S^-1 B
            Sd = S.toarray()
            if not np.any(Sd - np.diag(np.diag(Sd))):
                kind, diag_inv = 1, 1.0 / np.diag(Sd)
            else:
                kind = 2
                Si = np.linalg.inv(Sd)
                dense_inv = np.ascontiguousarray(Si.T)
                SK = np.ascontiguousarray((Si @ self.dyn.stiffness.toarray()).T)
                SC = np.ascontiguousarray((Si @ self.dyn.damping.toarray()).T)
                SB = np.ascontiguousarray((Si @ np.asarray(self.dyn.B)).T)
        found = (factor, StepOperators(band, perm, *zparts, Wl, kind, diag_inv, dense_inv,
                                       SK, SC, SB))
        if keep:
            self._ops_cache[dt] = found
        else:
            if len(self._spare) >= 4:
                self._spare.pop(next(iter(self._spare)))
            self._spare[dt] = found
        return found

    # ------------------------------------------------------------------ stepping
    def run_steps(self, i0, k, times, dt, W, archive, out, row):
        """Steps i0 + 1 ... k of the chunk (see ``Scheme.advance``)."""
        factor, sops = self.step_operators(dt)
        half = 0.5 * dt if self.half_step_velocity else 0.0
        if factor.banded or sops.kind:
            c = self.cur
            status, i, parity, row = _loop(
                i0, k, times, dt, self.co, self.ops, self.kin, self.P, sops, W, archive,
                self.buf, c, self.wk, out, row,
                self.locate, self.log, half, bool(self.links))
            # the state is in buffer cur (parity 0) or in the other one
            self.cur = c if parity == 0 else 1 - c
        else:
            status, i, row = self._sparse_loop(factor, sops, i0, k, times, dt, W, archive, out,
                                               row, half)
        self.steps += i - i0 - (1 if status != DONE else 0)
        return status, i, row

    def _sparse_step(self, factor, sops, h, W, i, flags):
        """One step with a sparse LU factor (a bandwidth too large for the banded one)."""
        c = self.cur
        s0, s1 = state_arrays(self.buf, c), state_arrays(self.buf, 1 - c)
        predict_step(h, self.co, self.ops, W, i, s0, self.wk)
        s1.a[:] = factor.solve(self.wk.rhs)
        return finish_step(h, self.co, self.ops, self.kin, self.P, sops, W, i, s0, s1, self.wk,
                           flags, bool(self.links))

    def _sparse_loop(self, factor, sops, i0, k, times, dt, W, archive, out, row, half):
        b = self.buf
        for i in range(i0 + 1, k + 1):
            flags = self._flags()
            status = self._sparse_step(factor, sops, dt, W, i, flags)
            c, x = self.cur, 1 - self.cur
            if status != DONE:
                return status, i, row
            if diverged(b.X[x]):
                return DIVERGED, i, row
            if self.links:
                if self.locate:
                    if crossed(self.P, b.CV[c], b.CV[x], b.DB[c], b.DD[c], b.DB[x], b.DD[x], dt):
                        return EVENT, i, row
                else:
                    record_changes(self.P, b.CV[c], b.CV[x], times[i], self.log)
            self.cur = x
            if archive[i]:
                archive_row(out, row, times[i], self.ops, b.X[x], b.V[x], b.A[x], b.CV[x],
                            b.E[x], half)
                row += 1
        return DONE, k, row

    def single_step(self, h, w0, w1, flags):
        """One step of size h from buffer cur into the other with the modes ``flags``;
        returns the status."""
        factor, sops = self.step_operators(h, keep=False)
        W = np.ascontiguousarray(np.vstack([w0, w1]), np.float64)
        if not (factor.banded or sops.kind):
            return self._sparse_step(factor, sops, h, W, 1, flags)
        c = self.cur
        return single(h, self.co, self.ops, self.kin, self.P, sops, W,
                      state_arrays(self.buf, c), state_arrays(self.buf, 1 - c), self.wk,
                      np.asarray(flags, float), bool(self.links))

    def archive_half_dt(self, dt):
        return 0.5 * dt if self.half_step_velocity else 0.0

    def not_settled(self, t):
        raise SolverError(f"{self.label}: the modes of the links do not settle within the "
                          f"step ending at t = {t:.9g} s (no consistent set after "
                          f"{MAX_ITERATIONS} iterations); reduce the step")
