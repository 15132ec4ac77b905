"""Notebook views of an analysis: its fields as xarray DataArrays, its events, link series and
modes as pandas DataFrames.

xarray and pandas are the optional extra ``fem[notebook]``: they are imported on the first
call that needs them, never when postpro or fem is imported, and a call without them raises
:class:`~postpro.errors.PostproError` telling how to install them. The analysis classes of
:mod:`postpro.analyses` call these functions from their ``to_xarray``, ``events_frame``,
``link_frame`` and ``to_frame`` methods; every read goes through their windowed readers.
"""

from __future__ import annotations

import importlib

import numpy as np

from postpro import layout
from postpro.errors import PostproError

#: units of the per-mode arrays of a modal analysis (a missing name is dimensionless)
MODE_UNITS = {"frequency": "Hz", "omega": "rad/s", "eigenvalue": "rad/s",
              "damped_frequency": "Hz", "generalized_mass": "kg",
              "generalized_stiffness": "N/m", "effective_mass": "kg"}
#: column order of the modes table; arrays not named here follow in alphabetical order
MODE_ORDER = ("frequency", "omega", "eigenvalue", "damped_frequency", "damping_ratio",
              "damping_ratio_damped", "generalized_mass", "generalized_stiffness",
              "participation_factor", "effective_mass")
_DIRECTIONS = ("X", "Y", "Z")
_INSTALL = "pip install 'fem[notebook]'"


def require(module: str, what: str):
    """The module ``module`` (``"xarray"`` or ``"pandas"``), imported on first use.

    Raises
    ------
    PostproError
        The module cannot be imported: the message names ``what`` needs it and how to
        install it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PostproError(f"{what} needs {module}: {_INSTALL}") from exc


def _names(value) -> list[str] | None:
    """``None``, or a list of distinct names in their order (one name may be given alone)."""
    if value is None:
        return None
    names = [value] if isinstance(value, str) else [str(v) for v in value]
    return list(dict.fromkeys(names))


def select_dofs(analysis, nodes=None, components=None) -> list[tuple[str, str]]:
    """The (node, component) columns of an analysis that ``nodes`` and ``components`` pick.

    Parameters
    ----------
    analysis : TransientAnalysis or HarmonicAnalysis
    nodes, components : str, sequence of str or None
        ``None`` keeps every node (component) the analysis archived. Nodes come in the
        order given, and within a node its components in the order given (else in the order
        of the dof table).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    PostproError
        An unknown node, a node the analysis did not archive, an empty list, or a component
        that none of the selected nodes carries.
    """
    archived = analysis.archived_dofs
    per_node: dict[str, list[str]] = {}
    for node, component in archived:
        per_node.setdefault(node, []).append(component)
    nodes, components = _names(nodes), _names(components)
    where = f"analysis '{analysis.name}'"
    if nodes == [] or components == []:
        raise PostproError(f"{where}: an empty list of {'nodes' if nodes == [] else 'components'}"
                           " selects nothing (None selects all)")
    for node in nodes or ():
        if node not in per_node:
            if node not in analysis.results.node_names:
                analysis.results.dof(node, "DX")  # raises the reader's unknown-node message
            raise PostproError(f"{where} did not archive node '{node}' (it archived the dofs "
                               "of some nodes only)")
    chosen = nodes if nodes is not None else list(per_node)
    carried = list(dict.fromkeys(c for node in chosen for c in per_node[node]))
    for component in components or ():
        if component not in carried:
            raise PostproError(f"{where}: no selected node carries component '{component}' "
                               f"(components: {', '.join(carried)})")
    return [(node, component) for node in chosen
            for component in (components if components is not None else per_node[node])
            if component in per_node[node]]


def field_units(field: str, components) -> list[str] | None:
    """The unit of each column of ``field`` with these components; ``None`` if unknown."""
    if field not in layout.ROTATION_UNITS:
        return None
    return [layout.unit_of(field, component) for component in components]


def field_array(analysis, axis_name: str, axis_unit: str, field: str = "displacement",
                nodes=None, components=None, start=None, end=None):
    """Some dofs of a field over a window of a time or frequency axis, as a DataArray.

    Parameters
    ----------
    analysis : TransientAnalysis or HarmonicAnalysis
    axis_name, axis_unit : str
        "time" and "s", or "frequency" and "Hz".
    field : str
        displacement, velocity or acceleration.
    nodes, components : str, sequence of str or None
        The dofs, as for :func:`select_dofs`.
    start, end : float or None
        Window of the axis (s, or Hz for a sweep), both inclusive; ``None`` for open. Only
        the rows of the window are read.

    Returns
    -------
    xarray.DataArray
        Dims (``axis_name``, "dof"), the axis' unit in the ``units`` attribute of its
        coordinate; per-dof coordinates "node", "component", and "dof" labels such as
        "N3 DX"; name ``field``; attrs "analysis", and "units" when every column has the
        same unit, else a per-dof coordinate "units".
    """
    what = f"{type(analysis).__name__}.to_xarray"
    xarray = require("xarray", what)
    pairs = select_dofs(analysis, nodes, components)
    axis, values = analysis.columns(field, pairs, start, end)
    node_names = [node for node, _ in pairs]
    component_names = [component for _, component in pairs]
    coords = {axis_name: (axis_name, axis, {"units": axis_unit}),
              "dof": ("dof", [f"{node} {component}" for node, component in pairs]),
              "node": ("dof", node_names), "component": ("dof", component_names)}
    attrs = {"analysis": analysis.name}
    units = field_units(field, component_names)
    if units is not None and len(set(units)) == 1:
        attrs["units"] = units[0]
    elif units is not None:
        coords["units"] = ("dof", units)
    return xarray.DataArray(values, dims=(axis_name, "dof"), coords=coords, name=field,
                            attrs=attrs)


def events_frame(analysis):
    """The events of a transient analysis as a DataFrame, one row per event in time order.

    Returns
    -------
    pandas.DataFrame
        Columns time (s), kind, link, detail (str), then any further column the events
        table holds (velocity_before, velocity_after, energy_lost of impact links); no row
        when the analysis located no event.
    """
    pandas = require("pandas", f"{type(analysis).__name__}.events_frame")
    table = analysis.events
    table = table[np.argsort(table["time"], kind="stable")]
    frame = pandas.DataFrame({name: table[name] for name in table.dtype.names})
    frame.attrs = {"analysis": analysis.name, "units": {"time": layout.UNITS["time"]}}
    return frame


def link_frame(analysis, name: str, start=None, end=None):
    """The archived series of one link over a time window, as a DataFrame.

    Returns
    -------
    pandas.DataFrame
        Indexed by time (s), one column per series (normal_force, penetration, state, ...).
        attrs: "analysis", "link", "units" of the columns and index whose unit is known,
        and "parameters", the attributes of the link (stiffness, gap, ...).
    """
    pandas = require("pandas", f"{type(analysis).__name__}.link_frame")
    names = analysis.link_series_names(name)
    found = analysis.link(name, start, end)
    frame = pandas.DataFrame({n: found[n] for n in names},
                             index=pandas.Index(found["time"], name="time"))
    units = {n: layout.UNITS[n] for n in ("time", *names) if n in layout.UNITS}
    parameters = {key: value for key, value in found.items() if key != "time" and key not in names}
    frame.attrs = {"analysis": analysis.name, "link": name, "units": units,
                   "parameters": parameters}
    return frame


def modes_frame(analysis):
    """The per-mode arrays of a modal analysis, as a DataFrame indexed by mode (from 1).

    Returns
    -------
    pandas.DataFrame
        One column per array of one value per mode (frequency, omega, generalized_mass,
        damping_ratio, eigenvalue, ...) and three, ``NAME_X``, ``NAME_Y``, ``NAME_Z``, per
        array of one value per mode and direction (participation_factor, effective_mass).
        The shapes are left out. attrs: "analysis", the "units" of the columns that
        have one, and "total_mass" ({"X": kg, "Y": kg, "Z": kg}) when the file has it.
    """
    pandas = require("pandas", f"{type(analysis).__name__}.to_frame")
    count = analysis.mode_count
    # shapes are per dof, total_mass per direction: neither is per mode
    names = [n for n in analysis.arrays if n not in ("shapes", "total_mass")]
    names.sort(key=lambda n: (MODE_ORDER.index(n) if n in MODE_ORDER else len(MODE_ORDER), n))
    columns, units = {}, {}
    for name in names:
        values = analysis[name]
        if values.shape == (count,):
            labels, values = [name], values[:, None]
        elif values.shape == (count, len(_DIRECTIONS)):
            labels = [f"{name}_{direction}" for direction in _DIRECTIONS]
        else:
            continue
        for i, label in enumerate(labels):
            columns[label] = values[:, i]
            if name in MODE_UNITS:
                units[label] = MODE_UNITS[name]
    frame = pandas.DataFrame(columns, index=pandas.RangeIndex(1, count + 1, name="mode"))
    frame.attrs = {"analysis": analysis.name, "units": units}
    if "total_mass" in analysis.arrays:
        frame.attrs["total_mass"] = dict(zip(_DIRECTIONS, analysis["total_mass"].tolist()))
    return frame
