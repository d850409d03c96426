"""Renyi DP of mechanisms run on a batch sampled *with* replacement.

A batch of ``m`` indices is drawn independently and uniformly from ``[n]``
(:class:`~dpsco_core.privacy.events.SampledWithReplacementDpEvent`); neighbours differ in one
record (REPLACE_ONE), which is drawn ``K ~ Binomial(m, 1/n)`` times. dp-accounting 0.6 defines
the event but none of its accountants (RDP or PLD) supports it, and there is no tight general
RDP bound for it in the literature we rely on. Two valid bounds are offered, and the accountant
takes, order by order, the smaller of those that apply:

Count conditioning (always valid; this module's derivation)
    Given the index sequence, the outputs on ``D`` and ``D'`` are Gaussians whose means differ
    by at most ``K Delta`` (each occurrence of the differing record moves the batch function by
    at most the per-record sensitivity ``Delta``). Both outputs are mixtures over the *same*
    index distribution, and ``exp((alpha - 1) D_alpha)`` is jointly convex (it is the
    f-divergence of ``x^alpha``), so, with ``s = noise_multiplier = sigma / Delta``,

    .. math::

        D_\\alpha \\le \\frac{1}{\\alpha - 1}
        \\log \\mathbb{E}_{K \\sim \\mathrm{Bin}(m, 1/n)}
        \\exp\\Big(\\frac{(\\alpha - 1)\\, \\alpha K^2}{2 s^2}\\Big).

    It amplifies only linearly in ``m/n`` for small orders (``~ (m/n) alpha / (2 s^2)``) but
    needs no condition at all. It pairs every count with its own worst case, so rare large
    counts dominate it: with large batches and little noise (``m = 1000``, ``s = 1``) it is
    valid but useless (epsilon in the hundreds of thousands), far above the true
    divergence. A tighter analysis (a ternary-divergence bound in the style of Wang, Balle
    and Kasiviswanathan 2019 for the with-replacement count, or a PLD of the count mixture)
    is not implemented.
Proposition 7 of the ReSQue paper ([BDRS18] Theorem 12)
    If ``P, Q, R`` pairwise satisfy ``D_alpha <= alpha tau`` for every ``alpha > 1``, with
    ``tau <= 1/3`` and ``s in (0, 1/40)``, then for ``alpha in (1, 3/tau)``,
    ``D_alpha(sP + (1-s)R || sQ + (1-s)R) <= 13 s^2 alpha tau`` (:func:`bdrs18_mixture_rdp`).
    For sampling with replacement, ``s = P[K >= 1] = 1 - (1 - 1/n)^m``
    (:func:`with_replacement_inclusion_probability`), ``R`` is the output law given ``K = 0``
    (the same under ``D`` and ``D'``), and ``P``, ``Q`` the laws given ``K >= 1`` under ``D``
    and ``D'``. Replacing every occurrence of the differing index by a fresh uniform draw from
    the other indices turns the ``K >= 1`` index law into the ``K = 0`` law exactly, so the
    coupled means differ by at most ``K Delta <= m Delta``; by joint convexity every pair of
    ``P, Q, R`` is then ``alpha m^2 / (2 s^2)``-bounded: ``tau = m^2 / (2 s^2)``. This is
    quadratic in ``m/n`` but needs ``s >= m sqrt(3/2)``, ``m/n`` below about ``1/40`` and an
    order below ``3 / tau``.

References
----------
Carmon, Jambulapati, Jin, Lee, Liu, Sidford and Tian, "ReSQueing parallel and private stochastic
convex optimization", FOCS 2023 (arXiv:2301.00457), section IV, Proposition 7. Bun, Dwork,
Rothblum and Steinke, "Composable and versatile privacy via truncated CDP", STOC 2018
([BDRS18]), Theorem 12. Van Erven and Harremoes, "Renyi divergence and Kullback-Leibler
divergence", IEEE Trans. Inf. Theory 2014 (joint convexity, Theorem 13).
"""

import math

import numpy as np
from scipy import special, stats

from .._validation import check_int, check_positive, check_scalar
from ._checks import check_orders, round_up

__all__ = ["with_replacement_inclusion_probability", "with_replacement_count_tail",
           "bdrs18_mixture_rdp",
           "rdp_sampled_with_replacement_gaussian", "BDRS18_MAX_TAU", "BDRS18_MAX_WEIGHT",
           "BDRS18_CONSTANT"]

#: Proposition 7's conditions and constant: ``tau <= 1/3``, ``s < 1/40``, bound ``13 s^2 alpha tau``.
BDRS18_MAX_TAU = 1.0 / 3.0
BDRS18_MAX_WEIGHT = 1.0 / 40.0
BDRS18_CONSTANT = 13.0

# Rows of the (orders x counts) table evaluated at once in the count-conditioning bound.
_CHUNK_ELEMENTS = 1 << 22


def with_replacement_inclusion_probability(source_dataset_size, sample_size):
    """Probability that a given record is drawn at least once: ``1 - (1 - 1/n)^m``, rounded up.

    The mixture weight ``s`` of Proposition 7 for sampling with replacement (it is at most
    ``m/n``).

    Parameters
    ----------
    source_dataset_size : int
        ``n`` >= 1.
    sample_size : int
        ``m`` >= 1.

    Returns
    -------
    float
    """
    n = check_int(source_dataset_size, "source_dataset_size", low=1)
    m = check_int(sample_size, "sample_size", low=1)
    if n == 1:
        return 1.0
    return min(1.0, float(round_up(-math.expm1(m * math.log1p(-1.0 / n)))))


def with_replacement_count_tail(source_dataset_size, sample_size, max_count):
    """Probability that a given record is drawn more than ``max_count`` times, rounded up.

    ``P[K > b]`` for ``K ~ Binomial(m, 1/n)``, computed exactly (``scipy.stats.binom.sf``):
    the slack of the event "at most ``b`` copies of the differing index" that the proof of
    Lemma 7 conditions on (the paper bounds it by Chernoff with ``b = 2 log(2/delta)``, for
    ``m/n <= 1/60``; the exact tail is smaller and needs no condition). Pass it as
    ``extra_delta`` to :func:`~dpsco_core.privacy.approximate_rdp.amplify_by_mixture`.

    Parameters
    ----------
    source_dataset_size : int
        ``n`` >= 1.
    sample_size : int
        ``m`` >= 1.
    max_count : int
        ``b`` >= 0.

    Returns
    -------
    float
        In [0, 1].
    """
    n = check_int(source_dataset_size, "source_dataset_size", low=1)
    m = check_int(sample_size, "sample_size", low=1)
    b = check_int(max_count, "max_count", low=0)
    if b >= m:
        return 0.0
    return min(1.0, float(round_up(stats.binom.sf(b, m, 1.0 / n))))


def bdrs18_mixture_rdp(tau, mixture_weight, orders):
    """Proposition 7 ([BDRS18] Thm 12): ``13 s^2 alpha tau`` on ``(1, 3/tau)``, inf elsewhere.

    If three distributions ``P, Q, R`` satisfy ``D_alpha(P_1 || P_2) <= alpha tau`` for every
    pair and **every** ``alpha > 1``, then ``D_alpha(sP + (1-s)R || sQ + (1-s)R) <= 13 s^2
    alpha tau`` for ``alpha in (1, 3/tau)``. Orders at or beyond ``3/tau`` get ``inf`` (no
    bound), never a number.

    Parameters
    ----------
    tau : float
        The pairwise zCDP-like slope, in [0, 1/3].
    mixture_weight : float
        ``s``, in (0, 1/40).
    orders : array_like of float
        Orders, each > 1.

    Returns
    -------
    ndarray of shape (n_orders,)
        The bound, rounded up (``inf`` where the proposition does not apply).

    Raises
    ------
    ValueError
        If ``tau`` is outside [0, 1/3] or ``mixture_weight`` outside (0, 1/40): the
        proposition's hypotheses.
    """
    tau = check_scalar(tau, "tau", low=0.0, high=BDRS18_MAX_TAU, low_open=False,
                       high_open=False)
    s = check_scalar(mixture_weight, "mixture_weight", low=0.0, high=BDRS18_MAX_WEIGHT)
    orders = check_orders(orders)
    if tau == 0.0:
        return np.zeros_like(orders)
    bound = round_up(BDRS18_CONSTANT * s * s * tau * orders)
    return np.where(orders < 3.0 / tau, bound, np.inf)


def _count_conditioning_rdp(n, m, s, orders):
    """``(1/(alpha-1)) log E exp((alpha-1) alpha K^2 / (2 s^2))``, ``K ~ Bin(m, 1/n)``."""
    k = np.arange(m + 1, dtype=np.float64)
    logpmf = stats.binom.logpmf(k, m, 1.0 / n)
    keep = np.isfinite(logpmf)
    k, logpmf = k[keep], logpmf[keep]
    out = np.empty_like(orders)
    rows = max(1, _CHUNK_ELEMENTS // k.size)
    for start in range(0, orders.size, rows):
        a = orders[start:start + rows, None]
        y = (a - 1.0) * a * (k * k) / (2.0 * s * s)        # exponent of each count
        logterm = logpmf + y
        # E[e^y] = 1 + E[e^y - 1]: expm1/log1p keep the small-order values accurate (they
        # are ~ (alpha - 1) m/n, far below 1). A count whose exponent y overflows expm1 but
        # whose probability is tiny enters as e^(log pmf + y) (then e^y - 1 = e^y in
        # floating point); once some log pmf + y reaches 600 the log-sum-exp form is used.
        capped = np.minimum(y, 700.0)
        terms = np.where(y < 700.0, np.exp(logpmf) * np.expm1(capped),
                         np.exp(np.minimum(logterm, 700.0)))
        small = np.log1p(np.sum(terms, axis=1))
        large = special.logsumexp(logterm, axis=1)
        use_small = np.max(logterm, axis=1) < 600.0
        out[start:start + rows] = np.where(use_small, small, large) / (a[:, 0] - 1.0)
    return out


def rdp_sampled_with_replacement_gaussian(source_dataset_size, sample_size, noise_multiplier,
                                          orders):
    """RDP curve of a Gaussian on a batch sampled with replacement, under REPLACE_ONE.

    The mechanism releases ``f(batch) + N(0, sigma^2 I)`` where the batch is ``m`` indices
    drawn uniformly with replacement from ``[n]`` and every occurrence of a record moves ``f``
    by at most ``Delta`` in l2 norm when that record is replaced (``noise_multiplier =
    sigma / Delta``). The bound is, order by order, the smaller of the count-conditioning bound
    (valid at every order) and Proposition 7 with ``tau = m^2 / (2 s^2)`` and
    ``s = 1 - (1 - 1/n)^m`` where its hypotheses hold (module docstring).

    Parameters
    ----------
    source_dataset_size : int
        ``n`` >= 1.
    sample_size : int
        ``m`` >= 1.
    noise_multiplier : float
        ``sigma / Delta`` > 0.
    orders : array_like of float
        Orders, each > 1.

    Returns
    -------
    ndarray of shape (n_orders,)
        Upper bounds on ``D_alpha``, rounded up.

    Notes
    -----
    Neighbouring relation: REPLACE_ONE with ``n`` public. With ``n = m = 1`` the bound is the
    Gaussian's ``alpha / (2 s^2)`` exactly.
    """
    n = check_int(source_dataset_size, "source_dataset_size", low=1)
    m = check_int(sample_size, "sample_size", low=1)
    s = check_positive(noise_multiplier, "noise_multiplier")
    orders = check_orders(orders)
    bound = _count_conditioning_rdp(n, m, s, orders)
    tau = m * m / (2.0 * s * s)
    weight = with_replacement_inclusion_probability(n, m)
    if tau <= BDRS18_MAX_TAU and weight < BDRS18_MAX_WEIGHT:
        bound = np.minimum(bound, bdrs18_mixture_rdp(tau, weight, orders))
    return round_up(bound)
