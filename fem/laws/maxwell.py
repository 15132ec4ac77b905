"""Maxwell links: a linear spring in series with a linear dashpot, along a direction.

The link acts on the elongation u = n . d of its relative translation d (``fem.links.geometry``:
one node, d is the node's translation; two nodes, d = u_first - u_second) along the unit
direction n. The dashpot's elongation e is the law's internal variable; the force the link
carries, positive in tension, is

    F = k (u - e) = c e',

and it pulls the first node back along -n (the second along +n). With y = u - e the spring's
stretch, y' = u' - y / tau, tau = c / k: the law integrates this exactly over a step along the
cubic Hermite path of u between the committed state (u0, u0') and the trial one (u1, u1'),

    y1 = y0 exp(-h / tau) + int_0^h exp(-s / tau) u'(h - s) ds,

in closed form through the moments mu_j = int_0^1 r^j exp(-x r) dr, x = h / tau, so that a
step of any size (a stage, a step cut at an event, an archived instant of a dense output)
carries the state from the last committed one. The force depends on u1 and u1': the implicit
schemes get both derivatives. At h = 0 the spring takes the whole increment (the dashpot
cannot move in no time): the element starts with e = 0, an initial displacement stretching
the spring.

It stores 1/2 k y^2 and dissipates int F^2 / c dt over a step (Simpson's rule on the Hermite
path: the value at mid-step comes from the same exact integration).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.laws.axial import LOOP, commit, motion
from fem.laws.columns import (A_FN, A_LAM, A_PEN, DIR, EVOLVING, EVOLVING_RATE, FN, PDOT, PEN,
                              own)
from fem.laws.contract import (Feature, Law, Sample, Series, along, axial_rows,
                               mode_phase)

#: the kind code of a Maxwell contact (column KIND; the registry checks codes are unique)
MAXWELL = 3
#: its own columns (given by the registry's layout, ``fem.laws.columns.own``): the spring's
#: stiffness k and the dashpot's damping c; the unit direction n is the shared DIR (3)
OWN = own(parameters=(1, 1))
STIFFNESS, DAMPING = OWN.P
#: value columns: the elongation u (PEN) and its rate (PDOT), the force F (FN), the dashpot's
#: elongation e (EVOLVING, an evolving law's variable) and its rate F / c (EVOLVING_RATE), the
#: spring's energy (ENN), the energy dissipated over the step (SLIPW)
ELONGATION, RATE, FORCE, DASHPOT = PEN, PDOT, FN, EVOLVING


@numba.njit(cache=True, nogil=True)
def moments(x):
    """(mu0, mu1, mu2), mu_j = int_0^1 r^j exp(-x r) dr, for x >= 0, to round-off."""
    if x < 1.0:
        # series: mu_j = sum_i (-x)^i / (i! (j + 1 + i))
        m0 = m1 = m2 = 0.0
        term = 1.0
        for i in range(30):
            m0 += term / (i + 1)
            m1 += term / (i + 2)
            m2 += term / (i + 3)
            term *= -x / (i + 1)
            if abs(term) < 1e-18:
                break
        return m0, m1, m2
    e = math.exp(-x)
    m0 = -math.expm1(-x) / x
    m1 = (m0 - e) / x
    m2 = (2.0 * m1 - e) / x
    return m0, m1, m2


@numba.njit(cache=True, nogil=True)
def stretch(tau, h, y0, du, v0, v1):
    """(y1, dy1/du1, dy1/dv1): the spring's stretch after a step h along the cubic Hermite
    path from (u0, v0) to (u0 + du, v1), from y0 (module docstring)."""
    if h <= 0.0:
        return y0 + du, 1.0, 0.0
    x = h / tau
    m0, m1, m2 = moments(x)
    a = 6.0 * (m1 - m2)
    b = h * (m0 - 4.0 * m1 + 3.0 * m2)
    y1 = y0 * math.exp(-x) + du * a + h * (v1 * m0 - (2.0 * v0 + 4.0 * v1) * m1
                                           + 3.0 * (v0 + v1) * m2)
    return y1, a, b


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The trial state of Maxwell contact c after a step h from its committed values cv_old:
    force on the first node into phi (3 at o), derivatives into Jd, Jv (block o // 3) when
    ``jac``, values into cv_new."""
    k, damping = P[c, STIFFNESS], P[c, DAMPING]
    tau = damping / k
    u1, v1 = motion(P, c, o, d, dd)
    u0, v0 = cv_old[c, ELONGATION], cv_old[c, RATE]
    y0 = u0 - cv_old[c, DASHPOT]
    y1, dy_du, dy_dv = stretch(tau, h, y0, u1 - u0, v0, v1)
    f1 = k * y1
    lost = 0.0
    if h > 0.0:
        # Simpson's rule on F^2 / c, the mid-step value from the Hermite path's half
        um = 0.5 * (u0 + u1) + 0.125 * h * (v0 - v1)
        vm = 1.5 * (u1 - u0) / h - 0.25 * (v0 + v1)
        ym = stretch(tau, 0.5 * h, y0, um - u0, v0, vm)[0]
        f0, fm = k * y0, k * ym
        lost = h * (f0 * f0 + 4.0 * fm * fm + f1 * f1) / (6.0 * damping)
    commit(P, c, o, u1, v1, f1, k * dy_du, k * dy_dv, 0.5 * k * y1 * y1, lost, cv_new, phi,
           Jd, Jv, jac)
    cv_new[c, DASHPOT] = u1 - y1
    cv_new[c, EVOLVING_RATE] = f1 / damping     # e' = F / c


def stiffness(row) -> float:
    """The spring's: the dashpot in series only softens it."""
    return float(row[STIFFNESS])


def traits(row) -> dict:
    """A Maxwell contact (``fem.laws.shock.traits``): its force depends on the rate (the law
    integrates along the step's path) and on an internal variable that evolves."""
    return dict(rate=True, elastic=False, plane_elastic=False, evolving=True, instant=False,
                friction=False, axial=True)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (MAXWELL,)
LAW = Law(
    "maxwell", "a spring in series with a linear dashpot, along a direction",
    (Feature("maxwell", "Maxwell element", rate=True, state=True, evolving=True,
             events=False),),
    (Series("force", "N", "force the element carries, tension positive: k (elongation - "
                          "dashpot_elongation)"),
     Series("elongation", "m", "elongation along `direction`"),
     Series("dashpot_elongation", "m", "the dashpot's elongation (internal variable)")),
    (Sample("maxwell", "maxwell", {"kind": "maxwell", "direction": [1.0, 0.0, 0.0],
                                   "stiffness": 1e3, "damping": 10.0}),),
    OWN)


def read(t, p: dict, components=()) -> None:
    """The keys of a Maxwell link (docs/study_format.md)."""
    p["direction"] = t.direction("direction")
    p["stiffness"] = t.float("stiffness", positive=True)
    p["damping"] = t.float("damping", positive=True)


def needed(p: dict, where: str) -> list:
    return [("maxwell", f"{where}.kind")]


directions = along


def rows(p: dict, nodes: int = 2) -> list:
    return axial_rows(OWN, MAXWELL, p, {STIFFNESS: p["stiffness"], DAMPING: p["damping"]})


def attrs(p: dict, contact_rows) -> dict:
    return dict(stiffness=p["stiffness"], damping=p["damping"], direction=list(p["direction"]),
                loop=LOOP)


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN],
            "dashpot_elongation": v[:, 0, A_LAM]}


# ------------------------------------------------------------------ between events, exactly
phase_key = mode_phase


def exact_phase(P, c: int, mode: tuple, t) -> None:
    """The terms of Maxwell contact c for the exact scheme (``fem.integrators.exact_phases.
    Terms``), its dashpot's elongation e the internal variable i of the state: F = k (u - e),
    u = ell . x + pw . w; the structure gets -F ell, the dashpot moves at F / c and
    dissipates F^2 / c, the imposed motion works F pv."""
    n, nb, N = t.n, t.nb, t.N
    ell, pw, pv, pa = t.rows(c, P[c, DIR:DIR + 3])
    imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
    i = t.internal(c)
    k, cd = P[c, STIFFNESS], P[c, DAMPING]
    y_aff = t.affine(ell, pw, 0.0)
    y_aff[0][2 * n + i] = -1.0
    t.K += k * np.outer(ell, ell)
    t.G[:, i] = k * ell
    t.F[:, :nb] -= k * np.outer(ell, pw)
    t.rates_z[i], t.rates_u[i] = (k / cd) * y_aff[0], (k / cd) * y_aff[1]
    t.stretch[i], t.weights[i] = y_aff[0], k * k / cd
    t.diss.append((k * k / cd, y_aff, y_aff))
    t.support.append((k, y_aff, imposed_rate))
