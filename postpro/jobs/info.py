"""``fem post info``: what a results file holds, in more detail than ``fem info``."""

from __future__ import annotations

import numpy as np

from postpro import layout
from postpro.errors import PostproError
from postpro.jobs import common
from postpro.results import (HarmonicAnalysis, ModalAnalysis, RandomAnalysis, SpectralAnalysis,
                             StaticAnalysis, TransientAnalysis)


def add_parser(subparsers):
    p = subparsers.add_parser(
        "info", help="what a results file holds: analyses, fields, links, events, energy, checks",
        description="The summary of fem info, then per analysis its archived fields, "
                    "instants, links, events and energy terms, and the stored checks.")
    p.add_argument("results", help="results file written by fem run (HDF5)")
    p.set_defaults(run=run, allow_incomplete=True)


def run(args) -> int:
    with common.open_results(args) as results:
        print(describe(results))
    return common.EXIT_OK


def _range(values: np.ndarray, unit: str) -> str:
    if not len(values):
        return "none"
    return f"{len(values)} ({values[0]:.6g} .. {values[-1]:.6g} {unit})"


def _names(names) -> str:
    return ", ".join(names) if names else "none"


def _fields(analysis) -> str:
    return _names([f"{f} [{', '.join(analysis.field_units(f))}]" for f in analysis.fields])


def describe(results) -> str:
    """``Results.describe()`` followed by the details of each analysis and the checks."""
    lines = [results.describe()]
    for name in results.analyses:
        analysis = results.analysis(name, allow_incomplete=True)
        lines.append(f"analysis {name}:")
        try:
            lines += [f"    {line}" for line in _details(analysis)]
        except PostproError as exc:  # a broken group should not hide the rest of the file
            lines.append(f"    unreadable: {exc}")
    checks = results.checks
    if len(checks):
        passed = int(np.sum(checks["passed"]))
        lines.append(f"checks: {len(checks)} stored, {passed} passed, {len(checks) - passed} "
                     "failed")
    else:
        lines.append("checks: none stored")
    return "\n".join(lines)


def _details(analysis) -> list[str]:
    if isinstance(analysis, TransientAnalysis):
        energy = [term for term in analysis.energy() if term != "time"]
        lines = [f"fields: {_fields(analysis)}",
                 f"instants: {_range(analysis.time, 's')}",
                 f"links: {_names(analysis.links)}",
                 f"events: {len(analysis.events)}",
                 f"energy: {_names(energy)}"]
        if analysis.basis == "modal":
            lines.append("generalized coordinates: archived")
        return lines
    if isinstance(analysis, RandomAnalysis):
        return _random(analysis)
    if isinstance(analysis, HarmonicAnalysis):
        return [f"fields: {_fields(analysis)}",
                f"frequencies: {_range(analysis.frequency, 'Hz')}"]
    if isinstance(analysis, ModalAnalysis):
        frequency = analysis.frequency if "frequency" in analysis.arrays else np.empty(0)
        return [f"modes: {_range(frequency, 'Hz')}",
                f"arrays: {_names(analysis.arrays)}"]
    if isinstance(analysis, SpectralAnalysis):
        p = analysis.parameters
        u = analysis.displacement()
        lines = [f"directions: {_names(analysis.directions)} "
                 f"({p.get('direction_combination', '?')} over directions)",
                 f"modes combined: {_range(analysis.frequency, 'Hz')}, "
                 f"{p.get('combination', '?')}"
                 f"{', with the residual' if p.get('residual') else ''}",
                 f"largest peak displacement: {np.max(u) if len(u) else 0.0:.6g}"]
        return lines + _forces(analysis)
    if isinstance(analysis, StaticAnalysis):
        u = analysis.displacement()
        return [f"largest |displacement|: {np.max(np.abs(u)) if len(u) else 0.0:.6g}"] + \
            _forces(analysis)
    return [f"kind '{analysis.kind}': no details known"]


def _forces(analysis) -> list[str]:
    return [f"element forces: {len(analysis.elements)} elements "
            f"({' '.join(analysis.element_components)})" if analysis.elements else
            "element forces: none",
            f"reactions: {len(analysis.reactions)}" if analysis.reactions else "reactions: none"]


def _random(analysis) -> list[str]:
    """PSDs stored, frequencies, inputs, and the largest RMS of each PSD."""
    excitations = analysis.parameters.get("excitations", [])
    inputs = [f"{e.get('load')} ({e.get('kind', '?')}, PSD '{e.get('psd')}'"
              f"{', log-log' if e.get('interpolation') == 'loglog' else ''})"
              for e in excitations]
    lines = [f"PSDs: {_fields(analysis)}",
             f"frequencies: {_range(analysis.frequency, 'Hz')}",
             f"inputs (uncorrelated): {_names(inputs)}"]
    forces = []
    if analysis.elements:
        forces.append(f"element_force of {len(analysis.elements)} elements")
    if analysis.reactions:
        forces.append(f"reaction at {len(analysis.reactions)} dofs")
    if forces:
        lines.append(f"force PSDs: {', '.join(forces)}")
    for field in analysis.fields:
        dofs = analysis.archived_dofs
        rms = np.array([analysis.rms(field, node, component) for node, component in dofs])
        if len(rms):
            k = int(np.argmax(rms))
            base = "acceleration" if field == "absolute_acceleration" else field
            unit = layout.unit_of(base, dofs[k][1])
            lines.append(f"largest {field} RMS: {rms[k]:.6g} {unit} at {' '.join(dofs[k])}")
    return lines
