"""The layout of the code, held by tests: the import contracts of pyproject.toml
(import-linter: fem's layers import downward only, postpro never imports fem's solvers, fem's
numerical layers never import postpro, no import cycles) and files of a readable size."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600


def test_import_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or \
        shutil.which("lint-imports")
    assert exe, "lint-imports is not installed (pip install '.[test]')"
    done = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_no_module_of_fem_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "fem").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
