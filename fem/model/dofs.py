"""Dof numbering: dof = node_index * n_components + position of the component in the model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.study.specs import COMPONENTS


@dataclass(frozen=True)
class DofMap:
    """Node-major dof numbering for the components of the model (a subset of DX ... DRZ)."""

    node_count: int
    components: tuple[str, ...]

    @property
    def ncomp(self) -> int:
        return len(self.components)

    @property
    def size(self) -> int:
        return self.node_count * self.ncomp

    def position(self, component: str) -> int:
        """Position of a component in the model, -1 when the model does not have it."""
        return self.components.index(component) if component in self.components else -1

    def dof(self, nodes, component: str) -> np.ndarray:
        """Dof numbers of ``component`` at node indices ``nodes`` (-1 if absent from the model)."""
        pos = self.position(component)
        nodes = np.asarray(nodes, dtype=np.int64)
        if pos < 0:
            return np.full(nodes.shape, -1, dtype=np.int64)
        return nodes * self.ncomp + pos

    @property
    def dof_node(self) -> np.ndarray:
        return np.repeat(np.arange(self.node_count, dtype=np.int64), self.ncomp)

    @property
    def dof_component(self) -> np.ndarray:
        return np.tile(np.array(self.components, dtype=object), self.node_count)

    def name(self, dof: int, node_names) -> str:
        return f"node {node_names[dof // self.ncomp]} {self.components[dof % self.ncomp]}"


def component_positions(dofmap: DofMap, block: tuple[str, ...]) -> np.ndarray:
    """Positions in the model of each component of ``block`` (-1 where absent)."""
    return np.array([dofmap.position(c) for c in block], dtype=np.int64)


__all__ = ["DofMap", "component_positions", "COMPONENTS"]


@dataclass
class State:
    """Displacement, velocity, acceleration on the free dofs (m, m/s, m/s^2)."""
    u: np.ndarray
    v: np.ndarray
    a: np.ndarray

    def copy(self) -> "State":
        return State(self.u.copy(), self.v.copy(), None if self.a is None else self.a.copy())
