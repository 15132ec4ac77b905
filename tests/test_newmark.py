"""Physical-space schemes against independent solutions (matrix exponential, closed forms)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from conftest import ROOT, oscillator_toml, series


def exact_linear(M, C, K, F, t, u0=None, v0=None, switch_off=None):
    """Exact response of M u'' + C u' + K u = F (constant), with F removed at t = switch_off,
    by the matrix exponential of the first-order system (independent of fem)."""
    n = len(F)
    Minv = np.linalg.inv(M)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ C]])
    b = np.concatenate([np.zeros(n), Minv @ F])
    z0 = np.concatenate([np.zeros(n) if u0 is None else u0, np.zeros(n) if v0 is None else v0])
    # augmented matrix: exp([[A, b], [0, 0]] t) carries the constant forcing exactly
    Aug = np.zeros((2 * n + 1, 2 * n + 1))
    Aug[:2 * n, :2 * n] = A
    Aug[:2 * n, 2 * n] = b
    out = np.empty((len(t), 2 * n))
    for i, ti in enumerate(t):
        if switch_off is None or ti <= switch_off:
            out[i] = (scipy.linalg.expm(Aug * ti) @ np.append(z0, 1.0))[:2 * n]
        else:
            z1 = (scipy.linalg.expm(Aug * switch_off) @ np.append(z0, 1.0))[:2 * n]
            out[i] = scipy.linalg.expm(A * (ti - switch_off)) @ z1
    return out


def chain3_exact(t):
    """V3: DX of N2, N3 built by hand: springs 28e4 and 28e2, dampers 50, masses 10, F = 5 N
    on N3 for 1 s (the table's 1e-7 s ramp is taken as a step at its mid-point)."""
    k1, k2, c, m = 28e4, 28e2, 50.0, 10.0
    M = np.diag([m, m])
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    C = np.array([[2 * c, -c], [-c, c]])
    return exact_linear(M, C, K, np.array([0.0, 5.0]), t, switch_off=1.0 + 0.5e-7)


def test_v3_newmark_matches_matrix_exponential(tmp_path):
    import h5py
    from fem.runner import run_study

    report = run_study(ROOT / "studies" / "v3_chain3.toml", tmp_path / "v3.h5")
    assert report.checks_passed
    assert sum(r.analysis == "newmark" for r in report.check_rows) == 25
    with h5py.File(tmp_path / "v3.h5") as f:
        comps = [c.decode() if isinstance(c, bytes) else c for c in f["dofs/component"][:]]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["mesh/node_names"][:]]
        dof = next(i for i, (nd, c) in enumerate(zip(f["dofs/node"][:], comps))
                   if names[nd] == "N3" and c == "DX")
        t, u = series(f, "newmark", "displacement", dof)
        _, v = series(f, "newmark", "velocity", dof)
    exact = chain3_exact(t)
    err_u = np.max(np.abs(u - exact[:, 1])) / np.max(np.abs(exact[:, 1]))
    err_v = np.max(np.abs(v - exact[:, 3])) / np.max(np.abs(exact[:, 3]))
    print(f"V3 Newmark dt = 1e-3: max error of u(N3) = {err_u:.2e}, of v(N3) = {err_v:.2e} "
          f"(relative to the peak)")
    # average acceleration at omega dt ~ 0.17 for the stiff mode: a few 1e-3 of the peak
    assert err_u < 5e-3 and err_v < 2e-2


@pytest.mark.parametrize("scheme,params", [("newmark", ""), ("hht", "alpha = -0.1")])
def test_second_order_convergence(run_toml, scheme, params):
    """Error ratio near 4 when the step halves (damped oscillator under a constant force)."""
    m, k, c, F = 2.0, 50.0, 0.8, 3.0
    errors = []
    for step in (0.02, 0.01, 0.005):
        f = run_toml(oscillator_toml(mass=m, stiffness=k, damping=c, force=F, scheme=scheme,
                                     step=step, end=2.0, params=params), name=f"{scheme}{step}")
        t, u = series(f, "a", "displacement", 0)
        exact = exact_linear(np.eye(1) * m, np.eye(1) * c, np.eye(1) * k, np.array([F]), t)[:, 0]
        errors.append(np.max(np.abs(u - exact)))
    ratios = errors[0] / errors[1], errors[1] / errors[2]
    print(scheme, errors, ratios)
    assert all(3.7 < r < 4.3 for r in ratios)


def test_hht_damps_high_frequencies(run_toml):
    """As omega dt -> infinity the HHT amplification matrix has the double eigenvalue
    -(1 + alpha) / (1 - alpha): u_n = (a + b n) rho^n (-1)^n, so u_n / (-rho)^n is affine in n.
    The average-acceleration Newmark keeps the amplitude (|lambda| = 1); low frequencies are
    barely damped by HHT."""
    alpha = -0.2
    rho = (1 + alpha) / (1 - alpha)
    stiff = dict(mass=1.0, stiffness=1e12, u0=1e-3, step=0.01, end=0.6)   # omega dt = 1e4
    f = run_toml(oscillator_toml(scheme="hht", params=f"alpha = {alpha}", **stiff), name="hht")
    _, u = series(f, "a", "displacement", 0)
    n = np.arange(len(u))

    def curvature(r):
        w = u / (-r) ** n
        return np.max(np.abs(np.diff(w, 2)[20:])) / np.max(np.abs(w))

    assert curvature(rho) < 1e-5
    assert curvature(rho * 1.01) > 1e-4 and curvature(rho / 1.01) > 1e-4   # the test can fail
    assert abs(u[-1]) < 1e-6 * abs(u[0]) * len(u)
    g = run_toml(oscillator_toml(scheme="newmark", **stiff), name="nm")
    _, u = series(g, "a", "displacement", 0)
    assert np.allclose(np.abs(u), 1e-3, rtol=1e-3)   # round-off only, no decay
    # low frequency: omega dt = 2 pi / 1000; after one period the amplitude is kept to 1e-3
    low = run_toml(oscillator_toml(mass=1.0, stiffness=(2 * np.pi) ** 2, u0=1.0, step=1e-3,
                                   end=1.0, scheme="hht", params=f"alpha = {alpha}"), name="low")
    _, u = series(low, "a", "displacement", 0)
    assert abs(u[-1] - 1.0) < 1e-3


def test_central_difference_stability(run_toml):
    """u_n+1 - (2 - w^2 dt^2) u_n + u_n-1 = 0: stable (|lambda| = 1) for w dt < 2; above, the
    amplitude grows by the larger root |lambda| each step."""
    m, k = 1.0, 100.0
    omega = np.sqrt(k / m)
    critical = 2 / omega
    # below: u_n = u0 cos(n theta) with cos(theta) = 1 - (w dt)^2 / 2, exactly
    dt = 0.9 * critical
    f = run_toml(oscillator_toml(mass=m, stiffness=k, u0=1.0, scheme="central_difference",
                                 step=dt, end=500 * dt), name="below")
    t, u = series(f, "a", "displacement", 0)
    theta = np.arccos(1 - (omega * dt) ** 2 / 2)
    assert np.allclose(u, np.cos(np.arange(len(u)) * theta), atol=1e-9)
    # above: growth factor from the characteristic equation
    dt = 1.1 * critical
    with pytest.warns(UserWarning, match="stability limit"):
        f = run_toml(oscillator_toml(mass=m, stiffness=k, u0=1.0, scheme="central_difference",
                                     step=dt, end=40 * dt), name="above")
    _, u = series(f, "a", "displacement", 0)
    b = 2 - (omega * dt) ** 2
    growth = max(abs(np.roots([1.0, -b, 1.0])))
    assert np.allclose(np.abs(u[21:] / u[20:-1]), growth, rtol=1e-6)


def test_damped_central_difference_matches_newmark_beta0_closed_form(run_toml):
    """With damping, central differences converge at second order too."""
    m, k, c, F = 1.0, 400.0, 2.0, 1.0
    errs = []
    for dt in (0.004, 0.002):
        f = run_toml(oscillator_toml(mass=m, stiffness=k, damping=c, force=F, step=dt, end=1.0,
                                     scheme="central_difference"), name=f"cd{dt}")
        t, u = series(f, "a", "displacement", 0)
        exact = exact_linear(np.eye(1) * m, np.eye(1) * c, np.eye(1) * k, np.array([F]), t)[:, 0]
        errs.append(np.max(np.abs(u - exact)))
    assert 3.6 < errs[0] / errs[1] < 4.4
