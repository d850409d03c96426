# cython: language_level=3, boundscheck=False, wraparound=False
"""The seed of one block generator, computed in C (issue 18: per-call fixed cost).

``PCG64DXSM(SeedSequence(entropy, spawn_key + path, pool_size))`` costs about 60 us through
numpy's Python-level ``SeedSequence`` (coercion, hashing and ``generate_state``), a third of a
short ``dp_cd`` call. :func:`state_words` computes the same ``generate_state(4, np.uint64)``
with ``src_cython/_seedseq.h`` (bitwise numpy's), from which ``dpsco_core._random`` builds the
bit generator. Not a kernel (no data): there is no twin; ``tests/kernels/test_seedseq.py``
compares it with numpy's ``SeedSequence``.
"""

from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

cdef extern from "_seedseq.h" nogil:
    void dpsco_ss_mix_entropy(uint32_t *pool, size_t pool_size, const uint32_t *entropy,
                              size_t n)
    void dpsco_ss_generate_state(const uint32_t *pool, size_t pool_size, uint32_t *out,
                                 size_t n_words)


cdef list _int_words(object value):
    """numpy's ``_int_to_uint32_array``: little-endian 32-bit words, 0 as one word."""
    cdef list words = []
    if value < 0:
        raise ValueError(f"seed words must be non-negative; got {value}.")
    if value == 0:
        return [0]
    while value > 0:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


cdef list _words(object x):
    """numpy's ``_coerce_to_uint32_array`` for the forms a ``SeedSequence`` stores: an int, a
    sequence of ints (or of sequences), a uint32 array; other arrays go through the Python
    coercion of ``dpsco_core._random`` (same rule)."""
    cdef list out
    if isinstance(x, int):
        return _int_words(x)
    if isinstance(x, tuple) or isinstance(x, list):
        out = []
        for v in x:
            out.extend(_words(v))
        return out
    from dpsco_core._random import _uint32_words
    return [int(w) for w in _uint32_words(x)]


def state_words(object entropy, object spawn_key, Py_ssize_t pool_size, tuple path):
    """``SeedSequence(entropy, spawn_key=tuple(spawn_key) + path, pool_size=pool_size)
    .generate_state(4, np.uint64)``, bitwise, as a ``(4,)`` uint64 array.

    Parameters
    ----------
    entropy : int or sequence of int or ndarray
        The seed sequence's ``entropy``.
    spawn_key : sequence of int
        Its ``spawn_key``.
    pool_size : int
        Its ``pool_size`` (>= 4).
    path : tuple of int
        Child indices appended to the spawn key (``(0, 0)``: the first child's first child).
    """
    cdef list run = _words(entropy)
    cdef list spawn = _words(tuple(spawn_key) + path)
    cdef Py_ssize_t k, n_run, n_words
    if pool_size < 1:
        raise ValueError(f"pool_size must be >= 1; got {pool_size}.")
    # numpy pads the entropy to the pool size when a spawn key is present
    if spawn and len(run) < pool_size:
        run.extend([0] * (pool_size - len(run)))
    n_run = len(run)
    n_words = n_run + len(spawn)
    cdef uint32_t *words = <uint32_t *> malloc(max(n_words, 1) * sizeof(uint32_t))
    cdef uint32_t *pool = <uint32_t *> malloc(pool_size * sizeof(uint32_t))
    if words == NULL or pool == NULL:
        free(words)
        free(pool)
        raise MemoryError()
    out = np.empty(4, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef uint32_t w[8]
    try:
        for k in range(n_run):
            words[k] = <uint32_t> run[k]
        for k in range(len(spawn)):
            words[n_run + k] = <uint32_t> spawn[k]
        dpsco_ss_mix_entropy(pool, pool_size, words, n_words)
        dpsco_ss_generate_state(pool, pool_size, w, 8)
        for k in range(4):
            o[k] = (<uint64_t> w[2 * k]) | ((<uint64_t> w[2 * k + 1]) << 32)
    finally:
        free(words)
        free(pool)
    return out
