"""The equations every transient scheme integrates, on either basis.

    M x'' + C x' + K x = B w(t) + L^T phi(d, d'),    d = L x + Lw w(t),   d' = L x' + Lv w(t)

x are the free dofs (physical basis: ``fem.assembly.System``) or the modal coordinates (modal
basis: ``fem.modal.basis.ModalBasis``, M = I, K = diag(omega^2), C the generalized damping);
w(t) (nb,) the values of the time columns (load functions, imposed motions and their
derivatives); phi (3 m,) the forces of the m links on their first nodes and d their relative
translations (``fem.links``), whose imposed part Lw w (and its rates Lv w, La w) comes from the
imposed motion of the links' dofs: the gap of a link on a moving support uses the total motion.

A scheme reads the matrices as CSR parts (``Operators``), so that one compiled step serves
both bases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from fem.linalg import as_csr, csr_parts


class Operators(NamedTuple):
    """CSR parts of K, C and M, and B (n, nb), for the compiled loops; Kdiag, Cdiag the
    diagonals of K and C when both are diagonal (a modal basis with uncoupled damping),
    empty otherwise; K and C by diagonals when they are narrow in the order of the unknowns
    (``diagonals``): the offsets (nd,) of the diagonals that hold their entries and Kdia,
    Cdia (nd, n), row i of A times x being sum_q Adia[q, i] x[i + offsets[q]]; offsets empty
    otherwise."""
    Kd: np.ndarray
    Ki: np.ndarray
    Kp: np.ndarray
    Cd: np.ndarray
    Ci: np.ndarray
    Cp: np.ndarray
    Md: np.ndarray
    Mi: np.ndarray
    Mp: np.ndarray
    B: np.ndarray
    Kdiag: np.ndarray
    Cdiag: np.ndarray
    offsets: np.ndarray
    Kdia: np.ndarray
    Cdia: np.ndarray


class Kinematics(NamedTuple):
    """L as CSR parts (3 m, n) and the imposed parts Lw, Lv, La (3 m, nb) of the link
    displacements, rates and accelerations; ``imposed`` is False when they are all zero."""
    Ld: np.ndarray
    Li: np.ndarray
    Lp: np.ndarray
    Lw: np.ndarray
    Lv: np.ndarray
    La: np.ndarray
    imposed: bool


@dataclass
class Dynamics:
    """The integrated system (module docstring).

    basis : "physical" or "modal"; mass, stiffness, damping : (n, n) csr; B : (n, nb);
    columns : [(function, derivative order)] of the nb time columns; L : (3 m, n) csr;
    Lw, Lv, La : (3 m, nb); x0, v0 : (n,) initial state; expand : (rows (k, n), t (k,),
    order) -> physical rows of the archived dofs; generalized : the coordinates are modal
    (archived too); omega : (n,) frequencies of the modal basis (None in physical space).
    """
    basis: str
    mass: sp.csr_matrix
    stiffness: sp.csr_matrix
    damping: sp.csr_matrix
    B: np.ndarray
    columns: list
    L: sp.csr_matrix
    Lw: np.ndarray
    Lv: np.ndarray
    La: np.ndarray
    x0: np.ndarray
    v0: np.ndarray
    expand: object
    generalized: bool = False
    omega: np.ndarray | None = None
    source: object = None
    names: object = None

    def describe(self, j: int) -> str:
        """What coordinate j is, for messages."""
        if self.names is not None:
            return self.names(j)
        if self.generalized:
            return f"the generalized coordinate of mode {j + 1}"
        return f"free dof {j}"

    @property
    def size(self) -> int:
        return self.mass.shape[0]

    def load_values(self, t) -> np.ndarray:
        """w(t) (len(t), nb)."""
        from fem.modal.basis import column_values

        return column_values(self.columns, np.atleast_1d(np.asarray(t, float)), 0)

    def operators(self) -> Operators:
        K, C = as_csr(self.stiffness), as_csr(self.damping)
        diagonal = all(_is_diagonal(A) for A in (K, C))
        kd = np.ascontiguousarray(K.diagonal(), np.float64) if diagonal else np.zeros(0)
        cd = np.ascontiguousarray(C.diagonal(), np.float64) if diagonal else np.zeros(0)
        offsets, Kdia, Cdia = diagonals(K, C)
        return Operators(*csr_parts(K), *csr_parts(C), *csr_parts(self.mass),
                         np.ascontiguousarray(self.B, np.float64), kd, cd, offsets, Kdia, Cdia)

    def kinematics(self) -> Kinematics:
        imposed = bool(np.any(self.Lw) or np.any(self.Lv) or np.any(self.La))
        return Kinematics(*csr_parts(self.L), *(np.ascontiguousarray(a, np.float64)
                                               for a in (self.Lw, self.Lv, self.La)), imposed)

    @property
    def breakpoints(self) -> np.ndarray:
        """Times (s) where a time column is not smooth."""
        out = [np.asarray(fn.breakpoints, float) for fn, _ in self.columns]
        return np.unique(np.concatenate(out)) if out else np.zeros(0)

    def mass_solve(self):
        """A function rhs (n,) or (n, k) -> M^-1 rhs (for the velocity jumps of impacts)."""
        import scipy.sparse.linalg

        if self.basis == "modal":
            return lambda rhs: np.array(rhs, float)
        d = self.mass.diagonal()
        if self.mass.nnz == np.count_nonzero(d) and np.all(d > 0):
            return lambda rhs: (rhs.T / d).T
        lu = scipy.sparse.linalg.splu(sp.csc_matrix(self.mass))
        return lambda rhs: lu.solve(np.asarray(rhs, float))


#: K and C go by diagonals when their entries lie on at most this many diagonals ...
MAX_DIAGONALS = 9
#: ... that hold at least this share of stored entries (the others are zeros)
MIN_DIAGONAL_FILL = 0.5


def diagonals(K: sp.csr_matrix, C: sp.csr_matrix):
    """(offsets, Kdia, Cdia) of ``Operators`` for K and C together, or empty arrays when
    their entries lie on more than MAX_DIAGONALS diagonals, fill them too sparsely, or
    lie on the main diagonal alone (a product by diagonals then gains nothing). A chain
    numbered along its length is tridiagonal: the Newmark predictor's products go over
    contiguous diagonals, which the compiler vectorizes, rather than through the CSR
    indices."""
    n = K.shape[0]
    empty = (np.zeros(0, np.int64), np.zeros((0, n)), np.zeros((0, n)))
    offs = set()
    nnz = 0
    for A in (K, C):
        A = A.tocoo()
        keep = A.data != 0
        offs.update(np.unique(A.col[keep] - A.row[keep]).tolist())
        nnz = max(nnz, int(np.count_nonzero(keep)))
    if not n or len(offs) > MAX_DIAGONALS or offs <= {0} or nnz < MIN_DIAGONAL_FILL * len(offs) * n:
        return empty
    offsets = np.array(sorted(offs), np.int64)
    out = []
    for A in (K, C):
        D = np.zeros((offsets.size, n))
        for q, o in enumerate(offsets):
            d = A.diagonal(int(o))
            if o >= 0:
                D[q, :n - o] = d
            else:
                D[q, -o:] = d
        out.append(D)
    return (offsets, *out)


def _is_diagonal(A: sp.csr_matrix) -> bool:
    """Whether every nonzero of A is on its diagonal."""
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    return not np.any((A.indices != rows) & (A.data != 0))


def _with_columns(B, columns, wanted):
    """Add the (function, order) time columns in ``wanted`` that ``columns`` lacks (with zero
    columns of B); returns (B, columns, index of each wanted column)."""
    columns = list(columns)
    extra = []
    index = []
    for key in wanted:
        for j, (fn, order) in enumerate(columns):
            if fn is key[0] and order == key[1]:
                index.append(j)
                break
        else:
            columns.append(key)
            extra.append(key)
            index.append(len(columns) - 1)
    if extra:
        B = np.hstack([B, np.zeros((B.shape[0], len(extra)))])
    return B, columns, index


def _imposed_parts(D, G, functions, B, columns):
    """Lw, Lv, La (3 m, nb) of the links' imposed motion D G h(t), with the time columns they
    need added to (B, columns)."""
    m3 = D.shape[0]
    if G.shape[1] == 0 or m3 == 0:
        z = np.zeros((m3, B.shape[1]))
        return B, columns, z, z.copy(), z.copy()
    DG = np.asarray((D @ G).todense())
    used = [j for j in range(DG.shape[1]) if np.any(DG[:, j])]
    wanted = [(functions[j], order) for j in used for order in (0, 1, 2)]
    B, columns, index = _with_columns(np.asarray(B, float), columns, wanted)
    parts = [np.zeros((m3, B.shape[1])) for _ in range(3)]
    for k, j in enumerate(used):
        for order in range(3):
            parts[order][:, index[3 * k + order]] += DG[:, j]
    return B, columns, *parts


def physical(system, D) -> Dynamics:
    """The dynamics of a physical analysis: ``system`` (``fem.assembly.System``) and the
    links' relative translations D (3 m, n_model) on all the model's dofs."""
    D = sp.csr_matrix(D)
    L = (D @ system.T).tocsr()
    L.eliminate_zeros()
    B, columns, Lw, Lv, La = _imposed_parts(D, system.G, system.g_functions, system.B,
                                            system.columns)

    def expand(x, t, order=0):
        return system.expand(x, t, order)

    return Dynamics("physical", system.mass, system.stiffness, system.damping, B, columns, L,
                    Lw, Lv, La, system.q0, system.v0, expand, source=system)


def modal(basis, D) -> Dynamics:
    """The dynamics on a modal basis (``fem.modal.basis.ModalBasis``): x = q, M = I,
    K = diag(omega^2), C the generalized damping; the links act through D T Phi."""
    system = basis.system
    D = sp.csr_matrix(D)
    m = basis.size
    L = sp.csr_matrix(np.asarray(D @ system.T @ basis.shapes))
    L.eliminate_zeros()
    B, columns, Lw, Lv, La = _imposed_parts(D, system.G, system.g_functions, basis.B,
                                            basis.columns)
    C = np.asarray(basis.damping, float)
    damping = sp.csr_matrix(np.diag(np.diag(C)) if basis.diagonal else C)
    nb_basis = len(basis.columns)

    def expand(q, t, order=0):
        return basis.recombine(q, t, order)

    dyn = Dynamics("modal", sp.identity(m, format="csr"),
                   sp.diags(np.asarray(basis.stiffness, float)).tocsr(), damping, B, columns,
                   L, Lw, Lv, La, np.asarray(basis.q0, float), np.asarray(basis.v0, float),
                   expand, generalized=True, omega=np.asarray(basis.omega, float),
                   source=basis)
    assert B.shape[1] >= nb_basis
    return dyn
