"""The variants of a sweep: the product of lists of values (a grid), lists taken in step
(``zip``), or random draws; and the ``--vary`` and ``--collect`` options of ``fem sweep``.

A parameter is a study PATH (``link.stop.gap``, see :meth:`fem.Study.with_values`) and what
it takes: a list of values, or, for random draws, a distribution ``"uniform:a:b"``,
``"normal:mu:sigma"`` or a list drawn from with equal probability.
"""

from __future__ import annotations

import builtins
import itertools
import math
import numbers
import re
from collections.abc import Mapping

import numpy as np

from fem.errors import StudyError

DISTRIBUTIONS = ("uniform", "normal")
_INTEGER = re.compile(r"[+-]?\d+")


def plain(value):
    """A value as JSON and TOML hold it: numpy scalars and arrays, tuples turned into
    Python numbers and lists."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):
        return plain(value.tolist())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def parse_distribution(path: str, text: str) -> tuple[str, float, float]:
    """``"uniform:a:b"`` or ``"normal:mu:sigma"`` -> (name, a, b).

    Raises
    ------
    StudyError
        Another name, not two finite numbers, b < a for uniform, sigma < 0 for normal.
    """
    name, _, rest = text.partition(":")
    parts = rest.split(":")
    if name not in DISTRIBUTIONS or len(parts) != 2:
        raise StudyError(f"{path}: expected a list of values or 'uniform:a:b' or "
                         f"'normal:mu:sigma', got '{text}'")
    try:
        a, b = (float(p) for p in parts)
    except ValueError:
        raise StudyError(f"{path}: '{text}': the bounds of {name} are not numbers") from None
    if not (math.isfinite(a) and math.isfinite(b)):
        raise StudyError(f"{path}: '{text}': the bounds of {name} must be finite")
    if name == "uniform" and b < a:
        raise StudyError(f"{path}: '{text}': uniform:a:b needs a <= b")
    if name == "normal" and b < 0:
        raise StudyError(f"{path}: '{text}': normal:mu:sigma needs sigma >= 0")
    return name, a, b


def _values(path, given) -> list:
    if isinstance(given, (str, bytes, Mapping)) or not hasattr(given, "__len__"):
        raise StudyError(f"{path}: give a list of values, got {given!r}")
    values = plain(list(given))
    if not values:
        raise StudyError(f"{path}: the list of values is empty")
    return values


def normalized(parameters, samples=None) -> dict:
    """The parameters as plain lists (and distribution strings for random draws), checked.

    Raises
    ------
    StudyError
        No parameter, a PATH that is not a string, an empty list, a distribution without
        ``samples``, a malformed distribution.
    """
    if not isinstance(parameters, Mapping) or not parameters:
        raise StudyError("a sweep needs parameters: a mapping {PATH: list of values}")
    out = {}
    for path, given in parameters.items():
        if not isinstance(path, str) or not path.strip():
            raise StudyError(f"a sweep parameter is a study path like 'link.stop.gap', not "
                             f"{path!r}")
        if isinstance(given, str):
            if samples is None:
                raise StudyError(f"{path}: the distribution '{given}' needs a number of "
                                 f"samples (samples=N, fem sweep --random N)")
            parse_distribution(path, given)
            out[path] = given
        else:
            out[path] = _values(path, given)
    return out


def variants(parameters: Mapping, *, samples: int | None = None, seed=None,
             zip: bool = False) -> list[dict]:
    """The values of each variant, ``[{PATH: value}, ...]``, in order.

    Parameters
    ----------
    parameters : Mapping
        PATH -> list of values; with ``samples``, PATH -> distribution or list.
    samples : int, optional
        Random draws: ``samples`` variants from ``numpy.random.default_rng(seed)``, each
        parameter drawn in turn within a variant.
    seed : int, optional
        Seed of the random draws.
    zip : bool
        Take the lists in step (all of the same length) instead of their full product (the
        first PATH varying slowest).
    """
    parameters = normalized(parameters, samples)
    paths = list(parameters)
    if samples is not None:
        if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) \
                or samples < 1:
            raise StudyError(f"samples: expected a positive number of variants, got "
                             f"{samples!r}")
        if zip:
            raise StudyError("zip takes lists in step; it does not apply to random draws")
        return _draws(parameters, int(samples), seed)
    if zip:
        lengths = {path: len(values) for path, values in parameters.items()}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{p} ({n})" for p, n in lengths.items())
            raise StudyError(f"zip takes the lists in step, so they must be of the same length: "
                             f"{listed}")
        rows = builtins.zip(*parameters.values())
    else:
        rows = itertools.product(*parameters.values())
    return [dict(builtins.zip(paths, row)) for row in rows]



def _draws(parameters: dict, samples: int, seed) -> list[dict]:
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise StudyError(f"seed: {exc}") from None
    found = []
    for _ in range(samples):
        values = {}
        for path, given in parameters.items():
            if isinstance(given, str):
                name, a, b = parse_distribution(path, given)
                value = rng.uniform(a, b) if name == "uniform" else rng.normal(a, b)
                values[path] = float(value)
            else:
                values[path] = given[int(rng.integers(len(given)))]
        found.append(values)
    return found


# -- the command line ------------------------------------------------------------------------
def parse_value(text: str):
    """A value of ``--vary``: an integer, a number, true or false, else the string itself."""
    stripped = text.strip()
    if _INTEGER.fullmatch(stripped):
        return int(stripped)
    try:
        return float(stripped)
    except ValueError:
        pass
    if stripped in ("true", "false"):
        return stripped == "true"
    return text


def _number(text: str):
    value = parse_value(text)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_vary(text: str, random: bool = False) -> tuple[str, object]:
    """One ``--vary PATH=...`` option -> (PATH, list of values or distribution string).

    ``PATH=v1,v2,...`` a list (numbers, else strings); ``PATH=start:stop:count`` count values
    from start to stop, both included (numpy.linspace); with ``random``,
    ``PATH=uniform:a:b`` and ``PATH=normal:mu:sigma`` too.

    Raises
    ------
    StudyError
        No ``=``, an empty PATH or value, a malformed range or distribution.
    """
    path, sep, rest = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise StudyError(f"--vary: expected PATH=v1,v2,... or PATH=start:stop:count, got "
                         f"'{text}'")
    if not rest.strip():
        raise StudyError(f"--vary {path}: no value after '='")
    head = rest.split(":", 1)[0].strip()
    if head in DISTRIBUTIONS:
        if not random:
            raise StudyError(f"--vary {path}={rest}: a distribution needs --random N")
        parse_distribution(path, rest.strip())
        return path, rest.strip()
    parts = rest.split(":")
    if len(parts) == 3 and all(_number(p) is not None for p in parts):
        return path, _linspace(path, rest, *parts)
    values = [parse_value(v) for v in rest.split(",")]
    if any(isinstance(v, str) and not v.strip() for v in values):
        raise StudyError(f"--vary {path}={rest}: an empty value in the list")
    return path, values


def _linspace(path: str, text: str, start: str, stop: str, count: str) -> list[float]:
    n = parse_value(count)
    if not isinstance(n, int) or n < 2:
        raise StudyError(f"--vary {path}={text}: start:stop:count needs a whole count of at "
                         f"least 2 (both ends are included), got '{count.strip()}'")
    a, b = float(start), float(stop)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise StudyError(f"--vary {path}={text}: start and stop must be finite")
    return [float(v) for v in np.linspace(a, b, n)]


def parse_varies(options, random: bool = False) -> dict:
    """The ``--vary`` options in order -> {PATH: values}; a PATH given twice is an error."""
    parameters = {}
    for text in options:
        path, values = parse_vary(text, random)
        if path in parameters:
            raise StudyError(f"--vary {path}: the path is given twice")
        parameters[path] = values
    return parameters


def parse_collect(text: str) -> tuple[str, str]:
    """``NODE.COMPONENT`` (``--collect``) -> (NODE, COMPONENT); the component follows the
    last dot."""
    node, sep, component = str(text).rpartition(".")
    if not sep or not node or not component:
        raise StudyError(f"collect: expected NODE.COMPONENT (like N3.DX), got '{text}'")
    return node, component
