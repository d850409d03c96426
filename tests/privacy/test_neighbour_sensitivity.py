"""The released quantity moves between neighbours by at most the sensitivity the noise used.

Issue 15, part 1. Each solver releases a noisy mean: a clipped sum divided by a public count
m, plus noise calibrated to the sensitivity of that mean. For every solver and every relation
it offers, these tests compute the *noiseless* released quantity through the solver's own code
path (``epsilon=inf``, one update, no penalty, public smoothness constants) on a dataset D and
its worst neighbour D' (an extreme outlier row added, a row removed, replaced by the outlier,
or zeroed), and check that it moves by at most the sensitivity the calibration used, read from
a private run's noise scale divided by its noise multiplier (never from a formula in the test
that could share the solver's mistake).

The worst case: every row of D has its clipped term at -C (feature 10, target 10, so at w = 0
the squared loss's derivative is large and negative), the outlier's term is +C. With the
private n as normaliser an added row moves the mean by up to 2C/(n + 1), twice the C/n the
calibration used (``test_private_n_normaliser_is_caught``).
"""

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core._kernels import _cd
from dpsco_core.privacy.events import NeighboringRelation
from dpsco_core.solvers._common import normaliser
from dpsco_core.solvers.dp_cd import dp_cd, dp_cd_grid
from dpsco_core.solvers.dp_sgd import dp_sgd

N, P = 200, 3
CLIP = 1.0
OUTLIER = (1e6, -1e6)          # feature value and target of the added / replacing row
REL_TOL = 1e-9                 # floating-point slack on the bound, relative


def _base():
    rng = np.random.default_rng(0)
    X = np.full((N, P), 10.0) + rng.uniform(0.0, 1.0, (N, P))
    y = np.full(N, 10.0) + rng.uniform(0.0, 1.0, N)
    return X, y


def _outlier_row():
    return np.full(P, OUTLIER[0]), OUTLIER[1]


def neighbours(relation):
    """(D, [D', ...]): the worst neighbours of D under ``relation``."""
    X, y = _base()
    xo, yo = _outlier_row()
    out = []
    if relation == "add_or_remove_one":
        out.append((np.vstack([X, xo]), np.append(y, yo)))          # add the outlier
        out.append((X[1:], y[1:]))                                  # remove a row
    elif relation == "replace_one":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = xo, yo
        out.append((X2, y2))
    elif relation == "zero_out":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = 0.0, 0.0
        out.append((X2, y2))
    return (X, y), out


def _public_n(relation):
    return 250 if relation == "add_or_remove_one" else None


# -- DP-CD ------------------------------------------------------------------------------------

def _cd_release(X, y, relation, public_n, grid=False):
    """Noiseless g_0 of DP-CD's first update (cyclic, from w = 0, no penalty, step 1)."""
    prob = dp.Problem(X, y, loss="squared")
    kw = dict(epsilon=np.inf, delta=1e-5, n_outer=1, n_inner=1, average=False,
              selection="cyclic", smoothness=np.ones(P), neighboring_relation=relation,
              public_n=public_n)
    if grid:
        res = dp_cd_grid(prob, steps=[1.0], clips=[CLIP], random_state=0, n_threads=1, **kw)
        return -res.coef[0, 0, 0, 0]
    res = dp_cd(prob, step=1.0, clip=CLIP, random_state=0, **kw)
    return -res.coef[0]          # w_0 = 0 - 1 * g_0


def _cd_calibrated_sensitivity(relation, public_n):
    """Delta_0 as the solver calibrated it: sigma_0 / s of a private run on D."""
    X, y = _base()
    res = dp_cd(dp.Problem(X, y, loss="squared"), epsilon=1.0, delta=1e-5, n_outer=1,
                n_inner=1, smoothness=np.ones(P), clip=CLIP, neighboring_relation=relation,
                public_n=public_n, random_state=0)
    return res.stats["noise_scales"][0] / res.stats["noise_multiplier"]


@pytest.mark.parametrize("grid", [False, True], ids=["dp_cd", "dp_cd_grid"])
@pytest.mark.parametrize("relation", ["replace_one", "zero_out", "add_or_remove_one"])
def test_dp_cd_release_within_calibrated_sensitivity(relation, grid):
    public_n = _public_n(relation)
    sensitivity = _cd_calibrated_sensitivity(relation, public_n)
    (X, y), others = neighbours(relation)
    g = _cd_release(X, y, relation, public_n, grid)
    # every row's term is clipped at -C_0: the release is -C_0 * n / m
    c0 = CLIP / np.sqrt(P)
    m = public_n or N
    assert g == pytest.approx(-c0 * N / m, rel=1e-12)
    for X2, y2 in others:
        g2 = _cd_release(X2, y2, relation, public_n, grid)
        assert abs(g2 - g) <= sensitivity * (1 + REL_TOL), (relation, g, g2, sensitivity)
    # the bound is attained (the neighbours are the worst ones), so the test is tight
    worst = max(abs(_cd_release(X2, y2, relation, public_n, grid) - g) for X2, y2 in others)
    assert worst == pytest.approx(sensitivity, rel=1e-9)


def test_private_n_normaliser_is_caught():
    """Today's bug (main 9cdba7a): add/remove-one calibrated to C_j / n, divided by the
    dataset's own n. Through the same kernel with its default normaliser (the dataset's n) the
    neighbour D + outlier moves the release by about 2 C_0 / (n + 1): the check above fails."""
    (X, y), _ = neighbours("add_or_remove_one")
    xo, yo = _outlier_row()
    c0 = CLIP / np.sqrt(P)
    calibrated = c0 / N          # what main used: C_0 / n

    def old_release(X, y):
        prob = dp.Problem(X, y, loss="squared")
        coef = np.zeros(P)
        _cd.cd_dense(prob.X_fortran(), prob.y, prob.loss.kind, prob.loss.param,
                     prob.penalty.kind, *prob.penalty.params, np.ones(P), np.full(P, c0),
                     np.zeros(P), coef, 1, 1, False, True, 0, np.random.PCG64(0),
                     np.empty(X.shape[0]))          # no normaliser: the dataset's own n
        return -coef[0]

    moved = abs(old_release(np.vstack([X, xo]), np.append(y, yo)) - old_release(X, y))
    assert moved == pytest.approx(2 * c0 / (N + 1), rel=1e-12)
    assert moved > 1.9 * calibrated
    # the fixed solver, on the same pair, stays within its calibration
    public_n = _public_n("add_or_remove_one")
    fixed = abs(_cd_release(np.vstack([X, xo]), np.append(y, yo), "add_or_remove_one",
                            public_n) - _cd_release(X, y, "add_or_remove_one", public_n))
    assert fixed <= _cd_calibrated_sensitivity("add_or_remove_one", public_n) * (1 + REL_TOL)


# -- DP-SGD -----------------------------------------------------------------------------------

def _sgd_kwargs(relation, sampling):
    kw = dict(passes=1, sampling=sampling, neighboring_relation=relation,
              public_n=_public_n(relation), clip=CLIP, n_threads=1)
    if sampling == "poisson":
        kw["sample_rate"] = 1.0          # every row in the (only) batch: the noiseless mean
    else:
        kw["batch_size"] = None
    return kw


def _sgd_release(X, y, relation, sampling):
    """Noiseless g of DP-SGD's first step (one batch holding every row, from w = 0)."""
    kw = _sgd_kwargs(relation, sampling)
    if sampling == "shuffle":
        kw["batch_size"] = X.shape[0]
    res = dp_sgd(dp.Problem(X, y, loss="squared"), epsilon=np.inf, delta=1e-5, random_state=0,
                 record_history=False, **kw)
    return -res.coef / res.stats["step"]          # w = 0 - eta g (no penalty)


def _sgd_calibrated_sensitivity(relation, sampling):
    """l2 sensitivity of the released mean: noise scale / multiplier / normalisation."""
    X, y = _base()
    kw = _sgd_kwargs(relation, sampling)
    if sampling == "shuffle":
        kw["batch_size"] = N
    res = dp_sgd(dp.Problem(X, y, loss="squared"), epsilon=1.0, delta=1e-5, random_state=0,
                 record_history=False, **kw)
    return res.stats["noise_scale"] / res.stats["noise_multiplier"] / res.stats["batch_size"]


@pytest.mark.parametrize("relation,sampling", [("zero_out", "poisson"),
                                               ("add_or_remove_one", "poisson"),
                                               ("replace_one", "shuffle"),
                                               ("zero_out", "shuffle")])
def test_dp_sgd_release_within_calibrated_sensitivity(relation, sampling):
    sensitivity = _sgd_calibrated_sensitivity(relation, sampling)
    (X, y), others = neighbours(relation)
    g = _sgd_release(X, y, relation, sampling)
    for X2, y2 in others:
        if sampling == "shuffle" and X2.shape[0] != N:
            continue
        g2 = _sgd_release(X2, y2, relation, sampling)
        assert np.linalg.norm(g2 - g) <= sensitivity * (1 + REL_TOL), (relation, sampling)


def test_dp_sgd_private_expected_batch_is_caught():
    """Main normalised Poisson DP-SGD under add/remove-one by q n with the private n: D and
    D + outlier were divided by n and n + 1. Reproduced here by passing public_n = n and
    n + 1: the release then moves by about twice the calibrated C / (q n)."""
    (X, y), _ = neighbours("add_or_remove_one")
    xo, yo = _outlier_row()
    kw = dict(epsilon=np.inf, delta=1e-5, passes=1, sample_rate=1.0, clip=CLIP,
              neighboring_relation="add_or_remove_one", random_state=0, n_threads=1,
              record_history=False)
    a = dp_sgd(dp.Problem(X, y), public_n=N, **kw)
    b = dp_sgd(dp.Problem(np.vstack([X, xo]), np.append(y, yo)), public_n=N + 1, **kw)
    moved = np.linalg.norm(a.coef / a.stats["step"] - b.coef / b.stats["step"])
    assert moved > 1.9 * CLIP / N


# -- The rule itself, and every solver that uses it -------------------------------------------

def test_normaliser_rule():
    add, rep, zero = (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE,
                      NeighboringRelation.ZERO_OUT)
    assert normaliser(add, 100, 120) == 120
    assert normaliser(rep, 100, None) == 100 and normaliser(zero, 100, 100) == 100
    with pytest.raises(ValueError, match="dataset size is private: pass public_n"):
        normaliser(add, 100, None)
    with pytest.raises(ValueError, match="public_n must be None or the dataset's size n = 100"):
        normaliser(rep, 100, 99)
    with pytest.raises(ValueError, match="public_n must be a positive int"):
        normaliser(add, 100, 0)
    with pytest.raises(TypeError, match="public_n must be a positive int or None"):
        normaliser(add, 100, 100.0)


def _small():
    X, y = _base()
    return dp.Problem(X[:64] / 20.0, y[:64] / 20.0, loss="squared")


def _solvers():
    from dpsco_core.solvers.frank_wolfe import projected_dp_sgd_l1
    from dpsco_core.solvers.mirror_descent import (localized_mirror_descent,
                                                   noisy_mirror_descent)
    return {
        "dp_cd": lambda prob, **kw: dp_cd(prob, epsilon=1.0, delta=1e-5, passes=1,
                                          smoothness=np.ones(P), **kw),
        "dp_cd_grid": lambda prob, **kw: dp_cd_grid(prob, epsilon=1.0, delta=1e-5, passes=1,
                                                    steps=[1.0], clips=[1.0],
                                                    smoothness=np.ones(P), n_threads=1, **kw),
        "dp_sgd": lambda prob, **kw: dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=1,
                                            batch_size=16, n_threads=1, **kw),
        "noisy_mirror_descent": lambda prob, **kw: noisy_mirror_descent(
            prob, epsilon=1.0, delta=1e-5, batch_size=16, steps=4, **kw),
        "localized_mirror_descent": lambda prob, **kw: localized_mirror_descent(
            prob, epsilon=1.0, delta=1e-5, max_steps=4, **kw),
        "projected_dp_sgd_l1": lambda prob, **kw: projected_dp_sgd_l1(
            prob, epsilon=1.0, delta=1e-5, batch_size=16, epochs=0.5, **kw),
    }


@pytest.mark.parametrize("name", ["dp_cd", "dp_cd_grid", "dp_sgd", "noisy_mirror_descent",
                                  "localized_mirror_descent", "projected_dp_sgd_l1"])
def test_add_remove_needs_public_n_and_ignores_private_n(name):
    """Under add/remove-one: no public_n, a ValueError that says what to pass; with public_n,
    every noise scale and derived count is the same for D and D + one row (they depend on
    the public count only), and the report names the relation and the count."""
    run = _solvers()[name]
    prob = _small()
    with pytest.raises(ValueError, match="pass public_n="):
        run(prob, neighboring_relation="add_or_remove_one", random_state=0)
    X, y = prob.X, prob.y
    bigger = dp.Problem(np.vstack([X, np.full(P, 3.0)]), np.append(y, -3.0), loss="squared")
    a = run(prob, neighboring_relation="add_or_remove_one", public_n=80, random_state=0)
    b = run(bigger, neighboring_relation="add_or_remove_one", public_n=80, random_state=0)
    assert a.privacy.neighboring_relation is NeighboringRelation.ADD_OR_REMOVE_ONE
    assert any("public_n = 80" in s for s in a.privacy.assumptions)
    assert a.privacy.epsilon == b.privacy.epsilon
    keys = ("noise_multiplier", "noise_scales", "noise_scale", "steps", "sample_rate",
            "batch_size", "batch", "step", "normaliser", "n_inner", "n_outer")
    for key in keys:
        # dp_cd's steps and dp_sgd's step come from data-dependent smoothness constants
        # (issue 15 part 4, flagged in the report), not from the normaliser
        data_dependent = (name.startswith("dp_cd") and key == "steps") or (
            name == "dp_sgd" and key == "step")
        if key in a.stats and not data_dependent:
            np.testing.assert_array_equal(np.asarray(a.stats[key]), np.asarray(b.stats[key]),
                                          err_msg=key)
    if "phases" in a.stats:
        for pa, pb in zip(a.stats["phases"], b.stats["phases"]):
            for key in ("n", "batch", "steps", "noise_multiplier", "sample_rate"):
                assert pa[key] == pb[key], key


@pytest.mark.parametrize("name", ["dp_cd", "dp_sgd", "noisy_mirror_descent"])
def test_public_n_must_match_n_when_n_is_public(name):
    run = _solvers()[name]
    prob = _small()
    with pytest.raises(ValueError, match="public_n must be None or the dataset's size"):
        run(prob, neighboring_relation="zero_out", public_n=prob.n_samples + 1,
            random_state=0)
    run(prob, neighboring_relation="zero_out", public_n=prob.n_samples, random_state=0)


def test_single_epoch_and_mlmc_refuse_add_remove():
    """DP-SRGD, its baselines and mlmc_dp_sco analyse fixed-size disjoint batches (a fixed
    n): add/remove-one is refused with a ValueError rather than normalised by a private n."""
    from dpsco_core.mlmc.dp_sco import mlmc_dp_sco
    from dpsco_core.solvers.dp_srgd import dp_srgd
    prob = _small()
    with pytest.raises(ValueError, match="add_or_remove_one"):
        dp_srgd(prob, epsilon=1.0, delta=1e-5, beta=1.0, neighboring_relation="add_or_remove_one")
    with pytest.raises(ValueError, match="add_or_remove_one"):
        mlmc_dp_sco(prob, epsilon=1.0, delta=1e-5, radius=1.0, lipschitz=1.0,
                    neighboring_relation="add_or_remove_one")


def test_strongly_convex_reduction_rounds_use_public_n():
    """The reduction's rounds and each round's count come from public_n under add/remove-one."""
    from dpsco_core.solvers.mirror_descent import strongly_convex_reduction
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 5))
    prob = dp.Problem(X, X @ np.array([0.3, 0, 0, -0.2, 0]), loss="squared")
    bigger = dp.Problem(np.vstack([X, np.ones(5)]), np.append(prob.y, -1.0), loss="squared")
    kw = dict(epsilon=1.0, delta=1e-5, max_steps=3, neighboring_relation="add_or_remove_one",
              random_state=0)
    with pytest.raises(ValueError, match="pass public_n="):
        strongly_convex_reduction(prob, **kw)
    a = strongly_convex_reduction(prob, public_n=400, **kw)
    b = strongly_convex_reduction(bigger, public_n=400, **kw)
    assert a.stats["rounds"] == b.stats["rounds"]
    for ra, rb in zip(a.stats["round_reports"], b.stats["round_reports"]):
        assert ra.neighboring_relation is NeighboringRelation.ADD_OR_REMOVE_ONE
        assert ra.assumptions == rb.assumptions and ra.epsilon == rb.epsilon
