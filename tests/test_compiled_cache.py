"""Compiled code never goes stale, and survives an edit that does not touch it: numba's disk
cache is keyed, for each module of compiled code, on the sources that code depends on.

numba checks a cached function only against its own file; ``fem.compiled`` puts the
compiled code of each module in a folder named by a hash of the module and of the modules
its compiled code reads (``fem.compiled_deps``). The staleness is reproduced on a copy of
the package run in subprocesses: a compiled caller whose result depends on a compiled
helper, or on a constant, of another module.
"""

from __future__ import annotations

import json
import os
import re
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

DRIVER = '''\
"""Python code that calls compiled code ({version})."""


def twice(f, x):
    return f(f(x))
'''

CALLER = '''\
import numba

from fem.probe_driver import twice
from fem.probe_helper import shift
from fem.probe_slots import SCALE


@numba.njit(cache=True)
def through_helper(x):
    return 2.0 * shift(x)


@numba.njit(cache=True)
def through_constant(x):
    return SCALE * x


def driven(x):
    return twice(through_constant, x)
'''

RUN = '''\
import json
import fem
import fem.compiled
from fem.probe_caller import through_constant, through_helper
values = [through_helper(1.0), through_constant(1.0)]
hits = sum(sum(f.stats.cache_hits.values()) for f in (through_helper, through_constant))
folders = [f._cache._cache_path for f in (through_helper, through_constant)]
print(json.dumps({"file": fem.__file__, "root": fem.compiled.ROOT, "values": values,
                  "hits": hits, "folders": folders}))
'''


@pytest.fixture
def copy(tmp_path):
    """A copy of the installed fem and postpro packages, with the probe modules in fem."""
    src = tmp_path / "src"
    for package in (fem, postpro):
        where = Path(package.__file__).parent
        shutil.copytree(where, src / where.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc",
                                                      compiled.SHIPPED))
    (src / "fem" / "probe_helper.py").write_text(HELPER.format(shift=1.0))
    (src / "fem" / "probe_slots.py").write_text(SLOTS.format(scale=3.0))
    (src / "fem" / "probe_driver.py").write_text(DRIVER.format(version=1))
    (src / "fem" / "probe_caller.py").write_text(CALLER)
    return src


def run_probe(src: Path, cache: Path, into: Path | None = None) -> dict:
    """Import the probe of the copy in a new process, cached under ``cache`` (or compiled
    into ``into``, as the package's build does)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    env.pop(compiled.ROOT_VARIABLE, None)
    env.pop(compiled.INTO_VARIABLE, None)
    if into is not None:
        env[compiled.INTO_VARIABLE] = str(into)
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
    assert Path(first["root"]) == cache / "fem"
    folder = Path(first["folders"][0])
    assert folder.parent == cache / "fem" and folder.name.startswith("probe_caller-")
    assert list(folder.glob("*.nbi"))                           # compiled code was cached

    again = run_probe(copy, cache)                             # nothing edited: from the cache
    assert again["folders"] == first["folders"] and again["hits"] == 2
    assert again["values"] == [4.0, 3.0]

    (copy / "fem" / "probe_helper.py").write_text(HELPER.format(shift=2.0))
    helper = run_probe(copy, cache)
    assert helper["values"] == [6.0, 3.0]
    assert helper["folders"] != first["folders"] and helper["hits"] == 0

    (copy / "fem" / "probe_slots.py").write_text(SLOTS.format(scale=5.0))
    constant = run_probe(copy, cache)
    assert constant["values"] == [6.0, 5.0]
    assert constant["folders"][0] not in (first["folders"][0], helper["folders"][0])


def test_code_compiled_at_install_is_loaded_by_a_first_run(copy, tmp_path):
    """The package's build compiles into its ``_compiled`` folder; a run with an empty cache
    copies that code into its cache and loads it; an edited source compiles again."""
    shipped = copy / "fem" / compiled.SHIPPED
    built = run_probe(copy, tmp_path / "unused", into=shipped)
    assert built["hits"] == 0 and Path(built["root"]) == shipped
    assert Path(built["folders"][0]).parent == shipped
    assert not (tmp_path / "unused").exists()

    cache = tmp_path / "cache"
    first = run_probe(copy, cache)                          # an empty cache: nothing compiled
    assert first["hits"] == 2 and first["values"] == [4.0, 3.0]
    assert Path(first["folders"][0]).parent == cache / "fem"
    names = {p.name for p in Path(built["folders"][0]).iterdir()}
    assert names <= {p.name for p in Path(first["folders"][0]).iterdir()}

    (copy / "fem" / "probe_helper.py").write_text(HELPER.format(shift=2.0))
    edited = run_probe(copy, cache)             # the caller's new key: nothing shipped for it
    assert edited["values"] == [6.0, 3.0] and edited["hits"] == 0
    assert edited["folders"] != first["folders"]


def test_seeding_copies_only_what_the_folder_lacks(tmp_path):
    shipped = tmp_path / "shipped" / "integrators.kernels-0123456789abcdef"
    shipped.mkdir(parents=True)
    for name, text in (("a.nbi", "shipped a"), ("a.1.nbc", "shipped data"), (".probe", "x")):
        (shipped / name).write_text(text)
    folder = tmp_path / "cache" / shipped.name
    folder.mkdir(parents=True)
    (folder / "a.nbi").write_text("own a")
    assert compiled.seed(str(folder), [str(tmp_path / "elsewhere"), str(shipped.parent)]) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["a.1.nbc", "a.nbi"]
    assert (folder / "a.nbi").read_text() == "own a"            # never overwritten
    assert (folder / "a.1.nbc").read_text() == "shipped data"
    assert compiled.seed(str(folder), [str(shipped.parent)]) == 0
    # the shipped folder itself (the build compiling into it) takes nothing
    assert compiled.seed(str(shipped), [str(shipped.parent)]) == 0


def test_editing_python_code_that_calls_compiled_code_recompiles_nothing(copy, tmp_path):
    cache = tmp_path / "cache"
    first = run_probe(copy, cache)
    (copy / "fem" / "probe_driver.py").write_text(DRIVER.format(version=2))
    again = run_probe(copy, cache)
    assert again["folders"] == first["folders"] and again["hits"] == 2


def test_the_keys_follow_what_compiled_code_reads(copy):
    package = copy / "fem"
    (package / "probe_alone.py").write_text("NOTHING = 0\n")
    start = compiled.module_keys(str(package))
    with_numba = {p.relative_to(package).as_posix() for p in package.rglob("*.py")
                  if re.search(r"^(@numba\.njit|\w+ = numba\.njit)", p.read_text(), re.M)}
    assert "linalg.py" in with_numba and "probe_caller.py" in with_numba
    assert with_numba == set(start)
    for name in ["probe_alone.py", "probe_driver.py"] + sorted(
            p.relative_to(package).as_posix() for p in package.rglob("*.py")
            if "numba" not in p.read_text()
            and p.relative_to(package).as_posix() not in READ_BY_COMPILED_CODE):
        path = package / name
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        assert compiled.module_keys(str(package)) == start, name
        path.write_text(text)
    for name, changed in [("linalg.py", "linalg.py"), ("probe_slots.py", "probe_caller.py"),
                          ("probe_helper.py", "probe_caller.py"),
                          ("laws/columns.py", "integrators/kernels.py")]:
        path = package / name
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        keys = compiled.module_keys(str(package))
        assert keys[changed] != start[changed], name
        path.write_text(text)
    assert compiled.module_keys(str(package)) == start


#: the modules without compiled code that compiled code reads (its constants)
#: (the registry's table of the laws with events, ``fem.laws.EVENTFUL``, is made from the laws'
#: declarations, ``fem.laws.contract``: a law module without compiled code of its own, as
#: laws/isolator.py, is read through its declaration; laws/buckling_keys.py and
#: laws/plastic_keys.py give the number of stages or points the buckling and plastic laws'
#: columns hold)
READ_BY_COMPILED_CODE = {"laws/columns.py", "laws/shock_columns.py", "laws/__init__.py",
                         "laws/contract.py", "laws/isolator.py", "laws/buckling_keys.py",
                         "laws/plastic_keys.py", "probe_slots.py"}


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The temporary directory of ``tempfile``, in tmp_path."""
    import tempfile
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def test_the_cache_goes_under_numba_cache_dir_else_the_user_cache(tmp_path, temp_dir):
    root = compiled.cache_root({"NUMBA_CACHE_DIR": str(tmp_path / "given")})
    assert Path(root) == tmp_path / "given" / "fem" and Path(root).is_dir()
    root = compiled.cache_root({"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert Path(root) == tmp_path / "xdg" / "fem" / "numba"
    # a child process of fem that cannot write the first choice: the root of its parent
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    child = {"NUMBA_CACHE_DIR": str(blocked), compiled.ROOT_VARIABLE: root}
    assert compiled.cache_root(child) == root


def test_an_unwritable_cache_falls_back_to_a_private_temporary_folder(tmp_path, temp_dir):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    for environ in ({"NUMBA_CACHE_DIR": str(blocked)}, {"XDG_CACHE_HOME": str(blocked)}):
        root = compiled.cache_root(environ)
        assert Path(root).parent == temp_dir
        if hasattr(os, "getuid"):
            assert Path(root).stat().st_mode & 0o077 == 0


def test_old_folders_of_a_module_are_pruned(tmp_path):
    root = tmp_path / "root"
    keys = [f"{i:016x}" for i in range(8)]
    for i, key in enumerate(keys):
        for name in (f"linalg-{key}", f"links.law-{key}", key):
            (root / name).mkdir(parents=True)
            os.utime(root / name, (1000.0 + i, 1000.0 + i))
    (root / "notes").mkdir()
    compiled.prune(str(root), keep=3, current=f"linalg-{keys[0]}")
    assert sorted(p.name for p in root.glob("linalg-*")) == \
        sorted(f"linalg-{k}" for k in (keys[0], keys[7], keys[6]))
    assert len(list(root.glob("links.law-*"))) == 8 and (root / "notes").is_dir()
    compiled.prune(str(root), keep=2, current=keys[1])          # the folders of one key
    assert sorted(p.name for p in root.iterdir() if len(p.name) == 16) == [keys[1], keys[7]]


def test_the_folder_of_a_module_names_it():
    assert compiled.folder_name("integrators/kernels.py", "0123456789abcdef") == \
        "integrators.kernels-0123456789abcdef"


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
