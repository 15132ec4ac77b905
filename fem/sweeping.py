"""Parameter sweeps: run many variants of a study, one results file each, and tabulate them.

    import fem
    result = fem.sweep("studies/v2_impact_oscillator.toml",
                       {"link.stop.gap": [5e-4, 1e-3, 2e-3]}, "gaps", workers=2)
    result.rows[0]["exact.stop.impacts"]

``fem sweep`` is the same on the command line; docs/sweeps.md describes both, the table's
columns, resuming a sweep and running it on a Dask cluster.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from fem.api import Study, assign
from fem.errors import StudyError
from fem.sweeps import table, values
from fem.sweeps.execution import cluster, run_tasks
from fem.sweeps.worker import COMPLETE, STATUSES, outcome

#: the sweep's definition, its table and the results files inside the sweep folder
DEFINITION, CSV, H5, VARIANTS = "sweep.json", "sweep.csv", "sweep.h5", "variants"
#: at most one rewrite of the table files per this many seconds while variants end
WRITE_EVERY = 2.0


@dataclass
class SweepResult:
    """The table of a sweep.

    Attributes
    ----------
    path : pathlib.Path
        The sweep folder (DIR).
    columns : list of str
        The table's columns (docs/sweeps.md).
    rows : list of dict
        One row per variant, in variant order: column -> value (absent: no value).
    counts : dict
        Number of variants by status: complete, failed, refused, error.
    """

    path: Path
    columns: list
    rows: list
    counts: dict

    @property
    def table(self) -> Path:
        """The table as CSV: ``DIR/sweep.csv``."""
        return self.path / CSV

    @property
    def checks_failed(self) -> int:
        """The number of complete variants with at least one failed check."""
        return sum(1 for r in self.rows if r["status"] == COMPLETE and r.get("checks_failed"))

    @property
    def all_complete(self) -> bool:
        return self.counts.get(COMPLETE, 0) == len(self.rows)

    def column(self, name: str) -> list:
        """The values of one column, in variant order (None where a variant has none)."""
        if name not in self.columns:
            raise KeyError(f"no column '{name}' in the table of {self.path}")
        return [r.get(name) for r in self.rows]

    def summary(self) -> str:
        """One line: the counts by status."""
        parts = [f"{self.counts.get(s, 0)} {s}" for s in STATUSES]
        if self.checks_failed:
            parts[0] += f" ({self.checks_failed} with failed checks)"
        return f"{len(self.rows)} variants: {', '.join(parts)}"

    def __repr__(self):
        return f"<SweepResult {self.path}: {self.summary()}>"


def sweep(study, parameters, out, *, samples=None, seed=None, zip=False, client=None,
          workers=None, collect=(), progress=False) -> SweepResult:
    """Run the variants of a study and write their results files and table.

    Parameters
    ----------
    study : Study or str or os.PathLike
        A :class:`fem.Study` or the path of a study file.
    parameters : Mapping
        ``{PATH: [values]}`` (PATH as in :meth:`fem.Study.with_values`): the full product
        of the lists, the first PATH varying slowest. With ``samples``, each PATH takes a
        distribution ``"uniform:a:b"`` or ``"normal:mu:sigma"``, or a list drawn from with
        equal probability.
    out : str or os.PathLike
        The sweep folder DIR (made if missing): ``DIR/variants/0001.h5``, ... (one results
        file per variant), the table ``DIR/sweep.csv`` and ``DIR/sweep.h5``, and the
        definition ``DIR/sweep.json``.
    samples : int, optional
        Random draws: that many variants from ``numpy.random.default_rng(seed)``.
    seed : int, optional
        Seed of the random draws (needed to resume a random sweep).
    zip : bool
        Take the lists in step (all of the same length) instead of their product.
    client : distributed.Client or str, optional
        Run on that Dask cluster: a client, a scheduler address or a scheduler file.
    workers : int, optional
        Run on a local Dask cluster of that many worker processes, made and closed here.
        Neither ``client`` nor ``workers``: the variants run in this process, in turn.
    collect : sequence of str
        ``"NODE.COMPONENT"``: tabulate the largest |u| of that dof in each transient
        analysis.
    progress : bool
        Show a bar over the variants on stderr.

    Returns
    -------
    SweepResult

    Raises
    ------
    StudyError
        Invalid parameters (a PATH that names nothing in the study, lists of different
        lengths with ``zip``, ...), a ``collect`` entry naming no dof of the model, or a
        DIR that holds another sweep. Variants that fail do not raise: their rows say
        why (status failed, refused or error).
    """
    if not isinstance(study, Study):
        study = Study.load(study)
    variants = values.variants(parameters, samples=samples, seed=seed, zip=zip)
    parameters = values.normalized(parameters, samples)
    paths = list(parameters)
    _check_paths(study, paths, variants[0])
    dofs = [values.parse_collect(text) for text in collect]
    _check_dofs(study, dofs)
    folder = Path(out).resolve()
    definition = {"study": str(study.path), "study_sha256": _digest(study),
                  "parameters": parameters, "samples": samples, "seed": values.plain(seed),
                  "zip": bool(zip), "collect": [f"{n}.{c}" for n, c in dofs]}
    _claim(folder, definition, variants)
    return _Sweep(study, folder, paths, variants, dofs).run(client, workers, progress)


def _digest(study: Study) -> str:
    from fem.study.toml_text import to_toml

    return hashlib.sha256(to_toml(study.to_dict()).encode("utf-8")).hexdigest()


def _tree_paths(node, prefix=()) -> set:
    found = {prefix}
    items = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for key, item in items:
        found |= _tree_paths(item, prefix + (key,))
    return found


def _check_paths(study: Study, paths, first: dict):
    """Every PATH names a key of the base study. A PATH whose key the study has may take any
    value there (a list in place of a number, a number in place of a list): a value the
    study refuses only refuses its variant. A PATH that adds a key absent from the study must
    name a key the study format knows (an unknown key names nothing)."""
    data = study.to_dict()
    keys = _tree_paths(data)
    for path in paths:
        probe = copy.deepcopy(data)
        assign(probe, path, first[path])         # raises for a PATH that names nothing
        if not _adds_a_key(data, _tree_paths(probe) - keys):
            continue
        try:
            study.with_values({path: first[path]})
        except StudyError as exc:
            key = path.rsplit(".", 1)[-1]
            if f"unknown key '{key}'" in str(exc):
                raise StudyError(f"sweep parameter {path}: the study has no such key: "
                                 f"{exc}") from None
            # a key the format knows, with a value the study refuses: that variant's matter


def _adds_a_key(data, added: set) -> bool:
    """Whether the paths ``added`` by an assignment hold a key new to a table of ``data``
    (rather than the entries of a list that replaced a value of the same key)."""
    for path in added:
        if path[:-1] in added:
            continue                              # inside a value that is itself new
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict):
            return True
    return False


def _check_dofs(study: Study, dofs):
    if not dofs:
        return
    from fem.model import build_mesh

    mesh = build_mesh(study.spec)
    for node, component in dofs:
        mesh.node_index(node, "collect")
        if component not in study.spec.components:
            raise StudyError(f"collect: {node}.{component}: component {component} is not in "
                             f"the model (components: {' '.join(study.spec.components)})")


def _claim(folder: Path, definition: dict, variants: list):
    """Make the sweep folder, or check that it holds this same sweep; write the
    definition."""
    definition = json.loads(json.dumps(definition))
    file = folder / DEFINITION
    if folder.exists() and not folder.is_dir():
        raise StudyError(f"sweep folder {folder} is a file")
    if file.exists():
        try:
            found = json.loads(file.read_text(encoding="utf-8"))
            previous = {key: found.get(key) for key in definition}
        except (OSError, ValueError, AttributeError) as exc:
            raise StudyError(f"sweep folder {folder}: cannot read its {DEFINITION} ({exc}); "
                             f"give another folder") from None
        if previous != definition:
            changed = [k for k in definition if previous.get(k) != definition[k]]
            raise StudyError(f"sweep folder {folder} holds another sweep (its {DEFINITION} "
                             f"differs in: {', '.join(changed)}); give another folder, or "
                             f"remove it to start again")
        if definition["samples"] is not None and definition["seed"] is None:
            raise StudyError(f"sweep folder {folder} holds a random sweep without a seed, "
                             f"which cannot be resumed; give a seed, or another folder")
    elif folder.is_dir() and any(folder.iterdir()):
        raise StudyError(f"sweep folder {folder} is not empty and holds no {DEFINITION}: "
                         f"give a new or empty folder")
    try:
        (folder / VARIANTS).mkdir(parents=True, exist_ok=True)
        text = json.dumps({**definition, "variants": values.plain(variants)}, indent=1)
        file.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise StudyError(f"sweep folder {folder}: {exc.strerror or exc}") from None


def variant_file(folder: Path, number: int, count: int) -> Path:
    """``DIR/variants/0001.h5``: 4 digits, more when there are more than 9999 variants."""
    return folder / VARIANTS / f"{number:0{max(4, len(str(count)))}d}.h5"


class _Sweep:
    """One run of a sweep: its rows as they come, the table written as they fill."""

    def __init__(self, study: Study, folder: Path, paths, variants, dofs):
        self.study, self.folder, self.paths = study, folder, paths
        self.variants, self.dofs = variants, dofs
        self.rows: dict[int, dict] = {}
        self.written = 0.0
        self.bar = None

    def run(self, client, workers, progress) -> SweepResult:
        tasks = self._resume()
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=len(self.variants), initial=len(self.rows), desc="sweep",
                            unit="variant", file=sys.stderr)
        try:
            if tasks:
                with cluster(client, workers) as dask_client:
                    run_tasks(tasks, dask_client, self._add)
        finally:
            if self.bar is not None:
                self.bar.close()
            self._write()
        return self._result()

    def _resume(self) -> list[dict]:
        """The rows of the variants whose files are complete, and the tasks of the others."""
        previous = {r.get("variant"): r for r in table.read_csv(self.folder / CSV)}
        data, root, name = self.study.to_dict(), str(self.study.root), self.study.path.stem
        tasks = []
        for number, chosen in enumerate(self.variants, start=1):
            file = variant_file(self.folder, number, len(self.variants))
            row = self._rebuilt(number, file, previous.get(str(number)))
            if row is not None:
                self.rows[number] = {**row, **self._values(number)}
                continue
            tasks.append({"number": number, "study": data, "root": root, "name": name,
                          "values": chosen, "out": str(file), "collect": self.dofs})
        return tasks

    def _rebuilt(self, number: int, file: Path, previous: dict | None) -> dict | None:
        """The row of a variant whose results file is complete, read back from the file."""
        if not file.is_file():
            return None
        import postpro
        from postpro.errors import PostproError

        try:
            with postpro.open(file, require_complete=True) as results:
                row = outcome(results, self.dofs)
        except (PostproError, OSError):
            return None
        wall = None
        if previous and previous.get("status") == COMPLETE:
            try:
                wall = float(previous.get("wall_time"))
            except (TypeError, ValueError):
                pass
        return {"variant": number, "status": COMPLETE, "message": "", "wall_time": wall,
                **row}

    def _values(self, number: int) -> dict:
        return {path: self.variants[number - 1][path] for path in self.paths}

    def _add(self, row: dict):
        number = row["variant"]
        self.rows[number] = {**row, **self._values(number)}
        if self.bar is not None:
            self.bar.update(1)
        if time.monotonic() - self.written > WRITE_EVERY:
            self._write()

    def _ordered(self) -> list[dict]:
        return [self.rows[k] for k in sorted(self.rows)]

    def _write(self):
        rows = self._ordered()
        columns = table.columns_of(rows, self.paths)
        table.write_csv(self.folder / CSV, rows, columns)
        table.write_h5(self.folder / H5, rows, columns)
        self.written = time.monotonic()

    def _result(self) -> SweepResult:
        rows = self._ordered()
        counts = Counter(r["status"] for r in rows)
        return SweepResult(path=self.folder, columns=table.columns_of(rows, self.paths),
                           rows=rows, counts={s: counts.get(s, 0) for s in STATUSES})
