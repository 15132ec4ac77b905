"""Write a study's tables as TOML text that ``tomllib`` reads back to the same tables.

Tables of tables become ``[a.b]`` headers, lists of tables ``[[a]]`` blocks, anything else an
inline value (lists, inline tables, strings, numbers, booleans, dates).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def to_toml(data: dict) -> str:
    """The TOML text of a table (a dict of str keys, as ``tomllib`` returns)."""
    lines: list[str] = []
    _table(lines, (), data)
    return "\n".join(lines).strip("\n") + "\n"


def _is_blocks(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _table(lines: list[str], prefix: tuple[str, ...], table: dict):
    """Inline keys first, then sub-tables, then arrays of tables, so that each key lands in
    the table it belongs to."""
    for key, value in table.items():
        if not isinstance(value, dict) and not _is_blocks(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            path = prefix + (key,)
            lines += ["", f"[{'.'.join(_key(k) for k in path)}]"]
            _table(lines, path, value)
    for key, value in table.items():
        if _is_blocks(value):
            path = prefix + (key,)
            for block in value:
                lines += ["", f"[[{'.'.join(_key(k) for k in path)}]]"]
                _table(lines, path, block)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes (\", \\, \n, \t, \uXXXX for control characters) are TOML's too; DEL is
    # the one character TOML forbids that JSON leaves as it is
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"{type(value).__name__} is not a TOML value")
