"""PrivacyReport: built from the event tree alone, and equal when rebuilt."""

import dataclasses

import pytest

from dpsco_core.exceptions import UnsupportedEventError
from dpsco_core.privacy import (
    ComposedDpEvent,
    EpsilonDeltaDpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    NeighboringRelation,
    PoissonSampledDpEvent,
    PrivacyReport,
    RdpAccountant,
    SelfComposedDpEvent,
    dp_cd_noise_multiplier,
)

N = 20640
DELTA = 1 / N ** 2
S = dp_cd_noise_multiplier(epsilon=0.9, delta=DELTA, releases=400)
# DP-CD-priv-cst (note 002, 5.4): Laplace smoothness constants at 0.1 epsilon, then DP-CD
DPCD = ComposedDpEvent((SelfComposedDpEvent(LaplaceDpEvent(8 / 0.1), 8),
                        SelfComposedDpEvent(GaussianDpEvent(S), 400)))


def make_report(**kw):
    return PrivacyReport.from_event(
        DPCD, delta=DELTA, neighboring_relation=NeighboringRelation.REPLACE_ONE,
        conversion="mironov", budget_split={"smoothness constants": 0.1, "optimization": 0.9},
        **kw)


def test_report_fields():
    rep = make_report()
    assert rep.mechanisms == ("Laplace", "Gaussian")
    assert rep.noise_multipliers == (80.0, S)
    assert rep.releases == 408
    assert rep.accountant == "rdp" and rep.conversion == "mironov"
    assert rep.neighboring_relation is NeighboringRelation.REPLACE_ONE
    assert rep.event is DPCD
    assert 0 < rep.epsilon <= 1.0
    assert rep.assumptions


def test_report_equals_what_the_accountant_computes_from_the_events():
    rep = make_report()
    acc = RdpAccountant(neighboring_relation=rep.neighboring_relation,
                        conversion=rep.conversion).compose(rep.event)
    assert rep.epsilon == acc.get_epsilon(rep.delta)
    rebuilt = PrivacyReport.from_event(
        rep.event, delta=rep.delta, accountant=rep.accountant,
        neighboring_relation=rep.neighboring_relation, orders=rep.orders,
        conversion=rep.conversion, budget_split=dict(rep.budget_split),
        assumptions=rep.assumptions)
    assert rebuilt == rep


def test_report_is_immutable():
    rep = make_report()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.epsilon = 0.0
    with pytest.raises(TypeError):
        rep.budget_split["optimization"] = 1.0
    hash(rep)


def test_basic_composition_report():
    event = SelfComposedDpEvent(EpsilonDeltaDpEvent(0.1, 1e-8), 5)
    rep = PrivacyReport.from_event(event, delta=1e-7, accountant="basic-composition")
    assert rep.epsilon == pytest.approx(0.5) and rep.conversion == "none"
    assert rep.mechanisms == ("(epsilon, delta)-DP",) and rep.releases == 5


def test_sampled_report_and_relation_check():
    event = SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0)), 100)
    rep = PrivacyReport.from_event(event, delta=1e-5)
    assert rep.mechanisms == ("Poisson-sampled Gaussian",) and rep.releases == 100
    with pytest.raises(UnsupportedEventError):
        PrivacyReport.from_event(event, delta=1e-5,
                                 neighboring_relation=NeighboringRelation.REPLACE_ONE)


@pytest.mark.parametrize("split, exc", [({"a": 0.7, "b": 0.7}, ValueError),
                                        ({"a": -0.1}, ValueError), ({1: 0.5}, TypeError)])
def test_bad_budget_split(split, exc):
    with pytest.raises(exc):
        make_report().__class__.from_event(DPCD, delta=DELTA, budget_split=split)


def test_bad_accountant_name():
    with pytest.raises(ValueError, match="accountant"):
        PrivacyReport.from_event(DPCD, delta=DELTA, accountant="prv")


def test_report_pickles():
    import pickle

    rep = make_report()
    assert pickle.loads(pickle.dumps(rep)) == rep


def test_basic_composition_report_accepts_delta_zero_for_pure_events():
    from dpsco_core.privacy.events import EpsilonDeltaDpEvent, LaplaceDpEvent, SelfComposedDpEvent
    pure = SelfComposedDpEvent(EpsilonDeltaDpEvent(0.25), 3)
    rep = PrivacyReport.from_event(pure, delta=0.0, accountant="basic-composition")
    assert rep.delta == 0.0 and rep.epsilon == pytest.approx(0.75)
    rep = PrivacyReport.from_event(LaplaceDpEvent(2.0), delta=0, accountant="basic-composition")
    assert rep.delta == 0.0 and rep.epsilon == pytest.approx(0.5)
    # A tree with a delta has no (epsilon, 0) guarantee: infinite epsilon, never a silent 0.
    approx = EpsilonDeltaDpEvent(0.5, 1e-6)
    assert PrivacyReport.from_event(approx, delta=0.0,
                                    accountant="basic-composition").epsilon == float("inf")
    with pytest.raises(ValueError, match="delta"):
        PrivacyReport.from_event(pure, delta=0.0, accountant="rdp")
