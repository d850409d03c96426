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


def _forms(d=4, n=7, seed=3):
    """(name, value-and-gradient function, Lipschitz constant L) of each closed form."""
    rs = np.random.default_rng(seed)
    A, y, b = rs.standard_normal((n, d)), np.sign(rs.standard_normal(n)), rs.standard_normal(n)
    c = rs.standard_normal(d)
    row_norm = float(np.mean(np.linalg.norm(A, axis=1)))
    return [("linear", lambda x, r: smoothing.smoothed_linear(x, c, r), np.linalg.norm(c)),
            ("hinge", lambda x, r: smoothing.smoothed_hinge(x, A, y, r), row_norm),
            ("absolute", lambda x, r: smoothing.smoothed_absolute(x, A, b, r), row_norm),
            ("l1", smoothing.smoothed_l1, math.sqrt(d))]


@pytest.mark.parametrize("form", range(4))
def test_gradient_is_the_derivative_and_is_L_over_rho_lipschitz(form):
    """Central differences of the value match the gradient; ||grad(x) - grad(x')|| <=
    (L/rho)||x - x'|| (Fact 5, note 12.6)."""
    name, fn, L = _forms()[form]
    rho, h = 0.15, 1e-6
    rs = np.random.default_rng(form)
    for _ in range(4):
        x = 0.5 * rs.standard_normal(4)
        _, g = fn(x, rho)
        fd = np.array([(fn(x + h * e, rho)[0] - fn(x - h * e, rho)[0]) / (2 * h)
                       for e in np.eye(4)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7, err_msg=name)
        x2 = x + 0.05 * rs.standard_normal(4)
        assert np.linalg.norm(fn(x2, rho)[1] - g) <= L / rho * np.linalg.norm(x2 - x) + 1e-12


def test_glm_smoothing_bias_is_dimension_free():
    """0 <= f_rho - f <= L_l ||a|| rho sqrt(2/pi) per GLM row, whatever d (note 9): the bound is
    attained at a kink (u = 0) for the absolute loss."""
    rho = 0.1
    for d in (2, 50, 400):
        rs = np.random.default_rng(d)
        A = rs.standard_normal((5, d))
        A /= np.linalg.norm(A, axis=1, keepdims=True)
        y = np.sign(rs.standard_normal(5))
        for x in (np.zeros(d), rs.standard_normal(d) / math.sqrt(d)):
            bound = rho * math.sqrt(2 / math.pi)
            fa = np.mean(np.abs(A @ x - A @ x))
            fsa, _ = smoothing.smoothed_absolute(x, A, A @ x, rho)     # every residual at 0
            assert fsa - fa == pytest.approx(bound, rel=1e-12)
            fh = np.mean(np.maximum(0.0, 1 - y * (A @ x)))
            fsh, _ = smoothing.smoothed_hinge(x, A, y, rho)
            assert 0.0 <= fsh - fh <= bound
    assert smoothing.smoothing_error_bound(2.0, 0.1, 400) == pytest.approx(2.0 * 0.1 * 20)


def test_smoothing_bad_input():
    x = np.zeros(3)
    for rho in (0.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="smoothing_radius"):
            smoothing.smoothed_l1(x, rho)
        with pytest.raises(ValueError, match="smoothing_radius"):
            smoothing.smoothed_hinge(x, np.eye(3), np.ones(3), rho)
    with pytest.raises(ValueError, match=r"A must have shape \(n, 3\)"):
        smoothing.smoothed_absolute(x, np.eye(4), np.ones(4), 0.1)
    with pytest.raises(ValueError, match=r"y shape \(n,\)"):
        smoothing.smoothed_hinge(x, np.eye(3), np.ones(2), 0.1)
    with pytest.raises(ValueError, match="x must be 1-dimensional"):
        smoothing.smoothed_quadratic(np.zeros((2, 2)), 0.1)
    with pytest.raises(ValueError, match="lipschitz"):
        smoothing.smoothing_error_bound(0.0, 0.1, 3)


@pytest.mark.statistical
@pytest.mark.parametrize("kind", ["linear", "quadratic"])
def test_resque_unbiased_far_from_the_centre(kind):
    """E ReSQue(x) = grad f_rho(x) for linear and quadratic f with |x - xbar| = 1.2 rho (> rho:
    warns, the variance grows, the mean does not move; note 12.3), 5 standard errors."""
    d, rho, N = 4, 0.25, 200_000
    rs = np.random.default_rng(4)
    center = rs.standard_normal(d)
    x = center + 1.2 * rho * np.ones(d) / 2.0
    if kind == "linear":
        c = rs.standard_normal(d)
        sub = lambda Z: np.broadcast_to(c, Z.shape)      # noqa: E731
        _, truth = smoothing.smoothed_linear(x, c, rho)
    else:
        sub = lambda Z: Z                                 # noqa: E731
        _, truth = smoothing.smoothed_quadratic(x, rho)
    zeta = resque.draw_resque_samples(N, d, random_state=5)
    G = np.ascontiguousarray(sub(center + rho * zeta))
    with pytest.warns(resque.ReSQueWarning):
        w = np.exp(resque.resque_log_weights(x, center, rho, zeta))
        est = resque.resque_estimate(x, center, rho, zeta, G)
    se = (w[:, None] * G).std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(est - truth) <= 5 * se)


@pytest.mark.statistical
@pytest.mark.parametrize("loss", ["absolute", "hinge"])
@pytest.mark.parametrize("store", [True, False])
def test_glm_fast_path_unbiased_for_closed_forms(loss, store):
    """GLMReSQueBatch (one derivative and one row index per sample) estimates the gradient of
    the smoothed empirical risk (1/n) sum_s l_rho(<a_s, x>, b_s), within 5 standard errors."""
    d, n, rho, N = 5, 12, 0.2, 100_000
    rs = np.random.default_rng(6)
    A = rs.standard_normal((n, d)) / 2
    b = np.sign(rs.standard_normal(n)) if loss == "hinge" else rs.standard_normal(n)
    center = 0.2 * rs.standard_normal(d)
    x = center + 0.7 * rho * rs.standard_normal(d) / math.sqrt(d)
    smoothed = smoothing.smoothed_hinge if loss == "hinge" else smoothing.smoothed_absolute
    _, truth = smoothed(x, A, b, rho)
    batch = resque.GLMReSQueBatch(A, b, loss, center, rho, N, store_samples=store,
                                  random_state=8)
    est = batch.estimate(x)
    # the same seed draws the same rows and samples; keep them to compute the terms
    zeta = resque.GLMReSQueBatch(A, b, loss, center, rho, N, random_state=8).zeta
    w = np.exp(resque.resque_log_weights(x, center, rho, zeta))
    terms = (w * batch.coefs)[:, None] * A[batch.idx]
    np.testing.assert_allclose(est, terms.mean(axis=0), rtol=1e-10, atol=1e-12)
    assert np.all(np.abs(est - truth) <= 5 * terms.std(axis=0) / math.sqrt(N))
