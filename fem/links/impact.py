"""Rigid impact links: restitution, sticking, bonds and their release.

An impact link is one rigid contact (``fem.links.linkset``): its gap r = -p (p = n . d - gap)
must stay >= 0. Its laws act at instants, through the integrated system's mass:

* impact (Newton's law, momentum conserved): when r reaches zero while approaching
  (p' > 0), an impulse along the contact's row sets the outgoing rate to -e times the incoming
  one, the bonded contacts keeping their zero relative velocity:
  dv = M^-1 R^T P,  P = (R M^-1 R^T)^-1 (target - R v - imposed rates), R the rows of the bonded
  contacts and of the hit one; with e = 0, or an approach slower than the grazing velocity,
  the target is zero and the contact bonds;
* bond: while bonded the bodies keep r' = 0 and r'' = 0; the bond force lambda (positive when
  it pushes the bodies apart) is a constraint each scheme solves with its step;
  ``bond = "unilateral"``: the bond holds while lambda > 0 (formed under tension, it releases
  at once); ``"until_tension"``: the bond holds until lambda passes from compression to
  tension (Dedow and Murphy's rule).
"""

from __future__ import annotations

import numpy as np

from fem.errors import StudyError
from fem.links.columns import BOND, BOND_UNILATERAL, CMP, E, LAM, PDOT, PEN, VG


def impact_target(P, cv, j: int) -> tuple[bool, float]:
    """(sticks, target rate p' after the impact) of rigid contact j hit at rate cv[j, PDOT]."""
    rate = float(cv[j, PDOT])
    e = float(P[j, E])
    stick = e == 0.0 or rate < P[j, VG]
    return stick, 0.0 if stick else -e * rate


def impulse(R: np.ndarray, MR: np.ndarray, rates: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Velocity jump dv (n,) that brings the rates R v (+ imposed) of the rows R (k, n) to
    ``targets``; MR = M^-1 R^T (n, k)."""
    lam = np.linalg.solve(R @ MR, np.asarray(targets, float) - np.asarray(rates, float))
    return MR @ lam


def releases(P, cv, j: int, tol: float) -> bool:
    """Whether bonded contact j lets go at an instant: tension beyond ``tol`` under the
    unilateral rule, or after compression under the until-tension rule."""
    lam = float(cv[j, LAM])
    if lam >= -tol:
        return False
    return P[j, BOND] == BOND_UNILATERAL or cv[j, CMP] > 0.5


def gap(cv, j: int) -> float:
    return -float(cv[j, PEN])


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
    """Every impact link must start with a non-negative gap (initial displacements and the
    imposed motion at the start included)."""
    from fem.links.shock import relative_translation
    from fem.study.specs import TRANSLATIONS

    u0 = np.asarray(model.initial_displacement, float)
    for link in links:
        if link.kind != "impact":
            continue
        d = relative_translation(link, model) @ u0
        k = TRANSLATIONS.index(link.params["component"])
        r = link.params["gap"] + (-d[k] if len(link.nodes) == 2 else d[k])
        if r < -1e-12 * max(1.0, abs(link.params["gap"])):
            raise StudyError(f"{link.where}.gap: the gap of impact link '{link.name}' is "
                             f"negative at the start ({r:.6g} m): the bodies overlap")


def traits(row) -> dict:
    """A rigid contact (``fem.links.shock.traits``): no force from d or d' (its bond force is a
    constraint), an impact at an instant."""
    return dict(rate=False, elastic=False, plane_elastic=False, evolving=False, instant=True,
                friction=False)
