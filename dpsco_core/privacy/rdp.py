"""Renyi-DP curves of the basic mechanisms, vectorised over the Renyi orders.

Each function returns ``eps(alpha)`` for every ``alpha`` in ``orders``: the mechanism is
``(alpha, eps(alpha))``-RDP (Mironov 2017) for each order at once. Noise multipliers are relative
to the sensitivity (see :mod:`dpsco_core.privacy.events`). Every curve is an upper bound: the
curves are inflated by a relative ``RDP_SLACK`` (and the log-space sums of the sampled Gaussian
by an absolute ``RDP_ABS_SLACK``) that covers their floating-point error, and negative round-off
is clamped to zero (a Renyi divergence is non-negative).

The Poisson-subsampled Gaussian follows Mironov, Talwar and Zhang (2019) and matches
dp-accounting's ``_compute_rdp_poisson_subsampled_gaussian`` term for term; it is organised as
:class:`SampledGaussianRdp`, whose ``log A_alpha`` is the compiled kernel
``dpsco_core._kernels._rdp`` (NumPy twin ``dpsco_core.reference.rdp``).
"""

import functools
import math
import threading

import numpy as np

from .._kernels import _rdp
from .._validation import check_positive, check_scalar
from ._checks import check_orders, check_sample_rate, immutable_orders

__all__ = [
    "RDP_SLACK",
    "RDP_ABS_SLACK",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_pure",
    "rdp_zcdp",
    "rdp_sampled_gaussian",
    "SampledGaussianRdp",
]

#: Relative upward slack applied to every computed RDP value. The log-space sums below have a
#: relative error of a few hundred ulps at most (< 1e-13); 1e-12 covers it with margin and is far
#: below any digit anyone reports.
RDP_SLACK = 1e-12


#: Absolute upward slack of the sampled-Gaussian curve: ``log A_alpha`` is a difference of
#: terms of size ``alpha |log(1 - q)|``, computed to a few ulps of that size; 1e-15 covers it
#: wherever the relative slack does not (tiny per-step RDP), and changes no reported digit.
RDP_ABS_SLACK = 1e-15


def _finish(rdp, abs_slack=0.0):
    """Clamp negative round-off to 0 and inflate the curve: its upward rounding."""
    rdp = np.maximum(rdp, 0.0)
    return rdp * (1.0 + RDP_SLACK) + abs_slack


def rdp_gaussian(noise_multiplier, orders):
    """RDP of the Gaussian mechanism: ``eps(alpha) = alpha / (2 noise_multiplier^2)``.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the l2 sensitivity, in (0, inf).
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf).

    Returns
    -------
    ndarray of shape (n_orders,)
        The RDP curve.

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017, Proposition 7.
    """
    s = check_positive(noise_multiplier, "noise_multiplier")
    orders = check_orders(orders)
    # compiled: bitwise _rdp_gaussian_numpy (one loop instead of four NumPy calls)
    return _rdp.gaussian_curve(orders, float(s))


def _rdp_gaussian_numpy(s, orders):
    """:func:`rdp_gaussian` in NumPy on validated arguments (the compiled loop's twin)."""
    return _finish(orders / (2.0 * s * s))


def rdp_laplace(noise_multiplier, orders):
    """RDP of the Laplace mechanism with ``epsilon = 1 / noise_multiplier``.

    .. math::

        \\varepsilon(\\alpha) = \\varepsilon + \\frac{1}{\\alpha - 1} \\log\\Big(1 +
        \\frac{(\\alpha - 1)(e^{(1 - 2\\alpha)\\varepsilon} - 1)}{2\\alpha - 1}\\Big),

    which is exact (tight) for the Laplace mechanism and tends to ``epsilon`` as
    ``alpha -> inf``. For ``alpha < 1.1`` the logarithm is expanded in its Taylor series
    (as dp-accounting does) because ``log1p(x) / (alpha - 1)`` loses digits there.

    Parameters
    ----------
    noise_multiplier : float
        Laplace scale divided by the l1 sensitivity, in (0, inf).
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf).

    Returns
    -------
    ndarray of shape (n_orders,)

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017, Proposition 6.
    """
    b = check_positive(noise_multiplier, "noise_multiplier")
    a = check_orders(orders)
    eps = 1.0 / b
    c = np.expm1(eps * (1.0 - 2.0 * a)) / (2.0 * a - 1.0)
    out = np.empty_like(a)
    small = a < 1.1
    big = ~small
    out[big] = eps + np.log1p((a[big] - 1.0) * c[big]) / (a[big] - 1.0)
    if np.any(small):
        # log(1 + c x) / x = c * sum_{k>=1} (-c x)^(k-1) / k with 0 <= -c x <= 0.1.
        v = -c[small] * (a[small] - 1.0)
        k = np.arange(1, 100, dtype=np.float64)
        out[small] = eps + c[small] * np.sum(v[:, None] ** (k - 1.0) / k, axis=1)
    # Pure DP caps every order at epsilon (Mironov 2017, Prop. 6 limit); never report more.
    return _finish(np.minimum(out, eps))


def rdp_pure(epsilon, orders):
    """RDP implied by pure ``epsilon``-DP: ``eps(alpha) = min(epsilon, alpha epsilon^2 / 2)``.

    Parameters
    ----------
    epsilon : float
        The pure DP parameter, in (0, inf).
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf).

    Returns
    -------
    ndarray of shape (n_orders,)

    References
    ----------
    Bun and Steinke, "Concentrated differential privacy", TCC 2016, Proposition 3.3
    (``epsilon``-DP implies ``epsilon^2 / 2``-zCDP), and Mironov 2017, Proposition 3 limit
    (``epsilon``-DP is ``(alpha, epsilon)``-RDP for every order).
    """
    eps = check_scalar(epsilon, "epsilon", low=0.0, low_open=False)
    a = check_orders(orders)
    return _finish(np.minimum(eps, a * eps * eps / 2.0))


def rdp_zcdp(rho, orders):
    """RDP of a ``rho``-zCDP mechanism: ``eps(alpha) = rho alpha`` (the definition of zCDP).

    Parameters
    ----------
    rho : float
        The zCDP parameter, in [0, inf).
    orders : array_like of shape (n_orders,)

    Returns
    -------
    ndarray of shape (n_orders,)

    References
    ----------
    Bun and Steinke, "Concentrated differential privacy", TCC 2016, Definition 1.1.
    """
    rho = check_scalar(rho, "rho", low=0.0, low_open=False)
    a = check_orders(orders)
    return _finish(rho * a)


class SampledGaussianRdp:
    """RDP curve of the Poisson-subsampled Gaussian mechanism at a fixed sample rate and grid.

    Calling the object with a noise multiplier returns the per-step curve (computed by the
    compiled kernel ``dpsco_core._kernels._rdp``: nothing to precompute).

    Parameters
    ----------
    sample_rate : float
        Poisson sampling probability ``q``, in (0, 1].
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf); integer and fractional orders may be mixed.

    Notes
    -----
    The mechanism is ``M(D) = sum_{x in S} f(x) + N(0, sigma^2 I)`` where ``S`` keeps each record
    independently with probability ``q`` and ``||f(x)||_2 <= 1`` (``sigma`` is the noise
    multiplier). Under the add-or-remove-one relation its RDP of order ``alpha`` is
    ``log(A_alpha) / (alpha - 1)`` where, for integer ``alpha`` (Mironov, Talwar and Zhang 2019,
    Section 3.2),

    .. math::

        A_\\alpha = \\sum_{k=0}^{\\alpha} \\binom{\\alpha}{k} (1-q)^{\\alpha-k} q^k
        \\exp\\Big(\\frac{k^2 - k}{2 \\sigma^2}\\Big),

    and, for fractional ``alpha``, the two series of Section 3.3 split at
    ``z_0 = sigma^2 log(1/q - 1) + 1/2``:

    .. math::

        A_\\alpha = \\sum_{i \\ge 0} \\Big|\\binom{\\alpha}{i}\\Big| \\Big[
        q^i (1-q)^{\\alpha-i} e^{\\frac{i^2-i}{2\\sigma^2}}
        \\Phi\\big(\\tfrac{z_0 - i}{\\sigma}\\big)
        + q^{\\alpha-i} (1-q)^{i} e^{\\frac{j^2-j}{2\\sigma^2}}
        \\Phi\\big(\\tfrac{j - z_0}{\\sigma}\\big)
        \\Big], \\quad j = \\alpha - i.

    Everything is evaluated in log space (``gammaln`` binomials, ``log_ndtr``, log-sum-exp), in
    the compiled kernel ``dpsco_core._kernels._rdp`` (NumPy twin: ``dpsco_core.reference.rdp``).
    Taking absolute values of the binomial coefficients (which alternate in sign for
    ``i > alpha``) can only increase the sum, so the result is an upper bound, as in
    dp-accounting. The series is summed term by term up to and including the first term where
    dp-accounting's stopping rule holds (both series decreasing and the term below
    ``exp(-30)`` times the total). An order whose series has not converged after 1000 terms
    gets RDP ``inf`` (it is then never the optimal order).

    At ``q = 1`` the curve is that of the Gaussian mechanism, ``alpha / (2 sigma^2)``.

    References
    ----------
    Mironov, Talwar and Zhang, "Renyi differential privacy of the sampled Gaussian mechanism",
    arXiv:1908.10530, 2019, Sections 3.2 and 3.3.
    """

    def __init__(self, sample_rate, orders):
        self.sample_rate = check_sample_rate(sample_rate)
        self.orders = np.ascontiguousarray(check_orders(orders), dtype=np.float64)
        self._is_int = self.orders == np.floor(self.orders)

    def __call__(self, noise_multiplier):
        """Return the per-step RDP curve for ``noise_multiplier`` (in (0, inf))."""
        sigma = check_positive(noise_multiplier, "noise_multiplier")
        return self._evaluate(sigma)

    def _evaluate(self, sigma, integer_only=False):
        """The curve for an already validated ``sigma`` (the calibration search calls this).

        ``log A_alpha`` comes from the compiled kernel ``dpsco_core._kernels._rdp`` (issue 18:
        about 0.3 ms for dp-accounting's 156 orders, against 6 ms for its NumPy twin
        ``dpsco_core.reference.rdp``). ``integer_only=True`` skips the fractional-order series
        and returns ``inf`` at those orders (no bound there, so never the optimum); every
        integer order gets bitwise the value of the full evaluation (orders are independent).
        """
        a = self.orders
        if self.sample_rate == 1.0:
            return _finish(a / (2.0 * sigma * sigma))
        if integer_only:
            log_a = np.full_like(a, np.inf)
            log_a[self._is_int] = _rdp.log_a_sampled_gaussian(
                self.sample_rate, np.ascontiguousarray(a[self._is_int]), sigma)
        else:
            log_a = _rdp.log_a_sampled_gaussian(self.sample_rate, a, sigma)
        return _finish(log_a / (a - 1.0), RDP_ABS_SLACK)

    @property
    def has_fractional_orders(self):
        """True when the grid mixes fractional orders (their series is the costly part)."""
        return (self.sample_rate != 1.0 and not bool(self._is_int.all())
                and bool(self._is_int.any()))


def rdp_sampled_gaussian(sample_rate, noise_multiplier, orders):
    """RDP of one step of the Poisson-subsampled Gaussian mechanism (add-or-remove-one).

    Parameters
    ----------
    sample_rate : float
        Poisson sampling probability ``q``, in (0, 1].
    noise_multiplier : float
        Noise standard deviation divided by the l2 sensitivity, in (0, inf).
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf), integer or fractional.

    Returns
    -------
    ndarray of shape (n_orders,)
        The per-step RDP curve; multiply by the number of steps for their composition.

    See Also
    --------
    SampledGaussianRdp : the formula, and a reusable evaluator for many noise multipliers.

    Notes
    -----
    Memoized on ``(sample_rate, noise_multiplier, orders)``: the curve is a pure function of
    them, and a hyperparameter grid accounts for the same (q, sigma) once per run (the
    fractional-order series costs ~20 ms). Each call returns a fresh array.

    References
    ----------
    Mironov, Talwar and Zhang, "Renyi differential privacy of the sampled Gaussian mechanism",
    arXiv:1908.10530, 2019, Sections 3.2 and 3.3.
    """
    q = check_sample_rate(sample_rate)
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    orders = check_orders(orders)
    return _sampled_gaussian_curve(q, sigma, tuple(orders.tolist())).copy()


@functools.lru_cache(maxsize=8)   # up to ~5 MB each when a tiny sigma extends the series
def _sampled_gaussian_evaluator(sample_rate, orders):
    """The :class:`SampledGaussianRdp` of validated, hashable arguments, built once (its
    validated order array) and shared by the calibration search and the accountant's report of
    the same run. The compiled evaluation keeps no state, so the lock of
    :func:`_shared_evaluate` is only kept for callers that extend it."""
    return SampledGaussianRdp(sample_rate, _orders_array(orders))


@functools.lru_cache(maxsize=8)
def _orders_array(orders):
    """The validated, immutable array of a hashable order grid, built once per grid (a new
    sample rate then builds its evaluator without validating and copying the grid again)."""
    return immutable_orders(np.asarray(orders))


_SHARED_LOCK = threading.Lock()


def _shared_evaluate(sample_rate, orders, sigma, integer_only=False):
    """``SampledGaussianRdp(sample_rate, orders)._evaluate(sigma, integer_only)`` on the shared
    evaluator (validated, hashable arguments); bitwise the value of a fresh evaluator."""
    with _SHARED_LOCK:
        return _sampled_gaussian_evaluator(sample_rate, orders)._evaluate(sigma, integer_only)


@functools.lru_cache(maxsize=256)
def _sampled_gaussian_curve(sample_rate, noise_multiplier, orders):
    """:func:`rdp_sampled_gaussian` on validated, hashable arguments (read-only result)."""
    curve = _shared_evaluate(sample_rate, orders, noise_multiplier)
    curve.setflags(write=False)
    return curve
