"""The step loop of the Newmark family: one skeleton for every way a step is computed.

A call runs the steps i0 + 1 ... k of a chunk. Around each step the skeleton does the same
work whatever computes the step: it stops when the event log cannot take another step's
changes (FULL), takes the step, stops at a step that diverges or whose links do not settle,
tests the step for an event (``events = "locate"``: EVENT, the step computed into the other
buffer and not taken) or records the changes of mode it made, archives the archived steps,
and moves on. What computes a step is the ``body``:

* ``GENERAL``: the step of ``fem.integrators.newmark_steps`` (predictors, solve, the links'
  Newton iteration, the new state), from one buffer into the other;
* ``SOLVED``: the same step with its predictors and a0 = S^-1 r already computed (a sparse
  factor solved from Python, one step per call);
* ``DIRECT``: central differences whose link forces follow from the displacements alone
  (``fem.integrators.newmark_direct``), from one buffer into the other;
* ``LEAN``: steps never undone with forces from the predictor, run in place in one buffer
  up to the next step whose values are read (``fem.integrators.newmark_lean``).

The direct and lean bodies leave some contact values (rates, modes at round-off) to be
brought up to date where they are read: at a step that changes a mode (the event log), an
archived step, the end of the call and before FULL. ``fem.integrators.loops`` chooses the
body; the loop is compiled once per body (``RUNS``), with only that body's code.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from fem.integrators.kernels import (DIVERGED, DONE, EVENT, FULL, archive_row_of, crossed,
                                     frozen_modes, record_changes_of, state_at)
from fem.integrators.newmark_direct import direct_step, settle_rates
from fem.integrators.newmark_lean import first_loads, lean_settle, segment, segment_call
from fem.integrators.newmark_steps import finish, step
from fem.laws.columns import ACT

#: the bodies of a step (module docstring)
GENERAL, SOLVED, DIRECT, LEAN = 0, 1, 2, 3


class DirectParts(NamedTuple):
    """The direct body's arrays: the rows of d the contacts read, L^T and (S^-1 L^T)^T on
    them (dense, or (0, 0): the CSR parts), zero rates (3 m,) and scratch sums."""
    rows: np.ndarray
    LT: np.ndarray
    ZR: np.ndarray
    zero: np.ndarray
    sums: np.ndarray


class LeanParts(NamedTuple):
    """The lean body's arrays: the contacts' rows R (nc, n) and columns S^-1 L^T n (nc, n),
    the contact values before an evaluation (nc, NV) and the law's Jacobian scratch."""
    R: np.ndarray
    RS: np.ndarray
    cvs: np.ndarray
    Jd: np.ndarray
    Jv: np.ndarray


def no_direct() -> DirectParts:
    return DirectParts(np.zeros(0, np.int64), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0),
                       np.zeros(0))


def no_lean() -> LeanParts:
    return LeanParts(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)),
                     np.zeros((0, 3, 3)), np.zeros((0, 3, 3)))


def _skeleton(BODY, fastmath):
    """The loop compiled for one body (a constant of the closure: the branches of the other
    bodies are pruned before typing), with the floating-point flags that body wants."""

    @numba.njit(cache=True, nogil=True, _nrt=False, fastmath=fastmath)
    def run(i0, k, times, dt, co, ops, kin, P, sops, W, archive, buf, cur, wk, out, row,
            locate, log, half_dt, has_links, direct, lean):
        """Steps i0 + 1 ... k of a chunk from the state in buffer ``cur`` of ``buf`` (module
        docstring); returns (status, step, parity, rows): the state is in buffer cur when parity
        is 0, in the other one otherwise. On EVENT the step ``step`` is computed into the other
        buffer, not taken; FULL returns after step ``step``; on DIVERGED the diverged state is in
        the other buffer."""
        flags = wk.flags
        nc = P.shape[0]
        energy = wk.quad[3] > 0.0
        if BODY == LEAN:
            s = state_at(buf, cur)
            for c in range(nc):
                wk.mask[c] = s.cv[c, ACT]
            first_loads(sops, ops, W, i0, s.x.size, energy, wk.xs)
        parity = 0
        i = i0
        while i < k:
            c = cur if parity == 0 else 1 - cur
            s0 = state_at(buf, c)
            s1 = state_at(buf, 1 - c)
            if has_links and log.count[0] + nc > log.time.size:
                # the values read at the state reached
                if BODY == DIRECT:
                    settle_rates(P, kin, direct, s0)
                elif BODY == LEAN:
                    lean_settle(P, kin, s0, W[i], lean, wk)
                return FULL, i, parity, row
            changed = False
            if BODY == LEAN:
                if sops.kind == 2:
                    # dense coupled modes: the long step runs best in a function of its own
                    i, changed, bad = segment_call(i, k, dt, co, ops, sops, W, archive, s0,
                                                   s0.x, s0.v, s0.a, wk.ut, wk.vt, wk.rhs,
                                                   wk.xs, wk, s0.e, P, lean.R, lean.RS,
                                                   wk.mask, energy)
                else:
                    i, changed, bad = segment(i, k, dt, co, ops, sops, W, archive, s0, s0.x,
                                              s0.v, s0.a, wk.ut, wk.vt, wk.rhs, wk.xs, wk,
                                              s0.e, P, lean.R, lean.RS, wk.mask, energy)
                status = DIVERGED if bad else DONE
                if bad:
                    for j in range(s0.x.size):
                        s1.x[j] = s0.x[j]
            elif BODY == DIRECT:
                i += 1
                status, changed = direct_step(i, dt, co, ops, kin, P, sops, W, s0, s1, wk,
                                              direct, energy)
            elif BODY == SOLVED:
                i += 1
                status = finish(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)
            else:
                i += 1
                if locate:
                    frozen_modes(s0.cv, flags)
                status = step(dt, co, ops, kin, P, sops, W, i, s0, s1, wk, flags, has_links)
            if status != DONE:
                return status, i, parity, row
            if BODY == LEAN:
                after = s0           # in place
            else:
                after = s1
            if has_links:
                if (BODY == GENERAL or BODY == SOLVED) and locate:
                    if crossed(P, s0.cv, s1.cv, s0.db, s0.dd, s1.db, s1.dd, dt):
                        return EVENT, i, parity, row
                else:
                    if changed or archive[i] or i == k:
                        # the values read at a change, an archived step, the end
                        if BODY == DIRECT:
                            settle_rates(P, kin, direct, after)
                        elif BODY == LEAN:
                            lean_settle(P, kin, after, W[i], lean, wk)
                    if BODY == LEAN:
                        if changed:
                            record_changes_of(P, lean.cvs, after.cv, times[i], log.time,
                                              log.contact, log.kind, log.speed, log.count)
                    elif BODY == DIRECT:
                        if changed:
                            record_changes_of(P, s0.cv, after.cv, times[i], log.time,
                                              log.contact, log.kind, log.speed, log.count)
                    else:
                        record_changes_of(P, s0.cv, after.cv, times[i], log.time,
                                          log.contact, log.kind, log.speed, log.count)
            if archive[i]:
                archive_row_of(out.T, out.X, out.V, out.A, out.CV, out.EN, row, times[i], ops.Md,
                               ops.Mi, ops.Mp, ops.Kd, ops.Ki, ops.Kp, after.x, after.v, after.a,
                               after.cv, after.e, half_dt)
                row += 1
            if BODY != LEAN:
                parity = 1 - parity
        return DONE, k, parity, row

    return run


#: the loop of each body: the lean steps vectorize their sums (reassociated, contracted),
#: the others keep the order of their sums
RUNS = {GENERAL: _skeleton(GENERAL, False), SOLVED: _skeleton(SOLVED, False),
        DIRECT: _skeleton(DIRECT, False),
        LEAN: _skeleton(LEAN, {"reassoc", "contract"})}
