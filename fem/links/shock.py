"""Shock links: unilateral penalty contacts on the dofs, with optional Coulomb friction.

The kinematics of a link is the relative translation d (3,) of its node against the obstacle
(one node: d is the node's translation) or of its first node against its second (two nodes:
d = u_first - u_second); ``d = D u`` with D a (3, n) matrix on the model's dofs (rows of
translations the model lacks are zero).

A plane contact has a penetration p = n . d - gap (m), positive in contact: for one node
against a plane of normal n the gap closes when the node moves along n; for two nodes, n
points from the first node to the second, so the gap closes when the first moves along n.
Equivalently p = l . u - gap with l = D^T n (``PlaneContact.ell``). In contact the link pushes
back with the normal force f = k p + c p' (N) along -n on the first node. A "two_planes"
obstacle is two such contacts, along n and -n.

A circular obstacle (a node in a round hole of radius ``gap``, or two nodes whose relative
motion is limited to a circle) works in the plane normal to its axis a: the radial part of d is
r = d - (a . d) a, the penetration p = |r| - gap, the contact normal r / |r|, and the normal force
k p + c p' pushes the node back towards the axis.

Release: "force" (the link never pulls: in contact while p > 0 and k p + c p' > 0) or "gap"
(in contact while p > 0; the damper may pull).

Friction (Coulomb coefficient mu): while in contact, an elastic-plastic tangential spring of
stiffness kt acts in the plane normal to the contact normal. Its trial force
kt (d - anchor)_t + ct d'_t (t: tangential part, ct the tangential damping) is the friction
force while it does not exceed mu times the normal force (stick); beyond it the force is
mu f_n along the trial direction and the anchor moves so that the spring carries it (slip; the
tangential damper then carries nothing). With ``tangential_stiffness = 0`` the stick spring
takes the normal stiffness k (a penalty regularisation of Coulomb's law: the stick phase
deforms by at most mu f_n / k). The anchor is reset where the contact opens; a contact closed
at the start of an analysis while its surfaces slide starts sliding (its spring at the limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

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


@dataclass
class Contact:
    """One contact of a shock link, on the relative translation d of the link.

    kind : "plane" (``direction`` is the normal n) or "circle" (``direction`` is the axis);
    side : "+" or "-" for planes (the second plane of a two_planes obstacle is "-"),
    "radial" for a circle; the other fields as in the ``[[link]]`` block (SI units).
    """
    link: str
    side: str
    kind: str
    direction: np.ndarray
    gap: float
    stiffness: float
    damping: float
    release: str
    friction: float = 0.0
    tangential_stiffness: float = 0.0
    tangential_damping: float = 0.0


@dataclass
class ShockLink:
    """A shock link on the model's dofs: d = D u (3,), and its contacts."""
    name: str
    where: str
    D: sp.csr_matrix
    contacts: list[Contact] = field(default_factory=list)
    params: dict = field(default_factory=dict)

    @property
    def has_friction(self) -> bool:
        return any(c.friction > 0 for c in self.contacts)


def relative_translation(link, model) -> sp.csr_matrix:
    """D (3, n): d = D u is the translation of the link's node, or of its first node minus
    that of its second. Rows of the translations the model does not have are zero."""
    nodes = [model.mesh.node_index(name, f"{link.where}.nodes") for name in link.nodes]
    rows, cols, vals = [], [], []
    for sign, node in zip((1.0, -1.0), nodes):
        for k, comp in enumerate(TRANSLATIONS):
            dof = int(model.dofs.dof([node], comp)[0])
            if dof >= 0:
                rows.append(k)
                cols.append(dof)
                vals.append(sign)
    return sp.csr_matrix((vals, (rows, cols)), shape=(3, model.size))


def _check_direction(link, model, D, vector, key):
    """A plane normal must lie in the translations of the model."""
    present = np.asarray(abs(D).sum(axis=1)).ravel() > 0
    for k, comp in enumerate(TRANSLATIONS):
        if vector[k] != 0 and not present[k]:
            raise StudyError(f"{link.where}.{key}: has a component along {comp}, which is not "
                             f"in the model (model.components)")


def shock_link(link, model) -> ShockLink:
    """The kinematics and contacts of one ``[[link]]`` of kind shock."""
    p = link.params
    D = relative_translation(link, model)
    common = dict(gap=p["gap"], stiffness=p["stiffness"], damping=p["damping"],
                  release=p["release"], friction=p["friction"],
                  tangential_stiffness=p["tangential_stiffness"],
                  tangential_damping=p["tangential_damping"])
    if p["obstacle"] == "circle":
        axis = np.asarray(p["axis"], float)
        present = np.asarray(abs(D).sum(axis=1)).ravel() > 0
        radial = np.eye(3) - np.outer(axis, axis)
        if not np.any(np.abs(radial[present]) > 1e-12):
            raise StudyError(f"{link.where}.axis: the model has no translation normal to the "
                             f"axis, so the node cannot move in the hole")
        contacts = [Contact(link.name, "radial", "circle", axis, **common)]
    else:
        normal = np.asarray(p["normal"], float)
        _check_direction(link, model, D, normal, "normal")
        contacts = [Contact(link.name, "+", "plane", normal, **common)]
        if p["obstacle"] == "two_planes":
            contacts.append(Contact(link.name, "-", "plane", -normal, **common))
    return ShockLink(link.name, link.where, D, contacts, dict(p))


def plane_contacts(link, model, scheme: str) -> list[PlaneContact]:
    """The plane contacts of one ``[[link]]`` of kind shock, on the model's dofs."""
    p = link.params
    if p["obstacle"] == "circle":
        raise NotAvailableError(f"{link.where}.obstacle: a circular obstacle is not available yet "
                                f"with scheme '{scheme}' (its gap is not linear in the dofs)")
    if p["friction"] > 0 or p["tangential_stiffness"] > 0:
        raise NotAvailableError(f"{link.where}.friction: friction is not available yet with "
                                f"scheme '{scheme}'")
    shock = shock_link(link, model)
    out = []
    for c in shock.contacts:
        ell = np.asarray(shock.D.T @ c.direction).ravel()
        out.append(PlaneContact(link.name, c.side, ell, c.gap, c.stiffness, c.damping,
                                c.release))
    return out
