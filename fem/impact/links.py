"""Impact links: rigid contacts with a coefficient of restitution, sticking and separation.

An impact link keeps the gap r = gap + u(M2) - u(M1) (m) along one component non-negative:
two nodes M1, M2 (M2 on the positive side of M1), or one node M2 above a fixed wall at
-gap (r = gap + u(M2)). Its kinematic row carries +1 on the dof of M2 and -1 on that of M1,
so that r = gap + ell . u.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import StudyError


@dataclass
class ImpactLink:
    name: str
    where: str
    ell: np.ndarray          # (n,) on all dofs of the model
    gap: float               # m
    restitution: float
    grazing: float           # m/s
    bond: str                # "unilateral" | "until_tension"


def impact_link(link, model) -> ImpactLink:
    """The impact link of a ``[[link]]`` block of kind impact, on the model's dofs."""
    p = link.params
    component = p["component"]
    ell = np.zeros(model.size)
    nodes = [model.mesh.node_index(name, f"{link.where}.nodes") for name in link.nodes]
    signs = (1.0,) if len(nodes) == 1 else (-1.0, 1.0)
    for sign, node, name in zip(signs, nodes, link.nodes):
        dof = int(model.dofs.dof([node], component)[0])
        if dof < 0 or dof >= model.size:
            raise StudyError(f"{link.where}.component: {component} is not a dof of node "
                             f"'{name}' in this model (model.components)")
        ell[dof] += sign
    return ImpactLink(link.name, link.where, ell, p["gap"], p["restitution"],
                      p["grazing_velocity"], p["bond"])


def check_pairs(links) -> None:
    """Two impact links on the same pair of nodes and component are refused."""
    seen = {}
    for link in links:
        if link.kind != "impact":
            continue
        key = (frozenset(link.nodes), link.params["component"])
        if key in seen:
            raise StudyError(f"{link.where}.nodes: link '{link.name}' joins the same nodes along "
                             f"{link.params['component']} as link '{seen[key].name}' "
                             f"({seen[key].where}); give one impact link per pair")
        seen[key] = link


def check_initial_gaps(links, model) -> None:
    """Every impact link must start with a non-negative gap."""
    u0 = np.asarray(model.initial_displacement, float)
    for link in links:
        if link.kind != "impact":
            continue
        il = impact_link(link, model)
        r = il.gap + il.ell @ u0
        if r < -1e-12 * max(1.0, abs(il.gap)):
            raise StudyError(f"{link.where}.gap: the gap of impact link '{link.name}' is "
                             f"negative at the start ({r:.6g} m): the bodies overlap")
