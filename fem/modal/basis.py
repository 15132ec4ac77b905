"""Transient dynamics on a basis of real modes: projection of the equations, recombination.

With the m retained mass-normalized shapes Phi (nf, m) and u = Phi q on the free dofs, the
equations M u'' + C u' + K u = B w(t) become, in generalized coordinates q (m,),

    q'' + Cg q' + diag(omega^2) q = Bg w(t),    Bg = Phi^T B (m, nb),

with the generalized mass Phi^T M Phi = I. The generalized damping Cg is either

* ``"projected"``: Phi^T C Phi in full (m, m). It is not diagonal when C is not a combination
  of M and K (dampers that do not follow the springs), and the coupling is kept;
* ``"modal"``: diag(2 xi_j omega_j) from given ratios xi_j, C itself being ignored.

The initial state is the M-orthogonal projection q0 = Phi^T M u0, q0' = Phi^T M v0 (exact when
u0 and v0 lie in the span of the basis).

Recombination to all dofs (or to the dofs of chosen nodes) follows the reduction of the model
(``fem.assembly``): u = T (Phi q + u_corr) + G h(t), likewise for the velocity and the
acceleration with the derivatives of q, w and h.

Static correction (``static_correction = true``): a truncated basis misses the quasi-static
response of the loads to the discarded modes. With F(t) = B w(t) on the free dofs,

    u_corr(t) = (K^-1 - Phi diag(omega^-2) Phi^T) F(t)

is the static response to F minus the part of it the retained modes already carry (the full
modal expansion of K^-1 is sum_j phi_j phi_j^T / omega_j^2), so that u = Phi q + u_corr is
exact in the quasi-static limit and the correction vanishes when all modes are retained. The
velocity and acceleration corrections use w' and w''. It needs a regular K (no rigid-body
motion) and no zero frequency among the retained modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.errors import SolverError, StudyError
from fem.model.dofs import State

#: relative departure of Phi^T M Phi from the identity accepted as round-off
NORMALIZATION_TOLERANCE = 1e-8
#: off-diagonal generalized damping below this fraction of its largest term is round-off
DIAGONAL_TOLERANCE = 1e-12


@dataclass
class ModalBasis:
    """The generalized system of a transient analysis on a modal basis.

    Attributes
    ----------
    omega : (m,) float, rad/s
        Circular frequencies of the retained modes.
    shapes : (nf, m) float
        Mass-normalized shapes on the free dofs (m per sqrt(kg)).
    stiffness : (m,) float, 1/s^2
        Generalized stiffness omega^2 (the generalized mass is the identity).
    damping : (m, m) float, 1/s
        Generalized damping, projected in full or diagonal.
    diagonal : bool
        True when ``damping`` is diagonal (the modal equations are uncoupled).
    B : (m, nb) float
        Projected load columns Phi^T B: the generalized force is ``B @ w(t)``.
    q0, v0 : (m,) float
        Projected initial generalized displacement and velocity.
    system : fem.assembly.System
        The physical system on the free dofs (load values, recombination data).
    dofs : (nd,) int or None
        Dofs (indices into all dofs of the model) that recombination returns; None for all.
    """

    omega: np.ndarray
    shapes: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    diagonal: bool
    B: np.ndarray
    q0: np.ndarray
    v0: np.ndarray
    system: object
    dofs: np.ndarray | None
    _R: np.ndarray                 # (nd, m) rows of T Phi for the recombined dofs
    _G: sp.csr_matrix              # (nd, ng) rows of G
    _correction: np.ndarray | None  # (nd, nb) static correction per unit w
    _correction_free: np.ndarray | None   # (nf, nb) the same on the free dofs

    @property
    def size(self) -> int:
        """Number of generalized coordinates m."""
        return len(self.omega)

    @property
    def columns(self) -> list:
        return self.system.columns

    @property
    def static_correction(self) -> bool:
        return self._correction is not None

    def load_values(self, t: np.ndarray) -> np.ndarray:
        """w(t) (len(t), nb) of the physical system: the generalized force is w @ B.T."""
        return self.system.load_values(t)

    def project(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Generalized (q, q') (m,) of a free-dof displacement and velocity (nf,)."""
        M = self.system.mass
        return self.shapes.T @ (M @ u), self.shapes.T @ (M @ v)

    def recombine(self, q: np.ndarray, t: np.ndarray, order: int = 0) -> np.ndarray:
        """Physical rows (k, nd) of generalized rows q (k, m) at times t (k,) s.

        ``order`` 0, 1, 2 for displacement (m), velocity (m/s), acceleration (m/s^2): q holds
        q, q' or q'' accordingly.
        """
        t = np.asarray(t, float)
        # a diverged run still writes its last rows: the driver reports the divergence
        with np.errstate(invalid="ignore", over="ignore"):
            u = q @ self._R.T
        if self._G.shape[1]:
            h = np.stack([_derivative(f, order, t) for f in self.system.g_functions], axis=1)
            u = u + (self._G @ h.T).T
        if self._correction is not None:
            u = u + column_values(self.system.columns, t, order) @ self._correction.T
        return u

    # the driver's name for the recombination (``System.expand``)
    expand = recombine

    def free_state(self, t: float, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> State:
        """The physical state on the free dofs (nf,) at time t (s), static correction added."""
        u, v, a = self.shapes @ q, self.shapes @ qd, self.shapes @ qdd
        if self._correction_free is not None:
            tt = np.array([float(t)])
            cols = self.system.columns
            u = u + self._correction_free @ column_values(cols, tt, 0)[0]
            v = v + self._correction_free @ column_values(cols, tt, 1)[0]
            a = a + self._correction_free @ column_values(cols, tt, 2)[0]
        return State(u, v, a)

    def equivalent_ratios(self) -> np.ndarray:
        """(m,) damping ratios xi_j = (Phi^T C Phi)_jj / (2 omega_j) of the projected damping,
        diagonal terms only (NaN for a zero frequency)."""
        C = self.shapes.T @ (self.system.damping @ self.shapes)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.omega > 0, np.diag(C) / (2 * self.omega), np.nan)


def build_basis(modes, system, *, model=None, damping: str = "projected",
                ratios=None, nodes=None, static_correction: bool = False,
                where: str = "analysis") -> ModalBasis:
    """Project ``system`` (``fem.assembly.System``) on ``modes`` (``fem.modal.modes.Modes``).

    Parameters
    ----------
    modes : Modes
        omega (m,) rad/s and mass-normalized shapes (nf, m) on the free dofs of ``system``.
    system : System
        The physical equations on the nf free dofs.
    model : fem.model.Model, optional
        Needed with ``nodes`` (node names to dofs).
    damping : {"projected", "modal"}
        Full projection of C, or the diagonal 2 xi_j omega_j from ``ratios``.
    ratios : sequence of float, optional
        Modal damping ratios (dimensionless), at least one per mode; extra ones are ignored.
    nodes : sequence of str, optional
        Recombine only the dofs of these nodes (all components of the model, node by node);
        needs ``model``.
    static_correction : bool
        Add the quasi-static response of the loads to the discarded modes (module docstring).
    where : str
        Key path of the analysis, for messages.

    Returns
    -------
    ModalBasis
    """
    phi = np.asarray(modes.shapes, float)
    omega = np.asarray(modes.omega, float)
    nf, m = phi.shape
    if nf != system.size:
        raise StudyError(f"{where}.modes: the modes have {nf} free dofs but the model of this "
                         f"analysis has {system.size}")
    M = system.mass
    gm = phi.T @ (M @ phi)
    if np.max(np.abs(gm - np.eye(m))) > NORMALIZATION_TOLERANCE:
        raise SolverError(f"{where}.modes: the shapes are not mass-normalized on this model "
                          f"(|Phi^T M Phi - I| = {np.max(np.abs(gm - np.eye(m))):.3g})")
    if damping == "modal":
        if ratios is None or len(ratios) < m:
            given = 0 if ratios is None else len(ratios)
            raise StudyError(f"{where}.modal_damping: {given} damping ratio(s) for {m} modes "
                             f"(give one ratio per mode)")
        xi = np.asarray(ratios[:m], float)
        Cg = np.diag(2.0 * xi * omega)
    elif damping == "projected":
        if ratios is not None:
            raise StudyError(f'{where}.modal_damping: only applies with damping = "modal" '
                             f'(damping is "projected": Phi^T C Phi)')
        Cg = phi.T @ (system.damping @ phi)
        Cg = 0.5 * (Cg + Cg.T)
    else:
        raise StudyError(f'{where}.damping: expected "projected" or "modal", got "{damping}"')
    off = Cg - np.diag(np.diag(Cg))
    diagonal = bool(np.max(np.abs(off), initial=0.0)
                    <= DIAGONAL_TOLERANCE * np.max(np.abs(Cg), initial=0.0))
    if diagonal:
        # the coupling terms are round-off: drop them to keep the modal equations uncoupled
        Cg = np.diag(np.diag(Cg))
    Bg = phi.T @ system.B
    q0, v0 = phi.T @ (M @ system.q0), phi.T @ (M @ system.v0)

    T, G = system.T, system.G
    dofs = None
    if nodes is not None:
        if model is None:
            raise ValueError("build_basis: recombining chosen nodes needs the model")
        dofs = node_dofs(model, nodes, f"{where}.nodes")
    TP = np.asarray(T @ phi)
    R = TP if dofs is None else TP[dofs]
    Gs = sp.csr_matrix(G if dofs is None else G[dofs])

    corr = corr_free = None
    if static_correction:
        corr_free = _static_correction(system, phi, omega, where)
        full = np.asarray(T @ corr_free)
        corr = full if dofs is None else full[dofs]
    return ModalBasis(omega=omega, shapes=phi, stiffness=omega ** 2,
                      damping=np.ascontiguousarray(Cg), diagonal=diagonal,
                      B=np.ascontiguousarray(Bg), q0=q0, v0=v0, system=system, dofs=dofs,
                      _R=np.ascontiguousarray(R), _G=Gs, _correction=corr,
                      _correction_free=corr_free)


def node_dofs(model, nodes, where: str) -> np.ndarray:
    """Dofs of every model component at the named nodes, node by node (int64 (nd,))."""
    if not nodes:
        raise StudyError(f"{where}: names no node")
    seen, out = set(), []
    for name in nodes:
        if name in seen:
            raise StudyError(f"{where}: node '{name}' is listed twice")
        seen.add(name)
        idx = model.mesh.node_index(name, where)
        for comp in model.dofs.components:
            out.append(int(model.dofs.dof([idx], comp)[0]))
    return np.asarray(out, np.int64)


def _static_correction(system, phi, omega, where):
    """(nf, nb): (K^-1 - Phi diag(omega^-2) Phi^T) B."""
    if system.B.shape[1] == 0:
        return np.zeros((system.size, 0))
    if np.any(omega <= 0):
        raise StudyError(f"{where}.static_correction: a retained mode has a zero frequency "
                         f"(rigid-body motion): the static response is not defined")
    try:
        lu = scipy.sparse.linalg.splu(sp.csc_matrix(system.stiffness))
        static = lu.solve(np.asarray(system.B, float))
    except RuntimeError:
        raise StudyError(f"{where}.static_correction: the stiffness on the free dofs is "
                         f"singular (rigid-body motion): the static response is not "
                         f"defined") from None
    if not np.all(np.isfinite(static)):
        raise StudyError(f"{where}.static_correction: the stiffness on the free dofs is "
                         f"singular: the static response is not defined")
    return static - phi @ ((phi.T @ system.B) / (omega ** 2)[:, None])


def _derivative(fn, order: int, t: np.ndarray) -> np.ndarray:
    """d^order fn / dt^order at t: exact for every function of a study, right-continuous so
    that an instant on a kink of a table takes the curvature after it rather than a spike
    (``TimeFunction.derivative``; beyond a function's exact orders, one-sided differences
    inside its domain)."""
    t = np.asarray(t, float)
    return np.broadcast_to(fn.derivative(t, order), t.shape).astype(float)


def column_values(columns, t: np.ndarray, order: int = 0) -> np.ndarray:
    """d^order w / dt^order (len(t), nb) for load columns [(function, derivative order)]."""
    t = np.asarray(t, float)
    out = np.empty((len(t), len(columns)))
    for j, (fn, base) in enumerate(columns):
        out[:, j] = _derivative(fn, base + order, t)
    return out
