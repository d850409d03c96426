"""Approximate Renyi DP with a total-variation slack (ReSQue paper, eq. (12)), linear in the order.

A mechanism is ``(alpha, epsilon, delta)``-RDP if, for all neighbours ``D, D'``,
``D_{alpha,delta}(M(D) || M(D')) <= epsilon``, where (eq. (12))

.. math::

    D_{\\alpha,\\delta}(\\mu \\| \\nu) = \\min_{D_{TV}(\\mu', \\mu) \\le \\delta,\\;
    D_{TV}(\\nu', \\nu) \\le \\delta} D_\\alpha(\\mu' \\| \\nu').

The private ReSQue algorithms (Algorithms 3 to 7) have guarantees of the form
``(alpha, tau alpha, delta)`` for every ``alpha`` in ``(1, alpha_max)``:
:class:`LinearApproximateRdp`. This module gives their calculus:

* composition, Lemma 3 (adaptive): ``tau`` adds, ``delta`` adds, ``alpha_max`` is the minimum
  (:func:`compose`, :meth:`LinearApproximateRdp.self_compose`);
* amplification by sampling with replacement, Proposition 7 ([BDRS18] Thm 12):
  ``tau -> 13 s^2 tau`` on ``(1, 3 / tau)`` (:func:`amplify_by_mixture`);
* conversion to (epsilon, delta)-DP, Corollary 1: ``(alpha, epsilon, delta)``-RDP implies
  ``(epsilon_dp, delta' + (1 + e^{epsilon_dp}) delta)``-DP for every ``delta'`` in (0, 1), with
  ``epsilon_dp = epsilon + log(1/delta') / (alpha - 1)`` (:meth:`LinearApproximateRdp.to_dp`),
  at the optimal order ``alpha* = 1 + sqrt(log(1/delta') / tau)`` (clamped into the valid
  range) or at the paper's ``alpha = 4 log(2/delta) / epsilon_dp`` (Theorem 3,
  :func:`paper_order`).

The accountant entry is :class:`~dpsco_core.privacy.events.ApproximateRdpDpEvent`
(:meth:`LinearApproximateRdp.to_event`): :class:`~dpsco_core.privacy.accountants.RdpAccountant`
composes it with every other event on its order grid and keeps the summed slack apart, and
:meth:`~dpsco_core.privacy.report.PrivacyReport.from_event` reports the slack (``rdp_slack``)
and the solver's mode (``"certified"`` or ``"heuristic"``).

Every guarantee here is under the neighbouring relation of the mechanism it describes; the
ReSQue paper's is REPLACE_ONE (``n`` public). Numbers are rounded up.

References
----------
Carmon, Jambulapati, Jin, Lee, Liu, Sidford and Tian, "ReSQueing parallel and private stochastic
convex optimization", FOCS 2023 (arXiv:2301.00457): eq. (12), Corollary 1, Lemma 3,
Proposition 7, Theorem 3. Notes: ``shared/notes/000_resque.md`` sections 5.1 and 6.

Examples
--------
A Lemma-7-shaped pipeline: a pairwise bound, amplified by sampling 256 of 100000 with
replacement (at most 8 copies of the differing record, the rest charged to the slack),
composed over 500 calls and reported.

>>> from dpsco_core.privacy import (NeighboringRelation, PrivacyReport, SelfComposedDpEvent,
...     LinearApproximateRdp, amplify_by_mixture, with_replacement_count_tail,
...     with_replacement_inclusion_probability)
>>> pre = LinearApproximateRdp(tau=0.01, delta=1e-10)       # P, Q, R pairwise, every order
>>> s = with_replacement_inclusion_probability(100_000, 256)
>>> call = amplify_by_mixture(pre, s, extra_delta=with_replacement_count_tail(100_000, 256, 8))
>>> call.max_order
300.0
>>> report = PrivacyReport.from_event(
...     SelfComposedDpEvent(call.to_event(), 500), delta=1e-6,
...     neighboring_relation=NeighboringRelation.REPLACE_ONE, mode="certified")
>>> report.mode, report.unconditional, round(report.epsilon, 2), report.rdp_slack < 1e-7
('certified', True, 0.12, True)
"""

import math
from dataclasses import dataclass
from typing import Iterable, Union

import numpy as np
from scipy import optimize

from .._validation import check_delta, check_int, check_scalar
from ._checks import round_up
from .events import ApproximateRdpDpEvent
from .with_replacement import BDRS18_CONSTANT, BDRS18_MAX_TAU, BDRS18_MAX_WEIGHT

__all__ = ["LinearApproximateRdp", "DpConversion", "compose", "amplify_by_mixture",
           "optimal_order", "paper_order", "epsilon_for_delta", "calibrate_tau",
           "PAPER_MAX_DELTA"]

#: Theorem 3 (and Lemma 7, Theorem 4) need ``delta in (0, 1/6)``.
PAPER_MAX_DELTA = 1.0 / 6.0


def _check_max_order(max_order, name="max_order"):
    return check_scalar(max_order, name, low=1.0, allow_inf=True)


@dataclass(frozen=True, slots=True)
class DpConversion:
    """The (epsilon, delta)-DP guarantee obtained by Corollary 1, and how.

    Attributes
    ----------
    epsilon : float
        ``epsilon_dp = tau alpha + log(1/delta_prime) / (alpha - 1)``, rounded up.
    delta : float
        ``delta_prime + (1 + e^epsilon) rdp_slack``, rounded up (may exceed 1: then vacuous).
    order : float
        The order ``alpha`` used.
    delta_prime : float
        The RDP-to-DP part of delta.
    rdp_slack : float
        The total-variation slack of the approximate-RDP guarantee.
    """

    epsilon: float
    delta: float
    order: float
    delta_prime: float
    rdp_slack: float


@dataclass(frozen=True, slots=True)
class LinearApproximateRdp:
    """``(alpha, tau alpha, delta)``-approximate RDP for every ``alpha`` in ``(1, max_order)``.

    Eq. (12) of the ReSQue paper with an RDP bound linear in the order, as every guarantee of
    its private algorithms is (Lemma 7, Propositions 6, 8 and 10, Lemma 10). Immutable.

    Parameters
    ----------
    tau : float
        The slope, in [0, inf).
    max_order : float, default=inf
        The (open) upper end of the valid orders, in (1, inf].
    delta : float, default=0.0
        The total-variation slack, in [0, 1).

    Examples
    --------
    >>> from dpsco_core.privacy.approximate_rdp import LinearApproximateRdp
    >>> call = LinearApproximateRdp(tau=1e-4, max_order=200.0, delta=1e-9)
    >>> total = call.self_compose(100)        # Lemma 3
    >>> round(total.tau, 6), total.max_order, float(f"{total.delta:.3g}")
    (0.01, 200.0, 1e-07)
    >>> dp = total.to_dp(1e-6)                 # Corollary 1 at the optimal order
    >>> round(dp.epsilon, 3), round(dp.order, 2)
    (0.753, 38.17)
    """

    tau: float
    max_order: float = math.inf
    delta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "tau", check_scalar(self.tau, "tau", low=0.0,
                                                     low_open=False))
        object.__setattr__(self, "max_order", _check_max_order(self.max_order))
        object.__setattr__(self, "delta", check_delta(self.delta, allow_zero=True))

    def check_order(self, order):
        """Return ``order`` as a float after checking it lies in ``(1, max_order)``.

        Parameters
        ----------
        order : float
            A Renyi order.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            Outside the range: the guarantee says nothing there.
        """
        return check_scalar(order, "order", low=1.0, high=self.max_order)

    def epsilon_at(self, order):
        """The RDP bound ``tau * order`` at one order in ``(1, max_order)``.

        Parameters
        ----------
        order : float
            In ``(1, max_order)``.

        Returns
        -------
        float
        """
        return float(round_up(self.tau * self.check_order(order)))

    def self_compose(self, count):
        """``count`` adaptive repetitions (Lemma 3): ``(count tau, max_order, count delta)``.

        Parameters
        ----------
        count : int
            >= 1.

        Returns
        -------
        LinearApproximateRdp
        """
        count = check_int(count, "count", low=1)
        return LinearApproximateRdp(float(round_up(count * self.tau)), self.max_order,
                                    min(float(round_up(count * self.delta)), _BELOW_ONE))

    def __add__(self, other):
        if not isinstance(other, LinearApproximateRdp):
            return NotImplemented
        return compose([self, other])

    def to_event(self):
        """The accountant's event for this guarantee.

        Returns
        -------
        ApproximateRdpDpEvent
        """
        return ApproximateRdpDpEvent(self.tau, self.max_order, self.delta)

    def to_dp(self, delta_prime, *, order="optimal"):
        """Corollary 1: the (epsilon, delta)-DP guarantee for a given ``delta_prime``.

        ``epsilon_dp = tau alpha + log(1/delta') / (alpha - 1)`` and
        ``delta = delta' + (1 + e^{epsilon_dp}) delta_slack``.

        Parameters
        ----------
        delta_prime : float
            In (0, 1).
        order : "optimal" or float, default="optimal"
            ``"optimal"``: ``alpha* = 1 + sqrt(log(1/delta') / tau)``, the minimiser of
            ``epsilon_dp`` (:func:`optimal_order`), clamped into ``(1, max_order)``; a float:
            that order (for the paper's choice pass :func:`paper_order`), which must lie in
            ``(1, max_order)``.

        Returns
        -------
        DpConversion

        Raises
        ------
        ValueError
            If ``order`` lies outside ``(1, max_order)``.
        """
        delta_prime = check_delta(delta_prime, "delta_prime")
        if isinstance(order, str):
            if order != "optimal":
                raise ValueError(f"order must be 'optimal' or a float; got {order!r}.")
            alpha = optimal_order(self.tau, delta_prime, self.max_order)
        else:
            alpha = self.check_order(order)
        return _convert(self.tau, self.delta, alpha, delta_prime)


#: Largest float below 1 (a composed slack is capped there: delta must stay in [0, 1)).
_BELOW_ONE = float(np.nextafter(1.0, 0.0))


def _convert(tau, slack, alpha, delta_prime):
    with np.errstate(over="ignore"):
        eps = float(round_up(tau * alpha + math.log(1.0 / delta_prime) / (alpha - 1.0)))
        delta = delta_prime + (1.0 + math.exp(eps)) * slack if eps < 700 else (
            math.inf if slack > 0 else delta_prime)
    return DpConversion(epsilon=eps, delta=float(round_up(delta)), order=float(alpha),
                        delta_prime=float(delta_prime), rdp_slack=float(slack))


def compose(guarantees: Iterable[LinearApproximateRdp]) -> LinearApproximateRdp:
    """Adaptive composition (Lemma 3): slopes add, slacks add, ``max_order`` is the minimum.

    Lemma 3 holds at each fixed order, so on the common range ``(1, min max_order)`` the
    composition is ``(alpha, sum tau_i alpha, sum delta_i)``-RDP.

    Parameters
    ----------
    guarantees : iterable of LinearApproximateRdp
        At least one.

    Returns
    -------
    LinearApproximateRdp
    """
    items = list(guarantees)
    if not items:
        raise ValueError("guarantees must hold at least one LinearApproximateRdp; got none.")
    for g in items:
        if not isinstance(g, LinearApproximateRdp):
            raise TypeError("guarantees must all be LinearApproximateRdp; got "
                            f"{type(g).__name__} {g!r}.")
    tau = float(round_up(math.fsum(g.tau for g in items)))
    delta = min(float(round_up(math.fsum(g.delta for g in items))), _BELOW_ONE)
    return LinearApproximateRdp(tau, min(g.max_order for g in items), delta)


def amplify_by_mixture(guarantee: LinearApproximateRdp, mixture_weight: float,
                       extra_delta: float = 0.0) -> LinearApproximateRdp:
    """Proposition 7 ([BDRS18] Thm 12) applied to a pairwise guarantee: ``tau -> 13 s^2 tau``.

    Hypothesis (the caller's to establish, as in the proof of Lemma 7): the output law on
    ``D`` is ``sP + (1-s)R`` and on ``D'`` is ``sQ + (1-s)R`` (``R``: the differing record not
    drawn; ``P``, ``Q``: drawn), and every pair of ``P, Q, R`` satisfies ``guarantee`` for
    **every** ``alpha > 1`` (so ``guarantee.max_order`` must be inf), with its slack coming
    from events of total probability at most ``guarantee.delta`` on which the three laws are
    modified together (the drift-bound failure of Lemma 5). Then the mixtures are
    ``(alpha, 13 s^2 tau alpha, delta + extra_delta)``-RDP for ``alpha in (1, 3 / tau)``.
    ``extra_delta`` is the probability of any conditioning event the caller discarded (Lemma
    7's "more than ``b`` copies of the differing index":
    :func:`~dpsco_core.privacy.with_replacement.with_replacement_count_tail`). Any upper
    bound on the true weight ``s`` may be passed (the bound increases with ``s``): for
    sampling ``m`` of ``n`` with replacement, ``1 - (1 - 1/n)^m``
    (:func:`~dpsco_core.privacy.with_replacement.with_replacement_inclusion_probability`)
    bounds both the unconditioned weight and Lemma 7's ``P[1 <= K <= b | K <= b]``.

    Parameters
    ----------
    guarantee : LinearApproximateRdp
        The pairwise guarantee, with ``tau <= 1/3`` and ``max_order = inf``.
    mixture_weight : float
        ``s``, in (0, 1/40).
    extra_delta : float, default=0.0
        Added slack, in [0, 1).

    Returns
    -------
    LinearApproximateRdp
        ``(13 s^2 tau, 3 / tau, delta + extra_delta)``.

    Raises
    ------
    ValueError
        Outside the proposition's hypotheses: ``tau > 1/3``, ``s`` not in (0, 1/40), or a
        finite ``max_order``.
    """
    if not isinstance(guarantee, LinearApproximateRdp):
        raise TypeError("guarantee must be a LinearApproximateRdp; got "
                        f"{type(guarantee).__name__} {guarantee!r}.")
    check_scalar(guarantee.tau, "guarantee.tau", low=0.0, high=BDRS18_MAX_TAU, low_open=False,
                 high_open=False)
    s = check_scalar(mixture_weight, "mixture_weight", low=0.0, high=BDRS18_MAX_WEIGHT)
    extra = check_delta(extra_delta, "extra_delta", allow_zero=True)
    if math.isfinite(guarantee.max_order):
        raise ValueError("Proposition 7 needs the pairwise bound for every order > 1; got "
                         f"guarantee.max_order={guarantee.max_order!r} (must be inf).")
    tau = float(round_up(BDRS18_CONSTANT * s * s * guarantee.tau))
    max_order = math.inf if guarantee.tau == 0.0 else 3.0 / guarantee.tau
    delta = min(float(round_up(guarantee.delta + extra)), _BELOW_ONE)
    return LinearApproximateRdp(tau, max_order, delta)


def optimal_order(tau: float, delta_prime: float, max_order: float = math.inf) -> float:
    """``alpha* = 1 + sqrt(log(1/delta') / tau)``, clamped into ``(1, max_order)``.

    It minimises ``tau alpha + log(1/delta') / (alpha - 1)`` (notes section 6), where
    ``epsilon_dp = tau + 2 sqrt(tau log(1/delta'))``. ``epsilon_dp`` decreases up to ``alpha*``,
    so beyond the range the best valid order is just below ``max_order`` (the range is open).

    Parameters
    ----------
    tau : float
        >= 0 (``tau = 0``: ``max_order`` just below, or 1e6 when it is inf).
    delta_prime : float
        In (0, 1).
    max_order : float, default=inf
        In (1, inf].

    Returns
    -------
    float
    """
    tau = check_scalar(tau, "tau", low=0.0, low_open=False)
    delta_prime = check_delta(delta_prime, "delta_prime")
    max_order = _check_max_order(max_order)
    alpha = 1.0 + math.sqrt(math.log(1.0 / delta_prime) / tau) if tau > 0 else 1e6
    if alpha >= max_order:
        alpha = float(np.nextafter(max_order, 1.0))
    return alpha


def paper_order(epsilon_dp: float, delta: float) -> float:
    """The paper's fixed order ``alpha = 4 log(2/delta) / epsilon_dp`` (Theorem 3, eq. (30)).

    Parameters
    ----------
    epsilon_dp : float
        The target epsilon, in (0, 1] (Theorem 3's range).
    delta : float
        The target delta, in (0, 1/6) (Theorem 3's range).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Outside those ranges, where Theorem 3's budget split (``(alpha, epsilon_dp/2,
        delta/6)``-RDP gives ``(epsilon_dp, delta)``-DP) is not proved.
    """
    eps = check_scalar(epsilon_dp, "epsilon_dp", low=0.0, high=1.0, high_open=False)
    delta = check_scalar(delta, "delta", low=0.0, high=PAPER_MAX_DELTA)
    return 4.0 * math.log(2.0 / delta) / eps


def epsilon_for_delta(guarantee: LinearApproximateRdp, delta: float, *,
                      order: Union[str, float] = "optimal") -> DpConversion:
    """Smallest Corollary-1 epsilon whose total delta is at most ``delta``.

    Splits ``delta = delta' + (1 + e^{epsilon}) delta_slack`` optimally: at a fixed order the
    total delta is convex in ``delta'``, and the largest feasible ``delta'`` (smallest
    epsilon) is found by bisection on the increasing branch. With ``order="optimal"`` the
    order is optimised numerically over ``(1, max_order)`` as well. Every candidate is a valid
    bound, so the search only affects tightness.

    Parameters
    ----------
    guarantee : LinearApproximateRdp
    delta : float
        The total target delta, in (0, 1).
    order : "optimal" or float, default="optimal"

    Returns
    -------
    DpConversion
        With ``conversion.delta <= delta``.

    Raises
    ------
    ValueError
        If no split reaches ``delta`` (the slack alone needs ``2 delta_slack < delta``), or an
        order outside ``(1, max_order)``.
    """
    if not isinstance(guarantee, LinearApproximateRdp):
        raise TypeError("guarantee must be a LinearApproximateRdp; got "
                        f"{type(guarantee).__name__} {guarantee!r}.")
    delta = check_delta(delta)
    if isinstance(order, str):
        if order != "optimal":
            raise ValueError(f"order must be 'optimal' or a float; got {order!r}.")
        hi = guarantee.max_order if math.isfinite(guarantee.max_order) else 1e7
        # Minimise over log(alpha - 1); any order is valid, the search only tightens.
        res = optimize.minimize_scalar(
            lambda u: min(_split_at(guarantee, delta, 1.0 + math.exp(u)).epsilon, 1e300),
            bounds=(math.log(1e-6), math.log(hi - 1.0) - 1e-12), method="bounded",
            options={"xatol": 1e-6})
        candidates = [_split_at(guarantee, delta, alpha) for alpha in (
            1.0 + math.exp(res.x), optimal_order(guarantee.tau, delta / 2, guarantee.max_order))]
        best = min(candidates, key=lambda c: c.epsilon)
        if not math.isfinite(best.epsilon):
            raise ValueError(_infeasible(guarantee, delta))
        return best
    conv = _split_at(guarantee, delta, guarantee.check_order(order))
    if not math.isfinite(conv.epsilon):
        raise ValueError(_infeasible(guarantee, delta))
    return conv


def _infeasible(guarantee, delta):
    return (f"delta={delta!r} cannot be reached: the approximate-RDP slack "
            f"{guarantee.delta!r} costs (1 + e^epsilon) times itself (Corollary 1), at least "
            f"{2 * guarantee.delta!r}.")


def _split_at(guarantee, delta, alpha):
    """Best Corollary-1 conversion at order ``alpha`` with total delta <= ``delta``."""
    tau, slack = guarantee.tau, guarantee.delta
    inf = DpConversion(math.inf, 1.0, alpha, delta, slack)
    if not 1.0 < alpha < guarantee.max_order:      # the guarantee says nothing there
        return inf
    if slack == 0.0:
        return _convert(tau, 0.0, alpha, delta)

    def total(dp):
        return _convert(tau, slack, alpha, dp).delta

    # total(d') = d' + slack (1 + e^{tau alpha} d'^{-1/(alpha-1)}) is convex in d'; its
    # minimiser solves 1 = slack e^{tau alpha} d'^{-alpha/(alpha-1)} / (alpha - 1).
    with np.errstate(over="ignore"):
        log_dmin = (alpha - 1.0) / alpha * (math.log(slack) + tau * alpha - math.log(alpha - 1.0))
    lo = min(math.exp(min(log_dmin, 0.0)), delta)
    if total(lo) > delta:
        return inf
    hi = delta
    if total(hi) <= delta:
        lo = hi
    else:
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if total(mid) <= delta:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-15 * hi:
                break
    conv = _convert(tau, slack, alpha, lo)
    return conv if conv.delta <= delta else inf


def calibrate_tau(*, target_epsilon: float, target_delta: float, rdp_slack: float = 0.0,
                  max_order: float = math.inf) -> float:
    """Largest total slope ``tau`` whose Corollary-1 conversion meets ``(target_epsilon, target_delta)``.

    The inverse of :meth:`LinearApproximateRdp.to_dp` at the optimal order, for a budget
    split: with ``delta' = target_delta - (1 + e^{target_epsilon}) rdp_slack`` and
    ``L = log(1/delta')``, ``tau + 2 sqrt(tau L) <= epsilon`` gives
    ``tau = (sqrt(L + epsilon) - sqrt(L))^2`` when the optimal order ``1 + sqrt(L / tau)``
    lies below ``max_order``; otherwise ``tau = (epsilon - L / (a - 1)) / a`` at the largest
    valid order ``a``. The result is checked again through :meth:`LinearApproximateRdp.to_dp`
    and lowered until the check passes (conservative, never above the budget).

    Parameters
    ----------
    target_epsilon : float
        In (0, inf).
    target_delta : float
        In (0, 1).
    rdp_slack : float, default=0.0
        The total-variation slack the composition will carry, in [0, 1).
    max_order : float, default=inf
        The (open) upper end of the orders the composed guarantee holds for.

    Returns
    -------
    float
        ``tau`` >= 0 (0 when the slack alone exhausts the budget: then ValueError).

    Raises
    ------
    ValueError
        If ``(1 + e^{target_epsilon}) rdp_slack >= target_delta`` (no room for ``delta'``), or
        no positive ``tau`` fits below ``max_order``.
    """
    eps = check_scalar(target_epsilon, "target_epsilon", low=0.0)
    delta = check_delta(target_delta, "target_delta")
    slack = check_delta(rdp_slack, "rdp_slack", allow_zero=True)
    max_order = _check_max_order(max_order)
    dp = delta - (1.0 + math.exp(min(eps, 700.0))) * slack
    if dp <= 0.0:
        raise ValueError(f"target_delta={delta!r} leaves no room for the RDP conversion: the "
                         f"slack {slack!r} costs (1 + e^epsilon) times itself (Corollary 1).")
    dp *= 1.0 - 1e-12        # room for the upward rounding of the reported delta
    log_inv = math.log(1.0 / dp)
    tau = (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2
    if 1.0 + math.sqrt(log_inv / tau) >= max_order:
        a = float(np.nextafter(max_order, 1.0))
        tau = (eps - log_inv / (a - 1.0)) / a
        if tau <= 0.0:
            raise ValueError(f"no positive tau fits: at the largest order {max_order!r}, "
                             f"log(1/delta')/(alpha - 1) = {log_inv / (a - 1.0)!r} already "
                             f"exceeds target_epsilon={eps!r}.")
    for i in range(60):
        conv = LinearApproximateRdp(tau, max_order, slack).to_dp(dp)
        if conv.epsilon <= eps and conv.delta <= delta:
            return tau
        tau *= 1.0 - 1e-12 * 2.0 ** i
    raise RuntimeError("calibrate_tau could not certify its result; please report this.")
