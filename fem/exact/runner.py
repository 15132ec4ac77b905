"""The `exact` scheme: a transient analysis propagated exactly between events.

Between events the system is linear (each contact is either closed or open), so each phase is
propagated exactly and the contact entries and releases are located on the exact solution;
the run restarts from them in the new phase. Two propagators:

* closed form (``fem.exact.spectral``): when the phase's state matrix is diagonalizable and the
  forcing on the current stretch is a sum of exponentials (constants, sines, cosines,
  exponentials; tables between their breakpoints when constant), the solution is a sum of
  exponentials: a whole phase is searched for its next event, archived and integrated for its
  energy terms at once;
* matrix exponential (``fem.exact.propagator``), otherwise: steps of at most 4 / omega_max;
  loads constant or piecewise linear in time are integrated exactly (their breakpoints end a
  step); other functions are represented on each step by an interpolating polynomial of degree
  8 on a step short enough for round-off accuracy.

Energy terms (kinetic, potential, link energy, dissipated, external work) are archived with the
fields; the integrals of dissipated power and external power are exact in both propagators
(closed form, or Van Loan's integral of a quadratic form). A contact released by the "force"
rule while still penetrated loses its stored energy k p^2 / 2 at the release (counted as
dissipated), and gives it back if it closes again while penetrated.

The scheme runs in physical space or on a modal basis (``basis = "modal"``): the equations are
the same with M = I, K = Omega^2 and the projected damping, and each contact acts through the
rows of the modal matrix at its dofs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from fem.assembly import reduce
from fem.errors import NotAvailableError, SolverError
from fem.exact.events import first_event
from fem.exact.propagator import Propagator, polynomial_coefficients
from fem.exact.spectral import (SpectralPhase, Piece, first_root, forcing_terms,
                                quadratic_integral, work_integral)
from fem.integrators.base import State
from fem.links.shock import plane_contacts
from fem.timegrid import build_grid

SMOOTH_DEGREE = 8
#: largest interpolation error of a smooth forcing on a step, relative to its size there
FORCING_TOLERANCE = 1e-12
ENERGY = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


@dataclass
class LinearSystem:
    """M q'' + C q' + K q = B w(t) on the coordinates the scheme integrates, with the
    contacts' rows on them and the map back to the physical dofs."""
    M: np.ndarray
    K: np.ndarray
    C: np.ndarray
    B: np.ndarray
    columns: list
    load_values: object          # t (k,) -> w (k, nb)
    expand: object               # (x (k, n), t (k,), order) -> physical rows
    q0: np.ndarray
    v0: np.ndarray
    rows: list                   # one (n,) row per contact: penetration = row . q - gap


class Phases:
    """The linear system of each contact state, built on demand and kept."""

    def __init__(self, system: LinearSystem, contacts):
        M = system.M
        try:
            self.Minv = np.linalg.inv(M)
        except np.linalg.LinAlgError:
            raise NotAvailableError("the exact scheme needs mass on every free dof") from None
        if not np.all(np.isfinite(self.Minv)) or np.linalg.cond(M) > 1e14:
            raise NotAvailableError("the exact scheme needs mass on every free dof")
        self.system = system
        self.K, self.C, self.B = system.K, system.C, np.asarray(system.B, float)
        self.contacts, self.L = contacts, system.rows
        self.n = len(M)
        self.cache = {}
        self.spectral = {}

    def matrices(self, active: tuple):
        """(A (2n, 2n), E (2n, nb + 1), total damping (n, n)) of a contact state; the last
        column of E is the constant force of the closed contacts' offsets."""
        K, C = self.K.copy(), self.C.copy()
        offset = np.zeros(self.n)
        for on, c, ell in zip(active, self.contacts, self.L):
            if on:
                K += c.stiffness * np.outer(ell, ell)
                C += c.damping * np.outer(ell, ell)
                offset += c.stiffness * c.gap * ell
        n = self.n
        A = np.zeros((2 * n, 2 * n))
        A[:n, n:] = np.eye(n)
        A[n:, :n] = -self.Minv @ K
        A[n:, n:] = -self.Minv @ C
        E = np.zeros((2 * n, self.B.shape[1] + 1))
        E[n:, :-1] = self.Minv @ self.B
        E[n:, -1] = self.Minv @ offset
        return A, E, C

    def get(self, active: tuple, degree: int):
        """(Propagator, omega_max, forms) of the general propagator."""
        key = (active, degree)
        if key not in self.cache:
            A, E, C = self.matrices(active)
            prop = Propagator(A, E, degree)
            omega = float(np.max(np.abs(np.linalg.eigvals(A)))) if self.n else 0.0
            self.cache[key] = (prop, omega, self._forms(prop, C))
        return self.cache[key]

    def _forms(self, prop, C):
        """Quadratic forms on the augmented state (z, w, w', ...) of the dissipated power
        v^T C v and the external power (B w) . v."""
        n, nb = self.n, self.B.shape[1]
        N = prop.augmented_size
        Qd = np.zeros((N, N))
        Qd[n:2 * n, n:2 * n] = C
        Qw = np.zeros((N, N))
        Qw[n:2 * n, 2 * n:2 * n + nb] = 0.5 * self.B
        Qw[2 * n:2 * n + nb, n:2 * n] = 0.5 * self.B.T
        return Qd, Qw

    def closed_form(self, active: tuple, segment, forcing):
        """Closed-form data of a contact state on a stretch of forcing, or None.

        forcing = (mu (K,), force vectors (n, K)) at the start of the stretch."""
        key = (active, segment)
        if key not in self.spectral:
            self.spectral[key] = self._closed_form(active, forcing)
        return self.spectral[key]

    def _closed_form(self, active, forcing):
        if forcing is None:
            return None
        base = self.spectral.get((active, "phase"))
        if base is None:
            A, E, C = self.matrices(active)
            base = (SpectralPhase(A), E, C)
            self.spectral[(active, "phase")] = base
        phase, E, C = base
        if not phase.ok:
            return None
        n = self.n
        mu, forces = forcing
        # the closed contacts' offsets are a constant force: one more term at mu = 0
        offset = E[:, -1]
        vectors = np.zeros((2 * n, len(mu)), complex)
        vectors[n:] = self.Minv @ forces
        zero = np.flatnonzero(mu == 0)
        if np.any(offset):
            if len(zero):
                vectors[:, zero[0]] += offset
            else:
                mu = np.append(mu, 0j)
                vectors = np.column_stack([vectors, offset.astype(complex)])
                forces = np.column_stack([forces, np.zeros(n, complex)])
        P = np.zeros_like(vectors)
        for k in range(len(mu)):
            if np.any(vectors[:, k]):
                p = phase.particular(mu[k], None, vectors[:, k])
                if p is None:
                    return None
                P[:, k] = p
        return phase, mu, P, forces, C


def _event_rows(contacts, L, active, n):
    """Rows, offsets, directions and meanings of the functions to watch in this phase."""
    rows, offsets, directions, meaning = [], [], [], []
    for i, (c, ell) in enumerate(zip(contacts, L)):
        p_row = np.concatenate([ell, np.zeros(n)])
        f_row = np.concatenate([c.stiffness * ell, c.damping * ell])
        if active[i]:
            force = c.release == "force" and c.damping > 0
            rows.append(f_row if force else p_row)
            offsets.append(-c.stiffness * c.gap if force else -c.gap)
            directions.append(-1)
            meaning.append((i, "release"))
        else:
            rows.append(p_row)
            offsets.append(-c.gap)
            directions.append(+1)
            meaning.append((i, "contact"))
            if c.release == "force" and c.damping > 0:
                # released while still penetrated: contact again when the force turns positive
                rows.append(f_row)
                offsets.append(-c.stiffness * c.gap)
                directions.append(+1)
                meaning.append((i, "contact_force"))
    return np.array(rows).reshape(-1, 2 * n), np.array(offsets), np.array(directions), meaning


def physical_system(model, system, contacts, where) -> LinearSystem:
    T, G = model.constraints.T, model.constraints.G
    rows = [np.asarray(T.T @ c.ell).ravel() for c in contacts]
    for c in contacts:
        if G.shape[1] and np.any(np.asarray(G.T @ c.ell).ravel() != 0):
            raise NotAvailableError(f"{where}: link '{c.link}' acts on dofs with an imposed "
                                    f"motion; the exact scheme does not handle that yet")
    return LinearSystem(system.mass.toarray(), system.stiffness.toarray(),
                        system.damping.toarray(), np.asarray(system.B, float), system.columns,
                        system.load_values, system.expand, system.q0, system.v0, rows)


def modal_system(model, basis, contacts, where) -> LinearSystem:
    T, G = model.constraints.T, model.constraints.G
    rows = []
    for c in contacts:
        if G.shape[1] and np.any(np.asarray(G.T @ c.ell).ravel() != 0):
            raise NotAvailableError(f"{where}: link '{c.link}' acts on dofs with an imposed "
                                    f"motion; the exact scheme does not handle that yet")
        rows.append(basis.shapes.T @ np.asarray(T.T @ c.ell).ravel())
    m = basis.size
    C = basis.damping if basis.damping.ndim == 2 else np.diag(basis.damping)
    return LinearSystem(np.eye(m), np.diag(basis.stiffness), np.asarray(C, float),
                        np.asarray(basis.B, float), basis.columns, basis.load_values,
                        basis.recombine, basis.q0, basis.v0, rows)


def link_contacts(ctx, spec):
    contacts = []
    for name in spec.params["links"]:
        link = next(lk for lk in ctx.study.links if lk.name == name)
        if link.kind != "shock":
            raise NotAvailableError(f"{spec.where}.links: link kind '{link.kind}' ({name}) is "
                                    f"not available yet with scheme 'exact'")
        contacts += plane_contacts(link, ctx.model, "exact")
    return contacts


def run(ctx, spec):
    """Physical-space analysis with scheme = "exact"."""
    p = spec.params
    system = reduce(ctx.model, p["loads"])
    contacts = link_contacts(ctx, spec)
    linear = physical_system(ctx.model, system, contacts, spec.where)
    state = _initial(ctx, spec, linear)
    aw = ctx.writer.analysis(spec.name, "transient", basis="physical", scheme="exact",
                             parameters=p)
    final = integrate_exact(ctx, spec, linear, contacts, state, aw, width=ctx.model.size)
    ctx.states[spec.name] = (p["end"], State(final[:len(state.u)].copy(),
                                             final[len(state.u):].copy(), None))


def run_modal(ctx, spec):
    """Modal-basis analysis with scheme = "exact" (the modes of an earlier analysis)."""
    from fem.analyses.modal_transient import GENERALIZED, basis_modes
    from fem.analyses.transient import initial_state
    from fem.modal.basis import build_basis

    p = spec.params
    model = ctx.model
    system = reduce(model, p["loads"])
    basis = build_basis(basis_modes(ctx, spec), system, model=model,
                        damping=p.get("damping", "projected"), ratios=p.get("modal_damping"),
                        nodes=p.get("nodes"),
                        static_correction=bool(p.get("static_correction", False)),
                        where=spec.where)
    contacts = link_contacts(ctx, spec)
    linear = modal_system(model, basis, contacts, spec.where)
    start = initial_state(ctx, spec)
    q0, v0 = (basis.q0, basis.v0) if start is None else basis.project(start.u, start.v)
    aw = ctx.writer.analysis(spec.name, "transient", basis="modal", scheme="exact",
                             parameters=p)
    aw.dataset("omega", basis.omega, "rad/s")
    if basis.dofs is not None:
        aw.dataset("dofs", basis.dofs)
    width = ctx.writer.ndof if basis.dofs is None else len(basis.dofs)
    final = integrate_exact(ctx, spec, linear, contacts, State(q0.copy(), v0.copy(), None), aw,
                            width=width, generalized=GENERALIZED)
    m = basis.size
    final_state = basis.free_state(p["end"], final[:m], final[m:], np.zeros(m))
    final_state.a = None      # an analysis restarting from here computes its own acceleration
    ctx.states[spec.name] = (p["end"], final_state)
    aw.set(mode_count=m, coupled_damping=not basis.diagonal)


def integrate_exact(ctx, spec, linear: LinearSystem, contacts, state: State, aw, width: int,
                    generalized: dict | None = None):
    """Run the exact scheme on ``linear`` from ``state``, writing to the analysis writer
    ``aw``; returns the final state z = (q, v). ``generalized`` maps field names to series
    names for the integrated coordinates themselves (modal basis)."""
    p = spec.params
    n = len(linear.M)
    L = linear.rows
    phases = Phases(linear, contacts)
    functions = [fn for fn, _ in linear.columns]
    smooth = any(fn.kind == "expression" for fn in functions)
    degree = SMOOTH_DEGREE if smooth else 1
    start, end = p["start"], p["end"]
    grid = build_grid(start, end, step=p.get("step") or (end - start) / 100,
                      steps=p.get("steps"), archive=p["archive"], where=spec.where)
    breaks = np.unique(np.concatenate([np.asarray(fn.breakpoints, float) for fn in functions]
                                      + [np.zeros(0)]))
    stops = [float(b) for b in breaks if start < b < end] + [end]
    archive_times = grid.times[np.asarray(grid.archive, bool)]

    def forcing(t):
        t = np.atleast_1d(t)
        return np.column_stack([linear.load_values(t), np.ones(len(t))])

    columns = {"time": 0, **{f: width for f in p["fields"]}}
    for f, name in (generalized or {}).items():
        columns[name] = n
    link_names = list(dict.fromkeys(c.link for c in contacts))
    for name in link_names:
        for what in ("normal_force", "penetration", "state"):
            columns[f"links/{name}/{what}"] = 0
    for term in ENERGY:
        columns[f"energy/{term}"] = 0
    units = {name: "m.kg^0.5" + ("" if f == "displacement" else "/s" if f == "velocity"
                                 else "/s^2") for f, name in (generalized or {}).items()}
    series = aw.series(columns, units=units)
    for name in link_names:
        c = next(c for c in contacts if c.link == name)
        aw.link(name, stiffness=c.stiffness, damping=c.damping, gap=c.gap, release=c.release)

    z = np.concatenate([state.u, state.v])
    active = tuple(bool(ell @ z[:n] - c.gap > 0) for c, ell in zip(contacts, L))
    pending = []

    def flush():
        # archived rows go to the file in blocks: one append per row would dominate the run
        if pending:
            series.append(**{key: np.concatenate([r[key] for r in pending]) for key in pending[0]})
            pending.clear()

    def emit(t, Z, R, D, W, act):
        """Archive instants t (k,) with states Z (k, 2n), rates R (k, 2n), dissipated D and
        external work W (k,), in contact state ``act``."""
        q, v, a = Z[:, :n], Z[:, n:], R[:, n:]
        row = {"time": t}
        for field, x, order in (("displacement", q, 0), ("velocity", v, 1),
                                ("acceleration", a, 2)):
            if field in p["fields"]:
                row[field] = linear.expand(x, t, order)
            if generalized and field in generalized:
                row[generalized[field]] = x
        stored = np.zeros(len(t))
        for name in link_names:
            force, pen, st = np.zeros(len(t)), np.full(len(t), -np.inf), np.zeros(len(t))
            for i, c in enumerate(contacts):
                if c.link != name:
                    continue
                pi = q @ L[i] - c.gap
                pen = np.maximum(pen, pi)
                if act[i]:
                    force += c.stiffness * pi + c.damping * (v @ L[i])
                    stored += 0.5 * c.stiffness * pi * pi
                    st[:] = 1.0
            row[f"links/{name}/normal_force"] = force
            row[f"links/{name}/penetration"] = pen
            row[f"links/{name}/state"] = st
        row["energy/kinetic"] = 0.5 * np.einsum("ki,ij,kj->k", v, linear.M, v)
        row["energy/potential"] = 0.5 * np.einsum("ki,ij,kj->k", q, linear.K, q)
        row["energy/link_energy"] = stored
        row["energy/dissipated"] = D
        row["energy/external_work"] = W
        pending.append(row)
        if sum(len(r["time"]) for r in pending) >= 1024:
            flush()

    events, steps = [], 0
    t0_wall = time.perf_counter()
    last_event_t = None
    dissipated = work = 0.0
    ia = 0                                    # next archived instant to write
    t = start
    if len(archive_times) and archive_times[0] <= start:
        prop, _, _ = phases.get(active, degree)
        emit(np.array([start]), z[None], prop.rate(z, _at(forcing, start, degree), 0.0)[None],
             np.zeros(1), np.zeros(1), active)
        ia = 1

    def handle(t_ev, z_ev, k, kind):
        """Apply the event of contact k at t_ev; returns False if nothing changes."""
        nonlocal active, dissipated
        c = contacts[k]
        pen = L[k] @ z_ev[:n] - c.gap
        if kind == "contact_force" and pen < 0:
            return False
        if pen > 0 and kind != "contact":
            # the force rule opens or closes a penetrated contact: its stored energy goes
            released = kind == "release"
            dissipated += (0.5 if released else -0.5) * c.stiffness * pen * pen
        flags = list(active)
        flags[k] = kind != "release"
        active = tuple(flags)
        speed = L[k] @ z_ev[n:]
        events.append((t_ev, "impact" if kind != "release" else "separation", c.link,
                       f"side {c.side}, approach speed {speed:.9g} m/s"))
        return True

    try:
        segment_start = start
        for segment, stop in enumerate(stops):
            terms = forcing_terms(linear.columns, phases.B, segment_start, stop)
            while t < stop:
                rows, offsets, directions, meaning = _event_rows(contacts, L, active, n)
                data = phases.closed_form(active, segment, terms)
                if data is not None:
                    # closed form: the whole phase up to its next event, at once
                    phase, mu, P, forces, C = data
                    shift = np.exp(mu * (t - segment_start))
                    Pt = P * shift
                    y = phase.Vinv @ (z - Pt.sum(axis=1))
                    piece = Piece(np.concatenate([phase.lam, mu]),
                                  np.column_stack([phase.V * y, Pt]), n)
                    span = stop - t
                    found = None
                    if len(rows):
                        found = first_root(piece, rows, offsets, directions, span,
                                           skip_start=(last_event_t == t))
                    s_end = span if found is None else found[1]
                    t_next = stop if found is None else t + s_end
                    j = ia
                    while j < len(archive_times) and archive_times[j] <= t_next:
                        j += 1
                    if j > ia:
                        s = archive_times[ia:j] - t
                        emit(archive_times[ia:j], piece.states(s), piece.rates(s),
                             dissipated + quadratic_integral(piece, C, s),
                             work + work_integral(piece, mu, forces * shift, s), active)
                        ia = j
                    s1 = np.array([s_end])
                    dissipated += float(quadratic_integral(piece, C, s1)[0])
                    work += float(work_integral(piece, mu, forces * shift, s1)[0])
                    z = piece.states(s1)[0]
                    steps += 1
                    if found is None:
                        t = stop
                    else:
                        k, kind = meaning[found[0]]
                        handle(t_next, z, k, kind)
                        t = last_event_t = t_next
                else:
                    # general propagator: one step of at most 4 / omega_max
                    prop, omega, (Qd, Qw) = phases.get(active, degree)
                    target = archive_times[ia] if ia < len(archive_times) else stop
                    land = min(stop, target)
                    h = land - t
                    if omega > 0:
                        h = min(h, 4.0 / omega)
                    coefficients, h = _fit(forcing, t, h, degree)
                    ev = None
                    if len(rows):
                        ev = first_event(prop, z, coefficients, h, rows, offsets, directions,
                                         skip_start=(last_event_t == t))
                    steps += 1
                    s = h if ev is None else ev.s
                    dissipated += prop.quadratic("d", Qd, z, coefficients, s)
                    work += prop.quadratic("w", Qw, z, coefficients, s)
                    if ev is None:
                        z = prop.state(z, coefficients, h)
                        t = land if h == land - t else t + h
                        while ia < len(archive_times) and archive_times[ia] <= t:
                            emit(np.array([archive_times[ia]]), z[None],
                                 prop.rate(z, _at(forcing, t, degree), 0.0)[None],
                                 np.array([dissipated]), np.array([work]), active)
                            ia += 1
                    else:
                        z = ev.state
                        t_ev = t + ev.s
                        k, kind = meaning[ev.index]
                        handle(t_ev, z, k, kind)
                        t = last_event_t = t_ev
                if not np.all(np.isfinite(z)):
                    raise SolverError(f"analysis '{spec.name}': non-finite state at t = {t:.9g} s")
            segment_start = stop
    except SolverError as exc:
        flush()
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0_wall)
        raise
    flush()
    aw.events(events)
    wall = time.perf_counter() - t0_wall
    aw.finish("complete", "", wall_time_s=wall, steps=steps, rejected_steps=0)
    ctx.say(f"  {steps} exact steps, {len(events)} events, {wall:.3f} s")
    return z


def _at(forcing, t, degree):
    """Coefficients whose value at s = 0 is the forcing at t (for the rate at an instant)."""
    w = np.asarray(forcing(np.array([t])), float).reshape(1, -1)
    return np.vstack([w, np.zeros((degree, w.shape[1]))])


def _fit(forcing, t, h, degree):
    """Coefficients of the forcing on [t, t + h], shortening h until the interpolation is
    accurate to round-off (only smooth functions need it: tables are exact at degree 1)."""
    for _ in range(30):
        coefficients, error = polynomial_coefficients(forcing, t, h, degree)
        if degree <= 1 or error <= FORCING_TOLERANCE:
            return coefficients, h
        h *= 0.5
    return coefficients, h


def _initial(ctx, spec, linear) -> State:
    from fem.analyses.transient import initial_state

    state = initial_state(ctx, spec)
    if state is None:
        state = State(linear.q0.copy(), linear.v0.copy(), None)
    return state
