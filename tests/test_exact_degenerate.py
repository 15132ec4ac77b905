"""The exact scheme on phases where a naive closed form divides by zero: a sine load at the
exact natural frequency of an undamped oscillator (the resolvent of the forcing exponent is
singular: the response grows linearly in time), and a mass on a damper alone (a zero
eigenvalue); each against its closed form written here."""

import math

import h5py
import numpy as np

from conftest import one_dof_model
from fem.cli import main

MASS, STIFFNESS, AMPLITUDE = 156.0, 2e6, 3000.0
OMEGA = math.sqrt(STIFFNESS / MASS)


def _run(tmp_path, text):
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    assert main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "r.h5"),
                 "--quiet"]) == 0
    with h5py.File(tmp_path / "r.h5", "r") as f:
        g = f["analyses/a"]
        return g["time"][:], g["displacement"][:, 0], g["velocity"][:, 0]


def _model(stiffness, damping, expression):
    return one_dof_model(MASS, stiffness, damping) + f"""[functions.f]
expression = "{expression}"
[[load]]
name = "f"
nodes = ["P"]
FX = 1.0
function = "f"
[[analysis]]
name = "a"
kind = "transient"
scheme = "exact"
end = 2.0
step = 1e-3
"""


def test_a_sine_load_at_the_natural_frequency_grows_linearly(tmp_path):
    t, x, v = _run(tmp_path, _model(STIFFNESS, 0.0, f"{AMPLITUDE}*sin({OMEGA!r}*t)"))
    # m x'' + k x = F sin(w t), w^2 = k / m, from rest
    f = AMPLITUDE / MASS
    expected = f / (2 * OMEGA ** 2) * (np.sin(OMEGA * t) - OMEGA * t * np.cos(OMEGA * t))
    speed = f / 2 * t * np.sin(OMEGA * t)
    assert np.all(np.isfinite(x))
    assert np.max(np.abs(x - expected)) <= 1e-9 * np.max(np.abs(expected))
    assert np.max(np.abs(v - speed)) <= 1e-9 * np.max(np.abs(speed))


def test_a_mass_on_a_damper_alone_under_a_constant_load(tmp_path):
    c, force = 40.0, 10.0
    t, x, v = _run(tmp_path, _model(0.0, c, f"{force}"))
    # m x'' + c x' = F from rest: x' = F/c (1 - exp(-c t / m))
    tau = MASS / c
    speed = force / c * (1.0 - np.exp(-t / tau))
    expected = force / c * (t - tau * (1.0 - np.exp(-t / tau)))
    assert np.max(np.abs(v - speed)) <= 1e-10 * np.max(np.abs(speed))
    assert np.max(np.abs(x - expected)) <= 1e-10 * np.max(np.abs(expected))
