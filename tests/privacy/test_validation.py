"""Bad input raises ValueError/TypeError naming the argument; inputs are never modified."""

import math

import pytest

from dpsco_core.privacy import (
    GaussianDpEvent,
    PoissonSampledDpEvent,
    RdpAccountant,
    SelfComposedDpEvent,
    calibrate_analytic_gaussian,
    calibrate_gaussian,
    calibrate_sampled_gaussian,
    dp_cd_noise_multiplier,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    rdp_gaussian,
    rdp_laplace,
    rdp_sampled_gaussian,
    zcdp_to_epsilon,
)

GOOD = dict(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, steps=100)


@pytest.mark.parametrize("name, value, exc", [
    ("target_epsilon", 0.0, ValueError), ("target_epsilon", -1.0, ValueError),
    ("target_epsilon", math.inf, ValueError), ("target_epsilon", math.nan, ValueError),
    ("target_epsilon", "1", TypeError),
    ("target_delta", 0.0, ValueError), ("target_delta", 1.0, ValueError),
    ("target_delta", 1.5, ValueError),
    ("sample_rate", 0.0, ValueError), ("sample_rate", 1.5, ValueError),
    ("steps", 0, ValueError), ("steps", 2.5, TypeError),
    ("epsilon_tolerance", 0.0, ValueError), ("conversion", "prop3", ValueError),
    ("orders", [1.0, 2.0], ValueError),
])
def test_calibrate_sampled_gaussian_bad_input(name, value, exc):
    with pytest.raises(exc, match=name if name != "orders" else "orders"):
        calibrate_sampled_gaussian(**{**GOOD, name: value})


def test_messages_follow_the_pattern():
    with pytest.raises(ValueError, match=r"^target_delta must be in \(0, 1\); got 1\.5\.$"):
        calibrate_sampled_gaussian(**{**GOOD, "target_delta": 1.5})


def test_epochs_must_be_positive():
    with pytest.raises(ValueError, match="epochs"):
        calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01,
                                   epochs=0.0)


@pytest.mark.parametrize("call, name", [
    (lambda: rdp_gaussian(0.0, [2.0]), "noise_multiplier"),
    (lambda: rdp_gaussian(-1.0, [2.0]), "noise_multiplier"),
    (lambda: rdp_laplace(0.0, [2.0]), "noise_multiplier"),
    (lambda: rdp_sampled_gaussian(0.0, 1.0, [2.0]), "sample_rate"),
    (lambda: rdp_sampled_gaussian(1.1, 1.0, [2.0]), "sample_rate"),
    (lambda: rdp_sampled_gaussian(0.1, 1.0, [0.5]), "orders"),
    (lambda: calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=0), "steps"),
    (lambda: calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, accountant="pld"),
     "accountant"),
    (lambda: calibrate_analytic_gaussian(target_epsilon=1.0, target_delta=1e-5,
                                         sensitivity=0.0), "sensitivity"),
    (lambda: dp_cd_noise_multiplier(epsilon=0.0, delta=1e-5, releases=1), "epsilon"),
    (lambda: dp_cd_noise_multiplier(epsilon=1.0, delta=1e-5, releases=0), "releases"),
    (lambda: dp_cd_noise_multiplier(epsilon=1.0, delta=1e-5, releases=1, method="x"), "method"),
    (lambda: gdp_mu(0.0, 1e-5), "epsilon"),
    (lambda: gdp_mu(1.0, 0.0), "delta"),
    (lambda: gdp_delta(0.0, 1.0), "mu"),
    (lambda: gdp_epsilon(1.0, 2.0), "delta"),
    (lambda: zcdp_to_epsilon(-1.0, 1e-5), "rho"),
    (lambda: zcdp_to_epsilon(1.0, 1e-5, conversion="x"), "conversion"),
    (lambda: RdpAccountant().compose(GaussianDpEvent(0.0)), "noise_multiplier"),
    (lambda: RdpAccountant().compose(PoissonSampledDpEvent(0.0, GaussianDpEvent(1.0))),
     "sampling_probability"),
    (lambda: RdpAccountant().compose(SelfComposedDpEvent(GaussianDpEvent(1.0), 0)), "count"),
])
def test_bad_values_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
