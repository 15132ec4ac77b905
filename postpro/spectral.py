"""Spectra of sampled series: power spectral density (Welch) and amplitude spectrum (FFT).

Conventions (docs/postprocessing.md):

- PSD: one-sided, in unit^2/Hz, over the frequencies 0 .. fs/2 of the segment's bins. Its
  integral over [0, fs/2] (the sum of the bins times the bin width fs/N, the discrete
  Parseval relation) is the mean square of the series, its variance once the mean is
  removed: ``rms = sqrt(sum(S) * df)``. White noise of variance sigma^2 sampled at fs has
  the level 2 sigma^2 / fs.
- FFT: single-sided amplitude. ``x(t) = sum_k A_k cos(2 pi f_k (t - t0) + phi_k)`` with t0
  the first sample: a sine of amplitude A whose frequency falls on a bin gives A there, the
  mean is the 0 Hz amplitude. The window's coherent gain is divided out (amplitude
  2 |X_k| / sum(w), |X_k| / sum(w) at 0 Hz and at fs/2).

Both need uniformly sampled series: :func:`sampling_step` refuses irregular instants (a
piecewise-uniform grid, an adaptive scheme, the instants archived twice at an event) and
:func:`resample` interpolates linearly onto a uniform grid when asked.
"""

from __future__ import annotations

import numpy as np

from postpro.errors import PostproError

#: the windows offered (scipy.signal.get_window names); boxcar is no window
WINDOWS = ("hann", "hamming", "blackman", "flattop", "bartlett", "boxcar")
#: how the series is detrended: per segment (PSD) or over the whole window (FFT)
DETRENDS = {"mean": "constant", "linear": "linear", "none": False}
#: relative tolerance on the spacing of instants still taken as uniform
UNIFORM_TOLERANCE = 1e-6
#: bins whose amplitude is below this fraction of the largest have their phase set to 0
PHASE_FLOOR = 1e-10
#: the fewest samples a spectrum is computed from
MIN_SAMPLES = 4


def sampling_step(t) -> float:
    """The step of uniformly spaced instants ``t`` (s).

    Instants count as uniform when every step is within 1e-6 of their mean step (plus
    the round-off of the instants themselves).

    Raises
    ------
    PostproError
        Fewer than 2 instants, or instants not uniformly spaced (the message gives the
        smallest and largest steps and the first irregular instant).
    """
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or len(t) < 2:
        raise PostproError(f"a spectrum needs at least 2 instants, got {t.size}")
    steps = np.diff(t)
    step = (t[-1] - t[0]) / (len(t) - 1)
    tolerance = UNIFORM_TOLERANCE * abs(step) + 16 * np.finfo(float).eps * np.abs(t).max()
    bad = np.flatnonzero(np.abs(steps - step) > tolerance)
    if step <= 0 or len(bad):
        first = int(bad[0]) if len(bad) else 0
        raise PostproError(
            f"the instants are not uniformly spaced (steps from {steps.min():.6g} to "
            f"{steps.max():.6g} s; the step after t = {t[first]:.12g} s is "
            f"{steps[first]:.6g} s against a mean of {step:.6g} s): a spectrum needs a "
            f"uniform sampling; resample the series linearly onto a uniform grid "
            f"(--resample DT, or resample=DT)")
    return float(step)


def resample(t, x, step: float):
    """``x`` interpolated linearly onto ``t[0] + k step`` up to ``t[-1]``.

    Instants archived twice (before and after an event) keep their last value (the state
    after it). There is no anti-aliasing filter: a step much longer than that of the series
    folds its higher frequencies onto lower ones.

    Returns
    -------
    t_new : numpy.ndarray, shape (k,)
    x_new : numpy.ndarray, shape (k,) or (k, c) as ``x``
    """
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if not (np.isfinite(step) and step > 0):
        raise PostproError(f"resample: the step must be > 0, got {step:g} s")
    if len(t) < 2 or t[-1] <= t[0]:
        raise PostproError(f"resample: needs instants spanning some time, got {len(t)} "
                           f"instant(s)")
    if np.any(np.diff(t) < 0):
        raise PostproError("resample: the instants must not decrease")
    if step > t[-1] - t[0]:
        raise PostproError(f"resample: the step {step:g} s is longer than the series "
                           f"({t[-1] - t[0]:g} s)")
    last = np.append(t[1:] != t[:-1], True)          # the last of each repeated instant
    t, x = t[last], x[last]
    count = int(np.floor((t[-1] - t[0]) / step * (1 + 1e-12))) + 1
    grid = t[0] + step * np.arange(count)
    grid[-1] = min(grid[-1], t[-1])
    if x.ndim == 1:
        return grid, np.interp(grid, t, x)
    return grid, np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])


def _prepared(t, x, resample_step):
    """(step, x as (n, c), whether x was 1-D) of a uniformly sampled (or resampled) series."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if x.shape[:1] != t.shape or x.ndim not in (1, 2):
        raise PostproError(f"the values (shape {x.shape}) do not match the instants (shape "
                           f"{t.shape}): expected (n,) or (n, columns)")
    if resample_step is not None:
        t, x = resample(t, x, resample_step)
    step = sampling_step(t)
    if len(t) < MIN_SAMPLES:
        raise PostproError(f"a spectrum needs at least {MIN_SAMPLES} samples, the window "
                           f"holds {len(t)}")
    if not np.all(np.isfinite(x)):
        raise PostproError("the series holds values that are not finite")
    one = x.ndim == 1
    return step, (x[:, None] if one else x), one


def _window_name(window: str) -> str:
    if window not in WINDOWS:
        raise PostproError(f"unknown window '{window}' (known: {', '.join(WINDOWS)})")
    return window


def _detrend(detrend: str):
    if detrend not in DETRENDS:
        raise PostproError(f"unknown detrend '{detrend}' (known: {', '.join(DETRENDS)})")
    return DETRENDS[detrend]


def default_segment(samples: int) -> int:
    """Samples per segment by default: the largest power of two up to a quarter of the
    samples (about 7 averages with half overlap); all of them under 32 samples."""
    if samples < 32:
        return samples
    return 1 << int(np.floor(np.log2(samples / 4)))


def psd(t, x, *, segment: int | None = None, window: str = "hann", overlap: float = 0.5,
        detrend: str = "mean", resample: float | None = None):
    """One-sided power spectral density of a uniformly sampled series (Welch's method).

    Parameters
    ----------
    t : array_like, shape (n,)
        Instants in s, uniformly spaced (or give ``resample``).
    x : array_like, shape (n,) or (n, c)
        Values, one column per series.
    segment : int, optional
        Samples per segment (default :func:`default_segment`); its bins are fs / segment
        apart.
    window : str
        One of :data:`WINDOWS` (default hann).
    overlap : float
        Fraction of a segment shared with the next one, in [0, 1) (default 0.5).
    detrend : str
        "mean" (default), "linear" or "none", applied to each segment.
    resample : float, optional
        Interpolate linearly onto a uniform grid of this step (s) first.

    Returns
    -------
    f : numpy.ndarray, shape (segment // 2 + 1,)
        Frequencies in Hz, 0 to fs/2.
    S : numpy.ndarray, shape (nf,) or (nf, c)
        PSD in unit^2/Hz: its sum times f[1] is the mean square of the (detrended) series.

    Raises
    ------
    PostproError
        Irregular instants, too few samples, a segment longer than the series, a bad
        window, overlap or detrend.
    """
    from scipy import signal

    step, values, one = _prepared(t, x, resample)
    n = len(values)
    segment = default_segment(n) if segment is None else int(segment)
    if not 2 <= segment <= n:
        raise PostproError(f"segment: {segment} samples, expected 2 to the {n} samples of "
                           f"the series")
    if not 0.0 <= overlap < 1.0:
        raise PostproError(f"overlap: expected a fraction in [0, 1), got {overlap:g}")
    noverlap = min(int(round(overlap * segment)), segment - 1)
    f, S = signal.welch(values, fs=1.0 / step, window=_window_name(window), nperseg=segment,
                        noverlap=noverlap, detrend=_detrend(detrend), return_onesided=True,
                        scaling="density", axis=0)
    return f, (S[:, 0] if one else S)


def segments(samples: int, segment: int, overlap: float) -> int:
    """How many segments Welch's method averages over ``samples`` samples."""
    noverlap = min(int(round(overlap * segment)), segment - 1)
    return 1 + (samples - segment) // (segment - noverlap)


def rms_of_psd(f, S) -> np.ndarray:
    """sqrt(sum(S) df): the RMS a PSD on the uniform bins ``f`` (Hz) stands for."""
    f = np.asarray(f, dtype=float)
    df = f[1] - f[0] if len(f) > 1 else 0.0
    return np.sqrt(np.sum(np.asarray(S, dtype=float), axis=0) * df)


def fft(t, x, *, window: str = "boxcar", detrend: str = "none",
        resample: float | None = None):
    """Single-sided amplitude and phase spectrum of a uniformly sampled series.

    Parameters
    ----------
    t : array_like, shape (n,)
        Instants in s, uniformly spaced (or give ``resample``).
    x : array_like, shape (n,) or (n, c)
    window : str
        One of :data:`WINDOWS` (default boxcar: none); its coherent gain is divided out,
        so that a sine on a bin keeps its amplitude (flattop: nearly so between bins).
    detrend : str
        "none" (default: the mean is the 0 Hz amplitude), "mean" or "linear", over the
        whole series.
    resample : float, optional
        Interpolate linearly onto a uniform grid of this step (s) first.

    Returns
    -------
    f : numpy.ndarray, shape (n // 2 + 1,)
        Frequencies in Hz, k / (n dt).
    amplitude : numpy.ndarray, shape (nf,) or (nf, c)
        In the unit of x: ``x(t) = sum A_k cos(2 pi f_k (t - t0) + phi_k)``.
    phase : numpy.ndarray, shape as amplitude
        phi_k in degrees, in [-180, 180], relative to the first instant t0; 0 where the
        amplitude is below 1e-10 of the column's largest (round-off).
    """
    from scipy import signal

    step, values, one = _prepared(t, x, resample)
    mode = _detrend(detrend)
    if mode:
        values = signal.detrend(values, axis=0, type=mode)
    n = len(values)
    w = signal.get_window(_window_name(window), n, fftbins=True)
    spectrum = np.fft.rfft(values * w[:, None], axis=0)
    amplitude = np.abs(spectrum) / np.sum(w)
    amplitude[1:n - n // 2] *= 2.0          # every bin but 0 Hz and (n even) fs/2
    phase = np.degrees(np.angle(spectrum))
    # the phase of a bin at round-off level is noise: 0 there
    phase[amplitude <= PHASE_FLOOR * amplitude.max(axis=0, initial=0.0)] = 0.0
    f = np.fft.rfftfreq(n, step)
    if one:
        return f, amplitude[:, 0], phase[:, 0]
    return f, amplitude, phase
