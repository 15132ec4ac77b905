"""The impact oscillator V2 (studies/v2_impact_oscillator.toml) on a modal basis: fem's
compiled central-difference loop with a shock link against the same loop in plain Python,
scipy's DOP853 chained on the contact events, and fem's exact and adaptive2 runs.

V2: one node of 156 kg on 2e6 N/m, F(t) = 3000 sin(2 pi 5 t) N, an obstacle 1e-3 m away along
+X with a contact stiffness of 1e10 N/m, no damping, from rest over [0, 4] s: 70 contacts,
140 entry and exit times. The 20-mode case is a chain of 20 masses of 7.8 kg (N0 clamped,
springs of 4e7 N/m, so that the tip sees 2e6 N/m), the force and the obstacle on the tip.

    python bench/impact.py [--python-steps 20000] [--repeats 3] [--ratio-repeats 10]
                           [--quick] [--json]
    python bench/impact.py --exact-only         # only the exact analysis against DOP853

``--quick``: 2,000 Python steps, one repeat, the 1-mode case alone, 3 runs for the ratio;
``--json``: one JSON object on stdout (``_common.Report``).

Rows:
- fem modal CD, loop: the compiled step loop alone (the engine's central differences,
  ``events = "step"``, advanced over the 1e6 steps of dt = 4e-6 s in one chunk, loads
  sampled beforehand, every 25th step archived), best of the repeats after a warm-up call
  (compilation or cache load);
- fem modal CD, analysis: ``fem.runner.run_study`` on a study holding the modes and the
  analysis, the analysis' own wall time (driver, loads, archiving to the results file) and,
  in brackets, the whole run (modes, model, file, checks);
- Python CD loop: the same step loop written in Python with numpy vectors, over
  ``--python-steps`` steps and extrapolated to 1e6; its state after those steps must agree
  with fem's loop run over as many steps (status 1 otherwise);
- scipy DOP853: ``solve_ivp`` in phases (free, in contact) chained on terminal events, at
  rtol 1e-12 (its event times agree with the closed-form ones of the study to ~1e-12 s): the
  reference of the event-time errors;
- fem exact / fem modal adaptive2: the study's analyses run by ``run_study`` on a copy of the
  study restricted to them: the analysis' wall time, best of the repeats after a first run,
  and in brackets that first run in the process (it includes loading the compiled code from
  numba's disk cache, or compiling it).

The ratio: fem's exact analysis (its wall time, as above: the driver from the initial state,
the phases and their closed forms, every piece, the events, the archive and the writing to the
results file) against scipy's DOP853 chained on the events at rtol 1e-10 (``scipy_events``),
the two run in turn ``--ratio-repeats`` times after a warm-up of each, best of each; target:
exact at least RATIO_TARGET times faster.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (ROOT, Report, bench_arguments, engine_scheme, load_average,  # noqa: E402
                     machine, table)

STUDY = ROOT / "studies" / "v2_impact_oscillator.toml"
MASS, STIFFNESS, FORCE, FREQUENCY = 156.0, 2e6, 3000.0, 5.0
GAP, KN = 1e-3, 1e10
END, DT, EVERY = 4.0, 4e-6, 25
#: target: 1e6 steps with one shock link and up to 20 modes in under this time (s)
TARGET_S = 0.1
#: largest relative difference between fem's loop and the Python loop after the same steps:
#: the sums run in another order, and the contact amplifies round-off (p = r . q - gap is a
#: small difference of two larger numbers, times a stiffness of 1e10 N/m)
AGREEMENT = 1e-7
#: the exact analysis of V2 must be at least this many times faster than DOP853 at rtol 1e-10
RATIO_TARGET = 8.0
RATIO_RTOL = 1e-10


# ------------------------------------------------------------------------------------------
# studies
def study_blocks(text: str) -> list[str]:
    """The study text cut into its top-level blocks (each starts at a ``[`` line)."""
    blocks, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("[") and current:
            blocks.append("".join(current))
            current = []
        current.append(line)
    if current:
        blocks.append("".join(current))
    return blocks


def restricted_study(analyses: set[str], directory: Path) -> Path:
    """A copy of V2 with only the named analyses (and the modes they need) and their checks."""
    kept = []
    for block in study_blocks(STUDY.read_text()):
        header = block.lstrip().split("\n", 1)[0].strip()
        if header in ("[[analysis]]", "[[check]]"):
            data = tomllib.loads(block.split("\n", 1)[1])
            name = data.get("name") if header == "[[analysis]]" else data.get("analysis")
            if name not in analyses:
                continue
        kept.append(block)
    path = directory / ("v2_" + "_".join(sorted(analyses)) + ".toml")
    path.write_text("".join(kept))
    return path


def chain_study_text(n: int) -> str:
    """The 20-mode case: n masses in a chain, the force and the obstacle on the tip."""
    nodes = "\n".join(f"N{i} = [{i}.0, 0.0, 0.0]" for i in range(n + 1))
    cells = "\n".join(f'S{i} = {{ type = "SEG2", nodes = ["N{i}", "N{i + 1}"] }}'
                      for i in range(n))
    masses = ", ".join(f'"N{i}"' for i in range(1, n + 1))
    springs = ", ".join(f'"S{i}"' for i in range(n))
    return f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[mesh.node_groups]
MASSES = [{masses}]
[mesh.cell_groups]
SPRINGS = [{springs}]
[model]
components = ["DX"]
[[discrete]]
cell_groups = ["SPRINGS"]
stiffness = {STIFFNESS * n}
[[discrete]]
node_groups = ["MASSES"]
mass = {MASS / n}
[[constraint]]
nodes = ["N0"]
DX = 0.0
[functions.excitation]
expression = "3000*sin(2*pi*5*t)"
[[load]]
name = "sine"
nodes = ["N{n}"]
FX = 1.0
function = "excitation"
[[link]]
name = "stop"
kind = "shock"
nodes = ["N{n}"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = {GAP}
stiffness = {KN}
[[analysis]]
name = "modes"
kind = "modes"
count = {n}
[[analysis]]
name = "modal_cd"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "central_difference"
end = {END}
step = {DT}
archive = {{ every = {EVERY} }}
links = ["stop"]
"""


def run_file(path: Path, name: str):
    """run_study on ``path``: (analysis wall time, whole run time, event times, steps)."""
    import h5py

    from fem.runner import run_study

    out = path.with_suffix(".h5")
    start = time.perf_counter()
    report = run_study(path, out)
    whole = time.perf_counter() - start
    if report.failed_analysis:
        raise RuntimeError(f"{path.name}: {report.message}")
    with h5py.File(out, "r") as f:
        g = f["analyses"][name]
        events = g["events"]["time"][:] if "events" in g else np.zeros(0)
        return float(g.attrs["wall_time_s"]), whole, events, int(g.attrs.get("steps", 0))


def first_and_best(path: Path, name: str, repeats: int):
    """run_file on ``path`` once, then ``repeats`` times: (first run's analysis wall time,
    best wall time of the repeats, events and steps of the last run)."""
    first, _, events, steps = run_file(path, name)
    best = first
    for _ in range(repeats):
        wall, _, events, steps = run_file(path, name)
        best = min(best, wall)
    return first, best, events, steps


# ------------------------------------------------------------------------------------------
# fem's loop alone, and the same loop in Python
def modal_problem(text: str, directory: Path):
    """(dynamics, links, grid, W) of the modal_cd analysis of a study text."""
    from fem.assembly import reduce
    from fem.integrators import dynamics
    from fem.links import linkset
    from fem.modal.basis import build_basis
    from fem.modal.modes import real_modes
    from fem.runner import prepare
    from fem.timegrid import build_grid

    path = directory / "problem.toml"
    path.write_text(text)
    study, model = prepare(path)
    spec = study.analysis("modal_cd").params
    system = reduce(model, spec["loads"])
    count = study.analysis("modes").params.get("count")
    modes = real_modes(system.mass, system.stiffness, count=count)
    basis = build_basis(modes, system, model=model)
    links = linkset.build(list(study.links), model)
    dyn = dynamics.modal(basis, links.D)
    grid = build_grid(spec["start"], spec["end"], step=spec["step"], archive=spec["archive"])
    W = np.ascontiguousarray(dyn.load_values(grid.times))
    return dyn, links, grid, W


def fem_loop(dyn, links, grid, W, steps=None):
    """One run of the compiled loop over ``steps`` steps (all by default), in one chunk:
    (seconds, final generalized state (q, q'), event times)."""
    from fem.integrators.base import Chunk
    from fem.integrators.kernels import make_outputs
    from fem.laws.columns import NA

    k = grid.steps if steps is None else steps
    scheme = engine_scheme(dyn, "central_difference", links, events="step")
    scheme.start(float(grid.times[0]), dyn.x0, dyn.v0, W[0])
    mask = grid.archive[:k + 1].copy()
    mask[0] = False
    out = make_outputs(int(mask.sum()) + 2, scheme.n, scheme.P.shape[0], NA)
    chunk = Chunk(grid.times[:k + 1], W[:k + 1], mask, DT, None)
    start = time.perf_counter()
    scheme.begin(chunk)
    scheme.advance(out, 0)
    elapsed = time.perf_counter() - start
    c = scheme.cur
    events = scheme.log.time[:int(scheme.log.count[0])].copy()
    return elapsed, np.concatenate([scheme.buf.X[c], scheme.buf.V[c]]), events


def python_loop(dyn, links, W, steps):
    """Central differences with the contact (undamped, diagonal modal damping) written as a
    Python loop on numpy vectors: (seconds, final (q, q'))."""
    from fem.laws.columns import DIR, GAP
    from fem.laws.shock_columns import KN

    kk = dyn.stiffness.diagonal()
    cd = dyn.damping.diagonal()
    B = np.asarray(dyn.B)
    r = links.P[0, DIR:DIR + 3] @ dyn.L[:3].toarray()
    gap, kn = links.P[0, GAP], links.P[0, KN]
    s = 1.0 / (1.0 + 0.5 * DT * cd)
    rs = r * s
    q, v = dyn.x0.copy(), dyn.v0.copy()
    p = r @ q - gap
    a = B @ W[0] - cd * v - kk * q - (kn * p * r if p > 0 else 0.0)
    start = time.perf_counter()
    for n in range(1, steps + 1):
        f = B @ W[n]
        q = q + DT * v + 0.5 * DT * DT * a
        vt = v + 0.5 * DT * a
        a = (f - kk * q - cd * vt) * s
        p = r @ q - gap
        if p > 0.0:
            a = a - kn * p * rs
        v = vt + 0.5 * DT * a
    return time.perf_counter() - start, np.concatenate([q, v])


# ------------------------------------------------------------------------------------------
# the reference: scipy DOP853 in phases
def scipy_events(rtol=1e-12):
    """Entry and exit times of V2 from solve_ivp (DOP853) chained on terminal events:
    (seconds, times)."""
    from scipy.integrate import solve_ivp

    w = 2 * np.pi * FREQUENCY

    def rhs(t, y, contact):
        force = FORCE * np.sin(w * t) - STIFFNESS * y[0]
        if contact:
            force -= KN * (y[0] - GAP)
        return [y[1], force / MASS]

    def crossing(t, y, contact):
        return y[0] - GAP

    crossing.terminal = True
    start = time.perf_counter()
    t, y, contact, times = 0.0, np.zeros(2), False, []
    while t < END:
        crossing.direction = -1.0 if contact else 1.0
        sol = solve_ivp(rhs, (t, END), y, method="DOP853", rtol=rtol, atol=1e-16,
                        events=crossing, args=(contact,))
        if sol.status != 1:
            break
        t = float(sol.t_events[0][0])
        y = sol.y_events[0][0].copy()
        contact = not contact
        times.append(t)
    return time.perf_counter() - start, np.array(times)


def exact_against_dop853(path: Path, repeats: int):
    """The exact analysis of ``path`` and DOP853 at RATIO_RTOL in turn, ``repeats`` times
    after one warm-up run of each: (best analysis wall time, best DOP853 time, their event
    times)."""
    run_file(path, "exact")
    scipy_events(RATIO_RTOL)
    best_exact = best_dop = math.inf
    events = dop_events = None
    for _ in range(repeats):
        wall, _, events, _ = run_file(path, "exact")
        best_exact = min(best_exact, wall)
        elapsed, dop_events = scipy_events(RATIO_RTOL)
        best_dop = min(best_dop, elapsed)
    return best_exact, best_dop, events, dop_events


def ratio_report(exact_time, dop_time, exact_events, dop_events, reference) -> tuple[str, bool]:
    """The lines of the ratio against DOP853 and whether the target is met."""
    ratio = dop_time / exact_time
    met = ratio >= RATIO_TARGET and len(exact_events) == len(reference)
    lines = [
        f"fem exact (analysis, best): {exact_time * 1e3:.1f} ms, {len(exact_events)} events, "
        f"max |t - t_ref| {event_error(exact_events, reference)} s",
        f"scipy DOP853 rtol {RATIO_RTOL:g} (best): {dop_time * 1e3:.1f} ms, {len(dop_events)} "
        f"events, max |t - t_ref| {event_error(dop_events, reference)} s",
        f"ratio DOP853 / exact: {ratio:.1f} (target {RATIO_TARGET:g}x: "
        f"{'met' if met else 'NOT met'})"]
    return "\n".join(lines), met


def event_error(times, reference) -> str:
    if len(times) != len(reference):
        return f"{len(times)} events!"
    return f"{np.max(np.abs(np.asarray(times) - reference)):.2e}"


def _max_error(times, reference) -> float:
    if len(times) != len(reference):
        return float("inf")
    return float(np.max(np.abs(np.asarray(times) - reference)))


def study_references() -> dict[int, float]:
    """The event times given as references by the checks of the exact analysis."""
    refs = {}
    for block in study_blocks(STUDY.read_text()):
        if block.startswith("[[check]]"):
            data = tomllib.loads(block.split("\n", 1)[1])
            if data.get("analysis") == "exact" and data.get("quantity") == "event_time":
                refs[int(data["event"])] = float(data["reference"])
    return refs


# ------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python-steps", type=int, default=None, help="default 20000 (quick: 2000)")
    ap.add_argument("--repeats", type=int, default=None, help="default 3 (quick: 1)")
    ap.add_argument("--ratio-repeats", type=int, default=None,
                    help="runs of the exact analysis and of DOP853 for the ratio (default 10, "
                         "quick: 3)")
    ap.add_argument("--exact-only", action="store_true",
                    help="only the ratio of the exact analysis against DOP853")
    bench_arguments(ap, "2,000 Python steps, one repeat, the 1-mode case alone")
    args = ap.parse_args(argv)
    args.python_steps = args.python_steps or (2000 if args.quick else 20_000)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.ratio_repeats = args.ratio_repeats or (3 if args.quick else 10)
    report = Report("impact", args)
    if args.exact_only:
        return exact_only(args, report)
    print(f"V2 impact oscillator over [0, {END:g}] s, modal central differences at dt = {DT:g} s "
          f"({int(round(END / DT)):,} steps)")
    print(f"{machine()}; {load_average()}")
    status = 0

    ref_time, reference = scipy_events()
    refs = study_references()
    check = max(abs(reference[i - 1] - t) for i, t in refs.items())
    print(f"scipy DOP853 reference: {len(reference)} events in {ref_time:.2f} s; against the "
          f"closed-form times in the study's checks: max difference {check:.1e} s")
    report.check("scipy DOP853 event times against the study's closed-form ones", check, 1e-9)

    rows = []
    steps = int(round(END / DT))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        v2_text = restricted_study({"modes", "modal_cd"}, tmp).read_text()
        cases = [("1 mode (V2)", v2_text), ("20 modes (chain)", chain_study_text(20))]
        for label, text in cases[:1] if args.quick else cases:
            dyn, links, grid, W = modal_problem(text, tmp)
            m = dyn.size
            start = time.perf_counter()
            fem_loop(dyn, links, grid, W, steps=1000)      # compilation or cache load
            first = time.perf_counter() - start
            best = None
            for _ in range(args.repeats):
                elapsed, state, events = fem_loop(dyn, links, grid, W)
                best = elapsed if best is None else min(best, elapsed)
            path = tmp / f"cd_{m}.toml"
            path.write_text(text)
            wall, whole, file_events, _ = run_file(path, "modal_cd")
            _, fem_state, _ = fem_loop(dyn, links, grid, W, steps=args.python_steps)
            py_time, py_state = python_loop(dyn, links, W, args.python_steps)
            diff = np.max(np.abs(fem_state - py_state)) / np.max(np.abs(py_state))
            if not report.check(f"{label}: fem's loop against the Python loop, state after "
                                f"{args.python_steps} steps", diff, AGREEMENT):
                status = 1
            py_full = py_time * steps / args.python_steps
            report.figure(f"modal CD loop, {label}, {steps:,} steps", best, "s",
                          baseline=py_full, baseline_name="Python loop (extrapolated)",
                          target=("value", "<", TARGET_S))
            report.figure(f"modal CD analysis, {label}", wall, "s",
                          baseline=py_full, baseline_name="Python loop (extrapolated)",
                          target=("value", "<", TARGET_S) if m == 1 else None)
            err = event_error(file_events, reference) if m == 1 else "-"
            rows.append(["fem modal CD, loop", label, f"{steps:,}", f"{best:.4f}", "",
                         str(len(events)), err])
            rows.append(["fem modal CD, analysis", label, f"{steps:,}", "",
                         f"{wall:.3f} ({whole:.3f})", str(len(file_events)), err])
            rows.append([f"Python CD loop (extrapolated from {args.python_steps:,})", label,
                         f"{steps:,}", f"{py_full:.1f}", "", "-",
                         f"state vs fem {diff:.1e}"])
            print(f"{label}: fem loop {best:.4f} s (first call of 1000 steps {first:.3f} s), "
                  f"analysis "
                  f"{wall:.3f} s, Python loop {py_full:.1f} s (x{py_full / best:.0f})",
                  flush=True)

        rows.append(["scipy DOP853 (rtol 1e-12, events)", "physical", "-", f"{ref_time:.2f}",
                     "", str(len(reference)), "reference"])
        path = restricted_study({"exact"}, tmp)
        first, best, events, _ = first_and_best(path, "exact", args.repeats)
        rows.append(["fem exact", "physical", "-", "", f"{best:.3f} [{first:.3f}]",
                     str(len(events)), event_error(events, reference)])
        report.figure("exact analysis (V2)", best, "s", baseline=ref_time,
                      baseline_name="scipy DOP853 with events")
        report.check("exact: event times against scipy DOP853 (s)", _max_error(events, reference),
                     1e-9)
        path = restricted_study({"modes", "modal_adaptive2"}, tmp)
        first, best, events, count = first_and_best(path, "modal_adaptive2", args.repeats)
        rows.append(["fem modal adaptive2 (tolerance 1e-7)", "1 mode (V2)", f"{count:,}", "",
                     f"{best:.3f} [{first:.3f}]", str(len(events)),
                     event_error(events, reference)])
        report.figure("modal adaptive2 analysis (V2, tolerance 1e-7)", best, "s",
                      baseline=ref_time, baseline_name="scipy DOP853 with events")

    print("\nTimes (s): loop = the step loop alone; analysis = the analysis' wall time (the "
          "whole run_study in brackets; for exact and adaptive2, the best of the repeats, and "
          "in square brackets the first run in the process)")
    print(table(["method", "model", "steps", "loop", "analysis", "events",
                 "max |t - t_ref| (s)"], rows, aligns=["<", "<", ">", ">", ">", ">", ">"]))
    print(f"\nat the end: {load_average()}")
    print(f"\nThe exact analysis against DOP853 (rtol {RATIO_RTOL:g}), {args.ratio_repeats} runs "
          f"of each in turn; {load_average()}")
    ratio_section(report, reference, args.ratio_repeats)
    if status:
        print("\nfem's loop and the Python loop DISAGREE: the timings compare different "
              "computations")
    return report.finish(status)


def ratio_section(report, reference, repeats: int) -> None:
    """Time the exact analysis against DOP853, print the ratio and record it in ``report``."""
    with tempfile.TemporaryDirectory() as tmp:
        exact_time, dop_time, events, dop_events = exact_against_dop853(
            restricted_study({"exact"}, Path(tmp)), repeats)
    text, _ = ratio_report(exact_time, dop_time, events, dop_events, reference)
    print(text)
    ratio_figures(report, exact_time, dop_time, events, reference)
    print(f"at the end: {load_average()}")


def ratio_figures(report, exact_time, dop_time, events, reference) -> None:
    """The ratio against DOP853 and the agreement of the event times, in ``report``."""
    report.figure(f"exact analysis (V2) against DOP853 at rtol {RATIO_RTOL:g}", exact_time, "s",
                  baseline=dop_time, baseline_name=f"scipy DOP853 rtol {RATIO_RTOL:g}, events",
                  target=("ratio", "<=", 1.0 / RATIO_TARGET),
                  note=f"DOP853 / exact = {dop_time / exact_time:.1f}")
    report.check("exact: event count against the reference", abs(len(events) - len(reference)),
                 0)
    if len(events) == len(reference):
        report.check("exact: event times against scipy DOP853 rtol 1e-12 (s)",
                      _max_error(events, reference), 1e-9)


def exact_only(args, report) -> int:
    """The ratio alone (``--exact-only``)."""
    print(f"V2 impact oscillator over [0, {END:g}] s: fem's exact analysis against scipy DOP853 "
          f"(rtol {RATIO_RTOL:g}) chained on the events, {args.ratio_repeats} runs of each in turn")
    print(f"{machine()}; {load_average()}")
    _, reference = scipy_events()
    ratio_section(report, reference, args.ratio_repeats)
    return report.finish(0)


if __name__ == "__main__":
    sys.exit(main())
