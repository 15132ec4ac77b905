"""Analysis runners, one module per analysis kind, registered by (kind, basis).

A runner is ``run(ctx: Context, spec: AnalysisSpec) -> None``: it computes the analysis and
writes it through ``ctx.writer``; it raises ``SolverError`` on a numerical failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fem.analyses import complex_modes, harmonic, modal_transient, modes, transient

#: (kind, basis) -> (runner, schemes it offers or None when the kind has no scheme)
RUNNERS = {
    ("transient", "physical"): (transient.run, ("newmark", "hht", "central_difference", "exact")),
    ("modes", "physical"): (modes.run, None),
    ("complex_modes", "physical"): (complex_modes.run, None),
    ("harmonic", "physical"): (harmonic.run, None),
    ("harmonic", "modal"): (harmonic.run, None),
    ("transient", "modal"): (lambda ctx, spec: _modal_transient(ctx, spec),
                             (*modal_transient.SCHEMES, "exact")),
}


def _modal_transient(ctx, spec):
    if spec.get("scheme") == "exact":
        from fem.exact.runner import run_modal

        return run_modal(ctx, spec)
    return modal_transient.run(ctx, spec)


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
