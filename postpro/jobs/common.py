"""What the subcommands share: options, choice of analyses and columns, output files, tables."""

from __future__ import annotations

import argparse
import math

import csv
import sys
from contextlib import contextmanager
from pathlib import Path

import postpro
from postpro import layout
from postpro.errors import PostproError
from postpro.results import Analysis, Results

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def add_results(parser):
    parser.add_argument("results", help="results file written by fem run (HDF5)")
    parser.add_argument("--allow-incomplete", action="store_true",
                        help="read what a failed or unfinished analysis archived")


def add_analysis(parser, several: bool = False):
    what = "analysis name; repeat to overlay several" if several else "analysis name"
    parser.add_argument("--analysis", "-a", action="append", default=[], metavar="A",
                        help=f"{what} (default: the only one of a suitable kind)")


def add_columns(parser, fields: bool = True):
    parser.add_argument("--node", "-n", action="append", default=[], metavar="N",
                        help="node name; repeatable (default: every node)")
    parser.add_argument("--component", "-c", action="append", default=[], metavar="C",
                        help="component (DX, DY, ...); repeatable (default: every component "
                             "of each node)")
    if fields:
        parser.add_argument("--field", "-f", action="append", default=[], metavar="F",
                            help="displacement, velocity or acceleration (series and plot: "
                                 "also element_force, reaction); repeatable "
                                 "(default: displacement)")


#: the archived forces (element forces, reactions), whose columns are (name, component)
FORCES = ("element_force", "reaction")
FORCE_COMPONENTS = {"element_force": ("N", "VY", "VZ", "MT", "MFY", "MFZ"),
                    "reaction": ("FX", "FY", "FZ", "MX", "MY", "MZ")}


def add_elements(parser):
    parser.add_argument("--element", "-e", action="append", default=[], metavar="CELL",
                        help="with --field element_force: the elements (cells) whose forces "
                             "to take; repeatable (default: every element)")


def resolve_columns(results, analysis, args):
    """The columns asked for with --field, --node, --component and --element.

    Returns
    -------
    fields : nodal fields (displacement when no field at all is asked for)
    dofs : their (node, component) columns
    named : (quantity, name, component) of the element forces (name: a cell) and reactions
        (name: a node); --component filters each quantity by the components that are its own
    """
    forces = [f for f in args.field if f in FORCES]
    if getattr(args, "element", None) and "element_force" not in forces:
        raise PostproError("--element: give --field element_force with it")
    if forces and analysis.kind not in ("transient", "harmonic", "random"):
        raise PostproError(f"{', '.join(forces)}: archived by transient, harmonic and random "
                           f"analyses only")
    nodal = [f for f in args.field if f not in FORCES]
    fields = resolve_fields(analysis, nodal) if nodal or not forces else []
    dofs = resolve_dofs(results, args.node, args.component) if fields else []
    named = []
    for quantity in forces:
        names = args.element if quantity == "element_force" else args.node
        own = [c for c in args.component if c in FORCE_COMPONENTS[quantity]]
        named += [(quantity, name, component) for name, component in
                  analysis.force_pairs(quantity, names, own)]
    return fields, dofs, named


def add_window(parser, unit: str = "s"):
    parser.add_argument("--start", type=finite_float, metavar="T",
                        help=f"first instant of the window in {unit} (default: the first)")
    parser.add_argument("--end", type=finite_float, metavar="T",
                        help=f"last instant of the window in {unit} (default: the last)")


def finite_float(text: str) -> float:
    """argparse type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def open_results(args) -> Results:
    """The results file named on the command line (errors name the file)."""
    return postpro.open(args.results, allow_incomplete=args.allow_incomplete)


def readable(analysis: Analysis, allow_incomplete: bool, path: str) -> Analysis:
    """The analysis itself, or a one-line error if it did not complete and that is not allowed."""
    if analysis.status == layout.STATUS_COMPLETE or allow_incomplete:
        return analysis
    detail = f": {analysis.message}" if analysis.message else ""
    if analysis.status == layout.STATUS_FAILED:
        story = f"failed{detail}"
    else:
        story = f"did not finish (status '{analysis.status}': still running, or killed){detail}"
    raise PostproError(f"analysis '{analysis.name}' in '{path}' {story}; "
                       "--allow-incomplete reads what it archived")


def pick_analyses(results: Results, names, kinds: tuple[str, ...], allow_incomplete: bool,
                  several: bool = False) -> list[Analysis]:
    """The analyses named, or the only one of the file whose kind is among ``kinds``.

    Parameters
    ----------
    names : list of str
        Analysis names from ``--analysis`` (empty for the default).
    kinds : tuple of str
        Kinds the subcommand can use (``transient``, ``harmonic``, ``modes``, ...).
    several : bool
        Whether more than one name may be given.

    Raises
    ------
    PostproError
        Unknown name, an analysis of another kind, no analysis or several of the kind
        without a name, an analysis that failed or is still running.
    """
    if len(names) > 1 and not several:
        raise PostproError(f"--analysis given {len(names)} times; this subcommand takes one")
    if not names:
        fitting = [name for name in results.analyses
                   if results.analysis(name, allow_incomplete=True).kind in kinds]
        if len(fitting) != 1:
            which = " or ".join(kinds) if len(kinds) < 3 else \
                f"{', '.join(kinds[:-1])} or {kinds[-1]}"
            if not fitting:
                raise PostproError(f"'{results.path}' holds no {which} analysis (analyses: "
                                   f"{', '.join(results.analyses) or 'none'})")
            raise PostproError(f"'{results.path}' holds {len(fitting)} {which} analyses; "
                               f"name one with --analysis: {', '.join(fitting)}")
        names = fitting
    chosen = []
    for name in names:
        analysis = results.analysis(name, allow_incomplete=allow_incomplete)
        if analysis.kind not in kinds:
            raise PostproError(f"analysis '{name}' is of kind '{analysis.kind}'; this needs "
                               f"{' or '.join(kinds)}")
        chosen.append(readable(analysis, allow_incomplete, results.path))
    return chosen


def window(analysis, start=None, end=None) -> tuple[int, int]:
    """Row range ``[i0, i1)`` of the instants of ``analysis`` in ``[start, end]``, not empty.

    Raises
    ------
    PostproError
        No archived instant (or frequency) lies in the window.
    """
    i0, i1 = analysis.window(start, end)
    if i1 <= i0:
        sweep = hasattr(analysis, "frequency")
        axis, unit = (analysis.frequency, "Hz") if sweep else (analysis.time, "s")
        span = f"{axis[0]:g} .. {axis[-1]:g} {unit}" if len(axis) else "nothing"
        bounds = ", ".join("open" if b is None else f"{b:g}" for b in (start, end))
        raise PostproError(f"analysis '{analysis.name}': no archived instant within the window "
                           f"[{bounds}] {unit} (archived: {span})")
    return i0, i1


def resolve_dofs(results: Results, nodes, components) -> list[tuple[str, str]]:
    """The (node, component) columns asked for with ``--node`` and ``--component``.

    Equal counts pair them in order (N1 DX, N2 DY); one given once is combined with each of
    the other (N3 with DX, DY); a node without component takes every component it carries,
    a component without node every node that carries it, and nothing at all means every dof.

    Raises
    ------
    PostproError
        Counts that neither match nor include a single value; an unknown node, or a
        component the node does not carry.
    """
    nodes, components = list(nodes), list(components)
    per_node = {str(name): [] for name in results.node_names}
    for node, component in zip(results.dof_node, results.dof_component):
        per_node[str(results.node_names[node])].append(str(component))
    if not nodes and not components:
        pairs = [(n, c) for n, cs in per_node.items() for c in cs]
    elif not components:
        pairs = []
        for node in nodes:
            if node not in per_node:
                results.dof(node, "DX")  # raises the reader's message for an unknown node
            pairs += [(node, c) for c in per_node[node]]
    elif not nodes:
        for component in components:
            if not any(component in cs for cs in per_node.values()):
                known = sorted({c for cs in per_node.values() for c in cs})
                raise PostproError(f"no node of '{results.path}' carries component "
                                   f"'{component}' (components: {', '.join(known)})")
        pairs = [(n, c) for n, cs in per_node.items() for c in components if c in cs]
    elif len(nodes) == len(components):
        pairs = list(zip(nodes, components))
    elif len(nodes) == 1:
        pairs = [(nodes[0], c) for c in components]
    elif len(components) == 1:
        pairs = [(n, components[0]) for n in nodes]
    else:
        raise PostproError(f"--node given {len(nodes)} times and --component {len(components)} "
                           "times: give them as many times each (pairs), or one of them once")
    for node, component in pairs:
        results.dof(node, component)  # an unknown pair fails here, with the reader's message
    return pairs


def resolve_fields(analysis, fields) -> list[str]:
    """Fields asked for (default displacement), each checked against what was archived."""
    fields = list(fields) or ["displacement"]
    known = layout.RANDOM_FIELDS if analysis.kind == "random" else layout.NODAL_FIELDS
    for field in fields:
        if field not in known:
            raise PostproError(f"unknown field '{field}' (known: {', '.join(known)})")
        if field not in analysis.fields:
            raise PostproError(f"analysis '{analysis.name}' did not archive '{field}' "
                               f"(archived: {', '.join(analysis.fields) or 'none'})")
    return fields


def unit(quantity: str, components=()) -> str:
    """The unit of a quantity along some components: "m", "rad", or "m or rad" when they
    differ."""
    units = list(dict.fromkeys(layout.unit_of(quantity, c) for c in components)) or \
        [layout.unit_of(quantity)]
    return " or ".join(units)


@contextmanager
def text_output(path):
    """A text stream on ``path``, or stdout when ``path`` is None; write errors are one line."""
    if path is None:
        yield sys.stdout
        return
    path = Path(path)
    try:
        stream = path.open("w", newline="")
    except OSError as exc:
        raise PostproError(f"cannot write '{path}': {exc.strerror or exc}") from exc
    with stream:
        yield stream


def checked_output(path, suffixes: tuple[str, ...]) -> Path:
    """An output file name whose suffix is one of ``suffixes`` and whose folder exists."""
    path = Path(path)
    if path.suffix.lower() not in suffixes:
        raise PostproError(f"output '{path}': unsupported suffix '{path.suffix}' (use "
                           f"{', '.join(suffixes)})")
    if not path.parent.is_dir():
        raise PostproError(f"output '{path}': folder '{path.parent}' does not exist")
    return path


def format_table(headers, rows, right=None) -> str:
    """A fixed-width table: header line, dashes, one line per row (cells are strings)."""
    right = set(range(1, len(headers))) if right is None else set(right)
    cells = [list(headers)] + [list(row) for row in rows]
    widths = [max(len(line[c]) for line in cells) for c in range(len(headers))]
    lines = []
    for k, line in enumerate(cells):
        parts = [cell.rjust(w) if c in right else cell.ljust(w)
                 for c, (cell, w) in enumerate(zip(line, widths))]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_csv(stream, headers, rows):
    """A header line and rows of already formatted cells, as CSV."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
