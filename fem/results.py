"""HDF5 results writer: streamed, chunked time series; the file is complete only at the end.

Layout and names are those of ``postpro.layout`` (the results format contract).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path

import h5py
import numpy as np

from fem import __version__
from postpro import layout

_STR = h5py.string_dtype()
_CHUNK_BYTES = 1 << 20
#: chunk cache of each dataset (bytes): a row of chunks (<= 4 _CHUNK_BYTES) and some slack
_CACHE_BYTES = 6 * _CHUNK_BYTES


def _chunk_shape(width: int) -> tuple[int, int]:
    """Chunks of at most 1 MiB, 128 columns wide so that one column reads cheaply; a row of
    chunks stays under 4 MiB so that a wide series does not reserve much on its first row."""
    cols = max(1, min(width, 128))
    rows = max(1, min(8192, _CHUNK_BYTES // (8 * cols), (4 * _CHUNK_BYTES) // (8 * width)))
    return rows, cols


def _write_cells(f: h5py.File, cells: dict):
    """``cells``: cell type -> (connectivity (m, k) node indices, m names)."""
    connectivity = f.create_group(layout.CELLS)
    names = f.create_group(layout.CELL_NAMES)
    for kind, (nodes, cell_names) in cells.items():
        width = layout.CELL_TYPES[kind]
        connectivity.create_dataset(kind, data=np.asarray(nodes, np.int64).reshape(-1, width))
        names.create_dataset(kind, data=np.asarray(list(cell_names), dtype=object), dtype=_STR)


def _write_groups(f: h5py.File, path: str, groups: dict, dtype):
    """Named groups as three datasets: names, offsets (g + 1) and the members end to end."""
    group = f.create_group(path)
    members = [np.asarray(list(m), dtype=object if dtype is _STR else dtype)
               for m in groups.values()]
    offsets = np.cumsum([0] + [len(m) for m in members]).astype(np.int64)
    group.create_dataset("names", data=np.asarray(list(groups), dtype=object), dtype=_STR)
    group.create_dataset("offsets", data=offsets)
    flat = (np.concatenate(members) if members else
            np.zeros(0, dtype=object if dtype is _STR else dtype))
    group.create_dataset("members", data=flat, dtype=dtype)


class ResultsWriter:
    """Write one results file.

    The root attribute ``status`` is "running" until :meth:`close` is called with
    ``complete=True``; every append is flushed so that a run stopped at any moment leaves a
    readable file.
    """

    _memory_files = 0

    def __init__(self, path, *, title: str, study_source: str, node_names, coordinates,
                 dof_node, dof_component, dof_imposed, cells=None, node_groups=None,
                 cell_groups=None):
        # The low bound v108 keeps the superblock below version 3: a version 3 superblock
        # carries a "file open for write" flag that HDF5 clears only on a clean close, so the
        # file of a killed run could not be opened again, even read-only.
        # The chunk cache of each dataset holds a row of its chunks (at most 4 MiB, see
        # _chunk_shape) while the rows are appended, and no more: a long run's memory does
        # not grow with its archive.
        options = dict(libver=("v108", "latest"), rdcc_nbytes=_CACHE_BYTES, rdcc_w0=1.0)
        if path is None:
            # in memory only (HDF5's core driver without a backing file): the results of a
            # run from the Python API that asked for no file
            ResultsWriter._memory_files += 1
            self.path = None
            self.file = h5py.File(f"fem-results-{ResultsWriter._memory_files}.h5", "w",
                                  driver="core", backing_store=False, **options)
        else:
            self.path = Path(path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = h5py.File(self.path, "w", **options)
        try:
            self._start(title, study_source, node_names, coordinates, dof_node, dof_component,
                        dof_imposed, cells, node_groups, cell_groups)
        except BaseException:
            # a signal or an error while the file is laid out: it says "failed", not "running"
            self.close(complete=False)
            raise

    def _start(self, title, study_source, node_names, coordinates, dof_node, dof_component,
               dof_imposed, cells, node_groups, cell_groups):
        f = self.file
        f.attrs["format"] = layout.FORMAT
        f.attrs["format_version"] = layout.FORMAT_VERSION
        f.attrs["producer"] = f"fem {__version__}"
        f.attrs["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        f.attrs["title"] = title
        f.attrs["status"] = layout.STATUS_RUNNING
        f.create_dataset(layout.STUDY_SOURCE, data=study_source, dtype=_STR)
        f.create_dataset(layout.NODE_NAMES, data=np.asarray(node_names, dtype=object), dtype=_STR)
        d = f.create_dataset(layout.COORDINATES, data=np.asarray(coordinates, float))
        d.attrs["units"] = "m"
        f.create_dataset(layout.DOF_NODE, data=np.asarray(dof_node, np.int32))
        f.create_dataset(layout.DOF_COMPONENT, data=np.asarray(dof_component, dtype=object),
                         dtype=_STR)
        f.create_dataset(layout.DOF_IMPOSED, data=np.asarray(dof_imposed, bool))
        _write_cells(f, cells or {})
        _write_groups(f, layout.NODE_GROUPS, node_groups or {}, np.int64)
        _write_groups(f, layout.CELL_GROUPS, cell_groups or {}, _STR)
        f.create_group(layout.ANALYSES, track_order=True)
        self.ndof = len(dof_node)
        self.components = np.asarray(dof_component, dtype=object)
        f.flush()

    def analysis(self, name: str, kind: str, *, basis: str = "", scheme: str = "",
                 parameters: dict | None = None) -> "AnalysisWriter":
        group = self.file[layout.ANALYSES].create_group(name)
        group.attrs.update(kind=kind, basis=basis, scheme=scheme, status=layout.STATUS_RUNNING,
                           message="", wall_time_s=0.0, steps=0, rejected_steps=0,
                           parameters=json.dumps(parameters or {}, default=str))
        self.file.flush()
        return AnalysisWriter(group, self.components)

    def write_checks(self, rows: list[dict]):
        """Store the /checks table: one row per check (keys of ``layout.CHECK_COLUMNS``)."""
        kinds = {"reference": "f8", "computed": "f8", "tolerance": "f8", "passed": "?",
                 "absolute": "?"}
        dtype = np.dtype([(c, kinds.get(c, _STR)) for c in layout.CHECK_COLUMNS])
        table = np.zeros(len(rows), dtype=dtype)
        for i, row in enumerate(rows):
            table[i] = tuple(row[c] for c in layout.CHECK_COLUMNS)
        if layout.CHECKS in self.file:
            del self.file[layout.CHECKS]
        self.file.create_dataset(layout.CHECKS, data=table)
        self.file.flush()

    def seal(self, complete: bool):
        """Mark the file complete (or failed) and flush it, leaving it open."""
        if self.file.id.valid:
            self.file.attrs["status"] = layout.STATUS_COMPLETE if complete else layout.STATUS_FAILED
            self.file.flush()

    def close(self, complete: bool):
        if self.file.id.valid:
            self.seal(complete)
            self.file.close()
        elif self.path is not None and self.path.is_file():
            # the file was closed under way (a signal inside an HDF5 call): reopen it only to
            # say how the run ended, so that it never claims to be still running
            try:
                with h5py.File(self.path, "r+") as f:
                    if f.attrs.get("status") == layout.STATUS_RUNNING:
                        f.attrs["status"] = (layout.STATUS_COMPLETE if complete
                                             else layout.STATUS_FAILED)
            except (OSError, KeyError):
                pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(complete=False) if exc_type else None
        if self.file.id.valid:
            self.file.close()


class AnalysisWriter:
    """One ``/analyses/<name>`` group."""

    def __init__(self, group: h5py.Group, components=None):
        self.group = group
        #: the component of each dof of the model (for the units of the nodal fields)
        self.components = components
        #: the first non-finite value written to a series: (dataset, time), else None
        self.nonfinite: tuple[str, float] | None = None

    def link(self, name: str, **attrs) -> h5py.Group:
        """The ``links/<name>`` group, with attributes such as the link's stiffness."""
        g = self.group.require_group(f"links/{name}")
        g.attrs.update(attrs)
        return g

    def dataset(self, name: str, data, units: str | list[str] | None = None):
        """A fixed-size dataset (modes, frequencies, ...); ``units`` one string, or one per
        column (default: the unit of ``name`` in the results format, if it has one)."""
        data = np.asarray(data)
        if data.dtype.kind in "OUS":
            d = self.group.create_dataset(name, data=data.astype(object), dtype=_STR)
        else:
            d = self.group.create_dataset(name, data=data)
            units = units or layout.UNITS.get(name)
        if units:
            d.attrs["units"] = units
        self.group.file.flush()
        return d

    def series(self, columns: dict[str, int], units: dict[str, str] | None = None,
               dtype=np.float64, dofs=None) -> "SeriesWriter":
        """Time-indexed datasets: ``time`` plus one (nt, width) dataset per column name.

        A width of 0 gives a 1-D (nt,) dataset. The nodal fields (displacement, velocity,
        acceleration) have a unit per column where their dofs mix translations and
        rotations; ``dofs``: the dofs of their columns when not every dof of the model.
        """
        units = dict(units or {})
        if self.components is not None:
            components = self.components if dofs is None else self.components[dofs]
            for name in layout.NODAL_FIELDS:
                if name in columns and name not in units and columns[name] == len(components):
                    units[name] = layout.column_units(name, components)
        return SeriesWriter(self.group, columns, units, dtype, owner=self)

    def field_units(self, field: str):
        """The ``units`` attribute of a nodal field over every dof of the model."""
        if self.components is None:
            return layout.UNITS[field]
        return layout.column_units(field, self.components)

    def events(self, rows: list[tuple], extra: tuple[str, ...] = ()):
        """The events table: (time, kind, link, detail, *extra) rows; ``extra`` names further
        float columns (NaN where they do not apply)."""
        dtype = np.dtype([("time", "f8"), ("kind", _STR), ("link", _STR), ("detail", _STR)]
                         + [(name, "f8") for name in extra])
        table = np.zeros(len(rows), dtype=dtype)
        for i, row in enumerate(rows):
            table[i] = row
        if "events" in self.group:
            del self.group["events"]
        d = self.group.create_dataset("events", data=table, maxshape=(None,))
        d.attrs["units"] = "s"
        self.group.file.flush()

    def set(self, **attrs):
        for key, value in attrs.items():
            self.group.attrs[key] = json.dumps(value, default=str) if isinstance(value, dict) else value
        self.group.file.flush()

    def finish(self, status: str = layout.STATUS_COMPLETE, message: str = "", **attrs):
        """Set the analysis' status; a "complete" analysis whose series hold a non-finite
        value is not complete: SolverError naming the dataset and the instant (the run
        ends "failed")."""
        if status == layout.STATUS_COMPLETE and self.nonfinite is not None:
            from fem.errors import SolverError
            name, t = self.nonfinite
            where = self.group.name.rsplit("/", 1)[-1]
            raise SolverError(f"analysis '{where}': its '{name}' is not finite at "
                              f"t = {t:.9g} s (the first such value): the results are not "
                              f"complete")
        self.set(status=status, message=message, **attrs)


class SeriesWriter:
    """Appends blocks of rows to resizable, chunked datasets sharing the ``time`` axis."""

    def __init__(self, group: h5py.Group, columns: dict[str, int], units: dict[str, str], dtype,
                 owner: AnalysisWriter | None = None):
        self.group = group
        #: the analysis writer told of the first non-finite value appended
        self.owner = owner
        self.rows = 0
        self.datasets = {}
        if "time" not in columns:
            columns = {"time": 0, **columns}
        for name, width in columns.items():
            if width:
                d = group.create_dataset(name, shape=(0, width), maxshape=(None, width),
                                         dtype=dtype, chunks=_chunk_shape(width))
            else:
                d = group.create_dataset(name, shape=(0,), maxshape=(None,), dtype=np.float64,
                                         chunks=(8192,))
            unit = units.get(name) or layout.UNITS.get(name.rsplit("/", 1)[-1])
            if unit:
                d.attrs["units"] = unit
            self.datasets[name] = d
        group.file.flush()

    def append(self, **blocks):
        """Append k rows: every column of this series must be given, each with k rows."""
        k = len(blocks["time"])
        if k == 0:
            return
        start, stop = self.rows, self.rows + k
        if self.owner is not None and self.owner.nonfinite is None:
            self._check_finite(blocks)
        for name, d in self.datasets.items():
            d.resize(stop, axis=0)
            d[start:stop] = blocks[name]
        self.rows = stop
        self.group.file.flush()

    def _check_finite(self, blocks: dict):
        """Tell the owner of the first non-finite value of ``blocks`` (dataset, instant)."""
        times = np.asarray(blocks["time"], dtype=float)
        for name in self.datasets:
            block = np.asarray(blocks[name])
            if block.dtype.kind not in "fc" or np.isfinite(block).all():
                continue
            bad = ~np.isfinite(block)
            row = int(np.argmax(bad.reshape(len(block), -1).any(axis=1)))
            self.owner.nonfinite = (name, float(times[row]) if name != "time" else math.nan)
            return
