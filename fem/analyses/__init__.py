"""Analysis runners, one module per analysis kind, registered by (kind, basis).

A runner is ``run(ctx: Context, spec: AnalysisSpec) -> None``: it computes the analysis and
writes it through ``ctx.writer``; it raises ``SolverError`` on a numerical failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fem.analyses import complex_modes, harmonic, modal_transient, modes, transient

#: (kind, basis) -> (runner, schemes it offers or None when the kind has no scheme)
RUNNERS = {
    ("transient", "physical"): (lambda ctx, spec: _physical_transient(ctx, spec),
                                ("newmark", "hht", "central_difference", "exact", "rk4")),
    ("modes", "physical"): (modes.run, None),
    ("complex_modes", "physical"): (complex_modes.run, None),
    ("harmonic", "physical"): (harmonic.run, None),
    ("harmonic", "modal"): (harmonic.run, None),
    ("transient", "modal"): (lambda ctx, spec: _modal_transient(ctx, spec),
                             (*modal_transient.SCHEMES, "exact", "rk4")),
}


def _with_impacts(ctx, spec) -> bool:
    """Scheme rk4, or impact links: the runner of ``fem.impact``."""
    names = set(spec.get("links") or ())
    return spec.get("scheme") == "rk4" or any(
        lk.kind == "impact" for lk in ctx.study.links if lk.name in names)


def _physical_transient(ctx, spec):
    if ("physical", spec.get("scheme")) in transient.ENGINE_SCHEMES:
        return transient.run_engine(ctx, spec)
    if _with_impacts(ctx, spec):
        from fem.impact.runner import run

        return run(ctx, spec)
    return transient.run(ctx, spec)


def _modal_transient(ctx, spec):
    if ("modal", spec.get("scheme")) in transient.ENGINE_SCHEMES:
        return transient.run_engine(ctx, spec)
    if _with_impacts(ctx, spec):
        from fem.impact.runner import run

        return run(ctx, spec)
    if spec.get("scheme") == "exact":
        from fem.exact.runner import run_modal

        return run_modal(ctx, spec)
    if ("modal", spec.get("scheme")) in transient.ENGINE_SCHEMES:
        return transient.run_engine(ctx, spec)
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
