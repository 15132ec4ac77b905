"""Time functions: tables, records, expressions, their exact derivatives and their errors."""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from fem.errors import FunctionError, StudyError
from fem.functions import (
    ONE,
    Constant,
    Expression,
    Record,
    Table,
    TimeFunction,
    build_function,
)

HERE = Path(".")


def table(rows, **rules):
    return build_function("f", {"table": rows, **rules}, HERE)


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

ZIGZAG = [[0.0, 0.0], [1.0, 2.0], [3.0, -2.0]]  # slopes 2 then -2


def test_table_interpolates_linearly():
    f = table(ZIGZAG)
    assert isinstance(f, Table) and isinstance(f, TimeFunction) and f.kind == "table"
    assert f(0.5) == pytest.approx(1.0)
    assert f(1.0) == pytest.approx(2.0)
    assert f(2.0) == pytest.approx(0.0)
    assert f(2.5) == pytest.approx(-1.0)
    assert f(3.0) == pytest.approx(-2.0)
    t = np.array([[0.0, 0.25], [1.5, 3.0]])
    np.testing.assert_allclose(f(t), [[0.0, 0.5], [1.0, -2.0]])
    np.testing.assert_array_equal(f.times, [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(f.values, [0.0, 2.0, -2.0])


@pytest.mark.parametrize("rules, t, expected", [
    ({"left": "constant"}, -1.0, 0.0),
    ({"left": "linear"}, -1.0, -2.0),        # 0 + 2 * (-1 - 0)
    ({"left": "linear"}, -0.25, -0.5),
    ({"right": "constant"}, 4.0, -2.0),
    ({"right": "linear"}, 4.0, -4.0),        # -2 - 2 * (4 - 3)
    ({"right": "linear"}, 13.0, -22.0),
])
def test_table_extrapolation_rules(rules, t, expected):
    assert table(ZIGZAG, **rules)(t) == pytest.approx(expected)


def test_one_row_table_is_constant_everywhere():
    f = table([[2.0, 7.0]])
    np.testing.assert_array_equal(f(np.array([-5.0, 2.0, 9.0])), [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(f.derivative(np.array([-5.0, 2.0, 9.0])), [0.0, 0.0, 0.0])
    assert f.breakpoints.size == 0
    assert f.domain == (-math.inf, math.inf)


@pytest.mark.parametrize("rules, t, expected", [
    ({}, 0.5, 2.0),
    ({}, 2.0, -2.0),
    ({}, 0.0, 2.0),                          # right-continuous at the first point
    ({}, 1.0, -2.0),                         # at a breakpoint: the segment to the right
    ({}, 3.0, -2.0),                         # last point, rule "error": last segment
    ({"right": "constant"}, 3.0, 0.0),
    ({"right": "constant"}, 5.0, 0.0),
    ({"right": "linear"}, 3.0, -2.0),
    ({"right": "linear"}, 5.0, -2.0),
    ({"left": "constant"}, -1.0, 0.0),
    ({"left": "linear"}, -1.0, 2.0),
])
def test_table_derivative(rules, t, expected):
    assert table(ZIGZAG, **rules).derivative(t) == pytest.approx(expected)


def test_table_derivative_vectorized_and_nan():
    f = table(ZIGZAG, left="linear", right="constant")
    d = f.derivative(np.array([-1.0, 0.0, 0.999, 1.0, 2.9, 3.0, 4.0, np.nan]))
    np.testing.assert_array_equal(d, [2.0, 2.0, 2.0, -2.0, -2.0, 0.0, 0.0, np.nan])


def test_table_breakpoints_and_domain():
    step = table([[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]], right="constant")
    np.testing.assert_array_equal(step.breakpoints, [0.0, 1.0, 1.0000001])
    assert step.domain == (0.0, math.inf)
    # Collinear points are no breakpoint; linear ends are smooth; constant ends of a
    # flat segment are smooth too.
    f = table([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 2.0]], left="linear", right="constant")
    np.testing.assert_array_equal(f.breakpoints, [2.0])
    assert f.domain == (-math.inf, math.inf)


def test_step_table_from_the_study_example():
    step = table([[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]], right="constant")
    np.testing.assert_allclose(step(np.array([0.0, 0.5, 1.0, 1.00000005, 1.0000001, 50.0])),
                               [1.0, 1.0, 1.0, 0.5, 0.0, 0.0], atol=1e-6)


def test_evaluation_beyond_the_table_names_function_time_and_domain():
    step = table([[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]])
    step.name = "step"
    with pytest.raises(FunctionError, match=r"function 'step': t = 2\.5 s is beyond the table "
                                            r"\[0\.0, 1\.0000001\] \(set right = \"constant\""):
        step(np.array([0.5, 2.5]))
    with pytest.raises(FunctionError, match=r"t = -1\.0 s is before the table .*set left ="):
        step.derivative(-1.0)


def test_scalar_and_array_conventions():
    f = Expression("f", "2*t")
    assert type(f(1.5)) is float and f(1.5) == 3.0
    assert type(f(np.float64(1.5))) is float
    assert type(f.derivative(1)) is float and f.derivative(1) == 2.0
    zero_d = f(np.array(2.0))
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == ()
    assert table(ZIGZAG)(np.array(0.5)).shape == ()
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    # A constant expression still returns one value per time.
    assert Expression("c", "2*pi").derivative(np.zeros((2, 3))).shape == (2, 3)
    # The result never aliases the caller's array.
    t = np.array([1.0, 2.0])
    out = Expression("id", "t")(t)
    out[0] = 99.0
    assert t[0] == 1.0


def test_constant_functions():
    assert ONE(3.0) == 1.0 and ONE.kind == "constant" and ONE.name == "1"
    c = Constant(2.5, name="k")
    np.testing.assert_array_equal(c(np.arange(3.0)), [2.5, 2.5, 2.5])
    np.testing.assert_array_equal(c.derivative(np.arange(3.0)), [0.0, 0.0, 0.0])
    assert c.breakpoints.size == 0
    with pytest.raises(FunctionError, match="finite"):
        Constant(math.inf)


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------

T = np.linspace(0.05, 0.95, 37)

NUMPY_CASES = [
    ("3000*sin(2*pi*5*t)", lambda t: 3000 * np.sin(2 * np.pi * 5 * t)),
    ("1 + 2*t - t**2/3", lambda t: 1 + 2 * t - t ** 2 / 3),
    ("-t**2", lambda t: -(t ** 2)),
    ("+t % 0.3", lambda t: np.mod(t, 0.3)),
    ("-t % 0.3", lambda t: np.mod(-t, 0.3)),
    ("2**t * e**-t", lambda t: 2 ** t * np.e ** -t),
    ("t**t", lambda t: t ** t),
    ("cos(t)*tan(t) - asin(t) + acos(t) + atan(t)",
     lambda t: np.cos(t) * np.tan(t) - np.arcsin(t) + np.arccos(t) + np.arctan(t)),
    ("atan2(t - 0.5, 0.2)", lambda t: np.arctan2(t - 0.5, 0.2)),
    ("sinh(t) + cosh(t) * tanh(t)", lambda t: np.sinh(t) + np.cosh(t) * np.tanh(t)),
    ("exp(-t) + log(t) + log10(t) + sqrt(t)",
     lambda t: np.exp(-t) + np.log(t) + np.log10(t) + np.sqrt(t)),
    ("abs(t - 0.5) + sign(t - 0.5) + floor(4*t) + ceil(4*t)",
     lambda t: np.abs(t - 0.5) + np.sign(t - 0.5) + np.floor(4 * t) + np.ceil(4 * t)),
    ("min(t, 0.3, 1 - t) + max(t, 0.5)",
     lambda t: np.minimum(np.minimum(t, 0.3), 1 - t) + np.maximum(t, 0.5)),
    ("where(t < 0.5, t, 1 - t)", lambda t: np.where(t < 0.5, t, 1 - t)),
    ("heaviside(t - 0.5)", lambda t: (t >= 0.5).astype(float)),
    ("0.2 < t <= 0.6", lambda t: ((t > 0.2) & (t <= 0.6)).astype(float)),
    ("(t > 0.5) + (t >= 0.5) + (t == 0.5) + (t != 0.5)",
     lambda t: (t > 0.5) * 1.0 + (t >= 0.5) + (t == 0.5) + (t != 0.5)),
    ("7", lambda t: np.full_like(t, 7.0)),
    ("1e-3 * 10", lambda t: np.full_like(t, 1e-2)),
]


@pytest.mark.parametrize("text, reference", NUMPY_CASES, ids=[c[0] for c in NUMPY_CASES])
def test_expression_matches_numpy(text, reference):
    f = build_function("x", {"expression": text}, HERE)
    assert isinstance(f, Expression) and f.kind == "expression"
    t = np.append(T, 0.5)
    np.testing.assert_allclose(f(t), reference(t), rtol=1e-13, atol=1e-13)
    assert f(0.25) == pytest.approx(float(reference(np.array([0.25]))[0]), rel=1e-13)
    assert f.breakpoints.size == 0


DERIVATIVE_CASES = [
    "3000*sin(2*pi*5*t)",
    "1 + 2*t - t**2/3",
    "t**3 - 4*t**-2 + t**0.5",
    "2**t * e**-t",
    "t**t",
    "(1 + t)**(2*t)",
    "t % 0.3 + 0.3 % (t + 1)",
    "cos(3*t) * tan(t)",
    "asin(t) - acos(t*t) + atan(5*t)",
    "atan2(t - 0.5, 0.2 + t*t)",
    "sinh(t) + cosh(2*t) * tanh(t)",
    "exp(-t) / (1 + log(t)) + log10(t) * sqrt(t)",
    "sqrt(1 + t**2) / t",
    "abs(t - 0.51) * t",
    "sign(t - 0.51) * t + floor(4*t) + ceil(4*t) + heaviside(t - 0.51)",
    "min(t, 0.33, 1.01 - t) + max(t*t, 0.25)",
    "where(t < 0.51, sin(t), t**2) + (t > 0.51)*t",
    "exp(sin(exp(t)))",
    "1 / (1 + exp(-(t - 0.5) / 0.1))",
]


def central_difference(f, t, h=1e-6):
    return (f(t + h) - f(t - h)) / (2 * h)


@pytest.mark.parametrize("text", DERIVATIVE_CASES)
def test_expression_derivative_matches_central_difference(text):
    f = Expression("x", text)
    # Stay clear of the kinks at 0.25, 0.5, 0.51, 0.33, 0.68, 0.75 of the piecewise cases.
    t = np.array([0.07, 0.13, 0.21, 0.29, 0.41, 0.47, 0.57, 0.63, 0.71, 0.83, 0.91])
    np.testing.assert_allclose(f.derivative(t), central_difference(f, t), rtol=2e-6, atol=1e-6)


CLOSED_FORMS = [
    ("3000*sin(2*pi*5*t)", lambda t: 3000 * 2 * np.pi * 5 * np.cos(2 * np.pi * 5 * t)),
    ("t**3", lambda t: 3 * t ** 2),
    ("2**t", lambda t: np.log(2) * 2 ** t),
    ("t**t", lambda t: t ** t * (np.log(t) + 1)),
    ("exp(-2*t)*cos(t)", lambda t: -2 * np.exp(-2 * t) * np.cos(t) - np.exp(-2 * t) * np.sin(t)),
    ("log10(t)", lambda t: 1 / (t * np.log(10))),
    ("tan(t)", lambda t: 1 / np.cos(t) ** 2),
    ("atan2(t, 2)", lambda t: 2 / (4 + t ** 2)),
    ("abs(t - 0.5)", lambda t: np.sign(t - 0.5)),
    ("min(t, 0.5)", lambda t: np.where(t <= 0.5, 1.0, 0.0)),
    ("where(t < 0.5, t*t, 3*t)", lambda t: np.where(t < 0.5, 2 * t, 3.0)),
    ("heaviside(t - 0.5) + floor(t*10) + (t < 0.3)", lambda t: np.zeros_like(t)),
]


@pytest.mark.parametrize("text, closed_form", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_expression_derivative_matches_closed_form(text, closed_form):
    np.testing.assert_allclose(Expression("x", text).derivative(T), closed_form(T),
                               rtol=1e-12, atol=1e-12)


def test_expression_derivative_of_a_constant_is_zero():
    np.testing.assert_array_equal(Expression("c", "sin(pi/7) * 3").derivative(T), 0.0 * T)


def test_non_finite_results_come_back_without_warnings():
    f = Expression("x", "log(t) + 1/t")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = f(np.array([0.0, -1.0, 1.0]))
        slopes = f.derivative(np.array([0.0, 1.0]))
        scalar = Expression("y", "1/t")(0.0)
    assert values[0] == -np.inf or np.isnan(values[0])
    assert np.isnan(values[1]) and values[2] == 1.0
    assert not np.isfinite(slopes[0]) and slopes[1] == 0.0
    assert scalar == np.inf


def test_expression_keeps_its_text_and_allows_surrounding_blanks():
    f = Expression("x", "  2 * t\n")
    assert f.text == "  2 * t\n" and f(3.0) == 6.0


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


def record(tmp_path, content, filename="rec.csv", **spec):
    (tmp_path / filename).write_text(content)
    return build_function("rec", {"file": filename, **spec}, tmp_path)


def test_record_comma_with_header(tmp_path):
    f = record(tmp_path, "time,acceleration\n0.0,0.0\n  \n0.5, 1.5\n1.0 ,-1.0\n")
    assert isinstance(f, Record) and f.kind == "record"
    assert f.path == tmp_path / "rec.csv"
    np.testing.assert_array_equal(f.times, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(f.values, [0.0, 1.5, -1.0])
    assert f(0.25) == pytest.approx(0.75)
    assert f.derivative(0.75) == pytest.approx(-5.0)


def test_record_whitespace_comments_and_blank_lines(tmp_path):
    content = "# accelerogram, station X\n\n0 0\n1\t2   # peak\n   \n# end of the\n2   4\n"
    f = record(tmp_path, content, "acc.txt", right="linear")
    np.testing.assert_array_equal(f.times, [0.0, 1.0, 2.0])
    assert f(3.0) == pytest.approx(6.0)


def test_record_semicolons_columns_and_subfolder(tmp_path):
    (tmp_path / "data").mkdir()
    content = "# t;x;v\nt;x;v\n0;9;0\n1;9;10\n2;9;0\n"
    f = record(tmp_path, content, "data/r.csv", columns=[0, 2], left="constant")
    np.testing.assert_array_equal(f.values, [0.0, 10.0, 0.0])
    assert f(-3.0) == 0.0
    # Column 2 as time goes back down on line 5 of the file.
    with pytest.raises(FunctionError, match=r"r\.csv line 5: 0\.0 after 10\.0\)$"):
        build_function("s", {"file": "data/r.csv", "columns": [2, 1]}, tmp_path)


def test_record_single_row_and_absolute_path(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("0.0,3.5\n")
    f = build_function("one", {"file": str(path)}, Path("/nonexistent"))
    assert f(100.0) == 3.5


def test_record_direct_constructor(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("0,1,2\n1,3,5\n")
    f = Record("r", path, columns=(0, 2), right="constant")
    assert f(0.5) == pytest.approx(3.5) and f(9.0) == 5.0


def test_large_record_loads_fast(tmp_path):
    n = 200_000
    t = np.arange(n) * 1e-3
    text = "t,a\n" + "\n".join(map("{:.3f},{:.6f}".format, t, np.sin(t))) + "\n"
    (tmp_path / "big.csv").write_text(text)
    start = time.perf_counter()
    f = build_function("big", {"file": "big.csv"}, tmp_path)
    assert time.perf_counter() - start < 1.0
    assert f.times.size == n and f(100.0005) == pytest.approx(np.sin(100.0005), abs=1e-5)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

EXPRESSION_ERRORS = [
    ("__import__('os')", r"unknown function '__import__' \(allowed: sin, cos"),
    ("t.__class__", r"attribute access '\.__class__' is not allowed"),
    ("(lambda: 1)()", r"call of lambda is not allowed"),
    ("[1][0]", r"subscript is not allowed"),
    ("'a'", r"string constant 'a' is not allowed"),
    ("b'a'", r"bytes constant b'a' is not allowed"),
    ("2j", r"complex number constant 2j is not allowed"),
    ("True + t", r"boolean constant True is not allowed"),
    ("foo(t)", r"unknown function 'foo'"),
    ("foo + t", r"unknown name 'foo' \(allowed: t, pi, e, sin, "),
    ("sin(t, 2)", r"function 'sin' takes 1 argument \(2 given\)"),
    ("atan2(t)", r"function 'atan2' takes 2 arguments \(1 given\)"),
    ("max(t)", r"function 'max' takes 2 or more arguments \(1 given\)"),
    ("min(t, 1, key=2)", r"keyword arguments are not allowed in a call of 'min'"),
    ("sin(*[t])", r"starred argument is not allowed"),
    ("sin + 1", r"function 'sin' must be called"),
    ("t(2)", r"'t' is not a function"),
    ("t // 2", r"operator '//' is not allowed"),
    ("~t", r"operator '~' is not allowed"),
    ("t is 1", r"operator 'is' is not allowed"),
    ("t if t > 1 else 0", r"conditional expression .* is not allowed; use where"),
    ("t and 1", r"'and'/'or' is not allowed"),
    ("[x for x in (1, 2)]", r"list comprehension is not allowed"),
    ("(t, 1)", r"tuple is not allowed"),
    ("{'a': 1}", r"dict is not allowed"),
    ("(x := 1)", r"assignment expression"),
    ("f'{t}'", r"f-string is not allowed"),
    ("t.real()", r"call of attribute access '\.real' is not allowed"),
    ("sin(t", r"syntax error"),
    ("import os", r"syntax error"),
    ("", r"empty expression"),
    ("1e999 * t", r"number inf is not finite"),
    ("t" + "+t" * 1200, r"expression too long \(2401 characters, at most 2000\)"),
    ("1" + "+1" * 400, r"expression nested too deeply \(more than 200 levels\)"),
]


@pytest.mark.parametrize("text, message", EXPRESSION_ERRORS, ids=[e[0][:30] for e in
                                                                   EXPRESSION_ERRORS])
def test_expression_errors(text, message):
    with pytest.raises(FunctionError, match=r"^functions\.excitation\.expression: " + message):
        build_function("excitation", {"expression": text}, HERE)


SPEC_ERRORS = [
    ({"tabel": [[0, 1]]}, r"functions\.x: unknown key 'tabel' \(allowed: table, expression"),
    ({}, r"functions\.x: needs one of 'table', 'expression', 'file'"),
    ({"table": [[0, 1]], "file": "a.csv"},
     r"functions\.x: give only one of .* \(found 'table' and 'file'\)"),
    ({"table": [[0, 1]], "left": "extrapolate"},
     r'functions\.x\.left: must be one of "error", "constant", "linear"'),
    ({"table": [[0, 1]], "right": 1}, r"functions\.x\.right: must be one of"),
    ({"expression": "t", "left": "constant"},
     r"functions\.x\.left: only valid with 'table' or 'file'"),
    ({"table": [[0, 1]], "columns": [0, 1]}, r"functions\.x\.columns: only valid with 'file'"),
    ({"table": "0 1; 1 2"}, r"functions\.x\.table: must be a list of \[t, value\] pairs "
                            r"\(got str\)"),
    ({"table": []}, r"functions\.x\.table: needs at least 1 row"),
    ({"table": [[0, 1], [1, 2, 3]]}, r"functions\.x\.table: row 2 must be a pair of numbers"),
    ({"table": [[0, 1], ["1", 2]]}, r"functions\.x\.table: row 2 must be a pair of numbers"),
    ({"table": [[0, 1], 5]}, r"functions\.x\.table: row 2 must be a pair of numbers"),
    ({"table": [[0, True]]}, r"functions\.x\.table: row 1 must be a pair of numbers"),
    ({"table": [[0, 1], [1, math.nan]]}, r"functions\.x\.table: row 2: value is not finite"),
    ({"table": [[0, 1], [math.inf, 1]]}, r"functions\.x\.table: row 2: time is not finite"),
    ({"table": [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]},
     r"functions\.x\.table: times must increase strictly \(row 3: 1\.0 after 1\.0\)"),
    ({"table": [[0.0, 1.0], [-1.0, 1.0]]},
     r"functions\.x\.table: times must increase strictly \(row 2: -1\.0 after 0\.0\)"),
    ({"expression": 3000}, r"functions\.x\.expression: must be a string \(got int\)"),
    ({"file": 5}, r"functions\.x\.file: must be a non-empty path string"),
    ({"file": "a.csv", "columns": [1, 1]}, r"functions\.x\.columns: must be two different"),
    ({"file": "a.csv", "columns": [0, -1]}, r"functions\.x\.columns: must be two different"),
]


@pytest.mark.parametrize("spec, message", SPEC_ERRORS, ids=[m[1][:40] for m in SPEC_ERRORS])
def test_spec_errors(spec, message):
    with pytest.raises(FunctionError, match="^" + message):
        build_function("x", spec, HERE)


def test_spec_that_is_not_a_table():
    with pytest.raises(FunctionError, match=r"^functions\.x: must be a table .*\(got str\)"):
        build_function("x", "3*t", HERE)


def test_missing_file_names_its_absolute_path(tmp_path):
    with pytest.raises(FunctionError) as info:
        build_function("record", {"file": "accelerogram.csv"}, tmp_path)
    assert str(info.value) == f"functions.record.file: file not found: {tmp_path}/accelerogram.csv"
    with pytest.raises(FunctionError, match=r"functions\.record\.file: not a file"):
        build_function("record", {"file": "."}, tmp_path)


CSV_ERRORS = [
    ("t,a\n0,1\n1,abc\n", r"rec\.csv line 3: column 1 \(0-based\) is not a number: 'abc'"),
    ("# c\n\n0;1\n1;2,5\n", r"rec\.csv line 4: column 1 \(0-based\) is not a number: '2,5'"),
    ("0 1\n1\n", r"rec\.csv line 2: 1 column\(s\), needs at least 2"),
    ("0,1\n# c\n1,2\n\n0.5,3\n", r"times must increase strictly \(\S*rec\.csv line 5: 0\.5 after "
                                  r"1\.0\)"),
    ("0,1\n1,inf\n", r"rec\.csv line 2: value is not finite \(inf\)"),
    ("# nothing here\n\n", r"rec\.csv: no data rows"),
    ("time,value\n", r"rec\.csv: no data rows"),
]


@pytest.mark.parametrize("content, message", CSV_ERRORS, ids=[m[1][:30] for m in CSV_ERRORS])
def test_record_errors_name_file_and_line(tmp_path, content, message):
    with pytest.raises(FunctionError, match=r"^functions\.rec\.file: .*" + message):
        record(tmp_path, content)


def test_record_evaluation_beyond_the_file(tmp_path):
    f = record(tmp_path, "0,0\n2,1\n")
    with pytest.raises(FunctionError, match=r"function 'rec': t = 3\.0 s is beyond the record "
                                            r"rec\.csv \[0\.0, 2\.0\]"):
        f(3.0)


def test_record_not_utf8(tmp_path):
    (tmp_path / "rec.csv").write_bytes(b"0,1\n\xff\xfe,2\n")
    with pytest.raises(FunctionError, match=r"not a UTF-8 text file"):
        build_function("rec", {"file": "rec.csv"}, tmp_path)


def test_function_errors_are_study_errors():
    assert issubclass(FunctionError, StudyError)
    with pytest.raises(FunctionError, match=r"^functions\.x\.left"):
        Table("x", [0.0, 1.0], [0.0, 1.0], left="clamp")
    with pytest.raises(FunctionError, match=r"^functions\.x\.table: 2 times for 3 values"):
        Table("x", [0.0, 1.0], [0.0, 1.0, 2.0])
