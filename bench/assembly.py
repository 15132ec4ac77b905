"""Model assembly of a large chain: fem's ``build_model`` against plain scipy.sparse builds.

The chain: node N0 clamped, then 1e6 SEG2 cells each carrying a spring (1e5 N/m) and a
damper (50 N.s/m), and 1e6 nodal masses (10 kg), with components DX, then DX DY DZ.

    python bench/assembly.py [--cells 1000000] [--components DX DX,DY,DZ] [--profile]
                             [--quick] [--json]

Each component set runs in a child process of its own, so that its max RSS is its own; in
that process:
- the Mesh object is built from arrays (node and cell names, groups) and timed apart;
- ``build_model`` is timed as a whole and phase by phase (group resolution, element
  triplets, COO -> CSR, constraint elimination, ...), by wrapping the functions it calls:
  its first call in the process, then the best of two more calls (the first call also pays
  for the first touch of the memory it allocates, which costs much on a virtual machine);
- ``reduce`` (projection on the free dofs) is timed as a side figure;
- two baselines build the same M, K, C on all dofs: ``scipy.sparse.diags`` and a COO build
  from numpy arrays of the connectivity (best of 3 each); both must equal fem's matrices;
- memory: tracemalloc peak of a second ``build_model`` (and of the Mesh and of the COO
  baseline), and the process max RSS (``resource.getrusage``) after the first call.

``--profile`` adds the cProfile of one ``build_model`` call per component set.
Target: ``build_model`` under 2 s. ``--quick``: 20,000 cells, DX alone; ``--json``: one
JSON object on stdout (``_common.Report``).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import subprocess
import sys
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (DAMPING, MASS, STIFFNESS, Report, bench_arguments,  # noqa: E402
                     chain_mesh, chain_study, machine, load_average, max_rss_mib, stopwatch,
                     table)

TARGET_S = 2.0
WARM_REPEATS = 2
BASELINE_REPEATS = 3
MiB = 1024.0 * 1024.0

#: (label, module, attribute) of what build_model calls, timed one by one
PHASES = [
    ("group resolution", "fem.model.build", "_targets_to_indices"),
    ("element triplets", "fem.model.build", "add_discrete"),
    ("triplet concatenation", "fem.model.elements", "Triplets.arrays"),
    ("COO -> CSR", "fem.model.build", "coo_to_csr"),
    ("constraints (T, G)", "fem.model.build", "_constraints"),
    ("singularity check", "fem.model.build", "_check_singular"),
    ("loads", "fem.model.build", "_loads"),
    ("initial state", "fem.model.build", "_initial"),
]


@contextmanager
def phase_timers(spent: dict):
    """Wrap the functions of PHASES so that ``spent[label]`` accumulates their time; a name
    the code no longer has is skipped (its time then shows under "other")."""
    import importlib

    restore = []
    for label, module, attr in PHASES:
        owner = importlib.import_module(module)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        original = getattr(owner, name, None) if owner is not None else None
        if original is None:
            continue

        def timed(*args, _f=original, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - start

        setattr(owner, name, timed)
        restore.append((owner, name, original))
    try:
        yield spent
    finally:
        for owner, name, original in reversed(restore):
            setattr(owner, name, original)


def best_of(repeats: int, fn):
    """(shortest time, result of the last call) of ``repeats`` calls of ``fn``."""
    best, result = float("inf"), None
    for _ in range(repeats):
        result = None
        gc.collect()
        with stopwatch() as sw:
            result = fn()
        best = min(best, sw.elapsed)
    return best, result


def traced_peak(fn):
    """(result, tracemalloc peak in MiB) of ``fn()``."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak / MiB


# ------------------------------------------------------------------------------------------
# baselines: the same M, K, C (all dofs, node-major numbering) built directly
def baseline_diags(cells: int, ncomp: int):
    """Tridiagonal (block) matrices from ``scipy.sparse.diags``."""
    nodes = cells + 1
    n = nodes * ncomp
    ends = np.full(n, 2.0)
    ends[:ncomp] = 1.0
    ends[-ncomp:] = 1.0
    off = np.full(n - ncomp, -1.0)
    K = sp.diags([STIFFNESS * ends, STIFFNESS * off, STIFFNESS * off], [0, ncomp, -ncomp],
                 format="csr")
    C = sp.diags([DAMPING * ends, DAMPING * off, DAMPING * off], [0, ncomp, -ncomp],
                 format="csr")
    mass = np.full(n, MASS)
    mass[:ncomp] = 0.0                        # the clamped node carries no mass
    M = sp.diags([mass], [0], format="csr")
    return M, K, C


def baseline_coo(connectivity: np.ndarray, mass_nodes: np.ndarray, n_nodes: int, ncomp: int):
    """Element triplets from the connectivity arrays, summed by a COO -> CSR conversion."""
    n = n_nodes * ncomp
    comp = np.arange(ncomp)
    d1 = (connectivity[:, :1] * ncomp + comp).ravel()
    d2 = (connectivity[:, 1:] * ncomp + comp).ravel()
    rows = np.concatenate([d1, d2, d1, d2])
    cols = np.concatenate([d1, d2, d2, d1])
    sign = np.repeat(np.array([1.0, 1.0, -1.0, -1.0]), len(d1))

    def csr(r, c, v):
        m = sp.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()
        m.sum_duplicates()
        return m

    K = csr(rows, cols, STIFFNESS * sign)
    C = csr(rows, cols, DAMPING * sign)
    md = (mass_nodes[:, None] * ncomp + comp).ravel()
    M = csr(md, md, np.full(len(md), MASS))
    return M, K, C


def same(a, b) -> float:
    """Largest absolute entry of a - b."""
    d = (a - b).tocoo()
    return float(np.max(np.abs(d.data))) if d.nnz else 0.0


# ------------------------------------------------------------------------------------------
def worker(cells: int, components: tuple[str, ...], profile: bool) -> dict:
    from fem.assembly import reduce
    from fem.model import build_model

    ncomp = len(components)
    study = chain_study(components)
    out = {"components": " ".join(components), "cells": cells}
    with stopwatch() as sw:
        mesh = chain_mesh(cells)
    out["mesh"] = sw.elapsed
    out["rss_mesh"] = max_rss_mib()

    # the first call runs on memory the process has never used (page faults, expensive on a
    # virtual machine); the next ones reuse memory the process has already touched
    def timed_build():
        spent: dict = {}
        gc.collect()
        with phase_timers(spent), stopwatch() as sw:
            model = build_model(study, mesh)
        return model, sw.elapsed, spent

    model, out["model"], out["phases"] = timed_build()
    out["rss_model"] = max_rss_mib()
    out["dofs"] = model.size
    out["nnz"] = {"M": model.mass.nnz, "K": model.stiffness.nnz, "C": model.damping.nnz}
    out["matrices_mib"] = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
                              for m in (model.mass, model.stiffness, model.damping)) / MiB
    with stopwatch() as sw:
        system = reduce(model, [])
    out["reduce"] = sw.elapsed
    out["free"] = system.size
    del system
    warm = []
    for _ in range(WARM_REPEATS):
        other, elapsed, spent = timed_build()
        del other
        warm.append((elapsed, spent))
    out["model_warm"], out["phases_warm"] = min(warm, key=lambda w: w[0])

    mass_nodes = mesh.node_groups["MASSES"]
    out["diags"], diags = best_of(BASELINE_REPEATS, lambda: baseline_diags(cells, ncomp))
    out["coo"], coo = best_of(
        BASELINE_REPEATS, lambda: baseline_coo(mesh.connectivity, mass_nodes, mesh.node_count,
                                               ncomp))
    fem_mkc = (model.mass, model.stiffness, model.damping)
    out["diff"] = max(max(same(a, b) for a, b in zip(fem_mkc, diags)),
                      max(same(a, b) for a, b in zip(fem_mkc, coo)))
    del diags, coo, model
    out["rss_end"] = max_rss_mib()

    # memory: tracemalloc slows allocations down, so these runs are not the timed ones
    _, out["peak_model"] = traced_peak(lambda: build_model(study, mesh))
    _, out["peak_coo"] = traced_peak(
        lambda: baseline_coo(mesh.connectivity, mass_nodes, mesh.node_count, ncomp))
    del mesh
    gc.collect()
    _, out["peak_mesh"] = traced_peak(lambda: chain_mesh(cells))

    if profile:
        mesh = chain_mesh(cells)
        prof = cProfile.Profile()
        prof.enable()
        build_model(study, mesh)
        prof.disable()
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats("fem", 15)
        out["profile"] = text.getvalue()
    return out


def run_case(cells, components, profile) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ",".join(components),
           "--cells", str(cells)] + (["--profile"] if profile else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"the assembly of {components} failed:\n{proc.stderr[-3000:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=int, default=None, help="default 1e6 (--quick: 2e4)")
    ap.add_argument("--components", nargs="+", default=None,
                    help="component sets, each comma-separated (default DX DX,DY,DZ; quick: DX)")
    ap.add_argument("--profile", action="store_true", help="print the cProfile of build_model")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    bench_arguments(ap, "20,000 cells, DX alone")
    args = ap.parse_args(argv)
    if args.cells is None:
        args.cells = 20_000 if args.quick else 1_000_000
    if args.components is None:
        args.components = ["DX"] if args.quick else ["DX", "DX,DY,DZ"]
    if args.worker:
        out = worker(args.cells, tuple(args.worker.split(",")), args.profile)
        print(json.dumps(out), flush=True)
        return 0

    report = Report("assembly", args)
    print(f"Assembly benchmark: chain of {args.cells:,} SEG2 springs + dampers and "
          f"{args.cells:,} nodal masses")
    print(f"{machine()}; {load_average()}")
    results = []
    for comps in args.components:
        r = run_case(args.cells, tuple(comps.split(",")), args.profile)
        results.append(r)
        print(f"{r['components']}: build_model {r['model']:.3f} s (first call), "
              f"{r['model_warm']:.3f} s (next calls)", flush=True)

    print("\nTimes (s): build_model first call, then best of the next two calls;"
          " ratio = build_model (next calls) / scipy COO build (best of 3)")
    print(table(["components", "dofs", "Mesh object", "build_model 1st", "build_model next",
                 "reduce", "scipy diags", "scipy COO", "ratio", "max |fem - scipy|"],
                [[r["components"], f"{r['dofs']:,}", f"{r['mesh']:.3f}", f"{r['model']:.3f}",
                  f"{r['model_warm']:.3f}", f"{r['reduce']:.3f}", f"{r['diags']:.3f}",
                  f"{r['coo']:.3f}", f"{r['model_warm'] / r['coo']:.1f}", f"{r['diff']:.1e}"]
                 for r in results]))

    labels = [p[0] for p in PHASES]
    rows = []
    for label in labels + ["other", "build_model"]:
        row = [label]
        for r in results:
            for total, phases in ((r["model"], r["phases"]), (r["model_warm"], r["phases_warm"])):
                if label == "build_model":
                    value = total
                elif label == "other":
                    value = total - sum(phases.values())
                else:
                    value = phases.get(label)
                row.append("-" if value is None else f"{value:.3f}")
        rows.append(row)
    print("\nbuild_model phase by phase (s): first call, and the best of the next two")
    heads = ["phase"]
    for r in results:
        heads += [f"{r['components']} 1st", f"{r['components']} next"]
    print(table(heads, rows))

    print("\nMemory (MiB): tracemalloc peaks, and max RSS of the child process after each step")
    print(table(["components", "CSR M+K+C", "peak build_model", "peak scipy COO", "peak Mesh",
                 "RSS after Mesh", "RSS after build_model", "RSS at end"],
                [[r["components"], f"{r['matrices_mib']:.0f}", f"{r['peak_model']:.0f}",
                  f"{r['peak_coo']:.0f}", f"{r['peak_mesh']:.0f}", f"{r['rss_mesh']:.0f}",
                  f"{r['rss_model']:.0f}", f"{r['rss_end']:.0f}"] for r in results]))

    for r in results:
        if "profile" in r:
            print(f"\ncProfile of build_model, components {r['components']}")
            print(r["profile"].rstrip())

    print(f"\nat the end: {load_average()}")
    ok = all(report.check(f"{r['components']}: max |fem - scipy| of M, K, C", r["diff"], 0.0)
             for r in results)
    print("\nTarget: build_model under 2 s")
    for r in results:
        for what, value in (("first call", r["model"]), ("next calls", r["model_warm"])):
            verdict = "met" if value < TARGET_S else "MISSED"
            print(f"  {r['components']}, {what}: {value:.3f} s, {verdict}")
            report.figure(f"build_model {r['components']}, {r['dofs']:,} dofs, {what}", value,
                          "s", baseline=r["coo"], baseline_name="scipy COO build",
                          target=("value", "<", TARGET_S))
        report.figure(f"max RSS {r['components']}", r["rss_end"], "MiB")
    if not ok:
        print("\nfem's matrices differ from the scipy builds")
    return report.finish(0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
