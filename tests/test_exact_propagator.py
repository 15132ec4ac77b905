"""The exact propagator against closed-form solutions."""

import numpy as np
import pytest

from fem.exact.propagator import Propagator, polynomial_coefficients


def oscillator(m, c, k):
    A = np.array([[0.0, 1.0], [-k / m, -c / m]])
    E = np.array([[0.0], [1.0 / m]])
    return A, E


def test_free_fall_with_gravity_is_exact():
    """z'' = -g: A is nilpotent (no eigenbasis); z(t) = z0 + v0 t - g t^2 / 2 exactly."""
    g, z0, v0 = 10.0, 0.0, -1.0
    prop = Propagator(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]), degree=0)
    z = np.array([z0, v0])
    t = 0.0
    for h in (0.1, 0.25, 0.03, 0.54031242374328 - 0.38):
        z = prop.state(z, np.array([[-g]]), h)
        t += h
        assert z[0] == pytest.approx(z0 + v0 * t - g * t * t / 2, abs=1e-15)
        assert z[1] == pytest.approx(v0 - g * t, abs=1e-15)


def test_ramp_force_on_a_damped_oscillator():
    """m x'' + c x' + k x = F s (a ramp, degree 1): exact against the closed form."""
    m, c, k, F = 2.0, 0.6, 50.0, 3.0
    A, E = oscillator(m, c, k)
    prop = Propagator(A, E, degree=1)
    h, z = 0.01, np.zeros(2)
    wn = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - zeta ** 2)
    for n in range(200):
        t0 = n * h
        coefficients = np.array([[F * t0], [F]])          # w(t0 + s) = F t0 + F s
        z = prop.state(z, coefficients, h)
    t = 200 * h
    # particular solution of x'' + 2 zeta wn x' + wn^2 x = (F/m) t: x_p = F/k (t - 2 zeta / wn)
    xp0, vp0 = -F / k * 2 * zeta / wn, F / k
    a = -xp0
    b = (-vp0 + zeta * wn * a) / wd
    exact = F / k * (t - 2 * zeta / wn) + np.exp(-zeta * wn * t) * (a * np.cos(wd * t) + b * np.sin(wd * t))
    assert z[0] == pytest.approx(exact, rel=1e-12)


def test_sine_force_by_polynomial_steps():
    """Undamped oscillator under F sin(W t): degree-8 polynomials on steps of W h = 0.16
    reproduce the closed form to round-off."""
    m, k, F, W = 156.0, 2e6, 3000.0, 2 * np.pi * 5
    A, E = oscillator(m, 0.0, k)
    prop = Propagator(A, E, degree=8)
    h, z = 0.005, np.zeros(2)
    force = lambda t: (F * np.sin(W * t))[:, None]
    worst = 0.0
    for n in range(400):
        coefficients, error = polynomial_coefficients(force, n * h, h, 8)
        worst = max(worst, error)
        z = prop.state(z, coefficients, h)
    t = 400 * h
    w = np.sqrt(k / m)
    exact = F / (k - m * W ** 2) * (np.sin(W * t) - W / w * np.sin(w * t))
    assert worst < 1e-12
    assert z[0] == pytest.approx(exact, rel=1e-9, abs=1e-15)
    # the state anywhere inside a step, and its rate
    z_mid = prop.state(np.zeros(2), polynomial_coefficients(force, 0.0, h, 8)[0], h / 3)
    t = h / 3
    assert z_mid[0] == pytest.approx(F / (k - m * W ** 2) * (np.sin(W * t) - W / w * np.sin(w * t)),
                                     rel=1e-9)


def test_falling_mass_on_elastic_ground_event_times():
    """V1a by phases: free fall, contact (spring k below z = -2), free flight. Impact at
    (sqrt(41) - 1)/10 s, detachment at 0.885456153076 s (closed form), to 1e-12 s."""
    from fem.exact.events import first_event

    m, g, k, ground = 1.0, 10.0, 100.0, -2.0
    free = Propagator(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]), degree=0)
    contact = Propagator(np.array([[0.0, 1.0], [-k / m, 0.0]]), np.array([[0.0], [1.0]]), degree=0)
    gap_row, gap_offset = np.array([[1.0, 0.0]]), np.array([-ground])     # gap = z + 2
    z, t = np.array([0.0, -1.0]), 0.0
    # free fall, steps of 0.1 s until the gap closes
    while True:
        ev = first_event(free, z, np.array([[-g]]), 0.1, gap_row, gap_offset, np.array([-1]))
        if ev is not None:
            t, z = t + ev.s, ev.state
            break
        z, t = free.state(z, np.array([[-g]]), 0.1), t + 0.1
    assert t == pytest.approx((np.sqrt(41) - 1) / 10, abs=1e-12)
    # contact: z'' = -g + k (ground - z) / m, until the gap opens again
    force = np.array([[-g + k * ground / m]])
    while True:
        ev = first_event(contact, z, force, 0.05, gap_row, gap_offset, np.array([+1]))
        if ev is not None:
            t, z = t + ev.s, ev.state
            break
        z, t = contact.state(z, force, 0.05), t + 0.05
    assert t == pytest.approx(0.885456153076, abs=1e-12)
    # independent check of the closed form: tan(w t~/2) = w^2 C1 / g with t~ = t - t_c
    w = np.sqrt(k / m)
    tc = (np.sqrt(41) - 1) / 10
    C1 = -np.sqrt(1.0 + 2 * g * 2.0) / w          # -sqrt(V0^2 + 2 g h) / w, h = 2 m of fall
    assert t - tc == pytest.approx(2 * (np.pi + np.arctan(w ** 2 * C1 / g)) / w, abs=1e-12)
