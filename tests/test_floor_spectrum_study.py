"""studies/floor_spectrum.toml: its reference values come from an independent solution of the
four-dof building (matrices written here, the record read from the study's table, the state
equation stepped by matrix exponentials over each segment of the record, exact for a
piecewise-linear ground acceleration); the study's checks pass, fem's absolute accelerations
match that solution over the whole run, and so does the floor spectrum of the roof."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm

import postpro
from postpro.cli import main as post

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "studies" / "floor_spectrum.toml"
K, KE, CE = 2.5e7, 5.0532e5, 402.0          # storey and equipment springs, equipment damper
MF, ME = 2.0e4, 200.0                       # floor and equipment masses
NODES = ("F1", "F2", "F3", "EQ")
STEP, END = 0.005, 8.0


def matrices():
    M = np.diag([MF, MF, MF, ME])
    Ks = np.array([[2 * K, -K, 0, 0], [-K, 2 * K, -K, 0], [0, -K, K + KE, -KE],
                   [0, 0, -KE, KE]])
    Cd = np.zeros((4, 4))
    Cd[2:, 2:] = CE * np.array([[1, -1], [-1, 1]])
    # Rayleigh a M + b K with xi(f) = a / (4 pi f) + b pi f = 0.05 at 2.5 and 7 Hz
    f = np.array([2.5, 7.0])
    a, b = np.linalg.solve(np.column_stack([1 / (4 * np.pi * f), np.pi * f]), [0.05, 0.05])
    return M, Ks, a * M + b * Ks + Cd


def independent():
    """(t, u, v, absolute acceleration) at every 5 ms from 0 to 8 s, from rest."""
    record = np.array(tomllib.loads(STUDY.read_text())["functions"]["ground"]["table"])
    M, Ks, C = matrices()
    Mi = np.linalg.inv(M)
    # z = (u, v, a_g, slope): z' = (v, -Mi (K u + C v) - a_g, slope, 0), relative motion
    Z = np.zeros((10, 10))
    Z[:4, 4:8] = np.eye(4)
    Z[4:8, :4] = -Mi @ Ks
    Z[4:8, 4:8] = -Mi @ C
    Z[4:8, 8] = -1.0
    Z[8, 9] = 1.0
    E = expm(Z * STEP)
    t = np.round(np.arange(int(round(END / STEP)) + 1) * STEP, 12)
    z = np.zeros(10)
    rows = [z.copy()]
    for i in range(1, len(t)):
        k = int(np.searchsorted(record[:, 0], t[i - 1] + 1e-12, "right")) - 1
        if k < len(record) - 1:                 # slope of the record's segment
            z[9] = (record[k + 1, 1] - record[k, 1]) / (record[k + 1, 0] - record[k, 0])
        else:                                   # after the record: zero, held
            z[8:] = 0.0
        z = E @ z
        rows.append(z.copy())
    z = np.array(rows)
    u, v = z[:, :4], z[:, 4:8]
    absolute = -(u @ Ks.T + v @ C.T) @ Mi.T
    return t, u, v, absolute


@pytest.fixture(scope="module")
def solution():
    return independent()


def _reference(t, series, time):
    k = int(round(time / STEP))
    assert abs(t[k] - time) < 1e-12
    return series[k]


def test_the_references_are_the_independent_solution(solution):
    """Every reference of the study's checks is the independent solution's value."""
    t, u, v, absolute = solution
    M, Ks, _ = matrices()
    frequencies = np.sqrt(np.linalg.eigvalsh(np.linalg.solve(np.sqrt(M), np.linalg.solve(
        np.sqrt(M), Ks).T))) / (2 * np.pi)
    fields = {"displacement": u, "velocity": v, "absolute_acceleration": absolute}
    checks = tomllib.loads(STUDY.read_text())["check"]
    assert len(checks) >= 8
    for check in checks:
        if check["quantity"] == "frequency":
            expected = frequencies[check["mode"] - 1]
        elif check["node"] == "GROUND":
            assert check["quantity"] == "absolute_acceleration"
            record = np.array(tomllib.loads(STUDY.read_text())["functions"]["ground"]["table"])
            expected = np.interp(check["time"], record[:, 0], record[:, 1])
        else:
            series = fields[check["quantity"]][:, NODES.index(check["node"])]
            expected = _reference(t, series, check["time"])
        assert check["reference"] == pytest.approx(expected, rel=1e-7, abs=1e-12), check
        assert check.get("tolerance", 1e-3) <= 1e-5


def test_the_study_runs_and_gives_the_independent_solution(solution, tmp_path, capsys):
    """One run of the study: its checks pass, its absolute accelerations and displacements
    are the independent solution's over the whole run, and so is the roof's floor spectrum."""
    from fem.runner import run_study

    t, u, _, absolute = solution
    out = tmp_path / "floor.h5"
    run_study(STUDY, out)
    with postpro.open(out) as res:
        table = res.checks
        assert len(table) >= 8 and table["passed"].all(), table
        run = res.analysis("quake")
        assert np.allclose(run.time, t, rtol=0, atol=1e-12)
        for j, node in enumerate(NODES):
            _, got = run.series("absolute_acceleration", node, "DX")
            assert np.max(np.abs(got - absolute[:, j])) < 1e-8 * np.max(np.abs(absolute[:, j]))
            _, disp = run.series("displacement", node, "DX")
            assert np.max(np.abs(disp - u[:, j])) < 1e-8 * np.max(np.abs(u[:, j]))
    # the roof's motion is amplified: its peak absolute acceleration is over 3 times the
    # ground's (the first mode, 2.5 Hz, is excited by the 2.4 Hz component)
    assert np.max(np.abs(absolute[:, 2])) > 3 * 2.4587

    csv = tmp_path / "f3.csv"
    assert post(["spectrum", str(out), "-n", "F3", "-c", "DX", "--damping", "0.02,0.05",
                 "--frequencies", "0.5:30:25", "--csv", str(csv)]) == 0
    assert "F3 DX, the absolute acceleration (the floor spectrum)" in capsys.readouterr().out
    rows = np.loadtxt(csv, delimiter=",", skiprows=1)
    expected = postpro.response_spectrum(t, absolute[:, 2], "0.5:30:25", [0.02, 0.05])
    assert np.allclose(rows[:, 4], expected.psa[:, 0], rtol=1e-7)
    assert np.allclose(rows[:, 8], expected.psa[:, 1], rtol=1e-7)
    # a rigid equipment (30 Hz) feels the roof's peak acceleration
    assert rows[-1, 5] == pytest.approx(np.max(np.abs(absolute[:, 2])), rel=0.02)
