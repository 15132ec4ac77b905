"""Every line of docs/api.md runs, in order, from a copy of the project's studies."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

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
