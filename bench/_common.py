"""Shared pieces of the benchmarks: the spring-mass chain (study + mesh built from arrays),
timers, memory figures, a plain-text table printer, and the figures of a run (``Report``:
``--quick`` and ``--json`` for every benchmark).

The chain: node N0 clamped, then ``n`` nodes N1 ... Nn in a row along X, 1 m apart; SEG2 cell
Si joins N(i) and N(i+1) and carries a spring and a damper; every node but N0 carries a
lumped mass.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fem.mesh import SEG2, Mesh  # noqa: E402
from fem.study import Study, parse_study  # noqa: E402

MASS = 10.0          # kg
STIFFNESS = 1e5      # N/m
DAMPING = 50.0       # N.s/m


def chain_study(components=("DX",), *, mass=MASS, stiffness=STIFFNESS, damping=DAMPING,
                force: float | None = None, step: float = 1e-3, steps: int = 2000,
                every: int = 100) -> Study:
    """The chain's study, naming only groups (CLAMP, MASSES, SPRINGS, LOADED).

    ``parse_study`` wants a mesh section; the one given here is a stand-in that is never
    built: the benchmarks hand :func:`chain_mesh` to ``build_model`` directly.
    """
    data = {
        "study": {"title": "benchmark chain"},
        "mesh": {"nodes": {"N0": [0.0, 0.0, 0.0]}},
        "model": {"components": list(components)},
        "discrete": [
            {"cell_groups": ["SPRINGS"], "stiffness": stiffness, "damping": damping},
            {"node_groups": ["MASSES"], "mass": mass},
        ],
        "constraint": [{"node_groups": ["CLAMP"], **{c: 0.0 for c in components}}],
    }
    if force is not None:
        data["load"] = [{"name": "step", "kind": "force", "node_groups": ["LOADED"],
                         "FX": force}]
        data["analysis"] = [{"name": "transient", "kind": "transient", "scheme": "newmark",
                             "beta": 0.25, "gamma": 0.5, "start": 0.0, "end": step * steps,
                             "step": step, "archive": {"every": every},
                             "fields": ["displacement"]}]
    return parse_study(data, path=ROOT / "bench" / "chain.toml")


def loaded_node(n: int) -> int:
    """Index of the middle mass of a chain of ``n`` masses (nodes 1 ... n)."""
    return (n + 1) // 2


def chain_mesh(n: int, cell_groups: dict | None = None) -> Mesh:
    """The chain of ``n`` springs and ``n`` masses (n + 1 nodes), built from arrays;
    ``cell_groups``: more groups of cells, name -> cell indices (cell Si is index i)."""
    nodes = np.arange(n + 1, dtype=np.int64)
    coordinates = np.zeros((n + 1, 3))
    coordinates[:, 0] = nodes
    connectivity = np.stack([nodes[:-1], nodes[1:]], axis=1)
    return Mesh(
        node_names=[f"N{i}" for i in range(n + 1)],
        coordinates=coordinates,
        cell_names=[f"S{i}" for i in range(n)],
        cell_type=np.full(n, SEG2, np.int8),
        connectivity=connectivity,
        node_groups={"CLAMP": nodes[:1].copy(), "MASSES": nodes[1:].copy(),
                     "LOADED": np.array([loaded_node(n)], np.int64)},
        cell_groups={"SPRINGS": np.arange(n, dtype=np.int64),
                     **{name: np.asarray(cells, np.int64)
                        for name, cells in (cell_groups or {}).items()}},
        source=f"chain of {n} springs",
    )


class Stopwatch:
    elapsed = 0.0


@contextmanager
def stopwatch():
    """``with stopwatch() as sw: ...`` then ``sw.elapsed`` (s, wall clock)."""
    sw = Stopwatch()
    start = time.perf_counter()
    try:
        yield sw
    finally:
        sw.elapsed = time.perf_counter() - start


def max_rss_mib() -> float:
    """High-water mark of the process resident set (MiB); Linux reports KiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def table(headers, rows, aligns=None) -> str:
    """A fixed-width text table; cells are already formatted strings."""
    cells = [list(map(str, headers))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[j]) for r in cells) for j in range(len(headers))]
    aligns = aligns or ["<"] + [">"] * (len(headers) - 1)
    out = []
    for i, r in enumerate(cells):
        out.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(r, aligns, widths)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def machine() -> str:
    import os
    import platform

    import numba
    import scipy

    return (f"python {platform.python_version()}, numpy {np.__version__}, scipy "
            f"{scipy.__version__}, numba {numba.__version__}, {os.cpu_count()} cpu(s), "
            f"{platform.machine()}")


def load_average() -> str:
    """The 1-minute load average: above the cpu count, other processes shared the cores."""
    import os

    try:
        return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpu(s)"
    except OSError:
        return "load average unknown"


def engine_scheme(dyn, name: str, links=None, **params):
    """A scheme of fem's transient engine on the dynamics ``dyn`` (``fem.integrators.
    dynamics``), as a study would make it: ``name`` its catalog name, ``params`` its keys."""
    from fem import catalog
    from fem.integrators.factory import make
    from fem.links.linkset import LinkSet

    row = catalog.info(dyn.basis, name)
    p = {"basis": dyn.basis, "scheme": name, "start": 0.0, "end": params.pop("end", 1.0)}
    for key in row.keys:
        p[key.name] = params.pop(key.name, key.default_for(p))
    p.update(params)
    return make(dyn, links if links is not None else LinkSet(), p, label="benchmark",
                every=p.get("every", 0))


def engine_run(scheme, grid, x0, v0):
    """One run of the driver (``fem.transient.integrate``) with a memory sink: (seconds,
    Result, archived arrays)."""
    from fem.transient import MemorySink, integrate

    sink = MemorySink()
    start = time.perf_counter()
    result = integrate(scheme, grid, x0=x0, v0=v0, sink=sink)
    return time.perf_counter() - start, result, sink.arrays()


# ------------------------------------------------------------------------------------------
# the figures of a run: a table, or one JSON object for tracking over time
def bench_arguments(ap, quick_help: str = "a small version for smoke tests (seconds)"):
    """Add ``--quick`` and ``--json`` to an argument parser."""
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object on stdout (figures, baselines, ratios, load "
                         "average, machine); the tables go to stderr")
    return ap


def _load() -> list[float] | None:
    import os

    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _commit() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def machine_info() -> dict:
    """The machine and the versions, for the JSON output."""
    import os
    import platform

    import numba
    import scipy

    return {"cores": os.cpu_count(), "arch": platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "numba": numba.__version__}


_OPS = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b,
        ">": lambda a, b: a > b}


class Report:
    """The figures of one benchmark run.

    A figure is a measured value (a time, a rate, a memory size) with, when the benchmark has
    one, its baseline measured in the same run (or a fixed bound) and the ratio value /
    baseline; a target bounds the ratio or the value (``("ratio", "<=", 2.0)``) and is checked
    here. A check is an agreement the timings rely on (fem and its baseline computed the same
    thing).

    With ``--json`` everything the benchmark prints goes to stderr (file descriptor 1 is
    pointed at stderr, child processes included) and :meth:`finish` prints one JSON object on
    the real stdout; otherwise :meth:`finish` prints the summary table of the figures.
    """

    def __init__(self, name: str, args):
        import datetime
        import os

        self.name = name
        self.quick = bool(getattr(args, "quick", False))
        self.json = bool(getattr(args, "json", False))
        self.figures: list[dict] = []
        self.checks: list[dict] = []
        self.details: dict = {}
        self.started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        self.load_start = _load()
        self._clock = time.perf_counter()
        self._fd = None
        if self.json:
            sys.stdout.flush()
            self._fd = os.dup(1)
            os.dup2(2, 1)
            # stderr is usually a file or a pipe here: a line at a time, so progress shows
            sys.stdout.reconfigure(line_buffering=True)

    # ---------------------------------------------------------------- collecting
    def figure(self, name: str, value: float, unit: str, *, baseline: float | None = None,
               baseline_name: str | None = None, target: tuple | None = None,
               note: str | None = None, signed: bool = False) -> dict:
        """Record a figure; ``target`` = (what, op, bound), what "ratio" or "value", op one of
        <=, <, >=, >; ``signed``: a difference of two measurements, which noise can make
        negative (every other figure is positive). Returns the figure."""
        value = float(value)
        fig = {"name": name, "value": value, "unit": unit}
        if signed:
            fig["signed"] = True
        if baseline is not None:
            fig["baseline"] = float(baseline)
            fig["baseline_name"] = baseline_name or "baseline"
            if baseline:
                fig["ratio"] = value / float(baseline)
        if target is not None:
            what, op, bound = target
            fig["target"] = {"of": what, "op": op, "bound": float(bound)}
            fig["met"] = bool(_OPS[op](fig[what], bound))
        if note:
            fig["note"] = note
        self.figures.append(fig)
        return fig

    def check(self, name: str, value: float, tolerance: float, ok: bool | None = None) -> bool:
        """Record an agreement: ``value`` (a difference) within ``tolerance`` unless ``ok`` says
        otherwise."""
        ok = bool(value <= tolerance) if ok is None else bool(ok)
        self.checks.append({"name": name, "value": float(value), "tolerance": float(tolerance),
                            "ok": ok})
        return ok

    @property
    def all_met(self) -> bool:
        return all(f["met"] for f in self.figures if "met" in f)

    @property
    def checks_ok(self) -> bool:
        return all(c["ok"] for c in self.checks)

    # ---------------------------------------------------------------- output
    def summary(self) -> str:
        rows = []
        for f in self.figures:
            target = ""
            if "target" in f:
                t = f["target"]
                target = (f"{t['of']} {t['op']} {t['bound']:g}: "
                          f"{'met' if f['met'] else 'MISSED'}")
            rows.append([f["name"], f"{f['value']:.4g} {f['unit']}",
                         f"{f['baseline']:.4g}" if "baseline" in f else "-",
                         f.get("baseline_name", "-"),
                         f"{f['ratio']:.3g}" if "ratio" in f else "-", target])
        out = [table(["figure", "value", "baseline", "baseline is", "ratio", "target"], rows,
                     aligns=["<", ">", ">", "<", ">", "<"])]
        for c in self.checks:
            out.append(f"check {c['name']}: {c['value']:.2e} (tolerance {c['tolerance']:.0e}) "
                       f"{'ok' if c['ok'] else 'FAILED'}")
        return "\n".join(out)

    def finish(self, status: int = 0) -> int:
        """Print the summary (or the JSON object); returns the exit status (1 when a check
        failed)."""
        import json
        import os

        if not self.checks_ok:
            status = status or 1
        print(f"\nFigures (ratio = value / baseline){' [quick]' if self.quick else ''}")
        print(self.summary())
        print(f"load average at the start {self.load_start}, at the end {_load()} "
              f"(1, 5, 15 min) on {os.cpu_count()} cpu(s)")
        if not self.json:
            return status
        doc = {"bench": self.name, "quick": self.quick, "date": self.started,
               "commit": _commit(), "machine": machine_info(),
               "load_average": {"start": self.load_start, "end": _load()},
               "wall_time_s": time.perf_counter() - self._clock,
               "figures": self.figures, "checks": self.checks,
               "targets_met": self.all_met, "status": int(status), "details": self.details}
        sys.stdout.flush()
        os.dup2(self._fd, 1)
        os.close(self._fd)
        self._fd = None
        sys.stdout.write(json.dumps(doc, indent=1, default=_jsonable) + "\n")
        sys.stdout.flush()
        return status


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"{type(x).__name__} is not JSON serializable")


def opensees_child(script, args, what: str = "") -> dict:
    """Run ``script --opensees-worker ARGS`` in a child process (OpenSees' state is global to
    a process) and return the JSON object of its last such line of output; RuntimeError when
    its analysis did not converge (status != 0) or the child failed. ``what`` names the case
    in the messages."""
    cmd = [sys.executable, str(Path(script).resolve()), "--opensees-worker", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            out = json.loads(line)
            if out["status"] != 0:
                raise RuntimeError(f"OpenSees analyze returned {out['status']}{what}")
            return out
    raise RuntimeError(f"OpenSees child process failed{what}:\n{proc.stderr[-2000:]}")


def opensees_chain(ops, n: int, mass: float) -> None:
    """A fresh 1-D OpenSees model of the chain's n + 1 nodes, all at 0 (zeroLength elements
    join coincident nodes): node 0 fixed, every other node a lumped mass."""
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    for i in range(n + 1):
        ops.node(i, 0.0)
    ops.fix(0, 1)
    for i in range(1, n + 1):
        ops.mass(i, mass)


def opensees_analyze(ops, steps: int, dt: float, node: int, build_s: float) -> None:
    """Time ``analyze(steps, dt)`` of the model built (in ``build_s`` s) and print the child's
    one JSON line for ``opensees_child``: the times, the displacement of ``node`` at the end
    and analyze's status."""
    with stopwatch() as t_run:
        status = ops.analyze(steps, dt)
    u = ops.nodeDisp(node, 1)
    ops.wipe()
    print(json.dumps({"build": build_s, "time": t_run.elapsed, "u": u, "status": status}),
          flush=True)
