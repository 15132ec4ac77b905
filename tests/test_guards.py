"""Event storms and out-of-range parameters end cleanly: a ball bouncing to rest with a zero
grazing velocity sticks at the accumulation point of its impacts on every scheme; a contact
stiffness of 1e308 stops every scheme with an error naming the link; a mass of 1e-300 stops
`exact` with the numbers; none of them hangs, and a failed analysis leaves its file marked
"failed"."""

import h5py
import numpy as np
import pytest

from fem.catalog import SCHEMES
from conftest import one_dof_model
from fem.cli import main

G, DROP, E = 9.81, 1.0, 0.6

BALL = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DZ"]
[[discrete]]
nodes = ["P"]
mass = 1.0
[[load]]
name = "weight"
kind = "gravity"
g = 9.81
direction = [0.0, 0.0, -1.0]
[[link]]
name = "floor"
kind = "impact"
nodes = ["P"]
component = "DZ"
gap = 1.0
restitution = 0.6
grazing_velocity = 0.0
[[analysis]]
name = "run"
kind = "transient"
scheme = "{scheme}"
events = "locate"
end = 3.0
step = {step}
links = ["floor"]
"""


def run(tmp_path, text, capsys):
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "out.h5"
    code = main(["run", str(tmp_path / "study.toml"), "--out", str(out), "--quiet"])
    return code, capsys.readouterr().err, out


@pytest.mark.parametrize("scheme,step", [("exact", 0.01), ("rk4", 1e-3), ("newmark", 1e-3),
                                         ("central_difference", 1e-3)])
def test_a_ball_bouncing_to_rest_sticks_at_the_accumulation_point(tmp_path, capsys, scheme,
                                                                   step):
    code, err, out = run(tmp_path, BALL.format(scheme=scheme, step=step), capsys)
    assert code == 0, err
    # closed form: first impact at t1 = sqrt(2 h / g) with speed v1 = g t1; flights of
    # 2 v1 e^k / g sum to the accumulation point t1 (1 + 2 e / (1 - e))
    t1 = np.sqrt(2 * DROP / G)
    t_rest = t1 * (1 + 2 * E / (1 - E))
    with h5py.File(out) as f:
        grp = f["analyses/run"]
        kinds = [k.decode() for k in grp["events"]["kind"]]
        times = grp["events"]["time"][:]
        detail = grp["events"]["detail"][-1].decode()
        t, z = grp["time"][:], grp["displacement"][:, 0]
        force = grp["links/floor/normal_force"][:]
    assert kinds[-1] == "stick" and set(kinds[:-1]) == {"impact"}, kinds
    assert "coming to rest" in detail
    assert 10 < len(kinds) < 60
    # the early impacts of a second-order-or-better scheme sit on the closed form
    k = np.arange(6)
    expected = t1 + np.concatenate([[0], np.cumsum(2 * G * t1 * E ** np.arange(1, 6) / G)])
    assert np.max(np.abs(times[k] - expected)) < (1e-9 if scheme == "exact" else 2e-3)
    assert abs(times[-1] - t_rest) < (1e-5 if scheme == "exact" else 2e-3)
    rest = t > times[-1] + step
    assert np.max(np.abs(z[rest] + DROP)) < 1e-9
    np.testing.assert_allclose(force[rest], G, rtol=1e-6)


STIFF = one_dof_model(stiffness=100.0) + """
[[initial]]
nodes = ["P"]
velocity = {{ DX = 1.0 }}
[[link]]
name = "stop"
kind = "shock"
nodes = ["P"]
normal = [1.0, 0.0, 0.0]
gap = 0.05
stiffness = 1e308
{modes}
[[analysis]]
name = "run"
kind = "transient"
basis = "{basis}"
scheme = "{scheme}"
end = 1.0
step = 1e-3
links = ["stop"]
"""
MODES = '[[analysis]]\nname = "modes"\nkind = "modes"\ncount = 1\n'


def _shock_cells():
    return [key for key, row in SCHEMES.items() if row.features["shock.plane"] is True]


@pytest.mark.parametrize("basis,scheme", _shock_cells())
def test_a_contact_stiffness_of_1e308_stops_with_the_link_named(tmp_path, capsys, basis,
                                                                scheme):
    text = STIFF.format(basis=basis, scheme=scheme, modes=MODES if basis == "modal" else "")
    if basis == "modal":
        text = text.replace('basis = "modal"', 'basis = "modal"\nmodes = "modes"')
    code, err, out = run(tmp_path, text, capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert "'stop'" in err and "analysis 'run'" in err
    with h5py.File(out) as f:
        assert f["analyses/run"].attrs["status"] == "failed"


LIGHT = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = 1e-300
stiffness = 1.0
[[initial]]
nodes = ["P"]
displacement = { DX = 1.0 }
[[analysis]]
name = "run"
kind = "transient"
scheme = "exact"
end = 1.0
step = 0.01
"""


def test_a_mass_of_1e_300_stops_exact_with_the_numbers(tmp_path, capsys):
    code, err, out = run(tmp_path, LIGHT, capsys)
    assert code == 3, err
    assert "rad/s" in err and "steps" in err and "analysis 'run'" in err
    with h5py.File(out) as f:
        assert f["analyses/run"].attrs["status"] == "failed"
