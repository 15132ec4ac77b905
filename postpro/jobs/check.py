"""``fem post check``: evaluate ``[[check]]`` blocks of a TOML file against a results file."""

from __future__ import annotations

import tomllib
from pathlib import Path

from postpro.checks import CheckRow, evaluate, format_table, parse_checks
from postpro.errors import PostproError
from postpro.jobs import common


def add_parser(subparsers):
    p = subparsers.add_parser(
        "check", help="evaluate [[check]] blocks against a results file",
        description="Evaluate the [[check]] blocks of a TOML file (a study file does: its "
                    "other tables are ignored) and print the table of results. Without a "
                    "TOML file, print the checks stored in the results file by fem run. "
                    "Exit 1 if any check fails.")
    common.add_results(p)
    p.add_argument("checks", nargs="?", metavar="CHECKS.toml",
                   help="TOML file with [[check]] blocks (default: the stored checks)")
    p.set_defaults(run=run)


def run(args) -> int:
    with common.open_results(args) as results:
        if args.checks is None:
            rows = stored_rows(results)
            if not rows:
                raise PostproError(f"'{results.path}' stores no checks; give a TOML file of "
                                   "[[check]] blocks")
        else:
            rows = evaluate(results, load_checks(args.checks))
    print(format_table(rows))
    return common.EXIT_OK if all(row.passed for row in rows) else common.EXIT_FAILED


def load_checks(path):
    """The validated ``[[check]]`` blocks of a TOML file.

    Raises
    ------
    PostproError
        Missing or unreadable file, invalid TOML, no ``check`` array, or an invalid block
        (the message names its key path, ``check[2].time``).
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise PostproError(f"checks file '{path}' does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PostproError(f"cannot read checks file '{path}': {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PostproError(f"checks file '{path}' is not valid TOML: {exc}") from exc
    if "check" not in data:
        raise PostproError(f"checks file '{path}' has no [[check]] block")
    return parse_checks(data["check"])


def stored_rows(results) -> list[CheckRow]:
    """The ``/checks`` table of a results file as rows of the report (errors recomputed)."""
    rows = []
    for entry in results.checks:
        reference, computed = float(entry["reference"]), float(entry["computed"])
        absolute = bool(entry["absolute"]) if "absolute" in entry.dtype.names else False
        difference = abs(computed - reference)
        error = difference if absolute or reference == 0.0 else difference / abs(reference)
        rows.append(CheckRow(analysis=str(entry["analysis"]), quantity=str(entry["quantity"]),
                             node=str(entry["node"]), component=str(entry["component"]),
                             at=str(entry["at"]), reference=reference, computed=computed,
                             tolerance=float(entry["tolerance"]),
                             absolute=absolute or reference == 0.0, error=error,
                             passed=bool(entry["passed"])))
    return rows
