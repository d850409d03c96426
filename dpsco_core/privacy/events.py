"""Privacy events: what a mechanism did, described fully enough to account for it.

Contract (after dp-accounting's ``dp_event.py``): an event documents its mechanism mathematically,
so that the author of an accountant needs nothing else. Events are small immutable values. An
event's meaning never changes; a new mechanism gets a new event class. Solvers build a tree of
events (composition, sampling) and the privacy report is computed from that tree by an
accountant, never by hand.

Noise multipliers are always relative to the sensitivity: ``noise_multiplier = noise_scale /
sensitivity``, where the sensitivity is taken under the neighbouring relation that the
accountant is constructed with (see :class:`NeighboringRelation`).
"""

import enum
import math
from dataclasses import dataclass
from typing import Tuple

__all__ = [
    "NeighboringRelation",
    "DpEvent",
    "NoOpDpEvent",
    "NonPrivateDpEvent",
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "EpsilonDeltaDpEvent",
    "ZCDpEvent",
    "PoissonSampledDpEvent",
    "SampledWithReplacementDpEvent",
    "ApproximateRdpDpEvent",
    "SingleEpochTreeAggregationDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
    "RepeatAndSelectDpEvent",
]


class NeighboringRelation(enum.Enum):
    """Which datasets are neighbours.

    ADD_OR_REMOVE_ONE
        D' is D with one record added or removed (n differs by one).
    REPLACE_ONE
        D' is D with one record replaced by an arbitrary other record (n is public and fixed).
        A sum of clipped per-record terms has l2 sensitivity ``2 C`` under this relation, ``C``
        under ADD_OR_REMOVE_ONE.
    ZERO_OUT
        D' is D with one record replaced by a null record whose contribution is zero
        (dp-accounting's ``REPLACE_SPECIAL``; the relation of the DP-SRGD paper). A sum of
        clipped terms has sensitivity ``C``.
    """

    ADD_OR_REMOVE_ONE = "add_or_remove_one"
    REPLACE_ONE = "replace_one"
    ZERO_OUT = "zero_out"


def check_relation(neighboring_relation, name="neighboring_relation"):
    """A :class:`NeighboringRelation`, or its value (``"replace_one"``, ``"add_or_remove_one"``,
    ``"zero_out"``): the one check of the accountants, the budget and the solvers.

    Raises
    ------
    ValueError
        For anything else.
    """
    if isinstance(neighboring_relation, NeighboringRelation):
        return neighboring_relation
    if isinstance(neighboring_relation, str):
        for relation in NeighboringRelation:
            if relation.value == neighboring_relation:
                return relation
    raise ValueError(f"{name} must be one of {sorted(r.value for r in NeighboringRelation)} "
                     f"or a NeighboringRelation; got {neighboring_relation!r}.")


@dataclass(frozen=True, slots=True)
class DpEvent:
    """Base class of every privacy event."""


@dataclass(frozen=True, slots=True)
class NoOpDpEvent(DpEvent):
    """An operation that touches no private data (or only data-independent post-processing)."""


@dataclass(frozen=True, slots=True)
class NonPrivateDpEvent(DpEvent):
    """An operation with no privacy guarantee: composing it gives infinite epsilon."""


@dataclass(frozen=True, slots=True)
class GaussianDpEvent(DpEvent):
    """The Gaussian mechanism ``f(D) + N(0, sigma^2 I)``.

    ``noise_multiplier = sigma / Delta_2`` where ``Delta_2`` is the l2 sensitivity of ``f``
    under the accountant's neighbouring relation. Its RDP curve is
    ``eps(alpha) = alpha / (2 noise_multiplier^2)`` and it is ``mu``-GDP with
    ``mu = 1 / noise_multiplier`` (Dong, Roth and Su 2019).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma / \\Delta_2` (> 0; 0 means no noise, not private).
    """

    noise_multiplier: float


@dataclass(frozen=True, slots=True)
class LaplaceDpEvent(DpEvent):
    """The Laplace mechanism ``f(D) + Lap(b)^d`` (independent coordinates).

    ``noise_multiplier = b / Delta_1`` where ``Delta_1`` is the l1 sensitivity of ``f``. It is
    ``(1 / noise_multiplier)``-DP (pure).

    Parameters
    ----------
    noise_multiplier : float
        :math:`b / \\Delta_1` (> 0).
    """

    noise_multiplier: float


@dataclass(frozen=True, slots=True)
class EpsilonDeltaDpEvent(DpEvent):
    """A mechanism known only to be ``(epsilon, delta)``-DP (``delta = 0``: pure DP).

    Used for mechanisms whose guarantee is a pair rather than a curve, such as report-noisy-max
    (``epsilon``-DP). Accountants that work in RDP may use ``epsilon``-DP implies
    ``(alpha, min(epsilon, alpha epsilon^2 / 2))``-RDP (Bun and Steinke 2016) when
    ``delta = 0``; with ``delta > 0`` only composition by (epsilon, delta) applies.

    Parameters
    ----------
    epsilon : float
        In [0, inf).
    delta : float, default=0.0
        In [0, 1].
    """

    epsilon: float
    delta: float = 0.0


@dataclass(frozen=True, slots=True)
class ZCDpEvent(DpEvent):
    """A mechanism that is ``rho``-zCDP: ``D_alpha <= rho * alpha`` for every ``alpha > 1``.

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    """

    rho: float


@dataclass(frozen=True, slots=True)
class PoissonSampledDpEvent(DpEvent):
    """Run ``event`` on a Poisson subsample: each record kept independently with ``sampling_probability``.

    Parameters
    ----------
    sampling_probability : float
        The probability q in [0, 1] that each record is kept.
    event : DpEvent
        The mechanism run on the subsample.
    """

    sampling_probability: float
    event: DpEvent


@dataclass(frozen=True, slots=True)
class SampledWithReplacementDpEvent(DpEvent):
    """Run ``event`` on a batch of ``sample_size`` records drawn uniformly *with* replacement.

    The batch is a sequence of ``m = sample_size`` indices drawn independently and uniformly
    from ``[n]``, ``n = source_dataset_size`` (public), so a record can appear several times;
    ``event`` is then applied to the batch, each occurrence counting as one record (a sum over
    the batch counts a record drawn ``k`` times ``k`` times). Same name and fields as
    dp-accounting's ``SampledWithReplacementDpEvent``. This is the sampling of the ReSQue
    paper's Algorithms 3 and 4 (line 6, ``z ~ unif[n]``), needed there for unbiasedness.

    The RDP accountant analyses it under REPLACE_ONE for an inner Gaussian (or a composition of
    Gaussians on the same batch); see
    :func:`~dpsco_core.privacy.with_replacement.rdp_sampled_with_replacement_gaussian`.

    Parameters
    ----------
    source_dataset_size : int
        ``n``, the public number of records, >= 1.
    sample_size : int
        ``m``, the number of draws, >= 1.
    event : DpEvent
        The mechanism run on the batch.
    """

    source_dataset_size: int
    sample_size: int
    event: DpEvent


@dataclass(frozen=True, slots=True)
class ApproximateRdpDpEvent(DpEvent):
    """A mechanism known to be ``(alpha, tau alpha, delta)``-approximately RDP, ``1 < alpha < max_order``.

    Approximate RDP (ReSQue paper, eq. (12)): ``D_{alpha,delta}(M(D) || M(D')) <= tau alpha``
    for neighbours ``D, D'``, where ``D_{alpha,delta}(mu || nu)`` is the smallest
    ``D_alpha(mu' || nu')`` over ``mu'``, ``nu'`` within total variation ``delta`` of ``mu``,
    ``nu``. With ``delta = 0`` and ``max_order = inf`` this is ``tau``-zCDP
    (:class:`ZCDpEvent`). The guarantee is a fact about a whole mechanism that the library
    cannot re-derive from simpler events (for instance the ReSQue solver's drift bound, Lemma
    5, amplified by Proposition 7 in Lemma 7): the caller states it, with its
    neighbouring relation, and :class:`~dpsco_core.privacy.accountants.RdpAccountant` composes
    it by Lemma 3 (epsilons add at each order, deltas add) and converts by Corollary 1.
    Build it with :meth:`~dpsco_core.privacy.approximate_rdp.LinearApproximateRdp.to_event`.

    Parameters
    ----------
    tau : float
        Slope of the RDP bound, ``epsilon(alpha) = tau alpha``, in [0, inf).
    max_order : float, default=inf
        The bound holds for every order in the open interval ``(1, max_order)``; > 1.
    delta : float, default=0.0
        The total-variation slack of eq. (12), in [0, 1).
    """

    tau: float
    max_order: float = math.inf
    delta: float = 0.0


@dataclass(frozen=True, slots=True)
class SingleEpochTreeAggregationDpEvent(DpEvent):
    """The binary-tree (continual counting) mechanism over one epoch, Gaussian node noise.

    The stream ``v_1, ..., v_T`` (``T = step_counts``) is released through the noisy dyadic
    nodes ``s_{k,j} = sum_{i=(j-1)2^k+1}^{j 2^k} v_i + N(0, sigma^2 I)`` of a binary tree
    (every level ``k`` and every node with ``j 2^k <= T``; the streaming variant keeps only
    odd ``j``, which releases less). Each record contributes to exactly one leaf ``v_i``, by
    at most ``Delta`` in l2 norm (under the accountant's neighbouring relation), and
    ``noise_multiplier = sigma / Delta``. A leaf lies in at most one node per level, so in at
    most ``bit_length(T) = floor(log2 T) + 1`` nodes: the whole release is a Gaussian
    mechanism with sensitivity ``Delta sqrt(bit_length(T))``, hence
    ``mu = sqrt(bit_length(T)) / noise_multiplier``-GDP and
    ``(alpha, alpha bit_length(T) / (2 noise_multiplier^2))``-RDP, also when later leaves
    are computed adaptively from earlier releases (note 003, sections 4.1 and 6.1; Kairouz et
    al. 2021, appendix D). ``step_counts`` may be a sequence: one tree per entry (restarted
    trees) with each record in at most one leaf across all of them, as in dp-accounting.

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma / \\Delta` of every node (> 0).
    step_counts : int or sequence of int
        Number of leaves T (a sequence: several trees, the largest counts).
    """

    noise_multiplier: float
    step_counts: object


@dataclass(frozen=True, slots=True)
class SelfComposedDpEvent(DpEvent):
    """``count`` adaptive repetitions of ``event``.

    Parameters
    ----------
    event : DpEvent
        The repeated mechanism.
    count : int
        Number of repetitions, >= 0.
    """

    event: DpEvent
    count: int


@dataclass(frozen=True, slots=True)
class ComposedDpEvent(DpEvent):
    """The adaptive composition of ``events``, in order.

    Parameters
    ----------
    events : tuple of DpEvent
        The mechanisms, in the order they run.
    """

    events: Tuple[DpEvent, ...]


@dataclass(frozen=True, slots=True)
class RepeatAndSelectDpEvent(DpEvent):
    """Run ``event`` a random number K of times and release only the best run.

    Each run is an independent execution of the mechanism ``event`` describes on the same
    dataset, and outputs a candidate with a score (the score part of the run's output, so
    covered by ``event``); the release is the candidate of highest score (nothing when
    K = 0). K is drawn, independently of the data, from the distribution fixed by ``mean``
    and ``shape`` (dp-accounting's ``RepeatAndSelectDpEvent``; Papernot and Steinke, ICLR
    2022, section 3):

    * ``shape = inf``: Poisson with mean ``mean`` (K = 0 possible; Theorem 6);
    * ``shape = eta`` in [0, inf): the truncated negative binomial
      ``P[K = k] = (1 - gamma)^k / (gamma^-eta - 1) prod_{l<k} (l + eta) / (l + 1)``,
      k >= 1 (Definition 1), whose gamma in (0, 1] gives mean ``mean`` (Theorem 2);
      ``eta = 0`` is the logarithmic distribution ``P[K = k] = (1 - gamma)^k / (k
      log(1/gamma))`` and ``eta = 1`` the geometric ``P[K = k] = gamma (1 - gamma)^(k-1)``
      (the random stopping of Liu and Talwar, STOC 2019).

    The RDP curve is :func:`dpsco_core.privacy.selection.rdp_repeat_and_select`.

    Parameters
    ----------
    event : DpEvent
        One run (candidate and score together).
    mean : float
        E[K]: >= 1 for a truncated negative binomial, > 0 for Poisson.
    shape : float
        ``eta`` in [0, inf), or ``inf`` for Poisson.
    """

    event: DpEvent
    mean: float
    shape: float
