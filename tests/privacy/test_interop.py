"""Event conversion both ways with dp-accounting (dpsco_core.privacy.interop).

Every event type of dpsco_core.privacy.events converts and comes back equal; the converted tree
gets the same epsilon from dp-accounting's RDP accountant as ours on the same orders; events
without a counterpart raise errors that name them.
"""

import dataclasses
import math
import sys

import pytest

from dpsco_core.privacy import RdpAccountant, events
from dpsco_core.privacy.events import (ApproximateRdpDpEvent, ComposedDpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                                       LaplaceDpEvent, NeighboringRelation, NonPrivateDpEvent,
                                       NoOpDpEvent, PoissonSampledDpEvent,
                                       SampledWithReplacementDpEvent, SelfComposedDpEvent,
                                       SingleEpochTreeAggregationDpEvent, ZCDpEvent)
from dpsco_core.privacy.events import RepeatAndSelectDpEvent
from dpsco_core.privacy.interop import (from_dp_accounting, relation_from_dp_accounting,
                                        relation_to_dp_accounting, to_dp_accounting)

dp_accounting = pytest.importorskip("dp_accounting")
dpe = dp_accounting.dp_event

ONE_OF_EACH = [
    NoOpDpEvent(),
    NonPrivateDpEvent(),
    GaussianDpEvent(1.3),
    LaplaceDpEvent(2.5),
    EpsilonDeltaDpEvent(0.7),
    ZCDpEvent(0.02),
    PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)),
    SingleEpochTreeAggregationDpEvent(4.0, 100),
    SingleEpochTreeAggregationDpEvent(4.0, (64, 36)),
    SelfComposedDpEvent(LaplaceDpEvent(10.0), 3),
    ComposedDpEvent((GaussianDpEvent(3.0), ZCDpEvent(0.01))),
    SampledWithReplacementDpEvent(1000, 4, GaussianDpEvent(2.0)),
    RepeatAndSelectDpEvent(GaussianDpEvent(3.0), 10.0, 1.0),
]

#: dpsco-core events without a dp-accounting counterpart (to_dp_accounting raises TypeError).
NO_DP_ACCOUNTING_COUNTERPART = [ApproximateRdpDpEvent(0.01, 50.0, 1e-9)]


def _event_classes():
    return {getattr(events, name) for name in events.__all__
            if name not in ("NeighboringRelation", "DpEvent")}


def test_every_event_type_is_covered():
    # a new event type in dpsco_core.privacy.events needs a conversion (and a case here)
    assert {type(e) for e in ONE_OF_EACH + NO_DP_ACCOUNTING_COUNTERPART} == _event_classes()


@pytest.mark.parametrize("event", NO_DP_ACCOUNTING_COUNTERPART, ids=lambda e: type(e).__name__)
def test_events_without_counterpart_name_themselves(event):
    with pytest.raises(TypeError, match=type(event).__name__):
        to_dp_accounting(event)


def _close(a, b):
    """Events equal, with EpsilonDeltaDpEvent's epsilon compared to a few ulps."""
    if isinstance(a, EpsilonDeltaDpEvent) and isinstance(b, EpsilonDeltaDpEvent):
        return math.isclose(a.epsilon, b.epsilon, rel_tol=1e-12) and a.delta == b.delta
    if type(a) is not type(b):
        return False
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, events.DpEvent):
            if not _close(x, y):
                return False
        elif isinstance(x, tuple) and x and isinstance(x[0], events.DpEvent):
            if len(x) != len(y) or not all(_close(u, v) for u, v in zip(x, y)):
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_round_trip_from_dpsco(event):
    theirs = to_dp_accounting(event)
    assert type(theirs).__module__.startswith("dp_accounting")
    back = from_dp_accounting(theirs)
    assert _close(back, event), (event, theirs, back)
    if not isinstance(event, EpsilonDeltaDpEvent):
        assert back == event


def test_nested_tree_round_trip():
    tree = ComposedDpEvent(tuple(ONE_OF_EACH) + (SelfComposedDpEvent(
        ComposedDpEvent((PoissonSampledDpEvent(0.5, LaplaceDpEvent(1.0)), NoOpDpEvent())), 7),))
    assert _close(from_dp_accounting(to_dp_accounting(tree)), tree)


THEIRS = [
    dpe.RepeatAndSelectDpEvent(event=dpe.GaussianDpEvent(1.0), mean=3.0, shape=1.0),
    dpe.NoOpDpEvent(),
    dpe.NonPrivateDpEvent(),
    dpe.GaussianDpEvent(noise_multiplier=0.9),
    dpe.LaplaceDpEvent(noise_multiplier=3.0),
    dpe.ZCDpEvent(rho=0.5, xi=0.0),
    dpe.RandomizedResponseDpEvent(noise_parameter=0.25, num_buckets=2),
    dpe.PoissonSampledDpEvent(sampling_probability=0.1, event=dpe.GaussianDpEvent(2.0)),
    dpe.SingleEpochTreeAggregationDpEvent(noise_multiplier=3.0, step_counts=17),
    dpe.SingleEpochTreeAggregationDpEvent(noise_multiplier=3.0, step_counts=[8, 9]),
    dpe.SelfComposedDpEvent(event=dpe.LaplaceDpEvent(1.0), count=5),
    dpe.ComposedDpEvent(events=[dpe.GaussianDpEvent(1.0), dpe.NoOpDpEvent()]),
    dpe.SampledWithReplacementDpEvent(source_dataset_size=10, sample_size=2,
                                      event=dpe.GaussianDpEvent(1.0)),
]


@pytest.mark.parametrize("theirs", THEIRS, ids=lambda e: type(e).__name__)
def test_round_trip_from_dp_accounting(theirs):
    back = to_dp_accounting(from_dp_accounting(theirs))
    if isinstance(theirs, dpe.RandomizedResponseDpEvent):
        assert back.num_buckets == 2
        assert math.isclose(back.noise_parameter, theirs.noise_parameter, rel_tol=1e-12)
    else:
        assert back == theirs


def test_pure_dp_becomes_dominating_randomized_response():
    # binary randomized response with noise 2 / (1 + e^eps) is exactly eps-DP: dp-accounting's
    # PLD accountant gives back eps at delta = 0 (rounded up by its discretisation)
    eps = 0.7
    rr = to_dp_accounting(EpsilonDeltaDpEvent(eps))
    assert isinstance(rr, dpe.RandomizedResponseDpEvent) and rr.num_buckets == 2
    assert math.isclose(rr.noise_parameter, 2.0 / (1.0 + math.exp(eps)), rel_tol=1e-14)
    pld = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    pld.compose(rr)
    assert eps - 1e-9 <= pld.get_epsilon(0.0) <= eps + 1e-3
    assert isinstance(to_dp_accounting(EpsilonDeltaDpEvent(math.inf)), dpe.NonPrivateDpEvent)
    with pytest.raises(ValueError, match="delta > 0 has no dp-accounting counterpart"):
        to_dp_accounting(EpsilonDeltaDpEvent(1.0, 1e-6))


ORDERS = [1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0]


@pytest.mark.parametrize("relation, event", [
    (NeighboringRelation.ADD_OR_REMOVE_ONE,
     SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), 1000)),
    (NeighboringRelation.ZERO_OUT,
     ComposedDpEvent((GaussianDpEvent(3.0), SingleEpochTreeAggregationDpEvent(5.0, 100),
                      SelfComposedDpEvent(LaplaceDpEvent(10.0), 3), ZCDpEvent(0.01)))),
    (NeighboringRelation.REPLACE_ONE,
     ComposedDpEvent((GaussianDpEvent(3.0), SelfComposedDpEvent(LaplaceDpEvent(10.0), 3)))),
])
def test_same_epsilon_from_both_accountants(relation, event):
    ours = RdpAccountant(orders=ORDERS, neighboring_relation=relation).compose(event)
    theirs = dp_accounting.rdp.RdpAccountant(
        orders=ORDERS, neighboring_relation=relation_to_dp_accounting(relation))
    theirs.compose(to_dp_accounting(event))
    assert math.isclose(ours.get_epsilon(1e-6), theirs.get_epsilon(1e-6), rel_tol=1e-6)


NO_COUNTERPART = [
    dpe.DiscreteLaplaceDpEvent(noise_parameter=1.0, sensitivity=1),
    dpe.MixtureOfGaussiansDpEvent(standard_deviation=1.0, sensitivities=[0.0, 1.0],
                                  sampling_probs=[0.5, 0.5]),
    dpe.SampledWithoutReplacementDpEvent(source_dataset_size=10, sample_size=2,
                                         event=dpe.GaussianDpEvent(1.0)),
    *([dpe.TruncatedSubsampledGaussianDpEvent(dataset_size=100, sampling_probability=0.1,
                                              truncated_batch_size=20, noise_multiplier=1.0)]
      if hasattr(dpe, "TruncatedSubsampledGaussianDpEvent") else []),    # dp-accounting 0.5+
    dpe.UnsupportedDpEvent(),
    dpe.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=3),
    dpe.ZCDpEvent(rho=0.1, xi=0.5),
]


def test_every_dp_accounting_event_type_is_covered():
    # each event class of the installed dp-accounting either converts (THEIRS) or is refused by
    # name (NO_COUNTERPART): a new class in a later release fails here until it is decided
    classes = {c for c in vars(dpe).values()
               if isinstance(c, type) and issubclass(c, dpe.DpEvent) and c is not dpe.DpEvent}
    assert classes <= {type(e) for e in THEIRS + NO_COUNTERPART}


@pytest.mark.parametrize("theirs", NO_COUNTERPART, ids=lambda e: type(e).__name__)
def test_no_counterpart_names_the_event(theirs):
    with pytest.raises(TypeError, match=type(theirs).__name__):
        from_dp_accounting(theirs)
    nested = dpe.ComposedDpEvent(events=[dpe.GaussianDpEvent(1.0), theirs])
    with pytest.raises(TypeError, match=type(theirs).__name__):
        from_dp_accounting(nested)


def test_unknown_dpsco_event_raises():
    @dataclasses.dataclass(frozen=True)
    class HomeMadeDpEvent(events.DpEvent):
        pass

    with pytest.raises(TypeError, match="HomeMadeDpEvent"):
        to_dp_accounting(ComposedDpEvent((HomeMadeDpEvent(),)))


@pytest.mark.parametrize("relation", list(NeighboringRelation))
def test_relations_map_both_ways(relation):
    theirs = relation_to_dp_accounting(relation)
    assert relation_from_dp_accounting(theirs) is relation
    assert relation_to_dp_accounting(relation.value) is theirs
    assert (theirs.name == "REPLACE_SPECIAL") == (relation is NeighboringRelation.ZERO_OUT)


def test_without_dp_accounting_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match="pip install dp-accounting"):
        to_dp_accounting(GaussianDpEvent(1.0))
