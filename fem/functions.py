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
ndarray they return an ndarray of the same shape. ``derivative`` is exact (piecewise slope
for tabulated data, symbolic for expressions). Every user error is a
:class:`~fem.errors.FunctionError` whose message starts with the key path or names the
function.

Expressions are parsed with :func:`ast.parse` and compiled from a whitelist of nodes into a
small evaluation program; the text is never evaluated or executed as Python.
"""

from __future__ import annotations

import abc
import ast
import itertools
import math
import numbers
from pathlib import Path

import numpy as np

from fem.errors import FunctionError

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

#: Extrapolation rules of tables and records, beyond their first or last time.
RULES = ("error", "constant", "linear")

#: Longest accepted expression text, in characters.
MAX_EXPRESSION_LENGTH = 2000

#: Deepest accepted nesting of the expression syntax tree.
MAX_EXPRESSION_DEPTH = 200

_SPEC_KEYS = ("table", "expression", "file", "left", "right", "columns")
_SOURCE_KEYS = ("table", "expression", "file")


def _num(x) -> str:
    """Shortest text that reads back as the same float."""
    return repr(float(x))


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _check_rule(name: str, side: str, rule) -> str:
    if not isinstance(rule, str) or rule not in RULES:
        allowed = ", ".join(f'"{r}"' for r in RULES)
        raise FunctionError(f"functions.{name}.{side}: must be one of {allowed} (got {rule!r})")
    return rule


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------------------------
# Base class and constant
# --------------------------------------------------------------------------------------------


class TimeFunction(abc.ABC):
    """A scalar function of time, f(t), dimensionless multiplier of a load or imposed value.

    Parameters
    ----------
    name : str
        Name of the function in the study (the ``<name>`` of ``[functions.<name>]``).

    Attributes
    ----------
    name : str
    kind : str
        ``"table"``, ``"expression"``, ``"record"`` or ``"constant"``.
    """

    kind: str = ""

    def __init__(self, name: str):
        self.name = str(name)

    def __call__(self, t):
        """Value f(t).

        Parameters
        ----------
        t : float or ndarray of any shape
            Time, s.

        Returns
        -------
        float or ndarray
            A float for a scalar ``t``, else an ndarray of the same shape as ``t``.

        Raises
        ------
        FunctionError
            If ``t`` lies outside the domain of a table whose rule on that side is "error".
        """
        return self._apply(self._evaluate, t)

    def derivative(self, t):
        """Exact time derivative df/dt, 1/s, right-continuous where the slope jumps.

        Parameters
        ----------
        t : float or ndarray of any shape
            Time, s.

        Returns
        -------
        float or ndarray
            Same shape convention as :meth:`__call__`.
        """
        return self._apply(self._derivative, t)

    @property
    def breakpoints(self) -> np.ndarray:
        """(k,) float, s: sorted times where the value or the slope is discontinuous.

        Integrators may land on them. Empty for expressions and constants.
        """
        return np.zeros(0)

    @property
    def domain(self) -> tuple[float, float]:
        """(t_min, t_max), s: times where evaluation is allowed (infinite when unbounded)."""
        return (-math.inf, math.inf)

    @abc.abstractmethod
    def _evaluate(self, t: np.ndarray):
        """Values on a float array ``t``; may return a scalar to be broadcast."""

    @abc.abstractmethod
    def _derivative(self, t: np.ndarray):
        """Derivatives on a float array ``t``; may return a scalar to be broadcast."""

    @staticmethod
    def _apply(method, t):
        scalar = not isinstance(t, np.ndarray) and np.ndim(t) == 0
        arr = np.asarray(t, dtype=float)
        # Methods index with masks, which 0-d arrays do not support.
        work = arr if arr.ndim else arr.reshape(1)
        # The caller judges inf/nan results; numpy must not print warnings about them.
        with np.errstate(all="ignore"):
            out = np.asarray(method(work), dtype=float)
        if out.shape == work.shape:
            out = out.reshape(arr.shape)
        if out.shape != arr.shape:
            out = np.broadcast_to(out, arr.shape).copy()
        elif np.may_share_memory(out, arr):
            out = out.copy()
        return float(out) if scalar else out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class Constant(TimeFunction):
    """The constant function f(t) = value.

    Parameters
    ----------
    value : float
        The constant, finite.
    name : str, default "1"
    """

    kind = "constant"

    def __init__(self, value: float = 1.0, name: str = "1"):
        super().__init__(name)
        if not _is_real(value) or not math.isfinite(value):
            raise FunctionError(f"function '{name}': constant value must be a finite number "
                                f"(got {value!r})")
        self.value = float(value)

    def _evaluate(self, t):
        return self.value

    def _derivative(self, t):
        return 0.0

    def __repr__(self) -> str:
        return f"<Constant {self.name!r} = {self.value!r}>"


#: The unit function, default multiplier of loads without a function.
ONE = Constant(1.0)


# --------------------------------------------------------------------------------------------
# Tables and records
# --------------------------------------------------------------------------------------------


class Table(TimeFunction):
    """Piecewise-linear function through points (times[i], values[i]).

    Parameters
    ----------
    name : str
    times : (n,) array_like, s
        Strictly increasing, finite, n >= 1.
    values : (n,) array_like
        Finite. A single point (n = 1) makes a constant function, whatever the rules.
    left, right : {"error", "constant", "linear"}
        Rule before the first time and after the last one: raise, hold the end value, or
        extend the end segment.

    Attributes
    ----------
    times : (n,) float ndarray, read-only, s
    values : (n,) float ndarray, read-only
    left, right : str
    """

    kind = "table"
    _key = "table"  # study key named in data errors

    def __init__(self, name: str, times, values, left: str = "error", right: str = "error"):
        super().__init__(name)
        key = f"functions.{self.name}.{self._key}"
        self.left = _check_rule(self.name, "left", left)
        self.right = _check_rule(self.name, "right", right)
        times = np.asarray(times, dtype=float).reshape(-1)
        values = np.asarray(values, dtype=float).reshape(-1)
        if times.size != values.size:
            raise FunctionError(f"{key}: {times.size} times for {values.size} values")
        if times.size == 0:
            raise FunctionError(f"{key}: needs at least 1 row")
        for label, data in (("time", times), ("value", values)):
            bad = np.flatnonzero(~np.isfinite(data))
            if bad.size:
                raise FunctionError(f"{key}: {self._where(bad[0])}: {label} is not finite "
                                    f"({_num(data[bad[0]])})")
        bad = np.flatnonzero(np.diff(times) <= 0.0)
        if bad.size:
            i = bad[0] + 1
            raise FunctionError(f"{key}: times must increase strictly ({self._where(i)}: "
                                f"{_num(times[i])} after {_num(times[i - 1])})")
        self.times = _readonly(times)
        self.values = _readonly(values)
        # Segment slopes; a lone point has no segment and is constant.
        self._slopes = np.diff(values) / np.diff(times)

    def _where(self, i: int) -> str:
        """Location of data point ``i`` (0-based) in messages."""
        return f"row {i + 1}"

    def _describe(self) -> str:
        return "the table"

    @property
    def domain(self) -> tuple[float, float]:
        if self.times.size == 1:
            return (-math.inf, math.inf)
        lo = self.times[0] if self.left == "error" else -math.inf
        hi = self.times[-1] if self.right == "error" else math.inf
        return (float(lo), float(hi))

    @property
    def breakpoints(self) -> np.ndarray:
        t, s = self.times, self._slopes
        if t.size == 1:
            return np.zeros(0)
        inner = t[1:-1][s[1:] != s[:-1]]
        ends = []
        # An end is a slope jump under "constant" and the edge of the domain under "error".
        if self.left == "error" or (self.left == "constant" and s[0] != 0.0):
            ends.append(t[:1])
        ends.append(inner)
        if self.right == "error" or (self.right == "constant" and s[-1] != 0.0):
            ends.append(t[-1:])
        return np.concatenate(ends)

    def _check_domain(self, t: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        for side, mask, rule in (("left", lo, self.left), ("right", hi, self.right)):
            if rule == "error" and mask.any():
                bad = t[mask].min() if side == "left" else t[mask].max()
                where = "before" if side == "left" else "beyond"
                raise FunctionError(
                    f"function '{self.name}': t = {_num(bad)} s is {where} {self._describe()} "
                    f"[{_num(self.times[0])}, {_num(self.times[-1])}] "
                    f'(set {side} = "constant" or "linear")')

    def _evaluate(self, t):
        times, values = self.times, self.values
        if times.size == 1:
            return values[0]
        lo, hi = t < times[0], t > times[-1]
        self._check_domain(t, lo, hi)
        # np.interp holds the end values outside the table: the "constant" rule.
        out = np.interp(t, times, values)
        if self.left == "linear" and self._slopes[0] != 0.0 and lo.any():
            out[lo] = values[0] + self._slopes[0] * (t[lo] - times[0])
        if self.right == "linear" and self._slopes[-1] != 0.0 and hi.any():
            out[hi] = values[-1] + self._slopes[-1] * (t[hi] - times[-1])
        return out

    def _derivative(self, t):
        times, s = self.times, self._slopes
        if times.size == 1:
            return 0.0
        lo, hi = t < times[0], t > times[-1]
        self._check_domain(t, lo, hi)
        # Index of the segment starting at or before t: right-continuous at breakpoints.
        seg = np.searchsorted(times, t, side="right") - 1
        out = s[np.clip(seg, 0, s.size - 1)]
        out[lo] = s[0] if self.left == "linear" else 0.0
        # At and after the last time the right rule gives the slope; "error" keeps the
        # last segment's, the only one defined there.
        last = seg >= times.size - 1
        out[last] = 0.0 if self.right == "constant" else s[-1]
        out[np.isnan(t)] = np.nan
        return out

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.name!r}: {self.times.size} points on "
                f"[{_num(self.times[0])}, {_num(self.times[-1])}], "
                f"left={self.left!r}, right={self.right!r}>")


class Record(Table):
    """A table read from a text file of columns (CSV or whitespace separated).

    The delimiter (comma, semicolon or whitespace) is sniffed from the first data line.
    Blank lines and ``#`` comments are skipped; the first non-comment line is a header
    when it is not numeric.

    Parameters
    ----------
    name : str
    path : str or pathlib.Path
        The file; error messages name it with line numbers.
    columns : (int, int), default (0, 1)
        0-based indices of the time column (s) and the value column.
    left, right : {"error", "constant", "linear"}
        As for :class:`Table`.

    Attributes
    ----------
    path : pathlib.Path
    columns : tuple[int, int]
    """

    kind = "record"
    _key = "file"

    def __init__(self, name: str, path, columns=(0, 1), left: str = "error",
                 right: str = "error"):
        self.name = str(name)
        self.path = Path(path)
        self.columns = _check_columns(self.name, columns)
        _check_rule(self.name, "left", left)
        _check_rule(self.name, "right", right)
        times, values = _read_columns(self.path, self.columns, f"functions.{self.name}.file")
        super().__init__(name, times, values, left, right)

    def _where(self, i: int) -> str:
        # Only reached on errors: find the file line of data row i by a rescan.
        return f"{self.path} line {_data_line_number(self.path, i)}"

    def _describe(self) -> str:
        return f"the record {self.path.name}"


def _check_columns(name: str, columns) -> tuple[int, int]:
    ok = (isinstance(columns, (list, tuple)) and len(columns) == 2
          and all(isinstance(c, numbers.Integral) and not isinstance(c, (bool, np.bool_))
                  and c >= 0 for c in columns)
          and columns[0] != columns[1])
    if not ok:
        raise FunctionError(f"functions.{name}.columns: must be two different 0-based column "
                            f"indices [time, value] (got {columns!r})")
    return int(columns[0]), int(columns[1])


def _split(line: str, delimiter: str | None) -> list[str]:
    return line.split() if delimiter is None else [f.strip() for f in line.split(delimiter)]


def _content(raw: str) -> str:
    """A line without its ``#`` comment and surrounding blanks."""
    return raw.split("#", 1)[0].strip()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sniff(path: Path, key: str) -> tuple[str | None, int]:
    """Delimiter (None for whitespace) and the number of lines before the data, header included."""
    header = 0
    try:
        with path.open(encoding="utf-8-sig") as f:
            for number, raw in enumerate(f, 1):
                line = _content(raw)
                if not line:
                    continue
                delimiter = ";" if ";" in line else "," if "," in line else None
                if header == 0 and not all(_is_number(x) for x in _split(line, delimiter)):
                    header = number
                    continue
                return delimiter, header
    except UnicodeDecodeError:
        raise FunctionError(f"{key}: {path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise FunctionError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None
    raise FunctionError(f"{key}: {path}: no data rows")


def _data_lines(path: Path, header: int):
    """Yield (line number, content) for each data line of the file."""
    with path.open(encoding="utf-8-sig") as f:
        for number, raw in enumerate(f, 1):
            if number <= header:
                continue
            line = _content(raw)
            if line:
                yield number, line


def _data_line_number(path: Path, row: int) -> int:
    _, header = _sniff(path, "")
    for i, (number, _) in enumerate(_data_lines(path, header)):
        if i == row:
            return number
    return -1


def _read_columns(path: Path, columns: tuple[int, int], key: str):
    """(times, values) from the file; errors name the file and the line."""
    if not path.is_file():
        raise FunctionError(f"{key}: file not found: {path}")
    delimiter, header = _sniff(path, key)
    try:
        try:
            # numpy's C reader is the fast path; a Python pass explains any failure.
            with path.open(encoding="utf-8-sig") as f:
                # Blank-looking lines made of spaces trip the reader when a delimiter is set.
                lines = (ln for ln in itertools.islice(f, header, None) if not ln.isspace())
                data = np.loadtxt(lines, dtype=float, delimiter=delimiter, comments="#",
                                  usecols=columns, ndmin=2)
        except ValueError:
            data = _read_slowly(path, delimiter, header, columns, key)
    except UnicodeDecodeError:
        raise FunctionError(f"{key}: {path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise FunctionError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None
    return data[:, 0], data[:, 1]


def _read_slowly(path: Path, delimiter, header: int, columns, key: str) -> np.ndarray:
    need = max(columns) + 1
    rows = []
    for number, line in _data_lines(path, header):
        fields = _split(line, delimiter)
        if len(fields) < need:
            raise FunctionError(f"{key}: {path} line {number}: {len(fields)} column(s), "
                                f"needs at least {need}")
        row = []
        for c in columns:
            try:
                row.append(float(fields[c]))
            except ValueError:
                raise FunctionError(f"{key}: {path} line {number}: column {c} (0-based) is "
                                    f"not a number: {fields[c]!r}") from None
        rows.append(row)
    if not rows:
        raise FunctionError(f"{key}: {path}: no data rows")
    return np.array(rows, dtype=float)


# --------------------------------------------------------------------------------------------
# Expressions: node graph, symbolic derivative, evaluation program
# --------------------------------------------------------------------------------------------


def _cmp01(ufunc):
    def compare(a, b):
        return np.multiply(ufunc(a, b), 1.0)
    return compare


# Numpy kernel of each operation; arguments are scalars or arrays that broadcast.
_KERNELS = {
    "neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.true_divide, "pow": np.power, "mod": np.mod,
    "lt": _cmp01(np.less), "le": _cmp01(np.less_equal), "gt": _cmp01(np.greater),
    "ge": _cmp01(np.greater_equal), "eq": _cmp01(np.equal), "ne": _cmp01(np.not_equal),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp": np.exp, "log": np.log, "log10": np.log10, "sqrt": np.sqrt, "abs": np.abs,
    "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "heaviside": lambda x: np.heaviside(x, 1.0),
    "min": np.minimum, "max": np.maximum,
    "where": lambda c, a, b: np.where(c != 0, a, b),
}

# Callable names and their number of arguments (None: 2 or more).
_FUNCTIONS = {
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2,
    "sinh": 1, "cosh": 1, "tanh": 1, "exp": 1, "log": 1, "log10": 1, "sqrt": 1,
    "abs": 1, "sign": 1, "floor": 1, "ceil": 1, "min": None, "max": None,
    "where": 3, "heaviside": 1,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_ALLOWED_NAMES = ", ".join(["t", *_CONSTANTS, *_FUNCTIONS])

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.Mod: "mod"}
_UNARY = {ast.UAdd: None, ast.USub: "neg"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
            ast.NotEq: "ne"}
_OPERATOR_TEXT = {ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
                  ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&", ast.Not: "not",
                  ast.Invert: "~", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
                  ast.IsNot: "is not"}
_CONSTRUCTS = {
    ast.Attribute: "attribute access", ast.Subscript: "subscript", ast.Lambda: "lambda",
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
    ast.List: "list", ast.Tuple: "tuple", ast.Set: "set", ast.Dict: "dict",
    ast.IfExp: "conditional expression 'a if c else b'", ast.BoolOp: "'and'/'or'",
    ast.NamedExpr: "assignment expression ':='", ast.Starred: "starred argument",
    ast.JoinedStr: "f-string", ast.Slice: "slice", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield",
}
_HINTS = {ast.IfExp: "; use where(c, a, b)", ast.BoolOp: "; use where, min, max or comparisons"}


class _Node:
    """One operation of an expression graph; nodes are shared, never mutated."""

    __slots__ = ("op", "args", "value")

    def __init__(self, op: str, args: tuple = (), value: float | None = None):
        self.op = op
        self.args = args
        self.value = value

    def is_const(self, value: float | None = None) -> bool:
        return self.op == "const" and (value is None or self.value == value)


_T = _Node("t")


def _const(value) -> _Node:
    return _Node("const", (), float(value))


_ZERO, _ONE_NODE, _TWO = _const(0.0), _const(1.0), _const(2.0)


def _fold(op: str, args: tuple) -> _Node | None:
    """The constant result of ``op`` when all its arguments are constants."""
    if all(a.op == "const" for a in args):
        with np.errstate(all="ignore"):
            return _const(_KERNELS[op](*(np.float64(a.value) for a in args)))
    return None


def _make(op: str, *args: _Node) -> _Node:
    """A node with constant folding only: user expressions keep their exact semantics."""
    return _fold(op, args) or _Node(op, args)


def _simple(op: str, *args: _Node) -> _Node:
    """A node with constant folding and algebraic identities, for derivative graphs."""
    folded = _fold(op, args)
    if folded is not None:
        return folded
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op == "add":
        if a.is_const(0.0):
            return b
        if b.is_const(0.0):
            return a
    elif op == "sub":
        if b.is_const(0.0):
            return a
        if a.is_const(0.0):
            return _simple("neg", b)
    elif op == "mul":
        if a.is_const(0.0) or b.is_const(0.0):
            return _ZERO
        if a.is_const(1.0):
            return b
        if b.is_const(1.0):
            return a
        if a.is_const(-1.0):
            return _simple("neg", b)
        if b.is_const(-1.0):
            return _simple("neg", a)
    elif op == "div":
        if a.is_const(0.0):
            return _ZERO
        if b.is_const(1.0):
            return a
    elif op == "neg":
        if a.op == "neg":
            return a.args[0]
    elif op == "pow":
        if b.is_const(1.0):
            return a
        if b.is_const(0.0):
            return _ONE_NODE
    elif op == "where":
        x, y = args[1], args[2]
        if a.op == "const":
            return x if a.value != 0.0 else y
        if x is y or (x.op == "const" and y.op == "const" and x.value == y.value):
            return x
    return _Node(op, args)


def _derive(node: _Node, d) -> _Node:
    """Derivative node of ``node`` given ``d(child)``, the derivative nodes of its arguments."""
    op, args = node.op, node.args
    if op == "const":
        return _ZERO
    if op == "t":
        return _ONE_NODE
    da = [d(a) for a in args]
    if all(x.is_const(0.0) for x in da):
        return _ZERO
    S = _simple
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op == "neg":
        return S("neg", da[0])
    if op in ("add", "sub"):
        return S(op, da[0], da[1])
    if op == "mul":
        return S("add", S("mul", da[0], b), S("mul", a, da[1]))
    if op == "div":
        # (a/b)' = (a' - (a/b) b') / b reuses the quotient node.
        return S("div", S("sub", da[0], S("mul", node, da[1])), b)
    if op == "pow":
        if b.op == "const":
            return S("mul", S("mul", b, S("pow", a, _const(b.value - 1.0))), da[0])
        if a.op == "const":
            return S("mul", S("mul", node, S("log", a)), da[1])
        return S("mul", node, S("add", S("mul", da[1], S("log", a)),
                                S("div", S("mul", b, da[0]), a)))
    if op == "mod":
        # a mod b = a - b floor(a/b) and floor is flat almost everywhere.
        return S("sub", da[0], S("mul", da[1], S("floor", S("div", a, b))))
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "sign", "floor", "ceil", "heaviside"):
        return _ZERO
    if op == "sin":
        return S("mul", S("cos", a), da[0])
    if op == "cos":
        return S("neg", S("mul", S("sin", a), da[0]))
    if op == "tan":
        return S("mul", S("add", _ONE_NODE, S("mul", node, node)), da[0])
    if op in ("asin", "acos"):
        g = S("div", da[0], S("sqrt", S("sub", _ONE_NODE, S("mul", a, a))))
        return g if op == "asin" else S("neg", g)
    if op == "atan":
        return S("div", da[0], S("add", _ONE_NODE, S("mul", a, a)))
    if op == "atan2":
        y, x = a, b
        return S("div", S("sub", S("mul", x, da[0]), S("mul", y, da[1])),
                 S("add", S("mul", x, x), S("mul", y, y)))
    if op == "sinh":
        return S("mul", S("cosh", a), da[0])
    if op == "cosh":
        return S("mul", S("sinh", a), da[0])
    if op == "tanh":
        return S("mul", S("sub", _ONE_NODE, S("mul", node, node)), da[0])
    if op == "exp":
        return S("mul", node, da[0])
    if op == "log":
        return S("div", da[0], a)
    if op == "log10":
        return S("div", da[0], S("mul", a, _const(math.log(10.0))))
    if op == "sqrt":
        return S("div", da[0], S("mul", _TWO, node))
    if op == "abs":
        return S("mul", S("sign", a), da[0])
    if op == "where":
        return S("where", a, da[1], da[2])
    if op == "min":
        return S("where", S("le", a, b), da[0], da[1])
    if op == "max":
        return S("where", S("ge", a, b), da[0], da[1])
    raise AssertionError(f"no derivative rule for {op}")


def _topological(root: _Node) -> list[_Node]:
    """Nodes reachable from ``root``, each once, arguments before their users."""
    order: list[_Node] = []
    done: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        if ready:
            done.add(id(node))
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if id(a) not in done)
    return order


def _derivative_graph(root: _Node) -> _Node:
    derivatives: dict[int, _Node] = {}
    for node in _topological(root):
        derivatives[id(node)] = _derive(node, lambda a: derivatives[id(a)])
    return derivatives[id(root)]


class _Program:
    """A node graph flattened into steps evaluated in order, each kept only while needed."""

    def __init__(self, root: _Node):
        nodes = _topological(root)
        position = {id(n): i for i, n in enumerate(nodes)}
        last_use = {}
        for i, n in enumerate(nodes):
            for a in n.args:
                last_use[position[id(a)]] = i
        release: list[list[int]] = [[] for _ in nodes]
        for j, i in last_use.items():
            release[i].append(j)
        self.steps = [(n.op, n.value, _KERNELS.get(n.op),
                       tuple(position[id(a)] for a in n.args), tuple(release[i]))
                      for i, n in enumerate(nodes)]

    def run(self, t: np.ndarray):
        values: list = [None] * len(self.steps)
        for i, (op, value, kernel, args, release) in enumerate(self.steps):
            if op == "const":
                values[i] = value
            elif op == "t":
                values[i] = t
            else:
                values[i] = kernel(*(values[j] for j in args))
            for j in release:
                values[j] = None
        return values[-1]


class _Compiler:
    """Checks a Python expression syntax tree against the whitelist and builds its graph."""

    def __init__(self, key: str):
        self.key = key
        self.indent = 0

    def fail(self, message: str, node: ast.AST | None = None):
        column = getattr(node, "col_offset", None)
        where = "" if column is None else f" (at column {column + 1 + self.indent})"
        raise FunctionError(f"{self.key}: {message}{where}")

    def compile(self, text) -> _Node:
        if not isinstance(text, str):
            raise FunctionError(f"{self.key}: must be a string (got {type(text).__name__})")
        if len(text) > MAX_EXPRESSION_LENGTH:
            raise FunctionError(f"{self.key}: expression too long ({len(text)} characters, "
                                f"at most {MAX_EXPRESSION_LENGTH})")
        if not text.strip():
            raise FunctionError(f"{self.key}: empty expression")
        # Leading blanks would be an indentation error; columns still refer to the given text.
        self.indent = len(text) - len(text.lstrip())
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            column = f" at column {exc.offset + self.indent}" if exc.offset else ""
            raise FunctionError(f"{self.key}: syntax error{column}: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise FunctionError(f"{self.key}: cannot parse the expression "
                                f"({type(exc).__name__})") from None
        self._check_depth(tree.body)
        return self.node(tree.body)

    def _check_depth(self, body: ast.AST) -> None:
        stack = [(body, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_EXPRESSION_DEPTH:
                raise FunctionError(f"{self.key}: expression nested too deeply "
                                    f"(more than {MAX_EXPRESSION_DEPTH} levels)")
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))

    def node(self, node: ast.AST) -> _Node:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(node.op), '?')}' is not allowed",
                          node)
            return _make(op, self.node(node.left), self.node(node.right))
        if isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(node.op), '?')}' is not allowed",
                          node)
            operand = self.node(node.operand)
            op = _UNARY[type(node.op)]
            return operand if op is None else _make(op, operand)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        construct = _CONSTRUCTS.get(type(node), type(node).__name__)
        if isinstance(node, ast.Attribute):
            construct = f"attribute access '.{node.attr}'"
        self.fail(f"{construct} is not allowed{_HINTS.get(type(node), '')}", node)

    def constant(self, node: ast.Constant) -> _Node:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            kind = {str: "string", bytes: "bytes", complex: "complex number",
                    bool: "boolean"}.get(type(v), type(v).__name__)
            self.fail(f"{kind} constant {v!r} is not allowed (only real numbers)", node)
        try:
            value = float(v)
        except OverflowError:
            self.fail("number too large", node)
        if not math.isfinite(value):
            self.fail(f"number {value!r} is not finite", node)
        return _const(value)

    def name(self, node: ast.Name) -> _Node:
        if node.id == "t":
            return _T
        if node.id in _CONSTANTS:
            return _const(_CONSTANTS[node.id])
        if node.id in _FUNCTIONS:
            self.fail(f"function '{node.id}' must be called, e.g. {node.id}(t)", node)
        self.fail(f"unknown name '{node.id}' (allowed: {_ALLOWED_NAMES})", node)

    def compare(self, node: ast.Compare) -> _Node:
        left = self.node(node.left)
        result = None
        for op, right_ast in zip(node.ops, node.comparators):
            name = _COMPARE.get(type(op))
            if name is None:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(op), '?')}' is not allowed",
                          node)
            right = self.node(right_ast)
            term = _make(name, left, right)
            # A chain a < b < c holds when every link holds: the product of 0/1 terms.
            result = term if result is None else _make("mul", result, term)
            left = right
        return result

    def call(self, node: ast.Call) -> _Node:
        func = node.func
        if not isinstance(func, ast.Name):
            construct = _CONSTRUCTS.get(type(func), type(func).__name__)
            if isinstance(func, ast.Attribute):
                construct = f"attribute access '.{func.attr}'"
            self.fail(f"call of {construct} is not allowed (call functions by name, "
                      f"e.g. sin(t))", node)
        name = func.id
        if name not in _FUNCTIONS:
            if name == "t" or name in _CONSTANTS:
                self.fail(f"'{name}' is not a function", node)
            self.fail(f"unknown function '{name}' (allowed: {', '.join(_FUNCTIONS)})", node)
        if node.keywords:
            self.fail(f"keyword arguments are not allowed in a call of '{name}'", node)
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.fail(f"starred argument is not allowed in a call of '{name}'", node)
        arity, given = _FUNCTIONS[name], len(node.args)
        if arity is None and given < 2:
            self.fail(f"function '{name}' takes 2 or more arguments ({given} given)", node)
        if arity is not None and given != arity:
            plural = "" if arity == 1 else "s"
            self.fail(f"function '{name}' takes {arity} argument{plural} ({given} given)", node)
        args = [self.node(a) for a in node.args]
        if name in ("min", "max"):
            # An n-ary min or max is a chain of binary ones.
            result = args[0]
            for a in args[1:]:
                result = _make(name, result, a)
            return result
        return _make(name, *args)


class Expression(TimeFunction):
    """A function given by an arithmetic expression of t (s).

    Allowed: real number literals; the names ``t``, ``pi``, ``e``; ``+ - * / ** %``; unary
    ``+ -``; comparisons ``< <= > >= == !=`` (chains allowed) giving 1.0 or 0.0; and calls
    ``sin cos tan asin acos atan atan2(y, x) sinh cosh tanh exp log log10 sqrt abs sign floor
    ceil``, ``min(a, b, ...)``, ``max(a, b, ...)``, ``where(cond, a, b)`` (a where cond is
    nonzero) and ``heaviside(x)`` (0 for x < 0, 1 for x >= 0). ``%`` follows numpy.mod
    (result has the sign of the divisor). Results may be inf or nan where the expression is
    undefined (log(0), 1/0); no warning is printed.

    The derivative is symbolic and exact; at kinks (abs, min, max, where, floor, ...) it
    takes one of the one-sided values, and it is 0 for steps and comparisons.

    Parameters
    ----------
    name : str
    text : str
        The expression, at most :data:`MAX_EXPRESSION_LENGTH` characters.

    Attributes
    ----------
    text : str
    """

    kind = "expression"

    def __init__(self, name: str, text: str):
        super().__init__(name)
        root = _Compiler(f"functions.{self.name}.expression").compile(text)
        self.text = text
        self._value = _Program(root)
        self._slope = _Program(_derivative_graph(root))

    def _evaluate(self, t):
        return self._value.run(t)

    def _derivative(self, t):
        return self._slope.run(t)

    def __repr__(self) -> str:
        return f"<Expression {self.name!r}: {self.text!r}>"


# --------------------------------------------------------------------------------------------
# Study input
# --------------------------------------------------------------------------------------------


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
        times.append(float(row[0]))
        values.append(float(row[1]))
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
    path = Path(file).expanduser()
    if not path.is_absolute():
        path = Path(base_dir) / path
    path = path.absolute()
    if not path.exists():
        raise FunctionError(f"{prefix}.file: file not found: {path}")
    if not path.is_file():
        raise FunctionError(f"{prefix}.file: not a file: {path}")
    return Record(name, path, columns, left, right)
