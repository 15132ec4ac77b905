"""The ``kind = "random"`` analysis block (stationary random response to input PSDs), the
evaluation of its input PSDs, and the rule that a base acceleration needs a function of time
only where time is used.

::

    [[analysis]]
    kind = "random"
    frequencies = { start = 1.0, stop = 500.0, count = 2000, spacing = "log" }
    excitations = [{ load = "push", psd = "S_force" },
                   { load = "ground", psd = "S_base", interpolation = "loglog" }]
    basis = "physical"              # or "modal" with modes = "NAME"
    fields = ["displacement", "acceleration", "reaction"]

Each excitation is a ``[[load]]`` of kind force or base_acceleration whose multiplier (the
place of its time function) is a stationary random process of one-sided PSD ``psd``, a table
function of the frequency in Hz; excitations are uncorrelated.
"""

from __future__ import annotations

import numpy as np

from fem.errors import StudyError
from fem.study.specs import FIELDS, FORCE_FIELDS
from fem.validate import Table, check_float_list

#: the most frequencies of a random analysis (each is a complex solve of the model)
MAX_FREQUENCIES = 10**6
#: how an input PSD is interpolated between the rows of its table
INTERPOLATIONS = ("linear", "loglog")
#: the load kinds an excitation may name
EXCITATION_KINDS = ("force", "base_acceleration")


def frequency_grid(spec_value) -> np.ndarray:
    """(nf,) Hz, increasing: a list, or {start, stop, count, spacing} (both ends in)."""
    if isinstance(spec_value, dict):
        start, stop, count = spec_value["start"], spec_value["stop"], spec_value["count"]
        if spec_value.get("spacing", "linear") == "log":
            grid = np.geomspace(start, stop, count)
        else:
            grid = np.linspace(start, stop, count)
        grid[-1] = stop
        return grid
    return np.asarray(spec_value, float)


def _frequencies(t: Table):
    raw = t.raw("frequencies")
    if isinstance(raw, list):
        freqs = check_float_list(raw, t.key("frequencies"))
        if len(freqs) < 2 or any(f < 0 for f in freqs):
            raise t.error("frequencies", "expected at least 2 frequencies >= 0 (Hz)")
        if any(b <= a for a, b in zip(freqs, freqs[1:])):
            raise t.error("frequencies", "must increase strictly (the response PSDs are "
                                         "integrated over them)")
        if len(freqs) > MAX_FREQUENCIES:
            raise t.error("frequencies", f"{len(freqs)} frequencies, at most "
                                         f"{MAX_FREQUENCIES:g}")
        return freqs
    ft = Table(raw, t.key("frequencies"))
    start, stop = ft.float("start", min=0.0), ft.float("stop", min=0.0)
    count = ft.int("count", min=2, max=MAX_FREQUENCIES)
    spacing = ft.str("spacing", "linear", choices=("linear", "log"))
    ft.done()
    if stop <= start:
        raise ft.error("stop", f"must be > start ({start:g}), got {stop:g}")
    if spacing == "log" and start <= 0:
        raise ft.error("start", f'must be > 0 with spacing = "log", got {start:g}')
    return {"start": start, "stop": stop, "count": count, "spacing": spacing}


def random_block(t: Table, p: dict, loads, functions):
    """Read the keys of a random analysis into ``p``."""
    p["frequencies"] = _frequencies(t)
    p["basis"] = t.str("basis", "physical", choices=("physical", "modal"))
    if p["basis"] == "modal":
        p["modes"] = t.str("modes")
    grid = frequency_grid(p["frequencies"])
    raw = t.raw("excitations")
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise t.error("excitations", 'expected a non-empty list of tables { load = "NAME", '
                                     'psd = "FUNCTION" }')
    by_name = {ld.name: ld for ld in loads}
    p["excitations"] = []
    for i, item in enumerate(raw):
        et = Table(item, f"{t.key('excitations')}[{i + 1}]")
        name = et.str("load")
        if name not in by_name:
            raise et.error("load", f"unknown load '{name}' (named loads: "
                                   f"{', '.join(by_name) or 'none'})")
        if by_name[name].kind not in EXCITATION_KINDS:
            raise et.error("load", f"load '{name}' is of kind '{by_name[name].kind}'; an "
                                   f"excitation is a load of kind force or base_acceleration")
        psd = et.str("psd")
        interpolation = et.str("interpolation", "linear", choices=INTERPOLATIONS)
        et.done()
        check_psd(functions, psd, interpolation, grid, et.key("psd"))
        p["excitations"].append({"load": name, "kind": by_name[name].kind, "psd": psd,
                                 "interpolation": interpolation})
    known = FIELDS + FORCE_FIELDS
    fields = t.str_list("fields", list(known))
    for f in fields:
        if f not in known:
            raise t.error("fields", f"unknown field '{f}' (expected: {', '.join(known)})")
    p["fields"] = [f for f in known if f in fields]


def check_psd(functions: dict, name: str, interpolation: str, grid: np.ndarray, where: str):
    """An input PSD: a table function (or a file of two columns), >= 0, defined over the
    frequencies ``grid`` (Hz)."""
    from fem.functions import Table as TableFunction

    if name not in functions:
        known = ", ".join(sorted(functions)) or "none defined"
        raise StudyError(f"{where}: unknown function '{name}' (defined: {known})")
    fn = functions[name]
    if not isinstance(fn, TableFunction):
        raise StudyError(f"{where}: function '{name}' is an {fn.kind}; an input PSD is a "
                         f"table [[f, S], ...] of the frequency (Hz) and the one-sided PSD "
                         f"(or a file of two columns)")
    source = f"functions.{name}"
    bad = np.flatnonzero(fn.values < 0)
    if len(bad):
        raise StudyError(f"{where}: function '{name}' has a negative value at row "
                         f"{bad[0] + 1} ({fn.values[bad[0]]:g} at {fn.times[bad[0]]:g} Hz): a "
                         f"PSD is >= 0")
    if interpolation == "loglog":
        bad = np.flatnonzero(fn.times <= 0)
        if len(bad):
            raise StudyError(f"{where}: interpolation = \"loglog\" needs frequencies > 0, but "
                             f"row {bad[0] + 1} of {source} is at {fn.times[bad[0]]:g} Hz")
    lo, hi = fn.domain
    if grid[0] < lo or grid[-1] > hi:
        raise StudyError(f"{where}: function '{name}' is defined over [{lo:g}, {hi:g}] Hz "
                         f"only, not over the analysis' frequencies [{grid[0]:g}, "
                         f"{grid[-1]:g}] Hz (extend the table, or set left or right = "
                         f"\"constant\" or \"linear\" in {source})")
    if interpolation == "loglog" and grid[0] <= 0 and fn.left == "linear" and \
            len(fn.times) > 1:
        raise StudyError(f"{where}: a log-log extension of '{name}' has no value at 0 Hz; "
                         f"start the frequencies above 0 or set left = \"constant\"")
    values = spectral_density(fn, grid, interpolation)
    bad = np.flatnonzero(~(values >= 0) | ~np.isfinite(values))
    if len(bad):
        raise StudyError(f"{where}: function '{name}' gives {values[bad[0]]:g} at "
                         f"{grid[bad[0]]:g} Hz (its extension beyond the table): a PSD is a "
                         f"finite value >= 0")


def spectral_density(fn, f: np.ndarray, interpolation: str = "linear") -> np.ndarray:
    """The input PSD ``fn`` (a table function of the frequency) at ``f`` (Hz).

    ``linear``: the function itself (linear between rows, its left/right rules beyond).
    ``loglog``: log S linear in log f between rows (a straight line on a log-log plot, as
    test specifications give them in dB/octave), and 0 strictly inside a segment with a
    zero end (the edge of a band); beyond the table, "constant" holds the end value and
    "linear" extends the end segment on the log-log plot (0 if it has a zero end).
    """
    f = np.asarray(f, float)
    if interpolation == "linear" or len(fn.times) == 1:
        return np.asarray(fn(f), float)
    times, values = fn.times, fn.values
    with np.errstate(divide="ignore"):
        lf, ls, x = np.log(times), np.log(values), np.log(np.maximum(f, 0.0))
    k = np.clip(np.searchsorted(times, f, "right") - 1, 0, len(times) - 2)
    t = (x - lf[k]) / (lf[k + 1] - lf[k])          # < 0 or > 1 beyond the table
    positive = (values[k] > 0) & (values[k + 1] > 0)
    with np.errstate(invalid="ignore"):
        out = np.where(positive, np.exp(ls[k] + t * (ls[k + 1] - ls[k])), 0.0)
    out = np.where(f == times[k], values[k], np.where(f == times[k + 1], values[k + 1], out))
    for side, chosen, end in (("left", f < times[0], 0), ("right", f > times[-1], -1)):
        if np.any(chosen) and getattr(fn, side) == "constant":
            out[chosen] = values[end]
    return out


def check_random_check(check, analysis, where: str):
    """A ``[[check]]`` of a random analysis: its field stored, its frequency on the grid."""
    p = analysis.params
    field = check.field
    stored = [f for f in p["fields"]]
    if "acceleration" in stored and any(e["kind"] == "base_acceleration"
                                        for e in p["excitations"]):
        stored.append("absolute_acceleration")
    if field not in stored:
        why = (" (it is stored with acceleration when a base acceleration drives the "
               "analysis)" if field == "absolute_acceleration" else "; add it to its fields")
        raise StudyError(f"{where}.field: analysis '{analysis.name}' does not store "
                         f"'{field}' (fields: {', '.join(stored)}){why}")
    if check.frequency is None:
        return
    grid = frequency_grid(p["frequencies"])
    x = check.frequency
    if x < grid[0] - 1e-9 * max(1.0, grid[0]) or x > grid[-1] * (1 + 1e-9):
        raise StudyError(f"{where}.frequency: {x:g} Hz is outside analysis "
                         f"'{analysis.name}' [{grid[0]:g}, {grid[-1]:g}] Hz")
    k = int(np.clip(np.searchsorted(grid, x), 1, len(grid) - 1))
    below, above = grid[k - 1], grid[k]
    tolerance = max(1e-9 * max(1.0, abs(x)), 1e-6 * (above - below))
    if not check.interpolate and min(abs(x - below), abs(x - above)) > tolerance:
        raise StudyError(f"{where}.frequency: {x:.12g} Hz is not a frequency of analysis "
                         f"'{analysis.name}' (nearest: {below:.12g} and {above:.12g} Hz); "
                         f"check one of its frequencies or set interpolate = true")


def check_base_acceleration_functions(analyses, loads):
    """A base acceleration needs its function of time in a transient analysis (harmonic,
    random and static analyses take it at unit amplitude or through an input PSD)."""
    for a in analyses:
        if a.kind != "transient":
            continue
        for ld in loads:
            if ld.kind == "base_acceleration" and ld.function is None and \
                    ld.name in a.params["loads"]:
                raise StudyError(f"{ld.where}.function: a base acceleration needs a function "
                                 f"of time (m/s^2) in transient analysis '{a.name}'")
