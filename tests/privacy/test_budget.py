"""Budget: refuses before the data are touched, composes as the accountant does, one relation."""

import math
import threading

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.exceptions import PrivacyBudgetError, UnsupportedEventError
from dpsco_core.privacy import (Budget, EpsilonDeltaDpEvent, GaussianDpEvent, LaplaceDpEvent,
                                NeighboringRelation, PureDpAccountant, RdpAccountant, spend)

DELTA = 1e-5
# public_bounds: declared by the user as public (dpsco_core.public_bounds), not read from the data.
_PUBLIC = {"n_samples", "n_features", "is_sparse", "loss", "penalty", "public_bounds"}


class DataTouched(AssertionError):
    pass


def _problem(n=200, p=4, seed=0):
    X, y, _ = dp.datasets.make_imbalanced_regression(n, p, random_state=seed)
    return dp.Problem(X, y, loss="squared", penalty=dp.L1(0.01))


def _untouchable(problem):
    """The same Problem, whose every access beyond its public shape and loss raises."""

    class Untouchable(dp.Problem):
        def __getattribute__(self, name):
            value = object.__getattribute__(self, name)   # a missing name: AttributeError
            if name.startswith("__") or name in _PUBLIC:
                return value
            raise DataTouched(f"the solver read problem.{name} before the budget check")

    spy = object.__new__(Untouchable)
    spy.__dict__.update(problem.__dict__)
    return spy


def test_diffprivlib_scenario_third_fit_refused_before_the_data():
    # diffprivlib's BudgetAccountant: budget 2, two epsilon = 1 fits pass, the third is refused.
    budget = Budget(2.0, 2 * DELTA, accountant="basic-composition")
    prob = _problem()
    for _ in range(2):
        dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, random_state=0, budget=budget)
    spent = (budget.spent_epsilon, budget.spent_delta)
    assert spent[0] <= 2.0 and len(budget.ledger) == 2
    for solver in (dp.dp_cd, dp.dp_sgd):
        with pytest.raises(PrivacyBudgetError, match="exceed"):
            solver(_untouchable(prob), epsilon=1.0, delta=DELTA, passes=1, random_state=0,
                   budget=budget, **({"batch_size": 20, "neighboring_relation": "replace_one",
                                      "sampling": "shuffle"} if solver is dp.dp_sgd else {}))
    assert (budget.spent_epsilon, budget.spent_delta) == spent      # refused: not charged
    assert len(budget.ledger) == 2


def test_estimator_fits_spend_the_budget():
    X, y, _ = dp.datasets.make_imbalanced_regression(200, 4, random_state=1)
    budget = Budget(2.0, 2e-4, accountant="basic-composition")
    from dpsco_core.estimators import DPLasso

    for _ in range(2):
        DPLasso(alpha=0.01, epsilon=1.0, delta=1e-4, passes=1, random_state=0,
                budget=budget).fit(X, y)
    model = DPLasso(alpha=0.01, epsilon=1.0, delta=1e-4, passes=1, budget=budget)
    with pytest.raises(PrivacyBudgetError):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    from sklearn.base import clone

    assert clone(model).budget is budget        # clones share (and charge) one budget


def test_rdp_budget_equals_the_accountant_on_the_same_events():
    prob = _problem()
    budget = Budget(3.0, DELTA)
    events = []
    for seed in range(3):
        res = dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, random_state=seed,
                       budget=budget)
        events.append(res.privacy.event)
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    for event in events:
        acc.compose(event)
    assert budget.spent_epsilon == acc.get_epsilon(DELTA)
    assert budget.remaining_epsilon == 3.0 - acc.get_epsilon(DELTA)
    assert budget.spent_delta == DELTA and budget.remaining_delta == 0.0
    assert budget.ledger == tuple(events)
    # RDP composes three epsilon = 1 fits to well under 3 (the 1.52 for dp-accounting).
    assert 1.0 < budget.spent_epsilon < 2.0
    # The refusal comes when the composed epsilon would pass the budget, not the sum.
    small = Budget(1.4, DELTA)
    n_fits = 0
    with pytest.raises(PrivacyBudgetError):
        while True:
            dp.dp_cd(_untouchable(prob) if n_fits >= 2 else prob, epsilon=1.0, delta=DELTA,
                     passes=1, random_state=0, budget=small)
            n_fits += 1
    assert n_fits == 2 and small.spent_epsilon <= 1.4


def test_mixing_relations_is_refused():
    prob = _problem()
    budget = Budget(10.0, DELTA)
    dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, random_state=0, budget=budget)
    assert budget.neighboring_relation is NeighboringRelation.REPLACE_ONE
    before = budget.spent_epsilon
    with pytest.raises(PrivacyBudgetError, match="relation"):
        dp.dp_sgd(_untouchable(prob), epsilon=1.0, delta=DELTA, passes=1, batch_size=20,
                  random_state=0, budget=budget)      # Poisson: add/remove-one
    with pytest.raises(PrivacyBudgetError, match="relation"):
        spend(budget, GaussianDpEvent(3.0), neighboring_relation="zero_out")
    assert budget.spent_epsilon == before and len(budget.ledger) == 1
    fixed = Budget(10.0, DELTA, neighboring_relation="zero_out")
    with pytest.raises(PrivacyBudgetError, match="relation"):
        dp.dp_cd(_untouchable(prob), epsilon=1.0, delta=DELTA, passes=1, budget=fixed)


def test_unsupported_events_are_refused_uncharged():
    budget = Budget(5.0, 1e-3, neighboring_relation="replace_one")
    with pytest.raises(UnsupportedEventError, match="basic-composition"):
        spend(budget, EpsilonDeltaDpEvent(1.0, 1e-6))     # no RDP curve
    gdp = Budget(5.0, 1e-3, accountant="gdp", neighboring_relation="replace_one")
    with pytest.raises(UnsupportedEventError):
        spend(gdp, LaplaceDpEvent(1.0))
    assert budget.spent_epsilon == 0.0 and gdp.spent_epsilon == 0.0
    basic = Budget(5.0, 1e-3, accountant="basic-composition", neighboring_relation="replace_one")
    spend(basic, EpsilonDeltaDpEvent(1.0, 1e-6))
    spend(basic, LaplaceDpEvent(2.0))                       # 0.5-DP
    assert basic.spent_epsilon == pytest.approx(1.5) and basic.spent_delta == pytest.approx(1e-6)
    pure = PureDpAccountant(NeighboringRelation.REPLACE_ONE)
    pure.compose(EpsilonDeltaDpEvent(1.0, 1e-6)).compose(LaplaceDpEvent(2.0))
    assert basic.spent_epsilon == pure.epsilon
    with pytest.raises(PrivacyBudgetError):                  # a non-private run never fits
        dp.dp_cd(_untouchable(_problem()), epsilon=np.inf, delta=DELTA, passes=1,
                 budget=Budget(100.0, DELTA))


def test_failed_before_the_data_is_not_charged():
    budget = Budget(5.0, DELTA)
    prob = _problem()
    with pytest.raises(ValueError, match="smoothness"):
        dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, smoothness="bogus", budget=budget)
    with pytest.raises(ValueError, match="epsilon"):
        dp.dp_cd(prob, epsilon=-1.0, delta=DELTA, passes=1, budget=budget)
    hinge = dp.Problem(prob.X, np.sign(prob.y) + (prob.y == 0), loss="hinge")
    with pytest.raises(ValueError, match="smooth loss"):
        dp.dp_cd(hinge, epsilon=1.0, delta=DELTA, passes=1, smoothness="private",
                 budget=budget)
    with pytest.raises(TypeError, match="budget"):
        dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, budget=5.0)
    assert budget.spent_epsilon == 0.0 and budget.ledger == ()


def test_private_smoothness_is_charged_before_it_reads_the_data():
    prob = _problem()
    budget = Budget(0.5, DELTA)
    with pytest.raises(PrivacyBudgetError):
        dp.dp_cd(_untouchable(prob), epsilon=1.0, delta=DELTA, passes=1,
                 smoothness="private", budget=budget)
    budget = Budget(1.0, DELTA)
    res = dp.dp_cd(prob, epsilon=1.0, delta=DELTA, passes=1, smoothness="private",
                   random_state=0, budget=budget)
    assert budget.ledger == (res.privacy.event,)


def test_grid_charges_every_run():
    prob = _problem()
    budget = Budget(100.0, DELTA)
    grid = dp.dp_cd_grid(prob, epsilon=1.0, delta=DELTA, passes=1, steps=[0.5, 1.0],
                         clips=[1.0], n_seeds=2, random_state=0, budget=budget)
    acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    acc.compose(grid.privacy.event, 4)
    assert budget.spent_epsilon == acc.get_epsilon(DELTA)


def test_concurrent_charges_never_overspend():
    budget = Budget(5.0, 0.0, accountant="basic-composition", neighboring_relation="zero_out")
    results, barrier = [], threading.Barrier(16)

    def worker():
        barrier.wait()
        try:
            spend(budget, LaplaceDpEvent(1.0))
            results.append(True)
        except PrivacyBudgetError:
            results.append(False)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(results) == 5 and budget.spent_epsilon == pytest.approx(5.0)


def test_mechanisms_charge_the_budget():
    from dpsco_core import mechanisms as mech

    budget = Budget(2.0, 1e-3, accountant="basic-composition", neighboring_relation="replace_one")
    mech.laplace_mechanism([1.0], sensitivity=1.0, epsilon=0.5, random_state=0, budget=budget)
    mech.report_noisy_max([0.0, 1.0], sensitivity=1.0, epsilon=0.5, random_state=0,
                          budget=budget)
    # The floating-point sampler's analytic calibration spends exactly (0.5, 1e-4); the exact
    # sampler's zCDP calibration converts to slightly more under basic composition.
    mech.gaussian_mechanism([1.0], sensitivity=1.0, epsilon=0.5, delta=1e-4, random_state=0,
                            secure=False, budget=budget)
    assert budget.spent_epsilon == pytest.approx(1.5, rel=1e-9)
    assert budget.spent_delta == pytest.approx(1e-4)

    with pytest.raises(PrivacyBudgetError):
        mech.exponential_mechanism(np.zeros(2), sensitivity=1.0, epsilon=1.0, budget=budget)
    with pytest.raises(PrivacyBudgetError):
        mech.laplace_mechanism(np.zeros(2), sensitivity=1.0, epsilon=0.6, budget=budget)
    with pytest.raises(ValueError, match="neighboring_relation"):
        mech.laplace_mechanism([1.0], sensitivity=1.0, epsilon=0.1, budget=Budget(1.0, 1e-5))


class _UntouchableStream:
    """A (T, p) stream whose shape is public and whose values raise when read."""

    def __init__(self, T, p):
        self.shape = (T, p)

    def __array__(self, *args, **kwargs):
        raise DataTouched("the stream was read before the budget check")


def test_tree_aggregation_charges_the_whole_stream_before_any_leaf():
    from dpsco_core.privacy.events import SingleEpochTreeAggregationDpEvent
    from dpsco_core.tree import TreeAggregation, tree_aggregation

    T, p, sigma, sens = 8, 3, 12.0, 1.0
    budget = Budget(0.8, DELTA, neighboring_relation="zero_out")
    tree = TreeAggregation(p, T, noise_scale=sigma, random_state=0, budget=budget,
                           sensitivity=sens)
    assert budget.ledger == (SingleEpochTreeAggregationDpEvent(sigma / sens, T),)
    ref = RdpAccountant(budget.orders, neighboring_relation=NeighboringRelation.ZERO_OUT)
    ref.compose(SingleEpochTreeAggregationDpEvent(sigma / sens, T))
    assert budget.spent_epsilon == pytest.approx(ref.get_epsilon(DELTA), rel=1e-12)
    spent = budget.spent_epsilon
    for _ in range(T):                      # the T releases are covered: nothing more charged
        tree.next(np.zeros(p))
    assert budget.spent_epsilon == spent and len(budget.ledger) == 1

    # A second stream would exceed (epsilon 0.65 alone, more than 0.8 composed): refused before the stream is read,
    # and not charged; so is a stream without noise (no finite guarantee).
    with pytest.raises(PrivacyBudgetError, match="exceed"):
        tree_aggregation(_UntouchableStream(T, p), noise_scale=sigma, budget=budget,
                         sensitivity=sens, neighboring_relation="zero_out")
    with pytest.raises(PrivacyBudgetError, match="exceed"):
        TreeAggregation(p, T, noise_scale=0.0, budget=budget, sensitivity=sens)
    assert budget.spent_epsilon == spent and len(budget.ledger) == 1

    # Within a larger budget the function form charges once, then reads the stream.
    big = Budget(2.0, DELTA, neighboring_relation="zero_out")
    out = tree_aggregation(np.zeros((T, p)), noise_scale=sigma, random_state=1, budget=big,
                           sensitivity=sens)
    assert out.shape == (T, p) and len(big.ledger) == 1


def test_tree_aggregation_refuses_mixed_relations_and_needs_a_sensitivity():
    from dpsco_core.tree import TreeAggregation

    budget = Budget(5.0, DELTA, neighboring_relation="zero_out")
    with pytest.raises(PrivacyBudgetError, match="relation"):
        TreeAggregation(3, 8, noise_scale=12.0, budget=budget, sensitivity=1.0,
                        neighboring_relation="replace_one")
    with pytest.raises(UnsupportedEventError):   # no tree analysis under add/remove-one
        TreeAggregation(3, 8, noise_scale=12.0, budget=Budget(5.0, DELTA), sensitivity=1.0,
                        neighboring_relation="add_or_remove_one")
    with pytest.raises(ValueError, match="sensitivity"):
        TreeAggregation(3, 8, noise_scale=12.0, budget=budget)
    with pytest.raises(ValueError, match="sensitivity"):
        TreeAggregation(3, 8, noise_scale=12.0, budget=budget, sensitivity=-1.0)
    assert len(budget.ledger) == 0
    # without a relation, the budget's own is used
    TreeAggregation(3, 8, noise_scale=12.0, budget=budget, sensitivity=1.0)
    assert budget.neighboring_relation is NeighboringRelation.ZERO_OUT and len(budget.ledger) == 1


def test_budget_validation_and_copies():
    with pytest.raises(ValueError, match="epsilon"):
        Budget(0.0, 1e-5)
    with pytest.raises(ValueError, match="delta"):
        Budget(1.0, 0.0)                    # pure budgets need basic composition
    with pytest.raises(ValueError, match="accountant"):
        Budget(1.0, 1e-5, accountant="zcdp")
    with pytest.raises(ValueError, match="neighboring_relation"):
        Budget(1.0, 1e-5, neighboring_relation="swap")
    import copy
    import pickle

    budget = Budget(1.0, 1e-5)
    assert copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(budget)
    assert "spent_epsilon=0" in repr(budget)


def _solver_cases():
    from dpsco_core.mlmc import mlmc_dp_sco
    from dpsco_core.solvers import frank_wolfe as fw
    from dpsco_core.solvers import mirror_descent as md
    from dpsco_core.solvers import srgd_baselines as sb

    X, y, _ = dp.datasets.make_imbalanced_regression(256, 4, random_state=2)
    X = X / np.abs(X).max()
    plain = dp.Problem(X, y, loss="half_squared")
    lasso = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.01))
    single = dict(epsilon=1.0, delta=DELTA, beta=1.0)
    return [
        ("dp_cd", dp.dp_cd, lasso, dict(epsilon=1.0, delta=DELTA, passes=1)),
        ("dp_cd_grid", dp.dp_cd_grid, lasso,
         dict(epsilon=1.0, delta=DELTA, passes=1, steps=[1.0], clips=[1.0])),
        ("dp_sgd", dp.dp_sgd, lasso, dict(epsilon=1.0, delta=DELTA, passes=1, batch_size=32)),
        ("dp_srgd", dp.dp_srgd, plain, single),
        ("dp_sgd_single_epoch", sb.dp_sgd_single_epoch, plain, single),
        ("accelerated_dp_sgd", sb.accelerated_dp_sgd, plain, single),
        ("dp_srg", sb.dp_srg, plain, single),
        ("vr_frank_wolfe", fw.vr_frank_wolfe, plain, dict(epsilon=1.0)),
        ("ttz_frank_wolfe", fw.ttz_frank_wolfe, plain, dict(epsilon=1.0, n_iter=5)),
        ("projected_dp_sgd_l1", fw.projected_dp_sgd_l1, plain,
         dict(epsilon=1.0, delta=DELTA, batch_size=32)),
        ("noisy_mirror_descent", md.noisy_mirror_descent, plain,
         dict(epsilon=1.0, delta=DELTA, steps=5)),
        ("localized_mirror_descent", md.localized_mirror_descent, plain,
         dict(epsilon=1.0, delta=DELTA, max_steps=3)),
        ("mlmc_dp_sco", mlmc_dp_sco, plain,
         dict(epsilon=1.0, delta=DELTA, radius=1.0, lipschitz=1.0, n_phases=2, n_copies=8)),
    ]


@pytest.mark.parametrize("case", _solver_cases(), ids=lambda c: c[0])
def test_every_solver_charges_its_event_and_refuses_untouched(case):
    name, solver, problem, kwargs = case
    budget = Budget(1e-3, 0.5, accountant="basic-composition")
    with pytest.raises(PrivacyBudgetError):
        solver(_untouchable(problem), budget=budget, random_state=0, **kwargs)
    assert budget.ledger == ()
    budget = Budget(100.0, 0.5, accountant="basic-composition")
    res = solver(problem, budget=budget, random_state=0, **kwargs)
    (charged,) = budget.ledger
    # One release, charged at most what its report states (the report's (epsilon, delta)).
    assert budget.spent_epsilon <= res.privacy.epsilon * (1 + 1e-9)
    assert budget.spent_delta <= max(res.privacy.delta, 0.0) + 1e-15
    assert budget.neighboring_relation is res.privacy.neighboring_relation


def test_pld_budget_matches_the_pld_accountant_and_refuses_overspending():
    pytest.importorskip("dp_accounting")
    from dpsco_core.exceptions import PrivacyBudgetError, UnsupportedEventError
    from dpsco_core.privacy import (ApproximateRdpDpEvent, GaussianDpEvent, PldAccountant,
                                    PoissonSampledDpEvent, RdpAccountant, SelfComposedDpEvent)
    relation = NeighboringRelation.ADD_OR_REMOVE_ONE
    sgd = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 1000)
    budget = Budget(2.0, 1e-5, accountant="pld", neighboring_relation=relation)
    assert budget.accountant == "pld"
    spent = budget.charge(sgd, neighboring_relation=relation)
    pld = PldAccountant(relation).compose(sgd).get_epsilon(1e-5)
    assert spent == budget.spent_epsilon == pld
    assert budget.spent_delta == 1e-5
    # tighter than RDP for the same release
    assert pld < RdpAccountant(None, relation).compose(sgd).get_epsilon(1e-5)
    # a refused charge leaves the state as it was (sigma = 2 ten times: epsilon 7.5 alone; the
    # PLD of sigma = 0.5 ten times, refused just the same, took 6 s of this test)
    before = budget.spent_epsilon
    with pytest.raises(PrivacyBudgetError):
        budget.charge(SelfComposedDpEvent(GaussianDpEvent(2.0), 10), neighboring_relation=relation)
    assert budget.spent_epsilon == before and len(budget.ledger) == 1
    with pytest.raises(UnsupportedEventError):
        budget.charge(ApproximateRdpDpEvent(0.01), neighboring_relation=relation)
    budget.charge(GaussianDpEvent(20.0), neighboring_relation=relation)
    both = PldAccountant(relation).compose(sgd).compose(GaussianDpEvent(20.0))
    assert budget.spent_epsilon == both.get_epsilon(1e-5) and len(budget.ledger) == 2


def test_pld_budget_without_dp_accounting_says_how_to_install(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "dp_accounting.pld", None)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match="pip install"):
        Budget(1.0, 1e-5, accountant="pld")


def test_pure_releases_alone_cost_their_sum_and_no_grid_warning():
    # Pure releases alone (an estimator's private quantile, charged before its fit) have a
    # flat RDP curve at large orders: the optimum is the grid's top edge, and basic
    # composition is the limit. The budget takes the smaller of the two, silently.
    import warnings

    from dpsco_core.exceptions import OrderGridWarning

    budget = Budget(1.0, DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderGridWarning)
        spend(budget, EpsilonDeltaDpEvent(0.03), neighboring_relation="replace_one")
        spend(budget, LaplaceDpEvent(50.0), neighboring_relation="replace_one")
        assert budget.spent_epsilon == pytest.approx(0.05, rel=1e-12)
    spend(budget, GaussianDpEvent(20.0), neighboring_relation="replace_one")
    ref = RdpAccountant(budget.orders, NeighboringRelation.REPLACE_ONE)
    for event in budget.ledger:
        ref.compose(event)
    assert budget.spent_epsilon == ref.get_epsilon(DELTA)


def test_default_orders_add_the_zcdp_optimum_of_the_budget():
    from dpsco_core.privacy.accountants import DEFAULT_RDP_ORDERS
    from dpsco_core.privacy.calibration import zcdp_centred_orders

    budget = Budget(0.5, 1e-7)
    assert set(DEFAULT_RDP_ORDERS) | set(zcdp_centred_orders(0.5, 1e-7)) == set(budget.orders)
    assert np.all(np.diff(budget.orders) > 0)
    assert Budget(0.5, 1e-7, orders=[2.0, 8.0]).orders == [2.0, 8.0]
    assert Budget(0.5, 1e-7, accountant="gdp").orders is None
    # A Gaussian that spends the budget: the tighter grid finds at most dp-accounting's value.
    g = GaussianDpEvent(12.0)
    spend(budget, g, neighboring_relation="replace_one")
    coarse = RdpAccountant(None, NeighboringRelation.REPLACE_ONE).compose(g).get_epsilon(1e-7)
    assert budget.spent_epsilon <= coarse


def test_check_releases_counts_each_release_as_it_will_be_charged():
    from dpsco_core.privacy import ComposedDpEvent

    g = GaussianDpEvent(3.0)
    budget = Budget(3.0, 2e-5, accountant="basic-composition",
                    neighboring_relation="replace_one")
    composed = budget.check(ComposedDpEvent((g, g)), neighboring_relation="replace_one",
                            delta=1e-5)
    each = budget.check_releases([(g, 1e-5), (g, 1e-5)], neighboring_relation="replace_one")
    assert each > composed and budget.ledger == ()
    spend(budget, g, neighboring_relation="replace_one", delta=1e-5)
    spend(budget, g, neighboring_relation="replace_one", delta=1e-5)
    assert budget.spent_epsilon == pytest.approx(each, rel=1e-12)
    with pytest.raises(PrivacyBudgetError, match="these 3 releases"):
        budget.check_releases([(g, 1e-5)] * 3, neighboring_relation="replace_one")
    with pytest.raises(ValueError, match="at least one"):
        budget.check_releases([], neighboring_relation="replace_one")
    with pytest.raises(TypeError, match="DpEvent"):
        budget.check_releases([(1.0, None)], neighboring_relation="replace_one")
    # RDP mode: one by one is the composition
    rdp = Budget(3.0, 1e-5)
    assert rdp.check_releases([(g, None), (g, None)], neighboring_relation="replace_one") == \
        rdp.check(ComposedDpEvent((g, g)), neighboring_relation="replace_one")


_BAD_PUBLIC = [
    ("report_noisy_max 2-d", lambda b: dp.mechanisms.report_noisy_max(
        np.zeros((2, 2)), sensitivity=1.0, epsilon=1.0, budget=b)),
    ("report_noisy_max empty", lambda b: dp.mechanisms.report_noisy_max(
        np.array([]), sensitivity=1.0, epsilon=1.0, budget=b)),
    ("report_noisy_max n_threads", lambda b: dp.mechanisms.report_noisy_max(
        np.ones(2), sensitivity=1.0, epsilon=1.0, n_threads=0, budget=b)),
    ("exponential random_state", lambda b: dp.mechanisms.exponential_mechanism(
        np.ones(2), sensitivity=1.0, epsilon=1.0, random_state="x", budget=b)),
    ("gaussian random_state", lambda b: dp.mechanisms.gaussian_mechanism(
        1.0, sensitivity=1.0, epsilon=1.0, delta=1e-6, random_state=-1, budget=b)),
    ("gaussian strings", lambda b: dp.mechanisms.gaussian_mechanism(
        "abc", sensitivity=1.0, epsilon=1.0, delta=1e-6, budget=b)),
    ("laplace n_threads", lambda b: dp.mechanisms.laplace_mechanism(
        1.0, sensitivity=1.0, epsilon=1.0, n_threads=0, budget=b)),
    ("grid_quantile 2-d", lambda b: dp.mechanisms.grid_quantile(
        np.zeros((2, 2)), [0.0, 1.0], q=0.5, n_public=2, epsilon=1.0, budget=b)),
    ("grid_quantile random_state", lambda b: dp.mechanisms.grid_quantile(
        np.zeros(2), [0.0, 1.0], q=0.5, n_public=2, epsilon=1.0, random_state="x", budget=b)),
    ("tree random_state", lambda b: dp.TreeAggregation(
        3, 4, noise_scale=1.0, sensitivity=1.0, random_state="x", budget=b)),
    ("dp_ssp random_state", lambda b: dp.solvers.ssp.dp_ssp(
        dp.Problem(np.ones((20, 2)), np.ones(20), bounds=(-1, 1), label_bound=2.0),
        epsilon=1.0, delta=1e-6, random_state="x", budget=b)),
]


@pytest.mark.parametrize("call", [c for _, c in _BAD_PUBLIC], ids=[n for n, _ in _BAD_PUBLIC])
def test_an_invalid_public_argument_costs_nothing(call):
    # Session 16: the mechanisms, the tree and SSP charged the budget, then rejected a bad
    # shape, seed or thread count. The Budget's promise: a call that fails on an invalid
    # argument costs nothing. (Invalid *data*, read after the charge, stays charged.)
    budget = Budget(10.0, 1e-5, neighboring_relation="replace_one")
    with pytest.raises((ValueError, TypeError)):
        call(budget)
    assert budget.ledger == ()
    with pytest.raises(ValueError, match="finite"):
        dp.mechanisms.laplace_mechanism(np.array([np.nan]), sensitivity=1.0, epsilon=1.0,
                                        budget=budget)
    assert len(budget.ledger) == 1


@pytest.mark.parametrize("epsilon, delta", [(1e300, 1e-300), (1e300, 0.1), (1e-300, 1e-300),
                                            (1e-300, 0.1), (5e-324, 0.5)])
def test_budget_at_degenerate_epsilons(epsilon, delta):
    """Pinned (session 17, hypothesis outside CI): the default "rdp" mode adds the 49 orders
    around its own zCDP optimum 1 + sqrt(log(1/delta) / rho); at epsilon = 1e300 they all
    rounded to 1 ("orders must all be in (1, inf); got 1.0", naming an argument nobody
    passed), and at epsilon = 1e-300 rho underflowed to 0 (ZeroDivisionError). Orders outside
    (1, inf) are now left out."""
    from dpsco_core.privacy.calibration import zcdp_centred_orders

    budget = Budget(epsilon, delta)
    assert np.all(np.asarray(budget.orders) > 1.0) and np.all(np.isfinite(budget.orders))
    assert all(1.0 < a < math.inf for a in zcdp_centred_orders(epsilon, delta))
    try:
        budget.charge(GaussianDpEvent(10.0), neighboring_relation="replace_one")
    except PrivacyBudgetError:
        assert budget.ledger == ()
    assert 0.0 <= budget.spent_epsilon <= epsilon


def test_zcdp_centred_orders_unchanged_at_ordinary_budgets():
    """Bitwise the orders before the filter (values of session 17)."""
    from dpsco_core.privacy.calibration import zcdp_centred_orders

    orders = zcdp_centred_orders(1.0, 1e-6)
    assert len(orders) == 49
    assert (orders[0], orders[24], orders[-1]) == (8.030571665885997, 29.122286663543985,
                                                   113.48914665417594)
