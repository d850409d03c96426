# Issue 19 (diagnosis.md, sections 9-11): the two steps shared by stopping_candidates.py and
# stopping_rows.py. Every candidate of a grid is run at the trial's epsilon for n_seeds seeds
# (its relative error and noiseless clipped score kept); then 40,000 searches are simulated:
# K drawn by the library's sampler, a uniformly drawn candidate per trial and one of its runs,
# the trial's score noise added to the run's clipped score, the best noisy score kept, plain
# and with tune_solver's zero-model fallback.
import numpy as np

from dpsco_core.experiments.tuning import _relative
from dpsco_core.tuning.search import ZERO_FALLBACK_MARGIN, _run_solver
from dpsco_core.tuning.stopping import sample_num_trials


def run_candidates(setting, solver, grid, epsilon, loss_clip, n_seeds, relation, seed0):
    """(errors, clipped scores), each of shape (len(grid), n_seeds), at 50 passes."""
    P = setting.problem
    y = np.asarray(P.y, float)
    err = np.empty((len(grid), n_seeds))
    loss = np.empty((len(grid), n_seeds))
    for i, c in enumerate(grid):
        for s in range(n_seeds):
            w = _run_solver(solver, P, c, epsilon, setting.delta, 50, 256, False, relation,
                            seed0 + s).coef
            m = np.asarray(P.X @ w).ravel()
            loss[i, s] = np.minimum(P.loss.value(m, y), loss_clip).mean() + P.penalty.value(w)
            err[i, s] = _relative(setting, w)
    return err, loss


def simulate(err, loss, score_sd, zero_bound, zero_err, mean, shape, distinct, draws=40000):
    """Relative errors of simulated searches, (plain, with the fallback).

    distinct=False draws each trial's run uniformly (a search may reuse a run); True gives a
    candidate's draws within one search distinct runs while it has any left.
    """
    n_cand, n_seeds = err.shape
    rng = np.random.default_rng(0)
    plain, guarded = [], []
    for _ in range(draws):
        K = sample_num_trials(mean, shape, rng)
        if K == 0:
            plain.append(zero_err)
            guarded.append(zero_err)
            continue
        ci = rng.integers(n_cand, size=K)
        if distinct:
            si = np.empty(K, dtype=int)
            for c in np.unique(ci):
                where = np.flatnonzero(ci == c)
                si[where] = np.resize(rng.permutation(n_seeds), where.size)
        else:
            si = rng.integers(n_seeds, size=K)
        noisy = loss[ci, si] + rng.normal(0.0, score_sd, K)
        j = np.argmin(noisy)
        plain.append(err[ci[j], si[j]])
        guarded.append(zero_err if noisy[j] > zero_bound + ZERO_FALLBACK_MARGIN * score_sd
                       else plain[-1])
    return np.array(plain), np.array(guarded)
