"""Which link kinds and options each transient scheme handles, checked before any computation.

``SUPPORT[(basis, scheme)]`` is the set of features a scheme offers; a link needing a feature
outside that set is refused with a message naming the link and the option. Features:

* ``"shock.plane"``, ``"shock.two_planes"``, ``"shock.circle"``: shock links by obstacle;
* ``"shock.friction"``: Coulomb friction and tangential stiffness on a shock link;
* ``"impact"``: impact links (restitution, sticking, separation).
"""

from __future__ import annotations

from fem.errors import NotAvailableError

SUPPORT: dict[tuple[str, str], set[str]] = {
    ("physical", "exact"): {"shock.plane", "shock.two_planes"},
    ("modal", "exact"): {"shock.plane", "shock.two_planes"},
}


def needed_features(link) -> list[tuple[str, str]]:
    """(feature, key path of the option that needs it) for one ``[[link]]``."""
    if link.kind != "shock":
        return [(link.kind, f"{link.where}.kind")]
    p = link.params
    out = [(f"shock.{p['obstacle']}", f"{link.where}.obstacle")]
    if p["friction"] > 0 or p["tangential_stiffness"] > 0:
        out.append(("shock.friction", f"{link.where}.friction"))
    return out


WHAT = {"shock.plane": "a plane obstacle", "shock.two_planes": "a two-planes obstacle",
        "shock.circle": "a circular obstacle", "shock.friction": "friction",
        "impact": "link kind 'impact'", "shock": "link kind 'shock'"}


def check_link_support(link, analysis):
    """Raise NotAvailableError when ``analysis`` cannot run ``link``."""
    basis = analysis.get("basis", "physical")
    scheme = analysis.get("scheme")
    offered = SUPPORT.get((basis, scheme), set())
    for feature, where in needed_features(link):
        if feature not in offered:
            on = "" if basis == "physical" else f" on a {basis} basis"
            raise NotAvailableError(f"{analysis.where}.links: {WHAT.get(feature, feature)} "
                                    f"({where}, link '{link.name}') is not available with "
                                    f"scheme '{scheme}'{on}")
