"""Inputs that used to pass silently are refused, naming the key: a local frame on POI1 cells
(no axis defines it), a non-zero initial value on a dof a constraint imposes; a load function
that stops being finite ends the analysis naming the function and the instant."""

import math

import pytest

from conftest import one_dof_model
from fem.cli import main

STUDY = """\
[mesh.nodes]
P = [0.0, 0.0, 0.0]
Q = [1.0, 0.0, 0.0]
[mesh.cells]
S = {{ type = "POI1", nodes = ["P"] }}
[model]
components = ["DX", "DY"]
[[discrete]]
cells = ["S"]
{frame}
mass = 1.0
stiffness = [1.0, 2.0, 3.0]
[[discrete]]
nodes = ["Q"]
mass = 1.0
stiffness = 1.0
[[constraint]]
nodes = ["Q"]
DX = 0.0
[[initial]]
nodes = ["P", "Q"]
{initial}
[[analysis]]
name = "modes"
kind = "modes"
count = 2
"""


def run(tmp_path, capsys, **parts):
    (tmp_path / "s.toml").write_text(STUDY.format(**parts), encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"), "--quiet"])
    return code, capsys.readouterr().err


def test_the_valid_model_runs(tmp_path, capsys):
    code, err = run(tmp_path, capsys, frame="", initial="displacement = { DY = 0.5 }")
    assert code == 0, err


def test_a_local_frame_on_poi1_cells_is_refused(tmp_path, capsys):
    code, err = run(tmp_path, capsys, frame='frame = "local"', initial="velocity = { DY = 1.0 }")
    assert code == 2 and not (tmp_path / "r.h5").exists()
    assert err.startswith('error: discrete[1].frame: "local" needs SEG2 cells')


@pytest.mark.parametrize("key", ["displacement", "velocity"])
def test_an_initial_value_on_an_imposed_dof_is_refused(tmp_path, capsys, key):
    code, err = run(tmp_path, capsys, frame="", initial=f"{key} = {{ DX = 0.5 }}")
    assert code == 2 and not (tmp_path / "r.h5").exists()
    assert err.startswith(f"error: initial[1].{key}.DX: DX of node Q is imposed by a [[constraint]]")


def test_a_zero_initial_value_on_an_imposed_dof_is_accepted(tmp_path, capsys):
    code, err = run(tmp_path, capsys, frame="", initial="velocity = { DX = 0.0, DY = 1.0 }")
    assert code == 0, err


#: a mass of 1 kg on a spring of 1 N/m along X, the start of the studies below
ONE_DOF = one_dof_model()


FORCED = ONE_DOF + """\
[functions.surge]
expression = "{expression}"
[[load]]
name = "push"
nodes = ["P"]
FX = 1.0
function = "surge"
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 1.0
step = 0.01
"""


@pytest.mark.parametrize("expression,when,value", [
    ("exp(1000*t)", "0.71", "inf"),           # overflows past t = 0.7098
    ("1/(t-0.5)", "0.5", "inf"),
    ("log(t-1)", "0", "nan"),
])
def test_a_load_that_is_not_finite_stops_naming_the_function(tmp_path, capsys, expression, when,
                                                             value):
    (tmp_path / "s.toml").write_text(FORCED.format(expression=expression), encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err
    assert err.startswith(f"error: analysis 'run': function 'surge' is not finite at "
                          f"t = {when} s ({value})")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("damaged")
    (folder / "s.toml").write_text(FORCED.format(expression="sin(t)"), encoding="utf-8")
    assert main(["run", str(folder / "s.toml"), "--out", str(folder / "r.h5"), "--quiet"]) == 0
    return folder / "r.h5"


def _damage(results, tmp_path, how):
    import shutil

    import h5py
    import numpy as np

    path = tmp_path / "d.h5"
    shutil.copy(results, path)
    with h5py.File(path, "r+") as f:
        if how == "format_version":
            f.attrs["format_version"] = "x"
        elif how == "shape":
            group = f["analyses/run"]
            del group["displacement"]
            group.create_dataset("displacement", data=np.array([1.0, 2.0]))
        elif how == "soft_link_loop":
            group = f["analyses/run"]
            del group["displacement"]
            group["displacement"] = h5py.SoftLink("/analyses/run/other")
            group["other"] = h5py.SoftLink("/analyses/run/displacement")
        elif how == "absurd_size":
            # rows declared, never written: reading them would take hours and terabytes
            group = f["analyses/run"]
            for name in ("time", "displacement"):
                group[name].resize((10**12,) + group[name].shape[1:])
    return path


@pytest.mark.parametrize("how", ["format_version", "shape", "soft_link_loop", "absurd_size"])
@pytest.mark.parametrize("command", [["info"], ["post", "series", "-a", "run", "-n", "P", "-c",
                                                 "DX"]])
def test_a_damaged_results_file_is_a_one_line_error(results, tmp_path, capsys, how, command):
    path = _damage(results, tmp_path, how)
    argv = command[:1] + (command[1:2] + [str(path)] + command[2:] if len(command) > 1
                          else [str(path)])
    code = main(argv)
    err = capsys.readouterr().err
    if how in ("shape", "soft_link_loop", "absurd_size") and command == ["info"]:
        assert code == 0 and "Traceback" not in err    # fem info reads attributes only
        return
    assert code == 2 and "Traceback" not in err
    if how == "shape":                  # the dataset's shape is checked before it is read
        assert err == (f"error: analysis 'run' in '{path}': dataset 'displacement' has shape "
                       f"(2,), not (101, 1): the file is damaged\n")
        return
    assert err.startswith(f"error: '{path}' is damaged or was not written by fem (")


def test_a_time_grid_larger_than_the_memory_is_refused_up_front(tmp_path, capsys, monkeypatch):
    from fem.study import analysis_blocks

    # 1e6 steps need about 18 MB of grid: refused when the system has 10 MB to give
    monkeypatch.setattr(analysis_blocks, "available_memory", lambda: 10e6)
    text = FORCED.format(expression="sin(t)").replace("step = 0.01", "step = 1e-6")
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "r.h5"
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and not (tmp_path / "r.h5.partial").exists()
    assert "steps need about 0.018 GB for the time grid, more than the 0.01 GB of memory " \
           "available" in err


def test_max_steps_sets_the_limit_of_a_run(tmp_path, capsys):
    text = FORCED.format(expression="sin(t)").replace("step = 0.01", "step = 1e-4")
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "r.h5"
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(out), "--max-steps", "1000"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.startswith("error: analysis[1].step: 0.0001 s makes 1e+04 steps over the "
                          "analysis (at most 1e+03; fem run --max-steps sets another limit)")
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(out), "--max-steps", "1e4",
                 "--quiet"]) == 0
    assert out.exists()


#: the one-dof model and its modes analysis "m"
ONE_MODE = ONE_DOF + """\
[[analysis]]
name = "m"
kind = "modes"
count = 1
"""


#: ONE_MODE and an rk54 analysis "r" on its modal basis
RK54 = ONE_MODE + """\
[[analysis]]
name = "r"
kind = "transient"
basis = "modal"
modes = "m"
scheme = "rk54"
end = {end}
tolerance = {tolerance}
"""


def test_a_tolerance_below_1e_14_is_refused(tmp_path, capsys):
    text = RK54.format(end=1.0, tolerance=1e-16)
    assert refused(tmp_path, capsys, text).startswith(
        "error: analysis[2].tolerance: must be >= 1e-14, got 1e-16")


@pytest.mark.parametrize("name", ["sparse_tags_22.msh", "sparse_tags_41.msh"])
def test_gmsh_cells_sit_on_the_nodes_of_their_tags(tmp_path, capsys, name):
    """Nodes tagged 30, 10, 20 in that order; SEG2 99 = (20, 30), POI1 7 = (30), SEG2 3 =
    (10, 20): nodes and cells are named by tag and each cell joins the nodes its tags
    name."""
    import shutil

    import h5py
    import numpy as np

    from fem.mesh import read

    from conftest import ROOT
    source = ROOT / "tests" / "data" / name
    mesh = read(source)
    names = mesh.node_names
    segs = {frozenset(names[i] for i in c if i >= 0)
            for c, k in zip(mesh.connectivity, mesh.cell_type) if k == 2}
    points = [names[c[0]] for c, k in zip(mesh.connectivity, mesh.cell_type) if k == 1]
    assert sorted(names) == ["N10", "N20", "N30"]
    assert segs == {frozenset({"N10", "N20"}), frozenset({"N20", "N30"})}
    assert points == ["N30"]
    # cells are named by their element tags, as nodes are
    cells = {cell: tuple(names[i] for i in c if i >= 0)
             for cell, c in zip(mesh.cell_names, mesh.connectivity)}
    assert {k: frozenset(v) for k, v in cells.items()} == {
        "M99": frozenset({"N20", "N30"}), "M7": frozenset({"N30"}),
        "M3": frozenset({"N10", "N20"})}
    # and in a model: springs of 100 N/m, 1 kg on N20 (by name) and on the TIP point cell
    shutil.copy(source, tmp_path / name)
    (tmp_path / "s.toml").write_text(f"""
[mesh]
file = "{name}"
[model]
components = ["DX"]
[[discrete]]
cell_groups = ["SPRINGS"]
stiffness = 100.0
[[discrete]]
nodes = ["N20"]
mass = 1.0
[[discrete]]
cell_groups = ["TIP"]
mass = 1.0
[[constraint]]
nodes = ["N10"]
DX = 0.0
[[analysis]]
name = "modes"
kind = "modes"
count = 2
""", encoding="utf-8")
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"),
                 "--quiet"]) == 0, capsys.readouterr().err
    with h5py.File(tmp_path / "r.h5") as f:
        freq = f["analyses/modes/frequency"][:]
    omega2 = 100.0 * np.array([(3 - 5 ** 0.5) / 2, (3 + 5 ** 0.5) / 2])
    np.testing.assert_allclose((2 * np.pi * freq) ** 2, omega2, rtol=1e-10)


HUGE = "1" + "0" * 420


@pytest.mark.parametrize("change,message", [
    (('expression = "{expression}"', f"table = [[0.0, {HUGE}], [1.0, 0.0]]"),
     "functions.surge.table: row 1: an integer too large for a number"),
    (("step = 0.01", f'step = 0.01\n[[check]]\nanalysis = "run"\ntime = {HUGE}\nnode = "P"\n'
                     f'component = "DX"\nquantity = "displacement"\nreference = 0.0\n'
                     f'tolerance = 1.0'),
     "check[1].time: the integer is too large for a number (421 digits)"),
])
def test_integers_too_large_anywhere_are_one_line_errors(tmp_path, capsys, change, message):
    text = FORCED.format(expression="sin(t)").replace('expression = "sin(t)"',
                                                      'expression = "{expression}"')
    text = text.replace(*change).replace("{expression}", "sin(t)")
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5")])
    assert code == 2 and not (tmp_path / "r.h5").exists()
    assert capsys.readouterr().err.startswith(f"error: {message}")


CHECKED = ONE_DOF + """\
[[initial]]
nodes = ["P"]
velocity = {{ DX = 1.0 }}
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 1.0
{grid}
[[check]]
analysis = "run"
time = {time}
node = "P"
component = "DX"
quantity = "displacement"
reference = {reference}
tolerance = 1e-4
"""


def test_a_check_at_an_instant_that_will_not_be_archived_is_refused_up_front(tmp_path, capsys):
    text = CHECKED.format(grid="step = 0.01\narchive = { every = 10 }", time=0.15,
                          reference=math.sin(0.15))
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5")])
    assert code == 2 and not list(tmp_path.glob("r.h5*"))
    assert capsys.readouterr().err.startswith(
        "error: check[1].time: 0.15 s will not be archived by analysis 'run' (nearest archived "
        "instants: 0.1 and 0.2 s)")
    # at an archived instant, or interpolated, the same check runs (u = sin t)
    for time, extra in ((0.2, ""), (0.15, "\ninterpolate = true")):
        (tmp_path / "s.toml").write_text(CHECKED.format(
            grid="step = 0.01\narchive = { every = 10 }", time=time,
            reference=math.sin(time)) + extra, encoding="utf-8")
        tolerance_ok = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"),
                             "--quiet"])
        assert tolerance_ok in (0, 1)


def test_a_check_the_run_cannot_read_leaves_no_file(tmp_path, capsys):
    """With steps = [...] the archived instants are only known after the run."""
    grid = "steps = [ { until = 1.0, count = 10 } ]"
    (tmp_path / "s.toml").write_text(CHECKED.format(grid=grid, time=0.15,
                                                    reference=math.sin(0.15)), encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5")])
    err = capsys.readouterr().err
    assert code == 2 and not list(tmp_path.glob("r.h5*"))
    assert "time 0.15 s is not archived" in err and f"'{tmp_path / 'r.h5'}'" in err


def refused(tmp_path, capsys, text) -> str:
    """Run the study ``text``: it must be refused (exit code 2, no file); its message."""
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5")])
    assert code == 2 and not list(tmp_path.glob("r.h5*"))
    return capsys.readouterr().err


def test_a_check_on_a_field_the_analysis_does_not_archive_is_refused_up_front(tmp_path, capsys):
    text = CHECKED.format(grid='step = 0.01\nfields = ["velocity"]', time=0.2,
                          reference=math.sin(0.2))
    assert refused(tmp_path, capsys, text) == (
        "error: check[1].quantity: analysis 'run' does not archive 'displacement' (fields = "
        "['velocity']); add it to its fields\n")


def test_a_check_on_a_mode_beyond_the_count_is_refused_up_front(tmp_path, capsys):
    text = ONE_MODE + """\
[[check]]
analysis = "m"
quantity = "frequency"
mode = 2
reference = 1.0
tolerance = 1e-3
"""
    assert refused(tmp_path, capsys, text) == (
        "error: check[1].mode: mode 2, but analysis 'm' computes at most 1 modes\n")


def test_an_adaptive_scheme_stops_at_the_step_limit(tmp_path, capsys):
    """The steps of an adaptive scheme are not known before the run: --max-steps bounds them
    while it runs (exit code 3, the file keeps what was computed, marked "failed")."""
    import h5py

    text = RK54.format(end=100.0, tolerance=1e-10) + """\
[[initial]]
nodes = ["P"]
velocity = { DX = 1.0 }
"""
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "r.h5"
    code = main(["run", str(tmp_path / "s.toml"), "--out", str(out), "--max-steps", "1000",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("error: analysis 'r': rk54 took more than 1e+03 steps (")
    assert "fem run --max-steps sets another limit" in err
    with h5py.File(out) as f:
        assert f.attrs["status"] == "failed"
        assert f["analyses/r"].attrs["status"] == "failed"
        assert 0 < f["analyses/r/time"][-1] < 100.0


#: the one-dof model under a unit force, and a harmonic analysis "h" over ``frequencies``
HARMONIC = ONE_DOF.replace("{", "{{").replace("}", "}}") + """\
[[load]]
name = "f"
nodes = ["P"]
FX = 1.0
[[analysis]]
name = "h"
kind = "harmonic"
frequencies = {frequencies}
"""


def test_a_harmonic_sweep_of_too_many_or_uncounted_frequencies_is_refused(tmp_path, capsys):
    text = HARMONIC.format(frequencies="{ start = 1.0, stop = 2.0, count = 1000000000000 }")
    assert refused(tmp_path, capsys, text) == (
        "error: analysis[1].frequencies.count: must be <= 1e+06, got 1e+12\n")
    text = HARMONIC.format(frequencies="{ start = 1.0, stop = 2.0 }")
    assert refused(tmp_path, capsys, text) == (
        "error: analysis[1].frequencies.count: missing (required)\n")


def test_a_harmonic_grid_ends_exactly_at_its_stop(tmp_path, capsys):
    """0.1 + 2 * (0.3 - 0.1) / 2 is 0.30000000000000004 in floating point: the grid must
    hold 0.3 itself."""
    import h5py

    text = HARMONIC.format(frequencies="{ start = 0.1, stop = 0.3, count = 3 }")
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"),
                 "--quiet"]) == 0
    with h5py.File(tmp_path / "r.h5") as f:
        frequency = f["analyses/h/frequency"][:]
    assert frequency[0] == 0.1 and frequency[-1] == 0.3 and len(frequency) == 3


def test_a_step_longer_than_the_analysis_is_refused(tmp_path, capsys):
    text = FORCED.format(expression="sin(t)").replace("step = 0.01", "step = 2.0")
    assert refused(tmp_path, capsys, text) == (
        "error: analysis[1].step: 2 s is longer than the analysis (1 s)\n")
