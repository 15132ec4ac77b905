"""``fem post series``: columns of an analysis as CSV, streamed block by block.

A 1e7-row series is read and written in blocks of ``BLOCK_ROWS`` rows, so that memory stays
that of one block plus the time axis, whatever the length of the run.
"""

from __future__ import annotations

import numpy as np

from postpro.jobs import common
from postpro import layout
from postpro.results import BLOCK_ROWS, HarmonicAnalysis, RandomAnalysis

FORCES = common.FORCES

DEFAULT_DIGITS = 12


def add_parser(subparsers):
    p = subparsers.add_parser(
        "series", help="time series of nodes/components/fields as CSV",
        description="Write the time (or frequency) and one column per field, node and "
                    "component as CSV, to stdout or --output.")
    common.add_results(p)
    common.add_analysis(p)
    common.add_columns(p)
    common.add_window(p)
    common.add_elements(p)
    p.add_argument("--output", "-o", metavar="FILE", help="CSV file (default: stdout)")
    p.add_argument("--digits", type=common.positive_int, default=DEFAULT_DIGITS,
                   help=f"significant digits of the values (default {DEFAULT_DIGITS}; 17 "
                        "reproduces the stored doubles exactly)")
    p.set_defaults(run=run)


def run(args) -> int:
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis,
                                           ("transient", "harmonic", "random"),
                                           args.allow_incomplete)
        fields, dofs, named = common.resolve_columns(results, analysis, args)
        with common.text_output(args.output) as stream:
            write_series(stream, analysis, fields, dofs, args.start, args.end, args.digits,
                         named=named)
    return common.EXIT_OK


def headers(analysis, fields, dofs) -> list[str]:
    """Column titles with units: ``time [s]``, ``N3 DX displacement [m]``, ..."""
    if isinstance(analysis, RandomAnalysis):
        base = {"absolute_acceleration": "acceleration"}
        return ["frequency [Hz]"] + [
            f"{node} {component} {field} PSD "
            f"[{layout.psd_unit(common.unit(base.get(field, field), [component]))}]"
            for field in fields for node, component in dofs]
    if isinstance(analysis, HarmonicAnalysis):
        titles = ["frequency [Hz]"]
        for field in fields:
            for node, component in dofs:
                titles += [f"{node} {component} {field} amplitude "
                           f"[{common.unit(field, [component])}]",
                           f"{node} {component} {field} phase [deg]"]
        return titles
    return ["time [s]"] + [f"{node} {component} {field} [{common.unit(field, [component])}]"
                           for field in fields for node, component in dofs]


def write_series(stream, analysis, fields, dofs, start=None, end=None,
                 digits: int = DEFAULT_DIGITS, rows: int = BLOCK_ROWS, named=()) -> int:
    """Write the CSV of some columns of an analysis over a window.

    Parameters
    ----------
    stream : text stream
    analysis : TransientAnalysis, HarmonicAnalysis or RandomAnalysis
    fields : list of str
    dofs : list of (node, component)
    start, end : float or None
        Window in s (Hz for a sweep), bounds included.
    digits : int
        Significant digits of every number written.
    rows : int
        Rows per block read and written.

    Returns
    -------
    int
        Number of data rows written.

    Raises
    ------
    PostproError
        The window holds no archived instant.
    """
    harmonic = isinstance(analysis, HarmonicAnalysis)
    i0, i1 = common.window(analysis, start, end)
    titles = headers(analysis, fields, dofs)
    for quantity, name, component in named:
        unit = "N.m" if component.startswith("M") else "N"
        if isinstance(analysis, RandomAnalysis):
            titles.append(f"{name} {component} {quantity} PSD [{layout.psd_unit(unit)}]")
            continue
        titles += ([f"{name} {component} {quantity} amplitude [{unit}]",
                    f"{name} {component} {quantity} phase [deg]"] if harmonic else
                   [f"{name} {component} {quantity} [{unit}]"])
    groups = {}
    for quantity, name, component in named:
        groups.setdefault(quantity, []).append((name, component))
    # no row read yet: the datasets' shapes are checked before a line is written
    for field in fields:
        analysis.read_rows(field, dofs, i0, i0)
    for quantity, pairs in groups.items():
        analysis.read_forces(quantity, pairs, i0, i0)
    stream.write(",".join(titles) + "\n")
    width = 1 + (len(fields) * len(dofs) + len(named)) * (2 if harmonic else 1)
    line = ",".join([f"%.{digits}g"] * width) + "\n"
    written = 0
    for first in range(i0, i1, rows):
        last = min(first + rows, i1)
        parts = [analysis.read_rows(field, dofs, first, last) for field in fields]
        parts += [analysis.read_forces(quantity, pairs, first, last)
                  for quantity, pairs in groups.items()]
        count = min(len(axis) for axis, _ in parts)  # fields of an unfinished run may differ
        columns = [parts[0][0][:count]]
        for _, values in parts:
            values = values[:count]
            if harmonic:
                pairs = np.stack([np.abs(values), np.degrees(np.angle(values))], axis=2)
                columns.append(pairs.reshape(count, -1))
            else:
                columns.append(values)
        block = np.column_stack(columns)
        # one C-level formatting call per block: far faster than a row loop or savetxt
        stream.write((line * count) % tuple(block.ravel().tolist()))
        written += count
        if count < last - first:
            break
    return written
