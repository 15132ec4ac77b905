"""Plastic links (``kind = "plastic"``) against closed forms written here, in every scheme of
the catalog that offers them, on both bases:

* a mass on an elastic-perfectly-plastic spring under a step load F0 from rest: first yield
  at t_y = arccos(1 - F_y / F0) / w, peak ductility 1 / (2 (1 - F0 / F_y));
* the same with a linear spring k_s in parallel: elastic, then plastic (the spring alone),
  then elastic again about the new plastic elongation, each phase a harmonic motion;
* bilinear kinematic and isotropic hardening under an imposed cyclic elongation: the loop's
  corners from the curve, its area, and the plastic work per cycle;
* a yielding gap spring: slack inside the gap, which yielding widens.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from fem import catalog
from fem.errors import StudyError
from fem.runner import run_study
from conftest import bad_link_toml, one_mass_toml
from test_maxwell import ROWS, _ids, imposed_study, modes, run, transient

K = 1.0e5                   # N/m, elastic stiffness
FY = 100.0                  # N, elastic limit
UY = FY / K                 # m
MASS = 1.0                  # kg


def require(basis, scheme, feature="plastic.bilinear"):
    """Skip, naming the catalog's reason, a scheme that does not offer the feature: a
    perfectly plastic or bilinear kinematic spring ("plastic.bilinear", every scheme) or an
    isotropic or multilinear one ("plastic", all but the exact scheme)."""
    row = catalog.SCHEMES[(basis, scheme)]
    if not row.offers(feature):
        assert (scheme, feature) == ("exact", "plastic"), row.reason(feature)
        pytest.skip(f"{basis} {scheme}: {row.reason(feature)}")


def plastic_link(nodes, curve, extra="", name="pl"):
    quoted = ", ".join(f'"{n}"' for n in nodes)
    points = ", ".join(f"[{u!r}, {f!r}]" for u, f in curve)
    return (f'[[link]]\nkind = "plastic"\nname = "{name}"\nnodes = [{quoted}]\n'
            f"direction = [1.0, 0.0, 0.0]\ncurve = [{points}]\n{extra}")


def step_load_study(basis, scheme, f0, spring, end, step):
    """A mass on the plastic link to the ground (and a spring ``spring`` N/m in parallel),
    the load FX = f0 from t = 0."""
    stiffness = f"stiffness = {spring!r}\n" if spring else ""
    return one_mass_toml(MASS, stiffness) + f"""
[[load]]
nodes = ["A"]
FX = {f0!r}
{plastic_link(["A"], [(UY, FY)])}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=end, step=step, links=("pl",))}
"""


PHYSICAL = [key for key in ROWS if key[0] == "physical"]


@pytest.mark.parametrize("basis, scheme", PHYSICAL, ids=_ids(PHYSICAL))
def test_elastic_perfectly_plastic_oscillator_under_a_step_load(tmp_path, basis, scheme):
    """F0 = 0.75 F_y: yield at t_y = arccos(1 - F_y / F0) / w, then the spring carries F_y
    until the mass stops at the peak ductility 1 / (2 (1 - F0 / F_y)) = 2, then unloads
    elastically about the plastic elongation u_max - u_y."""
    require(basis, scheme)
    f0 = 0.75 * FY
    w = math.sqrt(K / MASS)
    ty = math.acos(1.0 - FY / f0) / w
    step = 2.0 * math.pi / w / 2000
    data = run(tmp_path, step_load_study(basis, scheme, f0, 0.0, 0.05, step))["a"]
    t, x = data["time"], data["displacement"][:, 0]
    force = data["links/pl/force"]
    peak = UY / (2.0 * (1.0 - f0 / FY))
    assert np.max(x) == pytest.approx(peak, rel=1e-3)
    first = t[np.argmax(force >= FY * (1.0 - 1e-9))]
    assert first == pytest.approx(ty, abs=1.5 * step)
    assert np.max(force) <= FY * (1.0 + 1e-9)
    up = data["links/pl/plastic_elongation"]
    assert up[-1] == pytest.approx(peak - UY, rel=1e-3)
    # the plastic work: F_y times the plastic elongation, all of the energy lost
    assert data["links/pl/dissipated"][-1] == pytest.approx(FY * (peak - UY), rel=1e-3)
    balance = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
               + data["energy/dissipated"] - data["energy/external_work"])
    assert np.max(np.abs(balance)) < 1e-3 * f0 * peak


def three_phases(f0, ks, t):
    """x(t) of a mass m on a spring ks in parallel with an elastic-perfectly-plastic spring
    (k, F_y) under a step load f0 from rest, loading once then unloading elastically: the
    three harmonic phases in closed form, and the plastic elongation."""
    k1 = ks + K
    w1, w2 = math.sqrt(k1 / MASS), math.sqrt(ks / MASS)
    ty = math.acos(1.0 - UY * k1 / f0) / w1
    vy = f0 / k1 * w1 * math.sin(w1 * ty)
    xe = (f0 - FY) / ks                         # phase 2: about xe at w2
    a, b = UY - xe, vy / w2
    tm = ty + math.atan2(b, a) / w2             # the peak: x = xe + sqrt(a^2 + b^2)
    xmax = xe + math.hypot(a, b)
    up = xmax - UY
    x3 = (f0 + K * up) / k1                     # phase 3: about x3 at w1
    x = np.where(t <= ty, f0 / k1 * (1.0 - np.cos(w1 * t)),
                 np.where(t <= tm, xe + a * np.cos(w2 * (t - ty)) + b * np.sin(w2 * (t - ty)),
                          x3 + (xmax - x3) * np.cos(w1 * (t - tm))))
    # phase 3 stays elastic: the spring's force at the lowest point above -F_y
    assert K * (2.0 * x3 - xmax - up) > -FY
    return x, up


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_yield_then_unload_with_a_parallel_spring(tmp_path, basis, scheme):
    """k_s = 2e4 N/m beside the plastic spring, F0 = 90 N: the displacement against the three
    phases' closed form, on both bases (one mode: the modal basis is the whole model)."""
    require(basis, scheme)
    ks, f0 = 2.0e4, 90.0
    w1 = math.sqrt((ks + K) / MASS)
    step = 2.0 * math.pi / w1 / 1000
    end = 0.08
    data = run(tmp_path, step_load_study(basis, scheme, f0, ks, end, step))["a"]
    t, x = data["time"], data["displacement"][:, 0]
    exact, up = three_phases(f0, ks, t)
    scale = float(np.max(np.abs(exact)))
    assert np.max(np.abs(x - exact)) < 5e-3 * scale
    assert data["links/pl/plastic_elongation"][-1] == pytest.approx(up, rel=5e-3)
    assert data["links/pl/dissipated"][-1] == pytest.approx(FY * up, rel=5e-3)


# ------------------------------------------------------------------------------------------
# an imposed cyclic elongation
U0 = 5.0e-3                 # m, the cycle's amplitude (5 u_y)
W = 2.0 * math.pi * 2.0
PERIOD = 2.0 * math.pi / W
CURVE = [(UY, FY), (11.0 * UY, 200.0)]          # k_t = 1e4 N/m beyond the elastic limit
KT = (CURVE[1][1] - CURVE[0][1]) / (CURVE[1][0] - CURVE[0][0])


def cyclic_study(basis, scheme, extra, curve=CURVE, cycles=3, per_period=800):
    return imposed_study(basis, scheme, imposed=f'DX = {U0!r}\nfunction = "drive"',
                         end=cycles * PERIOD, step=PERIOD / per_period,
                         functions=f'[functions.drive]\nexpression = "sin({W!r}*t)"\n',
                         link=plastic_link(["P"], curve, extra), links=("pl",))


def bilinear_corners(rule, cycles):
    """The corners (u, F) of a bilinear spring driven 0 -> U0 -> -U0 -> U0 ...: a reversal's
    elastic unloading and the hardening line's end, for each half cycle, from the curve: the
    hardening line has slope k_t; kinematic: the elastic range is 2 F_y wide; isotropic: it
    is 2 R, R the last peak force."""
    corners = []
    force, up = 0.0, 0.0
    radius = FY
    target = U0
    for _ in range(2 * cycles):
        s = 1.0 if target > 0 else -1.0
        if rule == "kinematic":
            back = force + s * FY if corners else 0.0      # the centre of the elastic range
            yield_force = back + s * FY if corners else s * FY
        else:
            yield_force = s * radius
        u_yield = up + yield_force / K
        corners.append((u_yield, yield_force))
        force = yield_force + KT * (target - u_yield)
        up = target - force / K
        radius = abs(force)
        corners.append((target, force))
        target = -target
    return corners


@pytest.mark.parametrize("rule", ["kinematic", "isotropic"])
@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_bilinear_hardening_under_a_cyclic_elongation(tmp_path, basis, scheme, rule):
    """The force at the corners of each half cycle, the force along the loop (linear between
    corners), the plastic work of the last cycle against the loop's area from the corners,
    and the energy balance."""
    require(basis, scheme, "plastic.bilinear" if rule == "kinematic" else "plastic")
    cycles = 3
    data = run(tmp_path, cyclic_study(basis, scheme, f'hardening = "{rule}"\n',
                                      cycles=cycles))["a"]
    t = data["time"]
    u, force = data["links/pl/elongation"], data["links/pl/force"]
    corners = bilinear_corners(rule, cycles)
    # the path, corner to corner: elastic (slope K) to the yield corner, then slope k_t; the
    # path's force at each archived elongation, half cycle by half cycle
    quarter = PERIOD / 4
    half_starts = [quarter + i * PERIOD / 2 for i in range(2 * cycles)]
    for i, (u_y, f_y) in enumerate(corners[0::2]):
        u_end, f_end = corners[2 * i + 1]
        lo, hi = (half_starts[i - 1] if i else 0.0), half_starts[i]
        sel = (t > lo + 1e-9) & (t <= hi + 1e-9)
        s = 1.0 if u_end > 0 else -1.0
        elastic = s * (u[sel] - u_y) <= 0.0
        expect = np.where(elastic, f_y + K * (u[sel] - u_y), f_y + KT * (u[sel] - u_y))
        assert np.max(np.abs(force[sel] - expect)) < 2e-3 * abs(f_end), (rule, i)
    # the last cycle's loop area (the corners' polygon) against the plastic work
    last = corners[-4:]
    start = corners[-5]
    poly = np.array([start] + last)
    xs, ys = poly[:, 0], poly[:, 1]
    area = 0.5 * abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1)))
    if rule == "kinematic":
        assert area == pytest.approx(4.0 * (U0 - UY) * FY * (1.0 - KT / K), rel=1e-12)
    t_end = t[-1]
    sel = t >= t_end - PERIOD - 1e-9
    trapezoid = float(np.sum(0.5 * (force[sel][1:] + force[sel][:-1]) * np.diff(u[sel])))
    # over the last period (u: 0 -> U0 -> -U0 -> 0) a steady loop's int F du is its area
    work = np.interp(t_end, t, data["links/pl/dissipated"]) - \
        np.interp(t_end - PERIOD, t, data["links/pl/dissipated"])
    if rule == "kinematic":
        assert trapezoid == pytest.approx(area, rel=5e-3)
        assert work == pytest.approx(area, rel=5e-3)
    # int F du over the period: the plastic work and the change of the stored F^2 / 2 k
    f_start, f_end = np.interp([t_end - PERIOD, t_end], t, force)
    assert work == pytest.approx(trapezoid - (f_end ** 2 - f_start ** 2) / (2.0 * K),
                                 rel=5e-3)
    balance = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
               + data["energy/dissipated"] - data["energy/external_work"])
    assert np.max(np.abs(balance)) < 2e-3 * work


@pytest.mark.parametrize("basis, scheme", ROWS, ids=_ids(ROWS))
def test_a_yielding_gap_spring(tmp_path, basis, scheme):
    """A gap g = 2 u_y on the tension side, perfectly plastic beyond F_y: the first pass to
    U0 leaves the plastic elongation U0 - g - u_y; from then on the spring is slack below
    U0 - u_y and carries min(k (u - U0 + u_y), F_y) above, never a compression."""
    require(basis, scheme)
    gap = 2.0 * UY
    data = run(tmp_path, cyclic_study(basis, scheme, f"gap = {gap!r}\n",
                                      curve=[(UY, FY)]))["a"]
    t = data["time"]
    u, force = data["links/pl/elongation"], data["links/pl/force"]
    assert np.min(force) >= 0.0
    after = t > PERIOD / 4 + 1e-9
    expect = np.clip(K * (u[after] - (U0 - UY)), 0.0, FY)
    assert np.max(np.abs(force[after] - expect)) < 2e-3 * FY
    assert data["links/pl/plastic_elongation"][-1] == pytest.approx(U0 - gap - UY, rel=1e-3)


# ------------------------------------------------------------------------------------------
# bad input
BAD = [
    ("curve = [[1e-3, 100.0], [2e-3, 90.0]]", "must not decrease"),
    ("curve = [[1e-3, 100.0], [0.5e-3, 150.0]]", "must increase"),
    ("curve = [[1e-3, 100.0], [2e-3, 300.0]]", "elastic slope"),
    ("curve = [[1e-3, -100.0]]", "curve[1][2]"),
    ("curve = [1e-3, 100.0]", "list of [deformation, force] points"),
    ("curve = [[1e-300, 1e10]]", "not a finite stiffness"),
    ('curve = [[1e-3, 100.0]]\nhardening = "mixed"', "hardening"),
    ('curve = [[1e-3, 100.0]]\ngap = 1e-3\nside = "both"', "side"),
]


@pytest.mark.parametrize("keys, message", BAD)
def test_bad_keys_are_named(tmp_path, keys, message):
    text = bad_link_toml("plastic", "pl", keys, head="direction = [1.0, 0.0, 0.0]\n")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(StudyError) as info:
        run_study(path, tmp_path / "bad.h5")
    assert message in str(info.value)
    assert "link" in str(info.value)
    assert not (tmp_path / "bad.h5").exists()


# ------------------------------------------------------------------------------------------
# located yield and unload
def epp_events(f0):
    """The yield and unload instants of the elastic-perfectly-plastic oscillator under the
    step load f0: yield at t_y = arccos(1 - F_y / f0) / w with the speed
    v_y = (f0 / k) w sin(w t_y); then m x'' = f0 - F_y decelerates it to rest, where it
    unloads: t_u = t_y + m v_y / (F_y - f0)."""
    w = math.sqrt(K / MASS)
    ty = math.acos(1.0 - FY / f0) / w
    vy = f0 / K * w * math.sin(w * ty)
    return ty, ty + MASS * vy / (FY - f0)


def test_the_exact_scheme_lands_on_yield_and_unload_to_round_off(tmp_path):
    """The exact scheme runs a perfectly plastic spring between its located yield and unload
    instants exactly: the instants, the peak 2 u_y and the plastic elongation u_y to
    round-off (F0 = 0.75 F_y)."""
    f0 = 0.75 * FY
    data = run(tmp_path, step_load_study("physical", "exact", f0, 0.0, 0.05, 1e-4))["a"]
    events = data["events"]
    kinds = [e[1].decode() for e in events]
    assert kinds == ["yield", "unload"]
    ty, tu = epp_events(f0)
    assert events[0][0] == pytest.approx(ty, rel=1e-12)
    assert events[1][0] == pytest.approx(tu, rel=1e-12)
    assert data["links/pl/plastic_elongation"][-1] == pytest.approx(UY, rel=1e-12)
    assert data["links/pl/dissipated"][-1] == pytest.approx(FY * UY, rel=1e-12)
    # after the unload: x = x_p + u_y cos(w (t - t_u)) about x_p = u_y + f0 / k
    t, x = data["time"], data["displacement"][:, 0]
    after = t > tu
    w = math.sqrt(K / MASS)
    exact = UY + f0 / K + (2.0 * UY - UY - f0 / K) * np.cos(w * (t[after] - tu))
    assert np.max(np.abs(x[after] - exact)) < 1e-12 * UY * 10


def free_vibration_study(scheme, v0, end):
    """A mass launched at v0 on a bilinear kinematic spring (CURVE) to the ground, no load."""
    return one_mass_toml(MASS, "", "velocity", v0) + f"""
{plastic_link(["A"], CURVE)}
{transient("physical", scheme, end=end, step=1e-4, links=("pl",))}
"""


def test_the_exact_scheme_in_free_vibration_yields_unloads_and_yields_back(tmp_path):
    """With no load, the yield of a bilinear kinematic spring is its own event (not a contact
    that opens): launched at v0 = 1 m/s, the mass yields at t_1 = asin(w u_y / v0) / w,
    hardens about x_c = u_y - F_y / k_t up to x_max (the energy of the hardening phase),
    unloads there (F_max = F_y + k_t (x_max - u_y), back force X = H u_p) and yields back
    where F = X - F_y, on the elastic cosine about u_p: each instant and value to round-off."""
    v0 = 1.0
    data = run(tmp_path, free_vibration_study("exact", v0, 0.03))["a"]
    events = data["events"]
    kinds = [e[1].decode() for e in events]
    assert kinds[:3] == ["yield", "unload", "yield"], kinds
    w, wt = math.sqrt(K / MASS), math.sqrt(KT / MASS)
    t1 = math.asin(w * UY / v0) / w
    v1 = math.sqrt(v0 ** 2 - (w * UY) ** 2)
    xc = UY - FY / KT
    amplitude = math.hypot(UY - xc, v1 / wt)
    x_max = xc + amplitude
    t2 = t1 + (math.pi / 2 - math.atan2(UY - xc, v1 / wt)) / wt
    f_max = FY + KT * (x_max - UY)
    up = x_max - f_max / K
    hh = K * KT / (K - KT)
    f_back = hh * up - FY
    t3 = t2 + math.acos(f_back / f_max) / w
    assert events[0][0] == pytest.approx(t1, rel=1e-12)
    assert events[1][0] == pytest.approx(t2, rel=1e-12)
    assert events[2][0] == pytest.approx(t3, rel=1e-12)
    t, x = data["time"], data["displacement"][:, 0]
    between = (t > t2) & (t < t3)
    assert np.max(np.abs(x[between] - (up + f_max / K * np.cos(w * (t[between] - t2))))) \
        < 1e-12 * x_max
    force = data["links/pl/force"]
    assert np.max(force[t < t3]) <= f_max * (1 + 1e-12)
    assert data["links/pl/plastic_elongation"][between] == pytest.approx(up, rel=1e-12)
    # the plastic work is counted in the balance (0.5 J in, none lost elsewhere)
    total = sum(data[f"energy/{k}"] for k in ("kinetic", "potential", "link_energy",
                                                "dissipated"))
    assert np.max(np.abs(total - 0.5 * MASS * v0 ** 2)) < 1e-12
    assert data["energy/dissipated"][-1] == pytest.approx(data["links/pl/dissipated"][-1],
                                                          rel=1e-12)


IMPLICIT = [key for key in PHYSICAL if key[1] in ("newmark", "hht", "central_difference")]


@pytest.mark.parametrize("basis, scheme", IMPLICIT, ids=_ids(IMPLICIT))
def test_located_yield_and_unload_in_the_newmark_family(tmp_path, basis, scheme):
    """With events = "locate" the Newmark family holds the spring's mode over each step and
    lands on its yield and unload instants: the log has them, at the closed form's instants
    to the step's accuracy, and the motion matches the step-load closed form."""
    f0 = 0.75 * FY
    w = math.sqrt(K / MASS)
    step = 2.0 * math.pi / w / 400
    text = step_load_study(basis, scheme, f0, 0.0, 0.05, step).replace(
        f'scheme = "{scheme}"', f'scheme = "{scheme}"\nevents = "locate"')
    data = run(tmp_path, text)["a"]
    kinds = [e[1].decode() for e in data["events"]]
    assert kinds == ["yield", "unload"]
    ty, tu = epp_events(f0)
    assert data["events"][0][0] == pytest.approx(ty, abs=2e-3 / w)
    assert data["events"][1][0] == pytest.approx(tu, abs=2e-3 / w)
    assert data["links/pl/plastic_elongation"][-1] == pytest.approx(UY, rel=1e-3)
    assert np.max(data["links/pl/force"]) <= FY * (1.0 + 1e-9)


def test_fem_post_hysteresis_draws_the_bilinear_loop(tmp_path):
    """``fem post hysteresis`` on a bilinear kinematic spring driven through three cycles
    (newmark): each full cycle's loop area and the increase of the link's ``dissipated``
    against the closed form 4 (U0 - u_y) F_y (1 - k_t / k); the figure's curve is the
    archived force against the elongation."""
    import postpro
    from postpro.jobs import hysteresis

    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(cyclic_study("physical", "newmark",
                                                 'hardening = "kinematic"\n')))
    out = tmp_path / "study.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    area = 4.0 * (U0 - UY) * FY * (1.0 - KT / K)
    with postpro.open(out) as results:
        analysis = results.analysis("a")
        loops = hysteresis.link_loops(analysis, "pl")
        assert loops.series == ("elongation", "force") and loops.units == ("m", "N")
        assert len(loops.cycles) == 2
        for cycle in loops.cycles:
            assert cycle.area == pytest.approx(area, rel=5e-3)
            assert cycle.dissipated == pytest.approx(area, rel=5e-3)
        ax = hysteresis.figure(loops).axes[0]
    assert ax.get_xlabel() == "elongation [m]" and ax.get_ylabel() == "force [N]"
    drawn = np.concatenate([line.get_xydata() for line in ax.lines])
    # the drawn curve is the loop: elongations within +-U0, forces up to the corners' +-F_m,
    # and every point between the two hardening lines F = +-F_y + X, |X| <= k_t-line
    fmax = FY + KT * (U0 - UY)
    assert np.max(np.abs(drawn[:, 0])) == pytest.approx(U0, rel=1e-3)
    assert np.max(np.abs(drawn[:, 1])) == pytest.approx(fmax, rel=1e-3)
    hh = K * KT / (K - KT)                  # Prager: X = H u_p, u_p = u - F / k
    back = hh * (drawn[:, 0] - drawn[:, 1] / K)
    assert np.max(np.abs(drawn[:, 1] - back)) <= FY * (1.0 + 1e-6)


# ------------------------------------------------------------------ the law's derivatives
def plastic_arrays(curve, rule):
    from fem import laws
    from fem.laws import plastic

    p = dict(direction=(1.0, 0.0, 0.0), curve=curve, hardening=rule, side="both", gap=0.0)
    row = plastic.rows(p, nodes=1)[0][1]
    P = np.zeros((1, laws.NP))
    P[0, :row.size] = row
    return P, np.zeros((1, laws.NV)), np.zeros((1, laws.NV))


def plastic_force(P, cv_old, cv_new, u1, v1, h):
    """(F, dF/du1, dF/du1') of the one plastic contact of P over a step of h from cv_old."""
    from fem.laws import plastic

    phi, jd, jv = np.zeros(3), np.zeros((1, 3, 3)), np.zeros((1, 3, 3))
    plastic.trial(P, 0, 0, np.array([u1, 0.0, 0.0]), np.array([v1, 0.0, 0.0]), cv_old,
                  cv_new, phi, jd, jv, np.array([-1.0]), True, h)
    return -phi[0], -jd[0, 0, 0], -jv[0, 0, 0]


@pytest.mark.parametrize("curve, rule", [
    (CURVE, "kinematic"), (CURVE, "isotropic"), ([(UY, FY)], "kinematic"),
    ([(UY, FY), (3.0 * UY, 1.5 * FY), (6.0 * UY, 1.6 * FY)], "kinematic")],
    ids=["bilinear-kinematic", "bilinear-isotropic", "perfectly-plastic", "trilinear"])
def test_the_derivatives_are_those_of_the_force_where_the_step_turns_back(curve, rule):
    """dF/du1 and dF/du1' against central differences of the force, for steps that flow
    and turn back inside the step (the force then depends on where the path turns, so on
    the end rate too: a Newton iteration without that term converges only linearly), a
    step that flows to its end, and elastic ones, one of which turns back where it does not
    flow (all rate independent)."""
    from fem.laws.columns import PDOT
    from fem.laws.plastic import CUMULATIVE

    P, old, new = plastic_arrays(curve, rule)
    # the committed state: loaded from rest to 2 u_y in one step without a path
    plastic_force(P, old, new, 2.0 * UY, 0.0, 0.0)
    start = new.copy()
    assert start[0, CUMULATIVE] > 0.0
    h = 1e-3
    turning = [(4.0 * UY / h, 1.8 * UY, -2.0 * UY / h),     # flows on, turns, unloads
               (3.0 * UY / h, 1.2 * UY, -6.0 * UY / h)]
    flowing = [(1.0 * UY / h, 2.5 * UY, 1.0 * UY / h)]
    elastic = [(-1.0 * UY / h, 1.5 * UY, -1.0 * UY / h),
               (-3.0 * UY / h, 1.5 * UY, 2.0 * UY / h)]      # unloads, turns, reloads
    for cases, rate_dependent in ((turning, True), (flowing, False), (elastic, False)):
        for v0, u1, v1 in cases:
            old[:] = start
            old[0, PDOT] = v0
            f, dfdu, dfdv = plastic_force(P, old, new, u1, v1, h)
            du, dv = 1e-6 * UY, 1e-6 * UY / h
            fd_u = (plastic_force(P, old, new, u1 + du, v1, h)[0]
                    - plastic_force(P, old, new, u1 - du, v1, h)[0]) / (2 * du)
            fd_v = (plastic_force(P, old, new, u1, v1 + dv, h)[0]
                    - plastic_force(P, old, new, u1, v1 - dv, h)[0]) / (2 * dv)
            assert dfdu == pytest.approx(fd_u, rel=1e-6), (v0, u1, v1)
            assert dfdv == pytest.approx(fd_v, rel=1e-6, abs=1e-9 * K * h), (v0, u1, v1)
            assert (abs(dfdv) > 1e-3 * K * h) == rate_dependent, (v0, u1, v1, dfdv)
