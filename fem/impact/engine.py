"""Bodies that impact, stick together and separate: the equations of each phase and the
laws applied at the events.

The integrated system is  M q'' + C q' + K q = B w(t)  (physical free dofs, or modal
coordinates) with impact links of rows ell_j (gap r_j = gap_j + ell_j . q >= 0).

* Free link: nothing acts; the event is the gap reaching zero (downward).
* Impact (Newton's law, momentum conserved): an impulse along ell_j sets the outgoing relative
  velocity to -e times the incoming one, the bonded links keeping their zero relative velocity:
  dv = M^-1 R^T P with R the rows of the bonded links and of j, P = (R M^-1 R^T)^-1 (target - R v).
  With e = 0, or an approach slower than the link's grazing velocity, the outgoing relative
  velocity is zero and the link sticks.
* Bonded links S (rows R): the bodies move together, R q'' = 0, under the interaction forces
      lambda = (R M^-1 R^T)^-1 R M^-1 (K q + C q' - B w),
  positive when they push the bodies apart; q'' = P (B w - C q' - K q) with
  P = M^-1 - M^-1 R^T (R M^-1 R^T)^-1 R M^-1. Rule "unilateral": the bond holds while lambda > 0
  (a bond formed under tension releases at once). Rule "until_tension": the bond holds until
  lambda passes from compression to tension (a bond formed under tension waits for compression
  first). Separation is the event lambda = 0.

Each phase is linear: z' = A z + E [w; 1], with event functions g = rows . z + frows . [w; 1]
+ offsets (the interaction force depends on the loads).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fem.errors import SolverError

#: a cascade of simultaneous events longer than this many per link stops the run
MAX_CASCADE = 50


@dataclass
class Phase:
    bonded: tuple
    A: np.ndarray            # (2n, 2n)
    E: np.ndarray            # (2n, nb + 1)
    lam_z: np.ndarray        # (ns, 2n): interaction forces of the bonded links
    lam_w: np.ndarray        # (ns, nb + 1)
    index: np.ndarray        # (ns,) which links are bonded
    omega: float             # largest |eigenvalue| of A


@dataclass
class LinkState:
    bonded: list
    compressed: list         # until_tension: compression seen since the bond formed


@dataclass
class Record:
    time: float
    kind: str
    link: str
    detail: str
    before: float = np.nan   # relative velocity before (m/s)
    after: float = np.nan    # relative velocity after (m/s)
    lost: float = np.nan     # kinetic energy lost (J)

    def row(self):
        return (self.time, self.kind, self.link, self.detail, self.before, self.after, self.lost)


EVENT_COLUMNS = ("velocity_before", "velocity_after", "energy_lost")


@dataclass
class ImpactSystem:
    M: np.ndarray
    K: np.ndarray
    C: np.ndarray
    B: np.ndarray
    rows: np.ndarray          # (nl, n)
    gaps: np.ndarray          # (nl,)
    restitution: np.ndarray
    grazing: np.ndarray
    bond: list
    names: list
    phases: dict = field(default_factory=dict)

    def __post_init__(self):
        self.n = len(self.M)
        self.Minv = np.linalg.inv(self.M)
        self.nb = self.B.shape[1]

    # ----------------------------------------------------------------- phases
    def phase(self, bonded: tuple) -> Phase:
        found = self.phases.get(bonded)
        if found is None:
            found = self._phase(bonded)
            self.phases[bonded] = found
        return found

    def _phase(self, bonded: tuple) -> Phase:
        n, nb = self.n, self.nb
        index = np.flatnonzero(np.asarray(bonded, bool))
        Minv = self.Minv
        P = Minv.copy()
        lam_z = np.zeros((len(index), 2 * n))
        lam_w = np.zeros((len(index), nb + 1))
        if len(index):
            R = self.rows[index]
            W = R @ Minv @ R.T
            try:
                Winv = np.linalg.inv(W)
            except np.linalg.LinAlgError:
                raise SolverError("bonded impact links are redundant (their rows are dependent)") \
                    from None
            S = Winv @ R @ Minv                      # (ns, n)
            P = Minv - Minv @ R.T @ S
            lam_z = np.hstack([S @ self.K, S @ self.C])
            lam_w[:, :nb] = -S @ self.B
        A = np.zeros((2 * n, 2 * n))
        A[:n, n:] = np.eye(n)
        A[n:, :n] = -P @ self.K
        A[n:, n:] = -P @ self.C
        E = np.zeros((2 * n, nb + 1))
        E[n:, :nb] = P @ self.B
        omega = float(np.max(np.abs(np.linalg.eigvals(A)))) if n else 0.0
        return Phase(bonded, A, E, lam_z, lam_w, index, omega)

    # ----------------------------------------------------------------- measures
    def gap(self, z) -> np.ndarray:
        return self.gaps + self.rows @ z[:self.n]

    def gap_rate(self, z) -> np.ndarray:
        return self.rows @ z[self.n:]

    def forces(self, phase: Phase, z, w1) -> np.ndarray:
        """Interaction force (nl,) of every link (0 for the free ones) at state z, forcing
        values w1 = [w; 1]."""
        out = np.zeros(len(self.gaps))
        if len(phase.index):
            out[phase.index] = phase.lam_z @ z + phase.lam_w @ w1
        return out

    def kinetic(self, z) -> float:
        v = z[self.n:]
        return 0.5 * float(v @ self.M @ v)

    # ----------------------------------------------------------------- events
    def functions(self, state: LinkState):
        """(rows (ne, 2n), forcing rows (ne, nb + 1), offsets, directions, meaning) of the
        event functions of a link state; meaning = (link, what)."""
        n, nb = self.n, self.nb
        phase = self.phase(tuple(state.bonded))
        rows, frows, offsets, directions, meaning = [], [], [], [], []
        k = 0
        for j in range(len(self.gaps)):
            if not state.bonded[j]:
                rows.append(np.concatenate([self.rows[j], np.zeros(n)]))
                frows.append(np.zeros(nb + 1))
                offsets.append(self.gaps[j])
                directions.append(-1)
                meaning.append((j, "contact"))
            else:
                rows.append(phase.lam_z[k])
                frows.append(phase.lam_w[k])
                offsets.append(0.0)
                waiting = self.bond[j] == "until_tension" and not state.compressed[j]
                directions.append(+1 if waiting else -1)
                meaning.append((j, "compression" if waiting else "separation"))
                k += 1
        return (np.array(rows).reshape(-1, 2 * n), np.array(frows).reshape(-1, nb + 1),
                np.array(offsets, float), np.array(directions), meaning)

    def start(self, z, w1, t: float, records: list) -> tuple[np.ndarray, LinkState]:
        """The link state at the start: a closed gap without relative velocity is a bond."""
        state = LinkState([False] * len(self.gaps), [False] * len(self.gaps))
        r, rd = self.gap(z), self.gap_rate(z)
        scale = max(1.0, float(np.max(np.abs(z[:self.n]), initial=0.0)))
        for j in range(len(self.gaps)):
            if r[j] <= 1e-12 * scale and abs(rd[j]) <= self.grazing[j]:
                state.bonded[j] = True
        z = self._impulse(z, state, None, 0.0)
        # bodies merely touching at the start (no compression between them) are free
        for _ in range(len(self.gaps)):
            lam = self.forces(self.phase(tuple(state.bonded)), z, w1)
            tol = 1e-12 * max(1.0, float(np.max(np.abs(lam), initial=0.0)))
            loose = [j for j in range(len(self.gaps)) if state.bonded[j] and lam[j] <= tol]
            if not loose:
                break
            state.bonded[loose[0]] = False
        for j in range(len(self.gaps)):
            if state.bonded[j]:
                records.append(Record(t, "stick", self.names[j], "bodies together at the start",
                                      rd[j], rd[j], 0.0))
        return self.settle(z, w1, t, state, records)

    def handle(self, j: int, what: str, z, w1, t: float, state: LinkState, records: list):
        """Apply the event ``what`` of link j at t; returns (z, state)."""
        if what == "compression":
            state.compressed[j] = True
            return z, state
        if what == "separation":
            state.bonded[j] = False
            state.compressed[j] = False
            records.append(Record(t, "separation", self.names[j],
                                  "interaction force reached zero", 0.0, 0.0, 0.0))
            return self.settle(z, w1, t, state, records)
        return self.settle(z, w1, t, state, records, hit=j)

    def settle(self, z, w1, t, state: LinkState, records: list, hit: int | None = None):
        """Apply every law that holds at t: impacts of closed gaps that approach, releases of
        bonds under tension (unilateral rule), until nothing changes."""
        n = self.n
        for _ in range(MAX_CASCADE * max(1, len(self.gaps))):
            r, rd = self.gap(z), self.gap_rate(z)
            scale = max(1.0, float(np.max(np.abs(z[:n]), initial=0.0)))
            vscale = max(1.0, float(np.max(np.abs(z[n:]), initial=0.0)))
            closing = [j for j in range(len(self.gaps)) if not state.bonded[j]
                       and (j == hit or r[j] <= 1e-12 * scale) and rd[j] < -1e-12 * vscale]
            hit = None
            if closing:
                j = min(closing, key=lambda i: rd[i])
                z = self._impact(j, z, t, state, records)
                continue
            phase = self.phase(tuple(state.bonded))
            lam = self.forces(phase, z, w1)
            changed = False
            for j in range(len(self.gaps)):
                if not state.bonded[j]:
                    continue
                tol = 1e-12 * max(1.0, float(np.max(np.abs(lam))))
                if lam[j] > tol:
                    state.compressed[j] = True
                if lam[j] < -tol and (self.bond[j] == "unilateral" or state.compressed[j]):
                    state.bonded[j] = False
                    state.compressed[j] = False
                    records.append(Record(t, "separation", self.names[j],
                                          f"bond under tension ({lam[j]:.6g} N) released", 0.0,
                                          0.0, 0.0))
                    changed = True
                    break
            if not changed:
                return z, state
        raise SolverError(f"impact links: endless cascade of simultaneous events at t = {t:.12g} s")

    def _impact(self, j, z, t, state: LinkState, records: list):
        rd = float(self.gap_rate(z)[j])
        e = self.restitution[j]
        stick = e == 0.0 or -rd < self.grazing[j]
        before = self.kinetic(z)
        target = 0.0 if stick else -e * rd
        z = self._impulse(z, state, j, target)
        lost = before - self.kinetic(z)
        after = float(self.gap_rate(z)[j])
        if stick:
            state.bonded[j] = True
            state.compressed[j] = False
            records.append(Record(t, "stick", self.names[j],
                                  f"approach {-rd:.9g} m/s: bodies move together", rd, after,
                                  lost))
        else:
            records.append(Record(t, "impact", self.names[j],
                                  f"approach {-rd:.9g} m/s, rebound {after:.9g} m/s", rd, after,
                                  lost))
        return z

    def _impulse(self, z, state: LinkState, j, target: float):
        """Velocity jump setting the relative velocity of link j to ``target`` while the bonded
        links keep zero relative velocity (momentum conserved)."""
        n = self.n
        index = [i for i in range(len(self.gaps)) if state.bonded[i] and i != j]
        targets = [0.0] * len(index)
        if j is not None:
            index.append(j)
            targets.append(target)
        if not index:
            return z
        R = self.rows[index]
        v = z[n:]
        P = np.linalg.solve(R @ self.Minv @ R.T, np.asarray(targets) - R @ v)
        z = z.copy()
        z[n:] = v + self.Minv @ (R.T @ P)
        return z
