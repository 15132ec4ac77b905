"""``fem post compare A.h5 B.h5``: largest differences between two results files.

Analyses are matched by name, columns by node and component names, instants by value. The
relative difference of a column is its largest absolute difference divided by the largest
magnitude of that column in A (a pointwise ratio would blow up at every zero crossing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import postpro
from postpro import layout
from postpro.errors import PostproError
from postpro.jobs import common
from postpro.results import (BLOCK_ROWS, HarmonicAnalysis, ModalAnalysis, RandomAnalysis,
                             TransientAnalysis)

MODAL_ARRAYS = ("frequency", "damped_frequency", "damping_ratio", "generalized_mass",
                "generalized_stiffness", "effective_mass")
HEADERS = ("analysis", "quantity", "columns", "instants", "max abs diff", "max rel diff",
           "at", "note")


@dataclass(frozen=True)
class Difference:
    """Largest differences of one quantity of one analysis between files A and B.

    ``max_abs`` is in the unit of the quantity; ``max_rel`` is dimensionless; ``at`` names
    the column and instant (or mode) of ``max_abs``; ``note`` says how B was matched.
    """

    analysis: str
    quantity: str
    columns: int
    instants: int
    max_abs: float
    max_rel: float
    at: str
    note: str = ""


def add_parser(subparsers):
    p = subparsers.add_parser(
        "compare", help="largest differences between two results files",
        description="For every analysis and quantity present in both files, the largest "
                    "absolute and relative differences (relative to the peak magnitude of "
                    "each column in A). B is interpolated on A's instants when they differ.")
    p.add_argument("results", metavar="A", help="reference results file")
    p.add_argument("other", metavar="B", help="results file compared with A")
    p.add_argument("--analysis", "-a", action="append", default=[], metavar="A",
                   help="compare only this analysis; repeatable (default: all in both)")
    p.add_argument("--tolerance", type=float, metavar="X",
                   help="exit 1 when a relative difference exceeds X")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="compare what failed or unfinished analyses archived")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.tolerance is not None and not args.tolerance >= 0.0:
        raise PostproError(f"--tolerance must be >= 0, got {args.tolerance:g}")
    with postpro.open(args.results, allow_incomplete=args.allow_incomplete) as first, \
            postpro.open(args.other, allow_incomplete=args.allow_incomplete) as second:
        rows = compare(first, second, args.analysis, args.allow_incomplete)
    print(common.format_table(HEADERS, [_cells(row) for row in rows], right=(2, 3, 4, 5)))
    if args.tolerance is not None:
        worst = max((row.max_rel for row in rows), default=0.0)
        if worst > args.tolerance:
            print(f"largest relative difference {worst:.3g} exceeds the tolerance "
                  f"{args.tolerance:.3g}")
            return common.EXIT_FAILED
    return common.EXIT_OK


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3g}"


def _cells(row: Difference) -> list[str]:
    return [row.analysis, row.quantity, str(row.columns), str(row.instants),
            _number(row.max_abs), _number(row.max_rel), row.at or "-", row.note]


def compare(first, second, names=(), allow_incomplete: bool = False) -> list[Difference]:
    """Differences of every analysis and quantity present in both files.

    Parameters
    ----------
    first, second : Results
        Files A (reference) and B.
    names : sequence of str
        Analyses to compare (default: every analysis present in both).

    Returns
    -------
    list of Difference
        One per analysis and quantity compared; without ``names``, also one per analysis
        present in one file only (differences NaN, note "only in A" or "only in B").

    Raises
    ------
    PostproError
        A named analysis missing from either file, or no analysis in common.
    """
    common_names = [name for name in first.analyses if name in second.analyses]
    for name in names:
        for results in (first, second):
            if name not in results.analyses:
                raise PostproError(f"no analysis '{name}' in '{results.path}' (analyses: "
                                   f"{', '.join(results.analyses) or 'none'})")
    explicit = bool(names)
    names = list(names) or common_names
    if not names:
        raise PostproError(f"'{first.path}' and '{second.path}' have no analysis name in common")
    rows = []
    for name in names:
        a = common.readable(first.analysis(name, allow_incomplete=True), allow_incomplete,
                            first.path)
        b = common.readable(second.analysis(name, allow_incomplete=True), allow_incomplete,
                            second.path)
        if a.kind != b.kind:
            rows.append(Difference(name, "-", 0, 0, math.nan, math.nan, "",
                                   f"kinds differ: '{a.kind}' in A, '{b.kind}' in B"))
        elif isinstance(a, ModalAnalysis):
            rows += _modal(a, b)
        elif isinstance(a, (TransientAnalysis, HarmonicAnalysis, RandomAnalysis)):
            rows += _sampled(first, second, a, b)
    if not explicit:
        rows += [Difference(name, "-", 0, 0, math.nan, math.nan, "", "only in A")
                 for name in first.analyses if name not in second.analyses]
        rows += [Difference(name, "-", 0, 0, math.nan, math.nan, "", "only in B")
                 for name in second.analyses if name not in first.analyses]
    return rows


def _ratio(difference: float, scale: float) -> float:
    if scale == 0.0:
        return 0.0 if difference == 0.0 else math.inf
    return difference / scale


def _modal(a, b) -> list[Difference]:
    rows = []
    count = min(a.mode_count, b.mode_count)
    note = "" if a.mode_count == b.mode_count else \
        f"first {count} modes ({a.mode_count} in A, {b.mode_count} in B)"
    for quantity in MODAL_ARRAYS:
        if quantity not in a.arrays or quantity not in b.arrays:
            continue
        x, y = np.asarray(a[quantity])[:count], np.asarray(b[quantity])[:count]
        difference = np.abs(x - y).reshape(count, -1).max(axis=1)
        scale = np.abs(x).reshape(count, -1).max(axis=1)
        ratios = [_ratio(d, s) for d, s in zip(difference, scale)]
        peak = float(difference.max(initial=0.0))
        at = f"mode {int(np.argmax(difference)) + 1}" if peak > 0 else ""
        rows.append(Difference(a.name, quantity, x[0].size if count else 0, count, peak,
                               max(ratios, default=0.0), at, note))
    return rows


def _same_axis(x: np.ndarray, y: np.ndarray) -> bool:
    if len(x) != len(y):
        return False
    scale = max(1.0, float(np.max(np.abs(x)))) if len(x) else 1.0
    return bool(np.all(np.abs(x - y) <= 1e-9 * scale))


def _sampled(first, second, a, b) -> list[Difference]:
    spectral = isinstance(a, (HarmonicAnalysis, RandomAnalysis))
    axis_a = a.frequency if spectral else a.time
    axis_b = b.frequency if spectral else b.time
    unit = "Hz" if spectral else "s"
    rows = []
    same = _same_axis(axis_a, axis_b)
    if same:
        i0, i1, note = 0, len(axis_a), ""
    else:
        if not len(axis_a) or not len(axis_b):
            return [Difference(a.name, "-", 0, 0, math.nan, math.nan, "", "no instant archived")]
        i0 = int(np.searchsorted(axis_a, axis_b[0], "left"))
        i1 = int(np.searchsorted(axis_a, axis_b[-1], "right"))
        note = f"B interpolated on A's {i1 - i0} instants"
        if i1 - i0 < len(axis_a):
            note += f" in the common range [{axis_a[i0]:g}, {axis_a[i1 - 1]:g}] {unit}" \
                if i1 > i0 else " (no common range)"
    pairs = [(node, component) for node, component in
             zip(first.node_names[first.dof_node], first.dof_component)
             if node in second.node_names and _carries(second, node, component)]
    if not pairs:
        return [Difference(a.name, "-", 0, 0, math.nan, math.nan, "",
                           "no node and component in common")]
    for field in layout.NODAL_FIELDS:
        if field not in a.fields or field not in b.fields:
            continue
        rows.append(_field_difference(a, b, field, pairs, axis_a, axis_b, i0, i1, same, note,
                                      unit))
    if isinstance(a, TransientAnalysis):
        rows += _named_series(a, b, same, note)
    return rows


def _carries(results, node, component) -> bool:
    try:
        results.dof(str(node), str(component))
    except PostproError:
        return False
    return True


def _interpolate(x, xp, fp):
    """Columns of ``fp`` (k, c) at ``x``, linear in ``xp`` (complex values allowed)."""
    return np.column_stack([np.interp(x, xp, fp[:, j]) for j in range(fp.shape[1])]) \
        if fp.shape[1] else np.empty((len(x), 0))


def _field_difference(a, b, field, pairs, axis_a, axis_b, i0, i1, same, note, unit):
    pairs = [(str(n), str(c)) for n, c in pairs]
    largest = np.zeros(len(pairs))
    scale = np.zeros(len(pairs))
    where = np.zeros(len(pairs))
    for first in range(i0, i1, BLOCK_ROWS):
        last = min(first + BLOCK_ROWS, i1)
        t, x = a.read_rows(field, pairs, first, last)
        if same:
            _, y = b.read_rows(field, pairs, first, last)
        else:
            # rows of B around this block of A, one more each side for the interpolation
            j0 = max(int(np.searchsorted(axis_b, t[0], "right")) - 1, 0)
            j1 = min(int(np.searchsorted(axis_b, t[-1], "left")) + 1, len(axis_b))
            tb, yb = b.read_rows(field, pairs, j0, j1)
            y = _interpolate(t, tb, yb)
        count = min(len(x), len(y))
        difference = np.abs(x[:count] - y[:count])
        if not count:
            continue
        rows = np.argmax(difference, axis=0)
        peak = difference[rows, np.arange(len(pairs))]
        better = peak > largest
        largest = np.where(better, peak, largest)
        where = np.where(better, t[rows], where)
        scale = np.maximum(scale, np.abs(x[:count]).max(axis=0))
    ratios = [_ratio(d, s) for d, s in zip(largest, scale)]
    k = int(np.argmax(largest))
    at = f"{pairs[k][0]} {pairs[k][1]} at {where[k]:.6g} {unit}" if largest[k] > 0 else ""
    return Difference(a.name, field, len(pairs), max(i1 - i0, 0), float(largest[k]),
                      max(ratios), at, note)


def _named_series(a, b, same, note) -> list[Difference]:
    """Energy terms and link series present in both transient analyses (one column each)."""
    rows = []
    for label, series_a, series_b in _series_pairs(a, b):
        ta, xa = series_a
        tb, xb = series_b
        if same and len(ta) == len(tb):
            ya = xb
        else:
            ya = np.interp(ta, tb, xb)
            inside = (ta >= tb[0]) & (ta <= tb[-1]) if len(tb) else np.zeros(len(ta), bool)
            ta, xa, ya = ta[inside], xa[inside], ya[inside]
        difference = np.abs(np.asarray(xa, float) - np.asarray(ya, float))
        peak = float(difference.max(initial=0.0))
        k = int(np.argmax(difference)) if len(difference) else 0
        at = f"{ta[k]:.6g} s" if peak > 0 else ""
        rows.append(Difference(a.name, label, 1, len(ta), peak,
                               _ratio(peak, float(np.abs(xa).max(initial=0.0))), at, note))
    return rows


def _series_pairs(a, b):
    energy_a, energy_b = a.energy(), b.energy()
    for name in energy_a:
        if name != "time" and name in energy_b:
            yield (f"energy {name}", (energy_a["time"], energy_a[name]),
                   (energy_b["time"], energy_b[name]))
    for link in a.links:
        if link not in b.links:
            continue
        found_a, found_b = a.link(link), b.link(link)
        for name in a.link_series_names(link):
            if name in b.link_series_names(link):
                yield (f"link {link} {name}", (found_a["time"], found_a[name]),
                       (found_b["time"], found_b[name]))
