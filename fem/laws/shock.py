"""Shock links: unilateral penalty contacts on the dofs (the normal law; friction is
``fem.laws.friction``).

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

import numba
import numpy as np

from fem.laws import friction, obstacle, stick_slip
from fem.laws.obstacle import read_geometry
from fem.laws.columns import (A_ACT, A_FN, A_FTM, A_PEN, A_VSL, ACT, BLK, CIRCLE, DIR, ENN, ENT,
                              FDN, FN, FTM, G0, G1, GAP, KIND, MODE, NRM, OPEN, PDOT, PEN, PLANE,
                              RELEASE_FORCE, RELEASE_GAP, SLIP, SLIPW, STICK, VSL)
from fem.laws.shock_columns import (ANC, CN, CT, FDIR, FT, FTD, KN, KT, MU, MUS, OWN, REL,
                                    SDIR, UNI)
from fem.laws.contract import Feature, Law, Sample, Series, record


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


@numba.njit(cache=True, nogil=True, inline="always")
def contact_state(P, c, o, d, dd, cv_old, cv_new):
    """The kinematics of contact c (``kinematics``) into the shared columns of its value row,
    its tangential ones cleared; returns (p, p', n0, n1, n2, rho). Shared with the rigid
    impact law (the same geometry)."""
    p, pd, n0, n1, n2, rho = kinematics(P, c, d[o], d[o + 1], d[o + 2], dd[o], dd[o + 1],
                                        dd[o + 2])
    normal_values(cv_new, c, p, pd, n0, n1, n2)
    return p, pd, n0, n1, n2, rho


@numba.njit(cache=True, nogil=True, inline="always")
def normal_values(cv_new, c, p, pd, n0, n1, n2):
    """Contact c's penetration p, its rate and its normal into its value row, its tangential
    values cleared (a contact law along a normal, with or without friction)."""
    cv_new[c, PEN] = p
    cv_new[c, PDOT] = pd
    cv_new[c, NRM] = n0
    cv_new[c, NRM + 1] = n1
    cv_new[c, NRM + 2] = n2
    cv_new[c, SLIPW] = 0.0
    cv_new[c, VSL] = 0.0
    cv_new[c, FTM] = 0.0
    cv_new[c, ENT] = 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac):
    """The shock law of contact c (``fem.links.law.evaluate``): its value row, its force on
    phi and, with ``jac``, its derivatives; the normal law, then friction where it acts."""
    b = o // 3
    p, pd, n0, n1, n2, rho = contact_state(P, c, o, d, dd, cv_old, cv_new)
    # the friction law's columns cleared (it writes them where it acts)
    for q in range(3):
        cv_new[c, FTD + q] = 0.0
        cv_new[c, FT + q] = 0.0
        cv_new[c, SDIR + q] = cv_old[c, SDIR + q]
    fn, chi = normal_force(P, c, p, pd)
    if flags[c] < 0.0:
        closed = chi > 0.0
    else:
        closed = flags[c] > 0.5
    cv_new[c, ACT] = 1.0 if closed else 0.0
    # positive while the mode holds: closed while chi > 0, open while chi <= 0
    cv_new[c, G0] = chi if closed else -chi
    cv_new[c, G1] = 1.0
    if not closed:
        cv_new[c, MODE] = OPEN
        cv_new[c, FN] = 0.0
        cv_new[c, FDN] = 0.0
        cv_new[c, ENN] = 0.0
        for q in range(3):
            cv_new[c, ANC + q] = d[o + q]
        return
    cv_new[c, FN] = fn
    cv_new[c, FDN] = P[c, CN] * pd
    cv_new[c, ENN] = 0.5 * P[c, KN] * p * p if p > 0.0 else 0.0
    add_normal(P, c, b, o, fn, pd, n0, n1, n2, rho, dd, phi, Jd, Jv, jac)
    if P[c, MU] <= 0.0:
        cv_new[c, MODE] = STICK
        for q in range(3):
            cv_new[c, ANC + q] = cv_old[c, ANC + q]
        return
    mode = -1 if flags[c] < 0.0 else int(flags[c])
    friction.tangential(P, c, b, o, d, dd, fn, n0, n1, n2, cv_old, cv_new, phi, Jd, Jv, jac,
                        mode)


def stiffness(row) -> float:
    """The largest stiffness (N/m) the contact puts on its link: normal, plus tangential when
    it rubs."""
    return float(row[KN] + (row[KT] if row[MU] > 0 else 0.0))


def traits(row) -> dict:
    """What the schemes may rely on for a shock contact of parameter row ``row`` (with its
    friction, ``fem.laws.friction``): ``rate``, its force depends on the rate d' (a normal
    damper, friction); ``elastic``, its forces follow from d alone (no damper; friction
    without tangential damper), so an explicit step needs no iteration; ``plane_elastic``,
    its force is k max(p, 0) along a fixed normal, nothing else."""
    damped = row[CN] != 0.0
    friction = row[MU] > 0.0
    return dict(rate=damped or friction, elastic=not damped and (not friction or row[CT] == 0.0),
                plane_elastic=row[KIND] == PLANE and not damped and not friction,
                evolving=False, instant=False, friction=friction)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (PLANE, CIRCLE)
#: a plane under the node (normal -Z), touched at the start
_FLOOR = {"kind": "shock", "normal": [0.0, 0.0, -1.0], "gap": 0.0, "stiffness": 1e5,
          "damping": 100.0}

LAW = Law(
    "shock", "penalty contact against an obstacle or between two nodes",
    (Feature("shock.plane", "shock, plane", rate=True),
     Feature("shock.two_planes", "shock, two planes", rate=True),
     Feature("shock.circle", "shock, circle", rate=True, linear=False,
             nonlinear="the radial penetration |r| - gap of a circular obstacle is not linear "
                       "in the dofs: a closed contact has no exact solution"),
     Feature("friction.coulomb", "Coulomb friction", rate=True, linear=False,
             nonlinear="sliding in a plane follows the direction of the sliding velocity, "
                       "which is not linear in the state: a sliding phase has no exact "
                       "solution (unidirectional friction is linear and is offered)",
             state=True),
     Feature("friction.unidirectional", "unidirectional friction", rate=True, state=True)),
    (Series("normal_force", "N", "contact force, compression positive (summed over a link's "
                                 "contacts)"),
     Series("penetration", "m", "largest penetration (negative: open, by that distance)"),
     Series("state", "1", "1 in contact, 0 open"),
     Series("tangential_force", "N", "friction force magnitude", "friction"),
     Series("sliding_velocity", "m/s", "sliding speed", "friction")),
    (Sample("shock", "shock.plane", _FLOOR, press=-10.0),
     Sample("friction", "friction.coulomb",
            dict(_FLOOR, friction=0.3, tangential_stiffness=1e5), press=-10.0)),
    OWN)


def read(t, p: dict, components=()) -> None:
    """The keys of a shock link (docs/study_format.md)."""
    read_geometry(t, p)
    p["stiffness"] = t.float("stiffness", positive=True)
    p["damping"] = t.float("damping", 0.0, min=0.0)
    p["release"] = t.str("release", "force", choices=("force", "gap"))
    p["friction"] = t.float("friction", 0.0, min=0.0)
    p["static_friction"] = _static_friction(t, p["friction"])
    p["friction_direction"] = _friction_direction(t, p)
    p["tangential_stiffness"] = t.float("tangential_stiffness", 0.0, min=0.0)
    p["tangential_damping"] = t.float("tangential_damping", 0.0, min=0.0)


def _static_friction(t, friction: float) -> float:
    """Coulomb static coefficient: the tangential force a sticking contact holds is at most
    static_friction F_n; it slides at friction F_n (default: the same coefficient)."""
    if not t.has("static_friction"):
        return friction
    value = t.float("static_friction", min=0.0)
    if friction == 0.0:
        raise t.error("static_friction", "applies only with friction > 0")
    if value < friction:
        raise t.error("static_friction", f"must be >= friction ({friction:g}), got {value:g}")
    return value


def _friction_direction(t, p: dict):
    """Unit tangential direction of unidirectional friction, or None (friction in every
    tangential direction): orthogonal to the normal of a plane, along the axis of a circle."""
    direction = t.direction("friction_direction", None)
    if direction is None:
        return None
    if p["friction"] == 0.0:
        raise t.error("friction_direction", "applies only with friction > 0")
    if p["obstacle"] == "circle":
        (dx, dy, dz), (ax, ay, az) = direction, p["axis"]
        cross = (dy * az - dz * ay, dz * ax - dx * az, dx * ay - dy * ax)
        if sum(c * c for c in cross) ** 0.5 > 1e-9:
            raise t.error("friction_direction", f"must be parallel to axis {_vector(p['axis'])} "
                                                f"for a circular obstacle, got "
                                                f"{_vector(direction)}")
    else:
        cosine = sum(d * n for d, n in zip(direction, p["normal"]))
        if abs(cosine) > 1e-9:
            raise t.error("friction_direction", f"must be orthogonal to normal "
                                                f"{_vector(p['normal'])}, got "
                                                f"{_vector(direction)} (cosine {cosine:.3g})")
    return direction


def _vector(v) -> str:
    return "[" + ", ".join(f"{x:g}" for x in v) + "]"


def _has_friction(p: dict) -> bool:
    return p["friction"] > 0 or p["tangential_stiffness"] > 0


def needed(p: dict, where: str) -> list:
    out = [(f"shock.{p['obstacle']}", f"{where}.obstacle")]
    if _has_friction(p):
        if p.get("friction_direction") is not None:
            out.append(("friction.unidirectional", f"{where}.friction_direction"))
        else:
            out.append(("friction.coulomb", f"{where}.friction"))
    return out


directions = obstacle.directions


def rows(p: dict, nodes: int = 2) -> list:
    """(side, parameter row) of each contact: one plane, two opposite planes, or a circle."""
    row = np.zeros(OWN.width_p)
    row[GAP] = p["gap"]
    row[KN] = p["stiffness"]
    row[CN] = p["damping"]
    row[REL] = RELEASE_GAP if p["release"] == "gap" else RELEASE_FORCE
    row[MU] = p["friction"]
    row[MUS] = max(p.get("static_friction", p["friction"]), p["friction"])
    row[KT] = p["tangential_stiffness"] if p["tangential_stiffness"] > 0 else p["stiffness"]
    row[CT] = p["tangential_damping"]
    if p.get("friction_direction") is not None:
        row[FDIR:FDIR + 3] = p["friction_direction"]
        row[UNI] = 1.0
    if p["obstacle"] == "circle":
        row[KIND] = CIRCLE
        row[DIR:DIR + 3] = p["axis"]
        return [("radial", row)]
    row[KIND] = PLANE
    row[DIR:DIR + 3] = p["normal"]
    out = [("+", row)]
    if p["obstacle"] == "two_planes":
        other = row.copy()
        other[DIR:DIR + 3] = -np.asarray(p["normal"], float)
        out.append(("-", other))
    return out


def attrs(p: dict, contact_rows) -> dict:
    out = dict(stiffness=p["stiffness"], damping=p["damping"], gap=p["gap"],
               release=p["release"], obstacle=p["obstacle"], friction=p["friction"])
    if _has_friction(p):
        out.update(static_friction=float(contact_rows[-1][MUS]),
                   tangential_stiffness=p["tangential_stiffness"],
                   tangential_damping=p["tangential_damping"])
    return out


def series(v, p: dict) -> dict:
    """The link's series from its contacts' archived values v (k, contacts, NA)."""
    out = {"normal_force": (v[:, :, A_FN] * v[:, :, A_ACT]).sum(axis=1),
           "penetration": v[:, :, A_PEN].max(axis=1),
           "state": v[:, :, A_ACT].max(axis=1)}
    if p["friction"] > 0:
        out["tangential_force"] = (v[:, :, A_FTM] * v[:, :, A_ACT]).sum(axis=1)
        out["sliding_velocity"] = (v[:, :, A_VSL] * v[:, :, A_ACT]).sum(axis=1)
    return out


# ------------------------------------------------------------------ at instants
@numba.njit(cache=True, nogil=True)
def normal_round_off(P, c, d):
    """The round-off (m) of contact c's normal function at link displacements d: 1e-12 of
    the largest of its link's displacements, and of 1 m."""
    o = 3 * int(P[c, BLK])
    size = 1.0
    for q in range(3):
        size = max(size, abs(d[o + q]))
    return 1e-12 * size


@numba.njit(cache=True, nogil=True)
def switch_normal(P, c, cv, d):
    """The event of contact c's normal function, in place in its value row at link
    displacements d: a closed contact opens; an open one closes, sticking, its tangential
    spring's anchor at d. Returns whether it closed."""
    if cv[c, ACT] > 0.5:
        cv[c, MODE] = OPEN
        cv[c, ACT] = 0.0
        return False
    o = 3 * int(P[c, BLK])
    cv[c, MODE] = STICK
    cv[c, ACT] = 1.0
    for q in range(3):
        cv[c, ANC + q] = d[o + q]
    return True


def affect(P, c: int, g: int, cv, d) -> str:
    """Change the mode of shock contact c at an event of its function g (0 normal, 1
    friction), in place in the value row ``cv`` at link displacements d. Returns the event
    kind: "impact" (contact closes), "separation", "slip" or "stick" (friction)."""
    o = 3 * int(P[c, BLK])
    if g == 0:
        return "impact" if switch_normal(P, c, cv, np.ascontiguousarray(d, float)) \
            else "separation"
    if int(cv[c, MODE]) == STICK:
        ft = cv[c, FT:FT + 3]
        size = float(np.linalg.norm(ft))
        # the spring is stretched along the sliding to come: the force on the node opposes it
        cv[c, SDIR:SDIR + 3] = -ft / size if size > 0 else cv[c, SDIR:SDIR + 3]
        cv[c, MODE] = SLIP
        return "slip"
    friction.stick_anchor(P, c, cv, d, o)
    cv[c, MODE] = STICK
    return "stick"


def detail(scheme, c: int) -> str:
    cv = scheme.buf.CV[scheme.cur]
    return f"side {scheme.links.sides[c]}, approach speed {cv[c, PDOT]:.9g} m/s"


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """Change the mode of contact c for its event function g at the current instant
    (``affect``); a friction contact that does not slide there is decided by Coulomb's
    set-valued law instead (``fem.laws.stick_slip``), once per instant (``decided``), and a
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
                records.append(record(t, kind, link, detail(scheme, c)))
            return bool(kinds)
        if stick_slip.turn(scheme, c):
            return True
    kind = affect(P, c, g, cv, scheme.buf.DB[scheme.cur])
    records.append(record(t, kind, link, detail(scheme, c)))
    return True


def tolerances(scheme, cv, c):
    """Round-off bounds of the two event functions of contact c at the current state."""
    d = scheme.buf.DB[scheme.cur]
    dd = scheme.buf.DD[scheme.cur]
    o = 3 * int(scheme.P[c, BLK])
    length = normal_round_off(scheme.P, c, d)
    if cv[c, MODE] == SLIP:
        speed = 1e-12 * max(1e-9, float(np.max(np.abs(dd[o:o + 3]), initial=0.0)))
        return length, speed
    return length, stick_slip.force_round_off(scheme.P, cv, c, d, o)


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """Change the mode of contact c when one of its functions is below zero beyond its
    round-off at the current state; returns whether it did."""
    tols = tolerances(scheme, cv, c)
    for g in (0, 1):
        if g == 1 and (cv[c, ACT] < 0.5 or c in decided):
            continue
        if cv[c, G0 + g] < -tols[g]:
            closed = cv[c, ACT] > 0.5
            changed = at_event(scheme, c, g, records, decided)
            if g == 0 and not closed and stick_slip.is_friction(scheme.P, cv, c):
                decided.discard(c)
            if changed:
                return True
        elif g == 1 and records and cv[c, MODE] == STICK and cv[c, G1] <= tols[1] \
                and stick_slip.is_friction(scheme.P, cv, c):
            kind = stick_slip.at_limit(scheme, c)
            if kind:
                decided.add(c)
                records.append(record(scheme.t, kind, scheme.links.link_of(c),
                                      detail(scheme, c)))
                return True
    return False


def after_settle(scheme, contacts, records: list) -> bool:
    return False


def driven_in(scheme, c: int) -> bool:
    """Whether shock contact c, open at the start, touches its obstacle to round-off and
    the motion drives it in: approaching, or at rest with its acceleration (the contact
    open) into the obstacle."""
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    if cv[c, ACT] > 0.5:
        return False
    o = 3 * int(scheme.P[c, BLK])
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


def start(scheme, contacts, records: list) -> None:
    """Closed at the start: a contact exactly at its surface that the motion drives in (its
    event function starts at zero, where no crossing could ever be seen); a closed friction
    contact sticks with its tangential spring unstretched, or slides along the velocity of
    its surfaces."""
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    touching = [c for c in contacts if driven_in(scheme, c)]
    for c in touching:
        cv[c, ACT] = 1.0
        cv[c, MODE] = STICK
    for c in contacts:
        if stick_slip.is_friction(scheme.P, cv, c):
            o = 3 * int(scheme.P[c, BLK])
            cv[c, ANC:ANC + 3] = b.DB[cur][o:o + 3]
            cv[c, MODE] = STICK
            vt = stick_slip.slip_velocity(scheme, c)
            speed = float(np.linalg.norm(vt))
            if speed > 0.0:
                cv[c, MODE] = SLIP
                cv[c, SDIR:SDIR + 3] = vt / speed


def start_at_rest(scheme, contacts, records: list) -> None:
    """At rest, Coulomb's law on the forces at the start: stick, or slide the way they
    drive."""
    b, cur = scheme.buf, scheme.cur
    for c in contacts:
        if stick_slip.is_friction(scheme.P, b.CV[cur], c) and b.CV[cur][c, MODE] == STICK:
            stick_slip.resolve(scheme, c)


def start_settled(scheme, contacts, records: list) -> None:
    return None


# ------------------------------------------------------------------ between events, exactly
def phase_key(P, c: int, cv) -> tuple:
    """What of contact c's state enters its linear equations between events: its mode, with
    the sliding sign or the sticking anchor along the friction direction."""
    mode = int(cv[c, MODE])
    if mode == SLIP:
        t = P[c, FDIR:FDIR + 3]
        return (mode, 1 if cv[c, SDIR:SDIR + 3] @ t >= 0 else -1)
    if mode == STICK and P[c, MU] > 0:
        t = P[c, FDIR:FDIR + 3]
        return (mode, float(cv[c, ANC:ANC + 3] @ t))
    return (mode,)


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of contact c in its phase ``mode`` (``phase_key``) for the exact scheme
    (``fem.integrators.exact_phases.Terms``): a closed plane contact adds its spring and
    damper, unidirectional friction its sticking spring and damper or its sliding force
    mu F_n; the event functions are the contact function (+-p, and p + c p' / k with the
    force release rule) and, in friction, the static bounds or the sliding rate."""
    N = t.N
    m = mode[0]
    nvec = P[c, DIR:DIR + 3]
    ell, pw, pv, pa = t.rows(c, nvec)
    p_aff = t.affine(ell, pw, -P[c, GAP])
    pd_aff = t.affine(ell, pv, 0.0, on_v=True)
    imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
    k, cc = P[c, KN], P[c, CN]
    force_rule = P[c, REL] != RELEASE_GAP and cc > 0
    fn_aff = (k * p_aff[0] + cc * pd_aff[0], k * p_aff[1] + cc * pd_aff[1])
    sign = 1.0 if m != OPEN else -1.0
    t.event(c, 0, sign * p_aff[0], sign * p_aff[1])
    if force_rule:
        t.event(c, 0, sign * fn_aff[0] / k, sign * fn_aff[1] / k)
    if m == OPEN:
        return
    nb = t.nb
    t.K += k * np.outer(ell, ell)
    t.C += cc * np.outer(ell, ell)
    t.Cl += cc * np.outer(ell, ell)
    t.F[:, :nb] -= np.outer(ell, k * pw + cc * pv)
    t.F[:, nb] += k * P[c, GAP] * ell
    t.diss.append((cc, pd_aff, pd_aff))
    t.support.append((1.0, fn_aff, imposed_rate))
    if P[c, MU] <= 0:
        return
    t.friction = True
    tvec = P[c, FDIR:FDIR + 3]
    lt, tw, tv, ta = t.rows(c, tvec)
    kt, ct = P[c, KT], P[c, CT]
    if m == STICK:
        anc = mode[1]
        t.K += kt * np.outer(lt, lt)
        t.C += ct * np.outer(lt, lt)
        t.Cl += ct * np.outer(lt, lt)
        t.F[:, :nb] -= np.outer(lt, kt * tw + ct * tv)
        t.F[:, nb] += kt * anc * lt
        ft = (kt * t.affine(lt, tw, 0.0)[0] + ct * t.affine(lt, tv, 0.0, on_v=True)[0],
              np.concatenate([kt * tw + ct * tv, [-kt * anc]]))
        mus = P[c, MUS]
        t.event(c, 1, mus * fn_aff[0] - ft[0], mus * fn_aff[1] - ft[1])
        t.event(c, 1, mus * fn_aff[0] + ft[0], mus * fn_aff[1] + ft[1])
        tv_aff = t.affine(lt, tv, 0.0, on_v=True)
        t.diss.append((ct, tv_aff, tv_aff))
        t.support.append((1.0, ft, (np.zeros(N), np.concatenate([tv, [0.0]]))))
        return
    s = float(mode[1])
    mu = P[c, MU]
    t.K += mu * s * k * np.outer(lt, ell)
    t.C += mu * s * cc * np.outer(lt, ell)
    t.F[:, :nb] -= mu * s * np.outer(lt, k * pw + cc * pv)
    t.F[:, nb] += mu * s * k * P[c, GAP] * lt
    tv_aff = t.affine(lt, tv, 0.0, on_v=True)
    t.event(c, 1, s * tv_aff[0], s * tv_aff[1])
    t.diss.append((mu * s, fn_aff, tv_aff))
    t.support.append((mu * s, fn_aff, (np.zeros(N), np.concatenate([tv, [0.0]]))))
