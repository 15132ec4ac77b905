"""``fem post export``: fields over time for ParaView, as XDMF + HDF5 or VTU + PVD.

The cells drawn are the SEG2 cells of the results file as 2-node Polylines; a mesh without
SEG2 cells is drawn as its POI1 cells (one vertex each), or as its nodes. Each nodal field
written is a 3-component vector (DX, DY, DZ; zero where a node has no such dof); element
forces are cell data, one scalar per component (``element_force_N`` ...), NaN on cells that
carry no spring or damper. One set per archived instant kept.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np

from postpro.errors import PostproError
from postpro.jobs import common
from postpro.results import BLOCK_ROWS

TRANSLATIONS = ("DX", "DY", "DZ")
CELL_FIELDS = ("element_force",)
FORMATS = {"xdmf": ".xmf", "vtu": ".pvd"}


def add_parser(subparsers):
    p = subparsers.add_parser(
        "export", help="nodal vector fields over time for ParaView (XDMF + HDF5, or VTU + PVD)",
        description="Write the mesh nodes (and SEG2 cells if the file has them) with one "
                    "3-component vector per field and archived instant. Open the .xmf (or "
                    ".pvd) file in ParaView.")
    common.add_results(p)
    common.add_analysis(p)
    p.add_argument("--field", "-f", action="append", default=[], metavar="F",
                   help="displacement, velocity, acceleration (node vectors) or element_force "
                        "(cell data); repeatable (default: displacement, and element_force "
                        "when archived)")
    common.add_window(p)
    p.add_argument("--every", type=common.positive_int, default=1, metavar="N",
                   help="one archived instant in N (default: all)")
    p.add_argument("--format", choices=tuple(FORMATS), default="xdmf",
                   help="xdmf: one .xmf and one .h5 (default); vtu: one .vtu per instant "
                        "and a .pvd collection")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="the .xmf or .pvd file (default: RESULTS-stem_ANALYSIS.xmf or .pvd)")
    p.set_defaults(run=run)


def run(args) -> int:
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                           args.allow_incomplete)
        fields = _fields(analysis, args.field)
        common.window(analysis, args.start, args.end)
        suffix = FORMATS[args.format]
        output = args.output or f"{Path(args.results).stem}_{analysis.name}{suffix}"
        output = common.checked_output(output, (suffix,))
        write = export_xdmf if args.format == "xdmf" else export_vtu
        count = write(results, analysis, output, fields, args.every, args.start, args.end)
    print(f"wrote {output}: {count} instants, {len(results.node_names)} nodes")
    return common.EXIT_OK


def _fields(analysis, asked) -> list[str]:
    """Nodal fields and element forces asked for; by default displacement, plus the element
    forces if the analysis archived them."""
    cell = [f for f in asked if f in CELL_FIELDS]
    nodal_asked = [f for f in asked if f not in CELL_FIELDS]
    nodal = common.resolve_fields(analysis, nodal_asked) if nodal_asked or not asked else []
    if not asked and analysis.elements:
        cell = ["element_force"]
    for field in cell:
        if not analysis.elements:
            raise PostproError(f"analysis '{analysis.name}' did not archive '{field}' (not in "
                               f"its fields, or a model without springs and dampers on cells)")
    return nodal + cell


def topology(results):
    """The cells to draw: ("line", SEG2 connectivity (m, 2), names) when the file has SEG2
    cells, else ("vertex", POI1 connectivity (m, 1), names), else every node as a vertex
    (names None)."""
    blocks = results.cell_blocks
    for kind, name in (("SEG2", "line"), ("POI1", "vertex")):
        if kind in blocks and len(blocks[kind]):
            return name, blocks[kind], results.cell_names(kind)
    n = len(results.node_names)
    return "vertex", np.arange(n, dtype=np.int64)[:, None], None


def cell_blocks(analysis, names, every=1, start=None, end=None, rows=BLOCK_ROWS):
    """Element forces on the cells ``names`` at the instants kept, block by block.

    Yields
    ------
    t : numpy.ndarray, shape (k,)
    values : dict component -> (k, m) array, NaN on cells without an element force
    """
    components = analysis.element_components
    archived = set(analysis.elements)
    on = [i for i, name in enumerate(names or ()) if name in archived]
    pairs = [(names[i], c) for i in on for c in components]
    m = len(names or ())
    if not pairs:
        raise PostproError(f"{analysis.name}: none of the cells drawn carries an element force "
                           f"(elements: {', '.join(analysis.elements[:5])} ...)")
    for t, values in analysis.blocks("element_force", pairs, start, end, rows=rows, step=every):
        values = values.reshape(len(t), len(on), len(components))
        out = {}
        for j, component in enumerate(components):
            full = np.full((len(t), m), np.nan)
            full[:, on] = values[:, :, j]
            out[component] = full
        yield t, out


def _named(field, blocks):
    """(t, {name: values}) from the blocks of one field: a nodal field keeps its name, the
    element forces are named per component."""
    for t, values in blocks:
        yield t, ({f"{field}_{c}": v for c, v in values.items()} if isinstance(values, dict)
                  else {field: values})


def _translation_columns(results):
    """Dof pairs DX/DY/DZ and, for each, its node index and component index (0, 1, 2)."""
    pairs, nodes, components = [], [], []
    for node, component in zip(results.dof_node, results.dof_component):
        if str(component) in TRANSLATIONS:
            pairs.append((str(results.node_names[node]), str(component)))
            nodes.append(int(node))
            components.append(TRANSLATIONS.index(str(component)))
    if not pairs:
        raise PostproError(f"'{results.path}' has no DX, DY or DZ dof to export")
    return pairs, np.array(nodes), np.array(components)


def _rows(results, every) -> int:
    """Rows per block: a block of k instants holds k n 3 doubles, kept near BLOCK_ROWS."""
    n = len(results.node_names)
    return max(every, (BLOCK_ROWS // max(1, n)) // every * every)


def vector_blocks(results, analysis, field, every=1, start=None, end=None, rows=None):
    """Nodal vectors of a field at the instants kept, block by block.

    Yields
    ------
    t : numpy.ndarray, shape (k,)
        Instants in s.
    vectors : numpy.ndarray, shape (k, n, 3)
        DX, DY, DZ of every node, in the unit of the field; zero where there is no dof.
    """
    pairs, nodes, components = _translation_columns(results)
    n = len(results.node_names)
    rows = rows or _rows(results, every)
    for t, values in analysis.blocks(field, pairs, start, end, rows=rows, step=every):
        vectors = np.zeros((len(t), n, 3))
        vectors[:, nodes, components] = values
        yield t, vectors


def instants(results, analysis, fields, names, every=1, start=None, end=None):
    """Every field at the instants kept: yields (t, {name: array}) per instant, a nodal field
    as (n, 3) vectors, element forces as one (m,) array per component named
    ``element_force_<component>``."""
    rows = _rows(results, every)
    streams = [_named(field, cell_blocks(analysis, names, every, start, end, rows))
               if field in CELL_FIELDS else
               _named(field, vector_blocks(results, analysis, field, every, start, end, rows))
               for field in fields]
    # every field has the same archive rows: walk them together
    for blocks in zip(*streams):
        t = blocks[0][0]
        merged = {}
        for _, values in blocks:
            merged.update(values)
        for row in range(len(t)):
            yield float(t[row]), {name: values[row] for name, values in merged.items()}


def _separate_from_results(results, path: Path):
    source = Path(results.path)
    if path.exists() and source.exists() and path.resolve() == source.resolve():
        raise PostproError(f"output '{path}' would overwrite the results file; choose another "
                           "--output")


def _data_item(parent, dimensions, number_type, precision, reference):
    item = ET.SubElement(parent, "DataItem", Dimensions=" ".join(map(str, dimensions)),
                         NumberType=number_type, Precision=str(precision), Format="HDF")
    item.text = reference
    return item


def export_xdmf(results, analysis, output, fields, every=1, start=None, end=None) -> int:
    """Write ``output`` (.xmf) and the HDF5 file it references (same name, suffix .h5).

    The HDF5 file holds ``/mesh/coordinates`` (n, 3) in m, ``/mesh/lines`` (m, 2) or
    ``/mesh/vertices`` (m,), ``/time`` (k,) in s, ``/<field>/<i>`` (n, 3) for each nodal field
    and ``/element_force_<c>/<i>`` (m,) for each element force component, at each instant
    ``i`` kept. The .xmf file is a temporal collection of uniform grids referencing them.

    Returns
    -------
    int
        Number of instants written.
    """
    output = Path(output)
    data = output.with_suffix(".h5")
    _separate_from_results(results, data)
    coordinates = np.asarray(results.coordinates, float)
    n = len(coordinates)
    kind, cells, names = topology(results)
    times, shapes = [], {}
    try:
        with h5py.File(data, "w") as store:
            store["mesh/coordinates"] = coordinates
            store["mesh/lines" if kind == "line" else "mesh/vertices"] = \
                cells if kind == "line" else cells[:, 0]
            for index, (t, values) in enumerate(instants(results, analysis, fields, names,
                                                         every, start, end)):
                for name, array in values.items():
                    store[f"{name}/{index:06d}"] = array
                    shapes[name] = array.shape
                times.append(t)
            store["time"] = np.asarray(times, float)
    except OSError as exc:
        raise PostproError(f"cannot write '{data}': {exc}") from exc
    name = data.name
    root = ET.Element("Xdmf", Version="3.0")
    domain = ET.SubElement(root, "Domain")
    series = ET.SubElement(domain, "Grid", Name=analysis.name, GridType="Collection",
                           CollectionType="Temporal")
    m = len(cells)
    for index, time in enumerate(times):
        grid = ET.SubElement(series, "Grid", Name=f"{analysis.name}_{index:06d}",
                             GridType="Uniform")
        ET.SubElement(grid, "Time", Value=repr(float(time)))
        if kind == "vertex":
            topology_ = ET.SubElement(grid, "Topology", TopologyType="Polyvertex",
                                      NumberOfElements=str(m), NodesPerElement="1")
            _data_item(topology_, (m,), "Int", 8, f"{name}:/mesh/vertices")
        else:
            topology_ = ET.SubElement(grid, "Topology", TopologyType="Polyline",
                                      NumberOfElements=str(m), NodesPerElement="2")
            _data_item(topology_, cells.shape, "Int", 8, f"{name}:/mesh/lines")
        geometry = ET.SubElement(grid, "Geometry", GeometryType="XYZ")
        _data_item(geometry, (n, 3), "Float", 8, f"{name}:/mesh/coordinates")
        for field, shape in shapes.items():
            vector = len(shape) == 2
            attribute = ET.SubElement(grid, "Attribute", Name=field,
                                      AttributeType="Vector" if vector else "Scalar",
                                      Center="Node" if vector else "Cell")
            _data_item(attribute, shape, "Float", 8, f"{name}:/{field}/{index:06d}")
    ET.indent(root)
    try:
        ET.ElementTree(root).write(output, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
    return len(times)


def export_vtu(results, analysis, output, fields, every=1, start=None, end=None) -> int:
    """Write one VTU file per instant kept (``<stem>_<i>.vtu``) and the ``output`` .pvd;
    cells and data as in :func:`export_xdmf`.

    Returns
    -------
    int
        Number of instants written.
    """
    import meshio

    output = Path(output)
    coordinates = np.asarray(results.coordinates, float)
    kind, cells, names = topology(results)
    entries = []
    for index, (t, values) in enumerate(instants(results, analysis, fields, names, every,
                                                  start, end)):
        path = output.with_name(f"{output.stem}_{index:06d}.vtu")
        _separate_from_results(results, path)
        mesh = meshio.Mesh(coordinates, [(kind, cells)],
                           point_data={k: v for k, v in values.items() if v.ndim == 2},
                           cell_data={k: [v] for k, v in values.items() if v.ndim == 1})
        try:
            meshio.write(path, mesh)
        except OSError as exc:
            raise PostproError(f"cannot write '{path}': {exc.strerror or exc}") from exc
        entries.append((t, path.name))
    root = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
    collection = ET.SubElement(root, "Collection")
    for time, name in entries:
        ET.SubElement(collection, "DataSet", timestep=repr(time), group="", part="0", file=name)
    ET.indent(root)
    try:
        ET.ElementTree(root).write(output, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
    return len(entries)
