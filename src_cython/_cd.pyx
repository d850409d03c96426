# cython: language_level=3
"""DP-CD: private proximal coordinate descent (Mangold et al. 2022, Algorithm 1 + section 5).

What it computes (note 002, sections 2, 2.1 and 9): ``n_outer`` outer iterations; each runs
``n_inner`` coordinate updates from its starting point and ends at the average of the
``n_inner`` post-update iterates (``average=True``, line 9 of Algorithm 1, lazy O(1) per update,
note 9.3) or at the last iterate. One update, on coordinate j:

    g_j  = (1/m) sum_i clip(x_ij * l'(z_i, y_i), clip[j]) + noise_scale[j] * N(0, 1)
    w_j <- prox_{step[j] psi_j}(w_j - step[j] * g_j)

where m is ``normaliser``: the dataset's n by default, a public record count under the
add/remove-one relation (the caller passes it; see ``dpsco_core.solvers._common.normaliser``).

with ``clip(v, c) = max(-c, min(c, v))`` and the margins ``z = X w`` cached and updated in O(n)
(O(nnz of the column) for CSC) after each change of w_j; they are recomputed from scratch at
the start of every outer iteration (residual drift, note 9.1). Every loss of ``_loss.pxd`` and
every penalty of ``_prox.pxd`` works. Noise scales, steps and clips are derived (and accounted)
in Python: this module only computes.

Layouts: dense X Fortran-ordered (columns contiguous), or CSC (``data``, ``indices``,
``indptr``; int32 or int64 indices). One nogil core serves both: dense passes no index arrays.
The values (dense X or CSC ``data``) are float64 or float32, read in place: a float32 value is
converted to float64 on load (exact; ``_mm256_cvtps_pd`` on the AVX2 path) and every operation
is the float64 one, so a run on float32 X is bitwise the run on ``X.astype(np.float64)``.

Randomness and draw order (reproduced by ``dpsco_core.reference.cd``): each run owns one bit
generator; update k draws, in this order, the coordinate (``Generator.integers(0, p)``, i.e.
``random_bounded_uint64``; skipped with ``cyclic``, where j = global update count mod p) and
then one standard normal (``Generator.standard_normal()``). The noise is drawn even when
``noise_scale[j] == 0`` so that the stream does not depend on the calibration.

Threading: a single run is sequential (each update depends on the previous one; at the paper's
sizes an OpenMP reduction over n costs more than it saves, note 9.5). The grid entry points
run many independent configurations in parallel (dynamic schedule: runs differ in cost
only through their data-dependent skips), each with its own generator and thread-local scratch,
so results do not depend on the thread count.

Ctrl-C (``_interrupt.pxd``): a run polls for signals every few tens of microseconds of work
(one clock read) and the caller's thread runs Python's handlers about every 50 ms; the grid
hands runs out itself (instead of ``prange``) so that a master with no run left keeps listening
while the other threads finish. An interrupted call raises before returning, and its output
buffers (solver-owned) are left partly updated.

Summation: the per-sample terms of a column go to four lanes by position (term t of the column
to lane t mod 4), each lane summed left to right, and the result is ``(a0 + a1) + (a2 + a3)``.
Four independent accumulators break the add-latency chain (about 4x faster than one) and the
order is fixed, so the twin reproduces it exactly (``np.cumsum`` per lane).

SIMD (``_cd_simd.h``): on a CPU with AVX2 the dense squared and logistic sums run four lanes
in one 4-wide vector (bitwise the same sums), as do the update axpy and the margin refresh
(row-blocked: z written once per block of rows); CSC columns and the other losses use the
scalar loops (gathers were slower on the development machine). CSC with the squared loss and
``count_clipped=False`` runs its own four-lane loop without the count (``_sq_csc_lanes``), and
the CSC axpy and margin refresh are a four-way unrolled scatter (``_scatter_axpy``): the same
operations in the same order. What bounds the CSC kernel is memory: each update reads a random
column (a cold indptr/index/value line) and gathers its rows' margins and labels at random
(bench/README.md, "DP-CD on sparse CSC"). ``set_simd_path("scalar")`` or
``DPSCO_CD_SIMD=scalar`` forces the scalar loops. ``count_clipped=False`` skips counting clipped
terms (returns 0). The axpy after the last update of an outer iteration is skipped when
another outer iteration follows (its margins are recomputed from scratch); on the AVX2 path
with the squared loss an update's axpy is fused into the next update's sum (the same z).
"""

from cython.parallel cimport parallel
from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_bounded_uint64, random_standard_normal

from _interrupt cimport (Interrupt, POLL_WORK, interrupt_init, item_done, master_wait,
                         next_item, poll, raise_if_interrupted)
from _loss cimport LOSS_LOGISTIC, LOSS_SQUARED, loss_deriv
from _prox cimport prox_scalar
from _rng cimport bitgen_array

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused real_t:
    float
    double

cdef struct Settings:
    Py_ssize_t n
    Py_ssize_t p
    int loss_kind
    double loss_param
    int penalty_kind
    double penalty_p1
    double penalty_p2
    Py_ssize_t n_outer
    Py_ssize_t n_inner
    bint average
    bint cyclic
    Py_ssize_t update_offset   # global index of the first update (cyclic selection)
    double normaliser          # m: the clipped sum is divided by it
    bint count_clipped         # False: the clipped-term count is not needed (returned as 0)


cdef inline double _clip_term(double term, double c, Py_ssize_t *n_clipped) noexcept nogil:
    """max(-c, min(c, term)), counting clipped terms; branch-free (min/max instructions)."""
    n_clipped[0] += fabs(term) > c
    term = term if term < c else c
    return term if term > -c else -c


cdef inline double _lanes(const real_t *vals, const index_t *rows, Py_ssize_t m,
                          const double *z, const double *y, int loss_kind, double loss_param,
                          double c, Py_ssize_t *n_clipped) noexcept nogil:
    """sum_t clip(vals[t] * l'(z[i_t], y[i_t]), c) over the m entries of one column, in four
    lanes (see the module docstring); rows == NULL means i_t = t (dense)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t t, i, head = m - m % 4
    if rows == NULL:
        for t in range(0, head, 4):
            a0 = a0 + _clip_term(vals[t] * loss_deriv(loss_kind, z[t], y[t], loss_param), c, n_clipped)
            a1 = a1 + _clip_term(vals[t + 1] * loss_deriv(loss_kind, z[t + 1], y[t + 1], loss_param), c, n_clipped)
            a2 = a2 + _clip_term(vals[t + 2] * loss_deriv(loss_kind, z[t + 2], y[t + 2], loss_param), c, n_clipped)
            a3 = a3 + _clip_term(vals[t + 3] * loss_deriv(loss_kind, z[t + 3], y[t + 3], loss_param), c, n_clipped)
        for t in range(head, m):
            i = t
            if t - head == 0:
                a0 = a0 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            elif t - head == 1:
                a1 = a1 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            else:
                a2 = a2 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
    else:
        for t in range(0, head, 4):
            i = rows[t]
            a0 = a0 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            i = rows[t + 1]
            a1 = a1 + _clip_term(vals[t + 1] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            i = rows[t + 2]
            a2 = a2 + _clip_term(vals[t + 2] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            i = rows[t + 3]
            a3 = a3 + _clip_term(vals[t + 3] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
        for t in range(head, m):
            i = rows[t]
            if t - head == 0:
                a0 = a0 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            elif t - head == 1:
                a1 = a1 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
            else:
                a2 = a2 + _clip_term(vals[t] * loss_deriv(loss_kind, z[i], y[i], loss_param), c, n_clipped)
    return (a0 + a1) + (a2 + a3)


cdef inline double _sq_csc_term(double v, double zi, double yi, double c) noexcept nogil:
    """clip(v * l'(z, y), c) for the squared loss, the operations of ``_clip_term`` and
    ``loss_deriv`` (l' = 2 (z - y)) without the clipped count."""
    cdef double term = v * (2.0 * (zi - yi))
    term = term if term < c else c
    return term if term > -c else -c


cdef double _sq_csc_lanes(const real_t *vals, const index_t *rows, Py_ssize_t m,
                          const double *z, const double *y, double c) noexcept nogil:
    """``_lanes`` for a CSC column and the squared loss without the clipped count
    (``count_clipped=False``: dp_cd without a history): the same terms in the same four lanes,
    a third fewer instructions per entry than the counting loop."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t t, i, head = m - m % 4
    for t in range(0, head, 4):
        i = rows[t]
        a0 = a0 + _sq_csc_term(vals[t], z[i], y[i], c)
        i = rows[t + 1]
        a1 = a1 + _sq_csc_term(vals[t + 1], z[i], y[i], c)
        i = rows[t + 2]
        a2 = a2 + _sq_csc_term(vals[t + 2], z[i], y[i], c)
        i = rows[t + 3]
        a3 = a3 + _sq_csc_term(vals[t + 3], z[i], y[i], c)
    if m - head > 0:
        i = rows[head]
        a0 = a0 + _sq_csc_term(vals[head], z[i], y[i], c)
    if m - head > 1:
        i = rows[head + 1]
        a1 = a1 + _sq_csc_term(vals[head + 1], z[i], y[i], c)
    if m - head > 2:
        i = rows[head + 2]
        a2 = a2 + _sq_csc_term(vals[head + 2], z[i], y[i], c)
    return (a0 + a1) + (a2 + a3)


cdef extern from "_cd_simd.h" nogil:
    int dpsco_cd_avx2
    int dpsco_cd_init(int requested)
    void dpsco_cd_margins_scalar(const double *X, Py_ssize_t n, Py_ssize_t p,
                                 const double *coef, double *z) noexcept
    void dpsco_cd_margins_avx2(const double *X, Py_ssize_t n, Py_ssize_t p,
                               const double *coef, double *z) noexcept
    void dpsco_cd_axpy_scalar(double *z, double a, const double *x, Py_ssize_t n) noexcept
    void dpsco_cd_axpy_avx2(double *z, double a, const double *x, Py_ssize_t n) noexcept
    # float32 X: the same loops, each value converted to double on load
    void dpsco_cd_margins_scalar_f32(const float *X, Py_ssize_t n, Py_ssize_t p,
                                     const double *coef, double *z) noexcept
    void dpsco_cd_margins_avx2_f32(const float *X, Py_ssize_t n, Py_ssize_t p,
                                   const double *coef, double *z) noexcept
    void dpsco_cd_axpy_scalar_f32(double *z, double a, const float *x, Py_ssize_t n) noexcept
    void dpsco_cd_axpy_avx2_f32(double *z, double a, const float *x, Py_ssize_t n) noexcept
    double dpsco_cd_sq_dense_avx2_f32(const float *vals, const double *z, const double *y,
                                      Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                      unsigned char *try_fast, int count) noexcept
    double dpsco_cd_sq_dense_fused_avx2_f32(double *z, double delta, const float *xprev,
                                            const float *vals, const double *y, Py_ssize_t m,
                                            double c, Py_ssize_t *n_clipped,
                                            unsigned char *try_fast, int count) noexcept
    double dpsco_cd_log_dense_avx2_f32(const float *vals, const double *z, const double *y,
                                       Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                       unsigned char *try_fast, int count) noexcept
    double dpsco_cd_sq_dense_avx2(const double *vals, const double *z, const double *y,
                                  Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                  unsigned char *try_fast, int count) noexcept
    double dpsco_cd_sq_dense_fused_avx2(double *z, double delta, const double *xprev,
                                        const double *vals, const double *y, Py_ssize_t m,
                                        double c, Py_ssize_t *n_clipped,
                                        unsigned char *try_fast, int count) noexcept
    double dpsco_cd_log_dense_avx2(const double *vals, const double *z, const double *y,
                                   Py_ssize_t m, double c, Py_ssize_t *n_clipped,
                                   unsigned char *try_fast, int count) noexcept


_SIMD_PATHS = ("scalar", "avx2")


def set_simd_path(str path):
    """Choose the inner loops: ``"auto"`` (AVX2 when the CPU has it) or ``"scalar"``.

    Both give bitwise the same results (``_cd_simd.h``); the switch exists so that tests run
    both on one machine. The environment variable ``DPSCO_CD_SIMD=scalar`` sets it at import.
    Not thread-safe: call it between kernel calls. Returns the path now in use."""
    if path not in ("auto", "scalar"):
        raise ValueError(f"path must be 'auto' or 'scalar'; got {path!r}")
    return _SIMD_PATHS[dpsco_cd_init(1 if path == "auto" else 0)]


def simd_path():
    """The inner loops in use: ``"avx2"`` or ``"scalar"``."""
    return _SIMD_PATHS[dpsco_cd_avx2]


import os as _os
set_simd_path("scalar" if _os.environ.get("DPSCO_CD_SIMD", "").strip().lower() == "scalar"
              else "auto")


cdef extern from "_exp_poly.h" nogil:
    void dpsco_logistic_clipped_terms(const double *vals, const double *z, const double *y,
                                      Py_ssize_t m, double c, double *out,
                                      double *clipped) noexcept


cdef enum:
    CHUNK = 256     # terms per vectorized block; a multiple of 4 keeps the lane of term t at t % 4


cdef double _logistic_lanes(const real_t *vals, const index_t *rows, Py_ssize_t m,
                            const double *z, const double *y, double c,
                            Py_ssize_t *n_clipped) noexcept nogil:
    """``_lanes`` for the logistic loss, bitwise equal to it: the clipped terms of a block of
    CHUNK samples are computed by one vectorized loop (``_exp_poly.h``; the exp per sample is
    what bounds DP-CD on logistic problems), then summed into the same four lanes in the same
    order. CSC columns gather their margins and labels into the block first, float32 values
    are converted into a float64 block first (exact). The clip flags are summed in four lanes
    too (integer-valued doubles: exact)."""
    cdef double v_block[CHUNK]
    cdef const double *v
    cdef double terms[CHUNK]
    cdef double flags[CHUNK]
    cdef double z_block[CHUNK]
    cdef double y_block[CHUNK]
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef double k0 = 0.0, k1 = 0.0, k2 = 0.0, k3 = 0.0
    cdef Py_ssize_t block, start, size, t, head
    for block in range((m + CHUNK - 1) // CHUNK):
        start = block * CHUNK
        size = m - start if m - start < CHUNK else CHUNK
        if real_t is double:
            v = vals + start
        else:
            for t in range(size):
                v_block[t] = vals[start + t]
            v = v_block
        if rows == NULL:
            dpsco_logistic_clipped_terms(v, z + start, y + start, size, c, terms, flags)
        else:
            for t in range(size):
                z_block[t] = z[rows[start + t]]
                y_block[t] = y[rows[start + t]]
            dpsco_logistic_clipped_terms(v, z_block, y_block, size, c, terms, flags)
        head = size - size % 4
        for t in range(0, head, 4):
            a0 = a0 + terms[t]
            a1 = a1 + terms[t + 1]
            a2 = a2 + terms[t + 2]
            a3 = a3 + terms[t + 3]
            k0 = k0 + flags[t]
            k1 = k1 + flags[t + 1]
            k2 = k2 + flags[t + 2]
            k3 = k3 + flags[t + 3]
        # a ragged tail only in the last block (CHUNK is a multiple of 4)
        for t in range(head, size):
            k0 = k0 + flags[t]
            if t - head == 0:
                a0 = a0 + terms[t]
            elif t - head == 1:
                a1 = a1 + terms[t]
            else:
                a2 = a2 + terms[t]
    n_clipped[0] += <Py_ssize_t> ((k0 + k1) + (k2 + k3))
    return (a0 + a1) + (a2 + a3)


cdef inline double _clipped_sum(const real_t *vals, const index_t *rows, Py_ssize_t m,
                                const double *z, const double *y, int loss_kind,
                                double loss_param, double c, Py_ssize_t *n_clipped,
                                unsigned char *try_fast, int count) noexcept nogil:
    """``_lanes`` with the loss kind a literal in the common cases, so that the C compiler
    specializes the inlined loop and the loss switch leaves the per-sample path; the AVX2 loops
    of ``_cd_simd.h`` (bitwise the same) for the squared and logistic losses when selected.
    ``try_fast`` is the column's hint for the unclipped first try (AVX2 squared loss only);
    with ``count`` false the AVX2 loops skip counting clipped terms (``n_clipped`` is then
    meaningless)."""
    if dpsco_cd_avx2 and rows == NULL:
        if real_t is double:
            if loss_kind == LOSS_SQUARED:
                return dpsco_cd_sq_dense_avx2(vals, z, y, m, c, n_clipped, try_fast, count)
            if loss_kind == LOSS_LOGISTIC:
                return dpsco_cd_log_dense_avx2(vals, z, y, m, c, n_clipped, try_fast, count)
        else:
            if loss_kind == LOSS_SQUARED:
                return dpsco_cd_sq_dense_avx2_f32(vals, z, y, m, c, n_clipped, try_fast, count)
            if loss_kind == LOSS_LOGISTIC:
                return dpsco_cd_log_dense_avx2_f32(vals, z, y, m, c, n_clipped, try_fast, count)
    if loss_kind == LOSS_SQUARED:
        if rows != NULL and not count:
            return _sq_csc_lanes(vals, rows, m, z, y, c)
        return _lanes(vals, rows, m, z, y, LOSS_SQUARED, loss_param, c, n_clipped)
    if loss_kind == LOSS_LOGISTIC:
        return _logistic_lanes(vals, rows, m, z, y, c, n_clipped)
    return _lanes(vals, rows, m, z, y, loss_kind, loss_param, c, n_clipped)


cdef inline void _scatter_axpy(double *z, double a, const real_t *vals, const index_t *rows,
                               Py_ssize_t m) noexcept nogil:
    """z[rows[t]] += a * vals[t] for t = 0..m-1 (one CSC column), unrolled by four: the loop
    counter and branch were three of the eight instructions per entry. The same operations in
    the same order (a column lists a row once; the statements keep their order regardless)."""
    cdef Py_ssize_t t, head = m - m % 4
    for t in range(0, head, 4):
        z[rows[t]] += a * vals[t]
        z[rows[t + 1]] += a * vals[t + 1]
        z[rows[t + 2]] += a * vals[t + 2]
        z[rows[t + 3]] += a * vals[t + 3]
    for t in range(head, m):
        z[rows[t]] += a * vals[t]


cdef void _margins(const real_t *data, const index_t *indices, const index_t *indptr,
                   const double *coef, Settings *s, double *z) noexcept nogil:
    """z = X @ coef, column by column (indices == NULL: dense Fortran-ordered data)."""
    cdef Py_ssize_t i, j, k
    if indices == NULL:
        # row-blocked, the same sum per element (_cd_simd.h)
        if real_t is double:
            if dpsco_cd_avx2:
                dpsco_cd_margins_avx2(data, s.n, s.p, coef, z)
            else:
                dpsco_cd_margins_scalar(data, s.n, s.p, coef, z)
        else:
            if dpsco_cd_avx2:
                dpsco_cd_margins_avx2_f32(data, s.n, s.p, coef, z)
            else:
                dpsco_cd_margins_scalar_f32(data, s.n, s.p, coef, z)
        return
    for i in range(s.n):
        z[i] = 0.0
    cdef double cj
    for j in range(s.p):
        cj = coef[j]            # a local: z and coef may alias for the compiler
        if cj == 0.0:
            continue
        _scatter_axpy(z, cj, data + indptr[j], indices + indptr[j], indptr[j + 1] - indptr[j])


cdef Py_ssize_t _run(const real_t *data, const index_t *indices, const index_t *indptr,
                     const double *y, const double *step, const double *clip,
                     const double *noise_scale, double *coef, Settings *s, bitgen_t *gen,
                     double *z, double *sums, Py_ssize_t *last,
                     Interrupt *it) noexcept nogil:
    """All outer iterations of one run; returns the number of clipped per-sample terms (the
    run stops early, leaving ``coef`` partly updated, once ``it`` is interrupted), or -1 if
    its scratch could not be allocated."""
    cdef unsigned char *try_fast = <unsigned char *> malloc(s.p)
    cdef Py_ssize_t j, n_clipped
    if try_fast == NULL:
        return -1
    for j in range(s.p):
        try_fast[j] = 1
    n_clipped = _run_body(data, indices, indptr, y, step, clip, noise_scale, coef, s, gen, z,
                          sums, last, try_fast, it)
    free(try_fast)
    return n_clipped if s.count_clipped else 0


cdef Py_ssize_t _run_body(const real_t *data, const index_t *indices, const index_t *indptr,
                          const double *y, const double *step, const double *clip,
                          const double *noise_scale, double *coef, Settings *s, bitgen_t *gen,
                          double *z, double *sums, Py_ssize_t *last, unsigned char *try_fast,
                          Interrupt *it) noexcept nogil:
    cdef Py_ssize_t t, k, i, j, idx, n_clipped = 0, update = s.update_offset
    cdef Py_ssize_t budget = POLL_WORK
    cdef double acc, g, w_new, delta
    # AVX2, dense, squared loss: an update's axpy is deferred into the next update's sum
    # (one pass over z instead of two; _cd_simd.h); never past the end of an inner loop
    cdef bint fuse = dpsco_cd_avx2 and indices == NULL and s.loss_kind == LOSS_SQUARED
    cdef double pending_delta = 0.0
    cdef const real_t *pending_col = NULL
    cdef double inv_n = 1.0 / s.normaliser
    cdef const real_t *col
    for t in range(s.n_outer):
        if poll(it, &budget, s.n * s.p if indices == NULL else indptr[s.p]):
            return n_clipped
        _margins(data, indices, indptr, coef, s, z)
        if s.average:
            for j in range(s.p):
                sums[j] = 0.0
                last[j] = 1
        for k in range(s.n_inner):
            if s.cyclic:
                j = update % s.p
            else:
                j = <Py_ssize_t> random_bounded_uint64(gen, 0, <uint64_t> (s.p - 1), 0, 0)
            update += 1
            if poll(it, &budget, 8 + (s.n if indices == NULL else indptr[j + 1] - indptr[j])):
                return n_clipped
            g = noise_scale[j] * random_standard_normal(gen)
            # acc = sum_i clip(x_ij * l'(z_i, y_i), clip[j])
            if indices == NULL:
                col = data + j * s.n
                if pending_col != NULL:
                    if real_t is double:
                        acc = dpsco_cd_sq_dense_fused_avx2(z, pending_delta, pending_col, col,
                                                           y, s.n, clip[j], &n_clipped,
                                                           &try_fast[j], s.count_clipped)
                    else:
                        acc = dpsco_cd_sq_dense_fused_avx2_f32(z, pending_delta, pending_col,
                                                               col, y, s.n, clip[j],
                                                               &n_clipped, &try_fast[j],
                                                               s.count_clipped)
                    pending_col = NULL
                else:
                    acc = _clipped_sum(col, indices, s.n, z, y, s.loss_kind, s.loss_param,
                                       clip[j], &n_clipped, &try_fast[j], s.count_clipped)
            else:
                acc = _clipped_sum(data + indptr[j], indices + indptr[j],
                                   indptr[j + 1] - indptr[j], z, y, s.loss_kind, s.loss_param,
                                   clip[j], &n_clipped, &try_fast[j], s.count_clipped)
            g = acc * inv_n + g
            w_new = prox_scalar(s.penalty_kind, coef[j] - step[j] * g, step[j],
                                s.penalty_p1, s.penalty_p2)
            delta = w_new - coef[j]
            if delta == 0.0:
                continue
            # z += delta * X[:, j], except after the last update of an outer iteration that
            # another follows: its start recomputes z from scratch anyway
            if k == s.n_inner - 1 and t < s.n_outer - 1:
                pass
            elif indices == NULL:
                if fuse and k < s.n_inner - 1:
                    pending_delta = delta
                    pending_col = col
                elif real_t is double:
                    if dpsco_cd_avx2:
                        dpsco_cd_axpy_avx2(z, delta, col, s.n)
                    else:
                        dpsco_cd_axpy_scalar(z, delta, col, s.n)
                elif dpsco_cd_avx2:
                    dpsco_cd_axpy_avx2_f32(z, delta, col, s.n)
                else:
                    dpsco_cd_axpy_scalar_f32(z, delta, col, s.n)
            else:
                _scatter_axpy(z, delta, data + indptr[j], indices + indptr[j],
                              indptr[j + 1] - indptr[j])
            if s.average:
                sums[j] += coef[j] * (k + 1 - last[j])
                last[j] = k + 1
            coef[j] = w_new
        if s.average:
            for j in range(s.p):
                coef[j] = (sums[j] + coef[j] * (s.n_inner + 1 - last[j])) / s.n_inner
    return n_clipped


cdef Settings _settings(Py_ssize_t n, Py_ssize_t p, int loss_kind, double loss_param,
                        int penalty_kind, double penalty_p1, double penalty_p2,
                        Py_ssize_t n_outer, Py_ssize_t n_inner, bint average, bint cyclic,
                        Py_ssize_t update_offset, object normaliser,
                        bint count_clipped=True) except *:
    if n < 1 or p < 1:
        raise ValueError(f"X must have at least one row and one column; got ({n}, {p})")
    if n_outer < 0 or n_inner < 1:
        raise ValueError(f"need n_outer >= 0 and n_inner >= 1; got {n_outer}, {n_inner}")
    cdef Settings s
    s.n = n
    s.p = p
    s.loss_kind = loss_kind
    s.loss_param = loss_param
    s.penalty_kind = penalty_kind
    s.penalty_p1 = penalty_p1
    s.penalty_p2 = penalty_p2
    s.n_outer = n_outer
    s.n_inner = n_inner
    s.average = average
    s.cyclic = cyclic
    s.update_offset = update_offset
    s.normaliser = <double> n if normaliser is None else <double> normaliser
    s.count_clipped = count_clipped
    if not 0.0 < s.normaliser < float("inf"):
        raise ValueError(f"normaliser must be in (0, inf); got {normaliser!r}")
    return s


cdef _check_vectors(Py_ssize_t n, Py_ssize_t p, const double[::1] y, const double[::1] step,
                    const double[::1] clip, const double[::1] noise_scale, double[::1] coef):
    if y.shape[0] != n:
        raise ValueError(f"y has length {y.shape[0]}, X has {n} rows")
    for name, length in (("step", step.shape[0]), ("clip", clip.shape[0]),
                         ("noise_scale", noise_scale.shape[0]), ("coef", coef.shape[0])):
        if length != p:
            raise ValueError(f"{name} has length {length}, X has {p} columns")


cdef _check_csc(Py_ssize_t n, Py_ssize_t p, Py_ssize_t nnz, Py_ssize_t n_indices,
                Py_ssize_t n_indptr):
    if n_indptr != p + 1 or n_indices != nnz:
        raise ValueError("inconsistent CSC arrays (indptr must have p + 1 entries and indices "
                         "as many as data)")


def cd_dense(const real_t[::1, :] X,       # IN  (n, p) Fortran-ordered, float64 or float32
             const double[::1] y,          # IN  (n,)
             int loss_kind, double loss_param,
             int penalty_kind, double penalty_p1, double penalty_p2,
             const double[::1] step,       # IN  (p,) gamma_j
             const double[::1] clip,       # IN  (p,) C_j (inf: no clipping)
             const double[::1] noise_scale,  # IN  (p,) sigma_j (absolute)
             double[::1] coef,             # IN/OUT (p,) start point, then result
             Py_ssize_t n_outer, Py_ssize_t n_inner, bint average, bint cyclic,
             Py_ssize_t update_offset,
             object bit_generator,         # one numpy BitGenerator, advanced in place
             double[::1] margin_out,       # OUT (n,) scratch: the margins X @ coef at the end
             object normaliser=None,       # m > 0 dividing the clipped sum (None: n)
             bint count_clipped=True):     # False: skip counting (faster); returns 0
    """Run DP-CD on dense data; ``coef`` is updated in place. Returns the clipped-term count
    (0 with ``count_clipped=False``: the count is a non-private diagnostic that callers only
    need with a history, and counting costs about a third of the AVX2 inner loop).

    ``margin_out`` holds X @ coef of the last iterate before averaging (a scratch buffer).
    X float32 is read in place, each value converted to float64 on load: the run is bitwise the
    run on ``X.astype(np.float64)``.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Settings s = _settings(n, p, loss_kind, loss_param, penalty_kind, penalty_p1,
                                penalty_p2, n_outer, n_inner, average, cyclic, update_offset,
                                normaliser, count_clipped)
    _check_vectors(n, p, y, step, clip, noise_scale, coef)
    if margin_out.shape[0] != n:
        raise ValueError(f"margin_out has length {margin_out.shape[0]}, X has {n} rows")
    cdef bitgen_t **gens = bitgen_array([bit_generator], 1)
    cdef double *sums = <double *> malloc(p * sizeof(double))
    cdef Py_ssize_t *last = <Py_ssize_t *> malloc(p * sizeof(Py_ssize_t))
    cdef Py_ssize_t n_clipped = 0
    cdef Interrupt it
    interrupt_init(&it)
    try:
        if sums == NULL or last == NULL:
            raise MemoryError()
        with nogil:
            n_clipped = _run(&X[0, 0], <const int32_t *> NULL, <const int32_t *> NULL, &y[0],
                             &step[0], &clip[0], &noise_scale[0], &coef[0], &s, gens[0],
                             &margin_out[0], sums, last, &it)
    finally:
        free(gens)
        free(sums)
        free(last)
    raise_if_interrupted(&it)
    if n_clipped < 0:
        raise MemoryError()
    return n_clipped


def cd_csc(const real_t[::1] data,         # IN  (nnz,) CSC values, float64 or float32
           const index_t[::1] indices,     # IN  (nnz,) row indices
           const index_t[::1] indptr,      # IN  (p + 1,)
           Py_ssize_t n_rows,
           const double[::1] y, int loss_kind, double loss_param,
           int penalty_kind, double penalty_p1, double penalty_p2,
           const double[::1] step, const double[::1] clip, const double[::1] noise_scale,
           double[::1] coef,               # IN/OUT (p,)
           Py_ssize_t n_outer, Py_ssize_t n_inner, bint average, bint cyclic,
           Py_ssize_t update_offset, object bit_generator,
           double[::1] margin_out,         # OUT (n,)
           object normaliser=None,         # m > 0 (None: n_rows)
           bint count_clipped=True):
    """Run DP-CD on CSC data (sorted or unsorted indices, no duplicates); see ``cd_dense``."""
    cdef Py_ssize_t p = indptr.shape[0] - 1
    cdef Settings s = _settings(n_rows, p, loss_kind, loss_param, penalty_kind, penalty_p1,
                                penalty_p2, n_outer, n_inner, average, cyclic, update_offset,
                                normaliser, count_clipped)
    _check_csc(n_rows, p, data.shape[0], indices.shape[0], indptr.shape[0])
    _check_vectors(n_rows, p, y, step, clip, noise_scale, coef)
    if margin_out.shape[0] != n_rows:
        raise ValueError(f"margin_out has length {margin_out.shape[0]}, X has {n_rows} rows")
    cdef bitgen_t **gens = bitgen_array([bit_generator], 1)
    cdef double *sums = <double *> malloc(p * sizeof(double))
    cdef Py_ssize_t *last = <Py_ssize_t *> malloc(p * sizeof(Py_ssize_t))
    cdef Py_ssize_t n_clipped = 0
    cdef const real_t *data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const index_t *indices_ptr = &indices[0] if indices.shape[0] > 0 else &indptr[0]
    cdef Interrupt it
    interrupt_init(&it)
    try:
        if sums == NULL or last == NULL:
            raise MemoryError()
        with nogil:
            n_clipped = _run(data_ptr, indices_ptr, &indptr[0], &y[0], &step[0], &clip[0],
                             &noise_scale[0], &coef[0], &s, gens[0], &margin_out[0], sums,
                             last, &it)
    finally:
        free(gens)
        free(sums)
        free(last)
    raise_if_interrupted(&it)
    if n_clipped < 0:
        raise MemoryError()
    return n_clipped


cdef int _grid(const real_t *data, const index_t *indices, const index_t *indptr,
               const double *y, const double[:, ::1] step, const double[:, ::1] clip,
               const double[:, ::1] noise_scale, double[:, ::1] coef, Settings *s,
               bitgen_t **gens, int64_t *n_clipped, int n_threads, Interrupt *it) noexcept nogil:
    """Independent runs r = 0..R-1 in parallel; returns -1 if scratch allocation failed.

    Runs are handed out one at a time (``next_item``: the dynamic schedule, and which thread
    runs a run never changes it); the master then waits for the others listening for signals.
    """
    cdef Py_ssize_t r, n_runs = coef.shape[0]
    cdef double *z
    cdef double *sums
    cdef Py_ssize_t *last
    cdef int failed = 0
    with parallel(num_threads=n_threads):
        z = <double *> malloc(s.n * sizeof(double))
        sums = <double *> malloc(s.p * sizeof(double))
        last = <Py_ssize_t *> malloc(s.p * sizeof(Py_ssize_t))
        r = next_item(it)
        while r < n_runs:
            if z == NULL or sums == NULL or last == NULL:
                n_clipped[r] = -1       # no clipped count is negative: marks the failure
            else:
                n_clipped[r] = _run(data, indices, indptr, y, &step[r, 0], &clip[r, 0],
                                    &noise_scale[r, 0], &coef[r, 0], s, gens[r], z, sums,
                                    last, it)
            item_done(it)
            r = next_item(it)
        master_wait(it, n_runs)
        free(z)
        free(sums)
        free(last)
    for r in range(n_runs):
        if n_clipped[r] < 0:
            failed = 1
    return -1 if failed else 0


def cd_grid_dense(const real_t[::1, :] X, const double[::1] y,
                  int loss_kind, double loss_param,
                  int penalty_kind, double penalty_p1, double penalty_p2,
                  const double[:, ::1] step,         # IN  (R, p) one row per configuration
                  const double[:, ::1] clip,         # IN  (R, p)
                  const double[:, ::1] noise_scale,  # IN  (R, p)
                  double[:, ::1] coef,               # IN/OUT (R, p)
                  Py_ssize_t n_outer, Py_ssize_t n_inner, bint average, bint cyclic,
                  object bit_generators,             # IN  R generators, one per run
                  int64_t[::1] n_clipped_out,        # OUT (R,)
                  int n_threads,
                  object normaliser=None,            # m > 0 (None: n)
                  bint count_clipped=True):          # False: n_clipped_out gets zeros
    """R independent DP-CD runs on dense data, in parallel over runs (see ``cd_dense``)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], n_runs = coef.shape[0]
    cdef Settings s = _settings(n, p, loss_kind, loss_param, penalty_kind, penalty_p1,
                                penalty_p2, n_outer, n_inner, average, cyclic, 0, normaliser,
                                count_clipped)
    _check_grid(n, p, n_runs, y, step, clip, noise_scale, coef, n_clipped_out)
    if n_runs == 0:
        return
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_runs)
    cdef int status
    cdef Interrupt it
    interrupt_init(&it)
    try:
        with nogil:
            status = _grid(&X[0, 0], <const int32_t *> NULL, <const int32_t *> NULL, &y[0],
                           step, clip, noise_scale, coef, &s, gens, &n_clipped_out[0],
                           n_threads, &it)
    finally:
        free(gens)
    raise_if_interrupted(&it)
    if status != 0:
        raise MemoryError()


def cd_grid_csc(const real_t[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                Py_ssize_t n_rows, const double[::1] y, int loss_kind, double loss_param,
                int penalty_kind, double penalty_p1, double penalty_p2,
                const double[:, ::1] step, const double[:, ::1] clip,
                const double[:, ::1] noise_scale, double[:, ::1] coef,
                Py_ssize_t n_outer, Py_ssize_t n_inner, bint average, bint cyclic,
                object bit_generators, int64_t[::1] n_clipped_out, int n_threads,
                object normaliser=None, bint count_clipped=True):
    """R independent DP-CD runs on CSC data, in parallel over runs (see ``cd_csc``)."""
    cdef Py_ssize_t p = indptr.shape[0] - 1, n_runs = coef.shape[0]
    cdef Settings s = _settings(n_rows, p, loss_kind, loss_param, penalty_kind, penalty_p1,
                                penalty_p2, n_outer, n_inner, average, cyclic, 0, normaliser,
                                count_clipped)
    _check_csc(n_rows, p, data.shape[0], indices.shape[0], indptr.shape[0])
    _check_grid(n_rows, p, n_runs, y, step, clip, noise_scale, coef, n_clipped_out)
    if n_runs == 0:
        return
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_runs)
    cdef const real_t *data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const index_t *indices_ptr = &indices[0] if indices.shape[0] > 0 else &indptr[0]
    cdef int status
    cdef Interrupt it
    interrupt_init(&it)
    try:
        with nogil:
            status = _grid(data_ptr, indices_ptr, &indptr[0], &y[0], step, clip, noise_scale,
                           coef, &s, gens, &n_clipped_out[0], n_threads, &it)
    finally:
        free(gens)
    raise_if_interrupted(&it)
    if status != 0:
        raise MemoryError()


cdef _check_grid(Py_ssize_t n, Py_ssize_t p, Py_ssize_t n_runs, const double[::1] y,
                 const double[:, ::1] step, const double[:, ::1] clip,
                 const double[:, ::1] noise_scale, double[:, ::1] coef,
                 int64_t[::1] n_clipped_out):
    if y.shape[0] != n:
        raise ValueError(f"y has length {y.shape[0]}, X has {n} rows")
    for name, arr_rows, arr_cols in (("step", step.shape[0], step.shape[1]),
                                     ("clip", clip.shape[0], clip.shape[1]),
                                     ("noise_scale", noise_scale.shape[0], noise_scale.shape[1]),
                                     ("coef", coef.shape[0], coef.shape[1])):
        if arr_rows != n_runs or arr_cols != p:
            raise ValueError(f"{name} has shape ({arr_rows}, {arr_cols}); expected ({n_runs}, {p})")
    if n_clipped_out.shape[0] != n_runs:
        raise ValueError(f"n_clipped_out has length {n_clipped_out.shape[0]}; expected {n_runs}")
