# cython: language_level=3
"""Compiled RDP curve of the Poisson-subsampled Gaussian mechanism, and its per-order root.

What it computes: ``log A_alpha`` of Mironov, Talwar and Zhang (2019), Sections 3.2 (integer
orders) and 3.3 (fractional orders), term for term as the NumPy twin
``dpsco_core.reference.rdp.log_a_sampled_gaussian`` (the vectorised code that was
``SampledGaussianRdp._evaluate``) and dp-accounting's ``_compute_log_a``:

* integer ``alpha``: ``log sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 s^2))``,
  the largest term taken out and the rest summed through ``log1p`` (``A_alpha = 1 + O(q^2)``);
* fractional ``alpha``: the two series, summed by ``logaddexp`` in term order up to and
  including the first term where the stopping rule holds (both series decreasing and the
  term below ``exp(-30)`` times the sum); 1000 terms without convergence give ``inf``.

The fractional series is bitwise the twin's: the same IEEE operations in the same order,
``gammaln`` and ``log_ndtr`` from ``scipy.special.cython_special`` (the ufuncs' own code) and
numpy's ``logaddexp`` formula with libm's ``exp``/``log1p``. The integer orders sum their terms
sequentially (the twin sums pairwise with numpy's vectorised ``exp``): equal to a few ulps,
tested at 1e-13 relative, which ``RDP_SLACK`` (1e-12) covers.

``order_root`` solves one order's epsilon for the noise multiplier: ``steps`` compositions at
order ``alpha``, converted to (epsilon, delta) with the library's conversion formula, are
non-increasing in ``s``, so the smallest ``s`` meeting ``target`` on a grid of orders is the
smallest of the orders' roots (issue 18: the calibration solves a few orders' roots, each a
scalar problem, instead of evaluating the whole grid at every step of a root finder).
``smallest_root`` skips orders by a floor of their epsilon (``order_epsilon_floor``) and solves
only the candidates that can win, for bitwise the same answer. ``epsilons`` (the RDP -> DP
conversion loop, twin ``conversions._epsilons_numpy``) and ``gaussian_curve`` (twin
``rdp._rdp_gaussian_numpy``) repeat NumPy's elementwise IEEE operations in one loop, bitwise.
No threads: a curve is microseconds of work.
"""

cimport cython
from libc.stdlib cimport malloc, free
from libc.math cimport exp, log, log1p, expm1, fabs, INFINITY, NAN, isnan, isinf
from scipy.special.cython_special cimport gammaln, log_ndtr

import numpy as np

cdef double LOGE2 = 0.693147180559945309417232121458176568
cdef double RDP_SLACK = 1e-12
cdef double RDP_ABS_SLACK = 1e-15
cdef double MIN_ORDER_IMPROVED = 1.01
cdef int MAX_TERMS_FRAC = 1000


cdef inline double _logaddexp(double x, double y) noexcept nogil:
    # numpy's npy_logaddexp, operation for operation
    cdef double tmp
    if x == y:
        return x + LOGE2
    tmp = x - y
    if tmp > 0:
        return x + log1p(exp(-tmp))
    elif tmp <= 0:
        return y + log1p(exp(tmp))
    return tmp


# gammaln(k + 1) for k = 0..LF_SIZE - 1: the same values as calling gammaln per term
cdef enum:
    LF_SIZE = 1025
cdef double LOG_FACT[LF_SIZE]
cdef int _k
for _k in range(LF_SIZE):
    LOG_FACT[_k] = gammaln(<double>_k + 1.0)


cdef inline double _log_fact(int k) noexcept nogil:
    if k < LF_SIZE:
        return LOG_FACT[k]
    return gammaln(<double>k + 1.0)


@cython.cdivision(True)
cdef inline double _int_term(int a, int k, double alpha, double g_alpha, double log_q,
                             double log_1mq, double inv2s2) noexcept nogil:
    """Term ``k`` of an integer order's sum, in log space. One expression for every caller
    (the sum and the floor of ``_order_epsilon_floor``), so a term is the same double in both
    (``-ffp-contract=off``: no contraction differs between inlined copies)."""
    cdef double kf = <double>k
    return (g_alpha - _log_fact(k) - _log_fact(a - k) + kf * log_q
            + (alpha - kf) * log_1mq) + (kf * kf - kf) * inv2s2


@cython.cdivision(True)
cdef double _log_a_int(double alpha, double log_q, double log_1mq, double inv2s2) noexcept nogil:
    cdef int a = <int>alpha, k, kmax = 0
    cdef double g_alpha = _log_fact(a), t, mx = -INFINITY, total = 0.0
    cdef double terms[LF_SIZE]
    # two passes (largest term first, then the others' sum); the terms are kept for orders
    # below LF_SIZE (every order of the default grid), recomputed above it (same values)
    for k in range(a + 1):
        t = _int_term(a, k, alpha, g_alpha, log_q, log_1mq, inv2s2)
        if a < LF_SIZE:
            terms[k] = t
        if t > mx:
            mx = t
            kmax = k
    for k in range(a + 1):
        if k == kmax:
            continue
        if a < LF_SIZE:
            t = terms[k]
        else:
            t = _int_term(a, k, alpha, g_alpha, log_q, log_1mq, inv2s2)
        # exp of anything below -746 rounds to exactly 0 (the smallest subnormal is
        # exp(-744.4)): skipping it leaves the sum bitwise unchanged (issue 18: most terms of
        # the large orders are far below the largest)
        if t - mx < -746.0:
            continue
        total += exp(t - mx)
    return log1p(total) + mx


@cython.cdivision(True)
cdef double _log_a_frac(double alpha, double log_q, double log_1mq, double sigma) noexcept nogil:
    cdef double inv2s2 = 1.0 / (2.0 * sigma * sigma)
    cdef double log_odds = log_1mq - log_q      # log(1/q - 1), as the twin
    cdef double z0, i, j, log_coef, s0, s1, p0 = 0.0, p1 = 0.0, total = 0.0
    cdef double g_alpha = gammaln(alpha + 1.0)
    cdef int n
    z0 = sigma * sigma * log_odds + 0.5
    for n in range(MAX_TERMS_FRAC):
        i = <double>n
        j = alpha - i
        log_coef = g_alpha - LOG_FACT[n] - gammaln(j + 1.0)   # LOG_FACT[n] = gammaln(i + 1.0)
        s0 = ((log_coef + i * log_q + j * log_1mq) + (i * i - i) * inv2s2
              + log_ndtr((z0 - i) / sigma))
        s1 = ((log_coef + j * log_q + i * log_1mq) + (j * j - j) * inv2s2
              + log_ndtr((j - z0) / sigma))
        if n == 0:
            total = _logaddexp(s0, s1)
        else:
            total = _logaddexp(total, _logaddexp(s0, s1))
            if s0 < p0 and s1 < p1 and (s0 if s0 > s1 else s1) < total - 30.0:
                return total
        p0 = s0
        p1 = s1
    return INFINITY


@cython.cdivision(True)
cdef double _log_a(double alpha, double q, double log_q, double log_1mq,
                   double sigma) noexcept nogil:
    if alpha == <double>(<long long>alpha) and alpha < 2147483647.0:
        return _log_a_int(alpha, log_q, log_1mq, 1.0 / (2.0 * sigma * sigma))
    return _log_a_frac(alpha, log_q, log_1mq, sigma)


@cython.boundscheck(False)
@cython.wraparound(False)
def log_a_sampled_gaussian(double q, const double[::1] orders, double sigma):
    """``log A_alpha`` at every order, for ``q`` in (0, 1) and ``sigma`` > 0 (validated by the
    caller); the RDP of one step is ``log A_alpha / (alpha - 1)`` (before the slack)."""
    cdef Py_ssize_t k, n = orders.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef double log_q = log(q), log_1mq = log1p(-q)
    with nogil:
        for k in range(n):
            o[k] = _log_a(orders[k], q, log_q, log_1mq, sigma)
    return out


@cython.cdivision(True)
cdef double _convert(double alpha, double r, double log_delta, double delta,
                     int improved) noexcept nogil:
    """``dpsco_core.privacy.conversions._epsilons`` at one order (before its round-up)."""
    cdef double eps
    if improved and alpha > MIN_ORDER_IMPROVED:
        eps = r + log1p(-1.0 / alpha) - (log_delta + log(alpha)) / (alpha - 1.0)
        if delta * delta + expm1(-r) > 0.0:
            eps = 0.0
    else:
        eps = r - log_delta / (alpha - 1.0)
    if isnan(eps):
        return INFINITY
    return eps


@cython.cdivision(True)
cdef double _order_epsilon(double alpha, double q, double log_q, double log_1mq, double sigma,
                           double steps, double log_delta, double delta,
                           int improved) noexcept nogil:
    """Epsilon of ``steps`` compositions at one order: ``_finish`` then the conversion of
    ``dpsco_core.privacy.conversions._epsilons`` (before its final round-up). ``sigma = inf``
    gives the floor that no noise goes below (RDP 0, plus the slack)."""
    cdef double r = 0.0
    if not isinf(sigma):
        r = _log_a(alpha, q, log_q, log_1mq, sigma) / (alpha - 1.0)
        if r < 0.0:
            r = 0.0
    r = steps * (r * (1.0 + RDP_SLACK) + RDP_ABS_SLACK)
    return _convert(alpha, r, log_delta, delta, improved)


@cython.cdivision(True)
cdef double _order_epsilon_floor(double alpha, double log_q, double log_1mq, double sigma,
                                 double steps, double log_delta, double delta,
                                 int improved) noexcept nogil:
    """A lower bound of ``_order_epsilon`` at an integer order, from two terms of its sum
    (``-INFINITY``: no bound; fractional orders, and anything not a plain number).

    ``_log_a_int`` returns ``log1p(total) + mx`` with ``total >= 0`` and ``mx`` its largest
    term, so (rounding being monotone) it is at least every one of its terms, computed by the
    same ``_int_term``; every later step of ``_order_epsilon`` (the division by
    ``alpha - 1``, the clamp at 0, the slack, the conversion) is non-decreasing in its input,
    so the same steps on a term give a lower bound of the epsilon, with one exception: the
    total-variation rule sets epsilon to 0 for a tiny RDP, and it is applied here at half the
    bound's RDP (a factor 2 from its threshold, not an ulp), so a floor is at most 0 wherever
    the epsilon can be 0. ``_smallest`` skips an order whose floor is not below the epsilon
    it must beat: the order would lose the comparison anyway, so the search takes bitwise the
    same path (issue 18: most of a sweep's cost is the large orders, which never win)."""
    cdef int a
    cdef double inv2s2, g_alpha, t, t2, r, eps
    if isinf(sigma) or not (alpha == <double>(<long long>alpha) and alpha < 2147483647.0):
        return -INFINITY
    a = <int>alpha
    inv2s2 = 1.0 / (2.0 * sigma * sigma)      # as _log_a
    g_alpha = _log_fact(a)
    t = _int_term(a, a, alpha, g_alpha, log_q, log_1mq, inv2s2)
    if a >= 2:
        t2 = _int_term(a, 2, alpha, g_alpha, log_q, log_1mq, inv2s2)
        if t2 > t:
            t = t2
    if isnan(t):
        return -INFINITY
    r = t / (alpha - 1.0)
    if r < 0.0:
        r = 0.0
    r = steps * (r * (1.0 + RDP_SLACK) + RDP_ABS_SLACK)
    if improved and alpha > MIN_ORDER_IMPROVED:
        eps = r + log1p(-1.0 / alpha) - (log_delta + log(alpha)) / (alpha - 1.0)
        if delta * delta + expm1(-0.5 * r) > 0.0 and eps > 0.0:
            eps = 0.0       # the epsilon may be the rule's 0
    else:
        eps = r - log_delta / (alpha - 1.0)
    if isnan(eps):
        return -INFINITY
    return eps


def order_epsilon_floor(double q, double alpha, double sigma, double steps, double delta,
                        bint improved):
    """The lower bound ``_smallest`` prunes with (for tests): at most ``order_epsilon``."""
    return _order_epsilon_floor(alpha, log(q), log1p(-q), sigma, steps, log(delta), delta,
                                improved)


def order_epsilon(double q, double alpha, double sigma, double steps, double delta,
                  bint improved):
    """Epsilon of ``steps`` compositions of the sampled Gaussian at order ``alpha`` (one
    order of ``_epsilons``'s vector, unrounded)."""
    return _order_epsilon(alpha, q, log(q), log1p(-q), sigma, steps, log(delta), delta,
                          improved)


@cython.cdivision(True)
def order_root(double q, double alpha, double steps, double delta, bint improved,
               double target, double tolerance, double lo, double hi, int max_iter=200):
    """Smallest noise multiplier of one order, within ``[lo, hi]``: returns ``s`` with
    ``target - tolerance <= epsilon_alpha(s) <= target``, or the safe end ``hi`` when the
    bracket closed first (relative width 1e-14).

    ``epsilon_alpha(hi) <= target < epsilon_alpha(lo)`` must hold (the caller brackets).
    Regula falsi in ``log s`` with the Illinois modification, falling back to bisection, so
    the bracket always shrinks and ``hi`` always meets the target.
    """
    cdef double log_q = log(q), log_1mq = log1p(-q), log_delta = log(delta)
    cdef double x_lo = log(lo), x_hi = log(hi), g_lo, g_hi, x, g, s_hi = hi, s
    cdef int it, kept = 0
    with nogil:
        g_lo = _order_epsilon(alpha, q, log_q, log_1mq, lo, steps, log_delta, delta,
                              improved) - target
        g_hi = _order_epsilon(alpha, q, log_q, log_1mq, hi, steps, log_delta, delta,
                              improved) - target
        for it in range(max_iter):
            if -g_hi <= tolerance or x_hi - x_lo <= 1e-14 * fabs(x_hi) + 1e-300:
                break
            if isinf(g_lo):
                x = 0.5 * (x_lo + x_hi)
            else:
                x = x_hi - g_hi * (x_hi - x_lo) / (g_hi - g_lo)
            if not (x_lo < x < x_hi):
                x = 0.5 * (x_lo + x_hi)
            s = exp(x)
            g = _order_epsilon(alpha, q, log_q, log_1mq, s, steps, log_delta, delta,
                               improved) - target
            if g <= 0.0:
                x_hi, g_hi, s_hi = x, g, s
                if kept == 1:
                    g_lo *= 0.5
                kept = 1
            else:
                x_lo, g_lo = x, g
                if kept == 2:
                    g_hi *= 0.5
                kept = 2
    return s_hi, g_hi + target


@cython.cdivision(True)
cdef double _root(double alpha, double q, double log_q, double log_1mq, double steps,
                  double log_delta, double delta, int improved, double aim, double tolerance,
                  double s, double min_s, double max_s) noexcept nogil:
    """One order's root, bracketed from ``s`` by factors of 2 (``NAN`` outside
    ``[min_s, max_s]``), then regula falsi with the Illinois modification in ``log s``."""
    cdef double lo = s, hi = s, g_lo, g_hi, x_lo, x_hi, x, g, t
    cdef int it, kept = 0
    g_hi = _order_epsilon(alpha, q, log_q, log_1mq, hi, steps, log_delta, delta, improved) - aim
    if g_hi > 0.0:
        g_lo = g_hi
        while True:
            lo = hi
            hi = 2.0 * hi
            if hi > max_s:
                return NAN
            g_hi = _order_epsilon(alpha, q, log_q, log_1mq, hi, steps, log_delta, delta,
                                  improved) - aim
            if g_hi <= 0.0:
                break
            g_lo = g_hi
    else:
        while True:
            lo = 0.5 * lo
            if lo < min_s:
                return NAN
            g_lo = _order_epsilon(alpha, q, log_q, log_1mq, lo, steps, log_delta, delta,
                                  improved) - aim
            if g_lo > 0.0:
                break
            hi = lo
            g_hi = g_lo
    x_lo = log(lo)
    x_hi = log(hi)
    for it in range(200):
        if -g_hi <= tolerance or x_hi - x_lo <= 1e-14 * fabs(x_hi) + 1e-300:
            break
        if isinf(g_lo):
            x = 0.5 * (x_lo + x_hi)
        else:
            x = x_hi - g_hi * (x_hi - x_lo) / (g_hi - g_lo)
        if not (x_lo < x < x_hi):
            x = 0.5 * (x_lo + x_hi)
        t = exp(x)
        g = _order_epsilon(alpha, q, log_q, log_1mq, t, steps, log_delta, delta, improved) - aim
        if g <= 0.0:
            x_hi = x
            g_hi = g
            hi = t
            if kept == 1:
                g_lo *= 0.5
            kept = 1
        else:
            x_lo = x
            g_lo = g
            if kept == 2:
                g_hi *= 0.5
            kept = 2
    return hi


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def smallest_root(double q, const double[::1] orders, double steps, double delta,
                  bint improved, double aim, double tolerance, double start, double min_s,
                  double max_s):
    """``(alpha, s)``: the order of ``orders`` with the smallest root (the smallest noise
    multiplier whose epsilon is at most ``aim``, to ``tolerance``), or ``(nan, nan)``.

    The order best at ``start`` is solved first; then every order whose epsilon at that root
    is below the solved order's (exactly those whose roots are smaller, epsilon being
    non-increasing in s at each order) is solved, and the smallest root is kept, until no
    order beats it. Orders whose epsilon at infinite noise is not below ``aim`` are skipped.
    Issue 18, bitwise the same answer for less work: an order whose floor
    (``order_epsilon_floor``, two terms of its sum) already loses a comparison is not
    evaluated, and within a round the candidate with the lowest epsilon is solved first, so
    that a candidate whose epsilon at that root is above ``aim`` (its root is larger) is not
    solved at all.
    """
    cdef Py_ssize_t best = -1
    cdef double s = NAN
    with nogil:
        _smallest(q, orders, steps, delta, improved, aim, tolerance, start, min_s, max_s,
                  &best, &s)
    if best == -2:
        raise MemoryError("smallest_root: no memory for the candidate orders")
    if best < 0 or isnan(s):
        return NAN, NAN
    return orders[best], s


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _smallest(double q, const double[::1] orders, double steps, double delta,
                    int improved, double aim, double tolerance, double start, double min_s,
                    double max_s, Py_ssize_t *best_out, double *s_out) noexcept nogil:
    cdef Py_ssize_t k, n = orders.shape[0], best = -1, rounds, i, first, n_cand, best_new
    cdef Py_ssize_t *cand
    cdef double *e_cand
    cdef double log_q = log(q), log_1mq = log1p(-q), log_delta = log(delta)
    cdef double e, e_best = INFINITY, s, r, s_new, margin
    if True:
        for k in range(n):
            if _order_epsilon(orders[k], q, log_q, log_1mq, INFINITY, steps, log_delta, delta,
                              improved) >= aim:
                continue
            if _order_epsilon_floor(orders[k], log_q, log_1mq, start, steps, log_delta, delta,
                                    improved) >= e_best:
                continue        # e >= floor >= e_best: would not be taken
            e = _order_epsilon(orders[k], q, log_q, log_1mq, start, steps, log_delta, delta,
                               improved)
            if e < e_best:
                e_best = e
                best = k
        if best < 0:
            best_out[0] = -1
            return
        s = _root(orders[best], q, log_q, log_1mq, steps, log_delta, delta, improved, aim,
                  tolerance, start, min_s, max_s)
        if isnan(s):
            best_out[0] = -1
            return
        cand = <Py_ssize_t *>malloc(n * sizeof(Py_ssize_t))
        e_cand = <double *>malloc(n * sizeof(double))
        if cand == NULL or e_cand == NULL:
            free(cand)
            free(e_cand)
            best_out[0] = -2
            return
        # Beyond the aim by this much, an order's computed epsilon at a point proves its root
        # lies above that point: far more than the epsilon's rounding error (about 1e-13 of
        # |aim| + |log delta|), which is what could make the computed curve non-monotone.
        margin = 1e-9 * (fabs(aim) + 2.0 * fabs(log_delta) + 1.0)
        for rounds in range(n):
            e_best = _order_epsilon(orders[best], q, log_q, log_1mq, s, steps, log_delta,
                                    delta, improved)
            # The orders whose epsilon at s is below the current order's: exactly those with
            # a smaller root. The round's answer is the smallest of their roots (the lowest
            # index on a tie), as when every one of them was solved in index order.
            n_cand = 0
            for k in range(n):
                if k == best:
                    continue
                if _order_epsilon_floor(orders[k], log_q, log_1mq, s, steps, log_delta, delta,
                                        improved) >= e_best:
                    continue    # epsilon at s >= floor >= e_best: no smaller root
                e = _order_epsilon(orders[k], q, log_q, log_1mq, s, steps, log_delta, delta,
                                   improved)
                if e < e_best:
                    cand[n_cand] = k
                    e_cand[n_cand] = e
                    n_cand += 1
            if n_cand == 0:
                break
            # The most promising order (lowest epsilon at s) is solved first; an order whose
            # epsilon at that root is above the aim (by the margin) has a larger root, which
            # the smallest-root rule would not take: it is not solved (issue 18: each root
            # costs about ten evaluations of its order).
            first = 0
            for i in range(1, n_cand):
                if e_cand[i] < e_cand[first]:
                    first = i
            s_new = s
            best_new = best
            for i in range(-1, n_cand):
                if i == first:
                    continue
                k = cand[first if i < 0 else i]
                if s_new < s and _order_epsilon(orders[k], q, log_q, log_1mq, s_new, steps,
                                                log_delta, delta, improved) > aim + margin:
                    continue
                r = _root(orders[k], q, log_q, log_1mq, steps, log_delta, delta, improved,
                          aim, tolerance, s, min_s, max_s)
                # False for NAN; a tie goes to the lower index, never to the current order
                if r < s_new or (r == s_new and s_new < s and k < best_new):
                    s_new = r
                    best_new = k
            if s_new == s:
                break
            s = s_new
            best = best_new
        free(cand)
        free(e_cand)
        best_out[0] = best
        s_out[0] = s


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def epsilons(const double[:] orders, const double[:] rdp, double log_delta, double delta,
             bint improved, const double[:] minus_one, const double[:] log1p_inv,
             const double[:] log_orders):
    """``(eps, tiny, k)``: ``dpsco_core.privacy.conversions._epsilons`` without its
    total-variation rule (issue 18: one loop instead of a dozen NumPy calls, about 50 us a
    call). The same IEEE operations in the same order on the same order-only terms (which
    the caller computes with NumPy, as before), so every value is bitwise the NumPy one.

    The rule ``delta^2 + expm1(-r) > 0 -> 0`` is not applied here: ``tiny`` says whether any
    order has ``r < 4 delta^2`` (or ``delta >= 0.5``), the only case where it can hold
    (below that, ``expm1(-r) <= -2 delta^2`` whatever the libm's last ulp), and the caller
    then applies it with NumPy's ``expm1`` as before; NaN becomes ``inf`` (the rule's zeros
    come after, as in the NumPy order). ``k`` is ``np.argmin(eps)`` (meaningless if
    ``tiny``)."""
    cdef Py_ssize_t k, n = rdp.shape[0], k_min = 0
    cdef double r, eps, threshold = 4.0 * delta * delta if delta < 0.5 else INFINITY
    cdef bint tiny = False
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for k in range(n):
            r = rdp[k]
            if improved and orders[k] > MIN_ORDER_IMPROVED:
                eps = (r + log1p_inv[k]) - (log_delta + log_orders[k]) / minus_one[k]
            else:
                eps = r - log_delta / minus_one[k]
            if improved and r < threshold:
                tiny = True
            o[k] = INFINITY if isnan(eps) else eps
            if o[k] < o[k_min]:
                k_min = k      # the first smallest, as np.argmin (no NaN left)
    return out, tiny, k_min


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def gaussian_curve(const double[:] orders, double s):
    """``dpsco_core.privacy.rdp.rdp_gaussian`` on validated arguments, one loop: the same
    operations as ``_finish(orders / (2.0 * s * s))`` (division, clamp at 0 keeping NaN,
    the relative slack, ``+ 0.0``), so bitwise the NumPy expression, its twin (issue 18: four
    NumPy calls of a few microseconds on every Gaussian event of a report)."""
    cdef Py_ssize_t k, n = orders.shape[0]
    cdef double d = 2.0 * s * s, v, up = 1.0 + RDP_SLACK
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for k in range(n):
            v = orders[k] / d
            if v < 0.0:         # np.maximum(v, 0.0): NaN stays NaN
                v = 0.0
            o[k] = v * up + 0.0
    return out
