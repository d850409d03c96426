"""The calibration path of dp_sgd (issue 18): integer orders first, a closed-form start, the
shared RDP evaluator and the per-configuration memo. Speed is measured in bench/, never here;
these tests check that the fast path keeps the guarantee and the contract of the search."""

import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.privacy import calibration as cal
from dpsco_core.privacy import rdp
from dpsco_core.privacy.accountants import DEFAULT_RDP_ORDERS
from dpsco_core.privacy.conversions import _rdp_to_epsilon
from dpsco_core.privacy.events import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
from dpsco_core.privacy.report import PrivacyReport
from dpsco_core.solvers import dp_sgd

ORDERS = np.asarray(DEFAULT_RDP_ORDERS, dtype=float)
TOL = 1e-6


def _clear():
    cal._sampled_gaussian_multiplier.cache_clear()
    rdp._sampled_gaussian_curve.cache_clear()
    rdp._sampled_gaussian_evaluator.cache_clear()


@pytest.mark.parametrize("q", [0.004, 0.3])
@pytest.mark.parametrize("sigma", [0.6, 2.0, 40.0])
def test_integer_only_evaluation_is_bitwise_the_full_one_at_integer_orders(q, sigma):
    curve = rdp.SampledGaussianRdp(q, ORDERS)
    full = curve._evaluate(sigma)
    ints = curve._evaluate(sigma, integer_only=True)
    is_int = ORDERS == np.floor(ORDERS)
    np.testing.assert_array_equal(ints[is_int], full[is_int])
    assert np.all(np.isinf(ints[~is_int]))


def test_shared_evaluator_is_bitwise_a_fresh_one_after_any_extension():
    # The shared evaluator extends its series tables lazily; a small sigma extends them
    # further first, and the values at another sigma must not change.
    _clear()
    q, orders = 0.02, tuple(DEFAULT_RDP_ORDERS)
    for sigma in (0.3, 5.0, 0.45, 1.3):
        shared = rdp._shared_evaluate(q, orders, sigma)
        fresh = rdp.SampledGaussianRdp(q, ORDERS)._evaluate(sigma)
        np.testing.assert_array_equal(shared, fresh)


def _reference_search(eps, delta, q, steps):
    """The full-grid Brent search from start 1 (the calibration before issue 18)."""
    curve = rdp.SampledGaussianRdp(q, ORDERS)
    return cal._calibrate_decreasing(
        lambda s: _rdp_to_epsilon(ORDERS, steps * curve._evaluate(s), delta, "improved"),
        eps, TOL, cal.MAX_NOISE_MULTIPLIER, "reference")[0]


# eps = 1: an integer order is optimal (one check of the full grid); eps = 8: a fractional
# order (2.7 to 5.9) is, and the full grid is searched below the integer answer.
@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("q, steps, delta", [(256 / 45312, 177, 1 / 45312 ** 2),
                                             (0.016, 3125, 1e-6), (0.256, 4, 1e-6),
                                             (1.6e-5, 62500, 1e-12)])
def test_calibration_meets_its_contract_on_the_full_grid(eps, q, steps, delta):
    _clear()
    s = cal.calibrate_sampled_gaussian(target_epsilon=eps, target_delta=delta, sample_rate=q,
                                       steps=steps)
    report = PrivacyReport.from_event(
        SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps), delta=delta)
    assert eps - TOL <= report.epsilon <= eps
    # the same answer as the full-grid search, to the precision its contract implies
    assert s == pytest.approx(_reference_search(eps, delta, q, steps), rel=1e-5)


@pytest.mark.parametrize("eps, delta, q, steps", [(1.0, 1e-5, 1.0, 10), (1e-3, 1e-300, 0.5, 1),
                                                  (500.0, 0.5, 1e-9, 10 ** 9),
                                                  (1.0, 1e-5, 1e-300, 1)])
def test_closed_form_start_is_a_finite_positive_number(eps, delta, q, steps):
    start = cal._sampled_gaussian_start(eps, delta, q, steps, cal.MAX_NOISE_MULTIPLIER)
    assert math.isfinite(start) and 0.0 < start <= cal.MAX_NOISE_MULTIPLIER


def test_a_repeated_configuration_reuses_the_calibration():
    # cached per configuration: keyed on the public inputs (epsilon, delta, q, steps, orders,
    # conversion), never on the data
    X = np.random.default_rng(0).standard_normal((200, 5))
    y = np.sign(X[:, 0])
    first = dp.Problem(X, y, loss="logistic", penalty=dp.L2(0.01), bounds=(-4.0, 4.0))
    other = dp.Problem(-X, y, loss="logistic", penalty=dp.L2(0.01), bounds=(-4.0, 4.0))
    _clear()
    a = dp_sgd(first, epsilon=1.0, delta=1e-5, passes=1, batch_size=20, random_state=0)
    misses = cal._sampled_gaussian_multiplier.cache_info().misses
    b = dp_sgd(other, epsilon=1.0, delta=1e-5, passes=1, batch_size=20, random_state=1)
    info = cal._sampled_gaussian_multiplier.cache_info()
    assert info.misses == misses and info.hits >= 1
    assert a.stats["noise_multiplier"] == b.stats["noise_multiplier"]
    assert a.privacy.epsilon == b.privacy.epsilon <= 1.0
