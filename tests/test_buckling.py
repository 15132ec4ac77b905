"""Buckling links (``kind = "buckling"``) against closed forms written here, in every scheme of
the catalog, on both bases:

* a mass m arriving at the speed V0 on an undamped buckling support (stiffness kn, critical
  force F_c, a plateau, a drop to the post-buckling force, a post-buckling stage): it buckles
  where kn p = F_c on the sine of its elastic phase, t_b = gap / V0 + arcsin(F_c w / (kn V0))
  / w; it stops where its kinetic energy has gone into the crush (the area under the crush
  curve, int Fc(u) du) and the elastic energy F_m^2 / (2 kn) at the turning point; it
  rebounds with the speed that elastic energy gives back along kn; the residual crush is the
  crush at the turning point. On the modal basis a spring k0 in parallel gives the model its
  mode (gap 0: the support is touched at the start), and its energy joins the balance;
* the same between two free masses (the reduced mass);
* a damped support, with and without the damper in the critical force: the instant the
  criterion force kn p + c p' (or kn p) reaches F_c on the damped sine;
* ``fem post shocks`` reports the residual crush and the instant of buckling, ``fem post
  hysteresis`` finds the force-penetration loop;
* keys that validation refuses.
"""

from __future__ import annotations

import math
import textwrap

import h5py
import numpy as np
import pytest
from scipy.optimize import brentq

from fem import catalog
from fem.runner import run_study

from conftest import one_mass_toml, two_masses_toml
from test_maxwell import ROWS, _ids, assert_refused, modes, run, transient

M = 1.0                     # kg
KN = 1.0e5                  # N/m
FC = 100.0                  # N
PLATEAU = 0.5e-3            # m of crush
DROP = 1.0e-3               # m of crush, from F_c to F_P
FP = 60.0                   # N
STAGE = (2.5e-3, 2.0e4)     # the stage's crush (m) and the crush curve's slope there (N/m)
V0 = 0.8                    # m/s
GAP = 1.0e-3                # m (physical basis)
K0 = 2.0e4                  # N/m, the parallel spring of the modal basis
END = 0.025                 # s: after the rebound, before any return


def crushing_force(u):
    """Fc(u), the crush curve written from its definition (docs/study_format.md)."""
    if u < PLATEAU:
        return FC
    if u < PLATEAU + DROP:
        return FC - (FC - FP) * (u - PLATEAU) / DROP
    if u < STAGE[0]:
        return FP
    return FP + STAGE[1] * (u - STAGE[0])


def crush_work(u):
    """int_0^u Fc, by the trapezoids of its linear pieces (the curve is continuous)."""
    marks = [0.0, PLATEAU, PLATEAU + DROP, STAGE[0]]
    points = sorted({x for x in marks if x < u} | {u})
    return sum(0.5 * (crushing_force(a) + crushing_force(b)) * (b - a)
               for a, b in zip(points[:-1], points[1:]))


def turning_point(mass, v0, gap, k0):
    """(residual crush u_m, penetration p_m, force F_m, the speed at separation): the kinetic
    energy goes into the crush work, the support's elastic energy F^2 / (2 kn) and the
    parallel spring's k0 x^2 / 2 (x = gap + p); unloading gives back the support's elastic
    energy (and the spring's between x_m and the separation at x = gap + u_m)."""
    def excess(u):
        f = crushing_force(u)
        x = gap + u + f / KN
        return crush_work(u) + f * f / (2 * KN) + 0.5 * k0 * x * x - 0.5 * mass * v0 * v0
    um = brentq(excess, 0.0, 0.05, xtol=1e-16, rtol=1e-15)
    fm = crushing_force(um)
    pm = um + fm / KN
    xm, xs = gap + pm, gap + um
    speed = math.sqrt((fm * fm / KN + k0 * (xm * xm - xs * xs)) / mass)
    return um, pm, fm, speed


def buckling_instant(mass, v0, gap, k0):
    """gap / V0 + arcsin(F_c w / (kn V0)) / w, w^2 = (kn + k0) / m: the elastic phase from
    the contact (k0 = 0 with a gap, gap = 0 with k0) is a sine of amplitude V0 / w."""
    assert gap == 0.0 or k0 == 0.0
    w = math.sqrt((KN + k0) / mass)
    return gap / v0 + math.asin(FC * w / (KN * v0)) / w


def test_the_closed_forms_hold_together():
    """The turning point's energies sum to the kinetic energy, and it lies in the stage."""
    um, pm, fm, speed = turning_point(M, V0, GAP, 0.0)
    assert um > STAGE[0]
    assert fm == pytest.approx(FP + STAGE[1] * (um - STAGE[0]), rel=1e-14)
    work = crush_work(um)
    # plateau + drop + post-buckling force + the stage's trapezoid
    assert work == pytest.approx(FC * PLATEAU + 0.5 * (FC + FP) * DROP
                                 + FP * (STAGE[0] - PLATEAU - DROP)
                                 + 0.5 * (FP + fm) * (um - STAGE[0]), rel=1e-14)
    assert work + fm * fm / (2 * KN) == pytest.approx(0.5 * M * V0 ** 2, rel=1e-13)
    assert speed == pytest.approx(fm / math.sqrt(KN * M), rel=1e-14)


# ------------------------------------------------------------------------------------------
def buckling_link(nodes, extra="", name="sup", gap=GAP):
    quoted = ", ".join(f'"{n}"' for n in nodes)
    return (f'[[link]]\nkind = "buckling"\nname = "{name}"\nnodes = [{quoted}]\n'
            f"normal = [1.0, 0.0, 0.0]\ngap = {gap!r}\nstiffness = {KN!r}\n"
            f"critical_force = {FC!r}\nplateau = {PLATEAU!r}\ndrop = {DROP!r}\n"
            f"post_buckling_force = {FP!r}\nstages = [[{STAGE[0]!r}, {STAGE[1]!r}, 0.0]]\n"
            f"{extra}")


def arrival_study(basis, scheme, events=None, step=1e-5):
    """Node A (DX), mass m, at x = 0 moving at V0 towards the support (physical: a gap, no
    spring; modal: a spring k0 and no gap)."""
    gap, k0 = (GAP, 0.0) if basis == "physical" else (0.0, K0)
    spring = f"stiffness = {k0!r}\n" if k0 else ""
    text = one_mass_toml(M, spring, "velocity", V0) + f"""
{buckling_link(["A"], gap=gap)}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=END, step=step, links=("sup",))}
"""
    if events:
        text = text.replace(f'scheme = "{scheme}"', f'scheme = "{scheme}"\nevents = "{events}"')
    return text, gap, k0


def located(basis, scheme, events):
    return events == "locate" or catalog.SCHEMES[(basis, scheme)].events == "locate"


def crossing_speed(t, x, v, level, after):
    """The velocity where x falls through ``level`` after the instant ``after`` (linear
    between the archived instants around it)."""
    k = int(np.flatnonzero((t > after) & (x < level))[0])
    a = (x[k - 1] - level) / (x[k - 1] - x[k])
    return v[k - 1] + a * (v[k] - v[k - 1])


CASES = [(b, s, None) for b, s in ROWS] + [
    (b, s, "locate") for b, s in ROWS if catalog.SCHEMES[(b, s)].events == "step"]


@pytest.mark.parametrize("basis, scheme, events", CASES,
                         ids=[f"{b}-{s}" + (f"-{e}" if e else "") for b, s, e in CASES])
def test_a_mass_arriving_on_a_buckling_support(tmp_path, basis, scheme, events):
    """The instant of buckling, the residual crush, the rebound speed and the energy balance
    against the closed forms; the crush work against the curve's integral; ``fem post
    shocks`` reports the residual crush and the instant."""
    import postpro
    from postpro.jobs.shocks import link_shocks

    row = catalog.SCHEMES[(basis, scheme)]
    assert row.offers("buckling"), row.reason("buckling")
    text, gap, k0 = arrival_study(basis, scheme, events)
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / "study.h5"
    report = run_study(path, out)
    assert report.failed_analysis is None, report.message
    with h5py.File(out, "r") as f:
        g = f["analyses/a"]
        t = g["time"][()]
        x, v = g["displacement"][()][:, 0], g["velocity"][()][:, 0]
        crush = g["links/sup/crush"][()]
        dissipated = g["links/sup/dissipated"][()]
        force = g["links/sup/normal_force"][()]
        penetration = g["links/sup/penetration"][()]
        energy = {k: g[f"energy/{k}"][()] for k in ("kinetic", "potential", "link_energy",
                                                     "dissipated", "external_work")}
        loop = list(g["links/sup"].attrs["loop"])
    um, pm, fm, speed = turning_point(M, V0, gap, k0)
    tb = buckling_instant(M, V0, gap, k0)
    exact = scheme == "exact"
    # measured: 1e-6 at most (the Newmark family with events = "step"), 1e-13 exact
    rel = 1e-9 if exact else 2e-5
    assert crush[-1] == pytest.approx(um, rel=rel)
    # the largest archived penetration: the peak between two archived instants, within
    # w^2 dt^2 / 8 of it
    assert np.max(penetration) == pytest.approx(pm, rel=max(rel, 1e-6))
    assert dissipated[-1] == pytest.approx(crush_work(um), rel=rel)
    assert np.max(force) <= FC * (1.0 + 1e-9)
    if k0 == 0.0:
        # free after the separation: the rebound speed is the last one
        assert v[-1] == pytest.approx(-speed, rel=1e-9 if exact else 1e-4)
    else:
        # at the separation, x = u_m (the archived velocities interpolated)
        t_peak = t[int(np.argmax(x))]
        assert crossing_speed(t, x, v, gap + um, t_peak) == pytest.approx(
            -speed, rel=1e-5 if exact else 1e-4)
    assert loop == ["penetration", "normal_force"]
    balance = sum(energy[k] for k in ("kinetic", "potential", "link_energy", "dissipated")) \
        - energy["external_work"]
    # measured: 7e-5 at most (euler), 3e-6 the Newmark family with events = "step"
    kinetic = 0.5 * M * V0 ** 2
    assert np.max(np.abs(balance - kinetic)) < (1e-9 if exact else 3e-4) * kinetic
    assert energy["dissipated"][-1] == pytest.approx(crush_work(um), rel=rel)
    with postpro.open(out) as results:
        stats = link_shocks(results.analysis("a"), "sup")
    assert stats.residual_crush == crush[-1]
    rebound = v[-1] if k0 == 0.0 else crossing_speed(t, x, v, gap + um, t[int(np.argmax(x))])
    print(f"{basis} {scheme} {events or 'default'}: crush {crush[-1] / um - 1:.2e}, "
          f"rebound {-rebound / speed - 1:.2e}, "
          f"instant {stats.buckling_instant - tb:.2e} s, balance "
          f"{np.max(np.abs(balance / (0.5 * M * V0 ** 2) - 1)):.2e}")
    archive = float(t[1] - t[0])
    if located(basis, scheme, events):
        assert stats.buckling_instant == pytest.approx(tb, rel=1e-9 if exact else 1e-5)
    else:
        # the first archived instant at which the support has buckled
        assert tb <= stats.buckling_instant <= tb + archive * (1.0 + 1e-9)


TWO_NODE_ROWS = [key for key in ROWS if key[0] == "physical"]
M2 = 3.0                    # kg, the second mass


@pytest.mark.parametrize("basis, scheme", TWO_NODE_ROWS, ids=_ids(TWO_NODE_ROWS))
def test_two_masses_crushing_a_support_between_them(tmp_path, basis, scheme):
    """A (m, moving at V0) and B (M2, at rest) joined by the support, its normal from A to
    B: the relative motion is that of the reduced mass m M2 / (m + M2) at V0, so the closed
    forms hold with it; the momentum is kept."""
    mu = M * M2 / (M + M2)
    text = two_masses_toml(M, M2, "velocity", V0) + f"""
{buckling_link(["A", "B"])}
{transient(basis, scheme, end=END, step=1e-5, links=("sup",))}
"""
    data = run(tmp_path, text)["a"]
    xa, xb = data["displacement"][:, 0], data["displacement"][:, 1]
    va, vb = data["velocity"][:, 0], data["velocity"][:, 1]
    um, pm, fm, speed = turning_point(mu, V0, GAP, 0.0)
    exact = scheme == "exact"
    rel = 1e-9 if exact else 2e-5
    assert data["links/sup/crush"][-1] == pytest.approx(um, rel=rel)
    assert np.max(data["links/sup/penetration"]) == pytest.approx(pm, rel=max(rel, 1e-6))
    # after the separation the masses part at the rebound speed
    assert va[-1] - vb[-1] == pytest.approx(-speed, rel=1e-8 if exact else 1e-4)
    assert M * va[-1] + M2 * vb[-1] == pytest.approx(M * V0, rel=1e-9)
    # the penetration is the relative motion along the normal, from A to B
    assert np.max(np.abs(data["links/sup/penetration"] - (xa - xb - GAP))) < 1e-15
    if located(basis, scheme, None):
        onset = [e[0] for e in data["events"] if e[1] == b"buckling"]
        w = math.sqrt(KN / mu)
        assert onset[0] == pytest.approx(GAP / V0 + math.asin(FC * w / (KN * V0)) / w,
                                         rel=1e-9 if exact else 1e-5)


# ------------------------------------------------------------------------------------------
# damping: the critical force with or without the damper
CD = 40.0                   # N s/m


def damped_onset(included: bool):
    """The instant the criterion force reaches F_c on the damped sine of the intact phase
    from the contact (gap 0): x = V0 / wd exp(-z w t) sin(wd t)."""
    w = math.sqrt(KN / M)
    z = CD / (2.0 * math.sqrt(KN * M))
    wd = w * math.sqrt(1.0 - z * z)

    def criterion(t):
        e = math.exp(-z * w * t)
        x = V0 / wd * e * math.sin(wd * t)
        v = V0 * e * (math.cos(wd * t) - z * w / wd * math.sin(wd * t))
        return KN * x + (CD * v if included else 0.0) - FC
    return brentq(criterion, 0.0, 0.5 * math.pi / wd, xtol=1e-16, rtol=1e-15)


DAMPED = [("physical", "exact"), ("physical", "newmark"), ("modal", "rk54")]


@pytest.mark.parametrize("included", [True, False])
@pytest.mark.parametrize("basis, scheme", DAMPED, ids=_ids(DAMPED))
def test_the_damper_in_the_critical_force(tmp_path, basis, scheme, included):
    """A damped support touched at the start (gap 0), events located: it buckles where
    kn p + c p' (``damping_in_critical``, the default) or kn p reaches F_c; with the damper
    counted, the force never exceeds F_c; the energy balance closes."""
    spring = "stiffness = 1e-3\n" if basis == "modal" else ""
    extra = f"damping = {CD!r}\n" + ("" if included else "damping_in_critical = false\n")
    text = one_mass_toml(M, spring, "velocity", V0) + f"""
{buckling_link(["A"], extra, gap=0.0)}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=0.01, step=1e-5, links=("sup",))}
"""
    text = text.replace(f'scheme = "{scheme}"', f'scheme = "{scheme}"\nevents = "locate"')
    data = run(tmp_path, text)["a"]
    onset = [e[0] for e in data["events"] if e[1] == b"buckling"]
    exact = scheme == "exact"
    # the modal spring of 1e-3 N/m changes the instant by a relative 1e-8
    assert onset[0] == pytest.approx(damped_onset(included), rel=1e-7 if exact else 1e-4)
    force = data["links/sup/normal_force"]
    if included:
        assert np.max(force) <= FC * (1.0 + 1e-9)
    else:
        assert np.max(force) > FC * 1.01
    energy = data
    balance = (energy["energy/kinetic"] + energy["energy/potential"]
               + energy["energy/link_energy"] + energy["energy/dissipated"]
               - energy["energy/external_work"])
    assert np.max(np.abs(balance - balance[0])) < (1e-9 if exact else 2e-3) * 0.5 * M * V0 ** 2


# ------------------------------------------------------------------------------------------
def test_fem_post_hysteresis_draws_the_crush(tmp_path):
    """``fem post hysteresis`` finds the support's loop (penetration, normal force): the
    drawn curve's largest force is F_c and its penetrations reach p_m."""
    from postpro.jobs import hysteresis
    import postpro

    text, gap, k0 = arrival_study("physical", "exact")
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / "study.h5"
    assert run_study(path, out).failed_analysis is None
    um, pm, fm, speed = turning_point(M, V0, gap, k0)
    with postpro.open(out) as results:
        loops = hysteresis.link_loops(results.analysis("a"), "sup")
        assert loops.series == ("penetration", "normal_force") and loops.units == ("m", "N")
        ax = hysteresis.figure(loops).axes[0]
    drawn = np.concatenate([line.get_xydata() for line in ax.lines])
    assert np.max(drawn[:, 1]) == pytest.approx(FC, rel=1e-9)
    assert np.max(drawn[:, 0]) == pytest.approx(pm, rel=1e-2)


def test_fem_post_shocks_prints_the_crush_and_the_instant(tmp_path, capsys):
    from fem.cli import main

    text, gap, k0 = arrival_study("physical", "exact")
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(text))
    out = tmp_path / "study.h5"
    assert run_study(path, out).failed_analysis is None
    assert main(["post", "shocks", str(out), "-a", "a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "residual crush [m]" in lines[0] and "buckled at [s]" in lines[0]
    um = turning_point(M, V0, gap, k0)[0]
    cells = lines[2].split()
    assert float(cells[-3]) == pytest.approx(um, rel=1e-5)
    assert float(cells[-2]) == pytest.approx(buckling_instant(M, V0, gap, k0), rel=1e-5)


# ------------------------------------------------------------------------------------------
# bad input
VALID = f"""[mesh.nodes]
A = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["A"]
mass = 1.0
{buckling_link(["A"])}
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
end = 0.001
step = 1e-4
links = ["sup"]
"""


def edit(old, new):
    assert VALID.count(old) == 1, old
    return VALID.replace(old, new)


BAD = [
    ("missing_critical_force", edit(f"critical_force = {FC!r}\n", ""),
     ["link[1].critical_force", "missing"]),
    ("negative_stiffness", edit(f"stiffness = {KN!r}", "stiffness = -1.0"),
     ["link[1].stiffness"]),
    ("post_above_critical", edit(f"post_buckling_force = {FP!r}", "post_buckling_force = 120.0"),
     ["link[1].post_buckling_force", "at most critical_force"]),
    ("no_drop", edit(f"drop = {DROP!r}", "drop = 0.0"), ["link[1].drop", "falls"]),
    ("snap_back", edit(f"drop = {DROP!r}", "drop = 1e-5"), ["link[1].drop", "snap back"]),
    ("stage_too_early", edit(f"stages = [[{STAGE[0]!r}", "stages = [[1e-4"),
     ["link[1].stages[1]", "beyond the end of the plateau and the drop"]),
    ("stage_shape", edit(f"stages = [[{STAGE[0]!r}, {STAGE[1]!r}, 0.0]]", "stages = [1.0, 2.0]"),
     ["link[1].stages", "[crush, stiffness, damping]"]),
    ("stage_too_soft", edit(f"{STAGE[1]!r}, 0.0]]", "-2e5, 0.0]]"),
     ["link[1].stages[1]", "above -stiffness"]),
    ("negative_damping", edit(f"{STAGE[1]!r}, 0.0]]", f"{STAGE[1]!r}, -1.0]]"),
     ["link[1].stages[1][3]"]),
    ("flag_not_bool", edit("stages", "damping_in_critical = \"yes\"\nstages"),
     ["link[1].damping_in_critical"]),
    ("unknown_key", edit("stages", "obstacle = \"circle\"\nstages"),
     ["link[1]", "obstacle"]),
]


def test_the_valid_study_runs(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(VALID)
    assert run_study(path, tmp_path / "r.h5").failed_analysis is None


@pytest.mark.parametrize("text, expected", [case[1:] for case in BAD], ids=[c[0] for c in BAD])
def test_invalid_buckling_link_is_refused(tmp_path, capsys, text, expected):
    """``fem run`` exits with code 2 and one error line naming the key and the link, no
    results file; the study reader raises a StudyError that names it."""
    assert_refused(tmp_path, capsys, text, expected)
