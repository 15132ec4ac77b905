"""Complex modes analysis: solve the damped eigenproblem, store it in the results file, keep
the modes for later analyses."""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import free_matrices
from fem.errors import SolverError
from fem.modal.complex_modes import ComplexModes, complex_modes, normalize

#: stored as the attribute ``conventions`` of the analysis group
CONVENTIONS = (
    "eigenvalue: lambda (rad/s) of (lambda^2 M + lambda C + K) phi = 0, one per conjugate "
    "pair, Im lambda >= 0; "
    "frequency: |lambda| / (2 pi) (Hz), undamped-equivalent, the sort key; "
    "damped_frequency: Im lambda / (2 pi) (Hz), 0 for a real eigenvalue; "
    "damping_ratio: -Re lambda / |lambda| (fraction of critical damping, 1 for a real "
    "eigenvalue); "
    "damping_ratio_damped: -Re lambda / Im lambda (+inf for a real eigenvalue); "
    "both ratios are 0 for a rigid-body mode (lambda = 0); "
    "shapes: right eigenvectors on all dofs (imposed dofs 0), scaled so that the "
    "largest-modulus component is 1 + 0j"
)


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    T = model.constraints.T
    M, C, K = free_matrices(model)
    t0 = time.perf_counter()
    aw = ctx.writer.analysis(spec.name, "complex_modes", parameters=p)
    try:
        modes = complex_modes(M, C, K, count=p.get("count"), band=p.get("band"),
                              method=p["method"], where=spec.where)
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    shapes = normalize(T @ modes.shapes)            # (ndof, m): the largest over all dofs
    free_shapes = shapes[model.constraints.free]
    modes = ComplexModes(modes.eigenvalue, free_shapes)
    aw.dataset("eigenvalue", modes.eigenvalue, "rad/s")
    aw.dataset("frequency", modes.frequency, "Hz")
    aw.dataset("damped_frequency", modes.damped_frequency, "Hz")
    aw.dataset("damping_ratio", modes.damping_ratio)
    aw.dataset("damping_ratio_damped", modes.damping_ratio_damped)
    aw.dataset("shapes", np.ascontiguousarray(shapes.T), "1")      # largest component 1
    aw.set(conventions=CONVENTIONS)
    aw.finish("complete", "", wall_time_s=time.perf_counter() - t0, steps=0)
    ctx.states[spec.name] = modes
    ctx.say(f"  {modes.count} complex modes, {modes.frequency[0]:.6g} ... "
            f"{modes.frequency[-1]:.6g} Hz")
