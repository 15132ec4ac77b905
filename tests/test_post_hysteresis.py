"""fem post hysteresis: the force-deformation loops of a link, cut into full cycles at the
reversals of the deformation, against loops whose areas are known in closed form.

The synthetic file is written here with h5py in the layout fem writes (that of a run of a
damper driven by an imposed harmonic elongation): its link "dp" carries the ellipse
u = u0 sin(w t), F = c w u0 cos(w t) over three periods, whose area is pi c w u0^2, and the
series ``dissipated`` = integral of F du. The real run is a power-law damper under an imposed
harmonic elongation, whose cycle dissipates lambda(alpha) c w^alpha u0^(1 + alpha).
"""

from __future__ import annotations

import csv
import io
import json
import math

import h5py
import numpy as np
import pytest

import postpro
from postpro.cli import main
from postpro.jobs import hysteresis

C, U0 = 40.0, 3.0e-3                # N.s/m, m
W = 2.0 * math.pi * 2.0             # rad/s
PERIOD = 2.0 * math.pi / W
STEPS = 400                         # instants per period, a multiple of 4: the peaks are archived
TIME = np.arange(3 * STEPS + 1) * (PERIOD / STEPS)
AREA = math.pi * C * W * U0**2      # J, the ellipse's area


def ellipse(t):
    """Elongation (m), force (N) and the work of the force from t = 0 (J)."""
    u = U0 * np.sin(W * t)
    f = C * W * U0 * np.cos(W * t)
    work = C * W**2 * U0**2 * (t / 2.0 + np.sin(2.0 * W * t) / (4.0 * W))
    return u, f, work


def polygon_area(n):
    """The area of the polygon of n points equally spaced in phase on the ellipse (the
    trapezoidal rule of oint F du over one period sampled n times)."""
    return 0.5 * n * C * W * U0**2 * math.sin(2.0 * math.pi / n)


def _strings(values):
    return np.array(values, dtype=h5py.string_dtype())


def write_results(path, time=TIME, u=None, f=None, work=None, units=True):
    """A results file in fem's layout: nodes P (imposed DX) and Q; transient analysis "a"
    with the damper link "dp" (loop: elongation, force; series dissipated) and the shock
    link "stop" (no loop)."""
    if u is None:
        u, f, work = ellipse(time)
    with h5py.File(path, "w") as h5:
        h5.attrs.update({"format": "fem-results", "format_version": 2, "producer": "fem 0.1.0",
                         "created": "2026-01-01T00:00:00+00:00", "title": "ellipse",
                         "status": "complete"})
        h5["study/source"] = ""
        h5["mesh/node_names"] = _strings(["P", "Q"])
        h5["mesh/coordinates"] = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        h5["mesh/coordinates"].attrs["units"] = "m"
        h5.create_group("mesh/cells")
        h5.create_group("mesh/cell_names")
        for groups in ("mesh/node_groups", "mesh/cell_groups"):
            h5[f"{groups}/names"] = _strings([])
            h5[f"{groups}/offsets"] = np.zeros(1, np.int64)
            h5[f"{groups}/members"] = np.zeros(0, np.int64)
        h5["dofs/node"] = np.array([0, 1])
        h5["dofs/component"] = _strings(["DX", "DX"])
        h5["dofs/imposed"] = np.array([True, False])
        a = h5.create_group("analyses/a")
        a.attrs.update({"kind": "transient", "basis": "physical", "scheme": "newmark",
                        "status": "complete", "message": "", "wall_time_s": 0.1,
                        "steps": len(time) - 1, "rejected_steps": 0,
                        "parameters": json.dumps({"step": PERIOD / STEPS})})
        a["time"] = time
        a["time"].attrs["units"] = "s"
        a["displacement"] = np.column_stack([u, 0 * u])
        a["displacement"].attrs["units"] = "m"
        dp = a.create_group("links/dp")
        dp.attrs.update({"damping": C, "exponent": 1.0, "linear_below": 1e-6,
                         "direction": [1.0, 0.0, 0.0]})
        dp.attrs["loop"] = _strings(["elongation", "force"])
        for name, values, unit in (("elongation", u, "m"), ("force", f, "N"),
                                   ("dissipated", work, "J")):
            dp[name] = values
            if units:
                dp[name].attrs["units"] = unit
        stop = a.create_group("links/stop")
        stop.attrs["stiffness"] = 1e6
        stop["normal_force"] = np.zeros(len(time))
        stop["penetration"] = np.full(len(time), -1e-3)
    return path


@pytest.fixture(scope="module")
def ellipse_file(tmp_path_factory):
    return write_results(tmp_path_factory.mktemp("hysteresis") / "ellipse.h5")


def post(capsys, *args):
    code = main(["hysteresis", *[str(a) for a in args]])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error(capsys, *args):
    code, out, err = post(capsys, *args)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: ")
    return out, err.strip()


def loops_of(path, **options):
    with postpro.open(path) as results:
        return hysteresis.link_loops(results.analysis("a"), "dp", **options)


# -- the ellipse -------------------------------------------------------------------------------

def test_the_cycles_of_the_ellipse(ellipse_file):
    """Reversals at the peaks; two full cycles from maximum to maximum (T/4 to 9T/4); each
    encloses the polygon of the 400 archived points, within (2 pi / 400)^2 / 6 of pi c w u0^2,
    and dissipates exactly pi c w u0^2."""
    loops = loops_of(ellipse_file)
    assert loops.series == ("elongation", "force") and loops.units == ("m", "N")
    assert [r.kind for r in loops.reversals] == ["maximum", "minimum"] * 3
    assert [r.row for r in loops.reversals] == [STEPS // 4 + k * STEPS // 2 for k in range(6)]
    assert [r.time for r in loops.reversals] == pytest.approx(
        [PERIOD / 4 + k * PERIOD / 2 for k in range(6)], rel=1e-12)
    assert [r.value for r in loops.reversals] == pytest.approx([U0, -U0] * 3, rel=1e-12)
    assert len(loops.cycles) == 2
    for k, cycle in enumerate(loops.cycles):
        assert cycle.number == k + 1
        assert cycle.start == pytest.approx(PERIOD / 4 + k * PERIOD, rel=1e-12)
        assert cycle.end == pytest.approx(PERIOD / 4 + (k + 1) * PERIOD, rel=1e-12)
        assert cycle.deformation == pytest.approx((-U0, U0), rel=1e-12)
        assert cycle.force == pytest.approx((-C * W * U0, C * W * U0), rel=1e-12)
        assert cycle.area == pytest.approx(polygon_area(STEPS), rel=1e-11)
        assert cycle.area == pytest.approx(AREA, rel=(2 * math.pi / STEPS) ** 2 / 6 * 1.01)
        assert cycle.dissipated == pytest.approx(AREA, rel=1e-11)


def test_the_table_and_its_total_line(capsys, ellipse_file):
    code, out, err = post(capsys, ellipse_file, "-a", "a", "--link", "dp")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "6 reversals of elongation" in lines[1] and "2 full cycles from maximum" in lines[1]
    assert lines[2].split("  ")[0] == "cycle"
    for title in ("start [s]", "end [s]", "elongation min [m]", "elongation max [m]",
                  "force min [N]", "force max [N]", "loop area [J]", "dissipated [J]"):
        assert title in lines[2]
    rows = [line.split() for line in lines[4:]]
    assert [row[0] for row in rows] == ["1", "2", "total"]
    values = np.array([row[1:] for row in rows], float)
    assert values[:2, 6] == pytest.approx(polygon_area(STEPS), rel=1e-5)   # 6 digits
    assert values[:2, 7] == pytest.approx(AREA, rel=1e-5)
    assert values[2] == pytest.approx([PERIOD / 4, 9 * PERIOD / 4, -U0, U0, -C * W * U0,
                                       C * W * U0, 2 * polygon_area(STEPS), 2 * AREA],
                                      rel=1e-5)


def test_the_csv_has_one_row_per_cycle_at_full_precision(capsys, ellipse_file, tmp_path):
    table = tmp_path / "cycles.csv"
    code, out, _ = post(capsys, ellipse_file, "--csv", table)
    assert code == 0 and f"wrote {table}" in out
    rows = list(csv.reader(io.StringIO(table.read_text())))
    assert rows[0] == ["cycle", "start [s]", "end [s]", "elongation min [m]",
                       "elongation max [m]", "force min [N]", "force max [N]",
                       "loop area [J]", "dissipated [J]"]
    values = np.array(rows[1:], float)
    assert values[:, 0].tolist() == [1, 2]
    assert values[:, 1] == pytest.approx([PERIOD / 4, 5 * PERIOD / 4], rel=1e-12)
    assert values[:, 2] == pytest.approx([5 * PERIOD / 4, 9 * PERIOD / 4], rel=1e-12)
    assert values[:, 7] == pytest.approx(polygon_area(STEPS), rel=1e-11)
    assert values[:, 8] == pytest.approx(AREA, rel=1e-11)


def test_the_figure_draws_each_cycle_from_the_archived_points(capsys, ellipse_file, tmp_path):
    """Four lines: before the first cycle, cycle 1, cycle 2, after the last; each cycle holds
    the archived rows from its first maximum to the next, and the axes name the series."""
    figure_path = tmp_path / "loops.png"
    code, out, _ = post(capsys, ellipse_file, "--output", figure_path)
    assert code == 0 and f"wrote {figure_path}" in out
    assert figure_path.stat().st_size > 1000
    loops = loops_of(ellipse_file)
    ax = hysteresis.figure(loops).axes[0]
    assert len(ax.lines) == 4
    assert ax.get_xlabel() == "elongation [m]" and ax.get_ylabel() == "force [N]"
    u, f, _ = ellipse(TIME)
    quarter = STEPS // 4
    spans = [(0, quarter), (quarter, quarter + STEPS), (quarter + STEPS, quarter + 2 * STEPS),
             (quarter + 2 * STEPS, len(TIME) - 1)]
    for line, (a, b) in zip(ax.lines, spans):
        assert np.array_equal(line.get_xydata(), np.column_stack([u[a:b + 1], f[a:b + 1]]))
    labels = [line.get_label() for line in ax.lines]
    assert labels[1].startswith("cycle 1: ") and labels[2].startswith("cycle 2: ")
    assert labels[0] == "outside full cycles"


def test_blocks_and_decimation_give_the_same_cycles(ellipse_file, monkeypatch):
    """Blocks of 7 rows (plateaus, peaks and cycle ends across block boundaries) give the
    cycles of one block; a decimated curve keeps each cycle's extremes and its ends."""
    whole = loops_of(ellipse_file)
    small = loops_of(ellipse_file, rows=7)
    assert small.reversals == whole.reversals
    for a, b in zip(small.cycles, whole.cycles):
        assert a.area == pytest.approx(b.area, rel=1e-12)
        assert (a.deformation, a.force, a.start, a.end) == (b.deformation, b.force, b.start,
                                                            b.end)
    monkeypatch.setattr(hysteresis, "BUCKETS_PER_CYCLE", 10)
    thin = loops_of(ellipse_file, rows=100, width=50)
    assert [p[0] for p in thin.pieces] == [0, 1, 2, 0]
    assert sum(len(p[1]) for p in thin.pieces) < len(TIME) / 3
    for (_, u, f), cycle in zip(thin.pieces[1:3], thin.cycles):
        assert (u.min(), u.max()) == cycle.deformation and (f.min(), f.max()) == cycle.force
        assert u[0] == u[-1] == pytest.approx(U0, rel=1e-12)
    for before, after in zip(thin.pieces, thin.pieces[1:]):
        assert (before[1][-1], before[2][-1]) == (after[1][0], after[2][0])


def test_a_cycle_between_peaks_off_the_archive_is_closed(tmp_path):
    """400.5 instants a period: a cycle runs from the instant nearest a peak to the one
    nearest the next, m steps of phase d apart, m d != 2 pi. Its loop is the polygon of
    those points closed back to the first: from the ellipse's centre, m triangles of area
    (a b / 2) sin d and the closing one, (a b / 2) sin(2 pi - m d)."""
    steps = 400.5
    time = np.arange(int(3 * steps) + 1) * (PERIOD / steps)
    u, f, work = ellipse(time)
    loops = loops_of(write_results(tmp_path / "off.h5", time=time, u=u, f=f, work=work))
    peaks = [int(np.argmax(np.where((time > k * PERIOD) & (time <= (k + 1) * PERIOD), u,
                                    -np.inf))) for k in range(3)]
    d = 2.0 * math.pi / steps
    assert len(loops.cycles) == 2
    for cycle, first, last in zip(loops.cycles, peaks, peaks[1:]):
        assert (cycle.start, cycle.end) == (time[first], time[last])
        m = last - first
        closed = 0.5 * C * W * U0**2 * (m * math.sin(d) + math.sin(2.0 * math.pi - m * d))
        assert abs(2.0 * math.pi - m * d) > 0.2 * d
        assert cycle.area == pytest.approx(closed, rel=1e-10)


def test_ringing_below_the_threshold_makes_no_cycle(tmp_path):
    """A ripple of 0.4 % of the range at every step leaves the six reversals of the ellipse;
    a threshold below it counts every ripple."""
    u, f, work = ellipse(TIME)
    ripple = 0.004 * 2 * U0 * (-1.0) ** np.arange(len(TIME))
    path = write_results(tmp_path / "ringing.h5", u=u + ripple, f=f, work=work)
    loops = loops_of(path)
    assert [r.kind for r in loops.reversals] == ["maximum", "minimum"] * 3
    assert len(loops.cycles) == 2
    assert loops.cycles[0].end - loops.cycles[0].start == pytest.approx(PERIOD,
                                                                        abs=PERIOD / STEPS)
    assert len(loops_of(path, reversal=0.001).reversals) > 100


def test_cycles_from_minimum_to_minimum_when_a_minimum_comes_first(tmp_path):
    """u = -u0 sin: the first reversal is a minimum, and so are the cycles' ends."""
    u, f, work = ellipse(TIME)
    path = write_results(tmp_path / "minimum.h5", u=-u, f=-f, work=work)
    loops = loops_of(path)
    assert loops.cycle_kind == "minimum" and len(loops.cycles) == 2
    assert loops.cycles[0].start == pytest.approx(PERIOD / 4, rel=1e-12)
    assert loops.cycles[0].area == pytest.approx(polygon_area(STEPS), rel=1e-11)


def test_without_units_or_dissipated_the_table_names_the_series_alone(capsys, tmp_path):
    u, f, work = ellipse(TIME)
    path = write_results(tmp_path / "bare.h5", u=u, f=f, work=work, units=False)
    with h5py.File(path, "a") as h5:
        del h5["analyses/a/links/dp/dissipated"]
    code, out, _ = post(capsys, path)
    header = out.splitlines()[2]
    assert code == 0 and "elongation min  " in header and "force max  " in header
    assert "dissipated" not in header and header.endswith("loop area [J]")
    loops = loops_of(path)
    assert loops.cycles[0].dissipated is None
    ax = hysteresis.figure(loops).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("elongation", "force")


# -- errors ------------------------------------------------------------------------------------

def test_unknown_analysis_and_link(capsys, ellipse_file):
    _, err = error(capsys, ellipse_file, "-a", "b", "--link", "dp")
    assert "no analysis 'b'" in err and "analyses: a" in err
    _, err = error(capsys, ellipse_file, "--link", "dq")
    assert "has no link 'dq'" in err and "links with a force-deformation loop: dp" in err


def test_a_link_without_loop(capsys, ellipse_file):
    _, err = error(capsys, ellipse_file, "--link", "stop")
    assert "link 'stop' of analysis 'a' has no force-deformation loop" in err
    assert "attribute 'loop'" in err and "links with one here: dp" in err


def test_no_default_link_and_a_damaged_loop(capsys, tmp_path):
    path = write_results(tmp_path / "none.h5")
    with h5py.File(path, "a") as h5:
        del h5["analyses/a/links/dp"].attrs["loop"]
    _, err = error(capsys, path)
    assert "analysis 'a' has no link with a force-deformation loop (links: dp, stop)" in err
    with h5py.File(path, "a") as h5:
        h5["analyses/a/links/dp"].attrs["loop"] = _strings(["elongation", "moment"])
    _, err = error(capsys, path, "--link", "dp")
    assert "its 'loop' attribute ['elongation', 'moment'] does not name two of its series" in err


def test_no_full_cycle_still_writes_the_curve(capsys, ellipse_file, tmp_path):
    """Up to 0.9 T the elongation reverses twice (maximum, minimum): no full cycle; the
    figure and the (empty) table are written, and the exit code is 2."""
    figure_path, table = tmp_path / "half.svg", tmp_path / "half.csv"
    out, err = error(capsys, ellipse_file, "--end", 0.9 * PERIOD, "-o", figure_path,
                     "--csv", table)
    assert "no full cycle" in err and "'elongation' reverses 2 times" in err
    assert f"wrote {figure_path}" in out and figure_path.stat().st_size > 1000
    assert table.read_text().count("\n") == 1
    loops = loops_of(ellipse_file, end=0.9 * PERIOD)
    (line,) = hysteresis.figure(loops).axes[0].lines
    assert len(line.get_xydata()) == int(0.9 * STEPS) + 1 and line.get_label() == "no full cycle"


def test_bad_options(capsys, ellipse_file, tmp_path):
    _, err = error(capsys, ellipse_file, "--reversal", "1.5")
    assert "--reversal: expected a fraction between 0 and 1" in err
    _, err = error(capsys, ellipse_file, "-o", tmp_path / "x.jpg")
    assert "unsupported suffix '.jpg'" in err


def test_help(capsys):
    code, out, _ = post(capsys, "--help")
    assert code == 0 and "--link NAME" in out and "--reversal X" in out and "oint F du" in out
    assert main(["help"]) == 0 and "hysteresis" in capsys.readouterr().out


# -- a real run --------------------------------------------------------------------------------

def test_a_power_law_damper_dissipates_the_closed_form_per_cycle(capsys, tmp_path):
    """A damper of exponent 0.5 under an imposed elongation u0 sin(w t), 400 steps a period:
    each full cycle's loop area is lambda(alpha) c w^alpha u0^(1 + alpha) (rel. 2e-3), and
    the energy the analysis dissipated over it."""
    from test_damper import PERIOD as DAMPER_PERIOD
    from test_damper import energy_per_cycle, study
    from test_maxwell import run

    data = run(tmp_path, study("physical", "newmark", 0.5, DAMPER_PERIOD / 400))["a"]
    path = tmp_path / "study.h5"
    loops = loops_of(path)
    assert loops.series == ("elongation", "force") and len(loops.cycles) == 2
    t, dissipated = data["time"], data["energy/dissipated"]
    for cycle in loops.cycles:
        assert cycle.end - cycle.start == pytest.approx(DAMPER_PERIOD, rel=1e-9)
        assert cycle.area == pytest.approx(energy_per_cycle(0.5), rel=2e-3)
        taken = np.interp(cycle.end, t, dissipated) - np.interp(cycle.start, t, dissipated)
        assert cycle.area == pytest.approx(taken, rel=1e-3)
    code, out, _ = post(capsys, path, "--csv", tmp_path / "damper.csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "damper.csv").read_text())))
    # the units the law declares for its series, which fem writes with them
    # (a damper keeps no dissipated series)
    assert rows[0][3:] == ["elongation min [m]", "elongation max [m]", "force min [N]",
                           "force max [N]", "loop area [J]"]
    assert np.array(rows[1:], float)[:, 7] == pytest.approx(energy_per_cycle(0.5), rel=2e-3)
