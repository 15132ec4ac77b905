"""postpro: reading results files, energy measures, checks; against analytic series."""

import h5py
import numpy as np
import pytest

import postpro
from fem.results import ResultsWriter
from postpro import layout
from postpro.checks import evaluate, format_table, parse_checks, rows_for_file
from postpro.energy import energy_balance_error, link_force_error
from postpro.errors import CheckSpecError, PostproError
from postpro.results import Results

NODES = ["N1", "N2", "N3"]
DOF_NODE = [0, 1, 1, 2, 2]
DOF_COMPONENT = ["DX", "DX", "DY", "DX", "DY"]
TIME = np.linspace(0.0, 2.0, 201)  # archive step 0.01 s
STIFFNESS = 1.0e6  # N/m
FORCE_BIAS = 0.01  # the archived normal force is (1 + FORCE_BIAS) k p
EVENTS = [(0.25, "impact", "shock", "entry"), (1.0, "separation", "shock", "exit"),
          (1.25, "impact", "stop", ""), (1.5, "impact", "shock", "entry")]
FREQUENCIES = np.array([1.5, 4.0, 9.0])
DAMPING = np.array([0.02, 0.05])


def displacement(t):
    """(nt, 5): N1 DX fixed, N2 DX cos t, N2 DY 2t, N3 DX sin t, N3 DY t²."""
    return np.column_stack([0 * t, np.cos(t), 2 * t, np.sin(t), t**2])


def velocity(t):
    return np.column_stack([0 * t, -np.sin(t), 2 + 0 * t, np.cos(t), 2 * t])


def penetration(t):
    return 1e-3 * np.maximum(np.sin(np.pi * t), 0.0)


def energies(t):
    """Terms whose balance misses by 0.05 t against W = t: error exactly 0.05."""
    return {"energy/kinetic": 1.0 + 0.25 * t, "energy/potential": 0.25 * t,
            "energy/link_energy": 0.25 * t, "energy/dissipated": 0.3 * t,
            "energy/external_work": t}


def new_writer(path):
    return ResultsWriter(path, title="three-node chain", study_source="[study]\ntitle = 'chain'\n",
                         node_names=NODES, coordinates=[[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                         dof_node=DOF_NODE, dof_component=DOF_COMPONENT,
                         dof_imposed=[True, False, False, False, False])


def write_newmark(writer, rows=len(TIME), finish=True):
    analysis = writer.analysis("newmark", "transient", basis="physical", scheme="newmark",
                               parameters={"step": 0.01, "beta": 0.25})
    columns = {"displacement": 5, "velocity": 5, "links/shock/normal_force": 0,
               "links/shock/penetration": 0, "links/shock/state": 0}
    columns.update({name: 0 for name in energies(TIME)})
    series = analysis.series(columns)
    analysis.group["links/shock"].attrs["stiffness"] = STIFFNESS
    for block in np.array_split(np.arange(rows), 3):  # appended in blocks, as a solver does
        t = TIME[block]
        p = penetration(t)
        series.append(time=t, displacement=displacement(t), velocity=velocity(t),
                      **{"links/shock/normal_force": (1 + FORCE_BIAS) * STIFFNESS * p,
                         "links/shock/penetration": p, "links/shock/state": (p > 0) * 1.0},
                      **energies(t))
    analysis.events(EVENTS)
    if finish:
        analysis.finish(steps=200, rejected_steps=3, wall_time_s=0.5)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    """A complete file: transient, modal transient, modes, complex modes, harmonic, failed."""
    path = tmp_path_factory.mktemp("results") / "chain.h5"
    writer = new_writer(path)
    write_newmark(writer)

    # modal basis, an instant archived twice around an impact at t = 0.2 s
    bounce = writer.analysis("bounce", "transient", basis="modal", scheme="exact")
    t = np.array([0.0, 0.1, 0.2, 0.2, 0.3])
    v = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    series = bounce.series({"velocity": 5, "generalized/q": 2})
    series.append(time=t, velocity=np.outer(v, np.ones(5)),
                  **{"generalized/q": np.column_stack([np.sin(t), np.cos(t)])})
    bounce.finish()

    modes = writer.analysis("modes", "modes")
    modes.dataset("frequency", FREQUENCIES, "Hz")
    modes.dataset("omega", 2 * np.pi * FREQUENCIES)
    modes.dataset("generalized_mass", [1.0, 2.0, 3.0])
    modes.dataset("shapes", np.arange(15.0).reshape(3, 5))
    modes.finish()

    omega = 2 * np.pi * FREQUENCIES[:2]
    eigenvalue = -DAMPING * omega + 1j * omega * np.sqrt(1 - DAMPING**2)
    cmodes = writer.analysis("cmodes", "complex_modes")
    cmodes.dataset("eigenvalue", eigenvalue)
    cmodes.dataset("frequency", np.abs(eigenvalue) / (2 * np.pi))
    cmodes.dataset("damped_frequency", eigenvalue.imag / (2 * np.pi))
    cmodes.dataset("damping_ratio", -eigenvalue.real / np.abs(eigenvalue))
    cmodes.finish()

    sweep = writer.analysis("sweep", "harmonic")
    f = np.linspace(1.0, 10.0, 10)
    sweep.dataset("frequency", f)
    sweep.dataset("displacement", np.outer(1 / (1 + 1j * f), np.arange(1, 6)))
    sweep.finish()

    broken = writer.analysis("broken", "transient")
    broken.series({"displacement": 5}).append(time=TIME[:3], displacement=displacement(TIME[:3]))
    broken.finish(status="failed", message="singular matrix at t=0.02 s")
    writer.close(complete=True)
    return path


@pytest.fixture
def results(path):
    with postpro.open(path) as results:
        yield results


@pytest.fixture
def newmark(results):
    return results.analysis("newmark")


def test_file_metadata_and_dof_table(results):
    assert results.title == "three-node chain"
    assert results.status == "complete"
    assert list(results.node_names) == NODES
    assert results.coordinates.shape == (3, 3) and results.coordinates[2, 0] == 2.0
    assert list(results.dof_component) == DOF_COMPONENT
    assert results.dof_imposed.tolist() == [True, False, False, False, False]
    assert results.ndof == 5
    assert results.dof("N3", "DX") == 3 and results.dof("N2", "DY") == 2
    assert set(results.analyses) == {"newmark", "bounce", "modes", "cmodes", "sweep", "broken"}
    assert "title = 'chain'" in results.study_source
    assert len(results.checks) == 0


def test_describe(results):
    lines = results.describe().splitlines()
    assert lines[0].endswith("chain.h5: 'three-node chain', status complete")
    assert lines[1] == "3 nodes, 5 dofs (1 imposed)"
    assert "  newmark: transient (physical, newmark), complete, 200 steps, 0.5 s" in lines
    # analyses are listed in the order they were run
    assert lines[2] == "  newmark: transient (physical, newmark), complete, 200 steps, 0.5 s"
    assert "  bounce: transient (modal, exact), complete, 0 steps, 0 s" in lines
    assert "  broken: transient, failed, 0 steps, 0 s: singular matrix at t=0.02 s" in lines


def test_analysis_attributes(newmark):
    assert (newmark.kind, newmark.basis, newmark.scheme) == ("transient", "physical", "newmark")
    assert (newmark.status, newmark.steps, newmark.rejected_steps) == ("complete", 200, 3)
    assert newmark.wall_time_s == 0.5
    assert newmark.parameters == {"step": 0.01, "beta": 0.25}
    assert newmark.fields == ("displacement", "velocity")
    assert np.array_equal(newmark.time, TIME)


def test_series_whole_and_window(newmark):
    t, x = newmark.series("displacement", "N3", "DX")
    assert np.array_equal(t, TIME) and np.array_equal(x, np.sin(TIME))
    t, v = newmark.series("velocity", "N2", "DX", start=0.495, end=0.705)
    assert np.array_equal(t, TIME[50:71])
    assert np.allclose(v, -np.sin(TIME[50:71]), rtol=0, atol=1e-15)
    t, x = newmark.series("displacement", "N3", "DY", start=0.5, end=0.5)  # bounds inclusive
    assert t.tolist() == [0.5] and x.tolist() == [0.25]
    t, x = newmark.series("displacement", "N3", "DX", start=1.895)
    assert len(t) == 11 and x[-1] == np.sin(2.0)


def test_columns_keep_requested_order_and_repeats(newmark):
    t, values = newmark.columns("displacement", [("N3", "DX"), ("N2", "DX"), ("N3", "DX")],
                                end=0.1)
    assert values.shape == (11, 3)
    assert np.array_equal(values[:, 0], np.sin(t)) and np.array_equal(values[:, 2], np.sin(t))
    assert np.array_equal(values[:, 1], np.cos(t))


def test_value_at_archived_instant_and_tolerance(newmark):
    assert newmark.value_at("displacement", "N3", "DX", 0.19) == np.sin(TIME[19])
    # within 1e-6 of the 0.01 s archive step: the same instant
    assert newmark.value_at("displacement", "N3", "DX", 0.19 + 5e-9) == np.sin(TIME[19])
    assert newmark.value_at("velocity", "N3", "DY", 2.0) == 4.0


def test_value_at_interpolates_linearly_when_asked(newmark):
    value = newmark.value_at("displacement", "N3", "DX", 0.195, interpolate=True)
    assert value == pytest.approx(0.5 * (np.sin(0.19) + np.sin(0.2)), rel=1e-14)
    assert newmark.value_at("displacement", "N3", "DY", 0.013, interpolate=True) == \
        pytest.approx(0.7 * 1e-4 + 0.3 * 4e-4, rel=1e-12)


def test_value_at_gives_the_state_after_an_event(results):
    bounce = results.analysis("bounce")
    assert bounce.value_at("velocity", "N3", "DX", 0.2) == -1.0
    assert bounce.value_at("velocity", "N3", "DX", 0.15, interpolate=True) == 1.0


def test_generalized_coordinates(results):
    t, q = results.analysis("bounce").generalized(2)
    assert np.array_equal(q, np.cos(t))
    with pytest.raises(PostproError, match=r"mode 3 out of range 1\.\.2"):
        results.analysis("bounce").generalized(3)
    with pytest.raises(PostproError, match=r"has no generalized coordinates 'generalized/q' "
                                           r"\(basis 'physical'\)"):
        results.analysis("newmark").generalized(1)


def test_events_energy_and_links(results, newmark):
    events = newmark.events
    assert events["time"].tolist() == [0.25, 1.0, 1.25, 1.5]
    assert events["kind"].tolist() == ["impact", "separation", "impact", "impact"]
    assert events["link"][2] == "stop" and events["detail"][0] == "entry"
    assert len(results.analysis("bounce").events) == 0

    energy = newmark.energy(end=0.5)
    assert set(energy) == {"time", "kinetic", "potential", "link_energy", "dissipated",
                           "external_work"}
    assert np.array_equal(energy["time"], TIME[:51])
    assert np.array_equal(energy["kinetic"], 1.0 + 0.25 * TIME[:51])

    assert newmark.links == ("shock",)
    shock = newmark.link("shock", start=0.395, end=0.605)
    assert shock["stiffness"] == STIFFNESS
    assert np.array_equal(shock["time"], TIME[40:61])
    assert np.array_equal(shock["penetration"], penetration(TIME[40:61]))
    assert set(shock) >= {"normal_force", "state"}


def test_modes_and_complex_modes(results):
    modes = results.analysis("modes")
    assert modes.mode_count == 3
    assert np.array_equal(modes.frequency, FREQUENCIES)
    assert np.array_equal(modes["omega"], 2 * np.pi * FREQUENCIES)
    assert modes.mode_value("generalized_mass", 2) == 2.0
    assert modes.shapes.shape == (3, 5)
    cmodes = results.analysis("cmodes")
    assert cmodes.damping_ratio == pytest.approx(DAMPING, rel=1e-12)
    assert cmodes.frequency == pytest.approx(FREQUENCIES[:2], rel=1e-12)
    assert cmodes.damped_frequency == pytest.approx(FREQUENCIES[:2] * np.sqrt(1 - DAMPING**2))


def test_harmonic_series(results):
    sweep = results.analysis("sweep")
    assert np.array_equal(sweep.frequency, np.linspace(1.0, 10.0, 10))
    f, x = sweep.series("displacement", "N3", "DX", start=2.0, end=3.0)
    assert f.tolist() == [2.0, 3.0] and np.allclose(x, 4 / (1 + 1j * f))
    assert sweep.value_at("displacement", "N1", "DX", 5.0) == pytest.approx(1 / (1 + 5j))


def test_failed_analysis_data_is_refused_unless_allowed(results, path):
    broken = results.analysis("broken")
    assert (broken.status, broken.message) == ("failed", "singular matrix at t=0.02 s")
    with pytest.raises(PostproError, match=r"analysis 'broken' in '.*chain\.h5' failed: singular "
                                           r"matrix at t=0\.02 s; pass allow_incomplete=True"):
        broken.series("displacement", "N3", "DX")
    t, x = results.analysis("broken", allow_incomplete=True).series("displacement", "N3", "DX")
    assert np.array_equal(x, np.sin(TIME[:3]))
    with postpro.open(path, allow_incomplete=True) as lenient:
        assert len(lenient.analysis("broken").time) == 3


def test_from_h5_wraps_an_open_file_without_closing_it(path):
    with h5py.File(path, "r") as file:
        results = Results.from_h5(file)
        assert results.analysis("modes").mode_count == 3
        results.close()
        assert file.id.valid


def test_running_file(tmp_path):
    path = tmp_path / "killed.h5"
    writer = new_writer(path)
    write_newmark(writer, rows=30, finish=False)
    writer.file.close()  # a run killed before it could mark the file
    with postpro.open(path) as results:
        assert results.status == "running"
        with pytest.raises(PostproError, match=r"analysis 'newmark' in '.*killed\.h5' did not "
                                               r"finish \(status 'running': still running, or "
                                               r"killed\)"):
            results.analysis().time
    with postpro.open(path, allow_incomplete=True) as results:
        t, x = results.analysis().series("displacement", "N3", "DX")
        assert len(t) == 30 and x[-1] == np.sin(TIME[29])
    with pytest.raises(PostproError, match=r"killed\.h5' is not complete: status is 'running' "
                                           r"\(the run is still going, or it was killed\)"):
        postpro.open(path, require_complete=True)


def test_failed_run_is_refused_when_complete_required(tmp_path):
    path = tmp_path / "failed.h5"
    new_writer(path).close(complete=False)
    with pytest.raises(PostproError, match=r"failed\.h5' is not complete: status is 'failed'"):
        postpro.open(path, require_complete=True)


def test_open_errors(tmp_path):
    with pytest.raises(PostproError, match=r"results file '.*nowhere\.h5' does not exist"):
        postpro.open(tmp_path / "nowhere.h5")
    with pytest.raises(PostproError, match=r"is not a file"):
        postpro.open(tmp_path)
    text = tmp_path / "notes.h5"
    text.write_text("not hdf5")
    with pytest.raises(PostproError, match=r"notes\.h5' is not an HDF5 file"):
        postpro.open(text)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as file:
        file.attrs["format"] = "netcdf"
    with pytest.raises(PostproError, match=r"other\.h5' is not a fem results file \(format "
                                           r"attribute 'netcdf', expected 'fem-results'\)"):
        postpro.open(other)
    empty = tmp_path / "empty.h5"
    with h5py.File(empty, "w") as file:
        file.attrs.update(format=layout.FORMAT, format_version=layout.FORMAT_VERSION)
    with pytest.raises(PostproError, match=r"empty\.h5' has no dataset 'mesh/node_names'"):
        postpro.open(empty)
    newer = tmp_path / "newer.h5"
    new_writer(newer).close(complete=True)
    with h5py.File(newer, "a") as file:
        file.attrs["format_version"] = layout.FORMAT_VERSION + 1
    with pytest.raises(PostproError, match=rf"uses results format version {layout.FORMAT_VERSION + 1}; "
                                           rf"this postpro reads versions up to "
                                           rf"{layout.FORMAT_VERSION}"):
        postpro.open(newer)


def test_lookup_errors(results, newmark):
    with pytest.raises(PostproError, match=r"unknown node 'N9' in '.*' \(nodes: N1, N2, N3\)"):
        results.dof("N9", "DX")
    with pytest.raises(PostproError, match=r"node 'N1' has no component 'DY' in '.*' "
                                           r"\(available: DX\)"):
        newmark.series("displacement", "N1", "DY")
    with pytest.raises(PostproError, match=r"holds 6 analyses; name one of: newmark, bounce, "):
        results.analysis()
    with pytest.raises(PostproError, match=r"no analysis 'newmrk' in '.*' \(analyses: .*newmark"):
        results.analysis("newmrk")
    with pytest.raises(PostproError, match=r"analysis 'newmark' in '.*' did not archive "
                                           r"'acceleration' \(archived: displacement, velocity\)"):
        newmark.series("acceleration", "N3", "DX")
    with pytest.raises(PostproError, match=r"unknown field 'displ' \(known: displacement, "):
        newmark.value_at("displ", "N3", "DX", 0.1)
    with pytest.raises(PostproError, match=r"has no link 'shok' \(links: shock\)"):
        newmark.link("shok")
    with pytest.raises(PostproError, match=r"\(kind 'modes'\) has no 'damping_ratio' "
                                           r"\(available: .*generalized_mass"):
        results.analysis("modes").damping_ratio
    with pytest.raises(PostproError, match=r"mode 4 out of range 1\.\.3"):
        results.analysis("modes").mode_value("frequency", 4)


def test_time_errors(newmark):
    with pytest.raises(PostproError, match=r"time 0\.195 s is not archived \(nearest archived: "
                                           r"0\.19 and 0\.2 s\)"):
        newmark.value_at("displacement", "N3", "DX", 0.195)
    with pytest.raises(PostproError, match=r"time 2\.5 s is outside the archived range \[0, 2\] s"):
        newmark.value_at("displacement", "N3", "DX", 2.5, interpolate=True)
    with pytest.raises(PostproError, match=r"window start 0\.6 s is after its end 0\.5 s"):
        newmark.series("displacement", "N3", "DX", start=0.6, end=0.5)


def test_energy_balance_error_analytic():
    t = np.linspace(0.0, 1.0, 11)
    zero = 0 * t
    # the file's terms: E - E0 - W = 0.05 t against W = t
    terms = energies(t)
    assert energy_balance_error(terms["energy/kinetic"], terms["energy/potential"],
                                terms["energy/link_energy"], terms["energy/dissipated"],
                                terms["energy/external_work"]) == pytest.approx(0.05, rel=1e-12)
    # free undamped oscillator: K + V constant, no work
    assert energy_balance_error(np.cos(t) ** 2, np.sin(t) ** 2, zero, zero, zero) == \
        pytest.approx(0.0, abs=1e-15)
    # no work, drifting energy: scale is the total energy
    drift = energy_balance_error(1.0 + t, zero, zero, zero, zero)
    assert drift == pytest.approx(np.sqrt(np.sum(t**2) / np.sum((1 + t) ** 2)), rel=1e-14)
    assert energy_balance_error(zero, zero, zero, zero, zero) == 0.0
    # a work at the round-off of the energies (an imposed motion that does no work) counts as
    # none: the balanced terms give no error, where dividing by that work gave one near 1
    roundoff = 1e-17 * np.sin(7 * t)
    assert energy_balance_error(np.cos(t) ** 2, np.sin(t) ** 2, zero, zero, roundoff) < 1e-15
    # a small but real work is the scale
    assert energy_balance_error(1.0 + 1e-6 * t, zero, zero, zero, 2e-6 * t) == \
        pytest.approx(np.sqrt(np.sum((1e-6 * t) ** 2) / np.sum((2e-6 * t) ** 2)), rel=1e-9)
    with pytest.raises(ValueError, match="different shapes"):
        energy_balance_error(t, t[:3], t, t, t)


def test_link_force_error_analytic():
    p = np.array([-1e-3, 0.0, 1e-3, 2e-3])  # the open gap counts as no penetration
    force = np.array([0.0, 0.0, 1.1e3, 1.9e3])
    expected = np.sqrt((100.0**2 + 100.0**2) / (1e3**2 + 2e3**2))
    assert link_force_error(force, p, 1e6) == pytest.approx(expected, rel=1e-14)
    assert link_force_error([5.0, 0.0], [0.0, -1.0], 1e6) == 0.0


CHECKS = [
    {"analysis": "newmark", "quantity": "displacement", "node": "N3", "component": "DX",
     "time": 0.19, "reference": float(np.sin(0.19)) * (1 + 1e-4)},
    {"analysis": "newmark", "quantity": "velocity", "node": "N3", "component": "DX",
     "time": 0.195, "interpolate": True, "reference": float(np.cos(0.195)), "tolerance": 1e-6},
    {"analysis": "newmark", "quantity": "displacement", "node": "N1", "component": "DX",
     "time": 1.0, "reference": 0, "tolerance": 1e-12},
    {"analysis": "newmark", "quantity": "displacement", "node": "N3", "component": "DY",
     "time": 1.0, "reference": 1.002, "tolerance": 1e-3, "absolute": True},
    {"analysis": "modes", "quantity": "frequency", "mode": 2, "reference": 4.0},
    {"analysis": "cmodes", "quantity": "damping_ratio", "mode": 1, "reference": 0.02},
    {"analysis": "newmark", "quantity": "event_time", "event": 2, "link": "shock",
     "kind": "impact", "reference": 1.5},
    {"analysis": "newmark", "quantity": "energy_balance_error", "reference": 0.0,
     "tolerance": 0.06, "absolute": True},
    {"analysis": "newmark", "quantity": "link_force_error", "link": "shock", "reference": 0.01},
]


def test_evaluate_checks(results):
    rows = evaluate(results, parse_checks(CHECKS))
    assert [row.passed for row in rows] == [True, False, True, False, True, True, True, True, True]
    field, interpolated, zero, absolute, mode, ratio, event, energy, force = rows
    assert field.computed == np.sin(0.19) and field.at == "t=0.19"
    assert field.error == pytest.approx(1e-4 / (1 + 1e-4), rel=1e-9) and not field.absolute
    # the chord of cos over h = 0.01 s misses its midpoint by h²/8 relative: 1.25e-5 > 1e-6
    assert interpolated.computed == pytest.approx(0.5 * (np.cos(0.19) + np.cos(0.2)), rel=1e-14)
    assert interpolated.error == pytest.approx(0.01**2 / 8, rel=1e-2)
    assert zero.absolute and zero.error == 0.0
    assert zero.note == "reference is 0: compared absolutely"
    assert absolute.error == pytest.approx(0.002, rel=1e-9) and absolute.absolute
    assert (mode.computed, mode.at, mode.node) == (4.0, "mode=2", "")
    assert ratio.computed == pytest.approx(0.02, rel=1e-12)
    assert (event.computed, event.at) == (1.5, "event=2")
    assert energy.computed == pytest.approx(0.05, rel=1e-12) and energy.at == ""
    assert force.computed == pytest.approx(FORCE_BIAS, rel=1e-12) and force.at == "link=shock"


def test_format_table(results):
    rows = evaluate(results, parse_checks(CHECKS[:5]))
    lines = format_table(rows).splitlines()
    assert lines[0].split() == ["ANALYSIS", "QUANTITY", "NODE/CMP", "AT", "REFERENCE",
                                "COMPUTED", "ERROR", "TOLERANCE", "RESULT"]
    assert lines[1].split()[:4] == ["newmark", "displacement", "N3/DX", "t=0.19"]
    assert lines[1].split()[-3:] == ["0.01%", "0.1%", "OK"]
    assert lines[2].split()[-1] == "NOOK"
    assert lines[3].endswith("OK  (reference is 0: compared absolutely)")
    assert lines[4].split()[-4:] == ["0.002", "0.001", "abs", "NOOK"]
    assert lines[5].split()[2:4] == ["-", "mode=2"]
    column_end = lines[0].index("REFERENCE") + len("REFERENCE")  # numbers are right-aligned
    assert lines[5][:column_end].endswith("4")
    assert lines[-1] == "3 passed, 2 failed"


def test_rows_round_trip_through_the_results_file(results, tmp_path):
    rows = evaluate(results, parse_checks(CHECKS[4:6]))
    path = tmp_path / "checked.h5"
    writer = new_writer(path)
    writer.write_checks(rows_for_file(rows))
    writer.close(complete=True)
    with postpro.open(path, require_complete=True) as reread:
        table = reread.checks
    assert table["analysis"].tolist() == ["modes", "cmodes"]
    assert table["at"].tolist() == ["mode=2", "mode=1"]
    assert table["computed"][0] == 4.0 and table["passed"].tolist() == [True, True]
    assert set(rows_for_file(rows)[0]) == set(layout.CHECK_COLUMNS)


def test_check_defaults():
    spec, = parse_checks([{"quantity": "frequency", "mode": 1, "reference": 2}])
    assert (spec.path, spec.analysis, spec.tolerance, spec.absolute) == ("check[1]", None, 1e-3,
                                                                         False)
    assert spec.reference == 2.0 and isinstance(spec.reference, float)
    assert parse_checks([]) == []


@pytest.mark.parametrize("table, message", [
    ({"quantity": "frequency", "mode": 1, "reference": 1.0, "tolerence": 0.1},
     "check[3]: unknown key 'tolerence' (did you mean 'tolerance'?)"),
    ({"quantity": "displacment", "reference": 1.0},
     "check[3].quantity: unknown quantity 'displacment' (known: displacement, velocity, "),
    ({"quantity": "displacement", "node": "N3", "component": "DX", "time": "abc",
      "reference": 1.0}, "check[3].time: expected a number, got \"abc\""),
    ({"quantity": "displacement", "node": "N3", "component": "DX", "time": 0.1,
      "reference": True}, "check[3].reference: expected a number, got true"),
    ({"quantity": "frequency", "mode": 1, "reference": 1.0, "tolerance": 0},
     "check[3].tolerance: must be > 0, got 0"),
    ({"quantity": "frequency", "mode": 0, "reference": 1.0},
     "check[3].mode: modes are numbered from 1, got 0"),
    ({"quantity": "frequency", "mode": 1.0, "reference": 1.0},
     "check[3].mode: expected an integer, got 1.0"),
    ({"quantity": "displacement", "node": "N3", "component": "DX", "time": 0.1, "mode": 1,
      "reference": 1.0},
     "check[3].mode: not used with quantity 'displacement' (it takes node, component, time, "
     "interpolate)"),
    ({"quantity": "displacement", "node": "N3", "reference": 1.0},
     "check[3]: missing key 'component' (quantity 'displacement' needs quantity, reference, "
     "node, component)"),
    ({"quantity": "velocity", "node": "N3", "component": "DQ", "time": 0.1, "reference": 1.0},
     "check[3].component: unknown component \"DQ\" (known: DX, DY, DZ, DRX, DRY, DRZ)"),
    ({"quantity": "frequency", "mode": 1, "reference": 1.0, "absolute": "yes"},
     "check[3].absolute: expected true or false, got \"yes\""),
    ({"quantity": "event_time", "event": 1, "reference": float("nan")},
     "check[3].reference: expected a finite number, got nan"),
    ({"quantity": "link_force_error", "link": "", "reference": 0.0},
     "check[3].link: expected a non-empty string, got \"\""),
    ({"mode": 1, "reference": 1.0}, "check[3]: missing key 'quantity'"),
    (["frequency"], "check[3]: expected a table, got an array"),
])
def test_check_spec_errors(table, message):
    valid = {"quantity": "frequency", "mode": 1, "reference": 1.0}
    with pytest.raises(CheckSpecError) as caught:
        parse_checks([valid, valid, table])
    assert str(caught.value).startswith(message)


def test_check_spec_error_for_a_non_array():
    with pytest.raises(CheckSpecError, match=r"^check: expected an array of tables, got a table"):
        parse_checks({"quantity": "frequency"})


@pytest.mark.parametrize("table, message", [
    ({"analysis": "newmark", "quantity": "displacement", "node": "N3", "component": "DX",
      "time": 0.195, "reference": 1.0},
     r"check\[2\]: analysis 'newmark' in '.*': time 0\.195 s is not archived"),
    ({"analysis": "newmark", "quantity": "displacement", "node": "N7", "component": "DX",
      "time": 0.19, "reference": 1.0}, r"check\[2\]: unknown node 'N7'"),
    ({"analysis": "modes", "quantity": "displacement", "node": "N3", "component": "DX",
      "time": 0.19, "reference": 1.0},
     r"check\[2\]: quantity 'displacement' needs a transient analysis, but 'modes' is of kind "
     r"'modes'"),
    ({"analysis": "newmark", "quantity": "frequency", "mode": 1, "reference": 1.0},
     r"check\[2\]: quantity 'frequency' needs a modes or complex_modes analysis"),
    ({"analysis": "newmark", "quantity": "event_time", "event": 3, "kind": "impact",
      "link": "shock", "reference": 1.0},
     r"check\[2\]: event 3 asked, but analysis 'newmark' has 2 events with link 'shock' kind "
     r"'impact'"),
    ({"analysis": "bounce", "quantity": "energy_balance_error", "reference": 0.0},
     r"check\[2\]: analysis 'bounce' archived no energy terms"),
    ({"analysis": "modes", "quantity": "damping_ratio", "mode": 1, "reference": 0.1},
     r"check\[2\]: analysis 'modes' .*has no 'damping_ratio'"),
    ({"analysis": "nemwark", "quantity": "energy_balance_error", "reference": 0.0},
     r"check\[2\]: no analysis 'nemwark'"),
    ({"quantity": "energy_balance_error", "reference": 0.0},
     r"check\[2\]: '.*' holds 6 analyses; name one of"),
    ({"analysis": "broken", "quantity": "displacement", "node": "N3", "component": "DX",
      "time": 0.0, "reference": 0.0}, r"check\[2\]: analysis 'broken' .* failed: singular"),
    ({"analysis": "newmark", "quantity": "displacement", "node": "N3", "component": "DX",
      "reference": 0.0},
     r"check\[2\]: quantity 'displacement' of a transient analysis needs a time"),
])
def test_evaluation_errors_name_the_check(results, table, message):
    specs = parse_checks([CHECKS[0], table])
    with pytest.raises(PostproError, match=message):
        evaluate(results, specs)

