"""Real modes: K phi = omega^2 M phi on the free dofs, mass-normalized.

Dense (LAPACK) for small systems, sparse shift-invert Lanczos (ARPACK) for large ones.
Massless dofs are condensed statically (they follow the others through K), which is exact
for the undamped eigenproblem; rigid-body modes come out with omega = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.errors import SolverError, StudyError

#: systems up to this size are solved dense
DENSE_LIMIT = 600


@dataclass
class Modes:
    """Mass-normalized real modes on the free dofs.

    omega : (m,) rad/s, ascending; shapes : (nf, m) with shapes.T M shapes = I
    """
    omega: np.ndarray
    shapes: np.ndarray

    @property
    def frequency(self) -> np.ndarray:
        return self.omega / (2 * np.pi)

    @property
    def count(self) -> int:
        return len(self.omega)


def real_modes(M: sp.spmatrix, K: sp.spmatrix, *, count: int | None = None,
               band: tuple[float, float] | None = None, method: str = "auto",
               where: str = "analysis") -> Modes:
    """The ``count`` lowest modes, or those in ``band`` = (f_min, f_max) Hz (both: the first
    ``count`` in the band)."""
    n = M.shape[0]
    if n == 0:
        raise StudyError(f"{where}: the model has no free dof")
    massive = np.asarray(abs(M).sum(axis=1)).ravel() > 0
    nm = int(massive.sum())
    if nm == 0:
        raise StudyError(f"{where}: no free dof carries mass: there is no mode")
    if count is not None and count > nm:
        raise StudyError(f"{where}.count: {count} modes asked but the model has only {nm} "
                         f"free dofs with mass")
    M, K = sp.csr_matrix(M), sp.csr_matrix(K)
    condense = not massive.all()
    if condense:
        Mm, Km, expand = _condense_massless(M, K, massive)
    else:
        Mm, Km, expand = M, K, None
    if method == "dense" or (method == "auto" and nm <= DENSE_LIMIT):
        omega2, phi = _dense(Mm, Km)
    else:
        omega2, phi = _sparse(Mm, Km, count, band, where)
    omega = np.sqrt(np.clip(omega2, 0.0, None))
    omega[omega2 < 0] = 0.0
    if band is not None:
        f = omega / (2 * np.pi)
        keep = (f >= band[0] * (1 - 1e-12)) & (f <= band[1] * (1 + 1e-12))
        if not keep.any():
            raise StudyError(f"{where}.band: no mode between {band[0]:g} and {band[1]:g} Hz "
                             f"(nearest: {_nearest(f, band):.6g} Hz)")
        omega, phi = omega[keep], phi[:, keep]
    if count is not None:
        omega, phi = omega[:count], phi[:, :count]
    if condense:
        phi = expand(phi)
    phi = _sign_convention(phi)
    return Modes(omega, phi)


def _nearest(f, band):
    centre = 0.5 * (band[0] + band[1])
    return float(f[np.argmin(np.abs(f - centre))]) if len(f) else float("nan")


def _dense(M, K):
    try:
        w2, phi = scipy.linalg.eigh(K.toarray(), M.toarray())
    except np.linalg.LinAlgError as exc:
        raise SolverError(f"real modes: the mass matrix is not positive definite ({exc})") from None
    return w2, phi


def _sparse(M, K, count, band, where):
    n = M.shape[0]
    # shift-invert about 0 (or the band's lower end); when K is singular (rigid-body modes),
    # about a small negative shift instead, so that K - sigma M stays regular
    sigma = 0.0 if band is None or band[0] == 0 else (2 * np.pi * band[0]) ** 2 * 0.9
    k = count if count is not None else 20
    while True:
        k = min(k, n - 1)
        try:
            w2, phi = _eigsh(K, M, k, sigma)
        except RuntimeError:
            scale = abs(K.diagonal()).max() / max(abs(M.diagonal()).max(), 1e-300)
            try:
                w2, phi = _eigsh(K, M, k, sigma - 1e-6 * scale)
            except (RuntimeError, scipy.sparse.linalg.ArpackError) as exc:
                raise SolverError(f"{where}: the sparse eigen-solver failed ({exc})") from None
        except scipy.sparse.linalg.ArpackError as exc:
            raise SolverError(f"{where}: the sparse eigen-solver failed ({exc})") from None
        order = np.argsort(w2)
        w2, phi = w2[order], phi[:, order]
        if band is None or k >= n - 1:
            break
        if np.sqrt(max(w2[-1], 0)) / (2 * np.pi) > band[1]:
            break
        k *= 2
    # ARPACK normalizes to the M-inner product already; make it exact
    norms = np.sqrt(np.einsum("ij,ij->j", phi, M @ phi))
    return w2, phi / norms


def _eigsh(K, M, k, sigma):
    """Shift-invert Lanczos; RuntimeError when K - sigma M is singular."""
    return scipy.sparse.linalg.eigsh(K.tocsc(), k=k, M=M.tocsc(), sigma=sigma, which="LM",
                                     tol=1e-12)


def _condense_massless(M, K, massive):
    """Guyan condensation of the massless dofs z: K* = K_mm - K_mz K_zz^-1 K_zm."""
    m_idx, z_idx = np.where(massive)[0], np.where(~massive)[0]
    Kzz = K[z_idx][:, z_idx].tocsc()
    Kzm = K[z_idx][:, m_idx].tocsc()
    try:
        lu = scipy.sparse.linalg.splu(Kzz)
    except RuntimeError:
        raise SolverError("real modes: the massless dofs have a singular stiffness") from None
    X = lu.solve(Kzm.toarray())                   # K_zz^-1 K_zm
    Kc = K[m_idx][:, m_idx].toarray() - (K[m_idx][:, z_idx] @ X)
    Mc = M[m_idx][:, m_idx]

    def expand(phi):
        full = np.zeros((len(massive), phi.shape[1]))
        full[m_idx] = phi
        full[z_idx] = -X @ phi
        return full

    return sp.csr_matrix(Mc), sp.csr_matrix(np.asarray(Kc)), expand


def _sign_convention(phi):
    """Make the largest component of each shape positive (reproducible signs)."""
    idx = np.argmax(np.abs(phi), axis=0)
    signs = np.sign(phi[idx, np.arange(phi.shape[1])])
    signs[signs == 0] = 1.0
    return phi * signs


def participation(modes: Modes, M: sp.spmatrix, directions: np.ndarray):
    """Participation factors and effective masses.

    directions : (nf, 3) rigid translation of the free dofs along X, Y, Z (1 on the matching
    translational dofs). Returns (factors (m, 3), effective masses (m, 3) kg): for mass-
    normalized shapes, Gamma = phi^T M r and the effective mass is Gamma^2.
    """
    factors = modes.shapes.T @ (M @ directions)
    return factors, factors ** 2
