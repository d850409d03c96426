"""Empirical privacy auditing: a lower confidence bound on epsilon from a distinguishing test.

The audit plays the adversary of the hypothesis-testing view of differential privacy
(Wasserman and Zhou 2010; Kairouz, Oh and Viswanath 2015). Given neighbouring inputs
:math:`D_0 \\sim D_1`, a mechanism :math:`M` and a rejection region :math:`R` ("guess
:math:`D_1`"), write :math:`\\mathrm{FPR} = P[M(D_0) \\in R]` and
:math:`\\mathrm{FNR} = P[M(D_1) \\notin R]`. If :math:`M` is :math:`(\\varepsilon, \\delta)`-DP then

.. math::

    1 - \\mathrm{FNR} \\le e^{\\varepsilon}\\, \\mathrm{FPR} + \\delta, \\qquad
    1 - \\mathrm{FPR} \\le e^{\\varepsilon}\\, \\mathrm{FNR} + \\delta,

so that

.. math::

    \\varepsilon \\ge \\max\\Big( \\log\\frac{1 - \\delta - \\mathrm{FNR}}{\\mathrm{FPR}},\\;
    \\log\\frac{1 - \\delta - \\mathrm{FPR}}{\\mathrm{FNR}} \\Big).

Replacing both rates by one-sided Clopper-Pearson upper bounds, each at level
:math:`1 - \\alpha/2` (a union bound, so that both hold together with probability at least
:math:`1 - \\alpha`), gives a lower bound on :math:`\\varepsilon` that holds with probability
at least :math:`1 - \\alpha` over the trials (Jagielski, Ullman and Oprea 2020, Section 3 and
Algorithm 2; Nasr, Song, Thakurta, Papernot and Carlini 2021, Section 4.1). The bound is the
right-hand side above evaluated at the upper bounds (the right-hand side decreases in both
rates), and 0 when it is negative or undefined.

The rejection region is a threshold on a scalar statistic of the output, ``stat >= t`` or
``stat <= t``. Choosing ``t`` on the same trials that estimate the rates would bias the bound
upward; the trials are therefore split in two halves: the first half picks the threshold (the
one maximising the same bound computed on that half), the second half, independent of the
choice, gives the reported rates and bound.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._random import check_random_state, child_seed_sequences
from .._validation import check_delta, check_int, check_scalar

__all__ = ["AuditResult", "audit", "clopper_pearson_upper", "epsilon_lower_bound",
           "sampler_from_mechanism"]

#: Candidate thresholds tried on the selection half (quantiles of the pooled statistics,
#: or every distinct value when there are fewer).
N_CANDIDATE_THRESHOLDS = 2048


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper bound on a binomial rate, at level ``1 - alpha``.

    Parameters
    ----------
    k : int or array of int
        Successes, ``0 <= k <= n``.
    n : int or array of int
        Trials, ``n >= 1``.
    alpha : float
        Error probability in (0, 1).

    Returns
    -------
    float or ndarray
        The ``1 - alpha`` quantile of ``Beta(k + 1, n - k)`` (1 where ``k == n``), so that
        ``P[p <= upper] >= 1 - alpha`` for every true rate ``p`` (Clopper and Pearson 1934).
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    full = k >= n
    upper = stats.beta.ppf(1.0 - alpha, k + 1.0, np.where(full, 1.0, n - k))
    upper = np.where(full, 1.0, upper)
    return float(upper) if upper.ndim == 0 else upper


def _bound_from_upper(fpr_upper, fnr_upper, delta):
    """max(log((1 - delta - FNR)/FPR), log((1 - delta - FPR)/FNR)), negative or undefined -> 0."""
    fpr_upper = np.asarray(fpr_upper, dtype=np.float64)
    fnr_upper = np.asarray(fnr_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.log(np.maximum(1.0 - delta - fnr_upper, 0.0)) - np.log(fpr_upper)
        second = np.log(np.maximum(1.0 - delta - fpr_upper, 0.0)) - np.log(fnr_upper)
    first = np.where(np.isnan(first), -np.inf, first)
    second = np.where(np.isnan(second), -np.inf, second)
    return np.maximum(np.maximum(first, second), 0.0), first >= second


def epsilon_lower_bound(false_positives, n_negatives, false_negatives, n_positives, *,
                        delta=0.0, confidence=0.95):
    """Lower confidence bound on epsilon from the error counts of one fixed test.

    Parameters
    ----------
    false_positives : int
        Trials on input 0 (out of ``n_negatives``) that the test assigned to input 1.
    n_negatives : int
        Trials on input 0, at least 1.
    false_negatives : int
        Trials on input 1 (out of ``n_positives``) that the test assigned to input 0.
    n_positives : int
        Trials on input 1, at least 1.
    delta : float, default=0.0
        The delta of the claimed guarantee, in [0, 1).
    confidence : float, default=0.95
        Probability, over the trials, that the bound holds, in (0, 1).

    Returns
    -------
    float
        ``max(log((1 - delta - FNR_ub) / FPR_ub), log((1 - delta - FPR_ub) / FNR_ub), 0)``
        with one-sided Clopper-Pearson upper bounds at level ``1 - (1 - confidence) / 2``
        (see the module docstring).
    """
    n_negatives = check_int(n_negatives, "n_negatives", low=1)
    n_positives = check_int(n_positives, "n_positives", low=1)
    false_positives = check_int(false_positives, "false_positives", low=0, high=n_negatives)
    false_negatives = check_int(false_negatives, "false_negatives", low=0, high=n_positives)
    delta = check_delta(delta, allow_zero=True)
    confidence = check_scalar(confidence, "confidence", low=0.0, high=1.0)
    alpha = (1.0 - confidence) / 2.0
    bound, _ = _bound_from_upper(clopper_pearson_upper(false_positives, n_negatives, alpha),
                                 clopper_pearson_upper(false_negatives, n_positives, alpha),
                                 delta)
    return float(bound)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    eps_lower : float
        Lower bound on epsilon holding with probability ``confidence`` (0 if none).
    delta : float
        The delta at which the bound is stated.
    confidence : float
        Confidence level of ``eps_lower``.
    threshold : float
        Threshold of the test, chosen on the selection half.
    direction : {">=", "<="}
        The test guesses input 1 when ``statistic direction threshold``.
    fpr, fnr : float
        Observed false-positive and false-negative rates on the evaluation half.
    fpr_upper, fnr_upper : float
        Their one-sided Clopper-Pearson upper bounds (level ``1 - (1 - confidence) / 2``).
    false_positives, n_negatives, false_negatives, n_positives : int
        Evaluation-half counts.
    selection_eps : float
        The bound the chosen test reached on the selection half (for diagnostics only: it is
        biased upward by the choice).
    n_trials : int
        Trials per input, both halves together.
    """

    eps_lower: float
    delta: float
    confidence: float
    threshold: float
    direction: str
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    false_positives: int
    n_negatives: int
    false_negatives: int
    n_positives: int
    selection_eps: float
    n_trials: int


def _select_threshold(stat0, stat1, delta, alpha):
    """The (threshold, direction, bound) maximising the bound on the selection half."""
    pooled = np.concatenate([stat0, stat1])
    distinct = np.unique(pooled)
    if distinct.size > N_CANDIDATE_THRESHOLDS:
        distinct = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, N_CANDIDATE_THRESHOLDS),
                                         method="inverted_cdf"))
    s0, s1 = np.sort(stat0), np.sort(stat1)
    n0, n1 = s0.size, s1.size
    best = (-1.0, float(distinct[0]), ">=")
    for direction in (">=", "<="):
        if direction == ">=":
            fp = n0 - np.searchsorted(s0, distinct, side="left")       # stat0 >= t
            tp = n1 - np.searchsorted(s1, distinct, side="left")
        else:
            fp = np.searchsorted(s0, distinct, side="right")           # stat0 <= t
            tp = np.searchsorted(s1, distinct, side="right")
        bound, _ = _bound_from_upper(clopper_pearson_upper(fp, n0, alpha),
                                     clopper_pearson_upper(n1 - tp, n1, alpha), delta)
        k = int(np.argmax(bound))
        if bound[k] > best[0]:
            best = (float(bound[k]), float(distinct[k]), direction)
    return best[1], best[2], best[0]


def _statistics(sampler, x, n, seed_seq, name):
    out = np.asarray(sampler(x, n, seed_seq), dtype=np.float64)
    if out.shape != (n,):
        raise ValueError(f"sampler must return an array of shape ({n},) for {name}; "
                         f"got shape {out.shape}.")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"sampler returned NaN or inf statistics for {name}.")
    return out


def audit(sampler, input0, input1, *, n_trials, delta=0.0, confidence=0.95,
          random_state=None):
    """Lower confidence bound on the epsilon of a mechanism from a pair of neighbouring inputs.

    Parameters
    ----------
    sampler : callable
        ``sampler(x, n, seed_seq) -> ndarray of shape (n,)``: ``n`` independent runs of the
        mechanism on input ``x``, each reduced to a scalar statistic, drawn from the
        ``numpy.random.SeedSequence`` ``seed_seq``. Batched for speed (a mechanism that adds
        i.i.d. noise can release ``n`` copies in one call); :func:`sampler_from_mechanism`
        builds one from a plain mechanism.
    input0, input1 : object
        Neighbouring inputs (the canary pair), passed to ``sampler`` unchanged.
    n_trials : int
        Runs per input (>= 4): the first half selects the test, the second half evaluates it.
    delta : float, default=0.0
        The delta of the claimed guarantee, in [0, 1).
    confidence : float, default=0.95
        Level of the lower bound, in (0, 1).
    random_state : None, int, SeedSequence or Generator
        Seeds the runs (see :mod:`dpsco_core._random`).

    Returns
    -------
    AuditResult
        ``eps_lower`` is a lower bound on the true epsilon of the mechanism at ``delta`` with
        probability at least ``confidence``. A correct mechanism claiming ``epsilon`` gives
        ``eps_lower > epsilon`` with probability at most ``1 - confidence``.

    Notes
    -----
    With :math:`\\alpha = 1 - \\mathrm{confidence}` and Clopper-Pearson upper bounds
    :math:`\\overline{\\mathrm{FPR}}, \\overline{\\mathrm{FNR}}` at level :math:`1 - \\alpha/2`,

    .. math::

        \\hat\\varepsilon = \\max\\Big(0,\\;
        \\log\\frac{1 - \\delta - \\overline{\\mathrm{FNR}}}{\\overline{\\mathrm{FPR}}},\\;
        \\log\\frac{1 - \\delta - \\overline{\\mathrm{FPR}}}{\\overline{\\mathrm{FNR}}}\\Big).

    The two rates come from independent trials on the evaluation half, and the test was fixed
    by the selection half, so both Clopper-Pearson intervals are exact and the union bound gives
    the stated confidence.

    References
    ----------
    Jagielski, Ullman and Oprea, "Auditing differentially private machine learning: how private
    is private SGD?", NeurIPS 2020 (Algorithm 2, Clopper-Pearson bounds).
    Nasr, Song, Thakurta, Papernot and Carlini, "Adversary instantiation: lower bounds for
    differentially private machine learning", IEEE S&P 2021 (Section 4.1).
    Kairouz, Oh and Viswanath, "The composition theorem for differential privacy", ICML 2015
    (the hypothesis-testing characterisation).
    """
    if not callable(sampler):
        raise TypeError(f"sampler must be callable; got {type(sampler).__name__}.")
    n_trials = check_int(n_trials, "n_trials", low=4)
    delta = check_delta(delta, allow_zero=True)
    confidence = check_scalar(confidence, "confidence", low=0.0, high=1.0)
    alpha = (1.0 - confidence) / 2.0
    seq0, seq1 = child_seed_sequences(check_random_state(random_state), 2)
    stat0 = _statistics(sampler, input0, n_trials, seq0, "input0")
    stat1 = _statistics(sampler, input1, n_trials, seq1, "input1")
    half = n_trials // 2
    threshold, direction, selection_eps = _select_threshold(stat0[:half], stat1[:half], delta,
                                                            alpha)
    eval0, eval1 = stat0[half:], stat1[half:]
    if direction == ">=":
        false_positives = int(np.count_nonzero(eval0 >= threshold))
        false_negatives = int(np.count_nonzero(eval1 < threshold))
    else:
        false_positives = int(np.count_nonzero(eval0 <= threshold))
        false_negatives = int(np.count_nonzero(eval1 > threshold))
    n0, n1 = eval0.size, eval1.size
    fpr_upper = clopper_pearson_upper(false_positives, n0, alpha)
    fnr_upper = clopper_pearson_upper(false_negatives, n1, alpha)
    eps_lower, _ = _bound_from_upper(fpr_upper, fnr_upper, delta)
    return AuditResult(
        eps_lower=float(eps_lower), delta=delta, confidence=confidence,
        threshold=threshold, direction=direction,
        fpr=false_positives / n0, fnr=false_negatives / n1,
        fpr_upper=float(fpr_upper), fnr_upper=float(fnr_upper),
        false_positives=false_positives, n_negatives=n0,
        false_negatives=false_negatives, n_positives=n1,
        selection_eps=float(selection_eps), n_trials=n_trials,
    )


def sampler_from_mechanism(mechanism, statistic=None):
    """A batched sampler (for :func:`audit`) from a one-release mechanism.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(x, random_state=seed_seq) -> output``, one private release.
    statistic : callable, optional
        ``statistic(output) -> float``; default ``float(output)`` (scalar outputs).

    Returns
    -------
    callable
        ``sampler(x, n, seed_seq)`` calling ``mechanism`` ``n`` times, run ``i`` seeded by
        child ``i`` of ``seed_seq`` (independent runs). One Python call per run: slower than
        a batched sampler, but it audits the public entry point end to end.
    """
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable; got {type(mechanism).__name__}.")
    statistic = float if statistic is None else statistic

    def sampler(x, n, seed_seq):
        children = child_seed_sequences(seed_seq, n)
        return np.fromiter((statistic(mechanism(x, random_state=c)) for c in children),
                           dtype=np.float64, count=n)

    return sampler

