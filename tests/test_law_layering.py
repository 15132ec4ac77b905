"""No scheme, locator, driver or catalog module knows a law: they read the laws' traits, call
the one compiled dispatch (``fem.links.law``) or the law modules' handlers through the registry
(``fem.laws``), and never name a law, a law module, a kind code or a law's own column.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fem
from fem.laws import columns

ROOT = Path(fem.__file__).resolve().parent

#: the scheme, locator, driver and catalog modules
SCANNED = sorted([*(ROOT / "integrators").glob("*.py"), *(ROOT / "exact").glob("*.py"),
                  ROOT / "transient.py", ROOT / "catalog.py"])

#: columns and codes every law fills or every scheme shares (``fem.laws.columns``): the link's
#: block, its kind code (read only to ask the registry), its direction, the coordinate of the
#: link along it and its rate, the mode (open, sticking, sliding, bonded) and activity, the
#: event functions, stored energy and the step's dissipation, the layout sizes and archive
#: slots
GENERIC = {"BLK", "KIND", "DIR", "PEN", "PDOT", "MODE", "ACT", "G0", "G1", "NG", "NP", "NV",
           "NA", "ARCHIVED", "ENN", "ENT", "SLIPW", "FREE", "OPEN", "STICK", "SLIP", "BONDED"}
LAW_NAMES = {"shock", "impact", "maxwell", "damper", "plastic", "bouc_wen", "friction",
             "stick_slip", "shock_columns", "axial", "isolator", "pendulum", "anti_seismic",
             "force_curve", "force_function", "postfix", "obstacle", "buckling"}

def law_columns() -> set[str]:
    names = {n for n in vars(columns) if n.isupper() and not n.startswith("_")}
    return names - GENERIC


def named(path: Path) -> list[str]:
    """What a module names of the laws: law columns or codes it imports, law modules it
    imports, law names as strings."""
    tree = ast.parse(path.read_text())
    found = []
    forbidden = law_columns()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "fem.laws.columns":
                found += [a.name for a in node.names if a.name in forbidden]
            elif node.module == "fem.laws":
                found += [a.name for a in node.names if a.name in LAW_NAMES]
            elif node.module.startswith("fem.laws.") and node.module[9:] in LAW_NAMES:
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names
                      if a.name.startswith("fem.laws.") and a.name[9:] in LAW_NAMES]
        elif isinstance(node, ast.Compare):
            # a test on a law's name (event kinds such as "impact" are not law names)
            for side in [node.left, *node.comparators]:
                if isinstance(side, ast.Constant) and side.value in (
                        "shock", "impact", "maxwell", "damper", "bouc_wen", "isolator",
                        "force_curve", "force_function", "buckling"):
                    found.append(repr(side.value))
    return found


def test_no_scheme_locator_driver_or_catalog_module_names_a_law():
    naming = {}
    for path in SCANNED:
        found = named(path)
        if found:
            naming[path.relative_to(ROOT).as_posix()] = found
    assert not naming, f"modules that name a law or a law's column: {naming}"


def test_the_scan_sees_a_law_column():
    probe = ROOT / "integrators" / "events.py"
    source = probe.read_text()
    assert named(probe) == []
    tree_text = source + "\nfrom fem.laws.columns import GAP\n"
    scratch = Path(__file__).with_name("_scan_probe.txt")
    try:
        scratch.write_text(tree_text)
        assert named(scratch) == ["GAP"]
    finally:
        scratch.unlink()


def test_the_results_format_lists_every_law_series():
    """The table of link series in docs/results_format.md is the laws' declarations."""
    from fem import laws

    text = (ROOT.parent / "docs" / "results_format.md").read_text(encoding="utf-8")
    start = "<!-- generated: laws.markdown_series() -->\n"
    assert text.count(start) == 1
    i = text.index(start) + len(start)
    assert text[i:text.index("\n<!-- end generated -->", i)] == laws.markdown_series()


def test_a_law_gets_its_own_columns_from_the_registry():
    """A law's own columns follow the shared ones, every law's from the same place; the
    registry sizes the rows to the widest law, and a link set of several laws pads each
    law's rows to that width."""
    from fem import laws
    from fem.laws import maxwell
    from fem.links import linkset
    from fem.runner import prepare

    for row in laws.LAWS:
        assert all(c >= columns.SHARED_P for c in row.own.P)
        assert all(c >= columns.SHARED_V for c in row.own.V)
    assert laws.NP == max([columns.SHARED_P] + [row.own.width_p for row in laws.LAWS])
    assert laws.NV == max([columns.SHARED_V] + [row.own.width_v for row in laws.LAWS])
    assert maxwell.STIFFNESS == columns.SHARED_P and laws.NP > columns.SHARED_P
    # the layout of a law with columns of widths 1 and 3
    own = columns.own(parameters=(1, 3), values=(3,))
    assert own.P == (columns.SHARED_P, columns.SHARED_P + 1)
    assert own.width_p == columns.SHARED_P + 4
    assert own.V == (columns.SHARED_V,) and own.width_v == columns.SHARED_V + 3

    data = {
        "mesh": {"nodes": {"A": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX"]},
        "discrete": [{"nodes": ["A"], "mass": 1.0, "stiffness": 10.0}],
        "link": [{"name": "stop", "kind": "shock", "nodes": ["A"], "obstacle": "plane",
                  "normal": [1.0, 0.0, 0.0], "gap": 1e-3, "stiffness": 1e6},
                 {"name": "damper", "kind": "maxwell", "nodes": ["A"],
                  "direction": [1.0, 0.0, 0.0], "stiffness": 123.0, "damping": 4.5}],
        "analysis": [{"name": "t", "kind": "transient", "scheme": "newmark", "end": 0.01,
                      "step": 1e-3}],
    }
    study, model = prepare(fem.Study.from_dict(data, name="columns").spec)
    links = linkset.build(list(study.links), model)
    assert links.P.shape == (2, laws.NP)
    shock_row, maxwell_row = links.P
    assert maxwell_row[columns.KIND] == maxwell.MAXWELL
    assert (maxwell_row[maxwell.STIFFNESS], maxwell_row[maxwell.DAMPING]) == (123.0, 4.5)
    from fem.laws import shock_columns

    assert maxwell_row[shock_columns.KN] == 123.0     # the columns overlap: one law a contact
    assert shock_row[shock_columns.KN] == 1e6
    # the widest law's row, no more
    assert laws.NP == max(laws.law(kind).own.width_p for kind in laws.KINDS)
