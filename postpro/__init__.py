"""postpro: reading and post-processing fem results files (no solver imports)."""

from postpro.errors import CheckSpecError, PostproError
from postpro.results import Results, open
from postpro.spectra import Spectrum, response_spectrum
from postpro.spectral import fft, psd

__all__ = ["CheckSpecError", "PostproError", "Results", "Spectrum", "fft", "open", "psd",
           "response_spectrum"]
