"""RDP curves: closed forms, dp-accounting, and a high-precision (mpmath) reference."""

import numpy as np
import pytest

from dpsco_core.privacy import (
    DEFAULT_RDP_ORDERS,
    SampledGaussianRdp,
    rdp_gaussian,
    rdp_laplace,
    rdp_pure,
    rdp_sampled_gaussian,
    rdp_zcdp,
)

R = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
mp = pytest.importorskip("mpmath")

ORDERS = np.array(DEFAULT_RDP_ORDERS)


@pytest.mark.parametrize("q, s, alpha, expected", [
    (0.01, 1.0, 8, 8.936439e-4),
    (256 / 60000, 1.1, 9, 1.116473e-4),
    (0.1, 2.0, 20, 0.1883136),
])
def test_sampled_gaussian_reference_values(q, s, alpha, expected):
    # note 002, section 5.3 (values computed with dp-accounting to 8 digits)
    got = rdp_sampled_gaussian(q, s, [alpha])[0]
    assert got == pytest.approx(expected, rel=1e-6)


def test_default_orders_are_dp_accountings():
    assert np.array_equal(ORDERS, np.array(R.DEFAULT_RDP_ORDERS, dtype=float))


@pytest.mark.parametrize("q", [256 / 60000, 0.01, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("s", [0.8, 1.1, 2.0, 5.0])
def test_sampled_gaussian_matches_dp_accounting(q, s):
    ours = rdp_sampled_gaussian(q, s, ORDERS)
    ref = R._compute_rdp_poisson_subsampled_gaussian(q, s, ORDERS)
    # dp-accounting marks an order whose fractional series did not converge as inf: so do we.
    assert np.array_equal(np.isinf(ours), np.isinf(ref))
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-6, atol=0)
    # and never below it (we keep every computed term of the series)
    assert np.all(ours[fin] >= ref[fin] * (1 - 1e-15))


@pytest.mark.parametrize("q, s", [(1e-4, 0.5), (1e-4, 20.0)])
def test_sampled_gaussian_tiny_rdp_is_never_below_dp_accounting(q, s):
    # Where the per-step RDP is tiny (~1e-7) dp-accounting's stopping rule (relative to A, not
    # to A - 1) drops a tail worth up to ~3e-5 of the RDP; we keep it.
    ours = rdp_sampled_gaussian(q, s, ORDERS)
    ref = R._compute_rdp_poisson_subsampled_gaussian(q, s, ORDERS)
    fin = np.isfinite(ref)
    assert np.all(ours[fin] >= ref[fin] * (1 - 1e-15))
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-4)


@pytest.mark.parametrize("s", [0.7, 1.0, 3.0])
def test_sampled_gaussian_at_q_one_is_gaussian(s):
    np.testing.assert_allclose(rdp_sampled_gaussian(1.0, s, ORDERS), ORDERS / (2 * s * s),
                               rtol=1e-11)


def _exact_log_a(q, s, alpha):
    """A_alpha = E_{z ~ N(0, s^2)} [((1 - q) + q exp((2z - 1) / (2 s^2)))^alpha] by quadrature."""
    mp.mp.dps = 40
    q, s, alpha = mp.mpf(q), mp.mpf(s), mp.mpf(alpha)

    def f(z):
        return mp.npdf(z, 0, s) * ((1 - q) + q * mp.exp((2 * z - 1) / (2 * s * s))) ** alpha

    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    a = mp.quad(f, [-mp.inf, -20 * s, 0, z0, z0 + 20 * s, mp.inf])
    return mp.log(a) / (alpha - 1)


@pytest.mark.parametrize("q, s, alpha, rel", [
    (0.01, 1.0, 8.5, 1e-5),        # fractional order, series nearly exact
    (256 / 60000, 1.1, 2.5, 2e-4),  # fractional: |binomial| series is an upper bound
    (0.1, 2.0, 1.5, 0.5),          # small fractional order: bound is loose, still above
    (0.01, 1.0, 8, 1e-9),          # integer order: exact binomial expansion
    (256 / 60000, 1.1, 32, 1e-9),
])
def test_sampled_gaussian_against_mpmath(q, s, alpha, rel):
    exact = float(_exact_log_a(q, s, alpha))
    got = rdp_sampled_gaussian(q, s, [alpha])[0]
    assert got >= exact * (1 - 1e-12)  # an upper bound: conservative
    assert got <= exact * (1 + rel)


def test_evaluator_reuse_matches_fresh_computation():
    curve = SampledGaussianRdp(0.01, ORDERS)
    for s in (0.6, 1.3, 4.0, 1.3):
        np.testing.assert_array_equal(curve(s), rdp_sampled_gaussian(0.01, s, ORDERS))


def test_curves_are_decreasing_in_noise():
    a = rdp_sampled_gaussian(0.02, 0.9, ORDERS)
    b = rdp_sampled_gaussian(0.02, 1.0, ORDERS)
    fin = np.isfinite(a)
    assert np.all(b[fin] <= a[fin])


@pytest.mark.parametrize("b", [0.3, 1.0, 10.0])
def test_laplace_matches_dp_accounting(b):
    orders = np.concatenate([[1.01, 1.05], ORDERS])
    ref = np.array([R._laplace_rdp(1 / b, a) for a in orders])
    np.testing.assert_allclose(rdp_laplace(b, orders), ref, rtol=1e-10)
    assert np.all(rdp_laplace(b, orders) <= (1 / b) * (1 + 1e-11))  # pure DP caps every order


def test_laplace_against_mpmath():
    # D_alpha(Lap(0, b) || Lap(1, b)) by quadrature, b = 1, alpha = 3.5
    mp.mp.dps = 30
    b, alpha = mp.mpf(1), mp.mpf("3.5")

    def f(x):
        p = mp.exp(-abs(x) / b) / (2 * b)
        r = mp.exp(-abs(x - 1) / b) / (2 * b)
        return p ** alpha * r ** (1 - alpha)

    exact = mp.log(mp.quad(f, [-mp.inf, 0, 1, mp.inf])) / (alpha - 1)
    assert rdp_laplace(1.0, [3.5])[0] == pytest.approx(float(exact), rel=1e-10)


def test_gaussian_pure_and_zcdp_closed_forms():
    np.testing.assert_allclose(rdp_gaussian(2.0, ORDERS), ORDERS / 8, rtol=1e-11)
    np.testing.assert_allclose(rdp_pure(0.5, ORDERS), np.minimum(0.5, ORDERS * 0.125),
                               rtol=1e-11)
    np.testing.assert_allclose(rdp_zcdp(0.2, ORDERS), 0.2 * ORDERS, rtol=1e-11)


def test_inputs_are_not_modified():
    orders = np.array([2.0, 3.5, 8.0])
    copy = orders.copy()
    rdp_sampled_gaussian(0.01, 1.0, orders)
    rdp_laplace(1.0, orders)
    assert np.array_equal(orders, copy)
