"""The time grid of a transient analysis: uniform or piecewise-uniform steps, with the
archive instants on the grid (inserted exactly when they fall between steps).

The runs of a constant step (``TimeGrid.segments``) come from how the grid is built, not from
differences of its instants: a uniform ``step`` is one run of that step (plus a shorter last
step when the span is not a whole number of steps), each entry of ``steps`` is one run of
(until - t0) / count, and an archive instant that falls between two steps cuts that step in
two. Far from t = 0 the instants t0 + i dt are only known to the spacing of doubles at t
(1.1e-13 s at t = 1000 s, 1e-8 of a step of 1e-5 s): measuring the steps would split the grid
at every round-off and make a run's cost grow with the absolute time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fem.errors import StudyError

#: instants within this many ulps of |t| of each other are the same instant
ULPS = 4


@dataclass
class TimeGrid:
    """times (N+1,) s; archive (N+1,) bool; segments: (i0, i1, dt) runs of a constant step."""
    times: np.ndarray
    archive: np.ndarray
    segments: list

    @property
    def steps(self) -> int:
        return len(self.times) - 1

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    def window(self, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
        """The instants i0 ... i1 (s) and whether each is archived (copies)."""
        return self.times[i0:i1 + 1].copy(), self.archive[i0:i1 + 1].copy()


class RegularGrid(TimeGrid):
    """A grid of uniform pieces archived every N-th instant, computed a window at a time:
    a run of 1e7 steps does not hold 1e7 instants. ``times`` and ``archive`` give the whole
    arrays when asked (built once); ``window`` gives the same values bit for bit
    (t0 + dt * j, as ``build_grid`` computes them)."""

    def __init__(self, pieces: list, end: float, every: int, segments: list):
        self.pieces = [(float(t0), int(count), float(dt)) for t0, count, dt in pieces]
        self.first = np.cumsum([0] + [count for _, count, _ in self.pieces]).tolist()
        self._end = float(end)
        self.every = int(every)
        self.segments = segments

    @property
    def steps(self) -> int:
        return self.first[-1]

    @property
    def start(self) -> float:
        return self.pieces[0][0] if self.pieces else self._end

    @property
    def end(self) -> float:
        return self._end

    @cached_property
    def times(self) -> np.ndarray:
        return self._compute(0, self.steps)[0]

    @cached_property
    def archive(self) -> np.ndarray:
        return self._compute(0, self.steps)[1]

    def window(self, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
        if "times" in self.__dict__ or "archive" in self.__dict__:
            # materialized (and possibly edited): the arrays are the truth
            return TimeGrid.window(self, i0, i1)
        return self._compute(i0, i1)

    def _compute(self, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
        parts = []
        for (t0, count, dt), first in zip(self.pieces, self.first):
            lo, hi = max(i0, first), min(i1 + 1, first + count)
            if lo < hi:
                parts.append(t0 + dt * np.arange(lo - first, hi - first))
        if i1 >= self.steps:
            parts.append(np.array([self._end], float))
        times = np.concatenate(parts) if parts else np.zeros(0)
        index = np.arange(i0, i0 + len(times))
        archive = (index % self.every == 0) | (index == self.steps)
        return times, archive


def round_off(t) -> np.ndarray | float:
    """How far apart (s) two computations of the same instant t can land: a few ulps of |t|."""
    return ULPS * np.spacing(np.abs(t))


def _uniform(start, end, step) -> list:
    """Pieces (t0, count, dt) of a uniform grid: whole steps, then a shorter last one when the
    span is not a whole number of steps (to round-off of the span and of the instants)."""
    span = end - start
    slack = 1e-12 * span + round_off(max(abs(start), abs(end)))
    count = max(1, int(np.ceil((span - slack) / step)))
    last = start + (count - 1) * step
    rest = end - last
    if abs(rest - step) <= slack:
        return [(start, count, step)]
    pieces = [(start, count - 1, step)] if count > 1 else []
    return pieces + [(last, 1, rest)]


def build_grid(start: float, end: float, *, step: float | None = None, steps=None,
               archive: dict | None = None, where: str = "analysis") -> TimeGrid:
    """Build the grid; ``archive`` is {"every": N} or {"times": [...]}."""
    if steps:
        pieces, t0 = [], start
        for until, count in steps:
            pieces.append((t0, count, (until - t0) / count))
            t0 = until
    else:
        pieces = _uniform(start, end, step)
    first = np.cumsum([0] + [count for _, count, _ in pieces]).tolist()
    segments = [(i0, i1, float(dt)) for i0, i1, (_, _, dt) in zip(first, first[1:], pieces)]
    archive = archive or {"every": 1}
    if "times" not in archive:
        return RegularGrid(pieces, end, archive["every"], segments)
    times = np.concatenate([t0 + dt * np.arange(count) for t0, count, dt in pieces]
                           + [np.array([end], float)])
    wanted = np.asarray(archive["times"], float)
    bad = (wanted < start - 1e-12 * max(1, abs(start))) | (wanted > end + 1e-12 * max(1, abs(end)))
    if bad.any():
        raise StudyError(f"{where}.archive.times: {wanted[bad][0]:g} s is outside the analysis "
                         f"[{start:g}, {end:g}] s")
    idx = np.clip(np.searchsorted(times, wanted), 1, len(times) - 1)
    near = np.where(np.abs(times[idx - 1] - wanted) <= np.abs(times[idx] - wanted), idx - 1, idx)
    local = np.diff(times).max() if len(times) > 1 else 1.0
    # on the grid: within 1e-9 of a step of an instant, or within round-off of it
    gap = np.abs(times[near] - wanted)
    on_grid = ((gap <= 1e-9 * local) | (gap <= round_off(wanted))
               | (wanted < times[0]) | (wanted > times[-1]))
    times[near[on_grid]] = wanted[on_grid]
    inserted = np.unique(wanted[~on_grid])
    if len(inserted):
        times, segments = _insert(times, segments, inserted)
    mask = np.isin(times, wanted)
    return TimeGrid(times, mask, segments)


def _insert(times: np.ndarray, segments: list, inserted: np.ndarray):
    """The grid with the instants ``inserted`` (strictly between grid instants) added, and its
    runs: each step that an instant cuts in two becomes steps of their exact lengths."""
    steps = len(times) - 1
    piece = np.zeros(steps, np.int64)
    nominal = np.empty(steps)
    for k, (i0, i1, dt) in enumerate(segments):
        piece[i0:i1] = k
        nominal[i0:i1] = dt
    cut = np.zeros(steps, bool)
    cut[np.searchsorted(times, inserted, side="right") - 1] = True
    new = np.union1d(times, inserted)
    owner = np.searchsorted(times, new[:-1], side="right") - 1
    piece, cut = piece[owner], cut[owner]
    nominal = np.where(cut, np.diff(new), nominal[owner])
    return new, _segments(new, piece, nominal, cut)


def _segments(times: np.ndarray, piece: np.ndarray, nominal: np.ndarray, cut: np.ndarray) -> list:
    """Runs (i0, i1, dt) of a constant step from each step's piece (a uniform ``step``, one
    entry of ``steps``), its step as built (s) and whether an inserted instant cut it.

    The uncut steps of a piece are one run of the piece's step; consecutive cut steps of the
    same length (to 1e-9 of a step and to round-off of the instants) form one run of their
    span over their count.
    """
    n = len(piece)
    if n == 0:
        return []
    new = np.ones(n, bool)
    if n > 1:
        d = np.abs(np.diff(nominal))
        tol = 1e-9 * nominal[1:] + 2 * round_off(times[1:-1])
        same = (piece[1:] == piece[:-1]) & (cut[1:] == cut[:-1])
        same &= np.where(cut[1:], d <= tol, nominal[1:] == nominal[:-1])
        new[1:] = ~same
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    out = []
    for i0, i1 in zip(starts.tolist(), ends.tolist()):
        dt = (times[i1] - times[i0]) / (i1 - i0) if cut[i0] else nominal[i0]
        out.append((i0, i1, float(dt)))
    return out
