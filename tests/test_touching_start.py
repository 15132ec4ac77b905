"""A contact that starts exactly at its obstacle's surface, with the load driving it in: it
closes at once in every scheme and event mode (with located events its event function starts
at zero, where no crossing is ever seen: the block went through the floor), and one that the
load pulls away stays open.

The block: 1 kg on a plane of stiffness k = 1e5 N/m (normal -Z, gap 0), damped at ratio 0.5,
pressed by N = 10 N from rest at p = 0. Closed form of the penetration:
p(t) = N/k (1 - e^(-z w t) (cos(wd t) + z w / wd sin(wd t))), w = sqrt(k), wd = w sqrt(1 - z^2).
"""

import math

import numpy as np
import pytest

import fem
from fem.catalog import SCHEMES

K, N, ZETA = 1e5, 10.0, 0.5
W = math.sqrt(K)
WD = W * math.sqrt(1 - ZETA ** 2)


def penetration(t):
    return N / K * (1 - np.exp(-ZETA * W * t) * (np.cos(WD * t) + ZETA * W / WD * np.sin(WD * t)))


def run(basis, scheme, events, push):
    link = {"name": "floor", "kind": "shock", "nodes": ["P"], "normal": [0.0, 0.0, -1.0],
            "gap": 0.0, "stiffness": K, "damping": 2 * ZETA * W}
    tr = {"name": "run", "kind": "transient", "basis": basis, "scheme": scheme, "end": 0.05,
          "step": 1e-4, "links": ["floor"], "events": events}
    study = {"mesh": {"nodes": {"P": [0.0, 0.0, 0.0]}}, "model": {"components": ["DZ"]},
             "discrete": [{"nodes": ["P"], "mass": 1.0, "stiffness": [0.0, 0.0, 1.0]}],
             "load": [{"name": "press", "nodes": ["P"], "FZ": push}],
             "link": [link], "analysis": []}
    if basis == "modal":
        study["analysis"].append({"name": "modes", "kind": "modes", "count": 1})
        tr["modes"] = "modes"
    if scheme in ("adaptive2", "devogelaere", "rk32", "rk54"):
        tr["max_step"] = 1e-4
    study["analysis"].append(tr)
    return fem.run(fem.Study.from_dict(study)).analysis("run")


CELLS = [(b, s, e) for (b, s), row in sorted(SCHEMES.items())
         if row.features["shock.plane"] is True for e in row.event_modes]


@pytest.mark.parametrize("basis,scheme,events", CELLS)
def test_a_contact_touching_at_the_start_closes_when_pressed(basis, scheme, events):
    analysis = run(basis, scheme, events, -N)
    t, z = analysis.series("displacement", "P", "DZ")
    # the closed form, to the scheme's accuracy at w h = 0.03 (and one step late with
    # events = "step"); the spring of 1 N/m to ground changes it by 1e-5
    tol = 0.05 * N / K
    assert np.abs(-z - penetration(t)).max() <= tol, (float(np.abs(-z - penetration(t)).max()))
    assert analysis.link("floor")["normal_force"][-1] == pytest.approx(N, rel=0.02)


@pytest.mark.parametrize("basis,scheme,events", [c for c in CELLS if c[2] == "locate"])
def test_a_contact_touching_at_the_start_stays_open_when_pulled(basis, scheme, events):
    analysis = run(basis, scheme, events, N)
    assert analysis.link("floor")["normal_force"].max() == 0.0
    t, z = analysis.series("displacement", "P", "DZ")
    # free flight up; first-order euler lags by about a step's velocity over the flight
    assert z[-1] == pytest.approx(0.5 * N * t[-1] ** 2, rel=1e-2 if scheme == "euler" else 1e-3)
