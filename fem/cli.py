"""Command line: ``fem run | sweep | info | mesh | schemes | warmup | post``; it only wires the library.

Exit codes: 0 success, 1 a check failed, 2 invalid input (study, mesh, results file),
3 an analysis failed (divergence, singular matrix; for a sweep: a variant did not complete).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import warnings

from fem import __version__
from fem.errors import SolverError, StudyError

EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID, EXIT_ANALYSIS_FAILED = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fem", description="Dynamics of discrete structures.")
    p.add_argument("--version", action="version", version=f"fem {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a study file and write its results (HDF5)")
    run.add_argument("study", help="study file (TOML)")
    run.add_argument("--out", "-o", help="results file (default: [output] file of the study)")
    run.add_argument("--max-steps", type=_step_count, default=None, metavar="N",
                     help="most time steps a transient analysis may take (default 1e9)")
    for q in (run,):
        q.add_argument("--quiet", "-q", action="store_true", help="print errors only")
        q.add_argument("--verbose", "-v", action="store_true", help="print each analysis")
    _add_sweep(sub)
    info = sub.add_parser("info", help="what a results file holds")
    info.add_argument("results")
    mesh = sub.add_parser("mesh", help="nodes, cells and groups of a mesh file")
    mesh.add_argument("mesh")
    mesh.add_argument("--all", action="store_true",
                      help="list every cell and group member (default: the first 20 of each)")
    schemes = sub.add_parser("schemes", help="the transient schemes and the link features "
                                             "each one offers")
    schemes.add_argument("--keys", action="store_true",
                         help="also list the keys each scheme accepts, with their defaults")
    schemes.add_argument("--explain", metavar="STUDY", default=None,
                         help="for each transient analysis of STUDY, the step loop that will "
                              "run and why")
    warmup = sub.add_parser("warmup", help="compile the step loops of every scheme (a first "
                                           "run then starts at once)")
    warmup.add_argument("--jobs", "-j", type=_job_count, default=None, metavar="N",
                        help="processes that compile in parallel (default: the cores)")
    post = sub.add_parser("post", help="post-process a results file (fem post --help)",
                          add_help=False)
    post.add_argument("args", nargs=argparse.REMAINDER)
    return p


def _add_sweep(sub):
    from postpro.jobs.common import positive_int

    sweep = sub.add_parser(
        "sweep", help="run variants of a study (a grid, lists in step or random draws) and "
                      "tabulate them (docs/sweeps.md)")
    sweep.add_argument("study", help="study file (TOML)")
    sweep.add_argument("--vary", action="append", default=[], metavar="PATH=VALUES",
                       required=True,
                       help="PATH=v1,v2,... or PATH=start:stop:count (both ends included); "
                            "with --random, PATH=uniform:a:b or PATH=normal:mu:sigma; "
                            "repeatable")
    sweep.add_argument("--zip", action="store_true",
                       help="take the lists in step instead of their full product")
    sweep.add_argument("--random", type=positive_int, metavar="N",
                       help="N random draws of the parameters instead of a grid")
    sweep.add_argument("--seed", type=int, help="seed of the random draws")
    sweep.add_argument("--out", "-o", required=True, metavar="DIR",
                       help="sweep folder: results files, table, definition")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, metavar="N",
                       help="run on a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a Dask cluster: scheduler address or scheduler file")
    sweep.add_argument("--collect", action="append", default=[], metavar="NODE.COMPONENT",
                       help="tabulate the largest |u| of this dof in each transient analysis; "
                            "repeatable")
    sweep.add_argument("--quiet", "-q", action="store_true", help="print errors only")


def _job_count(text: str) -> int:
    """argparse type of --jobs: a whole number from 1 to 256."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got '{text}'") \
            from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"expected 1 to 256 processes, got {text}")
    return value


def _step_count(text: str) -> int:
    """argparse type of --max-steps: a positive integer, also written 1e9."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of steps, got '{text}'") from None
    if not (1 <= value < 1e18) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected a whole number of steps from 1 to 1e18, "
                                         f"got {text}")
    return int(value)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["post"]:
        # everything after "post" belongs to postpro's own parser, --help included
        argv = ["post", "--", *argv[1:]] if len(argv) > 1 else ["post", "help"]
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "sweep":
            return _sweep(args)
        if args.command == "info":
            return _info(args.results)
        if args.command == "mesh":
            from fem.mesh import read

            print(read(args.mesh).summary(None if args.all else 20))
            return EXIT_OK
        if args.command == "schemes":
            if args.explain is not None:
                return _explain(args.explain)
            return _schemes(args.keys)
        if args.command == "warmup":
            from fem.warmup import run as warm_up

            return warm_up(args.jobs)
        if args.command == "post":
            from postpro.cli import main as post_main

            rest = args.args[1:] if args.args[:1] == ["--"] else args.args
            return post_main(rest)
    except StudyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except SolverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    except Terminated:
        print("terminated (the results file, if any, is marked \"failed\")", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:   # a postpro error has its own class; keep the CLI traceback-free
        from postpro.cli import damaged
        from postpro.errors import PostproError

        if isinstance(exc, PostproError):
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_INVALID
        refused = _refused_path(exc)
        if refused is not None:
            print(f"error: {refused}", file=sys.stderr)
            return EXIT_INVALID
        if args.command == "info":
            print(f"error: {damaged(args.results, exc)}", file=sys.stderr)
            return EXIT_INVALID
        if args.command != "run":
            print(f"error: internal error of fem ({type(exc).__name__}: {exc})",
                  file=sys.stderr)
            return EXIT_INVALID
        if isinstance(exc, MemoryError):
            print(f"error: not enough memory ({exc}); the results file, if any, is marked "
                  f"\"failed\"", file=sys.stderr)
            return EXIT_ANALYSIS_FAILED
        print(f"error: internal error of fem ({type(exc).__name__}: {exc}); the results "
              f"file, if any, is marked \"failed\"", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    return EXIT_OK


def _refused_path(exc: BaseException) -> str | None:
    """The line for a path the system refuses whatever the files present (a name too long,
    a NUL byte), or None for any other error."""
    import errno

    from fem.errors import shown_path

    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        name = f"{shown_path(exc.filename)}: " if exc.filename else ""
        return f"{name}{exc.strerror} (a file name may be at most 255 bytes)"
    if isinstance(exc, ValueError) and "null byte" in str(exc):
        return "a path holds a NUL byte, which no file name may hold"
    return None


def _run(args) -> int:
    from fem.runner import run_study

    log = (lambda msg: print(msg, file=sys.stderr)) if args.verbose and not args.quiet else None
    with warnings.catch_warnings():
        if args.quiet:
            warnings.simplefilter("ignore")
        else:
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning
        with _terminate_cleanly():
            report = run_study(args.study, args.out, log=log, progress=not args.quiet,
                               max_steps=args.max_steps)
    if not args.quiet:
        for note in report.notes:
            print(note)
    if report.failed_analysis:
        print(f"error: {report.message}", file=sys.stderr)
        print(f"results (incomplete): {report.output}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    if report.check_rows and not args.quiet:
        from postpro.checks import format_table

        print(format_table(report.check_rows))
    if not args.quiet:
        print(f"results: {report.output}")
    return EXIT_OK if report.checks_passed else EXIT_CHECK_FAILED


def _sweep(args) -> int:
    import fem
    from fem.sweeps.values import parse_varies

    parameters = parse_varies(args.vary, random=args.random is not None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if args.quiet else "always")
        warnings.showwarning = _show_warning
        with _terminate_cleanly():
            result = fem.sweep(args.study, parameters, args.out, samples=args.random,
                               seed=args.seed, zip=args.zip, client=args.scheduler,
                               workers=args.workers, collect=args.collect,
                               progress=not args.quiet and sys.stderr.isatty())
    for row in result.rows:
        if row["status"] != "complete":
            print(f"variant {row['variant']}: {row['status']}: {row['message']}",
                  file=sys.stderr)
    if not args.quiet:
        print(result.summary())
        print(f"table: {result.table}")
    if not result.all_complete:
        return EXIT_ANALYSIS_FAILED
    return EXIT_CHECK_FAILED if result.checks_failed else EXIT_OK


class Terminated(KeyboardInterrupt):
    """SIGTERM during a run: unwinds like Ctrl-C, so that the results file is closed and
    marked "failed" (the step loops return to Python between chunks of steps)."""


@contextlib.contextmanager
def _terminate_cleanly():
    def stop(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:            # not the main thread: leave the default
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def _schemes(keys: bool) -> int:
    from fem import catalog

    print(catalog.matrix_text())
    if keys:
        print()
        print(catalog.keys_text())
    return EXIT_OK


def _explain(path) -> int:
    """``fem schemes --explain STUDY``: the loop of each transient analysis, and why."""
    from fem.analyses.transient import loop_choice
    from fem.runner import prepare

    study, model = prepare(path)
    for spec in study.analyses:
        if spec.kind != "transient":
            continue
        p = spec.params
        choice = loop_choice(study, model, spec)
        print(f"{spec.name} ({p['basis']} {p['scheme']}): {choice.loop} loop: {choice.why}")
    return EXIT_OK


def _info(path) -> int:
    import postpro

    results = postpro.open(path, require_complete=False)
    print(results.describe() if hasattr(results, "describe") else repr(results))
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
