"""Analysis runners, one module per analysis kind, registered by (kind, basis).

A runner is ``run(ctx: Context, spec: AnalysisSpec) -> None``: it computes the analysis and
writes it through ``ctx.writer``; it raises ``SolverError`` on a numerical failure. Transient
analyses of every scheme and basis go through ``fem.analyses.transient`` (the schemes a basis
offers are those of the catalog, ``fem.catalog``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fem.analyses import complex_modes, harmonic, modes, random, spectral, static, transient

#: (kind, basis) -> runner
RUNNERS = {
    ("transient", "physical"): transient.run,
    ("transient", "modal"): transient.run,
    ("modes", "physical"): modes.run,
    ("complex_modes", "physical"): complex_modes.run,
    ("harmonic", "physical"): harmonic.run,
    ("harmonic", "modal"): harmonic.run,
    ("static", "physical"): static.run,
    ("spectral", "physical"): spectral.run,
    ("random", "physical"): random.run,
    ("random", "modal"): random.run,
}


@dataclass
class Context:
    """What every runner may use: the study, the model, the open results file, and the
    final states of the analyses already run (to start another analysis from them)."""
    study: object
    model: object
    writer: object
    states: dict = field(default_factory=dict)
    progress: bool = False
    log: object = None

    def say(self, message: str):
        if self.log:
            self.log(message)
