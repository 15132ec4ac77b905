"""Real modes analysis: solve, store in the results file, keep the basis for later analyses."""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import free_matrices
from fem.modal.modes import participation, real_modes
from fem.study import ROTATIONS, TRANSLATIONS


def rigid_directions(model) -> np.ndarray:
    """(nf, 3): unit rigid translations along X, Y, Z expressed on the free dofs."""
    n = model.size
    r = np.zeros((n, 3))
    nodes = np.arange(model.mesh.node_count)
    for k, comp in enumerate(TRANSLATIONS):
        d = model.dofs.dof(nodes, comp)
        if len(d) and d[0] >= 0:
            r[d, k] = 1.0
    return r[model.constraints.free]


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    T = model.constraints.T
    M, _, K = free_matrices(model)
    t0 = time.perf_counter()
    aw = ctx.writer.analysis(spec.name, "modes", parameters=p)
    modes = real_modes(M, K, count=p.get("count"), band=p.get("band"), method=p["method"],
                       where=spec.where)
    rigid = rigid_directions(model)
    factors, effective = participation(modes, M, rigid)
    shapes = (T @ modes.shapes).T                   # (m, ndof), imposed dofs at zero
    aw.dataset("frequency", modes.frequency, "Hz")
    aw.dataset("omega", modes.omega, "rad/s")
    aw.dataset("generalized_mass", np.ones(modes.count), "kg")
    aw.dataset("generalized_stiffness", modes.omega ** 2, "N/m")
    # mass-normalized: u = phi q with q in m.kg^0.5 (the generalized coordinates' unit)
    units = [("rad/(m.kg^0.5)" if c in ROTATIONS else "kg^-0.5")
             for c in model.dofs.dof_component]
    aw.dataset("shapes", shapes, units if len(set(units)) > 1 else units[0])
    aw.dataset("participation_factor", factors)
    aw.dataset("effective_mass", effective, "kg")
    # the mass a rigid unit motion along X, Y, Z moves on the free dofs: what the effective
    # masses of all the modes add up to
    aw.dataset("total_mass", np.einsum("ik,ik->k", rigid, M @ rigid), "kg")
    aw.finish("complete", "", wall_time_s=time.perf_counter() - t0, steps=0)
    ctx.states[spec.name] = modes
    ctx.say(f"  {modes.count} modes, {modes.frequency[0]:.6g} ... {modes.frequency[-1]:.6g} Hz")
