"""Black-box audit of private selection: the random stopping is what makes it private.

Trial: randomized response, one bit with P[1] = 1/(1 + e^eps) on input 0 and e^eps/(1 + e^eps)
on input 1 (eps-DP, eps = 0.5); score = the bit; the selection releases the best bit. The
honest selection (geometric K, mean 5) claims 3 eps = 1.5 (Liu and Talwar, Theorem 3.1; the
accountant's pure bound). Its true epsilon is log of the ratio of E[(1 - q)^K], about 0.82, so
the 95% audit bound stays below 1.5. A broken selector that ignores the random stopping (always
K = 5 runs, best reported) releases "all five bits 0" with ratio e^(5 eps) = e^2.5; the audit's
lower bound (about 2.0 at 8,000 runs per input) exceeds the claimed 1.5 and catches it.
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


def _trial(x):
    q = math.exp(EPS) / (1 + math.exp(EPS)) if x == 1 else 1 / (1 + math.exp(EPS))

    def trial(candidate, seed):
        bit = float(np.random.default_rng(seed).random() < q)
        return Trial(score=bit, output=bit, event=EVENT)

    return trial


def _sampler(x, n, seed_seq):
    from dpsco_core._random import child_seed_sequences

    trial = _trial(x)
    return np.array([private_selection(trial, [0], trial_event=EVENT, mean=MEAN, shape=1.0,
                                       random_state=s).output
                     for s in child_seed_sequences(seed_seq, n)])


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
