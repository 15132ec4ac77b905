"""Response spectrum of a 20,000-point ground record at 200 frequencies x 3 damping ratios
(``postpro.response_spectrum``), against a loop of ``scipy.signal.lsim`` over the
oscillators run in the same process.

    python bench/spectrum.py [--points 20000] [--repeats 5] [--subset 24] [--quick] [--json]

- **record**: 20,000 instants every 5 ms (100 s), a sum of sines of 0.3 to 12 Hz and noise
  under a rise-hold-decay envelope (seeded);
- **oscillators**: 200 frequencies log-spaced from 0.1 to 100 Hz, damping 0.02, 0.05, 0.1;
- **first call**: the first ``response_spectrum`` of the process: importing numba and
  loading the compiled loops from numba's disk cache (fem's folder), or compiling them when
  the cache has none (the table says which);
- **compile**: the same first call in a child process whose numba cache is a new empty
  folder (``NUMBA_CACHE_DIR``), that is the compilation of the loops (left out by
  ``--quick``);
- **spectrum**: ``response_spectrum`` of the whole record, the best of ``--repeats`` runs;
- **uneven steps**: the same record with each instant moved by up to 20 % of the step, so
  that every step has a length of its own and its own coefficients (one run; lsim needs
  even steps, so it has no baseline here);
- **scipy lsim loop**: ``scipy.signal.lsim`` of each oscillator's state space (outputs
  x, x' and the absolute acceleration; lsim's default linear interpolation of the input is
  the same piecewise-linear record, solved with its own matrix exponential) and the peaks
  of its outputs. A call takes about 0.1 to 0.4 s here, so the 600 calls would take
  minutes: ``--subset`` oscillators spread over the frequencies and damping ratios are run
  and the time is extrapolated to all of them (the table says so); ``--subset 600`` runs
  them all.

The peaks of the subset must agree with fem's within 1e-8 (relative; status 1 otherwise).
Target: the spectrum under 0.5 s after compilation. ``--quick`` (under 30 s): 3 runs, a
subset of 6, no compile child. ``--json``: stdout holds one JSON object (each figure with
its baseline and ratio where it has one), the tables go to stderr.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import ROOT, Report, load_average, machine, table

TARGET = 0.5            # s, the spectrum after compilation
AGREEMENT = 1e-8

FIRST_CALL = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
start = time.perf_counter()
import postpro
postpro.response_spectrum(np.arange(10) * 0.01, np.sin(np.arange(10.0)), [1.0, 2.0], 0.05)
print(time.perf_counter() - start)
"""


def record(points: int, step: float = 0.005) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2024)
    t = np.arange(points) * step
    end = t[-1]
    envelope = np.minimum(1.0, t / (0.1 * end)) * np.exp(-np.maximum(0.0, t - 0.4 * end)
                                                         / (0.2 * end))
    freqs = rng.uniform(0.3, 12.0, 12)
    phases = rng.uniform(0, 2 * np.pi, 12)
    a = sum(np.sin(2 * np.pi * f * t + p) / (1 + f / 4) for f, p in zip(freqs, phases))
    return t, envelope * (a + 0.3 * rng.normal(size=points))


def lsim_peaks(t, a, f, xi):
    """(sd, sv, sa) of one oscillator by scipy.signal.lsim."""
    from scipy import signal

    w = 2 * np.pi * f
    system = signal.StateSpace([[0.0, 1.0], [-w * w, -2 * xi * w]], [[0.0], [-1.0]],
                               [[1.0, 0.0], [0.0, 1.0], [-w * w, -2 * xi * w]],
                               [[0.0], [0.0], [0.0]])
    y = signal.lsim(system, a, t)[1]
    return np.max(np.abs(y), axis=0)


def compile_time() -> float:
    """The first call in a child process with an empty numba cache."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, NUMBA_CACHE_DIR=folder)
        env.pop("_FEM_NUMBA_CACHE_ROOT", None)
        done = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, capture_output=True,
                              text=True, timeout=600)
        if done.returncode:
            raise RuntimeError(done.stderr)
        return float(done.stdout.split()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--subset", type=int, default=24,
                    help="oscillators run through lsim (default 24; 600: all)")
    ap.add_argument("--quick", action="store_true", help="3 repeats, a subset of 6, no "
                                                         "compile child (under 30 s)")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object on stdout, the tables on stderr")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.subset = 3, min(args.subset, 6)
    report = Report("spectrum", args)     # with --json, what is printed goes to stderr

    def say(text=""):
        print(text, flush=True)

    say(f"response spectrum of a {args.points}-point record, 200 frequencies x 3 damping "
        f"ratios")
    say(f"{machine()}; {load_average()}")
    t, a = record(args.points)
    frequencies = np.logspace(-1, 2, 200)
    dampings = np.array([0.02, 0.05, 0.1])
    count = frequencies.size * dampings.size

    start = time.perf_counter()
    import postpro
    from postpro import spectra

    postpro.response_spectrum(t[:10], a[:10], [1.0, 2.0], 0.05)
    first = time.perf_counter() - start
    kernels = spectra._kernels()
    misses = sum(kernels.peaks.stats.cache_misses.values())
    first_kind = "compiled (no cache)" if misses else "loaded from the cache"
    compiled = None if args.quick else compile_time()

    best = np.inf
    for _ in range(args.repeats):
        start = time.perf_counter()
        spectrum = postpro.response_spectrum(t, a, frequencies, dampings)
        best = min(best, time.perf_counter() - start)

    # the same record on uneven instants: every step has its own coefficients
    jitter = np.random.default_rng(7).uniform(-0.2, 0.2, t.size) * (t[1] - t[0])
    jitter[0] = 0.0
    start = time.perf_counter()
    postpro.response_spectrum(t + jitter, a, frequencies, dampings)
    uneven = time.perf_counter() - start

    # lsim on a subset spread over frequencies and damping ratios
    subset = min(max(1, args.subset), count)
    picks = np.unique(np.linspace(0, count - 1, subset).round().astype(int))
    start = time.perf_counter()
    worst = 0.0
    for j in picks:
        i, k = divmod(int(j), dampings.size)
        ref = lsim_peaks(t, a, frequencies[i], dampings[k])
        got = np.array([spectrum.sd[i, k], spectrum.sv[i, k], spectrum.sa[i, k]])
        worst = max(worst, float(np.max(np.abs(got - ref) / np.abs(ref))))
    measured = time.perf_counter() - start
    lsim_total = measured * count / len(picks)
    extrapolated = len(picks) < count
    ratio = lsim_total / best

    rows = [
        ["first call (import numba, " + first_kind + ")", f"{first:.3f}", "", ""],
        ["compile (child, empty cache)", "-" if compiled is None else f"{compiled:.2f}", "",
         ""],
        [f"spectrum ({count} oscillators, best of {args.repeats})", f"{best:.4f}",
         f"{lsim_total:.1f}", f"{ratio:.0f}"],
        ["the same, uneven steps (each its own length), one run", f"{uneven:.3f}", "", ""],
    ]
    say()
    say(table(["run", "time (s)", "scipy lsim loop (s)", "lsim / fem"], rows))
    how = (f"lsim run on {len(picks)} of {count} oscillators ({measured:.1f} s) and "
           f"extrapolated to {count}" if extrapolated else f"lsim run on all {count}")
    say(f"baseline: {how}; {len(picks)} oscillators compared: largest relative difference "
        f"of SD, SV, SA {worst:.1e}")
    met = best < TARGET
    say(f"target (spectrum < {TARGET} s after compilation): {'met' if met else 'NOT met'}")
    status = 0 if worst < AGREEMENT else 1
    if status:
        say(f"the peaks DIFFER from lsim's by more than {AGREEMENT:g}")
    say(f"at the end: {load_average()}")
    report.figure(f"spectrum, {count} oscillators x {args.points} points", best, "s",
                  baseline=lsim_total, baseline_name="scipy.signal.lsim loop" +
                  (f" (extrapolated from {len(picks)})" if extrapolated else ""),
                  target=("value", "<", TARGET))
    report.figure("first call (" + first_kind + ")", first, "s")
    if compiled is not None:
        report.figure("compile in a child, empty cache", compiled, "s")
    report.figure("the same, uneven steps", uneven, "s", baseline=best,
                  baseline_name="even steps")
    report.check("SD, SV, SA against lsim (largest relative difference)", worst, AGREEMENT)
    report.details.update(points=args.points, oscillators=count)
    return report.finish(status)


if __name__ == "__main__":
    sys.exit(main())
