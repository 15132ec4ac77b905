"""code_aster's conventions as options: Newmark and HHT started with a zero acceleration, HHT's
modified equilibrium, and the velocity central differences archive; each against a loop written
here, or against the energy measure of seed 001."""

import textwrap

import numpy as np
import pytest

import postpro
from fem.runner import run_study

# a chain of two masses on springs and dampers, loaded from t = 0 (so that a0 != 0)
CHAIN = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
C = [2.0, 0.0, 0.0]
[mesh.cells]
AB = {{ type = "SEG2", nodes = ["A", "B"] }}
BC = {{ type = "SEG2", nodes = ["B", "C"] }}
[model]
components = ["DX"]
[[discrete]]
nodes = ["B", "C"]
mass = 2.0
[[discrete]]
cells = ["AB"]
stiffness = 4000.0
damping = 3.0
[[discrete]]
cells = ["BC"]
stiffness = 1000.0
damping = 1.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[functions.f]
expression = "5 + 3*sin(40*t)"
[[load]]
nodes = ["C"]
FX = 1.0
function = "f"
[[initial]]
nodes = ["B"]
velocity = {{ DX = 0.3 }}
[[analysis]]
name = "run"
kind = "transient"
scheme = "{scheme}"
end = 0.5
step = 1e-3
{keys}
"""

M = np.diag([2.0, 2.0])
K = np.array([[5000.0, -1000.0], [-1000.0, 1000.0]])
C = np.array([[4.0, -1.0], [-1.0, 1.0]])


def force(t):
    return np.array([0.0, 5.0 + 3.0 * np.sin(40.0 * t)])


def newmark_loop(beta, gamma, a0_zero, steps=500, dt=1e-3):
    """Newmark (beta, gamma) on the chain, in dense numpy: the reference."""
    u = np.zeros(2)
    v = np.array([0.3, 0.0])
    a = np.zeros(2) if a0_zero else np.linalg.solve(M, force(0.0) - C @ v - K @ u)
    S = M + gamma * dt * C + beta * dt * dt * K
    out = [u.copy()]
    for i in range(1, steps + 1):
        ut = u + dt * v + dt * dt * (0.5 - beta) * a
        vt = v + dt * (1 - gamma) * a
        a = np.linalg.solve(S, force(i * dt) - K @ ut - C @ vt)
        u = ut + beta * dt * dt * a
        v = vt + gamma * dt * a
        out.append(u.copy())
    return np.array(out)


def run_chain(tmp_path, scheme, keys):
    path = tmp_path / "chain.toml"
    path.write_text(CHAIN.format(scheme=scheme, keys=keys))
    report = run_study(path, tmp_path / "chain.h5")
    assert report.failed_analysis is None, report.message
    with postpro.open(tmp_path / "chain.h5") as r:
        a = r.analysis("run")
        return np.column_stack([a.series("displacement", "B", "DX")[1], a.series("displacement", "C", "DX")[1]])


def close(x, y):
    return np.max(np.abs(x - y)) / np.max(np.abs(y))


def test_newmark_started_with_a_zero_acceleration(tmp_path):
    reference = newmark_loop(0.25, 0.5, a0_zero=True)
    computed = run_chain(tmp_path, "newmark", 'initial_acceleration = "zero"')
    assert close(computed, reference) < 1e-12
    # the default starts from equilibrium, which differs
    equilibrium = run_chain(tmp_path, "newmark", "")
    assert close(equilibrium, newmark_loop(0.25, 0.5, a0_zero=False)) < 1e-12
    assert close(equilibrium, reference) > 1e-6


@pytest.mark.parametrize("zero", [False, True])
def test_hht_modified_equilibrium_is_newmark_with_the_hht_coefficients(tmp_path, zero):
    alpha = -0.2
    beta, gamma = (1 - alpha) ** 2 / 4, 0.5 - alpha
    keys = f'alpha = {alpha}\nequilibrium = "modified"'
    if zero:
        keys += '\ninitial_acceleration = "zero"'
    reference = newmark_loop(beta, gamma, a0_zero=zero)
    assert close(run_chain(tmp_path, "hht", keys), reference) < 1e-12
    # true HHT (the alpha-shifted equilibrium) is another scheme
    assert close(run_chain(tmp_path, "hht", f"alpha = {alpha}"), reference) > 1e-6


# ------------------------------------------------------------------ seed 001's energy measure
V2 = """
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = 156.0
stiffness = 2e6
[functions.excitation]
expression = "3000*sin(2*pi*5*t)"
[[load]]
nodes = ["P"]
FX = 1.0
function = "excitation"
[[link]]
name = "stop"
kind = "shock"
nodes = ["P"]
normal = [1.0, 0.0, 0.0]
gap = 1e-3
stiffness = 1e10
[[analysis]]
name = "modes"
kind = "modes"
count = 1
[[analysis]]
name = "cd"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "central_difference"
end = 4.0
step = 4e-6
fields = ["displacement", "velocity"]
links = ["stop"]
{keys}
"""


def seed_energy_error(t, x, u, p, dt):
    """Seed 001's global energy-balance error with delta = 1, on archived series: x the
    displacement, u the archived velocity, p the penetration (0 when open), at every step.
    E_inj,i = sum_{j=1..i} F(t_j) (u_j + u_j+1)/2 dt, E_tot,i = m u_i^2/2 + k x_i^2/2 +
    kn p_i^2/2."""
    m, k, kn = 156.0, 2e6, 1e10
    j = np.arange(1, len(t) - 1)
    f = 3000.0 * np.sin(2 * np.pi * 5 * t[j])
    injected = np.cumsum(f * 0.5 * (u[j] + u[j + 1]) * dt)
    total = 0.5 * m * u[j] ** 2 + 0.5 * k * x[j] ** 2 + 0.5 * kn * np.maximum(p[j], 0.0) ** 2
    return np.sqrt(np.sum((total - injected) ** 2) / np.sum(injected ** 2))


def run_v2(tmp_path, keys):
    path = tmp_path / "v2.toml"
    path.write_text(textwrap.dedent(V2.format(keys=keys)))
    out = tmp_path / "v2.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    with postpro.open(out) as r:
        a = r.analysis("cd")
        return (a.time, a.series("displacement", "P", "DX")[1], a.series("velocity", "P", "DX")[1],
                a.link("stop")["penetration"])


def test_v2_central_differences_with_the_code_aster_velocity(tmp_path):
    dt = 4e-6
    t, x, u, p = run_v2(tmp_path, 'velocity = "half_step"')
    # the velocity of the step that ends at each instant (the initial velocity first)
    assert u[0] == 0.0
    assert np.max(np.abs(u[1:] - np.diff(x) / dt)) < 1e-9 * np.max(np.abs(u))
    error = seed_energy_error(t, x, u, p, dt)
    assert error <= 1e-3
    # without the option, the velocity at the instants: the same displacements, and the
    # measure (built for the half-step velocity) is off by the drift of f v dt/2
    t2, x2, u2, p2 = run_v2(tmp_path, "")
    assert np.array_equal(x2, x) and np.array_equal(t2, t)
    assert np.max(np.abs(u2[1:-1] - (x[2:] - x[:-2]) / (2 * dt))) < 1e-9 * np.max(np.abs(u2))
    assert seed_energy_error(t2, x2, u2, p2, dt) > 3e-3
