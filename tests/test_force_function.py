"""Force-function links (``kind = "force_function"``) against solutions written here, in
every scheme of the catalog that offers them, on both bases:

* a mass on a spring k0 and a force law f(u, v) = -k1 u - k3 u^3 - c v (an expression), and a
  table sampling f(u) = -k1 u - k3 u^3: the motion against scipy's solve_ivp of the same
  equations (the table interpolated by numpy), the link's force, its stored energy
  k1 u^2 / 2 + k3 u^4 / 4 (the table's: the integral of the interpolant), its dissipation
  int c v^2 dt, and the energy balance;
* a force-velocity law f(v) = -c v (an expression and a table of v) on both bases: the
  closed form of the damped oscillator, and on a modal basis the same response as the
  structure with the damping ratio c / (2 m w) in its modal damping;
* a table of u equal to a linear spring -k u: the closed form of the oscillator;
* two masses joined by the law, which then acts on their relative motion;
* refused input, with errors that name the key and the link and restate the sign
  convention; the warning for a law that rises through rest.

Sign convention: f is the force on the structure along the component (a restoring spring
is f(u) = -k u).
"""

from __future__ import annotations

import math
import textwrap
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fem import catalog
from conftest import one_mass_toml, two_masses_toml
from test_maxwell import (ACCURACY, ROWS, SAFETY, _ids, assert_refused, modes, run,
                          transient)

MASS = 1.0                  # kg
K0 = 1.0e3                  # N/m, the model's own spring (the modal basis' mode)
X0 = 1.0e-3                 # m, the initial displacement
K1 = 2.0e3                  # N/m
K3 = 4.0e9                  # N/m^3: k3 x0^2 = 2 k1, strongly nonlinear
C = 2.0                     # N.s/m
END = 0.2                   # s: about four periods
STEP = 5.0e-5               # s
#: the fastest rate of the linearized motion (at the largest displacement)
RATE = math.sqrt((K0 + K1 + 3.0 * K3 * X0 ** 2) / MASS)

OFFERING = [key for key in ROWS if catalog.SCHEMES[key].offers("force_function")]


def test_every_scheme_but_the_exact_one_offers_force_functions():
    """The exact scheme needs equations linear between events; the catalog says why it
    refuses a force function, the others run it."""
    for key, row in catalog.SCHEMES.items():
        if key[1] == "exact":
            assert "not linear" in row.reason("force_function")
        else:
            assert row.offers("force_function"), (key, row.reason("force_function"))


# ------------------------------------------------------------------------------------------
# studies
def force_link(function, nodes=("A",), name="ff", component="DX", extra=""):
    quoted = ", ".join(f'"{n}"' for n in nodes)
    return (f'[[link]]\nkind = "force_function"\nname = "{name}"\nnodes = [{quoted}]\n'
            f'component = "{component}"\nfunction = "{function}"\n{extra}')


def oscillator(basis, scheme, functions, link, *, end=END, step=STEP, analysis_extra=""):
    """A mass on the spring k0, displaced by X0 and released, with the link."""
    return one_mass_toml(MASS, f"stiffness = {K0!r}", "displacement", X0) + f"""
{functions}
{link}
{modes(1) if basis == "modal" else ""}
{transient(basis, scheme, end=end, step=step, links=("ff",))}
{analysis_extra}
"""


def table_text(points):
    return "[" + ", ".join(f"[{x!r}, {f!r}]" for x, f in points) + "]"


#: a table sampling -k1 u - k3 u^3 over +-1.2 X0
U_POINTS = np.linspace(-1.2 * X0, 1.2 * X0, 13)
CUBIC_TABLE = [(float(u), float(-K1 * u - K3 * u ** 3)) for u in U_POINTS]
FUNCTIONS = {
    "expression": f'[functions.law]\nexpression = "-{K1!r}*u - {K3!r}*u**3 - {C!r}*v"\n',
    "table": f"[functions.law]\ntable = {table_text(CUBIC_TABLE)}\n",
}


def law_reference(form, times):
    """(x, v, force, stored, dissipated) of m x'' = -k0 x + f(x, x') from (X0, 0), by
    solve_ivp at tight tolerances; the dissipated energy int c v^2 dt integrated with the
    motion."""
    ut, ft = np.array([p[0] for p in CUBIC_TABLE]), np.array([p[1] for p in CUBIC_TABLE])

    def f(x, v):
        if form == "expression":
            return -K1 * x - K3 * x ** 3 - C * v
        return float(np.interp(x, ut, ft))

    def rhs(t, y):
        x, v, _ = y
        return [v, (-K0 * x + f(x, v)) / MASS, C * v * v if form == "expression" else 0.0]

    sol = solve_ivp(rhs, (0.0, times[-1]), [X0, 0.0, 0.0], method="DOP853", t_eval=times,
                    rtol=1e-12, atol=1e-16, max_step=STEP if form == "table" else np.inf)
    x, v, lost = sol.y
    force = np.array([f(a, b) for a, b in zip(x, v)])
    if form == "expression":
        stored = 0.5 * K1 * x ** 2 + 0.25 * K3 * x ** 4
    else:
        # -int_0^x of the interpolant: the trapezoid on the table's points up to x
        stored = np.array([-np.trapezoid(np.interp(np.linspace(0.0, a, 2001), ut, ft),
                                         np.linspace(0.0, a, 2001)) for a in x])
    return x, v, force, stored, lost


def error(computed, reference):
    return float(np.max(np.abs(np.asarray(computed) - reference)) / np.max(np.abs(reference)))


def balance_error(data, scale):
    total = (data["energy/kinetic"] + data["energy/potential"] + data["energy/link_energy"]
             + data["energy/dissipated"] - data["energy/external_work"])
    return float(np.max(np.abs(total - total[0])) / scale)


def scheme_bound(basis, scheme, rate, duration, step, kinks=0):
    """The relative error bound of a state (test_maxwell.ACCURACY). With a table, a
    fixed-step scheme meets the kinks of its interpolant inside its steps: each is a jump of
    the slope (at most of the order of the stiffness) in a step, a local error of order
    (w h)^3, SAFETY times that per kink crossed (an adaptive scheme shortens its steps
    there, within its tolerance)."""
    acc = ACCURACY[(basis, scheme)]
    out = acc.bound(rate, duration, step)
    if acc.period is not None:
        out += SAFETY * kinks * (rate * step / acc.refine) ** 3
    return out


@pytest.mark.parametrize("form", ["expression", "table"])
@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_a_nonlinear_force_law_against_solve_ivp(tmp_path, basis, scheme, form):
    """The displacement and velocity, the link's force, stored and dissipated energies
    against solve_ivp, and the energy balance."""
    link = force_link("law")
    data = run(tmp_path, oscillator(basis, scheme, FUNCTIONS[form], link))["a"]
    t = data["time"]
    x, v, force, stored, lost = law_reference(form, t)
    # each period crosses each inner point of the table twice
    periods = math.ceil(END * RATE / (2.0 * math.pi))
    kinks = 0 if form == "expression" else 2 * (len(CUBIC_TABLE) - 2) * periods
    bound = scheme_bound(basis, scheme, RATE, END, STEP, kinks)
    e0 = 0.5 * (K0 + K1) * X0 ** 2 + 0.25 * K3 * X0 ** 4
    errors = {
        "displacement": error(data["displacement"][:, 0], x),
        "velocity": error(data["velocity"][:, 0], v),
        "link displacement": error(data["links/ff/displacement"], x),
        "link velocity": error(data["links/ff/velocity"], v),
        "force": error(data["links/ff/force"], force),
        "stored": float(np.max(np.abs(data["links/ff/stored"] - stored))) / e0,
        "link_energy": float(np.max(np.abs(data["energy/link_energy"] - stored))) / e0,
        "dissipated": float(np.max(np.abs(data["links/ff/dissipated"] - lost))) / e0,
        "balance": balance_error(data, e0),
    }
    print(f"{basis} {scheme} {form}: " + ", ".join(f"{k} {e:.2e}" for k, e in errors.items())
          + f"; bound {bound:.2e}")
    # the states within the bound, the energies (quadratic in them) within twice
    for name, err in errors.items():
        limit = 2 * bound if name in ("stored", "link_energy", "dissipated", "balance") \
            else bound
        assert err < limit, (name, err, limit)


# ------------------------------------------------------------------------------------------
# f(v) = -c v
C_LIN = 6.0                 # N.s/m: xi = c / (2 m w) = 0.095 on k0 alone
W0 = math.sqrt(K0 / MASS)


def damped(times):
    """x(t) of m x'' + c x' + k0 x = 0 from (X0, 0)."""
    xi = C_LIN / (2.0 * MASS * W0)
    wd = W0 * math.sqrt(1.0 - xi * xi)
    return X0 * np.exp(-xi * W0 * times) * (np.cos(wd * times)
                                            + xi * W0 / wd * np.sin(wd * times))


VELOCITY_LAWS = {
    "expression": (f'[functions.dashpot]\nexpression = "-{C_LIN!r}*v"\n', ""),
    "table": (f"[functions.dashpot]\ntable = [[-1.0, {C_LIN!r}], [1.0, {-C_LIN!r}]]\n",
              'variable = "velocity"\n'),
}


@pytest.mark.parametrize("form", ["expression", "table"])
@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_a_velocity_law_is_a_dashpot(tmp_path, basis, scheme, form):
    """f(v) = -c v: the damped oscillator's closed form; the link stores nothing, and the
    energy it dissipates is the energy the oscillator lost."""
    functions, extra = VELOCITY_LAWS[form]
    data = run(tmp_path, oscillator(basis, scheme, functions, force_link("dashpot", extra=extra),
                                    end=0.5, step=1e-4))["a"]
    t = data["time"]
    exact = damped(t)
    bound = scheme_bound(basis, scheme, W0, 0.5, 1e-4)
    err = error(data["displacement"][:, 0], exact)
    e0 = 0.5 * K0 * X0 ** 2
    v = np.gradient(exact, t)
    lost = e0 - (0.5 * MASS * data["velocity"][:, 0] ** 2
                 + 0.5 * K0 * data["displacement"][:, 0] ** 2)
    err_lost = float(np.max(np.abs(data["links/ff/dissipated"] - lost))) / e0
    err_force = float(np.max(np.abs(data["links/ff/force"] + C_LIN * data["links/ff/velocity"])))
    print(f"{basis} {scheme} {form}: displacement {err:.2e}, dissipated {err_lost:.2e}; "
          f"bound {bound:.2e}")
    assert err < bound
    assert err_lost < 2 * bound
    assert err_force < 1e-12 * C_LIN * float(np.max(np.abs(v)))
    assert np.all(data["links/ff/stored"] == 0.0)
    assert np.all(np.diff(data["links/ff/dissipated"]) >= -1e-15 * e0)


def test_the_velocity_law_on_a_modal_basis_is_the_modal_damping(tmp_path):
    """On a modal basis (newmark) the link f(v) = -c v and the modal damping ratio
    c / (2 m w) of the same structure give the same response, the closed form's."""
    functions, extra = VELOCITY_LAWS["expression"]
    with_link = run(tmp_path, oscillator("modal", "newmark", functions,
                                         force_link("dashpot", extra=extra), end=0.5,
                                         step=1e-4), name="link")["a"]
    xi = C_LIN / (2.0 * MASS * W0)
    damped_modes = oscillator("modal", "newmark", "", "", end=0.5, step=1e-4,
                              analysis_extra=f'damping = "modal"\nmodal_damping = [{xi!r}]\n')
    damped_modes = damped_modes.replace('links = ["ff"]\n', "")
    with_ratio = run(tmp_path, damped_modes, name="ratio")["a"]
    a, b = with_link["displacement"][:, 0], with_ratio["displacement"][:, 0]
    bound = scheme_bound("modal", "newmark", W0, 0.5, 1e-4)
    assert error(a, damped(with_link["time"])) < bound
    assert error(b, damped(with_ratio["time"])) < bound
    assert error(a, b) < 1e-9


# ------------------------------------------------------------------------------------------
# a table equal to a linear spring
K_TABLE = 3.0e3


@pytest.mark.parametrize("basis, scheme", OFFERING, ids=_ids(OFFERING))
def test_a_displacement_table_equal_to_a_linear_spring(tmp_path, basis, scheme):
    """f(u) = -k u by two points, extended linearly: the oscillator of stiffness k0 + k, and
    the stored energy k u^2 / 2."""
    functions = (f"[functions.spring]\ntable = [[-1e-3, {K_TABLE * 1e-3!r}], "
                 f'[1e-3, {-K_TABLE * 1e-3!r}]]\nleft = "linear"\nright = "linear"\n')
    w = math.sqrt((K0 + K_TABLE) / MASS)
    data = run(tmp_path, oscillator(basis, scheme, functions, force_link("spring"), end=0.1,
                                    step=2e-5))["a"]
    t = data["time"]
    exact = X0 * np.cos(w * t)
    bound = scheme_bound(basis, scheme, w, 0.1, 2e-5)
    err = error(data["displacement"][:, 0], exact)
    err_stored = float(np.max(np.abs(data["links/ff/stored"]
                                     - 0.5 * K_TABLE * data["links/ff/displacement"] ** 2)))
    print(f"{basis} {scheme}: displacement {err:.2e}; bound {bound:.2e}")
    assert err < bound
    assert err_stored < 1e-12 * 0.5 * K_TABLE * X0 ** 2
    assert balance_error(data, 0.5 * (K0 + K_TABLE) * X0 ** 2) < 2 * bound


def test_two_nodes_act_on_their_relative_motion(tmp_path):
    """Two masses joined by f(u) = -k u, u the first's displacement less the second's: they
    oscillate about their centre of mass at w = sqrt(k / mu) (newmark)."""
    m1, m2, k = 1.0, 2.0, 3.0e3
    mu = m1 * m2 / (m1 + m2)
    text = two_masses_toml(m1, m2, "displacement", X0) + f"""
[functions.spring]
expression = "-{k!r}*u"
{force_link("spring", nodes=("A", "B"))}
{transient("physical", "newmark", end=0.1, step=2e-5, links=("ff",))}
"""
    data = run(tmp_path, text)["a"]
    t = data["time"]
    w = math.sqrt(k / mu)
    rel = X0 * np.cos(w * t)
    centre = m1 * X0 / (m1 + m2)
    x = data["displacement"]
    bound = scheme_bound("physical", "newmark", w, 0.1, 2e-5)
    assert error(x[:, 0] - x[:, 1], rel) < bound
    assert error(m1 * x[:, 0] + m2 * x[:, 1], np.full_like(t, (m1 + m2) * centre)) < 1e-12
    assert error(data["links/ff/displacement"], rel) < bound


# ------------------------------------------------------------------------------------------
# refused input, and the warning
def study_with(functions, link_keys, extra=""):
    return one_mass_toml(1.0, "stiffness = 1.0") + functions + "\n" + textwrap.dedent(f"""
        [[link]]
        kind = "force_function"
        name = "ff"
        nodes = ["A"]
        {link_keys}
        {extra}
        [[analysis]]
        name = "a"
        kind = "transient"
        scheme = "newmark"
        end = 0.01
        step = 1e-3
        links = ["ff"]
        """)


SPRING = '[functions.f]\nexpression = "-10.0*u"\n'
BIG_TABLE = "[functions.f]\ntable = " + table_text(
    [(float(i), -10.0 * i) for i in range(-15, 15)]) + "\n"
BIG_EXPRESSION = "[functions.f]\nexpression = \"" + " + ".join(
    f"{i}.5*u**{i}" for i in range(1, 13)) + "\"\n"
DEEP_EXPRESSION = "[functions.f]\nexpression = \"" + "".join(
    "u*(1+" for _ in range(8)) + "u" + ")" * 8 + "\"\n"
BAD = [
    (SPRING, 'component = "DX"\nfunction = "g"',
     ["link[1].function", "unknown function 'g'", "defined: f"]),
    ("[functions.f]\ntable = [[0.0, 0.0], [1e-3, -10.0], [0.5e-3, -5.0]]\n",
     'component = "DX"\nfunction = "f"',
     ["functions.f.table", "times must increase strictly", "link[1] (link 'ff') reads it as "
      "its force law", "increasing displacements u", "restoring spring is f(u) = -k u"]),
    ('[functions.f]\nexpression = "-10.0*x"\n', 'component = "DX"\nfunction = "f"',
     ["functions.f.expression", "unknown name 'x'", "u and v in the force law",
      "link[1] (link 'ff') reads it as its force law", "restoring spring"]),
    ('[functions.f]\nexpression = "-10.0*u*t"\n', 'component = "DX"\nfunction = "f"',
     ["link[1].function", "uses t", "restoring spring"]),
    (BIG_TABLE, 'component = "DX"\nfunction = "f"',
     ["link[1].function", "30 points", "at most 24"]),
    (BIG_EXPRESSION, 'component = "DX"\nfunction = "f"',
     ["link[1].function", "too large", "at most 48"]),
    (DEEP_EXPRESSION, 'component = "DX"\nfunction = "f"',
     ["link[1].function", "too large", "stack", "deep"]),
    (SPRING, 'component = "DRZ"\nfunction = "f"', ["link[1].component", "translations"]),
    (SPRING, 'component = "DY"\nfunction = "f"', ["link[1].component", "not a component"]),
    (SPRING, 'component = "DX"\nfunction = "f"\nvariable = "velocity"',
     ["link[1].variable", "applies to a table"]),
    (SPRING + "[functions.g]\ntable = [[0.0, 1.0]]\n",
     'component = "DX"\nfunction = "g"\nvariable = "speed"', ["link[1].variable"]),
    (SPRING, 'function = "f"', ["link[1].component", "missing"]),
]


@pytest.mark.parametrize("functions, keys, expected", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_force_laws_are_refused_naming_the_key(tmp_path, capsys, functions, keys,
                                                   expected):
    assert_refused(tmp_path, capsys, study_with(functions, keys), expected)


def test_a_force_law_is_not_a_function_of_time(tmp_path, capsys):
    """An expression of u named where a function of time is expected (a load's multiplier)
    is refused, saying what it is."""
    text = study_with(SPRING, 'component = "DX"\nfunction = "f"').replace(
        "[[link]]", '[[load]]\nnodes = ["A"]\nFX = 1.0\nfunction = "f"\n[[link]]', 1)
    assert_refused(tmp_path, capsys, text,
                   ["load[1].function", "function 'f' is an expression of u",
                    "a function of time t is expected"])


@pytest.mark.parametrize("functions, keys, what", [
    ('[functions.f]\nexpression = "10.0*u"\n', 'component = "DX"\nfunction = "f"',
     "negative stiffness"),
    ("[functions.f]\ntable = [[-1.0, -3.0], [1.0, 3.0]]\n", 'component = "DX"\nfunction = "f"',
     "negative stiffness"),
    ('[functions.f]\nexpression = "0.5*v - u"\n', 'component = "DX"\nfunction = "f"',
     "negative damping"),
])
def test_a_law_that_rises_through_rest_is_taken_as_given_with_a_warning(tmp_path, functions,
                                                                        keys, what):
    """f increasing through u = 0 (or v = 0) is a negative stiffness (damping) under the
    sign convention: probably a spring written as the force it carries. It is neither
    refused nor changed: the reader warns, restating the convention, and the run takes it
    as written (the force at the first archived instant is f(x0))."""
    from fem.study import load_study

    path = tmp_path / "study.toml"
    path.write_text(study_with(functions, keys))
    with pytest.warns(UserWarning, match=what) as caught:
        study = load_study(path)
    assert "link[1].function" in str(caught[0].message)
    assert "restoring spring is f(u) = -k u" in str(caught[0].message)
    link = study.links[0]
    assert link.params["function"] == "f"


def test_a_restoring_law_gives_no_warning(tmp_path):
    from fem.study import load_study

    path = tmp_path / "study.toml"
    path.write_text(study_with('[functions.f]\nexpression = "-10.0*u - 0.1*v"\n',
                               'component = "DX"\nfunction = "f"'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_study(path)


def test_a_table_read_beyond_an_error_end_stops_the_run(tmp_path):
    """A table whose right end is "error" (the default), read beyond it: the force is not
    finite and the run stops with a message naming the link and why."""
    from fem.runner import run_study

    path = tmp_path / "study.toml"
    text = study_with("[functions.f]\ntable = [[-1.0, 1.0], [1e-4, -1e-4]]\n",
                      'component = "DX"\nfunction = "f"').replace(
        "stiffness = 1.0", "stiffness = 1.0\n[[initial]]\nnodes = [\"A\"]\n"
                           "velocity = { DX = 1.0 }")
    path.write_text(text)
    report = run_study(path, tmp_path / "out.h5")
    assert report.failed_analysis == "a"
    assert "link 'ff'" in report.message and "not finite" in report.message


# ------------------------------------------------------------------------------------------
# the interpreter, operation by operation
EXPRESSIONS = [
    ("-3.0*u + 2.0*v - u/(1.5 + v) + u**3 - 2.0**v + (u - 0.2)**2.5",
     lambda u, v: -3.0 * u + 2.0 * v - u / (1.5 + v) + u ** 3 - 2.0 ** v + (u - 0.2) ** 2.5),
    ("u**v + (u + 3.0) % 0.7 - (v % -0.4)",
     lambda u, v: u ** v + np.mod(u + 3.0, 0.7) - np.mod(v, -0.4)),
    ("sin(u) + cos(v) + tan(u*v) + asin(u/2) + acos(v/3) + atan(u - v) + atan2(u, v)",
     lambda u, v: (np.sin(u) + np.cos(v) + np.tan(u * v) + np.arcsin(u / 2) + np.arccos(v / 3)
                   + np.arctan(u - v) + np.arctan2(u, v))),
    ("sinh(u) + cosh(v) + tanh(u*v) + exp(-v) + log(u) + log10(v) + sqrt(u + v)",
     lambda u, v: (np.sinh(u) + np.cosh(v) + np.tanh(u * v) + np.exp(-v) + np.log(u)
                   + np.log10(v) + np.sqrt(u + v))),
    ("abs(u - v)*sign(u - 1.0) + floor(3*u) + ceil(2*v) + heaviside(u - 0.9)",
     lambda u, v: (np.abs(u - v) * np.sign(u - 1.0) + np.floor(3 * u) + np.ceil(2 * v)
                   + np.heaviside(u - 0.9, 1.0))),
    ("min(u, v, 1.2)*max(u, 2*v) + where(u > v, u*u, -v) + (u < v) + (u <= 0.5)*(v >= 0.1)"
     " - (u == u) + (u != v)",
     lambda u, v: (np.minimum(np.minimum(u, v), 1.2) * np.maximum(u, 2 * v)
                   + np.where(u > v, u * u, -v) + (u < v) + (u <= 0.5) * (v >= 0.1) - 1.0
                   + (u != v))),
]


@pytest.mark.parametrize("text, reference", EXPRESSIONS, ids=[str(i) for i in
                                                               range(len(EXPRESSIONS))])
def test_the_interpreter_gives_each_operation_and_its_derivatives(text, reference):
    """The compiled interpreter's value against numpy's evaluation of the same expression
    written here, and its forward-mode derivatives against central differences of that
    evaluation, at points away from the kinks."""
    from fem.functions import Expression
    from fem.laws import force_function as ff

    slots, depth = ff.program(Expression("f", text).graph)
    assert len(slots) <= ff.MAX_SLOTS and depth <= ff.MAX_DEPTH
    p = dict(direction=[1.0, 0.0, 0.0], form=ff.EXPRESSION, count=len(slots), slots=slots,
             left="error", right="error", uses_u=True, uses_v=True)
    P = ff._row(p)[None, :]
    s = np.zeros((1, ff.OWN.width_v))
    rng = np.random.default_rng(7)
    for u, v in zip(rng.uniform(0.3, 1.7, 25), rng.uniform(0.15, 1.4, 25)):
        f, fu, fv = ff.force(P, 0, u, v, s)
        assert f == pytest.approx(reference(u, v), rel=1e-13, abs=1e-13)
        h = 1e-6
        du = (reference(u + h, v) - reference(u - h, v)) / (2 * h)
        dv = (reference(u, v + h) - reference(u, v - h)) / (2 * h)
        if abs(du) < 1e3 and abs(dv) < 1e3:      # no step of floor, ceil, comparison inside
            assert fu == pytest.approx(du, rel=1e-6, abs=1e-6)
            assert fv == pytest.approx(dv, rel=1e-6, abs=1e-6)


def test_the_interpreter_is_not_finite_where_the_expression_is_not_defined():
    """1/0, log(0), sqrt(-1), asin(2), a negative base to a fractional power: inf or NaN as
    numpy gives them, never an exception in compiled code."""
    from fem.functions import Expression
    from fem.laws import force_function as ff

    s = np.zeros((1, ff.OWN.width_v))
    for text, expected in (("1/u", np.inf), ("-1/u", -np.inf), ("u/u", np.nan),
                           ("log(u)", -np.inf), ("sqrt(u - 1)", np.nan),
                           ("asin(u + 2)", np.nan), ("(u - 1)**0.5", np.nan),
                           ("u**-1.0", np.inf), ("u % u", np.nan)):
        slots, _ = ff.program(Expression("f", text).graph)
        P = ff._row(dict(direction=[1.0, 0.0, 0.0], form=ff.EXPRESSION, count=len(slots),
                         slots=slots, left="error", right="error", uses_u=True,
                         uses_v=False))[None, :]
        f = ff.force(P, 0, 0.0, 0.0, s)[0]
        if np.isnan(expected):
            assert np.isnan(f), text
        else:
            assert f == expected, text


def test_many_force_functions_in_the_whole_system_newton_iteration(tmp_path, monkeypatch):
    """Twenty masses, each on the spring k0 and its own link f(u, v) = -k u - c v, released
    from different displacements (newmark, physical basis): with that many links that always
    act along fixed directions (the trait ``axial``), a step takes Newton's method on the
    whole system (``fem.integrators.newmark_tangent``); each mass is the damped oscillator of
    stiffness k0 + k and damping c, in closed form."""
    count, k, c = 20, 2.0e3, 3.0
    nodes = "\n".join(f"N{i} = [{float(i)!r}, 0.0, 0.0]" for i in range(count))
    links = "\n".join(force_link("law", nodes=(f"N{i}",), name=f"ff{i}") for i in range(count))
    names = ", ".join(f'"ff{i}"' for i in range(count))
    initial = "\n".join(f'[[initial]]\nnodes = ["N{i}"]\ndisplacement = {{ DX = '
                        f"{X0 * (1.0 + 0.1 * i)!r} }}" for i in range(count))
    text = f"""
[mesh.nodes]
{nodes}
[model]
components = ["DX"]
[[discrete]]
nodes = [{", ".join(f'"N{i}"' for i in range(count))}]
mass = {MASS!r}
stiffness = {K0!r}
{initial}
[functions.law]
expression = "-{k!r}*u - {c!r}*v"
{links}
[[analysis]]
name = "a"
kind = "transient"
scheme = "newmark"
end = 0.1
step = 2e-5
links = [{names}]
"""
    from fem.integrators import newmark_family

    taken = []
    build = newmark_family.NewmarkFamily.__init__

    def spy(self, *args, **kwargs):
        build(self, *args, **kwargs)
        taken.append(self.tangent)

    monkeypatch.setattr(newmark_family.NewmarkFamily, "__init__", spy)
    data = run(tmp_path, text)["a"]
    assert taken and all(taken)
    t = data["time"]
    w = math.sqrt((K0 + k) / MASS)
    xi = c / (2.0 * MASS * w)
    wd = w * math.sqrt(1.0 - xi * xi)
    shape = np.exp(-xi * w * t) * (np.cos(wd * t) + xi * w / wd * np.sin(wd * t))
    bound = scheme_bound("physical", "newmark", w, 0.1, 2e-5)
    worst = max(error(data["displacement"][:, i], X0 * (1.0 + 0.1 * i) * shape)
                for i in range(count))
    print(f"twenty links: displacement {worst:.2e}; bound {bound:.2e}")
    assert worst < bound
