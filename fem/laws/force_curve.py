"""Force-curve contacts: a compression-only elastic contact whose force is a piecewise-linear
curve of the penetration (code_aster's CHOC_ELAS_TRAC), against a plane obstacle or between
two nodes, along a normal, with a gap.

The geometry is the shock law's (``fem.laws.shock``): the link's relative translation d (its
node against the obstacle, or its first node against its second), a unit normal n and a gap g;
the penetration is p = n . d - g, positive in contact. A "two_planes" obstacle is two such
contacts, along n and -n. In contact (p > 0) the link pushes the first node back along -n
with the force F(p) (N, compression positive) of the curve

    (0, 0), (p_1, F_1), ..., (p_m, F_m),    0 < p_1 < ... < p_m,  0 < F_1 < ... < F_m,

linear between its points, the last slope going on beyond p_m (one point: a linear contact of
stiffness F_1 / p_1). Open (p <= 0) it does nothing: the contact never pulls. It is elastic:
it stores E(p) = int_0^p F (piecewise quadratic, exact) and dissipates nothing; a contact
that opens at p = 0 gives all of it back.

Segment j (1 <= j <= m) of the curve runs from the breakpoint b_(j-1) to b_j (b_0 = 0; the
last segment has no end), its force F_(j-1) + k_j (p - b_(j-1)), k_j its slope. The force is
continuous, its slope is not at p = 0 (contact and release) and at the inner breakpoints
p_1 ... p_(m-1): these are the law's events.

``flags[c] < 0`` (events = "step"): the law chooses from the state at hand, closed where
p > 0, on the segment that holds p; its mode is then OPEN or STICK (the event logs call the
changes impacts and separations), and the Newmark family gets the segment's slope as its
tangent. A flag >= 0 (events = "locate") holds the mode over the step: OPEN, or the segment
j (mode j; segment 1 is STICK, the mode a shock contact closes into), its line extended
beyond its ends, and the event functions say where the mode must change, positive while it
holds:

* open: G0 = -p (contact);
* closed, on segment j: G0 = p (release, which the motion reaches from segment 1),
  G1 = min(p - b_(j-1), b_j - p) (the segment before or after; segment 1 only has the second,
  the last segment only the first).

G0 is the normal function of a contact as the shock law's is (closed: p, open: -p): the
locator follows it on the step's dense output (``fem.links.law.dense_normal``), so that a
contact shorter than a step is not missed, and the exact scheme's pieces, which take the
contact and release events of frictionless contacts themselves, close a contact into segment
1 and open it as the law does. Between its events the law is linear (F = k_j p + F_(j-1) -
k_j b_(j-1)): the exact scheme runs it. The breakpoints' function G1 is tested at the ends
of each step: a passage into the next segment and back within one step is not seen (the step
follows the segment's line extended beyond the breakpoint).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.laws.axial import motion
from fem.laws.columns import (A_ACT, A_FN, A_LAM, A_PEN, ACT, BLK, DIR, ENN, ENT, FDN, FN, FTM,
                              G0, G1, GAP, KIND, LAM, MODE, NRM, OPEN, PDOT, PEN, SLIPW, STICK,
                              VSL, own)
from fem.laws.contract import Feature, Law, Sample, Series, mode_phase, record
from fem.validate import check_float

#: the kind code of a force-curve contact (column KIND; the registry checks codes are unique)
FORCE_CURVE = 8
#: the most points a curve may have (the origin not counted)
MAX_POINTS = 16
#: its own parameter columns: the number of points m, the penetrations p_i and forces F_i of
#: the points; the normal n is the shared DIR (3) and the gap the shared GAP
OWN = own(parameters=(1, MAX_POINTS, MAX_POINTS))
POINTS, PP, PF = OWN.P
#: value columns: the penetration p (PEN) and its rate (PDOT), the force F (FN), the stored
#: energy E(p) (ENN, and archived in LAM)
PENETRATION, FORCE, ENERGY = PEN, FN, LAM
#: the group attribute naming its force-penetration curve, which ``fem post hysteresis``
#: draws
LOOP = ["penetration", "normal_force"]


# ------------------------------------------------------------------ the curve
@numba.njit(cache=True, nogil=True)
def segment_of(P, c, p):
    """The segment (1 ... m) of contact c's curve that holds the penetration p > 0: the first
    whose end is beyond p (a breakpoint belongs to the segment after it)."""
    m = int(P[c, POINTS])
    for i in range(m - 1):
        if p < P[c, PP + i]:
            return i + 1
    return m


@numba.njit(cache=True, nogil=True)
def on_segment(P, c, j, p):
    """(F, dF/dp, E) on the line of segment j of contact c's curve at the penetration p (its
    ends not minded): F = F_(j-1) + k_j (p - b_(j-1)), and the stored energy E(b_(j-1)) plus
    the integral of that line from b_(j-1) to p (exact: F is linear on the segment)."""
    b0 = 0.0
    f0 = 0.0
    e0 = 0.0
    for i in range(j - 1):
        b1, f1 = P[c, PP + i], P[c, PF + i]
        e0 += 0.5 * (f0 + f1) * (b1 - b0)
        b0, f0 = b1, f1
    k = (P[c, PF + j - 1] - f0) / (P[c, PP + j - 1] - b0)
    x = p - b0
    return f0 + k * x, k, e0 + (f0 + 0.5 * k * x) * x


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac):
    """The force-curve contact c at the link displacements d and rates dd: its force on the
    first node into phi (3 at o), its derivative into Jd (block o // 3) when ``jac``, its
    values into cv_new (module docstring: the law chooses its mode where flags[c] < 0, holds
    the mode flags[c] otherwise)."""
    u, v = motion(P, c, o, d, dd)
    p = u - P[c, GAP]
    m = int(P[c, POINTS])
    g1 = 1.0
    if flags[c] < 0.0:
        j = segment_of(P, c, p) if p > 0.0 else 0
        mode = STICK if j > 0 else OPEN
        g0 = p if j > 0 else -p
    else:
        j = int(flags[c])
        mode = j
        g0 = p if j > 0 else -p
        if j > 0:
            if j < m:
                g1 = P[c, PP + j - 1] - p
            if j > 1:
                g1 = min(g1, p - P[c, PP + j - 2])
    f = 0.0
    k = 0.0
    e = 0.0
    if j > 0:
        f, k, e = on_segment(P, c, j, p)
    cv_new[c, MODE] = mode
    cv_new[c, ACT] = 1.0 if j > 0 else 0.0
    cv_new[c, G0] = g0
    cv_new[c, G1] = g1
    cv_new[c, PEN] = p
    cv_new[c, PDOT] = v
    cv_new[c, FN] = f
    cv_new[c, FDN] = 0.0
    cv_new[c, ENN] = e
    cv_new[c, ENT] = 0.0
    cv_new[c, SLIPW] = 0.0
    cv_new[c, FTM] = 0.0
    cv_new[c, VSL] = 0.0
    cv_new[c, ENERGY] = e
    for q in range(3):
        cv_new[c, NRM + q] = P[c, DIR + q]
        phi[o + q] -= f * P[c, DIR + q]
    if jac and j > 0:
        b = o // 3
        for q in range(3):
            for s in range(3):
                Jd[b, q, s] -= k * P[c, DIR + q] * P[c, DIR + s]


def stiffness(row) -> float:
    """The steepest slope of the curve (N/m)."""
    m = int(row[POINTS])
    p = np.concatenate([[0.0], row[PP:PP + m]])
    f = np.concatenate([[0.0], row[PF:PF + m]])
    return float(np.max(np.diff(f) / np.diff(p)))


def traits(row) -> dict:
    """A force-curve contact (``fem.links.traits``): its force follows from the displacement
    alone (an explicit step needs no iteration), along a fixed normal, but it is not k
    max(p, 0) (the lean loops' law) unless the curve is one segment. A contact, opening and
    closing, it is not taken as ``axial`` (as a shock contact is not)."""
    return dict(rate=False, elastic=True, plane_elastic=False, evolving=False, instant=False,
                friction=False, axial=False)


# ------------------------------------------------------------------ at instants
def _round_off(scheme, c: int) -> float:
    """The round-off (m) of contact c's event functions: 1e-12 of the largest of its link's
    displacements, and of 1 m (``fem.laws.shock.normal_round_off``)."""
    o = 3 * int(scheme.P[c, BLK])
    d = scheme.buf.DB[scheme.cur][o:o + 3]
    return 1e-12 * max(1.0, float(np.max(np.abs(d))))


def _change(P, c: int, g: int, cv) -> tuple:
    """Change contact c's mode at an event of its function g, in place in its value row cv;
    returns (event kind, the segment before, after): "impact" (it closes, into segment 1),
    "separation" (it opens from segment 1), or "segment" (the segment before or after: the
    one whose breakpoint p is nearer)."""
    j = int(cv[c, MODE])
    if g == 0:
        if j == 0:
            cv[c, MODE] = STICK
            cv[c, ACT] = 1.0
            return "impact", 0, 1
        cv[c, MODE] = OPEN
        cv[c, ACT] = 0.0
        return "separation", j, 0
    m = int(P[c, POINTS])
    p = cv[c, PEN]
    upper = P[c, PP + j - 1] - p if j < m else math.inf
    lower = p - P[c, PP + j - 2] if j > 1 else math.inf
    after = j + 1 if upper <= lower else j - 1
    cv[c, MODE] = after
    return "segment", j, after


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """Change the mode of contact c for its event function g at the current instant."""
    cv = scheme.buf.CV[scheme.cur]
    kind, before, after = _change(scheme.P, c, g, cv)
    detail = (f"side {scheme.links.sides[c]}, approach speed {cv[c, PDOT]:.9g} m/s"
              if kind != "segment" else
              f"side {scheme.links.sides[c]}, segment {before} to {after} at penetration "
              f"{cv[c, PEN]:.9g} m, force {cv[c, FN]:.9g} N")
    records.append(record(scheme.t, kind, scheme.links.link_of(c), detail))
    return True


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """Change the mode of contact c when one of its functions is below zero beyond its
    round-off at the current state; returns whether it did."""
    tol = _round_off(scheme, c)
    for g in (0, 1):
        if cv[c, G0 + g] < -tol:
            return at_event(scheme, c, g, records, decided)
    return False


def start(scheme, contacts, records: list) -> None:
    """Closed at the start: a contact that penetrates, on the segment that holds its
    penetration (events = "locate"; with "step" the law chooses at each evaluation), and one
    exactly at its surface that the motion drives in (``fem.laws.shock.driven_in``), on
    segment 1."""
    from fem.laws.shock import driven_in

    cv = scheme.buf.CV[scheme.cur]
    for c in contacts:
        if cv[c, ACT] > 0.5:
            if scheme.locate:
                cv[c, MODE] = segment_of(scheme.P, c, cv[c, PEN])
        elif driven_in(scheme, c):
            cv[c, ACT] = 1.0
            cv[c, MODE] = STICK


# ------------------------------------------------------------------ between events, exactly
phase_key = mode_phase


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of force-curve contact c in its mode for the exact scheme
    (``fem.integrators.exact_phases.Terms``): on segment j, F = k_j p + a_j with
    a_j = F_(j-1) - k_j b_(j-1) and p = ell . x + pw . w - g; the structure gets -F ell (the
    stiffness k_j ell ell^T, the loads -k_j ell pw^T w + (k_j g - a_j) ell) and the imposed
    motion works F pv; the event functions of ``trial``."""
    nb = t.nb
    j = int(mode[0])
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    gap = P[c, GAP]
    pz, pu = t.affine(ell, pw, -gap)
    if j == 0:
        t.event(c, 0, -pz, -pu)
        return
    m = int(P[c, POINTS])
    b0 = P[c, PP + j - 2] if j > 1 else 0.0
    f0 = P[c, PF + j - 2] if j > 1 else 0.0
    k = (P[c, PF + j - 1] - f0) / (P[c, PP + j - 1] - b0)
    a = f0 - k * b0
    t.K += k * np.outer(ell, ell)
    t.F[:, :nb] -= k * np.outer(ell, pw)
    t.F[:, nb] += (k * gap - a) * ell
    fu = k * pu
    fu[nb] += a
    t.support.append((1.0, (k * pz, fu), (np.zeros(t.N), np.concatenate([pv, [0.0]]))))
    t.event(c, 0, pz, pu)
    if j < m:
        up = -pu
        up[nb] += P[c, PP + j - 1]
        t.event(c, 1, -pz, up)
    if j > 1:
        down = pu.copy()
        down[nb] -= b0
        t.event(c, 1, pz, down)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (FORCE_CURVE,)
LAW = Law(
    "force_curve", "a compression-only elastic contact whose force is a piecewise-linear curve "
                   "of the penetration, against a plane or between two nodes",
    (Feature("force_curve", "force-penetration curve contact"),),
    (Series("normal_force", "N", "contact force F(p) of the curve, compression positive "
                                 "(summed over a link's contacts)"),
     Series("penetration", "m", "largest penetration (negative: open, by that distance)"),
     Series("state", "1", "1 in contact, 0 open"),
     Series("energy", "J", "the elastic energy the contact stores, int_0^p F (summed over a "
                           "link's contacts)")),
    (Sample("force_curve", "force_curve",
            {"kind": "force_curve", "normal": [0.0, 0.0, -1.0], "gap": 0.0,
             "curve": [[1e-4, 10.0], [2e-4, 40.0]]}, press=-10.0),),
    OWN)


def _curve(t, name) -> list:
    """The curve's points [[p, F], ...] (m, N), from (0, 0) (which may be given as the first
    point), the penetrations and the forces increasing strictly."""
    value = t.raw(name)
    if not isinstance(value, list) or not value or not all(
            isinstance(pt, list) and len(pt) == 2 for pt in value):
        raise t.error(name, "expected a list of [penetration, force] points (m, N), from "
                            "(0, 0), the penetrations and the forces increasing")
    pts = [(check_float(p, t.key(f"{name}[{i + 1}][1]")),
            check_float(f, t.key(f"{name}[{i + 1}][2]")))
           for i, (p, f) in enumerate(value)]
    if pts[0] == (0.0, 0.0):
        pts = pts[1:]
        if not pts:
            raise t.error(name, "the origin alone is no curve: give the points after (0, 0)")
    if len(pts) > MAX_POINTS:
        raise t.error(name, f"at most {MAX_POINTS} points after the origin, got {len(pts)}")
    before = (0.0, 0.0)
    for i, (p, f) in enumerate(pts):
        where = f"point {i + 1 + (len(value) - len(pts))} ({p:g}, {f:g})"
        if not p > before[0]:
            raise t.error(name, f"the penetrations must increase strictly from 0: {where} "
                                f"after {before[0]:g} m")
        if not f > before[1]:
            raise t.error(name, f"the forces must increase strictly from 0 (a contact whose "
                                f"force does not grow with its penetration has no stiffness "
                                f"there): {where} after {before[1]:g} N")
        if not math.isfinite((f - before[1]) / (p - before[0])):
            raise t.error(name, f"the slope to {where} is not a finite stiffness")
        before = (p, f)
    return pts


def read(t, p: dict, components=()) -> None:
    """The keys of a force-curve link (docs/study_format.md)."""
    from fem.laws.obstacle import read_geometry

    if t.data.get("obstacle") == "circle":
        raise t.error("obstacle", "a force curve acts along a normal: \"plane\" (default) or "
                                  "\"two_planes\"")
    read_geometry(t, p, ("plane", "two_planes"))
    p["curve"] = _curve(t, "curve")


def needed(p: dict, where: str) -> list:
    return [("force_curve", f"{where}.kind")]


def directions(p: dict) -> list:
    return [("normal", p["normal"], "along")]


def rows(p: dict, nodes: int = 2) -> list:
    """(side, parameter row) of each contact: one plane, or two opposite planes."""
    row = np.zeros(OWN.width_p)
    row[KIND] = FORCE_CURVE
    row[GAP] = p["gap"]
    row[DIR:DIR + 3] = p["normal"]
    row[POINTS] = len(p["curve"])
    for i, (pen, force) in enumerate(p["curve"]):
        row[PP + i] = pen
        row[PF + i] = force
    out = [("+", row)]
    if p["obstacle"] == "two_planes":
        other = row.copy()
        other[DIR:DIR + 3] = -np.asarray(p["normal"], float)
        out.append(("-", other))
    return out


def attrs(p: dict, contact_rows) -> dict:
    return dict(curve=np.asarray(p["curve"], float), gap=p["gap"], obstacle=p["obstacle"],
                normal=list(p["normal"]), loop=LOOP)


def series(v, p: dict) -> dict:
    """The link's series from its contacts' archived values v (k, contacts, NA)."""
    return {"normal_force": (v[:, :, A_FN] * v[:, :, A_ACT]).sum(axis=1),
            "penetration": v[:, :, A_PEN].max(axis=1),
            "state": v[:, :, A_ACT].max(axis=1),
            "energy": (v[:, :, A_LAM] * v[:, :, A_ACT]).sum(axis=1)}
