"""Friction on a contact whose tangential motion is imposed (no mass moves with it): a node
pressed on a plane by a held penetration (normal force N = k_n p) and driven along X by
u0 sin(w t). Each time the slide stops at a reversal, Coulomb's law at rest has nothing to
decide (no mass behind the motion) and the contact sticks holding the friction force it had;
the drive then unloads its spring (stiffness k_t) through zero to mu N the other way, and it
slides again. The friction force never exceeds mu N, and a cycle dissipates the area of the
parallelogram 4 mu N (u0 - mu N / k_t) (measured 1e-13, with located events or the
steps' return mapping).

With located events the stop is found where the imposed slip rate passes zero: the slide is
at rest there by the imposed acceleration's measure (not by the structure's alone, which is
none), and the stick holds the force the contact had, not its opposite."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fem

MU, KN, PEN, KT = 0.2, 1.0e4, 1.0e-3, 1.0e5
N = KN * PEN                  # 10 N
U0, W = 2.0e-3, 2.0 * math.pi


@pytest.mark.parametrize("events", ["locate", "step"])
@pytest.mark.parametrize("scheme", ["newmark", "hht"])
def test_a_driven_contact_sticks_with_its_own_force_at_each_reversal(scheme, events):
    link = {"name": "shock", "kind": "shock", "nodes": ["N1"], "normal": [0, 0, 1],
            "gap": -PEN, "stiffness": KN, "friction": MU, "tangential_stiffness": KT}
    study = {
        "mesh": {"nodes": {"N1": [0.0, 0.0, 0.0], "N2": [1.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DY", "DZ"]},
        "discrete": [{"nodes": ["N1", "N2"], "mass": 1.0},
                     {"nodes": ["N2"], "stiffness": [1e3, 1e3, 1e3]}],
        "functions": {"drive": {"expression": f"sin({W!r}*t)"}},
        "constraint": [{"nodes": ["N1"], "DY": 0.0, "DZ": 0.0},
                       {"nodes": ["N1"], "DX": U0, "function": "drive"}],
        "link": [link],
        "analysis": [{"name": "tr", "kind": "transient", "scheme": scheme, "step": 1e-4,
                      "end": 2.0, "events": events, "links": ["shock"],
                      "archive": {"every": 1}}],
    }
    res = fem.run(fem.Study.from_dict(study))
    try:
        a = res.analysis("tr")
        t = a.series("displacement", "N1", "DX")[0]
        link = a.link("shock")
        force = np.asarray(link["tangential_force"])
        assert np.max(force) <= MU * N * (1.0 + 1e-9)
        # after the first quarter period the force reaches mu N at every cycle
        assert np.max(force[t > 1.0]) == pytest.approx(MU * N, rel=1e-9)
        terms = a.energy()
        energy = terms["dissipated"]
        second = energy[-1] - np.interp(1.0, terms["time"], energy)
        assert second == pytest.approx(4.0 * MU * N * (U0 - MU * N / KT), rel=1e-9)
    finally:
        res.close()
