"""A report states when its run was seeded by the caller (``SEEDED_ASSUMPTION``).

Anyone who holds the seed regenerates the noise and subtracts it, so a seeded run's guarantee
rests on the seed's secrecy. Every entry point that returns a report says so exactly when the
caller supplied ``random_state`` (an int, SeedSequence or Generator), and never for the
default ``None``; wrappers that seed their inner runs from child seed sequences (estimators,
the private search, the strongly convex reduction) state the caller's status, not the
children's.
"""

import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core import solvers
from dpsco_core.datasets import make_rademacher_lasso
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.mlmc import mlmc_dp_sco
from dpsco_core.privacy import SEEDED_ASSUMPTION
from dpsco_core.privacy.report import (DISJOINT_BATCHES_ASSUMPTION, PrivacyReport,
                                      seed_assumptions, with_caller_seed)
from dpsco_core.resque import GeometricMedianData, noisy_projected_gd, resque_private_erm
from dpsco_core.solvers import mirror_descent as md
from dpsco_core.tuning.search import tune_solver


@pytest.fixture(scope="module")
def problems():
    X, y, _ = make_rademacher_lasso(600, 20, random_state=0)
    rng = np.random.default_rng(0)
    Xl = rng.uniform(-1, 1, (600, 4))
    yl = np.where(Xl[:, 0] + 0.1 * rng.standard_normal(600) > 0, 1.0, -1.0)
    Xr = rng.uniform(-1, 1, (600, 4))
    yr = Xr @ [1.0, -2.0, 0.0, 0.5] + 0.1 * rng.normal(size=600)
    return {"lasso": dp.Problem(X, y, loss="half_squared"),
            "logistic": dp.Problem(Xl, yl, loss="logistic", bounds=(-1, 1)),
            "regression": dp.Problem(Xr, yr, loss="half_squared", bounds=(-1, 1),
                                     label_bound=4.0),
            "arrays": (Xl, yl, Xr, yr)}


E, D = 1.0, 1e-5
RUNS = {
    "dp_cd": lambda P, rs: dp.dp_cd(P["logistic"], epsilon=E, delta=D, passes=1,
                                    random_state=rs),
    "dp_cd_grid": lambda P, rs: solvers.dp_cd_grid(P["logistic"], epsilon=E, delta=D,
                                                   steps=[1.0], clips=[0.5, 1.0], passes=1,
                                                   random_state=rs),
    "dp_sgd": lambda P, rs: dp.dp_sgd(P["logistic"], epsilon=E, delta=D, passes=1,
                                      batch_size=64, random_state=rs),
    "dp_srgd": lambda P, rs: dp.dp_srgd(P["logistic"], epsilon=E, delta=D, beta=1.0,
                                        random_state=rs),
    "dp_sgd_single_epoch": lambda P, rs: solvers.dp_sgd_single_epoch(
        P["logistic"], epsilon=E, delta=D, beta=1.0, random_state=rs),
    "dp_ftrl": lambda P, rs: solvers.dp_ftrl(P["logistic"], epsilon=E, delta=D, beta=1.0,
                                             random_state=rs),
    "dp_ssp": lambda P, rs: dp.dp_ssp(P["regression"], epsilon=E, delta=D, random_state=rs),
    "dp_ssp_logistic": lambda P, rs: solvers.dp_ssp_logistic(P["logistic"], epsilon=E,
                                                             delta=D, random_state=rs),
    "vr_frank_wolfe pure": lambda P, rs: dp.vr_frank_wolfe(P["lasso"], epsilon=E,
                                                           lipschitz=0.3, random_state=rs),
    "vr_frank_wolfe shuffled": lambda P, rs: dp.vr_frank_wolfe(
        P["lasso"], epsilon=E, delta=D, lipschitz=0.3, random_state=rs),
    "ttz pure": lambda P, rs: dp.ttz_frank_wolfe(P["lasso"], epsilon=E, lipschitz=0.3,
                                                 random_state=rs),
    "ttz rdp": lambda P, rs: dp.ttz_frank_wolfe(P["lasso"], epsilon=E, delta=D,
                                                lipschitz=0.3, random_state=rs),
    "projected_dp_sgd_l1": lambda P, rs: solvers.projected_dp_sgd_l1(
        P["lasso"], epsilon=E, delta=D, clip=1.0, random_state=rs),
    "noisy_mirror_descent": lambda P, rs: dp.noisy_mirror_descent(
        P["lasso"], epsilon=E, delta=D, lipschitz=0.3, random_state=rs),
    "localized_mirror_descent": lambda P, rs: dp.localized_mirror_descent(
        P["lasso"], epsilon=E, delta=D, lipschitz=0.3, max_steps=20, random_state=rs),
    "strongly_convex_reduction": lambda P, rs: md.strongly_convex_reduction(
        P["lasso"], epsilon=E, delta=D, lipschitz=2.5, max_steps=20, random_state=rs),
    "mlmc_dp_sco": lambda P, rs: mlmc_dp_sco(P["logistic"], epsilon=E, delta=D, radius=1.0,
                                             lipschitz=1.0, random_state=rs),
    "tune_solver": lambda P, rs: tune_solver(P["regression"], epsilon=E, delta=D, passes=1,
                                             random_state=rs),
    "resque_private_erm": lambda P, rs: resque_private_erm(
        GeometricMedianData(0.4 + 0.3 * np.random.default_rng(0).standard_normal((2000, 3))),
        epsilon=E, delta=1e-6, radius_bound=1.0, line_search="constant", max_iter=2,
        random_state=rs),
    "noisy_projected_gd": lambda P, rs: noisy_projected_gd(
        GeometricMedianData(0.4 + 0.3 * np.random.default_rng(0).standard_normal((500, 3))),
        epsilon=E, delta=1e-6, radius_bound=1.0, n_steps=5, random_state=rs),
    # one fit, and K = 3 one-vs-rest fits on child seeds
    "DPLogisticRegression": lambda P, rs: DPLogisticRegression(
        epsilon=E, bounds=(-1, 1), classes=(-1.0, 1.0), solver="cd", rms_row_norm=None,
        random_state=rs).fit(P["arrays"][0], P["arrays"][1]),
    "DPLogisticRegression one-vs-rest": lambda P, rs: DPLogisticRegression(
        epsilon=E, bounds=(-1, 1), classes=(0, 1, 2), solver="sgd", passes=1,
        random_state=rs).fit(P["arrays"][0],
                             np.digitize(P["arrays"][0][:, 1], [-0.3, 0.3])),
    # the private rms quantile (the default) composed with the fit
    "DPLasso private rho": lambda P, rs: DPLasso(
        epsilon=E, bounds=(-1, 1), label_bound=4.0, random_state=rs).fit(
            P["arrays"][2], P["arrays"][3]),
}


def _report(out):
    if hasattr(out, "privacy_"):
        return out.privacy_
    return out.privacy["report"] if isinstance(out.privacy, dict) else out.privacy


@pytest.mark.parametrize("name", sorted(RUNS))
def test_report_states_a_supplied_seed_and_only_then(problems, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = _report(RUNS[name](problems, None))
        seeded = _report(RUNS[name](problems, 0))
    assert SEEDED_ASSUMPTION not in fresh.assumptions, name
    assert seeded.assumptions.count(SEEDED_ASSUMPTION) == 1, name
    # the statement is all that differs: the guarantee itself does not depend on the seed
    # (but for the reduction, whose worst round is that of a random public partition)
    if name != "strongly_convex_reduction":
        assert (seeded.epsilon, seeded.delta) == (fresh.epsilon, fresh.delta)
    assert [a for a in seeded.assumptions if a != SEEDED_ASSUMPTION] == list(fresh.assumptions)
    assert seeded.unconditional == fresh.unconditional


@pytest.mark.parametrize("random_state", [
    7, np.int64(7), np.random.SeedSequence(7), np.random.default_rng(7),
    np.random.default_rng()])
def test_every_supplied_kind_of_seed_is_stated(problems, random_state):
    # a Generator from OS entropy is still a state its holder can replay
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = dp.dp_sgd(problems["logistic"], epsilon=E, delta=D, passes=1, batch_size=64,
                           random_state=random_state).privacy
    assert SEEDED_ASSUMPTION in report.assumptions
    assert seed_assumptions(None) == ()


def test_with_caller_seed_restates_the_status(problems):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        child = dp.dp_cd(problems["logistic"], epsilon=E, delta=D, passes=1,
                         random_state=np.random.SeedSequence().spawn(1)[0]).privacy
    assert SEEDED_ASSUMPTION in child.assumptions
    assert SEEDED_ASSUMPTION not in with_caller_seed(child, None).assumptions
    again = with_caller_seed(child, 3)
    assert again.assumptions.count(SEEDED_ASSUMPTION) == 1
    assert (again.epsilon, again.delta, again.event) == (child.epsilon, child.delta,
                                                         child.event)


def test_grid_lists_its_seed_sequences_as_not_private(problems):
    # the grid keeps every run's seed sequence (the OS entropy too, for random_state=None)
    # so a run can be reproduced: whoever holds them regenerates the noise
    from dpsco_core.solvers.dp_cd import GRID_SEEDS_OUTPUT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = solvers.dp_cd_grid(problems["logistic"], epsilon=E, delta=D, steps=[1.0],
                                  clips=[1.0], passes=1, evaluate=False)
        rerun = dp.dp_cd(problems["logistic"], epsilon=E, delta=D, passes=1, step=1.0,
                         clip=1.0, random_state=grid.seed_sequences[0])
    assert GRID_SEEDS_OUTPUT in grid.privacy.non_private_outputs
    np.testing.assert_array_equal(rerun.coef, grid.coef[0, 0, 0])


def test_search_that_ran_no_trial_keeps_the_default_assumptions(problems):
    # Poisson K = 0 (probability exp(-mean)) runs no trial, so no run brings the library's
    # default assumptions: the search's report states them itself
    from dpsco_core.privacy.report import DEFAULT_ASSUMPTIONS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(40):
            res = tune_solver(problems["regression"], epsilon=E, delta=D, passes=1,
                              mean=0.05, shape=float("inf"), random_state=seed)
            if not np.any(res.coef):
                break
    assert set(DEFAULT_ASSUMPTIONS) <= set(res.privacy.assumptions)
    assert SEEDED_ASSUMPTION in res.privacy.assumptions


def test_resque_phased_privacy_dicts_state_the_callers_seed():
    from dpsco_core.resque import phased_erm, resque_private_sco

    data = GeometricMedianData(0.4 + 0.3 * np.random.default_rng(0).standard_normal((2000, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run in (lambda rs: phased_erm(data, epsilon=E, delta=1e-6, radius_bound=1.0,
                                          min_batch=128, random_state=rs),
                    lambda rs: resque_private_sco(data, epsilon=E, delta=1e-6,
                                                  radius_bound=1.0, min_batch=480,
                                                  line_search="constant", max_iter=2,
                                                  random_state=rs)):
            unseeded, seeded = run(None), run(5)
            reports = [r.privacy if isinstance(r.privacy, PrivacyReport)
                       else r.privacy["report"] for r in (unseeded, seeded)]
            assert SEEDED_ASSUMPTION not in reports[0].assumptions
            assert reports[1].assumptions == reports[0].assumptions + (SEEDED_ASSUMPTION,)
            assert DISJOINT_BATCHES_ASSUMPTION in reports[0].assumptions
            assert (reports[0].epsilon, reports[0].delta) == (unseeded.epsilon, unseeded.delta)
