"""The geometry of the links on the model's dofs: the relative translation d = D u of a
link's node (or of its first node against its second), the check that a law's directions lie
in the model's translations, and the checks of impact links against each other and against
the initial state.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fem.errors import StudyError
from fem.study.specs import TRANSLATIONS


def relative_translation(link, model) -> sp.csr_matrix:
    """D (3, n): d = D u is the translation of the link's node, or of its first node minus
    that of its second. Rows of the translations the model does not have are zero."""
    nodes = [model.mesh.node_index(name, f"{link.where}.nodes") for name in link.nodes]
    rows, cols, vals = [], [], []
    for sign, node in zip((1.0, -1.0), nodes):
        for k, comp in enumerate(TRANSLATIONS):
            dof = int(model.dofs.dof([node], comp)[0])
            if dof >= 0:
                rows.append(k)
                cols.append(dof)
                vals.append(sign)
    return sp.csr_matrix((vals, (rows, cols)), shape=(3, model.size))


def check_direction(link, model, D, vector, key):
    """A direction (a plane's normal, an element's axis) must lie in the translations of the
    model."""
    present = np.asarray(abs(D).sum(axis=1)).ravel() > 0
    for k, comp in enumerate(TRANSLATIONS):
        if vector[k] != 0 and not present[k]:
            raise StudyError(f"{link.where}.{key}: has a component along {comp}, which is not "
                             f"in the model (model.components)")


def check_directions(link, model, D, directions):
    """The directions a law declares (``fem.laws.contract``): "along" ones lie in the model's
    translations; "across" ones leave a translation normal to them."""
    for key, vector, how in directions:
        if how == "along":
            check_direction(link, model, D, vector, key)
            continue
        axis = np.asarray(vector, float)
        present = np.asarray(abs(D).sum(axis=1)).ravel() > 0
        radial = np.eye(3) - np.outer(axis, axis)
        if not np.any(np.abs(radial[present]) > 1e-12):
            raise StudyError(f"{link.where}.{key}: the model has no translation normal to the "
                             f"{key}, so the node cannot move in the hole")


def check_pairs(links) -> None:
    """Two impact links on the same pair of nodes and component are refused."""
    seen = {}
    for link in links:
        if link.kind != "impact":
            continue
        key = (frozenset(link.nodes), link.params["component"])
        if key in seen:
            raise StudyError(f"{link.where}.nodes: link '{link.name}' joins the same nodes along "
                             f"{link.params['component']} as link '{seen[key].name}' "
                             f"({seen[key].where}); give one impact link per pair")
        seen[key] = link


def check_initial_gaps(links, model) -> None:
    """Every impact link must start with a non-negative gap (initial displacements and the
    imposed motion at the start included)."""
    u0 = np.asarray(model.initial_displacement, float)
    for link in links:
        if link.kind != "impact":
            continue
        d = relative_translation(link, model) @ u0
        k = TRANSLATIONS.index(link.params["component"])
        r = link.params["gap"] + (-d[k] if len(link.nodes) == 2 else d[k])
        if r < -1e-12 * max(1.0, abs(link.params["gap"])):
            raise StudyError(f"{link.where}.gap: the gap of impact link '{link.name}' is "
                             f"negative at the start ({r:.6g} m): the bodies overlap")
