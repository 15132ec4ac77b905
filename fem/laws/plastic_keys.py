"""The keys of a plastic link (``fem.laws.plastic``, docs/study_format.md): their checks,
and the table of the hardening curve they make."""

from __future__ import annotations

import math

from fem.validate import check_float

#: the most points a hardening curve may have (the curve one more: its elastic limit)
MAX_POINTS = 10


def _curve(t, name):
    """The curve's points [[delta, F], ...]: the elastic limit first, then hardening."""
    value = t.raw(name)
    if not isinstance(value, list) or not value or not all(
            isinstance(pt, list) and len(pt) == 2 for pt in value):
        raise t.error(name, "expected a list of [deformation, force] points, the elastic "
                            "limit first")
    if len(value) > MAX_POINTS + 1:
        raise t.error(name, f"at most {MAX_POINTS + 1} points, got {len(value)}")
    pts = [(check_float(u, t.key(f"{name}[{i + 1}][1]"), positive=True),
            check_float(f, t.key(f"{name}[{i + 1}][2]"), positive=True))
           for i, (u, f) in enumerate(value)]
    k = pts[0][1] / pts[0][0]
    for i in range(1, len(pts)):
        (u0, f0), (u1, f1) = pts[i - 1], pts[i]
        if not u1 > u0:
            raise t.error(name, f"the deformations must increase: point {i + 1} "
                                f"({u1:g}) after {u0:g}")
        if f1 < f0:
            raise t.error(name, f"the forces must not decrease (softening is not offered): "
                                f"point {i + 1} ({f1:g}) after {f0:g}")
        if not (f1 - f0) / (u1 - u0) < k:
            raise t.error(name, f"segment {i} is as stiff as the elastic slope "
                                f"{k:g} N/m (F_1 / delta_1) or stiffer: a hardening slope must "
                                f"be below it")
    if not math.isfinite(k):
        raise t.error(name, f"the elastic slope F_1 / delta_1 = {pts[0][1]:g} / "
                            f"{pts[0][0]:g} is not a finite stiffness")
    # the plastic elongations of the points, delta - F / k, must grow (each segment below the
    # elastic slope) also in floating point
    plastic = [0.0] + [u - f / k for u, f in pts[1:]]
    for i in range(1, len(plastic)):
        if not plastic[i] > plastic[i - 1]:
            raise t.error(name, f"point {i + 1} is as stiff as the elastic slope {k:g} N/m "
                                f"from the point before, to round-off (its plastic elongation "
                                f"delta - F / k does not grow)")
    return pts


def read(t, p: dict, components=()) -> None:
    """The keys of a plastic link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["curve"] = _curve(t, "curve")
    p["hardening"] = t.str("hardening", "kinematic", choices=("isotropic", "kinematic"))
    p["gap"] = t.float("gap", 0.0)
    default = "both" if p["gap"] == 0.0 else ("tension" if p["gap"] > 0.0 else "compression")
    p["side"] = t.str("side", default, choices=("both", "tension", "compression"))
    if p["side"] == "both" and p["gap"] != 0.0:
        raise t.error("side", "a gap acts on one side: give side = \"tension\" or "
                              "\"compression\" (or no gap)")


def table(curve) -> tuple:
    """(k, F_y, [(a_i, h_i)], slope of h beyond the last of them) of a curve (module
    docstring): the breakpoints of h, which are the curve's points but its first and its last
    (the last segment's slope goes on beyond the last point)."""
    (u1, fy) = curve[0]
    k = fy / u1
    points = [(0.0, 0.0)] + [(u - f / k, f - fy) for u, f in curve[1:]]
    last = 0.0
    if len(points) > 1:
        (a0, h0), (a1, h1) = points[-2], points[-1]
        last = (h1 - h0) / (a1 - a0)
    return k, fy, points[1:-1], last
