"""Properties of note 001 section 9 not covered elsewhere: the enumeration identity on the
kernel path, the prefix property across budgets, the cost table, Proposition 3's distance
bound on several test problems, MORGRADEST on the l1 closed form, Algorithm 4 on a ball domain,
and the argument errors."""

import math

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core import ball_acceleration as ba
from dpsco_core.mlmc import (BoxDomain, GLMOracle, KinkOracle, L1Ball, L2Ball, NormOracle,
                             QuadraticOracle, Simplex, epoch_sgd, epochs_for_budget,
                             expected_gradients, gradients_for_epochs, level_epochs,
                             mlmc_combine, mlmc_draws, moreau_gradient, optest)
from dpsco_core.mlmc.domains import TwoBallIntersection


def _one_row_glm():
    """f(x) = |<a, x> - b| on one row: the oracle is deterministic (kernel path)."""
    prob = Problem(np.array([[0.6, -0.8, 0.0]]), np.array([0.3]), loss="absolute")
    return GLMOracle(prob)


@pytest.mark.parametrize("levels,j_max,base_level", [("paper", 9, 0), ("epoch", 6, 0),
                                                      ("epoch", 6, 2)])
def test_enumeration_identity_on_the_kernel_path(levels, j_max, base_level):
    """T2 through the compiled kernel: with a deterministic oracle every draw with the same K
    is the same vector, and sum_k 2^-k xhat(k) + 2^-(j_max - l0) xhat(trunc) equals the
    top-level EpochSGD output to machine precision (powers of two scale exactly)."""
    oracle = _one_row_glm()
    c, mu = np.array([0.2, 0.1, -0.3]), 1.5
    draws = mlmc_draws(oracle, mu, c, j_max=j_max, n_copies=6000, levels=levels,
                       base_level=base_level, random_state=0, n_threads=2)
    top = mlmc_draws(oracle, mu, c, j_max=j_max, levels=levels, base_level=j_max,
                     random_state=1).samples[0]
    n_k = j_max - base_level
    by_k = {}
    for x, k in zip(draws.offsets, draws.k):
        key = min(int(k), n_k + 1)
        if key in by_k:
            np.testing.assert_array_equal(x, by_k[key])
        by_k[key] = x
    assert set(by_k) == set(range(1, n_k + 2))
    total = sum(2.0 ** -k * by_k[k] for k in range(1, n_k + 1)) + 2.0 ** -n_k * by_k[n_k + 1]
    np.testing.assert_allclose(c + total, top, rtol=0, atol=4e-16 * (1 + n_k))


@pytest.mark.parametrize("domain,linear", [(None, None), (L2Ball(0.4), [0.1, 0.0, -0.2]),
                                           (Simplex(1.0), None), (BoxDomain(-0.1, 0.3), None)])
def test_prefix_property_across_budgets(domain, linear):
    """T3: for every budget T' < T the run with budget T' is snapshot m(T') of the run with
    budget T, bit for bit (same seed), whatever the domain and linear term."""
    o = KinkOracle(3, noise=1.0)
    c = np.array([0.3, 0.2, 0.1])
    long = epoch_sgd(o, 2.0, c, budget=2000, linear=linear, domain=domain, random_state=3)
    for budget in (0, 15, 16, 47, 48, 100, 500, 1007, 1008):
        short = epoch_sgd(o, 2.0, c, budget=budget, linear=linear, domain=domain,
                          random_state=3)
        m = epochs_for_budget(budget)
        np.testing.assert_array_equal(short.x, long.snapshots[m])
        assert short.n_gradients == gradients_for_epochs(m) <= budget


def test_cost_table_of_the_note():
    """T5: E N for paper levels (note 2.4 table, which charges N_ES(2^5) = 15 to the zero
    difference at J = 5 that the implementation skips), growth of one gradient per level,
    and no draw above N_ES(T_max) <= T_max."""
    note = {4: 0.9375, 6: 2.125, 8: 3.898, 10: 5.836, 12: 7.819, 16: 11.813, 20: 15.813,
            30: 25.813}
    for j_max, value in note.items():
        skipped = 15 / 32 if j_max >= 5 else 0.0
        assert expected_gradients(j_max, "paper") + skipped == pytest.approx(value, abs=1e-3)
    assert expected_gradients(31, "paper") - expected_gradients(30, "paper") == pytest.approx(
        1.0, abs=1e-6)
    # epoch levels: about 16 l_max - 18 and the base level's own cost
    assert expected_gradients(10, "epoch") == pytest.approx(16 * 10 - 18, abs=0.1)
    assert expected_gradients(6, "epoch", base_level=6) == gradients_for_epochs(6)
    draws = mlmc_draws(_one_row_glm(), 1.0, np.zeros(3), j_max=12, n_copies=4000,
                       levels="paper", random_state=2)
    assert draws.n_gradients.max() <= gradients_for_epochs(epochs_for_budget(2 ** 12)) <= 2 ** 12
    expected = [gradients_for_epochs(epochs_for_budget(2 ** int(k))) if k <= 12 else 0
                for k in draws.k]
    np.testing.assert_array_equal(
        draws.n_gradients, [0 if level_epochs(int(k), "paper") == level_epochs(int(k) - 1,
                                                                              "paper") else e
                            for k, e in zip(draws.k, expected)])


def _distance_cases():
    """(oracle, mu, c, domain, x*, G^2): note 9 P1, P2 (3-d), P4 and the P2 GLM (kernel)."""
    b, c = np.array([0.5, -0.2, 0.1]), np.array([-0.3, 0.4, 0.2])
    yield "P1 quadratic", QuadraticOracle(b, noise=0.5), 1.0, c, L2Ball(1.0), \
        (b + c) / 2.0, 4.0 + 3 * 0.25
    yield "P2 kink 3-d", KinkOracle(3, noise=1.0), 1.0, c, None, np.zeros(3), 3 * 2.0
    a = np.array([0.1, 0.1, 0.0])
    shrink = max(0.0, 1.0 - 0.5 / (2.0 * np.linalg.norm(c - a)))
    yield "P4 norm", NormOracle(a, scale=0.5, noise=0.3), 2.0, c, None, a + (c - a) * shrink, \
        0.25 + 3 * 0.09
    prob = Problem(np.ones((4, 1)), np.array([0.0, 0.0, -3.0, 3.0]), loss="absolute")
    yield "P2 GLM", GLMOracle(prob), 1.0, np.array([0.25]), None, np.zeros(1), 1.0


@pytest.mark.parametrize("case", list(_distance_cases()), ids=lambda c: c[0])
def test_distance_bound(case):
    """T9 / Proposition 3: E||x_T - x*||^2 <= 32 G^2 / (mu^2 T) at several budgets, with a
    margin (the mean over 40 runs, against the bound)."""
    _, oracle, mu, c, domain, x_star, g2 = case
    for budget in (48, 240, 1008):
        if isinstance(oracle, GLMOracle):
            m = epochs_for_budget(budget)
            xs = mlmc_draws(oracle, mu, c, j_max=m, base_level=m, n_copies=40,
                            random_state=budget).samples
        else:
            xs = np.array([epoch_sgd(oracle, mu, c, budget=budget, domain=domain,
                                     random_state=s).x for s in range(40)])
        mse = np.mean(np.sum((xs - x_star) ** 2, axis=1))
        assert mse <= 32 * g2 / (mu ** 2 * budget) / 4


def test_moreau_gradient_l1_closed_form_with_paper_targets():
    """T12 (P5): f = ||x||_1 / d through a GLM (kernel path); grad f_lam(y) = lam (y -
    soft(y, 1/(d lam))). With j_max and copies from the bias / MSE targets (ODC constant 1),
    the bias is within delta and the estimated MSE within sigma^2; ||E g|| <= G = 1."""
    d, lam = 3, 2.0
    A = np.vstack([np.eye(d), -np.eye(d)])
    oracle = GLMOracle(Problem(A, np.zeros(2 * d), loss="absolute"))
    y = np.array([0.8, 0.05, -0.4])
    exact = lam * (y - np.sign(y) * np.maximum(np.abs(y) - 1.0 / (d * lam), 0.0))
    delta, sigma2 = 0.05, 0.05
    res = moreau_gradient(oracle, y, lam, bias=delta, mse=sigma2, lipschitz=1.0, c=1.0,
                          random_state=0)
    n = res.draws.samples.shape[0]
    g_copies = lam * (y - res.draws.samples)
    se = g_copies.std(axis=0) / np.sqrt(n)
    assert np.linalg.norm(res.gradient - exact) <= delta + 4.5 * np.linalg.norm(se)
    assert np.sum((res.gradient - exact) ** 2) <= sigma2
    assert np.linalg.norm(exact) <= 1.0


def test_ball_acceleration_on_a_ball_domain_uses_the_exact_intersection():
    """Algorithm 4 on the sharp absolute-loss problem over X = B_1(0) with movement r: every
    oracle works on the exact X ∩ B_r(y_k), iterates stay feasible, and f(x) <= epsilon."""
    rs = np.random.default_rng(0)
    A = rs.standard_normal((60, 3))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    x_star = np.array([0.6, -0.3, 0.2])
    oracle = GLMOracle(Problem(A, A @ x_star, loss="absolute"))
    f = lambda x: np.mean(np.abs(A @ (x - x_star)))   # noqa: E731
    domain = L2Ball(0.75)
    seen = []

    class Recording(ba.EpochSGDBallOracle):
        def __call__(self, center, lam, phi, dom, random_state, linear=None):
            seen.append(type(dom))
            return super().__call__(center, lam, phi, dom, random_state, linear=linear)

    bo = Recording(oracle, 1.0, max_epochs=5)
    po = ba.MLMCProximalOracle(oracle, 1.0, c=1.0, max_copies=10, max_level=5)
    eps = 0.05
    res = ba.ball_acceleration(bo, po, ba.ConstantLambda(1.0), np.zeros(3), epsilon=eps,
                               radius_bound=0.75, lipschitz=1.0, movement=0.5, domain=domain,
                               max_iter=6, accuracy_scale=10.0, random_state=0)
    assert set(seen) == {ba.BallIntersection}
    assert all(np.linalg.norm(x) <= 0.75 + 1e-12 for x in res.iterates)
    assert f(res.x) <= eps


@pytest.mark.parametrize("call,match", [
    (lambda: mlmc_draws(KinkOracle(1), -1.0, [0.0], j_max=3), "mu"),
    (lambda: mlmc_draws(KinkOracle(1), float("nan"), [0.0], j_max=3), "mu"),
    (lambda: epoch_sgd(KinkOracle(1), 0.0, [0.0], budget=10), "mu"),
    (lambda: optest(KinkOracle(1), 0.0, [0.0], j_max=3, n_copies=2), "mu"),
    (lambda: moreau_gradient(KinkOracle(1), [0.0], 0.0, j_max=3, n_copies=2), "lam"),
    (lambda: mlmc_draws(KinkOracle(1), 1.0, [0.0], j_max=0), "j_max"),
    (lambda: optest(KinkOracle(1), 1.0, [0.0], j_max=41, n_copies=2), "j_max"),
    (lambda: epoch_sgd(KinkOracle(1), 1.0, [0.0], n_epochs=41), "n_epochs"),
    (lambda: mlmc_draws(KinkOracle(1), 1.0, [0.0], j_max=3, base_level=4), "base_level"),
    (lambda: BoxDomain([0.0, 1.0], [1.0, 0.5]), "empty"),
    (lambda: TwoBallIntersection(L2Ball(1.0), L2Ball(0.5, [2.0, 0.0]), 2), "empty"),
    (lambda: ba.BallIntersection(L2Ball(1.0), 0.5, np.array([2.0, 0.0])), "empty"),
    (lambda: L2Ball(-1.0), "radius"),
    (lambda: L1Ball(-0.5), "radius"),
    (lambda: Simplex(0.0), "total"),
])
def test_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
