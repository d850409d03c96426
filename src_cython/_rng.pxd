# The one random-number scheme of dpsco-core (see dpsco_core/_random.py for the Python half).
#
# Work is split into fixed-size blocks of BLOCK_SIZE items; block b draws, in item order, from
# its own numpy bit generator, seeded by child b of one SeedSequence. Which thread runs a block
# never changes what the block draws, so outputs are bitwise identical for any n_threads.
# Every variate comes from numpy's C distributions on a bitgen_t (numpy.random.c_distributions):
# no home-made generator. The NumPy twins in dpsco_core.reference reproduce the draws with
# numpy.random.Generator methods on the same bit generators (rng.normal(0, s), rng.laplace(0, s),
# rng.gumbel(0, s), rng.exponential(s) call the same C functions).

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdlib cimport malloc, free
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_normal, random_laplace, random_gumbel, random_exponential,
)

cdef enum:
    # Items per random block. A module constant, never derived from the thread count.
    BLOCK_SIZE = 65536

cdef enum NoiseKind:
    NOISE_GAUSSIAN = 0
    NOISE_LAPLACE = 1
    NOISE_GUMBEL = 2
    NOISE_EXPONENTIAL = 3


cdef inline Py_ssize_t n_blocks_for(Py_ssize_t n_items) noexcept nogil:
    return (n_items + BLOCK_SIZE - 1) // BLOCK_SIZE


cdef inline bitgen_t **bitgen_array(object bit_generators, Py_ssize_t n) except NULL:
    """Borrow the bitgen_t of each of n bit generators (caller frees the array, not the items).

    The caller must keep ``bit_generators`` alive while the pointers are in use. The generators
    are fresh and private to one kernel call, so their locks are not taken.
    """
    if len(bit_generators) != n:
        raise ValueError(f"expected {n} bit generators (one per block); got {len(bit_generators)}")
    cdef bitgen_t **out = <bitgen_t **> malloc(max(n, 1) * sizeof(bitgen_t *))
    if out == NULL:
        raise MemoryError()
    cdef Py_ssize_t b
    try:
        for b in range(n):
            out[b] = <bitgen_t *> PyCapsule_GetPointer(bit_generators[b].capsule, "BitGenerator")
    except BaseException:
        free(out)
        raise
    return out


cdef inline double draw_noise(bitgen_t *bitgen, int kind, double scale) noexcept nogil:
    """One variate of the given kind, exactly as numpy.random.Generator draws it."""
    if kind == NOISE_GAUSSIAN:
        return random_normal(bitgen, 0.0, scale)
    elif kind == NOISE_LAPLACE:
        return random_laplace(bitgen, 0.0, scale)
    elif kind == NOISE_GUMBEL:
        return random_gumbel(bitgen, 0.0, scale)
    else:
        return random_exponential(bitgen, scale)
