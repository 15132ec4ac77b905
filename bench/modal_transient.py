"""Central differences on a modal basis: fem's compiled step loop against a plain numpy loop.

The chain of ``_common`` (node N0 clamped, N masses of 10 kg joined by springs of 1e5 N/m and
dampers of 50 N.s/m along X), N = 20: its 20 modes, a constant 1 N force on the middle mass
from rest, 1e6 steps of dt = 1e-4 s (omega_max dt = 0.063, well inside the stability limit 2),
the generalized coordinates archived every 1000 steps.

    python bench/modal_transient.py [--modes 20] [--steps 1000000] [--loop-steps 100000]
                                    [--quick] [--json]

Timed:
- fem: the transient driver (``fem.transient.integrate``) with the modal central-difference
  scheme and a memory sink (load values, chunking, archiving included), after a first short
  run that compiles the loop;
- numpy: a Python loop over the steps with numpy matrix-vector products on the same
  generalized operators (dense m x m), archiving every 1000 steps too; run over
  ``--loop-steps`` steps (its rate does not depend on the count).

Dampers proportional to the springs (same ratio everywhere) give a diagonal Phi^T C Phi: fem
then advances the modes one by one. The run is repeated with non-proportional dampers (50 on
odd springs, 5 on even ones) where the generalized damping is full and fem's loop does two
dense m x m products per step. Both loops are checked against each other on the final state
(relative difference printed); the script exits with status 1 when they disagree by more than
1e-9 or when the uncoupled rate is under 1e7 steps/s (not in ``--quick``: 1e5 steps and a
numpy loop of 1e4, too short for a rate). ``--json``: one JSON object on stdout
(``_common.Report``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (Report, bench_arguments, chain_mesh, chain_study,  # noqa: E402
                     engine_run, engine_scheme, machine, table)

DT = 1e-4
EVERY = 1000
TARGET = 1e7
#: fem's rate over the numpy loop's, at least (uncoupled case)
TARGET_RATIO = 50.0
AGREEMENT = 1e-9


def basis_of_chain(n: int, coupled: bool):
    """The chain's modal basis (all n modes) and the physical system."""
    import scipy.sparse as sp

    from fem.assembly import reduce
    from fem.modal.basis import build_basis
    from fem.modal.modes import real_modes
    from fem.model import build_model

    study = chain_study(("DX",), force=1.0, step=DT, steps=10, every=EVERY)
    model = build_model(study, chain_mesh(n))
    system = reduce(model, ["step"])
    if coupled:
        # dampers 50 and 5 N.s/m on alternate springs: C no longer follows K
        c = np.where(np.arange(n) % 2 == 0, 50.0, 5.0)
        main = np.append(c[:-1] + c[1:], c[-1])
        system.damping = sp.diags([main, -c[1:], -c[1:]], [0, -1, 1], format="csr")
    modes = real_modes(system.mass, system.stiffness, count=n)
    return build_basis(modes, system), system


def run_fem(basis, steps: int):
    """(steps/s, final q) of fem's modal central differences over ``steps`` steps, through
    the transient driver (load values, chunks and archive included)."""
    import scipy.sparse as sp

    from fem.integrators import dynamics
    from fem.timegrid import build_grid

    dyn = dynamics.modal(basis, sp.csr_matrix((0, basis.system.T.shape[0])))

    def once(count):
        scheme = engine_scheme(dyn, "central_difference")
        grid = build_grid(0.0, count * DT, step=DT, archive={"every": EVERY})
        elapsed, result, rows = engine_run(scheme, grid, dyn.x0, dyn.v0)
        return elapsed, rows["x"][-1], result.steps

    once(2 * EVERY)                                  # compile (or load the cache)
    best, final = np.inf, None
    for _ in range(3):
        elapsed, final, done = once(steps)
        best = min(best, elapsed)
    assert done == steps
    return steps / best, final


def run_numpy(basis, steps: int):
    """(steps/s, final q) of a Python loop with numpy products on the same equations."""
    m = basis.size
    K = np.diag(basis.stiffness)
    C = basis.damping
    Bg = basis.B
    S_inv = np.linalg.inv(np.eye(m) + 0.5 * DT * C)
    w = basis.load_values(np.zeros(1))[0]          # constant force: w(t) = w(0)
    x, v = basis.q0.copy(), basis.v0.copy()
    a = Bg @ w - C @ v - K @ x
    rows = []
    start = time.perf_counter()
    for n in range(1, steps + 1):
        vh = v + 0.5 * DT * a
        x = x + DT * vh
        a = S_inv @ (Bg @ w - K @ x - C @ vh)
        v = vh + 0.5 * DT * a
        if n % EVERY == 0:
            rows.append(x)
    elapsed = time.perf_counter() - start
    return steps / elapsed, x


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", type=int, default=20)
    ap.add_argument("--steps", type=int, default=None, help="default 1e6 (quick: 1e5)")
    ap.add_argument("--loop-steps", type=int, default=None, help="default 1e5 (quick: 1e4)")
    bench_arguments(ap, "1e5 steps, a numpy loop of 1e4")
    args = ap.parse_args(argv)
    args.steps = args.steps or (100_000 if args.quick else 1_000_000)
    args.loop_steps = args.loop_steps or (10_000 if args.quick else 100_000)
    report = Report("modal_transient", args)
    print(machine())
    rows, status = [], 0
    for label, coupled in (("proportional (uncoupled)", False), ("non-proportional (coupled)",
                                                                  True)):
        basis, _ = basis_of_chain(args.modes, coupled)
        fem_rate, q_fem = run_fem(basis, args.steps)
        # the same number of steps for the comparison of final states
        _, q_ref = run_fem(basis, args.loop_steps)
        np_rate, q_np = run_numpy(basis, args.loop_steps)
        diff = np.max(np.abs(q_ref - q_np)) / max(np.max(np.abs(q_np)), 1e-300)
        rows.append([label, f"{args.modes}", f"{args.steps:.0e}", f"{fem_rate:.3g}",
                     f"{np_rate:.3g}", f"{fem_rate / np_rate:.0f}x", f"{diff:.1e}"])
        if not report.check(f"{label}: final q, fem against the numpy loop", diff, AGREEMENT):
            status = 1
        report.figure(f"modal CD, {args.modes} modes, {label}", fem_rate, "steps/s",
                      baseline=np_rate, baseline_name="numpy loop (steps/s)",
                      target=None if coupled else ("ratio", ">=", TARGET_RATIO))
        if not coupled:
            fig = report.figure(f"modal CD, {args.modes} modes, {label}: rate", fem_rate,
                                "steps/s", target=("value", ">=", TARGET))
            if not fig["met"] and not args.quick:
                status = 1
    print(table(["damping", "modes", "steps", "fem steps/s", "numpy steps/s", "ratio",
                 "rel. diff"], rows))
    print(f"target: more than {TARGET:.0e} steps/s and 50x the numpy loop (uncoupled case)")
    return report.finish(status)


if __name__ == "__main__":
    sys.exit(main())
