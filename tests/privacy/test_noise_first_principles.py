"""Every solver's noise, checked from first principles (issue 15, section 7).

The report tests rebuild a report from the solver's own event; they cannot see a wrong
sensitivity, a wrong release count or noise drawn smaller than accounted. Each test here
writes the noise scale out from the paper's formula and the relation's sensitivity (the
calibration functions are used only for the multiplier ``s`` of a stated (epsilon, delta,
releases)), measures the spread of the noise the run actually released, and counts the
releases from the updates the run made. The problems are chosen so that the noise is
observable: a gradient that is exactly zero on the measured coordinates (all-zero feature
columns, zero rows), a known gradient with a known selection law (Frank-Wolfe), or a hook that
records the input and the output of the noise step (single-epoch solvers, MLMC).

Identity checked in every test: the mean of the squared standardized noise equals 1, within
``N_SE`` standard errors estimated from the same samples (means are 0 by symmetry). Sizes keep
each test at about a second. Relations: replace-one and zero-out, where the dataset's own n is
the normaliser (the add/remove-one normaliser is another part of issue 15); mirror descent,
analysed only under add/remove-one, is normalised by its public expected batch ``batch_size``.
"""

import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core import mechanisms as M
from dpsco_core.privacy.calibration import (calibrate_gaussian, calibrate_sampled_gaussian,
                                            dp_cd_noise_multiplier)
from dpsco_core.privacy.gdp import gdp_mu

pytestmark = pytest.mark.statistical

#: Tolerance in standard errors (a false alarm has probability below 1e-6 per check).
N_SE = 5.0
FACTOR = {"replace_one": 2.0, "zero_out": 1.0}     # sensitivity of a clipped sum, units of C


def assert_spread(noise, variance, what):
    """mean(noise^2) = variance within N_SE standard errors (noise has mean zero)."""
    z2 = np.square(np.asarray(noise, dtype=np.float64).ravel()) / variance
    se = z2.std(ddof=1) / math.sqrt(z2.size)
    assert abs(z2.mean() - 1.0) <= N_SE * se, (
        f"{what}: measured variance / formula = {z2.mean():.4f} +- {se:.4f} "
        f"({z2.size} samples)")


# --------------------------------------------------------------------------------------------
# Standalone mechanisms
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("secure", [True, False])
def test_gaussian_mechanism_spread(secure):
    # sigma = z Delta, z the smallest multiplier with the mechanism's (1, 1e-5) guarantee;
    # the exact sampler inflates Delta by 2^-10 on its grid (dpsco_core._secure).
    mech = M.GaussianMechanism(sensitivity=0.3, epsilon=1.0, delta=1e-5, secure=secure)
    assert mech.get_epsilon(1e-5) <= 1.0 + 1e-9
    z = mech.noise_multiplier
    if not secure:
        assert z == pytest.approx(1.0 / gdp_mu(1.0, 1e-5), rel=1e-6)
    inflation = 1.0 + 2.0 ** -10 if secure else 1.0
    out = mech(np.zeros(40_000), random_state=1)
    assert_spread(out, (z * 0.3 * inflation) ** 2, "Gaussian mechanism")


@pytest.mark.parametrize("secure", [True, False])
def test_laplace_mechanism_spread(secure):
    # b = Delta_1 / epsilon; Var = 2 b^2 (discrete Laplace: within the grid's inflation).
    mech = M.LaplaceMechanism(sensitivity=0.3, epsilon=0.5, secure=secure)
    out = mech(np.zeros(40_000), random_state=2)
    assert_spread(out, 2.0 * (0.3 / 0.5) ** 2, "Laplace mechanism")


# --------------------------------------------------------------------------------------------
# Tree aggregation: every node has its own noise, in every variant
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("variance_reduced", [False, True])
def test_tree_nodes_of_one_level_are_independent(variance_reduced):
    # Prefix noise N_s of a zero stream. Node estimate of level k: variance v_k sigma^2 with
    # v_k = 1 (plain) or 2^k / (2^(k+1) - 1) (Honaker). N_{3 2^k} - N_{2^(k+1)} - N_{2^k} is
    # the estimate of node (k, 3) minus that of node (k, 1): variance 2 v_k sigma^2 if the two
    # nodes of level k draw independent noise, 0 if they share it.
    p, T, sigma = 4000, 16, 0.7
    tree = dp.tree.TreeAggregation(p, T, noise_scale=sigma, variance_reduced=variance_reduced,
                                   random_state=3)
    N = np.array([tree.next(np.zeros(p)) for _ in range(T)])
    for s in range(1, T + 1):
        bits = [k for k in range(s.bit_length()) if (s >> k) & 1]
        v = sum(2.0 ** k / (2.0 ** (k + 1) - 1.0) if variance_reduced else 1.0 for k in bits)
        assert_spread(N[s - 1], v * sigma ** 2, f"prefix {s}")
    for k in range(3):
        v_k = 2.0 ** k / (2.0 ** (k + 1) - 1.0) if variance_reduced else 1.0
        diff = N[3 * 2 ** k - 1] - N[2 ** (k + 1) - 1] - N[2 ** k - 1]
        assert_spread(diff, 2.0 * v_k * sigma ** 2, f"nodes (k={k}, 1) and ({k}, 3)")


# --------------------------------------------------------------------------------------------
# DP-CD (Mangold et al. 2022, Algorithm 1; sigma_j = s Delta_j, Delta_j = factor C_j / n)
# --------------------------------------------------------------------------------------------

def _zero_gradient_problem(n, p):
    # X = 0: every clipped coordinate gradient is exactly 0, so each update moves w_j by
    # -gamma_j times its noise; public smoothness constants M_j = 1 fix gamma_j and C_j.
    return dp.Problem(np.zeros((n, p)), np.zeros(n), loss="squared")


def _cd_sigma(relation, clip, n, p, epsilon, delta, releases):
    s = dp_cd_noise_multiplier(epsilon=epsilon, delta=delta, releases=releases)
    C_j = math.sqrt(1.0 / p) * clip                   # C_j = sqrt(M_j / sum M) C, M_j = 1
    return s * FACTOR[relation] * C_j / n


@pytest.mark.parametrize("relation", ["replace_one", "zero_out"])
@pytest.mark.parametrize("average", [False, True])
def test_dp_cd_noise(relation, average):
    n, p, passes, step, clip = 50, 60, 3, 0.5, 2.0
    prob = _zero_gradient_problem(n, p)
    coefs = np.array([dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=passes, step=step,
                               clip=clip, average=average, selection="cyclic",
                               smoothness=np.ones(p), neighboring_relation=relation,
                               random_state=seed, record_history=False).coef
                      for seed in range(12)])
    # Releases: passes * p updates, whatever (T, K) the schedule chose.
    releases = passes * p
    sigma = _cd_sigma(relation, clip, n, p, 1.0, 1e-5, releases)
    if average:
        # T = 1, K = passes p: output = mean of the K iterates; cyclic order updates j at
        # steps k_u = j + 1 + u p, each noise weighted by (K - k_u + 1) / K.
        K = releases
        weights = np.array([[((K - (j + 1 + u * p) + 1) / K) for u in range(passes)]
                            for j in range(p)])
        var = step ** 2 * sigma ** 2 * np.sum(weights ** 2, axis=1)
    else:
        var = np.full(p, passes * step ** 2 * sigma ** 2)   # T = passes updates of each w_j
    assert_spread(coefs / np.sqrt(var), 1.0, f"dp_cd average={average} {relation}")


def _gdp_mu_from_the_paper(epsilon, delta):
    """mu with mu-GDP exactly (epsilon, delta)-DP: Dong, Roth and Su (2019), Corollary 2.13,
    delta(epsilon) = Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2),
    solved here with SciPy alone."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    return brentq(lambda mu: norm.cdf(-epsilon / mu + mu / 2.0)
                  - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2.0) - delta,
                  1e-6, 50.0, xtol=1e-15, rtol=1e-14)


@pytest.mark.parametrize("relation", ["replace_one", "zero_out"])
def test_dp_cd_gdp_calibration_noise(relation):
    # calibration="gdp": the T K releases of multiplier s compose to sqrt(T K) / s-GDP (Dong,
    # Roth and Su, Cor. 3.3), so s = sqrt(T K) / mu(epsilon, delta) of Cor. 2.13 (session 18).
    n, p, passes, step, clip, eps, delta = 50, 60, 3, 0.5, 2.0, 1.0, 1e-5
    prob = _zero_gradient_problem(n, p)
    releases = passes * p
    s = math.sqrt(releases) / _gdp_mu_from_the_paper(eps, delta)
    sigma = s * FACTOR[relation] * math.sqrt(1.0 / p) * clip / n
    runs = [dp.dp_cd(prob, epsilon=eps, delta=delta, passes=passes, step=step, clip=clip,
                     average=False, selection="cyclic", calibration="gdp",
                     smoothness=np.ones(p), neighboring_relation=relation, random_state=seed,
                     record_history=False) for seed in range(12)]
    assert runs[0].stats["noise_multiplier"] == pytest.approx(s, rel=1e-9)
    assert runs[0].privacy.accountant == "gdp" and runs[0].privacy.epsilon <= eps
    coefs = np.array([r.coef for r in runs])
    var = np.full(p, passes * step ** 2 * sigma ** 2)   # T = passes updates of each w_j
    assert_spread(coefs / np.sqrt(var), 1.0, f"dp_cd calibration='gdp' {relation}")


def test_dp_cd_theorem_calibration_and_explicit_schedule():
    # calibration="theorem": Theorem 3.1, s = sqrt(3 T K log(1/delta)) / epsilon, written out;
    # the schedule given as (n_outer, n_inner) = (4, p / 2): T K = 2 p releases; whichever
    # coordinates they hit, the sum over j of w_j^2 / gamma^2 has expectation T K sigma^2.
    n, p, step = 50, 60, 0.5
    prob = _zero_gradient_problem(n, p)
    T, K = 4, p // 2
    s = math.sqrt(3.0 * T * K * math.log(1e5)) / 1.0
    sigma = s * 2.0 * math.sqrt(1.0 / p) / n
    coefs = np.array([dp.dp_cd(prob, epsilon=1.0, delta=1e-5, n_outer=T, n_inner=K, step=step,
                               average=False, selection="cyclic", calibration="theorem",
                               smoothness=np.ones(p), random_state=seed,
                               record_history=False).coef for seed in range(12)])
    total = np.sum(coefs ** 2, axis=1)          # sum over j of (gamma * noise sums)^2
    assert_spread(np.sqrt(total), T * K * (step * sigma) ** 2, "dp_cd theorem, (T, K) given")


@pytest.mark.parametrize("relation", ["replace_one", "zero_out"])
def test_dp_cd_random_selection_counts_every_update(relation):
    # Random coordinates, last iterate: sum_j w_j^2 / gamma^2 = sum of all update noises^2,
    # expectation (T K) sigma^2 whichever coordinates were drawn.
    n, p, passes, step = 40, 50, 4, 1.0
    prob = _zero_gradient_problem(n, p)
    sigma = _cd_sigma(relation, 1.0, n, p, 1.0, 1e-5, passes * p)
    totals = [np.sum(dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=passes, step=step,
                              average=False, smoothness=np.ones(p),
                              neighboring_relation=relation, random_state=seed,
                              record_history=False).coef ** 2)
              for seed in range(200)]
    assert_spread(np.sqrt(totals), passes * p * sigma ** 2, "dp_cd random selection")


@pytest.mark.parametrize("average", [False, True])
def test_dp_cd_grid_noise(average):
    n, p, passes = 50, 40, 2
    prob = _zero_gradient_problem(n, p)
    steps, clips = np.array([0.5, 1.0]), np.array([1.0, 3.0])
    res = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, steps=steps, clips=clips, n_seeds=6,
                        passes=passes, average=average, selection="cyclic",
                        smoothness=np.ones(p), neighboring_relation="replace_one",
                        random_state=4, evaluate=False)
    K = passes * p
    sigma1 = _cd_sigma("replace_one", 1.0, n, p, 1.0, 1e-5, K)
    if average:
        w2 = np.array([sum(((K - (j + 1 + u * p) + 1) / K) ** 2 for u in range(passes))
                       for j in range(p)])
    else:
        w2 = np.full(p, float(passes))
    for i, step in enumerate(steps):
        for c, clip in enumerate(clips):
            var = (step * clip * sigma1) ** 2 * w2
            assert_spread(res.coef[i, c] / np.sqrt(var), 1.0,
                          f"dp_cd_grid step={step} clip={clip}")


def test_private_smoothness_laplace_scale():
    # Section 5.2: M_j = mean of min(s x_ij^2, b_j) + Lap(p b_j / (n eps')); here every
    # x_ij = B_j, so the clipped mean is exactly b_j = B_j^2 and the noise is the release
    # minus b_j (the floor b_j / n is never reached at this scale).
    from dpsco_core.solvers.smoothness import private_coordinate_smoothness
    n, p, eps = 2000, 400, 8.0
    B = np.linspace(0.5, 2.0, p)
    prob = dp.Problem(np.tile(B, (n, 1)), np.zeros(n), loss="half_squared")   # s_loss = 1
    b = B ** 2
    scale = p * b / (n * eps)
    M_hat, _, data_dependent = private_coordinate_smoothness(prob, epsilon=eps, bounds=B,
                                                             random_state=5)
    assert not data_dependent
    assert_spread((M_hat - b) / scale, 2.0, "private smoothness (function)")
    # Through dp_cd: epsilon' = smoothness_share * epsilon; M_j is what steps and clips use.
    noise = []
    for seed in range(3):
        res = dp.dp_cd(prob, epsilon=20.0, delta=1e-5, passes=1, smoothness="private",
                       smoothness_share=0.4, smoothness_bounds=B, random_state=seed,
                       record_history=False)
        steps = res.stats["steps"]            # gamma_j = step / M_j, step = 1
        noise.append((1.0 / steps - b) / (p * b / (n * 0.4 * 20.0)))
    assert_spread(np.concatenate(noise), 2.0, "private smoothness (dp_cd)")


# --------------------------------------------------------------------------------------------
# DP-SGD (Poisson and shuffle)
# --------------------------------------------------------------------------------------------

def _sgd_problem(n, p):
    # Every row is e_0 (y = 0), loss (m - y)^2 / 2: beta = lambda_max(X^T X) / n = 1 (also
    # max_i ||x_i||^2 and mean_i ||x_i||^2), and
    # coordinates 1..p-1 have an exactly zero gradient: only noise moves them.
    X = np.zeros((n, p))
    X[:, 0] = 1.0
    return dp.Problem(X, np.zeros(n), loss="half_squared")


@pytest.mark.parametrize("sampling, relation", [("poisson", "zero_out"),
                                                ("shuffle", "replace_one"),
                                                ("shuffle", "zero_out")])
def test_dp_sgd_noise(sampling, relation):
    n, p, batch, passes, step, clip = 200, 401, 20, 2, 0.5, 1.5
    prob = _sgd_problem(n, p)
    coefs = np.array([dp.dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=passes, batch_size=batch,
                                step=step, clip=clip, sampling=sampling,
                                neighboring_relation=relation, random_state=seed,
                                record_history=False).coef[1:] for seed in range(8)])
    q = batch / n
    if sampling == "poisson":
        updates = math.ceil(passes / q)                   # one noisy step per 1/q of a pass
        s = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=q,
                                       steps=updates)
    else:
        updates = passes * (n // batch)
        # each record is in one batch per epoch: `passes` Gaussian releases of it
        s = calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=passes,
                               accountant="rdp")
    sigma = s * FACTOR[relation] * clip
    var = updates * (step * sigma / batch) ** 2           # eta = step / beta, beta = 1
    assert_spread(coefs, var, f"dp_sgd {sampling} {relation}")


# --------------------------------------------------------------------------------------------
# Mirror descent (Asi et al. 2021, Algorithm 1): p = 2 makes the map the identity
# --------------------------------------------------------------------------------------------

def test_noisy_mirror_descent_noise():
    # Zero rows: the clipped Poisson sum is 0; x_k = -eta/b sum_{u<=k} xi_u with
    # xi ~ N(0, sigma^2 C^2 I); the output is the mean of x_1..x_T.
    n, d, b, T, eta, C = 400, 300, 20, 6, 0.3, 2.5
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    coefs = np.array([dp.solvers.noisy_mirror_descent(
        prob, epsilon=1.0, delta=1e-5, radius=1e9, geometry=2.0, batch_size=b, steps=T,
        step=eta, clip=C, random_state=seed).coef for seed in range(6)])
    sigma = calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1e-5, sample_rate=b / n,
                                       steps=T)
    w2 = sum(((T - u + 1) / T) ** 2 for u in range(1, T + 1))
    assert_spread(coefs, (eta * sigma * C / b) ** 2 * w2, "noisy mirror descent")


def test_localized_mirror_descent_first_phase_noise():
    from dpsco_core.solvers.mirror_descent import localized_mirror_descent
    n, d = 2000, 200
    prob = dp.Problem(np.zeros((n, d)), np.zeros(n), loss="squared")
    res = localized_mirror_descent(prob, epsilon=1.0, delta=1e-5, geometry=2.0, radius=1e6,
                                   random_state=7)
    ph = res.stats["phases"]
    assert len(ph) >= 1
    # Every phase: sigma_i from its own (epsilon_i, q_i, T_i); a phase's event is what
    # the report's worst case is taken over.
    for phase in ph:
        s = calibrate_sampled_gaussian(target_epsilon=phase["epsilon"], target_delta=1e-5,
                                       sample_rate=phase["sample_rate"], steps=phase["steps"])
        assert phase["noise_multiplier"] == pytest.approx(s, rel=1e-9)


# --------------------------------------------------------------------------------------------
# Frank-Wolfe: report-noisy-max with a known score gap
# --------------------------------------------------------------------------------------------

def _fw_problem(n, d):
    # Rows e_0, y = 1, squared loss: at x = 0 every clipped gradient is -e_0 (L = 1), so the
    # scores -<c, v> of the 2d vertices +-R e_j are +R (for +R e_0), -R (for -R e_0), 0 else.
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    return dp.Problem(X, np.ones(n), loss="half_squared")


def _rnm_law(scale, R, d, rng):
    """P(first selection = +R e_0) under i.i.d. Laplace(scale) noise (Monte Carlo, 4e5)."""
    noise = rng.laplace(0.0, scale, (400_000, 2 * d))
    scores = np.zeros(2 * d)
    scores[0], scores[1] = R, -R
    return float(np.mean(np.argmax(scores + noise, axis=1) == 0))


def _check_selection_rate(hits, runs, p0, what):
    se = math.sqrt(p0 * (1 - p0) / runs)
    assert abs(hits / runs - p0) <= N_SE * se + 0.003, (
        f"{what}: selection rate {hits / runs:.4f}, first-principles {p0:.4f} +- {se:.4f}")


def test_ttz_frank_wolfe_noise():
    # TTZ15: scores have sensitivity 2 R L / n (replace-one); noise lambda = 2 Delta / eps_it,
    # eps_it = eps / T (pure, basic composition). One iteration: x_1 = selected vertex.
    n, d, R, eps = 100, 3, 1.0, 0.04          # lambda = 1 = the score gap / 2
    prob = _fw_problem(n, d)
    lam = 2.0 * (2.0 * R * 1.0 / n) / eps
    runs = 600
    hits = 0
    for seed in range(runs):
        coef = dp.solvers.ttz_frank_wolfe(prob, epsilon=eps, radius=R, n_iter=1,
                                          random_state=seed).coef
        hits += coef[0] > 0.5 * R
    p0 = _rnm_law(lam, R, d, np.random.default_rng(0))
    _check_selection_rate(hits, runs, p0, "ttz_frank_wolfe")


def test_vr_frank_wolfe_noise():
    # Algorithm 3, one phase (t = 1), pure DP, strict replace-one ledger: lambda_1 =
    # max_j 2^(t-j) 2 Delta_j / eps with Delta_0 = 2RL/b, Delta_1 = 2R(2L)2/b: 16 R L/(b eps).
    # The first step (eta = 1) goes to the first selected vertex, the second (eta = 2/3)
    # mixes: x_2 = v_1 / 3 + 2 v_2 / 3, so the first selection is read off the output.
    n, d, R, b, eps = 400, 3, 1.0, 64, 1.0
    prob = _fw_problem(n, d)
    lam = 16.0 * R * 1.0 / (b * eps)
    runs = 600
    hits = 0
    for seed in range(runs):
        coef = dp.solvers.vr_frank_wolfe(prob, epsilon=eps, radius=R, batch=b, n_phases=1,
                                         random_state=seed, record_history=False).coef
        first = _first_vertex(coef, R)
        hits += first == (0, 1)
    p0 = _rnm_law(lam, R, d, np.random.default_rng(1))
    _check_selection_rate(hits, runs, p0, "vr_frank_wolfe")


def _first_vertex(coef, R):
    """(j, sign) of v_1 from x_2 = v_1/3 + 2 v_2/3 (v_i = sign R e_j)."""
    nz = [(j, c) for j, c in enumerate(coef) if abs(c) > 1e-9 * R]
    if len(nz) == 2:                                       # v_1, v_2 on different axes
        (j, c), = [(j, c) for j, c in nz if math.isclose(abs(c), R / 3, rel_tol=1e-6)]
        return j, int(np.sign(c))
    (j, c), = nz
    if math.isclose(abs(c), R, rel_tol=1e-6):              # v_2 = v_1
        return j, int(np.sign(c))
    return j, -int(np.sign(c))                             # v_2 = -v_1: x_2 = -v_1 / 3


# --------------------------------------------------------------------------------------------
# Single-epoch solvers (Choquette-Choo, Ganesh and Thakurta 2024): hooks on the noise step
# --------------------------------------------------------------------------------------------

class _TreeRecorder:
    """Wraps TreeAggregation: records (exact prefix, noisy prefix) of every release."""

    def __init__(self, record):
        self.record = record

    def __call__(self, *args, **kwargs):
        tree = dp.tree.TreeAggregation(*args, **kwargs)
        record, inner = self.record, tree.next

        def next_(value, out=None):
            exact = np.array(value, copy=True)
            res = inner(value, out=out)
            record.append((exact, np.array(res, copy=True)))
            return res
        tree.next = next_
        return tree


def _single_epoch_problem(n, p):
    rng = np.random.default_rng(8)
    X = rng.choice([-1.0, 1.0], size=(n, p)) / math.sqrt(p)
    return dp.Problem(X, X @ np.ones(p), loss="half_squared")


@pytest.mark.parametrize("relation", ["zero_out", "replace_one"])
@pytest.mark.parametrize("solver, variance_reduced",
                         [("dp_srgd", False), ("dp_srgd", True), ("dp_srg", False)])
def test_tree_solvers_noise(monkeypatch, relation, solver, variance_reduced):
    # Node std sigma = s (factor C / B), s = sqrt(levels) / mu(eps, delta): a record changes
    # one leaf by factor C / B and lies in bit_length(T) nodes (Lemma 8); N_s has variance
    # popcount(s) sigma^2 (plain) or sum_k 2^k / (2^(k+1) - 1) sigma^2 (Honaker).
    from dpsco_core.solvers import _single_epoch
    record = []
    monkeypatch.setattr(_single_epoch, "TreeAggregation", _TreeRecorder(record))
    n, p, B, clip = 1024, 600, 64, 0.8
    prob = _single_epoch_problem(n, p)
    kwargs = dict(epsilon=1.0, delta=1e-6, beta=1.0, batch_size=B, clip=clip, radius=10.0,
                  neighboring_relation=relation, random_state=9, record_history=False)
    if solver == "dp_srgd":
        dp.solvers.dp_srgd(prob, variance_reduced_tree=variance_reduced, **kwargs)
    else:
        getattr(dp.solvers, solver)(prob, **kwargs)
    T = n // B
    assert len(record) == T                                # one tree release per round
    sigma = math.sqrt(T.bit_length()) / gdp_mu(1.0, 1e-6) * FACTOR[relation] * clip / B
    for s, (exact, noisy) in enumerate(record, start=1):
        bits = [k for k in range(s.bit_length()) if (s >> k) & 1]
        v = sum(2.0 ** k / (2.0 ** (k + 1) - 1.0) if variance_reduced else 1.0 for k in bits)
        assert_spread(noisy - exact, v * sigma ** 2, f"{solver} round {s}")


@pytest.mark.parametrize("relation", ["zero_out", "replace_one"])
@pytest.mark.parametrize("solver", ["dp_sgd_single_epoch", "accelerated_dp_sgd"])
def test_independent_noise_baselines(monkeypatch, relation, solver):
    # One Gaussian mechanism per record (it enters one round): sigma = (1 / mu) factor C / B.
    from dpsco_core.solvers import _single_epoch
    record = []
    real = _single_epoch._noise

    class Hook:
        GAUSSIAN, NOISE_BLOCK_SIZE = real.GAUSSIAN, real.NOISE_BLOCK_SIZE

        @staticmethod
        def add_noise(x, scale, kind, gens, out, n_threads):
            res = real.add_noise(x, scale, kind, gens, out, n_threads)
            record.append(np.array(out) - np.asarray(x))
            return res
    monkeypatch.setattr(_single_epoch, "_noise", Hook)
    n, p, B, clip = 1024, 600, 64, 0.8
    prob = _single_epoch_problem(n, p)
    getattr(dp.solvers, solver)(prob, epsilon=1.0, delta=1e-6, beta=1.0, batch_size=B,
                                clip=clip, radius=10.0, neighboring_relation=relation,
                                random_state=10, record_history=False)
    assert len(record) == n // B
    sigma = 1.0 / gdp_mu(1.0, 1e-6) * FACTOR[relation] * clip / B
    assert_spread(np.array(record), sigma ** 2, solver)


# --------------------------------------------------------------------------------------------
# MLMC DP-SCO (Asi et al., Algorithm 6): one Gaussian release per phase on disjoint blocks
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("relation", ["replace_one", "zero_out"])
def test_mlmc_dp_sco_noise(monkeypatch, relation):
    # Phase i releases the mean of m clipped offsets (norm <= r_i = kappa G eta_i n_bar); a
    # record used by at most k_max copies moves the mean by 2 r_i k_max / m (its copies'
    # offsets change arbitrarily within the ball, under either relation); one Gaussian
    # release per record (disjoint blocks): z = the one-step multiplier of (eps, delta).
    from dpsco_core.mlmc import dp_sco
    from dpsco_core._random import check_random_state, child_seed_sequences
    record = []
    real = dp_sco.GaussianMechanism

    def hook(**kwargs):
        mech = real(**kwargs)
        call = mech.__call__

        class Recorded:
            noise_scale = mech.noise_scale

            def __call__(self, x, **kw):
                out = call(x, **kw)
                record.append(out - x)
                return out
        return Recorded()
    monkeypatch.setattr(dp_sco, "GaussianMechanism", hook)
    rng = np.random.default_rng(11)
    n, d, k, eta, rho, kappa, G = 512, 300, 2, 0.05, 4.0, 2.0, 1.0
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    prob = dp.Problem(X, X @ np.full(d, 0.1), loss="half_squared")
    res = dp.mlmc.mlmc_dp_sco(prob, epsilon=1.0, delta=1e-5, radius=100.0, lipschitz=G,
                              n_phases=k, step=eta, step_decay=rho, clip_factor=kappa,
                              neighboring_relation=relation, random_state=12,
                              record_history=False)
    j_max = res.stats["j_max"]
    n_bar = m = n // k
    z = calibrate_gaussian(target_epsilon=1.0, target_delta=1e-5, steps=1, accountant="rdp")
    assert len(record) == k                                 # one release per phase
    seed = check_random_state(12)
    for i in range(1, k + 1):
        copies_seed, _ = child_seed_sequences(seed, 2, offset=2 * (i - 1))
        _, _, usage = dp_sco.mlmc_sample_usage(copies_seed, m, n_bar, j_max=j_max,
                                               levels="paper")
        r_i = kappa * G * (eta / rho ** i) * n_bar
        sensitivity = 2.0 * r_i * int(usage.max()) / m
        assert_spread(record[i - 1], (z * sensitivity) ** 2, f"mlmc phase {i}")


# --------------------------------------------------------------------------------------------
# The floating-point assumption is stated wherever floating-point noise is used (section 6)
# --------------------------------------------------------------------------------------------

def _tiny():
    X = np.zeros((64, 4))
    X[:, 0] = 1.0
    return dp.Problem(X, np.ones(64), loss="half_squared")


SOLVER_RUNS = {
    "dp_cd": lambda p: dp.dp_cd(p, epsilon=1.0, delta=1e-5, passes=1, smoothness=np.ones(4),
                                random_state=0),
    "dp_cd_grid": lambda p: dp.dp_cd_grid(p, epsilon=1.0, delta=1e-5, steps=[1.0], clips=[1.0],
                                          passes=1, smoothness=np.ones(4), random_state=0),
    "dp_sgd": lambda p: dp.dp_sgd(p, epsilon=1.0, delta=1e-5, passes=1, batch_size=8,
                                  neighboring_relation="zero_out", random_state=0),
    "dp_srgd": lambda p: dp.solvers.dp_srgd(p, epsilon=1.0, delta=1e-5, beta=1.0,
                                            random_state=0),
    "dp_srg": lambda p: dp.solvers.dp_srg(p, epsilon=1.0, delta=1e-5, beta=1.0,
                                          random_state=0),
    "accelerated_dp_sgd": lambda p: dp.solvers.accelerated_dp_sgd(
        p, epsilon=1.0, delta=1e-5, beta=1.0, random_state=0),
    "vr_frank_wolfe": lambda p: dp.solvers.vr_frank_wolfe(p, epsilon=1.0, batch=16, n_phases=1,
                                                          random_state=0),
    "ttz_frank_wolfe": lambda p: dp.solvers.ttz_frank_wolfe(p, epsilon=1.0, n_iter=2,
                                                            random_state=0),
    "noisy_mirror_descent": lambda p: dp.solvers.noisy_mirror_descent(
        p, epsilon=1.0, delta=1e-5, steps=2, batch_size=8, random_state=0),
    "mlmc_dp_sco": lambda p: dp.mlmc.mlmc_dp_sco(p, epsilon=1.0, delta=1e-5, radius=1.0,
                                                 lipschitz=1.0, n_phases=1, random_state=0),
}


@pytest.mark.parametrize("solver", sorted(SOLVER_RUNS))
def test_reports_state_the_floating_point_assumption(solver):
    from dpsco_core.privacy.report import FLOATING_POINT_ASSUMPTION
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = SOLVER_RUNS[solver](_tiny())
    assert FLOATING_POINT_ASSUMPTION in res.privacy.assumptions
