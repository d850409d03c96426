"""Black-box audits of dp_cd and dp_sgd under every neighbouring relation (issue 15, part 1).

Identity checked (the hypothesis-testing bound of ``dpsco_core.audit``): the public solver,
called on a dataset and on its worst neighbour under the relation (an extreme outlier added,
a record replaced by it, or zeroed), is not refuted at 95% confidence: eps_lower <= the
epsilon of its report. Every trial goes through the solver itself, so a normaliser read from
the private data (the bug of main 9cdba7a under add/remove-one) changes the release between
the inputs; the deterministic check of that bug, which needs no statistics, is
``tests/privacy/test_neighbour_sensitivity.py::test_private_n_normaliser_is_caught``.
Small trial counts (seconds); seeds fixed.
"""

import pytest

from dpsco_core import audit as A
from dpsco_core.audit.neighbour_cases import RELATIONS

pytestmark = pytest.mark.statistical

EPSILON, DELTA = 1.0, 1e-5
N_TRIALS_CD = 8_000        # dp_cd_grid: one run (seed sequence) per trial, ~1 ms each
N_TRIALS_SGD = 40_000      # dp_sgd: 4,096 trials per call (one coordinate each)


@pytest.mark.parametrize("relation", sorted(RELATIONS))
def test_dp_cd_black_box_not_refuted(relation):
    case = A.dp_cd_relation_case(relation, epsilon=EPSILON, delta=DELTA)
    assert case.epsilon <= EPSILON
    result = A.run_case(case, n_trials=N_TRIALS_CD, random_state=2026)
    assert result.eps_lower <= case.epsilon, result


@pytest.mark.parametrize("relation", sorted(RELATIONS))
def test_dp_cd_gdp_calibration_black_box_not_refuted(relation):
    """calibration="gdp" (session 18): one release is the analytic Gaussian mechanism, the
    tightest claim the solver makes; the outlier neighbour does not refute it."""
    case = A.dp_cd_relation_case(relation, epsilon=EPSILON, delta=DELTA, calibration="gdp")
    assert case.epsilon <= EPSILON and "gdp" in case.name
    result = A.run_case(case, n_trials=N_TRIALS_CD, random_state=2026)
    assert result.eps_lower <= case.epsilon, result


@pytest.mark.parametrize("relation", sorted(RELATIONS))
def test_dp_sgd_black_box_not_refuted(relation):
    case = A.dp_sgd_relation_case(relation, epsilon=EPSILON, delta=DELTA)
    assert case.epsilon <= EPSILON
    result = A.run_case(case, n_trials=N_TRIALS_SGD, random_state=2026)
    assert result.eps_lower <= case.epsilon, result


def test_black_box_cases_see_the_outlier():
    """Power check at no noise (epsilon = inf): the statistic separates the inputs
    completely, so the audits above test the release that moves, not a constant."""
    import numpy as np
    for relation in RELATIONS:
        cd = A.dp_cd_relation_case(relation, epsilon=np.inf, delta=DELTA)
        s0 = cd.sampler(cd.input0, 4, np.random.SeedSequence(0))
        s1 = cd.sampler(cd.input1, 4, np.random.SeedSequence(1))
        assert np.all(s0 == s0[0]) and np.all(s1 == s1[0]) and s0[0] != s1[0], relation
        sgd = A.dp_sgd_relation_case(relation, epsilon=np.inf, delta=DELTA)
        t0 = sgd.sampler(sgd.input0, 4, np.random.SeedSequence(0))
        t1 = sgd.sampler(sgd.input1, 4, np.random.SeedSequence(1))
        assert np.all(t0 != t1), relation
