"""``fem warmup``: its small studies take the paths they are there to compile (the shock
closes, the friction slides, the wall is hit), every scheme of the catalog runs them, and the
command reports each scheme and fails (exit 3) when one of them does."""

import io

import pytest

import fem
from fem import warmup
from fem.catalog import SCHEMES
from fem.cli import main


def analysis_of(basis, scheme, variant, events="locate"):
    results = fem.run(fem.Study.from_dict(warmup.study_for(basis, scheme, variant, events)))
    return results.analysis("run")


@pytest.mark.parametrize("basis", ["physical", "modal"])
@pytest.mark.parametrize("events", ["locate", "step"])
def test_the_small_studies_reach_their_links(basis, events):
    if events == "locate":
        hit = analysis_of(basis, "newmark", "impact")
        assert "impact" in [str(r["kind"]) for r in hit.events]
    for variant in ("shock", "friction"):
        series = analysis_of(basis, "newmark", variant, events).link("link")
        assert series["normal_force"][1:].min() > 0.0      # pressed from the first step on
        if variant == "friction":                            # and sliding
            assert series["sliding_velocity"].max() > 0.0
    assert analysis_of(basis, "newmark", "linear").links == ()
    dashpot = analysis_of(basis, "newmark", "maxwell").link("link")
    assert abs(dashpot["force"]).max() > 0.0 and abs(dashpot["dashpot_elongation"]).max() > 0


def test_every_law_has_samples_and_they_run_where_their_feature_is_offered():
    from fem import laws

    names = warmup.variants()
    for kind in laws.KINDS:
        # a law whose studies take only loops that the other samples compile declares none
        for sample in laws.law(kind).samples:
            assert sample.name in names and sample.feature in laws.FEATURES
            assert laws.FEATURES[sample.feature] in laws.law(kind).features
    newmark, exact = SCHEMES[("physical", "newmark")], SCHEMES[("physical", "exact")]
    assert warmup.event_modes(newmark, "impact") == ("locate",)
    assert warmup.event_modes(newmark, "shock") == newmark.event_modes
    assert len(warmup.event_modes(newmark, "maxwell")) == 1
    assert warmup.event_modes(newmark, warmup.FLIGHT) == ()
    assert len(warmup.event_modes(exact, warmup.FLIGHT)) == 1
    flight = fem.run(fem.Study.from_dict(warmup.study_for("physical", "exact", warmup.FLIGHT,
                                                          "locate"))).analysis("run")
    assert flight.link("link")["normal_force"].max() > 0.0      # it lands


def test_every_scheme_runs_its_small_studies():
    for key in sorted(SCHEMES):
        found, seconds, error = warmup.warm(key)
        assert found == key and error == "", (key, error)


def test_the_command_reports_each_scheme_and_fails_when_one_does(monkeypatch):
    keys = [("physical", "newmark"), ("modal", "rk4")]
    monkeypatch.setattr(warmup, "warm", lambda key: (key, 0.5, "" if key == keys[0] else
                                                     "shock, events = locate: boom"))
    import fem.catalog

    monkeypatch.setattr(fem.catalog, "SCHEMES", {k: SCHEMES[k] for k in keys})
    stream = io.StringIO()
    assert warmup.run(jobs=1, stream=stream) == 3
    text = stream.getvalue()
    assert "physical  newmark" in text and "ready" in text
    assert "failed: shock, events = locate: boom" in text
    assert "1 scheme(s) failed" in text


@pytest.mark.parametrize("jobs", ["0", "x", "1000"])
def test_a_bad_job_count_is_refused(jobs, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["warmup", "--jobs", jobs])
    assert stop.value.code == 2
    assert "--jobs" in capsys.readouterr().err
