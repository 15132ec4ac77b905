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
3. changes the mode (``fem.links.law.affect`` for shock contacts, the impact law of
   ``fem.links.impact`` for rigid ones; a friction contact that does not slide there is
   decided once by Coulomb's set-valued law, ``fem.integrators.stick_slip``: it sticks or
   slides the one way the forces allow), then settles the instant (:func:`settle`): the laws
   are evaluated with the new modes and every mode that is now violated beyond round-off (a
   contact that closes while sliding, simultaneous impacts of Newton's cradle, a bond under
   tension) changes too, until none does;
4. restarts the scheme (acceleration from equilibrium with the new modes).

Steps 1 and 2 are ``fem.integrators.landing``.

Guards: an instant where the modes keep changing (more than ``MAX_CASCADE`` changes per
contact), or an event storm (more than ``MAX_EVENTS_PER_STEP`` events inside one step of the
grid) stops the analysis with a message naming the link and the time; an impact link whose
bounces come faster than ``ZENO_TIME`` apart sticks (a ball coming to rest).
"""

from __future__ import annotations

import math

import numpy as np

from fem.errors import SolverError
from fem.integrators import landing, stick_slip
from fem.integrators.kernels import DONE, quadratic
from fem.links import impact
from fem.links.columns import (ACT, ANC, BLK, BONDED, CMP, ENN, ENT, G0, G1, GAP, KIND, LAM, MODE,
                               NRM, OPEN, PDOT, PEN, RIGID, SDIR, SLIP, STICK, VG)
from fem.links.columns import E as RESTITUTION
from fem.links.law import affect

MAX_CASCADE = 50
MAX_EVENTS_PER_STEP = 64

EVENT_COLUMNS = ("velocity_before", "velocity_after", "energy_lost")


class Record(tuple):
    """(time, kind, link, detail, velocity_before, velocity_after, energy_lost)."""


def _record(t, kind, link, detail, before=math.nan, after=math.nan, lost=math.nan):
    return (float(t), kind, link, detail, float(before), float(after), float(lost))


def shock_detail(scheme, c: int) -> str:
    cv = scheme.buf.CV[scheme.cur]
    return f"side {scheme.links.sides[c]}, approach speed {cv[c, PDOT]:.9g} m/s"


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
    cv = scheme.buf.CV[scheme.cur]
    return float(np.sum(cv[:, ENN]) + np.sum(cv[:, ENT]))


def _dissipate(scheme, stored_before: float):
    """At an instant the links do no work: the energy their springs lose when their modes
    change (a contact released while penetrated, a slide that starts under a static
    coefficient above the sliding one, a stick whose spring holds less than the sliding
    force) is dissipated. The energy a spring gains there (a stick that holds more than the
    sliding force, ``stick_slip``: the penalty's own energy, at most (mu_s^2 - mu^2) F_n^2 /
    (2 kt)) is not taken from the dissipation, which never decreases: the balance shows
    it."""
    c, b = scheme.cur, scheme.buf
    change = stored_before - _stored(scheme)
    # a contact landed on its switching point holds energy at the round-off of that point:
    # transfers below the round-off of the mechanical energy are not dissipation
    v, x = b.V[c], b.X[c]
    ops = scheme.ops
    total = abs(0.5 * quadratic(ops.Md, ops.Mi, ops.Mp, v, v)) + abs(0.5 * quadratic(
        ops.Kd, ops.Ki, ops.Kp, x, x)) + max(stored_before, 0.0)
    if change > 1e-13 * total:
        b.E[c][2] += change


# --------------------------------------------------------------------------- at an instant
def apply(scheme, c: int, g: int) -> list:
    """Change the mode of contact c for its event g at the current instant, settle, restart."""
    records: list = []
    cv = scheme.buf.CV[scheme.cur]
    if scheme.P[c, KIND] == RIGID:
        if cv[c, MODE] == BONDED:
            _release(scheme, c, records, "interaction force reached zero")
        else:
            _impact(scheme, c, records)
    else:
        decided: set = set()
        _switch(scheme, c, g, records, decided)
        return settle(scheme, records, decided)
    return settle(scheme, records)


def _switch(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """Change the mode of shock contact c for its event function g at the current instant
    (``fem.links.law.affect``); a friction contact that does not slide there is decided by
    Coulomb's set-valued law instead (``stick_slip``), once per instant (``decided``), and a
    slide in the plane that turns without stopping takes its new direction. Returns whether
    anything changed."""
    P = scheme.P
    cv = scheme.buf.CV[scheme.cur]
    t = scheme.t
    link = scheme.links.link_of(c)
    if g == 1 and stick_slip.is_friction(P, cv, c):
        if stick_slip.at_rest(scheme, c):
            decided.add(c)
            kinds = stick_slip.resolve(scheme, c)
            for kind in kinds:
                records.append(_record(t, kind, link, shock_detail(scheme, c)))
            return bool(kinds)
        if stick_slip.turn(scheme, c):
            return True
    kind = affect(P, c, g, cv, scheme.buf.DB[scheme.cur])
    records.append(_record(t, kind, link, shock_detail(scheme, c)))
    return True


def _tolerances(scheme, cv, c):
    """Round-off bounds of the two event functions of contact c at the current state."""
    d = scheme.buf.DB[scheme.cur]
    dd = scheme.buf.DD[scheme.cur]
    o = 3 * int(scheme.P[c, BLK])
    length = 1e-12 * max(1.0, float(np.max(np.abs(d[o:o + 3]), initial=0.0)))
    if cv[c, MODE] == SLIP:
        speed = 1e-12 * max(1e-9, float(np.max(np.abs(dd[o:o + 3]), initial=0.0)))
        return length, speed
    return length, stick_slip.force_round_off(scheme.P, cv, c, d, o)


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
            if P[c, KIND] == RIGID:
                if cv[c, MODE] != BONDED and impact.gap(cv, c) <= _gap_tolerance(scheme, c) \
                        and cv[c, PDOT] > 1e-12 * max(1.0, abs(cv[c, PDOT])):
                    _impact(scheme, c, records)
                    changed = True
                    break
                continue
            tols = _tolerances(scheme, cv, c)
            for g in (0, 1):
                if g == 1 and (cv[c, ACT] < 0.5 or c in decided):
                    continue
                if cv[c, G0 + g] < -tols[g]:
                    closed = cv[c, ACT] > 0.5
                    changed = _switch(scheme, c, g, records, decided)
                    if g == 0 and not closed and stick_slip.is_friction(P, cv, c):
                        decided.discard(c)
                    if changed:
                        break
            if changed:
                break
        if not changed:
            scheme.restart()
            cv = scheme.buf.CV[scheme.cur]
            bonded = np.nonzero((P[:, KIND] == RIGID) & (cv[:, MODE] == BONDED))[0]
            tol = 1e-9 * float(np.max(np.abs(cv[bonded, LAM]), initial=0.0))
            for c in bonded.tolist():
                if impact.releases(P, cv, c, tol):
                    _release(scheme, c, records, f"bond under tension ({cv[c, LAM]:.6g} N) "
                                                 f"released")
                    changed = True
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
    (``settle``): every rigid one, and the shock ones with an event function below zero;
    ``settle`` tests them against their round-off bounds (``_tolerances``)."""
    P = scheme.P
    low = (cv[:, G0] < 0.0) | ((cv[:, ACT] > 0.5) & (cv[:, G1] < 0.0))
    return np.nonzero(low | (P[:, KIND] == RIGID))[0].tolist()


def _gap_tolerance(scheme, c):
    d = scheme.buf.DB[scheme.cur]
    o = 3 * int(scheme.P[c, BLK])
    return 1e-12 * max(1.0, float(np.max(np.abs(d[o:o + 3]), initial=0.0)),
                       abs(scheme.P[c, 5]))


def _bonded(scheme):
    cv = scheme.buf.CV[scheme.cur]
    return [c for c in scheme.links.rigid if cv[c, MODE] == BONDED]


def _impact(scheme, j: int, records: list):
    """Newton's law on rigid contact j (``fem.links.impact``): impulse, or a bond."""
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    stick, target = impact.impact_target(scheme.P, cv, j)
    settled = ""
    zeno = getattr(scheme, "zeno", None)
    if zeno is not None and not stick:
        scale = max(abs(float(scheme.P[j, GAP])), float(np.max(np.abs(b.DB[cur]), initial=0)))
        stick = zeno.bounce(j, scheme.t, float(cv[j, PDOT]), float(scheme.P[j, RESTITUTION]),
                             scale)
        if stick:
            target = 0.0
            settled = (f" (impacts {zeno.last[j][1]:.3g} s apart, the bounces of a body "
                       f"coming to rest)")
    rate = float(cv[j, PDOT])
    others = [c for c in _bonded(scheme) if c != j]
    rows = others + [j]
    R = scheme.bond_rows(rows)
    MR = scheme.mass_solve(R.T)
    rates = np.array([cv[c, PDOT] for c in rows])
    targets = np.zeros(len(rows))
    targets[-1] = target
    v = b.V[cur]
    before = 0.5 * float(v @ (scheme.dyn.mass @ v))
    v += impact.impulse(R, MR, rates, targets)
    after = 0.5 * float(v @ (scheme.dyn.mass @ v))
    lost = before - after
    b.E[cur][2] += lost
    scheme.link_state()
    new_rate = float(b.CV[cur][j, PDOT])
    name = scheme.links.link_of(j)
    if stick:
        b.CV[cur][j, MODE] = BONDED
        b.CV[cur][j, ACT] = 1.0
        b.CV[cur][j, CMP] = 0.0
        records.append(_record(scheme.t, "stick", name,
                               f"approach {rate:.9g} m/s: bodies move together{settled}", -rate,
                               -new_rate, lost))
    else:
        records.append(_record(scheme.t, "impact", name,
                               f"approach {rate:.9g} m/s, rebound {-new_rate:.9g} m/s", -rate,
                               -new_rate, lost))


def _release(scheme, c: int, records: list, why: str):
    cv = scheme.buf.CV[scheme.cur]
    cv[c, MODE] = OPEN
    cv[c, ACT] = 0.0
    cv[c, LAM] = 0.0
    cv[c, CMP] = 0.0
    records.append(_record(scheme.t, "separation", scheme.links.link_of(c), why, 0.0, 0.0, 0.0))


# --------------------------------------------------------------------------- at the start
def initial_modes(scheme) -> list:
    """The link modes at the start (see ``Scheme.start``); returns the event records."""
    P = scheme.P
    b, cur = scheme.buf, scheme.cur
    b.CV[cur] = 0.0
    b.CV[cur][:, MODE] = OPEN
    scheme.link_state(np.full(P.shape[0], -1.0))
    cv = b.CV[cur]
    records: list = []
    # a shock contact exactly at its surface, that the motion drives in: closed (its event
    # function starts at zero, where no crossing could ever be seen)
    touching = [c for c in range(P.shape[0]) if _driven_in(scheme, c)]
    for c in touching:
        cv[c, ACT] = 1.0
        cv[c, MODE] = STICK
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        if P[c, KIND] == RIGID:
            r, rate = impact.gap(cv, c), cv[c, PDOT]
            if r <= _gap_tolerance(scheme, c) and abs(rate) <= P[c, VG]:
                cv[c, MODE] = BONDED
                cv[c, ACT] = 1.0
            continue
        if stick_slip.is_friction(P, cv, c):
            # closed at the start: its tangential spring unstretched, sticking; while its
            # surfaces slide it is sliding along their velocity
            cv[c, ANC:ANC + 3] = b.DB[cur][o:o + 3]
            cv[c, MODE] = STICK
            vt = stick_slip.slip_velocity(scheme, c)
            speed = float(np.linalg.norm(vt))
            if speed > 0.0:
                cv[c, MODE] = SLIP
                cv[c, SDIR:SDIR + 3] = vt / speed
    scheme.link_state()
    scheme.equilibrium()
    # at rest, Coulomb's law on the forces at the start: stick, or slide the way they drive
    for c in range(P.shape[0]):
        if stick_slip.is_friction(P, b.CV[cur], c) and b.CV[cur][c, MODE] == STICK:
            stick_slip.resolve(scheme, c)
    scheme.link_state()
    scheme.equilibrium()
    # bodies merely touching at the start (no compression between them) are free
    for _ in range(len(scheme.links.rigid) + 1):
        cv = b.CV[cur]
        loose = [c for c in _bonded(scheme) if cv[c, LAM] <= 1e-12 * max(
            1.0, max((abs(cv[k, LAM]) for k in _bonded(scheme)), default=0.0))]
        if not loose:
            break
        cv[loose[0], MODE] = OPEN
        cv[loose[0], ACT] = 0.0
        scheme.equilibrium()
    for c in _bonded(scheme):
        records.append(_record(scheme.t, "stick", scheme.links.link_of(c),
                               "bodies together at the start", -b.CV[cur][c, PDOT],
                               -b.CV[cur][c, PDOT], 0.0))
    return settle(scheme, records)


def _driven_in(scheme, c: int) -> bool:
    """Whether shock contact c, open at the start, touches its obstacle to round-off and
    the motion drives it in: approaching, or at rest with its acceleration (the contact
    open) into the obstacle."""
    P = scheme.P
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    if P[c, KIND] == RIGID or cv[c, ACT] > 0.5:
        return False
    o = 3 * int(P[c, BLK])
    d, dd = b.DB[cur][o:o + 3], b.DD[cur][o:o + 3]
    if abs(cv[c, PEN]) > 1e-12 * max(1.0, float(np.max(np.abs(d)))):
        return False
    speed = 1e-12 * max(1e-9, float(np.max(np.abs(dd))))
    if abs(cv[c, PDOT]) > speed:
        return cv[c, PDOT] > 0.0
    acc = stick_slip.link_rows(scheme, c) @ scheme.equilibrium(assign=False)
    if scheme.kin.imposed:
        acc = acc + scheme.kin.La[o:o + 3] @ np.asarray(scheme.w, float)
    return float(cv[c, NRM:NRM + 3] @ acc) > 0.0


class ZenoGuard:
    """The bounces of a rigid contact coming to rest (a ball on a floor with a zero grazing
    velocity: impacts ever closer, an infinite number before a finite time). At an impact that
    is shorter after the link's previous one than the one before it, the link sticks when the
    flights still to come cannot be resolved: the interval is below ``threshold(t)`` (a
    millionth of the scheme's step, 1e-10 of the analysis' span, 64 ulps of t), or the next
    flight's height, about e**2 |approach rate| interval / 4, is below a thousand round-offs of
    the link's positions (``scale``). The flights left would have lasted about the interval
    times e / (1 - e)."""

    HEIGHT_ROUNDOFFS = 1e3

    def __init__(self, span: float, step: float):
        self.floor = max(1e-6 * step, 1e-10 * span)
        self.last: dict = {}

    def threshold(self, t: float) -> float:
        return max(self.floor, 64.0 * math.ulp(t))

    def bounce(self, j: int, t: float, rate: float = 0.0, e: float = 0.0,
               scale: float = 0.0) -> bool:
        prev, before = self.last.get(j, (None, math.inf))
        interval = t - prev if prev is not None else math.inf
        self.last[j] = (t, interval)
        if not interval < before:
            return False
        height = e * e * abs(rate) * interval / 4.0
        return (interval < self.threshold(t)
                or height < self.HEIGHT_ROUNDOFFS * np.finfo(float).eps * scale)
