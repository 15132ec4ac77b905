"""``fem post plot``: figures of a results file as PNG, SVG or PDF.

Long series are decimated before plotting: the instants are split into as many buckets as
the figure has pixel columns, and only the minimum and maximum of each bucket are kept, in
their order. The drawn envelope is the one the full series would draw, from 2 points per
pixel column, so a 1e7-row series plots in seconds into a small file.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from postpro.errors import PostproError
from postpro.jobs import common
from postpro.results import BLOCK_ROWS

KINDS = ("time", "phase", "frf", "psd", "modes", "link")
SUFFIXES = (".png", ".svg", ".pdf")
DEFAULT_SIZE = (1000, 600)
DEFAULT_DPI = 100
MAX_MODES = 10
# below this many points per pixel column decimation saves nothing worth the cost
RAW_FACTOR = 4
EVENT_STYLES = ("--", ":", "-.")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "plot", help="figure (PNG, SVG, PDF) of series, phase portraits, FRFs, modes or links",
        description="Draw a figure; its format follows the suffix of --output.")
    common.add_results(p)
    common.add_analysis(p, several=True)
    common.add_columns(p)
    common.add_elements(p)
    common.add_window(p)
    p.add_argument("--kind", "-k", choices=KINDS, default="time",
                   help="time: fields over time (default); phase: velocity against "
                        "displacement; frf: amplitude and phase of a harmonic analysis; "
                        "psd: response PSDs of a random analysis, log-log; "
                        "modes: mode shapes along a line model; link: normal force against "
                        "penetration")
    p.add_argument("--link", "-l", metavar="L", help="link of --kind link (default: the only one)")
    p.add_argument("--mode", "-m", action="append", type=common.positive_int, default=[],
                   metavar="K", help=f"mode number for --kind modes; repeatable (default: the "
                                     f"first {MAX_MODES})")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="figure file, .png, .svg or .pdf (default: RESULTS-stem_KIND.png)")
    p.add_argument("--size", default=f"{DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]}", metavar="WxH",
                   help="figure size in pixels (default %(default)s)")
    p.add_argument("--dpi", type=common.positive_int, default=DEFAULT_DPI,
                   help="dots per inch of PNG output and of text sizes (default %(default)s)")
    p.add_argument("--title", help="figure title (default: the study title and the kind)")
    p.add_argument("--no-events", action="store_true",
                   help="do not mark the located events on time plots")
    p.set_defaults(run=run)


#: the largest figure: the renderer draws at most 2^16 pixels a side; 1e8 pixels of RGBA
#: take 400 MB
MAX_SIDE, MAX_PIXELS = 32768, 10**8


def parse_size(text: str) -> tuple[int, int]:
    """``"1000x600"`` -> (1000, 600) pixels."""
    found = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not found or min(int(found[1]), int(found[2])) < 50:
        raise PostproError(f"--size: expected WIDTHxHEIGHT in pixels, each at least 50, "
                           f"got '{text}'")
    width, height = int(found[1]), int(found[2])
    if max(width, height) > MAX_SIDE or width * height > MAX_PIXELS:
        raise PostproError(f"--size: {width}x{height} pixels is too large (at most {MAX_SIDE} "
                           f"a side and {MAX_PIXELS:.0e} pixels in all)")
    return width, height


def run(args) -> int:
    size = parse_size(args.size)
    output = args.output or f"{Path(args.results).stem}_{args.kind}.png"
    output = common.checked_output(output, SUFFIXES)
    with common.open_results(args) as results:
        figure = _DRAW[args.kind](results, args, size)
        if args.title is not None:
            figure.suptitle(args.title)
        try:
            figure.savefig(output, dpi=args.dpi)
        except OSError as exc:
            raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
        except MemoryError:
            raise PostproError(f"--size: not enough memory to draw a figure of "
                               f"{size[0]}x{size[1]} pixels at --dpi {args.dpi}") from None
    print(f"wrote {output}")
    return common.EXIT_OK


def _figure(results, size, dpi, rows=1, sharex=True, kind=""):
    from matplotlib.figure import Figure

    # no pyplot: no global figure registry and no GUI backend, whatever the environment
    figure = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi, layout="constrained")
    axes = figure.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    title = results.title or str(results.path)
    figure.suptitle(f"{title}: {kind}" if kind else title)
    return figure, axes


# -- decimation -------------------------------------------------------------------------------

def bucket_extrema(values: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the minimum and the maximum of each bucket of ``bucket`` consecutive rows.

    Parameters
    ----------
    values : numpy.ndarray, shape (k, c)
    bucket : int
        Rows per bucket; the last bucket may be shorter.

    Returns
    -------
    first, second : numpy.ndarray of int, shape (ceil(k / bucket), c)
        For each bucket and column, the rows of its two extreme values, the earlier one
        first.
    """
    k, c = values.shape
    buckets = -(-k // bucket)
    padded = np.concatenate([values, np.repeat(values[-1:], buckets * bucket - k, axis=0)])
    shaped = padded.reshape(buckets, bucket, c)
    low, high = shaped.argmin(axis=1), shaped.argmax(axis=1)
    base = (np.arange(buckets) * bucket)[:, None]
    # padding repeats the last row, so an extreme found there is the last real row
    first = np.minimum(base + np.minimum(low, high), k - 1)
    second = np.minimum(base + np.maximum(low, high), k - 1)
    return first, second


def decimate(blocks, count: int, buckets: int, joint: bool = False):
    """Min/max decimation of a series read block by block.

    Parameters
    ----------
    blocks : callable
        ``blocks(rows)`` yields ``(t (k,), values (k, c))`` blocks of ``rows`` rows each
        (the last one shorter) covering the series in order.
    count : int
        Number of rows of the series (sets the bucket size).
    buckets : int
        Number of buckets, about the pixel width of the plot.
    joint : bool
        False: each column keeps its own extremes (time plots). True: the rows kept are the
        extremes of every column, shared by all (curves of one column against another).

    Returns
    -------
    list of (t, y) per column, or (t, values) when ``joint``
        At most ``2 buckets`` points per column (``2 c buckets`` when joint); the series
        whole when it is short.
    """
    if count <= RAW_FACTOR * buckets:
        parts = list(blocks(max(count, 1)))
        t = np.concatenate([p[0] for p in parts]) if parts else np.empty(0)
        values = np.concatenate([p[1] for p in parts]) if parts else np.empty((0, 0))
        return (t, values) if joint else [(t, values[:, j]) for j in range(values.shape[1])]
    bucket = math.ceil(count / buckets)
    rows = bucket * max(1, BLOCK_ROWS // bucket)
    kept_t, kept_v = [], []
    for t, values in blocks(rows):
        if not len(t):
            continue
        first, second = bucket_extrema(values, bucket)
        if joint:
            chosen = np.sort(np.concatenate([first, second], axis=1), axis=1).ravel()
            kept_t.append(t[chosen])
            kept_v.append(values[chosen])
        else:
            chosen = np.stack([first, second], axis=1)  # (buckets, 2, c): earlier row first
            chosen = chosen.transpose(2, 0, 1).reshape(values.shape[1], -1)
            kept_t.append([t[rows_j] for rows_j in chosen])
            kept_v.append([values[rows_j, j] for j, rows_j in enumerate(chosen)])
    if joint:
        return np.concatenate(kept_t), np.concatenate(kept_v)
    columns = len(kept_t[0]) if kept_t else 0
    return [(np.concatenate([b[j] for b in kept_t]), np.concatenate([b[j] for b in kept_v]))
            for j in range(columns)]


# -- kinds ------------------------------------------------------------------------------------

def _label(analysis, several: bool, text: str) -> str:
    return f"{analysis.name}: {text}" if several else text


def _time(results, args, size):
    analyses = common.pick_analyses(results, args.analysis, ("transient",),
                                    args.allow_incomplete, several=True)
    # one panel per nodal field, then one per force quantity (element forces, reactions)
    fields, dofs, named = common.resolve_columns(results, analyses[0], args)
    panels = [(field, dofs) for field in fields]
    for quantity in dict.fromkeys(q for q, _, _ in named):     # in the order asked
        pairs = [(name, component) for q, name, component in named if q == quantity]
        if pairs:
            panels.append((quantity, pairs))
    for analysis in analyses[1:]:
        if fields:
            common.resolve_fields(analysis, fields)
        for quantity, pairs in panels[len(fields):]:
            analysis.force_pairs(quantity, sorted({n for n, _ in pairs}),
                                 sorted({c for _, c in pairs}))
    names = ", ".join(a.name for a in analyses) if len(analyses) <= 3 else \
        f"{len(analyses)} analyses"
    figure, axes = _figure(results, size, args.dpi, rows=len(panels), kind=f"{names} over time")
    several = len(analyses) > 1
    for ax, (quantity, columns) in zip(axes, panels):
        for analysis in analyses:
            i0, i1 = common.window(analysis, args.start, args.end)
            curves = decimate(lambda rows, a=analysis: a.blocks(quantity, columns, args.start,
                                                               args.end, rows=rows),
                              i1 - i0, size[0])
            for (name, component), (t, y) in zip(columns, curves):
                ax.plot(t, y, lw=1, label=_label(analysis, several, f"{name} {component}"))
        ax.set_ylabel(f"{quantity.replace('_', ' ')} [{_unit(quantity, columns)}]")
        ax.grid(True, alpha=0.3)
    if not args.no_events:
        _mark_events(axes, analyses, args.start, args.end, several)
    for ax in axes:
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("time [s]")
    return figure


def _unit(quantity, columns) -> str:
    if quantity in common.FORCES:
        units = dict.fromkeys("N.m" if c.startswith("M") else "N" for _, c in columns)
        return " or ".join(units)
    return common.unit(quantity, [c for _, c in columns])


def _mark_events(axes, analyses, start, end, several):
    """Vertical lines at the located events, one style per analysis, one colour per kind."""
    colours = {}
    for k, analysis in enumerate(analyses):
        events = analysis.events
        if not len(events):
            continue
        times = events["time"]
        inside = np.ones(len(times), bool)
        if start is not None:
            inside &= times >= start
        if end is not None:
            inside &= times <= end
        for kind in np.unique(events["kind"][inside]):
            chosen = times[inside & (events["kind"] == kind)]
            colour = colours.setdefault(str(kind), f"C{(len(colours) + 5) % 10}")
            label = _label(analysis, several, f"{kind} ({len(chosen)})")
            for n, ax in enumerate(axes):
                ax.vlines(chosen, 0, 1, transform=ax.get_xaxis_transform(), colors=colour,
                          linestyles=EVENT_STYLES[k % len(EVENT_STYLES)], lw=0.8,
                          label=label if n == 0 else None)


def _phase(results, args, size):
    analyses = common.pick_analyses(results, args.analysis, ("transient",),
                                    args.allow_incomplete, several=True)
    for analysis in analyses:
        common.resolve_fields(analysis, ["displacement", "velocity"])
    dofs = common.resolve_dofs(results, args.node, args.component)
    figure, (ax,) = _figure(results, size, args.dpi, kind="phase portrait")
    several = len(analyses) > 1
    for analysis in analyses:
        i0, i1 = common.window(analysis, args.start, args.end)
        for node, component in dofs:
            def blocks(rows, a=analysis, dof=(node, component)):
                pairs = zip(a.blocks("displacement", [dof], args.start, args.end, rows=rows),
                            a.blocks("velocity", [dof], args.start, args.end, rows=rows))
                for (t, x), (_, v) in pairs:
                    count = min(len(x), len(v))
                    yield t[:count], np.column_stack([x[:count, 0], v[:count, 0]])
            _, values = decimate(blocks, i1 - i0, size[0], joint=True)
            ax.plot(values[:, 0], values[:, 1], lw=1,
                    label=_label(analysis, several, f"{node} {component}"))
    ax.set_xlabel("displacement [m]")
    ax.set_ylabel("velocity [m/s]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    return figure


def _frf(results, args, size):
    analyses = common.pick_analyses(results, args.analysis, ("harmonic",),
                                    args.allow_incomplete, several=True)
    fields = common.resolve_fields(analyses[0], args.field[:1])
    if len(args.field) > 1:
        raise PostproError("--kind frf draws one field; give --field once")
    field = fields[0]
    dofs = common.resolve_dofs(results, args.node, args.component)
    figure, (amplitude, phase) = _figure(results, size, args.dpi, rows=2,
                                         kind="frequency response")
    several = len(analyses) > 1
    for analysis in analyses:
        common.resolve_fields(analysis, [field])
        f, values = analysis.columns(field, dofs, args.start, args.end)
        for j, (node, component) in enumerate(dofs):
            label = _label(analysis, several, f"{node} {component}")
            amplitude.plot(f, np.abs(values[:, j]), lw=1, label=label)
            phase.plot(f, np.degrees(np.angle(values[:, j])), lw=1, label=label)
    amplitude.set_yscale("log")
    amplitude.set_ylabel(f"{field} amplitude [{common.unit(field, [c for _, c in dofs])}]")
    phase.set_ylabel("phase [deg]")
    phase.set_xlabel("frequency [Hz]")
    for ax in (amplitude, phase):
        ax.grid(True, which="both", alpha=0.3)
    amplitude.legend(loc="best", fontsize="small")
    return figure


def _psd(results, args, size):
    """Response PSDs of random analyses on log-log axes, one panel per quantity, each curve
    labelled with its RMS."""
    from postpro import layout

    analyses = common.pick_analyses(results, args.analysis, ("random",),
                                    args.allow_incomplete, several=True)
    fields, dofs, named = common.resolve_columns(results, analyses[0], args)
    panels = [(field, dofs) for field in fields]
    for quantity in dict.fromkeys(q for q, _, _ in named):
        panels.append((quantity, [(n, c) for q, n, c in named if q == quantity]))
    figure, axes = _figure(results, size, args.dpi, rows=len(panels),
                           kind="power spectral density")
    several = len(analyses) > 1
    for ax, (quantity, columns) in zip(axes, panels):
        base = "acceleration" if quantity == "absolute_acceleration" else quantity
        unit = _unit(base, columns)
        for analysis in analyses:
            for name, component in columns:
                read = {"element_force": analysis.element_force,
                        "reaction": analysis.reaction}.get(quantity)
                f, values = (read(name, component, args.start, args.end) if read else
                             analysis.series(quantity, name, component, args.start, args.end))
                rms = analysis.rms(quantity, name, component)
                shown = (values > 0) & (f > 0)
                ax.plot(f[shown], values[shown], lw=1, label=_label(
                    analysis, several, f"{name} {component}, RMS {rms:.4g} {unit}"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylabel(f"{quantity.replace('_', ' ')} PSD [{layout.psd_unit(unit)}]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("frequency [Hz]")
    return figure


def line_positions(coordinates: np.ndarray) -> tuple[np.ndarray, str]:
    """Position of each node along a straight line model, and the name of that line.

    The line is the principal direction of the node cloud; positions are measured from the
    node furthest back along it, in m. An axis-aligned line is named after its axis.

    Returns
    -------
    positions : numpy.ndarray, shape (n,)
    name : str
        ``"X"``, ``"Y"``, ``"Z"`` or ``"the line"``.
    """
    centred = coordinates - coordinates.mean(axis=0)
    if len(coordinates) < 2 or not np.any(centred):
        return np.zeros(len(coordinates)), "the line"
    direction = np.linalg.svd(centred, full_matrices=False)[2][0]
    axis = int(np.argmax(np.abs(direction)))
    direction = direction * np.sign(direction[axis])  # point along +X, +Y or +Z
    positions = centred @ direction
    positions -= positions.min()
    aligned = abs(abs(direction[axis]) - 1.0) < 1e-9
    return positions, ("XYZ"[axis] if aligned else "the line")


def _modes(results, args, size):
    (analysis,) = common.pick_analyses(results, args.analysis, ("modes", "complex_modes"),
                                       args.allow_incomplete)
    shapes = np.asarray(analysis.shapes)
    count = shapes.shape[0]
    modes = args.mode or list(range(1, min(count, MAX_MODES) + 1))
    for mode in modes:
        if mode > count:
            raise PostproError(f"analysis '{analysis.name}': mode {mode} out of range 1..{count}")
    frequency = analysis.frequency if "frequency" in analysis.arrays else None
    if args.node:
        raise PostproError("--kind modes draws every node along the line; --node does not apply")
    present = list(dict.fromkeys(str(c) for c in results.dof_component))
    for component in args.component:
        if component not in present:
            raise PostproError(f"no node of '{results.path}' carries component '{component}' "
                               f"(components: {', '.join(present)})")
    shapes = {mode: _real_shape(shapes[mode - 1]) for mode in modes}
    moving = {c: [m for m in modes if _moves(results, shapes[m], c)] for c in present}
    # by default, one panel per component in which some mode moves, showing those modes
    components = args.component or [c for c in present if moving[c]] or present[:1]
    positions, line = line_positions(results.coordinates)
    figure, axes = _figure(results, size, args.dpi, rows=len(components),
                           kind=f"mode shapes of {analysis.name}")
    for ax, component in zip(axes, components):
        nodes = [k for k in range(len(results.node_names))
                 if component in _components_of(results, k)]
        nodes.sort(key=lambda k: positions[k])
        columns = [results.dof(str(results.node_names[k]), component) for k in nodes]
        for index, mode in enumerate(modes):
            if not args.component and mode not in moving[component]:
                continue
            label = f"mode {mode}"
            if frequency is not None:
                label += f", {frequency[mode - 1]:.4g} Hz"
            ax.plot(positions[nodes], shapes[mode][columns], marker="o", lw=1,
                    color=f"C{index % 10}", label=label)
        ax.set_ylabel(f"{component} (shape, max |.| = 1)")
        ax.axhline(0.0, color="0.5", lw=0.5)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel(f"position along {line} [m]")
    return figure


def _moves(results, shape: np.ndarray, component: str) -> bool:
    """Whether a shape scaled to 1 moves in ``component`` by more than 1e-6."""
    return bool(np.any(np.abs(shape[results.dof_component == component]) > 1e-6))


def _components_of(results, node: int) -> set[str]:
    return {str(c) for n, c in zip(results.dof_node, results.dof_component) if n == node}


def _real_shape(shape: np.ndarray) -> np.ndarray:
    """A shape scaled to a largest magnitude of 1 (complex: turned so that entry is real)."""
    k = int(np.argmax(np.abs(shape)))
    if shape[k] == 0:
        return np.real(shape)
    return np.real(shape / shape[k])


def _link(results, args, size):
    analyses = common.pick_analyses(results, args.analysis, ("transient",),
                                    args.allow_incomplete, several=True)
    figure, (ax,) = _figure(results, size, args.dpi, kind="link force against penetration")
    several = len(analyses) > 1
    spans = []
    for analysis in analyses:
        links = analysis.links
        name = args.link
        if name is None:
            if len(links) != 1:
                raise PostproError(f"analysis '{analysis.name}' has {len(links)} links; name "
                                   f"one with --link: {', '.join(links) or 'none'}")
            name = links[0]
        series = analysis.link_series_names(name)
        for needed in ("normal_force", "penetration"):
            if needed not in series:
                raise PostproError(f"link '{name}' of analysis '{analysis.name}' has no "
                                   f"'{needed}' series (series: {', '.join(series)})")
        i0, i1 = common.window(analysis, args.start, args.end)

        def blocks(rows, a=analysis, link=name):
            for block in a.link_blocks(link, args.start, args.end, rows=rows):
                yield block["time"], np.column_stack([block["penetration"],
                                                      block["normal_force"]])
        _, values = decimate(blocks, i1 - i0, size[0], joint=True)
        pen, force = values[:, 0], values[:, 1]
        # open instants (no force, gap open) say nothing of the law and would join the
        # contacts by long segments: each contact is drawn on its own
        closed = (force != 0) | (pen > 0)
        ax.plot(np.where(closed, pen, np.nan), np.where(closed, force, np.nan), lw=1,
                marker=".", ms=3, label=_label(analysis, several, name))
        if np.any(closed):
            spans.append((min(0.0, float(pen[closed].min())), float(pen[closed].max())))
    if spans:
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        margin = 0.05 * (hi - lo) if hi > lo else 1e-12
        ax.set_xlim(lo - margin, hi + margin)
    ax.set_xlabel("penetration [m]")
    ax.set_ylabel("normal force [N]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    return figure


_DRAW = {"time": _time, "phase": _phase, "frf": _frf, "psd": _psd, "modes": _modes,
         "link": _link}
