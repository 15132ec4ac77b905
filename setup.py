"""The package's build: setuptools, plus its compiled kernels.

After the sources are copied into the build folder, ``fem warmup`` runs on them with
``_FEM_COMPILE_INTO`` pointing at the package's ``_compiled`` folder (``fem.compiled``): the
step loops of every scheme are compiled there, for this machine, and installed with the
package, so that a first run loads them instead of compiling them. It needs the build
environment to hold fem's run-time dependencies (``[build-system] requires``). When it
cannot run, the package is built without them (each kernel is then compiled at its first use,
as it always is for code the install did not compile).

``FEM_COMPILE_AT_INSTALL=0`` skips it; an editable install (``pip install -e .``) never does
it (its kernels are cached where the sources are edited).
"""

import os
import subprocess
import sys
import time

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    """``build_py``, then ``fem warmup`` into ``<build_lib>/fem/_compiled``."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) \
                or os.environ.get("FEM_COMPILE_AT_INSTALL", "1").strip() in ("0", "no", "false"):
            return
        build_lib = os.path.abspath(self.build_lib)
        into = os.path.join(build_lib, "fem", "_compiled")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (build_lib, env.get("PYTHONPATH")) if p)
        env["_FEM_COMPILE_INTO"] = into
        env.pop("NUMBA_CACHE_DIR", None)
        start = time.perf_counter()
        print(f"fem: compiling the step loops into {into}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "fem", "warmup"], env=env, cwd=build_lib)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(f"fem: the kernels could not all be compiled at install (status "
                  f"{done.returncode}, {seconds:.0f} s); the others compile at their first "
                  f"use", file=sys.stderr, flush=True)
        else:
            print(f"fem: kernels compiled in {seconds:.0f} s", file=sys.stderr, flush=True)


setup(cmdclass={"build_py": BuildWithKernels})
