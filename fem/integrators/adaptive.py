"""What the adaptive schemes share: their grid of knots, the load between knots, dense output,
the error norm and the step control.

An adaptive scheme (``fem.integrators.explicit``) chooses its own steps inside each chunk of
the driver's grid, whose instants ("knots") carry the load values:

* the load between knots is the cubic through the four nearest knots of the chunk (exact for
  piecewise-linear tables: every breakpoint of the load functions is a chunk boundary, see
  :func:`adaptive_grid`);
* steps end exactly on the end of each chunk (so on every breakpoint);
* the state at an archived knot comes from dense output: the quintic Hermite interpolant of
  the displacement through (x, x', x'') at both ends of the step that covers it, and its
  derivative for the velocity.

Error control of the embedded schemes (rk32, rk54, devogelaere): component i of the error
estimate of the displacement (resp. velocity) is measured against
tol * max(|y_i(t)|, |y_i(t + h)|, Y), where Y is the scale of the solution: the largest
max-norm the displacement (resp. velocity) has reached so far, or if larger the static
response to the loads met so far. Relative accuracy on the components that carry the
response, an absolute floor scaled by the solution for the others (a response that starts
from rest under a load that starts from zero has no relative accuracy to offer in its first
steps). A step is accepted when the largest ratio is at most 1.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from fem.timegrid import TimeGrid, build_grid

# slots of the control array shared by the Python wrapper and the compiled loops
# (RATE_FREE: 1 when the acceleration does not depend on the velocity)
(TAU, H, ACCEPTED, REJECTED, SX, SV, HMIN, HMAX, TOL, HSTAB, LAST_REJECTED, HISTORY,
 ERR_PREV, ADAPTIVE, EXPONENT, METHOD, FSAL, H0, RATE_FREE) = range(19)
CONTROL = 19
#: most knots (load samples) of the grid of an adaptive scheme
MAX_KNOTS = 1_000_000


# ------------------------------------------------------------------------------------------
# grid of an adaptive scheme
def adaptive_grid(start: float, end: float, *, step=None, steps=None, archive=None,
                  breakpoints=(), knot_step=None, where="analysis") -> tuple[TimeGrid, int]:
    """The driver's grid for an adaptive scheme, and its ``every``.

    With ``step`` (or ``steps``) the archived instants are those of the fixed-step grid of
    that step (dense output fills them). Without, the scheme archives every N-th accepted
    step (``archive = {every = N}``) or only the instants of ``archive.times``. The knots,
    where the loads are sampled, are the output instants subdivided so that no interval
    exceeds min(``knot_step``, (end - start) / 10000) (s), with at most ``MAX_KNOTS`` of
    them; the breakpoints (s) of the load functions inside the span are added as knots and
    become call boundaries.
    """
    archive = archive or {"every": 1}
    span = end - start
    h = min(knot_step, span / 10000.0) if knot_step else span / 10000.0
    h = max(h, span / MAX_KNOTS)
    every = 0
    if step is not None or steps:
        grid = build_grid(start, end, step=step, steps=steps, archive=archive, where=where)
    elif "times" in archive:
        grid = build_grid(start, end, step=h, archive=archive, where=where)
    else:
        grid = build_grid(start, end, step=h, archive={"every": 1}, where=where)
        grid.archive[:] = False
        grid.archive[0] = grid.archive[-1] = True
        every = int(archive.get("every", 1))
    times0, mask0 = _subdivide(grid.times, grid.archive, h)
    bps = np.unique(np.asarray([b for b in breakpoints if start < b < end], float))
    new, cut_values = [], []
    for b in bps:
        i = int(np.clip(np.searchsorted(times0, b), 1, len(times0) - 1))
        near = i if abs(times0[i] - b) <= abs(times0[i - 1] - b) else i - 1
        # a breakpoint within round-off of a knot is that knot: 1e-9 of a step, or a few
        # ulps of t far from t = 0, where a decimal instant and the knot differ by that much
        if abs(times0[near] - b) <= 1e-9 * (times0[i] - times0[i - 1]) + 8.0 * np.spacing(abs(b)):
            cut_values.append(times0[near])
        else:
            new.append(b)
            cut_values.append(b)
    times = np.union1d(times0, np.asarray(new, float))
    mask = np.isin(times, times0[mask0])
    cuts = set(np.searchsorted(times, np.asarray(cut_values, float)).tolist())
    return TimeGrid(times, mask, _segments(times, cuts)), every


def _subdivide(times: np.ndarray, mask: np.ndarray, h: float):
    """Split every interval of ``times`` into equal parts no longer than h (s); the new
    instants are not archived."""
    d = np.diff(times)
    if len(d) == 0:
        return times, mask
    # an interval a few ulps of t longer than h is not split (far from t = 0)
    slack = 1e-9 * d + 8.0 * np.spacing(np.abs(times[1:]))
    parts = np.maximum(1, np.ceil((d - slack) / h)).astype(np.int64)
    if parts.sum() > MAX_KNOTS:
        # a coarser sampling rather than an unbounded grid
        parts = np.maximum(1, np.ceil(parts * (MAX_KNOTS / parts.sum()))).astype(np.int64)
    first = np.cumsum(parts) - parts
    owner = np.repeat(np.arange(len(d)), parts)
    fraction = (np.arange(parts.sum()) - first[owner]) / parts[owner]
    out = np.append(times[owner] + fraction * d[owner], times[-1])
    archived = np.zeros(len(out), bool)
    archived[np.append(first, len(out) - 1)] = mask
    return out, archived


def _segments(times: np.ndarray, cuts) -> list:
    """Runs (i0, i1, dt) of a constant step, also split at the knot indices ``cuts``.

    The step changes where two consecutive steps differ by more than 1e-9 of a step and more
    than the round-off of the instants (a few ulps of |t|: far from t = 0 the steps of a
    uniform grid differ by that much). A run's dt is its span over its count of steps.
    """
    dt = np.diff(times)
    if len(dt) == 0:
        return []
    round_off = 8.0 * np.spacing(np.abs(times[1:-1]))
    change = np.abs(np.diff(dt)) > 1e-9 * dt[1:] + round_off
    starts = set((np.where(change)[0] + 1).tolist()) | {0}
    starts |= {c for c in cuts if 0 < c < len(dt)}
    starts = sorted(starts)
    ends = starts[1:] + [len(dt)]
    return [(int(i0), int(i1), float((times[i1] - times[i0]) / (i1 - i0)))
            for i0, i1 in zip(starts, ends)]


# ------------------------------------------------------------------------------------------
# compiled helpers
#: 1 / prod_{r != p} (p - r): the denominators of the Lagrange weights of knots 0 ... deg
#: (row deg, column p), so that a weight costs no division
INV_DEN = np.array([[1.0, 0.0, 0.0, 0.0],
                    [-1.0, 1.0, 0.0, 0.0],
                    [0.5, -1.0, 0.5, 0.0],
                    [-1.0 / 6.0, 0.5, -0.5, 1.0 / 6.0]])

@numba.njit(cache=True, nogil=True, inline="always")
def load_at(tau, dt, k, W, w, slope):
    """w (nb,) at local time tau (s) from the knots W (k + 1, nb) spaced by dt: the cubic
    through the four nearest knots (fewer when the call has fewer); ``slope`` gets dw/dt."""
    nb = W.shape[1]
    if k == 0:
        for c in range(nb):
            w[c] = W[0, c]
            slope[c] = 0.0
        return
    s = tau / dt
    i = int(math.floor(s))
    i = min(max(i, 0), k - 1)
    deg = min(3, k)
    j0 = i - (deg - 1) // 2
    j0 = min(max(j0, 0), k - deg)
    rate = 1.0 / dt
    for p in range(deg + 1):
        # Lagrange weight of knot j0 + p and its derivative at s (the first knot's assigned,
        # not added to zeros: a zeroing loop becomes a call to memset)
        num = 1.0
        dnum = 0.0
        for r in range(deg + 1):
            if r == p:
                continue
            d = s - (j0 + r)
            dnum = dnum * d + num
            num *= d
        lw = num * INV_DEN[deg, p]
        ld = dnum * INV_DEN[deg, p] * rate
        if p == 0:
            for c in range(nb):
                w[c] = lw * W[j0, c]
                slope[c] = ld * W[j0, c]
        else:
            for c in range(nb):
                w[c] += lw * W[j0 + p, c]
                slope[c] += ld * W[j0 + p, c]


@numba.njit(cache=True, nogil=True, inline="always")
def hermite(theta, h, x0, v0, a0, x1, v1, a1, xo, vo):
    """Quintic Hermite through (x, v, a) at both ends of a step h (s), at fraction theta:
    displacement xo and its derivative vo."""
    t2 = theta * theta
    t3 = t2 * theta
    t4 = t3 * theta
    t5 = t4 * theta
    h0 = 1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5
    h1 = 1.0 - h0
    g0 = theta - 6.0 * t3 + 8.0 * t4 - 3.0 * t5
    g1 = -4.0 * t3 + 7.0 * t4 - 3.0 * t5
    j0 = 0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5
    j1 = 0.5 * t3 - t4 + 0.5 * t5
    dh0 = -30.0 * t2 + 60.0 * t3 - 30.0 * t4
    dg0 = 1.0 - 18.0 * t2 + 32.0 * t3 - 15.0 * t4
    dg1 = -12.0 * t2 + 28.0 * t3 - 15.0 * t4
    dj0 = theta - 4.5 * t2 + 6.0 * t3 - 2.5 * t4
    dj1 = 1.5 * t2 - 4.0 * t3 + 2.5 * t4
    hh = h * h
    for i in range(x0.size):
        xo[i] = (h0 * x0[i] + h1 * x1[i] + h * (g0 * v0[i] + g1 * v1[i])
                 + hh * (j0 * a0[i] + j1 * a1[i]))
        vo[i] = (dh0 * (x0[i] - x1[i]) / h + dg0 * v0[i] + dg1 * v1[i]
                 + h * (dj0 * a0[i] + dj1 * a1[i]))


@numba.njit(cache=True, nogil=True)
def error_ratio(ex, ev, x0, x1, v0, v1, sx, sv, tol):
    """Largest |error| / (tol max(|y0|, |y1|, Y)) over the displacement and velocity
    components (module docstring); inf when an error meets a zero scale, nan if not finite."""
    m = x0.size
    sx1 = sx
    sv1 = sv
    for i in range(m):
        sx1 = max(sx1, abs(x1[i]))
        sv1 = max(sv1, abs(v1[i]))
    err = 0.0
    for i in range(m):
        err = _worse(err, ex[i], tol * max(abs(x0[i]), abs(x1[i]), sx1))
        err = _worse(err, ev[i], tol * max(abs(v0[i]), abs(v1[i]), sv1))
    return err


@numba.njit(cache=True, nogil=True)
def _worse(err, e, d):
    """max(err, |e| / d), with 0 / 0 = 0 and a nan kept."""
    if d > 0.0:
        r = abs(e) / d
    elif e == 0.0:
        r = 0.0
    else:
        r = math.inf
    return r if not r <= err else err


@numba.njit(cache=True, nogil=True, inline="always")
def step_growth(err, exponent, ctl):
    """Factor on the step after an accepted step of error ratio err, for an estimate whose
    ratio scales as h^(1/exponent): proportional-integral control (Gustafsson), where the
    previous ratio damps the oscillations of the step between acceptance and rejection,
    within [0.2, 5] and not growing right after a rejection."""
    grow = 0.9 * max(err, 1e-10) ** (-0.7 * exponent) * ctl[ERR_PREV] ** (0.4 * exponent)
    grow = min(5.0, max(0.2, grow))
    if ctl[LAST_REJECTED] > 0.0:
        grow = min(grow, 1.0)
    ctl[LAST_REJECTED] = 0.0
    ctl[ERR_PREV] = max(err, 1e-4)
    return grow


@numba.njit(cache=True, nogil=True, inline="always")
def plan_step(tau, h, tend, hmax):
    """The step to try from tau: h bounded by hmax, stretched or cut to land on tend.
    Returns (step, lands)."""
    h = min(h, hmax)
    remaining = tend - tau
    # a sliver under 1 % of a step is absorbed rather than taken alone
    if h >= remaining * (1.0 - 1e-12) or remaining - h < 0.01 * h:
        return remaining, True
    return h, False
