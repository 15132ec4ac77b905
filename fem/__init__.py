"""fem: dynamics of discrete structures (masses, springs, dampers, shocks, impacts)."""

# First of all, before any module with compiled code is imported: numba's disk cache keyed
# on the compiled sources (numba checks a cached function only against its own file).
from fem import compiled as _compiled

_compiled.use_keyed_cache()

__version__ = "0.1.0"
