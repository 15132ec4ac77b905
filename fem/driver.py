"""The transient driver: owns the time grid, load values, archiving, progress and output, and
asks a scheme (``fem.integrators``) to advance the state chunk by chunk."""

from __future__ import annotations

import time as _time
import warnings

import numpy as np

from fem.errors import SolverError
from fem.integrators.base import State
from fem.timegrid import TimeGrid

#: a chunk holds at most this many float64 values per archived field
CHUNK_VALUES = 4_000_000
MAX_CHUNK_STEPS = 8192


class MemorySink:
    """Collects archived rows in memory (for tests, benchmarks and the Python API)."""

    def __init__(self):
        self.blocks = []

    def append(self, **blocks):
        self.blocks.append(blocks)

    def arrays(self) -> dict:
        if not self.blocks:
            return {}
        return {k: np.concatenate([b[k] for b in self.blocks]) for k in self.blocks[0]}


def integrate(system, scheme, grid: TimeGrid, *, state: State | None = None, fields=("displacement",
              "velocity", "acceleration"), sink=None, expand: bool = True, progress=None,
              name: str = "transient"):
    """Advance ``system`` over ``grid`` with ``scheme``; archived rows go to ``sink.append``.

    Rows are all dofs (``expand``: u = T q + G h(t)) or the free dofs. Returns the final
    free-dof state and the number of steps. Raises SolverError when the solution diverges.
    """
    times = grid.times
    t0 = times[0]
    w0 = system.load_values(times[:1])[0]
    if state is None:
        state = State(system.q0.copy(), system.v0.copy(), None)
    if state.a is None:
        state.a = scheme.initial_acceleration(t0, state.u, state.v, w0)
    limit = scheme.stability_limit()
    if limit is not None and grid.segments and max(s[2] for s in grid.segments) > limit:
        warnings.warn(f"{name}: step {max(s[2] for s in grid.segments):.4g} s exceeds the "
                      f"stability limit of {scheme.name} ({limit:.4g} s): expect divergence",
                      stacklevel=2)
    sink = sink if sink is not None else MemorySink()
    if grid.archive[0]:
        _emit(sink, system, times[:1], state.u[None], state.v[None], state.a[None], fields, expand)
    n = max(system.size, 1)
    chunk = int(max(16, min(MAX_CHUNK_STEPS, CHUNK_VALUES // n)))
    done = 0
    for i0, i1, dt in grid.segments:
        for c0 in range(i0, i1, chunk):
            c1 = min(c0 + chunk, i1)
            with np.errstate(all="ignore"):     # non-finite values are reported just below
                W = system.load_values(times[c0:c1 + 1])
            if not np.isfinite(W).all():
                bad = c0 + int(np.where(~np.isfinite(W).all(axis=1))[0][0])
                raise SolverError(f"{name}: a load or imposed-motion function is not finite at "
                                  f"t = {times[bad]:.9g} s")
            mask = grid.archive[c0:c1 + 1].copy()
            mask[0] = False
            (u, v, a), ok = scheme.advance(dt, W, state, mask)
            # a scheme that archives its own steps gives their times from the call's start
            offsets = getattr(scheme, "row_offsets", None)
            at = times[c0:c1 + 1][mask] if offsets is None else times[c0] + offsets
            if len(at):
                _emit(sink, system, at, u, v, a, fields, expand)
            if not ok:
                raise SolverError(f"{name}: the solution diverged (non-finite values) between "
                                  f"t = {times[c0]:.6g} s and {times[c1]:.6g} s; reduce the step")
            done += c1 - c0
            if progress is not None:
                progress(c1 - c0)
    return state, done


def _emit(sink, system, t, u, v, a, fields, expand):
    blocks = {"time": t}
    for field, q, order in (("displacement", u, 0), ("velocity", v, 1), ("acceleration", a, 2)):
        if field in fields:
            blocks[field] = system.expand(q, t, order) if expand else q
    sink.append(**blocks)


class Timer:
    def __enter__(self):
        self.start = _time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = _time.perf_counter() - self.start
