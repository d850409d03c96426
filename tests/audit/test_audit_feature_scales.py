"""Black-box audit of the private feature scales (session 20).

Identity checked (the hypothesis-testing bound of ``dpsco_core.audit``): the public
``private_feature_scales``, called on a dataset and its worst neighbour (one record moved
from the lower corner of the bounds to the upper one: every coordinate of the first query
moves by 1/n, the l2 sensitivity sqrt(p)/n; zero-out's worst pair is the same) is not refuted at
95% confidence: eps_lower <= the epsilon of its report. The statistic is the sum of the
released centres (the likelihood-ratio direction of the first release). A twin whose
sensitivity is per-coordinate (1/n instead of sqrt(p)/n, noise sqrt(p) = 8 times too small)
is caught. Trials call the public function (about 0.3 ms each); seeds fixed.
"""

import numpy as np
import pytest

from dpsco_core import audit as A
from dpsco_core import feature_scales as fsm
from dpsco_core._random import child_seed_sequences

pytestmark = pytest.mark.statistical

EPSILON, DELTA = 1.0, 1e-5
P, N = 64, 400
N_TRIALS = 6_000


def _pair(relation="replace_one"):
    base = np.full((N, P), 0.5)
    base[0] = 0.0                     # record 0 at the lower corner
    other = base.copy()
    # replace-one: the record moved to the opposite corner. Zero-out: the null record adds
    # nothing to the sums over the public n, which for the first query is the lower corner
    # (v = 0) and the record it nulls may sit at the upper one: the same pair.
    other[0] = 1.0
    return base, other


def _sampler(relation):
    def sampler(X, n, seed_seq):
        seeds = child_seed_sequences(seed_seq, n)
        return np.array([fsm.private_feature_scales(
            X, bounds=(0.0, 1.0), epsilon=EPSILON, delta=DELTA, neighboring_relation=relation,
            random_state=s).centre.sum() for s in seeds])
    return sampler


def test_black_box_not_refuted():
    # zero-out's worst pair is replace-one's (see _pair): one audit covers both claims
    relation = "replace_one"
    X0, X1 = _pair(relation)
    claimed = fsm.private_feature_scales(X0, bounds=(0.0, 1.0), epsilon=EPSILON, delta=DELTA,
                                         random_state=0).privacy.epsilon
    assert claimed <= EPSILON
    result = A.audit(_sampler(relation), X0, X1, n_trials=N_TRIALS, delta=DELTA,
                     random_state=2026)
    assert result.eps_lower <= claimed, result


def test_per_coordinate_sensitivity_twin_is_caught(monkeypatch):
    monkeypatch.setattr(fsm, "_sensitivity", lambda p, n: 1.0 / n)
    X0, X1 = _pair("replace_one")
    result = A.audit(_sampler("replace_one"), X0, X1, n_trials=N_TRIALS, delta=DELTA,
                     random_state=2026)
    assert result.eps_lower > EPSILON, result
