"""Units in the results file and in what fem post prints: every float dataset states its
unit; rotations are in rad, rad/s, rad/s^2; a field mixing translations and rotations has
one unit per column."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from fem.cli import main

# two nodes with DX and DRX: a spring and a torsion spring to the ground, a mass and an
# inertia, a force and a stop on DX; every kind of analysis
STUDY = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
[mesh.cells]
AB = { type = "SEG2", nodes = ["A", "B"] }
[model]
components = ["DX", "DRX"]
[[discrete]]
nodes = ["A", "B"]
stiffness = [1.0e4, 1.0e4, 1.0e4, 50.0, 50.0, 50.0]
damping = [2.0, 2.0, 2.0, 0.01, 0.01, 0.01]
mass = 1.0
inertia = 0.01
[[discrete]]
cells = ["AB"]
stiffness = [2.0e4, 2.0e4, 2.0e4, 80.0, 80.0, 80.0]
[[load]]
name = "push"
nodes = ["B"]
FX = 10.0
MX = 0.1
[[link]]
name = "stop"
kind = "shock"
nodes = ["B"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = 2e-4
stiffness = 1e6
[[analysis]]
name = "modes"
kind = "modes"
count = 4
[[analysis]]
name = "cmodes"
kind = "complex_modes"
count = 4
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.05
step = 1e-4
links = ["stop"]
[[analysis]]
name = "modal"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "central_difference"
end = 0.05
step = 1e-5
links = ["stop"]
[[analysis]]
name = "frf"
kind = "harmonic"
loads = ["push"]
frequencies = { start = 1.0, stop = 30.0, count = 5 }
"""


def _run(tmp_path):
    study = tmp_path / "s.toml"
    study.write_text(STUDY, encoding="utf-8")
    assert main(["run", str(study), "--out", str(tmp_path / "r.h5"), "--quiet"]) == 0
    return tmp_path / "r.h5"


def _units(dataset) -> list[str]:
    units = dataset.attrs["units"]
    units = [units] if isinstance(units, (str, bytes)) else list(units)
    return [u.decode() if isinstance(u, bytes) else str(u) for u in units]


def _spectral_run(tmp_path):
    from fem.cli import main

    study = Path(__file__).resolve().parents[1] / "studies" / "spectral_frame.toml"
    out = tmp_path / "spectral.h5"
    assert main(["run", str(study), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("study", ["every kind", "spectral"])
def test_every_float_dataset_states_its_unit(tmp_path, study):
    path = _run(tmp_path) if study == "every kind" else _spectral_run(tmp_path)
    missing = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "fc" \
                    and "units" not in obj.attrs:
                missing.append(name)
        f.visititems(visit)
    assert missing == []


def test_nodal_fields_have_a_unit_per_column_where_rotations_mix_in(tmp_path):
    path = _run(tmp_path)
    with h5py.File(path, "r") as f:
        components = [c.decode() for c in f["dofs/component"][()]]
        assert components == ["DX", "DRX", "DX", "DRX"]
        expected = {"displacement": ["m", "rad"] * 2, "velocity": ["m/s", "rad/s"] * 2,
                    "acceleration": ["m/s^2", "rad/s^2"] * 2}
        for analysis in ("run", "modal", "frf"):
            for field, units in expected.items():
                assert _units(f[f"analyses/{analysis}/{field}"]) == units, (analysis, field)
        assert _units(f["analyses/modes/shapes"]) == ["kg^-0.5", "rad/(m.kg^0.5)"] * 2
        assert _units(f["analyses/run/time"]) == ["s"]
        assert _units(f["analyses/run/links/stop/penetration"]) == ["m"]
        assert _units(f["analyses/run/links/stop/normal_force"]) == ["N"]
        assert _units(f["analyses/run/links/stop/state"]) == ["1"]
        assert _units(f["analyses/modes/participation_factor"]) == ["kg^0.5"]


def test_csv_headers_plot_labels_and_info_name_rotation_units(tmp_path, capsys):
    path = _run(tmp_path)
    capsys.readouterr()
    csv = tmp_path / "s.csv"
    assert main(["post", "series", str(path), "--analysis", "run", "--node", "B",
                 "--field", "velocity", "-o", str(csv)]) == 0
    header = csv.read_text().splitlines()[0]
    assert header == "time [s],B DX velocity [m/s],B DRX velocity [rad/s]"
    assert main(["post", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("fields: displacement [m, rad], velocity [m/s, rad/s], acceleration "
            "[m/s^2, rad/s^2]") in out
    import postpro.jobs.common as common

    assert common.unit("displacement", ["DRX"]) == "rad"
    assert common.unit("acceleration", ["DX", "DRX"]) == "m/s^2 or rad/s^2"


def test_rotation_series_are_read_in_rad(tmp_path):
    """The twist of B under its moment MX = 0.1 N.m at 1 Hz, far below the torsion modes:
    nearly the static rotation, the solution of K u = F on the DRX dofs, in rad."""
    import postpro

    path = _run(tmp_path)
    k_ground, k_cell = 50.0, 80.0
    K = np.array([[k_ground + k_cell, -k_cell], [-k_cell, k_ground + k_cell]])
    static = np.linalg.solve(K, [0.0, 0.1])
    with postpro.open(path) as results:
        frf = results.analysis("frf")
        f, twist = frf.series("displacement", "B", "DRX")
    assert abs(abs(twist[0]) - static[1]) < 0.02 * static[1]


@pytest.mark.parametrize("study", ["every kind", "spectral"])
def test_the_results_format_page_names_every_dataset_and_attribute(tmp_path, study):
    """docs/results_format.md documents what the file holds: each dataset, group and
    attribute name written for this study (which has every kind of analysis but spectral)
    and for the spectral study is on it."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "results_format.md").read_text()
    path = _run(tmp_path) if study == "every kind" else _spectral_run(tmp_path)
    own = {"run", "modal", "frf", "modes", "cmodes", "stop", "seismic"}  # the studies' names
    names = set()
    with h5py.File(path, "r") as f:
        names.update(f.attrs)

        def visit(name, obj):
            parts = [p for p in name.split("/") if p not in own]
            names.update(p for p in parts if p not in ("analyses", "links"))
            names.update(obj.attrs)
            if isinstance(obj, h5py.Dataset) and obj.dtype.names:
                names.update(obj.dtype.names)
        f.visititems(visit)
    missing = sorted(n for n in names if f"`{n}`" not in page and f"{n}`" not in page
                     and f"`{n}/" not in page
                     and f"/{n}" not in page)
    assert missing == []
