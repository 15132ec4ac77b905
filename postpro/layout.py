"""Names and units of the fem results file (HDF5), shared by the writer and the readers."""

FORMAT = "fem-results"
FORMAT_VERSION = 2
#: what each version added: 2, the mesh cells by type, their names and the node and cell groups
#: (version 1 held only the SEG2 cells, as the datasets mesh/cells and mesh/cell_names)

# root attributes: format, format_version, producer, created, title, status
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"

STUDY_SOURCE = "study/source"
NODE_NAMES = "mesh/node_names"
COORDINATES = "mesh/coordinates"
CELLS = "mesh/cells"              # group: one (m, k) dataset of node indices per cell type
CELL_NAMES = "mesh/cell_names"    # group: one (m,) dataset of cell names per cell type
CELL_TYPES = {"POI1": 1, "SEG2": 2}   # the cell types and their number of nodes
NODE_GROUPS = "mesh/node_groups"  # group: names (g,), offsets (g + 1,), members (node indices)
CELL_GROUPS = "mesh/cell_groups"  # group: names (g,), offsets (g + 1,), members (cell names)
DOF_NODE = "dofs/node"
DOF_COMPONENT = "dofs/component"
DOF_IMPOSED = "dofs/imposed"
ANALYSES = "analyses"
CHECKS = "checks"

#: the nodal fields: the motion relative to the support, and the absolute acceleration (the
#: relative one plus the ground's, when a base acceleration moves the support)
FIELDS = ("displacement", "velocity", "acceleration", "absolute_acceleration")
#: the nodal fields of a random analysis (their PSDs): the same
RANDOM_FIELDS = FIELDS
#: the motion relative to the supports' pseudo-static motion (analyses that drive supports)
RELATIVE_FIELDS = ("relative_displacement", "relative_velocity", "relative_acceleration")
#: every nodal field a transient analysis may archive
NODAL_FIELDS = FIELDS + RELATIVE_FIELDS
GENERALIZED = {"displacement": "generalized/q", "velocity": "generalized/qdot",
               "acceleration": "generalized/qddot"}

UNITS = {
    "time": "s",
    "displacement": "m",
    "velocity": "m/s",
    "acceleration": "m/s^2",
    "absolute_acceleration": "m/s^2",
    "relative_displacement": "m",
    "relative_velocity": "m/s",
    "relative_acceleration": "m/s^2",
    "frequency": "Hz",
    "omega": "rad/s",
    "normal_force": "N",
    "tangential_force": "N",
    "sliding_velocity": "m/s",
    "penetration": "m",
    "kinetic": "J",
    "potential": "J",
    "dissipated": "J",
    "external_work": "J",
    "link_energy": "J",
    "coordinates": "m",
    "gap": "m",
    "state": "1",
    "participation_factor": "kg^0.5",
    "effective_mass": "kg",
    "total_mass": "kg",
    "generalized_mass": "kg",
    "damping_ratio": "1",
    "damping_ratio_damped": "1",
    "damped_frequency": "Hz",
    "eigenvalue": "rad/s",
    "element_force": "N",
    "reaction": "N",
}

#: rotation components, and the units of the nodal fields along them
ROTATIONS = ("DRX", "DRY", "DRZ")
ROTATION_UNITS = {"displacement": "rad", "velocity": "rad/s", "acceleration": "rad/s^2",
                  "absolute_acceleration": "rad/s^2",
                  "relative_displacement": "rad", "relative_velocity": "rad/s",
                  "relative_acceleration": "rad/s^2"}


def unit_of(quantity: str, component: str | None = None) -> str:
    """The unit of a quantity (a field, a series, an array of a modal analysis), along a
    component for the nodal fields (rotations: rad, rad/s, rad/s^2); "-" if it has none."""
    if component in ROTATIONS and quantity in ROTATION_UNITS:
        return ROTATION_UNITS[quantity]
    return UNITS.get(quantity, "-")


def column_units_list(units) -> "str | list[str]":
    """A ``units`` attribute from the unit of each column: one string if they agree."""
    units = list(units)
    return units[0] if units and all(u == units[0] for u in units) else units


def column_units(quantity: str, components) -> "str | list[str]":
    """The ``units`` attribute of a (rows, dofs) dataset whose columns are along
    ``components``: one string when every column has the same unit, else one per column."""
    units = [unit_of(quantity, c) for c in components]
    if not units or all(u == units[0] for u in units):
        return units[0] if units else UNITS.get(quantity, "-")
    return units

# analysis attributes
ANALYSIS_ATTRS = ("kind", "basis", "scheme", "status", "message", "wall_time_s", "steps",
                  "rejected_steps", "parameters")

# columns of the /checks compound table
CHECK_COLUMNS = ("analysis", "quantity", "node", "component", "at", "reference", "computed",
                 "tolerance", "absolute", "passed")


def psd_unit(unit: str) -> str:
    """The unit of the power spectral density of a quantity in ``unit``: m -> m^2/Hz,
    m/s -> (m/s)^2/Hz, N.m -> (N.m)^2/Hz."""
    return f"({unit})^2/Hz" if any(c in unit for c in "/.^ ") else f"{unit}^2/Hz"
