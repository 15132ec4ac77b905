"""The phases of the exact scheme: for each combination of the links' modes (a contact open
or closed, a friction sticking or sliding one way, a rigid bond or none), the linear system
z' = A z + E u(t) it obeys, with its event functions, bond forces and energy terms as linear
functions of (z, u); built once per combination and kept (see ``fem.integrators.exact``).

The state is z = (x, x', e) (size 2n + m): e holds the dashpots' elongations of the m Maxwell
contacts (in the order of ``Phases.mx``), whose equations are linear in every phase; without
Maxwell contacts z = (x, x')."""

from __future__ import annotations

import numpy as np

from fem.errors import NotAvailableError, SolverError
from fem.laws import maxwell
from fem.links.traits import traits
from fem.laws.columns import (ANC, BLK, BONDED, CN, CT, DIR, FDIR, GAP, KIND, KN, KT,
                               MODE, MU, MUS, OPEN, REL, RELEASE_GAP, RIGID, SDIR, SLIP, STICK)


class Phase:
    """One phase: A (N, N), E (N, nu) on the state z of size N = 2n + m, the event functions
    (rows on z and u, their (contact, function) and the dissipation and work forms on (z, u);
    ``stretch`` (m, N) the rows of the Maxwell springs' stretches u - e on z (their imposed
    parts on the loads aside) and ``stretch_weights`` (m,) k^2 / c: the dashpots dissipate
    sum k^2 / c (u - e)^2."""

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
        #: the Maxwell contacts, whose dashpots' elongations close the state z
        self.mx = np.flatnonzero(traits(self.P).evolving).astype(np.int64) if len(
            self.P) else np.zeros(0, np.int64)
        self.m = len(self.mx)
        self.N = 2 * n + self.m
        self.cache: dict = {}
        #: without friction the phase is that of the modes alone: found by their bytes
        self.by_modes = not np.any((self.P[:, KIND] != RIGID) & (self.P[:, MU] > 0)) \
            if len(self.P) else True
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
        """The phase of the contact values cv: modes, and the sliding signs and anchors that
        enter the equations."""
        out = []
        for c in range(self.P.shape[0]):
            mode = int(cv[c, MODE])
            if self.P[c, KIND] != RIGID and mode == SLIP:
                t = self.P[c, FDIR:FDIR + 3]
                out.append((mode, 1 if cv[c, SDIR:SDIR + 3] @ t >= 0 else -1))
            elif self.P[c, KIND] != RIGID and mode == STICK and self.P[c, MU] > 0:
                t = self.P[c, FDIR:FDIR + 3]
                out.append((mode, float(cv[c, ANC:ANC + 3] @ t)))
            else:
                out.append((mode,))
        return tuple(out)

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
        K, C = self.K.copy(), self.C.copy()
        F = np.zeros((n, nu))
        F[:, :nb] = self.B
        Cl = np.zeros((n, n))
        # the Maxwell contacts: the force k e of each dashpot on the structure (G), its rate
        # equation e' = (k / c) (u - e) on (z, u), the stretches u - e on z
        G = np.zeros((n, self.m))
        rates_z, rates_u = np.zeros((self.m, N)), np.zeros((self.m, nu))
        stretch, weights = np.zeros((self.m, N)), np.zeros(self.m)
        # dissipation of the links on y = (z, u): (coef, (a_z, a_u), (b_z, b_u)) products
        diss = []
        # work of the imposed motion of the links' dofs: force times the imposed part of the
        # rate it acts on (the structure gets the rest)
        support = []
        friction = False
        rz, ru, meaning = [], [], []
        bonded = []

        def affine(row_x, row_w, const, on_v=False):
            az = np.zeros(N)
            if on_v:
                az[n:2 * n] = row_x
            else:
                az[:n] = row_x
            au = np.zeros(nu)
            au[:nb] = row_w
            au[nb] = const
            return az, au

        for c, mode in enumerate(key):
            m = mode[0]
            nvec = P[c, DIR:DIR + 3]
            ell, pw, pv, pa = self._rows(c, nvec)
            p_aff = affine(ell, pw, -P[c, GAP])
            pd_aff = affine(ell, pv, 0.0, on_v=True)
            imposed_rate = (np.zeros(N), np.concatenate([pv, [0.0]]))
            if P[c, KIND] == maxwell.MAXWELL:
                # F = k (u - e), u = ell . x + pw . w: the structure gets -F ell, the dashpot
                # moves at F / c and dissipates F^2 / c, the imposed motion works F pv
                i = int(np.searchsorted(self.mx, c))
                k, cd = P[c, KN], P[c, CN]
                y_aff = affine(ell, pw, 0.0)
                y_aff[0][2 * n + i] = -1.0
                K += k * np.outer(ell, ell)
                G[:, i] = k * ell
                F[:, :nb] -= k * np.outer(ell, pw)
                rates_z[i], rates_u[i] = (k / cd) * y_aff[0], (k / cd) * y_aff[1]
                stretch[i], weights[i] = y_aff[0], k * k / cd
                diss.append((k * k / cd, y_aff, y_aff))
                support.append((k, y_aff, imposed_rate))
                continue
            if P[c, KIND] == RIGID:
                if m == BONDED:
                    bonded.append((c, ell, pa, imposed_rate))
                else:
                    rz.append(-p_aff[0])
                    ru.append(-p_aff[1])
                    meaning.append((c, 0))
                continue
            k, cc = P[c, KN], P[c, CN]
            force_rule = P[c, REL] != RELEASE_GAP and cc > 0
            fn_aff = (k * p_aff[0] + cc * pd_aff[0], k * p_aff[1] + cc * pd_aff[1])
            sign = 1.0 if m != OPEN else -1.0
            rz.append(sign * p_aff[0])
            ru.append(sign * p_aff[1])
            meaning.append((c, 0))
            if force_rule:
                rz.append(sign * fn_aff[0] / k)
                ru.append(sign * fn_aff[1] / k)
                meaning.append((c, 0))
            if m == OPEN:
                continue
            K += k * np.outer(ell, ell)
            C += cc * np.outer(ell, ell)
            Cl += cc * np.outer(ell, ell)
            F[:, :nb] -= np.outer(ell, k * pw + cc * pv)
            F[:, nb] += k * P[c, GAP] * ell
            diss.append((cc, pd_aff, pd_aff))
            support.append((1.0, fn_aff, imposed_rate))
            if P[c, MU] <= 0:
                continue
            friction = True
            tvec = P[c, FDIR:FDIR + 3]
            lt, tw, tv, ta = self._rows(c, tvec)
            kt, ct = P[c, KT], P[c, CT]
            if m == STICK:
                anc = mode[1]
                K += kt * np.outer(lt, lt)
                C += ct * np.outer(lt, lt)
                Cl += ct * np.outer(lt, lt)
                F[:, :nb] -= np.outer(lt, kt * tw + ct * tv)
                F[:, nb] += kt * anc * lt
                ft = (kt * affine(lt, tw, 0.0)[0] + ct * affine(lt, tv, 0.0, on_v=True)[0],
                      np.concatenate([kt * tw + ct * tv, [-kt * anc]]))
                mus = P[c, MUS]
                rz.append(mus * fn_aff[0] - ft[0])
                ru.append(mus * fn_aff[1] - ft[1])
                meaning.append((c, 1))
                rz.append(mus * fn_aff[0] + ft[0])
                ru.append(mus * fn_aff[1] + ft[1])
                meaning.append((c, 1))
                tv_aff = affine(lt, tv, 0.0, on_v=True)
                diss.append((ct, tv_aff, tv_aff))
                support.append((1.0, ft, (np.zeros(N), np.concatenate([tv, [0.0]]))))
            else:
                s = float(mode[1])
                mu = P[c, MU]
                K += mu * s * k * np.outer(lt, ell)
                C += mu * s * cc * np.outer(lt, ell)
                F[:, :nb] -= mu * s * np.outer(lt, k * pw + cc * pv)
                F[:, nb] += mu * s * k * P[c, GAP] * lt
                tv_aff = affine(lt, tv, 0.0, on_v=True)
                rz.append(s * tv_aff[0])
                ru.append(s * tv_aff[1])
                meaning.append((c, 1))
                diss.append((mu * s, fn_aff, tv_aff))
                support.append((mu * s, fn_aff, (np.zeros(N), np.concatenate([tv, [0.0]]))))
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
