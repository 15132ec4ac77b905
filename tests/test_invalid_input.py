"""Invalid studies and meshes: ``fem run`` exits with code 2, prints one ``error:`` line naming
the key or mesh entity at fault, and writes no results file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fem.cli import EXIT_INVALID, EXIT_OK, main

from conftest import CHAIN3_INLINE

FEM = Path(sys.executable).with_name("fem")

# A valid three-node chain along X: N1 clamped, springs AC and CB, 10 kg at N2 and N3, a
# ramped 5 N force on N3. Every case below changes one thing of it.
BASE = CHAIN3_INLINE

ANALYSIS = """\
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.1
step = 1.0e-3
"""

# the same transient analysis on the basis of the chain's two modes, by adaptive2
MODAL = """\
[[analysis]]
name = "modes"
kind = "modes"
count = 2

[[analysis]]
name = "run"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "adaptive2"
step = 1.0e-3
end = 0.1
"""

CHECK = BASE[BASE.index("[[check]]"):]

INLINE_MESH = BASE[BASE.index("[mesh.nodes]"):BASE.index("[model]")]

MAIL_UNKNOWN_NODE = """\
TITRE
 CHAIN WITH A CELL ON A NODE THAT DOES NOT EXIST
FINSF
COOR_3D
   N1    0.0   0.0   0.0
   N2    1.0   0.0   0.0
   N3    2.0   0.0   0.0
FINSF
SEG2
   AC    N1     N2
   CB    N2     N9
FINSF
GROUP_MA
   SPRINGS
   AC  CB
FINSF
GROUP_NO
   MASSES
   N2  N3
FINSF
GROUP_NO
   CLAMP
   N1
FINSF
FIN
"""


def edit(*pairs, text=BASE):
    """``text`` with each (old, new) replaced once; ``old`` must occur exactly once."""
    for old, new in pairs:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in the study"
        text = text.replace(old, new)
    return text


def append(block: str, text=BASE):
    """``text`` with ``block`` inserted before the first [[analysis]] table."""
    return edit((ANALYSIS, block.strip() + "\n\n" + ANALYSIS), text=text)


# (id, study text, substrings the error line must hold)
CASES = [
    ("unknown_top_level_key",
     'colour = "red"\n' + BASE,
     ["unknown key 'colour'"]),
    ("unknown_key_in_analysis",
     edit(("step = 1.0e-3\n", "step = 1.0e-3\nstepp = 2.0e-3\n")),
     ["analysis[1]", "unknown key 'stepp'"]),
    ("misspelt_required_key_in_analysis",
     edit(("step = 1.0e-3\n", "stepp = 1.0e-3\n")),
     ["analysis[1].step", "missing", "stepp"]),
    ("unknown_key_in_discrete",
     edit(("stiffness = 1.0e4", "stiffness = 1.0e4\nstifness = 1.0e4")),
     ["discrete[1]", "unknown key 'stifness'"]),
    ("unknown_node_in_discrete",
     edit(('node_groups = ["MASSES"]', 'nodes = ["N9"]')),
     ["discrete[2].nodes", "unknown node 'N9'"]),
    ("unknown_node_group",
     edit(('node_groups = ["MASSES"]', 'node_groups = ["MASES"]')),
     ["discrete[2].node_groups", "unknown node group 'MASES'"]),
    ("unknown_cell_group",
     edit(('cell_groups = ["SPRINGS"]\n', 'cell_groups = ["SPRING"]\n')),
     ["discrete[1].cell_groups", "unknown cell group 'SPRING'"]),
    ("unknown_cell",
     edit(('cell_groups = ["SPRINGS"]\n', 'cells = ["AB"]\n')),
     ["discrete[1].cells", "unknown cell 'AB'"]),
    ("string_where_a_number_is_expected",
     edit(("mass = 10.0", 'mass = "ten"')),
     ["discrete[2].mass", "expected a number", '"ten"']),
    ("boolean_where_a_number_is_expected",
     edit(("FX = 5.0", "FX = true")),
     ["load[1].FX", "expected a number", "true"]),
    ("string_where_a_list_is_expected",
     edit(("SPRINGS = [\"AC\", \"CB\"]", "SPRINGS = 3")),
     ["mesh.cell_groups.SPRINGS", "expected a list of strings"]),
    ("negative_mass",
     edit(("mass = 10.0", "mass = -10.0")),
     ["discrete[2].mass", ">= 0", "-10"]),
    ("negative_stiffness",
     edit(("stiffness = 1.0e4", "stiffness = -1.0e4")),
     ["discrete[1].stiffness", ">= 0", "got -10000.0"]),
    ("negative_zero_mass",
     edit(("mass = 10.0", "mass = -0.0")),
     ["discrete[2].mass", ">= 0", "got -0"]),
    ("negative_zero_stiffness",
     edit(("stiffness = 1.0e4", "stiffness = -0.0")),
     ["discrete[1].stiffness", ">= 0", "got -0.0"]),
    ("integer_too_large",
     edit(("mass = 10.0", "mass = 1" + "0" * 400)),
     ["discrete[2].mass", "too large", "401 digits"]),
    ("toml_nested_too_deeply",
     BASE + "\n[extra]\nx = " + "[" * 2000 + "]" * 2000 + "\n",
     ["study.toml", "nested too deeply"]),
    ("toml_nested_deeper_than_a_study_needs",
     BASE + "\n[extra]\nx = " + "[" * 40 + "]" * 40 + "\n",
     ["extra.x", "deeper than 16 levels"]),
    ("nan_mass",
     edit(("mass = 10.0", "mass = nan")),
     ["discrete[2].mass", "finite", "nan"]),
    ("infinite_stiffness",
     edit(("stiffness = 1.0e4", "stiffness = [inf, 0.0, 0.0]")),
     ["discrete[1].stiffness[1]", "finite", "inf"]),
    ("infinite_end",
     edit(("end = 0.1", "end = inf")),
     ["analysis[1].end", "finite"]),
    ("free_dof_with_a_damper_only",
     edit(('N3 = [2.0, 0.0, 0.0]\n', 'N3 = [2.0, 0.0, 0.0]\nN4 = [3.0, 0.0, 0.0]\n'),
          ('CB = { type = "SEG2", nodes = ["N2", "N3"] }\n',
           'CB = { type = "SEG2", nodes = ["N2", "N3"] }\n'
           'DAMPER = { type = "SEG2", nodes = ["N3", "N4"] }\n'),
          ("mass = 10.0\n", 'mass = 10.0\n\n[[discrete]]\ncells = ["DAMPER"]\ndamping = 50.0\n')),
     ["node N4 DX", "neither mass nor stiffness", "singular"]),
    ("free_node_with_nothing",
     edit(('N3 = [2.0, 0.0, 0.0]\n', 'N3 = [2.0, 0.0, 0.0]\nLOOSE = [5.0, 0.0, 0.0]\n')),
     ["node LOOSE DX", "neither mass nor stiffness"]),
    ("table_not_increasing_in_time",
     edit(("table = [[0.0, 0.0], [0.05, 1.0]]", "table = [[0.0, 0.0], [0.05, 1.0], [0.02, 1.0]]")),
     ["functions.ramp.table", "increase"]),
    ("expression_with_an_unknown_name",
     edit(('table = [[0.0, 0.0], [0.05, 1.0]]\nright = "constant"',
           'expression = "sin(omega * t)"')),
     ["functions.ramp.expression", "omega"]),
    ("expression_with_import",
     edit(('table = [[0.0, 0.0], [0.05, 1.0]]\nright = "constant"',
           "expression = \"__import__('os')\"")),
     ["functions.ramp.expression", "unknown function '__import__'"]),
    ("expression_calling_an_attribute",
     edit(('table = [[0.0, 0.0], [0.05, 1.0]]\nright = "constant"',
           "expression = \"__import__('os').system('echo hacked')\"")),
     ["functions.ramp.expression", "'.system'", "not allowed"]),
    ("expression_with_a_syntax_error",
     edit(('table = [[0.0, 0.0], [0.05, 1.0]]\nright = "constant"',
           'expression = "sin(2 * pi * t"')),
     ["functions.ramp.expression", "syntax"]),
    ("relation_on_an_unknown_component",
     append('[[constraint]]\nterms = [{ node = "N2", component = "DY", coef = 1.0 },\n'
            '         { node = "N3", component = "DX", coef = -1.0 }]\n'),
     ["constraint[2].terms[1].component", "unknown component 'DY'"]),
    ("relation_on_an_unknown_node",
     append('[[constraint]]\nterms = [{ node = "N2", component = "DX", coef = 1.0 },\n'
            '         { node = "N7", component = "DX", coef = -1.0 }]\n'),
     ["constraint[2].terms[2].node", "unknown node 'N7'"]),
    ("unknown_function_in_a_load",
     edit(('function = "ramp"', 'function = "rampe"')),
     ["load[1].function", "unknown function 'rampe'", "ramp"]),
    ("unknown_load_in_an_analysis",
     edit(("step = 1.0e-3\n", 'step = 1.0e-3\nloads = ["pull"]\n')),
     ["analysis[1].loads", "unknown load 'pull'", "push"]),
    ("end_equal_to_start",
     edit(("end = 0.1", "start = 0.1\nend = 0.1")),
     ["analysis[1].end", "greater than start"]),
    ("end_before_start",
     edit(("end = 0.1", "start = 1.0\nend = 0.1")),
     ["analysis[1].end", "greater than start"]),
    ("step_longer_than_the_analysis",
     edit(("step = 1.0e-3", "step = 0.5")),
     ["analysis[1].step", "longer than the analysis"]),
    ("negative_step",
     edit(("step = 1.0e-3", "step = -1.0e-3")),
     ["analysis[1].step", "> 0"]),
    ("unknown_scheme",
     edit(('scheme = "newmark"', 'scheme = "leapfrog"')),
     ["analysis[1].scheme", "unknown scheme 'leapfrog'"]),
    ("unknown_analysis_kind",
     edit(('kind = "transient"', 'kind = "buckling"')),
     ["analysis[1].kind", '"buckling"']),
    ("link_option_not_offered_by_the_scheme",
     edit(("step = 1.0e-3", 'step = 1.0e-3\nlinks = ["stop"]'),
          (ANALYSIS, '[[link]]\nname = "stop"\nkind = "shock"\nnodes = ["N3"]\n'
                     'obstacle = "circle"\naxis = [1.0, 0.0, 0.0]\ngap = 1e-3\nstiffness = 1e8\n\n'
                     + ANALYSIS),
          ('scheme = "newmark"', 'scheme = "exact"')),
     ["analysis[1].links", "circular obstacle", "link[1].obstacle", "'stop'", "scheme 'exact'"]),
    ("check_of_a_transient_field_without_time",
     edit(("time = 0.1\nreference", "reference")),
     ["check[1]: missing key 'time'", "transient analysis"]),
    ("check_of_a_transient_quantity_on_modes",
     edit((ANALYSIS, '[[analysis]]\nname = "run"\nkind = "modes"\ncount = 2\n')),
     ["check[1].quantity", "'displacement' needs a transient or static or spectral analysis", "'run'",
      "modes"]),
    ("scheme_unknown_on_a_modal_basis",
     edit((ANALYSIS, '[[analysis]]\nname = "m"\nkind = "modes"\ncount = 2\n\n'
                     + ANALYSIS.replace('scheme = "newmark"',
                                        'basis = "modal"\nmodes = "m"\nscheme = "hht"'))),
     ["analysis[2].scheme", "unknown scheme 'hht'", 'basis = "modal"']),
    ("check_on_an_unknown_node",
     edit(('node = "N3"\ncomponent = "DX"\ntime', 'node = "N9"\ncomponent = "DX"\ntime')),
     ["check[1].node", "unknown node 'N9'"]),
    ("check_on_a_component_not_in_the_model",
     edit(('node = "N3"\ncomponent = "DX"\ntime', 'node = "N3"\ncomponent = "DY"\ntime')),
     ["check[1].component", "DY", "not in the model"]),
    ("check_on_an_unknown_analysis",
     edit(('analysis = "run"', 'analysis = "walk"')),
     ["check[1].analysis", "unknown analysis 'walk'"]),
    ("duplicate_analysis_names",
     edit((ANALYSIS, ANALYSIS + "\n" + ANALYSIS)),
     ["analysis[2].name", "'run'", "another [[analysis]]"]),
    ("duplicate_load_names",
     append('[[load]]\nname = "push"\nnodes = ["N2"]\nFX = 1.0\n'),
     ["load[2].name", "'push'"]),
    ("zero_length_seg2_in_a_local_frame",
     edit(("N2 = [1.0, 0.0, 0.0]", "N2 = [0.0, 0.0, 0.0]"),
          ("stiffness = 1.0e4", 'stiffness = 1.0e4\nframe = "local"')),
     ["discrete[1]", "AC", "zero length"]),
    ("invalid_toml_syntax",
     edit(("mass = 10.0", "mass = ")),
     ["not valid TOML", "line"]),
    ("imposed_component_not_in_the_model",
     edit(("DX = 0.0\n", "DX = 0.0\nDY = 0.0\n")),
     ["constraint[1].DY", "not in the model"]),
    ("force_on_a_component_not_in_the_model",
     edit(("FX = 5.0", "FY = 5.0")),
     ["load[1].FY", "DY", "not in the model"]),
    ("dof_imposed_twice_with_different_values",
     append('[[constraint]]\nnodes = ["N1"]\nDX = 0.01\n'),
     ["constraint[2]", "node N1 DX", "already imposed"]),
    ("unknown_component_in_the_model",
     edit(('components = ["DX"]', 'components = ["DX", "DW"]')),
     ["model.components", "unknown component 'DW'"]),
    ("inline_cell_on_an_unknown_node",
     edit(('CB = { type = "SEG2", nodes = ["N2", "N3"] }',
           'CB = { type = "SEG2", nodes = ["N2", "N5"] }')),
     ["mesh.cells.CB.nodes", "unknown node 'N5'"]),
    ("archive_every_zero",
     edit(("step = 1.0e-3\n", "step = 1.0e-3\narchive = { every = 0 }\n")),
     ["analysis[1].archive.every", ">= 1"]),
    ("archive_time_outside_the_analysis",
     edit(("step = 1.0e-3\n", "step = 1.0e-3\narchive = { times = [0.05, 0.5] }\n")),
     ["analysis[1].archive.times", "0.5 s is outside the analysis"]),
    ("check_time_outside_the_analysis",
     edit(("time = 0.1\n", "time = 5.0\n")),
     ["check[1].time", "outside analysis 'run'"]),
    ("check_without_analysis_in_a_study_of_two",
     edit(('analysis = "run"\n', ""),
          (ANALYSIS, ANALYSIS + "\n" + ANALYSIS.replace('"run"', '"again"'))),
     ["check[1].analysis", "missing", "again, run"]),
    ("function_undefined_over_the_analysis",
     edit(('right = "constant"\n', "")),
     ["analysis[1]", "function 'ramp'", "load[1].function", "[0, 0.05]"]),
    ("too_many_steps",
     edit(("step = 1.0e-3", "step = 1.0e-12")),
     ["analysis[1].step", "1e+11 steps"]),
    ("initial_state_on_an_unknown_node",
     append('[[initial]]\nnodes = ["N8"]\nvelocity = { DX = 1.0 }\n'),
     ["initial[1].nodes", "unknown node 'N8'"]),
    # contradictions between keys: found by validation, before any file is opened
    ("adaptive_min_step_above_max_step",
     edit((ANALYSIS, MODAL.replace("end = 0.1", "end = 0.1\nmin_step = 1e-3\nmax_step = 1e-4"))),
     ["analysis[2].min_step", "0.001 s is greater than max_step (0.0001 s)"]),
    ("adaptive_min_step_above_the_default_max_step",
     edit((ANALYSIS, MODAL.replace("end = 0.1", "end = 0.1\nmin_step = 0.01"))),
     ["analysis[2].min_step", "default max_step", "0.001 s", "give max_step"]),
    ("modal_damping_ratios_with_projected_damping",
     edit((ANALYSIS, MODAL.replace("end = 0.1", "end = 0.1\nmodal_damping = [0.02]"))),
     ["analysis[2].modal_damping", 'only applies with damping = "modal"']),
    ("fewer_modal_damping_ratios_than_modes",
     edit((ANALYSIS, MODAL.replace("end = 0.1", 'end = 0.1\ndamping = "modal"\n'
                                                 'modal_damping = [0.02]'))),
     ["analysis[2].modal_damping", "1 damping ratio(s) for 2 modes (give one ratio per mode)"]),
]



@pytest.fixture
def run_cli(tmp_path, capsys):
    """Run ``fem run`` in-process on a study text; returns (exit code, stdout, stderr, out)."""

    def run(text: str, name: str = "study.toml"):
        study = tmp_path / name
        study.write_text(text, encoding="utf-8")
        out = tmp_path / "results.h5"
        code = main(["run", str(study), "--out", str(out)])
        captured = capsys.readouterr()
        return code, captured.out, captured.err, out

    return run


def assert_invalid(code, stdout, stderr, out, expected):
    assert code == EXIT_INVALID, (code, stderr)
    assert "Traceback" not in stderr and "Traceback" not in stdout
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    for piece in expected:
        assert piece in lines[0], f"{piece!r} not in {lines[0]!r}"
    assert not out.exists(), "an invalid study must not leave a results file"
    assert stdout == ""


def test_base_study_is_valid(run_cli):
    code, stdout, stderr, out = run_cli(BASE)
    assert code == EXIT_OK, stderr
    assert out.exists()
    assert f"results: {out}" in stdout


def test_cases_are_distinct():
    ids = [c[0] for c in CASES]
    texts = [c[1] for c in CASES]
    assert len(set(ids)) == len(ids) >= 25
    assert len(set(texts)) == len(texts)
    assert BASE not in texts


@pytest.mark.parametrize("text, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_study(run_cli, text, expected):
    assert_invalid(*run_cli(text), expected)


def test_missing_mesh_file(run_cli, tmp_path):
    text = edit((INLINE_MESH, '[mesh]\nfile = "meshes/nowhere.mail"\n\n'))
    code, stdout, stderr, out = run_cli(text)
    assert_invalid(code, stdout, stderr, out, ["mesh.file", "not found", "nowhere.mail"])


def test_mail_mesh_with_a_cell_on_an_unknown_node(run_cli, tmp_path):
    (tmp_path / "chain.mail").write_text(MAIL_UNKNOWN_NODE, encoding="utf-8")
    text = edit((INLINE_MESH, '[mesh]\nfile = "chain.mail"\n\n'))
    code, stdout, stderr, out = run_cli(text)
    assert_invalid(code, stdout, stderr, out, ["chain.mail", "line 11", "CB", "unknown node 'N9'"])


def test_mail_mesh_is_valid_without_the_unknown_node(run_cli, tmp_path):
    """The .mail above differs from a valid mesh by the unknown node only."""
    (tmp_path / "chain.mail").write_text(MAIL_UNKNOWN_NODE.replace("N2     N9", "N2     N3"),
                                         encoding="utf-8")
    code, stdout, stderr, out = run_cli(edit((INLINE_MESH, '[mesh]\nfile = "chain.mail"\n\n')))
    assert code == EXIT_OK, stderr


def test_study_file_not_found(tmp_path, capsys):
    out = tmp_path / "results.h5"
    code = main(["run", str(tmp_path / "absent.toml"), "--out", str(out)])
    captured = capsys.readouterr()
    assert_invalid(code, captured.out, captured.err, out, ["study file not found", "absent.toml"])


def test_results_file_of_the_study_is_not_created(run_cli, tmp_path):
    """Without --out, the [output] file of an invalid study is not created either."""
    text = edit(("mass = 10.0", "mass = -1.0")) + '\n[output]\nfile = "from_study.h5"\n'
    code, _, stderr, _ = run_cli(text)
    assert code == EXIT_INVALID, stderr
    assert not (tmp_path / "from_study.h5").exists()
    assert list(tmp_path.glob("*.h5")) == []


# -- through the installed script: one stderr line, exit code 2 -----------------------------
SUBPROCESS_CASES = ["unknown_key_in_analysis", "expression_with_import", "invalid_toml_syntax",
                    "link_option_not_offered_by_the_scheme", "free_dof_with_a_damper_only"]


def _fem(*args, cwd):
    return subprocess.run([str(FEM), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.skipif(not FEM.exists(), reason="the fem script is not installed next to python")
@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_invalid_study_through_the_script(tmp_path, case):
    _, text, expected = next(c for c in CASES if c[0] == case)
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "results.h5"
    proc = _fem("run", "study.toml", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == EXIT_INVALID, proc.stderr
    assert_invalid(proc.returncode, proc.stdout, proc.stderr, out, expected)


@pytest.mark.skipif(not FEM.exists(), reason="the fem script is not installed next to python")
def test_study_file_not_found_through_the_script(tmp_path):
    out = tmp_path / "results.h5"
    proc = _fem("run", "absent.toml", "--out", str(out), cwd=tmp_path)
    assert_invalid(proc.returncode, proc.stdout, proc.stderr, out, ["study file not found"])


CONTRADICTIONS = [c for c in CASES if c[0] in (
    "adaptive_min_step_above_max_step", "adaptive_min_step_above_the_default_max_step",
    "modal_damping_ratios_with_projected_damping", "fewer_modal_damping_ratios_than_modes")]


@pytest.mark.parametrize("text, expected", [c[1:] for c in CONTRADICTIONS],
                         ids=[c[0] for c in CONTRADICTIONS])
def test_contradictions_between_keys_are_found_by_validation(tmp_path, text, expected):
    from fem.errors import StudyError
    from fem.study import load_study

    study = tmp_path / "study.toml"
    study.write_text(text, encoding="utf-8")
    with pytest.raises(StudyError) as caught:
        load_study(study)           # reads and validates; builds no model, opens no file
    for piece in expected:
        assert piece in str(caught.value)
