"""The anti-seismic device of isolator links (``fem.laws.isolator``, ``device =
"anti_seismic"``): code_aster's ANTI_SISM, a nonlinear spring in parallel with a dashpot
whose force grows with the elongation, along a direction, without internal state.

The link acts on the elongation d = n . x of its relative translation x (``fem.links.
geometry``: one node, x is the node's translation; two nodes, x = u_first - u_second) along
the unit direction n, at the rate v = d'. The force it carries, positive in tension (the force
on the structure, on the first node, is -F n, code_aster's F_dispo = -F), is

    F = K2 d + (K1 - K2) d / sqrt(1 + (K1 d / F_y)^2) + C sgn(v) |v d / d_max|^alpha:

an elastic part of initial stiffness K1 that tends to K2 d + (K1 - K2) F_y / K1 sgn(d) beyond
the force F_y (a smooth yield without plastic deformation: it gives back what it takes), and a
dashpot of damping C whose force, a power alpha of the rate, grows with the elongation
(|d| / d_max)^alpha, d_max the elongation at which it carries C |v|^alpha.

The dashpot's slope in v, alpha C |v|^(alpha - 1) (|d| / d_max)^alpha, and in d, alpha C
|v|^alpha |d|^(alpha - 1) / d_max^alpha, are infinite at v = 0 and at d = 0 for alpha < 1: so
that the Newton iterations of the implicit schemes keep a finite tangent, the rate factor
sgn(v) |v|^alpha is linear below the rate v_r (``linear_below``: v_r^(alpha - 1) v) and the
elongation factor (|d| / d_max)^alpha linear within d_r (``linear_within``:
(d_r / d_max)^alpha |d| / d_r), both continuous where they join the power law (as a damper's
force, ``fem.laws.damper``). The energy a cycle of amplitudes V and D dissipates differs from
the power law's by fractions of order (v_r / V)^(1 + alpha) and (d_r / D)^(1 + alpha).

It stores the elastic part's potential

    K2 d^2 / 2 + (K1 - K2) (F_y / K1)^2 (sqrt(1 + (K1 d / F_y)^2) - 1)

and dissipates the dashpot's work int F_c v dt over a step (Simpson's rule on the step's
cubic Hermite path of the elongation).
"""

from __future__ import annotations

import math

import numba

from fem.laws import damper
from fem.laws.axial import commit, motion
from fem.laws.columns import FTM, LAM, PDOT, PEN, VSL, own

#: the kind code of an anti-seismic device's contact (column KIND; the registry checks codes
#: are unique)
ANTI_SEISMIC = 11
#: its own columns: K1, K2, F_y, C, alpha, d_max, v_r and d_r; the direction n is the shared
#: DIR (3)
OWN = own(parameters=(1, 1, 1, 1, 1, 1, 1, 1))
K1, K2, YIELD, DAMPING, EXPONENT, MAX_ELONGATION, LINEAR_BELOW, LINEAR_WITHIN = OWN.P
#: value columns: the elongation (PEN) and its rate (PDOT), the force (FN), its elastic part
#: (LAM) and its dashpot's (FTM), the energy the dashpot dissipated since the start (VSL;
#: FTM and VSL, a friction force and a slip rate, are archived columns an axial law does not
#: otherwise use)
ELASTIC_FORCE, DASHPOT_FORCE, DISSIPATED = LAM, FTM, VSL


@numba.njit(cache=True, nogil=True)
def elastic(P, c, d):
    """(force, slope, stored energy) of the elastic part at the elongation d."""
    k1, k2, fy = P[c, K1], P[c, K2], P[c, YIELD]
    x = k1 * d / fy
    root = math.sqrt(1.0 + x * x)
    force = k2 * d + (k1 - k2) * d / root
    slope = k2 + (k1 - k2) / (root * root * root)
    # sqrt(1 + x^2) - 1 without cancellation
    stored = 0.5 * k2 * d * d + (k1 - k2) * (fy / k1) ** 2 * (x * x / (root + 1.0))
    return force, slope, stored


@numba.njit(cache=True, nogil=True)
def stretch_factor(P, c, d):
    """((|d| / d_max)^alpha, its slope in d), linear within d_r (module docstring)."""
    alpha, dmax, dr = P[c, EXPONENT], P[c, MAX_ELONGATION], P[c, LINEAR_WITHIN]
    a = abs(d)
    if a < dr:
        slope = (dr / dmax) ** alpha / dr
        return slope * a, (slope if d >= 0.0 else -slope)
    value = (a / dmax) ** alpha
    slope = alpha * value / a
    return value, (slope if d > 0.0 else -slope)


@numba.njit(cache=True, nogil=True)
def dashpot(P, c, d, v):
    """(F_c, dF_c/dd, dF_c/dv) of the dashpot at the elongation d and rate v."""
    cd = P[c, DAMPING]
    psi, dpsi = stretch_factor(P, c, d)
    phi, dphi = damper.force(1.0, P[c, EXPONENT], P[c, LINEAR_BELOW], v)
    return cd * phi * psi, cd * phi * dpsi, cd * dphi * psi


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The anti-seismic device c at the link displacements d and rates dd (3 at o), h after
    its committed values cv_old: force on the first node into phi, its derivatives into Jd,
    Jv (block o // 3) when ``jac``, values into cv_new."""
    u1, v1 = motion(P, c, o, d, dd)
    fe, ke, stored = elastic(P, c, u1)
    fc, dc_du, dc_dv = dashpot(P, c, u1, v1)
    cd, alpha, vr = P[c, DAMPING], P[c, EXPONENT], P[c, LINEAR_BELOW]
    # the rate's slope for Newton's method: the damper's choice between the tangent and the
    # chord of a concave power (``fem.laws.damper.newton_slope``), scaled by the elongation's
    # factor
    psi = stretch_factor(P, c, u1)[0]
    if cd > 0.0 and psi > 0.0:
        dc_dv = damper.newton_slope(cd * psi, alpha, vr, v1, cv_new[c, PDOT])
    lost = 0.0
    if h > 0.0 and cd > 0.0:
        # Simpson's rule on F_c v along the step's cubic Hermite path
        u0, v0 = cv_old[c, PEN], cv_old[c, PDOT]
        um = 0.5 * (u0 + u1) + 0.125 * h * (v0 - v1)
        vm = 1.5 * (u1 - u0) / h - 0.25 * (v0 + v1)
        f0 = dashpot(P, c, u0, v0)[0]
        fm = dashpot(P, c, um, vm)[0]
        lost = h * (f0 * v0 + 4.0 * fm * vm + fc * v1) / 6.0
    commit(P, c, o, u1, v1, fe + fc, ke + dc_du, dc_dv, stored, lost, cv_new, phi, Jd, Jv,
           jac)
    cv_new[c, ELASTIC_FORCE] = fe
    cv_new[c, DASHPOT_FORCE] = fc
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED] + lost
