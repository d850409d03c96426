# cython: language_level=3
"""Vectorized proximal operators and Euclidean projections (l2 ball, l1 ball, simplex).

Design
- ``prox_vector`` applies the scalar prox of ``_prox.pxd`` (the same inline function the
  solver kernels cimport) to every coordinate, with one step per coordinate or one step for
  all. Element-wise, so any split is exact: it runs in fixed chunks of ``CHUNK_SIZE``
  coordinates, in parallel only when ``d >= PARALLEL_THRESHOLD`` (below that, OpenMP start-up
  costs more than the loop), and the output is bitwise the same for any ``n_threads`` and
  equal to the NumPy twin ``dpsco_core.reference.prox.prox_vector``.
- ``project_l2_ball``: ``c + (v - c) min(1, R / ||v - c||)``. The squared norm is summed in
  fixed chunks of ``CHUNK_SIZE`` (in parallel above the threshold), partial sums combined in
  chunk order, so the result does not depend on ``n_threads``. When the plain sum of squares
  overflows or may have underflowed, it is recomputed on ``(v - c) / max|v - c|`` (serial).
- ``project_l1_ball`` and ``project_simplex``: the threshold tau of the projection,
  ``sum_i max(y_i - tau, 0) = a`` with ``y = |v|`` (l1 ball, then ``sign(v) max(|v| - tau, 0)``)
  or ``y = v`` (simplex, then ``max(v - tau, 0)``), is found by Condat's algorithm (Condat 2016,
  Algorithm 3 and its reference C code): one pass keeps a candidate support whose running
  tau only increases, then a cleanup removes the elements below tau. Expected O(d) time,
  O(d) worst-case memory (one scratch buffer, allocated once per call and NULL-checked), no
  sort. One Newton step on the piecewise-linear equation over the final support then removes
  the rounding error the running-mean updates accumulate. Serial (the pass is sequential).
- Points already in the set are returned unchanged (bit for bit): ``||v||_1 <= R`` for the l1
  ball, ``||v - c||_2 <= R`` for the l2 ball, and for the simplex ``v >= 0`` with
  ``|sum v - a| <= d eps a``, i.e. a point of the simplex up to the rounding of its sum (the
  projection itself is accurate to that order).

References
- L. Condat, "Fast projection onto the simplex and the l1 ball", Math. Program. 158 (2016).
- J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the l1-ball
  for learning in high dimensions", ICML 2008 (the sort-based O(d log d) twin).
"""

from cython.parallel cimport prange
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, fabs, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from _prox cimport (PENALTY_BOX, PENALTY_ELASTIC_NET, PENALTY_L1, PENALTY_L2, PENALTY_NONE,
                    _soft_threshold, prox_scalar)

cdef enum:
    # Coordinates per chunk: the unit of parallel work and of the partial sums of the l2 norm.
    # A module constant, never derived from the thread count.
    _CHUNK = 16384
    # Below this many coordinates every loop runs on the calling thread.
    _PARALLEL_THRESHOLD = 1048576

CHUNK_SIZE = _CHUNK
PARALLEL_THRESHOLD = _PARALLEL_THRESHOLD
NONE = PENALTY_NONE
L1 = PENALTY_L1
L2 = PENALTY_L2
ELASTIC_NET = PENALTY_ELASTIC_NET
BOX = PENALTY_BOX

# A sum of squares outside [_SUMSQ_LOW, inf) is recomputed with scaling: below it, squares of
# the entries may have underflowed (lost relative accuracy); above, it is inf.
cdef double _SUMSQ_LOW = 1e-280


cdef inline Py_ssize_t _n_chunks(Py_ssize_t d) noexcept nogil:
    return (d + _CHUNK - 1) // _CHUNK


cdef void _prox_range(const double *u, const double *step, bint per_coordinate, int kind,
                      double p1, double p2, double *out, Py_ssize_t lo,
                      Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t i
    cdef double t = step[0]
    if per_coordinate:
        for i in range(lo, hi):
            out[i] = prox_scalar(kind, u[i], step[i], p1, p2)
    else:
        for i in range(lo, hi):
            out[i] = prox_scalar(kind, u[i], t, p1, p2)


def prox_vector(const double[::1] u,      # IN  (d,)
                const double[::1] step,   # IN  (d,) per-coordinate steps, or (1,) for all
                int kind,
                double p1,
                double p2,
                double[::1] out,          # OUT (d,)
                int n_threads):
    """``out[i] = prox_{step_i psi}(u[i])`` for the penalty ``kind`` with parameters (p1, p2).

    ``step`` has length d (one step per coordinate) or 1 (the same step for all: the Python
    wrapper passes a scalar step as a length-1 array). Returns None.
    """
    cdef Py_ssize_t d = u.shape[0], n_chunks = _n_chunks(d), c, lo, hi
    cdef bint per_coordinate = step.shape[0] != 1
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if step.shape[0] != 1 and step.shape[0] != d:
        raise ValueError(f"step must have length 1 or {d}; got {step.shape[0]}")
    if kind < PENALTY_NONE or kind > PENALTY_BOX:
        raise ValueError(f"unknown penalty kind {kind}")
    if d == 0:
        return
    cdef const double *pu = &u[0]
    cdef const double *ps = &step[0]
    cdef double *po = &out[0]
    if d >= _PARALLEL_THRESHOLD and n_threads > 1:
        for c in prange(n_chunks, nogil=True, schedule="static", num_threads=n_threads):
            lo = c * _CHUNK
            hi = min(lo + _CHUNK, d)
            _prox_range(pu, ps, per_coordinate, kind, p1, p2, po, lo, hi)
    else:
        with nogil:
            _prox_range(pu, ps, per_coordinate, kind, p1, p2, po, 0, d)


cdef double _sumsq_range(const double *v, const double *center, double scale, Py_ssize_t lo,
                         Py_ssize_t hi) noexcept nogil:
    """sum((v[lo:hi] - center[lo:hi]) * scale) ** 2), center NULL meaning the origin.

    Eight lane accumulators ``acc[k] += x[i + k]^2``, combined in a fixed tree order: the
    lanes are independent, so the compiler vectorizes the loop without reassociating any sum
    (no -ffast-math), and the bits are the same on every instruction set and thread count.
    One running sum was bound by the latency of its dependent additions (5x slower than
    NumPy's norm at d = 1e6), four scalar accumulators 4x (session 13)."""
    cdef Py_ssize_t i, k, m = hi - (hi - lo) % 8
    cdef double acc[8]
    cdef double x, tail = 0.0
    for k in range(8):
        acc[k] = 0.0
    if center == NULL:
        for i in range(lo, m, 8):
            for k in range(8):
                x = v[i + k] * scale
                acc[k] += x * x
        for i in range(m, hi):
            x = v[i] * scale
            tail += x * x
    else:
        for i in range(lo, m, 8):
            for k in range(8):
                x = (v[i + k] - center[i + k]) * scale
                acc[k] += x * x
        for i in range(m, hi):
            x = (v[i] - center[i]) * scale
            tail += x * x
    return (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
            + tail)


cdef double _dist_l2(const double *v, const double *center, Py_ssize_t d, double *partial,
                     int n_threads) noexcept nogil:
    """||v - center||_2: chunk partial sums combined in chunk order; rescaled if needed."""
    cdef Py_ssize_t n_chunks = _n_chunks(d), c, i
    cdef double total = 0.0, m = 0.0, x
    if d >= _PARALLEL_THRESHOLD and n_threads > 1:
        for c in prange(n_chunks, schedule="static", num_threads=n_threads):
            partial[c] = _sumsq_range(v, center, 1.0, c * _CHUNK, min((c + 1) * _CHUNK, d))
    else:
        for c in range(n_chunks):
            partial[c] = _sumsq_range(v, center, 1.0, c * _CHUNK, min((c + 1) * _CHUNK, d))
    for c in range(n_chunks):
        total += partial[c]
    if _SUMSQ_LOW <= total < INFINITY:
        return sqrt(total)
    if total != total:
        # NaN in v (the caller's finiteness check reads it off this result): the max-abs scan
        # below skips NaN (x > m is false), so a v of NaNs only would give m = 0 and a
        # distance of 0, and project_l2_ball([nan], 1) returned [nan] as "inside".
        return total
    # Overflow or possible underflow: ||x|| = m ||x / m|| with m = max |x_i| (rare; serial).
    for i in range(d):
        x = fabs(v[i] - center[i]) if center != NULL else fabs(v[i])
        if x > m:
            m = x
    if m == 0.0:
        return 0.0
    # Divide by m rather than multiply by 1 / m: for a subnormal m, 1 / m overflows to inf
    # (project_l2_ball([0, 5e-324], 1) gave [nan, nan]); x / m <= 1 never does.
    total = 0.0
    for i in range(d):
        x = ((v[i] - center[i]) if center != NULL else v[i]) / m
        total += x * x
    return m * sqrt(total)


def project_l2_ball(const double[::1] v,        # IN  (d,)
                    const double[::1] center,   # IN  (d,), or (0,) for the origin
                    double radius,
                    double[::1] out,            # OUT (d,)
                    int n_threads):
    """``out = c + (v - c) min(1, radius / ||v - c||_2)``; ``v`` itself when inside.

    ``radius`` >= 0 (inf allowed). Returns ``||v - c||_2`` as computed (NaN or inf for
    non-finite input or an overflowing ``v - c``, when ``out`` holds no projection), so
    that the caller can check the range in which ``out`` is exact without a pass of its own.
    """
    cdef Py_ssize_t d = v.shape[0], n_chunks = _n_chunks(d), i, c
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if center.shape[0] != 0 and center.shape[0] != d:
        raise ValueError(f"center must have length 0 or {d}; got {center.shape[0]}")
    if d == 0:
        return 0.0
    cdef const double *pv = &v[0]
    cdef const double *pc = &center[0] if center.shape[0] != 0 else NULL
    cdef double *po = &out[0]
    cdef double dist, scale
    cdef double *partial = <double *> malloc(n_chunks * sizeof(double))
    if partial == NULL:
        raise MemoryError()
    try:
        with nogil:
            dist = _dist_l2(pv, pc, d, partial, n_threads)
            if dist <= radius:
                memcpy(po, pv, d * sizeof(double))
            else:
                scale = radius / dist
                # out = c + (v - c) * scale   (or v * scale about the origin)
                if d >= _PARALLEL_THRESHOLD and n_threads > 1:
                    for i in prange(d, schedule="static", num_threads=n_threads):
                        po[i] = (pc[i] + (pv[i] - pc[i]) * scale) if pc != NULL else (
                            pv[i] * scale)
                else:
                    for i in range(d):
                        po[i] = (pc[i] + (pv[i] - pc[i]) * scale) if pc != NULL else (
                            pv[i] * scale)
    finally:
        free(partial)
    return dist


# Sums with four interleaved accumulators, in a fixed order: a quarter of the dependent
# additions of one running sum, so the loop runs at memory speed.

cdef double _norm1(const double *v, Py_ssize_t d) noexcept nogil:
    """sum(|v[:d]|)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t i, m = d - d % 4
    for i in range(0, m, 4):
        s0 += fabs(v[i])
        s1 += fabs(v[i + 1])
        s2 += fabs(v[i + 2])
        s3 += fabs(v[i + 3])
    for i in range(m, d):
        s0 += fabs(v[i])
    return (s0 + s1) + (s2 + s3)


cdef double _sum(const double *v, Py_ssize_t d) noexcept nogil:
    """sum(v[:d])."""
    return _sum_minus(v, d, 0.0)


cdef double _sum_minus(const double *v, Py_ssize_t d, double c) noexcept nogil:
    """sum(v[:d] - c)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t i, m = d - d % 4
    for i in range(0, m, 4):
        s0 += v[i] - c
        s1 += v[i + 1] - c
        s2 += v[i + 2] - c
        s3 += v[i + 3] - c
    for i in range(m, d):
        s0 += v[i] - c
    return (s0 + s1) + (s2 + s3)


cdef double _simplex_threshold(const double *v, Py_ssize_t d, bint absolute, double a,
                               double lower, double *aux) noexcept nogil:
    """tau with sum_i max(y_i - tau, 0) = a, y = |v| (absolute) or v; a > 0, d >= 1.

    Any candidate set C containing the support S* gives a lower bound tau_C = (sum_C y - a) /
    |C| <= tau* (as sum_C (y - tau*) <= sum_i max(y_i - tau*, 0) = a), and y <= tau_C puts y
    outside S*. ``lower`` is tau_C for C = everything (the callers know sum y). Three stages,
    each keeping the candidates ``aux[:n]`` (``aux`` holds d doubles), their sum and count:

    1. one pass keeps y > lower;
    2. filter passes at the fixed threshold tau_C (Michelot 1986), while a pass removes at
       least 1/8 of the candidates: no dependency between iterations, so they run at memory
       speed, and each shrinks the set geometrically on random data;
    3. Condat's cleanup (Condat 2016, Algorithm 3, step 4): remove y <= tau, updating tau after
       each removal, until a pass removes nothing; then C = S*.

    Expected O(d) on random data, like Condat's algorithm whose first pass stage 1-2 replace:
    its running update ``tau += (y - tau) / |C|`` is one long chain of dependent divisions,
    several times slower than these passes. Finally one Newton step on the linear equation
    sum_{S*} (y - tau) = a removes the rounding accumulated in the running sum.
    """
    cdef Py_ssize_t i, j, n = 0, n_old
    cdef double y, tau, sum_ = 0.0, k, first
    for i in range(d):
        # aux = y[y > lower], branch-free (the test is a coin flip near the threshold).
        y = fabs(v[i]) if absolute else v[i]
        aux[n] = y
        n += y > lower
    if n == 0:                       # lower rounded above every y: keep every candidate
        for i in range(d):
            aux[i] = fabs(v[i]) if absolute else v[i]
        n = d
    sum_ = _sum(aux, n)
    while True:
        tau = (sum_ - a) / <double> n
        n_old = n
        n = 0
        first = aux[0]
        for j in range(n_old):
            y = aux[j]
            aux[n] = y
            n += y > tau
        if n == 0:                   # rounding only: tau reached the largest candidate;
            aux[0] = first           # only aux[0] was overwritten: restore it
            n = n_old
            break
        sum_ = _sum(aux, n)
        if 8 * (n_old - n) < n_old:
            break
    k = <double> n
    while True:
        n_old = n
        n = 0
        for j in range(n_old):
            y = aux[j]
            if y * k > sum_ - a or k <= 1.0:   # y > tau = (sum - a) / k; keep at least one
                aux[n] = y
                n += 1
            else:
                sum_ = sum_ - y
                k = k - 1.0
        if n == n_old:
            break
    tau = (sum_ - a) / k
    return tau + (_sum_minus(aux, n, tau) - a) / k


cdef int _project_threshold(const double *v, Py_ssize_t d, bint absolute, double a,
                            double lower, double *out) except -1:
    """out = sign(v) max(|v| - tau, 0) (absolute) or max(v - tau, 0), tau from
    ``_simplex_threshold``; its scratch buffer is allocated here, once, and NULL-checked."""
    cdef Py_ssize_t i
    cdef double tau, r
    cdef double *aux = <double *> malloc(d * sizeof(double))
    if aux == NULL:
        raise MemoryError()
    with nogil:
        tau = _simplex_threshold(v, d, absolute, a, lower, aux)
        free(aux)
        if absolute:
            for i in range(d):
                out[i] = _soft_threshold(v[i], tau)
        else:
            for i in range(d):
                r = v[i] - tau
                out[i] = r if r > 0.0 else 0.0
    return 0


def project_l1_ball(const double[::1] v,   # IN  (d,)
                    double radius,
                    double[::1] out):       # OUT (d,)
    """``out = argmin_{||x||_1 <= radius} ||x - v||_2``: ``v`` itself when ``||v||_1 <= radius``,
    0 when ``radius == 0``, else ``sign(v) max(|v| - tau, 0)`` with Condat's tau. Returns None.
    """
    cdef Py_ssize_t d = v.shape[0], i
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if d == 0:
        return
    cdef const double *pv = &v[0]
    cdef double *po = &out[0]
    cdef double norm1 = 0.0
    with nogil:
        norm1 = _norm1(pv, d)
    if norm1 <= radius:
        with nogil:
            memcpy(po, pv, d * sizeof(double))
        return
    if radius == 0.0:
        with nogil:
            for i in range(d):
                po[i] = 0.0
        return
    _project_threshold(pv, d, True, radius, (norm1 - radius) / <double> d, po)


def project_simplex(const double[::1] v,   # IN  (d,)
                    double total,
                    double[::1] out):       # OUT (d,)
    """``out = argmin {||x - v||_2 : x >= 0, sum(x) = total}`` = ``max(v - tau, 0)``.

    ``total`` >= 0 (0 gives 0). ``v`` itself when ``v >= 0`` and ``|sum(v) - total| <= d eps
    total``. Returns None.
    """
    cdef Py_ssize_t d = v.shape[0], i
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if d == 0:
        return
    cdef const double *pv = &v[0]
    cdef double *po = &out[0]
    cdef double s = 0.0, vmin = INFINITY
    with nogil:
        for i in range(d):
            s += pv[i]
            if pv[i] < vmin:
                vmin = pv[i]
    if total == 0.0:
        with nogil:
            for i in range(d):
                po[i] = 0.0
        return
    if vmin >= 0.0 and fabs(s - total) <= <double> d * DBL_EPSILON * total:
        with nogil:
            memcpy(po, pv, d * sizeof(double))
        return
    _project_threshold(pv, d, False, total, (s - total) / <double> d, po)
