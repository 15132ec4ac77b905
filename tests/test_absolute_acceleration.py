"""The absolute_acceleration field: the relative acceleration plus the ground's, under a base
acceleration, on a physical and a modal basis; checked against the equilibrium of the mass
and against the closed form of a damped oscillator under a harmonic ground acceleration."""

from __future__ import annotations

import numpy as np
import pytest

from fem.errors import StudyError
from postpro.cli import main as post

M, K, C = 2.0, 800.0, 6.0          # kg, N/m, N.s/m along DX and DY
VALUE, W = 1.5, 9.0                # ground acceleration VALUE * sin(W t), m/s^2 and rad/s
DIRECTION = (0.6, 0.8, 0.0)        # unit direction (given as [3, 4, 0])
AXIS = {"DX": 0, "DY": 1}

MODEL = f"""
[mesh.nodes]
G = [0.0, 0.0, 0.0]
P = [1.0, 0.0, 0.0]
[mesh.cells]
GP = {{ type = "SEG2", nodes = ["G", "P"] }}
[model]
components = ["DX", "DY", "DRZ"]
[[discrete]]
cells = ["GP"]
stiffness = [{K}, {K}, {K}, 5.0, 5.0, 5.0]
damping = [{C}, {C}, {C}, 0.0, 0.0, 0.0]
[[discrete]]
nodes = ["P"]
mass = {M}
inertia = 0.1
[[constraint]]
nodes = ["G"]
DX = 0.0
DY = 0.0
DRZ = 0.0
[functions.quake]
expression = "sin({W}*t)"
[[load]]
name = "quake"
kind = "base_acceleration"
direction = [3.0, 4.0, 0.0]
value = {VALUE}
function = "quake"
"""


def _column(f, analysis, field, node, comp):
    g = f["analyses"][analysis]
    names = [n.decode() if isinstance(n, bytes) else n for n in f["mesh/node_names"][:]]
    comps = [c.decode() if isinstance(c, bytes) else c for c in f["dofs/component"][:]]
    nodes = f["dofs/node"][:]
    dofs = g["dofs"][:] if "dofs" in g else np.arange(len(comps))
    j = next(j for j, d in enumerate(dofs) if names[nodes[d]] == node and comps[d] == comp)
    return g["time"][:], g[field][:, j]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from fem.runner import run_study
    import h5py

    folder = tmp_path_factory.mktemp("absolute")
    study = folder / "s.toml"
    study.write_text(MODEL + """
[[analysis]]
name = "newmark"
kind = "transient"
scheme = "newmark"
end = 0.5
step = 1e-3
[[analysis]]
name = "modes"
kind = "modes"
count = 3
[[analysis]]
name = "modal"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "newmark"
end = 0.5
step = 1e-3
[[analysis]]
name = "modal_p"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "newmark"
nodes = ["P"]
end = 0.5
step = 1e-3
[[analysis]]
name = "exact"
kind = "transient"
scheme = "exact"
end = 1.0
step = 1e-2
[[check]]
analysis = "exact"
quantity = "absolute_acceleration"
node = "G"
component = "DY"
time = 0.5
reference = %r
tolerance = 1e-9
""" % float(VALUE * DIRECTION[1] * np.sin(W * 0.5)))
    out = folder / "s.h5"
    run_study(study, out)
    f = h5py.File(out, "r")
    f.path = out
    yield f
    f.close()


@pytest.mark.parametrize("analysis", ["newmark", "modal", "modal_p", "exact"])
@pytest.mark.parametrize("comp", ["DX", "DY"])
def test_absolute_acceleration_is_the_equilibrium_of_the_mass(results, analysis, comp):
    """m (a_rel + a_g) = -(c v_rel + k u_rel) at every archived instant: the support G is
    fixed relative to the ground, so the spring and damper see P's relative motion."""
    t, u = _column(results, analysis, "displacement", "P", comp)
    _, v = _column(results, analysis, "velocity", "P", comp)
    _, a = _column(results, analysis, "acceleration", "P", comp)
    _, absolute = _column(results, analysis, "absolute_acceleration", "P", comp)
    ground = VALUE * DIRECTION[AXIS[comp]] * np.sin(W * t)
    scale = np.max(np.abs(absolute))
    assert scale > 1.0
    assert np.max(np.abs(absolute - (-(C * v + K * u) / M))) < 1e-9 * scale
    assert np.max(np.abs(absolute - (a + ground))) < 1e-12 * scale
    # the relative acceleration is not the absolute one: the test can tell them apart
    assert np.max(np.abs(a - absolute)) > 0.5 * VALUE * DIRECTION[AXIS[comp]]


def test_absolute_acceleration_of_the_support_and_of_a_rotation(results):
    """The imposed support moves with the ground; a rotation gets no ground acceleration."""
    t, g = _column(results, "newmark", "absolute_acceleration", "G", "DX")
    assert np.allclose(g, VALUE * DIRECTION[0] * np.sin(W * t), rtol=0, atol=1e-14)
    _, rz = _column(results, "newmark", "absolute_acceleration", "P", "DRZ")
    _, arz = _column(results, "newmark", "acceleration", "P", "DRZ")
    assert np.array_equal(rz, arz)
    units = list(results["analyses/newmark/absolute_acceleration"].attrs["units"])
    assert units == ["m/s^2", "m/s^2", "rad/s^2"] * 2


def _closed_form(t, A, m, k, c):
    """m x'' + c x' + k x = -m A sin(W t) from rest: x, and the absolute acceleration
    x'' + A sin(W t), each from its own closed form (particular + free response)."""
    w = np.sqrt(k / m)
    xi = c / (2 * np.sqrt(k * m))
    wd = w * np.sqrt(1 - xi ** 2)
    # particular S sin + D cos: (k - m W^2) S - c W D = -m A, c W S + (k - m W^2) D = 0
    S, D = np.linalg.solve([[k - m * W ** 2, -c * W], [c * W, k - m * W ** 2]], [-m * A, 0.0])
    al = -xi * w
    E = -D                                   # x(0) = 0
    F = (-al * E - W * S) / wd               # x'(0) = 0
    env = np.exp(al * t)

    def free(e, f):                          # e^(al t) (e cos + f sin)(wd t)
        return env * (e * np.cos(wd * t) + f * np.sin(wd * t))

    def derive(e, f):
        return al * e + wd * f, al * f - wd * e

    x = S * np.sin(W * t) + D * np.cos(W * t) + free(E, F)
    a_rel = -W ** 2 * (S * np.sin(W * t) + D * np.cos(W * t)) + free(*derive(*derive(E, F)))
    return x, a_rel + A * np.sin(W * t)


def test_absolute_acceleration_against_the_closed_form(results):
    t, absolute = _column(results, "exact", "absolute_acceleration", "P", "DX")
    _, u = _column(results, "exact", "displacement", "P", "DX")
    x, expected = _closed_form(t, VALUE * DIRECTION[0], M, K, C)
    assert np.max(np.abs(u - x)) < 1e-9 * np.max(np.abs(x))
    assert np.max(np.abs(absolute - expected)) < 1e-8 * np.max(np.abs(expected))


def test_the_stored_check_and_fem_post_read_it(results, capsys):
    table = results["checks"][()]
    assert len(table) == 1 and bool(table["passed"][0])
    assert post(["series", str(results.path), "-a", "newmark", "-n", "P", "-c", "DX",
                 "-f", "absolute_acceleration", "--end", "0.002"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "time [s],P DX absolute_acceleration [m/s^2]"
    t, absolute = _column(results, "newmark", "absolute_acceleration", "P", "DX")
    assert float(out[3].split(",")[1]) == pytest.approx(absolute[2], rel=1e-11)


def _study(fields: str = "", loads: str = ""):
    from fem.study import parse_study
    import tomllib
    from pathlib import Path

    text = MODEL + f"""
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
end = 0.01
step = 1e-3
{fields}
{loads}
"""
    return parse_study(tomllib.loads(text), path=Path("s.toml"))


def test_default_fields():
    """Archived by default with a base acceleration and the acceleration; not otherwise."""
    assert "absolute_acceleration" in _study().analyses[0].params["fields"]
    assert "absolute_acceleration" not in _study(loads="loads = []").analyses[0].params["fields"]
    given = _study('fields = ["displacement"]').analyses[0].params["fields"]
    assert given == ["displacement"]
    # asked for without a base acceleration: the acceleration is already absolute
    given = _study('fields = ["absolute_acceleration"]', "loads = []").analyses[0].params
    assert given["fields"] == ["absolute_acceleration"]


def test_without_a_base_acceleration_it_is_the_acceleration(run_toml):
    f = run_toml(MODEL + """
[[load]]
name = "push"
nodes = ["P"]
FX = 10.0
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
loads = ["push"]
end = 0.05
step = 1e-3
fields = ["acceleration", "absolute_acceleration"]
""")
    g = f["analyses/a"]
    assert np.abs(g["acceleration"][()]).max() > 1.0
    assert np.array_equal(g["acceleration"][()], g["absolute_acceleration"][()])


def test_a_check_on_an_absolute_acceleration_not_archived_is_refused():
    from fem.study import parse_study
    import tomllib
    from pathlib import Path

    text = MODEL + """
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
end = 0.01
step = 1e-3
fields = ["displacement", "acceleration"]
[[check]]
analysis = "a"
quantity = "absolute_acceleration"
node = "P"
component = "DX"
time = 0.01
reference = 0.0
"""
    with pytest.raises(StudyError, match="does not archive 'absolute_acceleration'"):
        parse_study(tomllib.loads(text), path=Path("s.toml"))
