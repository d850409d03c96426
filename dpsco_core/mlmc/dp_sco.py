r"""DP-SCO by phased regularized estimation with clipped MLMC copies: the skeleton of Algorithm 6
of Asi et al. 2021 (note 001, sections 5.1 and 5.2), made rigorously private by clipping.

Phase i = 1..k works on its own disjoint block :math:`S_i` of :math:`\bar n = \lfloor n/k
\rfloor` samples (block i = rows ``(i-1) n̄ .. i n̄ - 1``) and on

.. math::

    F_i(x) = f_i(x) + \frac{1}{\eta_i \bar n}\|x - x_{i-1}\|^2, \qquad
    f_i = \frac{1}{\bar n}\sum_{s \in S_i} \ell(\langle a_s, x\rangle, b_s),
    \qquad \eta_i = \eta\,\rho^{-i},

which is :math:`\mu_i`-strongly convex with :math:`\mu_i = 2/(\eta_i \bar n)` (this module's
convention :math:`\psi = (\mu/2)\|x - c\|^2`; the paper writes :math:`1/(\eta_i\bar n)` for
half of it). It draws m copies (default :math:`m = \bar n`) of the MLMC optimum estimator of
:math:`\arg\min_X F_i` (eq. (1), EpochSGD snapshots, per-sample gradients clipped to G),
**clips each copy to the ball** :math:`B(x_{i-1}, r_i)` with :math:`r_i = \kappa\, G\,\eta_i
\bar n` (κ = ``clip_factor``, default :math:`1 + \sqrt{\ln n}`, note 7), averages them and
releases

.. math::

    x_i = \Pi_X\big(x_{i-1} + \bar u_i + \zeta_i\big), \qquad
    \bar u_i = \frac1m \sum_{t=1}^m \mathrm{clip}_{r_i}(\hat x_i^{(t)} - x_{i-1}), \qquad
    \zeta_i \sim N(0, \sigma_i^2 I_d).

Exact sensitivity from the pre-drawn schedule (note 5.2, item 2): each copy's geometric level
K and its sample indices come from a random stream that never looks at the data (the number
of gradients of a copy depends on K only; the indices are uniform in the block). Before a
phase runs, :func:`mlmc_sample_usage` replays that stream and counts, for every sample ℓ of
the block, the number :math:`K_{i,\ell}` of copies that touch it. Replacing sample ℓ changes
only those copies, each by at most :math:`2 r_i` (both outputs lie in the ball), so the
average has l2 sensitivity exactly bounded by

.. math::

    \Delta_i = \frac{2 r_i K_i^{\max}}{m}, \qquad K_i^{\max} = \max_\ell K_{i,\ell},

and :math:`\sigma_i = z\,\Delta_i` with one noise multiplier z for all phases. This replaces
the paper's high-probability bound B (Lemma 14) and its failure probability β/2.

Privacy guarantee: :math:`(\varepsilon, \delta)`-DP under **replace-one** (n public and fixed,
one record replaced by an arbitrary record; ``zero_out`` gives the same sensitivity and is
accepted too). Proof: a record in block i enters phase i only. Phases before i do not depend on
it; conditionally on the (data-independent) schedule, phase i is a Gaussian mechanism with
sensitivity :math:`\Delta_i` and multiplier z; later phases and the projection are
post-processing of :math:`x_i` and of other records. So the run is one Gaussian release of
multiplier z (event ``GaussianDpEvent(z)``, z calibrated by the RDP accountant) for every
record, and since this holds conditionally on every value of the public schedule it holds
unconditionally. The guarantee does not rest on the estimator's tails: clipping enforces it.
``add_or_remove_one`` is rejected (the block partition moves when n changes).

**Utility is not covered by the paper.** Theorem 6 assumes an efficient *bounded* low-bias
optimum estimator (Definition 3, an almost-sure distance bound), which the MLMC estimator is
not (heavy tails, App. F.3). Clipping an MLMC draw makes it bounded but biased, and that bias
is not analysed in the paper: the excess-risk bound of Theorem 6 does **not** apply to this
function. Treat its accuracy as an experiment (note 001, 6.2 E9), not as a guarantee.

References
----------
.. [1] H. Asi, Y. Carmon, A. Jambulapati, Y. Jin, A. Sidford, "Stochastic bias-reduced gradient
   methods", NeurIPS 2021, Algorithm 6, Theorem 6, Lemmas 13-14, App. A.3 and F.
.. [2] V. Feldman, T. Koren, K. Talwar, "Private stochastic convex optimization: optimal rates
   in linear time", STOC 2020 (phased ERM, the template of Algorithm 6).
"""

import math
import time
from dataclasses import dataclass

import numpy as np

from .._random import BIT_GENERATOR, check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_scalar, check_vector
from ..mechanisms import GaussianMechanism
from ..penalties import NoPenalty
from ..privacy._checks import check_conversion
from ..privacy.budget import spend
from ..privacy.calibration import calibrate_gaussian
from ..privacy.events import GaussianDpEvent, NeighboringRelation, NonPrivateDpEvent
from ..result import History, Result
from ..solvers._common import (check_privacy_budget, check_problem, check_relation,
                               report_from_event)
from ._schedule import LEVELS, draw_epochs, gradients_for_epochs, j_max_from_bias, level_from_raw
from .domains import L2Ball, check_domain
from .estimator import COPY_BLOCK, mlmc_draws
from .oracles import GLMOracle

__all__ = ["mlmc_dp_sco", "MLMCDPSCOResult", "mlmc_sample_usage"]

DISJOINT_BLOCKS_ASSUMPTION = (
    "phases use disjoint blocks of records (block i = rows (i-1) n_bar .. i n_bar - 1, n "
    "public): a record enters one Gaussian release; the run is accounted as that release")
SCHEDULE_ASSUMPTION = (
    "each MLMC copy's level and sample indices come from a stream that never reads the data; "
    "the sensitivity 2 r_i K_max / m is computed exactly from that pre-drawn schedule")
COPY_CLIP_ASSUMPTION = (
    "every MLMC copy is clipped (in Python, after the kernel) to the ball B(x_{i-1}, r_i) "
    "around the previous release")


@dataclass(frozen=True)
class MLMCDPSCOResult(Result):
    """:class:`dpsco_core.result.Result` of :func:`mlmc_dp_sco`, with aliases.

    ``x`` and ``coef_`` are ``coef`` (the released point), ``privacy_report`` is ``privacy``.
    ``stats["phases"]`` lists per-phase dicts (step, mu, clip radius, K_max, sensitivity,
    noise scale, gradients; with ``record_history=True`` also the fraction of clipped copies, not
    private); ``stats["iterates"]`` the releases.

    Attributes
    ----------
    coef : ndarray
        The released point.
    privacy : PrivacyReport
        (epsilon, delta)-DP under replace-one (or zero-out).
    history : History
        Diagnostics (exact objectives: not private).
    stats : mapping
        Per-phase details.
    """

    @property
    def x(self):
        """ndarray: alias of ``coef``, the released point."""
        return self.coef

    @property
    def coef_(self):
        """ndarray: alias of ``coef``, the released point."""
        return self.coef

    @property
    def privacy_report(self):
        """PrivacyReport: alias of ``privacy``."""
        return self.privacy


def mlmc_sample_usage(random_state, n_copies, n_samples, *, j_max, levels="epoch",
                      base_level=0, return_indices=False):
    r"""Replay the data-independent schedule of ``n_copies`` MLMC copies on a block of
    ``n_samples`` records.

    Mirrors the draw order of :func:`dpsco_core.mlmc.mlmc_draws` with a :class:`GLMOracle`
    (kernel and Python paths alike): block b of ``COPY_BLOCK`` copies owns ``PCG64DXSM(child
    b)``; it first draws one raw word per copy (:math:`K = \mathrm{ctz} + 1`), then each copy
    draws its :math:`N(K)` sample indices with ``Generator.integers(0, n_samples)``. Nothing
    here reads data, so the result may be computed before the data are touched.

    Parameters
    ----------
    random_state : SeedSequence or int
        The ``random_state`` that will be passed to ``mlmc_draws``.
    n_copies, n_samples : int
    j_max, levels, base_level
        As in ``mlmc_draws``.
    return_indices : bool, default=False
        Also return each copy's index sequence.

    Returns
    -------
    k : ndarray of shape (n_copies,)
    n_gradients : ndarray of shape (n_copies,)
    usage : ndarray of shape (n_samples,)
        :math:`K_\ell`: the number of copies whose index sequence contains ℓ.
    indices : list of ndarray
        Only with ``return_indices=True``: the sample indices of each copy, in draw order.
    """
    n_copies = check_int(n_copies, "n_copies", low=1)
    n_samples = check_int(n_samples, "n_samples", low=1)
    if levels not in LEVELS:
        raise ValueError(f"levels must be one of {sorted(LEVELS)}; got {levels!r}.")
    seed = check_random_state(random_state)
    n_blocks = -(-n_copies // COPY_BLOCK)
    gens = [np.random.Generator(BIT_GENERATOR(s)) for s in child_seed_sequences(seed, n_blocks)]
    ks = np.empty(n_copies, dtype=np.int64)
    n_grads = np.empty(n_copies, dtype=np.int64)
    for m in range(n_copies):
        ks[m] = level_from_raw(gens[m // COPY_BLOCK].bit_generator.random_raw())
    usage = np.zeros(n_samples, dtype=np.int64)
    indices = []
    for m in range(n_copies):
        n_grads[m] = gradients_for_epochs(max(draw_epochs(int(ks[m]), j_max, levels,
                                                          base_level)))
        # One vectorised call draws the same integers as n_grads scalar calls (numpy's bounded
        # fill draws index after index from the same generator; tests check it on the kernel).
        idx = gens[m // COPY_BLOCK].integers(0, n_samples, size=int(n_grads[m]))
        usage[np.unique(idx)] += 1
        if return_indices:
            indices.append(idx)
    if return_indices:
        return ks, n_grads, usage, indices
    return ks, n_grads, usage


def _default_step(radius, lipschitz, n, d, epsilon, delta):
    # FKT20 phased ERM's eta = (R/G) min(1/sqrt n, eps / sqrt(d log(1/delta))): the paper's
    # choice divides the second term by B log n, B = 20(log(1/beta) + C2 log^2 n), which pays
    # for the high-probability usage bound that the exact schedule makes unnecessary.
    second = epsilon / math.sqrt(d * math.log(1.0 / delta)) if math.isfinite(epsilon) else np.inf
    return radius / lipschitz * min(1.0 / math.sqrt(n), second)


def _clip_rows(u, radius):
    """Rows of u scaled to norm <= radius in place; returns the number of clipped rows."""
    norms = np.linalg.norm(u, axis=1)
    over = norms > radius
    u[over] *= (radius / norms[over])[:, None]
    return int(over.sum())


def mlmc_dp_sco(problem, *, epsilon, delta, radius, lipschitz, n_phases=None, step=None,
                step_decay=16.0, j_max=None, c=32.0, levels="paper", base_level=0,
                n_copies=None, clip_factor=None, domain=None, neighboring_relation="replace_one",
                conversion="improved", coef_init=None, random_state=None, n_threads=None,
                record_history=True, budget=None):
    r"""Private phased MLMC estimation (Algorithm 6 skeleton with clipped copies).

    See the module docstring for the algorithm, the exact sensitivity and the proof. **The
    paper's utility theorem (Theorem 6) does not cover this clipped version**: the output is
    private, its accuracy is empirical.

    Parameters
    ----------
    problem : Problem
        Dense data and a loss; the penalty must be ``NoPenalty`` (the regularization is the
        phases' own).
    epsilon : float
        In (0, inf]; inf runs without noise (copies still clipped).
    delta : float
        In (0, 1).
    radius : float
        R with :math:`X \subseteq B_R(x_0)` (sets the default step).
    lipschitz : float
        G: per-sample gradients are clipped to norm G (this bounds the iterates; it changes
        f for non-Lipschitz losses). Must not be computed from the data.
    n_phases : int, optional
        k, default :math:`\lceil \log_2 n \rceil` (paper), at most n.
    step : float, optional
        η; default :math:`(R/G)\min\{1/\sqrt n, \varepsilon/\sqrt{d \ln(1/\delta)}\}` (FKT20's
        phased-ERM step; the paper's additionally divides the second term by
        :math:`B\log n`, the price of its high-probability usage bound).
    step_decay : float, default=16
        ρ > 1 in :math:`\eta_i = \eta \rho^{-i}` (paper: 16 [UNSURE in the OCR]; FKT20: 4).
    j_max : int, optional
        Top MLMC level; default from the paper's bias target :math:`\delta_i = G\eta_i
        \sqrt{\bar n}` with ODC constant ``c`` (the same j_max in every phase).
    c : float, default=32
    levels : {"paper", "epoch"}, default="paper"
        ``"paper"`` costs :math:`\approx j_{\max} - 4` gradients per copy (7/8 of copies use
        none), which keeps :math:`K^{\max}` and hence the noise small.
    base_level : int, default=0
    n_copies : int, optional
        m copies per phase, default :math:`\bar n` (paper).
    clip_factor : float, optional
        κ in :math:`r_i = \kappa G \eta_i \bar n`; default :math:`1 + \sqrt{\ln n}`.
    domain : Domain, optional
        X; default :math:`B_R(x_0)`. Each release is projected onto it (post-processing).
    neighboring_relation : {"replace_one", "zero_out"}, default="replace_one"
    conversion : {"improved", "mironov"}, default="improved"
    coef_init : array-like of shape (d,), optional
        :math:`x_0` (default 0); must not depend on the data.
    random_state : None, int, SeedSequence or Generator
        None draws fresh OS entropy, as a private release must.
    n_threads : int, optional
        Threads of the MLMC batch kernel (results do not depend on it).
    record_history : bool, default=True
        Record :math:`F(x_i)` after each phase, and each phase's fraction of clipped copies
        (non-private diagnostics, listed in ``privacy.non_private_outputs``).
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event before the data are
        read; refused runs read nothing.

    Returns
    -------
    MLMCDPSCOResult
        ``coef`` / ``x`` / ``coef_``, ``privacy`` / ``privacy_report`` (recomputed by the RDP
        accountant from ``privacy.event``), ``history`` (passes = gradients / n, objective),
        ``stats``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument).
    PrivacyBudgetError
        If no noise multiplier meets the budget.

    Notes
    -----
    **Privacy guarantee.** :math:`(\varepsilon, \delta)`-DP under replace-one (default; zero-out
    has the same sensitivity and is accepted): each record enters one phase only, and that phase
    releases its clipped average with Gaussian noise of multiplier z calibrated to the exact
    sensitivity :math:`\Delta_i = 2 r_i K_i^{\max} / m` (module docstring), so the run is one
    Gaussian release (``GaussianDpEvent(z)``) for every record. Add/remove-one raises ValueError.
    """
    problem = check_problem(problem)
    if problem.is_sparse:
        raise ValueError("mlmc_dp_sco needs a dense problem; got sparse X.")
    if not isinstance(problem.penalty, NoPenalty):
        raise ValueError(f"problem.penalty must be NoPenalty (the phases regularize "
                         f"themselves); got {problem.penalty!r}.")
    epsilon, delta = check_privacy_budget(epsilon, delta)
    relation = check_relation(neighboring_relation)
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ValueError("neighboring_relation='add_or_remove_one' is not supported: the "
                         "phases' blocks are fixed row ranges of a dataset of public size n; "
                         "use 'replace_one' or 'zero_out'.")
    conversion = check_conversion(conversion)
    R = check_positive(radius, "radius")
    G = check_positive(lipschitz, "lipschitz")
    n, d = problem.n_samples, problem.n_features
    k = max(1, math.ceil(math.log2(n))) if n_phases is None else n_phases
    k = check_int(k, "n_phases", low=1, high=n)
    n_bar = n // k
    eta = _default_step(R, G, n, d, epsilon, delta) if step is None else step
    eta = check_positive(eta, "step")
    rho = check_scalar(step_decay, "step_decay", low=1.0)
    kappa = 1.0 + math.sqrt(math.log(n)) if clip_factor is None else clip_factor
    kappa = check_positive(kappa, "clip_factor")
    # The phases' constants must be normal floats: eta_k = eta / rho^k (rho^k alone can raise
    # OverflowError), mu_k = 2 / (eta_k n_bar) and the clip radius r_1 = kappa G eta_1 n_bar.
    # A tiny step used to fail with "mu must be a finite number" (no such argument).
    log_eta_k = math.log(eta) - k * math.log(rho)
    if not (-690.0 < log_eta_k and math.log(2.0 / n_bar) - log_eta_k < 690.0):
        raise ValueError(f"step={eta!r}, step_decay={rho!r} and n_phases={k} give a last-phase "
                         f"step eta / step_decay^n_phases = exp({log_eta_k:.4g}) whose "
                         "regularization 2 / (step n) is beyond the float64 range; use a larger "
                         "step or a smaller step_decay.")
    if not math.isfinite(kappa * G * (eta / rho) * n_bar):
        raise ValueError(f"clip_factor * lipschitz * step * n / n_phases overflows (clip radius "
                         f"of the first phase); got clip_factor={kappa!r}, lipschitz={G!r}, "
                         f"step={eta!r}: rescale them.")
    m = n_bar if n_copies is None else check_int(n_copies, "n_copies", low=1)
    if levels not in LEVELS:
        raise ValueError(f"levels must be one of {sorted(LEVELS)}; got {levels!r}.")
    if j_max is None:
        # G / (mu_i delta_i) = sqrt(n_bar) / 2 in every phase, so one j_max serves all.
        j_max = j_max_from_bias(2.0 / math.sqrt(n_bar), 1.0, 1.0, c=c, levels=levels)
    j_max = check_int(j_max, "j_max", low=1, high=40)
    base_level = check_int(base_level, "base_level", low=0, high=j_max)
    x = np.zeros(d) if coef_init is None else check_vector(coef_init, "coef_init", copy=True)
    if x.shape[0] != d:
        raise ValueError(f"coef_init must have length n_features={d}; got {x.shape[0]}.")
    domain = L2Ball(R, x.copy()) if domain is None else check_domain(domain, d)

    if math.isfinite(epsilon):
        z = calibrate_gaussian(target_epsilon=epsilon, target_delta=delta, steps=1,
                               accountant="rdp", conversion=conversion)
        event = GaussianDpEvent(z)
    else:
        z, event = 0.0, NonPrivateDpEvent()
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before reading data

    start = time.perf_counter()
    seed = check_random_state(random_state)
    phases, iterates = [], [x.copy()]
    hist_passes, hist_obj = [], []
    total_grads = 0
    if record_history:
        hist_passes.append(0.0)
        hist_obj.append(problem.objective(x))
    for i in range(1, k + 1):
        copies_seed, noise_seed = child_seed_sequences(seed, 2, offset=2 * (i - 1))
        eta_i = eta / rho ** i
        mu_i = 2.0 / (eta_i * n_bar)
        r_i = kappa * G * eta_i * n_bar
        # The schedule first: it fixes the sensitivity before any record of block i is read.
        _, sched_grads, usage = mlmc_sample_usage(copies_seed, m, n_bar, j_max=j_max,
                                                  levels=levels, base_level=base_level)
        k_max = int(usage.max())
        sensitivity = 2.0 * r_i * k_max / m
        oracle = GLMOracle(problem, clip=G, rows=slice((i - 1) * n_bar, i * n_bar))
        draws = mlmc_draws(oracle, mu_i, x, j_max=j_max, n_copies=m, levels=levels,
                           base_level=base_level, domain=domain, random_state=copies_seed,
                           n_threads=n_threads)
        if not np.array_equal(draws.n_gradients, sched_grads):
            raise RuntimeError("the MLMC copies did not follow the pre-drawn schedule (a bug: "
                               "the sensitivity would not hold).")
        u = np.array(draws.offsets)
        n_clipped = _clip_rows(u, r_i)
        u_bar = u.mean(axis=0)
        if z > 0.0 and sensitivity > 0.0:
            # Floating-point noise, accounted as the Gaussian event above (the report states
            # the floating-point assumption); the output is a projected iterate.
            mech = GaussianMechanism(sensitivity=sensitivity, noise_multiplier=z, secure=False)
            u_bar = mech(u_bar, random_state=noise_seed, n_threads=1)
            noise_scale = mech.noise_scale
        else:
            noise_scale = 0.0    # no record of the block was read (k_max = 0) or no privacy
        x = domain.project(x + u_bar)
        grads = int(draws.n_gradients.sum())
        total_grads += grads
        iterates.append(x.copy())
        phases.append({"step": eta_i, "mu": mu_i, "clip_radius": r_i, "k_max": k_max,
                       "sensitivity": sensitivity, "noise_scale": noise_scale,
                       "n_gradients": grads})
        if record_history:
            # computed from the data: with the history, listed as not private
            phases[-1]["clipped_fraction"] = n_clipped / m
            hist_passes.append(total_grads / n)
            hist_obj.append(problem.objective(x))
    elapsed = time.perf_counter() - start

    report = report_from_event(
        event, delta=delta, relation=relation, budget_split={"optimization": 1.0},
        assumptions=[DISJOINT_BLOCKS_ASSUMPTION, SCHEDULE_ASSUMPTION, COPY_CLIP_ASSUMPTION],
        target_epsilon=epsilon, random_state=random_state, conversion=conversion)
    stats = {"time": elapsed, "n_phases": k, "block_size": n_bar, "n_copies": m, "j_max": j_max,
             "levels": levels, "base_level": base_level, "step": eta, "step_decay": rho,
             "clip_factor": kappa, "noise_multiplier": z, "n_gradients": total_grads,
             "phases": phases, "iterates": np.array(iterates)}
    history = History(np.asarray(hist_passes, dtype=np.float64),
                      np.asarray(hist_obj, dtype=np.float64))
    return MLMCDPSCOResult(coef=x, privacy=report, history=history, stats=stats)
