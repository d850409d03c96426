"""Renyi-DP curves of the basic mechanisms, vectorised over the Renyi orders.

Each function returns ``eps(alpha)`` for every ``alpha`` in ``orders``: the mechanism is
``(alpha, eps(alpha))``-RDP (Mironov 2017) for each order at once. Noise multipliers are relative
to the sensitivity (see :mod:`dpsco_core.privacy.events`). Every curve is an upper bound: the
curves are inflated by a relative ``RDP_SLACK`` (and the log-space sums of the sampled Gaussian
by an absolute ``RDP_ABS_SLACK``) that covers their floating-point error, and negative round-off
is clamped to zero (a Renyi divergence is non-negative).

The Poisson-subsampled Gaussian follows Mironov, Talwar and Zhang (2019) and matches
dp-accounting's ``_compute_rdp_poisson_subsampled_gaussian`` term for term; it is organised as
:class:`SampledGaussianRdp`, which precomputes everything that does not depend on the noise
multiplier, so a calibration search pays only for the noise-dependent part.
"""

import functools
import math
import threading

import numpy as np
from scipy import special

from .._validation import check_positive, check_scalar
from ._checks import check_orders, check_sample_rate

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

# dp-accounting gives up on the fractional-order series after 1000 terms (and excludes the
# order by returning inf); we stop at the same place.
_MAX_TERMS_FRAC = 1000
_FRAC_BLOCK = 32


#: Absolute upward slack of the sampled-Gaussian curve: ``log A_alpha`` is a difference of
#: terms of size ``alpha |log(1 - q)|``, computed to a few ulps of that size; 1e-15 covers it
#: wherever the relative slack does not (tiny per-step RDP), and changes no reported digit.
RDP_ABS_SLACK = 1e-15


def _finish(rdp, abs_slack=0.0):
    """Clamp negative round-off to 0 and inflate the curve: its upward rounding."""
    rdp = np.maximum(rdp, 0.0)
    return rdp * (1.0 + RDP_SLACK) + abs_slack


def _row_logsumexp(m):
    """``log(sum(exp(m), axis=1))`` for a 2-d array whose rows hold a finite entry.

    The largest term is taken out and the rest summed through ``log1p``: ``log A_alpha`` is
    often tiny (``A_alpha = 1 + O(q^2)``), and ``log(1 + rest)`` would lose its digits.
    """
    rows = np.arange(m.shape[0])
    k = m.argmax(axis=1)
    mx = m[rows, k]
    with np.errstate(under="ignore"):
        e = np.exp(m - mx[:, None])
    e[rows, k] = 0.0
    return np.log1p(e.sum(axis=1)) + mx


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

    Calling the object with a noise multiplier returns the per-step curve. Everything that does
    not depend on the noise multiplier (log binomial coefficients and the powers of ``q`` and
    ``1 - q``) is computed once here, so that calibration, which evaluates the curve for many
    noise multipliers, costs one vectorised pass per evaluation and no loop over orders.

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

    Everything is evaluated in log space (``gammaln`` binomials, ``log_ndtr``, log-sum-exp).
    Taking absolute values of the binomial coefficients (which alternate in sign for
    ``i > alpha``) can only increase the sum, so the result is an upper bound, as in
    dp-accounting. The series is summed in blocks of terms until dp-accounting's stopping rule
    holds (both series decreasing and the last terms below ``exp(-30)`` times the total); every
    computed term is kept, so our sum is never below dp-accounting's. An order whose series has
    not converged after 1000 terms gets RDP ``inf`` (it is then never the optimal order).

    At ``q = 1`` the curve is that of the Gaussian mechanism, ``alpha / (2 sigma^2)``.

    References
    ----------
    Mironov, Talwar and Zhang, "Renyi differential privacy of the sampled Gaussian mechanism",
    arXiv:1908.10530, 2019, Sections 3.2 and 3.3.
    """

    def __init__(self, sample_rate, orders):
        self.sample_rate = check_sample_rate(sample_rate)
        self.orders = check_orders(orders)
        q = self.sample_rate
        a = self.orders
        self._is_int = a == np.floor(a)
        if q == 1.0:
            return
        log_q, log_1mq = math.log(q), math.log1p(-q)
        self._log_odds = math.log1p(-q) - math.log(q)  # log(1/q - 1), exact for small q

        # Integer orders, grouped by size so that the few very large orders (512, 1024) do not
        # pad the matrix of the many small ones: one group up to order 64, then one per octave.
        self._int_groups = []
        int_idx = np.flatnonzero(self._is_int)
        if int_idx.size:
            int_idx = int_idx[np.argsort(a[int_idx], kind="stable")]
            bucket = np.maximum(np.ceil(np.log2(a[int_idx])), 6.0).astype(int)
            for bkt in np.unique(bucket):
                idx = int_idx[bucket == bkt]
                alpha = a[idx][:, None]
                k = np.arange(int(a[idx].max()) + 1, dtype=np.float64)[None, :]
                with np.errstate(invalid="ignore", divide="ignore"):
                    log_coef = (special.gammaln(alpha + 1.0) - special.gammaln(k + 1.0)
                                - special.gammaln(alpha - k + 1.0)
                                + k * log_q + (alpha - k) * log_1mq)
                log_coef = np.where(k <= alpha, log_coef, -np.inf)
                self._int_groups.append((idx, log_coef, (k * k - k)[0]))

        self._frac_idx = np.flatnonzero(~self._is_int)
        self._frac_alpha = a[self._frac_idx]
        self._log_q, self._log_1mq = log_q, log_1mq
        self._frac_cache = None
        self._frac_terms = 0
        if self._frac_idx.size:
            self._extend_frac(_FRAC_BLOCK)

    def _extend_frac(self, n_terms):
        """Precompute the noise-free parts of the first ``n_terms`` terms of the series."""
        n_terms = min(n_terms, _MAX_TERMS_FRAC)
        alpha = self._frac_alpha[:, None]
        i = np.arange(n_terms, dtype=np.float64)[None, :]
        j = alpha - i
        log_coef = (special.gammaln(alpha + 1.0) - special.gammaln(i + 1.0)
                    - special.gammaln(j + 1.0))
        log_t0 = log_coef + i * self._log_q + j * self._log_1mq
        log_t1 = log_coef + j * self._log_q + i * self._log_1mq
        self._frac_cache = (i, j, log_t0, log_t1, i * i - i, j * j - j)
        self._frac_terms = n_terms

    def _frac_terms_for(self, sigma, rows, stop):
        """Log-terms ``(s0, s1)`` of the series, rows ``rows``, columns ``0..stop-1``."""
        i, j, log_t0, log_t1, ii, jj = self._frac_cache
        inv2s2 = 1.0 / (2.0 * sigma * sigma)
        z0 = sigma * sigma * self._log_odds + 0.5
        s0 = (log_t0[rows, :stop] + ii[:, :stop] * inv2s2
              + special.log_ndtr((z0 - i[:, :stop]) / sigma))
        s1 = (log_t1[rows, :stop] + jj[rows, :stop] * inv2s2
              + special.log_ndtr((j[rows, :stop] - z0) / sigma))
        return s0, s1

    def _log_a_frac(self, sigma):
        n = self._frac_idx.size
        out = np.full(n, np.inf)
        pending = np.arange(n)
        stop = min(_FRAC_BLOCK, _MAX_TERMS_FRAC)
        while pending.size:
            if stop > self._frac_terms:
                self._extend_frac(stop)
            s0, s1 = self._frac_terms_for(sigma, pending, stop)
            both = np.logaddexp(s0, s1)
            total = np.logaddexp.accumulate(both, axis=1)
            # dp-accounting's stopping rule, checked at every term at once.
            ok = ((s0[:, 1:] < s0[:, :-1]) & (s1[:, 1:] < s1[:, :-1])
                  & (np.maximum(s0[:, 1:], s1[:, 1:]) < total[:, 1:] - 30.0))
            done = np.any(ok, axis=1)
            out[pending[done]] = total[done, -1]
            pending = pending[~done]
            if stop >= _MAX_TERMS_FRAC:
                break  # unconverged orders keep inf
            stop = min(2 * stop, _MAX_TERMS_FRAC)
        return out

    def __call__(self, noise_multiplier):
        """Return the per-step RDP curve for ``noise_multiplier`` (in (0, inf))."""
        sigma = check_positive(noise_multiplier, "noise_multiplier")
        return self._evaluate(sigma)

    def _evaluate(self, sigma, integer_only=False):
        """The curve for an already validated ``sigma`` (the calibration search calls this).

        ``integer_only=True`` skips the fractional-order series and returns ``inf`` at those
        orders (no bound there, so never the optimum); every integer order gets bitwise the
        value of the full evaluation (each order is its own row of the same arrays).
        """
        a = self.orders
        if self.sample_rate == 1.0:
            return _finish(a / (2.0 * sigma * sigma))
        log_a = np.empty_like(a)
        inv2s2 = 1.0 / (2.0 * sigma * sigma)
        for idx, log_coef, kk in self._int_groups:  # a handful of size buckets, not orders
            log_a[idx] = _row_logsumexp(log_coef + kk * inv2s2)
        if self._frac_idx.size:
            log_a[self._frac_idx] = np.inf if integer_only else self._log_a_frac(sigma)
        return _finish(log_a / (a - 1.0), RDP_ABS_SLACK)

    @property
    def has_fractional_orders(self):
        """True when the grid mixes fractional orders (their series is the costly part)."""
        return self.sample_rate != 1.0 and bool(self._frac_idx.size) and bool(self._is_int.any())


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
    """The :class:`SampledGaussianRdp` of validated, hashable arguments, built once: the
    calibration search and the accountant's report of the same run share its precomputation
    (its lazily extended series tables hold the same values however far they were extended).
    Use it only through :func:`_shared_evaluate`, which serialises the lazy extension."""
    return SampledGaussianRdp(sample_rate, np.asarray(orders))


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
