"""The one event locator, and what happens at an event.

Every link law gives event functions (``fem.links.law``: columns G0, G1 of the contact
values), positive while a contact keeps its mode. With ``events = "locate"`` a scheme holds
the modes over a step and stops (status EVENT) when a function that was positive at the start
of the step (armed) is zero or below at its end, or when a contact's normal function changes
sign on the step's dense output (``kernels.crossed``). Then :func:`locate`:

1. finds the earliest crossing: on the cubic Hermite interpolant of the link displacements
   from (d, d') at both ends of the step (normal functions), on the exact solution for a
   scheme that has it (``scheme.dense_values``), or by linear interpolation (friction and
   bond-force functions); a scheme whose recomputed step follows a known cubic gives the
   end rates of that cubic (``scheme.landing_rates``), and the estimate is its root;
2. lands the scheme on it: the step is computed again from its start to the estimate
   (``scheme.trial``), and the estimate is corrected on the function of the recomputed
   state, inside a bracket that always holds the crossing: the second trial at the root of
   the parabola through the function at the start, at the end of the step and at the first
   trial; then by the secant through the last two trials when it falls inside the bracket,
   by regula falsi (Illinois) otherwise, until
   the function vanishes to round-off, the next correction is a few ulps of t from a trial
   where the function has crossed, or the bracket is a few ulps wide; a secant correction
   of less than a few hundred ulps (whose own error is far below an ulp) is taken with a
   few ulps more, a last trial on the crossed side; the step is then taken on the side
   where the function has crossed;
3. changes the mode by the contact's law (``at_event`` of its module in ``fem.laws``: a shock
   contact opens, closes, sticks or slips, a friction contact that does not slide there being
   decided once by Coulomb's set-valued law, ``fem.laws.stick_slip``; a rigid contact hits or
   releases its bond, ``fem.laws.impact``), then settles the instant (:func:`settle`): the
   laws are evaluated with the new modes and every mode that is now violated beyond round-off
   (a contact that closes while sliding, simultaneous impacts of Newton's cradle, a bond under
   tension) changes too, until none does;
4. restarts the scheme (acceleration from equilibrium with the new modes).

Steps 1 and 2 are ``fem.integrators.landing``.

Guards: an instant where the modes keep changing (more than ``MAX_CASCADE`` changes per
contact), or an event storm (more than ``MAX_EVENTS_PER_STEP`` events inside one step of the
grid) stops the analysis with a message naming the link and the time; an impact link whose
bounces come faster than ``ZENO_TIME`` apart sticks (a ball coming to rest).
"""

from __future__ import annotations

import numpy as np

from fem import laws
from fem.errors import SolverError
from fem.integrators import landing
from fem.integrators.kernels import DONE, EL, instant_loss
from fem.laws.columns import ACT, G0, G1, KIND, MODE, OPEN
from fem.links.law import stored_energy

__all__ = ["locate", "settle", "apply", "initial_modes", "MAX_CASCADE", "MAX_EVENTS_PER_STEP",
           "EVENT_COLUMNS"]

MAX_CASCADE = 50
MAX_EVENTS_PER_STEP = 64

EVENT_COLUMNS = ("velocity_before", "velocity_after", "energy_lost")


def _laws_of(scheme) -> tuple[list, list]:
    """(the law of each contact, (law, its contacts) of each law present), with the handlers
    at instants a law leaves out (``fem.laws.contract.Instants``); found once per scheme."""
    found = getattr(scheme, "_instant_laws", None)
    if found is None or len(found[0]) != scheme.P.shape[0]:
        each = [laws.instants(laws.of_code(code)) for code in scheme.P[:, KIND]]
        groups: dict = {}
        for c, law in enumerate(each):
            groups.setdefault(law, []).append(c)
        found = scheme._instant_laws = (each, list(groups.items()))
    return found


def _law(scheme, c: int):
    """The law module of contact c (``_laws_of``)."""
    return _laws_of(scheme)[0][c]


def _by_law(scheme) -> list:
    """(law module, its contacts) of each law present, in the registry's order."""
    return _laws_of(scheme)[1]


def locate(scheme, out, row) -> tuple[int, list]:
    """Land on the earliest event of the pending step, apply it and restart the scheme
    (module docstring). Returns (row, event records)."""
    records: list = []
    landed = getattr(scheme, "exact_event", None)
    if landed is not None:
        # located on the exact solution by the scheme itself
        row = scheme.accept(out, row)
        scheme.before_event()
        stored = _stored(scheme)
        records += apply(scheme, *landed)
        _dissipate(scheme, stored)
        return row, records
    cands = landing.candidates(scheme)
    t_b = scheme.pending[0]
    for theta, lo, hi, c, g, glo in cands:
        if not landing.land(scheme, c, g, theta, lo, hi, glo):
            continue
        # another function may have crossed before: land on the earliest
        cv = scheme.buf.CV[1 - scheme.cur]
        cv0 = scheme.buf.CV[scheme.cur]
        hit = (cv0[:, G0:G0 + 2] > 0.0) & (cv[:, G0:G0 + 2] <= 0.0)
        hit[c, g] = False
        earlier = [(int(cc), int(gg)) for cc, gg in zip(*np.nonzero(hit))]
        if earlier:
            t_star = scheme._trial[0]
            frac = (t_star - scheme.t) / (t_b - scheme.t)
            c2, g2 = earlier[0]
            landing.land(scheme, c2, g2, 0.5 * frac, 0.0, frac, float(cv0[c2, G0 + g2]))
            c, g = c2, g2
        row = scheme.accept(out, row)
        scheme.before_event()
        stored = _stored(scheme)
        records += apply(scheme, c, g)
        _dissipate(scheme, stored)
        return row, records
    # a false alarm of the dense output: the recomputed motion crosses nothing
    if landing.trial(scheme, t_b) != DONE:
        scheme.not_settled(t_b)
    row = scheme.accept(out, row)
    scheme.before_event()
    stored = _stored(scheme)
    records += settle(scheme, [])
    _dissipate(scheme, stored)
    return row, records


def _stored(scheme) -> float:
    return float(stored_energy(scheme.buf.CV[scheme.cur]))


def _dissipate(scheme, stored_before: float):
    """At an instant the links do no work: the energy their springs lose when their modes
    change (a contact released while penetrated, a slide that starts under a static
    coefficient above the sliding one, a stick whose spring holds less than the sliding
    force) is dissipated (``kernels.instant_loss``). The energy a spring gains there (a
    stick that holds more than the sliding force, ``stick_slip``: the penalty's own energy,
    at most (mu_s^2 - mu^2) F_n^2 / (2 kt)) is not taken from the dissipation, which never
    decreases: the balance shows it."""
    c, b = scheme.cur, scheme.buf
    b.E[c][EL] += scheme.call(instant_loss)(scheme.ops, b.X[c], b.V[c], float(stored_before),
                                            _stored(scheme))


# --------------------------------------------------------------------------- at an instant
def apply(scheme, c: int, g: int) -> list:
    """Change the mode of contact c for its event g at the current instant, settle, restart."""
    records: list = []
    decided: set = set()
    _law(scheme, c).at_event(scheme, c, g, records, decided)
    return settle(scheme, records, decided)


def settle(scheme, records: list, decided: set | None = None) -> list:
    """Apply every mode change that holds at the current instant (module docstring, step 3)
    and restart the scheme. ``decided``: the friction contacts whose mode Coulomb's law has
    set at this instant (their friction functions are not tested again there)."""
    P = scheme.P
    decided = set() if decided is None else decided
    t = scheme.t
    n_changes = 0
    limit = MAX_CASCADE * max(1, P.shape[0])
    while True:
        scheme.link_state()
        cv = scheme.buf.CV[scheme.cur]
        changed = False
        for c in _suspects(scheme, cv):
            changed = _law(scheme, c).settle_check(scheme, cv, c, records, decided)
            if changed:
                break
        if not changed:
            scheme.restart()
            for law, contacts in _by_law(scheme):
                changed = law.after_settle(scheme, contacts, records)
                if changed:
                    break
        if not changed:
            return records
        n_changes += 1
        if n_changes > limit:
            last = ", ".join(f"{r[2]} {r[1]}" for r in records[-6:])
            raise SolverError(f"{scheme.label}: the modes of link "
                              f"'{records[-1][2] if records else '?'}' keep changing at "
                              f"t = {t:.12g} s (endless cascade of events at one instant; "
                              f"the last changes: {last or 'none recorded'})")


def _suspects(scheme, cv) -> list:
    """The contacts (in order) whose mode may be violated at the current state
    (``settle``): every one that acts at instants (a rigid contact), and the others with an
    event function below zero; their laws test them against their round-off bounds."""
    low = (cv[:, G0] < 0.0) | ((cv[:, ACT] > 0.5) & (cv[:, G1] < 0.0))
    low[scheme.links.rigid] = True
    return np.nonzero(low)[0].tolist()


# --------------------------------------------------------------------------- at the start
def initial_modes(scheme) -> list:
    """The link modes at the start (see ``Scheme.start``); returns the event records. Each
    law sets its contacts' modes from the state at the start (``start``), then from the
    forces of the first equilibrium (``start_at_rest``), then once every law has
    (``start_settled``)."""
    P = scheme.P
    b, cur = scheme.buf, scheme.cur
    b.CV[cur] = 0.0
    b.CV[cur][:, MODE] = OPEN
    scheme.link_state(np.full(P.shape[0], -1.0))
    records: list = []
    groups = _by_law(scheme)
    for law, contacts in groups:
        law.start(scheme, contacts, records)
    scheme.link_state()
    scheme.equilibrium()
    for law, contacts in groups:
        law.start_at_rest(scheme, contacts, records)
    scheme.link_state()
    scheme.equilibrium()
    for law, contacts in groups:
        law.start_settled(scheme, contacts, records)
    return settle(scheme, records)
