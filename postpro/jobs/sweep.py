"""``fem post sweep``: an outcome of a sweep against one of its parameters.

Reads the table ``DIR/sweep.csv`` written by ``fem sweep`` (docs/sweeps.md). The parameters
are the columns between ``variant`` and ``status``. Rows that share the values of the other
parameters form one series (one curve of the figure: for an incremental dynamic analysis of
records x scale factors, ``--x`` the scale factor gives one curve per record).
"""

from __future__ import annotations

import csv
import difflib
import math
from pathlib import Path

from postpro.errors import PostproError
from postpro.jobs import common

TABLE = "sweep.csv"
SUFFIXES = (".png", ".svg", ".pdf")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "sweep", help="an outcome column of a sweep's table against one of its parameters",
        description="Print (or plot, or write as CSV) one column of DIR/sweep.csv against a "
                    "parameter, one series per combination of the other parameters.")
    p.add_argument("folder", metavar="DIR", help="sweep folder written by fem sweep")
    p.add_argument("--x", required=True, metavar="PATH", help="the parameter on the x axis")
    p.add_argument("--y", required=True, metavar="COLUMN",
                   help="the outcome column (a check, a link statistic, a max |u|, "
                        "wall_time, ...)")
    p.add_argument("--plot", metavar="FILE", help="also draw a figure (.png, .svg, .pdf)")
    p.add_argument("--csv", metavar="FILE", help="also write the columns printed as CSV")
    p.set_defaults(run=run)


def read_table(folder) -> tuple[list[str], list[dict]]:
    """The columns and rows (dicts of strings) of ``folder/sweep.csv``."""
    path = Path(folder) / TABLE
    if not Path(folder).is_dir():
        raise PostproError(f"sweep folder '{folder}' does not exist or is not a folder")
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            reader = csv.DictReader(stream)
            rows = list(reader)
            columns = list(reader.fieldnames or ())
    except FileNotFoundError:
        raise PostproError(f"'{folder}' holds no {TABLE} (is it a folder of fem sweep?)") \
            from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PostproError(f"cannot read '{path}': {exc}") from None
    if columns[:1] != ["variant"] or "status" not in columns:
        raise PostproError(f"'{path}' is not the table of a sweep (no 'variant' and "
                           f"'status' columns)")
    return columns, rows


def parameters(columns: list[str]) -> list[str]:
    return columns[1:columns.index("status")]


def _column(name: str, columns, option: str, among=None) -> str:
    among = columns if among is None else among
    if name in among:
        return name
    near = difflib.get_close_matches(name, among, n=1, cutoff=0.6)
    maybe = f" (did you mean '{near[0]}'?)" if near else ""
    what = "parameter" if option == "--x" else "column"
    listing = ", ".join(among if len(among) <= 12 else list(among[:12]) + ["..."])
    raise PostproError(f"{option}: no {what} '{name}'{maybe} (the sweep's {what}s: {listing})")


def _number(text: str):
    try:
        value = float(text)
    except ValueError:
        return None
    return value


def run(args) -> int:
    columns, rows = read_table(args.folder)
    params = parameters(columns)
    x = _column(args.x, columns, "--x", params)
    y = _column(args.y, columns, "--y")
    others = [p for p in params if p != x]
    headers = [*others, x, y, "status"]
    cells = [[row[c] or "-" for c in headers] for row in rows]
    print(common.format_table(headers, cells, right=range(len(others), len(headers) - 1)))
    if args.csv:
        with common.text_output(args.csv) as stream:
            common.write_csv(stream, headers, [[row[c] for c in headers] for row in rows])
    if args.plot:
        output = common.checked_output(args.plot, SUFFIXES)
        figure = _draw(rows, x, y, others, args.folder)
        try:
            figure.savefig(output)
        except OSError as exc:
            raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
        print(f"wrote {output}")
    return common.EXIT_OK


def _draw(rows, x: str, y: str, others: list[str], folder):
    from matplotlib.figure import Figure

    series: dict[tuple, list] = {}
    for row in rows:
        value = _number(row[y]) if row[y] else None
        if value is None or math.isnan(value):
            continue
        key = tuple(row[p] for p in others)
        series.setdefault(key, []).append((row[x], value))
    if not series:
        raise PostproError(f"--y {y}: no variant has a number in this column")
    numeric = all(_number(px) is not None for points in series.values() for px, _ in points)
    figure = Figure(figsize=(8, 5), dpi=100, layout="constrained")
    axes = figure.subplots()
    for key, points in series.items():
        if numeric:
            points = sorted((float(px), py) for px, py in points)
        label = ", ".join(f"{p}={v}" for p, v in zip(others, key)) or None
        axes.plot([p for p, _ in points], [v for _, v in points], marker="o", label=label)
    axes.set_xlabel(x)
    axes.set_ylabel(y)
    axes.grid(True, alpha=0.3)
    if others:
        axes.legend(fontsize="small")
    figure.suptitle(f"sweep {Path(folder).resolve().name}: {y}")
    return figure
