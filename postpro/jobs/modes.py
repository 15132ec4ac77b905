"""``fem post modes``: the table of a modes analysis (frequencies, participation, effective
masses and their cumulative share of the total mass) or of a complex modes analysis."""

from __future__ import annotations

import math

import numpy as np

from postpro.jobs import common

DIRECTIONS = ("X", "Y", "Z")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "modes", help="table of modes: frequency, period, participation, effective masses",
        description="Print one row per mode of a modes analysis: frequency, period, "
                    "generalized mass, participation factors and effective masses along X, Y "
                    "and Z with their cumulative ratio of the total mass (a fraction); for a "
                    "complex modes analysis: frequency, damped frequency, damping ratio.")
    common.add_results(p)
    common.add_analysis(p)
    p.add_argument("--csv", metavar="FILE", help="write the table as CSV instead")
    p.set_defaults(run=run)


def modal_table(analysis) -> tuple[tuple[str, ...], list[list[float]]]:
    """The headers and rows (numbers) of a modes or complex modes analysis' table.

    Real modes: mode, frequency [Hz], period [s], generalized mass [kg], participation
    factor X Y Z [kg^0.5 for mass-normalized modes], effective mass X Y Z [kg], cumulative
    effective mass ratio X Y Z (of the ``total_mass`` the file stores; NaN if it has none or
    the total along a direction is zero). Complex modes: mode, frequency [Hz] (|lambda| /
    2 pi), damped frequency [Hz], damping ratio, period [s] (of the damped frequency).
    """
    count = analysis.mode_count
    number = np.arange(1, count + 1, dtype=float)
    frequency = np.asarray(analysis["frequency"], float)
    with np.errstate(divide="ignore"):
        if analysis.kind == "complex_modes":
            damped = np.asarray(analysis["damped_frequency"], float)
            headers = ("mode", "frequency [Hz]", "damped frequency [Hz]", "damping ratio",
                       "period [s]")
            columns = [number, frequency, damped, np.asarray(analysis["damping_ratio"], float),
                       np.where(damped > 0, 1.0 / damped, math.inf)]
            return headers, [list(row) for row in zip(*columns)]
        period = np.where(frequency > 0, 1.0 / frequency, math.inf)
    factors = np.asarray(analysis["participation_factor"], float).reshape(count, 3)
    effective = np.asarray(analysis["effective_mass"], float).reshape(count, 3)
    if "total_mass" in analysis.arrays:
        total = np.asarray(analysis["total_mass"], float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(total > 0, np.cumsum(effective, axis=0) / total, math.nan)
    else:
        ratio = np.full((count, 3), math.nan)
    headers = (("mode", "frequency [Hz]", "period [s]", "generalized mass [kg]")
               + tuple(f"participation {d}" for d in DIRECTIONS)
               + tuple(f"effective mass {d} [kg]" for d in DIRECTIONS)
               + tuple(f"cumulative ratio {d}" for d in DIRECTIONS))
    columns = ([number, frequency, period, np.asarray(analysis["generalized_mass"], float)]
               + [factors[:, k] for k in range(3)] + [effective[:, k] for k in range(3)]
               + [ratio[:, k] for k in range(3)])
    return headers, [list(row) for row in zip(*columns)]


def _text(header: str, value: float) -> str:
    if header == "mode":
        return str(int(value))
    return "-" if math.isnan(value) else f"{value:.9g}"


def run(args) -> int:
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis, ("modes", "complex_modes"),
                                           args.allow_incomplete)
        headers, rows = modal_table(analysis)
        if "total_mass" in analysis.arrays:
            total = np.asarray(analysis["total_mass"], float)
            mass = "total mass " + ", ".join(f"{d} {m:.9g} kg" for d, m in zip(DIRECTIONS, total))
        else:
            mass = ""
    if args.csv:
        with common.text_output(args.csv) as stream:
            common.write_csv(stream, headers, [[repr(float(v)) if h != "mode" else str(int(v))
                                                for h, v in zip(headers, row)] for row in rows])
        return common.EXIT_OK
    print(common.format_table(headers, [[_text(h, v) for h, v in zip(headers, row)]
                                        for row in rows]))
    if mass:
        print(mass)
    return common.EXIT_OK
