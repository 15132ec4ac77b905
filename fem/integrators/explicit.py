"""The explicit schemes, on either basis, with every link law: the classical fourth-order
Runge-Kutta method at a fixed step (``rk4``), the embedded pairs with error control ``rk32``
(Bogacki and Shampine 1989) and ``rk54`` (Dormand and Prince 1980), semi-implicit Euler
(``euler``, fixed step, or ADAPT_ORDRE1), velocity Verlet with the apparent-frequency step
(``adaptive2``, ADAPT_ORDRE2) and De Vogelaere-Fu (``devogelaere``, DEVOGE).

All of them advance (x, x') with the acceleration of ``accel``:

    a = M^-1 (B w(t) - C x' - K x + L^T phi(d, d')),

the link forces phi from the laws at d = L x + Lw w, d' = L x' + Lv w; a bonded rigid contact
adds its bond force lambda, solved so that its relative acceleration n . (L a + La w) vanishes
(lambda = (R M^-1 R^T)^-1 (R a_free + n . La w), R the rows n^T L of the bonded contacts): every
one of these schemes keeps linear invariants, so the bodies stay together exactly. The load
between the driver's knots is the cubic through the four nearest knots (``adaptive.load_at``:
exact for piecewise-linear tables, whose breakpoints are knots).

With links in the ``locate`` mode, a step whose end shows a crossing of a law's event function
stops the loop (status EVENT) with the step pending; the modes are held over every step, so that
the right-hand side is smooth inside a step and the error control keeps its meaning.

The compiled loop is in ``fem.integrators.explicit_loop``; the steps themselves, the
acceleration and the quadratures of the energy terms are in
``fem.integrators.explicit_steps``; on an undamped uncoupled modal basis with plane contacts
that have neither damper nor friction, adaptive2 takes the steps that provably keep every
contact's mode in ``fem.integrators.explicit_lean``.
"""

from __future__ import annotations

import math

import numpy as np

from fem.errors import NotAvailableError, SolverError
from fem.integrators.adaptive import (ACCEPTED, ADAPTIVE, CONTROL, ERR_PREV, EXPONENT, H, H0,
                                      HISTORY, HMAX, HMIN, HSTAB, METHOD, RATE_FREE, REJECTED,
                                      SV, SX, TAU, TOL, load_at)
from fem.integrators.base import Scheme
from fem.integrators import loops
from fem.integrators.explicit_loop import RUN, TAKE, TRIAL, loop
from fem.integrators.explicit_steps import (DEVOGE, EULER, RK, VERLET, Mass, Rigid, Tableau,
                                            Work, tableau)
from fem.integrators.kernels import DIVERGED, DONE, EVENT
from fem.integrators.newmark_lean import contact_rows
from fem.linalg import Factor
from fem.links.traits import traits

# --------------------------------------------------------------------------- the scheme


METHODS = {"rk4": RK, "rk32": RK, "rk54": RK, "euler": EULER, "adaptive2": VERLET,
           "devogelaere": DEVOGE}


class Explicit(Scheme):
    """rk4, rk32, rk54, euler, adaptive2 or devogelaere (module docstring).

    ``fixed``: steps are the driver's knots (rk4; euler with ``step``); otherwise the scheme
    chooses its steps with ``tolerance`` within [min_step, max_step] (defaults: 1e-12 and
    1/100 of the analysis span) and archives every ``every``-th accepted step when > 0.
    """

    dense_values = None

    def __init__(self, dynamics, links, *, name, events="locate", label="analysis",
                 fixed=False, tolerance=1e-6, max_step=None, min_step=None, span=1.0,
                 every=0):
        super().__init__(dynamics, links, name=name, events=events, label=label)
        self.method = METHODS[name]
        A, b, e, c, q = tableau(name if name in ("rk4", "rk32", "rk54") else "rk4")
        self.tab = Tableau(np.ascontiguousarray(A), b, e, c)
        self.fixed_step = bool(fixed)
        self.adaptive = not fixed
        self.every = int(every)
        n, nc = self.n, self.P.shape[0]
        self.mass = _mass(dynamics, name, label)
        self.rig = _rigid(self, self.mass)
        m3 = self.L.shape[0]
        nb = dynamics.B.shape[1]
        s = max(self.tab.b.size, 4)
        from fem.laws import NV
        law_traits = traits(self.P)
        self.ws = Work(np.empty(nb), np.empty(nb), np.empty(nb), np.empty(n), np.empty(n),
                       np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.zeros((s, n)),
                       np.zeros((s, n)), np.empty(n), np.empty(n), np.empty(n),
                       np.zeros((nc, NV)), np.zeros(m3), np.zeros(m3), np.zeros(m3),
                       np.zeros(3), np.full(nc, -1.0), np.zeros(6), np.empty(nb),
                       np.flatnonzero(law_traits.evolving).astype(np.int64),
                       np.zeros(int(law_traits.evolving.sum())),
                       np.zeros(int(law_traits.evolving.sum())))
        self.hist_t = np.zeros(3)
        self.hist_f = np.zeros((3, n))
        ctl = np.zeros(CONTROL)
        ctl[METHOD] = self.method
        ctl[ADAPTIVE] = 0.0 if fixed else 1.0
        ctl[TOL] = float(tolerance)
        ctl[EXPONENT] = 1.0 / (q + 1) if self.method == RK else 0.25
        ctl[HMAX] = float(max_step) if max_step else span / 100.0
        ctl[HMIN] = float(min_step) if min_step else 1e-12 * span
        ctl[HSTAB] = math.inf
        ctl[ERR_PREV] = 1.0
        self.span = span
        omega = self.highest_frequency()
        ctl[H0] = 1.0 / omega if omega > 0 else math.inf
        undamped = dynamics.damping.count_nonzero() == 0
        ctl[RATE_FREE] = 1.0 if undamped and not law_traits.any("rate") else 0.0
        if self.method in (EULER, VERLET) and not fixed:
            C = dynamics.damping.toarray() if self.n <= 2000 else None
            rho = float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (C + C.T))), initial=0.0)) \
                if C is not None else 0.0
            fastest = max(omega, 0.5 * rho)
            ctl[HSTAB] = 1.8 / fastest if fastest > 0 else math.inf
            ctl[H] = min(ctl[HMAX], ctl[HSTAB])
        elif self.method == RK:
            h = 0.5 * tolerance ** (1.0 / (q + 1)) / omega if omega > 0 else ctl[HMAX]
            ctl[H] = max(min(h, ctl[HMAX]), ctl[HMIN])
        else:
            h = 0.01 * 2 * math.pi / omega if omega > 0 else ctl[HMAX]
            ctl[H] = max(min(h, ctl[HMAX]), ctl[HMIN])
        self.ctl = ctl
        self._w_static = None
        self.choice = loops.choose(
            name, law_traits, basis=dynamics.basis, locate=self.locate, adaptive=self.adaptive,
            damped=not undamped, diagonal=self.ops.Kdiag.size == n,
            imposed=bool(np.any(dynamics.Lw) or np.any(dynamics.Lv)))
        self.lean = self.choice.loop == "explicit segment"
        R = contact_rows(self.P, self.L) if self.lean else np.zeros((0, n))
        self.lean_rows = (np.ascontiguousarray(R),
                          np.ascontiguousarray(R * self.mass.inv) if self.lean else R)

    def check_resolution(self, step: float):
        if not self.adaptive:
            return super().check_resolution(step)
        super().check_resolution(float(self.ctl[HMIN]))
        if self.ctl[HSTAB] < self.ctl[HMIN]:
            raise SolverError(
                f"{self.label}: the stability limit of {self.name}, {self.ctl[HSTAB]:.3g} s "
                f"(highest frequency with every contact closed: "
                f"{1.8 / self.ctl[HSTAB]:.3g} rad/s), is below min_step = "
                f"{self.ctl[HMIN]:.3g} s")

    def min_step_message(self) -> str:
        return (f"{self.label}: {self.name} needs a step of {self.ctl[H]:.3g} s at "
                f"t = {self.t:.12g} s, below min_step = {self.ctl[HMIN]:.3g} s: the motion is "
                f"faster than the scheme can follow there (a contact stiffness or a parameter "
                f"out of physical range, or a tolerance too tight)")

    def stability_limit(self):
        if not self.fixed_step:
            return None
        omega = self.highest_frequency()
        if omega == 0:
            return None
        return (2.8 if self.method == RK else 2.0) / omega

    # ------------------------------------------------------------------ protocol
    def begin(self, chunk):
        super().begin(chunk)
        ctl = self.ctl
        t0 = float(chunk.times[0])
        if getattr(self, "_t0", None) is not None:
            self.hist_t -= t0 - self._t0          # the history in the new chunk's time
        self._t0 = t0
        ctl[TAU] = self.t - t0
        # the scales of the error control: the largest static response to the loads of
        # this chunk and the largest state so far
        if self.adaptive and chunk.W.size:
            if self._w_static is None:
                omega = self.dyn.omega if self.dyn.omega is not None else None
                floor = 2 * math.pi / self.span
                self._w_static = (np.maximum(omega, floor) if omega is not None
                                  else np.full(self.n, max(self.highest_frequency(), floor)))
            peak = np.max(np.abs(chunk.W @ np.asarray(self.dyn.B).T), axis=0)
            ctl[SX] = max(ctl[SX], float(np.max(peak / self._w_static ** 2, initial=0.0)))
            ctl[SV] = max(ctl[SV], float(np.max(peak / self._w_static, initial=0.0)))
        c = self.cur
        ctl[SX] = max(ctl[SX], float(np.max(np.abs(self.buf.X[c]), initial=0.0)))
        ctl[SV] = max(ctl[SV], float(np.max(np.abs(self.buf.V[c]), initial=0.0)))

    def advance(self, out, row):
        ch = self.chunk
        status, row = self._loop(RUN, out, row)
        self.steps = int(self.ctl[ACCEPTED])
        self.rejected = int(self.ctl[REJECTED])
        t0 = float(ch.times[0])
        self.t = t0 + self.ctl[TAU] if status != DONE else float(ch.times[-1])
        if status == DONE:
            self.t = float(ch.times[-1])
            self.w = ch.W[-1]
        else:
            w = np.empty(ch.W.shape[1])
            load_at(self.ctl[TAU], ch.dt, ch.k, ch.W, w, np.empty_like(w))
            self.w = w
        if status in (EVENT, DIVERGED):
            self.pending = (self.t + self.ctl[H], None)
            self._trial = None
        return status, row

    def _loop(self, mode, out, row):
        """The compiled loop in ``mode`` (``explicit_loop.RUN``, ``TRIAL`` or ``TAKE``)."""
        ch = self.chunk
        return self.call(loop)(mode, self.ctl, self.tab, self.ops, self.kin, self.mass, self.P,
                               self.rig, ch.dt, ch.k, ch.times, ch.W, ch.archive, self.every,
                               self.buf, self.cur, self.ws, self.hist_t, self.hist_f, out, row,
                               self.locate, self.log, self.lean and self.every == 0,
                               *self.lean_rows)

    def _driven(self, mode, t_end, out, row):
        """The loop in ``mode`` over the step [t, t_end] (the step size the loop would take
        next is kept)."""
        ctl = self.ctl
        kept = ctl[H]
        ctl[TAU] = self.t - float(self.chunk.times[0])
        ctl[H] = t_end - self.t
        try:
            return self._loop(mode, out, row)
        finally:
            ctl[H] = kept

    def trial(self, t_end):
        """The pending step again, from t to t_end, with the modes held."""
        status, _ = self._driven(TRIAL, t_end, self.no_rows(), 0)
        self._trial = (float(t_end), self.ws.w.copy())
        return status

    def accept(self, out, row):
        """Take the trial step: archive the knots it covers, then its end is the state."""
        t_end, w1 = self._trial
        _, row = self._driven(TAKE, t_end, out, row)
        self.t, self.w = float(t_end), w1
        self.ctl[TAU] = self.t - float(self.chunk.times[0])
        self.steps = int(self.ctl[ACCEPTED])
        return row

    def restart(self):
        self.equilibrium()
        self.ctl[HISTORY] = 0.0


def _mass(dynamics, name, label) -> Mass:
    """M^-1 for the explicit steps; every free dof needs mass."""
    import scipy.sparse as sp

    M = sp.csr_matrix(dynamics.mass)
    n = M.shape[0]
    d = M.diagonal()
    if dynamics.basis == "modal" or (M.nnz == np.count_nonzero(d) and np.all(d > 0)):
        inv = 1.0 / d if n else np.zeros(0)
        return Mass(True, np.ascontiguousarray(inv), np.zeros((1, 0)), np.zeros(0, np.int64),
                    np.zeros(0))
    massless = np.flatnonzero(np.asarray(abs(M).sum(axis=1)).ravel() == 0)
    if len(massless):
        what = dynamics.describe(int(massless[0]))
        raise NotAvailableError(f"{label}: scheme '{name}' is explicit and needs mass on every "
                                f"free dof ({what} has none): give it mass, or use an "
                                f"implicit scheme (newmark, hht)")
    factor = Factor(M, what="mass matrix")
    if not factor.banded:
        raise NotAvailableError(f"{label}: scheme '{name}' needs a mass matrix of moderate "
                                f"bandwidth in physical space; use a modal basis")
    return Mass(False, np.zeros(0), factor.band, factor.perm, np.empty(n))


def _rigid(scheme, mass) -> Rigid:
    """Rows, W and Z of the rigid contacts."""
    idx = np.asarray(scheme.links.rigid if scheme.links else [], np.int64)
    n = scheme.n
    m3 = scheme.L.shape[0]
    if idx.size:
        R = scheme.bond_rows(idx)
        Z = scheme.mass_solve(R.T)
        W = R @ Z
    else:
        Z = np.zeros((n, 0))
        W = np.zeros((0, 0))
    k = max(idx.size, 1)
    return Rigid(idx, np.ascontiguousarray(W), np.ascontiguousarray(Z), np.zeros(k, np.int64),
                 np.zeros((k, k)), np.zeros(k), np.zeros(m3), np.zeros((0, 3, 3)))
