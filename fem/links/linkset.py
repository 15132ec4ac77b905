"""The links of one transient analysis as data: the contacts' parameter rows, the links'
kinematics on the model's dofs, and what the results file gets from them.

Every link has a relative translation d = D u (3,) on all the model's dofs (``fem.links.
geometry.relative_translation``); the m links of an analysis stack into D (3 m, n). Its law
(``fem.laws``) gives its contacts' parameter rows (a shock link has one contact, plane or
circle, or two, two planes; most laws one), the attributes of its
results group and its series. Nothing here knows a law.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from fem import laws
from fem.laws import columns as col
from fem.links.geometry import check_directions, relative_translation
from fem.model.supports import support_translation


@dataclass
class LinkSet:
    """The links of an analysis.

    names : link names (one kinematic block of 3 rows each); kinds : the law of each link;
    params : per link, its parameters; D : (3 m, n) csr on all dofs; P : (nc, NP) contact
    parameters; block : (nc,) link of each contact; sides : side name of each contact;
    attrs : per link, the attributes of its results group.
    """
    names: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    params: list = field(default_factory=list)
    D: sp.csr_matrix | None = None
    P: np.ndarray = field(default_factory=lambda: np.zeros((0, laws.NP)))
    block: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sides: list = field(default_factory=list)
    attrs: list = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def contacts(self) -> int:
        return self.P.shape[0]

    @property
    def rigid(self) -> np.ndarray:
        """Indices of the rigid (impact) contacts: those acting at instants (found once for
        a parameter array)."""
        from fem.links.traits import traits

        found = self.__dict__.get("_rigid")
        if found is None or found[0] is not self.P:
            found = self.__dict__["_rigid"] = (self.P, np.flatnonzero(traits(self.P).instant))
        return found[1]

    def __bool__(self):
        return self.count > 0

    # ---------------------------------------------------------------- results
    def series_columns(self) -> dict:
        """Series names (width 0) per archived instant."""
        out = {}
        for b, (name, kind) in enumerate(zip(self.names, self.kinds)):
            empty = np.zeros((0, int(np.count_nonzero(self.block == b)), col.NA))
            for what in laws.module(kind).series(empty, self.params[b]):
                out[f"links/{name}/{what}"] = 0
        return out

    def series_units(self) -> dict:
        """The unit of each link series, as its law declares it (``fem.laws.contract.Series``)."""
        out = {}
        for name, kind in zip(self.names, self.kinds):
            for declared in laws.module(kind).LAW.series:
                out[f"links/{name}/{declared.name}"] = declared.unit
        return out

    def series(self, cv: np.ndarray) -> dict:
        """The link series of archived rows, from their archived contact values cv (k, nc,
        NA): the columns ``fem.laws.columns.ARCHIVED``, read by each link's law."""
        out = {}
        for b, (name, kind) in enumerate(zip(self.names, self.kinds)):
            v = cv[:, np.flatnonzero(self.block == b)]
            for what, values in laws.module(kind).series(v, self.params[b]).items():
                out[f"links/{name}/{what}"] = values
        return out

    def failure(self, cv: np.ndarray) -> tuple | None:
        """(the link and its law, the law's reason) of the first contact whose force in the
        value rows cv is not finite (a local integration that did not converge writes one:
        ``FAILURE`` of the law's module), or None."""
        bad = np.flatnonzero(~np.isfinite(cv[:, col.FN]))
        if not len(bad):
            return None
        c = int(bad[0])
        law = laws.of_code(self.P[c, col.KIND])
        return (f"link '{self.link_of(c)}' ({law.LAW.kind})",
                getattr(law, "FAILURE", "its force is not finite"))

    def link_of(self, contact: int) -> str:
        return self.names[int(self.block[contact])]


def _following(D, spec, model):
    """The kinematics of a one-node link whose obstacle follows a support (``support``):
    the node's translation minus the support's, d = u - u_b(t)."""
    name = spec.params.get("support")
    if name is None:
        return D
    return (D - support_translation(model, name)).tocsr()


def build(specs, model) -> LinkSet:
    """The LinkSet of the ``[[link]]`` blocks ``specs`` on ``model``."""
    links = LinkSet()
    blocks, rows = [], []
    for spec in specs:
        b = len(links.names)
        law = laws.module(spec.kind)
        p = spec.params
        D = relative_translation(spec, model)
        check_directions(spec, model, D, law.directions(p))
        blocks.append(_following(D, spec, model))
        links.names.append(spec.name)
        links.kinds.append(spec.kind)
        links.params.append(p)
        mine = []
        for side, row in law.rows(p, len(spec.nodes)):
            row = np.array(row, float)
            row[col.BLK] = b
            mine.append(row)
            links.sides.append(side)
        rows += mine
        attrs = law.attrs(p, mine)
        if p.get("support"):
            attrs["support"] = p["support"]
        links.attrs.append(attrs)
    n = model.size
    links.D = sp.vstack(blocks).tocsr() if blocks else sp.csr_matrix((0, n))
    # each law's rows are as wide as its columns need (``fem.laws.columns.own``)
    links.P = np.zeros((len(rows), laws.NP))
    for r, row in enumerate(rows):
        links.P[r, :row.size] = row
    links.block = links.P[:, col.BLK].astype(np.int64)
    return links
