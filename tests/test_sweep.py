"""Parameter sweeps (``fem.sweep``, ``fem sweep``): the variants, their table against
independent runs of the same variants (``fem.run``), in this process, on an in-process Dask
cluster, on a local cluster of worker processes and on a scheduler and a worker started as
processes of their own; failing variants, resuming, and the ``--vary`` options."""

from __future__ import annotations

import contextlib
import csv
import math
import threading
import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import fem
from fem.cli import EXIT_ANALYSIS_FAILED, EXIT_CHECK_FAILED, EXIT_INVALID, EXIT_OK, main
from fem.sweeps import worker
from fem.sweeps.values import parse_collect, parse_vary, parse_varies, variants
from postpro.jobs.shocks import link_shocks

from conftest import oscillator_toml

ROOT = Path(__file__).resolve().parents[1]
V2 = ROOT / "studies" / "v2_impact_oscillator.toml"
V3 = ROOT / "studies" / "v3_chain3.toml"
CHAIN3_MAIL = ROOT / "meshes" / "chain3.mail"

# One node, m = 1 kg on 1e4 N/m (omega = 100 rad/s): central differences are stable below a
# step of 0.02 s; a step of 0.06 s diverges (exit code 3 of fem run), a negative one is refused.
DIVERGING = oscillator_toml(stiffness=1.0e4, force=1.0, scheme="central_difference",
                            step=0.01, end=3.0)


def v2_short() -> fem.Study:
    """V2 with its exact analysis alone over 1 s, and its checks on the first two events."""
    data = fem.Study.load(V2).to_dict()
    data["analysis"] = [a for a in data["analysis"] if a["name"] == "exact"]
    data["analysis"][0]["end"] = 1.0
    data["check"] = [c for c in data["check"]
                     if c["analysis"] == "exact" and c.get("event", 1) <= 2]
    return fem.Study.from_dict(data, root=V2.parent, name="v2_short")


def v3_newmark(tmp_path) -> Path:
    """V3 with its Newmark analysis and its checks alone, written as a study file."""
    data = fem.Study.load(V3).to_dict()
    data["mesh"]["file"] = str(CHAIN3_MAIL)
    data["analysis"] = data["analysis"][:1]
    data["check"] = [c for c in data["check"] if c["analysis"] == "newmark"]
    return fem.Study.from_dict(data, root=tmp_path, name="v3_newmark").save(
        tmp_path / "v3_newmark.toml")


def expected_row(study: fem.Study, values: dict, collect=()) -> dict:
    """The outcome of one variant from its own run in memory, computed here."""
    expected = {}
    with fem.run(study.with_values(values)) as results:
        checks = results.checks
        expected["checks_failed"] = int(np.sum(~checks["passed"]))
        for n, check in enumerate(checks, start=1):
            expected[worker.check_column(n, check)] = float(check["computed"])
        for name in results.analyses:
            analysis = results.analysis(name)
            if analysis.kind != "transient":
                continue
            for link in analysis.links:
                stats = link_shocks(analysis, link)
                expected[f"{name}.{link}.impacts"] = stats.impacts
                expected[f"{name}.{link}.max_force"] = stats.max_force
                expected[f"{name}.{link}.wear_power"] = stats.wear_power
            for node, component in collect:
                _, u = analysis.series("displacement", node, component)
                expected[f"{name}.max_abs.{node}.{component}"] = float(np.max(np.abs(u)))
    return expected


def assert_row_matches(row: dict, expected: dict):
    for column, value in expected.items():
        found = row[column]
        if isinstance(found, str):          # read back from sweep.csv
            found = float(found) if found else None
        if value is None:
            assert found is None, column
        else:
            # abs: a quantity that is zero to round-off (a wear power of 1e-15 W) is not the
            # same number in two processes
            assert found == pytest.approx(value, rel=1e-12, abs=1e-13, nan_ok=True), column


def read_table(folder: Path) -> list[dict]:
    with open(folder / "sweep.csv", newline="") as stream:
        return list(csv.DictReader(stream))


# -- the variants and the --vary options ------------------------------------------------------
def test_a_grid_is_the_product_of_the_lists_the_first_path_slowest():
    found = variants({"a.b": [1, 2], "c.d": ["x", "y", "z"]})
    assert found == [{"a.b": a, "c.d": c} for a in (1, 2) for c in "xyz"]


def test_zip_takes_the_lists_in_step_and_names_the_paths_of_unequal_lengths():
    assert variants({"a.b": [1, 2], "c.d": [3, 4]}, zip=True) == [{"a.b": 1, "c.d": 3},
                                                                  {"a.b": 2, "c.d": 4}]
    with pytest.raises(fem.StudyError, match=r"a\.b \(2\), c\.d \(3\)"):
        variants({"a.b": [1, 2], "c.d": [3, 4, 5]}, zip=True)


def test_random_draws_are_reproducible_with_a_seed_and_within_their_bounds():
    parameters = {"a.b": "uniform:2:3", "c.d": "normal:10:0.5", "e.f": ["x", "y"]}
    first = variants(parameters, samples=200, seed=7)
    assert first == variants(parameters, samples=200, seed=7)
    assert first != variants(parameters, samples=200, seed=8)
    a = np.array([v["a.b"] for v in first])
    c = np.array([v["c.d"] for v in first])
    assert np.all((a >= 2) & (a <= 3)) and abs(np.mean(c) - 10) < 0.2
    assert {v["e.f"] for v in first} == {"x", "y"}
    # each parameter drawn in turn within a variant, from numpy's default_rng(seed)
    rng = np.random.default_rng(7)
    assert first[0] == {"a.b": rng.uniform(2, 3), "c.d": rng.normal(10, 0.5),
                        "e.f": ["x", "y"][rng.integers(2)]}


def test_vary_reads_lists_ranges_with_both_ends_strings_and_distributions():
    assert parse_vary("link.stop.gap=1e-3,2e-3,5") == ("link.stop.gap", [1e-3, 2e-3, 5])
    path, values = parse_vary("link.stop.gap=0.001:0.002:5")
    assert path == "link.stop.gap" and values[0] == 0.001 and values[-1] == 0.002
    assert values == pytest.approx(np.linspace(0.001, 0.002, 5).tolist(), rel=0, abs=0)
    assert parse_vary("functions.ground.file=el_centro.csv,kobe.csv") == \
        ("functions.ground.file", ["el_centro.csv", "kobe.csv"])
    assert parse_vary("link.stop.absolute=true,false")[1] == [True, False]
    assert parse_vary("x.y=uniform:1:2", random=True) == ("x.y", "uniform:1:2")
    assert parse_vary("x.y=normal:1:0.1", random=True) == ("x.y", "normal:1:0.1")
    assert parse_collect("N3.DX") == ("N3", "DX")


@pytest.mark.parametrize("options,message", [
    (["gap"], "expected PATH=v1,v2"),
    (["x.y="], "no value after"),
    (["x.y=1:2:1"], "count of at least 2"),
    (["x.y=uniform:1:2"], "needs --random"),
    (["x.y=1,,2"], "empty value"),
    (["x.y=1", "x.y=2"], "given twice"),
])
def test_vary_errors_name_the_option(options, message):
    with pytest.raises(fem.StudyError, match=message):
        parse_varies(options)


def test_a_path_that_names_nothing_stops_the_sweep_before_anything_runs(tmp_path, capsys):
    with pytest.raises(fem.StudyError, match=r"link\.nope\.gap"):
        fem.sweep(v2_short(), {"link.nope.gap": [1e-3]}, tmp_path / "a")
    with pytest.raises(fem.StudyError, match=r"link\.stop\.gapp.*unknown key 'gapp'"):
        fem.sweep(v2_short(), {"link.stop.gapp": [1e-3]}, tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    code = main(["sweep", str(study), "--vary", "analysis.a.stepp=0.01",
                 "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == EXIT_INVALID and err.startswith("error: ") and "analysis.a.stepp" in err
    code = main(["sweep", str(study), "--vary", "load.f.FX=1,2", "--vary", "load.f.FY=1",
                 "--zip", "--out", str(tmp_path / "d")])
    assert code == EXIT_INVALID and "load.f.FX (2), load.f.FY (1)" in capsys.readouterr().err


def test_a_random_sweep_on_the_command_line_draws_what_variants_draws(tmp_path, capsys):
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    out = tmp_path / "sw"
    code = main(["sweep", str(study), "--vary", "load.f.FX=uniform:0.5:2",
                 "--vary", "discrete.1.stiffness=1e4,2e4", "--random", "3", "--seed", "3",
                 "--out", str(out), "--collect", "P.DX", "--quiet"])
    assert code == EXIT_OK and capsys.readouterr().out == ""
    drawn = variants({"load.f.FX": "uniform:0.5:2", "discrete.1.stiffness": [1e4, 2e4]},
                     samples=3, seed=3)
    table = read_table(out)
    assert [{p: float(r[p]) for p in drawn[0]} for r in table] == drawn
    assert_row_matches(table[0], expected_row(fem.Study.load(study), drawn[0], [("P", "DX")]))
    # without its seed, a random sweep is another sweep
    code = main(["sweep", str(study), "--vary", "load.f.FX=uniform:0.5:2",
                 "--vary", "discrete.1.stiffness=1e4,2e4", "--random", "3", "--out", str(out)])
    assert code == EXIT_INVALID and "differs in: seed" in capsys.readouterr().err


def test_fem_sweep_is_the_function():
    import fem.cli  # noqa: F401  (imports the sweep's helpers)

    assert callable(fem.sweep) and fem.sweep.__name__ == "sweep"


def test_importing_every_module_of_fem_keeps_the_api_names():
    """No module of fem is named like a function of the API (importing a module ``fem.x``
    binds ``fem.x`` to it, in place of the function)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(fem.__path__, "fem."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    assert callable(fem.sweep) and fem.sweep.__name__ == "sweep"
    assert callable(fem.run) and fem.run.__name__ == "run"
    assert isinstance(fem.Study, type) and isinstance(fem.RunError, type)


# -- runs -------------------------------------------------------------------------------------
def test_a_grid_on_an_in_process_cluster_equals_the_runs_of_its_variants(tmp_path):
    from distributed import Client

    study = v2_short()
    parameters = {"link.stop.gap": [8e-4, 1e-3, 1.4e-3], "load.sine.FX": [0.9, 1.1]}
    with Client(processes=False, n_workers=2, threads_per_worker=1,
                dashboard_address=None) as client:
        result = fem.sweep(study, parameters, tmp_path / "sw", client=client,
                           collect=["P.DX"])
    assert result.counts["complete"] == 6 and [r["variant"] for r in result.rows] == \
        list(range(1, 7))
    assert result.columns[:6] == ["variant", "link.stop.gap", "load.sine.FX", "status",
                                  "message", "wall_time"]
    table = read_table(tmp_path / "sw")
    for row, line, values in zip(result.rows, table, variants(parameters)):
        assert {k: row[k] for k in values} == values
        assert float(line["link.stop.gap"]) == values["link.stop.gap"]
        expected = expected_row(study, values, [("P", "DX")])
        assert expected["exact.stop.impacts"] > 0
        assert math.isfinite(expected["exact.stop.max_force"])
        assert_row_matches(row, expected)
        assert_row_matches(line, expected)
        assert (tmp_path / "sw" / "variants" / f"{row['variant']:04d}.h5").is_file()
    with h5py.File(tmp_path / "sw" / "sweep.h5", "r") as f:
        assert list(f.attrs["columns"]) == result.columns
        np.testing.assert_array_equal(f["table/exact.stop.max_force"][()],
                                      result.column("exact.stop.max_force"))
        assert [s.decode() for s in f["table/status"][()]] == ["complete"] * 6


def test_fem_sweep_on_two_worker_processes_writes_the_table_and_the_files(tmp_path, capsys):
    study = v3_newmark(tmp_path)
    out = tmp_path / "v3"
    code = main(["sweep", str(study), "--vary", "discrete.4.mass=9.0,11.0",
                 "--vary", "load.push.FX=4:6:4", "--workers", "2", "--out", str(out),
                 "--collect", "N3.DX"])
    captured = capsys.readouterr()
    # other masses and forces move the peaks away from the references of V3
    assert code == EXIT_CHECK_FAILED, captured.err
    assert "8 variants: 8 complete" in captured.out and str(out / "sweep.csv") in captured.out
    table = read_table(out)
    assert len(table) == 8 and sorted(p.name for p in (out / "variants").iterdir()) == \
        [f"{k:04d}.h5" for k in range(1, 9)]
    base = fem.Study.load(study)
    forces = np.linspace(4.0, 6.0, 4)
    for line, (mass, force) in zip(table, [(m, f) for m in (9.0, 11.0) for f in forces]):
        assert float(line["discrete.4.mass"]) == mass and float(line["load.push.FX"]) == force
        assert line["status"] == "complete"
        assert_row_matches(line, expected_row(base, {"discrete.4.mass": mass,
                                                     "load.push.FX": force}, [("N3", "DX")]))


@pytest.mark.filterwarnings("ignore:.*exceeds the stability limit")
def test_a_value_that_changes_the_shape_of_a_key_is_not_a_missing_key(tmp_path, capsys):
    # V3's first spring has a stiffness per component, [28e4, 1, 2]: a number in its place
    # is the same key (-1 refused: its variant only; 2.8e5 accepted)
    study = v3_newmark(tmp_path)
    out = tmp_path / "sw"
    code = main(["sweep", str(study), "--vary", "discrete.1.stiffness=-1,2.8e5",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == EXIT_ANALYSIS_FAILED, err
    assert "no such key" not in err
    table = read_table(out)
    assert [r["status"] for r in table] == ["refused", "complete"]
    assert table[0]["message"] == "discrete[1].stiffness: values must be >= 0, got -1"
    assert "variant 1: refused: discrete[1].stiffness: values must be >= 0" in err
    assert not (out / "variants" / "0001.h5").exists()
    assert (out / "variants" / "0002.h5").is_file()
    # a key the study lacks and the format knows takes its values variant by variant too
    result = fem.sweep(fem.Study.load(study), {"model.rayleigh.mass": [-1.0, 0.5]},
                       tmp_path / "sw2")
    assert [r["status"] for r in result.rows] == ["refused", "complete"]
    assert "model.rayleigh.mass" in result.rows[0]["message"]
    # a key the format does not know stops the sweep before anything runs
    with pytest.raises(fem.StudyError, match=r"discrete\.1\.stiffnes: the study has no "
                                             r"such key: .*unknown key 'stiffnes'"):
        fem.sweep(fem.Study.load(study), {"discrete.1.stiffnes": [1.0]}, tmp_path / "sw3")
    assert not (tmp_path / "sw3").exists()


def test_failing_variants_are_rows_and_the_sweep_goes_on(tmp_path, capsys, monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    real = worker._run

    def run(variant, out):
        if variant.spec.analyses[0].get("step") == 0.005:
            raise RuntimeError("a bug")
        return real(variant, out)

    monkeypatch.setattr(worker, "_run", run)
    out = tmp_path / "sw"
    code = main(["sweep", str(study), "--vary", "analysis.a.step=0.01,0.06,-1.0,0.005,0.02",
                 "--out", str(out), "--collect", "P.DX"])
    captured = capsys.readouterr()
    assert code == EXIT_ANALYSIS_FAILED
    assert "5 variants: 2 complete, 1 failed, 1 refused, 1 error" in captured.out
    table = read_table(out)
    assert [r["status"] for r in table] == ["complete", "failed", "refused", "error",
                                            "complete"]
    assert "analysis 'a' failed" in table[1]["message"]
    assert "analysis[1].step" in table[2]["message"]
    assert table[3]["message"] == "RuntimeError: a bug"
    assert table[1]["a.max_abs.P.DX"] == ""
    for line, step in ((table[0], 0.01), (table[4], 0.02)):
        assert_row_matches(line, expected_row(fem.Study.load(study),
                                              {"analysis.a.step": step}, [("P", "DX")]))
    assert "variant 2: failed: analysis 'a' failed" in captured.err


@pytest.mark.filterwarnings("ignore:.*exceeds the stability limit")
def test_a_rerun_skips_the_complete_variants_and_another_sweep_is_refused(tmp_path,
                                                                          monkeypatch):
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    parameters = {"analysis.a.step": [0.01, 0.06, 0.02]}
    out = tmp_path / "sw"
    first = fem.sweep(study, parameters, out)
    assert [r["status"] for r in first.rows] == ["complete", "failed", "complete"]
    files = sorted((out / "variants").glob("*.h5"))
    stamps = {p: p.stat().st_mtime_ns for p in files}
    runs = []
    real = worker._run

    def run(variant, file):
        runs.append(Path(file).name)
        return real(variant, file)

    monkeypatch.setattr(worker, "_run", run)
    again = fem.sweep(study, parameters, out)
    assert runs == ["0002.h5"]                    # the failed variant alone runs again
    assert {p: p.stat().st_mtime_ns for p in files if p.name != "0002.h5"} == \
        {p: t for p, t in stamps.items() if p.name != "0002.h5"}
    for a, b in zip(again.rows, first.rows):
        assert {k: v for k, v in a.items() if k != "wall_time"} == \
            {k: v for k, v in b.items() if k != "wall_time"}
    # the wall time of a variant that did not run again is the one of the previous table
    assert [again.rows[k]["wall_time"] for k in (0, 2)] == \
        [first.rows[k]["wall_time"] for k in (0, 2)]
    with pytest.raises(fem.StudyError, match=rf"{out}.*holds another sweep.*parameters"):
        fem.sweep(study, {"analysis.a.step": [0.01]}, out)
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    with pytest.raises(fem.StudyError, match=rf"{full} is not empty"):
        fem.sweep(study, parameters, full)


# -- a scheduler and workers of their own -----------------------------------------------------
@contextlib.contextmanager
def dask_processes(folder: Path, workers: int = 1):
    """A Dask scheduler and ``workers`` workers, each a process of its own (no nanny that
    would restart a killed worker): (scheduler file, worker processes). Always stopped."""
    file = folder / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = dict(env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes = []
    try:
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
             str(file), "--port", "0", "--no-dashboard"], **common))
        deadline = time.monotonic() + 30
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert file.exists(), "the scheduler did not start"
        for _ in range(workers):
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                 str(file), "--nthreads", "1", "--no-nanny", "--no-dashboard"], **common))
        yield file, processes[1:]
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def scheduler(tmp_path):
    with dask_processes(tmp_path) as (file, _):
        yield file


def test_a_sweep_on_a_scheduler_and_a_worker_of_their_own(tmp_path, scheduler, capsys):
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    out = tmp_path / "sw"
    code = main(["sweep", str(study), "--vary", "discrete.1.stiffness=5e3:2e4:3",
                 "--scheduler", str(scheduler), "--out", str(out), "--collect", "P.DX",
                 "--quiet"])
    assert code == EXIT_OK, capsys.readouterr().err
    table = read_table(out)
    assert [r["status"] for r in table] == ["complete"] * 3
    for line, k in zip(table, (5e3, 1.25e4, 2e4)):
        assert float(line["discrete.1.stiffness"]) == k
        expected = expected_row(fem.Study.load(study), {"discrete.1.stiffness": k},
                                [("P", "DX")])
        assert math.isfinite(expected["a.max_abs.P.DX"])
        assert_row_matches(line, expected)


# -- fem post sweep ---------------------------------------------------------------------------
def test_fem_post_sweep_tabulates_and_plots_a_column_against_a_parameter(tmp_path, capsys):
    study = tmp_path / "s.toml"
    study.write_text(DIVERGING)
    out = tmp_path / "sw"
    parameters = {"load.f.FX": [1.0, 2.0], "discrete.1.stiffness": [1e4, 2e4, 4e4]}
    result = fem.sweep(study, parameters, out, collect=["P.DX"])
    column = "a.max_abs.P.DX"
    code = main(["post", "sweep", str(out), "--x", "discrete.1.stiffness", "--y", column,
                 "--plot", str(tmp_path / "k.png"), "--csv", str(tmp_path / "k.csv")])
    printed = capsys.readouterr().out.splitlines()
    assert code == EXIT_OK
    assert printed[0].split() == ["load.f.FX", "discrete.1.stiffness", column, "status"]
    assert len(printed) == 2 + 6 + 1 and printed[-1] == f"wrote {tmp_path / 'k.png'}"
    with open(tmp_path / "k.csv", newline="") as stream:
        lines = list(csv.DictReader(stream))
    assert [float(r[column]) for r in lines] == result.column(column)
    assert (tmp_path / "k.png").stat().st_size > 0
    code = main(["post", "sweep", str(out), "--x", "load.f.FY", "--y", column])
    assert code == EXIT_INVALID and "did you mean 'load.f.FX'" in capsys.readouterr().err


def test_the_variants_of_a_worker_killed_mid_sweep_run_on_the_other(tmp_path):
    study = v2_short().with_values({"analysis.exact.end": 4.0})
    parameters = {"link.stop.gap": [float(g) for g in np.linspace(9e-4, 1.1e-3, 8)]}
    out = tmp_path / "sw"
    found = {}
    with dask_processes(tmp_path, workers=2) as (file, workers):
        sweep = threading.Thread(target=lambda: found.update(
            result=fem.sweep(study, parameters, out, client=str(file))))
        sweep.start()
        # both workers are running a variant once two results files are being written
        deadline = time.monotonic() + 60
        while len(list(out.glob("variants/*.partial"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert time.monotonic() < deadline, "the workers did not start two variants"
        workers[0].kill()
        sweep.join(timeout=120)
        assert not sweep.is_alive()
    result = found["result"]
    assert result.counts["complete"] == 8, [r["message"] for r in result.rows]
    assert not list(out.glob("variants/*.partial"))
    for row in result.rows[::7]:
        assert_row_matches(row, expected_row(study, {"link.stop.gap": row["link.stop.gap"]}))
