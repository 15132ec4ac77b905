"""Tabulated functions: :class:`Table` (points given in the study) and :class:`Record`
(points read from a CSV or whitespace-separated text file).
"""

from __future__ import annotations

import itertools
import math
import numbers
from pathlib import Path

import numpy as np

from fem.errors import FunctionError
from fem.functions.base import TimeFunction, _num

#: Extrapolation rules of tables and records, beyond their first or last time.
RULES = ("error", "constant", "linear")


def _check_rule(name: str, side: str, rule) -> str:
    if not isinstance(rule, str) or rule not in RULES:
        allowed = ", ".join(f'"{r}"' for r in RULES)
        raise FunctionError(f"functions.{name}.{side}: must be one of {allowed} (got {rule!r})")
    return rule


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


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

    Notes
    -----
    Derivatives are exact and right-continuous: at a breakpoint the first derivative is the
    slope of the segment after it (the last segment's at the end under "error"), and every
    derivative of order 2 or more is zero, between breakpoints as at them (the value after
    the jump of the slope; its Dirac impulse is not represented).
    """

    kind = "table"
    exact_order = math.inf
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

    def _higher_derivative(self, t, order):
        if self.times.size == 1:
            return 0.0
        self._check_domain(t, t < self.times[0], t > self.times[-1])
        # piecewise linear: no curvature on a segment, nor beyond the ends under any rule
        return np.where(np.isnan(t), np.nan, 0.0)

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
