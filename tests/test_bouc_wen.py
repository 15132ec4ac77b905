"""Bouc-Wen links (``kind = "bouc_wen"``) against closed forms and integrations written here,
in every scheme of the catalog that offers them, on both bases.

The law, along a unit direction n (u = n . (u(first) - u(second))):

    F = alpha k0 u + (1 - alpha) k0 z,
    z' = (A u' - nu (beta |u'| |z|^(n-1) z + gamma u' |z|^n)) / eta,
    e' = (1 - alpha) k0 z u',
    A = A0 - delta_A e,  nu = 1 + delta_nu e,  eta = 1 + delta_eta e.

Without degradation z is a function of the path of u: from z = 0 under a monotonic loading
(s = beta + gamma)

    n = 1:  z = (A / s) (1 - exp(-s u)),
    n = 2:  z = sqrt(A / s) tanh(sqrt(A s) u),

and unloading from a point (U, z_p) of that curve (n = 1) follows dz/du = A - s' z with
s' = gamma - beta while z > 0,

    z = A / s' + (z_p - A / s') exp(-s' (u - U)),

down to z = 0 at u_c, beyond which it is the monotonic loading curve of the other sign from
(u_c, 0): z = -(A / s) (1 - exp(s (u - u_c))).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fem import catalog
from fem.cli import main
from fem.errors import NotAvailableError
from fem.runner import run_study
from test_maxwell import ROWS, _ids, assert_refused, imposed_study, modes, run, transient

K0 = 1.0e4                  # N/m
ALPHA = 0.1
ZB = 2.0e-3                 # m: the bound (A0 / (beta + gamma))^(1/n) of every link below
#: n = 1: beta + gamma = 1 / ZB, unloading s' = gamma - beta = -300 1/m
B1, G1 = 400.0, 100.0
#: n = 2: beta + gamma = 1 / ZB^2
B2, G2 = 1.5e5, 1.0e5
#: n = 1.5, with degradation (1/J)
N_WORN = 1.5
B_WORN, G_WORN = 0.7 / ZB ** N_WORN, 0.3 / ZB ** N_WORN
WORN = dict(delta_A=0.3, delta_nu=0.5, delta_eta=0.5)

OFFERING = [key for key in ROWS if catalog.SCHEMES[key].offers("bouc_wen")]


def bouc_wen_link(name, nodes, n, beta, gamma, *, k0=K0, alpha=ALPHA, **extra):
    """A [[link]] block of kind "bouc_wen" along X."""
    quoted = ", ".join(f'"{node}"' for node in nodes)
    lines = [f'[[link]]\nkind = "bouc_wen"\nname = "{name}"\nnodes = [{quoted}]',
             "direction = [1.0, 0.0, 0.0]", f"k0 = {k0!r}", f"alpha = {alpha!r}",
             f"n = {n!r}", f"beta = {beta!r}", f"gamma = {gamma!r}"]
    lines += [f"{key} = {value!r}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def test_every_scheme_but_the_exact_one_offers_bouc_wen_links():
    for key, row in catalog.SCHEMES.items():
        if key[1] == "exact":
            assert not row.offers("bouc_wen")
            assert "not linear" in row.reason("bouc_wen")
        else:
            assert row.offers("bouc_wen"), key


def test_the_exact_scheme_refuses_them(tmp_path):
    text = imposed_study("physical", "exact", imposed="DX = 0.0", end=0.01, step=1e-3,
                         link=bouc_wen_link("bw", ["P"], 1.0, B1, G1), links=("bw",))
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(NotAvailableError) as caught:
        run_study(tmp_path / "s.toml", tmp_path / "s.h5")
    assert "Bouc-Wen hysteresis (link[1].kind, link 'bw') cannot run with scheme 'exact'" \
        in str(caught.value)


# ------------------------------------------------------------------------------------------
# closed forms
def loading(u, n, beta, gamma):
    """z on the virgin loading curve at u >= 0 (A = 1, no degradation)."""
    s = beta + gamma
    if n == 1.0:
        return (1.0 - np.exp(-s * u)) / s
    return np.tanh(math.sqrt(s) * u) / math.sqrt(s)


def loading_energy(u, n, beta, gamma):
    """e = (1 - alpha) k0 int_0^u z du on the virgin loading curve."""
    s = beta + gamma
    if n == 1.0:
        return (1.0 - ALPHA) * K0 * (u - (1.0 - np.exp(-s * u)) / s) / s
    return (1.0 - ALPHA) * K0 * np.log(np.cosh(math.sqrt(s) * u)) / s


def half_cycle(u, t, peak, period):
    """z (n = 1, beta B1, gamma G1) along u = U sin(w t), 0 <= t <= period / 2: loading to
    (U, z_p), unloading with s' = G1 - B1 down to z = 0 at u_c, then loading of the other
    sign."""
    s, s1 = B1 + G1, G1 - B1
    zp = loading(peak, 1.0, B1, G1)
    uc = peak - math.log((-1.0 / s1) / (zp - 1.0 / s1)) / s1
    unloading = 1.0 / s1 + (zp - 1.0 / s1) * np.exp(-s1 * (u - peak))
    negative = -(1.0 - np.exp(s * (u - uc))) / s
    z = np.where(u < uc, negative, unloading)
    return np.where(t <= period / 4, loading(u, 1.0, B1, G1), z), uc


def test_the_closed_forms_solve_the_rate_equation():
    """The closed forms above against solve_ivp of dz/du along the same path."""
    u = np.linspace(0.0, 5e-3, 11)
    for n, beta, gamma in ((1.0, B1, G1), (2.0, B2, G2)):
        sol = solve_ivp(lambda x, y: [1.0 - (beta + gamma) * abs(y[0]) ** n], (0.0, u[-1]),
                        [0.0], t_eval=u, rtol=1e-12, atol=1e-16)
        assert np.max(np.abs(sol.y[0] - loading(u, n, beta, gamma))) < 1e-10 * ZB
    peak, period = 4e-3, 1.0
    t = np.linspace(period / 4, period / 2, 2001)
    u = peak * np.sin(2 * math.pi * t / period)
    z, uc = half_cycle(u, t, peak, period)
    assert 0.0 < uc < peak and z[-1] < 0.0 < z[0]
    # dz/du = 1 - beta s |z|^0 z - gamma |z| with s = -1 (u decreasing)
    sol = solve_ivp(lambda x, y: [1.0 + B1 * y[0] - G1 * abs(y[0])], (peak, 0.0),
                    [z[0]], t_eval=u, rtol=1e-12, atol=1e-16)
    assert np.max(np.abs(sol.y[0] - z)) < 1e-10 * ZB


# ------------------------------------------------------------------------------------------
# imposed elongations
RATE = 0.1                  # m/s: the ramp
RAMP_END = 0.05             # s: u up to 5 mm = 2.5 ZB
U0 = 4.0e-3                 # m: the sine's amplitude, 2 ZB
PERIOD = 0.2                # s
W = 2.0 * math.pi / PERIOD
CYCLES = 3


def ramp_study(basis, scheme):
    """Node P's DX imposed, u = RATE t, two links from P to the ground: n = 1 and n = 2."""
    links = (bouc_wen_link("one", ["P"], 1.0, B1, G1)
             + bouc_wen_link("two", ["P"], 2.0, B2, G2))
    return imposed_study(basis, scheme, imposed=f'DX = {RATE!r}\nfunction = "ramp"',
                         end=RAMP_END, step=RAMP_END / 200,
                         functions='[functions.ramp]\nexpression = "t"\n', link=links,
                         links=("one", "two"))


@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_monotonic_loading_under_a_ramp(tmp_path, basis, scheme):
    """z, the force and the hysteretic energy on the loading curves of n = 1 and n = 2; the
    dissipated energy is the hysteretic work less what z stores, (1 - alpha) k0 z^2 / 2."""
    data = run(tmp_path, ramp_study(basis, scheme))["a"]
    t = data["time"]
    u = RATE * t
    for name, n, beta, gamma in (("one", 1.0, B1, G1), ("two", 2.0, B2, G2)):
        z = loading(u, n, beta, gamma)
        e = loading_energy(u, n, beta, gamma)
        assert np.max(np.abs(data[f"links/{name}/elongation"] - u)) < 1e-12 * u[-1]
        assert np.max(np.abs(data[f"links/{name}/z"] - z)) < 1e-9 * ZB, name
        force = ALPHA * K0 * u + (1.0 - ALPHA) * K0 * z
        assert np.max(np.abs(data[f"links/{name}/force"] - force)) < 1e-9 * force[-1], name
        assert np.max(np.abs(data[f"links/{name}/hysteretic_energy"] - e)) < 1e-9 * e[-1]
        lost = e - (1.0 - ALPHA) * K0 * z ** 2 / 2.0
        assert np.max(np.abs(data[f"links/{name}/dissipated"] - lost)) < 1e-8 * lost[-1]


def sine_study(basis, scheme):
    """Node P's DX imposed, u = U0 sin(w t) over CYCLES periods, two links from P to the
    ground: "plain" (n = 1) and "worn" (n = 1.5, with degradation)."""
    links = (bouc_wen_link("plain", ["P"], 1.0, B1, G1)
             + bouc_wen_link("worn", ["P"], N_WORN, B_WORN, G_WORN, **WORN))
    return imposed_study(basis, scheme, imposed=f'DX = {U0!r}\nfunction = "drive"',
                         end=CYCLES * PERIOD, step=PERIOD / 400,
                         functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n',
                         link=links, links=("plain", "worn"))


def worn_reference(t):
    """z and e of the "worn" link along u = U0 sin(w t): solve_ivp of the rate equations in
    time, cut where u' changes sign and where z does (the right-hand side is not smooth
    there)."""
    n, beta, gamma = N_WORN, B_WORN, G_WORN
    hk = (1.0 - ALPHA) * K0

    def rates(time, y):
        z, e = y
        rate = U0 * W * math.cos(W * time)
        a = 1.0 - WORN["delta_A"] * e
        nu = 1.0 + WORN["delta_nu"] * e
        eta = 1.0 + WORN["delta_eta"] * e
        m = abs(z)
        return [(a * rate - nu * (beta * abs(rate) * m ** (n - 1.0) * z + gamma * rate * m ** n))
                / eta, hk * z * rate]

    def crossing(time, y):
        return y[0]

    crossing.terminal = True
    cuts = [PERIOD / 4 + k * PERIOD / 2 for k in range(2 * CYCLES)] + [t[-1]]
    start, y = 0.0, np.zeros(2)
    pieces = []
    for cut in cuts:
        while start < cut:
            sol = solve_ivp(rates, (start, cut), y, method="DOP853", rtol=1e-12, atol=1e-18,
                            dense_output=True, events=crossing if y[0] != 0.0 else None)
            pieces.append((start, sol.t[-1], sol.sol))
            start, y = sol.t[-1], sol.y[:, -1].copy()
            if sol.status == 1:
                y[0] = 0.0
    z, e = np.empty_like(t), np.empty_like(t)
    for i, time in enumerate(t):
        for a, b, dense in pieces:
            if a <= time <= b:
                z[i], e[i] = dense(time)
                break
    return z, e


@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_cycles_under_an_imposed_sine(tmp_path, basis, scheme):
    """"plain": over the first half period, loading, unloading through z = 0 and loading of
    the other sign against the closed forms; over the last period, the energy it dissipates
    is the area of its loop, oint F du (trapezoidal rule on the archive). "worn": z, e and
    the force against solve_ivp. The energy balance of the run closes: the work of the
    imposed motion is stored in the links or dissipated."""
    data = run(tmp_path, sine_study(basis, scheme))["a"]
    t = data["time"]
    u = U0 * np.sin(W * t)
    # loading, unloading, loading of the other sign
    first = t <= PERIOD / 2 * (1 + 1e-12)
    z, uc = half_cycle(u[first], t[first], U0, PERIOD)
    assert np.any(u[first][t[first] > PERIOD / 4] < uc)           # z changed sign
    assert np.max(np.abs(data["links/plain/z"][first] - z)) < 1e-9 * ZB
    force = ALPHA * K0 * u + (1.0 - ALPHA) * K0 * data["links/plain/z"]
    assert np.max(np.abs(data["links/plain/force"] - force)) < 1e-9 * np.max(np.abs(force))
    # the loop of the last period
    last = t >= t[-1] - PERIOD * (1.0 + 1e-9)
    f, x = data["links/plain/force"][last], data["links/plain/elongation"][last]
    area = float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x)))
    lost = data["links/plain/dissipated"]
    assert lost[last][-1] - lost[last][0] == pytest.approx(area, rel=1e-4)
    assert area > 0.5 * (1.0 - ALPHA) * K0 * ZB * U0
    # degradation
    z, e = worn_reference(t)
    assert np.max(np.abs(data["links/worn/z"] - z)) < 1e-9 * ZB
    assert np.max(np.abs(data["links/worn/hysteretic_energy"] - e)) < 1e-9 * e[-1]
    force = ALPHA * K0 * u + (1.0 - ALPHA) * K0 * z
    assert np.max(np.abs(data["links/worn/force"] - force)) < 1e-9 * np.max(np.abs(force))
    assert e[-1] * WORN["delta_A"] > 0.1                         # A lost over 10 %
    # the balance: every joule the support puts in is stored in the links or dissipated (to
    # the difference between the schemes' quadrature of the links' work and the laws' own
    # integral along the path: of order (w h)^2 / 12, 2e-5 here, for the Newmark family)
    work = data["energy/external_work"]
    held = data["energy/link_energy"] + data["energy/dissipated"]
    assert np.max(np.abs(work - held - data["energy/kinetic"] - data["energy/potential"])) \
        < 2e-4 * work[-1]
    assert data["energy/dissipated"][-1] == pytest.approx(
        lost[-1] + data["links/worn/dissipated"][-1], rel=1e-5)


# ------------------------------------------------------------------------------------------
# a free mass on a Bouc-Wen link
MASS, SPRING, X0 = 1.0, 400.0, 5.0e-3       # kg, N/m in parallel, m (2.5 ZB)
FREE_ALPHA = 0.2
FREE_END = 0.25                             # s: about four periods at sqrt(k0 / m)


def free_study(basis, scheme, step, *, n=1.0, beta=B1, gamma=G1, extra_analyses="", **keys):
    """Node P (1 kg on a spring of 400 N/m), a Bouc-Wen link to the ground in parallel,
    released from X0 (the link loaded along its virgin curve)."""
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {MASS!r}
stiffness = {SPRING!r}
[[initial]]
nodes = ["P"]
displacement = {{ DX = {X0!r} }}
{bouc_wen_link("bw", ["P"], n, beta, gamma, alpha=FREE_ALPHA, **keys)}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=FREE_END, step=step, links=("bw",))}
{extra_analyses}
"""


@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_a_free_mass_released_on_a_bouc_wen_link(tmp_path, basis, scheme):
    """It starts with the link on its virgin curve (F0 = alpha k0 x0 + (1 - alpha) k0 z(x0))
    and swings, the link dissipating more than half of its energy in four periods; the energy
    balance closes (the Newmark family and euler to 2e-3: their own quadrature of the link's
    work differs from the law's integral along the path by a term of order (w h)^2 / 12,
    w h = 0.1), and the link's dissipated energy never decreases."""
    data = run(tmp_path, free_study(basis, scheme, 1e-3))["a"]
    z0 = loading(X0, 1.0, B1, G1)
    force = data["links/bw/force"]
    assert force[0] == pytest.approx(FREE_ALPHA * K0 * X0 + (1 - FREE_ALPHA) * K0 * z0,
                                     rel=1e-10)
    assert data["links/bw/z"][0] == pytest.approx(z0, rel=1e-10)
    total = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
             + data["energy/dissipated"] - data["energy/external_work"])
    start = total[0]
    assert np.max(np.abs(total - start)) < 3e-3 * start, np.max(np.abs(total - start)) / start
    # the link has dissipated most of it: the motion has decayed
    assert data["energy/dissipated"][-1] > 0.5 * start
    lost = data["links/bw/dissipated"]
    assert np.all(np.diff(lost) > -1e-9 * lost[-1])


def free_reference(t, n, beta, gamma, delta_A, delta_nu, delta_eta):
    """(x, z): the free mass by solve_ivp, from the state of the link loaded from u = z = e = 0
    to X0 (integrated in u: the law is rate independent), cut where the velocity or z changes
    sign."""
    hk = (1.0 - FREE_ALPHA) * K0

    def parts(z, e, rate):
        a, nu, eta = 1.0 - delta_A * e, 1.0 + delta_nu * e, 1.0 + delta_eta * e
        m = abs(z)
        return (a * rate - nu * (beta * abs(rate) * m ** (n - 1.0) * z
                                 + gamma * rate * m ** n)) / eta, hk * z * rate

    virgin = solve_ivp(lambda u, y: parts(y[0], y[1], 1.0), (0.0, X0), [0.0, 0.0],
                       method="DOP853", rtol=1e-13, atol=1e-18)
    z0, e0 = virgin.y[:, -1]

    def rates(time, y):
        x, v, z, e = y
        dz, de = parts(z, e, v)
        return [v, -(SPRING * x + FREE_ALPHA * K0 * x + hk * z) / MASS, dz, de]

    def turn(time, y):
        return y[1]

    def crossing(time, y):
        return y[2]

    turn.terminal = crossing.terminal = True
    start, y = 0.0, np.array([X0, 0.0, z0, e0])
    pieces = []
    while start < t[-1]:
        # each event where its function comes back to zero, not where it leaves it
        slope = rates(start, y)
        turn.direction = -np.sign(y[1] if y[1] != 0.0 else slope[1])
        crossing.direction = -np.sign(y[2] if y[2] != 0.0 else slope[2])
        sol = solve_ivp(rates, (start, t[-1]), y, method="DOP853", rtol=1e-12, atol=1e-18,
                        dense_output=True, events=[turn, crossing])
        pieces.append((start, sol.t[-1], sol.sol))
        start, y = sol.t[-1], sol.y[:, -1].copy()
        if sol.status == 1:
            y[1 if len(sol.t_events[0]) else 2] = 0.0
    out = np.empty((len(t), 4))
    for i, time in enumerate(t):
        for a, b, dense in pieces:
            if a <= time <= b:
                out[i] = dense(time)
                break
    return out[:, 0], out[:, 2]


IMPLICIT = [key for key in OFFERING if key[1] in ("newmark", "hht")]
DEGRADING = dict(delta_A=2.0, delta_nu=2.0, delta_eta=1.0)


@pytest.mark.parametrize("basis, scheme", IMPLICIT, ids=_ids(IMPLICIT))
def test_the_implicit_schemes_converge(tmp_path, basis, scheme):
    """n = 2 with degradation: Newton's iterations converge with the law's derivatives at
    steps of 1 ms and 0.1 ms, and the displacement and z converge to solve_ivp's at the order
    of the schemes (2: an error 100 times smaller, at least 30)."""
    fine = transient(basis, scheme, end=FREE_END, step=1e-4, name="fine", links=("bw",))
    found = run(tmp_path, free_study(basis, scheme, 1e-3, n=2.0, beta=B2, gamma=G2,
                                     extra_analyses=fine, **DEGRADING))
    errors = []
    for name in ("a", "fine"):
        data = found[name]
        x, z = free_reference(data["time"], 2.0, B2, G2, **DEGRADING)
        assert data["links/bw/hysteretic_energy"][-1] * DEGRADING["delta_A"] > 0.05
        ex = np.max(np.abs(data["displacement"][:, 0] - x)) / X0
        ez = np.max(np.abs(data["links/bw/z"] - z)) / ZB
        errors.append(max(ex, ez))
    print(f"{basis} {scheme}: errors {errors[0]:.2e} at 1 ms, {errors[1]:.2e} at 0.1 ms")
    assert errors[0] < 0.05
    assert errors[1] < errors[0] / 30


# ------------------------------------------------------------------------------------------
# the law itself: its derivatives, and its failures
def law_arrays(n, beta, gamma, **keys):
    from fem import laws
    from fem.laws import bouc_wen

    p = dict(direction=(1.0, 0.0, 0.0), k0=K0, alpha=ALPHA, n=n, beta=beta, gamma=gamma,
             A0=1.0, delta_A=0.0, delta_nu=0.0, delta_eta=0.0)
    p.update(keys)
    row = bouc_wen.rows(p)[0][1]
    P = np.zeros((1, laws.NP))
    P[0, :row.size] = row
    return P, np.zeros((1, laws.NV)), np.zeros((1, laws.NV))


def force_of(P, cv_old, cv_new, u1, v1, h):
    """(F, dF/du1, dF/du1') of the one contact of P."""
    from fem.laws import bouc_wen

    phi, jd, jv = np.zeros(3), np.zeros((1, 3, 3)), np.zeros((1, 3, 3))
    d, dd = np.array([u1, 0.0, 0.0]), np.array([v1, 0.0, 0.0])
    bouc_wen.trial(P, 0, 0, d, dd, cv_old, cv_new, phi, jd, jv, True, h)
    return -phi[0], -jd[0, 0, 0], -jv[0, 0, 0]


@pytest.mark.parametrize("n, beta, gamma, keys", [
    (1.0, B1, G1, {}), (2.0, B2, G2, DEGRADING), (N_WORN, B_WORN, G_WORN, WORN),
    (6.0, 0.5 / ZB ** 6, 0.5 / ZB ** 6, {})], ids=["n1", "n2", "n1.5", "n6"])
def test_the_derivatives_are_those_of_the_force(n, beta, gamma, keys):
    """dF/du1 and dF/du1' against central differences, over steps whose path turns back
    (twice, through z = 0) and a step that does not (dF/du1' = 0: the law is rate
    independent)."""
    P, old, new = law_arrays(n, beta, gamma, **keys)
    from fem.laws.columns import EVOLVING, FTM, PDOT, PEN

    for u0, v0, u1, v1, z0 in ((1e-3, 2.0, 0.5e-3, 1.5, 0.8e-3), (0.0, -1.0, 1e-4, -2.0, 1e-4),
                               (0.0, 1.0, 1e-3, 1.0, -1e-3)):
        old[0, PEN], old[0, PDOT], old[0, EVOLVING], old[0, FTM] = u0, v0, z0, 0.02
        h = 1e-3
        f, dfdu, dfdv = force_of(P, old, new, u1, v1, h)
        assert np.isfinite(f)
        du, dv = 1e-9, 1e-6
        fd_u = (force_of(P, old, new, u1 + du, v1, h)[0]
                - force_of(P, old, new, u1 - du, v1, h)[0]) / (2 * du)
        fd_v = (force_of(P, old, new, u1, v1 + dv, h)[0]
                - force_of(P, old, new, u1, v1 - dv, h)[0]) / (2 * dv)
        assert dfdu == pytest.approx(fd_u, rel=1e-5)
        assert dfdv == pytest.approx(fd_v, rel=1e-5, abs=1e-7 * K0 * h)
        if v0 == v1 and u1 - u0 == v0 * h:
            assert dfdv == 0.0


def test_a_failed_local_integration_writes_nan():
    """A path the sub-steps cannot cover (its length far beyond MAX_SUBSTEPS of them) and a
    degradation that drives A to zero give a NaN force, never a value."""
    from fem.laws import bouc_wen

    P, old, new = law_arrays(1.0, B1, G1)
    # the rate bound is beta + |gamma| = 500 1/m: sub-steps of STEP_FRACTION / 500 m
    far = 2.0 * bouc_wen.MAX_SUBSTEPS * bouc_wen.STEP_FRACTION / 500.0
    assert math.isnan(force_of(P, old, new, far, 0.0, 0.0)[0])
    assert np.isfinite(force_of(P, old, new, far / 4.0, 0.0, 0.0)[0])
    # delta_A (1 - alpha) k0 ZB^2 = 36: e reaches 1 / delta_A = 1 mJ before u reaches ZB / 2
    # (e = (1 - alpha) k0 u^2 / 2 at first), and A 0 with z far from it (a milder
    # degradation lets A tend to zero without reaching it)
    P, old, new = law_arrays(1.0, B1, G1, delta_A=1000.0)
    assert math.isnan(force_of(P, old, new, 0.5 * ZB, 0.0, 0.0)[0])
    assert np.isfinite(force_of(P, old, new, 0.1 * ZB, 0.0, 0.0)[0])


def test_a_run_whose_degradation_consumes_the_link_stops(tmp_path):
    """A reaches zero: the run stops with an error. Under the imposed sine (nothing else
    moves) the check of the results names the link's force; a free mass released on such a
    link (A < 0 already on its way to the initial displacement) stops at its first step,
    naming the link and the law's reason."""
    link = bouc_wen_link("bw", ["P"], 1.0, B1, G1, delta_A=1000.0)
    text = imposed_study("physical", "newmark", imposed=f'DX = {U0!r}\nfunction = "drive"',
                         end=CYCLES * PERIOD, step=PERIOD / 400,
                         functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n',
                         link=link, links=("bw",))
    (tmp_path / "s.toml").write_text(text)
    report = run_study(tmp_path / "s.toml", tmp_path / "s.h5")
    assert report.failed_analysis == "a", report.message
    assert "'links/bw/force' is not finite" in report.message
    (tmp_path / "f.toml").write_text(free_study("physical", "newmark", 1e-3, delta_A=1000.0))
    report = run_study(tmp_path / "f.toml", tmp_path / "f.h5")
    assert report.failed_analysis == "a", report.message
    # the run's message names the link, the step and the law's reason
    assert "link 'bw' (bouc_wen): its law could not compute its force in the step ending at " \
        "t = 0.001 s" in report.message, report.message
    assert "hysteretic variable" in report.message


# ------------------------------------------------------------------------------------------
# input that validation refuses
VALID = free_study("physical", "newmark", 1e-3)
LINK = bouc_wen_link("bw", ["P"], 1.0, B1, G1, alpha=FREE_ALPHA)


def edit(old, new):
    assert VALID.count(old) == 1 and LINK.count(old) == 1, old
    return VALID.replace(old, new)


BAD = [
    ("missing_k0", edit(f"k0 = {K0!r}\n", ""), ["link[1].k0", "missing"]),
    ("zero_k0", edit(f"k0 = {K0!r}", "k0 = 0.0"), ["link[1].k0", "must be > 0"]),
    ("alpha_one", edit(f"alpha = {FREE_ALPHA!r}", "alpha = 1.0"),
     ["link[1].alpha", "must be < 1"]),
    ("negative_alpha", edit(f"alpha = {FREE_ALPHA!r}", "alpha = -0.1"),
     ["link[1].alpha", "must be >= 0"]),
    ("n_below_one", edit("n = 1.0", "n = 0.5"), ["link[1].n", "must be >= 1"]),
    ("beta_below_gamma", edit(f"beta = {B1!r}", "beta = 50.0"),
     ["link[1].beta", "must be >= |gamma| = 100"]),
    ("beta_below_minus_gamma", edit(f"gamma = {G1!r}", "gamma = -500.0"),
     ["link[1].beta", "must be >= |gamma| = 500"]),
    ("no_bound", edit(f"gamma = {G1!r}", f"gamma = {-B1!r}"),
     ["link[1].gamma", "beta + gamma must be > 0"]),
    ("zero_A0", edit("gamma = 100.0", "gamma = 100.0\nA0 = 0.0"), ["link[1].A0", "must be > 0"]),
    ("negative_delta", edit("gamma = 100.0", "gamma = 100.0\ndelta_nu = -1.0"),
     ["link[1].delta_nu", "must be >= 0"]),
    ("zero_direction", edit("direction = [1.0, 0.0, 0.0]", "direction = [0.0, 0.0, 0.0]"),
     ["link[1].direction"]),
    ("unknown_key", edit("gamma = 100.0", "gamma = 100.0\ndelta = 1.0"),
     ["link[1]", "unknown key 'delta'"]),
]


def test_the_valid_study_runs(tmp_path):
    (tmp_path / "study.toml").write_text(VALID)
    assert main(["run", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r.h5")]) == 0


@pytest.mark.parametrize("text, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_bouc_wen_link_is_refused(tmp_path, capsys, text, expected):
    """``fem run`` exits with code 2 and one error line naming the key, no results file; the
    study reader raises a StudyError that names it."""
    assert_refused(tmp_path, capsys, text, expected)
