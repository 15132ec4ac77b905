"""The link laws, one module each, and their registry: one row per law (``LAWS``), from
which the study reader, the scheme catalog's feature matrix, the links of an analysis and
their results are made. What a law module declares is ``fem.laws.contract``.

Adding a law: its module here (its own columns from ``fem.laws.columns.own``), its row in
``_MODULES`` below, its branch in the compiled dispatch (``fem.links.law``), its docs and
tests.
"""

from __future__ import annotations

import numpy as np

from fem.laws import (bouc_wen, buckling, damper, force_curve, force_function, impact,
                      isolator, maxwell, plastic, shock)
from fem.laws.columns import SHARED_P, SHARED_V
from fem.laws.contract import Feature, Instants, Law, Series

__all__ = ["Feature", "Law", "Series", "LAWS", "KINDS", "FEATURES", "NP", "NV", "law", "module",
           "of_code", "instants", "markdown_series"]

#: the law modules, by kind, in the order of the catalog's matrix
_MODULES = {"shock": shock, "impact": impact, "maxwell": maxwell, "damper": damper,
            "plastic": plastic, "bouc_wen": bouc_wen, "isolator": isolator,
            "force_curve": force_curve, "force_function": force_function,
            "buckling": buckling}

LAWS: tuple[Law, ...] = tuple(m.LAW for m in _MODULES.values())
KINDS = tuple(_MODULES)
FEATURES: dict[str, Feature] = {f.name: f for row in LAWS for f in row.features}

#: the widths of the parameter rows P and value rows V of every contact: the shared columns
#: and the own columns of the widest law (``fem.laws.columns.own``)
NP = max([SHARED_P] + [row.own.width_p for row in LAWS])
NV = max([SHARED_V] + [row.own.width_v for row in LAWS])


#: the law module of each contact kind code (column KIND of a parameter row)
_BY_CODE = {code: m for m in _MODULES.values() for code in m.CODES}
assert len(_BY_CODE) == sum(len(m.CODES) for m in _MODULES.values()), "a kind code is taken twice"

#: by kind code, whether the law has event functions (read by the compiled dispatch, which
#: then needs no branch of its own for a law without events)
EVENTFUL = np.zeros(max(_BY_CODE) + 1, np.bool_)
for _code, _module in _BY_CODE.items():
    EVENTFUL[_code] = any(f.events for f in _module.LAW.features)


def of_code(code) -> object:
    """The module of the law of a contact whose KIND column is ``code``."""
    return _BY_CODE[int(code)]


_INSTANTS = {m: Instants(m) for m in _MODULES.values()}


def instants(module) -> Instants:
    """The handlers at instants of a law module (``fem.laws.contract.Instants``)."""
    return _INSTANTS[module]


def law(kind: str) -> Law:
    return _MODULES[kind].LAW


def module(kind: str):
    """The module of the law of ``kind``."""
    return _MODULES[kind]


def markdown_series() -> str:
    """The archived series of every law as a markdown table (docs/results_format.md): series,
    unit, the law (and the option it comes with), meaning."""
    lines = ["| series | unit | links | meaning |", "| --- | --- | --- | --- |"]
    for row in LAWS:
        for series in row.series:
            links = row.kind + (f", with {series.when}" if series.when else "")
            lines.append(f"| `{series.name}` | {series.unit} | {links} | "
                         f"{series.doc.replace('|', '/')} |")
    return "\n".join(lines)
