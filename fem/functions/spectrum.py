"""Design response spectra: pseudo-acceleration as a function of frequency and damping.

A spectrum is given at ``frequencies`` (Hz, increasing) for one or several damping ratios
(``damping``, increasing), one row of ``values`` (m/s^2) per ratio. Between two frequencies
it is interpolated linearly in log(frequency) and log(value) ("log", the straight lines of a
spectrum drawn on log-log axes) or linearly in both ("linear"); below the first frequency it
keeps the first value and above the last the last one (the zero-period acceleration).
Between two damping rows it is interpolated linearly in the damping ratio; a damping outside
the rows given is refused, except that a spectrum of a single row applies to every damping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import StudyError

INTERPOLATIONS = ("log", "linear")


@dataclass(frozen=True)
class DesignSpectrum:
    name: str
    frequencies: np.ndarray     # (nf,) Hz
    damping: np.ndarray         # (nd,) ratios
    values: np.ndarray          # (nd, nf) m/s^2
    interpolation: str = "log"

    def __post_init__(self):
        where = f"spectra.{self.name}"
        f, d, v = self.frequencies, self.damping, self.values
        if f.ndim != 1 or len(f) < 1 or not np.all(np.isfinite(f)) or np.any(f <= 0):
            raise StudyError(f"{where}.frequencies: expected positive finite frequencies (Hz)")
        if np.any(np.diff(f) <= 0):
            raise StudyError(f"{where}.frequencies: must increase strictly")
        if d.ndim != 1 or len(d) < 1 or not np.all(np.isfinite(d)) or np.any(d < 0):
            raise StudyError(f"{where}.damping: expected damping ratios >= 0")
        if np.any(np.diff(d) <= 0):
            raise StudyError(f"{where}.damping: must increase strictly")
        if v.shape != (len(d), len(f)):
            raise StudyError(f"{where}.values: expected {len(d)} row(s) (one per damping "
                             f"ratio) of {len(f)} values (one per frequency), got shape "
                             f"{'x'.join(map(str, v.shape))}")
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise StudyError(f"{where}.values: expected finite pseudo-accelerations >= 0 "
                             f"(m/s^2)")
        if self.interpolation == "log" and np.any(v == 0):
            raise StudyError(f"{where}.values: a zero value cannot be interpolated on log "
                             f"axes; set interpolation = \"linear\"")

    @property
    def zero_period_acceleration(self) -> float:
        """The value at the highest frequency given (the largest over the damping rows)."""
        return float(self.values[:, -1].max())

    def __call__(self, frequency, damping) -> np.ndarray:
        """Pseudo-acceleration (m/s^2) at each (frequency Hz, damping ratio) pair."""
        frequency, damping = np.broadcast_arrays(np.asarray(frequency, float),
                                                 np.asarray(damping, float))
        rows = np.array([self._along_frequency(row, frequency) for row in self.values])
        if len(self.damping) == 1:
            return rows[0]
        lo, hi = self.damping[0], self.damping[-1]
        outside = (damping < lo - 1e-12) | (damping > hi + 1e-12)
        if np.any(outside):
            bad = float(damping[outside].flat[0])
            raise StudyError(f"spectra.{self.name}: damping ratio {bad:.6g} is outside the "
                             f"ratios the spectrum gives ({lo:g} to {hi:g}); give a row for it "
                             f"or set the analysis' modal_damping")
        k = np.clip(np.searchsorted(self.damping, damping, side="right") - 1, 0,
                    len(self.damping) - 2)
        d0, d1 = self.damping[k], self.damping[k + 1]
        w = np.clip((damping - d0) / (d1 - d0), 0.0, 1.0)
        grid = np.indices(frequency.shape)
        v0 = rows[(k,) + tuple(grid)]
        v1 = rows[(k + 1,) + tuple(grid)]
        return (1 - w) * v0 + w * v1

    def _along_frequency(self, row, frequency):
        f = np.clip(frequency, self.frequencies[0], self.frequencies[-1])
        if len(self.frequencies) == 1:
            return np.full(f.shape, row[0])
        if self.interpolation == "linear":
            return np.interp(f, self.frequencies, row)
        return np.exp(np.interp(np.log(f), np.log(self.frequencies), np.log(row)))
