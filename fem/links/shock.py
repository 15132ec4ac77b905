"""Shock links: unilateral penalty contacts on the dofs (the normal law; friction is
``fem.links.friction``).

The kinematics of a link is the relative translation d (3,) of its node against the obstacle
(one node: d is the node's translation) or of its first node against its second (two nodes:
d = u_first - u_second); ``d = D u`` with D a (3, n) matrix on the model's dofs (rows of
translations the model lacks are zero).

A plane contact has a penetration p = n . d - gap (m), positive in contact: for one node
against a plane of normal n the gap closes when the node moves along n; for two nodes, n
points from the first node to the second, so the gap closes when the first moves along n. In
contact the link pushes back with the normal force f = k p + c p' (N) along -n on the first
node. A "two_planes" obstacle is two such contacts, along n and -n.

A circular obstacle (a node in a round hole of radius ``gap``, or two nodes whose relative
motion is limited to a circle) works in the plane normal to its axis a: the radial part of d is
r = d - (a . d) a, the penetration p = |r| - gap, the contact normal r / |r|, and the normal force
k p + c p' pushes the node back towards the axis.

Release: "force" (the link never pulls: in contact while p > 0 and k p + c p' > 0) or "gap"
(in contact while p > 0; the damper may pull). The contact function chi = p ("gap") or
min(p, p + c p' / k) ("force") is positive exactly where the contact is closed: its sign
changes are the contact's events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sp

from fem.errors import StudyError
from fem.links.columns import CIRCLE, CN, DIR, GAP, KIND, KN, REL, RELEASE_GAP
from fem.study.specs import TRANSLATIONS


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
    static_friction: float = 0.0
    tangential_stiffness: float = 0.0
    tangential_damping: float = 0.0
    friction_direction: tuple | None = None


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


def check_direction(link, model, D, vector, key):
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
                  static_friction=p.get("static_friction", p["friction"]),
                  tangential_stiffness=p["tangential_stiffness"],
                  tangential_damping=p["tangential_damping"],
                  friction_direction=p.get("friction_direction"))
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
        check_direction(link, model, D, normal, "normal")
        contacts = [Contact(link.name, "+", "plane", normal, **common)]
        if p["obstacle"] == "two_planes":
            contacts.append(Contact(link.name, "-", "plane", -normal, **common))
    return ShockLink(link.name, link.where, D, contacts, dict(p))


# ------------------------------------------------------------------ the compiled normal law
@numba.njit(cache=True, nogil=True, inline="always")
def kinematics(P, c, x0, x1, x2, r0, r1, r2):
    """Penetration p (m), its rate, the contact normal (3 numbers) and the radial distance
    (circle) of contact c at the link displacement (x0, x1, x2) and rate (r0, r1, r2)."""
    if P[c, KIND] != CIRCLE:
        n0, n1, n2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
        p = n0 * x0 + n1 * x1 + n2 * x2 - P[c, GAP]
        return p, n0 * r0 + n1 * r1 + n2 * r2, n0, n1, n2, 0.0
    a0, a1, a2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
    ad = a0 * x0 + a1 * x1 + a2 * x2
    q0, q1, q2 = x0 - ad * a0, x1 - ad * a1, x2 - ad * a2
    rho = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2)
    if rho > 0.0:
        n0, n1, n2 = q0 / rho, q1 / rho, q2 / rho
    else:
        n0, n1, n2 = 0.0, 0.0, 0.0
    return rho - P[c, GAP], n0 * r0 + n1 * r1 + n2 * r2, n0, n1, n2, rho


@numba.njit(cache=True, nogil=True, inline="always")
def normal_force(P, c, p, pd):
    """(normal force k p + c p', contact function chi): chi > 0 exactly where the contact is
    closed under its release rule."""
    k = P[c, KN]
    fn = k * p + P[c, CN] * pd
    if P[c, REL] == RELEASE_GAP:
        return fn, p
    return fn, min(p, fn / k)


@numba.njit(cache=True, nogil=True)
def add_normal(P, c, b, o, fn, pd, n0, n1, n2, rho, dd, phi, Jd, Jv, jac):
    """Add the normal force of a closed contact to phi (along -n on the first node) and, with
    ``jac``, its derivatives; the normal of a circle turns with d."""
    phi[o] -= fn * n0
    phi[o + 1] -= fn * n1
    phi[o + 2] -= fn * n2
    if not jac:
        return
    k = P[c, KN]
    cc = P[c, CN]
    n = (n0, n1, n2)
    for q in range(3):
        for s in range(3):
            Jd[b, q, s] -= k * n[q] * n[s]
            Jv[b, q, s] -= cc * n[q] * n[s]
    if P[c, KIND] == CIRCLE and rho > 0.0:
        # d n / d d = (I - a a^T - n n^T) / rho
        a = (P[c, DIR], P[c, DIR + 1], P[c, DIR + 2])
        for q in range(3):
            for s in range(3):
                pqs = ((1.0 if q == s else 0.0) - a[q] * a[s] - n[q] * n[s]) / rho
                g = 0.0
                for t in range(3):
                    g += (((1.0 if s == t else 0.0) - a[s] * a[t] - n[s] * n[t]) / rho
                          * dd[o + t])
                Jd[b, q, s] -= fn * pqs + cc * n[q] * g


def traits(row) -> dict:
    """What the schemes may rely on for a shock contact of parameter row ``row`` (with its
    friction, ``fem.links.friction``): ``rate``, its force depends on the rate d' (a normal
    damper, friction); ``elastic``, its forces follow from d alone (no damper; friction
    without tangential damper), so an explicit step needs no iteration; ``plane_elastic``,
    its force is k max(p, 0) along a fixed normal, nothing else."""
    from fem.links.columns import CT, MU, PLANE

    damped = row[CN] != 0.0
    friction = row[MU] > 0.0
    return dict(rate=damped or friction, elastic=not damped and (not friction or row[CT] == 0.0),
                plane_elastic=row[KIND] == PLANE and not damped and not friction,
                evolving=False, instant=False, friction=friction)
