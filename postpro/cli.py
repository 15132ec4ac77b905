"""``fem post SUB RESULTS [options]``: post-processing subcommands of a results file (and
``fem post sweep DIR`` of the table of a sweep).

Exit codes: 0 success, 1 a check failed or a comparison exceeded its tolerance, 2 invalid
input (file, analysis, node, component, field, option), printed as one ``error:`` line.
"""

from __future__ import annotations

import argparse
import os
import sys

from postpro.errors import PostproError
from postpro.jobs import (check, common, compare, energy, export, hysteresis, info, modes, plot,
                          series, shocks, spectra, spectrum, sweep)

JOBS = (series, plot, spectra, spectrum, check, energy, shocks, hysteresis, modes, compare,
        export, info, sweep)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are PostproError, reported on one line like the others."""

    def error(self, message):
        raise PostproError(f"{self.prog}: {message}")


def parser() -> argparse.ArgumentParser:
    """The ``fem post`` argument parser, one subparser per job module."""
    p = _Parser(prog="fem post", description="Post-process a fem results file.",
                epilog="Run 'fem post SUB --help' for the options of one subcommand.")
    subparsers = p.add_subparsers(dest="sub", metavar="SUB", required=True,
                                  parser_class=_Parser)
    for job in JOBS:
        job.add_parser(subparsers)
    return p


def main(argv=None) -> int:
    """Run one subcommand; return its exit code (0, 1 or 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["help"]:
        # 'fem post --help' is answered by fem's own parser: give this help another door
        parser().print_help()
        return common.EXIT_OK
    args = None
    try:
        args = parser().parse_args(argv)
        return args.run(args)
    except PostproError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return common.EXIT_INVALID
    except SystemExit as exc:  # --help ends the parse with exit code 0
        return exc.code if isinstance(exc.code, int) else common.EXIT_OK
    except BrokenPipeError:
        # the reader (head, less) went away: stop quietly, as other command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return common.EXIT_OK
    except OSError as exc:
        if not exc.filename:
            # HDF5's errors on reading damaged data (no file name of their own)
            print(f"error: {damaged(getattr(args, 'results', None), exc)}", file=sys.stderr)
            return common.EXIT_INVALID
        print(f"error: {exc.strerror or exc} '{exc.filename}'", file=sys.stderr)
        return common.EXIT_INVALID
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            MemoryError, RuntimeError) as exc:
        # what a results file damaged outside fem makes the readers meet (h5py raises
        # RuntimeError on a loop of soft links)
        print(f"error: {damaged(getattr(args, 'results', None), exc)}", file=sys.stderr)
        return common.EXIT_INVALID


def damaged(path, exc: BaseException) -> str:
    """One line for a results file the readers could not make sense of."""
    name = f"'{path}'" if path else "the results file"
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return (f"{name} is damaged or was not written by fem ({type(exc).__name__}"
            f"{': ' + detail[:200] if detail else ''})")


if __name__ == "__main__":
    raise SystemExit(main())
