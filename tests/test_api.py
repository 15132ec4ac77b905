"""The Python API: fem.Study (load, from_dict, to_dict, with_values) and fem.run, against
the command line's files and messages."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fem
import postpro
from fem.cli import main
from fem.study.toml_text import to_toml

from conftest import CHAIN3_INLINE
from test_invalid_input import CASES

# the chain of the invalid-input cases: N1 clamped, springs AC and CB (1e4 N/m), 10 kg at N2
# and N3, a ramped 5 N force "push" on N3, one Newmark analysis "run"
BASE = CHAIN3_INLINE[:CHAIN3_INLINE.index("[[check]]")] if "[[check]]" in CHAIN3_INLINE \
    else CHAIN3_INLINE


def _cli_error(tmp_path, capsys, text: str) -> str:
    study = tmp_path / "study.toml"
    study.write_text(text, encoding="utf-8")
    code = main(["run", str(study), "--out", str(tmp_path / "cli.h5")])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    return err


def _api_error(tmp_path, text: str, from_dict: bool) -> str:
    with pytest.raises(fem.StudyError) as info:
        if from_dict:
            study = fem.Study.from_dict(tomllib.loads(text), root=tmp_path, name="study")
        else:
            study = fem.Study.load(tmp_path / "study.toml")
        fem.run(study).close()
    return f"error: {info.value}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_refused_study_raises_the_message_of_the_command_line(tmp_path, capsys, case):
    _, text, _ = case
    expected = _cli_error(tmp_path, capsys, text)
    assert _api_error(tmp_path, text, from_dict=False) == expected
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return                              # only a file can hold text TOML cannot read
    assert _api_error(tmp_path, text, from_dict=True) == expected


def test_a_study_from_a_dict_runs_in_memory_as_the_command_line_writes_its_file(tmp_path):
    path = tmp_path / "chain.toml"
    path.write_text(BASE, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "cli.h5"), "--quiet"]) == 0
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path)
    with fem.run(study) as results, postpro.open(tmp_path / "cli.h5") as cli:
        assert results.status == "complete"
        mine, theirs = results.analysis("run"), cli.analysis("run")
        np.testing.assert_array_equal(mine.time, theirs.time)
        for field in ("displacement", "velocity", "acceleration"):
            for node in ("N1", "N2", "N3"):
                np.testing.assert_array_equal(mine.series(field, node, "DX")[1],
                                              theirs.series(field, node, "DX")[1])
        assert len(mine.time) == 101


def test_run_to_a_file_writes_what_the_command_line_writes(tmp_path):
    path = tmp_path / "chain.toml"
    path.write_text(BASE, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "cli.h5"), "--quiet"]) == 0
    with fem.run(fem.Study.load(path), out=tmp_path / "api.h5") as results:
        assert results.status == "complete"
    with h5py.File(tmp_path / "cli.h5", "r") as a, h5py.File(tmp_path / "api.h5", "r") as b:
        assert a["study/source"][()] == b["study/source"][()]
        for name in ("time", "displacement", "velocity"):
            np.testing.assert_array_equal(a[f"analyses/run/{name}"][()],
                                          b[f"analyses/run/{name}"][()])
    assert not (tmp_path / "api.h5.partial").exists()


def test_run_takes_a_path_too_and_refuses_an_output_folder(tmp_path):
    path = tmp_path / "chain.toml"
    path.write_text(BASE, encoding="utf-8")
    with fem.run(path) as results:
        assert results.analyses == ("run",)
    with pytest.raises(fem.StudyError, match="is a directory"):
        fem.run(path, out=tmp_path)


def _tip_at_end(study) -> float:
    with fem.run(study) as results:
        return float(results.analysis("run").series("displacement", "N3", "DX")[1][-1])


def test_with_values_changes_one_key_of_each_kind_and_leaves_the_original(tmp_path):
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path)
    before = study.to_dict()
    cases = {
        "study.title": ("new title", lambda d: d["study"]["title"]),
        "discrete.1.stiffness": (2e4, lambda d: d["discrete"][0]["stiffness"]),
        "load.push.FX": (7.0, lambda d: d["load"][0]["FX"]),
        "load.1.FX": (8.0, lambda d: d["load"][0]["FX"]),
        "analysis.run.step": (5e-4, lambda d: d["analysis"][0]["step"]),
        "mesh.nodes.N3.1": (2.5, lambda d: d["mesh"]["nodes"]["N3"][0]),
        "functions.ramp.right": ("linear", lambda d: d["functions"]["ramp"]["right"]),
        "output.file": ("other.h5", lambda d: d["output"]["file"]),
        "discrete.2.damping": (3.0, lambda d: d["discrete"][1]["damping"]),   # a new key
    }
    for path, (value, read) in cases.items():
        varied = study.with_values({path: value})
        assert read(varied.to_dict()) == value, path
        assert study.to_dict() == before, f"{path} changed the original"
    # what the solver reads changed too
    varied = study.with_values({"analysis.run.end": 0.05, "discrete.1.stiffness": 2e4})
    assert varied.spec.analysis("run").get("end") == 0.05
    assert varied.spec.output == Path("study.h5")        # as fem run: in the current folder
    assert study.with_values({"output.file": "x.h5"}).spec.output == tmp_path / "x.h5"
    assert study.with_values({"study.title": "T"}).title == "T"


def test_with_values_changes_the_response_as_a_changed_file_does(tmp_path):
    """A stiffer first spring: the run equals that of a file edited by hand."""
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path)
    edited = tmp_path / "edited.toml"
    edited.write_text(BASE.replace("stiffness = 1.0e4", "stiffness = 3.0e4", 1), "utf-8")
    stiffer = study.with_values({"discrete.1.stiffness": 3.0e4})
    assert _tip_at_end(stiffer) == _tip_at_end(fem.Study.load(edited))
    assert _tip_at_end(stiffer) != _tip_at_end(study)


@pytest.mark.parametrize("path, words", [
    ("lnk.x", ["lnk.x", "'lnk' names nothing", "did you mean 'link'"]),
    ("link.contact.gap", ["link.contact.gap", "no [[link]] block"]),
    ("load.pull.FX", ["load.pull.FX", "no [[load]] block is named 'pull'", "push"]),
    ("discrete.3.mass", ["discrete.3.mass", "no [[discrete]] block 3", "1 to 2"]),
    ("discrete.0.mass", ["discrete.0.mass", "no [[discrete]] block 0"]),
    ("analysis.run.step.x", ["analysis.run.step is a value"]),
    ("mesh.nodes.N9.1", ["'N9' names nothing in mesh.nodes"]),
    ("mesh.nodes.N3.4", ["no entry of mesh.nodes.N3 4", "1 to 3"]),
    ("", ["a study path is a string"]),
])
def test_a_path_that_names_nothing_names_the_wrong_part(tmp_path, path, words):
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path)
    with pytest.raises(fem.StudyError) as info:
        study.with_values({path: 1.0})
    for word in words:
        assert word in str(info.value), str(info.value)


def test_a_refused_value_gives_the_validation_message(tmp_path):
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path)
    with pytest.raises(fem.StudyError, match=r"analysis\[1\]\.step"):
        study.with_values({"analysis.run.step": -1.0})
    with pytest.raises(fem.StudyError, match=r"discrete\[1\]: unknown key 'stifness'"):
        study.with_values({"discrete.1.stifness": 1.0})


def test_from_dict_takes_numpy_values_and_refuses_objects(tmp_path):
    data = tomllib.loads(BASE)
    data["discrete"][0]["stiffness"] = np.float64(1.0e4)
    data["mesh"]["nodes"]["N3"] = np.array([2.0, 0.0, 0.0])
    study = fem.Study.from_dict(data, root=tmp_path)
    assert study.to_dict() == tomllib.loads(BASE)
    data["discrete"][0]["stiffness"] = object()
    with pytest.raises(fem.StudyError, match=r"discrete\[1\]\.stiffness: a object"):
        fem.Study.from_dict(data, root=tmp_path)
    with pytest.raises(fem.StudyError, match="mapping"):
        fem.Study.from_dict([1, 2], root=tmp_path)


def test_a_failed_analysis_raises_run_error_with_the_results(tmp_path):
    # a stiffness so large that central differences at this step blow up
    study = fem.Study.from_dict(tomllib.loads(BASE), root=tmp_path).with_values({
        "analysis.run.scheme": "central_difference", "discrete.1.stiffness": 1.0e12})
    with pytest.raises(fem.RunError) as info, pytest.warns(UserWarning, match="stability"):
        fem.run(study)
    assert info.value.analysis == "run"
    assert isinstance(info.value, fem.SolverError)
    assert info.value.results.status == "failed"
    info.value.results.close()


def test_a_loaded_study_keeps_its_text_and_a_varied_one_is_written_back(tmp_path):
    path = tmp_path / "chain.toml"
    path.write_text(BASE, encoding="utf-8")
    study = fem.Study.load(path)
    assert study.to_toml() == BASE
    varied = study.with_values({"load.push.FX": 6.0})
    assert tomllib.loads(varied.to_toml()) == varied.to_dict()
    again = fem.Study.load(varied.save(tmp_path / "again.toml"))
    assert again.to_dict() == varied.to_dict()


def test_import_fem_loads_no_solver(tmp_path):
    import subprocess
    import sys

    code = ("import sys, fem; assert 'fem.runner' not in sys.modules; "
            "assert 'numba' not in sys.modules; fem.Study; assert 'fem.api' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- TOML text: what tomllib reads back ----------------------------------------------------
_keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=6)
_scalars = (st.booleans() | st.integers(-2**63, 2**63 - 1)
            | st.floats(allow_nan=False) | st.text(st.characters(codec="utf-8",
                                                                 exclude_categories=("Cs",))))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_keys, inner, max_size=3), max_leaves=8)
_tables = st.recursive(st.dictionaries(_keys, _values, max_size=4),
                       lambda inner: st.dictionaries(_keys, inner | st.lists(inner, min_size=1,
                                                                             max_size=2),
                                                     max_size=3), max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(_tables)
def test_toml_text_reads_back_to_the_same_tables(data):
    assert tomllib.loads(to_toml(data)) == data


def test_toml_text_of_special_floats():
    text = to_toml({"a": math.inf, "b": -math.inf, "c": 1e-300, "d": 0.1})
    back = tomllib.loads(text)
    assert back["a"] == math.inf and back["b"] == -math.inf
    assert back["c"] == 1e-300 and back["d"] == 0.1
    assert math.isnan(tomllib.loads(to_toml({"n": math.nan}))["n"])


def test_with_analyses_keeps_the_named_ones_what_they_read_and_their_checks(tmp_path):
    root = Path(__file__).resolve().parents[1] / "studies"
    study = fem.Study.load(root / "v2_impact_oscillator.toml")
    checks_on = {a: sum(c.analysis == a for c in study.spec.checks) for a in study.analyses}
    assert study.with_analyses("modal_cd").analyses == ("modes", "modal_cd")
    exact = study.with_analyses("exact")
    assert exact.analyses == ("exact",)
    assert len(exact.spec.checks) == checks_on["exact"] > 0
    assert study.analyses == ("exact", "modes", "modal_cd", "modal_adaptive2")
    with pytest.raises(fem.StudyError, match="no analysis is named 'nope'"):
        study.with_analyses("nope")
    with fem.run(exact) as results:
        events = results.analysis("exact").events
        assert len(events) == 140
        table = results.checks
        assert len(table) == checks_on["exact"] and table["passed"].all()
