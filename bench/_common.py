"""Shared pieces of the benchmarks: the spring-mass chain (study + mesh built from arrays),
timers, memory figures and a plain-text table printer.

The chain: node N0 clamped, then ``n`` nodes N1 ... Nn in a row along X, 1 m apart; SEG2 cell
Si joins N(i) and N(i+1) and carries a spring and a damper; every node but N0 carries a
lumped mass.
"""

from __future__ import annotations

import resource
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


def chain_mesh(n: int) -> Mesh:
    """The chain of ``n`` springs and ``n`` masses (n + 1 nodes), built from arrays."""
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
        cell_groups={"SPRINGS": np.arange(n, dtype=np.int64)},
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
