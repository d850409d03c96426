"""Black-box audit of private selection: the random stopping is what makes it private.

Trial: randomized response, one bit with P[1] = 1/(1 + e^eps) on input 0 and e^eps/(1 + e^eps)
on input 1 (eps-DP, eps = 0.5); score = the bit; the selection releases the best bit. The
honest selection (geometric K, mean 5) claims 3 eps = 1.5 (Liu and Talwar, Theorem 3.1; the
accountant's pure bound). Its true epsilon is log of the ratio of E[(1 - q)^K], about 0.82, so
the 95% audit bound stays below 1.5. A broken selector that ignores the random stopping (always
K = 5 runs, best reported) releases "all five bits 0" with ratio e^(5 eps) = e^2.5; the audit's
lower bound (about 2.0 at 8,000 runs per input) exceeds the claimed 1.5 and catches it.

The default distribution of K (truncated negative binomial, eta = 2:
``tuning.search.DEFAULT_TRIALS_SHAPE``) and Poisson stopping have no pure guarantee; their claim
is the RDP accountant's (Papernot and Steinke 2022, Theorems 2 and 6) converted at delta = 1e-3.
With the trial at eps = 2 and E[K] = 3 the claims are 4.68 (eta = 2) and 4.61 (Poisson); the
honest selections' true epsilons are log P_0[0] / P_1[0] = 2.93 and 3.41 (computed from the
distribution of K), and a selector that always runs K = 3 releases "all bits 0" with ratio
e^6 (P_1[0] = 0.0017 against P_0[0] = 0.68): at 8,000 runs per input its audit bound is about
5.3, above either claim.
"""

import math

import numpy as np
import pytest

from dpsco_core import audit as A
from dpsco_core.privacy import EpsilonDeltaDpEvent, NeighboringRelation
from dpsco_core.privacy.accountants import PureDpAccountant
from dpsco_core.tuning import Trial, private_selection
from dpsco_core.tuning import stopping

pytestmark = pytest.mark.statistical

EPS = 0.5
MEAN = 5.0
N_TRIALS = 8_000
EVENT = EpsilonDeltaDpEvent(EPS)


def _trial(x, eps=EPS):
    q = math.exp(eps) / (1 + math.exp(eps)) if x == 1 else 1 / (1 + math.exp(eps))
    event = EpsilonDeltaDpEvent(eps)

    def trial(candidate, seed):
        bit = float(np.random.default_rng(seed).random() < q)
        return Trial(score=bit, output=bit, event=event)

    return trial


def _make_sampler(eps=EPS, mean=MEAN, shape=1.0):
    from dpsco_core._random import child_seed_sequences

    event = EpsilonDeltaDpEvent(eps)

    def sampler(x, n, seed_seq):
        trial = _trial(x, eps)
        outputs = (private_selection(trial, [0], trial_event=event, mean=mean, shape=shape,
                                     random_state=s).output
                   for s in child_seed_sequences(seed_seq, n))
        # Poisson K = 0 releases no run (output None): an outcome of its own, -1.
        return np.array([-1.0 if out is None else out for out in outputs])

    return sampler


_sampler = _make_sampler()


def _claim():
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent

    acc = PureDpAccountant(NeighboringRelation.REPLACE_ONE)
    return acc.compose(RepeatAndSelectDpEvent(EVENT, MEAN, 1.0)).epsilon


def test_honest_selection_passes_audit():
    claim = _claim()
    assert claim == pytest.approx(3 * EPS)
    result = A.audit(_sampler, 0, 1, n_trials=N_TRIALS, random_state=11)
    assert result.eps_lower <= claim, result


def test_selector_ignoring_random_stopping_is_caught(monkeypatch):
    monkeypatch.setattr(stopping, "sample_num_trials",
                        lambda mean, shape, random_state=None: int(mean))
    result = A.audit(_sampler, 0, 1, n_trials=N_TRIALS, random_state=11)
    assert result.eps_lower > _claim() + 0.3, result


# The RDP-accounted distributions of K: eta = 2 (the default of tune_solver and the estimators)
# and Poisson. Parameters of the module docstring.
RDP_EPS, RDP_MEAN, RDP_DELTA = 2.0, 3.0, 1e-3
RDP_SHAPES = [pytest.param(2.0, id="tnb-eta2"), pytest.param(math.inf, id="poisson")]


def _rdp_claim(shape):
    from dpsco_core.privacy import RdpAccountant
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent

    acc = RdpAccountant(None, NeighboringRelation.REPLACE_ONE)
    event = RepeatAndSelectDpEvent(EpsilonDeltaDpEvent(RDP_EPS), RDP_MEAN, shape)
    return acc.compose(event).get_epsilon(RDP_DELTA)


def test_default_shape_is_audited():
    from dpsco_core.tuning.search import DEFAULT_TRIALS_SHAPE

    assert DEFAULT_TRIALS_SHAPE == 2.0


@pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.OrderGridWarning")
@pytest.mark.parametrize("shape", RDP_SHAPES)
def test_honest_rdp_selection_passes_audit(shape):
    claim = _rdp_claim(shape)
    assert 4.5 < claim < 4.8
    sampler = _make_sampler(RDP_EPS, RDP_MEAN, shape)
    result = A.audit(sampler, 0, 1, n_trials=N_TRIALS // 2, delta=RDP_DELTA, random_state=12)
    assert result.eps_lower <= claim, result


@pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.OrderGridWarning")
@pytest.mark.parametrize("shape", RDP_SHAPES)
def test_rdp_selector_ignoring_random_stopping_is_caught(shape, monkeypatch):
    monkeypatch.setattr(stopping, "sample_num_trials",
                        lambda mean, shape, random_state=None: int(mean))
    sampler = _make_sampler(RDP_EPS, RDP_MEAN, shape)
    result = A.audit(sampler, 0, 1, n_trials=N_TRIALS, delta=RDP_DELTA, random_state=12)
    assert result.eps_lower > _rdp_claim(shape) + 0.3, result
