"""``fem post energy``: the energy terms of a transient analysis over time and their balance."""

from __future__ import annotations

import numpy as np

from postpro.energy import energy_balance_error
from postpro.errors import PostproError
from postpro.jobs import common

TERMS = ("kinetic", "potential", "link_energy", "dissipated", "external_work")
HEADERS = ("time [s]", "kinetic [J]", "potential [J]", "link [J]", "dissipated [J]",
           "external work [J]", "balance [J]")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "energy", help="energy terms over time and the global balance error",
        description="Print kinetic, potential, link and dissipated energy, external work and "
                    "the balance residual K + V + L + D - (K0 + V0 + L0 + D0) - W at the "
                    "archived instants (or every Nth), then the global relative RMS balance "
                    "error over the whole run, and whether the dissipated energy ever "
                    "decreases. The analysis must have archived its energy.")
    common.add_results(p)
    common.add_analysis(p)
    common.add_window(p)
    p.add_argument("--every", type=common.positive_int, default=1, metavar="N",
                   help="one archived instant in N (default: all)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the table as CSV")
    p.set_defaults(run=run)


def energy_history(analysis) -> dict[str, np.ndarray]:
    """Every energy term over the whole run, a term not archived being zero.

    Returns
    -------
    dict
        ``"time"`` (nt,) in s, each name of ``TERMS`` (nt,) in J, and ``"balance"`` (nt,)
        in J: total stored and dissipated energy minus its initial value minus the
        external work.

    Raises
    ------
    PostproError
        The analysis has no ``energy`` group.
    """
    terms = analysis.energy()
    if len(terms) == 1:
        raise PostproError(f"analysis '{analysis.name}' archived no energy (no 'energy/' "
                           "group in its results): energy tables need the energy terms")
    # a term the analysis does not produce (no links, no damping) is zero
    history = {"time": terms["time"]}
    history.update({name: np.asarray(terms.get(name, np.zeros_like(terms["time"])), float)
                    for name in TERMS})
    total = sum(history[name] for name in TERMS[:4])
    history["balance"] = total - total[:1] - history["external_work"]
    return history


def run(args) -> int:
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                           args.allow_incomplete)
        history = energy_history(analysis)
    error = energy_balance_error(*(history[name] for name in TERMS))
    t = history["time"]
    i0 = int(np.searchsorted(t, args.start, "left")) if args.start is not None else 0
    i1 = int(np.searchsorted(t, args.end, "right")) if args.end is not None else len(t)
    chosen = np.arange(i0, i1, args.every)
    columns = ("time",) + TERMS + ("balance",)
    rows = [[f"{history[c][i]:.9g}" for c in columns] for i in chosen]
    if args.output:
        with common.text_output(args.output) as stream:
            common.write_csv(stream, HEADERS, rows)
    else:
        print(common.format_table(HEADERS, rows))
    print(f"energy balance error: {error:.6g} (relative RMS over {len(t)} archived instants); "
          f"{dissipation_note(t, history)}")
    return common.EXIT_OK


def dissipation_note(t, history) -> str:
    """Whether the dissipated energy (dampers, friction, impacts) ever decreases between two
    archived instants beyond the round-off of the energies (1e-9 of the largest term): it
    never should (no damper, friction or impact gives energy back)."""
    dissipated = history["dissipated"]
    if len(t) < 2:
        return "one instant"
    drops = np.diff(dissipated)
    scale = max(float(np.max(np.abs(history[name]), initial=0.0)) for name in TERMS)
    worst = int(np.argmin(drops))
    if drops[worst] >= -1e-9 * scale:
        return "the dissipated energy never decreases"
    return (f"the dissipated energy decreases by {-drops[worst]:.6g} J between "
            f"{t[worst]:.9g} s and {t[worst + 1]:.9g} s (energy given back by a damper or "
            f"a link)")
