"""The regressors' solver="auto" (SSP or DP-CD by a public rule), solver="ssp", and the public
label range label_bound=(lo, hi) (issue 19)."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

import dpsco_core as dp  # noqa: E402
from dpsco_core.estimators import (SSP_MAX_RIDGE_RATIO, DPElasticNet, DPLasso,  # noqa: E402
                                   DPLogisticRegression, auto_solver)
from dpsco_core.solvers.ssp import dp_ssp, ssp_ridge_ratio  # noqa: E402


def _regression(n=4000, p=4, seed=0, offset=3.0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -4, 4)
    y = np.clip(X @ np.linspace(1.0, -1.0, p) + offset + 0.5 * rng.normal(size=n), 0.0, 6.0)
    return X, y


def test_label_range_centres_on_the_public_midpoint():
    """(lo, hi) is the same fit as the labels shifted by (lo + hi) / 2 with the half-width as
    the bound, the centre added back to intercept_ (bitwise, same seed)."""
    X, y = _regression()
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4, 4), solver="cd", step=1.0, clip=2.0,
              passes=3, random_state=0)
    ranged = DPLasso(label_bound=(0.0, 6.0), **kw).fit(X, y)
    shifted = DPLasso(label_bound=3.0, **kw).fit(X, y - 3.0)
    np.testing.assert_array_equal(ranged.coef_, shifted.coef_)
    assert ranged.intercept_ == shifted.intercept_ + 3.0
    assert ranged.privacy_ == shifted.privacy_
    np.testing.assert_allclose(ranged.predict(X), shifted.predict(X) + 3.0, rtol=1e-14)
    # labels outside the range are clipped onto it, as with a bound Y
    far = y.copy()
    far[0] = 1e6
    np.testing.assert_array_equal(DPLasso(label_bound=(0.0, 6.0), **kw).fit(X, far).coef_,
                                  DPLasso(label_bound=(0.0, 6.0), **kw)
                                  .fit(X, np.where(far > 6, 6.0, far)).coef_)


@pytest.mark.parametrize("bad, match", [((1.0, 1.0), "lo < hi"), ((2.0, 1.0), "lo < hi"),
                                        ((0.0, np.inf), "label_bound"),
                                        ((0.0, 1.0, 2.0), "number Y"),
                                        ((0.0, np.nan), "label_bound")])
def test_label_range_refusals(bad, match):
    X, y = _regression(200)
    with pytest.raises(ValueError, match=match):
        DPLasso(label_bound=bad, bounds=(-4, 4), step=1.0, clip=1.0).fit(X, y)


def test_label_range_needs_the_intercept():
    X, y = _regression(200)
    with pytest.raises(ValueError, match="fit_intercept=True"):
        DPLasso(label_bound=(0.0, 6.0), bounds=(-4, 4), fit_intercept=False).fit(X, y)


def test_auto_runs_ssp_when_the_ridge_is_small_and_the_bounds_public():
    X, y = _regression()
    model = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-4, 4), label_bound=(0.0, 6.0),
                    random_state=0, rms_row_norm=None).fit(X, y)
    assert model.solver_ == "ssp" and model.n_iter_ == 1.0
    assert model.privacy_.epsilon <= 1.0 and model.privacy_.unconditional
    # the estimator's release is dp_ssp's on the estimator's problem, bitwise
    problem = model._problem(X, y - 3.0, "half_squared", model._penalty(), label_bound=3.0)
    ref = dp_ssp(problem, epsilon=1.0, delta=1.0 / len(y) ** 2, random_state=0)
    np.testing.assert_array_equal(model.coef_, ref.coef[:-1])
    assert model.intercept_ == float(ref.coef[-1]) + 3.0
    acc = dp.privacy.RdpAccountant(None, model.privacy_.neighboring_relation)
    assert acc.compose(model.privacy_.event).get_epsilon(model.privacy_.delta) == \
        pytest.approx(model.privacy_.epsilon)
    assert model.score(X, y) > 0.8


@pytest.mark.parametrize("case", ["no label bound", "no bounds", "step given", "clip given",
                                  "large dimension"])
def test_auto_runs_dp_cd_otherwise(case):
    X, y = _regression(2000)
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4, 4), label_bound=6.0, passes=2,
              n_trials=3, random_state=0)
    if case == "no label bound":
        kw.pop("label_bound")
    elif case == "no bounds":
        kw.pop("bounds")
        kw.pop("label_bound")
    elif case == "step given":
        kw["step"] = 1.0
    elif case == "clip given":
        kw["clip"] = 1.0
    else:
        X, y = _regression(500, p=40)
    with pytest.warns() if case in ("no label bound", "no bounds") else _no_warning():
        model = DPLasso(**kw).fit(X, y)
    assert model.solver_ == "cd"


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_auto_rule_is_public_and_monotone():
    """The rule reads the problem's shape, bounds and the budget, never the data; its ratio
    falls with n and epsilon and grows with the dimension."""
    X, y = _regression(3000)
    problem = dp.Problem(np.hstack([X, np.ones((3000, 1))]), y - 3.0, loss="half_squared",
                         bounds=(-4, 4), label_bound=3.0)
    assert auto_solver(problem, epsilon=1.0, delta=1e-7) == "ssp"
    assert auto_solver(problem, epsilon=1.0, delta=1e-7, hyperparameters_given=True) == "cd"
    assert auto_solver(problem, epsilon=np.inf, delta=1e-7) == "ssp"
    # a public rms row norm: DP-CD with the noise-level rule (SSP for the exact, infinite
    # epsilon fit)
    assert auto_solver(problem, epsilon=1.0, delta=1e-7, rms_row_norm_given=True) == "cd"
    assert auto_solver(problem, epsilon=np.inf, delta=1e-7, rms_row_norm_given=True) == "ssp"
    # ... unless SSP's ridge is negligible (ratio <= 0.02)
    assert ssp_ridge_ratio(5, n_samples=3000, epsilon=1.0, delta=1e-7) > 0.02
    assert ssp_ridge_ratio(5, n_samples=3000, epsilon=30.0, delta=1e-7) <= 0.02
    assert auto_solver(problem, epsilon=30.0, delta=1e-7, rms_row_norm_given=True) == "ssp"
    r = ssp_ridge_ratio(5, n_samples=3000, epsilon=1.0, delta=1e-7)
    assert r < SSP_MAX_RIDGE_RATIO
    assert ssp_ridge_ratio(5, n_samples=30000, epsilon=1.0, delta=1e-7) < r
    assert ssp_ridge_ratio(5, n_samples=3000, epsilon=4.0, delta=1e-7) < r
    assert ssp_ridge_ratio(50, n_samples=3000, epsilon=1.0, delta=1e-7) > r
    shuffled = dp.Problem(problem.X[::-1].copy(), -problem.y, loss="half_squared",
                          bounds=(-4, 4), label_bound=3.0)
    assert auto_solver(shuffled, epsilon=1.0, delta=1e-7) == "ssp"


def test_ssp_solver_refusals():
    X, y = _regression(300)
    with pytest.raises(ValueError, match="has no step"):
        DPLasso(solver="ssp", step=1.0, bounds=(-4, 4), label_bound=6.0).fit(X, y)
    with pytest.raises(ValueError, match="needs public bounds"):
        DPLogisticRegression(solver="ssp").fit(X, (y > 3).astype(int))
    with pytest.raises(ValueError, match="solver must be one of"):
        DPLasso(solver="newton").fit(X, y)


def test_ssp_public_clip_and_elastic_net():
    X, y = _regression()
    kw = dict(epsilon=1.0, bounds=(-4, 4), label_bound=(0.0, 6.0), solver="ssp",
              random_state=1)
    fixed = DPLasso(alpha=1e-3, clip=3.0, **kw).fit(X, y)
    chosen = DPLasso(alpha=1e-3, **kw).fit(X, y)
    # a public clip spends nothing on the quantile: one event fewer in the composition
    assert str(fixed.privacy_.event) != str(chosen.privacy_.event)
    assert fixed.privacy_.epsilon <= 1.0 and chosen.privacy_.epsilon <= 1.0
    net = DPElasticNet(alpha=1e-3, l1_ratio=0.5, **kw).fit(X, y)
    assert net.solver_ == "ssp" and net.score(X, y) > 0.8


def test_logistic_ssp_is_the_surrogate_then_a_newton_step():
    """DPLogisticRegression(solver="ssp") is dp_ssp_logistic on the estimator's problem
    (bitwise): the surrogate (labels 2y, half-squared loss, L2(4 lambda)) and one private
    Newton step."""
    from dpsco_core.estimators import logistic_quadratic_surrogate
    from dpsco_core.solvers.ssp import dp_ssp_logistic

    X, y = _regression(3000)
    labels = (y > 3).astype(int)
    kw = dict(C=0.5, bounds=(-4, 4), random_state=0, rms_row_norm=None)
    clf = DPLogisticRegression(epsilon=1.0, **kw).fit(X, labels)
    assert clf.solver_ == "ssp" and clf.privacy_.epsilon <= 1.0
    problem = clf._problem(X, np.where(labels == 1, 1.0, -1.0), "logistic",
                           dp.L2(1.0 / (3000 * 0.5)))
    surrogate = logistic_quadratic_surrogate(problem)
    assert surrogate.public_bounds.label_bound == 2.0
    assert surrogate.penalty.lam == pytest.approx(4.0 / (3000 * 0.5))
    np.testing.assert_array_equal(surrogate.y, 2.0 * problem.y)
    ref = dp_ssp_logistic(problem, epsilon=1.0, delta=1.0 / 3000 ** 2, random_state=0)
    np.testing.assert_array_equal(clf.coef_.ravel(), ref.coef[:-1])
    exact = DPLogisticRegression(epsilon=np.inf, solver="ssp", **kw).fit(X, labels)
    assert clf.score(X, labels) > exact.score(X, labels) - 0.02 > 0.85


def test_logistic_auto_without_bounds_is_dp_cd():
    X, y = _regression(1000)
    with pytest.warns(dp.exceptions.PrivacyLeakWarning):
        clf = DPLogisticRegression(epsilon=1.0, passes=2, n_trials=3,
                                   random_state=0).fit(X, (y > 3).astype(int))
    assert clf.solver_ == "cd"


def test_refused_budget_leaves_the_estimator_unfitted():
    X, y = _regression(500)
    budget = dp.privacy.Budget(0.5, 1e-6)
    model = DPLasso(epsilon=1.0, delta=1e-6, bounds=(-4, 4), label_bound=(0.0, 6.0),
                    budget=budget, random_state=0)
    with pytest.raises(dp.exceptions.PrivacyBudgetError):
        model.fit(X, y)
    assert budget.ledger == ()
    assert not any(hasattr(model, a) for a in ("solver_", "coef_", "privacy_"))


def test_ssp_sparse_input_and_one_vs_rest():
    """Sparse X gives the dense fit (to rounding), and one-vs-rest runs SSP per class with the
    budget split K ways, composed."""
    import scipy.sparse as sp

    X, y = _regression(1500)
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4, 4), label_bound=(0.0, 6.0), random_state=2,
              rms_row_norm=None)
    dense = DPLasso(**kw).fit(X, y)
    sparse = DPLasso(**kw).fit(sp.csr_matrix(X), y)
    assert dense.solver_ == sparse.solver_ == "ssp"
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    labels = np.digitize(y, [2.0, 4.0])                     # three classes 0, 1, 2
    clf = DPLogisticRegression(classes=[0, 1, 2], epsilon=3.0, bounds=(-4, 4), solver="ssp",
                               random_state=0).fit(X, labels)
    assert clf.solver_ == "ssp" and clf.coef_.shape == (3, 4)
    assert clf.privacy_.epsilon <= 3.0
    assert clf.score(X, labels) > 0.6


def test_auto_avoids_ssp_when_the_public_feature_scales_are_spread():
    """Isotropic clipping and noise: with per-feature bounds spread over more than a factor
    SSP_MAX_BOUND_SPREAD the rule takes DP-CD (public facts only)."""
    from dpsco_core.estimators import SSP_MAX_BOUND_SPREAD

    X, y = _regression(3000)
    narrow = np.full(4, 4.0)
    wide = narrow.copy()
    wide[0] = 4.0 * 1.01 * SSP_MAX_BOUND_SPREAD
    for upper, expected in [(narrow, "ssp"), (wide, "cd")]:
        problem = dp.Problem(X, y - 3.0, loss="half_squared", bounds=(-upper, upper),
                             label_bound=3.0)
        assert auto_solver(problem, epsilon=1.0, delta=1e-7) == expected
    # row_norm alone says nothing about the spread: SSP
    problem = dp.Problem(X, y - 3.0, loss="half_squared", row_norm=8.0, label_bound=3.0)
    assert auto_solver(problem, epsilon=1.0, delta=1e-7) == "ssp"


def test_auto_ratio_counts_the_logistic_newton_releases():
    from dpsco_core.solvers.ssp import ssp_ridge_ratio

    two = ssp_ridge_ratio(9, n_samples=5000, epsilon=1.0, delta=1e-8)
    four = ssp_ridge_ratio(9, n_samples=5000, epsilon=1.0, delta=1e-8, releases=4)
    assert 1.3 * two < four < 1.5 * two                  # about sqrt(2): half the rho each


def test_auto_with_rms_row_norm_runs_the_rule():
    """solver="auto" given rms_row_norm: one DP-CD fit with the noise-level rule, no selection,
    under replace-one (SSP's relation); without it, SSP on the same data."""
    X, y = _regression(3000)
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4, 4), label_bound=(0.0, 6.0), random_state=0)
    rule = DPLasso(**kw, rms_row_norm=2.0).fit(X, y)
    assert rule.solver_ == "cd" and rule.selection_ is None
    assert rule.privacy_.neighboring_relation.value == "replace_one"
    assert rule.privacy_.epsilon <= 1.0
    assert DPLasso(**kw, rms_row_norm=None).fit(X, y).solver_ == "ssp"
    # the default rms_row_norm="auto" releases rho privately here: the rule's DP-CD too
    default = DPLasso(**kw).fit(X, y)
    assert default.solver_ == "cd" and default.rms_row_norm_ > 0
    clf = DPLogisticRegression(epsilon=1.0, bounds=(-4, 4), rms_row_norm=2.0,
                               random_state=0).fit(X, np.where(y > 3.0, 1, 0))
    assert clf.solver_ == "cd" and clf.selection_ is None
