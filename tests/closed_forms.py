"""Closed-form references of the link scenarios: penalty shocks on a plane, between two
planes and in a circular hole, Coulomb friction (sliding to rest, static and sliding
coefficients, unidirectional friction, a mass rubbing on a shaken support) and rigid
impacts. Independent of fem: numpy and scipy only.

Every phase is linear with constant coefficients, so it is written in closed form (the
damped oscillator, or a polynomial in time); phases are chained at their events, each
located by ``scipy.optimize.brentq`` on the analytic expression of its condition. Each
scenario returns a :class:`Reference`: its events, named values (contact durations,
rebound velocities, stop times, ...), and the exact state (x, v) at any array of times.

The docstring examples cross-check phases against ``scipy.integrate.solve_ivp`` at
rtol 1e-12 (run by tests/test_link_matrix.py); solve_ivp is never the reference itself.

Units: SI (m, kg, s, N, N/m, N.s/m).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.optimize import brentq

#: samples of a phase scanned for the first sign change of an event condition
_SCAN = 4000


@dataclass(frozen=True)
class Event:
    """One event: time (s), kind ("impact", "separation", "stick", "slip"), side of a shock
    obstacle ("+", "-", "radial" or ""), and a velocity (m/s): for a shock the normal
    velocity p' there (positive when the gap closes), for an impact link the rate r' of its
    gap before the impact (negative when it closes)."""
    time: float
    kind: str
    side: str = ""
    velocity: float = float("nan")


@dataclass(frozen=True)
class Reference:
    """A scenario's answer.

    events : tuple of Event, in time order
    values : dict of named scalars (s, m, m/s, J, W)
    state : ``state(times)`` -> (x, v), arrays of shape (len(times), ndof) in m and m/s,
        ndof in the order of the scenario's docstring
    """
    events: tuple
    values: dict
    state: Callable = field(repr=False)

    def x(self, times):
        return self.state(np.atleast_1d(np.asarray(times, float)))[0]

    def v(self, times):
        return self.state(np.atleast_1d(np.asarray(times, float)))[1]


# ------------------------------------------------------------------------ building blocks

def oscillator(m, c, k, f, x0, v0):
    """x(s), v(s) of m x'' + c x' + k x = f from x(0) = x0, x'(0) = v0.

    Underdamped (c^2 < 4 k m) with k > 0, or a free mass (k = c = 0) under the constant f.
    Returns two functions of s (s) accepting arrays.
    """
    if k == 0.0:
        if c != 0.0:
            raise ValueError("a free mass with a damper is not needed here")
        a = f / m
        return (lambda s: x0 + v0 * s + 0.5 * a * s * s), (lambda s: v0 + a * s)
    w = np.sqrt(k / m)
    zeta = c / (2.0 * np.sqrt(k * m))
    if zeta >= 1.0:
        raise ValueError("overdamped phases are not needed here")
    wd = w * np.sqrt(1.0 - zeta * zeta)
    xe = f / k
    a = x0 - xe
    b = (v0 + zeta * w * a) / wd

    def x(s):
        return xe + np.exp(-zeta * w * s) * (a * np.cos(wd * s) + b * np.sin(wd * s))

    def v(s):
        return np.exp(-zeta * w * s) * ((wd * b - zeta * w * a) * np.cos(wd * s)
                                        - (zeta * w * b + wd * a) * np.sin(wd * s))
    return x, v


def first_crossing(fn, span, rising=True):
    """First s in (0, span] where ``fn`` goes from <= 0 to > 0 (``rising``) or from > 0 to
    <= 0, located by brentq between the samples of a scan; None if there is none."""
    s = np.linspace(0.0, span, _SCAN + 1)[1:]
    values = fn(s)
    if rising:
        changed = np.flatnonzero((values[:-1] <= 0.0) & (values[1:] > 0.0))
    else:
        changed = np.flatnonzero((values[:-1] > 0.0) & (values[1:] <= 0.0))
    if not len(changed):
        return None
    i = changed[0]
    return brentq(fn, s[i], s[i + 1], xtol=1e-16, rtol=4 * np.finfo(float).eps)


class _Pieces:
    """A trajectory made of phases [t0, t1) each given by (x(s), v(s)) with s = t - t0,
    times mapped to the phase they fall in (an event time to the phase it starts)."""

    def __init__(self):
        self.starts, self.phases = [], []

    def add(self, t0, x, v):
        self.starts.append(t0)
        self.phases.append((x, v))

    def __call__(self, times):
        times = np.asarray(times, float)
        index = np.searchsorted(self.starts, times, side="right") - 1
        index = np.clip(index, 0, len(self.starts) - 1)
        x, v = np.empty(times.shape), np.empty(times.shape)
        for i in np.unique(index):
            sel = index == i
            s = times[sel] - self.starts[i]
            x[sel], v[sel] = self.phases[i][0](s), self.phases[i][1](s)
        return x[:, None], v[:, None]


# ------------------------------------------------------------------------ penalty shocks

def shock_chain(m, k0, kc, c, gap, release, sides, v0, end):
    """A mass m on a spring k0 to the ground, starting at x = 0 with velocity v0, against
    penalty obstacles at x = s gap for each s of ``sides`` (+1: a plane of normal +X; -1:
    its mirror). In contact on side s the link adds -s (kc p + c p') with p = s x - gap:

        m x'' + c x' + (k0 + kc) x = s kc gap

    Contact starts where p rises through 0; it ends where p falls to 0 (release "gap") or
    where kc p + c p' falls to 0 (release "force"). Returns (events, pieces) up to ``end``.
    """
    w0 = np.sqrt(k0 / m)
    t, x, v, side = 0.0, 0.0, float(v0), 0
    events, pieces = [], _Pieces()
    while t < end:
        if side == 0:
            xs, vs = oscillator(m, 0.0, k0, 0.0, x, v)
            pieces.add(t, xs, vs)
            span = min(2 * np.pi / w0, end - t)
            found = [(first_crossing(lambda s, q=q: q * xs(s) - gap, span), q) for q in sides]
            found = [(s, q) for s, q in found if s is not None]
            if not found:
                break
            s, side = min(found)
            t, x, v = t + s, xs(s), vs(s)
            events.append(Event(t, "impact", "+" if side > 0 else "-", side * v))
        else:
            q = side
            xs, vs = oscillator(m, c, k0 + kc, q * kc * gap, x, v)
            pieces.add(t, xs, vs)
            if release == "gap" or c == 0.0:
                def condition(s):
                    return q * xs(s) - gap
            else:
                def condition(s):
                    return kc * (q * xs(s) - gap) + c * q * vs(s)
            wc = np.sqrt((k0 + kc) / m)
            s = first_crossing(condition, min(2 * np.pi / wc, end - t), rising=False)
            if s is None:
                break
            t, x, v = t + s, xs(s), vs(s)
            events.append(Event(t, "separation", "+" if q > 0 else "-", q * v))
            side = 0
    return events, pieces


def _shock_values(events):
    values = {"first_contact": events[0].time}
    if len(events) > 1:
        values["exit"] = events[1].time
        values["contact_duration"] = events[1].time - events[0].time
        values["impact_velocity"] = events[0].velocity
        values["rebound_velocity"] = events[1].velocity      # normal velocity at the exit
    if len(events) > 2:
        values["second_contact"] = events[2].time
    return values


def plane(m=1.0, k0=100.0, v0=1.0, gap=0.05, kc=1e4, c=0.0, release="gap", end=0.55):
    """One dof (DX): mass m on a spring k0 to the ground, from x = 0 at velocity v0 towards a
    penalty plane (normal +X) at ``gap``: free flight x = (v0 / w0) sin(w0 t), then the
    contact phase m x'' + c x' + (k0 + kc) x = kc gap until p = 0 (release "gap") or
    kc p + c p' = 0 (release "force"), then free flight to the second contact.

    values: first_contact, exit, contact_duration, impact_velocity, rebound_velocity (the
    normal velocity at the exit, negative), second_contact.

    The first contact is at asin(gap w0 / v0) / w0; solve_ivp through the contact phase,
    with its exit as a terminal event, agrees:

    >>> from scipy.integrate import solve_ivp
    >>> ref = plane(c=20.0, release="force")
    >>> x1, v1 = ref.state([ref.values["first_contact"]])
    >>> bool(abs(ref.values["first_contact"] - np.arcsin(0.05 * 10.0) / 10.0) < 1e-15)
    True
    >>> def opened(t, y):
    ...     return 1e4 * (y[0] - 0.05) + 20.0 * y[1]
    >>> opened.terminal, opened.direction = True, -1
    >>> sol = solve_ivp(lambda t, y: [y[1], -20.0 * y[1] - 10100.0 * y[0] + 500.0],
    ...                 (ref.values["first_contact"], 0.2), [x1[0, 0], v1[0, 0]],
    ...                 method="DOP853", rtol=1e-12, atol=1e-15, events=opened)
    >>> bool(abs(sol.t_events[0][0] - ref.values["exit"]) < 1e-11)
    True
    >>> bool(abs(sol.y_events[0][0][1] - ref.values["rebound_velocity"]) < 1e-9)
    True
    """
    events, pieces = shock_chain(m, k0, kc, c, gap, release, (1,), v0, end)
    return Reference(tuple(events), _shock_values(events), pieces)


def two_planes(m=1.0, k0=100.0, v0=1.0, gap=0.05, kc=1e4, end=0.25):
    """The oscillator of :func:`plane` (undamped contact) between penalty planes at +gap and
    -gap: first contact on side +, exit, second contact on side - after the free flight
    across the clearance.

    values: as :func:`plane`; second_contact is on the other side.

    >>> ref = two_planes()
    >>> [(e.kind, e.side) for e in ref.events[:3]]
    [('impact', '+'), ('separation', '+'), ('impact', '-')]
    >>> # an undamped contact gives back the entry speed; the flight is symmetric about 0
    >>> e = ref.events
    >>> bool(abs(e[1].velocity + e[0].velocity) < 1e-12)
    True
    >>> bool(abs(e[2].velocity - e[0].velocity) < 1e-12)
    True
    """
    events, pieces = shock_chain(m, k0, kc, 0.0, gap, "gap", (1, -1), v0, end)
    return Reference(tuple(events), _shock_values(events), pieces)


def circle(m=1.0, k0=100.0, v0=1.0, angle_deg=30.0, radius=0.05, kc=1e4, end=0.25):
    """Two dofs (DX, DY), equal springs k0 on both, starting at the centre of a circular hole
    (axis Z, radius ``radius``) with velocity v0 along the direction d at ``angle_deg`` from
    X. The springs are isotropic and the motion starts at the centre, so it stays along d:
    the radial coordinate r = x . d follows :func:`two_planes` (the wall is met at r = +radius,
    then at r = -radius across the hole), and (x, y) = r d.

    values: as :func:`two_planes`, plus ``direction`` (d).
    """
    d = np.array([np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg))])
    radial = two_planes(m, k0, v0, radius, kc, end)

    def state(times):
        r, rdot = radial.state(times)
        return r * d, rdot * d
    events = tuple(Event(e.time, e.kind, "radial", e.velocity) for e in radial.events)
    return Reference(events, dict(radial.values, direction=d), state)


# ------------------------------------------------------------------------ Coulomb friction

def _deceleration(v0, a):
    """s(t), v(t) of a straight slide at v0 decelerated by a until it stops, then at rest."""
    stop = v0 / a

    def s(t):
        t = np.minimum(t, stop)
        return v0 * t - 0.5 * a * t * t

    def v(t):
        return np.maximum(v0 - a * t, 0.0)
    return s, v, stop


def coulomb_slide(m=1.0, normal_force=10.0, mu=0.2, v0=1.0, angle_deg=30.0, kc=1e4):
    """Three dofs (DX, DY, DZ): a mass pressed on a plane below it (normal -Z) by a constant
    ``normal_force`` N, resting in normal equilibrium (z = -N / kc: the normal force stays
    N), thrown at v0 along d at ``angle_deg`` from X in the XY plane. Rigid Coulomb friction:
    straight deceleration mu N / m along -d, stop at v0 m / (mu N) after v0^2 m / (2 mu N),
    then stick for good.

    values: stop_time, slide_distance, deceleration, z (the constant normal displacement).
    """
    a = mu * normal_force / m
    d = np.array([np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg)), 0.0])
    s, v, stop = _deceleration(v0, a)
    z = -normal_force / kc

    def state(times):
        x = s(times)[:, None] * d + np.array([0.0, 0.0, z])
        return x, v(times)[:, None] * d
    values = dict(stop_time=stop, slide_distance=s(np.array(stop)).item(), deceleration=a,
                  z=z)
    return Reference((), values, state)


def unidirectional_slide(m=1.0, normal_force=10.0, mu=0.2, v0=1.0, angle_deg=30.0, kc=1e4):
    """The mass of :func:`coulomb_slide` thrown at (vx, vy) = v0 (cos, sin)(angle), with
    friction along X only: X decelerates by mu N / m and stops at vx m / (mu N) after
    vx^2 m / (2 mu N); Y keeps vy (no friction along Y). Dofs DX, DY, DZ.

    values: stop_time, slide_distance (along X), deceleration, vy, z.
    """
    a = mu * normal_force / m
    vx, vy = v0 * np.cos(np.radians(angle_deg)), v0 * np.sin(np.radians(angle_deg))
    s, v, stop = _deceleration(vx, a)
    z = -normal_force / kc

    def state(times):
        x = np.column_stack([s(times), vy * times, np.full(times.shape, z)])
        return x, np.column_stack([v(times), np.full(times.shape, vy), 0.0 * times])
    values = dict(stop_time=stop, slide_distance=s(np.array(stop)).item(), deceleration=a,
                  vy=vy, z=z)
    return Reference((), values, state)


def static_friction_ramp(m=1.0, normal_force=10.0, mu_static=0.3, mu=0.2, rate=10.0,
                         kc=1e4):
    """Two dofs (DX, DZ): the mass of :func:`coulomb_slide` at rest, pulled along X by
    F = rate t. It sticks until F = mu_s N, at t_s = mu_s N / rate, then slides with
    m x'' = rate t - mu N (the sliding coefficient):

        v = (rate (t^2 - t_s^2) / 2 - mu N (t - t_s)) / m
        x = (rate (t^3 - t_s^3) / 6 - rate t_s^2 (t - t_s) / 2 - mu N (t - t_s)^2 / 2) / m

    values: slip_start.

    >>> from scipy.integrate import solve_ivp
    >>> ref = static_friction_ramp()
    >>> sol = solve_ivp(lambda t, y: [y[1], 10.0 * t - 2.0], (0.3, 0.6), [0.0, 0.0],
    ...                 method="DOP853", rtol=1e-12, atol=1e-15)
    >>> x, v = ref.state(np.array([0.6]))
    >>> bool(abs(x[0, 0] - sol.y[0, -1]) < 1e-12 and abs(v[0, 0] - sol.y[1, -1]) < 1e-12)
    True
    """
    ts = mu_static * normal_force / rate
    fr = mu * normal_force

    def state(times):
        t = np.maximum(times, ts)
        u = t - ts
        v = (0.5 * rate * (t * t - ts * ts) - fr * u) / m
        x = (rate * (t ** 3 - ts ** 3) / 6 - 0.5 * rate * ts * ts * u - 0.5 * fr * u * u) / m
        z = np.full(times.shape, -normal_force / kc)
        return np.column_stack([x, z]), np.column_stack([v, 0.0 * times])
    return Reference((Event(ts, "slip"),), dict(slip_start=ts), state)


def shaken_rubbing(m=1.0, normal_force=10.0, mu=0.1, amplitude=1.5, frequency=1.0,
                   end=2.0, mu_static=None):
    """One dof: the velocity v of a mass relative to a support shaken along X with the
    acceleration A sin(2 pi f t), the mass pressed on it by N, with rigid Coulomb friction
    mu N (starting at rest), static coefficient ``mu_static`` (default mu). Relative to the
    support the load is -m A sin(2 pi f t):

        stick while v = 0 and |m A sin(2 pi f t)| <= mu_s N;
        slip  with m v' = -m A sin(2 pi f t) - mu N sign(v),

    each slip starting in the direction of the driving force and ending when v returns to 0
    (both transitions by brentq on the closed forms). For A <= mu N / m it never slips.

    values: wear_work (mu N times the integral of |v| over [0, end], J), mean_wear_power
    (wear_work / end, W), slips (count); state gives (x, v) relative to the support.
    Events: "slip" and "stick".

    >>> from scipy.integrate import solve_ivp
    >>> ref = shaken_rubbing()
    >>> first, stop = ref.events[0].time, ref.events[1].time
    >>> bool(abs(1.5 * np.sin(2 * np.pi * first) - 1.0) < 1e-14)
    True
    >>> def stopped(t, y):
    ...     return y[0]
    >>> stopped.terminal, stopped.direction = True, 1
    >>> sol = solve_ivp(lambda t, y: [-1.5 * np.sin(2 * np.pi * t) + 1.0, 0.0],
    ...                 (first, 1.0), [-1e-300, 0.0], method="DOP853", rtol=1e-12,
    ...                 atol=1e-15, events=stopped)
    >>> bool(abs(sol.t_events[0][0] - stop) < 1e-10)
    True
    >>> shaken_rubbing(amplitude=0.8).values["wear_work"]
    0.0
    """
    a_f = mu * normal_force / m
    a_s = (mu if mu_static is None else mu_static) * normal_force / m
    wf = 2 * np.pi * frequency

    def drive(t):
        """The load over the mass (m/s^2)."""
        return -amplitude * np.sin(wf * t)

    t, x = 0.0, 0.0
    events, pieces = [], _Pieces()
    wear = []            # (t0, t1, distance slid) per slip
    sticking = True
    direction = 0.0
    while t < end:
        if sticking:
            x_stick = x
            pieces.add(t, lambda s, x0=x_stick: x0 + 0.0 * s, lambda s: 0.0 * s)
            span = end - t
            s = first_crossing(lambda s: np.abs(drive(t + s)) - a_s, span)
            if s is None:
                break
            t += s
            direction = np.sign(drive(t))
            events.append(Event(t, "slip"))
            sticking = False
        else:
            t0, x0, q = t, x, direction

            def vs(s, t0=t0, q=q):
                return amplitude / wf * (np.cos(wf * (t0 + s)) - np.cos(wf * t0)) - q * a_f * s

            def xs(s, t0=t0, q=q, x0=x0):
                return x0 + amplitude / wf * ((np.sin(wf * (t0 + s)) - np.sin(wf * t0)) / wf
                                              - np.cos(wf * t0) * s) - 0.5 * q * a_f * s * s
            pieces.add(t0, xs, vs)
            # the slip ends where q v falls back to 0
            s = first_crossing(lambda s: q * vs(s), end - t0 + 1.0 / frequency, rising=False)
            t, x = t0 + s, xs(s)
            wear.append((t0, t, q * (x - x0)))
            events.append(Event(t, "stick"))
            if abs(drive(t)) > a_s:           # the force still exceeds friction: slip back
                events.append(Event(t, "slip"))
                direction = np.sign(drive(t))
            else:
                sticking = True

    # v keeps its sign during a slip: the integral of |v| is the distance slid
    slid = 0.0
    for t0, t1, distance in wear:
        if t1 <= end:
            slid += distance
        elif t0 < end:
            slid += abs(pieces(np.array([end]))[0][0, 0] - pieces(np.array([t0]))[0][0, 0])
    work = mu * normal_force * slid
    values = dict(wear_work=work, mean_wear_power=work / end, slips=len(wear))
    return Reference(tuple(events), values, pieces)


# ------------------------------------------------------------------------ rigid impacts

def impact_wall(m=1.0, v0=-1.0, gap=0.1, restitution=0.8):
    """One dof: a free mass moving at v0 < 0 towards a rigid wall at -gap (impact link on
    one node: r = gap + x >= 0). Impact at gap / |v0|, then v = -e v0.

    values: impact_time, gap_rate_before and gap_rate_after (r', m/s), velocity_after.
    The event's velocity is r' before the impact (negative: the gap closes).
    """
    ti = gap / -v0
    after = -restitution * v0
    pieces = _Pieces()
    pieces.add(0.0, lambda s: v0 * s, lambda s: v0 + 0.0 * s)
    pieces.add(ti, lambda s: -gap + after * s, lambda s: after + 0.0 * s)
    values = dict(impact_time=ti, gap_rate_before=v0, gap_rate_after=after,
                  velocity_after=(after,))
    return Reference((Event(ti, "impact", velocity=v0),), values, pieces)


def impact_pair(m1=1.0, m2=3.0, v1=1.0, v2=-0.5, gap=0.1, restitution=0.8, force=0.0):
    """Two free masses on one line (dofs x1, x2, both from 0), gap r = gap + x2 - x1 >= 0,
    initial velocities v1 > v2; an optional constant force on mass 1 (towards mass 2).

    Before the impact x1 = v1 t + F t^2 / (2 m1), x2 = v2 t; the impact is at the positive
    root of gap + (v2 - v1) t - F t^2 / (2 m1) = 0. Newton's law with momentum conserved:

        v1' = vc - m2 / (m1 + m2) e w,   v2' = vc + m1 / (m1 + m2) e w

    with w = v1 - v2 the approach velocity and vc the velocity of the centre of mass. With
    e = 0 the bodies stick and move together afterwards, accelerated by F / (m1 + m2) (the
    bond carries m2 F / (m1 + m2) > 0: it never releases).

    values: impact_time, gap_rate_before (-w) and gap_rate_after (r' = v2' - v1', m/s),
    velocity_after (v1', v2'). The event's velocity is r' before the impact.

    >>> ref = impact_pair()
    >>> v1, v2 = ref.values["velocity_after"]
    >>> bool(abs(1.0 * v1 + 3.0 * v2 - (1.0 * 1.0 + 3.0 * -0.5)) < 1e-15)   # momentum
    True
    >>> bool(abs(ref.values["gap_rate_after"] + 0.8 * ref.values["gap_rate_before"]) < 1e-15)
    True
    """
    a1 = force / m1
    # stable root of a1 t^2 / 2 + (v1 - v2) t - gap = 0
    b = v1 - v2
    ti = 2 * gap / (b + np.sqrt(b * b + 2 * a1 * gap))
    u1, u2 = v1 + a1 * ti, v2
    x1i, x2i = v1 * ti + 0.5 * a1 * ti * ti, v2 * ti
    w = u1 - u2
    vc = (m1 * u1 + m2 * u2) / (m1 + m2)
    e = restitution
    w1, w2 = vc - m2 / (m1 + m2) * e * w, vc + m1 / (m1 + m2) * e * w
    a_after = (force / (m1 + m2), force / (m1 + m2)) if e == 0 else (a1, 0.0)

    def state(times):
        before = times < ti
        s = np.where(before, times, times - ti)
        x = np.empty((len(times), 2))
        v = np.empty((len(times), 2))
        x[:, 0] = np.where(before, v1 * s + 0.5 * a1 * s * s,
                           x1i + w1 * s + 0.5 * a_after[0] * s * s)
        x[:, 1] = np.where(before, v2 * s, x2i + w2 * s + 0.5 * a_after[1] * s * s)
        v[:, 0] = np.where(before, v1 + a1 * s, w1 + a_after[0] * s)
        v[:, 1] = np.where(before, v2 + 0.0 * s, w2 + a_after[1] * s)
        return x, v
    kind = "stick" if e == 0 else "impact"
    values = dict(impact_time=ti, gap_rate_before=-w, gap_rate_after=w2 - w1,
                  velocity_after=(w1, w2))
    return Reference((Event(ti, kind, velocity=-w),), values, state)


# ------------------------------------------------------------------------ friction with a spring

def coulomb_oscillator(m=1.0, k=100.0, normal_force=10.0, mu=0.2, v0=1.0, end=1.0, x0=0.0,
                       mu_static=None):
    """Two dofs (DX, DZ): a mass m on a spring k along X, pressed on a plane below it (normal
    -Z) by a constant ``normal_force`` N (resting in normal equilibrium, the normal force stays
    N), thrown at v0 along X from x0 (default 0), or released at rest from x0 when v0 = 0.
    Rigid Coulomb friction mu N, static coefficient ``mu_static`` (default mu): from rest the
    mass sticks while |k x| <= mu_s N. Each slide in the direction q = sign(x') is the
    oscillator

        m x'' + k x = -q mu N,   x = -q x_f + (x0 + q x_f) cos(w s) + (v0 / w) sin(w s),

    with x_f = mu N / k and w = sqrt(k / m), until x' returns to 0. The first slide stops where
    tan(w t1) = v0 / (w x_f), at x1 = -x_f + sqrt(x_f^2 + (v0 / w)^2); a slide from rest lasts
    pi / w and ends at -2 q x_f - x_n (each half period the amplitude loses 2 x_f). At a stop
    the mass stays stuck for good if |k x_n| <= mu N, else slides back at once.

    values: stop_times, stop_positions (tuples), rest (the final position, m), w; events
    "stick" at each stop and "slip" where a slide starts from rest. State: x, x' along X (one
    column; the normal displacement is -N / kc, constant).

    >>> from scipy.integrate import solve_ivp
    >>> ref = coulomb_oscillator()
    >>> t1 = ref.values["stop_times"][0]
    >>> bool(abs(t1 - np.arctan(1.0 / (10.0 * 0.02)) / 10.0) < 1e-15)
    True
    >>> def stopped(t, y):
    ...     return y[1]
    >>> stopped.terminal, stopped.direction = True, -1
    >>> sol = solve_ivp(lambda t, y: [y[1], -100.0 * y[0] - 2.0], (0.0, 1.0), [0.0, 1.0],
    ...                 method="DOP853", rtol=1e-12, atol=1e-15, events=stopped)
    >>> bool(abs(sol.t_events[0][0] - t1) < 1e-11)
    True
    >>> bool(abs(sol.y_events[0][0][0] - ref.values["stop_positions"][0]) < 1e-12)
    True
    >>> [e.kind for e in ref.events]
    ['stick', 'slip', 'stick', 'slip', 'stick']
    """
    w = np.sqrt(k / m)
    mus = mu if mu_static is None else mu_static
    t, x, v = 0.0, float(x0), float(v0)
    events, pieces = [], _Pieces()
    stops, positions = [], []
    if v == 0.0:
        if abs(k * x) <= mus * normal_force:
            pieces.add(0.0, lambda s, x0=x: x0 + 0.0 * s, lambda s: 0.0 * s)
            t = end
        else:
            events.append(Event(0.0, "slip"))
            v = -1e-300 if x > 0 else 1e-300
    while t < end:
        q = 1.0 if v > 0 else -1.0
        xs, vs = oscillator(m, 0.0, k, -q * mu * normal_force, x, v)
        pieces.add(t, xs, vs)
        # the slide ends where q x' falls to 0, within half a period
        s = first_crossing(lambda s: q * vs(s), np.pi / w * (1 + 1e-9), rising=False)
        t, x = t + s, float(xs(s))
        stops.append(t)
        positions.append(x)
        events.append(Event(t, "stick"))
        if abs(k * x) <= mus * normal_force:
            pieces.add(t, lambda s, x0=x: x0 + 0.0 * s, lambda s: 0.0 * s)
            break
        events.append(Event(t, "slip"))
        v = -1e-300 if x > 0 else 1e-300       # from rest, towards the spring's equilibrium
    values = dict(stop_times=tuple(stops), stop_positions=tuple(positions), rest=x, w=w)
    return Reference(tuple(events), values, pieces)


# ------------------------------------------------------------------------ impacts with springs

def impact_oscillators(m1=1.0, k1=100.0, m2=2.0, k2=800.0, v1=1.0, v2=-0.5, gap=0.02,
                       restitution=0.8, end=0.8):
    """Two masses on springs to the ground along one line (dofs x1, x2, both from 0 with
    velocities v1, v2), the gap r = gap + x2 - x1 >= 0 (an impact link). Between impacts each
    mass is its own oscillator x_i(s) = x_i cos(w_i s) + (v_i / w_i) sin(w_i s); an impact is
    where r falls to 0 (brentq on the scan of r), and Newton's law with momentum conserved
    gives the velocities after it (as :func:`impact_pair`). Contacts that would stick
    (approach speeds below 1e-6 m/s) are not modelled: the scenario must not have any.

    values: impact_times, gap_rate_before, gap_rate_after (tuples, r' in m/s); events
    "impact" with the velocity r' before. State: (x1, x2) and (v1, v2).

    Momentum and Newton's law at the first impact:

    >>> ref = impact_oscillators()
    >>> t = ref.values["impact_times"][0]
    >>> x, v = ref.state(np.array([t - 1e-9, t]))
    >>> bool(abs((x[1, 1] - x[1, 0]) + 0.02) < 1e-12)
    True
    >>> bool(abs(ref.values["gap_rate_after"][0] + 0.8 * ref.values["gap_rate_before"][0])
    ...      < 1e-15)
    True
    >>> bool(abs(v[1] @ [1.0, 2.0] - v[0] @ [1.0, 2.0]) < 1e-6)   # over 1 ns of spring force
    True
    """
    w = np.sqrt([k1 / m1, k2 / m2])
    mass = np.array([m1, m2])
    t, x, v = 0.0, np.zeros(2), np.array([v1, v2], float)
    times, before, after, events = [], [], [], []
    starts, phases = [], []

    def flight(x0, v0):
        def xs(s):
            s = np.asarray(s, float)[..., None]
            return x0 * np.cos(w * s) + v0 / w * np.sin(w * s)

        def vs(s):
            s = np.asarray(s, float)[..., None]
            return -x0 * w * np.sin(w * s) + v0 * np.cos(w * s)
        return xs, vs

    window = np.pi / w.max()
    while t < end:
        xs, vs = flight(x.copy(), v.copy())
        starts.append(t)
        phases.append((xs, vs))

        def closing(s):
            y = xs(s)
            return -(gap + y[..., 1] - y[..., 0])
        s, base = None, 0.0
        while s is None and t + base < end:
            span = min(window, end - t - base)
            found = first_crossing(lambda u: closing(base + u), span)
            s = None if found is None else base + found
            base += span
        if s is None:
            break
        t = t + s
        x, v = xs(s), vs(s)
        w_rel = v[0] - v[1]
        if w_rel < 1e-6:
            raise ValueError("a sticking contact: not modelled here")
        vc = mass @ v / mass.sum()
        e = restitution
        v = np.array([vc - m2 / mass.sum() * e * w_rel, vc + m1 / mass.sum() * e * w_rel])
        times.append(t)
        before.append(-w_rel)
        after.append(v[1] - v[0])
        events.append(Event(t, "impact", velocity=-w_rel))

    def state(times_):
        times_ = np.asarray(times_, float)
        index = np.clip(np.searchsorted(starts, times_, side="right") - 1, 0, len(starts) - 1)
        xo, vo = np.empty((len(times_), 2)), np.empty((len(times_), 2))
        for i in np.unique(index):
            sel = index == i
            xo[sel] = phases[i][0](times_[sel] - starts[i])
            vo[sel] = phases[i][1](times_[sel] - starts[i])
        return xo, vo
    values = dict(impact_times=tuple(times), gap_rate_before=tuple(before),
                  gap_rate_after=tuple(after))
    return Reference(tuple(events), values, state)


# ------------------------------------------------------------------------------------------
# acceleration records (the validation studies' ground motions)
def record_motion(rt, ra, t) -> tuple[np.ndarray, np.ndarray]:
    """The displacement and velocity at times t of a piecewise-linear acceleration record
    (points rt, ra; zero after its last point) integrated twice in closed form from rest."""
    h = np.diff(rt)
    slope = np.diff(ra) / h
    v = np.concatenate([[0.0], np.cumsum(h * (ra[:-1] + ra[1:]) / 2)])
    u = np.concatenate([[0.0], np.cumsum(h * v[:-1] + h ** 2 * (ra[:-1] / 2 + slope * h / 6))])
    k = np.clip(np.searchsorted(rt, t, "right") - 1, 0, len(rt) - 1)
    s = np.append(slope, 0.0)[k]
    dt = np.asarray(t) - rt[k]
    return (u[k] + v[k] * dt + ra[k] * dt ** 2 / 2 + s * dt ** 3 / 6,
            v[k] + ra[k] * dt + s * dt ** 2 / 2)


class Record:
    """A record as a function of time: linear between its points, its last value after them
    (a function's right = "constant"); plain floats, for a right-hand side called often."""

    def __init__(self, t, a):
        self.t, self.a = list(map(float, t)), list(map(float, a))

    def __call__(self, t: float) -> float:
        k = bisect.bisect_right(self.t, t) - 1
        if k >= len(self.t) - 1:
            return self.a[-1]
        t0, t1, a0, a1 = self.t[k], self.t[k + 1], self.a[k], self.a[k + 1]
        return a0 + (a1 - a0) * (t - t0) / (t1 - t0)
