# cython: language_level=3
"""ReSQue (Carmon et al. 2023, Definition 2): batched reweighted stochastic queries.

What it computes (note 000, sections 1.2 and 10, K1/K2/K4), in standardized coordinates:
query offsets ``V[j] = (x_j - xbar) / rho`` (m rows) and samples ``zeta_i = xi_i / rho ~ N(0, I)``
(N rows). The log-weight of sample i at query j is

    lw[i, j] = <zeta_i, V[j]> - s_j / 2,     s_j = ||V[j]||^2                 (note 1.2)

never the Gaussian densities (pitfalls K1 (a)-(c)); the estimate is the plain (NOT
self-normalized, which would bias it) average

    out[j] = (1/N) sum_i exp(lw[i, j]) G_i                                  (K2)

with G_i a stored gradient row (``resque_batch``) or, on the GLM fast path, ``c_i a_{idx_i}``
(``resque_glm_batch``: one scalar derivative and one row index per sample instead of a
d-vector, K4). ``glm_query_batch`` computes those scalars,
``c_i = l'(margin_i + rho <a_{idx_i}, zeta_i>, y_{idx_i})`` with the margins
``<a_z, xbar>`` cached per ball centre by the caller.

Samples: given as an (N, d) array, or regenerated (an array with 0 rows): block b of
``SAMPLE_BLOCK`` consecutive samples draws its rows in order, row-major, from bit generator b
with numpy's ``random_standard_normal`` (= ``Generator(gen).standard_normal((rows, d))``).
``draw_samples`` writes the same numbers, so stored and regenerated runs are bitwise equal and
memory drops from O(N d) to O(m d + N) on the GLM path.

Threading and summation (bitwise equal for any n_threads and to ``dpsco_core.reference.resque``):
blocks of SAMPLE_BLOCK samples run in parallel; within a block the dot products run over k
left to right from 0.0 for all m queries at once (vectorized across queries, so every single
sum is sequential), and each block accumulates ``w * G_i`` for its samples in order into its
own (m, p) partial sum, from 0.0. The partials are added in block order from 0.0 and divided by
N. With -ffp-contract=off (setup.py) a NumPy twin with the same order is bitwise equal, except
that NumPy's SIMD ``exp`` may differ from the C library's in the last ulp (tests check).

Register blocking (same sums, same order, so the results are unchanged bit for bit): samples
are taken ``_TILE`` = 4 at a time. The dot products of a tile run as 4 samples x 4 queries
micro-tiles (4 vector accumulators of 4 queries; each lane still summed over k left to right
from 0.0), so a row of V^T is loaded once per 4 samples instead of once per sample; the
accumulation adds the tile's 4 terms to each (m, p) partial-sum entry in sample order while
the entry is in a register, so the 8 m p bytes of the partial sum travel once per 4 samples
(for m = 64, p = 100 they do not fit in L1). A block's last n mod 4 samples take the
one-sample path. GCC's SLP vectorizer leaves 16 scalar reduction chains scalar, hence the
small C helpers with vector extensions (and an AVX2 clone) below; lanes are independent IEEE
operations, so the vector and scalar paths agree bitwise (tested against the twin).
"""

from cython.parallel cimport parallel, prange
from libc.math cimport exp
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_normal

import numpy as np

from _loss cimport loss_deriv
from _rng cimport bitgen_array

cdef enum:
    # Samples per block (random stream and partial sum); a module constant, never derived
    # from the thread count.
    _SAMPLE_BLOCK = 512
    # Samples per register tile (module docstring); divides _SAMPLE_BLOCK.
    _TILE = 4

SAMPLE_BLOCK = _SAMPLE_BLOCK


cdef inline Py_ssize_t _n_blocks(Py_ssize_t n) noexcept nogil:
    return (n + _SAMPLE_BLOCK - 1) // _SAMPLE_BLOCK


cdef inline void _draw_row(bitgen_t *gen, double *row, Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(d):
        row[k] = random_standard_normal(gen)


cdef inline void _log_weights(const double *zeta, const double *vt, const double *half_s,
                              Py_ssize_t m, Py_ssize_t d, double *lw) noexcept nogil:
    """lw[j] = (sum_k zeta[k] vt[k, j]) - half_s[j], each sum left to right from 0.0."""
    cdef Py_ssize_t j, k
    cdef double z
    cdef const double *col
    for j in range(m):
        lw[j] = 0.0
    # lw += zeta[k] * V[:, k]  (vt is V transposed, so the inner loop is contiguous)
    for k in range(d):
        z = zeta[k]
        col = vt + k * m
        for j in range(m):
            lw[j] = lw[j] + z * col[j]
    for j in range(m):
        lw[j] = lw[j] - half_s[j]


cdef extern from *:
    """
    /* Register-blocked tiles of 4 samples (module docstring). GCC and Clang: vector
       extensions, 4 queries (or 4 features) per vector; each lane is an IEEE multiply then
       an IEEE add in the scalar code's order, so every result is the scalar result bit for
       bit, with or without AVX (setup.py builds with -ffp-contract=off: nothing is fused).
       GCC on x86-64 Linux also compiles an AVX2 clone chosen at load time (ifunc). Other
       compilers: the same loops in scalar C. */
    #include <stddef.h>
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #define DPSCO_RESQUE_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define DPSCO_RESQUE_CLONES
    #endif

    #if defined(__GNUC__)
    typedef double dpsco_v4d __attribute__((vector_size(32)));
    #endif

    /* lw[s m + j] = (sum_k z_s[k] vt[k m + j], k left to right from 0.0) - half_s[j] */
    DPSCO_RESQUE_CLONES
    static void dpsco_resque_log_weights_tile(
            const double *z0, const double *z1, const double *z2, const double *z3,
            const double *vt, const double *half_s, ptrdiff_t m, ptrdiff_t d, double *lw)
    {
        ptrdiff_t j = 0, k;
    #if defined(__GNUC__)
        for (; j + 4 <= m; j += 4) {
            dpsco_v4d a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, v, h;
            for (k = 0; k < d; k++) {
                memcpy(&v, vt + k * m + j, sizeof v);
                a0 = a0 + z0[k] * v;
                a1 = a1 + z1[k] * v;
                a2 = a2 + z2[k] * v;
                a3 = a3 + z3[k] * v;
            }
            memcpy(&h, half_s + j, sizeof h);
            a0 = a0 - h; a1 = a1 - h; a2 = a2 - h; a3 = a3 - h;
            memcpy(lw + j, &a0, sizeof a0);
            memcpy(lw + m + j, &a1, sizeof a1);
            memcpy(lw + 2 * m + j, &a2, sizeof a2);
            memcpy(lw + 3 * m + j, &a3, sizeof a3);
        }
    #endif
        for (; j < m; j++) {
            double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, v;
            for (k = 0; k < d; k++) {
                v = vt[k * m + j];
                a0 = a0 + z0[k] * v;
                a1 = a1 + z1[k] * v;
                a2 = a2 + z2[k] * v;
                a3 = a3 + z3[k] * v;
            }
            lw[j] = a0 - half_s[j];
            lw[m + j] = a1 - half_s[j];
            lw[2 * m + j] = a2 - half_s[j];
            lw[3 * m + j] = a3 - half_s[j];
        }
    }

    /* row[k] = (((row[k] + w[0] g0[k]) + w[1] g1[k]) + w[2] g2[k]) + w[3] g3[k]: the 4
       samples' terms added in sample order, as 4 one-sample updates would */
    DPSCO_RESQUE_CLONES
    static void dpsco_resque_axpy4(double *row, const double *w, const double *g0,
                                   const double *g1, const double *g2, const double *g3,
                                   ptrdiff_t p)
    {
        ptrdiff_t k = 0;
    #if defined(__GNUC__)
        dpsco_v4d r, x0, x1, x2, x3;
        for (; k + 4 <= p; k += 4) {
            memcpy(&r, row + k, sizeof r);
            memcpy(&x0, g0 + k, sizeof r);
            memcpy(&x1, g1 + k, sizeof r);
            memcpy(&x2, g2 + k, sizeof r);
            memcpy(&x3, g3 + k, sizeof r);
            r = (((r + w[0] * x0) + w[1] * x1) + w[2] * x2) + w[3] * x3;
            memcpy(row + k, &r, sizeof r);
        }
    #endif
        for (; k < p; k++)
            row[k] = (((row[k] + w[0] * g0[k]) + w[1] * g1[k]) + w[2] * g2[k]) + w[3] * g3[k];
    }
    """
    void _log_weights_tile "dpsco_resque_log_weights_tile" (
        const double *z0, const double *z1, const double *z2, const double *z3,
        const double *vt, const double *half_s, Py_ssize_t m, Py_ssize_t d,
        double *lw) noexcept nogil
    void _axpy4 "dpsco_resque_axpy4" (double *row, const double *w, const double *g0,
                                      const double *g1, const double *g2, const double *g3,
                                      Py_ssize_t p) noexcept nogil


cdef inline void _accumulate_tile(double *acc, const double *lw, const double *coef,
                                  const double *g0, const double *g1, const double *g2,
                                  const double *g3, double *w, Py_ssize_t m,
                                  Py_ssize_t p) noexcept nogil:
    """_accumulate for 4 samples in sample order (w: scratch for 4 weights; lw in the tile
    layout of _log_weights_tile)."""
    cdef Py_ssize_t j
    for j in range(m):
        w[0] = exp(lw[j]) * coef[0]
        w[1] = exp(lw[m + j]) * coef[1]
        w[2] = exp(lw[2 * m + j]) * coef[2]
        w[3] = exp(lw[3 * m + j]) * coef[3]
        _axpy4(acc + j * p, w, g0, g1, g2, g3, p)


cdef inline void _accumulate(double *acc, const double *lw, double coef, const double *g,
                             Py_ssize_t m, Py_ssize_t p) noexcept nogil:
    """acc[j, :] += (exp(lw[j]) * coef) * g  for every query j."""
    cdef Py_ssize_t j, k
    cdef double w
    cdef double *row
    for j in range(m):
        w = exp(lw[j]) * coef
        row = acc + j * p
        for k in range(p):
            row[k] = row[k] + w * g[k]


cdef object _prepare(const double[:, ::1] V, Py_ssize_t d):
    """V transposed (d, m) and s_j / 2, as C-contiguous arrays (built with the GIL)."""
    if V.shape[1] != d:
        raise ValueError(f"V has {V.shape[1]} columns, the samples have {d}")
    Va = np.asarray(V)
    half_s = np.zeros(V.shape[0])
    for k in range(d):
        half_s = half_s + Va[:, k] * Va[:, k]
    return np.ascontiguousarray(Va.T), 0.5 * half_s


cdef bitgen_t **_generators(object gens, Py_ssize_t n_samples, bint regen) except? NULL:
    if not regen:
        return NULL
    return bitgen_array(gens, _n_blocks(n_samples))


def draw_samples(object gens,                     # IN  one bit generator per SAMPLE_BLOCK rows
                 double[:, ::1] zeta_out,          # OUT (N, d) standard normal samples
                 int n_threads):
    """Fill ``zeta_out`` with the samples the regenerating entry points would draw."""
    cdef Py_ssize_t n = zeta_out.shape[0], d = zeta_out.shape[1], b, i, lo, hi
    cdef Py_ssize_t nb = _n_blocks(n)
    cdef bitgen_t **g = bitgen_array(gens, nb)
    try:
        with nogil:
            for b in prange(nb, num_threads=n_threads, schedule="dynamic"):
                lo = b * _SAMPLE_BLOCK
                hi = min(lo + _SAMPLE_BLOCK, n)
                for i in range(lo, hi):
                    _draw_row(g[b], &zeta_out[i, 0], d)
    finally:
        free(g)
    return np.asarray(zeta_out)


def resque_log_weights(const double[:, ::1] V,      # IN  (m, d) standardized query offsets
                       const double[:, ::1] zeta,   # IN  (N, d) standardized samples
                       double[:, ::1] lw_out,       # OUT (N, m) log-weights
                       int n_threads):
    """``lw_out[i, j] = <zeta_i, V[j]> - ||V[j]||^2 / 2`` (module docstring)."""
    cdef Py_ssize_t n = zeta.shape[0], d = zeta.shape[1], m = V.shape[0], b, i, lo, hi
    if lw_out.shape[0] != n or lw_out.shape[1] != m:
        raise ValueError(f"lw_out must have shape ({n}, {m})")
    vt_arr, hs_arr = _prepare(V, d)
    cdef const double[:, ::1] vt = vt_arr
    cdef const double[::1] hs = hs_arr
    if n == 0 or m == 0:
        return np.asarray(lw_out)
    if d == 0:                          # empty sums: 0.0 - s_j / 2, as _log_weights
        np.asarray(lw_out)[...] = 0.0 - hs_arr[None, :]
        return np.asarray(lw_out)
    with nogil:
        for b in prange(_n_blocks(n), num_threads=n_threads, schedule="static"):
            lo = b * _SAMPLE_BLOCK
            hi = min(lo + _SAMPLE_BLOCK, n)
            i = lo
            while i + _TILE <= hi:
                _log_weights_tile(&zeta[i, 0], &zeta[i + 1, 0], &zeta[i + 2, 0],
                                  &zeta[i + 3, 0], &vt[0, 0], &hs[0], m, d, &lw_out[i, 0])
                i = i + _TILE
            while i < hi:
                _log_weights(&zeta[i, 0], &vt[0, 0], &hs[0], m, d, &lw_out[i, 0])
                i = i + 1
    return np.asarray(lw_out)


cdef int _weighted_sum(const double *V_t, const double *hs, Py_ssize_t m, Py_ssize_t d,
                       Py_ssize_t n, Py_ssize_t p, const double *zeta, bitgen_t **gens,
                       const double *G, const double *coefs, const int64_t *idx,
                       const double *A, double *partial, double *out,
                       int n_threads) noexcept nogil:
    """Shared loop of resque_batch (coefs NULL: G_i = G[i]) and resque_glm_batch
    (G_i = coefs[i] A[idx[i]]); zeta NULL means regenerate from gens. Returns -1 on a failed
    allocation, else 0."""
    cdef Py_ssize_t nb = _n_blocks(n), b, i, lo, hi, t, s
    cdef double *lw
    cdef double *zrow
    cdef double *acc
    cdef double *ctile
    cdef const double *zi
    cdef const double *gi
    cdef const double *z0
    cdef const double *z1
    cdef const double *z2
    cdef const double *z3
    cdef const double *g0
    cdef const double *g1
    cdef const double *g2
    cdef const double *g3
    cdef double c
    cdef int failed = 0
    lw = NULL
    zrow = NULL
    ctile = NULL
    with parallel(num_threads=n_threads):
        # per thread: the tile's log-weights (4 m), regenerated rows (4 d), coefficients (4)
        # and weights (4)
        lw = <double *> malloc((_TILE * (m + d) + 2 * _TILE + 1) * sizeof(double))
        zrow = lw + _TILE * m
        ctile = zrow + _TILE * d
        for b in prange(nb, schedule="dynamic"):
            if lw == NULL:
                failed += 1
                continue
            lo = b * _SAMPLE_BLOCK
            hi = min(lo + _SAMPLE_BLOCK, n)
            acc = partial + b * m * p
            memset(acc, 0, m * p * sizeof(double))
            i = lo
            while i + _TILE <= hi and d > 0:
                # pointers are scalars assigned here (thread-private), never a shared array
                if zeta == NULL:
                    for s in range(_TILE):      # the rows in stream order, as one at a time
                        _draw_row(gens[b], zrow + s * d, d)
                    z0 = zrow
                else:
                    z0 = zeta + i * d
                z1 = z0 + d
                z2 = z1 + d
                z3 = z2 + d
                if coefs == NULL:
                    g0 = G + i * p
                    g1 = g0 + p
                    g2 = g1 + p
                    g3 = g2 + p
                    for s in range(_TILE):
                        ctile[s] = 1.0
                else:
                    g0 = A + idx[i] * p
                    g1 = A + idx[i + 1] * p
                    g2 = A + idx[i + 2] * p
                    g3 = A + idx[i + 3] * p
                    for s in range(_TILE):
                        ctile[s] = coefs[i + s]
                _log_weights_tile(z0, z1, z2, z3, V_t, hs, m, d, lw)
                _accumulate_tile(acc, lw, ctile, g0, g1, g2, g3, ctile + _TILE, m, p)
                i = i + _TILE
            while i < hi:
                if zeta == NULL:
                    _draw_row(gens[b], zrow, d)
                    zi = zrow
                else:
                    zi = zeta + i * d
                _log_weights(zi, V_t, hs, m, d, lw)
                if coefs == NULL:
                    gi = G + i * p
                    c = 1.0
                else:
                    gi = A + idx[i] * p
                    c = coefs[i]
                _accumulate(acc, lw, c, gi, m, p)
                i = i + 1
        free(lw)
    if failed != 0:
        return -1
    # out = (sum_b partial[b]) / n, blocks added in order from 0.0
    for t in prange(m * p, num_threads=n_threads, schedule="static"):
        c = 0.0
        for b in range(nb):
            c = c + partial[b * m * p + t]
        out[t] = c / n
    return 0


def resque_batch(const double[:, ::1] V,        # IN  (m, d) standardized query offsets
                 const double[:, ::1] zeta,     # IN  (N, d) samples, or (0, d): regenerate
                 const double[:, ::1] G,        # IN  (N, p) stored gradients g(xbar + rho zeta_i)
                 object gens,                   # IN  bit generators (regeneration only)
                 double[:, ::1] out,            # OUT (m, p) ReSQue estimates
                 int n_threads):
    """``out[j] = (1/N) sum_i exp(lw[i, j]) G[i]`` (module docstring)."""
    cdef Py_ssize_t n = G.shape[0], p = G.shape[1], d = zeta.shape[1], m = V.shape[0]
    cdef bint regen = zeta.shape[0] == 0
    if not regen and zeta.shape[0] != n:
        raise ValueError(f"zeta has {zeta.shape[0]} rows, G has {n}")
    if out.shape[0] != m or out.shape[1] != p:
        raise ValueError(f"out must have shape ({m}, {p})")
    if n == 0:
        raise ValueError("need at least one sample")
    vt_arr, hs_arr = _prepare(V, d)
    return _run(vt_arr, hs_arr, m, d, n, p, zeta, regen, gens, G, None, None, None, out,
                n_threads)


def resque_glm_batch(const double[:, ::1] V,      # IN  (m, d) standardized query offsets
                     const double[:, ::1] zeta,   # IN  (N, d) samples, or (0, d): regenerate
                     const double[::1] coefs,     # IN  (N,) loss derivatives c_i
                     const int64_t[::1] idx,      # IN  (N,) row index of sample i
                     const double[:, ::1] A,      # IN  (n, d) feature rows a_z
                     object gens,                 # IN  bit generators (regeneration only)
                     double[:, ::1] out,          # OUT (m, d) ReSQue estimates
                     int n_threads):
    """``out[j] = (1/N) sum_i (exp(lw[i, j]) c_i) A[idx_i]`` (GLM fast path, note K4)."""
    cdef Py_ssize_t n = coefs.shape[0], p = A.shape[1], d = zeta.shape[1], m = V.shape[0]
    cdef bint regen = zeta.shape[0] == 0
    cdef Py_ssize_t i
    if idx.shape[0] != n or (not regen and zeta.shape[0] != n):
        raise ValueError("coefs, idx and zeta must have the same number of rows")
    if p != d or out.shape[0] != m or out.shape[1] != p:
        raise ValueError(f"A must have {d} columns and out shape ({m}, {d})")
    if n == 0:
        raise ValueError("need at least one sample")
    for i in range(n):
        if idx[i] < 0 or idx[i] >= A.shape[0]:
            raise ValueError(f"idx[{i}] = {idx[i]} is out of range [0, {A.shape[0]})")
    vt_arr, hs_arr = _prepare(V, d)
    return _run(vt_arr, hs_arr, m, d, n, p, zeta, regen, gens, None, coefs, idx, A, out,
                n_threads)


cdef object _run(object vt_arr, object hs_arr, Py_ssize_t m, Py_ssize_t d, Py_ssize_t n,
                 Py_ssize_t p, const double[:, ::1] zeta, bint regen, object gens,
                 const double[:, ::1] G, const double[::1] coefs, const int64_t[::1] idx,
                 const double[:, ::1] A, double[:, ::1] out, int n_threads):
    cdef const double[:, ::1] vt = vt_arr
    cdef const double[::1] hs = hs_arr
    partial_arr = np.empty((_n_blocks(n), max(m * p, 1)))
    cdef double[:, ::1] partial = partial_arr
    cdef bitgen_t **g = _generators(gens, n, regen)
    cdef int status
    if m == 0 or p == 0:
        free(g)
        return np.asarray(out)
    try:
        with nogil:
            status = _weighted_sum(
                &vt[0, 0] if d > 0 else NULL, &hs[0], m, d, n, p,
                NULL if regen else &zeta[0, 0], g,
                &G[0, 0] if G is not None else NULL,
                &coefs[0] if coefs is not None else NULL,
                &idx[0] if idx is not None else NULL,
                &A[0, 0] if A is not None else NULL,
                &partial[0, 0], &out[0, 0], n_threads)
    finally:
        free(g)
    if status != 0:
        raise MemoryError()
    return np.asarray(out)


def glm_query_batch(const double[:, ::1] A,       # IN  (n, d) feature rows a_z
                    const double[::1] y,          # IN  (n,) labels / targets
                    const int64_t[::1] idx,       # IN  (N,) sampled rows
                    const double[::1] margins,    # IN  (N,) <a_{idx_i}, xbar> (cached)
                    double rho,                   # IN  smoothing radius
                    const double[:, ::1] zeta,    # IN  (N, d) samples, or (0, d): regenerate
                    object gens,                  # IN  bit generators (regeneration only)
                    int loss_kind, double loss_param,
                    double[::1] coefs_out,        # OUT (N,) c_i = l'(margin_i + rho <a, zeta_i>)
                    int n_threads):
    """The depth-1 query batch of a GLM (note K4): one loss derivative per sample."""
    cdef Py_ssize_t n = idx.shape[0], d = A.shape[1], nb = _n_blocks(idx.shape[0]), b, i, k
    cdef Py_ssize_t lo, hi
    cdef bint regen = zeta.shape[0] == 0
    cdef double *zrow
    cdef const double *zi
    cdef const double *a
    cdef double dot
    cdef int failed = 0
    if margins.shape[0] != n or coefs_out.shape[0] != n or (not regen and zeta.shape[0] != n):
        raise ValueError("idx, margins, zeta and coefs_out must have the same number of rows")
    if zeta.shape[1] != d or y.shape[0] != A.shape[0]:
        raise ValueError("zeta must have A's columns and y A's rows")
    for i in range(n):
        if idx[i] < 0 or idx[i] >= A.shape[0]:
            raise ValueError(f"idx[{i}] = {idx[i]} is out of range [0, {A.shape[0]})")
    cdef bitgen_t **g = _generators(gens, n, regen)
    zrow = NULL
    try:
        with nogil, parallel(num_threads=n_threads):
            zrow = <double *> malloc((d + 1) * sizeof(double))
            for b in prange(nb, schedule="dynamic"):
                if zrow == NULL:
                    failed += 1
                    continue
                lo = b * _SAMPLE_BLOCK
                hi = min(lo + _SAMPLE_BLOCK, n)
                for i in range(lo, hi):
                    if regen:
                        _draw_row(g[b], zrow, d)
                        zi = zrow
                    else:
                        zi = &zeta[i, 0]
                    a = &A[idx[i], 0]
                    # dot = sum_k a[k] zeta_i[k], left to right from 0.0
                    dot = 0.0
                    for k in range(d):
                        dot = dot + a[k] * zi[k]
                    coefs_out[i] = loss_deriv(loss_kind, margins[i] + rho * dot, y[idx[i]],
                                              loss_param)
            free(zrow)
    finally:
        free(g)
    if failed != 0:
        raise MemoryError()
    return np.asarray(coefs_out)
