"""Gaussian DP: exact conversion, inversions, the analytic Gaussian mechanism (note 003, 19-20)."""

import math

import pytest

from dpsco_core.privacy import (
    calibrate_analytic_gaussian,
    calibrate_gaussian,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
)

mp = pytest.importorskip("mpmath")


def _exact_delta(mu, eps):
    mp.mp.dps = 60
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps, delta, mu", [
    (1.0, 1e-5, 0.2681), (4.0, 1e-5, 0.9249), (8.0, 1e-5, 1.6660), (1.0, 1e-8, 0.1961),
])
def test_oracle_19_regression_values(eps, delta, mu):
    got = gdp_mu(eps, delta)
    assert round(got, 4) == mu
    # delta(eps; mu_exact) reproduces the target to 1e-8 relative, and never exceeds it
    assert gdp_delta(got, eps) == pytest.approx(delta, rel=1e-8)
    assert gdp_delta(got, eps) <= delta


def test_oracle_20_classical_formula_guard():
    eps = 2 * math.sqrt(2 * math.log(1.25e5))
    assert eps == pytest.approx(9.69, abs=5e-3)
    assert gdp_delta(2.0, eps) == pytest.approx(1.94e-5, rel=5e-3)
    assert gdp_delta(2.0, eps) > 1e-5
    # the library's own calibration keeps delta at the target there
    assert gdp_mu(eps, 1e-5) < 2.0


@pytest.mark.parametrize("mu, eps", [
    (0.01, 0.05), (0.1, 3.0), (1.0, 30.0), (0.3, 10.0), (0.5, 40.0), (3.0, 0.0), (2.0, 9.69),
    (20.0, 5.0),
])
def test_delta_against_mpmath_even_in_the_far_tail(mu, eps):
    exact = float(_exact_delta(mu, eps))
    got = gdp_delta(mu, eps)
    assert got >= exact
    assert got == pytest.approx(exact, rel=1e-11)


@pytest.mark.parametrize("mu", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_epsilon_delta_round_trip(mu, delta):
    eps = gdp_epsilon(mu, delta)
    assert gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu, eps) == pytest.approx(delta, rel=1e-9)


def test_epsilon_zero_when_delta_is_large():
    assert gdp_epsilon(0.1, 0.5) == 0.0


@pytest.mark.parametrize("eps, delta, sensitivity", [(1.0, 1e-5, 1.0), (0.1, 1e-6, 2.0),
                                                      (8.0, 1e-9, 0.5)])
def test_analytic_gaussian_defining_inequality(eps, delta, sensitivity):
    # Balle and Wang (2018), Theorem 8, checked directly in high precision
    sigma = calibrate_analytic_gaussian(target_epsilon=eps, target_delta=delta,
                                        sensitivity=sensitivity)

    def delta_at(s):
        mp.mp.dps = 50
        d, s, e = mp.mpf(sensitivity), mp.mpf(s), mp.mpf(eps)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)

    assert delta_at(sigma) <= delta
    assert delta_at(sigma * (1 - 1e-8)) > delta * (1 - 1e-6)  # tight
    assert delta_at(0.99 * sigma) > delta


def test_gdp_calibration_of_composed_gaussians():
    s = calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=100, accountant="gdp")
    assert s == pytest.approx(10 / gdp_mu(1.0, 1e-5), rel=1e-12)
    assert gdp_delta(10 / s, 1.0) <= 1e-5
    # exact GDP never needs more noise than RDP
    assert s <= calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=100)
    # the same multiplier, times the sensitivity rounded up (its report is the same GDP one)
    sigma = calibrate_analytic_gaussian(target_epsilon=1.0, target_delta=1e-5, releases=100)
    assert s <= sigma == pytest.approx(s, rel=1e-12)


# Where the two terms of delta cancel (mu -> 0, small epsilon / mu^2), a plain evaluation loses
# the difference and understated delta (even returned 0 for mu < 1e-16). The bound carries the
# rounding error and is capped by mu phi(min(a, 0)): never below the exact value, tight.
@pytest.mark.parametrize("mu", [1e-300, 1e-20, 1e-16, 1e-12, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2])
@pytest.mark.parametrize("ratio", [0.0, 1e-3, 0.3, 0.5, 1.0, 3.0, 30.0])
def test_delta_never_understated_where_terms_cancel(mu, ratio):
    eps = ratio * mu  # epsilon / mu = ratio: delta ~ mu phi(ratio), both terms ~ Phi(-ratio)
    exact = float(_exact_delta(mu, eps))
    got = gdp_delta(mu, eps)
    assert got >= exact
    if exact > 1e-300:
        assert got <= 1.15 * exact


@pytest.mark.parametrize("mu, eps", [(1e-4, 1e-3), (1e-3, 0.05), (3e-3, 0.1), (1e-2, 0.5)])
def test_delta_small_mu_moderate_epsilon(mu, eps):
    # epsilon / mu^2 >= 1e3: the erfcx difference has few correct digits left
    exact = float(_exact_delta(mu, eps))
    got = gdp_delta(mu, eps)
    assert got >= exact
    assert got == pytest.approx(exact, rel=1e-8) or got <= 1.15 * exact


@pytest.mark.parametrize("eps, delta", [(1e-12, 1e-12), (1e-8, 0.5), (50.0, 1e-300),
                                        (1e-300, 1e-5), (1e3, 1e-10)])
def test_inversions_terminate_and_hold_on_extreme_inputs(eps, delta):
    mu = gdp_mu(eps, delta)
    assert mu > 0 and gdp_delta(mu, eps) <= delta
    assert gdp_delta(mu, gdp_epsilon(mu, delta)) <= delta


def test_special_function_error_bounds_hold():
    # the error constants of dpsco_core.privacy.gdp, re-measured on a sample
    from scipy import special

    from dpsco_core.privacy import gdp
    mp.mp.dps = 40
    for x in [0.0, 1e-12, 1e-6, 0.3, 1.0, 2.5, 7.0, 12.0, 38.0]:
        exact = mp.log(mp.ncdf(mp.mpf(x)))
        assert abs(float(mp.mpf(float(special.log_ndtr(x))) - exact)) <= gdp._LOG_NDTR_ABS_ERR
        exact = mp.log(mp.ncdf(mp.mpf(-x)))
        if x > 0:
            err = abs(float((mp.mpf(float(special.log_ndtr(-x))) - exact) / exact))
            assert err <= gdp._LOG_NDTR_REL_ERR
        exact = mp.exp(mp.mpf(x) ** 2) * mp.erfc(mp.mpf(x))
        err = abs(float((mp.mpf(float(special.erfcx(x))) - exact) / exact))
        assert err <= gdp._ERFCX_REL_ERR


@pytest.mark.parametrize("mu, eps", [(1e-300, 1e300), (1e300, 1e-300), (1e-300, 1e-300),
                                     (1e-10, 1.3407807929942597e154)])
def test_delta_extreme_arguments_do_not_raise(mu, eps):
    got = gdp_delta(mu, eps)
    assert 0.0 < got <= 1.0          # rounded up: never 0
    assert gdp_mu(1.3407807929942597e154, 0.5) > 0   # found by hypothesis (overflow of a^2)


def test_calibrate_gdp_multiplier_overflow_is_a_budget_error():
    """Review s19: s = sqrt(releases) / gdp_mu overflows at epsilon = delta = 1e-300 with
    2^62 releases; calibrate_gaussian(accountant='gdp') raised ValueError('GaussianDpEvent.
    noise_multiplier must be a finite number ...; got inf') instead of its documented
    PrivacyBudgetError naming the target."""
    from dpsco_core.exceptions import PrivacyBudgetError
    from dpsco_core.privacy import calibrate_gaussian

    with pytest.raises(PrivacyBudgetError, match="target_epsilon"):
        calibrate_gaussian(target_epsilon=1e-300, target_delta=1e-300, steps=2 ** 62,
                           accountant="gdp")
