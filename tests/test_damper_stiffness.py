"""Damper links with a spring in series (``stiffness`` k: a power-law Maxwell element) and one in
parallel with both (``parallel_stiffness`` K_p: a generalized Zener element), against
solutions written here, never against fem's own output.

The dashpot's force at its rate r is f(r) = c |r|^alpha sign r (linear below v_r); its
elongation e follows e' = g(F_b), g the inverse of f and F_b = k (u - e) the force of the
branch; the link carries F = K_p u + F_b. Cases:

* relaxation under a displacement u0 held from t = 0: F_b(0) = k u0, then F_b' = -k g(F_b):
  the time the branch takes from k u0 down to F is t(F) = int_F^(k u0) dF' / (k g(F')), by
  quadrature, for alpha = 0.5 and 1.5, with and without K_p; for alpha = 1 (every scheme, the
  exact one included), F_b = k u0 exp(-t k / c);
* a harmonic imposed elongation u0 sin(w t): alpha = 1 against the Maxwell law (the closed
  form of tests/test_maxwell.py, and a Maxwell link of the same study), alpha = 0.5 against
  solve_ivp of y' = u'(t) - g(k y) (y = u - e); the work int F du over the last cycle (the
  loop's area) against the dissipated and stored energies, and the energy balance;
* a mass on a Zener element released from a displacement, in the implicit schemes at steps
  of 1 and 0.1 ms, against solve_ivp; for alpha = 1 in every scheme, the exact one included,
  against the matrix exponential;
* the results group's attributes and series;
* the local integration's loud failure, and input that validation refuses.
"""

from __future__ import annotations

import math

import h5py
import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

from fem import catalog
from fem.cli import EXIT_INVALID, main
from fem.errors import StudyError
from fem.runner import run_study
from test_maxwell import (ACCURACY, ROWS, _ids, balance_error, free_reference, harmonic_force,
                          imposed_study, maxwell_link, modes, run, transient)
from test_maxwell import C_MX, K_MX, TAU, U0, W

K = K_MX                        # N/m, the spring in series: k u0 = 10 N
KP = 4.0e3                      # N/m, the spring in parallel
VR = 1.0e-6                     # m/s, the default linear_below
#: the dashpot's c for each exponent (N (s/m)^alpha): its force at the rate u0 w = 0.05 m/s
#: is of the order of k u0, and the relaxation from k u0 takes some 20 ms
DAMPING = {0.5: 45.0, 1.0: C_MX, 1.5: 900.0}


def feature(alpha: float) -> str:
    return "damper.series.linear" if alpha == 1.0 else "damper.series"


def require(basis: str, scheme: str, alpha: float):
    """Skip, naming the catalog's reason, a scheme that does not offer the feature: only the
    exact scheme, and only for an exponent other than 1."""
    row = catalog.SCHEMES[(basis, scheme)]
    if not row.offers(feature(alpha)):
        assert scheme == "exact" and alpha != 1.0, row.reason(feature(alpha))
        pytest.skip(f"{basis} {scheme}: {row.reason(feature(alpha))}")


def dashpot_rate(f, alpha, c, vr=VR):
    """g(F): the rate of the dashpot carrying the force F, f(r) = c |r|^alpha sign r above
    v_r, c v_r^(alpha - 1) r below."""
    fr = c * vr ** alpha
    if abs(f) < fr:
        return f * vr / fr
    return math.copysign((abs(f) / c) ** (1.0 / alpha), f)


def zener_link(nodes, alpha, *, parallel=None, name="dp", stiffness=K, damping=None):
    """A [[link]] block of kind "damper" along X, with the spring in series (and the one in
    parallel when given)."""
    quoted = ", ".join(f'"{n}"' for n in nodes)
    c = DAMPING[alpha] if damping is None else damping
    text = (f'[[link]]\nkind = "damper"\nname = "{name}"\nnodes = [{quoted}]\n'
            f"direction = [1.0, 0.0, 0.0]\ndamping = {c!r}\nexponent = {alpha!r}\n"
            f"stiffness = {stiffness!r}\n")
    if parallel is not None:
        text += f"parallel_stiffness = {parallel!r}\n"
    return text


def energy_scale(data) -> float:
    """The largest energy term of a run (J): the scale of its energy balance."""
    return max(float(np.max(np.abs(data[f"energy/{term}"]))) for term in
               ("kinetic", "potential", "link_energy", "dissipated", "external_work"))


def attributes(tmp_path, text, link="dp"):
    """Run a study; the attributes of links/<link> in its analysis "a"."""
    path = tmp_path / "attrs.toml"
    path.write_text(text)
    out = tmp_path / "attrs.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    with h5py.File(out, "r") as f:
        return dict(f["analyses/a/links"][link].attrs)


# ------------------------------------------------------------------------------------------
# 1. relaxation under a held displacement
RELAX_END, RELAX_STEP = 0.1, 4e-4          # 250 steps


def relaxation_time(f, alpha):
    """t(F) = int_F^(k u0) dF' / (k g(F')): the time the branch takes to relax from k u0 to
    F (quadrature; the kink of g at c v_r^alpha is a breakpoint)."""
    c = DAMPING[alpha]
    kink = c * VR ** alpha
    points = [kink] if f < kink < K * U0 else None
    value, _ = quad(lambda x: 1.0 / (K * (dashpot_rate(x, alpha, c))), f, K * U0,
                    points=points, epsabs=0.0, epsrel=1e-13, limit=200)
    return value


@pytest.mark.parametrize("parallel", [None, KP], ids=["maxwell", "zener"])
@pytest.mark.parametrize("alpha", [0.5, 1.5])
@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_relaxation_under_a_held_displacement(tmp_path, basis, scheme, alpha, parallel):
    """u = u0 held from t = 0: the spring takes it at once, F_b(0) = k u0, and the branch
    relaxes along t(F) (quadrature). Each archived force F_b against it: the time error
    t(F_b) - t times the rate k g(F_b) at which F_b falls is its force error, below 1e-10 of
    k u0 in every scheme (the link's motion is the imposed one: the error is the local
    integration's, whose tolerance that is). Once below 1e-6 k u0 (alpha = 1.5: the dashpot
    stops it in finite time, then its linear range), no sooner than the curve. The parallel spring adds K_p u0; the
    stored energy F_b^2 / (2 k) + K_p u0^2 / 2 and the dissipated energy add up to the
    initial stored energy, the support doing no work."""
    require(basis, scheme, alpha)
    link = zener_link(["P"], alpha, parallel=parallel)
    data = run(tmp_path, imposed_study(basis, scheme, imposed=f"DX = {U0!r}", end=RELAX_END,
                                       step=RELAX_STEP, link=link, links=("dp",)))["a"]
    t = data["time"]
    assert t[-1] == pytest.approx(RELAX_END, abs=1e-12)
    kp = parallel or 0.0
    f0 = K * U0
    branch = data["links/dp/force"] - kp * U0
    assert branch[0] == pytest.approx(f0, rel=1e-12)
    assert data["links/dp/dashpot_elongation"][0] == 0.0
    np.testing.assert_allclose(data["links/dp/elongation"], U0, rtol=1e-14)
    # the dashpot's elongation is what the spring does not take
    assert np.max(np.abs(data["links/dp/dashpot_elongation"] - (U0 - branch / K))) \
        < 1e-12 * U0
    c = DAMPING[alpha]
    floor = 1e-6 * f0
    t_floor = relaxation_time(floor, alpha)
    worst = 0.0
    for ti, fi in zip(t, branch):
        if fi > floor:
            rate = K * (dashpot_rate(fi, alpha, c))
            worst = max(worst, rate * abs(relaxation_time(fi, alpha) - ti))
        else:
            assert ti > t_floor - RELAX_STEP and fi > -1e-8 * f0, (ti, fi)
    print(f"relaxation {basis} {scheme} alpha {alpha}: force error {worst / f0:.2e}")
    assert worst < 1e-10 * f0
    if alpha == 1.5:
        assert branch[-1] < floor            # stopped, in finite time
    stored = branch ** 2 / (2.0 * K) + 0.5 * kp * U0 ** 2
    assert np.max(np.abs(data["energy/link_energy"] - stored)) < 1e-9 * stored[0]
    assert np.max(np.abs(data["energy/external_work"])) < 1e-12 * stored[0]
    assert balance_error(data, stored[0]) < 1e-9


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_linear_zener_relaxation(tmp_path, basis, scheme):
    """alpha = 1 with K_p, in every scheme (the exact one included): F = K_p u0 +
    k u0 exp(-t k / c), to 1e-10 of k u0."""
    require(basis, scheme, 1.0)
    end, step = 5 * TAU, TAU / 50
    link = zener_link(["P"], 1.0, parallel=KP)
    data = run(tmp_path, imposed_study(basis, scheme, imposed=f"DX = {U0!r}", end=end,
                                       step=step, link=link, links=("dp",)))["a"]
    t = data["time"]
    expected = KP * U0 + K * U0 * np.exp(-t * K / C_MX)
    err = np.max(np.abs(data["links/dp/force"] - expected)) / (K * U0)
    print(f"linear Zener relaxation {basis} {scheme}: {err:.2e}")
    assert err < 1e-10
    stored = (expected - KP * U0) ** 2 / (2.0 * K) + 0.5 * KP * U0 ** 2
    assert np.max(np.abs(data["energy/link_energy"] - stored)) < 1e-8 * stored[0]
    assert balance_error(data, stored[0]) < 1e-9


# ------------------------------------------------------------------------------------------
# 2. harmonic imposed elongation
HARMONIC_END, HARMONIC_STEP = 20 * TAU, 2e-4          # w h = 0.01, 2000 steps
PERIOD = 2.0 * math.pi / W
DRIVE = f'[functions.drive]\nexpression = "sin({W!r}*t)"\n'


def harmonic_study(basis, scheme, link, links):
    return imposed_study(basis, scheme, imposed=f'DX = {U0!r}\nfunction = "drive"',
                         end=HARMONIC_END, step=HARMONIC_STEP, functions=DRIVE, link=link,
                         links=links)


def work_of(t, force, t0, t1):
    """int F u' dt over [t0, t1] (archived instants on a uniform grid, t0 and t1 among them),
    u' = u0 w cos(w t): Simpson's rule."""
    inside = (t >= t0 - 1e-12) & (t <= t1 + 1e-12)
    ts, power = t[inside], force[inside] * U0 * W * np.cos(W * t[inside])
    assert len(ts) % 2 == 1
    h = ts[1] - ts[0]
    return h / 3.0 * (power[0] + power[-1] + 4.0 * power[1:-1:2].sum()
                      + 2.0 * power[2:-1:2].sum())


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_linear_maxwell_damper_is_the_maxwell_element(tmp_path, basis, scheme):
    """alpha = 1, u = u0 sin(w t): a damper with a spring in series and K_p, and a Maxwell
    link of the same k and c, on the same node. The damper's force less K_p u and its
    dashpot's elongation are the Maxwell link's to 1e-9 of the force's amplitude (both
    follow the step's path of u, one in closed form), and the Maxwell law's closed form
    within the scheme's accuracy (tests/test_maxwell.py); the energy balance closes."""
    require(basis, scheme, 1.0)
    link = maxwell_link(["P"], [1.0, 0.0, 0.0], K_MX, C_MX) + zener_link(["P"], 1.0,
                                                                         parallel=KP)
    data = run(tmp_path, harmonic_study(basis, scheme, link, ("mx", "dp")))["a"]
    t = data["time"]
    u = U0 * np.sin(W * t)
    branch = data["links/dp/force"] - KP * u
    scale = K_MX * U0
    same = np.max(np.abs(branch - data["links/mx/force"])) / scale
    same_e = np.max(np.abs(data["links/dp/dashpot_elongation"]
                           - data["links/mx/dashpot_elongation"])) / U0
    closed = np.max(np.abs(branch - harmonic_force(t)[1])) / scale
    bound = ACCURACY[(basis, scheme)].bound(max(W, 1.0 / TAU), HARMONIC_END, HARMONIC_STEP)
    print(f"{basis} {scheme}: against the Maxwell link {same:.2e} (e {same_e:.2e}), against "
          f"the closed form {closed:.2e} (bound {bound:.2e})")
    assert same < 1e-9 and same_e < 1e-9
    assert closed < bound
    assert balance_error(data, energy_scale(data)) < 2 * bound


def harmonic_reference(alpha, t, parallel=0.0):
    """(force, dashpot elongation, dissipated energy) under u = u0 sin(w t) from rest:
    y' = u'(t) - g(k y), D' = k y g(k y), by solve_ivp to 1e-12."""
    c = DAMPING[alpha]

    def rates(s, z):
        rate = (dashpot_rate(K * z[0], alpha, c))
        return [U0 * W * math.cos(W * s) - rate, K * z[0] * rate]

    sol = solve_ivp(rates, (0.0, t[-1]), [0.0, 0.0], method="DOP853", t_eval=t, rtol=1e-12,
                    atol=1e-18)
    assert sol.success
    y, lost = sol.y
    u = U0 * np.sin(W * t)
    return parallel * u + K * y, u - y, lost


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_power_law_zener_under_a_harmonic_elongation(tmp_path, basis, scheme):
    """alpha = 0.5, with K_p, u = u0 sin(w t): the force and the dashpot's elongation against
    solve_ivp to 2e-7 of their amplitudes (the link follows the step's cubic path of the
    imposed motion), the dissipated energy to 1e-7 of its last value (within its accuracy
    between the steps of an adaptive scheme: its dense output's); over the last cycle, the
    loop's area int F du is the energy dissipated plus the change of the stored one; the
    energy balance closes within the scheme's accuracy."""
    alpha = 0.5
    require(basis, scheme, alpha)
    data = run(tmp_path, harmonic_study(basis, scheme, zener_link(["P"], alpha, parallel=KP),
                                        ("dp",)))["a"]
    t = data["time"]
    force, e, lost = harmonic_reference(alpha, t, KP)
    errors = (np.max(np.abs(data["links/dp/force"] - force)) / np.max(np.abs(force)),
              np.max(np.abs(data["links/dp/dashpot_elongation"] - e)) / np.max(np.abs(e)),
              np.max(np.abs(data["energy/dissipated"] - lost)) / lost[-1])
    acc = ACCURACY[(basis, scheme)]
    bound = acc.bound(max(W, 1.0 / TAU), HARMONIC_END, HARMONIC_STEP)
    print(f"{basis} {scheme}: force {errors[0]:.2e}, e {errors[1]:.2e}, dissipated "
          f"{errors[2]:.2e}")
    assert errors[0] < 2e-7 and errors[1] < 2e-7, errors
    # the energies between the steps of an adaptive scheme are its dense output's
    assert errors[2] < (2 * bound if acc.adaptive else 1e-7), errors
    # the loop of the last cycle
    t1 = t[-1]
    t0 = t[np.argmin(np.abs(t - (t1 - PERIOD)))]
    i0, i1 = np.searchsorted(t, t0), len(t) - 1
    area = work_of(t, data["links/dp/force"], t0, t1)
    dissipated = data["energy/dissipated"][i1] - data["energy/dissipated"][i0]
    stored = data["energy/link_energy"][i1] - data["energy/link_energy"][i0]
    # t0 is a whole number of steps from t1: the cycle is PERIOD to within a step
    print(f"loop area {area:.6e} J, dissipated {dissipated:.6e} J, stored {stored:.3e} J")
    assert area == pytest.approx(dissipated + stored, rel=1e-6)
    assert dissipated > 0.5 * area > 0.0
    assert balance_error(data, energy_scale(data)) < 2 * bound


# ------------------------------------------------------------------------------------------
# 3. a mass on a Zener element, released from a displacement
MASS, X0 = 1.0, 0.01                       # kg, m
K_B, K_P = 4.0e3, 1.0e3                    # N/m: the spring in series, the one in parallel
#: c (N (s/m)^alpha): the dashpot's force at 0.7 m/s, the largest velocity, about k x0
RELEASE_DAMPING = {0.5: 50.0, 1.0: 40.0, 1.5: 68.0}
RELEASE_END = 0.5
OMEGA = math.sqrt((K_B + K_P) / MASS)      # rad/s, the fastest rate of the motion


def release_study(basis, scheme, alpha, step):
    """Node P (DX only), its mass on the element to the ground, released from x0 at rest
    (the spring in series takes x0: the dashpot cannot move in no time)."""
    link = zener_link(["P"], alpha, parallel=K_P, stiffness=K_B,
                      damping=RELEASE_DAMPING[alpha])
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {MASS!r}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r} }}
{link}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=RELEASE_END, step=step, links=("dp",))}
"""


def release_reference(alpha, t):
    """(x, force, dissipated): m x'' = -(K_p x + k y), y' = x' - g(k y), D' = k y g(k y),
    from x = y = x0, x' = 0, by solve_ivp to 1e-11."""
    c = RELEASE_DAMPING[alpha]

    def rates(s, z):
        x, v, y, _ = z
        rate = (dashpot_rate(K_B * y, alpha, c))
        return [v, -(K_P * x + K_B * y) / MASS, v - rate, K_B * y * rate]

    sol = solve_ivp(rates, (0.0, t[-1]), [X0, 0.0, X0, 0.0], method="DOP853", t_eval=t,
                    rtol=1e-11, atol=1e-15)
    assert sol.success
    x, _, y, lost = sol.y
    return x, K_P * x + K_B * y, lost


IMPLICIT = [key for key in ROWS if key[1] in ("newmark", "hht")]


@pytest.mark.parametrize("step", [1e-3, 1e-4])
@pytest.mark.parametrize("alpha", [0.5, 1.5])
@pytest.mark.parametrize("basis, scheme", IMPLICIT, ids=_ids(IMPLICIT))
def test_a_mass_released_on_a_zener_element(tmp_path, basis, scheme, alpha, step):
    """The implicit schemes' iterations converge with the law's derivatives (the run ends),
    at steps of 1 and 0.1 ms; the displacement and the force within the scheme's accuracy
    of solve_ivp, the energy balance within twice that."""
    require(basis, scheme, alpha)
    data = run(tmp_path, release_study(basis, scheme, alpha, step))["a"]
    t = data["time"]
    assert t[-1] == pytest.approx(RELEASE_END, abs=1e-12)
    x, force, lost = release_reference(alpha, t)
    bound = ACCURACY[(basis, scheme)].bound(OMEGA, RELEASE_END, step)
    errors = (np.max(np.abs(data["displacement"][:, 0] - x)) / X0,
              np.max(np.abs(data["links/dp/force"] - force)) / np.max(np.abs(force)),
              np.max(np.abs(data["energy/dissipated"] - lost)) / lost[-1])
    print(f"{basis} {scheme} alpha {alpha} step {step:g}: x {errors[0]:.2e}, force "
          f"{errors[1]:.2e}, dissipated {errors[2]:.2e}; bound {bound:.2e}")
    assert errors[0] < bound and errors[1] < bound, errors
    assert errors[2] < 2 * bound, errors
    assert data["links/dp/force"][0] == pytest.approx((K_B + K_P) * X0, rel=1e-12)
    assert balance_error(data, energy_scale(data)) < 2 * bound


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_a_mass_released_on_a_linear_zener_element(tmp_path, basis, scheme):
    """alpha = 1 in every scheme, the exact one included: against the matrix exponential of
    (x, v, e) (tests/test_maxwell.py, the parallel spring there a spring of the model): the
    displacement, the force K_p x + k (x - e), the dashpot's elongation and the energies (the
    parallel spring's in the link's) within the scheme's accuracy."""
    require(basis, scheme, 1.0)
    step = 2.5e-3
    data = run(tmp_path, release_study(basis, scheme, 1.0, step))["a"]
    t = data["time"]
    ref, rate = free_reference([MASS], [[K_P]], [1.0], K_B, RELEASE_DAMPING[1.0], [X0], [0.0],
                               t)
    bound = ACCURACY[(basis, scheme)].bound(rate, RELEASE_END, step)
    force = K_P * ref.x[:, 0] + ref.force
    stored = ref.energy["potential"] + ref.energy["link_energy"]
    scale = float(np.max(stored))
    errors = (np.max(np.abs(data["displacement"][:, 0] - ref.x[:, 0])) / X0,
              np.max(np.abs(data["links/dp/force"] - force)) / np.max(np.abs(force)),
              np.max(np.abs(data["links/dp/dashpot_elongation"] - ref.e)) / np.max(np.abs(ref.e)),
              np.max(np.abs(data["energy/link_energy"] - stored)) / scale,
              np.max(np.abs(data["energy/dissipated"] - ref.energy["dissipated"])) / scale)
    print(f"{basis} {scheme}: " + ", ".join(f"{e:.2e}" for e in errors) + f"; bound {bound:.2e}")
    assert max(errors[:3]) < bound, errors
    assert max(errors[3:]) < 2 * bound, errors
    assert balance_error(data, scale) < 2 * bound


# ------------------------------------------------------------------------------------------
# 4. the results group, the local integration's failure, input that validation refuses
def test_the_attributes_and_the_dashpot_elongation_without_stiffness(tmp_path):
    """The group carries `stiffness` and `parallel_stiffness` when given, besides the
    damper's own and `loop`; without `stiffness` the dashpot's elongation series is 0 (a
    series is declared per law)."""
    with_springs = attributes(tmp_path, release_study("physical", "newmark", 0.5, 1e-3))
    assert with_springs["stiffness"] == K_B and with_springs["parallel_stiffness"] == K_P
    assert with_springs["exponent"] == 0.5 and list(with_springs["loop"]) == ["elongation",
                                                                               "force"]
    series_only = zener_link(["P"], 0.5, stiffness=K_B, damping=RELEASE_DAMPING[0.5])
    text = release_study("physical", "newmark", 0.5, 1e-3)
    maxwell_only = text.replace(f"parallel_stiffness = {K_P!r}\n", "")
    assert series_only in maxwell_only
    found = attributes(tmp_path, maxwell_only)
    assert found["stiffness"] == K_B and "parallel_stiffness" not in found
    # a dashpot alone brakes a moving mass
    alone = maxwell_only.replace(f"stiffness = {K_B!r}\n", "").replace(
        f"displacement = {{ DX = {X0!r} }}", "velocity = { DX = 0.5 }")
    found = attributes(tmp_path, alone)
    assert "stiffness" not in found and "parallel_stiffness" not in found
    data = run(tmp_path, alone)["a"]
    assert np.all(data["links/dp/dashpot_elongation"] == 0.0)
    assert np.max(np.abs(data["links/dp/force"])) > 0.0


def test_the_local_integration_fails_loudly():
    """The law's integration of the series branch over a step: bounded in sub-steps, it
    returns NaN (the force is NaN, which stops the run) and says it failed once the bound is
    reached; within it, a step of twenty relaxation times ends on the relaxed branch."""
    from fem.laws import damper

    c, alpha = DAMPING[0.5], 0.5
    args = (K, c, alpha, VR, U0, U0, 0.0, U0, 0.0, 0.5)
    y, dy_du, dy_dv, work, top, tries, ok = damper.branch(*args, 0.0, 3)
    assert not ok and math.isnan(y) and tries == 3
    y, dy_du, dy_dv, work, top, tries, ok = damper.branch(*args, 0.0, damper.MAX_SUBSTEPS)
    assert ok and 3 < tries < damper.MAX_SUBSTEPS
    # t(F) = c^2 / k (1 / F - 1 / F0) for alpha = 1/2 (the linear range is far below)
    f = 1.0 / (1.0 / (K * U0) + K * 0.5 / c ** 2)
    assert K * y == pytest.approx(f, rel=1e-9)
    assert work == 0.0 and top == U0


VALID = release_study("physical", "newmark", 0.5, 1e-3)
LINK = zener_link(["P"], 0.5, parallel=K_P, stiffness=K_B, damping=RELEASE_DAMPING[0.5])


def edit(old, new, text=VALID):
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


BAD = [
    ("parallel_without_series", edit(f"stiffness = {K_B!r}\n", ""),
     ["link[1].parallel_stiffness", "needs `stiffness`"]),
    ("zero_stiffness", edit(f"\nstiffness = {K_B!r}", "\nstiffness = 0.0"),
     ["link[1].stiffness"]),
    ("negative_stiffness", edit(f"\nstiffness = {K_B!r}", "\nstiffness = -4000.0"),
     ["link[1].stiffness"]),
    ("zero_parallel", edit(f"parallel_stiffness = {K_P!r}", "parallel_stiffness = 0.0"),
     ["link[1].parallel_stiffness"]),
    ("negative_parallel", edit(f"parallel_stiffness = {K_P!r}", "parallel_stiffness = -1.0"),
     ["link[1].parallel_stiffness"]),
    ("text_stiffness", edit(f"\nstiffness = {K_B!r}", '\nstiffness = "stiff"'),
     ["link[1].stiffness"]),
]


def test_the_valid_study_runs(tmp_path):
    assert LINK in VALID
    (tmp_path / "study.toml").write_text(VALID)
    assert main(["run", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r.h5")]) == 0


@pytest.mark.parametrize("text, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_keys_are_refused(tmp_path, capsys, text, expected):
    """``fem run`` exits with code 2 and one error line naming the key, no results file; the
    study reader raises a StudyError that names it."""
    from fem.study import load_study

    study = tmp_path / "study.toml"
    study.write_text(text)
    out = tmp_path / "results.h5"
    code = main(["run", str(study), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_INVALID, captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    for piece in expected:
        assert piece in lines[0], f"{piece!r} not in {lines[0]!r}"
    assert not out.exists()
    with pytest.raises(StudyError) as caught:
        load_study(study)
    for piece in expected:
        assert piece in str(caught.value)


def test_the_exact_scheme_refuses_a_power_law_branch_with_the_catalogs_reason(tmp_path,
                                                                              capsys):
    text = release_study("physical", "exact", 0.5, 1e-3)
    (tmp_path / "study.toml").write_text(text)
    code = main(["run", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r.h5")])
    err = capsys.readouterr().err
    assert code != 0
    reason = catalog.SCHEMES[("physical", "exact")].reason("damper.series")
    assert "link[1].exponent" in err and reason in err, err
