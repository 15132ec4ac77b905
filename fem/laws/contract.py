"""What a link law declares to the rest of fem (its registry row, ``fem.laws``).

A law is one module of this package. Besides its compiled functions (called by the one
dispatch, ``fem.links.law``), it declares:

* ``CODES``: the kind codes of its contacts (column KIND of their parameter rows);
* ``LAW``: a :class:`Law`: its kind (the ``kind`` of its ``[[link]]`` blocks), its features
  with their capabilities, its archived series with their units;
* ``read(t, p, components)``: reads its study keys from the block's table ``t``
  (``fem.validate.Table``) into the parameters ``p``, with their checks (the reader reads
  ``kind``, ``name``, ``nodes`` and ``support`` itself; ``components``: the model's);
* optionally ``read_functions(t, p, functions)``: reads the keys that name the study's
  functions (``[functions]``, already built: ``functions`` by name), after ``read``; and
  ``function_roles(data, where)``: (function name, what the law makes of it) for each
  function the raw block ``data`` names, which the reader adds to the message of an error
  in that function (read before the links);
* ``needed(p, where)``: the features of ``LAW`` a link with parameters ``p`` needs, with the
  key path that asks for each (the scheme catalog refuses a feature its scheme cannot run);
* ``directions(p)``: (key, unit vector, how): "along", the vector must lie in the model's
  translations; "across", the model must have a translation normal to it;
* ``rows(p, nodes)``: the (side, parameter row) of each of its contacts (columns ``fem.laws.
  columns``: the shared ones and its own, ``LAW.own``; a row as wide as its own columns
  need, the rest is zeros) for a link of ``nodes`` nodes, the link's block column left to
  the caller;
* ``attrs(p, rows)``: the attributes of its results group;
* ``series(v, p)``: its series from the archived values v (k, contacts, NA) of its contacts;
* ``traits(row)``: what the schemes may rely on for a contact (``fem.links.traits``);
* ``stiffness(row)``: the largest stiffness (N/m) a contact puts on its link (0: none), for
  the schemes' frequency estimates and resolution checks;
* optionally ``FAILURE``: why a force that is not finite stops the run (a local integration
  that did not converge writes one, never an inaccurate value): the run's message names the
  link, the time and this reason;
* at instants, for the one event locator (``fem.integrators.events``), on the scheme it is
  handed: ``at_event(scheme, c, g, records, decided)`` changes contact c's mode for its event
  function g; ``settle_check(scheme, cv, c, records, decided)`` applies a change that the
  current state demands beyond round-off (returns whether it did); ``after_settle(scheme,
  contacts, records)`` a change once the others have settled (a bond under tension);
  ``start(scheme, contacts, records)``, ``start_at_rest(...)`` and ``start_settled(...)`` its
  modes at the start, before and after the first equilibrium and once the others are set.

Capabilities of a feature, read by the catalog and the schemes instead of the law's columns:

* ``rate``: its force depends on the rate of the link's motion;
* ``linear``: its equations are linear between its events (the exact scheme can propagate
  them); when not, ``nonlinear`` says why;
* ``state``: it carries internal variables from step to step (an anchor, a sliding direction,
  an elongation), from the committed state of the last step;
* ``evolving``: one of them follows a rate equation of its own between events (the law
  integrates it over each step, of any size, from the committed state); it keeps that
  variable and its rate in the value columns EVOLVING and EVOLVING_RATE, and the link's
  coordinate along DIR in PEN (rate PDOT), which the schemes read and set
  (``fem.links.law.internal``, ``hold_internal``);
* ``events``: it has event functions (mode changes the locator finds);
* ``instant``: it acts at instants (impacts: a velocity jump, which needs located events).

``LAW.samples``: links of the law that ``fem warmup`` runs in every scheme that offers their
feature, to compile the loops real studies of the law take (:class:`Sample`).

``LAW.own``: the law's own parameter and value columns (``fem.laws.columns.own``), after the
shared ones; the registry sizes the arrays to the widest law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fem.laws.columns import DIR, KIND, MODE, NO_OWN, Own


def record(t, kind, link, detail, before=math.nan, after=math.nan, lost=math.nan) -> tuple:
    """An event record: (time, kind, link, detail, velocity_before, velocity_after,
    energy_lost)."""
    return (float(t), kind, link, detail, float(before), float(after), float(lost))


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
    """An archived series: ``links/<link>/<name>``, its unit and meaning; ``when``: the
    option it comes with, or "" (always)."""
    name: str
    unit: str
    doc: str
    when: str = ""


@dataclass(frozen=True)
class Sample:
    """A link of a law for ``fem warmup``'s small model: one node P with the components DX
    and DZ, a mass of 1 kg on springs of 1e3 N/m along X and Z, started with DX = 0.01 m and
    run for 0.1 s. ``link``: the link's keys besides its name and nodes; ``press``: a force
    FZ (N) on P (a contact pressed from the start); it runs in the schemes that offer
    ``feature``."""
    name: str
    feature: str
    link: dict = field(compare=False)
    press: float = 0.0


@dataclass(frozen=True)
class Law:
    """A kind of link: its features, its archived series, its samples and its own
    columns."""
    kind: str
    doc: str
    features: tuple
    series: tuple = field(default_factory=tuple)
    samples: tuple = field(default_factory=tuple)
    own: Own = NO_OWN


class Instants:
    """The handlers at instants of a law module (module docstring), with those it leaves out
    doing nothing: a law without events (a Maxwell element) declares none."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        found = getattr(self.module, name, None)
        if found is not None:
            return found
        if name in ("settle_check", "after_settle", "at_event"):
            return _changes_nothing
        if name in ("start", "start_at_rest", "start_settled"):
            return _sets_nothing
        raise AttributeError(name)

    def __hash__(self):
        return hash(self.module)

    def __eq__(self, other):
        return isinstance(other, Instants) and other.module is self.module


# ------------------------------------------------------------------ a law along a direction
def along(p: dict) -> list:
    """``directions(p)`` of a law that acts along its key ``direction``."""
    return [("direction", p["direction"], "along")]


def axial_rows(own: Own, code: int, p: dict, columns: dict) -> list:
    """``rows(p, nodes)`` of a law with one contact acting along ``direction``: its kind
    code, its direction and its own parameters (``columns``: column -> value)."""
    row = np.zeros(own.width_p)
    row[KIND] = code
    row[DIR:DIR + 3] = p["direction"]
    for column, value in columns.items():
        row[column] = value
    return [("series", row)]


def mode_phase(P, c: int, cv) -> tuple:
    """``phase_key`` of a law whose equations between events depend on a contact's mode
    alone (its internal variables, if any, being part of the exact scheme's state)."""
    return (int(cv[c, MODE]),)


def _changes_nothing(*args) -> bool:
    return False


def _sets_nothing(*args) -> None:
    return None
