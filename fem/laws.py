"""The registry of link laws: what each law declares to the rest of fem.

One row per ``kind`` of ``[[link]]`` block. A law declares its *features* (the variants a
study can ask of it: a plane or circular obstacle, Coulomb friction...), each with the
capabilities the schemes and the catalog read instead of the law's columns:

* ``rate``: its force depends on the rate of the link's motion (a damper, friction, a law
  integrated along the step's path);
* ``linear``: the equations are linear between its events (the exact scheme can propagate
  them); when not, ``nonlinear`` says why;
* ``state``: it carries internal variables from step to step (an anchor, a sliding direction,
  an elongation), from the committed state of the last step;
* ``evolving``: one of them follows a rate equation of its own between events (the law
  integrates it over each step, of any size, from the committed state);
* ``events``: it has event functions (mode changes the locator finds);
* ``instant``: it acts at instants (impacts: a velocity jump, which needs located events).

and the series it archives per instant (name, unit, meaning). This module imports nothing
from fem: the scheme catalog (``fem.catalog``) builds its feature matrix from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Feature:
    """One variant of a law. ``name`` is the catalog's feature id, ``title`` its column
    title; flags as in the module docstring."""
    name: str
    title: str
    rate: bool = False
    linear: bool = True
    nonlinear: str = ""
    state: bool = False
    evolving: bool = False
    events: bool = True
    instant: bool = False


@dataclass(frozen=True)
class Series:
    name: str
    unit: str
    doc: str


@dataclass(frozen=True)
class Law:
    """A kind of link: its features and its archived series (``optional``: series present
    only with some options, named in ``when``)."""
    kind: str
    doc: str
    features: tuple
    series: tuple = field(default_factory=tuple)


_CIRCLE_NONLINEAR = ("the radial penetration |r| - gap of a circular obstacle is not linear "
                     "in the dofs: a closed contact has no exact solution")
_COULOMB_NONLINEAR = ("sliding in a plane follows the direction of the sliding velocity, "
                      "which is not linear in the state: a sliding phase has no exact "
                      "solution (unidirectional friction is linear and is offered)")

LAWS: tuple[Law, ...] = (
    Law("shock", "penalty contact against an obstacle or between two nodes",
        (Feature("shock.plane", "shock, plane", rate=True),
         Feature("shock.two_planes", "shock, two planes", rate=True),
         Feature("shock.circle", "shock, circle", rate=True, linear=False,
                 nonlinear=_CIRCLE_NONLINEAR),
         Feature("friction.coulomb", "Coulomb friction", rate=True, linear=False,
                 nonlinear=_COULOMB_NONLINEAR, state=True),
         Feature("friction.unidirectional", "unidirectional friction", rate=True,
                 state=True)),
        (Series("normal_force", "N", "normal force, compression > 0"),
         Series("penetration", "m", "penetration, > 0 in contact"),
         Series("state", "1", "1 closed, 0 open"),
         Series("tangential_force", "N", "friction force magnitude (with friction)"),
         Series("sliding_velocity", "m/s", "sliding speed (with friction)"))),
    Law("impact", "rigid contact with Newton's restitution",
        (Feature("impact", "impact", instant=True),),
        (Series("gap", "m", "gap, >= 0"),
         Series("normal_force", "N", "bond force while bonded"),
         Series("state", "1", "1 bonded, 0 free"))),
    Law("maxwell", "a spring in series with a linear dashpot, along a direction",
        (Feature("maxwell", "Maxwell element", rate=True, state=True, evolving=True,
                 events=False),),
        (Series("force", "N", "force carried, tension > 0"),
         Series("elongation", "m", "elongation along the direction"),
         Series("dashpot_elongation", "m", "the dashpot's elongation (internal variable)"))),
)

KINDS = tuple(law.kind for law in LAWS)
FEATURES: dict[str, Feature] = {f.name: f for law in LAWS for f in law.features}


def law(kind: str) -> Law:
    return next(row for row in LAWS if row.kind == kind)
