"""Factorize once, solve many times: banded Cholesky (after reverse Cuthill-McKee) with
compiled triangular solves, or a sparse LU when the bandwidth is too large."""

from __future__ import annotations

import numba
import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.csgraph
import scipy.sparse.linalg

from fem.errors import SolverError

#: largest (bandwidth + 1) * n stored for a banded factor (float64 entries)
MAX_BANDED_ENTRIES = 50_000_000
MAX_BANDWIDTH = 2000

#: True and False for a flag that compiled code passes to a compiled function: numba types a
#: literal ``True`` in a call as a constant of its own, and compiles the callee once more for
#: it (and again for ``False``); these are plain booleans, typed as the flag of a call from
#: Python is
YES = np.bool_(True)
NO = np.bool_(False)


#: a matrix whose bandwidth in its own ordering is at most this is factorized as it is
NARROW = 4


class Factor:
    """A symmetric positive definite matrix, factorized.

    ``banded`` is True when the compiled path can use it: ``perm`` (n,) orders the
    unknowns and ``band`` (n, b+1), C order, holds the Cholesky factor L, column by column:
    band[j, 0] = 1 / L[j, j] (the solves multiply), band[j, k] = L[j + k, j] (LAPACK's lower
    band storage, transposed; zero beyond the last row).
    Otherwise ``solve`` goes through a sparse LU.

    ``pattern`` (optional, n x n): entries the band must also hold (their values are not
    added): the ordering and the bandwidth are those of the matrix with them, so that a matrix
    with entries there too (a tangent matrix with links' stiffnesses, ``fem.integrators.
    newmark_tangent``) can be factorized in the same band storage.
    """

    def __init__(self, matrix: sp.spmatrix, what: str = "matrix", pattern=None):
        matrix = sp.csr_matrix(matrix)
        shape = abs(matrix.copy())          # (abs sorts the indices in place)
        if pattern is not None:
            shape = shape + abs(sp.csr_matrix(pattern))
        n = matrix.shape[0]
        self.n = n
        self.banded = False
        if n == 0:
            self.perm = np.zeros(0, np.int64)
            self.band = np.zeros((0, 1))
            self.banded = True
            return
        P = matrix.tocoo()
        Q = shape.tocoo()
        bandwidth = int(np.max(np.abs(Q.row - Q.col))) if Q.nnz else 0
        if bandwidth <= NARROW:
            perm = np.arange(n, dtype=np.int64)       # narrow already: no reordering
        else:
            perm = scipy.sparse.csgraph.reverse_cuthill_mckee(shape.tocsr(),
                                                             symmetric_mode=True)
            perm = np.asarray(perm, np.int64)
            P = matrix[perm][:, perm].tocoo()
            Q = shape[perm][:, perm].tocoo()
            bandwidth = int(np.max(np.abs(Q.row - Q.col))) if Q.nnz else 0
        if bandwidth <= MAX_BANDWIDTH and (bandwidth + 1) * n <= MAX_BANDED_ENTRIES:
            ab = np.zeros((bandwidth + 1, n))
            lower = P.row >= P.col
            ab[P.row[lower] - P.col[lower], P.col[lower]] += P.data[lower]
            try:
                band = scipy.linalg.cholesky_banded(ab, lower=True, check_finite=False)
                band[0] = 1.0 / band[0]     # the solves multiply: no division chain
                # transposed: LAPACK's Fortran-ordered (b+1, n) is fem's C-ordered (n, b+1),
                # the one layout the compiled solves and step loops take (each layout would
                # compile them once more), with a column of L in one run of memory
                self.band = np.ascontiguousarray(band.T)
                self.perm = perm
                self.banded = True
                return
            except np.linalg.LinAlgError:
                pass
        try:
            self.lu = scipy.sparse.linalg.splu(matrix.tocsc())
        except RuntimeError as exc:
            raise SolverError(f"the {what} is singular ({exc})") from None

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if self.banded:
            out = np.empty_like(rhs)
            banded_solve(self.band, self.perm, np.ascontiguousarray(rhs), out)
            return out
        return self.lu.solve(rhs)


@numba.njit(cache=True, nogil=True)
def banded_sum_factor(M, C, K, c, k, band):
    """The Cholesky factor of A = M + c C + k K into ``band`` (the storage of
    ``Factor.band``: (n, b+1), column 0 the reciprocals of L's diagonal), the three given in
    the same storage (band[j, k] = A[j + k, j]) and summed entry by entry as the factor goes;
    False
    when A is not positive definite. O(n b^2), no allocation: a step of a new size (an event
    landing) factorizes its S this way."""
    b = M.shape[1] - 1
    n = M.shape[0]
    if b == 1:
        # tridiagonal: the pivots d_j = a_jj - a_j,j-1^2 / d_j-1 as reciprocals (one division
        # on the recurrence's chain), then L_jj = sqrt(d_j) and L_j+1,j = a_j+1,j / L_jj in
        # one pass
        r = 0.0
        e = 0.0
        for j in range(n):
            a = M[j, 0] + c * C[j, 0] + k * K[j, 0]
            a -= e * e * r
            if not a > 0.0:
                return False
            r = 1.0 / a
            band[j, 0] = r
            e = M[j, 1] + c * C[j, 1] + k * K[j, 1]
        for j in range(n):
            q = np.sqrt(band[j, 0])
            band[j, 0] = q
            band[j, 1] = (M[j, 1] + c * C[j, 1] + k * K[j, 1]) * q
        band[n - 1, 1] = 0.0
        return True
    for j in range(n):
        # column j of L: L_ij = (a_ij - sum_p L_ip L_jp) / L_jj, p over the band before j
        d = M[j, 0] + c * C[j, 0] + k * K[j, 0]
        for p in range(max(0, j - b), j):
            d -= band[p, j - p] * band[p, j - p]
        if not d > 0.0:
            return False
        inv = 1.0 / np.sqrt(d)
        band[j, 0] = inv
        for i in range(j + 1, j + b + 1):
            if i >= n:
                band[j, i - j] = 0.0
                continue
            s = M[j, i - j] + c * C[j, i - j] + k * K[j, i - j]
            for p in range(max(0, i - b), j):
                s -= band[p, i - p] * band[p, j - p]
            band[j, i - j] = s * inv
    return True


@numba.njit(cache=True, nogil=True)
def banded_solve(band, perm, rhs, out):
    """Solve L L^T x = rhs[perm], out[perm] = x.

    ``band`` is L in LAPACK lower band storage with row 0 replaced by 1 / diag(L).
    """
    banded_solve_into(band, perm, rhs, out, np.empty(band.shape[0]))


@numba.njit(cache=True, nogil=True)
def banded_solve_rows(band, perm, R):
    """Each row of R (k, n) replaced by the solution of the system with that right-hand
    side (``banded_solve``, in place)."""
    n = band.shape[0]
    x = np.empty(n)
    k = 0
    if band.shape[1] == 2:
        # tridiagonal: two rows at a time, their recurrences interleaved (each step of one
        # waits on the step before; two chains keep the unit busy)
        y = np.empty(n)
        while k + 2 <= R.shape[0]:
            r0, r1 = R[k], R[k + 1]
            s0 = s1 = 0.0
            for j in range(n):
                p = perm[j]
                if j > 0:
                    s0 = (r0[p] - band[j - 1, 1] * s0) * band[j, 0]
                    s1 = (r1[p] - band[j - 1, 1] * s1) * band[j, 0]
                else:
                    s0 = r0[p] * band[0, 0]
                    s1 = r1[p] * band[0, 0]
                x[j] = s0
                y[j] = s1
            s0 = s1 = 0.0
            for j in range(n - 1, -1, -1):
                if j < n - 1:
                    s0 = (x[j] - band[j, 1] * s0) * band[j, 0]
                    s1 = (y[j] - band[j, 1] * s1) * band[j, 0]
                else:
                    s0 = x[j] * band[j, 0]
                    s1 = y[j] * band[j, 0]
                x[j] = s0
                y[j] = s1
            for j in range(n):
                r0[perm[j]] = x[j]
                r1[perm[j]] = y[j]
            k += 2
    while k < R.shape[0]:
        banded_solve_into(band, perm, R[k], R[k], x)
        k += 1


@numba.njit(cache=True, nogil=True, inline="always")
def banded_solve_into(band, perm, rhs, out, x):
    """``banded_solve`` with the scratch array x (n,) given (no allocation)."""
    b = band.shape[1] - 1
    n = band.shape[0]
    if b == 1:
        # the common case (chains): no inner loop
        s = 0.0
        for j in range(n):
            s = (rhs[perm[j]] - (band[j - 1, 1] * s if j > 0 else 0.0)) * band[j, 0]
            x[j] = s
        s = 0.0
        for j in range(n - 1, -1, -1):
            s = (x[j] - (band[j, 1] * s if j < n - 1 else 0.0)) * band[j, 0]
            x[j] = s
    else:
        for j in range(n):
            s = rhs[perm[j]]
            for i in range(1, min(b, j) + 1):
                s -= band[j - i, i] * x[j - i]
            x[j] = s * band[j, 0]
        for j in range(n - 1, -1, -1):
            s = x[j]
            for i in range(1, min(b, n - 1 - j) + 1):
                s -= band[j, i] * x[j + i]
            x[j] = s * band[j, 0]
    for j in range(n):
        out[perm[j]] = x[j]


@numba.njit(cache=True, nogil=True, inline="always")
def csr_matvec_add(data, indices, indptr, x, scale, out):
    """out += scale * A x for a CSR matrix A."""
    n = indptr.size - 1
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        out[i] += scale * s


def as_csr(matrix) -> sp.csr_matrix:
    """``matrix`` itself when it is a CSR matrix already (a copy costs more than the small
    products it feeds), else its CSR conversion."""
    if sp.issparse(matrix) and matrix.format == "csr":
        return matrix
    return sp.csr_matrix(matrix)


def csr_parts(matrix: sp.csr_matrix):
    """(data, indices, indptr) of a matrix in CSR form, copies of its own (the entries and
    their columns must stay in step: scipy sorts a matrix's indices in place, for instance
    when it takes its absolute value, and would leave a shared data array out of step with
    copied indices)."""
    m = as_csr(matrix)
    return (np.array(m.data, np.float64), np.array(m.indices, np.int64),
            np.array(m.indptr, np.int64))


@numba.njit(cache=True, nogil=True)
def small_solve(A, x, m):
    """Solve A[:m, :m] z = x[:m] in place (x[:m] becomes z; A is overwritten) by Gaussian
    elimination with partial pivoting; False when a pivot is exactly zero."""
    for j in range(m):
        piv = j
        best = abs(A[j, j])
        for i in range(j + 1, m):
            if abs(A[i, j]) > best:
                best = abs(A[i, j])
                piv = i
        if best == 0.0:
            return False
        if piv != j:
            for q in range(m):
                tmp = A[j, q]
                A[j, q] = A[piv, q]
                A[piv, q] = tmp
            tmp = x[j]
            x[j] = x[piv]
            x[piv] = tmp
        inv = 1.0 / A[j, j]
        for i in range(j + 1, m):
            f = A[i, j] * inv
            if f != 0.0:
                for q in range(j + 1, m):
                    A[i, q] -= f * A[j, q]
                x[i] -= f * x[j]
    for j in range(m - 1, -1, -1):
        s = x[j]
        for q in range(j + 1, m):
            s -= A[j, q] * x[q]
        x[j] = s / A[j, j]
    return True
