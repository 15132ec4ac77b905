"""The model: dof numbering, discrete elements, constraints, loads and initial state."""

from fem.model.build import Model, build_mesh, build_model
from fem.model.dofs import DofMap

__all__ = ["Model", "DofMap", "build_mesh", "build_model"]
