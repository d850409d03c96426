"""``rms_row_norm="private"``: rho released as a private quantile of the row norms, then the
noise-level rule (issue 19, session 15). The quantile is a release: its pure epsilon_q is in
every fit's report, charged to the budget, the same for every one-vs-rest class."""

import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

import dpsco_core as dp  # noqa: E402
from dpsco_core import estimators as est  # noqa: E402
from dpsco_core import mechanisms  # noqa: E402
from dpsco_core.estimators import DPLasso, DPLogisticRegression  # noqa: E402
from dpsco_core.exceptions import PrivacyBudgetError  # noqa: E402
from dpsco_core.privacy import Budget, pure_share_epsilon  # noqa: E402
from dpsco_core.privacy.events import ComposedDpEvent, EpsilonDeltaDpEvent  # noqa: E402
from dpsco_core.solvers.ssp import clip_grid  # noqa: E402

from test_estimators_rms import BOUND, _data, _spy  # noqa: E402

# No grid-edge warning reaches the user: the budget charges the pure quantile alone without
# one, and the reports' orders hold their optimum (session 16; it was ignored here before).
pytestmark = pytest.mark.filterwarnings(
    "error::dpsco_core.exceptions.OrderGridWarning")


def _spy_quantile(monkeypatch):
    """Record every grid_quantile call of the estimators (values and keyword arguments)."""
    calls, original = [], mechanisms.grid_quantile

    def spy(values, grid, **kwargs):
        calls.append((np.array(values, copy=True), np.array(grid), kwargs))
        return original(values, grid, **kwargs)

    monkeypatch.setattr(mechanisms, "grid_quantile", spy)
    return calls


def _lasso(**kw):
    kw = {"bounds": (-BOUND, BOUND), **kw}
    return DPLasso(alpha=1e-3, epsilon=1.0, label_bound=10.0, passes=3, random_state=0,
                   rms_row_norm="private", **kw)


def _recomputed(report):
    acc = dp.privacy.RdpAccountant(report.orders, report.neighboring_relation,
                                   conversion=report.conversion)
    return acc.compose(report.event).get_epsilon(report.delta)


@pytest.mark.parametrize("solver", ["cd", "sgd"])
def test_the_report_composes_the_quantile_and_the_fit(monkeypatch, solver):
    X, y = _data()
    q_calls, fits = _spy_quantile(monkeypatch), _spy(monkeypatch, solver)
    model = _lasso(solver=solver).fit(X, y)
    n, p = X.shape
    delta = 1.0 / n**2
    eps_q = est.rms_quantile_epsilon(1.0, delta, n)
    assert len(q_calls) == 1 and len(fits) == 1 and model.solver_ == solver
    values, grid, kwargs = q_calls[0]
    # the features' norms (the intercept's public column excluded), on the public grid below
    # the features' row bound, at the 0.75-quantile of n public records
    np.testing.assert_allclose(values, np.linalg.norm(X, axis=1), rtol=1e-12)
    np.testing.assert_allclose(grid, clip_grid(BOUND * math.sqrt(p)), rtol=1e-12)
    assert kwargs["q"] == est.RMS_QUANTILE and kwargs["n_public"] == n
    assert kwargs["epsilon"] == pytest.approx(eps_q, rel=1e-12)
    # the public base measure g / R (session 16): a function of the grid alone
    np.testing.assert_allclose(kwargs["log_base"],
                               est.RMS_QUANTILE_BASE_POWER * np.log(grid / grid[-1]),
                               rtol=1e-12, atol=1e-15)
    assert model.rms_row_norm_ in grid
    report = model.privacy_
    fit_event = fits[0][1]
    assert report.event == ComposedDpEvent((EpsilonDeltaDpEvent(eps_q, 0.0),
                                            _fit_event_of(model, fits[0])))
    assert report.unconditional
    assert _recomputed(report) == pytest.approx(report.epsilon, rel=1e-9)
    assert 0.99 <= report.epsilon <= 1.0
    assert report.conversion == ("mironov" if solver == "cd" else "improved")
    # the fit ran at the epsilon the share gave, and the rule used the released rho
    assert fit_event["epsilon"] < 1.0
    assert report.neighboring_relation.value == ("replace_one" if solver == "cd"
                                                 else "zero_out")


def test_the_composed_report_states_each_assumption_once():
    # review s19: the quantile-and-fit report listed the clipping and floating-point
    # assumptions twice (the fit's, then the defaults again); one-vs-rest alike
    X, y = _data()
    for model in (_lasso(solver="cd").fit(X, y),
                  DPLogisticRegression(classes=[0, 1, 2], bounds=(-BOUND, BOUND), passes=2,
                                       random_state=0).fit(X, np.arange(len(y)) % 3)):
        assumptions = model.privacy_.assumptions
        assert len(assumptions) == len(set(assumptions)), assumptions
        assert set(dp.privacy.report.DEFAULT_ASSUMPTIONS) <= set(assumptions)
        assert dp.privacy.SEEDED_ASSUMPTION in assumptions


def _fit_event_of(model, call):
    """The solver's own event for the spied call (its report's)."""
    from dpsco_core.tuning.search import _solver_event

    problem, kw = call
    return _solver_event(model.solver_, kw["epsilon"], kw["delta"], problem.n_samples,
                         problem.n_features, float(kw["passes"]),
                         kw.get("batch_size", 256), bool(kw.get("average", False)),
                         kw.get("sampling", "poisson"))


def test_rho_sets_the_rule_as_a_declared_rho_would(monkeypatch):
    """Given the released rho, the fit is the declared-rho fit at the fit's epsilon."""
    X, y = _data()
    fits = _spy(monkeypatch, "cd")
    private = _lasso(solver="cd").fit(X, y)
    kw = fits[0][1]
    declared = DPLasso(alpha=1e-3, epsilon=kw["epsilon"], bounds=(-BOUND, BOUND),
                       label_bound=10.0, passes=3, random_state=0, solver="cd",
                       rms_row_norm=private.rms_row_norm_)
    declared.fit(X, y)
    again = fits[1][1]
    assert again["step"] == kw["step"] and again["clip"] == pytest.approx(kw["clip"],
                                                                          rel=1e-12)
    np.testing.assert_allclose(again["smoothness"], kw["smoothness"], rtol=1e-12)


@pytest.mark.parametrize("solver", ["cd", "sgd"])
@pytest.mark.parametrize("bounds", ["symmetric", "shifted"])
def test_worst_neighbours_move_the_quantile_utility_by_at_most_one(monkeypatch, solver,
                                                                   bounds):
    """Replace-one (an extreme record replacing one) and zero-out (a record zeroed): the
    counts behind the quantile move by at most one; every public choice is unchanged. Also
    with bounds [0, 2 BOUND] (session 16: the records are centred on the public midpoint
    BOUND first)."""
    X, y = _data()
    shift = 0.0 if bounds == "symmetric" else BOUND
    X = X + shift
    X2, y2 = X.copy(), y.copy()
    X2[3], y2[3] = 1e6, 10.0
    X3 = X.copy()
    X3[3] = 0.0
    q_calls = _spy_quantile(monkeypatch)
    models = [_lasso(solver=solver, bounds=(shift - BOUND, shift + BOUND)).fit(A, b)
              for A, b in [(X, y), (X2, y), (X3, y)]]
    assert (models[0]._feature_centre is None) == (bounds == "symmetric")
    utilities = [-np.abs(mechanisms._grid_counts(v, g) - kw["q"] * kw["n_public"])
                 for v, g, kw in q_calls]
    for other, call in zip(utilities[1:], q_calls[1:]):
        assert np.max(np.abs(other - utilities[0])) <= 1.0
        np.testing.assert_array_equal(call[1], q_calls[0][1])
        assert call[2]["epsilon"] == q_calls[0][2]["epsilon"]
    assert len({m.privacy_.event for m in models}) == 1


def test_one_vs_rest_releases_one_quantile_for_all_classes(monkeypatch):
    rng = np.random.default_rng(3)
    X = np.clip(rng.normal(size=(1500, 3)), -BOUND, BOUND)
    labels = np.argmax(X @ rng.normal(size=(3, 3)), axis=1)
    q_calls, fits = _spy_quantile(monkeypatch), _spy(monkeypatch, "cd")
    clf = DPLogisticRegression(classes=[0, 1, 2], epsilon=1.0, bounds=(-BOUND, BOUND),
                               passes=3, solver="cd", random_state=0,
                               rms_row_norm="private").fit(X, labels)
    assert len(q_calls) == 1 and len(fits) == 3
    report = clf.privacy_
    delta = 1.0 / 1500**2
    eps_q = est.rms_quantile_epsilon(1.0, delta, 1500)
    events = report.event.events
    assert events[0] == EpsilonDeltaDpEvent(eps_q, 0.0) and len(events) == 4
    assert len(set(events[1:])) == 1
    assert _recomputed(report) == pytest.approx(report.epsilon, rel=1e-9)
    assert 0.99 <= report.epsilon <= 1.0
    assert clf.score(X, labels) > 0.6
    # fits' seeds are independent of each other and of the quantile's
    assert len({id(f[1]["random_state"]) for f in fits}) == 3


def test_budget_pays_the_quantile_and_the_fit_or_refuses_before_reading(monkeypatch):
    X, y = _data()
    budget = Budget(epsilon=2.0, delta=1e-5)
    model = _lasso(solver="cd", budget=budget, delta=1e-6).fit(X, y)
    assert budget.ledger[0] == model.privacy_.event.events[0]
    assert budget.spent_epsilon <= 2.0
    q_calls = _spy_quantile(monkeypatch)
    small = Budget(epsilon=0.5, delta=1e-5)
    with pytest.raises(PrivacyBudgetError):
        _lasso(solver="cd", budget=small, delta=1e-6).fit(X, y)
    assert q_calls == [] and small.ledger == ()
    assert not hasattr(_lasso(solver="cd", budget=small), "coef_")


def test_reproducible_and_seed_dependent():
    X, y = _data(800)
    a = _lasso(solver="cd").fit(X, y)
    b = _lasso(solver="cd").fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.rms_row_norm_ == b.rms_row_norm_
    c = _lasso(solver="cd", ).set_params(random_state=1).fit(X, y)
    assert not np.array_equal(a.coef_, c.coef_)


def test_quantile_epsilon_targets_a_tenth_of_the_records_within_its_shares():
    for n in (50, 150, 1000, 2000, 5000, 10**6):
        delta = 1.0 / n**2
        eps_q = est.rms_quantile_epsilon(1.0, delta, n)
        low = pure_share_epsilon(1.0, delta, est.RMS_QUANTILE_MIN_SHARE)
        high = pure_share_epsilon(1.0, delta, est.RMS_QUANTILE_MAX_SHARE)
        target = 2 * math.log(37) / (0.1 * n)
        assert eps_q == pytest.approx(min(max(target, low), high), rel=1e-12)
    assert est.rms_quantile_epsilon(1.0, 1e-6, 150) == pytest.approx(
        pure_share_epsilon(1.0, 1e-6, 0.25))
    assert est.rms_quantile_epsilon(1.0, 1e-6, 10**6) == pytest.approx(
        pure_share_epsilon(1.0, 1e-6, 0.02))
    assert est.rms_quantile_epsilon(1.0, 1e-6, 2000) == pytest.approx(
        2 * math.log(37) / 200)


def test_needs_a_public_row_bound_and_a_valid_value():
    X, y = _data(300)
    with pytest.raises(ValueError, match="row_norm=R"):
        DPLogisticRegression(epsilon=1.0, solver="cd",
                             rms_row_norm="private").fit(X, (y > 0).astype(int))
    with pytest.raises(ValueError, match="'private'"):
        DPLasso(epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=10.0, solver="cd",
                rms_row_norm="privat").fit(X, y)


def test_sparse_input_and_no_intercept(monkeypatch):
    import scipy.sparse as sp

    X, y = _data(600)
    q_calls = _spy_quantile(monkeypatch)
    dense = _lasso(solver="cd", fit_intercept=False).fit(X, y)
    sparse = _lasso(solver="cd", fit_intercept=False).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(q_calls[0][0], q_calls[1][0], rtol=1e-12)
    assert dense.rms_row_norm_ == sparse.rms_row_norm_
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-9, atol=1e-12)
    # with the intercept's column, CSR and CSC: the features' norms, sliced off the column
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        _lasso(solver="cd").fit(fmt(X), y)
        np.testing.assert_allclose(q_calls[-1][0], np.linalg.norm(X, axis=1), rtol=1e-12)


def test_auto_and_given_pairs_release_no_quantile(monkeypatch):
    X, y = _data()
    q_calls = _spy_quantile(monkeypatch)
    # step and clip given: nothing for rho to set
    model = _lasso(solver="cd", step=1.0, clip=1.0).fit(X, y)
    assert q_calls == [] and model.rms_row_norm_ is None
    # "auto" treats "private" as a given rho: DP-CD unless SSP's ridge ratio is tiny
    model = _lasso(solver="auto").fit(X, y)
    assert model.solver_ == "cd" and len(q_calls) == 1
    model = _lasso(solver="auto").set_params(epsilon=math.inf).fit(X, y)
    assert len(q_calls) == 1 and model.privacy_.epsilon == math.inf


def test_private_rho_is_close_to_the_declared_one_on_standardized_data():
    X, y = _data(4000, p=8)
    X = np.clip(X, -BOUND, BOUND)
    m = _lasso(solver="cd").fit(X[:3000], y[:3000])
    rms = math.sqrt(np.mean(np.sum(X[:3000] ** 2, axis=1)))
    assert 0.8 * rms <= m.rms_row_norm_ <= 1.3 * rms
    declared = DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=10.0,
                       passes=3, random_state=0, solver="cd", rms_row_norm=math.sqrt(8))
    declared.fit(X[:3000], y[:3000])
    assert m.score(X[3000:], y[3000:]) >= declared.score(X[3000:], y[3000:]) - 0.05


def test_auto_default_releases_rho_only_where_the_public_bounds_allow(monkeypatch):
    """The default rms_row_norm="auto" is "private" with a row bound, one public feature
    scale and (regressors) a label bound; otherwise the private selection, as before."""
    X, y = _data(1500)
    q_calls = _spy_quantile(monkeypatch)
    kw = dict(alpha=1e-3, epsilon=1.0, passes=2, n_trials=3, random_state=0, solver="cd")
    model = DPLasso(bounds=(-BOUND, BOUND), label_bound=10.0, **kw).fit(X, y)
    assert model.get_params()["rms_row_norm"] == "auto"
    assert model.solver_ == "cd" and model.selection_ is None and len(q_calls) == 1
    model = DPLasso(row_norm=BOUND * 2, label_bound=10.0, **kw).fit(X, y)
    assert model.rms_row_norm_ is not None and len(q_calls) == 2
    upper = np.array([BOUND, BOUND, BOUND, 2 * BOUND])          # two public scales
    model = DPLasso(bounds=(-upper, upper), label_bound=10.0, **kw).fit(X, y)
    assert model.rms_row_norm_ is None and model.selection_ is not None
    with pytest.warns(dp.exceptions.PrivacyLeakWarning):          # no label bound
        model = DPLasso(bounds=(-BOUND, BOUND), **kw).fit(X, y)
    assert model.rms_row_norm_ is None and model.selection_ is not None
    assert len(q_calls) == 2
    # explicit "private" with bounds that differ: the user's choice, honoured
    model = DPLasso(bounds=(-upper, upper), label_bound=10.0, rms_row_norm="private",
                    **kw).fit(X, y)
    assert model.rms_row_norm_ is not None and len(q_calls) == 3


def test_a_large_intercept_scaling_leaves_the_feature_norms_exact(monkeypatch):
    """rho is a function of the features alone: the norms passed to the quantile are the
    features' whatever the intercept's public constant (no cancellation from s^2)."""
    X, y = _data(400)
    q_calls = _spy_quantile(monkeypatch)
    for s in (1.0, 1e9):
        _lasso(solver="cd", intercept_scaling=s).fit(X, y)
    np.testing.assert_allclose(q_calls[1][0], np.linalg.norm(X, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(q_calls[0][0], q_calls[1][0])
    np.testing.assert_array_equal(q_calls[0][1], q_calls[1][1])


@pytest.mark.parametrize("solver", ["cd", "sgd"])
def test_a_budget_of_the_fits_own_epsilon_and_delta_pays_for_it(solver):
    # The budget accounts over the reports' orders (zcdp_centred_orders of its own epsilon
    # and delta): a fit whose report is within epsilon is within a budget of that epsilon
    # (session 16: DP-SGD's report 0.99976 was charged 1.00002 on dp-accounting's grid alone,
    # and refused).
    X, y = _data(n=300, p=5)
    budget = Budget(epsilon=1.0, delta=1.0 / len(y) ** 2)
    model = DPLasso(alpha=0.01, bounds=(-BOUND, BOUND), label_bound=10.0, solver=solver,
                    random_state=0, budget=budget).fit(X, y)
    assert model.rms_row_norm_ is not None
    assert model.privacy_.epsilon <= 1.0 and budget.spent_epsilon <= 1.0
    if solver == "sgd":     # the report's conversion, the budget's default: the same number
        assert budget.spent_epsilon == pytest.approx(model.privacy_.epsilon, rel=1e-9)


@pytest.mark.parametrize("solver", ["cd", "sgd"])
def test_basic_composition_refuses_one_vs_rest_before_the_quantile(monkeypatch, solver):
    # Basic composition charges the quantile and each of the K fits at its own delta: K
    # conversions, more than one conversion of their composition. The check before the read
    # counts them as they will be charged (session 16: it composed them, passed, and the
    # third class was refused after the quantile and two fits had read the data).
    X, _ = _data()
    y = np.arange(len(X)) % 3
    delta = 1.0 / len(y) ** 2
    relation = "replace_one" if solver == "cd" else "zero_out"
    model = DPLogisticRegression(classes=[0, 1, 2], epsilon=1.0, bounds=(-BOUND, BOUND),
                                 passes=3, random_state=0, rms_row_norm="private",
                                 solver=solver)
    fits = model.fit(X, y).privacy_.event.events
    one_by_one = Budget(10.0, 1e-3, accountant="basic-composition",
                        neighboring_relation=relation).check_releases(
        [(fits[0], None)] + [(fit, delta / 3) for fit in fits[1:]],
        neighboring_relation=relation)
    budget = Budget(one_by_one * 0.999, 3 * delta, accountant="basic-composition",
                    neighboring_relation=relation)
    q_calls = _spy_quantile(monkeypatch)
    with pytest.raises(PrivacyBudgetError):
        model.set_params(budget=budget).fit(X, y)
    assert q_calls == [] and budget.ledger == ()
    enough = Budget(one_by_one * 1.001, 3 * delta, accountant="basic-composition",
                    neighboring_relation=relation)
    model.set_params(budget=enough).fit(X, y)
    assert len(enough.ledger) == 4 and enough.spent_epsilon <= one_by_one * (1 + 1e-9)


def test_row_bound_whose_square_overflows_is_refused_before_the_quantile():
    """bounds +-1e300: rho^2 of the released quantile overflowed (OverflowError) after the
    quantile had been charged (session 20 review); "private" now refuses naming the bound,
    "auto" does not release rho, both before any charge."""
    import warnings

    from dpsco_core.privacy import Budget

    X = np.random.default_rng(0).normal(size=(200, 3))
    y = X @ np.array([1.0, 2.0, 3.0])
    budget = Budget(10.0, 0.5)
    with pytest.raises(ValueError, match="row bound"):
        DPLasso(bounds=(-1e300, 1e300), label_bound=10.0, rms_row_norm="private",
                feature_scaling=None, budget=budget, random_state=0).fit(X, y)
    assert budget.ledger == ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = DPLasso(bounds=(-1e300, 1e300), label_bound=10.0, feature_scaling=None,
                            budget=budget, random_state=0).fit(X, y)
            assert model.rms_row_norm_ is None
        except ValueError:
            assert budget.ledger == ()
