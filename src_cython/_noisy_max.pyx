# cython: language_level=3
"""Report-noisy-max: ``argmax_i (scores[i] + Z_i)`` with i.i.d. Laplace, Gumbel or exponential Z.

Design
- Candidates are split into blocks of ``BLOCK_SIZE`` (``_rng.pxd``); block b draws Z for its
  candidates in index order from bit generator b, exactly as
  ``Generator(bit_generators[b]).laplace(0.0, scale, size)`` (or ``.gumbel(0.0, scale, size)``,
  ``.exponential(scale, size)``) would. Blocks run in parallel; each keeps its best (value,
  index) and the blocks are combined in block order with a strict ``>``, so the winner is the
  lowest index among the maxima and the result is bitwise the same for any thread count and
  equal to ``dpsco_core.reference.noisy_max.report_noisy_max``.
- Speed: a Laplace or Gumbel variate costs one or two ``log`` calls, most of which cannot change
  the winner. Each candidate first gets the uniform its variate is a function of and a cheap
  upper bound on the variate from ``-ln(x) <= 1/x - 1`` and ``ln(y) <= y - 1``; only when
  ``score + bound`` could reach the block's running best is the exact variate computed.
  Skipped candidates consume exactly the random numbers numpy would have consumed, and the
  bound carries a rounding margin (``_MARGIN``), so the selected index equals
  the one obtained by drawing every variate. The exponential variate (ziggurat) is cheap and is
  always drawn.
- Calibration (scale = 2 * sensitivity / epsilon, or sensitivity / epsilon for monotone scores)
  lives in ``dpsco_core.mechanisms``.
"""

from cython.parallel cimport prange
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, fabs, log
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_exponential

from _rng cimport (BLOCK_SIZE, NOISE_EXPONENTIAL, NOISE_GUMBEL, NOISE_LAPLACE, bitgen_array,
                    n_blocks_for)

NOISY_MAX_BLOCK_SIZE = BLOCK_SIZE
LAPLACE = NOISE_LAPLACE
GUMBEL = NOISE_GUMBEL
EXPONENTIAL = NOISE_EXPONENTIAL

# Skipping a candidate must never change the winner. Write M for the margin below. A candidate
# is skipped only when score + bound < best - M, with bound >= variate in real arithmetic; the
# computed score + variate then stays below best: its rounding error is a few units of roundoff
# in |score|, |variate| and, through the inner log of the Gumbel variate and the rounding of
# 2 - u - u, in scale, and near the threshold |variate| <= |best| + |score|. The test itself is
# done in uniform space (c below), whose rounding costs a few more units of
# roundoff in |best| + |score| + scale. 32 units is several times what this analysis needs.
cdef double _MARGIN = 32.0 * DBL_EPSILON


cdef inline double _threshold(double score, double best, double scale,
                              double inv_scale) noexcept nogil:
    """c = 1 + (best - score - M) / scale: a variate bounded by scale * (w - 1) may beat best
    only if w >= c. best = -inf gives c = -inf (every candidate is evaluated)."""
    return 1.0 + (best - score - _MARGIN * (fabs(score) + fabs(best) + scale)) * inv_scale


cdef void _block_laplace(const double[::1] scores, Py_ssize_t lo, Py_ssize_t hi, double scale,
                         bitgen_t *gen, double *best_out, Py_ssize_t *idx_out) noexcept nogil:
    cdef double best = -INFINITY, inv_scale = 1.0 / scale, u, t, c, value
    cdef Py_ssize_t i, best_i = -1
    cdef int upper, may_beat
    for i in range(lo, hi):
        # numpy's random_laplace: U in (0, 1) (U == 0 redrawn); U >= 0.5 gives the upper half.
        u = gen.next_double(gen.state)
        while u == 0.0:
            u = gen.next_double(gen.state)
        # Bounds: with t = 2u (exact), -log(2 - t) <= 1/(2 - t) - 1 (u >= 0.5) and
        # log(t) <= t - 1 (u < 0.5). "1/(2 - t) - 1 >= c" is "(2 - t) * c <= 1" as 2 - t > 0.
        # Bitwise and/or instead of if/else: the half is a coin flip the CPU cannot predict.
        t = u + u
        c = _threshold(scores[i], best, scale, inv_scale)
        upper = u >= 0.5
        may_beat = (upper & ((2.0 - t) * c <= 1.0)) | ((1 - upper) & (t >= c))
        if not may_beat:
            continue
        if upper:
            value = scores[i] + (0.0 - scale * log(2.0 - u - u))
        else:
            value = scores[i] + (0.0 + scale * log(u + u))
        if value > best:
            best = value
            best_i = i
    best_out[0] = best
    idx_out[0] = best_i


cdef void _block_gumbel(const double[::1] scores, Py_ssize_t lo, Py_ssize_t hi, double scale,
                        bitgen_t *gen, double *best_out, Py_ssize_t *idx_out) noexcept nogil:
    cdef double best = -INFINITY, inv_scale = 1.0 / scale, r, value
    cdef Py_ssize_t i, best_i = -1
    for i in range(lo, hi):
        # numpy's random_gumbel: U = 1 - r (exact) with r in (0, 1) (r == 0 redrawn), and
        # Z = -scale * log(-log U) <= -scale * log(r) <= scale * (1/r - 1), as -log U >= r.
        r = gen.next_double(gen.state)
        while r == 0.0:
            r = gen.next_double(gen.state)
        if r * _threshold(scores[i], best, scale, inv_scale) > 1.0:
            continue
        value = scores[i] + (0.0 - scale * log(-log(1.0 - r)))
        if value > best:
            best = value
            best_i = i
    best_out[0] = best
    idx_out[0] = best_i


cdef void _block_exponential(const double[::1] scores, Py_ssize_t lo, Py_ssize_t hi,
                             double scale, bitgen_t *gen, double *best_out,
                             Py_ssize_t *idx_out) noexcept nogil:
    cdef double best = -INFINITY, value
    cdef Py_ssize_t i, best_i = -1
    for i in range(lo, hi):
        value = scores[i] + random_exponential(gen, scale)
        if value > best:
            best = value
            best_i = i
    best_out[0] = best
    idx_out[0] = best_i


def report_noisy_max(const double[::1] scores,   # IN  (m,) finite
                     double scale,
                     int kind,
                     object bit_generators,       # IN  one per block of BLOCK_SIZE candidates
                     int n_threads):
    """Return ``(index, noisy_value)`` of ``max_i scores[i] + Z_i``, ties to the lowest index.

    ``kind`` is LAPLACE, GUMBEL or EXPONENTIAL; ``scale`` the noise scale (> 0).
    """
    cdef Py_ssize_t m = scores.shape[0]
    if m == 0:
        raise ValueError("scores must not be empty")
    if kind != NOISE_LAPLACE and kind != NOISE_GUMBEL and kind != NOISE_EXPONENTIAL:
        raise ValueError(f"unknown noise kind {kind}")
    cdef Py_ssize_t n_blocks = n_blocks_for(m)
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_blocks)
    cdef double *block_best = <double *> malloc(n_blocks * sizeof(double))
    cdef Py_ssize_t *block_idx = <Py_ssize_t *> malloc(n_blocks * sizeof(Py_ssize_t))
    cdef Py_ssize_t b, lo, hi, best_i = -1
    cdef double best = -INFINITY
    try:
        if block_best == NULL or block_idx == NULL:
            raise MemoryError()
        for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
            lo = b * BLOCK_SIZE
            hi = min(lo + BLOCK_SIZE, m)
            if kind == NOISE_LAPLACE:
                _block_laplace(scores, lo, hi, scale, gens[b], &block_best[b], &block_idx[b])
            elif kind == NOISE_GUMBEL:
                _block_gumbel(scores, lo, hi, scale, gens[b], &block_best[b], &block_idx[b])
            else:
                _block_exponential(scores, lo, hi, scale, gens[b], &block_best[b],
                                   &block_idx[b])
        # Block order with a strict > keeps the lowest index among equal maxima.
        for b in range(n_blocks):
            if block_best[b] > best:
                best = block_best[b]
                best_i = block_idx[b]
    finally:
        free(gens)
        free(block_best)
        free(block_idx)
    if best_i < 0:
        # every noisy value NaN or -inf (scores outside the documented finite range): index -1
        # would reach a caller's vertex arrays
        raise ValueError("report-noisy-max selected no index: every noisy score is NaN or "
                         "-inf (the scores must be finite).")
    return best_i, best
