"""Damper links: a dashpot whose force is a power of its rate, along a direction.

The link acts on the elongation u = n . d of its relative translation d (``fem.links.geometry``:
one node, d is the node's translation; two nodes, d = u_first - u_second) along the unit
direction n. Its force, positive in tension, is

    F = c |u'|^alpha sign(u')        (|u'| >= v_r),
    F = c v_r^(alpha - 1) u'         (|u'| <  v_r),

and it pulls the first node back along -n (the second along +n). alpha = 1 is a linear
dashpot; fluid viscous dampers have alpha of 0.3 to 0.5, whose slope c alpha |u'|^(alpha - 1)
is infinite at rest: below the velocity v_r (``linear_below``) the force is linear in the
rate, so that the Newton iterations of the implicit schemes keep a finite tangent and a
damper at rest does not stop them. The force is continuous at v_r; the energy a cycle of
amplitude V in velocity dissipates differs from the power law's by a fraction of order
(v_r / V)^(1 + alpha).

It stores nothing and dissipates int F u' dt over a step (Simpson's rule on the velocity of
the step's cubic Hermite path).
"""

from __future__ import annotations

import numba
import numpy as np

from fem.laws.axial import LOOP, commit, motion
from fem.laws.columns import (A_FN, A_PEN, DIR, EVOLVING, EVOLVING_RATE, FN, MODE, PDOT, PEN,
                              own)
from fem.laws.contract import Feature, Law, Sample, Series, along, axial_rows

#: the kind code of a damper contact (column KIND; the registry checks codes are unique)
DAMPER = 4
#: its own columns: the damping c, the exponent alpha, the velocity v_r below which the force
#: is linear (``fem.laws.columns.own``); the direction n is the shared DIR (3)
OWN = own(parameters=(1, 1, 1))
DAMPING, EXPONENT, LINEAR_BELOW = OWN.P
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the energy
#: dissipated over the step (SLIPW)
ELONGATION, RATE, FORCE = PEN, PDOT, FN


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


@numba.njit(cache=True, nogil=True)
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The damper contact c at the link displacements d and rates dd, h after its committed
    values cv_old: force on the first node into phi (3 at o), its derivative with respect to
    the rates into Jv (block o // 3) when ``jac``, values into cv_new."""
    cd, alpha, vr = P[c, DAMPING], P[c, EXPONENT], P[c, LINEAR_BELOW]
    u1, v1 = motion(P, c, o, d, dd)
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
    """None: a dashpot."""
    return 0.0


def traits(row) -> dict:
    """A damper contact (``fem.laws.shock.traits``): its force depends on the rate."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=False, instant=False,
                friction=False)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (DAMPER,)
LAW = Law(
    "damper", "a dashpot whose force is a power of its rate, along a direction",
    (Feature("damper", "power-law damper", rate=True, linear=False,
             nonlinear="its force c |v|^alpha is not linear in the rate (exponent = 1 is, "
                       "and is offered)", events=False),
     Feature("damper.linear", "linear damper (exponent 1)", rate=True, events=False)),
    (Series("force", "N", "force the damper carries, tension positive: c |v|^alpha sign v "
                          "(linear below `linear_below`)"),
     Series("elongation", "m", "elongation along `direction`")),
    (Sample("damper", "damper", {"kind": "damper", "direction": [1.0, 0.0, 0.0],
                                 "damping": 10.0, "exponent": 0.5}),
     Sample("damper_linear", "damper.linear", {"kind": "damper", "direction": [1.0, 0.0, 0.0],
                                               "damping": 10.0})),
    OWN)


def read(t, p: dict, components=()) -> None:
    """The keys of a damper link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["damping"] = t.float("damping", positive=True)
    p["exponent"] = t.float("exponent", 1.0, positive=True, max=2.0)
    p["linear_below"] = t.float("linear_below", 1e-6, positive=True)


def needed(p: dict, where: str) -> list:
    if p["exponent"] == 1.0:
        return [("damper.linear", f"{where}.kind")]
    return [("damper", f"{where}.exponent")]


directions = along


def rows(p: dict, nodes: int = 2) -> list:
    return axial_rows(OWN, DAMPER, p, {DAMPING: p["damping"], EXPONENT: p["exponent"],
                                       LINEAR_BELOW: p["linear_below"]})


def attrs(p: dict, contact_rows) -> dict:
    return dict(damping=p["damping"], exponent=p["exponent"], linear_below=p["linear_below"],
                direction=list(p["direction"]), loop=LOOP)


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN]}


# ------------------------------------------------------------------ between events, exactly
def phase_key(P, c: int, cv) -> tuple:
    return (int(cv[c, MODE]),)


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of a linear damper contact c (exponent 1) for the exact scheme
    (``fem.integrators.exact_phases.Terms``): F = c u', u' = ell . x' + pv . w; the structure
    gets -F ell, the damper dissipates c u'^2, the imposed motion works F pv."""
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

