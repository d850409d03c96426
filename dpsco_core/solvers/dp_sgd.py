r"""Proximal DP-SGD: the baseline of the DP-CD paper (Mangold et al., ICML 2022, section 6).

Implementation notes: ``shared/notes/002_dpcd.md`` (sections 4, 5.3, 5.4 and 9.4). The compiled
kernel is ``dpsco_core._kernels._batch``; its NumPy twin ``dpsco_core.reference.batch``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from .._config import effective_n_threads
from .._kernels import _batch
from .._random import block_bit_generators, check_random_state, descendant_bit_generator
from .._validation import check_int, check_scalar, check_vector
from ..parallel.blocked import resolve_executor
from ..privacy._checks import check_conversion
from ..privacy.budget import Budget, spend
from ..privacy.calibration import calibrate_gaussian, calibrate_sampled_gaussian, steps_from_epochs
from ..privacy.calibration import calibrate_sampled_gaussian_pld
from ..privacy.events import (GaussianDpEvent, NeighboringRelation, NonPrivateDpEvent,
                              PoissonSampledDpEvent, SelfComposedDpEvent)
from ..result import History, Result
from ._common import (check_privacy_budget, check_problem, check_relation, normaliser,
                      objective_or_inf, public_n_assumptions, report_from_event,
                      sensitivity_factor)
from ._common import MAX_NOISE_SCALE, check_noise_scale
from ._public_constants import SMOOTHNESS_MODES, data_constant

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike
    from ..parallel.blocked import BlockExecutor
    from ..problems import Problem

__all__ = ["dp_sgd", "dp_sgd_schedule"]

SMOOTHNESS_CONDITION = ("the global smoothness constant beta of the step gamma / beta is "
                        "computed from the data and not accounted (given, as in the paper's "
                        "DP-SGD baseline); declare public bounds on the Problem or pass "
                        "smoothness= for an unconditional guarantee")
#: Former name (the statement moved from the report's assumptions to its conditions).
SMOOTHNESS_ASSUMPTION = SMOOTHNESS_CONDITION
PUBLIC_SMOOTHNESS_ASSUMPTION = "the smoothness constant beta of the step is public ({source})"
POISSON_ASSUMPTION = ("Poisson batches are drawn as geometric gaps between sampled rows (exactly "
                      "Bernoulli(q) membership per row and step, in real arithmetic)")
SHUFFLE_ASSUMPTION = ("shuffled fixed-size batches: no amplification by sampling is claimed; "
                      "each epoch (disjoint batches of a secret, data-independent permutation, n "
                      "fixed) is accounted as one Gaussian release of the full sensitivity")


def dp_sgd_schedule(n_samples, passes, *, sampling="poisson", batch_size=None,
                    sample_rate=None):
    """Sampling parameters of a DP-SGD run: ``(q, b, steps, steps_per_pass)``.

    ``n_samples`` is the public record count (the solver passes
    :func:`~dpsco_core.solvers._common.normaliser`: ``public_n`` under add/remove-one).
    Poisson: rate ``q`` (``sample_rate``, or ``batch_size / n`` for an expected batch size),
    ``b = q n`` (the normalisation), ``steps = ceil(passes / q)``. Shuffle: batch size ``b``
    (``batch_size``, or ``round(sample_rate n)``), ``n // b`` batches per epoch,
    ``steps = ceil(passes * (n // b))``, ``q = b / n``. ``steps_per_pass`` is where the history
    records the objective. Exactly one of ``batch_size`` and ``sample_rate`` must be given.

    Parameters
    ----------
    n_samples : int
        Public record count.
    passes : float
        Data passes.
    sampling : {"poisson", "shuffle"}, default="poisson"
        Batch sampling.
    batch_size : int, optional
        (Expected) batch size.
    sample_rate : float, optional
        Poisson rate q.

    Returns
    -------
    tuple
        ``(q, b, steps, steps_per_pass)``.
    """
    passes = check_scalar(passes, "passes", low=0.0)
    if (batch_size is None) == (sample_rate is None):
        raise ValueError("give exactly one of batch_size and sample_rate; got "
                         f"batch_size={batch_size!r}, sample_rate={sample_rate!r}.")
    n = n_samples
    if sampling == "poisson":
        if batch_size is not None:
            q = check_int(batch_size, "batch_size", low=1, high=n) / n
        else:
            q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, high_open=False)
        steps = steps_from_epochs(passes, q)
        return q, q * n, steps, max(1, round(1.0 / q))
    if sampling == "shuffle":
        if batch_size is not None:
            b = check_int(batch_size, "batch_size", low=1, high=n)
        else:
            q = check_scalar(sample_rate, "sample_rate", low=0.0, high=1.0, high_open=False)
            b = min(n, max(1, round(q * n)))
        per_epoch = n // b
        return b / n, float(b), steps_from_epochs(passes, 1.0 / per_epoch), per_epoch
    raise ValueError(f"sampling must be 'poisson' or 'shuffle'; got {sampling!r}.")


def _smoothness(problem, smoothness, epsilon):
    r"""Check ``smoothness`` now; return a function giving beta of the step gamma / beta and
    the report's assumptions and conditions.

    ``"public"``: :math:`\beta \le s_\ell R'^2` from the problem's public bounds
    (:mod:`dpsco_core.public_bounds`). ``"exact"``: :math:`s_\ell \lambda_{\max}(X^\top X)/n`
    from the data (warns). ``"auto"``: the first when the problem has public bounds, else the
    second. A number: a public beta. The arguments are checked before anything is charged to
    a budget; the data are read only when the returned function is called.
    """
    if isinstance(smoothness, str):
        if smoothness not in SMOOTHNESS_MODES:
            raise ValueError(f"smoothness must be one of {SMOOTHNESS_MODES} or a public beta in "
                             f"(0, inf); got {smoothness!r}.")
        bounds = problem.public_bounds
        if smoothness == "public" and bounds is None:
            raise ValueError("smoothness='public' needs a problem with public bounds: build it "
                             "with Problem(X, y, ..., bounds=(lower, upper)) and/or row_norm=.")
        if smoothness != "exact" and bounds is not None:
            beta = bounds.smoothness(problem.loss, problem.n_features)
            return lambda: (beta, [PUBLIC_SMOOTHNESS_ASSUMPTION.format(source=repr(bounds))], [])
        if not math.isfinite(epsilon):     # a non-private run claims nothing to condition
            return lambda: (problem.smoothness(), [], [])

        def read_from_data():
            condition = data_constant("the smoothness constant beta of DP-SGD's step gamma / "
                                      "beta", SMOOTHNESS_CONDITION)
            return problem.smoothness(), [], [condition]
        return read_from_data
    beta = check_scalar(smoothness, "smoothness", low=0.0)
    return lambda: (beta, [PUBLIC_SMOOTHNESS_ASSUMPTION.format(source="passed as smoothness=")], [])


def _relation(neighboring_relation, sampling):
    # Default: zero-out for Poisson (the same sampled-Gaussian RDP as add/remove-one, with the
    # dataset's n public, so no public_n is needed), replace-one for shuffle.
    if neighboring_relation is None:
        return (NeighboringRelation.ZERO_OUT if sampling == "poisson"
                else NeighboringRelation.REPLACE_ONE)
    relation = check_relation(neighboring_relation)
    if sampling == "poisson" and relation is NeighboringRelation.REPLACE_ONE:
        raise ValueError(
            "neighboring_relation='replace_one' is not supported with sampling='poisson': the "
            "Poisson-subsampled Gaussian analysis (Mironov, Talwar and Zhang 2019) holds under "
            "add_or_remove_one and zero_out only. Use one of those, or sampling='shuffle' "
            "(accounted under replace_one with sensitivity 2 clip).")
    if sampling == "shuffle" and relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ValueError(
            "neighboring_relation='add_or_remove_one' is not supported with sampling='shuffle': "
            "the fixed-size batch partition is analysed for a fixed n (replace_one or "
            "zero_out). Use one of those, or sampling='poisson'.")
    return relation


def _pld_noise(epsilon, delta, sampling, q, steps, epochs):
    """``(s, event)`` of the run calibrated under the PLD accountant (``accountant="pld"``)."""
    if sampling == "poisson":
        s = calibrate_sampled_gaussian_pld(target_epsilon=epsilon, target_delta=delta,
                                           sample_rate=q, steps=steps)
        return s, SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps)
    s = calibrate_sampled_gaussian_pld(target_epsilon=epsilon, target_delta=delta,
                                       sample_rate=1.0, steps=epochs)
    return s, SelfComposedDpEvent(GaussianDpEvent(s), epochs)


def dp_sgd(problem: Problem, *, epsilon: float, delta: float, passes: float,
           batch_size: int | None = None, sample_rate: float | None = None, step: float = 1.0,
           clip: float = 1.0, sampling: str = "poisson",
           neighboring_relation: str | NeighboringRelation | None = None,
           public_n: int | None = None, conversion: str = "improved",
           coef_init: ArrayLike | None = None, random_state: RandomStateLike = None,
           n_threads: int | None = None, record_history: bool = True,
           smoothness: str | float = "auto", budget: Budget | None = None,
           accountant: str = "rdp", executor: BlockExecutor | None = None) -> Result:
    r"""Differentially private proximal SGD with per-sample clipping (the DP-SGD baseline).

    Minimizes :math:`F(w) = \frac1n \sum_i \ell(\langle x_i, w\rangle, y_i) + \psi(w)` by
    ``steps`` proximal steps (note 002, section 4, Abadi et al. 2016 with a prox):

    .. math::

        g = \frac{1}{b}\Big(\sum_{i \in B_k} \mathrm{clip}\big(\ell'(\langle x_i, w\rangle,
        y_i)\, x_i, C\big) + \mathcal N(0, \sigma^2 I_p)\Big), \qquad
        w \leftarrow \mathrm{prox}_{\eta \psi}(w - \eta g),

    with :math:`\mathrm{clip}(v, C) = v \min(1, C / \|v\|_2)`, :math:`\eta = \gamma / \beta`
    (:math:`\beta` from ``smoothness``), :math:`b = q m` (Poisson: the expected batch
    size, with :math:`m` the public record count: the dataset's n under zero-out, ``public_n``
    under add/remove-one) or the batch size (shuffle), and :math:`\sigma = s\, \Delta` with
    :math:`s` the
    calibrated noise multiplier and :math:`\Delta` the sensitivity of the clipped sum
    (:math:`C` under add/remove-one and zero-out, :math:`2C` under replace-one). The last
    iterate is returned.

    Parameters
    ----------
    problem : Problem
        Data, a smooth loss (squared, logistic, Huber: :math:`\beta` must exist) and a
        separable penalty (L1, L2, ElasticNet, Box or none). Dense X, float64 or float32, in
        any memory order (C, Fortran, strided) is read without a copy: each block of 256 batch
        rows is gathered into a small float64 buffer (exact), so with C-ordered, strided or
        float32 X the iterates are bitwise the kernel's on
        ``np.ascontiguousarray(X, dtype=np.float64)``; a float64 Fortran-ordered X, and CSC
        against CSR input (sparse X is read as CSR, float64), agree to about 1e-17 but not
        bitwise (3.5e-18 measured on 400 x 6, session 16; the source of the last bits is not
        yet found). C order is the fast layout: float32 C costs about 1.2x float64 C per
        epoch, a Fortran-ordered X 3-4x (each sampled row touches p cache lines; measured
        at 1e6 x 100, bench/README.md memory section), so with memory to spare pass
        ``np.ascontiguousarray(X)`` (one copy, about a third of a C-order epoch).
    epsilon : float
        Privacy budget in (0, inf]; ``inf`` runs the non-private algorithm (no noise).
    delta : float
        In (0, 1); the paper uses 1/n^2.
    passes : float
        Data passes, > 0: ``ceil(passes / q)`` steps (Poisson) or ``ceil(passes * (n // b))``
        (shuffle).
    batch_size : int, optional
        In [1, m]: the expected batch size ``q m`` (Poisson; m = n, or ``public_n`` under
        add/remove-one) or the batch size (shuffle).
    sample_rate : float, optional
        In (0, 1]: the Poisson rate ``q`` (shuffle: ``b = round(q n)``). Give exactly one of
        ``batch_size`` and ``sample_rate``.
    step : float, default=1.0
        Step scale :math:`\gamma` > 0; the step is :math:`\gamma / \beta`.
    clip : float, default=1.0
        Per-sample clipping norm :math:`C` in (0, inf]; inf only with ``epsilon=inf``.
    sampling : {"poisson", "shuffle"}, default="poisson"
        ``"poisson"``: each row joins each batch independently with probability q (the
        analysed mechanism). ``"shuffle"``: a secret permutation per epoch cut into
        ``n // b`` batches of size b (the last ``n mod b`` rows of each permutation are
        skipped); accounted without amplification (see Notes).
    neighboring_relation : {"zero_out", "add_or_remove_one", "replace_one"}, optional
        Default: ``"zero_out"`` for Poisson (a record replaced by one that contributes nothing:
        the sampled-Gaussian analysis holds as under add/remove-one and the dataset's n is
        public), ``"replace_one"`` for shuffle. ``"add_or_remove_one"`` (Poisson only) needs
        ``public_n``: n is then private, and the rate ``batch_size / public_n`` and the
        normalisation ``q * public_n`` use the public count (dividing by the private
        expected batch ``q n`` would change the released gradient's scale between
        neighbours; the rule is in :mod:`dpsco_core.solvers._common`). Poisson +
        ``"replace_one"`` and shuffle + ``"add_or_remove_one"`` raise ValueError (no valid
        analysis is implemented).
    public_n : int, optional
        Public record count, required under add/remove-one (a bound or estimate that does
        not come from the data); under the other relations None or n.
    conversion : {"improved", "mironov"}, default="improved"
        RDP -> (epsilon, delta) conversion, for the calibration and the report.
    coef_init : array-like of shape (n_features,), optional
        Starting point (default 0); it must not depend on the private data.
    random_state : None, int, SeedSequence or Generator
        None (default) draws fresh OS entropy, as a private release must.
    n_threads : int, optional
        Threads for the batch gradient (None: all cores). Results do not depend on it.
    record_history : bool, default=True
        Record F(w) at the start and after every pass (one objective evaluation each), and
        return the data-derived diagnostics ``stats["clipped_fraction"]`` and
        ``stats["mean_batch_size"]``; all are exact, not private, and listed in
        ``privacy.non_private_outputs``. False records nothing (empty history): the result
        then holds only what the report covers.
    smoothness : {"auto", "public", "exact"} or float, default="auto"
        The :math:`\beta` of the step :math:`\gamma / \beta`. ``"public"``: the worst case
        :math:`s_\ell R'^2` of the problem's public bounds (:mod:`dpsco_core.public_bounds`;
        ValueError without bounds). ``"exact"``: ``problem.smoothness()``, read from the data
        and not accounted, as in the paper's baseline: it warns (``PrivacyLeakWarning``) and
        the report is conditional. ``"auto"`` (default): ``"public"`` when the problem has
        public bounds, else ``"exact"`` with its warning (the same default, and the same
        reasons, as :func:`~dpsco_core.solvers.dp_cd.dp_cd`). A number in (0, inf): a public
        beta.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event before the data are
        read; a run that would exceed it raises
        :class:`~dpsco_core.exceptions.PrivacyBudgetError` and reads nothing.
    accountant : {"rdp", "pld"}, default="rdp"
        Accountant of the calibration and of the report. ``"pld"``: dp-accounting's
        pessimistic privacy loss distributions
        (:class:`~dpsco_core.privacy.accountants.PldAccountant`, value discretisation 1e-4,
        :func:`~dpsco_core.privacy.calibration.calibrate_sampled_gaussian_pld`): the same
        mechanism, a tighter analysis, so less noise for the same (epsilon, delta) (4.6 %
        less for 50 epochs at q = 256/45312, epsilon = 1, delta = 1/n^2), for a few seconds of
        calibration; ``privacy.accountant`` is then ``"pld"`` and ``conversion`` is unused.
        Needs dp-accounting (``pip install 'dpsco-core[pld]'``). A ``budget`` keeps its own
        accountant.
    executor : BlockExecutor or DaskExecutor, optional
        Run the batch gradients on row blocks (:mod:`dpsco_core.parallel.blocked`): in process
        (``BlockExecutor``) or on the workers of a Dask cluster (``DaskExecutor``), with the
        noise added here from this call's noise stream and the same normaliser. Poisson
        batches are then drawn per block (the same mechanism, other bits than the default
        fused kernel); the two executors agree bitwise. None (default): the fused in-process
        kernel, or the executor of a :class:`~dpsco_core.parallel.BlockedProblem`. Full-batch
        DP-GD is ``sample_rate=1.0``.

    Returns
    -------
    Result
        ``coef``; ``privacy`` (recomputed by the RDP accountant from ``privacy.event``);
        ``history`` (passes, objective); ``stats`` (noise multiplier, noise scale, step,
        beta, steps, sample rate, clipped fraction, mean batch size, time). ``history`` and
        ``stats`` are diagnostics computed from the data and are not covered by the guarantee.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument).
    PrivacyBudgetError
        If no noise multiplier meets the budget.
    RuntimeError
        If the accountant's epsilon exceeds the target (a calibration bug; never silent).

    Notes
    -----
    **Privacy guarantee.** :math:`(\varepsilon, \delta)`-DP.

    * ``sampling="poisson"`` (add/remove-one, or zero-out): ``steps`` adaptive compositions of
      the Poisson-subsampled Gaussian mechanism with rate q and noise multiplier s on the
      clipped sum (sensitivity C), event
      ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps)``, RDP of
      Mironov, Talwar and Zhang (2019), converted with ``conversion``; s is the smallest
      noise multiplier meeting the budget (``calibrate_sampled_gaussian``).
    * ``sampling="shuffle"`` (replace-one: sensitivity 2C; zero-out: C): within an epoch the
      batches are disjoint, so a changed record enters exactly one step; given the
      permutation (independent of the data, n fixed), the other steps have identical
      conditional distributions and the epoch's RDP is that of one Gaussian release
      (chain rule of adaptive composition), and mixing over the secret permutation cannot
      increase it (joint quasi-convexity of Renyi divergence). Event
      ``SelfComposedDpEvent(GaussianDpEvent(s), epochs)`` with ``epochs = ceil(steps /
      (n // b))``; no amplification by the shuffling is claimed (a valid, loose analysis).

    Every iterate may be released. Clipping is enforced by the kernel. The smoothness
    constant :math:`\beta` is public with public bounds or a number; read from the data
    (``"exact"``, or ``"auto"`` without bounds) it is not accounted: a ``PrivacyLeakWarning``
    and ``privacy.conditions`` say so (``privacy.unconditional`` is False). Not accounted
    either: hyperparameter tuning, feature standardisation. Under add/remove-one the rate and
    the normalisation :math:`q m` use the caller's public count :math:`m` = ``public_n``, never
    the private n.

    References
    ----------
    Abadi et al., "Deep learning with differential privacy", CCS 2016. Mironov, Talwar and
    Zhang, "Renyi differential privacy of the sampled Gaussian mechanism", 2019. Mangold,
    Bellet, Salmon and Tommasi, ICML 2022, section 6 (the proximal DP-SGD baseline).

    Examples
    --------
    >>> import dpsco_core as dp
    >>> X, y = dp.datasets.load_electricity()
    >>> bounds = ([0] * 8, [1, 7, 1, 1, 1, 1, 1, 1])   # public: Elec2's scaling, day 1 to 7
    >>> prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3), bounds=bounds)
    >>> res = dp.dp_sgd(prob, epsilon=1.0, delta=1 / len(y) ** 2, passes=1, batch_size=256,
    ...                 random_state=0)
    >>> res.privacy.epsilon <= 1.0, res.privacy.unconditional
    (True, True)
    """
    problem = check_problem(problem)
    executor = resolve_executor(executor, problem)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    n, p = problem.n_samples, problem.n_features
    relation = _relation(neighboring_relation, sampling)
    m = normaliser(relation, n, public_n)
    q, norm, steps, steps_per_pass = dp_sgd_schedule(
        m, passes, sampling=sampling, batch_size=batch_size, sample_rate=sample_rate)
    conversion = check_conversion(conversion)
    if accountant not in ("rdp", "pld"):
        raise ValueError(f"accountant must be 'rdp' or 'pld'; got {accountant!r}.")
    step = check_scalar(step, "step", low=0.0)
    clip = check_scalar(clip, "clip", low=0.0, allow_inf=True)
    if math.isinf(clip) and math.isfinite(epsilon):
        raise ValueError("clip must be finite for a private run (an unbounded gradient has "
                         "infinite sensitivity); clip=inf needs epsilon=inf.")
    coef = np.zeros(p) if coef_init is None else check_vector(coef_init, "coef_init", copy=True)
    if coef.shape[0] != p:
        raise ValueError(f"coef_init must have length n_features={p}; got {coef.shape[0]}.")
    # work of one parallel region: a batch's rows times p (serial below the threshold, and
    # no more threads than idle CPUs on a busy machine; results do not depend on it)
    n_threads = effective_n_threads(n_threads, work=max(1, int(norm)) * p)
    read_beta = _smoothness(problem, smoothness, epsilon)
    assumptions = []

    batch_size_int = int(norm) if sampling == "shuffle" else 0
    if sampling == "poisson":
        assumptions += [POISSON_ASSUMPTION, *public_n_assumptions(relation, m)]
    else:
        assumptions.append(SHUFFLE_ASSUMPTION)
    epochs = -(-steps // steps_per_pass)
    if math.isfinite(epsilon):
        if sampling == "poisson":
            s = calibrate_sampled_gaussian(target_epsilon=epsilon, target_delta=delta,
                                           sample_rate=q, steps=steps, conversion=conversion)
            event = SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps)
        else:
            s = calibrate_gaussian(target_epsilon=epsilon, target_delta=delta, steps=epochs,
                                   accountant="rdp", conversion=conversion)
            event = SelfComposedDpEvent(GaussianDpEvent(s), epochs)
        if accountant == "pld":     # the same mechanism, less noise: the PLD analysis is tighter
            s, event = _pld_noise(epsilon, delta, sampling, q, steps, epochs)
        noise_scale = check_noise_scale(s * sensitivity_factor(relation) * clip, epsilon)
    else:
        s, noise_scale, event = 0.0, 0.0, NonPrivateDpEvent()
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before reading data
    beta, beta_assumptions, conditions = read_beta()
    assumptions = beta_assumptions + assumptions
    if not beta > 0.0:
        raise ValueError("the problem's smoothness constant beta is 0 (X is all zeros): the "
                         "step gamma / beta is undefined.")
    eta = step / beta
    if not eta * noise_scale / norm <= MAX_NOISE_SCALE:
        # the noise each step adds to coef: a tiny beta (X near 0) makes step / beta huge
        # no value in the message: beta may be read from the data (smoothness="exact"/"auto")
        raise ValueError(f"step / beta times the noise standard deviation per batch is beyond "
                         f"{MAX_NOISE_SCALE:g}: coef would overflow; rescale X (beta comes from "
                         "X or its public bounds) or use a smaller step or a larger epsilon.")

    start = time.perf_counter()
    seed_seq = check_random_state(random_state)
    if executor is not None:        # the executors read the sampling stream's seed sequence
        sampling_generator, noise_generator = block_bit_generators(seed_seq, 2)
    else:   # the same two block generators, seeded in C (issue 18: fixed cost per call)
        sampling_generator = descendant_bit_generator(seed_seq, (0,))
        noise_generator = descendant_bit_generator(seed_seq, (1,))
    kind = _batch.POISSON if sampling == "poisson" else _batch.SHUFFLE
    row_norms = None if executor is not None else problem.row_norms()
    if executor is not None:
        run = executor.sgd_runner(
            problem, coef, sampling=sampling, q=q, batch_size=batch_size_int, eta=eta,
            clip=clip, noise_scale=noise_scale, norm=norm,
            sampling_generator=sampling_generator, noise_generator=noise_generator)
    elif problem.is_sparse:
        X = problem.X_csr()
        run = lambda k: _batch.sgd_csr(  # noqa: E731
            X.data, X.indices, X.indptr, problem.y, row_norms, problem.loss.kind,
            problem.loss.param, problem.penalty.kind, *problem.penalty.params, coef, k, kind, q,
            batch_size_int, eta, clip, noise_scale, norm, sampling_generator, noise_generator,
            n_threads)
    else:
        X = problem.X_kernel_rows()     # float64/float32, any layout: never copied
        run = lambda k: _batch.sgd_dense(  # noqa: E731
            X, problem.y, row_norms, problem.loss.kind, problem.loss.param,
            problem.penalty.kind, *problem.penalty.params, coef, k, kind, q, batch_size_int,
            eta, clip, noise_scale, norm, sampling_generator, noise_generator, n_threads)
    history_passes, history_objective = [], []
    if record_history:
        history_passes.append(0.0)
        history_objective.append(objective_or_inf(problem, coef))
    n_clipped = n_sampled = 0
    # Calls cover whole epochs (a shuffle call starts with a fresh permutation), so the
    # chunking for the history does not change the iterates.
    chunks = [steps_per_pass] * (steps // steps_per_pass) + (
        [steps % steps_per_pass] if steps % steps_per_pass else [])
    if not record_history:
        chunks = [steps]
    done = 0
    for k in chunks:
        clipped, sampled = run(k)
        n_clipped, n_sampled, done = n_clipped + clipped, n_sampled + sampled, done + k
        if record_history:
            history_passes.append(done * q if sampling == "poisson" else done / steps_per_pass)
            history_objective.append(objective_or_inf(problem, coef))
    elapsed = time.perf_counter() - start

    report = report_from_event(event, delta=delta, relation=relation,
                               budget_split={"optimization": 1.0}, assumptions=assumptions,
                               target_epsilon=epsilon, random_state=random_state,
                               conversion=conversion,
                               conditions=conditions, accountant=accountant)
    stats = {
        "time": elapsed,
        "sampling": sampling,
        "steps": steps,
        "epochs": epochs,
        "sample_rate": q,
        "batch_size": norm,
        "noise_multiplier": s,
        "noise_scale": noise_scale,
        "step": eta,
        "smoothness": beta,
    }
    if record_history:
        # computed from the data (and, under add/remove-one, from the private record count):
        # only with the history, listed in privacy.non_private_outputs (result.NON_PRIVATE_STATS)
        stats["clipped_fraction"] = n_clipped / max(1, n_sampled)
        stats["mean_batch_size"] = n_sampled / max(1, steps)
    history = History(np.asarray(history_passes, dtype=np.float64),
                      np.asarray(history_objective, dtype=np.float64))
    return Result(coef=coef, privacy=report, history=history, stats=stats)
