"""The results file never destroys anything: an output that is an input of the study (the
study, its mesh, a function's file; directly, through a link or a relative path) is refused
with exit code 2 and the input unchanged; results are written to NAME.partial and renamed
NAME only when complete, so that an existing NAME is replaced only by a complete file; a
study refused during the run leaves no file; a failed analysis leaves its file marked
"failed" without replacing a complete one."""

import os

import h5py
import pytest

from fem.cli import main
from fem.errors import StudyError
from postpro import layout
from test_cli import DIVERGING

OSCILLATOR = """\
[mesh]
file = "{mesh}"
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = 1.0
stiffness = 100.0
[functions.push]
file = "push.csv"
[[load]]
name = "push"
nodes = ["P"]
FX = 1.0
function = "push"
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.1
step = 0.01
"""

MESH = """\
COOR_3D
P 0.0 0.0 0.0
FINSF
GROUP_NO NOM = ALL
P
FINSF
FIN
"""



@pytest.fixture
def case(tmp_path):
    (tmp_path / "chain.mail").write_text(MESH, encoding="utf-8")
    (tmp_path / "push.csv").write_text("0.0,0.0\n1.0,1.0\n", encoding="utf-8")
    study = tmp_path / "study.toml"
    study.write_text(OSCILLATOR.format(mesh="chain.mail"), encoding="utf-8")
    return tmp_path


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_case_runs(case, capsys):
    assert main(["run", str(case / "study.toml"), "--out", str(case / "r.h5"), "--quiet"]) == 0
    with h5py.File(case / "r.h5") as f:
        assert f.attrs["status"] == layout.STATUS_COMPLETE
    assert not (case / "r.h5.partial").exists()


@pytest.mark.parametrize("target,what", [
    ("study.toml", "the study file"),
    ("./sub/../study.toml", "the study file"),
    ("chain.mail", "mesh file"),
    ("push.csv", "function 'push'"),
    ("alias.h5", "the study file"),              # a symbolic link to the study
    ("hard.h5", "the study file"),               # a hard link to the study
])
def test_an_output_that_is_an_input_is_refused(case, capsys, target, what):
    (case / "sub").mkdir()
    os.symlink(case / "study.toml", case / "alias.h5")
    os.link(case / "study.toml", case / "hard.h5")
    before = snapshot(case)
    code = main(["run", str(case / "study.toml"), "--out", str(case / target)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert err.startswith("error: output:") and what in err and "never overwrites" in err
    assert snapshot(case) == before                   # inputs unchanged, nothing written


def test_an_output_key_that_is_an_input_is_refused(case, capsys):
    text = (case / "study.toml").read_text() + '\n[output]\nfile = "chain.mail"\n'
    (case / "study.toml").write_text(text, encoding="utf-8")
    before = snapshot(case)
    assert main(["run", str(case / "study.toml")]) == 2
    assert "mesh file" in capsys.readouterr().err
    assert snapshot(case) == before


def test_a_complete_run_replaces_an_existing_file(case, capsys):
    out = case / "r.h5"
    out.write_bytes(b"an older file")
    assert main(["run", str(case / "study.toml"), "--out", str(out), "--quiet"]) == 0
    with h5py.File(out) as f:
        assert f.attrs["status"] == layout.STATUS_COMPLETE


def test_a_failed_analysis_does_not_replace_a_complete_file(tmp_path, capsys):
    study = tmp_path / "study.toml"
    study.write_text(DIVERGING, encoding="utf-8")
    out = tmp_path / "r.h5"
    out.write_bytes(b"the results of an earlier, complete run")
    assert main(["run", str(study), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert f"results (incomplete): {out}.partial" in err
    assert out.read_bytes() == b"the results of an earlier, complete run"
    with h5py.File(f"{out}.partial") as f:
        assert f.attrs["status"] == layout.STATUS_FAILED


def test_a_failed_analysis_without_an_earlier_file_takes_the_name(tmp_path, capsys):
    study = tmp_path / "study.toml"
    study.write_text(DIVERGING, encoding="utf-8")
    out = tmp_path / "r.h5"
    assert main(["run", str(study), "--out", str(out)]) == 3
    assert f"results (incomplete): {out}\n" in capsys.readouterr().err
    assert not (tmp_path / "r.h5.partial").exists()
    with h5py.File(out) as f:
        assert f.attrs["status"] == layout.STATUS_FAILED


def test_a_study_refused_during_the_run_leaves_no_file(case, capsys, monkeypatch):
    import fem.runner

    def refuse(ctx, spec):
        raise StudyError(f"{spec.where}: refused after the results file was opened")

    monkeypatch.setitem(fem.runner.RUNNERS, ("transient", "physical"), refuse)
    out = case / "r.h5"
    out.write_bytes(b"an older file")
    assert main(["run", str(case / "study.toml"), "--out", str(out)]) == 2
    assert "refused after" in capsys.readouterr().err
    assert out.read_bytes() == b"an older file"
    assert not (case / "r.h5.partial").exists()


def test_an_output_in_a_folder_that_is_a_file_is_a_clear_error(case, capsys):
    (case / "file").write_text("x")
    code = main(["run", str(case / "study.toml"), "--out", str(case / "file" / "r.h5")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err == f"error: output: {case / 'file'}, the folder of {case / 'file' / 'r.h5'}, " \
                  f"is a file\n"
    assert (case / "file").read_text() == "x"


def test_an_output_in_a_missing_folder_is_a_clear_error(case, capsys):
    out = case / "missing" / "r.h5"
    code = main(["run", str(case / "study.toml"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"error: output: the folder {case / 'missing'} of {out} does not exist\n"
    assert not (case / "missing").exists()


def test_an_output_that_is_not_a_regular_file_is_refused(case, capsys):
    fifo = case / "pipe.h5"
    os.mkfifo(fifo)
    code = main(["run", str(case / "study.toml"), "--out", str(fifo)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: output: {fifo} exists and is not a regular file")
    assert fifo.is_fifo() and not (case / "pipe.h5.partial").exists()


def test_a_name_too_long_is_a_clear_error(case, capsys):
    out = case / ("x" * 300 + ".h5")
    code = main(["run", str(case / "study.toml"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith("error: output: ") and "too long" in err.lower()
