r"""Noisy mirror descent in l1/lp geometry and its localization: Algorithms 1, 2, 5 and 6 of
Asi, Feldman, Koren and Talwar (2021), the entropic EG+- variant, and the strongly convex
reduction of their section 5.

Implementation notes: ``shared/notes/004_l1.md`` (sections 2, 3.6, 4, 8, 9.4). Geometry (p-norm
link, inverse, exact Bregman projections): :mod:`dpsco_core.mirror_maps`.

Privacy (all solvers here)
--------------------------
Each mirror-descent step releases a noisy mean gradient: Poisson sampling at rate
:math:`q = b / n_{chunk}`, per-example l2 clipping at C (enforced: for a GLM,
:math:`\|\nabla f_i\|_2 = |\ell'| \|a_i\|_2`, so :math:`\ell'` is clipped at
:math:`C / \|a_i\|_2`), Gaussian noise :math:`N(0, \sigma^2 C^2 I)` on the clipped sum, divided
by the expected batch b (public). The default C is the paper's l2 bound of an L-Lipschitz
gradient: :math:`L \sqrt d` (l1: :math:`\|g\|_2 \le \sqrt d \|g\|_\infty`) or
:math:`L d^{1/2 - 1/q}` (lp, q > 2; L for q <= 2). The noise multiplier comes from the RDP
accountant (:func:`~dpsco_core.privacy.calibrate_sampled_gaussian`) in place of the paper's
constant 100 (note 4). The relation is **zero-out** by default (a record replaced by one that
contributes nothing: the sampled-Gaussian RDP analysis holds as under add/remove-one, and the
dataset's n is public), or **add/remove-one** with a public record count ``public_n``: every
count of the schedule (rates, batches, steps, phase sizes) is then computed from ``public_n``,
never from the private n (the rule of :mod:`dpsco_core.solvers._common`); replace-one is not
offered (no Poisson-subsampled analysis), as for :func:`~dpsco_core.solvers.dp_sgd`.

Localization (Algorithm 2/6) runs its phases on **disjoint** data: every sample is assigned to
one phase (or to none) by an independent categorical draw with probabilities
:math:`n_i / n` (n: the public count), so that adding, removing or zeroing one sample changes
one phase's chunk only (a
permutation cut into contiguous chunks would shift every later chunk under add/remove). A
later phase sees an earlier chunk only through :math:`x_{i-1}`, which is post-processing of a
released output; hence the run is :math:`(\max_i \varepsilon_i, \delta)`-DP (parallel
composition). ``budget_schedule``:

* ``"paper"``: :math:`\varepsilon_i = \varepsilon / 2^i`, as printed; by the argument above the
  run is then :math:`(\varepsilon/2, \delta)`-DP and the report says so.
* ``"parallel"``: :math:`\varepsilon_i = \varepsilon` for every phase. Privacy: the argument
  above (each sample is used by one phase, each phase is :math:`(\varepsilon, \delta)`-DP for
  its chunk). Utility: Theorem 4's proof only needs phase i's private error
  :math:`O(L^2 \eta_i^2 d \log d \log(1/\delta)/\varepsilon_i^2)`, and with
  :math:`\eta_i = \eta/16^i` this now decays like :math:`2^{-8i}` instead of :math:`2^{-6i}`,
  so the telescoping sum still converges, with a smaller constant (note 2.3).

The privacy report is built by the RDP accountant from the event of the phase whose guarantee
is the largest (``SelfComposedDpEvent(PoissonSampledDpEvent(q_i, GaussianDpEvent(sigma_i)),
T_i)``); ``stats["phases"]`` lists every phase's event, and a test recomputes them all.
"""

from __future__ import annotations

import inspect
import math
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import mirror_maps as mm
from .._kernels import _mirror
from ..reference import mirror as _mirror_twin
from .._random import block_bit_generators, check_random_state, child_seed_sequences
from .._validation import check_delta, check_int, check_scalar
from ..penalties import PENALTY_NONE
from ..privacy.budget import Budget, spend
from ..privacy.events import (GaussianDpEvent, NeighboringRelation, NonPrivateDpEvent,
                              PoissonSampledDpEvent, SelfComposedDpEvent)
from ..privacy.report import PrivacyReport, with_caller_seed
from ..problems import Problem
from ..result import History, Result
from ._common import (check_problem, check_relation, check_solver_epsilon, normaliser,
                      public_n_assumptions, report_from_event)

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike

__all__ = ["noisy_mirror_descent", "localized_mirror_descent", "localized_schedule",
           "strongly_convex_reduction", "entropic_mirror_descent"]

_PARALLEL = ("every sample is used by at most one phase (independent phase assignment); "
             "phases compose in parallel, later phases see earlier data only through the "
             "released iterate (post-processing)")


# --------------------------------------------------------------------------------------------
# Checks and constants
# --------------------------------------------------------------------------------------------

def _poisson_relation(neighboring_relation):
    """Zero-out or add/remove-one: the relations of the Poisson-sampled Gaussian analysis."""
    relation = check_relation(neighboring_relation)
    if relation is NeighboringRelation.REPLACE_ONE:
        raise ValueError("neighboring_relation='replace_one' is not supported: the "
                         "Poisson-subsampled Gaussian analysis holds under 'zero_out' and "
                         "'add_or_remove_one' (with public_n) only.")
    return relation



def _check_problem(problem):
    problem = check_problem(problem)
    if problem.penalty.kind != PENALTY_NONE:
        raise ValueError("mirror descent minimizes the loss over a norm ball: use penalty=None; "
                         f"got {problem.penalty!r}.")
    if problem.n_features < 1:
        raise ValueError("the number of features must be at least 1; got 0.")
    return problem


def _geometry(geometry, d):
    """(p of the mirror map, lp norm of the geometry, c with ||z||_geom <= c ||z||_p)."""
    if isinstance(geometry, str):
        if geometry != "l1":
            raise ValueError(f"geometry must be 'l1' or a float p in (1, 2]; got {geometry!r}.")
        p = mm.pnorm_exponent(d)
        return p, 1.0, mm.l1_norm_constant(d, p)
    p = check_scalar(geometry, "geometry", low=1.0, high=2.0, high_open=False)
    return p, p, 1.0


def _default_clip(lipschitz, d, norm_p):
    """l2 bound of a gradient with dual-norm bound L: sqrt(d) L (l1), L d^(1/2 - 1/q) (lp)."""
    if norm_p == 1.0:
        return lipschitz * math.sqrt(d)
    q = norm_p / (norm_p - 1.0) if norm_p > 1.0 else math.inf
    return lipschitz * (d ** (0.5 - 1.0 / q) if q > 2.0 else 1.0)


def _check_accountant(accountant):
    if accountant not in ("rdp", "pld"):
        raise ValueError(f"accountant must be 'rdp' or 'pld'; got {accountant!r}.")
    return accountant


def _calibrate(epsilon, delta, q, steps, accountant="rdp"):
    from ..privacy.calibration import calibrate_sampled_gaussian, calibrate_sampled_gaussian_pld
    if not math.isfinite(epsilon):
        return 0.0
    if accountant == "pld":
        return calibrate_sampled_gaussian_pld(target_epsilon=epsilon, target_delta=delta,
                                              sample_rate=q, steps=steps)
    return calibrate_sampled_gaussian(target_epsilon=epsilon, target_delta=delta,
                                      sample_rate=q, steps=steps)


def _event(sigma, q, steps):
    if sigma == 0.0:
        return NonPrivateDpEvent()
    return SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)


# --------------------------------------------------------------------------------------------
# Algorithm 1 / 5: the inner loop on one chunk
# --------------------------------------------------------------------------------------------

def _run_md(problem, rows, *, x_start, p, scale, center, reg, ball, l1_radius, steps, q,
            expected_batch, sigma, clip, step, strongly_convex, mirror_map, radius, rng,
            lp_radius=None):
    """T noisy (composite) mirror steps on the samples ``rows``; returns the averaged iterate.

    ``step`` is a constant eta (convex case, uniform average) unless ``strongly_convex`` is
    given (lambda: eta_k = 2 / (lambda (k + 1)), weighted average 2k / (T (T + 1)), computed
    online; note 9.4). The p-norm map runs in the kernel ``_mirror.md_run_dense`` (dense X;
    its NumPy twin for sparse X), EG+- here. Every array here is the solver's own.
    """
    d = problem.n_features
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    if mirror_map == "entropic":
        return _run_entropic(problem, rows, steps=steps, q=q, expected_batch=expected_batch,
                             sigma=sigma, clip=clip, step=step, radius=radius, rng=rng)
    run = _mirror_twin.md_run_dense if problem.is_sparse else _mirror.md_run_dense
    X = problem.X if problem.is_sparse else problem.X_c()
    x_out, avg = np.empty(d), np.empty(d)
    run(X, problem.y, rows, problem.loss.kind, problem.loss.param, problem.row_norms(), clip,
        np.ascontiguousarray(x_start, dtype=np.float64),
        np.ascontiguousarray(center, dtype=np.float64), p, scale, reg, ball,
        math.inf if l1_radius is None else l1_radius, steps, q, expected_batch, sigma * clip,
        0.0 if step is None else step, strongly_convex or 0.0, rng.bit_generator, x_out, avg,
        math.inf if lp_radius is None else lp_radius)
    return avg


def _run_entropic(problem, rows, *, steps, q, expected_batch, sigma, clip, step, radius, rng):
    """EG+- (note 2.2): the same batches and noise as the p-norm loop, entropic steps."""
    X, y = problem.X, problem.y
    norms = problem.row_norms()
    d = problem.n_features
    logw = np.full(2 * d, -math.log(2 * d))
    x, avg = np.zeros(d), np.zeros(d)
    for k in range(1, steps + 1):
        idx = rows[rng.random(rows.size) < q]
        g = np.zeros(d)
        if idx.size:
            Xb = X[idx]
            r = problem.loss._deriv(np.asarray(Xb @ x).ravel(), y[idx])
            with np.errstate(divide="ignore"):
                cap = np.where(norms[idx] > 0, clip / np.where(norms[idx] > 0, norms[idx], 1.0),
                               np.inf)
            r = np.clip(r, -cap, cap)
            g = np.asarray(Xb.T @ r).ravel()
        if sigma > 0.0:
            g = g + rng.normal(0.0, sigma * clip, d)
        g /= expected_batch
        logw, x = mm.entropic_step(logw, g, step, radius)
        avg += (x - avg) / k
    return avg


def noisy_mirror_descent(problem: Problem, *, epsilon: float, delta: float, radius: float = 1.0,
                         lipschitz: float = 1.0, geometry: str | float = "l1",
                         batch_size: int | None = None, steps: int | None = None,
                         step: float | None = None, clip: float | None = None,
                         mirror_map: str = "pnorm", neighboring_relation: str = "zero_out",
                         public_n: int | None = None, random_state: RandomStateLike = None,
                         budget: Budget | None = None, accountant: str = "rdp",
                         strong_convexity: float | None = None) -> Result:
    r"""Noisy stochastic mirror descent (Algorithm 1; Algorithm 5 for lp): DP-ERM over a ball.

    Minimizes :math:`\hat F(x) = \frac1n\sum_i \ell(\langle a_i, x\rangle, y_i)` over
    :math:`\{\|x\|_1 \le D\}` (``geometry="l1"``, mirror map
    :math:`h = \frac{1}{2(p-1)}\|x\|_p^2` with :math:`p = 1 + 1/\ln d`) or over
    :math:`\{\|x\|_p \le D\}` (``geometry=p``, the lp map itself). Step
    :math:`x_{k+1} = \arg\min_{x} \langle \tilde g_k, x\rangle + \frac1\eta D_h(x, x_k)`
    with :math:`\tilde g_k` the clipped Poisson-batch mean plus Gaussian noise; returns the
    average iterate.

    Parameters
    ----------
    problem : Problem
        A differentiable loss, no penalty (dense or sparse X).
    epsilon : float
        Target epsilon in (0, inf]; inf: no noise.
    delta : float
        In (0, 1).
    radius : float, default=1.0
        D > 0.
    lipschitz : float, default=1.0
        L: the dual-norm bound of the gradients, used for the default clip and step.
    geometry : "l1" or float in (1, 2], default="l1"
    batch_size : int, optional
        Expected batch b (default :math:`\max(\sqrt{n/\ln d}, \sqrt d/\varepsilon)`, at most n).
    steps : int, optional
        T (default :math:`\lceil n^2 / b^2 \rceil`, Theorem 3).
    step : float, optional
        Constant eta (default Theorem 3's :math:`\frac{D}{\sqrt T}(L^2 + 2\sigma_{mean}^2
        \ln d)^{-1/2}`, with :math:`\sigma_{mean} = \sigma C / b` and c_d folded into D).
    clip : float, optional
        Per-example l2 clip C (default :math:`L\sqrt d` for l1; module docstring).
    mirror_map : {"pnorm", "entropic"}, default="pnorm"
        ``"entropic"``: EG+- over the 2d vertices (l1 only; a practical option, note 2.2).
    neighboring_relation : {"zero_out", "add_or_remove_one"}, default="zero_out"
        Zero-out: n is public and every count below uses it. Add/remove-one: n is private;
        ``public_n`` replaces n in the batch, the steps, the rate :math:`q = b / m` and the
        normalisation (module docstring).
    public_n : int, optional
        Public record count m, required under add/remove-one; else None or n.
    random_state : None, int, SeedSequence or Generator
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event (add/remove-one)
        before the data are read; refused runs read nothing.
    accountant : {"rdp", "pld"}, default="rdp"
        Accountant of the noise calibration and of the report: ``"pld"`` is dp-accounting's
        pessimistic privacy loss distributions (tighter: less noise for the same budget,
        seconds of calibration; needs ``pip install 'dpsco-core[pld]'``); see
        :func:`~dpsco_core.solvers.dp_sgd.dp_sgd`.
    strong_convexity : float, optional
        :math:`\lambda > 0` with :math:`\hat F` :math:`\lambda`-strongly convex relative to
        h (a declared public constant): Theorem 3's strongly convex version, steps
        :math:`\eta_k = 2/(\lambda (k+1))` (``step`` must then be None) and the weighted
        average :math:`\hat x_T = \frac{2}{T(T+1)}\sum_k k x_k` as output, for which
        Lemma 3.2 gives :math:`E[\hat F(\hat x_T) - \hat F^*] \le 2 G^2/(\lambda(T+1))`
        with :math:`G^2 \ge E\|\tilde g_k\|_*^2`. None (default): the convex version.

    Returns
    -------
    Result

    Raises
    ------
    ValueError
        For D <= 0, p outside (1, 2], d = 0, a bad budget, ``step`` with
        ``strong_convexity``.

    Notes
    -----
    **Privacy guarantee.** :math:`(\varepsilon, \delta)`-DP under zero-out (n public) or
    add/remove-one (with the public count ``public_n`` in place of n); T compositions of the
    Poisson-sampled Gaussian mechanism with noise multiplier :math:`\sigma` calibrated by the
    RDP accountant, on the clipped sum (sensitivity C) divided by the public expected batch b;
    clipping is enforced.

    References
    ----------
    Asi, Feldman, Koren and Talwar (2021), Algorithm 1, Theorem 3; Algorithm 5, Theorem 12.
    """
    problem = _check_problem(problem)
    epsilon = check_solver_epsilon(epsilon)
    delta = check_delta(delta)
    radius = check_scalar(radius, "radius", low=0.0)
    lipschitz = check_scalar(lipschitz, "lipschitz", low=0.0)
    if mirror_map not in ("pnorm", "entropic"):
        raise ValueError(f"mirror_map must be 'pnorm' or 'entropic'; got {mirror_map!r}.")
    relation = _poisson_relation(neighboring_relation)
    # m: the public count every derived quantity uses (the private n under add/remove-one
    # never enters the schedule).
    n = normaliser(relation, problem.n_samples, public_n)
    d = problem.n_features
    p, norm_p, cd = _geometry(geometry, d)
    if mirror_map == "entropic" and norm_p != 1.0:
        raise ValueError("mirror_map='entropic' needs geometry='l1'.")
    logd = math.log(max(d, 2))
    eps_f = epsilon if math.isfinite(epsilon) else 1e12
    if batch_size is None:
        batch_size = min(n, max(1, math.ceil(math.sqrt(n / logd)),
                                math.ceil(math.sqrt(d) / eps_f)))
    b = check_int(batch_size, "batch_size", low=1, high=n)
    T = check_int(steps if steps is not None else max(1, math.ceil(n * n / (b * b))),
                  "steps", low=1)
    C = _default_clip(lipschitz, d, norm_p) if clip is None else check_scalar(clip, "clip",
                                                                              low=0.0)
    if not math.isfinite(C):
        raise ValueError("the default clip lipschitz * sqrt(d) overflows the float range: "
                         "lipschitz is too large; pass a smaller lipschitz or a clip.")
    q = b / n
    sigma = _calibrate(epsilon, delta, q, T, _check_accountant(accountant))
    if not math.isfinite(sigma * C):
        raise ValueError("the noise scale (noise multiplier at this epsilon) * clip overflows "
                         "the float range: clip (default lipschitz * sqrt(d)) is too large "
                         "for epsilon.")
    if strong_convexity is not None:
        strong_convexity = check_scalar(strong_convexity, "strong_convexity", low=0.0)
        if step is not None:
            raise ValueError("step must be None with strong_convexity (the steps are "
                             "2 / (strong_convexity (k + 1))).")
        if mirror_map == "entropic":
            raise ValueError("strong_convexity needs mirror_map='pnorm'.")
    if strong_convexity is not None:
        step = None
    elif step is None:
        sm = sigma * C / b
        try:
            sq = lipschitz ** 2 + 2 * sm ** 2 * logd
        except OverflowError:
            sq = math.inf
        # the squares of L = 1e-300 or of sigma C / b = 1e154 underflow to 0 / overflow
        # (ZeroDivisionError, OverflowError): a hypot then (the sum's bits kept otherwise)
        norm = (math.sqrt(sq) if sys.float_info.min <= sq < math.inf
                else math.hypot(lipschitz, math.sqrt(2 * logd) * sm))
        step = cd * radius / math.sqrt(T) / norm
        if not (math.isfinite(step) and step > 0.0):
            raise ValueError("the default step radius / (sqrt(steps) * sqrt(lipschitz^2 + "
                             "2 (sigma clip / batch_size)^2 ln d)) leaves the float range: "
                             "radius, lipschitz or clip too extreme for epsilon; pass step.")
    if step is not None:
        step = check_scalar(step, "step", low=0.0)
    event = _event(sigma, q, T)
    report = report_from_event(event, delta=delta, relation=relation,
                               budget_split={"optimization": 1.0},
                               assumptions=public_n_assumptions(relation, n),
                               target_epsilon=epsilon, random_state=random_state,
                               conversion="improved",
                               accountant=accountant)
    spend(budget, event, neighboring_relation=relation, delta=delta)
    rng = np.random.Generator(block_bit_generators(check_random_state(random_state), 1)[0])
    start = time.perf_counter()
    l1 = radius if norm_p == 1.0 else None
    ball = math.inf if norm_p == 1.0 else radius
    coef = _run_md(problem, np.arange(problem.n_samples), x_start=np.zeros(d), p=p,
                   scale=1.0 / (p - 1.0),
                   center=np.zeros(d), reg=0.0, ball=ball, l1_radius=l1, steps=T, q=q,
                   expected_batch=b, sigma=sigma, clip=C, step=step,
                   strongly_convex=strong_convexity or 0.0, mirror_map=mirror_map,
                   radius=radius, rng=rng)
    stats = {"time": time.perf_counter() - start, "steps": T, "batch": b, "p": p,
             "noise_multiplier": sigma, "clip": C, "step": step,
             "strong_convexity": strong_convexity,
             "gradient_evaluations": int(round(T * b))}
    history = History(np.array([0.0, T * b / n]), np.array([np.nan, problem.objective(coef)]))
    return Result(coef=coef, privacy=report, history=history, stats=stats)


def entropic_mirror_descent(problem: Problem, *, step: float, rounds: int = 1,
                            start: ArrayLike | None = None,
                            random_state: RandomStateLike = None) -> Result:
    r"""Entropic stochastic mirror descent on the simplex: Algorithm 4 (appendix A), non-private.

    The appendix's algorithm, kept as the paper states it for its two lemmas: R rounds, each a
    fresh uniform permutation :math:`\pi` of the n samples; step k uses the single sample
    :math:`z_{\pi(i)}`,

    .. math:: x_{k+1} = \arg\min_{x \in \Delta_{d-1}} \langle g_k, x - x_k\rangle +
              \frac1\eta D_h(x, x_k) = \frac{x_k e^{-\eta g_k}}{\|x_k e^{-\eta g_k}\|_1}
              \qquad (1)

    with :math:`h(x) = \sum_j x_j \log x_j` (:math:`D_h` = KL), computed on log-weights with
    a log-sum-exp normalization (note 004, section 9.6, as in
    :func:`dpsco_core.mirror_maps.entropic_step`); returns
    :math:`\bar x_T = \frac1T \sum_{k=1}^T x_k`, :math:`T = Rn`. Lemma A.1: the update is
    not a contraction in l1 or KL; Lemma A.2: for linear losses with
    :math:`\|z\|_\infty \le L`, neighbouring data sets give
    :math:`\|x_T - y_T\|_1^2 \le KL(x_T\|y_T) + KL(y_T\|x_T) \le 4\eta^2L^2R^2`.

    Parameters
    ----------
    problem : Problem
        A (sub)differentiable loss, no penalty.
    step : float
        :math:`\eta > 0`.
    rounds : int, default=1
        R.
    start : array of shape (n_features,), optional
        :math:`x_0` in the relative interior of the simplex (default the uniform
        :math:`\mathbf 1/d`, as in Lemma A.2).
    random_state : None, int, SeedSequence or Generator
        Seeds the permutations.

    Returns
    -------
    Result
        ``coef`` :math:`\bar x_T`; ``stats["last"]`` :math:`x_T`.

    Notes
    -----
    **Privacy guarantee.** None: Algorithm 4 is the appendix's non-private counterexample (the
    report is non-private). Neighbouring relation: not applicable.

    References
    ----------
    Asi, Feldman, Koren and Talwar (2021), appendix A, Algorithm 4, Lemmas A.1 and A.2.
    """
    problem = _check_problem(problem)
    step = check_scalar(step, "step", low=0.0)
    rounds = check_int(rounds, "rounds", low=1)
    n, d = problem.n_samples, problem.n_features
    if start is None:
        x0 = np.full(d, 1.0 / d)
    else:
        x0 = np.array(start, dtype=np.float64)
        if x0.shape != (d,) or np.any(x0 <= 0) or abs(x0.sum() - 1.0) > 1e-9:
            raise ValueError(f"start must be a positive vector of length {d} summing to 1.")
    rng = np.random.Generator(block_bit_generators(check_random_state(random_state), 1)[0])
    X, y = problem.X, problem.y
    logw, x, avg = np.log(x0), x0.copy(), np.zeros(d)
    start_time, k = time.perf_counter(), 0
    for _ in range(rounds):
        for i in rng.permutation(n):
            a = X[i]
            a = a.toarray().ravel() if hasattr(a, "toarray") else np.asarray(a, dtype=float)
            g = float(problem.loss._deriv(np.array([a @ x]), y[i:i + 1])[0]) * a
            logw = logw - step * g
            top = logw.max()
            logw = (logw - top) - math.log(float(np.sum(np.exp(logw - top))))
            x = np.exp(logw)
            k += 1
            avg += (x - avg) / k
    report = PrivacyReport.from_event(NonPrivateDpEvent(), delta=0.0,
                                      accountant="basic-composition",
                                      neighboring_relation=NeighboringRelation.REPLACE_ONE,
                                      assumptions=("non-private: appendix A's algorithm",))
    stats = {"time": time.perf_counter() - start_time, "steps": k, "rounds": rounds,
             "step": step, "last": x, "gradient_evaluations": k}
    history = History(np.array([0.0, float(rounds)]),
                      np.array([problem.objective(x0), problem.objective(avg)]))
    return Result(coef=avg, privacy=report, history=history, stats=stats)


# --------------------------------------------------------------------------------------------
# Algorithm 2 / 6: localization
# --------------------------------------------------------------------------------------------

def localized_schedule(n, n_features, *, epsilon, delta, radius=1.0, lipschitz=1.0,
                       geometry="l1", budget_schedule="paper", reg_constant=1.0, n_min=16,
                       max_steps=None, distance=None):
    r"""The phases of Algorithm 2/6 (note 2.3 and section 8): a list of dicts.

    Phase i = 1..k with :math:`k = \lfloor \log_2(n / n_{min}) \rfloor`: :math:`n_i = n/2^i`,
    :math:`\varepsilon_i` by ``budget_schedule``, regularization scale
    :math:`\eta_i = \eta / 16^i` with Theorem 4/13's :math:`\eta` (times ``reg_constant``;
    the theorems' D is the diameter of X, :math:`2\times` ``radius``),
    :math:`\lambda_i = 1/(\eta_i n_i)`, localization radius
    :math:`R_i = 2 c L (p-1)/\lambda_i` (Lemma 3.3 with h = ||.||_p^2 / (2(p-1)); c = c_d for
    l1), batch :math:`b_i = \min(n_i, \max(\lceil\sqrt{n_i/\ln d}\rceil,
    \lceil\sqrt d/\varepsilon_i\rceil))` (errata 3), :math:`T_i = \lceil n_i^2/b_i^2\rceil`
    capped at ``max_steps``. Only public quantities are used.

    Parameters
    ----------
    n : int
        Public record count.
    n_features : int
        d.
    epsilon, delta : float
        The target.
    radius, lipschitz : float, default=1.0
        The radius R of X (a ball; its diameter :math:`D = 2R` is the theorems' D) and L.
    geometry : "l1" or float, default="l1"
        l1, or p of an lp geometry.
    budget_schedule : str, default="paper"
        How epsilon is split over the phases.
    reg_constant : float, default=1.0
        Multiplies :math:`\eta`.
    n_min : int, default=16
        Smallest phase.
    max_steps : int, optional
        Cap on :math:`T_i`.
    distance : float, optional
        A public bound on :math:`\|x^* - x_0\|` used as Theorem 4/13's D in place of the
        diameter :math:`2R` (the proof of Theorem 4 uses D only to bound the distance from the
        start to the optimum): the strongly convex reduction's shrinking radius.

    Returns
    -------
    list of dict
    """
    n = check_int(n, "n", low=2)
    d = check_int(n_features, "n_features", low=1)
    if budget_schedule not in ("paper", "parallel"):
        raise ValueError(f"budget_schedule must be 'paper' or 'parallel'; got "
                         f"{budget_schedule!r}.")
    p, norm_p, cd = _geometry(geometry, d)
    # Theorems 4 and 13 assume diam(X) <= D (the proof of Theorem 4 bounds
    # ||x* - x_0||^2 <= D^2 for two points of X): D is the diameter, twice the ball's radius.
    D, L = 2.0 * radius, lipschitz
    if distance is not None:
        D = check_scalar(distance, "distance", low=0.0)
    logd = math.log(max(d, 2))
    eps_f = epsilon if math.isfinite(epsilon) else 1e12
    log_delta = math.log(1.0 / delta)
    if norm_p == 1.0:
        eta = (D / L) * min(math.sqrt(logd / n), eps_f / math.sqrt(d * logd * log_delta))
    else:
        extra = 1.0 + (logd if p < 2 else 0.0)
        eta = (D / L) * min(1.0 / math.sqrt((p - 1) * n),
                            eps_f / math.sqrt(d * log_delta * extra))
    eta *= reg_constant
    k = max(1, int(math.floor(math.log2(n / n_min))))
    phases = []
    for i in range(1, k + 1):
        n_i = n // 2 ** i
        if n_i < 1:
            break
        e_i = epsilon / 2 ** i if budget_schedule == "paper" else epsilon
        ef = e_i if math.isfinite(e_i) else 1e12
        b_i = min(n_i, max(math.ceil(math.sqrt(n_i / logd)), math.ceil(math.sqrt(d) / ef)))
        T_i = max(1, math.ceil(n_i * n_i / (b_i * b_i)))
        if max_steps is not None:
            T_i = min(T_i, check_int(max_steps, "max_steps", low=1))
        eta_i = eta / 16 ** i
        scale_i = eta_i * n_i
        lam = 1.0 / scale_i if scale_i > 0.0 else math.inf
        ball = 2.0 * cd * L * (p - 1.0) / lam if lam > 0.0 else math.inf
        if not (0.0 < lam < math.inf and 0.0 < ball < math.inf):
            # public constants only: refused before any budget is charged
            raise ValueError(
                f"phase {i}'s regularization 1 / (eta_i n_i) = {lam:.3g} and ball radius "
                f"{ball:.3g} are outside (0, inf) in floating point: radius={radius!r}"
                f"{'' if distance is None else f' (distance={distance!r})'}, "
                f"lipschitz={lipschitz!r}, epsilon={epsilon!r} and reg_constant="
                f"{reg_constant!r} are too far apart in scale.")
        phases.append({"phase": i, "n": n_i, "epsilon": e_i, "batch": b_i, "steps": T_i,
                       "reg_scale": eta_i, "strong_convexity": lam,
                       "ball_radius": ball, "p": p})
    return phases


def localized_mirror_descent(problem: Problem, *, epsilon: float, delta: float,
                             radius: float = 1.0, lipschitz: float = 1.0,
                             geometry: str | float = "l1", budget_schedule: str = "paper",
                             reg_constant: float = 1.0, n_min: int = 16,
                             max_steps: int | None = None, clip: float | None = None,
                             start: ArrayLike | None = None, neighboring_relation: str = "zero_out",
                             public_n: int | None = None, random_state: RandomStateLike = None,
                             budget: Budget | None = None, accountant: str = "rdp",
                             distance: float | None = None) -> Result:
    r"""Localized noisy mirror descent (Algorithm 2; Algorithm 6 for lp): private SCO.

    Phase i runs Algorithm 1 on its own chunk of :math:`\approx n_i = n/2^i` samples on the
    regularized objective :math:`F_i(x) = \hat F_i(x) + \lambda_i h(x - x_{i-1})`
    (:math:`h = \|\cdot\|_p^2/(2(p-1))`), restricted to
    :math:`X_i = X \cap \{\|x - x_{i-1}\|_p \le R_i\}` (exact Bregman projections, note 2.2),
    with the strongly convex steps :math:`\eta_{i,k} = 2/(\lambda_i(k+1))`, composite handling
    of the regularizer, and the weighted average as :math:`x_i`; returns :math:`x_k`.
    Schedule: :func:`localized_schedule`.

    Parameters
    ----------
    problem : Problem
        A differentiable (or subdifferentiable) loss, no penalty.
    epsilon, delta : float
        The target; delta in (0, 1).
    radius : float, default=1.0
        D > 0: X is :math:`\{\|x\|_1 \le D\}` (l1) or :math:`\{\|x\|_p \le D\}` (lp
        geometry, Algorithm 6 / appendix B). Every phase's steps are the exact Bregman
        projections onto :math:`X_i = X \cap \{\|x - x_{i-1}\|_p \le R_i\}`, as the paper
        states (:func:`~dpsco_core.mirror_maps.bregman_project_l1`, and
        :func:`~dpsco_core.mirror_maps.bregman_project_lp` for the intersection of two lp
        balls); the earlier lp version without X is not kept (the paper does not allow it).
    lipschitz : float, default=1.0
        L (dual-norm gradient bound): sets the scales and the default clip.
    geometry : "l1" or float p in (1, 2], default="l1"
    budget_schedule : {"paper", "parallel"}, default="paper"
        Module docstring.
    reg_constant : float, default=1.0
        Multiplies Theorem 4's regularization scale eta.
    n_min : int, default=16
        Smallest phase size.
    max_steps : int, optional
        Cap on T_i (a gradient budget; the report accounts for the steps actually run).
    clip : float, optional
        Per-example l2 clip (default: module docstring).
    start : array of shape (n_features,), optional
        x_0 (default 0); must lie in X.
    neighboring_relation : {"zero_out", "add_or_remove_one"}, default="zero_out"
        As in :func:`noisy_mirror_descent`: under add/remove-one the schedule (phase sizes,
        batches, steps, rates, assignment probabilities) is computed from ``public_n``.
    public_n : int, optional
        Public record count, required under add/remove-one; else None or n.
    random_state : None, int, SeedSequence or Generator
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the worst phase's event (the
        guarantee of the run, by parallel composition) before the data are read.
    accountant : {"rdp", "pld"}, default="rdp"
        Accountant of each phase's noise calibration and of the report: ``"pld"`` is dp-accounting's
        pessimistic privacy loss distributions (tighter: less noise for the same budget,
        seconds of calibration; needs ``pip install 'dpsco-core[pld]'``); see
        :func:`~dpsco_core.solvers.dp_sgd.dp_sgd`.
    distance : float, optional
        A public bound on :math:`\|x^* - \mathrm{start}\|` replacing the diameter 2R as
        Theorem 4's D (:func:`localized_schedule`); used by
        :func:`strongly_convex_reduction`.

    Returns
    -------
    Result
        ``stats["phases"]``: every phase's parameters, noise multiplier and event.

    Notes
    -----
    **Privacy guarantee.** :math:`(\max_i \varepsilon_i, \delta)`-DP under zero-out (n
    public) or add/remove-one (the schedule from ``public_n``): phases on disjoint chunks
    (parallel composition), each T_i Poisson-sampled Gaussian steps with the RDP accountant;
    clipping enforced. The report is the worst phase's.

    References
    ----------
    Asi, Feldman, Koren and Talwar (2021), Algorithm 2, Theorems 1 and 4; Algorithm 6,
    Theorems 5 and 13.
    """
    problem = _check_problem(problem)
    epsilon = check_solver_epsilon(epsilon)
    delta = check_delta(delta)
    radius = check_scalar(radius, "radius", low=0.0)
    lipschitz = check_scalar(lipschitz, "lipschitz", low=0.0)
    reg_constant = check_scalar(reg_constant, "reg_constant", low=0.0)
    n_min = check_int(n_min, "n_min", low=1)
    relation = _poisson_relation(neighboring_relation)
    accountant = _check_accountant(accountant)
    n = normaliser(relation, problem.n_samples, public_n)   # public: schedule and probabilities
    if n < 2:
        raise ValueError(f"localized mirror descent needs at least 2 records (its phases halve "
                         f"n); got a problem with {'public_n=' if public_n is not None else 'n='}"
                         f"{n}.")
    d = problem.n_features
    p, norm_p, _ = _geometry(geometry, d)
    phases = localized_schedule(n, d, epsilon=epsilon, delta=delta, radius=radius,
                                lipschitz=lipschitz, geometry=geometry,
                                budget_schedule=budget_schedule, reg_constant=reg_constant,
                                n_min=n_min, max_steps=max_steps, distance=distance)
    C = _default_clip(lipschitz, d, norm_p) if clip is None else check_scalar(clip, "clip",
                                                                              low=0.0)
    x = np.zeros(d) if start is None else np.array(start, dtype=np.float64)
    x_norm = np.abs(x).sum() if norm_p == 1.0 else np.sum(np.abs(x) ** norm_p) ** (1 / norm_p)
    if x.shape != (d,) or x_norm > radius * (1 + 1e-12):
        raise ValueError(f"start must be a vector of length {d} in X, the "
                         f"{'l1' if norm_p == 1.0 else f'l{norm_p:g}'} ball of radius "
                         f"{radius:g}.")
    seed = check_random_state(random_state)
    assign_seq, run_seq = child_seed_sequences(seed, 2)
    # Independent phase assignment (module docstring): phase i with probability n_i / n.
    probs = np.array([ph["n"] for ph in phases], dtype=float) / n
    u = np.random.Generator(block_bit_generators(assign_seq, 1)[0]).random(problem.n_samples)
    label = np.searchsorted(np.cumsum(probs), u, side="right")
    # X_i = X cap {||x - x_{i-1}||_p <= R_i} (Algorithms 2 and 6): X is the l1 ball or, for
    # lp geometry, the lp ball of radius D (exact Bregman projections, mirror_maps)
    l1 = radius if norm_p == 1.0 else None
    lp = radius if norm_p != 1.0 else None
    for ph in phases:      # the calibration uses the public schedule only
        ph["sample_rate"] = min(1.0, ph["batch"] / ph["n"])
        ph["noise_multiplier"] = _calibrate(ph["epsilon"], delta, ph["sample_rate"], ph["steps"],
                                            accountant)
        ph["event"] = _event(ph["noise_multiplier"], ph["sample_rate"], ph["steps"])
    worst = max(phases, key=lambda ph: ph["epsilon"])      # the first of the largest
    spend(budget, worst["event"], neighboring_relation=relation, delta=delta)
    start_time = time.perf_counter()
    for i, ph in enumerate(phases):
        rows = np.flatnonzero(label == i)
        q, sigma = ph["sample_rate"], ph["noise_multiplier"]
        if relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
            # the phase's size: public under zero-out (n public, data-independent assignment);
            # under add/remove-one it reveals the private record count, so it is not returned
            ph["samples"] = int(rows.size)
        rng = np.random.Generator(block_bit_generators(
            child_seed_sequences(run_seq, 1, offset=i)[0], 1)[0])
        lam = ph["strong_convexity"]
        x = _run_md(problem, rows, x_start=x, p=p, scale=1.0 / (p - 1.0), center=x.copy(),
                    reg=lam, ball=ph["ball_radius"], l1_radius=l1, steps=ph["steps"], q=q,
                    expected_batch=ph["batch"], sigma=sigma, clip=C, step=None,
                    strongly_convex=lam, mirror_map="pnorm", radius=radius, rng=rng,
                    lp_radius=lp)
    report = report_from_event(worst["event"], delta=delta, relation=relation,
                               budget_split={"optimization": 1.0},
                               assumptions=(_PARALLEL, *public_n_assumptions(relation, n)),
                               target_epsilon=epsilon, random_state=random_state,
                               conversion="improved",
                               accountant=accountant)
    stats = {"time": time.perf_counter() - start_time, "phases": phases, "p": p, "clip": C,
             "budget_schedule": budget_schedule,
             "gradient_evaluations": int(sum(ph["steps"] * ph["batch"] for ph in phases))}
    history = History(np.array([0.0, 1.0]), np.array([np.nan, problem.objective(x)]))
    return Result(coef=x, privacy=report, history=history, stats=stats)


# --------------------------------------------------------------------------------------------
# Section 5: the strongly convex reduction
# --------------------------------------------------------------------------------------------

def _round_bound(style, n_i, R, lipschitz, d, epsilon, delta, kw, constant):
    """The convex solver's theorem bound on E[F(x) - F*] over a ball of radius R (D = 2R).

    Localized mirror descent: Theorem 4 (l1) or 13 (lp). Algorithm 3: Theorem 6 (pure) or 7
    (approximate), with beta the declared smoothness (default L / D). The O(.) constants are
    not stated in the paper: ``constant`` multiplies the expression.
    """
    D, L = 2.0 * R, lipschitz
    logd = math.log(max(d, 2))
    private = math.isfinite(epsilon)
    n_i = max(n_i, 2.0)
    if style == "fw":
        beta = kw.get("smoothness") or L / D
        m = 2 * d
        logn = math.log(n_i)
        stat = D * (L + beta * D) * math.sqrt(logd * logn / n_i)
        if private and delta is None:
            stat += math.sqrt(beta * L * D ** 3 * logd * logn / (n_i * epsilon))
        elif private:
            stat += (math.sqrt(beta) * L * D * D * math.log(1.0 / delta) * math.log(m)
                     * logn ** 2 / (n_i * epsilon)) ** (2.0 / 3.0)
        return constant * stat
    geometry = kw.get("geometry", "l1")
    p, norm_p, _ = _geometry(geometry, d)
    ld = math.log(1.0 / delta)
    if norm_p == 1.0:
        stat = math.sqrt(logd / n_i)
        priv = math.sqrt(d * logd ** 3 * ld) / (n_i * epsilon) if private else 0.0
    else:
        stat = 1.0 / math.sqrt((p - 1.0) * n_i)
        extra = 1.0 + (logd if p < 2 else 0.0)
        priv = math.sqrt(d * ld * extra) / ((p - 1.0) * n_i * epsilon) if private else 0.0
    return constant * L * D * (stat + priv)


def strongly_convex_reduction(problem: Problem, *, solver: Any = localized_mirror_descent,
                              rounds: int | None = None, random_state: RandomStateLike = None,
                              strong_convexity: float | None = None, rate_constant: float = 1.0,
                              **solver_kwargs: Any) -> Result:
    r"""The reduction of section 5 (Feldman, Koren and Talwar 2020, Thm 5.1): Theorems 8 and 9.

    Runs ``solver`` for :math:`k = \lceil \log_2 \log n\rceil` rounds; round i starts from
    round i-1's output and uses its own chunk of :math:`n_i \propto 2^{i}` fresh samples
    (sizes :math:`2^{i-2} n/\log n` rescaled to use all n; each sample draws its round
    independently with these proportions).

    With ``strong_convexity`` :math:`\lambda` (w.r.t. the geometry's norm, l1 by default) the
    domain shrinks as in FKT20: round 1 runs on X (radius :math:`R_1` = ``radius``); round i's
    theorem bound :math:`\Delta_i` (Theorem 4/13 for :func:`localized_mirror_descent`,
    Theorem 6/7 for :func:`~dpsco_core.solvers.vr_frank_wolfe`, at the round's public count
    and diameter :math:`2R_i`, times ``rate_constant``) gives, by strong convexity,
    :math:`\|x_i - x^*\|^2 \le 2\Delta_i/\lambda`, hence
    :math:`R_{i+1} = \min(R_i, \sqrt{2\Delta_i/\lambda})`. The radii use public
    quantities only. How each solver gets its ball:

    * :func:`~dpsco_core.solvers.vr_frank_wolfe` (Theorem 9): Algorithm 3 has no starting
      point (its first step, :math:`\eta_1 = 1`, lands on a vertex), so round i optimises
      over a set of l1 diameter at most :math:`2R_i` around :math:`x_{i-1}` inside X, as the
      FKT20 proof needs (each round's rate scales with its domain's diameter, which the
      shrinking radius makes small; the domain must contain :math:`x^*`). Theorem 9 also
      needs the set to be the hull of :math:`m = O(d)` public vertices (report-noisy-max over
      them); :math:`X \cap \{\|x - x_{i-1}\|_1 \le R_i\}` is not. Round i therefore runs on
      the ball's 2d vertices :math:`x_{i-1} \pm R_i e_j` pulled toward :math:`x_{i-1}` into X
      (``center=``, ``radius=``, ``outer_radius=`` of
      :func:`~dpsco_core.solvers.vr_frank_wolfe`): a polytope inside :math:`X \cap B` that
      contains the ball of radius :math:`\min(R_i, D - \|x_{i-1}\|_1)` and every inward
      arm. Deviation: when :math:`x_{i-1}` is within :math:`R_i` of the boundary of X, parts
      of :math:`X \cap B` (the directions that move mass between coordinates along the
      boundary) are outside it. Every round's output lies in X.
    * :func:`localized_mirror_descent` (Theorem 8): ``start=`` :math:`x_{i-1}` and
      ``distance=`` :math:`R_i` (Theorem 4's proof uses D only to bound
      :math:`\|x^* - x_0\|`); the iterates stay in X and the phases' own localization balls.
    * any other solver: ``start=`` only (no shrinking; ``strong_convexity`` is refused).

    Parameters
    ----------
    problem : Problem
        Data and a loss.
    solver : callable, default=localized_mirror_descent
        A private convex solver: :func:`localized_mirror_descent`,
        :func:`~dpsco_core.solvers.vr_frank_wolfe` or one taking ``start=``.
    rounds : int, optional
        k (default :math:`\lceil \log_2 \log n\rceil`).
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy.
    strong_convexity : float, optional
        :math:`\lambda > 0`, a declared public constant (required for vr_frank_wolfe).
    rate_constant : float, default=1.0
        Multiplies the theorems' O(.) bounds in the radii.
    **solver_kwargs
        Passed to ``solver`` (epsilon, delta, radius, lipschitz, ...).

    Returns
    -------
    Result
        ``stats["radii"]``: the rounds' radii :math:`R_i`.

    Notes
    -----
    **Privacy guarantee.** The rounds run on disjoint chunks and see earlier data only through
    the previous output, so the run has the guarantee of its worst round (parallel
    composition); under add/remove-one the chunk assignment must not depend on the data set
    size, so each sample draws its round independently (as in
    :func:`localized_mirror_descent`), and the rounds and each round's public count
    (``public_n`` times the round's proportion, passed to ``solver``) come from the caller's
    ``public_n`` in ``solver_kwargs``, never from the private n. The radii depend on public
    constants and counts only. The report is the worst round's report.

    References
    ----------
    Asi, Feldman, Koren and Talwar (2021), section 5, Theorems 8 and 9; Feldman, Koren and
    Talwar (2020), Theorem 5.1.
    """
    problem = _check_problem(problem)
    relation = check_relation(solver_kwargs.get("neighboring_relation", "zero_out"))
    public_n = solver_kwargs.pop("public_n", None)
    n = normaliser(relation, problem.n_samples, public_n)
    k = check_int(rounds if rounds is not None else
                  max(1, math.ceil(math.log2(max(math.log(n), 2.0)))), "rounds", low=1)
    weights = np.array([2.0 ** i for i in range(1, k + 1)])
    probs = weights / weights.sum()
    seed = check_random_state(random_state)
    assign_seq, run_seq = child_seed_sequences(seed, 2)
    u = np.random.Generator(block_bit_generators(assign_seq, 1)[0]).random(problem.n_samples)
    label = np.minimum(np.searchsorted(np.cumsum(probs), u, side="right"), k - 1)
    params = inspect.signature(solver).parameters
    style = "fw" if "center" in params else ("md" if "distance" in params else "start")
    if strong_convexity is not None:
        strong_convexity = check_scalar(strong_convexity, "strong_convexity", low=0.0)
        rate_constant = check_scalar(rate_constant, "rate_constant", low=0.0)
        if style == "start":
            raise ValueError("strong_convexity needs a solver with center= (vr_frank_wolfe) "
                             "or distance= (localized_mirror_descent).")
    elif style == "fw":
        raise ValueError("vr_frank_wolfe has no starting point: pass strong_convexity= so "
                         "that each round runs on a ball around the previous output.")
    given_radius = "radius" in solver_kwargs
    R = radius = float(solver_kwargs.pop("radius", 1.0))
    lipschitz = float(solver_kwargs.get("lipschitz", 1.0))
    epsilon = float(solver_kwargs.get("epsilon", math.inf))
    delta = solver_kwargs.get("delta")
    radii = []
    x, results = solver_kwargs.pop("start", None), []
    for i in range(k):
        rows = np.flatnonzero(label == i)
        sub = Problem(problem.X[rows], problem.y[rows], loss=problem.loss)
        if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
            # the round's public count: its expected size under the public n
            solver_kwargs["public_n"] = max(2, int(round(probs[i] * n)))
        seed_i = child_seed_sequences(run_seq, 1, offset=i)[0]
        radii.append(R)
        if style == "fw":
            # round 1 runs on X itself; later rounds on the ball around x_{i-1}, clipped to X
            clip = {"center": x, "outer_radius": radius} if i > 0 else {}
            res = solver(sub, radius=R if i > 0 else radius, random_state=seed_i, **clip,
                         **solver_kwargs)
        elif style == "md" and strong_convexity is not None:
            res = solver(sub, start=x, radius=radius, distance=R if i > 0 else None,
                         random_state=seed_i, **solver_kwargs)
        else:
            extra = {"radius": radius} if given_radius else {}
            res = solver(sub, start=x, random_state=seed_i, **extra, **solver_kwargs)
        x = res.coef
        results.append(res)
        if strong_convexity is not None:
            bound = _round_bound(style, probs[i] * n, R, lipschitz, problem.n_features, epsilon, delta,
                                 solver_kwargs, rate_constant)
            R = min(R, math.sqrt(2.0 * bound / strong_convexity))
    worst = max(results, key=lambda r: r.privacy.epsilon)
    stats = {"rounds": k, "radii": radii, "round_stats": [r.stats for r in results],
             "round_reports": [r.privacy for r in results]}
    if relation is not NeighboringRelation.ADD_OR_REMOVE_ONE:
        # public under zero-out and replace-one (n public, data-independent assignment); under
        # add/remove-one the chunk sizes reveal the private record count
        stats["round_sizes"] = [int((label == i).sum()) for i in range(k)]
    history = History(np.array([0.0, 1.0]), np.array([np.nan, problem.objective(x)]))
    # the rounds ran on child seeds of random_state: the caller's seed status is stated
    return Result(coef=x, privacy=with_caller_seed(worst.privacy, random_state),
                  history=history, stats=stats)

