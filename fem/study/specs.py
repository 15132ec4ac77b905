"""Study names and the typed, frozen records a study file is read into."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from fem.laws import KINDS

TRANSLATIONS = ("DX", "DY", "DZ")
ROTATIONS = ("DRX", "DRY", "DRZ")
COMPONENTS = TRANSLATIONS + ROTATIONS
FORCE_COMPONENTS = {"FX": "DX", "FY": "DY", "FZ": "DZ", "MX": "DRX", "MY": "DRY", "MZ": "DRZ"}
FIELDS = ("displacement", "velocity", "acceleration")
#: what a transient analysis may archive besides the nodal fields: the internal force of each
#: discrete element and the reactions at the imposed dofs
FORCE_FIELDS = ("element_force", "reaction")
#: what a transient analysis may archive besides: the acceleration in an inertial frame, the
#: relative acceleration plus the ground's (the base acceleration loads of the analysis)
ABSOLUTE_FIELDS = ("absolute_acceleration",)
#: the motion relative to the supports' pseudo-static motion, u - Psi u_b (analyses that
#: drive ``[[support]]`` blocks)
RELATIVE_FIELDS = ("relative_displacement", "relative_velocity", "relative_acceleration")

ANALYSIS_KINDS = ("modes", "complex_modes", "transient", "harmonic", "static", "spectral",
                  "random")
#: the kinds of ``[[link]]`` block: the laws of the registry
LINK_KINDS = KINDS
#: most time steps one transient analysis may take by default (its time grid is held in
#: memory: 9 bytes a step); ``fem run --max-steps`` sets another limit for a run
MAX_STEPS = 10**9
#: the limit in force (set for one run by ``fem.runner.run_study``)
step_limit: ContextVar[int] = ContextVar("step_limit", default=MAX_STEPS)


@dataclass(frozen=True)
class Targets:
    """Mesh entities a block applies to, by name."""
    nodes: tuple[str, ...] = ()
    node_groups: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    cell_groups: tuple[str, ...] = ()

    def empty(self) -> bool:
        return not (self.nodes or self.node_groups or self.cells or self.cell_groups)


@dataclass(frozen=True)
class MeshSpec:
    file: Path | None
    nodes: dict[str, tuple[float, float, float]]
    cells: dict[str, tuple[str, tuple[str, ...]]]
    node_groups: dict[str, tuple[str, ...]]
    cell_groups: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class DiscreteSpec:
    """Mass, stiffness, damping of discrete elements (SI units: kg, N/m, N.s/m)."""
    where: str
    targets: Targets
    mass: float | tuple | None = None          # scalar (kg) or 3x3 rows
    inertia: float | tuple | None = None       # scalar or 3x3 rows (kg.m^2)
    stiffness: tuple[float, ...] | None = None  # 3 (translations) or 6 values
    damping: tuple[float, ...] | None = None
    frame: str = "global"
    orientation: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class ImposedSpec:
    where: str
    targets: Targets
    values: dict[str, float]
    function: str | None


@dataclass(frozen=True)
class RelationSpec:
    where: str
    terms: tuple[tuple[str, str, float], ...]   # (node, component, coefficient)
    value: float
    function: str | None


@dataclass(frozen=True)
class LoadSpec:
    where: str
    name: str
    kind: str                   # force | gravity | base_acceleration
    targets: Targets
    values: dict[str, float]    # component (DX..DRZ) -> N or N.m, for kind = force
    g: float
    direction: tuple[float, float, float]
    function: str | None


@dataclass(frozen=True)
class SupportSpec:
    """A group of support dofs moving with a record: ``functions`` maps each driven component
    to the name of its function, an acceleration (m/s^2) or a displacement (m) record
    (``record``) times ``scale``; ``velocity`` and ``displacement``: the state of the support
    at the first time of an acceleration record."""
    where: str
    name: str
    targets: Targets
    record: str                     # acceleration | displacement
    functions: dict[str, str]
    scale: float = 1.0
    velocity: dict[str, float] = field(default_factory=dict)
    displacement: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class InitialSpec:
    where: str
    targets: Targets
    displacement: dict[str, float]
    velocity: dict[str, float]


@dataclass(frozen=True)
class LinkSpec:
    where: str
    name: str
    kind: str
    nodes: tuple[str, ...]
    params: dict


@dataclass(frozen=True)
class AnalysisSpec:
    where: str
    index: int
    name: str
    kind: str
    params: dict = field(default_factory=dict)

    def get(self, key, default=None):
        return self.params.get(key, default)


@dataclass(frozen=True)
class RayleighSpec:
    """Rayleigh damping of the whole model, C += mass M + stiffness K (mass in 1/s,
    stiffness in s); ``frequencies`` (Hz) and ``ratios`` when fem solved for them."""
    mass: float
    stiffness: float
    frequencies: tuple[float, float] | None = None
    ratios: tuple[float, float] | None = None

    def describe(self) -> str:
        text = (f"Rayleigh damping C += a M + b K with a = {self.mass:.9g} 1/s, "
                f"b = {self.stiffness:.9g} s")
        if self.frequencies is not None:
            (f1, f2), (x1, x2) = self.frequencies, self.ratios
            text += f" (damping ratios {x1:g} at {f1:g} Hz and {x2:g} at {f2:g} Hz)"
        return text


@dataclass(frozen=True)
class Study:
    path: Path
    source: str
    title: str
    mesh: MeshSpec
    components: tuple[str, ...]
    discrete: tuple[DiscreteSpec, ...]
    imposed: tuple[ImposedSpec, ...]
    relations: tuple[RelationSpec, ...]
    functions: dict            # name -> TimeFunction
    loads: tuple[LoadSpec, ...]
    initial: tuple[InitialSpec, ...]
    links: tuple[LinkSpec, ...]
    analyses: tuple[AnalysisSpec, ...]
    checks: tuple             # postpro.checks.CheckSpec
    output: Path
    rayleigh: RayleighSpec | None = None
    spectra: dict = field(default_factory=dict)   # name -> fem.functions.spectrum.DesignSpectrum
    supports: tuple[SupportSpec, ...] = ()

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def analysis(self, name: str) -> AnalysisSpec:
        for a in self.analyses:
            if a.name == name:
                return a
        raise KeyError(name)
