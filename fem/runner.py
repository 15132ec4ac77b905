"""Run a study: validate, build the model, run its analyses in order, evaluate its checks,
and write one results file (complete only when everything has run), or keep the results in
memory for the Python API."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from pathlib import Path

from fem.analyses import RUNNERS, Context
from fem.errors import NotAvailableError, SolverError, StudyError
from fem.links.geometry import check_initial_gaps, check_pairs
from fem.analyses.link_checks import check_analysis_links, check_links
from fem.model import build_mesh, build_model
from fem.results import ResultsWriter
from fem.study import Study, load_study
from fem.study.specs import step_limit
from fem.errors import path_problem, shown_path


@dataclass
class RunReport:
    """What a run gave: its results file (``output``; None in memory, then ``file`` is the
    open in-memory HDF5 file), the rows of its checks, and the analysis that failed if any."""
    output: Path | None
    check_rows: list = field(default_factory=list)
    failed_analysis: str | None = None
    message: str = ""
    file: object = None
    notes: list = field(default_factory=list)

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
    reacting = {"FX": "DX", "FY": "DY", "FZ": "DZ", "MX": "DRX", "MY": "DRY", "MZ": "DRZ"}
    for i, check in enumerate(study.checks):
        where = f"check[{i + 1}]"
        # a quantity of a random analysis (rms, psd, ...) is located as its field is
        quantity = getattr(check, "field", None) or check.quantity
        if quantity == "element_force":
            if check.element not in model.elements.names:
                known = ", ".join(model.elements.names) or "none"
                raise StudyError(f"{where}.element: no element '{check.element}' (the SEG2 and "
                                 f"POI1 cells with stiffness or damping: {known})")
            if check.component not in model.elements.components:
                raise StudyError(f"{where}.component: {check.component} is not a force "
                                 f"component of this model (components: "
                                 f"{' '.join(model.elements.components)})")
        elif quantity == "reaction":
            dof = model.dof(check.node, reacting[check.component], where=where)
            if dof not in model.reactions.dofs:
                raise StudyError(f"{where}.node: {check.node} {reacting[check.component]} is "
                                 f"not imposed: a reaction exists only at imposed dofs")
        elif getattr(check, "node", None):
            model.dof(check.node, check.component or "DX", where=where)


def prepare(study) -> tuple[Study, object]:
    """Validate a study (a :class:`Study` or the path of its file) and build its model (no
    results file is touched)."""
    study = study if isinstance(study, Study) else load_study(study)
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


def input_files(study: Study) -> list[tuple[Path, str]]:
    """The files a study reads, each with what it is to the study."""
    files = [(Path(study.path), "the study file")]
    if study.mesh.file is not None:
        files.append((Path(study.mesh.file), "the study's mesh file (mesh.file)"))
    for a in study.analyses:
        initial = a.params.get("initial") or {}
        if "file" in initial:
            files.append((Path(initial["file"]), f"the results file {a.where}.initial.file "
                                                 f"restarts from"))
    for name, function in study.functions.items():
        path = getattr(function, "path", None)
        if path is not None:
            files.append((Path(path), f"the file of function '{name}' (functions.{name}.file)"))
    return files


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def partial_path(output: Path) -> Path:
    """Where a run writes before its file is complete: ``NAME.partial`` next to NAME."""
    return output.with_name(output.name + ".partial")


def check_output(output: Path, study: Study):
    """Refuse an output that is a folder or that resolves (links and relative paths alike)
    to a file the study reads: fem never overwrites an input."""
    problem = path_problem(output)
    if problem is not None:
        raise StudyError(f"output: the results file {shown_path(output)} {problem}")
    try:
        if output.is_dir():
            raise StudyError(f"output: {output} is a directory")
        folder = output.parent
        if not folder.exists():
            raise StudyError(f"output: the folder {folder} of {output} does not exist")
        if not folder.is_dir():
            raise StudyError(f"output: {folder}, the folder of {output}, is a file")
        for target in (output, partial_path(output)):
            if target.exists() and not target.is_file():
                # a device, a pipe, a socket: renaming a results file onto it would replace it
                raise StudyError(f"output: {target} exists and is not a regular file (a "
                                 f"device, pipe or socket); give a results file path")
            for path, what in input_files(study):
                if _same_file(target, path):
                    raise StudyError(f"output: {output} is {what}; fem never overwrites an "
                                     f"input (give another results file with --out or [output] "
                                     f"file)")
    except OSError as exc:
        raise StudyError(f"output: {output}: {exc.strerror or exc}") from None


def _mesh_tables(mesh) -> dict:
    """The cells of the mesh by type (connectivity and names) and its node and cell groups,
    for the results file."""
    from fem.mesh import POI1, SEG2

    cells = {}
    for kind, code, width in (("POI1", POI1, 1), ("SEG2", SEG2, 2)):
        chosen = np.flatnonzero(mesh.cell_type == code)
        if len(chosen):
            cells[kind] = (mesh.connectivity[chosen, :width],
                           [mesh.cell_names[c] for c in chosen])
    names = mesh.cell_names
    return {"cells": cells,
            "node_groups": {g: np.asarray(nodes, np.int64) for g, nodes in mesh.node_groups.items()},
            "cell_groups": {g: [names[c] for c in cells_of]
                            for g, cells_of in mesh.cell_groups.items()}}


def run_study(path, out=None, *, log=None, progress: bool = False,
              max_steps: int | None = None, memory: bool = False) -> RunReport:
    """Run every analysis of the study at ``path`` (or of a validated :class:`Study`); see
    :class:`RunReport`.

    ``max_steps``: the most time steps a transient analysis may take (default
    ``fem.study.specs.MAX_STEPS``). The results go to ``NAME.partial`` next to the output
    NAME, renamed NAME once complete, so that an existing NAME is only ever replaced by a
    complete file. A study refused during the run (StudyError) leaves no file. An analysis
    that fails (SolverError) leaves its file marked "failed": as NAME when there was no NAME,
    as NAME.partial otherwise (the report's ``output`` says which).

    ``memory``: write no file; the report's ``file`` is the results as an open in-memory
    HDF5 file (``out`` is then ignored).
    """
    log = log or (lambda msg: None)
    token = step_limit.set(int(max_steps)) if max_steps else None
    try:
        return _run(path, out, log, progress, memory)
    finally:
        if token is not None:
            step_limit.reset(token)


def _run(path, out, log, progress, memory) -> RunReport:
    study, model = prepare(path)
    if memory:
        output = partial = None
    else:
        output = Path(out) if out else study.output
        check_output(output, study)
        partial = partial_path(output)
    report = RunReport(output)
    try:
        writer = ResultsWriter(partial, title=study.title, study_source=study.source,
                               node_names=model.mesh.node_names,
                               coordinates=model.mesh.coordinates, dof_node=model.dofs.dof_node,
                               dof_component=model.dofs.dof_component,
                               dof_imposed=model.constraints.imposed | model.constraints.slaves,
                               **_mesh_tables(model.mesh))
    except OSError as exc:
        if partial is None:
            raise StudyError(f"cannot make the in-memory results file: {exc}") from None
        if partial.is_file():
            partial.unlink()
        reason = exc.strerror or str(exc)
        raise StudyError(f"output: cannot write {partial} (the results file until it is "
                         f"complete): {reason}") from None
    if study.rayleigh is not None:
        report.notes.append(study.rayleigh.describe())
        writer.file.attrs["rayleigh_mass"] = study.rayleigh.mass
        writer.file.attrs["rayleigh_stiffness"] = study.rayleigh.stiffness
    ctx = Context(study, model, writer, progress=progress, log=log)
    try:
        for spec in study.analyses:
            log(f"analysis {spec.name} ({spec.kind}, {spec.get('scheme', '')})")
            runner = RUNNERS[(spec.kind, spec.get("basis", "physical"))]
            try:
                runner(ctx, spec)
            except SolverError as exc:
                report.failed_analysis, report.message = spec.name, str(exc)
                if memory:
                    writer.seal(complete=False)
                    report.file = writer.file
                    return report
                writer.close(complete=False)
                if not output.exists():
                    os.replace(partial, output)
                else:
                    report.output = partial
                return report
        if study.checks:
            from postpro.checks import evaluate, rows_for_file
            from postpro.results import Results

            from postpro.errors import PostproError

            try:
                rows = evaluate(Results.from_h5(writer.file), list(study.checks))
            except PostproError as exc:
                message = str(exc)
                if partial is not None:
                    message = message.replace(str(partial), str(output))
                raise StudyError(message) from None
            report.check_rows = rows
            writer.write_checks(rows_for_file(rows))
        if memory:
            writer.seal(complete=True)
            report.file = writer.file
            return report
        writer.close(complete=True)
        os.replace(partial, output)
    except StudyError:
        writer.close(complete=False)
        if partial is not None:
            partial.unlink(missing_ok=True)
        raise
    except BaseException:
        writer.close(complete=False)
        raise
    return report
