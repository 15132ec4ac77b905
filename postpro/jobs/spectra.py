"""``fem post psd`` and ``fem post fft``: spectra of archived series of a transient analysis.

The columns are chosen as for ``fem post series`` (nodal fields, element forces,
reactions) over a time window; the series must be uniformly sampled, or resampled with
``--resample DT``. The spectra go to stdout or ``--csv`` as CSV with units in the headers,
the summary (RMS, peaks) to stdout when the CSV goes to a file and to stderr otherwise, and
``--plot`` draws them. Conventions: ``postpro.spectral``.
"""

from __future__ import annotations

import sys

import numpy as np

from postpro import layout, spectral
from postpro.errors import PostproError
from postpro.jobs import common, plot
from postpro.jobs.series import DEFAULT_DIGITS

#: the phase plot shows the bins whose amplitude reaches this fraction of the largest
PLOT_PHASE_FLOOR = 1e-3


def add_parser(subparsers):
    p = subparsers.add_parser(
        "psd", help="power spectral density (Welch) of series of a transient analysis",
        description="One-sided power spectral density of series of a transient analysis "
                    "(Welch's method), in unit^2/Hz, as CSV; prints the RMS of each series "
                    "from its PSD and from the series itself.")
    _common_options(p, "hann")
    p.add_argument("--segment", type=common.positive_int, metavar="N",
                   help="samples per segment (default: the largest power of two up to a "
                        "quarter of the samples); the bins are fs / N apart")
    p.add_argument("--overlap", type=common.finite_float, default=0.5, metavar="X",
                   help="fraction of a segment shared with the next, in [0, 1) (default 0.5)")
    p.add_argument("--detrend", choices=tuple(spectral.DETRENDS), default="mean",
                   help="removed from each segment (default mean)")
    p.set_defaults(run=run_psd)
    p = subparsers.add_parser(
        "fft", help="amplitude and phase spectrum (FFT) of series of a transient analysis",
        description="Single-sided amplitude (a sine of amplitude A on a bin gives A) and "
                    "phase in degrees of series of a transient analysis, as CSV.")
    _common_options(p, "boxcar")
    p.add_argument("--detrend", choices=tuple(spectral.DETRENDS), default="none",
                   help="removed from the whole window first (default none: the mean is "
                        "the 0 Hz amplitude)")
    p.set_defaults(run=run_fft)


def _common_options(p, window: str):
    common.add_results(p)
    common.add_analysis(p)
    common.add_columns(p)
    common.add_elements(p)
    common.add_window(p)
    p.add_argument("--window", "-w", choices=spectral.WINDOWS, default=window,
                   help=f"window applied to the samples (default {window})")
    p.add_argument("--resample", type=common.finite_float, metavar="DT",
                   help="interpolate linearly onto instants DT s apart first (needed when "
                        "the instants are not uniformly spaced)")
    p.add_argument("--csv", "-o", metavar="FILE", help="CSV file (default: stdout)")
    p.add_argument("--plot", metavar="FILE", help="also draw the spectra (.png, .svg, .pdf)")
    p.add_argument("--size", default=f"{plot.DEFAULT_SIZE[0]}x{plot.DEFAULT_SIZE[1]}",
                   metavar="WxH", help="figure size in pixels (default %(default)s)")
    p.add_argument("--dpi", type=common.positive_int, default=plot.DEFAULT_DPI,
                   help="dots per inch of the figure (default %(default)s)")
    p.add_argument("--digits", type=common.positive_int, default=DEFAULT_DIGITS,
                   help=f"significant digits of the values (default {DEFAULT_DIGITS})")


def read_columns(results, analysis, args):
    """The instants of the window and the columns asked for.

    Returns
    -------
    t : numpy.ndarray, shape (n,)
    values : numpy.ndarray, shape (n, c)
    labels : list of c str, ``"N3 DX displacement"``
    units : list of c str, the unit of each column
    """
    fields, dofs, named = common.resolve_columns(results, analysis, args)
    i0, i1 = common.window(analysis, args.start, args.end)
    parts, labels, units = [], [], []
    for field in fields:
        parts.append(analysis.read_rows(field, dofs, i0, i1))
        labels += [f"{node} {component} {field}" for node, component in dofs]
        units += [common.unit(field, [component]) for _, component in dofs]
    groups = {}
    for quantity, name, component in named:
        groups.setdefault(quantity, []).append((name, component))
    for quantity, pairs in groups.items():
        parts.append(analysis.read_forces(quantity, pairs, i0, i1))
        labels += [f"{name} {component} {quantity}" for name, component in pairs]
        units += ["N.m" if component.startswith("M") else "N" for _, component in pairs]
    count = min(len(axis) for axis, _ in parts)   # fields of an unfinished run may differ
    values = np.column_stack([v[:count] for _, v in parts])
    return parts[0][0][:count], values, labels, units


def _spectrum_of(results, args, compute):
    (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                       args.allow_incomplete)
    t, values, labels, units = read_columns(results, analysis, args)
    try:
        return analysis, t, values, labels, units, compute(t, values)
    except PostproError as exc:
        raise PostproError(f"analysis '{analysis.name}': {exc}") from None


def _write_csv(args, titles, columns):
    line = ",".join([f"%.{args.digits}g"] * len(titles)) + "\n"
    block = np.column_stack(columns)
    with common.text_output(args.csv) as stream:
        stream.write(",".join(titles) + "\n")
        stream.write((line * len(block)) % tuple(block.ravel().tolist()))


def _say(args, text: str):
    """The summary: on stdout when the CSV goes to a file, else on stderr."""
    print(text, file=sys.stdout if args.csv else sys.stderr)


def run_psd(args) -> int:
    plot_path = _plot_path(args)
    with common.open_results(args) as results:
        def compute(t, values):
            return spectral.psd(t, values, segment=args.segment, window=args.window,
                                overlap=args.overlap, detrend=args.detrend,
                                resample=args.resample)
        analysis, t, values, labels, units, (f, S) = _spectrum_of(results, args, compute)
        samples = _samples(t, args.resample)
        segment = args.segment or spectral.default_segment(samples)
        psd_units = [layout.psd_unit(u) for u in units]
        _write_csv(args, ["frequency [Hz]"] + [f"{label} PSD [{u}]"
                                               for label, u in zip(labels, psd_units)],
                   [f, S])
        step = _step(t, args.resample)
        series_rms = _series_rms(t, values, args.detrend, args.resample)
        from_psd = spectral.rms_of_psd(f, S)
        rows = [(label, f"{a:.6g}", f"{b:.6g}", u, f"{f[int(np.argmax(S[:, j]))]:.6g}")
                for j, (label, a, b, u) in enumerate(zip(labels, from_psd, series_rms, units))]
        _say(args, f"analysis {analysis.name}: {samples} samples at {1 / step:.6g} Hz, "
                   f"{_span(t)}; segments of {segment} samples (bins {1 / (step * segment):.6g}"
                   f" Hz apart), {spectral.segments(samples, segment, args.overlap)} "
                   f"averaged, window {args.window}, overlap {args.overlap:g}, detrend "
                   f"{args.detrend}\n" +
                   common.format_table(("column", "RMS from PSD", "RMS of series", "unit",
                                        "peak PSD at [Hz]"), rows, right={1, 2, 4}))
        if plot_path is not None:
            _plot_psd(results, args, plot_path, f, S, labels, psd_units)
    return common.EXIT_OK


def run_fft(args) -> int:
    plot_path = _plot_path(args)
    with common.open_results(args) as results:
        def compute(t, values):
            return spectral.fft(t, values, window=args.window, detrend=args.detrend,
                                resample=args.resample)
        analysis, t, values, labels, units, (f, A, phase) = _spectrum_of(results, args,
                                                                         compute)
        titles = ["frequency [Hz]"]
        for label, u in zip(labels, units):
            titles += [f"{label} amplitude [{u}]", f"{label} phase [deg]"]
        pairs = np.stack([A, phase], axis=2).reshape(len(f), -1)
        _write_csv(args, titles, [f, pairs])
        samples = _samples(t, args.resample)
        step = _step(t, args.resample)
        rows = []
        for j, (label, u) in enumerate(zip(labels, units)):
            k = 1 + int(np.argmax(A[1:, j])) if len(f) > 1 else 0
            rows.append((label, f"{A[0, j]:.6g}", f"{A[k, j]:.6g}", f"{f[k]:.6g}",
                         f"{phase[k, j]:.4g}", u))
        _say(args, f"analysis {analysis.name}: {samples} samples at {1 / step:.6g} Hz, "
                   f"{_span(t)}; bins {1 / (step * samples):.6g} Hz apart, window "
                   f"{args.window}, detrend {args.detrend}\n" +
                   common.format_table(("column", "0 Hz", "largest amplitude", "at [Hz]",
                                        "phase [deg]", "unit"), rows, right={1, 2, 3, 4}))
        if plot_path is not None:
            _plot_fft(results, args, plot_path, f, A, phase, labels, units)
    return common.EXIT_OK


def _plot_path(args):
    if args.plot is None:
        return None
    plot.parse_size(args.size)
    return common.checked_output(args.plot, plot.SUFFIXES)


def _span(t) -> str:
    return f"{t[0]:.6g} .. {t[-1]:.6g} s"


def _step(t, resample) -> float:
    return resample if resample is not None else (t[-1] - t[0]) / (len(t) - 1)


def _samples(t, resample) -> int:
    if resample is None:
        return len(t)
    return len(spectral.resample(t, np.zeros(len(t)), resample)[0])


def _series_rms(t, values, detrend: str, resample) -> np.ndarray:
    """The RMS of each series, detrended over the whole window as the PSD's segments are."""
    from scipy import signal

    if resample is not None:
        t, values = spectral.resample(t, values, resample)
    mode = spectral.DETRENDS[detrend]
    if mode:
        values = signal.detrend(values, axis=0, type=mode)
    return np.sqrt(np.mean(values ** 2, axis=0))


def _panels(labels, units):
    """Columns grouped by unit, in the order met: [(unit, [column indices])]."""
    groups = {}
    for j, u in enumerate(units):
        groups.setdefault(u, []).append(j)
    return list(groups.items())


def _save(args, figure, path):
    try:
        figure.savefig(path)
    except OSError as exc:
        raise PostproError(f"cannot write '{path}': {exc.strerror or exc}") from exc
    _say(args, f"wrote {path}")


def _plot_psd(results, args, path, f, S, labels, units):
    panels = _panels(labels, units)
    figure, axes = plot._figure(results, plot.parse_size(args.size), args.dpi,
                                rows=len(panels), kind="power spectral density")
    for ax, (unit, columns) in zip(axes, panels):
        for j in columns:
            positive = S[:, j] > 0
            ax.plot(f[positive], S[positive, j], lw=1, label=labels[j])
        ax.set_yscale("log")
        ax.set_ylabel(f"PSD [{unit}]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("frequency [Hz]")
    _save(args, figure, path)


def _plot_fft(results, args, path, f, A, phase, labels, units):
    panels = _panels(labels, units)
    figure, axes = plot._figure(results, plot.parse_size(args.size), args.dpi,
                                rows=len(panels) + 1, kind="amplitude spectrum")
    for ax, (unit, columns) in zip(axes, panels):
        for j in columns:
            ax.plot(f, A[:, j], lw=1, label=labels[j])
        ax.set_ylabel(f"amplitude [{unit}]")
    for j, label in enumerate(labels):
        # the phase of bins with next to no amplitude says nothing: left out
        shown = A[:, j] >= PLOT_PHASE_FLOOR * A[:, j].max(initial=0.0)
        axes[-1].plot(f[shown], phase[shown, j], ".", ms=3, label=label)
    axes[-1].set_ylabel("phase [deg]")
    axes[-1].set_xlabel("frequency [Hz]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    _save(args, figure, path)
