"""Anti-seismic devices (``kind = "isolator"``, ``device = "anti_seismic"``, code_aster's
ANTI_SISM) against solutions written here, in every scheme and on both bases of the catalog
that offer them:

* an imposed cycle d = U sin(w t): the force, its elastic and dashpot parts against the
  formula F = K2 d + (K1 - K2) d / sqrt(1 + (K1 d / F_y)^2) + C sgn(v) |v d / d_max|^alpha at
  the imposed d and v;
* the dashpot's energy per cycle: scipy's quadrature of F_c v over a cycle, and its closed
  form through Euler's Beta function, against the link's ``dissipated`` series; the energy
  balance of the run;
* a free vibration of a mass on the device: the displacement against scipy's solve_ivp of
  m x'' = -F(x, x'), the link's stored energy against the integral of the elastic force in
  closed form, and the energy balance;
* input that validation refuses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp
from scipy.special import beta

from fem import catalog
from test_maxwell import (ACCURACY, ROWS, _ids, assert_refused, imposed_study, modes, run,
                          transient)

K1, K2, FY = 1.0e5, 1.0e4, 1.0e3        # N/m, N/m, N: the elastic part yields about 0.01 m
C, ALPHA, DMAX = 2.0e4, 0.5, 0.05        # N / (m/s)^alpha, 1, m
TRANSIENT = [key for key in ROWS if key[1] != "exact"]


def require(basis, scheme):
    row = catalog.SCHEMES[(basis, scheme)]
    assert row.offers("isolator.anti_seismic"), (basis, scheme,
                                                 row.reason("isolator.anti_seismic"))


def device(nodes=("P",), name="as", extra=""):
    quoted = ", ".join(f'"{n}"' for n in nodes)
    return (f'[[link]]\nkind = "isolator"\ndevice = "anti_seismic"\nname = "{name}"\n'
            f"nodes = [{quoted}]\ndirection = [1.0, 0.0, 0.0]\ninitial_stiffness = {K1!r}\n"
            f"final_stiffness = {K2!r}\nyield_force = {FY!r}\ndamping = {C!r}\n"
            f"exponent = {ALPHA!r}\nmax_elongation = {DMAX!r}\n{extra}")


def elastic_force(d):
    return K2 * d + (K1 - K2) * d / np.sqrt(1.0 + (K1 * d / FY) ** 2)


def dashpot_force(d, v):
    return C * np.sign(v) * np.abs(v * d / DMAX) ** ALPHA


def stored(d):
    """int_0^d of the elastic force, in closed form."""
    return 0.5 * K2 * d ** 2 + (K1 - K2) * (FY / K1) ** 2 * (np.sqrt(1.0 + (K1 * d / FY) ** 2)
                                                            - 1.0)


# ------------------------------------------------------------------------------------------
# 1. an imposed cycle
U, W = 0.04, math.pi                     # m, rad/s: the period 2 s, the peak speed 0.126 m/s
PERIOD = 2.0 * math.pi / W


def cycle_study(basis, scheme, cycles=2, per_period=1000):
    step = PERIOD / per_period
    text = imposed_study(basis, scheme, imposed=f'DX = {U!r}\nfunction = "drive"',
                         end=cycles * PERIOD, step=step,
                         functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n',
                         link=device(), links=("as",))
    if ACCURACY[(basis, scheme)].adaptive:
        # the imposed motion moves no free dof that the step control would follow: the steps
        # of Simpson's rule on the dashpot's work are bounded instead
        text = text.replace("tolerance = ", f"max_step = {step!r}\ntolerance = ")
    return text


def per_cycle():
    """The dashpot's energy over a cycle of d = U sin(w t): C (U w)^(1 + alpha)
    (U / d_max)^alpha int_0^T |cos w t|^(1 + alpha) |sin w t|^alpha dt, the integral 4 / w
    times int_0^(pi/2) cos^(1 + alpha) sin^alpha = B(1 + alpha / 2, (1 + alpha) / 2) / 2."""
    return (C * (U * W) ** (1 + ALPHA) * (U / DMAX) ** ALPHA * (2.0 / W)
            * beta(1.0 + ALPHA / 2.0, (1.0 + ALPHA) / 2.0))


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_force_and_dashpot_energy_under_an_imposed_cycle(tmp_path, basis, scheme):
    """The force and its parts at every archived instant against the formula at the imposed
    d = U sin(w t), v = U w cos(w t) (away from v = 0 and d = 0, where the dashpot's factors
    are linear below 1e-6 m/s and within 5e-8 m); the dashpot's work over the second cycle
    against scipy's quadrature of F_c v and the Beta function; the energy balance."""
    require(basis, scheme)
    data = run(tmp_path, cycle_study(basis, scheme))["a"]
    t = data["time"]
    d, v = U * np.sin(W * t), U * W * np.cos(W * t)
    assert np.max(np.abs(data["links/as/elongation"] - d)) < 1e-12
    power_law = (np.abs(v) > 1e-4) & (np.abs(d) > 1e-4)
    assert power_law.sum() > 0.95 * t.size
    scale = float(np.max(np.abs(elastic_force(d) + dashpot_force(d, v))))
    for name, expect in (("elastic_force", elastic_force(d)),
                         ("dashpot_force", dashpot_force(d, v)),
                         ("force", elastic_force(d) + dashpot_force(d, v))):
        err = np.max(np.abs(data[f"links/as/{name}"][power_law] - expect[power_law]))
        print(f"{name}: {err / scale:.2e}")
        assert err < 1e-9 * scale, name
    # everywhere, the regularized factors stay within their own bound of the power law
    assert np.max(np.abs(data["links/as/force"] - elastic_force(d) - dashpot_force(d, v))) \
        < C * (1e-6 ** ALPHA * (U / DMAX) ** ALPHA + 1e-6 ** ALPHA * (U * W) ** ALPHA)

    def power(s):
        dd, vv = U * math.sin(W * s), U * W * math.cos(W * s)
        return float(dashpot_force(dd, vv) * vv)
    points = [PERIOD / 4 * k for k in range(1, 4)]
    quadrature = quad(power, 0.0, PERIOD, points=points, limit=200, epsabs=0.0,
                      epsrel=1e-12)[0]
    assert quadrature == pytest.approx(per_cycle(), rel=1e-9)
    dissipated = data["links/as/dissipated"]
    work = dissipated[-1] - np.interp(PERIOD, t, dissipated)
    print(f"dashpot work {work:.9f} J, quadrature {quadrature:.9f} J")
    assert work == pytest.approx(quadrature, rel=1e-4)
    # the energy balance: the support's work, stored and dissipated. The run's support work
    # is the trapezoidal rule on F v, whose error where d crosses 0 (F_c ~ |t|^alpha there)
    # is h C (U w)^(1 + alpha) (U w h / d_max)^alpha / 6 for alpha = 1/2, at each of the 4
    # crossings (and the start) of two cycles
    total = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
             + data["energy/dissipated"] - data["energy/external_work"])
    h = PERIOD / 1000
    crossing = h * C * (U * W) ** (1 + ALPHA) * (U * W * h / DMAX) ** ALPHA / 6.0
    print(f"balance {np.max(np.abs(total - total[0])):.3e} J, crossings' bound "
          f"{5 * crossing:.3e} J")
    assert np.max(np.abs(total - total[0])) < 3.0 * 5 * crossing
    assert np.max(np.abs(data["energy/link_energy"] - stored(d))) < 1e-9 * stored(U)


def test_fem_post_hysteresis_reads_the_dashpots_loop(tmp_path):
    """The device's loop (elongation, force): each cycle's area is the dashpot's work, the
    elastic part enclosing none; against the closed form (newmark)."""
    import textwrap

    import postpro
    from postpro.jobs import hysteresis
    from fem.runner import run_study

    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(cycle_study("physical", "newmark", cycles=3)))
    out = tmp_path / "study.h5"
    assert run_study(path, out).failed_analysis is None
    with postpro.open(out) as results:
        loops = hysteresis.link_loops(results.analysis("a"), "as")
        assert loops.series == ("elongation", "force")
        assert len(loops.cycles) == 2
        for cycle in loops.cycles:
            assert cycle.area == pytest.approx(per_cycle(), rel=1e-3)
            assert cycle.dissipated == pytest.approx(per_cycle(), rel=1e-4)


# ------------------------------------------------------------------------------------------
# 2. free vibration of a mass on the device
M, X0 = 10.0, 0.03                      # kg, m: w = sqrt(K1 / m) = 100 rad/s at first
END, STEP = 0.3, 1e-4


def free_study(basis, scheme):
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {M!r}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r} }}
{device()}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=END, step=STEP, links=("as",))}
"""


def free_reference(times):
    """m x'' = -F(x, x') from x0 at rest, by solve_ivp (the power law: its slope is infinite
    at v = 0, which an adaptive Runge-Kutta pair steps over)."""
    def rhs(_, y):
        return [y[1], -(elastic_force(y[0]) + dashpot_force(y[0], y[1])) / M]
    sol = solve_ivp(rhs, (0.0, times[-1]), [X0, 0.0], method="DOP853", t_eval=times,
                    rtol=1e-11, atol=1e-13)
    assert sol.success
    return sol.y[0], sol.y[1]


@pytest.mark.parametrize("basis, scheme", TRANSIENT, ids=_ids(TRANSIENT))
def test_free_vibration_on_the_device(tmp_path, basis, scheme):
    """The displacement against solve_ivp (to 2e-4 of the amplitude: the fixed steps make
    w h = 0.01 at most, a phase error of (w h)^2 / 12 per radian over the 30 radians of the
    run's elastic range at most, the motion decaying well before), the stored energy against
    its closed form at the archived elongation, the link's dissipated series against the
    reference's lost energy and against the run's, and the energy balance."""
    require(basis, scheme)
    data = run(tmp_path, free_study(basis, scheme))["a"]
    t = data["time"]
    x_ref, v_ref = free_reference(t)
    x = data["links/as/elongation"]
    err = float(np.max(np.abs(x - x_ref)) / X0)
    print(f"displacement {err:.2e}")
    assert err < 2e-4
    assert np.max(np.abs(data["energy/link_energy"] - stored(x))) < 1e-9 * stored(X0)
    dissipated = data["links/as/dissipated"]
    lost = stored(X0) - 0.5 * M * v_ref ** 2 - stored(x_ref)
    print(f"dissipated {dissipated[-1]:.6f} J, reference {lost[-1]:.6f} J")
    assert lost[-1] > 0.05 * stored(X0)
    assert np.max(np.abs(dissipated - lost)) < 5e-4 * stored(X0)
    # (the Runge-Kutta schemes take energy/dissipated from their own quadrature of the
    # link's work, whose first step meets the dashpot's |v|^alpha at rest)
    assert np.max(np.abs(dissipated - data["energy/dissipated"])) < 5e-4 * stored(X0)
    total = data["energy/kinetic"] + data["energy/link_energy"] + data["energy/dissipated"]
    print(f"balance {np.max(np.abs(total - total[0])) / stored(X0):.2e}")
    assert np.max(np.abs(total - total[0])) < 1e-3 * stored(X0)


# ------------------------------------------------------------------------------------------
# 3. what validation refuses
VALID = free_study("physical", "newmark")
LINK = device()


def with_link(new):
    assert VALID.count(LINK) == 1
    return VALID.replace(LINK, new)


BAD = [
    ("missing_k1", LINK.replace(f"initial_stiffness = {K1!r}\n", ""),
     ["link[1].initial_stiffness", "missing"]),
    ("zero_k1", LINK.replace(f"initial_stiffness = {K1!r}", "initial_stiffness = 0.0"),
     ["link[1].initial_stiffness"]),
    ("negative_k2", LINK.replace(f"final_stiffness = {K2!r}", "final_stiffness = -1.0"),
     ["link[1].final_stiffness"]),
    ("zero_yield", LINK.replace(f"yield_force = {FY!r}", "yield_force = 0.0"),
     ["link[1].yield_force"]),
    ("tiny_yield", LINK.replace(f"yield_force = {FY!r}", "yield_force = 1e-310"),
     ["link[1].yield_force", "not a finite"]),
    ("negative_damping", LINK.replace(f"damping = {C!r}", "damping = -1.0"),
     ["link[1].damping"]),
    ("zero_exponent", LINK.replace(f"exponent = {ALPHA!r}", "exponent = 0.0"),
     ["link[1].exponent"]),
    ("large_exponent", LINK.replace(f"exponent = {ALPHA!r}", "exponent = 3.0"),
     ["link[1].exponent"]),
    ("zero_max_elongation", LINK.replace(f"max_elongation = {DMAX!r}", "max_elongation = 0.0"),
     ["link[1].max_elongation"]),
    ("missing_direction", LINK.replace("direction = [1.0, 0.0, 0.0]\n", ""),
     ["link[1].direction", "missing"]),
    ("zero_linear_below", LINK + "linear_below = 0.0\n", ["link[1].linear_below"]),
    ("negative_linear_within", LINK + "linear_within = -1.0\n", ["link[1].linear_within"]),
    ("pendulum_key", LINK + "radius = 1.0\n", ["link[1]", "unknown key 'radius'"]),
]


def test_the_valid_study_runs(tmp_path):
    run(tmp_path, VALID)


@pytest.mark.parametrize("link, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_device_is_refused(tmp_path, capsys, link, expected):
    assert_refused(tmp_path, capsys, with_link(link), expected)


# ------------------------------------------------------------------------------------------
# 4. the elastic part alone (C = 0): its force follows from the elongation alone
ELASTIC = [("physical", "central_difference"), ("physical", "newmark"), ("modal", "rk54")]


@pytest.mark.parametrize("basis, scheme", ELASTIC, ids=_ids(ELASTIC))
def test_free_vibration_on_the_elastic_part_alone(tmp_path, basis, scheme):
    """Without a dashpot the device is a nonlinear elastic spring (central differences then
    take their direct step, no Newton iteration): the motion against solve_ivp of
    m x'' = -F_e(x), nothing dissipated, the energy kept."""
    text = free_study(basis, scheme).replace(f"damping = {C!r}\n", "damping = 0.0\n")
    data = run(tmp_path, text)["a"]
    t = data["time"]

    def rhs(_, y):
        return [y[1], -elastic_force(y[0]) / M]
    ref = solve_ivp(rhs, (0.0, t[-1]), [X0, 0.0], method="DOP853", t_eval=t, rtol=1e-12,
                    atol=1e-14)
    err = float(np.max(np.abs(data["links/as/elongation"] - ref.y[0])) / X0)
    print(f"displacement {err:.2e}")
    assert err < 2e-3
    assert np.max(np.abs(data["links/as/dissipated"])) == 0.0
    assert np.max(np.abs(data["links/as/dashpot_force"])) == 0.0
    total = data["energy/kinetic"] + data["energy/link_energy"]
    assert np.max(np.abs(total - stored(X0))) < 2e-3 * stored(X0)


# ------------------------------------------------------------------------------------------
# 5. many devices: the Newmark family's Newton iteration on the whole system
MANY = 20
NEWMARK = [("physical", "newmark"), ("physical", "hht"), ("physical", "central_difference")]


@pytest.mark.parametrize("basis, scheme", NEWMARK, ids=_ids(NEWMARK))
def test_many_devices_take_the_whole_systems_newton_iteration(tmp_path, basis, scheme):
    """Twenty masses, each on its device to the ground (``axial`` links that always act: the
    Newmark family iterates on the whole system with their tangent in its step matrix),
    released from twenty initial displacements: each against its own solve_ivp."""
    nodes = "\n".join(f"N{i} = [{float(i)!r}, 0.0, 0.0]" for i in range(MANY))
    starts = [X0 * (i + 1) / MANY for i in range(MANY)]
    blocks = "".join(
        f'[[discrete]]\nnodes = ["N{i}"]\nmass = {M!r}\n'
        f'[[initial]]\nnodes = ["N{i}"]\ndisplacement = {{ DX = {x0!r} }}\n'
        + device((f"N{i}",), name=f"as{i}") for i, x0 in enumerate(starts))
    text = f"""
[mesh.nodes]
{nodes}
[model]
components = ["DX"]
{blocks}
{transient(basis, scheme, end=0.1, step=STEP, links=tuple(f"as{i}" for i in range(MANY)))}
"""
    data = run(tmp_path, text)["a"]
    t = data["time"]

    def rhs(_, y):
        return [y[1], -(elastic_force(y[0]) + dashpot_force(y[0], y[1])) / M]
    worst = 0.0
    for i, x0 in enumerate(starts):
        ref = solve_ivp(rhs, (0.0, t[-1]), [x0, 0.0], method="DOP853", t_eval=t, rtol=1e-11,
                        atol=1e-13)
        worst = max(worst, float(np.max(np.abs(data[f"links/as{i}/elongation"] - ref.y[0]))
                                 / x0))
    print(f"worst displacement error {worst:.2e}")
    assert worst < 2e-4
