"""Privacy of private selection by random stopping: repeat a private run K times, keep the best.

The accountant's curve of :class:`~dpsco_core.privacy.events.RepeatAndSelectDpEvent`, and the
distributions of the number of runs K it is stated for. Pure functions of public numbers.

Two results are implemented, each in the form used below (checked against the paper's text
and dp-accounting's ``_compute_rdp_repeat_and_select``):

**Papernot and Steinke (ICLR 2022), Theorem 2** (truncated negative binomial K, shape
:math:`\\eta \\ge 0` and :math:`\\gamma \\in (0, 1]`). If every run is
:math:`(\\lambda, \\varepsilon)`-RDP and :math:`(\\hat\\lambda, \\hat\\varepsilon)`-RDP, the
selection is :math:`(\\lambda, \\varepsilon')`-RDP with

.. math::

    \\varepsilon' = \\varepsilon + (1 + \\eta)\\Big(1 - \\frac{1}{\\hat\\lambda}\\Big)
    \\hat\\varepsilon + \\frac{(1 + \\eta) \\log(1/\\gamma)}{\\hat\\lambda}
    + \\frac{\\log \\mathbb E[K]}{\\lambda - 1},

with :math:`\\mathbb E[K] = \\eta (1 - \\gamma) / (\\gamma (1 - \\gamma^\\eta))` for
:math:`\\eta > 0` and :math:`(1/\\gamma - 1) / \\log(1/\\gamma)` for :math:`\\eta = 0`
(Definition 1). :math:`\\hat\\lambda` is free: the curve takes the best one on the order grid
for every :math:`\\lambda`. Special cases: :math:`\\eta = 0` is the logarithmic distribution,
:math:`\\eta = 1` the geometric distribution :math:`\\mathbb E[K] = 1/\\gamma` (Liu and
Talwar's random stopping). RDP is non-decreasing in the order, so the bound at :math:`\\lambda`
is also replaced by the smallest bound at any larger order of the grid (as dp-accounting).
Shapes :math:`\\eta \\in (-1, 0)`, allowed by the theorem, are not offered.

**Papernot and Steinke, Theorem 6** (Poisson K with mean :math:`\\mu > 0`; K = 0 releases
nothing). If every run is :math:`(\\lambda, \\varepsilon)`-RDP and
:math:`(\\hat\\varepsilon, \\hat\\delta)`-DP with :math:`e^{\\hat\\varepsilon} \\le 1 + 1 /
(\\lambda - 1)`, the selection is :math:`(\\lambda, \\varepsilon + \\mu\\hat\\delta +
\\log(\\mu) / (\\lambda - 1))`-RDP. Here :math:`\\hat\\varepsilon = \\log(1 + 1/(\\lambda - 1))`
(the condition with equality) and :math:`\\hat\\delta` is the run's delta at
:math:`\\hat\\varepsilon` from its own RDP curve (the accountant's conversion).

**Liu and Talwar (STOC 2019), Theorem 3.1**: with geometric K (halting probability
:math:`\\gamma` after every run) and :math:`\\varepsilon`-DP runs, the selection is
:math:`3\\varepsilon`-DP (pure). The accountant uses it, as the pure-DP curve of
:math:`3\\varepsilon`, where it is smaller than Theorem 2 (``shape = 1`` and a pure run).
"""

import functools
import math

import numpy as np

from .._validation import check_scalar
from ._checks import round_up
from .conversions import _rdp_to_delta

__all__ = ["truncated_negative_binomial_mean", "gamma_for_mean", "rdp_repeat_and_select",
           "liu_talwar_epsilon", "check_repeat_and_select"]

#: Relative accuracy of the bisection that maps a mean to gamma (its conservative end is used).
GAMMA_TOLERANCE = 1e-12


def check_repeat_and_select(mean, shape):
    """``(mean, shape)`` of a repeat-and-select event, checked; shape ``inf`` is Poisson."""
    shape = check_scalar(shape, "shape", low=0.0, low_open=False, allow_inf=True)
    if math.isinf(shape):
        mean = check_scalar(mean, "mean", low=0.0)
    else:
        mean = check_scalar(mean, "mean", low=1.0, low_open=False)
    return mean, shape


def truncated_negative_binomial_mean(gamma, shape):
    """E[K] of the truncated negative binomial (Papernot and Steinke 2022, Definition 1).

    Parameters
    ----------
    gamma : float
        In (0, 1].
    shape : float
        eta in [0, inf).

    Returns
    -------
    float
        ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` (eta > 0; ``1/gamma`` at eta = 1),
        ``(1/gamma - 1) / log(1/gamma)`` (eta = 0); 1 at gamma = 1.
    """
    gamma = check_scalar(gamma, "gamma", low=0.0, high=1.0, high_open=False)
    shape = check_scalar(shape, "shape", low=0.0, low_open=False)
    if gamma == 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / gamma
    log_gamma = math.log(gamma)
    # (gamma - 1) / log(gamma) in a stable form: -expm1(log gamma) / log gamma ... as 1/b below.
    b = log_gamma / math.expm1(log_gamma)              # log(gamma) / (gamma - 1) > 0
    if shape == 0.0:
        return 1.0 / (gamma * b)
    x = shape * log_gamma
    a = math.expm1(x) / x                               # (gamma^eta - 1) / (eta log gamma)
    return 1.0 / (gamma * a * b)


def gamma_for_mean(mean, shape):
    """The gamma of the truncated negative binomial of shape ``shape`` and mean ``mean``.

    The mean decreases in gamma; bisection returns the smaller end of the final bracket, so
    the returned gamma has mean at least ``mean`` (the accountant then uses the exact mean of
    the returned gamma, and the sampler draws with the same gamma).

    Parameters
    ----------
    mean : float
        >= 1.
    shape : float
        eta in [0, inf).

    Returns
    -------
    float
        gamma in (0, 1].
    """
    return _gamma_for_mean(check_scalar(mean, "mean", low=1.0, low_open=False),
                           check_scalar(shape, "shape", low=0.0, low_open=False))


@functools.lru_cache(maxsize=64)
def _gamma_for_mean(mean, shape):
    """Memoized bisection of :func:`gamma_for_mean` (the sampler calls it once per draw)."""
    if mean == 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / mean
    lo, hi = 0.0, min(1.0, 2.0 * (shape + 1.0) / mean)
    while truncated_negative_binomial_mean(hi, shape) > mean and hi < 1.0:
        hi = min(1.0, 2.0 * hi)
    while hi - lo > GAMMA_TOLERANCE * hi:
        mid = 0.5 * (lo + hi)
        if truncated_negative_binomial_mean(mid, shape) < mean:
            hi = mid
        else:
            lo = mid
    return lo if lo > 0.0 else hi


def rdp_repeat_and_select(orders, rdp, *, mean, shape, conversion="improved"):
    """RDP curve of releasing the best of K runs (Papernot and Steinke 2022, Theorems 2 and 6).

    Parameters
    ----------
    orders : ndarray of shape (n_orders,)
        Renyi orders, each > 1.
    rdp : ndarray of shape (n_orders,)
        The RDP curve of one run at ``orders``.
    mean : float
        E[K] (>= 1, or > 0 for Poisson).
    shape : float
        eta in [0, inf) (truncated negative binomial), or inf (Poisson).
    conversion : {"improved", "mironov"}, default="improved"
        For Poisson: how the run's (eps_hat, delta_hat)-DP is read off its curve.

    Returns
    -------
    ndarray of shape (n_orders,)
        The selection's RDP at ``orders``, rounded up (module docstring for the formulas).
    """
    mean, shape = check_repeat_and_select(mean, shape)
    orders = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp, dtype=np.float64)
    if math.isinf(shape):
        out = np.empty_like(rdp)
        for i, lam in enumerate(orders):
            eps_hat = math.log1p(1.0 / (lam - 1.0))
            delta_hat = _rdp_to_delta(orders, rdp, eps_hat, conversion)[0]
            out[i] = rdp[i] + mean * delta_hat + math.log(mean) / (lam - 1.0)
        return round_up(out)
    gamma = gamma_for_mean(mean, shape)
    expected = truncated_negative_binomial_mean(gamma, shape)   # >= mean (conservative gamma)
    with np.errstate(invalid="ignore"):
        hat = (1.0 - 1.0 / orders) * rdp + math.log(1.0 / gamma) / orders
    c = (1.0 + shape) * float(np.min(hat))
    out = rdp + math.log(expected) / (orders - 1.0) + c
    # RDP is non-decreasing in the order: the bound of any larger order holds too.
    order = np.argsort(orders)
    tail_min = np.minimum.accumulate(out[order][::-1])[::-1]
    result = np.empty_like(out)
    result[order] = tail_min
    return round_up(result)


def liu_talwar_epsilon(epsilon):
    """Pure epsilon of geometric random stopping over epsilon-DP runs: ``3 epsilon``.

    Liu and Talwar (STOC 2019), Theorem 3.1: after every run, halt with probability gamma;
    release the best candidate seen. Holds for every gamma in (0, 1].

    Parameters
    ----------
    epsilon : float
        Pure epsilon of one run, >= 0.

    Returns
    -------
    float
        ``3 epsilon``, rounded up.
    """
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_open=False, allow_inf=True)
    return float(round_up(3.0 * epsilon))
