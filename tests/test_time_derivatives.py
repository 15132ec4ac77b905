"""Time derivatives of any order of the time functions, and the loads and archived fields that
use them: exact whatever the absolute time (a difference with a step proportional to |t|
loses its accuracy far from t = 0), and never evaluated outside a function's domain."""

from __future__ import annotations

import math

import h5py
import numpy as np
import pytest
import scipy.linalg

from conftest import series
from fem.assembly import _evaluate
from fem.errors import FunctionError
from fem.functions import Constant, Expression, Table, TimeFunction, build_function
from fem.integrators.adaptive import adaptive_grid
from fem.modal.basis import column_values

OMEGA = 2 * math.pi * 50                  # rad/s, the sine of the tests
STARTS = [0.0, 60.0, 1000.0, 1e4]         # s


def second_derivatives(fn, t):
    """fn'' at t by every route the engine takes: the function itself, the loads and
    expansion of the physical system, and the load columns of the modal basis."""
    t = np.asarray(t, float)
    return {
        "TimeFunction.derivative": np.asarray(fn.derivative(t, 2)),
        "assembly": _evaluate(fn, 2, t),
        "column of order 2": column_values([(fn, 2)], t, 0)[:, 0],
        "column, order 2": column_values([(fn, 0)], t, 2)[:, 0],
        "column of order 1, order 1": column_values([(fn, 1)], t, 1)[:, 0],
    }


# ------------------------------------------------------------------------------------------
# expressions: symbolic derivatives of every order
@pytest.mark.parametrize("start", STARTS)
def test_second_derivative_of_a_sine_is_exact_far_from_zero(start):
    fn = Expression("shake", "sin(2*pi*50*t)")
    t = start + np.array([0.0, 1.3e-3, 2.9e-3, 4.7e-3])
    # closed form, on the same rounded phase: -Omega^2 sin(Omega t)
    exact = -OMEGA ** 2 * np.sin(OMEGA * t)
    for route, value in second_derivatives(fn, t).items():
        error = np.max(np.abs(value - exact)) / OMEGA ** 2
        assert error <= 1e-12, f"{route}: relative error {error:.1e} at t = {start} s"
    third = fn.derivative(t, 3)
    assert np.max(np.abs(third + OMEGA ** 3 * np.cos(OMEGA * t))) <= 1e-12 * OMEGA ** 3


CLOSED_FORMS = [
    # text, second derivative, third derivative
    ("t**3 - 2*t**2 + 5*t - 1", lambda t: 6 * t - 4, lambda t: 6 + 0 * t),
    ("exp(-3*t)", lambda t: 9 * np.exp(-3 * t), lambda t: -27 * np.exp(-3 * t)),
    ("t**2 * sin(3*t)",
     lambda t: 2 * np.sin(3 * t) + 12 * t * np.cos(3 * t) - 9 * t ** 2 * np.sin(3 * t),
     lambda t: (18 * np.cos(3 * t) - 54 * t * np.sin(3 * t)
                - 27 * t ** 2 * np.cos(3 * t))),
]


@pytest.mark.parametrize("text, second, third", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_higher_derivatives_of_expressions_match_closed_forms(text, second, third):
    fn = Expression("x", text)
    t = np.array([0.0, 0.3, 1.0, 1.7, 2.5, 4.0])
    exact = second(t)
    scale = np.max(np.abs(exact))
    for route, value in second_derivatives(fn, t).items():
        np.testing.assert_allclose(value, exact, rtol=1e-12, atol=1e-13 * scale, err_msg=route)
    np.testing.assert_allclose(fn.derivative(t, 3), third(t), rtol=1e-12,
                               atol=1e-13 * np.max(np.abs(third(t))))


def test_derivatives_of_a_polynomial_end_at_zero():
    fn = Expression("p", "t**3 - 2*t**2 + 5*t - 1")
    assert fn.derivative(2.0, 0) == fn(2.0) == 9.0
    assert fn.derivative(2.0, 3) == 6.0
    assert fn.derivative(2.0, 4) == 0.0 and fn.derivative(2.0, 7) == 0.0
    # scalar in, float out; array in, array of its shape out
    assert type(fn.derivative(2.0, 2)) is float
    assert fn.derivative(np.zeros((2, 3)), 4).shape == (2, 3)


def test_constant_derivatives_are_zero():
    fn = Constant(3.0)
    np.testing.assert_array_equal(fn.derivative(np.arange(3.0), 2), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(_evaluate(fn, 2, np.array([0.0, 1e4])), [0.0, 0.0])


def test_order_of_a_derivative_is_checked():
    fn = Expression("x", "t")
    for order in (-1, 1.5, True):
        with pytest.raises(ValueError, match="order of a derivative"):
            fn.derivative(1.0, order)


# ------------------------------------------------------------------------------------------
# tables and records: piecewise linear
def test_table_second_derivative_is_zero_and_right_continuous():
    fn = build_function("ramp", {"table": [[0.0, 0.0], [1.0, 2.0], [3.0, -2.0]]}, ".")
    assert fn.left == "error"
    # between breakpoints, at them (the value after the slope's jump) and at both ends
    t = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    for route, value in second_derivatives(fn, t).items():
        np.testing.assert_array_equal(value, np.zeros(5), err_msg=route)
    np.testing.assert_array_equal(fn.derivative(t, 3), np.zeros(5))
    # the first derivative is the slope after a breakpoint (the last one's at the end)
    np.testing.assert_array_equal(fn.derivative(t), [2.0, 2.0, -2.0, -2.0, -2.0])
    # the domain is still that of the values
    with pytest.raises(FunctionError, match="before the table"):
        fn.derivative(-1e-9, 2)


def test_table_with_left_error_is_differentiated_at_its_start():
    # the default rule: no value before the first row, the load at the start still has h''
    fn = build_function("lift", {"table": [[0.0, 0.0], [0.05, 1.0]], "right": "constant"}, ".")
    assert fn.left == "error"
    start = np.array([0.0])
    for route, value in second_derivatives(fn, start).items():
        np.testing.assert_array_equal(value, [0.0], err_msg=route)
    assert fn.derivative(0.0) == 20.0


def test_table_second_derivative_beyond_its_ends_under_each_rule():
    for rule in ("constant", "linear"):
        fn = Table("x", [0.0, 1.0], [0.0, 1.0], left=rule, right=rule)
        np.testing.assert_array_equal(fn.derivative(np.array([-5.0, 0.5, 7.0]), 2), 0.0)
    assert math.isnan(Table("x", [0.0, 1.0], [0.0, 1.0]).derivative(math.nan, 2))


def test_record_second_derivative_is_zero(tmp_path):
    (tmp_path / "acc.csv").write_text("t,a\n0,0\n0.5,1.5\n1,-1\n")
    fn = build_function("rec", {"file": "acc.csv"}, tmp_path)
    np.testing.assert_array_equal(_evaluate(fn, 2, np.array([0.0, 0.5, 0.75, 1.0])), 0.0)


# ------------------------------------------------------------------------------------------
# a function with an exact first derivative only: differences on its own time scale
class Sine(TimeFunction):
    """sin(Omega t) on [lo, hi], its first derivative only; records the instants asked."""

    def __init__(self, lo, hi):
        super().__init__("sine")
        self.lo, self.hi = lo, hi
        self.asked = []

    @property
    def domain(self):
        return (self.lo, self.hi)

    @property
    def time_scale(self):
        return 1.0 / OMEGA

    def _evaluate(self, t):
        self.asked.append(np.array(t))
        return np.sin(OMEGA * t)

    def _derivative(self, t):
        self.asked.append(np.array(t))
        return OMEGA * np.cos(OMEGA * t)


@pytest.mark.parametrize("start", STARTS)
def test_difference_beyond_the_exact_orders_keeps_its_accuracy_far_from_zero(start):
    fn = Sine(start, start + 0.01)
    t = start + np.array([0.0, 1.3e-3, 4.7e-3, 0.01])      # both ends of the domain included
    second = fn.derivative(t, 2)
    third = fn.derivative(t, 3)
    # the round-off of sin at Omega t ~ 3e6 rad is 5e-10 rad: the step balances it
    assert np.max(np.abs(second + OMEGA ** 2 * np.sin(OMEGA * t))) <= 1e-6 * OMEGA ** 2
    assert np.max(np.abs(third + OMEGA ** 3 * np.cos(OMEGA * t))) <= 1e-4 * OMEGA ** 3
    asked = np.concatenate(fn.asked)
    assert asked.min() >= fn.lo and asked.max() <= fn.hi


# ------------------------------------------------------------------------------------------
# imposed accelerations in a run far from t = 0
SUPPORT = """
[mesh.nodes]
S = [0.0, 0.0, 0.0]
P = [1.0, 0.0, 0.0]
[mesh.cells]
SP = {{ type = "SEG2", nodes = ["S", "P"] }}
[model]
components = ["DX", "DY"]
[[discrete]]
cells = ["SP"]
stiffness = [1.0e4, 2.0e4, 0.0]
damping = [20.0, 20.0, 0.0]
[[discrete]]
nodes = ["S"]
mass = [[1.0, 0.4, 0.0], [0.4, 1.0, 0.0], [0.0, 0.0, 1.0]]
stiffness = [0.0, 5.0e3, 0.0]
[[discrete]]
nodes = ["P"]
mass = 2.0
[[constraint]]
nodes = ["S"]
DX = 1.0e-3
function = "shake"
[functions.shake]
expression = "sin(2*pi*50*(t - {start}))"
[[analysis]]
name = "modes"
kind = "modes"
count = 3
[[analysis]]
name = "physical"
kind = "transient"
scheme = "newmark"
start = {start}
end = {end}
step = 1.0e-5
archive = {{ every = 10 }}
[[analysis]]
name = "modal"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "newmark"
start = {start}
end = {end}
step = 1.0e-5
archive = {{ every = 10 }}
"""
# dofs of the results: S.DX (moving), S.DY (pushed by the coupled mass), P.DX, P.DY
DOFS = range(4)
AMPLITUDE = 1e-3                          # m, of S.DX


@pytest.fixture(scope="module")
def support_runs(tmp_path_factory):
    """The study over [start, start + 0.01] s for start = 0 and 1000 s: {start: h5py.File}."""
    from fem.runner import run_study

    folder = tmp_path_factory.mktemp("support")
    runs = {}
    for start in (0.0, 1000.0):
        path = folder / f"support{start:g}.toml"
        path.write_text(SUPPORT.format(start=start, end=start + 0.01))
        report = run_study(path, path.with_suffix(".h5"))
        assert report.failed_analysis is None, report.message
        runs[start] = h5py.File(path.with_suffix(".h5"), "r")
    yield runs
    for f in runs.values():
        f.close()


def support_exact(s):
    """Free dofs (S.DY, P.DX, P.DY) of the support study at s = t - start (s), from rest:
    (displacement, velocity, acceleration), each (len(s), 3), by the matrix exponential of
    the first-order system augmented with (sin, cos)(Omega s).

    With h = AMPLITUDE sin(Omega s) on S.DX the free dofs feel -K_fc h - C_fc h' - M_fc h'':
    the spring and damper SP along X on P.DX, and the coupling mass 0.4 on S.DY.
    """
    mass = np.diag([1.0, 2.0, 2.0])
    stiffness = np.array([[2.5e4, 0.0, -2e4], [0.0, 1e4, 0.0], [-2e4, 0.0, 2e4]])
    damping = np.array([[20.0, 0.0, -20.0], [0.0, 20.0, 0.0], [-20.0, 0.0, 20.0]])
    force_sin = AMPLITUDE * np.array([0.4 * OMEGA ** 2, 1e4, 0.0])
    force_cos = AMPLITUDE * np.array([0.0, 20.0 * OMEGA, 0.0])
    n = 3
    inverse = np.linalg.inv(mass)
    system = np.zeros((2 * n + 2, 2 * n + 2))
    system[:n, n:2 * n] = np.eye(n)
    system[n:2 * n, :n] = -inverse @ stiffness
    system[n:2 * n, n:2 * n] = -inverse @ damping
    system[n:2 * n, 2 * n] = inverse @ force_sin
    system[n:2 * n, 2 * n + 1] = inverse @ force_cos
    system[2 * n, 2 * n + 1] = OMEGA
    system[2 * n + 1, 2 * n] = -OMEGA
    z0 = np.zeros(2 * n + 2)
    z0[2 * n + 1] = 1.0
    z = np.array([scipy.linalg.expm(system * x) @ z0 for x in s])
    rates = z @ system.T
    return z[:, :n], z[:, n:2 * n], rates[:, n:2 * n]


def test_imposed_acceleration_far_from_zero_matches_the_run_from_zero(support_runs):
    """S moves along X as 1e-3 sin(Omega (t - start)); its mass couples X and Y, so S.DY
    is loaded by -0.4 h'' (M G h''). The run over [1000, 1000.01] s is the run over
    [0, 0.01] s shifted, on every field of both bases."""
    for analysis in ("physical", "modal"):
        for field in ("displacement", "velocity", "acceleration"):
            for dof in DOFS:
                t0, y0 = series(support_runs[0.0], analysis, field, dof)
                t1, y1 = series(support_runs[1000.0], analysis, field, dof)
                assert len(t0) == len(t1) == 101
                assert np.allclose(t1 - 1000.0, t0, rtol=0, atol=1e-12)
                peak = np.max(np.abs(y0))
                assert peak > 0.0
                error = np.max(np.abs(y1 - y0)) / peak
                assert error <= 1e-10, f"{analysis} {field} dof {dof}: {error:.1e}"


@pytest.mark.parametrize("analysis", ["physical", "modal"])
def test_imposed_acceleration_far_from_zero_matches_the_matrix_exponential(support_runs,
                                                                          analysis):
    g = support_runs[1000.0]["analyses"][analysis]
    s = g["time"][:] - 1000.0
    exact = support_exact(s)
    # average acceleration, Omega dt = 3e-3 and the stiffest mode at 2e-3: ~1e-6 of the peak
    for field, reference in zip(("displacement", "velocity", "acceleration"), exact):
        computed = g[field][:, 1:]
        error = np.max(np.abs(computed - reference), axis=0) / np.max(np.abs(reference), axis=0)
        assert np.all(error <= 1e-5), f"{field}: {error}"
    # the moving support's own acceleration is archived exact: h''
    h2 = -AMPLITUDE * OMEGA ** 2 * np.sin(OMEGA * s)
    np.testing.assert_allclose(g["acceleration"][:, 0], h2, rtol=0,
                               atol=1e-10 * AMPLITUDE * OMEGA ** 2)


# ------------------------------------------------------------------------------------------
# the grid of an adaptive scheme far from t = 0
def test_adaptive_grid_far_from_zero_has_no_sliver_at_a_table_breakpoint():
    step = 1e-5
    # decimal instants one ulp of t (1.1e-13 s) away from the knots 1000 + i 1e-5
    corners = [1000.34769, 1000.37894, 1000.41019]
    fn = Table("pulse", [1000.0, *corners, 1001.0], [0.0, 1.0, 1.0, 0.0, 0.0])
    assert set(corners) <= set(fn.breakpoints.tolist())
    grid, _ = adaptive_grid(1000.0, 1001.0, step=step, archive={"every": 10},
                            breakpoints=fn.breakpoints)
    assert grid.steps == 100_000
    assert np.min(np.diff(grid.times)) > 0.99 * step
    # each breakpoint is a knot (to round-off) and the end of a call
    boundaries = np.array([grid.times[i0] for i0, _, _ in grid.segments])
    for b in corners:
        assert np.min(np.abs(boundaries - b)) <= 8 * np.spacing(b)
