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
- ``vr_gradient_rnm_signs`` is the same leaf for +-1 features stored as packed sign bits (the
  Rademacher designs of note 004, section 7.1 A; n = d = 1e5 is 80 GB dense, 1.25 GB packed):
  row t is ``signs[t, :]``, feature j is +1 if bit ``j % 64`` of word ``j // 64`` is set, else
  -1. Every operation is the dense kernel's on the unpacked matrix, in the same order, so the
  outputs are bitwise ``vr_gradient_rnm``'s on ``X = unpack(signs)`` (the twin unpacks and
  calls the dense twin). Margins add only the nonzero terms of w (lane ``j mod 4`` as in
  ``_dot4``): adding a zero term to a partial sum that starts at +0.0 never changes it, so
  skipping it is exact, and a Frank-Wolfe iterate has at most K nonzeros. The support is found
  in one O(d) pass per call; when it is dense (more than d/16 entries) the margins loop over
  every coordinate instead. ``s * g`` with s = +-1 is exact, so pass 2a adds exactly the
  dense kernel's terms.
- ``scale == 0`` selects the exact argmax without drawing (the non-private run).
- Every variate is drawn (no skipping as in ``_noisy_max``): 2d draws cost less than the
  m * d multiply-adds of the gradient at any batch size m >= 2.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs, fmax, fmin
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
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


cdef Py_ssize_t _select(const double[::1] v, int domain, double radius, double scale,
                        int kind, bitgen_t **gens, Py_ssize_t n_blocks,
                        Py_ssize_t block_coords, double *block_best, Py_ssize_t *block_c,
                        int n_threads) noexcept nogil:
    """Pass 2b: report-noisy-max over the vertices scored from ``v``; the winning candidate.

    Random block b scores its coordinates and keeps its best (strict ``>``: lowest candidate on
    ties); the blocks are then combined in block order.
    """
    cdef Py_ssize_t d = v.shape[0], b, j, lo, hi, best_c = -1
    cdef double s, best, noise_p, noise_m
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        lo = b * block_coords
        hi = min(lo + block_coords, d)
        best = -INFINITY
        block_c[b] = -1
        if domain == L1_BALL:
            for j in range(lo, hi):
                s = radius * v[j]
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
                _consider(-(radius * v[j]) + noise_p, j, &best, &block_c[b])
        block_best[b] = best
    best = -INFINITY
    for b in range(n_blocks):
        if block_best[b] > best:
            best = block_best[b]
            best_c = block_c[b]
    return best_c


cdef class _Selection:
    """Per-call selection buffers: the block streams and the per-block winners."""
    cdef bitgen_t **gens
    cdef double *block_best
    cdef Py_ssize_t *block_c
    cdef Py_ssize_t n_blocks, block_coords

    def __cinit__(self, Py_ssize_t d, int domain, double scale, object bit_generators):
        cdef Py_ssize_t per_coord = 2 if domain == L1_BALL else 1
        self.block_coords = BLOCK_SIZE // per_coord
        self.n_blocks = (d + self.block_coords - 1) // self.block_coords
        self.gens = NULL
        if domain != NO_SELECTION and scale > 0.0:
            self.gens = bitgen_array(bit_generators, self.n_blocks)
        self.block_best = <double *> malloc(self.n_blocks * sizeof(double))
        self.block_c = <Py_ssize_t *> malloc(self.n_blocks * sizeof(Py_ssize_t))
        if self.block_best == NULL or self.block_c == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.gens)
        free(self.block_best)
        free(self.block_c)

    cdef object run(self, const double[::1] v, int domain, double radius, double scale,
                    int kind, int n_threads):
        cdef Py_ssize_t best_c
        if domain == NO_SELECTION:
            return -1, 0
        with nogil:
            best_c = _select(v, domain, radius, scale, kind, self.gens, self.n_blocks,
                             self.block_coords, self.block_best, self.block_c, n_threads)
        if best_c < 0:
            # every noisy score NaN or -inf (an infinite noise scale, or a non-finite
            # estimate): no vertex won, and index -1 would be written out of bounds
            raise ValueError("report-noisy-max selected no vertex: every noisy score is NaN "
                             "or -inf (the noise scale or the gradient estimate is not "
                             "finite).")
        if domain == L1_BALL:
            return best_c // 2, (1 if best_c % 2 == 0 else -1)
        return best_c, 1


cdef inline void _finish_estimate(double[::1] v_out, const double[::1] v_prev, bint correction,
                                  Py_ssize_t lo, Py_ssize_t hi, double inv_m) noexcept nogil:
    """v = v_prev + acc / m (correction) or acc / m, on coordinates lo..hi-1."""
    cdef Py_ssize_t j
    for j in range(lo, hi):
        if correction:
            v_out[j] = v_prev[j] + v_out[j] * inv_m
        else:
            v_out[j] = v_out[j] * inv_m


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
    cdef Py_ssize_t t, i, j, lo, hi, c
    cdef Py_ssize_t n_chunks = (d + _ACC_CHUNK - 1) // _ACC_CHUNK
    cdef double g, inv_m = 1.0 / m
    cdef _Pair z
    cdef const double *xrow
    if m == 0 or d == 0:
        raise ValueError("rows and the features must not be empty")
    cdef _Selection sel = _Selection(d, domain, scale, bit_generators)
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
        _finish_estimate(v_out, v_prev, correction, lo, hi, inv_m)
    return sel.run(v_out, domain, radius, scale, kind, n_threads)


cdef inline double _sign(const uint64_t *row, Py_ssize_t j) noexcept nogil:
    """Feature j of a packed row: +1.0 if its bit is set, else -1.0."""
    return <double> (<int> ((row[j >> 6] >> (j & 63)) & 1) * 2 - 1)


# _BYTE_SIGNS[8 k + i] = +1.0 if bit i of the byte k is set, else -1.0: one byte of a packed
# row unpacked to its eight +-1 features by one 64-byte copy.
cdef double _BYTE_SIGNS[2048]
cdef Py_ssize_t _k
for _k in range(2048):
    _BYTE_SIGNS[_k] = 1.0 if ((_k >> 3) >> (_k & 7)) & 1 else -1.0


cdef inline void _unpack_word(uint64_t word, double *out) noexcept nogil:
    """The 64 +-1 features of one packed word into ``out[0:64]``."""
    cdef int k
    for k in range(8):
        memcpy(&out[8 * k], &_BYTE_SIGNS[8 * ((word >> (8 * k)) & 255)], 8 * sizeof(double))


cdef inline double _sign_dot4(const uint64_t *row, const double[::1] w,
                              const Py_ssize_t *support, Py_ssize_t n_support,
                              Py_ssize_t d) noexcept nogil:
    """``_dot4`` of the unpacked row with w, adding only w's nonzero terms (exact).

    ``support`` lists w's nonzeros in increasing order; NULL: loop over every coordinate, one
    unpacked word (64 features, a multiple of 4: lanes stay aligned) at a time.
    """
    cdef double lane[4]
    cdef double buf[64]
    cdef double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0
    cdef const double *wp = &w[0]
    cdef Py_ssize_t k, j = 0, i, top
    if support == NULL:
        while j < d:
            _unpack_word(row[j >> 6], buf)
            top = min(64, d - j)
            i = 0
            while i + 3 < top:
                l0 = l0 + buf[i] * wp[j + i]
                l1 = l1 + buf[i + 1] * wp[j + i + 1]
                l2 = l2 + buf[i + 2] * wp[j + i + 2]
                l3 = l3 + buf[i + 3] * wp[j + i + 3]
                i += 4
            if i < top:
                l0 = l0 + buf[i] * wp[j + i]
            if i + 1 < top:
                l1 = l1 + buf[i + 1] * wp[j + i + 1]
            if i + 2 < top:
                l2 = l2 + buf[i + 2] * wp[j + i + 2]
            j += 64
        return (l0 + l1) + (l2 + l3)
    lane[0] = 0.0
    lane[1] = 0.0
    lane[2] = 0.0
    lane[3] = 0.0
    for k in range(n_support):
        j = support[k]
        lane[j & 3] = lane[j & 3] + _sign(row, j) * wp[j]
    return (lane[0] + lane[1]) + (lane[2] + lane[3])


cdef void _sign_accumulate(const uint64_t[:, ::1] signs, const double[::1] resid,
                           Py_ssize_t lo, Py_ssize_t hi, double[::1] v_out) noexcept nogil:
    """``v_out[lo:hi] = sum_t resid[t] * unpack(signs)[t, lo:hi]``, rows in batch order.

    ``lo`` is a multiple of 64 and ``hi - lo <= _ACC_CHUNK``: each row's slice is unpacked to
    +-1 doubles in a stack buffer, then added as ``g * s`` (exact for s = +-1), the dense
    kernel's loop.
    """
    cdef double sbuf[1024]          # _ACC_CHUNK
    cdef Py_ssize_t t, j, k, m = signs.shape[0], n = hi - lo, words = (hi - lo + 63) // 64
    cdef double g
    cdef const uint64_t *srow
    cdef double *out = &v_out[lo]
    for j in range(n):
        out[j] = 0.0
    for t in range(m):
        g = resid[t]
        srow = &signs[t, lo >> 6]
        for k in range(words):
            _unpack_word(srow[k], &sbuf[64 * k])
        for j in range(n):
            out[j] = out[j] + g * sbuf[j]


cdef Py_ssize_t *_support(const double[::1] w, Py_ssize_t *n_support) except? NULL:
    """w's nonzeros in increasing order (malloc'd; caller frees), or NULL when dense.

    Dense means more than d / 16 nonzeros: the full loop is then as fast.
    """
    cdef Py_ssize_t d = w.shape[0], j, k = 0
    for j in range(d):
        if w[j] != 0.0:
            k += 1
    n_support[0] = k
    if k > d // 16:
        return NULL
    cdef Py_ssize_t *out = <Py_ssize_t *> malloc(max(k, 1) * sizeof(Py_ssize_t))
    if out == NULL:
        raise MemoryError()
    k = 0
    for j in range(d):
        if w[j] != 0.0:
            out[k] = j
            k += 1
    return out


def vr_gradient_rnm_signs(const uint64_t[:, ::1] signs,  # IN  (m, ceil(d / 64)) packed rows
                          Py_ssize_t n_features,
                          const double[::1] y,           # IN  (m,) labels of the batch rows
                          int loss_kind, double loss_param,
                          double clip,                   # bound on |l'| (inf: none)
                          const double[::1] w, double alpha,            # IN  x = alpha w
                          const double[::1] w_prev, double alpha_prev,  # IN  parent x'
                          const double[::1] v_prev,      # IN  (d,) parent estimate
                          bint correction,
                          int domain, double radius, double scale, int kind,
                          object bit_generators,         # IN  one per block of candidates
                          int n_threads,
                          double[::1] resid,             # OUT (m,) r_t
                          double[::1] v_out):            # OUT (d,) the new estimate v
    """``vr_gradient_rnm`` on +-1 features packed as sign bits, for the batch ``signs``.

    Bitwise equal to ``vr_gradient_rnm(unpack(signs), y, arange(m), ..., full(m, clip), ...)``
    (module docstring). Returns ``(coordinate, sign)`` as ``vr_gradient_rnm`` does.
    """
    cdef Py_ssize_t d = n_features, m = signs.shape[0], t, j, lo, hi, c, ns_w = 0, ns_p = 0
    cdef Py_ssize_t n_chunks = (d + _ACC_CHUNK - 1) // _ACC_CHUNK
    cdef double g, inv_m
    cdef const uint64_t *srow
    cdef Py_ssize_t *sup_w = NULL
    cdef Py_ssize_t *sup_p = NULL
    if m == 0 or d <= 0:
        raise ValueError("the batch and the features must not be empty")
    if signs.shape[1] != (d + 63) // 64:
        raise ValueError(f"signs must have ceil(n_features / 64) = {(d + 63) // 64} words per "
                         f"row; got {signs.shape[1]}")
    if (y.shape[0] != m or resid.shape[0] != m or w.shape[0] != d or w_prev.shape[0] != d
            or v_prev.shape[0] != d or v_out.shape[0] != d):
        raise ValueError("y and resid need one entry per batch row; w, w_prev, v_prev and "
                         "v_out one per feature")
    inv_m = 1.0 / m
    cdef _Selection sel = _Selection(d, domain, scale, bit_generators)
    try:
        sup_w = _support(w, &ns_w)
        if correction:
            sup_p = _support(w_prev, &ns_p)
        # Pass 1: per-row derivative differences (margins over the supports).
        for t in prange(m, nogil=True, schedule="static", num_threads=n_threads):
            srow = &signs[t, 0]
            g = _clip(loss_deriv(loss_kind, alpha * _sign_dot4(srow, w, sup_w, ns_w, d), y[t],
                                 loss_param), clip)
            if correction:
                g = g - _clip(loss_deriv(loss_kind,
                                         alpha_prev * _sign_dot4(srow, w_prev, sup_p, ns_p, d),
                                         y[t], loss_param), clip)
            resid[t] = g
    finally:
        free(sup_w)
        free(sup_p)
    # Pass 2a: v_j = sum_t s_tj r_t in batch order; _ACC_CHUNK is a multiple of 64, so a chunk
    # is whole words (the last one ragged).
    for c in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
        lo = c * _ACC_CHUNK
        hi = min(lo + _ACC_CHUNK, d)
        # g * s with s = +-1 is exact: the dense kernel's term g * x_tj.
        _sign_accumulate(signs, resid, lo, hi, v_out)
        _finish_estimate(v_out, v_prev, correction, lo, hi, inv_m)
    return sel.run(v_out, domain, radius, scale, kind, n_threads)


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
