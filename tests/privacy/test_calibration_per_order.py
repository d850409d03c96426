"""The per-order calibration search of ``calibrate_sampled_gaussian`` (issue 18) is conservative:
never a smaller noise multiplier than an exhaustive search on the full order grid, and within
budget by dp-accounting's own RDP accountant."""

import math
import warnings

import numpy as np
import pytest

from dpsco_core.exceptions import OrderGridWarning
from dpsco_core.privacy import DEFAULT_RDP_ORDERS, calibrate_sampled_gaussian
from dpsco_core.privacy import calibration as cal
from dpsco_core.privacy.conversions import _rdp_to_epsilon
from dpsco_core.privacy.rdp import _sampled_gaussian_curve

dpa = pytest.importorskip("dp_accounting")

ORDERS = tuple(float(a) for a in DEFAULT_RDP_ORDERS)
GRID = np.array(ORDERS)


def _configs():
    rng = np.random.default_rng(18)
    out = [(256 / 45312, 177, 1.0, 1 / 45312 ** 2, "improved"),
           (256 / 45312, 8850, 1.0, 1 / 45312 ** 2, "improved"),
           (0.2, 50, 8.0, 1e-5, "improved"), (0.5, 3, 20.0, 1e-5, "mironov")]
    for _ in range(26):
        q = float(10 ** rng.uniform(-4.5, -0.3))
        steps = int(10 ** rng.uniform(0, 5))
        eps = float(10 ** rng.uniform(-1, 1.2))
        delta = float(10 ** rng.uniform(-12, -4))
        out.append((q, steps, eps, delta, ["improved", "mironov"][rng.integers(2)]))
    return out


def _full_epsilon(q, s, steps, delta, conversion):
    return _rdp_to_epsilon(GRID, steps * _sampled_gaussian_curve(q, s, ORDERS), delta,
                           conversion)[0]


def _exhaustive(q, steps, eps, delta, conversion):
    """Smallest s (relative 1e-13) with full-grid epsilon <= eps, by bisection."""
    hi = 1.0
    while _full_epsilon(q, hi, steps, delta, conversion) > eps:
        hi *= 2.0
    lo = hi / 2.0
    while _full_epsilon(q, lo, steps, delta, conversion) <= eps:
        hi, lo = lo, lo / 2.0
    while hi - lo > 1e-13 * hi:
        mid = 0.5 * (lo + hi)
        if _full_epsilon(q, mid, steps, delta, conversion) <= eps:
            hi = mid
        else:
            lo = mid
    return hi


@pytest.mark.parametrize("q, steps, eps, delta, conversion", _configs())
def test_per_order_search_is_conservative(q, steps, eps, delta, conversion):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        s = calibrate_sampled_gaussian(target_epsilon=eps, target_delta=delta, sample_rate=q,
                                       steps=steps, conversion=conversion)
        # the previous search (Brent's method on the full grid) on the same arguments
        brent, _ = cal._calibrate_decreasing(
            lambda x: _rdp_to_epsilon(GRID, steps * _sampled_gaussian_curve(q, x, ORDERS),
                                      delta, conversion),
            eps, 1e-6, cal.MAX_NOISE_MULTIPLIER, "test")
    exact = _exhaustive(q, steps, eps, delta, conversion)
    achieved = _full_epsilon(q, s, steps, delta, conversion)
    assert eps - 1e-6 <= achieved <= eps
    # never less noise than the exact search; the computed epsilon is monotone in s only up
    # to its rounding (1e-13 relative), so the bisection's end is itself known to that
    # precision (what makes s safe is the line above: the accountant's epsilon at s)
    assert s >= exact * (1.0 - 1e-12)
    assert s == pytest.approx(brent, rel=1e-5)         # and as tight as the previous search
    if conversion == "improved":                       # dp-accounting's accountant agrees
        acc = dpa.rdp.RdpAccountant(list(ORDERS))
        acc.compose(dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), steps))
        assert acc.get_epsilon(delta) <= eps


def test_fallback_when_no_integer_order_can_meet_the_target():
    # delta so small that no order up to 1024 reaches epsilon 0.01: the search declines and
    # the full-grid search raises PrivacyBudgetError as before
    from dpsco_core.exceptions import PrivacyBudgetError
    with pytest.raises(PrivacyBudgetError):
        calibrate_sampled_gaussian(target_epsilon=0.01, target_delta=1e-300, sample_rate=0.01,
                                   steps=10)
    assert cal._per_order_search(0.01, 1e-300, 0.01, 10, ORDERS, "improved", 1e-6, 1e6,
                                 1.0) is None
    assert math.isfinite(cal._sampled_gaussian_start(1.0, 1e-5, 0.01, 10, 1e6))
