"""What the laws acting along one direction share (Maxwell elements, dampers): the link's
elongation and rate along the direction, and the commit of a trial into the value row, the
forces and their derivatives."""

from __future__ import annotations

import math

import numba

from fem.laws.columns import (ACT, DIR, ENN, ENT, FN, FTM, G0, G1, MODE, NRM, PDOT, PEN, SLIPW,
                              STICK, VSL)

#: the group attribute that names a link's force-deformation loop (the series of its
#: deformation and of its force), which ``fem post hysteresis`` draws
LOOP = ["elongation", "force"]


@numba.njit(cache=True, nogil=True, inline="always")
def motion(P, c, o, d, dd):
    """(u, u'): the elongation n . d of contact c's link and its rate."""
    n0, n1, n2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
    return (n0 * d[o] + n1 * d[o + 1] + n2 * d[o + 2],
            n0 * dd[o] + n1 * dd[o + 1] + n2 * dd[o + 2])


@numba.njit(cache=True, nogil=True, inline="always")
def commit(P, c, o, u, v, force, dfdu, dfdv, stored, lost, cv_new, phi, Jd, Jv, jac):
    """Contact c acting along its direction n (no events, always acting): its elongation u,
    rate v, force (tension positive: it pulls the first node back along -n) with its
    derivatives, the energy it stores and the energy it dissipated over the step into its
    value row; the force on the first node into phi (3 at o) and, when ``jac``, its
    derivatives with respect to the link's displacement and rate into Jd, Jv (block o // 3)."""
    cv_new[c, MODE] = STICK
    cv_new[c, ACT] = 1.0
    cv_new[c, G0] = 1.0
    cv_new[c, G1] = 1.0
    cv_new[c, PEN] = u
    cv_new[c, PDOT] = v
    cv_new[c, FN] = force
    cv_new[c, ENN] = stored
    cv_new[c, ENT] = 0.0
    cv_new[c, SLIPW] = lost
    cv_new[c, FTM] = 0.0
    cv_new[c, VSL] = 0.0
    for q in range(3):
        cv_new[c, NRM + q] = P[c, DIR + q]
        phi[o + q] -= force * P[c, DIR + q]
    if jac:
        # n n^T's entries, those of a direction's zero components left out (a link along an
        # axis of the model has one)
        b = o // 3
        for q in range(3):
            nq = P[c, DIR + q]
            if nq == 0.0:
                continue
            for s in range(3):
                ns = P[c, DIR + s]
                if ns != 0.0:
                    nn = nq * ns
                    Jd[b, q, s] -= dfdu * nn
                    Jv[b, q, s] -= dfdv * nn


# ------------------------------------------------------------------ the step's path
@numba.njit(cache=True, nogil=True, inline="always")
def hermite(theta, u0, u1, hv0, hv1):
    """(u(theta), du/du1, du/du1' / h) on the cubic Hermite path of a step."""
    t2 = theta * theta
    t3 = t2 * theta
    h01 = 3.0 * t2 - 2.0 * t3
    return ((1.0 - h01) * u0 + h01 * u1 + (t3 - 2.0 * t2 + theta) * hv0 + (t3 - t2) * hv1,
            h01, t3 - t2)


@numba.njit(cache=True, nogil=True, _nrt=False)
def turning_points(du, hv0, hv1):
    """The rate of the cubic Hermite path of a step, du/dtheta = a theta^2 + b theta + c
    (du = u1 - u0, hv0 = h u0', hv1 = h u1'), and the instants theta in (0, 1) where it changes
    sign: (a, b, c, count, first, second)."""
    a = 3.0 * (hv0 + hv1) - 6.0 * du
    b = 6.0 * du - 4.0 * hv0 - 2.0 * hv1
    cc = hv0
    r1 = r2 = math.nan
    if a == 0.0:
        if b != 0.0:
            r1 = -cc / b
    else:
        disc = b * b - 4.0 * a * cc
        if disc > 0.0:
            q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
            r1 = q / a
            if q != 0.0:
                r2 = cc / q
    count = 0
    first = second = 1.0
    for r in (r1, r2):
        if 0.0 < r < 1.0:
            if count == 0:
                first = r
            elif r < first:
                second = first
                first = r
            else:
                second = r
            count += 1
    return a, b, cc, count, first, second
