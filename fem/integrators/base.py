"""The stepping protocol shared by every time scheme.

A scheme advances the state (u, v, a) of ``M u'' + C u' + K u = B w(t)`` over a run of steps
of one constant size; the driver (``fem.driver``) owns the time grid, the load values w(t_i),
archiving, progress and the results file, so that every scheme gets them for free.

    scheme = SchemeClass(system, **parameters)
    a0 = scheme.initial_acceleration(t0, u0, v0, w0)
    rows = scheme.advance(dt, W, state, archive)
        dt      : step (s), constant over the call
        W       : (k + 1, nb) load values at the k + 1 instants t0, t0 + dt, ..., t0 + k dt
        state   : State(u, v, a) at t0, updated in place to the state at t0 + k dt
        archive : (k + 1,) bool, which instants to return (index 0 is never returned: the
                  driver archived it with the previous call)
        rows    : (u, v, a) arrays of shape (archived count, n)
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.errors import SolverError


@dataclass
class State:
    """Displacement, velocity, acceleration on the free dofs (m, m/s, m/s^2)."""
    u: np.ndarray
    v: np.ndarray
    a: np.ndarray

    def copy(self) -> "State":
        return State(self.u.copy(), self.v.copy(), None if self.a is None else self.a.copy())


def initial_acceleration(system, force: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """a0 from M a0 = F(t0) - C v0 - K u0; massless dofs (zero rows of M) get a0 = 0."""
    residual = force - system.damping @ v - system.stiffness @ u
    M = system.mass
    diagonal = M.diagonal()
    if M.nnz == np.count_nonzero(diagonal):
        a = np.zeros_like(residual)
        massive = diagonal != 0
        a[massive] = residual[massive] / diagonal[massive]
        return a
    massive = np.asarray(abs(M).sum(axis=1)).ravel() > 0
    a = np.zeros_like(residual)
    if massive.any():
        sub = M[massive][:, massive].tocsc()
        try:
            a[massive] = scipy.sparse.linalg.splu(sub).solve(residual[massive])
        except RuntimeError:
            raise SolverError("the mass matrix is singular on the dofs that carry mass") from None
    return a


class Scheme(abc.ABC):
    """Base class: subclasses implement :meth:`advance` (see the module docstring)."""

    name = "scheme"

    def __init__(self, system):
        self.system = system

    def initial_acceleration(self, t0, u, v, w0) -> np.ndarray:
        return initial_acceleration(self.system, self.system.B @ w0, u, v)

    @abc.abstractmethod
    def advance(self, dt, W, state: State, archive: np.ndarray):
        """Advance over W.shape[0] - 1 steps of size dt; returns ((u, v, a) rows, finite)."""

    def stability_limit(self) -> float | None:
        """Largest stable step (s) for conditionally stable schemes, None otherwise."""
        return None


def highest_frequency(system) -> float:
    """An estimate of the highest circular frequency omega_max (rad/s) of (K, M)."""
    M, K = system.mass, system.stiffness
    n = M.shape[0]
    if n == 0 or K.nnz == 0:
        return 0.0
    d = M.diagonal()
    if M.nnz == np.count_nonzero(d) and np.all(d > 0):
        # power iteration on the symmetric M^-1/2 K M^-1/2
        s = 1.0 / np.sqrt(d)
        A = sp.diags(s) @ K @ sp.diags(s)
        if n <= 200:
            return float(np.sqrt(max(np.linalg.eigvalsh(A.toarray())[-1], 0.0)))
        try:
            lam = scipy.sparse.linalg.eigsh(A, k=1, which="LA", return_eigenvectors=False,
                                            tol=1e-6, maxiter=max(1000, 20 * n))[0]
        except Exception:
            lam = float(np.max(np.asarray(abs(A).sum(axis=1)).ravel()))    # Gershgorin bound
        return float(np.sqrt(max(lam, 0.0)))
    return float("inf")
