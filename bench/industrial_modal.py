"""An industrial-size modal transient with shock links: fem's modal central differences
against a numba reference kernel written here for the same model.

The model: a chain of 1,000 masses along X with the components DX and DY (2,000 dofs), node
N0 clamped; each SEG2 cell a spring of 1e8 N/m along X and 4e7 N/m
along Y, each node 10 kg. Two loads: 300 sin(2 pi 4 t) N along Y on every 50th node and
200 sin(2 pi 3 t) N along X on the last node. 50 shock links, one on every 20th node, alternately a plane obstacle (normal +Y or -Y) and a circular
one (axis Z: a node in a round hole), gaps 0.2 to 0.7 mm, contact stiffness 1e7 N/m, no
damper; every second pair of links (half of them, planes and circles alike) with Coulomb
friction (mu = 0.3, static 0.35, the tangential stiffness that of the contact). 200 modes
with 2 % modal damping; central differences at dt = 2e-5 s over 1e6 steps (20 s); every
1000th step archived.

    python bench/industrial_modal.py [--steps 1000000] [--compare-steps 200000] [--repeats 1]
                                     [--profile] [--quick] [--json]

Timed after a warm-up run that compiles or loads the code (fem: best of ``--repeats``, default
1; the reference: best of 3):

- fem: ``fem.integrators.factory.make`` (the scheme, as an analysis makes it) and the one
  transient driver ``fem.transient.integrate`` with a memory sink: loads evaluated per
  chunk, the compiled step loop, the links' law at every step (events = "step"), the energy
  terms, every 1000th step archived (q, q', q'', six values per contact, five energies);
- reference: ``reference_cd``, one compiled loop: q'' = B w(t) - omega^2 q - 2 xi omega q' +
  Phi_L^T f_links(Phi_L q) with the same central-difference step as fem (the displacement
  from the predictor, the velocity at the end of the step from the new acceleration), the
  loads' sines computed in the loop, Phi_L the rows of the modes at the links' DX and DY
  (dense, 2 per link), the same penalty laws written out for this model (plane and circle
  contacts without damper, Coulomb friction by a return mapping: stick while the tangential
  spring's force is within mu_s F_n, slide at mu F_n along it beyond); it archives every
  1000th step q, q', q'' and each contact's state, normal force and penetration, and counts
  the contacts' changes (closing, opening, slip, stick);
- fem's whole analysis (``fem.run`` of the same study to a results file: modes, recombination
  of the 2,000 dofs on the archived instants, link series, events), its wall time, a side
  figure (not in ``--quick``).

Both must give the same response: fem's archived q over the first ``--compare-steps`` steps
(default 2e5) agree with those of a reference run of as many steps within 1e-6 of their
largest value, with the same number of contact changes (status 1 otherwise). Over the whole
run the difference of the two is printed: a contact's decision (closing, sticking or
slipping) taken at the round-off of its threshold can part the two, and the difference then
grows.

Target: fem's time at most 2x the reference's. ``--profile`` adds where fem's time goes: the
time per step of fem and of the reference on variants of the model (no link; the plane links
alone without friction, which fem runs in its lean loop; every link without friction; the
model itself, both in fem's loop without Newton iteration, ``newmark_direct``), over at most
1e5 steps, each piece of the general loop's step with links (the one a contact damper or
located events take) timed alone in a compiled loop, and the cProfile of fem's run (the
share of the compiled loop). ``--quick``:
200 nodes, 40 modes, 10 links, 2e4 steps; ``--json``: one JSON object on stdout
(``_common.Report``).
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import math
import pstats
import sys
import tempfile
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (Report, bench_arguments, engine_run, engine_scheme,  # noqa: E402
                     load_average, machine, stopwatch, table)
from fem.integrators.kernels import csr_product  # noqa: E402
from fem.linalg import small_solve  # noqa: E402
from fem.links.law import evaluate_inline  # noqa: E402

MASS, KX, KY = 10.0, 1e8, 4e7
FY, FREQ_Y, FX, FREQ_X = 300.0, 4.0, 200.0, 3.0
KC, MU, MUS = 1e7, 0.3, 0.35
XI = 0.02
DT, EVERY = 2e-5, 1000
TARGET_RATIO = 2.0
#: archived q of fem and of the reference over the compared steps, relative to the largest
AGREEMENT = 1e-6
FULL = dict(nodes=1000, modes=200, links=50, steps=1_000_000, compare=200_000)
QUICK = dict(nodes=200, modes=40, links=10, steps=20_000, compare=20_000)


# ------------------------------------------------------------------------------------------
# the study
def link_table(nodes: int, count: int) -> list[dict]:
    """The shock links: on every (nodes / count)-th node, planes and circles in turn."""
    step = nodes // count
    links = []
    for k in range(count):
        node = f"N{(k + 1) * step}"
        gap = 2e-4 + 5e-4 * ((k * 7) % count) / max(count - 1, 1)
        link = {"name": f"L{k}", "kind": "shock", "nodes": [node], "gap": gap,
                "stiffness": KC}
        if k % 2 == 0:
            link.update(obstacle="plane", normal=[0.0, 1.0 if k % 4 == 0 else -1.0, 0.0])
        else:
            link.update(obstacle="circle", axis=[0.0, 0.0, 1.0])
        if (k // 2) % 2 == 0:
            link.update(friction=MU, static_friction=MUS)
        links.append(link)
    return links


def study_data(nodes: int, modes: int, links: int, steps: int) -> dict:
    names = [f"N{i}" for i in range(nodes + 1)]
    return {
        "study": {"title": f"chain of {2 * nodes} dofs with {links} shock links"},
        "mesh": {
            "nodes": {name: [float(i), 0.0, 0.0] for i, name in enumerate(names)},
            "cells": {f"S{i}": {"type": "SEG2", "nodes": [names[i], names[i + 1]]}
                      for i in range(nodes)},
            "node_groups": {"MASSES": names[1:], "LOADED": names[50::50]},
            "cell_groups": {"SPRINGS": [f"S{i}" for i in range(nodes)]},
        },
        "model": {"components": ["DX", "DY"]},
        "discrete": [{"cell_groups": ["SPRINGS"], "stiffness": [KX, KY, KY]},
                     {"node_groups": ["MASSES"], "mass": MASS}],
        "constraint": [{"nodes": ["N0"], "DX": 0.0, "DY": 0.0}],
        "functions": {"fy": {"expression": f"{FY}*sin(2*pi*{FREQ_Y}*t)"},
                      "fx": {"expression": f"{FX}*sin(2*pi*{FREQ_X}*t)"}},
        "load": [{"name": "lateral", "node_groups": ["LOADED"], "FY": 1.0, "function": "fy"},
                 {"name": "axial", "nodes": [names[-1]], "FX": 1.0, "function": "fx"}],
        "link": link_table(nodes, links),
        "analysis": [
            {"name": "modes", "kind": "modes", "count": modes},
            {"name": "transient", "kind": "transient", "basis": "modal", "modes": "modes",
             "scheme": "central_difference", "end": steps * DT, "step": DT,
             "archive": {"every": EVERY}, "damping": "modal", "modal_damping": [XI] * modes,
             "links": [f"L{k}" for k in range(links)],
             "fields": ["displacement"]},
        ],
    }


def problem(data: dict):
    """(dynamics, links, spec) of the transient analysis, built as fem's analysis builds them."""
    import fem
    from fem.assembly import reduce
    from fem.integrators import dynamics
    from fem.links import linkset
    from fem.modal.basis import build_basis
    from fem.modal.modes import real_modes
    from fem.runner import prepare

    study, model = prepare(fem.Study.from_dict(data, name="industrial_modal").spec)
    spec = study.analysis("transient").params
    system = reduce(model, spec["loads"])
    modes = real_modes(system.mass, system.stiffness,
                       count=study.analysis("modes").params["count"])
    basis = build_basis(modes, system, model=model, damping="modal",
                        ratios=spec["modal_damping"])
    links = linkset.build([lk for lk in study.links if lk.name in spec["links"]], model)
    return dynamics.modal(basis, links.D), links, spec


# ------------------------------------------------------------------------------------------
# fem
def fem_run(dyn, links, steps: int):
    """(seconds, archived q rows, contact changes (time, kind, link, ...)) of fem's scheme and
    driver over ``steps``."""
    from fem.timegrid import build_grid

    with stopwatch() as sw:
        grid = build_grid(0.0, steps * DT, step=DT, archive={"every": EVERY})
        scheme = engine_scheme(dyn, "central_difference", links, end=steps * DT)
    elapsed, result, rows = engine_run(scheme, grid, dyn.x0, dyn.v0)
    assert result.steps == steps
    return sw.elapsed + elapsed, rows["x"], result.events


# ------------------------------------------------------------------------------------------
# the reference kernel
OPEN, STICK, SLIP = 0, 1, 2
#: contact parameters of the reference: kind (0 plane, 1 circle), normal (2: its DX, DY),
#: gap, friction, static friction
R_KIND, R_N0, R_N1, R_GAP, R_MU, R_MUS = range(6)


@numba.njit(cache=True, nogil=True, inline="always")
def _contact(par, c, dx, dy, state, anchor, sdir, out):
    """The force (fx, fy) on the node of contact c at its displacement (dx, dy); updates its
    state (mode), anchor and sliding direction; out[c] = (closed, normal force, penetration).
    Returns (fx, fy, mode before, mode after)."""
    before = state[c]
    if par[c, R_KIND] == 0.0:
        n0, n1 = par[c, R_N0], par[c, R_N1]
        p = n0 * dx + n1 * dy - par[c, R_GAP]
    else:
        rho = math.sqrt(dx * dx + dy * dy)
        p = rho - par[c, R_GAP]
        n0, n1 = (dx / rho, dy / rho) if rho > 0.0 else (0.0, 0.0)
    if p <= 0.0:
        state[c] = OPEN
        anchor[c, 0] = dx
        anchor[c, 1] = dy
        out[c, 0] = 0.0
        out[c, 1] = 0.0
        out[c, 2] = p
        return 0.0, 0.0, before, OPEN
    fn = KC * p
    fx = -fn * n0
    fy = -fn * n1
    out[c, 0] = 1.0
    out[c, 1] = fn
    out[c, 2] = p
    mu = par[c, R_MU]
    if mu <= 0.0:
        state[c] = STICK
        return fx, fy, before, STICK
    # the tangential spring (stiffness KC) from its anchor, projected on the tangent plane
    ex, ey = dx - anchor[c, 0], dy - anchor[c, 1]
    a = n0 * ex + n1 * ey
    tx, ty = KC * (ex - a * n0), KC * (ey - a * n1)
    size = math.sqrt(tx * tx + ty * ty)
    limit = (mu if before == SLIP else par[c, R_MUS]) * fn
    if size <= limit:
        state[c] = STICK
        return fx - tx, fy - ty, before, STICK
    if size > 0.0:
        sdir[c, 0] = tx / size
        sdir[c, 1] = ty / size
    force = mu * fn
    ux, uy = force * sdir[c, 0], force * sdir[c, 1]
    anchor[c, 0] = dx - ux / KC
    anchor[c, 1] = dy - uy / KC
    state[c] = SLIP
    return fx - ux, fy - uy, before, SLIP


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def reference_cd(steps, dt, every, omega2, cdamp, B, freqs, PhiL, par, Q, V, A, CV, changes):
    """Modal central differences with the contacts (module docstring) from rest; every
    ``every`` steps (and the first and last) q, q', q'' to Q, V, A and the contacts' values
    to CV; changes[0:4] counts closings, openings, slips, sticks. Returns the rows written."""
    m = omega2.size
    nc = par.shape[0]
    nb = freqs.size
    q = np.zeros(m)
    v = np.zeros(m)
    a = np.zeros(m)
    vt = np.zeros(m)
    inv = np.empty(m)
    for j in range(m):
        inv[j] = 1.0 / (1.0 + 0.5 * dt * cdamp[j])
    w = np.empty(nb)
    state = np.zeros(nc, np.int64)
    anchor = np.zeros((nc, 2))
    sdir = np.zeros((nc, 2))
    out = np.zeros((nc, 3))
    force = np.zeros((nc, 2))
    closed = np.zeros(nc, np.bool_)
    for c in range(nc):
        out[c, 2] = -par[c, R_GAP]
    row = 0
    for i in range(steps + 1):
        if i > 0:
            t = i * dt
            for b in range(nb):
                w[b] = math.sin(2.0 * math.pi * freqs[b] * t)
            for j in range(m):
                x1 = q[j] + dt * v[j] + 0.5 * dt * dt * a[j]
                v1 = v[j] + 0.5 * dt * a[j]
                f = 0.0
                for b in range(nb):
                    f += B[j, b] * w[b]
                q[j] = x1
                vt[j] = v1
                a[j] = inv[j] * (f - omega2[j] * x1 - cdamp[j] * v1)
            for c in range(nc):
                dx = 0.0
                dy = 0.0
                for j in range(m):
                    dx += PhiL[2 * c, j] * q[j]
                    dy += PhiL[2 * c + 1, j] * q[j]
                fx, fy, before, after = _contact(par, c, dx, dy, state, anchor, sdir, out)
                force[c, 0] = fx
                force[c, 1] = fy
                closed[c] = after != OPEN
                if before == OPEN and after != OPEN:
                    changes[0] += 1
                elif before != OPEN and after == OPEN:
                    changes[1] += 1
                elif before == STICK and after == SLIP:
                    changes[2] += 1
                elif before == SLIP and after == STICK:
                    changes[3] += 1
            for c in range(nc):
                if closed[c]:
                    fx, fy = force[c, 0], force[c, 1]
                    for j in range(m):
                        a[j] += inv[j] * (PhiL[2 * c, j] * fx + PhiL[2 * c + 1, j] * fy)
            for j in range(m):
                v[j] = vt[j] + 0.5 * dt * a[j]
        if i % every == 0 or i == steps:
            for j in range(m):
                Q[row, j] = q[j]
                V[row, j] = v[j]
                A[row, j] = a[j]
            for c in range(nc):
                for k in range(3):
                    CV[row, c, k] = out[c, k]
            row += 1
    return row


def reference_inputs(dyn, links):
    """The reference's arrays: omega^2, 2 xi omega, B (m, 2) of the two loads (unit
    functions), their frequencies, Phi_L (2 nc, m) and the contact parameters."""
    from fem.laws import columns as col
    from fem.laws import shock_columns as sc

    omega2 = np.ascontiguousarray(dyn.stiffness.diagonal())
    cdamp = np.ascontiguousarray(dyn.damping.diagonal())
    # fem's time columns are the two functions fy, fx (in the order of the loads): B w with
    # w = amplitude x sine, so B of the reference (unit sines) is fem's B times the amplitudes
    names = [getattr(fn, "name", "") for fn, _ in dyn.columns]
    amplitude = {"fy": FY, "fx": FX}
    freq = {"fy": FREQ_Y, "fx": FREQ_X}
    B = np.ascontiguousarray(np.asarray(dyn.B)[:, :len(names)] * [amplitude[n] for n in names])
    freqs = np.array([freq[n] for n in names])
    L = dyn.L.toarray()
    P = links.P
    nc = P.shape[0]
    PhiL = np.zeros((2 * nc, L.shape[1]))
    par = np.zeros((nc, 6))
    for c in range(nc):
        o = 3 * int(P[c, col.BLK])
        PhiL[2 * c] = L[o]
        PhiL[2 * c + 1] = L[o + 1]
        circle = P[c, col.KIND] == col.CIRCLE
        par[c] = [1.0 if circle else 0.0, P[c, col.DIR], P[c, col.DIR + 1], P[c, col.GAP],
                  P[c, sc.MU], P[c, sc.MUS]]
        assert P[c, sc.KN] == KC and P[c, sc.CN] == 0.0 and P[c, sc.CT] == 0.0
        assert P[c, sc.MU] == 0.0 or P[c, sc.KT] == KC
    return omega2, cdamp, B, freqs, np.ascontiguousarray(PhiL), par


def reference_run(inputs, steps: int):
    """(seconds, archived q rows, contact changes (4,)) of the reference kernel."""
    omega2 = inputs[0]
    nc = inputs[5].shape[0]
    with stopwatch() as sw:
        rows = steps // EVERY + 2
        m = omega2.size
        Q, V, A = np.zeros((rows, m)), np.zeros((rows, m)), np.zeros((rows, m))
        CV = np.zeros((rows, nc, 3))
        changes = np.zeros(4, np.int64)
        count = reference_cd(steps, DT, EVERY, *inputs, Q, V, A, CV, changes)
    return sw.elapsed, Q[:count], changes


# ------------------------------------------------------------------------------------------
def variants(data) -> list[tuple[str, dict]]:
    """The model without links, with the plane links alone and no friction, with every link
    and no friction, and as it is."""
    none = copy.deepcopy(data)
    none["link"] = []
    none["analysis"][1]["links"] = []
    smooth = copy.deepcopy(data)
    for link in smooth["link"]:
        link.pop("friction", None)
        link.pop("static_friction", None)
    planes = copy.deepcopy(smooth)
    planes["link"] = [lk for lk in planes["link"] if lk["obstacle"] == "plane"]
    planes["analysis"][1]["links"] = [lk["name"] for lk in planes["link"]]
    return [("no link", none),
            (f"{len(planes['link'])} plane links, no friction (lean loop)", planes),
            (f"{len(smooth['link'])} links, no friction", smooth),
            (f"{len(data['link'])} links, as the model has them", data)]


@numba.njit(cache=True, nogil=True)
def _kernel_loop(what, repeats, Ld, Li, Lp, x, d, W, g, y, P, dd, cv0, cv1, phi, Jd, Jv, flags,
                 J, rhs):
    """``repeats`` times one piece of fem's step with links (its own compiled functions, or
    the loop fem runs, written the same): 0 the three products L u~, L v~, L a0 of
    ``fem.integrators.kernels.csr_product``; 1 a product with the links' W (3 m, 3 m); 2 the
    law (``fem.links.law.evaluate``); 3 the dense solve of a Newton iteration
    (``fem.linalg.small_solve``, on an identity)."""
    total = 0.0
    for _ in range(repeats):
        x[0] += 1e-12
        if what == 0:
            csr_product(Ld, Li, Lp, x, d)
            csr_product(Ld, Li, Lp, x, d)
            csr_product(Ld, Li, Lp, x, d)
            total += d[0]
        elif what == 1:
            for r in range(W.shape[0]):
                acc = 0.0
                for q in range(W.shape[1]):
                    acc += W[r, q] * g[q]
                y[r] = acc
            total += y[0]
        elif what == 2:
            evaluate_inline(P, d, dd, cv0, cv1, phi, Jd, Jv, flags, False)
            total += phi[0]
        else:
            n = J.shape[0]
            for r in range(n):
                for q in range(n):
                    J[r, q] = 1.0 if r == q else 0.0
                rhs[r] = 1.0
            small_solve(J, rhs, n)
            total += rhs[0]
    return total


def kernel_costs(dyn, links) -> list[list[str]]:
    """Each piece of ``_kernel_loop`` timed alone (us per call), the reference's product
    beside them."""
    from fem import laws
    from fem.laws import columns as col

    kin = dyn.kinematics()
    m3, m = dyn.L.shape
    nc = links.P.shape[0]
    x, d, dd = np.random.default_rng(1).random(m), np.zeros(m3), np.zeros(m3)
    # half of the contacts closed, a little past their gap
    for c in range(0, nc, 2):
        o = 3 * int(links.P[c, col.BLK])
        n = links.P[c, col.DIR:col.DIR + 3] if links.P[c, col.KIND] == col.PLANE else [1, 0, 0]
        d[o:o + 3] = np.asarray(n) * (links.P[c, col.GAP] + 1e-5)
    W, g, y = np.random.default_rng(2).random((m3, m3)), np.ones(m3), np.zeros(m3)
    args = (kin.Ld, kin.Li, kin.Lp, x, d, W, g, y, links.P, dd, np.zeros((nc, laws.NV)),
            np.zeros((nc, laws.NV)), np.zeros(m3), np.zeros((m3 // 3, 3, 3)),
            np.zeros((m3 // 3, 3, 3)), np.full(nc, -1.0), np.zeros((m3, m3)), np.zeros(m3))
    rows = []
    labels = [f"3 products with L ({m3} x {m}, {dyn.L.nnz:,} entries, CSR)",
              f"1 product with W ({m3} x {m3})", f"the law, {nc} contacts",
              f"the dense solve of a Newton iteration ({m3} unknowns)"]
    for what, label in enumerate(labels):
        repeats = 200 if what == 3 else 5000
        _kernel_loop(what, 2, *args)
        with stopwatch() as sw:
            _kernel_loop(what, repeats, *args)
        rows.append([label, f"{1e6 * sw.elapsed / repeats:.2f}"])
    inputs = reference_inputs(dyn, links)
    PhiL = inputs[4]
    with stopwatch() as sw:
        _reference_products(PhiL, x, np.zeros(PhiL.shape[0]), 5000)
    rows.append([f"the reference: 1 dense product with Phi_L ({PhiL.shape[0]} x {m})",
                 f"{1e6 * sw.elapsed / 5000:.2f}"])
    return rows


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _reference_products(A, x, out, repeats):
    total = 0.0
    for _ in range(repeats):
        x[0] += 1e-12
        for i in range(A.shape[0]):
            acc = 0.0
            for j in range(A.shape[1]):
                acc += A[i, j] * x[j]
            out[i] = acc
        total += out[0]
    return total


def profile(data, steps: int) -> str:
    """Where fem's time goes (module docstring): a table of times per step, and the
    cProfile of fem's run."""
    from fem.links.linkset import LinkSet

    rows = []
    for label, variant in variants(data):
        dyn, links, _ = problem(variant)
        links = links if links else LinkSet()
        inputs = reference_inputs(dyn, links)
        fem_run(dyn, links, 2 * EVERY)
        reference_run(inputs, 2 * EVERY)
        fem_t = min(fem_run(dyn, links, steps)[0] for _ in range(2))
        ref_t = min(reference_run(inputs, steps)[0] for _ in range(2))
        rows.append([label, f"{1e6 * fem_t / steps:.2f}", f"{1e6 * ref_t / steps:.2f}",
                     f"{fem_t / ref_t:.1f}"])
        print(f"  {label}: fem {1e6 * fem_t / steps:.2f} us/step, reference "
              f"{1e6 * ref_t / steps:.2f} us/step", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    fem_run(dyn, links, steps)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(8)
    _reference_products(np.zeros((1, 1)), np.zeros(1), np.zeros(1), 1)
    pieces = kernel_costs(dyn, links)
    return (f"Time per step (us) over {steps:,} steps, best of 2\n"
            + table(["model", "fem", "reference", "ratio"], rows)
            + "\n\nThe pieces of the general loop's step with links, each timed alone in a "
              "compiled loop (us per call)\n" + table(["piece", "us"], pieces)
            + "\n\ncProfile of fem's run (the model as it is)\n" + text.getvalue().rstrip())


def whole_analysis(data) -> tuple[float, float, int]:
    """(analysis wall time, whole run, events) of fem.run on the study, to a results file."""
    import fem

    study = fem.Study.from_dict(data, name="industrial_modal")
    with tempfile.TemporaryDirectory() as tmp:
        with stopwatch() as sw:
            results = fem.run(study, out=Path(tmp) / "industrial_modal.h5")
        with results:
            a = results.analysis("transient")
            wall = a.wall_time_s
            events = len(a.events)
    return wall, sw.elapsed, events


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=None, help="default 1e6 (quick: 2e4)")
    ap.add_argument("--compare-steps", type=int, default=None,
                    help="steps of the run whose responses are compared (default 2e5)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of fem, the best kept "
                    "(default 1; the reference: best of 3)")
    ap.add_argument("--profile", action="store_true",
                    help="where fem's time goes: variants of the model, and the cProfile")
    bench_arguments(ap, "200 nodes, 40 modes, 10 links, 2e4 steps")
    args = ap.parse_args(argv)
    size = dict(QUICK if args.quick else FULL)
    steps = args.steps or size["steps"]
    compare = min(args.compare_steps or size["compare"], steps)
    repeats = args.repeats
    report = Report("industrial_modal", args)
    data = study_data(size["nodes"], size["modes"], size["links"], steps)
    print(f"Modal central differences with shock links: {2 * size['nodes']:,} dofs, "
          f"{size['modes']} modes, {size['links']} links, {steps:,} steps of {DT:g} s")
    print(f"{machine()}; {load_average()}")
    with stopwatch() as sw:
        dyn, links, spec = problem(data)
    print(f"set-up (model, {size['modes']} modes, basis, links): {sw.elapsed:.2f} s; highest "
          f"frequency {dyn.omega.max() / (2 * np.pi):.1f} Hz, omega_max dt = "
          f"{dyn.omega.max() * DT:.3f}")
    inputs = reference_inputs(dyn, links)

    # warm-up (compilation or cache load)
    with stopwatch() as sw:
        fem_run(dyn, links, 2 * EVERY)
        reference_run(inputs, 2 * EVERY)
    print(f"first calls (compile or cache load): {sw.elapsed:.2f} s", flush=True)
    fem_t = ref_t = math.inf
    for _ in range(repeats):
        t, q_fem, events = fem_run(dyn, links, steps)
        fem_t = min(fem_t, t)
    print(f"fem: {fem_t:.2f} s", flush=True)
    for _ in range(3):
        t, q_ref, changes = reference_run(inputs, steps)
        ref_t = min(ref_t, t)
    events_fem = len(events)

    # the same response: the first rows of the run, and a reference run of as many steps
    _, q_cmp, changes_cmp = reference_run(inputs, compare)
    k = q_cmp.shape[0]
    diff = np.max(np.abs(q_fem[:k] - q_cmp)) / np.max(np.abs(q_cmp))
    early = sum(1 for e in events if e[0] <= (compare + 0.5) * DT)
    status = 0
    if not report.check(f"archived q over the first {compare:,} steps, fem against the "
                        f"reference (relative to max |q|)", diff, AGREEMENT):
        status = 1
    if not report.check(f"contact changes over the first {compare:,} steps, fem ({early}) "
                        f"against the reference ({int(changes_cmp.sum())})",
                        abs(early - int(changes_cmp.sum())), 0):
        status = 1
    print(f"over the first {compare:,} steps: max |q_fem - q_ref| / max |q| = {diff:.2e}; "
          f"contact changes fem {early}, reference {int(changes_cmp.sum())} (closings "
          f"{changes_cmp[0]}, openings {changes_cmp[1]}, slips {changes_cmp[2]}, sticks "
          f"{changes_cmp[3]})")
    whole_diff = np.max(np.abs(q_fem - q_ref)) / np.max(np.abs(q_ref))
    rows = [["fem (make + integrate, memory sink)", f"{fem_t:.3f}", f"{steps / fem_t:,.0f}",
             f"{events_fem:,}", f"{fem_t / ref_t:.2f}"],
            ["reference kernel (numba)", f"{ref_t:.3f}", f"{steps / ref_t:,.0f}",
             f"{int(changes.sum()):,}", "1.00"]]
    report.figure(f"fem modal CD, {2 * size['nodes']:,} dofs, {size['modes']} modes, "
                  f"{size['links']} links, {steps:,} steps", fem_t, "s", baseline=ref_t,
                  baseline_name="numba reference kernel", target=("ratio", "<=", TARGET_RATIO))
    report.figure("fem steps per second", steps / fem_t, "steps/s", baseline=steps / ref_t,
                  baseline_name="reference kernel steps per second")
    report.details.update(events_fem=events_fem, changes_reference=changes.tolist(),
                          whole_run_difference=whole_diff)
    if not args.quick:
        wall, whole, events = whole_analysis(data)
        rows.append(["fem.run, the transient analysis (results file)", f"{wall:.3f}",
                     f"{steps / wall:,.0f}", f"{events:,}", f"{wall / ref_t:.2f}"])
        report.figure("fem.run: the transient analysis' wall time", wall, "s", baseline=ref_t,
                      baseline_name="numba reference kernel")
        report.details.update(whole_run_s=whole)
    print(f"\nTimes (s): fem best of {repeats}, the reference best of 3; ratio = time / "
          f"reference kernel's")
    print(table(["run", "time", "steps/s", "contact changes", "ratio"], rows))
    print(f"over the whole run: max |q_fem - q_ref| / max |q| = {whole_diff:.2e}")
    met = fem_t / ref_t <= TARGET_RATIO
    print(f"target fem <= {TARGET_RATIO:g}x the reference: {'met' if met else 'MISSED'} "
          f"({fem_t / ref_t:.2f}x)")
    if args.profile:
        print("\nWhere fem's time goes")
        print(profile(data, min(steps, 100_000)))
    return report.finish(status)


if __name__ == "__main__":
    sys.exit(main())
