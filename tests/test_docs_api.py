"""Every line of docs/api.md runs, in order, from a copy of the project's studies."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_api_page_runs(tmp_path, monkeypatch, capsys):
    blocks = _blocks((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    for folder in ("studies", "meshes"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_api"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/api.md, python block {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "('exact', 'modes', 'modal_cd', 'modal_adaptive2')" in out
    assert "of 8 checks passed" in out and "8 of 8" in out
    assert (tmp_path / "gaps.png").stat().st_size > 1000
    assert (tmp_path / "wider.h5").is_file()
    assert "unknown key 'componets'" in out


def test_the_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    blocks = _blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) == 1
    for folder in ("studies", "meshes"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], "README.md, python block", "exec"), namespace)
    assert len(namespace["t"]) == len(namespace["u"]) == 4001
    assert "impact" in capsys.readouterr().out


def _shell_commands(text: str, heading: str) -> list[list[str]]:
    """The commands of the first ```sh block after ``heading``: continuation lines joined,
    comments dropped, split as a shell would."""
    import shlex

    part = text[text.index(heading):]
    block = part[part.index("```sh\n") + 6:]
    block = block[:block.index("```")]
    commands, pending = [], ""
    for line in block.splitlines():
        line = pending + line.split("#", 1)[0].rstrip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.strip():
            commands.append(shlex.split(line))
    return commands


def test_the_readme_walkthrough_runs_and_gives_what_it_says(tmp_path, monkeypatch, capsys):
    """Each command of the README's walk-through, in a copy of the project's studies: the
    modal table, the reaction at the clamp (balancing the force of AC: N1 has no mass and no
    load), the figures and the ParaView files, which meshio reads back."""
    import meshio
    import numpy as np

    from fem.cli import main

    commands = _shell_commands((ROOT / "README.md").read_text(encoding="utf-8"),
                               "## Five minutes with fem")
    assert [c[:3] for c in commands][:2] == [["fem", "run", "studies/v3_chain3.toml"],
                                            ["fem", "post", "modes"]]
    for folder in ("studies", "meshes"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    outputs = []
    for command in commands:
        assert command[0] == "fem"
        assert main(command[1:]) == 0, command
        outputs.append(capsys.readouterr().out)
    assert "effective mass" in outputs[1].lower()
    rows = [line.split(",") for line in outputs[2].splitlines()]
    assert rows[0] == ["time [s]", "N1 FX reaction [N]"] and len(rows) == 12  # 0 to 0.01 s
    import postpro

    with postpro.open("v3.h5") as results:
        newmark = results.analysis("newmark")
        t, axial = newmark.element_force("AC", "N", 0.0, 0.01)
    assert np.array(rows[1:], float)[:, 1] == pytest.approx(-axial, rel=1e-9, abs=1e-12)
    for figure in ("reaction.png", "springs.png"):
        assert (tmp_path / figure).stat().st_size > 1000
    reader = meshio.xdmf.TimeSeriesReader("v3_view.xmf")
    _, cells = reader.read_points_cells()
    assert cells[0].type == "line" and len(cells[0].data) == 2
    _, point_data, cell_data = reader.read_data(reader.num_steps - 1)
    assert set(point_data) == {"displacement"} and "element_force_N" in cell_data
