"""fem: dynamics of discrete structures (masses, springs, dampers, shocks, impacts).

The Python API (docs/api.md): :class:`fem.Study` (load, vary), :func:`fem.run` (run, in
memory or to a file), :func:`fem.sweep` (many variants, on Dask), :class:`fem.StudyError`.
The solver modules load when first used, so that ``import fem`` stays quick.
"""

# First of all, before any module with compiled code is imported: numba's disk cache keyed
# on the compiled sources (numba checks a cached function only against its own file).
from fem import compiled as _compiled
from fem.errors import SolverError, StudyError

_compiled.use_keyed_cache()

__version__ = "0.1.0"

#: the API's names and the module each comes from (imported on first use)
_LAZY = {"Study": "fem.api", "run": "fem.api", "RunError": "fem.api", "sweep": "fem.sweeping"}

__all__ = ["RunError", "SolverError", "Study", "StudyError", "run", "sweep", "__version__"]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fem' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
