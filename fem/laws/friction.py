"""Friction of shock contacts: Coulomb friction in the tangent plane, or unidirectional
friction along one tangential direction, with static and sliding coefficients.

While a contact is closed, an elastic tangential spring of stiffness kt (and a damper ct)
holds the relative tangential displacement s = Pt (d - anchor), Pt the projector on the
directions where friction acts: I - n n^T (Coulomb: the whole tangent plane) or t t^T
(unidirectional: only along the given direction t, the other tangential direction slides
freely). The friction force on the link's first node is

* sticking: -(kt s + ct Pt d'), as long as its magnitude stays within mu_s F_n (static
  coefficient ``static_friction``, F_n the normal force when positive);
* sliding along the unit direction e: -mu F_n e (sliding coefficient ``friction``); the
  anchor follows the node so that the spring carries that force (s = mu F_n e / kt), and the
  slip rate is e . Pt d' (m/s, what wears the surfaces: the wear power is mu F_n times it).

With ``tangential_stiffness = 0`` the spring takes the normal stiffness (a penalty
regularization of Coulomb's law: a sticking contact deforms by at most mu_s F_n / kt).

Modes and events (``fem.links.law``): a sticking contact starts sliding where
G1 = mu_s F_n - |kt s + ct Pt d'| reaches zero (the sliding direction is then that of the
spring's stretch); a sliding contact sticks where the slip velocity along its direction,
G1 = e . Pt d', reaches zero (its anchor is then set so that the spring holds the sliding force:
the force is continuous). While sliding in the plane (Coulomb) e follows the sliding velocity
Pt d' / |Pt d'|; along one direction e = +-t. When the law decides the mode itself
(``events = "step"``), the return mapping of the elastic-plastic spring is used instead: a
trial sticking force above the limit (mu_s after sticking, mu after sliding) slides at mu F_n
along the trial force.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.laws.columns import ENT, FTM, G1, MODE, SLIP, SLIPW, STICK, VSL
from fem.laws.shock_columns import (ANC, CN, CT, FDIR, FT, FTD, KN, KT, MU, MUS, SDIR,
                                    UNI)


@numba.njit(cache=True, nogil=True, inline="always")
def _pt(P, c, n0, n1, n2, q, s):
    """Entry (q, s) of the projector Pt on the directions where friction acts."""
    if P[c, UNI] > 0.5:
        return P[c, FDIR + q] * P[c, FDIR + s]
    nq = n0 if q == 0 else (n1 if q == 1 else n2)
    ns = n0 if s == 0 else (n1 if s == 1 else n2)
    return (1.0 if q == s else 0.0) - nq * ns


@numba.njit(cache=True, nogil=True, inline="always")
def _project(P, c, n0, n1, n2, v0, v1, v2):
    """Pt v (3 numbers)."""
    if P[c, UNI] > 0.5:
        t0, t1, t2 = P[c, FDIR], P[c, FDIR + 1], P[c, FDIR + 2]
        a = t0 * v0 + t1 * v1 + t2 * v2
        return a * t0, a * t1, a * t2
    a = n0 * v0 + n1 * v1 + n2 * v2
    return v0 - a * n0, v1 - a * n1, v2 - a * n2


@numba.njit(cache=True, nogil=True, inline="always")
def stuck(P, c, cv_new, fmag, stored, fplus):
    """The values of friction contact c sticking: its spring's force magnitude and stored
    energy, no slip, and its event function, the margin mu_s F_n - |f| to the limit."""
    cv_new[c, MODE] = STICK
    cv_new[c, FTM] = fmag
    cv_new[c, ENT] = stored
    cv_new[c, VSL] = 0.0
    cv_new[c, G1] = P[c, MUS] * fplus - fmag


@numba.njit(cache=True, nogil=True, inline="always")
def slide_direction(mode, f0, f1, f2, fmag, s0, s1, s2, v0, v1, v2, speed, follow):
    """(e, x) of a sliding friction contact: e the direction its friction force acts along
    over the step, x the sliding direction kept for the next. The law deciding (``mode`` < 0,
    return mapping): both along the trial force f (the committed direction s where f = 0).
    The mode imposed: e = s over the step, and x the sliding velocity's direction where the
    slide goes on along s (and ``follow``: not a unidirectional friction), else s."""
    if mode < 0:
        if fmag > 0.0:
            return f0 / fmag, f1 / fmag, f2 / fmag, f0 / fmag, f1 / fmag, f2 / fmag
        return s0, s1, s2, s0, s1, s2
    if follow and speed > 0.0 and v0 * s0 + v1 * s1 + v2 * s2 > 0.0:
        return s0, s1, s2, v0 / speed, v1 / speed, v2 / speed
    return s0, s1, s2, s0, s1, s2


@numba.njit(cache=True, nogil=True)
def tangential(P, c, b, o, d, dd, fn, n0, n1, n2, cv_old, cv_new, phi, Jd, Jv, jac, mode):
    """Friction of closed contact c (see the module docstring): adds its force to phi and its
    derivatives to Jd, Jv; writes the mode, anchor, sliding direction, slip rate, stored energy,
    damper force and event function G1 of cv_new. ``mode``: -1 the law decides (return
    mapping), STICK or SLIP imposed."""
    kt = P[c, KT]
    ct = P[c, CT]
    mu = P[c, MU]
    pos = fn > 0.0
    fplus = fn if pos else 0.0
    de0, de1, de2 = _project(P, c, n0, n1, n2, d[o] - cv_old[c, ANC], d[o + 1] - cv_old[c, ANC + 1],
                             d[o + 2] - cv_old[c, ANC + 2])
    vt0, vt1, vt2 = _project(P, c, n0, n1, n2, dd[o], dd[o + 1], dd[o + 2])
    f0, f1, f2 = kt * de0 + ct * vt0, kt * de1 + ct * vt1, kt * de2 + ct * vt2
    fmag = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    was_sliding = int(cv_old[c, MODE]) == SLIP
    if mode < 0:
        limit = (mu if was_sliding else P[c, MUS]) * fplus
        stick = fmag <= limit
    else:
        stick = mode == STICK
    if stick:
        phi[o] -= f0
        phi[o + 1] -= f1
        phi[o + 2] -= f2
        cv_new[c, FT] = -f0
        cv_new[c, FT + 1] = -f1
        cv_new[c, FT + 2] = -f2
        cv_new[c, FTD] = ct * vt0
        cv_new[c, FTD + 1] = ct * vt1
        cv_new[c, FTD + 2] = ct * vt2
        for q in range(3):
            cv_new[c, ANC + q] = cv_old[c, ANC + q]
        if jac:
            for q in range(3):
                for s in range(3):
                    pt = _pt(P, c, n0, n1, n2, q, s)
                    Jd[b, q, s] -= kt * pt
                    Jv[b, q, s] -= ct * pt
        stuck(P, c, cv_new, fmag, 0.5 * kt * (de0 * de0 + de1 * de1 + de2 * de2), fplus)
        return
    # sliding: the direction e of the slip, held over the step when the mode is imposed (the
    # direction of the sliding velocity is taken for the next step)
    s0, s1, s2 = cv_old[c, SDIR], cv_old[c, SDIR + 1], cv_old[c, SDIR + 2]
    vmag = math.sqrt(vt0 * vt0 + vt1 * vt1 + vt2 * vt2)
    e0, e1, e2, x0, x1, x2 = slide_direction(mode, f0, f1, f2, fmag, s0, s1, s2, vt0, vt1, vt2,
                                             vmag, P[c, UNI] < 0.5)
    force = mu * fplus
    slip_rate = e0 * vt0 + e1 * vt1 + e2 * vt2
    old_along = s0 * vt0 + s1 * vt1 + s2 * vt2
    u0, u1, u2 = force * e0, force * e1, force * e2
    work = (u0 * (de0 - u0 / kt) + u1 * (de1 - u1 / kt) + u2 * (de2 - u2 / kt))
    phi[o] -= u0
    phi[o + 1] -= u1
    phi[o + 2] -= u2
    cv_new[c, FT] = -u0
    cv_new[c, FT + 1] = -u1
    cv_new[c, FT + 2] = -u2
    cv_new[c, SDIR] = x0
    cv_new[c, SDIR + 1] = x1
    cv_new[c, SDIR + 2] = x2
    cv_new[c, ANC] = d[o] - u0 / kt
    cv_new[c, ANC + 1] = d[o + 1] - u1 / kt
    cv_new[c, ANC + 2] = d[o + 2] - u2 / kt
    for q in range(3):
        cv_new[c, FTD + q] = 0.0
    cv_new[c, MODE] = SLIP
    cv_new[c, FTM] = force
    cv_new[c, ENT] = 0.5 * force * force / kt
    cv_new[c, SLIPW] = work
    cv_new[c, VSL] = slip_rate if slip_rate > 0.0 else 0.0
    cv_new[c, G1] = old_along if mode >= 0 else slip_rate
    if not jac:
        return
    # derivatives: F_n = k p + c p' moves with d and d' along n; the direction turns with the
    # trial force (return mapping)
    dmu = mu if pos else 0.0
    from_kn = P[c, KN]
    from_cn = P[c, CN]
    ratio = force / fmag if (mode < 0 and fmag > 0.0) else 0.0
    for q in range(3):
        eq = e0 if q == 0 else (e1 if q == 1 else e2)
        for s in range(3):
            ns = n0 if s == 0 else (n1 if s == 1 else n2)
            proj = 0.0
            if ratio != 0.0:
                for t in range(3):
                    et = e0 if t == 0 else (e1 if t == 1 else e2)
                    proj += ((1.0 if q == t else 0.0) - eq * et) * _pt(P, c, n0, n1, n2, t, s)
            Jd[b, q, s] -= dmu * eq * from_kn * ns + ratio * kt * proj
            Jv[b, q, s] -= dmu * eq * from_cn * ns + ratio * ct * proj


def stick_anchor(P, c: int, cv: np.ndarray, d: np.ndarray, o: int):
    """At the end of a slide: the anchor that makes the spring hold the friction force the
    contact had (FT), so that the force does not jump."""
    kt = P[c, KT]
    cv[c, ANC:ANC + 3] = d[o:o + 3] + cv[c, FT:FT + 3] / kt
    cv[c, VSL] = 0.0
