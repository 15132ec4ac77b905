"""The motion of a support from its record: :class:`IntegratedTable` (an acceleration table
integrated twice, exactly) and :class:`Scaled` (a displacement function times a factor).

An acceleration record a(t) given as a table is piecewise linear; its velocity and its
displacement are then piecewise quadratic and cubic, and both are computed exactly, segment
by segment, from the velocity v0 and displacement d0 at the table's first time t0:

    on [t_i, t_i+1], tau = t - t_i, s_i the slope of the segment:
    a = a_i + s_i tau,  v = V_i + a_i tau + s_i tau^2 / 2,
    d = D_i + V_i tau + a_i tau^2 / 2 + s_i tau^3 / 6,

with V_i, D_i carried from segment to segment (V_0 = v0, D_0 = d0). Before t0 and after the
last time the table's ``left`` and ``right`` rules extend the acceleration ("constant": the
end value, "linear": the end segment, "error": the motion is not defined there), and the
motion follows the same polynomials. The function's value is the displacement (m); its
derivatives of order 1, 2, 3 are the velocity, the acceleration and the slope of the
acceleration, exact and right-continuous at the table's times.
"""

from __future__ import annotations

import math

import numpy as np

from fem.functions.base import TimeFunction


class IntegratedTable(TimeFunction):
    """Displacement (m) whose second derivative is ``scale`` times a table (m/s^2).

    Parameters
    ----------
    name : str
        Name shown in messages (the support and component it drives).
    table : fem.functions.Table
        The acceleration record (a :class:`~fem.functions.Table` or
        :class:`~fem.functions.Record`).
    scale : float
        Factor on the table's values.
    velocity, displacement : float
        Velocity (m/s) and displacement (m) at the table's first time.
    """

    kind = "integrated"
    exact_order = math.inf
    #: a cubic between the table's times (schemes that interpolate the loads use it)
    polynomial_degree = 3

    def __init__(self, name: str, table, scale: float = 1.0, velocity: float = 0.0,
                 displacement: float = 0.0):
        super().__init__(name)
        self.table = table
        self.scale = float(scale)
        times = np.asarray(table.times, float)
        values = self.scale * np.asarray(table.values, float)
        if times.size == 1:
            slopes = np.zeros(0)
        else:
            slopes = np.diff(values) / np.diff(times)
        # pieces: [left extension, segments..., right extension], each a polynomial in
        # tau = t - origin with coefficients of the displacement (c0, c1, c2, c3)
        starts = [-math.inf]
        origins = [times[0]]
        left_slope = slopes[0] if (table.left == "linear" and slopes.size) else 0.0
        coefs = [(displacement, velocity, values[0] / 2.0, left_slope / 6.0)]
        d, v = float(displacement), float(velocity)
        for i in range(slopes.size):
            a, s, h = values[i], slopes[i], times[i + 1] - times[i]
            starts.append(times[i])
            origins.append(times[i])
            coefs.append((d, v, a / 2.0, s / 6.0))
            d, v = (d + v * h + a * h * h / 2.0 + s * h ** 3 / 6.0, v + a * h + s * h * h / 2.0)
        right_slope = slopes[-1] if (table.right == "linear" and slopes.size) else 0.0
        starts.append(times[-1])
        origins.append(times[-1])
        coefs.append((d, v, values[-1] / 2.0, right_slope / 6.0))
        self._starts = np.asarray(starts[1:], float)       # piece k + 1 starts at _starts[k]
        self._origins = np.asarray(origins, float)
        self._coefs = np.asarray(coefs, float)              # (pieces, 4)

    @property
    def domain(self):
        return self.table.domain

    @property
    def breakpoints(self) -> np.ndarray:
        """The table's breakpoints: where the acceleration's slope jumps."""
        return self.table.breakpoints

    def _pieces(self, t: np.ndarray):
        times = self.table.times
        if times.size > 1:
            self.table._check_domain(t, t < times[0], t > times[-1])
        k = np.searchsorted(self._starts, t, side="right")
        return k, t - self._origins[k]

    def _order(self, t: np.ndarray, order: int):
        k, tau = self._pieces(t)
        c = self._coefs[k]
        if order == 0:
            out = c[:, 0] + tau * (c[:, 1] + tau * (c[:, 2] + tau * c[:, 3]))
        elif order == 1:
            out = c[:, 1] + tau * (2.0 * c[:, 2] + 3.0 * tau * c[:, 3])
        elif order == 2:
            out = 2.0 * c[:, 2] + 6.0 * tau * c[:, 3]
        elif order == 3:
            out = 6.0 * c[:, 3]
        else:
            out = np.zeros(t.shape)
        return np.where(np.isnan(t), np.nan, out)

    def _evaluate(self, t):
        return self._order(t, 0)

    def _derivative(self, t):
        return self._order(t, 1)

    def _higher_derivative(self, t, order):
        return self._order(t, order)

    def __repr__(self) -> str:
        return f"<IntegratedTable {self.name!r} of {self.table!r}, scale {self.scale!r}>"


class Scaled(TimeFunction):
    """``scale`` times a function of the study, with its exact derivatives.

    Parameters
    ----------
    name : str
    function : TimeFunction
    scale : float
    """

    kind = "scaled"
    exact_order = math.inf

    def __init__(self, name: str, function, scale: float = 1.0):
        super().__init__(name)
        self.function = function
        self.scale = float(scale)

    @property
    def domain(self):
        return self.function.domain

    @property
    def breakpoints(self) -> np.ndarray:
        return self.function.breakpoints

    @property
    def time_scale(self) -> float:
        return self.function.time_scale

    @property
    def polynomial_degree(self):
        """The wrapped function's degree between breakpoints, when it states one."""
        return getattr(self.function, "polynomial_degree", None)

    def _evaluate(self, t):
        return self.scale * np.asarray(self.function(t), float)

    def _derivative(self, t):
        return self.scale * np.asarray(self.function.derivative(t, 1), float)

    def _higher_derivative(self, t, order):
        return self.scale * np.asarray(self.function.derivative(t, order), float)

    def _derivative_of_order(self, t, order):
        # the wrapped function decides how exact each order is
        return self.scale * np.asarray(self.function.derivative(t, order), float)

    def __repr__(self) -> str:
        return f"<Scaled {self.name!r}: {self.scale!r} x {self.function!r}>"
