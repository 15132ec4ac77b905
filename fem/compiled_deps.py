"""The sources that each module of fem's compiled code depends on (``fem.compiled`` keys
numba's disk cache on them).

numba checks a cached function only against the file that defines it, but the compiled code
of a module also holds what it reads from other modules: the compiled helpers it calls or
inlines, the constants it freezes (the columns of ``fem.laws.columns``). The sources a
module's compiled code depends on are found from the module's syntax tree:

* its compiled code: the top-level functions decorated by numba, and those named in a
  top-level statement that mentions numba (``numba.njit(...)(f.py_func)``);
* the code that runs when it is imported: its top-level statements (an assignment of plain
  names only once the code counted so far reads one of them), the decorators and default
  values of its other functions, its class statements but not their methods, and
  the bodies of its own functions and classes that this code calls (a table built by a
  function), to a fixed point;
* the names these read, resolved through the module's import statements to the package's
  modules they come from (``from fem.laws.columns import GAP`` reads fem/laws/columns.py,
  ``kernels.step(...)`` after ``from fem.integrators import kernels`` reads
  fem/integrators/kernels.py, ``from x import *`` reads x);
* the same, from each module so found, whether it compiles code or holds constants.

A module read only by Python code (a scheme's driver that calls a compiled loop, the event
handling between steps) is not among them: editing it leaves the compiled code cached.
"""

from __future__ import annotations

import ast
import hashlib
import os

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def package_sources(package_dir: str) -> dict[str, bytes]:
    """Contents of the package's .py files by path relative to ``package_dir`` (with /)."""
    sources = {}
    for folder, subfolders, files in os.walk(package_dir):
        subfolders[:] = [d for d in subfolders if d != "__pycache__" and not d.startswith(".")]
        rel = os.path.relpath(folder, package_dir).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        for name in files:
            if name.endswith(".py"):
                try:
                    with open(os.path.join(folder, name), "rb") as f:
                        sources[prefix + name] = f.read()
                except OSError:
                    pass
    return sources


def module_names(sources: dict, package: str) -> dict[str, str]:
    """Relative path of each module of the package by dotted name."""
    names = {}
    for path in sources:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([package, *parts])] = path
    return names


class _Scan:
    """What one walk of a syntax tree finds: the names read with their attribute chains
    (``a``, ``a.b``, ``a.b.c``), the plain names called, whether numba is mentioned, the
    import statements."""

    __slots__ = ("names", "calls", "numba", "imports")

    def __init__(self, nodes):
        self.names, self.calls, self.numba, self.imports = set(), set(), False, []
        for node in nodes:
            for sub in ast.walk(node):
                kind = type(sub)
                if kind is ast.Name:
                    self.names.add(sub.id)
                    if sub.id in ("numba", "njit", "jit"):
                        self.numba = True
                elif kind is ast.Attribute:
                    if sub.attr in ("njit", "jit"):
                        self.numba = True
                    parts = []
                    cur = sub
                    while type(cur) is ast.Attribute:
                        parts.append(cur.attr)
                        cur = cur.value
                    if type(cur) is ast.Name:
                        parts.append(cur.id)
                        parts.reverse()
                        self.names.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
                elif kind is ast.Call:
                    if type(sub.func) is ast.Name:
                        self.calls.add(sub.func.id)
                elif kind is ast.Import or kind is ast.ImportFrom:
                    self.imports.append(sub)


def reads(tree: ast.Module) -> tuple[bool, set[str], list]:
    """(whether the module compiles code, the names its compiled code and the code that
    runs at its import read, the module's import statements): see the module's docstring."""
    scans = [_Scan([node]) for node in tree.body]
    imports = [i for scan in scans for i in scan.imports]
    compiled = set()
    for node, scan in zip(tree.body, scans):
        if isinstance(node, _FUNCTIONS):
            if any(_Scan([d]).numba for d in node.decorator_list):
                compiled.add(node.name)
        elif not isinstance(node, (ast.Import, ast.ImportFrom)) and scan.numba:
            compiled |= {n for n in scan.names if "." not in n}
    defs = {n.name: (n, scan) for n, scan in zip(tree.body, scans)
            if isinstance(n, (*_FUNCTIONS, ast.ClassDef))}
    compiled &= set(defs)
    parts = []
    #: assignments of names, counted once something counted reads the name
    bindings = []
    for node, scan in zip(tree.body, scans):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets = _assigned(node)
        if targets and not scan.numba:
            bindings.append((targets, scan))
            continue
        if isinstance(node, _FUNCTIONS):
            if node.name in compiled:
                parts.append(scan)
            else:
                parts.append(_Scan(node.decorator_list + node.args.defaults
                                   + [d for d in node.args.kw_defaults if d is not None]))
        elif isinstance(node, ast.ClassDef):
            parts.append(_Scan(node.decorator_list + node.bases + node.keywords
                               + [s for s in node.body if not isinstance(s, _FUNCTIONS)]))
        else:
            parts.append(scan)
    names = set().union(*(p.names for p in parts)) if parts else set()
    calls = set().union(*(p.calls for p in parts)) if parts else set()
    taken = set(compiled)
    while True:
        more = (calls & set(defs)) - taken
        used = [b for b in bindings if b[0] & names]
        if not more and not used:
            break
        taken |= more
        for name in more:
            names |= defs[name][1].names
            calls |= defs[name][1].calls
        for b in used:
            bindings.remove(b)
            names |= b[1].names
            calls |= b[1].calls
    return bool(compiled), names, imports


def _assigned(node) -> set[str]:
    """The plain names a top-level assignment binds (empty for any other statement, or an
    assignment to a subscript or attribute, which counts as code that runs)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return set()
    out = set()
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, (ast.Subscript, ast.Attribute, ast.Starred)):
                return set()
            if isinstance(sub, ast.Name):
                out.add(sub.id)
    return out


def _bindings(imports: list, name: str, is_package: bool, modules: dict) -> dict:
    """The module (dotted name) that each name an import statement of module ``name`` binds
    stands for, with the attribute chains that are modules (``import a.b`` binds "a" and
    "a.b"); ``"*x"`` for ``from x import *``."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    bound = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    parts = alias.name.split(".")
                    for i in range(1, len(parts) + 1):
                        bound[".".join(parts[:i])] = ".".join(parts[:i])
        else:
            if node.level:
                if node.level > len(here):
                    continue
                base = ".".join(here[:len(here) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    bound["*" + base] = base
                    continue
                sub = f"{base}.{alias.name}"
                bound[alias.asname or alias.name] = sub if sub in modules else base
    return bound


def dependencies(source: bytes, name: str, path: str, modules: dict) -> tuple[bool, set[str]]:
    """(whether module ``name`` (at relative ``path``) compiles code, the relative paths of
    the package's modules that its compiled code and its import-time code read)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return b"numba" in source, set(modules.values())     # read everything: never stale
    compiled, names, imports = reads(tree)
    bound = _bindings(imports, name, path.endswith("__init__.py"), modules)
    found = {module for local, module in bound.items() if local.startswith("*")}
    for dotted in names:
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):          # the longest chain that is bound
            key = ".".join(parts[:i])
            if key in bound:
                found.add(bound[key])
                break
    return compiled, {modules[m] for m in found if m in modules}


def module_keys(package_dir: str, package: str, sources: dict | None = None) -> dict[str, str]:
    """16 hexadecimal digits for each module of the package that compiles code (by relative
    path): the SHA-256 of the paths and contents of the module and of every module its
    compiled code depends on, directly or not (``sources``: ``package_sources``, if read)."""
    sources = package_sources(package_dir) if sources is None else sources
    modules = module_names(sources, package)
    names = {path: name for name, path in modules.items()}
    compiled, edges = {}, {}
    for path, text in sources.items():
        if b"numba" in text:
            compiled[path], edges[path] = dependencies(text, names[path], path, modules)
    keys = {}
    for path in sorted(p for p, c in compiled.items() if c):
        seen, todo = {path}, [path]
        while todo:
            other = todo.pop()
            if other not in edges:
                edges[other] = dependencies(sources[other], names[other], other, modules)[1]
            for nxt in edges[other] - seen:
                seen.add(nxt)
                todo.append(nxt)
        digest = hashlib.sha256()
        for p in sorted(seen):
            digest.update(p.encode() + b"\0" + str(len(sources[p])).encode() + b"\0"
                          + sources[p])
        keys[path] = digest.hexdigest()[:16]
    return keys
