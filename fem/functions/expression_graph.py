"""Expression graphs: operation nodes with constant folding, their numpy kernels and the
evaluation program a graph is flattened into.
"""

from __future__ import annotations

import numpy as np


def _cmp01(ufunc):
    def compare(a, b):
        return np.multiply(ufunc(a, b), 1.0)
    return compare


# Numpy kernel of each operation; arguments are scalars or arrays that broadcast.
_KERNELS = {
    "neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.true_divide, "pow": np.power, "mod": np.mod,
    "lt": _cmp01(np.less), "le": _cmp01(np.less_equal), "gt": _cmp01(np.greater),
    "ge": _cmp01(np.greater_equal), "eq": _cmp01(np.equal), "ne": _cmp01(np.not_equal),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp": np.exp, "log": np.log, "log10": np.log10, "sqrt": np.sqrt, "abs": np.abs,
    "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "heaviside": lambda x: np.heaviside(x, 1.0),
    "min": np.minimum, "max": np.maximum,
    "where": lambda c, a, b: np.where(c != 0, a, b),
}


class _Node:
    """One operation of an expression graph; nodes are shared, never mutated."""

    __slots__ = ("op", "args", "value")

    def __init__(self, op: str, args: tuple = (), value: float | None = None):
        self.op = op
        self.args = args
        self.value = value

    def is_const(self, value: float | None = None) -> bool:
        return self.op == "const" and (value is None or self.value == value)


_T = _Node("t")


def _const(value) -> _Node:
    return _Node("const", (), float(value))


def _fold(op: str, args: tuple) -> _Node | None:
    """The constant result of ``op`` when all its arguments are constants."""
    if all(a.op == "const" for a in args):
        with np.errstate(all="ignore"):
            return _const(_KERNELS[op](*(np.float64(a.value) for a in args)))
    return None


def _make(op: str, *args: _Node) -> _Node:
    """A node with constant folding only: user expressions keep their exact semantics."""
    return _fold(op, args) or _Node(op, args)


def _topological(root: _Node) -> list[_Node]:
    """Nodes reachable from ``root``, each once, arguments before their users."""
    order: list[_Node] = []
    done: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in done:
            continue
        if ready:
            done.add(id(node))
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if id(a) not in done)
    return order


class _Program:
    """A node graph flattened into steps evaluated in order, each kept only while needed."""

    def __init__(self, root: _Node):
        nodes = _topological(root)
        position = {id(n): i for i, n in enumerate(nodes)}
        last_use = {}
        for i, n in enumerate(nodes):
            for a in n.args:
                last_use[position[id(a)]] = i
        release: list[list[int]] = [[] for _ in nodes]
        for j, i in last_use.items():
            release[i].append(j)
        self.steps = [(n.op, n.value, _KERNELS.get(n.op),
                       tuple(position[id(a)] for a in n.args), tuple(release[i]))
                      for i, n in enumerate(nodes)]

    def run(self, t: np.ndarray):
        values: list = [None] * len(self.steps)
        for i, (op, value, kernel, args, release) in enumerate(self.steps):
            if op == "const":
                values[i] = value
            elif op == "t":
                values[i] = t
            else:
                values[i] = kernel(*(values[j] for j in args))
            for j in release:
                values[j] = None
        return values[-1]
