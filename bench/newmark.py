"""Newmark time stepping on a linear spring-mass-damper chain: fem against a compiled
reference kernel, a plain scipy.sparse loop and, when it is installed, OpenSeesPy.

The chain: the first node clamped, then N masses of 10 kg in a row joined by springs of
1e5 N/m and dampers of 50 N.s/m along X (one dof per node), a constant 1 N force on the
middle mass from t = 0, starting from rest; 2000 steps of dt = 1e-3 s with beta = 1/4,
gamma = 1/2.

    python bench/newmark.py [--sizes 10 1000 10000 100000] [--steps 2000] [--no-opensees]
                            [--quick] [--json]
    python bench/newmark.py --time-offsets      # only the last section below

Timed, for each N:
- fem: setup (mesh, build_model, reduce) apart; then the integration proper: the scheme
  (``newmark.make``), its factorization, and ``driver.integrate`` with a MemorySink that
  archives the displacement of every dof each 100 steps;
- reference: a numba kernel written here for this chain (``reference_newmark``): the same
  acceleration form as fem (S a_n+1 = F - K u~ - C v~, S = M + gamma dt C + beta dt^2 K),
  S tridiagonal and factorized once (Cholesky, its two bidiagonal sweeps per step), K and C
  applied as three-point stencils, the whole loop compiled (no Python per step); it archives
  what fem's run archives: every 100 steps (and the initial instant) the time, the
  displacement, velocity and acceleration of every free dof and the kinetic and potential
  energies; its displacements must equal fem's to round-off;
- scipy: K_eff = K + a0 M + a1 C factorized once with splu, then a Python loop of sparse
  mat-vecs and ``lu.solve`` (displacement form), archiving every 100 steps too;
- OpenSeesPy: ``analyze(steps, dt)`` only, in a fresh child process per size (its speed
  drops when a process builds several models one after the other, see bench/README.md).

fem, the reference and scipy keep the best of a few repeats (fewer for large N). The final
displacement of the loaded mass must agree between them all (relative difference printed);
fem's archived rows must also agree with the scipy loop and the reference kernel's. The script
exits with status 1 when they do not. Target against the reference: fem's time at most 3x the
reference kernel's at N = 1e4 and 1e5.

``--quick``: N = 10, 1000, 10000 with 500 steps, two repeats, no OpenSeesPy, and the section on
the absolute time with 1e5 steps of 1e-4 s; ``--json``: one JSON object on stdout
(``_common.Report``).

Last section, cost against the absolute time: 1e6 steps of 1e-5 s on the chain of N = 10
over [0, 10], [60, 70] and [1000, 1010] s, from rest with the same constant force, through
the same fem calls (``build_grid``, ``newmark.make``, ``driver.integrate`` with a MemorySink,
archiving every 1000 steps). The three runs are repeated in turn, in a rotating order, and
each keeps its best time; the table gives their ratios to the [0, 10] s one and says whether
they are within 10 % of each other. Their final displacements must agree within the same
tolerance.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (DAMPING, MASS, STIFFNESS, Report, bench_arguments,  # noqa: E402
                     chain_mesh, chain_study, engine_run, engine_scheme, load_average,
                     loaded_node, machine, max_rss_mib, opensees_analyze, opensees_chain,
                     opensees_child, stopwatch, table)

FORCE = 1.0
BETA, GAMMA = 0.25, 0.5
EVERY = 100
#: agreement required between fem, scipy and OpenSeesPy (relative, on the final displacement)
TOLERANCE = 1e-8
#: fem's archived displacements against the reference kernel's (relative to their largest):
#: the same operations in another order
ROUND_OFF = 1e-10
#: fem's time over the reference kernel's, at most, at these sizes
REFERENCE_RATIO, REFERENCE_SIZES = 3.0, (10_000, 100_000)


def repeats_for(n: int, quick: bool = False) -> int:
    if quick:
        return 2
    return 5 if n <= 1000 else 3 if n <= 10_000 else 2


# ------------------------------------------------------------------------------------------
# fem
def fem_setup(n, steps, dt):
    from fem.assembly import reduce
    from fem.model import build_model

    study = chain_study(("DX",), force=FORCE, step=dt, steps=steps, every=EVERY)
    spec = study.analysis("transient").params
    with stopwatch() as t_mesh:
        mesh = chain_mesh(n)
    with stopwatch() as t_model:
        model = build_model(study, mesh)
    with stopwatch() as t_reduce:
        system = reduce(model, spec["loads"])
    times = {"mesh": t_mesh.elapsed, "model": t_model.elapsed, "reduce": t_reduce.elapsed}
    return study, spec, model, system, times


def fem_integrate(system, spec, dt_check):
    """One integration from rest; returns (times, archived displacement rows)."""
    from fem.integrators import dynamics
    from fem.timegrid import build_grid

    with stopwatch() as t_make:
        grid = build_grid(spec["start"], spec["end"], step=spec["step"], archive=spec["archive"])
        dyn = dynamics.physical(system, _no_links(system))
        scheme = engine_scheme(dyn, "newmark", beta=spec["beta"], gamma=spec["gamma"],
                               end=spec["end"])
    dt = grid.segments[0][2]
    assert len(grid.segments) == 1 and abs(dt - dt_check) < 1e-12
    with stopwatch() as t_factor:
        scheme.step_operators(dt)       # the key integrate will look up: no second factorization
    elapsed, result, rows = engine_run(scheme, grid, system.q0, system.v0)
    assert result.steps == grid.steps
    times = {"make": t_make.elapsed, "factor": t_factor.elapsed, "step": elapsed}
    times["total"] = times["make"] + times["factor"] + times["step"]
    return times, dyn.expand(rows["x"], rows["time"], 0)


def _no_links(system):
    """The (0, n) kinematics of no link, on all the model's dofs."""
    import scipy.sparse as sp

    return sp.csr_matrix((0, system.T.shape[0]))


def fem_warmup(steps, dt):
    """First call of the compiled kernel (compile or cache load), then a warm call."""
    from fem.integrators import newmark_family

    _, spec, _, system, _ = fem_setup(10, steps, dt)
    first, _ = fem_integrate(system, spec, dt)
    second, _ = fem_integrate(system, spec, dt)
    stats = getattr(newmark_family.RUNS[newmark_family.GENERAL], "stats", None)
    how = "unknown"
    if stats is not None:
        how = "cache load" if sum(stats.cache_hits.values()) else (
            "compiled" if sum(stats.cache_misses.values()) else "unknown")
    return first["total"], second["total"], how


# ------------------------------------------------------------------------------------------
# scipy baseline
def chain_matrices(n):
    """M, C, K (n, n) of the chain on its free dofs (the clamped node removed), and F."""
    diag = np.full(n, 2.0)
    diag[-1] = 1.0
    off = np.full(n - 1, -1.0)
    shape = sp.diags([diag, off, off], [0, 1, -1], format="csr")
    K = STIFFNESS * shape
    C = DAMPING * shape
    M = sp.diags([np.full(n, MASS)], [0], format="csr")
    F = np.zeros(n)
    F[loaded_node(n) - 1] = FORCE
    return M, C, K, F


def scipy_newmark(n, steps, dt):
    M, C, K, F = chain_matrices(n)
    a0 = 1.0 / (BETA * dt * dt)
    a1 = GAMMA / (BETA * dt)
    a2 = 1.0 / (BETA * dt)
    a3 = 1.0 / (2.0 * BETA) - 1.0
    a4 = GAMMA / BETA - 1.0
    a5 = 0.5 * dt * (GAMMA / BETA - 2.0)
    with stopwatch() as sw:
        lu = spla.splu((K + a0 * M + a1 * C).tocsc())
        u = np.zeros(n)
        v = np.zeros(n)
        a = spla.spsolve(M.tocsc(), F - C @ v - K @ u)
        rows = [u.copy()]
        for i in range(1, steps + 1):
            rhs = F + M @ (a0 * u + a2 * v + a3 * a) + C @ (a1 * u + a4 * v + a5 * a)
            u_new = lu.solve(rhs)
            a_new = a0 * (u_new - u) - a2 * v - a3 * a
            v = v + dt * ((1.0 - GAMMA) * a + GAMMA * a_new)
            u, a = u_new, a_new
            if i % EVERY == 0 or i == steps:
                rows.append(u.copy())
    return sw.elapsed, np.array(rows)


# ------------------------------------------------------------------------------------------
# reference kernel: the chain's Newmark in one compiled loop
def chain_factor(n, dt):
    """Cholesky factor of S = M + gamma dt C + beta dt^2 K (tridiagonal, the chain on its free
    dofs): the reciprocals of its diagonal (n,) and its subdiagonal (n,), entry 0 unused."""
    s = GAMMA * dt * DAMPING + BETA * dt * dt * STIFFNESS
    diag = np.full(n, MASS + 2.0 * s)
    diag[-1] = MASS + s
    inv = np.empty(n)
    sub = np.zeros(n)
    pivot = np.sqrt(diag[0])
    inv[0] = 1.0 / pivot
    for i in range(1, n):
        sub[i] = -s * inv[i - 1]
        pivot = np.sqrt(diag[i] - sub[i] * sub[i])
        inv[i] = 1.0 / pivot
    return inv, sub


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def reference_newmark(steps, dt, beta, gamma, m, k, c, F, inv, sub, every, T, U, V, A, EN):
    """Newmark on the chain (module docstring) from rest, a0 = M^-1 F; every ``every`` steps
    (and at the start and the end) the instant, u, v, a and the kinetic and potential energies
    go to row r of T, U, V, A, EN. Returns the number of rows written."""
    n = F.size
    u = np.zeros(n)
    v = np.zeros(n)
    a = F / m
    ut = np.empty(n)
    vt = np.empty(n)
    y = np.empty(n)
    row = 0
    for i in range(steps + 1):
        if i > 0:
            for j in range(n):
                ut[j] = u[j] + dt * v[j] + dt * dt * (0.5 - beta) * a[j]
                vt[j] = v[j] + dt * (1.0 - gamma) * a[j]
            # r = F - K u~ - C v~ (stencils of the chain), with the forward sweep L y = r
            prev = 0.0
            for j in range(n):
                left_u = ut[j - 1] if j > 0 else 0.0
                left_v = vt[j - 1] if j > 0 else 0.0
                if j < n - 1:
                    ku = k * (2.0 * ut[j] - left_u - ut[j + 1])
                    cv = c * (2.0 * vt[j] - left_v - vt[j + 1])
                else:
                    ku = k * (ut[j] - left_u)
                    cv = c * (vt[j] - left_v)
                prev = (F[j] - ku - cv - sub[j] * prev) * inv[j]
                y[j] = prev
            # the backward sweep L^T a = y, and the new state
            nxt = 0.0
            for j in range(n - 1, -1, -1):
                nxt = (y[j] - (sub[j + 1] * nxt if j < n - 1 else 0.0)) * inv[j]
                a[j] = nxt
                u[j] = ut[j] + beta * dt * dt * nxt
                v[j] = vt[j] + gamma * dt * nxt
        if i % every == 0 or i == steps:
            T[row] = i * dt
            kinetic = 0.0
            potential = 0.0
            for j in range(n):
                U[row, j] = u[j]
                V[row, j] = v[j]
                A[row, j] = a[j]
                kinetic += m * v[j] * v[j]
                du = u[j] - (u[j - 1] if j > 0 else 0.0)
                potential += k * du * du
            EN[row, 0] = 0.5 * kinetic
            EN[row, 1] = 0.5 * potential
            row += 1
    return row


def reference_run(n, steps, dt):
    """(seconds, archived displacements (rows, n)) of the reference kernel: the factorization,
    the output arrays and the loop."""
    with stopwatch() as sw:
        inv, sub = chain_factor(n, dt)
        F = np.zeros(n)
        F[loaded_node(n) - 1] = FORCE
        rows = steps // EVERY + 2
        T, EN = np.zeros(rows), np.zeros((rows, 2))
        U, V, A = np.zeros((rows, n)), np.zeros((rows, n)), np.zeros((rows, n))
        count = reference_newmark(steps, dt, BETA, GAMMA, MASS, STIFFNESS, DAMPING, F, inv, sub,
                                  EVERY, T, U, V, A, EN)
    return sw.elapsed, U[:count]


# ------------------------------------------------------------------------------------------
# OpenSeesPy baseline (runs in a child process: see the module docstring)
def opensees_available() -> bool:
    try:
        return importlib.util.find_spec("openseespy") is not None
    except (ImportError, ValueError):
        return False


def opensees_worker(n, steps, dt):
    """Build the chain in OpenSees, time analyze(); print one JSON line."""
    import openseespy.opensees as ops

    mid = loaded_node(n)
    with stopwatch() as t_build:
        opensees_chain(ops, n, MASS)
        # spring and dashpot in parallel: stress = E strain + eta strain rate
        ops.uniaxialMaterial("Elastic", 1, STIFFNESS, DAMPING)
        for i in range(n):
            ops.element("zeroLength", i + 1, i, i + 1, "-mat", 1, "-dir", 1)
        ops.timeSeries("Constant", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(mid, FORCE)
        # fem and the scipy loop start from a0 = M^-1 F(0); OpenSees starts from the
        # committed nodal accelerations, zero unless set
        ops.setNodeAccel(mid, 1, FORCE / MASS, "-commit")
        ops.constraints("Plain")
        ops.numberer("RCM")
        ops.system("BandSPD")
        ops.test("NormDispIncr", 1e-8, 10)
        ops.algorithm("Linear")
        ops.integrator("Newmark", GAMMA, BETA)
        ops.analysis("Transient")
    opensees_analyze(ops, steps, dt, mid, t_build.elapsed)


def opensees_run(n, steps, dt):
    return opensees_child(__file__, [n, "--steps", steps, "--dt", repr(dt)], f" for N = {n}")


# ------------------------------------------------------------------------------------------
# cost against the absolute time
OFFSET_STARTS = (0.0, 60.0, 1000.0)
OFFSET_DT = 1e-5
OFFSET_STEPS = 1_000_000
OFFSET_N = 10
OFFSET_EVERY = 1000
OFFSET_REPEATS = 5
#: the windows' times must be within this fraction of each other (slowest / fastest - 1)
OFFSET_SPREAD = 0.10


def offset_run(system, spec, start, dof, steps, dt):
    """``steps`` steps of ``dt`` from ``start``; returns (times, segments, final displacement)."""
    from fem.integrators import dynamics
    from fem.timegrid import build_grid

    with stopwatch() as t_grid:
        grid = build_grid(start, start + steps * dt, step=dt, archive={"every": OFFSET_EVERY})
    with stopwatch() as t_make:
        dyn = dynamics.physical(system, _no_links(system))
        scheme = engine_scheme(dyn, "newmark", beta=spec["beta"], gamma=spec["gamma"])
    elapsed, result, rows = engine_run(scheme, grid, system.q0, system.v0)
    assert result.steps == steps == grid.steps
    assert len(rows["time"]) == steps // OFFSET_EVERY + 1
    times = {"grid": t_grid.elapsed, "make": t_make.elapsed, "integrate": elapsed}
    times["total"] = sum(times.values())
    final = dyn.expand(rows["x"][-1:], rows["time"][-1:], 0)[0]
    return times, len(grid.segments), final[dof]


def time_offsets(report, steps=OFFSET_STEPS, dt=OFFSET_DT, repeats=OFFSET_REPEATS) -> bool:
    """The section on the absolute time; True when the final displacements agree."""
    span = steps * dt
    print(f"\nCost against the absolute time: {steps:,} steps of {dt:g} s, "
          f"N = {OFFSET_N}, archive every {OFFSET_EVERY} steps; best of {repeats}, "
          f"the windows run in turn in a rotating order")
    _, spec, model, system, _ = fem_setup(OFFSET_N, steps, dt)
    dof = model.dof(f"N{loaded_node(OFFSET_N)}", "DX")
    best, segments, final = {}, {}, {}
    for r in range(repeats):
        # the windows in turn, each one first in some rounds (a round's first run pays more)
        k = r % len(OFFSET_STARTS)
        for start in OFFSET_STARTS[k:] + OFFSET_STARTS[:k]:
            times, segments[start], final[start] = offset_run(system, spec, start, dof, steps,
                                                              dt)
            if start not in best or times["total"] < best[start]["total"]:
                best[start] = times
    ref_t, ref_u = best[OFFSET_STARTS[0]]["total"], final[OFFSET_STARTS[0]]
    rows = []
    for start in OFFSET_STARTS:
        b = best[start]
        rel = abs(final[start] - ref_u) / max(abs(ref_u), 1e-300)
        rows.append([f"[{start:g}, {start + span:g}]", f"{segments[start]:,}",
                     f"{b['grid']:.4f}", f"{b['make']:.4f}", f"{b['integrate']:.4f}",
                     f"{b['total']:.4f}", f"{steps / b['total']:,.0f}",
                     f"{b['total'] / ref_t:.2f}", f"{final[start]:.10e}", f"{rel:.1e}"])
    print(table(["window (s)", "segments", "grid", "make", "integrate", "total", "steps/s",
                 "ratio", "final u (m)", "rel diff"], rows))
    totals = [best[s]["total"] for s in OFFSET_STARTS]
    spread = max(totals) / min(totals) - 1.0
    print(f"  times within {OFFSET_SPREAD:.0%} of each other: "
          f"{'yes' if spread <= OFFSET_SPREAD else 'NO'} (slowest / fastest = {1 + spread:.2f})")
    report.figure(f"slowest of the windows [0, {span:g}], [60, ...], [1000, ...] s", max(totals),
                  "s", baseline=min(totals), baseline_name="fastest window",
                  target=("ratio", "<=", 1 + OFFSET_SPREAD))
    spread_u = max(abs(final[s] - ref_u) for s in OFFSET_STARTS) / max(abs(ref_u), 1e-300)
    agree = report.check("final displacement, windows against [0, ...]", spread_u, TOLERANCE)
    if not agree:
        print("  FINAL DISPLACEMENTS DISAGREE between the windows")
    return agree


# ------------------------------------------------------------------------------------------
def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="chain sizes (default 10 1000 10000 100000; --quick: 10 1000 10000)")
    ap.add_argument("--steps", type=int, default=None, help="default 2000 (--quick: 500)")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--no-opensees", action="store_true", help="skip the OpenSeesPy baseline")
    ap.add_argument("--time-offsets", action="store_true",
                    help="run only the section on the cost against the absolute time")
    ap.add_argument("--opensees-worker", type=int, metavar="N", help=argparse.SUPPRESS)
    bench_arguments(ap, "N up to 1e4, 500 steps, no OpenSeesPy, 1e5 steps in the last section")
    args = ap.parse_args(argv)
    quick = args.quick
    steps = args.steps or (500 if quick else 2000)
    sizes = args.sizes or ([10, 1000, 10_000] if quick else [10, 1000, 10_000, 100_000])
    if args.opensees_worker is not None:
        opensees_worker(args.opensees_worker, steps, args.dt)
        return 0
    report = Report("newmark", args)
    offsets = dict(steps=100_000, dt=1e-4, repeats=2) if quick else {}
    if args.time_offsets:
        print(f"Newmark chain benchmark, cost against the absolute time; beta {BETA}, "
              f"gamma {GAMMA}")
        print(f"{machine()}; {load_average()}")
        first, warm, how = fem_warmup(steps, args.dt)
        print(f"fem first call (N = 10, {how}): {first:.3f} s; next call: {warm:.4f} s")
        time_offsets(report, **offsets)
        return report.finish()

    dt = args.dt
    print(f"Newmark chain benchmark: {steps} steps of {dt:g} s, beta {BETA}, gamma {GAMMA}, "
          f"archive every {EVERY} steps (displacement)")
    print(f"{machine()}; {load_average()}")
    use_ops = not args.no_opensees and not quick and opensees_available()
    if not args.no_opensees and not quick and not use_ops:
        print("OpenSeesPy is not installed (pip install openseespy, or the 'bench' extra): "
              "its columns are left empty")

    first, warm, how = fem_warmup(steps, dt)
    with stopwatch() as sw:
        reference_run(10, 10, dt)                     # compile (or load) the reference kernel
    print(f"fem first call (N = 10, {how}): {first:.3f} s; next call: {warm:.4f} s; reference "
          f"kernel first call {sw.elapsed:.3f} s\n")
    report.details["fem_first_call_s"] = first

    rows, detail, checks, ratios = [], [], [], {}
    ok = True
    for n in sizes:
        reps = repeats_for(n, quick)
        study, spec, model, system, setup = fem_setup(n, steps, dt)
        dof = model.dof(f"N{loaded_node(n)}", "DX")
        best = None
        for _ in range(reps):
            times, disp = fem_integrate(system, spec, dt)
            if best is None or times["total"] < best[0]["total"]:
                best = (times, disp)
        fem_t, fem_disp = best
        ref_t, ref_rows = min((reference_run(n, steps, dt) for _ in range(reps)),
                              key=lambda r: r[0])
        scipy_t, scipy_rows = min((scipy_newmark(n, steps, dt) for _ in range(reps)),
                                  key=lambda r: r[0])
        ops_out = opensees_run(n, steps, dt) if use_ops else None

        u_fem = fem_disp[-1, dof]
        u_scipy = scipy_rows[-1, loaded_node(n) - 1]
        values = [u_fem, u_scipy, ref_rows[-1, loaded_node(n) - 1]] + (
            [ops_out["u"]] if ops_out else [])
        rel = max(abs(x - y) for x in values for y in values) / max(abs(u_scipy), 1e-300)
        traj = np.max(np.abs(fem_disp[:, 1:] - scipy_rows)) / np.max(np.abs(scipy_rows))
        same = (np.max(np.abs(fem_disp[:, 1:] - ref_rows)) / np.max(np.abs(ref_rows))
                if fem_disp.shape[0] == ref_rows.shape[0] else np.inf)
        good = rel <= TOLERANCE and traj <= TOLERANCE and fem_disp.shape[0] == len(scipy_rows)
        good = report.check(f"N = {n}: final u, fem, scipy, reference (and OpenSees)", rel,
                            TOLERANCE, good)
        good &= report.check(f"N = {n}: archived u, fem against the reference", same, ROUND_OFF)
        ok &= good
        checks.append([f"{n:,}", f"{u_fem:.10e}", f"{u_scipy:.10e}",
                       f"{ops_out['u']:.10e}" if ops_out else "-", f"{rel:.1e}", f"{traj:.1e}",
                       f"{same:.1e}", "ok" if good else "MISMATCH"])

        total = fem_t["total"]
        ops_t = ops_out["time"] if ops_out else None
        ratios[n] = (scipy_t / total, ops_t / total if ops_t else None)
        report.figure(f"fem Newmark, N = {n}, against the scipy loop", total, "s",
                      baseline=scipy_t, baseline_name="scipy splu loop",
                      target=("ratio", "<=", 1.0))
        report.figure(f"fem Newmark, N = {n}, against the reference kernel", total, "s",
                      baseline=ref_t, baseline_name="numba reference kernel",
                      target=("ratio", "<=", REFERENCE_RATIO) if n in REFERENCE_SIZES else None)
        if ops_t:
            report.figure(f"fem Newmark, N = {n}, against OpenSeesPy", total, "s",
                          baseline=ops_t, baseline_name="OpenSeesPy analyze",
                          target=("ratio", "<=", 1 / 20 if n == 10_000 else 1.0))
        rows.append([f"{n:,}", f"{steps / total:,.0f}", fmt(total, ".4f"), fmt(ref_t, ".4f"),
                     f"{total / ref_t:.2f}", fmt(scipy_t, ".4f"), f"{scipy_t / total:.2f}",
                     fmt(ops_t, ".3f"), f"{ops_t / total:.1f}" if ops_t else "-"])
        detail.append([f"{n:,}", fmt(setup["mesh"], ".4f"), fmt(setup["model"], ".4f"),
                       fmt(setup["reduce"], ".4f"), fmt(fem_t["make"], ".4f"),
                       fmt(fem_t["factor"], ".4f"), fmt(fem_t["step"], ".4f"), str(reps),
                       fmt(ops_out["build"] if ops_out else None, ".3f")])
        print(f"N = {n:,} done (fem {total:.4f} s, reference {ref_t:.4f} s, scipy "
              f"{scipy_t:.4f} s" + (f", OpenSeesPy {ops_t:.3f} s)" if ops_t else ")"),
              flush=True)
        del model, system, fem_disp, scipy_rows, ref_rows

    print("\nTime stepping (s, best of the repeats): fem / reference kernel, and baseline time / "
          "fem time for scipy and OpenSeesPy")
    print(table(["N", "fem steps/s", "fem", "reference", "fem/reference", "scipy", "scipy/fem",
                 "OpenSeesPy", "OpenSeesPy/fem"], rows))
    print("\nfem in detail (s): setup = mesh + build_model + reduce; fem time = make + factor"
          " + integrate")
    print(table(["N", "mesh", "build_model", "reduce", "make", "factor", "integrate", "repeats",
                 "OpenSeesPy build"], detail))
    print("\nFinal displacement of the loaded mass (m) and agreement")
    print(table(["N", "fem", "scipy", "OpenSeesPy", "max rel diff", "fem-scipy rows",
                 "fem-reference rows", ""], checks))
    ok &= time_offsets(report, **offsets)
    print(f"\nmax RSS of this process: {max_rss_mib():.0f} MiB; at the end: {load_average()}")

    print("\nTargets")
    slower = [f"{n:,} ({r[0]:.3f})" for n, r in ratios.items() if r[0] < 1.0]
    print(f"  fem never slower than the scipy loop: {'MISSED at ' if slower else 'met'}"
          + ", ".join(slower))
    for f in report.figures:
        if "reference kernel" in f["name"] and "met" in f:
            print(f"  {f['name']}: fem / reference = {f['ratio']:.2f} (target <= "
                  f"{REFERENCE_RATIO:g}): {'met' if f['met'] else 'MISSED'}")
    if use_ops:
        faster = all(r[1] > 1.0 for r in ratios.values())
        print(f"  fem faster than OpenSeesPy at every size: {'met' if faster else 'MISSED'}")
        if 10_000 in ratios:
            r = ratios[10_000][1]
            print(f"  fem >= 20x faster than OpenSeesPy at N = 10,000: "
                  f"{'met' if r >= 20 else 'MISSED'} ({r:.1f}x)")
    else:
        print("  OpenSeesPy targets: not evaluated (OpenSeesPy not run)")
    if not ok:
        print("\nRESULTS DISAGREE: the timings above compare different computations")
    return report.finish(0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
