"""The stepping protocol every transient scheme implements, and what the schemes share.

A scheme integrates the equations of ``fem.integrators.dynamics`` (either basis) with the links
of ``fem.links.linkset``. It holds its state in double buffers (``fem.integrators.kernels.
Buffers``: buffer ``cur`` is the current state at time ``t``, the other one receives a step
being computed). The driver (``fem.transient``) owns the time grid, the load values, the
archive, the events table and the results; it hands the scheme one chunk of the grid at a
time and calls, in this order:

    scheme = SchemeClass(dynamics, links, **parameters)        (fem.integrators.factory)
    scheme.start(t0, x0, v0, w0, acceleration)   initial state, link modes, a0
    scheme.begin(chunk)                          the next knots: times (k+1,), W (k+1, nb),
                                                 archive (k+1,) bool, dt
    status, row = scheme.advance(out, row)       steps up to the chunk's end, archiving its
                                                 archived knots into ``out`` from ``row``

``advance`` returns DONE at the chunk's end, or stops early with

* EVENT: a link event function crossed zero inside the *pending* step [t, pending[0]],
  computed into the other buffer with the link modes held; the one event locator
  (``fem.integrators.events``) then calls ``trial(t_end)`` (the pending step again, ending at
  t_end) until it lands on the crossing, ``accept(out, row)`` (take the trial step, archive
  what it covers), changes the link modes, and ``restart()`` (acceleration and history after a
  change of modes); the driver then calls ``advance`` again, which goes on from there;
* FULL: the archive rows ``out`` or the event log are full; the driver empties them and
  calls ``advance`` again;
* DIVERGED (a coordinate not finite or beyond ``kernels.DIVERGENCE_LIMIT``) or NOT_SETTLED
  (an implicit step found no consistent link modes): the driver stops the analysis.

With ``events = "step"`` the laws choose their modes at each step and the scheme logs the
changes in ``log`` (``kernels.EventLog``), which the driver drains after each call.

What the driver reads: ``t``, ``cur``, ``buf``, ``P``, ``pending``, ``steps``, ``rejected``,
``log``, ``locate``, ``fixed_step``, ``adaptive``, ``name``, ``label``; ``dense_values``
(``None``, or a function giving the event functions at fractions of the pending step, for a
scheme whose dense output is the exact solution); ``stability_limit()``; optionally
``landing_rates()`` (the link rates at the end of the pending step whose cubic Hermite the
recomputed step follows, for the locator's first trial: ``fem.integrators.landing``).
A subclass implements ``run_steps`` (compiled loop over knots) and ``single_step`` (one step of
any size with given modes), or overrides ``advance``/``trial`` (adaptive and exact schemes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.compiled import Bound
from fem.errors import SolverError
from fem.integrators.kernels import (DONE, FULL, make_buffers, make_log, make_outputs,
                                     state_arrays)
from fem.laws import NP, NV
from fem.laws.columns import BLK, BONDED, DIR, MODE, NA
from fem.linalg import as_csr
from fem.links.law import push_bond, set_bond
from fem.links.traits import traits


def highest_frequency(system) -> float:
    """An estimate of the highest circular frequency omega_max (rad/s) of (K, M)."""
    M, K = system.mass, system.stiffness
    n = M.shape[0]
    if n == 0 or K.nnz == 0:
        return 0.0
    d = M.diagonal()
    if M.nnz == np.count_nonzero(d) and np.all(d > 0):
        # power iteration on the symmetric M^-1/2 K M^-1/2
        s = 1.0 / np.sqrt(d)
        A = sp.diags(s) @ K @ sp.diags(s)
        if n <= 200:
            return float(np.sqrt(max(np.linalg.eigvalsh(A.toarray())[-1], 0.0)))
        try:
            lam = scipy.sparse.linalg.eigsh(A, k=1, which="LA", return_eigenvectors=False,
                                            tol=1e-6, maxiter=max(1000, 20 * n))[0]
        except Exception:
            lam = float(np.max(np.asarray(abs(A).sum(axis=1)).ravel()))    # Gershgorin bound
        return float(np.sqrt(max(lam, 0.0)))
    return float("inf")


@dataclass
class Chunk:
    """A run of knots of the driver's grid: times (k+1,) s, W (k+1, nb) time-column values,
    archive (k+1,) bool (index 0 was archived with the previous chunk), dt the constant step
    between knots (s), and ``load``: t -> w (nb,) exact values at any instant."""
    times: np.ndarray
    W: np.ndarray
    archive: np.ndarray
    dt: float
    load: object

    @property
    def k(self) -> int:
        return len(self.times) - 1


#: the Bound of each compiled function a scheme calls from Python (``Scheme.call``)
_BOUND: dict = {}


class Scheme:
    """Base of every scheme (module docstring). Fixed-step schemes implement ``run_steps``
    and ``single_step``; the rest is shared."""

    fixed_step = True
    adaptive = False
    dense_values = None

    def __init__(self, dynamics, links, *, name: str, events: str = "step",
                 label: str = "analysis"):
        from fem.links.linkset import LinkSet

        self.dyn = dynamics
        self.links = links if links is not None else LinkSet()
        self.name = name
        self.label = label
        self.P = np.ascontiguousarray(self.links.P if self.links else np.zeros((0, NP)))
        self.L = dynamics.L
        self.ops = dynamics.operators()
        self.kin = dynamics.kinematics()
        self.n = dynamics.size
        self.buf = make_buffers(self.n, self.P.shape[0], self.L.shape[0], NV)
        #: the two buffers' state views (the same objects at every call)
        self._states = (state_arrays(self.buf, 0), state_arrays(self.buf, 1))
        self.cur = 0
        self.locate = events == "locate"
        self.log = make_log(max(4096, 16 * self.P.shape[0]))
        self.steps = 0
        self.rejected = 0
        self.t = None
        self.w = None
        self.pending = None
        self.chunk = None
        self.i = 0
        self._trial = None
        self._minv = None
        #: the energy terms are integrated and archived (every analysis with links; the
        #: linear ones skip that cost)
        self.energy = bool(self.links)

    @staticmethod
    def call(function):
        """The compiled ``function`` bound to the types of its arguments
        (``fem.compiled.Bound``: later calls skip the dispatcher's type resolution); one
        binding a function for every scheme of the process, so that a new scheme of the same
        kind does not bind again."""
        bound = _BOUND.get(function)
        if bound is None:
            bound = _BOUND[function] = Bound(function)
        return bound

    # ------------------------------------------------------------------ start
    def start(self, t0: float, x0, v0, w0, acceleration: str = "equilibrium"):
        """Initial state at t0: the link modes the laws choose there (a contact closed at the
        start while its surfaces slide is sliding; bodies touching without relative velocity
        and pushing on each other start bonded), and the acceleration from equilibrium (or
        zero)."""
        from fem.integrators.events import initial_modes

        c = self.cur = 0
        b = self.buf
        b.X[c], b.V[c] = x0, v0
        b.E[c] = 0.0
        self.t, self.w = float(t0), np.asarray(w0, float)
        records = initial_modes(self) if self.links else []
        self.equilibrium()
        if acceleration == "zero":
            b.A[c] = 0.0
        return records

    def link_state(self, flags=None):
        """Evaluate the laws at the current state with ``flags`` (default: the current modes);
        updates CV, PHI, DB, DD of buffer cur (rigid bond forces kept)."""
        from fem.integrators.kernels import links_at

        c, b = self.cur, self.buf
        if flags is None:
            flags = b.CV[c][:, MODE].astype(float)
        scratch = getattr(self, "_law_scratch", None)
        if scratch is None:
            m = max(self.L.shape[0] // 3, 1)
            scratch = self._law_scratch = (np.empty_like(b.CV[c]), np.zeros((m, 3, 3)),
                                           np.zeros((m, 3, 3)))
        cv, jd, jv = scratch
        self.call(links_at)(self.P, self.kin, b.X[c], b.V[c],
                            np.ascontiguousarray(self.w, float), b.CV[c], cv, b.PHI[c], b.DB[c],
                            b.DD[c], np.asarray(flags, float), jd, jv, False, 0.0)
        b.CV[c] = cv

    def mass_solve(self, rhs):
        """M^-1 rhs; zero on massless dofs."""
        if self.dyn.basis == "modal":
            return np.array(rhs, float)
        if self._minv is None:
            self._minv = _MassSolver(self.dyn.mass)
        return self._minv(rhs)

    def equilibrium(self, assign: bool = True):
        """The acceleration at the current state and link modes: M a = B w - C v - K x +
        L^T phi, with the bond forces of bonded rigid contacts that keep their relative
        acceleration zero (written to CV column LAM); it becomes the state's acceleration
        when ``assign``, and is returned."""
        c, b = self.cur, self.buf
        x, v = b.X[c], b.V[c]
        from fem.integrators.kernels import applied_force

        if self.links:
            self.link_state()
        f = np.empty(self.n)
        self.call(applied_force)(self.ops, self.kin, x, v, np.ascontiguousarray(self.w, float),
                                 b.PHI[c], bool(self.links), f)
        a = self.mass_solve(f)
        rigid = [i for i in self.links.rigid if b.CV[c][i, MODE] == BONDED] if self.links else []
        if rigid:
            R = self.bond_rows(rigid)
            MR = self.mass_solve(R.T)
            target = R @ a + self.imposed_acceleration(rigid)
            try:
                lam = np.linalg.solve(R @ MR, target)
            except np.linalg.LinAlgError:
                raise SolverError(f"{self.label}: bonded impact links are redundant (their "
                                  f"rows are dependent) at t = {self.t:.9g} s") from None
            a = a - MR @ lam
            for i, value in zip(rigid, lam):
                set_bond(self.P, int(i), b.CV[c], float(value), True)
                push_bond(self.P, int(i), float(value), b.PHI[c])
        if assign:
            b.A[c] = a
        return a

    def bond_rows(self, contacts) -> np.ndarray:
        """Rows n_c^T L (k, n) of rigid contacts on the integrated coordinates."""
        rows = []
        for i in contacts:
            o = 3 * int(self.P[i, BLK])
            rows.append(np.asarray(self.P[i, DIR:DIR + 3] @ self.L[o:o + 3].toarray()).ravel())
        return np.array(rows).reshape(len(rows), self.n)

    def imposed_acceleration(self, contacts) -> np.ndarray:
        """n_c . (La w) of rigid contacts: the imposed part of their relative acceleration."""
        la = self.kin.La @ self.w if self.kin.imposed else np.zeros(self.L.shape[0])
        return np.array([self.P[i, DIR:DIR + 3] @ la[3 * int(self.P[i, BLK]):
                                                      3 * int(self.P[i, BLK]) + 3]
                         for i in contacts])

    #: implicit schemes carry an acceleration that is not the equilibrium one (HHT): at an
    #: event it jumps by the change of the equilibrium acceleration instead of being replaced
    keeps_acceleration = False

    def before_event(self):
        """At a landed event, before the modes change: note the equilibrium acceleration."""
        self._a_before = self.equilibrium(assign=False) if self.keeps_acceleration else None

    def restart(self):
        """After a change of link modes (or a velocity jump) at the current instant: the
        acceleration of the new modes (for an implicit scheme, its acceleration plus the jump
        of the equilibrium one; bonded contacts then keep a zero relative acceleration)."""
        before = getattr(self, "_a_before", None)
        c, b = self.cur, self.buf
        old = b.A[c].copy()
        a = self.equilibrium(assign=True)
        if before is None:
            return
        a = old + (a - before)
        rigid = [i for i in self.links.rigid if b.CV[c][i, MODE] == BONDED] if self.links else []
        if rigid:
            R = self.bond_rows(rigid)
            MR = self.mass_solve(R.T)
            a = a - MR @ np.linalg.solve(R @ MR, R @ a + self.imposed_acceleration(rigid))
        b.A[c] = a
        self._a_before = None

    # ------------------------------------------------------------------ fixed-step protocol
    def begin(self, chunk: Chunk):
        self.chunk = chunk
        self.i = 0

    def advance(self, out, row):
        ch = self.chunk
        k = ch.k
        if self.i < k and self.t < ch.times[self.i + 1] and self.t > ch.times[self.i]:
            # the rest of a step cut by an event
            status = self._partial(ch.times[self.i + 1], ch.W[self.i + 1])
            if status != DONE:
                return status, row
            row = self.accept(out, row)
        if self.i >= k:
            return DONE, row
        status, i, row = self.run_steps(self.i, k, ch.times, ch.dt, ch.W, ch.archive, out, row)
        if status == DONE:
            self.i, self.t, self.w = k, float(ch.times[k]), ch.W[k]
        elif status == FULL:
            # steps up to i taken; the driver empties the event log and calls again
            self.i, self.t, self.w = i, float(ch.times[i]), ch.W[i]
        else:
            self.i = i - 1
            self.t, self.w = float(ch.times[i - 1]), ch.W[i - 1]
            self.pending = (float(ch.times[i]), ch.W[i])
            self._trial = self.pending
        return status, row

    def _partial(self, t_end, w_end):
        """One step from t to t_end with the modes held (locate) or chosen (step), left
        pending (``accept`` takes it): the scheme's own loop over that one step (its event
        test, or the changes it records). Returns the loop's status."""
        raise NotImplementedError

    def no_rows(self):
        """Archived rows of the driver's types, none of them (a step that archives
        nothing)."""
        found = getattr(self, "_no_rows", None)
        if found is None:
            found = self._no_rows = make_outputs(0, self.n, self.P.shape[0], NA)
        return found

    def _flags(self):
        if self.locate:
            return self.buf.CV[self.cur][:, MODE].astype(float)
        return np.full(self.P.shape[0], -1.0)

    def trial(self, t_end: float) -> int:
        """The pending step again, from t to t_end, with the modes held."""
        if t_end == self.pending[0]:
            w_end = self.pending[1]
        else:
            w_end = self.chunk.load(t_end)
        status = self.single_step(t_end - self.t, self.w, w_end, self._flags())
        self._trial = (float(t_end), w_end)
        return status

    def accept(self, out, row):
        """Take the trial step; archive its end when it is an archived knot."""
        from fem.integrators.kernels import archive_row

        t, w = self._trial
        self.cur = 1 - self.cur
        self.t, self.w = t, w
        self.steps += 1
        ch = self.chunk
        if self.i < ch.k and t == ch.times[self.i + 1]:
            self.i += 1
            if ch.archive[self.i]:
                c = self.cur
                b = self.buf
                archive_row(out, row, t, self.ops, b.X[c], b.V[c], b.A[c], b.CV[c], b.E[c],
                            self.archive_half_dt(ch.dt))
                row += 1
        return row

    def archive_half_dt(self, dt) -> float:
        return 0.0

    def archive_now(self, out, row):
        """Archive the current state (the first instant of an analysis)."""
        from fem.integrators.kernels import archive_row

        c, b = self.cur, self.buf
        archive_row(out, row, self.t, self.ops, b.X[c], b.V[c], b.A[c], b.CV[c], b.E[c], 0.0)
        return row + 1

    def stability_limit(self) -> float | None:
        return None

    def highest_frequency(self) -> float:
        """An upper estimate of the highest circular frequency (rad/s) with every contact
        closed and sticking: the largest stiffness of each contact's law added to K."""
        from types import SimpleNamespace

        K = sp.csr_matrix(self.dyn.stiffness)
        if self.links:
            extra = sp.csr_matrix(K.shape)
            stiffness = traits(self.P).stiffness
            for c in range(self.P.shape[0]):
                b = int(self.P[c, BLK])
                rows = self.L[3 * b:3 * b + 3]
                k = stiffness[c]
                if k > 0:
                    extra = extra + k * (rows.T @ rows)
            K = (K + extra).tocsr()
        return highest_frequency(SimpleNamespace(mass=self.dyn.mass, stiffness=K))

    def contact_frequencies(self) -> np.ndarray:
        """Circular frequency (rad/s) of each contact closed alone: sqrt(k w), k the largest
        stiffness its law puts on the link (``fem.links.traits``), w its largest compliance
        L M^-1 L^T; 0 for a contact without stiffness (a rigid one)."""
        out = np.zeros(self.P.shape[0])
        stiffness = traits(self.P).stiffness
        for c in range(self.P.shape[0]):
            k = stiffness[c]
            if not k > 0:
                continue
            o = 3 * int(self.P[c, BLK])
            rows = self.L[o:o + 3].toarray()
            w = rows @ self.mass_solve(rows.T)
            out[c] = math.sqrt(k * max(float(np.max(np.linalg.eigvalsh(0.5 * (w + w.T)))),
                                       0.0))
        return out

    def check_resolution(self, step: float):
        """Refuse a contact no step of this scheme can follow: its frequency times the
        shortest step the scheme takes (``step``) above 1e6, or not finite. Implicit and
        exact schemes have their own test and override this."""
        for c, omega in enumerate(self.contact_frequencies()):
            if not omega * step <= 1e6:
                raise SolverError(
                    f"{self.label}: link '{self.links.link_of(c)}': its contact stiffness "
                    f"{traits(self.P).stiffness[c]:.3g} N/m gives a contact frequency of {omega:.3g} rad/s, "
                    f"{omega * step:.3g} times 1/step with {self.name}'s steps of "
                    f"{step:.3g} s: no step can follow it; give it a physical stiffness, or use "
                    f"an impact link (a rigid contact)")

    def not_settled(self, t):
        raise SolverError(f"{self.label}: the modes of the links do not settle in the step "
                          f"ending at t = {t:.9g} s")


class _MassSolver:
    """M^-1 rhs for a sparse mass matrix; zero on massless dofs (whose equations are static)."""

    def __init__(self, M):
        M = as_csr(M)
        d = M.diagonal()
        self.diagonal = M.nnz == np.count_nonzero(d)
        if self.diagonal:
            self.massive = d != 0
            self.inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0)
        else:
            self.massive = np.asarray(abs(M).sum(axis=1)).ravel() > 0
            sub = M[self.massive][:, self.massive].tocsc()
            try:
                self.lu = scipy.sparse.linalg.splu(sub)
            except RuntimeError:
                raise SolverError("the mass matrix is singular on the dofs that carry mass") \
                    from None

    def __call__(self, rhs):
        rhs = np.asarray(rhs, float)
        if self.diagonal:
            return (rhs.T * self.inv).T if rhs.ndim > 1 else rhs * self.inv
        out = np.zeros_like(rhs)
        out[self.massive] = self.lu.solve(rhs[self.massive])
        return out
