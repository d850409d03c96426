"""SingleEpochTreeAggregationDpEvent and the GDP accountant (exact mu-GDP composition)."""

import math

import numpy as np
import pytest

from dpsco_core.exceptions import UnsupportedEventError
from dpsco_core.privacy import (ComposedDpEvent, GaussianDpEvent, GdpAccountant,
                                NeighboringRelation, NonPrivateDpEvent, NoOpDpEvent,
                                PoissonSampledDpEvent, PrivacyReport, RdpAccountant,
                                SelfComposedDpEvent, SingleEpochTreeAggregationDpEvent,
                                gdp_delta, gdp_epsilon, tree_depth)

ZERO_OUT = NeighboringRelation.ZERO_OUT


@pytest.mark.parametrize("T", [1, 2, 3, 7, 8, 9, 1000, 1024, 1025])
def test_depth_is_bit_length_and_matches_dp_accounting(T):
    assert tree_depth(T) == T.bit_length() == math.ceil(math.log2(T + 1))
    assert tree_depth([3, T]) == max(3, T).bit_length()


def test_rdp_matches_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    for s, T in [(0.8, 37), (2.0, [10, 100]), (5.0, 1)]:
        ours = RdpAccountant(None, ZERO_OUT).compose(SingleEpochTreeAggregationDpEvent(s, T))
        theirs = dpa.rdp.RdpAccountant(
            neighboring_relation=dpa.NeighboringRelation.REPLACE_SPECIAL)
        theirs.compose(dpa.SingleEpochTreeAggregationDpEvent(s, T))
        assert np.isclose(ours.get_epsilon(1e-6), theirs.get_epsilon(1e-6), rtol=1e-9)


def test_gdp_of_tree_is_gaussian_with_sqrt_depth_sensitivity():
    event = SingleEpochTreeAggregationDpEvent(3.0, 100)     # depth 7
    acc = GdpAccountant(ZERO_OUT).compose(event)
    same = GdpAccountant(ZERO_OUT).compose(GaussianDpEvent(3.0 / math.sqrt(7)))
    assert np.isclose(acc.mu, same.mu, rtol=1e-12)
    assert acc.get_epsilon(1e-5) == pytest.approx(gdp_epsilon(math.sqrt(7) / 3.0, 1e-5))
    assert acc.get_delta(1.0) == pytest.approx(gdp_delta(math.sqrt(7) / 3.0, 1.0))


def test_gdp_composition():
    event = ComposedDpEvent((SelfComposedDpEvent(GaussianDpEvent(2.0), 4), NoOpDpEvent(),
                             GaussianDpEvent(1.0)))
    acc = GdpAccountant().compose(event)
    assert acc.mu == pytest.approx(math.sqrt(4 / 4.0 + 1.0))
    assert GdpAccountant().compose(NonPrivateDpEvent()).get_epsilon(1e-5) == math.inf
    assert GdpAccountant().get_epsilon(1e-5) == 0.0


def test_gdp_is_tighter_than_rdp_for_gaussians():
    event = SelfComposedDpEvent(GaussianDpEvent(5.0), 10)
    rdp = RdpAccountant().compose(event).get_epsilon(1e-5)
    gdp = GdpAccountant().compose(event).get_epsilon(1e-5)
    assert gdp <= rdp


def test_unsupported_events_and_relations():
    with pytest.raises(UnsupportedEventError):
        GdpAccountant().compose(PoissonSampledDpEvent(0.1, GaussianDpEvent(1.0)))
    tree = SingleEpochTreeAggregationDpEvent(1.0, 8)
    for acc in (GdpAccountant(), RdpAccountant()):          # add/remove-one
        assert not acc.supports(tree)
        with pytest.raises(UnsupportedEventError, match="ZERO_OUT"):
            acc.compose(tree)
    assert GdpAccountant(NeighboringRelation.REPLACE_ONE).supports(tree)
    with pytest.raises(ValueError, match="step_counts"):
        GdpAccountant(ZERO_OUT).compose(SingleEpochTreeAggregationDpEvent(1.0, 0))
    with pytest.raises(ValueError, match="noise_multiplier"):
        GdpAccountant(ZERO_OUT).compose(SingleEpochTreeAggregationDpEvent(0.0, 3))


def test_report_from_event_gdp():
    event = SingleEpochTreeAggregationDpEvent(4.0, 31)
    report = PrivacyReport.from_event(event, delta=1e-6, accountant="gdp",
                                      neighboring_relation=ZERO_OUT)
    assert report.accountant == "gdp" and report.conversion == "exact-gdp"
    assert report.mechanisms == ("tree-aggregated Gaussian",)
    assert report.noise_multipliers == (4.0,)
    assert report.epsilon == gdp_epsilon(GdpAccountant(ZERO_OUT).compose(event).mu, 1e-6)
