"""The Newmark family: Newmark (beta, gamma), HHT-alpha and central differences (beta = 0,
gamma = 1/2), on either basis (``fem.integrators.dynamics``), with every link law.

Step. With u~ = u_n + dt v_n + dt^2 (1/2 - beta) a_n and v~ = v_n + dt (1 - gamma) a_n, the
HHT-alpha equation (Hilber, Hughes, Taylor 1977; alpha in [-1/3, 0], alpha = 0 is Newmark)

    M a_n+1 + (1 + alpha)(C v_n+1 + K u_n+1) - alpha (C v_n + K u_n)
        = (1 + alpha) F_n+1 - alpha F_n + L^T ((1 + alpha) phi_n+1 - alpha phi_n)

gives S a_n+1 = r + L^T g with S = M + (1 + alpha) gamma dt C + (1 + alpha) beta dt^2 K, then
u_n+1 = u~ + beta dt^2 a_n+1 and v_n+1 = v~ + gamma dt a_n+1 (``advance_state``, the one place
these formulas live). S is factorized once per step size. ``equilibrium = "modified"`` (code_
aster's MODI_EQUI = 'NON') keeps HHT's beta and gamma with alpha = 0 in the equation.

Links. With a0 = S^-1 r and Z = S^-1 L^T (n, 3 m), a_n+1 = a0 + Z g, and the link accelerations
y = L a_n+1 solve the small system (W = L Z)

    y = L a0 + W ((1 + alpha) phi(y) - alpha phi_n),
    phi(y) = link laws at d = L u~ + Lw w + beta dt^2 y, d' = L v~ + Lv w + gamma dt y,

by Newton's method; a bonded rigid contact adds its bond force lambda as an unknown and
n . (y + La w) = 0 as an equation. With ``events = "step"`` the laws choose their modes at the
end of the step (semismooth Newton; contacts whose mode keeps changing keep it over the step);
with ``"locate"`` the modes hold over the step and ``fem.integrators.events`` locates their
changes. Central differences archive the velocity at the step, or with ``velocity =
"half_step"`` v_n - dt/2 a_n = (u_n - u_n-1)/dt, the one code_aster's DIFF_CENTRE archives.

Loop. One compiled loop runs the steps (``fem.integrators.newmark_loop``); what computes a
step is chosen once per analysis (``fem.integrators.loops``). Central differences with
``events = "step"`` skip the Newton iteration where the link forces follow from u~ alone:
plane contacts without damper nor friction take the lean steps (``newmark_lean``), plane and
circle contacts without damper, with or without friction, the direct ones
(``newmark_direct``); everything else takes the general step (``newmark_steps.step``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fem.errors import SolverError
from fem.integrators.base import Scheme
from fem.integrators.kernels import DONE, FULL
from fem.integrators import loops, newmark_direct
from fem.integrators.newmark_lean import contact_columns, contact_rows
from fem.integrators.newmark_columns import StepSize, active_links
from fem.integrators.newmark_links import MAX_ITERATIONS
from fem.integrators.newmark_loop import (DIRECT, GENERAL, LEAN, RUNS, SOLVED, DirectParts,
                                          LeanParts, no_direct, no_lean)
from fem.integrators.newmark_steps import Coefficients, Work, finish, predict_step, step
from fem.laws import NV
from fem.links.traits import traits
from fem.linalg import as_csr


# --------------------------------------------------------------------------- the scheme
class NewmarkFamily(Scheme):
    """Newmark, HHT-alpha or central differences (module docstring)."""

    fixed_step = True
    keeps_acceleration = True

    def check_resolution(self, step: float):
        """Central differences (beta = 0) as the explicit schemes; the implicit members test
        stiff contacts where their step operators are formed."""
        if self.co.beta == 0.0:
            super().check_resolution(step)

    def __init__(self, dynamics, links, *, beta=0.25, gamma=0.5, alpha=0.0, name="newmark",
                 events="step", velocity="step", equilibrium="alpha", label="analysis"):
        super().__init__(dynamics, links, name=name, events=events, label=label)
        self.co = Coefficients(float(beta), float(gamma),
                               0.0 if equilibrium == "modified" else float(alpha))
        self.half_step_velocity = velocity == "half_step"
        self._ops_cache: dict[float, tuple] = {}
        self._spare: dict[float, tuple] = {}
        m3 = self.L.shape[0]
        nr = self._nr = len(links.rigid) if links else 0
        #: link b -> its rows of L that are not zero (``link_columns``)
        self._link_columns: dict[int, tuple] = {}
        self._dense_index: dict[int, tuple] = {}
        self._link_entries = None
        nc = self.P.shape[0]
        n, m = self.n, max(m3 // 3, 1)
        # the links' Newton system: on every link, or (events = "locate") on those that can
        # carry a force over a step, grown as they close (``step_operators``)
        # (none when many links that always act take the whole system's Newton iteration,
        # ``newmark_tangent``: the loop "newmark whole")
        self.choice = loops.choose(name, traits(self.P), basis=dynamics.basis,
                                   locate=self.locate,
                                   explicit_newmark=self.co.beta == 0.0 and self.co.alpha == 0.0,
                                   imposed=bool(self.kin.imposed))
        self.tangent = self.choice.loop == "newmark whole"
        jac = max(nr, 1) if self.locate or self.tangent else m3 + nr
        self.wk = Work(*(np.zeros(n) for _ in range(5)), *(np.zeros(m3) for _ in range(9)),
                       np.zeros((m, 3, 3)), np.zeros((m, 3, 3)), np.zeros((jac, jac)),
                       np.zeros(m3 + nr), np.zeros(max(nr, 1), np.int64), np.zeros(m3 + nr),
                       np.zeros(max(nr, 1)), np.zeros(4), np.full(nc, -1.0),
                       np.full(nc, -1.0))
        self.wk.quad[3] = 1.0 if self.energy else 0.0     # whether steps sum energy terms
        #: steps that are never undone, with forces from the predictor: ``newmark_lean``
        self.lean = self.choice.loop == "newmark lean"
        self._rows = np.ascontiguousarray(contact_rows(self.P, self.L) if self.lean and nc
                                          else np.zeros((nc, n)))
        self._lean_columns: dict[float, np.ndarray] = {}
        #: central differences whose link forces follow from the displacements alone:
        #: ``newmark_direct`` (no Newton iteration)
        self.direct = self.choice.loop == "newmark direct"
        self._direct_rows = (newmark_direct.link_rows(self.P, self.L)
                             if self.direct else np.zeros(0, np.int64))
        self._direct: dict[float, tuple] = {}
        self._scratch = (np.zeros((nc, NV)), np.zeros((m, 3, 3)), np.zeros((m, 3, 3)))
        self._no_direct, self._no_lean = no_direct(), no_lean()
        self._no_archive = np.zeros(2, bool)

    # ------------------------------------------------------------------ set-up
    def stability_limit(self):
        co = self.co
        if 2 * co.beta >= co.gamma >= 0.5:
            return None
        omega = self.highest_frequency()
        if omega == 0:
            return None
        if co.beta == 0:
            return 2.0 / omega
        return 1.0 / (omega * np.sqrt(max(co.gamma / 2 - co.beta, 1e-300)))

    def step_size(self, dt: float, keep: bool = True) -> StepSize:
        """The factor of S and the links' columns for a step size
        (``fem.integrators.newmark_columns``): the grid's sizes are kept, those of the steps
        cut at events in a small cache."""
        found = self._ops_cache.get(dt) or self._spare.get(dt)
        if found is None:
            found = StepSize(self, dt, checked=keep)
            if keep:
                self._ops_cache[dt] = found
            else:
                if len(self._spare) >= 4:
                    self._spare.pop(next(iter(self._spare)))
                self._spare[dt] = found
        return found

    def step_operators(self, dt: float, keep: bool = True, flags=None):
        """(Factor, StepOperators) for a step size and, with events = "locate", the links
        that can carry a force over a step from the current state under the modes ``flags``
        (default: the current ones); every link with events = "step"."""
        size = self.step_size(dt, keep)
        blocks = None
        if self.locate and size.tangent is None:
            blocks = active_links(self.P, self._flags() if flags is None else flags,
                                  self.buf.PHI[self.cur])
        ops = size.operators(blocks)
        if not ops.tg.on:
            need = (3 * len(blocks) if blocks is not None else self.L.shape[0]) + self._nr
            if self.wk.Jac.shape[0] < need:
                self.wk = self.wk._replace(Jac=np.zeros((need, need)))
        return size.factor, ops

    def link_columns(self, b: int):
        """The rows of link b that are not zero: [(q in 0..2, column indices, values)]."""
        found = self._link_columns.get(b)
        if found is None:
            found = []
            L = as_csr(self.L)
            for q in range(3):
                start, end = L.indptr[3 * b + q], L.indptr[3 * b + q + 1]
                if end > start:
                    found.append((q, L.indices[start:end].astype(np.int64),
                                  L.data[start:end].astype(float)))
            self._link_columns[b] = found
        return found

    def link_entries(self):
        """L's entries as (rows, columns, values)."""
        if self._link_entries is None:
            L = self.L.tocoo()
            self._link_entries = (L.row.astype(np.int64), L.col.astype(np.int64),
                                  L.data.astype(np.float64))
        return self._link_entries

    def dense_index(self, k: int):
        """(row indices, column pointers) of a dense (n, k) matrix in CSC form."""
        found = self._dense_index.get(k)
        if found is None:
            n = self.n
            found = (np.tile(np.arange(n, dtype=np.int64), k),
                     np.arange(0, n * k + 1, max(n, 1), dtype=np.int64)[:k + 1])
            self._dense_index[k] = found
        return found

    # ------------------------------------------------------------------ stepping
    def run_steps(self, i0, k, times, dt, W, archive, out, row):
        """Steps i0 + 1 ... k of the chunk (see ``Scheme.advance``)."""
        factor, sops = self.step_operators(dt)
        half = 0.5 * dt if self.half_step_velocity else 0.0
        if not (factor.banded or sops.kind):
            status, i, row = self._sparse_loop(factor, sops, i0, k, times, dt, W, archive, out,
                                               row, half)
        else:
            body, direct, lean = GENERAL, self._no_direct, self._no_lean
            if self.lean:
                body, lean = LEAN, self._lean_parts(dt, sops)
            elif self.direct:
                body, direct = DIRECT, self._direct_parts(dt, sops)
            status, i, row = self._run(body, i0, k, times, dt, sops, W, archive, out, row,
                                       half, direct, lean)
        self.steps += i - i0 - (1 if status not in (DONE, FULL) else 0)
        return status, i, row

    def _run(self, body, i0, k, times, dt, sops, W, archive, out, row, half, direct, lean):
        """The compiled loop with ``body``; the state is then in buffer ``cur``."""
        c = self.cur
        status, i, parity, row = self.call(RUNS[body])(
            i0, k, times, dt, self.co, self.ops, self.kin, self.P, sops, W, archive,
            self.buf, c, self.wk, out, row, self.locate, self.log, half, bool(self.links),
            direct, lean)
        self.cur = c if parity == 0 else 1 - c
        return status, i, row

    def _lean_parts(self, dt, sops):
        """The lean steps' arrays for the step dt, with S^-1 L_c^T n_c of each contact."""
        found = self._lean_columns.get(dt)
        if found is None:
            Z = sp.csc_matrix((sops.Zd, sops.Zi, sops.Zp), shape=(self.n, self.L.shape[0]))
            found = LeanParts(self._rows, np.ascontiguousarray(contact_columns(self.P,
                                                                               Z.toarray())),
                              *self._scratch)
            if len(self._lean_columns) > 8:
                self._lean_columns.pop(next(iter(self._lean_columns)))
            self._lean_columns[dt] = found
        return found

    def _direct_parts(self, dt, sops):
        """The direct steps' arrays (``newmark_loop.DirectParts``) for the step dt."""
        found = self._direct.get(dt)
        if found is None:
            rows = self._direct_rows
            Z = sp.csc_matrix((sops.Zd, sops.Zi, sops.Zp), shape=(self.n, self.L.shape[0]))
            LT, ZR = newmark_direct.dense_rows(self.L, rows, Z)
            found = DirectParts(rows, LT, ZR, np.zeros(self.L.shape[0]),
                                newmark_direct.aligned((newmark_direct.padded(rows.size),)))
            if len(self._direct) > 8:
                self._direct.pop(next(iter(self._direct)))
            self._direct[dt] = found
        return found

    def _sparse_solve(self, factor, h, W, i):
        """The predictors and a0 = S^-1 r of a step into the other buffer, with a sparse LU
        factor (a bandwidth too large for the banded one)."""
        c = self.cur
        s0, s1 = self._states[c], self._states[1 - c]
        predict_step(h, self.co, self.ops, W, i, s0, self.wk)
        s1.a[:] = factor.solve(self.wk.rhs)

    def _sparse_loop(self, factor, sops, i0, k, times, dt, W, archive, out, row, half):
        """The steps of a sparse factor: each solved here, then finished, tested and archived
        by the compiled loop (one step per call)."""
        for i in range(i0 + 1, k + 1):
            if self.links and self.log.count[0] + self.P.shape[0] > self.log.time.size:
                return FULL, i - 1, row
            self.wk.flags[:] = self._flags()
            self._sparse_solve(factor, dt, W, i)
            status, i, row = self._run(SOLVED, i - 1, i, times, dt, sops, W, archive, out,
                                       row, half, self._no_direct, self._no_lean)
            if status != DONE:
                return status, i, row
        return DONE, k, row

    def _one_step(self, h, w0, w1, flags):
        """(body, step operators, loads (2, nb)) of one step of size h from buffer cur with
        the modes ``flags``; a sparse factor's solve is done here (body SOLVED)."""
        factor, sops = self.step_operators(h, keep=False, flags=flags)
        W = np.ascontiguousarray(np.vstack([w0, w1]), np.float64)
        if factor.banded or sops.kind:
            return GENERAL, sops, W
        self._sparse_solve(factor, h, W, 1)
        return SOLVED, sops, W

    def _partial(self, t_end, w_end):
        h = t_end - self.t
        flags = np.asarray(self._flags(), float)
        body, sops, W = self._one_step(h, self.w, w_end, flags)
        self.wk.flags[:] = flags
        status, _, _, _ = self.call(RUNS[body])(
            0, 1, np.array([self.t, t_end]), float(h), self.co, self.ops, self.kin, self.P,
            sops, W, self._no_archive, self.buf, self.cur, self.wk, self.no_rows(), 0,
            self.locate, self.log, 0.0, bool(self.links), self._no_direct, self._no_lean)
        # the step stays pending in the other buffer (``accept`` takes it)
        self._trial = self.pending = (float(t_end), w_end)
        return status

    def single_step(self, h, w0, w1, flags):
        """One step of size h from buffer cur into the other with the modes ``flags``;
        returns the status."""
        body, sops, W = self._one_step(h, w0, w1, flags)
        c = self.cur
        states = self._states
        # the loop's own step bodies (an int i, as the loop passes it: one compiled step)
        return self.call(finish if body == SOLVED else step)(
            float(h), self.co, self.ops, self.kin, self.P, sops, W, 1, states[c],
            states[1 - c], self.wk, np.asarray(flags, float), bool(self.links))

    def landing_rates(self):
        """The link rates at the end of the pending step that make the cubic Hermite of the
        link displacements (the dense output of the event search) the step recomputed to a
        shorter size: u(h) = u0 + h v0 + (1/2 - beta) h^2 a0 + beta h^2 a(h), with a(h) the
        straight line from a0 to the pending step's a1, is a cubic in h whose value at the
        full step is the pending u1 and whose rate there is v0 + dt (a0 + 3 beta (a1 -
        a0)) (not v1). The landing's first trial is then much nearer the root (exact for
        central differences, whose u(h) does not depend on a(h))."""
        c, b = self.cur, self.buf
        dt = self.pending[0] - self.t
        kin = self.kin
        da0 = self.L @ b.A[c]
        da1 = self.L @ b.A[1 - c]
        if kin.imposed:
            da0 = da0 + kin.La @ np.asarray(self.w, float)
            da1 = da1 + kin.La @ np.asarray(self.pending[1], float)
        return b.DD[c] + dt * (da0 + 3.0 * self.co.beta * (da1 - da0))

    def archive_half_dt(self, dt):
        return 0.5 * dt if self.half_step_velocity else 0.0

    def not_settled(self, t):
        raise SolverError(f"{self.label}: the modes of the links do not settle within the "
                          f"step ending at t = {t:.9g} s (no consistent set after "
                          f"{MAX_ITERATIONS} iterations); reduce the step")
