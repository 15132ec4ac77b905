"""Which compiled step loop runs a transient analysis, and why: the one place that decides.

Each family of schemes has one loop, with a general step and fast paths that rely on what
the links' laws allow (their traits, ``fem.links.traits``), never on a law's name or
columns:

* Newmark family (newmark, hht, central_difference): one loop
  (``fem.integrators.newmark_loop``) whose step is the *lean* one when the steps are never
  undone and every link force is k max(p, 0) along a fixed normal (central differences,
  ``events = "step"``, no imposed motion on the links' dofs, every contact ``plane_elastic``):
  ``fem.integrators.newmark_lean``; the *direct* one when, with the same scheme and
  conditions, every contact's forces follow from the displacements alone (``elastic``):
  ``fem.integrators.newmark_direct``; otherwise the general step with the links' Newton
  iteration (``fem.integrators.newmark_steps``), on the whole system with many links whose
  laws are ``axial`` on a physical basis (``fem.integrators.newmark_tangent``). The lean and
  direct steps run only where the step matrix is banded or modal; the general step takes the
  rest.
* explicit schemes (rk4, rk32, rk54, euler, adaptive2, devogelaere): one loop
  (``fem.integrators.explicit_loop``, whose modes also compute and take the driver's trial
  steps); it runs the steps in the *segment* of ``fem.integrators.explicit_lean`` for
  adaptive2 with located events on an undamped modal basis whose links are all
  ``plane_elastic`` with no imposed motion, else its general steps.
* exact: its pieces take the contacts' events themselves when no link acts at instants
  (impacts) nor has friction; otherwise each event is located by the driver.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    """``loop``: the loop's name (``LOOPS``); ``why``: one sentence a user can read."""
    loop: str
    why: str


#: the loops (for the Newmark family, the steps of its one loop), with the module that holds
#: each
LOOPS = {
    "newmark lean": "fem.integrators.newmark_lean",
    "newmark direct": "fem.integrators.newmark_direct",
    "newmark general": "fem.integrators.newmark_steps",
    "newmark whole": "fem.integrators.newmark_tangent",
    "explicit segment": "fem.integrators.explicit_lean",
    "explicit general": "fem.integrators.explicit_loop",
    "exact pieces": "fem.integrators.exact_pieces",
    "exact located": "fem.integrators.exact",
}

NEWMARK_FAMILY = ("newmark", "hht", "central_difference")
#: the number of links from which the Newmark family's step takes Newton's method on the
#: whole system (``fem.integrators.newmark_tangent``) when their laws allow it: below, the
#: links' condensed system is small and cheaper
FROM_LINKS = 16


def choose(scheme: str, traits, *, basis: str, locate: bool, explicit_newmark: bool = False,
           imposed: bool = False, adaptive: bool = False, damped: bool = False,
           diagonal: bool = False) -> Choice:
    """The loop of a scheme (canonical name) whose contacts have ``traits``: ``locate`` for
    events = "locate"; ``explicit_newmark`` a Newmark-family scheme with beta = 0 and no HHT
    alpha (central differences); ``imposed`` an imposed motion on the links' dofs;
    ``adaptive`` the scheme chooses its steps; ``damped`` a damping matrix; ``diagonal`` a
    diagonal stiffness (a modal basis)."""
    count = traits.count
    if scheme in NEWMARK_FAMILY:
        blocked = []
        if not explicit_newmark:
            blocked.append("the scheme is implicit (beta > 0 or an HHT alpha)")
        if locate:
            blocked.append('events are located (events = "locate")')
        if imposed:
            blocked.append("the links' dofs have an imposed motion")
        if count == 0 and not locate:
            return Choice("newmark lean", "no link: steps never undone (when the step matrix "
                          "is banded or modal)")
        if not blocked and traits.all("plane_elastic"):
            return Choice("newmark lean", "central differences without located events, whose "
                          "link forces are k max(p, 0) along fixed normals: steps never undone, "
                          "forces from the predictor (when the step matrix is banded or modal)")
        if not blocked and count and traits.all("elastic"):
            return Choice("newmark direct", "central differences whose link forces follow from "
                          "the displacements alone: no Newton iteration (when the step matrix "
                          "is banded or modal)")
        if not blocked:
            blocked.append("a link force depends on the rates or on an internal variable")
        if basis == "physical" and count >= FROM_LINKS and traits.all("axial"):
            return Choice("newmark whole", f"Newton's method on the whole system in each step, "
                          f"the links' tangent in the band of the step matrix: {count} links "
                          f"(from {FROM_LINKS} on) whose forces act along fixed directions "
                          f"(a symmetric tangent; when the step matrix is banded)")
        return Choice("newmark general", "the links' Newton iteration in each step: "
                      + "; ".join(blocked))
    if scheme == "exact":
        if count and not traits.any("instant") and not traits.any("friction"):
            return Choice("exact pieces", "the pieces find the contacts' events themselves "
                          "(no impact, no friction)")
        return Choice("exact located", "each event is located by the driver"
                      + (" (impacts or friction)" if count else " (no link)"))
    blocked = []
    if scheme != "adaptive2" or not adaptive:
        blocked.append("only adaptive2 with its own steps has a segment loop")
    if not locate:
        blocked.append('events are not located (events = "step")')
    if basis != "modal" or not diagonal:
        blocked.append("the stiffness is not diagonal (a modal basis)")
    if damped:
        blocked.append("the structure is damped")
    if imposed:
        blocked.append("the links' dofs have an imposed motion")
    if count and not traits.all("plane_elastic"):
        blocked.append("a link force is not k max(p, 0) along a fixed normal")
    if not blocked:
        return Choice("explicit segment", "adaptive2 on an undamped modal basis whose links "
                      "are elastic plane contacts: the steps run in one compiled segment")
    return Choice("explicit general", "; ".join(blocked))
