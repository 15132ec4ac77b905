"""Property-based tests of bad and extreme input (hypothesis): generated studies (a valid one
with keys changed to numbers, strings, lists, tables, huge integers, nan, inf, -0.0, or
removed, or unknown keys added), option sets of `fem post`, and results files with bytes
flipped. For each: the exit code is 0, 1, 2 or 3, nothing is a traceback, a refused study
(2) leaves no file, a complete run (0, 1) leaves a complete and finite file, a failed one (3)
a file marked "failed", and the inputs are unchanged byte for byte.

The suite runs the "ci" profile of tests/conftest.py; HYPOTHESIS_PROFILE=deep runs 2,000
examples a test."""

from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fem.cli import main  # noqa: E402
from postpro import layout  # noqa: E402

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"

BASE = {
    "study": {"title": "hostile"},
    "mesh": {"nodes": {"A": [0.0, 0.0, 0.0], "B": [1.0, 0.0, 0.0]},
             "cells": {"S": {"type": "SEG2", "nodes": ["A", "B"]}}},
    "model": {"components": ["DX"]},
    "discrete": [{"cells": ["S"], "stiffness": 100.0, "damping": 0.5},
                 {"nodes": ["B"], "mass": 2.0}],
    "constraint": [{"nodes": ["A"], "DX": 0.0}],
    "functions": {"ramp": {"table": [[0.0, 0.0], [0.1, 1.0]], "right": "constant"}},
    "load": [{"name": "push", "nodes": ["B"], "FX": 1.0, "function": "ramp"}],
    "initial": [{"nodes": ["B"], "velocity": {"DX": 0.1}}],
    "link": [{"name": "stop", "kind": "shock", "nodes": ["B"], "normal": [1.0, 0.0, 0.0],
              "gap": 0.01, "stiffness": 1e4}],
    "analysis": [{"name": "modes", "kind": "modes", "count": 1},
                 {"name": "run", "kind": "transient", "scheme": "newmark", "end": 0.2,
                  "step": 0.005, "links": ["stop"], "archive": {"every": 2}}],
    "check": [{"analysis": "run", "time": 0.2, "node": "B", "component": "DX",
               "quantity": "displacement", "reference": 0.0, "tolerance": 1.0,
               "absolute": True}],
}

#: where a generated value may go: paths into BASE
PATHS = [
    ("discrete", 0, "stiffness"), ("discrete", 0, "damping"), ("discrete", 1, "mass"),
    ("discrete", 0, "cells"), ("discrete", 1, "nodes"), ("mesh", "nodes", "B"),
    ("mesh", "cells", "S", "type"), ("mesh", "cells", "S", "nodes"), ("model", "components"),
    ("constraint", 0, "DX"), ("functions", "ramp", "table"), ("load", 0, "FX"),
    ("load", 0, "function"), ("initial", 0, "velocity"), ("link", 0, "gap"),
    ("link", 0, "stiffness"), ("link", 0, "normal"), ("link", 0, "kind"),
    ("analysis", 0, "count"), ("analysis", 1, "end"), ("analysis", 1, "step"),
    ("analysis", 1, "scheme"), ("analysis", 1, "archive"), ("analysis", 1, "links"),
    ("analysis", 1, "start"), ("check", 0, "time"), ("check", 0, "node"),
    ("check", 0, "tolerance"), ("study", "title"), ("analysis", 1, "events"),
]

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-300, -1.0, 1e308, 1e-12, 1e12, 0.5, 1.0]),
    st.integers(min_value=-10, max_value=10),
    st.integers(min_value=10**18, max_value=10**400),
)
leaves = st.one_of(numbers, st.booleans(), st.text(max_size=12),
                   st.sampled_from(["A", "B", "S", "DX", "newmark", "exact", "rk4", "shock",
                                    "impact", "SEG2", "POI1", "ramp", "locate"]))
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["DX", "a", "every", "x"]),
                                                 inner, max_size=3)), max_leaves=8)
REMOVE = object()


def set_path(data, path, value):
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is REMOVE:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
                             for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {toml_value(x)}' for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_text(data: dict) -> str:
    lines = []
    for name, block in data.items():
        if isinstance(block, list):
            for item in block:
                lines.append(f"[[{name}]]")
                lines += [f'"{k}" = {toml_value(v)}' for k, v in item.items()]
        else:
            lines.append(f"[{name}]")
            lines += [f'"{k}" = {toml_value(v)}' for k, v in block.items()]
    return "\n".join(lines) + "\n"


def run_cli(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def assert_outcome(code, err, out: Path):
    assert code in (0, 1, 2, 3), (code, err)
    assert "Traceback" not in err, err
    partial = out.with_name(out.name + ".partial")
    if code == 2:
        assert not out.exists() and not partial.exists(), err
        assert err.startswith("error: "), err
    elif code in (0, 1):
        assert not partial.exists()
        with h5py.File(out) as f:
            assert f.attrs["status"] == layout.STATUS_COMPLETE
            for name, group in f[layout.ANALYSES].items():
                for key in ("time", "displacement"):
                    if key in group:
                        assert np.all(np.isfinite(group[key][:])), (name, key)
    else:
        path = out if out.exists() else partial
        with h5py.File(path) as f:
            assert f.attrs["status"] == layout.STATUS_FAILED


def test_the_base_study_runs():
    with tempfile.TemporaryDirectory() as tmp:
        study = Path(tmp) / "s.toml"
        study.write_text(toml_text(BASE), encoding="utf-8")
        code, err = run_cli(["run", str(study), "--out", str(Path(tmp) / "r.h5"), "--quiet"])
        assert code == 0, err


@given(changes=st.lists(st.tuples(st.sampled_from(PATHS),
                                  st.one_of(values, st.just(REMOVE))), min_size=1, max_size=3),
       extra=st.one_of(st.none(), st.tuples(st.sampled_from(["study", "model", "analysis"]),
                                            leaves)))
def test_generated_studies_end_cleanly(changes, extra):
    import copy

    data = copy.deepcopy(BASE)
    for path, value in changes:
        try:
            set_path(data, path, value)
        except (KeyError, IndexError, TypeError):
            pass                      # an earlier change removed the path
    if extra is not None:
        block, value = extra
        target = data[block][-1] if isinstance(data[block], list) else data[block]
        target["unexpected_key"] = value
    with tempfile.TemporaryDirectory() as tmp:
        study, out = Path(tmp) / "s.toml", Path(tmp) / "r.h5"
        text = toml_text(data)
        study.write_bytes(text.encode("utf-8"))
        code, err = run_cli(["run", str(study), "--out", str(out), "--quiet",
                             "--max-steps", "20000"])
        assert_outcome(code, err, out)
        assert study.read_bytes() == text.encode("utf-8")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "s.toml").write_text(toml_text(BASE), encoding="utf-8")
    out = folder / "r.h5"
    code, err = run_cli(["run", str(folder / "s.toml"), "--out", str(out), "--quiet"])
    assert code == 0, err
    return out


OPTIONS = {
    "--analysis": st.sampled_from(["run", "modes", "nowhere", ""]),
    "--node": st.sampled_from(["A", "B", "Z", ""]),
    "--component": st.sampled_from(["DX", "DY", "FX", "x"]),
    "--start": st.sampled_from(["0", "-1", "0.1", "1e308", "nan", "x"]),
    "--end": st.sampled_from(["0.2", "0", "-5", "inf", "x"]),
    "--every": st.sampled_from(["1", "0", "-3", "1e3", "x", "99999999999999999999"]),
    "--link": st.sampled_from(["stop", "nowhere"]),
    "--digits": st.sampled_from(["3", "0", "400"]),
}


@given(sub=st.sampled_from(["series", "check", "energy", "shocks", "hysteresis", "info",
                            "compare", "nowhere"]),
       options=st.dictionaries(st.sampled_from(sorted(OPTIONS)), st.just(None), max_size=4),
       data=st.data())
def test_post_option_sets_end_cleanly(results, sub, options, data):
    argv = ["post", sub, str(results)]
    for name in options:
        argv += [name, data.draw(OPTIONS[name])]
    code, err = run_cli(argv)
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("error: ") or "usage:" in err, err


WORKER = """\
import sys
from fem.cli import main
sys.exit(main(sys.argv[1:]))
"""


@settings(max_examples=2000 if DEEP else 6)
@given(flips=st.lists(st.tuples(st.floats(0.0, 1.0, exclude_max=True),
                                st.integers(1, 255)), min_size=1, max_size=8))
def test_damaged_results_files_end_cleanly(results, flips):
    data = bytearray(results.read_bytes())
    for where, mask in flips:
        data[int(where * len(data))] ^= mask
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.h5"
        path.write_bytes(bytes(data))
        for argv in (["info", str(path)],
                     ["post", "series", str(path), "-a", "run", "-n", "B", "-c", "DX"]):
            # a child process: a damaged file must not take the test run down with it
            proc = subprocess.run([sys.executable, "-c", WORKER, *argv], capture_output=True,
                                  text=True, timeout=120)
            assert proc.returncode in (0, 1, 2), (argv, proc.returncode, proc.stderr[-2000:])
            assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert path.read_bytes() == bytes(data)           # read-only
