"""Exact propagation of  z' = A z + E w(t)  over one step, with w a polynomial in time.

On a step [t0, t0 + h] write the forcing w(t0 + s) = sum_j c_j s^j / j! (c_j = the j-th
derivative of w at t0, vectors of size nb). With y_j(s) = w^(j)(t0 + s), the augmented system
    z' = A z + E y_0,  y_0' = y_1, ..., y_p' = 0
is autonomous and linear, so its exponential (Van Loan's block construction) gives the exact
state at any s:
    z(s) = Phi(s) z0 + sum_j Gamma_j(s) c_j,   [Phi, Gamma_0 ... Gamma_p] = top rows of expm(H s).
Constant and piecewise-linear forcing (p <= 1) is therefore propagated exactly; a smooth
forcing is represented by its interpolating polynomial of degree p on the step, whose error
the caller controls through the step (see :func:`polynomial_coefficients`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg


class Propagator:
    """State-transition and forcing-response matrices of  z' = A z + E w(t).

    Parameters
    ----------
    A : (n, n) state matrix
    E : (n, nb) forcing matrix
    degree : highest power p of the forcing polynomial on a step
    """

    def __init__(self, A: np.ndarray, E: np.ndarray, degree: int = 1):
        self.A = np.asarray(A, float)
        self.E = np.asarray(E, float).reshape(len(self.A), -1)
        self.degree = int(degree)
        n, nb, p = len(self.A), self.E.shape[1], self.degree
        size = n + (p + 1) * nb
        H = np.zeros((size, size))
        H[:n, :n] = self.A
        H[:n, n:n + nb] = self.E
        for j in range(p):
            r = n + j * nb
            H[r:r + nb, r + nb:r + 2 * nb] = np.eye(nb)
        self._H = H
        self._cache: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._j = np.arange(p + 1, dtype=float)
        self._factorials = np.array([math.factorial(j) for j in range(p + 1)], float)

    @property
    def size(self) -> int:
        return len(self.A)

    def matrices(self, s: float) -> tuple[np.ndarray, np.ndarray]:
        """(Phi (n, n), Gamma (n, (p + 1) nb)) at time s after the start of a step."""
        found = self._cache.get(s)
        if found is None:
            n = self.size
            top = scipy.linalg.expm(self._H * s)[:n]
            found = (top[:, :n], top[:, n:])
            if len(self._cache) < 512:
                self._cache[s] = found
        return found

    @property
    def augmented_size(self) -> int:
        """Size of the autonomous system (state and forcing derivatives)."""
        return len(self._H)

    def quadratic(self, name: str, Q: np.ndarray, z0: np.ndarray, coefficients: np.ndarray,
                  s: float) -> float:
        """int_0^s x(u)^T Q x(u) du for the augmented state x = (z, w, w', ...) from z0 and
        the forcing coefficients, Q (N, N) symmetric on that state (``name`` keys the cache).

        Van Loan's construction: the top-right block of expm([[-H^T, Q], [0, H]] s), premultiplied
        by expm(H s)^T, is int_0^s expm(H^T u) Q expm(H u) du.
        """
        key = (name, s)
        G = self._cache.get(key)
        if G is None:
            N = len(self._H)
            big = np.zeros((2 * N, 2 * N))
            big[:N, :N] = -self._H.T
            big[:N, N:] = Q
            big[N:, N:] = self._H
            F = scipy.linalg.expm(big * s)
            G = F[N:, N:].T @ F[:N, N:]
            if len(self._cache) < 512:
                self._cache[key] = G
        x = np.concatenate([np.asarray(z0, float),
                            np.asarray(coefficients, float).reshape(-1)])
        return float(x @ G @ x)

    def state(self, z0: np.ndarray, coefficients: np.ndarray, s: float) -> np.ndarray:
        """z(s) from z(0) = z0 and the forcing coefficients c (p + 1, nb)."""
        Phi, Gamma = self.matrices(s)
        return Phi @ z0 + Gamma @ np.asarray(coefficients, float).reshape(-1)

    def rate(self, z: np.ndarray, coefficients: np.ndarray, s: float) -> np.ndarray:
        """z'(s) = A z(s) + E w(t0 + s), from the state z at s."""
        c = np.asarray(coefficients, float).reshape(self.degree + 1, -1)
        return self.A @ z + self.E @ (self._powers(s) @ c)

    def _powers(self, s: float) -> np.ndarray:
        """s^j / j! for j = 0 ... p."""
        return s ** self._j / self._factorials


def polynomial_coefficients(values_at, t0: float, h: float, degree: int, sizes=None):
    """Taylor-like coefficients c_j (degree + 1, nb) of the polynomial interpolating the
    forcing on [t0, t0 + h] at Chebyshev points, and the largest interpolation error seen at
    the midpoints between them, relative to the size of each column (an estimate of how well
    the step represents the forcing).

    The size of a column is its largest value on the step, or ``sizes`` (nb,) when larger:
    the caller's measure of that column over the run, so that a column that vanishes on the
    step (a support's acceleration after a pulse, evaluated to round-off) is not asked for a
    relative accuracy its round-off cannot give.

    ``values_at(t)`` returns (len(t), nb) forcing values.
    """
    p = int(degree)
    if p == 0:
        w0 = np.asarray(values_at(np.array([t0])), float)
        return w0.reshape(1, -1), 0.0
    k = np.arange(p + 1)
    x = 0.5 * (1 - np.cos(np.pi * k / p))                 # Chebyshev-Lobatto points on [0, 1]
    w = np.asarray(values_at(t0 + h * x), float).reshape(p + 1, -1)
    V = np.vander(x, p + 1, increasing=True)              # w(x) = sum a_j x^j
    a = np.linalg.solve(V, w)
    scale = np.array([math.factorial(j) / h ** j for j in range(p + 1)])
    coefficients = a * scale[:, None]                     # c_j = a_j j! / h^j
    xm = 0.5 * (x[1:] + x[:-1])
    check = np.asarray(values_at(t0 + h * xm), float).reshape(len(xm), -1)
    # relative to the size of each forcing column on the step
    size = np.maximum(np.max(np.abs(w), axis=0), np.finfo(float).tiny)
    if sizes is not None:
        size = np.maximum(size, sizes)
    error = float(np.max(np.abs(np.vander(xm, p + 1, increasing=True) @ a - check) / size))
    return coefficients, error
