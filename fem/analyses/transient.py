"""Transient analysis, physical or modal basis, every scheme: reduce the model, build the
dynamics, the links, the grid and the scheme, run the one driver (``fem.transient``) and
stream what it archives to the results file.

Results, group ``/analyses/<name>``:

* ``time`` (nt,) s and the fields asked by ``fields`` (``displacement``, ``velocity``,
  ``acceleration``, (nt, nd)): on all the model's dofs, or on a modal basis recombined on all
  dofs (nd = the size of ``/dofs``) or, with ``nodes``, on the dofs of those nodes only, listed
  in ``dofs`` (nd,); ``absolute_acceleration`` is the acceleration plus the ground
  acceleration of the analysis' base acceleration loads on the translations;
* on a modal basis: ``generalized/q``, ``qdot``, ``qddot`` (nt, m), ``omega`` (m,) rad/s and the
  attributes ``mode_count``, ``coupled_damping``;
* ``energy/kinetic``, ``potential``, ``link_energy``, ``dissipated``, ``external_work`` (nt,) J;
* per link ``links/<name>/...`` (``fem.links.linkset``) with the link's parameters as
  attributes, and the ``events`` table (time, kind, link, detail; with impact links also
  velocity_before, velocity_after, energy_lost);
* attributes ``steps`` and ``rejected_steps``, ``status`` and ``message``.
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np

from fem.assembly import reduce
from fem.errors import SolverError, StudyError
from fem import catalog
from fem.integrators import dynamics as dynamics_
from fem.model.dofs import State
from fem.integrators.factory import is_fixed, make
from fem.links import linkset
from fem.modal.modes import Modes
from fem.model.supports import RelativeFields, support_system
from fem.timegrid import build_grid
from fem.transient import (ForceFields, GroundAcceleration, Progress, Result, ResultsSink,
                           integrate)
from postpro import layout

GENERALIZED_UNITS = {"generalized/q": "m.kg^0.5", "generalized/qdot": "m.kg^0.5/s",
                     "generalized/qddot": "m.kg^0.5/s^2"}
FIELDS = ("displacement", "velocity", "acceleration", "absolute_acceleration")
EVENT_COLUMNS = ("velocity_before", "velocity_after", "energy_lost")


def _system_and_links(study, model, spec):
    """(reduced system, the motion of the supports or None, LinkSet) of the analysis."""
    p = spec.params
    motion = None
    if model.supports:
        system, motion = support_system(model, p["loads"], p["supports"],
                                        damping=p["support_damping"], start=p["start"],
                                        where=spec.where)
    else:
        system = reduce(model, p["loads"])
    specs = [next(lk for lk in study.links if lk.name == name) for name in p["links"]]
    return system, motion, linkset.build(specs, model)


def run(ctx, spec):
    """Run the transient analysis ``spec``; see the module docstring."""
    p = spec.params
    model = ctx.model
    system, motion, links = _system_and_links(ctx.study, model, spec)
    start = initial_state(ctx, spec)
    if start is not None and motion is not None:
        start = motion.relative_state(start, p["start"])
    basis = None
    if p["basis"] == "modal":
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
        dyn.names = _dof_names(model)
        x0, v0 = (system.q0, system.v0) if start is None else (start.u, start.v)
        width = model.size
    grid, every = _grid(dyn, p, spec.where)
    progress = Progress.for_terminal(grid.steps, spec.name) if ctx.progress else None
    with progress if progress is not None else contextlib.nullcontext():
        _integrate(ctx, spec, model, links, basis, dyn, grid, every, x0, v0, width, progress,
                   motion)


def _integrate(ctx, spec, model, links, basis, dyn, grid, every, x0, v0, width, progress,
               motion=None):
    """Build the scheme, open the analysis in the results file, run and archive."""
    p = spec.params
    label = f"analysis '{spec.name}'"
    scheme = make(dyn, links, p, label=label, every=every)
    limit = scheme.stability_limit()
    largest = max((s[2] for s in grid.segments), default=0.0)
    if limit is not None and largest > limit:
        warnings.warn(f"{label}: step {largest:.4g} s exceeds the stability limit of "
                      f"{scheme.name} ({limit:.4g} s): expect divergence", stacklevel=2)

    aw = ctx.writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                             parameters=p)
    if basis is not None:
        aw.dataset("omega", basis.omega, "rad/s")
        if basis.dofs is not None:
            aw.dataset("dofs", basis.dofs)
    for name, attrs in zip(links.names, links.attrs):
        aw.link(name, **attrs)
    fields = [f for f in FIELDS if f in p["fields"]]
    forces = _force_fields(aw, model, p)
    units = dict(GENERALIZED_UNITS if basis is not None else {})
    if forces.elements is not None:
        units["element_force"] = layout.column_units_list(forces.elements.units())
    if forces.reactions is not None:
        units["reaction"] = layout.column_units_list(forces.reactions.units(model.dofs))
    if links:
        units.update(links.series_units())
    relative = None
    if motion is not None:
        relative = RelativeFields(motion, p["fields"], basis.dofs if basis is not None else None)
    series = aw.series(ResultsSink.columns(dyn, links, fields, width, scheme.energy, forces,
                                           relative),
                       units=units or None, dofs=basis.dofs if basis is not None else None)
    ground = _ground(ctx, model, p, basis.dofs if basis is not None else None)
    sink = ResultsSink(series, dyn, links, fields, width, scheme.energy, forces, ground, relative)
    result = Result()
    extra = EVENT_COLUMNS if links.rigid.size else ()
    t0 = time.perf_counter()
    try:
        integrate(scheme, grid, x0=x0, v0=v0,
                  acceleration=p.get("initial_acceleration", "equilibrium"), sink=sink,
                  progress=progress.update if progress else None, result=result)
    except SolverError as exc:
        sink.flush()
        if links:
            aw.events(_event_rows(result.events, extra), extra=extra)
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0,
                  steps=result.steps, rejected_steps=result.rejected)
        raise
    if progress is not None:
        progress.close()
    sink.flush()
    wall = time.perf_counter() - t0
    if links:
        aw.events(_event_rows(result.events, extra), extra=extra)
    more = {} if basis is None else dict(mode_count=basis.size,
                                         coupled_damping=not basis.diagonal)
    aw.finish("complete", "", wall_time_s=wall, steps=result.steps,
              rejected_steps=result.rejected, **more)
    c = scheme.cur
    x, v, a = (scheme.buf.X[c].copy(), scheme.buf.V[c].copy(), scheme.buf.A[c].copy())
    final = basis.free_state(p["end"], x, v, a) if basis is not None else State(x, v, a)
    if motion is not None:
        final = motion.absolute_state(final, p["end"])
    ctx.states[spec.name] = (p["end"], final)
    events = f", {len(result.events)} events" if links else ""
    ctx.say(f"  {result.steps} steps, {series.rows} archived instants{events}, {wall:.3f} s")


def _grid(dyn, p, where):
    """(grid, every): the driver's grid; ``every`` > 0 when an adaptive scheme archives every
    N-th accepted step."""
    if is_fixed(catalog.info(p["basis"], p["scheme"]), p):
        step = p.get("step")
        if step is None and not p.get("steps"):
            step = (p["end"] - p["start"]) / 100          # the archive grid of exact
        return build_grid(p["start"], p["end"], step=step, steps=p.get("steps"),
                          archive=p["archive"], where=where), 0
    from fem.integrators.adaptive import adaptive_grid

    return adaptive_grid(p["start"], p["end"], step=p.get("step"), steps=p.get("steps"),
                         archive=p["archive"], breakpoints=dyn.breakpoints,
                         knot_step=p.get("max_step"), where=where)


def basis_modes(ctx, spec) -> Modes:
    """The modes of the analysis named by ``modes``, which must have run before."""
    name = spec.get("modes")
    state = ctx.states.get(name)
    if not isinstance(state, Modes):
        what = "has not run" if state is None else "is not a real modes analysis"
        raise StudyError(f"{spec.where}.modes: analysis '{name}' {what}: a transient analysis "
                         f"on a modal basis needs the modes of an earlier modes analysis")
    return state


def initial_state(ctx, spec) -> State | None:
    """The state named by ``initial = {analysis, time}``: the final state of that analysis,
    or one of its archived instants (free dofs)."""
    init = spec.get("initial")
    if init is None:
        return None
    if "file" in init:
        return _state_from_file(ctx.model, init, f"{spec.where}.initial")
    t_end, state = ctx.states[init["analysis"]]
    t = init.get("time")
    if t is None or abs(t - t_end) <= 1e-12 * max(1.0, abs(t_end)):
        return state.copy()
    group = ctx.writer.file[layout.ANALYSES][init["analysis"]]
    return _archived_state(group, t, ctx.model, f"{spec.where}.initial",
                           f"analysis '{init['analysis']}'")


def _archived_state(group, t: float, model, where: str, what: str) -> State:
    """The state at the archived instant ``t`` of a transient analysis' group, on the free
    dofs (at an instant archived twice, before and after an event: the state after it)."""
    if "dofs" in group:
        raise StudyError(f"{where}: {what} recombined some nodes only; starting from it needs "
                         f"the motion of every dof")
    for field in ("displacement", "velocity"):
        if field not in group:
            raise StudyError(f"{where}: {what} did not archive its {field}")
    times = group["time"][()]
    rows = min(len(times), group["displacement"].shape[0], group["velocity"].shape[0])
    k = int(np.argmin(np.abs(times[:rows] - t))) if rows else -1
    if k < 0 or abs(times[k] - t) > 1e-9 * max(1.0, abs(t)):
        raise StudyError(f"{where}.time: {t:g} s is not an archived instant of {what}")
    k = int(np.searchsorted(times[:rows], times[k], "right")) - 1
    free = model.constraints.free
    return State(group["displacement"][k][free], group["velocity"][k][free], None)


def _state_from_file(model, init, where) -> State:
    """The state at ``init["time"]`` of analysis ``init["analysis"]`` in the results file
    ``init["file"]``, on the free dofs; the file's dofs must be this model's."""
    import h5py

    path, name, t = init["file"], init["analysis"], init["time"]
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise StudyError(f"{where}.file: cannot read {path} as a results file ({exc})") from None
    with f:
        if f.attrs.get("format") != layout.FORMAT:
            raise StudyError(f"{where}.file: {path} is not a fem results file")
        nodes = [n.decode() if isinstance(n, bytes) else str(n) for n in f[layout.NODE_NAMES]]
        theirs = [(nodes[int(i)], c.decode() if isinstance(c, bytes) else str(c))
                  for i, c in zip(f[layout.DOF_NODE][()], f[layout.DOF_COMPONENT][()])]
        names = model.mesh.node_names
        ours = [(names[int(i)], str(c)) for i, c in zip(model.dofs.dof_node,
                                                         model.dofs.dof_component)]
        if theirs != ours:
            if len(theirs) != len(ours):
                detail = f"it has {len(theirs)} dofs, this model {len(ours)}"
            else:
                k = next(k for k in range(len(ours)) if theirs[k] != ours[k])
                detail = (f"its dof {k + 1} is {' '.join(theirs[k])}, this model's "
                          f"{' '.join(ours[k])}")
            raise StudyError(f"{where}.file: {path} is not a results file of this model "
                             f"({detail})")
        group = f.get(f"{layout.ANALYSES}/{name}")
        if group is None or group.attrs.get("kind") != "transient":
            raise StudyError(f"{where}.analysis: {path} holds no transient analysis '{name}'")
        return _archived_state(group, t, model, where, f"'{name}' of {path}")


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


def _ground(ctx, model, p, dofs) -> GroundAcceleration:
    """The ground acceleration of the analysis' base acceleration loads on the archived dofs
    (every dof, or ``dofs``): value * f(t) along the load's unit direction on DX DY DZ."""
    columns = np.arange(model.size) if dofs is None else np.asarray(dofs)
    component = model.dofs.dof_component[columns]
    loads = []
    for spec in ctx.study.loads:
        if spec.kind != "base_acceleration" or spec.name not in p["loads"]:
            continue
        r = np.zeros(len(columns))
        for k, comp in enumerate(("DX", "DY", "DZ")):
            r[component == comp] = spec.g * spec.direction[k]
        loads.append((r, model.loads[spec.name].function))
    return GroundAcceleration(loads)


def _force_fields(aw, model, p) -> ForceFields:
    """The element forces and reactions the analysis archives, with the datasets that name
    their columns: ``element_names`` (ne,) and ``element_components`` (the components of
    each element's columns), ``reaction_dofs`` (nr,) dof numbers and ``reaction_names``."""
    reactions = model.reactions
    loads = [(model.loads[name].vector[reactions.dofs], model.loads[name].function)
             for name in p["loads"]]
    forces = ForceFields(model.elements, reactions, loads, p["fields"])
    if forces.elements is not None:
        aw.dataset("element_names", np.asarray(model.elements.names, dtype=object))
        aw.dataset("element_components", np.asarray(model.elements.components, dtype=object))
    if forces.reactions is not None:
        aw.dataset("reaction_dofs", reactions.dofs)
        aw.dataset("reaction_names", np.asarray(reactions.names, dtype=object))
    return forces


def loop_choice(study, model, spec):
    """The step loop the transient analysis ``spec`` will run, and why
    (``fem.integrators.loops.choose``), from its scheme's catalog row and its links' laws,
    without running it (``fem schemes --explain``)."""
    from fem.integrators import loops
    from fem.links.traits import traits

    p = spec.params
    info = catalog.info(p["basis"], p["scheme"])
    system, _, links = _system_and_links(study, model, spec)
    dyn = dynamics_.physical(system, links.D)
    if info.name in loops.NEWMARK_FAMILY:
        imposed = dyn.kinematics().imposed
    else:
        imposed = bool(np.any(dyn.Lw) or np.any(dyn.Lv))
    events = p.get("events", info.events)
    if p["basis"] == "modal":
        ratios = p.get("modal_damping")
        damped = (any(r > 0 for r in ratios) if ratios is not None
                  else system.damping.count_nonzero() > 0)
    else:
        damped = system.damping.count_nonzero() > 0
    name = info.name
    beta = 0.0 if name == "central_difference" else p.get("beta", 0.25)
    alpha = 0.0 if name != "hht" or p.get("equilibrium") == "modified" else p.get("alpha", 0.0)
    return loops.choose(name, traits(links.P), basis=p["basis"], locate=events == "locate",
                        explicit_newmark=beta == 0.0 and alpha == 0.0, imposed=imposed,
                        adaptive=not is_fixed(info, p), damped=damped,
                        diagonal=p["basis"] == "modal")
