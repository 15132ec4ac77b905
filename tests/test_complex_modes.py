"""Complex modes against closed forms and independent eigen-solves of companion matrices
built in the tests."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg

from conftest import ROOT, series_springs_toml
from fem.errors import StudyError
from fem.modal.complex_modes import complex_modes


def chain(masses, springs, dampers):
    """Dense M (kg), C (N.s/m), K (N/m) of masses in a row, written by hand: ``springs`` and
    ``dampers`` (n + 1,) hold the element to the left wall, those between neighbours, then
    the one to the right wall (0 for none)."""
    n = len(masses)
    M = np.diag(np.asarray(masses, float))
    out = []
    for values in (springs, dampers):
        A = np.zeros((n, n))
        for e, v in enumerate(values):          # element e joins nodes e - 1 and e
            for a in (e - 1, e):
                if 0 <= a < n:
                    A[a, a] += v
            if 0 < e < n:
                A[e - 1, e] -= v
                A[e, e - 1] -= v
        out.append(A)
    K, C = out
    return M, C, K


def companion_eigenvalues(M, C, K):
    """All eigenvalues of [[0, I], [-M^-1 K, -M^-1 C]] with Im >= 0, ascending |lambda|."""
    n = len(M)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = -np.linalg.solve(M, K)
    A[n:, n:] = -np.linalg.solve(M, C)
    lam = np.linalg.eigvals(A)
    lam = lam[lam.imag >= 0]
    return lam[np.argsort(np.abs(lam))]


def backward_error(lam, phi, M, C, K):
    """|Q(lam) phi| / ((|lam|^2 |M| + |lam| |C| + |K|) |phi|) for each mode (columns)."""
    norms = [np.linalg.norm(a.toarray() if sp.issparse(a) else a, 2 if not sp.issparse(a)
                            else "fro") for a in (M, C, K)]
    out = []
    for j, lj in enumerate(lam):
        r = lj * lj * (M @ phi[:, j]) + lj * (C @ phi[:, j]) + K @ phi[:, j]
        scale = (abs(lj) ** 2 * norms[0] + abs(lj) * norms[1] + norms[2])
        out.append(np.linalg.norm(r) / (scale * np.linalg.norm(phi[:, j])))
    return np.array(out)


def assert_close(computed, reference, rel):
    """Complex values: |computed - reference| <= rel |reference|, element by element."""
    computed, reference = np.asarray(computed), np.asarray(reference)
    assert computed.shape == reference.shape
    error = np.abs(computed - reference) / np.abs(reference)
    assert np.all(error <= rel), f"largest relative error {error.max():.3g} > {rel:g}"


def v4_matrices():
    """The V4 chain on its free dofs P1 ... P8."""
    return chain([10.0] * 8, [1e5] * 9, [250.0] + [50.0] * 7 + [25.0])


# -- V4 ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def v4(tmp_path_factory):
    import h5py
    from fem.runner import run_study

    out = tmp_path_factory.mktemp("v4") / "v4.h5"
    report = run_study(ROOT / "studies" / "v4_chain8.toml", out)
    with h5py.File(out, "r") as f:
        data = {name: f["analyses/cmodes"][name][()] for name in f["analyses/cmodes"]}
        data["conventions"] = f["analyses/cmodes"].attrs["conventions"]
        data["imposed"] = f["dofs/imposed"][()]
        data["modes_frequency"] = f["analyses/modes/frequency"][()]
    data["report"] = report
    return data


def test_v4_study_checks_pass(v4):
    report = v4["report"]
    assert report.failed_analysis is None
    blocks = (ROOT / "studies" / "v4_chain8.toml").read_text().count("[[check]]")
    assert report.checks_passed and len(report.check_rows) == blocks >= 32


def test_v4_real_frequencies_match_the_closed_form(v4):
    omega = 2 * np.sqrt(1e5 / 10.0) * np.sin(np.arange(1, 9) * np.pi / 18)
    assert v4["modes_frequency"] == pytest.approx(omega / (2 * np.pi), rel=1e-12)


def test_v4_eigenvalues_and_both_damping_conventions(v4):
    lam = companion_eigenvalues(*v4_matrices())
    assert len(lam) == 8 and np.all(lam.imag > 0)
    assert_close(v4["eigenvalue"], lam, 1e-8)
    assert v4["frequency"] == pytest.approx(np.abs(lam) / (2 * np.pi), rel=1e-8)
    assert v4["damped_frequency"] == pytest.approx(lam.imag / (2 * np.pi), rel=1e-8)
    assert v4["damping_ratio"] == pytest.approx(-lam.real / np.abs(lam), rel=1e-8)
    assert v4["damping_ratio_damped"] == pytest.approx(-lam.real / lam.imag, rel=1e-8)


def test_v4_shapes_solve_the_quadratic_problem(v4):
    M, C, K = v4_matrices()
    shapes = v4["shapes"]                       # (8 modes, 10 dofs: A, P1 ... P8, B)
    assert shapes.shape == (8, 10) and shapes.dtype == np.complex128
    assert np.all(shapes[:, v4["imposed"]] == 0)
    free = shapes[:, ~v4["imposed"]].T
    assert np.all(backward_error(v4["eigenvalue"], free, M, C, K) < 1e-13)
    # normalization: the largest-modulus component is exactly 1 + 0j
    assert np.abs(shapes).max(axis=1) == pytest.approx(np.ones(8), rel=1e-14)
    pivot = shapes[np.arange(8), np.argmax(np.abs(shapes), axis=1)]
    assert pivot == pytest.approx(np.ones(8), abs=1e-14)


def test_v4_conventions_attribute_defines_every_quantity(v4):
    text = v4["conventions"]
    for piece in ("frequency: |lambda| / (2 pi)", "damped_frequency: Im lambda / (2 pi)",
                  "damping_ratio: -Re lambda / |lambda|",
                  "damping_ratio_damped: -Re lambda / Im lambda", "largest-modulus component"):
        assert piece in text


# -- closed forms -----------------------------------------------------------------------------
def proportional_toml(n, m, k, a, b):
    """Clamped chain with C = a M + b K: dampers a m to the ground, b k along each spring."""
    nodes = "\n".join(f"N{i} = [{float(i)}, 0.0, 0.0]" for i in range(n + 2))
    cells = "\n".join(f'S{i} = {{ type = "SEG2", nodes = ["N{i - 1}", "N{i}"] }}'
                      for i in range(1, n + 2))
    masses = ", ".join(f'"N{i}"' for i in range(1, n + 1))
    springs = ", ".join(f'"S{i}"' for i in range(1, n + 2))
    return f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[model]
components = ["DX"]
[[discrete]]
nodes = [{masses}]
mass = {m}
damping = {a * m}
[[discrete]]
cells = [{springs}]
stiffness = {k}
damping = {b * k}
[[constraint]]
nodes = ["N0", "N{n + 1}"]
DX = 0.0
[[analysis]]
name = "cmodes"
kind = "complex_modes"
count = {n}
"""


def test_proportional_damping_matches_the_closed_form(run_toml):
    n, m, k, a, b = 6, 4.0, 2.5e4, 1.5, 2e-4
    f = run_toml(proportional_toml(n, m, k, a, b))
    g = f["analyses/cmodes"]
    omega = 2 * np.sqrt(k / m) * np.sin(np.arange(1, n + 1) * np.pi / (2 * (n + 1)))
    xi = a / (2 * omega) + b * omega / 2
    lam = -xi * omega + 1j * omega * np.sqrt(1 - xi ** 2)
    assert_close(g["eigenvalue"][:], lam, 1e-10)
    assert g["damping_ratio"][:] == pytest.approx(xi, rel=1e-9)
    assert g["damping_ratio_damped"][:] == pytest.approx(xi / np.sqrt(1 - xi ** 2), rel=1e-9)
    assert g["frequency"][:] == pytest.approx(omega / (2 * np.pi), rel=1e-10)


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_overdamped_oscillator_gives_two_real_modes(method):
    m, k, c = 2.0, 200.0, 60.0                   # xi = c / (2 sqrt(k m)) = 1.5
    M, C, K = (sp.csr_matrix([[v]]) for v in (m, c, k))
    modes = complex_modes(M, C, K, count=2, method=method)
    root = np.sqrt((c / (2 * m)) ** 2 - k / m)
    expected = np.array([-c / (2 * m) + root, -c / (2 * m) - root])
    assert modes.eigenvalue.imag.tolist() == [0.0, 0.0]
    assert modes.eigenvalue.real == pytest.approx(expected, rel=1e-12)
    assert modes.damped_frequency.tolist() == [0.0, 0.0]
    assert modes.damping_ratio == pytest.approx([1.0, 1.0], rel=1e-14)
    assert np.all(np.isposinf(modes.damping_ratio_damped))
    with pytest.raises(StudyError, match=r"analysis\.count: 3 complex modes asked but the model "
                                         r"has only 2"):
        complex_modes(M, C, K, count=3, method=method)


def test_rigid_body_mode_of_a_free_free_chain():
    M, C, K = chain([2.0, 3.0, 4.0, 5.0], [0.0, 1e4, 2e4, 3e4, 0.0], [0.0, 20.0, 5.0, 40.0, 0.0])
    modes = complex_modes(*(sp.csr_matrix(a) for a in (M, C, K)), count=4, method="dense")
    assert modes.eigenvalue[0] == 0
    assert modes.frequency[0] == 0 and modes.damping_ratio[0] == 0
    assert modes.damping_ratio_damped[0] == 0
    assert modes.shapes[:, 0] == pytest.approx(np.ones(4), rel=1e-12)
    # the companion matrix has a double (defective) zero, which round-off splits by about
    # sqrt(eps) times the spectrum's scale: the other three pairs are the rest
    lam = companion_eigenvalues(M, C, K)
    lam = lam[np.abs(lam) > 1e-4 * np.abs(lam).max()]
    assert_close(modes.eigenvalue[1:], lam, 1e-10)
    assert np.all(backward_error(modes.eigenvalue, modes.shapes, M, C, K) < 1e-13)


def test_rigid_body_mode_damped_to_the_ground():
    # a free pair of masses held only by a damper to the ground: lambda = 0 is simple here
    M, C, K = chain([1.0, 2.0], [0.0, 500.0, 0.0], [3.0, 0.0, 0.0])
    modes = complex_modes(*(sp.csr_matrix(a) for a in (M, C, K)), count=3, method="dense")
    lam = companion_eigenvalues(M, C, K)
    assert modes.eigenvalue[0] == 0
    assert_close(modes.eigenvalue[1:], lam[1:], 1e-10)
    assert np.all(backward_error(modes.eigenvalue, modes.shapes, M, C, K) < 1e-13)


@pytest.mark.parametrize("n", [400])
def test_sparse_free_free_chain_with_stiffness_proportional_damping(n):
    m, k, b = 1.0, 1e4, 1e-4
    M, C, K = (sp.csr_matrix(a) for a in chain([m] * n, [0.0] + [k] * (n - 1) + [0.0],
                                               [0.0] + [b * k] * (n - 1) + [0.0]))
    modes = complex_modes(M, C, K, count=6, method="sparse")
    omega = 2 * np.sqrt(k / m) * np.sin(np.arange(6) * np.pi / (2 * n))   # free-free chain
    xi = b * omega / 2
    lam = -xi * omega + 1j * omega * np.sqrt(1 - xi ** 2)
    assert modes.eigenvalue[0] == 0
    assert modes.shapes[:, 0] == pytest.approx(np.ones(n), rel=1e-10)
    assert_close(modes.eigenvalue[1:], lam[1:], 1e-9)


# -- massless dofs ------------------------------------------------------------------------------
def test_massless_undamped_node_is_condensed(run_toml):
    k1, k2, m, c = 3.0e4, 6.0e4, 5.0, 40.0
    f = run_toml(series_springs_toml(k1, k2, m, '[[analysis]]\nname = "cmodes"\n'
                                     'kind = "complex_modes"\ncount = 1\n', c=c))
    g = f["analyses/cmodes"]
    series = k1 * k2 / (k1 + k2)
    lam = -c / (2 * m) + 1j * np.sqrt(series / m - (c / (2 * m)) ** 2)
    assert g["eigenvalue"][0] == pytest.approx(lam, rel=1e-12)
    shape = g["shapes"][0]                       # A, Z, P
    assert shape[2] == 1 and shape[1] == pytest.approx(k2 / (k1 + k2), rel=1e-12)


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_massless_node_with_a_damper_adds_a_real_mode(method):
    # mass m on a spring k1 to the ground, and a Maxwell branch: spring k2 to a massless node
    # z held by a damper c to the ground. det Q = (m l^2 + k1 + k2)(k2 + c l) - k2^2: a cubic
    m, k1, k2, c = 3.0, 2.0e4, 1.0e4, 80.0
    M = sp.csr_matrix([[m, 0.0], [0.0, 0.0]])
    C = sp.csr_matrix([[0.0, 0.0], [0.0, c]])
    K = sp.csr_matrix([[k1 + k2, -k2], [-k2, k2]])
    cubic = np.polymul([m, 0.0, k1 + k2], [c, k2]) - np.array([0.0, 0.0, 0.0, k2 ** 2])
    roots = np.roots(cubic)
    roots = roots[roots.imag >= 0]
    roots = roots[np.argsort(np.abs(roots))]
    modes = complex_modes(M, C, K, count=2, method=method)
    assert_close(modes.eigenvalue, roots, 1e-10)
    assert np.sum(modes.eigenvalue.imag == 0) == 1
    assert np.all(backward_error(modes.eigenvalue, modes.shapes, M.toarray(), C.toarray(),
                                 K.toarray()) < 1e-12)


def test_massless_nodes_sparse_matches_dense():
    rng = np.random.default_rng(5)
    n = 240
    masses = rng.uniform(1.0, 3.0, n)
    masses[::4] = 0.0                            # massless; every other one of them damped
    ground = np.zeros(n)
    ground[::8] = rng.uniform(5.0, 20.0, len(ground[::8]))
    M, C, K = chain(masses, rng.uniform(1e4, 3e4, n + 1), rng.uniform(1.0, 5.0, n + 1))
    C = C + np.diag(ground)
    C[:, 4::8] = 0.0                             # the other massless nodes carry no damper
    C[4::8, :] = 0.0
    Ms, Cs, Ks = (sp.csr_matrix(a) for a in (M, C, K))
    dense = complex_modes(Ms, Cs, Ks, count=12, method="dense")
    sparse = complex_modes(Ms, Cs, Ks, count=12, method="sparse")
    assert_close(sparse.eigenvalue, dense.eigenvalue, 1e-9)
    assert np.all(backward_error(sparse.eigenvalue, sparse.shapes, M, C, K) < 1e-10)
    assert np.all(backward_error(dense.eigenvalue, dense.shapes, M, C, K) < 1e-10)


# -- sparse path, band, errors ----------------------------------------------------------------
def random_chain(n, seed):
    rng = np.random.default_rng(seed)
    return chain(rng.uniform(5.0, 15.0, n), rng.uniform(0.5e5, 1.5e5, n + 1),
                 rng.uniform(10.0, 300.0, n + 1))


def test_sparse_and_dense_paths_agree():
    M, C, K = random_chain(300, 1)
    Ms, Cs, Ks = (sp.csr_matrix(a) for a in (M, C, K))
    dense = complex_modes(Ms, Cs, Ks, count=10, method="dense")
    sparse = complex_modes(Ms, Cs, Ks, count=10, method="sparse")
    assert_close(sparse.eigenvalue, dense.eigenvalue, 1e-10)
    assert sparse.shapes == pytest.approx(dense.shapes, abs=1e-7)


def test_sparse_on_2000_dofs_matches_an_independent_solve():
    n = 2000
    M, C, K = random_chain(n, 2)
    Ms, Cs, Ks = (sp.csr_matrix(a) for a in (M, C, K))
    modes = complex_modes(Ms, Cs, Ks, count=20)              # "auto": sparse at this size
    # shift-invert ARPACK on the companion matrix [[0, I], [-M^-1 K, -M^-1 C]] built here
    Minv = sp.diags(1 / np.diag(M))
    A = sp.bmat([[None, sp.eye(n)], [-Minv @ Ks, -Minv @ Cs]], format="csc")
    lam = scipy.sparse.linalg.eigs(A, k=50, sigma=0.0, which="LM", return_eigenvectors=False)
    lam = lam[lam.imag > 0]
    lam = lam[np.argsort(np.abs(lam))][:20]
    assert_close(modes.eigenvalue, lam, 1e-9)
    assert modes.damping_ratio == pytest.approx(-lam.real / np.abs(lam), rel=1e-7)
    assert modes.damping_ratio_damped == pytest.approx(-lam.real / lam.imag, rel=1e-7)
    assert np.all(backward_error(modes.eigenvalue, modes.shapes, Ms, Cs, Ks) < 1e-10)


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_band_selects_the_modes_inside(method):
    M, C, K = random_chain(150, 3)
    lam = companion_eigenvalues(M, C, K)
    f = np.abs(lam) / (2 * np.pi)
    band = (0.5 * (f[3] + f[4]), 0.5 * (f[8] + f[9]))       # modes 5 ... 9
    Ms, Cs, Ks = (sp.csr_matrix(a) for a in (M, C, K))
    modes = complex_modes(Ms, Cs, Ks, band=band, method=method)
    assert_close(modes.eigenvalue, lam[4:9], 1e-9)
    first = complex_modes(Ms, Cs, Ks, band=band, count=2, method=method)
    assert_close(first.eigenvalue, lam[4:6], 1e-9)


def test_band_without_a_mode_names_the_key(run_toml):
    text = proportional_toml(3, 1.0, 1e4, 0.1, 1e-4).replace("count = 3", "band = [500.0, 600.0]")
    with pytest.raises(StudyError, match=r"analysis\[1\]\.band: no complex mode between 500 and "
                                         r"600 Hz"):
        run_toml(text)


def test_no_mass_is_refused():
    K = sp.csr_matrix([[1.0]])
    with pytest.raises(StudyError, match="no free dof carries mass"):
        complex_modes(K * 0, K * 0, K, count=1)
