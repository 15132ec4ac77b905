"""The Newmark family's Newton iteration on the whole system (``fem.integrators.
newmark_tangent``), which steps with many links that always act take:

* a chain whose plastic links stay elastic, with links that skip nodes (their stiffness
  widens the band of the step matrix), against the Newmark recurrence of the same linear
  system written here with numpy: to round-off, in Newmark and HHT;
* the closed forms of the plastic links' tests (``test_plastic``) and the three-storey
  building of V8 against its reference integration (``test_v8_shear_building``), with the
  iteration taken from a single link on;
* the closed forms of power-law dampers, Maxwell elements and Bouc-Wen links (whose tangent
  moves with the state) through the same iteration.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import fem
import test_bouc_wen
import test_damper
import test_maxwell
import test_plastic
import test_v8_shear_building as v8
from fem.integrators import loops, newmark_columns


@pytest.fixture
def whole(monkeypatch):
    """The whole system's iteration from one link on; counts the step sizes that take it."""
    monkeypatch.setattr(loops, "FROM_LINKS", 1)
    taken = []
    original = newmark_columns.StepSize.whole
    monkeypatch.setattr(newmark_columns.StepSize, "whole",
                        lambda self: taken.append(self.dt) or original(self))
    return taken


# --------------------------------------------------------------------------- a linear chain
NODES = 40
MASS = 2.0                   # kg
K_CELL = 4.0e4               # N/m, the chain's springs
C_CELL = 3.0                 # N s/m
K_LINK = 2.5e4               # N/m, the links' elastic stiffness (never reached limit)
SKIP = 3                     # a link joins node i to node i + SKIP
LINKED = range(1, NODES - SKIP, 2)
DT, END = 1e-3, 0.4
F0 = 50.0                    # N on the last node


def chain_study(alpha: float) -> str:
    nodes = "\n".join(f"N{i} = [{float(i)}, 0.0, 0.0]" for i in range(NODES))
    cells = "\n".join(f'S{i} = {{ type = "SEG2", nodes = ["N{i}", "N{i + 1}"] }}'
                      for i in range(NODES - 1))
    links = "\n".join(
        f'[[link]]\nkind = "plastic"\nname = "L{i}"\nnodes = ["N{i}", "N{i + SKIP}"]\n'
        f"direction = [1.0, 0.0, 0.0]\ncurve = [[1.0, {K_LINK!r}]]\n" for i in LINKED)
    names = ", ".join(f'"L{i}"' for i in LINKED)
    scheme = 'scheme = "hht"\nalpha = ' + repr(alpha) if alpha else 'scheme = "newmark"'
    cell_names = ", ".join(f'"S{i}"' for i in range(NODES - 1))
    masses = ", ".join(f'"N{i}"' for i in range(1, NODES))
    return f"""
[mesh.nodes]
{nodes}
[mesh.cells]
{cells}
[mesh.cell_groups]
CELLS = [{cell_names}]
[model]
components = ["DX"]
[[discrete]]
cell_groups = ["CELLS"]
stiffness = {K_CELL!r}
damping = {C_CELL!r}
[[discrete]]
nodes = [{masses}]
mass = {MASS!r}
[[constraint]]
nodes = ["N0"]
DX = 0.0
[[load]]
nodes = ["N{NODES - 1}"]
FX = {F0!r}
{links}
[[analysis]]
name = "tr"
kind = "transient"
{scheme}
step = {DT!r}
end = {END!r}
links = [{names}]
"""


def newmark_reference(alpha: float):
    """The HHT-alpha recurrence (Newmark for alpha = 0) of the chain with the links as
    springs, written out: S a_n+1 = (1 + alpha) F - K ((1 + alpha) u~ - alpha u_n) - C (...)."""
    n = NODES - 1                     # N0 clamped
    K = np.zeros((n, n))
    C = np.zeros((n, n))

    def spring(A, i, j, k):          # nodes i, j (0 the clamped one)
        for a, sa in ((i, 1.0), (j, -1.0)):
            for b, sb in ((i, 1.0), (j, -1.0)):
                if a > 0 and b > 0:
                    A[a - 1, b - 1] += sa * sb * k

    for i in range(NODES - 1):
        spring(K, i, i + 1, K_CELL)
        spring(C, i, i + 1, C_CELL)
    for i in LINKED:
        spring(K, i, i + SKIP, K_LINK)
    M = MASS * np.eye(n)
    F = np.zeros(n)
    F[-1] = F0
    beta = (1.0 - alpha) ** 2 / 4.0
    gamma = 0.5 - alpha
    s = 1.0 + alpha
    S = M + s * gamma * DT * C + s * beta * DT ** 2 * K
    lu = scipy.linalg.lu_factor(S)
    u = np.zeros(n)
    v = np.zeros(n)
    a = np.linalg.solve(M, F)
    out = [u.copy()]
    for _ in range(int(round(END / DT))):
        ut = u + DT * v + DT ** 2 * (0.5 - beta) * a
        vt = v + DT * (1.0 - gamma) * a
        r = F - K @ (s * ut - alpha * u) - C @ (s * vt - alpha * v)
        a = scipy.linalg.lu_solve(lu, r)
        u = ut + beta * DT ** 2 * a
        v = vt + gamma * DT * a
        out.append(u.copy())
    return np.array(out)


@pytest.mark.parametrize("alpha", [0.0, -0.1])
def test_elastic_links_give_the_linear_recurrence(tmp_path, alpha, whole):
    """Plastic links that stay elastic are springs: the chain's displacements at every step
    are those of the linear recurrence to round-off (measured 2e-15 of the largest)."""
    path = tmp_path / "chain.toml"
    path.write_text(chain_study(alpha))
    res = fem.run(fem.Study.load(path))
    try:
        a = res.analysis("tr")
        got = np.stack([a.series("displacement", f"N{i}", "DX")[1]
                        for i in range(1, NODES)], 1)
    finally:
        res.close()
    want = newmark_reference(alpha)
    assert whole, "the whole system's iteration was not taken"
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-13 * np.max(np.abs(want))


def test_many_links_take_it_by_default(tmp_path, monkeypatch):
    """With FROM_LINKS links or more, the step takes it unasked (the chain has 18)."""
    assert len(LINKED) >= loops.FROM_LINKS
    taken = []
    original = newmark_columns.StepSize.whole
    monkeypatch.setattr(newmark_columns.StepSize, "whole",
                        lambda self: taken.append(self.dt) or original(self))
    path = tmp_path / "chain.toml"
    path.write_text(chain_study(0.0))
    res = fem.run(fem.Study.load(path))
    res.close()
    assert taken


# --------------------------------------------------------------------------- closed forms
NEWMARK = [("physical", s) for s in ("newmark", "hht", "central_difference")]


@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_elastic_perfectly_plastic_oscillator(tmp_path, basis, scheme, whole):
    test_plastic.test_elastic_perfectly_plastic_oscillator_under_a_step_load(tmp_path, basis,
                                                                            scheme)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_yield_then_unload(tmp_path, basis, scheme, whole):
    test_plastic.test_yield_then_unload_with_a_parallel_spring(tmp_path, basis, scheme)
    assert whole


@pytest.mark.parametrize("rule", ["kinematic", "isotropic"])
@pytest.mark.parametrize("basis, scheme", NEWMARK[:2])
def test_bilinear_hardening_loop(tmp_path, basis, scheme, rule, whole):
    test_plastic.test_bilinear_hardening_under_a_cyclic_elongation(tmp_path, basis, scheme,
                                                                  rule)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_yielding_gap_spring(tmp_path, basis, scheme, whole):
    test_plastic.test_a_yielding_gap_spring(tmp_path, basis, scheme)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_located_events(tmp_path, basis, scheme, whole):
    test_plastic.test_located_yield_and_unload_in_the_newmark_family(tmp_path, basis, scheme)
    assert whole


@pytest.fixture(scope="module")
def v8_results():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loops, "FROM_LINKS", 1)
        res = fem.run(fem.Study.load(v8.STUDY))
    yield res
    res.close()


@pytest.fixture(scope="module")
def v8_ref():
    return v8.reference(np.round(np.arange(int(round(v8.END / v8.STEP)) + 1) * v8.STEP, 12))


@pytest.mark.parametrize("name", v8.ANALYSES)
def test_v8_floors_plastic_states_and_balance(v8_results, v8_ref, name):
    v8.test_floors_and_drifts(v8_results, v8_ref, name)
    v8.test_plastic_states(v8_results, v8_ref, name)
    v8.test_energy_balance(v8_results, v8_ref, name)


# ------------------------------------------- laws whose tangent moves with the state
# (the iteration keeps the tangent of its factor while a link's moves by less than
# SAME_TANGENT of itself: these laws take that path at almost every step)


@pytest.mark.parametrize("alpha", [0.5, 1.0])
@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_a_mass_braked_by_a_power_law_damper(tmp_path, basis, scheme, alpha, whole):
    test_damper.test_a_mass_braked_by_a_damper(tmp_path, basis, scheme, alpha)
    assert whole


@pytest.mark.parametrize("alpha", [0.3, 1.5])
@pytest.mark.parametrize("basis, scheme", NEWMARK[:2])
def test_the_braked_mass_to_rest(tmp_path, basis, scheme, alpha, whole):
    test_damper.test_the_braked_mass_to_rest(tmp_path, basis, scheme, alpha, 1e-3)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK)
def test_maxwell_free_vibration(tmp_path, basis, scheme, whole):
    test_maxwell.test_free_vibration_on_a_maxwell_element_with_a_parallel_spring(tmp_path,
                                                                                basis, scheme)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK[:2])
def test_two_masses_joined_by_a_maxwell_element(tmp_path, basis, scheme, whole):
    test_maxwell.test_two_masses_joined_by_a_maxwell_element(tmp_path, basis, scheme)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK[:2])
def test_bouc_wen_monotonic_loading(tmp_path, basis, scheme, whole):
    test_bouc_wen.test_monotonic_loading_under_a_ramp(tmp_path, basis, scheme)
    assert whole


@pytest.mark.parametrize("basis, scheme", NEWMARK[:2])
def test_bouc_wen_cycles(tmp_path, basis, scheme, whole):
    test_bouc_wen.test_cycles_under_an_imposed_sine(tmp_path, basis, scheme)
    assert whole
