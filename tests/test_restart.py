"""Restart from a results file: ``initial = { file, analysis, time }``."""

from __future__ import annotations

import numpy as np
import pytest

import fem
from fem.cli import main

from conftest import CHAIN3_INLINE

BASE = CHAIN3_INLINE[:CHAIN3_INLINE.index("[[analysis]]")]

FIRST = BASE + """
[[analysis]]
name = "run"
kind = "transient"
scheme = "newmark"
end = 0.2
step = 1.0e-3
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _restart(time="time = 0.1", scheme="newmark", extra=""):
    time = f", {time}" if time else ""
    return BASE + f"""
[[analysis]]
name = "again"
kind = "transient"
scheme = "{scheme}"
end = 0.2
step = 1.0e-3
initial = {{ file = "first.h5", analysis = "run"{time} }}
{extra}"""


@pytest.mark.parametrize("scheme", ["newmark", "exact"])
def test_a_restart_equals_the_uninterrupted_run(tmp_path, scheme):
    first = FIRST.replace('scheme = "newmark"', f'scheme = "{scheme}"')
    assert main(["run", str(_write(tmp_path, "first.toml", first)), "--out",
                 str(tmp_path / "first.h5"), "--quiet"]) == 0
    again = _write(tmp_path, "again.toml", _restart(scheme=scheme))
    with fem.run(again) as restarted, fem.run(fem.Study.load(tmp_path / "first.toml")) as whole:
        part = restarted.analysis("again")
        full = whole.analysis("run")
        assert part.time[0] == pytest.approx(0.1, abs=1e-15)          # start = time
        i0 = int(np.argmin(np.abs(full.time - 0.1)))
        np.testing.assert_allclose(part.time, full.time[i0:], rtol=0, atol=1e-12)
        for field in ("displacement", "velocity", "acceleration"):
            for node in ("N2", "N3"):
                a = part.series(field, node, "DX")[1]
                b = full.series(field, node, "DX")[1][i0:]
                scale = np.abs(b).max()
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * scale)
        assert np.abs(full.series("displacement", "N3", "DX")[1][i0:]).max() > 1e-5


def test_time_defaults_to_the_last_archived_instant(tmp_path):
    short = FIRST.replace("end = 0.2", "end = 0.05")
    assert main(["run", str(_write(tmp_path, "first.toml", short)), "--out",
                 str(tmp_path / "first.h5"), "--quiet"]) == 0
    study = fem.Study.load(_write(tmp_path, "again.toml", _restart(time="")))
    assert study.spec.analysis("again").get("start") == pytest.approx(0.05)


@pytest.mark.parametrize("change, words", [
    (lambda text: text.replace('components = ["DX"]', 'components = ["DX", "DY"]'),
     ["analysis[1].initial.file", "not a results file of this model",
      "it has 3 dofs, this model 6"]),
    (lambda text: text.replace('N3', 'N9'),
     ["not a results file of this model", "its dof 3 is N3 DX, this model's N9 DX"]),
    (lambda text: text.replace('time = 0.1', 'time = 0.1005'),
     ["analysis[1].initial.time", "0.1005 s is not an archived instant"]),
    (lambda text: text.replace('analysis = "run"', 'analysis = "other"'),
     ["no transient analysis 'other'"]),
    (lambda text: text.replace('file = "first.h5"', 'file = "none.h5"'),
     ["analysis[1].initial.file", "none.h5 not found"]),
])
def test_a_restart_that_does_not_match_is_refused(tmp_path, change, words):
    assert main(["run", str(_write(tmp_path, "first.toml", FIRST)), "--out",
                 str(tmp_path / "first.h5"), "--quiet"]) == 0
    text = change(_restart())
    if "none.h5" in text:
        text = text.replace(", time = 0.1", "")
    with pytest.raises(fem.StudyError) as info:
        fem.run(fem.Study.load(_write(tmp_path, "again.toml", text))).close()
    for word in words:
        assert word in str(info.value), str(info.value)


def test_the_restart_file_is_an_input_fem_never_overwrites(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, "first.toml", FIRST)), "--out",
                 str(tmp_path / "first.h5"), "--quiet"]) == 0
    again = _write(tmp_path, "again.toml", _restart())
    before = (tmp_path / "first.h5").read_bytes()
    assert main(["run", str(again), "--out", str(tmp_path / "first.h5")]) == 2
    assert "fem never overwrites an input" in capsys.readouterr().err
    assert (tmp_path / "first.h5").read_bytes() == before
