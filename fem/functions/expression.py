"""Expressions of t: a whitelist compiler from the Python syntax tree to an expression
graph, and the :class:`Expression` function evaluating the graph and its derivative.

The text is parsed with :func:`ast.parse` and never evaluated or executed as Python.
"""

from __future__ import annotations

import ast
import math

from fem.errors import FunctionError
from fem.functions.base import TimeFunction
from fem.functions.expression_derivative import _derivative_graph
from fem.functions.expression_graph import _T, _const, _make, _Node, _Program, _topological

#: Longest accepted expression text, in characters.
MAX_EXPRESSION_LENGTH = 2000

#: Deepest accepted nesting of the expression syntax tree.
MAX_EXPRESSION_DEPTH = 200

# Callable names and their number of arguments (None: 2 or more).
_FUNCTIONS = {
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2,
    "sinh": 1, "cosh": 1, "tanh": 1, "exp": 1, "log": 1, "log10": 1, "sqrt": 1,
    "abs": 1, "sign": 1, "floor": 1, "ceil": 1, "min": None, "max": None,
    "where": 3, "heaviside": 1,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
#: the variables of an expression: the time t (s) of a function of time; the displacement u
#: (m) and the velocity v (m/s) of a dof, the variables of the force law of a link
#: (kind = "force_function"), which a function of time may not use
VARIABLES = ("t", "u", "v")
#: the variables of a link's force law
FORCE_VARIABLES = ("u", "v")
_ALLOWED_NAMES = (", ".join(["t", *_CONSTANTS, *_FUNCTIONS])
                  + "; u and v in the force law of a link")

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.Mod: "mod"}
_UNARY = {ast.UAdd: None, ast.USub: "neg"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
            ast.NotEq: "ne"}
_OPERATOR_TEXT = {ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
                  ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&", ast.Not: "not",
                  ast.Invert: "~", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
                  ast.IsNot: "is not"}
_CONSTRUCTS = {
    ast.Attribute: "attribute access", ast.Subscript: "subscript", ast.Lambda: "lambda",
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
    ast.List: "list", ast.Tuple: "tuple", ast.Set: "set", ast.Dict: "dict",
    ast.IfExp: "conditional expression 'a if c else b'", ast.BoolOp: "'and'/'or'",
    ast.NamedExpr: "assignment expression ':='", ast.Starred: "starred argument",
    ast.JoinedStr: "f-string", ast.Slice: "slice", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield",
}
_HINTS = {ast.IfExp: "; use where(c, a, b)", ast.BoolOp: "; use where, min, max or comparisons"}


#: the nodes of the variables u and v (shared, as t's)
_VARIABLE = {name: _Node(name) for name in FORCE_VARIABLES}


class _Compiler:
    """Checks a Python expression syntax tree against the whitelist and builds its graph."""

    def __init__(self, key: str):
        self.key = key
        self.indent = 0

    def fail(self, message: str, node: ast.AST | None = None):
        column = getattr(node, "col_offset", None)
        where = "" if column is None else f" (at column {column + 1 + self.indent})"
        raise FunctionError(f"{self.key}: {message}{where}")

    def compile(self, text) -> _Node:
        if not isinstance(text, str):
            raise FunctionError(f"{self.key}: must be a string (got {type(text).__name__})")
        if len(text) > MAX_EXPRESSION_LENGTH:
            raise FunctionError(f"{self.key}: expression too long ({len(text)} characters, "
                                f"at most {MAX_EXPRESSION_LENGTH})")
        if not text.strip():
            raise FunctionError(f"{self.key}: empty expression")
        # Leading blanks would be an indentation error; columns still refer to the given text.
        self.indent = len(text) - len(text.lstrip())
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            column = f" at column {exc.offset + self.indent}" if exc.offset else ""
            raise FunctionError(f"{self.key}: syntax error{column}: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise FunctionError(f"{self.key}: cannot parse the expression "
                                f"({type(exc).__name__})") from None
        self._check_depth(tree.body)
        return self.node(tree.body)

    def _check_depth(self, body: ast.AST) -> None:
        stack = [(body, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_EXPRESSION_DEPTH:
                raise FunctionError(f"{self.key}: expression nested too deeply "
                                    f"(more than {MAX_EXPRESSION_DEPTH} levels)")
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))

    def node(self, node: ast.AST) -> _Node:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(node.op), '?')}' is not allowed",
                          node)
            return _make(op, self.node(node.left), self.node(node.right))
        if isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(node.op), '?')}' is not allowed",
                          node)
            operand = self.node(node.operand)
            op = _UNARY[type(node.op)]
            return operand if op is None else _make(op, operand)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        construct = _CONSTRUCTS.get(type(node), type(node).__name__)
        if isinstance(node, ast.Attribute):
            construct = f"attribute access '.{node.attr}'"
        self.fail(f"{construct} is not allowed{_HINTS.get(type(node), '')}", node)

    def constant(self, node: ast.Constant) -> _Node:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            kind = {str: "string", bytes: "bytes", complex: "complex number",
                    bool: "boolean"}.get(type(v), type(v).__name__)
            self.fail(f"{kind} constant {v!r} is not allowed (only real numbers)", node)
        try:
            value = float(v)
        except OverflowError:
            self.fail("number too large", node)
        if not math.isfinite(value):
            self.fail(f"number {value!r} is not finite", node)
        return _const(value)

    def name(self, node: ast.Name) -> _Node:
        if node.id == "t":
            return _T
        if node.id in FORCE_VARIABLES:
            return _VARIABLE[node.id]
        if node.id in _CONSTANTS:
            return _const(_CONSTANTS[node.id])
        if node.id in _FUNCTIONS:
            self.fail(f"function '{node.id}' must be called, e.g. {node.id}(t)", node)
        self.fail(f"unknown name '{node.id}' (allowed: {_ALLOWED_NAMES})", node)

    def compare(self, node: ast.Compare) -> _Node:
        left = self.node(node.left)
        result = None
        for op, right_ast in zip(node.ops, node.comparators):
            name = _COMPARE.get(type(op))
            if name is None:
                self.fail(f"operator '{_OPERATOR_TEXT.get(type(op), '?')}' is not allowed",
                          node)
            right = self.node(right_ast)
            term = _make(name, left, right)
            # A chain a < b < c holds when every link holds: the product of 0/1 terms.
            result = term if result is None else _make("mul", result, term)
            left = right
        return result

    def call(self, node: ast.Call) -> _Node:
        func = node.func
        if not isinstance(func, ast.Name):
            construct = _CONSTRUCTS.get(type(func), type(func).__name__)
            if isinstance(func, ast.Attribute):
                construct = f"attribute access '.{func.attr}'"
            self.fail(f"call of {construct} is not allowed (call functions by name, "
                      f"e.g. sin(t))", node)
        name = func.id
        if name not in _FUNCTIONS:
            if name == "t" or name in _CONSTANTS:
                self.fail(f"'{name}' is not a function", node)
            self.fail(f"unknown function '{name}' (allowed: {', '.join(_FUNCTIONS)})", node)
        if node.keywords:
            self.fail(f"keyword arguments are not allowed in a call of '{name}'", node)
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.fail(f"starred argument is not allowed in a call of '{name}'", node)
        arity, given = _FUNCTIONS[name], len(node.args)
        if arity is None and given < 2:
            self.fail(f"function '{name}' takes 2 or more arguments ({given} given)", node)
        if arity is not None and given != arity:
            plural = "" if arity == 1 else "s"
            self.fail(f"function '{name}' takes {arity} argument{plural} ({given} given)", node)
        args = [self.node(a) for a in node.args]
        if name in ("min", "max"):
            # An n-ary min or max is a chain of binary ones.
            result = args[0]
            for a in args[1:]:
                result = _make(name, result, a)
            return result
        return _make(name, *args)


class Expression(TimeFunction):
    """A function given by an arithmetic expression of t (s).

    Allowed: real number literals; the names ``t``, ``pi``, ``e``; ``+ - * / ** %``; unary
    ``+ -``; comparisons ``< <= > >= == !=`` (chains allowed) giving 1.0 or 0.0; and calls
    ``sin cos tan asin acos atan atan2(y, x) sinh cosh tanh exp log log10 sqrt abs sign floor
    ceil``, ``min(a, b, ...)``, ``max(a, b, ...)``, ``where(cond, a, b)`` (a where cond is
    nonzero) and ``heaviside(x)`` (0 for x < 0, 1 for x >= 0). ``%`` follows numpy.mod
    (result has the sign of the divisor). Results may be inf or nan where the expression is
    undefined (log(0), 1/0); no warning is printed.

    Derivatives of every order are symbolic and exact: the derivative of the graph is a
    graph, differentiated again for the next order (built once, when first asked). At kinks
    (abs, min, max, where, floor, ...) a derivative takes one of the one-sided values, and
    it is 0 for steps and comparisons (their impulses are not represented).

    The names ``u`` and ``v`` make the expression the force law of a link (kind =
    "force_function"): a force (N) as a function of a dof's displacement u (m) and velocity
    v (m/s), which that link evaluates itself (``fem.laws.force_function``). Such an
    expression is not a function of time: calling it raises :class:`FunctionError`, and the
    study reader refuses it where a function of time is expected.

    Parameters
    ----------
    name : str
    text : str
        The expression, at most :data:`MAX_EXPRESSION_LENGTH` characters.

    Attributes
    ----------
    text : str
    variables : tuple of str
        The variables the expression uses, among ``VARIABLES`` (t, u, v), in that order.
    """

    kind = "expression"
    exact_order = math.inf

    def __init__(self, name: str, text: str):
        super().__init__(name)
        root = _Compiler(f"functions.{self.name}.expression").compile(text)
        self.text = text
        self.graph = root
        used = {node.op for node in _topological(root)}
        self.variables = tuple(name for name in VARIABLES if name in used)
        if self.of_force:
            return
        self._value = _Program(root)
        # graphs and programs of the derivatives of order 1, 2, ...
        self._derivative_graphs = [_derivative_graph(root)]
        self._derivative_programs = [_Program(self._derivative_graphs[0])]

    @property
    def of_force(self) -> bool:
        """Whether the expression names u or v: the force law of a link, not a function of
        time."""
        return any(name in FORCE_VARIABLES for name in self.variables)

    def _not_of_time(self):
        names = " and ".join(n for n in self.variables if n in FORCE_VARIABLES)
        raise FunctionError(f"function '{self.name}' is an expression of {names}: the force "
                            f"law of a link (kind = \"force_function\"), not a function of "
                            f"time")

    def _evaluate(self, t):
        if self.of_force:
            self._not_of_time()
        return self._value.run(t)

    def _derivative(self, t):
        if self.of_force:
            self._not_of_time()
        return self._derivative_programs[0].run(t)

    def _higher_derivative(self, t, order):
        if self.of_force:
            self._not_of_time()
        graphs, programs = self._derivative_graphs, self._derivative_programs
        while len(programs) < order:
            graphs.append(_derivative_graph(graphs[-1]))
            programs.append(_Program(graphs[-1]))
        return programs[order - 1].run(t)

    def __repr__(self) -> str:
        return f"<Expression {self.name!r}: {self.text!r}>"
