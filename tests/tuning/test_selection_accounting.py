"""Accounting of private selection against the closed forms of its papers.

Identities: Papernot and Steinke (ICLR 2022) Theorem 2, evaluated by hand at one (lambda,
lambda_hat) pair and minimised over lambda_hat on the grid, for eta in {0 (logarithmic),
1 (geometric), 2}; Theorem 6 (Poisson) with eps_hat = log(1 + 1/(lambda - 1)); Liu and Talwar
(STOC 2019) Theorem 3.1 (3 eps for geometric stopping over eps-DP runs); the means of
Definition 1; agreement with dp-accounting's ``RepeatAndSelectDpEvent`` when installed.
"""

import math

import numpy as np
import pytest

from dpsco_core.privacy import (Budget, EpsilonDeltaDpEvent, GaussianDpEvent, LaplaceDpEvent,
                                NeighboringRelation, RdpAccountant, rdp_gaussian)
from dpsco_core.privacy.accountants import PureDpAccountant
from dpsco_core.privacy.events import RepeatAndSelectDpEvent
from dpsco_core.privacy.selection import (gamma_for_mean, liu_talwar_epsilon,
                                          rdp_repeat_and_select,
                                          truncated_negative_binomial_mean)
from dpsco_core.exceptions import PrivacyBudgetError

ORDERS = np.array([1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0])
R = NeighboringRelation.REPLACE_ONE


@pytest.mark.parametrize("gamma", [1e-3, 0.05, 0.5, 0.99])
def test_tnb_means_closed_forms(gamma):
    # Definition 1: eta = 1 geometric 1/gamma; eta = 0 (1/gamma - 1)/log(1/gamma); general eta.
    assert truncated_negative_binomial_mean(gamma, 1.0) == pytest.approx(1 / gamma, rel=1e-12)
    assert truncated_negative_binomial_mean(gamma, 0.0) == pytest.approx(
        (1 / gamma - 1) / math.log(1 / gamma), rel=1e-12)
    for eta in (0.5, 2.0, 3.7):
        assert truncated_negative_binomial_mean(gamma, eta) == pytest.approx(
            eta * (1 - gamma) / (gamma * (1 - gamma**eta)), rel=1e-10)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("mean", [1.0, 2.0, 10.0, 100.0])
def test_gamma_for_mean_is_conservative(eta, mean):
    gamma = gamma_for_mean(mean, eta)
    got = truncated_negative_binomial_mean(gamma, eta)
    assert mean <= got <= mean * (1 + 1e-9)


@pytest.mark.parametrize("eta", [0.0, 1.0, 2.0])
@pytest.mark.parametrize("mean", [3.0, 20.0])
def test_theorem2_closed_form(eta, mean):
    s = 2.5
    rdp = rdp_gaussian(s, ORDERS)
    got = rdp_repeat_and_select(ORDERS, rdp, mean=mean, shape=eta)
    gamma = gamma_for_mean(mean, eta)
    ek = truncated_negative_binomial_mean(gamma, eta)

    def theorem2(lam, lam_hat):   # the displayed formula, term by term
        eps, eps_hat = lam / (2 * s * s), lam_hat / (2 * s * s)
        return (eps + (1 + eta) * (1 - 1 / lam_hat) * eps_hat
                + (1 + eta) * math.log(1 / gamma) / lam_hat + math.log(ek) / (lam - 1))

    by_hand = np.array([min(theorem2(lam, lh) for lh in ORDERS) for lam in ORDERS])
    by_hand = np.minimum.accumulate(by_hand[::-1])[::-1]        # monotone in the order
    np.testing.assert_allclose(got, by_hand, rtol=1e-12)
    assert np.all(got >= by_hand)                                # rounded up
    # Every single (lambda, lambda_hat) pair is a valid bound at least as large.
    for i, lam in enumerate(ORDERS):
        assert got[i] <= theorem2(lam, ORDERS[3]) * (1 + 1e-12)


def test_theorem2_special_cases_eta0_logarithmic_eta1_geometric():
    rdp = rdp_gaussian(3.0, ORDERS)
    # eta = 1, mean 1/gamma: the constant is 2 min(...) with log(1/gamma) = log(mean).
    got = rdp_repeat_and_select(ORDERS, rdp, mean=8.0, shape=1.0)
    c = 2 * np.min((1 - 1 / ORDERS) * rdp + math.log(8.0) / ORDERS)
    expect = rdp + math.log(8.0) / (ORDERS - 1) + c
    np.testing.assert_allclose(got, np.minimum.accumulate(expect[::-1])[::-1], rtol=1e-12)
    # mean 1: one run, K = 1 surely, gamma = 1: nothing added but the eta term at log(1) = 0.
    one = rdp_repeat_and_select(ORDERS, rdp, mean=1.0, shape=0.0)
    c0 = np.min((1 - 1 / ORDERS) * rdp)
    np.testing.assert_allclose(one, np.minimum.accumulate((rdp + c0)[::-1])[::-1], rtol=1e-12)


@pytest.mark.parametrize("mean", [0.5, 3.0, 30.0])
def test_theorem6_poisson_closed_form(mean):
    from dpsco_core.privacy.conversions import _rdp_to_delta

    rdp = rdp_gaussian(4.0, ORDERS)
    got = rdp_repeat_and_select(ORDERS, rdp, mean=mean, shape=math.inf)
    for i, lam in enumerate(ORDERS):
        eps_hat = math.log(1 + 1 / (lam - 1))
        assert math.exp(eps_hat) <= 1 + 1 / (lam - 1) + 1e-15      # the theorem's condition
        delta_hat = _rdp_to_delta(ORDERS, rdp, eps_hat, "improved")[0]
        assert got[i] == pytest.approx(rdp[i] + mean * delta_hat + math.log(mean) / (lam - 1),
                                       rel=1e-12)


def test_liu_talwar_three_epsilon():
    assert liu_talwar_epsilon(0.5) == pytest.approx(1.5)
    event = RepeatAndSelectDpEvent(EpsilonDeltaDpEvent(0.5), 5.0, 1.0)
    assert PureDpAccountant(R).compose(event).epsilon == pytest.approx(1.5, rel=1e-12)
    rdp = RdpAccountant(ORDERS, R).compose(event).rdp
    assert np.all(rdp <= 1.5 * (1 + 1e-11))                     # min with the pure bound
    lap = RepeatAndSelectDpEvent(LaplaceDpEvent(4.0), 7.0, 1.0)
    assert PureDpAccountant(R).compose(lap).epsilon == pytest.approx(0.75, rel=1e-12)
    # Only geometric stopping over pure runs has a pure guarantee.
    from dpsco_core.exceptions import UnsupportedEventError
    for bad in (RepeatAndSelectDpEvent(EpsilonDeltaDpEvent(0.5), 5.0, 0.0),
                RepeatAndSelectDpEvent(GaussianDpEvent(3.0), 5.0, 1.0)):
        with pytest.raises(UnsupportedEventError):
            PureDpAccountant(R).compose(bad)


def test_accountant_composes_selection_and_budget_refuses():
    trial = GaussianDpEvent(5.0)
    event = RepeatAndSelectDpEvent(trial, 10.0, 1.0)
    acc = RdpAccountant(ORDERS, R).compose(event)
    np.testing.assert_allclose(acc.rdp, rdp_repeat_and_select(
        ORDERS, rdp_gaussian(5.0, ORDERS), mean=10.0, shape=1.0))
    # The selection costs more than one run and less than ten composed.
    one = RdpAccountant(None, R).compose(trial).get_epsilon(1e-6)
    ten = RdpAccountant(None, R).compose(trial, 10).get_epsilon(1e-6)
    sel = RdpAccountant(None, R).compose(event).get_epsilon(1e-6)
    assert one < sel < ten
    budget = Budget(sel * 1.5, 1e-6, neighboring_relation="replace_one")
    budget.charge(event, neighboring_relation="replace_one")
    with pytest.raises(PrivacyBudgetError):
        budget.charge(event, neighboring_relation="replace_one")


def test_event_parameters_validated():
    for mean, shape in [(0.5, 1.0), (3.0, -1.0), (0.0, math.inf), (math.nan, 1.0)]:
        with pytest.raises(ValueError):
            RdpAccountant(ORDERS, R).compose(
                RepeatAndSelectDpEvent(GaussianDpEvent(1.0), mean, shape))


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0, math.inf])
@pytest.mark.parametrize("mean", [1.0, 4.0, 30.0])
def test_matches_dp_accounting(shape, mean):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as ra

    ours = RdpAccountant(None, R).compose(
        RepeatAndSelectDpEvent(GaussianDpEvent(3.0), mean, shape))
    theirs = ra.RdpAccountant(None, ra.NeighborRel.REPLACE_ONE).compose(
        dpa.dp_event.RepeatAndSelectDpEvent(dpa.dp_event.GaussianDpEvent(3.0), mean, shape))
    # dp-accounting bisects gamma to a relative 1e-9 (ours 1e-12): equal to that accuracy.
    assert ours.get_epsilon(1e-6) == pytest.approx(theirs.get_epsilon(1e-6), rel=1e-7)
