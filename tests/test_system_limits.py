"""Paths the system refuses and sizes beyond its limits: a file name too long, a NUL byte in
a path, a study number of millions of digits, a figure too large to draw. Each is one
``error:`` line naming the key, option or path, exit code 2, and no results file."""

from __future__ import annotations

import contextlib
import io

import pytest

from fem.cli import EXIT_INVALID, main

from conftest import CHAIN3_INLINE

LONG = "x" * 300                         # a file name longer than the 255 bytes allowed


def fem(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def assert_refused(code, out, err, *pieces):
    assert code == EXIT_INVALID, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err and "damaged" not in err
    for piece in pieces:
        assert piece in err, err


@pytest.mark.parametrize("output, pieces", [
    (LONG + ".h5", ["output: the results file", "has a name too long, 303 bytes",
                    "more than the 255 a file name may be"]),
    ("a\0b.h5", ["output: the results file ", "a\\0b.h5 holds a NUL byte"]),
])
def test_an_output_path_the_system_refuses(tmp_path, output, pieces):
    study = tmp_path / "study.toml"
    study.write_text(CHAIN3_INLINE)
    assert_refused(*fem("run", study, "--out", tmp_path / output, "--quiet"), *pieces)
    assert [p.name for p in tmp_path.iterdir()] == ["study.toml"]


@pytest.mark.parametrize("name, pieces", [
    (LONG + ".toml", ["study file", "has a name too long, 305 bytes"]),
    ("stu\0dy.toml", ["study file ", "stu\\0dy.toml: the path holds a NUL byte"]),
])
def test_a_study_path_the_system_refuses(tmp_path, name, pieces):
    assert_refused(*fem("run", tmp_path / name, "--quiet"), *pieces)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("key, text", [
    ("mesh.file", f'[mesh]\nfile = "{LONG}.mail"\n'),
    ("functions.push.file", f'[functions.push]\nfile = "{LONG}.csv"\n'),
])
def test_a_path_in_a_study_the_system_refuses_names_its_key(tmp_path, key, text):
    base = CHAIN3_INLINE
    if key == "mesh.file":
        start = base.index("[mesh.nodes]")
        base = base[:start] + text + base[base.index("[model]"):]
    else:
        base = base.replace('function = "ramp"', 'function = "push"') + text
    study = tmp_path / "study.toml"
    study.write_text(base)
    out = tmp_path / "results.h5"
    assert_refused(*fem("run", study, "--out", out, "--quiet"), f"{key}: the path",
                   "more than the 255 a file name may be")
    assert not out.exists()


def test_a_study_number_of_millions_of_digits_names_its_key(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(CHAIN3_INLINE.replace("mass = 10.0", "mass = " + "1" * 20_000_000))
    out = tmp_path / "results.h5"
    line = 1 + CHAIN3_INLINE[:CHAIN3_INLINE.index("mass = 10.0")].count("\n")
    assert_refused(*fem("run", study, "--out", out, "--quiet"),
                   f"key 'mass' (line {line}): a number of 20000000 digits, more than the "
                   f"4300 a study number may have")
    assert not out.exists()


def test_info_and_mesh_of_a_name_too_long(tmp_path):
    assert_refused(*fem("info", tmp_path / (LONG + ".h5")), "File name too long")
    assert_refused(*fem("mesh", tmp_path / (LONG + ".msh")), "File name too long")


@pytest.mark.parametrize("size", ["100000x100000", "40000x60", "20000x20000"])
def test_a_figure_too_large_names_the_size_option(tmp_path, size):
    study = tmp_path / "study.toml"
    study.write_text(CHAIN3_INLINE)
    results = tmp_path / "results.h5"
    assert fem("run", study, "--out", results, "--quiet")[0] == 1 or results.exists()
    figure = tmp_path / "figure.png"
    assert_refused(*fem("post", "plot", results, "-n", "N3", "-c", "DX", "--size", size,
                        "-o", figure), f"--size: {size} pixels is too large")
    assert not figure.exists()
