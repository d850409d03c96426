"""The number of runs K has the distribution the accountant assumes (Monte Carlo).

Identity: the empirical frequencies of ``sample_num_trials`` over 20,000 fixed-seed draws match
``num_trials_pmf`` (Definition 1 of Papernot and Steinke 2022; Poisson) by a chi-square test at
level 1e-3, and the sample mean matches E[K] within 4 standard errors.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpsco_core.tuning import num_trials_pmf, sample_num_trials

pytestmark = pytest.mark.statistical
N = 20_000


@pytest.mark.parametrize("mean,shape", [(10.0, 1.0), (10.0, 0.0), (5.0, 0.5), (8.0, 2.0),
                                        (6.0, math.inf), (1.0, 1.0)])
def test_distribution_of_k(mean, shape):
    seeds = np.random.SeedSequence(1234).spawn(N)
    draws = np.array([sample_num_trials(mean, shape, s) for s in seeds])
    assert draws.min() >= (0 if math.isinf(shape) else 1)
    sd = draws.std() / math.sqrt(N)
    assert abs(draws.mean() - mean) <= 4 * max(sd, 1e-12)
    if mean == 1.0:
        assert np.all(draws == 1)
        return
    top = int(np.quantile(draws, 0.99))
    ks = np.arange(0, top + 1)
    expected = N * num_trials_pmf(ks, mean, shape)
    observed = np.bincount(np.minimum(draws, top + 1), minlength=top + 2)[:top + 1]
    keep = expected >= 5
    tail_exp = N - expected[keep].sum()
    tail_obs = N - observed[keep].sum()
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    chi2 += (tail_obs - tail_exp) ** 2 / tail_exp
    dof = int(keep.sum())
    assert stats.chi2.sf(chi2, dof) > 1e-3, (chi2, dof)


def test_reproducible_from_seed():
    a = [sample_num_trials(10.0, 1.0, np.random.SeedSequence(7)) for _ in range(3)]
    assert len(set(a)) == 1
