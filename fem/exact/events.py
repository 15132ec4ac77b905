"""Event location on the exact solution of one step: the first instant where one of the event
functions  g_e(s) = rows_e . z(s) + forcing_rows_e . w(s) + offsets_e  crosses zero in its
direction (w the forcing values, whose polynomial on the step the propagator carries).

The functions are sampled at Chebyshev-Lobatto points of the step (their propagators are
cached), with their rates; a sign change brackets a root, and a sign change of the rate between
samples of equal sign leads to the extremum, which brackets a root when it crosses (a grazing
pair of roots). Roots are polished by Newton's method on the exact solution, kept inside the
bracket by bisection, to round-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from fem.exact.propagator import Propagator

SAMPLES = 16
_EPS = float(np.finfo(float).eps)


@dataclass
class Event:
    index: int       # which event function
    s: float         # time after the start of the step (s)
    state: np.ndarray


def _points(h: float, count: int = SAMPLES) -> np.ndarray:
    k = np.arange(count + 1)
    return 0.5 * h * (1 - np.cos(np.pi * k / count))


class _Functions:
    """Values and rates of the event functions along the step."""

    def __init__(self, prop: Propagator, z0, coefficients, rows, offsets, forcing_rows):
        self.prop, self.z0 = prop, z0
        self.c = np.asarray(coefficients, float).reshape(prop.degree + 1, -1)
        self.rows, self.offsets = rows, offsets
        self.frows = forcing_rows
        p = prop.degree
        self._fact = np.array([math.factorial(j) for j in range(p + 1)], float)

    def _w(self, s):
        """Forcing values and rates at s."""
        p = self.prop.degree
        j = np.arange(p + 1)
        powers = s ** j / self._fact
        d_powers = np.zeros(p + 1)
        d_powers[1:] = s ** j[:-1] / self._fact[:-1]
        return powers @ self.c, d_powers @ self.c

    def at(self, s, e=None):
        """(g, dg) of every function (or of function e) at s, and the state."""
        z = self.prop.state(self.z0, self.c, s)
        rate = self.prop.rate(z, self.c, s)
        rows = self.rows if e is None else self.rows[e]
        g = rows @ z + (self.offsets if e is None else self.offsets[e])
        dg = rows @ rate
        if self.frows is not None:
            w, dw = self._w(s)
            frows = self.frows if e is None else self.frows[e]
            g = g + frows @ w
            dg = dg + frows @ dw
        return g, dg, z


def first_event(prop: Propagator, z0, coefficients, h: float, rows: np.ndarray,
                offsets: np.ndarray, directions: np.ndarray, skip_start: bool = True,
                forcing_rows: np.ndarray | None = None):
    """The earliest event in (0, h], or None.

    rows : (ne, n); offsets : (ne,); directions : (ne,) +1 (upward crossing), -1 (downward),
    0 (either); forcing_rows : (ne, nb) or None, on the forcing values of the propagator.
    With ``skip_start`` a function that is zero at s = 0 (the event just handled) counts by
    the sign of its rate there.
    """
    rows = np.atleast_2d(rows)
    offsets = np.asarray(offsets, float)
    directions = np.asarray(directions)
    fn = _Functions(prop, z0, coefficients, rows, offsets, forcing_rows)
    s = _points(h)
    if skip_start:
        # a function at zero with zero rate at the start shows its way out just after
        s = np.insert(s, 1, 1e-4 * s[1])
    values = [fn.at(si) for si in s]
    g = np.array([v[0] for v in values])           # (k, ne)
    dg = np.array([v[1] for v in values])
    if skip_start:
        scale = np.maximum(np.abs(g).max(axis=0), 1e-300)
        tiny = np.abs(g[0]) <= 1e-12 * scale
        g[0] = np.where(tiny, dg[0] * (s[1] - s[0]) * 1e-6, g[0])
    # the earliest root (not the earliest bracket: a bracket that starts at an extremum
    # may hold a later root than one that starts at the sample before it)
    best = None
    for e in range(rows.shape[0]):
        bracket = _bracket(fn, e, s, g[:, e], dg[:, e], directions[e])
        if bracket is None or (best is not None and bracket[0] >= best[1]):
            continue
        root = _polish(fn, e, *bracket)
        if best is None or root < best[1]:
            best = (e, root)
    if best is None:
        return None
    e, root = best
    return Event(e, root, prop.state(z0, fn.c, root))


@numba.njit(cache=True, nogil=True)
def crosses(ga, gb, direction):
    """Whether g goes from ga to gb across zero in ``direction`` (+1 up, -1 down, 0 any)."""
    if direction > 0:
        return ga < 0 <= gb
    if direction < 0:
        return ga > 0 >= gb
    return (ga < 0 <= gb) or (ga > 0 >= gb)


def _bracket(fn, e, s, g, dg, direction):
    for k in range(len(s) - 1):
        ga, gb = g[k], g[k + 1]
        if crosses(ga, gb, direction):
            return s[k], s[k + 1], ga
        if dg[k] * dg[k + 1] < 0:
            # an extremum inside: the function may dip across zero and back (grazing)
            t_ext = _rate_root(fn, e, s[k], s[k + 1], dg[k])
            g_ext = fn.at(t_ext, e)[0]
            if crosses(ga, g_ext, direction):
                return s[k], t_ext, ga
            # from the extremum on (a function that starts at its event, at zero, rises
            # and comes back across inside the interval)
            if crosses(g_ext, gb, direction):
                return t_ext, s[k + 1], g_ext
    return None


def _rate_root(fn, e, a, b, ra):
    """Where the rate of g_e vanishes in [a, b] (bisection on its sign)."""
    for _ in range(60):
        m = 0.5 * (a + b)
        rm = fn.at(m, e)[1]
        if (rm < 0) == (ra < 0):
            a, ra = m, rm
        else:
            b = m
        if b - a <= 4 * _EPS * max(1e-300, abs(b)):
            break
    return 0.5 * (a + b)


def _polish(fn, e, a, b, ga):
    """Root of g_e in [a, b], where g changes sign from ``ga`` (its sampled value at a):
    Newton's method kept inside the bracket by bisection."""
    gb = fn.at(b, e)[0]
    if gb == 0:
        return b
    x = a - ga * (b - a) / (gb - ga) if gb != ga else 0.5 * (a + b)
    if not (a < x < b):
        x = 0.5 * (a + b)
    for _ in range(100):
        gx, dgx, _ = fn.at(x, e)
        if gx == 0:
            return x
        if (gx < 0) == (ga < 0):
            a, ga = x, gx
        else:
            b = x
        nxt = x - gx / dgx if dgx != 0 else 0.5 * (a + b)
        if not (a < nxt < b):
            nxt = 0.5 * (a + b)
        if abs(nxt - x) <= 2 * _EPS * abs(x) or b - a <= 2 * _EPS * abs(b):
            return nxt
        x = nxt
    return x
