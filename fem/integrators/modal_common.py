"""What the schemes on a modal basis share: the generalized system, load interpolation between
the driver's instants, dense output, error norms, and the adaptive stepping protocol.

The generalized system (``fem.modal.basis``) is q'' + Cg q' + diag(omega^2) q = Bg w(t),
small and dense; the schemes keep (q, q', q'') in the driver's ``State(u, v, a)``.

Adaptive schemes follow the stepping protocol of ``fem.integrators.base`` unchanged in form:
``advance(dt, W, state, archive)`` integrates from t0 to t0 + k dt, where W (k + 1, nb) holds
the load values at the k + 1 instants t0 + i dt of the driver's grid ("knots"), but the scheme
chooses its own steps inside that interval:

* the load between knots is the cubic through the four nearest knots of the call (exact for
  piecewise-linear tables: the driver's grid for an adaptive scheme has every breakpoint of
  the load functions as a call boundary, see :func:`adaptive_grid`);
* steps end exactly on the end of each call (so on every breakpoint), not on the other knots;
* the state at an archived knot comes from dense output: the quintic Hermite interpolant of
  the displacement through (q, q', q'') at both ends of the step that covers it, its
  derivative for the velocity, and the acceleration from the equation of motion with the
  exact load of that knot;
* with ``every = N > 0`` the scheme also returns the state after every N-th accepted step;
  then ``row_offsets`` (rows,) gives the time of each returned row from the start of the
  call (s), which the driver adds to t0.

Error control of the embedded schemes (rk32, rk54, devogelaere): component i of the error
estimate of the displacement (resp. velocity) is measured against
tol * max(|y_i(t)|, |y_i(t + h)|, Y), where Y is the scale of the solution: the largest
max-norm the displacement (resp. velocity) has reached so far, or if larger the static
response to the loads met so far, max_i |(Bg w)_i| / w_i^2 (resp. / w_i) with
w_i = max(omega_i, 2 pi / (end - start)). Relative accuracy on the components that carry the
response, an absolute floor scaled by the solution for the others (a response that starts
from rest under a load that starts from zero has no relative accuracy to offer in its first
steps). A step is accepted when the largest ratio is at most 1.
"""

from __future__ import annotations

import abc
import math

import numba
import numpy as np

from fem.errors import SolverError
from fem.integrators.base import LegacyScheme as Scheme, State
from fem.timegrid import TimeGrid, build_grid

# numba caches a compiled loop with the stamp of its own file only, and the helpers and
# constants below are compiled into the loops of the family modules: after editing this
# module, delete the cached loops (fem/integrators/__pycache__/*.nbi and *.nbc).

# slots of the control array shared by the Python wrapper and the compiled loops
(TAU, H, ACCEPTED, REJECTED, SX, SV, HMIN, HMAX, TOL, HSTAB, LAST_REJECTED, HISTORY,
 ERR_PREV) = range(13)
CONTROL_SIZE = 13
# status codes of the compiled loops
DONE, FULL, NONFINITE, MINSTEP = range(4)
#: most knots (load samples) of the grid of an adaptive scheme
MAX_KNOTS = 1_000_000


class ModalScheme(Scheme):
    """Base of the schemes on a modal basis (``fem.modal.basis.ModalBasis``)."""

    adaptive = False

    def __init__(self, basis, name: str):
        super().__init__(basis)
        self.basis = basis
        self.name = name
        self.kk = np.ascontiguousarray(basis.stiffness, np.float64)
        self.C = np.ascontiguousarray(basis.damping, np.float64)
        self.diag = bool(basis.diagonal)
        self.Bt = np.ascontiguousarray(np.asarray(basis.B, np.float64).T)   # (nb, m)
        self.accepted = 0
        self.rejected = 0
        self.row_offsets = None

    def initial_acceleration(self, t0, u, v, w0) -> np.ndarray:
        return self.basis.B @ w0 - self.C @ v - self.kk * u

    def highest_frequency(self) -> float:
        return float(np.max(self.basis.omega, initial=0.0))


class AdaptiveModalScheme(ModalScheme):
    """Base of the schemes that choose their own steps (see the module docstring).

    Parameters
    ----------
    basis : fem.modal.basis.ModalBasis
    name : str
        Scheme name, for messages.
    tolerance : float
        Accuracy target, dimensionless (its meaning depends on the scheme).
    max_step, min_step : float or None
        Bounds of the step (s). ``None``: (end - start) / 100 and 1e-12 (end - start).
    span : float
        Duration of the analysis (s), for the default bounds.
    start : float
        Start of the analysis (s), for messages.
    every : int
        0: return the archived knots only; N > 0: also every N-th accepted step.
    """

    adaptive = True
    #: order q of the error estimate (the step scales as tol^(1/(q+1)))
    estimate_order = 1

    def __init__(self, basis, name, *, tolerance, max_step=None, min_step=None, span=1.0,
                 start=0.0, every=0):
        super().__init__(basis, name)
        if not tolerance > 0:
            raise ValueError(f"{name}: the tolerance must be > 0")
        self.tolerance = float(tolerance)
        self.max_step = float(max_step) if max_step else span / 100.0
        self.min_step = float(min_step) if min_step else 1e-12 * span
        self.every = int(every)
        self.time = float(start)                # time of the start of the next call (s)
        # the frequencies that turn a generalized force into a static response (floored)
        self._w_static = np.maximum(np.asarray(basis.omega, float), 2 * math.pi / span)
        ctl = np.zeros(CONTROL_SIZE)
        ctl[H] = self.first_step()
        ctl[HMIN], ctl[HMAX], ctl[TOL] = self.min_step, self.max_step, self.tolerance
        ctl[HSTAB] = math.inf
        ctl[ERR_PREV] = 1.0
        self.ctl = ctl

    def first_step(self) -> float:
        """Trial first step (s): a hundredth of the shortest period, at most max_step."""
        w = self.highest_frequency()
        h = 0.01 * 2 * math.pi / w if w > 0 else self.max_step
        return max(min(h, self.max_step), self.min_step)

    def start_call(self, W, state: State) -> np.ndarray:
        """Update the error scales of displacement and velocity (the static response to the
        largest generalized force of this call, and the state) and reset the call's clock;
        returns the control vector."""
        ctl = self.ctl
        m = state.u.size
        force_peak = np.max(np.abs(W @ self.Bt), axis=0) if W.size else np.zeros(m)
        ctl[SX] = max(ctl[SX], float(np.max(force_peak / self._w_static ** 2, initial=0.0)))
        ctl[SV] = max(ctl[SV], float(np.max(force_peak / self._w_static, initial=0.0)))
        ctl[SX] = max(ctl[SX], float(np.max(np.abs(state.u), initial=0.0)))
        ctl[SV] = max(ctl[SV], float(np.max(np.abs(state.v), initial=0.0)))
        ctl[TAU] = 0.0
        ctl[HISTORY] = 0.0
        return ctl

    def advance(self, dt, W, state: State, archive):
        W = np.ascontiguousarray(W, np.float64)
        k = W.shape[0] - 1
        archive = np.ascontiguousarray(archive, np.bool_)
        m = state.u.size
        cap = int(np.count_nonzero(archive[1:])) + (256 if self.every else 0) + 1
        ctl = self.start_call(W, state)
        parts = []
        ok = True
        widths = self.extra_widths()
        while True:
            out_t = np.empty(cap)
            out = [np.empty((cap, m)) for _ in range(3)] + [np.empty((cap, w)) for w in widths]
            status, rows = self.run(dt, k, W, state, archive, out_t, *out)
            self.after_run()
            parts.append((out_t[:rows], *(o[:rows] for o in out)))
            if status == DONE:
                break
            if status == FULL:
                cap *= 2
                continue
            if status == NONFINITE:
                ok = False
                break
            raise SolverError(f"{self.name}: the step needed near t = "
                              f"{self.time + ctl[TAU]:.9g} s is below min_step = "
                              f"{self.min_step:.3g} s (loosen the tolerance or lower min_step)")
        self.time += k * dt
        self.accepted = int(ctl[ACCEPTED])
        self.rejected = int(ctl[REJECTED])
        t, u, v, a, *extras = (np.concatenate([p[i] for p in parts])
                               for i in range(4 + len(widths)))
        self.row_offsets = t if self.every else None
        if widths:
            self.keep_extras(extras)
        return (u, v, a), ok

    def extra_widths(self) -> list[int]:
        """Widths of further per-row outputs of the compiled loop (none by default)."""
        return []

    def after_run(self):
        """Called after each call of the compiled loop (to collect what it recorded)."""

    def keep_extras(self, extras: list):
        """Receives the further per-row outputs of a whole call, in the order of
        ``extra_widths``."""

    @abc.abstractmethod
    def run(self, dt, k, W, state, archive, out_t, out_u, out_v, out_a, *extras):
        """Call the compiled loop: returns (status, rows written)."""


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
    parts = np.maximum(1, np.ceil(d / h * (1 - 1e-9))).astype(np.int64)
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


def load_breakpoints(columns) -> np.ndarray:
    """Times (s) where a load column is not smooth: breakpoints of its function."""
    out = [np.asarray(fn.breakpoints, float) for fn, _ in columns]
    return np.unique(np.concatenate(out)) if out else np.zeros(0)


# ------------------------------------------------------------------------------------------
# compiled helpers
@numba.njit(cache=True, nogil=True)
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
    for c in range(nb):
        w[c] = 0.0
        slope[c] = 0.0
    for p in range(deg + 1):
        # Lagrange weight of knot j0 + p and its derivative at s
        num = 1.0
        dnum = 0.0
        den = 1.0
        for r in range(deg + 1):
            if r == p:
                continue
            den *= (p - r)
            d = s - (j0 + r)
            dnum = dnum * d + num
            num *= d
        lw = num / den
        ld = dnum / den / dt
        for c in range(nb):
            w[c] += lw * W[j0 + p, c]
            slope[c] += ld * W[j0 + p, c]


@numba.njit(cache=True, nogil=True)
def force(Bt, w, f):
    """Generalized force f (m,) = Bg w for Bt = Bg^T (nb, m)."""
    m = f.size
    for i in range(m):
        f[i] = 0.0
    for c in range(Bt.shape[0]):
        wc = w[c]
        for i in range(m):
            f[i] += Bt[c, i] * wc


@numba.njit(cache=True, nogil=True)
def accel(f, kk, C, diag, x, v, out):
    """out = f - diag(kk) x - C v (the acceleration, generalized mass I)."""
    m = x.size
    if diag:
        for i in range(m):
            out[i] = f[i] - kk[i] * x[i] - C[i, i] * v[i]
        return
    for i in range(m):
        s = f[i] - kk[i] * x[i]
        for j in range(m):
            s -= C[i, j] * v[j]
        out[i] = s


@numba.njit(cache=True, nogil=True)
def accel_at(tau, dt, k, W, Bt, kk, C, diag, x, v, w, slope, f, out):
    """The acceleration at local time tau from the interpolated load."""
    load_at(tau, dt, k, W, w, slope)
    force(Bt, w, f)
    accel(f, kk, C, diag, x, v, out)


@numba.njit(cache=True, nogil=True)
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
def next_archived(archive, j, k):
    """First archived knot index >= j (k + 1 when none)."""
    while j <= k and not archive[j]:
        j += 1
    return j


@numba.njit(cache=True, nogil=True)
def count_archived(archive, j, k, limit, dt):
    """Archived knots from index j whose local time is at most ``limit``."""
    n = 0
    while j <= k and j * dt <= limit * (1.0 + 1e-14) + 1e-300:
        if archive[j]:
            n += 1
        j += 1
    return n


@numba.njit(cache=True, nogil=True)
def emit_step(tau, h, dt, k, W, Bt, kk, C, diag, archive, j, x0, v0, a0, x1, v1, a1,
              every, count, out_t, out_u, out_v, out_a, row, w, slope, f, xo, vo):
    """Rows of an accepted step [tau, tau + h]: the archived knots it covers (dense output),
    then the step end when it is an every-th step. Returns (next knot index, rows)."""
    end = tau + h
    m = x0.size
    last_time = -1.0
    while j <= k and j * dt <= end * (1.0 + 1e-14) + 1e-300:
        if archive[j]:
            tj = j * dt
            theta = min(max((tj - tau) / h, 0.0), 1.0)
            hermite(theta, h, x0, v0, a0, x1, v1, a1, xo, vo)
            for c in range(W.shape[1]):
                w[c] = W[j, c]
            force(Bt, w, f)
            accel(f, kk, C, diag, xo, vo, out_a[row])
            for i in range(m):
                out_u[row, i] = xo[i]
                out_v[row, i] = vo[i]
            out_t[row] = tj
            last_time = tj
            row += 1
        j += 1
    if every > 0 and count % every == 0 and last_time < end * (1.0 - 1e-14):
        for i in range(m):
            out_u[row, i] = x1[i]
            out_v[row, i] = v1[i]
            out_a[row, i] = a1[i]
        out_t[row] = end
        row += 1
    return j, row


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


@numba.njit(cache=True, nogil=True)
def track_scales(ctl, x, v):
    """Raise the running maxima of |x| and |v| (ctl[SX], ctl[SV])."""
    for i in range(x.size):
        if abs(x[i]) > ctl[SX]:
            ctl[SX] = abs(x[i])
        if abs(v[i]) > ctl[SV]:
            ctl[SV] = abs(v[i])


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def all_finite(x):
    for i in range(x.size):
        if not np.isfinite(x[i]):
            return False
    return True


@numba.njit(cache=True, nogil=True)
def plan_step(tau, h, tend, hmax):
    """The step to try from tau: h bounded by hmax, stretched or cut to land on tend.
    Returns (step, lands)."""
    h = min(h, hmax)
    remaining = tend - tau
    # a sliver under 1 % of a step is absorbed rather than taken alone
    if h >= remaining * (1.0 - 1e-12) or remaining - h < 0.01 * h:
        return remaining, True
    return h, False
