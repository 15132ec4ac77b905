"""Elasto-plastic links on a long chain under a ground acceleration: fem's Newmark with 1,000
plastic links (kind = "plastic") against the same chain with linear springs in their place.

The model: a chain of ``--dofs`` masses (default 10,000) of 10 kg along X, node N0 clamped,
each cell a spring k and a damper c = 1e-4 k; k = m (4 n f1)^2 puts the chain's first mode
near f1 = 1 Hz (a shear beam of 100 t cut into 10,000 slices), and the dampers damp the modes
the step does not resolve (3e-4 of critical at 1 Hz, 1.6 % at 50 Hz). Every tenth cell
(S0, S10, S20, ...) has a link in parallel with its spring: elastic stiffness k, elastic limit
F_y = 1.5 m/s^2 x the chain's mass, 5 % hardening beyond, kinematic. The chain is shaken by
a base acceleration load along X (the chain's motion relative to the ground):
a(t) = 1.7 min(t / 0.3, 1) (sin(2 pi t) + 0.6 sin(2 pi 2.3 t + 1) + 0.3 sin(2 pi 4.1 t + 2))
m/s^2, a table every 10 ms (peak 2.3 m/s^2 in the first 2 s), near the chain's first mode:
its response grows cycle after cycle, the first links yield at 0.92 s and about 70 % of them
by 2 s. Newmark (beta 1/4, gamma 1/2), dt = 1e-3 s,
``--steps`` steps (default 2000), events = "step" (the default of the Newmark family: a plastic
link has no events), every 10th step archived.

    python bench/hysteresis.py [--dofs 10000] [--every 10] [--steps 2000] [--no-opensees]
                               [--quick] [--json]

Timed (fem's scheme made as an analysis makes it, ``fem.integrators.factory.make``, then the
driver ``fem.transient.integrate`` with a memory sink; a first short run compiles or loads the
code), three runs of the same chain:

- **linear springs**, the baseline: no link, the 1,000 links replaced by linear springs of
  their elastic stiffness (a second [[discrete]] stiffness on the same cells), so that the
  model is the chain the plastic links make while they stay elastic;
- **plastic links, elastic**: the same plastic links with an elastic limit 1000x higher, never
  reached: what the link machinery costs (the links' columns S^-1 L^T, their Newton system,
  the energy terms) without a yield;
- **plastic links, yielding**: the model above. Its ratio to the elastic links isolates the
  plastic law's own cost (the return mapping, the hardening tangent, more Newton iterations).

Target: the yielding run at most 2x the linear one. Checks that the runs compute the same
thing: the elastic plastic links give the linear springs' displacements (within 1e-8 of the
largest), the yielding run gives them too before the first yield, at least a quarter of the
links yield, and the yielding run's energy balance closes (within 1e-3 of the external work).

With OpenSeesPy (``import openseespy.opensees``) and without ``--no-opensees`` or ``--quick``,
a 100-dof chain with the same parameters and 10 links is also run in OpenSees (zeroLength
elements: an Elastic material with damping for each spring and damper, in Parallel with a
Steel01 (F_y, k, b = 0.05: bilinear, kinematic hardening) on the linked cells;
UniformExcitation with the record; Newmark 1/2, 1/4, Newton, NormDispIncr 1e-10) and in fem,
and the ratio of their times is reported (OpenSees in a child process, its ``analyze`` timed).

``--quick``: 500 dofs, 50 links, 1,200 steps; ``--json``: one JSON object on stdout
(``_common.Report``).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (ROOT, Report, bench_arguments, chain_mesh, engine_run,  # noqa: E402
                     engine_scheme, load_average, machine, opensees_analyze, opensees_chain,
                     opensees_child, stopwatch, table)

MASS = 10.0                 # kg, each mass
FREQUENCY = 1.0             # Hz, about the chain's first mode
DAMPING_RATIO = 1e-4        # s, c = DAMPING_RATIO * k
YIELD = 1.5                 # m/s^2: the elastic limit is YIELD x the chain's mass
HARDENING = 0.05            # the hardening slope over the elastic one
NEVER = 1000.0              # the elastic limit of the links that stay elastic, times F_y
DT, EVERY = 1e-3, 10
PEAK = 1.7                  # m/s^2, the record's amplitude (its peak: 2.3 m/s^2)
TARGET_RATIO = 2.0
#: runs of the linear baseline, the best one timed (the plastic runs are timed once)
REPEAT = 3
AGREEMENT = 1e-8
FULL = dict(dofs=10_000, every=10, steps=2000)
QUICK = dict(dofs=500, every=10, steps=1200)
OPENSEES = dict(dofs=100, every=10)


def stiffness(dofs: int) -> float:
    """k = m (4 n f1)^2: the first mode of the chain near f1 (its limit as n grows)."""
    return MASS * (4.0 * dofs * FREQUENCY) ** 2


def elastic_limit(dofs: int) -> float:
    return YIELD * MASS * dofs


def record(end: float) -> np.ndarray:
    """The ground acceleration (rows t, a) every 10 ms from 0 to ``end`` (at least 1 s)."""
    t = np.round(np.arange(int(math.ceil(max(end, 1.0) / 0.01)) + 1) * 0.01, 10)
    a = PEAK * np.minimum(t / 0.3, 1.0) * (np.sin(2 * np.pi * t)
                                           + 0.6 * np.sin(2 * np.pi * 2.3 * t + 1.0)
                                           + 0.3 * np.sin(2 * np.pi * 4.1 * t + 2.0))
    return np.column_stack([t, a])


def study(dofs: int, every: int, steps: int, case: str):
    """The chain's study (groups only: CLAMP, MASSES, SPRINGS, LINKED; the mesh is
    ``chain_mesh``), ``case`` "linear", "elastic" or "plastic"."""
    from fem.study import parse_study

    k = stiffness(dofs)
    discrete = [{"cell_groups": ["SPRINGS"], "stiffness": k, "damping": DAMPING_RATIO * k},
                {"node_groups": ["MASSES"], "mass": MASS}]
    links = []
    if case == "linear":
        discrete.append({"cell_groups": ["LINKED"], "stiffness": k})
    else:
        fy = elastic_limit(dofs) * (NEVER if case == "elastic" else 1.0)
        dy = fy / k
        curve = [[dy, fy], [10.0 * dy, fy + HARDENING * k * 9.0 * dy]]
        links = [{"name": f"P{i}", "kind": "plastic", "nodes": [f"N{i + 1}", f"N{i}"],
                  "direction": [1.0, 0.0, 0.0], "curve": curve, "hardening": "kinematic"}
                 for i in range(0, dofs, every)]
    data = {
        "study": {"title": f"chain of {dofs} dofs, {case} links"},
        "mesh": {"nodes": {"N0": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX"]},
        "discrete": discrete,
        "constraint": [{"node_groups": ["CLAMP"], "DX": 0.0}],
        "functions": {"ground": {"table": record(steps * DT).tolist(), "right": "constant"}},
        "load": [{"name": "ground", "kind": "base_acceleration", "direction": [1.0, 0.0, 0.0],
                  "function": "ground"}],
        "analysis": [{"name": "transient", "kind": "transient", "scheme": "newmark",
                      "end": steps * DT, "step": DT, "archive": {"every": EVERY},
                      "links": [link["name"] for link in links]}],
    }
    if links:
        data["link"] = links
    return parse_study(data, path=ROOT / "bench" / "hysteresis.toml")


def problem(dofs: int, every: int, steps: int, case: str):
    """(dynamics, links) of a case: the model built from the chain's arrays."""
    import scipy.sparse as sp

    from fem.assembly import reduce
    from fem.integrators import dynamics
    from fem.links import linkset
    from fem.model import build_model

    spec_study = study(dofs, every, steps, case)
    mesh = chain_mesh(dofs, {"LINKED": np.arange(0, dofs, every)})
    model = build_model(spec_study, mesh)
    spec = spec_study.analysis("transient").params
    system = reduce(model, spec["loads"])
    links = linkset.build(list(spec_study.links), model)
    D = links.D if links else sp.csr_matrix((0, model.size))
    return dynamics.physical(system, D), links


def run(dyn, links, steps: int):
    """(seconds, result, archived rows) of fem's Newmark over ``steps`` steps."""
    from fem.links.linkset import LinkSet
    from fem.timegrid import build_grid

    with stopwatch() as sw:
        grid = build_grid(0.0, steps * DT, step=DT, archive={"every": EVERY})
        scheme = engine_scheme(dyn, "newmark", links if links else LinkSet(),
                               end=steps * DT, events="step")
    elapsed, result, rows = engine_run(scheme, grid, dyn.x0, dyn.v0)
    assert result.steps == steps
    run.newton = newton_counts(scheme)
    return sw.elapsed + elapsed, result, rows


def newton_counts(scheme) -> str:
    """The whole-system Newton iteration's figures of a run (``newmark_tangent``), or ''."""
    size = scheme._ops_cache.get(DT) if hasattr(scheme, "_ops_cache") else None
    tangent = getattr(size, "tangent", None)
    if tangent is None or not tangent.counts[0]:
        return ""
    steps, iterations, factors = (int(v) for v in tangent.counts)
    return (f"; whole-system Newton: {iterations / steps:.2f} evaluations of the laws per "
            f"step, J factorized at {factors / steps:.0%} of the steps")


def link_series(links, rows, what: str) -> np.ndarray:
    """(archived rows, links): the series ``what`` of every link (``cumulative_plastic``,
    ``dissipated``, ...)."""
    series = links.series(rows["contacts"])
    return np.column_stack([series[f"links/{name}/{what}"] for name in links.names])


def cumulative_plastic(links, rows) -> np.ndarray:
    return link_series(links, rows, "cumulative_plastic")


def relative(x, y) -> float:
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300)) if len(y) else 0.0


# ------------------------------------------------------------------------------------------
# OpenSeesPy (a child process: see bench/newmark.py on OpenSees in one long process)
def opensees_available() -> bool:
    try:
        return importlib.util.find_spec("openseespy") is not None
    except (ImportError, ValueError):
        return False


def opensees_worker(dofs: int, every: int, steps: int):
    """The chain in OpenSees: zeroLength elements, Steel01 on the linked cells; prints one
    JSON line (times, final displacement of the last mass relative to the ground)."""
    import openseespy.opensees as ops

    k = stiffness(dofs)
    fy = elastic_limit(dofs)
    acc = record(steps * DT)
    with stopwatch() as t_build:
        opensees_chain(ops, dofs, MASS)
        ops.uniaxialMaterial("Elastic", 1, k, DAMPING_RATIO * k)     # spring and dashpot
        ops.uniaxialMaterial("Steel01", 2, fy, k, HARDENING)         # bilinear, kinematic
        ops.uniaxialMaterial("Parallel", 3, 1, 2)
        for i in range(dofs):
            ops.element("zeroLength", i + 1, i, i + 1, "-mat", 3 if i % every == 0 else 1,
                        "-dir", 1)
        ops.timeSeries("Path", 1, "-dt", 0.01, "-values", *acc[:, 1].tolist())
        ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
        ops.constraints("Plain")
        ops.numberer("RCM")
        ops.system("BandGeneral")
        ops.test("NormDispIncr", 1e-10, 50)
        ops.algorithm("Newton")
        ops.integrator("Newmark", 0.5, 0.25)
        ops.analysis("Transient")
    opensees_analyze(ops, steps, DT, dofs, t_build.elapsed)


def opensees_run(dofs: int, every: int, steps: int) -> dict:
    return opensees_child(__file__, [dofs, "--every", every, "--steps", steps])


def versus_opensees(report, steps: int, rows: list) -> bool:
    """The 100-dof chain in fem and in OpenSees; a row of the table, a figure and a check."""
    dofs, every = OPENSEES["dofs"], OPENSEES["every"]
    dyn, links = problem(dofs, every, steps, "plastic")
    run(dyn, links, 10)
    fem_t, _, fem_rows = run(dyn, links, steps)
    ops = opensees_run(dofs, every, steps)
    u_fem = float(fem_rows["x"][-1, -1])
    scale = float(np.max(np.abs(fem_rows["x"][:, -1])))
    agree = report.check(f"{dofs} dofs: final displacement of the last mass, fem against "
                         f"OpenSees (relative to its peak)", abs(u_fem - ops["u"]) / scale,
                         1e-3)
    report.figure(f"Newmark, {dofs} dofs, {len(links.names)} plastic links, {steps} steps, "
                  f"against OpenSees", fem_t, "s", baseline=ops["time"],
                  baseline_name="OpenSeesPy analyze (Steel01)")
    rows.append([f"OpenSeesPy, {dofs} dofs, {len(links.names)} Steel01", f"{steps:,}",
                 f"{ops['time']:.3f}", f"{ops['time'] / steps * 1e6:,.0f}", "-"])
    rows.append([f"fem, the same {dofs} dofs (ratio: fem / OpenSees)", f"{steps:,}",
                 f"{fem_t:.3f}", f"{fem_t / steps * 1e6:,.0f}", f"{fem_t / ops['time']:.2f}"])
    print(f"OpenSees, {dofs} dofs: {ops['time']:.3f} s (fem {fem_t:.3f} s); final "
          f"displacement {ops['u']:.6e} m (fem {u_fem:.6e} m)", flush=True)
    return agree


# ------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dofs", type=int, default=None, help="default 1e4 (quick: 500)")
    ap.add_argument("--every", type=int, default=None,
                    help="a link on every EVERY-th cell (default 10)")
    ap.add_argument("--steps", type=int, default=None, help="default 2000 (quick: 1200)")
    ap.add_argument("--no-opensees", action="store_true", help="skip the OpenSeesPy run")
    ap.add_argument("--opensees-worker", type=int, metavar="N", help=argparse.SUPPRESS)
    bench_arguments(ap, "1,000 dofs, 100 links, 500 steps, no OpenSeesPy")
    args = ap.parse_args(argv)
    size = dict(QUICK if args.quick else FULL)
    dofs, every = args.dofs or size["dofs"], args.every or size["every"]
    steps = args.steps or size["steps"]
    if args.opensees_worker is not None:
        opensees_worker(args.opensees_worker, every, steps)
        return 0
    report = Report("hysteresis", args)
    nlinks = len(range(0, dofs, every))
    print(f"Plastic links: chain of {dofs:,} dofs, {nlinks:,} plastic links (every {every}th "
          f"cell), base acceleration, Newmark, {steps:,} steps of {DT:g} s")
    print(f"{machine()}; {load_average()}")
    use_ops = not args.no_opensees and not args.quick and opensees_available()
    if not args.no_opensees and not args.quick and not use_ops:
        print("OpenSeesPy is not installed: the OpenSees comparison (100 dofs, zeroLength, "
              "Steel01) is skipped")

    with stopwatch() as sw:
        # every compiled function the runs use, compiled or loaded on a small chain whose
        # links yield
        small, small_links = problem(40, 10, 1200, "plastic")
        _, _, warm = run(small, small_links, 1200)
        assert cumulative_plastic(small_links, warm)[-1].max() > 0, "no yield in the warm-up"
        run(*problem(40, 10, 20, "linear"), 20)
    print(f"first calls (compile or cache load, on a chain of 40 dofs): {sw.elapsed:.2f} s",
          flush=True)

    times, results = {}, {}
    for case in ("linear", "elastic", "plastic"):
        with stopwatch() as sw:
            dyn, links = problem(dofs, every, steps, case)
        best = math.inf
        for _ in range(REPEAT if case == "linear" and not args.quick else 1):
            elapsed, result, rows = run(dyn, links, steps)
            best = min(best, elapsed)
        times[case], results[case] = best, (links, rows)
        print(f"{case}: set-up {sw.elapsed:.2f} s, run {best:.3f} s "
              f"({best / steps * 1e6:,.0f} us per step){run.newton}", flush=True)

    base = results["linear"][1]
    links, elastic = results["elastic"]
    _, plastic = results["plastic"]
    ok = report.check("plastic links that stay elastic against linear springs: archived "
                      "displacements (relative to the largest)",
                      relative(elastic["x"], base["x"]), AGREEMENT)
    assert np.all(cumulative_plastic(links, elastic) == 0.0)
    cum = cumulative_plastic(links, plastic)
    yielded = int(np.count_nonzero(cum[-1] > 0.0))
    moving = np.flatnonzero(np.any(cum > 0.0, axis=1))
    first = plastic["time"][moving[0]] if len(moving) else math.inf
    before = plastic["time"] < first - 0.5 * DT * EVERY
    ok &= report.check("yielding links before the first yield against linear springs",
                       relative(plastic["x"][before], base["x"][before]), AGREEMENT)
    ok &= report.check(f"links that yield ({yielded} of {nlinks}): at least a quarter",
                       yielded, nlinks / 4, ok=yielded >= nlinks / 4)
    kinetic, potential, stored, dissipated, work = plastic["energy"].T
    balance = np.max(np.abs(kinetic + potential + stored + dissipated - work)) / \
        max(np.max(np.abs(work)), 1e-300)
    ok &= report.check("energy balance of the yielding run (relative to the external work)",
                       balance, 1e-3)
    plastic_work = float(link_series(links, plastic, "dissipated")[-1].sum())
    report.details.update(links=nlinks, yielded=yielded, first_yield_s=first,
                          plastic_work_J=plastic_work,
                          dissipated_J=float(dissipated[-1]), external_work_J=float(work[-1]),
                          top_displacement_m=float(np.max(np.abs(plastic["x"][:, -1]))))

    report.figure(f"Newmark, {dofs:,} dofs, {nlinks:,} plastic links ({yielded} yield), "
                  f"{steps:,} steps", times["plastic"], "s", baseline=times["linear"],
                  baseline_name="linear springs in their place",
                  target=("ratio", "<=", TARGET_RATIO))
    report.figure("the same plastic links, yield never reached", times["elastic"], "s",
                  baseline=times["linear"], baseline_name="linear springs in their place")
    report.figure("the plastic law alone: yielding links against links that stay elastic",
                  times["plastic"], "s", baseline=times["elastic"],
                  baseline_name="plastic links, yield never reached")
    rows = [["linear springs (baseline)", f"{steps:,}", f"{times['linear']:.3f}",
             f"{times['linear'] / steps * 1e6:,.0f}", "1.00"],
            ["plastic links, yield never reached", f"{steps:,}", f"{times['elastic']:.3f}",
             f"{times['elastic'] / steps * 1e6:,.0f}",
             f"{times['elastic'] / times['linear']:.2f}"],
            [f"plastic links, {yielded} of {nlinks} yield", f"{steps:,}",
             f"{times['plastic']:.3f}", f"{times['plastic'] / steps * 1e6:,.0f}",
             f"{times['plastic'] / times['linear']:.2f}"]]
    if use_ops:
        ok &= versus_opensees(report, steps, rows)
    print(f"\n{dofs:,} dofs, {nlinks:,} links; ratio = wall time / the linear springs' "
          f"(OpenSees rows: fem / OpenSees)")
    print(table(["case", "steps", "wall s", "per step us", "ratio"], rows))
    print(f"first yield at {first:.3f} s; {yielded} of {nlinks} links yield; plastic work "
          f"{plastic_work:.4g} J of {work[-1]:.4g} J put in by the ground")
    ratio = times["plastic"] / times["linear"]
    print(f"target: the yielding run at most {TARGET_RATIO:g}x the linear one: "
          f"{'met' if ratio <= TARGET_RATIO else 'MISSED'} ({ratio:.1f}x)")
    if not ok:
        print("\nRESULTS DISAGREE: the timings above compare different computations")
    return report.finish(0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
