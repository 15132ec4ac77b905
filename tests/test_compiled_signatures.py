"""Each compiled kernel compiles once per run: compiled code never passes a literal flag or
count to another compiled function, and every band reaches the kernels in one layout.

numba types a constant argument of a call made from compiled code (``f(x, True)``,
``g(A, 0)``) as a literal type of its own, and compiles the callee again for it: a kernel
called with ``True`` at one site and ``False`` (or a variable) at another is compiled, and
its whole call tree optimized and turned into machine code, two or three times. The same
holds for an array argument seen in C order by one caller and in Fortran order by another.
(A function inlined into its callers is typed at each call site anyway: a literal there only
lets numba prune the branches it decides.)
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import fem
from fem.linalg import Factor


def _compiled_functions():
    """(module name, function name, dispatcher) of every compiled function of fem."""
    from numba.core.registry import CPUDispatcher

    seen = set()
    for info in pkgutil.walk_packages(fem.__path__, "fem."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == info.name \
                    and id(obj) not in seen:
                seen.add(id(obj))
                yield info.name, name, obj


def test_compiled_code_passes_no_literal_bool_or_int_to_a_compiled_function():
    from numba.core.registry import CPUDispatcher

    found = []
    count = 0
    for modname, name, disp in _compiled_functions():
        count += 1
        tree = ast.parse(textwrap.dedent(inspect.getsource(disp.py_func)))
        scope = disp.py_func.__globals__
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            callee = scope.get(node.func.id)
            if not isinstance(callee, CPUDispatcher) \
                    or callee.targetoptions.get("inline") == "always":
                continue        # (a body inlined in its caller is typed there anyway)
            for arg in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, (bool, int)):
                    found.append(f"{modname}.{name} calls {node.func.id} with "
                                 f"{arg.value!r} (line {node.lineno} of the function)")
    assert count > 100, count          # the scan sees fem's compiled code
    assert not found, "\n".join(found)


def test_the_scan_finds_a_literal_flag():
    """The scan above would see the defect it looks for."""
    source = "def f(x):\n    return g(x, True)\n"
    call = ast.parse(source).body[0].body[0].value
    assert isinstance(call.args[1], ast.Constant) and call.args[1].value is True


@pytest.mark.parametrize("width", [0, 1, 3])
def test_every_band_is_in_c_order(width):
    """LAPACK's banded Cholesky gives Fortran order; fem's own factors are in C order: a
    Factor holds its band in C order whatever the width (a (1, n) band is both)."""
    n = 12
    diagonals = [np.full(n, 4.0 + width)] + [np.full(n - k, -0.5) for k in range(1, width + 1)]
    offsets = [0] + list(range(1, width + 1))
    upper = sp.diags(diagonals, offsets, shape=(n, n))
    A = (upper + sp.triu(upper, 1).T).tocsr()
    f = Factor(A)
    assert f.banded
    assert f.band.flags.c_contiguous
    x = np.arange(1.0, n + 1)
    assert np.allclose(A @ f.solve(x), x, rtol=1e-13)
