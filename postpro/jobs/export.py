"""``fem post export``: nodal vector fields over time for ParaView, as XDMF + HDF5 or VTU + PVD.

The mesh is the nodes of the results file, as a Polyvertex (one vertex cell per node), or
its SEG2 cells as 2-node Polylines when the file holds ``/mesh/cells``. Each field written is
a 3-component nodal vector (DX, DY, DZ; zero where a node has no such dof), one per
archived instant kept.
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
                   help="displacement, velocity or acceleration; repeatable (default: "
                        "displacement)")
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
        fields = common.resolve_fields(analysis, args.field)
        common.window(analysis, args.start, args.end)
        suffix = FORMATS[args.format]
        output = args.output or f"{Path(args.results).stem}_{analysis.name}{suffix}"
        output = common.checked_output(output, (suffix,))
        write = export_xdmf if args.format == "xdmf" else export_vtu
        count = write(results, analysis, output, fields, args.every, args.start, args.end)
    print(f"wrote {output}: {count} instants, {len(results.node_names)} nodes")
    return common.EXIT_OK


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


def vector_blocks(results, analysis, field, every=1, start=None, end=None):
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
    # a block of k instants holds k n 3 doubles: keep it near BLOCK_ROWS numbers
    rows = max(every, (BLOCK_ROWS // max(1, n)) // every * every)
    for t, values in analysis.blocks(field, pairs, start, end, rows=rows, step=every):
        vectors = np.zeros((len(t), n, 3))
        vectors[:, nodes, components] = values
        yield t, vectors


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

    The HDF5 file holds ``/mesh/coordinates`` (n, 3) in m, ``/mesh/vertices`` (n,) or
    ``/mesh/lines`` (m, 2), ``/time`` (k,) in s and ``/<field>/<i>`` (n, 3) for each instant
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
    cells = results.cells
    times = []
    try:
        with h5py.File(data, "w") as store:
            store["mesh/coordinates"] = coordinates
            if cells is None:
                store["mesh/vertices"] = np.arange(n, dtype=np.int64)
            else:
                store["mesh/lines"] = cells
            for field in fields:
                index = 0
                for t, vectors in vector_blocks(results, analysis, field, every, start, end):
                    for row in range(len(t)):
                        store[f"{field}/{index + row:06d}"] = vectors[row]
                    index += len(t)
                    if field == fields[0]:
                        times.extend(t.tolist())
            store["time"] = np.asarray(times, float)
    except OSError as exc:
        raise PostproError(f"cannot write '{data}': {exc}") from exc
    name = data.name
    root = ET.Element("Xdmf", Version="3.0")
    domain = ET.SubElement(root, "Domain")
    series = ET.SubElement(domain, "Grid", Name=analysis.name, GridType="Collection",
                           CollectionType="Temporal")
    for index, time in enumerate(times):
        grid = ET.SubElement(series, "Grid", Name=f"{analysis.name}_{index:06d}",
                             GridType="Uniform")
        ET.SubElement(grid, "Time", Value=repr(float(time)))
        if cells is None:
            topology = ET.SubElement(grid, "Topology", TopologyType="Polyvertex",
                                     NumberOfElements=str(n), NodesPerElement="1")
            _data_item(topology, (n,), "Int", 8, f"{name}:/mesh/vertices")
        else:
            topology = ET.SubElement(grid, "Topology", TopologyType="Polyline",
                                     NumberOfElements=str(len(cells)), NodesPerElement="2")
            _data_item(topology, cells.shape, "Int", 8, f"{name}:/mesh/lines")
        geometry = ET.SubElement(grid, "Geometry", GeometryType="XYZ")
        _data_item(geometry, (n, 3), "Float", 8, f"{name}:/mesh/coordinates")
        for field in fields:
            attribute = ET.SubElement(grid, "Attribute", Name=field, AttributeType="Vector",
                                      Center="Node")
            _data_item(attribute, (n, 3), "Float", 8, f"{name}:/{field}/{index:06d}")
    ET.indent(root)
    try:
        ET.ElementTree(root).write(output, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise PostproError(f"cannot write '{output}': {exc.strerror or exc}") from exc
    return len(times)


def export_vtu(results, analysis, output, fields, every=1, start=None, end=None) -> int:
    """Write one VTU file per instant kept (``<stem>_<i>.vtu``) and the ``output`` .pvd.

    Returns
    -------
    int
        Number of instants written.
    """
    import meshio

    output = Path(output)
    coordinates = np.asarray(results.coordinates, float)
    n = len(coordinates)
    cells = [("vertex", np.arange(n, dtype=np.int64)[:, None])]
    if results.cells is not None:
        cells.append(("line", results.cells))
    # every field's blocks hold the same instants: walk them together
    streams = [vector_blocks(results, analysis, field, every, start, end) for field in fields]
    entries = []
    for blocks in zip(*streams):
        t = blocks[0][0]
        for row in range(len(t)):
            index = len(entries)
            path = output.with_name(f"{output.stem}_{index:06d}.vtu")
            _separate_from_results(results, path)
            mesh = meshio.Mesh(coordinates, cells,
                               point_data={field: block[1][row]
                                           for field, block in zip(fields, blocks)})
            try:
                meshio.write(path, mesh)
            except OSError as exc:
                raise PostproError(f"cannot write '{path}': {exc.strerror or exc}") from exc
            entries.append((float(t[row]), path.name))
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
