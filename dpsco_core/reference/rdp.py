"""NumPy twin of ``dpsco_core._kernels._rdp``: ``log A_alpha`` of the Poisson-subsampled
Gaussian mechanism (Mironov, Talwar and Zhang 2019, Sections 3.2 and 3.3), vectorised over the
orders (the code of ``SampledGaussianRdp._evaluate`` before the compiled kernel, issue 18).

The fractional-order series is bitwise the kernel's (same terms, same order of ``logaddexp``);
the integer orders agree to a few ulps (pairwise sums and numpy's ``exp`` here, sequential sums
there), which ``dpsco_core.privacy.rdp.RDP_SLACK`` covers.
"""

import math

import numpy as np
from scipy import special

__all__ = ["log_a_sampled_gaussian", "order_epsilon"]

_MAX_TERMS_FRAC = 1000
_FRAC_BLOCK = 32


def _row_logsumexp(m):
    """``log(sum(exp(m), axis=1))``, the largest term taken out and the rest through log1p."""
    rows = np.arange(m.shape[0])
    k = m.argmax(axis=1)
    mx = m[rows, k]
    with np.errstate(under="ignore"):
        e = np.exp(m - mx[:, None])
    e[rows, k] = 0.0
    return np.log1p(e.sum(axis=1)) + mx


def _log_a_int(alpha, log_q, log_1mq, inv2s2):
    alpha = np.asarray(alpha, dtype=np.float64)[:, None]
    k = np.arange(int(alpha.max()) + 1, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        log_coef = (special.gammaln(alpha + 1.0) - special.gammaln(k + 1.0)
                    - special.gammaln(alpha - k + 1.0) + k * log_q + (alpha - k) * log_1mq)
    log_coef = np.where(k <= alpha, log_coef, -np.inf)
    return _row_logsumexp(log_coef + (k * k - k) * inv2s2)


def _log_a_frac(alpha, log_q, log_1mq, sigma):
    """The two series of Section 3.3, summed up to and including the first term where the
    stopping rule holds (both series decreasing, the term below exp(-30) times the sum),
    computed in blocks of 32, 64, ... terms; 1000 terms without convergence give inf."""
    alpha = np.asarray(alpha, dtype=np.float64)
    out = np.full(alpha.size, np.inf)
    pending = np.arange(alpha.size)
    inv2s2 = 1.0 / (2.0 * sigma * sigma)
    z0 = sigma * sigma * (log_1mq - log_q) + 0.5
    stop = _FRAC_BLOCK
    while pending.size:
        a = alpha[pending][:, None]
        i = np.arange(stop, dtype=np.float64)[None, :]
        j = a - i
        log_coef = special.gammaln(a + 1.0) - special.gammaln(i + 1.0) - special.gammaln(j + 1.0)
        s0 = (log_coef + i * log_q + j * log_1mq) + (i * i - i) * inv2s2 + special.log_ndtr(
            (z0 - i) / sigma)
        s1 = (log_coef + j * log_q + i * log_1mq) + (j * j - j) * inv2s2 + special.log_ndtr(
            (j - z0) / sigma)
        total = np.logaddexp.accumulate(np.logaddexp(s0, s1), axis=1)
        ok = ((s0[:, 1:] < s0[:, :-1]) & (s1[:, 1:] < s1[:, :-1])
              & (np.maximum(s0[:, 1:], s1[:, 1:]) < total[:, 1:] - 30.0))
        done = np.any(ok, axis=1)
        first = np.argmax(ok, axis=1) + 1          # the first term where the rule holds
        out[pending[done]] = total[np.flatnonzero(done), first[done]]
        pending = pending[~done]
        if stop >= _MAX_TERMS_FRAC:
            break
        stop = min(2 * stop, _MAX_TERMS_FRAC)
    return out


def log_a_sampled_gaussian(q, orders, sigma):
    """``log A_alpha`` at every order (``q`` in (0, 1), ``sigma`` > 0); the kernel's twin."""
    orders = np.asarray(orders, dtype=np.float64)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    out = np.empty_like(orders)
    is_int = orders == np.floor(orders)
    if is_int.any():
        out[is_int] = _log_a_int(orders[is_int], log_q, log_1mq, 1.0 / (2.0 * sigma * sigma))
    if (~is_int).any():
        out[~is_int] = _log_a_frac(orders[~is_int], log_q, log_1mq, sigma)
    return out


def order_epsilon(q, alpha, sigma, steps, delta, improved):
    """Epsilon of ``steps`` compositions at one order (the kernel's ``order_epsilon``)."""
    log_a = log_a_sampled_gaussian(q, [alpha], sigma)[0]
    r = max(log_a / (alpha - 1.0), 0.0)
    r = steps * (r * (1.0 + 1e-12) + 1e-15)
    log_delta = math.log(delta)
    if improved and alpha > 1.01:
        eps = r + math.log1p(-1.0 / alpha) - (log_delta + math.log(alpha)) / (alpha - 1.0)
        if delta * delta + math.expm1(-r) > 0.0:
            eps = 0.0
    else:
        eps = r - log_delta / (alpha - 1.0)
    return math.inf if math.isnan(eps) else eps
