"""Checks of computed results against references: parse ``[[check]]`` tables, evaluate, report.

A check compares one computed number with a reference, in the manner of code_aster's
TEST_RESU: a field value at an archived instant, a modal quantity of one mode, the time of
one event, or a global error measure of a transient run.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass

import numpy as np

from postpro import layout
from postpro.energy import energy_balance_error, link_force_error
from postpro.errors import CheckSpecError, PostproError
from postpro.results import (ModalAnalysis, RandomAnalysis, Results, StaticAnalysis,
                             TransientAnalysis)

COMPONENTS = ("DX", "DY", "DZ", "DRX", "DRY", "DRZ")
MODAL_QUANTITIES = ("frequency", "damped_frequency", "damping_ratio", "generalized_mass")
#: the quantities of a random analysis, of one column of a ``field`` (a nodal field at a
#: node, an element force at an element, a reaction at a node)
RANDOM_QUANTITIES = ("rms", "psd", "zero_crossing_rate")
#: what their ``field`` may be
RANDOM_CHECK_FIELDS = layout.RANDOM_FIELDS + ("element_force", "reaction")

# quantity -> (locator keys it requires, locator keys it accepts)
QUANTITIES = {
    # time: required on a transient analysis, refused on a static one (checked with the
    # study, which knows the analysis' kind)
    **{field: (("node", "component"), ("time", "interpolate")) for field in layout.NODAL_FIELDS},
    **{name: (("mode",), ()) for name in MODAL_QUANTITIES},
    "element_force": (("element", "component"), ("time", "interpolate")),
    "reaction": (("node", "component"), ("time", "interpolate")),
    "event_time": (("event",), ("link", "kind")),
    "energy_balance_error": ((), ()),
    "link_force_error": (("link",), ()),
    "rms": (("component",), ("field", "node", "element")),
    "psd": (("component", "frequency"), ("field", "node", "element", "interpolate")),
    "zero_crossing_rate": (("component",), ("field", "node", "element")),
}
_COMMON_REQUIRED = ("quantity", "reference")
_COMMON_OPTIONAL = ("analysis", "tolerance", "absolute")
_KEYS = ("analysis", "quantity", "node", "element", "component", "time", "mode", "event",
         "kind", "link", "reference", "tolerance", "absolute", "interpolate", "field",
         "frequency")
#: the components of an element force, and of a reaction
ELEMENT_COMPONENTS = ("N", "VY", "VZ", "MT", "MFY", "MFZ")
REACTION_COMPONENTS = ("FX", "FY", "FZ", "MX", "MY", "MZ")
DEFAULT_TOLERANCE = 1e-3


@dataclass(frozen=True)
class CheckSpec:
    """One validated ``[[check]]`` table.

    ``path`` is its key path (``check[2]``) for messages; ``time`` is in s; ``mode`` and
    ``event`` count from 1; ``tolerance`` is relative unless ``absolute``; ``field`` (the
    quantities of a random analysis: displacement by default) is the PSD whose RMS, value
    at ``frequency`` (Hz) or zero crossing rate is checked.
    """

    path: str
    quantity: str
    reference: float
    analysis: str | None = None
    tolerance: float = DEFAULT_TOLERANCE
    absolute: bool = False
    node: str | None = None
    element: str | None = None
    component: str | None = None
    time: float | None = None
    interpolate: bool = False
    mode: int | None = None
    event: int | None = None
    link: str | None = None
    kind: str | None = None
    field: str | None = None
    frequency: float | None = None


@dataclass(frozen=True)
class CheckRow:
    """The outcome of one check.

    ``error`` is ``|computed - reference|``, divided by ``|reference|`` unless ``absolute``;
    ``note`` explains a relative check turned absolute because its reference is 0.
    """

    analysis: str
    quantity: str
    node: str
    component: str
    at: str
    reference: float
    computed: float
    tolerance: float
    absolute: bool
    error: float
    passed: bool
    note: str = ""


def _describe(value) -> str:
    """A value as the user wrote it in TOML, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


def _string(path, value, _key=None):
    if not isinstance(value, str) or not value:
        raise CheckSpecError(f"{path}: expected a non-empty string, got {_describe(value)}")
    return value


def _number(path, value, _key=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CheckSpecError(f"{path}: expected a number, got {_describe(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise CheckSpecError(f"{path}: the integer is too large for a number "
                             f"({len(str(abs(value)))} digits)") from None
    if not math.isfinite(number):
        raise CheckSpecError(f"{path}: expected a finite number, got {_describe(value)}")
    return number


def _positive_number(path, value, _key=None):
    number = _number(path, value)
    if number <= 0.0:
        raise CheckSpecError(f"{path}: must be > 0, got {_describe(value)}")
    return number


def _count(path, value, key):
    if isinstance(value, bool) or not isinstance(value, int):
        raise CheckSpecError(f"{path}: expected an integer, got {_describe(value)}")
    if value < 1:
        raise CheckSpecError(f"{path}: {key}s are numbered from 1, got {value}")
    return value


def _boolean(path, value, _key=None):
    if not isinstance(value, bool):
        raise CheckSpecError(f"{path}: expected true or false, got {_describe(value)}")
    return value


def _component(path, value, _key=None):
    _string(path, value)
    if value not in COMPONENTS + ELEMENT_COMPONENTS + REACTION_COMPONENTS:
        raise CheckSpecError(f"{path}: unknown component {_describe(value)} (known: "
                             f"{', '.join(COMPONENTS)})")
    return value


def _field_name(path, value, _key=None):
    _string(path, value)
    if value not in RANDOM_CHECK_FIELDS:
        raise CheckSpecError(f"{path}: unknown field {_describe(value)} (known: "
                             f"{', '.join(RANDOM_CHECK_FIELDS)})")
    return value


def _frequency(path, value, _key=None):
    number = _number(path, value)
    if number < 0.0:
        raise CheckSpecError(f"{path}: a frequency is >= 0 Hz, got {_describe(value)}")
    return number


def _component_of(quantity: str, path: str, component: str):
    """The component set of a quantity: dofs, element force or reaction components."""
    known = {"element_force": ELEMENT_COMPONENTS, "reaction": REACTION_COMPONENTS}.get(
        quantity, COMPONENTS)
    if component is not None and component not in known:
        raise CheckSpecError(f"{path}.component: unknown component {_describe(component)} for "
                             f"quantity '{quantity}' (known: {', '.join(known)})")


_PARSERS = {
    "analysis": _string, "node": _string, "element": _string, "link": _string, "kind": _string,
    "component": _component, "reference": _number, "time": _number,
    "tolerance": _positive_number, "mode": _count, "event": _count,
    "absolute": _boolean, "interpolate": _boolean, "field": _field_name,
    "frequency": _frequency,
}


def parse_checks(tables, prefix: str = "check") -> list[CheckSpec]:
    """Validate ``[[check]]`` tables as read from TOML.

    Parameters
    ----------
    tables : list of dict
        The ``check`` array of tables.
    prefix : str
        Name of the array in messages.

    Returns
    -------
    list of CheckSpec

    Raises
    ------
    CheckSpecError
        On the first problem, with a message starting with the key path of the fault:
        ``check[3].time: expected a number, got "abc"``. Tables are numbered from 1, as
        users count the ``[[check]]`` blocks of their file.
    """
    if not isinstance(tables, list):
        raise CheckSpecError(f"{prefix}: expected an array of tables, got {_describe(tables)}")
    return [_parse_one(table, f"{prefix}[{i}]") for i, table in enumerate(tables, start=1)]


def _parse_one(table, path: str) -> CheckSpec:
    if not isinstance(table, dict):
        raise CheckSpecError(f"{path}: expected a table, got {_describe(table)}")
    for key in table:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise CheckSpecError(f"{path}: unknown key '{key}'{hint}")
    if "quantity" not in table:
        raise CheckSpecError(f"{path}: missing key 'quantity'")
    quantity = _string(f"{path}.quantity", table["quantity"])
    if quantity not in QUANTITIES:
        raise CheckSpecError(f"{path}.quantity: unknown quantity '{quantity}' (known: "
                             f"{', '.join(QUANTITIES)})")
    required, optional = QUANTITIES[quantity]
    for key in table:
        if key not in _COMMON_REQUIRED + _COMMON_OPTIONAL + required + optional:
            takes = ", ".join(required + optional) or "no locator"
            raise CheckSpecError(f"{path}.{key}: not used with quantity '{quantity}' (it takes "
                                 f"{takes})")
    for key in _COMMON_REQUIRED + required:
        if key not in table:
            raise CheckSpecError(f"{path}: missing key '{key}' (quantity '{quantity}' needs "
                                 f"{', '.join(_COMMON_REQUIRED + required)})")
    values = {key: _PARSERS[key](f"{path}.{key}", value, key)
              for key, value in table.items() if key != "quantity"}
    if quantity in RANDOM_QUANTITIES:
        _random_locator(quantity, path, values)
        _component_of(values["field"], path, values.get("component"))
    else:
        _component_of(quantity, path, values.get("component"))
    return CheckSpec(path=path, quantity=quantity, **values)


def _random_locator(quantity: str, path: str, values: dict):
    """A quantity of a random analysis names a node, or an element for element_force."""
    values.setdefault("field", "displacement")
    wants, other = (("element", "node") if values["field"] == "element_force" else
                    ("node", "element"))
    if other in values:
        raise CheckSpecError(f"{path}.{other}: not used with field '{values['field']}' (it "
                             f"takes {wants} and component)")
    if wants not in values:
        raise CheckSpecError(f"{path}: missing key '{wants}' (quantity '{quantity}' of field "
                             f"'{values['field']}' needs {wants} and component)")


def evaluate(results: Results, specs: list[CheckSpec]) -> list[CheckRow]:
    """Compute the quantity of each check and compare it with its reference.

    Returns
    -------
    list of CheckRow
        In the order of ``specs``.

    Raises
    ------
    PostproError
        A check that cannot be evaluated (unknown analysis, node, component, a time not
        archived, ...); the message starts with its key path, ``check[2]: ...``.
    """
    analyses = {}
    rows = []
    for spec in specs:
        try:
            if spec.analysis not in analyses:
                analyses[spec.analysis] = results.analysis(spec.analysis)
            analysis = analyses[spec.analysis]
            computed, at = _compute(analysis, spec)
        except PostproError as exc:
            raise PostproError(f"{spec.path}: {exc}") from exc
        rows.append(_compare(spec, analysis.name, computed, at))
    return rows


def _require(analysis, spec: CheckSpec, cls, kinds: str):
    if not isinstance(analysis, cls):
        raise PostproError(f"quantity '{spec.quantity}' needs a {kinds} analysis, but "
                           f"'{analysis.name}' is of kind '{analysis.kind}'")


def _compute(analysis, spec: CheckSpec) -> tuple[float, str]:
    """The computed value of one check and its short location (``t=0.19``, ``mode=1``)."""
    if isinstance(analysis, StaticAnalysis) and spec.quantity in layout.FIELDS + (
            "element_force", "reaction"):
        if spec.quantity == "displacement":
            return analysis.value(spec.node, spec.component), analysis.kind
        if spec.quantity == "element_force":
            return analysis.element_force(spec.element, spec.component), analysis.kind
        if spec.quantity == "reaction":
            return analysis.reaction(spec.node, spec.component), analysis.kind
    if spec.time is None and spec.quantity in layout.NODAL_FIELDS + ("element_force", "reaction"):
        raise PostproError(f"quantity '{spec.quantity}' of a {analysis.kind} analysis needs "
                           f"a time")
    if spec.quantity in layout.NODAL_FIELDS:
        _require(analysis, spec, TransientAnalysis, "transient")
        value = analysis.value_at(spec.quantity, spec.node, spec.component, spec.time,
                                  interpolate=spec.interpolate)
        return value, f"t={spec.time:g}"
    if spec.quantity in ("element_force", "reaction"):
        _require(analysis, spec, TransientAnalysis, "transient")
        name = spec.element if spec.quantity == "element_force" else spec.node
        value = analysis.force_at(spec.quantity, name, spec.component, spec.time,
                                  interpolate=spec.interpolate)
        return value, f"t={spec.time:g}"
    if spec.quantity in RANDOM_QUANTITIES:
        _require(analysis, spec, RandomAnalysis, "random")
        name = spec.element if spec.field == "element_force" else spec.node
        if spec.quantity == "psd":
            value = analysis.psd_at(spec.field, name, spec.component, spec.frequency,
                                    interpolate=spec.interpolate)
            return value, f"{spec.field} f={spec.frequency:g} Hz"
        read = analysis.rms if spec.quantity == "rms" else analysis.zero_crossing_rate
        return read(spec.field, name, spec.component), spec.field
    if spec.quantity in MODAL_QUANTITIES:
        _require(analysis, spec, ModalAnalysis, "modes or complex_modes")
        return analysis.mode_value(spec.quantity, spec.mode), f"mode={spec.mode}"
    _require(analysis, spec, TransientAnalysis, "transient")
    if spec.quantity == "event_time":
        return _event_time(analysis, spec), f"event={spec.event}"
    if spec.quantity == "energy_balance_error":
        return _energy_balance(analysis), ""
    return _link_force(analysis, spec), f"link={spec.link}"


def _event_time(analysis: TransientAnalysis, spec: CheckSpec) -> float:
    events = analysis.events
    chosen = np.ones(len(events), dtype=bool)
    if spec.link is not None:
        chosen &= events["link"] == spec.link
    if spec.kind is not None:
        chosen &= events["kind"] == spec.kind
    times = events["time"][chosen]
    if spec.event > len(times):
        filters = (("link", spec.link), ("kind", spec.kind))
        which = "".join(f" {key} '{value}'" for key, value in filters if value is not None)
        raise PostproError(f"event {spec.event} asked, but analysis '{analysis.name}' has "
                           f"{len(times)} events{' with' + which if which else ''}")
    return float(times[spec.event - 1])


def _energy_balance(analysis: TransientAnalysis) -> float:
    terms = analysis.energy()
    if len(terms) == 1:
        raise PostproError(f"analysis '{analysis.name}' archived no energy terms")
    # a term the analysis does not produce (no links, no damping) is zero
    absent = np.zeros_like(terms["time"])
    names = ("kinetic", "potential", "link_energy", "dissipated", "external_work")
    return energy_balance_error(*(terms.get(name, absent) for name in names))


def _link_force(analysis: TransientAnalysis, spec: CheckSpec) -> float:
    link = analysis.link(spec.link)
    for needed in ("normal_force", "penetration", "stiffness"):
        if needed not in link:
            raise PostproError(f"link '{spec.link}' of analysis '{analysis.name}' has no "
                               f"'{needed}', which link_force_error needs")
    return link_force_error(link["normal_force"], link["penetration"], float(link["stiffness"]))


def _compare(spec: CheckSpec, analysis: str, computed: float, at: str) -> CheckRow:
    # a relative error to a zero reference is undefined: compare absolutely instead
    absolute = spec.absolute or spec.reference == 0.0
    note = "reference is 0: compared absolutely" if absolute and not spec.absolute else ""
    difference = abs(computed - spec.reference)
    error = difference if absolute else difference / abs(spec.reference)
    return CheckRow(analysis=analysis, quantity=spec.quantity,
                    node=spec.node or spec.element or "",
                    component=spec.component or "", at=at, reference=spec.reference,
                    computed=float(computed), tolerance=spec.tolerance, absolute=absolute,
                    error=error, passed=bool(error <= spec.tolerance), note=note)


def format_table(rows: list[CheckRow]) -> str:
    """A fixed-width report: one line per check, then ``N passed, M failed``.

    Relative errors and tolerances are shown in %, absolute ones in the unit of the
    quantity followed by ``abs``.
    """
    header = ("ANALYSIS", "QUANTITY", "NODE/CMP", "AT", "REFERENCE", "COMPUTED", "ERROR",
              "TOLERANCE", "RESULT")
    right_aligned = {4, 5, 6, 7}
    lines = [header] + [_cells(row) for row in rows]
    widths = [max(len(line[c]) for line in lines) for c in range(len(header))]
    text = []
    for line, row in zip(lines, [None] + rows):
        cells = [cell.rjust(w) if c in right_aligned else cell.ljust(w)
                 for c, (cell, w) in enumerate(zip(line, widths))]
        note = f"  ({row.note})" if row is not None and row.note else ""
        text.append(("  ".join(cells)).rstrip() + note)
    passed = sum(row.passed for row in rows)
    text.append(f"{passed} passed, {len(rows) - passed} failed")
    return "\n".join(text)


def _cells(row: CheckRow) -> tuple[str, ...]:
    if row.absolute:
        error, tolerance = f"{row.error:.3g}", f"{row.tolerance:.3g} abs"
    else:
        error, tolerance = f"{100 * row.error:.3g}%", f"{100 * row.tolerance:.3g}%"
    where = f"{row.node}/{row.component}" if row.node else "-"
    return (row.analysis, row.quantity, where, row.at or "-", f"{row.reference:.7g}",
            f"{row.computed:.7g}", error, tolerance, "OK" if row.passed else "NOOK")


def rows_for_file(rows: list[CheckRow]) -> list[dict]:
    """Rows as dicts with the keys of ``layout.CHECK_COLUMNS``, for the ``/checks`` table."""
    return [{column: getattr(row, column) for column in layout.CHECK_COLUMNS} for row in rows]
