"""The exact scheme: the motion propagated exactly between events, on either basis.

Between events every law of a link is linear in the state and the loads (a contact open or
closed, a unidirectional friction sticking or sliding one way, a rigid bond or none), so each
*phase* is the linear system

    z' = A z + E u(t),   z = (x, x', e),   u = (w(t), 1),

built by :class:`Phases` from M, C, K, the loads B w and the links' terms (e: the internal
variables of the contacts whose law has evolving ones, none without them): a closed contact
adds k l l^T to K and c l l^T to C (l = L^T n its row) and -k l (n . Lw w - gap) to the loads;
a sticking unidirectional friction (direction t, row lt) adds kt lt lt^T and ct lt lt^T around
its anchor; one sliding with sign s adds the force -s mu F_n lt, F_n = k p + c p' (a term of K
and C that is not symmetric); bonded rigid contacts R constrain the accelerations, a = P (...)
with P = M^-1 - M^-1 R^T (R M^-1 R^T)^-1 R M^-1, and their bond forces lambda are linear in
(z, u) too; a contact with an evolving variable adds its terms to K, C and the loads, its
force on e, and its rate equation, linear in (z, u) (for a spring k in series with a dashpot c
on the row ell, with imposed part pw: k ell ell^T to K, the force k e ell and -k ell (pw . w)
to the loads, and e' = (k / c) (ell . x + pw . w - e)). Between pieces the internal variables
live in the value rows of the state buffers, where the law keeps them (the dispatch's
``internal`` and ``hold_internal``: ``kernels.hold_internals``), so that the law evaluated
there at h = 0 gives the force of the propagated state exactly.

Two propagators (``fem.exact``):

* closed form (``spectral``): when the phase's state matrix is diagonalizable, the loads on the
  stretch are sums of exponentials and the event functions do not depend on the loads, the
  solution is a sum of exponentials: a whole phase is searched for its next event, archived and
  integrated for its energy terms at once. The phase's *form* (eigen-decomposition,
  particular solutions, event rows, energy terms) is built once per stretch of the loads
  between breakpoints; the pieces run compiled, one call following piece after piece
  (``exact_pieces``), and with frictionless shock contacts only they take their events
  themselves (the mode change, the settling of the instant, the restart and the energy of
  ``fem.integrators.events``), logged for the driver like the events of ``events = "step"``;
* matrix exponential (``propagator``), otherwise: steps of at most 4 / omega_max, the loads
  represented exactly (piecewise linear) or by an interpolating polynomial of degree 8 on steps
  short enough for round-off.

The laws' event functions (``fem.links.law``) are linear functions of (z, u) in a phase; their
roots are located on the exact solution (sampled brackets, grazing extrema, Newton polish, to
round-off: ``fem.exact.spectral.first_root``, ``fem.exact.events.first_event``) and the event
is taken by the piece or handed to the driver already landed (``exact_event``). The energy
terms are integrated exactly: quadratic forms of the state and loads (Van Loan's integral, or
expm1 for sums of exponentials), the dashpots' dissipation (k^2 / c) (u - e)^2 among them.
"""

from __future__ import annotations

import math

import numpy as np

from fem.integrators import loops
from fem.links.traits import traits
from fem.errors import SolverError
from fem.exact.events import first_event
from fem.exact.propagator import Propagator, polynomial_coefficients
from fem.exact.spectral import SpectralPhase
from fem.integrators.base import Scheme
from fem.integrators.events import MAX_CASCADE
from fem.integrators.exact_phases import Phases
from fem.integrators.exact_pieces import (CASCADE, HANDLED, NE, NEED_FORM, OI, add_form,
                                          build_form, empty_table, load_terms, make_scratch,
                                          run_pieces)
from fem.integrators.kernels import DIVERGED, DONE, EVENT, FULL, diverged, hold_internals
from fem.linalg import as_csr
from fem.laws import NV
from fem.laws.columns import G0, MODE, OPEN
from fem.links.law import internal, set_bond
from fem.study.specs import step_limit

SMOOTH_DEGREE = 8
#: kinds of time functions that are linear between their breakpoints (degree 1 represents
#: them exactly); functions that state a ``polynomial_degree`` are represented by that
#: degree, the others (expressions) by SMOOTH_DEGREE
PIECEWISE_LINEAR = ("table", "record", "constant")
#: largest interpolation error of a smooth forcing on a step, relative to its size there
FORCING_TOLERANCE = 1e-12


#: the most closed forms kept at once (phases met on one stretch of the loads)
MAX_FORMS = 64

def _degree(fn, order: int) -> int:
    """The degree of the polynomial that represents the derivative of order ``order`` of
    the time function ``fn`` on a step between its breakpoints: exact for piecewise
    polynomials (tables, integrated records), an interpolation otherwise."""
    degree = getattr(fn, "polynomial_degree", None)
    if degree is not None:
        return max(int(degree) - order, 1)
    return 1 if fn.kind in PIECEWISE_LINEAR else SMOOTH_DEGREE


#: the most steps of 4 / omega_max the exact scheme takes to follow a phase to the end
MAX_RESOLVED_STEPS = 1e7


class ExactScheme(Scheme):
    """The exact scheme (module docstring)."""

    fixed_step = False
    adaptive = False

    def check_resolution(self, step: float):
        """No step to test: each phase is tested by ``_resolvable`` (the steps of 4 / omega
        it would take to follow) when it is entered."""

    def __init__(self, dynamics, links, *, name="exact", events="locate", label="analysis"):
        super().__init__(dynamics, links, name=name, events="locate", label=label)
        self.energy = True          # the integrals are exact and cheap: always archived
        self.phases = Phases(self)
        self.degree = max((_degree(fn, order) for fn, order in dynamics.columns), default=1)
        self.breaks = dynamics.breakpoints
        self.exact_event = None
        self._after_event = False
        self._segment = None
        self._archive_scratch = None
        nc = self.P.shape[0]
        #: the evolving contacts (``fem.links.traits``), whose internal variables end the
        #: state z
        self.mx = self.phases.mx
        self._scratch = make_scratch(self.n, self.phases.nb, nc, NV, self.L.shape[0],
                                     self.mx)
        #: the pieces take the events of frictionless shock contacts themselves
        self.choice = loops.choose("exact", traits(self.P), basis=dynamics.basis,
                                   locate=True)
        self._internal = self.choice.loop == "exact pieces"
        self._cascade = MAX_CASCADE * max(1, nc)
        self._log_room = self.log.time.size // 2
        self._mdiag, self._mfull = self._mass_inverse()
        self._table = empty_table(nc)
        self._stretch = -1
        self._generation = 0

    # ------------------------------------------------------------------ helpers
    def _mass_inverse(self):
        """(diagonal of M^-1, or empty; M^-1 dense when M is not diagonal), as
        ``Scheme.mass_solve`` applies it."""
        n = self.n
        if self.dyn.basis == "modal":
            return np.ones(n), np.zeros((0, 0))
        M = as_csr(self.dyn.mass)
        d = M.diagonal()
        if M.nnz == np.count_nonzero(d):
            return np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0), np.zeros((0, 0))
        return np.zeros(0), np.ascontiguousarray(self.phases.Minv)

    def _forcing(self, t):
        t = np.atleast_1d(np.asarray(t, float))
        return np.column_stack([self.dyn.load_values(t), np.ones(len(t))])

    def _z(self):
        c = self.cur
        if not len(self.mx):
            return np.concatenate([self.buf.X[c], self.buf.V[c]])
        cv = self.buf.CV[c]
        return np.concatenate([self.buf.X[c], self.buf.V[c],
                               [internal(self.P, int(m), cv)[0] for m in self.mx]])

    def _write(self, which, z, a, t, w=None):
        """State z (N,) and acceleration a at time t into buffer ``which``; its link values
        with the current modes (the evolving contacts at the internal variables of z).
        ``w``: the load columns at t when the caller has them."""
        n = self.n
        b = self.buf
        b.X[which], b.V[which], b.A[which] = z[:n], z[n:2 * n], a
        if which != self.cur:
            b.CV[which] = b.CV[self.cur]
        saved, self.cur = self.cur, which
        if w is None:
            w = self.dyn.load_values(np.array([t]))[0]
        if len(self.mx):
            self.call(hold_internals)(self.P, self.kin, b.X[which], b.V[which],
                                     np.ascontiguousarray(w, float), b.CV[which], self.mx,
                                     np.ascontiguousarray(z[2 * n:], float), b.DB[which],
                                     b.DD[which])
        w_saved, self.w = self.w, w
        self.link_state(self.buf.CV[saved][:, MODE].astype(float))
        self.cur, self.w = saved, w_saved
        return w

    # ------------------------------------------------------------------ protocol
    def begin(self, chunk):
        super().begin(chunk)
        self._knot = 1
        self._step_limit = step_limit.get()

    def advance(self, out, row):
        ch = self.chunk
        t_end = float(ch.times[-1])
        self.exact_event = None
        while self.t < t_end:
            stop, stretch = self._stop(t_end)
            ph = self.phases.get(self.buf.CV[self.cur])
            if not ph.resolved:
                self._resolvable(ph)
                ph.resolved = True
            slot = self._slot(ph, stretch, stop)
            if slot < 0:
                status, row = self._propagate(ph, stop, out, row)
            else:
                status, row = self._pieces(slot, stop, out, row)
                if status == HANDLED:
                    return FULL, row        # the driver drains the log, checks the steps
                if status == NEED_FORM:
                    continue
            if status != DONE:
                return status, row
        # an archived knot at the chunk's end that an event landed on exactly: the pieces
        # stop short of an event's instant, and the chunk ends there
        while self._knot <= ch.k and float(ch.times[self._knot]) <= self.t:
            if ch.archive[self._knot]:
                row = self.archive_now(out, row)
            self._knot += 1
        return DONE, row

    def _stop(self, t_end):
        """(end of the stretch from t: the next breakpoint of the loads before t_end, else
        t_end; the index of the stretch between breakpoints)."""
        breaks = self.breaks
        if not len(breaks):
            return t_end, 0
        i = int(np.searchsorted(breaks, self.t, "right"))
        if i < len(breaks) and breaks[i] < t_end:
            return float(breaks[i]), i
        return t_end, i

    def _resolvable(self, ph):
        """Stop with a clear error when following the motion of the phase to the end of the
        analysis would take more than MAX_RESOLVED_STEPS steps of 4 / omega_max (a mass of
        1e-300, a stiffness of 1e308): the fastest dof and the links' modes are named. Tested
        when the phase is first entered (the time left only shrinks)."""
        left = max(getattr(self, "t_final", self.t) - self.t, 0.0)
        if not ph.omega * left / 4.0 > MAX_RESOLVED_STEPS:
            return
        values, vectors = np.linalg.eig(ph.A)
        n = self.n
        fastest = vectors[:n, int(np.argmax(np.abs(values)))]
        dof = self.dyn.describe(int(np.argmax(np.abs(fastest))))
        modes = ", ".join(f"'{self.links.link_of(c)}' {'open' if key[0] == OPEN else 'closed'}"
                          for c, key in enumerate(self.phases.key(self.buf.CV[self.cur])))
        raise SolverError(
            f"{self.label}: exact: at t = {self.t:.9g} s the motion has frequencies up to "
            f"{ph.omega:.3g} rad/s (fastest on {dof}; links: {modes or 'none'}): following it "
            f"to {self.t_final:.9g} s would take {ph.omega * left / 4.0:.3g} steps; check the "
            f"masses and stiffnesses of the model and of the links")

    def _knots_until(self, s_end, strict):
        """Indices of the chunk's archived knots in [t, t + s_end) (or ] when not strict)
        not archived yet."""
        ch = self.chunk
        out = []
        while self._knot <= ch.k:
            tj = float(ch.times[self._knot])
            if tj > self.t + s_end or (strict and tj >= self.t + s_end):
                break
            if ch.archive[self._knot] and tj >= self.t:
                out.append(self._knot)
            self._knot += 1
        return out

    def _slot(self, ph, stretch, stop):
        """The row of the closed form of phase ph on the stretch of the loads from t in the
        table of forms (``exact_pieces``), built when the phase is first met on the stretch;
        -1 when the phase or its loads do not allow it (the pieces count the links' dampers
        and the evolving contacts' dashpots, ``stretch``, not a law's other dissipation, Ql:
        a plastic flow's work)."""
        if ph.imposed_rows or not ph.constant_forcing_only or ph.friction or np.any(ph.Ql):
            return -1
        if stretch != self._stretch or len(self._table.index) >= MAX_FORMS:
            self._table = empty_table(self.P.shape[0])
            self._generation += 1
            if stretch != self._stretch:
                # the loads on the stretch as sums of exponentials, shared by its phases
                breaks = self.breaks
                end = float(breaks[stretch]) if stretch < len(breaks) else max(
                    getattr(self, "t_final", stop), stop)
                self._terms = (load_terms(self.dyn.columns, self.phases.nb, self.t, end),
                               self.t)
                self._stretch = stretch
        if ph.form is not None and ph.form[0] == self._generation:
            return ph.form[1]
        terms, origin = self._terms
        if terms is None:
            ph.form = (self._generation, -1)
            return -1
        if ph.spectral is None:
            ph.spectral = SpectralPhase(ph.A)
        packed = build_form(ph, self.phases, terms, origin)
        slot = -1
        if packed is not None:
            slot = len(self._table.index)
            # the pieces find the form of the modes after an event by those modes alone
            key = self.buf.CV[self.cur][:, MODE] if self.phases.by_modes else np.full(
                self.P.shape[0], np.nan)
            self._table = add_form(self._table, packed, key)
        ph.form = (self._generation, slot)
        return slot

    def _pieces(self, slot, stop, out, row):
        """Closed-form pieces from t, up to ``stop`` or an event for the driver, in one
        compiled call (``exact_pieces.run_pieces``)."""
        ch = self.chunk
        left = max(self._step_limit - self.steps, 1)
        status, slot, cur, self._knot, row, e, t1, pieces = self.call(run_pieces)(
            self._table, slot, self.t, stop, self._after_event, ch.times, ch.W, ch.archive,
            self._knot, out, row, self.P, self.kin, self.ops, self.buf, self.cur,
            self._scratch, self._internal, self._mdiag, self._mfull, self.log, self._cascade,
            self._log_room, left)
        self.steps += pieces
        self.cur = cur
        w1 = self._scratch.w.copy()
        self._trial = self.pending = (t1, w1)
        if status == EVENT:
            fi, index = self._table.fi, self._table.index[slot]
            self.exact_event = (int(fi[index[OI] + e]), int(fi[index[OI] + index[NE] + e]))
            self._after_event = True
        elif status == DIVERGED:
            self.pending = (t1, None)
        elif status == CASCADE:
            last = self.log.contact[max(int(self.log.count[0]) - 1, 0)]
            raise SolverError(f"{self.label}: the modes of link '{self.links.link_of(last)}' "
                              f"keep changing at t = {t1:.12g} s (endless cascade of events "
                              f"at one instant)")
        else:
            self.t, self.w = t1, w1
            self._after_event = e >= 0
        return status, row

    def _propagate(self, ph, stop, out, row):
        """One propagator step from t (at most 4 / omega_max, landing on the next archived
        knot or ``stop``), up to the first event."""
        n = self.n
        t0 = self.t
        ch = self.chunk
        nxt = self._knot
        while nxt <= ch.k and not ch.archive[nxt]:
            nxt += 1
        target = float(ch.times[nxt]) if nxt <= ch.k else stop
        land = min(stop, target) if target > t0 else stop
        h = land - t0
        if ph.omega > 0:
            h = min(h, 4.0 / ph.omega)
        coefficients, h = self._fit(t0, h)
        prop = ph.propagators.get(self.degree)
        if prop is None:
            prop = Propagator(ph.A, ph.E, self.degree)
            ph.propagators[self.degree] = prop
        z0 = self._z()
        ev = None
        if len(ph.rz):
            ev = first_event(prop, z0, coefficients, h, ph.rz, np.zeros(len(ph.rz)),
                             -np.ones(len(ph.rz)), skip_start=self._after_event,
                             forcing_rows=ph.ru)
        s_end = h if ev is None else ev.s
        E0 = self.buf.E[self.cur].copy()
        ks = self._knots_until(s_end, strict=ev is not None)
        if ks:
            Z = np.array([prop.state(z0, coefficients, float(ch.times[j] - t0)) for j in ks])
            R = np.array([prop.rate(z, coefficients, float(ch.times[j] - t0))
                          for z, j in zip(Z, ks)])
            Erows = np.array([E0 + self._energy_prop(ph, prop, z0, coefficients,
                                                     float(ch.times[j] - t0)) for j in ks])
            row = self._archive_rows(out, row, ch.times[ks], Z, R, ph, Erows)
        z1 = prop.state(z0, coefficients, s_end) if ev is None else ev.state
        a1 = prop.rate(z1, coefficients, s_end)[n:2 * n]
        E1 = E0 + self._energy_prop(ph, prop, z0, coefficients, s_end)
        t1 = land if (ev is None and s_end == land - t0) else t0 + s_end
        found = None if ev is None else (ev.index, s_end)
        return self._finish(ph, z1, a1, E1, t1, found), row

    def _fit(self, t, h):
        """The forcing's polynomial from t on a step of at most h, halved until it represents
        the forcing to FORCING_TOLERANCE of each column's size: its largest value on the step
        or, when larger, the largest value the run has met so far (``_forcing_scale``)."""
        scale = getattr(self, "_forcing_scale", None)
        for _ in range(30):
            coefficients, error = polynomial_coefficients(self._forcing, t, h, self.degree,
                                                          scale)
            if self.degree <= 1 or error <= FORCING_TOLERANCE:
                break
            h *= 0.5
        # the polynomial's values at the step's ends and middle measure the columns' size
        s = np.array([0.0, 0.5 * h, h])
        values = (s[:, None] ** np.arange(self.degree + 1)
                  / np.array([math.factorial(j) for j in range(self.degree + 1)])) @ coefficients
        seen = np.max(np.abs(values), axis=0)
        self._forcing_scale = seen if scale is None else np.maximum(scale, seen)
        return coefficients, h

    def _energy_prop(self, ph, prop, z0, coefficients, s):
        N = prop.augmented_size
        out = []
        for name, Q in (("w", ph.Qw), ("s", ph.Qs), ("l", ph.Ql)):
            big = np.zeros((N, N))
            big[:len(Q), :len(Q)] = Q
            out.append(prop.quadratic(name, big, z0, coefficients, s))
        return np.array(out)

    def _finish(self, ph, z1, a1, E1, t1, found):
        """Write the end of the piece: the state, or (event) the landed state in the other
        buffer with the event handed to the driver."""
        if not np.all(np.isfinite(z1)) or diverged(z1[:self.n]):
            self.pending = (t1, None)
            x = 1 - self.cur
            self.buf.X[x] = z1[:self.n]
            return DIVERGED
        x = 1 - self.cur
        w1 = self._write(x, z1, a1, t1)
        self.buf.E[x] = E1
        self._set_bond_forces(ph, x, z1, w1)
        self._trial = (t1, w1)
        self.pending = (t1, w1)
        if found is not None:
            c, g = ph.meaning[found[0]]
            cv = self.buf.CV[x]
            # the root of one of the two functions of a min or max is an event only where
            # the law's event function itself has reached zero
            tol = 1e-9 * max(1.0, float(np.max(np.abs(cv[:, G0]), initial=0.0)))
            if cv[c, G0 + g] <= tol:
                self.exact_event = (c, g)
                self._after_event = True
                self.steps += 1
                return EVENT
        self.cur = x
        self.t, self.w = t1, w1
        self.steps += 1
        self._after_event = found is not None
        return DONE

    def _set_bond_forces(self, ph, which, z, w):
        if ph.lam is None:
            return
        contacts, lam_z, lam_u = ph.lam
        u = np.concatenate([w, [1.0]])
        lam = lam_z @ z + lam_u @ u
        cv = self.buf.CV[which]
        for c, value in zip(contacts, lam):
            set_bond(self.P, int(c), cv, float(value), True)

    def _archive_rows(self, out, row, times, Z, R, ph, Erows):
        from fem.integrators.kernels import archive_states

        n = self.n
        times = np.ascontiguousarray(times, float)
        W = np.ascontiguousarray(self.dyn.load_values(times), float)
        Z = np.ascontiguousarray(np.real(Z), float)
        A = np.ascontiguousarray(np.real(R)[:, n:2 * n], float)
        cv0 = self.buf.CV[self.cur]
        if ph.lam is not None:
            contacts, lam_z, lam_u = ph.lam
            U = np.column_stack([W, np.ones(len(times))])
            lam = np.ascontiguousarray(Z @ np.asarray(lam_z).T + U @ np.asarray(lam_u).T)
            bonded = np.asarray(contacts, np.int64)
        else:
            lam, bonded = np.zeros((len(times), 0)), np.zeros(0, np.int64)
        if self._archive_scratch is None:
            m = max(self.L.shape[0] // 3, 1)
            m3 = self.L.shape[0]
            self._archive_scratch = (np.empty_like(cv0), np.zeros(m3), np.zeros(m3),
                                     np.zeros(m3), np.zeros((m, 3, 3)), np.zeros((m, 3, 3)))
            self._evolving_scratch = np.empty_like(cv0) if len(self.mx) else np.zeros(
                (0, cv0.shape[1]))
        return self.call(archive_states)(out, row, times, np.ascontiguousarray(Z[:, :n]),
                              np.ascontiguousarray(Z[:, n:2 * n]), A, W,
                              np.ascontiguousarray(Erows, float), self.P, self.kin, self.ops,
                              cv0, cv0[:, MODE].astype(float), bonded, lam,
                              *self._archive_scratch, float(self.t), self.mx,
                              np.ascontiguousarray(Z[:, 2 * n:]), self._evolving_scratch)

    def trial(self, t_end):
        """The landed state of the event the scheme found (the only trial it offers)."""
        return DONE

    def accept(self, out, row):
        t, w = self._trial
        self.cur = 1 - self.cur
        self.t, self.w = t, w
        self.exact_event = None
        return row

    def restart(self):
        self.equilibrium()
        self._after_event = True
