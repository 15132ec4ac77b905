"""K and C by diagonals (``fem.integrators.dynamics.diagonals``) for the Newmark predictor
and the energy terms: the same products as the CSR matrices, and the CSR path kept where the
diagonals would not pay."""

import numpy as np
import pytest
import scipy.sparse as sp

from fem.integrators.dynamics import MAX_DIAGONALS, diagonals
from fem.integrators.kernels import step_powers, step_powers_dia
from fem.integrators.newmark_steps import dia_products


def banded(n, offsets, rng):
    A = sp.lil_matrix((n, n))
    for o in offsets:
        for i in range(max(0, -o), min(n, n - o)):
            A[i, i + o] = rng.random() - 0.5
    return sp.csr_matrix(A + A.T)


@pytest.mark.parametrize("offsets", [(0, 1), (0, 1, 2), (0, 3)])
def test_products_by_diagonals_equal_the_csr_ones(offsets):
    rng = np.random.default_rng(len(offsets))
    n = 50
    K, C = banded(n, offsets, rng), banded(n, (0, 1), rng)
    offs, Kdia, Cdia = diagonals(K, C)
    assert offs.size and set(offs.tolist()) >= {0, 1, -1}
    u, v, out = rng.random(n), rng.random(n), rng.random(n)
    expected = out - 2.0 * (K @ u + C @ v)
    dia_products.py_func(offs, Kdia, Cdia, u, v, -2.0, out)
    assert np.allclose(out, expected, rtol=1e-14, atol=1e-14)
    # the energy terms of a step: (x1 - x0) . B (w0 + w1) and (x1 - x0) . C (v0 + v1)
    B = rng.random((n, 2))
    w0, w1, x0, x1, v0, v1 = rng.random(2), rng.random(2), *(rng.random(n) for _ in range(4))
    Cc = sp.csr_matrix(C)
    csr = step_powers.py_func(B, Cc.data, Cc.indices.astype(np.int64),
                              Cc.indptr.astype(np.int64), w0, w1, x0, x1, v0, v1)
    dia = step_powers_dia.py_func(B, offs, Cdia, w0, w1, x0, x1, v0, v1)
    exact = ((x1 - x0) @ B @ (w0 + w1), (x1 - x0) @ (C @ (v0 + v1)))
    assert np.allclose(csr, exact, rtol=1e-13) and np.allclose(dia, exact, rtol=1e-13)


def test_no_diagonals_where_they_would_not_pay():
    rng = np.random.default_rng(0)
    n = 40
    wide = banded(n, tuple(range(MAX_DIAGONALS)), rng)
    assert diagonals(wide, wide)[0].size == 0          # too many diagonals
    D = sp.diags(rng.random(n)).tocsr()
    assert diagonals(D, D)[0].size == 0                # diagonal: the uncoupled path
    corner = sp.csr_matrix(([1.0, 1.0, 1.0], ([0, n - 1, 5], [n - 1, 0, 5])), shape=(n, n))
    assert diagonals(corner, D)[0].size == 0           # two diagonals of one entry each
