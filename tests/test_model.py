"""Model building (elements, constraints, loads, grids) checked against closed forms and
independent integrations written here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from conftest import series

NEWMARK = 'kind = "transient"\nscheme = "newmark"'


def dof_index(f, node, comp):
    names = [n.decode() if isinstance(n, bytes) else n for n in f["mesh/node_names"][:]]
    comps = [c.decode() if isinstance(c, bytes) else c for c in f["dofs/component"][:]]
    for i, (nd, c) in enumerate(zip(f["dofs/node"][:], comps)):
        if names[nd] == node and c == comp:
            return i
    raise KeyError((node, comp))


def test_imposed_support_motion_with_spring_and_damper(run_toml):
    """m u'' + c (u' - s') + k (u - s) = 0 with s(t) = A sin(W t) imposed on the support."""
    m, k, c, A, W = 2.0, 800.0, 3.0, 0.01, 7.0
    f = run_toml(f"""
        [mesh.nodes]
        S = [0.0, 0.0, 0.0]
        P = [1.0, 0.0, 0.0]
        [mesh.cells]
        E = {{ type = "SEG2", nodes = ["S", "P"] }}
        [model]
        components = ["DX"]
        [[discrete]]
        cells = ["E"]
        stiffness = {k}
        damping = {c}
        [[discrete]]
        nodes = ["P"]
        mass = {m}
        [functions.motion]
        expression = "sin({W}*t)"
        [[constraint]]
        nodes = ["S"]
        DX = {A}
        function = "motion"
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 2.0
        step = 2e-4
        """)
    t, u = series(f, "a", "displacement", dof_index(f, "P", "DX"))
    _, s = series(f, "a", "displacement", dof_index(f, "S", "DX"))
    _, sv = series(f, "a", "velocity", dof_index(f, "S", "DX"))
    assert np.allclose(s, A * np.sin(W * t), atol=1e-15)
    assert np.allclose(sv, A * W * np.cos(W * t), atol=1e-13)
    assert f["dofs/imposed"][dof_index(f, "S", "DX")]

    def rhs(tt, y):
        return [y[1], (-c * (y[1] - A * W * np.cos(W * tt)) - k * (y[0] - A * np.sin(W * tt))) / m]

    ref = solve_ivp(rhs, (0, 2.0), [0.0, 0.0], t_eval=t, method="DOP853", rtol=1e-12, atol=1e-15)
    err = np.max(np.abs(u - ref.y[0])) / np.max(np.abs(ref.y[0]))
    assert err < 2e-4, err


def test_linear_relation_with_coefficients(run_toml):
    """2 u1 - u2 = 0 ties two oscillators: one dof with mass m1 + 4 m2, stiffness k1 + 4 k2."""
    m1, m2, k1, k2 = 1.0, 3.0, 100.0, 40.0
    f = run_toml(f"""
        [mesh.nodes]
        P1 = [0.0, 0.0, 0.0]
        P2 = [1.0, 0.0, 0.0]
        [model]
        components = ["DX"]
        [[discrete]]
        nodes = ["P1"]
        mass = {m1}
        stiffness = {k1}
        [[discrete]]
        nodes = ["P2"]
        mass = {m2}
        stiffness = {k2}
        [[constraint]]
        terms = [ {{ node = "P1", component = "DX", coef = 2.0 }},
                  {{ node = "P2", component = "DX", coef = -1.0 }} ]
        value = 0.0
        [[initial]]
        nodes = ["P1"]
        displacement = {{ DX = 0.01 }}
        [[initial]]
        nodes = ["P2"]
        displacement = {{ DX = 0.02 }}
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 1.0
        step = 1e-4
        """)
    t, u1 = series(f, "a", "displacement", 0)
    _, u2 = series(f, "a", "displacement", 1)
    assert np.allclose(2 * u1 - u2, 0.0, atol=1e-15)
    omega = np.sqrt((k1 + 4 * k2) / (m1 + 4 * m2))
    assert np.allclose(u1, 0.01 * np.cos(omega * t), atol=2e-6)


def test_relation_with_a_value_and_an_imposed_dof(run_toml):
    """u2 - u1 = 0.05 with u1 imposed at 0: the relation's value moves the tied mass."""
    f = run_toml("""
        [mesh.nodes]
        P1 = [0.0, 0.0, 0.0]
        P2 = [1.0, 0.0, 0.0]
        P3 = [2.0, 0.0, 0.0]
        [model]
        components = ["DX"]
        [[discrete]]
        nodes = ["P2", "P3"]
        mass = 1.0
        [[discrete]]
        nodes = ["P3"]
        stiffness = 10.0
        [[discrete]]
        nodes = ["P1"]
        mass = 1.0
        [[constraint]]
        nodes = ["P1"]
        DX = 0.0
        [[constraint]]
        terms = [ { node = "P2", component = "DX", coef = 1.0 },
                  { node = "P1", component = "DX", coef = -1.0 } ]
        value = 0.05
        [[analysis]]
        name = "a"
        kind = "transient"
        end = 0.1
        step = 0.01
        """)
    _, u2 = series(f, "a", "displacement", 1)
    assert np.allclose(u2, 0.05, atol=1e-15)


def test_gravity_on_a_vertical_oscillator(run_toml):
    """u(t) = -(m g / k)(1 - cos w t) from rest at the unstretched length."""
    m, k, g = 2.0, 500.0, 9.81
    f = run_toml(f"""
        [mesh.nodes]
        P = [0.0, 0.0, 0.0]
        [model]
        components = ["DZ"]
        [[discrete]]
        nodes = ["P"]
        mass = {m}
        stiffness = {k}
        [[load]]
        kind = "gravity"
        g = {g}
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 1.0
        step = 1e-4
        """)
    t, u = series(f, "a", "displacement", 0)
    exact = -(m * g / k) * (1 - np.cos(np.sqrt(k / m) * t))
    assert np.max(np.abs(u - exact)) < 1e-5 * m * g / k * 2


def test_base_acceleration_relative_motion(run_toml):
    """m u'' + k u = -m a(t) for the displacement relative to the base, a = 2 sin(3 t) m/s^2."""
    m, k = 1.5, 60.0
    f = run_toml(f"""
        [mesh.nodes]
        P = [0.0, 0.0, 0.0]
        [model]
        components = ["DX", "DY"]
        [[discrete]]
        nodes = ["P"]
        mass = {m}
        stiffness = {k}
        [functions.quake]
        expression = "2*sin(3*t)"
        [[load]]
        kind = "base_acceleration"
        direction = [1.0, 0.0, 0.0]
        function = "quake"
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 2.0
        step = 1e-4
        """)
    t, u = series(f, "a", "displacement", 0)
    _, uy = series(f, "a", "displacement", 1)
    w2, W = k / m, 3.0
    # closed form from rest: particular -2 sin(W t)/(w2 - W^2) plus the free part
    w = np.sqrt(w2)
    exact = -2.0 / (w2 - W ** 2) * (np.sin(W * t) - (W / w) * np.sin(w * t))
    assert np.max(np.abs(u - exact)) < 1e-4 * np.max(np.abs(exact))
    assert np.all(uy == 0.0)


def test_local_frame_spring_on_an_inclined_seg2(run_toml):
    """A spring stiff only along its own axis, at 45 degrees in XY: a force along that axis
    gives u = (F/k)(1 - cos w t) along it and nothing across."""
    m, k, F = 1.0, 400.0, 2.0
    c = np.sqrt(0.5)
    f = run_toml(f"""
        [mesh.nodes]
        A = [0.0, 0.0, 0.0]
        B = [1.0, 1.0, 0.0]
        [mesh.cells]
        E = {{ type = "SEG2", nodes = ["A", "B"] }}
        [[discrete]]
        cells = ["E"]
        frame = "local"
        stiffness = [{k}, 0.0, 0.0]
        [[discrete]]
        nodes = ["B"]
        mass = {m}
        [[discrete]]
        nodes = ["B"]
        stiffness = [0.0, 0.0, 1.0]
        [[constraint]]
        nodes = ["A"]
        DX = 0.0
        DY = 0.0
        DZ = 0.0
        [[load]]
        nodes = ["B"]
        FX = {F * c}
        FY = {F * c}
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 0.5
        step = 1e-4
        """)
    t, ux = series(f, "a", "displacement", dof_index(f, "B", "DX"))
    _, uy = series(f, "a", "displacement", dof_index(f, "B", "DY"))
    along = (ux + uy) * c
    exact = F / k * (1 - np.cos(np.sqrt(k / m) * t))
    assert np.max(np.abs(along - exact)) < 1e-5 * F / k
    assert np.max(np.abs(ux - uy)) < 1e-12


def test_full_mass_matrix_principal_direction(run_toml):
    """M = R diag(m1, m2, m3) R^T with isotropic springs: a force along R's first axis makes
    the node oscillate along it at w = sqrt(k / m1)."""
    rng = np.random.default_rng(3)
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    masses = np.array([2.0, 5.0, 7.0])
    M = R @ np.diag(masses) @ R.T
    k, F = 300.0, 1.0
    rows = ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in M)
    force = [float(x) for x in F * R[:, 0]]
    f = run_toml(f"""
        [mesh.nodes]
        P = [0.0, 0.0, 0.0]
        [[discrete]]
        nodes = ["P"]
        mass = [{rows}]
        stiffness = {k}
        [[load]]
        nodes = ["P"]
        FX = {force[0]!r}
        FY = {force[1]!r}
        FZ = {force[2]!r}
        [[analysis]]
        name = "a"
        {NEWMARK}
        end = 0.3
        step = 1e-4
        """)
    t = f["analyses/a/time"][:]
    u = f["analyses/a/displacement"][:]
    exact = F / k * (1 - np.cos(np.sqrt(k / masses[0]) * t))
    assert np.max(np.abs(u @ R[:, 0] - exact)) < 1e-5 * F / k
    assert np.max(np.abs(u @ R[:, 1:])) < 1e-12


def test_archive_times_nonuniform_steps_and_restart(run_toml):
    """Archive instants off the grid are landed on exactly; a run restarted from another
    analysis' final state continues it exactly."""
    base = """
        [mesh.nodes]
        P = [0.0, 0.0, 0.0]
        [model]
        components = ["DX"]
        [[discrete]]
        nodes = ["P"]
        mass = 1.0
        stiffness = 100.0
        [[initial]]
        nodes = ["P"]
        displacement = { DX = 1.0 }
        """
    f = run_toml(base + """
        [[analysis]]
        name = "grid"
        kind = "transient"
        end = 1.0
        steps = [ { until = 0.4, count = 400 }, { until = 1.0, count = 1200 } ]
        archive = { times = [0.123456, 0.4, 0.77] }
        [[analysis]]
        name = "first"
        kind = "transient"
        end = 0.5
        step = 1e-3
        [[analysis]]
        name = "second"
        kind = "transient"
        start = 0.5
        end = 1.0
        step = 1e-3
        initial = { analysis = "first" }
        [[analysis]]
        name = "whole"
        kind = "transient"
        end = 1.0
        step = 1e-3
        """)
    t, u = series(f, "grid", "displacement", 0)
    assert t.tolist() == [0.123456, 0.4, 0.77]
    assert np.allclose(u, np.cos(10 * t), atol=1e-4)   # phase error (w dt)^2 w t / 12
    t2, u2 = series(f, "second", "displacement", 0)
    tw, uw = series(f, "whole", "displacement", 0)
    assert np.allclose(t2, tw[500:], atol=1e-12)
    assert np.allclose(u2, uw[500:], atol=1e-12, rtol=0)
    g = run_toml(base + """
        [[analysis]]
        name = "every"
        kind = "transient"
        end = 1.0
        step = 1e-3
        archive = { every = 300 }
        fields = ["displacement"]
        """, name="every")
    grp = g["analyses/every"]
    assert grp["time"][:].tolist() == pytest.approx([0.0, 0.3, 0.6, 0.9, 1.0], abs=1e-12)
    assert "velocity" not in grp and grp.attrs["steps"] == 1000


def test_assembled_matrices_of_an_eight_mass_chain(tmp_path):
    """M, K, C of the V4 chain against the matrices written by hand."""
    from fem.model import build_mesh, build_model
    from fem.study import load_study

    nodes = "\n".join(f'P{i} = [{float(i)}, 0.0, 0.0]' for i in range(10))
    cells = "\n".join(f'E{i} = {{ type = "SEG2", nodes = ["P{i}", "P{i + 1}"] }}' for i in range(9))
    text = f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[mesh.cell_groups]
ALL = [{", ".join(f'"E{i}"' for i in range(9))}]
INNER = [{", ".join(f'"E{i}"' for i in range(1, 8))}]
[model]
components = ["DX"]
[[discrete]]
cell_groups = ["ALL"]
stiffness = 1e5
[[discrete]]
cells = ["E0"]
damping = 250.0
[[discrete]]
cell_groups = ["INNER"]
damping = 50.0
[[discrete]]
cells = ["E8"]
damping = 25.0
[[discrete]]
nodes = [{", ".join(f'"P{i}"' for i in range(1, 9))}]
mass = 10.0
[[constraint]]
nodes = ["P0", "P9"]
DX = 0.0
"""
    path = tmp_path / "chain8.toml"
    path.write_text(text)
    study = load_study(path)
    model = build_model(study, build_mesh(study))
    free = model.constraints.free
    K = model.stiffness[free][:, free].toarray()
    C = model.damping[free][:, free].toarray()
    M = model.mass[free][:, free].toarray()
    k = 1e5
    K_ref = k * (2 * np.eye(8) - np.eye(8, k=1) - np.eye(8, k=-1))
    c = [250.0] + [50.0] * 7 + [25.0]
    C_ref = np.diag([c[i] + c[i + 1] for i in range(8)]) \
        - np.diag(c[1:8], 1) - np.diag(c[1:8], -1)
    assert np.allclose(K, K_ref, rtol=0, atol=0)
    assert np.allclose(C, C_ref, rtol=0, atol=0)
    assert np.allclose(M, 10 * np.eye(8))
    assert list(free) == list(range(1, 9))
