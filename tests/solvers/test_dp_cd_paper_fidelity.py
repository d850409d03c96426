"""DP-CD as Mangold et al. (2022) state it: Theorem 3.1's per-coordinate noise and Theorem
3.3's (T, K) schedules (issue 22)."""

import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.solvers.dp_cd import dp_cd_theorem_schedule


def _problem(seed=0, n=500, p=6):
    rng = np.random.default_rng(seed)
    scales = np.array([1.0, 0.5, 2.0, 0.1, 1.0, 3.0])[:p]
    X = rng.uniform(-1, 1, (n, p)) * scales
    y = X @ rng.uniform(-0.5, 0.5, p) + 0.1 * rng.uniform(-1, 1, n)
    return dp.Problem(X, y, loss="half_squared"), scales


def test_per_coordinate_clips_give_theorem_3_1_noise():
    # Theorem 3.1: sigma_j^2 = 12 L_j^2 T K log(1/delta) / (n^2 eps^2), replace-one.
    prob, _ = _problem()
    n, p = prob.n_samples, prob.n_features
    L = np.array([0.3, 0.2, 0.9, 0.05, 0.4, 1.5])
    eps, delta, T, K = 0.8, 1.0 / n ** 2, 1, 4 * p
    res = dp.dp_cd(prob, epsilon=eps, delta=delta, n_outer=T, n_inner=K, clip=L,
                   calibration="theorem", smoothness=np.ones(p), random_state=0)
    np.testing.assert_allclose(res.stats["clips"], L, rtol=0)
    sigma2 = 12 * L ** 2 * T * K * math.log(1 / delta) / (n ** 2 * eps ** 2)
    np.testing.assert_allclose(res.stats["noise_scales"] ** 2, sigma2, rtol=1e-12)
    assert res.privacy.epsilon <= eps


def test_per_coordinate_clips_validation_and_clipping_binds():
    prob, scales = _problem()
    p = prob.n_features
    with pytest.raises(ValueError, match="clip"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, clip=np.ones(p + 1),
                 smoothness=np.ones(p))
    with pytest.raises(ValueError, match="clip"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, clip=np.full(p, math.inf),
                 smoothness=np.ones(p))
    with pytest.raises(ValueError, match="clip"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, clip=-np.ones(p),
                 smoothness=np.ones(p))
    # non-private: clips that bound every coordinate gradient leave the run unclipped, equal to
    # clip=inf; tiny clips change it
    M = np.ones(p)
    free = dp.dp_cd(prob, epsilon=math.inf, delta=1e-6, passes=3, clip=math.inf,
                    smoothness=M, random_state=1)
    big = dp.dp_cd(prob, epsilon=math.inf, delta=1e-6, passes=3, clip=np.full(p, 1e6),
                   smoothness=M, random_state=1)
    small = dp.dp_cd(prob, epsilon=math.inf, delta=1e-6, passes=3, clip=np.full(p, 1e-3),
                     smoothness=M, random_state=1)
    np.testing.assert_array_equal(free.coef, big.coef)
    assert not np.allclose(small.coef, free.coef)


def test_theorem_3_3_convex_schedule():
    # eq. (68): T = 1, K = R_M sqrt(p) n eps / (||L||_{M^-1} sqrt(8 log(1/delta))).
    L, M = np.array([1.0, 0.5, 2.0]), np.array([2.0, 1.0, 4.0])
    n, eps, delta, R = 10 ** 4, 1.0, 1e-8, 0.7
    T, K = dp_cd_theorem_schedule("convex", n_samples=n, epsilon=eps, delta=delta,
                                  lipschitz=L, smoothness=M, distance=R)
    norm = math.sqrt(np.sum(L ** 2 / M))
    assert T == 1
    assert K == math.ceil(R * math.sqrt(3) * n * eps / (norm * math.sqrt(8 * math.log(1e8))))
    # at that K, eq. (67)'s two terms sum to at most eq. (68)'s 9 sqrt(p) ||L|| R sqrt(log) / (n eps)
    bound67 = 3 * 3 * R ** 2 / (2 * K) + 12 * norm ** 2 * K * math.log(1e8) / (n * eps) ** 2
    assert bound67 <= 9 * math.sqrt(3) * norm * R * math.sqrt(math.log(1e8)) / (n * eps)


def test_theorem_3_3_strongly_convex_schedule():
    # eq. (70): K = 2 p (1 + 1/mu), T = log2(gap n^2 eps^2 / (24 p (1 + 1/mu) ||L||^2 log(1/d)))
    L, M = np.array([1.0, 0.5, 2.0, 1.0]), np.array([2.0, 1.0, 4.0, 1.0])
    n, eps, delta, mu, gap = 10 ** 5, 0.5, 1e-10, 0.25, 3.0
    T, K = dp_cd_theorem_schedule("strongly_convex", n_samples=n, epsilon=eps, delta=delta,
                                  lipschitz=L, smoothness=M, strong_convexity=mu,
                                  initial_gap=gap)
    norm2 = float(np.sum(L ** 2 / M))
    assert K == math.ceil(2 * 4 * (1 + 1 / mu))
    assert T == math.ceil(math.log2(gap * n ** 2 * eps ** 2
                                    / (24 * 4 * (1 + 1 / mu) * norm2 * math.log(1 / delta))))
    with pytest.raises(ValueError, match="strong_convexity"):
        dp_cd_theorem_schedule("strongly_convex", n_samples=n, epsilon=eps, delta=delta,
                               lipschitz=L, smoothness=M)
    with pytest.raises(ValueError, match="preset"):
        dp_cd_theorem_schedule("smooth", n_samples=n, epsilon=eps, delta=delta,
                               lipschitz=L, smoothness=M)


def test_theorem_3_3_convex_schedule_meets_its_bound():
    # A run at the convex schedule with Theorem 3.1's noise stays within eq. (67)'s bound
    # (psi = 0: R_M = ||w0 - w*||_M, w0 = 0), averaged over seeds.
    prob, _ = _problem(n=2000)
    X, y = prob.X, prob.y
    n, p = X.shape
    M = (X ** 2).mean(axis=0)                    # half-squared loss: M_j = mean x_ij^2
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    resid_max = np.abs(y).max() + np.abs(X).max(axis=0) @ np.abs(w_star) * 4
    L = np.abs(X).max(axis=0) * resid_max       # |x_ij l'| bound on the iterates' region
    R = math.sqrt(np.sum(M * w_star ** 2))
    eps, delta = 1.0, 1.0 / n ** 2
    T, K = dp_cd_theorem_schedule("convex", n_samples=n, epsilon=eps, delta=delta,
                                  lipschitz=L, smoothness=M, distance=R)
    f_star = prob.objective(w_star)
    gaps = [prob.objective(dp.dp_cd(prob, epsilon=eps, delta=delta, n_outer=T, n_inner=K,
                                    clip=L, calibration="theorem", smoothness=M,
                                    random_state=s).coef) - f_star for s in range(5)]
    norm2 = float(np.sum(L ** 2 / M))
    bound67 = 3 * p * R ** 2 / (2 * K) + 12 * norm2 * K * math.log(1 / delta) / (n * eps) ** 2
    assert np.mean(gaps) <= bound67
