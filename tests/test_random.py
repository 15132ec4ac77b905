"""kind = "random": response PSDs and RMS against closed forms (white noise on a one-dof
oscillator, force and base acceleration), against |H(f)|^2 S computed here for a two-dof
chain with two uncorrelated inputs, their checks, what postpro reads, and bad inputs."""

from __future__ import annotations

import csv
import io
import math

import h5py
import numpy as np
import pytest
from scipy.integrate import quad

import fem
import postpro
from fem.errors import StudyError

M, K, C = 10.0, 4.0e4, 20.0         # kg, N/m, N.s/m: f_n = 10.066 Hz, xi = 0.0158
G0 = 2.0                            # one-sided white noise level, N^2/Hz or (m/s^2)^2/Hz
F_LOW, F_HIGH = 0.01, 1000.0        # Hz, the band of the white noise and of the grid


def sdof(count=20000, extra_analysis="", checks=()):
    """A mass P on a spring and a damper (cell S) to the support G, along X."""
    return {
        "mesh": {"nodes": {"G": [0.0, 0.0, 0.0], "P": [1.0, 0.0, 0.0]},
                 "cells": {"S": {"type": "SEG2", "nodes": ["G", "P"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["S"], "stiffness": K, "damping": C},
                     {"nodes": ["P"], "mass": M}],
        "constraint": [{"nodes": ["G"], "DX": 0.0}],
        "functions": {"white": {"table": [[0.0, G0], [F_HIGH, G0]]}},
        "load": [{"name": "push", "nodes": ["P"], "FX": 1.0},
                 {"name": "ground", "kind": "base_acceleration", "direction": [1.0, 0, 0]}],
        "analysis": [
            {"name": "force", "kind": "random", "excitations": [{"load": "push",
                                                                  "psd": "white"}],
             "frequencies": {"start": F_LOW, "stop": F_HIGH, "count": count,
                             "spacing": "log"}},
            {"name": "base", "kind": "random", "excitations": [{"load": "ground",
                                                                 "psd": "white"}],
             "frequencies": {"start": F_LOW, "stop": F_HIGH, "count": count,
                             "spacing": "log"}}],
        "check": list(checks),
    }


def band_integral(function):
    """The integral of function(f) over [F_LOW, F_HIGH], split around the resonance."""
    fn = math.sqrt(K / M) / (2 * math.pi)
    edges = [F_LOW, 0.9 * fn, fn, 1.1 * fn, F_HIGH]
    return sum(quad(function, a, b, limit=400, epsabs=0.0, epsrel=1e-12)[0]
               for a, b in zip(edges, edges[1:]))


def h2(f):
    """|H(f)|^2 of the oscillator, m/N squared."""
    w = 2 * math.pi * f
    return 1.0 / ((K - M * w * w) ** 2 + (C * w) ** 2)


@pytest.fixture(scope="module")
def sdof_results():
    results = fem.run(fem.Study.from_dict(sdof()))
    yield results
    results.close()


def test_white_noise_force_on_one_dof_matches_the_closed_form(sdof_results):
    """One-sided PSD G0 (N^2/Hz) over f >= 0: sigma_x^2 = integral G0 |H|^2 df =
    G0 / (4 k c) = pi f_n G0 / (4 xi k^2) (= pi S0 / (2 xi w_n^3 m^2) with the two-sided
    S0 = G0 / (4 pi) per rad/s); sigma_v^2 = G0 / (4 m c); nu0 = f_n."""
    run = sdof_results.analysis("force")
    wn = math.sqrt(K / M)
    fn, xi = wn / (2 * math.pi), C / (2 * M * wn)
    closed = math.sqrt(math.pi * fn * G0 / (4 * xi * K ** 2))
    assert closed == pytest.approx(math.sqrt(G0 / (4 * K * C)), rel=1e-12)
    assert closed == pytest.approx(math.sqrt(math.pi * (G0 / (4 * math.pi)) /
                                             (2 * xi * wn ** 3 * M ** 2)), rel=1e-12)
    rms = run.rms("displacement", "P", "DX")
    # the band [0.01, 1000] Hz leaves out 1e-5 of the variance; the grid resolves the peak
    assert rms == pytest.approx(closed, rel=2e-5)
    assert rms == pytest.approx(math.sqrt(band_integral(lambda f: G0 * h2(f))), rel=1e-6)
    assert run.rms("velocity", "P", "DX") == pytest.approx(math.sqrt(G0 / (4 * M * C)),
                                                           rel=3e-4)
    assert run.rms("acceleration", "P", "DX") == pytest.approx(math.sqrt(band_integral(
        lambda f: G0 * (2 * math.pi * f) ** 4 * h2(f))), rel=1e-6)
    assert run.zero_crossing_rate("displacement", "P", "DX") == pytest.approx(fn, rel=2e-4)
    # the spring carries k x + c v; the support pushes back with -(k x + c v)
    spring = math.sqrt(band_integral(lambda f: G0 * (K ** 2 + (C * 2 * math.pi * f) ** 2)
                                     * h2(f)))
    assert run.rms("element_force", "S", "N") == pytest.approx(spring, rel=1e-6)
    assert run.rms("reaction", "G", "FX") == pytest.approx(spring, rel=1e-6)
    assert run.rms("displacement", "G", "DX") == 0.0
    assert run.zero_crossing_rate("displacement", "G", "DX") == 0.0
    # the PSD itself, at a frequency of the grid
    f, psd = run.series("displacement", "P", "DX")
    k = len(f) // 2
    assert psd[k] == pytest.approx(G0 * h2(f[k]), rel=1e-12)
    assert run.value_at("velocity", "P", "DX", f[k]) == pytest.approx(
        (2 * math.pi * f[k]) ** 2 * G0 * h2(f[k]), rel=1e-12)


def test_white_noise_base_acceleration_on_one_dof(sdof_results):
    """Support acceleration of one-sided PSD G0 ((m/s^2)^2/Hz): the relative motion answers
    the force -m a_g, sigma_z^2 = m^2 G0 / (4 k c); the absolute acceleration of the mass
    follows the transmissibility (k + i w c) H, sigma^2 -> G0 (k / (4 c) + c / (4 m)) = G0
    (pi f_n / (4 xi) + pi xi f_n) (Miles' equation and its damping term); the support's own
    absolute acceleration is the input, sqrt(G0 (f_high - f_low))."""
    run = sdof_results.analysis("base")
    relative = math.sqrt(M ** 2 * G0 / (4 * K * C))
    assert run.rms("displacement", "P", "DX") == pytest.approx(relative, rel=2e-5)
    absolute = run.rms("absolute_acceleration", "P", "DX")
    transmitted = band_integral(lambda f: G0 * (K ** 2 + (C * 2 * math.pi * f) ** 2) * h2(f))
    assert absolute == pytest.approx(math.sqrt(transmitted), rel=1e-6)
    wn = math.sqrt(K / M)
    fn, xi = wn / (2 * math.pi), C / (2 * M * wn)
    miles = G0 * (math.pi * fn / (4 * xi) + math.pi * xi * fn)
    assert absolute == pytest.approx(math.sqrt(miles), rel=1e-3)    # the band's tail
    assert run.rms("absolute_acceleration", "G", "DX") == pytest.approx(
        math.sqrt(G0 * (F_HIGH - F_LOW)), rel=1e-9)
    # the support holds the mass: its reaction is m times the absolute acceleration
    assert run.rms("reaction", "G", "FX") == pytest.approx(M * absolute, rel=1e-9)
    f, S = run.input_psd()
    assert run.excitations == ("ground",) and np.allclose(S, G0)


def chain(basis="physical", frequencies=(0.0, 2.0, 5.0, 7.3, 11.0, 40.0), **extra):
    """G -k1,c1- P1 -k2,c2- P2 along X; a force 1 N on P1 and 2 N on P2, with the PSDs S1
    (linear table) and S2 (log-log), uncorrelated."""
    analysis = {"name": "both", "kind": "random", "frequencies": list(frequencies),
                "excitations": [{"load": "f1", "psd": "S1"},
                                {"load": "f2", "psd": "S2", "interpolation": "loglog"}]}
    if basis == "modal":
        analysis.update(basis="modal", modes="modes")
    analysis.update(extra)
    one = dict(analysis, name="one", excitations=analysis["excitations"][:1])
    two = dict(analysis, name="two", excitations=analysis["excitations"][1:])
    return {
        "mesh": {"nodes": {"G": [0.0, 0, 0], "P1": [1.0, 0, 0], "P2": [2.0, 0, 0]},
                 "cells": {"A": {"type": "SEG2", "nodes": ["G", "P1"]},
                           "B": {"type": "SEG2", "nodes": ["P1", "P2"]}}},
        "model": {"components": ["DX"]},
        "discrete": [{"cells": ["A"], "stiffness": 3.0e3, "damping": 4.0},
                     {"cells": ["B"], "stiffness": 1.0e3, "damping": 1.5},
                     {"nodes": ["P1"], "mass": 2.0}, {"nodes": ["P2"], "mass": 0.5}],
        "constraint": [{"nodes": ["G"], "DX": 0.0}],
        "functions": {"S1": {"table": [[0.0, 1.0], [100.0, 3.0]]},
                      "S2": {"table": [[1.0, 0.5], [100.0, 0.05]], "left": "constant"}},
        "load": [{"name": "f1", "nodes": ["P1"], "FX": 1.0},
                 {"name": "f2", "nodes": ["P2"], "FX": 2.0}],
        "analysis": [{"name": "modes", "kind": "modes", "count": 2}, analysis, one, two],
    }


def chain_by_hand(f):
    """The PSDs at f of u(P1), u(P2), the forces of A and B and the reaction at G."""
    m = np.diag([2.0, 0.5])
    k = np.array([[4.0e3, -1.0e3], [-1.0e3, 1.0e3]])
    c = np.array([[5.5, -1.5], [-1.5, 1.5]])
    w = 2 * np.pi * f
    Z = k - w ** 2 * m + 1j * w * c
    u1 = np.linalg.solve(Z, [1.0, 0.0])
    u2 = np.linalg.solve(Z, [0.0, 2.0])
    s1 = np.interp(f, [0.0, 100.0], [1.0, 3.0])
    s2 = 0.5 if f <= 1.0 else 10 ** np.interp(np.log10(f), [0.0, 2.0], np.log10([0.5, 0.05]))
    out = {}
    for name, (a, b) in {"u": ([1, 0], [0, 1]), "A": ([3.0e3 + 4j * w, 0], [0, 0]),
                         "B": ([-(1.0e3 + 1.5j * w), 1.0e3 + 1.5j * w], [0, 0]),
                         "R": ([-(3.0e3 + 4j * w), 0], [0, 0])}.items():
        if name == "u":
            out["u"] = np.abs(u1) ** 2 * s1 + np.abs(u2) ** 2 * s2
            out["u_parts"] = (np.abs(u1) ** 2 * s1, np.abs(u2) ** 2 * s2)
        else:
            row = np.asarray(a)
            out[name] = abs(row @ u1) ** 2 * s1 + abs(row @ u2) ** 2 * s2
    return out


@pytest.mark.parametrize("basis", ["physical", "modal"])
def test_two_dof_chain_with_two_uncorrelated_forces(basis):
    results = fem.run(fem.Study.from_dict(chain(basis)))
    both, one, two = (results.analysis(n) for n in ("both", "one", "two"))
    pairs = [("P1", "DX"), ("P2", "DX")]
    f, u = both.columns("displacement", pairs)
    _, v = both.columns("velocity", pairs)
    _, a = both.columns("acceleration", pairs)
    _, ea = both.element_force("A", "N")
    _, eb = both.element_force("B", "N")
    _, r = both.reaction("G", "FX")
    for i, fi in enumerate(f):
        hand = chain_by_hand(fi)
        w = 2 * np.pi * fi
        assert np.allclose(u[i], hand["u"], rtol=1e-10, atol=0)
        assert np.allclose(v[i], w ** 2 * hand["u"], rtol=1e-10, atol=0)
        assert np.allclose(a[i], w ** 4 * hand["u"], rtol=1e-10, atol=0)
        assert ea[i] == pytest.approx(hand["A"], rel=1e-10)
        assert eb[i] == pytest.approx(hand["B"], rel=1e-10)
        assert r[i] == pytest.approx(hand["R"], rel=1e-10)
        # uncorrelated: each input alone gives its part, and the parts add up
        assert np.allclose(one.columns("displacement", pairs)[1][i], hand["u_parts"][0],
                           rtol=1e-10)
        assert np.allclose(two.columns("displacement", pairs)[1][i], hand["u_parts"][1],
                           rtol=1e-10)
    # the RMS: the trapezoid rule over the grid, as documented
    assert both.rms("displacement", "P2", "DX") == pytest.approx(
        math.sqrt(np.trapezoid(u[:, 1], f)), rel=1e-12)
    assert both.rms("reaction", "G", "FX") == pytest.approx(math.sqrt(np.trapezoid(r, f)),
                                                            rel=1e-12)
    m2 = np.trapezoid((2 * np.pi * f) ** 2 * u[:, 0], f)
    assert both.zero_crossing_rate("displacement", "P1", "DX") == pytest.approx(
        math.sqrt(m2 / np.trapezoid(u[:, 0], f)) / (2 * np.pi), rel=1e-12)
    m4 = np.trapezoid((2 * np.pi * f) ** 4 * u[:, 0], f)
    assert both.peak_rate("displacement", "P1", "DX") == pytest.approx(
        math.sqrt(m4 / m2) / (2 * np.pi), rel=1e-12)
    fi, S = both.input_psd()
    assert np.allclose(S[:, 0], np.interp(fi, [0.0, 100.0], [1.0, 3.0]))
    results.close()


def test_the_sparse_solver_gives_the_dense_one(monkeypatch):
    import fem.analyses.random as random_analysis

    dense = fem.run(fem.Study.from_dict(chain()))
    monkeypatch.setattr(random_analysis, "DENSE_LIMIT", 0)
    sparse = fem.run(fem.Study.from_dict(chain()))
    for field in ("displacement", "acceleration"):
        a = dense.analysis("both").columns(field, [("P1", "DX"), ("P2", "DX")])[1]
        b = sparse.analysis("both").columns(field, [("P1", "DX"), ("P2", "DX")])[1]
        assert np.allclose(a, b, rtol=1e-12, atol=0)
    dense.close()
    sparse.close()


def test_checks_on_a_random_analysis(tmp_path):
    closed = math.sqrt(G0 / (4 * K * C))
    checks = [
        {"analysis": "force", "quantity": "rms", "node": "P", "component": "DX",
         "reference": closed, "tolerance": 1e-4},
        {"analysis": "base", "quantity": "rms", "field": "absolute_acceleration",
         "node": "P", "component": "DX", "reference": 31.6383, "tolerance": 1e-4},
        {"analysis": "force", "quantity": "rms", "field": "element_force", "element": "S",
         "component": "N", "reference": 31.6383, "tolerance": 1e-4},
        {"analysis": "force", "quantity": "psd", "node": "P", "component": "DX",
         "frequency": 0.01, "reference": G0 * h2(0.01), "tolerance": 1e-9},
        {"analysis": "force", "quantity": "psd", "field": "reaction", "node": "G",
         "component": "FX", "frequency": 500.0, "interpolate": True,
         "reference": G0 * (K ** 2 + (C * 1000 * math.pi) ** 2) * h2(500.0),
         "tolerance": 1e-4},
        {"analysis": "force", "quantity": "zero_crossing_rate", "node": "P",
         "component": "DX", "reference": math.sqrt(K / M) / (2 * math.pi), "tolerance": 1e-3},
        {"analysis": "force", "quantity": "rms", "node": "P", "component": "DX",
         "reference": 2 * closed},
    ]
    out = tmp_path / "r.h5"
    from fem.cli import main

    study = fem.Study.from_dict(sdof(count=4000, checks=checks), root=tmp_path, name="sdof")
    study.save(tmp_path / "sdof.toml")
    assert main(["run", str(tmp_path / "sdof.toml"), "--out", str(out), "--quiet"]) == 1
    with postpro.open(out) as results:
        table = results.checks
        assert table["passed"].tolist() == [True] * 6 + [False]
        assert table["at"][0] == "displacement" and table["at"][3] == "displacement f=0.01 Hz"


def test_fem_post_series_info_and_compare_read_a_random_analysis(sdof_results, tmp_path,
                                                                   capsys):
    from postpro.cli import main

    path = tmp_path / "sdof.h5"
    fem.run(fem.Study.from_dict(sdof(count=400)), out=path).close()
    assert main(["series", str(path), "-a", "base", "-n", "P", "-f", "displacement",
                 "-f", "absolute_acceleration", "--end", "0.02"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["frequency [Hz]", "P DX displacement PSD [m^2/Hz]",
                       "P DX absolute_acceleration PSD [(m/s^2)^2/Hz]"]
    f, u, a = (float(x) for x in rows[1])
    assert f == pytest.approx(F_LOW) and u == pytest.approx(M ** 2 * G0 * h2(f), rel=1e-9)
    assert main(["series", str(path), "-a", "force", "-f", "element_force", "-f", "reaction",
                 "-c", "N", "-c", "FX", "--end", "0.01"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["frequency [Hz]", "S N element_force PSD [N^2/Hz]",
                       "G FX reaction PSD [N^2/Hz]"]
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "PSDs: displacement [m^2/Hz], velocity [(m/s)^2/Hz]" in out
    assert "inputs (uncorrelated): ground (base_acceleration, PSD 'white')" in out
    assert "largest displacement RMS: " in out and "m at P DX" in out
    assert main(["compare", str(path), str(path)]) == 0
    out = capsys.readouterr().out
    assert "force" in out and "absolute_acceleration" in out
    assert main(["series", str(path), "-a", "force", "-f", "absolute_acceleration"]) == 2
    assert "did not archive 'absolute_acceleration'" in capsys.readouterr().err


def test_every_dataset_has_units_and_is_documented(tmp_path):
    from pathlib import Path

    path = tmp_path / "r.h5"
    fem.run(fem.Study.from_dict(chain()), out=path).close()
    page = (Path(__file__).resolve().parents[1] / "docs" / "results_format.md").read_text()
    names, missing_units = set(), []
    own = {"both", "one", "two", "modes"}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            names.update(p for p in name.split("/") if p not in own | {"analyses"})
            names.update(obj.attrs)
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "fc" and \
                    "units" not in obj.attrs:
                missing_units.append(name)
        f.visititems(visit)
        g = f["analyses/both"]
        assert g["displacement"].attrs["units"] == "m^2/Hz"
        assert g["acceleration"].attrs["units"] == "(m/s^2)^2/Hz"
        assert g["rms/velocity"].attrs["units"] == "m/s"
        assert g["zero_crossing_rate/reaction"].attrs["units"] == "Hz"
        assert g["input_psd"].attrs["units"] == "N^2/Hz"
        assert g.attrs["kind"] == "random"
    assert missing_units == []
    assert sorted(n for n in names if f"`{n}`" not in page and f"{n}`" not in page
                  and f"`{n}/" not in page and f"/{n}" not in page) == []


def test_a_resonance_without_damping_fails_the_analysis():
    study = chain(frequencies=(1.0, 0.0))
    study["discrete"] = [{"cells": ["A"], "stiffness": 3.0e3}, {"nodes": ["P1"], "mass": 2.0},
                         {"cells": ["B"], "stiffness": 0.0}, {"nodes": ["P2"], "mass": 0.5}]
    with pytest.raises(StudyError, match="increase strictly"):
        fem.run(fem.Study.from_dict(study))
    study["analysis"] = [dict(study["analysis"][1], frequencies=[0.0, 1.0])]
    with pytest.raises(fem.RunError, match="random: the dynamic stiffness .* singular at 0 Hz"):
        fem.run(fem.Study.from_dict(study))


def test_a_base_acceleration_needs_a_function_in_transient_analyses_only():
    study = sdof(count=10)
    fem.Study.from_dict(study)                        # the random analyses take none
    study["analysis"].append({"name": "t", "kind": "transient", "end": 0.1, "step": 0.01})
    with pytest.raises(StudyError, match=r"load\[2\]\.function: a base acceleration needs "
                                         r"a function of time .* transient analysis 't'"):
        fem.Study.from_dict(study)


def _bad(change):
    study = chain()
    change(study)
    with pytest.raises(StudyError) as error:
        fem.Study.from_dict(study)
    message = str(error.value)
    assert "\n" not in message
    return message


def _random_block(study):
    return study["analysis"][1]


@pytest.mark.parametrize("change, message", [
    (lambda s: s["functions"].update(S1={"expression": "1 + 0 * t"}),
     "analysis[2].excitations[1].psd: function 'S1' is an expression; an input PSD is a table"),
    (lambda s: s["functions"].update(S1={"table": [[0.0, 1.0], [50.0, -0.1], [100.0, 1.0]]}),
     "function 'S1' has a negative value at row 2 (-0.1 at 50 Hz): a PSD is >= 0"),
    (lambda s: s["functions"].update(S1={"table": [[0.0, 2.0], [10.0, 1.0]],
                                         "right": "linear"}),
     "function 'S1' gives -2 at 40 Hz (its extension beyond the table)"),
    (lambda s: s["functions"].update(S1={"table": [[1.0, 2.0], [10.0, 1.0]]}),
     "function 'S1' is defined over [1, 10] Hz only, not over the analysis' frequencies "
     "[0, 40] Hz"),
    (lambda s: s["functions"].update(S2={"table": [[0.0, 0.5], [100.0, 0.05]]}),
     'interpolation = "loglog" needs frequencies > 0, but row 1 of functions.S2 is at 0 Hz'),
    (lambda s: _random_block(s)["excitations"][0].update(load="push"),
     "excitations[1].load: unknown load 'push' (named loads: f1, f2)"),
    (lambda s: _random_block(s)["excitations"][0].update(psd="S9"),
     "excitations[1].psd: unknown function 'S9'"),
    (lambda s: _random_block(s)["excitations"][0].update(level=2.0),
     "excitations[1]: unknown key 'level'"),
    (lambda s: _random_block(s)["excitations"][0].update(interpolation="cubic"),
     "excitations[1].interpolation: unknown value \"cubic\""),
    (lambda s: s["load"].append({"name": "g", "kind": "gravity"}) or
     _random_block(s)["excitations"].append({"load": "g", "psd": "S1"}),
     "load 'g' is of kind 'gravity'; an excitation is a load of kind force or "
     "base_acceleration"),
    (lambda s: _random_block(s).update(excitations=[]), "excitations: expected a non-empty"),
    (lambda s: _random_block(s).pop("excitations"), "excitations: missing"),
    (lambda s: _random_block(s).update(frequencies=[1.0, 1.0, 2.0]), "increase strictly"),
    (lambda s: _random_block(s).update(frequencies=[1.0]), "at least 2 frequencies"),
    (lambda s: _random_block(s).update(frequencies={"start": 0.0, "stop": 10.0, "count": 5,
                                                    "spacing": "log"}),
     'frequencies.start: must be > 0 with spacing = "log"'),
    (lambda s: _random_block(s).update(frequencies={"start": 5.0, "stop": 5.0, "count": 5}),
     "frequencies.stop: must be > start"),
    (lambda s: _random_block(s).update(fields=["stress"]), "unknown field 'stress'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "rms", "node": "P1",
                                "component": "DX", "time": 1.0, "reference": 1.0}]),
     "check[1].time: not used with quantity 'rms'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "rms", "element": "A",
                                "component": "N", "reference": 1.0}]),
     "check[1].element: not used with field 'displacement'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "rms",
                                "field": "element_force", "component": "N",
                                "reference": 1.0}]),
     "check[1]: missing key 'element'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "rms", "field": "reaction",
                                "node": "G", "component": "DX", "reference": 1.0}]),
     "check[1].component: unknown component \"DX\" for quantity 'reaction'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "rms", "node": "P1",
                                "field": "absolute_acceleration", "component": "DX",
                                "reference": 1.0}]),
     "check[1].field: analysis 'both' does not store 'absolute_acceleration'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "psd", "node": "P1",
                                "component": "DX", "frequency": 3.0, "reference": 1.0}]),
     "check[1].frequency: 3 Hz is not a frequency of analysis 'both' (nearest: 2 and 5 Hz)"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "psd", "node": "P1",
                                "component": "DX", "frequency": 41.0, "reference": 1.0,
                                "interpolate": True}]),
     "check[1].frequency: 41 Hz is outside analysis 'both' [0, 40] Hz"),
    (lambda s: s.update(check=[{"analysis": "modes", "quantity": "rms", "node": "P1",
                                "component": "DX", "reference": 1.0}]),
     "check[1].quantity: 'rms' needs a random analysis, but 'modes' is of kind 'modes'"),
    (lambda s: s.update(check=[{"analysis": "both", "quantity": "displacement",
                                "node": "P1", "component": "DX", "time": 0.0,
                                "reference": 1.0}]),
     "'displacement' needs a transient or static or spectral analysis, but 'both' is of kind 'random'"),
])
def test_bad_inputs_name_the_key(change, message):
    assert message in _bad(change)


def test_names_a_check_refers_to_exist_before_the_run():
    study = chain()
    study["check"] = [{"analysis": "both", "quantity": "rms", "field": "element_force",
                       "element": "Z", "component": "N", "reference": 1.0}]
    with pytest.raises(StudyError, match=r"check\[1\]\.element: no element 'Z'"):
        fem.run(fem.Study.from_dict(study))
    study["check"] = [{"analysis": "both", "quantity": "rms", "field": "reaction",
                       "node": "P1", "component": "FX", "reference": 1.0}]
    with pytest.raises(StudyError, match="P1 DX is not imposed"):
        fem.run(fem.Study.from_dict(study))


def test_loglog_interpolation_is_a_straight_line_on_a_log_log_plot():
    from fem.functions import Table
    from fem.study.random_blocks import spectral_density

    fn = Table("s", [10.0, 20.0, 80.0], [1.0, 2.0, 2.0 / 16], left="constant", right="linear")
    f = np.array([5.0, 10.0, 14.142135623730951, 20.0, 40.0, 80.0, 160.0])
    # +3 dB/octave to 20 Hz, then -6 dB/octave (S ~ f^-2), extended beyond 80 Hz
    expected = [1.0, 1.0, math.sqrt(2.0), 2.0, 0.5, 0.125, 0.125 / 4]
    assert np.allclose(spectral_density(fn, f, "loglog"), expected, rtol=1e-12)
    assert np.allclose(spectral_density(fn, f[1:-1], "linear"),
                       np.interp(f[1:-1], fn.times, fn.values), rtol=1e-12)
    # a band: zero outside [20, 80] Hz, the rows of zero marking its edges
    fn = Table("band", [19.0, 20.0, 40.0, 80.0, 81.0], [0.0, 0.01, 0.04, 0.01, 0.0],
               left="constant", right="constant")
    f = np.array([1.0, 19.0, 19.5, 20.0, 28.284271247461902, 40.0, 56.568542494953, 80.0,
                  80.5, 81.0, 500.0])
    expected = [0.0, 0.0, 0.0, 0.01, 0.02, 0.04, 0.02, 0.01, 0.0, 0.0, 0.0]
    assert np.allclose(spectral_density(fn, f, "loglog"), expected, rtol=1e-9, atol=0)


def test_plot_psd_and_xarray_views(tmp_path, capsys):
    from postpro.cli import main

    path = tmp_path / "chain.h5"
    fem.run(fem.Study.from_dict(chain(frequencies=np.linspace(0.5, 40.0, 80).tolist())),
            out=path).close()
    figure = tmp_path / "psd.png"
    assert main(["plot", str(path), "--kind", "psd", "-a", "both", "-a", "one", "-n", "P2",
                 "-f", "acceleration", "-f", "reaction", "-n", "G", "--output",
                 str(figure)]) == 2           # P2 carries no reaction: named in the error
    assert "no reaction P2 FX" in capsys.readouterr().err
    assert main(["plot", str(path), "--kind", "psd", "-a", "both", "-a", "one", "-c", "DX",
                 "-f", "acceleration", "--output", str(figure)]) == 0
    assert figure.stat().st_size > 1000
    with postpro.open(path) as results:
        both = results.analysis("both")
        array = both.to_xarray("velocity", nodes="P1")
        f, v = both.series("velocity", "P1", "DX")
        assert array.attrs["units"] == "(m/s)^2/Hz" and array.dims == ("frequency", "dof")
        assert np.array_equal(array.sel(dof="P1 DX").values, v)
        assert np.array_equal(array["frequency"].values, f)


def test_the_v6_validation_study_passes_its_checks(tmp_path):
    from pathlib import Path

    from fem.runner import run_study

    path = Path(__file__).resolve().parents[1] / "studies" / "v6_random_oscillator.toml"
    report = run_study(path, tmp_path / "v6.h5")
    assert len(report.check_rows) == path.read_text().count("[[check]]") == 7
    assert all(row.passed for row in report.check_rows)
