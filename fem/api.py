"""The Python API: load, vary and run studies from scripts and notebooks.

    import fem
    study = fem.Study.load("studies/v3_chain3.toml")
    stiffer = study.with_values({"discrete.1.stiffness": 2e6})
    results = fem.run(stiffer)                       # in memory; out="file.h5" writes a file
    u = results.analysis("newmark").series("displacement", "N3", "DX")

A :class:`Study` is validated when it is made, with the messages of ``fem run``; errors raise
:class:`fem.StudyError`. docs/api.md describes the API.
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import numbers
import os
from collections.abc import Mapping
from pathlib import Path

from fem.errors import SolverError, StudyError
from fem.study import check_depth, parse_study, read_study_data
from fem.study import Study as StudySpec
from fem.study.toml_text import to_toml

#: the sections of a study that are arrays of blocks ``[[name]]``
BLOCK_SECTIONS = ("discrete", "constraint", "load", "support", "initial", "link", "analysis",
                  "check")
#: the sections of a study that are tables ``[name]``
TABLE_SECTIONS = ("study", "mesh", "model", "functions", "output")


class RunError(SolverError):
    """An analysis failed during :func:`run`. ``results`` holds what was computed (status
    "failed"), ``analysis`` names the analysis that failed."""

    def __init__(self, message: str, *, analysis: str, results):
        super().__init__(message)
        self.analysis = analysis
        self.results = results


class Study:
    """A validated study: its tables (as a TOML file holds them) and where its files resolve.

    Make one with :meth:`load` or :meth:`from_dict`; :meth:`with_values` gives variants. A
    Study never changes: every method that varies it returns a new one.
    """

    __slots__ = ("_data", "_spec")

    def __init__(self, data: dict, spec: StudySpec):
        self._data = data
        self._spec = spec

    # -- making one --------------------------------------------------------------------------
    @classmethod
    def load(cls, path) -> "Study":
        """Read and validate a study file (TOML).

        Raises
        ------
        StudyError
            The file is missing or invalid; the message names the key at fault, as
            ``fem run`` prints it.
        """
        data, source = read_study_data(path)
        return cls._make(data, Path(path).resolve(), source)

    @classmethod
    def from_dict(cls, mapping: Mapping, root=".", name: str = "study") -> "Study":
        """A study from nested mappings and lists, as ``tomllib`` would read its file.

        Parameters
        ----------
        mapping : Mapping
            The study's tables: ``{"mesh": {...}, "discrete": [{...}], ...}``. Numbers may be
            numpy scalars, lists may be tuples or numpy arrays.
        root : str or os.PathLike
            The folder that relative file names (meshes, records) resolve against.
        name : str
            Stands for the file's name: the default title and results file are ``name``.
        """
        if not isinstance(mapping, Mapping):
            raise StudyError(f"a study is a mapping of its sections, not a "
                             f"{type(mapping).__name__}")
        data = _plain(mapping, "")
        path = Path(root).resolve() / f"{name}.toml"
        check_depth(data, path)
        return cls._make(data, path, None)

    @classmethod
    def _make(cls, data: dict, path: Path, source: str | None) -> "Study":
        text = source if source is not None else to_toml(data)
        spec = parse_study(copy.deepcopy(data), path=path, source=text)
        return cls(data, spec)

    # -- reading it --------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The study file (for a study made from a dict: ``root/name.toml``, which need not
        exist)."""
        return self._spec.path

    @property
    def root(self) -> Path:
        """The folder relative file names resolve against."""
        return self._spec.path.parent

    @property
    def title(self) -> str:
        return self._spec.title

    @property
    def analyses(self) -> tuple[str, ...]:
        """The names of the analyses, in the order they run."""
        return tuple(a.name for a in self._spec.analyses)

    @property
    def spec(self) -> StudySpec:
        """The validated study as the solver reads it."""
        return self._spec

    def to_dict(self) -> dict:
        """The study's tables (a copy: changing it leaves the study as it is)."""
        return copy.deepcopy(self._data)

    def to_toml(self) -> str:
        """The study as TOML text (the file's own text for a study loaded unchanged)."""
        return self._spec.source

    def save(self, path) -> Path:
        """Write the study as a TOML file; relative file names in it must still resolve from
        the new file's folder."""
        path = Path(path)
        path.write_text(self.to_toml(), encoding="utf-8")
        return path

    def __repr__(self):
        return (f"<fem.Study {self.title!r}: {len(self._spec.analyses)} analyses "
                f"({', '.join(self.analyses)}), root {str(self.root)!r}>")

    # -- varying it --------------------------------------------------------------------------
    def with_values(self, values: Mapping) -> "Study":
        """A new validated study with some values changed; this one is left unchanged.

        Parameters
        ----------
        values : Mapping
            ``{PATH: value}``. A PATH addresses a key of the study tree, parts joined by dots:
            ``section.key``; in arrays of blocks a block is named by its ``name`` or by its
            position counted from 1, as fem's messages count them (``link.contact.gap``,
            ``discrete.1.stiffness``, ``analysis.newmark.step``, ``load.push.FX``); in a list
            of values an entry by its position (``mesh.nodes.N2.1``). A key absent from a
            block is added (the validation then checks it as it checks a file's keys).

        Raises
        ------
        StudyError
            A PATH that names nothing (the message names the part at fault), or a value the
            study refuses (the message of ``fem run``).
        """
        if not isinstance(values, Mapping):
            raise StudyError(f"with_values takes a mapping {{PATH: value}}, not a "
                             f"{type(values).__name__}")
        data = copy.deepcopy(self._data)
        for path, value in values.items():
            assign(data, path, value)
        return Study._make(data, self._spec.path, None)


    def with_analyses(self, *names: str) -> "Study":
        """A new study that runs only the analyses named (in the study's order), the ones
        they read (a modal basis' modes analysis) and the checks on them.

        Raises
        ------
        StudyError
            A name that is no analysis of the study.
        """
        known = self.analyses
        for name in names:
            if name not in known:
                raise StudyError(f"with_analyses: no analysis is named '{name}' (names: "
                                 f"{', '.join(known)})")
        data = copy.deepcopy(self._data)
        blocks = {b.get("name"): b for b in data.get("analysis", [])}
        keep, pending = set(), list(names)
        while pending:
            name = pending.pop()
            if name in keep:
                continue
            keep.add(name)
            pending += [v for v in _strings(blocks[name]) if v in blocks and v not in keep]
        data["analysis"] = [b for b in data["analysis"] if b.get("name") in keep]
        if "check" in data:
            data["check"] = [c for c in data["check"] if c.get("analysis") in keep]
            if not data["check"]:
                del data["check"]
        return Study._make(data, self._spec.path, None)


def _strings(value):
    """Every string held in a block, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def assign(data: dict, path: str, value):
    """Set the key at ``path`` (see :meth:`Study.with_values`) in the tables ``data``."""
    if not isinstance(path, str) or not path.strip():
        raise StudyError(f"a study path is a string like 'link.contact.gap', not {path!r}")
    parts = path.split(".")
    where = []            # the parts walked, for messages
    node = data
    i = 0
    while True:
        part = parts[i]
        last = i == len(parts) - 1
        if isinstance(node, dict):
            if not where and part not in node:
                if part in BLOCK_SECTIONS:
                    raise StudyError(f"{path}: the study has no [[{part}]] block")
                if part not in TABLE_SECTIONS:
                    raise _nothing(path, part, "the study", node)
            if last:
                node[part] = _plain(value, path)
                return
            if part not in node:
                if parts[i + 1].isdigit():
                    raise _nothing(path, part, ".".join(where) or "the study", node)
                node[part] = {}             # a table the study leaves to its defaults
            elif not isinstance(node[part], (dict, list)):
                raise StudyError(f"{path}: {'.'.join(where + [part])} is a value, it has no "
                                 f"'{parts[i + 1]}'")
            node = node[part]
            where.append(part)
            i += 1
        else:  # a list: blocks by name or position, values by position
            i, node = _entry(path, parts, i, where, node, value)
            if node is None:
                return


def _entry(path, parts, i, where, items: list, value):
    """The entry of a list named by parts[i] (or more parts, for a name holding dots)."""
    named = [b.get("name") if isinstance(b, dict) else None for b in items]
    # the longest run of parts that joins into a block's name
    for j in range(len(parts), i, -1):
        name = ".".join(parts[i:j])
        if name in named:
            index, k = named.index(name), j
            break
    else:
        part = parts[i]
        try:
            index = int(part) - 1
        except ValueError:
            index = -1
        what = (f"[[{where[0]}]] block" if len(where) == 1 and where[0] in BLOCK_SECTIONS
                else f"entry of {'.'.join(where)}")
        if part.isdigit() and not 0 <= index < len(items):
            raise StudyError(f"{path}: there is no {what} {part} (positions count from 1 to "
                             f"{len(items)})")
        if not part.isdigit():
            names = [n for n in named if isinstance(n, str)]
            hint = f"names: {', '.join(names)}; " if names else ""
            near = difflib.get_close_matches(part, names, n=1, cutoff=0.6)
            maybe = f" (did you mean '{near[0]}'?)" if near else ""
            raise StudyError(f"{path}: no {what} is named '{part}'{maybe} ({hint}or give a "
                             f"position from 1 to {len(items)})")
        k = i + 1
    where.append(".".join(parts[i:k]))
    if k == len(parts):
        items[index] = _plain(value, path)
        return k, None
    entry = items[index]
    if not isinstance(entry, (dict, list)):
        raise StudyError(f"{path}: {'.'.join(where)} is a value, it has no '{parts[k]}'")
    return k, entry


def _nothing(path, part, what, table) -> StudyError:
    near = difflib.get_close_matches(part, list(table) + list(BLOCK_SECTIONS + TABLE_SECTIONS),
                                     n=1, cutoff=0.6)
    maybe = f" (did you mean '{near[0]}'?)" if near else ""
    return StudyError(f"{path}: '{part}' names nothing in {what}{maybe}")


def _plain(value, where: str):
    """A value as tomllib gives it: dict, list, str, int, float, bool, date; numpy scalars
    and arrays, tuples and paths turned into those."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise StudyError(f"{where or 'the study'}: key {key!r} is not a string")
            out[key] = _plain(item, f"{where}.{key}" if where else key)
        return out
    if isinstance(value, (bool, str, _dt.datetime, _dt.date, _dt.time)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):
        return _plain(value.tolist(), where)         # numpy arrays and scalars
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i + 1}]") for i, v in enumerate(value)]
    raise StudyError(f"{where or 'the study'}: a {type(value).__name__} is not a value a study "
                     f"can hold (tables, lists, strings, numbers, booleans)")


def run(study, out=None, *, progress: bool = False, max_steps: int | None = None):
    """Run every analysis of a study and return its results.

    Parameters
    ----------
    study : Study or str or os.PathLike
        A :class:`Study`, or the path of a study file.
    out : str or os.PathLike, optional
        The results file to write, as ``fem run --out`` writes it. None (default): the
        results stay in memory (an in-memory HDF5 file) and no file is written.
    progress : bool
        Show a progress bar per transient analysis.
    max_steps : int, optional
        The most time steps a transient analysis may take (``fem run --max-steps``).

    Returns
    -------
    postpro.Results
        What ``postpro.open`` returns for the file: ``results.analysis(name).series(...)``,
        ``results.checks`` (the table of the study's checks). Close it (or use ``with``) to
        free an in-memory file.

    Raises
    ------
    StudyError
        The study (or ``out``) is refused, with the message of ``fem run``.
    RunError
        An analysis failed (``fem run`` exits 3): ``exc.results`` holds what was computed.
    """
    from fem.runner import run_study
    from postpro.results import Results
    from postpro.results import open as open_results

    if not isinstance(study, Study):
        study = Study.load(study)
    if max_steps is not None and (not isinstance(max_steps, numbers.Integral)
                                  or max_steps < 1):
        raise StudyError(f"max_steps: must be a positive integer, got {max_steps!r}")
    memory = out is None
    report = run_study(study.spec, out=out, progress=progress, max_steps=max_steps,
                       memory=memory)
    if memory:
        results = Results(report.file, owns_file=True, allow_incomplete=False)
    else:
        results = open_results(report.output)
    if report.failed_analysis is not None:
        raise RunError(f"analysis '{report.failed_analysis}' failed: {report.message}",
                       analysis=report.failed_analysis, results=results)
    return results
