"""The Newmark family on a modal basis: Newmark (beta, gamma) and central differences.

On q'' + Cg q' + diag(omega^2) q = Bg w(t) (generalized mass I), with
q~ = q_n + dt q'_n + dt^2 (1/2 - beta) q''_n and v~ = q'_n + dt (1 - gamma) q''_n,

    S q''_n+1 = Bg w_n+1 - diag(omega^2) q~ - Cg v~,   S = I + gamma dt Cg + beta dt^2 diag(omega^2)

then q_n+1 = q~ + beta dt^2 q''_n+1 and q'_n+1 = v~ + gamma dt q''_n+1. S is inverted once per
step size (m x m, dense); the step loop works with S^-1 diag(omega^2), S^-1 Cg and S^-1 Bg
and is compiled. With a diagonal Cg every matrix is diagonal and the modes are advanced one
by one.

Central differences (code_aster DIFF_CENTRE) are beta = 0, gamma = 1/2. In the half-step form
v_n+1/2 = v_n-1/2 + dt a_n, x_n+1 = x_n + dt v_n+1/2 ("v+ = v + dt a, x+ = x + dt v+") the
velocity lives at half steps; here the same displacements come with the velocity at the
steps, v_n+1 = v_n+1/2 + dt/2 a_n+1, and the damping force uses that velocity, so that
displacement, velocity and acceleration are all second-order accurate. Stable for
omega_max dt < 2.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.integrators.base import State
from fem.integrators.modal_common import ModalScheme


class ModalNewmark(ModalScheme):
    """Newmark (beta, gamma) on a modal basis; ``beta = 0, gamma = 1/2`` is central
    differences."""

    def __init__(self, basis, beta: float = 0.25, gamma: float = 0.5, name: str = "newmark"):
        super().__init__(basis, name)
        self.beta, self.gamma = float(beta), float(gamma)
        self._operators: dict[float, tuple] = {}

    def operators(self, dt: float) -> tuple:
        """(P, Q, R) for step dt: S^-1 diag(omega^2), S^-1 Cg, S^-1 Bg, transposed (column j
        contiguous) when dense, as vectors when diagonal."""
        ops = self._operators.get(dt)
        if ops is None:
            kk, C, Bt = self.kk, self.C, self.Bt
            if self.diag:
                s = 1.0 + self.gamma * dt * np.diag(C) + self.beta * dt * dt * kk
                ops = (kk / s, np.diag(C) / s, np.ascontiguousarray(Bt / s[None, :]))
            else:
                S = np.eye(len(kk)) + self.gamma * dt * C + self.beta * dt * dt * np.diag(kk)
                Si = np.linalg.inv(S)
                ops = (np.ascontiguousarray((Si * kk[None, :]).T), np.ascontiguousarray((Si @ C).T),
                       np.ascontiguousarray((Si @ Bt.T).T))
            self._operators[dt] = ops
        return ops

    def stability_limit(self) -> float | None:
        if 2 * self.beta >= self.gamma >= 0.5:
            return None
        w = self.highest_frequency()
        if w == 0:
            return None
        if self.beta == 0:
            return 2.0 / w
        return 1.0 / (w * np.sqrt(max(self.gamma / 2 - self.beta, 1e-300)))

    def advance(self, dt, W, state: State, archive):
        P, Q, R = self.operators(dt)
        k = W.shape[0] - 1
        count = int(np.count_nonzero(archive[1:]))
        m = state.u.size
        out_u, out_v, out_a = (np.empty((count, m)) for _ in range(3))
        W = np.ascontiguousarray(W, np.float64)
        kernel = _newmark_diagonal if self.diag else _newmark_dense
        ok = kernel(k, dt, self.beta, self.gamma, P, Q, R, W, state.u, state.v, state.a,
                    archive, out_u, out_v, out_a)
        self.accepted += k
        return (out_u, out_v, out_a), ok


@numba.njit(cache=True, nogil=True)
def _newmark_diagonal(k, dt, beta, gamma, p, q, Rt, W, x, v, a, archive, out_u, out_v, out_a):
    m = x.size
    nb = Rt.shape[0]
    c1 = dt * dt * (0.5 - beta)
    c2 = dt * (1.0 - gamma)
    c3 = beta * dt * dt
    c4 = gamma * dt
    f = np.empty(m)
    row = 0
    for n in range(1, k + 1):
        for i in range(m):
            f[i] = 0.0
        for c in range(nb):
            wc = W[n, c]
            for i in range(m):
                f[i] += Rt[c, i] * wc
        for i in range(m):
            ut = x[i] + dt * v[i] + c1 * a[i]
            vt = v[i] + c2 * a[i]
            an = f[i] - p[i] * ut - q[i] * vt
            x[i] = ut + c3 * an
            v[i] = vt + c4 * an
            a[i] = an
        if archive[n]:
            for i in range(m):
                out_u[row, i] = x[i]
                out_v[row, i] = v[i]
                out_a[row, i] = a[i]
            row += 1
    for i in range(m):
        if not np.isfinite(x[i]):
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _newmark_dense(k, dt, beta, gamma, Pt, Qt, Rt, W, x, v, a, archive, out_u, out_v, out_a):
    m = x.size
    nb = Rt.shape[0]
    c1 = dt * dt * (0.5 - beta)
    c2 = dt * (1.0 - gamma)
    c3 = beta * dt * dt
    c4 = gamma * dt
    ut = np.empty(m)
    vt = np.empty(m)
    an = np.empty(m)
    row = 0
    for n in range(1, k + 1):
        for i in range(m):
            ut[i] = x[i] + dt * v[i] + c1 * a[i]
            vt[i] = v[i] + c2 * a[i]
            an[i] = 0.0
        for c in range(nb):
            wc = W[n, c]
            for i in range(m):
                an[i] += Rt[c, i] * wc
        # column-wise products: the inner loop runs over contiguous memory
        for j in range(m):
            uj = ut[j]
            vj = vt[j]
            for i in range(m):
                an[i] -= Pt[j, i] * uj + Qt[j, i] * vj
        for i in range(m):
            x[i] = ut[i] + c3 * an[i]
            v[i] = vt[i] + c4 * an[i]
            a[i] = an[i]
        if archive[n]:
            for i in range(m):
                out_u[row, i] = x[i]
                out_v[row, i] = v[i]
                out_a[row, i] = a[i]
            row += 1
    for i in range(m):
        if not np.isfinite(x[i]):
            return False
    return True
