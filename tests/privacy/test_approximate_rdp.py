"""Approximate RDP (ReSQue paper eq. (12)): composition (Lemma 3), amplification (Prop. 7),
conversion (Corollary 1), the accountant entry and the report, against closed forms."""

import math

import numpy as np
import pytest

from dpsco_core.exceptions import UnsupportedEventError
from dpsco_core.privacy import (ApproximateRdpDpEvent, Budget, GaussianDpEvent,
                                LinearApproximateRdp, NeighboringRelation, PrivacyReport,
                                RdpAccountant, SelfComposedDpEvent, amplify_by_mixture,
                                compose_approximate_rdp, epsilon_for_delta, optimal_order,
                                paper_order, rdp_slack_of)
from dpsco_core.privacy.accountants import GdpAccountant, PldAccountant, PureDpAccountant
from dpsco_core.privacy.events import ComposedDpEvent
from dpsco_core.privacy.report import HEURISTIC_CONDITION

REPLACE = NeighboringRelation.REPLACE_ONE


# --- the type ------------------------------------------------------------------------------
def test_immutable_and_validated():
    g = LinearApproximateRdp(0.01, 50.0, 1e-8)
    with pytest.raises(AttributeError):
        g.tau = 1.0
    with pytest.raises(ValueError, match="tau"):
        LinearApproximateRdp(-1.0)
    with pytest.raises(ValueError, match="max_order"):
        LinearApproximateRdp(0.1, max_order=1.0)
    with pytest.raises(ValueError, match="delta"):
        LinearApproximateRdp(0.1, delta=1.0)
    with pytest.raises(TypeError, match="tau"):
        LinearApproximateRdp("0.1")


def test_epsilon_at_is_linear_and_refuses_orders_outside_the_range():
    g = LinearApproximateRdp(0.02, 10.0)
    assert g.epsilon_at(3.0) == pytest.approx(0.06, rel=1e-12)
    assert g.epsilon_at(3.0) >= 0.06
    for bad in (1.0, 0.5, 10.0, 11.0):
        with pytest.raises(ValueError, match=r"order must be in \(1, 10\)"):
            g.epsilon_at(bad)


# --- Lemma 3 ------------------------------------------------------------------------------
def test_composition_adds_tau_and_delta_and_takes_the_smallest_range():
    a = LinearApproximateRdp(0.01, 50.0, 1e-8)
    b = LinearApproximateRdp(0.03, 20.0, 2e-8)
    c = compose_approximate_rdp([a, b])
    assert c.tau == pytest.approx(0.04, rel=1e-12) and c.tau >= 0.04
    assert c.delta == pytest.approx(3e-8, rel=1e-12) and c.delta >= 3e-8
    assert c.max_order == 20.0
    assert (a + b) == c
    k = a.self_compose(7)
    assert k.tau == pytest.approx(0.07) and k.delta == pytest.approx(7e-8)
    assert k.max_order == 50.0
    # composition at a fixed order = sum of the epsilons there (Lemma 3)
    assert c.epsilon_at(5.0) == pytest.approx(a.epsilon_at(5.0) + b.epsilon_at(5.0))


def test_composition_errors():
    with pytest.raises(ValueError, match="at least one"):
        compose_approximate_rdp([])
    with pytest.raises(TypeError, match="LinearApproximateRdp"):
        compose_approximate_rdp([LinearApproximateRdp(0.1), 0.1])
    with pytest.raises(ValueError, match="count"):
        LinearApproximateRdp(0.1).self_compose(0)


# --- Proposition 7 --------------------------------------------------------------------------
def test_amplification_closed_form():
    pre = LinearApproximateRdp(0.1, delta=1e-9)
    out = amplify_by_mixture(pre, 0.01, extra_delta=1e-10)
    assert out.tau == pytest.approx(13 * 0.01 ** 2 * 0.1, rel=1e-12)
    assert out.max_order == pytest.approx(30.0)
    assert out.delta == pytest.approx(1.1e-9)


@pytest.mark.parametrize("tau, s, max_order, match", [
    (0.34, 0.01, math.inf, "tau"),
    (0.1, 0.025, math.inf, "mixture_weight"),
    (0.1, 0.0, math.inf, "mixture_weight"),
    (0.1, 0.01, 100.0, "max_order"),
])
def test_amplification_refuses_outside_its_hypotheses(tau, s, max_order, match):
    with pytest.raises(ValueError, match=match):
        amplify_by_mixture(LinearApproximateRdp(tau, max_order), s)


# --- Corollary 1 --------------------------------------------------------------------------
def test_conversion_at_the_optimal_order_matches_the_closed_form():
    tau, dp = 0.01, 1e-6
    g = LinearApproximateRdp(tau, delta=1e-9)
    conv = g.to_dp(dp)
    alpha = 1 + math.sqrt(math.log(1 / dp) / tau)
    assert conv.order == pytest.approx(alpha)
    assert conv.epsilon == pytest.approx(tau + 2 * math.sqrt(tau * math.log(1 / dp)), rel=1e-12)
    assert conv.delta == pytest.approx(dp + (1 + math.exp(conv.epsilon)) * 1e-9, rel=1e-12)
    assert conv.delta_prime == dp and conv.rdp_slack == 1e-9


def test_conversion_clamps_the_optimal_order_into_the_range():
    g = LinearApproximateRdp(0.01, max_order=20.0)
    conv = g.to_dp(1e-6)
    assert 19.999 < conv.order < 20.0
    assert conv.epsilon == pytest.approx(0.01 * 20 + math.log(1e6) / 19, rel=1e-9)
    # the unclamped optimum would be outside the valid range
    assert optimal_order(0.01, 1e-6) > 20.0
    assert optimal_order(0.01, 1e-6, 20.0) < 20.0


def test_conversion_at_the_papers_order():
    eps_dp, delta = 0.5, 1e-5
    alpha = paper_order(eps_dp, delta)
    assert alpha == pytest.approx(4 * math.log(2 / delta) / eps_dp)
    # Theorem 3: (alpha, eps_dp/2, delta/6)-RDP; Corollary 1 with delta' = delta/3
    g = LinearApproximateRdp(eps_dp / 2 / alpha, delta=delta / 6)
    conv = g.to_dp(delta / 3, order=alpha)
    assert conv.order == alpha
    assert conv.epsilon == pytest.approx(eps_dp / 2 + math.log(3 / delta) / (alpha - 1))
    assert conv.epsilon <= eps_dp
    assert conv.delta <= delta


@pytest.mark.parametrize("eps, delta, match", [
    (0.0, 1e-5, "epsilon_dp"), (1.5, 1e-5, "epsilon_dp"),
    (0.5, 0.0, "delta"), (0.5, 1 / 6, "delta"), (0.5, 0.2, "delta"),
])
def test_paper_order_refuses_outside_theorem_3(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        paper_order(eps, delta)


def test_conversion_refuses_orders_outside_the_range():
    g = LinearApproximateRdp(0.01, max_order=20.0)
    with pytest.raises(ValueError, match="order"):
        g.to_dp(1e-6, order=25.0)
    with pytest.raises(ValueError, match="order"):
        g.to_dp(1e-6, order=1.0)
    with pytest.raises(ValueError, match="order"):
        g.to_dp(1e-6, order="paper")


def test_epsilon_monotone_in_tau_slack_and_delta():
    base = epsilon_for_delta(LinearApproximateRdp(0.01, delta=1e-9), 1e-5).epsilon
    assert epsilon_for_delta(LinearApproximateRdp(0.02, delta=1e-9), 1e-5).epsilon > base
    assert epsilon_for_delta(LinearApproximateRdp(0.01, delta=1e-6), 1e-5).epsilon > base
    assert epsilon_for_delta(LinearApproximateRdp(0.01, delta=1e-9), 1e-4).epsilon < base
    assert LinearApproximateRdp(0.01).to_dp(1e-5).epsilon < LinearApproximateRdp(
        0.01).to_dp(1e-6).epsilon


def test_epsilon_for_delta_meets_the_target_and_beats_a_fixed_split():
    g = LinearApproximateRdp(0.01, delta=1e-8)
    conv = epsilon_for_delta(g, 1e-5)
    assert conv.delta <= 1e-5
    assert conv.delta == pytest.approx(
        conv.delta_prime + (1 + math.exp(conv.epsilon)) * 1e-8, rel=1e-9)
    assert conv.epsilon <= g.to_dp(1e-5 / 2).epsilon
    fixed = epsilon_for_delta(g, 1e-5, order=30.0)
    assert fixed.order == 30.0 and fixed.delta <= 1e-5
    assert conv.epsilon <= fixed.epsilon


def test_epsilon_for_delta_refuses_an_unreachable_delta():
    with pytest.raises(ValueError, match="cannot be reached"):
        epsilon_for_delta(LinearApproximateRdp(0.01, delta=1e-5), 1e-5)


# --- the accountant entry --------------------------------------------------------------------
def test_accountant_composes_the_event_on_its_grid():
    orders = np.array([1.5, 2.0, 10.0, 30.0, 64.0])
    acc = RdpAccountant(orders, REPLACE)
    acc.compose(ApproximateRdpDpEvent(0.01, 30.0, 1e-9), count=3)
    expected = np.where(orders < 30.0, 0.03 * orders, np.inf)
    np.testing.assert_allclose(acc.rdp, expected, rtol=1e-12)
    assert acc.rdp_slack == pytest.approx(3e-9)
    acc.compose(GaussianDpEvent(10.0))
    np.testing.assert_allclose(acc.rdp[:3], 0.03 * orders[:3] + orders[:3] / 200, rtol=1e-12)
    assert acc.rdp_slack == pytest.approx(3e-9)


def test_accountant_epsilon_is_corollary_1_on_the_grid():
    # mironov conversion: at order a, eps = r(a) + log(1/d')/(a-1), delta = d' + (1+e^eps)slack
    orders = np.linspace(2.0, 80.0, 157)
    acc = RdpAccountant(orders, REPLACE, conversion="mironov")
    acc.compose(ApproximateRdpDpEvent(0.01, math.inf, 1e-8))
    eps, order = acc.get_epsilon_and_order(1e-5)
    closed = epsilon_for_delta(LinearApproximateRdp(0.01, delta=1e-8), 1e-5)
    assert eps >= closed.epsilon * (1 - 1e-9)              # the closed form is the optimum
    assert eps == pytest.approx(closed.epsilon, rel=2e-3)
    # the reported epsilon really meets the delta
    dp = 1e-5 - (1 + math.exp(eps)) * 1e-8
    assert 0.01 * order + math.log(1 / dp) / (order - 1) <= eps * (1 + 1e-9)
    # get_delta inverts it
    assert acc.get_delta(eps) <= 1e-5 * (1 + 1e-6)


def test_accountant_without_slack_is_unchanged_and_zcdp_equivalent():
    a = RdpAccountant(None, REPLACE).compose(ApproximateRdpDpEvent(0.02))
    from dpsco_core.privacy import ZCDpEvent
    b = RdpAccountant(None, REPLACE).compose(ZCDpEvent(0.02))
    np.testing.assert_allclose(a.rdp, b.rdp, rtol=1e-12)
    assert a.get_epsilon(1e-6) == pytest.approx(b.get_epsilon(1e-6), rel=1e-12)
    assert a.rdp_slack == 0.0


def test_accountant_infinite_when_the_slack_eats_delta():
    acc = RdpAccountant(None, REPLACE).compose(ApproximateRdpDpEvent(0.01, delta=1e-5))
    assert acc.get_epsilon(1e-5) == math.inf
    assert acc.get_delta(1.0) >= (1 + math.e) * 1e-5


def test_slack_of_a_tree():
    e = ComposedDpEvent((SelfComposedDpEvent(ApproximateRdpDpEvent(0.1, delta=1e-9), 4),
                         GaussianDpEvent(1.0), ApproximateRdpDpEvent(0.1, delta=1e-8)))
    assert rdp_slack_of(e) == pytest.approx(1.4e-8)


def test_invalid_event_parameters_raise_and_leave_the_state():
    acc = RdpAccountant(None, REPLACE)
    for bad in (ApproximateRdpDpEvent(-0.1), ApproximateRdpDpEvent(0.1, 1.0),
                ApproximateRdpDpEvent(0.1, delta=1.0)):
        with pytest.raises(ValueError):
            acc.compose(bad)
    assert acc.rdp_slack == 0.0 and not np.any(acc.rdp)


@pytest.mark.parametrize("cls", [GdpAccountant, PureDpAccountant])
def test_other_accountants_refuse_it(cls):
    acc = cls(REPLACE)
    assert not acc.supports(ApproximateRdpDpEvent(0.1))
    with pytest.raises(UnsupportedEventError):
        acc.compose(ApproximateRdpDpEvent(0.1))


def test_pld_refuses_it():
    pytest.importorskip("dp_accounting")
    assert not PldAccountant(REPLACE).supports(ApproximateRdpDpEvent(0.1))


# --- the report ---------------------------------------------------------------------------
def test_report_states_mode_and_slack_and_is_recomputed_from_the_accountant():
    call = amplify_by_mixture(LinearApproximateRdp(0.05, delta=1e-9), 0.01, 1e-9)
    event = SelfComposedDpEvent(call.to_event(), 40)
    rep = PrivacyReport.from_event(event, delta=1e-5, neighboring_relation=REPLACE,
                                   mode="certified")
    acc = RdpAccountant(None, REPLACE).compose(event)
    assert rep.epsilon == acc.get_epsilon(1e-5)
    assert rep.rdp_slack == acc.rdp_slack == pytest.approx(40 * 2e-9)
    assert rep.mode == "certified" and rep.unconditional
    assert "certified mode" in str(rep) and "slack" in str(rep)
    assert rep.mechanisms == ("approximate RDP",)
    heur = PrivacyReport.from_event(event, delta=1e-5, neighboring_relation=REPLACE,
                                    mode="heuristic")
    assert heur.epsilon == rep.epsilon
    assert not heur.unconditional and HEURISTIC_CONDITION in heur.conditions
    assert str(heur).startswith("CONDITIONAL")
    with pytest.raises(ValueError, match="mode"):
        PrivacyReport.from_event(event, delta=1e-5, neighboring_relation=REPLACE,
                                 mode="audited")


def test_report_from_event_helper_passes_the_mode():
    from dpsco_core.solvers._common import report_from_event
    event = LinearApproximateRdp(0.001, delta=1e-10).to_event()
    rep = report_from_event(event, delta=1e-6, relation=REPLACE, budget_split={},
                            assumptions=(), target_epsilon=math.inf, random_state=None,
                            mode="heuristic")
    assert rep.mode == "heuristic" and not rep.unconditional
    assert rep.rdp_slack == pytest.approx(1e-10) and rep.rdp_slack >= 1e-10


def test_budget_charges_approximate_rdp_with_its_slack():
    budget = Budget(1.0, 1e-5, neighboring_relation="replace_one")
    budget.charge(ApproximateRdpDpEvent(0.001, delta=1e-7), neighboring_relation="replace_one")
    assert 0 < budget.spent_epsilon < 1.0
    from dpsco_core.exceptions import PrivacyBudgetError
    with pytest.raises(PrivacyBudgetError):
        budget.charge(ApproximateRdpDpEvent(0.001, delta=5e-6),
                      neighboring_relation="replace_one")


def test_without_slack_it_matches_dp_accounting_zcdp():
    dpa = pytest.importorskip("dp_accounting")
    orders = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    ours = RdpAccountant(orders, REPLACE).compose(ApproximateRdpDpEvent(0.03), count=4)
    theirs = dpa.rdp.RdpAccountant(orders, dpa.NeighboringRelation.REPLACE_ONE)
    theirs.compose(dpa.dp_event.ZCDpEvent(rho=0.03, xi=0.0), count=4)
    assert ours.get_epsilon(1e-6) == pytest.approx(theirs.get_epsilon(1e-6), rel=1e-9)


@pytest.mark.parametrize("eps, delta, slack, max_order", [
    (1.0, 1e-5, 0.0, math.inf), (0.5, 1e-6, 1e-8, math.inf), (1.0, 1e-5, 1e-7, 20.0),
    (4.0, 1e-3, 1e-6, math.inf),
])
def test_calibrate_tau_is_the_inverse_of_the_conversion(eps, delta, slack, max_order):
    from dpsco_core.privacy import calibrate_tau
    tau = calibrate_tau(target_epsilon=eps, target_delta=delta, rdp_slack=slack,
                        max_order=max_order)
    dp = delta - (1 + math.exp(eps)) * slack
    conv = LinearApproximateRdp(tau, max_order, slack).to_dp(dp * (1 - 1e-12))
    assert conv.epsilon <= eps and conv.delta <= delta
    assert conv.epsilon == pytest.approx(eps, rel=1e-6)       # tight: nothing left over
    # and through the accountant's own split search, within the grid's slack
    acc = RdpAccountant(None, REPLACE).compose(ApproximateRdpDpEvent(tau, max_order, slack))
    assert acc.get_epsilon(delta) <= eps * 1.02


def test_calibrate_tau_errors():
    from dpsco_core.privacy import calibrate_tau
    with pytest.raises(ValueError, match="no room"):
        calibrate_tau(target_epsilon=1.0, target_delta=1e-6, rdp_slack=1e-6)
    with pytest.raises(ValueError, match="no positive tau"):
        calibrate_tau(target_epsilon=0.1, target_delta=1e-6, max_order=2.0)
