"""Calibration: note 002 table, conservative re-checks, agreement with dp-accounting."""

import math
import warnings

import numpy as np
import pytest

from dpsco_core.exceptions import OrderGridWarning, PrivacyBudgetError
from dpsco_core.privacy import (
    GaussianDpEvent,
    PoissonSampledDpEvent,
    RdpAccountant,
    SelfComposedDpEvent,
    calibrate_gaussian,
    calibrate_sampled_gaussian,
    dp_cd_noise_multiplier,
    steps_from_epochs,
)

dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("n, epsilon, releases, closed, tight", [
    (20640, 1.0, 16, 30.883, 25.529),
    (20640, 1.0, 400, 154.415, 127.646),
    (20640, 0.9, 400, 171.572, 141.657),
    (45312, 1.0, 16, 32.082, 26.497),
    (45312, 1.0, 400, 160.409, 132.483),
    (45312, 0.9, 400, 178.233, 147.038),
    (1000, 10.0, 2000, 28.791, 27.186),
    (1000, 10.0, 50000, 143.956, 135.931),
])
def test_dp_cd_table_of_note_002(n, epsilon, releases, closed, tight):
    delta = 1.0 / n ** 2
    assert round(dp_cd_noise_multiplier(epsilon=epsilon, delta=delta, releases=releases,
                                        method="theorem"), 3) == closed
    s = dp_cd_noise_multiplier(epsilon=epsilon, delta=delta, releases=releases)
    assert round(s, 3) == tight
    # the tight value meets the budget under Prop. 3 with continuous alpha, with no slack
    achieved = releases / (2 * s * s) + math.sqrt(2 * releases * math.log(1 / delta)) / s
    assert achieved <= epsilon
    assert achieved == pytest.approx(epsilon, rel=1e-10)


def test_dp_cd_theorem_outside_its_region():
    with pytest.raises(PrivacyBudgetError, match="tight"):
        dp_cd_noise_multiplier(epsilon=50.0, delta=1e-5, releases=10, method="theorem")


def _epsilon(q, s, steps, delta, conversion="improved"):
    acc = RdpAccountant(conversion=conversion)
    acc.compose(SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        return acc.get_epsilon(delta)


@pytest.mark.parametrize("conversion", ["improved", "mironov"])
@pytest.mark.parametrize("q, steps, eps, delta", [
    (256 / 60000, 14063, 3.0, 1e-5),
    (0.01, 1000, 1.0, 1e-6),
    (0.2, 50, 8.0, 1e-5),
])
def test_sampled_gaussian_recheck(conversion, q, steps, eps, delta):
    s = calibrate_sampled_gaussian(target_epsilon=eps, target_delta=delta, sample_rate=q,
                                   steps=steps, conversion=conversion)
    achieved = _epsilon(q, s, steps, delta, conversion)
    assert achieved <= eps                      # the returned multiplier meets the budget
    assert achieved >= eps - 1e-6               # within epsilon_tolerance
    assert _epsilon(q, 0.99 * s, steps, delta, conversion) > eps  # and is not much too large


def test_agrees_with_dp_accounting_calibration_to_1e_4():
    # the benchmark case: 50 epochs at q = 256/45312, epsilon = 1, delta = 1/45312^2
    q, delta = 256 / 45312, 1 / 45312 ** 2
    steps = steps_from_epochs(50, q)
    assert steps == 8850
    ours = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=delta, sample_rate=q,
                                      epochs=50)

    def make(s):
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)),
                                       steps)

    ref = dpa.calibrate_dp_mechanism(dpa.rdp.RdpAccountant, make, 1.0, delta)
    assert ours == pytest.approx(ref, rel=1e-4)


@pytest.mark.parametrize("steps", [1, 10, 1000])
def test_calibrate_gaussian_matches_dp_accounting(steps):
    ours = calibrate_gaussian(target_epsilon=2.0, target_delta=1e-5, steps=steps)

    def make(s):
        return dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), steps)

    ref = dpa.calibrate_dp_mechanism(dpa.rdp.RdpAccountant, make, 2.0, 1e-5)
    assert ours == pytest.approx(ref, rel=1e-4)
    acc = RdpAccountant().compose(SelfComposedDpEvent(GaussianDpEvent(ours), steps))
    assert acc.get_epsilon(1e-5) <= 2.0


@pytest.mark.parametrize("epochs, q, expected", [
    (50, 256 / 45312, 8850), (1, 0.3, 4), (2.5, 0.1, 25), (0.001, 0.5, 1), (3, 1.0, 3),
])
def test_steps_from_epochs_rounds_up(epochs, q, expected):
    assert steps_from_epochs(epochs, q) == expected


def test_epochs_and_steps_give_the_same_answer():
    kw = dict(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.3)
    assert (calibrate_sampled_gaussian(epochs=1, **kw)
            == calibrate_sampled_gaussian(steps=4, **kw))


@pytest.mark.parametrize("steps, epochs", [(None, None), (10, 1.0)])
def test_exactly_one_of_steps_and_epochs(steps, epochs):
    with pytest.raises(ValueError, match="exactly one of steps and epochs"):
        calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01,
                                   steps=steps, epochs=epochs)


def test_budget_error_names_the_numbers():
    with pytest.raises(PrivacyBudgetError, match=r"target_epsilon=0\.01.*max_noise_multiplier=2"):
        calibrate_sampled_gaussian(target_epsilon=0.01, target_delta=1e-5, sample_rate=0.5,
                                   steps=1000, max_noise_multiplier=2.0)


def test_custom_orders_not_modified_and_grid_warning():
    orders = np.array([2.0, 3.0])
    with pytest.warns(OrderGridWarning):
        calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01,
                                   steps=100, orders=orders)
    assert np.array_equal(orders, [2.0, 3.0])


def test_calibration_is_keyword_only():
    with pytest.raises(TypeError):
        calibrate_sampled_gaussian(1.0, 1e-5, 0.01, 100)
