r"""DP-CD: differentially private proximal coordinate descent (Mangold et al., ICML 2022).

Implementation notes: ``shared/notes/002_dpcd.md`` (sections 2, 3, 5 and 9). The compiled
kernel is ``dpsco_core._kernels._cd``; its NumPy twin ``dpsco_core.reference.cd``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._config import effective_n_threads
from .._kernels import _cd
from .._random import (check_random_state, child_seed_sequences, descendant_bit_generator,
                       seed_source)
from .._validation import check_int, check_real_array, check_scalar, check_vector
from ..parallel.blocked import resolve_executor
from ..privacy.budget import Budget, spend
from ..privacy.calibration import (_SORTED_DEFAULT_ORDERS, calibrate_gdp_multiplier,
                                   dp_cd_noise_multiplier)
from ..privacy.events import (ComposedDpEvent, GaussianDpEvent, NonPrivateDpEvent,
                              SelfComposedDpEvent)
from ..result import History, Result, with_objective_condition, with_stats_conditions
from ._common import (check_privacy_budget, check_problem, check_relation, normaliser,
                      objective_or_inf, public_n_assumptions, report_from_event,
                      sensitivity_factor)
from ._common import MAX_NOISE_SCALE, array_max, check_noise_scale
from ._public_constants import data_constant
from .smoothness import SmoothnessRelease, smoothness_event

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike
    from ..parallel.blocked import BlockExecutor
    from ..privacy.events import NeighboringRelation
    from ..problems import Problem

__all__ = ["dp_cd", "dp_cd_grid", "GridResult", "dp_cd_schedule", "dp_cd_constants",
           "dp_cd_theorem_schedule"]

EXACT_SMOOTHNESS_CONDITION = ("the coordinate smoothness constants M_j (steps and clip "
                              "thresholds) are computed from the data and not accounted (as in "
                              "the paper's DP-CD); declare public bounds on the Problem, use "
                              "smoothness='private' or pass public constants for an "
                              "unconditional guarantee")
#: Former name (the statement moved from the report's assumptions to its conditions).
EXACT_SMOOTHNESS_ASSUMPTION = EXACT_SMOOTHNESS_CONDITION
PUBLIC_BOUNDS_ASSUMPTION = ("the data are mapped onto bounds declared public ({bounds}); steps "
                            "and clips come from those bounds")


#: Most coordinate updates T * K of a DP-CD run: the kernels count them in C ssize_t.
_MAX_RELEASES = 2 ** 63 - 1


def dp_cd_schedule(n_features, *, passes=None, n_outer=None, n_inner=None, average=True):
    """Outer iterations T and inner updates K of a DP-CD run.

    ``passes`` (one pass = ``n_features`` coordinate updates) gives ``T = 1``,
    ``K = passes * p`` with averaging (Algorithm 1 in the convex case) and ``T = passes``,
    ``K = p`` without (the last iterate; margins are recomputed every pass). ``n_outer`` and
    ``n_inner`` set (T, K) directly. The number of private releases is ``T * K``.

    Parameters
    ----------
    n_features : int
        p.
    passes : float, optional
        Data passes.
    n_outer, n_inner : int, optional
        T and K directly (instead of ``passes``).
    average : bool, default=True
        Averaging (one outer iteration) or last iterate (one per pass).

    Returns
    -------
    tuple of int
        (T, K).
    """
    if passes is not None:
        if n_outer is not None or n_inner is not None:
            raise ValueError("give either passes or (n_outer, n_inner), not both.")
        passes = check_scalar(passes, "passes", low=0.0)
        total = int(round(passes * n_features))
        if total < 1 or not math.isclose(total, passes * n_features, rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"passes * n_features (DP-CD's coordinate updates; the "
                             "problem's coordinates, an estimator's intercept column "
                             f"included) must be a positive integer; got {passes!r} * "
                             f"{n_features}.")
        if total > _MAX_RELEASES:
            raise ValueError(f"passes={passes!r} is too large: passes * n_features = "
                             f"{passes * n_features:.3g} coordinate updates, above "
                             f"{_MAX_RELEASES} (the kernels count them in 64 bits).")
        if average:
            return 1, total
        if total % n_features:
            raise ValueError("passes must be a whole number when average=False; got "
                             f"{passes!r}.")
        return total // n_features, n_features
    if n_outer is None or n_inner is None:
        raise ValueError("give passes, or both n_outer and n_inner.")
    T, K = check_int(n_outer, "n_outer", low=1), check_int(n_inner, "n_inner", low=1)
    if T * K > _MAX_RELEASES:
        raise ValueError(f"n_outer * n_inner = {T * K:.3g} coordinate updates is too large: "
                         f"above {_MAX_RELEASES} (the kernels count them in 64 bits).")
    return T, K


def dp_cd_theorem_schedule(preset: str, *, n_samples: int, epsilon: float, delta: float,
                           lipschitz: ArrayLike, smoothness: ArrayLike,
                           distance: float | None = None, strong_convexity: float | None = None,
                           initial_gap: float | None = None) -> tuple[int, int]:
    r"""Theorem 3.3's (T, K) of Mangold et al. (2022), from public constants.

    ``preset="convex"`` (Theorem 3.3.1, eq. 68): :math:`T = 1` and
    :math:`K = R_M \sqrt p\, n\varepsilon / (\|L\|_{M^{-1}} \sqrt{8\log(1/\delta)})`, for
    which eq. (67) gives :math:`F(w^{priv}) - F^* \le 9\sqrt{p}\|L\|_{M^{-1}} R_M
    \sqrt{\log(1/\delta)}/(n\varepsilon)`. ``preset="strongly_convex"`` (Theorem 3.3.2,
    eq. 70): :math:`K = 2p(1 + 1/\mu_M)` and :math:`T = \log_2\big((F(\bar w^0) - F^*)
    n^2\varepsilon^2 / (24 p (1 + 1/\mu_M)\|L\|_{M^{-1}}^2 \log(1/\delta))\big)`, the proof's
    value (the statement prints 32 in place of 1/24; note 002, section 6.1), for which eq. (70)
    gives :math:`(1 + T)\, 24 p (1+1/\mu_M) \|L\|^2_{M^{-1}} \log(1/\delta)/(n^2\varepsilon^2)`.
    Here :math:`\|L\|_{M^{-1}}^2 = \sum_j L_j^2 / M_j`. K and T are rounded up (at least 1).
    Pass the result to :func:`dp_cd` as ``n_outer, n_inner`` (with ``average=True``).

    Parameters
    ----------
    preset : {"convex", "strongly_convex"}
        Which case of Theorem 3.3.
    n_samples : int
        Public n.
    epsilon, delta : float
        The target.
    lipschitz : array-like of shape (p,)
        Component-Lipschitz constants :math:`L_j > 0` (public).
    smoothness : array-like of shape (p,)
        Component smoothness constants :math:`M_j > 0` (public).
    distance : float, optional
        :math:`R_M \ge \max(\|\bar w^0 - w^*\|_M, \sqrt{F(\bar w^0) - F^*})`, a public bound;
        required by ``"convex"``.
    strong_convexity : float, optional
        :math:`\mu_M`, strong convexity w.r.t. :math:`\|\cdot\|_M`; required by
        ``"strongly_convex"``.
    initial_gap : float, optional
        A public bound on :math:`F(\bar w^0) - F^*`; required by ``"strongly_convex"``.

    Returns
    -------
    tuple of int
        (T, K).
    """
    if preset not in ("convex", "strongly_convex"):
        raise ValueError(f"preset must be 'convex' or 'strongly_convex'; got {preset!r}.")
    n = check_int(n_samples, "n_samples", low=1)
    eps = check_scalar(epsilon, "epsilon", low=0.0)
    delta = check_scalar(delta, "delta", low=0.0, high=1.0, high_open=True)
    L = np.asarray(lipschitz, dtype=np.float64)
    M = np.asarray(smoothness, dtype=np.float64)
    if L.ndim != 1 or L.shape != M.shape or L.size < 1:
        raise ValueError(f"lipschitz and smoothness must be vectors of the same length; got "
                         f"shapes {L.shape} and {M.shape}.")
    if not (np.all(np.isfinite(L)) and np.all(L > 0) and np.all(np.isfinite(M))
            and np.all(M > 0)):
        raise ValueError("lipschitz and smoothness must be finite and > 0.")
    p = L.size
    norm_l = math.sqrt(float(np.sum(L * L / M)))
    log_d = math.log(1.0 / delta)
    if preset == "convex":
        if distance is None:
            raise ValueError("preset='convex' needs distance= (R_M).")
        R = check_scalar(distance, "distance", low=0.0)
        K = R * math.sqrt(p) * n * eps / (norm_l * math.sqrt(8.0 * log_d))
        return 1, max(1, math.ceil(K))
    if strong_convexity is None or initial_gap is None:
        raise ValueError("preset='strongly_convex' needs strong_convexity= and initial_gap=.")
    mu = check_scalar(strong_convexity, "strong_convexity", low=0.0)
    gap = check_scalar(initial_gap, "initial_gap", low=0.0)
    K = 2.0 * p * (1.0 + 1.0 / mu)
    T = math.log2(max(gap * n * n * eps * eps / (24.0 * p * (1.0 + 1.0 / mu) * norm_l ** 2
                                                 * log_d), 1.0))
    return max(1, math.ceil(T)), max(1, math.ceil(K))


def dp_cd_constants(M, *, step, clip):
    """Per-coordinate steps ``gamma_j = step / M_j`` and clips ``C_j = sqrt(M_j / sum M) clip``.

    Note 002 section 3.3: ``sum_j C_j^2 = clip^2``. A coordinate with ``M_j = 0`` (an all-zero
    column) gets step 0 and clip 0: it never moves.

    Parameters
    ----------
    M : array-like of shape (n_features,)
        Coordinate smoothness constants :math:`M_j \\ge 0` (public or privately released).
    step : float
        Step scale :math:`\\gamma`.
    clip : float
        Clip scale :math:`C`.

    Returns
    -------
    steps, clips : ndarray of shape (n_features,)
    """
    M = np.asarray(M, dtype=np.float64)
    total = M.sum()     # NumPy's (pairwise) sum on every path: the same bits
    if (M.ndim == 1 and M.size <= _SCALAR_CONSTANTS and type(step) is float
            and type(clip) is float):
        values = M.tolist()
        if all(v >= 0.0 for v in values):        # NaN and negative M_j: NumPy's path below
            # The same IEEE operations per coordinate as NumPy's (division, correctly rounded
            # sqrt, product) on Python floats: five small array operations were ~10 us of a
            # short call's fixed cost (issue 18). tests/solvers/test_dp_cd.py compares bits.
            steps = [step / v if v > 0.0 else 0.0 for v in values]
            t = float(total)
            clips = ([math.sqrt(v / t) * clip for v in values] if t > 0.0
                     else [0.0] * len(values))
            return np.array(steps, dtype=np.float64), np.array(clips, dtype=np.float64)
    steps = np.zeros(M.shape)
    np.divide(step, M, out=steps, where=M > 0)     # the same divisions, without index arrays
    clips = np.sqrt(M / total) * clip if total > 0 else np.zeros_like(M)
    return steps, clips


#: Up to this many coordinates :func:`dp_cd_constants` works on Python floats.
_SCALAR_CONSTANTS = 64


def _run_streams(seed_seq):
    """The kernel's and the smoothness release's seed sequences of one run."""
    return child_seed_sequences(seed_seq, 2)


def _kernel_generator(seed_seq):
    """The kernel's bit generator of one run: block 0 of the run's first stream,
    ``block_bit_generators(_run_streams(seed_seq)[0], 1)[0]``, seeded in C (bitwise the same;
    numpy's Python-level seed sequences were a third of a short call's fixed cost)."""
    return descendant_bit_generator(seed_seq, (0, 0))


def _smoothness_stream(seed_seq):
    """The smoothness release's seed sequence, ``_run_streams(seed_seq)[1]`` (built only when
    the constants are released privately)."""
    return child_seed_sequences(seed_seq, 1, offset=1)[0]


def _check_coef(coef_init, p):
    if coef_init is None:
        return np.zeros(p)
    coef = check_vector(coef_init, "coef_init", copy=True)     # 1-d: (p, 1) is an error
    if coef.shape != (p,):
        raise ValueError(f"coef_init must have length n_features={p}; got {coef.shape[0]}.")
    return coef


def _check_grid(values, name):
    """A 1-d float64 grid from a scalar or a 1-d array-like (entries checked by the caller)."""
    arr = check_real_array(values, name)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-dimensional; got an array of shape "
                         f"{arr.shape}.")
    return arr.astype(np.float64).reshape(-1)


def _public_smoothness(problem, smoothness):
    """M_j from the problem's public bounds, or (None, None) when it has none."""
    if problem.public_bounds is None:
        if smoothness == "public":
            raise ValueError("smoothness='public' needs a problem with public bounds: build it "
                             "with Problem(X, y, ..., bounds=(lower, upper)) and/or row_norm=.")
        return None, None
    M = problem.public_bounds.coordinate_smoothness(problem.loss, problem.n_features)
    return M, PUBLIC_BOUNDS_ASSUMPTION.format(bounds=problem.public_bounds)


def _smoothness_reads_no_record(problem, smoothness):
    """Whether :func:`_smoothness` computes M_j from public numbers alone (an array, or
    ``"auto"`` / ``"public"`` with the problem's public bounds): no record is read, nothing
    is drawn."""
    if isinstance(smoothness, str):
        return smoothness in ("auto", "public") and problem.public_bounds is not None
    return True


def _smoothness(problem, smoothness, share, bounds, epsilon, seed_seq, m=None):
    """M_j, the event of their release (None if not private), assumptions, conditions and
    the budget share used. ``m`` is the public normaliser of the private release; a private
    release draws from the run's smoothness stream (:func:`_smoothness_stream` of the run's
    ``seed_seq``)."""
    if isinstance(smoothness, str) and smoothness in ("auto", "public"):
        M, assumption = _public_smoothness(problem, smoothness)
        if M is not None:
            return M, None, [assumption], [], 0.0
        smoothness = "exact"        # "auto" without bounds: today's data constants, announced
    if isinstance(smoothness, str) and smoothness == "exact":
        # A non-private run (epsilon = inf) claims nothing a data constant could break.
        conditions = [data_constant("coordinate smoothness M_j (DP-CD steps and clips)",
                                    EXACT_SMOOTHNESS_CONDITION)] if math.isfinite(epsilon) else []
        return problem.coordinate_smoothness(), None, [], conditions, 0.0
    if isinstance(smoothness, str) and smoothness == "private":
        share = check_scalar(share, "smoothness_share", low=0.0, high=1.0)
        if not math.isfinite(epsilon):
            raise ValueError("smoothness='private' needs a finite epsilon.")
        release = SmoothnessRelease(problem, epsilon=share * epsilon, bounds=bounds,
                                    normaliser=m)
        return (release.draw(_smoothness_stream(seed_seq)), release.event, release.assumptions,
                release.conditions, share)
    if isinstance(smoothness, str):
        raise ValueError("smoothness must be 'auto', 'public', 'exact', 'private' or an array "
                         f"of public constants; got {smoothness!r}.")
    M = np.asarray(smoothness, dtype=np.float64)
    if M.shape != (problem.n_features,) or not np.all(np.isfinite(M)) or np.any(M < 0):
        raise ValueError(f"smoothness constants must be finite, >= 0, of shape "
                         f"({problem.n_features},).")
    return M, None, ["the smoothness constants passed as smoothness= are public"], [], 0.0


def _smoothness_share(smoothness, share, bounds, epsilon, p, loss):
    """Share of epsilon spent on private constants (0 unless ``smoothness="private"``).

    Also checks the smoothness arguments' form without reading the data, so that a call with
    invalid arguments fails before its budget is charged.
    """
    if isinstance(smoothness, str) and smoothness not in ("auto", "public", "exact", "private"):
        raise ValueError("smoothness must be 'auto', 'public', 'exact', 'private' or an array "
                         f"of public constants; got {smoothness!r}.")
    if not isinstance(smoothness, str) and np.shape(smoothness) != (p,):
        raise ValueError(f"smoothness constants must be finite, >= 0, of shape ({p},).")
    if not (isinstance(smoothness, str) and smoothness == "private"):
        return 0.0
    if loss.smoothness is None:
        raise ValueError(f"smoothness='private' needs a smooth loss; the {loss!r} loss has no "
                         "smoothness constants.")
    if isinstance(bounds, str) and bounds not in ("auto", "twice_max"):
        raise ValueError(f"smoothness_bounds must be 'auto', 'twice_max' or an array of public "
                         f"feature bounds; got {bounds!r}.")
    if not isinstance(bounds, str) and np.shape(bounds) != (p,):
        raise ValueError(f"smoothness_bounds must have shape ({p},); got {np.shape(bounds)}.")
    share = check_scalar(share, "smoothness_share", low=0.0, high=1.0)
    if not math.isfinite(epsilon):
        raise ValueError("smoothness='private' needs a finite epsilon.")
    return share


def _run_event(share, epsilon, p, cd_event):
    """The event of a whole run, from public arguments only (charged before the data are read)."""
    if share == 0.0:
        return cd_event
    return ComposedDpEvent((smoothness_event(p, share * epsilon), cd_event))


@functools.lru_cache(maxsize=256)
def _calibrate(epsilon, delta, releases, calibration):
    """Noise multiplier s and the event of the T K coordinate releases (memoized: a pure
    function of public arguments, part of the fixed cost per call; issue 18)."""
    if not math.isfinite(epsilon):
        return 0.0, NonPrivateDpEvent()
    if calibration == "gdp":
        # T K adaptive Gaussians of multiplier s compose to exactly sqrt(T K) / s-GDP (Dong,
        # Roth and Su 2019, Cor. 3.3), converted exactly (Cor. 2.13): checked against the
        # GDP accountant's report
        # (no cap on s: calibrate_gaussian's default max_noise_multiplier, 1e6, refused runs
        # that the looser 'rdp' calibration makes with more noise; check_noise_scale bounds
        # the noise as on the 'rdp' path; review s19)
        s = calibrate_gdp_multiplier(
            target_epsilon=epsilon, target_delta=delta,
            event_of=lambda m: SelfComposedDpEvent(GaussianDpEvent(m), releases),
            sqrt_releases=math.sqrt(releases))
    else:
        s = dp_cd_noise_multiplier(epsilon=epsilon, delta=delta, releases=releases,
                                   method="tight" if calibration == "rdp" else "theorem")
    return s, SelfComposedDpEvent(GaussianDpEvent(s), releases)


def _noise_scales(s, relation, clips, m):
    """sigma_j = s Delta_j with Delta_j = factor C_j / m; exactly 0 without noise (C_j may be inf).

    ``m`` is the public normaliser of :func:`~dpsco_core.solvers._common.normaliser`.
    """
    if s == 0.0:
        return np.zeros_like(clips)
    return s * sensitivity_factor(relation) * clips / m


def _check_step_noise(steps, noise_scales):
    """The noise a coordinate update adds, gamma_j sigma_j, must not overflow coef: a tiny
    M_j (a column of X near 0) makes gamma_j = step / M_j huge."""
    if not steps.size:
        return
    # max gamma_j * max sigma_j bounds every product (both >= 0): the exact products (and
    # numpy's error state, a noticeable part of a short call) only when the bound fails
    if array_max(steps) * array_max(noise_scales) <= MAX_NOISE_SCALE:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        worst = float(np.max(steps * noise_scales))
    if not worst <= MAX_NOISE_SCALE:
        # no value in the message: M_j may be read from the data (smoothness="exact"/"auto")
        raise ValueError(f"step / M_j times the noise standard deviation exceeds "
                         f"{MAX_NOISE_SCALE:g} for some coordinate j: coef would overflow (a "
                         "column of X is near 0); rescale X or use a smaller step or a larger "
                         "epsilon.")


def _report(event, *, epsilon, delta, s, releases, relation, budget_split, assumptions,
            conditions, random_state, calibration="rdp"):
    if calibration == "gdp" and math.isfinite(epsilon):
        return report_from_event(event, delta=delta, relation=relation,
                                 budget_split=budget_split, assumptions=assumptions,
                                 target_epsilon=epsilon, conditions=conditions,
                                 random_state=random_state, accountant="gdp")
    if not math.isfinite(epsilon):
        return report_from_event(event, delta=delta, relation=relation,
                                 budget_split=budget_split, assumptions=assumptions,
                                 target_epsilon=math.inf, conditions=conditions,
                                 random_state=random_state)
    # The closed form is the RDP bound at the continuous optimal order; add that order to the
    # accountant's grid so that it reproduces the calibration exactly. Above the default
    # grid's end (small epsilon) one more order keeps it off the grid's top edge: it is the
    # optimum, not a grid too short to hold it, so no OrderGridWarning.
    optimal_order = 1.0 + math.sqrt(2.0 * -math.log(delta)) * s / math.sqrt(releases)
    extra = [optimal_order]
    if optimal_order >= _SORTED_DEFAULT_ORDERS[-1]:
        extra.append(2.0 * optimal_order - 1.0)
    return report_from_event(event, delta=delta, relation=relation, budget_split=budget_split,
                             assumptions=assumptions, target_epsilon=epsilon,
                             random_state=random_state, extra_orders=extra,
                             conditions=conditions)


def _check_options(selection, calibration, smoothness=None):
    if selection not in ("random", "cyclic"):
        raise ValueError(f"selection must be 'random' or 'cyclic'; got {selection!r}.")
    if calibration not in ("rdp", "gdp", "theorem"):
        raise ValueError(f"calibration must be 'rdp', 'gdp' or 'theorem'; got "
                         f"{calibration!r}.")
    if calibration == "gdp" and isinstance(smoothness, str) and smoothness == "private":
        raise ValueError("calibration='gdp' composes Gaussian releases only: the Laplace "
                         "release of smoothness='private' has no exact GDP curve. Use "
                         "calibration='rdp' with private constants, or public constants.")


def _check_clips(clip, epsilon, p):
    """A scalar clip scale, or public per-coordinate clips: (scale, array or None)."""
    if type(clip) is float or type(clip) is int or np.ndim(clip) == 0:  # np.ndim: ~1 us
        return _check_clip(clip, epsilon), None
    clips = np.array(clip, dtype=np.float64)
    if clips.shape != (p,):
        raise ValueError(f"clip must be a number or an array of shape ({p},) of values in "
                         f"[0, inf]; got shape {clips.shape}.")
    if np.any(np.isnan(clips)) or np.any(clips < 0):
        raise ValueError(f"clip must be a number or an array of shape ({p},) of values in "
                         "[0, inf]; got NaN or negative entries.")
    if math.isfinite(epsilon) and not np.all(np.isfinite(clips)):
        raise ValueError("clip must be finite for a private run (an unbounded gradient has "
                         "infinite sensitivity); clip=inf needs epsilon=inf.")
    return 1.0, clips


def _check_clip(clip, epsilon, name="clip"):
    clip = check_scalar(clip, name, low=0.0, allow_inf=True)
    if math.isinf(clip) and math.isfinite(epsilon):
        raise ValueError(f"{name} must be finite for a private run (an unbounded gradient has "
                         "infinite sensitivity); clip=inf needs epsilon=inf.")
    return clip


def dp_cd(problem: Problem, *, epsilon: float, delta: float, passes: float | None = None,
          n_outer: int | None = None, n_inner: int | None = None, step: float = 1.0,
          clip: float | ArrayLike = 1.0, average: bool = True, selection: str = "random",
          calibration: str = "rdp", smoothness: str | ArrayLike = "auto",
          smoothness_share: float = 0.1, smoothness_bounds: str | ArrayLike = "auto",
          neighboring_relation: str | NeighboringRelation = "replace_one",
          public_n: int | None = None, coef_init: ArrayLike | None = None,
          random_state: RandomStateLike = None, record_history: bool = True,
          budget: Budget | None = None, executor: BlockExecutor | None = None) -> Result:
    r"""Differentially private proximal coordinate descent (DP-CD).

    Minimizes :math:`F(w) = \frac1n \sum_i \ell(\langle x_i, w\rangle, y_i) + \psi(w)` for the
    problem's loss and separable penalty with Algorithm 1 of Mangold et al. (2022) in its
    clipped form (note 002, section 2.1): ``T`` outer iterations of ``K`` updates; update k
    picks a coordinate j uniformly at random (independently of the data) and sets

    .. math::

        w_j \leftarrow \mathrm{prox}_{\gamma_j \psi_j}\Big(w_j - \gamma_j \Big(\frac1m
        \sum_{i=1}^n \mathrm{clip}\big(x_{ij}\,\ell'(\langle x_i, w\rangle, y_i), C_j\big)
        + \mathcal N(0, \sigma_j^2)\Big)\Big),

    with :math:`\gamma_j = \gamma / M_j`, :math:`C_j = \sqrt{M_j / \sum_k M_k}\, C` (section
    5.1), :math:`\sigma_j = s \Delta_j` and the public normaliser :math:`m`: the dataset's
    :math:`n` under replace-one (:math:`\Delta_j = 2 C_j / n`) and zero-out
    (:math:`\Delta_j = C_j / n`), the caller's ``public_n`` under add/remove-one
    (:math:`\Delta_j = C_j / m`; see ``neighboring_relation``). Each outer iteration ends at
    the average of its K post-update iterates (``average=True``, line 9) or at its last iterate.

    Parameters
    ----------
    problem : Problem
        Data, loss (any with a derivative) and penalty (L1, L2, ElasticNet, Box or none).
    epsilon : float
        Privacy budget in (0, inf]; ``inf`` runs the non-private algorithm (no noise), for
        testing and as a baseline (the report says epsilon = inf).
    delta : float
        In (0, 1); the paper uses 1/n^2.
    passes : float, optional
        Data passes (one pass = p coordinate updates). Or give ``n_outer`` and ``n_inner``.
    n_outer, n_inner : int, optional
        T and K of Algorithm 1 (the strongly convex variant restarts T times).
    step : float, default=1.0
        Step scale :math:`\gamma` (theory: 1).
    clip : float or array-like of shape (n_features,), default=1.0
        Clip scale :math:`C` in (0, inf]; inf only with ``epsilon=inf``. An array: public
        per-coordinate thresholds :math:`C_j` used as given (no split by :math:`M_j`), for
        instance Theorem 3.1's component-Lipschitz constants :math:`L_j`: when
        :math:`|\nabla_j \ell| \le L_j` holds clipping never binds and
        :math:`\sigma_j = s \Delta_j \propto L_j`; with ``calibration="theorem"`` under
        replace-one this is exactly :math:`\sigma_j^2 = 12 L_j^2 T K \log(1/\delta) /
        (n^2\varepsilon^2)`.
    average : bool, default=True
        Output the average of the inner iterates (Algorithm 1) or the last iterate.
    selection : {"random", "cyclic"}, default="random"
        Coordinate rule. Privacy does not depend on it (it does not look at the data).
    calibration : {"rdp", "gdp", "theorem"}, default="rdp"
        ``"rdp"``: the exact inversion of the RDP bound with Mironov's conversion at the
        continuous optimal order (App. B, the paper's experiments; note 002 section 5.2).
        ``"gdp"``: the exact privacy of the :math:`TK` composed Gaussians,
        :math:`\sqrt{TK}/s`-GDP (Dong, Roth and Su 2019, Corollaries 3.3 and 2.13), reported
        by the GDP accountant: the same mechanism with 11 to 31% less noise for the same
        (epsilon, delta) (15% at epsilon = 1, delta = 1e-6, 400 releases); public smoothness
        constants only (a ``Budget`` charged with it should use ``accountant="gdp"``: the RDP
        accountant bounds the same event looser, above epsilon).
        ``"theorem"``: Theorem 3.1, :math:`s = \sqrt{3 T K \log(1/\delta)}/\varepsilon`.
    smoothness : {"auto", "public", "exact", "private"} or array-like, default="auto"
        Source of :math:`M_j`, hence of the steps and clips. ``"public"``: the worst-case
        bounds :math:`M_j \le s_\ell B_j^2` of the problem's public bounds
        (:mod:`dpsco_core.public_bounds`; free, reads no data; ValueError without bounds).
        ``"exact"``: computed from the data and **not accounted**, as in the paper: it warns
        (``PrivacyLeakWarning``) and the report is conditional (``report.conditions``).
        ``"auto"`` (default): ``"public"`` on a problem with public bounds, else ``"exact"``
        with its warning. Why this default: a problem with declared bounds gets an
        unconditional guarantee without spending budget, and code written for the paper's
        protocol keeps running, told loudly what its epsilon does not cover; failing instead
        would push users to ``"exact"``, which says less. ``"private"``: the Laplace estimate
        of section 5.2 with ``smoothness_share`` of epsilon, floored at 3 noise scales
        (:mod:`dpsco_core.solvers.smoothness`: a lower floor lets noisy estimates of small
        constants make single runs diverge); closer to the true :math:`M_j` than ``"public"``
        when the features sit far inside their bounds. An array: public constants.
    smoothness_share : float, default=0.1
        Fraction of epsilon spent on private smoothness constants.
    smoothness_bounds : "auto", "twice_max" or array-like, default="auto"
        Bounds for the private constants. ``"auto"``: :math:`b_j = s_\ell B_j^2` from the
        problem's public bounds, or, without them, ``"twice_max"``: the paper's data-dependent
        rule (warns; the report is conditional). An array: public per-feature bounds
        :math:`B_j \ge |x_{ij}|`.
    neighboring_relation : {"replace_one", "add_or_remove_one", "zero_out"}, default="replace_one"
        The relation of the guarantee (the paper: replace-one). Under replace-one and zero-out
        neighbours have the same size and the clipped sums are divided by the dataset's own n.
        Under add/remove-one the size is private: the sums are divided by ``public_n`` and the
        noise is calibrated to :math:`C_j / m` with :math:`m` = ``public_n`` (dividing by the
        private n would let one added row move the released gradient by up to
        :math:`2 C_j / (n + 1)`; the rule is in :mod:`dpsco_core.solvers._common`).
    public_n : int, optional
        Public record count (a bound or estimate that does not come from the data), required
        under add/remove-one; under the other relations None or n. A value far from n biases
        the gradients by n / public_n (accuracy, not privacy).
    coef_init : array-like of shape (n_features,), optional
        Starting point (default 0). It must not depend on the private data.
    random_state : None, int, SeedSequence or Generator
        None (default) draws fresh OS entropy, as a private release must.
    record_history : bool, default=True
        Record F(w) at the start and after every outer iteration (one objective evaluation
        each), and return ``stats["clipped_fraction"]``. The values are exact and not
        private (listed in ``privacy.non_private_outputs``). False records nothing (empty
        history), as :func:`~dpsco_core.dp_sgd` does: the result holds only what the report
        covers.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged with the run's event before the data are
        read (smoothness constants included); a run that would exceed it raises
        :class:`~dpsco_core.exceptions.PrivacyBudgetError` and reads nothing.
    executor : BlockExecutor or DaskExecutor, optional
        Run the updates on row blocks, in process or on a Dask cluster
        (:mod:`dpsco_core.parallel.blocked`): each update is one round trip in which every
        block returns its clipped column sum at its margins (which stay with the block); the
        coordinate and the noise are drawn here, in the same order as the kernel, and the sum
        is divided by the same public normaliser. The two executors agree bitwise (not with
        the default fused kernel, whose summation order differs). None (default): the
        in-process kernel, or the executor of a :class:`~dpsco_core.parallel.BlockedProblem`.

    Returns
    -------
    Result
        ``coef``; ``privacy`` (the report, recomputed by the RDP accountant from
        ``privacy.event``); ``history`` (passes, objective); ``stats`` (noise multiplier,
        steps, clips, noise scales, time; with ``record_history=True`` also the clipped
        fraction, computed from the data and listed in ``privacy.non_private_outputs``).

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (the message names the argument).
    RuntimeError
        If the accountant's epsilon exceeds the target (a calibration bug; never silent).

    Notes
    -----
    **Privacy guarantee.** :math:`(\varepsilon, \delta)`-DP under the chosen neighbouring
    relation (default replace-one). Mechanism: :math:`T K` adaptive Gaussian releases of
    clipped coordinate gradients, each with noise multiplier :math:`s = \sigma_j / \Delta_j`
    (the same for every j), composed in RDP, :math:`\varepsilon(\alpha) = T K \alpha/(2 s^2)`,
    and converted with Mironov's Prop. 3 (Lemma B.3); ``calibration="rdp"`` solves for
    :math:`s` in closed form (note 002 section 5.2). With ``smoothness="private"`` a share
    :math:`\varepsilon'` goes to a pure-DP Laplace release of the :math:`M_j` and the rest to
    the updates; the report composes both in RDP (never more than their sum). Clipping is
    enforced by the kernel; the coordinate choice and the starting point are data-independent;
    every iterate may be released (footnote 1). Unconditional (``privacy.unconditional``) when
    :math:`M_j` is public (public bounds, an array) or private with public bounds; the data-
    dependent constants (``"exact"``, ``"twice_max"``) are not accounted, warn with
    ``PrivacyLeakWarning`` and are listed in ``privacy.conditions``. Not accounted either:
    hyperparameter tuning on the private data, feature standardization.

    **Layout, dtype and cost.** The kernel reads columns: dense Fortran-ordered X, float64 or
    float32, is read in place without a copy (float32 values are converted to float64 on load,
    exactly, so the run is bitwise the kernel run on ``X.astype(np.float64)``). Dense C-ordered
    (or otherwise strided) X is copied once into Fortran order in its own dtype
    (``Problem.X_kernel_columns()``: a float32 copy for float32 X), cached on the problem
    (later calls reuse it). A row-major kernel was not written: each coordinate update reads
    one column, which in a C-ordered array reads a 64-byte cache line per row (eight times the
    traffic of a contiguous column once p >= 8); bench/README.md (memory section) has the
    measured cost, so the one copy costs less than a pass would. Sparse X is used as CSC
    (float64). Without ``record_history`` nothing but the updates is
    computed from the data: no objective, and the kernel skips counting clipped terms.

    References
    ----------
    Mangold, Bellet, Salmon and Tommasi, "Differentially Private Coordinate Descent for
    Composite Empirical Risk Minimization", ICML 2022: Algorithm 1, Theorem 3.1, Lemma B.3,
    sections 5.1 and 5.2.

    Examples
    --------
    >>> import dpsco_core as dp
    >>> X, y = dp.datasets.load_california()
    >>> bounds = ([0, 0, 0, 0, 0, 0, 0, -125], [15, 52, 20, 5, 1e4, 10, 42, 0])   # public
    >>> prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.1), bounds=bounds)
    >>> res = dp.dp_cd(prob, epsilon=1.0, delta=1 / len(y) ** 2, passes=5, random_state=0)
    >>> res.privacy.epsilon <= 1.0, res.privacy.unconditional
    (True, True)
    """
    problem = check_problem(problem)
    executor = resolve_executor(executor, problem)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    relation = check_relation(neighboring_relation)
    n, p = problem.n_samples, problem.n_features
    m = normaliser(relation, n, public_n)
    n_outer, n_inner = dp_cd_schedule(p, passes=passes, n_outer=n_outer, n_inner=n_inner,
                                      average=average)
    step = check_scalar(step, "step", low=0.0)
    clip, coord_clips = _check_clips(clip, epsilon, p)
    _check_options(selection, calibration, smoothness)
    coef = _check_coef(coef_init, p)
    if problem.loss.lipschitz_in_margin is None and problem.loss.smoothness is None:
        raise ValueError(f"DP-CD needs a loss with a derivative; got {problem.loss!r}.")

    seed_seq = seed_source(random_state)     # an int seed: its parts, seeded in C
    releases = n_outer * n_inner
    share = _smoothness_share(smoothness, smoothness_share, smoothness_bounds, epsilon, p,
                              problem.loss)
    s, cd_event = _calibrate(epsilon * (1.0 - share), delta, releases, calibration)
    public = None
    if _smoothness_reads_no_record(problem, smoothness):
        # Public constants (no record read, nothing drawn): a run they refuse (noise or steps
        # that overflow at a tiny epsilon) is refused before the budget is charged, as any
        # invalid public argument is.
        public = _smoothness(problem, smoothness, smoothness_share, smoothness_bounds,
                             epsilon, seed_seq, m)
        steps, clips = dp_cd_constants(public[0], step=step, clip=clip)
        _check_step_noise(steps, check_noise_scale(
            _noise_scales(s, relation, clips if coord_clips is None else coord_clips, m),
            epsilon))
    event = _run_event(share, epsilon, p, cd_event)
    spend(budget, event, neighboring_relation=relation, delta=delta)
    M, _, assumptions, conditions, _ = public if public is not None else _smoothness(
        problem, smoothness, smoothness_share, smoothness_bounds, epsilon, seed_seq, m)
    steps, clips = dp_cd_constants(M, step=step, clip=clip)
    if coord_clips is not None:
        clips = coord_clips
    noise_scales = check_noise_scale(_noise_scales(s, relation, clips, m), epsilon)
    _check_step_noise(steps, noise_scales)
    assumptions = list(assumptions) + list(public_n_assumptions(relation, m))

    start = time.perf_counter()
    bit_generator = _kernel_generator(seed_seq)
    margins = np.empty(n) if executor is None else None
    if executor is not None:
        run = executor.cd_runner(problem, steps=steps, clips=clips, noise_scales=noise_scales,
                                 coef=coef, n_inner=n_inner, average=average,
                                 cyclic=selection == "cyclic", bit_generator=bit_generator,
                                 normaliser=m)
    elif problem.is_sparse:
        X = problem.X_csc()
        run = lambda k_outer, offset: _cd.cd_csc(  # noqa: E731
            X.data, X.indices, X.indptr, n, problem.y, problem.loss.kind, problem.loss.param,
            problem.penalty.kind, *problem.penalty.params, steps, clips, noise_scales, coef,
            k_outer, n_inner, average, selection == "cyclic", offset, bit_generator, margins,
            normaliser=m, count_clipped=record_history)
    else:
        X = problem.X_kernel_columns()  # Fortran-ordered, float64 or float32
        run = lambda k_outer, offset: _cd.cd_dense(  # noqa: E731
            X, problem.y, problem.loss.kind, problem.loss.param, problem.penalty.kind,
            *problem.penalty.params, steps, clips, noise_scales, coef, k_outer, n_inner,
            average, selection == "cyclic", offset, bit_generator, margins, normaliser=m,
            count_clipped=record_history)
    history_passes, history_objective = [], []
    n_clipped = 0
    if record_history:
        history_passes.append(0.0)
        history_objective.append(objective_or_inf(problem, coef))
        for t in range(n_outer):
            n_clipped += run(1, t * n_inner)
            history_passes.append((t + 1) * n_inner / p)
            history_objective.append(objective_or_inf(problem, coef))
    else:
        # Nothing computed from the data beside the release: no non-private side output.
        n_clipped = run(n_outer, 0)
    elapsed = time.perf_counter() - start

    if share == 0.0:
        budget_split = {"optimization": 1.0}
    else:
        budget_split = {"smoothness constants": share, "optimization": 1.0 - share}
    report = _report(event, epsilon=epsilon, delta=delta, s=s, releases=releases,
                     relation=relation, budget_split=budget_split, assumptions=assumptions,
                     conditions=conditions, random_state=random_state, calibration=calibration)
    updates = releases
    stats = {
        "time": elapsed,
        "n_outer": n_outer,
        "n_inner": n_inner,
        "updates": updates,
        "noise_multiplier": s,
        "smoothness": M,
        "steps": steps,
        "clips": clips,
        "noise_scales": noise_scales,
        "calibration": calibration,
        "normaliser": m,
    }
    if record_history:
        # computed from the data: only with the other non-private diagnostic (the history),
        # and listed in privacy.non_private_outputs (result.NON_PRIVATE_STATS)
        stats["clipped_fraction"] = n_clipped / max(1, updates * (
            problem.X.nnz if problem.is_sparse else n * p) / p)
    history = History(np.asarray(history_passes), np.asarray(history_objective))
    return Result(coef=coef, privacy=report, history=history, stats=stats)


#: What :func:`dp_cd_grid`'s report lists among its non-private outputs: the runs' seeds.
GRID_SEEDS_OUTPUT = (
    "GridResult.seed_sequences: every run's seed (with random_state=None, the fresh "
    "operating-system entropy), kept so that a run can be reproduced; whoever holds them "
    "regenerates each run's noise, so keep them with the private data")


@dataclass(frozen=True)
class GridResult:
    """Outcome of :func:`dp_cd_grid`: one run per (step, clip, seed).

    Attributes
    ----------
    coef : ndarray of shape (n_steps, n_clips, n_seeds, n_features)
    objective : ndarray of shape (n_steps, n_clips, n_seeds)
        :math:`F` of each run's output.
    steps, clips : ndarray
        The grids.
    seed_sequences : list of SeedSequence
        Run ``r = (i_step * n_clips + i_clip) * n_seeds + i_seed`` used ``seed_sequences[r]``;
        ``dp_cd(..., random_state=seed_sequences[r])`` reproduces it bit for bit. They
        hold the runs' entropy (also for ``random_state=None``): not private, and listed in
        the report's ``non_private_outputs`` (:data:`GRID_SEEDS_OUTPUT`).
    privacy : PrivacyReport
        The guarantee of **each** run (all share it). Releasing several runs, or the best one
        chosen on the private data, is not covered by it.
    stats : dict
    """

    coef: np.ndarray
    objective: np.ndarray
    steps: np.ndarray
    clips: np.ndarray
    seed_sequences: list
    privacy: object
    stats: dict


def dp_cd_grid(problem: Problem, *, epsilon: float, delta: float, steps: ArrayLike,
               clips: ArrayLike, n_seeds: int = 1, passes: float | None = None,
               n_outer: int | None = None, n_inner: int | None = None, average: bool = True,
               selection: str = "random", calibration: str = "rdp",
               smoothness: str | ArrayLike = "auto", smoothness_share: float = 0.1,
               smoothness_bounds: str | ArrayLike = "auto",
               neighboring_relation: str | NeighboringRelation = "replace_one",
               public_n: int | None = None, random_state: RandomStateLike = None,
               n_threads: int | None = None, evaluate: bool = True,
               budget: Budget | None = None) -> GridResult:
    """Many independent DP-CD runs, one per (step, clip, seed), in parallel over runs.

    The hyperparameter grids of the paper's experiments (Appendix G.1) in one call: the
    compiled kernel runs the configurations on ``n_threads`` OpenMP threads (dynamic schedule),
    each with its own random stream and scratch, so the result does not depend on the thread
    count and run r equals ``dp_cd(problem, ..., step=steps[i], clip=clips[j],
    random_state=result.seed_sequences[r])``.

    Parameters
    ----------
    problem, epsilon, delta, passes, n_outer, n_inner, average, selection, calibration
        As in :func:`dp_cd`.
    neighboring_relation, public_n
        As in :func:`dp_cd` (under add/remove-one every run divides by ``public_n``).
    steps, clips : array-like of float
        Step scales gamma and clip scales C (the grid is their outer product).
    n_seeds : int, default=1
        Independent runs per configuration.
    smoothness, smoothness_share, smoothness_bounds
        As in :func:`dp_cd`. With ``"private"`` each run makes its own Laplace release of the
        constants (from its own stream, as ``dp_cd`` with that run's seed sequence would), so
        steps and clips differ between runs; the clipped means are computed once.
    random_state : None, int, SeedSequence or Generator
        Root of the runs' seed sequences.
    n_threads : int or None
        OpenMP threads (None: all cores).
    budget : Budget or None, default=None
        Charged with **every** run of the grid (``n_runs`` releases of one run's event), before
        the data are read: the grid spends ``n_runs`` times what one run does.
    evaluate : bool, default=True
        Compute each run's objective (``GridResult.objective``; NaN when False). These are
        exact values of the training objective, not private: the report lists them in
        ``non_private_outputs`` (outside the guarantee, which covers the coefficients; its
        ``conditions`` are unchanged).

    Returns
    -------
    GridResult

    Notes
    -----
    **Privacy guarantee.** Each run is (epsilon, delta)-DP exactly as :func:`dp_cd` (same
    noise multiplier: it depends only on epsilon, delta and T K). The grid as a whole, and the
    choice of the best run on the private data, are not: that is the non-private tuning
    protocol of the paper (note 002, section 5.4).
    """
    problem = check_problem(problem)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    relation = check_relation(neighboring_relation)
    n, p = problem.n_samples, problem.n_features
    m = normaliser(relation, n, public_n)
    n_outer, n_inner = dp_cd_schedule(p, passes=passes, n_outer=n_outer, n_inner=n_inner,
                                      average=average)
    _check_options(selection, calibration, smoothness)
    step_grid, clip_grid = _check_grid(steps, "steps"), _check_grid(clips, "clips")
    if step_grid.size == 0 or clip_grid.size == 0:
        raise ValueError("steps and clips must not be empty.")
    for k, value in enumerate(step_grid):
        check_scalar(value, f"steps[{k}]", low=0.0)
    for k, value in enumerate(clip_grid):
        _check_clip(value, epsilon, f"clips[{k}]")
    n_seeds = check_int(n_seeds, "n_seeds", low=1)
    private = isinstance(smoothness, str) and smoothness == "private"
    shape = (step_grid.size, clip_grid.size, n_seeds)
    n_runs = int(np.prod(shape))
    seed_seqs = child_seed_sequences(check_random_state(random_state), n_runs)
    releases = n_outer * n_inner
    share = _smoothness_share(smoothness, smoothness_share, smoothness_bounds, epsilon, p,
                              problem.loss)
    s, cd_event = _calibrate(epsilon * (1.0 - share), delta, releases, calibration)
    public = None
    if not private and _smoothness_reads_no_record(problem, smoothness):
        # As in dp_cd: with public constants, a grid whose noise or steps overflow (a tiny
        # epsilon, a huge step) is refused before the budget is charged.
        public = _smoothness(problem, smoothness, 0.0, None, epsilon, None)
        for step in step_grid:
            for clip in clip_grid:
                steps_, clips_ = dp_cd_constants(public[0], step=step, clip=clip)
                _check_step_noise(steps_, check_noise_scale(
                    _noise_scales(s, relation, clips_, m), epsilon))
    # serial below the work threshold (issue 18): every run touches each stored entry of X.
    # Resolved before the budget is charged: an invalid n_threads (0.0, 1.5) is a public
    # argument, and its TypeError/ValueError must leave the budget untouched (found outside
    # CI, session 19 seed 479: n_threads=0.0 was refused after the charge).
    threads = effective_n_threads(n_threads, work=n_runs * (problem.X.nnz if problem.is_sparse
                                                            else n * p))
    event = _run_event(share, epsilon, p, cd_event)
    spend(budget, SelfComposedDpEvent(event, n_runs) if n_runs > 1 else event,
          neighboring_relation=relation, delta=delta)
    if private:
        release = SmoothnessRelease(problem, epsilon=share * epsilon, bounds=smoothness_bounds,
                                    normaliser=m)
        run_M = [release.draw(_smoothness_stream(seq)) for seq in seed_seqs]
        smoothness_event = release.event
        assumptions, conditions = release.assumptions, release.conditions
    else:
        share = 0.0
        M, smoothness_event, assumptions, conditions, _ = public if public is not None else (
            _smoothness(problem, smoothness, 0.0, None, epsilon, None))
        run_M = [M] * n_runs
    assumptions = list(assumptions) + list(public_n_assumptions(relation, m))
    run_steps = np.empty((n_runs, p))
    run_clips = np.empty((n_runs, p))
    for i, step in enumerate(step_grid):
        for j, clip in enumerate(clip_grid):
            for k in range(n_seeds):
                r = (i * clip_grid.size + j) * n_seeds + k
                run_steps[r], run_clips[r] = dp_cd_constants(run_M[r], step=step, clip=clip)
    run_noise = check_noise_scale(_noise_scales(s, relation, run_clips, m), epsilon)
    _check_step_noise(run_steps, run_noise)
    generators = [_kernel_generator(seq) for seq in seed_seqs]
    coef = np.zeros((n_runs, p))
    n_clipped = np.zeros(n_runs, dtype=np.int64)
    start = time.perf_counter()
    args = (problem.y, problem.loss.kind, problem.loss.param, problem.penalty.kind,
            *problem.penalty.params, run_steps, run_clips, run_noise, coef, n_outer, n_inner,
            average, selection == "cyclic", generators, n_clipped, threads, m)
    if problem.is_sparse:
        X = problem.X_csc()
        _cd.cd_grid_csc(X.data, X.indices, X.indptr, n, *args, count_clipped=evaluate)
    else:
        _cd.cd_grid_dense(problem.X_kernel_columns(), *args, count_clipped=evaluate)
    elapsed = time.perf_counter() - start
    objective = (np.array([objective_or_inf(problem, w) for w in coef]) if evaluate
                 else np.full(n_runs, np.nan))
    if share == 0.0:
        budget_split = {"optimization": 1.0}
    else:
        budget_split = {"smoothness constants": share, "optimization": 1.0 - share}
    report = _report(event, epsilon=epsilon, delta=delta, s=s, releases=releases,
                     relation=relation, budget_split=budget_split, assumptions=assumptions,
                     conditions=conditions, random_state=random_state, calibration=calibration)
    stats = {"time": elapsed, "n_threads": threads, "noise_multiplier": s, "n_outer": n_outer,
             "n_inner": n_inner, "normaliser": m}
    if evaluate:
        # computed from the data: only with the objective values, and listed as not private
        stats["clipped"] = n_clipped.reshape(shape)
    report = with_stats_conditions(with_objective_condition(report, objective), stats)
    report = dataclasses.replace(
        report, non_private_outputs=report.non_private_outputs + (GRID_SEEDS_OUTPUT,))
    return GridResult(coef=coef.reshape(shape + (p,)), objective=objective.reshape(shape),
                      steps=step_grid, clips=clip_grid, seed_sequences=seed_seqs,
                      privacy=report, stats=stats)
