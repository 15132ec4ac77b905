"""The time grid of a transient analysis: uniform or piecewise-uniform steps, with the
archive instants on the grid (inserted exactly when they fall between steps)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import StudyError


@dataclass
class TimeGrid:
    """times (N+1,) s; archive (N+1,) bool; segments: (i0, i1, dt) runs of a constant step."""
    times: np.ndarray
    archive: np.ndarray
    segments: list

    @property
    def steps(self) -> int:
        return len(self.times) - 1


def _uniform(start, end, step):
    count = int(np.ceil((end - start) / step * (1 - 1e-12)))
    times = start + step * np.arange(count + 1)
    times[-1] = end
    return times


def build_grid(start: float, end: float, *, step: float | None = None, steps=None,
               archive: dict | None = None, where: str = "analysis") -> TimeGrid:
    """Build the grid; ``archive`` is {"every": N} or {"times": [...]}."""
    if steps:
        parts, t0 = [], start
        for until, count in steps:
            parts.append(np.linspace(t0, until, count + 1)[:-1])
            t0 = until
        times = np.concatenate(parts + [np.array([end])])
    else:
        times = _uniform(start, end, step)
    archive = archive or {"every": 1}
    if "times" in archive:
        wanted = np.asarray(archive["times"], float)
        bad = (wanted < start - 1e-12 * max(1, abs(start))) | (wanted > end + 1e-12 * max(1, abs(end)))
        if bad.any():
            raise StudyError(f"{where}.archive.times: {wanted[bad][0]:g} s is outside the analysis "
                             f"[{start:g}, {end:g}] s")
        idx = np.clip(np.searchsorted(times, wanted), 1, len(times) - 1)
        near = np.where(np.abs(times[idx - 1] - wanted) <= np.abs(times[idx] - wanted), idx - 1, idx)
        local = np.diff(times).max() if len(times) > 1 else 1.0
        on_grid = np.abs(times[near] - wanted) <= 1e-9 * local
        times[near[on_grid]] = wanted[on_grid]
        times = np.union1d(times, wanted[~on_grid])
        mask = np.isin(times, wanted)
    else:
        every = archive["every"]
        mask = np.zeros(len(times), bool)
        mask[::every] = True
        mask[-1] = True
    return TimeGrid(times, mask, _segments(times))


def _segments(times: np.ndarray) -> list:
    dt = np.diff(times)
    if len(dt) == 0:
        return []
    # a new segment where the step changes by more than round-off
    change = np.abs(np.diff(dt)) > 1e-9 * dt[1:]
    starts = np.concatenate([[0], np.where(change)[0] + 1])
    ends = np.concatenate([starts[1:], [len(dt)]])
    out = []
    for i0, i1 in zip(starts, ends):
        out.append((int(i0), int(i1), float(np.mean(dt[i0:i1]))))
    return out
