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

from fem.laws import plastic_keys
from fem.laws.axial import LOOP, commit, hermite, motion, turning_points
from fem.laws.columns import (A_FN, A_FTM, A_LAM, A_PEN, A_VSL, ACT, DIR, EVOLVING_RATE, FN,
                              FTM, G0, G1, GAP, LAM, MODE, OPEN, PDOT, PEN, SLIP, STICK, VSL, own)
from fem.laws.contract import (Feature, Law, Sample, Series, along, axial_rows,
                               mode_phase, record)
from fem.laws.plastic_keys import MAX_POINTS

#: the kind code of a plastic contact (column KIND; the registry checks codes are unique)
PLASTIC = 5
ISOTROPIC, KINEMATIC = 0.0, 1.0
#: its own parameter columns: the elastic stiffness k, the elastic limit F_y, the hardening
#: rule, the side (0 both, +1 tension, -1 compression), the number of hardening points m, the
#: slope of h beyond the last, and the points (a_i, h_i) of h; the direction n is the shared
#: DIR (3) and the gap the shared GAP
OWN = own(parameters=(1, 1, 1, 1, 1, 1, MAX_POINTS, MAX_POINTS), values=(1,))
STIFFNESS, YIELD, RULE, SIDE, POINTS, LAST_SLOPE, PA, PH = OWN.P
#: its own value column: while it flows in the direction s, p - s u_p, which the flow keeps
#: (so that p follows u_p where a scheme carries u_p alone: the exact scheme)
(FLOW_ANCHOR,) = OWN.V
#: modes (column MODE): slack (a spring with a side, its gap open), elastic, flowing with u_p
#: growing or decreasing (the event logs of events = "step" call a change to a flow a slip)
FLOW_UP, FLOW_DOWN = float(SLIP), 3.0
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the stored and
#: dissipated energies (ENN, SLIPW); archived: the plastic elongation u_p in LAM, the
#: cumulative plastic elongation p in FTM, the energy dissipated since the start in VSL
PLASTIC_ELONGATION, CUMULATIVE, DISSIPATED = LAM, FTM, VSL


@numba.njit(cache=True, nogil=True, inline="always")
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


@numba.njit(cache=True, nogil=True, inline="always")
def _integral(P, c, a):
    """int_0^a h for a >= 0."""
    m = int(P[c, POINTS])
    a0 = 0.0
    h0 = 0.0
    total = 0.0
    for i in range(m):
        a1, h1 = P[c, PA + i], P[c, PH + i]
        if a <= a1:
            hb = h0 + (h1 - h0) / (a1 - a0) * (a - a0)
            return total + 0.5 * (h0 + hb) * (a - a0)
        total += 0.5 * (h0 + h1) * (a1 - a0)
        a0, h0 = a1, h1
    hb = h0 + P[c, LAST_SLOPE] * (a - a0)
    return total + 0.5 * (h0 + hb) * (a - a0)


@numba.njit(cache=True, nogil=True, inline="always")
def plastic_work(P, c, up, p):
    """The plastic work int F du_p from the virgin state to (u_p, p), a function of the state:
    on the elastic range's boundary F = X + s R, so dW = X du_p + R |du_p|: kinematic,
    W = F_y p + int_0^|u_p| h (X = sign(u_p) h(|u_p|)); isotropic, W = F_y p + int_0^p h."""
    if P[c, RULE] == KINEMATIC:
        return P[c, YIELD] * p + _integral(P, c, abs(up))
    return P[c, YIELD] * p + _integral(P, c, p)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _next_break(P, c, x, s):
    """The distance, moving from x in the direction s (+1 or -1), to the next breakpoint of
    X(x) = sign(x) h(|x|) (at the +-a_i), inf beyond the last; a breakpoint within round-off
    of x is behind."""
    m = int(P[c, POINTS])
    best = np.inf
    margin = 1e-12 * max(abs(x), P[c, YIELD] / P[c, STIFFNESS])
    for i in range(m):
        for y in (P[c, PA + i], -P[c, PA + i]):
            d = s * (y - x)
            if d > margin and d < best:
                best = d
    return best


@numba.njit(cache=True, nogil=True, _nrt=False)
def ahead(P, c, up, p, s):
    """(distance, H): how far the flow variable (kinematic: u_p in the direction s; isotropic:
    p) may go from (u_p, p) before h's next breakpoint (inf beyond the last), and the
    hardening slope H on the way."""
    if P[c, RULE] == KINEMATIC:
        d = _next_break(P, c, up, s)
        xm = up + s * 0.5 * min(d, P[c, YIELD] / P[c, STIFFNESS])
        return d, hardening(P, c, abs(xm))[1]
    margin = 1e-12 * max(p, P[c, YIELD] / P[c, STIFFNESS])
    d = np.inf
    for i in range(int(P[c, POINTS])):
        if P[c, PA + i] > p + margin:
            d = P[c, PA + i] - p
            break
    return d, hardening(P, c, p + 0.5 * min(d, P[c, YIELD] / P[c, STIFFNESS]))[1]


@numba.njit(cache=True, nogil=True, inline="always")
def _back(P, c, x):
    """X(x) = sign(x) h(|x|), the kinematic back force."""
    h = hardening(P, c, abs(x))[0]
    return h if x >= 0.0 else -h


@numba.njit(cache=True, nogil=True, inline="always")
def domain(P, c, up, p):
    """(X, R): the elastic domain |F - X| <= R at (u_p, p) (module docstring)."""
    if P[c, RULE] == KINEMATIC:
        return _back(P, c, up), P[c, YIELD]
    return 0.0, P[c, YIELD] + hardening(P, c, p)[0]


@numba.njit(cache=True, nogil=True, inline="always")
def state(P, c, delta, up, p):
    """The return of the trial k (delta - u_p) onto the elastic domain from the committed
    (u_p, p): (F, dF/ddelta, u_p, p) (module docstring)."""
    k = P[c, STIFFNESS]
    side = P[c, SIDE]
    f = k * (delta - up)
    if side * f < 0.0:
        return 0.0, 0.0, up, p               # slack: the gap is open
    x, r = domain(P, c, up, p)
    over = abs(f - x) - r
    if over <= 0.0:
        return f, k, up, p
    s = 1.0 if f > x else -1.0
    if side != 0.0 and s != side:
        return f, k, up, p
    # walk h's breakpoints: the excess over the range falls by (k + H) per unit of flow
    lam = 0.0
    slope = 0.0
    for _ in range(4 * MAX_POINTS + 4):
        d, slope = ahead(P, c, up + s * lam, p + lam, s)
        if over <= (k + slope) * d:
            lam += over / (k + slope)
            break
        over -= (k + slope) * d
        lam += d
    up1 = up + s * lam
    return k * (delta - up1), k * slope / (k + slope), up1, p + lam


@numba.njit(cache=True, nogil=True, inline="always")
def _elastic_path(P, c, delta0, delta1, hv0, hv1, up, p):
    """Whether the step's cubic Hermite path from delta0 to delta1 (rates h u0', h u1') stays
    where the spring cannot flow from (u_p, p): its values lie within [min - spread, max +
    spread] of its ends, spread = 4/27 (|h u0'| + |h u1'|) (the largest of the Hermite
    functions of the rates), and the elastic trial of that whole interval is in the elastic
    range (on the flowing side, with a side). Then its turning points need no return."""
    k = P[c, STIFFNESS]
    side = P[c, SIDE]
    spread = 4.0 / 27.0 * (abs(hv0) + abs(hv1))
    f_hi = k * (max(delta0, delta1) + spread - up)
    f_lo = k * (min(delta0, delta1) - spread - up)
    x, r = domain(P, c, up, p)
    up_ok = f_hi - x <= r
    down_ok = x - f_lo <= r
    if side > 0.0:
        return up_ok
    if side < 0.0:
        return down_ok
    return up_ok and down_ok


@numba.njit(cache=True, nogil=True, _nrt=False)
def _held(P, c, delta1, v1, up, p, anchor, delta0, mode):
    """Contact c in the mode ``mode``, imposed over the step (events = "locate", the exact
    scheme), from the committed (u_p, p), force f0 and deformation delta0: (F, dF/ddelta,
    u_p, p, plastic work, rate of u_p, G0, G1). Its event functions, positive while the mode
    holds: slack, -side k (delta - u_p) (it engages where it turns 0); elastic, the margins
    R -+ (F - X) to the elastic range's two ends, or to its one end and side F (slack) with a
    side; flowing in the direction s, s delta' (it unloads where it turns 0) and the distance
    to h's next breakpoint."""
    k = P[c, STIFFNESS]
    side = P[c, SIDE]
    if mode == OPEN:
        return 0.0, 0.0, up, p, 0.0, -side * k * (delta1 - up), 1.0
    if mode == STICK:
        f = k * (delta1 - up)
        x, r = domain(P, c, up, p)
        g_up, g_down = r - (f - x), r + (f - x)
        if side > 0.0:
            return f, k, up, p, 0.0, g_up, f
        if side < 0.0:
            return f, k, up, p, 0.0, g_down, -f
        return f, k, up, p, 0.0, g_up, g_down
    s = 1.0 if mode == FLOW_UP else -1.0
    d, hh = ahead(P, c, up, p, s)
    share = k / (k + hh)
    dup = share * (delta1 - delta0)
    f = k * (delta1 - up - dup)
    travelled = s * dup
    return (f, k * hh / (k + hh), up + dup, anchor + s * (up + dup), share * v1, s * v1,
            d - travelled if d < np.inf else 1.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _turn_derivatives(k, slope, e1, e2):
    """The derivatives of the plastic elongation a flow at a turning point of the step's path
    leaves, with respect to the step's end elongation u1 and to h u1': the turning point's
    elongation u_e moves with them by (e1, e2) (``hermite``: the path's rate is zero there, so
    the instant's own motion does not count), and u_p with u_e by 1 - F'/k = k / (k + H).
    (The flow also depends on the state before it; that dependence is left out: it is zero
    for kinematic bilinear hardening, where a flow's end depends on u_e alone.)"""
    share = 1.0 - slope / k
    return share * e1, share * e2


@numba.njit(cache=True, nogil=True, inline="always")
def _elastic_step(P, c, o, u1, v1, f, k, cv_old, cv_new, phi, Jd, Jv, jac):
    """``trial`` of a step without flow: the force f = k (delta - u_p), or slack (0) where it
    leaves the spring's side; the internal variables kept."""
    side = P[c, SIDE]
    mode = STICK
    slope = k
    if side * f < 0.0:
        f = slope = 0.0
    if side != 0.0 and f == 0.0 and slope == 0.0:
        mode = OPEN
    up, p = cv_old[c, PLASTIC_ELONGATION], cv_old[c, CUMULATIVE]
    w0 = plastic_work(P, c, up, p)
    # (commit writes the mode STICK, acting, and event functions 1)
    commit(P, c, o, u1, v1, f, slope, 0.0, 0.5 * f * f / k, 0.0, cv_new, phi, Jd, Jv, jac)
    if mode == OPEN:
        cv_new[c, MODE] = OPEN
        cv_new[c, ACT] = 0.0
    cv_new[c, PLASTIC_ELONGATION] = up
    cv_new[c, CUMULATIVE] = p
    cv_new[c, DISSIPATED] = w0
    cv_new[c, EVOLVING_RATE] = 0.0
    cv_new[c, FLOW_ANCHOR] = cv_old[c, FLOW_ANCHOR]


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    """The plastic contact c at the link displacements d and rates dd, h after its committed
    values cv_old: force on the first node into phi (3 at o), its derivative into Jd (block
    o // 3) when ``jac``, values into cv_new.

    ``flags[c] < 0``: the law chooses (events = "step"): the plastic state follows the step's
    cubic Hermite path of the elongation, returned at each instant where the path turns back,
    then at its end (the return is exact along a path that does not reverse). Otherwise the
    mode ``flags[c]`` holds over the step (``_held``), and its event functions say when it
    must change."""
    u1, v1 = motion(P, c, o, d, dd)
    gap = P[c, GAP]
    up, p = cv_old[c, PLASTIC_ELONGATION], cv_old[c, CUMULATIVE]
    k = P[c, STIFFNESS]
    if flags[c] < 0.0 and h > 0.0 and _elastic_path(
            P, c, cv_old[c, PEN] - gap, u1 - gap, h * cv_old[c, PDOT], h * v1, up, p):
        # the common step: the whole path elastic from the committed state, as the return
        # below would find it (slack where the force leaves its side)
        _elastic_step(P, c, o, u1, v1, k * (u1 - gap - up), k, cv_old, cv_new, phi, Jd, Jv, jac)
        return
    anchor = cv_old[c, FLOW_ANCHOR]
    dfdv = 0.0
    if flags[c] >= 0.0:
        mode = flags[c]
        f, slope, up1, p1, rate, g0, g1 = _held(
            P, c, u1 - gap, v1, up, p, anchor, cv_old[c, PEN] - gap, mode)
    else:
        # the derivatives of the plastic elongation the path's turning points leave with
        # respect to u1 and to h u1' (0: no flow there)
        dup_du = dup_dhv = 0.0
        if h > 0.0:
            u0, hv0, hv1 = cv_old[c, PEN], h * cv_old[c, PDOT], h * v1
            if not _elastic_path(P, c, u0 - gap, u1 - gap, hv0, hv1, up, p):
                n, t1, t2 = turning_points(u1 - u0, hv0, hv1)[3:]
                for i in range(n):
                    ue, e1, e2 = hermite(t1 if i == 0 else t2, u0, u1, hv0, hv1)
                    r = state(P, c, ue - gap, up, p)
                    if r[3] > p:
                        dup_du, dup_dhv = _turn_derivatives(k, r[1], e1, e2)
                    up, p = r[2], r[3]
        f, slope, up1, p1 = state(P, c, u1 - gap, up, p)
        if p1 == p and slope != 0.0 and (dup_du != 0.0 or dup_dhv != 0.0):
            # elastic from a turning point where it flowed: F = k (delta1 - u_p(turn))
            slope -= k * dup_du
            dfdv = -k * h * dup_dhv
        mode = STICK
        rate = 0.0
        if P[c, SIDE] * f < 0.0 or (P[c, SIDE] != 0.0 and f == 0.0 and slope == 0.0):
            mode = OPEN
        elif p1 > p:
            # it flowed at the end of the step: the direction of the flow, its rate
            sf = 1.0 if up1 > up else -1.0
            mode = FLOW_UP if sf > 0.0 else FLOW_DOWN
            hh = ahead(P, c, up1, p1, sf)[1]
            rate = k / (k + hh) * v1
            anchor = p1 - sf * up1
        g0 = g1 = 1.0
    w0 = plastic_work(P, c, cv_old[c, PLASTIC_ELONGATION], cv_old[c, CUMULATIVE])
    if up1 == cv_old[c, PLASTIC_ELONGATION] and p1 == cv_old[c, CUMULATIVE]:
        w1 = w0                  # no flow over the step (the common case): no work
    else:
        w1 = plastic_work(P, c, up1, p1)
    work = w1 - w0
    commit(P, c, o, u1, v1, f, slope, dfdv, 0.5 * f * f / k, work, cv_new, phi, Jd, Jv, jac)
    cv_new[c, MODE] = mode
    cv_new[c, ACT] = 0.0 if mode == OPEN else 1.0
    cv_new[c, G0] = g0
    cv_new[c, G1] = g1
    cv_new[c, PLASTIC_ELONGATION] = up1
    cv_new[c, CUMULATIVE] = p1
    cv_new[c, DISSIPATED] = w1
    cv_new[c, EVOLVING_RATE] = rate
    cv_new[c, FLOW_ANCHOR] = anchor


def stiffness(row) -> float:
    """The elastic stiffness k."""
    return float(row[STIFFNESS])


def traits(row) -> dict:
    """A plastic contact (``fem.links.traits``): its force follows from the elongation and
    the plastic elongation, an internal variable whose rate is that of the elongation times
    k / (k + H) while it flows (the adaptive schemes control it, the exact scheme carries
    it); that rate and the event function of a flow (unload where the elongation's rate
    vanishes) depend on the rate."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=True, instant=False,
                friction=False, axial=True)


def bilinear(p: dict) -> bool:
    """Whether a link's equations are linear between its events with the plastic elongation
    as their only internal variable: a perfectly plastic curve, or a bilinear one with
    kinematic hardening (X = H u_p)."""
    return len(p["curve"]) == 1 or (len(p["curve"]) == 2 and p["hardening"] == "kinematic")


# ------------------------------------------------------------------ at instants
def _tolerance(P, c, cv, g) -> float:
    """The round-off of contact c's event function g at its values cv."""
    mode = cv[c, MODE]
    if mode == FLOW_UP or mode == FLOW_DOWN:
        if g == 0:
            return 1e-12 * max(1e-9, abs(cv[c, PDOT]))
        return 1e-12 * max(abs(cv[c, PLASTIC_ELONGATION]), abs(cv[c, CUMULATIVE]),
                           P[c, YIELD] / P[c, STIFFNESS])
    return 1e-12 * max(abs(cv[c, FN]), P[c, YIELD], P[c, STIFFNESS] * abs(cv[c, PEN]))


def _change(P, c, g, cv) -> str:
    """Change contact c's mode at an event of its function g, in place in its value row cv;
    returns the event's kind: "engage", "yield", "slack", "unload" or "hardening" (h's next
    segment: the mode stays)."""
    mode = cv[c, MODE]
    side = P[c, SIDE]
    if mode == OPEN:
        cv[c, MODE] = STICK
        return "engage"
    if mode == STICK:
        if g == 0:
            s = -1.0 if side < 0.0 else 1.0
        elif side != 0.0:
            cv[c, MODE] = OPEN
            return "slack"
        else:
            s = -1.0
        cv[c, MODE] = FLOW_UP if s > 0.0 else FLOW_DOWN
        cv[c, FLOW_ANCHOR] = cv[c, CUMULATIVE] - s * cv[c, PLASTIC_ELONGATION]
        return "yield"
    if g == 0:
        cv[c, MODE] = STICK
        return "unload"
    # at h's breakpoint: the flow goes on along the next segment
    s = 1.0 if mode == FLOW_UP else -1.0
    if P[c, RULE] == KINEMATIC:
        d = _next_break(P, c, cv[c, PLASTIC_ELONGATION], s)
        if d < 1e-9 * max(P[c, YIELD] / P[c, STIFFNESS], abs(cv[c, PLASTIC_ELONGATION])):
            cv[c, PLASTIC_ELONGATION] += s * d
    return "hardening"


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """Change the mode of contact c for its event function g at the current instant."""
    cv = scheme.buf.CV[scheme.cur]
    kind = _change(scheme.P, c, g, cv)
    records.append(record(scheme.t, kind, scheme.links.link_of(c),
                          f"force {cv[c, FN]:.9g} N, plastic elongation "
                          f"{cv[c, PLASTIC_ELONGATION]:.9g} m"))
    return True


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """Change the mode of contact c when one of its functions is below zero beyond its
    round-off at the current state; returns whether it did."""
    for g in (0, 1):
        if cv[c, G0 + g] < -_tolerance(scheme.P, c, cv, g):
            return at_event(scheme, c, g, records, decided)
    return False


# ------------------------------------------------------------------ between events, exactly
phase_key = mode_phase


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of a plastic contact c (``bilinear``) in its mode for the exact scheme
    (``fem.integrators.exact_phases.Terms``), its plastic elongation e the internal variable
    i of the state: acting, F = k (delta - e), delta = ell . x + pw . w - g, the structure gets
    -F ell and the imposed motion works F pv; flowing in the direction s, e' = k / (k + H)
    delta' and the plastic work F e' is dissipated (H: Prager's modulus, X = H e); the event
    functions of ``_held``."""
    n, nb, N = t.n, t.nb, t.N
    m = mode[0]
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    i = t.internal(c)
    k, fy, side, gap = P[c, STIFFNESS], P[c, YIELD], P[c, SIDE], P[c, GAP]
    hh = P[c, LAST_SLOPE] if P[c, RULE] == KINEMATIC else 0.0
    dz, du = t.affine(ell, pw, -gap)
    dz[2 * n + i] = -1.0                     # delta - e
    fz, fu = k * dz, k * du                  # F = k (delta - e)
    rate = t.affine(ell, pv, 0.0, on_v=True)
    if m == OPEN:
        t.event(c, 0, -side * fz, -side * fu)
        return
    t.K += k * np.outer(ell, ell)
    t.G[:, i] = k * ell
    t.F[:, :nb] -= k * np.outer(ell, pw)
    t.F[:, nb] += k * gap * ell
    t.support.append((1.0, (fz, fu), (np.zeros(N), np.concatenate([pv, [0.0]]))))
    if m == STICK:
        ez = np.zeros(N)
        ez[2 * n + i] = hh                   # X = H e
        eu = np.zeros(t.nu)
        eu[nb] = fy
        up = (eu - fu, ez - fz)              # R - (F - X)
        down = (eu + fu, fz - ez)            # R + (F - X)
        if side > 0.0:
            t.event(c, 0, up[1], up[0])
            t.event(c, 1, fz, fu)
        elif side < 0.0:
            t.event(c, 0, down[1], down[0])
            t.event(c, 1, -fz, -fu)
        else:
            t.event(c, 0, up[1], up[0])
            t.event(c, 1, down[1], down[0])
        return
    s = 1.0 if m == FLOW_UP else -1.0
    share = k / (k + hh)
    t.rates_z[i], t.rates_u[i] = share * rate[0], share * rate[1]
    t.event(c, 0, s * rate[0], s * rate[1])
    t.diss.append((share, (fz, fu), rate))


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (PLASTIC,)
_CURVE = [[1e-3, 100.0], [11e-3, 200.0]]
LAW = Law(
    "plastic", "an elasto-plastic spring with isotropic or kinematic hardening, along a "
               "direction",
    (Feature("plastic.bilinear", "elasto-plastic spring, perfectly plastic or bilinear "
                                 "kinematic", state=True, evolving=True),
     Feature("plastic", "elasto-plastic spring, isotropic or multilinear", state=True,
             evolving=True, linear=False,
             nonlinear="its elastic range moves with a second internal variable (isotropic "
                       "hardening: the cumulative plastic elongation) or its hardening slope "
                       "changes along the curve: the exact scheme's phases carry one "
                       "internal variable per link, the plastic elongation")),
    (Series("force", "N", "force the spring carries, tension positive: k (elongation - gap - "
                          "plastic_elongation)"),
     Series("elongation", "m", "elongation along `direction`"),
     Series("plastic_elongation", "m", "the plastic elongation u_p (internal variable)"),
     Series("cumulative_plastic", "m", "the cumulative plastic elongation p = int |u_p'| dt"),
     Series("dissipated", "J", "the plastic work int F du_p since the start")),
    (Sample("plastic_bilinear", "plastic.bilinear",
            {"kind": "plastic", "direction": [1.0, 0.0, 0.0], "curve": _CURVE}),
     Sample("plastic", "plastic", {"kind": "plastic", "direction": [1.0, 0.0, 0.0],
                                   "curve": _CURVE + [[21e-3, 250.0]],
                                   "hardening": "isotropic"})),
    OWN)


#: its keys (``fem.laws.plastic_keys``)
read = plastic_keys.read
table = plastic_keys.table


def needed(p: dict, where: str) -> list:
    if bilinear(p):
        return [("plastic.bilinear", f"{where}.kind")]
    return [("plastic", f"{where}.hardening" if len(p["curve"]) == 2 else f"{where}.curve")]


directions = along


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
