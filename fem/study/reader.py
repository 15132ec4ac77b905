"""Read a study file: TOML text -> :class:`Study`, block after block."""

from __future__ import annotations

import tomllib
from pathlib import Path

from fem.errors import StudyError
from fem.study.analysis_blocks import (_analysis, _check_function_domains, _checks,
                                       _cross_check_analyses)
from fem.study.model_blocks import (_discrete, _functions, _imposed, _initial, _link, _load,
                                    _mesh, _rayleigh, _relation, function_roles)
from fem.study.spectral_blocks import spectra as design_spectra
from fem.study.random_blocks import check_base_acceleration_functions
from fem.study.specs import COMPONENTS, TRANSLATIONS, Study
from fem.study.support_blocks import check_support_domains, support, unique_names
from fem.errors import path_problem, shown_path
from fem.validate import Table


def load_study(path) -> Study:
    """Read and validate a study file. Raises :class:`StudyError` naming the key at fault."""
    data, source = read_study_data(path)
    return parse_study(data, path=Path(path).resolve(), source=source)


def read_study_data(path) -> tuple[dict, str]:
    """The tables of a study file and its text, not yet validated (:func:`parse_study` does)."""
    problem = path_problem(path)
    if problem is not None:
        raise StudyError(f"study file {shown_path(path)}: the path {problem}")
    path = Path(path)
    try:
        if not path.is_file():
            raise StudyError(f"study file not found: {path}")
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise StudyError(f"study file {shown_path(path)}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from None
    except ValueError as exc:
        # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise StudyError(f"{path}: {_long_number(source, exc)}") from None
    except RecursionError:
        raise StudyError(f"{path}: arrays or inline tables nested too deeply (a study needs "
                         f"at most {MAX_DEPTH} levels)") from None
    check_depth(data, path)
    return data, source


def _long_number(source: str, exc: ValueError) -> str:
    """Where a study holds a number too long to read, and its key when the line shows it."""
    import re
    import sys

    limit = sys.get_int_max_str_digits()
    found = re.search(r"[0-9_]{%d,}" % (limit + 1), source) if limit else None
    if found is None:
        return f"not valid TOML: {exc}"
    line = source.count("\n", 0, found.start()) + 1
    start = source.rfind("\n", 0, found.start()) + 1
    head = source[start:found.start()]
    key = head.split("=", 1)[0].strip().strip('"') if "=" in head else ""
    what = f"key '{key[:60]}' (line {line})" if key else f"line {line}"
    return (f"{what}: a number of {found.end() - found.start()} digits, more than the "
            f"{limit} a study number may have")


#: the deepest nesting of tables and arrays a study may use
MAX_DEPTH = 16


def check_depth(data, path):
    """Refuse nesting no study needs (it would only exhaust the readers' recursion)."""
    stack = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise StudyError(f"{path}: {where or 'the file'}: arrays or inline tables nested "
                             f"deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack += [(v, f"{where}.{k}" if where else str(k), depth + 1)
                      for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, f"{where}[{i + 1}]", depth + 1) for i, v in enumerate(value)]


def parse_study(data: dict, *, path: Path, source: str = "") -> Study:
    root = Table(data, "")
    base = path.parent
    study_t = root.table("study", None)
    title = path.stem
    if study_t is not None:
        title = study_t.str("title", title)
        study_t.done()
    mesh = _mesh(root.table("mesh"), base)
    model_t = root.table("model", None)
    components = TRANSLATIONS
    rayleigh = None
    if model_t is not None:
        rayleigh = _rayleigh(model_t.table("rayleigh", None))
        comps = model_t.str_list("components", list(TRANSLATIONS))
        for c in comps:
            if c not in COMPONENTS:
                raise model_t.error("components", f"unknown component '{c}' "
                                                  f"(known: {' '.join(COMPONENTS)})")
        if len(set(comps)) != len(comps) or not comps:
            raise model_t.error("components", "must list distinct components, at least one")
        components = tuple(c for c in COMPONENTS if c in comps)
        model_t.done()

    functions = _functions(root.table("functions", None), base,
                           function_roles(root.tables("link")))
    discrete = tuple(_discrete(t, components) for t in root.tables("discrete"))
    imposed, relations = [], []
    for t in root.tables("constraint"):
        if t.has("terms"):
            relations.append(_relation(t, components, functions))
        else:
            imposed.append(_imposed(t, components, functions))
    loads = tuple(_load(t, i, components, functions) for i, t in enumerate(root.tables("load")))
    _unique([ld.name for ld in loads], "load", "name")
    initial = tuple(_initial(t, components) for t in root.tables("initial"))
    supports = tuple(support(t, i, components, functions)
                     for i, t in enumerate(root.tables("support")))
    unique_names(supports)
    links = tuple(_link(t, i, components, supports, functions)
                  for i, t in enumerate(root.tables("link")))
    _unique([lk.name for lk in links], "link", "name")
    spectra = design_spectra(root.table("spectra", None))
    analyses = tuple(_analysis(t, i, loads, links, functions, base, spectra, supports)
                     for i, t in enumerate(root.tables("analysis")))
    _unique([a.name for a in analyses], "analysis", "name")
    _cross_check_analyses(analyses)
    _check_function_domains(analyses, loads, imposed, relations, functions)
    check_base_acceleration_functions(analyses, loads)
    check_support_domains(analyses, supports, functions)
    checks = _checks(root.raw("check", []), analyses)
    out_t = root.table("output", None)
    output = Path(f"{path.stem}.h5")
    if out_t is not None:
        output = Path(out_t.str("file", str(output)))
        output = output if output.is_absolute() else base / output
        out_t.done()
    root.done()
    return Study(path=path, source=source, title=title, mesh=mesh, components=components,
                 discrete=discrete, imposed=tuple(imposed), relations=tuple(relations),
                 functions=functions, loads=loads, initial=initial, links=links,
                 analyses=analyses, checks=tuple(checks), output=output, rayleigh=rayleigh,
                 spectra=spectra, supports=supports)


def _unique(names, block, key):
    seen = set()
    for i, n in enumerate(names):
        if n in seen:
            raise StudyError(f"{block}[{i + 1}].{key}: '{n}' is used by another [[{block}]] block")
        seen.add(n)
