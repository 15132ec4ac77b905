"""One variant of a sweep, where it runs (the calling process or a Dask worker): make the
variant, run it to its results file, and reduce the results to its row of the table.

What a worker receives is plain data (the study's tables, its root folder as an absolute
path, the variant's values, the results file): nothing depends on the worker's current
folder, and the worker imports fem once and keeps its compiled kernels for every variant it
runs.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from fem.api import RunError, Study
from fem.errors import StudyError

COMPLETE, FAILED, REFUSED, ERROR = "complete", "failed", "refused", "error"
STATUSES = (COMPLETE, FAILED, REFUSED, ERROR)
#: the statistics of ``postpro.jobs.shocks.LinkShocks`` given a column per analysis and link
SHOCK_COLUMNS = ("impacts", "max_force", "contact_time", "impulse", "wear_power")


def run_variant(task: dict) -> dict:
    """Run one variant and return its row (without the values of its parameters).

    Parameters
    ----------
    task : dict
        ``number`` (the variant, from 1), ``study`` (the base study's tables), ``root``
        (absolute folder its file names resolve against), ``name`` (the study file's stem),
        ``values`` ({PATH: value}), ``out`` (absolute path of the results file) and
        ``collect`` (list of (node, component)).

    Returns
    -------
    dict
        ``variant``, ``status`` (complete, failed, refused, error), ``message``,
        ``wall_time`` (s, the run of the study), and for a complete variant
        ``checks_failed`` and the outcome columns of :func:`outcome`.
    """
    row = {"variant": task["number"], "status": COMPLETE, "message": "", "wall_time": None}
    out = Path(task["out"])
    try:
        base = Study.from_dict(task["study"], root=task["root"], name=task["name"])
        variant = base.with_values(task["values"])
        for stale in (out, out.with_name(out.name + ".partial")):
            stale.unlink(missing_ok=True)
        start = time.perf_counter()
        try:
            results = _run(variant, out)
        finally:
            row["wall_time"] = time.perf_counter() - start
        with results:
            row.update(outcome(results, task["collect"]))
    except RunError as exc:
        exc.results.close()
        row.update(status=FAILED, message=str(exc))
    except StudyError as exc:
        row.update(status=REFUSED, message=str(exc))
    except Exception as exc:        # the sweep goes on; the row says what happened
        row.update(status=ERROR, message=f"{type(exc).__name__}: {exc}")
    return row


def _run(variant: Study, out: Path):
    """``fem.run`` of the variant to its file (a seam for the tests)."""
    from fem.api import run

    return run(variant, out=out)


def check_column(number: int, check) -> str:
    """The column of the check ``number`` (from 1, as ``check[n]`` in fem's messages):
    ``check:<n>:<analysis>:<quantity>[:<node>.<component>][:<at>]``."""
    parts = ["check", str(number), str(check["analysis"]), str(check["quantity"])]
    if check["node"]:
        parts.append(f"{check['node']}.{check['component']}")
    if check["at"]:
        parts.append(str(check["at"]))
    return ":".join(parts)


def outcome(results, collect=()) -> dict:
    """The outcome columns of a complete results file (``postpro.Results``).

    - ``checks_failed`` and, for each check, its computed value (:func:`check_column`);
    - per transient analysis and link whose series were archived,
      ``<analysis>.<link>.<statistic>`` for the statistics of ``SHOCK_COLUMNS``
      (``postpro.jobs.shocks.link_shocks`` over the whole analysis);
    - per transient analysis that archived the displacement of ``(node, component)`` of
      ``collect``, ``<analysis>.max_abs.<node>.<component>``: the largest |u| (m or rad).
    """
    from postpro.errors import PostproError
    from postpro.jobs.shocks import link_shocks

    row = {}
    checks = results.checks
    row["checks_failed"] = int(sum(not bool(c["passed"]) for c in checks))
    for number, check in enumerate(checks, start=1):
        row[check_column(number, check)] = float(check["computed"])
    for name in results.analyses:
        analysis = results.analysis(name)
        if analysis.kind != "transient":
            continue
        for link in analysis.links:
            stats = link_shocks(analysis, link)
            for statistic in SHOCK_COLUMNS:
                row[f"{name}.{link}.{statistic}"] = getattr(stats, statistic)
        if "displacement" not in analysis.fields:
            continue
        for node, component in collect:
            try:
                peak = _max_abs(analysis, node, component)
            except PostproError:        # a dof this analysis did not archive
                continue
            row[f"{name}.max_abs.{node}.{component}"] = peak
    return row


def _max_abs(analysis, node: str, component: str) -> float:
    peak = -math.inf
    for _, values in analysis.blocks("displacement", [(node, component)]):
        if len(values):
            peak = max(peak, float(abs(values).max()))
    return peak if peak > -math.inf else math.nan
