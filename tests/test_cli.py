"""The ``fem`` command line: run, checks table, exit codes, quiet mode, ``python -m fem``,
``fem mesh``, and an analysis that diverges."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import h5py
import pytest

from fem.cli import EXIT_ANALYSIS_FAILED, EXIT_CHECK_FAILED, EXIT_OK, main
from postpro import layout

from conftest import CHAIN3_INLINE

ROOT = Path(__file__).resolve().parents[1]
CHAIN3_MAIL = ROOT / "meshes" / "chain3.mail"
CHAIN3_STUDY = ROOT / "studies" / "v3_chain3.toml"
FEM = Path(sys.executable).with_name("fem")

# Three-node chain along X, N1 clamped; the check holds the computed value at t = 0.1 s.
STUDY = CHAIN3_INLINE

# One node, m = 1 kg on a 1e4 N/m spring to the ground: omega = 100 rad/s, so the central
# difference scheme is stable for a step below 2 / omega = 0.02 s. A step of 0.06 s (3 times
# the limit) amplifies the response about 34 times per step: 500 steps overflow.
DIVERGING = """\
[mesh.nodes]
N1 = [0.0, 0.0, 0.0]

[model]
components = ["DX"]

[[discrete]]
nodes = ["N1"]
mass = 1.0
stiffness = 1.0e4

[[load]]
name = "kick"
nodes = ["N1"]
FX = 1.0

[[analysis]]
name = "blowup"
kind = "transient"
scheme = "central_difference"
end = 30.0
step = 0.06
"""


def write(tmp_path, text, name="study.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def fem(*args, cwd, module=False):
    """Run the installed ``fem`` script (or ``python -m fem``) in a subprocess."""
    cmd = [sys.executable, "-m", "fem"] if module else [str(FEM)]
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def root_status(path) -> str:
    with h5py.File(path, "r") as f:
        return f.attrs["status"]


# -- fem run ----------------------------------------------------------------------------------
def test_run_prints_the_checks_table_and_the_results_file(tmp_path, capsys):
    study, out = write(tmp_path, STUDY), tmp_path / "chain.h5"
    code = main(["run", str(study), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    lines = captured.out.splitlines()
    assert lines[0].split()[:3] == ["ANALYSIS", "QUANTITY", "NODE/CMP"]
    assert any(line.split()[:3] == ["run", "displacement", "N3/DX"] and line.endswith("OK")
               for line in lines)
    assert "1 passed, 0 failed" in captured.out
    assert lines[-1] == f"results: {out}"
    assert captured.err == ""
    assert root_status(out) == layout.STATUS_COMPLETE
    with h5py.File(out, "r") as f:
        assert f[layout.ANALYSES]["run"].attrs["status"] == layout.STATUS_COMPLETE
        assert bool(f[layout.CHECKS]["passed"][0])


def test_run_writes_the_output_file_of_the_study(tmp_path, capsys):
    study = write(tmp_path, STUDY + '\n[output]\nfile = "named.h5"\n')
    code = main(["run", str(study)])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    assert (tmp_path / "named.h5").is_file()
    assert captured.out.splitlines()[-1] == f"results: {tmp_path / 'named.h5'}"


def test_a_check_without_analysis_uses_the_only_analysis(tmp_path, capsys):
    study = write(tmp_path, STUDY.replace('analysis = "run"\n', ""))
    code = main(["run", str(study), "--out", str(tmp_path / "r.h5")])
    assert code == EXIT_OK, capsys.readouterr().err


def test_a_failed_check_exits_1_and_is_stored(tmp_path, capsys):
    study = write(tmp_path, STUDY.replace("reference = 9.349408e-4", "reference = 1.0e-3"))
    out = tmp_path / "chain.h5"
    code = main(["run", str(study), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_CHECK_FAILED
    assert "0 passed, 1 failed" in captured.out
    assert "NOOK" in captured.out
    assert captured.out.splitlines()[-1] == f"results: {out}"
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == layout.STATUS_COMPLETE
        checks = f[layout.CHECKS][:]
        assert len(checks) == 1
        assert not bool(checks["passed"][0])
        assert checks["reference"][0] == pytest.approx(1.0e-3)
        assert checks["computed"][0] == pytest.approx(9.349408e-4, rel=1e-5)


def test_quiet_prints_nothing_on_success(tmp_path, capsys):
    study, out = write(tmp_path, STUDY), tmp_path / "chain.h5"
    code = main(["run", str(study), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert code == EXIT_OK
    assert captured.out == "" and captured.err == ""
    assert root_status(out) == layout.STATUS_COMPLETE


def test_quiet_still_reports_a_failed_check_by_its_exit_code(tmp_path, capsys):
    study = write(tmp_path, STUDY.replace("reference = 9.349408e-4", "reference = 1.0e-3"))
    code = main(["run", str(study), "--out", str(tmp_path / "chain.h5"), "-q"])
    captured = capsys.readouterr()
    assert code == EXIT_CHECK_FAILED
    assert captured.out == "" and captured.err == ""


@pytest.mark.skipif(not FEM.exists(), reason="the fem script is not installed next to python")
def test_the_script_and_python_m_fem_agree(tmp_path):
    study = write(tmp_path, STUDY)
    script = fem("run", study.name, "--out", "script.h5", cwd=tmp_path)
    module = fem("run", study.name, "--out", "module.h5", cwd=tmp_path, module=True)
    for proc, name in ((script, "script.h5"), (module, "module.h5")):
        assert proc.returncode == EXIT_OK, proc.stderr
        assert proc.stderr == ""
        assert proc.stdout.splitlines()[-1] == f"results: {name}"
        assert root_status(tmp_path / name) == layout.STATUS_COMPLETE
    assert script.stdout.replace("script.h5", "X") == module.stdout.replace("module.h5", "X")


def test_python_m_fem_quiet_and_failed_check(tmp_path):
    study = write(tmp_path, STUDY.replace("reference = 9.349408e-4", "reference = 1.0e-3"))
    proc = fem("run", study.name, "--out", "r.h5", "--quiet", cwd=tmp_path, module=True)
    assert proc.returncode == EXIT_CHECK_FAILED, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    proc = fem("run", write(tmp_path, STUDY, "ok.toml").name, "-o", "ok.h5", "-q", cwd=tmp_path,
               module=True)
    assert proc.returncode == EXIT_OK and proc.stdout == "" and proc.stderr == ""


def test_python_m_fem_version():
    proc = fem("--version", cwd=ROOT, module=True)
    assert proc.returncode == 0
    assert proc.stdout.startswith("fem ")


@pytest.mark.skipif(not CHAIN3_MAIL.exists(), reason="meshes/chain3.mail is not there yet")
def test_run_the_v3_chain_study(tmp_path, capsys):
    out = tmp_path / "v3.h5"
    code = main(["run", str(CHAIN3_STUDY), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.out + captured.err
    # 25 seed checks for each analysis of the study
    summary = next(line for line in captured.out.splitlines() if line.endswith(" 0 failed"))
    passed = int(summary.split()[0])
    assert passed >= 25 and passed % 25 == 0
    assert captured.out.splitlines()[-1] == f"results: {out}"


# -- fem mesh ---------------------------------------------------------------------------------
@pytest.mark.skipif(not CHAIN3_MAIL.exists(), reason="meshes/chain3.mail is not there yet")
def test_mesh_prints_nodes_cells_and_groups(capsys):
    code = main(["mesh", str(CHAIN3_MAIL)])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "nodes: 3" in out
    assert "cells: 2 (SEG2: 2, POI1: 0)" in out
    assert "node groups: 2" in out and "cell groups: 1" in out
    for group, members in (("CLAMP", "N1"), ("MASSES", "N2 N3"), ("SPRINGS", "AC CB")):
        assert f"{group} ({len(members.split())}): {members}" in out
    assert "AC: SEG2 N1 N2" in out and "CB: SEG2 N2 N3" in out


def test_mesh_of_a_missing_file_exits_2(tmp_path, capsys):
    code = main(["mesh", str(tmp_path / "none.mail")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "none.mail" in err and len(err.splitlines()) == 1


# -- an analysis that diverges ----------------------------------------------------------------
def _assert_diverged(out: Path):
    assert out.is_file()
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] != layout.STATUS_COMPLETE
        group = f[layout.ANALYSES]["blowup"]
        assert group.attrs["status"] == layout.STATUS_FAILED
        assert "diverged" in group.attrs["message"]
        assert len(group["time"]) > 0          # the rows archived before the divergence stay


def test_a_diverging_analysis_exits_3(tmp_path, capsys):
    study, out = write(tmp_path, DIVERGING), tmp_path / "blowup.h5"
    code = main(["run", str(study), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_ANALYSIS_FAILED
    assert "Traceback" not in captured.err
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert "analysis 'blowup'" in errors[0] and "diverged" in errors[0]
    assert f"results (incomplete): {out}" in captured.err
    assert "results: " not in captured.out
    _assert_diverged(out)


@pytest.mark.skipif(not FEM.exists(), reason="the fem script is not installed next to python")
def test_a_diverging_analysis_exits_3_through_the_script(tmp_path):
    write(tmp_path, DIVERGING)
    proc = fem("run", "study.toml", "--out", "blowup.h5", "--quiet", cwd=tmp_path)
    assert proc.returncode == EXIT_ANALYSIS_FAILED, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0].startswith("error: analysis 'blowup'")
    _assert_diverged(tmp_path / "blowup.h5")
