"""The crossing test of the located explicit schemes skips the sampled search for an open
contact when a bound on its penetration over the step is negative
(``fem.integrators.kernels._stays_open``). The bound must hold: wherever it says "stays
open", the penetration computed here on a fine grid of the step's cubic Hermite of the link
displacement is negative everywhere; and it must not be vacuous: a contact far from its
obstacle that moves slowly is found open."""

import numpy as np
import pytest

from fem.integrators.kernels import _stays_open
from fem.links.columns import CIRCLE, DIR, GAP, KIND, NP, NV, PEN, PLANE

THETA = np.linspace(0.0, 1.0, 2001)


def hermite(d0, dd0, d1, dd1, h):
    """The cubic Hermite of the link displacement on THETA (rows), written out here."""
    t = THETA[:, None]
    h00 = 2 * t**3 - 3 * t**2 + 1
    h10 = t**3 - 2 * t**2 + t
    h01 = -2 * t**3 + 3 * t**2
    h11 = t**3 - t**2
    return h00 * d0 + h10 * h * dd0 + h01 * d1 + h11 * h * dd1


def penetration(kind, axis, gap, d):
    """p of a plane (normal ``axis``) or a circle (axis ``axis``, radius ``gap``) at the
    displacements d (rows)."""
    if kind == PLANE:
        return d @ axis - gap
    radial = d - np.outer(d @ axis, axis)
    return np.linalg.norm(radial, axis=1) - gap


def contact(kind, axis, gap):
    P = np.zeros((1, NP))
    P[0, KIND] = kind
    P[0, DIR:DIR + 3] = axis
    P[0, GAP] = gap
    return P


def values(p):
    cv = np.zeros((1, NV))
    cv[0, PEN] = p
    return cv


@pytest.mark.parametrize("kind", [PLANE, CIRCLE])
def test_the_bound_holds_on_the_dense_output(kind):
    rng = np.random.default_rng(7 + kind)
    said_open = 0
    for _ in range(3000):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        gap = rng.uniform(1e-4, 1e-2)
        scale = rng.uniform(0.1, 1.5) * gap
        d0, d1 = rng.normal(size=3) * scale, rng.normal(size=3) * scale
        h = 10.0 ** rng.uniform(-6, -2)
        dd0, dd1 = rng.normal(size=(2, 3)) * scale / h * rng.uniform(0.01, 3.0)
        P = contact(kind, axis, gap)
        p0 = penetration(kind, axis, gap, d0[None])[0]
        p1 = penetration(kind, axis, gap, d1[None])[0]
        if _stays_open(P, 0, values(p0), values(p1), dd0, dd1, h, 0):
            said_open += 1
            p = penetration(kind, axis, gap, hermite(d0, dd0, d1, dd1, h))
            assert p.max() < 0.0
    # the bound is not vacuous: it lets a good share of these steps skip the search
    assert said_open > 300


def test_a_slow_contact_far_from_its_obstacle_is_found_open():
    axis = np.array([1.0, 0.0, 0.0])
    P = contact(PLANE, axis, 1e-3)
    slow = np.array([1e-3, 0.0, 0.0])               # 1 mm/s over a step of 1e-5 s
    assert _stays_open(P, 0, values(-1e-3), values(-1e-3), slow, slow, 1e-5, 0)
    # a contact that reaches its obstacle within the step is not
    fast = np.array([1e3, 0.0, 0.0])
    assert not _stays_open(P, 0, values(-1e-3), values(-1e-3), fast, -fast, 1e-5, 0)
