"""Response spectrum analysis: the peak response to a design spectrum, by modal combination.

For each direction d of the analysis (a uniform support acceleration along X, Y or Z) and
each mode i of the modes analysis it names (mass-normalized shapes phi_i, circular
frequencies w_i):

- participation factor G_id = phi_i^T M r_d (r_d: unit rigid translation along d);
- spectral pseudo-acceleration S_id = scale_d * S_d(f_i, xi_i), xi_i the modal damping
  (``modal_damping``, or the ratio of the projected damping phi_i^T C phi_i / (2 w_i));
- peak modal displacement u_id = phi_i G_id S_id / w_i^2, relative to the supports, and
  from it the element forces (springs only: a peak displacement carries no velocity) and the
  reactions K u on the imposed dofs.

Modal peaks are combined per component by CQC, R = sqrt(sum_ij rho_ij R_i R_j), with Der
Kiureghian's correlation for modes of damping xi_i, xi_j and frequency ratio b = w_j / w_i:

    rho_ij = 8 sqrt(xi_i xi_j) (xi_i + b xi_j) b^1.5 /
             ((1 - b^2)^2 + 4 xi_i xi_j b (1 + b^2) + 4 (xi_i^2 + xi_j^2) b^2)

or by SRSS (rho = identity). With ``residual = true`` the static response of the modes left
out (all modes beyond those kept, and those above ``max_frequency``) is added by SRSS: the
pseudo-mode u_rd = (K^-1 M r_d - sum_i phi_i G_id / w_i^2) A_d with A_d the zero-period
acceleration of the direction's spectrum (its value at its highest frequency) or
``residual_acceleration``. Directions combine by SRSS or by the 100-40-40 rule (the largest
of R_d + 0.4 (the others)), component by component.
"""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import free_matrices
from fem.errors import SolverError, StudyError
from fem.analyses.modes import rigid_directions
from fem.analyses.transient import basis_modes
from postpro import layout

AXES = {"X": 0, "Y": 1, "Z": 2}


def cqc_correlation(omega, xi) -> np.ndarray:
    """(m, m) Der Kiureghian correlation coefficients of modes (omega rad/s, xi ratios)."""
    wi, wj = np.meshgrid(omega, omega, indexing="ij")
    xi_i, xi_j = np.meshgrid(xi, xi, indexing="ij")
    b = wj / wi
    numerator = 8.0 * np.sqrt(xi_i * xi_j) * (xi_i + b * xi_j) * b ** 1.5
    denominator = ((1 - b * b) ** 2 + 4 * xi_i * xi_j * b * (1 + b * b)
                   + 4 * (xi_i ** 2 + xi_j ** 2) * b * b)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = numerator / denominator
    # equal frequencies: rho = 1 (also the limit of undamped identical modes)
    rho[np.isclose(wi, wj, rtol=1e-12, atol=0.0) & ~np.isfinite(rho)] = 1.0
    np.fill_diagonal(rho, 1.0)
    return np.nan_to_num(rho, nan=0.0)


def combine(peaks: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """sqrt(sum_ij rho_ij R_i R_j) of modal peaks (m, k), component by component."""
    if not len(peaks):
        return np.zeros(peaks.shape[1:])
    quadratic = np.einsum("ik,ij,jk->k", peaks, rho, peaks)
    return np.sqrt(np.maximum(quadratic, 0.0))


def combine_directions(by_direction: np.ndarray, rule: str) -> np.ndarray:
    """Combined responses (ndir, k) -> (k,) by SRSS or 100-40-40."""
    if rule == "SRSS" or len(by_direction) == 1:
        return np.sqrt(np.sum(by_direction ** 2, axis=0))
    total = by_direction.sum(axis=0)
    return np.max([r + 0.4 * (total - r) for r in by_direction], axis=0)


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    t0 = time.perf_counter()
    modes = basis_modes(ctx, spec)
    M, C, K = free_matrices(model)
    kept = np.arange(modes.count)
    if p["max_frequency"] is not None:
        kept = kept[modes.frequency <= p["max_frequency"]]
    omega, shapes = modes.omega[kept], modes.shapes[:, kept]
    if np.any(omega <= 0):
        raise StudyError(f"{spec.where}.modes: mode {int(kept[np.argmax(omega <= 0)]) + 1} of "
                         f"'{p['modes']}' is a rigid-body mode (0 Hz): a response spectrum "
                         f"analysis needs a structure held by its supports")
    xi = _modal_damping(p, spec, omega, shapes, C, modes.count, kept)
    rigid = rigid_directions(model)
    directions = p["directions"]
    r = np.column_stack([rigid[:, AXES[d]] for d in directions])       # (nf, ndir)
    factors = shapes.T @ (M @ r)                                       # (m, ndir)
    acceleration = np.column_stack([
        p["scale"][d] * ctx.study.spectra[p["spectrum"][d]](omega / (2 * np.pi), xi)
        for d in directions]) if len(kept) else np.zeros((0, len(directions)))
    q = factors * acceleration / (omega ** 2)[:, None]                  # (m, ndir)
    T = model.constraints.T
    by_mode = np.einsum("fm,md->mdf", shapes, q)                       # (m, ndir, nf)
    rho = (cqc_correlation(omega, xi) if p["combination"] == "CQC"
           else np.eye(len(omega)))
    residual = _residual(p, spec, ctx, model, K, M, r, shapes, factors, omega) \
        if p["residual"] else None
    aw = ctx.writer.analysis(spec.name, "spectral", parameters=p)
    aw.dataset("frequency", omega / (2 * np.pi), "Hz")
    aw.dataset("mode_numbers", kept + 1)
    aw.dataset("damping", xi, "1")
    aw.dataset("directions", np.asarray(directions, dtype=object))
    aw.dataset("participation_factor", factors, "kg^0.5")
    aw.dataset("spectral_acceleration", acceleration, "m/s^2")
    aw.dataset("correlation", rho, "1")
    outputs = _responses(model, T, by_mode, residual, aw)
    combined = {}
    for name, (per_mode, res, units) in outputs.items():
        per_direction = np.array([combine(per_mode[:, k, :], rho)
                                  for k in range(len(directions))])
        if res is not None:
            per_direction = np.sqrt(per_direction ** 2 + res ** 2)
        combined[name] = combine_directions(per_direction, p["direction_combination"])
        aw.dataset(name, combined[name], units)
        aw.dataset(f"by_direction/{name}", per_direction, units)
        aw.dataset(f"by_mode/{name}", per_mode, units)
        if res is not None:
            aw.dataset(f"residual/{name}", res, units)
    _name_columns(aw, model)
    aw.finish("complete", "", wall_time_s=time.perf_counter() - t0, steps=0)
    u = combined["displacement"]
    ctx.say(f"  {len(kept)} modes, {p['combination']}"
            f"{' + residual' if residual is not None else ''}, largest peak displacement "
            f"{u.max() if len(u) else 0.0:.6g}")


def _modal_damping(p, spec, omega, shapes, C, count, kept):
    given = p["modal_damping"]
    if given is None:
        return np.einsum("fm,fm->m", shapes, C @ shapes) / (2 * omega)
    if len(given) == 1:
        return np.full(len(omega), given[0])
    if len(given) != count:
        raise StudyError(f"{spec.where}.modal_damping: {len(given)} ratios for the {count} "
                         f"modes of '{p['modes']}' (give one ratio, or one per mode)")
    return np.asarray(given, float)[kept]


def _residual(p, spec, ctx, model, K, M, r, shapes, factors, omega):
    """(ndir, nf) pseudo-mode displacements: the static share of the modes left out."""
    import scipy.sparse.linalg as spla

    # a sparse LU (no compiled kernel to load for one solve)
    try:
        static = spla.splu(K.tocsc()).solve(np.asarray(M @ r, float))
    except RuntimeError:
        static = np.full(r.shape, np.nan)
    if not np.all(np.isfinite(static)):
        raise SolverError(f"{spec.where}.residual: the stiffness of the free dofs is singular")
    missing = static - shapes @ (factors / (omega ** 2)[:, None])
    levels = []
    for d in p["directions"]:
        spectrum = ctx.study.spectra[p["spectrum"][d]]
        a = (p["residual_acceleration"] if p["residual_acceleration"] is not None
             else spectrum.zero_period_acceleration)
        levels.append(p["scale"][d] * a)
    return (missing * np.asarray(levels)[None, :]).T


def _responses(model, T, by_mode, residual, aw) -> dict:
    """name -> (per mode (m, ndir, k), residual (ndir, k) or None, units) of the
    displacement on every dof, the element forces and the reactions."""
    m, ndir, nf = by_mode.shape
    full = (np.asarray(T @ by_mode.reshape(-1, nf).T).T.reshape(m, ndir, T.shape[0]) if m
            else np.zeros((0, ndir, T.shape[0])))
    res_full = np.asarray(T @ residual.T).T if residual is not None else None
    out = {"displacement": (full, res_full, aw.field_units("displacement"))}
    elements, reactions = model.elements, model.reactions

    def rows(of, u):
        flat = u.reshape(-1, u.shape[-1])
        if not len(flat):
            width = of(np.zeros((1, u.shape[-1])), np.zeros((1, u.shape[-1]))).shape[1]
            return np.zeros(u.shape[:-1] + (width,))
        return of(flat, np.zeros_like(flat)).reshape(u.shape[:-1] + (-1,))

    if elements.count:
        per_mode = rows(elements.of, full)
        res = rows(elements.of, res_full) if res_full is not None else None
        out["element_force"] = (per_mode, res, layout.column_units_list(elements.units()))
    if len(reactions.dofs):
        def react(u, v):
            zero = np.zeros((len(u), len(reactions.dofs)))
            return reactions.of(u, v, np.zeros_like(u), zero)

        per_mode = rows(react, full)
        res = rows(react, res_full) if res_full is not None else None
        out["reaction"] = (per_mode, res, layout.column_units_list(reactions.units(model.dofs)))
    return out


def _name_columns(aw, model):
    elements, reactions = model.elements, model.reactions
    if elements.count:
        aw.dataset("element_names", np.asarray(elements.names, dtype=object))
        aw.dataset("element_components", np.asarray(elements.components, dtype=object))
    if len(reactions.dofs):
        aw.dataset("reaction_dofs", reactions.dofs)
        aw.dataset("reaction_names", np.asarray(reactions.names, dtype=object))
