"""Linear static analysis: K u = F for named loads and the imposed values of the constraints.

Results, group ``/analyses/<name>`` (kind ``static``): ``displacement`` (ndof,) on every dof;
``element_force`` (ne * nc,) with ``element_names`` and ``element_components``, and
``reaction`` (nr,) with ``reaction_dofs`` and ``reaction_names``, when the model has elements
and imposed dofs (as a transient analysis' rows, ``fem.model.element_forces``).

Loads and imposed values are taken at their amplitude (functions of time at 1), or at
``time`` when the analysis gives one. Links do not act: the response is linear.
"""

from __future__ import annotations

import time

import numpy as np

from fem.errors import SolverError
from fem.linalg import Factor
from postpro import layout


def _at(function, t) -> float:
    if t is None or function is None:
        return 1.0
    return float(np.broadcast_to(function.derivative(np.array([t], float), 0), (1,))[0])


def solve(model, load_names, t=None):
    """(u on every dof, the loads' vector F): K u = F with u = T q + G h."""
    con = model.constraints
    n = model.size
    F = np.zeros(n)
    for name in load_names:
        load = model.loads[name]
        value = _at(load.function, t)
        if not np.isfinite(value):
            raise SolverError(f"static: the function '{load.function.name}' of load '{name}' "
                              f"is not finite at t = {t:.9g} s ({value}): a load must be "
                              f"finite at the analysis' time")
        F += load.vector * value
    if con.G.shape[1]:
        h = np.ones(con.G.shape[1]) if t is None else np.atleast_1d(con.values(t))
        if t is None:
            h[model.supports.columns()] = 0.0      # supports at rest, without a time
        if not np.all(np.isfinite(h)):
            raise SolverError(f"static: an imposed value is not finite at t = {t:.9g} s: "
                              f"an imposed motion must be finite at the analysis' time")
        g = con.G @ h
    else:
        g = np.zeros(n)
    T = con.T
    K = model.stiffness
    Kff = (T.T @ K @ T).tocsr()
    rhs = T.T @ (F - K @ g)
    diagonal = Kff.diagonal()
    loose = np.flatnonzero(diagonal <= 0.0)
    if len(loose):
        dof = int(con.free[loose[0]])
        node = model.mesh.node_names[model.dofs.dof_node[dof]]
        raise SolverError(f"static: {node} {model.dofs.dof_component[dof]} has no stiffness "
                          f"(a mechanism, {len(loose)} such dof(s)): constrain it or give it "
                          f"a spring")
    q = Factor(Kff, "stiffness of the free dofs").solve(rhs) if len(rhs) else rhs
    residual = np.linalg.norm(Kff @ q - rhs)
    if not np.all(np.isfinite(q)) or residual > 1e-8 * max(np.linalg.norm(rhs), 1e-300):
        raise SolverError(f"static: the stiffness of the free dofs is singular (a mechanism: "
                          f"a part of the model free to move as a rigid body); residual "
                          f"{residual:.3g}")
    return T @ q + g, F


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    t0 = time.perf_counter()
    aw = ctx.writer.analysis(spec.name, "static", parameters=p)
    try:
        u, F = solve(model, p["loads"], p.get("time"))
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0)
        raise
    aw.dataset("displacement", u, aw.field_units("displacement"))
    elements, reactions = model.elements, model.reactions
    if elements.count:
        aw.dataset("element_force", elements.of(u[None, :], np.zeros((1, len(u))))[0],
                   layout.column_units_list(elements.units()))
        aw.dataset("element_names", np.asarray(elements.names, dtype=object))
        aw.dataset("element_components", np.asarray(elements.components, dtype=object))
    if len(reactions.dofs):
        zero = np.zeros((1, len(u)))
        aw.dataset("reaction", reactions.of(u[None, :], zero, zero,
                                            F[reactions.dofs][None, :])[0],
                   layout.column_units_list(reactions.units(model.dofs)))
        aw.dataset("reaction_dofs", reactions.dofs)
        aw.dataset("reaction_names", np.asarray(reactions.names, dtype=object))
    aw.finish("complete", "", wall_time_s=time.perf_counter() - t0, steps=0)
    ctx.say(f"  largest |u| {np.abs(u).max() if len(u) else 0.0:.6g}")
