"""The links of a Newmark-family step (``fem.integrators.newmark_family``): the link
accelerations and bond forces by Newton's method on the small system of the links, and the
check that a contact's stiffness stays within what the step resolves."""

from __future__ import annotations

import numba
import numpy as np

from fem import laws
from fem.errors import SolverError
from fem.linalg import NO, YES, small_solve
from fem.laws.columns import BLK, DIR, KIND, MODE
from fem.links.law import (JACOBIAN, evaluate, push_bond, rate_free, refresh_rates, set_bond,
                           bonded as is_bonded)

MAX_ITERATIONS = 40
#: iterations after which the contacts still changing keep their mode for the step
HOLD_AFTER = 12
TOLERANCE = 1e-11
#: the smallest positive normal float64
SMALLEST_NORMAL = 2.2250738585072014e-308


@numba.njit(cache=True, nogil=True, inline="always")
def laws_at(P, Dut, Dvt, y, bd, gd, d, dd, cv_old, cv_new, phi, Jd, Jv, mask, dt):
    """The laws (with their derivatives) at the link accelerations y of an iteration:
    d = Dut + beta dt^2 y, d' = Dvt + gamma dt y, the modes ``mask`` imposed where >= 0."""
    for r in range(y.size):
        d[r] = Dut[r] + bd * y[r]
        dd[r] = Dvt[r] + gd * y[r]
    evaluate(P, d, dd, cv_old, cv_new, phi, Jd, Jv, mask, JACOBIAN[1], dt)


@numba.njit(cache=True, nogil=True, inline="always")
def hold_changing(P, mask, cv_old, cv_new):
    """After HOLD_AFTER iterations without a consistent mode set (a force that jumps where
    p = 0): the contacts that keep changing keep their mode over this step, and change at the
    next one; returns whether any did (the laws are then evaluated again)."""
    held = False
    for c in range(P.shape[0]):
        if mask[c] < 0.0 and cv_new[c, MODE] != cv_old[c, MODE]:
            mask[c] = cv_old[c, MODE]
            held = True
    return held


@numba.njit(cache=True, nogil=True, inline="always")
def solve_links(dt, co, Wa, act, slot, P, s0, s1, wk, flags):
    """The link accelerations y and bond forces of the step (module docstring); returns the
    number of iterations, or -1 when no consistent mode set is found.

    Only the link rows ``act`` (whole links, ``slot[b]`` the position of link b among them,
    -1 for the others) can carry a force over the step: Wa = W[:, act] (3 m, na). The
    Newton system is solved on those rows (and the bond forces); the other rows follow from
    them, y_r = L_r a0 + W[r, act] g[act], by the same Newton update (their rows of the
    Jacobian are those of the identity, plus their coupling to the active rows). With every
    row active this is Newton's method on the whole system."""
    cv_old, cv_new, phi_old, phi = s0.cv, s1.cv, s0.phi, s1.phi
    Dut, Dvt, Da0, y, d, dd, R, g, Law = (wk.Dut, wk.Dvt, wk.Da0, wk.y, wk.d, wk.dd, wk.R,
                                          wk.g, wk.Law)
    Jd, Jv, Jac, z, bonded, rhs_l, res_l = wk.Jd, wk.Jv, wk.Jac, wk.z, wk.bonded, wk.rhs_l, \
        wk.res_l
    beta, gamma, alpha = co.beta, co.gamma, co.alpha
    m3 = Wa.shape[0]
    na = act.size
    s = 1.0 + alpha
    bd = beta * dt * dt
    gd = gamma * dt
    nr = 0
    for c in range(P.shape[0]):
        if is_bonded(P, c, cv_old)[0]:
            bonded[nr] = c
            nr += 1
    N = na + nr
    if bd == 0.0 and nr == 0 and rate_free(P):
        # explicit (central differences) and no force depends on d': the forces follow from
        # the predicted displacements alone, and the accelerations from them, without Newton
        for r in range(m3):
            d[r] = Dut[r]
            dd[r] = Dvt[r]
        evaluate(P, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, JACOBIAN[0], dt)
        loaded = False
        for k in range(na):
            r = act[k]
            g[r] = s * phi[r] - alpha * phi_old[r]
            loaded = loaded or g[r] != 0.0
        for r in range(m3):
            acc = Da0[r]
            if loaded:
                for k in range(na):
                    acc += Wa[r, k] * g[act[k]]
            y[r] = acc
            dd[r] = Dvt[r] + gd * acc
        refresh_rates(P, dd, cv_new)
        return 0
    for r in range(m3):
        acc = Da0[r]
        for k in range(na):
            acc += Wa[r, k] * phi_old[act[k]]
        y[r] = acc
    for k in range(nr):
        z[na + k] = is_bonded(P, bonded[k], cv_old)[1]
    scale0 = 0.0
    for r in range(m3):
        scale0 = max(scale0, abs(y[r]), abs(Da0[r]), abs(Law[r]))
    mask = wk.mask
    for c in range(P.shape[0]):
        mask[c] = flags[c]
    held = False
    it = 0
    while it < MAX_ITERATIONS:
        laws_at(P, Dut, Dvt, y, bd, gd, d, dd, cv_old, cv_new, phi, Jd, Jv, mask, dt)
        if it >= HOLD_AFTER and not held:
            held = hold_changing(P, mask, cv_old, cv_new)
            if held:
                continue
        for k in range(nr):
            c = bonded[k]
            lam = z[na + k]
            set_bond(P, c, cv_new, lam, NO)
            push_bond(P, c, lam, phi)
        for k in range(na):
            r = act[k]
            g[r] = s * phi[r] - alpha * phi_old[r]
        rn = 0.0
        scale = scale0
        # the round-off of the link forces: a stiff spring's force k (d - anchor) is known to
        # k times the round-off of d, however small the force (the gross force k |d|)
        gross = 0.0
        for k in range(na):
            r = act[k]
            b = r // 3
            p = r - 3 * b
            f = 0.0
            for q in range(3):
                f += abs(Jd[b, p, q]) * abs(d[3 * b + q])
            gross = max(gross, f)
        widest = 0.0
        for r in range(m3):
            wg = 0.0
            wsum = 0.0
            for k in range(na):
                wg += Wa[r, k] * g[act[k]]
                wsum += abs(Wa[r, k])
            R[r] = y[r] - Da0[r] - wg
            rn = max(rn, abs(R[r]))
            scale = max(scale, abs(y[r]), abs(wg))
            widest = max(widest, wsum)
        scale = max(scale, s * widest * gross)
        for k in range(nr):
            c = bonded[k]
            o = 3 * int(P[c, BLK])
            e = 0.0
            for q in range(3):
                e += P[c, DIR + q] * (y[o + q] + Law[o + q])
            res_l[k] = e
            rn = max(rn, abs(e))
        # a scale whose relative tolerance is below the smallest normal number has no
        # relative precision left (a motion that has died out into subnormal numbers)
        if rn <= TOLERANCE * scale or scale * TOLERANCE < SMALLEST_NORMAL:
            for k in range(nr):
                set_bond(P, bonded[k], cv_new, z[na + k], YES)
            return it
        for r in range(N):
            for q in range(N):
                Jac[r, q] = 0.0
        ma = na // 3
        for kr in range(na):
            r = act[kr]
            Jac[kr, kr] = 1.0
            for kb in range(ma):
                b = act[3 * kb] // 3
                for p in range(3):
                    w = Wa[r, 3 * kb + p]
                    if w == 0.0:
                        continue
                    for q in range(3):
                        Jac[kr, 3 * kb + q] -= s * w * (bd * Jd[b, p, q] + gd * Jv[b, p, q])
            rhs_l[kr] = -R[r]
        for k in range(nr):
            c = bonded[k]
            ob = 3 * slot[int(P[c, BLK])]
            for q in range(3):
                nq = P[c, DIR + q]
                Jac[na + k, ob + q] = nq
                for kr in range(na):
                    Jac[kr, na + k] += s * Wa[act[kr], ob + q] * nq
            rhs_l[na + k] = -res_l[k]
        if not small_solve(Jac, rhs_l, N):
            return -1
        if na < m3:
            # the rows without a force: their Newton update from the active rows' one
            for r in range(m3):
                if slot[r // 3] >= 0:
                    continue
                dy = -R[r]
                for kb in range(ma):
                    b = act[3 * kb] // 3
                    for p in range(3):
                        w = Wa[r, 3 * kb + p]
                        if w == 0.0:
                            continue
                        for q in range(3):
                            dy += s * w * (bd * Jd[b, p, q] + gd * Jv[b, p, q]) * \
                                rhs_l[3 * kb + q]
                for k in range(nr):
                    c = bonded[k]
                    ob = 3 * slot[int(P[c, BLK])]
                    for q in range(3):
                        dy -= s * Wa[r, ob + q] * P[c, DIR + q] * rhs_l[na + k]
                y[r] += dy
        for kr in range(na):
            y[act[kr]] += rhs_l[kr]
        for k in range(nr):
            z[na + k] += rhs_l[na + k]
        it += 1
    return -1


def resolvable(P, Wl, bd, links, label, t):
    """A contact whose stiffness dwarfs the step's (k (1 + alpha) beta dt^2 w > 1e12, w the
    compliance L S^-1 L^T along the link) would balance its load with a penetration below the
    round-off of the displacements: stop with the link named."""
    for c in range(P.shape[0]):
        o = 3 * int(P[c, BLK])
        check_link(P, c, Wl[o:o + 3, o:o + 3], bd, links, label, t)


def check_link(P, c, Wbb, bd, links, label, t):
    """``resolvable`` for contact c, Wbb (3, 3) the compliance of its link."""
    k = laws.of_code(P[c, KIND]).stiffness(P[c])
    if not k > 0:
        return
    w = float(np.max(np.linalg.eigvalsh(Wbb)))
    ratio = k * bd * w
    if ratio > 1e12 or not np.isfinite(ratio):
        raise SolverError(
            f"{label}: link '{links.link_of(c)}': its contact stiffness {k:.3g} N/m "
            f"is {ratio:.3g} times the stiffness of the step (at t = {t:.9g} s): its "
            f"penetrations would be below the round-off of the displacements; give it a "
            f"stiffness below 1e12 times the step's, or use an impact link (a rigid "
            f"contact)")
