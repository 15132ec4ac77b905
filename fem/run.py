"""Run a study: validate, build the model, run its analyses in order, evaluate its checks,
and write one results file (complete only when everything has run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fem.analyses import RUNNERS, Context
from fem.errors import NotAvailableError, SolverError, StudyError
from fem.links.impact import check_initial_gaps, check_pairs
from fem.analyses.link_checks import check_analysis_links, check_links
from fem.model import build_mesh, build_model
from fem.results import ResultsWriter
from fem.study import Study, load_study


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
        if (a.kind, basis) not in RUNNERS:
            what = f"analysis kind '{a.kind}'" + (f" on a {basis} basis" if "basis" in a.params
                                                   else "")
            raise NotAvailableError(f"{a.where}.kind: {what} is not available yet in this "
                                    f"version of fem")
        check_analysis_links(study, a)


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
    check_links(study, model)
    for a in study.analyses:
        names = set(a.get("links") or ())
        used = [lk for lk in study.links if lk.name in names]
        check_pairs(used)
        check_initial_gaps(used, model)
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
    ctx = Context(study, model, writer, progress=progress, log=log)
    try:
        for spec in study.analyses:
            log(f"analysis {spec.name} ({spec.kind}, {spec.get('scheme', '')})")
            runner = RUNNERS[(spec.kind, spec.get("basis", "physical"))]
            try:
                runner(ctx, spec)
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
