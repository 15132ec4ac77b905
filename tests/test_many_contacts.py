"""Many shock links on a physical model with Newmark and located events: fem against a plain
Newmark loop written here (penalty contacts, each contact change landed on by bisection of
the step size), and the lazy path of the links' columns (only the links that close get
theirs, and the links' system is solved on those alone)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

from fem.assembly import reduce
from fem.integrators import dynamics, newmark_columns
from fem.integrators.factory import make
from fem.links import linkset
from fem.links.linkset import LinkSet
from fem.mesh import SEG2, Mesh
from fem.model import build_model
from fem.study import parse_study
from fem.timegrid import build_grid
from fem.transient import MemorySink, integrate

N, LINKS = 200, 40
MASS, K, C, KC = 10.0, 1e5, 50.0, 1e6
FORCE, FREQUENCY = 1.0, 5.0
DT, STEPS, EVERY = 1e-3, 200, 10
#: the swing of the masses away from the clamp, 2 F / (m w^2)
SWING = 2 * FORCE / (MASS * (2 * math.pi * FREQUENCY) ** 2)
SPACING = N // LINKS


def gaps(low: float) -> np.ndarray:
    """Gaps over [low, low + 1] x SWING in a shuffled order (golden-ratio sequence)."""
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    return SWING * (low + np.mod(np.arange(1, LINKS + 1) * golden, 1.0))


def chain_mesh(n: int) -> Mesh:
    nodes = np.arange(n + 1, dtype=np.int64)
    xyz = np.zeros((n + 1, 3))
    xyz[:, 0] = nodes
    return Mesh(node_names=[f"N{i}" for i in range(n + 1)], coordinates=xyz,
                cell_names=[f"S{i}" for i in range(n)], cell_type=np.full(n, SEG2, np.int8),
                connectivity=np.stack([nodes[:-1], nodes[1:]], axis=1),
                node_groups={"CLAMP": nodes[:1].copy(), "MASSES": nodes[1:].copy()},
                cell_groups={"SPRINGS": np.arange(n, dtype=np.int64)}, source="chain")


def scheme_and_model(g: np.ndarray, events: str = "locate"):
    """fem's Newmark (average acceleration) on the chain with its shock links; also the
    reduced system (to check the matrices of the loop written here)."""
    data = {
        "study": {"title": "chain with shock links"},
        "mesh": {"nodes": {"N0": [0.0, 0.0, 0.0]}},
        "model": {"components": ["DX"]},
        "discrete": [{"cell_groups": ["SPRINGS"], "stiffness": K, "damping": C},
                     {"node_groups": ["MASSES"], "mass": MASS}],
        "constraint": [{"node_groups": ["CLAMP"], "DX": 0.0}],
        "functions": {"swing": {"expression": f"{FORCE}*cos(2*pi*{FREQUENCY}*t)"}},
        "load": [{"name": "swing", "node_groups": ["MASSES"], "FX": 1.0,
                  "function": "swing"}],
        "link": [{"name": f"L{k}", "kind": "shock", "nodes": [f"N{(k + 1) * SPACING}"],
                  "obstacle": "plane", "normal": [1.0, 0.0, 0.0], "gap": float(g[k]),
                  "stiffness": KC} for k in range(LINKS)],
        "analysis": [{"name": "transient", "kind": "transient", "scheme": "newmark",
                      "end": STEPS * DT, "step": DT, "archive": {"every": EVERY},
                      "events": events, "links": [f"L{k}" for k in range(LINKS)]}],
    }
    study = parse_study(data, path=Path(__file__).with_suffix(".toml"))
    model = build_model(study, chain_mesh(N))
    spec = study.analysis("transient").params
    system = reduce(model, spec["loads"])
    ls = linkset.build(list(study.links), model)
    dyn = dynamics.physical(system, ls.D)
    p = {"basis": "physical", "scheme": "newmark", "start": 0.0, "end": STEPS * DT,
         "beta": 0.25, "gamma": 0.5, "events": events}
    scheme = make(dyn, ls if ls else LinkSet(), p, label="test", every=0)
    return scheme, dyn, system


def run_fem(scheme, dyn):
    grid = build_grid(0.0, STEPS * DT, step=DT, archive={"every": EVERY})
    sink = MemorySink()
    result = integrate(scheme, grid, x0=dyn.x0, v0=dyn.v0, sink=sink)
    events = [(e[0], int(e[2][1:]), e[1]) for e in result.events
              if e[1] in ("impact", "separation")]
    return events, sink.arrays()


# --------------------------------------------------------------------------- the reference
def chain_matrices():
    """M, K, C of the chain clamped at N0 (dofs N1 ... N200 along X), dense."""
    K0 = np.zeros((N, N))
    for j in range(N):
        K0[j, j] = 2.0 if j < N - 1 else 1.0
        if j + 1 < N:
            K0[j, j + 1] = K0[j + 1, j] = -1.0
    return MASS * np.eye(N), K * K0, C * K0


def reference(g: np.ndarray):
    """Newmark (beta 1/4, gamma 1/2) with the contacts' modes held over each step; a step
    whose end changes the sign of a contact's penetration is cut where that of the earliest
    one is zero (bisection of the step size), the mode changes there and the steps go on
    from that instant (acceleration from equilibrium). Returns the events [(t, link, kind)]
    and the displacements at every knot (STEPS + 1, N)."""
    M, K0, C0 = chain_matrices()
    dofs = SPACING * np.arange(1, LINKS + 1) - 1
    beta, gamma = 0.25, 0.5

    def load(t):
        return np.full(N, FORCE * math.cos(2 * math.pi * FREQUENCY * t))

    def stiffness(closed):
        Kc, f = K0.copy(), np.zeros(N)
        on = dofs[closed]
        Kc[on, on] += KC
        f[on] = KC * g[closed]
        return Kc, f

    def step(x, v, a, h, t1, closed):
        Kc, f = stiffness(closed)
        ut = x + h * v + h * h * (0.5 - beta) * a
        vt = v + h * (1 - gamma) * a
        S = M + gamma * h * C0 + beta * h * h * Kc
        # S is tridiagonal: its upper band form
        ab = np.zeros((2, N))
        ab[0, 1:] = np.diag(S, 1)
        ab[1] = np.diag(S)
        a1 = scipy.linalg.solveh_banded(ab, load(t1) + f - C0 @ vt - Kc @ ut)
        return ut + beta * h * h * a1, vt + gamma * h * a1, a1

    def flips(x1, closed):
        p = x1[dofs] - g
        return np.nonzero(np.where(closed, p <= 0.0, p >= 0.0))[0]

    closed = np.zeros(LINKS, bool)
    x, v = np.zeros(N), np.zeros(N)
    a = np.linalg.solve(M, load(0.0))
    t, k = 0.0, 0
    xs, events = [x.copy()], []
    while k < STEPS:
        t_next = (k + 1) * DT
        h = t_next - t
        new = step(x, v, a, h, t_next, closed)
        crossing = flips(new[0], closed)
        if not len(crossing):
            (x, v, a), t, k = new, t_next, k + 1
            xs.append(x.copy())
            continue
        landed = []
        for c in crossing:
            lo, hi = 0.0, h            # the sign changes in (lo, hi]
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:
                    break
                trial = step(x, v, a, mid, t + mid, closed)
                if c in flips(trial[0], closed):
                    hi = mid
                else:
                    lo = mid
            landed.append((hi, c))
        tau, c = min(landed)
        x, v, a = step(x, v, a, tau, t + tau, closed)
        t += tau
        closed[c] = not closed[c]
        events.append((t, int(c), "impact" if closed[c] else "separation"))
        Kc, f = stiffness(closed)
        a = np.linalg.solve(M, load(t) + f - C0 @ v - Kc @ x)
    return events, np.array(xs)


# --------------------------------------------------------------------------- the tests
def test_many_links_against_a_plain_newmark_loop():
    """40 links on a chain of 200 masses, a dozen of them closing and opening (40 events):
    the event times and links, and the archived displacements, are those of the loop
    written here (the same scheme: they agree to the round-off of the landing and of the
    solves, 1e-12 s and 1e-11 of the motion; found 2e-16 s and 3e-15)."""
    g = gaps(0.7)
    scheme, dyn, system = scheme_and_model(g)
    M, K0, C0 = chain_matrices()
    assert np.allclose(system.stiffness.toarray(), K0, rtol=0, atol=1e-9 * K)
    assert np.allclose(system.mass.toarray(), M) and np.allclose(system.damping.toarray(), C0)
    events, rows = run_fem(scheme, dyn)
    ref_events, ref_x = reference(g)
    assert len(ref_events) >= 30
    assert [(c, kind) for _, c, kind in events] == [(c, kind) for _, c, kind in ref_events]
    times = np.array([e[0] for e in events])
    assert np.max(np.abs(times - np.array([e[0] for e in ref_events]))) < 1e-12
    knots = np.rint(rows["time"] / DT).astype(int)
    assert np.allclose(rows["time"], knots * DT, rtol=0, atol=1e-12)
    scale = np.max(np.abs(ref_x))
    assert np.max(np.abs(rows["x"] - ref_x[knots])) < 1e-11 * scale


def test_only_the_links_that_close_get_their_columns(monkeypatch):
    """With events located, the step operators of a step size hold the columns S^-1 L^T of
    the links that have closed at a step of that size, never all of them, and the links'
    Newton system is as large as the links closed at once."""
    def refuse(self):
        raise AssertionError("every link's columns made with events located")
    monkeypatch.setattr(newmark_columns.StepSize, "full", refuse)
    g = gaps(0.7)
    scheme, dyn, _ = scheme_and_model(g)
    events, _ = run_fem(scheme, dyn)
    closing = {c for _, c, kind in events if kind == "impact"}
    assert 4 <= len(closing) < LINKS
    size = scheme._ops_cache[DT]
    assert set(size.columns) <= closing and len(size.columns) >= len(closing) - 1
    for spare in scheme._spare.values():
        assert set(spare.columns) <= closing
    # before the first event no link is closed: the operators of the empty set
    empty = size.operators(())
    assert empty.Wl.shape == (3 * LINKS, 0) and empty.act.size == 0
    assert np.all(empty.slot == -1)
    assert scheme.wk.Jac.shape[0] <= 3 * len(closing)
    # the columns made are those of S^-1 L^T
    S = (dyn.mass + 0.5 * DT * dyn.damping + 0.25 * DT * DT * dyn.stiffness).toarray()
    for b, (qs, Zt, W) in size.columns.items():
        # the rows of L that are not zero (one: the chain moves along X)
        assert qs == (0,)
        Z = Zt.T
        LT = scheme.L[[3 * b + q for q in qs]].T.toarray()
        assert np.allclose(S @ Z, LT, rtol=0, atol=1e-12)
        assert np.allclose(W, scheme.L @ Z)
    # the operators of a set: Z with an empty column for each row of L that is zero
    ops = size.operators(tuple(sorted(size.columns)))
    Z = sp.csc_matrix((ops.Zd, ops.Zi, ops.Zp), shape=(dyn.mass.shape[0], ops.act.size))
    assert np.allclose(S @ Z.toarray(), scheme.L[ops.act].T.toarray(), rtol=0, atol=1e-12)
    assert np.allclose(ops.Wl, (scheme.L @ Z).toarray(), rtol=0, atol=1e-12)


def test_no_contact_no_columns():
    """No link closes: no column is made and the run is that of the chain without links."""
    g = gaps(1.2)
    scheme, dyn, system = scheme_and_model(g)
    events, rows = run_fem(scheme, dyn)
    assert events == []
    assert scheme._ops_cache[DT].columns == {}
    bare = dynamics.physical(system, sp.csr_matrix((0, system.T.shape[0])))
    free = make(bare, LinkSet(), {"basis": "physical", "scheme": "newmark", "start": 0.0,
                                  "end": STEPS * DT, "beta": 0.25, "gamma": 0.5,
                                  "events": "locate"}, label="test", every=0)
    _, base = run_fem(free, dyn)
    assert np.max(np.abs(rows["x"] - base["x"])) <= 1e-12 * np.max(np.abs(base["x"]))


@pytest.mark.parametrize("events", ["step"])
def test_events_step_makes_every_column(events):
    """With the modes chosen at each step, every link's columns are made at once."""
    scheme, dyn, _ = scheme_and_model(gaps(0.7), events=events)
    _, sops = scheme.step_operators(DT)
    assert sops.act.size == 3 * LINKS and sops.Wl.shape == (3 * LINKS, 3 * LINKS)


@pytest.mark.parametrize("width", [1, 2])
def test_factor_of_a_new_step_size(width):
    """The factor of S = M + c C + k K for a new step size made from the band storage of the
    first one (tridiagonal and pentadiagonal K) solves S x = r as numpy's dense solve does."""
    from types import SimpleNamespace

    from fem.linalg import Factor

    n = 60
    rng = np.random.default_rng(3)
    K = sp.diags([2.0 * np.ones(n)] + [-0.4 * np.ones(n - j) for j in range(1, width + 1)]
                 + [-0.4 * np.ones(n - j) for j in range(1, width + 1)],
                 [0] + list(range(1, width + 1)) + [-j for j in range(1, width + 1)]).tocsr()
    K = 1e5 * K
    M = sp.diags(10.0 + rng.random(n)).tocsr()
    C = 5e-4 * K
    dyn = SimpleNamespace(mass=M, damping=C, stiffness=K)
    bands = newmark_columns.Bands.of(dyn, Factor(M + 5e-4 * C + 2.5e-7 * K))
    assert bands
    for c, k in [(3e-4, 9e-8), (1e-6, 2.5e-13)]:
        f = bands.factor(c, k)
        S = (M + c * C + k * K).toarray()
        r = rng.random(n)
        assert np.allclose(f.solve(r), np.linalg.solve(S, r), rtol=1e-13, atol=0)
    # not positive definite: no factor (the caller falls back on the sparse one)
    assert bands.factor(0.0, -1.0) is None


def test_hht_active_links_against_every_link(monkeypatch):
    """HHT (alpha = -0.1, whose equation weighs the previous step's forces) with events
    located: solving the links' system on the closed links gives the events and the motion
    of Newton's method on every link's rows (the same step with every link counted as
    active), to round-off."""
    def hht(g):
        scheme, dyn, _ = scheme_and_model(g)
        from fem.integrators.newmark_family import NewmarkFamily
        return NewmarkFamily(dyn, scheme.links, beta=0.3025, gamma=0.6, alpha=-0.1,
                             name="hht", events="locate", label="test"), dyn

    g = gaps(0.7)
    scheme, dyn = hht(g)
    events, rows = run_fem(scheme, dyn)
    assert len(events) >= 30
    import fem.integrators.newmark_family as family
    monkeypatch.setattr(family, "active_links", lambda P, flags, phi: tuple(range(LINKS)))
    every, dyn2 = hht(g)
    events2, rows2 = run_fem(every, dyn2)
    assert every._ops_cache[DT].sets and len(next(iter(every._ops_cache[DT].sets))) == LINKS
    assert [e[1:] for e in events] == [e[1:] for e in events2]
    assert np.max(np.abs(np.array([e[0] for e in events]) - [e[0] for e in events2])) < 1e-12
    assert np.max(np.abs(rows["x"] - rows2["x"])) < 1e-11 * np.max(np.abs(rows2["x"]))


def test_each_event_lands_in_few_trial_steps(monkeypatch):
    """The landing on an event (``landing.land``) recomputes the step a few times: the
    first trial at the root of the cubic that the recomputed step follows
    (``NewmarkFamily.landing_rates``), the second at the root of the parabola through the
    values known (start, end of the step, first trial), then the secant through the last two
    trials, the last one taken a few ulps past the root once the secant's correction is
    small. On the 40 events of the chain above: 3.3 trials on average, 4 at most (the first
    trial on the dense output's cubic: 3.85 and 5; the secant alone: 4.4 and 7; regula falsi
    alone: 5.5 and 8, its last trials dithering at the round-off of the function); the event
    times stay those of the loop written in this file."""
    from fem.integrators import landing as located

    trials, counts = [0], []
    trial, land = located.trial, located.land

    def counted_trial(scheme, t):
        trials[0] += 1
        return trial(scheme, t)

    def counted_land(*args):
        trials[0] = 0
        found = land(*args)
        counts.append(trials[0])
        return found

    monkeypatch.setattr(located, "trial", counted_trial)
    monkeypatch.setattr(located, "land", counted_land)
    g = gaps(0.7)
    scheme, dyn, _ = scheme_and_model(g)
    events, _ = run_fem(scheme, dyn)
    ref_events, _ = reference(g)
    times = np.array([e[0] for e in events])
    assert np.max(np.abs(times - np.array([e[0] for e in ref_events]))) < 1e-12
    assert len(counts) >= 30
    assert max(counts) <= 5 and np.mean(counts) <= 3.6, counts


def test_parabola_root_of_the_landing():
    """The second trial of a landing goes to the root of the parabola through the values at
    the start of the step, at the end of the step in the buffer and at the first trial: the
    root of a parabola exactly, the root of a smooth function within a fraction of the first
    trial's distance to it; None without a root in the bracket or with repeated points."""
    from fem.integrators.landing import parabola_root

    def f(x):
        return (x - 0.3) * (x + 2.0)

    assert abs(parabola_root([(0.0, f(0.0)), (1.0, f(1.0)), (0.31, f(0.31))], 0.0, 1.0)
               - 0.3) < 1e-15

    def g(x):
        return np.exp(x) - 1.5

    root, first = np.log(1.5), 0.4055
    found = parabola_root([(0.0, g(0.0)), (1.0, g(1.0)), (first, g(first))], 0.25, 0.5)
    assert abs(found - root) < 0.1 * abs(first - root)
    assert parabola_root([(0.0, g(0.0)), (1.0, g(1.0)), (first, g(first))], 0.5, 1.0) is None
    assert parabola_root([(0.0, 1.0), (0.0, 1.0), (1.0, -1.0)], 0.0, 1.0) is None


@pytest.mark.parametrize("beta", [0.25, 0.0])
def test_first_landing_trial_follows_the_recomputed_step(monkeypatch, beta):
    """The cubic Hermite of the link displacements with the rates of ``landing_rates`` at
    the end is the pending step recomputed to a shorter size: exactly (to round-off) for
    central differences, whose displacement does not depend on the new acceleration; for
    Newmark far nearer than the cubic with the step's own end velocity (the dense output)."""
    from fem.integrators import landing as located
    from fem.integrators.newmark_family import NewmarkFamily

    base, dyn, _ = scheme_and_model(gaps(0.7))
    scheme = NewmarkFamily(dyn, base.links, beta=beta, gamma=0.5, events="locate",
                           label="test")
    seen = []
    land = located.land

    def check(scheme, *args):
        if not seen:
            b, c = scheme.buf, scheme.cur
            h = scheme.pending[0] - scheme.t
            d0, dd0, d1, dd1 = (b.DB[c].copy(), b.DD[c].copy(), b.DB[1 - c].copy(),
                                b.DD[1 - c].copy())
            rates = scheme.landing_rates()
            for theta in (0.3, 0.6, 0.9):
                h00, h10 = 2 * theta ** 3 - 3 * theta ** 2 + 1, theta ** 3 - 2 * theta ** 2 + theta
                h01, h11 = -2 * theta ** 3 + 3 * theta ** 2, theta ** 3 - theta ** 2

                def cubic(r):
                    return h00 * d0 + h10 * h * dd0 + h01 * d1 + h11 * h * r
                scheme.trial(scheme.t + theta * h)
                recomputed = scheme.buf.DB[1 - scheme.cur]
                seen.append((np.max(np.abs(cubic(rates) - recomputed)),
                             np.max(np.abs(cubic(dd1) - recomputed)), np.max(np.abs(d1))))
        return land(scheme, *args)

    monkeypatch.setattr(located, "land", check)
    run_fem(scheme, dyn)
    assert seen
    for model, dense, scale in seen:
        if beta == 0.0:
            assert model <= 1e-13 * scale < dense
        else:
            assert model <= 0.1 * dense
