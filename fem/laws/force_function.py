"""Force-function links: a force on one dof, a function of that dof's displacement u, of its
velocity v, or of both (code_aster's RELA_EFFO_DEPL and RELA_EFFO_VITE), taken from the
study's ``[functions]``.

The link acts along the unit vector e of its component (DX, DY or DZ) on the relative
translation d of its node (``fem.links.geometry``: one node, d is the node's translation,
against the ground or a moving support; two nodes, d = u_first - u_second): u = e . d,
v = e . d'. On a modal basis the link machinery recombines d from the modal coordinates at
every evaluation, so the law sees the physical u and v on either basis. Its force f(u, v)
acts on the structure *as given*: +f e on the first node (and -f e on the second). A
restoring spring is written f(u) = -k u, a dashpot f(v) = -c v.

The function is one of the study's:

* a table (``table`` or ``file``) of u (``variable = "displacement"``, the default) or of v
  (``"velocity"``): linear interpolation between its points, beyond them the function's own
  rules (``left``/``right``: "error" gives a force that is not finite, which stops the run,
  "constant", "linear"); its derivative is the slope of the segment (the one after a
  breakpoint), zero beyond a "constant" end;
* an expression of u and v (``fem.functions.expression``: the names u and v make an
  expression a force law): the reader flattens its graph into a postfix program (opcodes and
  constants, ``program``) kept in the contact's parameter row, which one compiled
  interpreter (``evaluate_program``) runs with forward-mode differentiation: each value of its
  stack carries its derivatives with respect to u and v, so that the implicit schemes get the
  exact df/du and df/dv. Nothing is compiled per study. Division by zero gives inf or NaN as
  numpy would, and a force that is not finite stops the run (``FAILURE``).

Energy. The force splits into its value at rest, f(u, 0), and the rest f(u, v) - f(u, 0):

* the link stores V(u) = -int_0^u f(s, 0) ds (in ``energy/link_energy``): exact for a table
  of u (piecewise quadratic; from the table's end nearest to 0 when its domain does not reach
  0) and of v (f(u, 0) is a constant); for an expression, carried from the committed row,
  V1 = V0 - int_u0^u1 f(s, 0) ds by a three-point Gauss-Legendre rule on the step's
  interval (16 of them at the start, from u = 0 to the initial displacement);
* it dissipates D = -int (f(u, v) - f(u, 0)) u' dt over each step (Simpson's rule on the
  step's cubic Hermite path; zero without v), into ``energy/dissipated`` and cumulated in its
  series ``dissipated``. D < 0 is energy the link gives (a negative damping).

V(u1) - V(u0) + D is the work -int f du the structure does on the link, so the energy balance
closes.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np

from fem.laws import postfix
from fem.laws.axial import motion
from fem.laws.postfix import program
from fem.laws.columns import (A_FN, A_FTM, A_LAM, A_PEN, A_VSL, ACT, DIR, ENN, ENT, FDN, FN,
                              FTM, G0, G1, KIND, LAM, MODE, NRM, PDOT, PEN, SLIPW, STICK, VSL,
                              own)
from fem.laws.contract import Feature, Law, Series

#: the kind code of a force-function contact (column KIND; the registry checks codes are
#: unique)
FORCE_FUNCTION = 9
#: why a force that is not finite stops the run
FAILURE = ("its function gave a force that is not finite: a table read beyond an end whose "
           "rule is \"error\", or an expression outside its domain (1/0, log(0), sqrt of a "
           "negative number...)")
#: the room a function has in a parameter row: slots (a table's abscissae then its values; a
#: program's opcodes and constants), and the deepest stack of a program
MAX_SLOTS = 48
MAX_POINTS = MAX_SLOTS // 2
MAX_DEPTH = 8
#: its own columns: the form of the function (a table of u or of v, an expression), the
#: number of points or of program slots, the rules beyond a table's ends, whether it depends
#: on u and on v, the slots; its own value columns: the interpreter's stack (a value and its
#: derivatives with respect to u and v per level)
OWN = own(parameters=(1, 1, 1, 1, 1, 1, MAX_SLOTS), values=(3 * MAX_DEPTH,))
FORM, COUNT, LEFT, RIGHT, USES_U, USES_V, SLOTS = OWN.P
(STACK,) = OWN.V
TABLE_U, TABLE_V, EXPRESSION = 0.0, 1.0, 2.0
RULES = {"error": 0.0, "constant": 1.0, "linear": 2.0}
ERROR, CONSTANT = RULES["error"], RULES["constant"]
#: value columns: u (PEN), v (PDOT), the force (FN), the stored energy V (ENN, and archived in
#: LAM), the step's dissipation (SLIPW); archived: v in FTM, the dissipation since the start
#: in VSL
DISPLACEMENT, VELOCITY, FORCE, STORED, DISSIPATED = PEN, FTM, FN, LAM, VSL

#: three-point Gauss-Legendre rule on [0, 1]
GAUSS_X = (0.5 - 0.5 * math.sqrt(0.6), 0.5, 0.5 + 0.5 * math.sqrt(0.6))
GAUSS_W = (5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0)
#: Gauss-Legendre intervals of the stored energy's integral at h = 0 (the start)
START_PANELS = 16


# ------------------------------------------------------------------ tables
@numba.njit(cache=True, nogil=True)
def table(P, c, x):
    """(T(x), T'(x)): contact c's table at x, linear between its points, its rules beyond
    (NaN beyond an "error" end); the slope of the segment after a breakpoint."""
    n = int(P[c, COUNT])
    xs = SLOTS
    fs = SLOTS + n
    if n == 1:
        return P[c, fs], 0.0
    if x < P[c, xs]:
        rule = P[c, LEFT]
        if rule == ERROR:
            return np.nan, np.nan
        if rule == CONSTANT:
            return P[c, fs], 0.0
        slope = (P[c, fs + 1] - P[c, fs]) / (P[c, xs + 1] - P[c, xs])
        return P[c, fs] + slope * (x - P[c, xs]), slope
    if x > P[c, xs + n - 1]:
        rule = P[c, RIGHT]
        if rule == ERROR:
            return np.nan, np.nan
        if rule == CONSTANT:
            return P[c, fs + n - 1], 0.0
        slope = (P[c, fs + n - 1] - P[c, fs + n - 2]) / (P[c, xs + n - 1] - P[c, xs + n - 2])
        return P[c, fs + n - 1] + slope * (x - P[c, xs + n - 1]), slope
    i = 0
    while i < n - 2 and x >= P[c, xs + i + 1]:
        i += 1
    slope = (P[c, fs + i + 1] - P[c, fs + i]) / (P[c, xs + i + 1] - P[c, xs + i])
    return P[c, fs + i] + slope * (x - P[c, xs + i]), slope


@numba.njit(cache=True, nogil=True)
def primitive(P, c, x):
    """int_(x_1)^x T of contact c's table, exact (T is piecewise linear); x is first brought
    into the table's domain on an "error" side."""
    n = int(P[c, COUNT])
    xs = SLOTS
    fs = SLOTS + n
    x1 = P[c, xs]
    if n == 1:
        return P[c, fs] * (x - x1)
    if x < x1:
        if P[c, LEFT] == ERROR:
            return 0.0
        f, slope = table(P, c, x)
        return 0.5 * (f + P[c, fs]) * (x - x1)
    total = 0.0
    i = 0
    while i < n - 1 and x > P[c, xs + i + 1]:
        total += 0.5 * (P[c, fs + i] + P[c, fs + i + 1]) * (P[c, xs + i + 1] - P[c, xs + i])
        i += 1
    if i == n - 1 and P[c, RIGHT] == ERROR:
        return total
    f, slope = table(P, c, x)
    return total + 0.5 * (P[c, fs + i] + f) * (x - P[c, xs + i])


# ------------------------------------------------------------------ its expression
@numba.njit(cache=True, nogil=True)
def evaluate_program(P, c, u, v, s):
    """(f, df/du, df/dv): contact c's program (its slots, ``fem.laws.postfix.program``) run at
    (u, v), its stack in the own value columns STACK of row c of s."""
    return postfix.run(P, c, SLOTS, int(P[c, COUNT]), u, v, s, STACK)


# ------------------------------------------------------------------ the law
@numba.njit(cache=True, nogil=True)
def force(P, c, u, v, s):
    """(f, df/du, df/dv) of contact c at (u, v) (s: a value array whose row c holds the
    interpreter's stack)."""
    form = P[c, FORM]
    if form == TABLE_U:
        f, slope = table(P, c, u)
        return f, slope, 0.0
    if form == TABLE_V:
        f, slope = table(P, c, v)
        return f, 0.0, slope
    return evaluate_program(P, c, u, v, s)


@numba.njit(cache=True, nogil=True)
def elastic_work(P, c, u0, u1, panels, s):
    """int_u0^u1 f(s, 0) ds: exact for tables, a Gauss-Legendre rule on ``panels`` intervals
    for an expression of u."""
    if u1 == u0:
        return 0.0
    form = P[c, FORM]
    if form == TABLE_U:
        return primitive(P, c, u1) - primitive(P, c, u0)
    if form == TABLE_V or P[c, USES_U] == 0.0:
        return force(P, c, 0.0, 0.0, s)[0] * (u1 - u0)
    width = (u1 - u0) / panels
    total = 0.0
    for k in range(panels):
        a = u0 + k * width
        for g in range(3):
            total += GAUSS_W[g] * evaluate_program(P, c, a + GAUSS_X[g] * width, 0.0, s)[0]
    return total * width


@numba.njit(cache=True, nogil=True, inline="always")
def trial(P, c, o, d, dd, cv_old, cv_new, phi, Jd, Jv, jac, h):
    """The force-function contact c at the link displacements d and rates dd, h after its
    committed values cv_old: its force on the first node into phi (3 at o), its derivatives
    into Jd, Jv (block o // 3) when ``jac``, its values into cv_new (module docstring)."""
    u1, v1 = motion(P, c, o, d, dd)
    f1, fu, fv = force(P, c, u1, v1, cv_new)
    u0, v0 = cv_old[c, PEN], cv_old[c, PDOT]
    panels = 1 if h > 0.0 else START_PANELS
    stored = cv_old[c, ENN] - elastic_work(P, c, u0, u1, panels, cv_new)
    lost = 0.0
    if P[c, USES_V] != 0.0 and h > 0.0:
        # Simpson's rule on -(f(u, v) - f(u, 0)) u' along the step's cubic Hermite path
        um = 0.5 * (u0 + u1) + 0.125 * h * (v0 - v1)
        vm = 1.5 * (u1 - u0) / h - 0.25 * (v0 + v1)
        r0 = force(P, c, u0, v0, cv_new)[0] - force(P, c, u0, 0.0, cv_new)[0]
        rm = force(P, c, um, vm, cv_new)[0] - force(P, c, um, 0.0, cv_new)[0]
        r1 = f1 - force(P, c, u1, 0.0, cv_new)[0]
        lost = -h * (r0 * v0 + 4.0 * rm * vm + r1 * v1) / 6.0
    cv_new[c, MODE] = STICK
    cv_new[c, ACT] = 1.0
    cv_new[c, G0] = 1.0
    cv_new[c, G1] = 1.0
    cv_new[c, PEN] = u1
    cv_new[c, PDOT] = v1
    cv_new[c, FN] = f1
    cv_new[c, FDN] = 0.0
    cv_new[c, ENN] = stored
    cv_new[c, ENT] = 0.0
    cv_new[c, SLIPW] = lost
    cv_new[c, STORED] = stored
    cv_new[c, VELOCITY] = v1
    cv_new[c, DISSIPATED] = cv_old[c, DISSIPATED] + lost
    for q in range(3):
        cv_new[c, NRM + q] = P[c, DIR + q]
        phi[o + q] += f1 * P[c, DIR + q]
    if jac:
        b = o // 3
        for q in range(3):
            for r in range(3):
                nn = P[c, DIR + q] * P[c, DIR + r]
                Jd[b, q, r] += fu * nn
                Jv[b, q, r] += fv * nn


def _at_rest(row) -> tuple:
    """(f, df/du, df/dv) of a parameter row at u = v = 0 (NaN outside the function's
    domain)."""
    P = np.asarray(row, float)[None, :OWN.width_p].copy()
    s = np.zeros((1, OWN.width_v))
    return tuple(float(x) for x in force(P, 0, 0.0, 0.0, s))


def stiffness(row) -> float:
    """The largest stiffness |df/du| (N/m): the steepest segment of a table of u, the slope
    at rest of an expression; none for a table of v."""
    if row[FORM] == TABLE_V:
        return 0.0
    if row[FORM] == TABLE_U:
        n = int(row[COUNT])
        if n < 2:
            return 0.0
        x, f = row[SLOTS:SLOTS + n], row[SLOTS + n:SLOTS + 2 * n]
        return float(np.max(np.abs(np.diff(f) / np.diff(x))))
    slope = _at_rest(row)[1]
    return abs(slope) if math.isfinite(slope) else 0.0


def traits(row) -> dict:
    """A force-function contact (``fem.links.traits``): its force depends on the rate when its
    function depends on v; otherwise it follows from the displacement alone (an explicit
    step needs no iteration). It is axial: a force along a fixed direction, a function of
    the displacement along it and of its rate, whose tangent is symmetric."""
    rate = bool(row[USES_V] != 0.0)
    return dict(rate=rate, elastic=not rate, plane_elastic=False, evolving=False,
                instant=False, friction=False, axial=True)


# ------------------------------------------------------------------ declaration
#: the kind codes of its contacts (column KIND)
CODES = (FORCE_FUNCTION,)
LAW = Law(
    "force_function", "a force on one dof, a function (a table, an expression) of its "
                      "displacement, of its velocity or of both",
    (Feature("force_function", "force function of the displacement and velocity", rate=True,
             linear=False, events=False,
             nonlinear="its force is any function of the dof's displacement and velocity (a "
                       "table, an expression): not linear, and it has no events where a "
                       "table's slope changes"),),
    (Series("force", "N", "the force f(u, v) on the structure along `component` (on the "
                          "first node; the second gets -f)"),
     Series("displacement", "m", "the displacement u of the dof along `component` (two "
                                 "nodes: of the first relative to the second)"),
     Series("velocity", "m/s", "its velocity v"),
     Series("stored", "J", "the energy stored, V(u) = -int_0^u f(s, 0) ds"),
     Series("dissipated", "J", "the energy dissipated since the start, -int (f(u, v) - "
                               "f(u, 0)) du (negative: given to the structure)")),
    (),
    OWN)


#: the sign convention, restated by the errors about a force law
CONVENTION = ("the function gives the force on the structure (N) along `component`, at "
              "increasing displacements u (m) or velocities v (m/s): a restoring spring is "
              "f(u) = -k u, a dashpot f(v) = -c v")


def read(t, p: dict, components=()) -> None:
    """The keys of a force-function link (docs/study_format.md); its function is read by
    ``read_functions``."""
    comp = t.str("component")
    if comp in ("DRX", "DRY", "DRZ"):
        raise t.error("component", f"a link acts on translations: DX, DY or DZ (got {comp})")
    if comp not in ("DX", "DY", "DZ"):
        raise t.error("component", f"expected DX, DY or DZ, got {comp!r}")
    if components and comp not in components:
        raise t.error("component", f"{comp} is not a component of the model "
                                   f"({' '.join(components)})")
    p["component"] = comp
    p["direction"] = [1.0 if comp == c else 0.0 for c in ("DX", "DY", "DZ")]
    p["function"] = t.str("function")
    p["variable"] = t.str("variable", None, choices=("displacement", "velocity"))


def function_roles(data: dict, where: str) -> list:
    """What a ``[[link]]`` table of this law (raw ``data`` at ``where``) makes of the function
    it names, for the errors of the study's functions (``fem.study.model_blocks``)."""
    name = data.get("function")
    if data.get("kind") != "force_function" or not isinstance(name, str):
        return []
    link = data.get("name")
    who = f"{where}" + (f" (link '{link}')" if isinstance(link, str) else "")
    return [(name, f"{who} reads it as its force law: {CONVENTION}")]


def read_functions(t, p: dict, functions: dict) -> None:
    """The link's function, from the study's ``functions``, into its parameters: a table's
    points and rules, or an expression's program (``program``); refused, with the key and the
    sign convention, when it does not fit (unknown, an expression of t, too large)."""
    name = p["function"]
    link = t.data.get("name")
    who = f"link '{link}'" if isinstance(link, str) else "the link"
    fn = functions.get(name)
    if fn is None:
        known = ", ".join(sorted(functions)) or "none defined"
        raise t.error("function", f"unknown function '{name}' (defined: {known})")
    if fn.kind in ("table", "record"):
        variable = p["variable"] or "displacement"
        n = len(fn.times)
        if n > MAX_POINTS:
            raise t.error("function", f"the table '{name}' has {n} points; {who} takes at most "
                                      f"{MAX_POINTS} (the room of its parameter row)")
        p.update(form=TABLE_U if variable == "displacement" else TABLE_V, variable=variable,
                 count=n, slots=[float(x) for x in fn.times] + [float(f) for f in fn.values],
                 left=fn.left, right=fn.right, uses_u=variable == "displacement",
                 uses_v=variable == "velocity")
    elif fn.kind == "expression":
        if p["variable"] is not None:
            raise t.error("variable", f"applies to a table: the expression '{name}' names its "
                                      f"variables u and v itself")
        if "t" in fn.variables:
            raise t.error("function", f"the expression '{name}' uses t: the force law of a "
                                      f"link is a function of u and v, not of time "
                                      f"({CONVENTION})")
        slots, depth = program(fn.graph)
        if len(slots) > MAX_SLOTS or depth > MAX_DEPTH:
            raise t.error("function", f"the expression '{name}' is too large for {who}: its "
                                      f"program takes {len(slots)} slots and a stack "
                                      f"{depth} deep, at most {MAX_SLOTS} and {MAX_DEPTH} "
                                      f"(the room of its parameter row)")
        p.update(form=EXPRESSION, count=len(slots), slots=slots, left="error",
                 right="error", uses_u="u" in fn.variables, uses_v="v" in fn.variables,
                 expression=fn.text)
    else:
        raise t.error("function", f"function '{name}' is a {fn.kind}: a force law is a table "
                                  f"or an expression of u and v")
    _warn_if_not_restoring(t, p, name)


def _warn_if_not_restoring(t, p: dict, name: str) -> None:
    """Warn (never refuse, never change) when the force law rises through rest, df/du > 0
    or df/dv > 0 at u = v = 0: a negative stiffness or damping, which the sign convention
    (the force on the structure) makes of a table or expression written as the force the
    link carries. It may be meant (a snap-through, an active device): it is taken as
    given."""
    f, fu, fv = _at_rest(_row(p))
    for slope, what, name_var, meant in ((fu, "stiffness", "u", "f(u) = -k u"),
                                         (fv, "damping", "v", "f(v) = -c v")):
        if math.isfinite(slope) and slope > 0.0:
            warnings.warn(f"{t.key('function')}: the force law '{name}' rises through "
                          f"{name_var} = 0 (df/d{name_var} = {slope:.6g} > 0 there): a "
                          f"negative {what}, which pushes the structure away from rest; it is "
                          f"taken as given ({CONVENTION}: a restoring law is {meant})",
                          stacklevel=2)


def needed(p: dict, where: str) -> list:
    return [("force_function", f"{where}.kind")]


def directions(p: dict) -> list:
    return [("component", p["direction"], "along")]


def _row(p: dict) -> np.ndarray:
    row = np.zeros(OWN.width_p)
    row[KIND] = FORCE_FUNCTION
    row[DIR:DIR + 3] = p["direction"]
    row[FORM] = p["form"]
    row[COUNT] = p["count"]
    row[LEFT] = RULES[p["left"]]
    row[RIGHT] = RULES[p["right"]]
    row[USES_U] = 1.0 if p["uses_u"] else 0.0
    row[USES_V] = 1.0 if p["uses_v"] else 0.0
    row[SLOTS:SLOTS + len(p["slots"])] = p["slots"]
    return row


def rows(p: dict, nodes: int = 2) -> list:
    return [("series", _row(p))]


def attrs(p: dict, contact_rows) -> dict:
    out = dict(component=p["component"], function=p["function"],
               form={TABLE_U: "table of displacement", TABLE_V: "table of velocity",
                     EXPRESSION: "expression"}[p["form"]])
    if p["form"] == EXPRESSION:
        out["expression"] = p["expression"]
    else:
        n = p["count"]
        out["table"] = np.column_stack([p["slots"][:n], p["slots"][n:]])
    return out


def series(v, p: dict) -> dict:
    return {"force": v[:, 0, A_FN], "displacement": v[:, 0, A_PEN],
            "velocity": v[:, 0, A_FTM], "stored": v[:, 0, A_LAM],
            "dissipated": v[:, 0, A_VSL]}
