"""Shared helpers: run a study written inline and read its results."""

from __future__ import annotations

import os

# the matrices in the tests are small: BLAS threads only contend with each other
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import textwrap
from pathlib import Path

import h5py
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run_toml(tmp_path):
    """run_toml(text) -> open h5py.File of the results (the study is written in tmp_path)."""
    from fem.runner import run_study

    opened = []

    def _run(text: str, name: str = "study"):
        path = tmp_path / f"{name}.toml"
        path.write_text(textwrap.dedent(text))
        out = tmp_path / f"{name}.h5"
        report = run_study(path, out)
        f = h5py.File(out, "r")
        opened.append(f)
        f.report = report
        return f

    yield _run
    for f in opened:
        f.close()


def series(f, analysis: str, field: str, dof: int):
    g = f["analyses"][analysis]
    return g["time"][:], g[field][:, dof]


def one_dof_model(mass=1.0, stiffness=1.0, damping=0.0) -> str:
    """The model part of a study of one dof along X: node P, its mass, a spring and a damper
    to ground (no brace in it: it may start a text that ``str.format`` fills)."""
    return f"""[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {mass}
stiffness = {stiffness}
damping = {damping}
"""


def oscillator_toml(*, mass=1.0, stiffness=1.0, damping=0.0, u0=0.0, v0=0.0, force=None,
                    function=None, scheme="newmark", step=0.01, end=1.0, extra="", params=""):
    """A one-dof oscillator along X: node P on a spring to ground (POI1-like point element)."""
    load = ""
    if force is not None:
        load = f'[[load]]\nname = "f"\nnodes = ["P"]\nFX = {force}\n'
        if function:
            load += f'function = "{function}"\n'
    init = ""
    if u0 or v0:
        init = f'[[initial]]\nnodes = ["P"]\ndisplacement = {{ DX = {u0} }}\nvelocity = {{ DX = {v0} }}\n'
    return "\n" + one_dof_model(mass, stiffness, damping) + f"""{load}
{init}
{extra}
[[analysis]]
name = "a"
kind = "transient"
scheme = "{scheme}"
end = {end}
step = {step}
{params}
"""


# A valid three-node chain along X (N1 clamped) with one check, written inline; the CLI and
# invalid-input tests start from it.
CHAIN3_INLINE = """\
[study]
title = "three-node chain"

[mesh.nodes]
N1 = [0.0, 0.0, 0.0]
N2 = [1.0, 0.0, 0.0]
N3 = [2.0, 0.0, 0.0]

[mesh.cells]
AC = { type = "SEG2", nodes = ["N1", "N2"] }
CB = { type = "SEG2", nodes = ["N2", "N3"] }

[mesh.node_groups]
MASSES = ["N2", "N3"]
CLAMP = ["N1"]

[mesh.cell_groups]
SPRINGS = ["AC", "CB"]

[model]
components = ["DX"]

[[discrete]]
cell_groups = ["SPRINGS"]
stiffness = 1.0e4

[[discrete]]
node_groups = ["MASSES"]
mass = 10.0

[[constraint]]
node_groups = ["CLAMP"]
DX = 0.0

[functions.ramp]
table = [[0.0, 0.0], [0.05, 1.0]]
right = "constant"

[[load]]
name = "push"
nodes = ["N3"]
FX = 5.0
function = "ramp"

[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.1
step = 1.0e-3

[[check]]
analysis = "run"
quantity = "displacement"
node = "N3"
component = "DX"
time = 0.1
reference = 9.349408e-4
tolerance = 1.0e-3
"""


def series_springs_toml(k1, k2, m, analysis, c=None):
    """A clamped node A, a massless node Z, and a mass m at P: springs k1 (A-Z) and k2 (Z-P)
    in series, an optional damper c on P, and the given [[analysis]] block (DX only)."""
    damping = f"damping = {c}\n" if c is not None else ""
    return f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
Z = [1.0, 0.0, 0.0]
P = [2.0, 0.0, 0.0]
[mesh.cells]
AZ = {{ type = "SEG2", nodes = ["A", "Z"] }}
ZP = {{ type = "SEG2", nodes = ["Z", "P"] }}
[model]
components = ["DX"]
[[discrete]]
cells = ["AZ"]
stiffness = {k1}
[[discrete]]
cells = ["ZP"]
stiffness = {k2}
[[discrete]]
nodes = ["P"]
mass = {m}
{damping}[[constraint]]
nodes = ["A"]
DX = 0.0
{analysis}"""


# hypothesis: a light profile for the suite, a deep one for local runs
# (HYPOTHESIS_PROFILE=deep python -m pytest tests/test_hostile_inputs.py)
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", max_examples=40, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.function_scoped_fixture])
    settings.register_profile("deep", max_examples=2000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.function_scoped_fixture])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:      # hypothesis is a test dependency; its tests skip without it
    pass


def one_mass_toml(mass: float, spring: str = "", what: str = "", value: float = 0.0) -> str:
    """Node A (DX only) with ``mass``, ``spring`` a further line of its [[discrete]] block
    (such as "stiffness = 1e4", or ""), and with ``what`` ("displacement" or "velocity") its
    initial DX = value: the start of a study of one body on a link."""
    text = f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["A"]
mass = {mass!r}
{spring}
"""
    if what:
        text += f"""[[initial]]
nodes = ["A"]
{what} = {{ DX = {value!r} }}
"""
    return text


def two_masses_toml(m1: float, m2: float, what: str, value: float) -> str:
    """Nodes A and B on X (1 m apart), DX only, masses m1 and m2, and the initial ``what``
    ("displacement" or "velocity") DX = value of A: the start of a study of two bodies that
    interact through a link between them."""
    return f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["A"]
mass = {m1!r}
[[discrete]]
nodes = ["B"]
mass = {m2!r}
[[initial]]
nodes = ["A"]
{what} = {{ DX = {value!r} }}
"""


def bad_link_toml(kind: str, name: str, keys: str, head: str = "") -> str:
    """A 1 kg mass on node A (DX only) with a link of ``kind`` named ``name`` on it, whose
    other keys are ``keys`` (``head`` first), run by a short Newmark analysis: the study a
    test of refused keys hands to ``fem run``."""
    return (f'[mesh.nodes]\nA = [0.0, 0.0, 0.0]\n[model]\ncomponents = ["DX"]\n'
            f'[[discrete]]\nnodes = ["A"]\nmass = 1.0\n'
            f'[[link]]\nkind = "{kind}"\nname = "{name}"\nnodes = ["A"]\n{head}{keys}\n'
            f'[[analysis]]\nname = "a"\nkind = "transient"\nscheme = "newmark"\n'
            f'end = 0.01\nstep = 1e-3\nlinks = ["{name}"]\n')
