"""postpro: reading and post-processing fem results files (no solver imports)."""

from postpro.errors import CheckSpecError, PostproError
from postpro.results import Results, open
from postpro.spectra import Spectrum, response_spectrum

__all__ = ["CheckSpecError", "PostproError", "Results", "Spectrum", "open", "response_spectrum"]
