"""fem post: every subcommand on a real run of studies/v3_chain3.toml and on synthetic files
with known contents (links, events, energy, modes, sweeps)."""

from __future__ import annotations

import csv
import io
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest

import postpro
from fem.results import ResultsWriter
from postpro.cli import main
from postpro.jobs.plot import bucket_extrema, decimate, line_positions
from postpro.jobs.series import write_series
from postpro.jobs.shocks import link_shocks

ROOT = Path(__file__).resolve().parents[1]
V3_STUDY = ROOT / "studies" / "v3_chain3.toml"
V3_N3_DX_019 = 0.0029334  # m, reference displacement of N3 at t = 0.19 s (study check)

# synthetic file: 3 nodes on X, DX and DY each; 1001 instants 1 ms apart
NODES = ["N1", "N2", "N3"]
DOF_NODE = [0, 0, 1, 1, 2, 2]
DOF_COMPONENT = ["DX", "DY"] * 3
DT = 1e-3
TIME = DT * np.arange(1001)
PEAK = 1000.0                    # N, peak of the triangular force pulses of link "stop"
HALF_WIDTH = 10                  # instants from the peak of a pulse to its zero
PULSE_CENTRES = (200, 600, 850)  # instant indices of the three pulses
SLIDING = 0.5                    # m/s, sliding velocity of link "stop"
STIFFNESS = 1e6                  # N/m
GAP_EVENTS = [(0.1, "impact", "gap", ""), (0.15, "separation", "gap", ""),
              (0.7, "impact", "gap", ""), (0.76, "separation", "gap", ""),
              (0.95, "impact", "gap", "")]
FREQUENCIES = np.array([2.0, 5.0, 8.0])


def displacement(t):
    """(nt, 6): N1 fixed; N2 DX sin(2 pi t) mm, N2 DY 2t; N3 DX cos(2 pi t) mm, N3 DY t^2."""
    z = 0 * t
    return np.column_stack([z, z, 1e-3 * np.sin(2 * np.pi * t), 2 * t,
                            1e-3 * np.cos(2 * np.pi * t), t**2])


def velocity(t):
    z = 0 * t
    return np.column_stack([z, z, 2e-3 * np.pi * np.cos(2 * np.pi * t), 2 + z,
                            -2e-3 * np.pi * np.sin(2 * np.pi * t), 2 * t])


def stop_force():
    """Triangular pulses on the instant grid: zero exactly outside the 19 instants of each."""
    index = np.arange(len(TIME))
    force = np.zeros(len(TIME))
    for centre in PULSE_CENTRES:
        force += PEAK * np.maximum(0.0, 1.0 - np.abs(index - centre) / HALF_WIDTH)
    return force


def gap_state():
    closed = np.zeros(len(TIME))
    for start, end in ((100, 150), (700, 760), (950, 1001)):
        closed[start:end] = 1.0
    return closed


def energies(t):
    """Balance residual 0.05 t against an external work t: global error exactly 0.05."""
    return {"energy/kinetic": 1.0 + 0.25 * t, "energy/potential": 0.25 * t,
            "energy/link_energy": 0.25 * t, "energy/dissipated": 0.3 * t,
            "energy/external_work": t}


def new_writer(path, title="synthetic chain"):
    return ResultsWriter(path, title=title, study_source="",
                         node_names=NODES, coordinates=[[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                         dof_node=DOF_NODE, dof_component=DOF_COMPONENT,
                         dof_imposed=[True, True, False, False, False, False])


def write_transient(writer, name, time=TIME, offset=0.0, links=True):
    analysis = writer.analysis(name, "transient", basis="physical", scheme="newmark")
    columns = {"displacement": 6, "velocity": 6}
    if links:
        columns.update({"links/stop/normal_force": 0, "links/stop/penetration": 0,
                        "links/stop/state": 0, "links/stop/sliding_velocity": 0,
                        "links/gap/normal_force": 0, "links/gap/state": 0})
        columns.update({key: 0 for key in energies(time)})
    series = analysis.series(columns)
    force, closed = stop_force(), gap_state()
    for block in np.array_split(np.arange(len(time)), 4):
        t = time[block]
        rows = {"time": t, "displacement": displacement(t) + offset, "velocity": velocity(t)}
        if links:
            rows.update({"links/stop/normal_force": force[block],
                         "links/stop/penetration": force[block] / STIFFNESS,
                         "links/stop/state": (force[block] > 0) * 1.0,
                         "links/stop/sliding_velocity": SLIDING + 0 * t,
                         "links/gap/normal_force": 200.0 * closed[block],
                         "links/gap/state": closed[block]})
            rows.update(energies(t))
        series.append(**rows)
    if links:
        analysis.link("stop", stiffness=STIFFNESS)
        analysis.events(GAP_EVENTS + [(0.2, "stick", "stop", "")])
    analysis.finish(steps=len(time) - 1, wall_time_s=0.1)


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    """Transients 'shock' and 'calm', modes, a sweep, a failed and an unfinished analysis."""
    path = tmp_path_factory.mktemp("synthetic") / "synthetic.h5"
    writer = new_writer(path)
    write_transient(writer, "shock")
    write_transient(writer, "calm", offset=1e-4, links=False)
    modes = writer.analysis("modes", "modes")
    modes.dataset("frequency", FREQUENCIES, "Hz")
    # mode 1: N2 DX 0.5, N3 DX 1; mode 2: N2 DX 1, N3 DX -0.5; mode 3: N2 DY 2, N3 DY 2
    modes.dataset("shapes", np.array([[0, 0, 0.5, 0, 1.0, 0], [0, 0, 1.0, 0, -0.5, 0],
                                      [0, 0, 0, 2.0, 0, 2.0]]))
    modes.finish()
    sweep = writer.analysis("sweep", "harmonic")
    f = np.linspace(1.0, 10.0, 91)
    sweep.dataset("frequency", f)
    sweep.dataset("displacement", np.outer(1 / (1 - (f / 5.0) ** 2 + 0.1j * f / 5.0),
                                           np.arange(6)))
    sweep.finish()
    broken = writer.analysis("broken", "transient")
    broken.series({"displacement": 6}).append(time=TIME[:3], displacement=displacement(TIME[:3]))
    broken.finish(status="failed", message="singular matrix at t=0.002 s")
    pending = writer.analysis("pending", "transient")  # never finished: status "running"
    pending.series({"displacement": 6}).append(time=TIME[:2], displacement=displacement(TIME[:2]))
    writer.close(complete=True)
    return path


@pytest.fixture(scope="session")
def v3(tmp_path_factory):
    """Results of studies/v3_chain3.toml, run once per session."""
    from fem.runner import run_study

    out = tmp_path_factory.mktemp("v3") / "v3.h5"
    run_study(V3_STUDY, out)
    return out


@pytest.fixture(scope="session")
def v3_again(tmp_path_factory):
    from fem.runner import run_study

    out = tmp_path_factory.mktemp("v3_again") / "v3_again.h5"
    run_study(V3_STUDY, out)
    return out


def post(capsys, *args):
    """Run ``fem post ARGS`` in-process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], np.array(rows[1:], dtype=float)


def png_pixels(path):
    """The image as an (H, W, channels) float array."""
    import matplotlib.image

    return matplotlib.image.imread(path)


# -- series ---------------------------------------------------------------------------------

def test_series_csv_matches_the_reference_at_019(capsys, v3):
    code, out, err = post(capsys, "series", v3, "--analysis", "newmark", "--node", "N3",
                          "--component", "DX")
    assert code == 0 and err == ""
    header, data = read_csv(out)
    assert header == ["time [s]", "N3 DX displacement [m]"]
    assert len(data) == 2501 and data[0, 0] == 0.0 and data[-1, 0] == pytest.approx(2.5)
    row = int(np.argmin(np.abs(data[:, 0] - 0.19)))
    assert data[row, 0] == pytest.approx(0.19, abs=1e-12)
    assert data[row, 1] == pytest.approx(V3_N3_DX_019, rel=5e-3)


def test_series_window_product_and_output_file(capsys, v3, tmp_path):
    out_file = tmp_path / "n.csv"
    code, out, _ = post(capsys, "series", v3, "-a", "newmark", "-n", "N3", "-n", "N2", "-c",
                        "DX", "-f", "displacement", "-f", "velocity", "--start", "0.1",
                        "--end", "0.2", "--digits", "17", "-o", out_file)
    assert code == 0 and out == ""
    header, data = read_csv(out_file.read_text())
    assert header == ["time [s]", "N3 DX displacement [m]", "N2 DX displacement [m]",
                      "N3 DX velocity [m/s]", "N2 DX velocity [m/s]"]
    assert data.shape == (101, 5)  # 0.100 .. 0.200 s inclusive, 1 ms apart
    with postpro.open(v3) as results:
        t, v = results.analysis("newmark").series("velocity", "N2", "DX", 0.1, 0.2)
    assert np.array_equal(data[:, 0], t) and np.array_equal(data[:, 4], v)  # 17 digits: exact


def test_series_pairs_repeated_nodes_and_components(capsys, synthetic):
    code, out, _ = post(capsys, "series", synthetic, "-a", "shock", "-n", "N2", "-n", "N3",
                        "-c", "DY", "-c", "DX", "--start", "0.5", "--end", "0.5")
    assert code == 0
    header, data = read_csv(out)
    assert header[1:] == ["N2 DY displacement [m]", "N3 DX displacement [m]"]
    assert data[0].tolist() == pytest.approx([0.5, 1.0, -1e-3], rel=1e-12)


def test_series_default_columns_are_every_dof_of_a_node(capsys, synthetic):
    code, out, _ = post(capsys, "series", synthetic, "-a", "shock", "-n", "N3", "--end", "0.01")
    header, data = read_csv(out)
    assert header[1:] == ["N3 DX displacement [m]", "N3 DY displacement [m]"]
    assert data.shape == (11, 3) and data[10, 2] == pytest.approx(1e-4, rel=1e-12)


def test_series_blocks_give_the_same_text_as_one_read(synthetic):
    with postpro.open(synthetic) as results:
        analysis = results.analysis("shock")
        whole, blocks = io.StringIO(), io.StringIO()
        dofs = [("N2", "DX"), ("N3", "DY")]
        n = write_series(whole, analysis, ["displacement", "velocity"], dofs)
        m = write_series(blocks, analysis, ["displacement", "velocity"], dofs, rows=7)
    assert n == m == 1001
    assert whole.getvalue() == blocks.getvalue()


def test_block_readers_match_the_whole_window(synthetic):
    with postpro.open(synthetic) as results:
        shock = results.analysis("shock")
        dofs = [("N3", "DY"), ("N2", "DX")]
        assert shock.window(0.25, 0.5) == (250, 501)
        t, whole = shock.columns("velocity", dofs, 0.25, 0.5)
        parts = list(shock.blocks("velocity", dofs, 0.25, 0.5, rows=7, step=3))
        assert [len(pt) for pt, _ in parts[:3]] == [2, 2, 2]  # 7 rows span 2 strides of 3
        assert np.array_equal(np.concatenate([pt for pt, _ in parts]), t[::3])
        assert np.array_equal(np.concatenate([pv for _, pv in parts]), whole[::3])
        links = list(shock.link_blocks("stop", rows=100))
        assert len(links) == 11 and sum(len(b["time"]) for b in links) == 1001
        assert np.array_equal(np.concatenate([b["normal_force"] for b in links]), stop_force())
        assert shock.link_series_names("gap") == ("normal_force", "state")
        assert results.cells is None


def test_series_of_a_sweep_gives_amplitude_and_phase(capsys, synthetic):
    code, out, _ = post(capsys, "series", synthetic, "-a", "sweep", "-n", "N3", "-c", "DX",
                        "--start", "5", "--end", "5")
    header, data = read_csv(out)
    assert header == ["frequency [Hz]", "N3 DX displacement amplitude [m]",
                      "N3 DX displacement phase [deg]"]
    # at f = 5 Hz the response is 4 / (0.1 j): amplitude 40, phase -90 deg
    assert data[0].tolist() == pytest.approx([5.0, 40.0, -90.0], rel=1e-9)


# -- plot -----------------------------------------------------------------------------------

def assert_figure(path, width, height):
    image = png_pixels(path)
    assert image.shape[:2] == (height, width)
    # a figure with axes, curves and text: a good share of the pixels are not background
    dark = np.mean(image[:, :, :3], axis=2) < 0.9
    assert 0.01 < dark.mean() < 0.5
    assert path.stat().st_size > 10_000


def test_plot_time_png_has_the_requested_pixel_size(capsys, v3, tmp_path):
    out = tmp_path / "time.png"
    code, stdout, _ = post(capsys, "plot", v3, "-a", "newmark", "-n", "N3", "-n", "N2", "-c",
                           "DX", "-f", "displacement", "-f", "velocity", "--size", "900x500",
                           "-o", out)
    assert code == 0 and stdout.strip() == f"wrote {out}"
    assert_figure(out, 900, 500)


@pytest.mark.parametrize("kind, extra", [
    ("phase", ["-a", "newmark", "-n", "N3", "-c", "DX"]),
])
def test_plot_phase_on_v3(capsys, v3, tmp_path, kind, extra):
    out = tmp_path / f"{kind}.png"
    code, _, err = post(capsys, "plot", v3, "--kind", kind, *extra, "--size", "640x640",
                        "-o", out)
    assert code == 0, err
    assert_figure(out, 640, 640)


@pytest.mark.parametrize("kind, extra", [
    ("time", ["-a", "shock", "-a", "calm", "-n", "N2", "-c", "DX"]),
    ("frf", ["-a", "sweep", "-n", "N2", "-n", "N3", "-c", "DX"]),
    ("modes", ["-a", "modes", "-c", "DX"]),
    ("link", ["-a", "shock", "--link", "stop"]),
])
def test_plot_kinds_on_synthetic(capsys, synthetic, tmp_path, kind, extra):
    out = tmp_path / f"{kind}.png"
    code, _, err = post(capsys, "plot", synthetic, "--kind", kind, *extra, "--size", "800x600",
                        "-o", out)
    assert code == 0, err
    assert_figure(out, 800, 600)


def test_plot_svg_and_pdf_by_suffix(capsys, synthetic, tmp_path):
    for suffix, magic in ((".svg", b"<?xml"), (".pdf", b"%PDF")):
        out = tmp_path / f"time{suffix}"
        code, _, _ = post(capsys, "plot", synthetic, "-a", "shock", "-n", "N2", "-c", "DX",
                          "-o", out)
        assert code == 0 and out.read_bytes()[:len(magic)] == magic


def test_time_plot_marks_events_by_kind(synthetic, tmp_path):
    from postpro.jobs.plot import _time

    class Args:
        analysis, field, node, component = ["shock"], [], ["N2"], ["DX"]
        start = end = None
        allow_incomplete = no_events = False
        dpi = 100

    with postpro.open(synthetic) as results:
        figure = _time(results, Args, (800, 600))
    (ax,) = figure.axes
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    # 3 impacts and 2 separations of link gap, 1 stick of link stop
    assert labels == ["N2 DX", "impact (3)", "separation (2)", "stick (1)"]
    segments = sum(len(c.get_segments()) for c in ax.collections)
    assert segments == 6


def test_mode_shapes_one_panel_per_component_that_moves(synthetic):
    from postpro.jobs.plot import _modes

    class Args:
        analysis, mode, node, component = ["modes"], [], [], []
        allow_incomplete = False
        dpi = 100

    with postpro.open(synthetic) as results:
        figure = _modes(results, Args, (800, 600))
    dx, dy = figure.axes
    # the last line of each panel is the zero line
    assert [line.get_label() for line in dx.get_lines()[:-1]] == ["mode 1, 2 Hz", "mode 2, 5 Hz"]
    assert [line.get_label() for line in dy.get_lines()[:-1]] == ["mode 3, 8 Hz"]
    assert dx.get_lines()[1].get_ydata().tolist() == [0.0, 1.0, -0.5]  # scaled to max |.| = 1
    assert dy.get_lines()[0].get_ydata().tolist() == [0.0, 1.0, 1.0]
    assert dy.get_ylabel() == "DY (shape, max |.| = 1)"
    assert dy.get_xlabel() == "position along X [m]"


def test_decimation_keeps_the_extremes_of_every_bucket():
    t = np.arange(100_000) * 1e-3
    y = np.sin(t)
    y[12_345], y[77_777] = 5.0, -7.0
    values = np.column_stack([y, -2 * y])

    def blocks(rows):
        for first in range(0, len(t), rows):
            yield t[first:first + rows], values[first:first + rows]

    curves = decimate(blocks, len(t), 500)
    assert len(curves) == 2
    for (tk, yk), column in zip(curves, values.T):
        assert len(tk) <= 2 * 500 and np.all(np.diff(tk) >= 0)
        assert yk.max() == column.max() and yk.min() == column.min()
    assert curves[0][0][np.argmax(curves[0][1])] == t[12_345]
    joint_t, joint_v = decimate(blocks, len(t), 500, joint=True)
    assert len(joint_t) <= 4 * 500 and joint_v[:, 0].min() == -7.0


def test_bucket_extrema_orders_the_two_rows():
    values = np.array([[3.0], [1.0], [2.0], [0.0], [5.0], [4.0], [9.0]])
    first, second = bucket_extrema(values, 3)
    # buckets [3 1 2] [0 5 4] [9]: rows of (max, min) in time order
    assert first[:, 0].tolist() == [0, 3, 6] and second[:, 0].tolist() == [1, 4, 6]


def test_line_positions_follow_the_principal_direction():
    positions, name = line_positions(np.array([[2.0, 0, 0], [0, 0, 0], [1, 0, 0]]))
    assert name == "X" and positions.tolist() == [2.0, 0.0, 1.0]
    positions, name = line_positions(np.array([[0.0, 0, 0], [3, 4, 0]]))
    assert name == "the line" and positions.tolist() == pytest.approx([0.0, 5.0])


# -- check ----------------------------------------------------------------------------------

def test_check_with_the_study_file_passes(capsys, v3):
    code, out, _ = post(capsys, "check", v3, V3_STUDY)
    found = re.search(r"^(\d+) passed, (\d+) failed$", out, re.MULTILINE)
    assert code == 0 and found and int(found[1]) >= 25 and found[2] == "0"


def test_check_exit_1_when_a_check_fails(capsys, v3, tmp_path):
    checks = tmp_path / "checks.toml"
    checks.write_text('[[check]]\nanalysis = "newmark"\nquantity = "displacement"\n'
                      'node = "N3"\ncomponent = "DX"\ntime = 0.19\nreference = 0.0029334\n'
                      'tolerance = 5e-3\n\n'
                      '[[check]]\nanalysis = "newmark"\nquantity = "displacement"\n'
                      'node = "N3"\ncomponent = "DX"\ntime = 0.19\nreference = 0.0031\n')
    code, out, _ = post(capsys, "check", v3, checks)
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert lines[1].endswith(" OK") and lines[2].endswith(" NOOK")


def test_check_without_toml_reprints_the_stored_checks(capsys, v3):
    code, out, _ = post(capsys, "check", v3)
    assert code == 0 and re.search(r"^\d+ passed, 0 failed$", out, re.MULTILINE)


# -- energy ---------------------------------------------------------------------------------

def test_energy_table_and_balance_error(capsys, synthetic):
    code, out, _ = post(capsys, "energy", synthetic, "-a", "shock", "--every", "100")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["time", "[s]", "kinetic", "[J]", "potential", "[J]", "link",
                                "[J]", "dissipated", "[J]", "external", "work", "[J]",
                                "balance", "[J]"]
    rows = np.array([line.split() for line in lines[2:-1]], dtype=float)
    assert rows.shape == (11, 7)
    assert rows[:, 0] == pytest.approx(np.arange(11) / 10, abs=1e-12)
    assert rows[-1] == pytest.approx([1.0, 1.25, 0.25, 0.25, 0.3, 1.0, 0.05], rel=1e-8)
    error = float(re.fullmatch(r"energy balance error: (\S+) .*", lines[-1])[1])
    assert error == pytest.approx(0.05, rel=1e-6)


def test_energy_csv_output(capsys, synthetic, tmp_path):
    out_file = tmp_path / "energy.csv"
    code, out, _ = post(capsys, "energy", synthetic, "-a", "shock", "--start", "0.5", "-o",
                        out_file)
    header, data = read_csv(out_file.read_text())
    assert code == 0 and header[-1] == "balance [J]" and data.shape == (501, 7)
    assert data[:, 6] == pytest.approx(0.05 * data[:, 0], rel=1e-8)
    assert out.startswith("energy balance error: 0.05 ")


# -- shocks ---------------------------------------------------------------------------------

def test_shock_statistics_from_the_state_series(synthetic):
    with postpro.open(synthetic) as results:
        stop = link_shocks(results.analysis("shock"), "stop")
        blocks = link_shocks(results.analysis("shock"), "stop", rows=7)
    assert stop.source == "series" and stop.impacts == 3 and stop.contacts == 3
    contact = 2 * HALF_WIDTH - 1  # instants of non-zero force per pulse
    assert stop.contact_time == pytest.approx(3 * contact * DT, rel=1e-9)
    assert stop.impulse == pytest.approx(3 * PEAK * HALF_WIDTH * DT, rel=1e-9)  # 30 N.s
    assert stop.max_force == PEAK
    assert stop.mean_force == pytest.approx(PEAK * HALF_WIDTH / contact, rel=1e-12)
    assert stop.rms_force == pytest.approx(PEAK * math.sqrt(6.7 / contact), rel=1e-12)
    assert stop.shocks_per_second == pytest.approx(3.0, rel=1e-9)
    assert stop.wear_power == pytest.approx(SLIDING * 30.0, rel=1e-9)
    assert blocks == stop  # block boundaries change nothing
    # contact instants sum (k from -9 to 9) of (1 - |k| / 10)^2 = 6.7


def test_shock_statistics_from_events(synthetic):
    with postpro.open(synthetic) as results:
        gap = link_shocks(results.analysis("shock"), "gap")
    assert gap.source == "events" and gap.impacts == 3 and gap.contacts == 3
    assert gap.contact_time == pytest.approx(0.05 + 0.06 + 0.05, rel=1e-12)
    assert gap.wear_power is None and gap.max_force == 200.0


def test_shocks_table_and_csv(capsys, synthetic, tmp_path):
    out_file = tmp_path / "shocks.csv"
    code, out, _ = post(capsys, "shocks", synthetic, "-a", "shock", "-o", out_file)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out_file.read_text())))
    assert [row["link"] for row in rows] == ["gap", "stop"]
    stop = rows[1]
    assert int(stop["impacts"]) == 3 and float(stop["impulse [N.s]"]) == pytest.approx(30.0)
    assert float(stop["contact time [s]"]) == pytest.approx(0.057)
    assert rows[0]["wear power [W]"] == "n/a" and rows[0]["impacts from"] == "events"
    assert "n/a" in out.splitlines()[2] and out.splitlines()[3].split()[1] == "3"


def test_shocks_in_a_window(capsys, synthetic):
    with postpro.open(synthetic) as results:
        stop = link_shocks(results.analysis("shock"), "stop", start=0.5, end=1.0)
    assert stop.impacts == 2 and stop.impulse == pytest.approx(20.0, rel=1e-9)


# -- compare --------------------------------------------------------------------------------

def test_compare_two_runs_is_zero(capsys, v3, v3_again):
    code, out, _ = post(capsys, "compare", v3, v3_again, "--tolerance", "0")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[2:]]
    assert {"displacement", "velocity", "acceleration"} <= \
        {row[1] for row in rows if row[0] == "newmark"}
    for row in rows:  # every analysis of the study, every quantity (the note column empty)
        assert float(row[-3]) == 0.0 and float(row[-2]) == 0.0


def _pair(tmp_path, offset_row=None, time_b=TIME):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    writer = new_writer(a)
    write_transient(writer, "shock", links=False)
    writer.close(complete=True)
    writer = new_writer(b)
    analysis = writer.analysis("shock", "transient")
    values = displacement(time_b)
    if offset_row is not None:
        values[offset_row, 2] += 2e-5
    analysis.series({"displacement": 6, "velocity": 6}).append(
        time=time_b, displacement=values, velocity=velocity(time_b))
    analysis.finish()
    writer.close(complete=True)
    return a, b


def test_compare_finds_the_largest_difference_and_its_place(capsys, tmp_path):
    a, b = _pair(tmp_path, offset_row=250)
    code, out, _ = post(capsys, "compare", a, b)
    assert code == 0
    (row,) = [line for line in out.splitlines() if " displacement " in line]
    assert "N2 DX at 0.25 s" in row
    cells = row.split()
    assert float(cells[4]) == pytest.approx(2e-5, rel=1e-3)
    assert float(cells[5]) == pytest.approx(2e-5 / 1e-3, rel=1e-3)  # peak of N2 DX is 1 mm
    code, _, _ = post(capsys, "compare", a, b, "--tolerance", "0.019")
    assert code == 1
    code, _, _ = post(capsys, "compare", a, b, "--tolerance", "0.021")
    assert code == 0


def test_compare_modes_and_analyses_in_one_file_only(capsys, tmp_path):
    paths = []
    for name, frequencies, extra in (("a", [2.0, 5.0], False), ("b", [2.0, 5.1, 9.0], True)):
        path = tmp_path / f"{name}.h5"
        writer = new_writer(path)
        modes = writer.analysis("modes", "modes")
        modes.dataset("frequency", frequencies, "Hz")
        modes.finish()
        if extra:
            writer.analysis("extra", "modes").dataset("frequency", [1.0])
        writer.close(complete=True)
        paths.append(path)
    code, out, _ = post(capsys, "compare", *paths, "--tolerance", "0.01")
    assert code == 1
    lines = out.splitlines()
    frequency = lines[2].split()
    assert frequency[:4] == ["modes", "frequency", "1", "2"]
    assert float(frequency[4]) == pytest.approx(0.1) and float(frequency[5]) == 0.02
    assert frequency[6:] == ["mode", "2", "first", "2", "modes", "(2", "in", "A,", "3", "in",
                             "B)"]
    assert lines[3].split() == ["extra", "-", "0", "0", "-", "-", "-", "only", "in", "B"]


def test_compare_interpolates_b_on_the_times_of_a(capsys, tmp_path):
    # N2 DY = 2t and N3 DY = t^2 sampled every 2 ms in B: linear interpolation is exact for
    # 2t and off by at most (2 ms)^2 / 4 = 1e-6 m for t^2
    a, b = _pair(tmp_path, time_b=TIME[::2])
    code, out, _ = post(capsys, "compare", a, b)
    (row,) = [line for line in out.splitlines() if " displacement " in line]
    assert code == 0 and "B interpolated on A's 1001 instants" in row
    assert float(row.split()[4]) == pytest.approx(1e-6, rel=1e-6)


# -- export ---------------------------------------------------------------------------------

def test_export_xdmf_references_existing_datasets_with_the_right_vectors(capsys, synthetic,
                                                                          tmp_path):
    out = tmp_path / "shock.xmf"
    code, stdout, _ = post(capsys, "export", synthetic, "-a", "shock", "--every", "100",
                           "-f", "displacement", "-f", "velocity", "-o", out)
    assert code == 0 and "11 instants, 3 nodes" in stdout
    root = ET.parse(out).getroot()  # well-formed XML
    grids = root.findall("./Domain/Grid/Grid")
    assert len(grids) == 11
    assert [float(g.find("Time").get("Value")) for g in grids] == \
        pytest.approx(np.arange(11) / 10, abs=1e-12)
    topology = grids[0].find("Topology")
    assert topology.get("TopologyType") == "Polyvertex" and topology.get("NumberOfElements") == "3"
    with h5py.File(tmp_path / "shock.h5", "r") as store:
        for item in root.iter("DataItem"):
            name, dataset = item.text.strip().split(":")
            assert name == "shock.h5" and dataset in store
            assert list(store[dataset].shape) == [int(d) for d in item.get("Dimensions").split()]
        reference = grids[5].find("Attribute[@Name='displacement']/DataItem").text
        vectors = store[reference.split(":")[1]][()]
    t = 0.5
    expected = np.array([[0, 0, 0], [1e-3 * np.sin(2 * np.pi * t), 2 * t, 0],
                         [1e-3 * np.cos(2 * np.pi * t), t * t, 0]])
    assert vectors == pytest.approx(expected, abs=1e-15)


def test_export_xdmf_with_cells_reads_back_with_meshio(capsys, tmp_path):
    import meshio

    a, _ = _pair(tmp_path)
    with h5py.File(a, "a") as f:  # a format 1 file: its SEG2 cells as one dataset, no names
        del f["mesh/cells"], f["mesh/cell_names"]
        f.attrs["format_version"] = 1
        f["mesh/cells"] = np.array([[0, 1], [1, 2]], dtype=np.int32)
    with postpro.open(a) as results:
        assert results.cell_names("SEG2") == ("SEG2_1", "SEG2_2")
        assert results.node_groups == {} and list(results.cell_blocks) == ["SEG2"]
    out = tmp_path / "lines.xmf"
    code, _, _ = post(capsys, "export", a, "--every", "500", "-o", out)
    assert code == 0
    topology = ET.parse(out).getroot().find("./Domain/Grid/Grid/Topology")
    assert (topology.get("TopologyType"), topology.get("NumberOfElements"),
            topology.get("NodesPerElement")) == ("Polyline", "2", "2")
    reader = meshio.xdmf.TimeSeriesReader(out)
    points, cells = reader.read_points_cells()
    assert cells[0].type == "line" and cells[0].data.tolist() == [[0, 1], [1, 2]]
    assert reader.num_steps == 3
    t, point_data, _ = reader.read_data(2)
    assert t == 1.0
    assert point_data["displacement"][1] == pytest.approx([0.0, 2.0, 0.0], abs=1e-15)


def test_export_vtu_series(capsys, synthetic, tmp_path):
    import meshio

    out = tmp_path / "shock.pvd"
    code, _, _ = post(capsys, "export", synthetic, "-a", "shock", "--format", "vtu",
                      "--start", "0.25", "--end", "0.75", "--every", "250", "-o", out)
    assert code == 0
    entries = ET.parse(out).getroot().findall("./Collection/DataSet")
    assert [float(e.get("timestep")) for e in entries] == pytest.approx([0.25, 0.5, 0.75])
    mesh = meshio.read(tmp_path / entries[2].get("file"))
    assert mesh.points.shape == (3, 3)
    assert mesh.point_data["displacement"][2] == pytest.approx(
        [1e-3 * np.cos(1.5 * np.pi), 0.5625, 0.0], abs=1e-15)


# -- info -----------------------------------------------------------------------------------

def test_info_lists_fields_links_events_energy_and_checks(capsys, synthetic, v3):
    code, out, _ = post(capsys, "info", synthetic)
    assert code == 0
    lines = out.splitlines()
    with postpro.open(synthetic) as results:
        assert lines[:len(results.describe().splitlines())] == results.describe().splitlines()
    at = lines.index("analysis shock:")
    assert lines[at + 1:at + 6] == [
        "    fields: displacement [m], velocity [m/s]",
        "    instants: 1001 (0 .. 1 s)",
        "    links: gap, stop",
        "    events: 6",
        "    energy: dissipated, external_work, kinetic, link_energy, potential"]
    assert "    modes: 3 (2 .. 8 Hz)" in lines
    assert lines[-1] == "checks: none stored"
    code, out, _ = post(capsys, "info", v3)
    assert re.search(r"^checks: (\d+) stored, \1 passed, 0 failed$", out, re.MULTILINE)


# -- errors ---------------------------------------------------------------------------------

def _error(capsys, *args):
    code, out, err = post(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err.strip()


def test_error_missing_file(capsys, tmp_path):
    err = _error(capsys, "series", tmp_path / "none.h5")
    assert "does not exist" in err and "none.h5" in err


def test_error_not_a_results_file(capsys, tmp_path):
    text = tmp_path / "notes.h5"
    text.write_text("not hdf5")
    assert "is not an HDF5 file" in _error(capsys, "info", text)
    plain = tmp_path / "plain.h5"
    with h5py.File(plain, "w") as f:
        f["x"] = 1.0
    assert "is not a fem results file" in _error(capsys, "series", plain)


def test_error_unknown_node_component_analysis_field(capsys, synthetic):
    assert "unknown node 'N9'" in _error(capsys, "series", synthetic, "-a", "shock", "-n", "N9")
    assert "node 'N2' has no component 'DZ'" in _error(capsys, "series", synthetic, "-a",
                                                       "shock", "-n", "N2", "-c", "DZ")
    assert "no analysis 'nope'" in _error(capsys, "plot", synthetic, "-a", "nope")
    assert "unknown field 'strain'" in _error(capsys, "series", synthetic, "-a", "shock",
                                              "-f", "strain")
    assert "did not archive 'acceleration'" in _error(capsys, "series", synthetic, "-a",
                                                      "shock", "-f", "acceleration")


def test_error_failed_analysis(capsys, synthetic):
    err = _error(capsys, "series", synthetic, "-a", "broken", "-n", "N2")
    assert "analysis 'broken'" in err and "failed: singular matrix at t=0.002 s" in err
    assert "--allow-incomplete" in err
    code, out, _ = post(capsys, "series", synthetic, "-a", "broken", "-n", "N2", "-c", "DX",
                        "--allow-incomplete")
    assert code == 0 and len(out.splitlines()) == 4


def test_error_unfinished_analysis(capsys, synthetic):
    err = _error(capsys, "plot", synthetic, "-a", "pending")
    assert "analysis 'pending'" in err and "did not finish (status 'running'" in err


def test_error_ambiguous_default_analysis_and_wrong_kind(capsys, synthetic):
    err = _error(capsys, "series", synthetic)
    assert err.endswith("holds 5 transient, harmonic or random analyses; name one with "
                        "--analysis: shock, calm, sweep, broken, pending")
    assert "analysis 'modes' is of kind 'modes'" in _error(capsys, "series", synthetic,
                                                           "-a", "modes")
    assert "analysis 'shock' is of kind 'transient'; this needs modes or complex_modes" in \
        _error(capsys, "plot", synthetic, "--kind", "modes", "-a", "shock")


def test_default_analysis_of_a_file_with_one(capsys, tmp_path):
    a, _ = _pair(tmp_path)
    code, out, _ = post(capsys, "series", a, "-n", "N3", "-c", "DY", "--start", "0.5",
                        "--end", "0.5")
    assert code == 0 and out.splitlines()[1] == "0.5,0.25"


def test_error_options(capsys, synthetic, v3, tmp_path):
    assert "invalid choice: 'bars'" in _error(capsys, "plot", synthetic, "--kind", "bars")
    assert "unsupported suffix '.jpg'" in _error(capsys, "plot", v3, "-o", tmp_path / "x.jpg")
    assert "give them as many times each" in _error(capsys, "series", synthetic, "-a", "shock",
                                                    "-n", "N2", "-n", "N3", "-c", "DX",
                                                    "-c", "DY", "-c", "DZ")
    assert "no archived instant within the window [5, 6]" in _error(
        capsys, "series", v3, "-a", "newmark", "-n", "N3", "--start", "5", "--end", "6")
    assert "argument --every: expected a positive integer, got 0" in _error(
        capsys, "energy", synthetic, "-a", "shock", "--every", "0")
    assert "argument --dpi: expected a positive integer, got 'many'" in _error(
        capsys, "plot", v3, "--dpi", "many")
    assert "required: SUB" in _error(capsys)
    assert "argument --start: expected a finite number, got nan" in _error(
        capsys, "series", v3, "-a", "newmark", "-n", "N3", "--start", "nan")
    assert "argument --end: expected a number, got 'soon'" in _error(
        capsys, "series", v3, "-a", "newmark", "-n", "N3", "--end", "soon")


def test_error_energy_absent_and_no_links(capsys, v3):
    assert "archived no energy" in _error(capsys, "energy", v3, "-a", "newmark")
    assert "archived no link series" in _error(capsys, "shocks", v3, "-a", "newmark")


def test_error_checks_file(capsys, v3, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[check]]\nquantity = 'displacement'\nreference = 1.0\n")
    assert "check[1]: missing key 'node'" in _error(capsys, "check", v3, bad)
    assert "does not exist" in _error(capsys, "check", v3, tmp_path / "none.toml")


def test_fem_post_entry_point_returns_the_exit_code(synthetic, tmp_path):
    fem = [sys.executable, "-m", "fem", "post"]
    done = subprocess.run(fem + ["series", str(synthetic), "-a", "shock", "-n", "N9"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: unknown node 'N9'")
    done = subprocess.run(fem + ["series", str(synthetic), "-a", "shock", "-n", "N3", "-c",
                                 "DY", "--start", "0.5", "--end", "0.5"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.splitlines()[1] == "0.5,0.25"


def test_a_run_stores_its_seg2_cells_and_the_export_draws_them_as_lines(capsys, tmp_path):
    """fem run writes the SEG2 cells of the mesh (the chain3 mesh: AC = N1-N2, CB = N2-N3),
    and the ParaView export of its file reads back with meshio as two lines."""
    import meshio

    from fem.cli import main as fem_main

    study = Path(__file__).resolve().parents[1] / "studies" / "v3_chain3.toml"
    results = tmp_path / "v3.h5"
    assert fem_main(["run", str(study), "--out", str(results), "--quiet"]) == 0
    with h5py.File(results, "r") as f:
        names = [n.decode() for n in f["mesh/node_names"][()]]
        cells = [[names[i] for i in row] for row in f["mesh/cells/SEG2"][()]]
        assert cells == [["N1", "N2"], ["N2", "N3"]]
        assert [n.decode() for n in f["mesh/cell_names/SEG2"][()]] == ["AC", "CB"]
        assert f.attrs["format_version"] == 2
    with postpro.open(results) as opened:
        assert opened.node_groups == {"MASSES": ("N2", "N3"), "CLAMP": ("N1",)}
        assert opened.cell_groups == {"SPRINGS": ("AC", "CB")}
    out = tmp_path / "export" / "lines.xmf"
    out.parent.mkdir()
    code, _, _ = post(capsys, "export", results, "--analysis", "newmark", "--every", "500",
                      "-o", out)
    assert code == 0
    points, blocks = meshio.xdmf.TimeSeriesReader(out).read_points_cells()
    assert blocks[0].type == "line" and blocks[0].data.tolist() == [[0, 1], [1, 2]]


_GROUNDED_PAIR = """
[study]
title = "a spring to the ground and a spring between two masses"
[mesh.nodes]
N1 = [0.0, 0.0, 0.0]
N2 = [{x2}, 0.0, 0.0]
[mesh.cells]
{cells}
[mesh.node_groups]
ALL = ["N1", "N2"]
[mesh.cell_groups]
SPRINGS = [{springs}]
[model]
components = ["DX"]
[[discrete]]
cells = ["G"]
stiffness = [4000.0, 0.0, 0.0]
[[discrete]]
{pair}
[[discrete]]
node_groups = ["ALL"]
mass = 2.0
[[load]]
name = "pull"
kind = "force"
nodes = ["N2"]
FX = 10.0
[[analysis]]
name = "shake"
kind = "transient"
scheme = "newmark"
end = 0.05
step = 1e-3
"""


def _grounded_pair(tmp_path, with_seg2=True):
    """Run the study above: POI1 cell G (k = 4000 N/m from the ground to N1) and, with
    ``with_seg2``, SEG2 cell S (k = 1000 N/m from N1 to N2), else POI1 cell H on N2."""
    from fem.cli import main as fem_main

    if with_seg2:
        text = _GROUNDED_PAIR.format(
            x2=1.0, cells='G = { type = "POI1", nodes = ["N1"] }\n'
                          'S = { type = "SEG2", nodes = ["N1", "N2"] }',
            springs='"G", "S"', pair='cells = ["S"]\nstiffness = [1000.0, 0.0, 0.0]')
    else:
        text = _GROUNDED_PAIR.format(
            x2=1.0, cells='G = { type = "POI1", nodes = ["N1"] }\n'
                          'H = { type = "POI1", nodes = ["N2"] }',
            springs='"G", "H"', pair='cells = ["H"]\nstiffness = [1000.0, 0.0, 0.0]')
    study = tmp_path / "pair.toml"
    study.write_text(text)
    results = tmp_path / "pair.h5"
    assert fem_main(["run", str(study), "--out", str(results), "--quiet"]) == 0
    return results


def test_the_results_file_holds_poi1_and_seg2_cells_and_the_groups(tmp_path):
    results = _grounded_pair(tmp_path)
    with postpro.open(results) as opened:
        assert opened.cell_blocks["POI1"].tolist() == [[0]]
        assert opened.cell_blocks["SEG2"].tolist() == [[0, 1]]
        assert opened.cell_names("POI1") == ("G",) and opened.cell_names("SEG2") == ("S",)
        assert opened.node_groups == {"ALL": ("N1", "N2")}
        assert opened.cell_groups == {"SPRINGS": ("G", "S")}


def test_export_writes_element_forces_as_cell_data_that_meshio_reads_back(capsys, tmp_path):
    """The axial force of S in the XDMF and VTU exports equals k (u2 - u1) from the exported
    displacements (N positive in tension) at every instant."""
    import meshio

    results = _grounded_pair(tmp_path)
    out = tmp_path / "view.xmf"
    code, _, stderr = post(capsys, "export", results, "--every", "10", "-o", out)
    assert code == 0, stderr
    reader = meshio.xdmf.TimeSeriesReader(out)
    points, cells = reader.read_points_cells()
    assert [(c.type, c.data.tolist()) for c in cells] == [("line", [[0, 1]])]
    assert reader.num_steps == 6
    checked = 0
    for k in range(reader.num_steps):
        t, point_data, cell_data = reader.read_data(k)
        u = point_data["displacement"][:, 0]
        force = cell_data["element_force_N"][0]
        assert force == pytest.approx([1000.0 * (u[1] - u[0])], rel=1e-12, abs=1e-12)
        checked += abs(force[0]) > 1.0
    assert checked >= 3  # the pull has stretched S at most instants
    pvd = tmp_path / "view.pvd"
    code, _, _ = post(capsys, "export", results, "--format", "vtu", "--every", "25",
                      "--field", "element_force", "-o", pvd)
    assert code == 0
    entries = ET.parse(pvd).getroot().findall("./Collection/DataSet")
    mesh = meshio.read(tmp_path / entries[-1].get("file"))
    with postpro.open(results) as opened:
        expected = opened.analysis("shake").force_at("element_force", "S", "N", 0.05)
    assert mesh.cell_data["element_force_N"][0] == pytest.approx([expected], rel=1e-12)
    assert mesh.point_data == {}


def test_export_of_a_mesh_without_seg2_draws_its_poi1_cells_with_their_forces(capsys,
                                                                               tmp_path):
    import meshio

    results = _grounded_pair(tmp_path, with_seg2=False)
    out = tmp_path / "points.xmf"
    code, _, _ = post(capsys, "export", results, "--every", "50", "-o", out)
    assert code == 0
    reader = meshio.xdmf.TimeSeriesReader(out)
    _, cells = reader.read_points_cells()
    assert [(c.type, c.data.ravel().tolist()) for c in cells] == [("vertex", [0, 1])]
    t, point_data, cell_data = reader.read_data(1)
    u = point_data["displacement"][:, 0]
    # G (4000 N/m) carries 4000 u1, H (1000 N/m) carries 1000 u2, from the ground
    assert cell_data["element_force_N"][0] == pytest.approx([4000.0 * u[0], 1000.0 * u[1]],
                                                            rel=1e-12)


def test_time_plot_draws_a_reaction_and_an_element_force_in_their_own_panels(v3, capsys,
                                                                              tmp_path):
    """V3: N1 carries no mass and no load, so the support's reaction there balances the
    force of AC alone: R(N1, FX) = -N(AC) (N positive in tension) at every instant."""
    from postpro.jobs.plot import _time

    class Args:
        analysis, field = ["newmark"], ["reaction", "element_force"]
        node, component, element = ["N1"], ["FX", "N"], ["AC"]
        start, end = 0.0, 1.0
        allow_incomplete = no_events = False
        dpi = 100

    with postpro.open(v3) as results:
        figure = _time(results, Args, (1000, 600))
        newmark = results.analysis("newmark")
        t, reaction = newmark.reaction("N1", "FX", 0.0, 1.0)
        _, axial = newmark.element_force("AC", "N", 0.0, 1.0)
    top, bottom = figure.axes[:2]
    assert top.get_ylabel() == "reaction [N]" and bottom.get_ylabel() == "element force [N]"
    (r_line,), (n_line,) = top.get_lines(), bottom.get_lines()
    assert r_line.get_label() == "N1 FX" and n_line.get_label() == "AC N"
    assert np.array_equal(r_line.get_xdata(), t) and np.array_equal(r_line.get_ydata(), reaction)
    assert np.array_equal(n_line.get_ydata(), axial)
    assert np.max(np.abs(axial)) > 1.0
    assert reaction == pytest.approx(-axial, rel=1e-9, abs=1e-9 * np.max(np.abs(axial)))
    out = tmp_path / "reaction.png"
    code, _, err = post(capsys, "plot", v3, "-a", "newmark", "-f", "reaction", "-n", "N1",
                        "-c", "FX", "-o", out)
    assert code == 0, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = post(capsys, "plot", v3, "-a", "newmark", "-e", "AC", "-o", out)
    assert code == 2 and "--element: give --field element_force" in err


# -- datasets whose shapes disagree with the file ---------------------------------------------
def _reshaped(data, how):
    return {"fewer_rows": lambda d: d[:500], "more_rows": lambda d: np.concatenate([d, d]),
            "narrower": lambda d: d[:, :5], "wider": lambda d: np.hstack([d, d]),
            "two_dimensional": lambda d: np.column_stack([d, d])}[how](data)


@pytest.mark.parametrize("dataset, how, job, message", [
    ("displacement", "fewer_rows", "series",
     "dataset 'displacement' has 500 rows, fewer than the 1001 values of its 'time' dataset"),
    ("displacement", "more_rows", "plot",
     "dataset 'displacement' has 2002 rows, more than the 1001 values of its 'time' dataset"),
    ("displacement", "narrower", "series",
     "dataset 'displacement' has 5 columns, not 6 (the dofs of the file's dof table)"),
    ("velocity", "wider", "plot",
     "dataset 'velocity' has 12 columns, not 6 (the dofs of the file's dof table)"),
    ("time", "two_dimensional", "series",
     "its 'time' dataset has shape (1001, 2), not one time per row"),
    ("links/stop/normal_force", "fewer_rows", "shocks",
     "dataset 'links/stop/normal_force' has 500 rows, fewer than the 1001 values"),
    ("energy/kinetic", "more_rows", "energy",
     "dataset 'energy/kinetic' has 2002 rows, more than the 1001 values"),
])
def test_a_dataset_whose_shape_disagrees_with_the_file_is_refused(capsys, synthetic, tmp_path,
                                                                  dataset, how, job, message):
    import shutil

    path = tmp_path / "damaged.h5"
    shutil.copy(synthetic, path)
    with h5py.File(path, "r+") as f:
        group = f["analyses/shock"]
        data = _reshaped(group[dataset][()], how)
        del group[dataset]
        group.create_dataset(dataset, data=data)
    options = {"series": ["-a", "shock", "-n", "N2", "-f", "displacement", "-f", "velocity"],
               "plot": ["-a", "shock", "-n", "N2", "-c", "DX", "-f", "displacement", "-f",
                        "velocity", "-o", tmp_path / "figure.png"],
               "shocks": ["-a", "shock"], "energy": ["-a", "shock"]}[job]
    code, out, err = post(capsys, job, path, *options)
    assert code == 2, err
    assert out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith(f"error: analysis 'shock' in '{path}': ")
    assert message in err and err.rstrip().endswith("the file is damaged"), err
    assert not (tmp_path / "figure.png").exists()
