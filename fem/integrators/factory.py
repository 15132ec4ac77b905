"""Build the scheme of a transient analysis from its catalog row and its parameters (the
study reader has already checked them against ``fem.catalog`` and filled in the
defaults)."""

from __future__ import annotations

from fem.errors import NotAvailableError
from fem import catalog


def make(dynamics, links, p: dict, *, label: str, every: int = 0):
    """The scheme of the analysis parameters ``p`` (basis, scheme and the row's keys);
    ``every``: an adaptive scheme archives every ``every``-th accepted step (0: none)."""
    info = catalog.info(p["basis"], p["scheme"])
    if info is None:
        raise NotAvailableError(f"scheme '{p['scheme']}' is not available on a {p['basis']} "
                                f"basis")
    name = info.name
    events = p.get("events", info.events)
    if name in ("newmark", "hht", "central_difference"):
        from fem.integrators.newmark_family import NewmarkFamily

        if name == "central_difference":
            beta, gamma, alpha = 0.0, 0.5, 0.0
        else:
            beta, gamma, alpha = p["beta"], p["gamma"], p.get("alpha", 0.0)
        return NewmarkFamily(dynamics, links, beta=beta, gamma=gamma, alpha=alpha, name=name,
                             events=events, velocity=p.get("velocity", "step"),
                             equilibrium=p.get("equilibrium", "alpha"), label=label)
    if name == "exact":
        from fem.integrators.exact import ExactScheme

        return ExactScheme(dynamics, links, label=label)
    if name in ("rk4", "rk32", "rk54", "euler", "adaptive2", "devogelaere"):
        from fem.integrators.explicit import Explicit

        return Explicit(dynamics, links, name=name, events=events, label=label,
                        fixed=is_fixed(info, p), tolerance=p.get("tolerance", 1e-6),
                        max_step=p.get("max_step"), min_step=p.get("min_step"),
                        span=p["end"] - p["start"], every=every)
    raise NotAvailableError(f"scheme '{name}' is not available yet on the transient engine")


def is_fixed(info, p: dict) -> bool:
    """Whether the scheme steps on the driver's grid (a fixed step) rather than choosing its
    own steps: every scheme that needs a step, and euler when one is given."""
    if not info.adaptive:
        return True
    return info.name == "euler" and (p.get("step") is not None or bool(p.get("steps")))
