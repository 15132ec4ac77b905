"""Isolator links: seismic isolation devices, one of two chosen by ``device``.

* ``device = "pendulum"``: a single concave friction pendulum bearing between a node and the
  ground (or two nodes), ``fem.laws.pendulum``: the restoring force (N / R) u of a slider on a
  surface of radius R, velocity-dependent Coulomb friction mu(v) N opposite to the 2-D sliding
  velocity in the horizontal plane, and a compression-only support along the vertical (a
  stiff penalty spring whose force is the vertical load N; no force on uplift). Its modes
  (uplift and landing, stick and slip) change at located events.
* ``device = "anti_seismic"``: code_aster's anti-seismic device (ANTI_SISM) along a direction,
  ``fem.laws.anti_seismic``: a smooth elastic yield from K1 to K2 about F_y in parallel with a
  power-law dashpot scaled by the elongation, without internal state or events.

This module is the law's registry row (``fem.laws.contract``): its study keys, rows, series,
traits and the handlers at instants of the pendulum, which are the shock law's (the bearing's
columns are the shock law's, followed by its own).
"""

from __future__ import annotations

import math

import numpy as np

from fem.laws import anti_seismic, friction, pendulum, shock, stick_slip
from fem.laws.anti_seismic import ANTI_SEISMIC
from fem.laws.columns import (A_ACT, A_FN, A_FTM, A_LAM, A_PEN, A_VSL, BLK, DIR, KIND, MODE,
                              RELEASE_FORCE, SLIP, STICK, Own)
from fem.laws.contract import Feature, Law, Sample, Series, axial_rows, record
from fem.laws.pendulum import PENDULUM

#: the columns of both devices: a contact has one code, and the registry sizes the rows to
#: the wider
assert anti_seismic.OWN.width_p <= pendulum.OWN.width_p
assert anti_seismic.OWN.width_v <= pendulum.OWN.width_v
OWN = Own(pendulum.OWN.P + anti_seismic.OWN.P, pendulum.OWN.V + anti_seismic.OWN.V,
          pendulum.OWN.width_p, pendulum.OWN.width_v)

DEVICES = ("pendulum", "anti_seismic")
#: the loop ``fem post hysteresis`` draws of each device (its deformation and force series)
LOOPS = {"pendulum": ["displacement_1", "force_1"], "anti_seismic": ["elongation", "force"]}


# ------------------------------------------------------------------ what the schemes rely on
def _bearing(row) -> bool:
    return int(row[KIND]) == PENDULUM and row[pendulum.ROLE] == pendulum.BEARING


def stiffness(row) -> float:
    """A bearing: its vertical and sticking stiffnesses (the restoring N / R is far below);
    its record row: none. An anti-seismic device: the larger of K1 and K2 (the largest slope
    of its elastic part)."""
    if int(row[KIND]) == ANTI_SEISMIC:
        return float(max(row[anti_seismic.K1], row[anti_seismic.K2]))
    if _bearing(row):
        return float(row[pendulum.KN] + (row[pendulum.KT] if row[pendulum.MU] > 0 else 0.0))
    return 0.0


def traits(row) -> dict:
    """A bearing: its force depends on the rate (friction, and the direction of sliding),
    has stick and slip modes when it rubs; its record row carries no force. An anti-seismic
    device: its force follows from the elongation alone without a dashpot (C = 0); it acts
    along its fixed direction as a function of the elongation and its rate (``axial``: a
    symmetric tangent, which the Newmark family may put in its step matrix)."""
    if int(row[KIND]) == ANTI_SEISMIC:
        damped = row[anti_seismic.DAMPING] > 0.0
        return dict(rate=damped, elastic=not damped, plane_elastic=False, evolving=False,
                    instant=False, friction=False, axial=True)
    if _bearing(row):
        return dict(rate=True, elastic=False, plane_elastic=False, evolving=False,
                    instant=False, friction=bool(row[pendulum.MU] > 0.0))
    return dict(rate=False, elastic=True, plane_elastic=False, evolving=False, instant=False,
                friction=False)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (PENDULUM, ANTI_SEISMIC)
_WHEN_PENDULUM = 'device = "pendulum"'
_WHEN_DEVICE = 'device = "anti_seismic"'
LAW = Law(
    "isolator", "seismic isolation devices: a friction pendulum bearing, or code_aster's "
                "anti-seismic device",
    (Feature("isolator.pendulum", "friction pendulum bearing", rate=True, state=True,
             linear=False,
             nonlinear="its restoring force N u / R is the product of the vertical load and "
                       "the horizontal displacement, and its friction follows the direction of "
                       "the 2-D sliding velocity: neither is linear in the state"),
     Feature("isolator.anti_seismic", "anti-seismic device", rate=True, linear=False,
             nonlinear="its force K2 d + (K1 - K2) d / sqrt(1 + (K1 d / F_y)^2) + C sgn(v) "
                       "|v d / d_max|^alpha is not linear in the elongation and its rate",
             events=False)),
    (Series("displacement_1", "m", "horizontal displacement along `horizontal` (e1)",
            _WHEN_PENDULUM),
     Series("displacement_2", "m", "horizontal displacement along e2 = vertical x horizontal",
            _WHEN_PENDULUM),
     Series("force_1", "N", "horizontal force the bearing carries along e1 (restoring plus "
                            "friction; positive where it resists a positive displacement, the "
                            "force on the node being its opposite)", _WHEN_PENDULUM),
     Series("force_2", "N", "horizontal force the bearing carries along e2", _WHEN_PENDULUM),
     Series("vertical_load", "N", "the vertical load N through the bearing, compression "
                                  "positive (0 on uplift)", _WHEN_PENDULUM),
     Series("compression", "m", "compression of the vertical spring, |u|^2 / (2 R) - "
                                "vertical . d (negative: uplift, by that distance)",
            _WHEN_PENDULUM),
     Series("state", "1", "1 bearing, 0 uplifted", _WHEN_PENDULUM),
     Series("friction_force", "N", "magnitude of the friction force", _WHEN_PENDULUM),
     Series("sliding_speed", "m/s", "sliding speed |u'| (0 while sticking)", _WHEN_PENDULUM),
     Series("dissipated", "J", "the friction work since the start (pendulum); the dashpot's "
                               "work since the start (anti_seismic)"),
     Series("force", "N", "force the device carries, tension positive (the force on the first "
                          "node is its opposite, code_aster's F)", _WHEN_DEVICE),
     Series("elongation", "m", "elongation d along `direction`", _WHEN_DEVICE),
     Series("elastic_force", "N", "its elastic part K2 d + (K1 - K2) d / sqrt(1 + (K1 d / "
                                  "F_y)^2)", _WHEN_DEVICE),
     Series("dashpot_force", "N", "its dashpot's part C sgn(v) |v d / d_max|^alpha",
            _WHEN_DEVICE)),
    (Sample("isolator_pendulum", "isolator.pendulum",
            {"kind": "isolator", "device": "pendulum", "radius": 1.0,
             "vertical_stiffness": 1e5, "friction": 0.1}, press=-10.0),),
    OWN)


# ------------------------------------------------------------------ study keys
def read(t, p: dict, components=()) -> None:
    """The keys of an isolator link (docs/study_format.md)."""
    p["device"] = t.str("device", choices=DEVICES)
    if p["device"] == "pendulum":
        _read_pendulum(t, p)
    else:
        _read_anti_seismic(t, p)


def _read_pendulum(t, p: dict) -> None:
    p["vertical"] = t.direction("vertical", (0.0, 0.0, 1.0))
    p["horizontal"] = _horizontal(t, p["vertical"])
    p["radius"] = t.float("radius", positive=True)
    p["vertical_stiffness"] = t.float("vertical_stiffness", positive=True)
    p["sticking_stiffness"] = t.float("sticking_stiffness", p["vertical_stiffness"],
                                      positive=True)
    given = [k for k in ("friction_slow", "friction_fast", "rate_parameter") if t.has(k)]
    if t.has("friction"):
        if given:
            raise t.error(given[0], "give `friction` (a constant coefficient) or "
                                    "`friction_slow`, `friction_fast` and `rate_parameter` (a "
                                    "coefficient that depends on the sliding speed), not both")
        mu = t.float("friction", min=0.0)
        p["friction_slow"] = p["friction_fast"] = mu
        p["rate_parameter"] = 0.0
        return
    if not given:
        raise t.missing("friction", "missing: give `friction` (0 for a frictionless bearing), "
                                    "or `friction_slow`, `friction_fast` and `rate_parameter`")
    slow = t.float("friction_slow", positive=True)
    fast = t.float("friction_fast", positive=True)
    rate = t.float("rate_parameter", positive=True)
    if fast < slow:
        raise t.error("friction_fast", f"must be >= friction_slow ({slow:g}), got {fast:g}: "
                                       f"the coefficient grows with the sliding speed")
    p["friction_slow"], p["friction_fast"], p["rate_parameter"] = slow, fast, rate


def _horizontal(t, vertical) -> tuple:
    """The first horizontal axis e1: the key ``horizontal`` (orthogonal to the vertical), or
    the global axis X, Y or Z least aligned with the vertical, projected on the horizontal
    plane."""
    a = np.asarray(vertical, float)
    given = t.direction("horizontal", None)
    if given is not None:
        cosine = float(np.dot(given, a))
        if abs(cosine) > 1e-9:
            raise t.error("horizontal", f"must be orthogonal to vertical {_vector(vertical)}, "
                                        f"got {_vector(given)} (cosine {cosine:.3g})")
        return tuple(float(x) for x in given)
    axis = np.eye(3)[int(np.argmin(np.abs(a)))]
    e1 = axis - np.dot(axis, a) * a
    return tuple(float(x) for x in e1 / np.linalg.norm(e1))


def _vector(v) -> str:
    return "[" + ", ".join(f"{x:g}" for x in v) + "]"


def _read_anti_seismic(t, p: dict) -> None:
    p["direction"] = t.direction("direction")
    p["initial_stiffness"] = t.float("initial_stiffness", positive=True)
    p["final_stiffness"] = t.float("final_stiffness", min=0.0)
    p["yield_force"] = t.float("yield_force", positive=True)
    p["damping"] = t.float("damping", 0.0, min=0.0)
    p["exponent"] = t.float("exponent", 1.0, positive=True, max=2.0)
    p["max_elongation"] = t.float("max_elongation", positive=True)
    p["linear_below"] = t.float("linear_below", 1e-6, positive=True)
    p["linear_within"] = t.float("linear_within", 1e-6 * p["max_elongation"], positive=True)
    if not math.isfinite(p["initial_stiffness"] / p["yield_force"]):
        raise t.error("yield_force", f"initial_stiffness / yield_force = "
                                     f"{p['initial_stiffness']:g} / {p['yield_force']:g} is "
                                     f"not a finite number")


def needed(p: dict, where: str) -> list:
    return [(f"isolator.{p['device']}", f"{where}.device")]


def directions(p: dict) -> list:
    """A bearing's vertical lies in the model's translations (the vertical load needs it);
    an anti-seismic device acts along its direction."""
    if p["device"] == "pendulum":
        return [("vertical", p["vertical"], "along")]
    return [("direction", p["direction"], "along")]


def rows(p: dict, nodes: int = 2) -> list:
    """A bearing's two rows (the bearing and its record), or the device's one."""
    if p["device"] == "anti_seismic":
        a = anti_seismic
        return axial_rows(OWN, ANTI_SEISMIC, p, {
            a.K1: p["initial_stiffness"], a.K2: p["final_stiffness"], a.YIELD: p["yield_force"],
            a.DAMPING: p["damping"], a.EXPONENT: p["exponent"],
            a.MAX_ELONGATION: p["max_elongation"], a.LINEAR_BELOW: p["linear_below"],
            a.LINEAR_WITHIN: p["linear_within"]})
    q = pendulum
    vertical = np.asarray(p["vertical"], float)
    e1 = np.asarray(p["horizontal"], float)
    e2 = np.cross(vertical, e1)
    row = np.zeros(OWN.width_p)
    row[KIND] = PENDULUM
    row[DIR:DIR + 3] = -vertical
    row[q.KN] = p["vertical_stiffness"]
    row[q.CN] = 0.0
    row[q.REL] = RELEASE_FORCE
    row[q.MU] = p["friction_slow"]
    row[q.MUS] = p["friction_slow"]
    row[q.KT] = p["sticking_stiffness"]
    row[q.RADIUS] = p["radius"]
    row[q.MU_FAST] = p["friction_fast"]
    row[q.RATE] = p["rate_parameter"]
    row[q.E1:q.E1 + 3] = e1
    row[q.E2:q.E2 + 3] = e2
    record = row.copy()
    row[q.ROLE] = q.BEARING
    record[q.ROLE] = q.RECORD
    return [("bearing", row), ("record", record)]


def attrs(p: dict, contact_rows) -> dict:
    if p["device"] == "anti_seismic":
        keys = ("initial_stiffness", "final_stiffness", "yield_force", "damping", "exponent",
                "max_elongation", "linear_below", "linear_within")
        out = {key: p[key] for key in keys}
        out.update(device=p["device"], direction=list(p["direction"]),
                   loop=LOOPS["anti_seismic"])
        return out
    keys = ("radius", "vertical_stiffness", "sticking_stiffness", "friction_slow",
            "friction_fast", "rate_parameter")
    out = {key: p[key] for key in keys}
    e1 = np.asarray(p["horizontal"], float)
    out.update(device=p["device"], vertical=list(p["vertical"]), horizontal=list(e1),
               horizontal_2=list(np.cross(np.asarray(p["vertical"], float), e1)),
               loop=LOOPS["pendulum"])
    return out


def series(v, p: dict) -> dict:
    """The link's series from its contacts' archived values v (k, contacts, NA)."""
    if p["device"] == "anti_seismic":
        return {"force": v[:, 0, A_FN], "elongation": v[:, 0, A_PEN],
                "elastic_force": v[:, 0, A_LAM], "dashpot_force": v[:, 0, A_FTM],
                "dissipated": v[:, 0, A_VSL]}
    bearing, record = v[:, 0], v[:, 1]
    return {"displacement_1": record[:, A_PEN], "displacement_2": record[:, A_LAM],
            "force_1": record[:, A_FN], "force_2": record[:, A_FTM],
            "vertical_load": bearing[:, A_FN] * bearing[:, A_ACT],
            "compression": bearing[:, A_PEN], "state": bearing[:, A_ACT],
            "friction_force": bearing[:, A_FTM], "sliding_speed": bearing[:, A_VSL],
            "dissipated": bearing[:, A_LAM]}


# ------------------------------------------------------------------ at instants
def _bearings(scheme, contacts) -> list:
    """The bearings among ``contacts`` (the only contacts of the law with events)."""
    return [c for c in contacts if _bearing(scheme.P[c])]


def at_event(scheme, c: int, g: int, records: list, decided: set) -> bool:
    """A bearing's event (``fem.laws.shock.at_event``): uplift or landing (its normal
    function), stick or slip (its friction function, Coulomb's law deciding a slider at
    rest). A slider whose horizontal motion is imposed (no mass behind it: an imposed cycle)
    and stops sticks with the force its friction spring holds, which its motion then unloads
    and reloads the other way until it slips again."""
    P = scheme.P
    cv = scheme.buf.CV[scheme.cur]
    if g == 1 and cv[c, MODE] == SLIP and stick_slip.is_friction(P, cv, c) \
            and _massless(scheme, c) and stick_slip.at_rest(scheme, c):
        decided.add(c)
        o = 3 * int(P[c, BLK])
        friction.stick_anchor(P, c, cv, scheme.buf.DB[scheme.cur], o)
        cv[c, MODE] = STICK
        records.append(record(scheme.t, "stick", scheme.links.link_of(c),
                              shock.detail(scheme, c)))
        return True
    return shock.at_event(scheme, c, g, records, decided)


def _massless(scheme, c: int) -> bool:
    """Whether no mass moves with bearing c's horizontal motion (it is imposed)."""
    cv = scheme.buf.CV[scheme.cur]
    Pt = stick_slip.projector(scheme.P, cv, c)
    W = Pt @ stick_slip.compliance(scheme, c) @ Pt
    return float(np.max(np.abs(W), initial=0.0)) <= 0.0


def settle_check(scheme, cv, c: int, records: list, decided: set) -> bool:
    """A bearing's mode that the current state violates beyond round-off changes
    (``fem.laws.shock.settle_check``)."""
    if not _bearing(scheme.P[c]):
        return False
    return shock.settle_check(scheme, cv, c, records, decided)


def start(scheme, contacts, records: list) -> None:
    """At the start: a bearing exactly at its surface that the motion drives in bears; a
    bearing slider sticks, or slides along its velocity (``fem.laws.shock.start``). Nothing
    is dissipated yet: the first evaluation of the laws, from a cleared row, moved the anchor
    from the origin to the slider."""
    bearings = _bearings(scheme, contacts)
    shock.start(scheme, bearings, records)
    cv = scheme.buf.CV[scheme.cur]
    for c in bearings:
        cv[c, pendulum.DISSIPATED] = 0.0


def start_at_rest(scheme, contacts, records: list) -> None:
    """At rest, Coulomb's law on the forces at the start (``fem.laws.shock.start_at_rest``)."""
    shock.start_at_rest(scheme, _bearings(scheme, contacts), records)
