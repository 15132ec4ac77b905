"""No analysis with a non-finite value in its results is marked complete: a load or an imposed
motion infinite at an instant of the grid (1/t from t = 0) stops every transient scheme and a
static analysis with exit 3, naming the function and the instant, its file marked "failed";
and the writer itself refuses to mark complete an analysis whose series hold inf or nan."""

import h5py
import numpy as np
import pytest

from fem.catalog import SCHEMES
from fem.cli import main
from fem.errors import SolverError
from fem.results import ResultsWriter

MODEL = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
Q = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P", "Q"]
mass = 1.0
stiffness = 1e4
[functions.f]
expression = "1/t"
"""

LOAD = '[[load]]\nnodes = ["P"]\nFX = 1.0\nfunction = "f"\n'
IMPOSED = '[[constraint]]\nnodes = ["Q"]\nDX = 1e-3\nfunction = "f"\n'


def run(tmp_path, text, capsys):
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "out.h5"
    code = main(["run", str(tmp_path / "study.toml"), "--out", str(out), "--quiet"])
    return code, capsys.readouterr().err, out


def transient(basis, scheme):
    text = ""
    if basis == "modal":
        text += '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 1\n'
    text += (f'[[analysis]]\nname = "run"\nkind = "transient"\nbasis = "{basis}"\n'
             f'scheme = "{scheme}"\nend = 0.01\nstep = 1e-3\n')
    if basis == "modal":
        text += 'modes = "modes"\n'
    return text


@pytest.mark.parametrize("basis,scheme", sorted(SCHEMES))
def test_a_load_infinite_on_the_grid_fails_every_transient_scheme(tmp_path, capsys, basis,
                                                                   scheme):
    code, err, out = run(tmp_path, MODEL + LOAD + transient(basis, scheme), capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert "function 'f'" in err and "t = 0 s" in err and "not finite" in err, err
    with h5py.File(out) as f:
        assert f.attrs["status"] == "failed"
        assert f["analyses/run"].attrs.get("status") != "complete"


def test_an_imposed_motion_infinite_on_the_grid_fails_the_run(tmp_path, capsys):
    code, err, out = run(tmp_path, MODEL + IMPOSED + transient("physical", "newmark"), capsys)
    assert code == 3, err
    assert "function 'f'" in err and "t = 0 s" in err, err


def test_a_static_load_infinite_at_its_time_names_the_function(tmp_path, capsys):
    text = MODEL + LOAD + '[[analysis]]\nname = "st"\nkind = "static"\ntime = 0.0\n'
    code, err, out = run(tmp_path, text, capsys)
    assert code == 3, err
    assert "function 'f' of load" in err and "t = 0 s" in err, err
    assert "singular" not in err
    with h5py.File(out) as f:
        assert f.attrs["status"] == "failed"


def _writer(path):
    return ResultsWriter(path, title="t", study_source="", node_names=["P"],
                         coordinates=np.zeros((1, 3)), dof_node=[0], dof_component=["DX"],
                         dof_imposed=[False])


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_the_writer_does_not_mark_complete_a_series_with_a_non_finite_value(tmp_path, bad):
    writer = _writer(tmp_path / "w.h5")
    with writer:
        aw = writer.analysis("run", "transient")
        series = aw.series({"displacement": 1})
        series.append(time=np.array([0.0, 0.1]), displacement=np.array([[0.0], [1.0]]))
        series.append(time=np.array([0.2, 0.3]), displacement=np.array([[1.0], [bad]]))
        with pytest.raises(SolverError, match=r"'displacement' is not finite at t = 0.3 s"):
            aw.finish("complete")
        aw.finish("failed", "stopped")             # a failed analysis is recorded as such
    finite = _writer(tmp_path / "ok.h5")
    with finite:
        aw = finite.analysis("run", "transient")
        aw.series({"displacement": 1}).append(time=np.array([0.0]),
                                              displacement=np.array([[2.0]]))
        aw.finish("complete")
