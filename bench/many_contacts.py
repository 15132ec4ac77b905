"""Many shock links on a physical model: fem's Newmark with located events, against the same
run without the links.

The model: the chain of ``_common`` (node N0 clamped, ``--dofs`` masses of 10 kg along X,
default 10,000, springs of 1e5 N/m and dampers of 50 N.s/m), every mass loaded by
F(t) = 1 cos(2 pi 5 t) N from rest, so that the masses far from the clamp swing between 0 and
2 F / (m w^2) = 0.20 mm along +X. ``--links`` shock links (default 1,000) on every
(dofs / links)-th mass, each a plane obstacle of normal +X with a contact stiffness of 1e6
N/m and no damper, gaps spread over [0.995, 1.995] x 0.2 mm in a shuffled order (the golden
ratio's sequence): the links whose gap lies below the swing of their mass (4 of them) close
and open once in the cycle (few: a located event cost much before fem made a link's columns
only once it closes, see bench/README.md). Newmark (beta 1/4, gamma 1/2) at dt = 1e-3 s, ``--steps`` steps (default
200, one cycle), events = "locate" (every contact entry and exit landed on); every 10th step
archived.

    python bench/many_contacts.py [--dofs 10000] [--links 1000] [--steps 200] [--quick] [--json]

Timed, each the best of 3 runs, the two kinds in turn (fem's scheme made as an analysis
makes it, ``fem.integrators.factory.make``, then the driver ``fem.transient.integrate`` with a
memory sink; a first short run compiles or loads the code):

- with the links: the run, and in it the events located (contact entries and exits);
- without the links: the same run on the same model with no link: the baseline.

The two runs must agree on the masses that no contact touched where no contact has acted yet
(the response before the first event, within 1e-9): a check that both integrate the same
model. Target: the run with the links at most 3x the run without. The run with links is
also measured in parts: making its step operators for dt (once), one step before the first
event (a run that stops there), and what the rest costs per located event. ``--profile`` adds
the cProfile of the run with links (the time spent in Python: event location, step operators
of the steps cut at events). fem makes the columns S^-1 L^T of a link only once it closes,
and solves the links' system on the closed ones (``fem.integrators.newmark_columns``).

``--quick``: 1,000 dofs, 100 links, 200 steps, gaps from 0.95 x 0.2 mm (5 links close);
``--json``: one JSON object on stdout
(``_common.Report``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (MASS, Report, bench_arguments, chain_mesh, engine_run,  # noqa: E402
                     engine_scheme, load_average, machine, stopwatch, table)

FORCE, FREQUENCY = 1.0, 5.0
KC = 1e6
DT, EVERY = 1e-3, 10
#: the swing of the free masses, 2 F / (m w^2)
SWING = 2 * FORCE / (MASS * (2 * math.pi * FREQUENCY) ** 2)
TARGET_RATIO = 3.0
#: runs of each kind, the best one timed
REPEAT = 3
#: agreement of the two runs before the first event (relative to the largest displacement)
AGREEMENT = 1e-9
#: the smallest gap over the swing: the links whose gap lies below the swing of their mass
#: close (4 of the 1,000 links of the full run, 5 of the 100 of the quick one)
FULL = dict(dofs=10_000, links=1000, steps=200, low=0.995)
QUICK = dict(dofs=1000, links=100, steps=200, low=0.95)


def gaps(count: int, low: float = 0.95) -> np.ndarray:
    """Gaps spread over [low, low + 1] x SWING in a shuffled order (golden-ratio sequence)."""
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    return SWING * (low + np.mod(np.arange(1, count + 1) * golden, 1.0))


def study(dofs: int, links: int, steps: int, low: float = 0.95):
    from fem.study import parse_study

    from _common import ROOT

    spacing = dofs // links
    g = gaps(links, low)
    data = {
        "study": {"title": f"chain of {dofs} dofs with {links} shock links"},
        "mesh": {"nodes": {"N0": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX"]},
        "discrete": [{"cell_groups": ["SPRINGS"], "stiffness": 1e5, "damping": 50.0},
                     {"node_groups": ["MASSES"], "mass": MASS}],
        "constraint": [{"node_groups": ["CLAMP"], "DX": 0.0}],
        "functions": {"swing": {"expression": f"{FORCE}*cos(2*pi*{FREQUENCY}*t)"}},
        "load": [{"name": "swing", "node_groups": ["MASSES"], "FX": 1.0,
                  "function": "swing"}],
        "link": [{"name": f"L{k}", "kind": "shock", "nodes": [f"N{(k + 1) * spacing}"],
                  "obstacle": "plane", "normal": [1.0, 0.0, 0.0], "gap": float(g[k]),
                  "stiffness": KC} for k in range(links)],
        "analysis": [{"name": "transient", "kind": "transient", "scheme": "newmark",
                      "end": steps * DT, "step": DT, "archive": {"every": EVERY},
                      "events": "locate", "links": [f"L{k}" for k in range(links)]}],
    }
    return parse_study(data, path=ROOT / "bench" / "many_contacts.toml")


def problem(dofs: int, links: int, steps: int, low: float = 0.95):
    """(dynamics with the links, links, dynamics without, model, spec); ``low``: the smallest
    gap over the swing."""
    import scipy.sparse as sp

    from fem.assembly import reduce
    from fem.integrators import dynamics
    from fem.links import linkset
    from fem.model import build_model

    spec_study = study(dofs, links, steps, low)
    model = build_model(spec_study, chain_mesh(dofs))
    spec = spec_study.analysis("transient").params
    system = reduce(model, spec["loads"])
    ls = linkset.build(list(spec_study.links), model)
    return (dynamics.physical(system, ls.D), ls,
            dynamics.physical(system, sp.csr_matrix((0, model.size))), model, spec)


def run(dyn, links, steps: int, events: str = "locate"):
    """(seconds, result, archived rows) of fem's Newmark over ``steps`` steps."""
    from fem.links.linkset import LinkSet
    from fem.timegrid import build_grid

    with stopwatch() as sw:
        grid = build_grid(0.0, steps * DT, step=DT, archive={"every": EVERY})
        scheme = engine_scheme(dyn, "newmark", links if links is not None else LinkSet(),
                               end=steps * DT, events=events)
    elapsed, result, rows = engine_run(scheme, grid, dyn.x0, dyn.v0)
    return sw.elapsed + elapsed, result, rows


def parts(dyn, links, first_event: float, total: float, steps: int, events: int) -> dict:
    """The run with links in parts: the step operators for dt (the factor of S; the
    columns Z = S^-1 L^T and W = L Z of a link are made when it first closes at a step of
    that size: none here), made once per step size; the steps before the first event (a run
    that stops there), per step; and what is left of the whole run, per located event (its
    landing trials at new step sizes, each factorizing its S, the columns of the closed
    links, the candidates' search, the restart)."""
    from fem.links.linkset import LinkSet

    scheme = engine_scheme(dyn, "newmark", links if links is not None else LinkSet(),
                           end=steps * DT, events="locate")
    with stopwatch() as sw:
        scheme.step_operators(DT)
    ops = sw.elapsed
    quiet = int(first_event / DT) - 1 if math.isfinite(first_event) else steps
    elapsed, _, _ = run(dyn, links, quiet)
    per_step = max(elapsed - ops, 0.0) / quiet
    rest = total - ops - per_step * steps
    return {"step_operators_s": ops, "steps_before_first_event": quiet,
            "per_step_s": per_step, "per_event_s": rest / events if events else math.nan}


def profile_text(dyn, links, steps: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    run(dyn, links, steps)
    prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(18)
    stats.sort_stats("cumulative").print_stats("fem", 25)
    return text.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dofs", type=int, default=None, help="default 1e4 (quick: 1e3)")
    ap.add_argument("--links", type=int, default=None, help="default 1000 (quick: 100)")
    ap.add_argument("--steps", type=int, default=None, help="default 200")
    ap.add_argument("--profile", action="store_true",
                    help="the cProfile of the run with links, and its parts timed apart")
    bench_arguments(ap, "1,000 dofs, 100 links")
    args = ap.parse_args(argv)
    size = dict(QUICK if args.quick else FULL)
    dofs, nlinks = args.dofs or size["dofs"], args.links or size["links"]
    steps = args.steps or size["steps"]
    report = Report("many_contacts", args)
    print(f"Newmark with located events: chain of {dofs:,} dofs, {nlinks:,} shock links, "
          f"{steps:,} steps of {DT:g} s")
    print(f"{machine()}; {load_average()}")
    with stopwatch() as sw:
        dyn, links, free, model, spec = problem(dofs, nlinks, steps, size["low"])
    print(f"set-up (model, links): {sw.elapsed:.2f} s")
    with stopwatch() as sw:
        # a small chain whose links all close: every compiled function of the run, events
        # included, is compiled or loaded here
        small, small_links, small_free, _, _ = problem(40, 4, 150, low=0.2)
        run(small_free, None, 150)
        _, warm, _ = run(small, small_links, 150)
        assert warm.events, "the warm-up run has no event"
    print(f"first calls (compile or cache load, on a chain of 40 dofs with 4 links and "
          f"{len(warm.events)} events): {sw.elapsed:.2f} s")

    # each run the best of REPEAT (one for --quick), the two kinds in turn (the machine's
    # speed drifts over seconds: both see the same)
    repeat = 1 if args.quick else REPEAT
    base_t = fem_t = math.inf
    for _ in range(repeat):
        t, _, base_rows = run(free, None, steps)
        base_t = min(base_t, t)
        t, result, rows = run(dyn, links, steps)
        fem_t = min(fem_t, t)
    print(f"without links: {base_t:.3f} s", flush=True)
    events = [e for e in result.events if e[1] in ("impact", "separation")]
    print(f"with {nlinks} links: {fem_t:.3f} s, {len(events)} events located", flush=True)

    # before the first event both runs integrate the same equations
    first = min((e[0] for e in events), default=math.inf)
    before = rows["time"] < first - 0.5 * DT
    same = (np.max(np.abs(rows["x"][before] - base_rows["x"][before]))
            / max(np.max(np.abs(base_rows["x"])), 1e-300)) if before.any() else 0.0
    status = 0 if report.check("displacements before the first event, with and without links",
                               same, AGREEMENT) else 1
    closed = int(np.sum(rows["contacts"][-1][:, 0] > 0.5)) if len(rows) else 0

    report.figure(f"Newmark, {dofs:,} dofs, {nlinks:,} links, events located, {steps} steps",
                  fem_t, "s", baseline=base_t, baseline_name="same run without links",
                  target=("ratio", "<=", TARGET_RATIO))
    report.details.update(events=len(events), steps=result.steps, first_event_s=first,
                          closed_at_end=closed)
    split = parts(dyn, links, first, fem_t, steps, len(events))
    report.details.update(split)
    report.figure("one step with the links, no event (the loop's time per step)",
                  split["per_step_s"], "s", baseline=base_t / steps,
                  baseline_name="one step without links")
    report.figure("step operators for one step size (the factor of S, no link closed)",
                  split["step_operators_s"], "s", baseline=base_t,
                  baseline_name="the whole run without links")
    if events:
        report.figure("one located event (what the run spends beyond its steps and the "
                      "step operators for dt, per event)", split["per_event_s"], "s",
                      signed=True)
    print("\nTimes (s); ratio = time / the run without links")
    print(table(["run", "steps taken", "events located", "time", "ratio"],
                [["without links", f"{steps:,}", "-", f"{base_t:.3f}", "1.00"],
                 [f"{nlinks:,} links, events located", f"{result.steps:,}", f"{len(events):,}",
                  f"{fem_t:.3f}", f"{fem_t / base_t:.1f}"]]))
    print(f"\nthe run with links in parts: step operators for dt {split['step_operators_s']:.3f}"
          f" s (once); {split['per_step_s'] * 1e3:.2f} ms per step ({steps} steps, measured on "
          f"the {split['steps_before_first_event']} steps before the first event; "
          f"{base_t / steps * 1e3:.3f} ms without links); "
          f"{split['per_event_s']:.3f} s per located event ({len(events)})")
    met = fem_t / base_t <= TARGET_RATIO
    print(f"target: at most {TARGET_RATIO:g}x the run without links: "
          f"{'met' if met else 'MISSED'} ({fem_t / base_t:.1f}x)")
    if args.profile:
        print("\ncProfile of the run with links")
        print(profile_text(dyn, links, steps).rstrip())
    return report.finish(status)


if __name__ == "__main__":
    sys.exit(main())
