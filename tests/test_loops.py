"""The one choice of the step loop: ``fem schemes --explain`` says, before a run, the loop each
transient analysis runs, and the run takes that loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from fem.analyses.transient import loop_choice
from fem.cli import main
from fem.integrators import loops
from fem.runner import prepare, run_study

STUDIES = Path(__file__).resolve().parent.parent / "studies"


@pytest.mark.parametrize("name", ["v3_chain3.toml", "v1a_falling_mass_elastic.toml",
                                  "v5a_separation.toml"])
def test_the_explained_loop_is_the_loop_that_runs(tmp_path, monkeypatch, name):
    study, model = prepare(STUDIES / name)
    explained = {spec.name: loop_choice(study, model, spec).loop for spec in study.analyses
                 if spec.kind == "transient"}
    ran = []
    original = loops.choose

    def spy(*args, **kwargs):
        choice = original(*args, **kwargs)
        ran.append(choice.loop)
        return choice

    monkeypatch.setattr(loops, "choose", spy)
    run_study(STUDIES / name, tmp_path / "out.h5")
    assert ran == list(explained.values())
    assert set(ran) <= set(loops.LOOPS)


def test_explain_prints_one_line_per_transient_analysis(capsys):
    assert main(["schemes", "--explain", str(STUDIES / "v3_chain3.toml")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    study, _ = prepare(STUDIES / "v3_chain3.toml")
    transient = [a.name for a in study.analyses if a.kind == "transient"]
    assert [line.split(" ", 1)[0] for line in lines] == transient
    assert all(" loop: " in line for line in lines)


class _Traits:
    """Traits of contacts, set by hand."""

    def __init__(self, count, **values):
        self.count = count
        self.values = values

    def all(self, name):
        return self.values.get(name, False)

    def any(self, name):
        return self.values.get(name, False)


@pytest.mark.parametrize("traits, expected", [
    (_Traits(2, plane_elastic=True, elastic=True), "newmark lean"),
    (_Traits(2, elastic=True), "newmark direct"),
    (_Traits(2, rate=True), "newmark general"),
    (_Traits(0), "newmark lean"),
])
def test_central_differences_choose_by_the_laws_traits(traits, expected):
    choice = loops.choose("central_difference", traits, basis="physical", locate=False,
                          explicit_newmark=True)
    assert choice.loop == expected
    # located events or an imposed motion on the links always take the general loop
    if traits.count:
        for kwargs in (dict(locate=True), dict(imposed=True)):
            args = dict(basis="physical", locate=False, explicit_newmark=True)
            args.update(kwargs)
            assert loops.choose("central_difference", traits, **args).loop == "newmark general"


@pytest.mark.parametrize("scheme", ["newmark", "hht", "central_difference"])
def test_many_axial_links_take_the_whole_system_iteration(scheme):
    """From FROM_LINKS links whose laws are axial, on a physical basis, with events located or
    not: Newton's method on the whole system; fewer, a law that is not axial, or a modal
    basis: the condensed one."""
    many = loops.FROM_LINKS
    for locate in (False, True):
        args = dict(basis="physical", locate=locate,
                    explicit_newmark=scheme == "central_difference")
        assert loops.choose(scheme, _Traits(many, rate=True, axial=True), **args).loop == \
            "newmark whole"
        assert loops.choose(scheme, _Traits(many - 1, rate=True, axial=True), **args).loop == \
            "newmark general"
        assert loops.choose(scheme, _Traits(many, rate=True), **args).loop == "newmark general"
        args["basis"] = "modal"
        assert loops.choose(scheme, _Traits(many, rate=True, axial=True), **args).loop == \
            "newmark general"


def test_a_law_with_an_evolving_variable_never_takes_a_fast_path():
    traits = _Traits(1, rate=True, evolving=True)
    assert loops.choose("central_difference", traits, basis="modal", locate=False,
                        explicit_newmark=True).loop == "newmark general"
    assert loops.choose("adaptive2", traits, basis="modal", locate=True, adaptive=True,
                        diagonal=True).loop == "explicit general"
    assert loops.choose("adaptive2", _Traits(1, plane_elastic=True), basis="modal",
                        locate=True, adaptive=True, diagonal=True).loop == "explicit segment"
