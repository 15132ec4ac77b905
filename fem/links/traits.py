"""What the schemes and the choice of their step loop may rely on of each contact's law: its
traits, read from the law modules (each has a ``traits(row)``) instead of its columns.

Kept apart from the compiled dispatch (``fem.links.law``) so that it compiles nothing.
"""

from __future__ import annotations

import numpy as np

from fem.links import impact, maxwell, shock
from fem.links.columns import CIRCLE, KIND, MAXWELL, PLANE, RIGID

#: the module of each kind of contact
_MODULES = {PLANE: shock, CIRCLE: shock, RIGID: impact, MAXWELL: maxwell}


class Traits:
    """What the schemes and the choice of their loop may rely on, per contact (bool arrays,
    from each law's ``traits``): ``rate`` (force depends on d'), ``elastic`` (forces from d
    alone, no iteration needed by an explicit step), ``plane_elastic`` (k max(p, 0) along a
    fixed normal), ``evolving`` (an internal variable with its own rate equation),
    ``instant`` (acts at instants: impacts), ``friction`` (stick and slip modes)."""

    NAMES = ("rate", "elastic", "plane_elastic", "evolving", "instant", "friction")

    def __init__(self, P):
        rows = [_MODULES[int(row[KIND])].traits(row) for row in P]
        for name in self.NAMES:
            setattr(self, name, np.array([bool(r[name]) for r in rows], bool))
        self.count = len(rows)

    def all(self, name: str) -> bool:
        return bool(np.all(getattr(self, name)))

    def any(self, name: str) -> bool:
        return bool(np.any(getattr(self, name)))


def traits(P) -> Traits:
    return Traits(P)
