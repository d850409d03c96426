"""Reproduction for paper 004 (l1 geometry): excess population loss against d, n and epsilon.

``python -m dpsco_core reproduce l1 [--full] [--out DIR] [--threads N] [--only SWEEP ...]``.

Problem (note 004, section 7.1 A): the Rademacher LASSO over the unit l1 ball, features
``a ~ Unif{-1, +1}^d``, ``x_true`` 5-sparse with ``||x_true||_1 = 0.9`` (interior, so it is the
minimizer), ``y = <a, x_true> + Unif[-0.5, 0.5]``, loss ``(<a, x> - y)^2 / 2``; the excess
population loss of x is exactly ``||x - x_true||_2^2 / 2``. The data are a
:class:`~dpsco_core.datasets.RademacherLassoStream` at every d: rows are generated from
per-row counter-based streams and fed to the solvers as packed sign bits (n = d = 1e5 is 80
GB as floats, 1.25 GB packed, kept in memory for the runs of one seed).

Methods, all (epsilon, delta = n^-1.1)-DP and single-pass:

* ``alg3``: Algorithm 3 (dyadic variance-reduced Frank-Wolfe) with shuffling (Theorem 7,
  strict replace-one ledger);
* ``dp_sgd_proj``: DP-SGD with Euclidean projection onto the l1 ball, one epoch, expected
  batch 256, Poisson sampling, RDP accounting (add/remove-one);
* ``alg2``: Algorithm 2 (localized noisy mirror descent, "parallel" budget schedule, the full
  T_i = n_i^2 / b_i^2 steps of Theorem 4);
* ``zero``: the trivial output x = 0 (excess ``||x_true||^2 / 2``).

Tuning (the same protocol for every method; non-private, as in the DP-CD reproduction: the
selection uses the exact excess loss and is not covered by the privacy guarantee). Each
method has a 3 x 3 grid: a clip factor kappa in ``CLIP_FACTORS`` times its theoretical clip
(``L = 2 D + s = 2.5`` is the l-infinity bound of the gradient on the ball: Algorithms 2 and 3
clip at ``kappa L``, DP-SGD at ``kappa L sqrt(d)``, the l2 bound of such a gradient), and one
parameter of its own step rule (``SECOND``): Algorithm 3's number of phases T as an offset
-1, 0, +1 from its schedule's T (:func:`alg3_phases`; its steps 2/(k+1) are fixed by the
theory), DP-SGD's step as a multiple of ``D / (G sqrt(K))``,
Algorithm 2's ``reg_constant`` (a multiple of Theorem 4's eta). At every grid point the
configuration with the lowest mean excess over the tuning seeds (disjoint from the evaluation
seeds) is run on the evaluation seeds. A clip factor at the low end of the grid is harmless:
once most per-sample derivatives are clipped, a lower clip scales the signal and the noise
alike (Algorithm 3's selection probabilities do not change; for DP-SGD it acts as a smaller
step).

Sweeps: ``d`` (the issue's target: n = 1e5, epsilon = 1, d = 100 .. 100,000; alg3 against
dp_sgd_proj), ``crossover`` (Algorithm 2 against 3 along d at n = 1e4, compared with
``d ~ (n epsilon)^(2/3)``), ``n`` and ``epsilon`` (fitted log-log slopes), and ``problems``:
problems B, C and D of note 004 section 7.1 at n = 1e4, d in {100, 1000} ({10, 100, 1000}
with ``--full``), module :mod:`.l1_problems`:

* B ``logistic``: logistic regression over the unit l1 ball, labels from
  ``sigmoid(<a, x_true>)`` (well-specified), ``L = 1``; methods alg3, ``ttz``, dp_sgd_proj,
  alg2, zero;
* C ``absolute``: median regression ``|<a, x> - y|`` on problem A's data (non-smooth, the
  target of Algorithm 2), ``L = 1``; methods alg2, ttz, dp_sgd_proj, zero (Algorithm 3 needs
  smooth losses);
* D ``simplex``: the LASSO with ``x_true`` in the simplex ``{x >= 0, sum x = 1}`` over the
  simplex (Algorithm 3's general-polytope path), ``L = 2.5``; methods alg3 and ttz with
  ``domain="simplex"``, and ``uniform``, x = 1/d.

Excess population loss: D exactly ``||x - x_true||^2 / 2``; B and C on 50,000 held-out
feature vectors per (d, seed), the same for every method, with the labels integrated in closed
form given the features (B: mean KL divergence between the label laws at x_true and x; C:
``E|t - xi| - E|xi|``, a Huber function of ``t = <a, x - x_true>``). ``ttz`` is TTZ15's
private Frank-Wolfe (:func:`~dpsco_core.solvers.frank_wolfe.ttz_frank_wolfe`: full-batch
gradients, so n gradients per iteration and not single-pass, report-noisy-max,
replace-one, RDP over the iterations; clip ``kappa L`` as Algorithm 3), tuned over its number of
iterations ``{1/64, 1/16, 1/4} x`` its default ``(n epsilon)^(2/3)`` (a first run with
``{1/16, 1/4, 1}`` chose 1/16 everywhere, the edge). Every problem is an
:class:`L1Problem` (data maker, L, domain, trivial baseline) passed to the same runner and
tuning as problem A.

Sweep ``fidelity`` (issue 22; problem A at n = 4e3, d = 100 by default, n = 1e4 and
d in {100, 1000} with ``--full``): the paper's own versions beside the library's defaults, each
with its theorem's rate (O(.) constants set to 1, :func:`theorem_bound`): ``alg3`` (Theorem
7) and ``alg3_pure`` (pure epsilon-DP, Theorem 6), ``alg2`` (parallel budget) and
``alg2_paper`` (the paper's epsilon/2^i, Theorem 4), ``alg6`` (Algorithm 6 in l_p geometry,
p = 1.5, over X = the unit l_p ball: every phase on X cap its localization ball, Theorem 13),
and the strongly convex reduction of section 5 around Algorithm 3 (``sc_alg3``, Theorem 9;
rounds after the first on the l1 ball around the previous output clipped to X, see
:func:`~dpsco_core.solvers.mirror_descent.strongly_convex_reduction`) and Algorithm 2
(``sc_alg2``, Theorem 8) with the LASSO's strong convexity 1/d in l1. The new methods tune only the clip factor (their second
parameter is fixed at the middle of the matching grid).

Writes ``l1.csv``, ``l1.md`` and PNG plots (for the sweeps of problem A).
"""

import argparse
import csv
import math
import os
import time
import warnings

from typing import Callable, NamedTuple

import numpy as np

from ._cli import parse_experiment_args

__all__ = ["main", "grid", "run_sweeps", "report", "fit_slope", "crossover", "alg3_phases",
           "L1Problem", "LASSO", "CLIP_FACTORS", "SECOND", "FIDELITY", "theorem_bound"]

NOISE = 0.5
LIPSCHITZ = 2.0 + NOISE         # |<a, x> - y| <= 2D + s on the ball; ||grad f||_inf <= L
CLIP_FACTORS = (0.5, 0.125, 0.03125)
SECOND = {"alg3": ("phase_offset", (-1, 0, 1)),
          "dp_sgd_proj": ("step_factor", (1.0, 8.0, 64.0)),
          "alg2": ("reg_constant", (4.0, 16.0, 64.0)),
          "ttz": ("iter_factor", (1 / 64, 1 / 16, 1 / 4)),
          # the sweep "fidelity" (the paper's own versions; one value of the second
          # parameter, the middle of the matching method's grid, to keep the runtime modest)
          "alg3_pure": ("phase_offset", (0,)),
          "alg2_paper": ("reg_constant", (16.0,)),
          "alg6": ("reg_constant", (16.0,)),
          "sc_alg3": ("rate_constant", (1.0,)),
          "sc_alg2": ("rate_constant", (1.0,))}
FIDELITY = ("alg3", "alg3_pure", "alg2", "alg2_paper", "alg6", "sc_alg3", "sc_alg2")
LP = 1.5                        # the l_p geometry of Algorithm 6 in the sweep "fidelity"
SC_REG = 16.0                   # Algorithm 2's reg_constant inside the reduction
SPARSITY = 5
TARGET_D_FROM = 100             # the target: growth from d = 100 to d = 100,000


class L1Problem(NamedTuple):
    """One problem of the reproduction.

    ``make(n, d, seed)`` returns the data: a sign-row stream (``sign_rows``, ``n_words``,
    ``loss``; what ``vr_frank_wolfe`` and ``projected_dp_sgd_l1`` take) with ``rows`` (the
    dense rows, or ``dense()``, a cached ``Problem``, for the full-batch solvers) and
    ``excess_loss(x)``. ``lipschitz``: the l-infinity bound L of a per-sample gradient on the
    domain (the clips are multiples of it); ``domain``: "l1" (unit ball) or "simplex";
    ``baseline``: the trivial output, "zero" (x = 0) or "uniform" (x = 1/d).
    """
    make: Callable
    lipschitz: float = LIPSCHITZ
    domain: str = "l1"
    baseline: str = "zero"


def _dense(stream):
    """The data as a dense ``Problem`` (for Algorithm 2 and TTZ, which take no stream)."""
    if hasattr(stream, "dense"):
        return stream.dense()
    import dpsco_core as dp
    return dp.Problem(*stream.rows(np.arange(stream.n_samples)), loss=stream.loss)


def _ttz_iters(n, epsilon, factor):
    """A multiple of ttz_frank_wolfe's default n_iter, ceil((n epsilon)^(2/3)) capped at 2000."""
    return max(1, int(round(factor * min(2000, math.ceil((n * epsilon) ** (2.0 / 3.0))))))


def _run(method, stream, epsilon, kappa, second, seed, n_threads=None, problem=None):
    """One run of ``method`` on ``stream`` (data of ``problem``, default :data:`LASSO`);
    returns the output x."""
    from dpsco_core.solvers.frank_wolfe import (projected_dp_sgd_l1, ttz_frank_wolfe,
                                                vr_frank_wolfe)
    from dpsco_core.solvers.mirror_descent import localized_mirror_descent
    problem = LASSO if problem is None else problem
    n, d = stream.n_samples, stream.n_features
    delta = 1.0 / n ** 1.1
    lip = kappa * problem.lipschitz
    if method == "alg3":
        return vr_frank_wolfe(stream, epsilon=epsilon, delta=delta, lipschitz=lip,
                              domain=problem.domain,
                              n_phases=alg3_phases(n, d, epsilon, kappa, second,
                                                   lipschitz=problem.lipschitz,
                                                   n_vertices=_vertices(problem, d)),
                              random_state=seed, record_history=False,
                              n_threads=n_threads).coef
    if method == "ttz":
        return ttz_frank_wolfe(_dense(stream), epsilon=epsilon, delta=delta, lipschitz=lip,
                               domain=problem.domain, n_iter=_ttz_iters(n, epsilon, second),
                               random_state=seed, n_threads=n_threads).coef
    if problem.domain != "l1":
        raise ValueError(f"{method} runs over the l1 ball only; got domain {problem.domain!r}.")
    if method == "dp_sgd_proj":
        clip = lip * math.sqrt(d)
        return projected_dp_sgd_l1(stream, epsilon=epsilon, delta=delta, clip=clip, epochs=1,
                                   batch_size=BATCH,
                                   step=second * _dp_sgd_default_step(n, d, epsilon, delta, clip),
                                   random_state=seed, n_threads=n_threads).coef
    if method in ("alg2", "alg2_paper"):
        schedule = "paper" if method == "alg2_paper" else "parallel"
        return localized_mirror_descent(_dense(stream), epsilon=epsilon, delta=delta,
                                        lipschitz=lip, budget_schedule=schedule,
                                        reg_constant=second, random_state=seed).coef
    if method == "alg3_pure":
        return vr_frank_wolfe(stream, epsilon=epsilon, lipschitz=lip, domain=problem.domain,
                              n_phases=alg3_phases(n, d, epsilon, kappa, second,
                                                   lipschitz=problem.lipschitz,
                                                   n_vertices=_vertices(problem, d), pure=True),
                              random_state=seed, record_history=False,
                              n_threads=n_threads).coef
    if method == "alg6":
        # Algorithm 6 over the unit l_p ball (it contains the l1 ball and x_true); L is the
        # dual (q-norm) bound, ||g||_q <= d^(1/q) ||g||_inf
        q = LP / (LP - 1.0)
        return localized_mirror_descent(_dense(stream), epsilon=epsilon, delta=delta,
                                        lipschitz=lip * d ** (1.0 / q), geometry=LP,
                                        budget_schedule="parallel", reg_constant=second,
                                        random_state=seed).coef
    if method in ("sc_alg3", "sc_alg2"):
        # Theorems 8 and 9: the LASSO's F = ||x - x_true||_2^2 / 2 + c is (1/d)-strongly
        # convex in l1 (||u||_2^2 >= ||u||_1^2 / d)
        from dpsco_core.solvers.mirror_descent import strongly_convex_reduction
        kw = (dict(solver=vr_frank_wolfe) if method == "sc_alg3" else
              dict(reg_constant=SC_REG, budget_schedule="parallel"))
        return strongly_convex_reduction(_dense(stream), strong_convexity=1.0 / d,
                                         rate_constant=second, epsilon=epsilon, delta=delta,
                                         lipschitz=lip, random_state=seed, **kw).coef
    raise ValueError(f"unknown method {method!r}")


def _vertices(problem, d):
    return 2 * d if problem.domain == "l1" else d


BATCH = 256
_SIGMA: dict = {}


def alg3_phases(n, d, epsilon, kappa, offset, *, lipschitz=LIPSCHITZ, n_vertices=None,
                pure=False):
    """Algorithm 3's phase count T for a tuning offset: the schedule's own T (note 004
    section 8, which uses all n samples) plus ``offset``, lowered until (b, T) fits in n.
    The clip is ``kappa lipschitz``; ``n_vertices`` is the polytope's (default 2d, the ball).

    A grid around the schedule's T rather than fixed values: the schedule's T grows with n
    (1 at n = 1e3, 5 at n = 1e6 here) and a fixed grid cuts it off at one end.
    """
    from dpsco_core.solvers.frank_wolfe import vr_frank_wolfe_schedule
    delta = None if pure else 1.0 / n ** 1.1
    lip = kappa * lipschitz
    T = max(1, vr_frank_wolfe_schedule(n, d, n_vertices=n_vertices, epsilon=epsilon,
                                       delta=delta, lipschitz=lip)[1] + int(offset))
    while T > 1:
        try:
            vr_frank_wolfe_schedule(n, d, n_vertices=n_vertices, epsilon=epsilon, delta=delta,
                                    lipschitz=lip, n_phases=T)
            break
        except ValueError:
            T -= 1
    return T


def _dp_sgd_default_step(n, d, epsilon, delta, clip):
    """projected_dp_sgd_l1's default step D / (G sqrt(K)) for one epoch at batch BATCH."""
    from dpsco_core.privacy.calibration import calibrate_sampled_gaussian
    q = BATCH / n
    K = max(1, int(round(1.0 / q)))
    key = (epsilon, delta, q, K)
    if key not in _SIGMA:
        _SIGMA[key] = calibrate_sampled_gaussian(target_epsilon=epsilon, target_delta=delta,
                                                 sample_rate=q, steps=K)
    sigma = _SIGMA[key]
    G = math.sqrt(clip ** 2 + d * (sigma * clip / BATCH) ** 2)
    return 1.0 / (G * math.sqrt(K))


def _configs(method, clip_factors, second):
    name, values = second[method]
    return [(k, v) for k in clip_factors for v in values], name


def _stream(n, d, seed):
    from dpsco_core.datasets import RademacherLassoStream
    return RademacherLassoStream(n, d, SPARSITY, radius=1.0, noise=NOISE,
                                 random_state=seed).materialize()


LASSO = L1Problem(_stream)      # problem A (module docstring)


def _baseline(problem, d):
    return np.zeros(d) if problem.baseline == "zero" else np.full(d, 1.0 / d)


def run_sweeps(points, methods, eval_seeds, tuning_seeds, *, clip_factors=CLIP_FACTORS,
               second=SECOND, n_threads=None, progress=None, problems=None):
    """Tune and run every method at every point ``(sweep, n, d, epsilon)``.

    ``problems`` maps a sweep to its :class:`L1Problem` (default :data:`LASSO`). Returns
    ``(rows, chosen)``: one row per (point, method, evaluation seed) with the excess loss (the
    trivial baseline included, as method "zero" or "uniform"), and the chosen configuration
    per (point, method) with its tuning loss.
    """
    rows, chosen = [], {}
    problems = {} if problems is None else problems
    for sweep, n, d, epsilon in points:
        meths = methods[sweep]
        prob = problems.get(sweep, LASSO)
        tuning = {m: {c: [] for c in _configs(m, clip_factors, second)[0]} for m in meths}
        for seed in tuning_seeds:
            stream = prob.make(n, d, seed)
            for m in meths:
                for cfg in tuning[m]:
                    tuning[m][cfg].append(stream.excess_loss(_run(m, stream, epsilon, *cfg,
                                                                  seed, n_threads, prob)))
                    if progress:
                        progress()
            del stream
        for m in meths:
            best = min(tuning[m], key=lambda c: np.mean(tuning[m][c]))
            chosen[(sweep, n, d, epsilon, m)] = {
                "clip_factor": best[0], _configs(m, clip_factors, second)[1]: best[1],
                "tuning_excess": float(np.mean(tuning[m][best]))}
            if m in ("alg3", "alg3_pure"):
                chosen[(sweep, n, d, epsilon, m)]["n_phases"] = alg3_phases(
                    n, d, epsilon, best[0], best[1], lipschitz=prob.lipschitz,
                    n_vertices=_vertices(prob, d), pure=m == "alg3_pure")
            if m == "ttz":
                chosen[(sweep, n, d, epsilon, m)]["n_iter"] = _ttz_iters(n, epsilon, best[1])
        for seed in eval_seeds:
            stream = prob.make(n, d, seed)
            base = {"sweep": sweep, "n": n, "d": d, "epsilon": epsilon, "seed": seed}
            rows.append({**base, "method": prob.baseline,
                         "excess": stream.excess_loss(_baseline(prob, d)),
                         "time": 0.0, "config": ""})
            for m in meths:
                cfg = chosen[(sweep, n, d, epsilon, m)]
                kappa, value = cfg["clip_factor"], cfg[_configs(m, clip_factors, second)[1]]
                t0 = time.perf_counter()
                x = _run(m, stream, epsilon, kappa, value, seed, n_threads, prob)
                rows.append({**base, "method": m, "excess": stream.excess_loss(x),
                             "time": time.perf_counter() - t0,
                             "config": f"kappa={kappa:g} {_configs(m, clip_factors, second)[1]}"
                                       f"={value:g}"})
                if progress:
                    progress()
            del stream
    return rows, chosen


def fit_slope(xs, ys):
    """Least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0]) if len(xs) >= 2 else float("nan")


def summarize(rows):
    """{(sweep, method, n, d, epsilon): (mean, standard error, count)}."""
    out = {}
    for r in rows:
        out.setdefault((r["sweep"], r["method"], r["n"], r["d"], r["epsilon"]),
                       []).append(r["excess"])
    return {k: (float(np.mean(v)), float(np.std(v, ddof=1) / math.sqrt(len(v)))
                if len(v) > 1 else float("nan"), len(v)) for k, v in out.items()}


def growth_factor(rows, sweep, method, first, last):
    """Ratio of mean excess at the last and first point, with a 95% bootstrap interval."""
    def values(p):
        return np.array([r["excess"] for r in rows if r["sweep"] == sweep and
                         r["method"] == method and (r["n"], r["d"], r["epsilon"]) == p])
    a, b = values(first), values(last)
    rng = np.random.default_rng(0)
    boot = [rng.choice(b, b.size).mean() / rng.choice(a, a.size).mean() for _ in range(2000)]
    return float(b.mean() / a.mean()), tuple(float(q) for q in np.quantile(boot, [0.025, 0.975]))


def crossover(ds, first, second):
    """The d where the mean curves of two methods cross (log-log interpolation), or None.

    ``first`` better (lower) at small d and ``second`` at large d is the expected order; the
    first sign change of ``log(first / second)`` along d is interpolated linearly in log d.
    """
    diff = np.log(np.asarray(first, float)) - np.log(np.asarray(second, float))
    for i in range(len(ds) - 1):
        if diff[i] <= 0 < diff[i + 1]:
            t = -diff[i] / (diff[i + 1] - diff[i])
            return float(math.exp(math.log(ds[i]) + t * (math.log(ds[i + 1]) - math.log(ds[i]))))
    return None


_THEORY = {  # predicted log-log slopes of the excess loss (note 004 sections 1, 7.3)
    ("d", "alg3"): "~0 (log d)", ("d", "dp_sgd_proj"): "> 0 (polynomial)",
    ("crossover", "alg3"): "~0 (log d)", ("crossover", "alg2"): "1/2 (private term)",
    ("n", "alg3"): "-2/3 (private) .. -1/2", ("n", "dp_sgd_proj"): "-1/2 .. -1",
    ("epsilon", "alg3"): "-2/3", ("epsilon", "dp_sgd_proj"): "-1 (private)",
}
_VAR = {"d": 2, "crossover": 2, "n": 1, "epsilon": 3}

_FIDELITY_LABELS = {
    "alg3": "Algorithm 3, (eps, delta), shuffled (Theorem 7)",
    "alg3_pure": "Algorithm 3, pure eps-DP (Theorem 6)",
    "alg2": "Algorithm 2, library's parallel eps_i = eps (Theorem 4)",
    "alg2_paper": "Algorithm 2, paper's eps_i = eps / 2^i (Theorem 4)",
    "alg6": f"Algorithm 6, l_p geometry p = {LP} (Theorem 13)",
    "sc_alg3": "section 5 reduction + Algorithm 3, lambda = 1/d (Theorem 9)",
    "sc_alg2": "section 5 reduction + Algorithm 2, lambda = 1/d (Theorem 8)",
}


def theorem_bound(method, n, d, epsilon, *, lipschitz=LIPSCHITZ, smoothness=1.0):
    """The paper's rate for ``method`` with every O(.) constant 1 (D = diam_1 = 2, L, beta,
    delta = n^-1.1, m = 2d): a reference for the fidelity table, not a certified bound."""
    D, L, beta, delta = 2.0, lipschitz, smoothness, 1.0 / n ** 1.1
    ld, ln, lm, l1d = math.log(d), math.log(n), math.log(2 * d), math.log(1.0 / delta)
    stat3 = D * (L + beta * D) * math.sqrt(ld * ln / n)
    if method == "alg3":
        return stat3 + (math.sqrt(beta) * L * D * D * l1d * lm * ln ** 2 / (n * epsilon)) ** (2 / 3)
    if method == "alg3_pure":
        return stat3 + math.sqrt(beta * L * D ** 3 * ld * ln / (n * epsilon))
    if method in ("alg2", "alg2_paper"):
        return L * D * (math.sqrt(ld / n) + math.sqrt(d * ld ** 3 * l1d) / (n * epsilon))
    if method == "alg6":
        q = LP / (LP - 1.0)
        Lq, Dp = L * d ** (1.0 / q), 2.0
        return Lq * Dp * (1.0 / math.sqrt((LP - 1.0) * n) + math.sqrt(d * l1d * (1.0 + ld))
                          / ((LP - 1.0) * n * epsilon))
    if method == "sc_alg2":
        return L * D * (ld / n + d * ld ** 3 * l1d / (n * epsilon) ** 2)
    if method == "sc_alg3":
        return L * D * ld * ln ** 2 / n + L * D * (l1d * lm * ln ** 2 / (n * epsilon)) ** (4 / 3)
    raise ValueError(f"no theorem for {method!r}")


def _fidelity_report(summ, chosen, points):
    lines = ["### the paper's own versions (sweep 'fidelity')", "",
             "Excess population loss ||x - x_true||^2 / 2, mean +- standard error; the "
             "theorem's rate with every O(.) constant set to 1 (D = 2, L = 2.5, beta = 1) "
             "as a reference; configurations tuned per point on separate seeds.", "",
             "| n | d | epsilon | method | excess | chosen | theorem rate (constants 1) |",
             "|---|---|---|---|---|---|---|"]
    for _, n, d, e in points:
        for m in FIDELITY:
            if ("fidelity", m, n, d, e) not in summ:
                continue
            mu, se, _ = summ[("fidelity", m, n, d, e)]
            cfg = chosen.get(("fidelity", n, d, e, m), {})
            extra = ", ".join(f"{k}={v:g}" for k, v in cfg.items() if k != "tuning_excess")
            lines.append(f"| {n} | {d} | {e:g} | {_FIDELITY_LABELS[m]} | {mu:.3g} +- {se:.1g}"
                         f" | {extra} | {theorem_bound(m, n, d, e):.3g} |")
        zero = summ.get(("fidelity", "zero", n, d, e))
        if zero:
            lines.append(f"| {n} | {d} | {e:g} | x = 0 | {zero[0]:.3g} | | |")
    return lines + [""]


def _table_row(summ, chosen, sweep, methods, point):
    """``| n | d | epsilon | mean +- s.e. (chosen configuration) | ... |`` of one point."""
    cells = []
    for m in methods:
        mu, se, _ = summ[(sweep, m, *point)]
        cfg = chosen.get((sweep, *point, m))
        extra = "" if cfg is None else " (" + ", ".join(
            f"{k}={v:g}" for k, v in cfg.items() if k != "tuning_excess") + ")"
        cells.append(f"{mu:.3g} +- {se:.1g}{extra}")
    return "| " + " | ".join(str(v) for v in point) + " | " + " | ".join(cells) + " |"


def report(rows, chosen, points):
    """The Markdown report: tables, chosen configurations, slopes, target factors, crossover."""
    from .l1_problems import SWEEPS, report_problems
    summ = summarize(rows)
    lines = []
    if any(p[0] in _VAR for p in points):
        lines += ["Excess population loss ||x - x_true||^2 / 2, mean +- standard error over "
                  "the evaluation seeds; 'zero' is x = 0. Configurations tuned per point on "
                  "separate seeds (kappa: clip factor).", ""]
    for sweep in ("d", "crossover", "n", "epsilon"):
        pts = [p for p in points if p[0] == sweep]
        if not pts:
            continue
        methods = [m for m in ("alg3", "alg2", "dp_sgd_proj", "zero")
                   if (sweep, m, *pts[0][1:]) in summ]
        lines += [f"### sweep over {'d' if sweep == 'crossover' else sweep}"
                  f"{' (Algorithm 2 against 3)' if sweep == 'crossover' else ''}", "",
                  "| n | d | epsilon | " + " | ".join(methods) + " |",
                  "|---" * (3 + len(methods)) + "|"]
        for _, n, d, e in pts:
            lines.append(_table_row(summ, chosen, sweep, methods, (n, d, e)))
        idx = _VAR[sweep]
        var = "d" if sweep == "crossover" else sweep
        lines += ["", f"| method | fitted slope vs {var} | theory |", "|---|---|---|"]
        for m in methods:
            if m != "zero":
                xs = [p[idx] for p in pts]
                ys = [summ[(sweep, m, *p[1:])][0] for p in pts]
                lines.append(f"| {m} | {fit_slope(xs, ys):.2f} | {_THEORY.get((sweep, m), '')} |")
        lines.append("")
        first, last = pts[0][1:], pts[-1][1:]
        if sweep == "d":
            # The target starts at d = TARGET_D_FROM; the sweep may start lower.
            start = next((p[1:] for p in pts if p[2] == TARGET_D_FROM), first)
            for m, target, ok in (("alg3", "< 3x", lambda f: f < 3),
                                  ("dp_sgd_proj", "> 10x", lambda f: f > 10)):
                if m in methods:
                    f, (lo, hi) = growth_factor(rows, "d", m, start, last)
                    lines.append(f"- **{m}**: excess grows **{f:.2f}x** (95% bootstrap interval "
                                 f"{lo:.2f} .. {hi:.2f}) from d={start[1]} to d={last[1]} at "
                                 f"n={start[0]}, epsilon={start[2]}; issue target {target}: "
                                 f"{'met' if ok(f) else 'not met'}.")
                    if start != first:
                        f, (lo, hi) = growth_factor(rows, "d", m, first, last)
                        lines.append(f"  Over the whole sweep (d={first[1]} to d={last[1]}): "
                                     f"{f:.2f}x ({lo:.2f} .. {hi:.2f}).")
            lines.append("")
        if sweep == "crossover" and {"alg2", "alg3"} <= set(methods):
            ds = [p[2] for p in pts]
            d_star = crossover(ds, [summ[("crossover", "alg2", *p[1:])][0] for p in pts],
                               [summ[("crossover", "alg3", *p[1:])][0] for p in pts])
            n, e = first[0], first[2]
            better = [p[2] for p in pts if summ[("crossover", "alg3", *p[1:])][0] <
                      summ[("crossover", "alg2", *p[1:])][0]]
            lines.append(f"- Algorithm 3 below Algorithm 2 at d in {better}; measured "
                         f"crossover d* = {'none in range' if d_star is None else f'{d_star:.0f}'}"
                         f"; predicted d ~ (n epsilon)^(2/3) = {(n * e) ** (2 / 3):.0f} "
                         f"(n={n}, epsilon={e}; constants and log factors unknown).")
            lines.append("")
    fid = [p for p in points if p[0] == "fidelity"]
    if fid:
        lines += _fidelity_report(summ, chosen, fid)
    if any(p[0] in SWEEPS for p in points):
        lines += ["Problems B, C, D (sweep 'problems'): excess population loss, mean +- "
                  "standard error over the evaluation seeds; 'zero' is x = 0, 'uniform' x = 1/d. "
                  "Configurations tuned per point on separate seeds (kappa: clip factor).", "",
                  report_problems(rows, chosen, points)]
    return "\n".join(lines)


def _plots(rows, points, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plots.")
        return []
    summ = summarize(rows)
    files = []
    labels = {"alg3": "Algorithm 3 (VR Frank-Wolfe)", "alg2": "Algorithm 2 (localized MD)",
              "dp_sgd_proj": "DP-SGD + l1 projection", "zero": "x = 0"}
    colors = {"alg3": "tab:blue", "alg2": "tab:red", "dp_sgd_proj": "tab:orange",
              "zero": "tab:gray"}
    for sweep in ("d", "crossover", "n", "epsilon"):
        pts = [p for p in points if p[0] == sweep]
        if not pts:
            continue
        idx = _VAR[sweep]
        fig, ax = plt.subplots(figsize=(4.8, 3.4))
        for m in ("alg3", "alg2", "dp_sgd_proj", "zero"):
            if (sweep, m, *pts[0][1:]) not in summ:
                continue
            xs = [p[idx] for p in pts]
            mu = np.array([summ[(sweep, m, *p[1:])][0] for p in pts])
            se = np.nan_to_num(np.array([summ[(sweep, m, *p[1:])][1] for p in pts]))
            ax.errorbar(xs, mu, 1.96 * se, label=labels[m], marker="o", ms=3, capsize=2,
                        ls="--" if m == "zero" else "-", color=colors[m])
        if sweep == "crossover":
            n, e = pts[0][1], pts[0][3]
            ax.axvline((n * e) ** (2 / 3), color="gray", lw=0.8, ls=":",
                       label="(n eps)^(2/3)")
        n0, d0, e0 = pts[0][1:]
        fixed = {"d": f"n={n0:g}, eps={e0:g}", "crossover": f"n={n0:g}, eps={e0:g}",
                 "n": f"d={d0:g}, eps={e0:g}", "epsilon": f"n={n0:g}, d={d0:g}"}[sweep]
        ax.set(xscale="log", yscale="log", xlabel="epsilon" if sweep == "epsilon" else
               ("n" if sweep == "n" else "d"), ylabel="excess population loss",
               title=f"Rademacher LASSO, {fixed}")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(out, f"l1_{sweep}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def grid(full):
    """(points, methods per sweep, evaluation seeds, tuning seeds)."""
    if full:
        points = ([("d", 100_000, d, 1.0) for d in (10, 100, 1000, 10_000, 100_000)]
                  + [("crossover", 10_000, d, 1.0)
                     for d in (10, 30, 100, 300, 1000, 3000, 10_000, 30_000)]
                  + [("n", n, 1000, 1.0)
                     for n in (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000)]
                  + [("epsilon", 100_000, 1000, e) for e in (0.1, 0.3, 1.0, 3.0)])
        eval_seeds, tuning_seeds = list(range(10)), [1000, 1001]
    else:
        points = ([("d", 20_000, d, 1.0) for d in (100, 1000, 10_000)]
                  + [("crossover", 10_000, d, 1.0) for d in (10, 100, 1000)]
                  + [("epsilon", 20_000, 1000, e) for e in (0.3, 1.0, 3.0)])
        eval_seeds, tuning_seeds = [0, 1, 2], [1000]
    # the paper's own versions: n = 1e4 (d = 100 took 20 min on the loaded 2-core machine,
    # Algorithm 2 and the reduction dominate), a quarter of it by default
    points += ([("fidelity", 10_000, d, 1.0) for d in (100, 1000)] if full
               else [("fidelity", 4_000, 100, 1.0)])
    methods = {"d": ("alg3", "dp_sgd_proj"), "crossover": ("alg2", "alg3"),
               "n": ("alg3", "dp_sgd_proj"), "epsilon": ("alg3", "dp_sgd_proj"),
               "fidelity": FIDELITY}
    from .l1_problems import grid as problem_grid
    more_points, more_methods = problem_grid(full)
    return points + more_points, {**methods, **more_methods}, eval_seeds, tuning_seeds


def _count_runs(points, methods, eval_seeds, tuning_seeds):
    total = 0
    for sweep, *_ in points:
        for m in methods[sweep]:
            total += len(CLIP_FACTORS) * len(SECOND[m][1]) * len(tuning_seeds) + len(eval_seeds)
    return total


def main(argv=None):
    from ._progress import Phases, Progress
    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce l1")
    parser.add_argument("--full", action="store_true",
                        help="the issue's grid: d = 10 .. 1e5 at n = 1e5, n = 1e3 .. 1e6, "
                             "10 seeds (~40 min; problems B, C, D: ~15 min more)")
    parser.add_argument("--out", default="l1_results", help="output directory")
    parser.add_argument("--threads", type=int, default=None,
                        help="kernel threads (default: all cores; results do not depend on it)")
    parser.add_argument("--only", nargs="+",
                        choices=("d", "crossover", "n", "epsilon", "problems", "fidelity"),
                        help="run only these sweeps (same seeds, hence the same numbers); "
                             "'problems': problems B, C, D (module l1_problems)")
    args = parse_experiment_args(parser, argv)    # checks --threads, --out
    from .l1_problems import PROBLEMS
    points, methods, eval_seeds, tuning_seeds = grid(args.full)
    if args.only:
        points = [p for p in points
                  if (p[0] in args.only) or (p[0] in PROBLEMS and "problems" in args.only)]
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    phases = Phases(3)
    phases.start(f"sweeps: {len(points)} points")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # RDP grid-edge notices during calibration
        with Progress(_count_runs(points, methods, eval_seeds, tuning_seeds),
                      "reproduce l1") as bar:
            rows, chosen = run_sweeps(points, methods, eval_seeds, tuning_seeds,
                                      n_threads=args.threads, progress=bar.advance,
                                      problems=PROBLEMS)
    phases.start("l1.csv and l1.md")
    with open(os.path.join(args.out, "l1.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = report(rows, chosen, points)
    table += (f"\n\n{len(eval_seeds)} evaluation seeds, {len(tuning_seeds)} tuning seed(s); "
              f"{time.perf_counter() - start:.0f} s.\n")
    print(table)
    with open(os.path.join(args.out, "l1.md"), "w") as fh:
        fh.write(table)
    phases.start("plots (matplotlib)")
    _plots(rows, points, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
