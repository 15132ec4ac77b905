"""The `exact` scheme: a transient analysis propagated exactly between events.

Between events the system is linear (a contact is either closed or open), so each stretch is
propagated with the exact state-transition matrices of ``fem.exact.propagator``; contact
entries and releases are located on the exact solution (``fem.exact.events``) and the run
restarts from them in the new phase. Loads that are constant or piecewise linear in time are
integrated exactly (their breakpoints end a step); other functions are represented on each step
by an interpolating polynomial of degree 8 on a step short enough for round-off accuracy.
"""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import reduce
from fem.errors import NotAvailableError, SolverError
from fem.exact.events import first_event
from fem.exact.propagator import Propagator, polynomial_coefficients
from fem.integrators.base import State
from fem.links.shock import plane_contacts
from fem.timegrid import build_grid

SMOOTH_DEGREE = 8
#: largest interpolation error of a smooth forcing on a step, relative to its size there
FORCING_TOLERANCE = 1e-12


class Phases:
    """The linear system of each contact state, built on demand and kept."""

    def __init__(self, system, contacts, L):
        M = system.mass.toarray()
        try:
            self.Minv = np.linalg.inv(M)
        except np.linalg.LinAlgError:
            raise NotAvailableError("the exact scheme needs mass on every free dof") from None
        if not np.all(np.isfinite(self.Minv)) or np.linalg.cond(M) > 1e14:
            raise NotAvailableError("the exact scheme needs mass on every free dof")
        self.K = system.stiffness.toarray()
        self.C = system.damping.toarray()
        self.B = np.asarray(system.B, float)
        self.contacts, self.L = contacts, L
        self.n = len(M)
        self.cache = {}

    def get(self, active: tuple, degree: int):
        key = (active, degree)
        if key not in self.cache:
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
            omega = float(np.max(np.abs(np.linalg.eigvals(A)))) if n else 0.0
            self.cache[key] = (Propagator(A, E, degree), omega)
        return self.cache[key]


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


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    system = reduce(model, p["loads"])
    n = system.size
    contacts = []
    for name in p["links"]:
        link = next(lk for lk in ctx.study.links if lk.name == name)
        if link.kind != "shock":
            raise NotAvailableError(f"{spec.where}.links: link kind '{link.kind}' ({name}) is "
                                    f"not available yet with scheme 'exact'")
        contacts += plane_contacts(link, model, "exact")
    T, G = model.constraints.T, model.constraints.G
    L = [np.asarray(T.T @ c.ell).ravel() for c in contacts]
    for c in contacts:
        if G.shape[1] and np.any(np.asarray(G.T @ c.ell).ravel() != 0):
            raise NotAvailableError(f"{spec.where}: link '{c.link}' acts on dofs with an imposed "
                                    f"motion; the exact scheme does not handle that yet")
    phases = Phases(system, contacts, L)
    functions = [fn for fn, _ in system.columns]
    smooth = any(fn.kind == "expression" for fn in functions)
    degree = SMOOTH_DEGREE if smooth else 1
    grid = build_grid(p["start"], p["end"], step=p.get("step") or (p["end"] - p["start"]) / 100,
                      steps=p.get("steps"), archive=p["archive"], where=spec.where)
    breaks = np.unique(np.concatenate([np.asarray(fn.breakpoints, float) for fn in functions]
                                      + [np.zeros(0)]))
    state = _initial(ctx, spec, system)
    z = np.concatenate([state.u, state.v])
    active = tuple(bool(ell @ z[:n] - c.gap > 0) for c, ell in zip(contacts, L))

    def forcing(t):
        t = np.atleast_1d(t)
        return np.column_stack([system.load_values(t), np.ones(len(t))])

    aw = ctx.writer.analysis(spec.name, "transient", basis="physical", scheme="exact",
                             parameters=p)
    columns = {"time": 0, **{f: model.size for f in p["fields"]}}
    link_names = list(dict.fromkeys(c.link for c in contacts))
    for name in link_names:
        for what in ("normal_force", "penetration", "state"):
            columns[f"links/{name}/{what}"] = 0
    series = aw.series(columns)
    for name in link_names:
        c = next(c for c in contacts if c.link == name)
        aw.link(name, stiffness=c.stiffness, damping=c.damping, gap=c.gap, release=c.release)
    events, steps = [], 0
    t0_wall = time.perf_counter()
    last_event_t = None
    times = grid.times

    def emit(t, z, coefficients, s, prop):
        rate = prop.rate(z, coefficients, s)
        q, v, a = z[:n], z[n:], rate[n:]
        row = {"time": np.array([t])}
        for field, x, order in (("displacement", q, 0), ("velocity", v, 1), ("acceleration", a, 2)):
            if field in p["fields"]:
                row[field] = system.expand(x[None], np.array([t]), order)
        for name in link_names:
            force = pen = st = 0.0
            for i, c in enumerate(contacts):
                if c.link != name:
                    continue
                pi = L[i] @ q - c.gap
                pen = max(pen, pi)
                if active[i]:
                    force += c.stiffness * pi + c.damping * (L[i] @ v)
                    st = 1.0
            row[f"links/{name}/normal_force"] = np.array([force])
            row[f"links/{name}/penetration"] = np.array([pen])
            row[f"links/{name}/state"] = np.array([st])
        pending.append(row)
        if len(pending) >= 1024:
            flush()

    pending = []

    def flush():
        # archived rows go to the file in blocks: one append per row would dominate the run
        if pending:
            series.append(**{key: np.concatenate([r[key] for r in pending]) for key in pending[0]})
            pending.clear()

    prop, _ = phases.get(active, degree)
    if grid.archive[0]:
        emit(times[0], z, _at(forcing, times[0], degree), 0.0, prop)
    try:
        for i in range(len(times) - 1):
            t, t_end = times[i], times[i + 1]
            inner = breaks[(breaks > t) & (breaks < t_end)]
            for stop in list(inner) + [t_end]:
                while t < stop:
                    prop, omega = phases.get(active, degree)
                    h = stop - t
                    if omega > 0:
                        h = min(h, 4.0 / omega)
                    coefficients, h = _fit(forcing, t, h, degree)
                    rows, offsets, directions, meaning = _event_rows(contacts, L, active, n)
                    ev = None
                    if len(rows):
                        ev = first_event(prop, z, coefficients, h, rows, offsets, directions,
                                         skip_start=(last_event_t == t))
                    steps += 1
                    if ev is None:
                        z = prop.state(z, coefficients, h)
                        t = t + h if t + h < stop else stop
                        continue
                    t_ev = t + ev.s
                    z = ev.state
                    k, kind = meaning[ev.index]
                    c = contacts[k]
                    pen = L[k] @ z[:n] - c.gap
                    if kind == "contact_force" and pen < 0:
                        t, last_event_t = t_ev, t_ev       # not in contact: nothing happens
                        continue
                    flags = list(active)
                    flags[k] = kind != "release"
                    active = tuple(flags)
                    speed = L[k] @ z[n:]
                    events.append((t_ev, "impact" if kind != "release" else "separation", c.link,
                                   f"side {c.side}, approach speed {speed:.9g} m/s"))
                    t, last_event_t = t_ev, t_ev
                if not np.all(np.isfinite(z)):
                    raise SolverError(f"analysis '{spec.name}': non-finite state at t = {t:.9g} s")
            if grid.archive[i + 1]:
                prop, _ = phases.get(active, degree)
                emit(t_end, z, _at(forcing, t_end, degree), 0.0, prop)
    except SolverError as exc:
        flush()
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0_wall)
        raise
    flush()
    aw.events(events)
    wall = time.perf_counter() - t0_wall
    aw.finish("complete", "", wall_time_s=wall, steps=steps, rejected_steps=0)
    ctx.states[spec.name] = (p["end"], State(z[:n].copy(), z[n:].copy(), None))
    ctx.say(f"  {steps} exact steps, {len(events)} events, {wall:.3f} s")


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


def _initial(ctx, spec, system) -> State:
    from fem.analyses.transient import initial_state

    state = initial_state(ctx, spec)
    if state is None:
        state = State(system.q0.copy(), system.v0.copy(), None)
    return state
