"""Lowest modes of a long spring-mass chain: fem's solvers beside ARPACK called directly.

The chain of ``bench._common`` (node N0 clamped, n masses of 10 kg, n springs of 1e5 N/m,
dampers of 50 N.s/m, the last mass free) along X only. Its undamped frequencies have the
closed form

    w_j = 2 sqrt(k/m) sin((2j - 1) pi / (2 (2n + 1))),   j = 1 ... n

Timed, on the same assembled matrices:

- ``fem real modes``: ``fem.modal.modes.real_modes`` (sparse shift-invert Lanczos);
- ``eigsh, sigma = 0``: ``scipy.sparse.linalg.eigsh(K, k, M, sigma=0)`` called directly, the
  baseline (the chain is clamped, so K is regular and 0 is a valid shift);
- ``fem complex modes``: ``fem.modal.complex_modes.complex_modes`` with the dampers, for
  scale. Each damper lies along a spring with the same ratio c/k, so C = (c/k) K and
  |lambda_j| = w_j exactly: the same closed form applies.

Usage: ``python bench/modes.py [--n 100000] [--count 20] [--no-complex] [--quick] [--json]``
(``--quick``: n = 5,000 and 10 modes; ``--json``: one JSON object on stdout,
``_common.Report``). The frequencies must agree with the closed form within 1e-8 (relative)
and fem's real modes with the baseline's within 1e-10 (status 1 otherwise).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse.linalg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (DAMPING, MASS, STIFFNESS, Report, bench_arguments,  # noqa: E402
                     chain_mesh, chain_study, machine, max_rss_mib, stopwatch, table)
from fem.model import build_model  # noqa: E402
from fem.modal.complex_modes import complex_modes  # noqa: E402
from fem.modal.modes import real_modes  # noqa: E402

#: relative agreement of the frequencies with the closed form, and of fem's with eigsh's
CLOSED_FORM, BASELINE = 1e-8, 1e-10


def closed_form(n: int, count: int) -> np.ndarray:
    """(count,) Hz: lowest frequencies of the clamped-free chain of n equal masses."""
    j = np.arange(1, count + 1)
    omega = 2 * np.sqrt(STIFFNESS / MASS) * np.sin((2 * j - 1) * np.pi / (2 * (2 * n + 1)))
    return omega / (2 * np.pi)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None,
                        help="dofs (masses) of the chain (default 1e5, quick: 5e3)")
    parser.add_argument("--count", type=int, default=None,
                        help="modes asked (default 20, quick: 10)")
    parser.add_argument("--no-complex", action="store_true", help="skip the complex modes")
    bench_arguments(parser, "a chain of 5,000 dofs, 10 modes")
    args = parser.parse_args(argv)
    args.n = args.n or (5_000 if args.quick else 100_000)
    args.count = args.count or (10 if args.quick else 20)
    report = Report("modes", args)
    n, count = args.n, args.count

    with stopwatch() as sw_build:
        model = build_model(chain_study(), chain_mesh(n))
        T = model.constraints.T
        TT = T.T.tocsr()
        M = (TT @ model.mass @ T).tocsr()
        K = (TT @ model.stiffness @ T).tocsr()
        C = (TT @ model.damping @ T).tocsr()
    exact = closed_form(n, count)

    runs = []
    with stopwatch() as sw:
        modes = real_modes(M, K, count=count, method="sparse")
    runs.append(("fem real modes", sw.elapsed, modes.frequency))

    with stopwatch() as sw:
        w2 = scipy.sparse.linalg.eigsh(K.tocsc(), k=count, M=M.tocsc(), sigma=0.0, which="LM",
                                       return_eigenvectors=False)
    runs.append(("eigsh, sigma = 0 (baseline)", sw.elapsed, np.sqrt(np.sort(w2)) / (2 * np.pi)))

    if not args.no_complex:
        with stopwatch() as sw:
            cmodes = complex_modes(M, C, K, count=count, method="sparse")
        runs.append(("fem complex modes", sw.elapsed, cmodes.frequency))

    rows = []
    for name, elapsed, f in runs:
        error = np.abs(f - exact) / exact
        rows.append((name, f"{elapsed:.2f}", f"{f[0]:.9g}", f"{f[-1]:.9g}",
                     f"{error[0]:.2e}", f"{error.max():.2e}"))
    print(f"chain of {n} dofs (clamped-free), {count} lowest modes; {machine()}")
    print(f"model build and reduction: {sw_build.elapsed:.2f} s; dampers {DAMPING} N.s/m")
    print(table(("solver", "time (s)", "f1 (Hz)", f"f{count} (Hz)", "err f1", "max err"), rows))
    print(f"closed form: f1 = {exact[0]:.9g} Hz, f{count} = {exact[-1]:.9g} Hz; err = "
          f"|f - f_closed| / f_closed; peak RSS {max_rss_mib():.0f} MiB")
    between = float(np.max(np.abs(runs[0][2] - runs[1][2]) / runs[1][2]))
    print(f"fem real vs baseline: max relative difference {between:.2e}")
    base = runs[1][1]
    for name, elapsed, f in runs:
        report.check(f"{name}: frequencies against the closed form",
                     float(np.max(np.abs(f - exact) / exact)), CLOSED_FORM)
        if name != runs[1][0]:
            report.figure(f"{name}, {count} modes of {n:,} dofs", elapsed, "s", baseline=base,
                          baseline_name="eigsh, sigma = 0")
    report.check("fem real modes against eigsh", between, BASELINE)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
