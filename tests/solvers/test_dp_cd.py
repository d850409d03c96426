"""DP-CD solver: convergence without noise, calibration, privacy report, validation."""

import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core.privacy import NeighboringRelation, PrivacyReport, dp_cd_noise_multiplier
from dpsco_core.solvers.dp_cd import dp_cd_constants, dp_cd_schedule
from dpsco_core.solvers.smoothness import private_coordinate_smoothness

# These tests exercise the paper's protocol, whose steps and clips come from the data
# (smoothness="exact" / "twice_max"): the PrivacyLeakWarning is expected here, and
# tests/privacy/test_public_constants.py checks it and the public-bounds path.
pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")


def _lasso(seed=0, n=200, p=12, sparse=False):
    X, y, _ = dp.datasets.make_imbalanced_regression(n, p, scale_range=(0.1, 10),
                                                     random_state=seed)
    if sparse:
        X = X * (np.random.default_rng(seed).random(X.shape) < 0.4)
        X = sp.csc_matrix(X)
    lam_max = 2 * np.max(np.abs(X.T @ y)) / n
    return dp.Problem(X, y, loss="squared", penalty=dp.L1(0.05 * lam_max))


def _logistic(seed=0, n=300, p=8, sparse=False):
    X, y, _ = dp.datasets.make_imbalanced_classification(n, p, scale_range=(0.2, 5),
                                                         random_state=seed)
    if sparse:
        X = sp.csr_matrix(X * (np.random.default_rng(seed).random(X.shape) < 0.5))
    return dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-2))


@pytest.mark.parametrize("make", [_lasso, _logistic], ids=["lasso", "logistic"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_noiseless_unclipped_run_reaches_optimum(make, sparse):
    # Oracles 1 and 2 of note 002: sigma = 0 and C = inf give plain proximal CD.
    prob = make(sparse=sparse)
    optimum = prob.solve().objective
    res = dp.dp_cd(prob, epsilon=math.inf, delta=1e-5, passes=400, clip=math.inf,
                   average=False, random_state=0)
    assert (res.history.objective[-1] - optimum) / abs(optimum) < 1e-9
    assert res.privacy.epsilon == math.inf
    assert res.stats["clipped_fraction"] == 0.0


def test_schedule():
    assert dp_cd_schedule(8, passes=50) == (1, 400)
    assert dp_cd_schedule(8, passes=50, average=False) == (50, 8)
    assert dp_cd_schedule(8, n_outer=3, n_inner=20) == (3, 20)
    with pytest.raises(ValueError, match="not both"):
        dp_cd_schedule(8, passes=2, n_outer=1, n_inner=1)
    with pytest.raises(ValueError, match="whole number"):
        dp_cd_schedule(8, passes=2.5, average=False)


def test_constants_identity():
    # Note 002, 3.3: sum_j C_j^2 = C^2 and steps gamma / M_j; zero columns never move.
    M = np.array([4.0, 1.0, 0.0, 0.25])
    steps, clips = dp_cd_constants(M, step=0.5, clip=3.0)
    assert np.sum(clips ** 2) == pytest.approx(9.0)
    np.testing.assert_allclose(steps, [0.125, 0.5, 0.0, 2.0])
    assert clips[2] == 0.0


def _constants_numpy(M, step, clip):
    """dp_cd_constants' NumPy path (the former code), the reference of the float path."""
    M = np.asarray(M, dtype=np.float64)
    steps = np.zeros(M.shape)
    np.divide(step, M, out=steps, where=M > 0)
    total = M.sum()
    clips = np.sqrt(M / total) * clip if total > 0 else np.zeros_like(M)
    return steps, clips


@pytest.mark.parametrize("p", [1, 3, 7, 8, 9, 17, 64, 65])
def test_constants_float_path_is_bitwise_numpy(p):
    # Up to 64 coordinates the constants are computed on Python floats (issue 18): the same
    # IEEE operations, so the same bits, zero, huge, tiny and infinite M_j included.
    rng = np.random.default_rng(p)
    for trial in range(60):
        M = rng.lognormal(0.0, 5.0, size=p) * (rng.random(p) > 0.2)
        if trial % 7 == 0:
            M[rng.integers(p)] = np.inf
        if trial % 11 == 0:
            M[:] = 0.0
        if trial % 13 == 0:
            M[0] = 1e-320
        for step, clip in [(1.0, 1e4), (0.3, np.inf), (1e300, 1e-300), (2.5, 0.0)]:
            with np.errstate(all="ignore"):
                got = dp_cd_constants(M, step=step, clip=clip)
                want = _constants_numpy(M, step, clip)
            for a, b in zip(got, want):
                assert a.dtype == np.float64 and a.shape == b.shape
                np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize("relation, factor", [("replace_one", 2.0), ("add_or_remove_one", 1.0),
                                              ("zero_out", 1.0)])
@pytest.mark.parametrize("calibration", ["rdp", "theorem"])
def test_noise_scales_and_report(relation, factor, calibration):
    prob = _lasso()
    n, p = prob.n_samples, prob.n_features
    eps, delta = 1.0, 1.0 / n ** 2
    # add/remove-one: the normaliser is the public count, not the dataset's n (issue 15)
    m = n + 7 if relation == "add_or_remove_one" else n
    public_n = m if relation == "add_or_remove_one" else None
    res = dp.dp_cd(prob, epsilon=eps, delta=delta, passes=3, clip=2.0, random_state=1,
                   calibration=calibration, neighboring_relation=relation, public_n=public_n)
    s = dp_cd_noise_multiplier(epsilon=eps, delta=delta, releases=3 * p,
                               method="tight" if calibration == "rdp" else "theorem")
    assert res.stats["noise_multiplier"] == s
    np.testing.assert_allclose(res.stats["noise_scales"], s * factor * res.stats["clips"] / m,
                               rtol=1e-15)
    assert res.stats["normaliser"] == m
    assert np.sum(res.stats["clips"] ** 2) == pytest.approx(4.0)
    report = res.privacy
    assert report.releases == 3 * p
    assert report.epsilon <= eps
    if calibration == "rdp":
        assert report.epsilon == pytest.approx(eps, rel=1e-9)   # the calibration is tight
    # The report is what the accountant computes from the events alone.
    recomputed = PrivacyReport.from_event(
        report.event, delta=delta, accountant="rdp",
        neighboring_relation=report.neighboring_relation, orders=report.orders,
        conversion=report.conversion, budget_split=dict(report.budget_split),
        assumptions=report.assumptions, conditions=report.conditions)
    # The history's exact objective values and the clipped fraction (record_history=True) are
    # listed as side outputs, not accounted.
    assert report.non_private_outputs == (dp.result.HISTORY_OBJECTIVE_CONDITION,
                                          dp.result.NON_PRIVATE_STATS["clipped_fraction"])
    assert dataclasses.replace(recomputed, non_private_outputs=report.non_private_outputs) == report
    assert report.neighboring_relation is dp.solvers._common.check_relation(relation)


def test_theorem_reference_value():
    # Oracle 9 of note 002: n = 1000, L_j = C_j = 1, TK = 100, eps = 1, delta = 1e-5 gives
    # sigma_j = (2 / n) sqrt(3 TK log(1/delta)) / eps = 0.1175394.
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(1000, 4))
    prob = dp.Problem(X, rng.standard_normal(1000), loss="squared")
    res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, n_outer=1, n_inner=100, clip=2.0,
                   calibration="theorem", random_state=0)
    np.testing.assert_allclose(res.stats["clips"], 1.0)
    np.testing.assert_allclose(res.stats["noise_scales"], 0.1175394, rtol=1e-6)


def test_private_smoothness_report_and_budget():
    prob = _lasso()
    res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, smoothness="private",
                   random_state=3)
    report = res.privacy
    assert report.epsilon <= 1.0
    assert dict(report.budget_split) == {"smoothness constants": 0.1, "optimization": 0.9}
    assert "Laplace" in report.mechanisms and "Gaussian" in report.mechanisms
    assert any("read from the data" in c for c in report.conditions)
    assert not report.unconditional
    s = dp_cd_noise_multiplier(epsilon=0.9, delta=1e-5, releases=2 * prob.n_features)
    assert res.stats["noise_multiplier"] == s
    public = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, smoothness="private",
                      smoothness_bounds=np.full(prob.n_features, 50.0), random_state=3)
    assert not any("read from the data" in a for a in public.privacy.assumptions)
    assert public.privacy.unconditional


def test_exact_smoothness_is_flagged():
    res = dp.dp_cd(_lasso(), epsilon=1.0, delta=1e-5, passes=1, random_state=0)
    assert any("not accounted" in c for c in res.privacy.conditions)
    assert not res.privacy.unconditional


@pytest.mark.statistical
def test_private_smoothness_is_unbiased_and_scaled():
    # Oracle 14 of note 002: Laplace scale p b_j / (n eps'); mean of the estimate -> the
    # clipped mean (before the floor; the bounds here keep it away from the floor). 4.5 SE.
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(400, 3))
    prob = dp.Problem(X, rng.standard_normal(400), loss="squared")
    bounds = np.full(3, 1.0)
    b = 2.0 * bounds ** 2
    clipped_mean = np.minimum(2 * X ** 2, b).mean(axis=0)
    scale = 3 * b / (400 * 5.0)
    draws = np.array([private_coordinate_smoothness(prob, epsilon=5.0, bounds=bounds,
                                                    random_state=seed)[0]
                      for seed in range(2000)])
    se = np.sqrt(2 * scale ** 2 / 2000)
    assert np.all(np.abs(draws.mean(axis=0) - clipped_mean) <= 4.5 * se)
    assert np.all(draws > 0)


def test_private_smoothness_floor():
    # Post-processing floor: max(b_j / n, c * Laplace scale), c = floor_scales (default 3).
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(400, 3)) * np.array([1.0, 1e-3, 1e-2])
    prob = dp.Problem(X, rng.standard_normal(400), loss="squared")
    bounds = np.full(3, 1.0)
    b = 2.0 * bounds ** 2
    scale = 3 * b / (400 * 0.5)
    draws = np.array([private_coordinate_smoothness(prob, epsilon=0.5, bounds=bounds,
                                                    random_state=seed)[0]
                      for seed in range(200)])
    assert np.all(draws >= 3 * scale)
    assert np.all(np.any(draws[:, 1:] == 3 * scale[1:], axis=0))   # small features floored
    low = np.array([private_coordinate_smoothness(prob, epsilon=0.5, bounds=bounds,
                                                  floor_scales=0.0, random_state=seed)[0]
                    for seed in range(200)])
    assert np.all(low >= b / 400) and np.any(low < scale)
    same = np.maximum(low, 3 * scale)                  # the floor is applied after the noise
    np.testing.assert_array_equal(draws, same)
    with pytest.raises(ValueError, match="floor_scales"):
        private_coordinate_smoothness(prob, epsilon=0.5, bounds=bounds, floor_scales=-1.0)


def test_reproducible_and_fresh():
    prob = _logistic()
    a = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=7)
    b = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=7)
    np.testing.assert_array_equal(a.coef, b.coef)
    gen = np.random.default_rng(0)
    c = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=gen)
    d = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=gen)
    assert not np.array_equal(c.coef, d.coef)


def test_history_and_input_untouched():
    prob = _lasso()
    X_before = prob.X.copy()
    coef0 = np.full(prob.n_features, 0.01)
    res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=4, average=False, coef_init=coef0,
                   random_state=0)
    np.testing.assert_array_equal(res.history.passes, [0, 1, 2, 3, 4])
    assert res.history.objective[0] == pytest.approx(prob.objective(coef0))
    assert np.all(coef0 == 0.01)
    np.testing.assert_array_equal(prob.X, X_before)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(passes=0), ValueError, "passes"),
    (dict(passes=-1), ValueError, "passes"),
    (dict(clip=0.0), ValueError, "clip"),
    (dict(clip=math.inf), ValueError, "clip must be finite"),
    (dict(step=-1.0), ValueError, "step"),
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(smoothness="private", smoothness_share=1.0), ValueError, "smoothness_share"),
    (dict(smoothness="private", smoothness_share=0.0), ValueError, "smoothness_share"),
    (dict(selection="greedy"), ValueError, "selection"),
    (dict(calibration="exact"), ValueError, "calibration"),
    (dict(neighboring_relation="swap"), ValueError, "neighboring_relation"),
    (dict(coef_init=np.zeros(3)), ValueError, "coef_init"),
    (dict(smoothness=np.ones(2)), ValueError, "smoothness"),
])
def test_bad_input(kwargs, exc, match):
    args = dict(epsilon=1.0, delta=1e-5, passes=1)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        dp.dp_cd(_lasso(), **args)


def test_bad_problem():
    with pytest.raises(TypeError, match="Problem"):
        dp.dp_cd(np.ones((3, 3)), epsilon=1.0, delta=1e-5, passes=1)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_grid_runs_equal_single_runs_and_ignore_thread_count(sparse):
    prob = _logistic(sparse=sparse)
    kwargs = dict(epsilon=1.0, delta=1e-5, passes=3, steps=[0.3, 1.0], clips=[0.5, 2.0, 8.0],
                  n_seeds=2)
    grids = [dp.dp_cd_grid(prob, random_state=11, n_threads=t, **kwargs) for t in (1, 2, 4)]
    for g in grids[1:]:
        np.testing.assert_array_equal(g.coef, grids[0].coef)
    g = grids[0]
    assert g.coef.shape == (2, 3, 2, prob.n_features) and g.objective.shape == (2, 3, 2)
    r = (1 * 3 + 2) * 2 + 1          # step 1.0, clip 8.0, second seed
    single = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=3, step=1.0, clip=8.0,
                      random_state=g.seed_sequences[r])
    np.testing.assert_array_equal(single.coef, g.coef[1, 2, 1])
    assert g.objective[1, 2, 1] == pytest.approx(prob.objective(single.coef))
    assert g.privacy.epsilon == single.privacy.epsilon


def test_grid_bad_input():
    with pytest.raises(ValueError, match="clips\\[1\\]"):
        dp.dp_cd_grid(_lasso(), epsilon=1.0, delta=1e-5, passes=1, steps=[1.0],
                      clips=[1.0, -1.0])
    with pytest.raises(ValueError, match="smoothness_share"):
        dp.dp_cd_grid(_lasso(), epsilon=1.0, delta=1e-5, passes=1, steps=[1.0], clips=[1.0],
                      smoothness="private", smoothness_share=1.5)


def test_grid_private_smoothness_runs_equal_single_runs():
    prob = _lasso()
    g = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, passes=2, steps=[0.5, 1.0], clips=[1.0, 4.0],
                      n_seeds=2, smoothness="private", random_state=5)
    r = (1 * 2 + 1) * 2 + 1
    single = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, step=1.0, clip=4.0,
                      smoothness="private", random_state=g.seed_sequences[r])
    np.testing.assert_array_equal(single.coef, g.coef[1, 1, 1])
    # The same guarantee; the side outputs differ by name (the grid's clipped counts, the
    # run's clipped fraction), each listed as not private.
    assert (dataclasses.replace(g.privacy, non_private_outputs=())
            == dataclasses.replace(single.privacy, non_private_outputs=()))
    assert dp.result.NON_PRIVATE_STATS["clipped"] in g.privacy.non_private_outputs
    assert dp.result.NON_PRIVATE_STATS["clipped_fraction"] in single.privacy.non_private_outputs


@pytest.mark.parametrize("solver", ["dp_cd", "dp_sgd"])
def test_no_objective_evaluation_without_history_and_the_same_bits(monkeypatch, solver):
    # Issue 18: without a history the call evaluates no objective (the kernel alone reads the
    # data), and the iterates are bitwise those of the run that records one.
    X, y, _ = dp.datasets.make_sparse_lasso(n_samples=200, n_features=12, n_informative=3,
                                         random_state=3)
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.05), bounds=(-5.0, 5.0))
    run = getattr(dp, solver)
    kw = dict(epsilon=1.0, delta=1e-5, passes=3, random_state=7)
    if solver == "dp_sgd":
        kw["batch_size"] = 20
    with_history = run(prob, record_history=True, **kw)

    def no_objective(*args, **kwargs):
        raise AssertionError("objective evaluated without a history")

    monkeypatch.setattr(type(prob), "objective", no_objective)
    without = run(prob, record_history=False, **kw)
    np.testing.assert_array_equal(without.coef, with_history.coef)
    assert without.history.objective.size == 0


def test_small_epsilon_report_keeps_the_optimal_order_off_the_grid_edge():
    # At epsilon = 1e-3 the closed form's optimal order (added to the report's grid) is
    # above dp-accounting's last order 1024: it is the optimum, so one more order above it
    # keeps it inside the grid and the report raises no OrderGridWarning (session 16).
    import warnings

    from dpsco_core.exceptions import OrderGridWarning

    prob = _lasso()
    with warnings.catch_warnings():
        warnings.simplefilter("error", OrderGridWarning)
        res = dp.dp_cd(prob, epsilon=1e-3, delta=1e-6, passes=2, clip=2.0, random_state=0)
    assert res.privacy.epsilon <= 1e-3 * (1 + 1e-9)
    assert max(res.privacy.orders) > 1024.0
    assert res.privacy.epsilon == pytest.approx(1e-3, rel=1e-6)


def test_negative_per_coordinate_clips_are_named_as_such():
    prob = _lasso()
    with pytest.raises(ValueError, match="NaN or negative entries"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=1, clip=-np.ones(prob.n_features))
    with pytest.raises(ValueError, match="got shape"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=1, clip=np.ones(prob.n_features + 1))


@pytest.mark.parametrize("smoothness", ["auto", "public", "array"])
def test_public_constants_refusal_costs_no_budget(smoothness):
    """Pinned (session 17, hypothesis outside CI): with public M_j (the problem's bounds, or
    an array) the noise a tiny epsilon needs (1e-300: sigma ~ 1e300, beyond 1e150) was
    refused after the budget was charged, and the refused run stayed in a GDP budget's ledger
    (GDP composes it to epsilon ~ 0, so the charge passed). The public constants are now
    checked before the charge; with constants read from the data the order is unchanged."""
    from dpsco_core.privacy import Budget

    prob = dp.Problem(np.array([[1.0, 0.5], [-0.5, 1.0], [0.25, -1.0]]),
                      np.array([1.0, -1.0, 0.5]), penalty=dp.L1(0.1), bounds=(-1.0, 1.0),
                      label_bound=1.0)
    M = np.array([1.0, 1.0]) if smoothness == "array" else smoothness
    budget = Budget(1.0, 1e-5, accountant="gdp", neighboring_relation="replace_one")
    with pytest.raises(ValueError, match=r"epsilon=1e-300 is too small for this run"):
        dp.dp_cd(prob, epsilon=1e-300, delta=1e-6, passes=1, step=1.0, clip=1.0,
                 smoothness=M, random_state=0, record_history=False, budget=budget)
    assert budget.ledger == ()
    # the same run at an ordinary epsilon is charged and bitwise the run without a budget
    a = dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, step=1.0, clip=1.0, smoothness=M,
                 random_state=0, budget=budget)
    b = dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=1, step=1.0, clip=1.0, smoothness=M,
                 random_state=0)
    assert len(budget.ledger) == 1 and a.coef.tobytes() == b.coef.tobytes()


def test_gdp_calibration():
    """calibration="gdp" (session 18): the same releases, the exact GDP analysis: less noise
    than the RDP closed form for the same (epsilon, delta), a GDP report recomputed from the
    event, dp_cd_grid alike, a GDP Budget charged exactly; private smoothness constants (a
    Laplace release, no GDP curve) are refused before any charge."""
    from dpsco_core.privacy import Budget
    from dpsco_core.privacy.report import PrivacyReport

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 6))
    prob = dp.Problem(X, X @ np.ones(6) * 0.2, loss="half_squared", penalty=dp.L1(0.01),
                      bounds=(-1.0, 1.0), label_bound=2.0)
    rdp = dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=5, random_state=0)
    gdp = dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=5, calibration="gdp", random_state=0)
    assert gdp.stats["noise_multiplier"] < 0.9 * rdp.stats["noise_multiplier"]
    assert gdp.stats["calibration"] == "gdp" and gdp.privacy.accountant == "gdp"
    again = PrivacyReport.from_event(gdp.privacy.event, delta=1e-6, accountant="gdp",
                                     neighboring_relation=gdp.privacy.neighboring_relation)
    assert again.epsilon == gdp.privacy.epsilon <= 1.0
    grid = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-6, steps=[1.0], clips=[1.0], passes=5,
                         calibration="gdp", random_state=0)
    assert grid.privacy.accountant == "gdp" and grid.privacy.epsilon <= 1.0
    assert grid.stats["noise_multiplier"] == gdp.stats["noise_multiplier"]
    budget = Budget(1.0, 1e-6, accountant="gdp", neighboring_relation="replace_one")
    dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=5, calibration="gdp", random_state=0,
             budget=budget)
    assert budget.spent_epsilon <= 1.0
    budget = Budget(10.0, 1e-6)
    with pytest.raises(ValueError, match="calibration='gdp' composes Gaussian releases only"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=5, calibration="gdp",
                 smoothness="private", budget=budget)
    assert budget.ledger == ()
    with pytest.raises(ValueError, match="calibration must be 'rdp', 'gdp' or 'theorem'"):
        dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=5, calibration="pld")


def test_gdp_calibration_is_not_capped_below_the_rdp_calibration():
    """Review s19: calibration='gdp' went through calibrate_gaussian's default
    max_noise_multiplier (1e6) and refused (PrivacyBudgetError) a run the 'rdp' calibration
    makes with a larger multiplier (epsilon 1e-3, delta 1e-6, 10^6 releases: rdp s = 5.26e6,
    gdp needs 2.44e6 < rdp's). The GDP calibration must not refuse what the looser one runs."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (50, 3)), rng.uniform(-1, 1, 50)
    prob = dp.Problem(X, y, loss="squared", bounds=([-1.0] * 3, [1.0] * 3))
    kwargs = dict(epsilon=1e-3, delta=1e-6, n_outer=1000, n_inner=1000, random_state=0,
                  record_history=False)
    rdp = dp.dp_cd(prob, calibration="rdp", **kwargs)
    gdp = dp.dp_cd(prob, calibration="gdp", **kwargs)
    assert gdp.stats["noise_multiplier"] < rdp.stats["noise_multiplier"]
    assert gdp.privacy.epsilon <= 1e-3 and gdp.privacy.accountant == "gdp"


def test_gdp_calibration_overflow_names_epsilon():
    """Review s19: where sqrt(T K) / mu overflows (epsilon = delta = 1e-300, T K = 2^62) the
    GDP calibration raised 'GaussianDpEvent.noise_multiplier must be a finite number ...;
    got inf' (an internal event); it names epsilon, as the 'rdp' calibration does."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (50, 3)), rng.uniform(-1, 1, 50)
    prob = dp.Problem(X, y, loss="squared", bounds=([-1.0] * 3, [1.0] * 3))
    with pytest.raises(ValueError, match="epsilon") as info:
        dp.dp_cd(prob, epsilon=1e-300, delta=1e-300, n_outer=2 ** 31, n_inner=2 ** 31,
                 calibration="gdp")
    assert "GaussianDpEvent" not in str(info.value)
