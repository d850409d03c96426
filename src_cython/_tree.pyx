# cython: language_level=3
"""One step of the streaming binary-tree (continual counting) mechanism: ``out = x + N_s``.

What it computes (note 003, sections 4.1 and 12 K2). Leaves ``v_1, v_2, ...`` arrive one per
step; the tree's node ``(k, j)`` covers leaves ``(j - 1) 2^k + 1 .. j 2^k`` and carries noise
``xi_{k,j} ~ N(0, noise_scale^2 I_p)``. The noisy prefix sum of length ``s`` is
``sum_{i <= s} v_i + N_s`` with ``N_s`` the sum of the noise of the nodes ``(k, s >> k)`` for
the set bits ``k`` of ``s`` (the binary decomposition of ``[1, s]``; ``s >> k`` is odd). The
caller keeps the exact prefix sum ``x`` (data-dependent, never released) and this kernel adds
``N_s``: post-processing-equivalent to releasing the noisy nodes (note 003, section 4.1).

Two estimators:
- plain (``variance_reduced=False``): at step ``s`` exactly one node completes, at level
  ``k0 = ctz(s)``; its noise is drawn into ``state[k0]`` (the nodes below it retire) and
  ``N_s = sum_{k in bits(s)} state[k]``, so ``N_s ~ N(0, popcount(s) noise_scale^2 I)``. One
  fresh Gaussian vector per step, ``bit_length(T)`` live vectors.
- variance-reduced (``variance_reduced=True``, Honaker 2015, bottom-up/online part): every
  node ``(k, s >> k)`` for ``k = 0..k0`` completes at step ``s`` (the full tree, even ``j``
  included, ``ctz(s) + 1`` fresh vectors). Each node's estimate combines its own noisy value
  with the sum of its two children's estimates by inverse-variance weights,
  ``e_k = r_k xi_k + (1 - r_k)(e_left + e_right)`` with ``r_k = 2^k / (2^{k+1} - 1)``, the
  variance ratio of ``e_k``; the left child (odd) is ``state[k - 1]``, the right child the
  estimate just computed. ``state[k0]`` receives ``e_{k0}`` and ``N_s`` sums ``state[k]`` over
  the bits of ``s``: ``Var = noise_scale^2 sum_{k in bits(s)} 2^k / (2^{k+1} - 1)``. The
  nodes, hence the privacy analysis (sensitivity ``sqrt(bit_length(T))`` leaves), are those
  of the full tree; everything else is post-processing of released nodes.

Layout: vectors of length p, cut into blocks of ``BLOCK_SIZE`` coordinates (``_rng.pxd``).

Threading and draw order (bitwise identical for any ``n_threads``; reproduced by
``dpsco_core.reference.tree``): blocks run in parallel (static schedule over blocks) when
``p >= PARALLEL_THRESHOLD``, serially otherwise. Node
``(k, j)`` block ``b`` draws its coordinates in index order from its own bit generator
``bit_generators[(k - k_first) * n_blocks + b]`` (``k_first = k0`` plain, ``0``
variance-reduced), as ``Generator.normal(0.0, noise_scale, size)`` does. The caller seeds that
generator from the key ``(k, j, b)`` (``dpsco_core.tree``), so a node's noise does not depend
on the estimator, the thread count or the number of steps. Per coordinate, ``N_s`` is summed
from +0.0 over increasing ``k``, then ``out = x + N_s``.
"""

from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_normal

from _rng cimport BLOCK_SIZE, bitgen_array, n_blocks_for

TREE_BLOCK_SIZE = BLOCK_SIZE

cdef enum:
    # Blocks run in parallel only from this many coordinates (16 blocks) on: a step is a few
    # memory-bound passes, and an OpenMP fork/join costs more below it (and stalls on a
    # loaded machine). No effect on results, only on speed.
    TREE_PARALLEL_MIN = 1 << 20

PARALLEL_THRESHOLD = TREE_PARALLEL_MIN


cdef inline Py_ssize_t _ctz(Py_ssize_t s) noexcept nogil:
    cdef Py_ssize_t k = 0
    while (s >> k) & 1 == 0:
        k += 1
    return k


cdef void _step_block(const double *x, Py_ssize_t step, Py_ssize_t k0, double noise_scale,
                      bint variance_reduced, bitgen_t **gens, Py_ssize_t n_blocks,
                      Py_ssize_t b, Py_ssize_t lo, Py_ssize_t hi, const double *ratios,
                      double *state, Py_ssize_t p, Py_ssize_t levels, double *noise,
                      double *out) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double e
    cdef double *node = state + k0 * p
    if variance_reduced:
        for i in range(lo, hi):
            # e_0 = xi_0; e_k = r_k xi_k + (1 - r_k)(state[k-1] + e_{k-1})
            e = random_normal(gens[b], 0.0, noise_scale)
            for k in range(1, k0 + 1):
                e = (ratios[k] * random_normal(gens[k * n_blocks + b], 0.0, noise_scale)
                     + (1.0 - ratios[k]) * (state[(k - 1) * p + i] + e))
            node[i] = e
    else:
        for i in range(lo, hi):
            node[i] = random_normal(gens[b], 0.0, noise_scale)
    # N = sum of state[k] over the set bits k of step, from +0.0 in increasing k (contiguous
    # loops, one per level), then out = x + N (noise is scratch: out may alias x)
    for i in range(lo, hi):
        noise[i] = 0.0
    for k in range(levels):
        if (step >> k) & 1:
            for i in range(lo, hi):
                noise[i] = noise[i] + state[k * p + i]
    for i in range(lo, hi):
        out[i] = x[i] + noise[i]


def prefix_variance_ratios(Py_ssize_t levels):
    """``r_k = 2^k / (2^{k+1} - 1)`` for k < levels (Python list; the kernel's weights)."""
    return [(2.0 ** k) / (2.0 ** (k + 1) - 1.0) for k in range(levels)]


def tree_step(const double[::1] x,         # IN  (p,) exact prefix sum
              Py_ssize_t step,             # s >= 1, the prefix length
              double noise_scale,          # node noise std
              bint variance_reduced,
              object bit_generators,       # IN  n_new * n_blocks, fresh for this step's nodes
              double[:, ::1] state,        # IN/OUT (levels, p) live node noise (estimates)
              double[::1] out,             # OUT (p,) x + N_s; may alias x
              int n_threads):
    """One step of the streaming tree: write ``x + N_step`` into ``out`` (module docstring)."""
    cdef Py_ssize_t p = x.shape[0], levels = state.shape[0]
    if step < 1:
        raise ValueError(f"step must be >= 1; got {step}")
    if out.shape[0] != p or state.shape[1] != p:
        raise ValueError(f"out and state rows must have {p} entries (len(x)); got "
                         f"{out.shape[0]} and {state.shape[1]}")
    cdef Py_ssize_t bits = 0
    while (step >> bits) > 0:
        bits += 1
    if levels < bits:
        raise ValueError(f"state must have at least bit_length(step) = {bits} rows; got {levels}")
    cdef Py_ssize_t k0 = _ctz(step)
    cdef Py_ssize_t n_blocks = n_blocks_for(p)
    cdef Py_ssize_t n_new = k0 + 1 if variance_reduced else 1
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_new * n_blocks)
    cdef double *ratios = <double *> malloc((k0 + 1) * sizeof(double))
    cdef double *noise = <double *> malloc(max(p, 1) * sizeof(double))
    cdef Py_ssize_t b, k
    try:
        if ratios == NULL or noise == NULL:
            raise MemoryError()
        for k in range(k0 + 1):
            ratios[k] = (2.0 ** k) / (2.0 ** (k + 1) - 1.0)
        if p == 0:
            return
        if n_threads == 1 or p < TREE_PARALLEL_MIN:
            with nogil:
                for b in range(n_blocks):
                    _step_block(&x[0], step, k0, noise_scale, variance_reduced, gens, n_blocks,
                                b, b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, p), ratios,
                                &state[0, 0], p, levels, noise, &out[0])
        else:
            for b in prange(n_blocks, nogil=True, schedule="static",
                            num_threads=min(<Py_ssize_t> n_threads, n_blocks)):
                _step_block(&x[0], step, k0, noise_scale, variance_reduced, gens, n_blocks,
                            b, b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, p), ratios,
                            &state[0, 0], p, levels, noise, &out[0])
    finally:
        free(gens)
        free(ratios)
        free(noise)
