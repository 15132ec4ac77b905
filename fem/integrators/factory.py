"""Build the scheme of a transient analysis from its catalog row and its parameters (the
study reader has already checked them against ``fem.integrators.catalog`` and filled in the
defaults)."""

from __future__ import annotations

from fem.errors import NotAvailableError
from fem.integrators import catalog


def make(dynamics, links, p: dict, *, label: str):
    """The scheme of the analysis parameters ``p`` (basis, scheme and the row's keys)."""
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
    raise NotAvailableError(f"scheme '{name}' is not available yet on the transient engine")
