r"""Evaluation of the MLMC optimum estimator (paper 001, Asi et al. 2021): note 001 section 6.2.

``python -m dpsco_core reproduce mlmc [--full] [--out DIR] [--threads N]``. The paper has no
experiments (its section 1.5); these are the proposed experiments E1-E10 of the note, a
min-max experiment and Algorithm 7 (E7, E8, min-max and Algorithm 7: module
:mod:`.mlmc_applications`, each beside the rate the paper states):

* **E1 bias.** :math:`\|\bar{\hat x} - x^*\|` against ``j_max``, next to EpochSGD at the top
  level (the largest budget: the two means must agree, :math:`E\hat x = E x_{j_{\max}}`), next to
  EpochSGD at the *expected* cost of one draw, and the bound :math:`\sqrt{32} G/(\mu\sqrt T)`.
* **E2 variance.** Per-draw :math:`\mathrm{Var}(\hat x)` against ``j_max`` (Proposition 1:
  :math:`\le 16 c (G^2/\mu^2)\log_2 T_{\max}`) and each level's contribution
  :math:`2^\ell E\|x_\ell - x_{\ell-1}\|^2`, estimated from the draws with :math:`K = \ell`.
* **E3 cost.** Mean gradients per draw against the exact :math:`E N`
  (:func:`dpsco_core.mlmc.expected_gradients`; for the paper's levels also the note's table of
  section 2.4, which charges :math:`N_{ES}(2^J)` to J = 5 although that draw's difference is
  zero), and the cost tail :math:`P(N \ge t) \sim 1/t`.
* **E4 efficiency.** :math:`\mathrm{Var}(\hat x)\, E N` against :math:`E\|x_T - x^*\|^2\, T`
  of EpochSGD at the top level: the factor by which averaging MLMC copies needs more gradients
  than one EpochSGD run to reach the same mean squared error.
* **E5 output tail.** CCDF of :math:`\|\hat x - x^*\|` (a power law of exponent about -2 up to
  the truncation scale :math:`\sqrt{T_{\max}} G/\mu`).
* **E6 MORGRADEST** against the closed-form Moreau gradient of :math:`f = \|x - a\|_1` (a GLM
  with the absolute loss, kernel path) over lambda and j_max, with the paper's constants for one
  (delta, sigma) target, and of :math:`f = G_0\|x - a\|_2` (P4, Python path).
* **E6b MORGRADEST at the paper's constants** (c = 32, bias 0.1 and MSE 0.05 of the
  gradient: about 1e6 copies) on the same l1 function with every copy in the compiled batch
  kernel, timed.
* **E7, E8, min-max, Algorithm 7**: see :mod:`.mlmc_applications`.
* **E9 DP.** The clipped DP-SCO skeleton of Algorithm 6
  (:func:`dpsco_core.mlmc.dp_sco.mlmc_dp_sco`) against Poisson and shuffled DP-SGD on a
  Lipschitz logistic problem, excess population risk against n and epsilon (see
  :func:`run_dp` for the neighbouring relations and the tuning protocol).
* **E10 parallel speedup** of one batch of 10,000 copies (d = 100, logistic GLM: the
  benchmark's data; paper levels at j_max = 12, the benchmark's configuration, and epoch levels
  at j_max = 12) for 1..N threads, with the load average, and the speedups that static,
  in-order dynamic and longest-first scheduling would reach on the drawn costs.

Test problems (1-d GLMs run by the compiled kernel, exact minimizers; note 001 section 9):

* ``kink`` (P2): :math:`f(x) = \frac14(|x| + |x| + |x + 3| + |x - 3|)`, :math:`\psi = \frac12
  (x - \frac14)^2`; near 0 the stochastic subgradient is :math:`\pm 1` with mean
  :math:`\mathrm{sign}(x)/2`, so :math:`x^* = 0` sits on a kink and EpochSGD is visibly biased.
* ``median`` (P3): :math:`f(x) = \frac1n\sum_s |x - b_s|`, :math:`b_s \sim N(0, 1)`,
  n = 10,000, :math:`\psi = \frac12(x - 2)^2`; :math:`x^*` by bisection on the monotone
  subgradient. Both have :math:`\|\hat\nabla f\| = 1 = G` almost surely.

Grids (:data:`CONFIGS`): the default (400,000 copies per point, j_max up to 12 epoch-aligned
and 16 paper levels, E9 at n in {2e3, 8e3, 3.2e4}) takes about 2 minutes on 2 loaded cores;
``--full`` (2,000,000 copies, j_max up to 14 and 20, E9 up to n = 1.28e5 and six epsilons)
about 12 minutes.

Writes ``mlmc.md`` (all tables), ``mlmc_levels.csv`` (one row per problem, level scheme and
j_max), ``mlmc_moreau.csv``, ``mlmc_dp.csv``, ``mlmc_speedup.csv`` and the PNG plots
``mlmc_bias.png``, ``mlmc_variance.png``, ``mlmc_cost.png``, ``mlmc_tail.png``,
``mlmc_moreau.png``, ``mlmc_dp.png``, ``mlmc_speedup.png``.
"""

import argparse
import csv
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from ._cli import parse_experiment_args
from ._progress import Phases, Progress

__all__ = ["main", "run", "kink_problem", "median_problem", "median_minimizer", "level_sweep",
           "moreau_sweep", "speedup", "simulated_makespans", "run_dp", "CONFIGS", "DP_METHODS"]

#: ODC constant of EpochSGD (Proposition 3).
C_EPOCH_SGD = 32.0


@dataclass(frozen=True)
class TestProblem:
    """A 1-d GLM objective :math:`f + (\\mu/2)(x - c)^2` with its exact minimizer."""

    name: str
    oracle: object
    mu: float
    center: np.ndarray
    x_star: np.ndarray
    lipschitz: float


def kink_problem():
    """P2 as a GLM (absolute loss): x* = 0 on a kink of f, G = 1."""
    from dpsco_core import Problem
    from dpsco_core.mlmc import GLMOracle
    prob = Problem(np.ones((4, 1)), np.array([0.0, 0.0, -3.0, 3.0]), loss="absolute")
    return TestProblem("kink", GLMOracle(prob), 1.0, np.array([0.25]), np.array([0.0]), 1.0)


def median_minimizer(b, mu, c):
    r"""Exact minimizer of :math:`\frac1n\sum_s|x - b_s| + (\mu/2)(x - c)^2` (1-d).

    The subdifferential's lower end :math:`h(x) = (\#\{b < x\} - \#\{b \ge x\})/n + \mu(x - c)`
    is strictly increasing; bisection to adjacent doubles finds the unique root or the data
    point where h jumps over 0.
    """
    b = np.sort(np.asarray(b, dtype=np.float64))
    n = b.size

    def h(x):
        below = np.searchsorted(b, x, side="left")
        return (2.0 * below - n) / n + mu * (x - c)
    lo, hi = min(b[0], c) - 1.0 / mu - 1.0, max(b[-1], c) + 1.0 / mu + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if h(mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def median_problem(n=10_000, random_state=0):
    """P3 as a GLM: f = mean |x - b_s|, b_s ~ N(0, 1), psi = (1/2)(x - 2)^2, G = 1."""
    from dpsco_core import Problem
    from dpsco_core.mlmc import GLMOracle
    b = np.random.default_rng(random_state).standard_normal(n)
    prob = Problem(np.ones((n, 1)), b, loss="absolute")
    return TestProblem("median", GLMOracle(prob), 1.0, np.array([2.0]),
                       np.array([median_minimizer(b, 1.0, 2.0)]), 1.0)


def _seed(*keys):
    return np.random.SeedSequence([20210617, *keys])


def _top_budget(j_max, levels):
    """Gradient budget T of the top level: 2^j (paper) or 16 (2^j - 1) (epoch-aligned)."""
    return 2 ** j_max if levels == "paper" else 16 * (2 ** j_max - 1)


def _note_cost(j_max):
    """The note's table (section 2.4): sum_j 2^-j N_ES(2^j), charging J = 5 its epochs."""
    from dpsco_core.mlmc import epochs_for_budget, gradients_for_epochs
    return sum(gradients_for_epochs(epochs_for_budget(2 ** j)) / 2.0 ** j
               for j in range(1, j_max + 1))


def _epoch_sgd_runs(problem, n_epochs, n_runs, seed, threads):
    """``n_runs`` independent EpochSGD outputs after ``n_epochs`` epochs (kernel path)."""
    from dpsco_core.mlmc import mlmc_draws
    if n_epochs == 0:
        return np.tile(problem.center, (n_runs, 1)), 0
    # base_level = j_max: every draw is plain EpochSGD at the top level (no correction).
    r = mlmc_draws(problem.oracle, problem.mu, problem.center, j_max=n_epochs,
                   base_level=n_epochs, n_copies=n_runs, levels="epoch", random_state=seed,
                   n_threads=threads)
    return r.samples, int(r.n_gradients[0])


def _mean_err(samples, x_star):
    """(||mean - x*||, its standard error sqrt(tr Cov / M), signed first coordinate)."""
    m = samples.shape[0]
    mean = samples.mean(axis=0)
    se = math.sqrt(float(samples.var(axis=0, ddof=1).sum()) / m) if m > 1 else float("nan")
    return float(np.linalg.norm(mean - x_star)), se, mean


def _ccdf_slope(values, n_min=10, upper=1e-2):
    """Log-log slope of the empirical CCDF P(V >= t) where it lies in [n_min / M, upper]."""
    v = np.sort(np.asarray(values, dtype=np.float64))[::-1]
    v = v[v > 0]
    m = len(values)
    ranks = np.arange(1, v.size + 1) / m
    keep = (ranks >= n_min / m) & (ranks <= upper)
    if keep.sum() < 5 or np.unique(v[keep]).size < 3:
        return float("nan")
    return float(np.polyfit(np.log(v[keep]), np.log(ranks[keep]), 1)[0])


def level_sweep(problem, levels, j_maxes, n_copies, n_top, threads=None, progress=None):
    """E1-E5 on one problem and level scheme: a row per j_max, and the last j_max's draws.

    Every row holds the MLMC bias and variance from ``n_copies`` draws, the bias and mean
    squared error of ``n_top`` EpochSGD runs (fewer for large budgets, at least 200) at the top
    level and at the expected cost of one draw, the measured and exact expected cost, the cost and output tails, and the per-level
    variance contributions ``level_var`` (dict level -> (value, s.e., count)).
    """
    from dpsco_core.mlmc import (epochs_for_budget, expected_gradients, gradients_for_epochs,
                                 level_epochs, mlmc_draws)
    rows, last = [], None
    tag = {"kink": 1, "median": 2}.get(problem.name, 3) * 10 + (levels == "paper")
    for j_max in j_maxes:
        t0 = time.perf_counter()
        draws = mlmc_draws(problem.oracle, problem.mu, problem.center, j_max=j_max,
                           n_copies=n_copies, levels=levels, random_state=_seed(tag, j_max, 0),
                           n_threads=threads)
        t_mlmc = time.perf_counter() - t0
        top_epochs = level_epochs(j_max, levels)
        T = _top_budget(j_max, levels)
        # EpochSGD at the top level costs T per run and its spread shrinks like 1/sqrt(T):
        # cap the work at ~2^27 gradients per point (at least 200 runs)
        runs = min(n_top, max(200, 2 ** 27 // T))
        top, top_grads = _epoch_sgd_runs(problem, top_epochs, runs, _seed(tag, j_max, 1),
                                         threads)
        exact_cost = expected_gradients(j_max, levels)
        matched_epochs = epochs_for_budget(int(exact_cost))
        matched, _ = _epoch_sgd_runs(problem, matched_epochs, runs, _seed(tag, j_max, 2),
                                     threads)
        bias, bias_se, mean = _mean_err(draws.samples, problem.x_star)
        top_bias, top_se, top_mean = _mean_err(top, problem.x_star)
        matched_bias, matched_se, _ = _mean_err(matched, problem.x_star)
        diff_se = math.hypot(bias_se, top_se)
        z = float(np.max(np.abs(mean - top_mean))) / diff_se
        var = float(draws.samples.var(axis=0, ddof=1).sum())
        cost = draws.n_gradients.astype(np.float64)
        top_mse = float(np.mean(np.sum((top - problem.x_star) ** 2, axis=1)))
        dist = np.linalg.norm(draws.samples - problem.x_star, axis=1)
        g_mu = problem.lipschitz / problem.mu
        # level l's share of E||x_hat - x_0||^2: 2^l E||x_l - x_{l-1}||^2, from the draws with
        # K = l (x_hat - x_0 = 2^l (x_l - x_{l-1}) there; probability 2^-l).
        base = draws.samples - problem.center
        level_var = {}
        for ell in range(1, j_max + 1):
            sel = draws.k == ell
            if sel.sum() >= 2:
                v = np.sum(base[sel] ** 2, axis=1) / 2.0 ** ell
                level_var[ell] = (float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)),
                                  int(sel.sum()))
        rows.append({
            "problem": problem.name, "levels": levels, "j_max": j_max, "T_max": T,
            "n_copies": n_copies, "n_top": runs,
            "mlmc_bias": bias, "mlmc_bias_se": bias_se,
            "top_bias": top_bias, "top_bias_se": top_se, "agreement_z": z,
            "matched_epochs": matched_epochs,
            "matched_grads": gradients_for_epochs(matched_epochs),
            "matched_bias": matched_bias, "matched_bias_se": matched_se,
            "bias_bound": math.sqrt(C_EPOCH_SGD) * g_mu / math.sqrt(T),
            "var": var,
            "var_bound": 16 * C_EPOCH_SGD * g_mu ** 2 * math.log2(T) if levels == "paper"
            else float("nan"),
            "mean_cost": float(cost.mean()),
            "cost_se": float(cost.std(ddof=1) / math.sqrt(cost.size)),
            "exact_cost": exact_cost,
            "note_cost": _note_cost(j_max) if levels == "paper" else float("nan"),
            "max_cost": int(cost.max()), "worst_cost": gradients_for_epochs(top_epochs),
            "top_grads": top_grads, "top_mse": top_mse,
            "sgd_efficiency": top_mse * top_grads,
            "mlmc_efficiency": var * exact_cost,
            "cost_tail_slope": _ccdf_slope(cost),
            "output_tail_slope": _ccdf_slope(dist),
            "max_dist": float(dist.max()), "truncation_scale": math.sqrt(T) * g_mu,
            "time_mlmc": t_mlmc, "level_var": level_var})
        last = draws
        if progress is not None:
            progress.advance()
    return rows, last


def _l1_moreau_problem(d=4):
    r"""f(x) = ||x - a||_1 as a GLM: rows a_s = d e_s, labels d a_s, absolute loss (n = d).

    The stochastic subgradient picks one coordinate: :math:`d\,\mathrm{sign}(x_s - a_s) e_s`,
    so G = d exactly; :math:`\nabla f_\lambda(y)_i = \mathrm{clip}(\lambda(y_i - a_i), -1, 1)`.
    """
    from dpsco_core import Problem
    from dpsco_core.mlmc import GLMOracle
    a = np.linspace(-0.5, 0.5, d)
    prob = Problem(d * np.eye(d), d * a, loss="absolute")
    return GLMOracle(prob), a, float(d)


def _l1_moreau_gradient(y, a, lam):
    return np.clip(lam * (y - a), -1.0, 1.0)


def moreau_sweep(lams, j_maxes, n_copies, n_reps, paper_targets, norm_copies, threads=None,
                 progress=None):
    """E6: MORGRADEST against closed forms; rows with bias, its s.e., RMSE and the bounds.

    ``f = ||x - a||_1`` (kernel): for each lambda and j_max, ``n_reps`` estimates of
    ``n_copies`` copies each; ``y`` is placed so that two coordinates are in the quadratic
    regime (|lambda (y_i - a_i)| < 1) and two saturated. ``paper_targets``: (lambda, delta,
    sigma) run with the paper's constants (j_max and copies derived, c = 32). Then P4
    (``f = G0 ||x - a||_2``, Python path) with ``norm_copies`` copies in both regimes.
    """
    from dpsco_core.mlmc import NormOracle, moreau_gradient
    oracle, a, G = _l1_moreau_problem()
    rows = []

    def record(kind, lam, y, exact, grads, res_list, delta=float("nan"),
               sigma=float("nan"), lipschitz=G):
        grads = np.asarray(grads)
        mean = grads.mean(axis=0)
        per_copy = np.concatenate([lam * (y - r.draws.samples) for r in res_list])
        se = math.sqrt(float(per_copy.var(axis=0, ddof=1).sum()) / per_copy.shape[0])
        j_max = res_list[0].draws.j_max
        T = 16 * (2 ** j_max - 1)
        rows.append({
            "function": kind, "lam": lam, "j_max": j_max,
            "n_copies": res_list[0].draws.samples.shape[0], "n_reps": len(res_list),
            "bias": float(np.linalg.norm(mean - exact)), "bias_se": se,
            "rmse": float(np.sqrt(np.mean(np.sum((grads - exact) ** 2, axis=1)))),
            "bias_bound": math.sqrt(C_EPOCH_SGD) * lipschitz / math.sqrt(T),
            "delta": delta, "sigma": sigma, "grad_norm": float(np.linalg.norm(exact)),
            "max_norm_mean": float(np.linalg.norm(mean)),
            "gradients_per_estimate": float(np.mean([r.draws.n_gradients.sum()
                                                     for r in res_list]))})
        if progress is not None:
            progress.advance()

    for lam in lams:
        # coordinates 0, 3 saturated (|lam (y - a)| = 2), 1, 2 quadratic (1/2)
        y = a + np.array([2.0, 0.5, -0.5, -2.0]) / lam
        exact = _l1_moreau_gradient(y, a, lam)
        for j_max in j_maxes:
            res = [moreau_gradient(oracle, y, lam, j_max=j_max, n_copies=n_copies,
                                   random_state=_seed(60, int(lam * 1000), j_max, r),
                                   n_threads=threads) for r in range(n_reps)]
            record("l1", lam, y, exact, [r.gradient for r in res], res)
    for lam, delta, sigma in paper_targets:
        y = a + np.array([2.0, 0.5, -0.5, -2.0]) / lam
        exact = _l1_moreau_gradient(y, a, lam)
        res = [moreau_gradient(oracle, y, lam, bias=delta, mse=sigma ** 2, lipschitz=G,
                               random_state=_seed(61, int(lam * 1000), r), n_threads=threads)
               for r in range(n_reps)]
        record("l1 (paper constants)", lam, y, exact, [r.gradient for r in res], res,
               delta, sigma)
    a2 = np.array([0.0, 0.0])
    p4 = NormOracle(a2, scale=1.0, noise=0.5)
    for y in (np.array([3.0, 4.0]), np.array([0.1, 0.2])):
        res = [moreau_gradient(p4, y, 1.0, j_max=8, n_copies=norm_copies,
                               random_state=_seed(62, int(y[0] * 10), r))
               for r in range(max(2, n_reps // 4))]
        record("l2 norm (P4)", 1.0, y, p4.moreau_gradient(y, 1.0), [r.gradient for r in res],
               res, lipschitz=math.hypot(1.0, 0.5 * math.sqrt(2)))
    return rows


def moreau_paper_constants(lam, delta, sigma, d=2, threads=None, seed=0):
    """MORGRADEST at the paper's constants (c = 32; Corollary 2's j_max and copies for bias
    ``delta`` and MSE ``sigma^2`` of the gradient) on ``f = ||x - a||_1`` in ``d`` dimensions
    (G = d), every copy through the compiled batch kernel (``GLMOracle``): one estimate, its
    error against the closed form, the copies, gradients and wall time."""
    from dpsco_core.mlmc import moreau_gradient
    oracle, a, G = _l1_moreau_problem(d)
    signs = np.resize([2.0, 0.5, -0.5, -2.0], d)
    y = a + signs / lam
    exact = _l1_moreau_gradient(y, a, lam)
    t0 = time.perf_counter()
    res = moreau_gradient(oracle, y, lam, bias=delta, mse=sigma ** 2, lipschitz=G,
                          random_state=_seed(63, d, seed), n_threads=threads)
    elapsed = time.perf_counter() - t0
    return {"function": f"l1 (d = {d}, paper constants)", "lam": lam, "delta": delta,
            "sigma": sigma, "j_max": res.draws.j_max, "n_copies": res.draws.samples.shape[0],
            "gradients": int(res.draws.n_gradients.sum()),
            "error": float(np.linalg.norm(res.gradient - exact)), "time": elapsed,
            "threads": threads}


def _paper_constants_table(rows):
    lines = ["## E6b: MORGRADEST at the paper's constants (compiled batch path)", "",
             "Corollary 2 with c = 32: j_max and copies from the bias delta and MSE sigma^2 "
             "targets of the gradient; f = ||x - a||_1 (G = d) as a GLM, every copy run by the "
             "batch kernel. One estimate: its error ||g_hat - grad f_lam(y)|| should be about "
             "sigma or less.", "",
             "| function | lambda | delta | sigma^2 | j_max | copies | gradients | error | "
             "time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['function']} | {r['lam']:g} | {r['delta']:g} | {r['sigma'] ** 2:g}"
                     f" | {r['j_max']} | {r['n_copies']} | {r['gradients']:.3g} | "
                     f"{r['error']:.3g} | {r['time']:.1f} |")
    return lines


def _bench_oracle(n=2_000, d=100):
    """The benchmark's logistic GLM (bench/bench_mlmc.py)."""
    from dpsco_core import Problem
    from dpsco_core.mlmc import GLMOracle
    rs = np.random.default_rng(0)
    X = rs.standard_normal((n, d)) / np.sqrt(d)
    y = np.sign(X @ rs.standard_normal(d) + 0.1 * rs.standard_normal(n))
    return GLMOracle(Problem(X, y, loss="logistic"))


def simulated_makespans(block_costs, n_workers):
    """Makespans of static (contiguous chunks), in-order dynamic and longest-first scheduling.

    ``block_costs``: work of each random block (its copies run serially, the kernel's unit).
    Dynamic scheduling hands the next block to the first idle worker (greedy list
    scheduling); longest-first is the same after sorting by decreasing cost (what the kernel
    does, since the costs are fixed by the pre-drawn K's). Returns a dict name -> makespan.
    """
    import heapq
    costs = np.asarray(block_costs, dtype=np.float64)
    chunks = np.array_split(costs, n_workers)
    static = max(float(c.sum()) for c in chunks)

    def greedy(order):
        heap = [0.0] * n_workers
        for c in order:
            heapq.heapreplace(heap, heap[0] + c)
        return max(heap)
    return {"static": static, "dynamic": greedy(costs), "lpt": greedy(np.sort(costs)[::-1])}


def speedup(thread_counts, configs, n_copies=10_000, d=100, reps=3, progress=None):
    """E10: for each ``(levels, j_max)`` in ``configs`` and thread count, the best-of-``reps``
    wall time of one batch of ``n_copies`` copies, whether the draws are bitwise equal to the
    1-thread ones, the load average, and (per config) the speedups that static, in-order
    dynamic and longest-first scheduling would reach on the drawn costs."""
    from dpsco_core.mlmc import mlmc_draws
    from dpsco_core.mlmc.estimator import COPY_BLOCK
    oracle = _bench_oracle(d=d)
    center = np.zeros(d)
    rows, sims = [], []
    for levels, j_max in configs:
        ref, first = None, None
        for t in thread_counts:
            times = []
            load_before = os.getloadavg()[0]
            for _ in range(reps):
                t0 = time.perf_counter()
                r = mlmc_draws(oracle, 1.0, center, j_max=j_max, n_copies=n_copies,
                               levels=levels, random_state=1, n_threads=t)
                times.append(time.perf_counter() - t0)
            ref = r if ref is None else ref
            row = {"levels": levels, "j_max": j_max, "threads": t, "time": min(times),
                   "time_median": float(np.median(times)), "load_before": load_before,
                   "load_after": os.getloadavg()[0],
                   "bitwise_equal": bool(np.array_equal(r.samples, ref.samples)),
                   "n_copies": n_copies, "d": d, "total_gradients": int(r.n_gradients.sum()),
                   "max_copy_gradients": int(r.n_gradients.max())}
            first = row if first is None else first
            row["speedup"] = first["time"] / row["time"]
            rows.append(row)
            if progress is not None:
                progress.advance()
        block = np.zeros(-(-n_copies // COPY_BLOCK))
        # a copy's work: its gradients plus one unit for the draw and the output row
        np.add.at(block, np.arange(n_copies) // COPY_BLOCK, ref.n_gradients + 1.0)
        for p in (2, 4, 8, 16, 64):
            spans = simulated_makespans(block, p)
            sims.append({"levels": levels, "j_max": j_max, "workers": p,
                         **{f"speedup_{k}": float(block.sum() / v) for k, v in spans.items()}})
    return rows, sims


#: E9 methods: name -> (solver, fixed keyword arguments).
DP_METHODS = {
    "mlmc_dp_sco": ("mlmc", {"neighboring_relation": "zero_out"}),
    "dp_sgd_poisson": ("sgd", {"neighboring_relation": "zero_out", "sampling": "poisson"}),
    "dp_sgd_shuffle": ("sgd", {"neighboring_relation": "replace_one", "sampling": "shuffle"}),
}
DP_RADIUS = 3.0


def _dp_run(method, problem, epsilon, delta, params, seed, threads):
    """One private run; returns the Result."""
    from dpsco_core.mlmc.dp_sco import _default_step, mlmc_dp_sco
    from dpsco_core.solvers.dp_sgd import dp_sgd
    solver, fixed = DP_METHODS[method]
    if solver == "mlmc":
        n, d = problem.n_samples, problem.n_features
        # the step as a multiple of the solver's default (which is epsilon-dependent)
        eta = params["step"] * _default_step(DP_RADIUS, 1.0, n, d, epsilon, delta)
        return mlmc_dp_sco(problem, epsilon=epsilon, delta=delta, radius=DP_RADIUS,
                           lipschitz=1.0, step=eta, step_decay=params["decay"],
                           random_state=seed, n_threads=threads, record_history=False,
                           **fixed)
    kw = dict(fixed)
    if not math.isfinite(epsilon) and kw["neighboring_relation"] == "zero_out":
        kw["neighboring_relation"] = None
    return dp_sgd(problem, epsilon=epsilon, delta=delta, passes=params["passes"],
                  batch_size=min(problem.n_samples, 128), step=params["step"],
                  clip=params["clip"] if math.isfinite(epsilon) else math.inf,
                  random_state=seed, n_threads=threads, record_history=False, **kw)


def _dp_grid(method, grid):
    if DP_METHODS[method][0] == "mlmc":
        return [{"step": s, "decay": r} for s in grid["mlmc_steps"] for r in grid["mlmc_decays"]]
    return [{"passes": p, "step": s, "clip": c} for p in grid["sgd_passes"]
            for s in grid["sgd_steps"] for c in grid["sgd_clips"]]


def run_dp(config, threads=None, progress=None):
    r"""E9: the clipped MLMC DP-SCO skeleton (Algorithm 6) against DP-SGD.

    Problem: the well-specified logistic model of :mod:`dpsco_core.experiments.srgd` (features
    uniform on the unit sphere of R^d, so every per-sample loss is 1-Lipschitz and 1/4-smooth;
    ``||x_dagger|| = 2``), excess population risk on 200,000 held-out points. Neighbouring
    relation **zero-out** for ``mlmc_dp_sco`` and Poisson DP-SGD (the only relation both
    support: mlmc_dp_sco rejects add/remove, Poisson DP-SGD replace-one; mlmc_dp_sco's noise is
    the same under replace-one), plus shuffled DP-SGD under replace-one. delta = n^-1.1.
    Hyperparameters are tuned per (method, n, epsilon) on seed 99 (not accounted), then run on
    ``config["seeds"]``; epsilon = inf rows are the same methods without noise (the
    optimization floor).
    """
    from .srgd import make_problem
    points = [(n, config["epsilons"][0]) for n in config["ns"]]
    points += [(config["n_eps"], e) for e in config["epsilons"][1:]]
    points += [(n, math.inf) for n in config["ns"]]
    rows, failures = [], []
    cache = {}
    for n, epsilon in points:
        if n not in cache:
            cache.clear()
            cache[n] = make_problem("logistic", n, p=config["d"], random_state=7 + n)
        problem, excess, _, _ = cache[n]
        delta = n ** -1.1
        for method in DP_METHODS:
            if not math.isfinite(epsilon) and method == "dp_sgd_shuffle":
                continue                      # the same non-private algorithm as Poisson
            tuned = min(_dp_grid(method, config),
                        key=lambda prm: _tuning_score(method, problem, excess, epsilon, delta,
                                                      prm, threads, failures))
            for seed in config["seeds"]:
                t0 = time.perf_counter()
                res = _dp_run(method, problem, epsilon, delta, tuned, seed, threads)
                elapsed = time.perf_counter() - t0
                st = res.stats
                phase1 = st.get("phases", [{}])[0]
                rows.append({
                    "n": n, "d": config["d"], "epsilon": epsilon, "delta": delta,
                    "method": method, "seed": seed, "excess": excess(res.coef),
                    "zero_excess": excess(np.zeros(config["d"])),
                    "relation": res.privacy.neighboring_relation.value,
                    "report_epsilon": res.privacy.epsilon,
                    "gradients": st["n_gradients"] if "n_gradients" in st
                    else int(round(st["steps"] * st["sample_rate"] * n)),
                    "time": elapsed, "params": " ".join(f"{k}={v:g}" for k, v in tuned.items()),
                    "phase1_k_max": phase1.get("k_max", float("nan")),
                    "phase1_noise": phase1.get("noise_scale", float("nan")),
                    "phase1_clip_radius": phase1.get("clip_radius", float("nan")),
                    "clipped_fraction": phase1.get("clipped_fraction",
                                                   st.get("clipped_fraction", float("nan")))})
        if progress is not None:
            progress.advance()
    return rows, failures


def _tuning_score(method, problem, excess, epsilon, delta, params, threads, failures):
    """Excess risk of one tuning run; a run whose privacy check fails scores inf and is
    listed in ``failures`` (dp_sgd's accountant re-check can exceed the target by one ulp)."""
    try:
        return excess(_dp_run(method, problem, epsilon, delta, params, 99, threads).coef)
    except RuntimeError as exc:
        if "privacy calibration error" not in str(exc):
            raise
        failures.append((method, problem.n_samples, epsilon, str(exc)))
        return math.inf


def _dp_summary(rows):
    out = {}
    for r in rows:
        out.setdefault((r["n"], r["epsilon"], r["method"]), []).append(r)
    return {k: (float(np.mean([r["excess"] for r in v])),
                float(np.std([r["excess"] for r in v]) / math.sqrt(len(v))), v[0])
            for k, v in out.items()}


def _dp_table(rows, failures=()):
    summ = _dp_summary(rows)
    lines = ["## E9 clipped MLMC DP-SCO (Algorithm 6 skeleton) against DP-SGD", "",
             "Logistic regression, features on the unit sphere (1-Lipschitz losses), d = "
             f"{rows[0]['d']}, delta = n^-1.1; excess population risk (mean +- s.e. over "
             f"{len({r['seed'] for r in rows})} seeds; 'zero' = the trivial output x = 0). "
             "mlmc_dp_sco and Poisson DP-SGD under zero-out, shuffled DP-SGD under replace-one "
             "(mlmc_dp_sco's noise is the same under replace-one). Hyperparameters tuned per "
             "row on a separate seed (not accounted); mlmc_dp_sco's step is a multiple of its "
             "default. Phase-1 diagnostics: K_max (most copies touching one record), the "
             "Gaussian noise scale per coordinate and the copy clip radius r_1. The paper's "
             "utility theorem does not cover the clipped estimator.", "",
             "| n | epsilon | method | excess | zero | gradients | time (s) | tuned | "
             "K_max | noise | r_1 |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (n, eps, method), (m, se, r) in sorted(summ.items(),
                                               key=lambda kv: (kv[0][1] == math.inf, kv[0][0],
                                                               kv[0][1], kv[0][2])):
        lines.append(f"| {n} | {eps:g} | {method} | {m:.4g} +- {se:.2g} | "
                     f"{r['zero_excess']:.4g} | {r['gradients']} | {r['time']:.2f} | "
                     f"{r['params']} | {_fmt(float(r['phase1_k_max']))} | "
                     f"{_fmt(float(r['phase1_noise']))} | "
                     f"{_fmt(float(r['phase1_clip_radius']))} |")
    lines.append("")
    for (n, eps, method), (m, _, r) in sorted(summ.items()):
        if method == "mlmc_dp_sco" and math.isfinite(eps):
            best_sgd = min(summ[(n, eps, k)][0] for k in DP_METHODS if k != method)
            verdict = "worse" if m > best_sgd else "better"
            lines.append(f"- n = {n}, epsilon = {eps:g}: mlmc_dp_sco {m:.4g} vs best DP-SGD "
                         f"{best_sgd:.4g} ({m / best_sgd:.3g}x, {verdict}); trivial x = 0: "
                         f"{r['zero_excess']:.4g}")
    if failures:
        groups = {}
        for method, n, eps, msg in failures:
            groups.setdefault((method, n, eps), []).append(msg)
        lines += ["", "Tuning configurations skipped because the solver's own privacy re-check "
                  "raised (the accountant's epsilon exceeds the target by rounding; a "
                  "calibration issue in the library, not in this experiment):", ""]
        lines += [f"- {m} at n = {n}, epsilon = {e:g}: {len(v)} of the grid's configurations "
                  f"({v[0]})" for (m, n, e), v in sorted(groups.items())]
    return lines


# -- configurations -------------------------------------------------------------------------

CONFIGS = {
    "smoke": dict(epoch_j=[2, 4], paper_j=[4, 6], n_copies=4_000, n_top=200,
                  moreau_lams=[1.0], moreau_j=[4], moreau_copies=500, moreau_reps=2,
                  moreau_paper=[], norm_copies=40, threads_reps=1, speed_copies=300,
                  speed_configs=[("paper", 6), ("epoch", 3)],
                  dp=dict(ns=[600], n_eps=600, epsilons=[1.0, 4.0], seeds=[0], d=3,
                          mlmc_steps=[1.0], mlmc_decays=[16.0], sgd_passes=[1],
                          sgd_steps=[1.0], sgd_clips=[1.0]),
                  apps=dict(e7=[0.8], e8=[0.2], minmax=[0.4], seeds=[0], minmax_iter=1,
                            alg7_copies=50, paper_constants=[(2.0, 0.5, 2.0, 2)]),
                  # the plots are half of the smoke run's time on a loaded machine, their
                  # log axes' minor ticks half of that (the figures stay, without them)
                  minor_ticks=False),
    "default": dict(epoch_j=[2, 4, 6, 8, 10, 12], paper_j=[4, 6, 8, 10, 12, 14, 16],
                    n_copies=400_000, n_top=1_000, moreau_lams=[0.5, 2.0, 8.0],
                    moreau_j=[4, 8], moreau_copies=4_000, moreau_reps=8,
                    moreau_paper=[(2.0, 0.5, 2.0)], norm_copies=300, threads_reps=3,
                    speed_copies=10_000,
                    speed_configs=[("paper", 12), ("epoch", 12)],
                    dp=dict(ns=[2_000, 8_000, 32_000], n_eps=8_000,
                            epsilons=[1.0, 0.5, 4.0, 16.0], seeds=[0, 1, 2], d=10,
                            mlmc_steps=[1 / 16, 1 / 4, 1.0, 4.0, 16.0],
                            mlmc_decays=[4.0, 16.0],
                            sgd_passes=[1, 5], sgd_steps=[1 / 256, 1 / 64, 1 / 16, 1 / 4],
                            sgd_clips=[0.25, 1.0]),
                    apps=dict(e7=[0.2, 0.1], e8=[0.05, 0.02, 0.01], minmax=[0.4, 0.2],
                              seeds=[0, 1, 2], minmax_iter=8, alg7_copies=1500,
                              paper_constants=[(2.0, 0.1, math.sqrt(0.05), 2)])),
    "full": dict(epoch_j=[2, 4, 6, 8, 10, 12, 14], paper_j=[4, 6, 8, 10, 12, 14, 16, 18, 20],
                 n_copies=2_000_000, n_top=2_000, moreau_lams=[0.5, 2.0, 8.0],
                 moreau_j=[4, 8, 12], moreau_copies=10_000, moreau_reps=16,
                 moreau_paper=[(2.0, 0.5, 2.0), (2.0, 0.25, 1.0)], norm_copies=1_000,
                 threads_reps=5, speed_copies=10_000,
                 speed_configs=[("paper", 12), ("epoch", 12)],
                 dp=dict(ns=[2_000, 8_000, 32_000, 128_000], n_eps=32_000,
                         epsilons=[1.0, 0.25, 0.5, 2.0, 4.0, 16.0], seeds=[0, 1, 2, 3, 4],
                         d=10, mlmc_steps=[1 / 64, 1 / 16, 1 / 4, 1.0, 4.0, 16.0],
                         mlmc_decays=[4.0, 16.0], sgd_passes=[1, 5, 20],
                         sgd_steps=[1 / 256, 1 / 64, 1 / 16, 1 / 4], sgd_clips=[0.25, 1.0]),
                 apps=dict(e7=[0.2, 0.1, 0.05], e8=[0.05, 0.02, 0.01, 0.005],
                           minmax=[0.4, 0.2, 0.1], seeds=[0, 1, 2, 3, 4], minmax_iter=8,
                           alg7_copies=6000,
                           paper_constants=[(2.0, 0.1, math.sqrt(0.05), 2),
                                            (2.0, 0.1, math.sqrt(0.05), 4)])),
}


# -- outputs --------------------------------------------------------------------------------

def _fmt(x, p=3):
    if isinstance(x, float) and not math.isfinite(x):
        return "n/a"
    return f"{x:.{p}g}"


def _levels_tables(rows):
    lines = ["## E1 bias against j_max (MLMC vs EpochSGD at the top level)", "",
             "Bias = ||mean - x*|| +- standard error. `z` = |MLMC mean - EpochSGD(top) mean| "
             "in combined standard errors (the identity E x_hat = E x_top says |z| is a "
             "standard normal's size). `SGD at E N` is EpochSGD with the draw's expected "
             "gradient count (matched expected cost).", "",
             "| problem | levels | j_max | T_max | MLMC bias | EpochSGD(T_max) bias | z | "
             "SGD at E N bias | bound sqrt(32) G/(mu sqrt T) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['levels']} | {r['j_max']} | {r['T_max']} | "
                     f"{_fmt(r['mlmc_bias'])} +- {_fmt(r['mlmc_bias_se'], 2)} | "
                     f"{_fmt(r['top_bias'])} +- {_fmt(r['top_bias_se'], 2)} | "
                     f"{r['agreement_z']:.2f} | {_fmt(r['matched_bias'])} "
                     f"({r['matched_grads']} grads) | {_fmt(r['bias_bound'])} |")
    zs = [r["agreement_z"] for r in rows]
    lines += ["", f"Agreement: max z = {max(zs):.2f} over {len(zs)} rows "
              f"({sum(z > 3 for z in zs)} above 3).", "",
              "## E2 variance and E3 expected cost", "",
              "Var = per-draw trace variance (Proposition 1 bound 16 c (G/mu)^2 log2 T_max, "
              "c = 32, stated for the paper's levels). Cost = stochastic gradients per draw: "
              "measured mean +- s.e., the exact E N of the implementation, and for paper levels "
              "the note's table (section 2.4; it charges J = 5 its epoch, the implementation "
              "runs none because x_5 - x_4 = 0, a difference of 15/32).", "",
              "| problem | levels | j_max | Var | Var bound | mean cost | exact E N | note's "
              "E N | z(cost) | max cost | worst case |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        zc = abs(r["mean_cost"] - r["exact_cost"]) / r["cost_se"] if r["cost_se"] > 0 else 0.0
        lines.append(f"| {r['problem']} | {r['levels']} | {r['j_max']} | {_fmt(r['var'])} | "
                     f"{_fmt(r['var_bound'])} | {r['mean_cost']:.3f} +- "
                     f"{_fmt(r['cost_se'], 2)} | {r['exact_cost']:.4f} | "
                     f"{_fmt(r['note_cost'], 5)} | {zc:.2f} | {r['max_cost']} | "
                     f"{r['worst_cost']} |")
    lines += ["", "Variance growth per level (least-squares slope of Var against j_max over "
              "j_max >= 4):", ""]
    for key in sorted({(r["problem"], r["levels"]) for r in rows}):
        sel = [r for r in rows if (r["problem"], r["levels"]) == key and r["j_max"] >= 4]
        if len(sel) >= 2:
            slope = np.polyfit([r["j_max"] for r in sel], [r["var"] for r in sel], 1)[0]
            lines.append(f"- {key[0]}, {key[1]} levels: {slope:.3g} (G/mu)^2 per level "
                         f"(bound's slope 512 per level of log2 T_max)")
    lines += ["", "## E4 statistical efficiency (where MLMC is worse than SGD)", "",
              "Gradients x squared error: EpochSGD at the top level, E||x_T - x*||^2 * T; "
              "MLMC, Var * E N. Their ratio is how many times more gradients an average of "
              "MLMC copies (OPTEST) needs than one EpochSGD run to reach the same mean "
              "squared error.", "",
              "| problem | levels | j_max | EpochSGD MSE*T | MLMC Var*E N | ratio |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['levels']} | {r['j_max']} | "
                     f"{_fmt(r['sgd_efficiency'])} | {_fmt(r['mlmc_efficiency'])} | "
                     f"{_fmt(r['mlmc_efficiency'] / r['sgd_efficiency'])} |")
    lines += ["", "## E5 tails", "",
              "Log-log CCDF slopes (fitted where the CCDF is in [10/M, 1e-2]): cost, expected "
              "about -1 (P(N >= t) ~ 1/t); distance ||x_hat - x*||, expected about -2 up to the "
              "truncation scale sqrt(T_max) G/mu.", "",
              "| problem | levels | j_max | cost tail slope | output tail slope | max "
              "||x_hat - x*|| | sqrt(T_max) G/mu |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['levels']} | {r['j_max']} | "
                     f"{_fmt(r['cost_tail_slope'])} | {_fmt(r['output_tail_slope'])} | "
                     f"{_fmt(r['max_dist'])} | {_fmt(r['truncation_scale'])} |")
    return lines


def _efficiency_summary(rows):
    """The plain statement of where MLMC is less efficient than SGD (E4)."""
    ratios = [(r["mlmc_efficiency"] / r["sgd_efficiency"], r) for r in rows if r["j_max"] >= 4]
    lo, hi = min(ratios, key=lambda t: t[0]), max(ratios, key=lambda t: t[0])
    return [
        f"**Where the estimator is less efficient than SGD.** For plain point estimation it "
        f"always is, here: averaging MLMC draws needs {lo[0]:.3g}x "
        f"({lo[1]['problem']}, {lo[1]['levels']}, j_max = {lo[1]['j_max']}) to "
        f"{hi[0]:.3g}x ({hi[1]['problem']}, {hi[1]['levels']}, j_max = {hi[1]['j_max']}) "
        "more stochastic gradients than one EpochSGD run at the top level to reach the same "
        "mean squared error (E4), and its cost and output are heavy-tailed (E3, E5). What it "
        "buys is the *bias* of the largest budget at logarithmic expected cost per draw (E1), "
        "with independent draws that parallelize (E10): that matters only where a nearly "
        "unbiased estimate is consumed by an outer method (MORGRADEST in accelerated "
        "proximal point, Algorithm 6)."]


def _moreau_table(rows):
    lines = ["## E6 MORGRADEST against closed-form Moreau gradients", "",
             "`l1`: f = ||x - a||_1 in d = 4 as a GLM (G = 4), two coordinates in the quadratic "
             "regime and two saturated; `l2 norm (P4)`: f = ||x||_2 with N(0, 0.25 I) noise "
             "(Python path). Bias = ||mean of the estimates - grad f_lam(y)|| +- s.e.; RMSE "
             "over the repetitions; bound = sqrt(32) G / sqrt(T_max) (gradient units). Paper "
             "constants: j_max and the copies derived from (delta, sigma) with c = 32.", "",
             "| function | lambda | j_max | copies | reps | bias | bound | RMSE | delta | "
             "sigma | ||grad|| | gradients / estimate |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['function']} | {r['lam']:g} | {r['j_max']} | {r['n_copies']} | "
                     f"{r['n_reps']} | {_fmt(r['bias'])} +- {_fmt(r['bias_se'], 2)} | "
                     f"{_fmt(r['bias_bound'])} | {_fmt(r['rmse'])} | {_fmt(r['delta'])} | "
                     f"{_fmt(r['sigma'])} | {_fmt(r['grad_norm'])} | "
                     f"{r['gradients_per_estimate']:.4g} |")
    return lines


def _speedup_table(rows, sims):
    lines = ["## E10 parallel speedup of one batch of copies", "",
             f"{rows[0]['n_copies']} copies, d = {rows[0]['d']}, logistic GLM (the "
             "benchmark's data); paper levels at j_max = 12 is the benchmark's configuration "
             "(about 8 gradients per copy: short), epoch levels at j_max = 12 about 174. Best "
             "of the repetitions; 1-minute load average before and after (a 2-core machine "
             "shared with other jobs: speedups mean something only at load < 1.5).", "",
             "| levels | j_max | threads | gradients (largest copy) | time (s) | median (s) | "
             "speedup | load before | load after | bitwise equal to 1 thread |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['levels']} | {r['j_max']} | {r['threads']} | "
                     f"{r['total_gradients']} ({r['max_copy_gradients']}) | {r['time']:.3f} | "
                     f"{r['time_median']:.3f} | {r['speedup']:.2f} | {r['load_before']:.2f} | "
                     f"{r['load_after']:.2f} | {'yes' if r['bitwise_equal'] else 'NO'} |")
    lines += ["", "Ideal speedups (total work / makespan) on the drawn costs, with the kernel's "
              "unit of 16 copies per block: static contiguous chunks, dynamic in order, "
              "longest-first (the kernel's schedule). The largest block bounds all three.", "",
              "| levels | j_max | workers | static | dynamic | longest-first |",
              "|---|---|---|---|---|---|"]
    for s in sims:
        lines.append(f"| {s['levels']} | {s['j_max']} | {s['workers']} | "
                     f"{s['speedup_static']:.2f} | {s['speedup_dynamic']:.2f} | "
                     f"{s['speedup_lpt']:.2f} |")
    return lines


def _write_csv(path, rows, drop=()):
    if not rows:
        return
    fields = [k for k in rows[0] if k not in drop]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _save(plt, fig, path, minor_ticks=True):
    """Fixed margins instead of ``tight_layout`` (half the plotting time on a loaded machine);
    ``minor_ticks=False`` (the smoke grid) drops the minor ticks, whose locators take about
    half of the drawing time of a log-scale panel."""
    if not minor_ticks:
        for ax in fig.axes:
            ax.minorticks_off()
    wide = fig.get_figwidth() > 5
    fig.subplots_adjust(left=0.06 if fig.get_figwidth() > 8 else (0.1 if wide else 0.16),
                        right=0.98, bottom=0.15, top=0.84 if fig.get_figwidth() > 8 else 0.9,
                        wspace=0.3)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _plots(level_rows, tails, moreau_rows, speed_rows, dp_rows, out, log=None,
           minor_ticks=True):
    log = log or (lambda text: None)
    log("importing matplotlib")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plots.")
        return

    def save(fig, path):
        _save(plt, fig, path, minor_ticks)
        log(f"wrote {os.path.basename(path)}")
    keys = sorted({(r["problem"], r["levels"]) for r in level_rows})

    def per_key(fname, draw, ylabel, title):
        fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.2), squeeze=False)
        for ax, key in zip(axes[0], keys):
            sel = [r for r in level_rows if (r["problem"], r["levels"]) == key]
            draw(ax, sel, key)
            ax.set_title(f"{key[0]}, {key[1]} levels", fontsize=9)
            ax.set_xlabel("j_max", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[0][0].set_ylabel(ylabel, fontsize=8)
        axes[0][0].legend(fontsize=6)
        fig.suptitle(title, fontsize=9)
        save(fig, os.path.join(out, fname))

    def bias(ax, sel, key):
        j = [r["j_max"] for r in sel]
        floor = 1e-7
        for name, col, se in (("MLMC", "mlmc_bias", "mlmc_bias_se"),
                              ("EpochSGD(T_max)", "top_bias", "top_bias_se"),
                              ("EpochSGD(E N)", "matched_bias", "matched_bias_se")):
            ax.errorbar(j, [max(r[col], floor) for r in sel], [r[se] for r in sel],
                        marker="o", ms=3, label=name)
        ax.plot(j, [r["bias_bound"] for r in sel], "k:", label="sqrt(32)G/(mu sqrt T)")
        ax.plot(j, [r["mlmc_bias_se"] for r in sel], color="0.6", lw=0.8, label="MLMC s.e.")
        ax.set_yscale("log")
    per_key("mlmc_bias.png", bias, "||mean - x*||", "E1: bias against truncation")

    def variance(ax, sel, key):
        ax.plot([r["j_max"] for r in sel], [r["var"] for r in sel], "o-", ms=3,
                label="Var(x_hat), by j_max")
        lv = sel[-1]["level_var"]
        ls = sorted(lv)
        ax.errorbar(ls, [lv[ell][0] for ell in ls], [lv[ell][1] for ell in ls], fmt="s--",
                    ms=3, label=f"level share 2^l E|x_l-x_(l-1)|^2 (j_max={sel[-1]['j_max']})")
        ax.set_yscale("symlog", linthresh=1e-3)
    per_key("mlmc_variance.png", variance, "(G/mu)^2 units", "E2: variance growth per level")

    fig, axes = plt.subplots(1, 2, figsize=(7, 3.2))
    for key in keys:
        sel = [r for r in level_rows if (r["problem"], r["levels"]) == key]
        axes[0].errorbar([r["j_max"] for r in sel], [r["mean_cost"] for r in sel],
                         [r["cost_se"] for r in sel], marker="o", ms=3, ls="none",
                         label=f"{key[0]}, {key[1]}: measured")
    for lv in sorted({k[1] for k in keys}):
        sel = sorted({r["j_max"] for r in level_rows if r["levels"] == lv})
        from dpsco_core.mlmc import expected_gradients
        axes[0].plot(sel, [expected_gradients(j, lv) for j in sel], "-", lw=0.8,
                     label=f"exact E N, {lv} levels")
    axes[0].set(xlabel="j_max", ylabel="gradients per draw", yscale="log",
                title="E3: expected cost")
    axes[0].legend(fontsize=6)
    for tail in tails:
        name, levels, draws = tail["problem"], tail["levels"], tail["draws"]
        c = np.sort(draws.n_gradients[draws.n_gradients > 0])[::-1]
        axes[1].loglog(c, np.arange(1, c.size + 1) / draws.n_gradients.size, lw=0.8,
                       label=f"{name}, {levels}, j_max={draws.j_max}")
    t = np.logspace(1, 5)
    axes[1].loglog(t, 10.0 / t, "k:", label="1/t slope")
    axes[1].set(xlabel="t (gradients)", ylabel="P(N >= t)", title="E3: cost tail")
    axes[1].legend(fontsize=6, loc="lower left")
    save(fig, os.path.join(out, "mlmc_cost.png"))

    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    for tail in tails:
        name, levels, draws = tail["problem"], tail["levels"], tail["draws"]
        x_star, scale = tail["x_star"], tail["scale"]
        dist = np.sort(np.linalg.norm(draws.samples - x_star, axis=1))[::-1]
        ax.loglog(dist, np.arange(1, dist.size + 1) / dist.size, lw=0.8,
                  label=f"{name}, {levels}, j_max={draws.j_max}")
        ax.axvline(scale, color="0.7", lw=0.6)
    t = np.logspace(-1, 2)
    ax.loglog(t, 0.05 / t ** 2, "k:", label="t^-2 slope")
    ax.legend(fontsize=6, loc="lower left")
    ax.set_xlim(left=1e-2)
    ax.set(xlabel="||x_hat - x*||", ylabel="CCDF", title="E5: output tail (grey: sqrt(T)G/mu)")
    save(fig, os.path.join(out, "mlmc_tail.png"))

    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    sel = [r for r in moreau_rows if r["function"] == "l1"]
    for lam in sorted({r["lam"] for r in sel}):
        s = [r for r in sel if r["lam"] == lam]
        ax.errorbar([r["j_max"] for r in s], [r["bias"] for r in s], [r["bias_se"] for r in s],
                    marker="o", ms=3, label=f"bias, lambda={lam:g}")
        ax.plot([r["j_max"] for r in s], [r["rmse"] for r in s], "x--", ms=4,
                label=f"RMSE, lambda={lam:g}")
    if sel:
        js = sorted({r["j_max"] for r in sel})
        ax.plot(js, [math.sqrt(32) * 4 / math.sqrt(16 * (2 ** j - 1)) for j in js], "k:",
                label="bias bound")
    ax.set(yscale="log", xlabel="j_max", ylabel="error in grad f_lambda(y)",
           title="E6: MORGRADEST, f = ||x - a||_1")
    ax.legend(fontsize=6)
    save(fig, os.path.join(out, "mlmc_moreau.png"))

    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    for key in sorted({(r["levels"], r["j_max"]) for r in speed_rows}):
        sel = [r for r in speed_rows if (r["levels"], r["j_max"]) == key]
        ax.plot([r["threads"] for r in sel], [r["speedup"] for r in sel], "o-",
                label=f"{key[0]} levels, j_max={key[1]}")
    ts = sorted({r["threads"] for r in speed_rows})
    ax.plot(ts, ts, "k:", label="linear")
    load = max(r["load_before"] for r in speed_rows)
    ax.set(xlabel="threads", ylabel="speedup over 1 thread",
           title=f"E10: batch speedup (load up to {load:.1f})")
    ax.legend(fontsize=7)
    save(fig, os.path.join(out, "mlmc_speedup.png"))

    _plot_dp(plt, dp_rows, out, minor_ticks)
    log("wrote mlmc_dp.png")


def _plot_dp(plt, dp_rows, out, minor_ticks=True):
    summ = _dp_summary(dp_rows)
    finite = [(n, e) for (n, e, _) in summ if math.isfinite(e)]
    # the n sweep is at the epsilon with the most n's, the epsilon sweep at the n with most eps
    eps_main = max({e for _, e in finite}, key=lambda e: len({n for n, x in finite if x == e}))
    n_eps = max({n for n, _ in finite}, key=lambda n: len({e for x, e in finite if x == n}))
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2))
    for method in DP_METHODS:
        for eps, style, tag in ((eps_main, "-", ""), (math.inf, ":", ", no noise")):
            pts = sorted((n, v) for (n, e, m), v in summ.items() if m == method and e == eps)
            if pts:
                axes[0].errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                                 [p[1][1] for p in pts], marker="o", ms=3, ls=style,
                                 label=method + tag)
        pts = sorted((e, v) for (n, e, m), v in summ.items()
                     if m == method and n == n_eps and math.isfinite(e))
        axes[1].errorbar([p[0] for p in pts], [p[1][0] for p in pts], [p[1][1] for p in pts],
                         marker="o", ms=3, label=method)
    for ax in axes:
        ax.axhline(dp_rows[0]["zero_excess"], color="0.5", lw=0.8, ls="--", label="x = 0")
        ax.set(xscale="log", yscale="log", ylabel="excess population risk")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.legend(fontsize=6)
    axes[0].set(xlabel="n", title=f"E9: epsilon = {eps_main:g} (dotted: no noise)")
    axes[1].set(xlabel="epsilon", title=f"E9: n = {n_eps}")
    _save(plt, fig, os.path.join(out, "mlmc_dp.png"), minor_ticks)


def run(out, kind="default", threads=None, stream=None):
    """Run the ``kind`` grid of :data:`CONFIGS` with ``threads`` threads (None: all); write
    every output into ``out`` and print the Markdown. Returns the row lists."""
    from dpsco_core._config import effective_n_threads
    cfg = CONFIGS[kind]
    threads = effective_n_threads(threads)
    os.makedirs(out, exist_ok=True)
    print(f"MLMC optimum estimator (paper 001), {kind} grid, {threads} thread(s), load "
          f"{os.getloadavg()[0]:.2f}; outputs in {out}")
    start = time.perf_counter()
    problems = [kink_problem(), median_problem()]
    schemes = [("epoch", cfg["epoch_j"]), ("paper", cfg["paper_j"])]
    n_tasks = (len(problems) * sum(len(j) for _, j in schemes)
               + len(cfg["moreau_lams"]) * len(cfg["moreau_j"]) + len(cfg["moreau_paper"]) + 2
               + threads * len(cfg["speed_configs"])
               + 2 * len(cfg["dp"]["ns"]) + len(cfg["dp"]["epsilons"]) - 1)
    level_rows, tails = [], []
    phases = Phases(3, stream)
    phases.start(f"sweeps: {n_tasks} tasks (E1 to E10)")
    with Progress(n_tasks, "mlmc", stream=stream) as bar:
        for problem in problems:
            for levels, j_maxes in schemes:
                rows, last = level_sweep(problem, levels, j_maxes, cfg["n_copies"],
                                         cfg["n_top"], threads, bar)
                level_rows += rows
                tails.append({"problem": problem.name, "levels": levels, "draws": last,
                              "x_star": problem.x_star,
                              "scale": rows[-1]["truncation_scale"]})
        moreau_rows = moreau_sweep(cfg["moreau_lams"], cfg["moreau_j"], cfg["moreau_copies"],
                                   cfg["moreau_reps"], cfg["moreau_paper"],
                                   cfg["norm_copies"], threads, bar)
        speed_rows, sims = speedup(list(range(1, threads + 1)), cfg["speed_configs"],
                                   n_copies=cfg["speed_copies"], reps=cfg["threads_reps"],
                                   progress=bar)
        dp_rows, dp_failures = run_dp(cfg["dp"], threads, bar)
    apps = cfg["apps"]
    phases.start("E7, E8, min-max, Algorithm 7 and MORGRADEST at the paper's constants")
    from . import mlmc_applications as ma
    e7 = ma.moreau_experiment(apps["e7"], apps["seeds"])
    e8 = ma.composite_experiment(apps["e8"], apps["seeds"])
    mm = ma.minmax_experiment(apps["minmax"], apps["seeds"][:1], max_iter=apps["minmax_iter"])
    a7 = ma.exact_experiment(apps["alg7_copies"])
    paper_rows = [moreau_paper_constants(lam, delta, sigma, d, threads)
                  for lam, delta, sigma, d in apps["paper_constants"]]
    phases.start("tables and CSV files")
    lines = [f"# MLMC optimum estimator (paper 001): {kind} grid", "",
             f"Copies per MLMC point: {cfg['n_copies']}; EpochSGD runs per point: "
             f"{cfg['n_top']}; {threads} thread(s).", ""]
    lines += _efficiency_summary(level_rows) + [""]
    lines += _levels_tables(level_rows) + [""] + _moreau_table(moreau_rows) + [""]
    lines += _dp_table(dp_rows, dp_failures) + [""]
    lines += _speedup_table(speed_rows, sims) + [""]
    lines += _paper_constants_table(paper_rows) + [""]
    lines += ma.applications_tables(e7, e8, mm, a7)
    lines += ["", f"Total time {time.perf_counter() - start:.0f} s."]
    text = "\n".join(lines)
    with open(os.path.join(out, "mlmc.md"), "w") as fh:
        fh.write(text + "\n")
    _write_csv(os.path.join(out, "mlmc_levels.csv"), level_rows, drop=("level_var",))
    _write_csv(os.path.join(out, "mlmc_moreau.csv"), moreau_rows)
    _write_csv(os.path.join(out, "mlmc_speedup.csv"), speed_rows)
    _write_csv(os.path.join(out, "mlmc_dp.csv"), dp_rows)
    app_rows = e7 + e8 + mm + a7
    keys = list(dict.fromkeys(k for r in app_rows for k in r))      # the union, in order
    _write_csv(os.path.join(out, "mlmc_applications.csv"),
               [{k: r.get(k, "") for k in keys} for r in app_rows])
    _write_csv(os.path.join(out, "mlmc_paper_constants.csv"), paper_rows)
    phases.start("plots")
    _plots(level_rows, tails, moreau_rows, speed_rows, dp_rows, out, log=phases.step,
           minor_ticks=cfg.get("minor_ticks", True))
    print(text)
    return level_rows, moreau_rows, speed_rows, dp_rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce mlmc",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="larger grid (~20 min on 2 cores)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny grid (seconds) that exercises every output, for tests: "
                             "its numbers are not the paper's")
    parser.add_argument("--out", default="mlmc_results", help="output folder")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads (default: all); E10 times 1..N")
    args = parse_experiment_args(parser, argv)    # checks --threads, --out
    kind = "smoke" if args.smoke else ("full" if args.full else "default")
    run(args.out, kind, args.threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
