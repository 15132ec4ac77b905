"""Shock links on a modal basis: the contacts, events and energies both schemes share.

Contacts. A plane contact j has the penetration p_j = ell_j . u - gap_j (positive in contact)
on the physical displacement u = T Phi q (the link's dofs must not carry an imposed motion).
With the row r_j = Phi^T T^T ell_j (m,) of the modal matrix at the link's dofs,
p_j = r_j . q - gap_j and p_j' = r_j . q'. In contact the link force on the structure is
-F_j ell_j with F_j = k_j p_j + c_j p_j' (N), so the generalized equations are

    q'' + Cg q' + diag(omega^2) q = Bg w(t) - sum_j F_j r_j   (contacts in contact).

A contact is in contact when p_j > 0, and, with ``release = "force"``, F_j > 0 as well (it
never pulls); with ``release = "gap"`` the force may pull while p_j > 0. The forces are worked
out from the penetrations at the link's dofs every step (O(m) per contact).

Energies (J), cumulative terms tallied in the loops at the scheme's own instants:

* external work W = sum over steps of (h/2) (f_i . q'_i + f_i+1 . q'_i+1), f = Bg w (the
  trapezoidal rule of the power, consistent with the kinetic energy 1/2 |q'|^2 at the steps:
  for central differences the increment is f_i . (q_i+1 - q_i-1)/2 = f_i v_i dt to second
  order, as in the classical E_inj = sum f_i v_i dt);
* dissipated D: the same rule on q'.Cg q' + sum over contacts in contact of c_j p_j'^2, plus
  the elastic energy 1/2 k p^2 of a contact that opens while still penetrated (possible with
  ``release = "force"`` and contact damping), minus that of one that closes while penetrated.

The kinetic, potential and link energies are worked out from the archived states
(``row_energies``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import NotAvailableError

RELEASE = {"force": 0, "gap": 1}
RELEASE_FORCE, RELEASE_GAP = 0, 1
#: slots of the accumulator array: external work, dissipated energy, their powers at the
#: current state
WORK, DISSIPATED, POWER, DISSIPATION = range(4)
#: samples of the dense output per step where the contact states are checked
SAMPLES = 4


@dataclass
class ModalContacts:
    """The plane contacts of an analysis, on the modal basis.

    R (nc, m): rows r_j = Phi^T T^T ell_j; gap, stiffness, damping (nc,); release (nc,) int
    (0 "force", 1 "gap"); link and side names per contact.
    """
    links: list
    sides: list
    R: np.ndarray
    gap: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    release: np.ndarray

    @property
    def count(self) -> int:
        return len(self.gap)

    @classmethod
    def build(cls, contacts, basis, model, where="analysis") -> "ModalContacts":
        """From ``fem.links.shock.PlaneContact`` objects (ell on all model dofs)."""
        T, G = model.constraints.T, model.constraints.G
        rows = []
        for c in contacts:
            if G.shape[1] and np.any(np.asarray(G.T @ c.ell).ravel() != 0):
                raise NotAvailableError(f"{where}.links: link '{c.link}' acts on dofs with an "
                                        f"imposed motion, which is not available yet on a "
                                        f"modal basis")
            free = np.asarray(T.T @ c.ell, float).ravel()
            rows.append(basis.shapes.T @ free)
        m = basis.size
        R = np.ascontiguousarray(np.array(rows, float).reshape(len(contacts), m))
        return cls(links=[c.link for c in contacts], sides=[c.side for c in contacts], R=R,
                   gap=np.array([c.gap for c in contacts], float),
                   stiffness=np.array([c.stiffness for c in contacts], float),
                   damping=np.array([c.damping for c in contacts], float),
                   release=np.array([RELEASE[c.release] for c in contacts], np.int64))

    def states(self, q, v) -> np.ndarray:
        """(nc,) int: 1 for the contacts in contact at (q, q') (module docstring)."""
        p = self.R @ q - self.gap
        f = self.stiffness * p + self.damping * (self.R @ v)
        closed = (p > 0) & ((self.release == RELEASE_GAP) | (f > 0))
        return closed.astype(np.int64)

    def forces(self, q, v, states) -> np.ndarray:
        """(rows, nc) normal forces F_j (N) of archived rows q, v (rows, m) and states."""
        p = q @ self.R.T - self.gap
        return states * (self.stiffness * p + self.damping * (v @ self.R.T))

    def stiffest_frequency(self, kk) -> float:
        """An upper estimate (rad/s) of the highest frequency with the links closed: every
        link closed on its first side (the sides of a two-planes obstacle exclude each other),
        damping left out."""
        K = np.diag(np.asarray(kk, float))
        seen = set()
        for j, name in enumerate(self.links):
            if name in seen:
                continue
            seen.add(name)
            K = K + self.stiffness[j] * np.outer(self.R[j], self.R[j])
        lam = np.linalg.eigvalsh(K)[-1] if len(K) else 0.0
        return float(np.sqrt(max(lam, 0.0)))


def row_energies(contacts: ModalContacts, kk, q, v, states):
    """Kinetic, potential and link energies (rows,) J of archived rows."""
    kinetic = 0.5 * np.sum(v * v, axis=1)
    potential = 0.5 * np.sum(kk[None, :] * q * q, axis=1)
    p = q @ contacts.R.T - contacts.gap
    link = np.sum(states * 0.5 * contacts.stiffness * p * p, axis=1)
    return kinetic, potential, link


class _Events:
    """Event buffers filled by the compiled loops, drained after each call."""

    def __init__(self, nc, capacity=1024):
        self.capacity = max(capacity, 4 * nc + 4)
        self.time = np.zeros(self.capacity)      # step index (fixed step) or local time (s)
        self.contact = np.zeros(self.capacity, np.int64)
        self.kind = np.zeros(self.capacity, np.int64)
        self.speed = np.zeros(self.capacity)
        self.count = np.zeros(1, np.int64)

    def drain(self):
        n = int(self.count[0])
        out = [(self.time[i], int(self.contact[i]), int(self.kind[i]), self.speed[i])
               for i in range(n)]
        self.count[0] = 0
        return out


class _LinkScheme:
    """What both schemes with links share: contacts, states, accumulators, archived extras
    and events."""

    def _setup_links(self, contacts: ModalContacts, times, archive_first: bool):
        self.contacts = contacts
        self.R = contacts.R
        self.gap = contacts.gap
        self.ks = contacts.stiffness
        self.cs = contacts.damping
        self.release = contacts.release
        self.active = np.zeros(contacts.count, np.int64)
        self.acc = np.zeros(4)
        self.times = np.asarray(times, float)
        self.cursor = 0
        self.archive_first = bool(archive_first)
        self.pending = []          # (states (rows, nc), energies (rows, 2)) per archived block
        self.events = []           # (time s, contact, kind 1 impact / 0 separation, speed)
        self._ev = _Events(contacts.count)
        self.struct_damped = bool(np.any(self.C != 0))

    def initial_acceleration(self, t0, u, v, w0) -> np.ndarray:
        self.active[:] = self.contacts.states(u, v)
        f = self.basis.B @ w0
        p = self.R @ u - self.gap
        pd = self.R @ v
        F = self.active * (self.ks * p + self.cs * pd)
        self.acc[:] = 0.0
        self.acc[POWER] = float(f @ v)
        self.acc[DISSIPATION] = float(v @ (self.C @ v)) + float(np.sum(self.active * self.cs
                                                                      * pd * pd))
        if self.archive_first:
            self.pending.append((self.active[None, :].astype(float), np.zeros((1, 2))))
        return f - self.C @ v - self.kk * u - F @ self.R

    def take_extras(self, rows: int):
        """(states (rows, nc), energies (rows, 2)) of the next ``rows`` archived rows."""
        while self.pending and len(self.pending[0][0]) == 0:
            self.pending.pop(0)          # a call that archived nothing
        s, e = self.pending.pop(0)
        if len(s) != rows:
            raise RuntimeError(f"archived link rows out of step ({len(s)} for {rows})")
        return s, e

    def _collect(self, base_time=None):
        """Move the events of the compiled loop to ``events``: their times are step indices
        from the call's start (``base_time`` None) or local times from ``base_time`` (s)."""
        for t, j, kind, speed in self._ev.drain():
            when = self.times[self.cursor + int(t)] if base_time is None else base_time + t
            self.events.append((float(when), j, kind, float(speed)))

    def event_rows(self):
        """(time, kind, link, detail) rows of the events, in time order."""
        rows = []
        for t, j, kind, speed in sorted(self.events, key=lambda e: e[0]):
            rows.append((t, "impact" if kind else "separation", self.contacts.links[j],
                         f"side {self.contacts.sides[j]}, approach speed {speed:.9g} m/s"))
        return rows
