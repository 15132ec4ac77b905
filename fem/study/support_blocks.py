"""``[[support]]`` blocks (multi-support excitation), the keys of a transient analysis that
select them, and the ``support`` key of a link whose obstacle follows one."""

from __future__ import annotations

from fem.errors import StudyError
from fem.study.specs import SupportSpec, Targets
from fem.validate import Table

RECORDS = ("acceleration", "displacement")
#: what a transient analysis does with the damping coupling -(C_ff Psi + C_fb) u_b'
SUPPORT_DAMPING = ("coupled", "neglected")


def _component_table(t: Table, key: str, components, kind, default=None) -> dict:
    sub = t.table(key, default)
    if sub is None:
        return {}
    out = {}
    for comp in list(sub.data):
        if comp not in components:
            raise sub.error(comp, f"component {comp} is not in the model (model.components = "
                                  f"{list(components)})")
        out[comp] = sub.str(comp) if kind is str else sub.float(comp)
    sub.done()
    return out


def support(t: Table, i: int, components, functions) -> SupportSpec:
    """One ``[[support]]`` block."""
    name = t.str("name", f"support{i + 1}")
    targets = Targets(nodes=tuple(t.str_list("nodes", [])),
                      node_groups=tuple(t.str_list("node_groups", [])))
    if targets.empty():
        raise StudyError(f"{t.where}: names no node (give nodes or node_groups)")
    given = [k for k in RECORDS if t.has(k)]
    if len(given) != 1:
        raise StudyError(f"{t.where}: give one record, acceleration = {{ DX = \"function\", ... }} "
                         f"(m/s^2) or displacement = {{ ... }} (m)"
                         + (", not both" if given else ""))
    record = given[0]
    named = _component_table(t, record, components, str)
    if not named:
        raise t.error(record, "drives no component (give DX = \"function\", ...)")
    for comp, fname in named.items():
        fn = functions.get(fname)
        key = f"{t.key(record)}.{comp}"
        if fn is None:
            known = ", ".join(sorted(functions)) or "none defined"
            raise StudyError(f"{key}: unknown function '{fname}' (defined: {known})")
        if fn.of_force:
            raise StudyError(f"{key}: {not_of_time(fn)}")
        if record == "acceleration" and fn.kind not in ("table", "record"):
            raise StudyError(f"{key}: an acceleration record must be a table or a file of "
                             f"points (function '{fname}' is an {fn.kind}), which fem "
                             f"integrates exactly; give an analytic motion as displacement = "
                             f"{{ {comp} = \"{fname}\" }} with the displacement expression")
        if record == "displacement" and fn.kind in ("table", "record"):
            raise StudyError(f"{key}: function '{fname}' is a table: a piecewise-linear "
                             f"displacement has no acceleration between its points and its "
                             f"velocity jumps at each one; give the acceleration record "
                             f"(acceleration = {{ {comp} = ... }}), which fem integrates "
                             f"exactly, or the displacement as an expression")
    scale = t.float("scale", 1.0)
    velocity = _component_table(t, "initial_velocity", components, float)
    displacement = _component_table(t, "initial_displacement", components, float)
    for key, values in (("initial_velocity", velocity), ("initial_displacement", displacement)):
        if values and record != "acceleration":
            raise t.error(key, "applies only to an acceleration record (a displacement "
                               "record gives the motion itself)")
        for comp in values:
            if comp not in named:
                raise StudyError(f"{t.key(key)}.{comp}: the support does not drive {comp} "
                                 f"(it drives {', '.join(named)})")
    t.done()
    return SupportSpec(t.where, name, targets, record, named, scale, velocity, displacement)


def analysis_supports(t: Table, p: dict, supports) -> None:
    """``supports`` (names; default: every support) and ``support_damping`` of a transient
    analysis, into ``p``."""
    known = [s.name for s in supports]
    names = t.str_list("supports", None)
    if names is None:
        names = known
    for n in names:
        if n not in known:
            raise t.error("supports", f"unknown support '{n}' (supports: "
                                      f"{', '.join(known) or 'none defined'})")
    if len(set(names)) != len(names):
        raise t.error("supports", "lists a support twice")
    p["supports"] = [n for n in known if n in names]
    p["support_damping"] = t.str("support_damping", "coupled", choices=SUPPORT_DAMPING)
    if t.has("support_damping") and not p["supports"]:
        raise t.error("support_damping", "applies only to an analysis that drives supports")


def not_of_time(fn) -> str:
    """Why a force law (an expression of u and v) is refused where a function of time is
    expected."""
    names = " and ".join(n for n in fn.variables if n != "t")
    return (f"function '{fn.name}' is an expression of {names}, the force law of a link "
            f"(kind = \"force_function\"): a function of time t is expected here")


def link_support(t: Table, nodes, supports) -> str | None:
    """The ``support`` key of a link: the support whose motion its obstacle follows."""
    name = t.str("support", None)
    if name is None:
        return None
    known = [s.name for s in supports]
    if name not in known:
        raise t.error("support", f"unknown support '{name}' (supports: "
                                 f"{', '.join(known) or 'none defined'})")
    if len(nodes) != 1:
        raise t.error("support", "applies to a link of one node against an obstacle (a link "
                                 "between two nodes follows both)")
    return name


def check_support_domains(analyses, supports, functions) -> None:
    """Every record a transient analysis drives must be defined over its span."""
    by_name = {s.name: s for s in supports}
    for a in analyses:
        if a.kind == "static" and a.params.get("time") is not None:
            start = end = a.params["time"]
            names = list(by_name)
        elif a.kind == "transient":
            start, end = a.params["start"], a.params["end"]
            names = a.params["supports"]
        else:
            continue
        for name in names:
            s = by_name[name]
            for comp, fname in s.functions.items():
                lo, hi = functions[fname].domain
                if start < lo or end > hi:
                    raise StudyError(f"{a.where}: the record '{fname}' of support '{name}' "
                                     f"({s.where}.{s.record}.{comp}) is defined over "
                                     f"[{lo:g}, {hi:g}] s only, not over the analysis "
                                     f"[{start:g}, {end:g}] s (set left or right = "
                                     f"\"constant\" or \"linear\" in functions.{fname})")


def unique_names(supports) -> None:
    seen = set()
    for i, s in enumerate(supports):
        if s.name in seen:
            raise StudyError(f"support[{i + 1}].name: '{s.name}' is used by another "
                             f"[[support]] block")
        seen.add(s.name)
