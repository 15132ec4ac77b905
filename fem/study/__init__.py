"""Study file (TOML) -> typed, validated :class:`Study`. All input validation lives here.

Block indices in messages count from 1, as users count blocks: ``analysis[2].step`` is the
``step`` key of the second ``[[analysis]]`` block.
"""

from __future__ import annotations

from fem.study.reader import check_depth, load_study, parse_study, read_study_data
from fem.study.specs import (ANALYSIS_KINDS, COMPONENTS, FIELDS, FORCE_COMPONENTS, LINK_KINDS,
                             MAX_STEPS, ROTATIONS, TRANSLATIONS, AnalysisSpec, DiscreteSpec,
                             ImposedSpec, InitialSpec, LinkSpec, LoadSpec, MeshSpec,
                             RayleighSpec, RelationSpec, Study, Targets)

__all__ = [
    "ANALYSIS_KINDS", "COMPONENTS", "FIELDS", "FORCE_COMPONENTS", "LINK_KINDS", "MAX_STEPS",
    "ROTATIONS", "TRANSLATIONS", "AnalysisSpec", "DiscreteSpec", "ImposedSpec", "InitialSpec",
    "LinkSpec", "LoadSpec", "MeshSpec", "RayleighSpec", "RelationSpec", "Study", "Targets", "check_depth",
    "load_study", "parse_study", "read_study_data",
]
