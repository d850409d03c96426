"""The PLD accountant (``accountant="pld"``), checked against dp-accounting.

Discretisation: every PLD here uses dp-accounting's default ``value_discretization_interval``
of 1e-4 (pessimistic rounding: the hockey-stick divergence, hence epsilon, is over-estimated);
the events are chosen with large noise multipliers (s >= 2) so that building a PLD takes well
under a second and each test a few seconds, dp-accounting's import (a few seconds, once per
session) aside.
"""

import math
import sys
import warnings

import numpy as np
import pytest

from dpsco_core.exceptions import OrderGridWarning, UnsupportedEventError
from dpsco_core.privacy import (ComposedDpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                                GdpAccountant, LaplaceDpEvent, NeighboringRelation,
                                NonPrivateDpEvent, NoOpDpEvent, PldAccountant,
                                PoissonSampledDpEvent, PrivacyReport, RdpAccountant,
                                SelfComposedDpEvent, SingleEpochTreeAggregationDpEvent,
                                ZCDpEvent, calibrate_sampled_gaussian,
                                calibrate_sampled_gaussian_pld)
from dpsco_core.privacy.interop import relation_to_dp_accounting, to_dp_accounting

dp_accounting = pytest.importorskip("dp_accounting")
dpe = dp_accounting.dp_event

ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE
ZERO_OUT = NeighboringRelation.ZERO_OUT
REPLACE_ONE = NeighboringRelation.REPLACE_ONE

#: The issue's DP-SGD setting: Electricity (n = 45312), expected batch 256, 50 epochs,
#: epsilon = 1 and the DP-CD paper's delta = 1/n^2.
N = 45312
Q = 256 / N
STEPS = 8850          # ceil(50 / Q)
DELTA = 1.0 / N ** 2


def _theirs(event, relation=ADD_REMOVE, delta=DELTA):
    acc = dp_accounting.pld.PLDAccountant(relation_to_dp_accounting(relation))
    acc.compose(to_dp_accounting(event))
    return acc.get_epsilon(delta)


def _rdp(event, delta=DELTA, relation=ADD_REMOVE):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        return RdpAccountant(neighboring_relation=relation).compose(event).get_epsilon(delta)


def test_calibration_reproduces_the_issue_numbers():
    # issue 17: "PLD-calibrated DP-SGD noise is 4.6% lower (3.094 vs 3.2417 for 50 epochs at
    # q = 256/45312, epsilon = 1)"; the delta that gives these numbers is 1/n^2.
    s_rdp = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=DELTA, sample_rate=Q,
                                       epochs=50)
    s_pld = calibrate_sampled_gaussian_pld(target_epsilon=1.0, target_delta=DELTA,
                                           sample_rate=Q, epochs=50)
    assert round(s_rdp, 4) == 3.2417
    assert s_pld == pytest.approx(3.094, abs=5e-4)
    assert 1.0 - s_pld / s_rdp == pytest.approx(0.046, abs=1e-3)
    event = SelfComposedDpEvent(PoissonSampledDpEvent(Q, GaussianDpEvent(s_pld)), STEPS)
    ours = PldAccountant(ZERO_OUT).compose(event).get_epsilon(DELTA)
    assert 1.0 - 1e-4 <= ours <= 1.0           # the calibration's epsilon tolerance
    # dp-accounting's own PLD accountant, on the converted event, agrees (the same PLD; its
    # composition with the identity PLD truncates a 1e-15 tail mass, pessimistically): to
    # 1e-6 relative up to dp-accounting 0.5, 1.07e-6 with 0.6.0 (0.9999692 against our
    # 0.9999681, session 12), both within the target
    theirs = _theirs(event)
    assert theirs == pytest.approx(ours, rel=3e-6)
    assert theirs <= 1.0
    assert _rdp(event) > 1.04                  # RDP does not certify this noise


def test_three_fits_composed_are_tighter_under_pld():
    # Three RDP-calibrated epsilon = 1 DP-SGD fits of the setting above, composed. The issue's
    # "2.868 vs 3.091" setting is not stated; here PLD certifies 1.683 where RDP says 1.769.
    fit = SelfComposedDpEvent(PoissonSampledDpEvent(Q, GaussianDpEvent(3.2417)), STEPS)
    three = ComposedDpEvent((fit, fit, fit))
    pld = PldAccountant(ZERO_OUT).compose(three).get_epsilon(DELTA)
    assert pld == pytest.approx(_theirs(three), rel=1e-3)
    assert pld == pytest.approx(1.6825, abs=2e-3)
    assert _rdp(three) == pytest.approx(1.769, abs=1e-3)


@pytest.mark.parametrize("relation, event", [
    (ADD_REMOVE, SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(2.0)), 500)),
    (ZERO_OUT, ComposedDpEvent((SelfComposedDpEvent(GaussianDpEvent(8.0), 5),
                                SelfComposedDpEvent(PoissonSampledDpEvent(
                                    0.02, GaussianDpEvent(3.0)), 200)))),
    (ADD_REMOVE, ComposedDpEvent((GaussianDpEvent(4.0), SelfComposedDpEvent(LaplaceDpEvent(20.0),
                                                                            3), NoOpDpEvent()))),
], ids=["sampled", "gaussians", "gaussian+laplace"])
def test_epsilon_matches_dp_accounting(relation, event):
    # ours merges unsampled Gaussians exactly before discretising, dp-accounting discretises
    # each: the same up to the 1e-4 discretisation, never below the exact value by more.
    ours = PldAccountant(relation).compose(event)
    theirs = _theirs(event, relation, 1e-6)
    assert ours.get_epsilon(1e-6) == pytest.approx(theirs, rel=2e-3)
    assert ours.get_epsilon(1e-6) <= theirs + 1e-9
    acc = dp_accounting.pld.PLDAccountant(relation_to_dp_accounting(relation))
    acc.compose(to_dp_accounting(event))
    assert ours.get_delta(1.0) == pytest.approx(acc.get_delta(1.0), rel=2e-2)


def test_pure_dp_events_count_their_repetitions():
    # EpsilonDeltaDpEvent(eps) is binary randomized response under replace-one. dp-accounting
    # 0.6's PLDAccountant drops the count of a SelfComposedDpEvent of a randomized response
    # (three epsilon = 1 releases come out as epsilon 1): ours self-composes, and agrees with
    # dp-accounting on the unrolled composition (up to one discretisation step per release:
    # ours rounds the randomized response's noise so that its loss is never below epsilon).
    event = SelfComposedDpEvent(EpsilonDeltaDpEvent(1.0), 3)
    ours = PldAccountant(ADD_REMOVE).compose(event).get_epsilon(1e-5)
    unrolled = dpe.ComposedDpEvent([to_dp_accounting(EpsilonDeltaDpEvent(1.0))] * 3)
    acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(unrolled)
    theirs = acc.get_epsilon(1e-5)
    assert theirs <= ours <= theirs + 3.5e-4
    assert 3.0 - 1e-3 <= ours <= 3.0 + 1e-3


def test_pessimistic_upper_bound_of_the_exact_gaussian():
    # unsampled Gaussians are exactly mu-GDP: the PLD is above the exact value and close to it
    event = ComposedDpEvent((SelfComposedDpEvent(GaussianDpEvent(3.0), 7), GaussianDpEvent(2.0),
                             SingleEpochTreeAggregationDpEvent(10.0, 100)))
    gdp = GdpAccountant(ZERO_OUT).compose(event)
    pld = PldAccountant(ZERO_OUT).compose(event)
    for delta in (1e-3, 1e-6, 1e-10):
        exact = gdp.get_epsilon(delta)
        assert exact <= pld.get_epsilon(delta) <= exact + 1e-3
    # pure epsilon-DP: the dominating pair's epsilon at (almost) zero delta
    assert 0.7 <= PldAccountant().compose(EpsilonDeltaDpEvent(0.7)).get_epsilon(1e-12) <= 0.7011


def test_report_states_the_pld_accountant():
    event = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(2.0)), 500)
    rep = PrivacyReport.from_event(event, delta=1e-6, accountant="pld",
                                   neighboring_relation=ZERO_OUT)
    assert rep.accountant == "pld" and "pld accountant" in str(rep)
    assert rep.conversion == "pessimistic-pld(0.0001)"
    assert rep.epsilon == PldAccountant(ZERO_OUT).compose(event).get_epsilon(1e-6)
    assert rep.epsilon < PrivacyReport.from_event(event, delta=1e-6,
                                                  neighboring_relation=ZERO_OUT).epsilon


def test_trivial_and_non_private():
    assert PldAccountant().get_epsilon(1e-5) == 0.0
    assert PldAccountant().compose(NoOpDpEvent()).get_delta(1.0) == 0.0
    acc = PldAccountant().compose(ComposedDpEvent((GaussianDpEvent(1.0), NonPrivateDpEvent())))
    assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(1.0) == 1.0
    assert PldAccountant().compose(EpsilonDeltaDpEvent(math.inf)).get_epsilon(0.5) == math.inf
    assert PldAccountant().compose(EpsilonDeltaDpEvent(0.0)).get_epsilon(0.5) == 0.0


@pytest.mark.parametrize("relation, event, match", [
    (ADD_REMOVE, ZCDpEvent(0.1), "zCDP"),
    (ADD_REMOVE, EpsilonDeltaDpEvent(1.0, 1e-6), "delta > 0"),
    (REPLACE_ONE, PoissonSampledDpEvent(0.1, GaussianDpEvent(1.0)), "REPLACE_ONE"),
    (ADD_REMOVE, SingleEpochTreeAggregationDpEvent(1.0, 8), "ZERO_OUT"),
    (ADD_REMOVE, PoissonSampledDpEvent(0.1, LaplaceDpEvent(1.0)), "GaussianDpEvent"),
])
def test_unsupported_events_leave_the_state_unchanged(relation, event, match):
    acc = PldAccountant(relation).compose(GaussianDpEvent(3.0))
    before = acc.get_epsilon(1e-5)
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match=match):
        acc.compose(ComposedDpEvent((GaussianDpEvent(1.0), event)))
    assert acc.get_epsilon(1e-5) == before and len(acc.ledger.events) == 1


def test_invalid_parameters():
    with pytest.raises(ValueError, match="value_discretization_interval"):
        PldAccountant(value_discretization_interval=0.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        PldAccountant().compose(GaussianDpEvent(-1.0))
    with pytest.raises(ValueError, match="target_epsilon"):
        calibrate_sampled_gaussian_pld(target_epsilon=0.0, target_delta=1e-5, steps=3)


def test_unsampled_calibration_sits_just_above_the_exact_gdp_noise():
    from dpsco_core.privacy import calibrate_gaussian

    s = calibrate_sampled_gaussian_pld(target_epsilon=1.0, target_delta=1e-5, steps=10)
    exact = calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=10,
                               accountant="gdp")
    assert exact * (1 - 1e-9) <= s <= exact * 1.002
    event = SelfComposedDpEvent(GaussianDpEvent(s), 10)
    assert PldAccountant(REPLACE_ONE).compose(event).get_epsilon(1e-5) <= 1.0


def test_missing_dp_accounting_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    monkeypatch.setitem(sys.modules, "dp_accounting.pld", None)
    with pytest.raises(ImportError, match=r"accountant='pld'.*dpsco-core\[pld\]"):
        PldAccountant()
    with pytest.raises(ImportError, match=r"dpsco-core\[pld\]"):
        PrivacyReport.from_event(GaussianDpEvent(1.0), delta=1e-5, accountant="pld")


def test_dp_sgd_with_the_pld_accountant():
    import dpsco_core as dp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 5)) / 3.0
    y = X @ np.ones(5) + 0.1 * rng.standard_normal(2000)
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L2(1e-3))
    kwargs = dict(epsilon=1.0, delta=1e-5, passes=40, batch_size=20, smoothness=1.0,
                  random_state=0)
    res = dp.dp_sgd(prob, accountant="pld", **kwargs)
    rep = res.privacy
    assert rep.accountant == "pld" and "pld accountant" in str(rep)
    assert 1.0 - 1e-4 <= rep.epsilon <= 1.0
    # the report, recomputed by dp-accounting from the run's own event
    assert _theirs(rep.event, ZERO_OUT, 1e-5) == pytest.approx(rep.epsilon, rel=1e-6)
    rdp = dp.dp_sgd(prob, **kwargs)
    assert rdp.privacy.accountant == "rdp"
    assert res.stats["noise_multiplier"] < 0.97 * rdp.stats["noise_multiplier"]
    with pytest.raises(ValueError, match="accountant"):
        dp.dp_sgd(prob, accountant="prv", **kwargs)


def test_noisy_mirror_descent_with_the_pld_accountant():
    import dpsco_core as dp
    from dpsco_core.datasets import make_rademacher_lasso
    from dpsco_core.solvers import mirror_descent as md

    X, y, _ = make_rademacher_lasso(1000, 20, 3, random_state=0)
    prob = dp.Problem(X, y, loss="squared")
    kwargs = dict(epsilon=1.0, delta=1e-5, random_state=0)
    res = md.noisy_mirror_descent(prob, accountant="pld", **kwargs)
    rep = res.privacy
    assert rep.accountant == "pld" and 1.0 - 1e-4 <= rep.epsilon <= 1.0
    assert _theirs(rep.event, ZERO_OUT, 1e-5) == pytest.approx(rep.epsilon, rel=1e-6)
    rdp = md.noisy_mirror_descent(prob, **kwargs)
    assert res.stats["noise_multiplier"] < rdp.stats["noise_multiplier"]
    with pytest.raises(ValueError, match="accountant"):
        md.localized_mirror_descent(prob, accountant="prv", **kwargs)


@pytest.mark.parametrize("event", [
    GaussianDpEvent(1e-3), GaussianDpEvent(1e-300), LaplaceDpEvent(1e-300),
    LaplaceDpEvent(1e-4), PoissonSampledDpEvent(0.01, GaussianDpEvent(1e-3)),
    PoissonSampledDpEvent(0.01, GaussianDpEvent(1e-300)),
    SingleEpochTreeAggregationDpEvent(1e-300, 4),
])
def test_pld_counts_a_loss_beyond_its_range_as_non_private(event):
    """Pinned (session 17, hypothesis outside CI, a Budget(accountant="pld") charged with a
    mechanism at a huge epsilon): a Gaussian of multiplier 1e-3 asked dp-accounting for a
    76 GiB PLD (MemoryError), 1e-300 divided by zero, a Laplace of scale 1e-300 raised
    "Maximum allowed size exceeded" and one of 1e-5 ran out of memory. A release whose
    privacy loss reaches beyond MAX_PLD_PRIVACY_LOSS = 500 now counts as non-private."""
    acc = PldAccountant(ZERO_OUT).compose(event)
    assert acc.get_epsilon(1e-5) == math.inf
    assert acc.get_delta(1.0) == 1.0


def test_pld_below_its_range_is_unchanged():
    """The releases inside the range keep their PLD (bitwise, values of session 17)."""
    assert PldAccountant(ZERO_OUT).compose(GaussianDpEvent(1.0)).get_epsilon(1e-5) == \
        4.377178100029208
    assert PldAccountant(ZERO_OUT).compose(LaplaceDpEvent(0.1)).get_epsilon(1e-5) == \
        9.999980000300997


def test_pld_budget_refuses_a_huge_epsilon_as_over_budget():
    from dpsco_core import mechanisms
    from dpsco_core.exceptions import PrivacyBudgetError
    from dpsco_core.privacy import Budget

    budget = Budget(1.0, 1e-5, accountant="pld", neighboring_relation="replace_one")
    with pytest.raises(PrivacyBudgetError, match="epsilon=inf"):
        mechanisms.laplace_mechanism(np.zeros(1), sensitivity=1.0, epsilon=1e300,
                                     random_state=0, budget=budget)
    assert budget.ledger == ()


@pytest.mark.parametrize("event", [GaussianDpEvent(1e-300),
                                   SingleEpochTreeAggregationDpEvent(1e-300, 4)])
def test_gdp_multiplier_whose_square_underflows(event):
    """Pinned (session 17): 1 / s^2 divided by zero for s below 1e-154 (ZeroDivisionError
    from a Budget(accountant="gdp") charge); the GDP mu is now inf."""
    acc = GdpAccountant(ZERO_OUT).compose(event)
    assert acc.mu == math.inf and acc.get_epsilon(1e-5) == math.inf


@pytest.mark.parametrize("event", [
    SelfComposedDpEvent(LaplaceDpEvent(0.5), 10**9),
    SelfComposedDpEvent(EpsilonDeltaDpEvent(1.0), 10**9),
    SelfComposedDpEvent(PoissonSampledDpEvent(0.5, GaussianDpEvent(1.0)), 10**9),
])
def test_pld_counts_a_composition_beyond_its_range_as_non_private(event):
    """Pinned (session 17, hypothesis outside CI): a billion Laplace releases of scale 0.5
    asked dp-accounting for a 29.8 TiB composed PMF (MemoryError, after two minutes of the
    test). A self-composition whose PMF would hold more than MAX_PLD_POINTS = 1e7 points
    (from dp-accounting's own truncation bounds, computed without composing) counts as
    non-private."""
    acc = PldAccountant(ZERO_OUT).compose(event)
    assert acc.get_epsilon(1e-5) == math.inf
    assert acc.get_delta(1.0) == 1.0


def test_pld_compositions_inside_the_range_are_unchanged():
    """Bitwise the values before the check (session 17): DP-SGD's ledger of the issue, and a
    pure ledger of 1000 releases of epsilon 1 (2e4-point PMFs composed to ~5e6 points)."""
    dpsgd = SelfComposedDpEvent(PoissonSampledDpEvent(256 / 45312, GaussianDpEvent(0.9)), 8850)
    assert PldAccountant(ZERO_OUT).compose(dpsgd).get_epsilon(1e-5) == 3.714515448911972
    pure = SelfComposedDpEvent(EpsilonDeltaDpEvent(1.0), 1000)
    assert PldAccountant(ZERO_OUT).compose(pure).get_epsilon(1e-5) == 577.912117620654


@pytest.mark.parametrize("multiplier", [1e155, 1e300, 1.7e308])
@pytest.mark.parametrize("q", [1e-6, 0.5])
def test_pld_sampled_gaussian_of_huge_multiplier(multiplier, q):
    """Pinned (session 19, hypothesis seed 300 of test_budget_charge_sequences): dp-accounting
    squares the standard deviation of a Poisson-sampled Gaussian in Python floats, an
    OverflowError for a multiplier beyond ~1.3e154. The multiplier is capped at 1e150 (less
    noise: a pessimistic PLD), whose loss is already 0 at the default discretisation."""
    event = PoissonSampledDpEvent(q, GaussianDpEvent(multiplier))
    for relation in (ADD_REMOVE, ZERO_OUT):
        acc = PldAccountant(relation).compose(event)
        assert acc.get_epsilon(1e-300) == 0.0 and acc.get_epsilon(1e-5) == 0.0
        assert acc.get_delta(1e-3) == 0.0
    from dpsco_core.privacy import Budget, spend
    budget = Budget(1e-300, 1e-300, accountant="pld", neighboring_relation="zero_out")
    spend(budget, event, delta=None)
    assert budget.spent_epsilon == 0.0
