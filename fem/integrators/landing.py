"""Locating an event inside a step (``fem.integrators.events``, steps 1 and 2): the
candidates' crossings on the step's dense output, and the landing of the scheme on the
earliest one by trial steps of shorter sizes.

The first trial goes to the estimate of the dense output (or, for a scheme whose recomputed
step follows a known cubic, ``scheme.landing_rates``, to that cubic's root); the second to
the root of the parabola through the event function at the start of the step, at the end of
the step in the buffer and at the first trial; the next ones by the secant through the last
two trials inside a bracket that always holds the crossing (regula falsi, Illinois, when the
secant leaves it). A small secant correction (its own error of the order of its square) is
taken a few ulps past the root, on the side where the function has crossed, and accepted
when it has.
"""

from __future__ import annotations

import math

import numpy as np

from fem.integrators.kernels import DONE, SAMPLES, g0_at, holding
from fem.laws.columns import ACT, BLK, G0, G1
from fem.links.law import armed_by_rate, dense_normal

MAX_LANDING = 60
#: a crossing within this fraction of a step from its end is taken at the end
END_FRACTION = 1e-12
#: a secant correction below this many times the landing's few ulps of t lands at once
FINAL_CORRECTION = 256
#: that last trial's margin past the root, in the landing's few ulps of t (the recomputed
#: function's round-off moves its root by a few ulps)
FINAL_MARGIN = 4


def _dense_g(scheme, c, g, cv0, cv1, d0, dd0, d1, dd1, h, theta):
    """Event function g of contact c at fraction theta of the pending step (estimate)."""
    if scheme.dense_values is not None:
        return float(scheme.dense_values(np.array([theta]))[0, c, g])
    if g == 0 and dense_normal(scheme.P, c, cv0[c, ACT] > 0.5):
        o = 3 * int(scheme.P[c, BLK])
        return g0_at(scheme.P, c, cv0[c, ACT] > 0.5, d0, dd0, d1, dd1, h, theta, o)
    a, b = cv0[c, G0 + g], cv1[c, G0 + g]
    return (1.0 - theta) * a + theta * b


def candidates(scheme):
    """(theta estimate, bracket (lo, hi), contact, function) of each crossing in the pending
    step, earliest first."""
    P, buf = scheme.P, scheme.buf
    c0, c1 = scheme.cur, 1 - scheme.cur
    cv0, cv1 = buf.CV[c0], buf.CV[c1]
    d0, dd0, d1, dd1 = buf.DB[c0], buf.DD[c0], buf.DB[c1], buf.DD[c1]
    h = scheme.pending[0] - scheme.t
    samples = scheme.dense_samples() if hasattr(scheme, "dense_samples") else SAMPLES
    grid = np.linspace(0.0, 1.0, samples + 1)
    # the rates that make the dense output the scheme's own recomputed step, when it has them
    rates = scheme.landing_rates() if hasattr(scheme, "landing_rates") else None
    out = []
    if scheme.dense_values is None:
        # the contacts whose functions may cross: the others keep their mode over the step
        # by a bound on the cubic Hermite of their penetration (``kernels.crossed``)
        contacts = np.nonzero(~_holding(P, cv0, cv1, dd0, dd1, h)
                              | ((cv0[:, G0] > 0.0) & (cv1[:, G0] <= 0.0))
                              | ((cv0[:, G1] > 0.0) & (cv1[:, G1] <= 0.0)))[0].tolist()
    else:
        contacts = range(P.shape[0])
    for c in contacts:
        for g in (0, 1):
            dense = g == 0 and dense_normal(P, c, cv0[c, ACT] > 0.5)
            if not (cv0[c, G0 + g] > 0.0 or dense):
                continue

            def f(theta, c=c, g=g):
                return _dense_g(scheme, c, g, cv0, cv1, d0, dd0, d1, dd1, h, theta)
            points = grid if dense else np.array([0.0, 1.0])
            if dense and armed_by_rate(P, cv0, c):
                # at zero at the start, leaving it: look for the function's way out just
                # after the start (a flight much shorter than the step)
                early = np.geomspace(1e-9, 0.5 / samples, 12)
                points = np.concatenate([[0.0], early, grid[1:]])
            inner = [f(th) for th in points[1:-1]] if dense else []
            values = [cv0[c, G0 + g]] + inner + [cv1[c, G0 + g]]
            if dense and armed_by_rate(P, cv0, c):
                values[0] = 0.0
            first = next((k for k in range(len(values)) if values[k] > 0.0), None)
            if first is None:
                continue
            hit = next((k for k in range(first + 1, len(values)) if values[k] <= 0.0), None)
            if hit is None:
                continue
            lo, hi = points[hit - 1], points[hit]
            from scipy.optimize import brentq  # scipy.optimize costs 0.3 s to import
            try:
                theta = brentq(f, lo, hi, xtol=1e-15)
            except ValueError:
                theta = hi
            if dense and rates is not None:
                o = 3 * int(P[c, BLK])

                def recomputed(theta, c=c, o=o):
                    return g0_at(P, c, cv0[c, ACT] > 0.5, d0, dd0, d1, rates, h, theta, o)
                try:
                    theta = brentq(recomputed, lo, hi, xtol=1e-15)
                except ValueError:
                    pass                # no crossing of that cubic in the bracket
            out.append((theta, lo, hi, c, g, max(values[hit - 1], 1e-300)))
    out.sort()
    return out


def _holding(P, cv0, cv1, dd0, dd1, h) -> np.ndarray:
    """(nc,) bool: the contacts whose normal function keeps its sign over a step of size h
    by the bound of ``kernels.crossed`` (``fem.links.law.mode_holds``), with a margin: the
    test only spares the sampling of those."""
    out = np.zeros(P.shape[0], np.bool_)
    holding(P, cv0, cv1, dd0, dd1, h * (1.0 + 1e-6), out)
    return out


def land(scheme, c, g, theta, lo, hi, glo):
    """Recompute the pending step to end where function g of contact c crosses zero
    (``fem.integrators.events``, step 2); leaves the trial there. Returns False when the recomputed motion
    does not cross inside the step (a false alarm of the dense output)."""
    t_a = scheme.t
    t_b = scheme.pending[0]
    h = t_b - t_a
    col = G0 + g
    ghi = None
    ulp = 4 * np.spacing(max(abs(t_a), abs(t_b), 1e-300))
    scale = None
    side = 0
    last = None
    prev = None
    final = False
    # two values of the recomputed function known before the first trial: at the start of
    # the step, and at the end of the step in the buffer (the pending one, or a trial)
    known = [(0.0, float(scheme.buf.CV[scheme.cur][c, col]))]
    done = getattr(scheme, "_trial", None)
    if done is not None and done[0] > t_a:
        known.append(((done[0] - t_a) / h, float(scheme.buf.CV[1 - scheme.cur][c, col])))
    theta = min(max(theta, lo), hi)
    for _ in range(MAX_LANDING):
        if theta >= 1.0 - END_FRACTION:
            t = t_b
        else:
            t = t_a + theta * h
            if t <= t_a:
                t = t_a + ulp
        if trial(scheme, t) != DONE:
            scheme.not_settled(t)
        value = float(scheme.buf.CV[1 - scheme.cur][c, col])
        if scale is None:
            scale = max(abs(glo), abs(value), 1e-300)
        last = (theta, value)
        if value <= 0.0:
            hi, ghi = theta, value
            if final or abs(value) <= 1e-13 * scale or (hi - lo) * h <= ulp:
                return True
            if side == -1:
                glo *= 0.5
            side = -1
        else:
            if theta >= 1.0 - END_FRACTION:
                return False            # the motion does not cross inside the step
            lo, glo = theta, value
            if ghi is None:
                # no trial has crossed yet: the parabola's root past this one, else the end
                # of the bracket
                root = (parabola_root(known + [(theta, value)], lo, hi)
                        if prev is None and len(known) == 2 else None)
                prev = (theta, value)
                theta = root if root is not None else hi
                continue
            if side == 1:
                ghi *= 0.5
            side = 1
        if ghi is None:
            prev = (theta, value)
            theta = hi
            continue
        new = lo + (hi - lo) * glo / (glo - ghi) if glo != ghi else 0.5 * (lo + hi)
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        secant = None
        if prev is None and len(known) == 2:
            # after the first trial: the root of the parabola through it and the two values
            # known before (the function of the recomputed step is smooth in its size; the
            # first trial is near the root, so the parabola's error there is small)
            root = parabola_root(known + [(theta, value)], lo, hi)
            if root is not None:
                new = root
        elif prev is not None and prev[1] != value:
            # the secant through the last two trials, near the crossing both, when it stays
            # inside the bracket (regula falsi from a far end of the bracket converges slowly
            # where g is curved)
            secant = theta - value * (theta - prev[0]) / (value - prev[1])
            if lo < secant < hi:
                new = secant
            else:
                secant = None
        if value <= 0.0 and abs(new - theta) * h <= ulp:
            return True                 # this crossed trial is within a few ulps of the root
        prev = (theta, value)
        final = False
        if secant is not None and abs(secant - theta) * h <= FINAL_CORRECTION * ulp:
            # the secant converges superlinearly: a correction this small leaves an error
            # of the order of its square, far below an ulp; the last trial lands a few ulps
            # past the root, on the side where the function has crossed
            final = True
            new = min(new + FINAL_MARGIN * ulp / h, hi)
            if value <= 0.0 and new >= theta:
                return True             # this crossed trial is the one to take
        theta = new
        if (hi - lo) * h <= ulp:
            break
    if last is None or last[1] > 0.0:
        trial(scheme, t_a + hi * h if hi < 1.0 - END_FRACTION else t_b)
    return True


def parabola_root(points, lo, hi):
    """The root inside (lo, hi) of the parabola through three (theta, g) points (None when
    it has none there, or the points are not distinct)."""
    (x0, y0), (x1, y1), (x2, y2) = points
    if x0 == x1 or x1 == x2 or x0 == x2:
        return None
    # Newton's form about the last point: g = y2 + b (x - x2) + a (x - x2)^2
    d01 = (y1 - y0) / (x1 - x0)
    d12 = (y2 - y1) / (x2 - x1)
    a = (d12 - d01) / (x2 - x0)
    b = d12 + a * (x2 - x1)
    disc = b * b - 4.0 * a * y2
    if disc < 0.0 or b == 0.0:
        return None
    # the root nearest the last point, in the form without cancellation
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    root = x2 + y2 / q if q != 0.0 else None
    if root is None or not lo < root < hi:
        return None
    return root


def trial(scheme, t):
    return scheme.trial(t)
