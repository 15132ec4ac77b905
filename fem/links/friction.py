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

from fem.links.columns import (ANC, CN, CT, ENT, FDIR, FT, FTD, FTM, G1, KN, KT, MODE, MU, MUS,
                               SDIR, SLIP, SLIPW, STICK, UNI, VSL)


@numba.njit(cache=True, nogil=True)
def _projector(P, c, n0, n1, n2, Pt):
    """Pt (3, 3): the directions where friction acts."""
    if P[c, UNI] > 0.5:
        t = (P[c, FDIR], P[c, FDIR + 1], P[c, FDIR + 2])
        for q in range(3):
            for s in range(3):
                Pt[q, s] = t[q] * t[s]
        return
    n = (n0, n1, n2)
    for q in range(3):
        for s in range(3):
            Pt[q, s] = (1.0 if q == s else 0.0) - n[q] * n[s]


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
    Pt = np.empty((3, 3))
    _projector(P, c, n0, n1, n2, Pt)
    delta = np.empty(3)
    vt = np.empty(3)
    ftr = np.empty(3)
    f2 = 0.0
    for q in range(3):
        dq = 0.0
        vq = 0.0
        for s in range(3):
            dq += Pt[q, s] * (d[o + s] - cv_old[c, ANC + s])
            vq += Pt[q, s] * dd[o + s]
        delta[q] = dq
        vt[q] = vq
        ftr[q] = kt * dq + ct * vq
        f2 += ftr[q] * ftr[q]
    fmag = math.sqrt(f2)
    was_sliding = int(cv_old[c, MODE]) == SLIP
    if mode < 0:
        limit = (mu if was_sliding else P[c, MUS]) * fplus
        stick = fmag <= limit
    else:
        stick = mode == STICK
    if stick:
        for q in range(3):
            phi[o + q] -= ftr[q]
            cv_new[c, FT + q] = -ftr[q]
            cv_new[c, FTD + q] = ct * vt[q]
            cv_new[c, ANC + q] = cv_old[c, ANC + q]
            if jac:
                for s in range(3):
                    Jd[b, q, s] -= kt * Pt[q, s]
                    Jv[b, q, s] -= ct * Pt[q, s]
        cv_new[c, MODE] = STICK
        cv_new[c, FTM] = fmag
        cv_new[c, ENT] = 0.5 * kt * (delta[0] ** 2 + delta[1] ** 2 + delta[2] ** 2)
        cv_new[c, VSL] = 0.0
        cv_new[c, G1] = P[c, MUS] * fplus - fmag
        return
    # sliding: the direction e of the slip, held over the step when the mode is imposed (the
    # direction of the sliding velocity is taken for the next step)
    e = np.empty(3)
    nxt = np.empty(3)
    if mode < 0:
        # return mapping: along the trial force
        for q in range(3):
            e[q] = ftr[q] / fmag if fmag > 0.0 else cv_old[c, SDIR + q]
            nxt[q] = e[q]
    else:
        vmag = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
        along = (vt[0] * cv_old[c, SDIR] + vt[1] * cv_old[c, SDIR + 1]
                 + vt[2] * cv_old[c, SDIR + 2])
        for q in range(3):
            e[q] = cv_old[c, SDIR + q]
            nxt[q] = vt[q] / vmag if (P[c, UNI] < 0.5 and vmag > 0.0 and along > 0.0) else e[q]
    force = mu * fplus
    slip_rate = 0.0
    old_along = 0.0
    work = 0.0
    for q in range(3):
        phi[o + q] -= force * e[q]
        cv_new[c, FT + q] = -force * e[q]
        cv_new[c, FTD + q] = 0.0
        cv_new[c, SDIR + q] = nxt[q]
        anchor = d[o + q] - force * e[q] / kt
        cv_new[c, ANC + q] = anchor
        slip_rate += e[q] * vt[q]
        old_along += cv_old[c, SDIR + q] * vt[q]
        work += force * e[q] * (delta[q] - force * e[q] / kt)
    cv_new[c, MODE] = SLIP
    cv_new[c, FTM] = force
    cv_new[c, ENT] = 0.5 * force * force / kt
    cv_new[c, SLIPW] = work
    cv_new[c, VSL] = slip_rate if slip_rate > 0.0 else 0.0
    cv_new[c, G1] = old_along if mode >= 0 else slip_rate
    if not jac:
        return
    # derivatives: F_n = k p + c p' moves with d and d' along n; the direction turns with the
    # trial force (return mapping) or with the sliding velocity
    dmu = mu if pos else 0.0
    n = (n0, n1, n2)
    from_kn = P[c, KN]
    from_cn = P[c, CN]
    if mode < 0:
        ratio = force / fmag if fmag > 0.0 else 0.0
        for q in range(3):
            for s in range(3):
                proj = 0.0
                for t in range(3):
                    proj += ((1.0 if q == t else 0.0) - e[q] * e[t]) * Pt[t, s]
                Jd[b, q, s] -= dmu * e[q] * from_kn * n[s] + ratio * kt * proj
                Jv[b, q, s] -= dmu * e[q] * from_cn * n[s] + ratio * ct * proj
        return
    for q in range(3):
        for s in range(3):
            Jd[b, q, s] -= dmu * e[q] * from_kn * n[s]
            Jv[b, q, s] -= dmu * e[q] * from_cn * n[s]


def stick_anchor(P, c: int, cv: np.ndarray, d: np.ndarray, o: int):
    """At the end of a slide: the anchor that makes the spring hold the friction force the
    contact had (FT), so that the force does not jump."""
    kt = P[c, KT]
    cv[c, ANC:ANC + 3] = d[o:o + 3] + cv[c, FT:FT + 3] / kt
    cv[c, VSL] = 0.0
