"""Time functions: multipliers of loads and imposed values, defined in ``[functions.<name>]``.

A study file defines each function by exactly one of three keys::

    [functions.step]             # tabulated, linear interpolation
    table = [[0.0, 1.0], [1.0, 1.0], [1.0000001, 0.0]]
    left = "error"               # beyond the table: "error" (default) | "constant" | "linear"
    right = "constant"

    [functions.excitation]       # expression of t (s)
    expression = "3000*sin(2*pi*5*t)"

    [functions.record]
    file = "accelerogram.csv"    # columns t, value; path relative to the study file
    columns = [0, 1]             # optional, 0-based time and value columns

All functions are vectorized: called with a float they return a float, called with an
ndarray they return an ndarray of the same shape. ``derivative(t, order=1)`` is exact at
every order, whatever the absolute time: symbolic for expressions (the derivative of an
expression graph is a graph, differentiated again for the next order); for tabulated data
the slope of each segment, and zero from the second order on (right-continuous at
breakpoints: the value after the jump); zero for constants. Every user error is a
:class:`~fem.errors.FunctionError` whose message starts with the key path or names the
function.

Expressions are parsed with :func:`ast.parse` and compiled from a whitelist of nodes into a
small evaluation program; the text is never evaluated or executed as Python.

Modules: :mod:`~fem.functions.base` (:class:`TimeFunction`, :class:`Constant`),
:mod:`~fem.functions.table` (:class:`Table`, :class:`Record` and the file reader),
:mod:`~fem.functions.expression` (the expression compiler and :class:`Expression`),
:mod:`~fem.functions.expression_graph` (expression graphs and their evaluation) and
:mod:`~fem.functions.expression_derivative` (their symbolic derivative). The package
itself holds :func:`build_function`, which checks a ``[functions.<name>]`` table and
builds its function.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fem.errors import FunctionError
from fem.functions.base import ONE, Constant, TimeFunction, _is_real
from fem.functions.expression import MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_LENGTH, Expression
from fem.functions.table import RULES, Record, Table, _check_columns, _check_rule

__all__ = [
    "TimeFunction",
    "Table",
    "Record",
    "Expression",
    "Constant",
    "ONE",
    "RULES",
    "MAX_EXPRESSION_LENGTH",
    "MAX_EXPRESSION_DEPTH",
    "build_function",
]

_SPEC_KEYS = ("table", "expression", "file", "left", "right", "columns")
_SOURCE_KEYS = ("table", "expression", "file")


def _table_rows(name: str, rows) -> tuple[list[float], list[float]]:
    key = f"functions.{name}.table"
    if isinstance(rows, np.ndarray):
        rows = rows.tolist()
    if not isinstance(rows, (list, tuple)):
        raise FunctionError(f"{key}: must be a list of [t, value] pairs "
                            f"(got {type(rows).__name__})")
    if not rows:
        raise FunctionError(f"{key}: needs at least 1 row")
    times, values = [], []
    for i, row in enumerate(rows, 1):
        if not (isinstance(row, (list, tuple)) and len(row) == 2 and all(map(_is_real, row))):
            raise FunctionError(f"{key}: row {i} must be a pair of numbers [t, value] "
                                f"(got {row!r})")
        try:
            times.append(float(row[0]))
            values.append(float(row[1]))
        except OverflowError:
            raise FunctionError(f"{key}: row {i}: an integer too large for a number") from None
    return times, values


def build_function(name: str, spec: dict, base_dir: Path) -> TimeFunction:
    """Build the function of the study table ``[functions.<name>]``.

    Parameters
    ----------
    name : str
        The function name.
    spec : dict
        The parsed TOML table: exactly one of ``table`` (list of [t, value] pairs),
        ``expression`` (str) or ``file`` (str); ``left`` and ``right`` (rules, with table or
        file); ``columns`` ([time, value] 0-based indices, with file).
    base_dir : pathlib.Path
        Directory of the study file; relative ``file`` paths start there.

    Returns
    -------
    TimeFunction
        A :class:`Table`, :class:`Expression` or :class:`Record`.

    Raises
    ------
    FunctionError
        For any invalid key or value; the message starts with the key path.
    """
    prefix = f"functions.{name}"
    if not isinstance(spec, dict):
        raise FunctionError(f"{prefix}: must be a table with one of 'table', 'expression', "
                            f"'file' (got {type(spec).__name__})")
    for key in spec:
        if key not in _SPEC_KEYS:
            raise FunctionError(f"{prefix}: unknown key '{key}' "
                                f"(allowed: {', '.join(_SPEC_KEYS)})")
    sources = [k for k in _SOURCE_KEYS if k in spec]
    if not sources:
        raise FunctionError(f"{prefix}: needs one of 'table', 'expression', 'file'")
    if len(sources) > 1:
        found = " and ".join(f"'{k}'" for k in sources)
        raise FunctionError(f"{prefix}: give only one of 'table', 'expression', 'file' "
                            f"(found {found})")
    source = sources[0]
    for side in ("left", "right"):
        if side in spec:
            if source == "expression":
                raise FunctionError(f"{prefix}.{side}: only valid with 'table' or 'file'")
            _check_rule(name, side, spec[side])
    if "columns" in spec and source != "file":
        raise FunctionError(f"{prefix}.columns: only valid with 'file'")
    left, right = spec.get("left", "error"), spec.get("right", "error")

    if source == "expression":
        return Expression(name, spec["expression"])
    if source == "table":
        times, values = _table_rows(name, spec["table"])
        return Table(name, times, values, left, right)
    file = spec["file"]
    if not isinstance(file, str) or not file.strip():
        raise FunctionError(f"{prefix}.file: must be a non-empty path string (got {file!r})")
    columns = _check_columns(name, spec.get("columns", [0, 1]))
    from fem.errors import path_problem, shown_path

    problem = path_problem(file)
    if problem is not None:
        raise FunctionError(f"{prefix}.file: the path {shown_path(file)} {problem}")
    path = Path(file).expanduser()
    if not path.is_absolute():
        path = Path(base_dir) / path
    path = path.absolute()
    if not path.exists():
        raise FunctionError(f"{prefix}.file: file not found: {path}")
    if not path.is_file():
        raise FunctionError(f"{prefix}.file: not a file: {path}")
    return Record(name, path, columns, left, right)
