"""Compiled loops of the response spectra (``postpro.spectra``): the exact step of a linear
oscillator under a ground acceleration that is linear over the step, and the peaks over a
record.

This module is imported on first use only (it imports numba), after ``fem`` has pointed
numba's disk cache at its folder (``fem.compiled``). It imports nothing else of fem or
postpro, so that numba's own check of this file's sources keeps its cached code current.

The oscillator: x'' + 2 xi w x' + w^2 x = -a(t), x relative to the ground. In the scaled
state y = (x, x'/w) it reads y' = w G y - (0, a/w), G = [[0, 1], [-1, -2 xi]], and over a
step of length h with a(t) = a0 (1 - s) + a1 s, s = (t - t0) / h:

    y1 = E y0 - (h / w) [(P1 - P2) a0 + P2 a1] e2,    tau = w h,
    E = exp(tau G),  P1 = int_0^1 exp(tau G (1 - s)) ds,  P2 = int_0^1 exp(tau G (1 - s)) s ds,

e2 = (0, 1): only the second columns of P1 and P2 matter. E, P1 e2 and P2 e2 come from their
Taylor series at tau / 2^n (n so that tau (1 + 2 xi) / 2^n <= 1/2, 18 terms: the remainder is
below 1e-18 of the sum) doubled n times:

    E(2 tau) = E^2,  P1(2 tau) = (E P1 + P1) / 2,  P2(2 tau) = (E P2 + P2 + P1) / 4,

(all at tau on the right: the integrals over [0, 2 tau] split at tau). Every term is a sum of
products of bounded quantities (exp(t G) is a contraction for xi >= 0), with no division by w
or tau and no cancellation, so the coefficients hold to a few round-offs for every damping
ratio (0, near and at 1, overdamped) and every w h. Long steps (w h >= 1) of oscillators
with xi <= 0.9 take the closed forms of E, P1 and P2 (exp, cos, sin: several times faster,
and as accurate there), which matters for records whose steps all differ.
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: Taylor terms at the scaled step (|tau G| <= 1/2: 0.5^18 / 18! < 1e-20)
TERMS = 18
#: 1 / k, k = 0 ... TERMS + 1 (multiplications rather than divisions in the series)
RECIPROCALS = np.array([0.0] + [1.0 / k for k in range(1, TERMS + 2)])
#: steps with w h >= CLOSED_TAU and xi <= CLOSED_XI take the closed forms (cos, sin, exp)
CLOSED_TAU = 1.0
CLOSED_XI = 0.9


@numba.njit(cache=True)
def step_coefficients(w, xi, h, c):
    """The 8 coefficients of one step of length ``h`` (s) for the oscillator of angular
    frequency ``w`` (rad/s) and damping ratio ``xi``, into ``c``:

        x1 = c0 x0 + c1 v0 + c4 a0 + c5 a1,   v1 = c2 x0 + c3 v0 + c6 a0 + c7 a1.
    """
    tau = w * h
    if tau >= CLOSED_TAU and xi <= CLOSED_XI:
        _closed_form(w, xi, h, c)
        return
    size = tau * (1.0 + 2.0 * xi)
    n = 0
    while size > 0.5:
        size *= 0.5
        n += 1
    d = tau
    for _ in range(n):
        d *= 0.5
    # G = [[0, 1], [-1, -2 xi]]; d G
    g11, g12, g21, g22 = 0.0, d, -d, -2.0 * xi * d
    # E = sum (dG)^k / k!, P1 e2 = sum (dG)^k e2 / (k + 1)!, P2 e2 = sum (dG)^k e2 / (k + 2)!
    e11, e12, e21, e22 = 1.0, 0.0, 0.0, 1.0
    t11, t12, t21, t22 = 1.0, 0.0, 0.0, 1.0          # (dG)^k / k!
    p1x, p1v = 0.0, 1.0                              # k = 0: e2 / 1!
    p2x, p2v = 0.0, 0.5                              # k = 0: e2 / 2!
    for k in range(1, TERMS):
        r = RECIPROCALS[k]
        a11 = (t11 * g11 + t12 * g21) * r
        a12 = (t11 * g12 + t12 * g22) * r
        a21 = (t21 * g11 + t22 * g21) * r
        a22 = (t21 * g12 + t22 * g22) * r
        t11, t12, t21, t22 = a11, a12, a21, a22
        e11 += t11
        e12 += t12
        e21 += t21
        e22 += t22
        f1 = RECIPROCALS[k + 1]
        f2 = f1 * RECIPROCALS[k + 2]
        p1x += t12 * f1
        p1v += t22 * f1
        p2x += t12 * f2
        p2v += t22 * f2
        if max(abs(t11), abs(t12), abs(t21), abs(t22)) < 1e-18:
            break                                    # the rest is below round-off of E
    for _ in range(n):
        q2x = 0.25 * (e11 * p2x + e12 * p2v + p2x + p1x)
        q2v = 0.25 * (e21 * p2x + e22 * p2v + p2v + p1v)
        q1x = 0.5 * (e11 * p1x + e12 * p1v + p1x)
        q1v = 0.5 * (e21 * p1x + e22 * p1v + p1v)
        p1x, p1v, p2x, p2v = q1x, q1v, q2x, q2v
        f11 = e11 * e11 + e12 * e21
        f12 = e11 * e12 + e12 * e22
        f21 = e21 * e11 + e22 * e21
        f22 = e21 * e12 + e22 * e22
        e11, e12, e21, e22 = f11, f12, f21, f22
    _store(w, h, e11, e12, e21, e22, p1x, p1v, p2x, p2v, c)


@numba.njit(cache=True, inline="always")
def _closed_form(w, xi, h, c):
    """The coefficients of an underdamped step long enough for the closed forms:
    E = exp(-xi tau) (cos(tau s) I + sin(tau s) / s (G + xi I)), s = sqrt(1 - xi^2), then
    P1 e2 = (tau G)^-1 (E - I) e2 and P2 e2 = (tau G)^-1 (P1 - I) e2, G^-1 = [[-2 xi, -1],
    [1, 0]] (their round-off stays within a few units for tau >= 1 and xi <= 0.9)."""
    tau = w * h
    s = math.sqrt(1.0 - xi * xi)
    ex = math.exp(-xi * tau)
    co = ex * math.cos(tau * s)
    si = ex * math.sin(tau * s) / s
    e11 = co + si * xi
    e12 = si
    e21 = -si
    e22 = co - si * xi
    p1x = (-2.0 * xi * e12 - (e22 - 1.0)) / tau
    p1v = e12 / tau
    p2x = (-2.0 * xi * p1x - (p1v - 1.0)) / tau
    p2v = p1x / tau
    _store(w, h, e11, e12, e21, e22, p1x, p1v, p2x, p2v, c)


@numba.njit(cache=True, inline="always")
def _store(w, h, e11, e12, e21, e22, p1x, p1v, p2x, p2v, c):
    """The coefficients in (x, v) from E and the second columns of P1 and P2 in the scaled
    state (x, v / w)."""
    c[0] = e11
    c[1] = e12 / w
    c[2] = w * e21
    c[3] = e22
    c[4] = -(h / w) * (p1x - p2x)
    c[5] = -(h / w) * p2x
    c[6] = -h * (p1v - p2v)
    c[7] = -h * p2v


@numba.njit(cache=True)
def peaks(acceleration, group, lengths, omega, xi, block, out):
    """Peaks of the oscillators (``omega[j]``, ``xi[j]``) from rest at the first instant,
    over the record ``acceleration`` (n,) whose step i has the length ``lengths[group[i]]``.

    ``out[j]`` gets max |x|, max |x'|, max |x'' + a| (relative displacement, relative
    velocity, absolute acceleration) over the record's instants. The oscillators go by
    blocks of ``block``: the coefficients of a block for every step length are computed
    first, then the record is stepped once for the whole block (the inner loop over the
    oscillators is independent from one to the next, which the compiler vectorizes).
    """
    n = acceleration.shape[0]
    count = omega.shape[0]
    g_count = lengths.shape[0]
    coefficients = np.empty((g_count, 8, block))
    c = np.empty(8)
    x = np.empty(block)
    v = np.empty(block)
    sd = np.empty(block)
    sv = np.empty(block)
    sa = np.empty(block)
    two_zw = np.empty(block)
    w2 = np.empty(block)
    for j0 in range(0, count, block):
        nb = min(block, count - j0)
        for j in range(nb):
            w = omega[j0 + j]
            z = xi[j0 + j]
            for k in range(g_count):
                step_coefficients(w, z, lengths[k], c)
                for q in range(8):
                    coefficients[k, q, j] = c[q]
            two_zw[j] = 2.0 * z * w
            w2[j] = w * w
            x[j] = 0.0
            v[j] = 0.0
            sd[j] = 0.0
            sv[j] = 0.0
            sa[j] = 0.0
        a0 = acceleration[0]
        for i in range(n - 1):
            g = group[i]
            a1 = acceleration[i + 1]
            for j in range(nb):
                x0 = x[j]
                v0 = v[j]
                x1 = (coefficients[g, 0, j] * x0 + coefficients[g, 1, j] * v0
                      + coefficients[g, 4, j] * a0 + coefficients[g, 5, j] * a1)
                v1 = (coefficients[g, 2, j] * x0 + coefficients[g, 3, j] * v0
                      + coefficients[g, 6, j] * a0 + coefficients[g, 7, j] * a1)
                x[j] = x1
                v[j] = v1
                sd[j] = max(sd[j], abs(x1))
                sv[j] = max(sv[j], abs(v1))
                sa[j] = max(sa[j], abs(two_zw[j] * v1 + w2[j] * x1))
            a0 = a1
        for j in range(nb):
            out[j0 + j, 0] = sd[j]
            out[j0 + j, 1] = sv[j]
            out[j0 + j, 2] = sa[j]


@numba.njit(cache=True)
def step_groups(times, tolerance):
    """Steps of the same length: (group (n - 1,) int64, lengths (g,)): the steps sorted by
    length, a new group starting where a length exceeds the first of its group by more than
    ``tolerance`` (s); each group's length is the mean of its members. Groups are numbered in
    the order of their first step."""
    n = times.shape[0] - 1
    steps = np.empty(n)
    for i in range(n):
        steps[i] = times[i + 1] - times[i]
    order = np.argsort(steps)
    group = np.empty(n, np.int64)
    sums = np.zeros(n)
    counts = np.zeros(n, np.int64)
    g = -1
    first = 0.0
    for k in range(n):
        i = order[k]
        if g < 0 or steps[i] - first > tolerance:
            g += 1
            first = steps[i]
        group[i] = g
        sums[g] += steps[i]
        counts[g] += 1
    # groups numbered in the order the record meets them: when most steps differ, the
    # stepping loop then reads the coefficients in memory order
    label = np.full(g + 1, -1, np.int64)
    lengths = np.empty(g + 1)
    following = 0
    for i in range(n):
        k = group[i]
        if label[k] < 0:
            label[k] = following
            lengths[following] = sums[k] / counts[k]
            following += 1
        group[i] = label[k]
    return group, lengths
