"""Closed-form pieces of the exact scheme, compiled (see ``fem.integrators.exact``).

A *form* (built once per phase and stretch of the loads by :func:`build_form`) holds what
every piece of that phase shares: the eigen-decomposition of its state matrix, the particular
solutions of the forcing terms (relative to an origin of time), the event functions and the
damping and load terms of the energies. The forms of a stretch are packed into one table
(:class:`FormTable`: three flat arrays and an index), so that one call of :func:`run_pieces`
follows piece after piece: from the current state to the first event or the end of the
stretch, the weights of the exponentials, the event search, the archived knots the piece
covers (state, rates, link values, energies), and its end written to the other state buffer
with the link values there.

When the link set holds only shock contacts without friction (``internal``), a piece also
takes the event it found: the contact's mode changes (it closes or opens), the instant is
settled (every contact whose event function is then below round-off changes too), the
acceleration restarts from equilibrium and the energy the links' springs lose at the change
is dissipated, as ``fem.integrators.events.locate`` does; the event is logged (``EventLog``,
drained by the driver into the same records), and the next piece goes on with the form of the
new modes when the table has it. Any other event (a rigid contact, friction, an event at the
instant of the previous one) goes to the driver's locator.
"""

from __future__ import annotations

from typing import NamedTuple

import cmath

import numba
import numpy as np

from fem.exact.spectral import (exponentials, first_root, forcing_terms, pair_sum, pair_terms,
                                piece_state, piece_weights, quadratic_coefficients,
                                work_coefficients)
from fem.integrators.kernels import (DIVERGED, DONE, EL, EV_IMPACT, EV_SEPARATION, EVENT,
                                     applied_force, archive_row, diverged, hold_internals,
                                     instant_loss, links_at, log_event)
from fem.laws.columns import G0, MODE, PDOT
from fem.linalg import NO, YES
from fem.links.law import (JACOBIAN, normal_violated, set_bond, stored_energy,
                           switch_normal, switches_normal)
from fem.links.law import internal as internal_variable

#: statuses of ``run_pieces`` besides DONE (the end of the stretch), EVENT (an event for the
#: driver) and DIVERGED: events were taken and the event log or the step limit asks the
#: driver to step in; the instant of an event does not settle; the modes after an event
#: have no form in the table
HANDLED, CASCADE, NEED_FORM = 10, 11, 12
#: columns of a form's row in the index: offsets into the complex, float and integer packs,
#: forcing terms of the state K, terms of the load columns Kw, event functions ne, bonded
#: rigid contacts nbd
OC, OF, OI, NK, NKW, NE, NBD = range(7)


class Form(NamedTuple):
    """What the pieces of one phase share on one stretch of the loads (module docstring), on
    the state z of size N = 2n + m (``fem.integrators.exact_phases``: m evolving contacts):
    V (N, N), Vinv eigenvectors; nu (N + K,) the exponents of a piece (eigenvalues, then
    mu); P (N, K) the particular solutions of the state-space forcing E u(t) =
    sum_k F_k exp(mu_k (t - origin)); mw (Kw,) the exponents of the load columns, Wc (nb, Kw)
    their terms and Fw (n, Kw) those of the external force B w; rows (ne, N), offsets,
    directions (ne,) the event functions, contact, function (ne,) the (contact, function)
    each stands for; Cs, Cl (n, n) the structural and link damping, damped (2,) 1.0 where
    they hold a nonzero term; S (m, N) the forms of the evolving contacts' dissipation and
    Sw (m, m) the diagonal of their weights (they dissipate (S z)^T Sw (S z));
    bonded (nbd,) the bonded rigid contacts, their bond forces lam_z z + lam_u (w, 1);
    origin (s)."""
    V: np.ndarray
    Vinv: np.ndarray
    nu: np.ndarray
    P: np.ndarray
    mu: np.ndarray
    mw: np.ndarray
    Wc: np.ndarray
    Fw: np.ndarray
    rows: np.ndarray
    offsets: np.ndarray
    directions: np.ndarray
    Cs: np.ndarray
    Cl: np.ndarray
    S: np.ndarray
    Sw: np.ndarray
    lam_z: np.ndarray
    lam_u: np.ndarray
    damped: np.ndarray
    origin: float
    contact: np.ndarray
    function: np.ndarray
    bonded: np.ndarray


class FormTable(NamedTuple):
    """The packed forms of one stretch: fc complex, fr float, fi integer packs, index
    (S, 7) (columns OC ... NBD), keys (S, nc) the link modes of each form's phase."""
    fc: np.ndarray
    fr: np.ndarray
    fi: np.ndarray
    index: np.ndarray
    keys: np.ndarray


def empty_table(nc: int) -> FormTable:
    return FormTable(np.zeros(0, complex), np.zeros(0), np.zeros(0, np.int64),
                     np.zeros((0, 7), np.int64), np.zeros((0, nc)))


def add_form(table: FormTable, packed, key) -> FormTable:
    """The table with one more form (``packed`` from :func:`build_form`), for the link modes
    ``key`` (nc,)."""
    fc, fr, fi, dims = packed
    row = np.array([[table.fc.size, table.fr.size, table.fi.size, *dims]], np.int64)
    return FormTable(np.concatenate([table.fc, fc]), np.concatenate([table.fr, fr]),
                     np.concatenate([table.fi, fi]), np.concatenate([table.index, row]),
                     np.concatenate([table.keys, np.asarray(key, float)[None, :]]))


class Scratch(NamedTuple):
    """Work arrays of the piece kernel: link values cv (nc, NV), forces phi, displacements
    d and rates dd (3 m,), Jd, Jv (m, 3, 3), flags (nc,), f (n,), w (nb,) the loads at the
    end of the last piece, z, rate (N,); mx the evolving contacts (the last entries of z are
    their internal variables) and cvm (nc, NV) their value rows at an archived knot."""
    cv: np.ndarray
    phi: np.ndarray
    d: np.ndarray
    dd: np.ndarray
    Jd: np.ndarray
    Jv: np.ndarray
    flags: np.ndarray
    f: np.ndarray
    w: np.ndarray
    z: np.ndarray
    rate: np.ndarray
    mx: np.ndarray
    cvm: np.ndarray


def make_scratch(n: int, nb: int, nc: int, nv: int, m3: int, mx=None) -> Scratch:
    m = max(m3 // 3, 1)
    mx = np.zeros(0, np.int64) if mx is None else np.asarray(mx, np.int64)
    size = 2 * n + len(mx)
    return Scratch(np.zeros((nc, nv)), np.zeros(m3), np.zeros(m3), np.zeros(m3),
                   np.zeros((m, 3, 3)), np.zeros((m, 3, 3)), np.zeros(nc), np.zeros(n),
                   np.zeros(nb), np.zeros(size), np.zeros(size), mx,
                   np.zeros((nc, nv) if len(mx) else (0, nv)))


def load_terms(columns, nb: int, a: float, b: float):
    """(mw (Kw,), Wc (nb, Kw)): the load columns w(t) = sum_k Wc[:, k] exp(mw_k (t - a)) on
    the stretch (a, b), or None when one is not a sum of exponentials there."""
    terms = forcing_terms(columns, np.eye(nb), a, b)
    if terms is None:
        return None
    mw, Wc = terms
    return mw, Wc.reshape(nb, len(mw))


def build_form(ph, phases, terms, a: float):
    """The packed form of phase ``ph`` under the load terms ``terms`` (:func:`load_terms`,
    origin a), for :func:`add_form`: (complex, float and integer packs, dims (K, Kw, ne,
    nbd)); None when the phase is not diagonalizable with well-conditioned eigenvectors or a
    forcing term resonates with the phase."""
    spectral = ph.spectral
    if not spectral.ok:
        return None
    nb, n, N = phases.nb, phases.n, phases.N
    mw, Wc = terms
    Fw = phases.B @ Wc
    vectors = ph.E[:, :nb] @ Wc
    mu = mw
    const = ph.E[:, nb]
    if np.any(const):
        zero = np.flatnonzero(mu == 0)
        if len(zero):
            vectors[:, zero[0]] += const
        else:
            mu = np.append(mu, 0j)
            vectors = np.column_stack([vectors, const.astype(complex)])
    P = np.zeros((N, len(mu)), complex)
    for k in range(len(mu)):
        if not np.any(vectors[:, k]):
            continue
        unit = spectral.particular(mu[k], None, vectors[:, k])
        if unit is None:
            return None
        P[:, k] = unit
    ne = len(ph.rz)
    if ph.lam is not None:
        contacts, lam_z, lam_u = ph.lam
        bonded = np.asarray(contacts, np.int64)
    else:
        bonded, lam_z, lam_u = np.zeros(0, np.int64), np.zeros((0, N)), np.zeros((0, nb + 1))
    fc = np.concatenate([np.ravel(x).astype(complex) for x in (
        spectral.V, spectral.Vinv, np.concatenate([spectral.lam, mu]), P, mu, mw, Wc,
        Fw.reshape(n, len(mw)))])
    fr = np.concatenate([np.ravel(np.asarray(x, float)) for x in (
        ph.rz.reshape(ne, N), ph.ru[:, nb] if ne else np.zeros(0), -np.ones(ne),
        ph.C_struct, ph.C_links, ph.stretch, np.diag(ph.stretch_weights), lam_z, lam_u,
        [float(np.any(ph.C_struct)), float(np.any(ph.C_links)), float(a)])])
    fi = np.concatenate([np.array([c for c, _ in ph.meaning] + [g for _, g in ph.meaning],
                                  np.int64), bonded])
    return fc, fr, fi, (len(mu), len(mw), ne, len(bonded))


# --------------------------------------------------------------------------- compiled
@numba.njit(cache=True, nogil=True)
def form_at(table, slot, n, nb, size):
    """The Form of row ``slot`` of the table: views of its packs (``size``: N, the size of
    the state)."""
    oc, of, oi = table.index[slot, OC], table.index[slot, OF], table.index[slot, OI]
    K, Kw = table.index[slot, NK], table.index[slot, NKW]
    ne, nbd = table.index[slot, NE], table.index[slot, NBD]
    m = size
    nm = size - 2 * n
    J = m + K
    fc, fr, fi = table.fc, table.fr, table.fi
    V = fc[oc:oc + m * m].reshape((m, m))
    oc += m * m
    Vinv = fc[oc:oc + m * m].reshape((m, m))
    oc += m * m
    nu = fc[oc:oc + J]
    oc += J
    P = fc[oc:oc + m * K].reshape((m, K))
    oc += m * K
    mu = fc[oc:oc + K]
    oc += K
    mw = fc[oc:oc + Kw]
    oc += Kw
    Wc = fc[oc:oc + nb * Kw].reshape((nb, Kw))
    oc += nb * Kw
    Fw = fc[oc:oc + n * Kw].reshape((n, Kw))
    rows = fr[of:of + ne * m].reshape((ne, m))
    of += ne * m
    offsets = fr[of:of + ne]
    of += ne
    directions = fr[of:of + ne]
    of += ne
    Cs = fr[of:of + n * n].reshape((n, n))
    of += n * n
    Cl = fr[of:of + n * n].reshape((n, n))
    of += n * n
    S = fr[of:of + nm * m].reshape((nm, m))
    of += nm * m
    Sw = fr[of:of + nm * nm].reshape((nm, nm))
    of += nm * nm
    lam_z = fr[of:of + nbd * m].reshape((nbd, m))
    of += nbd * m
    lam_u = fr[of:of + nbd * (nb + 1)].reshape((nbd, nb + 1))
    of += nbd * (nb + 1)
    damped = fr[of:of + 2]
    origin = fr[of + 2]
    return Form(V, Vinv, nu, P, mu, mw, Wc, Fw, rows, offsets, directions, Cs, Cl, S, Sw,
                lam_z, lam_u, damped, origin, fi[oi:oi + ne], fi[oi + ne:oi + 2 * ne],
                fi[oi + 2 * ne:oi + 2 * ne + nbd])


class Energies(NamedTuple):
    """The terms (``fem.exact.spectral.pair_terms``) of the work of the loads (on the
    exponents of the loads and of the piece) and of the energy the structural and link
    dampers dissipate (on the exponents of the piece, twice) over a piece."""
    work: tuple
    structural: tuple
    links: tuple


@numba.njit(cache=True, nogil=True)
def _energy_terms(f, W, shift):
    """The Energies of the piece of weights W, ``shift`` after the origin of form f."""
    n = f.Fw.shape[0]
    Wv = W[n:2 * n]
    Fs = np.empty_like(f.Fw)
    for k in range(f.mw.size):
        factor = cmath.exp(f.mw[k] * shift)
        for r in range(n):
            Fs[r, k] = f.Fw[r, k] * factor
    work = pair_terms(work_coefficients(Wv, Fs), f.mw, f.nu, NO)
    none = np.zeros((0, 0), np.complex128)
    structural = pair_terms(quadratic_coefficients(Wv, f.Cs) if f.damped[0] else none, f.nu,
                            f.nu, YES)
    if f.S.shape[0] == 0:
        links = pair_terms(quadratic_coefficients(Wv, f.Cl) if f.damped[1] else none, f.nu,
                           f.nu, YES)
    else:
        links = pair_terms(_link_coefficients(f, W, Wv), f.nu, f.nu, YES)
    return Energies(work, structural, links)


@numba.njit(cache=True, nogil=True)
def _link_coefficients(f, W, Wv):
    """The coefficients (``quadratic_coefficients``) of the energy the links dissipate over
    a piece of weights W with evolving contacts: their dampers' Wv^T Cl Wv and the evolving
    contacts' (S W)^T Sw (S W)."""
    J = W.shape[1]
    SW = np.zeros((f.S.shape[0], J), np.complex128)
    for i in range(f.S.shape[0]):
        for r in range(W.shape[0]):
            if f.S[i, r] != 0.0:
                for j in range(J):
                    SW[i, j] += f.S[i, r] * W[r, j]
    out = quadratic_coefficients(SW, f.Sw)
    if f.damped[1]:
        out += quadratic_coefficients(Wv, f.Cl)
    return out


@numba.njit(cache=True, nogil=True)
def _at(f, W, terms, s, E0, z, rate, En, enu, emw):
    """State, rates and energy accumulators E0 + (work, structural, links) of the piece at
    s after its start."""
    exponentials(f.nu, s, enu)
    exponentials(f.mw, s, emw)
    piece_state(W, f.nu, enu, z, rate)
    w, st, lk = terms.work, terms.structural, terms.links
    En[0] = E0[0] + pair_sum(w[0], w[1], w[2], w[3], emw, enu, s)
    En[1] = E0[1] + pair_sum(st[0], st[1], st[2], st[3], enu, enu, s)
    En[2] = E0[2] + pair_sum(lk[0], lk[1], lk[2], lk[3], enu, enu, s)


@numba.njit(cache=True, nogil=True)
def _bond_forces(P, f, z, w, cv):
    """The bond forces of the bonded rigid contacts at (z, w) into cv."""
    nb = w.size
    for i in range(f.bonded.size):
        c = f.bonded[i]
        value = f.lam_u[i, nb]
        for r in range(z.size):
            value += f.lam_z[i, r] * z[r]
        for r in range(nb):
            value += f.lam_u[i, r] * w[r]
        set_bond(P, c, cv, value, YES)


@numba.njit(cache=True, nogil=True)
def _links(P, kin, buf, which, w, sc):
    """The laws at the state of buffer ``which`` with its modes (``Scheme.link_state``)."""
    cv = buf.CV[which]
    for c in range(cv.shape[0]):
        sc.flags[c] = cv[c, MODE]
    links_at(P, kin, buf.X[which], buf.V[which], w, cv, sc.cv, buf.PHI[which], buf.DB[which],
             buf.DD[which], sc.flags, sc.Jd, sc.Jv, JACOBIAN[0], 0.0)
    cv[:, :] = sc.cv


@numba.njit(cache=True, nogil=True)
def _evolving_links(P, kin, z, n, w, cv0, sc):
    """The link values at the state z of a piece into sc.cv, from the values cv0 of its
    start with the evolving contacts at the internal variables of z (``hold_internals``):
    the laws at h = 0."""
    sc.cvm[:, :] = cv0
    hold_internals(P, kin, z[:n], z[n:2 * n], w, sc.cvm, sc.mx, z[2 * n:], sc.d, sc.dd)
    links_at(P, kin, z[:n], z[n:2 * n], w, sc.cvm, sc.cv, sc.phi, sc.d, sc.dd, sc.flags,
             sc.Jd, sc.Jv, JACOBIAN[0], 0.0)


@numba.njit(cache=True, nogil=True)
def run_piece(f, t0, span, skip_start, times, Wk, archive, knot, out, row, P, kin, ops, buf,
              cur, sc, internal, mdiag, mfull, log, cascade):
    """Follow the piece of form f from the state of buffer ``cur`` at t0 over at most
    ``span`` (module docstring). times, Wk, archive: the chunk's knots, load values and
    archive flags, from index ``knot``; out, row: the archive. Returns (status, knot, row,
    event function index or -1, t1). The internal variables of the evolving contacts
    (the end of z) come from the value rows of buffer ``cur`` and go to those of the
    other."""
    n = buf.X.shape[1]
    z, rate = sc.z, sc.rate
    size = z.size
    z0 = np.empty(size)
    z0[:n] = buf.X[cur]
    z0[n:2 * n] = buf.V[cur]
    for i in range(sc.mx.size):
        z0[2 * n + i] = internal_variable(P, sc.mx[i], buf.CV[cur])[0]
    shift = t0 - f.origin
    W = piece_weights(f.V, f.Vinv, f.P, f.mu, shift, z0)
    nu = f.nu
    ne = f.rows.shape[0]
    J = nu.size
    e = -1
    s_end = span
    if ne:
        C = np.zeros((ne, J), np.complex128)
        for i in range(ne):
            for r in range(size):
                if f.rows[i, r] != 0.0:
                    for j in range(J):
                        C[i, j] += f.rows[i, r] * W[r, j]
        e, root = first_root(C, nu, f.offsets, f.directions, span, skip_start)
        if e >= 0:
            s_end = root
    terms = _energy_terms(f, W, shift)
    E0 = buf.E[cur].copy()
    En = np.empty(3)
    enu = np.empty(J, np.complex128)
    emw = np.empty(f.mw.size, np.complex128)
    cv0 = buf.CV[cur]
    for c in range(cv0.shape[0]):
        sc.flags[c] = cv0[c, MODE]
    # the archived knots in [t0, t0 + s_end), or ] without an event
    t_end = t0 + s_end
    last = times.size - 1
    while knot <= last:
        tj = times[knot]
        if tj > t_end or (e >= 0 and tj >= t_end):
            break
        if archive[knot] and tj >= t0:
            _at(f, W, terms, tj - t0, E0, z, rate, En, enu, emw)
            if sc.mx.size:
                _evolving_links(P, kin, z, n, Wk[knot], cv0, sc)
            else:
                links_at(P, kin, z[:n], z[n:], Wk[knot], cv0, sc.cv, sc.phi, sc.d, sc.dd,
                         sc.flags, sc.Jd, sc.Jv, JACOBIAN[0], tj - t0)
            _bond_forces(P, f, z, Wk[knot], sc.cv)
            archive_row(out, row, tj, ops, z[:n], z[n:2 * n], rate[n:2 * n], sc.cv, En, 0.0)
            row += 1
        knot += 1
    # the end of the piece, in the other buffer
    _at(f, W, terms, s_end, E0, z, rate, En, enu, emw)
    t1 = t0 + s_end
    w = sc.w
    for r in range(w.size):
        value = 0.0
        for k in range(f.mw.size):
            value += (f.Wc[r, k] * cmath.exp(f.mw[k] * (t1 - f.origin))).real
        w[r] = value
    x = 1 - cur
    finite = True
    for r in range(size):
        if not np.isfinite(z[r]):
            finite = False
    buf.X[x][:] = z[:n]
    if not finite or diverged(z[:n]):
        return DIVERGED, knot, row, e, t1
    buf.V[x][:] = z[n:2 * n]
    buf.A[x][:] = rate[n:2 * n]
    buf.CV[x][:, :] = buf.CV[cur]
    if sc.mx.size:
        hold_internals(P, kin, buf.X[x], buf.V[x], w, buf.CV[x], sc.mx, z[2 * n:], buf.DB[x],
                      buf.DD[x])
    _links(P, kin, buf, x, w, sc)
    buf.E[x][:] = En
    cv = buf.CV[x]
    _bond_forces(P, f, z, w, cv)
    if e < 0:
        return DONE, knot, row, e, t1
    c = f.contact[e]
    g = f.function[e]
    # the root of one of the two functions of a min or max is an event only where the law's
    # event function itself has reached zero
    size = 1.0
    for k in range(cv.shape[0]):
        size = max(size, abs(cv[k, G0]))
    if not cv[c, G0 + g] <= 1e-9 * size:
        return DONE, knot, row, e, t1
    if not internal or g != 0 or s_end <= 0.0 or not switches_normal(P, c):
        return EVENT, knot, row, e, t1
    status = shock_event(P, kin, ops, buf, x, w, c, t1, sc, mdiag, mfull, log, cascade)
    return status, knot, row, e, t1


@numba.njit(cache=True, nogil=True)
def run_pieces(table, slot, t0, stop, skip_start, times, Wk, archive, knot, out, row, P, kin,
               ops, buf, cur, sc, internal, mdiag, mfull, log, cascade, log_room, pieces_left):
    """Pieces from the state of buffer ``cur`` at t0 in the phase of form ``slot``, up to
    ``stop`` (module docstring). Returns (status, slot, cur, knot, row, event function index
    or -1, t, pieces taken): DONE at ``stop``; EVENT, DIVERGED or CASCADE from a piece (the
    buffer ``cur`` is the one before it); HANDLED when the event log holds ``log_room``
    events or ``pieces_left`` pieces were taken (the driver drains the log and checks the
    step limit); NEED_FORM when the modes after an event have no form in the table."""
    n, nb = buf.X.shape[1], Wk.shape[1]
    t = t0
    pieces = 0
    while True:
        f = form_at(table, slot, n, nb, sc.z.size)
        status, knot, row, e, t1 = run_piece(f, t, stop - t, skip_start, times, Wk, archive,
                                             knot, out, row, P, kin, ops, buf, cur, sc,
                                             internal, mdiag, mfull, log, cascade)
        pieces += 1
        if status != DONE and status != HANDLED:
            return status, slot, cur, knot, row, e, t1, pieces
        cur = 1 - cur
        t = t1
        skip_start = e >= 0
        if e < 0 or t >= stop:
            return DONE, slot, cur, knot, row, e, t, pieces
        if log.count[0] >= log_room or pieces >= pieces_left:
            return HANDLED, slot, cur, knot, row, e, t, pieces
        if status == HANDLED:
            cv = buf.CV[cur]
            slot = -1
            for s in range(table.keys.shape[0]):
                same = True
                for c in range(cv.shape[0]):
                    if table.keys[s, c] != cv[c, MODE]:
                        same = False
                        break
                if same:
                    slot = s
                    break
            if slot < 0:
                return NEED_FORM, slot, cur, knot, row, e, t, pieces


@numba.njit(cache=True, nogil=True)
def _switch(P, c, cv, d, t, log):
    """The event of the normal function of shock contact c (``fem.links.law.switch_normal``),
    logged."""
    kind = EV_IMPACT if switch_normal(P, c, cv, d) else EV_SEPARATION
    log_event(log.time, log.contact, log.kind, log.speed, log.count, t, c, kind, cv[c, PDOT])


@numba.njit(cache=True, nogil=True)
def shock_event(P, kin, ops, buf, cur, w, c, t, sc, mdiag, mfull, log, cascade):
    """The event of the normal function of shock contact c at the state of buffer ``cur``
    (time t, loads w), for a link set of frictionless shock contacts: change its mode, settle
    the instant, restart, dissipate: ``fem.integrators.events.apply`` in compiled code for
    these contacts, with the same rules (the law's ``switch_normal`` and
    ``normal_violated``, the loads' ``applied_force``, ``kernels.instant_loss``), taken
    without a return to Python between the pieces.
    Returns HANDLED, or CASCADE when the modes keep changing (more than ``cascade``
    changes)."""
    cv = buf.CV[cur]
    stored = stored_energy(cv)
    _switch(P, c, cv, buf.DB[cur], t, log)
    changes = 0
    while True:
        _links(P, kin, buf, cur, w, sc)
        changed = False
        d = buf.DB[cur]
        for k in range(cv.shape[0]):
            if switches_normal(P, k) and normal_violated(P, k, cv, d):
                _switch(P, k, cv, d, t, log)
                changed = True
                break
        if not changed:
            break
        changes += 1
        if changes > cascade:
            return CASCADE
    # restart: the acceleration from equilibrium with the new modes
    _links(P, kin, buf, cur, w, sc)
    x, v = buf.X[cur], buf.V[cur]
    applied_force(ops, kin, x, v, w, buf.PHI[cur], YES, sc.f)
    a = buf.A[cur]
    if mdiag.size:
        for r in range(a.size):
            a[r] = sc.f[r] * mdiag[r]
    else:
        for r in range(a.size):
            s = 0.0
            for q in range(a.size):
                s += mfull[r, q] * sc.f[q]
            a[r] = s
    # the energy the links' springs lose at the change is dissipated
    buf.E[cur][EL] += instant_loss(ops, x, v, stored, stored_energy(cv))
    return HANDLED
