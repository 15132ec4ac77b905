"""Transient analyses with impact links, by two schemes sharing the laws of
``fem.impact.engine``:

* ``exact``: each phase propagated with its state-transition matrix, events located by root
  finding on the exact solution (``fem.exact``);
* ``rk4``: the classical fourth-order Runge-Kutta method at a fixed step, with the event
  location of Dedow and Murphy (2021): when a step crosses an impact, it is taken back and
  replaced by one Runge-Kutta step in which the gap is the independent variable (Henon's
  method), landing on the contact; when a step crosses a separation, one step in which the
  interaction force is the independent variable (their force step), landing on zero force.
  The interaction force is a linear function of the state and of the loads, so its rate, the
  extra equation their force step manufactures, is known in closed form. A step in which a
  function crosses again right after its event (a flight shorter than a step) is halved
  until the crossing is isolated.

Both run in physical space or on a modal basis and archive, besides the fields: per link
``links/<name>/gap`` (m), ``normal_force`` (the interaction force while bonded, N) and
``state`` (1 bonded, 0 free); the energy terms (the kinetic energy lost at impacts counted as
dissipated); and the events (impact, stick, separation) with the relative velocity before
and after and the energy lost.
"""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import reduce
from fem.errors import NotAvailableError, SolverError
from fem.exact.events import crosses, first_event
from fem.exact.propagator import Propagator
from fem.exact.runner import LinearSystem, _fit, physical_system, modal_system
from fem.impact.engine import EVENT_COLUMNS, ImpactSystem, Record
from fem.impact.links import impact_link
from fem.integrators.base import State
from fem.modal.basis import column_values
from fem.timegrid import build_grid

#: a Henon step spans at most this fraction of the distance (in g) to the extremum of g
HENON_REACH = 0.01
ENERGY = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


class _Link:
    """What ``physical_system`` and ``modal_system`` need of a link: its row and name."""

    def __init__(self, il):
        self.ell, self.link = il.ell, il.name


def _impact_links(ctx, spec):
    out = []
    for name in spec.params["links"]:
        link = next(lk for lk in ctx.study.links if lk.name == name)
        if link.kind != "impact":
            raise NotAvailableError(f"{spec.where}.links: link '{name}' (kind '{link.kind}') "
                                    f"cannot be combined with impact links in this version")
        out.append(impact_link(link, ctx.model))
    return out


def run(ctx, spec):
    """A transient analysis with impact links (or scheme rk4), physical or modal basis."""
    p = spec.params
    if p["events"] == "step" and p["links"]:
        raise NotAvailableError(f'{spec.where}.events: impact links need events = "locate"')
    model = ctx.model
    system = reduce(model, p["loads"])
    links = _impact_links(ctx, spec)
    shim = [_Link(il) for il in links]
    from fem.analyses.transient import initial_state

    start = initial_state(ctx, spec)
    generalized = None
    if p["basis"] == "modal":
        from fem.analyses.modal_transient import GENERALIZED, basis_modes
        from fem.modal.basis import build_basis

        basis = build_basis(basis_modes(ctx, spec), system, model=model,
                            damping=p.get("damping", "projected"),
                            ratios=p.get("modal_damping"), nodes=p.get("nodes"),
                            static_correction=bool(p.get("static_correction", False)),
                            where=spec.where)
        linear = modal_system(model, basis, shim, spec.where)
        q0, v0 = (basis.q0, basis.v0) if start is None else basis.project(start.u, start.v)
        width = ctx.writer.ndof if basis.dofs is None else len(basis.dofs)
        generalized = GENERALIZED
    else:
        linear = physical_system(model, system, shim, spec.where)
        q0, v0 = (linear.q0, linear.v0) if start is None else (start.u, start.v)
        width = model.size
    if np.linalg.cond(linear.M) > 1e14:
        raise NotAvailableError(f"{spec.where}: impact links need mass on every free dof")
    isys = ImpactSystem(linear.M, linear.K, linear.C, np.asarray(linear.B, float),
                        np.array(linear.rows).reshape(len(links), len(linear.M)),
                        np.array([il.gap for il in links], float),
                        np.array([il.restitution for il in links], float),
                        np.array([il.grazing for il in links], float),
                        [il.bond for il in links], [il.name for il in links])
    aw = ctx.writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                             parameters=p)
    if p["basis"] == "modal":
        aw.dataset("omega", basis.omega, "rad/s")
        if basis.dofs is not None:
            aw.dataset("dofs", basis.dofs)
    out = _Output(aw, linear, isys, p["fields"], width, generalized)
    driver = _Exact if p["scheme"] == "exact" else _RK4
    t0 = time.perf_counter()
    z = np.concatenate([q0, v0])
    try:
        z, steps = driver(spec, linear, isys, out).run(z)
    except SolverError as exc:
        out.flush()
        aw.events([r.row() for r in out.records], extra=EVENT_COLUMNS)
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    out.flush()
    aw.events([r.row() for r in out.records], extra=EVENT_COLUMNS)
    wall = time.perf_counter() - t0
    aw.finish("complete", "", wall_time_s=wall, steps=steps, rejected_steps=0)
    n = len(linear.M)
    if p["basis"] == "modal":
        final = basis.free_state(p["end"], z[:n], z[n:], np.zeros(n))
        final.a = None
    else:
        final = State(z[:n].copy(), z[n:].copy(), None)
    ctx.states[spec.name] = (p["end"], final)
    ctx.say(f"  {steps} steps, {len(out.records)} events, {wall:.3f} s")


class _Output:
    """Archived rows, buffered and written in blocks, and the events."""

    def __init__(self, aw, linear: LinearSystem, isys: ImpactSystem, fields, width, generalized):
        self.linear, self.isys, self.fields = linear, isys, fields
        self.generalized = generalized or {}
        n = len(linear.M)
        columns = {"time": 0, **{f: width for f in fields}}
        units = {}
        for f, name in self.generalized.items():
            columns[name] = n
            units[name] = "m.kg^0.5" + {"displacement": "", "velocity": "/s",
                                        "acceleration": "/s^2"}[f]
        for name in isys.names:
            for what in ("gap", "normal_force", "state"):
                columns[f"links/{name}/{what}"] = 0
            units[f"links/{name}/gap"] = "m"
        for term in ENERGY:
            columns[f"energy/{term}"] = 0
        self.series = aw.series(columns, units=units)
        for name, g, e, vg, bond in zip(isys.names, isys.gaps, isys.restitution, isys.grazing,
                                        isys.bond):
            aw.link(name, kind="impact", gap=g, restitution=e, grazing_velocity=vg, bond=bond)
        self.pending = []
        self.records: list[Record] = []

    def emit(self, t, z, rate, forces, bonded, dissipated, work):
        n = len(self.linear.M)
        q, v, a = z[:n], z[n:], rate[n:]
        tt = np.array([t])
        row = {"time": tt}
        for field, x, order in (("displacement", q, 0), ("velocity", v, 1),
                                ("acceleration", a, 2)):
            if field in self.fields:
                row[field] = self.linear.expand(x[None], tt, order)
            if field in self.generalized:
                row[self.generalized[field]] = x[None]
        gaps = self.isys.gap(z)
        for j, name in enumerate(self.isys.names):
            row[f"links/{name}/gap"] = np.array([gaps[j]])
            row[f"links/{name}/normal_force"] = np.array([forces[j]])
            row[f"links/{name}/state"] = np.array([1.0 if bonded[j] else 0.0])
        row["energy/kinetic"] = np.array([self.isys.kinetic(z)])
        row["energy/potential"] = np.array([0.5 * q @ self.linear.K @ q])
        row["energy/link_energy"] = np.zeros(1)
        row["energy/dissipated"] = np.array([dissipated])
        row["energy/external_work"] = np.array([work])
        self.pending.append(row)
        if len(self.pending) >= 1024:
            self.flush()

    def flush(self):
        if self.pending:
            self.series.append(**{k: np.concatenate([r[k] for r in self.pending])
                                  for k in self.pending[0]})
            self.pending.clear()


class _Driver:
    def __init__(self, spec, linear: LinearSystem, isys: ImpactSystem, out: _Output):
        self.spec, self.linear, self.isys, self.out = spec, linear, isys, out
        p = spec.params
        self.p = p
        self.n = len(linear.M)
        self.columns = linear.columns
        self.smooth = any(fn.kind == "expression" for fn, _ in linear.columns)
        step = p.get("step")
        if step is None and not p.get("steps"):
            step = (p["end"] - p["start"]) / 100
        self.grid = build_grid(p["start"], p["end"], step=step, steps=p.get("steps"),
                               archive=p["archive"], where=spec.where)
        fns = [fn for fn, _ in linear.columns]
        breaks = np.unique(np.concatenate([np.asarray(fn.breakpoints, float) for fn in fns]
                                          + [np.zeros(0)]))
        self.breaks = breaks[(breaks > p["start"]) & (breaks < p["end"])]
        self.dissipated = 0.0
        self.work = 0.0

    def w1(self, t):
        """[w(t); 1]."""
        return np.append(self.linear.load_values(np.array([t]))[0], 1.0)

    def dw1(self, t):
        return np.append(column_values(self.columns, np.array([t]), 1)[0], 0.0)

    def emit(self, t, z, state):
        phase = self.isys.phase(tuple(state.bonded))
        w1 = self.w1(t)
        rate = phase.A @ z + phase.E @ w1
        self.out.emit(t, z, rate, self.isys.forces(phase, z, w1), state.bonded,
                      self.dissipated, self.work)

    def event(self, j, what, z, t, state):
        before = self.isys.kinetic(z)
        z, state = self.isys.handle(j, what, z, self.w1(t), t, state, self.out.records)
        self.dissipated += before - self.isys.kinetic(z)
        return z, state

    def begin(self, z):
        t = self.p["start"]
        before = self.isys.kinetic(z)
        z, state = self.isys.start(z, self.w1(t), t, self.out.records)
        self.dissipated += before - self.isys.kinetic(z)
        return z, state


class _Exact(_Driver):
    """Phases propagated by their state-transition matrices (``fem.exact.propagator``)."""

    def run(self, z):
        isys, n, nb = self.isys, self.n, self.isys.nb
        degree = 8 if self.smooth else 1
        props = {}
        times, archive = self.grid.times, np.asarray(self.grid.archive, bool)
        z, state = self.begin(z)
        if archive[0]:
            self.emit(times[0], z, state)
        t, steps, last = times[0], 0, None
        forcing = lambda tt: np.column_stack([self.linear.load_values(np.atleast_1d(tt)),  # noqa
                                              np.ones(len(np.atleast_1d(tt)))])
        for i in range(len(times) - 1):
            t_end = times[i + 1]
            inner = self.breaks[(self.breaks > t) & (self.breaks < t_end)]
            for stop in list(inner) + [t_end]:
                while t < stop:
                    key = tuple(state.bonded)
                    if key not in props:
                        phase = isys.phase(key)
                        prop = Propagator(phase.A, phase.E, degree)
                        N = prop.augmented_size
                        Qd = np.zeros((N, N))
                        Qd[n:2 * n, n:2 * n] = self.linear.C
                        Qw = np.zeros((N, N))
                        Qw[n:2 * n, 2 * n:2 * n + nb] = 0.5 * self.linear.B
                        Qw[2 * n:2 * n + nb, n:2 * n] = 0.5 * self.linear.B.T
                        props[key] = (prop, phase.omega, Qd, Qw)
                    prop, omega, Qd, Qw = props[key]
                    h = stop - t
                    if omega > 0:
                        h = min(h, 4.0 / omega)
                    coefficients, h = _fit(forcing, t, h, degree)
                    rows, frows, offsets, directions, meaning = isys.functions(state)
                    ev = None
                    if len(rows):
                        ev = first_event(prop, z, coefficients, h, rows, offsets, directions,
                                         skip_start=(last == t), forcing_rows=frows)
                    steps += 1
                    s = h if ev is None else ev.s
                    self.dissipated += prop.quadratic("d", Qd, z, coefficients, s)
                    self.work += prop.quadratic("w", Qw, z, coefficients, s)
                    if ev is None:
                        z = prop.state(z, coefficients, h)
                        t = stop if h == stop - t else t + h
                        continue
                    t = last = t + ev.s
                    j, what = meaning[ev.index]
                    z, state = self.event(j, what, ev.state, t, state)
                if not np.all(np.isfinite(z)):
                    raise SolverError(f"analysis '{self.spec.name}': non-finite state at "
                                      f"t = {t:.9g} s")
            if archive[i + 1]:
                self.emit(t_end, z, state)
        return z, steps


class _RK4(_Driver):
    """Fixed-step Runge-Kutta 4 with Henon's displacement step and the force step."""

    def rate(self, phase, t, X):
        n = self.n
        z = X[:2 * n]
        w1 = self.w1(t)
        zd = phase.A @ z + phase.E @ w1
        v = z[n:]
        f = self.linear.B @ w1[:-1]
        return np.concatenate([zd, [v @ self.linear.C @ v, f @ v]])

    def step(self, phase, t, X, h):
        k1 = self.rate(phase, t, X)
        k2 = self.rate(phase, t + 0.5 * h, X + 0.5 * h * k1)
        k3 = self.rate(phase, t + 0.5 * h, X + 0.5 * h * k2)
        k4 = self.rate(phase, t + h, X + h * k3)
        return X + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    def values(self, fns, t, X):
        rows, frows, offsets = fns[:3]
        return rows @ X[:2 * self.n] + frows @ self.w1(t) + offsets

    def henon(self, phase, fns, e, t, X, g0):
        """One Runge-Kutta step in which g_e is the independent variable, from its value g0
        at (t, X) to zero: (t, X) at the event."""
        rows, frows = fns[0][e], fns[1][e]
        n2 = 2 * self.n

        def slope(tt, Y):
            r = self.rate(phase, tt, Y)
            gdot = rows @ r[:n2] + frows @ self.dw1(tt)
            return r / gdot, 1.0 / gdot

        dg = -g0
        k1, l1 = slope(t, X)
        k2, l2 = slope(t + 0.5 * dg * l1, X + 0.5 * dg * k1)
        k3, l3 = slope(t + 0.5 * dg * l2, X + 0.5 * dg * k2)
        k4, l4 = slope(t + dg * l3, X + dg * k3)
        return (t + dg / 6.0 * (l1 + 2 * l2 + 2 * l3 + l4),
                X + dg / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4))

    def run(self, z):
        isys, n = self.isys, self.n
        times, archive = self.grid.times, np.asarray(self.grid.archive, bool)
        z, state = self.begin(z)
        if archive[0]:
            self.emit(times[0], z, state)
        X = np.concatenate([z, [self.dissipated, self.work]])
        t, steps, last = times[0], 0, None
        for i in range(len(times) - 1):
            t_end = times[i + 1]
            inner = self.breaks[(self.breaks > t) & (self.breaks < t_end)]
            for stop in list(inner) + [t_end]:
                halvings = 0
                while t < stop:
                    phase = isys.phase(tuple(state.bonded))
                    fns = isys.functions(state)
                    h = (stop - t) / 2 ** halvings
                    X1 = self.step(phase, t, X, h)
                    steps += 1
                    g0 = self.values(fns, t, X)
                    g1 = self.values(fns, t + h, X1)
                    if last == t:
                        # just after an event: a function at zero counts by its rate
                        r = self.rate(phase, t, X)[:2 * n]
                        gd = fns[0] @ r + fns[1] @ self.dw1(t)
                        scale = np.maximum(np.abs(g0), np.abs(g1))
                        g0 = np.where(np.abs(g0) <= 1e-10 * np.maximum(scale, 1e-300), gd * 1e-300,
                                      g0)
                    crossed = [e for e in range(len(g0)) if crosses(g0[e], g1[e], fns[3][e])]
                    if not crossed:
                        X, t = X1, (stop if halvings == 0 else t + h)
                        halvings = max(0, halvings - 1) if halvings else 0
                        if not np.all(np.isfinite(X)):
                            raise SolverError(f"analysis '{self.spec.name}': non-finite state at "
                                              f"t = {t:.9g} s")
                        continue
                    best = None
                    rate0 = self.rate(phase, t, X)[:2 * n]
                    rate1 = self.rate(phase, t + h, X1)[:2 * n]
                    gd0 = fns[0] @ rate0 + fns[1] @ self.dw1(t)
                    gd1 = fns[0] @ rate1 + fns[1] @ self.dw1(t + h)
                    for e in crossed:
                        g_start = float(self.values(fns, t, X)[e])
                        d = fns[3][e] if fns[3][e] != 0 else np.sign(g1[e] - g_start)
                        gdd0 = fns[0][e] @ (phase.A @ rate0 + phase.E @ self.dw1(t))
                        if (last == t and abs(g_start) <= 1e-10 * max(abs(g1[e]), 1e-300)) \
                                or not (d * gd0[e] > 0 and d * gd1[e] > 0) \
                                or abs(g_start * gdd0) > HENON_REACH * gd0[e] ** 2:
                            # a crossing right after its event, or a step not monotonic in g,
                            # or starting too close to an extremum of g (where t(g) is
                            # singular) for one accurate step in g: halve the step first
                            best = None
                            break
                        te, Xe = self.henon(phase, fns, e, t, X, g_start)
                        if t <= te <= t + h and (best is None or te < best[0]):
                            best = (te, Xe, e)
                    if best is None:
                        halvings += 1
                        if halvings > 60:
                            raise SolverError(f"analysis '{self.spec.name}': events too close "
                                              f"to separate at t = {t:.12g} s")
                        continue
                    te, Xe, e = best
                    j, what = fns[4][e]
                    self.dissipated, self.work = Xe[2 * n], Xe[2 * n + 1]
                    z, state = self.event(j, what, Xe[:2 * n], te, state)
                    X = np.concatenate([z, [self.dissipated, self.work]])
                    t = last = te
                    halvings = 0
            self.dissipated, self.work = X[2 * n], X[2 * n + 1]
            if archive[i + 1]:
                self.emit(t_end, X[:2 * n], state)
        return X[:2 * n], steps
