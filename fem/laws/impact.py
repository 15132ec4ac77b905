"""Rigid impact links: restitution, sticking, bonds and their release.

An impact link is one rigid contact (``fem.links.linkset``): its gap r = -p (p = n . d - gap)
must stay >= 0. Its laws act at instants, through the integrated system's mass:

* impact (Newton's law, momentum conserved): when r reaches zero while approaching
  (p' > 0), an impulse along the contact's row sets the outgoing rate to -e times the incoming
  one, the bonded contacts keeping their zero relative velocity:
  dv = M^-1 R^T P,  P = (R M^-1 R^T)^-1 (target - R v - imposed rates), R the rows of the bonded
  contacts and of the hit one; with e = 0, or an approach slower than the grazing velocity,
  the target is zero and the contact bonds;
* bond: while bonded the bodies keep r' = 0 and r'' = 0; the bond force lambda (positive when
  it pushes the bodies apart) is a constraint each scheme solves with its step;
  ``bond = "unilateral"``: the bond holds while lambda > 0 (formed under tension, it releases
  at once); ``"until_tension"``: the bond holds until lambda passes from compression to
  tension (Dedow and Murphy's rule).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.laws.columns import (A_ACT, A_LAM, A_PEN, ACT, BLK, BOND_UNILATERAL,
                              BOND_UNTIL_TENSION, BONDED, DIR, ENN, FDN, FN, G0, G1, GAP, KIND,
                              LAM, MODE, OPEN, PDOT, PEN, RIGID, own)
from fem.laws.contract import Feature, Law, Sample, Series, mode_phase, record
from fem.laws.shock import contact_state

#: the translations a component names
_AXES = {"DX": 0, "DY": 1, "DZ": 2}

#: its own columns (given by the registry's layout, ``fem.laws.columns.own``): parameters E
#: restitution, VG grazing velocity, BOND bond rule; values ANC the link displacement at the
#: last evaluation (3), CMP 1 once the bond has been in compression since it formed
OWN = own(parameters=(1, 1, 1), values=(3, 1))
E, VG, BOND = OWN.P
ANC, CMP = OWN.V


def impact_target(P, cv, j: int) -> tuple[bool, float]:
    """(sticks, target rate p' after the impact) of rigid contact j hit at rate cv[j, PDOT]."""
    rate = float(cv[j, PDOT])
    e = float(P[j, E])
    stick = e == 0.0 or rate < P[j, VG]
    return stick, 0.0 if stick else -e * rate


def impulse(R: np.ndarray, MR: np.ndarray, rates: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Velocity jump dv (n,) that brings the rates R v (+ imposed) of the rows R (k, n) to
    ``targets``; MR = M^-1 R^T (n, k)."""
    lam = np.linalg.solve(R @ MR, np.asarray(targets, float) - np.asarray(rates, float))
    return MR @ lam


def releases(P, cv, j: int, tol: float) -> bool:
    """Whether bonded contact j lets go at an instant: tension beyond ``tol`` under the
    unilateral rule, or after compression under the until-tension rule."""
    lam = float(cv[j, LAM])
    if lam >= -tol:
        return False
    return P[j, BOND] == BOND_UNILATERAL or cv[j, CMP] > 0.5


def gap(cv, j: int) -> float:
    return -float(cv[j, PEN])


def stiffness(row) -> float:
    """None: a rigid contact is a constraint, not a spring."""
    return 0.0


def traits(row) -> dict:
    """A rigid contact (``fem.laws.shock.traits``): no force from d or d' (its bond force is a
    constraint), an impact at an instant."""
    return dict(rate=False, elastic=False, plane_elastic=False, evolving=False, instant=True,
                friction=False)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (RIGID,)
LAW = Law(
    "impact", "rigid contact with Newton's restitution",
    (Feature("impact", "impact", instant=True),),
    (Series("gap", "m", "distance to contact (0 in contact)"),
     Series("normal_force", "N", "the interaction force while bonded"),
     Series("state", "1", "1 bonded, 0 free")),
    (Sample("impact", "impact", {"kind": "impact", "component": "DX", "gap": 0.005,
                                 "restitution": 0.5}),),
    OWN)


def read(t, p: dict, components=tuple(_AXES)) -> None:
    """The keys of an impact link (docs/study_format.md); ``components``: the model's."""
    p["component"] = t.str("component", choices=tuple(c for c in components if c in _AXES))
    p["restitution"] = t.float("restitution", min=0.0, max=1.0)
    p["grazing_velocity"] = t.float("grazing_velocity", 1e-6, min=0.0)
    p["bond"] = t.str("bond", "unilateral", choices=("unilateral", "until_tension"))
    p["gap"] = t.float("gap", 0.0, min=0.0)


def needed(p: dict, where: str) -> list:
    return [("impact", f"{where}.kind")]


def directions(p: dict) -> list:
    return []


def rows(p: dict, nodes: int = 2) -> list:
    """The one rigid contact, along its component (one node: the wall's normal is -e)."""
    e = np.zeros(3)
    e[_AXES[p["component"]]] = 1.0
    row = np.zeros(OWN.width_p)
    row[KIND] = RIGID
    row[DIR:DIR + 3] = e if nodes == 2 else -e
    row[GAP] = p["gap"]
    row[E] = p["restitution"]
    row[VG] = p["grazing_velocity"]
    row[BOND] = BOND_UNTIL_TENSION if p["bond"] == "until_tension" else BOND_UNILATERAL
    return [("rigid", row)]


def attrs(p: dict, contact_rows) -> dict:
    return dict(gap=p["gap"], restitution=p["restitution"],
                grazing_velocity=p["grazing_velocity"], bond=p["bond"],
                component=p["component"])


def series(v, p: dict) -> dict:
    return {"gap": -v[:, 0, A_PEN], "normal_force": v[:, 0, A_LAM] * v[:, 0, A_ACT],
            "state": v[:, 0, A_ACT]}


# ------------------------------------------------------------------ the bond, compiled
@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, flags):
    """The rigid law of contact c (``fem.links.law.evaluate``): no force here (the bond force
    is the scheme's constraint, column LAM); the mode (the committed one, or the one imposed
    by ``flags``), the event function (the bond force while bonded, the gap while free) and
    the anchor."""
    p = contact_state(P, c, o, d, dd, cv_old, cv_new)[0]
    mode = int(cv_old[c, MODE]) if flags[c] < 0.0 else int(flags[c])
    cv_new[c, MODE] = mode
    cv_new[c, ACT] = 1.0 if mode == BONDED else 0.0
    cv_new[c, LAM] = cv_old[c, LAM] if mode == BONDED else 0.0
    cv_new[c, FN] = cv_new[c, LAM]
    cv_new[c, FDN] = 0.0
    cv_new[c, ENN] = 0.0
    cv_new[c, G0] = cv_new[c, LAM] if mode == BONDED else -p
    cv_new[c, G1] = 1.0
    cv_new[c, CMP] = cv_old[c, CMP] if mode == BONDED else 0.0
    for q in range(3):
        cv_new[c, ANC + q] = d[o + q]


@numba.njit(cache=True, nogil=True)
def set_bond(P, c, cv, value, mark):
    """The bond force ``value`` (N, pushing the bodies apart) of bonded contact c into its
    value row (it is also its normal force and its event function); ``mark``: note a
    compression (a bond ``until_tension`` releases only after one)."""
    cv[c, LAM] = value
    cv[c, FN] = value
    cv[c, G0] = value
    if mark and value > 0.0:
        cv[c, CMP] = 1.0


@numba.njit(cache=True, nogil=True)
def push_bond(P, c, value, phi):
    """Add the force of bond c's force ``value`` on its link's first node to phi."""
    o = 3 * int(P[c, BLK])
    for q in range(3):
        phi[o + q] -= value * P[c, DIR + q]


# ------------------------------------------------------------------ at instants
def bonded(scheme) -> list:
    """The bonded rigid contacts at the current state."""
    cv = scheme.buf.CV[scheme.cur]
    return [c for c in scheme.links.rigid if cv[c, MODE] == BONDED]


def gap_tolerance(scheme, c: int) -> float:
    d = scheme.buf.DB[scheme.cur]
    o = 3 * int(scheme.P[c, BLK])
    return 1e-12 * max(1.0, float(np.max(np.abs(d[o:o + 3]), initial=0.0)),
                       abs(scheme.P[c, GAP]))


def hit(scheme, j: int, records: list):
    """Newton's law on rigid contact j: impulse, or a bond."""
    b, cur = scheme.buf, scheme.cur
    cv = b.CV[cur]
    stick, target = impact_target(scheme.P, cv, j)
    settled = ""
    zeno = _zeno(scheme)
    if zeno is not None and not stick:
        scale = max(abs(float(scheme.P[j, GAP])), float(np.max(np.abs(b.DB[cur]), initial=0)))
        stick = zeno.bounce(j, scheme.t, float(cv[j, PDOT]), float(scheme.P[j, E]), scale)
        if stick:
            target = 0.0
            settled = (f" (impacts {zeno.last[j][1]:.3g} s apart, the bounces of a body "
                       f"coming to rest)")
    rate = float(cv[j, PDOT])
    others = [c for c in bonded(scheme) if c != j]
    rows_ = others + [j]
    R = scheme.bond_rows(rows_)
    MR = scheme.mass_solve(R.T)
    rates = np.array([cv[c, PDOT] for c in rows_])
    targets = np.zeros(len(rows_))
    targets[-1] = target
    v = b.V[cur]
    before = 0.5 * float(v @ (scheme.dyn.mass @ v))
    v += impulse(R, MR, rates, targets)
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
        records.append(record(scheme.t, "stick", name,
                              f"approach {rate:.9g} m/s: bodies move together{settled}", -rate,
                              -new_rate, lost))
    else:
        records.append(record(scheme.t, "impact", name,
                              f"approach {rate:.9g} m/s, rebound {-new_rate:.9g} m/s", -rate,
                              -new_rate, lost))


def _zeno(scheme):
    """The scheme's guard against endless bounces (``ZenoGuard``), made at its first impact
    from the span of its grid (``grid_span``: start, end, shortest step), or None without
    one."""
    zeno = getattr(scheme, "zeno", None)
    if zeno is None and getattr(scheme, "grid_span", None) is not None:
        start, end, shortest = scheme.grid_span
        zeno = scheme.zeno = ZenoGuard(end - start, shortest)
    return zeno


def release(scheme, c: int, records: list, why: str):
    cv = scheme.buf.CV[scheme.cur]
    cv[c, MODE] = OPEN
    cv[c, ACT] = 0.0
    cv[c, LAM] = 0.0
    cv[c, CMP] = 0.0
    records.append(record(scheme.t, "separation", scheme.links.link_of(c), why, 0.0, 0.0, 0.0))


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """A bonded contact whose bond force reached zero separates; a free one hits."""
    if scheme.buf.CV[scheme.cur][c, MODE] == BONDED:
        release(scheme, c, records, "interaction force reached zero")
    else:
        hit(scheme, c, records)
    return True


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """A free contact at its gap (to round-off) and approaching hits."""
    if cv[c, MODE] != BONDED and gap(cv, c) <= gap_tolerance(scheme, c) \
            and cv[c, PDOT] > 1e-12 * max(1.0, abs(cv[c, PDOT])):
        hit(scheme, c, records)
        return True
    return False


def after_settle(scheme, contacts, records: list) -> bool:
    """Once the others have settled: a bond under tension releases (one at a time)."""
    cv = scheme.buf.CV[scheme.cur]
    held = [c for c in contacts if cv[c, MODE] == BONDED]
    tol = 1e-9 * float(np.max(np.abs(cv[held, LAM]), initial=0.0))
    for c in held:
        if releases(scheme.P, cv, c, tol):
            release(scheme, c, records, f"bond under tension ({cv[c, LAM]:.6g} N) released")
            return True
    return False


def start(scheme, contacts, records: list) -> None:
    """Bodies touching at the start without relative velocity start bonded."""
    cv = scheme.buf.CV[scheme.cur]
    for c in contacts:
        r, rate = gap(cv, c), cv[c, PDOT]
        if r <= gap_tolerance(scheme, c) and abs(rate) <= scheme.P[c, VG]:
            cv[c, MODE] = BONDED
            cv[c, ACT] = 1.0


def start_at_rest(scheme, contacts, records: list) -> None:
    return None


def start_settled(scheme, contacts, records: list) -> None:
    """Bodies merely touching at the start (no compression between them) are free; the
    others are recorded bonded."""
    b, cur = scheme.buf, scheme.cur
    for _ in range(len(contacts) + 1):
        cv = b.CV[cur]
        loose = [c for c in bonded(scheme) if cv[c, LAM] <= 1e-12 * max(
            1.0, max((abs(cv[k, LAM]) for k in bonded(scheme)), default=0.0))]
        if not loose:
            break
        cv[loose[0], MODE] = OPEN
        cv[loose[0], ACT] = 0.0
        scheme.equilibrium()
    for c in bonded(scheme):
        records.append(record(scheme.t, "stick", scheme.links.link_of(c),
                              "bodies together at the start", -b.CV[cur][c, PDOT],
                              -b.CV[cur][c, PDOT], 0.0))


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


# ------------------------------------------------------------------ between events, exactly
phase_key = mode_phase


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of rigid contact c in its phase for the exact scheme (``fem.integrators.
    exact_phases.Terms``): bonded, a constraint whose force the phase solves; free, its gap
    as event function."""
    N = t.N
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    if mode[0] == BONDED:
        t.bonded.append((c, ell, pa, (np.zeros(N), np.concatenate([pv, [0.0]]))))
        return
    p_aff = t.affine(ell, pw, -P[c, GAP])
    t.event(c, 0, -p_aff[0], -p_aff[1])
