"""The lean steps of adaptive2: the velocity Verlet steps whose link forces and event test
need no law.

They qualify (``qualifies``) on a modal basis whose stiffness is diagonal and which has no
damping, with plane contacts that have neither damper nor friction, an obstacle that does
not move, and located events. Then a closed contact's force is k p along its row
r = n^T L (p = r . x - gap), the acceleration does not depend on the velocity, and along the
step's cubic Hermite of the link displacement the penetration is the cubic Hermite of
(p, p') at the ends: it keeps its sign over the step when

    min(p0, p1) - 4/27 h (|p0'| + |p1'|) > 0   (closed),
    max(p0, p1) + 4/27 h (|p0'| + |p1'|) < 0   (open),

so that no event can be found in it (``fem.links.law.sign_kept``, the bound the
general loop's crossing test uses). ``segment`` takes such steps in a loop of its own, with the
step rule of ``explicit_steps.apparent_rule`` and the energy terms of the general loop (the
loads' work by the trapezoidal rule of ``kernels.dof_powers``; these contacts dissipate
nothing while their modes hold). It stops before a step that covers an archived knot, whose
bound fails, that wants less than the smallest step or that ends the chunk, and leaves that
step to the general loop (``fem.integrators.explicit_loop.loop``), after evaluating the laws at
the state it reached.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.integrators.adaptive import ACCEPTED, REJECTED, load_at, plan_step
from fem.integrators.explicit_steps import VERLET, apparent_rule
from fem.integrators.kernels import DIVERGENCE_LIMIT, dof_powers, links_at
from fem.laws.columns import ACT, MODE, PEN
from fem.links.law import JACOBIAN, elastic_plane, sign_kept

#: the most steps one call of ``segment`` takes
SEGMENT_STEPS = 1 << 16


@numba.njit(cache=True, nogil=True, _nrt=False)
def segment(ctl, ops, kin, P, R, RS, inv, tau, h, hmax, hmin, tend, dt, k, W, archive, j,
            x, v, a, cv, phi, db, dd, E, wp, w, slope, x1, v1, a1, before, flags, J):
    """Lean steps from local time tau in place (module docstring); returns (tau, h, steps
    taken). wp holds the loads at tau and is kept so; the buffer's contact values, forces
    and link displacements are evaluated at the end when a step was taken."""
    n = x.size
    nc = P.shape[0]
    kd = ops.Kdiag
    B = ops.B
    taken = 0
    knot = j * dt if j <= k else np.inf
    while taken < SEGMENT_STEPS:
        hs, lands = plan_step(tau, max(h, hmin), tend, hmax)
        if lands or knot <= (tau + hs) * (1.0 + 1e-14) + 1e-300:
            break
        load_at(tau + hs, dt, k, W, w, slope)
        for i in range(n):
            vh = v[i] + 0.5 * hs * a[i]
            x1[i] = x[i] + hs * vh
            v1[i] = vh
            f = 0.0
            for c in range(w.size):
                f += B[i, c] * w[c]
            a1[i] = (f - kd[i] * x1[i]) * inv[i]
        for c in range(nc):
            if cv[c, ACT] > 0.5:
                gap, stiff = elastic_plane(P, c)
                p = -gap
                for i in range(n):
                    p += R[c, i] * x1[i]
                fn = stiff * p
                for i in range(n):
                    a1[i] -= fn * RS[c, i]
        dxs = 0.0
        das = 0.0
        bad = False
        for i in range(n):
            v1[i] += 0.5 * hs * a1[i]
            dxs += (x1[i] - x[i]) ** 2
            das += (a1[i] - a[i]) ** 2
            bad = bad or not abs(x1[i]) <= DIVERGENCE_LIMIT
        r = apparent_rule(ctl, VERLET, dxs, das)
        if bad or not r >= hmin:
            break
        wanted = min(r, hmax)
        if hs > 1.5 * wanted and hs > hmin * (1.0 + 1e-12):
            ctl[REJECTED] += 1
            h = wanted
            continue
        # every contact keeps its mode over the step, or the general loop takes it
        held = True
        for c in range(nc):
            p0 = cv[c, PEN]
            p1 = -elastic_plane(P, c)[0]
            r0 = 0.0
            r1 = 0.0
            for i in range(n):
                p1 += R[c, i] * x1[i]
                r0 += R[c, i] * v[i]
                r1 += R[c, i] * v1[i]
            held = sign_kept(cv[c, ACT] > 0.5, p0, p1, r0, r1, hs)
            if not held:
                break
            before[c, PEN] = p1
        if not held:
            break
        for c in range(nc):
            cv[c, PEN] = before[c, PEN]
        work = 0.0
        for i in range(n):
            pw, _ = dof_powers(i, x1[i] - x[i], B, ops.Cd, ops.Ci, ops.Cp, wp, w, v, v1)
            work += pw
            x[i] = x1[i]
            v[i] = v1[i]
            a[i] = a1[i]
        E[0] += 0.5 * work
        for c in range(w.size):
            wp[c] = w[c]
        tau += hs
        taken += 1
        ctl[ACCEPTED] += 1
        h = min(max(r, hmin), hmax, 1.2 * max(h, hs))
    if taken:
        for c in range(nc):
            flags[c] = cv[c, MODE]
        links_at(P, kin, x, v, wp, cv, before, phi, db, dd, flags, J, J, JACOBIAN[0], 0.0)
        for c in range(nc):
            for q in range(cv.shape[1]):
                cv[c, q] = before[c, q]
    return tau, h, taken
