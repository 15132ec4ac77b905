"""The ``[spectra.NAME]`` blocks (design spectra) and the keys of a spectral analysis."""

from __future__ import annotations

import numpy as np

from fem.functions.spectrum import INTERPOLATIONS, DesignSpectrum
from fem.validate import Table, check_float_list

DIRECTIONS = ("X", "Y", "Z")
COMBINATIONS = ("CQC", "SRSS")
DIRECTION_COMBINATIONS = ("SRSS", "100-40-40")


def spectra(t: Table | None) -> dict:
    """name -> DesignSpectrum of the ``[spectra.NAME]`` tables."""
    if t is None:
        return {}
    out = {}
    for name in t.data:
        block = t.table(name)
        frequencies = np.asarray(block.float_list("frequencies"), float)
        raw_damping = block.raw("damping")
        damping = np.atleast_1d(np.asarray(
            check_float_list(raw_damping if isinstance(raw_damping, list) else [raw_damping],
                             block.key("damping")), float))
        rows = block.raw("values")
        if isinstance(rows, list) and rows and not isinstance(rows[0], list):
            rows = [rows]                      # one damping ratio: one row, brackets optional
        if not isinstance(rows, list) or not rows:
            raise block.error("values", "expected one row of values (m/s^2) per damping ratio")
        values = np.array([check_float_list(row, f"{block.key('values')}[{i + 1}]")
                           for i, row in enumerate(rows)], dtype=object)
        if len({len(r) for r in values}) != 1:
            raise block.error("values", "every row must have one value per frequency")
        values = np.array([list(r) for r in values], float)
        interpolation = block.str("interpolation", "log", choices=INTERPOLATIONS)
        block.done()
        out[name] = DesignSpectrum(name, frequencies, damping, values, interpolation)
    return out


def spectral_keys(t: Table, p: dict, spectra_defined: dict):
    """The keys of a ``kind = "spectral"`` analysis, validated into ``p``."""
    p["modes"] = t.str("modes")
    directions = t.str_list("directions")
    if not directions or len(set(directions)) != len(directions) or \
            any(d not in DIRECTIONS for d in directions):
        raise t.error("directions", f"expected distinct directions among "
                                    f"{', '.join(DIRECTIONS)}, got {directions}")
    p["directions"] = [d for d in DIRECTIONS if d in directions]
    raw = t.raw("spectrum")
    known = ", ".join(sorted(spectra_defined)) or "none defined"
    if isinstance(raw, str):
        chosen = {d: raw for d in p["directions"]}
    elif isinstance(raw, dict):
        chosen = {}
        sub = t.table("spectrum")
        for d in p["directions"]:
            chosen[d] = sub.str(d, None)
            if chosen[d] is None:
                raise sub.error(d, f"missing: direction {d} is in directions and needs a "
                                   f"spectrum")
        sub.done()
    else:
        raise t.error("spectrum", "expected the name of a [spectra.NAME] block, or a table "
                                  "{ X = NAME, ... } per direction")
    for d, name in chosen.items():
        if name not in spectra_defined:
            raise t.error("spectrum", f"unknown spectrum '{name}' (spectra: {known})")
    p["spectrum"] = chosen
    scale = t.raw("scale", 1.0)
    if isinstance(scale, dict):
        sub = t.table("scale")
        p["scale"] = {d: sub.float(d, 1.0, min=0.0) for d in p["directions"]}
        sub.done()
    else:
        value = t.float("scale", 1.0, min=0.0)
        p["scale"] = {d: value for d in p["directions"]}
    p["combination"] = t.str("combination", "CQC", aliases={"cqc": "CQC", "srss": "SRSS"},
                             choices=COMBINATIONS)
    p["direction_combination"] = t.str("direction_combination", "SRSS",
                                       aliases={"srss": "SRSS"},
                                       choices=DIRECTION_COMBINATIONS)
    damping = t.raw("modal_damping", None)
    if damping is not None:
        values = check_float_list(damping if isinstance(damping, list) else [damping],
                                  t.key("modal_damping"))
        if any(x < 0 or x >= 1 for x in values):
            raise t.error("modal_damping", "ratios must be >= 0 and < 1")
        damping = values
    p["modal_damping"] = damping
    p["residual"] = t.bool("residual", False)
    p["residual_acceleration"] = t.raw("residual_acceleration", None)
    if p["residual_acceleration"] is not None:
        if not p["residual"]:
            raise t.error("residual_acceleration", "give it with residual = true")
        p["residual_acceleration"] = t.float("residual_acceleration", min=0.0)
    p["max_frequency"] = t.float("max_frequency", None, positive=True)

