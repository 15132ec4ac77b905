"""Transient analysis on a modal basis: project the equations on the modes of an earlier
``modes`` analysis (``fem.modal.basis``), integrate the generalized system with one of the
modal schemes, recombine the physical fields while streaming them to the results file.

Results, group ``/analyses/<name>``:

* ``time`` (nt,) s: the archived instants;
* ``displacement``, ``velocity``, ``acceleration`` (nt, nd): the recombined fields asked by
  ``fields``, on all dofs of the model (nd = the size of ``/dofs``) or, with ``nodes``, on
  the dofs of those nodes only;
* ``dofs`` (nd,) int, only with ``nodes``: column j of each field is dof ``dofs[j]`` of the
  ``/dofs`` tables (all components of the model, node by node in the order of ``nodes``);
* ``generalized/q``, ``generalized/qdot``, ``generalized/qddot`` (nt, m): the generalized
  coordinates of the m modes and their derivatives (m.kg^0.5, per s, per s^2);
* ``omega`` (m,) rad/s: the frequencies of the basis;
* attributes ``steps`` and ``rejected_steps``: steps taken (accepted) and rejected by the
  adaptive schemes; ``mode_count``; ``coupled_damping`` (the generalized damping has
  off-diagonal terms).

Archived instants: with ``step`` (or ``steps``), the grid of that step (for an adaptive scheme,
an output grid filled by dense output; see ``fem.integrators.modal_common``); without, every
N-th accepted step for ``archive = {every = N}`` (default: every step), or exactly the
instants of ``archive.times``.

With shock links (``links``; schemes ``central_difference`` and ``adaptive2``, see
``fem.integrators.modal_shock``), besides:

* ``links/<name>/normal_force`` (nt,) N, positive in compression (the sum over the link's
  contacts), ``links/<name>/penetration`` (nt,) m (the largest over its contacts, negative
  when open), ``links/<name>/state`` (nt,) (1 in contact, 0 otherwise), and the link's attributes
  ``stiffness``, ``damping``, ``gap``, ``release``;
* ``energy/kinetic``, ``energy/potential``, ``energy/link_energy``, ``energy/dissipated``,
  ``energy/external_work`` (nt,) J: 1/2 |q'|^2, 1/2 sum omega^2 q^2, sum of 1/2 k p^2 over
  the contacts in contact, and the cumulative dissipated energy and work of the loads;
* ``events``: (time, kind "impact" or "separation", link, detail) rows.
"""

from __future__ import annotations

import time

import numpy as np

from fem.assembly import reduce
from fem.driver import integrate
from fem.errors import NotAvailableError, SolverError, StudyError
from fem.integrators.adapt import ApparentFrequencyScheme, FixedEuler
from fem.integrators.base import State
from fem.integrators.devogelaere import Devogelaere
from fem.integrators.modal_common import adaptive_grid, load_breakpoints
from fem.integrators.modal_newmark import ModalNewmark
from fem.integrators.modal_shock import (ModalContacts, ShockAdaptive2, ShockCentralDifference,
                                         row_energies)
from fem.integrators.runge_kutta import RungeKutta
from fem.analyses.transient import initial_state, progress_bar
from fem.links.shock import plane_contacts
from fem.modal.basis import build_basis
from fem.modal.modes import Modes
from fem.timegrid import build_grid

SCHEMES = ("central_difference", "euler", "adaptive2", "devogelaere", "rk32", "rk54", "newmark")
FIELDS = ("displacement", "velocity", "acceleration")
GENERALIZED = {"displacement": "generalized/q", "velocity": "generalized/qdot",
               "acceleration": "generalized/qddot"}
GENERALIZED_UNITS = {"generalized/q": "m.kg^0.5", "generalized/qdot": "m.kg^0.5/s",
                     "generalized/qddot": "m.kg^0.5/s^2"}


def run(ctx, spec):
    p = spec.params
    model = ctx.model
    system = reduce(model, p["loads"])
    modes = basis_modes(ctx, spec)
    basis = build_basis(modes, system, model=model, damping=p.get("damping", "projected"),
                        ratios=p.get("modal_damping"), nodes=p.get("nodes"),
                        static_correction=bool(p.get("static_correction", False)),
                        where=spec.where)
    start = initial_state(ctx, spec)
    q0, v0 = (basis.q0, basis.v0) if start is None else basis.project(start.u, start.v)
    if p.get("links"):
        return run_with_links(ctx, spec, basis, q0, v0)
    scheme, grid = make_scheme(basis, p, where=spec.where)
    fields = [f for f in FIELDS if f in p["fields"]]
    width = ctx.writer.ndof if basis.dofs is None else len(basis.dofs)
    aw = ctx.writer.analysis(spec.name, "transient", basis="modal", scheme=p["scheme"],
                             parameters=p)
    aw.dataset("omega", basis.omega, "rad/s")
    if basis.dofs is not None:
        aw.dataset("dofs", basis.dofs)
    columns = {"time": 0, **{f: width for f in fields},
               **{GENERALIZED[f]: basis.size for f in FIELDS}}
    series = aw.series(columns, units=GENERALIZED_UNITS)
    sink = RecombiningSink(series, basis, fields)
    bar = progress_bar(grid.steps, spec.name) if ctx.progress else None
    t0 = time.perf_counter()
    try:
        final, _ = integrate(basis, scheme, grid, state=State(q0.copy(), v0.copy(), None),
                             fields=FIELDS, sink=sink, expand=False,
                             progress=bar.update if bar else None,
                             name=f"analysis '{spec.name}'")
    except SolverError as exc:
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0,
                  steps=scheme.accepted, rejected_steps=scheme.rejected)
        raise
    finally:
        if bar:
            bar.close()
    wall = time.perf_counter() - t0
    aw.finish("complete", "", wall_time_s=wall, steps=scheme.accepted,
              rejected_steps=scheme.rejected, mode_count=basis.size,
              coupled_damping=not basis.diagonal)
    ctx.states[spec.name] = (p["end"], basis.free_state(p["end"], final.u, final.v, final.a))
    ctx.say(f"  {basis.size} modes, {scheme.accepted} steps ({scheme.rejected} rejected), "
            f"{series.rows} archived instants, {wall:.3f} s")


def basis_modes(ctx, spec) -> Modes:
    """The modes of the analysis named by ``modes``, which must have run before."""
    name = spec.get("modes")
    state = ctx.states.get(name)
    if not isinstance(state, Modes):
        what = "has not run" if state is None else "is not a real modes analysis"
        raise StudyError(f"{spec.where}.modes: analysis '{name}' {what}: a transient analysis "
                         f"on a modal basis needs the modes of an earlier modes analysis")
    return state


def make_scheme(basis, p: dict, where: str = "analysis"):
    """(scheme, driver grid) for the parameters ``p`` of a modal transient analysis."""
    name = p["scheme"]
    start, end = p["start"], p["end"]
    fixed_grid = p.get("step") is not None or bool(p.get("steps"))
    if name in ("central_difference", "newmark") or (name == "euler" and fixed_grid):
        if not fixed_grid:
            raise StudyError(f"{where}.step: missing (required by scheme '{name}')")
        grid = build_grid(start, end, step=p.get("step"), steps=p.get("steps"),
                          archive=p["archive"], where=where)
        if name == "central_difference":
            return ModalNewmark(basis, 0.0, 0.5, name=name), grid
        if name == "newmark":
            return ModalNewmark(basis, p.get("beta", 0.25), p.get("gamma", 0.5)), grid
        return FixedEuler(basis), grid
    if name not in SCHEMES:
        raise StudyError(f"{where}.scheme: scheme '{name}' is not available on a modal basis "
                         f"(available: {', '.join(SCHEMES)})")
    tolerance = p.get("tolerance", 1e-6)
    if not tolerance > 0:
        raise StudyError(f"{where}.tolerance: must be > 0, got {tolerance:g}")
    grid, every = adaptive_grid(start, end, step=p.get("step"), steps=p.get("steps"),
                                archive=p["archive"],
                                breakpoints=load_breakpoints(basis.columns),
                                knot_step=p.get("max_step"), where=where)
    kw = dict(tolerance=tolerance, max_step=p.get("max_step"), min_step=p.get("min_step"),
              span=end - start, start=start, every=every)
    if kw["max_step"] and kw["min_step"] and kw["min_step"] > kw["max_step"]:
        raise StudyError(f"{where}.min_step: {kw['min_step']:g} s is above max_step = "
                         f"{kw['max_step']:g} s")
    if name == "euler":
        return ApparentFrequencyScheme(basis, 1, **kw), grid
    if name == "adaptive2":
        return ApparentFrequencyScheme(basis, 2, **kw), grid
    if name == "devogelaere":
        return Devogelaere(basis, **kw), grid
    return RungeKutta(basis, name, **kw), grid


class RecombiningSink:
    """Receives generalized rows from the driver; writes them and the physical fields."""

    def __init__(self, series, basis, fields):
        self.series = series
        self.basis = basis
        self.fields = fields

    @property
    def rows(self) -> int:
        return self.series.rows

    def append(self, time, displacement, velocity, acceleration):
        blocks = {"time": time}
        for order, (field, q) in enumerate((("displacement", displacement),
                                            ("velocity", velocity),
                                            ("acceleration", acceleration))):
            blocks[GENERALIZED[field]] = q
            if field in self.fields:
                blocks[field] = self.basis.recombine(q, time, order)
        self.series.append(**blocks)


# ------------------------------------------------------------------------------------------
# shock links
ENERGY_TERMS = ("kinetic", "potential", "link_energy", "dissipated", "external_work")


def run_with_links(ctx, spec, basis, q0, v0):
    """The analysis with shock links (``fem.integrators.modal_shock``): central differences
    or adaptive2; per-link series, energies and the events table besides the fields."""
    p = spec.params
    model = ctx.model
    scheme_name = p["scheme"]
    if scheme_name not in ("central_difference", "adaptive2"):
        raise NotAvailableError(f"{spec.where}.links: shock links are not available with "
                                f"scheme '{scheme_name}' on a modal basis (available: "
                                f"central_difference, adaptive2)")
    if basis.static_correction:
        raise NotAvailableError(f"{spec.where}.static_correction: not available yet with "
                                f"links (the correction would move the link's dofs)")
    found = []
    for name in p["links"]:
        link = next(lk for lk in ctx.study.links if lk.name == name)
        if link.kind != "shock":
            raise NotAvailableError(f"{spec.where}.links: link kind '{link.kind}' ({name}) is "
                                    f"not available yet on a modal basis")
        found += plane_contacts(link, model, scheme_name)
    contacts = ModalContacts.build(found, basis, model, where=spec.where)
    events = p.get("events", "step")
    if scheme_name == "central_difference":
        if events != "step":
            raise NotAvailableError(f'{spec.where}.events: "locate" is not available with '
                                    f'scheme central_difference (fixed step): use "step"')
        if p.get("step") is None and not p.get("steps"):
            raise StudyError(f"{spec.where}.step: missing (required by scheme "
                             f"'central_difference')")
        grid = build_grid(p["start"], p["end"], step=p.get("step"), steps=p.get("steps"),
                          archive=p["archive"], where=spec.where)
        scheme = ShockCentralDifference(basis, contacts, grid.times, bool(grid.archive[0]))
    else:
        base, grid = make_scheme(basis, p, where=spec.where)
        scheme = ShockAdaptive2(basis, contacts, grid.times, bool(grid.archive[0]),
                                locate=events == "locate", tolerance=base.tolerance,
                                max_step=p.get("max_step"), min_step=p.get("min_step"),
                                span=p["end"] - p["start"], start=p["start"], every=base.every)
    fields = [f for f in FIELDS if f in p["fields"]]
    width = ctx.writer.ndof if basis.dofs is None else len(basis.dofs)
    aw = ctx.writer.analysis(spec.name, "transient", basis="modal", scheme=scheme_name,
                             parameters=p)
    aw.dataset("omega", basis.omega, "rad/s")
    if basis.dofs is not None:
        aw.dataset("dofs", basis.dofs)
    link_names = list(dict.fromkeys(contacts.links))
    columns = {"time": 0, **{f: width for f in fields},
               **{GENERALIZED[f]: basis.size for f in FIELDS}}
    for name in link_names:
        for what in ("normal_force", "penetration", "state"):
            columns[f"links/{name}/{what}"] = 0
    for term in ENERGY_TERMS:
        columns[f"energy/{term}"] = 0
    series = aw.series(columns, units=GENERALIZED_UNITS)
    for name in link_names:
        j = contacts.links.index(name)
        aw.link(name, stiffness=contacts.stiffness[j], damping=contacts.damping[j],
                gap=contacts.gap[j], release=found[j].release)
    sink = LinkSink(series, basis, fields, scheme, contacts, link_names, width)
    bar = progress_bar(grid.steps, spec.name) if ctx.progress else None
    t0 = time.perf_counter()
    try:
        final, _ = integrate(basis, scheme, grid, state=State(q0.copy(), v0.copy(), None),
                             fields=FIELDS, sink=sink, expand=False,
                             progress=bar.update if bar else None,
                             name=f"analysis '{spec.name}'")
    except SolverError as exc:
        sink.flush()
        aw.events(scheme.event_rows())
        aw.finish("failed", str(exc), wall_time_s=time.perf_counter() - t0,
                  steps=scheme.accepted, rejected_steps=scheme.rejected)
        raise
    finally:
        if bar:
            bar.close()
    sink.flush()
    wall = time.perf_counter() - t0
    rows = scheme.event_rows()
    aw.events(rows)
    aw.finish("complete", "", wall_time_s=wall, steps=scheme.accepted,
              rejected_steps=scheme.rejected, mode_count=basis.size,
              coupled_damping=not basis.diagonal)
    ctx.states[spec.name] = (p["end"], basis.free_state(p["end"], final.u, final.v, final.a))
    ctx.say(f"  {basis.size} modes, {scheme.accepted} steps ({scheme.rejected} rejected), "
            f"{len(rows)} events, {sink.rows} archived instants, {wall:.3f} s")


class LinkSink(RecombiningSink):
    """Besides the fields: the link series (normal force, penetration, state) and the energy
    terms of each archived row, from the rows and the contact states and cumulative energies
    the scheme archived with them. Rows go to the file in blocks of up to ``BLOCK_VALUES``
    values (one write per driver chunk would dominate a fast run); ``flush`` writes the
    rest."""

    BLOCK_VALUES = 2_000_000

    def __init__(self, series, basis, fields, scheme, contacts, link_names, field_width):
        super().__init__(series, basis, fields)
        self.scheme = scheme
        self.contacts = contacts
        self.groups = [(name, [j for j, n in enumerate(contacts.links) if n == name])
                       for name in link_names]
        self.pending = []
        self.pending_rows = 0
        width = 3 * basis.size + 3 * len(link_names) + 6 + len(fields) * field_width
        self.block_rows = max(1024, self.BLOCK_VALUES // width)

    @property
    def rows(self) -> int:
        return self.series.rows + self.pending_rows

    def flush(self):
        if self.pending:
            self.series.append(**{key: np.concatenate([b[key] for b in self.pending])
                                  for key in self.pending[0]})
            self.pending.clear()
            self.pending_rows = 0

    def append(self, time, displacement, velocity, acceleration):
        # the rows are kept until the next flush: copies, as the first row is a view of the
        # scheme's state
        time, displacement, velocity, acceleration = (
            np.array(x, float) for x in (time, displacement, velocity, acceleration))
        states, cumulative = self.scheme.take_extras(len(time))
        c = self.contacts
        forces = c.forces(displacement, velocity, states)
        pen = displacement @ c.R.T - c.gap
        blocks = {"time": time}
        for name, idx in self.groups:
            blocks[f"links/{name}/normal_force"] = forces[:, idx].sum(axis=1)
            blocks[f"links/{name}/penetration"] = pen[:, idx].max(axis=1)
            blocks[f"links/{name}/state"] = states[:, idx].max(axis=1)
        kinetic, potential, link = row_energies(c, self.basis.stiffness, displacement,
                                                velocity, states)
        blocks.update({"energy/kinetic": kinetic, "energy/potential": potential,
                       "energy/link_energy": link, "energy/dissipated": cumulative[:, 1],
                       "energy/external_work": cumulative[:, 0]})
        for order, (field, q) in enumerate((("displacement", displacement),
                                            ("velocity", velocity),
                                            ("acceleration", acceleration))):
            blocks[GENERALIZED[field]] = q
            if field in self.fields:
                blocks[field] = self.basis.recombine(q, time, order)
        self.pending.append(blocks)
        self.pending_rows += len(time)
        if self.pending_rows >= self.block_rows:
            self.flush()
