"""The obstacle of a contact link against an obstacle or between two nodes: its keys, shared
by the laws of such contacts (``fem.laws.shock``, ``fem.laws.force_curve``, ...)."""

from __future__ import annotations


def read_geometry(t, p: dict, obstacles=("plane", "circle", "two_planes")) -> None:
    """The obstacle of a contact link, among ``obstacles``: its kind, its normal (a plane,
    two planes) or axis (a circle) and its gap (the radius of a circle's hole); shared by the
    laws of contacts against an obstacle or between two nodes."""
    p["obstacle"] = t.str("obstacle", "plane", choices=obstacles)
    normal = t.float_list("normal", None, length=3)
    axis = t.float_list("axis", None, length=3)
    if p["obstacle"] == "circle":
        if axis is None:
            raise t.error("axis", "a circular obstacle needs its axis")
        p["axis"] = t.direction("axis")
        if normal is not None:
            raise t.error("normal", "does not apply to a circular obstacle (give axis)")
        p["gap"] = t.float("gap", positive=True)       # the radius of the hole
    else:
        if normal is None:
            raise t.missing("normal")
        p["normal"] = t.direction("normal")
        if axis is not None:
            raise t.error("axis", "only applies to a circular obstacle")
        p["gap"] = t.float("gap")


def directions(p: dict) -> list:
    """(key, vector, how): a plane's normal lies "along" the model's translations; a circle's
    axis needs a translation "across" it (the node moves in the hole's plane)."""
    if p["obstacle"] == "circle":
        return [("axis", p["axis"], "across")]
    return [("normal", p["normal"], "along")]
