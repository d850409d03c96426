"""The single-epoch engine shared by Accelerated-DP-SRGD and its baselines (note 003).

One pass over a secret random permutation of the n examples, cut into ``T = n // B``
disjoint batches of ``B`` consecutive positions (the last ``n - T B`` examples are unused).
Each round reads one batch through the ``_batch`` kernels (``batch_diff_*``: two-point
differences, ``eta_t = 1, eta_{t-1} = 0`` for a plain clipped gradient sum), divides by the
public ``B``, adds the noise and applies an O(p) update in NumPy (p is small next to B p).

Gradient estimates:

* ``"srg"``: the stochastic recursive gradient, prefix sums ``G_t = sum_{i <= t} Delta_i`` of
  the clipped per-example differences ``eta_i g(x_i) - eta_{i-1} g(x_{i-1})`` (same batch at
  both points), released through the streaming tree (:class:`~dpsco_core.tree.TreeAggregation`).
  The gradient estimate is ``G~_t / eta_t``.
* ``"independent"``: the clipped batch-mean gradient at ``x_t`` plus independent Gaussian
  noise (``_noise.add_noise``, per-round block streams); ``G~_t = eta_t nabla~_t``.

Updates (``eta_t = t + 1``, ``tau_{t+1} = 2 / (t + 3)``, ``Pi`` the l2-ball projection):

* ``"accelerated"`` (note 003 section 3): ``z <- Pi(z - s_z G~/beta)``,
  ``y <- Pi(x - G~/(beta eta_t))``, ``x <- y + tau (z - y)``; output ``y_T``.
* ``"sgd"``: ``x <- Pi(x - G~/(beta eta_t))`` (step ``1/beta``); outputs the last iterate
  and the Polyak average of ``x_1 .. x_T``.
"""

import math

import numpy as np

from .._kernels import _batch, _noise
from .._random import block_bit_generators, check_random_state, child_seed_sequences
from ..penalties import PENALTY_L2, PENALTY_NONE
from ..tree import TreeAggregation
from ._common import objective_or_inf

__all__ = ["single_epoch_schedule", "run_single_epoch", "check_penalty_supported"]


def single_epoch_schedule(n, batch_size, preset):
    """``(B, T)``: ``B`` given, or ``"sqrt"``: ``B = floor(sqrt(n))``; ``"quarter"``:
    ``T = ceil(2 n^{1/4})``, ``B = n // T`` (note 003, section 11); then ``T = n // B``."""
    if batch_size is not None:
        B = batch_size
    elif preset == "sqrt":
        B = max(1, math.isqrt(n))
    elif preset == "quarter":
        B = max(1, n // min(n, math.ceil(2.0 * n ** 0.25)))
    else:
        raise ValueError(f"preset must be 'sqrt' or 'quarter'; got {preset!r}.")
    return B, n // B


def check_penalty_supported(problem, solver):
    kind = problem.penalty.kind
    if kind not in (PENALTY_NONE, PENALTY_L2):
        raise ValueError(f"{solver} supports no penalty or an L2 penalty (a data-independent "
                         f"gradient term); got {type(problem.penalty).__name__}.")
    return problem.penalty.params[0] if kind == PENALTY_L2 else 0.0


def _project(v, radius):
    if radius is None:
        return v
    norm = math.sqrt(float(v @ v))
    return v if norm <= radius else v * (radius / norm)


class _Kernel:
    """The batch kernel bound to the problem's layout: ``sum_out = sum clip(diff, C)``."""

    def __init__(self, problem, n_threads):
        self.problem, self.n_threads = problem, n_threads
        self.row_norms = problem.row_norms()
        self.X = problem.X_csr() if problem.is_sparse else problem.X_c()

    def __call__(self, rows, x, x_prev, eta, eta_prev, clip, out):
        pr = self.problem
        if pr.is_sparse:
            return _batch.batch_diff_csr(self.X.data, self.X.indices, self.X.indptr, pr.y, rows,
                                         x, x_prev, self.row_norms, pr.loss.kind, pr.loss.param,
                                         eta, eta_prev, clip, out, self.n_threads)
        return _batch.batch_diff_dense(self.X, pr.y, rows, x, x_prev, self.row_norms,
                                       pr.loss.kind, pr.loss.param, eta, eta_prev, clip, out,
                                       self.n_threads)


def run_single_epoch(problem, *, B, T, beta, clip, radius, noise_scale, estimator, update,
                     z_step_scale=0.5, ridge=0.0, variance_reduced_tree=False, random_state=None,
                     n_threads=1, record_steps=(), executor=None):
    """Run the engine (module docstring); return a dict of outputs and counters.

    ``noise_scale`` is the absolute noise std on ``G`` (per tree node for ``"srg"``, per round
    for ``"independent"``), in units of the batch mean. ``record_steps``: rounds t (1..T)
    after which ``F`` of the output iterate is recorded. ``executor``: a row-blocked executor
    (:mod:`dpsco_core.parallel.blocked`) that computes the batch sums; the noise stays here.
    """
    n, p = problem.n_samples, problem.n_features
    seed = check_random_state(random_state)
    perm_seed, noise_seed = child_seed_sequences(seed, 2)
    # The permutation is secret: it is never returned (only post-processing of the releases).
    perm = np.random.Generator(block_bit_generators(perm_seed, 1)[0]).permutation(n)
    perm = perm.astype(np.int64)
    kernel = _Kernel(problem, n_threads) if executor is None else executor.diff_kernel(problem)
    if estimator == "srg":
        tree = TreeAggregation(p, T, noise_scale=noise_scale,
                               variance_reduced=variance_reduced_tree, random_state=noise_seed,
                               n_threads=n_threads)
    n_blocks = -(-p // _noise.NOISE_BLOCK_SIZE)
    x = _project(np.zeros(p), radius)
    x_prev, z, y = x.copy(), x.copy(), x.copy()
    G, S, Gn = np.zeros(p), np.empty(p), np.empty(p)
    average = np.zeros(p)
    n_clipped = 0
    recorded, record_steps = [], set(record_steps)
    for t in range(T):
        eta = t + 1.0
        rows = perm[t * B:(t + 1) * B]
        if estimator == "srg":
            # G_t = G_{t-1} + (1/B) sum clip(eta_t g(x_t) - eta_{t-1} g(x_{t-1}), C)
            n_clipped += kernel(rows, x, x_prev, eta, eta - 1.0, clip, S)
            G += S / B
            tree.next(G, out=Gn)
        else:
            # G~_t = eta_t (1/B)(sum clip(g(x_t), C) + N(0, noise_scale^2 B^2 I))
            n_clipped += kernel(rows, x, x, 1.0, 0.0, clip, S)
            gens = [np.random.PCG64DXSM(c) for c in
                    child_seed_sequences(noise_seed, n_blocks, offset=t * n_blocks)]
            # never more threads than blocks: an idle OpenMP team stalls on a loaded machine
            _noise.add_noise(S / B, noise_scale, _noise.GAUSSIAN, gens, Gn,
                             min(n_threads, n_blocks))
            Gn *= eta
        if ridge:
            Gn += eta * ridge * x     # telescoped prefix sum of the ridge differences
        x_prev = x
        if update == "accelerated":
            z = _project(z - (z_step_scale / beta) * Gn, radius)
            y = _project(x - Gn / (beta * eta), radius)
            x = y + (2.0 / (t + 3.0)) * (z - y)
            out = y
        else:
            x = _project(x - Gn / (beta * eta), radius)
            average += (x - average) / (t + 1.0)
            out = x
        if t + 1 in record_steps:
            recorded.append((t + 1, objective_or_inf(problem, out)))
    used = T * B
    return {
        "y": y, "x": x, "z": z, "average": average, "n_clipped": n_clipped,
        "clipped_fraction": n_clipped / max(1, used), "recorded": recorded, "used": used,
        "gradient_evaluations": (2 * used - B) if estimator == "srg" else used,
    }
