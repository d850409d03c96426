"""dp_ssp_logistic: the quadratic surrogate's SSP, then one private Newton step (issue 19).

Privacy: the Newton statistics move by at most their calibrated sensitivities between worst
neighbours (replace-one, zero-out), the noise scales are the multiplier times them, the report
is the accountant's over the quantile and four Gaussian releases. Correctness: epsilon = inf is
the surrogate's least squares followed by one exact Newton step; sparse = dense; seeds.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core.privacy.accountants import RdpAccountant
from dpsco_core.privacy.events import (ComposedDpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                                       SelfComposedDpEvent)
from dpsco_core.solvers.ssp import (dp_ssp_logistic, newton_sensitivities, newton_statistics,
                                    ssp_sensitivities)

DELTA = 1e-7


def _problem(n=3000, d=4, seed=0, lam=1e-3, **kw):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.linspace(1.0, -1.0, d) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    bounds = kw or {"bounds": (-3.0, 3.0)}
    return dp.Problem(X, y, loss="logistic", penalty=dp.L2(lam) if lam else None, **bounds)


@pytest.mark.parametrize("relation", ["replace_one", "zero_out", "add_or_remove_one"])
def test_newton_statistics_move_by_at_most_their_sensitivities(relation):
    rng = np.random.default_rng(1)
    C = 1.5
    X = rng.normal(size=(50, 3))
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    dH, dg = newton_sensitivities(C, relation)
    iu = np.triu_indices(3)
    worst_H = worst_g = 0.0
    for w0 in (np.zeros(3), np.array([5.0, -5.0, 2.0]), rng.normal(size=3)):
        H, g = newton_statistics(X, y, w0, C)
        for k in range(20):
            X2, y2 = X.copy(), y.copy()
            if relation == "replace_one":
                X2[0] = 1e3 * rng.normal(size=3)
                y2[0] = -y[0] if k % 2 else y[0]
            elif relation == "zero_out":
                X2[0] = 0.0
            elif k % 2:                               # add an outlier
                X2 = np.vstack([X, 1e3 * rng.normal(size=(1, 3))])
                y2 = np.append(y, 1.0 if k % 4 == 1 else -1.0)
            else:                                     # remove a record
                X2, y2 = X[1:], y[1:]
            H2, g2 = newton_statistics(X2, y2, w0, C)
            worst_H = max(worst_H, float(np.linalg.norm((H - H2)[iu])))
            worst_g = max(worst_g, float(np.linalg.norm(g - g2)))
    assert worst_H <= dH * (1 + 1e-12) and worst_g <= dg * (1 + 1e-12)
    # attained: at w0 = 0 every weight is 1/4; C e1 against C e2
    Z = np.array([[C, 0.0, 0.0]])
    Z2 = np.array([[0.0, C, 0.0]]) if relation == "replace_one" else np.zeros((1, 3))
    H1, _ = newton_statistics(Z, [1.0], np.zeros(3), C)
    H2, _ = newton_statistics(Z2, [1.0], np.zeros(3), C)
    assert np.linalg.norm((H1 - H2)[iu]) == pytest.approx(dH)
    assert dH == pytest.approx(ssp_sensitivities(C, 1.0, relation)[0] / 4)


def test_report_is_the_accountants_and_noise_scales_are_the_sensitivities():
    prob = _problem()
    budget = dp.privacy.Budget(1.0, DELTA)
    res = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, random_state=0, budget=budget)
    event = res.privacy.event
    assert isinstance(event, ComposedDpEvent)
    assert isinstance(event.events[0], EpsilonDeltaDpEvent)
    s = res.stats["noise_multiplier"]
    assert event.events[1] == SelfComposedDpEvent(GaussianDpEvent(s), 4)
    assert budget.ledger == (event,)
    eps = RdpAccountant(None, res.privacy.neighboring_relation).compose(event).get_epsilon(DELTA)
    assert eps == pytest.approx(res.privacy.epsilon, rel=1e-6) and res.privacy.epsilon <= 1.0
    C = res.stats["clip"]
    dG, db = ssp_sensitivities(C, 2.0, "replace_one")
    dH, dg = newton_sensitivities(C, "replace_one")
    for key, sens in [("sigma_G", dG), ("sigma_b", db), ("sigma_H", dH), ("sigma_g", dg)]:
        assert res.stats[key] == pytest.approx(s * sens, rel=1e-12)
    fixed = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, clip=2.0, random_state=0)
    assert fixed.privacy.event == SelfComposedDpEvent(
        GaussianDpEvent(fixed.stats["noise_multiplier"]), 4)


def test_add_or_remove_one_needs_public_n_and_is_accounted():
    from dpsco_core.privacy import NeighboringRelation

    prob = _problem()
    with pytest.raises(ValueError, match="public_n"):
        dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, neighboring_relation="add_or_remove_one")
    res = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, neighboring_relation="add_or_remove_one",
                          public_n=3000, random_state=0)
    assert res.privacy.neighboring_relation is NeighboringRelation.ADD_OR_REMOVE_ONE
    eps = RdpAccountant(None, res.privacy.neighboring_relation).compose(
        res.privacy.event).get_epsilon(DELTA)
    assert eps == pytest.approx(res.privacy.epsilon, rel=1e-6) and eps <= 1.0
    dH, dg = newton_sensitivities(res.stats["clip"], "add_or_remove_one")
    assert res.stats["sigma_H"] == pytest.approx(res.stats["noise_multiplier"] * dH)
    assert res.stats["sigma_g"] == pytest.approx(res.stats["noise_multiplier"] * dg)


def test_epsilon_inf_is_least_squares_then_one_newton_step():
    lam = 1e-3
    prob = _problem(lam=lam)
    res = dp_ssp_logistic(prob, epsilon=math.inf, delta=DELTA)
    Z, y = np.asarray(prob.X), np.asarray(prob.y)
    n, d = Z.shape
    w0 = np.linalg.solve(Z.T @ Z / n + 4 * lam * np.eye(d), Z.T @ (2 * y) / n)
    p = 1 / (1 + np.exp(-(Z @ w0)))
    H = (Z * (p * (1 - p))[:, None]).T @ Z / n + lam * np.eye(d)
    g = Z.T @ (p - (1 + y) / 2) / n + lam * w0
    np.testing.assert_allclose(res.coef, w0 - np.linalg.solve(H, g), rtol=1e-9, atol=1e-12)
    # the step lowers the logistic objective from the surrogate's solution
    assert prob.objective(res.coef) < prob.objective(w0)


def test_seeds_sparse_and_refusals():
    prob = _problem()
    a = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, random_state=3).coef
    b = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, random_state=3).coef
    c = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, random_state=4).coef
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    sparse = dp.Problem(sp.csr_matrix(np.asarray(prob.X)), prob.y, loss="logistic",
                        penalty=dp.L2(1e-3), bounds=(-3.0, 3.0))
    np.testing.assert_allclose(dp_ssp_logistic(sparse, epsilon=1.0, delta=DELTA,
                                               random_state=3).coef, a, rtol=1e-9, atol=1e-12)
    X, y = np.asarray(prob.X), np.asarray(prob.y)
    with pytest.raises(ValueError, match="public bounds"):
        dp_ssp_logistic(dp.Problem(X, y, loss="logistic"), epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="L2 penalty or none"):
        dp_ssp_logistic(dp.Problem(X, y, loss="logistic", penalty=dp.L1(0.1),
                                   bounds=(-3.0, 3.0)), epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="logistic loss"):
        dp_ssp_logistic(dp.Problem(X, y, loss="squared", bounds=(-3.0, 3.0), label_bound=1.0),
                        epsilon=1.0, delta=DELTA)


def test_private_newton_step_is_accurate():
    prob = _problem(n=20000, d=6, seed=2)
    exact = dp_ssp_logistic(prob, epsilon=math.inf, delta=DELTA).coef
    X, y = np.asarray(prob.X), np.asarray(prob.y)
    acc = lambda w: float(np.mean(np.sign(X @ w) == y))  # noqa: E731
    for seed in range(3):
        w = dp_ssp_logistic(prob, epsilon=1.0, delta=DELTA, random_state=seed).coef
        assert acc(w) > acc(exact) - 0.01
