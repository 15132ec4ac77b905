"""The contact law of shock links in physical space, compiled: normal penalty force with
damping and the two release rules, plane or circular obstacle, and Coulomb friction by an
elastic-plastic tangential spring, with the derivatives the Newton iteration of
``fem.integrators.newmark_links`` needs.

A contact's parameters are one row of the array P (columns below); its values at the start
and at the end of a step are rows of CV (columns below).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# columns of the contact parameter array P (nc, NP)
BLK, KIND, DIR, GAP, KN, CN, REL, MU, KT, CT = 0, 1, 2, 5, 6, 7, 8, 9, 10, 11
NP = 12
PLANE, CIRCLE = 0.0, 1.0
RELEASE_FORCE, RELEASE_GAP = 0.0, 1.0
# columns of the contact values array CV (2, nc, NV): state at the start (cur) and end (nxt)
# ACT closed (1/0), FN normal force, PEN penetration, PDOT its rate, FTM friction force
# magnitude, FDN normal damper force, ENN / ENT normal / tangential stored energy, SLIP slip
# work of the step, FTD tangential damper force (3), ANC anchor of the tangential spring (3)
ACT, FN, PEN, PDOT, FTM, FDN, ENN, ENT, SLIP, FTD, ANC = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12
NV = 15

# --------------------------------------------------------------------------- contact law

@numba.njit(cache=True, nogil=True)
def contact_law(P, d, dd, cv_old, cv_new, phi, Jd, Jv, flags):
    """Forces of every contact at link displacements d and rates dd (3 m,).

    Writes phi (3 m,) the force on each link's first node, Jd and Jv (m, 3, 3) its derivatives
    with respect to d and dd, and the contact values cv_new (nc, NV); cv_old gives the
    anchors of the tangential springs at the start of the step. flags[c] < 0 lets the law
    decide whether contact c is closed; 0 or 1 imposes it open or closed.
    """
    phi[:] = 0.0
    Jd[:] = 0.0
    Jv[:] = 0.0
    nc = P.shape[0]
    n = np.empty(3)
    r = np.empty(3)
    Pt = np.empty((3, 3))
    Pa = np.empty((3, 3))
    delta = np.empty(3)
    ftr = np.empty(3)
    for c in range(nc):
        b = int(P[c, BLK])
        o = 3 * b
        k = P[c, KN]
        cc = P[c, CN]
        rho = 0.0
        if P[c, KIND] == PLANE:
            p = -P[c, GAP]
            pd = 0.0
            for q in range(3):
                n[q] = P[c, DIR + q]
                p += n[q] * d[o + q]
                pd += n[q] * dd[o + q]
        else:
            ad = 0.0
            for q in range(3):
                ad += P[c, DIR + q] * d[o + q]
            rho2 = 0.0
            for q in range(3):
                r[q] = d[o + q] - ad * P[c, DIR + q]
                rho2 += r[q] * r[q]
            rho = math.sqrt(rho2)
            pd = 0.0
            for q in range(3):
                n[q] = r[q] / rho if rho > 0.0 else 0.0
                pd += n[q] * dd[o + q]
            p = rho - P[c, GAP]
        fn = k * p + cc * pd
        if flags[c] < 0.0:
            closed = p > 0.0 and (P[c, REL] == RELEASE_GAP or fn > 0.0)
        else:
            closed = flags[c] > 0.5
        cv_new[c, ACT] = 1.0 if closed else 0.0
        cv_new[c, PEN] = p
        cv_new[c, PDOT] = pd
        cv_new[c, SLIP] = 0.0
        for q in range(3):
            cv_new[c, FTD + q] = 0.0
        if not closed:
            cv_new[c, FN] = 0.0
            cv_new[c, FTM] = 0.0
            cv_new[c, FDN] = 0.0
            cv_new[c, ENN] = 0.0
            cv_new[c, ENT] = 0.0
            for q in range(3):
                cv_new[c, ANC + q] = d[o + q]
            continue
        cv_new[c, FN] = fn
        cv_new[c, FDN] = cc * pd
        cv_new[c, ENN] = 0.5 * k * p * p
        for q in range(3):
            phi[o + q] -= fn * n[q]
            for s in range(3):
                Jd[b, q, s] -= k * n[q] * n[s]
                Jv[b, q, s] -= cc * n[q] * n[s]
        if P[c, KIND] == CIRCLE and rho > 0.0:
            # the normal turns with d: d n / d d = (I - a a^T - n n^T) / rho
            for q in range(3):
                for s in range(3):
                    Pa[q, s] = ((1.0 if q == s else 0.0) - P[c, DIR + q] * P[c, DIR + s]
                                - n[q] * n[s]) / rho
            for q in range(3):
                for s in range(3):
                    g = 0.0
                    for t in range(3):
                        g += Pa[s, t] * dd[o + t]
                    Jd[b, q, s] -= fn * Pa[q, s] + cc * n[q] * g
        mu = P[c, MU]
        if mu <= 0.0:
            cv_new[c, FTM] = 0.0
            cv_new[c, ENT] = 0.0
            for q in range(3):
                cv_new[c, ANC + q] = cv_old[c, ANC + q]
            continue
        kt = P[c, KT]
        ct = P[c, CT]
        for q in range(3):
            for s in range(3):
                Pt[q, s] = (1.0 if q == s else 0.0) - n[q] * n[s]
        fmag2 = 0.0
        for q in range(3):
            dq = 0.0
            vq = 0.0
            for s in range(3):
                dq += Pt[q, s] * (d[o + s] - cv_old[c, ANC + s])
                vq += Pt[q, s] * dd[o + s]
            delta[q] = dq
            ftr[q] = kt * dq + ct * vq
            fmag2 += ftr[q] * ftr[q]
        fmag = math.sqrt(fmag2)
        limit = mu * fn if fn > 0.0 else 0.0
        if fmag <= limit:
            # stick: the spring and the damper carry the tangential force
            for q in range(3):
                phi[o + q] -= ftr[q]
                cv_new[c, FTD + q] = ftr[q] - kt * delta[q]
                cv_new[c, ANC + q] = cv_old[c, ANC + q]
                for s in range(3):
                    Jd[b, q, s] -= kt * Pt[q, s]
                    Jv[b, q, s] -= ct * Pt[q, s]
            cv_new[c, FTM] = fmag
            cv_new[c, ENT] = 0.5 * kt * (delta[0] ** 2 + delta[1] ** 2 + delta[2] ** 2)
        else:
            # slip: mu f_n along the trial force; the anchor follows
            slip = 0.0
            et = 0.0
            for q in range(3):
                tq = ftr[q] / fmag
                phi[o + q] -= limit * tq
                dnew = limit * tq / kt
                cv_new[c, ANC + q] = d[o + q] - dnew
                slip += limit * tq * (delta[q] - dnew)
                et += dnew * dnew
            cv_new[c, SLIP] = slip
            cv_new[c, FTM] = limit
            cv_new[c, ENT] = 0.5 * kt * et
            ratio = limit / fmag
            dmu = mu if fn > 0.0 else 0.0
            for q in range(3):
                tq = ftr[q] / fmag
                for s in range(3):
                    proj = 0.0
                    for t in range(3):
                        tt = ftr[t] / fmag
                        proj += ((1.0 if q == t else 0.0) - tq * tt) * Pt[t, s]
                    Jd[b, q, s] -= dmu * tq * k * n[s] + ratio * kt * proj
                    Jv[b, q, s] -= dmu * tq * cc * n[s] + ratio * ct * proj
