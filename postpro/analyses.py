"""The analyses of a fem results file: their attributes, and readers of what each archived.

Time-indexed datasets may hold millions of rows: every reader here slices one window of
rows and only the columns asked for, never a whole (nt, ndof) dataset.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import h5py
import numpy as np

from postpro import layout
from postpro.errors import PostproError

if TYPE_CHECKING:
    from postpro.results import Results

_LISTED = 12
#: rows read at once by the block readers: 64 Ki rows of a few columns stay under a few MB
BLOCK_ROWS = 1 << 16
_EVENT_DTYPE = np.dtype([("time", "f8"), ("kind", "U1"), ("link", "U1"), ("detail", "U1")])


def _listing(names) -> str:
    """Comma-separated names, cut after a dozen so that a message stays on one line."""
    names = [str(name) for name in names]
    if not names:
        return "none"
    shown = ", ".join(names[:_LISTED])
    return shown if len(names) <= _LISTED else f"{shown}, ... ({len(names) - _LISTED} more)"


def _text(value) -> str:
    # h5py returns variable-length strings as bytes inside datasets and compound tables
    return value.decode() if isinstance(value, bytes) else str(value)


def _decode_table(table: np.ndarray) -> np.ndarray:
    """A compound table with its string columns turned from bytes into numpy ``str``."""
    columns = {}
    for name in table.dtype.names:
        column = table[name]
        if column.dtype.kind in "OS":
            column = np.array([_text(v) for v in column], dtype=str)
        columns[name] = column
    decoded = np.empty(len(table), dtype=[(name, c.dtype) for name, c in columns.items()])
    for name, column in columns.items():
        decoded[name] = column
    return decoded


class Analysis:
    """An analysis group: its attributes, readable whatever its status.

    Attributes
    ----------
    name, kind, basis, scheme, status, message : str
    wall_time_s : float
        Wall-clock time of the analysis in s.
    steps, rejected_steps : int
    parameters : dict
        The analysis settings, as the solver resolved them.
    """

    def __init__(self, group: h5py.Group, results: Results, allow_incomplete: bool):
        self._group = group
        self._results = results
        self._allow_incomplete = allow_incomplete
        attrs = group.attrs
        self.name = group.name.rsplit("/", 1)[-1]
        self.kind = _text(attrs.get("kind", ""))
        self.basis = _text(attrs.get("basis", ""))
        self.scheme = _text(attrs.get("scheme", ""))
        self.status = _text(attrs.get("status", ""))
        self.message = _text(attrs.get("message", ""))
        self.wall_time_s = float(attrs.get("wall_time_s", 0.0))
        self.steps = int(attrs.get("steps", 0))
        self.rejected_steps = int(attrs.get("rejected_steps", 0))
        try:
            self.parameters = json.loads(_text(attrs.get("parameters", "")) or "{}")
        except json.JSONDecodeError as exc:
            raise PostproError(f"{self._where}: its 'parameters' attribute is not JSON "
                               f"({exc})") from exc

    def __repr__(self):
        return f"{type(self).__name__}('{self.name}', kind='{self.kind}', status='{self.status}')"

    @property
    def results(self) -> Results:
        """The results file this analysis belongs to."""
        return self._results

    @property
    def _where(self) -> str:
        return f"analysis '{self.name}' in '{self._results.path}'"

    def _require_readable(self):
        """Refuse the data of an analysis that did not complete, unless asked to allow it."""
        if self.status == layout.STATUS_COMPLETE or self._allow_incomplete:
            return
        detail = f": {self.message}" if self.message else ""
        if self.status == layout.STATUS_FAILED:
            story = f"failed{detail}"
        else:
            story = f"did not finish (status '{self.status}': still running, or killed){detail}"
        raise PostproError(f"{self._where} {story}; pass allow_incomplete=True to read what it "
                           "archived")

    def _dataset(self, path: str) -> h5py.Dataset:
        self._require_readable()
        found = self._group.get(path)
        if not isinstance(found, h5py.Dataset):
            raise PostproError(f"{self._where} (kind '{self.kind}') has no '{path}'")
        return bounded(found, self._results.path)


#: how far the data a dataset declares may exceed the size of its file (bytes): fem writes
#: no compressed dataset, so beyond the rows of one append a larger declaration is damage
#: (and reading its rows of fill values would take unbounded time and memory)
SIZE_SLACK = 64 * 2**20


def bounded(dataset: h5py.Dataset, path) -> h5py.Dataset:
    """``dataset``, unless it declares more data than its file can hold (PostproError)."""
    if dataset.compression is None:
        declared = dataset.size * dataset.dtype.itemsize
        held = dataset.file.id.get_filesize()
        if declared > held + SIZE_SLACK:
            raise PostproError(f"'{path}' is damaged or was not written by fem (dataset "
                               f"'{dataset.name}' declares shape {dataset.shape}, "
                               f"{declared:.3g} bytes, in a file of {held:.3g} bytes)")
    return dataset


#: the archived quantities whose columns are named (element, component) or (node, component)
FORCE_QUANTITIES = ("element_force", "reaction")


class _ForceColumns:
    """The element forces and reactions of an analysis: the names of their columns."""

    @property
    def elements(self) -> tuple[str, ...]:
        """The elements (cell names) whose forces were archived, in column order."""
        if "element_names" not in self._group:
            return ()
        return tuple(_text(n) for n in self._group["element_names"][()])

    @property
    def element_components(self) -> tuple[str, ...]:
        """The components of each element's columns (N VY VZ, then MT MFY MFZ)."""
        if "element_components" not in self._group:
            return ()
        return tuple(_text(n) for n in self._group["element_components"][()])

    @property
    def reactions(self) -> tuple[str, ...]:
        """The reactions archived, "NODE FX" ... in column order."""
        if "reaction_names" not in self._group:
            return ()
        return tuple(_text(n) for n in self._group["reaction_names"][()])

    def _named_column(self, quantity: str, name: str, component: str) -> tuple[h5py.Dataset,
                                                                              int]:
        """The dataset and column of an element force (``name`` a cell) or a reaction
        (``name`` a node)."""
        if quantity not in ("element_force", "reaction"):
            raise PostproError(f"unknown quantity '{quantity}' (known: element_force, "
                               f"reaction)")
        if quantity not in self._group:
            lacking = "elements" if quantity == "element_force" else "imposed dofs"
            raise PostproError(f"{self._where} did not archive '{quantity}' (not in its "
                               f"fields, or a model without {lacking})")
        dataset = self._group[quantity]
        if isinstance(self, _SampledAnalysis):
            width = (len(self.elements) * len(self.element_components)
                     if quantity == "element_force" else len(self.reactions))
            dataset = self._rows_of(bounded(dataset, self._results.path), width)
        if quantity == "element_force":
            elements, components = self.elements, self.element_components
            if name not in elements:
                raise PostproError(f"{self._where}: no element '{name}' (elements: "
                                   f"{_listing(elements)})")
            if component not in components:
                raise PostproError(f"{self._where}: element force component '{component}' "
                                   f"unknown (components: {_listing(components)})")
            return dataset, elements.index(name) * len(components) + components.index(component)
        names = self.reactions
        key = f"{name} {component}"
        if key not in names:
            nodes = sorted({n.rsplit(' ', 1)[0] for n in names})
            raise PostproError(f"{self._where}: no reaction {key} (reactions at the imposed "
                               f"dofs of nodes {_listing(nodes)}: FX FY FZ MX MY MZ)")
        return dataset, names.index(key)


class _SampledAnalysis(_ForceColumns, Analysis):
    """An analysis whose fields are sampled along one axis (time or frequency)."""

    _axis_name = "time"
    _axis_unit = "s"

    def _axis(self) -> np.ndarray:
        # the axis is one float64 per row (80 MB for 1e7 rows): cheap enough to keep
        if not hasattr(self, "_axis_cache"):
            dataset = self._dataset(self._axis_name)
            if dataset.ndim != 1:
                raise PostproError(f"{self._where}: its '{self._axis_name}' dataset has shape "
                                   f"{dataset.shape}, not one {self._axis_name} per row: the "
                                   f"file is damaged")
            self._axis_cache = np.asarray(dataset[()], dtype=float)
        return self._axis_cache

    def _rows_of(self, dataset: h5py.Dataset, width: int | None = None) -> h5py.Dataset:
        """``dataset``, once its shape agrees with the file: one row per instant of the axis
        (a complete analysis; one that did not complete may have archived fewer rows of some
        datasets than of its axis, never more) and, when ``width`` is given, that many
        columns (None: a one-dimensional series)."""
        rows = len(self._axis())
        name = dataset.name.split(f"{self._group.name}/", 1)[-1]
        unit = "instant" if self._axis_name == "time" else self._axis_name
        shape = dataset.shape
        if width is None and len(shape) != 1:
            problem = f"has shape {shape}, not one value per {unit}"
        elif width is not None and len(shape) != 2:
            problem = f"has shape {shape}, not ({rows}, {width})"
        elif width is not None and shape[1] != width:
            problem = f"has {shape[1]} columns, not {width} ({self._width_story(name)})"
        elif shape[0] > rows or (shape[0] < rows and self.status == layout.STATUS_COMPLETE):
            problem = (f"has {shape[0]} rows, {'fewer' if shape[0] < rows else 'more'} than "
                       f"the {rows} values of its '{self._axis_name}' dataset")
        else:
            return dataset
        raise PostproError(f"{self._where}: dataset '{name}' {problem}: the file is damaged")

    def _width_story(self, name: str) -> str:
        if name in layout.NODAL_FIELDS:
            return ("the dofs listed in its 'dofs' dataset" if "dofs" in self._group
                    else "the dofs of the file's dof table")
        if name == "element_force":
            return "its elements times their components"
        if name == "reaction":
            return "its reaction names"
        return "its modes"

    def _field_width(self) -> int:
        """The number of columns of a nodal field: the dofs it archived."""
        if "dofs" in self._group:
            return int(self._group["dofs"].shape[0]) if self._group["dofs"].ndim == 1 else -1
        return self._results.ndof

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields archived, among displacement, velocity and acceleration (and their
        relative_ counterparts on an analysis that drives supports)."""
        return tuple(f for f in layout.NODAL_FIELDS
                     if isinstance(self._group.get(f), h5py.Dataset))

    def field_units(self, field: str) -> tuple[str, ...]:
        """The distinct units of a field's columns, as the file states them (("m", "rad")
        where translations and rotations mix); files that state none: the field's unit."""
        units = self._field(field).attrs.get("units")
        if units is None:
            return (layout.UNITS[field],)
        if isinstance(units, (str, bytes)):
            units = [units]
        return tuple(dict.fromkeys(_text(u) for u in units))

    @property
    def archived_dofs(self) -> list[tuple[str, str]]:
        """(node, component) of each column of the fields, in column order.

        Every dof of the file's dof table, or only those of the nodes a modal-basis
        integration recombined (listed in its ``dofs`` dataset).
        """
        results = self._results
        columns = self._group["dofs"][:] if "dofs" in self._group else range(results.ndof)
        return [(str(results.node_names[results.dof_node[dof]]), str(results.dof_component[dof]))
                for dof in columns]

    def _field(self, field: str) -> h5py.Dataset:
        if field not in layout.NODAL_FIELDS:
            raise PostproError(f"unknown field '{field}' (known: {_listing(layout.NODAL_FIELDS)})")
        if field not in self.fields:
            raise PostproError(f"{self._where} did not archive '{field}' (archived: "
                               f"{_listing(self.fields)})")
        return self._rows_of(self._dataset(field), self._field_width())

    def _window(self, start, end, rows: int) -> tuple[int, int]:
        """Row range ``[i0, i1)`` of the axis values within ``[start, end]`` (both inclusive)."""
        if start is not None and end is not None and start > end:
            raise PostproError(f"{self._where}: window start {start:g} {self._axis_unit} is after "
                               f"its end {end:g} {self._axis_unit}")
        axis = self._axis()
        rows = min(rows, len(axis))
        i0 = 0 if start is None else int(np.searchsorted(axis[:rows], start, "left"))
        i1 = rows if end is None else int(np.searchsorted(axis[:rows], end, "right"))
        return i0, i1

    def window(self, start=None, end=None) -> tuple[int, int]:
        """Row range ``[i0, i1)`` of the instants within ``[start, end]`` (both inclusive).

        Parameters
        ----------
        start, end : float or None
            Bounds in the unit of the axis (s, or Hz for a sweep); ``None`` for open.
        """
        return self._window(start, end, len(self._axis()))

    def read_rows(self, field: str, dofs, i0: int, i1: int, step: int = 1):
        """Rows ``i0:i1:step`` of some dofs of a field.

        Parameters
        ----------
        dofs : sequence of (node, component)
        i0, i1, step : int
            Row range, as from :meth:`window`; rows past those archived are dropped.

        Returns
        -------
        axis : numpy.ndarray, shape (k,)
            Instants in s (frequencies in Hz for a sweep).
        values : numpy.ndarray, shape (k, len(dofs))
            Columns in the order of ``dofs``, in the unit of the field.
        """
        if field in FORCE_QUANTITIES:
            return self.read_forces(field, dofs, i0, i1, step)
        dataset = self._field(field)
        columns, order = self._dof_columns(dofs, field)
        i1 = min(i1, dataset.shape[0], len(self._axis()))
        if i1 <= i0:
            return self._axis()[:0], np.empty((0, len(order)), dtype=dataset.dtype)
        return self._axis()[i0:i1:step], dataset[i0:i1:step, columns][:, order]

    def blocks(self, field: str, dofs, start=None, end=None, rows: int = BLOCK_ROWS,
               step: int = 1):
        """Some dofs of a field over a window, in blocks spanning at most ``rows`` rows
        (``field`` may also be "element_force" or "reaction", ``dofs`` their (name,
        component) columns).

        Only one block is in memory at a time, whatever the length of the series. With
        ``step`` > 1 every block spans whole strides and holds one row in ``step``.

        Yields
        ------
        axis : numpy.ndarray, shape (k,)
        values : numpy.ndarray, shape (k, len(dofs))
        """
        # the datasets are checked here, before the first block is asked for
        rows_held = (self._named_column(field, *dofs[0])[0] if field in FORCE_QUANTITIES and
                     len(dofs) else self._field(field)).shape[0]
        i0, i1 = self._window(start, end, rows_held)
        span = max(step, rows - rows % step)  # whole strides per block keep the thinning regular
        return (self.read_rows(field, dofs, first, min(first + span, i1), step)
                for first in range(i0, i1, span))

    def _column(self, node: str, component: str) -> int:
        """Column of (node, component) in this analysis' fields: the dof number, or its
        position in the analysis' ``dofs`` dataset when only some dofs were archived."""
        dof = self._results.dof(node, component)
        if "dofs" not in self._group:
            return dof
        archived = self._group["dofs"][:]
        where = np.flatnonzero(archived == dof)
        if not len(where):
            raise PostproError(f"{self._where} did not archive {node} {component} (it archived "
                               f"the dofs of some nodes only)")
        return int(where[0])

    def _dof_columns(self, dofs, field):
        """Sorted distinct columns of ``dofs`` and the permutation back to their order."""
        if not len(dofs):
            raise PostproError(f"{self._where}: no (node, component) asked for '{field}'")
        wanted = np.array([self._column(node, component) for node, component in dofs])
        # h5py reads a list of columns only if it is increasing and without repeats
        return np.unique(wanted, return_inverse=True)

    def _column_series(self, dataset: h5py.Dataset, column: int, start, end):
        i0, i1 = self._window(start, end, dataset.shape[0])
        return self._axis()[i0:i1], dataset[i0:i1, column]

    def _columns(self, field, dofs, start, end):
        dataset = self._field(field)
        columns, order = self._dof_columns(dofs, field)
        i0, i1 = self._window(start, end, dataset.shape[0])
        return self._axis()[i0:i1], dataset[i0:i1, columns][:, order]

    def _locate(self, x: float, rows: int, interpolate: bool) -> tuple[int, int, float]:
        """Rows ``i, j`` and weight ``w``: the value at ``x`` is ``(1 - w) v_i + w v_j``."""
        axis = self._axis()[:rows]
        name, unit = self._axis_name, self._axis_unit
        if len(axis) == 0:
            raise PostproError(f"{self._where} archived no {name} instant")
        k = int(np.searchsorted(axis, x))
        below, above = max(k - 1, 0), min(k, len(axis) - 1)
        interval = min(max(k, 1), len(axis) - 1)
        step = axis[interval] - axis[interval - 1] if len(axis) > 1 else 0.0
        tolerance = max(1e-9 * max(1.0, abs(x)), 1e-6 * step)
        nearest = below if x - axis[below] <= axis[above] - x else above
        if abs(axis[nearest] - x) <= tolerance:
            # an instant archived twice (before and after an event): give the state after it
            last = int(np.searchsorted(axis, axis[nearest], "right")) - 1
            return last, last, 0.0
        if x < axis[0] or x > axis[-1]:
            raise PostproError(f"{self._where}: {name} {x:.12g} {unit} is outside the archived "
                               f"range [{axis[0]:.12g}, {axis[-1]:.12g}] {unit}")
        if not interpolate:
            raise PostproError(f"{self._where}: {name} {x:.12g} {unit} is not archived (nearest "
                               f"archived: {axis[below]:.12g} and {axis[above]:.12g} {unit}); "
                               "ask for interpolation to read between them")
        return below, above, (x - axis[below]) / (axis[above] - axis[below])

    def read_forces(self, quantity: str, pairs, i0: int, i1: int, step: int = 1):
        """Rows ``i0:i1:step`` of some element forces (``pairs`` of (cell, component)) or
        reactions ((node, component)): (axis (k,), values (k, len(pairs)))."""
        located = [self._named_column(quantity, name, component) for name, component in pairs]
        if not located:
            raise PostproError(f"{self._where}: no column asked for '{quantity}'")
        dataset = located[0][0]
        wanted = np.array([column for _, column in located])
        columns, order = np.unique(wanted, return_inverse=True)
        i1 = min(i1, dataset.shape[0], len(self._axis()))
        if i1 <= i0:
            return self._axis()[:0], np.empty((0, len(pairs)))
        return self._axis()[i0:i1:step], dataset[i0:i1:step, columns][:, order]

    def force_pairs(self, quantity: str, names=(), components=()) -> list[tuple[str, str]]:
        """The (name, component) columns of element forces (names: cells) or reactions
        (names: nodes) among those archived; nothing given means every one."""
        if quantity == "element_force":
            archived = [(e, c) for e in self.elements for c in self.element_components]
        else:
            archived = [tuple(n.rsplit(" ", 1)) for n in self.reactions]
        chosen = [(n, c) for n, c in archived
                  if (not names or n in names) and (not components or c in components)]
        for name in names:
            if not any(n == name for n, _ in archived):
                self._named_column(quantity, name, archived[0][1] if archived else "N")
        if not chosen:
            raise PostproError(f"{self._where}: no {quantity} column for "
                               f"{', '.join(names) or 'any name'} and "
                               f"{', '.join(components) or 'any component'}")
        return chosen

    def element_force(self, element: str, component: str, start=None, end=None):
        """The internal force of one element over a time (or frequency) window.

        Parameters
        ----------
        element : str
            Its cell name.
        component : str
            N (axial, positive in tension), VY, VZ (N), MT, MFY, MFZ (N.m), in the element's
            frame.

        Returns
        -------
        axis, values : numpy.ndarray, shape (k,)
        """
        dataset, column = self._named_column("element_force", element, component)
        return self._column_series(dataset, column, start, end)

    def reaction(self, node: str, component: str, start=None, end=None):
        """The reaction at an imposed dof: the force the support exerts there (FX FY FZ in
        N, MX MY MZ in N.m, global axes), over a window."""
        dataset, column = self._named_column("reaction", node, component)
        return self._column_series(dataset, column, start, end)

    def force_at(self, quantity: str, name: str, component: str, x: float,
                 interpolate: bool = False) -> float:
        """An element force or a reaction at one instant (as :meth:`value_at`)."""
        dataset, column = self._named_column(quantity, name, component)
        return self._value_in(dataset, column, x, interpolate)

    def _value_at(self, field, node, component, x, interpolate):
        return self._value_in(self._field(field), self._column(node, component), x, interpolate)

    def _value_in(self, dataset, column, x, interpolate):
        i, j, weight = self._locate(float(x), dataset.shape[0], interpolate)
        if i == j:
            return dataset[i, column].item()
        first, second = dataset[i:j + 1, column]
        return ((1.0 - weight) * first + weight * second).item()


class TransientAnalysis(_SampledAnalysis):
    """A time integration: fields, generalized coordinates, links, events and energy.

    All series are returned with their time vector ``t`` (nt_window,) in s; the window
    ``[start, end]`` (s, both inclusive, ``None`` for open) selects the rows read.
    """

    @property
    def time(self) -> np.ndarray:
        """Archived instants, shape (nt,), in s."""
        return self._axis()

    def series(self, field: str, node: str, component: str, start=None, end=None):
        """One dof of a field over a time window.

        Returns
        -------
        t : numpy.ndarray, shape (k,)
            Instants in s.
        values : numpy.ndarray, shape (k,)
            In m, m/s or m/s² for displacement, velocity, acceleration.
        """
        dataset = self._field(field)
        return self._column_series(dataset, self._column(node, component), start, end)

    def columns(self, field: str, dofs, start=None, end=None):
        """Several dofs of a field over a time window.

        Parameters
        ----------
        dofs : sequence of (node, component)

        Returns
        -------
        t : numpy.ndarray, shape (k,)
        values : numpy.ndarray, shape (k, len(dofs))
            Columns in the order of ``dofs``.
        """
        return self._columns(field, dofs, start, end)

    def value_at(self, field: str, node: str, component: str, time: float,
                 interpolate: bool = False) -> float:
        """The value of one dof at one instant ``time`` (s).

        ``time`` matches an archived instant within max(1e-9 max(1, |time|), 1e-6 Δt_local).
        Otherwise the value is interpolated linearly between its neighbours if
        ``interpolate`` is set, and an error names the nearest archived instants if not.
        """
        return self._value_at(field, node, component, time, interpolate)

    def generalized(self, mode: int, field: str = "displacement", start=None, end=None):
        """Generalized coordinate of one mode (1-based) of a modal-basis integration.

        Returns
        -------
        t : numpy.ndarray, shape (k,)
        q : numpy.ndarray, shape (k,)
            ``q``, ``qdot`` or ``qddot`` for displacement, velocity, acceleration.
        """
        if field not in layout.GENERALIZED:
            raise PostproError(f"unknown field '{field}' (known: {_listing(layout.FIELDS)})")
        path = layout.GENERALIZED[field]
        if not isinstance(self._group.get(path), h5py.Dataset):
            raise PostproError(f"{self._where} has no generalized coordinates '{path}' (basis "
                               f"'{self.basis}')")
        dataset = self._dataset(path)
        if "omega" in self._group:
            dataset = self._rows_of(dataset, int(self._group["omega"].shape[0]))
        else:
            dataset = self._rows_of(dataset, dataset.shape[1] if dataset.ndim == 2 else 0)
        count = dataset.shape[1]
        if not 1 <= mode <= count:
            raise PostproError(f"{self._where}: mode {mode} out of range 1..{count}")
        return self._column_series(dataset, mode - 1, start, end)

    @property
    def events(self) -> np.ndarray:
        """Located events: structured array with fields time (s), kind, link, detail."""
        self._require_readable()
        if "events" not in self._group:
            return np.empty(0, dtype=_EVENT_DTYPE)
        return _decode_table(self._group["events"][()])

    def energy(self, start=None, end=None) -> dict[str, np.ndarray]:
        """Energy terms archived (kinetic, potential, dissipated, external_work, link_energy).

        Returns
        -------
        dict
            ``"time"`` (k,) in s and each archived term (k,) in J; only ``"time"`` if the
            analysis archived no energy.
        """
        self._require_readable()
        group = self._group.get("energy")
        if group is None:
            return {"time": self._axis()[:0]}
        names = [n for n in group if isinstance(group[n], h5py.Dataset)]
        for n in names:
            self._rows_of(bounded(group[n], self._results.path))
        rows = min([group[n].shape[0] for n in names], default=0)
        i0, i1 = self._window(start, end, rows)
        terms = {"time": self._axis()[i0:i1]}
        terms.update({n: group[n][i0:i1] for n in names})
        return terms

    @property
    def links(self) -> tuple[str, ...]:
        """Names of the links whose series were archived."""
        group = self._group.get("links")
        return tuple(group.keys()) if group is not None else ()

    def link(self, name: str, start=None, end=None) -> dict:
        """Series and attributes of one link.

        Returns
        -------
        dict
            ``"time"`` (k,) in s, each series (k,) (normal_force and tangential_force in N,
            penetration in m, state) and each attribute of the link group (e.g. stiffness
            in N/m).
        """
        group = self._link_group(name)
        names = [n for n in group if isinstance(group[n], h5py.Dataset)]
        rows = min([group[n].shape[0] for n in names], default=0)
        i0, i1 = self._window(start, end, rows)
        found = {"time": self._axis()[i0:i1]}
        found.update({n: group[n][i0:i1] for n in names})
        found.update({key: value.item() if isinstance(value, np.generic) else value
                      for key, value in group.attrs.items()})
        return found

    def link_series_names(self, name: str) -> tuple[str, ...]:
        """Names of the series archived for one link (normal_force, penetration, state, ...)."""
        group = self._link_group(name)
        return tuple(n for n in group if isinstance(group[n], h5py.Dataset))

    def link_attributes(self, name: str) -> dict:
        """The attributes of one link's group (its parameters, and ``loop`` when its law has
        a force-deformation loop), without reading its series; strings as ``str``, string
        arrays as lists of ``str``."""
        attrs = self._link_group(name).attrs
        found = {}
        for key, value in attrs.items():
            if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
                value = [_text(v) for v in value.ravel()]
            elif isinstance(value, (bytes, np.generic)):
                value = _text(value) if isinstance(value, bytes) else value.item()
            found[key] = value
        return found

    def link_series_units(self, name: str) -> dict[str, str]:
        """The unit of each series of one link that stores one (a ``units`` attribute)."""
        group = self._link_group(name)
        return {n: _text(group[n].attrs["units"]) for n in group
                if isinstance(group[n], h5py.Dataset) and "units" in group[n].attrs}

    def link_blocks(self, name: str, start=None, end=None, rows: int = BLOCK_ROWS):
        """The series of one link over a window, in blocks of at most ``rows`` rows.

        Yields
        ------
        dict
            ``"time"`` (k,) in s and each series of the link (k,), as in :meth:`link`
            (without the attributes).
        """
        group = self._link_group(name)
        names = [n for n in group if isinstance(group[n], h5py.Dataset)]
        count = min([group[n].shape[0] for n in names], default=0)
        i0, i1 = self._window(start, end, count)
        for first in range(i0, i1, rows):
            last = min(first + rows, i1)
            block = {"time": self._axis()[first:last]}
            block.update({n: group[n][first:last] for n in names})
            yield block

    def to_xarray(self, field: str = "displacement", nodes=None, components=None, start=None,
                  end=None):
        """Some dofs of a field over a time window, as an ``xarray.DataArray`` (needs the
        optional extra ``fem[notebook]``).

        Parameters
        ----------
        field : str
            displacement, velocity or acceleration.
        nodes, components : str, sequence of str or None
            The dofs: those of these nodes with these components; ``None`` for every node
            (component) archived. Nodes come in the order given, and within a node its
            components in the order given (else in the order of the dof table).
        start, end : float or None
            Time window in s, both inclusive; ``None`` for open. Only its rows are read.

        Returns
        -------
        xarray.DataArray
            Dims ("time", "dof"): coordinate "time" (s), per-dof coordinates "dof" ("N3 DX"),
            "node" and "component"; name ``field``; attrs "analysis" and "units" (m, m/s or
            m/s^2, rad, rad/s or rad/s^2 for DRX DRY DRZ) when every dof has the same unit,
            else a per-dof coordinate "units".

        Raises
        ------
        PostproError
            xarray is not installed; an unknown field, node or component, or one the
            analysis did not archive.
        """
        from postpro import frames

        return frames.field_array(self, self._axis_name, self._axis_unit, field, nodes,
                                  components, start, end)

    def events_frame(self):
        """The located events as a ``pandas.DataFrame`` (needs ``fem[notebook]``).

        Returns
        -------
        pandas.DataFrame
            One row per event, in time order: columns time (s), kind, link, detail, then
            any further column of the events table; no row when there was no event.
        """
        from postpro import frames

        return frames.events_frame(self)

    def link_frame(self, name: str, start=None, end=None):
        """The archived series of one link over a time window, as a ``pandas.DataFrame``
        (needs ``fem[notebook]``).

        Returns
        -------
        pandas.DataFrame
            Indexed by time (s), one column per series (normal_force and tangential_force
            in N, penetration in m, state, ...); attrs "units" and "parameters" (the
            attributes of the link, e.g. stiffness in N/m).
        """
        from postpro import frames

        return frames.link_frame(self, name, start, end)

    def _link_group(self, name: str) -> h5py.Group:
        if name not in self.links:
            raise PostproError(f"{self._where} has no link '{name}' (links: "
                               f"{_listing(self.links)})")
        self._require_readable()
        group = self._group["links"][name]
        for series in group.values():
            if isinstance(series, h5py.Dataset):
                self._rows_of(bounded(series, self._results.path))
        return group


class HarmonicAnalysis(_SampledAnalysis):
    """A frequency sweep: complex fields sampled at ``frequency`` (Hz)."""

    _axis_name = "frequency"
    _axis_unit = "Hz"

    @property
    def frequency(self) -> np.ndarray:
        """Excitation frequencies, shape (nf,), in Hz."""
        return self._axis()

    def series(self, field: str, node: str, component: str, start=None, end=None):
        """One dof of a complex field over a frequency window ``[start, end]`` (Hz).

        Returns
        -------
        f : numpy.ndarray, shape (k,)
        values : numpy.ndarray of complex, shape (k,)
        """
        dataset = self._field(field)
        return self._column_series(dataset, self._column(node, component), start, end)

    def columns(self, field: str, dofs, start=None, end=None):
        """Several dofs: ``(f (k,), values (k, len(dofs)))`` in the order of ``dofs``."""
        return self._columns(field, dofs, start, end)

    def value_at(self, field: str, node: str, component: str, frequency: float,
                 interpolate: bool = False) -> complex:
        """Complex value of one dof at one frequency (Hz); matching as in the transient case."""
        return self._value_at(field, node, component, frequency, interpolate)

    def to_xarray(self, field: str = "displacement", nodes=None, components=None, start=None,
                  end=None):
        """Some dofs of a complex field over a frequency window, as an ``xarray.DataArray``
        (needs the optional extra ``fem[notebook]``).

        Parameters are those of :meth:`TransientAnalysis.to_xarray`, with ``start`` and
        ``end`` in Hz.

        Returns
        -------
        xarray.DataArray
            Complex values, dims ("frequency", "dof"): coordinate "frequency" (Hz), and the
            per-dof coordinates, name and attrs of :meth:`TransientAnalysis.to_xarray`.
        """
        from postpro import frames

        return frames.field_array(self, self._axis_name, self._axis_unit, field, nodes,
                                  components, start, end)


def _array(name: str, doc: str) -> property:
    """A read-only attribute giving the stored array ``name`` of a modal analysis."""
    return property(lambda self: self[name], doc=doc)


class ModalAnalysis(Analysis):
    """Real (kind ``modes``) or complex (kind ``complex_modes``) modes, numbered from 1.

    Every array is also available by name: ``analysis["frequency"]``.
    """

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.arrays:
            raise PostproError(f"{self._where} (kind '{self.kind}') has no '{name}' (available: "
                               f"{_listing(self.arrays)})")
        return self._dataset(name)[()]

    @property
    def arrays(self) -> tuple[str, ...]:
        """Names of the arrays stored."""
        return tuple(n for n in self._group if isinstance(self._group[n], h5py.Dataset))

    @property
    def mode_count(self) -> int:
        return self._dataset("frequency").shape[0]

    def to_frame(self):
        """The per-mode arrays as a ``pandas.DataFrame`` indexed by mode, from 1 (needs the
        optional extra ``fem[notebook]``).

        Returns
        -------
        pandas.DataFrame
            One column per array of one value per mode (frequency, omega, eigenvalue,
            damping_ratio, generalized_mass, ...), and ``NAME_X``, ``NAME_Y``, ``NAME_Z``
            for the arrays per mode and direction (participation_factor, effective_mass);
            not the shapes. attrs "units" gives the unit of each column that has one.
        """
        from postpro import frames

        return frames.modes_frame(self)

    def mode_value(self, name: str, mode: int):
        """One entry (mode 1-based) of a per-mode array such as ``frequency``."""
        values = self[name]
        if not 1 <= mode <= len(values):
            raise PostproError(f"{self._where}: mode {mode} out of range 1..{len(values)}")
        return values[mode - 1].item()

    frequency = _array("frequency", "Natural (undamped) frequencies, shape (m,), in Hz.")
    omega = _array("omega", "Angular frequencies, shape (m,), in rad/s.")
    generalized_mass = _array("generalized_mass", "φᵀMφ per mode, shape (m,), in kg.")
    generalized_stiffness = _array("generalized_stiffness", "φᵀKφ, shape (m,), in N/m.")
    shapes = _array("shapes", "Mode shapes, shape (m, ndof), real or complex.")
    participation_factor = _array("participation_factor", "Per mode and direction X Y Z, (m, 3).")
    effective_mass = _array("effective_mass", "Per mode and direction X Y Z, shape (m, 3), in kg.")
    eigenvalue = _array("eigenvalue", "Complex eigenvalues λ, shape (m,), in rad/s.")
    damped_frequency = _array("damped_frequency", "Im λ / 2π, shape (m,), in Hz.")
    damping_ratio = _array("damping_ratio", "−Re λ / |λ|, shape (m,), dimensionless.")


class StaticAnalysis(_ForceColumns, Analysis):
    """A linear static response (kind ``static``): K u = F with the imposed values.

    ``displacement`` (ndof,), and when the model has them ``element_force`` and ``reaction``
    with the datasets that name their columns, as a transient analysis' rows.
    """

    def displacement(self) -> np.ndarray:
        """u on every dof (m, rad for rotations), shape (ndof,)."""
        self._require_readable()
        return self._dataset("displacement")[()]

    def value(self, node: str, component: str) -> float:
        """The displacement of one dof (m, or rad)."""
        self._require_readable()
        return self._dataset("displacement")[self._results.dof(node, component)].item()

    def element_force(self, element: str, component: str) -> float:
        """The internal force of one element (N, N.m), in its frame (see transient)."""
        dataset, column = self._named_column("element_force", element, component)
        return dataset[column].item()

    def reaction(self, node: str, component: str) -> float:
        """The reaction at an imposed dof (FX FY FZ in N, MX MY MZ in N.m)."""
        dataset, column = self._named_column("reaction", node, component)
        return dataset[column].item()
