# cython: language_level=3
"""Frank-Wolfe kernels for l1 geometry (note 004, sections 3.2, 9.1-9.3).

Design
- ``vr_gradient_rnm`` is one leaf of the dyadic variance-reduced Frank-Wolfe (Algorithm 3 of
  Asi, Feldman, Koren and Talwar 2021): it computes the (corrected) batch gradient estimate

      root:        v = (1/m) sum_t r_t a_{i_t},          r_t = clip(l'(<a_i, x>, y_i))
      right child: v = v_prev + (1/m) sum_t r_t a_{i_t}, r_t = clip(l'(<a_i, x>, y_i))
                                                            - clip(l'(<a_i, x'>, y_i))

  and, in the same pass over the coordinates, selects a vertex by report-noisy-max. The 2d
  scores of the l1 ball (vertex +D e_j: score -D v_j; vertex -D e_j: score +D v_j, the argmax
  form of argmin <c, v>) are never stored: each block of coordinates accumulates its part of v
  and immediately scores it. For the simplex (vertices D e_j) the d scores are -D v_j.
- Pass 1 (rows, parallel): margins <a_i, x> = alpha <a_i, w> (lazy scale, see
  ``lazy_fw_step``), summed in four lanes (term j to lane j mod 4, lanes left to right,
  (l0 + l1) + (l2 + l3)) so that the twin reproduces them with ``np.cumsum``; clip is the
  per-row bound ``row_clip[i]`` on |l'| that enforces ||grad f||_inf <= L.
- Pass 2a (coordinate chunks of ACC_CHUNK = 1024, parallel): v_j = sum_t r_t a_{i_t, j} in batch
  order, finished as ``v_prev + acc / m`` (correction) or ``acc / m``. The chunks are much
  smaller than a random block, so the accumulation (the cost: m * d multiply-adds) runs on
  every thread even when all 2d candidates fit in one random block (d <= 32768); a chunk of
  1024 doubles per row keeps each row's slice in cache while the batch streams past.
- Pass 2b (random blocks, parallel): candidate c of the flattened candidate list (l1 ball:
  c = 2j for +D e_j, 2j + 1 for -D e_j; simplex: c = j) belongs to random block
  c // BLOCK_SIZE, which draws its variates in candidate order from its own bit generator,
  exactly as ``dpsco_core.reference.noisy_max.report_noisy_max`` does. A coordinate block holds
  BLOCK_SIZE / (candidates per coordinate) coordinates, so random blocks and coordinate blocks
  coincide. Within a coordinate, the batch terms are added in batch order (pass 2a), for any
  thread count. Blocks are combined in block order with a strict ``>``: ties go to the lowest
  candidate. Results are bitwise identical for any n_threads and equal to the twin
  ``dpsco_core.reference.frank_wolfe``.
- ``row_max_abs`` (rows, parallel): max_j |X_ij| per row in one pass without an n x d
  temporary (``np.abs(X).max(axis=1)``); the solver turns it into the enforced clip on l'.
- ``scale == 0`` selects the exact argmax without drawing (the non-private run).
- Every variate is drawn (no skipping as in ``_noisy_max``): 2d draws cost less than the
  m * d multiply-adds of the gradient at any batch size m >= 2.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs, fmax, fmin
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

from _loss cimport loss_deriv
from _rng cimport BLOCK_SIZE, bitgen_array, draw_noise

cdef enum Domain:
    L1_BALL = 0
    SIMPLEX = 1
    NO_SELECTION = 2

DOMAIN_L1_BALL = L1_BALL
DOMAIN_SIMPLEX = SIMPLEX
DOMAIN_NONE = NO_SELECTION
FW_BLOCK_SIZE = BLOCK_SIZE
cdef Py_ssize_t _ACC_CHUNK = 1024
ACC_CHUNK = _ACC_CHUNK


cdef inline double _dot4(const double *a, const double[::1] w, Py_ssize_t d) noexcept nogil:
    """<a, w> in four lanes: term j to lane j mod 4, each lane left to right."""
    cdef double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0
    cdef Py_ssize_t j = 0
    while j + 3 < d:
        l0 = l0 + a[j] * w[j]
        l1 = l1 + a[j + 1] * w[j + 1]
        l2 = l2 + a[j + 2] * w[j + 2]
        l3 = l3 + a[j + 3] * w[j + 3]
        j += 4
    if j < d:
        l0 = l0 + a[j] * w[j]
    if j + 1 < d:
        l1 = l1 + a[j + 1] * w[j + 1]
    if j + 2 < d:
        l2 = l2 + a[j + 2] * w[j + 2]
    return (l0 + l1) + (l2 + l3)


cdef struct _Pair:
    double first
    double second


cdef inline _Pair _dot4_pair(const double *a, const double[::1] w, const double[::1] u,
                             Py_ssize_t d) noexcept nogil:
    """``<a, w>`` and ``<a, u>`` in one read of ``a``; each with ``_dot4``'s lanes (bitwise)."""
    cdef double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0
    cdef double k0 = 0.0, k1 = 0.0, k2 = 0.0, k3 = 0.0
    cdef Py_ssize_t j = 0
    while j + 3 < d:
        l0 = l0 + a[j] * w[j]
        l1 = l1 + a[j + 1] * w[j + 1]
        l2 = l2 + a[j + 2] * w[j + 2]
        l3 = l3 + a[j + 3] * w[j + 3]
        k0 = k0 + a[j] * u[j]
        k1 = k1 + a[j + 1] * u[j + 1]
        k2 = k2 + a[j + 2] * u[j + 2]
        k3 = k3 + a[j + 3] * u[j + 3]
        j += 4
    if j < d:
        l0 = l0 + a[j] * w[j]
        k0 = k0 + a[j] * u[j]
    if j + 1 < d:
        l1 = l1 + a[j + 1] * w[j + 1]
        k1 = k1 + a[j + 1] * u[j + 1]
    if j + 2 < d:
        l2 = l2 + a[j + 2] * w[j + 2]
        k2 = k2 + a[j + 2] * u[j + 2]
    cdef _Pair out
    out.first = (l0 + l1) + (l2 + l3)
    out.second = (k0 + k1) + (k2 + k3)
    return out


cdef inline double _clip(double g, double c) noexcept nogil:
    return fmin(fmax(g, -c), c)


cdef inline void _consider(double value, Py_ssize_t cand, double *best,
                           Py_ssize_t *best_c) noexcept nogil:
    if value > best[0]:
        best[0] = value
        best_c[0] = cand


def vr_gradient_rnm(const double[:, ::1] X,        # IN  (n, d) C-ordered
                    const double[::1] y,           # IN  (n,)
                    const Py_ssize_t[::1] rows,    # IN  (m,) batch row indices, m >= 1
                    int loss_kind, double loss_param,
                    const double[::1] row_clip,    # IN  (n,) bound on |l'| per row (inf: none)
                    const double[::1] w, double alpha,            # IN  current x = alpha w
                    const double[::1] w_prev, double alpha_prev,  # IN  parent x' (correction)
                    const double[::1] v_prev,      # IN  (d,) parent estimate (correction)
                    bint correction,
                    int domain, double radius, double scale, int kind,
                    object bit_generators,         # IN  one per block of BLOCK_SIZE candidates
                    int n_threads,
                    double[::1] resid,             # OUT (m,) r_t (scratch, returned)
                    double[::1] v_out):            # OUT (d,) the new estimate v
    """One leaf of Algorithm 3: the estimate ``v`` into ``v_out`` and the selected vertex.

    Returns ``(coordinate, sign)``: the vertex ``sign * radius * e_coordinate`` (sign +1 or -1;
    always +1 for the simplex), or ``(-1, 0)`` for ``domain == DOMAIN_NONE``.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = rows.shape[0]
    cdef Py_ssize_t per_coord = 2 if domain == L1_BALL else 1
    cdef Py_ssize_t block_coords = BLOCK_SIZE // per_coord
    cdef Py_ssize_t n_blocks = (d + block_coords - 1) // block_coords
    cdef Py_ssize_t t, i, j, b, lo, hi, c
    cdef Py_ssize_t n_chunks = (d + _ACC_CHUNK - 1) // _ACC_CHUNK
    cdef double g, inv_m = 1.0 / m, s, best, noise_p, noise_m
    cdef _Pair z
    cdef bitgen_t **gens = NULL
    cdef double *block_best = NULL
    cdef Py_ssize_t *block_c = NULL
    cdef Py_ssize_t best_c = -1
    cdef const double *xrow
    if m == 0 or d == 0:
        raise ValueError("rows and the features must not be empty")
    if domain != NO_SELECTION and scale > 0.0:
        gens = bitgen_array(bit_generators, n_blocks)
    try:
        block_best = <double *> malloc(n_blocks * sizeof(double))
        block_c = <Py_ssize_t *> malloc(n_blocks * sizeof(Py_ssize_t))
        if block_best == NULL or block_c == NULL:
            raise MemoryError()
        # Pass 1: per-row derivative differences.
        for t in prange(m, nogil=True, schedule="static", num_threads=n_threads):
            i = rows[t]
            if correction:
                # Both margins in one read of the row (memory-bound at large d). A struct
                # return, not out-pointers: an assigned variable is thread-private in prange.
                z = _dot4_pair(&X[i, 0], w, w_prev, d)
                g = _clip(loss_deriv(loss_kind, alpha * z.first, y[i], loss_param), row_clip[i])
                g = g - _clip(loss_deriv(loss_kind, alpha_prev * z.second, y[i], loss_param),
                              row_clip[i])
            else:
                g = _clip(loss_deriv(loss_kind, alpha * _dot4(&X[i, 0], w, d), y[i],
                                     loss_param), row_clip[i])
            resid[t] = g
        # Pass 2a: v = v_prev + X[rows].T @ resid / m, coordinate chunks, rows in batch order.
        for c in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
            lo = c * _ACC_CHUNK
            hi = min(lo + _ACC_CHUNK, d)
            for j in range(lo, hi):
                v_out[j] = 0.0
            for t in range(m):
                g = resid[t]
                xrow = &X[rows[t], 0]
                for j in range(lo, hi):
                    v_out[j] = v_out[j] + g * xrow[j]
            for j in range(lo, hi):
                if correction:
                    v_out[j] = v_prev[j] + v_out[j] * inv_m
                else:
                    v_out[j] = v_out[j] * inv_m
        if domain == NO_SELECTION:
            return -1, 0
        # Pass 2b: random blocks: score and select.
        for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
            lo = b * block_coords
            hi = min(lo + block_coords, d)
            best = -INFINITY
            block_c[b] = -1
            if domain == L1_BALL:
                for j in range(lo, hi):
                    s = radius * v_out[j]
                    noise_p = 0.0
                    noise_m = 0.0
                    if scale > 0.0:
                        noise_p = draw_noise(gens[b], kind, scale)
                        noise_m = draw_noise(gens[b], kind, scale)
                    _consider(-s + noise_p, 2 * j, &best, &block_c[b])
                    _consider(s + noise_m, 2 * j + 1, &best, &block_c[b])
            elif domain == SIMPLEX:
                for j in range(lo, hi):
                    noise_p = 0.0
                    if scale > 0.0:
                        noise_p = draw_noise(gens[b], kind, scale)
                    _consider(-(radius * v_out[j]) + noise_p, j, &best, &block_c[b])
            block_best[b] = best
        best = -INFINITY
        for b in range(n_blocks):
            if block_best[b] > best:
                best = block_best[b]
                best_c = block_c[b]
    finally:
        free(gens)
        free(block_best)
        free(block_c)
    if domain == L1_BALL:
        return best_c // 2, (1 if best_c % 2 == 0 else -1)
    return best_c, 1


def lazy_fw_step(double[::1] w,   # IN/OUT (d,) x = alpha w (solver-owned buffer)
                 double alpha, Py_ssize_t coordinate, double value, double eta):
    """``x <- (1 - eta) x + eta value e_coordinate`` on ``x = alpha w`` in O(1); return alpha.

    ``eta == 1`` (the first Frank-Wolfe step) resets ``x`` to the vertex (alpha = 1), since
    ``(1 - eta) alpha`` would be 0. When alpha falls below 1e-100, ``w`` is rescaled in O(d)
    (``w *= alpha``, alpha = 1) so that it never underflows.
    """
    cdef Py_ssize_t j, d = w.shape[0]
    if eta >= 1.0:
        for j in range(d):
            w[j] = 0.0
        w[coordinate] = value
        return 1.0
    alpha = (1.0 - eta) * alpha
    w[coordinate] = w[coordinate] + eta * value / alpha
    if alpha < 1e-100:
        for j in range(d):
            w[j] = w[j] * alpha
        alpha = 1.0
    return alpha


def row_max_abs(const double[:, ::1] X,   # IN  (n, d) C-ordered
                int n_threads,
                double[::1] out):          # OUT (n,) max_j |X_ij| (0 for d == 0)
    """``np.abs(X).max(axis=1)`` into ``out`` in one parallel pass, without a temporary."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j
    cdef double a
    if out.shape[0] != n:
        raise ValueError("out must have one entry per row of X")
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        a = 0.0
        for j in range(d):
            a = fmax(a, fabs(X[i, j]))
        out[i] = a
    return out
