"""The links of one transient analysis as data: the contacts' parameter rows, the links'
kinematics on the model's dofs, and what the results file gets from them.

Every link has a relative translation d = D u (3,) on all the model's dofs (``fem.links.
shock.relative_translation``); the m links of an analysis stack into D (3 m, n). A shock link
has one contact (plane, circle) or two (two planes); an impact link is one rigid contact along
its component: with d = u(M1) - u(M2) and the normal e of its component, the gap
r = gap + u(M2) - u(M1) is minus the penetration e . d - gap (one node: the normal is -e).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from fem.links import columns as col
from fem.links.shock import check_direction, relative_translation, shock_link
from fem.model.supports import support_translation
from fem.study.specs import TRANSLATIONS


@dataclass
class LinkSet:
    """The links of an analysis.

    names : link names (one kinematic block of 3 rows each); kinds : "shock" or "impact" per
    link; D : (3 m, n) csr on all dofs; P : (nc, NP) contact parameters; block : (nc,) link
    of each contact; sides : side name of each contact; attrs : per link, the attributes of
    its results group; friction : per link, whether it has friction.
    """
    names: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    D: sp.csr_matrix | None = None
    P: np.ndarray = field(default_factory=lambda: np.zeros((0, col.NP)))
    block: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sides: list = field(default_factory=list)
    attrs: list = field(default_factory=list)
    friction: list = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def contacts(self) -> int:
        return self.P.shape[0]

    @property
    def rigid(self) -> np.ndarray:
        """Indices of the rigid (impact) contacts."""
        return np.flatnonzero(self.P[:, col.KIND] == col.RIGID)

    def __bool__(self):
        return self.count > 0

    # ---------------------------------------------------------------- results
    def series_columns(self) -> dict:
        """Series names (width 0) per archived instant."""
        out = {}
        for name, kind, fr in zip(self.names, self.kinds, self.friction):
            if kind == "maxwell":
                whats = ("force", "elongation", "dashpot_elongation")
            elif kind == "impact":
                whats = ("gap", "normal_force", "state")
            else:
                whats = ("normal_force", "penetration", "state")
            if fr:
                whats += ("tangential_force", "sliding_velocity")
            for w in whats:
                out[f"links/{name}/{w}"] = 0
        return out

    def series(self, cv: np.ndarray) -> dict:
        """The link series of archived rows, from their archived contact values cv (k, nc,
        NA): the columns ``fem.links.columns.ARCHIVED``."""
        out = {}
        for b, (name, kind, fr) in enumerate(zip(self.names, self.kinds, self.friction)):
            idx = np.flatnonzero(self.block == b)
            v = cv[:, idx]
            if kind == "maxwell":
                out[f"links/{name}/force"] = v[:, 0, col.A_FN]
                out[f"links/{name}/elongation"] = v[:, 0, col.A_PEN]
                out[f"links/{name}/dashpot_elongation"] = v[:, 0, col.A_LAM]
                continue
            if kind == "impact":
                out[f"links/{name}/gap"] = -v[:, 0, col.A_PEN]
                out[f"links/{name}/normal_force"] = v[:, 0, col.A_LAM] * v[:, 0, col.A_ACT]
                out[f"links/{name}/state"] = v[:, 0, col.A_ACT]
                continue
            out[f"links/{name}/normal_force"] = (v[:, :, col.A_FN]
                                                 * v[:, :, col.A_ACT]).sum(axis=1)
            out[f"links/{name}/penetration"] = v[:, :, col.A_PEN].max(axis=1)
            out[f"links/{name}/state"] = v[:, :, col.A_ACT].max(axis=1)
            if fr:
                out[f"links/{name}/tangential_force"] = (v[:, :, col.A_FTM]
                                                         * v[:, :, col.A_ACT]).sum(axis=1)
                out[f"links/{name}/sliding_velocity"] = (v[:, :, col.A_VSL]
                                                         * v[:, :, col.A_ACT]).sum(axis=1)
        return out

    def link_of(self, contact: int) -> str:
        return self.names[int(self.block[contact])]


def _following(D, spec, model):
    """The kinematics of a one-node link whose obstacle follows a support (``support``):
    the node's translation minus the support's, d = u - u_b(t)."""
    name = spec.params.get("support")
    if name is None:
        return D
    return (D - support_translation(model, name)).tocsr()


def _translation_present(D) -> np.ndarray:
    return np.asarray(abs(D).sum(axis=1)).ravel() > 0


def build(specs, model) -> LinkSet:
    """The LinkSet of the ``[[link]]`` blocks ``specs`` on ``model``."""
    links = LinkSet()
    blocks, rows = [], []
    for spec in specs:
        b = len(links.names)
        links.names.append(spec.name)
        links.kinds.append(spec.kind)
        p = spec.params
        if spec.kind == "shock":
            sl = shock_link(spec, model)
            blocks.append(_following(sl.D, spec, model))
            kt_default = p["stiffness"]
            has_friction = p["friction"] > 0 or p["tangential_stiffness"] > 0
            links.friction.append(bool(p["friction"] > 0))
            for c in sl.contacts:
                row = np.zeros(col.NP)
                row[col.BLK] = b
                row[col.KIND] = col.CIRCLE if c.kind == "circle" else col.PLANE
                row[col.DIR:col.DIR + 3] = c.direction
                row[col.GAP] = c.gap
                row[col.KN] = c.stiffness
                row[col.CN] = c.damping
                row[col.REL] = col.RELEASE_GAP if c.release == "gap" else col.RELEASE_FORCE
                row[col.MU] = c.friction
                row[col.MUS] = max(c.static_friction, c.friction)
                row[col.KT] = c.tangential_stiffness if c.tangential_stiffness > 0 else kt_default
                row[col.CT] = c.tangential_damping
                if c.friction_direction is not None:
                    row[col.FDIR:col.FDIR + 3] = c.friction_direction
                    row[col.UNI] = 1.0
                rows.append(row)
                links.sides.append(c.side)
            attrs = dict(stiffness=p["stiffness"], damping=p["damping"], gap=p["gap"],
                         release=p["release"], obstacle=p["obstacle"], friction=p["friction"])
            if has_friction:
                attrs.update(static_friction=float(rows[-1][col.MUS]),
                             tangential_stiffness=p["tangential_stiffness"],
                             tangential_damping=p["tangential_damping"])
            if p.get("support"):
                attrs["support"] = p["support"]
            links.attrs.append(attrs)
        elif spec.kind == "maxwell":
            D = relative_translation(spec, model)
            check_direction(spec, model, D, p["direction"], "direction")
            blocks.append(_following(D, spec, model))
            links.friction.append(False)
            row = np.zeros(col.NP)
            row[col.BLK] = b
            row[col.KIND] = col.MAXWELL
            row[col.DIR:col.DIR + 3] = p["direction"]
            row[col.KN] = p["stiffness"]
            row[col.CN] = p["damping"]
            rows.append(row)
            links.sides.append("series")
            links.attrs.append(dict(stiffness=p["stiffness"], damping=p["damping"],
                                    direction=list(p["direction"]),
                                    **({"support": p["support"]} if p.get("support") else {})))
        else:
            D = relative_translation(spec, model)
            blocks.append(_following(D, spec, model))
            links.friction.append(False)
            e = np.zeros(3)
            e[TRANSLATIONS.index(p["component"])] = 1.0
            row = np.zeros(col.NP)
            row[col.BLK] = b
            row[col.KIND] = col.RIGID
            row[col.DIR:col.DIR + 3] = e if len(spec.nodes) == 2 else -e
            row[col.GAP] = p["gap"]
            row[col.E] = p["restitution"]
            row[col.VG] = p["grazing_velocity"]
            row[col.BOND] = (col.BOND_UNTIL_TENSION if p["bond"] == "until_tension"
                             else col.BOND_UNILATERAL)
            rows.append(row)
            links.sides.append("rigid")
            links.attrs.append(dict(gap=p["gap"], restitution=p["restitution"],
                                    grazing_velocity=p["grazing_velocity"], bond=p["bond"],
                                    component=p["component"],
                                    **({"support": p["support"]} if p.get("support") else {})))
    n = model.size
    links.D = sp.vstack(blocks).tocsr() if blocks else sp.csr_matrix((0, n))
    links.P = np.array(rows, float).reshape(len(rows), col.NP)
    links.block = links.P[:, col.BLK].astype(np.int64)
    return links
