"""Run a study: validate, build the model, run its analyses in order, evaluate its checks,
and write one results file (complete only when everything has run)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fem.assembly import reduce
from fem.driver import integrate
from fem.errors import NotAvailableError, SolverError, StudyError
from fem.integrators import newmark
from fem.integrators.base import State
from fem.model import build_mesh, build_model
from fem.results import ResultsWriter
from fem.study import AnalysisSpec, Study, load_study
from fem.timegrid import build_grid
from postpro import layout

#: (kind, basis) -> schemes this version runs
AVAILABLE = {("transient", "physical"): ("newmark", "hht", "central_difference")}


@dataclass
class RunReport:
    output: Path
    check_rows: list = field(default_factory=list)
    failed_analysis: str | None = None
    message: str = ""

    @property
    def checks_passed(self) -> bool:
        return all(r.passed for r in self.check_rows)


def check_available(study: Study):
    """Refuse, before any computation, what this version cannot run yet."""
    for a in study.analyses:
        basis = a.get("basis", "physical")
        schemes = AVAILABLE.get((a.kind, basis if a.kind == "transient" else "physical"))
        if schemes is None:
            what = f"analysis kind '{a.kind}'" + (f" on a {basis} basis" if a.kind == "transient"
                                                   else "")
            raise NotAvailableError(f"{a.where}.kind: {what} is not available yet in this "
                                    f"version of fem")
        if a.kind == "transient" and a.get("scheme") not in schemes:
            raise NotAvailableError(f"{a.where}.scheme: scheme '{a.get('scheme')}' is not "
                                    f"available yet (available: {', '.join(schemes)})")
        if a.get("links"):
            link = next(lk for lk in study.links if lk.name == a.get("links")[0])
            raise NotAvailableError(f"{a.where}.links: link kind '{link.kind}' ({link.name}) is "
                                    f"not available yet in this version of fem")


def _validate_names(study: Study, model):
    """Names that checks refer to must exist before anything is computed."""
    for i, check in enumerate(study.checks):
        if getattr(check, "node", None):
            model.dof(check.node, check.component or "DX", where=f"check[{i + 1}]")


def prepare(path) -> tuple[Study, object]:
    """Validate a study and build its model (no results file is touched)."""
    study = load_study(path)
    check_available(study)
    mesh = build_mesh(study)
    model = build_model(study, mesh)
    _validate_names(study, model)
    return study, model


def run_study(path, out=None, *, log=None, progress: bool = False) -> RunReport:
    """Run every analysis of the study at ``path``; see :class:`RunReport`."""
    log = log or (lambda msg: None)
    study, model = prepare(path)
    output = Path(out) if out else study.output
    if output.exists() and output.is_dir():
        raise StudyError(f"output: {output} is a directory")
    report = RunReport(output)
    writer = ResultsWriter(output, title=study.title, study_source=study.source,
                           node_names=model.mesh.node_names, coordinates=model.mesh.coordinates,
                           dof_node=model.dofs.dof_node, dof_component=model.dofs.dof_component,
                           dof_imposed=model.constraints.imposed | model.constraints.slaves)
    states: dict[str, tuple[float, State]] = {}
    try:
        for spec in study.analyses:
            log(f"analysis {spec.name} ({spec.kind}, {spec.get('scheme', '')})")
            try:
                _run_transient(study, spec, model, writer, states, progress, log)
            except SolverError as exc:
                report.failed_analysis, report.message = spec.name, str(exc)
                writer.close(complete=False)
                return report
        if study.checks:
            from postpro.checks import evaluate, rows_for_file
            from postpro.results import Results

            rows = evaluate(Results.from_h5(writer.file), list(study.checks))
            report.check_rows = rows
            writer.write_checks(rows_for_file(rows))
        writer.close(complete=True)
    except BaseException:
        writer.close(complete=False)
        raise
    return report


def _initial_state(spec: AnalysisSpec, model, system, writer, states):
    init = spec.get("initial")
    if init is None:
        return None
    t_end, state = states[init["analysis"]]
    t = init.get("time")
    if t is None or abs(t - t_end) <= 1e-12 * max(1.0, abs(t_end)):
        return state.copy()
    group = writer.file[layout.ANALYSES][init["analysis"]]
    times = group["time"][:]
    k = int(np.argmin(np.abs(times - t)))
    if abs(times[k] - t) > 1e-9 * max(1.0, abs(t)):
        raise StudyError(f"{spec.where}.initial.time: {t:g} s is not an archived instant of "
                         f"analysis '{init['analysis']}'")
    for f in ("displacement", "velocity"):
        if f not in group:
            raise StudyError(f"{spec.where}.initial: analysis '{init['analysis']}' did not "
                             f"archive its {f}")
    free = model.constraints.free
    return State(group["displacement"][k][free], group["velocity"][k][free], None)


def _run_transient(study, spec: AnalysisSpec, model, writer, states, progress, log):
    p = spec.params
    system = reduce(model, p["loads"])
    grid = build_grid(p["start"], p["end"], step=p.get("step"), steps=p.get("steps"),
                      archive=p["archive"], where=spec.where)
    scheme = newmark.make(system, p["scheme"], p)
    state = _initial_state(spec, model, system, writer, states)
    parameters = {k: v for k, v in p.items() if k not in ("loads",)}
    parameters["loads"] = p["loads"]
    aw = writer.analysis(spec.name, "transient", basis=p["basis"], scheme=p["scheme"],
                         parameters=parameters)
    series = aw.series({"time": 0, **{f: model.size for f in p["fields"]}})
    bar = _progress_bar(grid.steps, spec.name) if progress else None
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
    states[spec.name] = (p["end"], final)
    log(f"  {steps} steps, {series.rows} archived instants, {wall:.3f} s")


def _progress_bar(total, name):
    if not sys.stderr.isatty() or total < 20000:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit="step", unit_scale=True, leave=False,
                file=sys.stderr)
