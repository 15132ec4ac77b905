"""Compiled code never goes stale: numba's disk cache is keyed on the compiled sources.

numba checks a cached function only against its own file; ``fem.compiled`` points the cache
at a folder named by a hash of all the compiled sources. The staleness is reproduced on a
copy of the package run in subprocesses: a compiled caller whose result depends on a
compiled helper, or on a constant, of another module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fem
import postpro
from fem import compiled

HELPER = '''\
import numba


@numba.njit(cache=True)
def shift(x):
    return x + {shift}
'''

SLOTS = '''\
"""Constants frozen into compiled code, in a module without any."""
SCALE = {scale}
'''

CALLER = '''\
import numba

from fem.probe_helper import shift
from fem.probe_slots import SCALE


@numba.njit(cache=True)
def through_helper(x):
    return 2.0 * shift(x)


@numba.njit(cache=True)
def through_constant(x):
    return SCALE * x
'''

RUN = '''\
import json
import fem
import fem.compiled
from fem.probe_caller import through_constant, through_helper
values = [through_helper(1.0), through_constant(1.0)]
hits = sum(sum(f.stats.cache_hits.values()) for f in (through_helper, through_constant))
print(json.dumps({"file": fem.__file__, "folder": fem.compiled.FOLDER, "values": values,
                  "hits": hits}))
'''


@pytest.fixture
def copy(tmp_path):
    """A copy of the installed fem and postpro packages, with the probe modules in fem."""
    src = tmp_path / "src"
    for package in (fem, postpro):
        where = Path(package.__file__).parent
        shutil.copytree(where, src / where.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    (src / "fem" / "probe_helper.py").write_text(HELPER.format(shift=1.0))
    (src / "fem" / "probe_slots.py").write_text(SLOTS.format(scale=3.0))
    (src / "fem" / "probe_caller.py").write_text(CALLER)
    return src


def run_probe(src: Path, cache: Path) -> dict:
    """Import the probe of the copy in a new process, cached under ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    env.pop(compiled.ROOT_VARIABLE, None)
    done = subprocess.run([sys.executable, "-c", RUN], cwd=src, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert Path(out["file"]).parent == src / "fem"
    return out


def test_editing_a_helper_or_a_constant_of_another_file_is_never_stale(copy, tmp_path):
    cache = tmp_path / "cache"
    first = run_probe(copy, cache)
    assert first["values"] == [4.0, 3.0]
    assert Path(first["folder"]).parent == cache / "fem"
    assert list(Path(first["folder"]).rglob("*.nbi"))          # compiled code was cached

    again = run_probe(copy, cache)                             # nothing edited: from the cache
    assert again["folder"] == first["folder"] and again["hits"] == 2
    assert again["values"] == [4.0, 3.0]

    (copy / "fem" / "probe_helper.py").write_text(HELPER.format(shift=2.0))
    helper = run_probe(copy, cache)
    assert helper["values"] == [6.0, 3.0]
    assert helper["folder"] != first["folder"] and helper["hits"] == 0

    (copy / "fem" / "probe_slots.py").write_text(SLOTS.format(scale=5.0))
    constant = run_probe(copy, cache)
    assert constant["values"] == [6.0, 5.0]
    assert constant["folder"] not in (first["folder"], helper["folder"])


def test_the_hash_follows_the_compiled_sources_only(copy):
    package = copy / "fem"
    (package / "probe_alone.py").write_text("NOTHING = 0\n")
    start = compiled.source_hash(str(package))
    sources = compiled.compiled_sources(str(package))
    with_numba = {p.relative_to(package).as_posix() for p in package.rglob("*.py")
                  if "numba" in p.read_text()}
    assert "linalg.py" in with_numba and with_numba <= set(sources)
    assert "probe_slots.py" in sources                  # imported by compiled code
    assert "probe_alone.py" not in sources

    (package / "probe_alone.py").write_text("NOTHING = 1\n")       # imported by no compiled code
    assert compiled.source_hash(str(package)) == start
    for name in ("linalg.py", "probe_slots.py"):
        path = package / name
        text = path.read_text()
        path.write_text(text + "\n")
        assert compiled.source_hash(str(package)) != start
        path.write_text(text)
    assert compiled.source_hash(str(package)) == start


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The temporary directory of ``tempfile``, in tmp_path."""
    import tempfile
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


KEY = "0123456789abcdef"


def test_the_cache_goes_under_numba_cache_dir_else_the_user_cache(tmp_path, temp_dir):
    root, folder = compiled.cache_folder(KEY, {"NUMBA_CACHE_DIR": str(tmp_path / "given")})
    assert Path(folder) == tmp_path / "given" / "fem" / KEY and Path(folder).is_dir()
    root, folder = compiled.cache_folder(KEY, {"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert Path(folder) == tmp_path / "xdg" / "fem" / "numba" / KEY
    # a child process of fem: the folder fem set is recognized, a new hash goes beside it
    child = {"NUMBA_CACHE_DIR": folder, compiled.ROOT_VARIABLE: root}
    assert compiled.cache_folder("fedcba9876543210", child) == \
        (root, os.path.join(root, "fedcba9876543210"))


def test_an_unwritable_cache_falls_back_to_a_private_temporary_folder(tmp_path, temp_dir):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    for environ in ({"NUMBA_CACHE_DIR": str(blocked)}, {"XDG_CACHE_HOME": str(blocked)}):
        root, folder = compiled.cache_folder(KEY, environ)
        assert Path(root).parent == temp_dir and Path(folder) == Path(root) / KEY
        if hasattr(os, "getuid"):
            assert Path(root).stat().st_mode & 0o077 == 0


def test_old_hash_folders_are_pruned(tmp_path):
    root = tmp_path / "root"
    keys = [f"{i:016x}" for i in range(8)]
    for i, key in enumerate(keys):
        (root / key).mkdir(parents=True)
        os.utime(root / key, (1000.0 + i, 1000.0 + i))
    (root / "notes").mkdir()
    compiled.prune(str(root), keep=3, current=keys[0])
    assert sorted(p.name for p in root.iterdir()) == sorted([keys[0], keys[7], keys[6], "notes"])


def test_progress_shows_compiling_kernels_while_numba_compiles_even_for_a_short_run():
    """A short run has no bar, until numba compiles: then the bar shows, labelled
    "compiling kernels", and goes back to the analysis name when compilation ends."""
    import io

    import numba

    from fem.transient import Progress

    @numba.njit
    def bump(x):
        return x + 1.0

    stream = io.StringIO()
    with Progress(10, "shake", stream=stream) as progress:
        assert progress.bar is None
        assert bump(1.0) == 2.0          # a cache miss: compiles now
        assert progress.bar is not None and progress.bar.desc.startswith("shake")
        assert "compiling" not in progress.bar.desc
        progress.update(10)
        assert progress.bar.n == 10
    assert "shake: compiling kernels" in stream.getvalue()
    assert progress.bar is None and progress.listener is None
    stream = io.StringIO()
    with Progress(10, "calm", stream=stream) as progress:
        assert bump(2.0) == 3.0          # compiled already: no bar
    assert progress.bar is None and stream.getvalue() == ""


def test_a_transient_analysis_reports_every_step_to_its_progress(monkeypatch, tmp_path):
    from fem import transient
    from fem.analyses import transient as analysis
    from fem.runner import run_study

    counted = {}

    class Counting(transient.Progress):
        def update(self, steps):
            counted[self.name] = counted.get(self.name, 0) + steps

    monkeypatch.setattr(analysis.Progress, "for_terminal",
                        classmethod(lambda cls, total, name: Counting(total, name)))
    study = Path(__file__).resolve().parents[1] / "studies" / "v3_chain3.toml"
    report = run_study(study, tmp_path / "v3.h5", progress=True)
    import postpro

    with postpro.open(report.output) as results:
        steps = {name: results.analysis(name).steps for name in results.analyses
                 if results.analysis(name).kind == "transient"}
    fixed = {n: s for n, s in steps.items() if n in ("newmark", "central_difference")}
    assert fixed and all(counted[n] == s for n, s in fixed.items())
