"""Closed-form phases of the exact scheme: the solution as a finite sum of exponentials.

When the state matrix A of a phase is diagonalizable with well-conditioned eigenvectors and the
forcing on a stretch of time is a finite sum of exponentials  f(t) = sum_k b_k exp(mu_k t)
(constants, sines and cosines, exponentials and their products: see
:func:`exponential_terms`), the solution of  z' = A z + E f(t)  from z(t0) = z0 is

    z(t0 + s) = sum_j W_j exp(nu_j s),   nu = (lambda_1 ... lambda_2n, mu_1 ... mu_K),

with the particular solution P_k = (mu_k I - A)^-1 e_k of each forcing term and the free part
V diag(exp(lambda s)) V^-1 (z0 - sum_k P_k). Every quantity the scheme needs follows in closed
form at any instant: states and rates, event functions r . z(s) and their derivatives, and
the integrals of quadratic forms of the velocity (energy dissipated in dampers, work of the
external forces), from  int_0^s exp(x u) du = expm1(x s) / x. The decomposition and the
forcing terms are Python (once per phase and stretch of the loads); the functions of a piece
(its weights, states, integrals and the event search) are compiled, called by the scheme's
piece kernel (``fem.integrators.exact_pieces``).

The caller falls back on the general propagator (``fem.exact.propagator``) when a phase is
defective (a rigid-body motion under a constant force, critical damping), when its forcing
resonates with one of its eigenvalues, or when a forcing function is not of this form.
"""

from __future__ import annotations

import cmath
import math

import numba
import numpy as np

from fem.exact.events import crosses

#: largest accepted condition number of the eigenvector matrix of a phase
MAX_CONDITION = 1e6
#: sampling interval of event functions, times the inverse of the fastest exponent
SAMPLE_FACTOR = 0.5
#: samples evaluated per block while searching for an event (the first block is shorter:
#: most pieces end within a few samples)
BLOCK = 64
FIRST_BLOCK = 16
_EPS = float(np.finfo(float).eps)


# --------------------------------------------------------------------------- forcing terms

def exponential_terms(fn, order: int, a: float, b: float) -> dict | None:
    """The derivative of order ``order`` of the time function ``fn`` on (a, b) as
    {mu: c} with fn^(order)(t) = sum c exp(mu t) (complex; conjugate terms both present),
    or None when it is not of that form there."""
    if fn.kind == "constant":
        return {0j: complex(fn.value)} if order == 0 else {}
    if fn.kind in ("table", "record"):
        if order >= 2:
            return {}
        mids = a + (b - a) * np.array([0.25, 0.5, 0.75])
        slopes = np.asarray(fn.derivative(mids), float)
        if np.any(slopes != 0.0):
            return {0j: complex(slopes[0])} if order == 1 and np.all(slopes == slopes[0]) \
                else None
        return {0j: complex(float(np.asarray(fn(mids[1]))))} if order == 0 else {}
    if fn.kind == "expression" and getattr(fn, "graph", None) is not None:
        terms = _graph_terms(fn.graph, {})
        if terms is None:
            return None
        return {mu: c * mu ** order for mu, c in terms.items() if c * mu ** order != 0}
    return None


def _affine(node):
    """(a, b) with node = a t + b, or None."""
    op = node.op
    if op == "const":
        return 0.0, node.value
    if op == "t":
        return 1.0, 0.0
    parts = [_affine(x) for x in node.args]
    if any(p is None for p in parts):
        return None
    if op == "add":
        return parts[0][0] + parts[1][0], parts[0][1] + parts[1][1]
    if op == "sub":
        return parts[0][0] - parts[1][0], parts[0][1] - parts[1][1]
    if op == "neg":
        return -parts[0][0], -parts[0][1]
    if op == "mul":
        (a1, b1), (a2, b2) = parts
        if a1 == 0:
            return b1 * a2, b1 * b2
        if a2 == 0:
            return a1 * b2, b1 * b2
        return None
    if op == "div" and parts[1][0] == 0 and parts[1][1] != 0:
        return parts[0][0] / parts[1][1], parts[0][1] / parts[1][1]
    return None


def _combine(x: dict, y: dict, sign: float = 1.0) -> dict:
    out = dict(x)
    for mu, c in y.items():
        out[mu] = out.get(mu, 0) + sign * c
    return {mu: c for mu, c in out.items() if c != 0}


def _product(x: dict, y: dict) -> dict | None:
    out: dict = {}
    for m1, c1 in x.items():
        for m2, c2 in y.items():
            out[m1 + m2] = out.get(m1 + m2, 0) + c1 * c2
    return out if len(out) <= 64 else None


def _graph_terms(node, memo):
    key = id(node)
    if key in memo:
        return memo[key]
    op = node.op
    result = None
    if op == "const":
        result = {0j: complex(node.value)} if node.value != 0 else {}
    elif op in ("sin", "cos", "exp", "sinh", "cosh"):
        ab = _affine(node.args[0])
        if ab is not None:
            a, b = ab
            if op == "exp":
                result = {complex(a): cmath.exp(b)}
            elif op in ("sinh", "cosh"):
                sign = 1.0 if op == "cosh" else -1.0
                result = _combine({complex(a): 0.5 * math.exp(b)},
                                  {complex(-a): sign * 0.5 * math.exp(-b)})
            else:
                p, m = 0.5 * cmath.exp(1j * b), 0.5 * cmath.exp(-1j * b)
                if op == "sin":
                    p, m = p / 1j, -m / 1j
                result = _combine({1j * a: p}, {-1j * a: m})
    else:
        args = [_graph_terms(x, memo) for x in node.args]
        if all(r is not None for r in args):
            if op == "add":
                result = _combine(args[0], args[1])
            elif op == "sub":
                result = _combine(args[0], args[1], -1.0)
            elif op == "neg":
                result = {mu: -c for mu, c in args[0].items()}
            elif op == "mul":
                result = _product(args[0], args[1])
            elif op == "div":
                d = node.args[1]
                if d.op == "const" and d.value != 0:
                    result = {mu: c / d.value for mu, c in args[0].items()}
            elif op == "pow":
                e = node.args[1]
                if e.op == "const" and float(e.value).is_integer() and 0 <= e.value <= 8:
                    result = {0j: 1.0 + 0j}
                    for _ in range(int(e.value)):
                        result = _product(result, args[0]) if result is not None else None
    memo[key] = result
    return result


def forcing_terms(columns, B: np.ndarray, a: float, b: float):
    """(mu (K,), vectors (n, K)) with B w(t) = sum_k vectors[:, k] exp(mu_k (t - a)) on (a, b),
    or None when a column is not a sum of exponentials there."""
    merged: dict = {}
    for j, (fn, order) in enumerate(columns):
        terms = exponential_terms(fn, order, a, b)
        if terms is None:
            return None
        for mu, c in terms.items():
            # round the exponent so that equal frequencies from different columns merge
            key = complex(float(np.float64(mu.real)), float(np.float64(mu.imag)))
            merged.setdefault(key, np.zeros(B.shape[0], complex))
            merged[key] += B[:, j] * c * cmath.exp(mu * a)
    mu = np.array(list(merged.keys()), complex)
    vectors = np.array(list(merged.values()), complex).T.reshape(B.shape[0], len(mu))
    return mu, vectors


# --------------------------------------------------------------------------- phases

class SpectralPhase:
    """The eigen-decomposition of one phase's state matrix A (2n, 2n), or ``ok = False``."""

    def __init__(self, A: np.ndarray):
        self.A = A
        lam, V = np.linalg.eig(A)
        self.ok = bool(np.all(np.isfinite(lam)))
        self.lam, self.V = lam, V
        if self.ok:
            cond = np.linalg.cond(V)
            self.ok = bool(np.isfinite(cond) and cond < MAX_CONDITION)
        if self.ok:
            self.Vinv = np.linalg.inv(V)
        self._particular: dict = {}
        self._resolvents: dict = {}

    def particular(self, mu: complex, key, e: np.ndarray):
        """(mu I - A)^-1 e, cached under ``key``; None on resonance. The resolvent of each
        mu is kept: the pieces of a phase share their forcing exponents."""
        found = None if key is None else self._particular.get(key)
        if found is None:
            resolvent = self._resolvents.get(mu)
            if resolvent is None:
                scale = max(1.0, float(np.max(np.abs(self.lam))) if len(self.lam) else 1.0)
                if len(self.lam) and np.min(np.abs(self.lam - mu)) < 1e-7 * scale:
                    resolvent = False
                else:
                    resolvent = np.linalg.inv(mu * np.eye(len(self.A)) - self.A)
                self._resolvents[mu] = resolvent
            found = False if resolvent is False else resolvent @ e.astype(complex)
            if key is not None:
                self._particular[key] = found
        return None if found is False else found


# --------------------------------------------------------------------------- pieces
# A piece is the closed-form solution z(s) = Re sum_j W[:, j] exp(nu_j s) from one instant, in
# one phase and on a stretch of one forcing form; the functions below are compiled, called by
# the exact scheme's piece kernel (``fem.integrators.exact_pieces``) for whole pieces.

@numba.njit(cache=True, nogil=True)
def piece_weights(V, Vinv, P, mu, shift, z0):
    """W (2n, J0 + K): the free part V diag(y) with y = V^-1 (z0 - sum_k P_k(shift)), then the
    particular solutions P_k(shift) = P[:, k] exp(mu_k shift) of the forcing terms (P relative
    to the origin of the forcing, ``shift`` the start of the piece after that origin)."""
    m, j0 = V.shape
    K = mu.size
    W = np.empty((m, j0 + K), np.complex128)
    rest = np.empty(m, np.complex128)
    for r in range(m):
        rest[r] = z0[r]
    for k in range(K):
        f = cmath.exp(mu[k] * shift)
        for r in range(m):
            x = P[r, k] * f
            W[r, j0 + k] = x
            rest[r] -= x
    for j in range(j0):
        y = 0j
        for r in range(m):
            y += Vinv[j, r] * rest[r]
        for r in range(m):
            W[r, j] = V[r, j] * y
    return W


@numba.njit(cache=True, nogil=True)
def exponentials(x, s, out):
    """exp(x_j s) into out."""
    for j in range(x.size):
        out[j] = cmath.exp(x[j] * s)


@numba.njit(cache=True, nogil=True)
def piece_state(W, nu, e, z, rate):
    """z(s) and z'(s) (real parts) into z, rate (2n,), from e = exp(nu s)."""
    for r in range(z.size):
        z[r] = 0.0
        rate[r] = 0.0
    for j in range(nu.size):
        de = e[j] * nu[j]
        for r in range(z.size):
            z[r] += (W[r, j] * e[j]).real
            rate[r] += (W[r, j] * de).real


@numba.njit(cache=True, nogil=True)
def cexpm1(x):
    """exp(x) - 1 for a complex x, accurate near zero (numpy's formula)."""
    a = math.sin(0.5 * x.imag)
    return complex(math.expm1(x.real) * math.cos(x.imag) - 2.0 * a * a,
                   math.exp(x.real) * math.sin(x.imag))


@numba.njit(cache=True, nogil=True)
def quadratic_coefficients(Wv, Q):
    """Wv^T Q Wv (J, J): int v^T Q v = sum_jl those times int exp((nu_j + nu_l) u)."""
    n, J = Wv.shape
    QW = np.zeros((n, J), np.complex128)
    for r in range(n):
        for q in range(n):
            if Q[r, q] != 0.0:
                for j in range(J):
                    QW[r, j] += Q[r, q] * Wv[q, j]
    out = np.zeros((J, J), np.complex128)
    for j in range(J):
        for r in range(n):
            if Wv[r, j] != 0:
                for l in range(J):
                    out[j, l] += Wv[r, j] * QW[r, l]
    return out


@numba.njit(cache=True, nogil=True)
def work_coefficients(Wv, forces):
    """forces^T Wv (K, J): int f . v = sum_kj those times int exp((mu_k + nu_j) u)."""
    n, J = Wv.shape
    K = forces.shape[1]
    out = np.zeros((K, J), np.complex128)
    for k in range(K):
        for r in range(n):
            if forces[r, k] != 0:
                for j in range(J):
                    out[k, j] += forces[r, k] * Wv[r, j]
    return out


@numba.njit(cache=True, nogil=True)
def pair_terms(coefficients, x, y, symmetric):
    """The terms of  I(s) = Re sum_jl coefficients[j, l] int_0^s exp((x_j + y_l) u) du  that
    are not zero: (j, l, exponent x_j + y_l, weight) with the weight c / (x_j + y_l), or c
    itself for a zero exponent. ``symmetric``: x is y, and the terms (j, l) and (l, j), of
    one exponent, are summed into one."""
    J, L = coefficients.shape
    count = 0
    for j in range(J):
        for l in range(j if symmetric else 0, L):
            if _pair_coefficient(coefficients, j, l, symmetric) != 0:
                count += 1
    js = np.empty(count, np.int64)
    ls = np.empty(count, np.int64)
    exponents = np.empty(count, np.complex128)
    weights = np.empty(count, np.complex128)
    t = 0
    for j in range(J):
        for l in range(j if symmetric else 0, L):
            c = _pair_coefficient(coefficients, j, l, symmetric)
            if c == 0:
                continue
            e = x[j] + y[l]
            js[t], ls[t], exponents[t] = j, l, e
            weights[t] = c if e.real == 0.0 and e.imag == 0.0 else c / e
            t += 1
    return js, ls, exponents, weights


@numba.njit(cache=True, nogil=True, inline="always")
def _pair_coefficient(coefficients, j, l, symmetric):
    if symmetric and l != j:
        return coefficients[j, l] + coefficients[l, j]
    return coefficients[j, l]


@numba.njit(cache=True, nogil=True)
def pair_sum(js, ls, exponents, weights, ex, ey, s):
    """I(s) of :func:`pair_terms`, given ex = exp(x s) and ey = exp(y s): each term is
    weight (exp(e s) - 1) (expm1 where e s is small), or weight s for a zero exponent."""
    total = 0.0
    for t in range(js.size):
        e = exponents[t]
        if e.real == 0.0 and e.imag == 0.0:
            total += weights[t].real * s
            continue
        es = e * s
        if es.real * es.real + es.imag * es.imag < 0.25:
            total += (weights[t] * cexpm1(es)).real
        else:
            total += (weights[t] * (ex[js[t]] * ey[ls[t]] - 1.0)).real
    return total


# --------------------------------------------------------------------------- events

@numba.njit(cache=True, nogil=True)
def first_root(coefficients, nu, offsets, directions, span, skip_start):
    """(index, s) of the earliest crossing in (0, span] of g_e(s) = Re sum_j
    coefficients[e, j] exp(nu_j s) + offsets_e in its direction (+1 up, -1 down), or (-1, 0).

    The functions are sampled at intervals of SAMPLE_FACTOR / max|nu| with their derivatives
    (the exponents that enter them), in blocks of BLOCK samples; a sign change brackets a
    root, a sign change of the derivative an extremum that may cross (a grazing pair of
    roots). Roots are polished by Newton's method kept inside the bracket. With
    ``skip_start`` a function at zero at s = 0 (the event just handled) is judged by its
    rate there, and one more sample just after the start shows the way out of zero of a
    function at zero with a zero rate (a bond just released).
    """
    ne, J = coefficients.shape
    fastest = 0.0
    for j in range(J):
        for e in range(ne):
            if coefficients[e, j] != 0:
                fastest = max(fastest, abs(nu[j]))
                break
    delta = span if fastest == 0.0 else min(span, SAMPLE_FACTOR / fastest)
    count = max(1, int(math.ceil(span / delta - 1e-9)))
    scale = np.empty(ne)
    for e in range(ne):
        size = 0.0
        for j in range(J):
            size += abs(coefficients[e, j])
        size = max(size, abs(offsets[e]))
        scale[e] = size if size > 0 else 1.0
    exps = np.empty(J, np.complex128)
    start = 0
    while start < count:
        stop = min(count, start + (FIRST_BLOCK if start == 0 else BLOCK))
        extra = 1 if (start == 0 and skip_start) else 0
        ns = stop - start + 1 + extra
        s = np.empty(ns)
        s[0] = min(start * delta, span)
        for i in range(1, stop - start + 1):
            s[i + extra] = min((start + i) * delta, span)
        if extra:
            s[1] = min(1e-4 * delta, 0.5 * s[2])
        g = np.empty((ns, ne))
        dg = np.empty((ns, ne))
        for i in range(ns):
            for j in range(J):
                exps[j] = cmath.exp(nu[j] * s[i])
            for e in range(ne):
                value = 0.0
                rate = 0.0
                for j in range(J):
                    x = coefficients[e, j] * exps[j]
                    value += x.real
                    rate += (x * nu[j]).real
                g[i, e] = value + offsets[e]
                dg[i, e] = rate
        if extra:
            for e in range(ne):
                if abs(g[0, e]) <= 1e-12 * scale[e]:
                    g[0, e] = dg[0, e] * delta * 1e-6
        e, root = _earliest(s, g, dg, directions, coefficients, nu, offsets)
        if e >= 0:
            return e, root
        start = stop
    return -1, 0.0


@numba.njit(cache=True, nogil=True)
def _earliest(s, g, dg, directions, coefficients, nu, offsets):
    """(index, root) of the earliest crossing of the sampled functions g (ns, ne), or
    (-1, 0.0). The earliest root, not the earliest bracket: a bracket that starts at an
    extremum may hold a later root than one that starts at the sample before it."""
    best_e = -1
    best = 0.0
    for e in range(offsets.size):
        ok, a, b, ga = _bracket(s, g[:, e], dg[:, e], directions[e], coefficients[e], nu,
                                offsets[e])
        if not ok or (best_e >= 0 and a >= best):
            continue
        root = _polish(coefficients[e], nu, offsets[e], a, b, ga)
        if best_e < 0 or root < best:
            best_e, best = e, root
    return best_e, best


@numba.njit(cache=True, nogil=True)
def _value(c, nu, offset, s):
    """g(s) = sum_j c_j exp(nu_j s) + offset (real part) and its derivative."""
    g = 0.0
    dg = 0.0
    for j in range(nu.size):
        x = cmath.exp(nu[j] * s) * c[j]
        g += x.real
        dg += (x * nu[j]).real
    return g + offset, dg


@numba.njit(cache=True, nogil=True)
def _bracket(s, g, dg, direction, c, nu, offset):
    """(found, a, b, g(a)): the first interval of the samples s where g crosses zero in its
    direction, directly or through an extremum."""
    for k in range(len(s) - 1):
        if crosses(g[k], g[k + 1], direction):
            return True, s[k], s[k + 1], g[k]
        if dg[k] * dg[k + 1] < 0:
            t_ext = _rate_root(c, nu, s[k], s[k + 1], dg[k])
            g_ext, _ = _value(c, nu, offset, t_ext)
            if crosses(g[k], g_ext, direction):
                return True, s[k], t_ext, g[k]
            # from the extremum on (a function that starts at its event, at zero, rises
            # and comes back across inside the interval)
            if crosses(g_ext, g[k + 1], direction):
                return True, t_ext, s[k + 1], g_ext
    return False, 0.0, 0.0, 0.0


@numba.njit(cache=True, nogil=True)
def _rate_root(c, nu, a, b, ra):
    """Where the derivative of g vanishes in [a, b], given its value ra at a (Newton's method
    on the derivative, kept inside the bracket by bisection)."""
    x = 0.5 * (a + b)
    for _ in range(100):
        r = 0.0
        dr = 0.0
        for j in range(nu.size):
            t = cmath.exp(nu[j] * x) * c[j] * nu[j]
            r += t.real
            dr += (t * nu[j]).real
        if r == 0:
            return x
        if (r < 0) == (ra < 0):
            a = x
        else:
            b = x
        nxt = x - r / dr if dr != 0 else 0.5 * (a + b)
        if not (a < nxt < b):
            nxt = 0.5 * (a + b)
        if abs(nxt - x) <= 2 * _EPS * abs(x) or b - a <= 2 * _EPS * abs(b):
            return nxt
        x = nxt
    return x


@numba.njit(cache=True, nogil=True)
def _polish(c, nu, offset, a, b, ga):
    """Root of g in [a, b], where g changes sign from ``ga`` (its sampled sign at a)."""
    gb, _ = _value(c, nu, offset, b)
    if gb == 0:
        return b
    x = a - ga * (b - a) / (gb - ga) if gb != ga else 0.5 * (a + b)
    if not (a < x < b):
        x = 0.5 * (a + b)
    for _ in range(100):
        gx, dgx = _value(c, nu, offset, x)
        if gx == 0:
            return x
        if (gx < 0) == (ga < 0):
            a, ga = x, gx
        else:
            b = x
        nxt = x - gx / dgx if dgx != 0 else 0.5 * (a + b)
        if not (a < nxt < b):
            nxt = 0.5 * (a + b)
        if abs(nxt - x) <= 2 * _EPS * abs(x) or b - a <= 0:
            return nxt
        x = nxt
    return x
