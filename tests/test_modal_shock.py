"""Shock links on a modal basis (central differences and adaptive2) against solutions written
here: the physical equations with their contacts, integrated by scipy's DOP853 at tight
tolerances in phases chained on the contact events."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from conftest import ROOT
from fem.errors import NotAvailableError
from postpro.energy import energy_balance_error, link_force_error


# ------------------------------------------------------------------------------------------
# the reference: M x'' + C x' + K x = f(t) - sum over closed contacts of F_j ell_j
def reference(M, C, K, force, contacts, x0, v0, end, rtol=1e-12, atol=1e-15, times=None):
    """Events [(t, contact, "impact" | "separation", p')], the displacement at ``times``, the
    work of f and the dissipated energy at the end (structural and contact dampers, plus the
    elastic energy a penetrated contact loses when the force rule opens it).

    contacts: [(ell (n,), gap, k, c, release)]; a contact is closed while p > 0 (and, with
    release "force", k p + c p' > 0), p = ell . x - gap.
    """
    M, C, K = (np.atleast_2d(np.asarray(a, float)) for a in (M, C, K))
    n = len(M)
    Minv = np.linalg.inv(M)

    def law(j, y):
        ell, gap, k, c, release = contacts[j]
        p = ell @ y[:n] - gap
        if release == "gap":
            return p
        return min(k * p, k * p + c * (ell @ y[n:2 * n]))

    def rhs(t, y, closed):
        x, v = y[:n], y[n:2 * n]
        f = force(t)
        total = f - C @ v - K @ x
        dissipation = v @ C @ v
        for j, (ell, gap, k, c, _) in enumerate(contacts):
            if closed[j]:
                pd = ell @ v
                total = total - (k * (ell @ x - gap) + c * pd) * ell
                dissipation += c * pd * pd
        return np.concatenate([v, Minv @ total, [f @ v, dissipation]])

    y = np.concatenate([x0, v0, [0.0, 0.0]]).astype(float)
    closed = [law(j, y) > 0 for j in range(len(contacts))]
    t, events, pieces = 0.0, [], []
    while t < end:
        def make(j):
            fn = lambda s, yy: law(j, yy)  # noqa: E731
            fn.terminal = True
            fn.direction = -1 if closed[j] else 1
            return fn
        phase = list(closed)
        sol = solve_ivp(lambda s, yy: rhs(s, yy, phase), (t, end), y, method="DOP853",
                        rtol=rtol, atol=atol, events=[make(j) for j in range(len(contacts))],
                        dense_output=True)
        pieces.append((t, sol.t[-1], sol.sol))
        y = sol.y[:, -1].copy()
        if sol.status != 1:
            break
        j = min((i for i in range(len(contacts)) if len(sol.t_events[i])),
                key=lambda i: sol.t_events[i][0])
        t = sol.t_events[j][0]
        ell, gap, k, c, release = contacts[j]
        p = ell @ y[:n] - gap
        if p > 0 and release == "force":
            # opened (or closed) while penetrated: the stored energy is lost (or given back)
            y[-1] += (0.5 if closed[j] else -0.5) * k * p * p
        closed[j] = not closed[j]
        events.append((t, j, "impact" if closed[j] else "separation", ell @ y[n:2 * n]))
    x = None
    if times is not None:
        x = np.empty((len(times), n))
        for i, s in enumerate(times):
            for t0, t1, dense in pieces:
                if t0 <= s <= t1:
                    x[i] = dense(s)[:n]
                    break
    return events, x, y[-2], y[-1]


# ------------------------------------------------------------------------------------------
# one dof: 2 kg on 200 N/m, 2 sin(7 t) N, starting at 0.4 m/s towards a plane 1 cm away
M1, K1, GAP1, KN1 = 2.0, 200.0, 0.01, 1e4


def one_dof_toml(scheme_lines, *, c=0.0, cn=0.0, release="force", end=1.5):
    return f"""
[mesh.nodes]
P = [0.0, 0.0, 0.0]
[model]
components = ["DX"]
[[discrete]]
nodes = ["P"]
mass = {M1}
stiffness = {K1}
damping = {c}
[functions.f]
expression = "2*sin(7*t)"
[[load]]
name = "f"
nodes = ["P"]
FX = 1.0
function = "f"
[[initial]]
nodes = ["P"]
displacement = {{ DX = 0.0 }}
velocity = {{ DX = 0.4 }}
[[link]]
name = "stop"
kind = "shock"
nodes = ["P"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = {GAP1}
stiffness = {KN1}
damping = {cn}
release = "{release}"
[[analysis]]
name = "modes"
kind = "modes"
count = 1
[[analysis]]
name = "a"
kind = "transient"
basis = "modal"
modes = "modes"
end = {end}
links = ["stop"]
{scheme_lines}
"""


def one_dof_reference(c=0.0, cn=0.0, release="force", end=1.5, times=None):
    return reference([[M1]], [[c]], [[K1]], lambda t: np.array([2 * np.sin(7 * t)]),
                     [(np.array([1.0]), GAP1, KN1, cn, release)], np.zeros(1),
                     np.array([0.4]), end, times=times)


def read(f, name="a"):
    g = f["analyses"][name]
    ev = g["events"][:]
    kinds = [k.decode() if isinstance(k, bytes) else k for k in ev["kind"]]
    energy = {k: g["energy"][k][:] for k in g["energy"]}
    link = {k: g["links/stop"][k][:] for k in ("normal_force", "penetration", "state")}
    return g, ev["time"], kinds, energy, link


def balance(energy):
    return energy_balance_error(*(energy[k] for k in ("kinetic", "potential", "link_energy",
                                                      "dissipated", "external_work")))


@pytest.fixture(scope="module")
def one_dof_events():
    return one_dof_reference()[0]


def test_one_dof_central_differences_event_times(run_toml, one_dof_events):
    """Events dated at the step where the penetration changes sign: within a step of the
    reference, and closer with a smaller step."""
    assert len(one_dof_events) == 8
    ref_t = np.array([e[0] for e in one_dof_events])
    errors = []
    for dt in (1e-4, 1e-5):
        f = run_toml(one_dof_toml(f'scheme = "central_difference"\nstep = {dt}\n'
                                  f'archive = {{ every = 10 }}'), name=f"cd{dt:g}")
        _, t, kinds, energy, link = read(f)
        assert kinds == [e[2] for e in one_dof_events]
        err = np.max(np.abs(t - ref_t))
        errors.append(err)
        print(f"central differences dt = {dt:g} s: max event time error {err:.3g} s")
        assert err <= 1.5 * dt
        # the event lies on the grid: the first step past the crossing
        assert np.allclose(t / dt, np.round(t / dt), atol=1e-6)
    assert errors[1] < errors[0] / 5


def test_one_dof_adaptive2_locates_events(run_toml, one_dof_events):
    ref_t = np.array([e[0] for e in one_dof_events])
    f = run_toml(one_dof_toml('scheme = "adaptive2"\ntolerance = 1e-9\nstep = 1e-3'))
    g, t, kinds, energy, link = read(f)
    assert kinds == [e[2] for e in one_dof_events]
    print(f"adaptive2: max event time error {np.max(np.abs(t - ref_t)):.3g} s")
    assert np.max(np.abs(t - ref_t)) < 2e-8
    # the detail column: side and approach speed p' at each event
    for row, e in zip(g["events"][:], one_dof_events):
        detail = row["detail"].decode() if isinstance(row["detail"], bytes) else row["detail"]
        assert detail.startswith("side +, approach speed ")
        speed = float(detail.split("approach speed ")[1].split()[0])
        assert speed == pytest.approx(e[3], rel=1e-6)
    # the archived displacement against the reference
    times = g["time"][:]
    _, xr, _, _ = one_dof_reference(times=times)
    error = np.max(np.abs(g["displacement"][:, 0] - xr[:, 0]))
    print(f"adaptive2: max displacement error {error:.3g} m")
    assert error < 1e-8
    # every row of the generalized coordinates is the recombined one (u = q / sqrt(m))
    for name, field in (("q", "displacement"), ("qdot", "velocity")):
        assert np.allclose(g[f"generalized/{name}"][:, 0] ** 2 / M1, g[field][:, 0] ** 2,
                           rtol=1e-12, atol=0.0)


# ------------------------------------------------------------------------------------------
# three masses in a chain, non-proportional damping (coupled modal equations), a plane on
# the middle mass and a two-planes obstacle with contact damping on the last one
CHAIN = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
P1 = [1.0, 0.0, 0.0]
P2 = [2.0, 0.0, 0.0]
P3 = [3.0, 0.0, 0.0]
[mesh.cells]
S1 = { type = "SEG2", nodes = ["A", "P1"] }
S2 = { type = "SEG2", nodes = ["P1", "P2"] }
S3 = { type = "SEG2", nodes = ["P2", "P3"] }
[model]
components = ["DX"]
[[discrete]]
cells = ["S1"]
stiffness = 4.0e4
[[discrete]]
cells = ["S2"]
stiffness = 3.0e4
damping = 6.0
[[discrete]]
cells = ["S3"]
stiffness = 2.0e4
[[discrete]]
nodes = ["P1"]
mass = 1.0
[[discrete]]
nodes = ["P2"]
mass = 1.5
[[discrete]]
nodes = ["P3"]
mass = 2.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[functions.f]
expression = "60*sin(30*t)"
[[load]]
name = "f"
nodes = ["P3"]
FX = 1.0
function = "f"
[[initial]]
nodes = ["P3"]
displacement = { DX = 0.0 }
velocity = { DX = 0.3 }
[[link]]
name = "stop2"
kind = "shock"
nodes = ["P2"]
obstacle = "plane"
normal = [1.0, 0.0, 0.0]
gap = 0.002
stiffness = 2e5
[[link]]
name = "box3"
kind = "shock"
nodes = ["P3"]
obstacle = "two_planes"
normal = [1.0, 0.0, 0.0]
gap = 0.004
stiffness = 3e5
damping = 30.0
release = "gap"
[[analysis]]
name = "modes"
kind = "modes"
count = 3
[[analysis]]
name = "a"
kind = "transient"
basis = "modal"
modes = "modes"
end = 0.4
links = ["stop2", "box3"]
"""


def chain_reference(times):
    M = np.diag([1.0, 1.5, 2.0])
    K = np.array([[7e4, -3e4, 0.0], [-3e4, 5e4, -2e4], [0.0, -2e4, 2e4]])
    C = np.array([[6.0, -6.0, 0.0], [-6.0, 6.0, 0.0], [0.0, 0.0, 0.0]])
    e2, e3 = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    contacts = [(e2, 0.002, 2e5, 0.0, "force"), (e3, 0.004, 3e5, 30.0, "gap"),
                (-e3, 0.004, 3e5, 30.0, "gap")]
    return reference(M, C, K, lambda t: np.array([0.0, 0.0, 60 * np.sin(30 * t)]), contacts,
                     np.zeros(3), np.array([0.0, 0.0, 0.3]), 0.4, rtol=1e-11, atol=1e-14,
                     times=times)


@pytest.mark.parametrize("scheme, lines, x_tol, t_tol", [
    ("adaptive2", 'scheme = "adaptive2"\ntolerance = 1e-8\nstep = 1e-3', 5e-6, 1e-7),
    ("central_difference", 'scheme = "central_difference"\nstep = 2e-6\n'
                           'archive = { every = 500 }', 5e-4, 1e-5),
])
def test_chain_on_all_modes_matches_physical_reference(run_toml, scheme, lines, x_tol, t_tol):
    """All three modes: the modal run is the physical system, so the link rows Phi^T ell must
    give the physical contacts (both sides of the two-planes obstacle included)."""
    f = run_toml(CHAIN + lines, name=scheme)
    g = f["analyses/a"]
    times = g["time"][:]
    events, x, _, _ = chain_reference(times)
    ev = g["events"][:]
    links = [s.decode() if isinstance(s, bytes) else s for s in ev["link"]]
    kinds = [s.decode() if isinstance(s, bytes) else s for s in ev["kind"]]
    names = ["stop2", "box3", "box3"]
    assert len(events) >= 6 and {e[1] for e in events} == {0, 1, 2}
    assert links == [names[e[1]] for e in events]
    assert kinds == [e[2] for e in events]
    u = g["displacement"][:, 1:]
    print(f"{scheme}: {len(events)} events, max time error "
          f"{np.max(np.abs(ev['time'] - np.array([e[0] for e in events]))):.3g} s, "
          f"displacement {np.max(np.abs(u - x)) / np.max(np.abs(x)):.3g} (relative)")
    assert np.max(np.abs(ev["time"] - np.array([e[0] for e in events]))) < t_tol
    assert np.max(np.abs(u - x)) < x_tol * np.max(np.abs(x))
    assert bool(g.attrs["coupled_damping"])


# ------------------------------------------------------------------------------------------
def test_energy_balance_closes_with_the_step(run_toml):
    """Central differences with structural and contact damping: E - E0 - W small, smaller
    with a smaller step; the archived work and dissipated energy against the reference's
    integrals of f v and of the dampers' power."""
    _, _, work, dissipated = one_dof_reference(c=0.5, cn=20.0, release="gap")
    errors = []
    for dt in (4e-4, 2e-4, 1e-4):
        f = run_toml(one_dof_toml(f'scheme = "central_difference"\nstep = {dt}\n'
                                  f'archive = {{ every = 5 }}', c=0.5, cn=20.0,
                                  release="gap"), name=f"e{dt:g}")
        _, _, _, energy, _ = read(f)
        errors.append(balance(energy))
        print(f"dt = {dt:g}: energy balance {errors[-1]:.3g}, W {energy['external_work'][-1]:.9g}"
              f" / {work:.9g}, D {energy['dissipated'][-1]:.9g} / {dissipated:.9g}")
        assert energy["external_work"][-1] == pytest.approx(work, rel=50 * dt)
        assert energy["dissipated"][-1] == pytest.approx(dissipated, rel=50 * dt)
    assert errors[0] < 1e-2 and errors[1] < errors[0] and errors[2] < errors[1]
    f = run_toml(one_dof_toml('scheme = "adaptive2"\ntolerance = 1e-9\nstep = 1e-3', c=0.5,
                              cn=20.0, release="gap"), name="e_adaptive2")
    _, _, _, energy, _ = read(f)
    print(f"adaptive2: energy balance {balance(energy):.3g}, W {energy['external_work'][-1]:.9g}"
          f", D {energy['dissipated'][-1]:.9g}")
    assert balance(energy) < 1e-6
    assert energy["external_work"][-1] == pytest.approx(work, rel=1e-6)
    assert energy["dissipated"][-1] == pytest.approx(dissipated, rel=1e-6)


@pytest.mark.parametrize("lines", ['scheme = "central_difference"\nstep = 1e-4',
                                   'scheme = "adaptive2"\nstep = 1e-3'])
def test_undamped_contact_force_is_k_p(run_toml, lines):
    f = run_toml(one_dof_toml(lines))
    g, _, _, energy, link = read(f)
    x = g["displacement"][:, 0]
    closed = link["state"] > 0
    assert closed.any() and not closed.all()
    # the force follows the penetration of the recombined displacement
    assert np.all(link["normal_force"][~closed] == 0.0)
    assert np.allclose(link["normal_force"][closed], KN1 * (x[closed] - GAP1), rtol=1e-12,
                       atol=0.0)
    assert link_force_error(link["normal_force"], link["penetration"], KN1) < 1e-12
    assert np.allclose(energy["link_energy"],
                       np.where(closed, 0.5 * KN1 * (x - GAP1) ** 2, 0.0), rtol=1e-12, atol=0)


def test_force_and_gap_release_with_contact_damping(run_toml):
    """With a strong contact damper the force k p + c p' turns negative before the gap
    reopens: release "force" opens the contact there (the force never pulls, the mass leaves
    still penetrated), release "gap" keeps it until p = 0 and pulls meanwhile."""
    cn = 150.0
    out = {}
    for release in ("force", "gap"):
        events, _, _, dissipated = one_dof_reference(cn=cn, release=release, end=0.4)
        f = run_toml(one_dof_toml('scheme = "adaptive2"\ntolerance = 1e-9\nstep = 1e-4',
                                  cn=cn, release=release, end=0.4), name=release)
        _, t, kinds, energy, link = read(f)
        assert kinds == [e[2] for e in events]
        print(f"release {release}: {len(events)} events, max time error "
              f"{np.max(np.abs(t - np.array([e[0] for e in events]))):.3g} s")
        assert np.max(np.abs(t - np.array([e[0] for e in events]))) < 1e-7
        out[release] = (t, link, energy)
        # with "force" the elastic energy left at the opening counts as dissipated
        assert energy["dissipated"][-1] == pytest.approx(dissipated, rel=1e-6)
        fc = run_toml(one_dof_toml('scheme = "central_difference"\nstep = 1e-5', cn=cn,
                                   release=release, end=0.4), name=release + "_cd")
        _, tc, kinds_c, _, link_c = read(fc)
        print(f"  central differences: max time difference {np.max(np.abs(tc - t)):.3g} s, "
              f"least force {np.min(link_c['normal_force']):.3g} N")
        assert kinds_c == kinds and np.max(np.abs(tc - t)) < 2e-5
        if release == "force":
            assert np.min(link_c["normal_force"]) >= 0.0
        else:
            assert np.min(link_c["normal_force"]) < -1.0
    t_force, link_force, energy_force = out["force"]
    t_gap, link_gap, _ = out["gap"]
    assert np.min(link_force["normal_force"]) >= -1e-9 * np.max(link_force["normal_force"])
    assert np.min(link_gap["normal_force"]) < -1.0
    # the first separation comes earlier with the force rule, while still penetrated
    assert t_force[1] < t_gap[1] - 1e-4
    open_penetrated = (link_force["state"] == 0) & (link_force["penetration"] > 1e-5)
    assert open_penetrated.any()
    print(f"release force: energy balance {balance(energy_force):.3g}")
    assert balance(energy_force) < 1e-6


def test_refused_combinations(run_toml):
    with pytest.raises(NotAvailableError, match="static_correction"):
        run_toml(one_dof_toml('scheme = "adaptive2"\nstatic_correction = true'),
                 name="correction")


def test_modal_link_options_refused_before_any_results_file(tmp_path, capsys):
    """Options a modal analysis with links cannot honour stop the run before the results
    file is created, naming the key."""
    from fem.cli import main

    text = (ROOT / "studies" / "v2_impact_oscillator.toml").read_text()
    start = text.index('name = "modal_cd"')
    cases = [
        (text[:start] + text[start:].replace("step = 4e-6", "step = 4e-6\nstatic_correction = true",
                                             1),
         "analysis[3].static_correction: not available with links"),
    ]
    for i, (study, message) in enumerate(cases):
        path = tmp_path / f"case{i}.toml"
        path.write_text(study)
        out = tmp_path / f"case{i}.h5"
        assert main(["run", str(path), "--out", str(out), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert message in err and not out.exists(), err
