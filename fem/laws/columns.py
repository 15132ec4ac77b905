"""The layout of the arrays that carry link laws into the compiled loops: kind and mode codes,
the columns of the parameter array P (one row per contact) and of the value array CV (one
row per contact and state buffer). See ``fem.links.law`` for what they mean."""

# kinds of contact law
PLANE, CIRCLE, RIGID = 0, 1, 2
RELEASE_FORCE, RELEASE_GAP = 0, 1
BOND_UNILATERAL, BOND_UNTIL_TENSION = 0, 1
#: modes (values of ``flags`` and of the column MODE); FREE lets the law choose
FREE, OPEN, STICK, SLIP = -1, 0, 1, 2
#: a rigid contact in its bonded mode
BONDED = STICK

# parameter columns P (nc, NP): BLK link (kinematic block), KIND, DIR normal (plane, rigid)
# or axis (circle) (3), GAP, KN / CN normal stiffness and damping, REL release rule, MU
# sliding and MUS static friction coefficients, KT / CT tangential stiffness and damping,
# FDIR friction direction (3, unidirectional friction), UNI 1 for unidirectional friction,
# E restitution, VG grazing velocity, BOND bond rule (rigid)
(BLK, KIND, DIR, GAP, KN, CN, REL, MU, MUS, KT, CT, FDIR, UNI, E, VG, BOND) = (
    0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19)
NP = 20

# value columns CV (nc, NV): MODE, ACT closed (1/0), FN normal force (N, compression > 0),
# PEN penetration (m), PDOT its rate, FTM tangential force magnitude, FDN normal damper force,
# ENN / ENT normal / tangential stored energy (J), SLIPW slip work of the step (J), VSL slip
# rate (m/s, >= 0), LAM bond force of a rigid contact (N), G0 / G1 event functions (normal,
# friction), FTD tangential damper force (3), ANC anchor of the tangential spring (3), SDIR
# sliding direction (3, unit), FT tangential force on the first node (3), NRM normal (3), CMP
# 1 once a rigid bond has been in compression since it formed
(MODE, ACT, FN, PEN, PDOT, FTM, FDN, ENN, ENT, SLIPW, VSL, LAM, G0, G1, FTD, ANC, SDIR, FT,
 NRM, CMP) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 23, 26, 29)
NV = 30
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
