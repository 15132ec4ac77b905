"""Event location on the exact solution of one step: the first instant where one of the event
functions g_e(s) = rows_e . z(s) + offsets_e crosses zero in its direction.

The functions are sampled at Chebyshev-Lobatto points of the step (their propagators are
cached), with their rates; a sign change brackets a root, and a sign change of the rate between
samples of equal sign leads to the extremum, which brackets a root when it crosses (a grazing
pair of roots). Roots are polished by Newton's method on the exact solution, kept inside the
bracket by bisection, to round-off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.exact.propagator import Propagator

SAMPLES = 16


@dataclass
class Event:
    index: int       # which event function
    s: float         # time after the start of the step (s)
    state: np.ndarray


def _points(h: float, count: int = SAMPLES) -> np.ndarray:
    k = np.arange(count + 1)
    return 0.5 * h * (1 - np.cos(np.pi * k / count))


def first_event(prop: Propagator, z0, coefficients, h: float, rows: np.ndarray,
                offsets: np.ndarray, directions: np.ndarray, skip_start: bool = True):
    """The earliest event in (0, h], or None.

    rows : (ne, n); offsets : (ne,); directions : (ne,) +1 (upward crossing), -1 (downward),
    0 (either). With ``skip_start`` a function that is zero at s = 0 (the event just handled)
    does not count there.
    """
    rows = np.atleast_2d(rows)
    offsets = np.asarray(offsets, float)
    directions = np.asarray(directions)
    s = _points(h)
    states = np.array([prop.state(z0, coefficients, si) for si in s])
    rates = np.array([prop.rate(zi, coefficients, si) for zi, si in zip(states, s)])
    g = states @ rows.T + offsets            # (k, ne)
    dg = rates @ rows.T
    best = None
    for e in range(rows.shape[0]):
        bracket = _bracket(s, g[:, e], dg[:, e], directions[e], prop, z0, coefficients,
                           rows[e], offsets[e], skip_start)
        if bracket is not None and (best is None or bracket[0] < best[1][0]):
            best = (e, bracket)
    if best is None:
        return None
    e, (a, b) = best
    root = _polish(prop, z0, coefficients, rows[e], offsets[e], a, b)
    return Event(e, root, prop.state(z0, coefficients, root))


def _crosses(ga, gb, direction) -> bool:
    if direction > 0:
        return ga < 0 <= gb
    if direction < 0:
        return ga > 0 >= gb
    return (ga < 0 <= gb) or (ga > 0 >= gb)


def _bracket(s, g, dg, direction, prop, z0, c, row, offset, skip_start):
    for k in range(len(s) - 1):
        ga, gb = g[k], g[k + 1]
        if k == 0 and skip_start and abs(ga) <= 1e-12 * max(1.0, np.abs(g).max()):
            # leaving the event handled at the start of the step: look past its root
            ga = dg[k] * (s[1] - s[0]) * 1e-3 if dg[k] != 0 else ga
        if _crosses(ga, gb, direction):
            return (s[k], s[k + 1])
        if dg[k] * dg[k + 1] < 0:
            # an extremum inside: the function may dip across zero and back (grazing)
            t_ext = _rate_root(prop, z0, c, row, s[k], s[k + 1])
            g_ext = row @ prop.state(z0, c, t_ext) + offset
            if _crosses(ga, g_ext, direction):
                return (s[k], t_ext)
    return None


def _value(prop, z0, c, row, offset, s):
    z = prop.state(z0, c, s)
    return row @ z + offset, row @ prop.rate(z, c, s)


def _rate_root(prop, z0, c, row, a, b):
    """Where the rate of g vanishes in [a, b] (bisection on its sign)."""
    ra = row @ prop.rate(prop.state(z0, c, a), c, a)
    for _ in range(60):
        m = 0.5 * (a + b)
        rm = row @ prop.rate(prop.state(z0, c, m), c, m)
        if (rm < 0) == (ra < 0):
            a, ra = m, rm
        else:
            b = m
        if b - a <= 4 * np.finfo(float).eps * max(1.0, abs(b)):
            break
    return 0.5 * (a + b)


def _polish(prop, z0, c, row, offset, a, b):
    """Root of g in [a, b] (g(a), g(b) of opposite signs): Newton kept inside the bracket."""
    ga, _ = _value(prop, z0, c, row, offset, a)
    gb, _ = _value(prop, z0, c, row, offset, b)
    if ga == 0:
        return a
    x = a - ga * (b - a) / (gb - ga) if gb != ga else 0.5 * (a + b)
    for _ in range(100):
        gx, dgx = _value(prop, z0, c, row, offset, x)
        if gx == 0:
            return x
        if (gx < 0) == (ga < 0):
            a, ga = x, gx
        else:
            b = x
        step = gx / dgx if dgx != 0 else np.inf
        nxt = x - step
        if not (a < nxt < b):
            nxt = 0.5 * (a + b)
        if abs(nxt - x) <= 2 * np.finfo(float).eps * max(1.0, abs(x)) or b - a <= 0:
            return nxt
        x = nxt
    return x
