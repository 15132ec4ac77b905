"""The layout of the arrays that carry link laws into the compiled loops: kind and mode codes,
the columns of the parameter array P (one row per contact) and of the value array CV (one
row per contact and state buffer). See ``fem.links.law`` for what they mean.

The columns below are shared: the dispatch, the schemes and the results read them (a
contact's link, kind, direction, gap, mode, event functions, forces, energies). A law's own
columns come after them, given by ``own``: each law's start at the same place (a contact has
one law), and the registry sizes P and V to the widest law (``fem.laws.NP``,
``fem.laws.NV``)."""

from __future__ import annotations

from typing import NamedTuple

# kinds of contact law
PLANE, CIRCLE, RIGID = 0, 1, 2
RELEASE_FORCE, RELEASE_GAP = 0, 1
BOND_UNILATERAL, BOND_UNTIL_TENSION = 0, 1
#: modes (values of ``flags`` and of the column MODE); FREE lets the law choose
FREE, OPEN, STICK, SLIP = -1, 0, 1, 2
#: a rigid contact in its bonded mode
BONDED = STICK

# shared parameter columns P (nc, NP): BLK link (kinematic block), KIND, DIR normal (plane,
# rigid), axis (circle) or direction (3), GAP
(BLK, KIND, DIR, GAP) = (0, 1, 2, 5)
#: the shared parameter columns end here (a law's own follow, ``own``)
SHARED_P = 6

# shared value columns CV (nc, NV): MODE, ACT closed or acting (1/0), FN normal force (N,
# compression > 0; a law's force), PEN penetration or elongation (m), PDOT its rate, FTM
# tangential force magnitude, FDN normal damper force, ENN / ENT normal / tangential stored
# energy (J), SLIPW energy dissipated over the step (J), VSL slip rate (m/s, >= 0), LAM bond
# force of a rigid contact (N), G0 / G1 event functions (normal, friction), NRM the normal
# along which PEN is measured (3)
(MODE, ACT, FN, PEN, PDOT, FTM, FDN, ENN, ENT, SLIPW, VSL, LAM, G0, G1, NRM) = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
#: the shared value columns end here (a law's own follow, ``own``)
SHARED_V = 17
#: a law whose feature is ``evolving`` keeps its internal variable in EVOLVING and that
#: variable's rate at the values of the row in EVOLVING_RATE, and follows the link's
#: coordinate along DIR in PEN (its rate in PDOT): the schemes that control or carry the
#: variable read and set these through ``fem.links.law.internal`` and ``hold_internal``
EVOLVING, EVOLVING_RATE = LAM, FDN
#: the columns a results file keeps of each archived instant (``fem.links.linkset.series``),
#: in this order: a row of the archive holds these NA values per contact, not all NV
ARCHIVED = (ACT, FN, PEN, LAM, FTM, VSL)
NA = len(ARCHIVED)
(A_ACT, A_FN, A_PEN, A_LAM, A_FTM, A_VSL) = range(NA)
#: event functions per contact
NG = 2


class Own(NamedTuple):
    """A law's own columns: ``P`` and ``V`` the first column of each, ``width_p`` and
    ``width_v`` the widths of its parameter and value rows (shared columns included)."""
    P: tuple
    V: tuple
    width_p: int
    width_v: int


def own(parameters=(), values=()) -> Own:
    """A law's own columns, one per entry of ``parameters`` and ``values`` (each entry the
    column's width: 1 for a number, 3 for a vector), placed after the shared ones. The law
    module calls it at import and gives the result to its registry row (``Law.own``)."""
    first_p = [SHARED_P]
    for width in parameters:
        first_p.append(first_p[-1] + int(width))
    first_v = [SHARED_V]
    for width in values:
        first_v.append(first_v[-1] + int(width))
    return Own(tuple(first_p[:-1]), tuple(first_v[:-1]), first_p[-1], first_v[-1])


#: a law that has no columns of its own
NO_OWN = own()
