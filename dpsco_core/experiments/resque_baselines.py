r"""Baselines of ``reproduce resque-parallel``: SGD, minibatch SGD and randomized smoothing
(Duchi, Bartlett, Wainwright 2012, "DBW12" in Table I of Carmon et al. 2023), each a function
of its number of sequential rounds D (query depth) and batch b (total queries D b).

- :func:`minibatch_sgd`: projected minibatch SGD on :math:`B_R(0)`, constant step
  :math:`\eta = c R/(L\sqrt D)`, averaged iterates: :math:`E f(\bar x) - f^* \le
  cRL/\sqrt D \cdot (1/(2c^2) + 1/2)` for any batch (the batch only lowers the noise, not the
  :math:`(LR/\varepsilon)^2` rounds a non-smooth f needs). b = 1 is SGD.
- :func:`randomized_smoothing`: AC-SA (Lan 2012, α_t = 2/(t+1), γ_t = (t+1)γ/2,
  :math:`\gamma = c\min\{1/(2\beta), \sqrt6 R/(\sigma_b (D+2)^{3/2})\}`) on the Gaussian-smoothed
  :math:`\hat f_\rho`, :math:`\beta = L/\rho`, :math:`\sigma_b = L/\sqrt b`, with minibatches of
  b oracle answers at :math:`x^{md} + \rho\zeta_i`: query depth :math:`O(d^{1/4}/\varepsilon)`
  for :math:`\rho = \varepsilon/(L\sqrt d)` (DBW12).

:func:`min_rounds` finds, for one seed, the smallest D of a geometric grid (ratio √2) whose run
reaches ``f - f* <= epsilon`` at a fixed total number of queries Q (b = ⌊Q/D⌋), trying every
step scale c of a grid at each D (the baseline is tuned; its seeds are not);
:func:`tuned_min_rounds` tunes c on the first seed only (for randomized smoothing, whose runs
cost Q oracle calls each).
"""

import math

import numpy as np

from .._random import check_random_state, child_seed_sequences

__all__ = ["minibatch_sgd", "randomized_smoothing", "min_rounds", "tuned_min_rounds",
           "round_grid"]


def _project(x, radius):
    nrm = float(np.linalg.norm(x))
    return x * (radius / nrm) if nrm > radius else x


def minibatch_sgd(problem, rounds, batch, step_scale=1.0, random_state=0):
    """Averaged projected minibatch SGD; returns the average of the D iterates."""
    d, R, L = problem.n_features, problem.radius, problem.lipschitz
    rng = np.random.default_rng(check_random_state(random_state))
    eta = step_scale * R / (L * math.sqrt(rounds))
    x, acc = np.zeros(d), np.zeros(d)
    for _ in range(rounds):
        x = _project(x - eta * problem.mean_grad(x, batch, rng), R)
        acc += x
    return acc / rounds


def randomized_smoothing(problem, rounds, batch, smoothing_radius, step_scale=1.0,
                         random_state=0):
    """AC-SA on the Gaussian smoothing (module docstring); returns :math:`x^{ag}_D`."""
    d, R, L = problem.n_features, problem.radius, problem.lipschitz
    rho = smoothing_radius
    seed = check_random_state(random_state)
    s_zeta, s_oracle = child_seed_sequences(seed, 2)   # leaves the caller's seed unchanged
    rng = np.random.default_rng(s_zeta)
    oracle_seeds = child_seed_sequences(s_oracle, rounds)
    beta, sigma = L / rho, L / math.sqrt(batch)
    gamma = step_scale * min(1.0 / (2.0 * beta),
                             math.sqrt(6.0) * R / (sigma * (rounds + 2) ** 1.5))
    x, x_ag = np.zeros(d), np.zeros(d)
    for t in range(1, rounds + 1):
        alpha = 2.0 / (t + 1)
        x_md = (1 - alpha) * x_ag + alpha * x
        Z = x_md + rho * rng.standard_normal((batch, d))
        g = problem.grad_batch(Z, oracle_seeds[t - 1]).mean(axis=0)
        x = _project(x - (t + 1) * gamma / 2.0 * g, R)
        x_ag = (1 - alpha) * x_ag + alpha * x
    return x_ag


def round_grid(max_rounds, first=2):
    """Geometric grid ⌈first · 2^(j/2)⌉ (deduplicated) up to ``max_rounds``."""
    out, j = [], 0
    while True:
        D = math.ceil(first * 2 ** (j / 2))
        if D > max_rounds:
            return out
        if not out or D > out[-1]:
            out.append(D)
        j += 1


def min_rounds(run, problem, epsilon, total_queries, step_scales, max_rounds, random_state,
               search="scan"):
    """Smallest D on :func:`round_grid` (D <= min(max_rounds, Q)) such that
    ``problem.excess(run(D, b, c, random_state)) <= epsilon`` for some c in ``step_scales``,
    b = ⌊Q/D⌋. Returns (D, c, excess), or None if no D of the grid reaches epsilon.

    ``search="scan"`` tries every D in increasing order; ``"bisect"`` assumes that reaching
    epsilon is monotone in D and bisects the grid (about log2 of the grid's length runs per c
    instead of one per grid point; for the costly randomized-smoothing baseline).
    """
    grid = round_grid(min(max_rounds, total_queries))

    def reach(D):
        for c in step_scales:
            err = problem.excess(run(D, total_queries // D, c, random_state))
            if err <= epsilon:
                return D, c, err
        return None

    if search == "scan":
        for D in grid:
            hit = reach(D)
            if hit is not None:
                return hit
        return None
    if search != "bisect":
        raise ValueError(f"search must be 'scan' or 'bisect'; got {search!r}.")
    if not grid:
        return None
    best = reach(grid[-1])
    lo, hi = -1, len(grid) - 1          # grid[hi] reaches, grid[lo] does not (or lo = -1)
    if best is None:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        hit = reach(grid[mid])
        if hit is None:
            lo = mid
        else:
            hi, best = mid, hit
    return best


def tuned_min_rounds(run, problem, epsilon, total_queries, step_scales, max_rounds, seeds,
                     search="bisect"):
    """Two-stage tuning for costly baselines: on the first seed, :func:`min_rounds` for each
    step scale alone; then every other seed with the scale that needed the fewest rounds.
    Returns one (D, c, excess) or None per seed."""
    first = [min_rounds(run, problem, epsilon, total_queries, (c,), max_rounds, seeds[0],
                        search) for c in step_scales]
    reached = [h for h in first if h is not None]
    if not reached:
        return [None] * len(seeds)
    best = min(reached, key=lambda h: h[0])
    return [best] + [min_rounds(run, problem, epsilon, total_queries, (best[1],), max_rounds,
                                seed, search) for seed in seeds[1:]]
