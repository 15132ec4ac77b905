"""Response spectra of a ground (or floor) acceleration record, computed exactly.

The record a(t) is given at instants t_0 < t_1 < ... (not necessarily evenly spaced) and
taken as linear between them. For each frequency f (Hz) and damping ratio xi, the linear
oscillator

    x'' + 2 xi w x' + w^2 x = -a(t),   w = 2 pi f,   x(t_0) = x'(t_0) = 0,

x being its displacement relative to the ground, is stepped from instant to instant by the
exact solution over each step (a 2x2 transition matrix and the exact response to a load
linear in time: ``postpro.spectra_kernels``), not by a numerical integrator: the result is
exact for the piecewise-linear record to round-off, whatever the step, the frequency (also
far above the record's sampling) and the damping ratio (0, at and beyond 1).

Peaks are taken at the record's instants, as is common practice (a peak between two
instants is missed by at most the change of the response over a step; sample the record
finer to follow it). The response is followed over the record only: append zeros to the
record for the free vibration after it.

Given the peaks SD = max |x| (m), SV = max |x'| (m/s) and SA = max |x'' + a| (the peak
absolute acceleration, m/s^2), the pseudo-velocity is PSV = w SD and the pseudo-acceleration
PSA = w^2 SD.

The loops are compiled with numba on first use (cached on disk in fem's numba cache folder,
``fem.compiled``); ``import postpro`` does not import numba.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from postpro.errors import PostproError

#: the frequencies used when none are given: f0:f1:count, log-spaced (Hz)
DEFAULT_FREQUENCIES = "0.1:100:200"
DEFAULT_DAMPING = 0.05
#: most frequencies (or damping ratios) one call takes
MAX_COUNT = 100_000
#: most oscillators (frequencies x damping ratios) one call takes
MAX_OSCILLATORS = 1_000_000
#: memory for the step coefficients of a block of oscillators (bytes)
COEFFICIENT_BYTES = 16 << 20


@dataclass(frozen=True)
class Spectrum:
    """Peaks of the oscillators, one row per frequency and one column per damping ratio.

    Attributes
    ----------
    frequency : (nf,) Hz
    damping : (nd,) damping ratios
    sd : (nf, nd) m, peak relative displacement
    sv : (nf, nd) m/s, peak relative velocity
    sa : (nf, nd) m/s^2, peak absolute acceleration
    """

    frequency: np.ndarray
    damping: np.ndarray
    sd: np.ndarray
    sv: np.ndarray
    sa: np.ndarray

    @property
    def omega(self) -> np.ndarray:
        """(nf,) rad/s."""
        return 2.0 * np.pi * self.frequency

    @property
    def period(self) -> np.ndarray:
        """(nf,) s."""
        return 1.0 / self.frequency

    @property
    def psv(self) -> np.ndarray:
        """(nf, nd) m/s: pseudo-velocity w SD."""
        return self.omega[:, None] * self.sd

    @property
    def psa(self) -> np.ndarray:
        """(nf, nd) m/s^2: pseudo-acceleration w^2 SD."""
        return self.omega[:, None] ** 2 * self.sd


def log_frequencies(first: float, last: float, count: int) -> np.ndarray:
    """``count`` frequencies (Hz) from ``first`` to ``last`` (both included), evenly spaced
    on a logarithmic scale."""
    _positive_frequencies([first, last], "frequencies")
    count = int(count)
    if not 1 <= count <= MAX_COUNT:
        raise PostproError(f"frequencies: count {count} must be from 1 to {MAX_COUNT}")
    if count == 1:
        if first != last:
            raise PostproError(f"frequencies: one frequency from {first:g} to {last:g} Hz: "
                               f"give count >= 2, or first = last")
        return np.array([float(first)])
    out = np.logspace(math.log10(first), math.log10(last), count)
    out[0], out[-1] = first, last
    return out


def parse_frequencies(text: str) -> np.ndarray:
    """``f0:f1:count`` (log-spaced, both ends included) or a list ``f1,f2,...`` (Hz)."""
    text = str(text).strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise PostproError(f"frequencies '{text}': expected f0:f1:count (Hz), or a list "
                               f"f1,f2,...")
        try:
            first, last, count = float(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            raise PostproError(f"frequencies '{text}': expected f0:f1:count with numbers f0, "
                               f"f1 (Hz) and an integer count") from None
        if not first <= last:
            raise PostproError(f"frequencies '{text}': f0 must not exceed f1")
        return log_frequencies(first, last, count)
    return _positive_frequencies(_numbers(text, "frequencies"), "frequencies")


def parse_dampings(text: str) -> np.ndarray:
    """A list of damping ratios ``0.02,0.05`` (fractions of critical damping)."""
    return _dampings(_numbers(str(text), "damping"), "damping")


def response_spectrum(time, acceleration, frequencies=None, damping=DEFAULT_DAMPING, *,
                      jumps: bool = False) -> Spectrum:
    """The response spectrum of a record, exact for the record taken as piecewise linear.

    Parameters
    ----------
    time : (n,) array_like, s
        Instants of the record, strictly increasing (n >= 2); any spacing.
    acceleration : (n,) array_like, m/s^2
        The ground acceleration at those instants.
    frequencies : array_like or str, optional
        Oscillator frequencies in Hz (> 0), or a text ``f0:f1:count`` (log-spaced) or
        ``f1,f2,...``; default ``0.1:100:200``.
    damping : float or array_like or str, optional
        Damping ratios (>= 0: 0, underdamped, critical and overdamped are all exact);
        default 0.05.
    jumps : bool
        Accept an instant given twice (the acceleration jumps there), as the archived
        instants of an analysis before and after an event; times must still never decrease.

    Returns
    -------
    Spectrum
        Peaks of every oscillator (frequencies x damping ratios) from rest at ``time[0]``,
        taken at the record's instants.
    """
    t = _vector(time, "time")
    a = _vector(acceleration, "acceleration")
    if t.size != a.size:
        raise PostproError(f"record: {t.size} instants for {a.size} accelerations")
    if t.size < 2:
        raise PostproError(f"record: {t.size} instant(s); a response spectrum needs at least 2")
    steps = np.diff(t)
    bad = np.flatnonzero(steps < 0 if jumps else steps <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        raise PostproError(f"time: instant {i + 1} ({t[i]:.12g} s) is not after the one "
                           f"before it ({t[i - 1]:.12g} s): instants must increase "
                           f"{'' if jumps else 'strictly'}".rstrip())
    if frequencies is None:
        f = parse_frequencies(DEFAULT_FREQUENCIES)
    elif isinstance(frequencies, str):
        f = parse_frequencies(frequencies)
    else:
        f = _positive_frequencies(frequencies, "frequencies")
    if isinstance(damping, str):
        xi = parse_dampings(damping)
    else:
        xi = _dampings(np.atleast_1d(np.asarray(damping, dtype=float)), "damping")
    if f.size * xi.size > MAX_OSCILLATORS:
        raise PostproError(f"{f.size} frequencies x {xi.size} damping ratios: at most "
                           f"{MAX_OSCILLATORS:,} oscillators in one call")
    kernels = _kernels()
    # steps of one length to round-off of the instants share their coefficients
    tolerance = 16.0 * np.finfo(float).eps * max(abs(t[0]), abs(t[-1]))
    group, lengths = kernels.step_groups(t, tolerance)
    omega = np.repeat(2.0 * np.pi * f, xi.size)
    ratios = np.tile(xi, f.size)
    out = np.empty((omega.size, 3))
    # oscillators by blocks whose coefficients for every step length take ~16 MB at most
    block = int(min(omega.size, max(8, COEFFICIENT_BYTES // (64 * lengths.size))))
    kernels.peaks(a, group, lengths, omega, ratios, block, out)
    if not np.isfinite(out).all():
        raise PostproError("record: the response overflows (accelerations too large for "
                           "floating point)")
    shape = (f.size, xi.size)
    return Spectrum(f, xi, out[:, 0].reshape(shape), out[:, 1].reshape(shape),
                    out[:, 2].reshape(shape))


def _kernels():
    """The compiled loops, imported on first use with numba's cache in fem's folder."""
    import importlib

    importlib.import_module("fem")      # fem.compiled points numba's disk cache at its folder
    from postpro import spectra_kernels

    return spectra_kernels


def _vector(values, what: str) -> np.ndarray:
    try:
        # a writable copy: numba compiles another version for read-only arrays
        out = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise PostproError(f"{what}: expected numbers") from None
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        i = int(bad[0])
        raise PostproError(f"{what}: value {i + 1} is not finite ({out[i]})")
    return out


def _numbers(text: str, what: str) -> np.ndarray:
    items = [item.strip() for item in text.split(",")]
    try:
        return np.array([float(item) for item in items])
    except ValueError:
        raise PostproError(f"{what} '{text}': expected numbers separated by commas") from None


def _positive_frequencies(values, what: str) -> np.ndarray:
    f = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if f.size == 0 or f.size > MAX_COUNT:
        raise PostproError(f"{what}: expected 1 to {MAX_COUNT} frequencies, got {f.size}")
    bad = np.flatnonzero(~(np.isfinite(f) & (f > 0)))
    if bad.size:
        raise PostproError(f"{what}: {f[bad[0]]:g} Hz: frequencies must be finite and > 0")
    return f


def _dampings(values, what: str) -> np.ndarray:
    xi = np.asarray(values, dtype=float).reshape(-1)
    if xi.size == 0 or xi.size > MAX_COUNT:
        raise PostproError(f"{what}: expected 1 to {MAX_COUNT} damping ratios, got {xi.size}")
    bad = np.flatnonzero(~(np.isfinite(xi) & (xi >= 0)))
    if bad.size:
        raise PostproError(f"{what}: {xi[bad[0]]:g}: damping ratios must be finite and >= 0 "
                           f"(0.05 is 5 % of critical damping)")
    return xi
