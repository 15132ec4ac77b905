"""The shock law's own columns (its normal law and its friction), given by the registry's
layout (``fem.laws.columns.own``): read by ``fem.laws.shock``, ``friction`` and
``stick_slip`` and by the compiled dispatch."""

from fem.laws.columns import own

#: parameters: KN / CN normal stiffness and damping, REL release rule, MU sliding and MUS
#: static friction coefficients, KT / CT tangential stiffness and damping, FDIR friction
#: direction (3, unidirectional friction), UNI 1 for unidirectional friction; values: FTD
#: tangential damper force (3), ANC anchor of the tangential spring (3), SDIR sliding
#: direction (3, unit), FT tangential force on the first node (3)
OWN = own(parameters=(1, 1, 1, 1, 1, 1, 1, 3, 1), values=(3, 3, 3, 3))
KN, CN, REL, MU, MUS, KT, CT, FDIR, UNI = OWN.P
FTD, ANC, SDIR, FT = OWN.V
