"""The analyses of a fem results file that give statistics rather than a history: random
(response PSDs and RMS values) and spectral (peak responses to a design spectrum)."""

from __future__ import annotations

import h5py
import numpy as np

from postpro import layout
from postpro.analyses import (FORCE_QUANTITIES, StaticAnalysis, _listing, _SampledAnalysis, _text)
from postpro.errors import PostproError


class RandomAnalysis(_SampledAnalysis):
    """A stationary random response (kind ``random``): one-sided power spectral densities
    sampled at ``frequency`` (Hz), and their RMS and crossing rates.

    The nodal fields (``displacement``, ``velocity``, ``acceleration`` and, under base
    acceleration, ``absolute_acceleration``) and the element forces and reactions hold
    PSDs, in unit^2/Hz (m^2/Hz, (m/s)^2/Hz, N^2/Hz, ...): :meth:`series`, :meth:`columns`,
    :meth:`element_force` and :meth:`reaction` read them as a transient analysis' series.
    """

    _axis_name = "frequency"
    _axis_unit = "Hz"

    @property
    def frequency(self) -> np.ndarray:
        """Frequencies, shape (nf,), in Hz."""
        return self._axis()

    @property
    def fields(self) -> tuple[str, ...]:
        """The PSDs of nodal fields stored, among displacement, velocity, acceleration and
        absolute_acceleration."""
        return tuple(f for f in layout.RANDOM_FIELDS
                     if isinstance(self._group.get(f), h5py.Dataset))

    def _field(self, field: str) -> h5py.Dataset:
        if field not in layout.RANDOM_FIELDS:
            raise PostproError(f"unknown field '{field}' (known: "
                               f"{_listing(layout.RANDOM_FIELDS)})")
        if field not in self.fields:
            raise PostproError(f"{self._where} did not store '{field}' (stored: "
                               f"{_listing(self.fields)})")
        return self._dataset(field)

    @property
    def excitations(self) -> tuple[str, ...]:
        """The loads that drive the analysis, one per input PSD, in the order of
        :meth:`input_psd`."""
        if "excitation_names" not in self._group:
            return ()
        return tuple(_text(n) for n in self._dataset("excitation_names")[()])

    def input_psd(self) -> tuple[np.ndarray, np.ndarray]:
        """The input PSDs at the analysis' frequencies: (f (nf,) Hz, S (nf, inputs)) in
        N^2/Hz for forces, (m/s^2)^2/Hz for base accelerations (per unit load)."""
        return self._axis(), self._dataset("input_psd")[()]

    def series(self, field: str, node: str, component: str, start=None, end=None):
        """The PSD of one dof over a frequency window ``[start, end]`` (Hz).

        Returns
        -------
        f : numpy.ndarray, shape (k,)
        psd : numpy.ndarray, shape (k,)
            In m^2/Hz, (m/s)^2/Hz, (m/s^2)^2/Hz (rad on rotations).
        """
        dataset = self._field(field)
        return self._column_series(dataset, self._column(node, component), start, end)

    def columns(self, field: str, dofs, start=None, end=None):
        """Several dofs: ``(f (k,), psd (k, len(dofs)))`` in the order of ``dofs``."""
        return self._columns(field, dofs, start, end)

    def value_at(self, field: str, node: str, component: str, frequency: float,
                 interpolate: bool = False) -> float:
        """The PSD of one dof at one frequency (Hz), matched as a transient's instants."""
        return self._value_at(field, node, component, frequency, interpolate)

    def psd_at(self, quantity: str, name: str, component: str, frequency: float,
               interpolate: bool = False) -> float:
        """The PSD of a nodal field (``name`` a node), an element force (a cell) or a
        reaction (a node) at one frequency (Hz)."""
        if quantity in FORCE_QUANTITIES:
            return self.force_at(quantity, name, component, frequency, interpolate)
        return self.value_at(quantity, name, component, frequency, interpolate)

    def _statistic(self, kind: str, quantity: str, name: str, component: str) -> float:
        if quantity in FORCE_QUANTITIES:
            column = self._named_column(quantity, name, component)[1]
        else:
            self._field(quantity)
            column = self._column(name, component)
        return self._dataset(f"{kind}/{quantity}")[column].item()

    def rms(self, quantity: str, name: str, component: str) -> float:
        """The RMS (root of the integral of the PSD over the frequencies, trapezoid rule)
        of a nodal field at a node, of an element force (``name`` a cell) or of a reaction,
        in the quantity's unit (m, m/s, m/s^2, N, ...)."""
        return self._statistic("rms", quantity, name, component)

    def zero_crossing_rate(self, quantity: str, name: str, component: str) -> float:
        """The expected rate of up-crossings of zero, sqrt(m2 / m0) / 2 pi, in Hz."""
        return self._statistic("zero_crossing_rate", quantity, name, component)

    def peak_rate(self, quantity: str, name: str, component: str) -> float:
        """The expected rate of maxima, sqrt(m4 / m2) / 2 pi, in Hz."""
        return self._statistic("peak_rate", quantity, name, component)

    def to_xarray(self, field: str = "displacement", nodes=None, components=None, start=None,
                  end=None):
        """Some dofs of a PSD over a frequency window, as an ``xarray.DataArray`` (needs the
        optional extra ``fem[notebook]``): dims ("frequency", "dof"), the coordinates of
        :meth:`TransientAnalysis.to_xarray`, units m^2/Hz, (m/s)^2/Hz, ..."""
        from postpro import frames

        array = frames.field_array(self, self._axis_name, self._axis_unit, field, nodes,
                                   components, start, end)
        base = "acceleration" if field == "absolute_acceleration" else field
        units = [layout.psd_unit(layout.unit_of(base, str(c)))
                 for c in array["component"].values]
        array = array.drop_vars("units", errors="ignore")
        array.attrs.pop("units", None)
        if len(set(units)) == 1:
            array.attrs["units"] = units[0]
        else:
            array = array.assign_coords(units=("dof", units))
        return array


class SpectralAnalysis(StaticAnalysis):
    """A response spectrum analysis (kind ``spectral``): combined peak responses.

    ``displacement``, ``element_force`` and ``reaction`` hold the peaks combined over the
    modes and the directions (read them as a static analysis' values); ``by_direction/NAME``
    (ndir, k) before combining the directions, ``by_mode/NAME`` (m, ndir, k) each mode's
    signed peak, ``residual/NAME`` (ndir, k) the static share of the modes left out.
    """

    @property
    def directions(self) -> tuple[str, ...]:
        return tuple(_text(d) for d in self._dataset("directions")[()])

    @property
    def frequency(self) -> np.ndarray:
        """The frequencies of the modes combined, Hz."""
        return self._dataset("frequency")[()]

    @property
    def damping(self) -> np.ndarray:
        """The damping ratio of each mode combined."""
        return self._dataset("damping")[()]

    @property
    def participation_factor(self) -> np.ndarray:
        """(m, ndir): phi_i^T M r_d of each mode and direction."""
        return self._dataset("participation_factor")[()]

    @property
    def spectral_acceleration(self) -> np.ndarray:
        """(m, ndir): the spectrum's pseudo-acceleration read for each mode, m/s^2."""
        return self._dataset("spectral_acceleration")[()]

    def _direction(self, direction: str) -> int:
        if direction not in self.directions:
            raise PostproError(f"{self._where}: no direction '{direction}' (directions: "
                               f"{_listing(self.directions)})")
        return self.directions.index(direction)

    def _part(self, part: str, quantity: str, name: str, component: str) -> h5py.Dataset:
        if quantity == "displacement":
            column = self._results.dof(name, component)
        else:
            column = self._named_column(quantity, name, component)[1]
        dataset = self._group.get(f"{part}/{quantity}")
        if not isinstance(dataset, h5py.Dataset):
            raise PostproError(f"{self._where} holds no {part}/{quantity}")
        return dataset, column

    def modal_peak(self, quantity: str, name: str, component: str, mode: int,
                   direction: str) -> float:
        """The signed peak of one mode (its number in the modes analysis) along one direction:
        ``quantity`` displacement (``name`` a node), element_force (a cell) or reaction."""
        numbers = [int(n) for n in self._dataset("mode_numbers")[()]]
        if mode not in numbers:
            raise PostproError(f"{self._where}: mode {mode} was not combined (modes: "
                               f"{_listing(numbers)})")
        dataset, column = self._part("by_mode", quantity, name, component)
        return dataset[numbers.index(mode), self._direction(direction), column].item()

    def direction_peak(self, quantity: str, name: str, component: str, direction: str) -> float:
        """The peak along one direction, its modes combined (and its residual added)."""
        dataset, column = self._part("by_direction", quantity, name, component)
        return dataset[self._direction(direction), column].item()
