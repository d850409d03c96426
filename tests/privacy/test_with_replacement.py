"""Sampling with replacement (SampledWithReplacementDpEvent) under REPLACE_ONE: the RDP curve
against closed forms and an exact divergence, and against dp-accounting where it can compare."""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from dpsco_core.exceptions import UnsupportedEventError
from dpsco_core.privacy import (ComposedDpEvent, GaussianDpEvent, NeighboringRelation,
                                PrivacyReport, RdpAccountant, SampledWithReplacementDpEvent,
                                bdrs18_mixture_rdp, rdp_sampled_with_replacement_gaussian,
                                with_replacement_inclusion_probability)
from dpsco_core.privacy.events import LaplaceDpEvent

REPLACE = NeighboringRelation.REPLACE_ONE
ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0])


def test_inclusion_probability():
    assert with_replacement_inclusion_probability(1, 5) == 1.0
    assert with_replacement_inclusion_probability(10, 1) == pytest.approx(0.1)
    p = with_replacement_inclusion_probability(1000, 20)
    assert p == pytest.approx(1 - (1 - 1e-3) ** 20, rel=1e-12) and p <= 20 / 1000
    with pytest.raises(ValueError, match="sample_size"):
        with_replacement_inclusion_probability(10, 0)


def test_count_tail_is_the_binomial_tail():
    from dpsco_core.privacy import with_replacement_count_tail
    n, m = 1000, 16
    for b in (0, 1, 3, 10):
        exact = stats.binom.sf(b, m, 1 / n)
        got = with_replacement_count_tail(n, m, b)
        assert got == pytest.approx(exact, rel=1e-12) and got >= exact
    assert with_replacement_count_tail(n, m, 0) == pytest.approx(
        with_replacement_inclusion_probability(n, m), rel=1e-12)
    assert with_replacement_count_tail(n, m, m) == 0.0
    # the paper's Chernoff choice b = 2 log(2/delta) (m/n <= 1/60) keeps it below delta/2
    delta = 1e-6
    b = math.ceil(2 * math.log(2 / delta))
    assert with_replacement_count_tail(600, 10, b) <= delta / 2
    with pytest.raises(ValueError, match="max_count"):
        with_replacement_count_tail(n, m, -1)


def test_one_record_one_draw_is_the_gaussian():
    np.testing.assert_allclose(rdp_sampled_with_replacement_gaussian(1, 1, 1.7, ORDERS),
                               ORDERS / (2 * 1.7 ** 2), rtol=1e-12)


def test_single_draw_closed_form():
    # m = 1, Prop. 7 inapplicable (s = 1/10): count conditioning,
    # (1/(a-1)) log(1 - q + q exp((a-1) a / (2 s^2)))
    n, s = 10, 3.0
    q = 1 / n
    closed = np.log1p(q * np.expm1((ORDERS - 1) * ORDERS / (2 * s * s))) / (ORDERS - 1)
    got = rdp_sampled_with_replacement_gaussian(n, 1, s, ORDERS)
    np.testing.assert_allclose(got, closed, rtol=1e-12)
    assert np.all(got >= closed)


def test_binomial_closed_form_many_draws():
    n, m, s = 50, 7, 2.0
    k = np.arange(m + 1)
    pmf = stats.binom.pmf(k, m, 1 / n)
    closed = [special.logsumexp((a - 1) * a * k ** 2 / (2 * s * s), b=pmf) / (a - 1)
              for a in ORDERS]
    np.testing.assert_allclose(rdp_sampled_with_replacement_gaussian(n, m, s, ORDERS), closed,
                               rtol=1e-10)


@pytest.mark.parametrize("n, m, s", [(10 ** 6, 1000, 1.0), (10 ** 6, 1000, 30.0),
                                     (10, 1, 0.01), (100, 3, 2.0)])
def test_large_exponents_give_finite_or_inf_never_nan(n, m, s):
    # counts whose exponent overflows expm1 but whose probability underflows (0 * inf) once
    # gave NaN; the bound must stay a number, increasing in the order
    from dpsco_core.privacy import DEFAULT_RDP_ORDERS
    out = rdp_sampled_with_replacement_gaussian(n, m, s, DEFAULT_RDP_ORDERS)
    assert not np.isnan(out).any() and np.all(out > 0)
    assert np.all(np.diff(out) >= 0)


@pytest.mark.parametrize("n, m, s", [(10000, 1, 4.0), (100000, 3, 12.0)])
def test_proposition_7_takes_over_where_it_applies(n, m, s):
    # tau = m^2/(2 s^2) = 1/32, weight ~ m/n < 1/40, orders < 96
    tau = m * m / (2 * s * s)
    w = with_replacement_inclusion_probability(n, m)
    prop7 = 13 * w * w * tau * ORDERS
    got = rdp_sampled_with_replacement_gaussian(n, m, s, ORDERS)
    np.testing.assert_allclose(got, prop7, rtol=1e-12)
    # far smaller than the conditioning bound (~ q alpha / (2 s^2))
    assert np.all(got < 1e-2 * ORDERS / (n * 2 * s * s) * 10)


def test_bdrs18_bound_is_infinite_beyond_its_orders_and_refuses_its_hypotheses():
    out = bdrs18_mixture_rdp(0.1, 0.01, [2.0, 29.9, 30.0, 40.0])
    assert np.isfinite(out[:2]).all() and np.isinf(out[2:]).all()
    with pytest.raises(ValueError, match="tau"):
        bdrs18_mixture_rdp(0.4, 0.01, ORDERS)
    with pytest.raises(ValueError, match="mixture_weight"):
        bdrs18_mixture_rdp(0.1, 1 / 40, ORDERS)


def _exact_pair_divergence(n, m, s, alpha):
    """D_alpha between the outputs of one worst-looking pair of neighbours, by quadrature.

    Scalar records; all records but the differing one contribute 0, the differing one +1/2 on
    D and -1/2 on D' (replace-one, per-occurrence sensitivity 1); the batch sum is released
    with N(0, s^2). K ~ Bin(m, 1/n) occurrences: mixtures of N(+-K/2, s^2).
    """
    k = np.arange(m + 1)
    logpmf = stats.binom.logpmf(k, m, 1 / n)
    # a fine grid: the integrand is a smooth Gaussian mixture, so the trapezoid rule over
    # +-20 standard deviations beyond the largest shift is accurate to far below the margins
    x = np.linspace(-20 * s - m, 20 * s + alpha * m, 40001)[:, None]
    logp = special.logsumexp(logpmf + stats.norm.logpdf(x, loc=k / 2, scale=s), axis=1)
    logq = special.logsumexp(logpmf + stats.norm.logpdf(x, loc=-k / 2, scale=s), axis=1)
    log_f = alpha * logp + (1 - alpha) * logq
    top = log_f.max()
    val = integrate.trapezoid(np.exp(log_f - top), x[:, 0])
    return (math.log(val) + top) / (alpha - 1)


@pytest.mark.parametrize("n, m, s", [(20, 1, 1.0), (20, 5, 2.0), (200, 10, 3.0),
                                     (10000, 1, 4.0)])
def test_bound_is_above_an_exact_divergence(n, m, s):
    got = rdp_sampled_with_replacement_gaussian(n, m, s, ORDERS[:6])
    for a, bound in zip(ORDERS[:6], got):
        assert _exact_pair_divergence(n, m, s, a) <= bound * (1 + 1e-9) + 1e-15


def test_accountant_supports_it_under_replace_one_only():
    e = SampledWithReplacementDpEvent(1000, 5, GaussianDpEvent(3.0))
    acc = RdpAccountant(ORDERS, REPLACE).compose(e, count=10)
    np.testing.assert_allclose(
        acc.rdp, 10 * rdp_sampled_with_replacement_gaussian(1000, 5, 3.0, ORDERS), rtol=1e-12)
    for rel in (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.ZERO_OUT):
        assert not RdpAccountant(ORDERS, rel).supports(e)
        with pytest.raises(UnsupportedEventError, match="REPLACE_ONE"):
            RdpAccountant(ORDERS, rel).compose(e)
    bad = SampledWithReplacementDpEvent(1000, 5, LaplaceDpEvent(1.0))
    assert not RdpAccountant(ORDERS, REPLACE).supports(bad)


def test_composed_gaussians_on_one_batch_use_the_effective_multiplier():
    inner = ComposedDpEvent((GaussianDpEvent(3.0), GaussianDpEvent(4.0)))
    eff = (3.0 ** -2 + 4.0 ** -2) ** -0.5
    a = RdpAccountant(ORDERS, REPLACE).compose(SampledWithReplacementDpEvent(500, 3, inner))
    np.testing.assert_allclose(a.rdp, rdp_sampled_with_replacement_gaussian(500, 3, eff, ORDERS),
                               rtol=1e-12)


def test_invalid_parameters():
    acc = RdpAccountant(ORDERS, REPLACE)
    for bad in (SampledWithReplacementDpEvent(0, 1, GaussianDpEvent(1.0)),
                SampledWithReplacementDpEvent(10, 0, GaussianDpEvent(1.0)),
                SampledWithReplacementDpEvent(10, 1, GaussianDpEvent(0.0))):
        with pytest.raises(ValueError):
            acc.compose(bad)
    assert not np.any(acc.rdp)


def test_report_names_the_mechanism():
    e = SampledWithReplacementDpEvent(1000, 1, GaussianDpEvent(3.0))
    rep = PrivacyReport.from_event(e, delta=1e-6, neighboring_relation=REPLACE)
    assert rep.mechanisms == ("sampled-with-replacement Gaussian",)
    assert rep.noise_multipliers == (3.0,) and rep.releases == 1


def test_dp_accounting_has_the_event_but_no_accountant_for_it():
    # If a later dp-accounting supports it, this fails: then compare our curve against theirs.
    dpa = pytest.importorskip("dp_accounting")
    from dpsco_core.privacy.interop import from_dp_accounting, to_dp_accounting
    e = SampledWithReplacementDpEvent(1000, 1, GaussianDpEvent(3.0))
    theirs = to_dp_accounting(e)
    assert isinstance(theirs, dpa.dp_event.SampledWithReplacementDpEvent)
    assert from_dp_accounting(theirs) == e
    rel = dpa.NeighboringRelation.REPLACE_ONE
    assert not dpa.rdp.RdpAccountant(neighboring_relation=rel).supports(theirs)
    assert not dpa.pld.PLDAccountant(neighboring_relation=rel).supports(theirs)


def test_single_draw_agrees_with_dp_accounting_without_replacement():
    # One draw with or without replacement is the same mechanism: dp-accounting's
    # sampling-without-replacement curve (Wang, Balle and Kasiviswanathan 2019) bounds the
    # same divergence. Both are upper bounds: check they are of the same size and that ours
    # is not below the exact divergence (tested above); print-free comparison.
    dpa = pytest.importorskip("dp_accounting")
    orders = [2.0, 3.0, 4.0, 8.0]
    n, s = 100, 2.0
    theirs = dpa.rdp.RdpAccountant(orders, dpa.NeighboringRelation.REPLACE_ONE)
    theirs.compose(dpa.dp_event.SampledWithoutReplacementDpEvent(n, 1,
                                                                  dpa.dp_event.GaussianDpEvent(s)))
    ours = rdp_sampled_with_replacement_gaussian(n, 1, s, orders)
    for a, x, y in zip(orders, ours, theirs._rdp):
        exact = _exact_pair_divergence(n, 1, s, a)
        assert exact <= x * (1 + 1e-9) and exact <= y * (1 + 1e-9)
        assert 0.1 < x / y < 10
