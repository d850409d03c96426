# cython: language_level=3
"""Exact discrete noise (Canonne, Kamath and Steinke 2020) and exact permute-and-flip.

Design
- Integer arithmetic only: no floating-point operation, and in particular no transcendental
  function, is on any sampling or selection path (this module cimports nothing from libc.math;
  a test checks the shared object imports no exp/log). Every probability is an exact rational.
- Random bits: ``next_uint64`` of a numpy bit generator (PCG64DXSM, the block scheme of
  ``_rng.pxd``), i.e. uniform 64-bit words; uniform integers below n by masking to the bit
  length of n - 1 and rejecting (unbiased). Chosen over ``secrets`` for speed, thread-count
  independence and reproducibility under a seed; the samplers are exact given uniform words.
- Algorithms (CKS20): ``_bernoulli_exp_frac`` is Algorithm 1 for gamma = num/den in [0, 1];
  ``_bernoulli_exp`` extends it to gamma > 1 (floor(gamma) coins Bernoulli(exp(-1)), then the
  fraction); ``_discrete_laplace`` is Algorithm 2 with s = 1 (integer scale t);
  ``_discrete_gaussian`` is Algorithm 3 with sigma^2 = t * m (rejection from DLap(t)), for which
  the acceptance exponent is (|Y| - m)^2 / (2 t m).
- Overflow: Bernoulli(num / (den K)) uses one uniform below den * K when that product fits in
  64 bits, else the product of Bernoulli(num / den) and Bernoulli(1 / K) (same law). The square
  (|Y| - m)^2 uses a 128-bit product (``unsigned __int128``, gcc/clang). X = U + t V and
  x + noise are checked; an overflow sets status 1 and the caller raises.
- Draw order (reproduced by ``dpsco_core.reference.discrete``): additive noise in blocks of
  ``BLOCK_SIZE`` items, block b drawing its items in index order from bit generator b;
  permute-and-flip is serial on one bit generator: Fisher-Yates step i draws j in [i, m), then
  the coin of the candidate at position i.
"""

from cython.parallel cimport prange
from libc.stdint cimport INT64_MAX, UINT64_MAX, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

from _rng cimport BLOCK_SIZE, bitgen_array, n_blocks_for

cdef extern from *:
    ctypedef unsigned long long uint128 "unsigned __int128"

DISCRETE_BLOCK_SIZE = BLOCK_SIZE


cdef inline uint64_t _uniform_below(bitgen_t *gen, uint64_t n) noexcept nogil:
    """Uniform on {0, ..., n - 1} (n >= 1): mask to the bit length of n - 1, reject >= n.
    n == 1 draws nothing."""
    cdef uint64_t mask = n - 1, r
    if mask == 0:
        return 0
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    while True:
        r = gen.next_uint64(gen.state) & mask
        if r < n:
            return r


cdef inline bint _bernoulli_exp_frac(bitgen_t *gen, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den, den >= 1 (CKS20 Algorithm 1, gamma <= 1):
    K = 1; while Bernoulli(gamma / K): K += 1; return K odd."""
    cdef uint64_t k = 1
    cdef bint coin
    while True:
        if den <= UINT64_MAX // k:
            coin = _uniform_below(gen, den * k) < num
        else:   # overflow-safe path: Bernoulli(num / den) * Bernoulli(1 / K)
            coin = _uniform_below(gen, den) < num
            coin = coin & (_uniform_below(gen, k) == 0)
        if not coin:
            return k & 1
        k += 1


cdef inline bint _bernoulli_exp(bitgen_t *gen, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for any num >= 0, den >= 1."""
    cdef uint64_t q = num // den, i
    for i in range(q):
        if not _bernoulli_exp_frac(gen, 1, 1):
            return 0
    return _bernoulli_exp_frac(gen, num - q * den, den)


cdef inline int _discrete_laplace(bitgen_t *gen, uint64_t t, int64_t *out) noexcept nogil:
    """DLap(t): P(y) proportional to exp(-|y| / t), t >= 1 (CKS20 Algorithm 2, s = 1).
    Returns 1 on overflow of U + t V (probability below exp(-2^63 / t))."""
    cdef uint64_t u, v
    cdef bint negative
    while True:
        u = _uniform_below(gen, t)
        if not _bernoulli_exp_frac(gen, u, t):
            continue
        v = 0
        while _bernoulli_exp_frac(gen, 1, 1):
            v += 1
        if v > (<uint64_t> INT64_MAX - u) // t:
            return 1
        u = u + t * v
        negative = _uniform_below(gen, 2) == 1
        if negative and u == 0:
            continue
        out[0] = -<int64_t> u if negative else <int64_t> u
        return 0


cdef inline bint _bernoulli_exp_split(bitgen_t *gen, uint128 num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for a 128-bit numerator."""
    cdef uint128 q = num // den
    cdef uint128 i = 0
    while i < q:
        if not _bernoulli_exp_frac(gen, 1, 1):
            return 0
        i += 1
    return _bernoulli_exp_frac(gen, <uint64_t> (num - q * den), den)


cdef inline int _discrete_gaussian(bitgen_t *gen, uint64_t t, uint64_t m,
                                   int64_t *out) noexcept nogil:
    """N_Z(0, sigma^2) with sigma^2 = t m (CKS20 Algorithm 3 with Laplace scale t): draw
    Y ~ DLap(t), accept with probability exp(-(|Y| - m)^2 / (2 t m)). Needs 2 t m < 2^64."""
    cdef int64_t y
    cdef uint64_t a, den = 2 * t * m
    cdef uint128 sq
    while True:
        if _discrete_laplace(gen, t, &y):
            return 1
        a = <uint64_t> (y if y >= 0 else -y)
        a = a - m if a >= m else m - a
        sq = <uint128> a * a
        if _bernoulli_exp_split(gen, sq, den):
            out[0] = y
            return 0


cdef inline int _add_checked(int64_t x, int64_t noise, int64_t *out) noexcept nogil:
    if (noise > 0 and x > INT64_MAX - noise) or (noise < 0 and x < -INT64_MAX - noise):
        return 1
    out[0] = x + noise
    return 0


def add_discrete_laplace(const int64_t[::1] x,    # IN  (d,) integer (grid units)
                         uint64_t t,
                         object bit_generators,    # IN  one per block of BLOCK_SIZE items
                         int64_t[::1] out,         # OUT (d,)
                         int n_threads):
    """Write ``x + DLap(t)`` into ``out``; return 0, or 1 on integer overflow."""
    return _add_discrete(x, t, 0, bit_generators, out, n_threads)


def add_discrete_gaussian(const int64_t[::1] x,   # IN  (d,) integer (grid units)
                          uint64_t t,
                          uint64_t m,
                          object bit_generators,   # IN  one per block of BLOCK_SIZE items
                          int64_t[::1] out,        # OUT (d,)
                          int n_threads):
    """Write ``x + N_Z(0, t m)`` into ``out``; return 0, or 1 on integer overflow."""
    if m == 0 or t > UINT64_MAX // (2 * m):
        raise ValueError("need 1 <= m and 2 t m < 2^64")
    return _add_discrete(x, t, m, bit_generators, out, n_threads)


cdef int _add_discrete(const int64_t[::1] x, uint64_t t, uint64_t m, object bit_generators,
                       int64_t[::1] out, int n_threads) except -1:
    cdef Py_ssize_t d = x.shape[0]
    if out.shape[0] != d:
        raise ValueError(f"out has length {out.shape[0]}, x has length {d}")
    if t == 0:
        raise ValueError("t must be >= 1")
    cdef Py_ssize_t n_blocks = n_blocks_for(d)
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_blocks)
    cdef Py_ssize_t b, i, lo, hi
    cdef int status = 0, bad
    try:
        for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
            lo = b * BLOCK_SIZE
            hi = min(lo + BLOCK_SIZE, d)
            for i in range(lo, hi):
                # The noise goes to out[i] first (a thread-private cell: a pointer to a local
                # would make Cython treat the local as shared across the prange threads).
                if m == 0:
                    bad = _discrete_laplace(gens[b], t, &out[i])
                else:
                    bad = _discrete_gaussian(gens[b], t, m, &out[i])
                if bad == 0:
                    bad = _add_checked(x[i], out[i], &out[i])
                status += bad   # a reduction: the number of overflowed items
    finally:
        free(gens)
    return 1 if status else 0


def permute_and_flip(const int64_t[::1] q,    # IN  (m,) integer scores (grid units)
                     uint64_t temperature,
                     object bit_generator):
    """Permute-and-flip with exact coins: return the selected index.

    Visit candidates in a uniformly random order (lazy Fisher-Yates); accept candidate i with
    probability ``exp(-(max(q) - q[i]) / temperature)`` (exact); the first accepted is returned.
    A maximiser is always accepted, so the loop ends within m steps.
    """
    cdef Py_ssize_t m = q.shape[0], i, j, c
    if m == 0:
        raise ValueError("scores must not be empty")
    if temperature == 0:
        raise ValueError("temperature must be >= 1")
    cdef bitgen_t **gens = bitgen_array([bit_generator], 1)
    cdef Py_ssize_t *perm = <Py_ssize_t *> malloc(m * sizeof(Py_ssize_t))
    cdef int64_t best = q[0]
    cdef Py_ssize_t chosen = -1
    try:
        if perm == NULL:
            raise MemoryError()
        with nogil:
            for i in range(m):
                perm[i] = i
                if q[i] > best:
                    best = q[i]
            for i in range(m):
                j = i + <Py_ssize_t> _uniform_below(gens[0], <uint64_t> (m - i))
                c = perm[j]
                perm[j] = perm[i]
                perm[i] = c
                # max - q[c] >= 0 and < 2^64: exact in unsigned arithmetic.
                if _bernoulli_exp(gens[0], <uint64_t> best - <uint64_t> q[c], temperature):
                    chosen = c
                    break
    finally:
        free(gens)
        free(perm)
    return chosen
