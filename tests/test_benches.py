"""Every benchmark of bench/ runs in its quick form and prints its figures as JSON.

The scripts are found by a glob (bench/*.py, those starting with "_" are helpers), so that a
new benchmark is tested as soon as it is added. Each runs in a subprocess with ``--quick
--json``: its stdout must be one JSON object whose figures carry positive values (but for
differences of two measurements, flagged "signed"), baselines and ratios, and whose checks
(fem against the benchmark's baselines) hold. Targets are not asserted: a quick run is too
short for its timings to mean much.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

# the benchmarks compile and time their own runs: a run of their own, not the default suite
pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted(p for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))
#: a quick run takes a few seconds with numba's disk cache warm; this only stops one that
#: hangs (with a cold cache a first run compiles for minutes)
TIMEOUT_S = 1200


def test_the_glob_finds_the_benchmarks():
    names = {p.stem for p in BENCHES}
    assert {"newmark", "impact", "industrial_modal", "many_contacts", "memory",
            "hysteresis"} <= names


@pytest.mark.parametrize("script", BENCHES, ids=[p.stem for p in BENCHES])
def test_quick_json(script):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script), "--quick", "--json"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"{script.name} exited with {proc.returncode}:\n" \
                                 f"{proc.stderr[-3000:]}"
    doc = json.loads(proc.stdout)          # stdout holds the JSON object and nothing else
    assert doc["bench"] == script.stem and doc["quick"] is True
    assert doc["machine"]["cores"] >= 1
    assert len(doc["load_average"]["start"]) == 3
    figures = doc["figures"]
    assert figures, f"{script.name}: no figures"
    compared = [f for f in figures if "baseline" in f]
    assert compared, f"{script.name}: no figure has a baseline"
    for f in figures:
        assert f["name"] and f["unit"]
        assert math.isfinite(f["value"]) and (f["value"] > 0 or f.get("signed")), f
        if "baseline" in f:
            assert math.isfinite(f["baseline"]) and f["baseline"] > 0, f
            assert f["ratio"] > 0 and math.isclose(f["ratio"], f["value"] / f["baseline"]), f
        if "target" in f:
            assert isinstance(f["met"], bool), f
    for c in doc["checks"]:
        assert c["ok"], f"{script.name}: check failed: {c}"
    assert doc["status"] == 0
