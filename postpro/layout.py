"""Names and units of the fem results file (HDF5), shared by the writer and the readers."""

FORMAT = "fem-results"
FORMAT_VERSION = 1

# root attributes: format, format_version, producer, created, title, status
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"

STUDY_SOURCE = "study/source"
NODE_NAMES = "mesh/node_names"
COORDINATES = "mesh/coordinates"
DOF_NODE = "dofs/node"
DOF_COMPONENT = "dofs/component"
DOF_IMPOSED = "dofs/imposed"
ANALYSES = "analyses"
CHECKS = "checks"

FIELDS = ("displacement", "velocity", "acceleration")
GENERALIZED = {"displacement": "generalized/q", "velocity": "generalized/qdot",
               "acceleration": "generalized/qddot"}

UNITS = {
    "time": "s",
    "displacement": "m",
    "velocity": "m/s",
    "acceleration": "m/s^2",
    "frequency": "Hz",
    "omega": "rad/s",
    "normal_force": "N",
    "tangential_force": "N",
    "penetration": "m",
    "kinetic": "J",
    "potential": "J",
    "dissipated": "J",
    "external_work": "J",
    "link_energy": "J",
    "coordinates": "m",
}

# analysis attributes
ANALYSIS_ATTRS = ("kind", "basis", "scheme", "status", "message", "wall_time_s", "steps",
                  "rejected_steps", "parameters")

# columns of the /checks compound table
CHECK_COLUMNS = ("analysis", "quantity", "node", "component", "at", "reference", "computed",
                 "tolerance", "absolute", "passed")
