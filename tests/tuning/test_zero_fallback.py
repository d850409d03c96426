"""tune_solver's zero-model fallback: post-processing of the selected score (issue 19).

Identities: the zero model's public score bound is the loss of w = 0 at the worst public
label, capped by the score's clip; a selection that can only draw a diverging candidate
releases the zero model, with the same privacy report as without the fallback (the same event,
recomputed by the accountant); a good candidate, or one whose model is near zero, is kept.
"""

import math
import warnings

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core.penalties import L2
from dpsco_core.privacy import RdpAccountant
from dpsco_core.tuning.grids import Candidate
from dpsco_core.tuning.score import regression_loss_clip
from dpsco_core.tuning.search import tune_solver, zero_model_score_bound

from test_search import problem as regression  # noqa: F401  (the module's L1 regression)


def test_zero_model_bound_is_the_worst_public_label_loss(regression):  # noqa: F811
    assert zero_model_score_bound(regression, 100.0) == pytest.approx(8.0)   # 4^2 / 2
    assert zero_model_score_bound(regression, 5.0) == 5.0                    # capped by B
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    logistic = Problem(X, np.sign(X[:, 0] + 0.1), loss="logistic", penalty=L2(1e-3),
                       bounds=(-5, 5))
    assert zero_model_score_bound(logistic, 100.0) == pytest.approx(math.log(2.0))
    no_label_bound = Problem(X, X[:, 0], loss="squared", bounds=(-5, 5))
    assert zero_model_score_bound(no_label_bound, 3.0) == 3.0
    # every record's clipped loss at w = 0 is within the bound
    y = np.asarray(regression.y)
    assert np.all(np.minimum(regression.loss.value(np.zeros(y.size), y), 100.0) <= 8.0)


@pytest.mark.parametrize("refit", [False, True])
def test_a_diverging_selection_releases_the_zero_model(regression, refit):
    kw = dict(epsilon=1.0, delta=1e-6, solver="sgd", passes=2, refit=refit, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tune_solver(regression, candidates=[Candidate(1.0, 1e6)], **kw)
    assert res.zero_fallback
    np.testing.assert_array_equal(res.coef, np.zeros(4))
    assert res.history is None                               # no refit was run
    # the score certifies a model worse than the zero model's public bound
    assert res.score < -zero_model_score_bound(regression, regression_loss_clip(
        regression.loss, 4.0))
    acc = RdpAccountant(None, res.privacy.neighboring_relation)
    assert acc.compose(res.privacy.event).get_epsilon(1e-6) == \
        pytest.approx(res.privacy.epsilon, rel=1e-12)
    assert 0.95 < res.privacy.epsilon <= 1.0


@pytest.mark.parametrize("clip", [1.0, 1e-6])
def test_good_or_near_zero_models_are_kept(regression, clip):
    res = tune_solver(regression, epsilon=1.0, delta=1e-6, solver="sgd", passes=2,
                      candidates=[Candidate(1.0, clip)], random_state=0)
    assert not res.zero_fallback
    if clip == 1.0:
        assert np.linalg.norm(res.coef - [1.0, -2.0, 0.0, 0.5]) < 1.0
