"""``fem warmup``: compile the step loops of every transient scheme before a first real run.

A first run of a scheme on a machine compiles its step loops (numba), which takes far longer
than the run itself; the compiled code then comes from the disk cache (``fem.compiled``).
``fem warmup`` runs, for each scheme of the catalog on each basis, a few steps of small
studies that take the loops real studies take: without links, then with each sample link of
each law (``fem.laws.contract.Sample``, declared by the law's module) in each event mode the
scheme offers for it. The schemes are shared
among ``jobs`` processes, which compile in parallel and write the one cache.

The small studies are a one-node model with DX and DZ: a mass on springs along X and Z, with
the sample link (pressed along Z onto a plane, beside a wall along X...), over 0.1 s. For the
exact scheme, the mass also falls onto the first pressed sample's obstacle with nothing else
holding it along Z (the phase of its flight is integrated by the scheme's propagator, not by
its closed forms). On a
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

#: the variants of the small studies: no link, each sample link of each law
#: (``fem.laws.contract.Sample``), and the flight (below)
FLIGHT = "flight"


def samples() -> dict:
    """The sample links of every law, by name."""
    from fem import laws

    found = {}
    for kind in laws.KINDS:
        for sample in laws.law(kind).samples:
            assert sample.name not in found and sample.name not in ("linear", FLIGHT)
            found[sample.name] = sample
    return found


def _flown() -> object:
    """The sample of the flight: the first pressed one (a contact the load closes)."""
    return next(s for s in samples().values() if s.press)


def variants() -> tuple:
    return ("linear",) + tuple(samples()) + (FLIGHT,)


def study_for(basis: str, scheme: str, variant: str, events: str) -> dict:
    """The small study of a scheme, a basis, a variant (``variants()``) and an event mode.
    The flight: the first pressed sample with a gap of 1 mm and nothing else holding the mass
    along Z (the exact scheme integrates the phase of that flight with its propagator, not
    with its closed forms)."""
    sample = _flown() if variant == FLIGHT else samples().get(variant)
    link = None
    loads = []
    if sample is not None:
        link = dict(sample.link, name="link", nodes=["P"])
        if variant == FLIGHT:
            link["gap"] = 1e-3
        if sample.press:
            loads.append({"name": "press", "nodes": ["P"], "FZ": sample.press})
    study = {
        "mesh": {"nodes": {"P": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX", "DZ"]},
        "discrete": [{"nodes": ["P"], "mass": 1.0,
                      "stiffness": [1e3, 0.0, 0.0 if variant == FLIGHT else 1e3]}],
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


def event_modes(row, variant: str) -> tuple:
    """The event modes a variant runs in on the scheme of catalog row ``row`` (none when the
    scheme does not offer it): every mode for a law with events, the first otherwise, only
    "locate" for a law that acts at instants; the flight in the exact scheme alone."""
    from fem import laws

    if variant == "linear":
        return (row.event_modes[0],)
    if variant == FLIGHT:
        sample = _flown()
        if row.name != "exact" or row.features.get(sample.feature) is not True:
            return ()
        return (row.event_modes[0],)
    sample = samples()[variant]
    if row.features.get(sample.feature) is not True:
        return ()
    feature = laws.FEATURES[sample.feature]
    if feature.instant:
        return tuple(m for m in row.event_modes if m == "locate")
    return row.event_modes if feature.events else (row.event_modes[0],)


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
    for variant in variants():
        for events in event_modes(row, variant):
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
