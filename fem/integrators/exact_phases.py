"""The phases of the exact scheme: for each combination of the links' modes (a contact open
or closed, a friction sticking or sliding one way, a rigid bond or none), the linear system
z' = A z + E u(t) it obeys, with its event functions, bond forces and energy terms as linear
functions of (z, u); built once per combination and kept (see ``fem.integrators.exact``).

The state is z = (x, x', e) (size 2n + m): e holds the internal variables of the m contacts
whose law has an evolving one (in the order of ``Phases.mx``), whose rate equations are linear
in every phase; without such contacts z = (x, x')."""

from __future__ import annotations

import numpy as np

from fem import laws
from fem.errors import NotAvailableError, SolverError
from fem.laws.columns import BLK, KIND, MODE
from fem.links.traits import traits


class Phase:
    """One phase: A (N, N), E (N, nu) on the state z of size N = 2n + m, the event functions
    (rows on z and u, their (contact, function) and the dissipation and work forms on (z, u);
    ``stretch`` (m, N) rows on z (their parts on the loads aside) and ``stretch_weights``
    (m,): the evolving contacts dissipate sum weight (stretch . z)^2 (a spring k in series with
    a dashpot c: its stretch u - e, weight k^2 / c)."""

    def __init__(self):
        self.A = self.E = None
        self.rz = self.ru = None
        self.meaning = []
        self.lam = None              # (bonded contacts, lam_z, lam_u)
        self.Qs = self.Ql = self.Qw = None
        self.C_struct = self.C_links = None
        self.stretch = self.stretch_weights = None
        self.spectral = None
        self.propagators = {}
        self.omega = 0.0
        #: (stretch of the loads, its closed form or None): ``ExactScheme._form``
        self.form = None
        #: the phase was tested by ``ExactScheme._resolvable``
        self.resolved = False


class Terms:
    """The terms of a phase that the laws add contact by contact (``exact_phase`` of each law
    module): on z = (x, x', e) of size N and u = (w, 1) of size nu,

    * K, C (n, n) stiffness and damping, F (n, nu) forcing, Cl (n, n) the links' dampers,
      G (n, m) the forces of the evolving contacts' internal variables on the structure,
      rates_z, rates_u (m, N), (m, nu) their rate equations, stretch (m, N) and weights (m,)
      the forms of their dissipation, sum weight (stretch . z)^2;
    * rz, ru, meaning: the event functions (rows on z and u) and their (contact, function);
    * diss, support: the dissipation and the work of the imposed motion as (coefficient,
      (a_z, a_u), (b_z, b_u)) products; bonded: the bonded rigid contacts (contact, row on x,
      imposed acceleration row, imposed rate form); friction: whether a friction phase holds.
    """

    def __init__(self, phases):
        self.phases = phases
        n, nb, nu, N, m = phases.n, phases.nb, phases.nu, phases.N, phases.m
        self.n, self.nb, self.nu, self.N = n, nb, nu, N
        self.K, self.C = phases.K.copy(), phases.C.copy()
        self.F = np.zeros((n, nu))
        self.F[:, :nb] = phases.B
        self.Cl = np.zeros((n, n))
        self.G = np.zeros((n, m))
        self.rates_z, self.rates_u = np.zeros((m, N)), np.zeros((m, nu))
        self.stretch, self.weights = np.zeros((m, N)), np.zeros(m)
        self.diss, self.support = [], []
        self.rz, self.ru, self.meaning = [], [], []
        self.bonded = []
        self.friction = False

    def rows(self, c, vector):
        """(row on x (n,), imposed parts on w (nb,) of displacement, rate, acceleration) of
        the projection of contact c's link kinematics on ``vector``."""
        return self.phases._rows(c, vector)

    def affine(self, row_x, row_w, const, on_v=False):
        """(a_z (N,), a_u (nu,)): row_x on x (or on x' with ``on_v``), row_w on w, const."""
        n, nb = self.n, self.nb
        az = np.zeros(self.N)
        if on_v:
            az[n:2 * n] = row_x
        else:
            az[:n] = row_x
        au = np.zeros(self.nu)
        au[:nb] = row_w
        au[nb] = const
        return az, au

    def internal(self, c) -> int:
        """The index of evolving contact c among the internal variables (z[2 n + i])."""
        return int(np.searchsorted(self.phases.mx, c))

    def event(self, c, g, az, au):
        """Event function g of contact c: az . z + au . u."""
        self.rz.append(az)
        self.ru.append(au)
        self.meaning.append((c, g))


class Phases:
    """The linear system of each mode set, built on demand and kept."""

    def __init__(self, scheme):
        dyn = scheme.dyn
        self.scheme = scheme
        M = dyn.mass.toarray()
        self.n = n = len(M)
        try:
            self.Minv = np.linalg.inv(M) if n else np.zeros((0, 0))
        except np.linalg.LinAlgError:
            raise NotAvailableError(f"{scheme.label}: the exact scheme needs mass on every "
                                    f"free dof") from None
        if n and (not np.all(np.isfinite(self.Minv)) or np.linalg.cond(M) > 1e14):
            raise NotAvailableError(f"{scheme.label}: the exact scheme needs mass on every "
                                    f"free dof")
        self.K = dyn.stiffness.toarray()
        self.C = dyn.damping.toarray()
        self.B = np.asarray(dyn.B, float)
        self.nb = self.B.shape[1]
        self.nu = self.nb + 1
        self.P = scheme.P
        L = scheme.L.toarray()
        kin = scheme.kin
        self.L, self.Lw, self.Lv, self.La = L, kin.Lw, kin.Lv, kin.La
        #: the evolving contacts (``fem.links.traits``), whose internal variables close the
        #: state z
        self.mx = np.flatnonzero(traits(self.P).evolving).astype(np.int64) if len(
            self.P) else np.zeros(0, np.int64)
        self.m = len(self.mx)
        self.N = 2 * n + self.m
        self.cache: dict = {}
        #: without friction the phase is that of the modes alone: found by their bytes
        self.by_modes = not traits(self.P).any("friction") if len(self.P) else True
        self._fast: dict = {}

    # ------------------------------------------------------------------ contact rows
    def _rows(self, c, vector):
        """(row on x (n,), imposed parts on w (nb,) of displacement, rate, acceleration) of
        the projection of contact c's link kinematics on ``vector``."""
        o = 3 * int(self.P[c, BLK])
        sl = slice(o, o + 3)
        return (vector @ self.L[sl], vector @ self.Lw[sl], vector @ self.Lv[sl],
                vector @ self.La[sl])

    def key(self, cv) -> tuple:
        """The phase of the contact values cv: each contact's mode, with what else of its
        state enters the equations (a sliding sign, a sticking anchor: ``phase_key`` of its
        law)."""
        return tuple(laws.of_code(self.P[c, KIND]).phase_key(self.P, c, cv)
                     for c in range(self.P.shape[0]))

    def get(self, cv) -> Phase:
        if self.by_modes:
            modes = cv[:, MODE].tobytes()
            found = self._fast.get(modes)
            if found is None:
                found = self._fast[modes] = self._get(cv)
                if len(self._fast) > 256:
                    self._fast.clear()
            return found
        return self._get(cv)

    def _get(self, cv) -> Phase:
        key = self.key(cv)
        found = self.cache.get(key)
        if found is None:
            found = self._build(key)
            if len(self.cache) > 256:
                self.cache.clear()
            self.cache[key] = found
        return found

    def _build(self, key) -> Phase:
        n, nb, nu, N = self.n, self.nb, self.nu, self.N
        P = self.P
        t = Terms(self)
        for c, mode in enumerate(key):
            # each law adds its contact's terms in its mode (``exact_phase`` of its module)
            laws.of_code(P[c, KIND]).exact_phase(P, c, mode, t)
        K, C, F, Cl, G = t.K, t.C, t.F, t.Cl, t.G
        rates_z, rates_u, stretch, weights = t.rates_z, t.rates_u, t.stretch, t.weights
        diss, support, rz, ru, meaning, bonded = (t.diss, t.support, t.rz, t.ru, t.meaning,
                                                  t.bonded)
        friction = t.friction
        ph = Phase()
        Minv = self.Minv
        Pm = Minv
        extra = np.zeros((n, nu))
        if bonded:
            R = np.array([b[1] for b in bonded])
            ra = np.zeros((len(bonded), nu))
            ra[:, :nb] = np.array([b[2] for b in bonded])
            S = R @ Minv @ R.T
            try:
                Sinv = np.linalg.inv(S)
            except np.linalg.LinAlgError:
                raise SolverError(f"{self.scheme.label}: bonded impact links are redundant "
                                  f"(their rows are dependent)") from None
            MR = Minv @ R.T
            Pm = Minv - MR @ Sinv @ R @ Minv
            extra = -MR @ Sinv @ ra
            lam_z = Sinv @ R @ Minv @ np.hstack([-K, -C, G])
            lam_u = Sinv @ (R @ Minv @ F + ra)
            ph.lam = ([b[0] for b in bonded], lam_z, lam_u)
            for i, b in enumerate(bonded):
                rz.append(lam_z[i])
                ru.append(lam_u[i])
                meaning.append((b[0], 0))
                support.append((1.0, (lam_z[i], lam_u[i]), b[3]))
        A = np.zeros((N, N))
        A[:n, n:2 * n] = np.eye(n)
        A[n:2 * n, :n] = -Pm @ K
        A[n:2 * n, n:2 * n] = -Pm @ C
        E = np.zeros((N, nu))
        E[n:2 * n] = Pm @ F + extra
        if self.m:
            A[n:2 * n, 2 * n:] = Pm @ G
            A[2 * n:] = rates_z
            E[2 * n:] = rates_u
        ph.A, ph.E = A, E
        ph.rz = np.array(rz).reshape(len(rz), N)
        ph.ru = np.array(ru).reshape(len(ru), nu)
        ph.meaning = meaning
        ph.omega = float(np.max(np.abs(np.linalg.eigvals(A)))) if N else 0.0
        ph.C_struct, ph.C_links = self.C, Cl
        ph.stretch, ph.stretch_weights = stretch, weights
        # quadratic forms on y = (z, u): structural and link dissipation, external work
        Ny = N + nu
        Qs = np.zeros((Ny, Ny))
        Qs[n:2 * n, n:2 * n] = self.C
        Ql = np.zeros((Ny, Ny))
        for coef, a, b in diss:
            va = np.concatenate(a)
            vb = np.concatenate(b)
            Ql += 0.5 * coef * (np.outer(va, vb) + np.outer(vb, va))
        Qw = np.zeros((Ny, Ny))
        Be = np.zeros((n, nu))
        Be[:, :nb] = self.B
        Qw[n:2 * n, N:] += 0.5 * Be
        Qw[N:, n:2 * n] += 0.5 * Be.T
        for coef, a, b in support:
            va = np.concatenate(a)
            vb = np.concatenate(b)
            Qw += 0.5 * coef * (np.outer(va, vb) + np.outer(vb, va))
        ph.Qs, ph.Ql, ph.Qw = Qs, Ql, Qw
        ph.imposed_rows = bool(np.any(ph.ru[:, :nb])) if len(ru) else False
        ph.friction = friction
        ph.constant_forcing_only = not np.any(self.Lw) and not np.any(self.Lv)
        return ph
