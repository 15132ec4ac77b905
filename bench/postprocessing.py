"""Benchmark of ``fem post`` on a long run: 1e7 archived steps of a few dofs.

Writes a synthetic results file with the real writer (``fem.results.ResultsWriter``, in
blocks, as a solver does), then runs as subprocesses

* ``fem post series`` of one column over the whole time, to a CSV file;
* ``fem post plot`` of the same column (min/max decimation), to a PNG file;

and prints the wall time and peak resident memory of each (targets for series: under 10 s
and 500 MB). Baseline: reading the same column with h5py in this process (what any tool must
do at least), whose values the CSV must hold.

Usage: ``python bench/postprocessing.py [--steps N] [--keep] [--dir DIR] [--quick] [--json]``
(``--quick``: 2e5 instants; ``--json``: one JSON object on stdout, ``_common.Report``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fem.results import ResultsWriter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, bench_arguments  # noqa: E402

STEP = 1e-5                   # s between archived instants
NODES = 4                     # N0 clamped, N1..N3 free, DX only
BLOCK = 200_000               # rows per append
SERIES_TARGET_S, SERIES_TARGET_MIB = 10.0, 500.0


def write_file(path: Path, steps: int) -> float:
    """A transient of ``steps`` instants, N_k DX = k sin(2 pi 50 t) exp(-t / tau) mm with tau
    a third of the run (a decaying envelope to see on the plot); returns wall time (s)."""
    start = time.perf_counter()
    writer = ResultsWriter(path, title="postpro benchmark", study_source="",
                           node_names=[f"N{k}" for k in range(NODES)],
                           coordinates=[[k, 0.0, 0.0] for k in range(NODES)],
                           dof_node=list(range(NODES)), dof_component=["DX"] * NODES,
                           dof_imposed=[True] + [False] * (NODES - 1))
    analysis = writer.analysis("transient", "transient", basis="physical", scheme="newmark")
    series = analysis.series({"displacement": NODES})
    amplitude = 1e-3 * np.arange(NODES)
    tau = STEP * steps / 3.0
    for first in range(0, steps, BLOCK):
        t = STEP * np.arange(first, min(first + BLOCK, steps))
        wave = np.sin(2 * np.pi * 50 * t) * np.exp(-t / tau)
        series.append(time=t, displacement=np.outer(wave, amplitude))
    analysis.finish(steps=steps - 1, wall_time_s=0.0)
    writer.close(complete=True)
    return time.perf_counter() - start


def read_column(path: Path, dof: int) -> tuple[float, np.ndarray]:
    """(seconds, values) of reading the displacement of one dof over the whole time with h5py."""
    import h5py

    start = time.perf_counter()
    with h5py.File(path, "r") as f:
        values = f["analyses/transient/displacement"][:, dof]
    return time.perf_counter() - start, values


def measured(command: list[str]) -> tuple[float, float, int]:
    """Wall time (s), peak resident memory (MiB) and exit code of one subprocess."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    # wait4 gives the resources of this child alone, whatever ran before it
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024.0, process.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None,
                        help="archived instants (default 1e7, quick: 2e5)")
    parser.add_argument("--dir", help="folder of the files (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the files written")
    bench_arguments(parser, "2e5 archived instants")
    args = parser.parse_args(argv)
    args.steps = args.steps or (200_000 if args.quick else 10_000_000)
    report = Report("postprocessing", args)
    folder = Path(args.dir or tempfile.mkdtemp(prefix="fem-postpro-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    results, csv, png = folder / "long.h5", folder / "long.csv", folder / "long.png"
    fem = [sys.executable, "-m", "fem"]
    try:
        written = write_file(results, args.steps)
        print(f"results file: {args.steps:.3g} instants x {NODES} dofs, "
              f"{results.stat().st_size / 2**20:.0f} MiB, written in {written:.1f} s")
        base, column = read_column(results, 2)
        rows = []
        for name, command, output in (
                ("series", fem + ["post", "series", str(results), "--node", "N2",
                                  "--component", "DX", "--output", str(csv)], csv),
                ("plot", fem + ["post", "plot", str(results), "--node", "N2", "--component",
                                "DX", "--output", str(png)], png)):
            wall, peak, code = measured(command)
            if code != 0:
                print(f"fem post {name} failed with exit code {code}")
                return report.finish(1)
            rows.append((name, wall, peak, output.stat().st_size / 2**20))
            report.figure(f"fem post {name}, {args.steps:.3g} instants", wall, "s",
                          baseline=base, baseline_name="h5py read of the column",
                          target=("value", "<", SERIES_TARGET_S) if name == "series" else None)
            report.figure(f"fem post {name}, peak RSS", peak, "MiB",
                          target=("value", "<", SERIES_TARGET_MIB) if name == "series"
                          else None)
        print(f"{'command':<8} {'wall [s]':>9} {'peak RSS [MiB]':>15} {'output [MiB]':>13}")
        for name, wall, peak, size in rows:
            print(f"{name:<8} {wall:>9.2f} {peak:>15.0f} {size:>13.2f}")
        _, wall, peak, _ = rows[0]
        verdict = "met" if wall < SERIES_TARGET_S and peak < SERIES_TARGET_MIB else "MISSED"
        print(f"series target (< {SERIES_TARGET_S:g} s, < {SERIES_TARGET_MIB:g} MiB): {verdict}")
        print(f"baseline: h5py read of the column in {base:.2f} s")
        written = np.loadtxt(csv, delimiter=",", skiprows=1, usecols=1, comments="#",
                             max_rows=1000)
        report.check("CSV against the column (first 1000 rows)",
                      float(np.max(np.abs(written - column[:len(written)]))), 1e-12)
        return report.finish(0 if verdict == "met" or args.quick else 1)
    finally:
        if not args.keep:
            for path in (results, csv, png):
                path.unlink(missing_ok=True)
            if not args.dir:
                folder.rmdir()


if __name__ == "__main__":
    raise SystemExit(main())
