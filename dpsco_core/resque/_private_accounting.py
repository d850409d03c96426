r"""Per-call privacy charges of the ReSQue private algorithms (note 000, sections 5.2 and 6).

Every private oracle call of paper 000 is :math:`(\alpha, \alpha\tau, \delta)`-approximate-RDP
(eq. (12)) for every :math:`\alpha \in (1, \alpha_{\max})`: linear in α. This module computes
(τ, α_max, δ) of ONE call of Algorithm 3/4 from the constants recoverable from the proofs, and
checks the conditions under which they are certified:

- Lemma 5 (drift): conditioned on the index multiset, with b occurrences of the differing index,
  :math:`D_{\alpha,\delta}(\mu\|\mu') \le 1500\,\alpha\beta^2 b^2` when
  :math:`\rho/r \ge 1728 \log^2(\log T/\delta)` (the paper's constant; the proof's sharper
  :math:`24p^2`, :math:`p = \lceil 5\log(\log T/\delta)\rceil`, is smaller, and the larger of
  the two is required here);
- Lemma 7 (amplification by subsampling with replacement, Proposition 7): with
  :math:`b \le 2\log(2/\delta)` (Chernoff, failure ≤ δ/2), :math:`\tau_{pre} = 6000\beta^2
  \log^2(2/\delta)`, mixing weight :math:`s = 1 - (1 - 1/n)^T \le T/n`, and
  :math:`\tau = 13 s^2 \tau_{pre} = 78{,}000\,\beta^2\log^2(2/\delta)s^2` for
  :math:`\alpha < 3/\tau_{pre}`, with the conditioning slack P[K > b] computed exactly
  (:func:`~dpsco_core.privacy.with_replacement.with_replacement_count_tail`); it needs
  :math:`\tau_{pre} \le 1/3` (i.e.
  :math:`\beta^2\log^2(2/\delta) \le 1/18000`), :math:`s < 1/40` and :math:`T/n \le 1/60`.

The generic calculus is the accountant's (:mod:`dpsco_core.privacy.approximate_rdp`):
composition (Lemma 3), Proposition 7's amplification with the exact inclusion probability
:math:`s = 1 - (1 - 1/n)^T` of sampling with replacement
(:func:`~dpsco_core.privacy.with_replacement.with_replacement_inclusion_probability`, at most
T/n: tighter than the note's 1.2 T/n) and Corollary 1. :class:`Charge` is the carrier the
algorithms hand around: a :class:`~dpsco_core.privacy.approximate_rdp.LinearApproximateRdp`
plus whether every composed call was certified, and how many calls it counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..privacy.approximate_rdp import LinearApproximateRdp, amplify_by_mixture, compose
from ..privacy.with_replacement import (BDRS18_CONSTANT, BDRS18_MAX_TAU, BDRS18_MAX_WEIGHT,
                                        with_replacement_count_tail,
                                        with_replacement_inclusion_probability)

__all__ = ["Charge", "certified_radius_ratio", "resque_call_charge", "MODES"]

#: The two modes: ``certified`` (the proofs' constants and conditions are enforced) and
#: ``heuristic`` (same τ formula, conditions not enforced: NOT a certified guarantee).
MODES = ("certified", "heuristic")

#: Lemma 5's constant: D_{α,δ} <= DRIFT_CONSTANT α β² b².
DRIFT_CONSTANT = 1500.0
#: The paper's ρ/r constant (Proposition 6): ρ/r >= 1728 log²(log T / δ).
RADIUS_RATIO_CONSTANT = 1728.0
#: T/n <= 1/C_PRIV_SAMPLING (Lemma 7: s < 1/40 and the C_priv >= 60 of the proof).
C_PRIV_SAMPLING = 60.0


@dataclass(frozen=True)
class Charge:
    r"""An :math:`(\alpha, \alpha\tau, \delta)`-approximate-RDP guarantee for every
    :math:`\alpha \in (1, \alpha_{\max})`, and whether its conditions were certified.

    Attributes
    ----------
    tau : float
        τ (the RDP slope in α).
    alpha_max : float
        α_max (exclusive).
    delta : float
        The total-variation slack δ of approximate RDP.
    certified : bool
        False if any composed call ran outside the proofs' conditions (heuristic mode).
    calls : int
        The number of oracle calls composed.
    """

    tau: float
    alpha_max: float
    delta: float
    certified: bool = True
    calls: int = 1

    @property
    def guarantee(self) -> LinearApproximateRdp:
        """The accountant's :class:`LinearApproximateRdp` for this charge."""
        return LinearApproximateRdp(self.tau, self.alpha_max, self.delta)

    @classmethod
    def _of(cls, g: LinearApproximateRdp, certified: bool, calls: int) -> Charge:
        return cls(g.tau, g.max_order, g.delta, certified, calls)

    @classmethod
    def zero(cls) -> Charge:
        """No call."""
        return cls(0.0, math.inf, 0.0, True, 0)

    def __add__(self, other: Charge) -> Charge:
        """Lemma 3 (the accountant's :func:`compose`): τ and δ add, the order ranges meet."""
        return Charge._of(compose([self.guarantee, other.guarantee]),
                          self.certified and other.certified, self.calls + other.calls)

    def times(self, k: int) -> Charge:
        """k-fold composition of this charge (k >= 0 calls)."""
        if k == 0:
            return Charge.zero()
        return Charge._of(self.guarantee.self_compose(k), self.certified, k * self.calls)

    def epsilon(self, delta_prime: float) -> float:
        """Corollary 1's ε at the optimal order (clamped below α_max), δ' given."""
        return self.guarantee.to_dp(delta_prime).epsilon

    def to_dp(self, delta_prime: float) -> tuple[float, float]:
        r"""Corollary 1: :math:`(\varepsilon, \delta' + (1 + e^{\varepsilon})\delta)`-DP."""
        dp = self.guarantee.to_dp(delta_prime)
        return dp.epsilon, dp.delta


def certified_radius_ratio(n_steps: int, delta: float, regularized: bool = False) -> float:
    r"""The smallest ρ/r the drift proof (Lemma 5) certifies for T steps and δ:
    :math:`\max(1728\log^2(\log T/\delta),\ 24p^2)`, :math:`p = \lceil 5\log(\log T/\delta)
    \rceil`, doubled for Algorithms 4/5 (:math:`\eta L\sqrt T \le r' \le 2r`, Corollary 2).

    Parameters
    ----------
    n_steps : int
        T (≥ 2).
    delta : float
        δ.
    regularized : bool, default=False
        Algorithm 4/5 (doubled).

    Returns
    -------
    float
    """
    lg = math.log(max(math.log(max(n_steps, 2)), 1.0) / delta)
    p = math.ceil(5.0 * lg)
    ratio = max(RADIUS_RATIO_CONSTANT * lg * lg, 24.0 * p * p)
    return 2.0 * ratio if regularized else ratio


def resque_call_charge(beta: float, n_steps: int, n_samples: int, delta: float, *,
                       radius_ratio: float, regularized: bool, mode: str) -> Charge:
    r"""The charge of ONE call of Algorithm 3/4 with privacy parameter β, T index draws out of
    n, slack δ and ρ/r = ``radius_ratio`` (module docstring).

    In ``certified`` mode a violated condition of Lemmas 5/7 raises ValueError; in
    ``heuristic`` mode the same τ is returned with ``certified=False``.

    Parameters
    ----------
    beta : float
        β > 0.
    n_steps : int
        T, the number of index draws of the call.
    n_samples : int
        n.
    delta : float
        δ of the call, in (0, 1/6).
    radius_ratio : float
        ρ/r.
    regularized : bool
        Algorithm 4 (the ρ/r condition doubles).
    mode : {"certified", "heuristic"}

    Returns
    -------
    Charge
    """
    log2d = math.log(2.0 / delta)
    # Lemma 5 at slack delta/2 (the drift bound's failure), b <= 2 log(2/delta) copies of the
    # differing index (Chernoff, failure delta/2, added by the amplification step)
    tau_pre = 4.0 * DRIFT_CONSTANT * beta * beta * log2d * log2d
    s = with_replacement_inclusion_probability(n_samples, n_steps)
    problems = []
    if tau_pre > BDRS18_MAX_TAU:
        problems.append(f"beta^2 log^2(2/delta) = {beta * beta * log2d * log2d:.3g} must be "
                        f"<= 1/18000 (Proposition 7 needs tau <= 1/3)")
    if n_steps * C_PRIV_SAMPLING > n_samples or not s < BDRS18_MAX_WEIGHT:
        problems.append(f"T/n = {n_steps}/{n_samples} must be <= 1/{C_PRIV_SAMPLING:g} "
                        f"(Lemma 7; Proposition 7 needs s < 1/40)")
    need = certified_radius_ratio(n_steps, delta / 2.0, regularized)
    if radius_ratio < need:
        problems.append(f"rho/r = {radius_ratio:.4g} must be >= {need:.4g} (Lemma 5 with "
                        f"T = {n_steps}, delta = {delta / 2.0:.3g})")
    if problems and mode == "certified":
        raise ValueError("certified mode: the privacy proof of Algorithm 3/4 does not apply: "
                         + "; ".join(problems) + ". Use mode='heuristic' (not certified) or "
                         "change n, T, beta or the radii.")
    if not problems:
        pair = LinearApproximateRdp(tau_pre, math.inf, delta / 2.0)
        # the conditioning slack P[K > b], b = 2 log(2/delta), exactly (Chernoff: <= delta/2)
        tail = with_replacement_count_tail(n_samples, n_steps, math.floor(2.0 * log2d))
        return Charge._of(amplify_by_mixture(pair, s, extra_delta=tail), True, 1)
    # heuristic mode outside the conditions: the same formula 13 s^2 tau_pre; Proposition 7's
    # order range (alpha < 3/tau_pre) is one of the failed conditions, so it is not imposed
    return Charge(BDRS18_CONSTANT * s * s * tau_pre, math.inf, delta, False, 1)
