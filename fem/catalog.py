"""The one table of transient schemes: what each (basis, scheme) pair is called, which keys it
accepts with their defaults, which link features it runs, and how it steps.

Nothing in fem knows these facts anywhere else: the study reader validates an analysis block
against :data:`SCHEMES`, the factory builds the scheme a row names, ``fem schemes`` prints
the link matrix, and a test keeps the table of docs/study_format.md equal to
:func:`feature_matrix`. This module imports nothing from fem but the law registry (itself
free of imports), so that any layer may read it.

A row's ``features`` maps each link feature of the law registry (``fem.laws``) to
``True`` (the scheme runs it) or to the physical reason why it cannot: it follows from the
features' capability flags, never from a law's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from fem import laws as registry

#: link features, in the order of the matrix
FEATURES = tuple(registry.FEATURES)

FEATURE_TITLES = {name: f.title for name, f in registry.FEATURES.items()}

BASES = ("physical", "modal")

#: keys every transient analysis accepts, whatever its scheme
COMMON_KEYS = ("name", "kind", "basis", "scheme", "start", "end", "step", "steps", "loads",
               "initial", "links", "archive", "fields", "events")
#: keys every transient analysis on a modal basis accepts
MODAL_KEYS = ("modes", "damping", "modal_damping", "nodes", "static_correction")


@dataclass(frozen=True)
class Key:
    """A scheme-specific key of an ``[[analysis]]`` block.

    ``default`` is a constant, or a function of the keys read before this one (a dict) for
    defaults that follow from another key; ``choices`` lists the accepted strings; ``low``
    and ``high`` bound a number (inclusive); ``doc`` is the line the docs print.
    """
    name: str
    kind: type
    default: object = None
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    positive: bool = False
    doc: str = ""

    def default_for(self, values: dict):
        return self.default(values) if callable(self.default) else self.default


@dataclass(frozen=True)
class SchemeInfo:
    """One (basis, scheme) pair.

    name : canonical name; aliases : other accepted names, lower case (code_aster's among
    them); keys : scheme-specific keys, in reading order; features : link feature -> True
    or the reason it is refused; needs_step : ``step`` (or ``steps``) is required; adaptive :
    the scheme chooses its own steps; events : default of ``events``; event_modes : accepted
    values of ``events``; order : order of accuracy of the step (0: exact between events);
    code_aster : the name code_aster gives the scheme; summary : one line for the docs.
    """
    basis: str
    name: str
    aliases: tuple
    keys: tuple
    features: dict
    needs_step: bool
    adaptive: bool
    events: str
    event_modes: tuple
    order: int
    code_aster: str
    summary: str
    step_doc: str = ""

    def offers(self, feature: str) -> bool:
        return self.features.get(feature) is True

    def reason(self, feature: str) -> str | None:
        value = self.features.get(feature)
        return None if value is True else str(value)

    def key(self, name: str) -> Key | None:
        return next((k for k in self.keys if k.name == name), None)


# ------------------------------------------------------------------------------- keys
_INITIAL_ACCELERATION = Key(
    "initial_acceleration", str, "equilibrium", choices=("equilibrium", "zero"),
    doc='"equilibrium" (default): a0 from M a0 = F(t0) - C v0 - K u0 and the link forces; '
        '"zero": a0 = 0, as code_aster\'s Newmark and HHT start')
_BETA = Key("beta", float, 0.25, low=0.0, high=0.5, doc="Newmark beta (default 1/4)")
_GAMMA = Key("gamma", float, 0.5, low=0.0, high=1.0, doc="Newmark gamma (default 1/2)")
_ALPHA = Key("alpha", float, -0.1, low=-1.0 / 3.0, high=0.0,
             doc="HHT alpha in [-1/3, 0] (default -0.1)")
_HHT_BETA = Key("beta", float, lambda p: (1.0 - p["alpha"]) ** 2 / 4.0, low=0.0, high=0.5,
                doc="default (1 - alpha)^2 / 4")
_HHT_GAMMA = Key("gamma", float, lambda p: 0.5 - p["alpha"], low=0.0, high=1.0,
                 doc="default 1/2 - alpha")
_EQUILIBRIUM = Key(
    "equilibrium", str, "alpha", choices=("alpha", "modified"),
    doc='"alpha" (default): the HHT equilibrium at t_n+1 + alpha dt; "modified": the Newmark '
        'step with HHT\'s beta and gamma, equilibrium at the end of the step (code_aster\'s '
        "MODI_EQUI = 'NON')")
_VELOCITY = Key(
    "velocity", str, "step", choices=("step", "half_step"),
    doc='archived velocity: "step" (default) the velocity at the archived instant, '
        'second-order accurate; "half_step" the velocity of the step that ends there, '
        "(u_n - u_n-1) / dt, the one code_aster's DIFF_CENTRE archives")
_TOLERANCE = Key("tolerance", float, 1e-6, low=1e-14,
                 doc="accuracy target of the step control (default 1e-6; 1e-14 at the "
                     "finest: below, round-off outweighs the error it controls)")
_MAX_STEP = Key("max_step", float, None, positive=True,
                doc="largest step (s, default (end - start) / 100)")
_MIN_STEP = Key("min_step", float, None, positive=True,
                doc="smallest step (s, default 1e-12 (end - start))")
_ADAPTIVE_KEYS = (_TOLERANCE, _MAX_STEP, _MIN_STEP)

# ------------------------------------------------------------------------------- features
_ALL = {f: True for f in FEATURES}


def _exact_cell(feature: registry.Feature):
    """What the exact scheme does with a feature: it needs equations linear between events
    (an internal variable with a linear rate equation, a dashpot in series, joins its
    propagated state)."""
    if not feature.linear:
        return feature.nonlinear
    return True


#: what the exact scheme cannot do, and why
_EXACT = {name: _exact_cell(f) for name, f in registry.FEATURES.items()}

_FIXED = "the step of the scheme (required)"
_GRID = ("the output grid (optional): states between the accepted steps come from the dense "
         "output; without it, every accepted step is archived")


def _row(basis, name, aliases, keys, *, features=None, needs_step=True, adaptive=False,
         events="step", order=2, code_aster="", summary="", step_doc=_FIXED):
    return SchemeInfo(basis=basis, name=name, aliases=tuple(aliases), keys=tuple(keys),
                      features=dict(features or _ALL), needs_step=needs_step,
                      adaptive=adaptive, events=events, event_modes=("locate", "step"),
                      order=order, code_aster=code_aster, summary=summary,
                      step_doc=step_doc)


_NEWMARK = dict(aliases=("newmark",), keys=(_BETA, _GAMMA, _INITIAL_ACCELERATION),
                code_aster="NEWMARK", summary="Newmark beta-gamma, implicit (average "
                "acceleration by default: unconditionally stable)")
_HHT = dict(aliases=("hht",), keys=(_ALPHA, _HHT_BETA, _HHT_GAMMA, _EQUILIBRIUM,
                                    _INITIAL_ACCELERATION),
            code_aster="HHT", summary="Hilber-Hughes-Taylor alpha, implicit, damps the highest "
            "frequencies")
_CD = dict(aliases=("central_difference", "diff_centre"),
           keys=(_INITIAL_ACCELERATION, _VELOCITY), code_aster="DIFF_CENTRE",
           summary="central differences, explicit (stable for omega_max dt < 2)")
_RK4 = dict(aliases=("rk4", "runge_kutta_4"), keys=(), order=4, events="locate",
            summary="classical fourth-order Runge-Kutta at a fixed step")
_EXACT_ROW = dict(aliases=("exact",), keys=(), features=_EXACT, needs_step=False,
                  events="locate", order=0,
                  summary="exact propagation of each phase between events (systems linear "
                          "between events)",
                  step_doc="the archive grid (optional, default 100 instants); it does not "
                           "affect accuracy")

SCHEMES: dict[tuple[str, str], SchemeInfo] = {}
for _info in (
    _row("physical", "newmark", **_NEWMARK),
    _row("physical", "hht", **_HHT),
    _row("physical", "central_difference", **_CD),
    _row("physical", "exact", **_EXACT_ROW),
    _row("physical", "rk4", **_RK4),
    _row("modal", "central_difference", **_CD),
    _row("modal", "euler", ("euler", "adapt_ordre1"), _ADAPTIVE_KEYS, needs_step=False,
         adaptive=True, events="locate", order=1, code_aster="ADAPT_ORDRE1",
         summary="semi-implicit Euler; adaptive (apparent frequency) without step, fixed "
                 "with step",
         step_doc="with step: a fixed-step scheme; without: adaptive"),
    _row("modal", "adaptive2", ("adaptive2", "adapt_ordre2"), _ADAPTIVE_KEYS,
         needs_step=False, adaptive=True, events="locate", order=2, code_aster="ADAPT_ORDRE2",
         summary="velocity Verlet with a step that follows the apparent frequency",
         step_doc=_GRID),
    _row("modal", "devogelaere", ("devogelaere", "devoge"), _ADAPTIVE_KEYS, needs_step=False,
         adaptive=True, events="locate", order=4, code_aster="DEVOGE",
         summary="De Vogelaere-Fu, fourth order, adaptive", step_doc=_GRID),
    _row("modal", "rk32", ("rk32", "runge_kutta_32"), _ADAPTIVE_KEYS, needs_step=False,
         adaptive=True, events="locate", order=3, code_aster="RUNGE_KUTTA_32",
         summary="Bogacki-Shampine 3(2), adaptive", step_doc=_GRID),
    _row("modal", "rk54", ("rk54", "runge_kutta_54"), _ADAPTIVE_KEYS, needs_step=False,
         adaptive=True, events="locate", order=5, code_aster="RUNGE_KUTTA_54",
         summary="Dormand-Prince 5(4), adaptive", step_doc=_GRID),
    _row("modal", "newmark", **_NEWMARK),
    _row("modal", "exact", **_EXACT_ROW),
    _row("modal", "rk4", **_RK4),
):
    SCHEMES[(_info.basis, _info.name)] = _info

#: every name a study may give a scheme (lower case) -> canonical name
ALIASES: dict[str, str] = {}
for _info in SCHEMES.values():
    for _alias in (_info.name, *_info.aliases):
        ALIASES[_alias.lower()] = _info.name


def schemes(basis: str) -> tuple[str, ...]:
    """Canonical names of the schemes of a basis, in table order."""
    return tuple(name for (b, name) in SCHEMES if b == basis)


def info(basis: str, name: str) -> SchemeInfo | None:
    """The row of (basis, canonical name), or None."""
    return SCHEMES.get((basis, name))


def scheme_keys() -> set[str]:
    """Every scheme-specific key of any row (to tell "does not apply" from "unknown")."""
    return {k.name for row in SCHEMES.values() for k in row.keys}


def feature_matrix() -> list[tuple[str, str, list]]:
    """(basis, scheme, [True or reason per feature of FEATURES]) rows, in table order."""
    return [(row.basis, row.name, [row.features[f] for f in FEATURES])
            for row in SCHEMES.values()]


def _marked_matrix() -> tuple[list[str], list[tuple[str, str, list[str]]]]:
    """(reasons in order of first use, [(basis, scheme, ["yes" or "no (i)" per feature)])."""
    notes: list[str] = []
    rows = []
    for basis, name, cells in feature_matrix():
        out = []
        for cell in cells:
            if cell is True:
                out.append("yes")
            else:
                if cell not in notes:
                    notes.append(cell)
                out.append(f"no ({notes.index(cell) + 1})")
        rows.append((basis, name, out))
    return notes, rows


def matrix_text(reasons: bool = True) -> str:
    """The link-feature matrix as text (``fem schemes``): "yes", or "no" with a numbered
    reason listed below the table."""
    head = ["basis", "scheme"] + [FEATURE_TITLES[f] for f in FEATURES]
    notes, marked = _marked_matrix()
    rows = [[basis, name] + out for basis, name, out in marked]
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if reasons and notes:
        lines.append("")
        lines += [f"({i + 1}) {note}" for i, note in enumerate(notes)]
    return "\n".join(lines)


def markdown_matrix() -> str:
    """The link-feature matrix as a markdown table, its numbered reasons listed below it
    (the table of docs/study_format.md)."""
    notes, marked = _marked_matrix()
    lines = ["| basis | scheme | " + " | ".join(FEATURE_TITLES[f] for f in FEATURES) + " |",
             "|---|---|" + "---|" * len(FEATURES)]
    for basis, name, out in marked:
        lines.append(f"| {basis} | `{name}` | " + " | ".join(out) + " |")
    for i, note in enumerate(notes):
        lines += ["", f"({i + 1}) {note}"]
    return "\n".join(lines)


class _Reads(dict):
    """The values read so far, noting which of them a derived default reads."""

    def __init__(self, values: dict):
        super().__init__(values)
        self.names: list[str] = []

    def __getitem__(self, name):
        self.names.append(name)
        return super().__getitem__(name)


def row_defaults(row: SchemeInfo) -> dict[str, tuple[object, tuple[str, ...]]]:
    """name -> (default when no key of the row is given, names of the keys it follows)."""
    values: dict = {}
    out = {}
    for key in row.keys:
        reads = _Reads(values)
        values[key.name] = key.default_for(reads)
        out[key.name] = (values[key.name], tuple(reads.names))
    return out


def _value_text(value) -> str:
    """A default as a study writes it."""
    if value is None:
        return "automatic"
    if isinstance(value, str):
        return f'"{value}"'
    return f"{value:g}"


def _number_text(x: float) -> str:
    for denominator in (2, 3, 4, 6, 8):
        numerator = round(x * denominator)
        if numerator % denominator and abs(numerator / denominator - x) < 1e-12:
            return f"{numerator}/{denominator}"
    return f"{x:g}"


def _range_text(key: Key) -> str:
    """What values a key accepts."""
    if key.choices:
        return ", ".join(f'"{c}"' for c in key.choices)
    if key.low is not None and key.high is not None:
        return f"{_number_text(key.low)} to {_number_text(key.high)}"
    if key.low is not None:
        return f">= {_number_text(key.low)}"
    if key.high is not None:
        return f"<= {_number_text(key.high)}"
    return "> 0" if key.positive else "any"


def _default_text(row: SchemeInfo, key: Key) -> str:
    value, follows = row_defaults(row)[key.name]
    text = _value_text(value)
    if follows:
        text += " with the default " + ", ".join(follows)
    return text


def _key_rows() -> list[tuple[Key, list[str], SchemeInfo]]:
    """(key, names of the schemes it belongs to, first row holding it), in table order."""
    found: dict[Key, tuple[list[str], SchemeInfo]] = {}
    for row in SCHEMES.values():
        for key in row.keys:
            names, _ = found.setdefault(key, ([], row))
            if row.name not in names:
                names.append(row.name)
    return [(key, names, row) for key, (names, row) in found.items()]


def markdown_keys() -> str:
    """The scheme-specific keys as a markdown table (docs/study_format.md): key, schemes
    that accept it, default, accepted values, meaning."""
    lines = ["| key | schemes | default | values | meaning |", "|---|---|---|---|---|"]
    for key, names, row in _key_rows():
        schemes_text = ", ".join(f"`{n}`" for n in names)
        lines.append(f"| `{key.name}` | {schemes_text} | {_default_text(row, key)} | "
                     f"{_range_text(key)} | {key.doc.replace('|', '/')} |")
    return "\n".join(lines)


def keys_text(width: int = 100) -> str:
    """The keys each scheme accepts beyond the common ones, with their defaults and docs
    (``fem schemes --keys``)."""
    import textwrap

    lines: list[str] = []
    for row in SCHEMES.values():
        names = [row.code_aster] if row.code_aster else []
        names += [a for a in row.aliases if a != row.name and a != row.code_aster.lower()]
        also = f" ({', '.join(names)})" if names else ""
        if lines:
            lines.append("")
        lines += textwrap.wrap(f"{row.basis} {row.name}{also}: {row.summary}", width,
                               subsequent_indent="    ")
        entries = [("step", row.step_doc),
                   (f'events = "{row.events}"',
                    "contact changes: " + ", ".join(f'"{m}"' for m in row.event_modes))]
        entries += [(f"{key.name} = {_default_text(row, key)}",
                     f"{key.doc} [{_range_text(key)}]") for key in row.keys]
        column = max(len(name) for name, _ in entries) + 4
        for name, doc in entries:
            wrapped = textwrap.wrap(doc, width - column) or [""]
            lines.append(f"  {name.ljust(column - 2)}{wrapped[0]}")
            lines += [" " * column + more for more in wrapped[1:]]
    return "\n".join(lines)
