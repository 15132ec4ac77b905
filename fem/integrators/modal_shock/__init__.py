"""Shock links on a modal basis: central differences and ``adaptive2`` with unilateral plane
contacts (``fem.links.shock``).

``common``: the contacts (rows of the modal matrix at the link dofs), events and energies;
``central_difference`` and ``adaptive2``: the two schemes and their compiled loops.
"""

from fem.integrators.modal_shock.adaptive2 import ShockAdaptive2
from fem.integrators.modal_shock.central_difference import ShockCentralDifference
from fem.integrators.modal_shock.common import ModalContacts, row_energies

__all__ = ["ModalContacts", "ShockAdaptive2", "ShockCentralDifference", "row_energies"]
