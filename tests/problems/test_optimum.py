"""F* solver: against scikit-learn, certificates, KKT conditions, every code path."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from dpsco_core import optimum
from dpsco_core.losses import Huber
from dpsco_core.optimum import ConvergenceWarning, solve
from dpsco_core.penalties import L1, L2, Box, ElasticNet, NoPenalty
from dpsco_core.problems import Problem

sklearn = pytest.importorskip("sklearn.linear_model")


def _imbalanced(rng, n=200, p=30, classification=False):
    X = rng.standard_normal((n, p)) * np.logspace(-1, 1, p)     # column scales 0.1 .. 10
    w = np.zeros(p)
    k = min(6, p)
    w[rng.choice(p, k, replace=False)] = rng.standard_normal(k)
    z = X @ w + 0.3 * rng.standard_normal(n)
    return X, (np.where(z > 0, 1.0, -1.0) if classification else z)


def test_lasso_matches_sklearn(global_seed):
    X, y = _imbalanced(np.random.default_rng(global_seed))
    lam = 0.05
    opt = Problem(X, y, "squared", L1(lam)).solve()
    assert opt.converged and opt.certificate_kind == "duality_gap"
    assert opt.certificate <= 1e-12 * opt.objective
    sk = sklearn.Lasso(alpha=lam / 2, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(opt.coef, sk.coef_, rtol=0, atol=1e-8)
    # half-squared convention: Lasso(alpha=lam)
    half = Problem(X, y, "half_squared", L1(lam)).solve()
    sk = sklearn.Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(half.coef, sk.coef_, rtol=0, atol=1e-8)


def test_lasso_kkt_conditions():
    X, y = _imbalanced(np.random.default_rng(1))
    lam = 0.02
    opt = Problem(X, y, "squared", L1(lam)).solve()
    g = 2.0 / X.shape[0] * X.T @ (X @ opt.coef - y)
    on = opt.coef != 0
    np.testing.assert_allclose(g[on], -lam * np.sign(opt.coef[on]), rtol=0, atol=1e-12)
    assert np.all(np.abs(g[~on]) <= lam + 1e-12)


def test_elastic_net_matches_sklearn(global_seed):
    X, y = _imbalanced(np.random.default_rng(global_seed))
    l1, l2 = 0.03, 0.05
    opt = Problem(X, y, "squared", ElasticNet(l1, l2)).solve()
    assert opt.converged
    # penalties.ElasticNet docstring: l1 = 2 alpha l1_ratio, l2 = 2 alpha (1 - l1_ratio)
    alpha = (l1 + l2) / 2
    sk = sklearn.ElasticNet(alpha=alpha, l1_ratio=l1 / (l1 + l2), fit_intercept=False,
                            tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(opt.coef, sk.coef_, rtol=0, atol=1e-8)


def test_logistic_matches_sklearn(global_seed):
    X, y = _imbalanced(np.random.default_rng(global_seed), classification=True)
    n, lam = X.shape[0], 0.01
    opt = Problem(X, y, "logistic", L2(lam)).solve()
    assert opt.converged and opt.certificate_kind == "gradient_norm"
    assert opt.certificate <= 1e-10 * max(1.0, np.linalg.norm(X.T @ y) / (2 * n))
    # lbfgs (sklearn's default) stops at about 5e-7 in coefficients even with tol=1e-12 (note
    # 002, oracle 2); newton-cholesky reaches machine precision, so it is the 1e-8 reference.
    sk = sklearn.LogisticRegression(C=1 / (n * lam), fit_intercept=False, tol=1e-12,
                                    max_iter=10000, solver="newton-cholesky").fit(X, y)
    np.testing.assert_allclose(opt.coef, sk.coef_.ravel(), rtol=0, atol=1e-8)
    lbfgs = sklearn.LogisticRegression(C=1 / (n * lam), fit_intercept=False, tol=1e-12,
                                       max_iter=10000).fit(X, y)
    prob = Problem(X, y, "logistic", L2(lam))
    assert prob.objective(lbfgs.coef_.ravel()) - opt.objective == pytest.approx(0, abs=1e-10)
    assert prob.objective(lbfgs.coef_.ravel()) >= opt.objective - 1e-15


def test_sparse_and_dense_give_the_same_optimum():
    rng = np.random.default_rng(2)
    X, y = _imbalanced(rng, n=120, p=15)
    X[rng.random(X.shape) < 0.6] = 0.0
    for loss, pen, target in [("squared", L1(0.05), y), ("logistic", L2(0.01), np.sign(y))]:
        dense = Problem(X, target, loss, pen).solve()
        for fmt in (sp.csr_matrix, sp.csc_matrix):
            sparse = Problem(fmt(X), target, loss, pen).solve()
            np.testing.assert_allclose(sparse.coef, dense.coef, rtol=0, atol=1e-10)
            assert sparse.objective == pytest.approx(dense.objective, rel=1e-12)


def _generic_minimum(prob, bounds=None):
    """F* by L-BFGS-B on the smooth objective (reference for smooth penalties and boxes)."""
    res = scipy.optimize.minimize(lambda w: prob.smooth_objective(w) + (
        prob.penalty.value(w) if bounds is None else 0.0), np.zeros(prob.n_features),
        jac=lambda w: prob.gradient(w) + prob.penalty.strong_convexity * w,
        method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-15, "gtol": 1e-12,
                                                   "maxiter": 10000})
    return res.fun


@pytest.mark.parametrize("loss", ["squared", "half_squared", "logistic", Huber(0.5)])
@pytest.mark.parametrize("penalty", [NoPenalty(), L2(0.1), L1(0.02), ElasticNet(0.02, 0.05),
                                     Box(-0.2, 0.3)], ids=repr)
def test_every_combination_is_certified(loss, penalty):
    rng = np.random.default_rng(7)
    X, y = _imbalanced(rng, n=150, p=10)
    target = np.sign(y) if loss == "logistic" else y
    prob = Problem(X, target, loss, penalty)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        opt = prob.solve()
    assert opt.converged and opt.certificate <= opt.threshold
    assert opt.objective == prob.objective(opt.coef)
    if penalty.kind in (0, 2):                  # smooth penalties: compare with L-BFGS-B
        assert opt.objective <= _generic_minimum(prob) + 1e-12
    if isinstance(penalty, Box):
        assert np.all((opt.coef >= -0.2) & (opt.coef <= 0.3))
        bounds = [(-0.2, 0.3)] * X.shape[1]
        assert opt.objective <= _generic_minimum(prob, bounds) + 1e-12
    # no feasible point nearby does better
    for _ in range(20):
        w = penalty.prox(opt.coef + 1e-4 * rng.standard_normal(X.shape[1]), 1e-6)
        assert prob.objective(w) >= opt.objective - 1e-13


def test_large_feature_code_paths(monkeypatch):
    """The column CD, trust-region Newton and FISTA paths agree with the Gram-based ones."""
    rng = np.random.default_rng(3)
    X, y = _imbalanced(rng, n=80, p=12)
    X /= np.linalg.norm(X, axis=0)                        # well conditioned for FISTA
    X *= np.sqrt(X.shape[0])
    labels = np.sign(y)
    cases = [("squared", L1(0.05), y, X), ("squared", L1(0.05), y, sp.csc_matrix(X)),
             ("half_squared", Box(-0.1, 0.1), y, X), ("squared", NoPenalty(), y, X),
             ("logistic", L2(0.05), labels, X), ("logistic", L1(0.02), labels, X)]
    reference = [Problem(data, t, loss, pen).solve() for loss, pen, t, data in cases]
    monkeypatch.setattr(optimum, "_GRAM_MAX_FEATURES", 1)
    for (loss, pen, t, data), ref in zip(cases, reference):
        opt = Problem(data, t, loss, pen).solve(tol=1e-9 if pen.kind == 1 else None)
        assert opt.converged, opt
        assert opt.method != ref.method
        np.testing.assert_allclose(opt.coef, ref.coef, rtol=0, atol=1e-7)
        assert opt.objective == pytest.approx(ref.objective, rel=1e-11)


def test_california_lasso_to_gap_1e12():
    from dpsco_core.datasets import load_california
    X, y = load_california()
    opt = Problem(X, y, "squared", L1(0.01)).solve()
    assert opt.converged and opt.certificate <= 1e-12 * opt.objective


def test_solve_is_cached_and_read_only():
    X, y = _imbalanced(np.random.default_rng(4), n=50, p=5)
    prob = Problem(X, y, "squared", L1(0.1))
    opt = prob.solve()
    assert prob.solve() is opt
    assert not opt.coef.flags.writeable
    assert solve(prob, tol=1e-6).tol == 1e-6


def test_iteration_limit_warns():
    X, y = _imbalanced(np.random.default_rng(5), n=60, p=8, classification=True)
    with pytest.warns(ConvergenceWarning, match="Newton stopped after 1 iterations"):
        opt = solve(Problem(X, y, "logistic", L2(1e-3)), max_iter=1)
    assert not opt.converged and opt.certificate > opt.threshold


def test_unsupported_and_bad_arguments():
    X = np.eye(3)
    with pytest.raises(NotImplementedError, match="hinge"):
        Problem(X, [1.0, -1.0, 1.0], "hinge").solve()
    prob = Problem(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\)"):
        solve(prob, tol=0.0)
    with pytest.raises(ValueError, match="max_iter must be an integer"):
        solve(prob, max_iter=0)
