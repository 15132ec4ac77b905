"""Coulomb's law at an instant where a friction contact does not slide: stick, or slide the
one way the forces allow.

The friction law of ``fem.laws.friction`` regularizes sticking with a stiff tangential
spring, and its event functions say when a mode must end: a sliding contact where its slip
velocity reaches zero, a sticking one where its spring force reaches mu_s F_n. At such an
instant, and at the start of an analysis, the regularized law alone cannot tell what comes
next: a slide that stops may stick or slide back at once, a spring force that touches the
limit while the contact is at rest may turn back (the spring swinging on its own) or go on.
Toggling the mode on the sign of an event function then goes round in circles (a stick
whose force is at its limit slips, a slip whose acceleration points back sticks again, ...).

Here the instant is decided by the set-valued law of rigid Coulomb friction, on the forces
at that instant. With the contact's own friction force removed, the relative tangential
acceleration of the link is a_f (the rest of the structure, its loads, the other links), and
a tangential force f on the link's first node adds W f, W = Pt L_b M^-1 L_b^T Pt (the
link's rows L_b of the coordinates' map, Pt the projector on the directions where friction
acts: the tangent plane, or the one friction direction). Sticking needs f_s = -W^+ a_f:

* |f_s| <= mu_s F_n: the contact sticks, its spring holding f_s: the stick starts where the
  rigid law puts it, instead of swinging about it (a contact that nothing drives
  tangentially starts unstretched). Where a slide stops, the spring held the sliding force
  mu F_n; setting it to f_s changes its stored energy by (|f_s|^2 - (mu F_n)^2) / (2 kt),
  at most (mu_s^2 - mu^2) F_n^2 / (2 kt): the regularization's own energy, which vanishes
  with 1 / kt. Starting the spring at mu F_n instead would swing it about f_s up to
  2 |f_s| - mu F_n, beyond mu_s F_n where mu_s > mu: a slip that rigid friction does not
  make.
* otherwise it slides along the unit direction e for which the acceleration a_f - mu F_n W e
  points along e (friction opposes the slide): e = a_f / |a_f| when W is isotropic in the
  plane, found by a fixed-point iteration otherwise; e = sign(t . a_f) t for one direction.

Either way the mode taken holds at the instant by construction: the locator does not see
its event function again until the motion has moved it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fem.laws.columns import ACT, BLK, FN, KIND, MODE, NRM, RIGID, SLIP, STICK
from fem.laws.shock_columns import ANC, CT, FDIR, FT, KT, MU, MUS, SDIR, UNI

#: iterations of the sliding direction under an anisotropic W (Coulomb in the plane)
DIRECTION_ITERATIONS = 60
#: the relative accuracy of the sliding direction
DIRECTION_TOLERANCE = 1e-12


def is_friction(P, cv, c: int) -> bool:
    """Whether contact c is a closed shock contact with friction."""
    return int(P[c, KIND]) != RIGID and P[c, MU] > 0.0 and cv[c, ACT] > 0.5


def projector(P, cv, c: int) -> np.ndarray:
    """Pt (3, 3) of contact c: the tangent plane (Coulomb) or the friction direction."""
    if P[c, UNI] > 0.5:
        t = P[c, FDIR:FDIR + 3]
        return np.outer(t, t)
    n = cv[c, NRM:NRM + 3]
    return np.eye(3) - np.outer(n, n)


def _block(scheme, c: int) -> int:
    return 3 * int(scheme.P[c, BLK])


def link_rows(scheme, c: int) -> np.ndarray:
    """The rows L_b (3, n) of contact c's link on the integrated coordinates."""
    o = _block(scheme, c)
    return np.asarray(scheme.L[o:o + 3].toarray())


def slip_velocity(scheme, c: int) -> np.ndarray:
    """Pt d' (3,) of contact c at the current state."""
    cv = scheme.buf.CV[scheme.cur]
    o = _block(scheme, c)
    return projector(scheme.P, cv, c) @ scheme.buf.DD[scheme.cur][o:o + 3]


def speed_round_off(scheme, c: int) -> float:
    """The slip speed (m/s) below which contact c is at rest at the current instant: 1e-9 of
    the link's speed and of the velocity its acceleration gives over a step, or the speed at
    which a slide would stop within the round-off of the positions (a few ulps of the link's
    displacement, 1e-9 of the stick spring's give at the limit) against the tangential
    accelerations the contact sees (the rest of the structure, and its sliding force)."""
    P = scheme.P
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    o = _block(scheme, c)
    dd = b.DD[cur][o:o + 3]
    rows = link_rows(scheme, c)
    Pt = projector(P, cv, c)
    accel = rows @ b.A[cur]
    kin = getattr(scheme, "kin", None)
    if kin is not None and kin.imposed:
        # the imposed part of the link's motion (a driven contact has no other)
        accel = accel + kin.La[o:o + 3] @ np.asarray(scheme.w, float)
    acc = float(np.linalg.norm(Pt @ accel))
    chunk = getattr(scheme, "chunk", None)
    h = float(chunk.dt) if chunk is not None and chunk.dt > 0 else 0.0
    speed = 1e-9 * max(float(np.max(np.abs(dd), initial=0.0)), acc * h, 1e-300)
    W = compliance(scheme, c)
    fn = max(float(cv[c, FN]), 0.0)
    acc += P[c, MU] * fn * float(np.linalg.norm(Pt @ W @ Pt, 2))
    d = b.DB[cur][o:o + 3]
    length = 64.0 * np.finfo(float).eps * max(float(np.max(np.abs(d), initial=0.0)),
                                               float(np.max(np.abs(cv[c, ANC:ANC + 3]))))
    if P[c, KT] > 0.0:
        length += 1e-9 * P[c, MUS] * fn / P[c, KT]
    return max(speed, float(np.sqrt(2.0 * acc * length)))


def at_rest(scheme, c: int) -> bool:
    """Whether friction contact c does not slide at the current instant (to round-off)."""
    return float(np.linalg.norm(slip_velocity(scheme, c))) <= speed_round_off(scheme, c)


class Decision(NamedTuple):
    """What Coulomb's law gives contact c at an instant where it does not slide: ``mode``
    STICK or SLIP; ``direction`` e (3,) of the slide; for a stick, ``force`` (3,) the
    friction force on the link's first node that holds it."""
    mode: int
    direction: np.ndarray
    force: np.ndarray


def compliance(scheme, c: int) -> np.ndarray:
    """W = L_b M^-1 L_b^T (3, 3): the link's relative acceleration per unit force on its
    first node (kept per contact: the rows and the mass do not change during a run)."""
    cache = scheme.__dict__.setdefault("_link_compliance", {})
    W = cache.get(c)
    if W is None:
        rows = link_rows(scheme, c)
        W = rows @ np.asarray(scheme.mass_solve(rows.T), float).reshape(scheme.n, 3)
        W = cache[c] = 0.5 * (W + W.T)
    return W


def _free_acceleration(scheme, c: int, W: np.ndarray) -> np.ndarray:
    """a_f (3,): the link's relative acceleration at the current state and modes, less the
    part of contact c's own friction force (column FT, on its first node)."""
    b, cur = scheme.buf, scheme.cur
    rel = link_rows(scheme, c) @ scheme.equilibrium(assign=False)
    kin = scheme.kin
    if kin.imposed:
        o = _block(scheme, c)
        rel = rel + kin.La[o:o + 3] @ np.asarray(scheme.w, float)
    return rel - W @ b.CV[cur][c, FT:FT + 3]


def _solve(Wt: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The least-squares solution of Wt f = rhs (Wt singular off the friction directions)."""
    return np.linalg.lstsq(Wt, rhs, rcond=1e-12)[0]


def decide(scheme, c: int) -> Decision:
    """Coulomb's law for friction contact c at the current state (module docstring)."""
    P = scheme.P
    cv = scheme.buf.CV[scheme.cur]
    W = compliance(scheme, c)
    Pt = projector(P, cv, c)
    aft = Pt @ _free_acceleration(scheme, c, W)
    Wt = Pt @ W @ Pt
    fn = max(float(cv[c, FN]), 0.0)
    keep = cv[c, SDIR:SDIR + 3].copy()
    if float(np.max(np.abs(Wt), initial=0.0)) <= 0.0:
        # no mass behind the contact's tangential motion: nothing to decide, it sticks
        return Decision(STICK, keep, cv[c, FT:FT + 3].copy())
    needed = -(Pt @ _solve(Wt, aft))
    limit = P[c, MUS] * fn
    size = float(np.linalg.norm(needed))
    if size <= limit * (1.0 + 1e-12) or size <= 1e-300:
        return Decision(STICK, keep, needed)
    if P[c, UNI] > 0.5:
        t = P[c, FDIR:FDIR + 3]
        e = (t if float(t @ aft) > 0.0 else -t).copy()
        return Decision(SLIP, e, np.zeros(3))
    e = aft / float(np.linalg.norm(aft))
    slide = P[c, MU] * fn
    for _ in range(DIRECTION_ITERATIONS):
        r = aft - slide * (Wt @ e)
        nr = float(np.linalg.norm(r))
        if nr <= 0.0:
            break
        new = r / nr
        done = float(np.linalg.norm(new - e)) <= DIRECTION_TOLERANCE
        e = new
        if done:
            break
    return Decision(SLIP, e, np.zeros(3))


def stick_at_limit(P, cv, c: int, d: np.ndarray, o: int):
    """Clip the spring force of sticking contact c to mu_s F_n (its anchor moved towards the
    node): a contact decided sticking at its limit holds exactly the limit force."""
    kt = P[c, KT]
    if kt <= 0.0:
        return
    limit = P[c, MUS] * max(float(cv[c, FN]), 0.0)
    stretch = projector(P, cv, c) @ (d[o:o + 3] - cv[c, ANC:ANC + 3])
    size = kt * float(np.linalg.norm(stretch))
    if size > limit:
        keep = limit / size * (1.0 - 4.0 * np.finfo(float).eps)
        cv[c, ANC:ANC + 3] = d[o:o + 3] - keep * stretch


def _stick(scheme, c: int, decision: Decision):
    """Stick contact c as ``decision`` says: its spring holds the rigid stick force (clipped
    to the limit)."""
    P = scheme.P
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    d = b.DB[cur]
    o = _block(scheme, c)
    kt = P[c, KT]
    if kt > 0.0:
        vt = slip_velocity(scheme, c)
        force = np.array(decision.force, float)
        cv[c, ANC:ANC + 3] = d[o:o + 3] + (force + P[c, CT] * vt) / kt
    stick_at_limit(P, cv, c, d, o)
    cv[c, MODE] = STICK


def take(scheme, c: int, decision: Decision) -> str:
    """Put friction contact c in the mode of ``decision`` at the current instant. Returns
    the event kind: "stick", "slip", or "" when the contact keeps its mode and direction."""
    cv = scheme.buf.CV[scheme.cur]
    old = int(cv[c, MODE])
    old_dir = cv[c, SDIR:SDIR + 3].copy()
    if decision.mode == STICK:
        _stick(scheme, c, decision)
        return "" if old == STICK else "stick"
    e = decision.direction
    cv[c, MODE] = SLIP
    cv[c, SDIR:SDIR + 3] = e
    if old != SLIP:
        return "slip"
    return "" if float(old_dir @ e) > 1.0 - 1e-9 else "slip"


def at_limit(scheme, c: int) -> str:
    """A sticking contact c at its limit (its friction function at zero within round-off)
    when another contact changed at this instant: Coulomb's law decides whether it can still
    hold what it must now (contacts on one body reach their limit together: the first one
    decided slips, which leaves the others more than they can hold). It slips if it cannot,
    or if its spring, at the limit, is still being stretched (its function would leave zero
    downwards, a crossing no step would find): returns the event kind ("slip"), or "" when it
    holds, keeping its spring as it is (its force does not jump)."""
    decision = decide(scheme, c)
    if decision.mode == STICK:
        force = scheme.buf.CV[scheme.cur][c, FT:FT + 3]
        size = float(np.linalg.norm(force))
        if not (size > 0.0 and float(-force @ slip_velocity(scheme, c)) > 0.0):
            return ""
        decision = Decision(SLIP, -force / size, np.zeros(3))
    return take(scheme, c, decision)


def resolve(scheme, c: int) -> list[str]:
    """Decide friction contact c at rest (``decide``) and take the mode; the event kinds it
    makes (a slide that stops and goes back at once is a stick and a slip)."""
    cv = scheme.buf.CV[scheme.cur]
    old = int(cv[c, MODE])
    decision = decide(scheme, c)
    kinds = []
    if old == SLIP and decision.mode == SLIP and \
            float(cv[c, SDIR:SDIR + 3] @ decision.direction) <= 1.0 - 1e-9:
        kinds.append("stick")
    kind = take(scheme, c, decision)
    if kind:
        kinds.append(kind)
    return kinds


def turn(scheme, c: int) -> bool:
    """A sliding contact whose slip velocity has turned away from its sliding direction
    without stopping (Coulomb friction in the plane): the new direction, no event. Returns
    whether it turned."""
    P = scheme.P
    cv = scheme.buf.CV[scheme.cur]
    if P[c, UNI] > 0.5 or int(cv[c, MODE]) != SLIP:
        return False
    vt = slip_velocity(scheme, c)
    speed = float(np.linalg.norm(vt))
    if speed <= speed_round_off(scheme, c) or float(vt @ cv[c, SDIR:SDIR + 3]) > 0.5 * speed:
        return False
    cv[c, SDIR:SDIR + 3] = vt / speed
    return True


def force_round_off(P, cv, c: int, d: np.ndarray, o: int) -> float:
    """The round-off (N) of contact c's friction event function of a sticking contact: its
    limit to 1e-9, and its spring force from the anchor and the node's positions (a few ulps
    of the larger, times kt)."""
    scale = max(float(np.max(np.abs(d[o:o + 3]), initial=0.0)),
                float(np.max(np.abs(cv[c, ANC:ANC + 3]), initial=0.0)))
    return (1e-9 * max(abs(float(cv[c, FN])) * max(P[c, MUS], P[c, MU]), 1e-300)
            + 16.0 * np.finfo(float).eps * scale * P[c, KT])


__all__ = ["decide", "resolve", "turn", "at_rest", "is_friction", "force_round_off", "take",
           "at_limit"]
