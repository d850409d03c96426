# Row-wise building blocks of every batch-gradient kernel (DP-SGD here; the DP-SRGD two-point
# differences and the SPIDER pair kernels reuse them):
#
#     from _batch cimport index_t, BATCH_BLOCK, BATCH_GROUP, dot_row, axpy_row, clip_weight
#
# A row is (vals, cols, m): its m stored values and their column indices; cols == NULL means a
# dense row (cols[t] = t, m = p). Dense C-ordered X gives vals = X + i p; CSR gives
# vals = data + indptr[i], cols = indices + indptr[i].
#
# For a linear model f(w; (x, y)) = l(<x, w>, y) every per-sample gradient is a scalar times
# x, so clipping is a scalar rescale: ||weight x||_2 = |weight| ||x||_2 with precomputed row
# norms (note 002 section 9.4; note 003 section 12, K1). The per-row core of a kernel is
#     z = dot_row(row, w)  ->  weight = (loss derivative(s) at z)  ->  clip_weight  ->  axpy_row
# and a two-point kernel (DP-SRGD) only changes the middle step (a second dot product with the
# previous iterate, and the stable difference of derivatives as the weight).
#
# Summation orders are fixed, so the NumPy twins reproduce them bitwise: dot_row sums term t
# into lane t mod 4 (lanes start at +0.0, each summed left to right) and returns
# (a0 + a1) + (a2 + a3); axpy_row adds a * vals[t] to out[cols[t]] in t order.

from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t

cdef enum:
    # Batch rows per block: a block's partial sum is computed sequentially by one thread.
    # A module constant, never derived from the thread count (determinism).
    BATCH_BLOCK = 256
    # Blocks whose partial sums are held at once (scratch BATCH_GROUP * p doubles): the
    # blocks of a group run in parallel, then their partials are added in block order.
    BATCH_GROUP = 32
    # A group runs its blocks in parallel only when it holds at least this many row entries
    # (rows x p, or stored entries for CSR, estimated as rows x p): below it, a fork/join
    # (microseconds, milliseconds on a busy machine) costs more than it saves. No effect on
    # results, only on speed.
    BATCH_PARALLEL_MIN_WORK = 65536


cdef inline double dot_row(const double *vals, const index_t *cols, Py_ssize_t m,
                           const double *w) noexcept nogil:
    """sum_t vals[t] * w[cols[t]] in four lanes (cols == NULL: dense, cols[t] = t)."""
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef Py_ssize_t t, head = m - m % 4
    if cols == NULL:
        for t in range(0, head, 4):
            a0 = a0 + vals[t] * w[t]
            a1 = a1 + vals[t + 1] * w[t + 1]
            a2 = a2 + vals[t + 2] * w[t + 2]
            a3 = a3 + vals[t + 3] * w[t + 3]
        if m - head > 0:
            a0 = a0 + vals[head] * w[head]
        if m - head > 1:
            a1 = a1 + vals[head + 1] * w[head + 1]
        if m - head > 2:
            a2 = a2 + vals[head + 2] * w[head + 2]
    else:
        for t in range(0, head, 4):
            a0 = a0 + vals[t] * w[cols[t]]
            a1 = a1 + vals[t + 1] * w[cols[t + 1]]
            a2 = a2 + vals[t + 2] * w[cols[t + 2]]
            a3 = a3 + vals[t + 3] * w[cols[t + 3]]
        if m - head > 0:
            a0 = a0 + vals[head] * w[cols[head]]
        if m - head > 1:
            a1 = a1 + vals[head + 1] * w[cols[head + 1]]
        if m - head > 2:
            a2 = a2 + vals[head + 2] * w[cols[head + 2]]
    return (a0 + a1) + (a2 + a3)


cdef inline void axpy_row(double a, const double *vals, const index_t *cols, Py_ssize_t m,
                          double *out) noexcept nogil:
    """out[cols[t]] += a * vals[t] for t = 0..m-1 (cols == NULL: dense)."""
    cdef Py_ssize_t t
    if cols == NULL:
        for t in range(m):
            out[t] = out[t] + a * vals[t]
    else:
        for t in range(m):
            out[cols[t]] = out[cols[t]] + a * vals[t]


cdef inline double clip_weight(double weight, double row_norm, double clip,
                               Py_ssize_t *n_clipped) noexcept nogil:
    """weight * min(1, clip / (|weight| * row_norm)): the l2 clip of the gradient weight * x.

    The norm is |weight| * row_norm; a norm at most ``clip`` (zero included: no division)
    leaves the weight unchanged, a larger one scales it by clip / norm (the direction is kept;
    clip = inf never clips). A NaN norm is counted as clipped and propagates NaN.
    """
    cdef double norm = fabs(weight) * row_norm
    if norm <= clip:
        return weight
    n_clipped[0] += 1
    return weight * (clip / norm)
