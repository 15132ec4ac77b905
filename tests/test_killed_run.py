"""A run killed with SIGKILL or SIGTERM leaves a readable results file that says it did not
finish."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import postpro
from fem.cli import main
from postpro import layout

FEM = Path(sys.executable).with_name("fem")
NODES = 2000          # a chain of 2000 nodes along X, the first one clamped
STEPS = 400_000       # about 30 s uninterrupted: the kill always lands in the middle
EVERY = 100           # archive every 100 steps: 2000 steps (20 rows) per appended block
WANTED_ROWS = 3       # archived rows seen in the file before the kill
GROWTH_BYTES = 1 << 20  # or this much growth of a file that cannot be read while written
DEADLINE_S = 120.0     # the first run of a new version compiles its step loop first

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL"),
    pytest.mark.skipif(not FEM.exists(), reason="the fem script is not installed next to python"),
]


def chain_study(nodes: int, steps: int, every: int) -> str:
    """A long spring-mass chain with an inline mesh, pulled at its free end."""
    names = [f"N{i}" for i in range(nodes)]
    lines = ["[study]", 'title = "long chain"', "", "[mesh.nodes]"]
    lines += [f"{n} = [{float(i)}, 0.0, 0.0]" for i, n in enumerate(names)]
    lines += ["", "[mesh.cells]"]
    lines += [f'S{i} = {{ type = "SEG2", nodes = ["{a}", "{b}"] }}'
              for i, (a, b) in enumerate(zip(names, names[1:]))]
    lines += ["", "[mesh.node_groups]",
              "ALL = [" + ", ".join(f'"{n}"' for n in names) + "]",
              'CLAMP = ["N0"]', "", "[mesh.cell_groups]",
              "SPRINGS = [" + ", ".join(f'"S{i}"' for i in range(nodes - 1)) + "]"]
    lines += ["""
[model]
components = ["DX"]

[[discrete]]
cell_groups = ["SPRINGS"]
stiffness = 1.0e6

[[discrete]]
node_groups = ["ALL"]
mass = 1.0

[[constraint]]
node_groups = ["CLAMP"]
DX = 0.0

[[load]]
name = "pull"
nodes = ["%s"]
FX = 1.0

[[analysis]]
name = "long"
kind = "transient"
scheme = "newmark"
end = %r
step = 1.0e-3
fields = ["displacement"]
archive = { every = %d }
""" % (names[-1], steps * 1.0e-3, every)]
    return "\n".join(lines)


def archived_rows(path: Path) -> int | None:
    """Rows of the analysis' time series, read while the writer runs; None when unreadable
    at this instant (the writer holds the file, or is half-way through an append)."""
    try:
        with h5py.File(path, "r", locking=False) as f:
            return len(f[layout.ANALYSES]["long"]["time"])
    except (OSError, KeyError, ValueError, TypeError):
        return None


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_killed_run_leaves_a_readable_file(tmp_path, sig):
    """SIGKILL: the file says "running" (nothing could run); SIGTERM: fem stops at the end of
    the chunk of steps under way, marks the file "failed" and exits with 128 + 15."""
    sig = getattr(signal, sig)
    (tmp_path / "chain.toml").write_text(chain_study(NODES, STEPS, EVERY), encoding="utf-8")
    final = tmp_path / "chain.h5"
    out = tmp_path / "chain.h5.partial"     # where a run writes until its file is complete
    proc = subprocess.Popen([str(FEM), "run", "chain.toml", "--out", str(final), "--quiet"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.monotonic()
    first_size = None
    try:
        while True:
            elapsed = time.monotonic() - start
            assert proc.poll() is None, (
                f"fem run ended before the kill (code {proc.returncode}): "
                f"{proc.stderr.read().decode(errors='replace')}")
            assert elapsed < DEADLINE_S, "no archived rows appeared in time"
            if out.exists():
                rows = archived_rows(out)
                if rows is not None and rows >= WANTED_ROWS:
                    break
                # When the file cannot be read while it is written, its growth by the first
                # chunks of the series (more than the mesh and dof tables it starts with)
                # shows that rows have been appended.
                size = out.stat().st_size
                first_size = size if first_size is None else first_size
                if rows is None and size > first_size + GROWTH_BYTES and elapsed > 4.0:
                    break
            time.sleep(0.05)
    finally:
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 128 + signal.SIGTERM
        assert err.decode().startswith("terminated (the results file, if any, is marked")

    assert not final.exists()                  # only a complete file takes the final name
    assert h5py.is_hdf5(out)
    with h5py.File(out, "r") as f:
        assert f.attrs["format"] == layout.FORMAT
        stopped = layout.STATUS_RUNNING if sig == signal.SIGKILL else layout.STATUS_FAILED
        assert f.attrs["status"] == stopped
        assert "long chain" in f[layout.STUDY_SOURCE].asstr()[()]
        assert len(f[layout.NODE_NAMES]) == NODES
        group = f[layout.ANALYSES]["long"]
        assert group.attrs["status"] in (layout.STATUS_RUNNING, layout.STATUS_FAILED)
        assert group.attrs["kind"] == "transient"
        time_ = group["time"][:]
        displacement = group["displacement"][:]
    rows = len(time_)
    assert 1 <= rows < STEPS // EVERY + 1
    assert displacement.shape == (rows, NODES)
    assert np.all(np.isfinite(time_)) and np.all(np.isfinite(displacement))
    np.testing.assert_allclose(time_, EVERY * 1.0e-3 * np.arange(rows), rtol=1e-9, atol=1e-12)
    assert np.all(displacement[:, 0] == 0.0)                # the clamped node
    if rows > 1:
        assert displacement[-1, -1] > 0.0                   # the pulled end has moved

    # the readers accept it as an incomplete file, and refuse it when a complete one is asked
    with postpro.open(out, require_complete=False) as results:
        assert results.status == stopped
    with pytest.raises(postpro.PostproError):
        postpro.open(out, require_complete=True)
    assert main(["info", str(out)]) == 0
