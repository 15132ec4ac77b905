"""What the schemes and the choice of their step loop may rely on of each contact's law: its
traits, read from the law modules (each has a ``traits(row)``) instead of its columns.

Kept apart from the compiled dispatch (``fem.links.law``) so that it compiles nothing.
"""

from __future__ import annotations

import numpy as np

from fem import laws
from fem.laws.columns import BLK, KIND


class Traits:
    """What the schemes and the choice of their loop may rely on, per contact (bool arrays,
    from each law's ``traits``): ``rate`` (force depends on d'), ``elastic`` (forces from d
    alone, no iteration needed by an explicit step), ``plane_elastic`` (k max(p, 0) along a
    fixed normal), ``evolving`` (an internal variable with its own rate equation),
    ``instant`` (acts at instants: impacts), ``friction`` (stick and slip modes), ``axial``
    (a force along the contact's fixed direction, a function of the elongation along it and
    of its rate, whose tangent is therefore symmetric: the Newmark family may then put it in
    its step matrix, ``fem.integrators.newmark_tangent``; False when a law does not say)."""

    NAMES = ("rate", "elastic", "plane_elastic", "evolving", "instant", "friction", "axial")

    def __init__(self, P):
        # contacts that differ only by their link ask their law once
        memo: dict = {}
        rows = []
        for row in P:
            key = row.copy()
            key[BLK] = 0.0
            key = key.tobytes()
            found = memo.get(key)
            if found is None:
                law = laws.of_code(row[KIND])
                found = memo[key] = (law.traits(row), law.stiffness(row))
            rows.append(found)
        for name in self.NAMES:
            setattr(self, name, np.array([bool(r[0].get(name, False)) for r in rows], bool))
        self.count = len(rows)
        #: the largest stiffness (N/m) each contact puts on its link (0: a constraint)
        self.stiffness = np.array([r[1] for r in rows], float)

    def all(self, name: str) -> bool:
        return bool(np.all(getattr(self, name)))

    def any(self, name: str) -> bool:
        return bool(np.any(getattr(self, name)))


#: the traits of the last parameter arrays asked for (a scheme asks several times)
_RECENT: list = []


def traits(P) -> Traits:
    """The Traits of the contacts of parameter array P (kept for the same array object)."""
    for array, found in _RECENT:
        if array is P:
            return found
    found = Traits(P)
    _RECENT.insert(0, (P, found))
    del _RECENT[8:]
    return found
