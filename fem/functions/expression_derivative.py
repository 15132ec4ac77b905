"""Symbolic derivative of an expression graph, simplified by algebraic identities."""

from __future__ import annotations

import math

from fem.functions.expression_graph import _const, _fold, _Node, _topological

_ZERO, _ONE_NODE, _TWO = _const(0.0), _const(1.0), _const(2.0)


def _simple(op: str, *args: _Node) -> _Node:
    """A node with constant folding and algebraic identities, for derivative graphs."""
    folded = _fold(op, args)
    if folded is not None:
        return folded
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op == "add":
        if a.is_const(0.0):
            return b
        if b.is_const(0.0):
            return a
    elif op == "sub":
        if b.is_const(0.0):
            return a
        if a.is_const(0.0):
            return _simple("neg", b)
    elif op == "mul":
        if a.is_const(0.0) or b.is_const(0.0):
            return _ZERO
        if a.is_const(1.0):
            return b
        if b.is_const(1.0):
            return a
        if a.is_const(-1.0):
            return _simple("neg", b)
        if b.is_const(-1.0):
            return _simple("neg", a)
    elif op == "div":
        if a.is_const(0.0):
            return _ZERO
        if b.is_const(1.0):
            return a
    elif op == "neg":
        if a.op == "neg":
            return a.args[0]
    elif op == "pow":
        if b.is_const(1.0):
            return a
        if b.is_const(0.0):
            return _ONE_NODE
    elif op == "where":
        x, y = args[1], args[2]
        if a.op == "const":
            return x if a.value != 0.0 else y
        if x is y or (x.op == "const" and y.op == "const" and x.value == y.value):
            return x
    return _Node(op, args)


def _derive(node: _Node, d) -> _Node:
    """Derivative node of ``node`` given ``d(child)``, the derivative nodes of its arguments."""
    op, args = node.op, node.args
    if op == "const":
        return _ZERO
    if op == "t":
        return _ONE_NODE
    da = [d(a) for a in args]
    if all(x.is_const(0.0) for x in da):
        return _ZERO
    S = _simple
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op == "neg":
        return S("neg", da[0])
    if op in ("add", "sub"):
        return S(op, da[0], da[1])
    if op == "mul":
        return S("add", S("mul", da[0], b), S("mul", a, da[1]))
    if op == "div":
        # (a/b)' = (a' - (a/b) b') / b reuses the quotient node.
        return S("div", S("sub", da[0], S("mul", node, da[1])), b)
    if op == "pow":
        if b.op == "const":
            return S("mul", S("mul", b, S("pow", a, _const(b.value - 1.0))), da[0])
        if a.op == "const":
            return S("mul", S("mul", node, S("log", a)), da[1])
        return S("mul", node, S("add", S("mul", da[1], S("log", a)),
                                S("div", S("mul", b, da[0]), a)))
    if op == "mod":
        # a mod b = a - b floor(a/b) and floor is flat almost everywhere.
        return S("sub", da[0], S("mul", da[1], S("floor", S("div", a, b))))
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "sign", "floor", "ceil", "heaviside"):
        return _ZERO
    if op == "sin":
        return S("mul", S("cos", a), da[0])
    if op == "cos":
        return S("neg", S("mul", S("sin", a), da[0]))
    if op == "tan":
        return S("mul", S("add", _ONE_NODE, S("mul", node, node)), da[0])
    if op in ("asin", "acos"):
        g = S("div", da[0], S("sqrt", S("sub", _ONE_NODE, S("mul", a, a))))
        return g if op == "asin" else S("neg", g)
    if op == "atan":
        return S("div", da[0], S("add", _ONE_NODE, S("mul", a, a)))
    if op == "atan2":
        y, x = a, b
        return S("div", S("sub", S("mul", x, da[0]), S("mul", y, da[1])),
                 S("add", S("mul", x, x), S("mul", y, y)))
    if op == "sinh":
        return S("mul", S("cosh", a), da[0])
    if op == "cosh":
        return S("mul", S("sinh", a), da[0])
    if op == "tanh":
        return S("mul", S("sub", _ONE_NODE, S("mul", node, node)), da[0])
    if op == "exp":
        return S("mul", node, da[0])
    if op == "log":
        return S("div", da[0], a)
    if op == "log10":
        return S("div", da[0], S("mul", a, _const(math.log(10.0))))
    if op == "sqrt":
        return S("div", da[0], S("mul", _TWO, node))
    if op == "abs":
        return S("mul", S("sign", a), da[0])
    if op == "where":
        return S("where", a, da[1], da[2])
    if op == "min":
        return S("where", S("le", a, b), da[0], da[1])
    if op == "max":
        return S("where", S("ge", a, b), da[0], da[1])
    raise AssertionError(f"no derivative rule for {op}")


def _derivative_graph(root: _Node) -> _Node:
    derivatives: dict[int, _Node] = {}
    for node in _topological(root):
        derivatives[id(node)] = _derive(node, lambda a: derivatives[id(a)])
    return derivatives[id(root)]
