"""Transient analysis in physical space: reduce, build the grid and the scheme, integrate,
stream the archived fields to the results file."""

from __future__ import annotations

import sys
import time

import numpy as np

from fem.assembly import reduce
from fem.driver import integrate
from fem.errors import SolverError, StudyError
from fem.integrators import newmark
from fem.integrators.base import State
from fem.timegrid import build_grid
from postpro import layout


def run(ctx, spec):
    p = spec.params
    if p["scheme"] == "exact":
        from fem.exact.runner import run as run_exact

        return run_exact(ctx, spec)
    model = ctx.model
    system = reduce(model, p["loads"])
    grid = build_grid(p["start"], p["end"], step=p.get("step"), steps=p.get("steps"),
                      archive=p["archive"], where=spec.where)
    scheme = newmark.make(system, p["scheme"], p)
    state = initial_state(ctx, spec)
    aw = ctx.writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                             parameters=p)
    series = aw.series({"time": 0, **{f: model.size for f in p["fields"]}})
    bar = progress_bar(grid.steps, spec.name) if ctx.progress else None
    t0 = time.perf_counter()
    try:
        final, steps = integrate(system, scheme, grid, state=state, fields=p["fields"],
                                 sink=series, progress=bar.update if bar else None,
                                 name=f"analysis '{spec.name}'")
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    finally:
        if bar:
            bar.close()
    wall = time.perf_counter() - t0
    aw.finish("complete", "", wall_time_s=wall, steps=steps, rejected_steps=0)
    ctx.states[spec.name] = (p["end"], final)
    ctx.say(f"  {steps} steps, {series.rows} archived instants, {wall:.3f} s")


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
