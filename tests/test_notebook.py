"""Notebook views (postpro.frames): xarray DataArrays of the fields and pandas DataFrames of the
events, link series and modes, against the readers they wrap, on a study run with fem."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import postpro
from fem.results import ResultsWriter
from postpro import frames
from postpro.errors import PostproError

xarray = pytest.importorskip("xarray")
pandas = pytest.importorskip("pandas")

# A clamped node A and two masses B, C along X with a rotation DRX each; a sine force and
# moment on C, which strikes a stop at 5 mm; a Newmark run, its modes and a sweep.
STUDY = """\
[study]
title = "two masses with rotations against a stop"

[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
C = [2.0, 0.0, 0.0]

[mesh.cells]
AB = { type = "SEG2", nodes = ["A", "B"] }
BC = { type = "SEG2", nodes = ["B", "C"] }

[model]
components = ["DX", "DRX"]

[[discrete]]
cells = ["AB", "BC"]
stiffness = [1.0e4, 1.0e4, 1.0e4, 50.0, 50.0, 50.0]
damping = [2.0, 0.0, 0.0, 0.1, 0.0, 0.0]

[[discrete]]
nodes = ["B", "C"]
mass = 1.0
inertia = 0.01

[[constraint]]
nodes = ["A"]
DX = 0.0
DRX = 0.0

[functions.wave]
expression = "sin(2*pi*20*t)"

[[load]]
nodes = ["C"]
FX = 200.0
MX = 0.5
function = "wave"

[[link]]
name = "stop"
kind = "shock"
nodes = ["C"]
normal = [1.0, 0.0, 0.0]
gap = 5.0e-3
stiffness = 1.0e6

[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.2
step = 1.0e-3
links = ["stop"]

[[analysis]]
name = "modes"
kind = "modes"
count = 4

[[analysis]]
name = "sweep"
kind = "harmonic"
frequencies = { start = 1.0, stop = 40.0, count = 20 }
"""
ALL_DOFS = [("A", "DX"), ("A", "DRX"), ("B", "DX"), ("B", "DRX"), ("C", "DX"), ("C", "DRX")]
FIELDS = ("displacement", "velocity", "acceleration")


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    from fem.runner import run_study

    folder = tmp_path_factory.mktemp("notebook")
    (folder / "study.toml").write_text(STUDY)
    run_study(folder / "study.toml", folder / "study.h5")
    return folder / "study.h5"


@pytest.fixture
def results(path):
    with postpro.open(path) as results:
        yield results


@pytest.fixture
def run(results):
    return results.analysis("run")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A file written directly: a modal-basis run that recombined node N2 only, with events
    stored out of time order, and a run without events."""
    path = tmp_path_factory.mktemp("written") / "written.h5"
    writer = ResultsWriter(path, title="partial", study_source="", node_names=["N1", "N2"],
                           coordinates=[[0, 0, 0], [1, 0, 0]], dof_node=[0, 0, 1, 1],
                           dof_component=["DX", "DY", "DX", "DY"],
                           dof_imposed=[False] * 4)
    partial = writer.analysis("partial", "transient", basis="modal", scheme="exact")
    partial.dataset("dofs", np.array([2, 3]))
    t = np.linspace(0.0, 1.0, 11)
    partial.series({"displacement": 2}).append(time=t, displacement=np.column_stack([t, -t]))
    partial.events([(0.5, "impact", "stop", "b"), (0.25, "impact", "stop", "a"),
                    (0.5, "separation", "stop", "c")])
    partial.finish()
    quiet = writer.analysis("quiet", "transient")
    quiet.series({"displacement": 4}).append(time=t, displacement=np.zeros((11, 4)))
    quiet.finish()
    writer.close(complete=True)
    return path


def test_transient_array_equals_the_series_column_by_column(run):
    for field in FIELDS:
        array = run.to_xarray(field)
        assert array.dims == ("time", "dof") and array.name == field
        assert array.dtype == np.float64 and array.shape == (201, 6)
        time, values = run.columns(field, ALL_DOFS)
        assert np.array_equal(array["time"].values, time)
        assert np.array_equal(array.values, values)
        for i, (node, component) in enumerate(ALL_DOFS):
            t, column = run.series(field, node, component)
            assert np.array_equal(array.values[:, i], column)
            assert np.array_equal(array.sel(dof=f"{node} {component}").values, column)
        assert np.any(array.values != 0.0)


def test_coordinates_and_units(run):
    array = run.to_xarray()
    assert array["time"].attrs["units"] == "s"
    assert list(array["dof"].values) == [f"{n} {c}" for n, c in ALL_DOFS]
    assert list(array["node"].values) == [n for n, _ in ALL_DOFS]
    assert list(array["component"].values) == [c for _, c in ALL_DOFS]
    assert list(array["units"].values) == ["m", "rad"] * 3
    assert "units" not in array.attrs and array.attrs["analysis"] == "run"
    expected = {("displacement", "DX"): "m", ("displacement", "DRX"): "rad",
                ("velocity", "DX"): "m/s", ("velocity", "DRX"): "rad/s",
                ("acceleration", "DX"): "m/s^2", ("acceleration", "DRX"): "rad/s^2"}
    for (field, component), unit in expected.items():
        one = run.to_xarray(field, components=component)
        assert one.attrs["units"] == unit and "units" not in one.coords
    assert frames.field_units("force", ["DX", "DRX"]) is None


def test_time_window_reads_only_its_rows(run, monkeypatch):
    i0, i1 = run.window(0.05, 0.0625)
    assert (i0, i1) == (50, 63)
    reads = []
    original = h5py.Dataset.__getitem__

    def recording(dataset, key):
        reads.append((dataset.name, key))
        return original(dataset, key)

    monkeypatch.setattr(h5py.Dataset, "__getitem__", recording)
    array = run.to_xarray("velocity", start=0.05, end=0.0625)
    monkeypatch.undo()
    field_reads = [key for name, key in reads if name.endswith("/velocity")]
    assert field_reads and all(key[0] == slice(i0, i1) for key in field_reads)
    time, values = run.columns("velocity", ALL_DOFS, 0.05, 0.0625)
    assert np.array_equal(array["time"].values, run.time[i0:i1])
    assert np.array_equal(array["time"].values, time)
    assert np.array_equal(array.values, values)
    i0, i1 = run.window(0.19, None)
    assert i1 - i0 >= 10 and run.to_xarray(start=0.19).sizes["time"] == i1 - i0
    assert run.to_xarray(start=1.0).sizes["time"] == 0


def test_node_and_component_selection(run):
    assert list(run.to_xarray(nodes="C")["dof"].values) == ["C DX", "C DRX"]
    assert list(run.to_xarray(components="DX")["dof"].values) == ["A DX", "B DX", "C DX"]
    array = run.to_xarray(nodes=["C", "B"], components=["DRX", "DX"])
    assert list(array["dof"].values) == ["C DRX", "C DX", "B DRX", "B DX"]
    pairs = [("C", "DRX"), ("C", "DX"), ("B", "DRX"), ("B", "DX")]
    assert np.array_equal(array.values, run.columns("displacement", pairs)[1])
    assert list(array["units"].values) == ["rad", "m", "rad", "m"]


def test_unknown_node_component_or_field_is_an_error(run):
    with pytest.raises(PostproError, match="unknown node 'Q'"):
        run.to_xarray(nodes=["C", "Q"])
    with pytest.raises(PostproError, match="component 'DY'"):
        run.to_xarray(components="DY")
    with pytest.raises(PostproError, match="empty list of nodes"):
        run.to_xarray(nodes=[])
    with pytest.raises(PostproError, match="unknown field 'force'"):
        run.to_xarray("force")


def test_harmonic_array_is_complex_over_frequency(results):
    sweep = results.analysis("sweep")
    array = sweep.to_xarray("velocity", nodes="C", start=5.0, end=12.0)
    assert array.dims == ("frequency", "dof") and array["frequency"].attrs["units"] == "Hz"
    assert array.dtype == np.complex128 and array.sizes["frequency"] == 4
    assert list(array["units"].values) == ["m/s", "rad/s"]
    for i, component in enumerate(("DX", "DRX")):
        f, column = sweep.series("velocity", "C", component, 5.0, 12.0)
        assert np.array_equal(array["frequency"].values, f)
        assert np.array_equal(array.values[:, i], column)
    assert np.all(np.abs(array.values) > 0.0)


def test_default_dofs_are_those_an_analysis_archived(written):
    with postpro.open(written) as results:
        partial = results.analysis("partial")
        array = partial.to_xarray()
        assert list(array["dof"].values) == ["N2 DX", "N2 DY"]
        assert np.array_equal(array.values, partial.columns("displacement", [("N2", "DX"),
                                                                              ("N2", "DY")])[1])
        with pytest.raises(PostproError, match="did not archive node 'N1'"):
            partial.to_xarray(nodes="N1")


def test_events_frame_equals_the_events_table(run):
    events = run.events
    assert len(events) >= 4
    frame = run.events_frame()
    assert list(frame.columns) == ["time", "kind", "link", "detail"]
    assert len(frame) == len(events)
    assert np.array_equal(frame["time"].to_numpy(), events["time"])
    for column in ("kind", "link", "detail"):
        assert frame[column].tolist() == events[column].tolist()
        assert all(isinstance(value, str) for value in frame[column])
    assert set(frame["kind"]) == {"impact", "separation"}
    assert frame.attrs["units"]["time"] == "s"


def test_events_frame_in_time_order_and_empty(written):
    with postpro.open(written) as results:
        frame = results.analysis("partial").events_frame()
        assert frame["time"].tolist() == [0.25, 0.5, 0.5]
        assert frame["detail"].tolist() == ["a", "b", "c"]
        empty = results.analysis("quiet").events_frame()
        assert list(empty.columns) == ["time", "kind", "link", "detail"] and len(empty) == 0


def test_link_frame_equals_link(run):
    found = run.link("stop")
    frame = run.link_frame("stop")
    assert list(frame.columns) == list(run.link_series_names("stop"))
    assert frame.index.name == "time"
    assert np.array_equal(frame.index.to_numpy(), found["time"])
    for name in frame.columns:
        assert np.array_equal(frame[name].to_numpy(), found[name])
    assert frame["normal_force"].max() > 0.0
    assert frame.attrs["parameters"]["stiffness"] == 1.0e6
    assert frame.attrs["units"]["normal_force"] == "N"
    window = run.link_frame("stop", 0.01, 0.02)
    assert np.array_equal(window.index.to_numpy(), run.link("stop", 0.01, 0.02)["time"])
    assert len(window) == 11
    with pytest.raises(PostproError, match="no link 'nope'"):
        run.link_frame("nope")


def test_modes_frame(results):
    modes = results.analysis("modes")
    frame = modes.to_frame()
    assert list(frame.index) == [1, 2, 3, 4] and frame.index.name == "mode"
    assert list(frame.columns[:2]) == ["frequency", "omega"]
    assert np.array_equal(frame["frequency"].to_numpy(), modes.frequency)
    assert np.array_equal(frame["generalized_stiffness"].to_numpy(),
                          modes.generalized_stiffness)
    for i, direction in enumerate("XYZ"):
        assert np.array_equal(frame[f"effective_mass_{direction}"].to_numpy(),
                              modes.effective_mass[:, i])
    assert not any(name.startswith(("shapes", "total_mass")) for name in frame.columns)
    assert frame.attrs["units"]["frequency"] == "Hz"
    assert frame.attrs["total_mass"] == dict(zip("XYZ", modes["total_mass"].tolist()))


def test_missing_package_is_a_clear_error(run, results, monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(PostproError, match=r"needs xarray: pip install 'fem\[notebook\]'"):
        run.to_xarray()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(PostproError, match=r"needs pandas: pip install 'fem\[notebook\]'"):
        run.events_frame()
    with pytest.raises(PostproError, match="needs pandas"):
        results.analysis("modes").to_frame()


def test_importing_postpro_or_fem_imports_neither_xarray_nor_pandas():
    code = textwrap.dedent("""\
        import sys
        import fem, postpro, postpro.results, postpro.cli
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("xarray", "pandas")))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
