"""``fem warmup``: compile the step loops of every transient scheme before a first real run.

A first run of a scheme on a machine compiles its step loops (numba), which takes far longer
than the run itself; the compiled code then comes from the disk cache (``fem.compiled``).
``fem warmup`` runs, for each scheme of the catalog on each basis, a few steps of small
studies that take the loops real studies take: without links, with a plane shock (events
located and at the steps), with Coulomb friction, with a rigid impact, with a Maxwell
element. The schemes are shared
among ``jobs`` processes, which compile in parallel and write the one cache.

The small studies are a one-node model with DX and DZ: a mass on a spring along X, pressed
along Z on a plane (the shock, with friction in the friction variant), or beside a wall along
X (the impact), over 0.1 s: the wall is reached, and the shocks close at the start. For the
exact scheme, the mass also falls onto the plane with nothing else holding it along Z (the
phase of its flight is integrated by the scheme's propagator, not by its closed forms). On a
physical basis a chain of two masses (with and without a shock) is run too: its matrices are
banded where the one-node model's are diagonal (the loops take each form of the step's
matrix). They are run in memory: nothing is written.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import sys
import time

#: the link variants run for every scheme (a variant that a scheme does not offer is skipped)
VARIANTS = ("linear", "shock", "friction", "impact", "maxwell", "flight")
#: the catalog feature each variant needs
NEEDS = {"shock": "shock.plane", "friction": "friction.coulomb", "impact": "impact",
         "maxwell": "maxwell", "flight": "shock.plane"}
#: the variants run by some schemes only: the exact scheme integrates a phase without
#: stiffness along a direction (a mass in flight) with its propagator, not its closed forms
ONLY = {"flight": ("exact",)}


def study_for(basis: str, scheme: str, variant: str, events: str) -> dict:
    """The small study of a scheme, a basis, a link variant and an event mode."""
    link = None
    loads = []
    if variant in ("shock", "friction", "flight"):
        link = {"name": "floor", "kind": "shock", "nodes": ["P"], "normal": [0.0, 0.0, -1.0],
                "gap": 1e-3 if variant == "flight" else 0.0, "stiffness": 1e5,
                "damping": 100.0}
        loads.append({"name": "press", "nodes": ["P"], "FZ": -10.0})
        if variant == "friction":
            link.update(friction=0.3, tangential_stiffness=1e5)
    elif variant == "impact":
        link = {"name": "wall", "kind": "impact", "nodes": ["P"], "component": "DX",
                "gap": 0.005, "restitution": 0.5}
    elif variant == "maxwell":
        link = {"name": "dashpot", "kind": "maxwell", "nodes": ["P"], "direction": [1.0, 0.0, 0.0],
                "stiffness": 1e3, "damping": 10.0}
    study = {
        "mesh": {"nodes": {"P": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DZ"]},
        # in flight, nothing holds the mass along Z but the floor
        "discrete": [{"nodes": ["P"], "mass": 1.0,
                      "stiffness": [1e3, 0.0, 0.0 if variant == "flight" else 1e3]}],
        "initial": [{"nodes": ["P"], "displacement": {"DX": 0.01}}],
        "analysis": [],
    }
    if loads:
        study["load"] = loads
    run = {"name": "run", "kind": "transient", "basis": basis, "scheme": scheme,
           "end": 0.1, "step": 1e-3}
    if link is not None:
        study["link"] = [link]
        run["links"] = [link["name"]]
        run["events"] = events
    if basis == "modal":
        study["analysis"].append({"name": "modes", "kind": "modes", "count": 2})
        run["modes"] = "modes"
    if scheme not in ("rk4", "newmark", "hht", "central_difference", "exact") \
            and not (scheme == "euler" and basis == "modal"):
        run["max_step"] = 1e-3
    study["analysis"].append(run)
    return study


def chain_study(basis: str, scheme: str, shock: bool) -> dict:
    """A chain of two masses along X (A clamped, B, C; a spring between each pair), with a
    plane shock on C when ``shock``: its matrices are banded (the one-node studies' are
    diagonal, and numba compiles the loops once for each storage of a band)."""
    study = {
        "mesh": {"nodes": {"A": [0.0, 0.0, 0.0], "B": [1.0, 0.0, 0.0], "C": [2.0, 0.0, 0.0]},
                 "cells": {"AB": {"type": "SEG2", "nodes": ["A", "B"]},
                           "BC": {"type": "SEG2", "nodes": ["B", "C"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["AB", "BC"], "stiffness": 1e3, "damping": 1.0},
                     {"nodes": ["B", "C"], "mass": 1.0}],
        "constraint": [{"nodes": ["A"], "DX": 0.0}],
        "initial": [{"nodes": ["C"], "velocity": {"DX": 1.0}}],
        "analysis": [],
    }
    run = {"name": "run", "kind": "transient", "basis": basis, "scheme": scheme,
           "end": 0.05, "step": 1e-3}
    if shock:
        study["link"] = [{"name": "stop", "kind": "shock", "nodes": ["C"],
                          "normal": [1.0, 0.0, 0.0], "gap": 0.01, "stiffness": 1e5}]
        run["links"] = ["stop"]
    study["analysis"].append(run)
    return study


def warm(key: tuple[str, str]) -> tuple[tuple[str, str], float, str]:
    """Run the small studies of scheme ``key`` = (basis, scheme): (key, seconds, the first
    error or "")."""
    import fem
    from fem.catalog import SCHEMES

    basis, scheme = key
    row = SCHEMES[key]
    start = time.perf_counter()
    for variant in VARIANTS:
        need = NEEDS.get(variant)
        if need is not None and row.features.get(need) is not True:
            continue
        if variant in ONLY and scheme not in ONLY[variant]:
            continue
        # a law without events runs in one event mode
        modes = row.event_modes if variant not in ("linear", "maxwell", "flight") \
            else (row.event_modes[0],)
        for events in modes:
            if variant == "impact" and events != "locate":
                continue
            try:
                fem.run(fem.Study.from_dict(study_for(basis, scheme, variant, events)))
            except Exception as exc:       # reported, and the other studies still compile
                return key, time.perf_counter() - start, \
                    f"{variant}, events = {events}: {type(exc).__name__}: {exc}"
    if basis == "physical":
        for shock in (False, True):
            try:
                fem.run(fem.Study.from_dict(chain_study(basis, scheme, shock)))
            except Exception as exc:
                return key, time.perf_counter() - start, \
                    f"chain{' with a shock' if shock else ''}: {type(exc).__name__}: {exc}"
    return key, time.perf_counter() - start, ""


def run(jobs: int | None = None, stream=None) -> int:
    """Compile every scheme's loops in ``jobs`` processes (default: the cores); prints one
    line per scheme as it ends, then the total. Returns 0, or 3 when a study failed."""
    from fem.catalog import SCHEMES

    stream = sys.stderr if stream is None else stream
    jobs = max(1, jobs or os.cpu_count() or 1)
    keys = sorted(SCHEMES)
    start = time.perf_counter()
    failed = 0
    print(f"compiling the step loops of {len(keys)} schemes in {jobs} process(es)",
          file=stream, flush=True)
    if jobs == 1:
        results = map(warm, keys)
        pool = None
    else:
        pool = concurrent.futures.ProcessPoolExecutor(
            jobs, mp_context=multiprocessing.get_context("spawn"))
        results = (f.result() for f in concurrent.futures.as_completed(
            [pool.submit(warm, key) for key in keys]))
    try:
        for (basis, scheme), seconds, error in results:
            status = f"failed: {error}" if error else "ready"
            failed += bool(error)
            print(f"  {basis:9s} {scheme:18s} {seconds:7.1f} s  {status}", file=stream,
                  flush=True)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    print(f"done in {time.perf_counter() - start:.1f} s"
          + (f"; {failed} scheme(s) failed" if failed else ""), file=stream, flush=True)
    return 3 if failed else 0
