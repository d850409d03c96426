r"""Accelerated-DP-SRGD: single-epoch, large-batch private optimization with tree noise.

Choquette-Choo, Ganesh and Thakurta, "Near-optimal rates for O(1)-smooth DP-SCO with a single
epoch and large batches" (Algorithm 1). Implementation notes: ``shared/notes/003_srgd.md``
(section 3: the implementation-ready pseudocode followed here; 4.1: the tree; 4.2: clipping of
the differences; 6.3: exact GDP calibration; 9: errata; 11: defaults). Kernels:
``_batch.batch_diff_*`` (two-point differences, K1) and ``_tree.tree_step`` (K2).
"""

from __future__ import annotations

import math
import time
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .._config import effective_n_threads
from .._validation import check_int, check_scalar
from ..exceptions import TheoryWarning, external_stacklevel
from ..parallel.blocked import resolve_executor
from ..privacy.budget import Budget, spend
from ..privacy.events import (GaussianDpEvent, NeighboringRelation, NonPrivateDpEvent,
                              SingleEpochTreeAggregationDpEvent)
from ..privacy.gdp import gdp_mu
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport, seed_assumptions
from ..result import History, Result
from ._common import (MAX_NOISE_SCALE, check_noise_scale, check_privacy_budget, check_problem,
                      check_relation, sensitivity_factor)
from ._single_epoch import check_penalty_supported, run_single_epoch, single_epoch_schedule

if TYPE_CHECKING:
    from .._typing import RandomStateLike
    from ..parallel.blocked import BlockExecutor
    from ..problems import Problem

__all__ = ["dp_srgd", "theory_params"]


SINGLE_EPOCH_ASSUMPTIONS = (
    "n is public; batches are B consecutive positions of a secret, data-independent random "
    "permutation, each example in exactly one batch (single epoch); the batch mean divides by "
    "the public B",
    "the last n - T B examples of the permutation are not used",
)


def check_single_epoch_args(problem, *, epsilon, delta, batch_size, preset, beta, clip, radius,
                            neighboring_relation, solver):
    """Shared validation of the single-epoch solvers; returns the derived constants."""
    problem = check_problem(problem)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    n = problem.n_samples
    if batch_size is not None:
        batch_size = check_int(batch_size, "batch_size", low=1, high=n)
    B, T = single_epoch_schedule(n, batch_size, preset)
    beta = check_scalar(beta, "beta", low=0.0)
    clip = check_scalar(clip, "clip", low=0.0, allow_inf=True)
    if math.isinf(clip) and math.isfinite(epsilon):
        raise ValueError("clip must be finite for a private run (an unbounded difference has "
                         "infinite sensitivity); clip=inf needs epsilon=inf.")
    if radius is not None:
        radius = check_scalar(radius, "radius", low=0.0)
    relation = check_relation(neighboring_relation)
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ValueError(f"neighboring_relation='add_or_remove_one' is not supported by {solver}: "
                         "adding a record shifts the fixed batch partition. Use 'zero_out' (the "
                         "paper's relation) or 'replace_one' (sensitivity x2).")
    ridge = check_penalty_supported(problem, solver)
    return problem, epsilon, delta, B, T, beta, clip, radius, relation, ridge


def single_epoch_calibration(epsilon, delta, relation, clip, B, T, *, tree):
    """(mu, noise multiplier s, absolute noise std, event) of a single-epoch run.

    A record enters one round's clipped batch mean: l2 sensitivity ``factor C / B``. With tree
    noise its leaf lies in ``bit_length(T)`` nodes (``s = sqrt(levels) / mu``); with
    independent noise the run is one Gaussian mechanism (``s = 1 / mu``). ``mu =
    gdp_mu(epsilon, delta)``; ``s`` is raised by the last bits the GDP accountant's report
    needs to stay within epsilon (:func:`~dpsco_core.privacy.calibration.
    calibrate_gdp_multiplier`; a fixed 1e-9 slack until session 18).
    """
    from ..privacy.calibration import calibrate_gdp_multiplier

    if not math.isfinite(epsilon):
        return math.inf, 0.0, 0.0, NonPrivateDpEvent()
    sensitivity = sensitivity_factor(relation) * clip / B
    event_of = ((lambda s: SingleEpochTreeAggregationDpEvent(s, T)) if tree else GaussianDpEvent)
    s = calibrate_gdp_multiplier(target_epsilon=epsilon, target_delta=delta, event_of=event_of,
                                 sqrt_releases=math.sqrt(T.bit_length()) if tree else 1.0,
                                 neighboring_relation=relation)
    return gdp_mu(epsilon, delta), s, check_noise_scale(s * sensitivity, epsilon), event_of(s)


def single_epoch_report(event, *, delta, relation, target_epsilon, assumptions, random_state):
    """Exact GDP report of ``event``; raises if it exceeds the target (a calibration bug).
    ``random_state`` is the caller's, as given (a supplied seed is stated)."""
    report = PrivacyReport.from_event(
        event, delta=delta, accountant="gdp", neighboring_relation=relation,
        budget_split={"optimization": 1.0},
        assumptions=(tuple(DEFAULT_ASSUMPTIONS) + SINGLE_EPOCH_ASSUMPTIONS + tuple(assumptions)
                     + seed_assumptions(random_state)))
    if math.isfinite(target_epsilon) and report.epsilon > target_epsilon:
        raise RuntimeError(f"privacy calibration error: the accountant gives epsilon="
                           f"{report.epsilon!r} > target {target_epsilon!r}.")
    return report


def record_points(T, record_history):
    """Rounds after which F is recorded: powers of two and T (about log2 T evaluations)."""
    if not record_history:
        return ()
    return sorted({2 ** k for k in range(T.bit_length()) if 2 ** k <= T} | {T})


def make_history(problem, run, B, record_history):
    if not record_history:
        return History(np.empty(0), np.empty(0))
    n = problem.n_samples
    passes = [0.0] + [t * B / n for t, _ in run["recorded"]]
    objective = [problem.objective(np.zeros(problem.n_features))] + [
        f for _, f in run["recorded"]]
    return History(np.asarray(passes), np.asarray(objective))


def dp_srgd(problem: Problem, *, epsilon: float, delta: float, beta: float,
            batch_size: int | None = None, preset: str = "sqrt", clip: float = 1.0,
            radius: float | None = None, z_step_scale: float = 0.5,
            variance_reduced_tree: bool = False,
            neighboring_relation: str | NeighboringRelation = "zero_out",
            random_state: RandomStateLike = None, n_threads: int | None = None,
            record_history: bool = True, budget: Budget | None = None,
            executor: BlockExecutor | None = None) -> Result:
    r"""Accelerated-DP-SRGD (mu-GDP): one epoch, ``T = n // B`` rounds, tree-aggregated noise.

    Minimizes :math:`F(x) = \frac1n \sum_i \ell(\langle a_i, x\rangle, y_i) + \psi(x)` over
    :math:`C = \{\|x\|_2 \le R\}` (or :math:`\mathbb R^p`) with Algorithm 1 of the paper in
    the form of note 003, section 3. With :math:`\eta_t = t + 1`, :math:`\eta_{-1} = 0` and
    :math:`B_t` the t-th batch of a secret permutation:

    .. math::

        \Delta_t = \frac1B \sum_{d \in B_t} \mathrm{clip}\big(\eta_t \nabla f(x_t; d)
        - \eta_{t-1} \nabla f(x_{t-1}; d),\ C_\Delta\big), \qquad
        \tilde G_t = \sum_{i \le t} \Delta_i + N_{t+1},

        z_{t+1} = \Pi_C\big(z_t - s_z \tilde G_t / \beta\big), \quad
        y_{t+1} = \Pi_C\big(x_t - \tilde G_t / (\beta \eta_t)\big), \quad
        x_{t+1} = (1 - \tau_{t+1}) y_{t+1} + \tau_{t+1} z_{t+1},

    with :math:`\tau_{t+1} = 2/(t+3)` (paper: :math:`\tau_t = \eta_t / \eta_{0:t}`) and
    :math:`N_s` the streaming tree's prefix noise (:mod:`dpsco_core.tree`). Each example's
    gradient is taken at exactly two points (:math:`2n - B` evaluations with ``T B = n``); the
    output is :math:`y_T`.

    Parameters
    ----------
    problem : Problem
        Data, a differentiable loss (squared, logistic, Huber) and no penalty or an L2 penalty
        (its gradient is data-independent and added to :math:`\tilde G_t` without noise).
    epsilon : float
        In (0, inf]; inf runs without noise (clipping still applies unless ``clip=inf``).
    delta : float
        In (0, 1); the note proposes ``min(1e-5, n^-1.1)``.
    beta : float
        Inverse step :math:`\beta > 0`; the theory needs :math:`\beta \ge M` (smoothness),
        but in practice it is tuned (note 003, sections 10.3 and 11).
    batch_size : int, optional
        ``B`` in [1, n]; overrides ``preset``.
    preset : {"sqrt", "quarter"}, default="sqrt"
        ``"sqrt"``: ``B = floor(sqrt(n))`` (Theorem 14's shape, ``T ~ B``); ``"quarter"``:
        ``T = ceil(2 n^{1/4})`` and ``B = n // T`` (Theorem 10's shape). Then
        ``T = n // B`` and the last ``n - T B`` examples of the permutation are unused.
    clip : float, default=1.0
        :math:`C_\Delta` in (0, inf]: the l2 clip of each per-example *difference* (not of each
        gradient: note 003, section 4.2). ``inf`` only with ``epsilon=inf``.
    radius : float, optional
        :math:`R > 0`: constrain to the l2 ball (None: unconstrained, outside the theory).
    z_step_scale : float, default=0.5
        :math:`s_z` in (0, inf): the z-step is :math:`s_z \eta_t / \beta`. 1.0 is the paper's
        literal Algorithm 1; 0.5 is what its potential-function proof supports (note 003,
        section 2 and erratum 2).
    variance_reduced_tree : bool, default=False
        Honaker's estimator over the full tree (same privacy, less prefix noise).
    neighboring_relation : {"zero_out", "replace_one"}, default="zero_out"
        Zero-out (the paper's relation, leaf sensitivity :math:`C_\Delta / B`) or replace-one
        (:math:`2 C_\Delta / B`). Add/remove-one raises ValueError.
    random_state : None, int, SeedSequence or Generator
        Seeds the permutation and the noise. None (default): fresh OS entropy.
    n_threads : int, optional
        Threads for the kernels (None: all cores). Results do not depend on it.
    record_history : bool, default=True
        Record :math:`F(y_t)` after rounds 1, 2, 4, ... and T (about log2 T evaluations), and
        return ``stats["clipped_fraction"]``: exact, not private, listed in
        ``privacy.non_private_outputs``.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event (a tree-aggregation
        event: use ``accountant="rdp"``, ``"gdp"`` or ``"basic-composition"``, under zero-out
        or replace-one) before the data are read; refused runs read nothing.
    executor : BlockExecutor or DaskExecutor, optional
        Compute each round's clipped difference sum on row blocks, in process or on a Dask
        cluster (:mod:`dpsco_core.parallel.blocked`); the permutation and the tree noise stay
        here. None (default): the in-process kernel, or the executor of a
        :class:`~dpsco_core.parallel.BlockedProblem`.

    Returns
    -------
    Result
        ``coef`` = :math:`y_T`; ``privacy`` (the GDP accountant over ``privacy.event``);
        ``history``; ``stats`` with ``x_last``, ``z_last`` (post-processing, also private),
        ``batch_size``, ``rounds`` (T), ``gradient_evaluations`` (2 T B - B),
        ``unused_samples``, ``mu``, ``rho`` (:math:`\mu^2/2`), ``noise_multiplier``,
        ``noise_scale`` (node std on the prefix sums of batch means), ``levels``,
        ``time``; with ``record_history=True`` also ``clipped_fraction`` (computed from the
        data, listed in ``privacy.non_private_outputs``).

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument).
    RuntimeError
        If the accountant's epsilon exceeds the target (a calibration bug; never silent).

    Notes
    -----
    **Privacy guarantee.** :math:`\mu`-GDP, reported as :math:`(\varepsilon, \delta)`-DP by the
    exact conversion (Dong, Roth and Su 2019, Cor. 2.13; not the classical formula, which fails
    for large :math:`\mu`, note 003 section 6.3), under zero-out (default) or replace-one
    adjacency. A record enters exactly one leaf :math:`\Delta_t`, changing it by at most
    :math:`C_\Delta / B` (zero-out; twice that for replace-one), and a leaf lies in at most
    ``levels = bit_length(T)`` tree nodes, so the node noise
    :math:`\sigma = (C_\Delta / B) \sqrt{\mathrm{levels}} / \mu` with
    :math:`\mu` = ``gdp_mu(epsilon, delta)`` gives :math:`\mu`-GDP (Lemma 8 with the index
    fixes of note 003 section 4.1), also for the adaptively computed leaves. Event:
    ``SingleEpochTreeAggregationDpEvent(sqrt(levels) / mu, T)``, accounted by
    :class:`~dpsco_core.privacy.accountants.GdpAccountant`. Clipping is enforced by the
    kernel, so the guarantee needs neither convexity nor the paper's high-probability events;
    all iterates are post-processing. Assumptions (in the report): n public, a secret
    data-independent permutation, the ``n - T B`` remainder unused; :math:`\beta`, ``clip``
    and ``radius`` are not tuned on the private data (tuning is not accounted). Running past
    T is impossible (the tree refuses).

    References
    ----------
    C. A. Choquette-Choo, A. Ganesh and A. Thakurta, "Near-optimal rates for O(1)-smooth DP-SCO
    with a single epoch and large batches", 2024: Algorithm 1, Lemma 8, Theorems 10 and 14.
    J. Dong, A. Roth and W. Su, "Gaussian differential privacy", 2019, Cor. 2.13.
    J. Honaker, "Efficient use of differentially private binary trees", 2015.

    Examples
    --------
    >>> import numpy as np, dpsco_core as dp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(10_000, 5)) / np.sqrt(5)
    >>> y = X @ np.ones(5) + rng.uniform(-1, 1, 10_000)
    >>> prob = dp.Problem(X, y, loss="half_squared")
    >>> res = dp.solvers.dp_srgd(prob, epsilon=1.0, delta=1e-6, beta=1.0, radius=5.0,
    ...                          random_state=0)
    >>> res.stats["rounds"], res.stats["batch_size"], res.privacy.epsilon <= 1.0
    (100, 100, True)
    """
    problem, epsilon, delta, B, T, beta, clip, radius, relation, ridge = check_single_epoch_args(
        problem, epsilon=epsilon, delta=delta, batch_size=batch_size, preset=preset, beta=beta,
        clip=clip, radius=radius, neighboring_relation=neighboring_relation, solver="dp_srgd")
    executor = resolve_executor(executor, problem)
    z_step_scale = check_scalar(z_step_scale, "z_step_scale", low=0.0)
    # work of one round's kernel call: two margins per batch row (issue 18: serial below
    # SERIAL_WORK, idle CPUs only on a busy machine)
    n_threads = effective_n_threads(n_threads, work=2 * B * problem.n_features)
    mu, s, noise_scale, event = single_epoch_calibration(epsilon, delta, relation, clip, B, T,
                                                         tree=True)
    # The steps (at most T / beta, z_step_scale T / beta for z) times the node noise must not
    # overflow the iterates: public constants, refused before the charge.
    if not max(1.0, z_step_scale) * T / beta * noise_scale <= MAX_NOISE_SCALE:
        raise ValueError(f"beta={beta!r} is too small for this run: the steps (up to "
                         f"T / beta with T={T}) times the noise standard deviation "
                         f"{noise_scale:.3g} are beyond {MAX_NOISE_SCALE:g} (the iterates "
                         "would overflow); use a larger beta or epsilon.")
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before reading data

    start = time.perf_counter()
    run = run_single_epoch(problem, B=B, T=T, beta=beta, clip=clip, radius=radius,
                           noise_scale=noise_scale, estimator="srg", update="accelerated",
                           z_step_scale=z_step_scale, ridge=ridge,
                           variance_reduced_tree=variance_reduced_tree,
                           random_state=random_state, n_threads=n_threads,
                           record_steps=record_points(T, record_history), executor=executor)
    elapsed = time.perf_counter() - start
    report = single_epoch_report(event, delta=delta, relation=relation, target_epsilon=epsilon,
                                 assumptions=(), random_state=random_state)
    stats = {
        "time": elapsed, "x_last": run["x"], "z_last": run["z"], "batch_size": B, "rounds": T,
        "gradient_evaluations": run["gradient_evaluations"],
        "unused_samples": problem.n_samples - run["used"], "mu": mu, "rho": mu * mu / 2.0,
        "noise_multiplier": s, "noise_scale": noise_scale, "levels": T.bit_length(), "beta": beta,
        "clip": clip, "z_step_scale": z_step_scale,
        "variance_reduced_tree": bool(variance_reduced_tree),
    }
    if record_history:      # computed from the data: with the history, listed as not private
        stats["clipped_fraction"] = run["clipped_fraction"]
    return Result(coef=run["y"], privacy=report,
                  history=make_history(problem, run, B, record_history), stats=stats)


def _c_dp(n, delta):
    # Eq. (19): 4 sqrt(2) log^{3/2}(n) sqrt(ln(2n/delta)) ln(2.5/delta); log base 2 assumed for
    # log^{3/2}(n) (the paper leaves it unstated; note 003 section 5.1).
    return (4.0 * math.sqrt(2.0) * math.log2(n) ** 1.5 * math.sqrt(math.log(2.0 * n / delta))
            * math.log(2.5 / delta))


def theory_params(preset, *, n, p, epsilon, delta, L, R, M=None, c_M=1.0):
    r"""The paper's parameters, literally: Eq. (19) (realizable) or Theorem 14 (general).

    Parameters
    ----------
    preset : {"realizable", "R", "general", "NR"}
        ``"realizable"`` (Eq. (19), Cor. 9, Thm 10; ``x^\dagger \in C``) or ``"general"``
        (Lemma 11, Cor. 12-13, Thm 14).
    n, p : int
        Sample size and dimension.
    epsilon, delta : float
        Privacy budget.
    L, R : float
        Lipschitz constant of the loss and radius of C.
    M : float, optional
        Smoothness (``"general"``: checked against ``beta >= 2 M T``; default ``c_M L / R``).
    c_M : float, default=1.0
        The constant of ``M <= c_M L / R`` ("O(1)-smooth").

    Returns
    -------
    dict
        ``batch_size`` (B, a float: it may be below 1), ``rounds`` (T), ``beta``, ``clip``
        (:math:`C_\Delta`), ``noise_scale`` (the paper's node std in parameter units, Cor. 9
        or 13), ``c_DP`` (realizable), ``b_max`` (realizable), ``feasible`` (B >= 1 and
        T <= n).

    Warns
    -----
    TheoryWarning
        If the parameters are infeasible (B < 1 or T > n), as Eq. (19) is for every practical
        n (note 003, section 11).

    Notes
    -----
    Realizable (Eq. (19)): :math:`c_{DP} = 4\sqrt2 \log_2^{3/2}(n) \sqrt{\ln(2n/\delta)}
    \ln(2.5/\delta)`, :math:`T = c_{DP} n^{1/4}`, :math:`B = n/T`,
    :math:`\beta = c_{DP}^2 L \max(1, \sqrt p/(\varepsilon\sqrt n))/R`,
    :math:`C_\Delta = c_{DP} L`, :math:`\sigma = c_{DP} L \sqrt{\log_2 T \ln(2.5/\delta)}
    /(\varepsilon B \beta)`, :math:`b_{max} = c_{DP}^2 L \sqrt p/(\varepsilon B \beta)`.
    General (Thm 14): :math:`B = \lfloor\sqrt n\rfloor`, :math:`T = n // B`,
    :math:`\beta = (16 c_M + 8) L n^{3/2}/(R B^2)`, :math:`C_\Delta = (8 c_M + 4) L`,
    :math:`\sigma = (16\sqrt2 c_M + 8\sqrt2) L \sqrt{\log_2 T \ln(2.5/\delta)}
    /(\varepsilon B \beta)`. These calibrations use the classical GDP conversion of the paper;
    :func:`dp_srgd` calibrates exactly instead (note 003, errata 4 and 5).
    """
    n = check_int(n, "n", low=2)
    p = check_int(p, "p", low=1)
    epsilon = check_scalar(epsilon, "epsilon", low=0.0)
    delta = check_scalar(delta, "delta", low=0.0, high=1.0)
    L = check_scalar(L, "L", low=0.0)
    R = check_scalar(R, "R", low=0.0)
    c_M = check_scalar(c_M, "c_M", low=0.0)
    if preset in ("realizable", "R"):
        c = _c_dp(n, delta)
        T = c * n ** 0.25
        B = n / T
        beta = c * c * L * max(1.0, math.sqrt(p) / (epsilon * math.sqrt(n))) / R
        out = {"c_DP": c, "rounds": T, "batch_size": B, "beta": beta, "clip": c * L,
               "noise_scale": c * L * math.sqrt(max(math.log2(T), 0.0) * math.log(2.5 / delta))
               / (epsilon * B * beta),
               "b_max": c * c * L * math.sqrt(p) / (epsilon * B * beta)}
    elif preset in ("general", "NR"):
        B = float(math.isqrt(n))
        T = float(n // int(B))
        beta = (16.0 * c_M + 8.0) * L * n ** 1.5 / (R * B * B)
        out = {"rounds": T, "batch_size": B, "beta": beta, "clip": (8.0 * c_M + 4.0) * L,
               "noise_scale": (16.0 * c_M + 8.0) * math.sqrt(2.0) * L
               * math.sqrt(math.log2(T) * math.log(2.5 / delta)) / (epsilon * B * beta)}
        M = c_M * L / R if M is None else check_scalar(M, "M", low=0.0)
        out["beta_at_least_2MT"] = beta >= 2.0 * M * T
    else:
        raise ValueError("preset must be one of {'realizable', 'R', 'general', 'NR'}; got "
                         f"{preset!r}.")
    out["feasible"] = out["batch_size"] >= 1.0 and out["rounds"] <= n
    if not out["feasible"]:
        warnings.warn(f"theory_params({preset!r}, n={n}): batch size B = {out['batch_size']:.3g}"
                      f" and T = {out['rounds']:.3g} rounds are infeasible (B < 1 or T > n); "
                      "the paper's constants only apply for much larger n (note 003, section "
                      "11).", TheoryWarning, stacklevel=external_stacklevel())
    return out
