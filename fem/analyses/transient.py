"""Transient analysis in physical space: reduce, build the grid and the scheme, integrate,
stream the archived fields to the results file. With shock links the scheme is
``fem.integrators.newmark_links``: it adds the link series, the energy terms and the events."""

from __future__ import annotations

import sys
import time

import numpy as np

from fem.assembly import reduce
from fem.driver import integrate
from fem.errors import SolverError, StudyError
from fem.integrators import newmark, newmark_links
from fem.integrators.base import State
from fem.links.shock import shock_link
from fem.timegrid import build_grid
from postpro import layout


def run(ctx, spec):
    p = spec.params
    if (p["basis"], p["scheme"]) in ENGINE_SCHEMES and not _impact_links(ctx, spec):
        return run_engine(ctx, spec)
    if p["scheme"] == "exact":
        from fem.exact.runner import run as run_exact

        return run_exact(ctx, spec)
    model = ctx.model
    system = reduce(model, p["loads"])
    grid = build_grid(p["start"], p["end"], step=p.get("step"), steps=p.get("steps"),
                      archive=p["archive"], where=spec.where)
    links = [shock_link(next(lk for lk in ctx.study.links if lk.name == name), model)
             for name in p["links"]]
    state = initial_state(ctx, spec)
    if links:
        scheme = newmark_links.make(system, p["scheme"], p, links, model.constraints,
                                    where=spec.where, label=f"analysis '{spec.name}'")
        if state is None:
            state = State(system.q0.copy(), system.v0.copy(), None)
        scheme.start(grid.times, state, system.load_values(grid.times[:1])[0],
                     bool(grid.archive[0]))
    else:
        scheme = newmark.make(system, p["scheme"], p)
    aw = ctx.writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                             parameters=p)
    columns = {"time": 0, **{f: model.size for f in p["fields"]}}
    if links:
        # link series (normal force, penetration, state...) and energy terms, per instant
        series = aw.series({**columns, **scheme.columns()})
        sink = LinkSink(series, scheme)
        for lk in links:
            c = lk.contacts[0]
            aw.link(lk.name, stiffness=c.stiffness, damping=c.damping, gap=c.gap,
                    release=c.release, obstacle=lk.params["obstacle"], friction=c.friction,
                    tangential_stiffness=c.tangential_stiffness,
                    tangential_damping=c.tangential_damping)
    else:
        series = sink = aw.series(columns)
    bar = progress_bar(grid.steps, spec.name) if ctx.progress else None
    t0 = time.perf_counter()
    try:
        final, steps = integrate(system, scheme, grid, state=state, fields=p["fields"],
                                 sink=sink, progress=bar.update if bar else None,
                                 name=f"analysis '{spec.name}'")
    except SolverError as exc:
        if links:
            aw.events(sorted(scheme.events, key=lambda e: e[0]))
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    finally:
        if bar:
            bar.close()
    wall = time.perf_counter() - t0
    if links:
        aw.events(sorted(scheme.events, key=lambda e: e[0]))
    aw.finish("complete", "", wall_time_s=wall, steps=steps, rejected_steps=0)
    ctx.states[spec.name] = (p["end"], final)
    events = f", {len(scheme.events)} events" if links else ""
    ctx.say(f"  {steps} steps, {series.rows} archived instants{events}, {wall:.3f} s")


class LinkSink:
    """Adds the link and energy columns of the scheme to each block of archived rows."""

    def __init__(self, series, scheme):
        self.series = series
        self.scheme = scheme

    @property
    def rows(self) -> int:
        return self.series.rows

    def append(self, **blocks):
        self.series.append(**blocks, **self.scheme.take_rows(len(blocks["time"])))


def initial_state(ctx, spec) -> State | None:
    """The state named by ``initial = {analysis, time}``: the final state of that analysis,
    or one of its archived instants (free dofs)."""
    init = spec.get("initial")
    if init is None:
        return None
    t_end, state = ctx.states[init["analysis"]]
    t = init.get("time")
    if t is None or abs(t - t_end) <= 1e-12 * max(1.0, abs(t_end)):
        return state.copy()
    group = ctx.writer.file[layout.ANALYSES][init["analysis"]]
    times = group["time"][:]
    k = int(np.argmin(np.abs(times - t)))
    if abs(times[k] - t) > 1e-9 * max(1.0, abs(t)):
        raise StudyError(f"{spec.where}.initial.time: {t:g} s is not an archived instant of "
                         f"analysis '{init['analysis']}'")
    for f in ("displacement", "velocity"):
        if f not in group:
            raise StudyError(f"{spec.where}.initial: analysis '{init['analysis']}' did not "
                             f"archive its {f}")
    free = ctx.model.constraints.free
    return State(group["displacement"][k][free], group["velocity"][k][free], None)


def progress_bar(total, name):
    """A tqdm bar on stderr for long runs attached to a terminal, else None."""
    if not sys.stderr.isatty() or total < 20000:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="step", unit_scale=True, leave=False,
                file=sys.stderr)


# --------------------------------------------------------------------------- the engine
ENGINE_SCHEMES = {("physical", "newmark"), ("physical", "hht"),
                  ("physical", "central_difference"), ("physical", "rk4"),
                  ("modal", "newmark"), ("modal", "central_difference"), ("modal", "rk4"),
                  ("modal", "euler"), ("modal", "adaptive2"), ("modal", "devogelaere"),
                  ("modal", "rk32"), ("modal", "rk54"), ("physical", "exact"),
                  ("modal", "exact")}


def run_engine(ctx, spec):
    """A transient analysis through the one driver (``fem.transient``), either basis."""
    from fem.integrators import dynamics as dynamics_
    from fem.integrators.factory import make
    from fem.links import linkset
    from fem.transient import Result, ResultsSink, integrate, progress_bar as bar_

    p = spec.params
    model = ctx.model
    system = reduce(model, p["loads"])
    specs = [next(lk for lk in ctx.study.links if lk.name == name) for name in p["links"]]
    links = linkset.build(specs, model)
    label = f"analysis '{spec.name}'"
    start = initial_state(ctx, spec)
    basis = None
    if p["basis"] == "modal":
        from fem.analyses.modal_transient import basis_modes
        from fem.modal.basis import build_basis

        basis = build_basis(basis_modes(ctx, spec), system, model=model,
                            damping=p.get("damping", "projected"), ratios=p.get("modal_damping"),
                            nodes=p.get("nodes"),
                            static_correction=bool(p.get("static_correction", False)),
                            where=spec.where)
        dyn = dynamics_.modal(basis, links.D)
        x0, v0 = (basis.q0, basis.v0) if start is None else basis.project(start.u, start.v)
        width = ctx.writer.ndof if basis.dofs is None else len(basis.dofs)
    else:
        dyn = dynamics_.physical(system, links.D)
        x0, v0 = (system.q0, system.v0) if start is None else (start.u, start.v)
        width = model.size
        dyn.names = _dof_names(model)
    from fem.integrators import catalog
    from fem.integrators.factory import is_fixed

    every = 0
    if is_fixed(catalog.info(p["basis"], p["scheme"]), p):
        step = p.get("step")
        if step is None and not p.get("steps"):
            step = (p["end"] - p["start"]) / 100          # the archive grid of exact
        grid = build_grid(p["start"], p["end"], step=step, steps=p.get("steps"),
                          archive=p["archive"], where=spec.where)
    else:
        from fem.integrators.modal_common import adaptive_grid

        grid, every = adaptive_grid(p["start"], p["end"], step=p.get("step"),
                                    steps=p.get("steps"), archive=p["archive"],
                                    breakpoints=dyn.breakpoints, knot_step=p.get("max_step"),
                                    where=spec.where)
    scheme = make(dyn, links, p, label=label, every=every)
    limit = scheme.stability_limit()
    if limit is not None and grid.segments and max(s[2] for s in grid.segments) > limit:
        import warnings

        warnings.warn(f"{label}: step {max(s[2] for s in grid.segments):.4g} s exceeds the "
                      f"stability limit of {scheme.name} ({limit:.4g} s): expect divergence",
                      stacklevel=2)
    aw = ctx.writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                             parameters=p)
    if basis is not None:
        aw.dataset("omega", basis.omega, "rad/s")
        if basis.dofs is not None:
            aw.dataset("dofs", basis.dofs)
    for name, attrs in zip(links.names, links.attrs):
        aw.link(name, **attrs)
    fields = [f for f in ("displacement", "velocity", "acceleration") if f in p["fields"]]
    from fem.analyses.modal_transient import GENERALIZED_UNITS

    series = aw.series(ResultsSink.columns(dyn, links, fields, width),
                       units=GENERALIZED_UNITS if basis is not None else None)
    sink = ResultsSink(series, dyn, links, fields, width)
    bar = bar_(grid.steps, spec.name) if ctx.progress else None
    result = Result()
    extra = ("velocity_before", "velocity_after", "energy_lost") if links.rigid.size else ()
    t0 = time.perf_counter()
    try:
        integrate(scheme, grid, x0=x0, v0=v0,
                  acceleration=p.get("initial_acceleration", "equilibrium"), sink=sink,
                  progress=bar.update if bar else None, result=result)
    except SolverError as exc:
        sink.flush()
        if links:
            aw.events(_event_rows(result.events, extra), extra=extra)
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0,
                  steps=result.steps, rejected_steps=result.rejected)
        raise
    finally:
        if bar:
            bar.close()
    sink.flush()
    wall = time.perf_counter() - t0
    if links:
        aw.events(_event_rows(result.events, extra), extra=extra)
    more = {}
    if basis is not None:
        more = dict(mode_count=basis.size, coupled_damping=not basis.diagonal)
    aw.finish("complete", "", wall_time_s=wall, steps=result.steps,
              rejected_steps=result.rejected, **more)
    c = scheme.cur
    x, v, a = (scheme.buf.X[c].copy(), scheme.buf.V[c].copy(), scheme.buf.A[c].copy())
    if basis is not None:
        ctx.states[spec.name] = (p["end"], basis.free_state(p["end"], x, v, a))
    else:
        ctx.states[spec.name] = (p["end"], State(x, v, a))
    events = f", {len(result.events)} events" if links else ""
    ctx.say(f"  {result.steps} steps, {series.rows} archived instants{events}, {wall:.3f} s")


def _event_rows(events, extra):
    rows = sorted(events, key=lambda e: e[0])
    return [tuple(r[:4]) + tuple(r[4:4 + len(extra)]) for r in rows]


def _dof_names(model):
    free = model.constraints.free

    def name(j):
        dof = int(free[j])
        node = model.mesh.node_names[int(model.dofs.dof_node[dof])]
        return f"{model.dofs.dof_component[dof]} of node {node}"
    return name


def _impact_links(ctx, spec) -> bool:
    names = set(spec.params.get("links") or ())
    return any(lk.kind == "impact" for lk in ctx.study.links if lk.name in names)
