"""Damper links: a dashpot whose force is a power of its rate, along a direction; optionally
in series with a spring (a power-law Maxwell element), and then optionally with a spring in
parallel with both (a generalized Zener element).

The link acts on the elongation u = n . d of its relative translation d (``fem.links.geometry``:
one node, d is the node's translation; two nodes, d = u_first - u_second) along the unit
direction n. The dashpot's force, positive in tension, at its rate r is

    f(r) = c |r|^alpha sign(r)        (|r| >= v_r),
    f(r) = c v_r^(alpha - 1) r        (|r| <  v_r),

and the link pulls the first node back along -n (the second along +n). alpha = 1 is a linear
dashpot; fluid viscous dampers have alpha of 0.3 to 0.5, whose slope c alpha |r|^(alpha - 1)
is infinite at rest: below the velocity v_r (``linear_below``) the force is linear in the
rate, so that the Newton iterations of the implicit schemes keep a finite tangent and a
damper at rest does not stop them. The force is continuous at v_r; the energy a cycle of
amplitude V in velocity dissipates differs from the power law's by a fraction of order
(v_r / V)^(1 + alpha).

Alone (no ``stiffness``), the dashpot's rate is u' and F = f(u'). It stores nothing and
dissipates int F u' dt over a step (Simpson's rule on the velocity of the step's cubic Hermite
path).

With a spring k in series (``stiffness``), the dashpot's elongation e is an internal variable:
the branch carries F_b = k (u - e) = f(e'), so that e' = g(F_b), g the inverse of f
(continuous and increasing: g(F) = sign(F) (|F| / c)^(1 / alpha), linear below
F_r = c v_r^alpha). With a spring K_p in parallel (``parallel_stiffness``) the link carries
F = K_p u + F_b, and F_b alone without it. The law integrates the spring's stretch y = u - e,

    y' = u'(s) - g(k y),

over each step from the committed row along the step's cubic Hermite path of u (``branch``):
sub-steps of the trapezoidal rule (the increment of u over a sub-step is the path's, exact),
each an implicit equation in y whose residual is increasing, solved by a scalar Newton
iteration kept inside a bracket of the root (a bisection when it leaves it) to round-off. Each
sub-step is taken once whole and once as two halves; their difference estimates the error of
the halves, which must stay below TOLERANCE times the force scale over k (the force scale: the
largest force the branch has carried since the start, its force at the start of the step, k
times the stretch the path imposes over the step, and F_r), and Richardson's extrapolation of
the two is kept. The next sub-step grows or shrinks with that estimate. After MAX_SUBSTEPS
sub-steps tried (rejected ones included) within one evaluation, a sub-step below round-off or
an implicit solve that does not converge, the law gives up loudly: its force is NaN, which
stops the run. The implicit schemes get the derivatives of y1 with respect to u1 and u1'
integrated along the same sub-steps (those of the discrete map). At h = 0 the spring takes the
whole increment (the dashpot cannot move in no time): the element starts with e = 0, an
initial displacement stretching the spring.

It stores k y^2 / 2 + K_p u^2 / 2 and dissipates, over a step, int F_b e' dt = int k y u' dt
minus the change of k y^2 / 2 (the work by Simpson's rule on each sub-step, from the values of
the integration): the link's own balance closes. With alpha = 1 it is the linear Maxwell
element (``fem.laws.maxwell``), with K_p a Zener element, and the exact scheme runs it.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.laws.axial import LOOP, commit, motion
from fem.laws.columns import (A_FN, A_LAM, A_PEN, DIR, EVOLVING, EVOLVING_RATE, FN, PDOT, PEN,
                              own)
from fem.laws.contract import (Feature, Law, Sample, Series, along, axial_rows,
                               mode_phase)

#: the kind code of a damper contact (column KIND; the registry checks codes are unique)
DAMPER = 4
#: why a failed local integration stops the run (the run's message names the link and the time)
FAILURE = ("the integration of its dashpot's elongation along the step's path (with "
           "`stiffness`) did not meet its tolerance within its sub-steps, or a sub-step fell "
           "below round-off (the damper section of docs/study_format.md)")
#: its own columns: the damping c, the exponent alpha, the velocity v_r below which the force
#: is linear, the stiffness k of the spring in series (0: none) and K_p of the spring in
#: parallel (0: none) (``fem.laws.columns.own``); the direction n is the shared DIR (3). Its
#: own value column: the largest force the series branch has carried since the start (the
#: scale of its integration's tolerance)
OWN = own(parameters=(1, 1, 1, 1, 1), values=(1,))
DAMPING, EXPONENT, LINEAR_BELOW, SERIES, PARALLEL = OWN.P
(SCALE,) = OWN.V
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the energy
#: dissipated over the step (SLIPW); with a spring in series, the dashpot's elongation e
#: (EVOLVING, an evolving law's variable) and its rate g(F_b) (EVOLVING_RATE)
ELONGATION, RATE, FORCE, DASHPOT = PEN, PDOT, FN, EVOLVING

#: the local integration of a series branch (module docstring): the error of a sub-step
#: relative to the force scale, the most sub-steps tried within one evaluation, the most
#: iterations of one implicit solve
TOLERANCE = 1e-10
MAX_SUBSTEPS = 4000
MAX_ITERATIONS = 200


@numba.njit(cache=True, nogil=True)
def force(c, alpha, vr, v):
    """(F, dF/dv) at the rate v (module docstring)."""
    a = abs(v)
    if a < vr:
        slope = c * vr ** (alpha - 1.0)
        return slope * v, slope
    f = c * a ** alpha
    return (f if v > 0.0 else -f), alpha * f / a


@numba.njit(cache=True, nogil=True)
def rate_of(c, alpha, vr, f):
    """(g(F), g'(F)): the dashpot's rate at the force F, the inverse of ``force``: linear
    below F_r = c v_r^alpha, sign(F) (|F| / c)^(1 / alpha) above."""
    fr = c * vr ** alpha
    a = abs(f)
    if a < fr:
        slope = vr / fr
        return slope * f, slope
    r = (a / c) ** (1.0 / alpha)
    return (r if f > 0.0 else -r), r / (alpha * a)


@numba.njit(cache=True, nogil=True)
def newton_slope(c, alpha, vr, v, before):
    """The slope dF/dv the implicit schemes' Newton iteration gets at the rate v, ``before``
    the rate of the iteration before.

    F is convex in |v| for alpha >= 1, and Newton's method converges with its tangent. For
    alpha < 1 F is concave: its tangent, from a rate above the solution, overshoots it, past
    zero when the solution is small, and the iteration cycles across zero. Its chord F / v
    never overshoots (the step's rate stays on its side of the solution and of zero) but
    converges only at the rate 1 - alpha when the damper's force dominates the step's
    inertia. So the iteration gets the tangent when it comes from below (the tangent then
    stays below the solution and converges quadratically) or has nearly converged (a change
    of less than alpha / 2: the tangent's overshoot then stays on the same side of zero),
    and the chord otherwise."""
    f, slope = force(c, alpha, vr, v)
    if alpha >= 1.0 or abs(v) < vr:
        return slope
    if before * v > 0.0 and abs(v) >= abs(before) * (1.0 - 0.5 * alpha):
        return slope
    return f / v


# ------------------------------------------------------------------ the series branch
@numba.njit(cache=True, nogil=True, inline="always")
def _position(u0, v0, u1, v1, h, th):
    """(u, du/du1, du/dv1) at the fraction th of the step's cubic Hermite path from (u0, v0)
    to (u1, v1) over h."""
    t2 = th * th
    t3 = t2 * th
    h01 = 3.0 * t2 - 2.0 * t3
    h11 = t3 - t2
    u = (2.0 * t3 - 3.0 * t2 + 1.0) * u0 + (t3 - 2.0 * t2 + th) * h * v0 + h01 * u1 \
        + h11 * h * v1
    return u, h01, h * h11


@numba.njit(cache=True, nogil=True, inline="always")
def _rate(u0, v0, u1, v1, h, th):
    """u' at the fraction th of the same path."""
    t2 = th * th
    return ((6.0 * t2 - 6.0 * th) * (u0 - u1) / h + (3.0 * t2 - 4.0 * th + 1.0) * v0
            + (3.0 * t2 - 2.0 * th) * v1)


@numba.njit(cache=True, nogil=True)
def trapezoid(k, c, alpha, vr, y, gy, gpy, du, dt):
    """One sub-step dt of y' = u' - g(k y) by the trapezoidal rule from y (gy = g(k y),
    gpy = g'(k y)), du the increment of u over it: the root y1 of

        R(y1) = y1 + dt / 2 g(k y1) - (y + du - dt / 2 g(k y)),

    increasing in y1 and between 0 and b = y + du - dt / 2 g(k y). Newton's method from the
    linearized step, kept inside the bracket of the root (a bisection when it leaves it or
    does not halve the last change), to round-off. Returns (y1, g(k y1), g'(k y1), converged)."""
    b = y + du - 0.5 * dt * gy
    if b == 0.0:
        return 0.0, 0.0, rate_of(c, alpha, vr, 0.0)[1], True
    lo = min(0.0, b)
    hi = max(0.0, b)
    x = y + (du - dt * gy) / (1.0 + 0.5 * dt * k * gpy)
    if not (lo < x < hi):
        x = 0.5 * (lo + hi)
    small = 1e-15 * abs(b)
    last = hi - lo
    for _ in range(MAX_ITERATIONS):
        gx, gpx = rate_of(c, alpha, vr, k * x)
        r = x + 0.5 * dt * gx - b
        if r == 0.0:
            return x, gx, gpx, True
        if r > 0.0:
            hi = x
        else:
            lo = x
        step = r / (1.0 + 0.5 * dt * k * gpx)
        xn = x - step
        if not (lo < xn < hi) or abs(step) > 0.5 * last:
            xn = 0.5 * (lo + hi)
        last = abs(xn - x)
        x = xn
        if last <= small or hi - lo <= small:
            gx, gpx = rate_of(c, alpha, vr, k * x)
            return x, gx, gpx, True
    gx, gpx = rate_of(c, alpha, vr, k * x)
    return x, gx, gpx, False


@numba.njit(cache=True, nogil=True)
def branch(k, c, alpha, vr, y0, u0, v0, u1, v1, h, scale, most):
    """The series branch over a step h from its committed stretch y0 along the cubic Hermite
    path from (u0, v0) to (u1, v1) (module docstring): adaptive sub-steps of the trapezoidal
    rule, each taken whole and in two halves, the halves' error below TOLERANCE times the
    force scale (``scale``, N: the largest force of the branch so far; its force at the start
    and the path's stretch over the step, and F_r, count too), Richardson's extrapolation of
    the two kept; at most ``most`` sub-steps tried.

    Returns (y1, dy1/du1, dy1/dv1, the work int k y u' dt over the step, the largest |y|,
    the number of sub-steps tried, ok); ok is False when the integration failed (``most``
    sub-steps tried, a sub-step below round-off or an implicit solve that did not converge),
    y1 being NaN then."""
    if h <= 0.0:
        y1 = y0 + (u1 - u0)
        return y1, 1.0, 0.0, 0.0, max(abs(y0), abs(y1)), 0, True
    excursion = abs(u1 - u0) + (4.0 / 27.0) * h * (abs(v0) + abs(v1))
    size = max(scale / k, abs(y0), excursion, c * vr ** alpha / k)
    tol = TOLERANCE * size
    y = y0
    gy, gpy = rate_of(c, alpha, vr, k * y)
    su = 0.0
    sv = 0.0
    work = 0.0
    top = abs(y0)
    th = 0.0
    ua, pua, pva = _position(u0, v0, u1, v1, h, 0.0)
    ra = v0
    frac = 1.0
    tries = 0
    while th < 1.0:
        if tries >= most:
            return np.nan, 0.0, 0.0, 0.0, top, tries, False
        tries += 1
        d = frac
        if th + d >= 1.0 - 1e-3 * d:
            d = 1.0 - th
        if d <= 1e-14:
            return np.nan, 0.0, 0.0, 0.0, top, tries, False
        tm = th + 0.5 * d
        tb = 1.0 if d == 1.0 - th else th + d
        um, pum, pvm = _position(u0, v0, u1, v1, h, tm)
        ub, pub, pvb = _position(u0, v0, u1, v1, h, tb)
        dt = d * h
        # whole, then two halves
        yw, gw, gpw, ok_w = trapezoid(k, c, alpha, vr, y, gy, gpy, ub - ua, dt)
        ym, gm, gpm, ok_m = trapezoid(k, c, alpha, vr, y, gy, gpy, um - ua, 0.5 * dt)
        yh, gh, gph, ok_h = trapezoid(k, c, alpha, vr, ym, gm, gpm, ub - um, 0.5 * dt)
        if not (ok_w and ok_m and ok_h):
            return np.nan, 0.0, 0.0, 0.0, top, tries, False
        err = abs(yh - yw) / 3.0
        if not err <= tol:
            # too long: shorter (a NaN error shortens it most)
            factor = 0.9 * (tol / err) ** (1.0 / 3.0) if err < np.inf else 0.1
            frac = d * max(0.1, min(0.5, factor))
            continue
        # the sensitivities of the three solves to u1 and u1' (those of the discrete map)
        aw = 0.5 * dt * k
        ah = 0.25 * dt * k
        swu = ((1.0 - aw * gpy) * su + (pub - pua)) / (1.0 + aw * gpw)
        swv = ((1.0 - aw * gpy) * sv + (pvb - pva)) / (1.0 + aw * gpw)
        smu = ((1.0 - ah * gpy) * su + (pum - pua)) / (1.0 + ah * gpm)
        smv = ((1.0 - ah * gpy) * sv + (pvm - pva)) / (1.0 + ah * gpm)
        shu = ((1.0 - ah * gpm) * smu + (pub - pum)) / (1.0 + ah * gph)
        shv = ((1.0 - ah * gpm) * smv + (pvb - pvm)) / (1.0 + ah * gph)
        yn = yh + (yh - yw) / 3.0
        su = shu + (shu - swu) / 3.0
        sv = shv + (shv - swv) / 3.0
        # the work k y u' by Simpson's rule on the sub-step
        rm = _rate(u0, v0, u1, v1, h, tm)
        rb = v1 if tb == 1.0 else _rate(u0, v0, u1, v1, h, tb)
        work += dt * k * (y * ra + 4.0 * ym * rm + yn * rb) / 6.0
        y = yn
        gy, gpy = rate_of(c, alpha, vr, k * y)
        top = max(top, abs(ym), abs(y))
        th = tb
        ua, pua, pva, ra = ub, pub, pvb, rb
        factor = 0.9 * (tol / err) ** (1.0 / 3.0) if err > 0.0 else 4.0
        frac = d * max(0.2, min(4.0, factor))
    return y, su, sv, work, top, tries, True


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The damper contact c at the link displacements d and rates dd, h after its committed
    values cv_old: force on the first node into phi (3 at o), its derivatives into Jd, Jv
    (block o // 3) when ``jac``, values into cv_new."""
    cd, alpha, vr = P[c, DAMPING], P[c, EXPONENT], P[c, LINEAR_BELOW]
    u1, v1 = motion(P, c, o, d, dd)
    k = P[c, SERIES]
    if k > 0.0:
        kp = P[c, PARALLEL]
        u0, v0 = cv_old[c, ELONGATION], cv_old[c, RATE]
        y0 = u0 - cv_old[c, DASHPOT]
        scale = cv_old[c, SCALE]
        # (the bound as a plain int64: a global constant would be typed as a literal, and
        # ``branch`` compiled for it besides its plain signature)
        y1, dy_du, dy_dv, work, top, tries, ok = branch(k, cd, alpha, vr, y0, u0, v0, u1, v1,
                                                        max(h, 0.0), scale,
                                                        np.int64(MAX_SUBSTEPS))
        f1 = kp * u1 + k * y1
        stored = 0.5 * k * y1 * y1 + 0.5 * kp * u1 * u1
        lost = work - 0.5 * k * (y1 * y1 - y0 * y0)
        commit(P, c, o, u1, v1, f1, kp + k * dy_du, k * dy_dv, stored, lost, cv_new, phi, Jd,
               Jv, jac)
        cv_new[c, DASHPOT] = u1 - y1
        cv_new[c, EVOLVING_RATE] = rate_of(cd, alpha, vr, k * y1)[0]
        cv_new[c, SCALE] = max(scale, k * top)
        return
    f1 = force(cd, alpha, vr, v1)[0]
    slope = newton_slope(cd, alpha, vr, v1, cv_new[c, RATE])
    lost = 0.0
    if h > 0.0:
        # Simpson's rule on F u' along the step's cubic Hermite path
        u0, v0 = cv_old[c, ELONGATION], cv_old[c, RATE]
        vm = 1.5 * (u1 - u0) / h - 0.25 * (v0 + v1)
        f0 = force(cd, alpha, vr, v0)[0]
        fm = force(cd, alpha, vr, vm)[0]
        lost = h * (f0 * v0 + 4.0 * fm * vm + f1 * v1) / 6.0
    commit(P, c, o, u1, v1, f1, 0.0, slope, 0.0, lost, cv_new, phi, Jd, Jv, jac)
    cv_new[c, EVOLVING] = 0.0
    cv_new[c, EVOLVING_RATE] = 0.0


def stiffness(row) -> float:
    """None for a dashpot alone; with a spring in series, its stiffness and the parallel
    spring's (the dashpot cannot move in no time)."""
    return float(row[SERIES] + row[PARALLEL])


def traits(row) -> dict:
    """A damper contact (``fem.laws.shock.traits``): its force depends on the rate; with a
    spring in series, on an internal variable that evolves too (the dashpot's elongation)."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=bool(row[SERIES] > 0.0),
                instant=False, friction=False, axial=True)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (DAMPER,)
_ALONG_X = {"kind": "damper", "direction": [1.0, 0.0, 0.0], "damping": 10.0}
LAW = Law(
    "damper", "a dashpot whose force is a power of its rate, along a direction, optionally in "
              "series with a spring and that in parallel with another",
    (Feature("damper", "power-law damper", rate=True, linear=False,
             nonlinear="its force c |v|^alpha is not linear in the rate (exponent = 1 is, "
                       "and is offered)", events=False),
     Feature("damper.linear", "linear damper (exponent 1)", rate=True, events=False),
     Feature("damper.series", "power-law damper in series with a spring", rate=True,
             state=True, evolving=True, linear=False,
             nonlinear="its dashpot's rate (F / c)^(1/alpha) is not linear in the force "
                       "(exponent = 1 is, and is offered)", events=False),
     Feature("damper.series.linear", "linear damper in series with a spring (exponent 1)",
             rate=True, state=True, evolving=True, events=False)),
    (Series("force", "N", "force the link carries, tension positive: c |v|^alpha sign v "
                          "(linear below `linear_below`); with `stiffness` k, "
                          "k (elongation - dashpot_elongation), plus `parallel_stiffness` "
                          "times the elongation"),
     Series("elongation", "m", "elongation along `direction`"),
     Series("dashpot_elongation", "m", "the dashpot's elongation, an internal variable with "
                                       "`stiffness` (0 without)")),
    (Sample("damper", "damper", dict(_ALONG_X, exponent=0.5)),
     Sample("damper_linear", "damper.linear", dict(_ALONG_X)),
     Sample("damper_zener", "damper.series", dict(_ALONG_X, exponent=0.5, stiffness=1e3,
                                                  parallel_stiffness=500.0)),
     Sample("damper_maxwell", "damper.series.linear", dict(_ALONG_X, stiffness=1e3))),
    OWN)


def read(t, p: dict, components=()) -> None:
    """The keys of a damper link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["damping"] = t.float("damping", positive=True)
    p["exponent"] = t.float("exponent", 1.0, positive=True, max=2.0)
    p["linear_below"] = t.float("linear_below", 1e-6, positive=True)
    p["stiffness"] = t.float("stiffness", None, positive=True)
    p["parallel_stiffness"] = t.float("parallel_stiffness", None, positive=True)
    if p["parallel_stiffness"] is not None and p["stiffness"] is None:
        raise t.error("parallel_stiffness", "a spring in parallel needs `stiffness`, the "
                                            "spring in series with the dashpot (a Zener "
                                            "element); beside a dashpot alone, use a "
                                            "[[discrete]] spring")


def needed(p: dict, where: str) -> list:
    if p.get("stiffness") is not None:
        if p["exponent"] == 1.0:
            return [("damper.series.linear", f"{where}.stiffness")]
        return [("damper.series", f"{where}.exponent")]
    if p["exponent"] == 1.0:
        return [("damper.linear", f"{where}.kind")]
    return [("damper", f"{where}.exponent")]


directions = along


def rows(p: dict, nodes: int = 2) -> list:
    return axial_rows(OWN, DAMPER, p, {DAMPING: p["damping"], EXPONENT: p["exponent"],
                                       LINEAR_BELOW: p["linear_below"],
                                       SERIES: p.get("stiffness") or 0.0,
                                       PARALLEL: p.get("parallel_stiffness") or 0.0})


def attrs(p: dict, contact_rows) -> dict:
    found = dict(damping=p["damping"], exponent=p["exponent"], linear_below=p["linear_below"],
                 direction=list(p["direction"]), loop=LOOP)
    for key in ("stiffness", "parallel_stiffness"):
        if p.get(key) is not None:
            found[key] = p[key]
    return found


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN],
            "dashpot_elongation": v[:, 0, A_LAM]}


# ------------------------------------------------------------------ between events, exactly
phase_key = mode_phase


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of a linear damper contact c (exponent 1) for the exact scheme
    (``fem.integrators.exact_phases.Terms``). Alone: F = c u', u' = ell . x' + pv . w; the
    structure gets -F ell, the damper dissipates c u'^2, the imposed motion works F pv. In
    series with a spring k, its elongation e the internal variable i of the state:
    F = K_p u + k (u - e), u = ell . x + pw . w; the structure gets -F ell, the dashpot moves at
    k (u - e) / c and dissipates (k (u - e))^2 / c, the imposed motion works F pv."""
    if P[c, SERIES] > 0.0:
        _exact_series(P, c, t)
        return
    N, nb = t.N, t.nb
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    cd = P[c, DAMPING]
    rate = t.affine(ell, pv, 0.0, on_v=True)
    imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
    t.C += cd * np.outer(ell, ell)
    t.Cl += cd * np.outer(ell, ell)
    t.F[:, :nb] -= cd * np.outer(ell, pv)
    t.diss.append((cd, rate, rate))
    t.support.append((cd, rate, imposed_rate))


def _exact_series(P, c: int, t) -> None:
    """``exact_phase`` of a linear dashpot c in series with a spring k, and a spring K_p in
    parallel with both (0: none)."""
    n, nb, N = t.n, t.nb, t.N
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
    i = t.internal(c)
    k, cd, kp = P[c, SERIES], P[c, DAMPING], P[c, PARALLEL]
    u_aff = t.affine(ell, pw, 0.0)
    y_aff = t.affine(ell, pw, 0.0)
    y_aff[0][2 * n + i] = -1.0
    t.K += (k + kp) * np.outer(ell, ell)
    t.G[:, i] = k * ell
    t.F[:, :nb] -= (k + kp) * np.outer(ell, pw)
    t.rates_z[i], t.rates_u[i] = (k / cd) * y_aff[0], (k / cd) * y_aff[1]
    t.stretch[i], t.weights[i] = y_aff[0], k * k / cd
    t.diss.append((k * k / cd, y_aff, y_aff))
    t.support.append((k, y_aff, imposed_rate))
    if kp > 0.0:
        t.support.append((kp, u_aff, imposed_rate))
