"""ReSQue ball oracles (Algorithms 1, 2), executors and the assembled Theorems 1-2."""

import math

import numpy as np
import pytest

from dpsco_core.mlmc.domains import L2Ball
from dpsco_core.parallel import SerialExecutor, ThreadExecutor
from dpsco_core.resque.parallel_sco import (ReSQueACSA, ReSQueEpochSGD, ac_sa_schedule,
                                            epoch_sgd_schedule, parallel_sco)
from dpsco_core.resque import ReSQueBatch, ReSQueWarning
from dpsco_core.resque.smoothing import smoothed_absolute

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
@pytest.mark.parametrize("lam, phi", [(5.0, 2e-3), (1.0, 1e-2)])
def test_ball_oracle_accuracy(cls, lam, phi):
    """E Psi(x) - Psi* <= phi on smoothed absolute regression (note 12.9), outputs in the ball."""
    rs = np.random.default_rng(0)
    d, n, rho = 4, 20, 0.1
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
    # one round per iteration: the ball and proximal batches share it
    assert res.query_depth <= res.accel.n_iter
    assert res.total_queries > res.query_depth
    assert res.trace.shape == (res.accel.n_iter, 3)
    assert tuple(res.trace[-1]) == (res.query_depth, res.total_queries, res.computational_depth)
    assert np.all(np.diff(res.trace, axis=0) >= 0)


def test_rounds_trace_and_callback():
    kw = dict(lipschitz=1.0, radius_bound=1.0, epsilon=0.2, accuracy_scale=300.0,
              random_state=1)
    shared = parallel_sco(_median, np.zeros(3), **kw)
    split = parallel_sco(_median, np.zeros(3), **kw, share_rounds=False)
    assert shared.x.tobytes() == split.x.tobytes()
    assert shared.query_depth == shared.accel.n_iter          # AC-SA always issues a batch
    assert split.query_depth == 2 * split.accel.n_iter
    assert shared.total_queries == split.total_queries
    np.testing.assert_array_equal(shared.trace[:, 0], np.arange(1, shared.accel.n_iter + 1))
    seen = []
    stopped = parallel_sco(_median, np.zeros(3), **kw,
                           callback=lambda k, x: seen.append(x.copy()) or k == 4)
    assert stopped.accel.n_iter == 5 and len(seen) == 5
    np.testing.assert_array_equal(stopped.accel.iterates, shared.accel.iterates[:5])
    np.testing.assert_array_equal(stopped.trace, shared.trace[:5])


def test_continue_round_joins_the_previous_batch():
    ex = SerialExecutor()
    Z = np.zeros((5, 2))
    ex.grad_batch(lambda z, s: z, Z)
    ex.continue_round()
    ex.grad_batch(lambda z, s: z, Z)
    ex.grad_batch(lambda z, s: z, Z)
    assert (ex.stats.query_depth, ex.stats.total_queries, ex.stats.computational_depth) == (
        2, 15, 2)


def _absolute_problem(d=3, n=15, seed=2):
    rs = np.random.default_rng(seed)
    A, b = rs.standard_normal((n, d)) / 2, rs.standard_normal(n)

    def grad_batch(Z, random_state):
        i = np.random.default_rng(random_state).integers(0, n, Z.shape[0])
        return np.sign(np.einsum("ij,ij->i", Z, A[i]) - b[i])[:, None] * A[i]

    return grad_batch, float(np.max(np.linalg.norm(A, axis=1)))


def _weights(zeta, x, c, rho):
    v = (x - c) / rho
    return np.exp(zeta @ v - 0.5 * (v @ v))


def test_epoch_sgd_follows_algorithm_1_schedule():
    """Algorithm 1 written out from the note (4.1): T = ceil(48 L^2/(lam phi)),
    floor(log2(T/16 + 1)) epochs of T_k = 16 2^(k-1), eta_k = 2^(1-k)/(4 lam), epoch k consuming
    samples sum_(j<k) (T_j - 1) + [1..T_k - 1]; one batch of exactly sum (T_k - 1) queries."""
    grad_batch, L = _absolute_problem()
    c, rho, lam, phi = np.array([0.1, -0.2, 0.05]), 0.08, 3.0, 0.02
    T = math.ceil(48 * L ** 2 / (lam * phi))
    n_epochs = math.floor(math.log2(T / 16 + 1))
    lengths = [16 * 2 ** (k - 1) for k in range(1, n_epochs + 1)]
    n = sum(t - 1 for t in lengths)
    batch = ReSQueBatch.query(grad_batch, c, rho, n, random_state=5, n_threads=1)
    ball = L2Ball(rho, c)
    x0, i = c.copy(), 0
    for k, t_k in enumerate(lengths, start=1):
        eta = 2.0 ** (1 - k) / (4 * lam)
        x = ball.project((x0 + eta * lam * c) / (1 + eta * lam))
        xs = [x]
        for _ in range(t_k - 1):
            w = _weights(batch.zeta[i], x, c, rho)
            x = ball.project((x + eta * lam * c - eta * w * batch.gradients[i]) / (1 + eta * lam))
            xs.append(x)
            i += 1
        x0 = np.mean(xs, axis=0)
    oracle = ReSQueEpochSGD(grad_batch, L, rho, rho)
    out = oracle(c, lam, phi, ball, 5)
    np.testing.assert_allclose(out, x0, rtol=1e-12, atol=1e-15)
    st = oracle.executor.stats
    assert (st.query_depth, st.total_queries, st.computational_depth) == (1, n,
                                                                           1 + n + n_epochs)
    # T < 16: no epoch, no query, the centre itself
    small = ReSQueEpochSGD(grad_batch, L, rho, rho)
    assert small(c, 1e3, 1.0, ball, 0).tobytes() == c.tobytes()
    assert small.executor.stats.total_queries == 0


def test_ac_sa_follows_corrected_algorithm_2():
    """Algorithm 2 with the note's corrections (4.2), written out: one batch of T sum N_k
    queries, minibatch t of stage k = samples offset_k + (t-1) N_k + [1..N_k] (never reused),
    K T sequential steps (computational depth K T + 1 with the batch)."""
    grad_batch, L = _absolute_problem()
    c, rho, lam, phi = np.array([0.1, -0.2, 0.05]), 0.08, 20.0, 2e-3
    K, T, N = ac_sa_schedule(L, lam, phi, rho, rho)
    assert K == math.ceil(math.log2(lam * rho ** 2 / phi)) and K >= 2
    batch = ReSQueBatch.query(grad_batch, c, rho, T * sum(N), random_state=6, n_threads=1)
    ball = L2Ball(rho, c)
    x_ag, x, offset, used = c.copy(), c.copy(), 0, []
    for k in range(K):
        for t in range(1, T + 1):
            a = 2.0 / (t + 1)
            g = 4.0 * (L / rho + lam) / (t * (t + 1))
            x_md = ((1 - a) * (lam + g) * x_ag + a * ((1 - a) * lam + g) * x) / (
                g + (1 - a ** 2) * lam)
            rows = np.arange(offset + (t - 1) * N[k], offset + t * N[k])
            used.append(rows)
            w = _weights(batch.zeta[rows], x_md, c, rho)
            grad = w @ batch.gradients[rows] / N[k] + lam * (x_md - c)
            x = ball.project(((g + lam * (1 - a)) * x + lam * a * x_md - a * grad) / (g + lam))
            x_ag = a * x + (1 - a) * x_ag
        offset += T * N[k]
        x = x_ag.copy()
    used = np.concatenate(used)
    assert np.array_equal(used, np.arange(T * sum(N)))      # each sample exactly once
    oracle = ReSQueACSA(grad_batch, L, rho, rho)
    out = oracle(c, lam, phi, ball, 6)
    np.testing.assert_allclose(out, x_ag, rtol=1e-10, atol=1e-13)
    assert np.linalg.norm(out - c) <= rho * (1 + 1e-12)
    st = oracle.executor.stats
    assert (st.query_depth, st.total_queries, st.computational_depth) == (1, T * sum(N),
                                                                           K * T + 1)


def test_parallel_sco_bad_input_and_options():
    x0 = np.zeros(3)
    kw = dict(lipschitz=1.0, radius_bound=1.0, epsilon=0.2)
    for name, value in [("inner", "sgd"), ("smoothing", "none"), ("line_search", "golden")]:
        with pytest.raises(ValueError, match=name):
            parallel_sco(_median, x0, **kw, **{name: value})
    with pytest.raises(ValueError, match="epsilon"):
        parallel_sco(_median, x0, lipschitz=1.0, radius_bound=1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="lipschitz"):
        parallel_sco(_median, x0, lipschitz=-1.0, radius_bound=1.0, epsilon=0.1)
    with pytest.raises(ValueError, match="x0 must be 1-dimensional"):
        parallel_sco(_median, np.zeros((2, 3)), **kw)
    with pytest.raises(ValueError, match="max_queries"):
        parallel_sco(_median, x0, **kw, max_queries=100)
    res = parallel_sco(_median, x0, **kw, smoothing="glm", accuracy_scale=300.0, max_iter=2,
                       random_state=0)
    assert res.smoothing_radius == res.radius == pytest.approx(0.2)
    assert res.smoothing_error_bound == pytest.approx(0.2 * math.sqrt(2 / math.pi))
    with pytest.warns(ReSQueWarning) as record:
        ReSQueEpochSGD(_median, 1.0, 0.3, 0.1)
    assert [r.filename for r in record] == [__file__]
