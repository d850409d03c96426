"""Closed-form Gaussian-smoothed losses against quadrature, Monte Carlo and ReSQue (note 12.3)."""

import math

import numpy as np
import pytest
from scipy import integrate

from dpsco_core import resque, smoothing


def _quad_1d(f, rho):
    """E f(rho Z), Z ~ N(0, 1), by quadrature."""
    pdf = lambda t: math.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)   # noqa: E731
    return integrate.quad(lambda t: f(rho * t) * pdf(t), -12, 12, limit=200, points=[0])[0]


@pytest.mark.parametrize("x", [-0.7, -0.05, 0.0, 0.3])
def test_one_dimensional_forms_by_quadrature(x):
    rho = 0.2
    a, yb = np.array([[1.5]]), np.array([1.0])
    val, grad = smoothing.smoothed_l1(np.array([x]), rho)
    assert val == pytest.approx(_quad_1d(lambda z: abs(x + z), rho), abs=1e-7)
    assert grad[0] == pytest.approx(_quad_1d(lambda z: np.sign(x + z), rho), abs=1e-7)
    val, grad = smoothing.smoothed_hinge(np.array([x]), a, yb, rho)
    assert val == pytest.approx(_quad_1d(lambda z: max(0.0, 1 - 1.5 * (x + z)), rho), abs=1e-7)
    val, grad = smoothing.smoothed_absolute(np.array([x]), a, np.array([0.2]), rho)
    assert val == pytest.approx(_quad_1d(lambda z: abs(1.5 * (x + z) - 0.2), rho), abs=1e-7)
    assert grad[0] == pytest.approx(
        _quad_1d(lambda z: 1.5 * np.sign(1.5 * (x + z) - 0.2), rho), abs=1e-7)


def test_quadratic_linear_and_sandwich():
    x = np.array([0.3, -1.0, 2.0])
    v, g = smoothing.smoothed_quadratic(x, 0.5)
    assert v == pytest.approx(0.5 * x @ x + 0.5 * 0.25 * 3)
    np.testing.assert_array_equal(g, x)
    v, g = smoothing.smoothed_linear(x, np.ones(3), 0.5)
    assert v == pytest.approx(x.sum())
    rs = np.random.default_rng(0)
    A, b = rs.standard_normal((20, 3)), rs.standard_normal(20)
    for _ in range(5):
        z = rs.standard_normal(3)
        f = np.mean(np.abs(A @ z - b))
        fs, _ = smoothing.smoothed_absolute(z, A, b, 0.1)
        L = np.mean(np.linalg.norm(A, axis=1))
        assert f <= fs <= f + smoothing.smoothing_error_bound(L, 0.1, 3) + 1e-12


@pytest.mark.statistical
@pytest.mark.parametrize("kind", ["hinge", "absolute", "l1"])
def test_resque_unbiased_for_closed_forms(kind):
    """E ReSQue(x) = grad f_rho(x) for a centre xbar != x (Lemma 1), within 5 standard errors."""
    d, rho, N = 5, 0.3, 200_000
    rs = np.random.default_rng(1)
    A, y = rs.standard_normal((8, d)), np.sign(rs.standard_normal(8))
    center = 0.1 * rs.standard_normal(d)
    x = center + 0.6 * rho * rs.standard_normal(d) / math.sqrt(d)
    if kind == "hinge":
        sub = lambda Z: (-(y * (1 - y * (Z @ A.T) > 0)) @ A) / 8      # noqa: E731
        _, truth = smoothing.smoothed_hinge(x, A, y, rho)
    elif kind == "absolute":
        sub = lambda Z: (np.sign(Z @ A.T - y) @ A) / 8                 # noqa: E731
        _, truth = smoothing.smoothed_absolute(x, A, y, rho)
    else:
        sub = np.sign
        _, truth = smoothing.smoothed_l1(x, rho)
    zeta = resque.draw_resque_samples(N, d, random_state=2)
    G = sub(center + rho * zeta)
    w = np.exp(resque.resque_log_weights(x, center, rho, zeta))
    est = resque.resque_estimate(x, center, rho, zeta, G)
    se = (w[:, None] * G).std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(est - truth) <= 5 * se)
