"""A modal analysis that recombines only some nodes: readers find the right columns."""

import numpy as np
import pytest

import postpro
from postpro.errors import PostproError

STUDY = """
[mesh.nodes]
A = [0.0, 0.0, 0.0]
B = [1.0, 0.0, 0.0]
C = [2.0, 0.0, 0.0]
[mesh.cells]
AB = { type = "SEG2", nodes = ["A", "B"] }
BC = { type = "SEG2", nodes = ["B", "C"] }
[model]
components = ["DX"]
[[discrete]]
cells = ["AB", "BC"]
stiffness = 100.0
[[discrete]]
nodes = ["B", "C"]
mass = 1.0
[[constraint]]
nodes = ["A"]
DX = 0.0
[[initial]]
nodes = ["C"]
displacement = { DX = 0.01 }
[[analysis]]
name = "modes"
kind = "modes"
count = 2
[[analysis]]
name = "all"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "central_difference"
end = 0.5
step = 1e-3
[[analysis]]
name = "some"
kind = "transient"
basis = "modal"
modes = "modes"
scheme = "central_difference"
end = 0.5
step = 1e-3
nodes = ["C"]
[[check]]
analysis = "some"
quantity = "displacement"
node = "C"
component = "DX"
time = 0.3
reference = 0.0
tolerance = 1.0
absolute = true
"""


def test_subset_columns_match_the_full_recombination(run_toml):
    f = run_toml(STUDY)
    path = f.filename
    f.close()
    with postpro.open(path) as r:
        t, full = r.analysis("all").series("displacement", "C", "DX")
        _, part = r.analysis("some").series("displacement", "C", "DX")
        assert np.allclose(full, part, rtol=0, atol=1e-16) and np.abs(full).max() > 5e-3
        value = r.analysis("some").value_at("displacement", "C", "DX", 0.3)
        assert value == pytest.approx(part[300], abs=0)
        with pytest.raises(PostproError, match="did not archive B DX"):
            r.analysis("some").series("displacement", "B", "DX")
