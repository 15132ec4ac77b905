"""The Newmark family in acceleration form: Newmark (beta, gamma), HHT-alpha, and explicit
central differences (beta = 0, gamma = 1/2).

With u~ = u_n + dt v_n + dt^2 (1/2 - beta) a_n and v~ = v_n + dt (1 - gamma) a_n, the
HHT-alpha equation (Hilber, Hughes, Taylor 1977; alpha in [-1/3, 0], alpha = 0 is Newmark)
    M a_n+1 + (1 + alpha)(C v_n+1 + K u_n+1) - alpha (C v_n + K u_n)
        = (1 + alpha) F_n+1 - alpha F_n
gives  S a_n+1 = rhs  with  S = M + (1 + alpha) gamma dt C + (1 + alpha) beta dt^2 K, then
u_n+1 = u~ + beta dt^2 a_n+1 and v_n+1 = v~ + gamma dt a_n+1. S is factorized once per step
size; with beta = 0 and diagonal M and C it is diagonal and the scheme is explicit.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.integrators.base import LegacyScheme as Scheme, State, highest_frequency
from fem.linalg import Factor, banded_solve, csr_matvec_add, csr_parts


class NewmarkFamily(Scheme):
    """Newmark, HHT-alpha and central differences on a linear system."""

    def __init__(self, system, beta: float = 0.25, gamma: float = 0.5, alpha: float = 0.0,
                 name: str = "newmark"):
        super().__init__(system)
        self.beta, self.gamma, self.alpha = float(beta), float(gamma), float(alpha)
        self.name = name
        self._factors: dict[float, Factor] = {}
        self._K = csr_parts(system.stiffness)
        self._C = csr_parts(system.damping)
        self._B = np.ascontiguousarray(system.B, np.float64)

    def factor(self, dt: float) -> Factor:
        f = self._factors.get(dt)
        if f is None:
            s = 1.0 + self.alpha
            S = (self.system.mass + (s * self.gamma * dt) * self.system.damping
                 + (s * self.beta * dt * dt) * self.system.stiffness)
            f = Factor(S, what=f"iteration matrix of {self.name} (dt = {dt:g} s)")
            self._factors[dt] = f
        return f

    def stability_limit(self) -> float | None:
        if 2 * self.beta >= self.gamma >= 0.5:
            return None                             # unconditionally stable
        omega = highest_frequency(self.system)
        if omega == 0:
            return None
        # undamped limit of conditionally stable Newmark (2 / omega for central differences)
        return 1.0 / (omega * np.sqrt(max(self.gamma / 2 - self.beta, 1e-300)))

    def advance(self, dt, W, state: State, archive):
        factor = self.factor(dt)
        k = W.shape[0] - 1
        count = int(np.count_nonzero(archive[1:]))
        n = state.u.size
        out_u, out_v, out_a = (np.empty((count, n)) for _ in range(3))
        W = np.ascontiguousarray(W, np.float64)
        if factor.banded:
            ok = _newmark_banded(k, dt, self.beta, self.gamma, self.alpha, *self._K, *self._C,
                                 factor.band, factor.perm, self._B, W, state.u, state.v,
                                 state.a, archive, out_u, out_v, out_a)
        else:
            ok = self._advance_sparse(factor, dt, W, state, archive, out_u, out_v, out_a)
        return (out_u, out_v, out_a), ok

    def _advance_sparse(self, factor, dt, W, state, archive, out_u, out_v, out_a):
        beta, gamma, alpha = self.beta, self.gamma, self.alpha
        K, C, B = self.system.stiffness, self.system.damping, self.system.B
        u, v, a = state.u, state.v, state.a
        row = 0
        F_prev = B @ W[0]
        for i in range(1, W.shape[0]):
            F = B @ W[i]
            ut = u + dt * v + dt * dt * (0.5 - beta) * a
            vt = v + dt * (1 - gamma) * a
            rhs = (1 + alpha) * (F - K @ ut - C @ vt)
            if alpha != 0.0:
                rhs += alpha * (K @ u + C @ v - F_prev)
            a_new = factor.solve(rhs)
            u[:] = ut + beta * dt * dt * a_new
            v[:] = vt + gamma * dt * a_new
            a[:] = a_new
            F_prev = F
            if archive[i]:
                out_u[row], out_v[row], out_a[row] = u, v, a
                row += 1
                if not np.isfinite(u).all():
                    return False
        return bool(np.isfinite(u).all())


@numba.njit(cache=True, nogil=True)
def _predict(dt, beta, gamma, alpha, Kd, Ki, Kp, Cd, Ci, Cp, B, W, i, u, v, a, ut, vt, rhs):
    n = u.size
    nb = B.shape[1]
    s = 1.0 + alpha
    for j in range(n):
        ut[j] = u[j] + dt * v[j] + dt * dt * (0.5 - beta) * a[j]
        vt[j] = v[j] + dt * (1.0 - gamma) * a[j]
        f = 0.0
        for c in range(nb):
            f += B[j, c] * (s * W[i, c] - alpha * W[i - 1, c])
        rhs[j] = f
    csr_matvec_add(Kd, Ki, Kp, ut, -s, rhs)
    csr_matvec_add(Cd, Ci, Cp, vt, -s, rhs)
    if alpha != 0.0:
        csr_matvec_add(Kd, Ki, Kp, u, alpha, rhs)
        csr_matvec_add(Cd, Ci, Cp, v, alpha, rhs)


@numba.njit(cache=True, nogil=True)
def _newmark_banded(k, dt, beta, gamma, alpha, Kd, Ki, Kp, Cd, Ci, Cp, band, perm, B, W,
                    u, v, a, archive, out_u, out_v, out_a):
    n = u.size
    ut = np.empty(n)
    vt = np.empty(n)
    rhs = np.empty(n)
    anew = np.empty(n)
    row = 0
    for i in range(1, k + 1):
        _predict(dt, beta, gamma, alpha, Kd, Ki, Kp, Cd, Ci, Cp, B, W, i, u, v, a, ut, vt, rhs)
        banded_solve(band, perm, rhs, anew)
        for j in range(n):
            u[j] = ut[j] + beta * dt * dt * anew[j]
            v[j] = vt[j] + gamma * dt * anew[j]
            a[j] = anew[j]
        if archive[i]:
            for j in range(n):
                out_u[row, j] = u[j]
                out_v[row, j] = v[j]
                out_a[row, j] = a[j]
            row += 1
    for j in range(n):
        if not np.isfinite(u[j]):
            return False
    return True


def make(system, scheme: str, params: dict) -> NewmarkFamily:
    if scheme == "central_difference":
        return NewmarkFamily(system, beta=0.0, gamma=0.5, name=scheme)
    if scheme == "hht":
        return NewmarkFamily(system, params["beta"], params["gamma"], params["alpha"], name=scheme)
    return NewmarkFamily(system, params["beta"], params["gamma"], name=scheme)
