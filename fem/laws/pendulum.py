"""The friction pendulum bearing of isolator links (``fem.laws.isolator``, ``device =
"pendulum"``): a slider on a concave surface of radius R, with velocity-dependent Coulomb
friction in the horizontal plane, and a compression-only support along the vertical.

A link's relative translation d (``fem.links.geometry``: one node, the node's translation
against the ground; two nodes, the slider's (first node) against the concave plate's (second
node)) splits along the upward unit vertical a into w = a . d (up) and the horizontal
displacement u = d - (a . d) a (the plane normal to a). The surface is the paraboloid
w_s(u) = |u|^2 / (2 R), the sphere of radius R to second order in |u| / R; the slider
compresses it by

    p = |u|^2 / (2 R) - a . d        (m, > 0 while it bears),

and a stiff penalty spring k_v (``vertical_stiffness``) carries the vertical load N = k_v p
while p > 0 (N = 0 on uplift: no force at all then). The surface pushes the slider along
-grad p = a - u / R:

    force on the slider = N a - (N / R) u - f,

the vertical load N, the pendulum's restoring force (N / R) u in the horizontal plane, and
the friction force f. The potential of the first two is k_v p^2 / 2: the bearing stores it
(a slider that rises along the surface under a weight W gains W |u|^2 / (2 R), and the
period of small oscillations of a mass on it is 2 pi sqrt(R / g) whatever the mass).

Friction acts in the horizontal plane, Coulomb's law with the coefficient

    mu(v) = mu_fast - (mu_fast - mu_slow) exp(-a_v v)

at the sliding speed v = |u'| (``friction_slow``, ``friction_fast``, ``rate_parameter``;
constant with ``friction``). It is the shock law's friction (``fem.laws.friction``) with the
normal fixed along the vertical: a sticking slider is held by a stiff spring k_t
(``sticking_stiffness``) from an anchor, f = k_t (u - anchor) while |f| <= mu_slow N; a sliding
one feels f = mu(v) N e, e its sliding direction (the 2-D direction of its horizontal
velocity), the anchor following it so that the spring holds that force. The friction force
is a 2-D vector opposite to the 2-D sliding velocity: both horizontal directions are coupled.
The static coefficient is mu(0) = mu_slow, so Coulomb's law at rest (``fem.laws.stick_slip``)
decides a slider at rest with the bearing's own columns, which are the shock law's
(``fem.laws.shock_columns``) followed by the bearing's.

Modes and events: open (uplift) and closed, the normal function G0 = +-p (positive while the
mode holds: uplift and landing are located where p = 0); closed, sticking or sliding, the
friction function G1 = mu_slow N - |f| (sticking) or e . u' (sliding, the slider stops). With
``events = "step"`` the bearing decides its mode itself: closed while p > 0, and the return
mapping of the elastic-plastic friction spring.

It stores k_v p^2 / 2 (while it bears) and |f|^2 / (2 k_t) (the friction spring); friction
dissipates the work of f along the anchor's slip, by the trapezoidal rule on the force at
both ends of the step (exact for a change of mode at an instant, where the spring gives up
its energy).

A bearing is two contacts: the bearing (its law, its forces and events) and a record row
that it fills (its horizontal displacement and force along two horizontal axes e1, e2, for
the results: the archive keeps six values per contact), which carries no force.
"""

from __future__ import annotations

import math

import numba

from fem.laws import friction, shock, shock_columns
from fem.laws.columns import (ACT, BLK, DIR, ENN, ENT, FDN, FN, FTM, G0, G1, KIND, LAM, MODE,
                              NRM, OPEN, PDOT, PEN, SLIP, SLIPW, STICK, VSL, own)

#: the kind code of a pendulum bearing's contacts (column KIND; the registry checks codes
#: are unique)
PENDULUM = 10
#: its own columns: first the shock law's (vertical stiffness k_v as the normal stiffness KN,
#: no normal damper CN, the release rule REL, mu_slow as both the sliding and the static
#: coefficient MU and MUS, the sticking stiffness KT, no tangential damper CT, no friction
#: direction FDIR, UNI 0: friction in the whole horizontal plane), so that Coulomb's law at
#: rest and the shock law's handlers at instants read a bearing as they read a shock contact;
#: then the role of the row (BEARING or RECORD), the radius R, mu_fast, the rate parameter
#: a_v (s/m) and the two horizontal axes e1, e2 of the record. The shared DIR holds the
#: downward vertical n = -a (p grows along it, as a shock plane's penetration along its
#: normal). Values: the shock law's (tangential damper force, anchor, sliding direction,
#: friction force on the slider, 3 each)
OWN = own(parameters=(1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 3, 3), values=(3, 3, 3, 3))
(KN, CN, REL, MU, MUS, KT, CT, FDIR, UNI, ROLE, RADIUS, MU_FAST, RATE, E1, E2) = OWN.P
FTD, ANC, SDIR, FT = OWN.V
assert (KN, CN, REL, MU, MUS, KT, CT, FDIR, UNI) == shock_columns.OWN.P
assert (FTD, ANC, SDIR, FT) == shock_columns.OWN.V
#: roles of a bearing's two rows
BEARING, RECORD = 0.0, 1.0
#: value columns of the bearing row: the compression p (PEN) and its rate (PDOT), the
#: vertical load N (FN), the friction force's magnitude (FTM), the sliding speed (VSL), the
#: friction work since the start (LAM, archived); of the record row: the horizontal
#: displacement along e1 (PEN) and e2 (LAM), the horizontal force the bearing carries along
#: e1 (FN) and e2 (FTM), positive where it resists a positive displacement
COMPRESSION, LOAD, DISSIPATED = PEN, FN, LAM
RECORD_U1, RECORD_U2, RECORD_F1, RECORD_F2 = PEN, LAM, FN, FTM


@numba.njit(cache=True, nogil=True, inline="always")
def surface(P, c, x0, x1, x2, r0, r1, r2):
    """The bearing c at the link displacement (x0, x1, x2) and rate (r0, r1, r2): its
    compression p = |u|^2 / (2 R) + n . d (n = -a) and its rate, the horizontal displacement
    u (3) and its rate (3)."""
    n0, n1, n2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
    w = n0 * x0 + n1 * x1 + n2 * x2
    wr = n0 * r0 + n1 * r1 + n2 * r2
    u0, u1, u2 = x0 - w * n0, x1 - w * n1, x2 - w * n2
    q0, q1, q2 = r0 - wr * n0, r1 - wr * n1, r2 - wr * n2
    radius = P[c, RADIUS]
    p = 0.5 * (u0 * u0 + u1 * u1 + u2 * u2) / radius + w
    pd = (u0 * q0 + u1 * q1 + u2 * q2) / radius + wr
    return p, pd, u0, u1, u2, q0, q1, q2


@numba.njit(cache=True, nogil=True)
def normal_at(P, c, closed, x0, x1, x2, r0, r1, r2):
    """The normal event function G0 of bearing c at the link displacement (x0, x1, x2) and
    rate (r0, r1, r2): +-p, positive while its mode (closed or uplifted) holds."""
    p = surface(P, c, x0, x1, x2, r0, r1, r2)[0]
    return p if closed else -p


@numba.njit(cache=True, nogil=True, inline="always")
def coefficient(P, c, v):
    """(mu(v), dmu/dv) at the sliding speed v >= 0 (module docstring)."""
    slow, fast, rate = P[c, MU], P[c, MU_FAST], P[c, RATE]
    if rate == 0.0 or fast == slow:
        return slow, 0.0
    e = math.exp(-rate * v)
    return fast - (fast - slow) * e, rate * (fast - slow) * e


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    """The bearing c at the link displacements d and rates dd (3 at o), h after its
    committed values cv_old: its force on the slider into phi and, with ``jac``, the
    derivatives into Jd, Jv (block o // 3); its values, and those of its record row c + 1,
    into cv_new. ``flags[c] < 0``: the law chooses the mode (closed while p > 0, friction by
    return mapping); otherwise the mode ``flags[c]`` holds over the step."""
    b = o // 3
    n0, n1, n2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
    radius = P[c, RADIUS]
    p, pd, u0, u1, u2, q0, q1, q2 = surface(P, c, d[o], d[o + 1], d[o + 2], dd[o], dd[o + 1],
                                            dd[o + 2])
    shock.normal_values(cv_new, c, p, pd, n0, n1, n2)
    cv_new[c, FDN] = 0.0
    for q in range(3):
        cv_new[c, FTD + q] = 0.0
        cv_new[c, FT + q] = 0.0
        cv_new[c, SDIR + q] = cv_old[c, SDIR + q]
    if flags[c] < 0.0:
        closed = p > 0.0
    else:
        closed = flags[c] > 0.5
    cv_new[c, ACT] = 1.0 if closed else 0.0
    cv_new[c, G0] = p if closed else -p
    cv_new[c, G1] = 1.0
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED]
    if not closed:
        cv_new[c, MODE] = OPEN
        cv_new[c, FN] = 0.0
        cv_new[c, ENN] = 0.0
        for q in range(3):
            cv_new[c, ANC + q] = d[o + q]
        _record(P, c, d, dd, o, cv_new, 0.0, 0.0, 0.0)
        return
    kv = P[c, KN]
    load = kv * p
    cv_new[c, FN] = load
    cv_new[c, ENN] = 0.5 * kv * p * p if p > 0.0 else 0.0
    # the surface's force -N grad p, grad p = u / R + n
    g0, g1, g2 = u0 / radius + n0, u1 / radius + n1, u2 / radius + n2
    phi[o] -= load * g0
    phi[o + 1] -= load * g1
    phi[o + 2] -= load * g2
    if jac:
        g = (g0, g1, g2)
        nn = (n0, n1, n2)
        for q in range(3):
            for s in range(3):
                ph = (1.0 if q == s else 0.0) - nn[q] * nn[s]
                Jd[b, q, s] -= kv * g[q] * g[s] + load / radius * ph
    # the horizontal force the bearing carries (resisting the slider's displacement)
    r0, r1, r2 = load * u0 / radius, load * u1 / radius, load * u2 / radius
    if P[c, MU] <= 0.0:
        cv_new[c, MODE] = STICK
        for q in range(3):
            cv_new[c, ANC + q] = cv_old[c, ANC + q]
        _record(P, c, d, dd, o, cv_new, r0, r1, r2)
        return
    mode = -1 if flags[c] < 0.0 else int(flags[c])
    _friction(P, c, b, o, d, dd, load, g0, g1, g2, q0, q1, q2, cv_old, cv_new, phi, Jd, Jv,
              jac, mode)
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED] + cv_new[c, SLIPW]
    _record(P, c, d, dd, o, cv_new, r0 - cv_new[c, FT], r1 - cv_new[c, FT + 1],
            r2 - cv_new[c, FT + 2])


@numba.njit(cache=True, nogil=True)
def _friction(P, c, b, o, d, dd, load, g0, g1, g2, v0, v1, v2, cv_old, cv_new, phi, Jd, Jv,
              jac, mode):
    """Friction of closed bearing c in the horizontal plane (module docstring): its force on
    phi and derivatives on Jd, Jv; the mode, anchor, sliding direction, friction force,
    sliding speed, spring energy, the step's friction work and event function G1 into
    cv_new. (v0, v1, v2): the horizontal velocity; (g0, g1, g2): grad p, along which the
    vertical load grows by k_v per metre. ``mode``: -1 the law decides (return mapping),
    STICK or SLIP imposed."""
    n0, n1, n2 = P[c, DIR], P[c, DIR + 1], P[c, DIR + 2]
    kt = P[c, KT]
    pos = load > 0.0
    fplus = load if pos else 0.0
    x0, x1, x2 = d[o] - cv_old[c, ANC], d[o + 1] - cv_old[c, ANC + 1], d[o + 2] - cv_old[c, ANC + 2]
    a = n0 * x0 + n1 * x1 + n2 * x2
    de0, de1, de2 = x0 - a * n0, x1 - a * n1, x2 - a * n2
    f0, f1, f2 = kt * de0, kt * de1, kt * de2
    fmag = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    speed = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    mu, dmu = coefficient(P, c, speed)
    was_sliding = int(cv_old[c, MODE]) == SLIP
    if mode < 0:
        limit = (mu if was_sliding else P[c, MUS]) * fplus
        stick = fmag <= limit
    else:
        stick = mode == STICK
    nn = (n0, n1, n2)
    if stick:
        phi[o] -= f0
        phi[o + 1] -= f1
        phi[o + 2] -= f2
        cv_new[c, FT] = -f0
        cv_new[c, FT + 1] = -f1
        cv_new[c, FT + 2] = -f2
        for q in range(3):
            cv_new[c, ANC + q] = cv_old[c, ANC + q]
        if jac:
            for q in range(3):
                for s in range(3):
                    Jd[b, q, s] -= kt * ((1.0 if q == s else 0.0) - nn[q] * nn[s])
        friction.stuck(P, c, cv_new, fmag, 0.5 * kt * (de0 * de0 + de1 * de1 + de2 * de2),
                       fplus)
        return
    s0, s1, s2 = cv_old[c, SDIR], cv_old[c, SDIR + 1], cv_old[c, SDIR + 2]
    # return mapping along the trial force, or held over the step (the direction of the
    # sliding velocity taken for the next)
    e0, e1, e2, y0, y1, y2 = friction.slide_direction(mode, f0, f1, f2, fmag, s0, s1, s2, v0,
                                                      v1, v2, speed, True)
    force = mu * fplus
    w0, w1, w2 = force * e0, force * e1, force * e2
    phi[o] -= w0
    phi[o + 1] -= w1
    phi[o + 2] -= w2
    # the work of the friction force along the anchor's slip, by the trapezoidal rule on the
    # force at both ends of the step (the committed one is -FT of the committed row)
    work = 0.0
    for q in range(3):
        anchor = d[o + q] - (w0 if q == 0 else (w1 if q == 1 else w2)) / kt
        wq = w0 if q == 0 else (w1 if q == 1 else w2)
        work += 0.5 * (wq - cv_old[c, FT + q]) * (anchor - cv_old[c, ANC + q])
        cv_new[c, ANC + q] = anchor
    cv_new[c, FT] = -w0
    cv_new[c, FT + 1] = -w1
    cv_new[c, FT + 2] = -w2
    cv_new[c, SDIR] = y0
    cv_new[c, SDIR + 1] = y1
    cv_new[c, SDIR + 2] = y2
    cv_new[c, MODE] = SLIP
    cv_new[c, FTM] = force
    cv_new[c, ENT] = 0.5 * force * force / kt
    cv_new[c, SLIPW] = work
    cv_new[c, VSL] = speed
    slip_rate = e0 * v0 + e1 * v1 + e2 * v2
    cv_new[c, G1] = slip_rate
    if not jac:
        return
    # derivatives: N grows by k_v along grad p; mu with the speed |u'|; the direction turns
    # with the trial force (return mapping)
    kv = P[c, KN] if pos else 0.0
    ratio = force / fmag if (mode < 0 and fmag > 0.0) else 0.0
    g = (g0, g1, g2)
    e = (e0, e1, e2)
    vhat = (v0 / speed, v1 / speed, v2 / speed) if speed > 0.0 else (0.0, 0.0, 0.0)
    for q in range(3):
        for s in range(3):
            proj = 0.0
            if ratio != 0.0:
                for t in range(3):
                    pts = (1.0 if t == s else 0.0) - nn[t] * nn[s]
                    proj += ((1.0 if q == t else 0.0) - e[q] * e[t]) * pts
            Jd[b, q, s] -= mu * kv * e[q] * g[s] + ratio * kt * proj
            Jv[b, q, s] -= fplus * dmu * e[q] * vhat[s]


@numba.njit(cache=True, nogil=True, inline="always")
def _record(P, c, d, dd, o, cv_new, r0, r1, r2):
    """Fill the record row c + 1 of bearing c: the horizontal displacement along e1 and e2,
    its rate along e1, and the horizontal force the bearing carries (r0, r1, r2) along
    both."""
    r = c + 1
    if r >= P.shape[0] or int(P[r, KIND]) != PENDULUM or P[r, ROLE] != RECORD \
            or P[r, BLK] != P[c, BLK]:
        return
    a0, a1, a2 = P[r, E1], P[r, E1 + 1], P[r, E1 + 2]
    b0, b1, b2 = P[r, E2], P[r, E2 + 1], P[r, E2 + 2]
    cv_new[r, MODE] = OPEN
    cv_new[r, ACT] = 0.0
    cv_new[r, G0] = 1.0
    cv_new[r, G1] = 1.0
    cv_new[r, RECORD_U1] = a0 * d[o] + a1 * d[o + 1] + a2 * d[o + 2]
    cv_new[r, PDOT] = a0 * dd[o] + a1 * dd[o + 1] + a2 * dd[o + 2]
    cv_new[r, RECORD_U2] = b0 * d[o] + b1 * d[o + 1] + b2 * d[o + 2]
    cv_new[r, RECORD_F1] = a0 * r0 + a1 * r1 + a2 * r2
    cv_new[r, RECORD_F2] = b0 * r0 + b1 * r1 + b2 * r2
    cv_new[r, VSL] = 0.0
    cv_new[r, ENN] = 0.0
    cv_new[r, ENT] = 0.0
    cv_new[r, SLIPW] = 0.0
    cv_new[r, FDN] = 0.0
    cv_new[r, NRM] = a0
    cv_new[r, NRM + 1] = a1
    cv_new[r, NRM + 2] = a2
