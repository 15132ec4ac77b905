"""Maxwell links (a linear spring k in series with a linear dashpot c along a unit direction n)
against solutions written here, never against fem's own output:

* relaxation under a displacement u0 held from t = 0: F(t) = k u0 exp(-t k / c);
* a harmonic imposed displacement u0 sin(w t): the closed form F = F_ss + A exp(-t k / c),
  whose steady state is the complex stiffness K* = k i w c / (k + i w c);
* free vibration of a mass on a Maxwell element to ground (with a parallel spring k0, and
  without one on the physical basis): the matrix exponential of the linear state equations
  of (x, v, e), with e the dashpot elongation;
* a Maxwell element between two masses, and one along an oblique direction: the matrix
  exponential of their 5-state systems;
* the order of the fixed-step schemes (halving the step), and the tolerance of the adaptive
  ones (the dashpot's accuracy follows it);
* input that validation refuses.

Conventions (the contract of the link): the elongation is u = n . (u(N1) - u(N2)) (one node:
n . u(N1)); the dashpot elongation e starts at 0; the force F = k (u - e) = c e' is positive
in tension and acts as -F n on N1 and +F n on N2. The stored energy of the link is
F^2 / (2 k), the dashpot dissipates F^2 / c.

Every transient (basis, scheme) of the catalog runs the free vibration; a scheme that does not
offer Maxwell links is skipped with the catalog's reason.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import h5py
import numpy as np
import pytest
import scipy.linalg

from fem import catalog
from fem.cli import EXIT_INVALID, main
from fem.errors import StudyError
from fem.runner import run_study

ENERGY = ("kinetic", "potential", "link_energy", "dissipated", "external_work")
ROWS = list(catalog.SCHEMES)                     # every transient (basis, scheme)
PHYSICAL = [key for key in ROWS if key[0] == "physical"]


def _ids(rows):
    return [f"{basis}-{scheme}" for basis, scheme in rows]


# ------------------------------------------------------------------------------------------
# Accuracy of each scheme, and how it is derived.
#
# Every case is linear with constant coefficients: its state is a sum of modes exp(lambda t),
# oscillating or relaxing. Let Lambda be the largest |lambda| of the reference system (the
# fastest rate the scheme must follow), T the duration and h the step. A fixed-step scheme
# of order p makes
#   * a relative rate (period) error c (Lambda h)^p that builds up over Lambda T radians;
#   * a relative amplitude error a (Lambda h)^p set at the start.
# The constants are those of the amplification matrix of each scheme on x'' + w^2 x = 0 (the
# same as tests/test_link_matrix.py): trapezoidal Newmark c = 1/12, a = 0; HHT (alpha = -0.1)
# c = 0.105, a = 0.04 (its numerical damping, 0.01 (w h)^3 per radian, is below that);
# central differences c = 1/24, a = 1/8 (the start u1 = u0 + h v0 + h^2 a0 / 2); classical
# RK4 c = 1/120 plus its amplitude decay (w h)^4 / 144 per radian, c = 0.016 in all;
# semi-implicit Euler (order 1) c = 1/2, a = 1/2 (its velocity lags the position by half a
# step). The adaptive schemes hold their error near their tolerance tol: velocity Verlet
# (adaptive2) keeps its period error (w h)^2 / 24 below tol, with a start offset 3 tol; an
# embedded pair of order p takes steps of about tol^(1/p) radians, a drift of
# tol^((p - 1) / p) per radian. The exact scheme is exact to round-off.
#
# The bound on the error of a state, relative to its largest value, is
#     SAFETY (drift Lambda T + amplitude) + FLOOR
# A quantity of order two in the state (an energy) gets twice that bound.
# ------------------------------------------------------------------------------------------
SAFETY = 3.0
FLOOR = 1e-9           # round-off of a run of a few thousand steps, relative to the peak
TOLERANCE = 1e-8       # the tolerance given to the adaptive schemes
#: euler is run at a fixed step (with ``step`` it is a fixed-step scheme): as an adaptive
#: first-order scheme, a tolerance of 1e-8 would need about 1e8 steps. It takes steps this
#: many times shorter than the other fixed-step schemes.
EULER_REFINEMENT = 20


@dataclass(frozen=True)
class Accuracy:
    """order p; period c and amplitude a of a fixed-step scheme (None for adaptive ones and
    the exact scheme); adaptive: the step control of ``tol``; refine: the step is the case's
    step divided by it."""
    order: int
    period: float | None = None
    amplitude: float = 0.0
    adaptive: bool = False
    refine: int = 1

    def bound(self, rate: float, duration: float, step: float) -> float:
        """Relative error bound of a state over ``duration`` (s) for the fastest rate of the
        system ``rate`` (1/s), the case's step ``step`` (s)."""
        if self.period is not None:
            x = (rate * step / self.refine) ** self.order
            return SAFETY * (self.period * x * rate * duration + self.amplitude * x) + FLOOR
        if self.adaptive:
            tol = TOLERANCE
            drift = tol if self.order == 2 else tol ** ((self.order - 1) / self.order)
            start = 3.0 * tol if self.order == 2 else 0.0
            return SAFETY * (drift * rate * duration + start) + FLOOR
        return FLOOR


ACCURACY = {
    ("physical", "newmark"): Accuracy(2, 1 / 12),
    ("physical", "hht"): Accuracy(2, 0.105, 0.04),
    ("physical", "central_difference"): Accuracy(2, 1 / 24, 1 / 8),
    ("physical", "exact"): Accuracy(0),
    ("physical", "rk4"): Accuracy(4, 0.016),
    ("modal", "central_difference"): Accuracy(2, 1 / 24, 1 / 8),
    ("modal", "euler"): Accuracy(1, 0.5, 0.5, refine=EULER_REFINEMENT),
    ("modal", "adaptive2"): Accuracy(2, adaptive=True),
    ("modal", "devogelaere"): Accuracy(4, adaptive=True),
    ("modal", "rk32"): Accuracy(3, adaptive=True),
    ("modal", "rk54"): Accuracy(5, adaptive=True),
    ("modal", "newmark"): Accuracy(2, 1 / 12),
    ("modal", "exact"): Accuracy(0),
    ("modal", "rk4"): Accuracy(4, 0.016),
}


def test_accuracy_table_covers_the_catalog():
    assert set(ACCURACY) == set(catalog.SCHEMES)
    for key, acc in ACCURACY.items():
        assert acc.order == catalog.SCHEMES[key].order, key


def require_maxwell(basis: str, scheme: str):
    """Skip, naming the catalog's reason, a scheme that does not offer Maxwell links."""
    row = catalog.SCHEMES[(basis, scheme)]
    if "maxwell" in catalog.FEATURES and not row.offers("maxwell"):
        pytest.skip(f"{basis} {scheme} does not offer Maxwell links: {row.reason('maxwell')}")


def test_every_scheme_offers_maxwell_links():
    """A Maxwell element is linear: every scheme runs it, the exact one included (a scheme
    that stopped offering it would make the tests below skip it: this one fails instead)."""
    assert "maxwell" in catalog.FEATURES
    for key, row in catalog.SCHEMES.items():
        assert row.offers("maxwell"), (key, row.reason("maxwell"))


# ------------------------------------------------------------------------------------------
# studies
def maxwell_link(nodes, direction, stiffness, damping, name="mx", extra=""):
    """A [[link]] block of kind "maxwell"."""
    quoted = ", ".join(f'"{n}"' for n in nodes)
    vector = ", ".join(repr(float(x)) for x in direction)
    return (f'[[link]]\nkind = "maxwell"\nname = "{name}"\nnodes = [{quoted}]\n'
            f"direction = [{vector}]\nstiffness = {stiffness!r}\ndamping = {damping!r}\n"
            f"{extra}")


def transient(basis, scheme, *, end, step, name="a", links=("mx",), tolerance=TOLERANCE):
    """A transient [[analysis]] block; a modal one uses the modes analysis "modes". Fixed-step
    schemes take ``step`` (euler a step ACCURACY says how much shorter, archived on the
    grid of ``step``); adaptive ones ``tolerance``, ``step`` being their output
    grid; the exact scheme, its archive grid."""
    acc = ACCURACY[(basis, scheme)]
    lines = ["[[analysis]]", f'name = "{name}"', 'kind = "transient"', f'scheme = "{scheme}"',
             f"end = {end!r}"]
    if acc.refine > 1:
        lines += [f"step = {step / acc.refine!r}", f"archive = {{ every = {acc.refine} }}"]
    else:
        lines.append(f"step = {step!r}")
    if basis == "modal":
        lines += ['basis = "modal"', 'modes = "modes"']
    if acc.adaptive:
        lines.append(f"tolerance = {tolerance!r}")
    if links:
        lines.append("links = [" + ", ".join(f'"{n}"' for n in links) + "]")
    return "\n".join(lines) + "\n"


def modes(count):
    return f'[[analysis]]\nname = "modes"\nkind = "modes"\ncount = {count}\n'


def run(tmp_path, text, name="study"):
    """Run a study written here; the data of its analysis "a" (and of any other transient
    analysis) as {analysis: {dataset path: array}}."""
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / f"{name}.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    found = {}
    with h5py.File(out, "r") as f:
        for analysis, g in f["analyses"].items():
            if g.attrs["kind"] != "transient":
                continue
            data = {}
            g.visititems(lambda key, obj: data.__setitem__(key, obj[()])
                         if isinstance(obj, h5py.Dataset) else None)
            found[analysis] = data
    return found


def error(computed, reference):
    """Largest |computed - reference| relative to the largest |reference|."""
    return float(np.max(np.abs(np.asarray(computed) - reference)) / np.max(np.abs(reference)))


# ------------------------------------------------------------------------------------------
# the linear system of masses, springs to ground and one Maxwell element
def maxwell_system(mass, k0, ell, k, c):
    """The matrix A of y' = A y, y = (x (n), v (n), e), for M x'' = -K0 x - F ell,
    c e' = F, F = k (ell . x - e): ``mass`` (n,), ``k0`` (n, n), ``ell`` (n,) the elongation
    per dof (n on the first node's dofs, -n on the second's)."""
    n = len(mass)
    ell = np.asarray(ell, float)
    minv = np.diag(1.0 / np.asarray(mass, float))
    a = np.zeros((2 * n + 1, 2 * n + 1))
    a[:n, n:2 * n] = np.eye(n)
    a[n:2 * n, :n] = -minv @ (np.asarray(k0, float) + k * np.outer(ell, ell))
    a[n:2 * n, 2 * n] = minv @ (k * ell)
    a[2 * n, :n] = (k / c) * ell
    a[2 * n, 2 * n] = -k / c
    return a


def propagate(a, y0, times):
    """exp(A t) y0 at each time, (len(times), len(y0))."""
    return np.array([scipy.linalg.expm(a * t) @ y0 for t in times])


def fastest_rate(a):
    return float(np.max(np.abs(np.linalg.eigvals(a))))


@dataclass
class Reference:
    x: np.ndarray          # (nt, n)
    v: np.ndarray          # (nt, n)
    e: np.ndarray          # (nt,)
    u: np.ndarray          # (nt,) elongation
    force: np.ndarray      # (nt,)
    energy: dict           # kinetic, potential, link_energy, dissipated, external_work


def free_reference(mass, k0, ell, k, c, x0, v0, times):
    """The free motion from (x0, v0) with the dashpot at e = 0, and its energy terms."""
    n = len(mass)
    a = maxwell_system(mass, k0, ell, k, c)
    y = propagate(a, np.concatenate([x0, v0, [0.0]]), times)
    x, v, e = y[:, :n], y[:, n:2 * n], y[:, 2 * n]
    u = x @ np.asarray(ell, float)
    force = k * (u - e)
    kinetic = 0.5 * np.einsum("ti,i,ti->t", v, np.asarray(mass, float), v)
    potential = 0.5 * np.einsum("ti,ij,tj->t", x, np.asarray(k0, float), x)
    link = force ** 2 / (2 * k)
    stored = kinetic + potential + link
    energy = dict(kinetic=kinetic, potential=potential, link_energy=link,
                  dissipated=stored[0] - stored, external_work=np.zeros_like(stored))
    return Reference(x, v, e, u, force, energy), fastest_rate(a)


def balance_error(data, scale):
    """Largest drift of kinetic + potential + link energy + dissipated - external work from
    its start, relative to ``scale`` (the largest energy of the case). (postpro's
    energy_balance_error divides by the external work when it is not identically zero: a
    work of round-off, where no work is done, would blow its ratio up.)"""
    total = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
             + data["energy/dissipated"] - data["energy/external_work"])
    return float(np.max(np.abs(total - total[0])) / scale)


def check_link_series(data, ref: Reference, bound, what):
    """The link's series and the energy terms against the reference."""
    link = data["links/mx/force"], data["links/mx/elongation"], data["links/mx/dashpot_elongation"]
    errors = {"force": error(link[0], ref.force), "elongation": error(link[1], ref.u),
              "dashpot_elongation": error(link[2], ref.e)}
    # every energy term relative to the largest energy of the case
    scale = max(float(np.max(np.abs(ref.energy[term]))) for term in ENERGY)
    for term in ENERGY:
        errors[f"energy/{term}"] = float(np.max(np.abs(data[f"energy/{term}"]
                                                       - ref.energy[term])) / scale)
    balance = balance_error(data, scale)
    print(f"{what}: " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items())
          + f", balance {balance:.2e}; bound {bound:.2e}")
    for name in ("force", "elongation", "dashpot_elongation"):
        assert errors[name] < bound, f"{what}: {name} off by {errors[name]:.3e} (bound {bound:.3e})"
    for term in ENERGY:
        assert errors[f"energy/{term}"] < 2 * bound, \
            f"{what}: energy/{term} off by {errors[f'energy/{term}']:.3e} (bound {2 * bound:.3e})"
    assert balance < 2 * bound, \
        f"{what}: energy balance error {balance:.3e} (bound {2 * bound:.3e})"


# ------------------------------------------------------------------------------------------
# 1. relaxation under a held displacement
K_MX, C_MX = 1.0e4, 2.0e2            # N/m, N s/m: tau = c / k = 0.02 s
TAU = C_MX / K_MX
U0 = 1.0e-3                          # m


def imposed_study(basis, scheme, *, imposed, end, step, functions="", extra_analyses="",
                  link=None, links=("mx",)):
    """Node P carries the Maxwell element (or the [[link]] block ``link``, named in
    ``links``) to ground along X and has its DX imposed (``imposed``: the lines of its
    [[constraint]] after DX); node Q, a free oscillator that nothing moves (1 kg on
    100 N/m), gives the model a free dof and the modal basis its mode."""
    link = link or maxwell_link(["P"], [1.0, 0.0, 0.0], K_MX, C_MX)
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
Q = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["Q"]
mass = 1.0
stiffness = 100.0
{functions}
[[constraint]]
nodes = ["P"]
{imposed}
{link}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=end, step=step, links=links)}
{extra_analyses}
"""


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_relaxation_under_a_held_displacement(tmp_path, basis, scheme):
    """u = u0 held from t = 0: the spring takes it at once (F0 = k u0), then the dashpot
    relaxes it, F = k u0 exp(-t / tau), e = u0 (1 - exp(-t / tau)); the link's stored
    energy F^2 / (2 k) is all dissipated, the support, at rest, does no work."""
    require_maxwell(basis, scheme)
    end, step = 5 * TAU, TAU / 50                     # h / tau = 0.02, 250 steps
    data = run(tmp_path, imposed_study(basis, scheme, imposed=f"DX = {U0!r}", end=end,
                                       step=step))["a"]
    t = data["time"]
    assert t[0] == 0.0 and t[-1] == pytest.approx(end, abs=1e-12)
    force = K_MX * U0 * np.exp(-t / TAU)
    e = U0 * (1.0 - np.exp(-t / TAU))
    link = force ** 2 / (2 * K_MX)
    ref = Reference(x=None, v=None, e=e, u=np.full_like(t, U0), force=force,
                    energy=dict(kinetic=np.zeros_like(t), potential=np.zeros_like(t),
                                link_energy=link, dissipated=link[0] - link,
                                external_work=np.zeros_like(t)))
    bound = ACCURACY[(basis, scheme)].bound(1.0 / TAU, end, step)
    assert data["links/mx/force"][0] == pytest.approx(K_MX * U0, rel=1e-12)
    assert data["links/mx/dashpot_elongation"][0] == 0.0
    check_link_series(data, ref, bound, f"relaxation {basis} {scheme}")
    # nothing moves the free oscillator Q
    assert np.max(np.abs(data["displacement"][:, 1])) < 1e-12


# ------------------------------------------------------------------------------------------
# 2. harmonic imposed displacement
W = 50.0                                  # rad/s: w tau = 1, where the loss factor peaks


def complex_stiffness():
    """K* = k i w c / (k + i w c) = K' + i K''."""
    kstar = K_MX * 1j * W * C_MX / (K_MX + 1j * W * C_MX)
    return kstar.real, kstar.imag


def harmonic_force(t):
    """F(t) under u = u0 sin(w t) = Im(u0 exp(i w t)) from F(0) = 0: the steady state
    Im(K* u0 exp(i w t)) = u0 (K' sin w t + K'' cos w t), plus the free relaxation
    A exp(-t / tau) of F' = k u' - F / tau that starts it from zero, A = -u0 K''."""
    k1, k2 = complex_stiffness()
    steady = U0 * (k1 * np.sin(W * t) + k2 * np.cos(W * t))
    return steady, steady - U0 * k2 * np.exp(-t / TAU)


def test_harmonic_closed_form_solves_the_dashpot_equation():
    """The closed form above against the matrix exponential of (F, sin, cos)."""
    a = np.array([[-1.0 / TAU, 0.0, K_MX * U0 * W],    # F' = -F/tau + k u0 w cos(w t)
                  [0.0, 0.0, W],                      # (sin)' = w cos
                  [0.0, -W, 0.0]])                    # (cos)' = -w sin
    t = np.linspace(0.0, 0.4, 41)
    y = propagate(a, np.array([0.0, 0.0, 1.0]), t)
    assert np.max(np.abs(y[:, 0] - harmonic_force(t)[1])) < 1e-10 * K_MX * U0


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_steady_state_under_a_harmonic_displacement(tmp_path, basis, scheme):
    """u = u0 sin(w t): the whole force history against the closed form, and after ten
    relaxation times (the transient down to exp(-10) = 5e-5) against the steady state
    u0 (K' sin w t + K'' cos w t); the work of the imposed motion, int F u' dt."""
    require_maxwell(basis, scheme)
    end, step = 20 * TAU, 2e-4                        # w h = h / tau = 0.01, 2000 steps
    data = run(tmp_path, imposed_study(
        basis, scheme, imposed=f'DX = {U0!r}\nfunction = "drive"', end=end, step=step,
        functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n'))["a"]
    t = data["time"]
    assert t[-1] == pytest.approx(end, abs=1e-12)
    steady, force = harmonic_force(t)
    u = U0 * np.sin(W * t)
    # the work of the support: int F u' dt, by the trapezoidal rule on a fine grid
    fine = np.linspace(0.0, end, 400001)
    power = harmonic_force(fine)[1] * U0 * W * np.cos(W * fine)
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(fine))])
    work = np.interp(t, fine, work)
    link = force ** 2 / (2 * K_MX)
    ref = Reference(x=None, v=None, e=u - force / K_MX, u=u, force=force,
                    energy=dict(kinetic=np.zeros_like(t), potential=np.zeros_like(t),
                                link_energy=link, dissipated=work - link, external_work=work))
    bound = ACCURACY[(basis, scheme)].bound(max(W, 1.0 / TAU), end, step)
    check_link_series(data, ref, bound, f"harmonic {basis} {scheme}")
    late = t >= 10 * TAU
    k1, k2 = complex_stiffness()
    amplitude = U0 * np.hypot(k1, k2)
    late_error = np.max(np.abs(data["links/mx/force"][late] - steady[late])) / amplitude
    assert late_error < bound + np.exp(-10.0) * k2 / np.hypot(k1, k2), late_error
    # the loss angle: F leads u by atan(K'' / K') = atan(1 / (w tau)) = 45 degrees here
    assert np.degrees(np.arctan2(k2, k1)) == pytest.approx(45.0, abs=1e-9)


ADAPTIVE = [key for key, acc in ACCURACY.items() if acc.adaptive]


@pytest.mark.parametrize("basis, scheme", ADAPTIVE, ids=_ids(ADAPTIVE))
def test_adaptive_tolerance_controls_the_dashpot(tmp_path, basis, scheme):
    """The harmonic case at tolerances 1e-8 and 1e-11: the structure does not move, the
    dashpot alone follows the imposed motion; a step control that measures the accuracy of
    the link's state cuts the force error as the tolerance falls (by 1000^((p - 1) / p),
    at least 100 for p >= 3 and 1000 for adaptive2's period rule), down to round-off.
    Required: ten times smaller, or below 1e-10 of the amplitude."""
    require_maxwell(basis, scheme)
    end, step = 20 * TAU, 2e-4
    tight = transient(basis, scheme, end=end, step=step, name="tight", tolerance=1e-11)
    found = run(tmp_path, imposed_study(
        basis, scheme, imposed=f'DX = {U0!r}\nfunction = "drive"', end=end, step=step,
        functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n', extra_analyses=tight))
    errors = []
    for name in ("a", "tight"):
        t = found[name]["time"]
        errors.append(error(found[name]["links/mx/force"], harmonic_force(t)[1]))
    print(f"force error at tolerance 1e-8: {errors[0]:.3e}, at 1e-11: {errors[1]:.3e}")
    assert errors[1] < max(errors[0] / 10, 1e-10), \
        (f"{basis} {scheme}: the force error does not follow the tolerance: {errors[0]:.3e} at "
         f"1e-8, {errors[1]:.3e} at 1e-11")


# ------------------------------------------------------------------------------------------
# 3. free vibration of a mass on a Maxwell element to ground
M1, K0, K1, C1 = 1.0, 16.0, 48.0, 24.0      # kg, N/m (parallel spring), N/m, N s/m
X0, V0 = 0.01, 0.05                         # m, m/s
END = 2.0                                   # s: 2.5 periods, the amplitude down to 1/4
STEP = 2.5e-3                               # s: w h = 0.02 at w = 7.95 rad/s, 800 steps


def oscillator_study(basis, scheme, *, k0=K0, end=END, step=STEP, extra_analyses=""):
    """Node P (DX only), 1 kg, a spring k0 to ground in parallel with the Maxwell element;
    it starts at x0 with velocity v0, the dashpot at rest (e = 0)."""
    spring = f"stiffness = {k0!r}\n" if k0 else ""
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {M1!r}
{spring}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r} }}
velocity = {{ DX = {V0!r} }}
{maxwell_link(["P"], [1.0, 0.0, 0.0], K1, C1)}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=end, step=step)}
{extra_analyses}
"""


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_free_vibration_on_a_maxwell_element_with_a_parallel_spring(tmp_path, basis, scheme):
    """m x'' = -k0 x - k (x - e), c e' = k (x - e) from x0, v0, e = 0: the displacement,
    velocity, link series and energy terms against the matrix exponential."""
    require_maxwell(basis, scheme)
    data = run(tmp_path, oscillator_study(basis, scheme))["a"]
    t = data["time"]
    assert t[0] == 0.0 and t[-1] == pytest.approx(END, abs=1e-12)
    ref, rate = free_reference([M1], [[K0]], [1.0], K1, C1, [X0], [V0], t)
    bound = ACCURACY[(basis, scheme)].bound(rate, END, STEP)
    err_x = error(data["displacement"][:, 0], ref.x[:, 0])
    err_v = error(data["velocity"][:, 0], ref.v[:, 0])
    print(f"x {err_x:.2e}, v {err_v:.2e}")
    assert err_x < bound and err_v < bound, (err_x, err_v, bound)
    # at the start the spring takes the initial displacement: F0 = k x0
    assert data["links/mx/force"][0] == pytest.approx(K1 * X0, rel=1e-12)
    check_link_series(data, ref, bound, f"free vibration {basis} {scheme}")
    assert data["energy/dissipated"][-1] > 0.5 * ref.energy["dissipated"][-1] > 0


@pytest.mark.parametrize("basis, scheme", PHYSICAL, ids=_ids(PHYSICAL))
def test_free_motion_on_a_maxwell_element_alone(tmp_path, basis, scheme):
    """No parallel spring: m v' = -F and c e' = F keep m v + c e = m v0, and the mass creeps
    to x = e = m v0 / c; against the matrix exponential (one eigenvalue is 0)."""
    require_maxwell(basis, scheme)
    data = run(tmp_path, oscillator_study(basis, scheme, k0=0.0))["a"]
    t = data["time"]
    ref, rate = free_reference([M1], [[0.0]], [1.0], K1, C1, [X0], [V0], t)
    bound = ACCURACY[(basis, scheme)].bound(rate, END, STEP)
    assert error(data["displacement"][:, 0], ref.x[:, 0]) < bound
    assert error(data["velocity"][:, 0], ref.v[:, 0]) < bound
    check_link_series(data, ref, bound, f"Maxwell alone {basis} {scheme}")
    momentum = M1 * data["velocity"][:, 0] + C1 * data["links/mx/dashpot_elongation"]
    # each term off by at most the bound times its largest value
    scale = M1 * np.max(np.abs(ref.v)) + C1 * np.max(np.abs(ref.e))
    assert np.max(np.abs(momentum - M1 * V0)) < bound * scale


# the orders of the fixed-step schemes: halving the step divides the error by 2^p
FIXED = [key for key, acc in ACCURACY.items() if acc.period is not None]


@pytest.mark.parametrize("basis, scheme", FIXED, ids=_ids(FIXED))
def test_order_of_the_fixed_step_schemes(tmp_path, basis, scheme):
    """The error of the displacement at steps h and h / 2 falls by 2^p (within 30 %): the
    Maxwell element keeps the order the catalog gives the scheme."""
    require_maxwell(basis, scheme)
    acc = ACCURACY[(basis, scheme)]
    # a coarser step for rk4, whose error would otherwise meet round-off
    step = 4 * STEP if acc.order == 4 else STEP
    second = transient(basis, scheme, end=END, step=step / 2, name="half")
    found = run(tmp_path, oscillator_study(basis, scheme, step=step, extra_analyses=second))
    errors = []
    for name in ("a", "half"):
        t = found[name]["time"]
        ref, _ = free_reference([M1], [[K0]], [1.0], K1, C1, [X0], [V0], t)
        errors.append(error(found[name]["displacement"][:, 0], ref.x[:, 0]))
    ratio = errors[0] / errors[1]
    print(f"errors {errors[0]:.3e}, {errors[1]:.3e}: ratio {ratio:.2f} (2^p = {2 ** acc.order})")
    assert 0.7 * 2 ** acc.order < ratio < 1.3 * 2 ** acc.order


# ------------------------------------------------------------------------------------------
# 4. two masses joined by a Maxwell element, and an oblique direction
MA, MB, KA, KB = 1.0, 2.0, 16.0, 36.0
TWO_NODE = [("physical", "newmark"), ("physical", "exact"), ("physical", "rk4"),
            ("modal", "rk54"), ("modal", "newmark")]


def two_node_study(basis, scheme):
    """A (x = 0, 1 kg on 16 N/m) and B (x = 1, 2 kg on 36 N/m), the Maxwell element from A
    to B along direction [-2, 0, 0] (normalized: n = -X, so that u = x_B - x_A, the
    stretching of the segment); A starts displaced, B moving."""
    return f"""
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["A"]
mass = {MA!r}
stiffness = {KA!r}
[[discrete]]
nodes = ["B"]
mass = {MB!r}
stiffness = {KB!r}
[[initial]]
nodes = ["A"]
displacement = {{ DX = {X0!r} }}
[[initial]]
nodes = ["B"]
velocity = {{ DX = {V0!r} }}
{maxwell_link(["A", "B"], [-2.0, 0.0, 0.0], K1, C1)}
{modes(2) if basis == "modal" else ""}
{transient(basis, scheme, end=END, step=STEP / 2)}
"""


@pytest.mark.parametrize("basis, scheme", TWO_NODE, ids=_ids(TWO_NODE))
def test_two_masses_joined_by_a_maxwell_element(tmp_path, basis, scheme):
    """u = n . (x_A - x_B) = x_B - x_A; the force -F n on A and +F n on B: against the
    matrix exponential of (x_A, x_B, v_A, v_B, e)."""
    require_maxwell(basis, scheme)
    data = run(tmp_path, two_node_study(basis, scheme))["a"]
    t = data["time"]
    ref, rate = free_reference([MA, MB], np.diag([KA, KB]), [-1.0, 1.0], K1, C1,
                               [X0, 0.0], [0.0, V0], t)
    bound = ACCURACY[(basis, scheme)].bound(rate, END, STEP / 2)
    for dof in (0, 1):
        assert error(data["displacement"][:, dof], ref.x[:, dof]) < bound, dof
        assert error(data["velocity"][:, dof], ref.v[:, dof]) < bound, dof
    # the link starts compressed by x_A0 = 0.01 m: F0 = -k x0
    assert data["links/mx/force"][0] == pytest.approx(-K1 * X0, rel=1e-12)
    check_link_series(data, ref, bound, f"two nodes {basis} {scheme}")


OBLIQUE = [("physical", "newmark"), ("physical", "exact"), ("modal", "rk54")]
NX, NY = 0.6, 0.8                    # direction [3, 4, 0] normalized


def oblique_study(basis, scheme):
    """Node P free along X and Y (1 kg, springs 16 and 36 N/m), the Maxwell element to
    ground along [3, 4, 0]."""
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX", "DY"]
[[discrete]]
nodes = ["P"]
mass = {M1!r}
stiffness = [{KA!r}, {KB!r}, 0.0]
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r}, DY = 0.0 }}
velocity = {{ DX = 0.0, DY = {V0!r} }}
{maxwell_link(["P"], [3.0, 4.0, 0.0], K1, C1)}
{modes(2) if basis == "modal" else ""}
{transient(basis, scheme, end=END, step=STEP / 2)}
"""


@pytest.mark.parametrize("basis, scheme", OBLIQUE, ids=_ids(OBLIQUE))
def test_maxwell_element_along_an_oblique_direction(tmp_path, basis, scheme):
    """u = n . x with n = (0.6, 0.8): the element couples X and Y; against the matrix
    exponential of (x, y, v_x, v_y, e)."""
    require_maxwell(basis, scheme)
    data = run(tmp_path, oblique_study(basis, scheme))["a"]
    t = data["time"]
    ref, rate = free_reference([M1, M1], np.diag([KA, KB]), [NX, NY], K1, C1,
                               [X0, 0.0], [0.0, V0], t)
    bound = ACCURACY[(basis, scheme)].bound(rate, END, STEP / 2)
    for dof in (0, 1):
        assert error(data["displacement"][:, dof], ref.x[:, dof]) < bound, dof
        assert error(data["velocity"][:, dof], ref.v[:, dof]) < bound, dof
    assert data["links/mx/force"][0] == pytest.approx(K1 * NX * X0, rel=1e-12)
    check_link_series(data, ref, bound, f"oblique {basis} {scheme}")


# ------------------------------------------------------------------------------------------
# 5. input that validation refuses
VALID = oscillator_study("physical", "newmark")
LINK = maxwell_link(["P"], [1.0, 0.0, 0.0], K1, C1)


def edit(old, new, text=VALID):
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


BAD = [
    ("missing_damping", edit(LINK, LINK.replace(f"damping = {C1!r}\n", "")),
     ["link[1].damping", "missing"]),
    ("zero_damping", edit(LINK, LINK.replace(f"damping = {C1!r}", "damping = 0.0")),
     ["link[1].damping"]),
    ("negative_stiffness", edit(LINK, LINK.replace(f"stiffness = {K1!r}", "stiffness = -48.0")),
     ["link[1].stiffness"]),
    ("zero_direction", edit(LINK, LINK.replace("direction = [1.0, 0.0, 0.0]",
                                               "direction = [0.0, 0.0, 0.0]")),
     ["link[1].direction"]),
    ("unknown_key", edit(LINK, LINK + "viscosity = 3.0\n"),
     ["link[1]", "unknown key 'viscosity'"]),
]


def test_the_valid_study_runs(tmp_path):
    """The study every refused case changes in one key runs (where newmark offers the link)."""
    require_maxwell("physical", "newmark")
    (tmp_path / "study.toml").write_text(VALID)
    assert main(["run", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r.h5")]) == 0


def assert_refused(tmp_path, capsys, text, expected):
    """``fem run`` of the study ``text`` exits with code 2 and one error line holding every
    piece of ``expected`` (the key), writes no results file; the study reader raises a
    StudyError that names it."""
    from fem.study import load_study

    study = tmp_path / "study.toml"
    study.write_text(text)
    out = tmp_path / "results.h5"
    code = main(["run", str(study), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_INVALID, captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    for piece in expected:
        assert piece in lines[0], f"{piece!r} not in {lines[0]!r}"
    assert not out.exists()
    with pytest.raises(StudyError) as caught:
        load_study(study)
    for piece in expected:
        assert piece in str(caught.value)


@pytest.mark.parametrize("text, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_maxwell_link_is_refused(tmp_path, capsys, text, expected):
    """``fem run`` exits with code 2 and one error line naming the key, no results file; the
    study reader raises a StudyError that names it."""
    assert_refused(tmp_path, capsys, text, expected)

