"""Plastic links: an elasto-plastic spring along a direction, with isotropic or kinematic
hardening from a force-deformation curve, and optionally a gap on one side.

The link acts on the elongation u = n . d of its relative translation d (``fem.links.geometry``:
one node, d is the node's translation; two nodes, d = u_first - u_second) along the unit
direction n; the spring works on delta = u - g, g the gap (0 without one). Its force, positive
in tension, pulls the first node back along -n (the second along +n).

The curve (delta_1, F_1), ..., (delta_m, F_m) of a monotonic loading gives the elastic
stiffness k = F_1 / delta_1 up to the elastic limit F_1 = F_y, then hardening segments (the
last slope goes on; one point: perfectly plastic). Written against the plastic elongation
a = delta - F / k, each point is a hardening h(a_i) = F_i - F_y at a_i = delta_i - F_i / k:
h is piecewise linear from h(0) = 0. With u_p the plastic elongation and p the cumulative
plastic elongation (int |u_p'| dt), the force is F = k (delta - u_p) inside the elastic domain

    |F - X| <= R,   isotropic: X = 0, R = F_y + h(p);
                    kinematic: X = sign(u_p) h(|u_p|), R = F_y,

and on its boundary the plastic elongation flows in the direction of F - X. A step returns
the trial force k (delta - u_p) onto the domain from the committed (u_p, p) in closed form,
h being piecewise linear (the return walks its breakpoints), with the consistent tangent
k H / (k + H), H the hardening slope where the return ends. The return is the exact solution
for a step whose elongation does not reverse; a step follows its cubic Hermite path (the
schemes' dense output), returned at each instant where it turns back and then at its end.

With a gap (one side: ``side`` +1 tension, -1 compression), the spring only acts on that side:
the force is F = k (delta - u_p) while it has the side's sign and 0 otherwise (the spring is
slack), and the plastic elongation only grows towards that side, which widens the gap.

It stores 1/2 F^2 / k and dissipates the plastic work int F du_p (exact on the return's
segments, on which F is linear in u_p).
"""

from __future__ import annotations

import numba
import numpy as np

from fem.laws.axial import LOOP, commit, motion
from fem.laws.columns import (A_FN, A_FTM, A_LAM, A_PEN, A_VSL, EVOLVING_RATE, FTM, GAP, LAM,
                              PDOT, PEN, VSL, own)
from fem.laws.contract import Feature, Law, Sample, Series, along, axial_rows
from fem.validate import check_float

#: the kind code of a plastic contact (column KIND; the registry checks codes are unique)
PLASTIC = 5
#: the most points a curve may have
MAX_POINTS = 10
ISOTROPIC, KINEMATIC = 0.0, 1.0
#: its own parameter columns: the elastic stiffness k, the elastic limit F_y, the hardening
#: rule, the side (0 both, +1 tension, -1 compression), the number of hardening points m, the
#: slope of h beyond the last, and the points (a_i, h_i) of h; the direction n is the shared
#: DIR (3) and the gap the shared GAP
OWN = own(parameters=(1, 1, 1, 1, 1, 1, MAX_POINTS, MAX_POINTS))
STIFFNESS, YIELD, RULE, SIDE, POINTS, LAST_SLOPE, PA, PH = OWN.P
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the stored and
#: dissipated energies (ENN, SLIPW); archived: the plastic elongation u_p in LAM, the
#: cumulative plastic elongation p in FTM, the energy dissipated since the start in VSL
PLASTIC_ELONGATION, CUMULATIVE, DISSIPATED = LAM, FTM, VSL


@numba.njit(cache=True, nogil=True)
def hardening(P, c, a):
    """(h(a), h'(a+)) for a >= 0 (module docstring)."""
    m = int(P[c, POINTS])
    a0 = 0.0
    h0 = 0.0
    for i in range(m):
        a1, h1 = P[c, PA + i], P[c, PH + i]
        if a < a1:
            slope = (h1 - h0) / (a1 - a0)
            return h0 + slope * (a - a0), slope
        a0, h0 = a1, h1
    slope = P[c, LAST_SLOPE]
    return h0 + slope * (a - a0), slope


@numba.njit(cache=True, nogil=True)
def _next_break(P, c, x, s):
    """The distance, moving from x in the direction s (+1 or -1), to the next breakpoint of
    X(x) = sign(x) h(|x|) (at the +-a_i), inf beyond the last."""
    m = int(P[c, POINTS])
    best = np.inf
    for i in range(m):
        for y in (P[c, PA + i], -P[c, PA + i]):
            d = s * (y - x)
            if d > 0.0 and d < best:
                best = d
    return best


@numba.njit(cache=True, nogil=True)
def _back(P, c, x):
    """X(x) = sign(x) h(|x|), the kinematic back force."""
    h = hardening(P, c, abs(x))[0]
    return h if x >= 0.0 else -h


@numba.njit(cache=True, nogil=True)
def _surface(P, c, up, p, s):
    """The force on the boundary of the elastic domain in the direction s, at (u_p, p)."""
    if P[c, RULE] == KINEMATIC:
        return _back(P, c, up) + s * P[c, YIELD]
    return s * (P[c, YIELD] + hardening(P, c, p)[0])


@numba.njit(cache=True, nogil=True)
def state(P, c, delta, up, p):
    """The return of the trial k (delta - u_p) onto the elastic domain from the committed
    (u_p, p): (F, dF/ddelta, u_p, p, plastic work) (module docstring)."""
    k = P[c, STIFFNESS]
    side = P[c, SIDE]
    f = k * (delta - up)
    if side * f < 0.0:
        return 0.0, 0.0, up, p, 0.0          # slack: the gap is open
    kinematic = P[c, RULE] == KINEMATIC
    if kinematic:
        x = _back(P, c, up)
        r = P[c, YIELD]
    else:
        x = 0.0
        r = P[c, YIELD] + hardening(P, c, p)[0]
    over = abs(f - x) - r
    if over <= 0.0:
        return f, k, up, p, 0.0
    s = 1.0 if f > x else -1.0
    if side != 0.0 and s != side:
        return f, k, up, p, 0.0
    # walk h's breakpoints: over(lam) = over - k lam - (hardening gained), piecewise linear
    lam = 0.0
    work = 0.0
    slope = 0.0
    fs = _surface(P, c, up, p, s)
    for _ in range(4 * MAX_POINTS + 4):
        if kinematic:
            ahead = _next_break(P, c, up + s * lam, s)
            xm = up + s * (lam + 0.5 * min(ahead, 1.0))
            slope = hardening(P, c, abs(xm))[1]
        else:
            a = p + lam
            slope = hardening(P, c, a)[1]
            ahead = np.inf
            m = int(P[c, POINTS])
            for i in range(m):
                if P[c, PA + i] > a:
                    ahead = P[c, PA + i] - a
                    break
        rate = k + slope
        if over <= rate * ahead:
            d = over / rate
            lam += d
            f1 = fs + s * slope * d
            work += 0.5 * (fs + f1) * s * d
            fs = f1
            break
        over -= rate * ahead
        lam += ahead
        f1 = fs + s * slope * ahead
        work += 0.5 * (fs + f1) * s * ahead
        fs = f1
    up1 = up + s * lam
    return k * (delta - up1), k * slope / (k + slope), up1, p + lam, work


@numba.njit(cache=True, nogil=True)
def turns(u0, v0, u1, v1, h):
    """The instants theta in (0, 1), in order, where the step's cubic Hermite path from
    (u0, v0) to (u1, v1) over h turns back (its rate a theta^2 + b theta + c vanishes and
    changes sign), as (count, theta_1, theta_2)."""
    a = 6.0 * (u0 - u1) + 3.0 * h * (v0 + v1)
    b = 6.0 * (u1 - u0) - h * (4.0 * v0 + 2.0 * v1)
    c = h * v0
    r1 = r2 = -1.0
    if a == 0.0:
        if b != 0.0:
            r1 = -c / b
    else:
        disc = b * b - 4.0 * a * c
        if disc > 0.0:
            q = -0.5 * (b + (np.sqrt(disc) if b >= 0.0 else -np.sqrt(disc)))
            r1 = q / a
            r2 = c / q if q != 0.0 else -1.0
    if r1 > r2:
        r1, r2 = r2, r1
    n = 0
    t1 = t2 = 0.0
    for r in (r1, r2):
        if 0.0 < r < 1.0:
            if n == 0:
                t1 = r
            else:
                t2 = r
            n += 1
    return n, t1, t2


@numba.njit(cache=True, nogil=True)
def _hermite(u0, v0, u1, v1, h, th):
    t2 = th * th
    t3 = t2 * th
    return ((2.0 * t3 - 3.0 * t2 + 1.0) * u0 + (t3 - 2.0 * t2 + th) * h * v0
            + (3.0 * t2 - 2.0 * t3) * u1 + (t3 - t2) * h * v1)


@numba.njit(cache=True, nogil=True)
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The plastic contact c at the link displacements d and rates dd, h after its committed
    values cv_old: force on the first node into phi (3 at o), its derivative into Jd (block
    o // 3) when ``jac``, values into cv_new. The plastic state follows the step's cubic
    Hermite path of the elongation: returned at each instant where the path turns back,
    then at its end (the return is exact along a path that does not reverse)."""
    u1, v1 = motion(P, c, o, d, dd)
    gap = P[c, GAP]
    up, p = cv_old[c, PLASTIC_ELONGATION], cv_old[c, CUMULATIVE]
    work = 0.0
    if h > 0.0:
        u0, v0 = cv_old[c, PEN], cv_old[c, PDOT]
        n, t1, t2 = turns(u0, v0, u1, v1, h)
        for i in range(n):
            ue = _hermite(u0, v0, u1, v1, h, t1 if i == 0 else t2)
            r = state(P, c, ue - gap, up, p)
            up, p = r[2], r[3]
            work += r[4]
    f, slope, up1, p1, w = state(P, c, u1 - gap, up, p)
    work += w
    k = P[c, STIFFNESS]
    commit(P, c, o, u1, v1, f, slope, 0.0, 0.5 * f * f / k, work, cv_new, phi, Jd, Jv, jac)
    cv_new[c, PLASTIC_ELONGATION] = up1
    cv_new[c, CUMULATIVE] = p1
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED] + work
    cv_new[c, EVOLVING_RATE] = 0.0


def stiffness(row) -> float:
    """The elastic stiffness k."""
    return float(row[STIFFNESS])


def traits(row) -> dict:
    """A plastic contact (``fem.links.traits``): its force follows from the elongation and
    the committed plastic state."""
    return dict(rate=False, elastic=False, plane_elastic=False, evolving=False, instant=False,
                friction=False)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (PLASTIC,)
_CURVE = [[1e-3, 100.0], [11e-3, 200.0]]
LAW = Law(
    "plastic", "an elasto-plastic spring with isotropic or kinematic hardening, along a "
               "direction",
    (Feature("plastic", "elasto-plastic spring", state=True, linear=False,
             nonlinear="its force is piecewise linear in the elongation between yield and "
                       "unload instants that are not located events", events=False),),
    (Series("force", "N", "force the spring carries, tension positive: k (elongation - gap - "
                          "plastic_elongation)"),
     Series("elongation", "m", "elongation along `direction`"),
     Series("plastic_elongation", "m", "the plastic elongation u_p (internal variable)"),
     Series("cumulative_plastic", "m", "the cumulative plastic elongation p = int |u_p'| dt"),
     Series("dissipated", "J", "the plastic work int F du_p since the start")),
    (Sample("plastic", "plastic", {"kind": "plastic", "direction": [1.0, 0.0, 0.0],
                                   "curve": _CURVE}),),
    OWN)


def _curve(t, name):
    """The curve's points [[delta, F], ...]: the elastic limit first, then hardening."""
    value = t.raw(name)
    if not isinstance(value, list) or not value or not all(
            isinstance(pt, list) and len(pt) == 2 for pt in value):
        raise t.error(name, "expected a list of [deformation, force] points, the elastic "
                            "limit first")
    if len(value) > MAX_POINTS + 1:
        raise t.error(name, f"at most {MAX_POINTS + 1} points, got {len(value)}")
    pts = [(check_float(u, t.key(f"{name}[{i + 1}][1]"), positive=True),
            check_float(f, t.key(f"{name}[{i + 1}][2]"), positive=True))
           for i, (u, f) in enumerate(value)]
    k = pts[0][1] / pts[0][0]
    for i in range(1, len(pts)):
        (u0, f0), (u1, f1) = pts[i - 1], pts[i]
        if not u1 > u0:
            raise t.error(name, f"the deformations must increase: point {i + 1} "
                                f"({u1:g}) after {u0:g}")
        if f1 < f0:
            raise t.error(name, f"the forces must not decrease (softening is not offered): "
                                f"point {i + 1} ({f1:g}) after {f0:g}")
        if not (f1 - f0) / (u1 - u0) < k:
            raise t.error(name, f"segment {i} is as stiff as the elastic slope "
                                f"{k:g} N/m (F_1 / delta_1) or stiffer: a hardening slope must "
                                f"be below it")
    return pts


def read(t, p: dict, components=()) -> None:
    """The keys of a plastic link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["curve"] = _curve(t, "curve")
    p["hardening"] = t.str("hardening", "kinematic", choices=("isotropic", "kinematic"))
    p["gap"] = t.float("gap", 0.0)
    default = "both" if p["gap"] == 0.0 else ("tension" if p["gap"] > 0.0 else "compression")
    p["side"] = t.str("side", default, choices=("both", "tension", "compression"))
    if p["side"] == "both" and p["gap"] != 0.0:
        raise t.error("side", "a gap acts on one side: give side = \"tension\" or "
                              "\"compression\" (or no gap)")


def needed(p: dict, where: str) -> list:
    return [("plastic", f"{where}.kind")]


directions = along


def table(curve) -> tuple:
    """(k, F_y, [(a_i, h_i)], slope of h beyond the last point) of a curve (module
    docstring)."""
    (u1, fy) = curve[0]
    k = fy / u1
    points = [(u - f / k, f - fy) for u, f in curve[1:]]
    if points:
        a0, h0 = (points[-2] if len(points) > 1 else (0.0, 0.0))
        a1, h1 = points[-1]
        last = (h1 - h0) / (a1 - a0)
    else:
        last = 0.0
    return k, fy, points, last


def rows(p: dict, nodes: int = 2) -> list:
    k, fy, points, last = table(p["curve"])
    side = {"both": 0.0, "tension": 1.0, "compression": -1.0}[p["side"]]
    columns = {STIFFNESS: k, YIELD: fy, SIDE: side, POINTS: len(points), LAST_SLOPE: last,
               RULE: KINEMATIC if p["hardening"] == "kinematic" else ISOTROPIC,
               GAP: p["gap"]}
    for i, (a, h) in enumerate(points):
        columns[PA + i] = a
        columns[PH + i] = h
    return axial_rows(OWN, PLASTIC, p, columns)


def attrs(p: dict, contact_rows) -> dict:
    return dict(curve=np.asarray(p["curve"], float), hardening=p["hardening"], gap=p["gap"],
                side=p["side"], direction=list(p["direction"]), loop=LOOP)


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN],
            "plastic_elongation": v[:, 0, A_LAM], "cumulative_plastic": v[:, 0, A_FTM],
            "dissipated": v[:, 0, A_VSL]}
