# cython: language_level=3
"""Clipped per-sample gradient sums of linear models, and the proximal DP-SGD loop built on them.

What it computes (note 002 sections 4 and 9.4; note 004 section 9.2). For a batch of rows
``rows`` and a point ``coef``, ``batch_grad_*`` returns

    S = sum_{i in rows} clip(l'(<x_i, coef>, y_i) x_i, C),  clip(v, C) = v min(1, C / ||v||_2),

in one pass over the rows: ``z_i = <x_i, coef>``, ``phi_i = l'(z_i, y_i)`` (``_loss.pxd``), the
per-sample gradient norm is ``|phi_i| ||x_i||_2`` from precomputed row norms, and the row adds
``phi_i min(1, C / norm) x_i`` (``_batch.pxd``: no per-sample gradient vector is formed). It
also returns the number of clipped rows. ``batch_diff_*`` is the same pass for the DP-SRGD
two-point differences ``eta_t l'(<x_i, x_t>) x_i - eta_{t-1} l'(<x_i, x_{t-1}>) x_i``
(note 003, section 12 K1), clipped as one vector. ``sgd_*`` runs ``n_steps`` proximal DP-SGD steps:

    B_k = sampled batch;  g = (S(B_k, w) + N(0, noise_scale^2 I_p)) / norm
    w  <- prox_{step psi}(w - step g)

with the penalty of ``_prox.pxd`` applied coordinate-wise. Noise scale, normalisation
(``q n`` for Poisson sampling, the batch size for shuffling) and step are derived and accounted
in Python (``dpsco_core.solvers.dp_sgd``): this module only computes.

Layouts and dtypes: dense X, float64 or float32, any strides (C-ordered, Fortran-ordered or a
strided view), or CSR float64 (``data``, ``indices``, ``indptr``; int32 or int64 indices). One
nogil core serves all: dense passes no index arrays. Dense float64 C-ordered X is read in place;
any other dense X is read without a copy of X: each block first gathers its (at most
``BATCH_BLOCK``) rows into a per-thread buffer of ``BATCH_BLOCK * p`` doubles (the float32 ->
float64 conversion is exact), and the block then runs the float64 C-ordered code on the buffer.
Every arithmetic operation is therefore the float64 one on the same values in the same order:
the result on float32 X (or on a Fortran-ordered X) is bitwise the result on
``np.ascontiguousarray(X, dtype=np.float64)``. The buffers hold ``n_threads * BATCH_BLOCK * p``
doubles (0.2 MB per thread at p = 100).

Threading and summation order (results bitwise identical for any ``n_threads``): the batch is
cut into blocks of ``BATCH_BLOCK`` consecutive batch rows. Block b's partial sum starts at +0.0
and adds its rows' contributions in batch order (``axpy_row``); the blocks of a group of
``BATCH_GROUP`` blocks run in parallel (static schedule over blocks; serially when the group
has one block or less than ``BATCH_PARALLEL_MIN_WORK`` row entries, so small batches pay no
fork/join), each
into its own preallocated partial of length p, and ``S`` (starting at +0.0) adds the partials in
block order. Margins use ``dot_row``'s four-lane order. Scratch is allocated once per call
and NULL-checked.

Randomness and draw order of ``sgd_*`` (reproduced by ``dpsco_core.reference.batch``): a run
owns two bit generators, advanced in place (a second call continues the streams):
``sampling_generator`` draws only the batches and ``noise_generator`` only the noise.
- Poisson sampling (``sampling=POISSON``, rate q): each row is in the batch independently with
  probability q. The batch is drawn as geometric gaps: starting at position -1, draw
  ``G = random_geometric(q)`` (``Generator.geometric(q)``) and move to position + G while that is
  below n; the first G that would reach n ends the batch (it is consumed). Gaps between
  successive successes of independent Bernoulli(q) trials are i.i.d. Geometric(q), so this is
  exactly Poisson sampling, with about q n + 1 draws per step instead of n.
- Shuffling (``sampling=SHUFFLE``, batch size b): at every step k with k mod (n // b) == 0 the
  permutation is redrawn as ``Generator.permutation(n)`` does it (arange(n), then Fisher-Yates
  from the end with ``random_interval(i)``); batch k is the slice ``[(k mod (n//b)) b, + b)``
  of the permutation (the last n mod b rows of each permutation are left out).
- Noise: after the batch, p draws ``random_normal(0, noise_scale)`` (``Generator.normal``), one
  per coordinate in order, drawn even when ``noise_scale == 0`` so that the streams do not
  depend on the calibration.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_geometric, random_interval, random_normal

from _interrupt cimport Interrupt, POLL_WORK, interrupt_init, poll, raise_if_interrupted
from _openmp_helpers cimport omp_get_max_threads, omp_get_thread_num
from _batch cimport (BATCH_BLOCK, BATCH_GROUP, BATCH_PARALLEL_MIN_WORK, axpy_row, clip_weight,
                     dot_row, index_t)
from _loss cimport LOSS_LOGISTIC, LOSS_SQUARED, loss_deriv, loss_deriv_diff
from _prox cimport prox_scalar
from _rng cimport bitgen_array

BLOCK_SIZE = BATCH_BLOCK
GROUP_SIZE = BATCH_GROUP

cdef enum Sampling:
    SAMPLING_POISSON = 0
    SAMPLING_SHUFFLE = 1

POISSON = SAMPLING_POISSON
SHUFFLE = SAMPLING_SHUFFLE


ctypedef fused real_t:
    float
    double


cdef struct Rows:
    # The data, row-accessible: dense (indices == NULL) or CSR. Dense float64 C-ordered X is
    # read in place through ``data``; any other dense X (``gather``) through ``data`` (float64)
    # or ``data32`` (float32) with strides ``row_stride`` and ``col_stride`` (in elements),
    # its block rows gathered into ``gbuf`` + thread * BATCH_BLOCK * p first.
    const double *data
    const float *data32
    Py_ssize_t row_stride
    Py_ssize_t col_stride
    bint gather
    double *gbuf
    Py_ssize_t n
    Py_ssize_t p
    const double *y
    const double *row_norms
    int loss_kind
    double loss_param


cdef struct TwoPoint:
    # The two-point difference eta phi'(<x, coef>) - eta_prev phi'(<x, coef - dx>) of the
    # DP-SRGD kernel; dx == NULL means the one-point gradient phi'(<x, coef>).
    const double *dx
    double eta
    double eta_prev


cdef void _gather(const Rows *X, const int64_t *rows, Py_ssize_t lo, Py_ssize_t hi,
                  double *buf) noexcept nogil:
    """buf[r, :] = X[rows[lo + r], :] as float64 (C-ordered, r = 0..hi-lo-1): exact copies.

    Rows are read along the smaller stride (row by row for C-like strides, column by column
    for Fortran-like ones) so that consecutive reads are as close as the layout allows."""
    cdef Py_ssize_t r, j, p = X.p, m = hi - lo, rs = X.row_stride, cs = X.col_stride
    cdef const float *src32
    cdef const double *src
    cdef double *dst
    cdef bint by_row = (cs if cs >= 0 else -cs) <= (rs if rs >= 0 else -rs)
    if X.data32 != NULL:
        if by_row:
            for r in range(m):
                src32 = X.data32 + rows[lo + r] * rs
                dst = buf + r * p
                for j in range(p):
                    dst[j] = src32[j * cs]
        else:
            for j in range(p):
                src32 = X.data32 + j * cs
                for r in range(m):
                    buf[r * p + j] = src32[rows[lo + r] * rs]
    else:
        if by_row:
            for r in range(m):
                src = X.data + rows[lo + r] * rs
                dst = buf + r * p
                for j in range(p):
                    dst[j] = src[j * cs]
        else:
            for j in range(p):
                src = X.data + j * cs
                for r in range(m):
                    buf[r * p + j] = src[rows[lo + r] * rs]


cdef inline Py_ssize_t _block(const Rows *X, const index_t *indices, const index_t *indptr,
                              const int64_t *rows, Py_ssize_t lo, Py_ssize_t hi,
                              const double *coef, int loss_kind, double clip,
                              const TwoPoint *pair, double *partial) noexcept nogil:
    """partial = sum over batch rows lo..hi-1 of the clipped gradients (or two-point
    differences); returns #clipped.

    ``loss_kind`` is passed separately so that the callers can pass a literal and the C
    compiler specialises the inlined loss switch out of the per-row path.
    """
    cdef Py_ssize_t t, i, j, m, n_clipped = 0
    cdef const double *vals
    cdef const index_t *cols
    cdef double weight, z, dz
    cdef double zs[BATCH_BLOCK]
    cdef double ys[BATCH_BLOCK]
    cdef double *buf = NULL
    for j in range(X.p):
        partial[j] = 0.0
    if indices == NULL and X.gather:
        # one exact float64 C-ordered copy of the block's rows; the loops below read row t
        # of the block at buf + (t - lo) p instead of X
        buf = X.gbuf + omp_get_thread_num() * <Py_ssize_t> BATCH_BLOCK * X.p
        _gather(X, rows, lo, hi, buf)
    if pair.dx == NULL and hi - lo <= BATCH_BLOCK:
        # Margins first, then the derivatives in one loop over contiguous arrays (the
        # branch-free logistic derivative of _exp_poly.h vectorizes there), then clip and
        # add in batch order: per row the same operations as below, so the same bits.
        for t in range(lo, hi):
            i = rows[t]
            if indices == NULL:
                vals = X.data + i * X.p if buf == NULL else buf + (t - lo) * X.p
                cols = NULL
                m = X.p
            else:
                vals = X.data + indptr[i]
                cols = indices + indptr[i]
                m = indptr[i + 1] - indptr[i]
            zs[t - lo] = dot_row(vals, cols, m, coef)
            ys[t - lo] = X.y[i]
        for t in range(hi - lo):
            zs[t] = loss_deriv(loss_kind, zs[t], ys[t], X.loss_param)
        for t in range(lo, hi):
            i = rows[t]
            if indices == NULL:
                vals = X.data + i * X.p if buf == NULL else buf + (t - lo) * X.p
                cols = NULL
                m = X.p
            else:
                vals = X.data + indptr[i]
                cols = indices + indptr[i]
                m = indptr[i + 1] - indptr[i]
            weight = clip_weight(zs[t - lo], X.row_norms[i], clip, &n_clipped)
            axpy_row(weight, vals, cols, m, partial)
        return n_clipped
    for t in range(lo, hi):
        i = rows[t]
        if indices == NULL:
            vals = X.data + i * X.p if buf == NULL else buf + (t - lo) * X.p
            cols = NULL
            m = X.p
        else:
            vals = X.data + indptr[i]
            cols = indices + indptr[i]
            m = indptr[i + 1] - indptr[i]
        z = dot_row(vals, cols, m, coef)
        if pair.dx == NULL:
            weight = loss_deriv(loss_kind, z, X.y[i], X.loss_param)
        else:
            # eta_prev (l'(z) - l'(z - dz)) + (eta - eta_prev) l'(z), the difference stable
            dz = dot_row(vals, cols, m, pair.dx)
            weight = (pair.eta_prev * loss_deriv_diff(loss_kind, z, dz, X.y[i], X.loss_param)
                      + (pair.eta - pair.eta_prev) * loss_deriv(loss_kind, z, X.y[i],
                                                                X.loss_param))
        weight = clip_weight(weight, X.row_norms[i], clip, &n_clipped)
        axpy_row(weight, vals, cols, m, partial)
    return n_clipped


cdef inline Py_ssize_t _block_any(const Rows *X, const index_t *indices, const index_t *indptr,
                                  const int64_t *rows, Py_ssize_t lo, Py_ssize_t hi,
                                  const double *coef, double clip, const TwoPoint *pair,
                                  double *partial) noexcept nogil:
    if X.loss_kind == LOSS_LOGISTIC:
        return _block(X, indices, indptr, rows, lo, hi, coef, LOSS_LOGISTIC, clip, pair,
                      partial)
    if X.loss_kind == LOSS_SQUARED:
        return _block(X, indices, indptr, rows, lo, hi, coef, LOSS_SQUARED, clip, pair, partial)
    return _block(X, indices, indptr, rows, lo, hi, coef, X.loss_kind, clip, pair, partial)


cdef Py_ssize_t _clipped_sum(const Rows *X, const index_t *indices, const index_t *indptr,
                             const int64_t *rows, Py_ssize_t m, const double *coef,
                             double clip, const TwoPoint *pair, double *sum_out,
                             double *scratch, Py_ssize_t *counts,
                             int n_threads) noexcept nogil:
    """sum_out = clipped gradient sum over rows[0..m-1] (block order); returns #clipped.

    ``scratch`` holds BATCH_GROUP * p doubles, ``counts`` BATCH_GROUP entries.
    """
    cdef Py_ssize_t b, j, g0, nb, lo, hi, work, n_clipped = 0
    cdef Py_ssize_t n_blocks = (m + BATCH_BLOCK - 1) // BATCH_BLOCK
    cdef Py_ssize_t p = X.p
    for j in range(p):
        sum_out[j] = 0.0
    g0 = 0
    while g0 < n_blocks:
        nb = min(<Py_ssize_t> BATCH_GROUP, n_blocks - g0)
        work = (min(m, (g0 + nb) * BATCH_BLOCK) - g0 * BATCH_BLOCK) * p
        if nb == 1 or n_threads == 1 or work < BATCH_PARALLEL_MIN_WORK:
            for b in range(nb):
                lo = (g0 + b) * BATCH_BLOCK
                hi = min(lo + BATCH_BLOCK, m)
                counts[b] = _block_any(X, indices, indptr, rows, lo, hi, coef, clip, pair,
                                       scratch + b * p)
        else:
            for b in prange(nb, schedule="static", num_threads=n_threads):
                lo = (g0 + b) * BATCH_BLOCK
                hi = min(lo + BATCH_BLOCK, m)
                counts[b] = _block_any(X, indices, indptr, rows, lo, hi, coef, clip, pair,
                                       scratch + b * p)
        # Partials combined in block order: the same bits for any thread count.
        for b in range(nb):
            n_clipped += counts[b]
            for j in range(p):
                sum_out[j] = sum_out[j] + scratch[b * p + j]
        g0 += nb
    return n_clipped


cdef Py_ssize_t _poisson_batch(bitgen_t *gen, Py_ssize_t n, double q,
                               int64_t *rows) noexcept nogil:
    """Poisson(q) batch of 0..n-1 by geometric gaps (module docstring); returns its size."""
    cdef Py_ssize_t m = 0
    cdef int64_t pos = -1, gap
    while True:
        gap = random_geometric(gen, q)
        if gap >= n - pos:      # pos + gap >= n, without overflow for huge gaps
            return m
        pos += gap
        rows[m] = pos
        m += 1


cdef void _permute(bitgen_t *gen, Py_ssize_t n, int64_t *perm) noexcept nogil:
    """perm = Generator.permutation(n): arange, then Fisher-Yates as numpy's shuffle."""
    cdef Py_ssize_t i, j
    cdef int64_t tmp
    for i in range(n):
        perm[i] = i
    for i in range(n - 1, 0, -1):
        j = <Py_ssize_t> random_interval(gen, <uint64_t> i)
        tmp = perm[j]
        perm[j] = perm[i]
        perm[i] = tmp


cdef struct Run:
    Py_ssize_t n_steps
    int sampling
    double sample_rate
    Py_ssize_t batch_size
    double step
    double clip
    double noise_scale
    double norm
    int penalty_kind
    double penalty_p1
    double penalty_p2


cdef void _sgd(const Rows *X, const index_t *indices, const index_t *indptr, const Run *r,
               double *coef, bitgen_t *sgen, bitgen_t *ngen, int64_t *rows, double *grad,
               double *scratch, Py_ssize_t *counts, int n_threads,
               Py_ssize_t *n_clipped_out, Py_ssize_t *n_sampled_out,
               Interrupt *it) noexcept nogil:
    # Signals are polled between steps, on the calling thread, outside the parallel block
    # groups: a step's cost is bounded by its batch, and the checks change no result.
    cdef Py_ssize_t k, j, m, n_clipped = 0, n_sampled = 0, budget = POLL_WORK
    cdef Py_ssize_t per_epoch = X.n // r.batch_size if r.sampling == SAMPLING_SHUFFLE else 1
    cdef const int64_t *batch
    cdef double g
    cdef TwoPoint one_point = TwoPoint(dx=NULL, eta=1.0, eta_prev=0.0)
    for k in range(r.n_steps):
        if poll(it, &budget, 8 * X.p):
            break
        if r.sampling == SAMPLING_POISSON:
            m = _poisson_batch(sgen, X.n, r.sample_rate, rows)
            batch = rows
        else:
            if k % per_epoch == 0:
                _permute(sgen, X.n, rows)
                budget -= 4 * X.n
            m = r.batch_size
            batch = rows + (k % per_epoch) * r.batch_size
        n_sampled += m
        budget -= m * X.p if indices == NULL else 4 * m + 2 * X.p
        n_clipped += _clipped_sum(X, indices, indptr, batch, m, coef, r.clip, &one_point, grad,
                                  scratch, counts, n_threads)
        for j in range(X.p):
            # g = (S + N(0, noise_scale^2)) / norm, then the prox step (note 002 section 4)
            g = (grad[j] + random_normal(ngen, 0.0, r.noise_scale)) / r.norm
            coef[j] = prox_scalar(r.penalty_kind, coef[j] - r.step * g, r.step, r.penalty_p1,
                                  r.penalty_p2)
    n_clipped_out[0] = n_clipped
    n_sampled_out[0] = n_sampled


# ------------------------------------------------------------------ Python entry points

cdef Rows _rows(const double *data, Py_ssize_t n, Py_ssize_t p, const double[::1] y,
                const double[::1] row_norms, int loss_kind, double loss_param) except *:
    if y.shape[0] != n or row_norms.shape[0] != n:
        raise ValueError(f"y and row_norms must have {n} entries (rows of X); got "
                         f"{y.shape[0]} and {row_norms.shape[0]}")
    if n < 1 or p < 1:
        raise ValueError(f"X must have at least one row and one column; got ({n}, {p})")
    return Rows(data=data, data32=NULL, row_stride=p, col_stride=1, gather=False, gbuf=NULL,
                n=n, p=p, y=&y[0], row_norms=&row_norms[0], loss_kind=loss_kind,
                loss_param=loss_param)


cdef Rows _dense_rows(const real_t[:, :] X, const double[::1] y, const double[::1] row_norms,
                      int loss_kind, double loss_param) except *:
    """Rows of dense X of either dtype and any strides: in place when float64 C-ordered,
    else through the block gather (module docstring)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Rows data = _rows(NULL, n, p, y, row_norms, loss_kind, loss_param)
    data.row_stride = X.strides[0] // <Py_ssize_t> sizeof(real_t)
    data.col_stride = X.strides[1] // <Py_ssize_t> sizeof(real_t)
    if X.strides[0] % <Py_ssize_t> sizeof(real_t) or X.strides[1] % <Py_ssize_t> sizeof(real_t):
        raise ValueError("X's strides must be multiples of its item size")
    if real_t is float:
        data.data32 = &X[0, 0]
        data.gather = True
    else:
        data.data = &X[0, 0]
        data.gather = not ((p == 1 or data.col_stride == 1)
                           and (n == 1 or data.row_stride == p))
    return data


cdef int _alloc_gather(Rows *X, int n_threads) except -1:
    # One BATCH_BLOCK x p buffer per thread (the blocks of a group run on n_threads threads;
    # prange reads num_threads=0 as "all": omp_get_max_threads()).
    cdef Py_ssize_t n_buffers = n_threads if n_threads >= 1 else omp_get_max_threads()
    if X.gather:
        X.gbuf = <double *> malloc((n_buffers if n_buffers > 1 else 1) * <size_t> BATCH_BLOCK
                                   * X.p * sizeof(double))
        if X.gbuf == NULL:
            raise MemoryError()
    return 0


cdef _check_csr(Py_ssize_t nnz, const index_t[::1] indices, const index_t[::1] indptr,
                Py_ssize_t p):
    # Out-of-range entries would be out-of-bounds memory accesses in the nogil loops.
    cdef Py_ssize_t n = indptr.shape[0] - 1, k
    if n < 0 or indices.shape[0] != nnz or indptr[0] != 0 or indptr[n] != nnz:
        raise ValueError("inconsistent CSR arrays (indptr must have n + 1 entries from 0 to "
                         "nnz, and indices as many entries as data)")
    for k in range(n):
        if indptr[k + 1] < indptr[k]:
            raise ValueError("inconsistent CSR arrays (indptr must be non-decreasing)")
    for k in range(nnz):
        if indices[k] < 0 or indices[k] >= p:
            raise ValueError(f"CSR column indices must be in [0, {p}); got {indices[k]}")


cdef _check_rows(const int64_t[::1] rows, Py_ssize_t n):
    cdef Py_ssize_t t
    for t in range(rows.shape[0]):
        if rows[t] < 0 or rows[t] >= n:
            raise ValueError(f"rows must be in [0, {n}); got {rows[t]} at position {t}")


cdef _check_p(Py_ssize_t p, const double[::1] coef, double[::1] sum_out):
    if coef.shape[0] != p or sum_out.shape[0] != p:
        raise ValueError(f"coef and sum_out must have {p} entries (columns of X); got "
                         f"{coef.shape[0]} and {sum_out.shape[0]}")


cdef Py_ssize_t _batch_grad(Rows *X, const index_t *indices, const index_t *indptr,
                            const int64_t[::1] rows, const double[::1] coef, double clip,
                            double[::1] sum_out, int n_threads, const double *coef_prev=NULL,
                            double eta=1.0, double eta_prev=0.0) except -1:
    # coef_prev != NULL: the two-point differences at coef and coef_prev (dx = coef - coef_prev)
    cdef double *scratch = <double *> malloc(BATCH_GROUP * X.p * sizeof(double))
    cdef Py_ssize_t *counts = <Py_ssize_t *> malloc(BATCH_GROUP * sizeof(Py_ssize_t))
    cdef double *dx = NULL
    cdef Py_ssize_t n_clipped, j
    cdef const int64_t *rows_ptr = &rows[0] if rows.shape[0] > 0 else NULL
    cdef TwoPoint pair = TwoPoint(dx=NULL, eta=eta, eta_prev=eta_prev)
    try:
        if scratch == NULL or counts == NULL:
            raise MemoryError()
        _alloc_gather(X, n_threads)
        if coef_prev != NULL:
            dx = <double *> malloc(X.p * sizeof(double))
            if dx == NULL:
                raise MemoryError()
            for j in range(X.p):
                dx[j] = coef[j] - coef_prev[j]
            pair.dx = dx
        with nogil:
            n_clipped = _clipped_sum(X, indices, indptr, rows_ptr, rows.shape[0], &coef[0],
                                     clip, &pair, &sum_out[0], scratch, counts, n_threads)
    finally:
        free(scratch)
        free(counts)
        free(dx)
        free(X.gbuf)
        X.gbuf = NULL
    return n_clipped


def batch_grad_dense(const real_t[:, :] X,       # IN  (n, p) float64/float32, any strides
                     const double[::1] y,          # IN  (n,)
                     const int64_t[::1] rows,      # IN  (m,) batch rows, in [0, n)
                     const double[::1] coef,       # IN  (p,)
                     const double[::1] row_norms,  # IN  (n,) ||x_i||_2
                     int loss_kind, double loss_param,
                     double clip,                  # C in (0, inf]
                     double[::1] sum_out,          # OUT (p,) the clipped gradient sum
                     int n_threads):
    """Clipped per-sample gradient sum over ``rows`` (dense X). Returns the #clipped rows.

    X float64 or float32, any strides, never copied (module docstring: the result is bitwise
    the one on ``np.ascontiguousarray(X, dtype=np.float64)``)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Rows data = _dense_rows(X, y, row_norms, loss_kind, loss_param)
    _check_p(p, coef, sum_out)
    _check_rows(rows, n)
    return _batch_grad(&data, <const int32_t *> NULL, <const int32_t *> NULL, rows, coef, clip,
                       sum_out, n_threads)


def batch_grad_csr(const double[::1] data,         # IN  (nnz,) CSR values
                   const index_t[::1] indices,     # IN  (nnz,) column indices in [0, p)
                   const index_t[::1] indptr,      # IN  (n + 1,)
                   const double[::1] y, const int64_t[::1] rows, const double[::1] coef,
                   const double[::1] row_norms, int loss_kind, double loss_param, double clip,
                   double[::1] sum_out,            # OUT (p,), p = len(coef)
                   int n_threads):
    """Clipped per-sample gradient sum over ``rows`` (CSR X); see ``batch_grad_dense``."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, p = coef.shape[0]
    _check_csr(data.shape[0], indices, indptr, p)
    cdef Rows X = _rows(&data[0] if data.shape[0] > 0 else NULL, n, p, y, row_norms,
                        loss_kind, loss_param)
    _check_p(p, coef, sum_out)
    _check_rows(rows, n)
    cdef const index_t *indices_ptr = &indices[0] if indices.shape[0] > 0 else &indptr[0]
    return _batch_grad(&X, indices_ptr, &indptr[0], rows, coef, clip, sum_out, n_threads)


def batch_diff_dense(const real_t[:, :] X,       # IN  (n, p) float64/float32, any strides
                     const double[::1] y,          # IN  (n,)
                     const int64_t[::1] rows,      # IN  (m,) batch rows, in [0, n)
                     const double[::1] coef,       # IN  (p,) x_t
                     const double[::1] coef_prev,  # IN  (p,) x_{t-1}
                     const double[::1] row_norms,  # IN  (n,) ||x_i||_2
                     int loss_kind, double loss_param,
                     double eta, double eta_prev,  # eta_t, eta_{t-1}
                     double clip,                  # C_Delta in (0, inf]
                     double[::1] sum_out,          # OUT (p,) the clipped difference sum
                     int n_threads):
    """Clipped two-point differences summed over ``rows`` (dense X); returns #clipped.

    ``sum_out = sum_i clip(eta l'(<x_i, coef>) x_i - eta_prev l'(<x_i, coef_prev>) x_i,
    clip)``, the DP-SRGD batch sum (note 003, section 12 K1): per row the weight is
    ``eta_prev (l'(z) - l'(z - dz)) + (eta - eta_prev) l'(z)`` with ``z = <x_i, coef>``,
    ``dz = <x_i, coef - coef_prev>`` (two ``dot_row`` lane sums) and the stable
    ``loss_deriv_diff``; its norm ``|weight| ||x_i||`` is clipped as in ``batch_grad_dense``.
    Blocks, groups, summation order and the accepted dtypes and layouts are those of
    ``batch_grad_dense``.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Rows data = _dense_rows(X, y, row_norms, loss_kind, loss_param)
    _check_p(p, coef, sum_out)
    _check_p(p, coef_prev, sum_out)
    _check_rows(rows, n)
    return _batch_grad(&data, <const int32_t *> NULL, <const int32_t *> NULL, rows, coef, clip,
                       sum_out, n_threads, &coef_prev[0], eta, eta_prev)


def batch_diff_csr(const double[::1] data,         # IN  (nnz,) CSR values
                   const index_t[::1] indices,     # IN  (nnz,) column indices in [0, p)
                   const index_t[::1] indptr,      # IN  (n + 1,)
                   const double[::1] y, const int64_t[::1] rows, const double[::1] coef,
                   const double[::1] coef_prev, const double[::1] row_norms, int loss_kind,
                   double loss_param, double eta, double eta_prev, double clip,
                   double[::1] sum_out,            # OUT (p,), p = len(coef)
                   int n_threads):
    """Clipped two-point differences summed over ``rows`` (CSR X); see ``batch_diff_dense``."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, p = coef.shape[0]
    _check_csr(data.shape[0], indices, indptr, p)
    cdef Rows X = _rows(&data[0] if data.shape[0] > 0 else NULL, n, p, y, row_norms,
                        loss_kind, loss_param)
    _check_p(p, coef, sum_out)
    _check_p(p, coef_prev, sum_out)
    _check_rows(rows, n)
    cdef const index_t *indices_ptr = &indices[0] if indices.shape[0] > 0 else &indptr[0]
    return _batch_grad(&X, indices_ptr, &indptr[0], rows, coef, clip, sum_out, n_threads,
                       &coef_prev[0], eta, eta_prev)


cdef Run _run(Py_ssize_t n, int penalty_kind, double penalty_p1, double penalty_p2,
              Py_ssize_t n_steps, int sampling, double sample_rate, Py_ssize_t batch_size,
              double step, double clip, double noise_scale, double norm) except *:
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0; got {n_steps}")
    if sampling == SAMPLING_POISSON:
        if not (0.0 < sample_rate <= 1.0):
            raise ValueError(f"sample_rate must be in (0, 1]; got {sample_rate}")
    elif sampling == SAMPLING_SHUFFLE:
        if batch_size < 1 or batch_size > n:
            raise ValueError(f"batch_size must be in [1, {n}]; got {batch_size}")
    else:
        raise ValueError(f"unknown sampling {sampling}")
    return Run(n_steps=n_steps, sampling=sampling, sample_rate=sample_rate,
               batch_size=batch_size, step=step, clip=clip, noise_scale=noise_scale, norm=norm,
               penalty_kind=penalty_kind, penalty_p1=penalty_p1, penalty_p2=penalty_p2)


cdef tuple _sgd_call(Rows *X, const index_t *indices, const index_t *indptr,
                     const Run *r, double[::1] coef, object sampling_generator,
                     object noise_generator, int n_threads):
    if coef.shape[0] != X.p:
        raise ValueError(f"coef must have {X.p} entries (columns of X); got {coef.shape[0]}")
    cdef bitgen_t **gens = bitgen_array([sampling_generator, noise_generator], 2)
    cdef int64_t *rows = <int64_t *> malloc(X.n * sizeof(int64_t))
    cdef double *grad = <double *> malloc(X.p * sizeof(double))
    cdef double *scratch = <double *> malloc(BATCH_GROUP * X.p * sizeof(double))
    cdef Py_ssize_t *counts = <Py_ssize_t *> malloc(BATCH_GROUP * sizeof(Py_ssize_t))
    cdef Py_ssize_t n_clipped = 0, n_sampled = 0
    cdef Interrupt it
    interrupt_init(&it)
    try:
        if rows == NULL or grad == NULL or scratch == NULL or counts == NULL:
            raise MemoryError()
        _alloc_gather(X, n_threads)
        with nogil:
            _sgd(X, indices, indptr, r, &coef[0], gens[0], gens[1], rows, grad, scratch,
                 counts, n_threads, &n_clipped, &n_sampled, &it)
    finally:
        free(gens)
        free(rows)
        free(grad)
        free(scratch)
        free(counts)
        free(X.gbuf)
        X.gbuf = NULL
    raise_if_interrupted(&it)
    return n_clipped, n_sampled


def sgd_dense(const real_t[:, :] X,         # IN  (n, p) float64/float32, any strides
              const double[::1] y,            # IN  (n,)
              const double[::1] row_norms,    # IN  (n,)
              int loss_kind, double loss_param,
              int penalty_kind, double penalty_p1, double penalty_p2,
              double[::1] coef,               # IN/OUT (p,) start point, then the last iterate
              Py_ssize_t n_steps,
              int sampling,                   # POISSON or SHUFFLE
              double sample_rate,             # q (POISSON)
              Py_ssize_t batch_size,          # b (SHUFFLE)
              double step,                    # eta = gamma / beta
              double clip,                    # C in (0, inf]
              double noise_scale,             # absolute std of the noise on the sum
              double norm,                    # the divisor (q n or b)
              object sampling_generator,      # numpy BitGenerator, advanced in place
              object noise_generator,         # numpy BitGenerator, advanced in place
              int n_threads):
    """Run ``n_steps`` proximal DP-SGD steps on dense X; ``coef`` is updated in place.

    Returns ``(n_clipped, n_sampled)``: clipped per-sample gradients and sampled rows in total.
    X float64 or float32, any strides, never copied; the iterates are bitwise those on
    ``np.ascontiguousarray(X, dtype=np.float64)`` (see ``batch_grad_dense``).
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Rows data = _dense_rows(X, y, row_norms, loss_kind, loss_param)
    cdef Run r = _run(n, penalty_kind, penalty_p1, penalty_p2, n_steps, sampling, sample_rate,
                      batch_size, step, clip, noise_scale, norm)
    return _sgd_call(&data, <const int32_t *> NULL, <const int32_t *> NULL, &r, coef,
                     sampling_generator, noise_generator, n_threads)


def sgd_csr(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
            const double[::1] y, const double[::1] row_norms, int loss_kind, double loss_param,
            int penalty_kind, double penalty_p1, double penalty_p2,
            double[::1] coef,                 # IN/OUT (p,), p = len(coef)
            Py_ssize_t n_steps, int sampling, double sample_rate, Py_ssize_t batch_size,
            double step, double clip, double noise_scale, double norm,
            object sampling_generator, object noise_generator, int n_threads):
    """Run ``n_steps`` proximal DP-SGD steps on CSR X; see ``sgd_dense``."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, p = coef.shape[0]
    _check_csr(data.shape[0], indices, indptr, p)
    cdef Rows X = _rows(&data[0] if data.shape[0] > 0 else NULL, n, p, y, row_norms,
                        loss_kind, loss_param)
    cdef Run r = _run(n, penalty_kind, penalty_p1, penalty_p2, n_steps, sampling, sample_rate,
                      batch_size, step, clip, noise_scale, norm)
    cdef const index_t *indices_ptr = &indices[0] if indices.shape[0] > 0 else &indptr[0]
    return _sgd_call(&X, indices_ptr, &indptr[0], &r, coef, sampling_generator,
                     noise_generator, n_threads)
