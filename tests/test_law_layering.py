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
LAW_NAMES = {"shock", "impact", "maxwell", "friction", "stick_slip"}

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
                if isinstance(side, ast.Constant) and side.value in ("shock", "impact",
                                                                      "maxwell"):
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
