"""Base class of time functions, the constant function and helpers shared by the package."""

from __future__ import annotations

import abc
import functools
import math
import numbers

import numpy as np

from fem.errors import FunctionError

_EPS = float(np.finfo(float).eps)


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
    exact_order : float
        Highest order of derivative given exactly: 1 for a function that only defines
        ``_derivative``, ``math.inf`` for tables, records, expressions and constants.
    """

    kind: str = ""
    #: Highest order of derivative the function gives exactly (``math.inf``: every order).
    #: Beyond it :meth:`derivative` differences the highest exact one (see
    #: :meth:`_difference`).
    exact_order: float = 1
    #: the variables it is a function of: time (an expression may instead name the variables
    #: of a link's force law, ``fem.functions.expression``)
    variables: tuple = ("t",)
    #: whether it is the force law of a link (an expression of u and v), not a function of
    #: time
    of_force: bool = False

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

    def derivative(self, t, order: int = 1):
        """Time derivative of order ``order``, d^order f / dt^order, 1/s^order.

        Exact up to :attr:`exact_order` (every order for tables, records, expressions and
        constants); where a derivative jumps (a table's breakpoint) it takes the
        right-continuous value, the one after the jump.

        Parameters
        ----------
        t : float or ndarray of any shape
            Time, s.
        order : int, default 1
            0 gives the value f(t).

        Returns
        -------
        float or ndarray
            Same shape convention as :meth:`__call__`.
        """
        if isinstance(order, bool) or not isinstance(order, numbers.Integral) or order < 0:
            raise ValueError(f"the order of a derivative must be an integer >= 0 "
                             f"(got {order!r})")
        if order == 0:
            return self(t)
        return self._apply(functools.partial(self._derivative_of_order, order=int(order)), t)

    @property
    def time_scale(self) -> float:
        """s: the time over which the function changes appreciably; a derivative beyond
        :attr:`exact_order` is a difference with steps proportional to it. Subclasses that
        know their own scale override the default of 1 s."""
        return 1.0

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

    def _higher_derivative(self, t: np.ndarray, order: int):
        """Exact derivatives of an order 2 <= ``order`` <= :attr:`exact_order` on a float
        array ``t``; may return a scalar to be broadcast."""
        raise NotImplementedError(f"{type(self).__name__} has no derivative of order {order}")

    def _derivative_of_order(self, t: np.ndarray, order: int):
        if order == 1:
            return self._derivative(t)
        if order <= self.exact_order:
            return self._higher_derivative(t, order)
        return self._difference(t, order)

    def _difference(self, t: np.ndarray, order: int) -> np.ndarray:
        """Derivatives of an order beyond :attr:`exact_order` by one-sided differences of
        the highest exact derivative, on a float array ``t``.

        Each of the m = ``order`` - exact_order differences is the second-order formula
        (-3 g(t) + 4 g(t + s) - g(t + 2 s)) / (2 s): forward (the derivative after t, as at a
        jump) unless the 2 m s it spans would leave the domain, then backward; so no instant
        outside the domain is evaluated. The step is a fraction of the function's time scale
        T that balances truncation, (s / T)^2, against round-off, r / (s / T)^m:
        s = T r^(1/(m + 2)), where r = eps + spacing(t) / T is the relative round-off of g(t),
        of its value and of t itself (known to the spacing of doubles at t only). The step
        is rounded so that the instants t + k s are exact.
        """
        exact = int(self.exact_order)
        m = order - exact
        lo, hi = self.domain
        scale = self.time_scale
        round_off = _EPS + np.spacing(np.abs(t)) / scale
        h = scale * round_off ** (1.0 / (m + 2))
        # in a bounded domain, one of the two stencils fits at every instant
        h = np.minimum(h, (hi - lo) / (4 * m))
        forward = ~(t + 2 * m * h > hi)
        step = np.where(forward, h, -h)
        # floor at the spacing of t, so that the step survives rounding
        step = np.copysign(np.maximum(np.abs(step), np.spacing(np.abs(t))), step)
        step = (t + step) - t
        weights = np.ones(1)
        for _ in range(m):
            weights = np.convolve(weights, [-1.5, 2.0, -0.5])
        out = np.zeros(t.shape)
        for k, weight in enumerate(weights):
            g = self._derivative_of_order(t + k * step, exact)
            out += weight * np.broadcast_to(np.asarray(g, dtype=float), t.shape)
        return out / step ** m

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
    exact_order = math.inf

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

    def _higher_derivative(self, t, order):
        return 0.0

    def __repr__(self) -> str:
        return f"<Constant {self.name!r} = {self.value!r}>"


#: The unit function, default multiplier of loads without a function.
ONE = Constant(1.0)
