"""Audit cases: one function per mechanism, returning the canary pair and a batched sampler.

An :class:`AuditCase` is everything :func:`~dpsco_core.audit.audit` needs to test one claimed
guarantee: a batched sampler, a pair of neighbouring inputs chosen to be (close to) worst case,
and the claimed (epsilon, delta). Extending the audit to a new mechanism or solver is one
function here that builds its case; :func:`run_case` does the rest.

The samplers draw through the same compiled kernels and the same calibration (the mechanism
object's ``noise_scale``) as the public calls, so an audit tests the kernel and the calibration
together; ``sampler_from_mechanism`` audits the public entry point call by call (slower).
"""

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._validation import check_delta, check_int
from ._core import audit

__all__ = ["AuditCase", "run_case", "gaussian_case", "laplace_case", "report_noisy_max_case"]


@dataclass(frozen=True)
class AuditCase:
    """A claimed guarantee to audit.

    Attributes
    ----------
    name : str
        Shown in test ids and reports.
    sampler : callable
        ``sampler(x, n, seed_seq) -> ndarray (n,)`` of scalar statistics (see ``audit``).
    input0, input1 : object
        The neighbouring inputs.
    epsilon, delta : float
        The claimed guarantee: ``audit(...).eps_lower`` at ``delta`` must not exceed
        ``epsilon`` (except with probability ``1 - confidence``).
    """

    name: str
    sampler: Callable[..., Any]
    input0: Any
    input1: Any
    epsilon: float
    delta: float


def run_case(case, *, n_trials, confidence=0.95, random_state=None):
    """Audit one case: ``audit(case.sampler, case.input0, case.input1, delta=case.delta, ...)``.

    Parameters
    ----------
    case : AuditCase
        The mechanism, its two inputs and its claim.
    n_trials : int
        Runs per input.
    confidence : float, default=0.95
        Confidence of the Clopper-Pearson lower bound.
    random_state : None, int, SeedSequence or Generator
        Seeds the trials.

    Returns
    -------
    AuditResult
    """
    return audit(case.sampler, case.input0, case.input1, n_trials=n_trials, delta=case.delta,
                 confidence=confidence, random_state=random_state)


def _additive_sampler(mechanism):
    """n releases of a scalar in one call: the mechanism adds i.i.d. noise per coordinate, so
    the coordinates of ``mechanism(full(n, x))`` are n independent releases of ``x``."""

    def sampler(x, n, seed_seq):
        return mechanism(np.full(n, float(x)), random_state=seed_seq)

    return sampler


def gaussian_case(mechanism, *, delta):
    """Gaussian mechanism on a scalar query: ``f(D0) = 0``, ``f(D1) = sensitivity``.

    The claimed epsilon is ``mechanism.get_epsilon(delta)``. A one-dimensional pair at the
    sensitivity is worst case for the Gaussian mechanism (the privacy loss depends only on
    :math:`\\|f(D_0) - f(D_1)\\|_2`), and the likelihood-ratio test is a threshold on the
    output (Neyman-Pearson).

    Parameters
    ----------
    mechanism : GaussianMechanism
        The mechanism audited.
    delta : float
        The delta at which epsilon is claimed and audited.

    Returns
    -------
    AuditCase
    """
    delta = check_delta(delta)
    return AuditCase(name=f"gaussian(z={mechanism.noise_multiplier:.4g})",
                     sampler=_additive_sampler(mechanism), input0=0.0,
                     input1=mechanism.sensitivity, epsilon=mechanism.get_epsilon(delta),
                     delta=delta)


def laplace_case(mechanism):
    """Laplace mechanism on a scalar query: ``f(D0) = 0``, ``f(D1) = sensitivity``; pure DP.

    The likelihood ratio of ``Lap(0, b)`` and ``Lap(Delta, b)`` is
    :math:`e^{\\varepsilon}` on all of :math:`[\\Delta, \\infty)`, so a threshold test can
    reach the claimed epsilon.

    Parameters
    ----------
    mechanism : LaplaceMechanism
        The mechanism audited.

    Returns
    -------
    AuditCase
    """
    return AuditCase(name=f"laplace(eps={mechanism.epsilon:.4g})",
                     sampler=_additive_sampler(mechanism), input0=0.0,
                     input1=mechanism.sensitivity, epsilon=mechanism.epsilon, delta=0.0)


def report_noisy_max_case(mechanism, *, n_candidates=2, gap=None):
    """Report-noisy-max on the adversarial pair of note 004, section 10, oracle 6.

    ``s = (0, c, 0, ...)`` and ``s' = (Delta, c - Delta, 0, ...)``: the first two scores move
    by the sensitivity in opposite directions (not monotone). The statistic is the indicator
    that candidate 0 wins; its probability ratio tends to :math:`e^{2\\Delta/b}` as ``c``
    grows, which is :math:`e^{\\varepsilon}` at the general calibration :math:`b = 2\\Delta/
    \\varepsilon` and :math:`e^{2\\varepsilon}` at the monotone one. The default gap
    ``c = 4 Delta / epsilon`` keeps the winning probabilities measurable (a few percent).

    The sampler calls the kernel once per trial, reusing one bit generator so that trials
    consume consecutive, independent parts of its stream (m < block size: one block).

    Parameters
    ----------
    mechanism : ReportNoisyMax
        The mechanism audited.
    n_candidates : int, default=2
        Number of scores (>= 2).
    gap : float, optional
        c (default ``4 Delta / epsilon``).

    Returns
    -------
    AuditCase
    """
    from .._kernels import _noisy_max
    from .._random import BIT_GENERATOR
    from ..mechanisms import _NOISE_KINDS

    n_candidates = check_int(n_candidates, "n_candidates", low=2)
    sensitivity, epsilon = mechanism.sensitivity, mechanism.epsilon
    gap = 4.0 * sensitivity / epsilon if gap is None else float(gap)
    s0 = np.zeros(n_candidates)
    s0[1] = gap
    s1 = s0.copy()
    s1[0] += sensitivity
    s1[1] -= sensitivity
    scale, kind = mechanism.noise_scale, _NOISE_KINDS[mechanism.noise]
    kernel = _noisy_max.report_noisy_max

    def sampler(scores, n, seed_seq):
        gens = [BIT_GENERATOR(seed_seq)]
        out = np.empty(n)
        for t in range(n):
            out[t] = kernel(scores, scale, kind, gens, 1)[0] == 0
        return out

    return AuditCase(name=f"rnm({mechanism.noise}, b={scale:.4g})", sampler=sampler,
                     input0=s0, input1=s1, epsilon=epsilon, delta=0.0)
