"""Study file (TOML) -> typed, validated :class:`Study`. All input validation lives here.

Block indices in messages count from 1, as users count blocks: ``analysis[2].step`` is the
``step`` key of the second ``[[analysis]]`` block.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from fem.errors import StudyError
from fem.validate import Table, check_float, check_float_list

TRANSLATIONS = ("DX", "DY", "DZ")
ROTATIONS = ("DRX", "DRY", "DRZ")
COMPONENTS = TRANSLATIONS + ROTATIONS
FORCE_COMPONENTS = {"FX": "DX", "FY": "DY", "FZ": "DZ", "MX": "DRX", "MY": "DRY", "MZ": "DRZ"}
FIELDS = ("displacement", "velocity", "acceleration")

ANALYSIS_KINDS = ("modes", "complex_modes", "transient", "harmonic")
SCHEME_ALIASES = {
    "newmark": "newmark", "hht": "hht", "diff_centre": "central_difference",
    "central_difference": "central_difference", "euler": "euler", "adapt_ordre1": "euler",
    "adaptive2": "adaptive2", "adapt_ordre2": "adaptive2", "devoge": "devogelaere",
    "devogelaere": "devogelaere", "runge_kutta_32": "rk32", "rk32": "rk32",
    "runge_kutta_54": "rk54", "rk54": "rk54", "exact": "exact",
}
PHYSICAL_SCHEMES = ("newmark", "hht", "central_difference", "exact")
MODAL_SCHEMES = ("central_difference", "euler", "devogelaere", "adaptive2", "rk32", "rk54",
                 "newmark", "exact")
# keys each scheme accepts beyond the common transient keys
SCHEME_KEYS = {
    "newmark": {"beta", "gamma"},
    "hht": {"alpha", "beta", "gamma"},
    "central_difference": set(),
    "exact": set(),
    "euler": {"tolerance", "max_step", "min_step"},
    "adaptive2": {"tolerance", "max_step", "min_step"},
    "devogelaere": {"tolerance", "max_step", "min_step"},
    "rk32": {"tolerance", "max_step", "min_step"},
    "rk54": {"tolerance", "max_step", "min_step"},
}
LINK_KINDS = ("shock", "impact")
#: most time steps one transient analysis may take (its time grid is held in memory)
MAX_STEPS = 10**8


@dataclass(frozen=True)
class Targets:
    """Mesh entities a block applies to, by name."""
    nodes: tuple[str, ...] = ()
    node_groups: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    cell_groups: tuple[str, ...] = ()

    def empty(self) -> bool:
        return not (self.nodes or self.node_groups or self.cells or self.cell_groups)


@dataclass(frozen=True)
class MeshSpec:
    file: Path | None
    nodes: dict[str, tuple[float, float, float]]
    cells: dict[str, tuple[str, tuple[str, ...]]]
    node_groups: dict[str, tuple[str, ...]]
    cell_groups: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class DiscreteSpec:
    """Mass, stiffness, damping of discrete elements (SI units: kg, N/m, N.s/m)."""
    where: str
    targets: Targets
    mass: float | tuple | None = None          # scalar (kg) or 3x3 rows
    inertia: float | tuple | None = None       # scalar or 3x3 rows (kg.m^2)
    stiffness: tuple[float, ...] | None = None  # 3 (translations) or 6 values
    damping: tuple[float, ...] | None = None
    frame: str = "global"
    orientation: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class ImposedSpec:
    where: str
    targets: Targets
    values: dict[str, float]
    function: str | None


@dataclass(frozen=True)
class RelationSpec:
    where: str
    terms: tuple[tuple[str, str, float], ...]   # (node, component, coefficient)
    value: float
    function: str | None


@dataclass(frozen=True)
class LoadSpec:
    where: str
    name: str
    kind: str                   # force | gravity | base_acceleration
    targets: Targets
    values: dict[str, float]    # component (DX..DRZ) -> N or N.m, for kind = force
    g: float
    direction: tuple[float, float, float]
    function: str | None


@dataclass(frozen=True)
class InitialSpec:
    where: str
    targets: Targets
    displacement: dict[str, float]
    velocity: dict[str, float]


@dataclass(frozen=True)
class LinkSpec:
    where: str
    name: str
    kind: str
    nodes: tuple[str, ...]
    params: dict


@dataclass(frozen=True)
class AnalysisSpec:
    where: str
    index: int
    name: str
    kind: str
    params: dict = field(default_factory=dict)

    def get(self, key, default=None):
        return self.params.get(key, default)


@dataclass(frozen=True)
class Study:
    path: Path
    source: str
    title: str
    mesh: MeshSpec
    components: tuple[str, ...]
    discrete: tuple[DiscreteSpec, ...]
    imposed: tuple[ImposedSpec, ...]
    relations: tuple[RelationSpec, ...]
    functions: dict            # name -> TimeFunction
    loads: tuple[LoadSpec, ...]
    initial: tuple[InitialSpec, ...]
    links: tuple[LinkSpec, ...]
    analyses: tuple[AnalysisSpec, ...]
    checks: tuple             # postpro.checks.CheckSpec
    output: Path

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def analysis(self, name: str) -> AnalysisSpec:
        for a in self.analyses:
            if a.name == name:
                return a
        raise KeyError(name)


# ------------------------------------------------------------------------------------------
def load_study(path) -> Study:
    """Read and validate a study file. Raises :class:`StudyError` naming the key at fault."""
    path = Path(path)
    if not path.is_file():
        raise StudyError(f"study file not found: {path}")
    source = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from None
    return parse_study(data, path=path.resolve(), source=source)


def parse_study(data: dict, *, path: Path, source: str = "") -> Study:
    root = Table(data, "")
    base = path.parent
    study_t = root.table("study", None)
    title = path.stem
    if study_t is not None:
        title = study_t.str("title", title)
        study_t.done()
    mesh = _mesh(root.table("mesh"), base)
    model_t = root.table("model", None)
    components = TRANSLATIONS
    if model_t is not None:
        comps = model_t.str_list("components", list(TRANSLATIONS))
        for c in comps:
            if c not in COMPONENTS:
                raise model_t.error("components", f"unknown component '{c}' "
                                                  f"(known: {' '.join(COMPONENTS)})")
        if len(set(comps)) != len(comps) or not comps:
            raise model_t.error("components", "must list distinct components, at least one")
        components = tuple(c for c in COMPONENTS if c in comps)
        model_t.done()

    functions = _functions(root.table("functions", None), base)
    discrete = tuple(_discrete(t, components) for t in root.tables("discrete"))
    imposed, relations = [], []
    for t in root.tables("constraint"):
        if t.has("terms"):
            relations.append(_relation(t, components, functions))
        else:
            imposed.append(_imposed(t, components, functions))
    loads = tuple(_load(t, i, components, functions) for i, t in enumerate(root.tables("load")))
    _unique([ld.name for ld in loads], "load", "name")
    initial = tuple(_initial(t, components) for t in root.tables("initial"))
    links = tuple(_link(t, i, components) for i, t in enumerate(root.tables("link")))
    _unique([lk.name for lk in links], "link", "name")
    analyses = tuple(_analysis(t, i, loads, links, functions)
                     for i, t in enumerate(root.tables("analysis")))
    _unique([a.name for a in analyses], "analysis", "name")
    _cross_check_analyses(analyses)
    _check_function_domains(analyses, loads, imposed, relations, functions)
    checks = _checks(root.raw("check", []), analyses)
    out_t = root.table("output", None)
    output = Path(f"{path.stem}.h5")
    if out_t is not None:
        output = Path(out_t.str("file", str(output)))
        output = output if output.is_absolute() else base / output
        out_t.done()
    root.done()
    return Study(path=path, source=source, title=title, mesh=mesh, components=components,
                 discrete=discrete, imposed=tuple(imposed), relations=tuple(relations),
                 functions=functions, loads=loads, initial=initial, links=links,
                 analyses=analyses, checks=tuple(checks), output=output)


def _unique(names, block, key):
    seen = set()
    for i, n in enumerate(names):
        if n in seen:
            raise StudyError(f"{block}[{i + 1}].{key}: '{n}' is used by another [[{block}]] block")
        seen.add(n)


def _targets(t: Table, allowed=("nodes", "node_groups", "cells", "cell_groups"),
             required=True) -> Targets:
    kw = {k: tuple(t.str_list(k, [])) for k in allowed}
    targets = Targets(**kw)
    if required and targets.empty():
        raise StudyError(f"{t.where}: names no target (give one of: {', '.join(allowed)})")
    return targets


def _mesh(t: Table, base: Path) -> MeshSpec:
    file = t.str("file", None)
    if file is not None:
        file = Path(file) if Path(file).is_absolute() else base / file
        if not file.is_file():
            raise t.error("file", f"mesh file not found: {file}")
    nodes = {}
    nt = t.table("nodes", None)
    if nt is not None:
        for name in nt.data:
            xyz = nt.float_list(name, length=(1, 2, 3))
            nodes[name] = tuple(xyz + [0.0] * (3 - len(xyz)))
        nt.done()
    cells = {}
    ct = t.table("cells", None)
    if ct is not None:
        for name in ct.data:
            c = ct.table(name)
            ctype = c.str("type", choices=("SEG2", "POI1"))
            cnodes = tuple(c.str_list("nodes"))
            expected = 2 if ctype == "SEG2" else 1
            if len(cnodes) != expected:
                raise c.error("nodes", f"a {ctype} cell has {expected} node(s), got {len(cnodes)}")
            c.done()
            cells[name] = (ctype, cnodes)
        ct.done()
    groups = {}
    for key in ("node_groups", "cell_groups"):
        groups[key] = {}
        gt = t.table(key, None)
        if gt is not None:
            for name in gt.data:
                groups[key][name] = tuple(gt.str_list(name))
            gt.done()
    t.done()
    if file is None and not nodes:
        raise StudyError("mesh: give a mesh file (mesh.file) or inline nodes (mesh.nodes)")
    return MeshSpec(file=file, nodes=nodes, cells=cells, node_groups=groups["node_groups"],
                    cell_groups=groups["cell_groups"])


def _functions(t: Table | None, base: Path) -> dict:
    from fem.functions import build_function

    if t is None:
        return {}
    out = {}
    for name, spec in t.data.items():
        t.used.add(name)
        if not isinstance(spec, dict):
            raise StudyError(f"functions.{name}: expected a table")
        out[name] = build_function(name, spec, base)
    return out


def _function_ref(t: Table, functions: dict, key="function"):
    name = t.str(key, None)
    if name is not None and name not in functions:
        known = ", ".join(sorted(functions)) or "none defined"
        raise t.error(key, f"unknown function '{name}' (defined: {known})")
    return name


def _per_direction(t: Table, key: str):
    """A number (same along every direction) or a list of 3 (or 6 with rotations) values."""
    value = t.raw(key, None)
    if value is None:
        return None
    if isinstance(value, list):
        values = check_float_list(value, t.key(key), length=(3, 6))
    else:
        values = [check_float(value, t.key(key))] * 3
    if any(v < 0 for v in values):
        raise t.error(key, f"values must be >= 0, got {value}")
    return tuple(values)


def _mass_like(t: Table, key: str):
    value = t.raw(key, None)
    if value is None:
        return None
    if isinstance(value, list):
        if len(value) != 3 or not all(isinstance(r, list) for r in value):
            raise t.error(key, "expected a number or a 3x3 matrix [[..], [..], [..]]")
        rows = tuple(tuple(check_float_list(r, f"{t.key(key)}[{i + 1}]", 3))
                     for i, r in enumerate(value))
        import numpy as np
        m = np.array(rows)
        if not np.allclose(m, m.T, rtol=1e-12, atol=0):
            raise t.error(key, "the 3x3 matrix must be symmetric")
        if np.linalg.eigvalsh(m).min() < -1e-12 * max(1.0, abs(m).max()):
            raise t.error(key, "the 3x3 matrix must be positive semi-definite")
        return rows
    v = check_float(value, t.key(key))
    if v < 0:
        raise t.error(key, f"must be >= 0, got {v:g}")
    return v


def _discrete(t: Table, components) -> DiscreteSpec:
    targets = _targets(t)
    frame = t.str("frame", "global", choices=("global", "local"))
    orientation = t.float_list("orientation", None, length=3)
    spec = DiscreteSpec(
        where=t.where, targets=targets, mass=_mass_like(t, "mass"),
        inertia=_mass_like(t, "inertia"), stiffness=_per_direction(t, "stiffness"),
        damping=_per_direction(t, "damping"), frame=frame,
        orientation=tuple(orientation) if orientation else None)
    t.done()
    if spec.mass is None and spec.inertia is None and spec.stiffness is None and spec.damping is None:
        raise StudyError(f"{t.where}: gives none of mass, inertia, stiffness, damping")
    if spec.frame == "local" and (targets.nodes or targets.node_groups):
        raise StudyError(f"{t.where}.frame: a local frame needs SEG2 cells (cells / cell_groups)")
    for key, values in (("stiffness", spec.stiffness), ("damping", spec.damping)):
        if values is not None and len(values) == 6 and not any(c in ROTATIONS for c in components):
            raise t.error(key, "6 values given but the model has no rotations "
                               "(model.components)")
    if orientation and frame != "local":
        raise t.error("orientation", 'only applies with frame = "local"')
    return spec


def _imposed(t: Table, components, functions) -> ImposedSpec:
    targets = _targets(t, ("nodes", "node_groups"))
    values = {}
    for c in COMPONENTS:
        if t.has(c):
            if c not in components:
                raise t.error(c, f"component {c} is not in the model (model.components = "
                                 f"{list(components)})")
            values[c] = t.float(c)
    function = _function_ref(t, functions)
    t.done()
    if not values:
        raise StudyError(f"{t.where}: imposes no component (give DX = 0.0, ...)")
    return ImposedSpec(t.where, targets, values, function)


def _relation(t: Table, components, functions) -> RelationSpec:
    raw = t.raw("terms")
    if not isinstance(raw, list) or not raw:
        raise t.error("terms", "expected a non-empty list of {node, component, coef} tables")
    terms = []
    for i, term in enumerate(raw):
        tt = Table(term, f"{t.key('terms')}[{i + 1}]")
        node = tt.str("node")
        comp = tt.str("component")
        if comp not in components:
            raise tt.error("component", f"unknown component '{comp}' (model components: "
                                        f"{' '.join(components)})")
        coef = tt.float("coef")
        tt.done()
        terms.append((node, comp, coef))
    if all(c == 0.0 for _, _, c in terms):
        raise t.error("terms", "every coefficient is zero")
    value = t.float("value", 0.0)
    function = _function_ref(t, functions)
    t.done()
    return RelationSpec(t.where, tuple(terms), value, function)


def _direction(t: Table, key: str, default=None):
    d = t.float_list(key, default, length=3)
    if d is None:
        return None
    norm = sum(x * x for x in d) ** 0.5
    if norm == 0:
        raise t.error(key, "must not be the zero vector")
    return tuple(x / norm for x in d)


def _load(t: Table, i, components, functions) -> LoadSpec:
    kind = t.str("kind", "force", choices=("force", "gravity", "base_acceleration"))
    name = t.str("name", f"load{i + 1}")
    function = _function_ref(t, functions)
    values, g, direction = {}, 0.0, (0.0, 0.0, 0.0)
    targets = Targets()
    if kind == "force":
        targets = _targets(t, ("nodes", "node_groups"))
        for key, comp in FORCE_COMPONENTS.items():
            if t.has(key):
                if comp not in components:
                    raise t.error(key, f"acts on {comp}, which is not in the model "
                                       f"(model.components = {list(components)})")
                values[comp] = t.float(key)
        if not values:
            raise StudyError(f"{t.where}: a force load gives no component (FX, FY, FZ, ...)")
    elif kind == "gravity":
        g = t.float("g", 9.81)
        direction = _direction(t, "direction", [0.0, 0.0, -1.0])
    else:
        g = t.float("value", 1.0)
        direction = _direction(t, "direction")
        if function is None:
            raise t.error("function", "a base acceleration needs a function of time (m/s^2)")
    t.done()
    return LoadSpec(t.where, name, kind, targets, values, g, direction, function)


def _initial(t: Table, components) -> InitialSpec:
    targets = _targets(t, ("nodes", "node_groups"))
    fields = {}
    for key in ("displacement", "velocity"):
        sub = t.table(key, None)
        fields[key] = {}
        if sub is not None:
            for comp in list(sub.data):
                if comp not in components:
                    raise sub.error(comp, f"unknown component (model components: "
                                          f"{' '.join(components)})")
                fields[key][comp] = sub.float(comp)
            sub.done()
    t.done()
    if not fields["displacement"] and not fields["velocity"]:
        raise StudyError(f"{t.where}: gives neither displacement nor velocity")
    return InitialSpec(t.where, targets, fields["displacement"], fields["velocity"])


def _link(t: Table, i, components) -> LinkSpec:
    kind = t.str("kind", choices=LINK_KINDS)
    name = t.str("name", f"link{i + 1}")
    nodes = tuple(t.str_list("nodes"))
    if len(nodes) not in (1, 2) or (len(nodes) == 2 and nodes[0] == nodes[1]):
        raise t.error("nodes", "expected one node (against an obstacle) or two distinct nodes")
    p = {}
    if kind == "shock":
        p["obstacle"] = t.str("obstacle", "plane", choices=("plane", "circle", "two_planes"))
        normal = t.float_list("normal", None, length=3)
        axis = t.float_list("axis", None, length=3)
        if p["obstacle"] == "circle":
            if axis is None:
                raise t.error("axis", "a circular obstacle needs its axis")
            p["axis"] = _direction(t, "axis")
            if normal is not None:
                raise t.error("normal", "does not apply to a circular obstacle (give axis)")
        else:
            if normal is None:
                raise t.missing("normal")
            p["normal"] = _direction(t, "normal")
            if axis is not None:
                raise t.error("axis", "only applies to a circular obstacle")
        p["gap"] = t.float("gap")
        p["stiffness"] = t.float("stiffness", positive=True)
        p["damping"] = t.float("damping", 0.0, min=0.0)
        p["release"] = t.str("release", "force", choices=("force", "gap"))
        p["friction"] = t.float("friction", 0.0, min=0.0)
        p["tangential_stiffness"] = t.float("tangential_stiffness", 0.0, min=0.0)
        p["tangential_damping"] = t.float("tangential_damping", 0.0, min=0.0)
    else:
        p["component"] = t.str("component", choices=components)
        p["restitution"] = t.float("restitution", min=0.0, max=1.0)
        p["grazing_velocity"] = t.float("grazing_velocity", 1e-6, min=0.0)
        p["bond"] = t.str("bond", "unilateral", choices=("unilateral", "until_tension"))
        p["gap"] = t.float("gap", 0.0, min=0.0)
    t.done()
    return LinkSpec(t.where, name, kind, nodes, p)


def _archive(t: Table | None):
    if t is None:
        return {"every": 1}
    if t.has("every") and t.has("times"):
        raise StudyError(f"{t.where}: give either every or times, not both")
    if t.has("times"):
        times = t.float_list("times")
        if any(b <= a for a, b in zip(times, times[1:])):
            raise t.error("times", "must increase strictly")
        out = {"times": times}
    else:
        out = {"every": t.int("every", 1, min=1)}
    t.done()
    return out


def _steps(t: Table):
    raw = t.raw("steps")
    if not isinstance(raw, list) or not raw:
        raise t.error("steps", "expected a non-empty list of {until, count} tables")
    out = []
    for i, seg in enumerate(raw):
        st = Table(seg, f"{t.key('steps')}[{i + 1}]")
        out.append((st.float("until"), st.int("count", min=1)))
        st.done()
    return out


def _analysis(t: Table, i, loads, links, functions) -> AnalysisSpec:
    kind = t.str("kind", choices=ANALYSIS_KINDS)
    name = t.str("name", f"{kind}{i + 1}")
    p: dict = {}
    if kind in ("modes", "complex_modes"):
        p["count"] = t.int("count", None, min=1)
        band = t.float_list("band", None, length=2)
        if band is not None and not (0 <= band[0] < band[1]):
            raise t.error("band", f"expected [f_min, f_max] with 0 <= f_min < f_max, got {band}")
        p["band"] = band
        if p["count"] is None and band is None:
            p["count"] = 10
        p["method"] = t.str("method", "auto", choices=("auto", "dense", "sparse"))
    elif kind == "transient":
        _transient(t, p, loads, links)
    else:
        _harmonic(t, p, loads)
    t.done()
    return AnalysisSpec(where=t.where, index=i + 1, name=name, kind=kind, params=p)


def _loads_subset(t: Table, loads):
    names = t.str_list("loads", None)
    known = [ld.name for ld in loads]
    if names is None:
        return known
    for n in names:
        if n not in known:
            raise t.error("loads", f"unknown load '{n}' (named loads: {', '.join(known) or 'none'})")
    return names


def _transient(t: Table, p: dict, loads, links):
    basis = t.str("basis", "physical", choices=("physical", "modal"))
    p["basis"] = basis
    schemes = PHYSICAL_SCHEMES if basis == "physical" else MODAL_SCHEMES
    scheme = t.str("scheme", "newmark", aliases=SCHEME_ALIASES)
    if scheme not in schemes:
        raise t.error("scheme", f"unknown scheme '{scheme}' for basis = \"{basis}\" "
                                f"(expected one of: {', '.join(schemes)})")
    p["scheme"] = scheme
    p["start"] = t.float("start", 0.0)
    p["end"] = t.float("end")
    if p["end"] <= p["start"]:
        raise t.error("end", f"must be greater than start ({p['start']:g}), got {p['end']:g}")
    if t.has("step") and t.has("steps"):
        raise StudyError(f"{t.where}: give either step or steps, not both")
    if t.has("steps"):
        p["steps"] = _steps(t)
        prev = p["start"]
        for k, (until, _) in enumerate(p["steps"]):
            if until <= prev:
                raise StudyError(f"{t.key('steps')}[{k + 1}].until: must be greater than "
                                 f"{prev:g}, got {until:g}")
            prev = until
        if abs(prev - p["end"]) > 1e-12 * max(1.0, abs(p["end"])):
            raise StudyError(f"{t.key('steps')}[{len(p['steps'])}].until: the last segment must "
                             f"end at end = {p['end']:g}, got {prev:g}")
        count = sum(c for _, c in p["steps"])
        if count > MAX_STEPS:
            raise t.error("steps", f"{count} steps in all (at most {MAX_STEPS:.0e})")
    elif t.has("step"):
        p["step"] = t.float("step", positive=True)
        if p["step"] > p["end"] - p["start"]:
            raise t.error("step", f"{p['step']:g} s is longer than the analysis "
                                  f"({p['end'] - p['start']:g} s)")
        count = (p["end"] - p["start"]) / p["step"]
        if count > MAX_STEPS:
            raise t.error("step", f"{p['step']:g} s makes {count:.3g} steps over the analysis "
                                  f"(at most {MAX_STEPS:.0e})")
    elif scheme not in ("rk32", "rk54", "adaptive2", "devogelaere", "euler", "exact"):
        raise t.missing("step", "missing (required for this scheme; or give steps)")
    p["loads"] = _loads_subset(t, loads)
    init = t.table("initial", None)
    if init is not None:
        p["initial"] = {"analysis": init.str("analysis"), "time": init.float("time", None)}
        init.done()
    link_names = t.str_list("links", [])
    known = [lk.name for lk in links]
    for n in link_names:
        if n not in known:
            raise t.error("links", f"unknown link '{n}' (defined links: {', '.join(known) or 'none'})")
    p["links"] = link_names
    p["archive"] = _archive(t.table("archive", None))
    for x in p["archive"].get("times", ()):
        if not _within(x, p["start"], p["end"]):
            raise StudyError(f"{t.key('archive')}.times: {x:g} s is outside the analysis "
                             f"[{p['start']:g}, {p['end']:g}] s")
    fields = t.str_list("fields", list(FIELDS))
    for f in fields:
        if f not in FIELDS:
            raise t.error("fields", f"unknown field '{f}' (expected: {', '.join(FIELDS)})")
    p["fields"] = [f for f in FIELDS if f in fields]
    p["events"] = t.str("events", "locate" if scheme in ("exact", "rk32", "rk54", "adaptive2",
                                                       "devogelaere", "euler") else "step",
                        choices=("locate", "step"))
    if basis == "modal":
        p["modes"] = t.str("modes")
        p["damping"] = t.str("damping", "projected", choices=("projected", "modal"))
        md = t.float_list("modal_damping", None)
        if p["damping"] == "modal" and md is None:
            raise t.error("modal_damping", 'required with damping = "modal" (one ratio per mode)')
        if md is not None and any(x < 0 for x in md):
            raise t.error("modal_damping", "ratios must be >= 0")
        p["modal_damping"] = md
        p["nodes"] = t.str_list("nodes", None)
        p["static_correction"] = t.bool("static_correction", False)
    for key in ("alpha", "beta", "gamma", "tolerance", "max_step", "min_step"):
        if t.has(key) and key not in SCHEME_KEYS[scheme]:
            raise t.error(key, f"does not apply to scheme '{scheme}'")
    if scheme == "hht":
        p["alpha"] = t.float("alpha", -0.1, min=-1.0 / 3.0, max=0.0)
        p["beta"] = t.float("beta", (1 - p["alpha"]) ** 2 / 4, min=0.0, max=0.5)
        p["gamma"] = t.float("gamma", 0.5 - p["alpha"], min=0.0, max=1.0)
    elif scheme == "newmark":
        p["beta"] = t.float("beta", 0.25, min=0.0, max=0.5)
        p["gamma"] = t.float("gamma", 0.5, min=0.0, max=1.0)
    if "tolerance" in SCHEME_KEYS[scheme]:
        p["tolerance"] = t.float("tolerance", 1e-6, positive=True)
        p["max_step"] = t.float("max_step", None, positive=True)
        p["min_step"] = t.float("min_step", None, positive=True)


def _within(x: float, start: float, end: float) -> bool:
    """``start <= x <= end`` up to round-off."""
    return start - 1e-12 * max(1.0, abs(start)) <= x <= end + 1e-12 * max(1.0, abs(end))


def _harmonic(t: Table, p: dict, loads):
    raw = t.raw("frequencies")
    if isinstance(raw, list):
        freqs = check_float_list(raw, t.key("frequencies"))
        if not freqs or any(f < 0 for f in freqs):
            raise t.error("frequencies", "expected a non-empty list of frequencies >= 0 (Hz)")
        p["frequencies"] = freqs
    else:
        ft = Table(raw, t.key("frequencies"))
        start, stop = ft.float("start", min=0.0), ft.float("stop", min=0.0)
        count = ft.int("count", min=1)
        ft.done()
        if stop < start:
            raise ft.error("stop", f"must be >= start ({start:g}), got {stop:g}")
        p["frequencies"] = {"start": start, "stop": stop, "count": count}
    p["basis"] = t.str("basis", "physical", choices=("physical", "modal"))
    if p["basis"] == "modal":
        p["modes"] = t.str("modes")
    p["loads"] = _loads_subset(t, loads)
    p["fields"] = [f for f in FIELDS if f in t.str_list("fields", list(FIELDS))]


def _cross_check_analyses(analyses):
    by_name = {a.name: a for a in analyses}
    for a in analyses:
        ref = a.params.get("modes")
        if ref is not None:
            other = by_name.get(ref)
            if other is None or other.index >= a.index:
                raise StudyError(f"{a.where}.modes: no modes analysis named '{ref}' before this one")
            if other.kind != "modes":
                raise StudyError(f"{a.where}.modes: analysis '{ref}' is of kind {other.kind}, "
                                 f"not modes")
        init = a.params.get("initial")
        if init is not None:
            other = by_name.get(init["analysis"])
            if other is None or other.index >= a.index or other.kind != "transient":
                raise StudyError(f"{a.where}.initial.analysis: no transient analysis named "
                                 f"'{init['analysis']}' before this one")


def _check_function_domains(analyses, loads, imposed, relations, functions):
    """Every function a transient analysis evaluates must be defined over its time span."""
    users = [(c.function, f"{c.where}.function") for c in list(imposed) + list(relations)]
    for a in analyses:
        if a.kind != "transient":
            continue
        start, end = a.params["start"], a.params["end"]
        named = [(ld.function, f"{ld.where}.function") for ld in loads
                 if ld.name in a.params["loads"]]
        for name, key in users + named:
            if name is None:
                continue
            lo, hi = functions[name].domain
            if start < lo or end > hi:
                raise StudyError(f"{a.where}: function '{name}' ({key}) is defined over "
                                 f"[{lo:g}, {hi:g}] s only, not over the analysis "
                                 f"[{start:g}, {end:g}] s (set left or right = \"constant\" "
                                 f"or \"linear\" in functions.{name})")


def _checks(raw, analyses):
    from postpro.checks import MODAL_QUANTITIES, parse_checks
    from postpro.errors import CheckSpecError

    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise StudyError("check: expected an array of tables [[check]]")
    try:
        specs = parse_checks(raw, prefix="check")
    except CheckSpecError as exc:
        raise StudyError(str(exc)) from None
    by_name = {a.name: a for a in analyses}
    for i, s in enumerate(specs):
        if s.analysis is None:
            # the results file then picks its only analysis
            if len(analyses) != 1:
                raise StudyError(f"check[{i + 1}].analysis: missing (required when the study "
                                 f"has {len(analyses)} analyses: "
                                 f"{', '.join(sorted(by_name)) or 'none'})")
            a = analyses[0]
        elif s.analysis not in by_name:
            raise StudyError(f"check[{i + 1}].analysis: unknown analysis '{s.analysis}' "
                             f"(analyses: {', '.join(sorted(by_name)) or 'none'})")
        else:
            a = by_name[s.analysis]
        kinds = ("modes", "complex_modes") if s.quantity in MODAL_QUANTITIES else ("transient",)
        if a.kind not in kinds:
            raise StudyError(f"check[{i + 1}].quantity: '{s.quantity}' needs a "
                             f"{' or '.join(kinds)} analysis, but '{a.name}' is of kind "
                             f"'{a.kind}'")
        if s.time is not None and a.kind == "transient" and not _within(s.time, a.params["start"],
                                                                         a.params["end"]):
            raise StudyError(f"check[{i + 1}].time: {s.time:g} s is outside analysis "
                             f"'{a.name}' [{a.params['start']:g}, {a.params['end']:g}] s")
    return specs
