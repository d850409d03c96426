"""Applications of the MLMC estimators (note 001, section 9, T14-T17): Algorithm 3 (AGD on the
Moreau envelope), Algorithm 5 (composite AGD), Algorithm 9 (softmax gradient) inside Algorithm
4 + 10 for min-max, and Algorithm 7 (unbiased estimator with exact oracles)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpsco_core import ball_acceleration as ba
from dpsco_core.experiments.mlmc_applications import finite_sum_problem, l1_glm
from dpsco_core.mlmc import (AffineFamily, BoxDomain, SoftmaxGradientOracle, composite_agd,
                             ellipsoid_method, exact_levels, exact_optimum_draws, gradients_for_epochs,
                             epochs_for_budget, minimize_max_of_functions, moreau_agd,
                             softmax_value)


def test_moreau_agd_reaches_epsilon_with_t_projections():
    """T14: x* = (0.3, 0, 0) on the box [0.3, 1] x [-1, 1]^2, f* = 0.1; exactly T projections."""
    oracle, f = l1_glm()
    box = BoxDomain([0.3, -1.0, -1.0], 1.0)
    calls = []

    def project(v):
        calls.append(1)
        return box.project(v)

    eps = 0.1
    po = ba.MLMCProximalOracle(oracle, 1.0, c=1.0, max_copies=16)
    gaps = []
    for seed in range(2):
        calls.clear()
        res = moreau_agd(po, project, np.full(3, 0.8), epsilon=eps, lipschitz=1.0,
                         radius=math.sqrt(3.0), distance=1.2, random_state=seed)
        assert len(calls) == res.n_projections == res.n_iter == math.ceil(4 * math.sqrt(3) * 1.2
                                                                           / eps)
        assert res.lam == pytest.approx(2.0 / eps)
        assert all(box.contains(x) for x in res.iterates[1:])
        gaps.append(f(res.x) - 0.1)
    assert max(gaps) <= eps
    with pytest.raises(TypeError, match="project"):
        moreau_agd(po, 3, np.zeros(3), epsilon=eps, lipschitz=1.0, radius=1.0)


def test_composite_agd_rate_and_gradient_count():
    """T15: Psi = (L/2)||x - p||^2 + ||x||_1 / d, x* = soft-threshold(p, 1/(d L)); N exact
    gradients of A and Psi(x_N) - Psi* <= 4 L R^2 / (N (N + 1))."""
    oracle, f = l1_glm()
    L, p = 2.0, np.array([1.0, 0.1, -0.5])
    x_star = np.sign(p) * np.maximum(np.abs(p) - 1.0 / (3 * L), 0.0)
    psi = lambda x: 0.5 * L * np.sum((x - p) ** 2) + f(x)    # noqa: E731
    n_grad = []

    def grad_A(y):
        n_grad.append(1)
        return L * (y - p)

    bo = ba.EpochSGDBallOracle(oracle, 1.0, max_epochs=10)
    po = ba.MLMCProximalOracle(oracle, 1.0, c=1.0, max_copies=40)
    R = 1.5
    res = composite_agd(grad_A, bo, po, np.zeros(3), smoothness=L, radius=R, epsilon=0.02,
                        random_state=0)
    N = res.n_iter
    assert N == math.ceil(2 * math.sqrt(L * R * R / 0.02)) == len(n_grad) == res.n_grad_smooth
    assert psi(res.x) - psi(x_star) <= 4 * L * R * R / (N * (N + 1))
    with pytest.raises(ValueError, match="exactly one"):
        composite_agd(grad_A, bo, po, np.zeros(3), smoothness=L, radius=R)


def test_softmax_gradient_oracle_law_and_acceptance():
    """T16: the returned index has law p(x) (chi-square), the acceptance rate is >= e^-2, the
    mean of the estimates is grad f_smax(x), norms <= G, and points outside the ball raise."""
    rs = np.random.default_rng(0)
    fam = AffineFamily(rs.standard_normal((5, 3)), rs.standard_normal(5))
    eps_p = 0.5
    center = rs.standard_normal(3)
    oracle = SoftmaxGradientOracle(fam, eps_p, center)
    u = rs.standard_normal(3)
    x = center + 0.9 * oracle.radius * u / np.linalg.norm(u)
    rng = np.random.default_rng(1)
    M = 20000
    draws = [oracle.sample_index(x, rng) for _ in range(M)]
    idx = np.array([i for i, _ in draws])
    trials = np.array([t for _, t in draws])
    z = fam.values(x) / eps_p
    p_x = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    counts = np.bincount(idx, minlength=5)
    assert stats.chisquare(counts, M * p_x).pvalue > 1e-3
    assert M / trials.sum() >= math.exp(-2.0)
    g = np.array([oracle(x, rng) for _ in range(4000)])
    assert np.all(np.linalg.norm(g, axis=1) <= fam.lipschitz + 1e-12)
    exact = p_x @ fam.A
    se = g.std(axis=0) / np.sqrt(4000)
    assert np.all(np.abs(g.mean(axis=0) - exact) <= 4.5 * se + 1e-12)
    assert oracle.n_subgradients == 4000
    # softmax bounds: 0 <= f_smax - f_max <= eps' log N
    gap = softmax_value(fam, x, eps_p) - fam.values(x).max()
    assert 0.0 <= gap <= eps_p * math.log(5) + 1e-12
    with pytest.raises(ValueError, match="radius"):
        oracle(center + 2 * oracle.radius * u / np.linalg.norm(u), rng)


def test_min_max_by_ball_acceleration():
    """Algorithm 4 + 9 + 10 on max_i f_i = ||x - s||_inf (N = 4 affine functions, min 0 at s),
    with capped oracles: the output is epsilon-optimal for f_max."""
    s = np.array([0.5, -0.3])
    fam = AffineFamily(np.vstack([np.eye(2), -np.eye(2)]), np.concatenate([s, -s]))
    eps = 0.2
    res, counts = minimize_max_of_functions(
        fam, np.zeros(2), epsilon=eps, radius=1.0, max_iter=8, accuracy_scale=10.0, c=1.0,
        max_epochs=5, max_copies=16, max_level=4, max_bisections=3, random_state=0)
    assert fam.values(res.x).max() <= eps
    assert counts["movement"] == pytest.approx(eps / (2 * math.log(4)))
    assert np.all((res.lambdas >= counts["lam_min"]) & (res.lambdas <= counts["lam_max"]))
    # every step moved at most 2r (the ball oracle is confined to B_r(y_k))
    steps = np.linalg.norm(np.diff(np.vstack([np.zeros(2), res.iterates]), axis=0), axis=1)
    assert np.all(steps <= 2 * counts["movement"] + 1e-9)
    assert counts["n_subgradients"] > 0 and counts["n_values"] >= counts["n_subgradients"]


def test_exact_estimator_enumeration_and_zero_bias():
    """T17: enumerating J with one draw's randomness telescopes to x_J exactly, x_J (ellipsoid
    levels) reaches x*; Monte-Carlo mean = x* within 4.5 standard errors; costs."""
    prob, mu, x_star = finite_sum_problem()
    x0 = np.array([-0.5, 0.8])
    seed = np.random.SeedSequence(5)
    J, j0 = 22, 6
    total = 2.0 ** -J * x0
    for j in range(1, J + 1):
        prev, cur = exact_levels(prob, mu, x0, 2.0, j, j0=j0, random_state=seed)
        total = total + 2.0 ** -j * (x0 + 2.0 ** j * (cur - prev))
    np.testing.assert_allclose(total, cur, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cur, x_star, atol=1e-6)
    M = 1500
    draws = exact_optimum_draws(prob, mu, x0, 2.0, n_copies=M, j0=j0, random_state=0)
    se = draws.samples.std(axis=0) / np.sqrt(M)
    assert np.all(np.abs(draws.mean - x_star) <= 4.5 * se)
    for J_m, q in zip(draws.J, draws.n_queries):
        if J_m <= j0:      # only the EpochSGD run: N_ES(2^J) component subgradients
            assert q == gradients_for_epochs(epochs_for_budget(2 ** J_m))
    # expected queries: O(log(nd)), here below the EpochSGD cost at j0 plus the rare ellipsoid
    assert draws.n_queries.mean() <= gradients_for_epochs(epochs_for_budget(2 ** j0))
    with pytest.raises(ValueError, match="d >= 2"):
        ellipsoid_method(lambda x: 0.0, lambda x: x, np.zeros(1), 1.0, 3)
