"""``fem post spectrum``: the response spectrum (SD, PSV, PSA) of a node's acceleration over
the instants an analysis archived (under a base acceleration its absolute acceleration: the
floor spectrum), of a function of the study (a ground record), or of a record file.

The spectrum is exact for the record taken as linear between its instants
(``postpro.spectra``); the peaks are taken at the record's instants.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from postpro import spectra
from postpro.errors import PostproError
from postpro.jobs import common

SUFFIXES = (".png", ".svg", ".pdf")
ACCELERATIONS = ("absolute_acceleration", "acceleration")
#: the most instants an expression function is sampled at (--step)
MAX_SAMPLES = 10**8


def add_parser(subparsers):
    p = subparsers.add_parser(
        "spectrum", help="response spectrum (SD, PSV, PSA) of a node's acceleration, a "
                         "function of the study or a record file",
        description="Response spectrum of an acceleration, exact for the acceleration taken "
                    "as linear between its instants: the peak relative displacement SD, "
                    "pseudo-velocity PSV = w SD, pseudo-acceleration PSA = w^2 SD and peak "
                    "absolute acceleration SA of linear oscillators from rest, taken at the "
                    "record's instants. The acceleration is a node's (--node, --component: "
                    "its absolute acceleration when the analysis archived it, the floor "
                    "spectrum), a function of the study (--function) or a record file "
                    "(--record).")
    p.add_argument("results", nargs="?", help="results file written by fem run (HDF5); not "
                                              "needed with --record")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="read what a failed or unfinished analysis archived")
    common.add_analysis(p)
    p.add_argument("--node", "-n", metavar="N", help="the node whose acceleration to take")
    p.add_argument("--component", "-c", metavar="C", help="its component (DX, DY, ...)")
    p.add_argument("--field", "-f", choices=ACCELERATIONS,
                   help="with --node: absolute_acceleration (default when archived) or "
                        "acceleration (relative to the support under a base acceleration)")
    p.add_argument("--function", metavar="NAME",
                   help="a function of the study instead of a node: a table or record "
                        "function gives its own instants, an expression needs --end and "
                        "--step")
    p.add_argument("--record", metavar="FILE",
                   help="a record file instead: two columns time (s), acceleration (m/s^2); "
                        "comma, semicolon or blank separated, optional header line")
    p.add_argument("--damping", "-d", default=str(spectra.DEFAULT_DAMPING), metavar="XI,...",
                   help="damping ratios, comma separated (default %(default)s)")
    p.add_argument("--frequencies", default=spectra.DEFAULT_FREQUENCIES, metavar="F0:F1:N",
                   help="oscillator frequencies in Hz: F0:F1:N, N log-spaced frequencies from "
                        "F0 to F1, or a list F1,F2,... (default %(default)s)")
    p.add_argument("--scale", type=common.finite_float, default=1.0,
                   help="factor on the acceleration (default 1; e.g. the value of the base "
                        "acceleration load that multiplies --function)")
    p.add_argument("--step", type=common.finite_float, metavar="DT",
                   help="with --function of an expression: its sampling step (s)")
    common.add_window(p)
    p.add_argument("--csv", metavar="FILE", help="write the table as CSV too (full precision)")
    p.add_argument("--plot", metavar="FILE", help="draw PSA and SD against frequency (.png, "
                                                  ".svg or .pdf)")
    p.set_defaults(run=run)


@dataclass
class Record:
    """An acceleration record and what it is, for the header."""
    time: np.ndarray
    acceleration: np.ndarray
    what: str
    jumps: bool = False


def run(args) -> int:
    sources = [name for name, given in (("--node", args.node is not None),
                                        ("--function", args.function is not None),
                                        ("--record", args.record is not None)) if given]
    if len(sources) != 1:
        raise PostproError("give one of --node (with --component), --function or --record"
                           + (f" (got {' and '.join(sources)})" if sources else ""))
    frequencies = spectra.parse_frequencies(args.frequencies)
    dampings = spectra.parse_dampings(args.damping)
    plot = common.checked_output(args.plot, SUFFIXES) if args.plot else None
    if args.record is not None:
        record = _from_file(args)
    else:
        if args.results is None:
            raise PostproError(f"{sources[0]}: give the results file")
        with common.open_results(args) as results:
            record = _from_node(results, args) if args.node is not None else \
                _from_function(results, args)
    if args.scale != 1.0:
        record.acceleration = record.acceleration * args.scale
        record.what += f", times {args.scale:g}"
    spectrum = spectra.response_spectrum(record.time, record.acceleration, frequencies,
                                         dampings, jumps=record.jumps)
    headers, rows = table(spectrum)
    t = record.time
    print(f"response spectrum of {record.what}: {len(t)} instants from {t[0]:.9g} to "
          f"{t[-1]:.9g} s, linear between them; oscillators from rest at {t[0]:.9g} s, "
          f"peaks at the record's instants")
    print(common.format_table(headers, [[f"{v:.6g}" for v in row] for row in rows]))
    if args.csv:
        with common.text_output(args.csv) as stream:
            common.write_csv(stream, headers, [[repr(float(v)) for v in row] for row in rows])
    if plot is not None:
        _plot(spectrum, record.what, plot)
        print(f"wrote {plot}")
    return common.EXIT_OK


def table(spectrum) -> tuple[list[str], list[list[float]]]:
    """Headers and rows: frequency, period, then SD, PSV, PSA and SA per damping ratio."""
    headers = ["frequency [Hz]", "period [s]"]
    columns = [spectrum.frequency, spectrum.period]
    for k, xi in enumerate(spectrum.damping):
        label = f"xi={xi:g}"
        headers += [f"SD {label} [m]", f"PSV {label} [m/s]", f"PSA {label} [m/s^2]",
                    f"SA {label} [m/s^2]"]
        columns += [spectrum.sd[:, k], spectrum.psv[:, k], spectrum.psa[:, k],
                    spectrum.sa[:, k]]
    return headers, [list(row) for row in zip(*columns)]


# -- the acceleration ----------------------------------------------------------------------

def _from_node(results, args) -> Record:
    if args.component is None:
        raise PostproError("--node: give --component too (DX, DY, ...)")
    if args.step is not None:
        raise PostproError("--step: the analysis' archived instants are the record's")
    (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                       args.allow_incomplete)
    results.dof(args.node, args.component)      # an unknown node or component fails here
    grounds = base_accelerations(results, analysis)
    field = args.field
    if field is None:
        if "absolute_acceleration" in analysis.fields:
            field = "absolute_acceleration"
        elif grounds:
            raise PostproError(f"analysis '{analysis.name}' applies the base acceleration "
                               f"{_names(grounds)} but did not archive absolute_acceleration: "
                               f"its acceleration is relative to the support (add "
                               f"absolute_acceleration to its fields, or give --field "
                               f"acceleration for the relative one)")
        else:
            field = "acceleration"
    common.resolve_fields(analysis, [field])
    t, a = analysis.series(field, args.node, args.component, args.start, args.end)
    if len(t) < 2:
        raise PostproError(f"analysis '{analysis.name}': {len(t)} archived instant(s) in the "
                           f"window; a response spectrum needs at least 2")
    if field == "absolute_acceleration":
        kind = ("the absolute acceleration (the floor spectrum)" if grounds else
                "the absolute acceleration (no base acceleration: the acceleration)")
    elif grounds:
        kind = "the acceleration relative to the support (not the floor spectrum)"
    else:
        kind = "the acceleration (absolute: no base acceleration)"
    return Record(np.asarray(t, float), np.asarray(a, float),
                  f"{args.node} {args.component}, {kind}, of analysis '{analysis.name}'",
                  jumps=True)


def base_accelerations(results, analysis) -> list[dict]:
    """The base acceleration loads the analysis applies, from the study stored in the file
    (name, value, function); empty when the study cannot be read."""
    try:
        data = tomllib.loads(results.study_source)
    except (tomllib.TOMLDecodeError, KeyError, PostproError, OSError):
        return []
    blocks = data.get("load", [])
    blocks = [blocks] if isinstance(blocks, dict) else blocks
    applied = analysis.parameters.get("loads")
    found = []
    for i, block in enumerate(blocks if isinstance(blocks, list) else []):
        if not isinstance(block, dict) or block.get("kind") != "base_acceleration":
            continue
        name = block.get("name", f"load{i + 1}")
        if applied is None or name in applied:
            found.append({"name": name, "value": block.get("value", 1.0),
                          "function": block.get("function")})
    return found


def _names(loads) -> str:
    return ", ".join(f"load '{g['name']}'" for g in loads)


def _from_function(results, args) -> Record:
    from fem.errors import FunctionError
    from fem.functions import build_function

    name = args.function
    try:
        data = tomllib.loads(results.study_source)
    except tomllib.TOMLDecodeError as exc:
        raise PostproError(f"'{results.path}': its stored study is not valid TOML ({exc})") \
            from None
    functions = data.get("functions", {})
    functions = functions if isinstance(functions, dict) else {}
    if name not in functions:
        raise PostproError(f"--function: no function '{name}' in the study of "
                           f"'{results.path}' (functions: {', '.join(functions) or 'none'})")
    spec = functions[name]
    folder = Path(results.path).resolve().parent if results.path else Path.cwd()
    try:
        fn = build_function(name, spec, folder)
    except FunctionError as exc:
        if isinstance(spec, dict) and "file" in spec:
            raise PostproError(f"--function: function '{name}' reads the file '{spec['file']}' "
                               f"relative to the study file, which the results file does not "
                               f"locate ({exc}); give that file with --record FILE") from None
        raise PostproError(f"--function: {exc}") from None
    try:
        t, a = _sample(fn, args)
    except FunctionError as exc:
        raise PostproError(f"--function: {exc}") from None
    users = [g for g in _all_base_accelerations(data) if g["function"] == name]
    what = f"function '{name}' of the study"
    if users:
        what += " (" + ", ".join(f"base acceleration load '{g['name']}' multiplies it by value "
                                 f"{g['value']:g}" for g in users) + ")"
    return Record(t, a, what)


def _all_base_accelerations(data) -> list[dict]:
    blocks = data.get("load", [])
    blocks = [blocks] if isinstance(blocks, dict) else blocks
    return [{"name": b.get("name", f"load{i + 1}"), "value": float(b.get("value", 1.0)),
             "function": b.get("function")}
            for i, b in enumerate(blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and b.get("kind") == "base_acceleration"]


def _sample(fn, args) -> tuple[np.ndarray, np.ndarray]:
    """The instants and values of a function: a table's own points within the window (and
    the window's ends), an expression every --step from --start (default 0) to --end."""
    start, end = args.start, args.end
    if start is not None and end is not None and end <= start:
        raise PostproError(f"--start {start:g} s must be before --end {end:g} s")
    knots = getattr(fn, "times", None)
    if knots is not None:
        if args.step is not None:
            raise PostproError(f"--step: function '{fn.name}' is a table: its own instants "
                               f"are the record's")
        lo = knots[0] if start is None else start
        hi = knots[-1] if end is None else end
        inner = knots[(knots > lo) & (knots < hi)]
        t = np.concatenate([[lo], inner, [hi]]) if hi > lo else np.array([lo])
        return t, np.asarray(fn(t), float)
    if end is None or args.step is None:
        raise PostproError(f"--function: '{fn.name}' is an expression: give --end and --step "
                           f"(s) to sample it")
    lo = 0.0 if start is None else start
    if not args.step > 0:
        raise PostproError(f"--step: {args.step:g} s must be > 0")
    count = math.floor((end - lo) / args.step * (1 + 1e-12)) + 1
    if count > MAX_SAMPLES:
        raise PostproError(f"--step: {count:.3g} instants from {lo:g} to {end:g} s, at most "
                           f"{MAX_SAMPLES:.0e}")
    t = lo + args.step * np.arange(count)
    if end - t[-1] > 1e-9 * args.step:
        t = np.append(t, end)
    return t, np.broadcast_to(np.asarray(fn(t), float), t.shape).copy()


def _from_file(args) -> Record:
    from fem.errors import FunctionError
    from fem.functions.table import Record as FileRecord

    if args.step is not None:
        raise PostproError("--step: a record gives its own instants")
    try:
        fn = FileRecord("record", args.record)
        t, a = _sample(fn, args)
    except FunctionError as exc:
        message = str(exc).replace("functions.record.file: ", "").replace("functions.record.", "")
        raise PostproError(f"--record: {message}") from None
    if len(t) < 2:
        raise PostproError(f"--record: {args.record}: {len(t)} instant(s); a response spectrum "
                           f"needs at least 2")
    return Record(t, a, f"the record {args.record}")


# -- figure -----------------------------------------------------------------------------------

def _plot(spectrum, what: str, path):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 7), dpi=100)
    figure.subplots_adjust(left=0.09, right=0.97, bottom=0.08, top=0.93, hspace=0.08)
    top, bottom = figure.subplots(2, 1, sharex=True)
    for k, xi in enumerate(spectrum.damping):
        top.plot(spectrum.frequency, spectrum.psa[:, k], label=f"xi = {xi:g}")
        bottom.plot(spectrum.frequency, spectrum.sd[:, k], label=f"xi = {xi:g}")
    top.set_ylabel("PSA [m/s^2]")
    bottom.set_ylabel("SD [m]")
    bottom.set_xlabel("frequency [Hz]")
    if np.all(spectrum.sd > 0):
        bottom.set_yscale("log")
    for axes in (top, bottom):
        axes.set_xscale("log")
        axes.grid(True, alpha=0.3)
        axes.legend()
    figure.suptitle(f"response spectrum of {what}", fontsize="medium")
    try:
        figure.savefig(path)
    except OSError as exc:
        raise PostproError(f"cannot write '{path}': {exc.strerror or exc}") from exc
