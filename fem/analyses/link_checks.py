"""The links of a study checked before any computation: their nodes and normals on the
model, and the link features each analysis' scheme offers (the scheme catalog,
``fem.catalog``): a link needing a feature its scheme refuses stops the run with the key at
fault and the catalog's physical reason.
"""

from __future__ import annotations

from fem.errors import NotAvailableError
from fem import catalog, laws

def needed_features(link) -> list[tuple[str, str]]:
    """(catalog feature, key path of the option that needs it) for one ``[[link]]``: its
    law's answer."""
    return laws.module(link.kind).needed(link.params, link.where)


def check_analysis_links(study, analysis):
    """Every link of ``analysis`` runs with its scheme, and impact links are located."""
    links = [next(lk for lk in study.links if lk.name == name)
             for name in analysis.get("links") or ()]
    for link in links:
        check_link_support(link, analysis)
    kinds = {lk.kind for lk in links}
    if "impact" in kinds and len(kinds) > 1:
        raise NotAvailableError(f"{analysis.where}.links: impact links with links of other "
                                f"kinds in one analysis are not available in this version")
    if links and analysis.get("basis") == "modal" and analysis.get("static_correction"):
        raise NotAvailableError(f"{analysis.where}.static_correction: not available with "
                                f"links (the correction would move the links' dofs)")
    if "impact" in kinds and analysis.get("events") == "step":
        raise NotAvailableError(f'{analysis.where}.events: impact links need events = "locate" '
                                f'(the impact law applies at the contact instant)')


def check_link_support(link, analysis):
    """Raise NotAvailableError when ``analysis`` cannot run ``link``."""
    basis = analysis.get("basis", "physical")
    scheme = analysis.get("scheme")
    row = catalog.info(basis, scheme)
    for feature, where in needed_features(link):
        on = "" if basis == "physical" else f" on a {basis} basis"
        what = catalog.FEATURE_TITLES.get(feature, feature)
        if row is not None and not row.offers(feature):
            raise NotAvailableError(f"{analysis.where}.links: {what} ({where}, link "
                                    f"'{link.name}') cannot run with scheme '{scheme}'{on}: "
                                    f"{row.reason(feature)}")


def check_links(study, model):
    """Resolve every link on the model before any computation: an unknown node, or a
    direction along a translation the model lacks, stops the run with the key at fault."""
    from fem.links.geometry import check_directions, relative_translation

    for link in study.links:
        D = relative_translation(link, model)
        check_directions(link, model, D, laws.module(link.kind).directions(link.params))
