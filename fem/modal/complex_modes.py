"""Complex modes: (lambda^2 M + lambda C + K) phi = 0 on the free dofs, any damping.

The quadratic eigenproblem is solved through its first companion linearization, written in
scaled units mu = lambda / w0 so that the three matrices have comparable norms::

    A z = mu B z,   A = [[0, I], [-Ks, -Cs]],   B = [[I, 0], [0, Ms]],   z = [phi; mu phi]

    Ms = M / m0,  Cs = C / (m0 w0),  Ks = K / (m0 w0^2),
    m0 = max_i M_ii,  w0 = sqrt(max_i K_ii / m0)   (rad/s)

Dense LAPACK (``scipy.linalg.eig``) for small systems; for large ones ARPACK
(``scipy.sparse.linalg.eigs``) on the shift-invert operator (A - sigma B)^-1 B, whose solve
reduces to one real sparse LU of the n x n pencil Ks + sigma Cs + sigma^2 Ms, with a small
negative shift sigma = -1e-6 so that the eigenvalues nearest to 0 (lowest |lambda|) come
out first. Every eigenvalue is then polished with the two-sided Rayleigh functional (M, C, K
are symmetric): the root of phi^T (mu^2 Ms + mu Cs + Ks) phi = 0 nearest to mu.

Modes kept:

- eigenvalues of a real problem come in conjugate pairs: one mode per pair, Im lambda > 0;
- a real eigenvalue (an overdamped motion gives two, a massless dof carrying a damper a
  first-order relaxation) has no partner: each one is a mode of its own, reported with
  damped_frequency 0, damping_ratio 1 and damping_ratio_damped = +inf;
- rigid-body motions give lambda = 0 (a double root unless a damper to the ground acts on
  them), which the solvers return only to about sqrt(eps) w0: eigenvalues with
  |lambda| < 1e-6 w0 are taken as exactly 0 (so a genuine mode a million times lower than
  w0, the top of the spectrum, would be too), and each independent rigid-body motion is
  one mode, real, shape in the null space of K, with both damping ratios 0;
- massless dofs give infinite eigenvalues of the linearization, which are discarded (the
  sparse solver, which looks for the eigenvalues nearest to 0, never meets them). For the
  dense solver, dofs with neither mass nor damping are first condensed statically (exact:
  they follow the others through K), which leaves only simple infinite eigenvalues, told
  apart reliably; a dof with a damper but no mass adds a real, first-order mode.

Modes are sorted by undamped-equivalent frequency |lambda| / 2 pi, as the real modes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.errors import SolverError, StudyError

#: systems up to this many free dofs with mass or damping are solved dense ("auto")
DENSE_LIMIT = 200
#: shift of the sparse solver, in units of w0 (-SHIFT is used)
SHIFT = 1e-6
#: relative tolerance of ARPACK on the shift-inverted eigenvalues
ARPACK_TOL = 1e-13
#: |mu| above this is an infinite eigenvalue (a dof without mass)
INFINITE = 1e10
#: |mu| below this is a rigid-body mode (a double root is known to about sqrt(eps) only)
ZERO = 1e-6
#: rigid-body shapes are refined with K + RIGID_SHIFT^2 M (scaled units)
RIGID_SHIFT = 1e-6
#: two components whose moduli agree to this are tied for the normalization
TIE = 1e-6


@dataclass
class ComplexModes:
    """Complex modes on the free dofs, one per conjugate pair, ascending |lambda|.

    Attributes
    ----------
    eigenvalue : (m,) complex128, rad/s
        lambda, with Im lambda >= 0.
    shapes : (nf, m) complex128
        Right eigenvectors on the free dofs, largest-modulus component = 1 + 0j.
    """
    eigenvalue: np.ndarray
    shapes: np.ndarray

    @property
    def count(self) -> int:
        return len(self.eigenvalue)

    @property
    def frequency(self) -> np.ndarray:
        """(m,) Hz, undamped-equivalent: |lambda| / 2 pi."""
        return np.abs(self.eigenvalue) / (2 * np.pi)

    @property
    def damped_frequency(self) -> np.ndarray:
        """(m,) Hz: Im lambda / 2 pi (0 for a real eigenvalue)."""
        return self.eigenvalue.imag / (2 * np.pi)

    @property
    def damping_ratio(self) -> np.ndarray:
        """(m,) dimensionless: -Re lambda / |lambda| (0 for lambda = 0)."""
        r = np.abs(self.eigenvalue)
        return np.divide(-self.eigenvalue.real, r, out=np.zeros(len(r)), where=r > 0)

    @property
    def damping_ratio_damped(self) -> np.ndarray:
        """(m,) dimensionless: -Re lambda / Im lambda (+inf for a real eigenvalue, 0 for
        lambda = 0)."""
        lam = self.eigenvalue
        out = np.where(lam.real != 0, np.inf, 0.0)
        return np.divide(-lam.real, lam.imag, out=out, where=lam.imag > 0)


def complex_modes(M: sp.spmatrix, C: sp.spmatrix, K: sp.spmatrix, *, count: int | None = None,
                  band: tuple[float, float] | None = None, method: str = "auto",
                  where: str = "analysis") -> ComplexModes:
    """The ``count`` complex modes of lowest |lambda|, or those with |lambda| / 2 pi in
    ``band`` = (f_min, f_max) Hz (both: the first ``count`` in the band).

    Parameters
    ----------
    M, C, K : (nf, nf) sparse
        Mass (kg), damping (N.s/m) and stiffness (N/m) on the free dofs.
    count : int, optional
        Number of modes (10 when neither count nor band is given).
    band : (2,) float, optional
        Hz, on the undamped-equivalent frequency |lambda| / 2 pi.
    method : {"auto", "dense", "sparse"}
    where : str
        Key path of the analysis block, for messages.

    Returns
    -------
    ComplexModes
        Shapes on the free dofs, largest-modulus component = 1 + 0j.

    Raises
    ------
    StudyError
        No free dof, no mass, more modes asked than the model has, an empty band.
    SolverError
        A singular pencil or a failure of the eigen-solver.
    """
    n = M.shape[0]
    if n == 0:
        raise StudyError(f"{where}: the model has no free dof")
    if count is None and band is None:
        count = 10
    M, C, K = (sp.csr_matrix(a, dtype=float) for a in (M, C, K))
    has_mass = _nonzero_rows(M)
    if not has_mass.any():
        raise StudyError(f"{where}: no free dof carries mass: there is no mode")
    keep = has_mass | _nonzero_rows(C)
    m0 = float(abs(M.diagonal()).max())
    k0 = float(abs(K.diagonal()).max())
    c0 = float(abs(C.diagonal()).max())
    w0 = np.sqrt(k0 / m0) if k0 > 0 else (c0 / m0 if c0 > 0 else 1.0)
    Ms, Cs, Ks = M / m0, C / (m0 * w0), K / (m0 * w0 ** 2)
    # the band in scaled units, on |mu|
    limits = None if band is None else (2 * np.pi * band[0] * (1 - 1e-12) / w0,
                                         2 * np.pi * band[1] * (1 + 1e-12) / w0)
    found = None
    if method == "sparse" or (method == "auto" and keep.sum() > DENSE_LIMIT):
        # dofs without mass stay in: their infinite eigenvalues are never the nearest to 0
        found = _sparse_enough(Ms, Cs, Ks, count, limits, where)
    expand = None
    if found is None:
        if not keep.all():
            Ms, Cs, Ks, expand = _condense(Ms, Cs, Ks, keep)
        found = (*_modes(*_dense(Ms, Cs, Ks), Ms, Cs, Ks), True)
    mu, phi, complete = found
    lam = mu * w0
    if band is not None:
        f = np.abs(lam) / (2 * np.pi)
        inside = (f >= band[0] * (1 - 1e-12)) & (f <= band[1] * (1 + 1e-12))
        if not inside.any():
            raise StudyError(f"{where}.band: no complex mode between {band[0]:g} and "
                             f"{band[1]:g} Hz (nearest: {_nearest(f, band):.6g} Hz)")
        lam, phi = lam[inside], phi[:, inside]
    elif count is not None and count > len(lam) and complete:
        raise StudyError(f"{where}.count: {count} complex modes asked but the model has only "
                         f"{len(lam)} ({int(has_mass.sum())} free dofs with mass)")
    if count is not None:
        lam, phi = lam[:count], phi[:, :count]
    if expand is not None:
        phi = expand(phi)
    return ComplexModes(lam, normalize(phi))


def normalize(phi: np.ndarray) -> np.ndarray:
    """Divide each column of ``phi`` (n, m) by its largest-modulus component (the first one
    within a relative 1e-6 of the largest, so that ties resolve the same way every run)."""
    phi = np.asarray(phi, complex)
    if phi.size == 0:
        return phi
    a = np.abs(phi)
    idx = np.argmax(a >= (1 - TIE) * a.max(axis=0), axis=0)
    pivot = phi[idx, np.arange(phi.shape[1])]
    return phi / np.where(pivot == 0, 1.0, pivot)


def _nonzero_rows(A: sp.csr_matrix) -> np.ndarray:
    return np.asarray(abs(A).sum(axis=1)).ravel() > 0


def _nearest(f, band):
    centre = 0.5 * (band[0] + band[1])
    return float(f[np.argmin(np.abs(f - centre))]) if len(f) else float("nan")


def _condense(M, C, K, keep):
    """Static condensation of the dofs z with neither mass nor damping:
    K* = K_kk - K_kz K_zz^-1 K_zk; M and C have no z rows nor columns (symmetric)."""
    k_idx, z_idx = np.where(keep)[0], np.where(~keep)[0]
    Kzz = K[z_idx][:, z_idx].tocsc()
    Kzk = K[z_idx][:, k_idx]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sp.linalg.MatrixRankWarning)
            lu = scipy.sparse.linalg.splu(Kzz)
    except (RuntimeError, sp.linalg.MatrixRankWarning):
        raise SolverError("complex modes: the dofs without mass nor damping form a mechanism "
                          "(their stiffness is singular)") from None
    X = lu.solve(Kzk.toarray())                   # K_zz^-1 K_zk, (nz, nk)
    Kc = sp.csr_matrix(K[k_idx][:, k_idx].toarray() - K[k_idx][:, z_idx] @ X)
    Mc, Cc = M[k_idx][:, k_idx], C[k_idx][:, k_idx]

    def expand(phi):
        full = np.zeros((len(keep), phi.shape[1]), complex)
        full[k_idx] = phi
        full[z_idx] = -X @ phi
        return full

    return Mc, Cc, Kc, expand


# -- solvers: (mu (N,), z-top-block phi (n, N)) of the linearization ---------------------------
def _dense(Ms, Cs, Ks):
    """All finite eigenvalues. Standard eigenproblem of B^-1 A when Ms is positive
    definite (faster than QZ), else the generalized one, whose infinite eigenvalues (dofs
    without mass) are dropped."""
    n = Ms.shape[0]
    Md, Cd, Kd = Ms.toarray(), Cs.toarray(), Ks.toarray()
    eye, zero = np.eye(n), np.zeros((n, n))
    try:
        factor = scipy.linalg.cho_factor(Md)
    except np.linalg.LinAlgError:
        factor = None
    if factor is not None:
        companion = np.block([[zero, eye], [-scipy.linalg.cho_solve(factor, Kd),
                                            -scipy.linalg.cho_solve(factor, Cd)]])
        mu, z = scipy.linalg.eig(companion)
    else:
        A = np.block([[zero, eye], [-Kd, -Cd]])
        B = np.block([[eye, zero], [zero, Md]])
        (alpha, beta), z = scipy.linalg.eig(A, B, homogeneous_eigvals=True)
        finite = np.abs(alpha) < INFINITE * np.abs(beta)
        mu = alpha[finite] / beta[finite]
        z = z[:, finite]
    if not np.all(np.isfinite(mu)):
        raise SolverError("complex modes: the dense eigen-solver returned non-finite values")
    return mu, z[:n]


def _pencil_solver(Ms, Cs, Ks, s):
    """Solve with Q(-s) = Ks - s Cs + s^2 Ms (real, n x n): a sparse LU, the shift nudged
    if it happens to hit an eigenvalue."""
    for _ in range(4):
        Q = (Ks - s * Cs + (s * s) * Ms).tocsc()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sp.linalg.MatrixRankWarning)
                lu = scipy.sparse.linalg.splu(Q)
            return lu, s
        except (RuntimeError, sp.linalg.MatrixRankWarning):
            s *= 1.618
    raise SolverError("complex modes: the shifted pencil K + s C + s^2 M stays singular "
                      "(a mechanism without mass?)")


def _sparse(Ms, Cs, Ks, k, lu, s):
    """The k eigenvalues nearest to -s by ARPACK on (A + s B)^-1 B, and ``reach``: every
    eigenvalue with |mu| < reach is among them."""
    n = Ms.shape[0]

    def op(z):
        a, b = z[:n], Ms @ z[n:]
        # (A - sigma B)[x; y] = [a; b], sigma = -s: Q x = -b - (C + sigma M) a, y = a + sigma x
        x = -lu.solve(b + Cs @ a - s * (Ms @ a))
        return np.concatenate([x, a - s * x])

    operator = scipy.sparse.linalg.LinearOperator((2 * n, 2 * n), matvec=op, dtype=float)
    v0 = np.random.default_rng(12345).standard_normal(2 * n)
    try:
        # ncv = 3k, not 2k: far fewer restarts when eigenvalues are evenly spread (long chains)
        nu, z = scipy.sparse.linalg.eigs(operator, k=k, which="LM", tol=ARPACK_TOL, v0=v0,
                                         ncv=min(2 * n, max(3 * k + 1, 40)), maxiter=50 * n)
    except (RuntimeError, scipy.sparse.linalg.ArpackError) as exc:
        raise SolverError(f"complex modes: the sparse eigen-solver failed ({exc})") from None
    mu = -s + 1.0 / nu
    reach = float(np.abs(mu + s).max()) - s
    return mu, z[:n], reach


def _sparse_enough(Ms, Cs, Ks, count, limits, where):
    """Sparse solves with more and more eigenvalues until the modes asked are all in reach:
    (mu, phi, False), or None when ARPACK would need nearly the whole spectrum of a small
    system (solve it dense then)."""
    n = Ms.shape[0]
    lu, s = _pencil_solver(Ms, Cs, Ks, SHIFT)
    k = 2 * (count if count is not None else 10) + 4
    while True:
        k = min(k, 2 * n - 2)
        if k < 1:
            break
        mu, phi, reach = _sparse(Ms, Cs, Ks, k, lu, s)
        mu, phi = _modes(mu, phi, Ms, Cs, Ks)
        in_reach = np.abs(mu) < reach
        if limits is not None:
            inside = (np.abs(mu) >= limits[0]) & (np.abs(mu) <= limits[1])
            enough = reach > limits[1] or (count is not None and
                                           np.sum(in_reach & inside) >= count)
        else:
            enough = np.sum(in_reach) >= count
        if enough:
            return mu[in_reach], phi[:, in_reach], False
        if k >= 2 * n - 2:
            break
        k *= 2
    if n > 4 * DENSE_LIMIT:
        raise SolverError(f"{where}: the sparse eigen-solver cannot reach the modes asked "
                          f"(ask fewer modes or a lower band)")
    # ARPACK cannot return (nearly) the whole spectrum: the dense solver can, and is cheap here
    return None


# -- from eigenvalues of the linearization to modes ---------------------------------------------
def _modes(mu, phi, Ms, Cs, Ks):
    """One mode per conjugate pair, real eigenvalues kept, rigid-body motions collapsed to
    one mode each with mu = 0; sorted by |mu|."""
    mu, phi = _one_per_pair(np.asarray(mu, complex), np.asarray(phi, complex))
    mu = _polish(mu, phi, Ms, Cs, Ks)
    rigid = np.abs(mu) < ZERO
    if rigid.any():
        basis = _rigid_basis(phi[:, rigid], Ms, Ks)
        mu = np.concatenate([np.zeros(basis.shape[1], complex), mu[~rigid]])
        phi = np.hstack([basis.astype(complex), phi[:, ~rigid]])
    order = np.lexsort((mu.imag, np.abs(mu)))
    return mu[order], phi[:, order]


def _polish(mu, phi, Ms, Cs, Ks):
    """Two-sided Rayleigh functional: M, C, K are symmetric, so phi is also a left
    eigenvector (phi^T Q(mu) = 0) and the root of phi^T Q(mu) phi = 0 nearest to mu has an
    error of the order of the square of the error of phi."""
    m = np.einsum("ij,ij->j", phi, Ms @ phi)
    c = np.einsum("ij,ij->j", phi, Cs @ phi)
    k = np.einsum("ij,ij->j", phi, Ks @ phi)
    out = mu.copy()
    for j in range(len(mu)):
        if mu[j] == 0 or m[j] == 0:
            continue
        roots = np.roots([m[j], c[j], k[j]])
        r = roots[np.argmin(np.abs(roots - mu[j]))]
        # a real eigenvalue stays real; a far root means phi^T Q phi is degenerate: keep mu
        if mu[j].imag == 0:
            r = r.real
        elif r.imag < 0:
            r = np.conj(r)
        if abs(r - mu[j]) <= 1e-2 * abs(mu[j]):
            out[j] = r
    return out


def _one_per_pair(mu, phi):
    """Keep Im mu >= 0; an eigenvalue with Im mu < 0 whose partner is missing (ARPACK may
    return a lone member of the last pair) is replaced by its conjugate."""
    upper = np.where(mu.imag > 0)[0]
    used = np.zeros(len(upper), bool)
    keep = list(np.where(mu.imag >= 0)[0])
    lone = []
    for i in np.where(mu.imag < 0)[0]:
        target = np.conj(mu[i])
        d = np.abs(mu[upper] - target)
        d[used] = np.inf
        j = int(np.argmin(d)) if len(d) else -1
        if j >= 0 and d[j] <= 1e-8 * max(abs(target), 1e-300):
            used[j] = True
        else:
            lone.append(i)
    mu_out = np.concatenate([mu[keep], np.conj(mu[lone])])
    phi_out = np.hstack([phi[:, keep], np.conj(phi[:, lone])])
    return mu_out, phi_out


def _rigid_basis(vectors, Ms, Ks):
    """Independent real rigid-body shapes (n, r) spanned by the eigenvectors of the near-zero
    eigenvalues: refined towards the null space of K by inverse iteration with K + s^2 M
    (every other component shrinks by about s^2 / mu^2 per step), then reduced to an
    orthonormal basis of the motions they span."""
    V = np.hstack([vectors.real, vectors.imag])
    V = V[:, np.linalg.norm(V, axis=0) > 0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sp.linalg.MatrixRankWarning)
            lu = scipy.sparse.linalg.splu((Ks + RIGID_SHIFT ** 2 * Ms).tocsc())
    except (RuntimeError, sp.linalg.MatrixRankWarning):
        lu = None                                   # keep the unrefined shapes
    for _ in range(2 if lu is not None else 0):
        V = np.column_stack([lu.solve(Ms @ v) for v in V.T])
        V = V / np.linalg.norm(V, axis=0)
    V = V / np.linalg.norm(V, axis=0)
    U, sv, _ = np.linalg.svd(V, full_matrices=False)
    # a Jordan pair gives two vectors of one motion, parallel once refined
    return U[:, sv > 1e-4 * sv[0]]
