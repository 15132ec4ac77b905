"""numba's disk cache keyed on the sources of fem's compiled code.

The step loops are compiled with ``numba.njit(cache=True)``. numba checks a cached function
only against the file that defines it: a loop that inlines a helper of another module (a
solve of ``fem.linalg``, a link law of ``fem.links``), or that freezes a constant imported
from another module (the columns of ``fem.links.columns``),
keeps running its old compiled code after that other file is edited.

So, before any fem module with compiled code is imported (``fem/__init__.py`` runs this
first), the cache is pointed at a folder named by a hash of the compiled sources: the
contents of every fem module that mentions numba (they all ``import numba``) and of every
fem module that these import, directly or not. Editing any of them gives a fresh folder,
and nothing compiled from the old sources can be loaded again.

Where the folders go (``<root>/<hash>``):

* ``$NUMBA_CACHE_DIR/fem`` when the user sets NUMBA_CACHE_DIR;
* otherwise a per-user cache, ``$XDG_CACHE_HOME/fem/numba`` or ``~/.cache/fem/numba``
  (``%LOCALAPPDATA%\\fem\\numba`` on Windows);
* a private folder of the temporary directory when that one cannot be written (a read-only
  home), as a last resort a new temporary folder.

The chosen folder goes to numba through NUMBA_CACHE_DIR (numba reads it into
``numba.config.CACHE_DIR`` at its import, and again when the NUMBA_* variables change, and
its cache locators read ``config.CACHE_DIR`` when a function is decorated), so child
processes and numba functions of the user's own code use it as well. The root is also left
in ``_FEM_NUMBA_CACHE_ROOT`` for child processes that import fem: they recognize the folder
as fem's and work out their own hash under the same root. The least recently used hash
folders beyond ``KEEP`` are removed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys

#: hash folders kept under a root (the one in use and the most recently used others)
KEEP = 6
#: environment variable that tells child processes the root of the folder fem set
ROOT_VARIABLE = "_FEM_NUMBA_CACHE_ROOT"

PACKAGE = "fem"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

#: an import statement from the start of its line: ``from X import names`` (the names
#: possibly in parentheses over several lines) or ``import X [as Y], ...``
_STATEMENT = re.compile(rb"[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
                        rb"|import[ \t]+([^\n]*))")
_NAME = re.compile(rb"[A-Za-z_]\w*")
_HASH_FOLDER = re.compile(r"[0-9a-f]{16}")

#: the folder in use, once ``use_keyed_cache`` ran
FOLDER: str | None = None


def _package_sources(package_dir: str) -> dict[str, bytes]:
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


def _module_names(sources: dict, package: str) -> dict[str, str]:
    """Relative path of each module of the package by dotted name."""
    names = {}
    for path in sources:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([package, *parts])] = path
    return names


def _statements(text: bytes):
    """The import statements of a source (matches of ``_STATEMENT``), wherever they are:
    the lines where ``import`` occurs, tried from their start (a plain search for a word
    is much faster than a pattern tried at every line)."""
    starts = {text.rfind(b"\n", 0, i) + 1 for i in _find_all(text, b"import")}
    for start in sorted(starts):
        m = _STATEMENT.match(text, start)
        if m is not None:
            yield m


def _find_all(text: bytes, word: bytes):
    i = text.find(word)
    while i >= 0:
        yield i
        i = text.find(word, i + len(word))


def _imports(name: str, path: str, text: bytes, modules: dict) -> set[str]:
    """The package's modules (relative paths) that the module ``name`` at ``path`` imports,
    with their parent packages, and the imported names that are submodules."""
    dotted = name.split(".")
    here = dotted if path.endswith("__init__.py") else dotted[:-1]   # the module's package
    found = set()

    def add(module):
        parts = module.split(".")
        if parts[0] != dotted[0]:
            return None
        for i in range(1, len(parts) + 1):
            p = modules.get(".".join(parts[:i]))
            if p is not None:
                found.add(p)
        return modules.get(module)

    for m in _statements(text):
        if m.group(3) is not None:                          # import a.b [as c], d
            for item in m.group(3).split(b"#")[0].split(b","):
                words = item.split()
                if words:
                    add(words[0].decode("ascii", "replace"))
            continue
        module = m.group(1).decode("ascii", "replace")
        level = len(module) - len(module.lstrip("."))
        if level:                                           # relative import
            if level > len(here):
                continue
            module = ".".join(here[:len(here) - level + 1] + [module[level:]]).rstrip(".")
        target = add(module)
        if target is None or not target.endswith("__init__.py"):
            continue                                        # names of a package: submodules?
        names = b"\n".join(line.split(b"#")[0] for line in m.group(2).splitlines())
        for item in names.strip(b"()").split(b","):
            words = _NAME.findall(item)
            if words:
                p = modules.get(module + "." + words[0].decode("ascii", "replace"))
                if p is not None:
                    found.add(p)
    return found


def compiled_sources(package_dir: str = PACKAGE_DIR, package: str = PACKAGE) -> dict[str, bytes]:
    """The compiled sources of the package by relative path: the modules that mention
    numba and all the package's modules they import, directly or not."""
    sources = _package_sources(package_dir)
    modules = _module_names(sources, package)
    names = {path: name for name, path in modules.items()}
    todo = [p for p, text in sources.items() if b"numba" in text]
    chosen = set(todo)
    while todo:
        path = todo.pop()
        for other in _imports(names[path], path, sources[path], modules):
            if other not in chosen:
                chosen.add(other)
                todo.append(other)
    return {p: sources[p] for p in sorted(chosen)}


def source_hash(package_dir: str = PACKAGE_DIR, package: str = PACKAGE) -> str:
    """16 hexadecimal digits of the SHA-256 of the compiled sources (paths and contents)."""
    digest = hashlib.sha256()
    for path, text in compiled_sources(package_dir, package).items():
        digest.update(path.encode() + b"\0" + str(len(text)).encode() + b"\0" + text)
    return digest.hexdigest()[:16]


def _user_cache_home(environ) -> str | None:
    base = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):
        return base
    if sys.platform == "win32" and os.path.isabs(environ.get("LOCALAPPDATA", "")):
        return environ["LOCALAPPDATA"]
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def _private_temp_root() -> str | None:
    """``<tmp>/fem-numba-<user>``, created for this user alone (cached code is loaded with
    pickle: nobody else may write there); None when that cannot be had."""
    import tempfile
    if hasattr(os, "getuid"):
        uid = os.getuid()
        root = os.path.join(tempfile.gettempdir(), f"fem-numba-{uid}")
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            st = os.lstat(root)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
            return None
        return root
    import getpass
    try:
        user = re.sub(r"[^\w.-]", "_", getpass.getuser())
    except Exception:       # no user name to be had
        return None
    return os.path.join(tempfile.gettempdir(), f"fem-numba-{user}")


def cache_roots(environ=None):
    """The roots of the hash folders, by preference (see the module's docstring)."""
    environ = os.environ if environ is None else environ
    given = environ.get("NUMBA_CACHE_DIR", "")
    inherited = environ.get(ROOT_VARIABLE, "")
    if given and inherited and \
            os.path.dirname(os.path.normpath(given)) == os.path.normpath(inherited):
        yield inherited                 # set by fem in a parent process, under this root
    elif given:
        yield os.path.join(given, PACKAGE)
    else:
        home = _user_cache_home(environ)
        if home is not None:
            yield os.path.join(home, PACKAGE, "numba")
    temp = _private_temp_root()
    if temp is not None:
        yield temp


def _writable(folder: str) -> bool:
    """Create ``folder`` if needed and check that a file can be written in it (numba makes
    the same test, and skips a cache folder that fails it for the in-tree cache)."""
    probe = os.path.join(folder, f".probe-{os.getpid()}")
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.unlink(probe)
    except OSError:
        return False
    return True


def prune(root: str, keep: int = KEEP, current: str | None = None) -> None:
    """Remove the hash folders of ``root`` beyond the ``keep`` most recently used (the
    current one always kept). Other files and folders of ``root`` are left alone."""
    try:
        entries = [e for e in os.scandir(root)
                   if _HASH_FOLDER.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    if len(entries) <= keep:
        return

    def used(e):
        try:
            return e.stat(follow_symlinks=False).st_mtime
        except OSError:
            return 0.0

    others = sorted((e for e in entries if e.name != current), key=used, reverse=True)
    import shutil
    for e in others[keep - 1:]:
        shutil.rmtree(e.path, ignore_errors=True)


def cache_folder(key: str, environ=None) -> tuple[str, str] | None:
    """(root, folder) for the sources of hash ``key``: the folder ``<root>/<key>`` under
    the first root of ``cache_roots`` where it can be written (created, its time of use
    updated, the old ones of its root pruned), else under a new temporary folder; None when
    nothing can be written at all."""
    for root in cache_roots(environ):
        folder = os.path.join(root, key)
        if _writable(folder):
            try:
                os.utime(folder)        # the most recently used
            except OSError:
                pass
            prune(root, current=key)
            return root, folder
    import tempfile
    try:
        root = tempfile.mkdtemp(prefix="fem-numba-")
        folder = os.path.join(root, key)
        os.mkdir(folder)
    except OSError:
        return None
    return root, folder


def use_keyed_cache() -> str | None:
    """Point numba's cache at the folder of the current compiled sources; returns it.

    Runs before any module with ``numba.njit(cache=True)`` is imported (numba's cache
    locators read ``numba.config.CACHE_DIR`` when a function is decorated).
    """
    global FOLDER
    chosen = cache_folder(source_hash(), os.environ)
    if chosen is None:                  # nothing can be written: numba's own choice
        return None
    root, FOLDER = chosen
    os.environ["NUMBA_CACHE_DIR"] = FOLDER
    os.environ[ROOT_VARIABLE] = root
    config = sys.modules.get("numba.core.config")
    if config is not None:              # numba imported before fem: it read the old value
        config.CACHE_DIR = FOLDER
    return FOLDER


# --------------------------------------------------------------------------- repeated calls
class Bound:
    """A compiled function called again and again from Python with arguments of the same
    types (a scheme's step loop, its trial step, its law evaluation).

    numba's dispatcher works out the types of every argument at each call; for named tuples
    of arrays (a scheme's operators, its buffers) that costs tens of microseconds, more than
    a short call itself. The first call goes through the dispatcher (compiling or loading the
    function) and keeps the compiled version for those types, with a fingerprint of each
    argument; a later call whose arguments match the fingerprints calls that version
    directly. The fingerprint of an array is its dtype, dimension, layout and writability, of
    a scalar its type, of a named tuple those of its fields (checked by identity when it is
    the object of the previous call: its fields cannot be rebound); any other argument, or
    one that does not match, goes through the dispatcher again (and binds the version for
    its types)."""

    __slots__ = ("dispatcher", "binding")

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        #: (fingerprints, compiled entry point), replaced as a whole (threads may call)
        self.binding = None

    @property
    def entry(self):
        return self.binding[1] if self.binding is not None else None

    def __call__(self, *args):
        binding = self.binding
        if binding is not None and len(args) == len(binding[0]):
            for arg, fp in zip(args, binding[0]):
                if fp.__class__ is type:
                    if arg.__class__ is not fp:
                        break
                elif fp.__class__ is list:
                    if arg is not fp[1] and not _same_tuple(arg, fp):
                        break
                elif (arg.__class__ is not fp[0] or arg.dtype != fp[1] or arg.ndim != fp[2]
                      or _layout(arg.flags.num) != fp[3]):
                    break
            else:
                return binding[1](*args)
        result = self.dispatcher(*args)
        self.binding = self._bind(args)
        return result

    def _bind(self, args):
        """(fingerprints, entry point) of the compiled version for the types of ``args``, or
        None when an argument has no fingerprint or the function is not compiled."""
        if not hasattr(self.dispatcher, "overloads"):
            return None                         # not a numba dispatcher: always called as is
        prints = []
        for arg in args:
            fp = _fingerprint(arg)
            if fp is None:
                return None
            prints.append(fp)
        types = tuple(self.dispatcher.typeof_pyval(arg) for arg in args)
        compiled = self.dispatcher.overloads.get(types)
        if compiled is None:
            return None
        return tuple(prints), compiled.entry_point


_SCALARS = (float, int, bool)
#: numpy's array flags C_CONTIGUOUS, F_CONTIGUOUS, ALIGNED and WRITEABLE
_C, _F, _ALIGNED, _WRITEABLE = 0x1, 0x2, 0x100, 0x400


def _layout(flags: int) -> int:
    """The flags that make an array's numba type: its layout as numba reads it (C when C
    contiguous, else F when Fortran contiguous, else any), alignment and writability."""
    if flags & _C:
        return flags & (_C | _ALIGNED | _WRITEABLE)
    return flags & (_F | _ALIGNED | _WRITEABLE)


def _fingerprint(arg):
    """What a later argument at the same place must match (``Bound``), or None: a scalar's
    type; an array's type, dtype, dimension and layout; for a named tuple, a list [the last
    object seen, its type, its fields' fingerprints]."""
    kind = type(arg)
    if kind in _SCALARS:
        return kind
    if isinstance(arg, tuple) and hasattr(kind, "_fields"):
        fields = tuple(_fingerprint(field) for field in arg)
        if any(field is None for field in fields):
            return None
        return [None, arg, kind, fields]
    if hasattr(arg, "__array_interface__") and hasattr(arg, "flags"):
        return (kind, arg.dtype, arg.ndim, _layout(arg.flags.num))
    return None


def _matches(arg, fp) -> bool:
    if fp.__class__ is type:
        return arg.__class__ is fp
    if fp.__class__ is list:
        return arg is fp[1] or _same_tuple(arg, fp)
    return (arg.__class__ is fp[0] and arg.dtype == fp[1] and arg.ndim == fp[2]
            and _layout(arg.flags.num) == fp[3])


def _same_tuple(arg, fp) -> bool:
    """Whether the named tuple ``arg`` (another object than the last one seen) has the types
    of fingerprint ``fp``; if so it becomes the object seen, so that the next call with it
    takes the identity test alone."""
    fields = fp[3]
    if arg.__class__ is not fp[2] or len(arg) != len(fields):
        return False
    for field, sub in zip(arg, fields):
        if not _matches(field, sub):
            return False
    fp[1] = arg
    return True
