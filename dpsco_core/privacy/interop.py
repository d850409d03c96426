"""Conversion of privacy events to and from dp-accounting's (``pip install dp-accounting``).

``to_dp_accounting(event)`` turns a dpsco-core event tree (for example ``result.privacy.event``)
into the equivalent ``dp_accounting.dp_event`` tree, so that any of dp-accounting's accountants
(RDP, PLD) can account for a dpsco-core release; ``from_dp_accounting(event)`` goes the other
way. dp-accounting is optional: it is imported on the first call.

Both libraries use the same mechanisms with the same parameters (noise multipliers relative to
the sensitivity, sampling probabilities, counts), so the conversion is exact, with two cases:

- ``EpsilonDeltaDpEvent(epsilon, delta=0)`` (a mechanism known only to be pure epsilon-DP, such
  as report-noisy-max) has no counterpart in dp-accounting. It becomes binary randomized
  response with ``noise_parameter = 2 / (1 + e^epsilon)``: the pair of output distributions
  ``(e^eps / (1 + e^eps), 1 / (1 + e^eps))`` dominates every epsilon-DP mechanism (Kairouz, Oh
  and Viswanath 2015), so every accountant's answer for it is an upper bound for the original
  mechanism. Converted back, it gives ``EpsilonDeltaDpEvent(epsilon)`` again (up to rounding,
  by at most a few ulps of epsilon). With ``delta > 0`` there is no dp-accounting event that
  describes the mechanism: a ``ValueError`` says so.
- dp-accounting events without a dpsco-core counterpart (``DiscreteLaplaceDpEvent``,
  ``MixtureOfGaussiansDpEvent``, sampling without replacement, repeat-and-select,
  randomized response with more than two buckets, ``ZCDpEvent`` with ``xi > 0``, ...) raise a
  ``TypeError`` naming the event.
- ``ApproximateRdpDpEvent`` (approximate RDP with a total-variation slack, the ReSQue paper's
  eq. (12)) has no dp-accounting counterpart: ``to_dp_accounting`` raises a ``TypeError``.
  ``SampledWithReplacementDpEvent`` converts both ways (dp-accounting 0.6 defines it, but none
  of its accountants supports it).

The neighbouring relation is not part of an event in either library: it belongs to the
accountant. ``relation_to_dp_accounting`` and ``relation_from_dp_accounting`` map the enums
(``ZERO_OUT`` is dp-accounting's ``REPLACE_SPECIAL``).
"""

from __future__ import annotations

import math
from typing import Any

from .events import (ComposedDpEvent, DpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                     LaplaceDpEvent, NeighboringRelation, NonPrivateDpEvent, NoOpDpEvent,
                     PoissonSampledDpEvent, RepeatAndSelectDpEvent,
                     SampledWithReplacementDpEvent, SelfComposedDpEvent,
                     SingleEpochTreeAggregationDpEvent, ZCDpEvent)

__all__ = ["to_dp_accounting", "from_dp_accounting", "relation_to_dp_accounting",
           "relation_from_dp_accounting"]

_RELATIONS = {
    NeighboringRelation.ADD_OR_REMOVE_ONE: "ADD_OR_REMOVE_ONE",
    NeighboringRelation.REPLACE_ONE: "REPLACE_ONE",
    NeighboringRelation.ZERO_OUT: "REPLACE_SPECIAL",
}


def _dp_accounting() -> Any:
    try:
        import dp_accounting
    except ImportError as exc:
        raise ImportError("converting privacy events needs dp-accounting: pip install "
                          "dp-accounting (or: pip install 'dpsco-core[test]').") from exc
    return dp_accounting


def _rr_noise_parameter(epsilon: float) -> float:
    # 2 / (1 + e^eps) without overflow for large epsilon
    return 2.0 * math.exp(-epsilon) / (1.0 + math.exp(-epsilon))


def to_dp_accounting(event: DpEvent) -> Any:
    """The dp-accounting event (``dp_accounting.dp_event``) equivalent to a dpsco-core event.

    Parameters
    ----------
    event : DpEvent
        A dpsco-core event tree, for example ``result.privacy.event``.

    Returns
    -------
    dp_accounting.dp_event.DpEvent

    Raises
    ------
    ImportError
        If dp-accounting is not installed.
    ValueError
        For ``EpsilonDeltaDpEvent`` with ``delta > 0`` (no dp-accounting counterpart).
    TypeError
        For an event type that has no conversion.
    """
    dpe = _dp_accounting().dp_event
    if isinstance(event, NoOpDpEvent):
        return dpe.NoOpDpEvent()
    if isinstance(event, NonPrivateDpEvent):
        return dpe.NonPrivateDpEvent()
    if isinstance(event, GaussianDpEvent):
        return dpe.GaussianDpEvent(noise_multiplier=event.noise_multiplier)
    if isinstance(event, LaplaceDpEvent):
        return dpe.LaplaceDpEvent(noise_multiplier=event.noise_multiplier)
    if isinstance(event, ZCDpEvent):
        return dpe.ZCDpEvent(rho=event.rho, xi=0.0)
    if isinstance(event, EpsilonDeltaDpEvent):
        if event.delta != 0:
            raise ValueError("EpsilonDeltaDpEvent with delta > 0 has no dp-accounting "
                             f"counterpart (got epsilon={event.epsilon!r}, "
                             f"delta={event.delta!r}); only pure epsilon-DP converts.")
        if math.isinf(event.epsilon):
            return dpe.NonPrivateDpEvent()
        return dpe.RandomizedResponseDpEvent(noise_parameter=_rr_noise_parameter(event.epsilon),
                                             num_buckets=2)
    if isinstance(event, PoissonSampledDpEvent):
        return dpe.PoissonSampledDpEvent(sampling_probability=event.sampling_probability,
                                         event=to_dp_accounting(event.event))
    if isinstance(event, SampledWithReplacementDpEvent):
        return dpe.SampledWithReplacementDpEvent(
            source_dataset_size=event.source_dataset_size, sample_size=event.sample_size,
            event=to_dp_accounting(event.event))
    if isinstance(event, SingleEpochTreeAggregationDpEvent):
        counts: Any = event.step_counts
        counts = int(counts) if isinstance(counts, int) else [int(s) for s in counts]
        return dpe.SingleEpochTreeAggregationDpEvent(noise_multiplier=event.noise_multiplier,
                                                     step_counts=counts)
    if isinstance(event, SelfComposedDpEvent):
        return dpe.SelfComposedDpEvent(event=to_dp_accounting(event.event), count=event.count)
    if isinstance(event, ComposedDpEvent):
        return dpe.ComposedDpEvent(events=[to_dp_accounting(e) for e in event.events])
    if isinstance(event, RepeatAndSelectDpEvent):
        return dpe.RepeatAndSelectDpEvent(event=to_dp_accounting(event.event),
                                          mean=event.mean, shape=event.shape)
    raise TypeError(f"no dp-accounting conversion for {type(event).__name__}; expected a "
                    "dpsco_core.privacy event.")


def from_dp_accounting(event: Any) -> DpEvent:
    """The dpsco-core event equivalent to a dp-accounting event (``dp_accounting.dp_event``).

    Parameters
    ----------
    event : dp_accounting.dp_event.DpEvent

    Returns
    -------
    DpEvent

    Raises
    ------
    ImportError
        If dp-accounting is not installed.
    TypeError
        For a dp-accounting event with no dpsco-core counterpart (named in the message).
    """
    dpe = _dp_accounting().dp_event
    name = type(event).__name__
    if isinstance(event, dpe.NoOpDpEvent):
        return NoOpDpEvent()
    if isinstance(event, dpe.NonPrivateDpEvent):
        return NonPrivateDpEvent()
    if isinstance(event, dpe.GaussianDpEvent):
        return GaussianDpEvent(float(event.noise_multiplier))
    if isinstance(event, dpe.LaplaceDpEvent):
        return LaplaceDpEvent(float(event.noise_multiplier))
    if isinstance(event, dpe.ZCDpEvent):
        if event.xi != 0:
            raise TypeError(f"ZCDpEvent with xi={event.xi!r} > 0 has no dpsco-core "
                            "counterpart (dpsco_core's ZCDpEvent is rho-zCDP, xi = 0).")
        return ZCDpEvent(float(event.rho))
    if isinstance(event, dpe.RandomizedResponseDpEvent) and event.num_buckets == 2:
        p = float(event.noise_parameter)
        if not 0.0 < p <= 1.0:
            raise TypeError(f"RandomizedResponseDpEvent with noise_parameter={p!r}: only "
                            "0 < noise_parameter <= 1 converts (to EpsilonDeltaDpEvent).")
        return EpsilonDeltaDpEvent(math.log((2.0 - p) / p))
    if isinstance(event, dpe.PoissonSampledDpEvent):
        return PoissonSampledDpEvent(float(event.sampling_probability),
                                     from_dp_accounting(event.event))
    if isinstance(event, dpe.SampledWithReplacementDpEvent):
        return SampledWithReplacementDpEvent(int(event.source_dataset_size),
                                             int(event.sample_size),
                                             from_dp_accounting(event.event))
    if isinstance(event, dpe.SingleEpochTreeAggregationDpEvent):
        steps = event.step_counts
        steps = int(steps) if isinstance(steps, int) else tuple(int(s) for s in steps)
        return SingleEpochTreeAggregationDpEvent(float(event.noise_multiplier), steps)
    if isinstance(event, dpe.SelfComposedDpEvent):
        return SelfComposedDpEvent(from_dp_accounting(event.event), int(event.count))
    if isinstance(event, dpe.ComposedDpEvent):
        return ComposedDpEvent(tuple(from_dp_accounting(e) for e in event.events))
    if isinstance(event, dpe.RepeatAndSelectDpEvent):
        return RepeatAndSelectDpEvent(from_dp_accounting(event.event), float(event.mean),
                                      float(event.shape))
    raise TypeError(f"dp-accounting's {name} has no dpsco-core counterpart; supported: "
                    "NoOp, NonPrivate, Gaussian, Laplace, ZCDp (xi = 0), randomized response "
                    "with 2 buckets, PoissonSampled, SampledWithReplacement, "
                    "SingleEpochTreeAggregation, SelfComposed, Composed, RepeatAndSelect.")


def relation_to_dp_accounting(relation: NeighboringRelation | str) -> Any:
    """dp-accounting's ``NeighboringRelation`` for ours (``ZERO_OUT`` -> ``REPLACE_SPECIAL``).

    Parameters
    ----------
    relation : NeighboringRelation or str
        Our relation.

    Returns
    -------
    dp_accounting.NeighboringRelation
    """
    relation = NeighboringRelation(relation)
    return getattr(_dp_accounting().NeighboringRelation, _RELATIONS[relation])


def relation_from_dp_accounting(relation: Any) -> NeighboringRelation:
    """Our ``NeighboringRelation`` for dp-accounting's (``REPLACE_SPECIAL`` -> ``ZERO_OUT``).

    Parameters
    ----------
    relation : dp_accounting.NeighboringRelation
        dp-accounting's relation.

    Returns
    -------
    NeighboringRelation
    """
    for ours, theirs in _RELATIONS.items():
        if relation.name == theirs:
            return ours
    raise TypeError(f"unknown dp-accounting neighbouring relation {relation!r}.")
