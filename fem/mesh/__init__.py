"""Meshes: the Mesh data class and the readers behind one ``read(path)``."""

from fem.mesh.core import CELL_TYPE_CODES, CELL_TYPE_NAMES, POI1, SEG2, Mesh
from fem.mesh.readers import read

__all__ = ["Mesh", "read", "POI1", "SEG2", "CELL_TYPE_NAMES", "CELL_TYPE_CODES"]
