r"""ReSQue evaluation: ``python -m dpsco_core reproduce resque-parallel [--full] [--out DIR]``
(paper 000 has no experiments; this is note 000, section 8, items 1-2).

1. **Estimator** (:func:`estimator_table`). For :math:`\|v\|/\rho` from 0 to 2 (d = 20,
   N = 200,000 samples, one stream): the bias of the ReSQue estimate of the smoothed
   absolute-regression gradient against its closed form (in standard errors), the second
   moment :math:`E\|\mathrm{ReSQue}\|^2` of a linear f (:math:`\|g\| \equiv L`, where the exact
   value is :math:`L^2 e^{\|v\|^2/\rho^2}`) and the effective sample size fraction
   :math:`(\sum w)^2/(N\sum w^2)` against :math:`e^{-\|v\|^2/\rho^2}`.

2. **Parallel SCO** (:func:`sco_rows`) on the problems of :mod:`.resque_problems` (Nemirovski's
   max of linear functions with a noisy oracle, absolute-loss regression, a geometric median;
   known optimum), for a grid of ε and d. "Reaching ε" means :math:`f(x) - f^* \le \varepsilon`
   for the method's output; every number is the median over the seeds of the per-seed value,
   and a cell counts as reached only if every seed reaches.

   - ``resque``: :func:`~dpsco_core.resque.parallel_sco.parallel_sco` (Theorem 2: BallAccel with the
     AC-SA ball oracle, r = ρ = ε/(√d L), the ball and proximal batches of an iteration in one
     round), stopped at the first iteration whose output reaches ε
     (the first k iterations do not depend on the iteration cap, so this is the smallest cap
     that reaches ε). Reported: query depth (rounds), total queries and computational depth
     at that iteration. The λ grid is {1, 1/4} (default) or {1, 1/2, 1/4} (--full).
     ``accuracy_scale`` = 3000 multiplies Proposition 2's φ, δ, σ² (the
     theory needs 1; outside it): every ball-oracle call is then ONE AC-SA stage (K = 1, the
     accuracy floor λr²/2 of Algorithm 2) with about 96/c² queries, so total queries grow like
     the depth instead of ε^-2 (100x fewer queries than at 300 for at most 30% more depth in
     a trial at d = 64). The constant line search λ = c L/r is tuned over c in
     ``lambda_factors``: c = 1 keeps the prox step inside the ball (the movement condition of
     BallAccel); c < 1 takes longer prox steps and is outside that guarantee.
   - ``minibatch``: minibatch SGD with the SAME total queries Q as resque: the smallest number
     of rounds D (grid ratio √2) with batch ⌊Q/D⌋ that reaches ε, step scale tuned per D.
   - ``smoothing``: randomized smoothing (DBW12: AC-SA on :math:`\hat f_\rho`, same ρ) with
     min(Q, 2^17) total queries (more only lowers its noise), smallest D up to twice the
     larger of minibatch's and ReSQue's depth by bisection of the grid; step scale c in {1, 2, 4} times Lan's
     γ = min(1/(2β), ...) tuned on the first seed.
   - ``sgd``: SGD (batch 1): the smallest number of steps (= queries = rounds) reaching ε.

   Tuning protocol, the same for every method: its step constant is tuned per cell over up to
   4 times its theory value (ReSQue: λ from L/r down to L/(4r); randomized smoothing: 1 to 4
   times Lan's step; minibatch SGD and SGD: 1/4 to 4 times R/(L√D)). Larger factors take
   even fewer rounds on these instances, whose optimum lies on the ball's boundary (a step
   of any large size in the right direction is projected onto it): at d = 64, ε = 0.05,
   randomized smoothing with 16 and 64 times Lan's step needs 32 and 16 rounds, ReSQue with
   λ = L/(8r) and L/(16r) 41 and 40; minibatch SGD does not improve beyond 2-4.

   The depth ratio minibatch / resque is the issue's target in the regime
   :math:`\varepsilon \in [d^{-1}, d^{-1/4}]` (column ``in_regime``).

3. **Proximal oracles** (:mod:`.resque_parallel_prox`): the stand-in and Proposition 2's
   multilevel estimator compared in the same runs, next to Theorem 2's depth and work.

Outputs in ``--out``: ``resque.csv`` (one row per estimator ratio and per method and cell),
``resque.md`` (tables and fitted slopes next to Table I) and, with matplotlib,
``estimator.png`` and ``depth.png``. The default grid takes a few minutes on 2 cores;
``--full`` (d up to 256, smaller ε, the benign problems at every d) about 13 (at load 4 to 5).
"""

import argparse
import csv
import math
import pathlib
import time
import warnings

import numpy as np

from ..resque.estimator import (ReSQueWarning, draw_resque_samples, resque_estimate,
                                resque_log_weights)
from ..resque.parallel_sco import parallel_sco
from ..resque.smoothing import smoothed_absolute
from . import resque_baselines as baselines
from ._progress import Progress
from .resque_problems import PROBLEMS
from ._cli import parse_experiment_args

__all__ = ["main", "estimator_table", "sco_rows", "resque_depth", "best_lambda_factor",
           "minibatch_depth", "baseline_depths", "in_regime", "GRIDS"]

#: ε grid, dimensions, seeds and tuning grids of the default and the --full run.
GRIDS = {
    "default": {
        "cells": [("nemirovski", d, eps) for d in (16, 64) for eps in (0.2, 0.1, 0.05, 0.025)]
        + [(p, 64, eps) for p in ("absolute", "median") for eps in (0.1, 0.05)],
        "seeds": (0, 1, 2), "lambda_factors": (1.0, 0.25), "smoothing_max_d": 64,
    },
    "full": {
        "cells": [("nemirovski", d, eps) for d in (16, 64, 256)
                  for eps in (0.2, 0.1, 0.05, 0.025) + ((0.0125,) if d <= 64 else ())]
        + [(p, d, eps) for p in ("absolute", "median") for d in (16, 64, 256)
           for eps in (0.1, 0.05, 0.025)],
        "seeds": (0, 1, 2), "lambda_factors": (1.0, 0.5, 0.25), "smoothing_max_d": 256,
    },
    # seconds: for the smoke test of the outputs, not for conclusions
    "smoke": {
        "cells": [("nemirovski", 16, eps) for eps in (0.2, 0.1, 0.05)] + [("median", 16, 0.1)],
        "seeds": (0,), "lambda_factors": (1.0,), "smoothing_max_d": 16,
        "estimator_samples": 20_000,
    },
}
ACCURACY_SCALE = 3000.0
SGD_STEPS = (0.25, 0.5, 1.0, 2.0, 4.0)
SMOOTHING_STEPS = (1.0, 2.0, 4.0)
#: randomized smoothing runs with min(Q, this) queries (a larger batch only lowers its noise)
SMOOTHING_MAX_QUERIES = 1 << 17
MAX_ITER = 3000


# ----------------------------------------------------------------------------- estimator

def estimator_table(d=20, n_samples=200_000, ratios=(0.0, 0.25, 0.5, 1.0, 1.5, 2.0), seed=0):
    """Rows of part 1 (module docstring): bias z-score, second moment, ESS fraction."""
    rs = np.random.default_rng(seed)
    A = rs.standard_normal((10, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    b = rs.standard_normal(10)
    rho = 0.1
    center = 0.3 * rs.standard_normal(d) / math.sqrt(d)
    zeta = draw_resque_samples(n_samples, d, random_state=seed)
    # absolute-regression subgradients at the query points (shared by every ratio)
    G = np.sign((center + rho * zeta) @ A.T - b) @ A / A.shape[0]
    direction = rs.standard_normal(d)
    direction /= np.linalg.norm(direction)
    rows = []
    for q in ratios:
        x = center + q * rho * direction
        with warnings.catch_warnings():          # ||v|| > rho on purpose
            warnings.simplefilter("ignore", ReSQueWarning)
            w = np.exp(resque_log_weights(x, center, rho, zeta))
            est = resque_estimate(x, center, rho, zeta, G)
        _, truth = smoothed_absolute(x, A, b, rho)
        se = (w[:, None] * G).std(axis=0) / math.sqrt(n_samples)
        w2 = w ** 2                         # linear f, ||g|| = L = 1: ||ReSQue||^2 = w^2
        rows.append({"part": "estimator", "v_over_rho": q, "n_samples": n_samples,
                     "bias_max_z": float(np.max(np.abs(est - truth) / se)),
                     "second_moment": float(w2.mean()),
                     "second_moment_se": float(w2.std() / math.sqrt(n_samples)),
                     "predicted_second_moment": math.exp(q * q),
                     "ess_fraction": float(w.sum() ** 2 / (n_samples * w2.sum())),
                     "predicted_ess_fraction": math.exp(-q * q)})
    return rows


# ---------------------------------------------------------------------------------- SCO

def _median_or_nan(values):
    return float(np.median(values)) if values else float("nan")


_NOT_REACHED = {"depth": float("nan"), "queries": float("nan"), "comp_depth": float("nan"),
                "error": float("nan"), "param": float("nan")}


def resque_depth(problem, epsilon, seeds, lambda_factors, inner="ac_sa"):
    """ReSQue's depth to reach ε for each λ factor c: {c: dict of the medians over the seeds
    of the counters at the first iteration reaching ε} (depth NaN unless every seed
    reaches)."""
    d = problem.n_features
    out = {}
    for c in lambda_factors:
        hits = []
        for seed in seeds:
            res = parallel_sco(problem.grad_batch, np.zeros(d), lipschitz=problem.lipschitz,
                               radius_bound=problem.radius, epsilon=epsilon, inner=inner,
                               accuracy_scale=ACCURACY_SCALE, lambda_factor=c,
                               max_iter=MAX_ITER, max_queries=10 ** 8, random_state=seed,
                               callback=lambda k, x: problem.excess(x) <= epsilon)
            err = problem.excess(res.x)
            if err > epsilon:
                break
            hits.append((*res.trace[-1], err))
        if len(hits) < len(seeds):
            out[c] = dict(_NOT_REACHED, param=c)
            continue
        h = np.array(hits, dtype=np.float64)
        out[c] = {"depth": float(np.median(h[:, 0])), "queries": float(np.median(h[:, 1])),
                  "comp_depth": float(np.median(h[:, 2])), "error": float(np.median(h[:, 3])),
                  "param": c}
    return out


def best_lambda_factor(per_factor):
    """The entry of :func:`resque_depth` with the smallest depth (NaN entries last)."""
    return min(per_factor.values(),
               key=lambda r: r["depth"] if math.isfinite(r["depth"]) else math.inf)


def _summarize(hits, n_seeds, queries_of):
    if len(hits) < n_seeds or any(h is None for h in hits):
        return dict(_NOT_REACHED)
    D = [h[0] for h in hits]
    return {"depth": _median_or_nan(D), "queries": _median_or_nan([queries_of(h) for h in hits]),
            "comp_depth": _median_or_nan(D), "error": _median_or_nan([h[2] for h in hits]),
            "param": _median_or_nan([h[1] for h in hits])}


def minibatch_depth(problem, epsilon, total_queries, seeds):
    """Minibatch SGD's depth at ``total_queries`` (median over the seeds)."""
    Q = int(total_queries)
    t = time.perf_counter()
    hits = [baselines.min_rounds(
        lambda D, b, c, s: baselines.minibatch_sgd(problem, D, b, c, s), problem, epsilon, Q,
        SGD_STEPS, 1 << 14, seed) for seed in seeds]
    out = _summarize(hits, len(seeds), lambda h: (Q // h[0]) * h[0])
    out["seconds"] = time.perf_counter() - t
    return out


def baseline_depths(problem, epsilon, total_queries, seeds, smoothing=True, resque_depth=0):
    """Depths of minibatch SGD and randomized smoothing at ``total_queries``, and of SGD.
    Randomized smoothing searches up to twice the larger of minibatch's and ``resque_depth``
    rounds (beyond, it is not competitive: "not reached")."""
    Q = int(total_queries)
    out = {"minibatch": minibatch_depth(problem, epsilon, Q, seeds)}
    t = time.perf_counter()
    hits = [baselines.min_rounds(
        lambda D, b, c, s: baselines.minibatch_sgd(problem, D, 1, c, s), problem, epsilon,
        1 << 17, SGD_STEPS, 1 << 17, seed) for seed in seeds]
    out["sgd"] = _summarize(hits, len(seeds), lambda h: h[0])
    out["sgd"]["seconds"] = time.perf_counter() - t
    if smoothing:
        rho = epsilon / (math.sqrt(problem.n_features) * problem.lipschitz)
        q_rs = min(Q, SMOOTHING_MAX_QUERIES)
        mb = out["minibatch"]["depth"]
        cap = 2 * int(max(mb if math.isfinite(mb) else 2048, resque_depth))
        t = time.perf_counter()
        hits = baselines.tuned_min_rounds(
            lambda D, b, c, s: baselines.randomized_smoothing(problem, D, b, rho, c, s),
            problem, epsilon, q_rs, SMOOTHING_STEPS, cap, list(seeds))
        out["smoothing"] = _summarize(hits, len(seeds), lambda h: (q_rs // h[0]) * h[0])
        out["smoothing"]["seconds"] = time.perf_counter() - t
    return out


def in_regime(d, epsilon):
    """ε in [1/d, d^(-1/4)], the regime of Table I where Theorems 1-2 beat SGD's depth."""
    return 1.0 / d <= epsilon <= d ** -0.25


def sco_rows(grid, progress=True):
    """Rows of part 2 for ``GRIDS[grid]``: one per (problem, d, ε, method)."""
    spec = GRIDS[grid]
    rows, problems = [], {}
    cells = spec["cells"]
    bar = Progress(len(cells), "resque-parallel SCO") if progress else None
    if bar is not None:
        bar.__enter__()
    try:
        for name, d, eps in cells:
            if (name, d) not in problems:
                problems[name, d] = PROBLEMS[name](d, random_state=0)
            problem = problems[name, d]
            gap = problem.excess(np.zeros(d))
            base = {"part": "sco", "problem": name, "d": d, "epsilon": eps,
                    "in_regime": in_regime(d, eps), "initial_gap": gap}
            if eps > 0.75 * gap:       # the start is (nearly) eps-optimal: nothing to measure
                if bar is not None:
                    bar.advance()
                continue
            t = time.perf_counter()
            per_factor = resque_depth(problem, eps, spec["seeds"], spec["lambda_factors"])
            res = dict(best_lambda_factor(per_factor), seconds=time.perf_counter() - t)
            rows.append({**base, "method": "resque", **res})
            if 1.0 in per_factor:
                # the factor inside BallAccel's movement guarantee, with its own comparison
                theory = dict(per_factor[1.0])
                if math.isfinite(theory["queries"]):
                    theory["minibatch_depth"] = minibatch_depth(problem, eps, theory["queries"],
                                                                spec["seeds"])["depth"]
                rows.append({**base, "method": "resque_c1", **theory})
            if math.isfinite(res["queries"]):
                other = baseline_depths(problem, eps, res["queries"], spec["seeds"],
                                        smoothing=d <= spec["smoothing_max_d"],
                                        resque_depth=res["depth"])
                for method, r in other.items():
                    rows.append({**base, "method": method, **r})
            if bar is not None:
                bar.advance()
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    return rows


# --------------------------------------------------------------------------------- main

def _write_csv(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None):
    from .resque_parallel_prox import prox_markdown, prox_rows
    from .resque_report import markdown, plots, slope_rows

    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce resque-parallel",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="resque-out", help="output directory")
    parser.add_argument("--full", action="store_true", help="the issue's grid (~13 min)")
    parser.add_argument("--smoke", action="store_true", help="a seconds-long grid (tests)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parse_experiment_args(parser, argv)    # checks --threads, --out
    grid = "full" if args.full else "smoke" if args.smoke else "default"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    est = estimator_table(n_samples=GRIDS[grid].get("estimator_samples", 200_000))
    sco = sco_rows(grid, progress=not args.quiet)
    slopes = slope_rows(sco)
    prox = prox_rows(grid)
    _write_csv(out / "resque.csv", est + sco + slopes + prox)
    text = "\n".join([markdown(est, sco, slopes, grid=grid, seconds=time.perf_counter() - start),
                      *prox_markdown(prox)])
    (out / "resque.md").write_text(text)
    plots(est, sco, slopes, out)
    print(text)
    return 0
