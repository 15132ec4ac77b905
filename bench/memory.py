"""Memory of a long transient run: the peak resident memory of ``fem run`` against the number
of steps, which must stay flat.

The model: the chain of ``_common`` (node N0 clamped, ``--dofs`` masses of 10 kg along X,
default 1,000, springs of 1e5 N/m, dampers of 50 N.s/m), 1 sin(2 pi 2 t) N on the middle
mass from rest; central differences on the physical basis (the cheapest step of fem: no
iteration, S = M + dt/2 C factorized once), dt = 1e-4 s (omega_max dt = 0.02), every 1000th
step archived with the default fields (displacement, velocity, acceleration of every dof,
element forces, reaction), streamed to the results file.

    python bench/memory.py [--dofs 1000] [--steps 1e5 1e6 1e7] [--quick] [--json]

Each run is ``python -m fem run study.toml --out results.h5`` in a child process of its own
(so that its peak is its own; a first run of 2,000 steps compiles the loops or loads them
from numba's disk cache, so that no measured peak holds the compiler): its peak resident
set (``ru_maxrss`` of the child, from ``os.wait4``), its wall time and the size of the
results file. Baseline of the memory
figures: the peak of the shortest run (the interpreter, numpy, scipy, h5py, numba and fem's
compiled code loaded, the model and one chunk of steps): the ratios show how the peak grows
with the number of steps. Targets: every peak under 300 MB (286 MiB), and flat: the longest
run's peak at most 1.1x the shortest's.

``--quick``: 50 dofs, 1e5 and 1e6 steps, no first run; ``--json``: one JSON object on stdout
(``_common.Report``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (DAMPING, MASS, STIFFNESS, ROOT, Report, bench_arguments,  # noqa: E402
                     load_average, loaded_node, machine, table)

DT, EVERY = 1e-4, 1000
#: 300 MB in MiB
LIMIT_MIB = 300e6 / 2**20
FLAT = 1.1


def study_data(dofs: int, steps: int) -> dict:
    names = [f"N{i}" for i in range(dofs + 1)]
    return {
        "study": {"title": f"chain of {dofs} dofs, {steps:.0e} steps"},
        "mesh": {
            "nodes": {name: [float(i), 0.0, 0.0] for i, name in enumerate(names)},
            "cells": {f"S{i}": {"type": "SEG2", "nodes": [names[i], names[i + 1]]}
                      for i in range(dofs)},
            "node_groups": {"MASSES": names[1:]},
            "cell_groups": {"SPRINGS": [f"S{i}" for i in range(dofs)]},
        },
        "model": {"components": ["DX"]},
        "discrete": [{"cell_groups": ["SPRINGS"], "stiffness": STIFFNESS, "damping": DAMPING},
                     {"node_groups": ["MASSES"], "mass": MASS}],
        "constraint": [{"nodes": ["N0"], "DX": 0.0}],
        "functions": {"f": {"expression": "sin(2*pi*2*t)"}},
        "load": [{"name": "f", "nodes": [names[loaded_node(dofs)]], "FX": 1.0,
                  "function": "f"}],
        "analysis": [{"name": "transient", "kind": "transient",
                      "scheme": "central_difference", "end": steps * DT, "step": DT,
                      "archive": {"every": EVERY}}],
    }


def measured(command: list[str]) -> tuple[float, float, int, str]:
    """Wall time (s), peak resident memory (MiB), exit code and stderr of a child process."""
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        # wait4 gives the resources of this child alone, whatever ran before it
        _, status, usage = os.wait4(process.pid, 0)
        err.seek(0)
        message = err.read()
    return (time.perf_counter() - start, usage.ru_maxrss / 1024.0,
            os.waitstatus_to_exitcode(status), message)


def one_run(dofs: int, steps: int, folder: Path) -> dict:
    import fem

    path = fem.Study.from_dict(study_data(dofs, steps), root=folder,
                               name=f"chain_{steps}").save(folder / f"chain_{steps}.toml")
    out = folder / f"chain_{steps}.h5"
    wall, peak, code, message = measured([sys.executable, "-m", "fem", "run", str(path),
                                          "--out", str(out), "--quiet"])
    if code != 0:
        raise RuntimeError(f"fem run of {steps:.0e} steps failed ({code}):\n{message[-2000:]}")
    with h5py.File(out, "r") as f:
        g = f["analyses/transient"]
        rows = g["time"].shape[0]
        final = float(g["displacement"][-1, loaded_node(dofs)])
        inner = float(g.attrs["wall_time_s"])
    size = out.stat().st_size / 2**20
    out.unlink()
    return {"steps": steps, "wall": wall, "analysis": inner, "peak": peak, "rows": rows,
            "file_mib": size, "final": final}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dofs", type=int, default=None, help="default 1000 (quick: 50)")
    ap.add_argument("--steps", type=float, nargs="+", default=None,
                    help="step counts (default 1e5 1e6 1e7; quick: 1e5 1e6)")
    bench_arguments(ap, "50 dofs, 1e5 and 1e6 steps")
    args = ap.parse_args(argv)
    dofs = args.dofs or (50 if args.quick else 1000)
    counts = sorted(int(s) for s in (args.steps or ([1e5, 1e6] if args.quick
                                                    else [1e5, 1e6, 1e7])))
    report = Report("memory", args)
    print(f"Peak memory of fem run: chain of {dofs:,} dofs, central differences, dt = {DT:g} s, "
          f"every {EVERY}th step archived (default fields)")
    print(f"{machine()}; {load_average()}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="fem-memory-bench-") as tmp:
        # a first short run compiles the loops or loads them from numba's disk cache, so
        # that the measured peaks hold no compiler (not in a quick run: a smoke test)
        if not args.quick:
            warm = one_run(dofs, 2 * EVERY, Path(tmp))
            print(f"first run ({2 * EVERY} steps, compile or cache load): {warm['wall']:.1f} "
                  f"s, peak RSS {warm['peak']:.0f} MiB", flush=True)
        for steps in counts:
            r = one_run(dofs, steps, Path(tmp))
            runs.append(r)
            print(f"{steps:.0e} steps: peak RSS {r['peak']:.0f} MiB, {r['wall']:.1f} s "
                  f"({load_average()})", flush=True)
    base = runs[0]["peak"]
    rows = []
    for r in runs:
        rows.append([f"{r['steps']:.0e}", f"{r['rows']:,}", f"{r['peak']:.0f}",
                     f"{r['peak'] / base:.2f}", f"{r['wall']:.1f}", f"{r['analysis']:.1f}",
                     f"{r['steps'] / r['analysis']:,.0f}", f"{r['file_mib']:.0f}"])
        report.figure(f"peak RSS of fem run, {dofs:,} dofs, {r['steps']:.0e} steps", r["peak"],
                      "MiB", baseline=base, baseline_name=f"peak of the {counts[0]:.0e}-step run",
                      target=("value", "<", LIMIT_MIB))
        report.figure(f"fem run, {r['steps']:.0e} steps: the analysis' steps per second",
                      r["steps"] / r["analysis"], "steps/s")
        report.check(f"{r['steps']:.0e} steps: archived rows (expected "
                     f"{r['steps'] // EVERY + 1})", abs(r["rows"] - (r["steps"] // EVERY + 1)),
                     0)
    report.figure(f"peak RSS of the longest run ({counts[-1]:.0e} steps)", runs[-1]["peak"],
                  "MiB", baseline=base, baseline_name=f"peak of the {counts[0]:.0e}-step run",
                  target=("ratio", "<=", FLAT))
    print("\nPeak resident memory of the child process against the number of steps")
    print(table(["steps", "archived rows", "peak RSS (MiB)", "/ shortest", "wall (s)",
                 "analysis (s)", "steps/s", "file (MiB)"], rows))
    under = all(r["peak"] < LIMIT_MIB for r in runs)
    flat = runs[-1]["peak"] <= FLAT * base
    print(f"targets: every peak under 300 MB ({LIMIT_MIB:.0f} MiB): "
          f"{'met' if under else 'MISSED'}; flat (longest / shortest <= {FLAT}): "
          f"{'met' if flat else 'MISSED'} ({runs[-1]['peak'] / base:.2f})")
    report.details["runs"] = runs
    return report.finish(0 if all(np.isfinite(r["final"]) for r in runs) else 1)


if __name__ == "__main__":
    sys.exit(main())
