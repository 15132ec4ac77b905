"""Shock links as unilateral plane contacts on the dofs.

A plane contact has a penetration p = l . u - gap (m), positive in contact: for one node
against a plane of normal n, l carries n on the node's translations; for two nodes, l carries
n on the first and -n on the second (n points from the first node to the second, so the gap
closes when the first moves along n). In contact the link pushes back with the normal force
f = k p + c p' (N) along -l. A "two_planes" obstacle is two such contacts, along n and -n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import NotAvailableError, StudyError
from fem.study import TRANSLATIONS


@dataclass
class PlaneContact:
    """One unilateral contact of a shock link.

    ell : (n,) kinematic vector on all dofs; gap (m); stiffness (N/m); damping (N.s/m);
    release : "force" (never pulls) or "gap" (in contact while p > 0).
    """
    link: str
    side: str
    ell: np.ndarray
    gap: float
    stiffness: float
    damping: float
    release: str


def plane_contacts(link, model, scheme: str) -> list[PlaneContact]:
    """The plane contacts of one ``[[link]]`` of kind shock, on the model's dofs."""
    p = link.params
    if p["obstacle"] == "circle":
        raise NotAvailableError(f"{link.where}.obstacle: a circular obstacle is not available yet "
                                f"with scheme '{scheme}' (its gap is not linear in the dofs)")
    if p["friction"] > 0 or p["tangential_stiffness"] > 0:
        raise NotAvailableError(f"{link.where}.friction: friction is not available yet with "
                                f"scheme '{scheme}'")
    normal = np.asarray(p["normal"], float)
    nodes = [model.mesh.node_index(name, f"{link.where}.nodes") for name in link.nodes]
    ell = np.zeros(model.size)
    for sign, node in zip((1.0, -1.0), nodes):
        for k, comp in enumerate(TRANSLATIONS):
            if normal[k] == 0:
                continue
            dof = int(model.dofs.dof([node], comp)[0])
            if dof < 0:
                raise StudyError(f"{link.where}.normal: has a component along {comp}, which is "
                                 f"not in the model (model.components)")
            ell[dof] += sign * normal[k]
    sides = [("+", ell)] if p["obstacle"] == "plane" else [("+", ell), ("-", -ell)]
    return [PlaneContact(link.name, side, vec, p["gap"], p["stiffness"], p["damping"],
                         p["release"]) for side, vec in sides]
