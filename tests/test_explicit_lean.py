"""The lean steps of adaptive2 (``fem.integrators.explicit_lean``) give the run of the
general loop: an undamped chain on its modes with plane contacts on two masses (one of them
against two planes), run with the lean steps and with them turned off, has the same events
(kinds, links, times to 1e-12 s), the same archived motion and the same energy terms; and
the lean steps are taken."""

from __future__ import annotations

import numpy as np
import pytest

import fem.integrators.explicit as explicit

CHAIN = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
P1 = [1.0, 0.0, 0.0]
P2 = [2.0, 0.0, 0.0]
P3 = [3.0, 0.0, 0.0]
[mesh.cells]
S1 = { type = "SEG2", nodes = ["A", "P1"] }
S2 = { type = "SEG2", nodes = ["P1", "P2"] }
S3 = { type = "SEG2", nodes = ["P2", "P3"] }
[model]
components = ["DX"]
[[discrete]]
cells = ["S1"]
stiffness = 4.0e4
[[discrete]]
cells = ["S2"]
stiffness = 3.0e4
[[discrete]]
cells = ["S3"]
stiffness = 2.0e4
[[discrete]]
nodes = ["P1"]
mass = 1.0
[[discrete]]
nodes = ["P2"]
mass = 1.5
[[discrete]]
nodes = ["P3"]
mass = 2.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[functions.f]
expression = "60*sin(30*t)"
[[load]]
name = "f"
nodes = ["P3"]
FX = 1.0
function = "f"
[[initial]]
nodes = ["P3"]
displacement = { DX = 0.0 }
velocity = { DX = 0.3 }
[[link]]
name = "stop2"
kind = "shock"
nodes = ["P2"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = 0.002
stiffness = 2e5
[[link]]
name = "box3"
kind = "shock"
nodes = ["P3"]
obstacle = "two_planes"
normal = [1.0, 0.0, 0.0]
gap = 0.004
stiffness = 3e5
[[analysis]]
name = "modes"
kind = "modes"
count = 3
[[analysis]]
name = "a"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "adaptive2"
tolerance = 1e-8
step = 1e-3
end = 0.4
links = ["stop2", "box3"]
"""


def run(run_toml, monkeypatch, lean: bool, name: str):
    used = []
    original = explicit.qualifies

    def spy(*args):
        result = original(*args) and lean
        used.append(result)
        return result

    monkeypatch.setattr(explicit, "qualifies", spy)
    f = run_toml(CHAIN, name=name)
    monkeypatch.setattr(explicit, "qualifies", original)
    return f["analyses/a"], used


def text(values):
    return [v.decode() if isinstance(v, bytes) else v for v in values]


def test_lean_steps_give_the_general_loop(run_toml, monkeypatch):
    lean, used = run(run_toml, monkeypatch, True, "lean")
    general, unused = run(run_toml, monkeypatch, False, "general")
    assert used == [True] and unused == [False]
    ev_lean, ev_general = lean["events"][:], general["events"][:]
    assert len(ev_lean) >= 6
    assert text(ev_lean["kind"]) == text(ev_general["kind"])
    assert text(ev_lean["link"]) == text(ev_general["link"])
    assert np.max(np.abs(ev_lean["time"] - ev_general["time"])) < 1e-12
    assert np.array_equal(lean["time"][:], general["time"][:])
    for field in ("displacement", "velocity", "acceleration"):
        a, b = lean[field][:], general[field][:]
        assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b)), field
    scale = np.max(np.abs(general["energy"]["kinetic"][:]))
    for term in ("external_work", "kinetic", "potential", "link_energy", "dissipated"):
        a, b = lean["energy"][term][:], general["energy"][term][:]
        assert np.max(np.abs(a - b)) <= 1e-9 * scale, term
    assert int(lean.attrs["steps"]) == pytest.approx(int(general.attrs["steps"]), abs=2)
