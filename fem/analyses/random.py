"""Stationary random response: response PSDs of a linear model under uncorrelated inputs.

Each excitation j is a load (a force, or a base acceleration) whose vector F_j (N per unit
of its multiplier) is multiplied by a stationary random process of one-sided PSD S_j(f)
(per Hz). On the free dofs, for each frequency f (Hz), w = 2 pi f, the transfer of input j
is the harmonic response to F_j::

    (K - w^2 M + i w C) Q_j = F_j,      U_j = T Q_j

(physical basis: one sparse complex LU per frequency for every input; modal basis: the full
projections on an earlier real modes analysis, as a harmonic analysis). The inputs being
uncorrelated, their contributions add in PSD:

    S_u(f) = sum_j |U_j(f)|^2 S_j(f)                 (m^2/Hz, per dof)
    S_v = w^2 S_u,  S_a = w^4 S_u
    S_abs(f) = sum_j |-w^2 U_j + r_j|^2 S_j(f)       (absolute acceleration, base inputs)
    S_e(f) = sum_j |(B_k + i w B_c) U_j|^2 S_j(f)    (element forces)
    S_r(f) = sum_j |(K - w^2 M + i w C)_R U_j - F_j,R|^2 S_j(f)   (reactions)

where r_j is the rigid motion (direction times value) of a base input, zero for a force.
Under base acceleration U is the motion relative to the support. The spectral moments
m_n = integral of w^n S(f) df over the grid (trapezoid rule) give the RMS sqrt(m0), the
rate of zero up-crossings nu0 = sqrt(m2 / m0) / 2 pi and the rate of peaks
sqrt(m4 / m2) / 2 pi (Rice); they are only as good as the grid resolves the peaks.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.assembly import free_matrices
from fem.errors import SolverError
from fem.study import TRANSLATIONS
from fem.study.random_blocks import frequency_grid, spectral_density
from postpro import layout

#: complex values held in memory per block of frequencies (dofs x inputs x frequencies)
BLOCK_VALUES = 4_000_000
#: free dofs up to which a block of frequencies is solved at once with dense matrices
DENSE_LIMIT = 300

CONVENTIONS = (
    "one-sided PSDs in unit^2/Hz over f >= 0 (their integral over f is the variance); "
    "uncorrelated inputs summed in PSD; S_v = w^2 S_u, S_a = w^4 S_u (w = 2 pi f); under "
    "base acceleration the nodal fields are relative to the support, absolute_acceleration "
    "is not; spectral moments m_n = integral of w^n S df by the trapezoid rule over the "
    "frequencies: rms = sqrt(m0), zero_crossing_rate = sqrt(m2 / m0) / (2 pi), peak_rate = "
    "sqrt(m4 / m2) / (2 pi) (0 where the moment below is 0)")


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    T = model.constraints.T
    TT = T.T.tocsr()
    M, C, K = free_matrices(model)
    freq = frequency_grid(p["frequencies"])
    excitations = p["excitations"]
    loads = [model.loads[e["load"]] for e in excitations]
    F_full = np.column_stack([ld.vector for ld in loads])              # (ndof, J)
    F = np.column_stack([TT @ ld.vector for ld in loads])              # (nf, J)
    S_in = np.column_stack([spectral_density(ctx.study.functions[e["psd"]], freq,
                                             e["interpolation"]) for e in excitations])
    rigid = _rigid_motions(ctx.study, model, excitations)              # (ndof, J)
    t0 = time.perf_counter()
    aw = ctx.writer.analysis(spec.name, "random", basis=p["basis"], parameters=p)
    aw.set(conventions=CONVENTIONS)
    aw.dataset("frequency", freq, "Hz")
    aw.dataset("excitation_names", np.asarray([e["load"] for e in excitations], dtype=object))
    kinds = [ld.kind for ld in loads]
    aw.dataset("input_psd", S_in, layout.column_units_list(
        "(m/s^2)^2/Hz" if k == "base_acceleration" else "N^2/Hz" for k in kinds))
    outputs = _outputs(aw, model, p, rigid, len(freq))
    if p["basis"] == "modal":
        phi = ctx.states[p["modes"]].shapes                            # (nf, m)
        Mq, Kq, Cq = (phi.T @ (a @ phi) for a in (M, K, C))
        solve, size = _dense_solver(Mq, Kq, Cq, phi.T @ F), phi.shape[1]
        T = sp.csr_matrix(T @ phi)                                     # modal -> every dof
    elif M.shape[0] <= DENSE_LIMIT:
        solve, size = _dense_solver(*(a.toarray() for a in (M, K, C)), F), M.shape[0]
    else:
        solve, size = _sparse_solver(M, K, C, F), 1
    weights = _trapezoid_weights(freq)
    moments = {name: np.zeros((3, width)) for name, (_, width, _) in outputs.items()}
    ndof, J = model.size, len(loads)
    block = max(1, min(BLOCK_VALUES // max(ndof * J, 1), BLOCK_VALUES // size ** 2))
    try:
        for i0 in range(0, len(freq), block):
            rows = slice(i0, min(i0 + block, len(freq)))
            f_blk = freq[rows]
            w = 2 * np.pi * f_blk
            U = _recombine(T, solve(w, f_blk))                                   # (k, ndof, J)
            psd = _block_psds(model, outputs, U, w, S_in[rows], F_full, rigid)
            for name, values in psd.items():
                outputs[name][0][rows] = values
                wk = weights[rows][:, None]
                moments[name] += np.stack([np.sum(wk * values, axis=0),
                                           np.sum(wk * w[:, None] ** 2 * values, axis=0),
                                           np.sum(wk * w[:, None] ** 4 * values, axis=0)])
            ctx.writer.file.flush()
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    _statistics(aw, outputs, moments)
    wall = time.perf_counter() - t0
    aw.finish("complete", "", wall_time_s=wall, steps=len(freq))
    ctx.say(f"  {len(freq)} frequencies, {freq[0]:.6g} ... {freq[-1]:.6g} Hz, {J} "
            f"excitation{'s' if J > 1 else ''}, {wall:.3f} s")
    if "displacement" in moments:
        rms = np.sqrt(moments["displacement"][0])
        k = int(np.argmax(rms))
        ctx.say(f"  largest displacement RMS {rms[k]:.6g} {_dof_unit(model, k)} at "
                f"{model.dofs.name(k, model.mesh.node_names)}")


def _dof_unit(model, dof: int) -> str:
    return layout.unit_of("displacement", str(model.dofs.dof_component[dof]))


def _recombine(T, Q):
    """U (k, ndof, J) = T Q: every dof from the free ones, for each frequency and input."""
    k, nf, J = Q.shape
    flat = Q.transpose(1, 0, 2).reshape(nf, k * J)
    return np.asarray(T @ flat).reshape(-1, k, J).transpose(1, 0, 2)


def _rigid_motions(study, model, excitations) -> np.ndarray:
    """(ndof, J): the support's rigid motion per unit of each input (value times direction
    on the translations of every node) for base accelerations, 0 for forces."""
    specs = {ld.name: ld for ld in study.loads}
    r = np.zeros((model.size, len(excitations)))
    nodes = np.arange(model.mesh.node_count)
    for j, e in enumerate(excitations):
        ld = specs[e["load"]]
        if ld.kind != "base_acceleration":
            continue
        for k, comp in enumerate(TRANSLATIONS):
            d = model.dofs.dof(nodes, comp)
            if len(d) and d[0] >= 0:
                r[d, j] = ld.g * ld.direction[k]
    return r


def _trapezoid_weights(f: np.ndarray) -> np.ndarray:
    """w such that sum(w y) is the trapezoid integral of y over the increasing grid f."""
    w = np.zeros(len(f))
    steps = np.diff(f)
    w[:-1] += steps / 2
    w[1:] += steps / 2
    return w


def _psd_units(units):
    return layout.psd_unit(units) if isinstance(units, str) else \
        [layout.psd_unit(u) for u in units]


def _outputs(aw, model, p, rigid, count: int) -> dict:
    """name -> (dataset (count, width) of its PSD, width, the unit of the quantity itself),
    with the datasets naming the columns of the element forces and reactions."""
    made = {}
    ndof = model.size

    def create(name, width, units):
        d = aw.group.create_dataset(name, shape=(count, width), dtype=np.float64)
        d.attrs["units"] = _psd_units(units)
        made[name] = (d, width, units)

    for field in ("displacement", "velocity", "acceleration"):
        if field in p["fields"]:
            create(field, ndof, aw.field_units(field))
    if "acceleration" in p["fields"] and np.any(rigid):
        create("absolute_acceleration", ndof, aw.field_units("acceleration"))
    elements, reactions = model.elements, model.reactions
    if "element_force" in p["fields"] and elements.count:
        create("element_force", elements.width, layout.column_units_list(elements.units()))
        aw.dataset("element_names", np.asarray(elements.names, dtype=object))
        aw.dataset("element_components", np.asarray(elements.components, dtype=object))
    if "reaction" in p["fields"] and len(reactions.dofs):
        create("reaction", len(reactions.dofs),
               layout.column_units_list(reactions.units(model.dofs)))
        aw.dataset("reaction_dofs", reactions.dofs)
        aw.dataset("reaction_names", np.asarray(reactions.names, dtype=object))
    return made


def _block_psds(model, outputs, U, w, S, F_full, rigid) -> dict:
    """The PSDs (k, width) of each output over a block of k frequencies: U (k, ndof, J) the
    transfers of the J inputs, w (k,) rad/s, S (k, J) the input PSDs."""
    w2 = (w ** 2)[:, None]
    weight = S[:, None, :]                                          # (k, 1, J)
    S_u = np.sum(np.abs(U) ** 2 * weight, axis=2)
    out = {}
    if "displacement" in outputs:
        out["displacement"] = S_u
    if "velocity" in outputs:
        out["velocity"] = w2 * S_u
    if "acceleration" in outputs:
        out["acceleration"] = w2 ** 2 * S_u
    if "absolute_acceleration" in outputs:
        A = -(w ** 2)[:, None, None] * U + rigid[None]
        out["absolute_acceleration"] = np.sum(np.abs(A) ** 2 * weight, axis=2)
    k, ndof, J = U.shape
    flat = U.transpose(1, 0, 2).reshape(ndof, k * J)                 # (ndof, k J)
    iw = np.repeat(1j * w, J)[None, :]                               # (1, k J)
    if "element_force" in outputs:
        E = model.elements
        forces = E.stiffness @ flat + iw * (E.damping @ flat)
        forces = forces.reshape(-1, k, J).transpose(1, 0, 2)
        out["element_force"] = np.sum(np.abs(forces) ** 2 * weight, axis=2)
    if "reaction" in outputs:
        R = model.reactions
        r = R.stiffness @ flat + iw * (R.damping @ flat) + (iw ** 2) * (R.mass @ flat)
        r = r.reshape(-1, k, J).transpose(1, 0, 2) - F_full[R.dofs][None, :, :]
        out["reaction"] = np.sum(np.abs(r) ** 2 * weight, axis=2)
    return out


def _statistics(aw, outputs, moments):
    """rms/NAME, zero_crossing_rate/NAME and peak_rate/NAME of each output."""
    for name, (_, _, units) in outputs.items():
        m0, m2, m4 = moments[name]
        aw.dataset(f"rms/{name}", np.sqrt(m0), units)
        with np.errstate(divide="ignore", invalid="ignore"):
            nu0 = np.where(m0 > 0, np.sqrt(m2 / np.where(m0 > 0, m0, 1)), 0.0) / (2 * np.pi)
            nup = np.where(m2 > 0, np.sqrt(m4 / np.where(m2 > 0, m2, 1)), 0.0) / (2 * np.pi)
        aw.dataset(f"zero_crossing_rate/{name}", nu0, "Hz")
        aw.dataset(f"peak_rate/{name}", nup, "Hz")


def _dense_solver(M, K, C, F):
    """solve(w (k,), f (k,)) -> (k, n, J) complex: (K - w^2 M + i w C) Q = F for a block of
    frequencies at once, the matrices dense (n, n), F (n, J)."""
    F = np.asarray(F, np.complex128)

    def solve(w, f):
        Z = K[None] - (w ** 2)[:, None, None] * M[None] + (1j * w)[:, None, None] * C[None]
        try:
            Q = np.linalg.solve(Z, np.broadcast_to(F, (len(w),) + F.shape))
        except np.linalg.LinAlgError:
            Q = np.full((len(w),) + F.shape, np.nan + 0j)     # find the singular one below
        bad = np.flatnonzero(~np.all(np.isfinite(Q), axis=(1, 2)))
        for k in bad:
            try:
                Q[k] = np.linalg.solve(Z[k], F)
            except np.linalg.LinAlgError:
                raise SolverError(_singular(f[k])) from None
            if not np.all(np.isfinite(Q[k])):
                raise SolverError(_singular(f[k]))
        return Q

    return solve


def _sparse_solver(M, K, C, F):
    """solve(w (k,), f (k,)) -> (k, n, J) complex: one sparse LU of K - w^2 M + i w C per
    frequency, the three matrices summed on their common pattern."""
    pattern = (abs(K) + abs(M) + abs(C)).tocsc()
    pattern.sort_indices()
    rows = pattern.indices
    cols = np.repeat(np.arange(pattern.shape[1]), np.diff(pattern.indptr))
    Kd, Md, Cd = (np.asarray(a.tocsr()[rows, cols]).ravel() for a in (K, M, C))
    F = np.asarray(F, np.complex128)

    def one(w, f):
        Z = sp.csc_matrix((Kd - (w * w) * Md + (1j * w) * Cd, pattern.indices,
                           pattern.indptr), shape=pattern.shape)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sp.linalg.MatrixRankWarning)
                lu = scipy.sparse.linalg.splu(Z)
        except (RuntimeError, sp.linalg.MatrixRankWarning):
            raise SolverError(_singular(f)) from None
        Q = lu.solve(F).reshape(F.shape)
        if not np.all(np.isfinite(Q)):
            raise SolverError(_singular(f))
        return Q

    def solve(w, f):
        return np.stack([one(wi, fi) for wi, fi in zip(w, f)])

    return solve


def _singular(f):
    return (f"random: the dynamic stiffness K - w^2 M + i w C is singular at {f:.6g} Hz (an "
            f"undamped resonance, or f = 0 with a rigid-body motion)")
