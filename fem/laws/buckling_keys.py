"""The keys of a buckling link (``fem.laws.buckling``, docs/study_format.md): their checks,
and the crush curve they make."""

from __future__ import annotations

from fem.validate import check_float

#: the post-buckling stages a link may give
MAX_STAGES = 6


def _stages(t, name: str) -> list:
    """The post-buckling stages [[crush, stiffness, damping], ...]."""
    value = t.raw(name, [])
    if not isinstance(value, list) or not all(
            isinstance(row, list) and len(row) == 3 for row in value):
        raise t.error(name, "expected a list of [crush, stiffness, damping] stages")
    if len(value) > MAX_STAGES:
        raise t.error(name, f"at most {MAX_STAGES} stages, got {len(value)}")
    out = []
    for i, (u, s, cd) in enumerate(value):
        out.append((check_float(u, t.key(f"{name}[{i + 1}][1]"), min=0.0),
                    check_float(s, t.key(f"{name}[{i + 1}][2]")),
                    check_float(cd, t.key(f"{name}[{i + 1}][3]"), min=0.0)))
    return out


def read(t, p: dict, components=()) -> None:
    """The keys of a buckling link (docs/study_format.md)."""
    p["normal"] = t.direction("normal")
    p["gap"] = t.float("gap", 0.0)
    p["stiffness"] = kn = t.float("stiffness", positive=True)
    p["damping"] = t.float("damping", 0.0, min=0.0)
    p["critical_force"] = fc = t.float("critical_force", positive=True)
    p["damping_in_critical"] = t.bool("damping_in_critical", True)
    p["plateau"] = t.float("plateau", 0.0, min=0.0)
    p["post_buckling_force"] = fp = t.float("post_buckling_force", fc, positive=True)
    if fp > fc:
        raise t.error("post_buckling_force", f"must be at most critical_force ({fc:g} N), "
                                             f"got {fp:g}")
    p["drop"] = drop = t.float("drop", 0.0, min=0.0)
    if fp < fc and drop == 0.0:
        raise t.error("drop", f"the force falls from critical_force ({fc:g} N) to "
                              f"post_buckling_force ({fp:g} N): give the crush over which it "
                              f"falls (> 0)")
    if drop > 0.0 and fp == fc:
        raise t.error("drop", "a drop needs post_buckling_force below critical_force")
    if drop > 0.0 and not (fc - fp) / drop < kn:
        raise t.error("drop", f"the force may fall by less than the stiffness times the "
                              f"crush: (critical_force - post_buckling_force) / drop = "
                              f"{(fc - fp) / drop:g} N/m is not below stiffness {kn:g} N/m "
                              f"(the support would snap back)")
    p["stages"] = stages = _stages(t, "stages")
    start = p["plateau"] + drop
    force = fp
    before = start
    for i, (u, s, cd) in enumerate(stages):
        where = f"stages[{i + 1}]"
        if u < before or (i and u <= before):
            raise t.error(where, f"its crush {u:g} m must be beyond "
                                 + (f"the previous stage's ({before:g} m)" if i else
                                    f"the end of the plateau and the drop ({start:g} m)"))
        if not s > -kn:
            raise t.error(where, f"its stiffness {s:g} N/m must be above -stiffness "
                                 f"({-kn:g} N/m): a steeper fall would snap back")
        if i:
            force += stages[i - 1][1] * (u - before)
        if not force > 0.0:
            raise t.error(where, f"the crushing force falls to {force:g} N at its crush "
                                 f"{u:g} m: it must stay positive")
        before = u
    if stages and stages[-1][1] < 0.0:
        raise t.error(f"stages[{len(stages)}]", "the last stage's stiffness must not be "
                                                "negative (the crushing force would fall to "
                                                "zero)")


def curve(p: dict) -> list:
    """The crush curve's points (crush at the start of a segment, crushing force there, the
    segment's slope, the damping from there on), segments of no length left out."""
    fc, fp, w, drop = (p["critical_force"], p["post_buckling_force"], p["plateau"],
                       p["drop"])
    cd = p["damping"]
    points = []
    if w > 0.0:
        points.append((0.0, fc, 0.0, cd))
    if drop > 0.0:
        points.append((w, fc, -(fc - fp) / drop, cd))
    points.append((w + drop, fp, 0.0, cd))
    for u, s, damping in p["stages"]:
        u0, f0, s0, _ = points[-1]
        force = f0 + s0 * (u - u0)
        if u == u0:
            points[-1] = (u, force, s, damping)
        else:
            points.append((u, force, s, damping))
    return points
