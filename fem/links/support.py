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
    ("physical", "exact"): {"shock.plane", "shock.two_planes", "impact"},
    ("physical", "rk4"): {"impact"},
    ("modal", "rk4"): {"impact"},
    ("physical", "newmark"): {"shock.plane", "shock.two_planes", "shock.circle",
                              "shock.friction"},
    ("physical", "hht"): {"shock.plane", "shock.two_planes", "shock.circle", "shock.friction"},
    ("physical", "central_difference"): {"shock.plane", "shock.two_planes", "shock.circle",
                                         "shock.friction"},
    ("modal", "central_difference"): {"shock.plane", "shock.two_planes"},
    ("modal", "adaptive2"): {"shock.plane", "shock.two_planes"},
    ("modal", "exact"): {"shock.plane", "shock.two_planes", "impact"},
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


def check_analysis_links(study, analysis):
    """Every link of ``analysis`` is offered by its scheme, impact and shock links are not
    mixed, and impact links are located (events = "locate")."""
    links = [next(lk for lk in study.links if lk.name == name)
             for name in analysis.get("links") or ()]
    for link in links:
        check_link_support(link, analysis)
    kinds = {lk.kind for lk in links}
    if len(kinds) > 1:
        raise NotAvailableError(f"{analysis.where}.links: shock and impact links in one "
                                f"analysis are not available in this version")
    if links and analysis.get("basis") == "modal":
        if analysis.get("scheme") == "central_difference" and analysis.get("events") == "locate":
            raise NotAvailableError(f'{analysis.where}.events: "locate" is not available with '
                                    f'scheme central_difference on a modal basis: use "step"')
        if analysis.get("static_correction"):
            raise NotAvailableError(f"{analysis.where}.static_correction: not available with "
                                    f"links (the correction would move the links' dofs)")
    if "impact" in kinds and analysis.get("events") == "step":
        raise NotAvailableError(f'{analysis.where}.events: impact links need events = "locate" '
                                f'(the impact law applies at the contact instant)')


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


def check_links(study, model):
    """Resolve every link on the model before any computation: an unknown node, or a
    normal along a translation the model lacks, stops the run with the key at fault."""
    from fem.links.shock import shock_link

    for link in study.links:
        if link.kind == "shock":
            shock_link(link, model)
        else:
            for name in link.nodes:
                model.mesh.node_index(name, f"{link.where}.nodes")
