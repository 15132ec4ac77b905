"""The table of a sweep: ``sweep.csv`` and ``sweep.h5``, one row per variant.

Columns: ``variant``, one per parameter (its PATH), ``status``, ``message``, ``wall_time``,
``checks_failed``, then the outcome columns (checks, link statistics, max |u|) in the order
they first appear going down the variants.

CSV: a header line, then one line per variant; numbers as Python writes them back exactly
(``repr``: up to 17 significant digits), an empty cell where a variant has no value (a
variant that did not complete has no outcome), values that are lists as JSON.

HDF5: the root attribute ``columns`` lists the columns in order; the group ``table`` holds
one dataset per column, of one row per variant: ``variant`` as int64, a column whose values
are all numbers (or empty) as float64 with NaN for an empty cell, any other as UTF-8
strings. A dataset is named by its column, a ``/`` in it written ``|`` (HDF5 names cannot
hold it); each dataset's attribute ``column`` holds the column's own name.
"""

from __future__ import annotations

import csv
import json
import math
import numbers
import os
from pathlib import Path

import numpy as np

FIXED_AFTER = ("status", "message", "wall_time", "checks_failed")


def columns_of(rows: list[dict], paths) -> list[str]:
    """The columns of the table of ``rows`` (in variant order) for the parameters ``paths``."""
    columns = ["variant", *paths, *FIXED_AFTER]
    known = set(columns)
    for row in rows:
        for key in row:
            if key not in known:
                known.add(key)
                columns.append(key)
    return columns


def cell(value) -> str:
    """One CSV cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _replace(path: Path, write):
    """Write to ``path`` through a temporary file renamed onto it: a reader never sees half
    a table."""
    partial = path.with_name(path.name + ".partial")
    write(partial)
    os.replace(partial, path)


def write_csv(path: Path, rows: list[dict], columns: list[str]):
    def write(target):
        with open(target, "w", newline="", encoding="utf-8") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                writer.writerow([cell(row.get(c)) for c in columns])

    _replace(path, write)


def _numeric(values) -> bool:
    return all(v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool))
               for v in values)


def write_h5(path: Path, rows: list[dict], columns: list[str]):
    import h5py

    def write(target):
        with h5py.File(target, "w") as f:
            f.attrs["columns"] = np.array(columns, dtype=h5py.string_dtype())
            group = f.create_group("table")
            for column in columns:
                values = [row.get(column) for row in rows]
                if column == "variant":
                    data = np.array(values, dtype=np.int64)
                elif _numeric(values):
                    data = np.array([math.nan if v is None else float(v) for v in values],
                                    dtype=np.float64)
                else:
                    data = np.array([cell(v) for v in values], dtype=h5py.string_dtype())
                dataset = group.create_dataset(column.replace("/", "|"), data=data)
                dataset.attrs["column"] = column

    _replace(path, write)


def read_csv(path: Path) -> list[dict]:
    """The rows of a ``sweep.csv`` as dicts of strings ({} for a missing or unreadable
    file)."""
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            return list(csv.DictReader(stream))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
