# cython: language_level=3
"""Batches of MLMC optimum-estimator draws (Asi et al. 2021, eq. (1) with EpochSGD, Algorithm 8)
for a linear-model objective, in parallel over copies.

What one copy computes (note 001, sections 2.1-2.3): for

    F(x) = (1/n) sum_s l(<a_s, x>, b_s) + (mu/2) ||x - c||^2 + <lin, x>   over a domain X,

EpochSGD from x_0 = argmin_X psi, epoch k having T_k = 16 2^(k-1) iterates and step
eta_k = 1 / (4 mu 2^(k-1)); its epoch averages are the snapshots. The copy draws
K ~ Geom(1/2) and returns ``snap[e0] + 2^K (snap[e2] - snap[e1])`` with
``e1 = level_epochs[base_level + K - 1]``, ``e2 = level_epochs[base_level + K]``,
``e0 = level_epochs[base_level]``, or ``snap[e0]`` when ``base_level + K > j_max`` (truncated)
or ``e1 == e2`` (a zero difference under the paper's levels; no extra epoch is run).
``level_epochs`` (length j_max + 1) encodes the level scheme; Python builds it.

Coordinates: every iterate is stored relative to the prox centre, u = x - c (note 8.2,
pitfall 1: the 2^K amplification of round-off acts on ||u|| <= G/mu instead of ||x||). The
margins are <a_s, x> = z0[s] + <a_s, u> with z0 = X c computed once by the caller; the domain
is given in relative coordinates too (ball centre minus c, box bounds minus c). One step is

    g  = l'(z, b_s) a_s, scaled by min(1, clip / (|l'| ||a_s||)) (clip = inf: no clipping)
    u <- Proj_{X - c}((u - eta (g + lin)) / (1 + eta mu))

the exact prox-gradient step for psi (the objective is an isotropic quadratic).

Randomness and draw order (reproduced by ``dpsco_core.reference.mlmc``): copies are split into
fixed blocks of COPY_BLOCK consecutive copies; block b owns bit generator b (seeding one numpy
bit generator per copy costs ~20 us in Python, more than a typical copy). Block b first draws,
for its copies in order, one raw 64-bit word u each (``next_uint64``): K = ctz(u) + 1 (u = 0:
truncated). Then its copies run in order, every gradient step drawing its sample index,
``Generator.integers(0, n)`` (``random_bounded_uint64``), and nothing else: the index stream is
data-independent.

Threading: the K's fix every block's cost; blocks then run longest first under a dynamic
schedule (the cost is heavy-tailed, P(cost >= t) ~ 1/t, note 8.2 pitfall 4), each with
thread-local scratch, writing only its own output rows: results are bitwise identical for any
thread count. Blocks are handed out by ``_interrupt.pxd``'s ``next_item`` (a dynamic schedule
that lets the master keep listening for Ctrl-C once it has no block left, napping 20 us,
then doubling up to 0.5 ms, so that it joins within ~20 us of a short tail); copies poll for
signals as they step, and an interrupted call raises with its OUT buffers partly written.

Summation: dot products and squared norms use four lanes (term j to lane j mod 4, each lane
summed left to right from 0.0, result (a0 + a1) + (a2 + a3)); everything else is elementwise.
"""

from cython.parallel cimport parallel
from libc.math cimport fabs, isfinite, sqrt
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_bounded_uint64

import numpy as np

from _interrupt cimport (Interrupt, POLL_WORK, interrupt_init, item_done, next_item, poll,
                         raise_if_interrupted)
from _loss cimport loss_deriv
from _batch cimport dot_row
from _rng cimport bitgen_array

cdef extern from "_seedseq.h" nogil:
    ctypedef struct dpsco_pcg64dxsm_t:
        int has_uint32
    void dpsco_ss_mix_entropy(uint32_t *pool, size_t pool_size, const uint32_t *entropy,
                              size_t n)
    void dpsco_pcg64dxsm_seed(dpsco_pcg64dxsm_t *rng, const uint32_t *pool, size_t pool_size)
    uint64_t dpsco_pcg64dxsm_uint64(void *st)
    uint32_t dpsco_pcg64dxsm_uint32(void *st)
    double dpsco_pcg64dxsm_double(void *st)
    uint64_t dpsco_pcg64dxsm_raw(void *st)


cdef extern from *:
    """
    #include "_interrupt.h"
    /* dpsco_master_wait with a short, growing nap: the master of an MLMC batch has no block
     * left while the other threads finish their last (short, longest-first) blocks; a fixed
     * 0.5 ms nap overslept their end by up to 0.5 ms of a 15 ms call (issue 18: 1 -> 2
     * threads). 20 us, doubling up to 0.5 ms: a short tail ends within ~20 us, a long one
     * costs no more wake-ups than before. Signal checks as in dpsco_master_wait. */
    static void dpsco_mlmc_master_wait(dpsco_interrupt *it, Py_ssize_t n_items) {
        Py_ssize_t done;
        long nap_ns = 20000;
        if (DPSCO_THREAD_NUM() != 0)
            return;
        for (;;) {
    #ifdef _OPENMP
    #pragma omp critical(dpsco_item_done)
    #endif
            {
                done = it->n_done;
            }
            if (done >= n_items)
                return;
            dpsco_interrupted(it);
    #ifdef _WIN32
            Sleep(1);
    #else
            {
                struct timespec ts = {0, nap_ns};
                nanosleep(&ts, NULL);
            }
    #endif
            if (nap_ns < 500000)
                nap_ns = 2 * nap_ns < 500000 ? 2 * nap_ns : 500000;
        }
    }
    """
    void mlmc_master_wait "dpsco_mlmc_master_wait"(Interrupt *it, Py_ssize_t n_items) nogil


cdef struct SeededBlocks:
    # n block generators seeded in C: gens[b] is PCG64DXSM(SeedSequence(entropy,
    # spawn_key + (b,), pool_size)), bitwise numpy's (src_cython/_seedseq.h)
    bitgen_t **gens
    bitgen_t *bitgens
    dpsco_pcg64dxsm_t *states


cdef int _seed_blocks(SeededBlocks *out, const uint32_t[::1] run_entropy,
                      const uint32_t[::1] spawn_words, Py_ssize_t pool_size,
                      Py_ssize_t n) except -1:
    """The n block generators of a call (``seed`` = ("seed", entropy words, spawn-key words,
    pool size), as ``dpsco_core._random.seed_words`` makes it). ``run_entropy`` is the
    seed's entropy as uint32 words, already padded with zeros to ``pool_size`` (numpy pads
    when a spawn key is present, and a child always has one); the block index is one word."""
    cdef Py_ssize_t n_run = run_entropy.shape[0], n_spawn = spawn_words.shape[0], b, k
    cdef Py_ssize_t n_words = n_run + n_spawn + 1
    if pool_size < 1 or n_run < pool_size or n >= 4294967296:
        raise ValueError("invalid seed words")
    out.gens = <bitgen_t **> malloc(max(n, 1) * sizeof(bitgen_t *))
    out.bitgens = <bitgen_t *> malloc(max(n, 1) * sizeof(bitgen_t))
    out.states = <dpsco_pcg64dxsm_t *> malloc(max(n, 1) * sizeof(dpsco_pcg64dxsm_t))
    cdef uint32_t *words = <uint32_t *> malloc(n_words * sizeof(uint32_t))
    cdef uint32_t *pool = <uint32_t *> malloc(pool_size * sizeof(uint32_t))
    if (out.gens == NULL or out.bitgens == NULL or out.states == NULL or words == NULL
            or pool == NULL):
        free(words)
        free(pool)
        _free_blocks(out)
        raise MemoryError()
    for k in range(n_run):
        words[k] = run_entropy[k]
    for k in range(n_spawn):
        words[n_run + k] = spawn_words[k]
    with nogil:
        for b in range(n):
            words[n_words - 1] = <uint32_t> b
            dpsco_ss_mix_entropy(pool, pool_size, words, n_words)
            dpsco_pcg64dxsm_seed(&out.states[b], pool, pool_size)
            out.bitgens[b].state = <void *> &out.states[b]
            out.bitgens[b].next_uint64 = &dpsco_pcg64dxsm_uint64
            out.bitgens[b].next_uint32 = &dpsco_pcg64dxsm_uint32
            out.bitgens[b].next_double = &dpsco_pcg64dxsm_double
            out.bitgens[b].next_raw = &dpsco_pcg64dxsm_raw
            out.gens[b] = &out.bitgens[b]
    free(words)
    free(pool)
    return 0


cdef void _free_blocks(SeededBlocks *blocks) noexcept:
    free(blocks.gens)
    free(blocks.bitgens)
    free(blocks.states)
    blocks.gens = NULL
    blocks.bitgens = NULL
    blocks.states = NULL


def seeded_block_draws(tuple seed, Py_ssize_t n_blocks, Py_ssize_t n_draws):
    """``(n_blocks, n_draws)`` raw 64-bit words of the C-seeded block generators (tests:
    bitwise equal to ``PCG64DXSM(child_b).random_raw(n_draws)``)."""
    cdef SeededBlocks blocks
    cdef Py_ssize_t b, t
    out = np.empty((n_blocks, n_draws), dtype=np.uint64)
    cdef uint64_t[:, ::1] o = out
    _seed_blocks(&blocks, seed[1], seed[2], seed[3], n_blocks)
    try:
        for b in range(n_blocks):
            for t in range(n_draws):
                o[b, t] = blocks.gens[b].next_uint64(blocks.gens[b].state)
    finally:
        _free_blocks(&blocks)
    return out


DOMAIN_NONE = 0
DOMAIN_BALL = 1
DOMAIN_BOX = 2
cdef enum:
    # Copies per random block (a module constant, never derived from the thread count).
    _COPY_BLOCK = 16

COPY_BLOCK = _COPY_BLOCK
#: K of a truncated-by-zero-word draw (u = 0); any K > j_max - base_level truncates.
K_ZERO_WORD = 65


cdef struct Spec:
    Py_ssize_t n
    Py_ssize_t d
    int loss_kind
    double loss_param
    double clip
    double mu
    int domain_kind
    double radius


cdef inline double _lane_dot(const double *a, const double *b, Py_ssize_t d) noexcept nogil:
    """sum_j a[j] b[j] in four lanes: ``_batch.pxd``'s dense ``dot_row`` (one implementation)."""
    return dot_row(a, <const int32_t *> NULL, d, b)


cdef inline void _project(const Spec *s, double *u, const double *da, const double *db,
                          double *tmp) noexcept nogil:
    """u <- Proj_{X - c}(u): ball (centre da, radius) or box [da, db], in place."""
    cdef Py_ssize_t j
    cdef double nrm, scale
    if s.domain_kind == 1:
        for j in range(s.d):
            tmp[j] = u[j] - da[j]
        nrm = sqrt(_lane_dot(tmp, tmp, s.d))
        if nrm > s.radius:
            scale = s.radius / nrm
            for j in range(s.d):
                u[j] = da[j] + tmp[j] * scale
    elif s.domain_kind == 2:
        for j in range(s.d):
            if u[j] < da[j]:
                u[j] = da[j]
            elif u[j] > db[j]:
                u[j] = db[j]


cdef inline int _draw_k(bitgen_t *gen) noexcept nogil:
    """K = ctz(u) + 1 from one raw word; K_ZERO_WORD for u = 0."""
    cdef uint64_t u = gen.next_uint64(gen.state)
    cdef int k = 1
    if u == 0:
        return 65
    while (u & 1) == 0:
        u >>= 1
        k += 1
    return k


cdef int64_t _run_copy(const Spec *s, const double *X, const double *y, const double *z0,
                       const double *row_norms, const double *lin, const double *da,
                       const double *db, bitgen_t *gen, Py_ssize_t e0, Py_ssize_t e1,
                       Py_ssize_t e2, double weight, double *u, double *acc, double *base,
                       double *prev, double *tmp, double *out, Interrupt *it) noexcept nogil:
    """One copy (its K already drawn): writes out[0:d] (relative to c), returns its gradients
    (or stops early, out unwritten, once ``it`` is interrupted)."""
    cdef Py_ssize_t d = s.d, j, k, t, idx, budget = POLL_WORK
    cdef Py_ssize_t e_last = e2 if e2 > e1 else e0
    cdef int64_t n_grads = 0, t_k = 16
    cdef double eta = 1.0 / (4.0 * s.mu), denom, z, gs, gn
    cdef const double *xs
    # x_0 = argmin_X psi = Proj_X(c - lin / mu)
    for j in range(d):
        u[j] = -lin[j] / s.mu
    _project(s, u, da, db, tmp)
    if e0 == 0:
        for j in range(d):
            base[j] = u[j]
    if e1 == 0 and e2 > e1:
        for j in range(d):
            prev[j] = u[j]
    for k in range(1, e_last + 1):
        denom = 1.0 + eta * s.mu
        # x_k^1: the prox step without a gradient
        for j in range(d):
            u[j] = (u[j] - eta * lin[j]) / denom
        _project(s, u, da, db, tmp)
        for j in range(d):
            acc[j] = u[j]
        for t in range(1, t_k):
            if poll(it, &budget, 4 * d + 8):
                return n_grads
            idx = <Py_ssize_t> random_bounded_uint64(gen, 0, <uint64_t> (s.n - 1), 0, 0)
            xs = X + idx * d
            z = z0[idx] + _lane_dot(xs, u, d)
            gs = loss_deriv(s.loss_kind, z, y[idx], s.loss_param)
            gn = fabs(gs) * row_norms[idx]
            if gn > s.clip:
                gs = gs * (s.clip / gn)
            for j in range(d):
                u[j] = (u[j] - eta * (gs * xs[j] + lin[j])) / denom
            _project(s, u, da, db, tmp)
            for j in range(d):
                acc[j] = acc[j] + u[j]
        n_grads += t_k - 1
        for j in range(d):
            u[j] = acc[j] / <double> t_k
        if k == e0:
            for j in range(d):
                base[j] = u[j]
        if k == e1 and e2 > e1:
            for j in range(d):
                prev[j] = u[j]
        eta = eta * 0.5
        t_k = 2 * t_k
    if e2 > e1:
        for j in range(d):
            out[j] = base[j] + weight * (u[j] - prev[j])
    else:
        for j in range(d):
            out[j] = base[j]
    return n_grads


cdef int _batch(const Spec *s, const double *X, const double *y, const double *z0,
                const double *row_norms, const double *lin, const double *da, const double *db,
                bitgen_t **gens, Py_ssize_t n_copies, Py_ssize_t n_blocks, const int64_t *order,
                const int64_t *e0, const int64_t *e1, const int64_t *e2, const double *weight,
                double *out, int64_t *n_grads, int n_threads, Interrupt *it,
                const double *center, double *samples,
                unsigned char *block_bad) noexcept nogil:
    """Blocks order[0], order[1], ... in parallel (dynamic schedule), the copies of a block in
    order on its generator; -1 if scratch allocation failed. With ``samples`` (not NULL),
    also ``samples[m] = center + out[m]`` and ``block_bad[b] = 1`` if a sample of block b is
    not finite: the caller's former serial ``center + out`` and finiteness scan, done by the
    thread that wrote the copy (issue 18: 1 -> 2 threads)."""
    cdef Py_ssize_t i, b, m, j, d = s.d
    cdef double *scratch
    cdef double v
    cdef unsigned char bad
    cdef int failed = 0
    with parallel(num_threads=n_threads):
        scratch = <double *> malloc(5 * d * sizeof(double))
        i = next_item(it)
        while i < n_blocks:
            b = order[i]
            for m in range(b * _COPY_BLOCK, min((b + 1) * _COPY_BLOCK, n_copies)):
                if scratch == NULL:
                    n_grads[m] = -1     # no gradient count is negative: marks the failure
                else:
                    n_grads[m] = _run_copy(s, X, y, z0, row_norms, lin, da, db, gens[b],
                                           e0[m], e1[m], e2[m], weight[m], scratch,
                                           scratch + d, scratch + 2 * d, scratch + 3 * d,
                                           scratch + 4 * d, out + m * d, it)
            if samples != NULL and scratch != NULL:
                bad = 0
                for m in range(b * _COPY_BLOCK, min((b + 1) * _COPY_BLOCK, n_copies)):
                    for j in range(d):
                        v = center[j] + out[m * d + j]      # numpy's center + out, per element
                        samples[m * d + j] = v
                        if not isfinite(v):
                            bad = 1
                block_bad[b] = bad
            item_done(it)
            i = next_item(it)
        mlmc_master_wait(it, n_blocks)
        free(scratch)
    for m in range(n_copies):
        if n_grads[m] < 0:
            failed = 1
    return -1 if failed else 0


def mlmc_glm_batch(const double[:, ::1] X,          # IN  (n, d) C-ordered features
                   const double[::1] y,             # IN  (n,) labels
                   const double[::1] z0,            # IN  (n,) X @ c (margins at the centre)
                   const double[::1] row_norms,     # IN  (n,) ||a_s||_2 (used by clipping)
                   int loss_kind, double loss_param,
                   double clip,                     # per-sample gradient norm bound, inf: none
                   const double[::1] linear,        # IN  (d,) linear term of psi
                   double mu,                       # strong convexity of psi (> 0)
                   int domain_kind,                 # DOMAIN_NONE, DOMAIN_BALL or DOMAIN_BOX
                   const double[::1] domain_a,      # IN  (d,) ball centre - c, or lower - c
                   const double[::1] domain_b,      # IN  (d,) upper - c (box; else unused)
                   double radius,                   # ball radius
                   const int64_t[::1] level_epochs, # IN  (j_max + 1,) snapshot of each level
                   Py_ssize_t base_level,
                   object bit_generators,           # IN  one per block of COPY_BLOCK copies,
                                                    #     or a seed tuple (seeded in C)
                   double[:, ::1] out,              # OUT (M, d) draws relative to c
                   int64_t[::1] k_out,              # OUT (M,) geometric variate K of each copy
                   int64_t[::1] n_grads_out,        # OUT (M,) stochastic gradients used
                   int n_threads,
                   const double[::1] center=None,   # IN  (d,) prox centre c (with samples)
                   double[:, ::1] samples=None):    # OUT (M, d) draws, c + out
    """M independent MLMC draws (module docstring), filling the OUT buffers. With ``center``
    and ``samples``, also ``samples = center + out`` (bitwise numpy's sum), computed in the
    parallel region; returns whether every sample is finite (True without ``samples``)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], n_copies = out.shape[0], m
    cdef Py_ssize_t j_max = level_epochs.shape[0] - 1
    if n == 0 or d == 0:
        raise ValueError("X must have at least one row and one column")
    for name, arr in (("y", y), ("z0", z0), ("row_norms", row_norms)):
        if arr.shape[0] != n:
            raise ValueError(f"{name} has length {arr.shape[0]}, X has {n} rows")
    for name, arr in (("linear", linear), ("domain_a", domain_a), ("domain_b", domain_b)):
        if arr.shape[0] != d:
            raise ValueError(f"{name} has length {arr.shape[0]}, X has {d} columns")
    if out.shape[1] != d or k_out.shape[0] != n_copies or n_grads_out.shape[0] != n_copies:
        raise ValueError("out must be (M, d) and k_out, n_grads_out of length M")
    if j_max < 0 or base_level < 0 or base_level > j_max:
        raise ValueError(f"need 0 <= base_level <= j_max; got {base_level}, {j_max}")
    if not mu > 0.0:
        raise ValueError(f"mu must be > 0; got {mu}")
    if domain_kind not in (DOMAIN_NONE, DOMAIN_BALL, DOMAIN_BOX):
        raise ValueError(f"unknown domain kind {domain_kind}")
    if (center is None) != (samples is None):
        raise ValueError("give both center and samples, or neither")
    if samples is not None and (center.shape[0] != d or samples.shape[0] != n_copies
                                or samples.shape[1] != d):
        raise ValueError("center must have length d and samples shape (M, d)")
    if n_copies == 0:
        return True
    cdef Spec s
    s.n = n
    s.d = d
    s.loss_kind = loss_kind
    s.loss_param = loss_param
    s.clip = clip
    s.mu = mu
    s.domain_kind = domain_kind
    s.radius = radius
    cdef Py_ssize_t n_blocks = (n_copies + _COPY_BLOCK - 1) // _COPY_BLOCK
    cdef SeededBlocks blocks
    blocks.gens = NULL
    blocks.bitgens = NULL
    blocks.states = NULL
    cdef bitgen_t **gens
    if isinstance(bit_generators, tuple) and bit_generators and bit_generators[0] == "seed":
        _seed_blocks(&blocks, bit_generators[1], bit_generators[2], bit_generators[3],
                     n_blocks)
        gens = blocks.gens
    else:
        gens = bitgen_array(bit_generators, n_blocks)
    cdef int64_t[::1] e0 = np.empty(n_copies, dtype=np.int64)
    cdef int64_t[::1] e1 = np.empty(n_copies, dtype=np.int64)
    cdef int64_t[::1] e2 = np.empty(n_copies, dtype=np.int64)
    cdef double[::1] weight = np.empty(n_copies, dtype=np.float64)
    cdef int64_t[::1] order
    cdef int k, status
    cdef const double *c_ptr = NULL
    cdef double *samples_ptr = NULL
    cdef unsigned char[::1] block_bad = np.zeros(n_blocks, dtype=np.uint8)
    if samples is not None:
        c_ptr = &center[0]
        samples_ptr = &samples[0, 0]
    cdef Interrupt it
    interrupt_init(&it)
    try:
        # The level of every copy first: it fixes the copy's cost, hence the schedule.
        for m in range(n_copies):
            k = _draw_k(gens[m // _COPY_BLOCK])
            k_out[m] = k
            e0[m] = level_epochs[base_level]
            if base_level + k <= j_max and (level_epochs[base_level + k]
                                            > level_epochs[base_level + k - 1]):
                e1[m] = level_epochs[base_level + k - 1]
                e2[m] = level_epochs[base_level + k]
                weight[m] = <double> (<uint64_t> 1 << k)
            else:
                e1[m] = e0[m]
                e2[m] = e0[m]
                weight[m] = 0.0
        # Longest block first: a copy costs 16 (2^e - 1) - e for its last epoch e.
        last = np.maximum(np.asarray(e0), np.asarray(e2))
        cost = 16 * (np.left_shift(1, last) - 1) - last
        block_cost = np.add.reduceat(cost, np.arange(0, n_copies, COPY_BLOCK))
        order = np.argsort(-block_cost, kind="stable").astype(np.int64)
        with nogil:
            status = _batch(&s, &X[0, 0], &y[0], &z0[0], &row_norms[0], &linear[0],
                            &domain_a[0], &domain_b[0], gens, n_copies, n_blocks, &order[0], &e0[0],
                            &e1[0], &e2[0], &weight[0], &out[0, 0], &n_grads_out[0], n_threads,
                            &it, c_ptr, samples_ptr, &block_bad[0])
    finally:
        if blocks.gens != NULL:
            _free_blocks(&blocks)
        else:
            free(gens)
    raise_if_interrupted(&it)
    if status != 0:
        raise MemoryError()
    return not np.any(np.asarray(block_bad))
