"""Base class of time functions, the constant function and helpers shared by the package."""

from __future__ import annotations

import abc
import math
import numbers

import numpy as np

from fem.errors import FunctionError


def _num(x) -> str:
    """Shortest text that reads back as the same float."""
    return repr(float(x))


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


class TimeFunction(abc.ABC):
    """A scalar function of time, f(t), dimensionless multiplier of a load or imposed value.

    Parameters
    ----------
    name : str
        Name of the function in the study (the ``<name>`` of ``[functions.<name>]``).

    Attributes
    ----------
    name : str
    kind : str
        ``"table"``, ``"expression"``, ``"record"`` or ``"constant"``.
    """

    kind: str = ""

    def __init__(self, name: str):
        self.name = str(name)

    def __call__(self, t):
        """Value f(t).

        Parameters
        ----------
        t : float or ndarray of any shape
            Time, s.

        Returns
        -------
        float or ndarray
            A float for a scalar ``t``, else an ndarray of the same shape as ``t``.

        Raises
        ------
        FunctionError
            If ``t`` lies outside the domain of a table whose rule on that side is "error".
        """
        return self._apply(self._evaluate, t)

    def derivative(self, t):
        """Exact time derivative df/dt, 1/s, right-continuous where the slope jumps.

        Parameters
        ----------
        t : float or ndarray of any shape
            Time, s.

        Returns
        -------
        float or ndarray
            Same shape convention as :meth:`__call__`.
        """
        return self._apply(self._derivative, t)

    @property
    def breakpoints(self) -> np.ndarray:
        """(k,) float, s: sorted times where the value or the slope is discontinuous.

        Integrators may land on them. Empty for expressions and constants.
        """
        return np.zeros(0)

    @property
    def domain(self) -> tuple[float, float]:
        """(t_min, t_max), s: times where evaluation is allowed (infinite when unbounded)."""
        return (-math.inf, math.inf)

    @abc.abstractmethod
    def _evaluate(self, t: np.ndarray):
        """Values on a float array ``t``; may return a scalar to be broadcast."""

    @abc.abstractmethod
    def _derivative(self, t: np.ndarray):
        """Derivatives on a float array ``t``; may return a scalar to be broadcast."""

    @staticmethod
    def _apply(method, t):
        scalar = not isinstance(t, np.ndarray) and np.ndim(t) == 0
        arr = np.asarray(t, dtype=float)
        # Methods index with masks, which 0-d arrays do not support.
        work = arr if arr.ndim else arr.reshape(1)
        # The caller judges inf/nan results; numpy must not print warnings about them.
        with np.errstate(all="ignore"):
            out = np.asarray(method(work), dtype=float)
        if out.shape == work.shape:
            out = out.reshape(arr.shape)
        if out.shape != arr.shape:
            out = np.broadcast_to(out, arr.shape).copy()
        elif np.may_share_memory(out, arr):
            out = out.copy()
        return float(out) if scalar else out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class Constant(TimeFunction):
    """The constant function f(t) = value.

    Parameters
    ----------
    value : float
        The constant, finite.
    name : str, default "1"
    """

    kind = "constant"

    def __init__(self, value: float = 1.0, name: str = "1"):
        super().__init__(name)
        if not _is_real(value) or not math.isfinite(value):
            raise FunctionError(f"function '{name}': constant value must be a finite number "
                                f"(got {value!r})")
        self.value = float(value)

    def _evaluate(self, t):
        return self.value

    def _derivative(self, t):
        return 0.0

    def __repr__(self) -> str:
        return f"<Constant {self.name!r} = {self.value!r}>"


#: The unit function, default multiplier of loads without a function.
ONE = Constant(1.0)
