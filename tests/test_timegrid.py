"""The time grid: runs of a constant step come from how the grid is built, so that a run's
cost and its steps do not depend on the absolute time (far from t = 0 the instants
t0 + i dt are only known to the spacing of doubles at t)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import series
from fem.timegrid import build_grid

STEP = 1e-5


def exact_instants(start, step, count):
    """start + i step in extended precision (the step as the double it is)."""
    return np.longdouble(start) + np.longdouble(step) * np.arange(count + 1, dtype=np.longdouble)


@pytest.mark.parametrize("start", [0.0, 60.0, 1000.0])
def test_uniform_grid_is_one_segment_of_the_step(start):
    grid = build_grid(start, start + 10.0, step=STEP, archive={"every": 1000})
    assert grid.steps == 1_000_000
    assert grid.segments == [(0, 1_000_000, STEP)]
    assert grid.segments[0][2] == 1e-5                  # the step asked, not a mean
    assert grid.times[0] == start and grid.times[-1] == start + 10.0
    error = np.abs(grid.times.astype(np.longdouble) - exact_instants(start, STEP, grid.steps))
    assert np.all(error <= 4 * np.spacing(np.abs(grid.times)))
    assert np.count_nonzero(grid.archive) == 1001
    assert np.all(grid.archive[::1000])


def test_uniform_grid_with_a_shorter_last_step():
    grid = build_grid(0.0, 1.0, step=0.3)
    assert np.allclose(grid.times, [0.0, 0.3, 0.6, 0.9, 1.0], rtol=0, atol=1e-15)
    assert [s[:2] for s in grid.segments] == [(0, 3), (3, 4)]
    assert grid.segments[0][2] == 0.3
    assert grid.segments[1][2] == grid.times[-1] - grid.times[-2]


def test_uniform_grid_far_from_zero_has_no_round_off_step():
    # the span is a whole number of steps to round-off of the end points only
    start = 1e5 + 0.1
    grid = build_grid(start, start + 1.0, step=1e-3)
    assert grid.steps == 1000
    assert grid.segments == [(0, 1000, 1e-3)]


@pytest.mark.parametrize("start", [0.0, 60.0, 1000.0])
def test_steps_list_gives_one_segment_per_entry(start):
    steps = [(start + 0.5, 50_000), (start + 1.0, 10_000), (start + 2.0, 20_000),
             (start + 3.0, 20_000)]
    grid = build_grid(start, start + 3.0, steps=steps)
    assert grid.steps == 100_000
    assert len(grid.segments) == len(steps)
    i0, t0 = 0, start
    for (until, count), (s0, s1, dt) in zip(steps, grid.segments):
        assert (s0, s1) == (i0, i0 + count)
        assert dt == (until - t0) / count
        assert grid.times[s0] == t0
        error = np.abs(grid.times[s0:s1 + 1].astype(np.longdouble)
                       - exact_instants(t0, dt, count))
        assert np.all(error <= 4 * np.spacing(np.abs(grid.times[s0:s1 + 1])))
        i0, t0 = s1, until
    assert grid.times[-1] == start + 3.0
    # two entries of the same step are still two segments
    assert grid.segments[2][2] == grid.segments[3][2]


def test_archive_times_off_the_grid_are_inserted():
    wanted = [0.25, 0.5, 0.55, 0.3 + 1e-12, 1.0]
    grid = build_grid(0.0, 1.0, step=0.1, archive={"times": wanted})
    # 0.25 and 0.55 cut a step in two; 0.3 + 1e-12 is within 1e-9 of a step of 0.3: snapped
    assert grid.steps == 12
    assert list(grid.times[grid.archive]) == sorted(wanted)
    assert not np.any(np.isclose(grid.times, 0.3, rtol=0, atol=1e-9) & ~grid.archive)
    # the steps cut in two run on their exact span; the snapped instant moved one by 1e-12
    dts = np.diff(grid.times)
    for i0, i1, dt in grid.segments:
        assert np.allclose(dts[i0:i1], dt, rtol=1e-10, atol=0)
    assert [s[:2] for s in grid.segments] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 12)]
    assert [s[2] for s in grid.segments][0::2] == [0.1, 0.1, 0.1]
    assert grid.segments[1][2] == (grid.times[4] - grid.times[2]) / 2
    assert grid.segments[3][2] == pytest.approx(0.05, abs=1e-15)


def test_archive_times_between_all_steps_make_one_segment():
    grid = build_grid(0.0, 1.0, step=0.1, archive={"times": np.arange(10) * 0.1 + 0.05})
    assert grid.steps == 20
    assert len(grid.segments) == 1
    assert grid.segments[0][2] == pytest.approx(0.05, rel=1e-14)


def test_archive_times_in_a_steps_list():
    grid = build_grid(0.0, 1.0, steps=[(0.5, 5), (1.0, 5)], archive={"times": [0.25, 0.5, 0.55]})
    assert grid.steps == 12
    assert list(grid.times[grid.archive]) == [0.25, 0.5, 0.55]
    assert [s[:2] for s in grid.segments] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 12)]


def test_archive_times_on_the_grid_far_from_zero_are_snapped():
    # these decimal instants are one ulp of t (1.1e-13 s, 1e-8 of a step) away from
    # 1000 + i 1e-5: on the grid, not new steps
    wanted = [1000.34769, 1000.37894, 1000.41019, 1005.0]
    grid = build_grid(1000.0, 1010.0, step=STEP, archive={"times": wanted})
    assert grid.steps == 1_000_000
    assert grid.segments == [(0, 1_000_000, STEP)]
    assert list(grid.times[grid.archive]) == wanted


def test_archive_times_far_from_zero_still_cut_steps():
    grid = build_grid(1000.0, 1010.0, step=STEP, archive={"times": [1000.000015, 1000.000025]})
    assert grid.steps == 1_000_002
    assert [s[:2] for s in grid.segments] == [(0, 1), (1, 5), (5, 1_000_002)]
    assert grid.segments[0][2] == grid.segments[2][2] == STEP
    assert grid.segments[1][2] == pytest.approx(STEP / 2, rel=1e-7)
    assert list(grid.times[grid.archive]) == [1000.000015, 1000.000025]


@pytest.mark.parametrize("start", [0.0, 60.0, 1000.0])
def test_adaptive_grid_of_a_uniform_step_is_one_segment(start):
    from fem.integrators.adaptive import adaptive_grid

    grid, _ = adaptive_grid(start, start + 10.0, step=STEP, archive={"every": 1000})
    assert grid.segments == [(0, 1_000_000, STEP)]
    # knots of a sampling of the span, cut at a breakpoint of the loads
    grid, _ = adaptive_grid(start, start + 10.0, archive={"every": 1},
                            breakpoints=[start + 1.2345])
    assert len(grid.segments) == 4
    for i0, i1, dt in grid.segments:
        assert dt == (grid.times[i1] - grid.times[i0]) / (i1 - i0)


CHAIN = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
C = [2.0, 0.0, 0.0]
[mesh.cells]
AB = {{ type = "SEG2", nodes = ["A", "B"] }}
BC = {{ type = "SEG2", nodes = ["B", "C"] }}
[model]
components = ["DX"]
[[discrete]]
cells = ["AB", "BC"]
stiffness = 1.0e5
damping = 20.0
[[discrete]]
nodes = ["B", "C"]
mass = 10.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[[initial]]
nodes = ["C"]
displacement = {{ DX = 1.0e-3 }}
velocity = {{ DX = 0.2 }}
[[load]]
name = "push"
nodes = ["B"]
FX = 3.0
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
start = {start}
end = {end}
step = 1.0e-5
archive = {{ every = 10 }}
fields = ["displacement", "velocity"]
"""


def test_newmark_far_from_zero_matches_the_run_from_zero(run_toml, monkeypatch):
    from fem.analyses import transient

    grids = []

    def recorded(*args, **kwargs):
        grids.append(build_grid(*args, **kwargs))
        return grids[-1]

    monkeypatch.setattr(transient, "build_grid", recorded)
    runs = {}
    for start in (0.0, 1000.0):
        grids.clear()
        f = run_toml(CHAIN.format(start=start, end=start + 0.01), name=f"chain{start:g}")
        # 1000 steps of the step asked, in one segment (the driver calls the scheme per segment)
        assert len(grids) == 1 and grids[0].segments == [(0, 1000, STEP)]
        t, u_b = series(f, "a", "displacement", 1)
        _, u_c = series(f, "a", "displacement", 2)
        _, v_c = series(f, "a", "velocity", 2)
        runs[start] = t, np.stack([u_b, u_c, v_c])
    t0, y0 = runs[0.0]
    t1, y1 = runs[1000.0]
    assert len(t0) == len(t1) == 101
    assert np.allclose(t1 - 1000.0, t0, rtol=0, atol=1e-12)
    assert np.abs(y0[1]).max() > 1e-4                   # the chain moves
    for a, b in zip(y0, y1):
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a))


@pytest.mark.parametrize("kwargs", [
    dict(start=0.0, end=1.0, step=0.3, archive={"every": 2}),
    dict(start=1000.0, end=1010.0, step=STEP, archive={"every": 1000}),
    dict(start=60.0, end=63.0, steps=[(60.5, 5_000), (61.0, 1_000), (63.0, 20_000)],
         archive={"every": 7}),
])
def test_regular_grid_windows_are_the_instants_bit_for_bit(kwargs):
    """A grid archived every N-th instant is computed a window at a time (a long run does
    not hold every instant); each window must be the instants t0 + j dt of its piece, the
    end point exact, and the archive mask every N-th instant and the last one."""
    grid = build_grid(kwargs.pop("start"), kwargs.pop("end"), **kwargs)
    every = kwargs["archive"]["every"]
    n = grid.steps
    rng = np.random.default_rng(0)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n, 12)]))
    pieces = [grid.window(int(a), int(b) - 1 if b < n else n)
              for a, b in zip(cuts[:-1], cuts[1:])]
    times = np.concatenate([p[0] for p in pieces])
    archive = np.concatenate([p[1] for p in pieces])
    assert "times" not in vars(grid)                    # nothing materialized
    assert len(times) == n + 1 and times[-1] == grid.end
    assert np.all(np.diff(times) > 0)
    for i0, i1, dt in grid.segments:
        j = np.arange(i1 - i0)
        assert np.array_equal(times[i0:i1], times[i0] + dt * j)
    mask = np.zeros(n + 1, bool)
    mask[::every] = True
    mask[-1] = True
    assert np.array_equal(archive, mask)
    assert np.array_equal(times, grid.times) and np.array_equal(archive, grid.archive)
