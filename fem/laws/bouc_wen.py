"""Bouc-Wen links: a smooth hysteretic spring along a direction, with Baber and Wen's
degradation.

The link acts on the elongation u = n . d of its relative translation d (``fem.links.geometry``:
one node, d is the node's translation; two nodes, d = u_first - u_second) along the unit
direction n. Its force, positive in tension, is

    F = alpha k0 u + (1 - alpha) k0 z,

and it pulls the first node back along -n (the second along +n). The hysteretic variable z (m)
and the hysteretic energy e (J) follow

    z' = (A u' - nu (beta |u'| |z|^(n-1) z + gamma u' |z|^n)) / eta,
    e' = (1 - alpha) k0 z u',
    A = A0 - delta_A e,  nu = 1 + delta_nu e,  eta = 1 + delta_eta e.

Both rates are u' times a function of (z, e) and of the sign of u': the law is rate
independent, z and e depend on the path of u and not on its timing. With -beta <= gamma <= beta
and beta + gamma > 0, |z| never exceeds its bound z_b = (A0 / (beta + gamma))^(1/n): at |z| =
z_b, where A <= A0 and nu >= 1 as long as e >= 0, z does not move away from 0, whichever way u
moves.

The local integration. A step carries (z, e) from the committed row along the step's cubic
Hermite path of u between the committed (u0, u0') and the trial (u1, u1') (h = 0: the straight
path from u0 to u1, taken in no time: the rate-independent law takes a jump of u as the
monotonic path it is). The path is cut at its turning points (the roots in (0, 1) of its
rate, a quadratic) into monotone pieces; on each, u is the independent variable,

    dz/du = G(z, e) = (A - nu (beta s |z|^(n-1) z + gamma |z|^n)) / eta,
    de/du = (1 - alpha) k0 z

(s the sign of u' on the piece), integrated by the classical Runge-Kutta method of order 4 in
sub-steps of length STEP_FRACTION / L, L a bound of the rates of the system at the sub-step's
start (|dG/dz| over |z| <= z_b, and the coupling through e), so that each piece costs L |du| /
STEP_FRACTION sub-steps. A sub-step where z changes sign is cut where z = 0 (|z|^n and
|z|^(n-1) z are not smooth there; the cut point is found by Newton's method on the sub-step's
length; for a non-integer n the sub-steps near z = 0 are also shortened in proportion to |z|,
GRADING). The sub-steps' lengths are continuous functions of the state, so that the result is
a continuous function of (u1, u1'), as the implicit schemes' Newton iterations need. The law
fails, writing NaN into the force (which stops the run with a message naming the link, the
time and ``FAILURE``; with nothing moving with the link, the check of the results reports its
force not finite), rather than return an inaccurate value, when:

* the path needs more than MAX_SUBSTEPS sub-steps;
* the estimate of a sub-step's error (its difference with the embedded third-order solution of
  the same stages and the slope at its end) exceeds ESTIMATE_TOLERANCE z_b;
* |z| leaves its bound z_b (by more than BOUND_SLACK of it);
* A, nu or eta reach zero or below (a strong degradation, delta_A (1 - alpha) k0 z_b^2 of
  order 1 or more, drives A to zero within a loading; under a milder one A decays towards
  zero without reaching it), or the state is not finite.

The sensitivities of (z1, e1) to u1 and u1' are integrated alongside (the variational equation
of each piece, and at each end of a piece the jump f . dU/dp of the flow, U the piece's end, a
turning point u(theta) of the path (dU/du1 = h01(theta), dU/du1' = h h11(theta)) or u1): the
implicit schemes get dF/du1 = alpha k0 + (1 - alpha) k0 dz1/du1 and dF/du1' = (1 - alpha) k0
dz1/du1'.

It stores 1/2 alpha k0 u^2 + (1 - alpha) k0 z^2 / (2 A) (A at the row's state) and dissipates,
over a step, int F u' dt minus the change of that, where int F u' dt = 1/2 alpha k0 (u1^2 -
u0^2) + e1 - e0 along the path, so that the link's own energy balance closes by construction.
At h = 0 nothing is dissipated: the state at an instant (at the start, the link loaded along
its virgin curve from u = z = e = 0 to its initial elongation) is where the balance starts.
"""

from __future__ import annotations

import math

import numba

from fem.laws.axial import LOOP, commit, hermite, motion, turning_points
from fem.laws.columns import (A_FN, A_FTM, A_LAM, A_PEN, A_VSL, EVOLVING, EVOLVING_RATE, FN,
                              FTM, PDOT, PEN, VSL, own)
from fem.laws.contract import Feature, Law, Sample, Series, along, axial_rows

#: the kind code of a Bouc-Wen contact (column KIND; the registry checks codes are unique)
#: why a failed local integration stops the run (the run's message names the link and the time)
FAILURE = ("the integration of its hysteretic variable along the step's path did not reach its "
           "accuracy within its sub-steps, or its variable left its bound, or a degradation "
           "drove A, nu or eta to zero (the Bouc-Wen section of docs/study_format.md)")
BOUC_WEN = 6
#: its own parameter columns: k0, alpha, the exponent n, beta, gamma, A0, delta_A, delta_nu,
#: delta_eta, and, computed by ``rows``, the bound z_b = (A0 / (beta + gamma))^(1/n) of |z|
#: and the shortest sub-step (m, ``shortest``); the direction n is the shared DIR (3). No own
#: value column: the law's state fits the shared ones (below)
OWN = own(parameters=(1,) * 11)
(K0, ALPHA, EXPONENT, BETA, GAMMA, A0, DELTA_A, DELTA_NU, DELTA_ETA, BOUND, SHORTEST) = OWN.P
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the hysteretic
#: variable z (EVOLVING, an evolving law's variable; archived as A_LAM) and its rate z' at the
#: row's values (EVOLVING_RATE), the stored energy (ENN) and the energy dissipated over the
#: step (SLIPW). The shared FTM and VSL (a friction force and a slip rate, which an axial law
#: has not) are archived columns, free for it: FTM holds the hysteretic energy e, VSL the
#: energy dissipated since the start (written after ``commit``, which zeroes both)
ELONGATION, RATE, FORCE, VARIABLE, HYSTERETIC, DISSIPATED = PEN, PDOT, FN, EVOLVING, FTM, VSL

#: a sub-step is STEP_FRACTION / L long, L the bound of the rates of (z, e) per unit of u: the
#: error of the order-4 method is then about 1e-10 of z_b per unit of L |du|
STEP_FRACTION = 0.01
#: for a non-integer n, |z|^n is not smooth at z = 0 (its derivatives of order above n are
#: infinite there): the sub-steps near z = 0 are at most GRADING |z| / A0 long (the length
#: over which z changes by a fraction GRADING of itself), and at least ``shortest``, where the
#: error of a sub-step from z = 0, about (A0 du / z_b)^(n + 1) z_b, is SMALLEST_ERROR z_b
GRADING = 0.25
SMALLEST_ERROR = 1e-12
#: the most sub-steps one evaluation takes (a path L |du| of 655 long)
MAX_SUBSTEPS = 65536
#: the largest estimate of a sub-step's error (the difference with the embedded third-order
#: solution), relative to z_b: some 70 times what the sub-step's length gives
ESTIMATE_TOLERANCE = 1e-8
#: how far beyond its bound z_b (relative) |z| may be found before the integration fails
BOUND_SLACK = 1e-6


@numba.njit(cache=True, nogil=True)
def rates(P, c, z, e, s):
    """(G, dG/dz, dG/de, ok): dz/du = G on a piece of the path where u moves with sign s, at
    (z, e); ok: A, nu and eta positive."""
    n, beta, gamma = P[c, EXPONENT], P[c, BETA], P[c, GAMMA]
    da, dnu, deta = P[c, DELTA_A], P[c, DELTA_NU], P[c, DELTA_ETA]
    a = P[c, A0] - da * e
    nu = 1.0 + dnu * e
    eta = 1.0 + deta * e
    m = abs(z)
    if n == 1.0:
        pw = 1.0
    elif n == 2.0:
        pw = m
    else:
        pw = m ** (n - 1.0)
    # the side of z: at z = 0 the one it moves to (G > 0 there: z moves with u)
    side = 1.0 if z > 0.0 else (-1.0 if z < 0.0 else s)
    phi = beta * s * pw * z + gamma * pw * m
    g = (a - nu * phi) / eta
    gz = -nu * n * pw * (beta * s + gamma * side) / eta
    ge = (-da - dnu * phi - deta * g) / eta
    return g, gz, ge, a > 0.0 and nu > 0.0 and eta > 0.0


@numba.njit(cache=True, nogil=True)
def _slope(P, c, s, hk, z, e, zu, eu, zv, ev):
    """The rates per unit of u of (z, e) and of their sensitivities (zu, eu) to u1 and (zv, ev)
    to u1' (the variational equation), and whether the state is admissible."""
    g, gz, ge, ok = rates(P, c, z, e, s)
    return g, hk * z, gz * zu + ge * eu, hk * zu, gz * zv + ge * ev, hk * zv, ok


@numba.njit(cache=True, nogil=True)
def _rk4(P, c, s, hk, du, y, k1):
    """One step of the classical Runge-Kutta method of signed length du from y (z, e, zu, eu,
    zv, ev) whose slope is k1: (the new y, the z slope of its last stage, ok)."""
    z, e, zu, eu, zv, ev = y
    a = 0.5 * du
    k2 = _slope(P, c, s, hk, z + a * k1[0], e + a * k1[1], zu + a * k1[2], eu + a * k1[3],
                zv + a * k1[4], ev + a * k1[5])
    k3 = _slope(P, c, s, hk, z + a * k2[0], e + a * k2[1], zu + a * k2[2], eu + a * k2[3],
                zv + a * k2[4], ev + a * k2[5])
    k4 = _slope(P, c, s, hk, z + du * k3[0], e + du * k3[1], zu + du * k3[2], eu + du * k3[3],
                zv + du * k3[4], ev + du * k3[5])
    w = du / 6.0
    y1 = (z + w * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]),
          e + w * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]),
          zu + w * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2]),
          eu + w * (k1[3] + 2.0 * k2[3] + 2.0 * k3[3] + k4[3]),
          zv + w * (k1[4] + 2.0 * k2[4] + 2.0 * k3[4] + k4[4]),
          ev + w * (k1[5] + 2.0 * k2[5] + 2.0 * k3[5] + k4[5]))
    return y1, k4[0], k2[6] and k3[6] and k4[6]


@numba.njit(cache=True, nogil=True)
def _rate_bound(P, c, e):
    """L (1/m): a bound of the rates per unit of u of (z, e) at the hysteretic energy e: the
    largest |dG/dz| over |z| <= z_b, n nu (beta + |gamma|) z_b^(n-1) / eta, plus the rate
    sqrt(|dG/de| (1 - alpha) k0) of the coupling through e. NaN where nu or eta is not
    positive."""
    beta, gamma, a0, bound = P[c, BETA], P[c, GAMMA], P[c, A0], P[c, BOUND]
    nu = 1.0 + P[c, DELTA_NU] * e
    eta = 1.0 + P[c, DELTA_ETA] * e
    if not (nu > 0.0 and eta > 0.0):
        return math.nan
    # (beta + |gamma|) z_b^n, z_b^n = A0 / (beta + gamma)
    phi = (beta + abs(gamma)) * a0 / (beta + gamma)
    lz = P[c, EXPONENT] * nu * phi / (bound * eta)
    g = (a0 + nu * phi) / eta
    ge = (P[c, DELTA_A] + P[c, DELTA_NU] * phi + P[c, DELTA_ETA] * g) / eta
    return lz + math.sqrt(ge * (1.0 - P[c, ALPHA]) * P[c, K0])


@numba.njit(cache=True, nogil=True)
def _to_zero(P, c, s, hk, du, y, k1):
    """The sub-step from y (slope k1) of signed length du along which z changes sign, cut
    where z = 0: (the state there, z set to 0; the length taken (> 0); the z slope of the last
    stage; ok). Newton's method on the length, kept within the bracket that bisection
    shrinks."""
    lo, hi = 0.0, abs(du)
    d = 1.0 if du > 0.0 else -1.0
    z0 = y[0]
    t = abs(z0 / k1[0]) if k1[0] != 0.0 else 0.5 * hi
    if not (lo < t < hi):
        t = 0.5 * hi
    tiny = 1e-15 * P[c, BOUND]
    yt, g4, ok = _rk4(P, c, s, hk, d * t, y, k1)
    for _ in range(100):
        zt = yt[0]
        if abs(zt) <= tiny or not ok or hi - lo <= 1e-15 * abs(du):
            break
        if zt * z0 > 0.0:
            lo = t
        else:
            hi = t
        slope = d * rates(P, c, zt, yt[1], s)[0]
        step = t - zt / slope if slope != 0.0 else -1.0
        t = step if lo < step < hi else 0.5 * (lo + hi)
        yt, g4, ok = _rk4(P, c, s, hk, d * t, y, k1)
    return (0.0, yt[1], yt[2], yt[3], yt[4], yt[5]), t, g4, ok


@numba.njit(cache=True, nogil=True)
def _piece(P, c, s, hk, length, y, count):
    """y carried over a monotone piece of the path, of signed length ``length`` in u, along
    which u moves with sign s, in sub-steps (module docstring): (y, sub-steps taken in all,
    ok)."""
    bound, n = P[c, BOUND], P[c, EXPONENT]
    rem = abs(length)
    d = 1.0 if length > 0.0 else -1.0
    k1 = _slope(P, c, s, hk, y[0], y[1], y[2], y[3], y[4], y[5])
    if not k1[6]:
        return y, count, False
    while rem > 0.0:
        if count >= MAX_SUBSTEPS:
            return y, count, False
        rate = _rate_bound(P, c, y[1])
        if not rate > 0.0:
            return y, count, False
        du = STEP_FRACTION / rate
        if n != math.floor(n):
            du = min(du, max(P[c, SHORTEST], GRADING * abs(y[0]) / P[c, A0]))
        du = d * min(du, rem)
        y1, g4, ok = _rk4(P, c, s, hk, du, y, k1)
        if ok and y[0] * y1[0] < 0.0:
            y1, taken, g4, ok = _to_zero(P, c, s, hk, du, y, k1)
            du = d * taken
        k1 = _slope(P, c, s, hk, y1[0], y1[1], y1[2], y1[3], y1[4], y1[5])
        estimate = abs(du) / 6.0 * abs(g4 - k1[0])
        if not (ok and k1[6] and estimate <= ESTIMATE_TOLERANCE * bound
                and abs(y1[0]) <= (1.0 + BOUND_SLACK) * bound and abs(y1[1]) < math.inf):
            return y1, count, False
        y = y1
        rem -= abs(du)
        count += 1
    return y, count, True


@numba.njit(cache=True, nogil=True)
def integrate(P, c, h, u0, v0, u1, v1, z0, e0):
    """(z1, e1, dz1/du1, dz1/du1', ok): z and e carried from (z0, e0) along the path of the
    step from (u0, u0') to (u1, u1') over h (module docstring)."""
    hk = (1.0 - P[c, ALPHA]) * P[c, K0]
    hv0, hv1 = h * v0, h * v1
    if h > 0.0:
        qa, qb, qc, count, first, second = turning_points(u1 - u0, hv0, hv1)
    else:
        qa = qb = qc = 0.0
        count, first, second = 0, 1.0, 1.0
    y = (z0, e0, 0.0, 0.0, 0.0, 0.0)
    ok = (abs(u0) < math.inf and abs(u1) < math.inf and abs(hv0) < math.inf
          and abs(hv1) < math.inf and abs(z0) < math.inf and abs(e0) < math.inf)
    start, ustart, pstart, vstart = 0.0, u0, 0.0, 0.0
    taken = 0
    for j in range(count + 1):
        if not ok:
            break
        if j < count:
            theta = first if j == 0 else second
            end, pend, vend = hermite(theta, u0, u1, hv0, hv1)
            vend *= h
        else:
            theta, end, pend, vend = 1.0, u1, 1.0, 0.0
        length = end - ustart
        mid = 0.5 * (start + theta)
        rate = (qa * mid + qb) * mid + qc if h > 0.0 else length
        s = 1.0 if rate > 0.0 else (-1.0 if rate < 0.0 else (-1.0 if length < 0.0 else 1.0))
        # the piece starts at a turning point that moves with (u1, u1'): the flow from there
        g = rates(P, c, y[0], y[1], s)[0]
        y = (y[0], y[1], y[2] - g * pstart, y[3] - hk * y[0] * pstart,
             y[4] - g * vstart, y[5] - hk * y[0] * vstart)
        y, taken, ok = _piece(P, c, s, hk, length, y, taken)
        # and ends at one (or at u1)
        g = rates(P, c, y[0], y[1], s)[0]
        y = (y[0], y[1], y[2] + g * pend, y[3] + hk * y[0] * pend,
             y[4] + g * vend, y[5] + hk * y[0] * vend)
        start, ustart, pstart, vstart = theta, end, pend, vend
    return y[0], y[1], y[2], y[4], ok


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The trial state of Bouc-Wen contact c after a step h from its committed values cv_old:
    force on the first node into phi (3 at o), derivatives into Jd, Jv (block o // 3) when
    ``jac``, values into cv_new; NaN in the force when the local integration fails."""
    k0, alpha, da = P[c, K0], P[c, ALPHA], P[c, DELTA_A]
    hk = (1.0 - alpha) * k0
    u1, v1 = motion(P, c, o, d, dd)
    u0, v0 = cv_old[c, ELONGATION], cv_old[c, RATE]
    z0, e0 = cv_old[c, VARIABLE], cv_old[c, HYSTERETIC]
    z1, e1, zu, zv, ok = integrate(P, c, h, u0, v0, u1, v1, z0, e0)
    a1 = P[c, A0] - da * e1
    force = math.nan
    dfdu = dfdv = stored = lost = zrate = math.nan
    if ok and a1 > 0.0:
        force = alpha * k0 * u1 + hk * z1
        dfdu = alpha * k0 + hk * zu
        dfdv = hk * zv
        held = hk * z1 * z1 / (2.0 * a1)
        stored = 0.5 * alpha * k0 * u1 * u1 + held
        lost = 0.0
        if h > 0.0:
            lost = (e1 - e0) - (held - hk * z0 * z0 / (2.0 * (P[c, A0] - da * e0)))
        zrate = 0.0
        if v1 != 0.0:
            zrate = rates(P, c, z1, e1, 1.0 if v1 > 0.0 else -1.0)[0] * v1
    else:
        z1 = e1 = math.nan
    commit(P, c, o, u1, v1, force, dfdu, dfdv, stored, lost, cv_new, phi, Jd, Jv, jac)
    cv_new[c, VARIABLE] = z1
    cv_new[c, EVOLVING_RATE] = zrate
    cv_new[c, HYSTERETIC] = e1
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED] + lost


def bound(p: dict) -> float:
    """z_b = (A0 / (beta + gamma))^(1/n) (m), the bound of |z|."""
    return (p["A0"] / (p["beta"] + p["gamma"])) ** (1.0 / p["n"])


def shortest(p: dict) -> float:
    """The shortest sub-step (m), where z leaves or reaches 0 for a non-integer n: a sub-step
    du from z = 0 errs by about ((beta + |gamma|) / (beta + gamma)) (A0 du / z_b)^(n + 1) z_b
    (the part of the solution in |u - u_0|^(n + 1) that the method does not follow), held to
    SMALLEST_ERROR z_b."""
    share = (p["beta"] + p["gamma"]) / (p["beta"] + abs(p["gamma"]))
    return bound(p) / p["A0"] * (SMALLEST_ERROR * share) ** (1.0 / (p["n"] + 1.0))


def stiffness(row) -> float:
    """The largest slope dF/du: alpha k0 plus (1 - alpha) k0 times the largest dz/du, A0 2 beta
    / (beta + gamma) (unloading from the bound)."""
    k0, alpha = float(row[K0]), float(row[ALPHA])
    beta, gamma = float(row[BETA]), float(row[GAMMA])
    return k0 * (alpha + (1.0 - alpha) * float(row[A0]) * max(1.0, 2.0 * beta / (beta + gamma)))


def traits(row) -> dict:
    """A Bouc-Wen contact (``fem.laws.shock.traits``): its force depends on an internal
    variable that evolves along the path of the link's motion (so on its rate too)."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=True, instant=False,
                friction=False, axial=True)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (BOUC_WEN,)
LAW = Law(
    "bouc_wen", "a smooth hysteretic spring (Bouc-Wen, with Baber and Wen's degradation), "
                "along a direction",
    (Feature("bouc_wen", "Bouc-Wen hysteresis", rate=True, linear=False,
             nonlinear="its hysteretic variable follows a rate equation that is not linear "
                       "(|z|^n, and the sign of the rate)",
             state=True, evolving=True, events=False),),
    (Series("force", "N", "force the link carries, tension positive: alpha k0 elongation + "
                          "(1 - alpha) k0 z"),
     Series("elongation", "m", "elongation along `direction`"),
     Series("z", "m", "the hysteretic variable (internal variable)"),
     Series("hysteretic_energy", "J", "e = int (1 - alpha) k0 z du, which drives the "
                                      "degradation"),
     Series("dissipated", "J", "energy the link dissipated since the start")),
    (Sample("bouc_wen", "bouc_wen", {"kind": "bouc_wen", "direction": [1.0, 0.0, 0.0],
                                     "k0": 1e3, "alpha": 0.1, "n": 1.5, "beta": 2000.0,
                                     "gamma": 800.0, "delta_A": 0.1, "delta_nu": 0.1,
                                     "delta_eta": 0.1}),),
    OWN)


def read(t, p: dict, components=()) -> None:
    """The keys of a Bouc-Wen link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["k0"] = t.float("k0", positive=True)
    p["alpha"] = t.float("alpha", min=0.0)
    if p["alpha"] >= 1.0:
        raise t.error("alpha", f"must be < 1 (the hysteretic part's share is 1 - alpha), "
                               f"got {p['alpha']:g}")
    p["n"] = t.float("n", min=1.0)
    p["beta"] = t.float("beta")
    p["gamma"] = t.float("gamma")
    beta, gamma = p["beta"], p["gamma"]
    if not beta >= abs(gamma):
        raise t.error("beta", f"must be >= |gamma| = {abs(gamma):g} (-beta <= gamma <= beta: "
                              f"the loops dissipate), got {beta:g}")
    if not beta + gamma > 0.0:
        raise t.error("gamma", f"beta + gamma must be > 0 (z is bounded by (A0 / (beta + "
                               f"gamma))^(1/n)), got {beta:g} + {gamma:g}")
    p["A0"] = t.float("A0", 1.0, positive=True)
    p["delta_A"] = t.float("delta_A", 0.0, min=0.0)
    p["delta_nu"] = t.float("delta_nu", 0.0, min=0.0)
    p["delta_eta"] = t.float("delta_eta", 0.0, min=0.0)
    try:
        z_b = bound(p)
    except OverflowError:
        z_b = math.inf
    if not (0.0 < z_b < math.inf and 0.0 < z_b ** p["n"] < math.inf):
        raise t.error("n", f"the bound (A0 / (beta + gamma))^(1/n) of z is {z_b:g} m: not a "
                           f"finite positive number")


def needed(p: dict, where: str) -> list:
    return [("bouc_wen", f"{where}.kind")]


directions = along


def rows(p: dict, nodes: int = 2) -> list:
    return axial_rows(OWN, BOUC_WEN, p, {
        K0: p["k0"], ALPHA: p["alpha"], EXPONENT: p["n"], BETA: p["beta"], GAMMA: p["gamma"],
        A0: p["A0"], DELTA_A: p["delta_A"], DELTA_NU: p["delta_nu"],
        DELTA_ETA: p["delta_eta"], BOUND: bound(p), SHORTEST: shortest(p)})


def attrs(p: dict, contact_rows) -> dict:
    return dict(k0=p["k0"], alpha=p["alpha"], n=p["n"], beta=p["beta"], gamma=p["gamma"],
                A0=p["A0"], delta_A=p["delta_A"], delta_nu=p["delta_nu"],
                delta_eta=p["delta_eta"], direction=list(p["direction"]), loop=LOOP)


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN], "z": v[:, 0, A_LAM],
            "hysteretic_energy": v[:, 0, A_FTM], "dissipated": v[:, 0, A_VSL]}
