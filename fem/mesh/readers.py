"""Mesh readers registered by file suffix behind one ``read(path)``."""

from __future__ import annotations

from pathlib import Path

from fem.errors import MeshError
from fem.mesh import aster, meshio_adapter
from fem.mesh.core import Mesh

#: Lower-case file suffix -> reader taking a Path and returning a Mesh.
READERS = {
    ".mail": aster.read,
}
#: Reader of every suffix not in ``READERS``.
DEFAULT_READER = meshio_adapter.read


def read(path) -> Mesh:
    """Read a mesh file: code_aster ``.mail`` or any format meshio reads.

    Parameters
    ----------
    path : str or Path
        Mesh file; its suffix (case-insensitive) chooses the reader.

    Returns
    -------
    Mesh
        ``source`` is the file path.

    Raises
    ------
    MeshError
        When the file is missing or unreadable; the message names the file.
    """
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"mesh file not found: {path}")
    reader = READERS.get(path.suffix.lower(), DEFAULT_READER)
    return reader(path)
