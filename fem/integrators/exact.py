"""The exact scheme: the motion propagated exactly between events, on either basis.

Between events every law of a link is linear in the state and the loads (a contact open or
closed, a unidirectional friction sticking or sliding one way, a rigid bond or none), so each
*phase* is the linear system

    z' = A z + E u(t),   z = (x, x'),   u = (w(t), 1),

built by :class:`Phases` from M, C, K, the loads B w and the links' terms: a closed contact
adds k l l^T to K and c l l^T to C (l = L^T n its row) and -k l (n . Lw w - gap) to the loads;
a sticking unidirectional friction (direction t, row lt) adds kt lt lt^T and ct lt lt^T around
its anchor; one sliding with sign s adds the force -s mu F_n lt, F_n = k p + c p' (a term of K
and C that is not symmetric); bonded rigid contacts R constrain the accelerations, a = P (...)
with P = M^-1 - M^-1 R^T (R M^-1 R^T)^-1 R M^-1, and their bond forces lambda are linear in
(z, u) too.

Two propagators (``fem.exact``):

* closed form (``spectral``): when the phase's state matrix is diagonalizable, the loads on the
  stretch are sums of exponentials and the event functions do not depend on the loads, the
  solution is a sum of exponentials: a whole phase is searched for its next event, archived and
  integrated for its energy terms at once;
* matrix exponential (``propagator``), otherwise: steps of at most 4 / omega_max, the loads
  represented exactly (piecewise linear) or by an interpolating polynomial of degree 8 on steps
  short enough for round-off.

The laws' event functions (``fem.links.law``) are linear functions of (z, u) in a phase; their
roots are located on the exact solution (sampled brackets, grazing extrema, Newton polish, to
round-off: ``fem.exact.spectral.first_root``, ``fem.exact.events.first_event``) and the event
is handed to the driver already landed (``exact_event``). The energy terms are integrated
exactly: quadratic forms of the state and loads (Van Loan's integral, or expm1 for sums of
exponentials).
"""

from __future__ import annotations

import numpy as np

from fem.errors import SolverError
from fem.exact.events import first_event
from fem.exact.propagator import Propagator, polynomial_coefficients
from fem.exact.spectral import (SpectralPhase, first_root, forcing_terms, make_piece,
                                quadratic_integral, work_integral)
from fem.integrators.base import Scheme
from fem.integrators.exact_phases import Phases
from fem.integrators.kernels import DIVERGED, DONE, EVENT, diverged
from fem.links.columns import CMP, FN, G0, LAM, MODE, OPEN

SMOOTH_DEGREE = 8
#: kinds of time functions that are linear between their breakpoints (degree 1 represents
#: them exactly); functions that state a ``polynomial_degree`` are represented by that
#: degree, the others (expressions) by SMOOTH_DEGREE
PIECEWISE_LINEAR = ("table", "record", "constant")
#: largest interpolation error of a smooth forcing on a step, relative to its size there
FORCING_TOLERANCE = 1e-12


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

    # ------------------------------------------------------------------ helpers
    def _forcing(self, t):
        t = np.atleast_1d(np.asarray(t, float))
        return np.column_stack([self.dyn.load_values(t), np.ones(len(t))])

    def _z(self):
        c = self.cur
        return np.concatenate([self.buf.X[c], self.buf.V[c]])

    def _write(self, which, z, a, t, w=None):
        """State z (2n,) and acceleration a at time t into buffer ``which``; its link values
        with the current modes. ``w``: the load columns at t when the caller has them."""
        n = self.n
        b = self.buf
        b.X[which], b.V[which], b.A[which] = z[:n], z[n:], a
        if which != self.cur:
            b.CV[which] = b.CV[self.cur]
        saved, self.cur = self.cur, which
        if w is None:
            w = self.dyn.load_values(np.array([t]))[0]
        w_saved, self.w = self.w, w
        self.link_state(self.buf.CV[saved][:, MODE].astype(float))
        self.cur, self.w = saved, w_saved
        return w

    # ------------------------------------------------------------------ protocol
    def begin(self, chunk):
        super().begin(chunk)
        self._knot = 1

    def advance(self, out, row):
        ch = self.chunk
        t_end = float(ch.times[-1])
        self.exact_event = None
        while self.t < t_end:
            stops = [b for b in self.breaks if self.t < b < t_end]
            stop = min(stops) if stops else t_end
            ph = self.phases.get(self.buf.CV[self.cur])
            self._resolvable(ph)
            result = self._closed_form(ph, stop, out, row)
            if result is None:
                result = self._propagate(ph, stop, out, row)
            status, row = result
            if status != DONE:
                return status, row
        return DONE, row

    def _resolvable(self, ph):
        """Stop with a clear error when following the motion of the phase to the end of the
        analysis would take more than MAX_RESOLVED_STEPS steps of 4 / omega_max (a mass of
        1e-300, a stiffness of 1e308): the fastest dof and the links' modes are named."""
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

    def _closed_form(self, ph, stop, out, row):
        """One closed-form piece from t, up to the first event or ``stop``; None when the
        phase or its loads do not allow it."""
        if ph.imposed_rows or not ph.constant_forcing_only or ph.friction:
            return None
        if ph.spectral is None:
            ph.spectral = SpectralPhase(ph.A)
        spectral = ph.spectral
        if not spectral.ok:
            return None
        n, nb = self.n, self.phases.nb
        t0 = self.t
        # the external forces B w(t) and the state-space forcing E u(t) as sums of
        # exponentials of (t - t0) on the stretch (one decomposition of the load columns)
        B = self.phases.B
        terms = forcing_terms(self.dyn.columns, np.vstack([B, ph.E[:, :nb]]), t0, stop)
        if terms is None:
            return None
        mu, both = terms
        forces = both[:B.shape[0]]
        vectors, mus = self._state_forcing(ph, mu, both[B.shape[0]:])
        piece = make_piece(spectral, self._z(), (mus, vectors), None)
        if piece is None:
            return None
        span = stop - t0
        offsets = ph.ru[:, nb] if len(ph.ru) else np.zeros(0)
        found = None
        if len(ph.rz):
            found = first_root(piece, ph.rz, offsets, -np.ones(len(offsets)), span,
                               skip_start=self._after_event)
        s_end = span if found is None else found[1]
        ks = self._knots_until(s_end, strict=found is not None)
        E0 = self.buf.E[self.cur].copy()
        if ks:
            s = self.chunk.times[ks] - t0
            Z, R = piece.states(s), piece.rates(s)
            row = self._archive(out, row, self.chunk.times[ks], Z, R, ph, piece, mu, forces,
                                s, E0)
        s1 = np.array([s_end])
        z1 = piece.states(s1)[0]
        a1 = piece.rates(s1)[0][n:]
        E1 = E0 + self._energy_closed(ph, piece, mu, forces, s1)[0]
        return self._finish(ph, z1, a1, E1, t0 + s_end, found), row

    def _state_forcing(self, ph, mu, vectors):
        """(vectors (2n, K), mu (K,)): E u(t0 + s) = sum_k vectors_k exp(mu_k s), from the
        terms (mu, vectors) of its load columns and the constant column of E."""
        nb = self.phases.nb
        vectors = np.array(vectors, complex)
        const = ph.E[:, nb]
        if np.any(const):
            zero = np.flatnonzero(mu == 0)
            if len(zero):
                vectors[:, zero[0]] += const
            else:
                mu = np.append(mu, 0j)
                vectors = np.column_stack([vectors, const.astype(complex)])
        # shift to the start of the piece: terms exp(mu (t - a)) are already relative to a
        return vectors, mu

    def _energy_closed(self, ph, piece, mu, forces, s):
        """(work, structural, links) integrals (ns, 3) over [0, s] of a closed-form piece."""
        Es = quadratic_integral(piece, ph.C_struct, s)
        El = quadratic_integral(piece, ph.C_links, s)
        Ew = work_integral(piece, mu, np.asarray(forces, complex), s) if len(mu) else \
            np.zeros(len(s))
        return np.column_stack([Ew, Es, El])

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
        a1 = prop.rate(z1, coefficients, s_end)[n:]
        E1 = E0 + self._energy_prop(ph, prop, z0, coefficients, s_end)
        t1 = land if (ev is None and s_end == land - t0) else t0 + s_end
        found = None if ev is None else (ev.index, s_end)
        return self._finish(ph, z1, a1, E1, t1, found), row

    def _fit(self, t, h):
        for _ in range(30):
            coefficients, error = polynomial_coefficients(self._forcing, t, h, self.degree)
            if self.degree <= 1 or error <= FORCING_TOLERANCE:
                return coefficients, h
            h *= 0.5
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
            cv[c, LAM] = cv[c, FN] = cv[c, G0] = value
            if value > 0:
                cv[c, CMP] = 1.0

    def _archive(self, out, row, times, Z, R, ph, piece, mu, forces, s, E0):
        Erows = E0 + self._energy_closed(ph, piece, mu, forces, s)
        return self._archive_rows(out, row, times, Z, R, ph, Erows)

    def _archive_rows(self, out, row, times, Z, R, ph, Erows):
        from fem.integrators.kernels import archive_states

        n = self.n
        times = np.ascontiguousarray(times, float)
        W = np.ascontiguousarray(self.dyn.load_values(times), float)
        Z = np.ascontiguousarray(np.real(Z), float)
        A = np.ascontiguousarray(np.real(R)[:, n:], float)
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
        return self.call(archive_states)(out, row, times, np.ascontiguousarray(Z[:, :n]),
                              np.ascontiguousarray(Z[:, n:]), A, W,
                              np.ascontiguousarray(Erows, float), self.P, self.kin, self.ops,
                              cv0, cv0[:, MODE].astype(float), bonded, lam,
                              *self._archive_scratch)

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
