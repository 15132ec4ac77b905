"""Model blocks of a study file: mesh, functions, discrete, constraint, load, initial, link."""

from __future__ import annotations

import math
from pathlib import Path

from fem import laws
from fem.errors import StudyError
from fem.study.specs import (COMPONENTS, FORCE_COMPONENTS, LINK_KINDS, ROTATIONS, DiscreteSpec,
                             ImposedSpec, InitialSpec, LinkSpec, LoadSpec, MeshSpec,
                             RayleighSpec, RelationSpec, Targets)
from fem.study.support_blocks import link_support, not_of_time
from fem.errors import path_problem, shown_path
from fem.validate import Table, check_float, check_float_list


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
        problem = path_problem(file)
        if problem is not None:
            raise t.error("file", f"the path {shown_path(file)} {problem}")
        file = Path(file) if Path(file).is_absolute() else base / file
        try:
            if not file.is_file():
                raise t.error("file", f"mesh file not found: {file}")
        except OSError as exc:
            raise t.error("file", f"{shown_path(file)}: {exc.strerror or exc}") from None
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


def _functions(t: Table | None, base: Path, roles=None) -> dict:
    """The study's functions. ``roles``: for a function that a link reads as its force law,
    what that law makes of it (``function_roles``), added to the message of an error."""
    from fem.errors import FunctionError
    from fem.functions import build_function

    if t is None:
        return {}
    out = {}
    for name, spec in t.data.items():
        t.used.add(name)
        if not isinstance(spec, dict):
            raise StudyError(f"functions.{name}: expected a table")
        try:
            out[name] = build_function(name, spec, base)
        except FunctionError as exc:
            if roles and name in roles:
                raise FunctionError(f"{exc}; {roles[name]}") from None
            raise
    return out


def function_roles(link_tables) -> dict:
    """{function name: what a link's law makes of it} for the functions the ``[[link]]``
    tables name as their laws' inputs (a law's optional ``function_roles(data, where)``),
    read from the tables' raw data before the links are read (the functions come first)."""
    roles: dict = {}
    for t in link_tables:
        kind = t.data.get("kind")
        if not isinstance(kind, str) or kind not in laws.KINDS:
            continue
        of_law = getattr(laws.module(kind), "function_roles", None)
        if of_law is not None:
            for name, role in of_law(t.data, t.where):
                roles.setdefault(name, role)
    return roles


def _function_ref(t: Table, functions: dict, key="function"):
    name = t.str(key, None)
    if name is not None and name not in functions:
        known = ", ".join(sorted(functions)) or "none defined"
        raise t.error(key, f"unknown function '{name}' (defined: {known})")
    if name is not None and functions[name].of_force:
        raise t.error(key, not_of_time(functions[name]))
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
    if any(v < 0 or math.copysign(1.0, v) < 0 for v in values):
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
    return check_float(value, t.key(key), min=0.0)


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
    return t.direction(key, default)


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


def _link(t: Table, i, components, supports=(), functions=None) -> LinkSpec:
    kind = t.str("kind", choices=LINK_KINDS)
    name = t.str("name", f"link{i + 1}")
    nodes = tuple(t.str_list("nodes"))
    if len(nodes) not in (1, 2) or (len(nodes) == 2 and nodes[0] == nodes[1]):
        raise t.error("nodes", "expected one node (against an obstacle) or two distinct nodes")
    p = {}
    # the law reads its own keys (``fem.laws``), and those naming the study's functions
    law = laws.module(kind)
    law.read(t, p, components)
    if hasattr(law, "read_functions"):
        law.read_functions(t, p, functions or {})
    p["support"] = link_support(t, nodes, supports)
    t.done()
    return LinkSpec(t.where, name, kind, nodes, p)


def _rayleigh(t: Table | None) -> RayleighSpec | None:
    """``[model] rayleigh``: the coefficients, or two frequencies and their damping ratios
    (xi(f) = a / (4 pi f) + b pi f, solved at both)."""
    if t is None:
        return None
    direct = [k for k in ("mass", "stiffness") if t.has(k)]
    modal = [k for k in ("frequencies", "ratios") if t.has(k)]
    if direct and modal:
        raise StudyError(f"{t.where}: give mass and stiffness (the coefficients), or "
                         f"frequencies and ratios, not both ({direct[0]} and {modal[0]})")
    if direct:
        spec = RayleighSpec(t.float("mass", 0.0, min=0.0), t.float("stiffness", 0.0, min=0.0))
        t.done()
        return spec
    if not modal:
        t.done()
        raise StudyError(f"{t.where}: give mass and stiffness (C += mass M + stiffness K), "
                         f"or frequencies = [f1, f2] (Hz) and ratios = [xi1, xi2]")
    f1, f2 = t.float_list("frequencies", length=2)
    x1, x2 = t.float_list("ratios", length=2)
    t.done()
    for i, f in enumerate((f1, f2)):
        if f <= 0:
            raise StudyError(f"{t.key('frequencies')}[{i + 1}]: must be > 0 Hz, got {f:g}")
    for i, x in enumerate((x1, x2)):
        if x < 0 or math.copysign(1.0, x) < 0:
            raise StudyError(f"{t.key('ratios')}[{i + 1}]: must be >= 0, got {x:g}")
    if f1 == f2:
        raise StudyError(f"{t.key('frequencies')}: two distinct frequencies are needed, got "
                         f"{f1:g} Hz twice")
    w1, w2 = 2 * math.pi * f1, 2 * math.pi * f2
    den = w2 * w2 - w1 * w1
    a = 2 * w1 * w2 * (x1 * w2 - x2 * w1) / den
    b = 2 * (x2 * w2 - x1 * w1) / den
    if a < 0 or b < 0:
        lo, hi = sorted((f1, f2))
        raise StudyError(f"{t.key('ratios')}: {x1:g} at {f1:g} Hz and {x2:g} at {f2:g} Hz "
                         f"need a {'negative mass' if a < 0 else 'negative stiffness'} "
                         f"coefficient ({a:.3g} 1/s, {b:.3g} s), which would feed energy into "
                         f"some modes; the ratio of the two damping ratios must lie between "
                         f"{lo / hi:.4g} and {hi / lo:.4g}")
    return RayleighSpec(max(a, 0.0), max(b, 0.0), (f1, f2), (x1, x2))
