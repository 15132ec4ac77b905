"""A compiled interpreter of expressions of two variables u and v, with their derivatives:
the force functions' laws (``fem.laws.force_function``) keep an expression as a postfix
program in their parameter row, so that no study compiles code of its own.

A program (``program``) lists its operands before their operation: a constant as CONST and its
value, the variables as VAR_U and VAR_V, an operation of ``fem.functions.expression`` by its
opcode. ``run`` evaluates it on a stack held in the contact's value row, each level a value
and its derivatives with respect to u and v (forward differentiation: the exact tangent for
the implicit schemes' Newton iteration). A division by zero or a logarithm of zero gives an
infinite or NaN value, never an exception (the run then stops on a force that is not finite).
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: the opcodes of a program (``program``): a constant (its value in the next slot), the
#: variables, the binary, unary and ternary operations of ``fem.functions.expression``
CONST, VAR_U, VAR_V = 1, 2, 3
BINARY = {"add": 10, "sub": 11, "mul": 12, "div": 13, "pow": 14, "mod": 15, "lt": 16,
          "le": 17, "gt": 18, "ge": 19, "eq": 20, "ne": 21, "atan2": 22, "min": 23, "max": 24}
UNARY = {"neg": 30, "sin": 31, "cos": 32, "tan": 33, "asin": 34, "acos": 35, "atan": 36,
         "sinh": 37, "cosh": 38, "tanh": 39, "exp": 40, "log": 41, "log10": 42, "sqrt": 43,
         "abs": 44, "sign": 45, "floor": 46, "ceil": 47, "heaviside": 48}
WHERE = 50
FIRST_UNARY = 30
LN10 = math.log(10.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _div(a, b):
    """a / b as numpy gives it: +-inf, or NaN for 0 / 0, where b = 0."""
    if b == 0.0:
        if a == 0.0 or a != a:
            return np.nan
        return math.copysign(np.inf, a) * math.copysign(1.0, b)
    return a / b


@numba.njit(cache=True, nogil=True, inline="always")
def _pow(a, b):
    """a ** b as numpy gives it for floats: NaN for a negative base and an exponent that is
    not an integer, inf for 0 to a negative power."""
    if a < 0.0 and b != np.floor(b):
        return np.nan
    if a == 0.0 and b < 0.0:
        return np.inf
    return a ** b


@numba.njit(cache=True, nogil=True)
def _binary(op, a, au, av, b, bu, bv):
    """(r, dr/du, dr/dv) of the binary operation op on (a, da) and (b, db)."""
    if op == 10:
        return a + b, au + bu, av + bv
    if op == 11:
        return a - b, au - bu, av - bv
    if op == 12:
        return a * b, au * b + a * bu, av * b + a * bv
    if op == 13:
        q = _div(a, b)
        return q, _div(au - q * bu, b), _div(av - q * bv, b)
    if op == 14:
        r = _pow(a, b)
        if bu == 0.0 and bv == 0.0:
            g = 0.0 if b == 0.0 else b * _pow(a, b - 1.0)
            return r, g * au if au != 0.0 else 0.0, g * av if av != 0.0 else 0.0
        la = math.log(a) if a > 0.0 else (-np.inf if a == 0.0 else np.nan)
        return r, r * (bu * la + _div(b * au, a)), r * (bv * la + _div(b * av, a))
    if op == 15:
        q = np.floor(_div(a, b))
        r = a - b * q if b != 0.0 else np.nan
        return r, au - bu * q, av - bv * q
    if op <= 21:
        if op == 16:
            t = a < b
        elif op == 17:
            t = a <= b
        elif op == 18:
            t = a > b
        elif op == 19:
            t = a >= b
        elif op == 20:
            t = a == b
        else:
            t = a != b
        return 1.0 if t else 0.0, 0.0, 0.0
    if op == 22:
        s = a * a + b * b
        return math.atan2(a, b), _div(b * au - a * bu, s), _div(b * av - a * bv, s)
    if a != a or b != b:
        return np.nan, np.nan, np.nan
    if op == 23:
        return (a, au, av) if a <= b else (b, bu, bv)
    return (a, au, av) if a >= b else (b, bu, bv)


@numba.njit(cache=True, nogil=True)
def _unary(op, a, au, av):
    """(r, dr/du, dr/dv) of the unary operation op on (a, da)."""
    if op == 30:
        return -a, -au, -av
    g = 0.0
    if op == 31:
        r, g = math.sin(a), math.cos(a)
    elif op == 32:
        r, g = math.cos(a), -math.sin(a)
    elif op == 33:
        r = math.tan(a)
        g = 1.0 + r * r
    elif op == 34 or op == 35:
        if abs(a) > 1.0:
            return np.nan, np.nan, np.nan
        r = math.asin(a) if op == 34 else math.acos(a)
        g = _div(1.0, math.sqrt(1.0 - a * a))
        if op == 35:
            g = -g
    elif op == 36:
        r, g = math.atan(a), 1.0 / (1.0 + a * a)
    elif op == 37:
        r, g = math.sinh(a), math.cosh(a)
    elif op == 38:
        r, g = math.cosh(a), math.sinh(a)
    elif op == 39:
        r = math.tanh(a)
        g = 1.0 - r * r
    elif op == 40:
        r = math.exp(a)
        g = r
    elif op == 41 or op == 42:
        if a < 0.0 or a != a:
            return np.nan, np.nan, np.nan
        scale = 1.0 if op == 41 else LN10
        r = (math.log(a) if a > 0.0 else -np.inf) / scale
        g = _div(1.0, a * scale)
    elif op == 43:
        if a < 0.0:
            return np.nan, np.nan, np.nan
        r = math.sqrt(a)
        g = _div(0.5, r)
    elif op == 44:
        r = abs(a)
        g = 1.0 if a > 0.0 else (-1.0 if a < 0.0 else 0.0)
    elif op == 45:
        r = 1.0 if a > 0.0 else (-1.0 if a < 0.0 else (0.0 if a == 0.0 else np.nan))
    elif op == 46:
        r = np.floor(a)
    elif op == 47:
        r = np.ceil(a)
    else:
        r = np.nan if a != a else (1.0 if a >= 0.0 else 0.0)
    # a derivative that does not move (an operand constant in u or v) stays 0, whatever g
    return r, g * au if au != 0.0 else 0.0, g * av if av != 0.0 else 0.0


@numba.njit(cache=True, nogil=True)
def run(P, c, SLOTS, n, u, v, s, STACK):
    """(f, df/du, df/dv): the program of n slots in contact c's parameter row from column
    SLOTS run at (u, v), its stack in row c of s from column STACK (three per level: the value
    and its derivatives)."""
    top = STACK
    i = 0
    while i < n:
        op = int(P[c, SLOTS + i])
        i += 1
        if op == CONST:
            s[c, top] = P[c, SLOTS + i]
            s[c, top + 1] = 0.0
            s[c, top + 2] = 0.0
            top += 3
            i += 1
        elif op == VAR_U or op == VAR_V:
            s[c, top] = u if op == VAR_U else v
            s[c, top + 1] = 1.0 if op == VAR_U else 0.0
            s[c, top + 2] = 1.0 if op == VAR_V else 0.0
            top += 3
        elif op < FIRST_UNARY:
            top -= 3
            r, ru, rv = _binary(op, s[c, top - 3], s[c, top - 2], s[c, top - 1], s[c, top],
                                s[c, top + 1], s[c, top + 2])
            s[c, top - 3] = r
            s[c, top - 2] = ru
            s[c, top - 1] = rv
        elif op < WHERE:
            r, ru, rv = _unary(op, s[c, top - 3], s[c, top - 2], s[c, top - 1])
            s[c, top - 3] = r
            s[c, top - 2] = ru
            s[c, top - 1] = rv
        else:
            # where(cond, a, b): cond, a and b on top of the stack, the result in cond's place
            top -= 6
            k = top if s[c, top - 3] != 0.0 else top + 3
            s[c, top - 3] = s[c, k]
            s[c, top - 2] = s[c, k + 1]
            s[c, top - 1] = s[c, k + 2]
    return s[c, STACK], s[c, STACK + 1], s[c, STACK + 2]


def program(root) -> tuple:
    """(slots, depth): the postfix program of an expression graph (``fem.functions.
    expression_graph``: nodes with ``op``, ``args`` and ``value``), its operands before their
    operation, a constant as CONST and its value, and the deepest its stack gets."""
    slots: list = []
    depth = 0
    top = 0
    # an explicit stack of (node, whether its operands are emitted): no recursion limit
    todo = [(root, False)]
    while todo:
        node, ready = todo.pop()
        if node.op == "const":
            slots += [float(CONST), float(node.value)]
            top += 1
        elif node.op in ("u", "v"):
            slots.append(float(VAR_U if node.op == "u" else VAR_V))
            top += 1
        elif not ready:
            todo.append((node, True))
            todo.extend((a, False) for a in reversed(node.args))
            continue
        else:
            code = BINARY.get(node.op) or UNARY.get(node.op) or (
                WHERE if node.op == "where" else None)
            if code is None:
                raise ValueError(f"no opcode for the operation {node.op!r}")
            slots.append(float(code))
            top -= len(node.args) - 1
        depth = max(depth, top)
    return slots, depth
