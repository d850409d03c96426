"""The random number of runs K of a private selection (Papernot and Steinke 2022, section 3).

K is drawn from public parameters only, independently of the data, and is **secret**: the
selection's guarantee covers the best run's output alone. Released with the output, K would
turn the selection into the best of a known number of runs, which is not private (the
audit in ``tests/tuning/test_selection_audit.py`` measures it).
"""

import math
from typing import Any

import numpy as np

from .._random import check_random_state
from ..privacy.selection import check_repeat_and_select, gamma_for_mean

__all__ = ["sample_num_trials", "num_trials_pmf"]


def sample_num_trials(mean: float, shape: float, random_state: Any = None) -> int:
    """Draw the number of runs K.

    Parameters
    ----------
    mean : float
        E[K] (>= 1; > 0 for Poisson).
    shape : float
        eta in [0, inf) for the truncated negative binomial of Definition 1 of Papernot and
        Steinke (eta = 0 logarithmic, eta = 1 geometric: Liu and Talwar's random stopping);
        ``inf`` for Poisson.
    random_state : None, int, SeedSequence or Generator
        The stream of K (a secret of the selection under ``None``).

    Returns
    -------
    int
        K >= 1 (K >= 0 for Poisson).

    Notes
    -----
    gamma is :func:`~dpsco_core.privacy.selection.gamma_for_mean`, the one the accountant
    uses. Draws: geometric ``Generator.geometric(gamma)`` (support {1, 2, ...});
    logarithmic ``Generator.logseries(1 - gamma)``, whose mass ``(1 - gamma)^k / (k
    log(1/gamma))`` is Definition 1 at eta = 0; otherwise ``Generator.negative_binomial(eta,
    gamma)`` (mass ``Gamma(k + eta) / (k! Gamma(eta)) gamma^eta (1 - gamma)^k``, k >= 0)
    conditioned on K >= 1 by rejection, which is Definition 1 for eta > 0.
    """
    mean, shape = check_repeat_and_select(mean, shape)
    rng = np.random.default_rng(check_random_state(random_state))
    if math.isinf(shape):
        return int(rng.poisson(mean))
    gamma = gamma_for_mean(mean, shape)
    if gamma >= 1.0:
        return 1
    if shape == 1.0:
        return int(rng.geometric(gamma))
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))
    while True:
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def num_trials_pmf(k: Any, mean: float, shape: float) -> Any:
    """P[K = k] of the distribution :func:`sample_num_trials` draws from (for tests).

    Parameters
    ----------
    k : array_like of int
        Values, >= 0.
    mean, shape : float
        As :func:`sample_num_trials`.

    Returns
    -------
    ndarray
        The probabilities.
    """
    from scipy import stats

    mean, shape = check_repeat_and_select(mean, shape)
    k = np.asarray(k)
    if math.isinf(shape):
        return stats.poisson.pmf(k, mean)
    gamma = gamma_for_mean(mean, shape)
    if gamma >= 1.0:
        return (k == 1).astype(float)
    if shape == 0.0:
        return stats.logser.pmf(k, 1.0 - gamma)
    mass = stats.nbinom.pmf(k, shape, gamma) / (1.0 - gamma**shape)
    return np.where(k >= 1, mass, 0.0)
