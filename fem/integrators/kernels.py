"""Compiled pieces every scheme's step loop shares: the links' kinematics and forces on the
integrated coordinates, the energy terms of a step (one implementation), the archived row of
an instant, the detection of a link event inside a step, and the divergence test.

State buffers (``Buffers``) are double: a step reads buffer ``cur`` and writes ``1 - cur``;
taking the step is flipping ``cur``. The energy accumulators E (2, NE) hold, per buffer, the
external work (loads, and imposed motion through the links), the energy the structural
dampers dissipated and the energy the links dissipated (dampers, friction, impacts, stored
energy lost at a release) since the start of the analysis (J).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from fem.linalg import YES, csr_matvec_add
from fem.laws.columns import ACT, ARCHIVED, BLK, G0, G1, MODE, NA, PDOT, SLIP
from fem.links.law import (JACOBIAN, armed_by_rate, dense_normal, evaluate, hold_internal,
                           mode_holds, normal_at, set_bond, step_dissipation, stored_energy)

#: energy accumulators: external work, structural damping, link dissipation
EW, ES, EL = 0, 1, 2
NE = 3
#: names of the energy series, in the order of the archived energy columns
ENERGY_TERMS = ("kinetic", "potential", "link_energy", "dissipated", "external_work")
#: statuses of the compiled loops
DONE, EVENT, DIVERGED, NOT_SETTLED, FULL, MINSTEP = range(6)
#: a coordinate beyond this (m, or m.kg^0.5 on a modal basis) is a divergence
DIVERGENCE_LIMIT = 1e15
#: samples of a step's dense output where a contact's sign is checked (grazing contacts)
SAMPLES = 4
#: event kinds recorded by the loops (events = "step")
EV_IMPACT, EV_SEPARATION, EV_SLIP, EV_STICK = 0, 1, 2, 3
EVENT_NAMES = ("impact", "separation", "slip", "stick")


class Buffers(NamedTuple):
    """The double state: X, V, A (2, n); CV (2, nc, NV) contact values; PHI (2, 3 m) link
    forces; DB, DD (2, 3 m) link displacements and rates; E (2, NE) energy accumulators."""
    X: np.ndarray
    V: np.ndarray
    A: np.ndarray
    CV: np.ndarray
    PHI: np.ndarray
    DB: np.ndarray
    DD: np.ndarray
    E: np.ndarray


def make_buffers(n: int, nc: int, m3: int, nv: int) -> Buffers:
    return Buffers(np.zeros((2, n)), np.zeros((2, n)), np.zeros((2, n)), np.zeros((2, nc, nv)),
                   np.zeros((2, m3)), np.zeros((2, m3)), np.zeros((2, m3)), np.zeros((2, NE)))


class StateArrays(NamedTuple):
    """One buffer of the state: x, v, a (n,), contact values cv (nc, NV), link forces phi,
    displacements db and rates dd (3 m,), energy accumulators e (NE,)."""
    x: np.ndarray
    v: np.ndarray
    a: np.ndarray
    cv: np.ndarray
    phi: np.ndarray
    db: np.ndarray
    dd: np.ndarray
    e: np.ndarray


@numba.njit(cache=True, nogil=True, inline="always")
def state_at(buf, which):
    """``state_arrays`` in compiled code: views built afresh where they are used, so that a
    loop carries the buffers and a parity instead of two sets of views."""
    return StateArrays(buf.X[which], buf.V[which], buf.A[which], buf.CV[which], buf.PHI[which],
                       buf.DB[which], buf.DD[which], buf.E[which])


def state_arrays(buf: Buffers, which: int) -> StateArrays:
    return StateArrays(buf.X[which], buf.V[which], buf.A[which], buf.CV[which], buf.PHI[which],
                       buf.DB[which], buf.DD[which], buf.E[which])


class Outputs(NamedTuple):
    """Archived rows: time (k,), X, V, A (k, n), CV (k, nc, NV), EN (k, 5) energies."""
    T: np.ndarray
    X: np.ndarray
    V: np.ndarray
    A: np.ndarray
    CV: np.ndarray
    EN: np.ndarray


def make_outputs(rows: int, n: int, nc: int, nv: int) -> Outputs:
    return Outputs(np.empty(rows), np.empty((rows, n)), np.empty((rows, n)), np.empty((rows, n)),
                   np.empty((rows, nc, nv)), np.empty((rows, len(ENERGY_TERMS))))


class EventLog(NamedTuple):
    """Events found by a loop with events = "step": time (s), contact, kind, speed."""
    time: np.ndarray
    contact: np.ndarray
    kind: np.ndarray
    speed: np.ndarray
    count: np.ndarray


def make_log(capacity: int) -> EventLog:
    return EventLog(np.zeros(capacity), np.zeros(capacity, np.int64),
                    np.zeros(capacity, np.int64), np.zeros(capacity), np.zeros(1, np.int64))


# --------------------------------------------------------------------------- algebra
@numba.njit(cache=True, nogil=True, inline="always")
def csr_product(data, indices, indptr, x, out):
    """out = A x (A in CSR parts)."""
    for r in range(out.size):
        s = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            s += data[k] * x[indices[k]]
        out[r] = s


@numba.njit(cache=True, nogil=True, inline="always")
def largest_abs(x):
    """max |x_j| (0 for an empty x), in four running maxima: one maximum's chain of
    comparisons would take a comparison's latency per entry."""
    m0 = m1 = m2 = m3 = 0.0
    n4 = x.size - x.size % 4
    for j in range(0, n4, 4):
        m0 = max(m0, abs(x[j]))
        m1 = max(m1, abs(x[j + 1]))
        m2 = max(m2, abs(x[j + 2]))
        m3 = max(m3, abs(x[j + 3]))
    for j in range(n4, x.size):
        m0 = max(m0, abs(x[j]))
    return max(max(m0, m1), max(m2, m3))


@numba.njit(cache=True, nogil=True, inline="always")
def csr_transpose_add(data, indices, indptr, y, scale, out):
    """out += scale A^T y (A in CSR parts)."""
    for r in range(indptr.size - 1):
        yr = scale * y[r]
        if yr != 0.0:
            for k in range(indptr[r], indptr[r + 1]):
                out[indices[k]] += data[k] * yr


@numba.njit(cache=True, nogil=True, inline="always")
def dense_add(Mat, w, scale, out):
    """out += scale Mat w (Mat (r, nb))."""
    for r in range(Mat.shape[0]):
        s = 0.0
        for c in range(Mat.shape[1]):
            s += Mat[r, c] * w[c]
        out[r] += scale * s


@numba.njit(cache=True, nogil=True)
def instant_loss(ops, x, v, before, after):
    """The energy (J) the links dissipate at an instant whose changes of mode take the
    energy their springs hold from ``before`` to ``after`` (state x, v): the loss, when it
    exceeds the round-off of the mechanical energy, else 0. A contact landed on its
    switching point holds energy at the round-off of that point, which is not dissipation;
    and the energy a spring gains there (a stick that holds more than the sliding force) is
    not taken from the dissipation, which never decreases: the balance shows it."""
    change = before - after
    total = abs(0.5 * quadratic(ops.Md, ops.Mi, ops.Mp, v, v)) + abs(
        0.5 * quadratic(ops.Kd, ops.Ki, ops.Kp, x, x)) + max(before, 0.0)
    return change if change > 1e-13 * total else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def quadratic(data, indices, indptr, x, y):
    """x . A y."""
    s = 0.0
    for r in range(indptr.size - 1):
        t = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            t += data[k] * y[indices[k]]
        s += x[r] * t
    return s


# --------------------------------------------------------------------------- links
@numba.njit(cache=True, nogil=True, inline="always")
def link_kinematics(kin, x, v, w, d, dd):
    """d = L x + Lw w and d' = L x' + Lv w (3 m,)."""
    csr_product(kin.Ld, kin.Li, kin.Lp, x, d)
    csr_product(kin.Ld, kin.Li, kin.Lp, v, dd)
    if kin.imposed:
        dense_add(kin.Lw, w, 1.0, d)
        dense_add(kin.Lv, w, 1.0, dd)


@numba.njit(cache=True, nogil=True, inline="always")
def link_rates(kin, v, w, dd):
    """d' = L x' + Lv w (3 m,) alone (``link_kinematics`` at an unchanged x)."""
    csr_product(kin.Ld, kin.Li, kin.Lp, v, dd)
    if kin.imposed:
        dense_add(kin.Lv, w, 1.0, dd)


@numba.njit(cache=True, nogil=True, inline="always")
def linear_force(ops, x, v, w, out):
    """out = B w - C v - K x."""
    B = ops.B
    for j in range(x.size):
        f = 0.0
        for c in range(w.size):
            f += B[j, c] * w[c]
        out[j] = f
    csr_matvec_add(ops.Kd, ops.Ki, ops.Kp, x, -1.0, out)
    csr_matvec_add(ops.Cd, ops.Ci, ops.Cp, v, -1.0, out)


@numba.njit(cache=True, nogil=True)
def applied_force(ops, kin, x, v, w, phi, links, out):
    """out = B w - C v - K x, plus L^T phi with ``links``: the force the inertia balances."""
    linear_force(ops, x, v, w, out)
    if links:
        csr_transpose_add(kin.Ld, kin.Li, kin.Lp, phi, 1.0, out)


# --------------------------------------------------------------------------- energy
@numba.njit(cache=True, nogil=True, inline="always")
def dof_powers(j, dx, B, Cd, Ci, Cp, w0, w1, v0, v1):
    """Twice the work of the loads and of the structural dampers on dof j over a step of
    displacement increment dx (trapezoidal rule): (dx (B (w0 + w1))_j, dx (C (v0 + v1))_j)."""
    f = 0.0
    for c in range(B.shape[1]):
        f += B[j, c] * (w0[c] + w1[c])
    cv = 0.0
    for k in range(Cp[j], Cp[j + 1]):
        cv += Cd[k] * (v0[Ci[k]] + v1[Ci[k]])
    return dx * f, dx * cv


@numba.njit(cache=True, nogil=True, inline="always")
def step_powers(B, Cd, Ci, Cp, w0, w1, x0, x1, v0, v1):
    """Twice the work of the loads and of the structural dampers over a step from (x0, v0)
    to (x1, v1): ``dof_powers`` summed over the dofs (every new velocity is needed: a damper
    joins two dofs)."""
    work = 0.0
    damped = 0.0
    for j in range(x0.size):
        pw, pd = dof_powers(j, x1[j] - x0[j], B, Cd, Ci, Cp, w0, w1, v0, v1)
        work += pw
        damped += pd
    return work, damped


@numba.njit(cache=True, nogil=True)
def step_powers_dia(B, offsets, Cdia, w0, w1, x0, x1, v0, v1):
    """``step_powers`` with C by diagonals (``dynamics.Operators``), on independent partial
    sums (a chain of additions, one per entry, would bound the loop by the adder's latency).
    A call of its own, not compiled into the step loops (their compile time grows with what
    they inline)."""
    n = x0.size
    work = 0.0
    for c in range(B.shape[1]):
        wc = w0[c] + w1[c]
        if wc == 0.0:
            continue
        s0 = s1 = 0.0
        j = 0
        while j + 2 <= n:
            s0 += B[j, c] * (x1[j] - x0[j])
            s1 += B[j + 1, c] * (x1[j + 1] - x0[j + 1])
            j += 2
        if j < n:
            s0 += B[j, c] * (x1[j] - x0[j])
        work += wc * (s0 + s1)
    d0 = d1 = 0.0
    for q in range(offsets.size):
        o = offsets[q]
        lo = max(0, -o)
        hi = min(n, n - o)
        # slices from where the diagonal starts (no index that might be negative)
        cd = Cdia[q, lo:hi]
        x0q, x1q = x0[lo:hi], x1[lo:hi]
        v0q, v1q = v0[lo + o:hi + o], v1[lo + o:hi + o]
        m = hi - lo
        i = 0
        while i + 2 <= m:
            d0 += (x1q[i] - x0q[i]) * cd[i] * (v0q[i] + v1q[i])
            d1 += (x1q[i + 1] - x0q[i + 1]) * cd[i + 1] * (v0q[i + 1] + v1q[i + 1])
            i += 2
        if i < m:
            d0 += (x1q[i] - x0q[i]) * cd[i] * (v0q[i] + v1q[i])
    return work, d0 + d1


@numba.njit(cache=True, nogil=True)
def close_energy(work, damped, Lw, imposed, P, w0, w1, cv0, cv1, phi0, phi1, d0, d1, E0, E1,
                 quadrature):
    """E1 = E0 + the terms of a step: the sums (work, damped) of ``dof_powers``, the links'
    dissipation (``fem.links.law.step_dissipation``) and the work of the imposed motion of
    the links' dofs (trapezoidal rules, the order of the Newmark family); or, when
    quadrature[2] > 0, the integrals a scheme of higher order computed with its own stages:
    quadrature[0] of the loads' power, [1] of the structural dampers', [4] of phi . d' (the
    power the links give the structure, their stored energy and dissipation), [5] of
    phi . (Lv w) (the imposed motion's part of d'); the links then dissipate
    -[4] - (their stored energy at the end - at the start) and the imposed motion works
    -[5]."""
    if quadrature[2] > 0.0:
        E1[0] = E0[0] + quadrature[0]
        E1[1] = E0[1] + quadrature[1]
        E1[2] = E0[2]
        if P.shape[0]:
            E1[2] -= quadrature[4] + stored_energy(cv1) - stored_energy(cv0)
            E1[0] -= quadrature[5]
        return
    E1[0] = E0[0] + 0.5 * work
    E1[1] = E0[1] + 0.5 * damped
    E1[2] = E0[2]
    if P.shape[0]:
        E1[2] += step_dissipation(P, cv0, cv1, d0, d1)
        if imposed:
            E1[0] += support_work_of(Lw, phi0, phi1, w0, w1)


#: ``close_energy`` compiled into its caller (a hot call site with many arrays)
close_energy_inline = numba.njit(cache=True, nogil=True, inline="always")(close_energy.py_func)


@numba.njit(cache=True, nogil=True)
def support_work_of(Lw, phi0, phi1, w0, w1):
    """-(phi0 + phi1)/2 . Lw (w1 - w0): the work of the links' imposed motion over a step."""
    s = 0.0
    for r in range(Lw.shape[0]):
        de = 0.0
        for c in range(Lw.shape[1]):
            de += Lw[r, c] * (w1[c] - w0[c])
        s -= 0.5 * (phi0[r] + phi1[r]) * de
    return s


@numba.njit(cache=True, nogil=True)
def step_energy(ops, kin, P, x0, x1, v0, v1, w0, w1, cv0, cv1, phi0, phi1, d0, d1, E0, E1,
                quadrature):
    """E1 = E0 + the energy terms of a step from (x0, v0) to (x1, v1): ``step_powers`` on
    every dof, then ``close_energy``."""
    work, damped = step_powers(ops.B, ops.Cd, ops.Ci, ops.Cp, w0, w1, x0, x1, v0, v1)
    close_energy_inline(work, damped, kin.Lw, kin.imposed, P, w0, w1, cv0, cv1, phi0, phi1, d0,
                        d1, E0, E1, quadrature)


#: ``step_energy`` compiled into the explicit steps' loop (a call passes every array of the
#: operators)
step_energy_inline = numba.njit(cache=True, nogil=True, inline="always")(step_energy.py_func)


@numba.njit(cache=True, nogil=True, inline="always")
def archive_row_of(oT, oX, oV, oA, oCV, oEN, row, t, Md, Mi, Mp, Kd, Ki, Kp, x, v, a, cv, E,
                   half_dt):
    """Archive the instant t: the state (with ``half_dt`` > 0 the velocity v - half_dt a,
    the half-step velocity of central differences), the contact values and the energies."""
    n = x.size
    oT[row] = t
    for j in range(n):
        oX[row, j] = x[j]
        oV[row, j] = v[j] - half_dt * a[j]
        oA[row, j] = a[j]
    for c in range(cv.shape[0]):
        for k in range(NA):
            oCV[row, c, k] = cv[c, ARCHIVED[k]]
    oEN[row, 0] = 0.5 * quadratic(Md, Mi, Mp, v, v)
    oEN[row, 1] = 0.5 * quadratic(Kd, Ki, Kp, x, x)
    oEN[row, 2] = stored_energy(cv)
    oEN[row, 3] = E[1] + E[2]
    oEN[row, 4] = E[0]


@numba.njit(cache=True, nogil=True)
def archive_row(out, row, t, ops, x, v, a, cv, E, half_dt):
    """``archive_row_of`` with the outputs and operators as named tuples."""
    archive_row_of(out.T, out.X, out.V, out.A, out.CV, out.EN, row, t, ops.Md, ops.Mi, ops.Mp,
                   ops.Kd, ops.Ki, ops.Kp, x, v, a, cv, E, half_dt)


# --------------------------------------------------------------------------- events
@numba.njit(cache=True, nogil=True)
def g0_at(P, c, closed, d0, dd0, d1, dd1, h, theta, o):
    """The normal event function G0 of contact c (``fem.links.law.normal_at``) on the cubic
    Hermite of the link displacement at fraction theta of a step h."""
    t2 = theta * theta
    t3 = t2 * theta
    h00 = 2 * t3 - 3 * t2 + 1
    h10 = t3 - 2 * t2 + theta
    h01 = -2 * t3 + 3 * t2
    h11 = t3 - t2
    g00 = (6 * t2 - 6 * theta) / h
    g10 = 3 * t2 - 4 * theta + 1
    g01 = (-6 * t2 + 6 * theta) / h
    g11 = 3 * t2 - 2 * theta
    x0 = h00 * d0[o] + h10 * h * dd0[o] + h01 * d1[o] + h11 * h * dd1[o]
    x1 = h00 * d0[o + 1] + h10 * h * dd0[o + 1] + h01 * d1[o + 1] + h11 * h * dd1[o + 1]
    x2 = h00 * d0[o + 2] + h10 * h * dd0[o + 2] + h01 * d1[o + 2] + h11 * h * dd1[o + 2]
    r0 = g00 * d0[o] + g10 * dd0[o] + g01 * d1[o] + g11 * dd1[o]
    r1 = g00 * d0[o + 1] + g10 * dd0[o + 1] + g01 * d1[o + 1] + g11 * dd1[o + 1]
    r2 = g00 * d0[o + 2] + g10 * dd0[o + 2] + g01 * d1[o + 2] + g11 * dd1[o + 2]
    return normal_at(P, c, closed, x0, x1, x2, r0, r1, r2)


@numba.njit(cache=True, nogil=True)
def crossed(P, cv0, cv1, d0, dd0, d1, dd1, h):
    """True when an event function passes from positive to zero or below over the step: at
    its ends, or (normal functions) at the samples of the step's dense output between them (a
    contact that closes and opens again inside the step, a flight shorter than a step). A
    normal function at zero at the start counts as positive when its rate takes it there."""
    for c in range(P.shape[0]):
        if cv0[c, G0] > 0.0 and cv1[c, G0] <= 0.0:
            return True
        if cv0[c, G1] > 0.0 and cv1[c, G1] <= 0.0:
            return True
    for c in range(P.shape[0]):
        closed = cv0[c, ACT] > 0.5
        if not dense_normal(P, c, closed):
            continue
        o = 3 * int(P[c, BLK])
        if mode_holds(P, c, closed, cv0, cv1, dd0, dd1, h, o):
            continue
        positive = cv0[c, G0] > 0.0 or armed_by_rate(P, cv0, c)
        for s in range(1, SAMPLES + 1):
            if s < SAMPLES:
                g = g0_at(P, c, closed, d0, dd0, d1, dd1, h, s / SAMPLES, o)
            else:
                g = cv1[c, G0]
            if g > 0.0:
                positive = True
            elif positive:
                return True
    return False


@numba.njit(cache=True, nogil=True)
def holding(P, cv0, cv1, dd0, dd1, h, out):
    """out[c] = whether contact c keeps its mode over a step h (``crossed``'s bound): the
    locator samples only the others."""
    for c in range(P.shape[0]):
        out[c] = mode_holds(P, c, cv0[c, ACT] > 0.5, cv0, cv1, dd0, dd1, h, 3 * int(P[c, BLK]))


#: ``crossed`` compiled into the explicit steps' loop (a call per step)
crossed_inline = numba.njit(cache=True, nogil=True, inline="always")(crossed.py_func)


@numba.njit(cache=True, nogil=True)
def record_changes_of(P, cv0, cv1, t, ev_time, ev_contact, ev_kind, ev_speed, ev_count):
    """Log the mode changes of a step (events = "step") at time t."""
    for c in range(P.shape[0]):
        m0 = int(cv0[c, MODE])
        m1 = int(cv1[c, MODE])
        if m0 == m1:
            continue
        if (m0 == 0) != (m1 == 0):
            kind = EV_IMPACT if m0 == 0 else EV_SEPARATION
        elif m1 == SLIP:
            kind = EV_SLIP
        else:
            kind = EV_STICK
        log_event(ev_time, ev_contact, ev_kind, ev_speed, ev_count, t, c, kind, cv1[c, PDOT])


@numba.njit(cache=True, nogil=True, inline="always")
def log_event(ev_time, ev_contact, ev_kind, ev_speed, ev_count, t, c, kind, speed):
    """One entry of the event log (events = "step", and the exact pieces' own events); a
    full log takes no more (the loops stop before it fills)."""
    e = ev_count[0]
    if e < ev_time.size:
        ev_time[e] = t
        ev_contact[e] = c
        ev_kind[e] = kind
        ev_speed[e] = speed
        ev_count[0] = e + 1


@numba.njit(cache=True, nogil=True)
def record_changes(P, cv0, cv1, t, log):
    """``record_changes_of`` with the log as a named tuple."""
    record_changes_of(P, cv0, cv1, t, log.time, log.contact, log.kind, log.speed, log.count)


@numba.njit(cache=True, nogil=True, inline="always")
def diverged(x):
    """True when a coordinate is not finite or beyond DIVERGENCE_LIMIT."""
    for j in range(x.size):
        if not abs(x[j]) <= DIVERGENCE_LIMIT:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def frozen_modes(cv, flags):
    """flags = the modes of cv (events = "locate": the modes hold over the step)."""
    for c in range(cv.shape[0]):
        flags[c] = cv[c, MODE]


@numba.njit(cache=True, nogil=True, inline="always")
def links_at(P, kin, x, v, w, cv_old, cv_new, phi, d, dd, flags, Jd, Jv, jac, h):
    """Kinematics, law and forces of the links at one state (no rigid bond forces), h (s)
    after the committed values cv_old."""
    link_kinematics(kin, x, v, w, d, dd)
    evaluate(P, d, dd, cv_old, cv_new, phi, Jd, Jv, flags, jac, h)


@numba.njit(cache=True, nogil=True)
def hold_internals(P, kin, x, v, w, cv, mx, e, d, dd):
    """The value rows of the evolving contacts ``mx`` at the state (x, v, w) with their
    internal variables e (``fem.links.law.hold_internal``), for a scheme that carries them
    in its state: the laws evaluated from cv at h = 0 then give their exact forces."""
    link_kinematics(kin, x, v, w, d, dd)
    for i in range(mx.size):
        c = mx[i]
        hold_internal(P, c, 3 * int(P[c, BLK]), d, dd, cv, e[i])


@numba.njit(cache=True, nogil=True)
def archive_states(out, row, times, X, V, A, W, E, P, kin, ops, cv0, flags, bonded, lam, cv,
                   phi, d, dd, Jd, Jv, t0, mx, Em, cvm):
    """Archive the instants ``times`` (k,) of the states X, V, A (k, n) under the loads W
    (k, nb) with the energy accumulators E (k, NE): the link values from the laws with the
    modes ``flags`` (cv0 the values where those modes began, at t0), and the bond forces lam
    (k, len(bonded)) of the bonded rigid contacts ``bonded``; the evolving contacts ``mx``
    with their internal variables Em (k, len(mx)) (``hold_internals``, cvm a scratch value
    array). Returns the next row."""
    for k in range(times.size):
        if mx.size:
            cvm[:, :] = cv0
            hold_internals(P, kin, X[k], V[k], W[k], cvm, mx, Em[k], d, dd)
            links_at(P, kin, X[k], V[k], W[k], cvm, cv, phi, d, dd, flags, Jd, Jv,
                     JACOBIAN[0], 0.0)
        else:
            links_at(P, kin, X[k], V[k], W[k], cv0, cv, phi, d, dd, flags, Jd, Jv,
                     JACOBIAN[0], times[k] - t0)
        for j in range(bonded.size):
            set_bond(P, bonded[j], cv, lam[k, j], YES)
        archive_row(out, row, times[k], ops, X[k], V[k], A[k], cv, E[k], 0.0)
        row += 1
    return row
