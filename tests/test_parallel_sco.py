"""ReSQue ball oracles (Algorithms 1, 2), executors and the assembled Theorems 1-2."""

import math

import numpy as np
import pytest

from dpsco_core.mlmc.domains import L2Ball
from dpsco_core.parallel import SerialExecutor, ThreadExecutor
from dpsco_core.parallel.sco import (ReSQueACSA, ReSQueEpochSGD, ac_sa_schedule,
                                     epoch_sgd_schedule, parallel_sco)
from dpsco_core.resque import ReSQueWarning
from dpsco_core.smoothing import smoothed_absolute

S = np.array([0.3, -0.2, 0.1])


def _median(Z, random_state):
    D = Z - S
    return D / np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-300)


def test_schedules():
    T, lengths = epoch_sgd_schedule(1.0, 2.0, 0.01)
    assert T == 2400 and lengths == [16 * 2 ** k for k in range(len(lengths))]
    assert sum(lengths) <= T < sum(lengths) + 16 * 2 ** len(lengths)
    assert len(lengths) == math.floor(math.log2(T / 16 + 1))
    K, Tac, N = ac_sa_schedule(1.0, 5.0, 1e-3, 0.05, 0.05)
    assert K == math.ceil(math.log2(5 * 0.05 ** 2 / 1e-3))
    assert Tac == math.ceil(4 * math.sqrt(1 / (0.05 * 5)) + 1)
    assert N == [math.ceil(48 * 2 ** k / (25 * 0.05 ** 2 * Tac)) for k in range(1, K + 1)]


@pytest.mark.statistical
@pytest.mark.parametrize("cls", [ReSQueACSA, ReSQueEpochSGD])
def test_ball_oracle_accuracy(cls):
    """E Psi(x) - Psi* <= phi on smoothed absolute regression (note 12.9), outputs in the ball."""
    rs = np.random.default_rng(0)
    d, n, rho, lam, phi = 4, 20, 0.1, 5.0, 2e-3
    A, b = rs.standard_normal((n, d)) / 2, rs.standard_normal(n)
    c = 0.1 * rs.standard_normal(d)
    L = float(np.max(np.linalg.norm(A, axis=1)))

    def grad_batch(Z, random_state):
        i = np.random.default_rng(random_state).integers(0, n, Z.shape[0])
        return np.sign(np.einsum("ij,ij->i", Z, A[i]) - b[i])[:, None] * A[i]

    def psi(x):
        return smoothed_absolute(x, A, b, rho)[0] + 0.5 * lam * np.sum((x - c) ** 2)

    ball = L2Ball(rho, c)
    x = c.copy()
    for _ in range(3000):     # projected GD on the closed form for Psi*
        g = smoothed_absolute(x, A, b, rho)[1] + lam * (x - c)
        x = ball.project(x - g / (L / rho + lam))
    psi_star = psi(x)
    oracle = cls(grad_batch, L, rho, rho)
    gaps = []
    for seed in range(6):
        out = oracle(c, lam, phi, ball, seed)
        assert np.linalg.norm(out - c) <= rho * (1 + 1e-12)
        gaps.append(psi(out) - psi_star)
    assert np.mean(gaps) <= phi
    assert oracle.executor.stats.query_depth == 6


def test_radius_above_smoothing_radius_warns():
    with pytest.warns(ReSQueWarning):
        ReSQueACSA(_median, 1.0, 0.2, 0.1)
    with pytest.raises(ValueError, match="smoothing_radius"):
        ReSQueACSA(_median, 1.0, 0.2, 0.0)


def test_executors_agree_and_count():
    Z = np.random.default_rng(0).standard_normal((10_000, 3))

    def noisy(Zc, random_state):
        return Zc + np.random.default_rng(random_state).standard_normal(Zc.shape)

    s, t = SerialExecutor(), ThreadExecutor(3)
    assert s.grad_batch(noisy, Z, 4).tobytes() == t.grad_batch(noisy, Z, 4).tobytes()
    assert (t.stats.query_depth, t.stats.total_queries) == (1, 10_000)


@pytest.mark.parametrize("inner", ["ac_sa", "epoch_sgd"])
def test_parallel_sco_reaches_target(inner):
    """Geometric median of one point (f = ||x - s||, L = 1, f* = 0): f(x) <= eps."""
    eps = 0.2
    res = parallel_sco(_median, np.zeros(3), lipschitz=1.0, radius_bound=1.0, epsilon=eps,
                       inner=inner, accuracy_scale=300.0, random_state=1)
    assert np.linalg.norm(res.x - S) <= eps
    assert res.smoothing_radius == pytest.approx(eps / math.sqrt(3))
    assert res.smoothing_error_bound == pytest.approx(eps)
    assert res.query_depth <= 2 * res.accel.n_iter     # at most one batch per ball + prox oracle
    assert res.total_queries > res.query_depth
