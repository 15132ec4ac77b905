"""A small reader of nested TOML tables that reports errors by key path (``analysis[2].step``)."""

from __future__ import annotations

import difflib
import math
from typing import Any

from fem.errors import StudyError

_REQUIRED = object()


def _describe(value) -> str:
    if isinstance(value, str):
        return f'"{value}"' if len(value) < 40 else f'"{value[:37]}..."'
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


class Table:
    """Reads the keys of one TOML table, checking types; :meth:`done` rejects unknown keys.

    ``where`` is the key path of the table, used as the prefix of every message.
    """

    def __init__(self, data, where: str):
        if not isinstance(data, dict):
            raise StudyError(f"{where}: expected a table, got {_describe(data)}")
        self.data = data
        self.where = where
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def has(self, name: str) -> bool:
        return name in self.data

    def raw(self, name: str, default=_REQUIRED):
        self.used.add(name)
        if name not in self.data:
            if default is _REQUIRED:
                raise self.missing(name)
            return default
        return self.data[name]

    def error(self, name: str, message: str) -> StudyError:
        return StudyError(f"{self.key(name)}: {message}")

    def missing(self, name: str, message: str = "missing (required)") -> StudyError:
        """The error for a required key that is absent, pointing at a likely misspelling."""
        others = [k for k in self.data if k not in self.used and k != name]
        near = difflib.get_close_matches(name, others, n=1, cutoff=0.75)
        if near:
            message += f"; is '{near[0]}' a misspelling of '{name}'?"
        return self.error(name, message)

    # typed getters -------------------------------------------------------------------------
    def str(self, name, default=_REQUIRED, choices=None, aliases=None):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        if not isinstance(value, str):
            raise self.error(name, f"expected a string, got {_describe(value)}")
        if aliases:
            value = aliases.get(value.lower(), aliases.get(value, value))
        if choices is not None and value not in choices:
            raise self.error(name, f"unknown value {_describe(value)} (expected one of: "
                                   f"{', '.join(choices)})")
        return value

    def float(self, name, default=_REQUIRED, *, min=None, max=None, positive=False):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        return check_float(value, self.key(name), min=min, max=max, positive=positive)

    def int(self, name, default=_REQUIRED, *, min=None, max=None):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(name, f"expected an integer, got {_describe(value)}")
        if min is not None and value < min:
            raise self.error(name, f"must be >= {min}, got {value}")
        if max is not None and value > max:
            raise self.error(name, f"must be <= {max:g}, got {value:g}")
        return value

    def bool(self, name, default=_REQUIRED):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {_describe(value)}")
        return value

    def str_list(self, name, default=_REQUIRED):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(name, f"expected a list of strings, got {_describe(value)}")
        return list(value)

    def float_list(self, name, default=_REQUIRED, length=None):
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        return check_float_list(value, self.key(name), length)

    def direction(self, name, default=_REQUIRED):
        """A vector of 3 numbers, normalized; the zero vector is refused."""
        d = self.float_list(name, default, length=3)
        if d is None:
            return None
        norm = sum(x * x for x in d) ** 0.5
        if norm == 0:
            raise self.error(name, "must not be the zero vector")
        return tuple(x / norm for x in d)

    def table(self, name, default=_REQUIRED) -> "Table | None":
        value = self.raw(name, default)
        if value is default and default is not _REQUIRED:
            return value
        return Table(value, self.key(name))

    def tables(self, name) -> list["Table"]:
        """An array of tables ``[[name]]``; missing means empty."""
        value = self.raw(name, [])
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list):
            raise self.error(name, f"expected an array of tables [[{name}]], got {_describe(value)}")
        where = self.key(name)
        return [Table(v, f"{where}[{i + 1}]") for i, v in enumerate(value)]

    def done(self):
        unknown = [k for k in self.data if k not in self.used]
        if unknown:
            raise StudyError(f"{self.where + ': ' if self.where else ''}unknown key "
                             f"'{unknown[0]}'" + (f" (and {len(unknown) - 1} more)"
                                                  if len(unknown) > 1 else ""))


def check_float(value: Any, where: str, *, min=None, max=None, positive=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StudyError(f"{where}: expected a number, got {_describe(value)}")
    try:
        value = float(value)
    except OverflowError:
        raise StudyError(f"{where}: the integer is too large for a number of fem "
                         f"({len(str(abs(value)))} digits; at most about 1.8e308)") from None
    if not math.isfinite(value):
        raise StudyError(f"{where}: must be finite, got {value}")
    if positive and value <= 0:
        raise StudyError(f"{where}: must be > 0, got {value:g}")
    if min is not None and (value < min or (min == 0 and math.copysign(1.0, value) < 0)):
        # -0.0 carries a minus sign the user wrote: a non-negative quantity refuses it too
        raise StudyError(f"{where}: must be >= {min:g}, got {value:g}")
    if max is not None and value > max:
        raise StudyError(f"{where}: must be <= {max:g}, got {value:g}")
    return value


def check_float_list(value: Any, where: str, length=None) -> list[float]:
    if not isinstance(value, list):
        raise StudyError(f"{where}: expected a list of numbers, got {_describe(value)}")
    if length is not None and len(value) not in (length if isinstance(length, tuple) else (length,)):
        expected = " or ".join(str(n) for n in (length if isinstance(length, tuple) else (length,)))
        raise StudyError(f"{where}: expected {expected} numbers, got {len(value)}")
    return [check_float(v, f"{where}[{i + 1}]") for i, v in enumerate(value)]
