"""Analysis blocks of a study file (transient, harmonic, modes, their archive and steps), the
checks across analyses, and the ``[[check]]`` blocks."""

from __future__ import annotations

import math

from fem.errors import StudyError
from fem import catalog
from fem.study.random_blocks import check_random_check, random_block
from fem.study.spectral_blocks import spectral_keys
from fem.study.specs import (ABSOLUTE_FIELDS, ANALYSIS_KINDS, FIELDS, FORCE_FIELDS,
                             RELATIVE_FIELDS, AnalysisSpec, step_limit)
from fem.study.support_blocks import analysis_supports
from fem.validate import Table, check_float_list


def _archive(t: Table | None):
    if t is None:
        return {"every": 1}
    if t.has("every") and t.has("times"):
        raise StudyError(f"{t.where}: give either every or times, not both")
    if t.has("times"):
        times = t.float_list("times")
        if any(b <= a for a, b in zip(times, times[1:])):
            raise t.error("times", "must increase strictly")
        out = {"times": times}
    else:
        out = {"every": t.int("every", 1, min=1)}
    t.done()
    return out


def _steps(t: Table):
    raw = t.raw("steps")
    if not isinstance(raw, list) or not raw:
        raise t.error("steps", "expected a non-empty list of {until, count} tables")
    out = []
    for i, seg in enumerate(raw):
        st = Table(seg, f"{t.key('steps')}[{i + 1}]")
        out.append((st.float("until"), st.int("count", min=1)))
        st.done()
    return out


def _analysis(t: Table, i, loads, links, functions, base=None, spectra=None,
              supports=()) -> AnalysisSpec:
    kind = t.str("kind", choices=ANALYSIS_KINDS)
    name = t.str("name", f"{kind}{i + 1}")
    p: dict = {}
    if kind in ("modes", "complex_modes"):
        p["count"] = t.int("count", None, min=1)
        band = t.float_list("band", None, length=2)
        if band is not None and not (0 <= band[0] < band[1]):
            raise t.error("band", f"expected [f_min, f_max] with 0 <= f_min < f_max, got {band}")
        p["band"] = band
        if p["count"] is None and band is None:
            p["count"] = 10
        p["method"] = t.str("method", "auto", choices=("auto", "dense", "sparse"))
    elif kind == "transient":
        _transient(t, p, loads, links, base, supports)
    elif kind == "static":
        p["loads"] = _loads_subset(t, loads)
        p["time"] = t.float("time", None)
    elif kind == "spectral":
        spectral_keys(t, p, spectra or {})
    elif kind == "random":
        random_block(t, p, loads, functions)
    else:
        _harmonic(t, p, loads)
    t.done()
    return AnalysisSpec(where=t.where, index=i + 1, name=name, kind=kind, params=p)


def _loads_subset(t: Table, loads):
    names = t.str_list("loads", None)
    known = [ld.name for ld in loads]
    if names is None:
        return known
    for n in names:
        if n not in known:
            raise t.error("loads", f"unknown load '{n}' (named loads: {', '.join(known) or 'none'})")
    return names


#: bytes per step of a transient analysis' time grid at its peak (instants, archive mask and
#: the temporaries that build them; 1.7 GB measured for 1e8 steps)
GRID_BYTES_PER_STEP = 18


def available_memory() -> float | None:
    """Bytes of memory the system can give a process now (MemAvailable), or None when the
    system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _fits_in_memory(t: Table, key: str, count: float):
    """Refuse a step count whose time grid would not fit in the memory available (the run
    would be killed by the system instead of failing with a message)."""
    need = GRID_BYTES_PER_STEP * count
    have = available_memory()
    if have is not None and need > 0.8 * have:
        raise t.error(key, f"{count:.3g} steps need about {need / 1e9:.3g} GB for the time grid, "
                           f"more than the {have / 1e9:.3g} GB of memory available; take a "
                           f"longer step or split the analysis in time")


def _transient(t: Table, p: dict, loads, links, base=None, supports=()):
    basis = t.str("basis", "physical", choices=catalog.BASES)
    p["basis"] = basis
    schemes = catalog.schemes(basis)
    scheme = t.str("scheme", "newmark", aliases=catalog.ALIASES)
    if scheme not in schemes:
        raise t.error("scheme", f"unknown scheme '{scheme}' for basis = \"{basis}\" "
                                f"(expected one of: {', '.join(schemes)})")
    p["scheme"] = scheme
    row = catalog.info(basis, scheme)
    init = t.table("initial", None)
    if init is not None:
        p["initial"] = _initial(init, base)
    # a restart starts where its initial state is, unless told otherwise
    p["start"] = t.float("start", (p.get("initial") or {}).get("time") or 0.0)
    p["end"] = t.float("end")
    if p["end"] <= p["start"]:
        raise t.error("end", f"must be greater than start ({p['start']:g}), got {p['end']:g}")
    if t.has("step") and t.has("steps"):
        raise StudyError(f"{t.where}: give either step or steps, not both")
    if t.has("steps"):
        p["steps"] = _steps(t)
        prev = p["start"]
        for k, (until, _) in enumerate(p["steps"]):
            if until <= prev:
                raise StudyError(f"{t.key('steps')}[{k + 1}].until: must be greater than "
                                 f"{prev:g}, got {until:g}")
            prev = until
        if abs(prev - p["end"]) > 1e-12 * max(1.0, abs(p["end"])):
            raise StudyError(f"{t.key('steps')}[{len(p['steps'])}].until: the last segment must "
                             f"end at end = {p['end']:g}, got {prev:g}")
        count = sum(c for _, c in p["steps"])
        if count > step_limit.get():
            raise t.error("steps", f"{count} steps in all (at most {step_limit.get():.0e}; "
                                   f"fem run --max-steps sets another limit)")
        _fits_in_memory(t, "steps", count)
    elif t.has("step"):
        p["step"] = t.float("step", positive=True)
        if p["step"] > p["end"] - p["start"]:
            raise t.error("step", f"{p['step']:g} s is longer than the analysis "
                                  f"({p['end'] - p['start']:g} s)")
        count = (p["end"] - p["start"]) / p["step"]
        if count > step_limit.get():
            raise t.error("step", f"{p['step']:g} s makes {count:.3g} steps over the analysis "
                                  f"(at most {step_limit.get():.0e}; fem run --max-steps sets "
                                  f"another limit)")
        _fits_in_memory(t, "step", count)
    elif row.needs_step:
        raise t.missing("step", f"missing (required for scheme '{scheme}'; or give steps)")
    p["loads"] = _loads_subset(t, loads)
    link_names = t.str_list("links", [])
    known = [lk.name for lk in links]
    for n in link_names:
        if n not in known:
            raise t.error("links", f"unknown link '{n}' (defined links: {', '.join(known) or 'none'})")
    p["links"] = link_names
    analysis_supports(t, p, supports)
    p["archive"] = _archive(t.table("archive", None))
    for x in p["archive"].get("times", ()):
        if not _within(x, p["start"], p["end"]):
            raise StudyError(f"{t.key('archive')}.times: {x:g} s is outside the analysis "
                             f"[{p['start']:g}, {p['end']:g}] s")
    known = FIELDS + ABSOLUTE_FIELDS + FORCE_FIELDS + (RELATIVE_FIELDS if p["supports"] else ())
    explicit = t.has("fields")
    # by default the absolute acceleration is archived when a base acceleration moves the
    # support (the other fields are then relative to it) and the acceleration is archived
    ground = any(ld.kind == "base_acceleration" and ld.name in p["loads"] for ld in loads)
    fields = t.str_list("fields", list(FIELDS + (ABSOLUTE_FIELDS if ground else ())
                                       + FORCE_FIELDS
                                       + (RELATIVE_FIELDS if p["supports"] else ())))
    for f in fields:
        if f not in known:
            if f in RELATIVE_FIELDS:
                raise t.error("fields", f"'{f}' needs supports: the analysis drives no "
                                        f"[[support]]")
            raise t.error("fields", f"unknown field '{f}' (expected: {', '.join(known)})")
    p["fields"] = [f for f in known if f in fields]
    p["events"] = t.str("events", row.events, choices=row.event_modes)
    if basis == "modal":
        p["modes"] = t.str("modes")
        p["damping"] = t.str("damping", "projected", choices=("projected", "modal"))
        md = t.float_list("modal_damping", None)
        if p["damping"] == "modal" and md is None:
            raise t.error("modal_damping", 'required with damping = "modal" (one ratio per mode)')
        if md is not None and any(x < 0 for x in md):
            raise t.error("modal_damping", "ratios must be >= 0")
        p["modal_damping"] = md
        p["nodes"] = t.str_list("nodes", None)
        p["static_correction"] = t.bool("static_correction", False)
        forces = [f for f in FORCE_FIELDS if f in p["fields"]]
        if p["nodes"] is not None and forces:
            if explicit:
                raise t.error("fields", f"{forces[0]} needs the motion of every dof: "
                                        f"recombine on every node (no nodes key), or leave "
                                        f"{' and '.join(forces)} out of fields")
            p["fields"] = [f for f in p["fields"] if f not in FORCE_FIELDS]
        if p["damping"] == "projected" and md is not None:
            raise t.error("modal_damping", 'only applies with damping = "modal" (damping is '
                                           '"projected": Phi^T C Phi)')
    _scheme_keys(t, p, row)
    _step_bounds(t, p)


def _step_bounds(t: Table, p: dict):
    """An adaptive scheme's steps lie within [min_step, max_step]: refuse bounds that leave
    no step (either may be the default: max_step (end - start) / 100, min_step 1e-12 (end -
    start))."""
    if "min_step" not in p or "max_step" not in p:
        return
    span = p["end"] - p["start"]
    low, high = p["min_step"], p["max_step"]
    if low is None or low <= (high if high is not None else span / 100.0):
        return
    if high is not None:
        raise t.error("min_step", f"{low:g} s is greater than max_step ({high:g} s): no step "
                                  f"can lie between them")
    raise t.error("min_step", f"{low:g} s is greater than the default max_step, (end - start) "
                              f"/ 100 = {span / 100.0:g} s: no step can lie between them (give "
                              f"max_step)")


def _scheme_keys(t: Table, p: dict, row):
    """Read the keys of ``row``'s scheme into ``p`` with the catalog's defaults and bounds;
    refuse the keys of other schemes."""
    own = {key.name for key in row.keys}
    for name in sorted(catalog.scheme_keys() - own):
        if t.has(name):
            raise t.error(name, f"does not apply to scheme '{row.name}'")
    for key in row.keys:
        default = key.default_for(p)
        if key.kind is float:
            p[key.name] = t.float(key.name, default, min=key.low, max=key.high,
                                  positive=key.positive)
        elif key.kind is str:
            p[key.name] = t.str(key.name, default, choices=key.choices or None)
        else:
            raise TypeError(f"scheme key {key.name}: no reader for {key.kind.__name__}")


def _within(x: float, start: float, end: float) -> bool:
    """``start <= x <= end`` up to round-off."""
    return start - 1e-12 * max(1.0, abs(start)) <= x <= end + 1e-12 * max(1.0, abs(end))


#: the most frequencies of a harmonic analysis (each is a complex solve of the model)
MAX_FREQUENCIES = 10**6


def _harmonic(t: Table, p: dict, loads):
    raw = t.raw("frequencies")
    if isinstance(raw, list):
        freqs = check_float_list(raw, t.key("frequencies"))
        if not freqs or any(f < 0 for f in freqs):
            raise t.error("frequencies", "expected a non-empty list of frequencies >= 0 (Hz)")
        if len(freqs) > MAX_FREQUENCIES:
            raise t.error("frequencies", f"{len(freqs)} frequencies, at most {MAX_FREQUENCIES:g}")
        p["frequencies"] = freqs
    else:
        ft = Table(raw, t.key("frequencies"))
        start, stop = ft.float("start", min=0.0), ft.float("stop", min=0.0)
        count = ft.int("count", min=1, max=MAX_FREQUENCIES)
        ft.done()
        if stop < start:
            raise ft.error("stop", f"must be >= start ({start:g}), got {stop:g}")
        p["frequencies"] = {"start": start, "stop": stop, "count": count}
    p["basis"] = t.str("basis", "physical", choices=("physical", "modal"))
    if p["basis"] == "modal":
        p["modes"] = t.str("modes")
    p["loads"] = _loads_subset(t, loads)
    known = FIELDS + FORCE_FIELDS
    fields = t.str_list("fields", list(known))
    for f in fields:
        if f not in known:
            raise t.error("fields", f"unknown field '{f}' (expected: {', '.join(known)})")
    p["fields"] = [f for f in known if f in fields]


def _cross_check_analyses(analyses):
    by_name = {a.name: a for a in analyses}
    for a in analyses:
        ref = a.params.get("modes")
        if ref is not None:
            other = by_name.get(ref)
            if other is None or other.index >= a.index:
                raise StudyError(f"{a.where}.modes: no modes analysis named '{ref}' before this one")
            if other.kind != "modes":
                raise StudyError(f"{a.where}.modes: analysis '{ref}' is of kind {other.kind}, "
                                 f"not modes")
            _check_ratio_count(a, other)
        init = a.params.get("initial")
        if init is not None and "file" not in init:
            other = by_name.get(init["analysis"])
            if other is None or other.index >= a.index or other.kind != "transient":
                raise StudyError(f"{a.where}.initial.analysis: no transient analysis named "
                                 f"'{init['analysis']}' before this one")


def _check_ratio_count(a, modes):
    """The ratios of ``modal_damping`` against the number of modes of the modes analysis
    ``modes``, when that number is known before the run (a count without a band)."""
    ratios = a.params.get("modal_damping")
    count = modes.params.get("count")
    if ratios is None or count is None or modes.params.get("band") is not None:
        return
    if a.kind == "transient" and a.params.get("damping") == "modal" and len(ratios) < count:
        raise StudyError(f"{a.where}.modal_damping: {len(ratios)} damping ratio(s) for "
                         f"{count} modes (give one ratio per mode)")
    if a.kind == "spectral" and len(ratios) not in (1, count):
        raise StudyError(f"{a.where}.modal_damping: {len(ratios)} ratios for the {count} modes "
                         f"of '{modes.name}' (give one ratio, or one per mode)")


def _check_function_domains(analyses, loads, imposed, relations, functions):
    """Every function a transient analysis evaluates must be defined over its time span."""
    users = [(c.function, f"{c.where}.function") for c in list(imposed) + list(relations)]
    for a in analyses:
        if a.kind == "static" and a.params["time"] is not None:
            start = end = a.params["time"]
        elif a.kind != "transient":
            continue
        else:
            start, end = a.params["start"], a.params["end"]
        named = [(ld.function, f"{ld.where}.function") for ld in loads
                 if ld.name in a.params["loads"]]
        for name, key in users + named:
            if name is None:
                continue
            lo, hi = functions[name].domain
            if start < lo or end > hi:
                raise StudyError(f"{a.where}: function '{name}' ({key}) is defined over "
                                 f"[{lo:g}, {hi:g}] s only, not over the analysis "
                                 f"[{start:g}, {end:g}] s (set left or right = \"constant\" "
                                 f"or \"linear\" in functions.{name})")


def _checks(raw, analyses):
    from postpro.checks import MODAL_QUANTITIES, RANDOM_QUANTITIES, parse_checks
    from postpro.errors import CheckSpecError

    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise StudyError("check: expected an array of tables [[check]]")
    try:
        specs = parse_checks(raw, prefix="check")
    except CheckSpecError as exc:
        raise StudyError(str(exc)) from None
    by_name = {a.name: a for a in analyses}
    for i, s in enumerate(specs):
        if s.analysis is None:
            # the results file then picks its only analysis
            if len(analyses) != 1:
                raise StudyError(f"check[{i + 1}].analysis: missing (required when the study "
                                 f"has {len(analyses)} analyses: "
                                 f"{', '.join(sorted(by_name)) or 'none'})")
            a = analyses[0]
        elif s.analysis not in by_name:
            raise StudyError(f"check[{i + 1}].analysis: unknown analysis '{s.analysis}' "
                             f"(analyses: {', '.join(sorted(by_name)) or 'none'})")
        else:
            a = by_name[s.analysis]
        kinds = ("modes", "complex_modes") if s.quantity in MODAL_QUANTITIES else \
            ("random",) if s.quantity in RANDOM_QUANTITIES else \
            ("transient", "static", "spectral") if s.quantity in ("displacement",) + FORCE_FIELDS \
            else \
            ("transient",)
        if a.kind not in kinds:
            raise StudyError(f"check[{i + 1}].quantity: '{s.quantity}' needs a "
                             f"{' or '.join(kinds)} analysis, but '{a.name}' is of kind "
                             f"'{a.kind}'")
        if a.kind == "random":
            check_random_check(s, a, f"check[{i + 1}]")
        count = a.params.get("count") if a.kind in ("modes", "complex_modes") else None
        if s.mode is not None and count is not None and s.mode > count:
            raise StudyError(f"check[{i + 1}].mode: mode {s.mode}, but analysis '{a.name}' "
                             f"computes at most {count} modes")
        if a.kind == "transient" and s.quantity in FIELDS + ABSOLUTE_FIELDS + FORCE_FIELDS \
                + RELATIVE_FIELDS \
                and s.quantity not in a.params.get("fields", FIELDS):
            raise StudyError(f"check[{i + 1}].quantity: analysis '{a.name}' does not archive "
                             f"'{s.quantity}' (fields = {a.params['fields']}); add it to its "
                             f"fields")
        if a.kind in ("static", "spectral") and (s.time is not None or s.interpolate):
            raise StudyError(f"check[{i + 1}].{'time' if s.time is not None else 'interpolate'}"
                             f": analysis '{a.name}' is {a.kind}: its checks take no time")
        if a.kind == "transient" and s.time is None and \
                s.quantity in FIELDS + ABSOLUTE_FIELDS + FORCE_FIELDS + RELATIVE_FIELDS:
            raise StudyError(f"check[{i + 1}]: missing key 'time' (quantity '{s.quantity}' of "
                             f"a transient analysis needs node or element, component and time)")
        if s.time is not None and a.kind == "transient" and not _within(s.time, a.params["start"],
                                                                         a.params["end"]):
            raise StudyError(f"check[{i + 1}].time: {s.time:g} s is outside analysis "
                             f"'{a.name}' [{a.params['start']:g}, {a.params['end']:g}] s")
        if s.time is not None and a.kind == "transient" and not s.interpolate:
            nearest = _unarchived(a.params, s.time)
            if nearest is not None:
                raise StudyError(f"check[{i + 1}].time: {s.time:.12g} s will not be archived by "
                                 f"analysis '{a.name}' (nearest archived instants: "
                                 f"{nearest[0]:.12g} and {nearest[1]:.12g} s); check an archived "
                                 f"instant, archive this one (archive.times) or set "
                                 f"interpolate = true")
    return specs


def _unarchived(p: dict, t: float):
    """(before, after) archived instants around t when a uniform grid with archive.every
    will not archive t; None when it will, or when the instants are not known before the run
    (archive.times lands on its instants; steps and adaptive grids are left to the run)."""
    step = p.get("step")
    every = p.get("archive", {}).get("every")
    if step is None or every is None or p.get("steps"):
        return None
    start, end = p["start"], p["end"]
    spacing = step * every
    tol = 1e-9 * step + 4 * abs(t) * 2.2e-16
    k = (t - start) / spacing
    before = start + math.floor(k + 1e-9) * spacing
    after = min(before + spacing, end)
    if abs(t - before) <= tol or abs(t - after) <= tol or abs(t - end) <= tol:
        return None
    return before, after


def _initial(t: Table, base) -> dict:
    """``initial = { analysis, time, file }``: an earlier transient analysis of this study,
    or of the results file ``file`` (relative to the study's folder; its time defaults to
    the last instant that analysis archived)."""
    init = {"analysis": t.str("analysis"), "time": t.float("time", None)}
    name = t.str("file", None)
    t.done()
    if name is None:
        return init
    from pathlib import Path

    from fem.errors import path_problem, shown_path

    problem = path_problem(name)
    if problem is not None:
        raise t.error("file", f"the path {shown_path(name)} {problem}")
    path = Path(name)
    path = path if path.is_absolute() or base is None else Path(base) / path
    init["file"] = path
    if init["time"] is None:
        init["time"] = _last_instant(path, init["analysis"], t.key("file"))
    return init


def _last_instant(path, analysis: str, where: str) -> float:
    """The last archived instant of ``analysis`` in the results file ``path``."""
    import h5py

    if not path.is_file():
        raise StudyError(f"{where}: results file {path} not found")
    try:
        with h5py.File(path, "r") as f:
            group = f.get(f"analyses/{analysis}")
            if group is None or "time" not in group:
                raise StudyError(f"{where}: {path} holds no transient analysis "
                                 f"'{analysis}'")
            times = group["time"]
            if not times.shape[0]:
                raise StudyError(f"{where}: analysis '{analysis}' of {path} archived no "
                                 f"instant")
            return float(times[times.shape[0] - 1])
    except OSError as exc:
        raise StudyError(f"{where}: cannot read {path} as a results file ({exc})") from None
