"""The Law protocol: what a link law gives every transient scheme, compiled.

A link acts on the relative translation d (3,) of its node against an obstacle (or of its
first node against its second) and on its rate d' (3,): ``d = L x + Lw w(t)`` on the
coordinates x a scheme integrates (free dofs or modal coordinates), the second term being the
imposed motion of the link's dofs (``fem.links.linkset``). A link is one or more *contacts*
(two for a two-planes obstacle); each contact c has a parameter row ``P[c]`` and a value row
``CV[c]`` (columns below), double-buffered by the schemes: the row at the start of a step
(``cv_old``) and the one being computed (``cv_new``).

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
* the change of state at an event, :func:`affect`.

Laws (kinds): ``PLANE`` and ``CIRCLE`` penalty shocks (``fem.links.shock``) with Coulomb or
unidirectional friction (``fem.links.friction``); ``RIGID`` impacts, whose bond force is a
constraint the scheme solves and whose impact is a velocity jump (``fem.links.impact``).

Laws are data for the compiled loops: a law is a kind code and a few numbers-only functions;
adding one is a module, a kind code and a branch here.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.links import friction, maxwell, shock

from fem.links.columns import (ACT, ANC, BLK, BONDED, CMP, CN, FDN, FN, FREE, FT, FTD, FTM, G0,
                               G1, KIND, KN, LAM, MAXWELL, MODE, MU, NG, NP, NRM, NV, OPEN, PEN,
                               PDOT, RIGID, SDIR, SLIP, SLIPW, STICK, VSL, ENN, ENT)

__all__ = ["evaluate", "JACOBIAN", "step_dissipation", "stored_energy", "support_work", "affect", "NP",
           "NV", "NG", "FREE"]


@numba.njit(cache=True, nogil=True)
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
    for c in range(P.shape[0]):
        b = int(P[c, BLK])
        o = 3 * b
        kind = int(P[c, KIND])
        if kind == MAXWELL:
            maxwell.trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h)
            continue
        p, pd, n0, n1, n2, rho = shock.kinematics(P, c, d[o], d[o + 1], d[o + 2], dd[o],
                                                  dd[o + 1], dd[o + 2])
        cv_new[c, PEN] = p
        cv_new[c, PDOT] = pd
        cv_new[c, NRM] = n0
        cv_new[c, NRM + 1] = n1
        cv_new[c, NRM + 2] = n2
        cv_new[c, SLIPW] = 0.0
        cv_new[c, VSL] = 0.0
        cv_new[c, FTM] = 0.0
        cv_new[c, ENT] = 0.0
        for q in range(3):
            cv_new[c, FTD + q] = 0.0
            cv_new[c, FT + q] = 0.0
            cv_new[c, SDIR + q] = cv_old[c, SDIR + q]
        if kind == RIGID:
            mode = int(cv_old[c, MODE]) if flags[c] < 0.0 else int(flags[c])
            cv_new[c, MODE] = mode
            cv_new[c, ACT] = 1.0 if mode == BONDED else 0.0
            cv_new[c, LAM] = cv_old[c, LAM] if mode == BONDED else 0.0
            cv_new[c, FN] = cv_new[c, LAM]
            cv_new[c, FDN] = 0.0
            cv_new[c, ENN] = 0.0
            cv_new[c, G0] = cv_new[c, LAM] if mode == BONDED else -p
            cv_new[c, G1] = 1.0
            cv_new[c, CMP] = cv_old[c, CMP] if mode == BONDED else 0.0
            for q in range(3):
                cv_new[c, ANC + q] = d[o + q]
            continue
        # ------------------------------------------------------------ normal shock law
        fn, chi = shock.normal_force(P, c, p, pd)
        if flags[c] < 0.0:
            closed = chi > 0.0
        else:
            closed = flags[c] > 0.5
        cv_new[c, ACT] = 1.0 if closed else 0.0
        # positive while the mode holds: closed while chi > 0, open while chi <= 0
        cv_new[c, G0] = chi if closed else -chi
        cv_new[c, G1] = 1.0
        if not closed:
            cv_new[c, MODE] = OPEN
            cv_new[c, FN] = 0.0
            cv_new[c, FDN] = 0.0
            cv_new[c, ENN] = 0.0
            for q in range(3):
                cv_new[c, ANC + q] = d[o + q]
            continue
        cv_new[c, FN] = fn
        cv_new[c, FDN] = P[c, CN] * pd
        cv_new[c, ENN] = 0.5 * P[c, KN] * p * p if p > 0.0 else 0.0
        shock.add_normal(P, c, b, o, fn, pd, n0, n1, n2, rho, dd, phi, Jd, Jv, jac)
        if P[c, MU] <= 0.0:
            cv_new[c, MODE] = STICK
            for q in range(3):
                cv_new[c, ANC + q] = cv_old[c, ANC + q]
            continue
        # ------------------------------------------------------------ friction
        if flags[c] < 0.0:
            mode = -1
        else:
            mode = int(flags[c])
        friction.tangential(P, c, b, o, d, dd, fn, n0, n1, n2, cv_old, cv_new, phi, Jd, Jv,
                            jac, mode)


@numba.njit(cache=True, nogil=True)
def has_events(P, c):
    """Whether contact c's law has event functions (a Maxwell element has none: its G0 and
    G1 stay positive)."""
    return int(P[c, KIND]) != MAXWELL


#: the ``jac`` argument of ``evaluate`` as a run-time value: JACOBIAN[0] (no) or [1] (yes). A
#: literal True or False at a call site would compile ``evaluate``, and the laws it calls, once
#: for each
JACOBIAN = np.array([False, True])

#: the same law compiled into its caller: for the step loops whose one call site is hot
evaluate_inline = numba.njit(cache=True, nogil=True, inline="always")(evaluate.py_func)


@numba.njit(cache=True, nogil=True)
def rate_free(P):
    """Whether no contact's force depends on the rate d' (``fem.links.traits`` compiled: a
    rigid contact's bond force depends on the acceleration only)."""
    for c in range(P.shape[0]):
        kind = int(P[c, KIND])
        if kind == MAXWELL:
            return False
        if kind != RIGID and (P[c, CN] != 0.0 or P[c, MU] > 0.0):
            return False
    return True



@numba.njit(cache=True, nogil=True, inline="always")
def refresh_rates(P, dd, cv):
    """The rate of the penetration (column PDOT) at the rates dd, the rest of cv unchanged: the
    law at a new d' when its forces do not depend on d' (``rate_free``)."""
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        cv[c, PDOT] = (cv[c, NRM] * dd[o] + cv[c, NRM + 1] * dd[o + 1]
                       + cv[c, NRM + 2] * dd[o + 2])


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
        if kind == MAXWELL:
            # the law's own integral over the step
            lost += cv1[c, SLIPW]
            continue
        o = 3 * int(P[c, BLK])
        lost += 0.5 * (cv0[c, FDN] + cv1[c, FDN]) * (cv1[c, PEN] - cv0[c, PEN])
        for q in range(3):
            lost += 0.5 * (cv0[c, FTD + q] + cv1[c, FTD + q]) * (d1[o + q] - d0[o + q])
        lost += cv1[c, SLIPW]
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


def affect(P, c: int, g: int, cv: np.ndarray, d: np.ndarray) -> str:
    """Change the mode of shock contact c at an event of its function g (0 normal, 1
    friction), in place in the value row ``cv`` at link displacements d. Returns the event
    kind: "impact" (contact closes), "separation", "slip" or "stick" (friction). Rigid
    contacts are handled by ``fem.links.impact``."""
    o = 3 * int(P[c, BLK])
    if g == 0:
        if cv[c, ACT] > 0.5:
            cv[c, MODE] = OPEN
            cv[c, ACT] = 0.0
            return "separation"
        cv[c, MODE] = STICK
        cv[c, ACT] = 1.0
        cv[c, ANC:ANC + 3] = d[o:o + 3]
        return "impact"
    if int(cv[c, MODE]) == STICK:
        ft = cv[c, FT:FT + 3]
        size = float(np.linalg.norm(ft))
        # the spring is stretched along the sliding to come: the force on the node opposes it
        cv[c, SDIR:SDIR + 3] = -ft / size if size > 0 else cv[c, SDIR:SDIR + 3]
        cv[c, MODE] = SLIP
        return "slip"
    friction.stick_anchor(P, c, cv, d, o)
    cv[c, MODE] = STICK
    return "stick"
