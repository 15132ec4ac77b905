"""The one compiled dispatch of the link laws: what a law gives every transient scheme.

A link acts on the relative translation d (3,) of its node against an obstacle (or of its
first node against its second) and on its rate d' (3,): ``d = L x + Lw w(t)`` on the
coordinates x a scheme integrates (free dofs or modal coordinates), the second term being the
imposed motion of the link's dofs (``fem.links.linkset``). A link is one or more *contacts*
(two for a two-planes obstacle); each contact c has a parameter row ``P[c]`` and a value row
``CV[c]`` (columns ``fem.laws.columns``), double-buffered by the schemes: the committed row
(``cv_old``, at the start of the step) and the one being computed (``cv_new``), h seconds
later: a law that carries internal variables integrates them over h from the committed row.

Every law provides, through :func:`evaluate` (one call for all contacts, a switch on the kind
of each):

* the force phi (3,) on the link's first node (the structure gets L^T phi), and its
  derivatives with respect to d and d' for the implicit schemes;
* its *mode*: open, or closed and sticking, or closed and sliding (shock laws); free or bonded
  (rigid impact law). ``flags[c] < 0`` lets the law choose the mode from the state at hand
  (``events = "step"``: the state changes at the end of the step where it is found); a flag
  >= 0 imposes it (``events = "locate"``: the mode holds over the step, and the law's event
  functions say when it must change);
* its event functions G0, G1: continuous functions of the state, positive while the mode
  holds; a mode ends where one of them passes from positive to zero or below (the one event
  locator, ``fem.integrators.events``, finds the earliest such crossing on the scheme's dense
  output and lands the scheme on it);
* the stored energy (columns ENN, ENT) and, through :func:`step_dissipation`, the energy the
  link dissipates over a step;
* the event functions on a dense output (:func:`dense_normal`, :func:`normal_at`,
  :func:`armed_by_rate`, :func:`mode_holds`) and its evolving internal variable
  (:func:`internal`), for the schemes' error control.

The change of state at an event, and the modes at the start, are each law's handlers at
instants (``fem.laws.contract``), which the locator calls through the registry.

Laws (kinds): ``PLANE`` and ``CIRCLE`` penalty shocks (``fem.laws.shock``) with Coulomb or
unidirectional friction (``fem.laws.friction``); ``RIGID`` impacts, whose bond force is a
constraint the scheme solves and whose impact is a velocity jump (``fem.laws.impact``);
``MAXWELL`` elements (``fem.laws.maxwell``), ``DAMPER`` dashpots (``fem.laws.damper``),
``PLASTIC`` elasto-plastic springs (``fem.laws.plastic``), ``BOUC_WEN`` hysteretic springs
(``fem.laws.bouc_wen``), the isolators' ``PENDULUM`` friction pendulum bearings
(``fem.laws.pendulum``) and ``ANTI_SEISMIC`` devices (``fem.laws.anti_seismic``),
``FORCE_CURVE`` contacts whose force is a curve of the penetration
(``fem.laws.force_curve``), ``FORCE_FUNCTION`` forces that are functions of a dof's motion
(``fem.laws.force_function``), ``BUCKLING`` supports that buckle (``fem.laws.buckling``).
Adding a law is its module, its registry row (``fem.laws``) and a branch here.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.laws import (EVENTFUL, anti_seismic, bouc_wen, buckling, damper, force_curve,
                      force_function, friction, impact, maxwell, pendulum, plastic, shock)
from fem.laws.anti_seismic import ANTI_SEISMIC
from fem.laws.bouc_wen import BOUC_WEN
from fem.laws.buckling import BUCKLING
from fem.laws.damper import DAMPER
from fem.laws.force_curve import FORCE_CURVE
from fem.laws.force_function import FORCE_FUNCTION, USES_V
from fem.laws.force_function import VELOCITY as FF_VELOCITY
from fem.laws.maxwell import MAXWELL
from fem.laws.pendulum import BEARING, PENDULUM, ROLE
from fem.laws.plastic import PLASTIC

from fem.laws.columns import (ACT, BLK, BONDED, CIRCLE, DIR, ENN, ENT, EVOLVING, EVOLVING_RATE,
                              FDN, FREE, G0, G1, GAP, KIND, LAM, MODE, NG, NRM, PDOT, PEN, PLANE,
                              RELEASE_GAP, RIGID, SLIP, SLIPW, VSL)
from fem.laws.shock_columns import CN, FTD, KN, MU, REL, SDIR

__all__ = ["evaluate", "JACOBIAN", "step_dissipation", "stored_energy", "support_work", "NG",
           "FREE"]


@numba.njit(cache=True, nogil=True, _nrt=False)
def evaluate(P, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    """Forces, modes, event functions and stored energies of every contact.

    d, dd (3 m,): link displacements and rates; cv_old: the committed values (anchors,
    sliding directions, modes, internal variables), h (s) the time from them to the state at
    hand (0 at the committed instant itself); writes cv_new, phi (3 m,) the forces on the links'
    first nodes and, when ``jac``, Jd and Jv (m, 3, 3) their derivatives. Rigid contacts give
    no force here: their bond force is the scheme's constraint (column LAM).
    """
    for r in range(phi.size):
        phi[r] = 0.0
    if jac:
        for b in range(Jd.shape[0]):
            for q in range(3):
                for s in range(3):
                    Jd[b, q, s] = 0.0
                    Jv[b, q, s] = 0.0
    # the contacts in runs of one kind: a law's compiled run takes a whole run (its trial
    # compiled into the loop, without a call per contact)
    nc = P.shape[0]
    c = 0
    while c < nc:
        kind = int(P[c, KIND])
        e = c + 1
        while e < nc and int(P[e, KIND]) == kind:
            e += 1
        if kind == MAXWELL:
            _maxwell_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
        elif kind == DAMPER:
            _damper_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
        elif kind == PLASTIC:
            _plastic_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h)
        elif kind == BOUC_WEN:
            _bouc_wen_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
        elif kind == PENDULUM:
            _pendulum_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h)
        elif kind == ANTI_SEISMIC:
            _anti_seismic_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
        elif kind == FORCE_CURVE:
            _force_curve_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac)
        elif kind == FORCE_FUNCTION:
            _force_function_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
        elif kind == BUCKLING:
            _buckling_run(P, c, e, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h)
        elif kind == RIGID:
            for k in range(c, e):
                impact.trial(P, k, 3 * int(P[k, BLK]), d, dd, cv_old, cv_new, flags)
        else:
            for k in range(c, e):
                shock.trial(P, k, 3 * int(P[k, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, flags,
                            jac)
        c = e


# ------------------------------------------------------------------ a run of one law
# (each law's trial is compiled into its run: a call per contact would pass its dozen arrays
# for a few dozen operations; and without the runtime's reference counts, which the arrays
# handed to the functions compiled into a loop would otherwise take and give back, in atomic
# operations, at each call: the loops allocate nothing)
@numba.njit(cache=True, nogil=True, _nrt=False)
def _maxwell_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    for c in range(c0, c1):
        maxwell.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _damper_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    for c in range(c0, c1):
        damper.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _plastic_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    for c in range(c0, c1):
        plastic.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac,
                      h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _bouc_wen_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    for c in range(c0, c1):
        bouc_wen.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _pendulum_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    for c in range(c0, c1):
        # a bearing fills its record row (the next one) too: the record has no law
        if P[c, ROLE] == BEARING:
            pendulum.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, flags,
                           jac, h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _anti_seismic_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    for c in range(c0, c1):
        anti_seismic.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, jac,
                           h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _force_curve_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac):
    for c in range(c0, c1):
        force_curve.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, flags,
                          jac)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _force_function_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    for c in range(c0, c1):
        force_function.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, jac,
                             h)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _buckling_run(P, c0, c1, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h):
    for c in range(c0, c1):
        buckling.trial(P, c, 3 * int(P[c, BLK]), d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac,
                       h)


# ------------------------------------------------------------------ the lean loops' law
@numba.njit(cache=True, nogil=True, inline="always")
def elastic_plane(P, c):
    """(gap, stiffness) of a contact whose force is k max(p, 0) along a fixed normal,
    p = n . d - gap (the trait ``plane_elastic``, ``fem.links.traits``): the law the lean
    loops follow, inlined into them."""
    return P[c, GAP], P[c, KN]


# ------------------------------------------------------------------ at an event
@numba.njit(cache=True, nogil=True)
def switch_normal(P, c, cv, d):
    """The event of shock contact c's normal function (``fem.laws.shock.switch_normal``):
    it opens, or closes; returns whether it closed."""
    return shock.switch_normal(P, c, cv, d)


@numba.njit(cache=True, nogil=True)
def switches_normal(P, c):
    """Whether the event of contact c's normal function G0 is the shock's switch (it opens,
    or closes: ``switch_normal``), which the exact scheme's pieces may take themselves; any
    other law's event goes to its handlers at instants (``fem.laws.contract``)."""
    kind = int(P[c, KIND])
    return kind == PLANE or kind == CIRCLE or kind == FORCE_CURVE


@numba.njit(cache=True, nogil=True)
def normal_violated(P, c, cv, d):
    """Whether contact c's normal function is below zero beyond its round-off at link
    displacements d (``fem.laws.shock.normal_round_off``): its mode must change at the
    instant."""
    return cv[c, G0] < -shock.normal_round_off(P, c, d)


# ------------------------------------------------------------------ bonds (constraints)
@numba.njit(cache=True, nogil=True, inline="always")
def bonded(P, c, cv):
    """Whether contact c is a constraint at the values cv (a bonded rigid contact), and its
    force then (N, pushing the bodies apart)."""
    if int(P[c, KIND]) == RIGID and cv[c, MODE] == BONDED:
        return True, cv[c, LAM]
    return False, 0.0



@numba.njit(cache=True, nogil=True)
def set_bond(P, c, cv, value, mark):
    """The force of the constraint of bonded contact c (a rigid contact's bond) into its
    value row (``fem.laws.impact.set_bond``)."""
    impact.set_bond(P, c, cv, value, mark)


@numba.njit(cache=True, nogil=True)
def push_bond(P, c, value, phi):
    """The force of bonded contact c's constraint on its link into phi."""
    impact.push_bond(P, c, value, phi)


# ------------------------------------------------------------------ evolving internal variables
@numba.njit(cache=True, nogil=True)
def internal(P, c, cv):
    """(value, rate, scale) of the internal variable of an evolving contact c at the values
    cv (columns EVOLVING and EVOLVING_RATE, which every evolving law keeps; the scale, for an
    error control, is the size of the motion it follows: max(|coordinate|, |value|))."""
    e = cv[c, EVOLVING]
    return e, cv[c, EVOLVING_RATE], max(abs(cv[c, PEN]), abs(e))


@numba.njit(cache=True, nogil=True)
def hold_internal(P, c, o, d, dd, cv, value):
    """The value row of evolving contact c at link displacements d and rates dd (3 at o) with
    its internal variable at ``value``: its coordinate along DIR and that coordinate's rate
    as the committed state of a step, so that the law evaluated from the row at h = 0 gives
    its exact force (the spring of a Maxwell element takes no increment), for a scheme that
    carries the variable in its own state (the exact scheme). No branch per law: every
    evolving law keeps these columns (``fem.laws.columns.EVOLVING``)."""
    cv[c, PEN] = P[c, DIR] * d[o] + P[c, DIR + 1] * d[o + 1] + P[c, DIR + 2] * d[o + 2]
    cv[c, PDOT] = P[c, DIR] * dd[o] + P[c, DIR + 1] * dd[o + 1] + P[c, DIR + 2] * dd[o + 2]
    cv[c, EVOLVING] = value


# ------------------------------------------------------------------ events on a dense output
@numba.njit(cache=True, nogil=True, inline="always")
def dense_normal(P, c, closed):
    """Whether contact c's normal function G0 follows the link's motion inside a step, so that
    the locator samples it on the dense output of the link displacement (``normal_at``);
    otherwise it changes only at the step's ends (a bonded rigid contact's bond force, an
    element without events, a law whose event functions depend on its internal state: their
    crossings are found at the steps' ends)."""
    kind = int(P[c, KIND])
    if kind == PLANE or kind == CIRCLE or kind == FORCE_CURVE:
        return True
    if kind == PENDULUM:
        return P[c, ROLE] == BEARING
    return kind == RIGID and not closed


@numba.njit(cache=True, nogil=True)
def normal_at(P, c, closed, x0, x1, x2, r0, r1, r2):
    """The normal function G0 of contact c at the link displacement (x0, x1, x2) and rate
    (r0, r1, r2): +-chi of a shock contact (positive while its mode holds), the gap of an
    open rigid contact, +-p of a pendulum bearing (``fem.laws.pendulum.normal_at``), +-p of a
    force-curve contact (``fem.laws.force_curve``)."""
    if int(P[c, KIND]) == PENDULUM:
        return pendulum.normal_at(P, c, closed, x0, x1, x2, r0, r1, r2)
    p, pd, n0, n1, n2, rho = shock.kinematics(P, c, x0, x1, x2, r0, r1, r2)
    kind = int(P[c, KIND])
    if kind == RIGID:
        return -p
    if kind == FORCE_CURVE:
        return p if closed else -p
    fn, chi = shock.normal_force(P, c, p, pd)
    return chi if closed else -chi


@numba.njit(cache=True, nogil=True)
def armed_by_rate(P, cv, c):
    """Whether the normal function of contact c, at zero within round-off at the start of a
    step (the instant of its last event), leaves zero on the side where its mode holds: a
    body that has just bounced, a contact that has just closed or opened."""
    kind = int(P[c, KIND])
    if kind == PENDULUM:
        if P[c, ROLE] != BEARING:
            return False
    elif kind != PLANE and kind != CIRCLE and kind != RIGID and kind != FORCE_CURVE:
        return False
    g = cv[c, G0]
    if g > 0.0 or g < -1e-12 * (abs(P[c, GAP]) + 1e-3):
        return False
    rate = cv[c, PDOT]
    closed = cv[c, ACT] > 0.5
    if kind == RIGID:
        return not closed and rate < 0.0
    return rate > 0.0 if closed else rate < 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def mode_holds(P, c, closed, cv0, cv1, dd0, dd1, h, o):
    """Whether contact c keeps its mode over the whole step by a bound on its penetration p,
    so that its normal function is positive at every sample (``sign_kept``). On the cubic
    Hermite of the link displacement, d(theta) = h00 d0 + h01 d1 + h (h10 d0' + h11 d1'): for
    a plane, p is linear in d, so p(theta) is the cubic Hermite of (p, p') at the ends; for a
    circle, p is convex in d and changes by at most |I - a a^T|_2 |delta|_1 <= (1 + |a|^2)
    |delta|_1 when d changes by delta, so p <= max(p0, p1) + that bound on the terms in d'.
    Closed contacts are bounded only for a plane whose function is p itself (no damper, or
    release at the gap), as a force-curve contact's is (its breakpoints' function G1 is
    tested at the step's ends). An element without events always holds. A pendulum bearing's
    compression |u|^2 / (2 R) - a . d is not linear in d: it is sampled (its record row and an
    anti-seismic device have no events)."""
    kind = int(P[c, KIND])
    if not EVENTFUL[kind] or kind == ANTI_SEISMIC:
        return True
    if kind == PENDULUM:
        return P[c, ROLE] != BEARING
    if kind == FORCE_CURVE:
        return sign_kept(closed, cv0[c, PEN], cv1[c, PEN], cv0[c, PDOT], cv1[c, PDOT], h)
    if kind != PLANE and kind != CIRCLE and kind != RIGID:
        return False
    if kind == PLANE:
        if closed and not (P[c, CN] == 0.0 or P[c, REL] == RELEASE_GAP):
            return False
        return sign_kept(closed, cv0[c, PEN], cv1[c, PEN], cv0[c, PDOT], cv1[c, PDOT], h)
    if closed:
        return False
    r = 0.0
    a2 = 0.0
    for q in range(3):
        r += abs(dd0[o + q]) + abs(dd1[o + q])
        a2 += P[c, DIR + q] ** 2
    return sign_kept(False, cv0[c, PEN], cv1[c, PEN], (1.0 + a2) * r, 0.0, h)


@numba.njit(cache=True, nogil=True, inline="always")
def sign_kept(closed, p0, p1, r0, r1, h):
    """Whether a penetration that is, over a step h, the cubic Hermite of (p0, r0) and (p1,
    r1) (or is bounded by it) stays positive (closed) or negative (open): the Hermite basis
    h00, h01 >= 0 sums to 1 and |h10|, |h11| <= 4/27, so p lies within 4/27 h (|r0| + |r1|)
    of [min(p0, p1), max(p0, p1)]."""
    margin = (4.0 / 27.0) * h * (abs(r0) + abs(r1))
    if closed:
        return min(p0, p1) - margin > 0.0
    return max(p0, p1) + margin < 0.0


#: the ``jac`` argument of ``evaluate`` as a run-time value: JACOBIAN[0] (no) or [1] (yes). A
#: literal True or False at a call site would compile ``evaluate``, and the laws it calls, once
#: for each
JACOBIAN = np.array([False, True])

#: the same law compiled into its caller: for the step loops whose one call site is hot
evaluate_inline = numba.njit(cache=True, nogil=True, inline="always")(evaluate.py_func)


@numba.njit(cache=True, nogil=True)
def rate_free(P):
    """Whether no contact's force depends on the rate d' (``fem.links.traits`` compiled: a
    rigid contact's bond force depends on the acceleration only; a shock contact's on its
    dampers and friction; a force-curve contact's never; a force function's when its
    function depends on v; any other law's is taken to)."""
    for c in range(P.shape[0]):
        kind = int(P[c, KIND])
        if kind == RIGID or kind == FORCE_CURVE:
            continue
        if kind == FORCE_FUNCTION:
            if P[c, USES_V] != 0.0:
                return False
            continue
        if kind != PLANE and kind != CIRCLE:
            return False
        if P[c, CN] != 0.0 or P[c, MU] > 0.0:
            return False
    return True



@numba.njit(cache=True, nogil=True, inline="always")
def refresh_rates(P, dd, cv):
    """The law at new rates dd when its forces do not depend on them (``rate_free``, or the
    direct loop's contacts): the rate of the penetration (column PDOT), and for a sliding
    contact its slip rate e . Pt d' (e the sliding direction), which is also its friction
    event function G1; for a force function, its archived velocity; the rest of cv
    unchanged."""
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        n0, n1, n2 = cv[c, NRM], cv[c, NRM + 1], cv[c, NRM + 2]
        cv[c, PDOT] = n0 * dd[o] + n1 * dd[o + 1] + n2 * dd[o + 2]
        kind = int(P[c, KIND])
        if kind == FORCE_FUNCTION:
            cv[c, FF_VELOCITY] = cv[c, PDOT]
        if cv[c, MODE] == SLIP and (kind == PLANE or kind == CIRCLE):
            t0, t1, t2 = friction._project(P, c, n0, n1, n2, dd[o], dd[o + 1], dd[o + 2])
            slip = cv[c, SDIR] * t0 + cv[c, SDIR + 1] * t1 + cv[c, SDIR + 2] * t2
            cv[c, VSL] = slip if slip > 0.0 else 0.0
            cv[c, G1] = slip


@numba.njit(cache=True, nogil=True)
def step_dissipation(P, cv0, cv1, d0, d1):
    """Energy (J) the contacts dissipate from state cv0 to cv1 (link displacements d0, d1):
    the normal and tangential dampers (trapezoidal rule on the displacement increments), the
    slip work of friction, and the stored energy lost when a contact opens while still
    penetrated (or given back when it closes penetrated)."""
    lost = 0.0
    for c in range(P.shape[0]):
        kind = int(P[c, KIND])
        if kind == RIGID:
            continue
        # every law's own integral over the step (the slip work of friction)
        lost += cv1[c, SLIPW]
        if kind != PLANE and kind != CIRCLE:
            continue
        o = 3 * int(P[c, BLK])
        lost += 0.5 * (cv0[c, FDN] + cv1[c, FDN]) * (cv1[c, PEN] - cv0[c, PEN])
        for q in range(3):
            lost += 0.5 * (cv0[c, FTD + q] + cv1[c, FTD + q]) * (d1[o + q] - d0[o + q])
        old = cv0[c, ACT] > 0.5
        new = cv1[c, ACT] > 0.5
        if old and not new:
            pen = max(cv1[c, PEN], 0.0)
            lost += 0.5 * P[c, KN] * pen * pen + cv0[c, ENT]
        elif new and not old:
            pen = max(cv0[c, PEN], 0.0)
            lost -= 0.5 * P[c, KN] * pen * pen
    return lost


@numba.njit(cache=True, nogil=True)
def stored_energy(cv):
    """Energy (J) the contacts hold: normal and tangential springs."""
    s = 0.0
    for c in range(cv.shape[0]):
        s += cv[c, ENN] + cv[c, ENT]
    return s


@numba.njit(cache=True, nogil=True)
def support_work(phi0, phi1, e0, e1):
    """Work (J) the imposed motion of the links' dofs does on the structure through the links
    over a step: -(phi0 + phi1)/2 . (d_imposed1 - d_imposed0)."""
    s = 0.0
    for r in range(phi0.size):
        s -= 0.5 * (phi0[r] + phi1[r]) * (e1[r] - e0[r])
    return s


def modes_of(cv: np.ndarray) -> np.ndarray:
    """The modes of the contacts (flags that impose them), from a value array."""
    return cv[:, MODE].astype(float)
