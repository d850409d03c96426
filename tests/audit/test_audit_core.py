"""The auditing statistics: Clopper-Pearson bounds, the epsilon formula, coverage, validation."""

import math

import numpy as np
import pytest
from scipy import stats

from dpsco_core.audit import (audit, clopper_pearson_upper, epsilon_lower_bound,
                              sampler_from_mechanism)


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (17, 1000), (999, 1000)])
def test_clopper_pearson_upper_matches_scipy_exact_interval(k, n):
    # One-sided upper bound at level 1 - a equals the upper end of the two-sided exact
    # interval at level 1 - 2a.
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact").high
    assert clopper_pearson_upper(k, n, 0.05) == pytest.approx(expected, rel=1e-10)


def test_clopper_pearson_upper_vectorised():
    k = np.array([0, 5, 10])
    out = clopper_pearson_upper(k, 10, 0.025)
    assert out.shape == (3,)
    assert out[-1] == 1.0 and np.all(np.diff(out) > 0)


def test_epsilon_lower_bound_formula():
    # Identity: eps_lb = max(log((1 - delta - FNR_ub) / FPR_ub), log((1 - delta - FPR_ub) / FNR_ub)).
    fp, n0, fn, n1, delta = 30, 10_000, 6000, 10_000, 1e-3
    a = 0.025
    fpr_ub, fnr_ub = clopper_pearson_upper(fp, n0, a), clopper_pearson_upper(fn, n1, a)
    expected = max(math.log((1 - delta - fnr_ub) / fpr_ub),
                   math.log((1 - delta - fpr_ub) / fnr_ub))
    assert epsilon_lower_bound(fp, n0, fn, n1, delta=delta) == pytest.approx(expected)


def test_epsilon_lower_bound_is_zero_without_evidence():
    assert epsilon_lower_bound(500, 1000, 500, 1000) == 0.0
    assert epsilon_lower_bound(1000, 1000, 1000, 1000) == 0.0


def test_epsilon_lower_bound_grows_with_trials():
    # Same rates, more trials: tighter upper bounds, larger lower bound, towards log(0.5/0.01).
    bounds = [epsilon_lower_bound(n // 100, n, n // 2, n) for n in (1000, 10_000, 100_000)]
    assert bounds[0] < bounds[1] < bounds[2] < math.log(0.5 / 0.01)


def _laplace_scalar_sampler(scale):
    def sampler(x, n, seed_seq):
        return x + np.random.default_rng(seed_seq).laplace(0.0, scale, n)
    return sampler


@pytest.mark.statistical
def test_coverage_of_the_bound_on_an_exactly_known_mechanism():
    # Identity: P[eps_lower > eps_true] <= 1 - confidence. Laplace(1/eps) at sensitivity 1 has
    # eps_true = eps exactly and a threshold test that attains it, the hardest case for
    # coverage. 200 small audits; the exceedance count is Binomial(200, p <= 0.05): allow up to
    # 18 (mean 10 + 2.8 standard errors).
    eps = 1.0
    sampler = _laplace_scalar_sampler(1.0 / eps)
    exceed = sum(audit(sampler, 0.0, 1.0, n_trials=4000, random_state=seed).eps_lower > eps
                 for seed in range(200))
    assert exceed <= 18


@pytest.mark.statistical
def test_no_selection_bias_on_an_input_independent_mechanism():
    # A mechanism whose output ignores its input is 0-DP: any eps_lower > 0 is a false alarm,
    # which the split into selection and evaluation halves keeps at <= 5% (mean 2.5 of 50).
    def sampler(x, n, seed_seq):
        return np.random.default_rng(seed_seq).standard_normal(n)
    false_alarms = sum(audit(sampler, 0.0, 1.0, n_trials=2000, random_state=s).eps_lower > 0
                       for s in range(50))
    assert false_alarms <= 7


def test_result_fields_and_determinism():
    sampler = _laplace_scalar_sampler(1.0)
    r1 = audit(sampler, 0.0, 1.0, n_trials=10_000, delta=0.0, random_state=5)
    r2 = audit(sampler, 0.0, 1.0, n_trials=10_000, delta=0.0, random_state=5)
    assert r1 == r2
    assert r1.n_negatives == r1.n_positives == 5000 and r1.n_trials == 10_000
    assert r1.direction in (">=", "<=") and r1.confidence == 0.95
    assert r1.fpr == r1.false_positives / r1.n_negatives
    assert r1.fpr <= r1.fpr_upper and r1.fnr <= r1.fnr_upper
    assert r1.eps_lower == pytest.approx(epsilon_lower_bound(
        r1.false_positives, r1.n_negatives, r1.false_negatives, r1.n_positives))


def test_lower_tail_direction_is_found():
    # input1 shifts the output down: the test must use "<=".
    r = audit(_laplace_scalar_sampler(0.5), 0.0, -1.0, n_trials=20_000, random_state=0)
    assert r.direction == "<=" and r.eps_lower > 1.0


def test_sampler_from_mechanism_runs_the_public_callable():
    from dpsco_core.mechanisms import laplace_mechanism
    sampler = sampler_from_mechanism(
        lambda x, random_state: laplace_mechanism(x, sensitivity=1.0, epsilon=1.0,
                                                  random_state=random_state, n_threads=1))
    out = sampler(0.0, 50, np.random.SeedSequence(1))
    assert out.shape == (50,) and np.unique(out).size == 50
    np.testing.assert_array_equal(out, sampler(0.0, 50, np.random.SeedSequence(1)))


def test_validation():
    good = _laplace_scalar_sampler(1.0)
    with pytest.raises(TypeError, match="sampler must be callable"):
        audit(None, 0.0, 1.0, n_trials=10)
    with pytest.raises(ValueError, match="n_trials"):
        audit(good, 0.0, 1.0, n_trials=2)
    with pytest.raises(ValueError, match="delta"):
        audit(good, 0.0, 1.0, n_trials=10, delta=1.0)
    with pytest.raises(ValueError, match="confidence"):
        audit(good, 0.0, 1.0, n_trials=10, confidence=1.0)
    with pytest.raises(ValueError, match="shape"):
        audit(lambda x, n, s: np.zeros(n + 1), 0.0, 1.0, n_trials=10)
    with pytest.raises(ValueError, match="NaN or inf"):
        audit(lambda x, n, s: np.full(n, np.nan), 0.0, 1.0, n_trials=10)
    with pytest.raises(ValueError, match="false_positives"):
        epsilon_lower_bound(11, 10, 0, 10)
    with pytest.raises(TypeError, match="mechanism must be callable"):
        sampler_from_mechanism(3)
