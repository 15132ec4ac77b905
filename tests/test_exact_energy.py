"""Energy terms of the exact scheme and the exact scheme on a modal basis, against
independent integrations written here."""

import numpy as np
from scipy.integrate import solve_ivp

from conftest import ROOT, oscillator_toml
from postpro.energy import energy_balance_error, link_force_error

MASS, STIFF, DAMP = 2.0, 800.0, 3.0
F0, OMEGA_F, F1 = 40.0, 7.0, 5.0


def _energies(f, name):
    g = f["analyses"][name]["energy"]
    return {k: g[k][:] for k in g}


def test_closed_form_energies_of_a_damped_oscillator_under_sine_and_constant_force(run_toml):
    """Dissipated energy and external work against solve_ivp on the state augmented with
    D' = c v^2 and W' = F v; kinetic and potential energy against the same states."""
    text = oscillator_toml(mass=MASS, stiffness=STIFF, damping=DAMP, u0=0.01, v0=-0.2,
                           force=1.0, function="f", scheme="exact", step=0.01, end=3.0,
                           extra=f'[functions.f]\nexpression = "{F0}*sin({OMEGA_F}*t) + {F1}"\n')
    f = run_toml(text)
    e = _energies(f, "a")
    t = f["analyses/a/time"][:]

    def rhs(t, y):
        x, v, _, _ = y
        force = F0 * np.sin(OMEGA_F * t) + F1
        a = (force - DAMP * v - STIFF * x) / MASS
        return [v, a, DAMP * v * v, force * v]

    ref = solve_ivp(rhs, (0, 3.0), [0.01, -0.2, 0.0, 0.0], method="DOP853", t_eval=t,
                    rtol=1e-13, atol=1e-15).y
    scale = np.max(np.abs(ref[3]))
    assert np.max(np.abs(e["external_work"] - ref[3])) < 1e-9 * scale
    assert np.max(np.abs(e["dissipated"] - ref[2])) < 1e-9 * scale
    assert np.max(np.abs(e["kinetic"] - 0.5 * MASS * ref[1] ** 2)) < 1e-9 * scale
    assert np.max(np.abs(e["potential"] - 0.5 * STIFF * ref[0] ** 2)) < 1e-9 * scale
    assert energy_balance_error(*(e[k] for k in ("kinetic", "potential", "link_energy",
                                                 "dissipated", "external_work"))) < 1e-12


def test_falling_mass_energies_both_propagators(run_toml):
    """V1b (free flight: matrix exponential; contact: closed form): the work of gravity is
    m g (z0 - z) and the balance closes for both release rules, the force rule counting the
    spring energy left at its release as dissipated."""
    import h5py

    from fem.runner import run_study

    out = ROOT / "tests" / "_v1b_energy.h5"
    try:
        run_study(ROOT / "studies" / "v1b_falling_mass_absorbent.toml", out)
        with h5py.File(out, "r") as f:
            for name in ("exact_gap", "exact_force"):
                g = f["analyses"][name]
                z = g["displacement"][:, 2]
                e = {k: g["energy"][k][:] for k in g["energy"]}
                assert np.max(np.abs(e["external_work"] - 1.0 * 10.0 * (0.0 - z))) < 1e-12
                error = energy_balance_error(*(e[k] for k in ("kinetic", "potential",
                                                              "link_energy", "dissipated",
                                                              "external_work")))
                assert error < 1e-12, (name, error)
                assert e["dissipated"][-1] > 0.5     # the damper took a good part of it
    finally:
        out.unlink(missing_ok=True)


def test_v2_exact_energy_balance_and_link_force(tmp_path):
    from fem.runner import run_study
    import h5py

    text = (ROOT / "studies" / "v2_impact_oscillator.toml").read_text()
    cut = text.index("[[check]]")
    path = tmp_path / "v2.toml"
    path.write_text(text[:cut] + '[output]\nfile = "v2.h5"\n')
    run_study(path, tmp_path / "v2.h5")
    with h5py.File(tmp_path / "v2.h5", "r") as f:
        g = f["analyses/exact"]
        e = {k: g["energy"][k][:] for k in g["energy"]}
        error = energy_balance_error(*(e[k] for k in ("kinetic", "potential", "link_energy",
                                                      "dissipated", "external_work")))
        assert error < 1e-9
        assert np.all(e["dissipated"] == 0)
        link = g["links/stop"]
        assert link_force_error(link["normal_force"][:], link["penetration"][:], 1e10) < 1e-8
        # the shock energy is the elastic energy of the contact: k p^2 / 2 while in contact
        pen = link["penetration"][:]
        expected = np.where(link["state"][:] > 0, 0.5e10 * np.maximum(pen, 0) ** 2, 0.0)
        assert np.allclose(e["link_energy"], expected, rtol=1e-12, atol=1e-12)


CHAIN = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
P1 = [1.0, 0.0, 0.0]
P2 = [2.0, 0.0, 0.0]
P3 = [3.0, 0.0, 0.0]
[mesh.cells]
S1 = {{ type = "SEG2", nodes = ["A", "P1"] }}
S2 = {{ type = "SEG2", nodes = ["P1", "P2"] }}
S3 = {{ type = "SEG2", nodes = ["P2", "P3"] }}
[model]
components = ["DX"]
[[discrete]]
cells = ["S1", "S2", "S3"]
stiffness = 4.0e4
damping = 2.0
[[discrete]]
nodes = ["P1", "P2", "P3"]
mass = 1.5
[[constraint]]
nodes = ["A"]
DX = 0.0
[functions.f]
expression = "30*sin(25*t)"
[[load]]
name = "push"
nodes = ["P3"]
FX = 1.0
function = "f"
[[link]]
name = "stop"
kind = "shock"
nodes = ["P3"]
normal = [1.0, 0.0, 0.0]
gap = 1.0e-3
stiffness = 1.0e6
damping = 20.0
release = "{release}"
[[analysis]]
name = "modes"
kind = "modes"
count = 3
[[analysis]]
name = "physical"
kind = "transient"
scheme = "exact"
end = 1.0
step = 0.005
links = ["stop"]
[[analysis]]
name = "modal"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "exact"
end = 1.0
step = 0.005
links = ["stop"]
"""


def test_exact_scheme_on_a_modal_basis_matches_physical_space(run_toml):
    """With all modes, the modal exact scheme is the physical one in other coordinates:
    the same events and displacements; both against solve_ivp with event location."""
    for release in ("gap", "force"):
        f = run_toml(CHAIN.format(release=release), name=release)
        ev_p = f["analyses/physical/events"][:]
        ev_m = f["analyses/modal/events"][:]
        assert len(ev_p) >= 4 and len(ev_p) == len(ev_m)
        assert np.max(np.abs(ev_p["time"] - ev_m["time"])) < 1e-10
        up = f["analyses/physical/displacement"][:]
        um = f["analyses/modal/displacement"][:]
        assert np.max(np.abs(up - um)) < 1e-10 * np.max(np.abs(up))
        assert "generalized/q" in f["analyses/modal"]
        e = {k: f["analyses/modal/energy"][k][:] for k in f["analyses/modal/energy"]}
        assert energy_balance_error(*(e[k] for k in ("kinetic", "potential", "link_energy",
                                                     "dissipated", "external_work"))) < 1e-10
        if release == "gap":
            _against_solve_ivp(ev_p["time"], f["analyses/physical/time"][:], up)


def _against_solve_ivp(event_times, t_out, u):
    """The chain with the gap-release contact integrated phase by phase with solve_ivp."""
    m, k, c, kc, cc, gap = 1.5, 4.0e4, 2.0, 1.0e6, 20.0, 1.0e-3
    K = k * np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 1]], float)
    C = c / k * K

    def rhs(contact):
        def f(t, y):
            x, v = y[:3], y[3:]
            force = np.array([0, 0, 30 * np.sin(25 * t)])
            if contact:
                force[2] -= kc * (x[2] - gap) + cc * v[2]
            return np.concatenate([v, (force - K @ x - C @ v) / m])
        return f

    def pen(t, y):
        return y[2] - gap

    y, t, contact, found = np.zeros(6), 0.0, False, []
    while t < 1.0:
        pen.terminal, pen.direction = True, (-1 if contact else 1)
        sol = solve_ivp(rhs(contact), (t, 1.0), y, method="DOP853", rtol=1e-12, atol=1e-15,
                        events=pen)
        if sol.status == 1:
            t, y = sol.t_events[0][0], sol.y_events[0][0]
            found.append(t)
            contact = not contact
            # step just past the root so the same crossing is not found again
            nudge = solve_ivp(rhs(contact), (t, t + 1e-12), y, method="DOP853", rtol=1e-12,
                              atol=1e-15)
            t, y = nudge.t[-1], nudge.y[:, -1]
        else:
            break
    found = np.array(found)
    assert len(found) == len(event_times)
    assert np.max(np.abs(found - event_times)) < 1e-9


def test_fem_post_energy_on_the_v1b_study(tmp_path, capsys):
    """`fem post energy` on a results file of studies/v1b: the table's external work is the
    work of gravity m g (z0 - z) at the archived instants, the balance error is round-off."""
    import re

    from fem.runner import run_study
    from postpro.cli import main as post

    out = tmp_path / "v1b.h5"
    run_study(ROOT / "studies" / "v1b_falling_mass_absorbent.toml", out)
    capsys.readouterr()
    csv_file = tmp_path / "energy.csv"
    assert post(["energy", str(out), "--analysis", "exact_gap", "-o", str(csv_file)]) == 0
    printed = capsys.readouterr().out
    error = float(re.search(r"energy balance error: (\S+)", printed)[1])
    assert error < 1e-12
    lines = csv_file.read_text().splitlines()
    data = np.array([line.split(",") for line in lines[1:]], float)
    import h5py

    with h5py.File(out, "r") as f:
        z = f["analyses/exact_gap/displacement"][:, 2]
    assert data.shape[0] == len(z)
    # (the table prints 9 significant digits)
    assert np.allclose(data[:, 5], 10.0 * (0.0 - z), rtol=1e-8, atol=1e-12)
    # at the end the mass flies again: what the damper took is the lost mechanical energy
    assert data[-1, 4] > 0.5
