"""The lean steps of the Newmark family: the steps that are never undone and whose link
forces the predictor alone gives (the body ``LEAN`` of ``fem.integrators.newmark_loop``).

With ``events = "step"`` no step is computed and then refused, so the state is updated in
place (one buffer, no copy and no swap). Two cases qualify:

* no links: the step is the predictor, the solve and the update;
* central differences (beta = 0, alpha = 0) with plane shocks that have neither damper nor
  friction and an obstacle that does not move: with beta = 0 the displacement at the end of
  the step is the predictor u~, so each contact's penetration p = n . (L u~) - gap, its mode
  (closed where the law's contact function is positive) and its force k p follow from u~
  alone (``fem.laws.shock.normal_force``), with no iteration; the acceleration is a0 plus
  the force times the column S^-1 L^T n of the contact. Such contacts dissipate nothing (no
  damper, no friction, and a contact opens or closes at a step where its penetration is not
  positive), so the energy terms are the work of the loads and of the structural dampers.

The steps run in ``segment``, a loop that stops only at a step that is archived, changes a
contact's mode or diverges; the work of those steps (the law in full, the event log, the
archive) is done by the loop's skeleton outside it, so that the few arrays of a step are all
the segment holds. The law is evaluated in full (``lean_settle``, with
``fem.integrators.kernels.links_at``) where its values are read: archived instants, steps
where a contact changes mode (the event log), and the end of the call; between them the
contact values of the buffer keep their last evaluation.
"""

from __future__ import annotations

import numba
import numpy as np

from fem.integrators.kernels import DIVERGENCE_LIMIT, links_at, step_powers
from fem.integrators.newmark_steps import (advance_state, diagonal_solve, loads_diagonal,
                                           predict_solve)
from fem.laws.columns import ACT, BLK, DIR
from fem.links.law import JACOBIAN, elastic_plane

#: uncoupled systems up to this many modes take a step in one pass (``segment``)
FUSED_MODES = 4


def contact_rows(P, L) -> np.ndarray:
    """R (nc, n): row c is n_c^T L_c, so that the penetration of plane contact c is
    R[c] . x - gap."""
    n = L.shape[1]
    rows = np.zeros((P.shape[0], n))
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        rows[c] = P[c, DIR:DIR + 3] @ L[o:o + 3].toarray()
    return rows


def contact_columns(P, Z) -> np.ndarray:
    """(nc, n): row c is S^-1 L_c^T n_c (Z = S^-1 L^T, dense (n, 3 m))."""
    cols = np.zeros((P.shape[0], Z.shape[0]))
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        cols[c] = Z[:, o:o + 3] @ P[c, DIR:DIR + 3]
    return cols


@numba.njit(cache=True, nogil=True, inline="always")
def first_loads(sops, ops, W, i0, n, energy, f0):
    """f0 = B w at the first knot of a call when the energy terms are summed over uncoupled
    equations (``segment`` then carries each step's loads to the next)."""
    if energy and sops.kind == 1 and ops.Kdiag.size == n:
        B = ops.B
        for j in range(n):
            f0[j] = 0.0
        for c in range(B.shape[1]):
            for j in range(n):
                f0[j] += B[j, c] * W[i0, c]


@numba.njit(cache=True, nogil=True, inline="always")
def segment(i, k, dt, co, ops, sops, W, archive, s0, x, v, a, ut, vt, f, f0, wk, e, P, R,
             RS, closed, energy):
    """Steps i + 1, i + 2, ... in place up to the first one that is archived, changes a
    contact's mode or diverges, or to k: returns (that step, changed, diverged). A loop of
    its own, with the work between those steps outside it."""
    n = x.size
    beta, gamma = co.beta, co.gamma
    B, Cd, Ci, Cp = ops.B, ops.Cd, ops.Ci, ops.Cp
    diagonal = sops.kind == 1 and ops.Kdiag.size == n
    cdiag = ops.Cdiag
    # a few uncoupled modes: one pass over them (the chain of a step's loads and stores is
    # its cost); more: the passes of the general case, which the compiler vectorizes
    fused = diagonal and n <= FUSED_MODES
    while i < k:
        i += 1
        if fused:
            # the whole step mode by mode without the contact forces, then each closed
            # contact's force added along its column (its penetration is that of the new
            # displacement: with links beta = 0, so the force does not move it)
            work, damped, bad = _diagonal_step(dt, co, ops, W, i, x, v, a, f, f0,
                                               sops.diag_inv, ut, energy)
            changed, extra = _contact_forces(P, R, RS, x, a, v, gamma * dt, ut, cdiag,
                                             closed, True, energy)
            if energy:
                e[0] += 0.5 * work
                e[1] += 0.5 * (damped + extra)
        else:
            predict_solve(dt, co, ops, sops, W, i, s0, wk, a)
            changed, _ = _contact_forces(P, R, RS, ut, a, v, 0.0, ut, cdiag, closed, False,
                                         False)
            bad = 0
            if diagonal:
                # the loads' work with B w1 (f, from the predictor: alpha = 0 with links)
                # and B w0 (the previous step's f), the dampers' with C diagonal (summed
                # even when not kept: a branch in the loop would stop its vectorization)
                work = 0.0
                damped = 0.0
                for j in range(n):
                    pw, pd, _, b = _take_diagonal(j, ut[j], vt[j], a[j], dt, beta, gamma, x,
                                                  v, f, f0, cdiag, True)
                    work += pw
                    damped += pd
                    bad += b
                if energy:
                    e[0] += 0.5 * work
                    e[1] += 0.5 * damped
            elif energy:
                w0, w1 = W[i - 1], W[i]
                for j in range(n):
                    ut[j], vt[j] = advance_state(ut[j], vt[j], a[j], dt, beta, gamma)
                work, damped = step_powers(B, Cd, Ci, Cp, w0, w1, x, ut, v, vt)
                for j in range(n):
                    x[j] = ut[j]
                    v[j] = vt[j]
                    bad += 0 if abs(x[j]) <= DIVERGENCE_LIMIT else 1
                e[0] += 0.5 * work
                e[1] += 0.5 * damped
            else:
                for j in range(n):
                    x1, v1 = advance_state(ut[j], vt[j], a[j], dt, beta, gamma)
                    x[j] = x1
                    v[j] = v1
                    bad += 0 if abs(x1) <= DIVERGENCE_LIMIT else 1
        if bad or changed or archive[i]:
            return i, changed, bad > 0
    return i, False, False


@numba.njit(cache=True, nogil=True, inline="always")
def _take_diagonal(j, u1, v1, aj, dt, beta, gamma, x, v, f, f0, cd, energy):
    """Coordinate j of an uncoupled step from its predictors (u1, v1) and acceleration aj:
    the new x[j], v[j] in place and, with ``energy``, twice the work of the loads (f, f0 at
    the ends of the step, f0 then advanced) and of the diagonal damper cd[j] (trapezoidal
    rules). Returns (work, damper work, displacement increment, 1 if diverged else 0)."""
    x1, v2 = advance_state(u1, v1, aj, dt, beta, gamma)
    dx = x1 - x[j]
    pw = 0.0
    pd = 0.0
    if energy:
        pw = dx * (f[j] + f0[j])
        pd = dx * cd[j] * (v[j] + v2)
        f0[j] = f[j]
    x[j] = x1
    v[j] = v2
    return pw, pd, dx, 0 if abs(x1) <= DIVERGENCE_LIMIT else 1


@numba.njit(cache=True, nogil=True, inline="always")
def _diagonal_step(dt, co, ops, W, i, x, v, a, f, f0, inv, dxs, energy):
    """A step of uncoupled equations in one pass over the coordinates: the loads f = B w,
    the predictors, a = S^-1 r and the new state, in place; with ``energy`` the sums of
    the loads' work (f0 the previous step's loads) and of the dampers', the displacement
    increments to dxs. Returns (work, damped, number of diverged coordinates)."""
    kd, cd = ops.Kdiag, ops.Cdiag
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    loads_diagonal(co, ops.B, W, i, f)
    work = 0.0
    damped = 0.0
    bad = 0
    for j in range(x.size):
        u1, v1, aj = diagonal_solve(j, dt, beta, gamma, alpha, x, v, a, f, kd, cd, inv)
        pw, pd, dx, b = _take_diagonal(j, u1, v1, aj, dt, beta, gamma, x, v, f, f0, cd, energy)
        a[j] = aj
        dxs[j] = dx
        work += pw
        damped += pd
        bad += b
    return work, damped, bad


@numba.njit(cache=True, nogil=True, inline="always")
def _contact_forces(P, R, RS, q, a, v, gd, dxs, cd, closed, taken, energy):
    """The plane contacts at the displacement q (module docstring): each closed one adds
    its force along its column to a and, when the step is already ``taken`` (the new
    state in place), gd times it to v, with the change of the dampers' work (dxs the
    displacement increments, cd the diagonal of C). Returns (a contact changed mode, that
    change of work)."""
    changed = False
    extra = 0.0
    for c in range(P.shape[0]):
        gap, stiff = elastic_plane(P, c)
        p = -gap
        for j in range(q.size):
            p += R[c, j] * q[j]
        # without a damper the force is k p and both release rules close the contact
        # exactly where p > 0 (``fem.laws.shock.normal_force``)
        on = p > 0.0
        if on:
            fn = stiff * p
            for j in range(q.size):
                da = -fn * RS[c, j]
                a[j] += da
                if taken:
                    v[j] += gd * da
                    if energy:
                        extra += dxs[j] * cd[j] * gd * da
        if on != (closed[c] > 0.5):
            changed = True
            closed[c] = 1.0 if on else 0.0
    return changed, extra


#: ``segment`` as a function of its own (compiled with the same flags as the lean loop)
segment_call = numba.njit(cache=True, nogil=True, _nrt=False,
                          fastmath={"reassoc", "contract"})(segment.py_func)


@numba.njit(cache=True, nogil=True, _nrt=False)
def lean_settle(P, kin, s0, w, lean, wk):
    """The law in full at the state s0 (loads w) into its contact values, forces and link
    displacements; lean.cvs gets the values it replaces, wk.mask the modes the law found
    (the law decides a contact at the round-off of its penetration)."""
    x, v, cv = s0.x, s0.v, s0.cv
    before, flags, Jd, Jv, closed = lean.cvs, wk.flags, lean.Jd, lean.Jv, wk.mask
    for r in range(cv.shape[0]):
        for q in range(cv.shape[1]):
            before[r, q] = cv[r, q]
    links_at(P, kin, x, v, w, before, cv, s0.phi, s0.db, s0.dd, flags, Jd, Jv, JACOBIAN[0],
             0.0)
    for r in range(cv.shape[0]):
        closed[r] = cv[r, ACT]
