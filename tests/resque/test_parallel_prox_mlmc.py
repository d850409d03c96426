"""Proposition 2's stochastic proximal oracle (MLMC over ReSQue ball-oracle runs) against the
paper's formulas: levels, level law, unbiasedness for the top level on a closed-form prox
point, variance bound, expected query count, depth charges and reproducibility."""

import math

import numpy as np
import pytest

from dpsco_core.mlmc.domains import L2Ball
from dpsco_core.parallel import SerialExecutor, ThreadExecutor
from dpsco_core.resque.parallel_sco import (ReSQueACSA, ReSQueEpochSGD,
                                            ReSQueMLMCProximalOracle, ac_sa_schedule,
                                            epoch_sgd_schedule, parallel_sco,
                                            proposition2_levels)

# f(x) = <a, x> with a noisy oracle: f_rho = f, and the prox point over B_c(r) is in closed
# form, x* = Proj_{B_c(r)}(c - a/lam); lam = L/(2r) puts it on the boundary (||a||/lam = 1.84 r),
# where a single ball-oracle run is biased towards the inside.
A = np.array([1.0, 0.0])
NOISE, D, R_BALL = 0.3, 2, 0.1
L = math.sqrt(1.0 + D * NOISE ** 2)
C = np.array([0.2, -0.1])
LAM = 0.5 * L / R_BALL
X_STAR = C - R_BALL * A
R_BOUND, KAPPA = 0.8, 10.0          # K = (R/r)^(2/3) = 4, j_max = ceil(2 + C_ba) = 3


def _linear(Z, random_state):
    return A + NOISE * np.random.default_rng(random_state).standard_normal(Z.shape)


def _oracle(cls=ReSQueACSA, scale=64.0, executor=None):
    ball = cls(_linear, L, R_BALL, R_BALL, executor)
    return ReSQueMLMCProximalOracle(ball, R_BOUND, KAPPA, accuracy_scale=scale)


def test_levels_follow_proposition_2():
    lam, r, R, kappa = 3.0, 0.01, 2.0, 50.0
    for c_ba in (1.0, 2.5):
        j_max, phis = proposition2_levels(lam, r, R, kappa, c_ba)
        assert j_max == math.ceil(math.log2((R / r) ** (2 / 3)) + c_ba)
        ell = math.log(R * kappa / r)
        np.testing.assert_allclose(phis, [lam * r ** 2 / (c_ba * 2 ** j * ell ** 2)
                                          for j in range(j_max + 1)], rtol=1e-14)
    assert proposition2_levels(lam, r, R, kappa, 1.0, 8.0)[1][0] == pytest.approx(
        8 * lam * r ** 2 / math.log(R * kappa / r) ** 2)
    with pytest.raises(ValueError, match="kappa"):
        proposition2_levels(lam, r, R, 0.0)


def test_level_law_is_geometric():
    """P(J = j) = 2^-j (j >= 1), from one raw word per call; the oracle uses that J."""
    n = 8_000
    J = np.array([ReSQueMLMCProximalOracle.draw_level(s) for s in range(n)])
    assert J.min() >= 1
    for j in range(1, 7):
        p = 2.0 ** (-j)
        assert abs(np.mean(J == j) - p) <= 4 * math.sqrt(p * (1 - p) / n)
    pr = _oracle(scale=1e4)
    for seed in range(5):
        pr(C, LAM, 0.0, 0.0, L2Ball(R_BALL, C), seed)
    assert pr.levels_drawn == [ReSQueMLMCProximalOracle.draw_level(s) for s in range(5)]


@pytest.mark.statistical
def test_unbiased_for_the_closed_form_prox_point_and_counts():
    """E x_hat = E x_jmax (telescoping): the mean is within standard errors of x* while one
    base-level run is biased by many standard errors; E||x_hat - x*||^2 <= (4 + 24 j_max)
    phi_0/lam; the mean number of queries matches the exact expectation
    n(phi_0) + sum_j 2^-j (n(phi_j) + n(phi_(j-1))) within standard errors."""
    n = 300
    pr = _oracle()
    g = pr.guarantees(LAM)
    assert g["j_max"] == 3
    dom = L2Ball(R_BALL, C)
    st = pr.ball_oracle.executor.stats
    xs, queries = [], []
    for seed in range(n):
        before = st.total_queries
        xs.append(pr(C, LAM, 0.0, 0.0, dom, seed))
        queries.append(st.total_queries - before)
    X, Q = np.array(xs), np.array(queries, dtype=np.float64)
    z = np.abs(X.mean(axis=0) - X_STAR) / (X.std(axis=0, ddof=1) / math.sqrt(n))
    assert np.all(z <= 4.0)
    base = np.array([pr.ball_oracle(C, LAM, g["phis"][0], dom, 10 ** 6 + s) for s in range(n)])
    z0 = np.abs(base.mean(axis=0) - X_STAR) / (base.std(axis=0, ddof=1) / math.sqrt(n))
    assert z0[0] >= 10.0                       # the test has power: x_0 alone is biased
    assert np.mean(np.sum((X - X_STAR) ** 2, axis=1)) <= g["mse_bound"]
    assert np.linalg.norm(X.mean(axis=0) - X_STAR) <= g["bias_bound"]
    assert abs(Q.mean() - g["expected_queries"]) <= 4 * Q.std(ddof=1) / math.sqrt(n)


@pytest.mark.parametrize("cls", [ReSQueEpochSGD, ReSQueACSA])
def test_expected_queries_against_the_papers_bound(cls):
    """Exact expectation <= (1 + 3 j_max/2) c C_ba L^2 log^2(R kappa/r)/(lam^2 r^2) + rounding,
    c = 48 (EpochSGD, Proposition 3) or 192 plus T K per run (AC-SA, Proposition 4): the
    summand of the proof of Theorems 1-2."""
    for lam in (0.5 * L / R_BALL, L / R_BALL, 4 * L / R_BALL):
        pr = _oracle(cls, scale=1.0)
        g = pr.guarantees(lam)
        j_max, phis = g["j_max"], g["phis"]
        ell2 = math.log(R_BOUND * KAPPA / R_BALL) ** 2
        lead = (1 + 1.5 * j_max) * L ** 2 * ell2 / (lam * R_BALL) ** 2
        if cls is ReSQueEpochSGD:
            assert g["expected_queries"] <= 48 * lead + 3
            assert all(pr.ball_oracle.n_queries(lam, p) <= epoch_sgd_schedule(L, lam, p)[0]
                       for p in phis)
        else:
            extra = sum(math.prod(ac_sa_schedule(L, lam, p, R_BALL, R_BALL)[:2]) for p in phis)
            assert g["expected_queries"] <= 192 * lead + 3 * extra
        # the expectation is the level-weighted sum of the exact per-run counts
        n = [pr.ball_oracle.n_queries(lam, p) for p in phis]
        assert g["expected_queries"] == pytest.approx(
            n[0] + sum(2.0 ** -j * (n[j] + n[j - 1]) for j in range(1, j_max + 1)))


def test_depth_and_work_charges():
    """All runs of a call form ONE round (or join an open one); total queries and
    computational depth are the sums over the runs x_0, x_J, x_(J-1)."""
    dom = L2Ball(R_BALL, C)
    for seed in range(6):
        pr = _oracle(scale=16.0)
        J = pr.draw_level(seed)
        _, phis = pr.levels(LAM)
        runs = [phis[0]] + ([phis[J], phis[J - 1]] if J <= 3 else [])
        pr(C, LAM, 0.0, 0.0, dom, seed)
        st = pr.ball_oracle.executor.stats
        assert st.query_depth == 1
        assert st.total_queries == sum(pr.ball_oracle.n_queries(LAM, p) for p in runs)
        assert st.computational_depth == 1 + sum(pr.ball_oracle.n_steps(LAM, p) for p in runs)
        pr.round_open = True
        pr(C, LAM, 0.0, 0.0, dom, seed)
        assert st.query_depth == 1 and not pr.round_open


def test_reproducible_from_the_seed():
    dom = L2Ball(R_BALL, C)
    a, b = _oracle(scale=16.0), _oracle(scale=16.0, executor=ThreadExecutor(3))
    outs = []
    for seed in (3, np.random.SeedSequence(3), 4):
        outs.append(a(C, LAM, 0.0, 0.0, dom, seed))
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].tobytes() != outs[2].tobytes()
    assert b(C, LAM, 0.0, 0.0, dom, 3).tobytes() == outs[0].tobytes()


S = np.array([0.3, -0.2, 0.1])


def _median(Z, random_state):
    D_ = Z - S
    return D_ / np.maximum(np.linalg.norm(D_, axis=1, keepdims=True), 1e-300)


def test_parallel_sco_with_proposition_2():
    kw = dict(lipschitz=1.0, radius_bound=1.0, epsilon=0.2, accuracy_scale=300.0,
              prox_oracle="mlmc", random_state=1)
    res = parallel_sco(_median, np.zeros(3), **kw)
    assert np.linalg.norm(res.x - S) <= 0.2
    n_iter = res.accel.n_iter
    assert res.query_depth == n_iter                  # ball + all prox levels: one round
    assert res.prox_levels.shape == (n_iter,) and res.prox_levels.min() >= 1
    assert tuple(res.trace[-1]) == (res.query_depth, res.total_queries, res.computational_depth)
    split = parallel_sco(_median, np.zeros(3), **kw, share_rounds=False)
    assert split.x.tobytes() == res.x.tobytes() and split.query_depth == 2 * n_iter
    again = parallel_sco(_median, np.zeros(3), **kw, executor=SerialExecutor())
    assert again.x.tobytes() == res.x.tobytes()
    np.testing.assert_array_equal(again.prox_levels, res.prox_levels)
    assert parallel_sco(_median, np.zeros(3), **{**kw, "prox_oracle": "ball"}).prox_levels is None
    with pytest.raises(ValueError, match="prox_oracle"):
        parallel_sco(_median, np.zeros(3), **{**kw, "prox_oracle": "optest"})
    with pytest.raises(ValueError, match="prox_accuracy_scale"):
        parallel_sco(_median, np.zeros(3), **kw, prox_accuracy_scale=0.0)
