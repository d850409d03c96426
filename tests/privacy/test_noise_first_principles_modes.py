"""First-principles noise tests, continued (issue 15, section 7): the add/remove-one relation,
``strongly_convex_reduction``, ``projected_dp_sgd_l1`` and the approximate-DP modes of the
Frank-Wolfe solvers.

Same method as ``test_noise_first_principles.py`` (whose helpers are reused): the noise scale is
written out from the paper's formula and the relation's sensitivity, the calibration functions
(or the RDP accountant) give only the multiplier of a stated (epsilon, delta, releases), the
spread or the selection law of what the run released is measured, and releases are counted from
the updates the run made.

Add/remove-one (the rule of ``dpsco_core.solvers._common.normaliser``): a clipped sum changes by
at most C when one record is added or removed, and noisy sums are divided by the caller's public
count ``public_n``, never by the private n. Every test below therefore uses a dataset whose size
n differs from ``public_n``: a normaliser, rate or schedule taken from n is visible.
"""

import importlib
import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.privacy.accountants import RdpAccountant
from dpsco_core.privacy.calibration import calibrate_sampled_gaussian, dp_cd_noise_multiplier
from dpsco_core.privacy.events import EpsilonDeltaDpEvent, NeighboringRelation
from dpsco_core.solvers import frank_wolfe, mirror_descent

from test_noise_first_principles import (_check_selection_rate, _rnm_law, _sgd_problem,
                                         _zero_gradient_problem, assert_spread)

pytestmark = [pytest.mark.statistical,
              pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.OrderGridWarning")]

ARO = "add_or_remove_one"


def _avg_weights(T):
    """sum_u ((T - u + 1) / T)^2: the weight of step u's noise in the mean of x_1..x_T."""
    return sum(((T - u + 1) / T) ** 2 for u in range(1, T + 1))


# --------------------------------------------------------------------------------------------
# DP-CD and its grid under add/remove-one: Delta_j = C_j / public_n
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("average", [False, True])
def test_dp_cd_add_remove_one_noise(average):
    n, public_n, p, passes, step, clip = 50, 80, 60, 3, 0.5, 2.0
    prob = _zero_gradient_problem(n, p)
    coefs = np.array([dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=passes, step=step,
                               clip=clip, average=average, selection="cyclic",
                               smoothness=np.ones(p), neighboring_relation=ARO,
                               public_n=public_n, random_state=seed,
                               record_history=False).coef
                      for seed in range(12)])
    releases = passes * p
    s = dp_cd_noise_multiplier(epsilon=1.0, delta=1e-5, releases=releases)
    sigma = s * 1.0 * math.sqrt(1.0 / p) * clip / public_n     # factor 1: one record more or less
    if average:
        K = releases
        w2 = np.array([sum(((K - (j + 1 + u * p) + 1) / K) ** 2 for u in range(passes))
                       for j in range(p)])
    else:
        w2 = np.full(p, float(passes))
    assert_spread(coefs / np.sqrt(step ** 2 * sigma ** 2 * w2), 1.0,
                  f"dp_cd add/remove-one average={average}")


def test_dp_cd_grid_add_remove_one_noise():
    n, public_n, p, passes = 50, 90, 40, 2
    prob = _zero_gradient_problem(n, p)
    steps, clips = np.array([0.5, 1.0]), np.array([1.0, 3.0])
    res = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, steps=steps, clips=clips, n_seeds=6,
                        passes=passes, average=False, selection="cyclic",
                        smoothness=np.ones(p), neighboring_relation=ARO, public_n=public_n,
                        random_state=4, evaluate=False)
    s = dp_cd_noise_multiplier(epsilon=1.0, delta=1e-5, releases=passes * p)
    sigma1 = s * math.sqrt(1.0 / p) / public_n
    for i, step in enumerate(steps):
        for c, clip in enumerate(clips):
            var = passes * (step * clip * sigma1) ** 2
            assert_spread(res.coef[i, c], var, f"dp_cd_grid add/remove-one {step} {clip}")


# --------------------------------------------------------------------------------------------
# Poisson DP-SGD under add/remove-one: q = B / public_n, noise s C, divisor q public_n = B
# --------------------------------------------------------------------------------------------

class _KernelCalls:
    """Stands in for ``dp_sgd``'s kernel module: records (steps, q, divisor) of every call."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def sgd_dense(self, *args):
        # (..., coef, k, kind, q, batch_size, eta, clip, noise_scale, norm, gen, gen, threads)
        self.calls.append((args[-11], args[-9], args[-4]))
        return self.real.sgd_dense(*args)


def test_dp_sgd_poisson_add_remove_one_noise(monkeypatch):
    # The noise variance of the output is nearly invariant to the rate at fixed passes
    # (updates ~ 1/q, s^2 ~ q), so the releases are also counted: the steps the kernel ran at
    # the rate it sampled with, against ceil(passes / q) at q = B / public_n.
    dp_sgd_module = importlib.import_module("dpsco_core.solvers.dp_sgd")   # not the function
    kernel = _KernelCalls(dp_sgd_module._batch)
    monkeypatch.setattr(dp_sgd_module, "_batch", kernel)
    n, public_n, p, batch, passes, step, clip = 200, 320, 401, 20, 2, 0.5, 1.5
    prob = _sgd_problem(n, p)
    coefs = np.array([dp.dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=passes, batch_size=batch,
                                step=step, clip=clip, neighboring_relation=ARO,
                                public_n=public_n, smoothness=1.0, random_state=seed,
                                record_history=False).coef[1:] for seed in range(8)])
    q = batch / public_n
    updates = math.ceil(passes / q)
    assert len(kernel.calls) == 8                    # record_history=False: one call a run
    for steps_run, q_run, norm_run in kernel.calls:
        assert steps_run == updates and q_run == pytest.approx(q, rel=1e-12)
        assert norm_run == pytest.approx(q * public_n, rel=1e-12)   # the divisor q m = B
    s = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=q,
                                   steps=updates)
    assert_spread(coefs, updates * (step * s * clip / batch) ** 2, "dp_sgd add/remove-one")


# --------------------------------------------------------------------------------------------
# Mirror descent under add/remove-one (Asi et al. 2021, Algorithm 1; p = 2: identity map)
# --------------------------------------------------------------------------------------------

def test_noisy_mirror_descent_add_remove_one_noise():
    n, public_n, d, b, T, eta, C = 400, 700, 300, 20, 6, 0.3, 2.5
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    coefs = np.array([dp.solvers.noisy_mirror_descent(
        prob, epsilon=1.0, delta=1e-5, radius=1e9, geometry=2.0, batch_size=b, steps=T,
        step=eta, clip=C, neighboring_relation=ARO, public_n=public_n,
        random_state=seed).coef for seed in range(6)])
    sigma = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5,
                                       sample_rate=b / public_n, steps=T)
    assert_spread(coefs, (eta * sigma * C / b) ** 2 * _avg_weights(T),
                  "noisy mirror descent add/remove-one")


def test_localized_mirror_descent_add_remove_one_schedule(monkeypatch):
    # Every phase's schedule (n_i = public_n / 2^i, eps_i, b_i, T_i) is the public function of
    # public_n of Algorithm 2; each phase is a Poisson-sampled Gaussian at rate b_i / n_i with
    # its own multiplier. The noise each phase's kernel draws is sigma_i C (checked against
    # the spread in test_noisy_mirror_descent_*: the same kernel).
    calls = []
    real = mirror_descent._run_md

    def hook(problem, rows, **kw):
        calls.append(kw)
        return real(problem, rows, **kw)
    monkeypatch.setattr(mirror_descent, "_run_md", hook)
    n, public_n, d, C = 1500, 2600, 20, 1.5
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    dp.solvers.localized_mirror_descent(prob, epsilon=1.0, delta=1e-5, geometry=2.0,
                                        radius=1e3, clip=C, max_steps=5,
                                        neighboring_relation=ARO, public_n=public_n,
                                        random_state=7)
    k = int(math.floor(math.log2(public_n / 16)))
    assert len(calls) == k                                  # one noisy run per phase
    for i, kw in enumerate(calls, start=1):
        n_i, e_i = public_n // 2 ** i, 1.0 / 2 ** i
        b_i = min(n_i, max(math.ceil(math.sqrt(n_i / math.log(d))), math.ceil(math.sqrt(d) / e_i)))
        T_i = min(5, math.ceil(n_i * n_i / (b_i * b_i)))
        q_i = b_i / n_i
        sigma = calibrate_sampled_gaussian(target_epsilon=e_i, target_delta=1e-5,
                                           sample_rate=q_i, steps=T_i)
        assert (kw["steps"], kw["expected_batch"]) == (T_i, b_i), f"phase {i}"
        assert kw["q"] == pytest.approx(q_i, rel=1e-12), f"phase {i}"
        assert kw["sigma"] * kw["clip"] == pytest.approx(sigma * C, rel=1e-9), f"phase {i}"


# --------------------------------------------------------------------------------------------
# The strongly convex reduction (section 5): rounds on disjoint chunks, public counts
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("relation", ["zero_out", ARO])
def test_strongly_convex_reduction_noise(relation):
    # k = ceil(log2 log m) rounds; round i's public count is m 2^i / sum_j 2^j under
    # add/remove-one (its chunk's size is private), its chunk's size under zero-out (the
    # assignment does not depend on the data, n is public). The round's solver is noisy mirror
    # descent on zero rows: its output is pure noise of the round's (q_i, T) calibration.
    n, public_n, d, b, T, eta, C = 600, 1000, 300, 20, 4, 0.3, 2.5
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    m = public_n if relation == ARO else n
    k = math.ceil(math.log2(max(math.log(m), 2.0)))
    weights = [2.0 ** i for i in range(1, k + 1)]
    for seed in range(3):
        rounds = []

        def solver(sub, start=None, **kw):       # the start does not enter the noise
            res = dp.solvers.noisy_mirror_descent(sub, **kw)
            rounds.append((sub.n_samples, res.coef))
            return res
        kwargs = dict(epsilon=1.0, delta=1e-5, radius=1e9, geometry=2.0, batch_size=b,
                      steps=T, step=eta, clip=C, neighboring_relation=relation)
        if relation == ARO:
            kwargs["public_n"] = public_n
        res = dp.solvers.strongly_convex_reduction(prob, solver=solver, random_state=seed,
                                                   **kwargs)
        assert len(rounds) == k
        sigmas = []
        for i, (size, coef) in enumerate(rounds):
            m_i = max(2, round(m * weights[i] / sum(weights))) if relation == ARO else size
            sigma = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5,
                                               sample_rate=b / m_i, steps=T)
            sigmas.append(sigma)
            assert_spread(coef, (eta * sigma * C / b) ** 2 * _avg_weights(T),
                          f"strongly_convex_reduction {relation} round {i}")
        # the run's guarantee is its worst round's (parallel composition)
        assert res.privacy.epsilon <= 1.0 + 1e-9


# --------------------------------------------------------------------------------------------
# projected_dp_sgd_l1: Poisson rate B / m, noise N(0, sigma^2 C^2), divisor B
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("relation", ["zero_out", ARO])
def test_projected_dp_sgd_l1_noise(relation):
    # Zero rows: x_k = -(eta / B) sum_{u <= k} g_u (the l1 ball of radius 1e9 never binds);
    # the output is the mean of x_1..x_K, K = round(epochs / q) noisy steps.
    n, public_n, d, B, epochs, eta, C = 400, 700, 300, 20, 0.3, 0.2, 2.5
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    kw = dict(public_n=public_n) if relation == ARO else {}
    coefs = np.array([dp.solvers.projected_dp_sgd_l1(
        prob, epsilon=1.0, delta=1e-5, radius=1e9, clip=C, epochs=epochs, batch_size=B,
        step=eta, neighboring_relation=relation, random_state=seed, **kw).coef
        for seed in range(6)])
    m = public_n if relation == ARO else n
    q = B / m
    K = max(1, round(epochs / q))
    sigma = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=q,
                                       steps=K)
    assert_spread(coefs, (eta * sigma * C / B) ** 2 * _avg_weights(K),
                  f"projected_dp_sgd_l1 {relation}")


# --------------------------------------------------------------------------------------------
# Frank-Wolfe with delta: every selection is a report-noisy-max of known scores
# --------------------------------------------------------------------------------------------

def _constant_gradient_problem(n, d):
    # Rows e_0 with y = 100: the derivative x_0 - 100 is clipped at L = 1 on the whole ball,
    # so every gradient (and every variance-reduction correction, exactly 0) is -e_0 and the
    # scores of +-R e_j are +R, -R, 0: each selection has the same law, independent of x.
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    return dp.Problem(X, np.full(n, 100.0), loss="half_squared")


@pytest.fixture
def selections(monkeypatch):
    """Every Frank-Wolfe update the run makes: the selected (j, sign), in order."""
    record = []
    real = frank_wolfe._Stepper.step

    def step(self, w, alpha, sel, eta):
        record.append(sel)
        return real(self, w, alpha, sel, eta)
    monkeypatch.setattr(frank_wolfe._Stepper, "step", step)
    return record


def test_ttz_frank_wolfe_approximate_dp_noise(selections):
    # With delta: the largest eps_it whose T-fold composition (pure eps_it-DP releases in the
    # RDP accountant) is (eps, delta)-DP; lambda = 2 Delta / eps_it, Delta = 2 R L / n.
    n, d, R, eps, delta, T = 280, 3, 1.0, 1.0, 1e-5, 200

    def composed(e):
        acc = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
        return acc.compose(EpsilonDeltaDpEvent(e), T).get_epsilon(delta)
    lo, hi = eps / T, eps
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if composed(mid) <= eps else (lo, mid)
    assert lo > 2.0 * eps / T           # the approximate mode is not basic composition here
    lam = 2.0 * (2.0 * R * 1.0 / n) / lo
    runs = 20
    for seed in range(runs):
        dp.solvers.ttz_frank_wolfe(_constant_gradient_problem(n, d), epsilon=eps, delta=delta,
                                   radius=R, n_iter=T, random_state=seed)
    assert len(selections) == runs * T                       # one release per iteration
    hits = sum(sel == (0, 1) for sel in selections)
    _check_selection_rate(hits, len(selections), _rnm_law(lam, R, d, np.random.default_rng(2)),
                          "ttz_frank_wolfe with delta")


def _level_leaf_epsilon(k, epsilon, delta):
    """Largest eps_leaf with k adaptive eps_leaf-DP releases (epsilon, delta)-DP: basic
    composition k eps_leaf, or rho = k eps_leaf^2 / 2 zCDP (Bun and Steinke 2016, Prop. 3.3)
    converted by rho + 2 sqrt(rho ln(1/delta)) (Prop. 1.3)."""
    basic = epsilon / k
    L = math.log(1.0 / delta)
    sqrt_rho = math.sqrt(L + epsilon) - math.sqrt(L)
    zcdp = math.sqrt(2.0 * sqrt_rho ** 2 / k)
    return max(basic, zcdp) if k > 1 else basic


def test_vr_frank_wolfe_approximate_dp_noise(selections):
    # Algorithm 3 with delta (Theorem 7, Lemma 4.4), strict replace-one ledger, T = 2 phases.
    # Level (t, j): k = 2^(t-j) leaves, p = 2^j shuffled vertices, score sensitivity
    # Delta_0 = 2 R L / b, Delta_j = 2 R (2 L) 2^j / b; a leaf is (2 Delta_j / lambda)-DP.
    # Amplification by shuffling needs p > 16 ln(2 / delta_s) (FMT21 Thm 3.8), impossible with
    # p <= 4: every level is basic or zCDP composition at delta, and lambda_t is the smallest
    # scale that keeps every level of phase t within (epsilon, delta).
    n, d, R, L, b, eps, delta, T = 400, 3, 1.0, 1.0, 64, 1.0, 1e-3, 2
    assert 2 ** T < 16.0 * math.log(2.0 / (delta / 2.0))
    lambdas = []
    for t in range(1, T + 1):
        sens = [2.0 * R * L / b] + [2.0 * R * 2.0 * L * 2 ** j / b for j in range(1, t + 1)]
        lambdas.append(max(2.0 * sens[j] / _level_leaf_epsilon(2 ** (t - j), eps, delta)
                           for j in range(t + 1)))
    runs = 80              # the calibration (bisection over the levels) costs ~0.2 s a run
    for seed in range(runs):
        dp.solvers.vr_frank_wolfe(_constant_gradient_problem(n, d), epsilon=eps, delta=delta,
                                  radius=R, batch=b, n_phases=T, random_state=seed,
                                  record_history=False)
    leaves = [2 ** t for t in range(1, T + 1)]
    assert len(selections) == runs * sum(leaves)             # one release per leaf
    per_run = np.array(selections, dtype=object).reshape(runs, sum(leaves), 2)
    rng = np.random.default_rng(3)
    first = 0
    for t, count in enumerate(leaves, start=1):
        sel = per_run[:, first:first + count].reshape(-1, 2)
        first += count
        hits = int(np.sum((sel[:, 0] == 0) & (sel[:, 1] == 1)))
        _check_selection_rate(hits, sel.shape[0], _rnm_law(lambdas[t - 1], R, d, rng),
                              f"vr_frank_wolfe with delta, phase {t}")


def _fmt21_level(k, p, eps_leaf, epsilon, delta):
    """A level's (epsilon, delta) from the papers, independently of the library: k adaptive
    eps_leaf-DP releases (basic composition, or zCDP rho = k eps_leaf^2 / 2 converted by
    Bun and Steinke's rho + 2 sqrt(rho ln(1/d))), and, where Feldman, McMillan and Talwar
    (2021) Theorem 3.8's precondition holds, the p shuffled randomizers' amplified bound with
    delta_s = delta / 2 and delta_0 = delta / (3 p (e^epsilon + 1))."""
    def compose(d):
        basic = k * eps_leaf
        rho = k * eps_leaf ** 2 / 2.0
        z = rho + 2.0 * math.sqrt(rho * math.log(1.0 / d))
        return (z, d) if k > 1 and z < basic else (basic, 0.0)

    eps_a, delta_a = compose(delta)
    delta_s = delta / 2.0
    delta_0 = delta / (3.0 * p * (math.exp(epsilon) + 1.0))
    eps_0, d_0 = compose(delta_0)
    if p >= 2 and eps_0 <= math.log(p / (16.0 * math.log(2.0 / delta_s))):
        e0 = math.exp(eps_0)
        eps_f = math.log(1.0 + (e0 - 1.0) / (e0 + 1.0) * (
            8.0 * math.sqrt(e0 * math.log(4.0 / delta_s)) / math.sqrt(p) + 8.0 * e0 / p))
        if eps_f < eps_a:
            return eps_f, delta_s + (math.exp(eps_f) + 1.0) * (1.0 + 1.0 / (2.0 * e0)) * p * d_0
    return eps_a, delta_a


def test_vr_frank_wolfe_shuffled_levels_from_first_principles():
    """Algorithm 3 with delta at depths where amplification by shuffling applies (p = 2^j
    vertices above 16 ln(2 / delta_s): j >= 10 at delta = 1e-6; T = 18 phases, so that some
    amplified levels hold k >= 64 leaves, whose zCDP composition carries delta_0): every
    level of the calibrated tree, recomputed from the papers' formulas (_fmt21_level), is
    within (epsilon, delta) and equals the library's ledger. (The noise test above cannot
    reach these depths: 2^18 leaves a run.) Session 18: the mutants that drop the leaves'
    delta_0 from an amplified level, or give the shuffling all of delta, survived before."""
    from dpsco_core.solvers.frank_wolfe import _calibrate_phase, vr_frank_wolfe_ledger

    b, T, R, L, eps, delta = 64, 18, 1.0, 1.0, 1.0, 1e-6
    lambdas, amplified, with_delta_0 = [], 0, 0
    for t in range(1, T + 1):
        sens = np.array([2.0 * R * L / b] + [2.0 * R * 2.0 * L * 2 ** j / b
                                             for j in range(1, t + 1)])
        lam = _calibrate_phase(t, sens, eps, delta)
        lambdas.append(lam)
        for j in range(t + 1):
            e, d = _fmt21_level(2 ** (t - j), 2 ** j, 2.0 * sens[j] / lam, eps, delta)
            assert e <= eps * (1.0 + 1e-12) and d <= delta * (1.0 + 1e-12), (t, j, e, d)
    ledger = vr_frank_wolfe_ledger(b=b, T=T, lambdas=lambdas, vertex_norm=R, lipschitz=L,
                                   epsilon=eps, delta=delta)
    for row in ledger:
        e, d = _fmt21_level(row["leaves"], row["vertices"], row["eps_leaf"], eps, delta)
        assert row["epsilon"] == pytest.approx(e, rel=1e-12)
        assert row["delta"] == pytest.approx(d, rel=1e-12, abs=1e-300)
        amplified += row["amplified"]
        with_delta_0 += row["amplified"] and row["delta"] > delta / 2.0 * (1.0 + 1e-12)
    assert amplified >= 40 and with_delta_0 >= 5     # the shuffled bound, both of its terms
