"""The banded factors and solves of fem.linalg against numpy's dense ones."""

import numpy as np
import pytest

from fem.linalg import Factor, banded_solve_rows, banded_sum_factor


def banded(width, n, rng):
    """A symmetric positive definite matrix of half bandwidth ``width`` (dense) and its
    band storage (n, width + 1), band[j, k] = A[j + k, j] (``Factor.band``)."""
    A = np.diag(4.0 + rng.random(n))
    for j in range(1, width + 1):
        off = -0.5 * rng.random(n - j)
        A += np.diag(off, j) + np.diag(off, -j)
    ab = np.zeros((n, width + 1))
    for j in range(width + 1):
        ab[:n - j, j] = np.diag(A, -j)
    return A, ab


@pytest.mark.parametrize("width", [1, 2, 3])
def test_factor_of_a_weighted_sum(width):
    """M + c C + k K factorized from the three band storages solves as numpy does; a sum
    that is not positive definite gives False."""
    rng = np.random.default_rng(width)
    n = 40
    (M, m), (C, c), (K, k) = (banded(width, n, rng) for _ in range(3))
    band = np.empty_like(m)
    assert banded_sum_factor(m, c, k, 0.3, 2.0, band)
    f = Factor.__new__(Factor)
    f.n, f.banded, f.perm, f.band = n, True, np.arange(n, dtype=np.int64), band
    r = rng.random(n)
    assert np.allclose(f.solve(r), np.linalg.solve(M + 0.3 * C + 2.0 * K, r), rtol=1e-13,
                       atol=0)
    assert not banded_sum_factor(m, c, k, 0.0, -10.0, band)


@pytest.mark.parametrize("width", [1, 2])
@pytest.mark.parametrize("rows", [1, 2, 5])
def test_solve_of_several_rows(width, rows):
    """Each row of R replaced by A^-1 R[k] (in place, the unknowns reordered by the
    factor's permutation; two rows at a time when tridiagonal, an odd one alone)."""
    rng = np.random.default_rng(10 * width + rows)
    n = 30
    A, ab = banded(width, n, rng)
    band = np.empty_like(ab)
    zero = np.zeros_like(ab)
    assert banded_sum_factor(ab, zero, zero, 0.0, 0.0, band)
    # S is A with its unknowns in another order: S[perm][:, perm] = A
    perm = rng.permutation(n).astype(np.int64)
    inverse = np.argsort(perm)
    S = A[inverse][:, inverse]
    R = rng.random((rows, n))
    X = R.copy()
    banded_solve_rows(band, perm, X)
    for k in range(rows):
        assert np.allclose(X[k], np.linalg.solve(S, R[k]), rtol=1e-13, atol=0)
