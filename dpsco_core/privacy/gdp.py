"""Gaussian differential privacy (mu-GDP) and the analytic Gaussian mechanism.

A mechanism is ``mu``-GDP (Dong, Roth and Su 2019) when distinguishing neighbours is no easier
than distinguishing ``N(0, 1)`` from ``N(mu, 1)``. The Gaussian mechanism with noise multiplier
``s`` is exactly ``(1/s)``-GDP, and ``k`` of them compose to ``sqrt(sum 1/s_i^2)``-GDP.

``mu``-GDP is equivalent to (epsilon, delta(epsilon))-DP for every epsilon >= 0 with

.. math::

    \\delta(\\varepsilon) = \\Phi\\Big(-\\frac{\\varepsilon}{\\mu} + \\frac{\\mu}{2}\\Big)
    - e^{\\varepsilon} \\Phi\\Big(-\\frac{\\varepsilon}{\\mu} - \\frac{\\mu}{2}\\Big)

(Dong, Roth and Su 2019, Corollary 2.13), the same curve as the analytic Gaussian mechanism of
Balle and Wang (2018, Theorem 8). This is exact: use it instead of the classical
``epsilon = mu sqrt(2 log(1.25 / delta))``, which is invalid for large ``mu`` (note 003, §6.3).

Numerics. The difference above cancels catastrophically when both terms are tiny (large
``epsilon / mu``). Writing ``Phi(x) = erfcx(-x / sqrt 2) exp(-x^2 / 2) / 2`` and using
``b^2 - a^2 = 2 epsilon`` for ``a = -epsilon/mu + mu/2`` and ``b = -epsilon/mu - mu/2``, the
factor ``e^epsilon`` cancels exactly:

.. math::

    \\delta = \\tfrac12 e^{-a^2/2} \\big(\\mathrm{erfcx}(-a/\\sqrt2)
    - \\mathrm{erfcx}(-b/\\sqrt2)\\big),

a difference of two moderate numbers, evaluated in log space. For ``a >= 0`` (no tiny terms),
``log_ndtr`` is used directly. The inversions bracket the root and run Brent's method on the
log of delta, then return the end of the bracket that satisfies the target.

Every computed delta is an upper bound on the exact one (a privacy guarantee may be loose, never
optimistic): the measured error bounds of ``log_ndtr`` and ``erfcx`` are added to the terms,
and where the two terms cancel below them (``mu`` -> 0) the first-order bound of
``_log_gdp_delta`` takes over (within 15% of the exact value there, checked against mpmath).
"""

import math

import numpy as np
from scipy import optimize, special

from .._validation import check_delta, check_epsilon, check_positive, check_scalar
from ..exceptions import PrivacyBudgetError

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu"]

_SQRT2 = math.sqrt(2.0)
# Relative upward slack on every delta: covers the few-ulp error of erfcx/log_ndtr (measured
# against mpmath below 1e-13 relative) so that a computed delta is never below the exact one.
_LOG_DELTA_SLACK = 1e-12
# Error bounds of scipy's special functions used below, with a 4x margin over the worst errors
# measured against mpmath at 40 digits (tests/privacy/test_gdp.py re-measures them): log_ndtr
# is within 2.2e-16 absolute for x >= 0 and 4.7e-16 relative for x < 0; erfcx within 8.9e-16
# relative on [0, 40].
_LOG_NDTR_ABS_ERR = 1e-15
_LOG_NDTR_REL_ERR = 2e-15
_ERFCX_REL_ERR = 4e-15
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_gdp_delta(mu, epsilon):
    """An upper bound on ``log delta(epsilon)`` of ``mu``-GDP, for validated ``mu > 0`` and
    ``epsilon >= 0``: never below the exact value, and within a relative ~1e-12 of it except
    where the two terms of delta cancel to below the rounding error of the special functions.

    Where they cancel (``mu`` -> 0 at fixed ``epsilon / mu``), the rounding error of each term
    is carried into the result instead of being lost, and the result is capped by the
    first-order bound (``t = epsilon / mu``, ``a(m) = -t + m/2``, ``b(m) = -t - m/2``)

    .. math::

        \\delta = \\int_0^\\mu \\big(\\phi(a(m)) - t e^{tm} \\Phi(b(m))\\big)\\,dm
        \\le \\mu\\,\\phi(\\min(a, 0)) - \\varepsilon\\,\\Phi(b),

    (the integrand is the derivative in ``m``, using ``e^{tm} phi(b(m)) = phi(a(m))``; then
    ``e^{tm} >= 1``, ``Phi(b(m)) >= Phi(b)`` and ``phi(a(m)) <= phi(min(a, 0))``), which is
    exact to first order in ``mu``.
    """
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_pb = float(special.log_ndtr(b))
    if a >= 0.0:
        log_pa = float(special.log_ndtr(a))
        ratio = epsilon + log_pb - log_pa  # log(e^eps Phi(b) / Phi(a)) <= 0
        # errors of log_pa (absolute) and log_pb (relative), and of the two additions
        err = (_LOG_NDTR_ABS_ERR + _LOG_NDTR_REL_ERR * abs(log_pb)
               + 4e-16 * (epsilon + abs(log_pb) + abs(log_pa)))
        log_delta = log_pa + _LOG_NDTR_ABS_ERR + math.log(-math.expm1(min(ratio, 0.0) - err))
    else:
        ea = float(special.erfcx(-a / _SQRT2))
        eb = float(special.erfcx(-b / _SQRT2))
        upper = (ea - eb) + _ERFCX_REL_ERR * (ea + eb)  # the true difference is >= 0
        if upper <= 0.0:  # both erfcx underflow (a, b -> -inf): delta below every float
            return -math.inf
        log_delta = math.log(0.5) - a * a / 2.0 + math.log(upper)
    # the cap, mu phi(min(a, 0)) (1 - e^r) with r = log(eps Phi(b)) - log(mu phi(min(a, 0)))
    a_neg = min(a, 0.0)
    log_first = math.log(mu) - _LOG_SQRT_2PI - 0.5 * a_neg * a_neg  # inf, not OverflowError
    log_cap = log_first
    if epsilon > 0.0:
        r = math.log(epsilon) + log_pb - log_first
        err = 1e-14 * (1.0 + abs(log_first) + abs(math.log(epsilon)) + abs(log_pb))
        if r - err < 0.0:
            log_cap = log_first + math.log(-math.expm1(r - err))
    return min(log_delta, log_cap) + _LOG_DELTA_SLACK


def _delta_from_log(log_delta):
    """The reported delta: exp rounded up, at most 1 (what every inversion re-checks)."""
    return min(1.0, float(np.nextafter(math.exp(log_delta), 1.0)))


def gdp_delta(mu, epsilon):
    """Exact delta of a ``mu``-GDP mechanism at a given epsilon.

    Parameters
    ----------
    mu : float
        GDP parameter, in (0, inf).
    epsilon : float
        In [0, inf).

    Returns
    -------
    float
        ``delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)``,
        computed in log space and rounded up (relative 1e-12).

    References
    ----------
    Dong, Roth and Su, "Gaussian differential privacy", JRSS-B 2022 (arXiv:1905.02383),
    Corollary 2.13. Balle and Wang, "Improving the Gaussian mechanism for differential privacy",
    ICML 2018, Theorem 8.
    """
    mu = check_positive(mu, "mu")
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_open=False)
    return _delta_from_log(_log_gdp_delta(mu, epsilon))


def _bracket_up(f, start):
    """Smallest ``start * 2^k`` where ``f`` is <= 0 (``f`` decreasing), with the previous point;
    None if there is none below the float64 range.

    The doublings go on to the top of the range: gdp_epsilon's root is about mu^2 / 2, which
    ``mu * 2^200`` does not reach for mu >= 2^200 (gdp_epsilon(2.0**200, 0.5) raised "no
    bracket found")."""
    lo, hi = 0.0, start
    while math.isfinite(hi):
        if f(hi) <= 0.0:
            return lo, hi
        lo, hi = hi, 2.0 * hi
    return None


def gdp_epsilon(mu, delta):
    """Smallest epsilon for which a ``mu``-GDP mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    mu : float
        GDP parameter, in (0, inf).
    delta : float
        In (0, 1).

    Returns
    -------
    float
        Epsilon with ``gdp_delta(mu, epsilon) <= delta``, within a relative 1e-12 of the exact
        root (0 if ``delta >= 2 Phi(mu/2) - 1``, the delta at epsilon 0).

    Raises
    ------
    ValueError
        If ``mu`` or ``delta`` is out of range, or ``mu`` is so large (above about 1.9e154)
        that epsilon, about ``mu^2 / 2``, exceeds the float64 range.

    References
    ----------
    Dong, Roth and Su 2019, Corollary 2.13 (inverted by Brent's method).
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    log_target = math.log(delta)

    def gap(eps):  # decreasing in eps
        return _log_gdp_delta(mu, eps) - log_target

    if gap(0.0) <= 0.0:
        return 0.0
    bracket = _bracket_up(gap, max(mu, 1e-3))
    if bracket is None:
        raise _epsilon_out_of_range(mu, delta)
    lo, hi = bracket
    try:
        root = optimize.brentq(gap, lo, hi, xtol=1e-300, rtol=1e-13, maxiter=200)
    except RuntimeError:  # no convergence (extreme mu): the bracket's upper end is valid
        root = hi
    # Keep the conservative side: delta at the returned epsilon must not exceed the target.
    # Steps double, so the walk ends quickly even where the bound above switches formula.
    step = 1e-13
    while _delta_from_log(_log_gdp_delta(mu, root)) > delta:
        root = max(root * (1.0 + step), float(np.nextafter(root, math.inf)))
        step *= 2.0
    if not math.isfinite(root):
        raise _epsilon_out_of_range(mu, delta)
    return root


def _epsilon_out_of_range(mu, delta):
    return ValueError(
        f"mu={mu!r} is too large: the epsilon of mu-GDP at delta={delta!r} is about mu^2 / 2, "
        "beyond the float64 range (1.8e308). Such a mechanism protects nothing; use a "
        "smaller mu (more noise).")


def gdp_mu(epsilon, delta):
    """Largest ``mu`` such that ``mu``-GDP implies (epsilon, delta)-DP (exact conversion).

    Parameters
    ----------
    epsilon : float
        In (0, inf).
    delta : float
        In (0, 1).

    Returns
    -------
    float
        ``mu`` with ``gdp_delta(mu, epsilon) <= delta``, within a relative 1e-12 of the exact
        root: the returned value is never above the exact answer by more than round-off, and the
        re-check guarantees the delta it implies is at most ``delta``.

    Notes
    -----
    Regression values (note 003, oracle 19): at ``delta = 1e-5``, ``epsilon = 1, 4, 8`` give
    ``mu = 0.2681, 0.9249, 1.6660``; at ``delta = 1e-8``, ``epsilon = 1`` gives ``0.1961``.

    References
    ----------
    Dong, Roth and Su 2019, Corollary 2.13; Balle and Wang 2018, Theorem 8 (the analytic
    Gaussian mechanism solves the same equation).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return _gdp_mu(epsilon, delta)


def _gdp_mu(epsilon, delta):
    log_target = math.log(delta)

    def gap(mu):  # increasing in mu
        return log_target - _log_gdp_delta(mu, epsilon)  # > 0 while mu is private enough

    # Find hi with gap(hi) < 0 (too little privacy) and lo with gap(lo) >= 0.
    hi = 1.0
    while gap(hi) >= 0.0:
        hi *= 2.0
        if hi > 1e300:  # pragma: no cover
            raise PrivacyBudgetError(f"no mu found for epsilon={epsilon!r}, delta={delta!r}.")
    lo = hi / 2.0
    while gap(lo) < 0.0:
        lo /= 2.0
        if lo < 1e-300:
            raise PrivacyBudgetError(
                f"(epsilon={epsilon!r}, delta={delta!r}) needs mu below 1e-300.")
    try:
        root = optimize.brentq(gap, lo, hi, xtol=1e-300, rtol=1e-13, maxiter=200)
    except RuntimeError:  # no convergence (extreme mu): the bracket's upper end is valid
        root = hi
    step = 1e-13
    while _delta_from_log(_log_gdp_delta(root, epsilon)) > delta:  # conservative side: smaller mu, more noise (steps double)
        root = min(root * (1.0 - step), float(np.nextafter(root, 0.0)))
        step = min(2.0 * step, 0.5)
    return root
