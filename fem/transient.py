"""The one transient driver: every scheme of ``fem.integrators`` runs through :func:`integrate`.

It owns the time grid (in chunks of knots, with the load values at the knots), the archive
(rows handed to a sink), the events (the one locator of ``fem.integrators.events``, and the
changes the laws log with ``events = "step"``), the guards (event storms, divergence), and the
progress bar. Schemes and laws write no file; the sink decides what an archived row becomes
(``ResultsSink`` for the results file, ``MemorySink`` for tests and benchmarks).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from fem.errors import SolverError
from fem.integrators.base import Chunk
from fem.integrators.events import MAX_EVENTS_PER_STEP, locate
from fem.integrators.kernels import (DIVERGED, DONE, ENERGY_TERMS, EVENT, EVENT_NAMES, FULL,
                                     MINSTEP, NOT_SETTLED, make_outputs)
from fem.laws.columns import NA
from fem.study.specs import step_limit

#: a chunk holds at most this many float64 values per archived field
CHUNK_VALUES = 4_000_000
MAX_CHUNK_STEPS = 65536


class Result:
    """What a run gives besides its archived rows: events (time, kind, link, detail,
    velocity_before, velocity_after, energy_lost), steps taken and rejected."""

    def __init__(self):
        self.events: list = []
        self.steps = 0
        self.rejected = 0


def integrate(scheme, grid, *, x0, v0, acceleration: str = "equilibrium", sink,
              progress=None, result: Result | None = None) -> Result:
    """Run ``scheme`` over ``grid`` (``fem.timegrid.TimeGrid``) from (x0, v0); archived rows
    go to ``sink.append(outputs)``. ``result`` (a fresh one by default) gets the events and the
    step counts even when the run fails. Raises SolverError on a numerical failure.

    BLAS runs on one thread meanwhile (``one_blas_thread``)."""
    with one_blas_thread():
        return _integrate(scheme, grid, x0=x0, v0=v0, acceleration=acceleration, sink=sink,
                          progress=progress, result=result)


class _BlasThreads:
    """The BLAS libraries limited to one thread while at least one run is inside
    ``integrate`` (a count: concurrent runs in threads of one process restore the limit
    when the last one leaves). The step loops are compiled and use no BLAS; the numpy
    products between their calls (the recombination of archived rows, the loads of a chunk)
    would wake BLAS's worker threads, which then spin waiting for work and take a core from
    the loop on a busy machine (a modal run of 1e5 steps: 1.5 s against 1.1 s with another
    process on the second core)."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()
        self.count = 0
        self.controller = None
        self.limited = None

    def __enter__(self):
        with self.lock:
            if self.count == 0:
                try:
                    if self.controller is None:
                        from threadpoolctl import ThreadpoolController
                        self.controller = ThreadpoolController()
                    self.limited = self.controller.limit(limits=1, user_api="blas")
                except Exception:       # no BLAS found, or an unknown library: run as is
                    self.limited = None
            self.count += 1
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.count -= 1
            if self.count == 0 and self.limited is not None:
                self.limited.restore_original_limits()
                self.limited = None
        return False


_BLAS = _BlasThreads()


def one_blas_thread() -> _BlasThreads:
    """A context in which the BLAS libraries run on one thread (see ``_BlasThreads``)."""
    return _BLAS


def _integrate(scheme, grid, *, x0, v0, acceleration, sink, progress, result) -> Result:
    result = result if result is not None else Result()
    dyn = scheme.dyn
    load = _exact_load(dyn)
    w0 = load(grid.start)
    scheme.t_final = grid.end
    shortest = min((dt for _, _, dt in grid.segments), default=1.0)
    #: the span and shortest step of the grid, for the laws' guards at instants
    scheme.grid_span = (grid.start, grid.end, shortest)
    scheme.zeno = None
    scheme.check_resolution(shortest)
    result.events += scheme.start(grid.start, np.array(x0, float), np.array(v0, float), w0,
                                  acceleration)
    n, nc = scheme.n, scheme.P.shape[0]
    width = max(1, 3 * n + nc * NA + len(ENERGY_TERMS))
    chunk_steps = int(max(16, min(MAX_CHUNK_STEPS, CHUNK_VALUES // width)))
    if grid.window(0, 0)[1][0]:
        out = make_outputs(1, n, nc, NA)
        scheme.archive_now(out, 0)
        sink.append(out, 1)
    try:
        for i0, i1, dt in grid.segments:
            for c0 in range(i0, i1, chunk_steps):
                c1 = min(c0 + chunk_steps, i1)
                knots, archive = grid.window(c0, c1)
                with np.errstate(all="ignore"):
                    W = np.ascontiguousarray(dyn.load_values(knots), np.float64)
                if not np.isfinite(W).all():
                    raise SolverError(_not_finite(scheme.label, dyn, knots, W))
                _check_imposed(scheme.label, dyn, knots)
                archive = np.ascontiguousarray(archive, np.bool_)
                archive[0] = False
                _run_chunk(scheme, Chunk(knots, W, archive, dt, load), sink, result)
                if progress is not None:
                    progress(c1 - c0)
    finally:
        result.steps = scheme.steps
        result.rejected = scheme.rejected
    return result


def _run_chunk(scheme, chunk, sink, result):
    n, nc = scheme.n, scheme.P.shape[0]
    capacity = int(np.count_nonzero(chunk.archive)) + (256 if scheme.adaptive else 0) + 8
    out = make_outputs(capacity, n, nc, NA)
    scheme.begin(chunk)
    row = 0
    storm_at, storm = None, 0
    limit = step_limit.get()
    while True:
        before = (scheme.t, scheme.steps)
        status, row = scheme.advance(out, row)
        _drain(scheme, result)
        if scheme.steps + scheme.rejected > limit:
            sink.append(out, row)
            raise SolverError(f"{scheme.label}: {scheme.name} took more than {limit:.3g} steps "
                              f"({scheme.steps} taken, {scheme.rejected} refused) by "
                              f"t = {scheme.t:.9g} s; fem run --max-steps sets another limit "
                              f"(or loosen the tolerance, raise min_step)")
        if status == DONE:
            break
        if status == FULL:
            sink.append(out, row)
            if row == 0 and (scheme.t, scheme.steps) == before:
                # a loop that needs more rows for its next step than an empty archive holds
                # (the knots of a step cut short by an event): more rows
                capacity *= 2
                out = make_outputs(capacity, n, nc, NA)
            row = 0
            continue
        if status == EVENT:
            if row >= capacity - 1:
                sink.append(out, row)
                row = 0
            step_end = scheme.pending[0]
            if step_end == storm_at:
                storm += 1
                if storm > MAX_EVENTS_PER_STEP:
                    last = result.events[-1][2] if result.events else "?"
                    raise SolverError(f"{scheme.label}: event storm: more than "
                                      f"{MAX_EVENTS_PER_STEP} events of the links (last: link "
                                      f"'{last}') between t = {scheme.t:.12g} s and "
                                      f"{step_end:.12g} s; the contact chatters (give the "
                                      f"link damping, a grazing velocity, or a smaller step)")
            else:
                storm_at, storm = step_end, 1
            row, records = locate(scheme, out, row)
            result.events += records
            continue
        if status == DIVERGED:
            sink.append(out, row)
            raise SolverError(_failed_link(scheme) or _divergence(scheme))
        if status == NOT_SETTLED:
            sink.append(out, row)
            failed = _failed_link(scheme)
            if failed:
                raise SolverError(failed)
            scheme.not_settled(scheme.pending[0] if scheme.pending else scheme.t)
        if status == MINSTEP:
            sink.append(out, row)
            raise SolverError(_failed_link(scheme) or scheme.min_step_message())
        raise SolverError(f"{scheme.label}: unexpected status {status} of the step loop")
    sink.append(out, row)


def _drain(scheme, result):
    """Move the events the laws logged (events = "step") to the result."""
    log = scheme.log
    count = int(log.count[0])
    if not count:
        return
    for e in range(count):
        c = int(log.contact[e])
        kind = EVENT_NAMES[int(log.kind[e])]
        result.events.append((float(log.time[e]), kind, scheme.links.link_of(c),
                              f"side {scheme.links.sides[c]}, approach speed "
                              f"{log.speed[e]:.9g} m/s", math.nan, math.nan, math.nan))
    if count >= log.time.size:
        raise SolverError(f"{scheme.label}: more than {log.time.size} events of the links in "
                          f"one chunk of steps before t = {scheme.t:.9g} s (event storm)")
    log.count[0] = 0


def _not_finite(label, dyn, knots, W) -> str:
    """The first time column that is not finite: its function, the instant and the value."""
    bad = int(np.where(~np.isfinite(W).all(axis=1))[0][0])
    j = int(np.flatnonzero(~np.isfinite(W[bad]))[0])
    fn, order = dyn.columns[j]
    name = getattr(fn, "name", "") or "?"
    what = {0: "", 1: "the rate of ", 2: "the second derivative of "}.get(order, "a derivative of ")
    return (f"{label}: {what}function '{name}' is not finite at t = {knots[bad]:.9g} s "
            f"({W[bad, j]:g}): a load or imposed motion must stay finite over the analysis")


def _check_imposed(label, dyn, knots):
    """The imposed motions that only the results show (dofs that no free dof feels) are
    finite at the knots too; SolverError naming the first function that is not."""
    system = getattr(dyn.source, "system", dyn.source)
    for fn in getattr(system, "g_functions", ()) or ():
        with np.errstate(all="ignore"):
            h = np.broadcast_to(np.asarray(fn.derivative(knots, 0), float), knots.shape)
        if not np.isfinite(h).all():
            bad = int(np.flatnonzero(~np.isfinite(h))[0])
            name = getattr(fn, "name", "") or "?"
            raise SolverError(f"{label}: function '{name}' is not finite at t = "
                              f"{knots[bad]:.9g} s ({h[bad]:g}): a load or imposed motion must "
                              f"stay finite over the analysis")


def _failed_link(scheme) -> str:
    """The message of a link whose law could not compute its force at the pending or the
    current state (``LinkSet.failure``): the link, the time and the law's reason; "" when
    every link's force is finite."""
    if not scheme.links:
        return ""
    t = scheme.pending[0] if scheme.pending else scheme.t
    for cv in (scheme.buf.CV[1 - scheme.cur], scheme.buf.CV[scheme.cur]):
        found = scheme.links.failure(cv)
        if found:
            return (f"{scheme.label}: {found[0]}: its law could not compute its force in the "
                    f"step ending at t = {t:.9g} s: {found[1]}")
    return ""


def _divergence(scheme) -> str:
    b = scheme.buf
    x = b.X[1 - scheme.cur]
    bad = np.flatnonzero(~(np.abs(x) <= 1e15))
    j = int(bad[0]) if len(bad) else int(np.argmax(np.abs(x)))
    t = scheme.pending[0] if scheme.pending else scheme.t
    what = scheme.dyn.describe(j)
    value = x[j]
    return (f"{scheme.label}: the solution diverged at t = {t:.9g} s ({what} reached "
            f"{value:.3g}); the step may exceed the stability limit of {scheme.name}, or a "
            f"parameter is out of physical range")


def _exact_load(dyn):
    def load(t):
        return np.ascontiguousarray(dyn.load_values(np.array([float(t)]))[0], np.float64)
    return load


# --------------------------------------------------------------------------- sinks
class MemorySink:
    """Archived rows kept in memory: ``arrays()`` gives time, x, v, a (k, n), contact values
    (k, nc, NA) and energies (k, 5)."""

    def __init__(self):
        self.blocks = []

    def append(self, out, rows):
        if rows:
            self.blocks.append(tuple(np.array(a[:rows]) for a in out))

    def arrays(self) -> dict:
        names = ("time", "x", "v", "a", "contacts", "energy")
        if not self.blocks:
            return {}
        return {name: np.concatenate([b[i] for b in self.blocks]) for i, name in
                enumerate(names)}


class ForceFields:
    """The element forces and reactions of archived rows, from the physical fields on every
    dof (``fem.model.element_forces``); ``loads``: (vector on the reaction dofs, function)
    of each load of the analysis."""

    def __init__(self, elements, reactions, loads, fields):
        self.elements = elements if "element_force" in fields and elements.count else None
        self.reactions = reactions if "reaction" in fields and len(reactions.dofs) else None
        self.loads = [(vector, fn) for vector, fn in loads if np.any(vector)]

    def __bool__(self):
        return self.elements is not None or self.reactions is not None

    def columns(self) -> dict:
        cols = {}
        if self.elements is not None:
            cols["element_force"] = self.elements.width
        if self.reactions is not None:
            cols["reaction"] = len(self.reactions.dofs)
        return cols

    def rows(self, t, u, v, a) -> dict:
        out = {}
        if self.elements is not None:
            out["element_force"] = self.elements.of(u, v)
        if self.reactions is not None:
            applied = np.zeros((len(t), len(self.reactions.dofs)))
            for vector, fn in self.loads:
                applied += np.outer(np.broadcast_to(fn.derivative(t, 0), t.shape), vector)
            out["reaction"] = self.reactions.of(u, v, a, applied)
        return out


class GroundAcceleration:
    """The ground's acceleration on the archived dofs, for the ``absolute_acceleration``
    field: the sum over the analysis' base acceleration loads of value * f(t) times the
    load's unit direction on the translations (DX DY DZ; rotations get none).
    ``loads``: (columns (width,) m/s^2 per unit of the function, function) of each load."""

    def __init__(self, loads):
        self.loads = [(np.asarray(r, float), fn) for r, fn in loads]

    def rows(self, t, width: int) -> np.ndarray:
        """(len(t), width) ground accelerations at the instants ``t`` (m/s^2)."""
        out = np.zeros((len(t), width))
        for r, fn in self.loads:
            out += np.outer(np.broadcast_to(fn.derivative(t, 0), t.shape), r)
        return out


class ResultsSink:
    """Archived rows to a series of the results file (``fem.results.SeriesWriter``): the
    physical fields asked (expanded to all the archived dofs), the generalized coordinates on
    a modal basis, the link series and the energy terms. Rows are gathered into blocks of
    about BLOCK_VALUES values before they are written."""

    BLOCK_VALUES = 2_000_000
    #: rows are written at least this often (s), so that a run stopped at any moment leaves
    #: its recent rows in the file
    FLUSH_SECONDS = 0.5
    GENERALIZED = {"displacement": "generalized/q", "velocity": "generalized/qdot",
                   "acceleration": "generalized/qddot"}

    def __init__(self, series, dyn, links, fields, width: int, energy: bool, forces=None,
                 ground: GroundAcceleration | None = None, relative=None):
        self.energy = energy
        self.ground = ground if ground is not None else GroundAcceleration([])
        self.width = width
        self.series = series
        self.dyn = dyn
        self.links = links
        self.fields = list(fields)
        self.forces = forces if forces else None
        self.relative = relative if relative else None
        self.pending = []
        self.pending_rows = 0
        extra = sum(self.forces.columns().values()) if self.forces else 0
        extra += len(self.relative.fields) * width if self.relative else 0
        per_row = (len(self.fields) * width + (3 * dyn.size if dyn.generalized else 0)
                   + 8 * max(links.count, 0) + 6 + extra)
        self.block_rows = max(256, self.BLOCK_VALUES // max(per_row, 1))
        self.last_flush = time.monotonic()

    @staticmethod
    def columns(dyn, links, fields, width: int, energy: bool, forces=None,
                relative=None) -> dict:
        cols = {"time": 0, **{f: width for f in fields}}
        if relative:
            cols.update(relative.columns(width))
        if forces:
            cols.update(forces.columns())
        if dyn.generalized:
            cols.update({name: dyn.size for name in ResultsSink.GENERALIZED.values()})
        if links:
            cols.update(links.series_columns())
        if energy:
            cols.update({f"energy/{t}": 0 for t in ENERGY_TERMS})
        return cols

    @property
    def rows(self) -> int:
        return self.series.rows + self.pending_rows

    def append(self, out, rows):
        if not rows:
            return
        t = np.array(out.T[:rows])
        blocks = {"time": t}
        states = (("displacement", out.X, 0), ("velocity", out.V, 1),
                  ("acceleration", out.A, 2))
        needs = self.relative.needs if self.relative else ()
        with np.errstate(all="ignore"):
            full = {}
            absolute = "absolute_acceleration" in self.fields
            for field, data, order in states:
                q = np.array(data[:rows])
                if field in self.fields or self.forces or (absolute and order == 2) \
                        or field in needs:
                    full[field] = self.dyn.expand(q, t, order)
                if field in self.fields:
                    blocks[field] = full[field]
                if self.dyn.generalized:
                    blocks[self.GENERALIZED[field]] = q
            if absolute:
                blocks["absolute_acceleration"] = (full["acceleration"]
                                                   + self.ground.rows(t, self.width))
            if self.forces:
                blocks.update(self.forces.rows(t, full["displacement"], full["velocity"],
                                               full["acceleration"]))
            if self.relative:
                blocks.update(self.relative.rows(t, full))
        if self.links:
            blocks.update(self.links.series(out.CV[:rows]))
        if self.energy:
            for j, term in enumerate(ENERGY_TERMS):
                blocks[f"energy/{term}"] = np.array(out.EN[:rows, j])
        self.pending.append(blocks)
        self.pending_rows += rows
        if (self.pending_rows >= self.block_rows
                or time.monotonic() - self.last_flush > self.FLUSH_SECONDS):
            self.flush()

    def flush(self):
        self.last_flush = time.monotonic()
        if self.pending:
            self.series.append(**{key: np.concatenate([b[key] for b in self.pending])
                                  for key in self.pending[0]})
            self.pending.clear()
            self.pending_rows = 0


class Progress:
    """Progress of one analysis on stderr (a tqdm bar), when stderr is a terminal.

    The bar shows from the start for runs of ``LONG_RUN`` steps or more. Whatever the
    length, it also shows while numba compiles a kernel (a cache miss: the first run of a
    scheme on a machine, or after fem's compiled sources change), labelled "compiling
    kernels", since that can take seconds before the first step. ``with progress:`` watches
    numba's compile events; :meth:`update` counts steps; :meth:`close` removes the bar.
    """

    LONG_RUN = 20000

    def __init__(self, total: int, name: str, stream=None):
        self.total, self.name = int(total), name
        self.stream = stream if stream is not None else sys.stderr
        self.bar = None
        self.depth = 0
        self.listener = None
        if self.total >= self.LONG_RUN:
            self._open()

    @classmethod
    def for_terminal(cls, total: int, name: str):
        """A Progress if stderr is a terminal, else None."""
        return cls(total, name) if sys.stderr.isatty() else None

    def _open(self):
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, desc=self.name, unit="step", unit_scale=True,
                        leave=False, file=self.stream)

    def update(self, steps: int):
        if self.bar is not None:
            self.bar.update(steps)

    def compiling(self, started: bool):
        """numba starts (or ends) compiling a kernel; nested compilations count once."""
        self.depth += 1 if started else -1
        if started and self.depth == 1:
            if self.bar is None:
                self._open()
            self.bar.set_description(f"{self.name}: compiling kernels", refresh=True)
        elif not started and self.depth == 0 and self.bar is not None:
            self.bar.set_description(self.name, refresh=True)

    def __enter__(self):
        if "numba" in sys.modules or _numba_available():
            from numba.core import event

            progress = self

            class _Compiles(event.Listener):
                def on_start(self, _event):
                    progress.compiling(True)

                def on_end(self, _event):
                    progress.compiling(False)

            self.listener = _Compiles()
            event.register("numba:compile", self.listener)
        return self

    def __exit__(self, *exc):
        if self.listener is not None:
            from numba.core import event

            event.unregister("numba:compile", self.listener)
            self.listener = None
        self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _numba_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("numba") is not None