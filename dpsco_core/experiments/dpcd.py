"""Reproduce the experiments of the DP-CD paper: Tables 2 and 3, Figures 1 to 3.

``python -m dpsco_core reproduce dpcd [--full] [--out DIR] [--threads N]``

Mangold, Bellet, Salmon and Tommasi, "Differentially Private Coordinate Descent for Composite
Empirical Risk Minimization", ICML 2022, section 6 and appendix G (details and the paper's
numbers: ``shared/notes/002_dpcd.md`` section 7).

Protocol (appendix G.1), with our choices where the paper is silent (printed by the command):

- Problems: California LASSO (raw and standardized), Electricity L2-logistic (raw and
  standardized), Sparse LASSO (n = p = 1000, 10 informative features); epsilon = 1 (10 for
  Sparse LASSO), delta = 1/n^2.
- lambda (not in the paper): LASSO on California ``lambda = 0.1 lambda_max`` with
  ``lambda_max = 2 ||X^T y||_inf / n`` (the smallest lambda for which w = 0 is optimal);
  logistic ``lambda = 1/n`` (scikit-learn's C = 1); Sparse LASSO: the lambda for which the
  relative error of w = 0 is 0.7551, the plateau of the paper's Table 2 (bisection).
- Standardized problems: features centred and scaled to unit variance (as the paper,
  not charged to the budget); the LASSO target is centred too, since no intercept is fitted.
- Algorithms: DP-CD, DP-CD with private smoothness constants (imbalanced problems: 10% of
  epsilon, Laplace, bounds "twice the max", section 5.2), proximal DP-SGD (Poisson sampling,
  expected batch 256, step gamma / beta).
- Neighbouring relation: **zero-out** for DP-CD, DP-CD-priv-cst and DP-SGD (one record
  replaced by a record that contributes nothing; the dataset's own n stays public, so both
  DP-CD's analysis, sensitivity C_j / n, and the Poisson-subsampled Gaussian analysis of DP-SGD,
  sensitivity C, hold as they are), and **DP-CD-replace-one**: DP-CD under the paper's
  replace-one relation (sensitivity 2 C_j / n, the paper's noise), tuned on its own grid.
  Before issue 15 all three ran under add/remove-one with the private n as normaliser, which
  gave DP-CD half the noise its guarantee needs.
- Grids: passes {2, 5, 10, 20, 50}; steps (DP-CD [1e-2, 10], DP-SGD [1e-6, 1], log-spaced)
  x clips ([1e-3, 1e6], log-spaced): 10 x 100 with ``--full``, 8 x 28 by default;
  5 seeds per configuration for selection (3 reduced); the configuration with the lowest mean
  relative error at the last iterate is kept; the best one is re-run over 10 seeds (5
  reduced) for the figures and timings.
- Relative error = (F(w) - F*) / F*, F* from ``Problem.solve()`` (gap <= 1e-12).
- Not run by default, not tuned (issue 22): **DP-CD-theorem** and **DP-CD-theorem-oracle**
  (``--algorithms``), DP-CD as Theorems 3.1 and 3.3 state it: Theorem 3.3's convex (T, K)
  (eq. 68), steps 1 / M_j, clips L_j, the theorem's noise, the averaged iterate, under
  DP-CD-replace-one's relation and (epsilon, delta), over the final seeds; R_M from a
  sublevel-set bound or, in the -oracle row, from the non-private optimum
  (``theorem_constants``). Written to ``theorem.md``.

Hyperparameters are selected on the non-private objective, as in the paper: this selection is
**not** covered by the privacy guarantee of the runs.
"""

import argparse
import csv
import math
import os
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import datasets
from ..penalties import L1, L2
from ..problems import Problem
from ._cli import parse_experiment_args
from ._progress import Phases, Progress

PASSES = (2, 5, 10, 20, 50)
#: The neighbouring relation of each algorithm (module docstring).
RELATIONS = {"DP-CD": "zero_out", "DP-CD-priv-cst": "zero_out", "DP-SGD": "zero_out",
             "DP-CD-replace-one": "replace_one"}
SGD_BATCH = 256
ALGORITHMS = ("DP-CD", "DP-CD-replace-one", "DP-CD-priv-cst", "DP-SGD")
COLOURS = {"DP-CD": "tab:blue", "DP-CD-replace-one": "tab:purple", "DP-CD-priv-cst": "tab:green",
           "DP-SGD": "tab:orange"}
MARKERS = {"DP-CD": "o", "DP-CD-replace-one": "D", "DP-CD-priv-cst": "s", "DP-SGD": "^"}

# Table 2 of the paper: mean (and +-) relative error per pass count {2, 5, 10, 20, 50}.
PAPER_TABLE2 = {
    ("electricity_raw", "DP-CD"): [(0.1458, 6e-4), (0.0842, 1e-3), (0.0436, 2e-3),
                                   (0.0147, 2e-3), (0.0020, 1e-3)],
    ("electricity_raw", "DP-SGD"): [(0.2047, 2e-2), (0.1804, 2e-2), (0.1766, 2e-2),
                                    (0.1644, 2e-2), (0.1484, 1e-2)],
    ("electricity_std", "DP-CD"): [(0.0186, 4e-4), (0.0023, 4e-4), (0.0013, 6e-4),
                                   (0.0013, 4e-4), (0.0019, 8e-4)],
    ("electricity_std", "DP-SGD"): [(0.0391, 1e-2), (0.0189, 5e-3), (0.0123, 4e-3),
                                    (0.0106, 3e-3), (0.0040, 2e-3)],
    ("california_raw", "DP-CD"): [(0.1708, 7e-3), (0.1232, 1e-2), (0.0598, 1e-2),
                                  (0.0287, 5e-3), (0.0124, 7e-3)],
    ("california_raw", "DP-SGD"): [(0.2799, 9e-2), (0.1863, 2e-2), (0.1476, 2e-2),
                                   (0.1094, 2e-2), (0.1068, 2e-2)],
    ("california_std", "DP-CD"): [(0.0007, 3e-4), (0.0011, 6e-4), (0.0012, 5e-4),
                                  (0.0010, 1e-4), (0.0017, 1e-3)],
    ("california_std", "DP-SGD"): [(0.0351, 2e-2), (0.0226, 8e-3), (0.0125, 3e-3),
                                   (0.0087, 2e-3), (0.0042, 1e-3)],
    ("sparse_lasso", "DP-CD"): [(0.2498, 4e-2), (0.4702, 9e-2), (0.5982, 4e-2),
                                (0.7160, 2e-2), (0.7551, 0.0)],
    ("sparse_lasso", "DP-SGD"): [(0.7551, 0.0), (0.7551, 3e-9), (0.7551, 0.0), (0.7551, 0.0),
                                 (0.7551, 0.0)],
}

# Table 3 of the paper: seconds per run (C++, their machine), passes {2, 5, 10, 20, 50}.
PAPER_TABLE3 = {
    ("electricity_raw", "DP-CD"): [0.0128, 0.0274, 0.0500, 0.0980, 0.2457],
    ("electricity_raw", "DP-SGD"): [0.0663, 0.1722, 0.3321, 0.6729, 1.8588],
    ("electricity_std", "DP-CD"): [0.0121, 0.0281, 0.0529, 0.1062, 0.2577],
    ("electricity_std", "DP-SGD"): [0.0686, 0.1768, 0.3578, 0.6787, 1.6766],
    ("california_raw", "DP-CD"): [0.0029, 0.0065, 0.0130, 0.0258, 0.0647],
    ("california_raw", "DP-SGD"): [0.0269, 0.0665, 0.1318, 0.2628, 0.6476],
    ("california_std", "DP-CD"): [0.0031, 0.0065, 0.0132, 0.0262, 0.0649],
    ("california_std", "DP-SGD"): [0.0261, 0.0641, 0.1295, 0.2592, 0.6469],
    ("sparse_lasso", "DP-CD"): [0.0244, 0.0760, 0.1614, 0.3213, 0.6598],
    ("sparse_lasso", "DP-SGD"): [0.0718, 0.1788, 0.3654, 0.7292, 1.8110],
}


@dataclass
class Grid:
    cd_steps: np.ndarray
    sgd_steps: np.ndarray
    clips: np.ndarray
    tune_seeds: int
    final_seeds: int
    passes: tuple = PASSES


def make_grid(kind):
    if kind == "full":
        return Grid(np.geomspace(1e-2, 10, 10), np.geomspace(1e-6, 1, 10),
                    np.geomspace(1e-3, 1e6, 100), 5, 10)
    if kind == "reduced":
        # A factor ~2.2 between clips and ~2.7 (DP-CD) / ~7 (DP-SGD) between steps: coarser
        # grids (a factor 10 in the clip) changed the winner on three of the five problems.
        return Grid(np.geomspace(1e-2, 10, 8), np.geomspace(1e-6, 1, 8),
                    np.geomspace(1e-3, 1e6, 28), 3, 5)
    if kind == "smoke":
        return Grid(np.array([0.1, 1.0]), np.array([1e-2, 1.0]), np.array([1.0, 100.0]), 1, 2,
                    (2,))
    raise ValueError(f"unknown grid {kind!r}")


@dataclass
class Setting:
    key: str
    title: str
    problem: Problem
    epsilon: float
    imbalanced: bool
    rule: str
    optimum: float = 0.0

    @property
    def delta(self):
        return 1.0 / self.problem.n_samples**2


def _lasso_lambda_max(X, y):
    return 2.0 * float(np.max(np.abs(X.T @ y))) / X.shape[0]


def _sparse_lasso_lambda(X, y, target=1.7551, tol=1e-4):
    """lambda with F(0) / F*(lambda) = target (F* increases with lambda: bisection in log)."""
    f0 = float(np.mean(y**2))
    lo, hi = 1e-6 * _lasso_lambda_max(X, y), _lasso_lambda_max(X, y)
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        ratio = f0 / Problem(X, y, loss="squared", penalty=L1(mid)).solve().objective
        if abs(ratio - target) < tol:
            return mid
        lo, hi = (mid, hi) if ratio > target else (lo, mid)
    return math.sqrt(lo * hi)


def build_settings(which=None, log=None):
    """The five problems, each with its lambda (printed) and its optimum F*.

    ``log(text)``, if given, is called before each slow step (a lambda search, an optimum)."""
    log = log or (lambda text: None)
    settings = []
    Xc, yc = datasets.load_california()
    Xe, ye = datasets.load_electricity()
    wanted = set(which) if which else None

    def want(key):
        return wanted is None or key in wanted

    if want("electricity_raw") or want("electricity_std"):
        lam = 1.0 / ye.size
        if want("electricity_raw"):
            settings.append(Setting("electricity_raw", "Electricity (imbalanced)",
                                    Problem(Xe, ye, loss="logistic", penalty=L2(lam)), 1.0, True,
                                    f"lambda = 1/n = {lam:.4g}"))
        if want("electricity_std"):
            Xs, _ = datasets.standardize(Xe)
            settings.append(Setting("electricity_std", "Electricity (balanced)",
                                    Problem(Xs, ye, loss="logistic", penalty=L2(lam)), 1.0,
                                    False, f"lambda = 1/n = {lam:.4g}"))
    if want("california_raw"):
        lam = 0.1 * _lasso_lambda_max(Xc, yc)
        settings.append(Setting("california_raw", "California (imbalanced)",
                                Problem(Xc, yc, loss="squared", penalty=L1(lam)), 1.0, True,
                                f"lambda = 0.1 lambda_max = {lam:.4g}"))
    if want("california_std"):
        Xs, _ = datasets.standardize(Xc)
        ys = yc - yc.mean()
        lam = 0.1 * _lasso_lambda_max(Xs, ys)
        settings.append(Setting("california_std", "California (balanced)",
                                Problem(Xs, ys, loss="squared", penalty=L1(lam)), 1.0, False,
                                f"lambda = 0.1 lambda_max = {lam:.4g} (target centred)"))
    if want("sparse_lasso"):
        X, y, _ = datasets.make_sparse_lasso(1000, 1000, 10, noise=0.1, random_state=2022)
        log("sparse_lasso: lambda by bisection on the relative error of w = 0")
        lam = _sparse_lasso_lambda(X, y)
        settings.append(Setting("sparse_lasso", "Sparse LASSO", Problem(X, y, loss="squared",
                                                                        penalty=L1(lam)),
                                10.0, False,
                                f"lambda = {lam:.4g}: relative error of w = 0 is 0.7551"))
    for k, s in enumerate(settings, 1):
        log(f"{s.key}: optimum F* ({k}/{len(settings)})")
        s.optimum = s.problem.solve().objective
    return settings


def _relative(setting, objective):
    return (np.asarray(objective) - setting.optimum) / abs(setting.optimum)


# -- runners -------------------------------------------------------------------------------

def _cd_grid(setting, passes, steps, clips, n_seeds, seed, threads, smoothness="exact",
             relation=RELATIONS["DP-CD"]):
    from ..solvers.dp_cd import dp_cd_grid
    start = time.perf_counter()
    grid = dp_cd_grid(setting.problem, epsilon=setting.epsilon, delta=setting.delta,
                      passes=passes, steps=steps, clips=clips, n_seeds=n_seeds, average=False,
                      smoothness=smoothness, neighboring_relation=relation, random_state=seed,
                      n_threads=threads)
    per_run = (time.perf_counter() - start) / grid.objective.size
    return _relative(setting, grid.objective), per_run


def _priv_cst_run(setting, passes, step, clip, seed, history=False):
    from ..solvers.dp_cd import dp_cd
    start = time.perf_counter()
    res = dp_cd(setting.problem, epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                step=step, clip=clip, average=False, smoothness="private",
                neighboring_relation=RELATIONS["DP-CD-priv-cst"], random_state=seed,
                record_history=history)
    elapsed = time.perf_counter() - start
    return res, elapsed


def _cd_run(setting, passes, step, clip, seed, history=False, relation=RELATIONS["DP-CD"]):
    from ..solvers.dp_cd import dp_cd
    start = time.perf_counter()
    res = dp_cd(setting.problem, epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                step=step, clip=clip, average=False, neighboring_relation=relation,
                random_state=seed, record_history=history)
    return res, time.perf_counter() - start


def _cd_replace_one_run(setting, passes, step, clip, seed, history=False):
    return _cd_run(setting, passes, step, clip, seed, history,
                   relation=RELATIONS["DP-CD-replace-one"])


def _sgd_run(setting, passes, step, clip, seed, history=False):
    from ..solvers.dp_sgd import dp_sgd
    start = time.perf_counter()
    res = dp_sgd(setting.problem, epsilon=setting.epsilon, delta=setting.delta, passes=passes,
                 batch_size=min(SGD_BATCH, setting.problem.n_samples), step=step, clip=clip,
                 neighboring_relation=RELATIONS["DP-SGD"], random_state=seed,
                 record_history=history,
                 n_threads=1)
    return res, time.perf_counter() - start


RUNNERS = {"DP-CD": _cd_run, "DP-CD-replace-one": _cd_replace_one_run,
           "DP-CD-priv-cst": _priv_cst_run, "DP-SGD": _sgd_run}


def _seed(*parts):
    """A deterministic seed per (problem, algorithm, passes, config, seed index).

    Strings go through crc32 (Python's own str hash is salted per process)."""
    return np.random.SeedSequence([zlib.crc32(p.encode()) if isinstance(p, str) else int(p)
                                   for p in parts])


def _work(setting, passes, runs=1):
    """Progress units of ``runs`` runs: a run costs about passes x n x p (every pass of either
    algorithm touches each entry of X once), so the time-left estimate holds across problems
    and pass counts instead of being dominated by the cheap 2-pass runs done first."""
    return runs * passes * setting.problem.n_samples * setting.problem.n_features


def tune(setting, algorithm, grid, threads, writer, bar):
    """Best (step, clip) and its tuning errors for every pass count; writes every run."""
    steps = grid.sgd_steps if algorithm == "DP-SGD" else grid.cd_steps
    best = {}
    for passes in grid.passes:
        if algorithm != "DP-SGD":
            # The DP-CD variants run through the grid kernel (the private one with a Laplace
            # release of the smoothness constants per run, from the run's own stream).
            rel, per_run = _cd_grid(setting, passes, steps, grid.clips, grid.tune_seeds,
                                    _seed(setting.key, algorithm, passes), threads,
                                    "private" if algorithm == "DP-CD-priv-cst" else "exact",
                                    RELATIONS[algorithm])
            # rel has shape (n_steps, n_clips, n_seeds)
            for i, step in enumerate(steps):
                for j, clip in enumerate(grid.clips):
                    for k in range(grid.tune_seeds):
                        writer.writerow([setting.key, algorithm, "tune", passes, step, clip, k,
                                         rel[i, j, k], per_run])
            bar.advance(_work(setting, passes, rel.size))
        else:
            configs = [(i, j, k) for i in range(len(steps)) for j in range(len(grid.clips))
                       for k in range(grid.tune_seeds)]
            rel = np.empty((len(steps), len(grid.clips), grid.tune_seeds))

            def one(cfg, passes=passes):
                i, j, k = cfg
                res, elapsed = RUNNERS[algorithm](setting, passes, steps[i], grid.clips[j],
                                                  _seed(setting.key, algorithm, passes, i, j, k))
                return cfg, float(_relative(setting, setting.problem.objective(res.coef))), \
                    elapsed

            with ThreadPoolExecutor(max_workers=threads) as pool:
                for (i, j, k), r, elapsed in pool.map(one, configs):
                    rel[i, j, k] = r
                    writer.writerow([setting.key, algorithm, "tune", passes, steps[i],
                                     grid.clips[j], k, r, elapsed])
                    bar.advance(_work(setting, passes))
        mean = np.where(np.isfinite(rel), rel, np.inf).mean(axis=2)
        i, j = np.unravel_index(np.argmin(mean), mean.shape)
        best[passes] = dict(step=float(steps[i]), clip=float(grid.clips[j]),
                            mean=float(mean[i, j]), std=float(np.std(rel[i, j])))
    return best


def final_runs(setting, algorithm, best, grid, writer, bar):
    """The best configuration of each pass count over final seeds: errors, times, curves."""
    out = {}
    for passes in grid.passes:
        cfg = best[passes]
        rels, times, curves = [], [], []
        for k in range(grid.final_seeds):
            res, elapsed = RUNNERS[algorithm](setting, passes, cfg["step"], cfg["clip"],
                                              _seed(setting.key, algorithm, "final", passes, k),
                                              history=True)
            rel = float(_relative(setting, setting.problem.objective(res.coef)))
            rels.append(rel)
            times.append(elapsed)
            curves.append((res.history.passes, _relative(setting, res.history.objective)))
            writer.writerow([setting.key, algorithm, "final", passes, cfg["step"], cfg["clip"],
                             k, rel, elapsed])
            bar.advance(_work(setting, passes))
        out[passes] = dict(rel=np.array(rels), time=np.array(times), curves=curves)
    return out


def _timing_runs(setting, algorithm, best, passes, n):
    """Wall time of a run without history (Table 3), median of n."""
    times = []
    for k in range(n):
        _, elapsed = RUNNERS[algorithm](setting, passes, best[passes]["step"],
                                        best[passes]["clip"],
                                        _seed(setting.key, algorithm, "time", passes, k))
        times.append(elapsed)
    return float(np.mean(times)), float(np.std(times))


# -- Theorem 3.1 / 3.3 as stated (issue 22): no tuning ----------------------------------------

#: DP-CD run at Theorem 3.3's (T, K) with Theorem 3.1's step 1/M_j and clips L_j; not tuned,
#: so not part of ``ALGORITHMS`` (opt in with ``--algorithms``). "-oracle" takes R_M from the
#: non-private optimum w*, the other from the public sublevel-set bound (``theorem_constants``).
THEOREM_ALGORITHMS = ("DP-CD-theorem", "DP-CD-theorem-oracle")


def theorem_constants(setting, oracle=False):
    r"""Theorem 3.1's L_j, M_j and Theorem 3.3's convex (T, K) for one problem (w^0 = 0).

    The experiment declares no public bounds on the data, so the constants come from the data
    as the paper's protocol takes M_j (``Problem.coordinate_smoothness``, exact, not accounted):

    - M_j: exact coordinate smoothness; step gamma_j = 1 / M_j (``step=1``).
    - L_j: bound on |x_ij l'(<x_i, w>, y_i)|. Logistic: max_i |x_ij| (|l'| <= 1, a global
      bound). Squared loss (LASSO): l' is unbounded, so Theorem 3.1 does not apply as stated;
      we bound it on the sublevel set {F(w) <= F(0)}, where lambda ||w||_1 <= F(0), hence
      |l'| <= 2 (max_i |y_i| + max_i ||x_i||_inf F(0) / lambda). The iterates may leave that
      set: clipping at L_j keeps the privacy guarantee, the theorem's utility bound may not hold.
    - R_M >= max(||w^0 - w*||_M, sqrt(F(w^0) - F*)). Public version: w* lies in the same
      sublevel set, so ||w*||_M <= sqrt(max_j M_j) r with r = sqrt(2 F(0) / lambda) (L2) or
      F(0) / lambda (L1, ||.||_2 <= ||.||_1), and F(0) - F* <= F(0). For logistic F(0) = log 2
      is public; for LASSO F(0) = mean(y^2) reads the labels (not accounted, like M_j).
      ``oracle=True``: R_M from the non-private optimum w* and F* (an oracle schedule).

    Returns
    -------
    dict with T, K, L, M, R (R_M) and bound (eq. 67's bound on F(w) - F*, divided by F*).
    """
    from ..solvers.dp_cd import dp_cd_theorem_schedule

    problem = setting.problem
    X = problem.X
    M = problem.coordinate_smoothness()
    f0 = float(problem.objective(np.zeros(problem.n_features)))
    lam = problem.penalty.lam
    # the sublevel set {F <= F(0)} of the experiment's two penalties (the losses are >= 0)
    if isinstance(problem.penalty, L2):
        radius = math.sqrt(2.0 * f0 / lam)          # (lambda/2) ||w||_2^2 <= F(0)
    elif isinstance(problem.penalty, L1):
        radius = f0 / lam                           # lambda ||w||_1 <= F(0), ||.||_2 <= ||.||_1
    else:
        raise ValueError(f"theorem_constants needs an L1 or L2 penalty; got {problem.penalty!r}")
    if problem.loss.lipschitz_in_margin is not None:        # logistic: a global L_j
        L = problem.coordinate_lipschitz()
    elif problem.loss.name == "squared" and isinstance(problem.penalty, L1):
        bound = 2.0 * (float(np.max(np.abs(problem.y)))
                       + float(np.max(np.abs(X))) * radius)
        L = np.max(np.abs(X), axis=0) * bound
    else:
        raise ValueError(f"no component-Lipschitz bound for the {problem.loss!r} loss here")
    if oracle:
        w_star = problem.solve().coef
        R = max(math.sqrt(float(np.sum(M * w_star ** 2))),
                math.sqrt(max(f0 - setting.optimum, 0.0)))
    else:
        R = max(math.sqrt(float(M.max())) * radius, math.sqrt(f0))
    T, K = dp_cd_theorem_schedule("convex", n_samples=problem.n_samples,
                                  epsilon=setting.epsilon, delta=setting.delta, lipschitz=L,
                                  smoothness=M, distance=R)
    # eq. (67)'s utility bound 9 sqrt(p) ||L||_{M^-1} R_M sqrt(log(1/delta)) / (n epsilon),
    # relative to F* like the measured errors
    bound = (9.0 * math.sqrt(problem.n_features) * math.sqrt(float(np.sum(L * L / M))) * R
             * math.sqrt(math.log(1.0 / setting.delta))
             / (problem.n_samples * setting.epsilon)) / abs(setting.optimum)
    return dict(T=T, K=K, L=L, M=M, R=R, bound=bound)


def theorem_runs(setting, algorithm, n_seeds, writer):
    """DP-CD at Theorem 3.3's (T, K), steps 1/M_j, clips L_j, the theorem's noise
    (``calibration="theorem"``), averaged output, under the DP-CD-replace-one relation and
    (epsilon, delta); ``n_seeds`` runs. Returns the constants with the errors and times."""
    from ..solvers.dp_cd import dp_cd

    const = theorem_constants(setting, oracle=algorithm.endswith("-oracle"))
    passes = const["T"] * const["K"] / setting.problem.n_features
    rels, times = [], []
    for k in range(n_seeds):
        start = time.perf_counter()
        res = dp_cd(setting.problem, epsilon=setting.epsilon, delta=setting.delta,
                    n_outer=const["T"], n_inner=const["K"], step=1.0, clip=const["L"],
                    average=True, calibration="theorem", smoothness="exact",
                    neighboring_relation=RELATIONS["DP-CD-replace-one"],
                    random_state=_seed(setting.key, algorithm, "theorem", k),
                    record_history=False)
        times.append(time.perf_counter() - start)
        rels.append(float(_relative(setting, setting.problem.objective(res.coef))))
        writer.writerow([setting.key, algorithm, "theorem", passes, 1.0, "L_j", k, rels[-1],
                         times[-1]])
    return dict(const, passes=passes, rel=np.array(rels), time=np.array(times))


def write_theorem_table(path, settings, theorem, results):
    lines = ["# DP-CD at Theorem 3.3's (T, K) (convex case, eq. 68), steps 1/M_j, clips L_j "
             "(Theorem 3.1), the theorem's noise, averaged iterate", "",
             "Replace-one, same (epsilon, delta) as DP-CD-replace-one; mean ± std of the "
             "relative error over the seeds. 'tuned' is DP-CD-replace-one's best pass count "
             "of this run, if it ran. R_M: public sublevel-set bound, or the non-private "
             "optimum (-oracle). Eq. 67 bound: the theorem's guarantee on the expected "
             "relative error.", "",
             "| Dataset | Alg. | R_M | T | K | passes | relative error | eq. 67 bound / F* | "
             "seconds per run | tuned DP-CD-replace-one |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in settings:
        for alg in THEOREM_ALGORITHMS:
            th = theorem.get((s.key, alg))
            if th is None:
                continue
            tuned = results.get((s.key, "DP-CD-replace-one"))
            tuned_cell = "-"
            if tuned:
                p = tuned["best_passes"]
                tuned_cell = (f"{_fmt(tuned['best'][p]['mean'], tuned['best'][p]['std'])} "
                              f"({p} passes)")
            lines.append(f"| {s.title}, ε={s.epsilon:g} | {alg} | {th['R']:.4g} | {th['T']} | "
                         f"{th['K']} | {th['passes']:.4g} | "
                         f"{th['rel'].mean():.4g} ± {th['rel'].std():.1g} | "
                         f"{th['bound']:.3g} | {th['time'].mean():.3g} | {tuned_cell} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


# -- outputs -------------------------------------------------------------------------------

def _fmt(mean, std):
    return f"{mean:.4f} ± {std:.0e}"


def write_table2(path, settings, results, grid):
    head = "| Dataset | Alg. | " + " | ".join(f"{p} passes (ours) | {p} (paper)"
                                             for p in grid.passes) + " |"
    lines = ["# Table 2: relative error to the non-private optimum (mean ± std over the "
             "tuning seeds of the best configuration, last iterate)", "",
             "Relations: " + ", ".join(f"{alg} {rel.replace('_', '-')}"
                                       for alg, rel in RELATIONS.items())
             + ". The paper's DP-CD values (replace-one) are shown beside both DP-CD rows; "
             "hyperparameters "
             "selected on the non-private objective (not covered by the privacy guarantee). "
             "Lowest of our row in bold.", "",
             head, "|---|---|" + "---|---|" * len(grid.passes)]
    for s in settings:
        for alg in ALGORITHMS:
            if (s.key, alg) not in results:
                continue
            best = results[(s.key, alg)]["best"]
            ours = [best[p]["mean"] for p in grid.passes]
            low = int(np.argmin(ours))
            cells = []
            for idx, p in enumerate(grid.passes):
                cell = _fmt(best[p]["mean"], best[p]["std"])
                cell = f"**{cell}**" if idx == low else cell
                paper = PAPER_TABLE2.get((s.key, "DP-CD" if alg.startswith("DP-CD-r") else alg))
                paper_cell = _fmt(*paper[PASSES.index(p)]) if paper and p in PASSES else "-"
                cells += [cell, paper_cell]
            title = f"{s.title}, ε={s.epsilon:g}"
            lines.append(f"| {title} | {alg} | " + " | ".join(cells) + " |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def write_table3(path, settings, timings, grid):
    lines = ["# Table 3: wall time in seconds per run (mean ± std), best configuration, "
             "no history", "",
             "The paper's times are its C++ implementation on its own (unstated) machine.", "",
             "| Dataset | Alg. | " + " | ".join(f"{p} passes (ours) | {p} (paper)"
                                              for p in grid.passes) + " |",
             "|---|---|" + "---|---|" * len(grid.passes)]
    for s in settings:
        for alg in ("DP-CD", "DP-SGD"):
            if (s.key, alg) not in timings:
                continue
            cells = []
            for p in grid.passes:
                mean, std = timings[(s.key, alg)][p]
                paper = PAPER_TABLE3.get((s.key, alg))
                cells += [f"{mean:.4f} ± {std:.0e}",
                          f"{paper[PASSES.index(p)]:.4f}" if paper and p in PASSES else "-"]
            lines.append(f"| {s.title} | {alg} | " + " | ".join(cells) + " |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _band(curves):
    """min/mean/max of relative error on the common pass grid of several runs."""
    length = min(len(c[0]) for c in curves)
    x = curves[0][0][:length]
    ys = np.array([c[1][:length] for c in curves])
    return x, ys.min(axis=0), ys.mean(axis=0), ys.max(axis=0)


#: Caption of figures 1 and 2: why curves end at different pass counts (issue 17: California
#: DP-SGD stops at 20 passes in figure 1).
PASSES_CAPTION = ("Each curve is the run at its selected number of passes (lowest mean error of "
                  "the grid, in the legend): the budget is spread over all passes, so a curve "
                  "that stops early (e.g. DP-SGD at 20) did worse when run longer.")


def _thin_time_ticks(ax):
    """At most 4 x ticks, compact labels, rotated: the time axes of short runs (California)
    otherwise print long labels such as 0.0025 that overlap."""
    from matplotlib.ticker import FormatStrFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4, min_n_ticks=2))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)


def write_figures(out, settings, results, plt, log=None):
    log = log or (lambda text: None)
    groups = {
        "figure1.png": [s for s in settings if s.imbalanced],
        "figure2.png": [s for s in settings if not s.imbalanced],
    }
    for name, group in groups.items():
        if not group:
            continue
        log(name)
        # 0.8 inch below the axes for the caption (three lines on a single panel)
        fig, axes = plt.subplots(1, len(group), figsize=(4.2 * len(group), 4.2), squeeze=False)
        for ax, s in zip(axes[0], group):
            for alg in ALGORITHMS:
                res = results.get((s.key, alg))
                if res is None:
                    continue
                x, lo, mean, hi = _band(res["final"][res["best_passes"]]["curves"])
                ax.plot(x, mean, color=COLOURS[alg], marker=MARKERS[alg], markevery=max(1, len(x) // 8),
                        label=f"{alg} ({res['best_passes']} passes)", lw=1.5, ms=4)
                ax.fill_between(x, np.maximum(lo, 1e-8), np.maximum(hi, 1e-8),
                                color=COLOURS[alg], alpha=0.2)
            ax.set_yscale("log")
            ax.set_xlabel("passes")
            ax.set_ylabel("relative error")
            ax.set_title(f"{s.title}, ε={s.epsilon:g}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.text(0.5, 0.01, PASSES_CAPTION, ha="center", va="bottom", fontsize=7, wrap=True)
        fig.tight_layout(rect=(0, 0.8 / 4.2, 1, 1))
        fig.savefig(os.path.join(out, name), dpi=100)
        plt.close(fig)
    log("figure3.png")
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 3.4), squeeze=False)
    for ax, s in zip(axes[0], settings):
        for alg in ALGORITHMS:
            res = results.get((s.key, alg))
            if res is None:
                continue
            final = res["final"][res["best_passes"]]
            x, lo, mean, hi = _band(final["curves"])
            seconds_per_pass = float(np.mean(final["time"])) / res["best_passes"]
            t = x * seconds_per_pass
            ax.plot(t, mean, color=COLOURS[alg], marker=MARKERS[alg], markevery=max(1, len(t) // 8),
                    label=alg, lw=1.5, ms=4)
            ax.fill_between(t, np.maximum(lo, 1e-8), np.maximum(hi, 1e-8), color=COLOURS[alg],
                            alpha=0.2)
        ax.set_yscale("log")
        ax.set_xlabel("time (s)")
        _thin_time_ticks(ax)
        ax.set_ylabel("relative error")
        ax.set_title(f"{s.title}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "figure3.png"), dpi=100)
    plt.close(fig)


def summary_lines(settings, results):
    """The issue's targets, measured."""
    lines = []
    for s in settings:
        cd = results.get((s.key, "DP-CD"))
        sgd = results.get((s.key, "DP-SGD"))
        if not cd or not sgd:
            continue
        cd_best = min(v["mean"] for v in cd["best"].values())
        sgd_best = min(v["mean"] for v in sgd["best"].values())
        ratio = sgd_best / cd_best if cd_best > 0 else float("inf")
        line = (f"- {s.title}: best DP-CD (zero-out) {cd_best:.4g}, best DP-SGD (zero-out) "
                f"{sgd_best:.4g}, DP-SGD / DP-CD = {ratio:.3g}x")
        cd_r1 = results.get((s.key, "DP-CD-replace-one"))
        if cd_r1:
            r1_best = min(v["mean"] for v in cd_r1["best"].values())
            line += (f"; best DP-CD (replace-one) {r1_best:.4g}, DP-SGD / DP-CD (replace-one) = "
                     f"{(sgd_best / r1_best if r1_best > 0 else float('inf')):.3g}x")
        lines.append(line)
    return lines


def _figures(out, settings, results, phases):
    phases.step("importing matplotlib")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: figures skipped (pip install matplotlib).")
    else:
        write_figures(out, settings, results, plt, log=phases.step)


def run(out, grid_kind="reduced", threads=None, problems=None, stream=None, algorithms=None):
    from .._config import effective_n_threads

    threads = effective_n_threads(threads)
    grid = make_grid(grid_kind)
    os.makedirs(out, exist_ok=True)
    phases = Phases(4, stream)
    print(f"Reproducing the DP-CD paper (grid: {grid_kind}, {threads} thread(s)); outputs in "
          f"{out}", flush=True)
    print("Hyperparameters are selected on the NON-PRIVATE objective, as in the paper: this "
          "selection is not covered by the privacy guarantee.", flush=True)
    phases.start("problems: data, lambdas and non-private optima F*")
    settings = build_settings(problems, log=phases.step)
    for s in settings:
        print(f"  {s.key}: n = {s.problem.n_samples}, p = {s.problem.n_features}, epsilon = "
              f"{s.epsilon:g}, delta = 1/n^2, {s.rule}, F* = {s.optimum:.8g}", flush=True)
    wanted = ALGORITHMS if algorithms is None else tuple(algorithms)
    unknown = sorted(set(wanted) - set(ALGORITHMS) - set(THEOREM_ALGORITHMS))
    if unknown:
        raise ValueError(f"unknown algorithms {unknown}; choose from "
                         f"{list(ALGORITHMS + THEOREM_ALGORITHMS)}")
    plan = []
    for s in settings:
        for alg in ALGORITHMS:
            if alg not in wanted or (alg == "DP-CD-priv-cst" and not s.imbalanced):
                continue
            n_steps = len(grid.sgd_steps if alg == "DP-SGD" else grid.cd_steps)
            runs = n_steps * len(grid.clips) * grid.tune_seeds + grid.final_seeds
            plan.append((s, alg, sum(_work(s, p, runs) for p in grid.passes)))
    results, timings, theorem = {}, {}, {}
    with open(os.path.join(out, "runs.csv"), "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["problem", "algorithm", "phase", "passes", "step", "clip", "seed",
                         "relative_error", "seconds"])
        phases.start(f"tuning and final runs: {len(plan)} (problem, algorithm) pairs")
        with Progress(sum(n for _, _, n in plan), "work", stream=stream) as bar:
            for s, alg, _ in plan:
                best = tune(s, alg, grid, threads, writer, bar)
                final = final_runs(s, alg, best, grid, writer, bar)
                best_passes = min(grid.passes, key=lambda p: best[p]["mean"])
                results[(s.key, alg)] = dict(best=best, final=final, best_passes=best_passes)
        # Theorem 3.3's schedule fixes every hyperparameter: no grid, final seeds only.
        for s in settings:
            for alg in THEOREM_ALGORITHMS:
                if alg in wanted:
                    th = theorem_runs(s, alg, grid.final_seeds, writer)
                    theorem[(s.key, alg)] = th
                    print(f"  {s.key} {alg}: R_M = {th['R']:.4g}, (T, K) = ({th['T']}, "
                          f"{th['K']}), {th['passes']:.4g} passes, relative error "
                          f"{th['rel'].mean():.4g} ± {th['rel'].std():.1g}", flush=True)
    phases.start(f"Table 3 timings: {grid.final_seeds} runs per configuration, no history")
    for s in settings:
        for alg in ("DP-CD", "DP-SGD"):
            if (s.key, alg) in results:
                phases.step(f"{s.key} {alg}")
                timings[(s.key, alg)] = {p: _timing_runs(s, alg, results[(s.key, alg)]["best"],
                                                         p, grid.final_seeds)
                                         for p in grid.passes}
    phases.start("tables, figures and summary")
    write_table2(os.path.join(out, "table2.md"), settings, results, grid)
    write_table3(os.path.join(out, "table3.md"), settings, timings, grid)
    if theorem:
        write_theorem_table(os.path.join(out, "theorem.md"), settings, theorem, results)
    if not results:
        print("no tuned algorithm ran: figures skipped.")
    else:
        _figures(out, settings, results, phases)
    phases.step("summary.md")
    lines = summary_lines(settings, results)
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write("\n".join(["# Targets"] + lines) + "\n")
    print("\n".join(lines))
    return results, timings


def retime(out, grid_kind="reduced", problems=None):
    """Re-measure Table 3 alone from a finished run's ``runs.csv`` (its "final" rows hold the
    selected configuration of every problem, algorithm and pass count) and rewrite
    ``table3.md``: wall times depend on the machine's load, the tuning does not."""
    grid = make_grid(grid_kind)
    best = {}
    with open(os.path.join(out, "runs.csv"), newline="") as fh:
        for row in csv.DictReader(fh):
            if row["phase"] == "final":
                best.setdefault((row["problem"], row["algorithm"]), {})[int(row["passes"])] = \
                    dict(step=float(row["step"]), clip=float(row["clip"]))
    settings = build_settings(problems or sorted({key for key, _ in best}))
    timings = {}
    for s in settings:
        for alg in ("DP-CD", "DP-SGD"):
            if (s.key, alg) in best:
                timings[(s.key, alg)] = {p: _timing_runs(s, alg, best[(s.key, alg)], p,
                                                         grid.final_seeds)
                                         for p in grid.passes}
    write_table3(os.path.join(out, "table3.md"), settings, timings, grid)
    print(f"rewrote {os.path.join(out, 'table3.md')}")
    return timings


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce dpcd",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="the paper's grid (10 steps x 100 clips, 5 + 10 seeds)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny grid (2 passes, 2 x 2 configurations, 1 + 2 seeds; about "
                             "30 s on 2 cores) that exercises every output, for tests: its "
                             "numbers are not the paper's")
    parser.add_argument("--out", default="dpcd_results", help="output folder")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all)")
    parser.add_argument("--table3-from", metavar="DIR", default=None,
                        help="only re-measure Table 3 from the runs.csv of a finished run in "
                             "DIR (same --full/--smoke flag as that run) and rewrite its "
                             "table3.md")
    parser.add_argument("--problems", nargs="*", default=None,
                        help="subset of: electricity_raw electricity_std california_raw "
                             "california_std sparse_lasso")
    parser.add_argument("--algorithms", nargs="*", default=None,
                        help="subset of: " + " ".join(ALGORITHMS) + " (each algorithm's runs "
                             "have their own seeds, so a subset reproduces its rows of the "
                             "full run); also, not run by default and not tuned: "
                             + " ".join(THEOREM_ALGORITHMS) + " (Theorem 3.3's (T, K), "
                             "Theorem 3.1's steps and clips; writes theorem.md)")
    args = parse_experiment_args(parser, argv)    # checks --threads, --out
    kind = "smoke" if args.smoke else ("full" if args.full else "reduced")
    start = time.perf_counter()
    if args.table3_from:
        retime(args.table3_from, kind, args.problems)
        print(f"done in {time.perf_counter() - start:.1f} s")
        return 0
    run(args.out, kind, args.threads, args.problems, algorithms=args.algorithms)
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0
