"""``fem post hysteresis``: the force-deformation loops of one link of a transient analysis,
cycle by cycle, with the energy each cycle dissipates.

A link whose law has a force-deformation loop names it in the attribute ``loop`` of its
group: ``[deformation series, force series]``. Definitions (over the window read):

* reversals: the local extrema of the deformation whose swings on both sides exceed a
  fraction (``--reversal``, default 1 %) of the deformation's range over the window, so
  that numerical ringing makes no cycle; the swing before the first one is measured from
  the first instant, and the first and last instants are never reversals (nothing says the
  motion turned there). A plateau's reversal is its first instant;
* full cycles: from one maximum to the next, or from one minimum to the next, whichever
  kind of reversal comes first; consecutive cycles share their end instants;
* loop area: oint F du over the cycle by the trapezoidal rule, the path closed from its last
  instant back to its first, in J: positive when the loop runs clockwise in the (u, F)
  plane, that is when the cycle takes energy. For a law that stores energy elastically it is
  the energy the cycle dissipates;
* dissipated: when the link archives the series ``dissipated`` (J, cumulated from the
  start), its increase from the start to the end of the cycle.

The series are read in blocks, three times (the deformation's range, its reversals, then
each cycle's ranges and area and the points drawn), so long runs do not load whole.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from postpro import layout
from postpro.errors import PostproError
from postpro.jobs import common, plot
from postpro.results import BLOCK_ROWS

LOOP, DISSIPATED = "loop", "dissipated"
DEFAULT_REVERSAL = 0.01
MAXIMUM, MINIMUM = "maximum", "minimum"
#: the figure draws each cycle from about this many buckets of rows (plot's decimation)...
BUCKETS_PER_CYCLE = 200
#: ...and from at most this many in all
MAX_BUCKETS = 100_000
#: cycles beyond which the figure tells them apart by a colour scale instead of a legend
LEGEND_CYCLES = 10


@dataclass(frozen=True)
class Reversal:
    """A reversal of the deformation: its row in the window, instant (s), value and kind
    ("maximum" or "minimum")."""

    row: int
    time: float
    value: float
    kind: str


@dataclass(frozen=True)
class Cycle:
    """A full cycle: number (from 1), first and last instants (s), the (min, max) of the
    deformation and of the force over it, its loop area (J) and the increase of the link's
    ``dissipated`` series over it (J; None when the link has no such series)."""

    number: int
    start: float
    end: float
    deformation: tuple[float, float]
    force: tuple[float, float]
    area: float
    dissipated: float | None


@dataclass(frozen=True)
class Loops:
    """The loops of one link over a window.

    ``series`` are the names of the deformation and force series, ``units`` their units
    ("" when unknown); ``threshold`` is the smallest swing counted as a reversal, in the
    deformation's unit (``fraction`` of its ``range``). ``pieces`` are the curve to draw, in
    time order: ``(cycle number, deformation, force)``, number 0 for the parts outside the
    full cycles (the whole record when there is none); consecutive pieces share their end
    point. They are the archived rows, decimated as ``fem post plot`` does for long runs,
    and are empty when the curve was not asked for.
    """

    analysis: str
    link: str
    series: tuple[str, str]
    units: tuple[str, str]
    instants: int
    span: tuple[float, float]
    range: tuple[float, float]
    fraction: float
    threshold: float
    reversals: tuple[Reversal, ...]
    cycles: tuple[Cycle, ...]
    pieces: tuple[tuple[int, np.ndarray, np.ndarray], ...]
    has_dissipated: bool

    @property
    def cycle_kind(self) -> str:
        """The kind of reversal the full cycles run between (that of the first reversal)."""
        return self.reversals[0].kind if self.reversals else MAXIMUM


def add_parser(subparsers):
    p = subparsers.add_parser(
        "hysteresis", help="force-deformation loops of a link, and the energy of each cycle",
        description="The force-deformation loops of one link of a transient analysis (a link "
                    "whose law names its loop: the 'loop' attribute of its group), split into "
                    "full cycles at the reversals of the deformation: per cycle its instants, "
                    "the ranges of deformation and force, the loop area (oint F du, J) and, "
                    "when the link archives 'dissipated', the energy it dissipated over the "
                    "cycle.")
    common.add_results(p)
    common.add_analysis(p)
    p.add_argument("--link", "-l", metavar="NAME",
                   help="link name (default: the only link of the analysis with a loop)")
    common.add_window(p)
    p.add_argument("--reversal", type=fraction, default=DEFAULT_REVERSAL, metavar="X",
                   help="smallest swing of the deformation that makes a reversal, as a "
                        "fraction of its range over the window (default %(default)s)")
    p.add_argument("--output", "-o", metavar="FIG",
                   help="figure of force against deformation, .png, .svg or .pdf")
    p.add_argument("--csv", metavar="FILE", help="write the cycles table as CSV")
    p.add_argument("--size", default=f"{plot.DEFAULT_SIZE[0]}x{plot.DEFAULT_SIZE[1]}",
                   metavar="WxH", help="figure size in pixels (default %(default)s)")
    p.add_argument("--dpi", type=common.positive_int, default=plot.DEFAULT_DPI,
                   help="dots per inch of PNG output and of text sizes (default %(default)s)")
    p.set_defaults(run=run)


def fraction(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    value = common.finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1, got {text}")
    return value


def run(args) -> int:
    size = plot.parse_size(args.size)
    output = common.checked_output(args.output, plot.SUFFIXES) if args.output else None
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                           args.allow_incomplete)
        name = args.link if args.link is not None else only_loop_link(analysis)
        loops = link_loops(analysis, name, args.start, args.end, args.reversal,
                           curve=output is not None, width=size[0])
        title = results.title or str(results.path)
    print(summary(loops))
    if loops.cycles:
        print(common.format_table(headers(loops), [_cells(c) for c in loops.cycles]
                                  + [_cells(total(loops))]))
    if args.csv:
        with common.text_output(args.csv) as stream:
            common.write_csv(stream, headers(loops), [_csv_cells(c) for c in loops.cycles])
        print(f"wrote {args.csv}")
    if output is not None:
        drawn = figure(loops, size, args.dpi, title)
        try:
            drawn.savefig(output, dpi=args.dpi)
        except OSError as exc:
            raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
        print(f"wrote {output}")
    if not loops.cycles:
        raise PostproError(no_cycle_story(loops))
    return common.EXIT_OK


# -- the links that have a loop -----------------------------------------------------------------

def loop_links(analysis) -> list[str]:
    """The links of the analysis whose group names a force-deformation loop."""
    return [name for name in analysis.links if LOOP in analysis.link_attributes(name)]


def only_loop_link(analysis) -> str:
    """The only link of the analysis with a loop (the default of --link)."""
    found = loop_links(analysis)
    if len(found) != 1:
        what = "no link" if not found else f"{len(found)} links"
        raise PostproError(f"analysis '{analysis.name}' has {what} with a force-deformation "
                           f"loop{': name one with --link: ' + ', '.join(found) if found else ''}"
                           f" (links: {', '.join(analysis.links) or 'none'})")
    return found[0]


def loop_series(analysis, name: str) -> tuple[str, str]:
    """The deformation and force series that the link's ``loop`` attribute names.

    Raises
    ------
    PostproError
        An unknown link (the message lists the links with a loop), a link without ``loop``,
        or a ``loop`` that does not name two series of the link.
    """
    if name not in analysis.links:
        raise PostproError(f"analysis '{analysis.name}' has no link '{name}' (links with a "
                           f"force-deformation loop: {', '.join(loop_links(analysis)) or 'none'})")
    loop = analysis.link_attributes(name).get(LOOP)
    if loop is None:
        raise PostproError(f"link '{name}' of analysis '{analysis.name}' has no "
                           f"force-deformation loop: only links whose law has one carry the "
                           f"attribute '{LOOP}' on their group (links with one here: "
                           f"{', '.join(loop_links(analysis)) or 'none'})")
    series = analysis.link_series_names(name)
    if (not isinstance(loop, list) or len(loop) != 2 or len(set(loop)) != 2
            or any(s not in series for s in loop)):
        raise PostproError(f"link '{name}' of analysis '{analysis.name}': its '{LOOP}' "
                           f"attribute {loop!r} does not name two of its series "
                           f"({', '.join(series) or 'none'}): the file is damaged")
    return loop[0], loop[1]


def _unit(stored: dict, name: str) -> str:
    """The unit stored with a series, else the one the results format gives the name, else ""."""
    unit = stored.get(name) or layout.unit_of(name)
    return "" if unit == "-" else unit


# -- reversals -----------------------------------------------------------------------------------

def _turning_rows(u: np.ndarray) -> np.ndarray:
    """Rows of a block where the deformation may turn: its ends, and where the sign of its
    step changes (strict extrema, and both ends of each plateau). Every local extremum of the
    whole record is among them, in each block, which is all the reversal filter needs."""
    if len(u) <= 2:
        return np.arange(len(u))
    step = np.sign(np.diff(u))
    inner = np.flatnonzero(step[1:] != step[:-1]) + 1
    return np.concatenate([[0], inner, [len(u) - 1]])


class _Reversals:
    """The reversals of a sequence fed in order: extrema whose swings into and out of them
    both exceed ``threshold`` (the swing into the first one from the first value)."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.found: list[tuple[int, float, str]] = []   # (row, value, kind)
        self.first = None
        self.direction = 0          # 0 until the first swing, then +1 rising, -1 falling
        self.high = self.low = self.candidate = None  # (value, row)

    def feed(self, rows, values):
        h = self.threshold
        for row, x in zip(rows, values):
            if self.first is None:
                self.first, self.high, self.low = x, (x, row), (x, row)
            elif self.direction == 0:
                if x > self.high[0]:
                    self.high = (x, row)
                if x < self.low[0]:
                    self.low = (x, row)
                if self.high[0] - x > h:
                    if self.high[0] - self.first > h:
                        self.found.append((self.high[1], self.high[0], MAXIMUM))
                    self.direction, self.candidate = -1, (x, row)
                elif x - self.low[0] > h:
                    if self.first - self.low[0] > h:
                        self.found.append((self.low[1], self.low[0], MINIMUM))
                    self.direction, self.candidate = 1, (x, row)
            elif self.direction < 0:
                if x < self.candidate[0]:
                    self.candidate = (x, row)
                elif x - self.candidate[0] > h:
                    self.found.append((self.candidate[1], self.candidate[0], MINIMUM))
                    self.direction, self.candidate = 1, (x, row)
            else:
                if x > self.candidate[0]:
                    self.candidate = (x, row)
                elif self.candidate[0] - x > h:
                    self.found.append((self.candidate[1], self.candidate[0], MAXIMUM))
                    self.direction, self.candidate = -1, (x, row)


# -- the loops -----------------------------------------------------------------------------------

def link_loops(analysis, name: str, start=None, end=None, reversal: float = DEFAULT_REVERSAL,
               rows: int = BLOCK_ROWS, curve: bool = True,
               width: int = plot.DEFAULT_SIZE[0]) -> Loops:
    """The reversals, full cycles and loop areas of one link of a transient analysis.

    Parameters
    ----------
    analysis : TransientAnalysis
    name : str
        Link name; its group must carry the attribute ``loop``.
    start, end : float or None
        Window in s, bounds included.
    reversal : float
        Smallest swing of the deformation that makes a reversal, as a fraction of its range
        over the window.
    rows : int
        Rows read per block.
    curve : bool
        Keep the points to draw (:attr:`Loops.pieces`).
    width : int
        Pixel width of the figure: the curve keeps at least this many buckets of rows.

    Raises
    ------
    PostproError
        An unknown link, a link without loop, an empty window, a non-finite value.
    """
    deformation, force = loop_series(analysis, name)
    common.window(analysis, start, end)   # an empty window: the shared message
    stored = analysis.link_series_units(name)
    has_dissipated = DISSIPATED in analysis.link_series_names(name)
    where = f"link '{name}' of analysis '{analysis.name}'"

    # 1. the deformation's range (and finite values throughout)
    low, high, count, first, last = math.inf, -math.inf, 0, None, None
    for block in analysis.link_blocks(name, start, end, rows=rows):
        t, u, f = (np.asarray(block[k], float) for k in ("time", deformation, force))
        if not len(t):
            continue
        bad = ~(np.isfinite(u) & np.isfinite(f))
        if bad.any():
            raise PostproError(f"{where}: '{deformation}' or '{force}' is not finite at "
                               f"t = {t[bad][0]:g} s")
        low, high = min(low, float(u.min())), max(high, float(u.max()))
        first = float(t[0]) if first is None else first
        last, count = float(t[-1]), count + len(t)
    if not count:
        raise PostproError(f"{where}: no archived instant in the window")

    # 2. the reversals
    threshold = reversal * (high - low)
    finder = _Reversals(threshold)
    offset = 0
    if threshold > 0:
        for block in analysis.link_blocks(name, start, end, rows=rows):
            u = np.asarray(block[deformation], float)
            chosen = _turning_rows(u)
            finder.feed((offset + chosen).tolist(), u[chosen].tolist())
            offset += len(u)
    marks = np.array([row for row, _, _ in finder.found], dtype=np.int64)
    kinds = [kind for _, _, kind in finder.found]
    # the full cycles run between the reversals of the first one's kind
    ends = np.array([k for k, kind in enumerate(kinds) if kind == kinds[0]], dtype=np.int64)
    cycles = max(len(ends) - 1, 0)

    # 3. per cycle: ranges, work and dissipated at its ends; the points of the curve
    scan = _Scan(marks, ends, has_dissipated)
    bucket = 0
    if curve:
        buckets = min(MAX_BUCKETS, max(width, BUCKETS_PER_CYCLE * (cycles + 1)))
        bucket = math.ceil(count / buckets) if count > plot.RAW_FACTOR * buckets else 1
    block_rows = rows if bucket <= 1 else bucket * max(1, rows // bucket)
    for block in analysis.link_blocks(name, start, end, rows=block_rows):
        scan.feed(block, deformation, force, bucket)
    reversals = tuple(Reversal(row, float(time), value, kind) for (row, value, kind), time
                      in zip(finder.found, scan.at["time"]))
    return Loops(
        analysis=analysis.name, link=name, series=(deformation, force),
        units=(_unit(stored, deformation), _unit(stored, force)), instants=count,
        span=(first, last), range=(low, high), fraction=reversal, threshold=threshold,
        reversals=reversals, cycles=tuple(scan.cycles()), pieces=scan.pieces(count),
        has_dissipated=has_dissipated)


class _Scan:
    """The third pass over the blocks: the work oint F du cumulated row by row, the values at
    the reversals, the ranges between the cycles' ends, the points kept for the figure.

    ``marks`` are the rows of the reversals, ``ends`` the indices among them of the cycles'
    ends."""

    def __init__(self, marks: np.ndarray, ends: np.ndarray, has_dissipated: bool):
        self.marks, self.ends = marks, ends
        self.bounds = marks[ends]
        self.has_dissipated = has_dissipated
        self.at = {key: np.zeros(len(marks)) for key in ("time", "u", "f", "work", "d")}
        segments = len(self.bounds) + 1   # before the first end, between ends, after the last
        self.low = {key: np.full(segments, math.inf) for key in ("u", "f")}
        self.high = {key: np.full(segments, -math.inf) for key in ("u", "f")}
        self.work, self.previous, self.offset = 0.0, None, 0
        self.kept_rows, self.kept_u, self.kept_f = [], [], []

    def feed(self, block, deformation, force, bucket: int):
        """One block of rows; ``bucket``: keep every row (1), the extremes of each bucket of
        that many rows (> 1), or none (0)."""
        t = np.asarray(block["time"], float)
        if not len(t):
            return
        u = np.asarray(block[deformation], float)
        f = np.asarray(block[force], float)
        index = self.offset + np.arange(len(t))
        u0, f0 = self.previous if self.previous is not None else (u[0], f[0])
        u_before = np.concatenate([[u0], u[:-1]])
        f_before = np.concatenate([[f0], f[:-1]])
        work = self.work + np.cumsum(0.5 * (f + f_before) * (u - u_before))
        segment = np.searchsorted(self.bounds, index, side="right")
        for key, values in (("u", u), ("f", f)):
            np.minimum.at(self.low[key], segment, values)
            np.maximum.at(self.high[key], segment, values)
        inside = (self.marks >= index[0]) & (self.marks <= index[-1])
        local = self.marks[inside] - index[0]
        for key, values in (("time", t), ("u", u), ("f", f), ("work", work)):
            self.at[key][inside] = values[local]
        if self.has_dissipated:
            self.at["d"][inside] = np.asarray(block[DISSIPATED], float)[local]
        if bucket:
            if bucket == 1:
                chosen = np.arange(len(t))
            else:
                first, second = plot.bucket_extrema(np.column_stack([u, f]), bucket)
                # the reversals are kept, so that consecutive cycles join where they meet
                chosen = np.unique(np.concatenate([first.ravel(), second.ravel(), local]))
            self.kept_rows.append(index[chosen])
            self.kept_u.append(u[chosen])
            self.kept_f.append(f[chosen])
        self.work, self.previous = float(work[-1]), (u[-1], f[-1])
        self.offset += len(t)

    def cycles(self) -> list[Cycle]:
        at = {key: values[self.ends] for key, values in self.at.items()}
        found = []
        for k in range(1, len(self.bounds)):
            a, b = k - 1, k
            u_range = (min(self.low["u"][k], at["u"][b]), max(self.high["u"][k], at["u"][b]))
            f_range = (min(self.low["f"][k], at["f"][b]), max(self.high["f"][k], at["f"][b]))
            # the path's work, closed from its last point back to its first
            area = (at["work"][b] - at["work"][a]
                    + 0.5 * (at["f"][b] + at["f"][a]) * (at["u"][a] - at["u"][b]))
            found.append(Cycle(
                number=k, start=float(at["time"][a]), end=float(at["time"][b]),
                deformation=(float(u_range[0]), float(u_range[1])),
                force=(float(f_range[0]), float(f_range[1])), area=float(area),
                dissipated=float(at["d"][b] - at["d"][a]) if self.has_dissipated else None))
        return found

    def pieces(self, count: int) -> tuple:
        """The kept points cut at the cycles' ends (each end in both pieces it joins)."""
        if not self.kept_rows:
            return ()
        rows = np.concatenate(self.kept_rows)
        u, f = np.concatenate(self.kept_u), np.concatenate(self.kept_f)
        if len(self.bounds) < 2:
            return ((0, u, f),)
        ends = self.bounds.tolist()
        spans = ([(0, 0, ends[0])] + [(k, ends[k - 1], ends[k]) for k in range(1, len(ends))]
                 + [(0, ends[-1], count - 1)])
        found = []
        for number, a, b in spans:
            if b > a:
                lo, hi = np.searchsorted(rows, a), np.searchsorted(rows, b, side="right")
                found.append((number, u[lo:hi], f[lo:hi]))
        return tuple(found)


def total(loops: Loops) -> Cycle:
    """The full cycles together: first start, last end, overall ranges, summed energies."""
    cycles = loops.cycles
    return Cycle(number=0, start=cycles[0].start, end=cycles[-1].end,
                 deformation=(min(c.deformation[0] for c in cycles),
                              max(c.deformation[1] for c in cycles)),
                 force=(min(c.force[0] for c in cycles), max(c.force[1] for c in cycles)),
                 area=sum(c.area for c in cycles),
                 dissipated=sum(c.dissipated for c in cycles) if loops.has_dissipated else None)


# -- text ------------------------------------------------------------------------------------------

def _label(name: str, unit: str) -> str:
    return f"{name} [{unit}]" if unit else name


def headers(loops: Loops) -> list[str]:
    """The columns of the cycles table, named after the link's series and their units."""
    (u, f), (uu, fu) = loops.series, loops.units
    found = ["cycle", "start [s]", "end [s]", _label(f"{u} min", uu), _label(f"{u} max", uu),
             _label(f"{f} min", fu), _label(f"{f} max", fu), "loop area [J]"]
    return found + ["dissipated [J]"] if loops.has_dissipated else found


def _values(c: Cycle) -> list:
    found = [c.start, c.end, *c.deformation, *c.force, c.area]
    return found + [c.dissipated] if c.dissipated is not None else found


def _cells(c: Cycle) -> list[str]:
    return [str(c.number) if c.number else "total"] + [f"{v:.6g}" for v in _values(c)]


def _csv_cells(c: Cycle) -> list[str]:
    return [str(c.number)] + [repr(float(v)) for v in _values(c)]


def summary(loops: Loops) -> str:
    """Two lines: the link, its series and window; the reversals and the cycles."""
    (u, f), (uu, _) = loops.series, loops.units
    lines = [f"link '{loops.link}' of analysis '{loops.analysis}': {f} against {u}, "
             f"{loops.instants} instants from {loops.span[0]:g} to {loops.span[1]:g} s"]
    swing = (f"swings over {100 * loops.fraction:g}% of its range, {loops.threshold:.4g}"
             f"{' ' + uu if uu else ''}")
    count = len(loops.cycles)
    if count:
        kind = loops.cycle_kind
        cycles = f"; {count} full cycle{'s' if count > 1 else ''} from {kind} to {kind}"
    else:
        cycles = "; no full cycle"
    lines.append(f"{len(loops.reversals)} reversal{'' if len(loops.reversals) == 1 else 's'} "
                 f"of {u} ({swing}){cycles}")
    return "\n".join(lines)


def no_cycle_story(loops: Loops) -> str:
    """The error of a record without a full cycle."""
    count = len(loops.reversals)
    return (f"link '{loops.link}' of analysis '{loops.analysis}': no full cycle: "
            f"'{loops.series[0]}' reverses {count} time{'' if count == 1 else 's'} between "
            f"{loops.span[0]:g} and {loops.span[1]:g} s (swings over {100 * loops.fraction:g}% of "
            f"its range count), and a full cycle needs three reversals (maximum, minimum, maximum "
            f"or the reverse)")


# -- figure ----------------------------------------------------------------------------------------

def figure(loops: Loops, size=plot.DEFAULT_SIZE, dpi: int = plot.DEFAULT_DPI, title: str = ""):
    """Force against deformation, one line per piece of :attr:`Loops.pieces` in that order:
    each full cycle in its own colour, the parts outside full cycles in grey.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; ``figure.axes[0].lines[i]`` holds the points of ``loops.pieces[i]``.
    """
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    # no pyplot: no global figure registry and no GUI backend, whatever the environment
    drawn = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi, layout="constrained")
    ax = drawn.subplots()
    what = f"link '{loops.link}' of analysis '{loops.analysis}'"
    drawn.suptitle(f"{title}: {what}" if title else what)
    count = len(loops.cycles)
    scale = colormaps["viridis"] if count > LEGEND_CYCLES else None
    areas = {c.number: c.area for c in loops.cycles}
    outside = "no full cycle" if not count else "outside full cycles"
    for number, u, f in loops.pieces:
        if number == 0:
            # beneath the cycles, which a steady state draws over the same path
            ax.plot(u, f, lw=0.8, color="0.6", zorder=1.5, label=outside)
            outside = "_"   # one legend entry for the parts outside the cycles
        elif scale is not None:
            ax.plot(u, f, lw=1, color=scale((number - 1) / max(count - 1, 1)))
        else:
            ax.plot(u, f, lw=1, color=f"C{(number - 1) % 10}",
                    label=f"cycle {number}: {areas[number]:.4g} J")
    if scale is not None:
        drawn.colorbar(ScalarMappable(Normalize(1, count), scale), ax=ax, label="cycle")
    (u, f), (uu, fu) = loops.series, loops.units
    ax.set_xlabel(_label(u, uu))
    ax.set_ylabel(_label(f, fu))
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    return drawn
