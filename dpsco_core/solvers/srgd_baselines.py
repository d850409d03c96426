r"""Single-epoch baselines of Accelerated-DP-SRGD (note 003, sections 5.3-5.5 and 10.2).

All three share the engine of :mod:`dpsco_core.solvers._single_epoch` (one pass over a secret
permutation, ``T = n // B`` disjoint batches, the ``_batch`` kernels) and the exact GDP
accounting of :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`:

* :func:`dp_sgd_single_epoch`: projected DP-SGD, ``x <- Pi(x - (g_t + b_t)/beta)`` with the
  clipped batch-mean gradient and independent noise; last iterate and Polyak average.
* :func:`accelerated_dp_sgd`: the linear-coupling updates of Algorithm 1 with the batch-mean
  gradient at ``x_t`` instead of the recursive gradient, and independent noise (section 5.5,
  Theorem 15; the note's proposed private instantiation, section 5.3).
* :func:`dp_srg`: the recursive gradient with tree noise and plain projected steps
  ``x <- Pi(x - G~_t/(beta eta_t))`` (the unaccelerated ablation of section 4.3).
* :func:`dp_ftrl`: DP-FTRL (paper section 2.2; Kairouz et al. 2021), the method the paper
  positions against: the binary-tree mechanism on the prefix sums of the clipped batch-mean
  **gradients themselves** (:class:`~dpsco_core.tree.TreeAggregation`) and the lazy FTRL step
  ``x_{t+1} = Pi(x_0 - G~_t / beta)`` (DP-SGD's update for ``C = R^p``, with tree-correlated
  noise). Own loop over the engine's kernel (same permutation and batches).

Privacy of the independent-noise baselines: each example enters exactly one round's clipped
sum (sensitivity ``C / B`` of the batch mean, x2 for replace-one), and the rounds are
adaptive Gaussian releases of which only that round depends on the example; the whole run is
therefore one Gaussian mechanism, ``mu = C / (B sigma)``-GDP (no composition over rounds, no
amplification claimed): event ``GaussianDpEvent(s)`` with ``s = 1/mu``.
"""

import math
import time

import numpy as np

from .._config import effective_n_threads
from .._random import block_bit_generators, check_random_state, child_seed_sequences
from ..privacy.budget import spend
from ..result import Result
from ._common import objective_or_inf
from ._single_epoch import _Kernel, _project, run_single_epoch
from .dp_srgd import (check_single_epoch_args, make_history, record_points,
                      single_epoch_calibration, single_epoch_report)

__all__ = ["dp_sgd_single_epoch", "accelerated_dp_sgd", "dp_srg", "dp_ftrl"]

INDEPENDENT_ASSUMPTION = ("each example enters exactly one round: the run is one adaptive "
                          "Gaussian release of sensitivity clip / B (no composition over rounds, "
                          "no amplification by shuffling claimed)")


def _baseline(problem, *, estimator, update, epsilon, delta, beta, batch_size, preset, clip,
              radius, z_step_scale, neighboring_relation, random_state, n_threads,
              record_history, solver, output="last", budget=None):
    problem, epsilon, delta, B, T, beta, clip, radius, relation, ridge = check_single_epoch_args(
        problem, epsilon=epsilon, delta=delta, batch_size=batch_size, preset=preset, beta=beta,
        clip=clip, radius=radius, neighboring_relation=neighboring_relation, solver=solver)
    # work of one round's kernel call (issue 18): two margins per row for the SRG difference
    n_threads = effective_n_threads(
        n_threads, work=(2 if estimator == "srg" else 1) * B * problem.n_features)
    mu, s, noise_scale, event = single_epoch_calibration(epsilon, delta, relation, clip, B, T,
                                             tree=estimator == "srg")
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before reading data
    start = time.perf_counter()
    run = run_single_epoch(problem, B=B, T=T, beta=beta, clip=clip, radius=radius,
                           noise_scale=noise_scale, estimator=estimator, update=update,
                           z_step_scale=z_step_scale, ridge=ridge, random_state=random_state,
                           n_threads=n_threads, record_steps=record_points(T, record_history))
    elapsed = time.perf_counter() - start
    report = single_epoch_report(
        event, delta=delta, relation=relation, target_epsilon=epsilon,
        assumptions=() if estimator == "srg" else (INDEPENDENT_ASSUMPTION,),
        random_state=random_state)
    coef = {"last": run["x"], "average": run["average"], "y": run["y"]}[output]
    stats = {
        "time": elapsed, "x_last": run["x"], "x_average": run["average"], "batch_size": B,
        "rounds": T, "gradient_evaluations": run["gradient_evaluations"],
        "unused_samples": problem.n_samples - run["used"], "mu": mu, "rho": mu * mu / 2.0,
        "noise_multiplier": s, "noise_scale": noise_scale, "beta": beta, "clip": clip,
        "output": output,
    }
    if record_history:      # computed from the data: with the history, listed as not private
        stats["clipped_fraction"] = run["clipped_fraction"]
    return Result(coef=coef, privacy=report, history=make_history(problem, run, B,
                                                                   record_history), stats=stats)


_COMMON_DOC = """
    Parameters
    ----------
    problem : Problem
        As for :func:`~dpsco_core.solvers.dp_srgd.dp_srgd` (no penalty or L2).
    epsilon, delta : float
        Budget; ``epsilon=inf`` runs without noise.
    beta : float
        Inverse step, > 0.
    batch_size : int, optional
        ``B`` in [1, n]; overrides ``preset``.
    preset : {"sqrt", "quarter"}, default="sqrt"
        The batch size from n when ``batch_size`` is None, as for
        :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`.
    clip : float, default=1.0
        Per-example l2 clip (of the gradient, or of the difference for :func:`dp_srg`).
    radius : float, optional
        l2-ball radius R (None: unconstrained).
    neighboring_relation : {"zero_out", "replace_one"}, default="zero_out"
        The relation of the guarantee (replace-one doubles the sensitivity); add/remove-one
        raises ValueError.
    random_state, n_threads, record_history, budget
        As for :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`.

    Returns
    -------
    Result
        With ``privacy`` from the exact GDP accountant and ``stats`` as for ``dp_srgd``.
"""


def dp_sgd_single_epoch(problem, *, epsilon, delta, beta, batch_size=None, preset="sqrt",
                        clip=1.0, radius=None, average=True, neighboring_relation="zero_out",
                        random_state=None, n_threads=None, record_history=True, budget=None):
    return _baseline(problem, estimator="independent", update="sgd", epsilon=epsilon,
                     delta=delta, beta=beta, batch_size=batch_size, preset=preset, clip=clip,
                     radius=radius, z_step_scale=0.5, neighboring_relation=neighboring_relation,
                     random_state=random_state, n_threads=n_threads,
                     record_history=record_history, solver="dp_sgd_single_epoch",
                     output="average" if average else "last", budget=budget)


dp_sgd_single_epoch.__doc__ = r"""Single-epoch projected DP-SGD (mu-GDP): ``T = n // B`` rounds, each
    example used once, independent Gaussian noise (note 003, section 5.5).

    .. math::

        x_{t+1} = \Pi_C\Big(x_t - \frac1\beta\Big(\frac1B \sum_{d \in B_t}
        \mathrm{clip}(\nabla f(x_t; d), C) + b_t\Big)\Big), \quad
        b_t \sim \mathcal N(0, \sigma^2 I), \ \sigma = \frac{C}{B \mu}.

    **Privacy guarantee.** mu-GDP with ``mu = gdp_mu(epsilon, delta)`` (exact conversion),
    zero-out or replace-one (x2); see the module docstring. ``average=True`` returns the
    Polyak average of ``x_1 .. x_T`` (default), False the last iterate (both in ``stats``).
""" + _COMMON_DOC.replace("    neighboring_relation :", """    average : bool, default=True
        Return the Polyak average of the iterates (True) or the last iterate.
    neighboring_relation :""", 1)


def accelerated_dp_sgd(problem, *, epsilon, delta, beta, batch_size=None, preset="sqrt",
                       clip=1.0, radius=None, z_step_scale=0.5, neighboring_relation="zero_out",
                       random_state=None, n_threads=None, record_history=True, budget=None):
    return _baseline(problem, estimator="independent", update="accelerated", epsilon=epsilon,
                     delta=delta, beta=beta, batch_size=batch_size, preset=preset, clip=clip,
                     radius=radius, z_step_scale=z_step_scale,
                     neighboring_relation=neighboring_relation, random_state=random_state,
                     n_threads=n_threads, record_history=record_history,
                     solver="accelerated_dp_sgd", output="y", budget=budget)


accelerated_dp_sgd.__doc__ = r"""Accelerated DP-SGD with independent batch gradients (mu-GDP; paper
    section 5.5, Theorem 15): Algorithm 1's x/y/z updates with
    :math:`\tilde\nabla_t = \frac1B\sum_{d\in B_t}\mathrm{clip}(\nabla f(x_t; d), C) + b_t`,
    :math:`b_t \sim \mathcal N(0, (C/(B\mu))^2 I)` independent; output :math:`y_T`.

    **Privacy guarantee.** As :func:`dp_sgd_single_epoch` (module docstring).
""" + _COMMON_DOC.replace("    neighboring_relation :", """    z_step_scale : float, default=0.5
        Scale of the z-step, as for :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`.
    neighboring_relation :""", 1)


def dp_srg(problem, *, epsilon, delta, beta, batch_size=None, preset="sqrt", clip=1.0,
           radius=None, neighboring_relation="zero_out", random_state=None, n_threads=None,
           record_history=True, budget=None):
    return _baseline(problem, estimator="srg", update="sgd", epsilon=epsilon, delta=delta,
                     beta=beta, batch_size=batch_size, preset=preset, clip=clip, radius=radius,
                     z_step_scale=0.5, neighboring_relation=neighboring_relation,
                     random_state=random_state, n_threads=n_threads,
                     record_history=record_history, solver="dp_srg", output="last", budget=budget)


dp_srg.__doc__ = r"""Unaccelerated SRG with tree noise (mu-GDP; paper section 4.3, an ablation):
    :math:`x_{t+1} = \Pi_C(x_t - \tilde G_t / (\beta \eta_t))` with the recursive-gradient
    prefix sums and tree noise of :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`; last iterate.

    **Privacy guarantee.** As :func:`~dpsco_core.solvers.dp_srgd.dp_srgd` (tree event).
""" + _COMMON_DOC


def _run_ftrl(problem, *, B, T, beta, clip, radius, noise_scale, ridge, random_state,
              n_threads, record_steps):
    """DP-FTRL's loop: tree prefix sums of the clipped batch-mean gradients, lazy projection."""
    from ..tree import TreeAggregation
    n, p = problem.n_samples, problem.n_features
    perm_seed, noise_seed = child_seed_sequences(check_random_state(random_state), 2)
    # The permutation is secret: never returned (only post-processing of the releases).
    perm = np.random.Generator(block_bit_generators(perm_seed, 1)[0]).permutation(n)
    perm = perm.astype(np.int64)
    kernel = _Kernel(problem, n_threads)
    tree = TreeAggregation(p, T, noise_scale=noise_scale, random_state=noise_seed,
                           n_threads=n_threads)
    x0 = _project(np.zeros(p), radius)
    x, G, S, Gn = x0.copy(), np.zeros(p), np.empty(p), np.empty(p)
    average, n_clipped, recorded = np.zeros(p), 0, []
    record_steps = set(record_steps)
    for t in range(T):
        rows = perm[t * B:(t + 1) * B]
        n_clipped += kernel(rows, x, x, 1.0, 0.0, clip, S)    # sum of clip(g(x_t), C)
        G += S / B
        if ridge:
            G += ridge * x            # the L2 penalty's gradient: data-independent
        tree.next(G, out=Gn)
        x = _project(x0 - Gn / beta, radius)
        average += (x - average) / (t + 1.0)
        if t + 1 in record_steps:
            recorded.append((t + 1, objective_or_inf(problem, x)))
    used = T * B
    return {"x": x, "average": average, "n_clipped": n_clipped, "recorded": recorded,
            "clipped_fraction": n_clipped / max(1, used), "used": used,
            "gradient_evaluations": used}


def dp_ftrl(problem, *, epsilon, delta, beta, batch_size=None, preset="sqrt", clip=1.0,
            radius=None, average=False, neighboring_relation="zero_out", random_state=None,
            n_threads=None, record_history=True, budget=None):
    problem, epsilon, delta, B, T, beta, clip, radius, relation, ridge = check_single_epoch_args(
        problem, epsilon=epsilon, delta=delta, batch_size=batch_size, preset=preset, beta=beta,
        clip=clip, radius=radius, neighboring_relation=neighboring_relation, solver="dp_ftrl")
    n_threads = effective_n_threads(n_threads, work=B * problem.n_features)   # one round
    # one leaf per example, in bit_length(T) nodes: sqrt(levels) sensitivity / sigma GDP
    mu, s, noise_scale, event = single_epoch_calibration(epsilon, delta, relation, clip, B, T,
                                                         tree=True)
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before reading data
    start = time.perf_counter()
    run = _run_ftrl(problem, B=B, T=T, beta=beta, clip=clip, radius=radius,
                    noise_scale=noise_scale, ridge=ridge, random_state=random_state,
                    n_threads=n_threads, record_steps=record_points(T, record_history))
    elapsed = time.perf_counter() - start
    report = single_epoch_report(event, delta=delta, relation=relation, target_epsilon=epsilon,
                                 assumptions=(), random_state=random_state)
    stats = {
        "time": elapsed, "x_last": run["x"], "x_average": run["average"], "batch_size": B,
        "rounds": T, "gradient_evaluations": run["gradient_evaluations"],
        "unused_samples": problem.n_samples - run["used"], "mu": mu, "rho": mu * mu / 2.0,
        "noise_multiplier": s, "noise_scale": noise_scale, "beta": beta, "clip": clip,
        "output": "average" if average else "last",
    }
    if record_history:      # computed from the data: with the history, listed as not private
        stats["clipped_fraction"] = run["clipped_fraction"]
    coef = run["average"] if average else run["x"]
    return Result(coef=coef, privacy=report, history=make_history(problem, run, B,
                                                                   record_history), stats=stats)


dp_ftrl.__doc__ = r"""DP-FTRL with the binary-tree mechanism (mu-GDP; paper 003 section 2.2):
    the method Accelerated-DP-SRGD is positioned against (Smith and Thakurta 2013; Kairouz et
    al. 2021). One epoch of ``T = n // B`` disjoint batches of a secret permutation;

    .. math::

        G_t = \sum_{i \le t} \frac1B \sum_{d \in B_i} \mathrm{clip}(\nabla f(x_i; d), C),
        \qquad x_{t+1} = \Pi_C\big(x_0 - \tilde G_t / \beta\big)
        = \arg\min_{x \in C} \langle \tilde G_t, x\rangle + \frac\beta2 \|x - x_0\|^2,

    with :math:`\tilde G_t` the streaming tree's noisy prefix sum of the gradients themselves
    (:class:`~dpsco_core.tree.TreeAggregation`, node noise :math:`\sigma`), :math:`x_0 = 0`;
    for :math:`C = \mathbb R^p` this is DP-SGD's update with step :math:`1/\beta` and
    tree-correlated noise. Output: the last iterate (``average=False``, default) or the
    Polyak average of :math:`x_1 .. x_T`.

    **Privacy guarantee.** mu-GDP with ``mu = gdp_mu(epsilon, delta)``, zero-out or
    replace-one (x2 sensitivity). Each example enters one round's clipped batch mean (one
    leaf, l2 sensitivity :math:`C/B`, x2 for replace-one), and a leaf lies in at most
    ``bit_length(T)`` tree nodes, so the node noise
    :math:`\sigma = \sqrt{\mathrm{bit\_length}(T)}\, C / (B\mu)` makes the run one
    Gaussian mechanism of sensitivity :math:`\sqrt{\mathrm{bit\_length}(T)}\,C/B`, also for
    adaptively chosen leaves (event ``SingleEpochTreeAggregationDpEvent``, as
    :func:`~dpsco_core.solvers.dp_srgd.dp_srgd`).
""" + _COMMON_DOC.replace("    neighboring_relation :", """    average : bool, default=False
        Return the Polyak average of the iterates (True) or the last iterate.
    neighboring_relation :""", 1)
