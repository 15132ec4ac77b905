"""The crossing test of the located explicit schemes skips the sampled search for a contact
when a bound on its penetration over the step shows that it keeps its mode
(``fem.links.law.mode_holds``): an open contact whose penetration stays negative,
a closed plane contact (function chi = p) whose penetration stays positive. The bound must
hold: wherever it says so, the penetration computed here on a fine grid of the step's cubic
Hermite of the link displacement keeps its sign everywhere; and it must not be vacuous: a
slow contact far from its switching point is found to keep its mode."""

import numpy as np
import pytest

from fem.links.law import mode_holds as _mode_holds
from fem.laws import NP, NV
from fem.laws.columns import CIRCLE, DIR, GAP, KIND, PDOT, PEN, PLANE, RELEASE_GAP
from fem.laws.shock_columns import CN, REL

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


def values(p, rate=0.0):
    """Contact values of penetration p and rate p' (a plane's bound reads p')."""
    cv = np.zeros((1, NV))
    cv[0, PEN] = p
    cv[0, PDOT] = rate
    return cv


def random_steps(rng, kind, count):
    """Random steps of one contact: (P, d0, dd0, d1, dd1, h, p0, p1)."""
    for _ in range(count):
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
        yield P, d0, dd0, d1, dd1, h, p0, p1


def plane_rate(P, dd):
    """p' = n . d' of a plane contact (what the law writes in column PDOT)."""
    return float(P[0, DIR:DIR + 3] @ dd)


@pytest.mark.parametrize("kind", [PLANE, CIRCLE])
def test_the_open_bound_holds_on_the_dense_output(kind):
    rng = np.random.default_rng(7 + kind)
    said = 0
    for P, d0, dd0, d1, dd1, h, p0, p1 in random_steps(rng, kind, 3000):
        cv0, cv1 = values(p0, plane_rate(P, dd0)), values(p1, plane_rate(P, dd1))
        if _mode_holds(P, 0, False, cv0, cv1, dd0, dd1, h, 0):
            said += 1
            p = penetration(kind, P[0, DIR:DIR + 3], P[0, GAP], hermite(d0, dd0, d1, dd1, h))
            assert p.max() < 0.0
    # the bound is not vacuous: it lets a good share of these steps skip the search
    assert said > 300


def test_the_closed_bound_holds_on_the_dense_output():
    rng = np.random.default_rng(11)
    said = 0
    for P, d0, dd0, d1, dd1, h, p0, p1 in random_steps(rng, PLANE, 3000):
        # closed contacts: shift the obstacle so that the contact is penetrated at the ends
        shift = max(-min(p0, p1), 0.0) + rng.uniform(0.0, 2.0) * P[0, GAP]
        P[0, GAP] -= shift
        p0, p1 = p0 + shift, p1 + shift
        cv0, cv1 = values(p0, plane_rate(P, dd0)), values(p1, plane_rate(P, dd1))
        if _mode_holds(P, 0, True, cv0, cv1, dd0, dd1, h, 0):
            said += 1
            p = penetration(PLANE, P[0, DIR:DIR + 3], P[0, GAP],
                            hermite(d0, dd0, d1, dd1, h))
            assert p.min() > 0.0
    assert said > 300


def test_slow_contacts_keep_their_mode():
    axis = np.array([1.0, 0.0, 0.0])
    P = contact(PLANE, axis, 1e-3)
    slow = np.array([1e-3, 0.0, 0.0])               # 1 mm/s over a step of 1e-5 s
    assert _mode_holds(P, 0, False, values(-1e-3, 1e-3), values(-1e-3, 1e-3), slow, slow,
                       1e-5, 0)
    assert _mode_holds(P, 0, True, values(1e-3, 1e-3), values(1e-3, 1e-3), slow, slow, 1e-5, 0)
    # a contact that reaches its switching point within the step does not
    fast = np.array([1e3, 0.0, 0.0])
    assert not _mode_holds(P, 0, False, values(-1e-3, 1e3), values(-1e-3, -1e3), fast, -fast,
                           1e-5, 0)
    assert not _mode_holds(P, 0, True, values(1e-3, 1e3), values(1e-3, -1e3), fast, -fast,
                           1e-5, 0)


def test_closed_contacts_whose_function_is_not_the_penetration_are_searched():
    # a damped contact released by force (chi = min(p, p + c p' / k)) and a circle (p is not
    # linear in d) are always sampled when closed
    slow = np.array([1e-3, 0.0, 0.0])
    damped = contact(PLANE, np.array([1.0, 0.0, 0.0]), 1e-3)
    damped[0, CN] = 10.0
    held = (values(1e-3, 1e-3), values(1e-3, 1e-3), slow, slow, 1e-5, 0)
    assert not _mode_holds(damped, 0, True, *held)
    damped[0, REL] = RELEASE_GAP
    assert _mode_holds(damped, 0, True, *held)
    circle = contact(CIRCLE, np.array([0.0, 0.0, 1.0]), 1e-3)
    assert not _mode_holds(circle, 0, True, values(1e-3), values(1e-3), slow, slow, 1e-5, 0)
