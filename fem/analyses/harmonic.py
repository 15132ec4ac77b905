"""Harmonic response: steady state under loads F e^{i w t}, frequency by frequency.

On the free dofs q, for each excitation frequency f (Hz), w = 2 pi f::

    (K - w^2 M + i w C) Q = F

- physical basis: one sparse complex LU per frequency;
- modal basis (``modes`` names an earlier real modes analysis, mass-normalized shapes
  Phi (nf, m)): q = Phi eta, with the full projections Phi^T M Phi, Phi^T K Phi and
  Phi^T C Phi (non-proportional damping couples the modes), one small dense solve per
  frequency, then recombination.

Loads: the complex amplitude of each named load is its vector (N, N.m, real, so all in
phase); its time function is ignored. Imposed dofs are held at zero (imposed motion is not
an excitation of this analysis). Results on all dofs: ``displacement`` U (m), ``velocity``
i w U (m/s), ``acceleration`` -w^2 U (m/s^2), each (nf, ndof) complex128, for the fields
asked, and ``frequency`` (nf,) Hz; ``element_force`` and ``reaction`` (complex amplitudes,
columns named as in a transient analysis) unless ``fields`` leaves them out.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from fem.assembly import free_matrices
from fem.errors import SolverError, StudyError
from fem.study.specs import FIELDS
from postpro import layout

#: complex values held in memory per block of frequencies before it is written
BLOCK_VALUES = 4_000_000


def frequencies(spec_value) -> np.ndarray:
    """(nf,) Hz from a list, or from {start, stop, count} (evenly spaced, both ends in)."""
    if isinstance(spec_value, dict):
        return np.linspace(spec_value["start"], spec_value["stop"], spec_value["count"])
    return np.asarray(spec_value, float)


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    T = model.constraints.T
    TT = T.T.tocsr()
    M, C, K = free_matrices(model)
    F = np.zeros(T.shape[1])
    for name in p["loads"]:
        F += TT @ model.loads[name].vector
    freq = frequencies(p["frequencies"])
    if p["basis"] == "modal":
        modes, owner = ctx.states[p["modes"]], f"of '{p['modes']}'"
    else:
        modes, owner = _structure_modes(M, K, freq, spec.where), "of the structure"
    if modes is not None:
        _refuse_resonance(freq, modes, C, spec.where, owner)
    t0 = time.perf_counter()
    aw = ctx.writer.analysis(spec.name, "harmonic", basis=p["basis"], parameters=p)
    aw.dataset("frequency", freq, "Hz")
    fields = [f for f in p["fields"] if f in FIELDS]
    out = {f: aw.group.create_dataset(f, shape=(len(freq), model.size), dtype=np.complex128)
           for f in fields}
    for f, d in out.items():
        d.attrs["units"] = aw.field_units(f)
    forces = _force_datasets(aw, model, p, len(freq))
    Ffull = np.zeros(model.size)
    for name in p["loads"]:
        Ffull += model.loads[name].vector
    if p["basis"] == "modal":
        solve = _modal_solver(ctx.states[p["modes"]], M, K, C, F)
    else:
        solve = _physical_solver(M, K, C, F)
    block = max(1, BLOCK_VALUES // max(model.size, 1))
    try:
        for i0 in range(0, len(freq), block):
            f_blk = freq[i0:i0 + block]
            w = 2 * np.pi * f_blk
            Q = np.stack([solve(wi, fi) for wi, fi in zip(w, f_blk)])      # (k, nf)
            U = (T @ Q.T).T                                                   # (k, ndof)
            bad = ~np.isfinite(U).all(axis=1)
            if bad.any():
                raise SolverError(f"analysis '{spec.name}': the response is not finite at "
                                  f"{f_blk[int(np.argmax(bad))]:.9g} Hz: the results are not "
                                  f"complete")
            values = {"displacement": U, "velocity": 1j * w[:, None] * U,
                      "acceleration": -(w ** 2)[:, None] * U}
            for f in fields:
                out[f][i0:i0 + len(f_blk)] = values[f]
            rows = slice(i0, i0 + len(f_blk))
            if "element_force" in forces:
                E = model.elements
                forces["element_force"][rows] = (E.stiffness @ U.T).T + \
                    1j * w[:, None] * (E.damping @ U.T).T
            if "reaction" in forces:
                R = model.reactions
                forces["reaction"][rows] = ((R.stiffness @ U.T).T
                                            - (w ** 2)[:, None] * (R.mass @ U.T).T
                                            + 1j * w[:, None] * (R.damping @ U.T).T
                                            - Ffull[R.dofs][None, :])
            ctx.writer.file.flush()
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    wall = time.perf_counter() - t0
    aw.finish("complete", "", wall_time_s=wall, steps=len(freq))
    ctx.say(f"  {len(freq)} frequencies, {freq.min():.6g} ... {freq.max():.6g} Hz, "
            f"{wall:.3f} s")


#: a mode is at resonance when its dynamic stiffness |w_r^2 - w^2 + i w c_r| is below this
#: fraction of its stiffness w_r^2 (c_r = phi_r^T C phi_r): the response there exceeds 1e8
#: times the static one, the round-off of the natural frequency itself
RESONANCE = 1e-8


def _structure_modes(M, K, freq, where):
    """The real modes of the free dofs up to the highest frequency asked (None when the
    model has no mode: no mass, no free dof), numbered from the lowest."""
    from fem.modal.modes import real_modes

    band = (0.0, float(freq.max()) * (1 + 4 * RESONANCE))
    try:
        return real_modes(M, K, band=band, where=where)
    except (StudyError, SolverError):
        # no mode in the band, or none at all (no resonance); or no modes to be had (a
        # singular solve then says so)
        return None


def _refuse_resonance(freq, modes, C, where, owner):
    """Refuse a frequency at which a mode that no damping reaches resonates."""
    omega = np.asarray(modes.omega, float)
    if not len(omega):
        return
    phi = np.asarray(modes.shapes, float)
    c = np.abs(np.einsum("fm,fm->m", phi, C @ phi))
    w = 2 * np.pi * np.asarray(freq, float)
    for r in np.flatnonzero(omega > 0):        # a rigid-body motion at 0 Hz is a singular solve
        gap = np.abs(omega[r] ** 2 - w ** 2 + 1j * w * c[r])
        hit = np.flatnonzero(gap <= RESONANCE * omega[r] ** 2)
        if len(hit):
            f = freq[hit[0]]
            raise StudyError(f"{where}.frequencies: {f:.12g} Hz is the natural frequency of "
                             f"mode {r + 1} {owner} ({omega[r] / (2 * np.pi):.12g} Hz), which no "
                             f"damping reaches: the undamped response there is unbounded "
                             f"(give the structure damping, or leave out that frequency)")


def _physical_solver(M, K, C, F):
    """solve(w, f) -> (nf,) complex: one sparse LU of K - w^2 M + i w C."""
    K, M, C = (a.astype(np.complex128) for a in (K, M, C))

    def solve(w, f):
        Z = (K - (w * w) * M + (1j * w) * C).tocsc()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sp.linalg.MatrixRankWarning)
                lu = scipy.sparse.linalg.splu(Z)
        except (RuntimeError, sp.linalg.MatrixRankWarning):
            raise SolverError(_singular(f)) from None
        U = lu.solve(F.astype(np.complex128))
        if not np.all(np.isfinite(U)):
            raise SolverError(_singular(f))
        return U

    return solve


def _modal_solver(modes, M, K, C, F):
    """solve(w, f) -> (nf,) complex through the modal basis ``modes`` (real modes)."""
    phi = modes.shapes                          # (nf, m), mass-normalized
    Mq = phi.T @ (M @ phi)
    Kq = phi.T @ (K @ phi)
    Cq = phi.T @ (C @ phi)
    Fq = phi.T @ F

    def solve(w, f):
        Z = Kq - (w * w) * Mq + (1j * w) * Cq
        try:
            eta = np.linalg.solve(Z, Fq.astype(np.complex128))
        except np.linalg.LinAlgError:
            raise SolverError(_singular(f)) from None
        if not np.all(np.isfinite(eta)):
            raise SolverError(_singular(f))
        return phi @ eta

    return solve


def _singular(f):
    return (f"harmonic: the dynamic stiffness K - w^2 M + i w C is singular at {f:.6g} Hz "
            f"(an undamped resonance, or f = 0 with a rigid-body motion)")


def _force_datasets(aw, model, p, count: int) -> dict:
    """The complex amplitudes of the element forces, (Bk + i w Bc) U, and of the reactions,
    (K - w^2 M + i w C) U - F on the imposed dofs' rows, with the datasets naming their
    columns (as a transient analysis)."""
    made = {}
    elements, reactions = model.elements, model.reactions
    if "element_force" in p["fields"] and elements.count:
        d = aw.group.create_dataset("element_force", shape=(count, elements.width),
                                    dtype=np.complex128)
        d.attrs["units"] = layout.column_units_list(elements.units())
        made["element_force"] = d
        aw.dataset("element_names", np.asarray(elements.names, dtype=object))
        aw.dataset("element_components", np.asarray(elements.components, dtype=object))
    if "reaction" in p["fields"] and len(reactions.dofs):
        d = aw.group.create_dataset("reaction", shape=(count, len(reactions.dofs)),
                                    dtype=np.complex128)
        d.attrs["units"] = layout.column_units_list(reactions.units(model.dofs))
        made["reaction"] = d
        aw.dataset("reaction_dofs", reactions.dofs)
        aw.dataset("reaction_names", np.asarray(reactions.names, dtype=object))
    return made
