"""Global error measures of a transient run: energy balance and contact-law consistency."""

from __future__ import annotations

import numpy as np


def _rms_ratio(residual: np.ndarray, scale: np.ndarray) -> float:
    """sqrt(Σ residual² / Σ scale²), 0 when the scale is identically zero."""
    denominator = float(np.sum(scale * scale))
    if denominator == 0.0:
        return 0.0
    return float(np.sqrt(np.sum(residual * residual) / denominator))


def energy_balance_error(kinetic, potential, link_energy, dissipated, external_work) -> float:
    r"""Global relative RMS error of the energy balance over a time history.

    With the total energy :math:`E_i = K_i + V_i + L_i + D_i` (kinetic, potential, energy
    stored in the links, energy dissipated since the start) and :math:`W_i` the work of the
    external forces since the start, at the archived instants :math:`i = 0 \dots n-1`:

    .. math::

        e = \sqrt{\frac{\sum_i (E_i - E_0 - W_i)^2}{\sum_i W_i^2}}

    When :math:`W` is zero (free motion), or no more than the round-off of the energies
    (below :math:`10^{-12}` of them in RMS: an imposed motion that does no work), the
    denominator is :math:`\sum_i E_i^2`; the error is 0 when both are zero. Subtracting :math:`E_0` extends
    the usual definition (a start at rest, :math:`E_0 = 0`) to any initial state.

    Parameters
    ----------
    kinetic, potential, link_energy, dissipated, external_work : array_like, shape (nt,)
        Energies in J at the same instants.

    Returns
    -------
    float
        Dimensionless; 0 for an exact balance.
    """
    terms = [np.asarray(a, dtype=float) for a in (kinetic, potential, link_energy, dissipated,
                                                  external_work)]
    if len({a.shape for a in terms}) != 1:
        raise ValueError(f"energy terms of different shapes: {[a.shape for a in terms]}")
    *stored, work = terms
    total = sum(stored)
    if total.size == 0:
        return 0.0
    residual = total - total[0] - work
    negligible = np.sqrt(np.mean(work * work)) <= 1e-12 * np.sqrt(np.mean(total * total))
    scale = total if negligible else work
    return _rms_ratio(residual, scale)


def link_force_error(normal_force, penetration, stiffness: float) -> float:
    r"""Global relative RMS gap between a link's normal force and its elastic law.

    .. math::

        e = \sqrt{\frac{\sum_i (F_i - k\,p_i)^2}{\sum_i (k\,p_i)^2}}

    with :math:`F_i` the normal force, :math:`p_i` the penetration and :math:`k` the contact
    stiffness. A negative penetration (open gap) counts as 0. The error is 0 if there was no
    contact at all. It measures how well the computed forces follow the kinematics; a link
    with contact damping does not satisfy :math:`F = k p` exactly.

    Parameters
    ----------
    normal_force : array_like, shape (nt,)
        In N, positive in compression (the sign of ``k p``).
    penetration : array_like, shape (nt,)
        In m, positive when the surfaces overlap.
    stiffness : float
        Contact stiffness in N/m.

    Returns
    -------
    float
        Dimensionless; 0 for a purely elastic contact computed exactly.
    """
    force = np.asarray(normal_force, dtype=float)
    elastic = stiffness * np.maximum(np.asarray(penetration, dtype=float), 0.0)
    if force.shape != elastic.shape:
        raise ValueError(f"normal_force {force.shape} and penetration {elastic.shape} "
                         "differ in shape")
    return _rms_ratio(force - elastic, elastic)
