"""Transient analysis on a modal basis against independent solutions: the matrix exponential
of the first-order system (augmented for step, ramp and sine loads), closed forms of the step
rules, and the known orders of the schemes."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import scipy.linalg

from conftest import ROOT, oscillator_toml
from fem.errors import StudyError
from test_newmark import chain3_exact, exact_linear

V3_MODEL = f"""
[mesh]
file = "{(ROOT / 'meshes' / 'chain3.mail').as_posix()}"
[model]
components = ["DX", "DY", "DZ"]
[[discrete]]
cells = ["AC"]
stiffness = [28e4, 1.0, 2.0]
[[discrete]]
cells = ["CB"]
stiffness = [28e2, 1.0, 2.0]
[[discrete]]
cell_groups = ["SPRINGS"]
damping = [50.0, 0.0, 0.0]
[[discrete]]
node_groups = ["MASSES"]
mass = 10.0
[[constraint]]
node_groups = ["CLAMP"]
DX = 0.0
DY = 0.0
DZ = 0.0
[functions.step]
table = [[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]]
right = "constant"
[[load]]
name = "push"
kind = "force"
nodes = ["N3"]
FX = 5.0
function = "step"
[[analysis]]
name = "modes"
kind = "modes"
count = 6
"""
N3_DX = 6            # node N3 (index 2) times 3 components, DX first


def modal(name, scheme, extra="", end=2.5, modes="modes"):
    """A [[analysis]] block: transient on the basis of ``modes``."""
    return (f'\n[[analysis]]\nname = "{name}"\nkind = "transient"\nbasis = "modal"\n'
            f'modes = "{modes}"\nscheme = "{scheme}"\nend = {end}\n{extra}\n')


def relative_errors(g, exact, dof=N3_DX, columns=(1, 3)):
    """Max |computed - exact| / max |exact| of the displacement and velocity of ``dof``."""
    out = []
    for field, col in zip(("displacement", "velocity"), columns):
        ref = exact[:, col]
        out.append(np.max(np.abs(g[field][:, dof] - ref)) / np.max(np.abs(ref)))
    return out


# ------------------------------------------------------------------------------------------
# V3: every scheme against the matrix exponential
V3_RUNS = {
    # name: (block parameters, bound on the u and v errors, range of accepted steps)
    "central_difference": ('step = 1e-3', (6e-3, 1.5e-2), (2500, 2500)),
    "newmark": ('step = 1e-3', (6e-3, 1.5e-2), (2500, 2500)),
    "euler": ('step = 2e-5\narchive = { every = 50 }', (5e-4, 5e-4), (125000, 125000)),
    "euler_adaptive": ('tolerance = 1e-3', (1e-3, 1e-3), (15000, 40000)),
    "adaptive2": ('step = 1e-3\nmax_step = 1e-4', (5e-7, 1.5e-6), (25000, 26000)),
    "rk32": ('tolerance = 1e-5', (1e-4, 2e-4), (300, 1000)),
    "rk54": ('tolerance = 1e-5', (5e-7, 5e-6), (150, 500)),
    "devogelaere": ('step = 1e-3\nmax_step = 5e-5', (2e-12, 2e-12), (50000, 50010)),
}


@pytest.fixture(scope="module")
def v3_runs(tmp_path_factory):
    from fem.runner import run_study

    text = V3_MODEL
    for name, (params, _, _) in V3_RUNS.items():
        scheme = "euler" if name.startswith("euler") else name
        text += modal(name, scheme, params)
    path = tmp_path_factory.mktemp("v3") / "v3.toml"
    path.write_text(text)
    report = run_study(path, path.with_suffix(".h5"))
    assert report.failed_analysis is None, report.message
    with h5py.File(path.with_suffix(".h5")) as f:
        yield f


@pytest.mark.parametrize("name", list(V3_RUNS))
def test_v3_scheme_matches_matrix_exponential(v3_runs, name):
    g = v3_runs["analyses"][name]
    t = g["time"][:]
    err_u, err_v = relative_errors(g, chain3_exact(t))
    steps, rejected = int(g.attrs["steps"]), int(g.attrs["rejected_steps"])
    print(f"V3 {name:18s}: max error u(N3) {err_u:.2e}, v(N3) {err_v:.2e} (relative to the "
          f"peak); {steps} steps, {rejected} rejected, {len(t)} archived instants")
    (bound_u, bound_v), (lo, hi) = V3_RUNS[name][1], V3_RUNS[name][2]
    assert err_u < bound_u and err_v < bound_v
    assert lo <= steps <= hi
    assert t[0] == 0.0 and abs(t[-1] - 2.5) < 1e-12 and np.all(np.diff(t) > 0)


def test_v3_study_file_passes_its_checks(tmp_path):
    from fem.runner import run_study

    report = run_study(ROOT / "studies" / "v3_chain3.toml", tmp_path / "v3.h5")
    assert report.checks_passed
    names = {r.analysis for r in report.check_rows}
    assert names == {"newmark", "central_difference", "adaptive2", "rk32", "rk54",
                     "devogelaere"}
    assert len(report.check_rows) == 6 * 25


def test_recombination_is_the_shapes_times_q(v3_runs):
    """u = T Phi q on all dofs: the shapes of the modes analysis (imposed dofs at zero)."""
    shapes = v3_runs["analyses/modes/shapes"][:]                  # (m, ndof)
    g = v3_runs["analyses/rk54"]
    for field, gen in (("displacement", "q"), ("velocity", "qdot"), ("acceleration", "qddot")):
        q = g[f"generalized/{gen}"][:]
        assert q.shape == (len(g["time"]), 6)
        assert np.allclose(g[field][:], q @ shapes, rtol=0, atol=1e-14 * np.abs(q).max())


# ------------------------------------------------------------------------------------------
# orders and tolerances
def run_v3(run_toml, blocks, name):
    return run_toml(V3_MODEL + blocks, name=name)


@pytest.mark.parametrize("scheme,steps,params,order", [
    ("central_difference", (4e-4, 2e-4, 1e-4), "step = {h}", 2),
    ("newmark", (4e-4, 2e-4, 1e-4), "step = {h}", 2),
    ("euler", (4e-5, 2e-5, 1e-5), "step = {h}\narchive = {{ every = 100 }}", 1),
    ("adaptive2", (4e-4, 2e-4, 1e-4), "step = 1e-3\nmax_step = {h}\ntolerance = 1e-2", 2),
    ("devogelaere", (2e-3, 1e-3, 5e-4), "step = 1e-3\nmax_step = {h}\ntolerance = 1.0", 4),
])
def test_order_of_convergence(run_toml, scheme, steps, params, order):
    """Halving the step (max_step for the adaptive ones, with a rule that never asks for a
    shorter step here) divides the error by 2^order, on V3 before the load is removed."""
    blocks = "".join(modal(f"h{i}", scheme, params.format(h=h), end=0.9)
                     for i, h in enumerate(steps))
    f = run_v3(run_toml, blocks, f"order_{scheme}")
    errors = []
    for i in range(len(steps)):
        g = f["analyses"][f"h{i}"]
        errors.append(max(relative_errors(g, chain3_exact(g["time"][:]))))
    ratios = [errors[i] / errors[i + 1] for i in range(len(errors) - 1)]
    print(f"{scheme}: errors {['%.2e' % e for e in errors]}, ratios {['%.2f' % r for r in ratios]}")
    assert all(0.85 * 2 ** order < r < 1.15 * 2 ** order for r in ratios)


@pytest.mark.parametrize("scheme,q", [("rk32", 2), ("rk54", 4)])
def test_error_proportional_to_tolerance(run_toml, scheme, q):
    """With local extrapolation the global error is proportional to the tolerance, and the
    number of steps grows as tol^(-1/(q+1)) (q: order of the embedded estimate)."""
    tolerances = (1e-5, 1e-6, 1e-7, 1e-8)
    blocks = "".join(modal(f"t{i}", scheme, f"tolerance = {tol}")
                     for i, tol in enumerate(tolerances))
    f = run_v3(run_toml, blocks, f"tol_{scheme}")
    errors, steps = [], []
    for i in range(len(tolerances)):
        g = f["analyses"][f"t{i}"]
        errors.append(max(relative_errors(g, chain3_exact(g["time"][:]))))
        steps.append(int(g.attrs["steps"]))
    slope = np.polyfit(np.log10(tolerances), np.log10(errors), 1)[0]
    growth = [steps[i + 1] / steps[i] for i in range(len(steps) - 1)]
    print(f"{scheme}: errors {['%.2e' % e for e in errors]} (slope {slope:.2f}), steps {steps}")
    assert 0.85 < slope < 1.15
    expected = 10 ** (1 / (q + 1))
    assert all(0.8 * expected < g < 1.25 * expected for g in growth)
    assert all(e < 10 * tol for e, tol in zip(errors, tolerances))


@pytest.mark.parametrize("scheme,tolerances,exponent", [
    ("adaptive2", (1e-5, 1e-6, 1e-7), 0.5), ("euler", (1e-2, 1e-3, 1e-4), 1.0)])
def test_apparent_frequency_rule_error_and_steps(run_toml, scheme, tolerances, exponent):
    """The step is c tol^exponent / omega_app: error proportional to the tolerance, steps
    growing as tol^-exponent."""
    blocks = "".join(modal(f"t{i}", scheme, f"tolerance = {tol}", end=0.9)
                     for i, tol in enumerate(tolerances))
    f = run_v3(run_toml, blocks, f"rule_{scheme}")
    errors, steps = [], []
    for i in range(len(tolerances)):
        g = f["analyses"][f"t{i}"]
        errors.append(max(relative_errors(g, chain3_exact(g["time"][:]))))
        steps.append(int(g.attrs["steps"]))
    print(f"{scheme}: errors {['%.2e' % e for e in errors]}, steps {steps}")
    for i in range(len(tolerances) - 1):
        assert 8 < errors[i] / errors[i + 1] < 12
        assert 0.9 < (steps[i + 1] / steps[i]) / 10 ** exponent < 1.1


def test_adaptive2_step_rule_on_one_oscillator(run_toml):
    """One undamped mode: a = -omega^2 x exactly, so omega_app = omega and every step is
    h* = sqrt(24 tol) / omega, but those cut to end on a boundary of the driver's calls; the
    first trial step (max_step = span / 100) is rejected once."""
    omega, tol, end = 10.0, 1e-6, 0.5
    extra = '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 1\n'
    text = oscillator_toml(mass=1.0, stiffness=omega ** 2, u0=1.0, scheme="adaptive2",
                           step=0.01, end=end, extra=extra,
                           params=f'basis = "modal"\nmodes = "modes"\ntolerance = {tol}')
    f = run_toml(text.replace("step = 0.01\n", ""), name="osc")      # archive every step
    g = f["analyses"]["a"]
    h = np.sqrt(24 * tol) / omega
    t = g["time"][:]
    regular = np.abs(np.diff(t) / h - 1) < 1e-9
    assert int(g.attrs["rejected_steps"]) == 1
    assert int(g.attrs["steps"]) == len(t) - 1
    assert np.count_nonzero(~regular) <= 3          # the ends of the (two) calls
    # Verlet's discrete frequency: cos(omega_d h) = 1 - (omega h)^2 / 2, a relative error
    # (omega h)^2 / 24 = tol to leading order
    omega_d = np.arccos(1 - (omega * h) ** 2 / 2) / h
    assert abs(omega_d / omega - 1) < 1.01 * tol
    u = g["displacement"][:, 0]
    assert np.max(np.abs(u - np.cos(omega * t))) < 1.01 * omega * end * tol + 1e-9


# ------------------------------------------------------------------------------------------
# archiving
def test_every_accepted_step_is_archived_and_counted(v3_runs):
    """Without a step, one row per accepted step (plus t0); the reader sees the counts."""
    from postpro.results import Results

    for name in ("rk32", "rk54", "euler_adaptive"):
        g = v3_runs["analyses"][name]
        t = g["time"][:]
        assert len(t) == int(g.attrs["steps"]) + 1
        assert np.all(np.diff(t) > 0)
    # the breakpoints of the load (1 and 1.0000001 s) are step ends
    t = v3_runs["analyses/rk54/time"][:]
    assert np.any(t == 1.0) and np.any(np.abs(t - 1.0000001) < 1e-15)
    results = Results.from_h5(v3_runs)
    a = results.analysis("rk54")
    assert a.steps == int(v3_runs["analyses/rk54"].attrs["steps"])
    assert a.rejected_steps == int(v3_runs["analyses/rk54"].attrs["rejected_steps"])
    tq, q1 = a.generalized(1, "displacement")
    assert len(tq) == len(t) and np.all(np.isfinite(q1))


def test_archive_times_without_step(run_toml):
    times = [0.09, 0.19, 1.08, 2.42]
    f = run_v3(run_toml, modal("a", "rk54", f"tolerance = 1e-7\narchive = {{ times = {times} }}"),
               "times")
    g = f["analyses/a"]
    assert np.array_equal(g["time"][:], times)
    err_u, err_v = relative_errors(g, chain3_exact(np.array(times)))
    assert err_u < 1e-6 and err_v < 1e-6


def test_dense_output_between_steps(run_toml):
    """An output grid much finer than the steps: the quintic Hermite rows stay within the
    scheme's accuracy."""
    f = run_v3(run_toml, modal("a", "rk54", "tolerance = 1e-8\nstep = 1e-4", end=0.9), "dense")
    g = f["analyses/a"]
    assert int(g.attrs["steps"]) < len(g["time"]) / 10          # about 20 rows per step
    err_u, err_v = relative_errors(g, chain3_exact(g["time"][:]))
    assert err_u < 1e-7 and err_v < 1e-7


def test_archive_every_nth_step(run_toml):
    f = run_v3(run_toml, modal("all", "rk54", "tolerance = 1e-6", end=0.9)
               + modal("tenth", "rk54", "tolerance = 1e-6\narchive = { every = 10 }", end=0.9),
               "every")
    every, tenth = f["analyses/all"], f["analyses/tenth"]
    steps = int(tenth.attrs["steps"])
    assert steps == int(every.attrs["steps"])
    # t0, every tenth step, and the end
    assert len(tenth["time"]) == 1 + steps // 10 + (1 if steps % 10 else 0)
    assert np.array_equal(tenth["time"][1:steps // 10 + 1], every["time"][10::10][:steps // 10])
    assert tenth["time"][-1] == every["time"][-1]


def test_continuing_from_the_final_state_of_another_analysis(run_toml):
    """Two runs chained by ``initial`` (the physical final state, projected again) match the
    exact solution as one run does."""
    blocks = (modal("first", "rk54", "tolerance = 1e-8", end=1.2)
              + modal("second", "rk54", 'tolerance = 1e-8\nstart = 1.2\n'
                      'initial = { analysis = "first" }'))
    f = run_v3(run_toml, blocks, "chained")
    g = f["analyses/second"]
    t = g["time"][:]
    assert t[0] == 1.2
    err_u, err_v = relative_errors(g, chain3_exact(t))
    assert err_u < 1e-7 and err_v < 1e-7


def test_nodes_restrict_the_recombined_dofs(run_toml):
    f = run_v3(run_toml, modal("all", "central_difference", "step = 1e-3", end=0.5)
               + modal("n3", "central_difference", 'step = 1e-3\nnodes = ["N3"]', end=0.5),
               "nodes")
    full, part = f["analyses/all"], f["analyses/n3"]
    assert "dofs" not in full
    assert list(part["dofs"][:]) == [6, 7, 8]
    for field in ("displacement", "velocity", "acceleration"):
        assert part[field].shape == (501, 3)
        assert np.array_equal(part[field][:], full[field][:, 6:9])
    assert np.array_equal(part["generalized/q"][:], full["generalized/q"][:])


# ------------------------------------------------------------------------------------------
# a smooth load between the knots
def exact_sine(M, C, K, F, Omega, t):
    """Response to F sin(Omega t) from rest: the oscillator s'' = -Omega^2 s is appended to
    the first-order system and the whole is integrated by the matrix exponential."""
    n = len(F)
    Minv = np.linalg.inv(M)
    Aug = np.zeros((2 * n + 2, 2 * n + 2))
    Aug[:n, n:2 * n] = np.eye(n)
    Aug[n:2 * n, :n] = -Minv @ K
    Aug[n:2 * n, n:2 * n] = -Minv @ C
    Aug[n:2 * n, 2 * n] = Minv @ F
    Aug[2 * n, 2 * n + 1] = Omega          # s' = Omega c
    Aug[2 * n + 1, 2 * n] = -Omega         # c' = -Omega s
    z0 = np.zeros(2 * n + 2)
    z0[-1] = 1.0
    return np.array([(scipy.linalg.expm(Aug * ti) @ z0)[:2 * n] for ti in t])


@pytest.mark.parametrize("scheme,params,bound", [
    ("rk54", "tolerance = 1e-8", 1e-7),
    ("rk54", "tolerance = 1e-8\nstep = 1e-3", 1e-7),
    ("rk32", "tolerance = 1e-7", 1e-6),
    ("devogelaere", "step = 1e-3\nmax_step = 1e-4", 1e-8),
    ("adaptive2", "step = 1e-3\nmax_step = 2e-5", 1e-5),
])
def test_sine_load_between_knots(run_toml, scheme, params, bound):
    text = V3_MODEL.replace('function = "step"', 'function = "sine"') + \
        '[functions.sine]\nexpression = "sin(2*pi*5*t)"\n' + modal("a", scheme, params, end=1.0)
    f = run_toml(text, name="sine")
    g = f["analyses/a"]
    M = np.diag([10.0, 10.0])
    K = np.array([[28e4 + 28e2, -28e2], [-28e2, 28e2]])
    C = np.array([[100.0, -50.0], [-50.0, 50.0]])
    exact = exact_sine(M, C, K, np.array([0.0, 5.0]), 2 * np.pi * 5, g["time"][:])
    err_u, err_v = relative_errors(g, exact)
    print(f"sine load, {scheme} ({params.replace(chr(10), ', ')}): errors {err_u:.2e}, "
          f"{err_v:.2e}, {int(g.attrs['steps'])} steps")
    assert err_u < bound and err_v < bound


def test_imposed_motion_of_the_support(run_toml):
    """N1 moves as h(t) = A sin(Omega t): the free dofs feel k1 h + c1 h' on N2, and N1's
    displacement in the results is h itself (u = T Phi q + G h)."""
    A, Omega = 1e-3, 2 * np.pi * 5
    text = V3_MODEL.replace('DX = 0.0\nDY = 0.0\nDZ = 0.0\n',
                            f'DX = {A}\nDY = 0.0\nDZ = 0.0\nfunction = "sine"\n')
    text = text.replace('FX = 5.0', 'FX = 0.0')
    assert f'DX = {A}' in text
    text += '[functions.sine]\nexpression = "sin(2*pi*5*t)"\n'
    text += modal("rk54", "rk54", "tolerance = 1e-9\nstep = 1e-3", end=1.0)
    text += modal("cd", "central_difference", "step = 1e-4", end=1.0)
    f = run_toml(text, name="support")
    M = np.diag([10.0, 10.0])
    K = np.array([[28e4 + 28e2, -28e2], [-28e2, 28e2]])
    C = np.array([[100.0, -50.0], [-50.0, 50.0]])
    n = 2
    Minv = np.linalg.inv(M)
    Aug = np.zeros((2 * n + 2, 2 * n + 2))
    Aug[:n, n:2 * n] = np.eye(n)
    Aug[n:2 * n, :n] = -Minv @ K
    Aug[n:2 * n, n:2 * n] = -Minv @ C
    Aug[n:2 * n, 2 * n] = Minv @ np.array([28e4 * A, 0.0])               # k1 h
    Aug[n:2 * n, 2 * n + 1] = Minv @ np.array([50.0 * A * Omega, 0.0])   # c1 h'
    Aug[2 * n, 2 * n + 1] = Omega
    Aug[2 * n + 1, 2 * n] = -Omega
    z0 = np.zeros(2 * n + 2)
    z0[-1] = 1.0
    for name, bound in (("rk54", 1e-7), ("cd", 1e-3)):
        g = f["analyses"][name]
        t = g["time"][:]
        exact = np.array([(scipy.linalg.expm(Aug * ti) @ z0)[:2 * n] for ti in t])
        errors = [relative_errors(g, exact, dof=d, columns=(c, c + 2)) for d, c in ((3, 0), (6, 1))]
        print(f"support motion, {name}: errors {np.max(errors):.2e}")
        assert np.max(errors) < bound
        assert np.allclose(g["displacement"][:, 0], A * np.sin(Omega * t), rtol=0, atol=1e-15)
        assert np.allclose(g["velocity"][:, 0], A * Omega * np.cos(Omega * t), rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------
# V4-like chain with non-proportional damping
def chain8():
    """Masses 10 kg on P1..P8, springs 1e5 N/m from the clamped P0, dampers 250 on the first
    spring, 25 on the last, 50 between: dense M, C, K written by hand."""
    n = 8
    k = np.full(n, 1e5)
    c = np.array([250.0] + [50.0] * (n - 2) + [25.0])
    M = np.eye(n) * 10.0
    K, C = np.zeros((n, n)), np.zeros((n, n))
    for A, v in ((K, k), (C, c)):
        for e in range(n):              # element e joins P(e) and P(e + 1), dof e - 1 and e
            A[e, e] += v[e]
            if e > 0:
                A[e - 1, e - 1] += v[e]
                A[e - 1, e] -= v[e]
                A[e, e - 1] -= v[e]
    return M, C, K


def chain8_toml(load_function='function = "step"'):
    nodes = "\n".join(f"P{i} = [{i}.0, 0.0, 0.0]" for i in range(9))
    cells = "\n".join(f'S{i} = {{ type = "SEG2", nodes = ["P{i - 1}", "P{i}"] }}'
                      for i in range(1, 9))
    dampers = {1: 250.0, 8: 25.0}
    discrete = "".join(f'[[discrete]]\ncells = ["S{i}"]\nstiffness = 1e5\n'
                       f'damping = {dampers.get(i, 50.0)}\n' for i in range(1, 9))
    masses = ", ".join(f'"P{i}"' for i in range(1, 9))
    return f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[model]
components = ["DX"]
{discrete}
[[discrete]]
nodes = [{masses}]
mass = 10.0
[[constraint]]
nodes = ["P0"]
DX = 0.0
[functions.step]
table = [[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]]
right = "constant"
[functions.ramp]
table = [[0.0, 0.0], [0.5, 1.0]]
right = "constant"
[[load]]
name = "push"
kind = "force"
nodes = ["P4"]
FX = 1.0
{load_function}
"""


def chain8_errors(g, exact, dofs=slice(1, 9)):
    """Max error of u over the free dofs, relative to the largest |u|."""
    u = g["displacement"][:, dofs]
    return np.max(np.abs(u - exact[:, :8])) / np.max(np.abs(exact[:, :8]))


def test_chain8_projected_damping_agrees_with_physical_newmark(run_toml):
    M, C, K = chain8()
    F = np.zeros(8)
    F[3] = 1.0
    text = chain8_toml() + """
[[analysis]]
name = "newmark"
kind = "transient"
scheme = "newmark"
end = 2.0
step = 1e-4
[[analysis]]
name = "modes"
kind = "modes"
count = 8
""" + modal("rk54", "rk54", "tolerance = 1e-8\nstep = 1e-4", end=2.0) \
        + modal("devogelaere", "devogelaere", "step = 1e-4\nmax_step = 1e-4", end=2.0)
    f = run_toml(text, name="chain8")
    t = f["analyses/newmark/time"][:]
    exact = exact_linear(M, C, K, F, t, switch_off=1.0 + 0.5e-7)
    err_newmark = chain8_errors(f["analyses/newmark"], exact)
    for name in ("rk54", "devogelaere"):
        g = f["analyses"][name]
        assert np.array_equal(g["time"][:], t)
        err_modal = chain8_errors(g, exact)
        newmark = f["analyses/newmark/displacement"][:, 1:9]
        gap = (np.max(np.abs(g["displacement"][:, 1:9] - newmark))
               / np.max(np.abs(exact[:, :8])))
        print(f"chain8 {name}: modal error {err_modal:.2e}, Newmark error {err_newmark:.2e}, "
              f"modal - Newmark {gap:.2e}")
        assert bool(g.attrs["coupled_damping"])
        assert err_modal < 1e-6
        # the two differ by Newmark's own error
        assert gap <= err_newmark + err_modal and gap > 0.5 * err_newmark
    assert err_newmark < 1e-2


def test_chain8_diagonal_damping_approximation(run_toml):
    """Keeping only the diagonal of Phi^T C Phi (ratios xi_j = (Phi^T C Phi)_jj / 2 omega_j)
    solves another system exactly: C_d = M Phi diag(2 xi omega) Phi^T M. Its distance to the
    coupled solution is the error of the approximation."""
    M, C, K = chain8()
    F = np.zeros(8)
    F[3] = 1.0
    w2, phi = scipy.linalg.eigh(K, M)
    omega = np.sqrt(w2)
    xi = np.diag(phi.T @ C @ phi) / (2 * omega)
    offdiag = phi.T @ C @ phi - np.diag(np.diag(phi.T @ C @ phi))
    assert np.max(np.abs(offdiag)) > 0.1 * np.max(np.diag(phi.T @ C @ phi))   # really coupled
    ratios = ", ".join(repr(float(x)) for x in xi)
    text = chain8_toml() + '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 8\n' \
        + modal("projected", "rk54", "tolerance = 1e-8\nstep = 1e-3", end=3.0) \
        + modal("diagonal", "rk54", f'tolerance = 1e-8\nstep = 1e-3\ndamping = "modal"\n'
                                     f'modal_damping = [{ratios}]', end=3.0)
    f = run_toml(text, name="chain8diag")
    t = f["analyses/projected/time"][:]
    exact = exact_linear(M, C, K, F, t, switch_off=1.0 + 0.5e-7)
    Cd = M @ phi @ np.diag(2 * xi * omega) @ phi.T @ M
    exact_d = exact_linear(M, Cd, K, F, t, switch_off=1.0 + 0.5e-7)
    err_projected = chain8_errors(f["analyses/projected"], exact)
    err_diag_own = chain8_errors(f["analyses/diagonal"], exact_d)
    err_approx = chain8_errors(f["analyses/diagonal"], exact)
    late = t > 1.0          # free decay: the approximation shows in the decay rates
    u_late = f["analyses/diagonal/displacement"][late][:, 1:9]
    rel_late = np.max(np.abs(u_late - exact[late][:, :8])) / np.max(np.abs(exact[late][:, :8]))
    print(f"chain8 diagonal damping: error {err_approx:.2%} of the peak displacement "
          f"({rel_late:.1%} of the free decay after 1 s); projected damping {err_projected:.1e}; "
          f"the diagonal run against its own exact solution {err_diag_own:.1e}; "
          f"ratios {np.round(xi, 4)}")
    assert not bool(f["analyses/diagonal"].attrs["coupled_damping"])
    assert err_projected < 1e-6 and err_diag_own < 1e-6
    assert err_approx > 1e-3 and err_approx > 1000 * err_projected


def exact_ramp(M, C, K, F, T, t):
    """Response to F min(t / T, 1) from rest, by the matrix exponential of the first-order
    system augmented with s = t / T (then F constant from T)."""
    n = len(F)
    Minv = np.linalg.inv(M)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ C]])
    b = np.concatenate([np.zeros(n), Minv @ F])
    ramp = np.zeros((2 * n + 2, 2 * n + 2))
    ramp[:2 * n, :2 * n] = A
    ramp[:2 * n, 2 * n] = b                 # forcing F s
    ramp[2 * n, 2 * n + 1] = 1.0 / T        # s' = 1 / T
    hold = np.zeros((2 * n + 1, 2 * n + 1))
    hold[:2 * n, :2 * n] = A
    hold[:2 * n, 2 * n] = b
    z0 = np.zeros(2 * n + 2)
    z0[-1] = 1.0
    zT = (scipy.linalg.expm(ramp * T) @ z0)[:2 * n]
    out = []
    for ti in t:
        if ti <= T:
            out.append((scipy.linalg.expm(ramp * ti) @ z0)[:2 * n])
        else:
            out.append((scipy.linalg.expm(hold * (ti - T)) @ np.append(zT, 1.0))[:2 * n])
    return np.array(out)


def test_static_correction_of_a_truncated_basis(run_toml):
    """Three modes of eight under a slow ramp: the discarded modes respond quasi-statically,
    which the correction (K^-1 - Phi Omega^-2 Phi^T) F restores."""
    M, C, K = chain8()
    F = np.zeros(8)
    F[3] = 1.0
    text = chain8_toml('function = "ramp"') \
        + '[[analysis]]\nname = "modes3"\nkind = "modes"\ncount = 3\n' \
        + '[[analysis]]\nname = "modes8"\nkind = "modes"\ncount = 8\n' \
        + modal("plain", "rk54", "tolerance = 1e-8\nstep = 1e-3", end=1.5, modes="modes3") \
        + modal("corrected", "rk54", "tolerance = 1e-8\nstep = 1e-3\nstatic_correction = true",
                end=1.5, modes="modes3") \
        + modal("full", "rk54", "tolerance = 1e-8\nstep = 1e-3", end=1.5, modes="modes8") \
        + modal("full_corrected", "rk54", "tolerance = 1e-8\nstep = 1e-3\n"
                "static_correction = true", end=1.5, modes="modes8")
    f = run_toml(text, name="static")
    t = f["analyses/plain/time"][:]
    exact = exact_ramp(M, C, K, F, 0.5, t)
    plain = chain8_errors(f["analyses/plain"], exact)
    corrected = chain8_errors(f["analyses/corrected"], exact)
    print(f"3 modes of 8, ramp load: error {plain:.2e} without, {corrected:.2e} with the "
          f"static correction")
    assert plain > 1e-2 and corrected < plain / 10
    # velocities: the correction adds (K^-1 - Phi Omega^-2 Phi^T) F w'(t); the jumps of w' at
    # both ends of the ramp still set the discarded modes vibrating, which it cannot restore
    v_err = [np.max(np.abs(f["analyses"][name]["velocity"][:, 1:9] - exact[:, 8:]))
             / np.max(np.abs(exact[:, 8:])) for name in ("plain", "corrected")]
    print(f"  velocity: {v_err[0]:.2e} without, {v_err[1]:.2e} with")
    assert v_err[1] < 0.8 * v_err[0]
    static = np.linalg.solve(K, F)
    # with all modes the correction is zero
    assert np.allclose(f["analyses/full_corrected/displacement"][:],
                       f["analyses/full/displacement"][:], rtol=0, atol=1e-12 * static.max())


# ------------------------------------------------------------------------------------------
# bad inputs
@pytest.mark.parametrize("blocks,message", [
    (modal("a", "rk54", "", modes="nothing"),
     "analysis[2].modes: no modes analysis named 'nothing' before this one"),
    ('[[analysis]]\nname = "phys"\nkind = "transient"\nend = 1.0\nstep = 1e-3\n'
     + modal("a", "rk54", "", modes="phys"),
     "analysis[3].modes: analysis 'phys' is of kind transient, not modes"),
    (modal("a", "rk54", "tolerance = 0.0"), "analysis[2].tolerance: must be >= 1e-14, got 0"),
    (modal("a", "rk32", "tolerance = -1e-5"),
     "analysis[2].tolerance: must be >= 1e-14, got -1e-05"),
    (modal("a", "rk54", 'damping = "modal"\nmodal_damping = [0.01, 0.02]'),
     "analysis[2].modal_damping: 2 damping ratio(s) for 6 modes (give one ratio per mode)"),
    (modal("a", "rk54", 'modal_damping = [0.01, 0.02, 0.01, 0.01, 0.01, 0.01]'),
     'analysis[2].modal_damping: only applies with damping = "modal"'),
    (modal("a", "central_difference", 'step = 1e-3\nnodes = ["N9"]'),
     "analysis[2].nodes: unknown node 'N9'"),
])
def test_bad_inputs(run_toml, blocks, message):
    with pytest.raises(StudyError) as info:
        run_v3(run_toml, blocks, "bad")
    assert message in str(info.value)


def test_more_modes_than_free_dofs(run_toml):
    with pytest.raises(StudyError, match=r"analysis\[1\]\.count: 7 modes asked but the model "
                                         r"has only 6 free dofs with mass"):
        run_toml(V3_MODEL.replace("count = 6", "count = 7") + modal("a", "rk54", ""),
                 name="seven")


def test_central_difference_above_its_stability_limit_diverges(run_toml):
    """omega_max dt = 168 x 0.02 > 2: a warning, then growth by about 9 per step until the
    values overflow (500 steps), reported as a failed analysis."""
    with pytest.warns(UserWarning, match="stability limit"):
        f = run_v3(run_toml, modal("a", "central_difference", "step = 0.02", end=10.0),
                   "unstable")
    assert f.report.failed_analysis == "a"
    assert "diverged" in f.report.message
    assert f["analyses/a"].attrs["status"] == "failed"
