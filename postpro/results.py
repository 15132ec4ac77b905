"""Read a fem results file (HDF5): mesh, dofs, analyses and what each analysis archived.

Time-indexed datasets may hold millions of rows: every reader here slices one window of
rows and only the columns asked for, never a whole (nt, ndof) dataset.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from postpro import layout
from postpro.analyses import (BLOCK_ROWS, Analysis, HarmonicAnalysis, ModalAnalysis,
                              StaticAnalysis, TransientAnalysis, _decode_table, _listing, _text,
                              bounded)
from postpro.analyses_statistics import RandomAnalysis, SpectralAnalysis
from postpro.errors import PostproError

_ANALYSIS_CLASSES = {
    "spectral": SpectralAnalysis,
    "static": StaticAnalysis,
    "transient": TransientAnalysis,
    "harmonic": HarmonicAnalysis,
    "random": RandomAnalysis,
    "modes": ModalAnalysis,
    "complex_modes": ModalAnalysis,
}

__all__ = ["BLOCK_ROWS", "CELLS", "Analysis", "HarmonicAnalysis", "ModalAnalysis",
           "RandomAnalysis", "Results", "SpectralAnalysis", "StaticAnalysis",
           "TransientAnalysis", "open"]

#: the mesh cells: a group of one dataset per cell type (format 2), or the SEG2 cells (format 1)
CELLS = layout.CELLS


def open(path, require_complete: bool = False, allow_incomplete: bool = False) -> "Results":
    """Open a results file for reading.

    Parameters
    ----------
    path : str or os.PathLike
        The HDF5 file written by ``fem run``.
    require_complete : bool
        Refuse a file whose root ``status`` is not "complete" (a run still going, killed,
        or failed).
    allow_incomplete : bool
        Default for :meth:`Results.analysis`: let the data of analyses whose status is
        "running" or "failed" be read (what they archived before stopping).

    Returns
    -------
    Results
        Owns the file: close it with :meth:`Results.close` or a ``with`` block.

    Raises
    ------
    PostproError
        The file is missing, not HDF5, not a fem results file, of a newer format version,
        or not complete when ``require_complete`` is set.
    """
    path = Path(path)
    if not path.exists():
        raise PostproError(f"results file '{path}' does not exist")
    if not path.is_file():
        raise PostproError(f"results file '{path}' is not a file")
    if not h5py.is_hdf5(path):
        raise PostproError(f"'{path}' is not an HDF5 file, so not a fem results file")
    try:
        file = h5py.File(path, "r")
    except OSError as exc:
        raise PostproError(f"cannot open results file '{path}': {exc}") from exc
    try:
        results = Results(file, owns_file=True, allow_incomplete=allow_incomplete)
        if require_complete and results.status != layout.STATUS_COMPLETE:
            raise PostproError(f"results file '{path}' is not complete: "
                               f"{_status_story(results.status)}")
    except BaseException:
        file.close()
        raise
    return results


def _status_story(status: str) -> str:
    if status == layout.STATUS_RUNNING:
        return "status is 'running' (the run is still going, or it was killed)"
    if status == layout.STATUS_FAILED:
        return "status is 'failed' (the run stopped on an error)"
    return f"status is '{status}'"


class Results:
    """A fem results file: mesh, dof table and analyses.

    Attributes
    ----------
    path : str
        File name, as used in messages.
    title, status : str
        Root attributes; ``status`` is "running", "complete" or "failed".
    node_names : numpy.ndarray of str, shape (n,)
    coordinates : numpy.ndarray, shape (n, 3)
        Node coordinates in m.
    dof_node : numpy.ndarray of int, shape (ndof,)
        Index into ``node_names`` of each dof.
    dof_component : numpy.ndarray of str, shape (ndof,)
        DX, DY, DZ, DRX, DRY or DRZ.
    dof_imposed : numpy.ndarray of bool, shape (ndof,)
        True for the dofs whose motion is imposed.
    """

    def __init__(self, file: h5py.File, *, owns_file: bool = False, allow_incomplete: bool = False):
        self._file = file
        self._owns_file = owns_file
        self.allow_incomplete = allow_incomplete
        self.path = file.filename
        found = _text(file.attrs.get("format", ""))
        if found != layout.FORMAT:
            what = f"format attribute '{found}'" if found else "no 'format' attribute"
            raise PostproError(f"'{self.path}' is not a fem results file ({what}, expected "
                               f"'{layout.FORMAT}')")
        version = int(file.attrs.get("format_version", 0))
        if version > layout.FORMAT_VERSION:
            raise PostproError(f"'{self.path}' uses results format version {version}; this "
                               f"postpro reads versions up to {layout.FORMAT_VERSION}: update fem")
        self.title = _text(file.attrs.get("title", ""))
        self.node_names = np.array(self._required(layout.NODE_NAMES).asstr()[()], dtype=str)
        self.coordinates = np.asarray(self._required(layout.COORDINATES)[()], dtype=float)
        self.dof_node = np.asarray(self._required(layout.DOF_NODE)[()], dtype=int)
        self.dof_component = np.array(self._required(layout.DOF_COMPONENT).asstr()[()], dtype=str)
        self.dof_imposed = np.asarray(self._required(layout.DOF_IMPOSED)[()], dtype=bool)
        self._node_dofs: dict[str, dict[str, int]] = {str(name): {} for name in self.node_names}
        for index, (node, component) in enumerate(zip(self.dof_node, self.dof_component)):
            self._node_dofs[str(self.node_names[node])][str(component)] = index

    def _required(self, name: str) -> h5py.Dataset:
        found = self._file.get(name)
        if not isinstance(found, h5py.Dataset):
            raise PostproError(f"results file '{self.path}' has no dataset '{name}'")
        return bounded(found, self.path)

    @classmethod
    def from_h5(cls, file: h5py.File, allow_incomplete: bool = False) -> "Results":
        """Wrap a file that is already open (possibly still being written); never closes it."""
        return cls(file, owns_file=False, allow_incomplete=allow_incomplete)

    def close(self):
        """Close the file if :func:`open` opened it."""
        if self._owns_file and self._file.id.valid:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Results('{self.path}', status='{self.status}', analyses={list(self.analyses)})"

    def describe(self) -> str:
        """A short text summary: title, status, mesh size, then one line per analysis."""
        imposed = int(self.dof_imposed.sum())
        cells = ", ".join(f"{len(c)} {kind}" for kind, c in self.cell_blocks.items())
        groups = len(self.node_groups) + len(self.cell_groups)
        lines = [f"{self.path}: '{self.title}', status {self.status}",
                 f"{len(self.node_names)} nodes{f' ({cells} cells)' if cells else ''}, "
                 f"{self.ndof} dofs ({imposed} imposed)"
                 f"{f', {groups} mesh groups' if groups else ''}"]
        for name in self.analyses:
            analysis = self.analysis(name, allow_incomplete=True)
            how = ", ".join(part for part in (analysis.basis, analysis.scheme) if part)
            line = (f"  {name}: {analysis.kind}{f' ({how})' if how else ''}, {analysis.status}, "
                    f"{analysis.steps} steps, {analysis.wall_time_s:.3g} s")
            lines.append(f"{line}: {analysis.message}" if analysis.message else line)
        return "\n".join(lines)

    @property
    def status(self) -> str:
        """Root status, read each time: the writer updates it when the run ends."""
        return _text(self._file.attrs.get("status", ""))

    @property
    def study_source(self) -> str:
        """The study TOML text the run was made from."""
        return self._required(layout.STUDY_SOURCE).asstr()[()]

    @property
    def ndof(self) -> int:
        return len(self.dof_node)

    @property
    def cells(self) -> np.ndarray | None:
        """SEG2 connectivity, shape (m, 2), node indices; ``None`` if the file has none."""
        return self.cell_blocks.get("SEG2")

    @property
    def cell_blocks(self) -> dict[str, np.ndarray]:
        """The mesh cells by type: "POI1" (m, 1) and "SEG2" (m, 2) node indices, for the
        types the mesh has (format 1 files hold their SEG2 cells only; older ones none)."""
        if not hasattr(self, "_cell_blocks"):
            self._cell_blocks, self._cell_names = self._read_cells()
        return self._cell_blocks

    def cell_names(self, kind: str) -> tuple[str, ...]:
        """The names of the cells of one type, in the order of :attr:`cell_blocks`."""
        self.cell_blocks
        return self._cell_names.get(kind, ())

    def _read_cells(self):
        found = self._file.get(CELLS)
        names = self._file.get(layout.CELL_NAMES)
        if isinstance(found, h5py.Dataset):       # format 1: the SEG2 cells alone
            found, names = {"SEG2": found}, {"SEG2": names}
        elif not isinstance(found, h5py.Group):
            return {}, {}
        blocks, block_names = {}, {}
        for kind in found:
            width = layout.CELL_TYPES.get(kind)
            where = f"{CELLS}/{kind}" if isinstance(found, h5py.Group) else CELLS
            item = found[kind]
            if not isinstance(item, h5py.Dataset):
                raise PostproError(f"results file '{self.path}': '{where}' is not a dataset")
            nodes = np.asarray(bounded(item, self.path)[()])
            if (width is None or nodes.ndim != 2 or nodes.shape[1] != width
                    or nodes.dtype.kind not in "iu"
                    or (nodes.size and not 0 <= nodes.min() <= nodes.max() < len(self.node_names))):
                raise PostproError(f"results file '{self.path}': '{where}' has shape "
                                   f"{nodes.shape} and type {nodes.dtype}, expected node indices "
                                   f"of {kind or 'a known cell type'} cells")
            blocks[kind] = nodes.astype(np.int64)
            label = names.get(kind) if names is not None else None
            block_names[kind] = (tuple(label.asstr()[()]) if isinstance(label, h5py.Dataset)
                                 else tuple(f"{kind}_{i + 1}" for i in range(len(nodes))))
            if len(block_names[kind]) != len(nodes):
                raise PostproError(f"results file '{self.path}': {len(block_names[kind])} names "
                                   f"for {len(nodes)} {kind} cells")
        return blocks, block_names

    @property
    def node_groups(self) -> dict[str, tuple[str, ...]]:
        """The node groups of the mesh: name -> node names (empty before format 2)."""
        groups = self._groups(layout.NODE_GROUPS)
        return {g: tuple(str(self.node_names[int(i)]) for i in members)
                for g, members in groups.items()}

    @property
    def cell_groups(self) -> dict[str, tuple[str, ...]]:
        """The cell groups of the mesh: name -> cell names (empty before format 2)."""
        return {g: tuple(_text(m) for m in members)
                for g, members in self._groups(layout.CELL_GROUPS).items()}

    def _groups(self, path: str) -> dict:
        group = self._file.get(path)
        if not isinstance(group, h5py.Group):
            return {}
        try:
            if not all(isinstance(group.get(k), h5py.Dataset)
                       for k in ("names", "offsets", "members")):
                raise KeyError("one of the datasets names, offsets and members")
            names = [_text(n) for n in group["names"][()]]
            offsets = np.asarray(group["offsets"][()], np.int64)
            members = bounded(group["members"], self.path)[()]
        except KeyError as exc:
            raise PostproError(f"results file '{self.path}': '{path}' lacks {exc}") from None
        if (len(offsets) != len(names) + 1 or (len(offsets) and offsets[0] != 0)
                or np.any(np.diff(offsets) < 0) or offsets[-1] != len(members)):
            raise PostproError(f"results file '{self.path}': '{path}' has offsets that do not "
                               f"match its {len(names)} groups and {len(members)} members")
        if members.dtype.kind in "iu" and len(members) and not (
                0 <= members.min() and members.max() < len(self.node_names)):
            raise PostproError(f"results file '{self.path}': '{path}' names nodes outside the mesh")
        return {name: members[offsets[i]:offsets[i + 1]] for i, name in enumerate(names)}

    def dof(self, node: str, component: str) -> int:
        """Column of ``(node, component)`` in the (nt, ndof) datasets.

        Raises
        ------
        PostproError
            Unknown node, or a component the node does not carry (the message lists those
            it does).
        """
        components = self._node_dofs.get(node)
        if components is None:
            raise PostproError(f"unknown node '{node}' in '{self.path}' (nodes: "
                               f"{_listing(self.node_names)})")
        if component not in components:
            raise PostproError(f"node '{node}' has no component '{component}' in '{self.path}' "
                               f"(available: {_listing(components)})")
        return components[component]

    @property
    def analyses(self) -> tuple[str, ...]:
        """Names of the analyses in the file."""
        group = self._file.get(layout.ANALYSES)
        return tuple(group.keys()) if group is not None else ()

    def analysis(self, name: str | None = None, allow_incomplete: bool | None = None) -> "Analysis":
        """One analysis by name; ``None`` picks the only one the file holds.

        ``allow_incomplete`` (default: the value given to :func:`open`) lets the data of a
        "running" or "failed" analysis be read.
        """
        names = self.analyses
        if name is None:
            if not names:
                raise PostproError(f"'{self.path}' holds no analysis")
            if len(names) > 1:
                raise PostproError(f"'{self.path}' holds {len(names)} analyses; name one of: "
                                   f"{_listing(names)}")
            name = names[0]
        elif name not in names:
            raise PostproError(f"no analysis '{name}' in '{self.path}' (analyses: "
                               f"{_listing(names)})")
        group = self._file[layout.ANALYSES][name]
        kind = _text(group.attrs.get("kind", ""))
        allow = self.allow_incomplete if allow_incomplete is None else allow_incomplete
        return _ANALYSIS_CLASSES.get(kind, Analysis)(group, self, allow)

    @property
    def checks(self) -> np.ndarray:
        """The stored ``/checks`` table (structured array, empty if the run had no checks)."""
        if layout.CHECKS not in self._file:
            numeric = {"reference": "f8", "computed": "f8", "tolerance": "f8", "passed": "?"}
            return np.empty(0, dtype=[(c, numeric.get(c, "U1")) for c in layout.CHECK_COLUMNS])
        return _decode_table(self._file[layout.CHECKS][()])
