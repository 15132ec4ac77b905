"""The lean steps of adaptive2 (``fem.integrators.explicit_lean``) give the run of the
general loop: an undamped chain on its modes with plane contacts on two masses (one of them
against two planes), run with the lean steps and with them turned off, has the same events
(kinds, links, times to 1e-12 s), the same archived motion and the same energy terms; and
the lean steps are taken."""

from __future__ import annotations

import numpy as np
import pytest

from fem.integrators import loops
from test_modal_shock import CHAIN as DAMPED

#: the chain of test_modal_shock without its dampers (structural and contact), on adaptive2
CHAIN = (DAMPED.replace("damping = 6.0\n", "").replace('damping = 30.0\nrelease = "gap"\n', "")
         + 'scheme = "adaptive2"\ntolerance = 1e-8\nstep = 1e-3\n')


def run(run_toml, monkeypatch, lean: bool, name: str):
    used = []
    original = loops.choose

    def spy(*args, **kwargs):
        choice = original(*args, **kwargs)
        if not lean and choice.loop == "explicit segment":
            choice = loops.Choice("explicit general", "forced by the test")
        used.append(choice.loop == "explicit segment")
        return choice

    monkeypatch.setattr(loops, "choose", spy)
    f = run_toml(CHAIN, name=name)
    monkeypatch.setattr(loops, "choose", original)
    return f["analyses/a"], used


def text(values):
    return [v.decode() if isinstance(v, bytes) else v for v in values]


def test_lean_steps_give_the_general_loop(run_toml, monkeypatch):
    assert "damping" not in CHAIN
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
