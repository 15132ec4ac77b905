"""studies/v9_buckling_support.toml: a pipe that strikes a support which buckles, against a
solution written here.

The pipe is two masses along X, P1 at the support and P2, on anchor springs k_a and joined by
the span's stiffness k_s; the support's force F acts on P1 alone:

    m_1 x1'' = -k_a x1 - k_s (x1 - x2) - F,    m_2 x2'' = -k_a x2 - k_s (x2 - x1)

from x = 0 at the velocity V0. The support's penetration is p = x1 - gap; its crush u (the
permanent deformation, 0 while intact) and its crush curve Fc(u) are written here from the
curve's definition in docs/study_format.md: F_c over the plateau w, linear down to F_p over
the drop L, F_p up to the stage's crush u_1, then F_p + s_1 (u - u_1). The support is

* open while p <= u: F = 0;
* elastic while p > u below the curve: F = kn (p - u), u constant;
* crushed on a segment of slope s: F = Fc(u) and u' = kn / (kn + s) p'.

scipy's solve_ivp (DOP853, rtol 1e-12) integrates x1, x2, their velocities, the crush and
the crush work int Fc(u) du, and locates the changes as events, from which it restarts:

* contact: p - u rises through 0 (open -> elastic);
* the critical force, and any later resumption of the crush: kn (p - u) rises through Fc(u)
  (elastic -> crushed); the first is the instant of buckling;
* the end of the plateau, the end of the drop and the start of the stage: u reaches the next
  breakpoint of the curve (crushed, on the next segment);
* the turning point: p' falls through 0 (crushed -> elastic, the crush frozen);
* release: p - u falls through 0 (elastic -> open); the rebound speed is -x1' there.

The support has no damper. Between the events the model is linear: fem's exact scheme
propagates it exactly and locates the changes to round-off.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

import fem
from conftest import ROOT
from postpro.energy import energy_balance_error

STUDY = ROOT / "studies" / "v9_buckling_support.toml"
M1, M2 = 120.0, 200.0                   # kg
KA, KS = 2.0e5, 2.0e6                   # N/m: each mass' anchor, and the span between them
V0 = 2.0                                # m/s, towards the support
GAP = 4.0e-3                            # m
KN = 3.0e7                              # N/m, the support's stiffness
FC, FP = 3.0e4, 1.8e4                   # N: critical and post-buckling forces
PLATEAU, DROP = 3.0e-3, 5.0e-3          # m of crush
STAGE = (0.012, 8.0e5)                  # the stage's crush (m) and its slope (N/m)
END, STEP = 0.175, 5.0e-5
ANALYSES = ("exact", "newmark", "modal_rk54")
#: the crush curve: the crush where each segment starts, and its slope
BREAKS = (0.0, PLATEAU, PLATEAU + DROP, STAGE[0])
SLOPES = (0.0, -(FC - FP) / DROP, 0.0, STAGE[1])
#: the event names of fem's log for the reference's changes
FEM_KINDS = {"contact": "impact", "buckling": "buckling", "crush": "crush", "break1": "drop",
             "break2": "post-buckling", "break3": "stage", "turn": "unload",
             "release": "separation"}


def study_table() -> dict:
    return tomllib.loads(STUDY.read_text())


def crushing_force(u: float) -> float:
    """Fc(u), the crush curve (module docstring)."""
    if u < PLATEAU:
        return FC
    if u < PLATEAU + DROP:
        return FC - (FC - FP) * (u - PLATEAU) / DROP
    if u < STAGE[0]:
        return FP
    return FP + STAGE[1] * (u - STAGE[0])


def segment(u: float) -> int:
    """The segment of the curve a crush u goes on with (at a breakpoint: the next one)."""
    return max(k for k, b in enumerate(BREAKS) if u >= b * (1.0 - 1e-12))


# ------------------------------------------------------------------------------------------
# the reference
#: state: x1, x2, x1', x2', the crush u, the crush work
X1, X2, V1, V2, CRUSH, WORK = range(6)
ATOL = np.array([1e-14, 1e-14, 1e-12, 1e-12, 1e-14, 1e-9])


def support_force(z, mode) -> float:
    if mode[0] == "open":
        return 0.0
    if mode[0] == "elastic":
        return KN * (z[X1] - GAP - z[CRUSH])
    return crushing_force(z[CRUSH])


def _rhs(t, z, mode):
    x1, x2, v1, v2 = z[0], z[1], z[2], z[3]
    f = support_force(z, mode)
    rate = KN / (KN + SLOPES[mode[1]]) * v1 if mode[0] == "crushed" else 0.0
    return [v1, v2, (-KA * x1 - KS * (x1 - x2) - f) / M1, (-KA * x2 - KS * (x2 - x1)) / M2,
            rate, crushing_force(z[CRUSH]) * rate]


def _contact(t, z, mode):
    return z[X1] - GAP - z[CRUSH] if mode[0] == "open" else -1.0


def _crush(t, z, mode):
    if mode[0] != "elastic":
        return -1.0
    return KN * (z[X1] - GAP - z[CRUSH]) - crushing_force(z[CRUSH])


def _breakpoint(t, z, mode):
    if mode[0] != "crushed" or mode[1] + 1 >= len(BREAKS):
        return -1.0
    return z[CRUSH] - BREAKS[mode[1] + 1]


def _turn(t, z, mode):
    return z[V1] if mode[0] == "crushed" else 1.0


def _release(t, z, mode):
    return z[X1] - GAP - z[CRUSH] if mode[0] == "elastic" else 1.0


EVENTS = (("contact", _contact, 1.0), ("crush", _crush, 1.0), ("break", _breakpoint, 1.0),
          ("turn", _turn, -1.0), ("release", _release, -1.0))
for _, _f, _d in EVENTS:
    _f.terminal, _f.direction = True, _d


@dataclass
class Reference:
    t: np.ndarray               # (nt,) s
    z: np.ndarray               # (nt, 6) the state
    force: np.ndarray           # (nt,) N, the support's force
    events: list                # (time, name, state there)

    def instants(self, name: str) -> list:
        return [e[0] for e in self.events if e[1] == name]


def reference(times) -> Reference:
    """The reference (module docstring) at ``times`` (increasing, within [0, END])."""
    mode = ["open", 0]
    t0, z0, pieces, located = 0.0, np.array([0.0, 0.0, V0, V0, 0.0, 0.0]), [], []
    while True:
        sol = solve_ivp(_rhs, (t0, times[-1]), z0, args=(mode,),
                        events=[e[1] for e in EVENTS], method="DOP853", rtol=1e-12,
                        atol=ATOL, max_step=1e-3, dense_output=True)
        assert sol.success, sol.message
        pieces.append((t0, sol.t[-1], sol.sol, list(mode)))
        if sol.status != 1:
            break
        t0, z0 = sol.t[-1], sol.y[:, -1].copy()
        name = EVENTS[next(j for j, te in enumerate(sol.t_events) if len(te))][0]
        if name == "contact":
            mode[:] = ["elastic", 0]
        elif name == "crush":
            if not any(e[1] == "buckling" for e in located):
                located.append((t0, "buckling", z0.copy()))
            mode[:] = ["crushed", segment(z0[CRUSH])]
        elif name == "break":
            mode[1] += 1
            name = f"break{mode[1]}"
        elif name == "turn":
            mode[:] = ["elastic", 0]
        else:
            mode[:] = ["open", 0]
        located.append((t0, name, z0.copy()))
    z = np.zeros((len(times), 6))
    force = np.zeros(len(times))
    for a, b, dense, m in pieces:
        inside = np.flatnonzero((times >= a) & (times <= b))
        z[inside] = dense(times[inside]).T
        force[inside] = [support_force(row, m) for row in z[inside]]
    return Reference(np.asarray(times), z, force, located)


# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ref():
    return reference(np.round(np.arange(int(round(END / STEP)) + 1) * STEP, 12))


@pytest.fixture(scope="module")
def results():
    res = fem.run(fem.Study.load(STUDY))
    yield res
    res.close()


def test_the_study_is_the_reference_model():
    """The study's masses, springs, initial velocity and support are the ones the reference
    integrates."""
    data = study_table()
    blocks = data["discrete"]
    assert [(b.get("nodes"), b.get("cells"), b.get("mass"), b["stiffness"]) for b in blocks] \
        == [(["P1"], None, M1, KA), (["P2"], None, M2, KA), (None, ["SPAN"], None, KS)]
    assert data["mesh"]["cells"]["SPAN"]["nodes"] == ["P1", "P2"]
    assert data["model"]["components"] == ["DX"]
    assert data["initial"] == [{"nodes": ["P1", "P2"], "velocity": {"DX": V0}}]
    (link,) = data["link"]
    assert link == {"name": "support", "kind": "buckling", "nodes": ["P1"],
                    "normal": [1.0, 0.0, 0.0], "gap": GAP, "stiffness": KN,
                    "critical_force": FC, "plateau": PLATEAU, "post_buckling_force": FP,
                    "drop": DROP, "stages": [[STAGE[0], STAGE[1], 0.0]]}
    transient = [a for a in data["analysis"] if a["kind"] == "transient"]
    assert [a["name"] for a in transient] == list(ANALYSES)
    for a in transient:
        assert a["step"] == STEP and a["end"] == END and a["links"] == ["support"]


def test_the_reference_buckles_crushes_and_rebounds(ref):
    """What the study is built for: the support buckles, is crushed through the plateau,
    the drop and the post-buckling force into the stage, the pipe turns back, leaves it,
    and strikes it again at the gap the crush widened, elastically; the reference closes
    its own energy balance (kinetic + springs + the support's F^2 / (2 kn) + crush work =
    the initial kinetic energy) within 1e-10 of it."""
    names = [e[1] for e in ref.events]
    assert names == ["contact", "buckling", "crush", "break1", "break2", "break3", "turn",
                     "release", "contact", "release"]
    t = {name: ref.instants(name) for name in set(names)}
    assert t["contact"][0] == pytest.approx(2.0022e-3, abs=1e-7)      # GAP / V0, slowed
    assert t["buckling"][0] == pytest.approx(2.5098e-3, abs=1e-7)
    crush = ref.z[-1, CRUSH]
    assert crush == pytest.approx(0.017764, abs=1e-6) and crush > STAGE[0]
    # the second contact starts at p = u, and its force stays below the curve
    state = [e[2] for e in ref.events if e[1] == "contact"][1]
    assert state[X1] == pytest.approx(GAP + crush, abs=1e-12)
    second = (ref.t > t["contact"][1]) & (ref.t < t["release"][1])
    assert np.max(ref.force[second]) < 0.96 * crushing_force(crush)
    z = ref.z
    springs = 0.5 * (KA * z[:, X1] ** 2 + KA * z[:, X2] ** 2 + KS * (z[:, X1] - z[:, X2]) ** 2)
    kinetic = 0.5 * (M1 * z[:, V1] ** 2 + M2 * z[:, V2] ** 2)
    stored = ref.force ** 2 / (2 * KN)
    initial = 0.5 * (M1 + M2) * V0 ** 2
    assert np.max(np.abs(kinetic + springs + stored + z[:, WORK] - initial)) < 1e-10 * initial
    assert 0.6 < z[-1, WORK] / initial < 0.65


def fem_events(analysis) -> list:
    """(time, kind) of the support's events."""
    return [(float(e["time"]), str(e["kind"])) for e in analysis.events
            if e["link"] == "support"]


#: the bounds of each analysis, measured (in parentheses in the tests' docstrings): the
#: instants (s); the crush, the pipe's motion (displacements and velocities), the rebound
#: speed, the crush work and the support's stored energy relative to their peaks; the force
#: relative to F_c; the energy balance relative to the initial kinetic energy. The exact
#: scheme is exact to round-off; the Runge-Kutta 5(4) follows its tolerance (1e-9); Newmark
#: at 50 us makes the trapezoidal rule's period error (w h)^2 / 12 = 5e-5 on the contact's
#: 80 Hz and the pipe's modes, which the contact's stiffness turns into a force error of
#: 5e-4 of F_c.
TOL = {
    "exact": dict(instant=1e-12, crush=1e-10, motion=1e-10, rebound=1e-10, force=1e-9,
                  energy=1e-9, balance=1e-12),
    "modal_rk54": dict(instant=1e-9, crush=1e-8, motion=1e-7, rebound=1e-7, force=2e-7,
                       energy=1e-7, balance=1e-8),
    "newmark": dict(instant=3e-6, crush=2e-5, motion=5e-4, rebound=5e-5, force=2e-3,
                    energy=1e-3, balance=1e-12),
}


@pytest.mark.parametrize("name", ANALYSES)
def test_instants_of_contact_and_buckling(results, ref, name):
    """Every change of the support in fem's events table, in the reference's order and
    kinds (``impact``, ``buckling`` with ``crush``, ``drop``, ``post-buckling``, ``stage``,
    ``unload``, ``separation``, then the second ``impact`` and ``separation``), at the
    reference's instants within TOL[name]["instant"] (measured: exact 1.0e-13 s, Runge-Kutta
    8.6e-11 s, Newmark 1.2e-6 s, the second contact, after 130 ms of swinging)."""
    found = fem_events(results.analysis(name))
    expect = [(e[0], FEM_KINDS[e[1]]) for e in ref.events]
    assert [k for _, k in found] == [k for _, k in expect]
    errors = [abs(a - b) for (a, _), (b, _) in zip(found, expect)]
    print(f"{name}: instants within {max(errors):.2e} s")
    assert max(errors) <= TOL[name]["instant"]


def velocity_at_release(analysis, at: float) -> float:
    """P1's velocity at the release instant ``at``, from fem's state at the first archived
    instant after it, taken back to ``at`` by the pipe's free motion (no force from the
    support in between: x' = A x, solved by the matrix exponential)."""
    t = analysis.time
    k = int(np.searchsorted(t, at))
    state = np.array([analysis.series(f, n, "DX")[1][k] for f in ("displacement", "velocity")
                      for n in ("P1", "P2")])
    stiffness = np.array([[KA + KS, -KS], [-KS, KA + KS]])
    a = np.block([[np.zeros((2, 2)), np.eye(2)],
                  [-stiffness / np.array([[M1], [M2]]), np.zeros((2, 2))]])
    return float((scipy.linalg.expm(a * (at - t[k])) @ state)[2])


@pytest.mark.parametrize("name", ANALYSES)
def test_crush_and_rebound(results, ref, name):
    """The crush at every archived instant and the residual crush (what is left once the
    support unloads: the crush where the pipe turned back, kept to the end, to round-off)
    within TOL[name]["crush"] of it (measured: exact 1.2e-12, Runge-Kutta 1.8e-10, Newmark
    5.7e-6); the force at every instant within TOL[name]["force"] of F_c (7e-11, 2.9e-8,
    5.4e-4); the rebound speed, P1's at the release, within TOL[name]["rebound"] (8e-12,
    3.4e-9, 1.3e-5); the support buckled once and never carried more than F_c."""
    a = results.analysis(name)
    link = a.link("support")
    crush = link["crush"]
    tol = TOL[name]
    peak = ref.z[-1, CRUSH]
    errors = {"crush": np.max(np.abs(crush - ref.z[:, CRUSH])) / peak,
              "residual": abs(crush[-1] - peak) / peak,
              "force": np.max(np.abs(link["normal_force"] - ref.force)) / FC}
    turned = ref.instants("turn")[0]
    assert np.max(np.abs(crush[ref.t > turned] - crush[-1])) <= 1e-13 * peak
    assert np.max(link["normal_force"]) <= FC * (1.0 + 1e-9)
    assert np.array_equal(link["buckled"], (ref.t >= ref.instants("buckling")[0]) * 1.0)
    # the rebound: P1's velocity at the release
    release = ref.instants("release")[0]
    rebound = -velocity_at_release(a, release)
    expect = -next(e[2][V1] for e in ref.events if e[1] == "release")
    errors["rebound"] = abs(rebound - expect) / expect
    print(f"{name}: {errors}; rebound {rebound:.9f} m/s, reference {expect:.9f} m/s")
    assert errors["crush"] <= tol["crush"] and errors["residual"] <= tol["crush"]
    assert errors["force"] <= tol["force"] and errors["rebound"] <= tol["rebound"]
    assert expect == pytest.approx(0.3366, abs=1e-4)


@pytest.mark.parametrize("name", ANALYSES)
def test_pipe_motion(results, ref, name):
    """P1's and P2's displacements and velocities at every archived instant within
    TOL[name]["motion"] of their peaks (measured: exact 1.4e-11, Runge-Kutta 7.6e-9,
    Newmark 1.25e-4, P1's velocity)."""
    a = results.analysis(name)
    for node, x, v in (("P1", X1, V1), ("P2", X2, V2)):
        for field, col in (("displacement", x), ("velocity", v)):
            t, series = a.series(field, node, "DX")
            assert np.array_equal(np.round(t, 12), ref.t)
            error = np.max(np.abs(series - ref.z[:, col])) / np.max(np.abs(ref.z[:, col]))
            print(f"{name} {node} {field}: {error:.2e} of the peak")
            assert error <= TOL[name]["motion"]


@pytest.mark.parametrize("name", ANALYSES)
def test_energy_balance(results, ref, name):
    """fem's energy balance closes (kinetic + potential + link energy + dissipated = the
    initial kinetic energy; no external work) within TOL[name]["balance"] of it (measured:
    exact 1.8e-14, Newmark 2.6e-14, Runge-Kutta 1.2e-9); the support's dissipated energy is
    the crush work int Fc(u) du and its stored energy F^2 / (2 kn), against the
    reference's, within TOL[name]["energy"] of their peaks (measured: the crush work
    4.4e-13, 1.8e-10, 5.7e-6; the stored energy 9.9e-11, 2.0e-8, 4.6e-4)."""
    a = results.analysis(name)
    e = a.energy()
    terms = [e[k] for k in ("kinetic", "potential", "link_energy", "dissipated",
                            "external_work")]
    initial = 0.5 * (M1 + M2) * V0 ** 2
    assert e["kinetic"][0] == pytest.approx(initial, rel=1e-14)
    assert np.max(np.abs(e["external_work"])) == 0.0
    balance = terms[0] + terms[1] + terms[2] + terms[3] - terms[4]
    tol = TOL[name]
    print(f"{name}: balance within {np.max(np.abs(balance - initial)) / initial:.2e}")
    assert np.max(np.abs(balance - initial)) <= tol["balance"] * initial
    assert energy_balance_error(*terms) <= tol["balance"]
    link = a.link("support")
    work = ref.z[:, WORK]
    stored = ref.force ** 2 / (2 * KN)
    errors = (np.max(np.abs(link["dissipated"] - work)) / work[-1],
              np.max(np.abs(e["dissipated"] - work)) / work[-1],
              np.max(np.abs(e["link_energy"] - stored)) / np.max(stored))
    print(f"{name}: crush work, dissipated, stored energy errors {errors}")
    assert max(errors) <= tol["energy"]


def test_fem_post_shocks_reports_the_crush_and_the_instant_of_buckling(results, ref, capsys,
                                                                        tmp_path):
    """``fem post shocks``: the support's two impacts, its contact time, its peak force F_c,
    its residual crush and its instant of buckling, in every analysis (from the located
    events), against the reference; and the command's table."""
    from fem.cli import main
    from postpro.jobs.shocks import link_shocks

    contacts = [b - a for a, b in zip(ref.instants("contact"), ref.instants("release"))]
    for name in ANALYSES:
        stats = link_shocks(results.analysis(name), "support")
        assert stats.impacts == 2 and stats.source == "events"
        tol = TOL[name]
        assert stats.contact_time == pytest.approx(sum(contacts), abs=4 * tol["instant"])
        assert stats.max_force == pytest.approx(FC, rel=1e-9)
        assert stats.residual_crush == pytest.approx(ref.z[-1, CRUSH], rel=tol["crush"])
        assert stats.buckling_instant == pytest.approx(ref.instants("buckling")[0],
                                                       abs=tol["instant"])
    out = tmp_path / "v9b.h5"
    fem.run(fem.Study.load(STUDY).with_analyses("exact"), out=out).close()
    assert main(["post", "shocks", str(out), "-a", "exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0]
    assert "residual crush [m]" in header and "buckled at [s]" in header
    cells = lines[2].split()
    assert cells[0] == "support" and int(cells[1]) == 2
    assert float(cells[-3]) == pytest.approx(ref.z[-1, CRUSH], rel=1e-5)
    assert float(cells[-2]) == pytest.approx(ref.instants("buckling")[0], rel=1e-5)


def test_study_checks(results, ref):
    """The references of the study's checks are the reference solution's (P1's and P2's
    displacements, the instants of contact and of buckling), and the study passes them."""
    checks = study_table()["check"]
    seen = set()
    for check in checks:
        seen.add(check["quantity"])
        if check["quantity"] == "energy_balance_error":
            assert check["reference"] == 0.0
            continue
        if check["quantity"] == "event_time":
            assert check["link"] == "support"
            name = {v: k for k, v in FEM_KINDS.items()}[check["kind"]]
            expect = ref.instants(name)[check["event"] - 1]
        else:
            k = int(round(check["time"] / STEP))
            col = {("displacement", "P1"): X1, ("displacement", "P2"): X2,
                   ("velocity", "P1"): V1, ("velocity", "P2"): V2}[
                (check["quantity"], check["node"])]
            expect = ref.z[k, col]
        assert check["reference"] == pytest.approx(expect, rel=1e-9, abs=1e-12), check
    assert seen == {"displacement", "velocity", "event_time", "energy_balance_error"}
    assert {c["analysis"] for c in checks} == set(ANALYSES)
    table = results.checks
    assert len(table) == len(checks) and table["passed"].all()
