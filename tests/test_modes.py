"""Real modes against closed forms of spring-mass chains and independent eigen-solves."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

from fem.errors import StudyError
from fem.modal.modes import real_modes

from conftest import series_springs_toml


def chain(masses, springs):
    """M (kg) and K (N/m) of masses in a row, written by hand: ``springs`` (n + 1,) holds
    the spring to the left wall, those between neighbours, then the one to the right wall
    (0 for a free end)."""
    k = np.asarray(springs, float)
    off = -k[1:-1]
    K = sp.diags([off, k[:-1] + k[1:], off], [-1, 0, 1], format="csr")
    return sp.diags(np.asarray(masses, float), format="csr"), K


def clamped_omega(n, m, k):
    """n equal masses m, n + 1 springs k, both ends clamped:
    w_j = 2 sqrt(k/m) sin(j pi / (2 (n + 1)))."""
    j = np.arange(1, n + 1)
    return 2 * np.sqrt(k / m) * np.sin(j * np.pi / (2 * (n + 1)))


def free_free_omega(n, m, k):
    """n equal masses, n - 1 springs, both ends free: w_j = 2 sqrt(k/m) sin(j pi/(2n)), j = 0.."""
    j = np.arange(n)
    return 2 * np.sqrt(k / m) * np.sin(j * np.pi / (2 * n))


def chain_toml(n, *, mass=10.0, k=1e5, clamp=True, analysis=""):
    """Study text: N1 ... Nn masses on the X axis; with ``clamp``, walls N0 and N{n+1}."""
    first, last = (0, n + 1) if clamp else (1, n)
    nodes = "\n".join(f"N{i} = [{float(i)}, 0.0, 0.0]" for i in range(first, last + 1))
    cells = "\n".join(f'S{i} = {{ type = "SEG2", nodes = ["N{i - 1}", "N{i}"] }}'
                      for i in range(first + 1, last + 1))
    masses = ", ".join(f'"N{i}"' for i in range(1, n + 1))
    clamp_block = f'[[constraint]]\nnodes = ["N0", "N{n + 1}"]\nDX = 0.0\n' if clamp else ""
    return f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[model]
components = ["DX"]
[[discrete]]
nodes = [{masses}]
mass = {mass}
[[discrete]]
cells = [{", ".join(f'"S{i}"' for i in range(first + 1, last + 1))}]
stiffness = {k}
{clamp_block}
{analysis}
"""


def test_clamped_chain_matches_closed_form():
    n, m, k = 12, 2.0, 3.0e3
    M, K = chain([m] * n, [k] * (n + 1))
    modes = real_modes(M, K, count=n)
    omega = clamped_omega(n, m, k)
    assert modes.omega == pytest.approx(omega, rel=1e-12)
    phi = modes.shapes
    assert phi.T @ (M @ phi) == pytest.approx(np.eye(n), abs=1e-12)
    # closed-form shapes sin(i j pi / (n + 1)), compared up to sign after mass normalization
    i = np.arange(1, n + 1)[:, None]
    exact = np.sin(i * np.arange(1, n + 1)[None, :] * np.pi / (n + 1))
    exact /= np.sqrt(m * (exact ** 2).sum(axis=0))
    assert np.abs(np.sum(phi * exact, axis=0) * m) == pytest.approx(np.ones(n), abs=1e-10)


def test_study_modes_shapes_and_effective_masses(run_toml):
    n, m, k = 5, 10.0, 1e5
    f = run_toml(chain_toml(n, mass=m, k=k, analysis="""
[[analysis]]
name = "modes"
kind = "modes"
count = 5
"""))
    g = f["analyses/modes"]
    assert g["frequency"][:] == pytest.approx(clamped_omega(n, m, k) / (2 * np.pi), rel=1e-12)
    shapes = g["shapes"][:]
    imposed = f["dofs/imposed"][:]
    assert shapes.shape == (n, n + 2) and np.all(shapes[:, imposed] == 0)
    # every free dof is a translation along X: the effective masses along X sum to the
    # moving mass, those along Y and Z are 0
    effective = g["effective_mass"][:]
    assert effective[:, 0].sum() == pytest.approx(n * m, rel=1e-12)
    assert np.all(effective[:, 1:] == 0)
    assert g["participation_factor"][:, 0] ** 2 == pytest.approx(effective[:, 0], rel=1e-12)
    # the participation factor of mode j is phi_j^T M r with r = 1 on every free dof
    assert g["participation_factor"][:, 0] == pytest.approx(m * shapes[:, ~imposed].sum(axis=1),
                                                            rel=1e-10, abs=1e-12)


def test_band_selects_the_modes_inside():
    n, m, k = 12, 2.0, 3.0e3
    M, K = chain([m] * n, [k] * (n + 1))
    f = clamped_omega(n, m, k) / (2 * np.pi)
    band = (0.5 * (f[1] + f[2]), 0.5 * (f[5] + f[6]))       # modes 3 ... 6
    for method in ("dense", "sparse"):
        modes = real_modes(M, K, band=band, method=method)
        assert modes.frequency == pytest.approx(f[2:6], rel=1e-10)
        first_two = real_modes(M, K, band=band, count=2, method=method)
        assert first_two.frequency == pytest.approx(f[2:4], rel=1e-10)


def test_sparse_matches_an_independent_dense_solve_on_3000_dofs():
    rng = np.random.default_rng(7)
    n = 3000
    masses = rng.uniform(5.0, 15.0, n)
    springs = rng.uniform(0.5e5, 1.5e5, n + 1)
    springs[-1] = 0.0                                   # one end free
    M, K = chain(masses, springs)
    modes = real_modes(M, K, count=20, method="sparse")
    # the same eigenproblem, symmetric and tridiagonal after scaling by M^-1/2, by LAPACK
    s = 1 / np.sqrt(masses)
    d = K.diagonal() * s * s
    e = K.diagonal(1) * s[:-1] * s[1:]
    w2, v = scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, 19))
    # a dense solver knows eigenvalues to about n eps |A| in absolute terms: the lowest
    # ones (|A| / w2 ~ 1e7 here) only to ~1e-9 relative
    norm = np.abs(d).max() + 2 * np.abs(e).max()
    assert np.all(np.abs(modes.omega ** 2 - w2) <= 1e-11 * norm)
    assert modes.omega == pytest.approx(np.sqrt(w2), rel=1e-8)
    reference = v * s[:, None]                          # mass-normalized shapes
    overlap = np.abs(np.einsum("ij,ij->j", modes.shapes, M @ reference))
    assert overlap == pytest.approx(np.ones(20), abs=1e-8)


def test_sparse_and_dense_paths_agree():
    rng = np.random.default_rng(3)
    n = 300
    M, K = chain(rng.uniform(1.0, 2.0, n), rng.uniform(1e3, 2e3, n + 1))
    dense = real_modes(M, K, count=15, method="dense")
    sparse = real_modes(M, K, count=15, method="sparse")
    assert sparse.omega == pytest.approx(dense.omega, rel=1e-10)
    # both follow the same sign convention (largest component positive)
    assert sparse.shapes == pytest.approx(dense.shapes, abs=1e-8)


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_free_free_chain_has_a_rigid_body_mode(method):
    n, m, k = 6 if method == "dense" else 1000, 3.0, 2.0e4
    M, K = chain([m] * n, [0.0] + [k] * (n - 1) + [0.0])
    modes = real_modes(M, K, count=4, method=method)
    omega = free_free_omega(n, m, k)
    # a zero eigenvalue w^2 comes out to about eps |K| / m, its square root to ~1e-8 w_max
    assert modes.omega[0] <= 1e-6 * 2 * np.sqrt(k / m)
    assert modes.omega[1:] == pytest.approx(omega[1:4], rel=1e-9)
    assert modes.shapes[:, 0] == pytest.approx(np.full(n, 1 / np.sqrt(n * m)), rel=1e-8)


def test_massless_middle_node_is_a_spring_in_series(run_toml):
    k1, k2, m = 3.0e4, 6.0e4, 5.0
    f = run_toml(series_springs_toml(k1, k2, m, '[[analysis]]\nname = "modes"\n'
                                     'kind = "modes"\ncount = 1\n'))
    g = f["analyses/modes"]
    series = k1 * k2 / (k1 + k2)
    assert g["frequency"][0] == pytest.approx(np.sqrt(series / m) / (2 * np.pi), rel=1e-12)
    shape = g["shapes"][0]                             # dofs in node order: A, Z, P
    # Z follows P statically: k1 u_Z = k2 (u_P - u_Z)
    assert shape[1] == pytest.approx(k2 / (k1 + k2) * shape[2], rel=1e-12)
    assert shape[2] == pytest.approx(1 / np.sqrt(m), rel=1e-12)


def test_more_modes_than_free_dofs_with_mass_is_refused(run_toml):
    text = chain_toml(3, analysis="""
[[analysis]]
name = "modes"
kind = "modes"
count = 4
""")
    with pytest.raises(StudyError, match=r"analysis\[1\]\.count: 4 modes asked but the model "
                                         r"has only 3 free dofs with mass"):
        run_toml(text)


def test_band_without_a_mode_names_the_key(run_toml):
    text = chain_toml(3, analysis="""
[[analysis]]
name = "modes"
kind = "modes"
band = [1000.0, 2000.0]
""")
    with pytest.raises(StudyError, match=r"analysis\[1\]\.band: no mode between 1000 and 2000 Hz"):
        run_toml(text)
