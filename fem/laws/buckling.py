"""Buckling links: a support that buckles under a critical force and is crushed beyond it.

The geometry is a plane shock's (``fem.laws.shock``): one node against an obstacle, or two
nodes, along the unit normal n, with a gap; the penetration p = n . d - gap (m) is positive
beyond the gap (d the node's translation, or the first node's relative to the second). The
support acts in compression only: its force F (N, compression positive) pushes the first node
back along -n (the second along +n).

The support carries its spring force Fs = kn (p - u) while p > u, u its permanent crush (m,
0 while intact), and nothing while p <= u (it has lost contact: the crush widened the gap).
Its spring force may not exceed the crushing force of its crush curve Fc(u), a piecewise
linear function of the crush:

* the plateau: Fc(u) = F_c (the critical force) for 0 <= u <= w (``plateau``);
* the drop: linear from F_c to the post-buckling force F_p over a crush L (``drop``);
* then F_p, and each post-buckling stage [u_j, s_j, c_j] (``stages``): from the crush u_j on,
  the crush curve has the slope s_j (N/m: the change of the crushing force per metre of
  crush) and the support the damping c_j.

Where kn (p - u) reaches Fc(u) while p grows, the support is crushed: u grows so that
kn (p - u) = Fc(u), i.e. at the rate u' = kn / (kn + s) p' on a segment of slope s (which
must exceed -kn: a drop steeper than the elastic slope would snap back). Unloading and
reloading follow the elastic slope kn about the permanent crush. In the force-penetration
plane the crush curve is the line kn p up to F_c, then segments of slope kn s / (kn + s).

The damper c (``damping`` until the first stage, then the stage's) acts in parallel with the
spring while in contact: F = Fs + c p'. The critical force is a limit on the spring force or,
by default (``damping_in_critical``), on the spring and damper forces together: the support
buckles when kn p + c p' reaches F_c, and from then on the force is capped by the crush curve,
F = min(Fs + c p', Fc(u)); while the support is crushed its force is the crushing force
Fc(u) alone. Without it, the support buckles when kn p reaches F_c, and the damper adds to the
crushing force.

Between its events the law is linear (its permanent crush an internal variable that evolves
while it is crushed): its modes are open, elastic, capped (the damper's force cut to the crush
curve) and crushed on a segment of the curve; the segment of the crush is part of the mode.

It stores Fs^2 / (2 kn) and dissipates the crush work int Fc(u) du (a function of the crush:
the area under the force-penetration curve less the elastic energy given back on unloading)
and its damper's work.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.laws.axial import turning_points, hermite
from fem.laws import buckling_keys
from fem.laws.buckling_keys import MAX_STAGES, curve
from fem.laws.columns import (A_FN, A_FTM, A_LAM, A_PEN, A_VSL, ACT, DIR, ENN, ENT,
                              EVOLVING, EVOLVING_RATE, FN, FTM, G0, G1, GAP, KIND, MODE, NRM, OPEN,
                              PDOT, PEN, SLIP, SLIPW, STICK, VSL, own)
from fem.laws.contract import Feature, Law, Series, record
from fem.laws.shock import kinematics

#: the kind code of a buckling contact (column KIND; the registry checks codes are unique)
BUCKLING = 7
#: the most points of the crush curve (the plateau, the drop, the post-buckling force, the
#: stages)
MAX_POINTS = 3 + MAX_STAGES
#: its own parameter columns: the normal stiffness kn, the critical force F_c, 1 when the
#: damper counts in the critical force, the number of points of the crush curve, and the
#: points: the crush where each segment starts, its crushing force there, its slope and the
#: damping from there on (the direction n is the shared DIR, the gap the shared GAP)
OWN = own(parameters=(1, 1, 1, 1, MAX_POINTS, MAX_POINTS, MAX_POINTS, MAX_POINTS),
          values=(1,))
STIFFNESS, CRITICAL, INCLUDED, POINTS, PU, PF, PS, PC = OWN.P
#: its own value column: the force of the damper (the link's force less the spring's), for
#: the damper's work over a step
(DAMPER_FORCE,) = OWN.V
#: value columns: the coordinate n . d = p + gap (PEN: the coordinate an evolving law follows)
#: and its rate (PDOT), the force (FN), the permanent
#: crush u (EVOLVING, archived) and its rate (EVOLVING_RATE), 1 once buckled (FTM, archived),
#: the crush work since the start (VSL, archived), the stored and dissipated energies (ENN,
#: SLIPW)
CRUSH, BUCKLED, WORK = EVOLVING, FTM, VSL
#: modes (column MODE): open, elastic, crushed (on the segment of the crush), capped; the
#: segment j of the crush is the mode's fraction j / SEGMENTS (the exact scheme finds its
#: phases by the modes alone; the event logs of events = "step" read the whole part: a crush
#: is logged as a slip)
ELASTIC, CRUSHED, CAPPED = float(STICK), float(SLIP), 3.0
SEGMENTS = 16.0


@numba.njit(cache=True, nogil=True, inline="always")
def decode(mode):
    """(the mode's whole part, the segment of the crush) of a mode value."""
    base = math.floor(mode)
    return base, int(round((mode - base) * SEGMENTS))


@numba.njit(cache=True, nogil=True)
def segment(P, c, u):
    """The segment j of the crush curve holding the crush u >= 0 (the last whose start is at
    or below u)."""
    m = int(P[c, POINTS])
    j = 0
    for i in range(1, m):
        if u >= P[c, PU + i]:
            j = i
        else:
            break
    return j


@numba.njit(cache=True, nogil=True, inline="always")
def crushing_force(P, c, j, u):
    """Fc(u) on segment j of the crush curve."""
    return P[c, PF + j] + P[c, PS + j] * (u - P[c, PU + j])


@numba.njit(cache=True, nogil=True)
def crush_work(P, c, u):
    """int_0^u Fc(x) dx, the energy the crush to u dissipated."""
    m = int(P[c, POINTS])
    total = 0.0
    for j in range(m):
        u0 = P[c, PU + j]
        u1 = P[c, PU + j + 1] if j + 1 < m else np.inf
        top = min(u, u1)
        if top <= u0:
            break
        total += 0.5 * (crushing_force(P, c, j, u0) + crushing_force(P, c, j, top)) * (top - u0)
    return total


@numba.njit(cache=True, nogil=True)
def crush_at(P, c, q):
    """The crush u whose crushing penetration u + Fc(u) / kn is q (0 below the critical
    penetration F_c / kn): the penetration reached decides the crush."""
    kn = P[c, STIFFNESS]
    m = int(P[c, POINTS])
    if q <= P[c, PF] / kn:
        return 0.0
    for j in range(m):
        if j + 1 < m and q >= P[c, PU + j + 1] + P[c, PF + j + 1] / kn:
            continue
        s = P[c, PS + j]
        return (kn * q - P[c, PF + j] + s * P[c, PU + j]) / (kn + s)
    return 0.0


@numba.njit(cache=True, nogil=True)
def _buckles_on_path(P, c, p0, p1, hv0, hv1, h):
    """The fraction of the step's cubic Hermite path of the penetration where the criterion
    force kn p + c p' (or kn p without the damper) first reaches F_c, or -1: the path
    sampled, the crossing refined by bisection."""
    kn, fc = P[c, STIFFNESS], P[c, CRITICAL]
    cd = P[c, PC] if P[c, INCLUDED] > 0.5 else 0.0
    samples = 16
    lo = 0.0
    for s in range(1, samples + 1):
        th = s / samples
        if _criterion(kn, cd, p0, p1, hv0, hv1, h, th) >= fc:
            hi = th
            for _ in range(50):
                mid = 0.5 * (lo + hi)
                if _criterion(kn, cd, p0, p1, hv0, hv1, h, mid) >= fc:
                    hi = mid
                else:
                    lo = mid
            return hi
        lo = th
    return -1.0


@numba.njit(cache=True, nogil=True, inline="always")
def _criterion(kn, cd, p0, p1, hv0, hv1, h, th):
    """kn p + cd p' at the fraction th of a step's cubic Hermite path (no force while the gap
    is open)."""
    p = hermite(th, p0, p1, hv0, hv1)[0]
    if p <= 0.0:
        return 0.0
    t2 = th * th
    rate = ((6.0 * t2 - 6.0 * th) * (p0 - p1) + (3.0 * t2 - 4.0 * th + 1.0) * hv0
            + (3.0 * t2 - 2.0 * th) * hv1) / h
    return kn * p + cd * rate


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    """The buckling contact c at the link displacements d and rates dd, h after its committed
    values cv_old: force on the first node into phi (3 at o), its derivatives into Jd, Jv
    (block o // 3) when ``jac``, values into cv_new.

    ``flags[c] < 0``: the law chooses (events = "step"): the crush follows the largest
    penetration the step's cubic Hermite path reaches (the crush curve depends on nothing
    else), and the mode at the end of the step is the one its state holds. Otherwise the mode
    ``flags[c]`` holds over the step and its event function (G1, the smaller of two, in m)
    says when it must change; G0 is never an event."""
    p1, v1, n0, n1, n2, rho = kinematics(P, c, d[o], d[o + 1], d[o + 2], dd[o], dd[o + 1],
                                         dd[o + 2])
    kn = P[c, STIFFNESS]
    included = P[c, INCLUDED] > 0.5
    u0 = cv_old[c, CRUSH]
    p0 = cv_old[c, PEN] - P[c, GAP]
    buckled = cv_old[c, BUCKLED]
    rate = 0.0
    g1 = 1.0
    if flags[c] >= 0.0:
        base, j = decode(flags[c])
        mode = flags[c]
        cj = P[c, PC + j]
        u1 = u0
        if base == OPEN:
            f = fs = 0.0
            dfdp = dfdv = 0.0
            g1 = u1 - p1
        elif base == ELASTIC:
            fs = kn * (p1 - u1)
            f = fs + cj * v1
            dfdp, dfdv = kn, cj
            cap = crushing_force(P, c, j, u1) - fs - (cj * v1 if included else 0.0)
            g1 = min(p1 - u1, cap / kn)
        elif base == CAPPED:
            fs = kn * (p1 - u1)
            f = crushing_force(P, c, j, u1)
            dfdp = dfdv = 0.0
            g1 = min((fs + cj * v1 - f) / kn, (f - fs) / kn)
        else:
            s = P[c, PS + j]
            share = kn / (kn + s)
            u1 = u0 + share * (p1 - p0)
            fs = kn * (p1 - u1)
            dfdp = kn * s / (kn + s)
            dfdv = 0.0
            f = fs
            if not included:
                f += cj * v1
                dfdv = cj
            rate = share * v1
            g1 = v1
            if j + 1 < int(P[c, POINTS]):
                g1 = min(g1, P[c, PU + j + 1] - u1)
    else:
        q = p1
        if h > 0.0:
            hv0, hv1 = h * cv_old[c, PDOT], h * v1
            n, t1, t2 = turning_points(p1 - p0, hv0, hv1)[3:]
            for i in range(n):
                q = max(q, hermite(t1 if i == 0 else t2, p0, p1, hv0, hv1)[0])
            if buckled < 0.5 and _buckles_on_path(P, c, p0, p1, hv0, hv1, h) >= 0.0:
                buckled = 1.0
        j0 = segment(P, c, u0)
        reach = u0 + crushing_force(P, c, j0, u0) / kn
        u1 = crush_at(P, c, q) if q > reach else u0
        if u1 < u0:
            u1 = u0
        j = segment(P, c, u1)
        cj = P[c, PC + j]
        fcu = crushing_force(P, c, j, u1)
        fs = kn * (p1 - u1)
        dfdp = dfdv = 0.0
        if p1 <= u1:
            mode = OPEN
            f = fs = 0.0
        elif u1 > u0 and q == p1 and v1 > 0.0:
            s = P[c, PS + j]
            mode = CRUSHED + j / SEGMENTS
            fs = fcu
            f = fs
            dfdp = kn * s / (kn + s)
            if not included:
                f += cj * v1
                dfdv = cj
            rate = kn / (kn + s) * v1
        elif included and fs + cj * v1 > fcu:
            mode = CAPPED + j / SEGMENTS
            f = fcu
        else:
            mode = ELASTIC + j / SEGMENTS
            f = fs + cj * v1
            dfdp, dfdv = kn, cj
        if buckled < 0.5 and (q * kn >= P[c, CRITICAL] or (included and p1 > u1
                                                          and fs + cj * v1 >= fcu)):
            buckled = 1.0
    lost = crush_work(P, c, u1) - crush_work(P, c, u0)
    fd = f - fs
    lost += 0.5 * (cv_old[c, DAMPER_FORCE] + fd) * (p1 - p0)
    cv_new[c, MODE] = mode
    cv_new[c, ACT] = 1.0
    cv_new[c, PEN] = p1 + P[c, GAP]          # the coordinate along n (``hold_internal``)
    cv_new[c, PDOT] = v1
    cv_new[c, NRM] = n0
    cv_new[c, NRM + 1] = n1
    cv_new[c, NRM + 2] = n2
    cv_new[c, FN] = f
    cv_new[c, ENN] = 0.5 * fs * fs / kn
    cv_new[c, ENT] = 0.0
    cv_new[c, SLIPW] = lost
    cv_new[c, G0] = 1.0
    cv_new[c, G1] = g1
    cv_new[c, CRUSH] = u1
    cv_new[c, EVOLVING_RATE] = rate
    cv_new[c, BUCKLED] = buckled
    cv_new[c, WORK] = crush_work(P, c, u1)
    cv_new[c, DAMPER_FORCE] = fd
    phi[o] -= f * n0
    phi[o + 1] -= f * n1
    phi[o + 2] -= f * n2
    if jac:
        b = o // 3
        nn = (n0, n1, n2)
        for q3 in range(3):
            for s3 in range(3):
                Jd[b, q3, s3] -= dfdp * nn[q3] * nn[s3]
                Jv[b, q3, s3] -= dfdv * nn[q3] * nn[s3]


def stiffness(row) -> float:
    """The normal stiffness kn (the support's stiffest slope)."""
    return float(row[STIFFNESS])


def traits(row) -> dict:
    """A buckling contact (``fem.links.traits``): its force depends on the rate (its damper,
    and the event of an unload where the penetration's rate vanishes) and on its permanent
    crush, an internal variable whose rate is kn / (kn + s) times the penetration's while it
    is crushed (the adaptive schemes control it, the exact scheme carries it)."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=True, instant=False,
                friction=False)


# ------------------------------------------------------------------ at instants
def _parts(P, c: int, cv) -> tuple:
    """The two functions of contact c's event function G1 in its mode at the values cv,
    (first, second, their round-off), both in m, and the mode's part and segment."""
    base, j = math.floor(cv[c, MODE]), int(round((cv[c, MODE] % 1.0) * SEGMENTS))
    kn = P[c, STIFFNESS]
    p, v, u = cv[c, PEN] - P[c, GAP], cv[c, PDOT], cv[c, CRUSH]
    cj = P[c, PC + j]
    fcu = P[c, PF + j] + P[c, PS + j] * (u - P[c, PU + j])
    fs = kn * (p - u)
    size = 1e-12 * max(abs(p), abs(u), P[c, CRITICAL] / kn)
    if base == OPEN:
        return u - p, math.inf, size, base, j
    if base == ELASTIC:
        return p - u, (fcu - fs - (cj * v if P[c, INCLUDED] > 0.5 else 0.0)) / kn, size, base, j
    if base == CAPPED:
        return (fs + cj * v - fcu) / kn, (fcu - fs) / kn, size, base, j
    nxt = P[c, PU + j + 1] - u if j + 1 < int(P[c, POINTS]) else math.inf
    return v, nxt, size, base, j


def _kind_of_segment(P, c: int, j: int) -> str:
    """What the crush enters at the start of segment j of its curve: "drop" (the plateau
    ends), "post-buckling" (the drop, or a plateau without one, ends) or "stage"."""
    label = "plateau" if P[c, PS] == 0.0 else "drop"
    for i in range(1, j + 1):
        if label == "plateau" and P[c, PS + i] < 0.0:
            label = "drop"
        elif label in ("plateau", "drop"):
            label = "post-buckling"
        else:
            label = "stage"
    return label


def change(P, c: int, cv) -> list:
    """Change contact c's mode at an event of its function G1 (the smaller of its two parts
    reached zero), in place in its value row; returns the kinds of the event (one or two: a
    first crush, or a first cap, is also the support's "buckling")."""
    first, second, size, base, j = _parts(P, c, cv)
    kinds = []
    u = cv[c, CRUSH]
    if base == OPEN:
        cv[c, MODE] = ELASTIC + segment_of(P, c, u) / SEGMENTS
        return ["impact"]
    if base == ELASTIC:
        if first <= second:
            cv[c, MODE] = OPEN
            return ["separation"]
        if cv[c, BUCKLED] < 0.5:
            cv[c, BUCKLED] = 1.0
            kinds.append("buckling")
        fs = P[c, STIFFNESS] * (cv[c, PEN] - P[c, GAP] - u)
        fcu = P[c, PF + j] + P[c, PS + j] * (u - P[c, PU + j])
        if P[c, INCLUDED] > 0.5 and fs < fcu - 1e-12 * fcu:
            # the damper's force takes the support to its crushing force: capped until the
            # spring's force alone reaches it
            cv[c, MODE] = CAPPED + j / SEGMENTS
            return kinds + ["cap"]
        cv[c, MODE] = CRUSHED + j / SEGMENTS
        return kinds + ["crush"]
    if base == CAPPED:
        if first <= second:
            cv[c, MODE] = ELASTIC + j / SEGMENTS
            return ["release"]
        cv[c, MODE] = CRUSHED + j / SEGMENTS
        return ["crush"]
    if first <= second:
        cv[c, MODE] = ELASTIC + j / SEGMENTS
        return ["unload"]
    # the next segment of the crush curve: the crush lands on its start
    nxt = P[c, PU + j + 1]
    if abs(nxt - u) <= 1e-9 * max(abs(nxt), P[c, CRITICAL] / P[c, STIFFNESS]):
        cv[c, CRUSH] = nxt
    cv[c, MODE] = CRUSHED + (j + 1) / SEGMENTS
    return [_kind_of_segment(P, c, j + 1)]


def segment_of(P, c: int, u: float) -> int:
    """``segment`` in Python, for the handlers at instants."""
    m = int(P[c, POINTS])
    j = 0
    for i in range(1, m):
        if u >= P[c, PU + i]:
            j = i
    return j


def _detail(P, cv, c: int) -> str:
    return (f"force {cv[c, FN]:.9g} N, penetration {cv[c, PEN] - P[c, GAP]:.9g} m, crush "
            f"{cv[c, CRUSH]:.9g} m")


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """Change the mode of contact c for its event function g at the current instant."""
    cv = scheme.buf.CV[scheme.cur]
    if g == 0:
        return False
    for kind in change(scheme.P, c, cv):
        records.append(record(scheme.t, kind, scheme.links.link_of(c), _detail(scheme.P, cv, c),
                              before=cv[c, PDOT]))
    return True


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """Change the mode of contact c when its event function is below zero beyond its
    round-off at the current state; returns whether it did."""
    first, second, size, base, j = _parts(scheme.P, c, cv)
    if base == CRUSHED:
        if first < -1e-12 * max(1e-9, abs(cv[c, PDOT])) or second < -size:
            return at_event(scheme, c, 1, records, decided)
        return False
    if min(first, second) < -size:
        return at_event(scheme, c, 1, records, decided)
    return False


def start(scheme, contacts, records: list) -> None:
    """In contact at the start: a support exactly at its surface that the motion drives in
    (its event function starts at zero, where no crossing could ever be seen)."""
    cv = scheme.buf.CV[scheme.cur]
    for c in contacts:
        if math.floor(cv[c, MODE]) != OPEN:
            continue
        u, p = cv[c, CRUSH], cv[c, PEN] - scheme.P[c, GAP]
        if abs(p - u) <= 1e-12 * max(1.0, abs(p)) and cv[c, PDOT] > 0.0:
            cv[c, MODE] = ELASTIC + segment_of(scheme.P, c, u) / SEGMENTS


# ------------------------------------------------------------------ between events, exactly
def phase_key(P, c: int, cv) -> tuple:
    """The mode with its segment of the crush curve: what of the contact's state enters its
    equations between events (the crush itself is an internal variable of the exact
    scheme's state)."""
    return (float(cv[c, MODE]),)


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of buckling contact c in its mode for the exact scheme (``fem.integrators.
    exact_phases.Terms``), its permanent crush u the internal variable i of the state:
    p = ell . x + pw . w - gap; in contact the spring force kn (p - u) and, elastic (or
    crushed without ``damping_in_critical``), the damper c p'; capped, the crushing force
    Fc(u); crushed on a segment of slope s, the crushing force Fc(u) (which the spring force
    equals along the crush) with u' = kn / (kn + s) p', dissipating Fc(u) u'. The event
    functions are those of ``trial``."""
    n, nb, N = t.n, t.nb, t.N
    base, j = math.floor(mode[0]), int(round((mode[0] % 1.0) * SEGMENTS))
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    i = 2 * n + t.internal(c)
    kn, gap = P[c, STIFFNESS], P[c, GAP]
    cj, s = P[c, PC + j], P[c, PS + j]
    included = P[c, INCLUDED] > 0.5
    pz, pu = t.affine(ell, pw, -gap)
    vz, vu = t.affine(ell, pv, 0.0, on_v=True)
    imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
    gz, gu = pz.copy(), pu.copy()            # p - u
    gz[i] -= 1.0
    if base == OPEN:
        t.event(c, 1, -gz, -gu)
        return
    fsz, fsu = kn * gz, kn * gu              # the spring force kn (p - u)
    cz = np.zeros(N)                         # the crushing force Fc(u) on the segment
    cz[i] = s
    cu = np.zeros(t.nu)
    cu[nb] = P[c, PF + j] - s * P[c, PU + j]
    if base == CAPPED:
        t.G[:, i - 2 * n] -= s * ell
        t.F[:, nb] -= cu[nb] * ell
        t.support.append((1.0, (cz, cu), imposed_rate))
        t.diss.append((1.0, (cz - fsz, cu - fsu), (vz, vu)))
        t.event(c, 1, (fsz + cj * vz - cz) / kn, (fsu + cj * vu - cu) / kn)
        t.event(c, 1, (cz - fsz) / kn, (cu - fsu) / kn)
        return
    damped = base == ELASTIC or not included
    if base == ELASTIC:
        t.K += kn * np.outer(ell, ell)
        t.G[:, i - 2 * n] = kn * ell
        t.F[:, :nb] -= kn * np.outer(ell, pw)
        t.F[:, nb] += kn * gap * ell
        fz, fu = fsz.copy(), fsu.copy()
    else:
        # crushed: the spring carries the crushing force Fc(u), which it equals all along
        t.G[:, i - 2 * n] -= s * ell
        t.F[:, nb] -= cu[nb] * ell
        fz, fu = cz.copy(), cu.copy()
    if damped and cj > 0.0:
        t.C += cj * np.outer(ell, ell)
        t.Cl += cj * np.outer(ell, ell)
        t.F[:, :nb] -= cj * np.outer(ell, pv)
        t.diss.append((cj, (vz, vu), (vz, vu)))
        fz, fu = fz + cj * vz, fu + cj * vu
    t.support.append((1.0, (fz, fu), imposed_rate))
    if base == ELASTIC:
        t.event(c, 1, gz, gu)
        extra = cj if included else 0.0
        t.event(c, 1, (cz - fsz - extra * vz) / kn, (cu - fsu - extra * vu) / kn)
        return
    share = kn / (kn + s)
    k = i - 2 * n
    t.rates_z[k], t.rates_u[k] = share * vz, share * vu
    t.diss.append((share, (cz, cu), (vz, vu)))
    t.event(c, 1, vz, vu)
    if j + 1 < int(P[c, POINTS]):
        ez = np.zeros(N)
        ez[i] = -1.0
        eu = np.zeros(t.nu)
        eu[nb] = P[c, PU + j + 1]
        t.event(c, 1, ez, eu)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (BUCKLING,)
LAW = Law(
    "buckling", "a support that buckles under a critical force and is crushed beyond it, "
                "against an obstacle or between two nodes",
    (Feature("buckling", "buckling support", rate=True, state=True, evolving=True),),
    (Series("normal_force", "N", "the support's force, compression positive"),
     Series("penetration", "m", "penetration beyond the gap (negative: open, by that "
                                "distance)"),
     Series("state", "1", "1 in contact (the penetration beyond the permanent crush), 0 "
                          "open"),
     Series("crush", "m", "the permanent crush (internal variable): the penetration at "
                          "which the unloaded support carries no force"),
     Series("buckled", "1", "1 once the support has buckled (the critical force reached)"),
     Series("dissipated", "J", "the energy the crush dissipated since the start, the "
                               "integral of the crushing force over the crush (without the "
                               "damper's)")),
    (),
    OWN)


#: its keys (``fem.laws.buckling_keys``)
read = buckling_keys.read


def needed(p: dict, where: str) -> list:
    return [("buckling", f"{where}.kind")]


def directions(p: dict) -> list:
    return [("normal", p["normal"], "along")]


def rows(p: dict, nodes: int = 2) -> list:
    row = np.zeros(OWN.width_p)
    row[KIND] = BUCKLING
    row[DIR:DIR + 3] = p["normal"]
    row[GAP] = p["gap"]
    row[STIFFNESS] = p["stiffness"]
    row[CRITICAL] = p["critical_force"]
    row[INCLUDED] = 1.0 if p["damping_in_critical"] else 0.0
    points = curve(p)
    row[POINTS] = len(points)
    for j, (u, f, s, cd) in enumerate(points):
        row[PU + j], row[PF + j], row[PS + j], row[PC + j] = u, f, s, cd
    return [("+", row)]


def attrs(p: dict, contact_rows) -> dict:
    return dict(normal=list(p["normal"]), gap=p["gap"], stiffness=p["stiffness"],
                damping=p["damping"], critical_force=p["critical_force"],
                damping_in_critical=p["damping_in_critical"], plateau=p["plateau"],
                drop=p["drop"], post_buckling_force=p["post_buckling_force"],
                stages=np.asarray(p["stages"], float).reshape(-1, 3),
                loop=["penetration", "normal_force"])


def series(v, p: dict) -> dict:
    penetration = v[:, 0, A_PEN] - p["gap"]
    return {"normal_force": v[:, 0, A_FN], "penetration": penetration,
            "state": (penetration > v[:, 0, A_LAM]).astype(float),
            "crush": v[:, 0, A_LAM], "buckled": v[:, 0, A_FTM],
            "dissipated": v[:, 0, A_VSL]}
