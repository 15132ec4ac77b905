"""The step operators of the Newmark family for one step size, with the links' columns made
as they are needed.

For a step size dt the scheme factorizes S = M + (1 + alpha) gamma dt C + (1 + alpha) beta
dt^2 K once. The links enter a step through Z = S^-1 L^T and W = L Z (``fem.integrators.
newmark_family``), one column of Z per link row: 3 m solves and a dense (n, 3 m) array, which
for a thousand links costs far more than the factor. A link whose mode is open over a step
gives no force, so only the columns of the links that can carry a force are needed:

* with ``events = "step"`` the laws choose the modes inside the step: every column is made at
  once (``full``);
* with ``events = "locate"`` the modes hold over a step: the columns of a link are made the
  first time it is closed (or bonded, or still carries a force) at a step of this size, and
  kept; a step then solves the links' system on those links alone (a Schur complement of
  the whole one: the other rows follow from them), and with every contact open it costs a
  step without links plus the links' kinematics and the test for an event.

``operators(blocks)`` gives the ``StepOperators`` of an active set of links (a few of them
kept, the active set changing only at events).

Links that always act, many of them, take none of these columns: the step solves the whole
system by Newton's method with their tangent in the band of S
(``fem.integrators.newmark_tangent``; ``tangent``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fem.integrators.newmark_links import check_link, resolvable
from fem.integrators.newmark_steps import StepOperators
from fem.integrators.newmark_tangent import no_tangent, pattern, tangent_parts
from fem.linalg import Factor, banded_solve_rows, banded_sum_factor
from fem.laws.columns import BLK, OPEN

#: active sets whose step operators a step size keeps
KEEP_SETS = 8
NO_TANGENT = no_tangent()


class Bands:
    """M, C and K in the band storage (ordering and width) of the first banded factor of S:
    the S of another step size is their weighted sum, S = M + c C + k K entry by entry in
    the order the sparse sum takes, factorized by a compiled band Cholesky without the sparse
    work (the ordering and the width depend on the pattern of S alone). ``of`` gives False when a
    matrix has entries outside the band."""

    def __init__(self, perm, parts):
        self.perm = perm
        self.parts = parts

    @classmethod
    def of(cls, dyn, factor):
        perm = factor.perm
        n, b = factor.band.shape[0], factor.band.shape[1] - 1
        parts = []
        for A in (dyn.mass, dyn.damping, dyn.stiffness):
            P = sp.csr_matrix(A)[perm][:, perm].tocoo()
            if P.nnz and int(np.max(np.abs(P.row - P.col))) > b:
                return False
            ab = np.zeros((n, b + 1))               # the storage of Factor.band
            lower = P.row >= P.col
            ab[P.col[lower], P.row[lower] - P.col[lower]] += P.data[lower]
            parts.append(ab)
        return cls(perm, parts)

    def factor(self, c: float, k: float):
        """The Factor of M + c C + k K, or None when it is not positive definite."""
        M, C, K = self.parts
        band = np.empty_like(M)
        if not banded_sum_factor(M, C, K, float(c), float(k), band):
            return None
        f = Factor.__new__(Factor)
        f.n, f.banded, f.perm, f.band = band.shape[0], True, self.perm, band
        return f


class StepSize:
    """The factor of S for one step size and the links' columns made so far."""

    def __init__(self, scheme, dt: float, checked: bool = True):
        self.dt = dt
        self.checked = checked
        co = scheme.co
        s = 1.0 + co.alpha
        self.bd = s * co.beta * dt * dt
        dyn = scheme.dyn
        S = None
        self.factor = None
        bands = getattr(scheme, "_bands", None)
        if bands:
            self.factor = bands.factor(s * co.gamma * dt, self.bd)
        whole = scheme.tangent and dyn.basis == "physical"
        if self.factor is None or dyn.basis == "modal":
            S = dyn.mass + (s * co.gamma * dt) * dyn.damping + self.bd * dyn.stiffness
            self.factor = Factor(S, what=f"iteration matrix of {scheme.name} (dt = {dt:g} s)",
                                 pattern=pattern(scheme.L) if whole else None)
            if bands is None and self.factor.banded and dyn.basis == "physical":
                scheme._bands = Bands.of(dyn, self.factor)
        #: the parts of the whole system's Newton iteration, when the links take it
        self.tangent = None
        bands = getattr(scheme, "_bands", None)
        if whole and bands and self.factor.banded:
            M, C, K = bands.parts
            self.tangent = tangent_parts(scheme.L, M + (s * co.gamma * dt) * C + self.bd * K,
                                         bands.perm)
        self.scheme = scheme
        self.n = scheme.n
        self.L = scheme.L
        self.m = self.L.shape[0] // 3
        factor = self.factor
        band = factor.band if factor.banded else np.zeros((0, 1))
        perm = factor.perm if factor.banded else np.zeros(0, np.int64)
        kind, diag_inv = 0, np.zeros(0)
        SK = SC = SB = np.zeros((0, 0))
        if dyn.basis == "modal":
            # a small dense system: S^-1 itself, applied mode by mode (diagonal) or folded
            # into S^-1 K, S^-1 C and S^-1 B
            Sd = S.toarray()
            if not np.any(Sd - np.diag(np.diag(Sd))):
                kind, diag_inv = 1, 1.0 / np.diag(Sd)
            else:
                kind = 2
                Si = np.linalg.inv(Sd)
                SiK = Si @ dyn.stiffness.toarray()
                SiC = Si @ dyn.damping.toarray()
                SK, SC = np.ascontiguousarray(SiK.T), np.ascontiguousarray(SiC.T)
                SB = np.ascontiguousarray((Si @ np.asarray(dyn.B)).T)
        self.base = (band, perm, kind, diag_inv, SK, SC, SB)
        #: link b -> (its rows q of L that are not zero, its columns of Z transposed
        #: (len(q), n), of W (3 m, len(q)))
        self.columns: dict[int, tuple] = {}
        self._batch = None
        self.sets: dict = {}
        self.full_ops = None

    # ------------------------------------------------------------------ columns
    def _solve(self, rhs: np.ndarray) -> np.ndarray:
        return self.factor.solve(np.ascontiguousarray(rhs))

    def _make(self, blocks):
        """The columns of the links ``blocks`` not made yet (and, for the grid's step sizes,
        the check of their contacts' stiffness against the step's: a step cut at an event
        is shorter, and k beta h^2 L S(h)^-1 L^T grows with h). A link keeps the columns of
        its rows of L that are not zero (a link along one axis of the model has one): the
        rows q, Z's columns transposed (len(q), n) and W's (3 m, len(q))."""
        new = [b for b in blocks if b not in self.columns]
        if not new:
            return
        sc = self.scheme
        rows = [sc.link_columns(b) for b in new]
        Zt = np.zeros((sum(len(r) for r in rows), self.n))
        k = 0
        for found in rows:
            for _, index, values in found:
                Zt[k, index] = values
                k += 1
        if self.factor.banded:
            banded_solve_rows(self.factor.band, self.factor.perm, Zt)
        else:
            for k in range(Zt.shape[0]):
                Zt[k] = self._solve(Zt[k])
        # W = L Z on these columns (L's entries as coordinates)
        row, col, data = sc.link_entries()
        W = np.empty((3 * self.m, Zt.shape[0]))
        for k in range(Zt.shape[0]):
            W[:, k] = np.bincount(row, weights=data * Zt[k, col], minlength=W.shape[0])
        k = 0
        for b, found in zip(new, rows):
            qs = tuple(q for q, _, _ in found)
            part = (qs, Zt[k:k + len(qs)], W[:, k:k + len(qs)])
            k += len(qs)
            if self.checked:
                Wb = np.zeros((3, 3))
                Wb[:, list(qs)] = W[3 * b:3 * b + 3, k - len(qs):k]
                for c in np.nonzero(sc.P[:, BLK] == b)[0]:
                    check_link(sc.P, int(c), 0.5 * (Wb + Wb.T), self.bd, sc.links, sc.label,
                               sc.t)
            self.columns[b] = part
        self._batch = (tuple(new), Zt)

    def operators(self, blocks) -> StepOperators:
        """The step operators with the links ``blocks`` (sorted tuple) able to carry a force;
        ``None``: every link (``full``)."""
        if self.tangent is not None:
            return self.whole()
        if blocks is None:
            return self.full()
        found = self.sets.get(blocks)
        if found is not None:
            return found
        self._batch = None
        self._make(blocks)
        n, m3 = self.n, 3 * self.m
        act = np.array([3 * b + q for b in blocks for q in range(3)], np.int64)
        slot = np.full(max(self.m, 1), -1, np.int64)
        slot[list(blocks)] = np.arange(len(blocks))
        # Z (n, na) in CSC form: a dense column per row of L that is not zero, none for the
        # others
        Zp = np.zeros(act.size + 1, np.int64)
        Wa = np.zeros((m3, act.size))
        parts = [self.columns[b] for b in blocks]
        for kb, (qs, _, Wb) in enumerate(parts):
            for j, q in enumerate(qs):
                Zp[3 * kb + q + 1] = n
                Wa[:, 3 * kb + q] = Wb[:, j]
        np.cumsum(Zp, out=Zp)
        if self._batch is not None and self._batch[0] == blocks:
            Zd = self._batch[1].ravel()          # made together, in this order: no copy
        elif parts:
            Zd = np.concatenate([Zt.ravel() for _, Zt, _ in parts])
        else:
            Zd = np.zeros(0)
        Zi = self.scheme.dense_index(Zd.size // max(n, 1))[0]
        if blocks:
            # W is symmetric: its square part on the active rows made so to round-off
            Wa[act] = 0.5 * (Wa[act] + Wa[act].T)
        band, perm, kind, diag_inv, SK, SC, SB = self.base
        ops = StepOperators(band, perm, Zd, Zi, Zp, Wa, act, slot, kind, diag_inv, SK, SC, SB,
                            NO_TANGENT)
        if len(self.sets) >= KEEP_SETS:
            self.sets.pop(next(iter(self.sets)))
        self.sets[blocks] = ops
        return ops

    def full(self) -> StepOperators:
        """Every link's columns (``events = "step"``)."""
        if self.full_ops is None:
            m3 = 3 * self.m
            if m3:
                LT = self.L.T.toarray()
                Z = np.column_stack([self._solve(LT[:, j]) for j in range(m3)])
                Wl = np.asarray(self.L @ Z)
                Wl = np.ascontiguousarray(0.5 * (Wl + Wl.T))
                sc = self.scheme
                resolvable(sc.P, Wl, self.bd, sc.links, sc.label, sc.t)
            else:
                Z, Wl = np.zeros((self.n, 0)), np.zeros((0, 0))
            self.full_ops = self._assemble(Z, Wl, np.arange(m3, dtype=np.int64),
                                           np.arange(max(self.m, 1), dtype=np.int64))
        return self.full_ops

    def whole(self) -> StepOperators:
        """No link columns: the step solves the whole system with the links' tangent in the
        band of S (``fem.integrators.newmark_tangent``)."""
        if self.full_ops is None:
            m3 = 3 * self.m
            band, perm, kind, diag_inv, SK, SC, SB = self.base
            self.full_ops = StepOperators(
                band, perm, np.zeros(0), np.zeros(0, np.int64), np.zeros(m3 + 1, np.int64),
                np.zeros((m3, 0)), np.zeros(0, np.int64), np.full(max(self.m, 1), -1, np.int64),
                kind, diag_inv, SK, SC, SB, self.tangent)
        return self.full_ops

    def _assemble(self, Z, Wl, act, slot) -> StepOperators:
        """The StepOperators; Z in CSC parts, its zeros left out."""
        Zc = sp.csc_matrix(Z)
        Zc.eliminate_zeros()
        band, perm, kind, diag_inv, SK, SC, SB = self.base
        return StepOperators(band, perm, np.ascontiguousarray(Zc.data, np.float64),
                             np.ascontiguousarray(Zc.indices, np.int64),
                             np.ascontiguousarray(Zc.indptr, np.int64), Wl, act, slot, kind,
                             diag_inv, SK, SC, SB, NO_TANGENT)


def active_links(P, flags, phi) -> tuple:
    """The links (sorted) that can carry a force over a step whose modes hold (``flags``,
    events = "locate"): those with a contact in a mode other than open, and those whose
    force at the start of the step is not zero (HHT's equation weighs it)."""
    blocks = set(P[np.asarray(flags) != OPEN, BLK].astype(np.int64).tolist())
    if phi.size:
        blocks.update(np.nonzero(np.any(phi.reshape(-1, 3) != 0.0, axis=1))[0].tolist())
    return tuple(sorted(blocks))
