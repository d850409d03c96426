# cython: language_level=3
"""Noise vectors for the Gaussian and Laplace mechanisms: ``out = x + noise``.

Design
- One pass over the vector, split into blocks of ``BLOCK_SIZE`` items (``_rng.pxd``); block b
  draws its items in index order from bit generator b. Blocks run in parallel (OpenMP, static
  schedule over blocks); the output does not depend on the thread count.
- Draw order (reproduced by ``dpsco_core.reference.noise.add_noise``): for block b,
  ``Generator(bit_generators[b]).normal(0.0, scale, size)`` (Gaussian) or
  ``.laplace(0.0, scale, size)`` (Laplace), added to ``x[b * BLOCK_SIZE:...]``.
- Calibration (which scale gives which guarantee) lives in ``dpsco_core.mechanisms``.
"""

from cython.parallel cimport prange
from libc.stdlib cimport free
from numpy.random cimport bitgen_t

from _rng cimport BLOCK_SIZE, NOISE_GAUSSIAN, NOISE_LAPLACE, bitgen_array, draw_noise, n_blocks_for

NOISE_BLOCK_SIZE = BLOCK_SIZE
GAUSSIAN = NOISE_GAUSSIAN
LAPLACE = NOISE_LAPLACE


def add_noise(const double[::1] x,      # IN  (d,)
              double scale,
              int kind,
              object bit_generators,    # IN  one per block of BLOCK_SIZE items
              double[::1] out,          # OUT (d,) may not alias x unless identical
              int n_threads):
    """Write ``x + noise`` into ``out``; noise i.i.d. Gaussian (sd ``scale``) or Laplace (``scale``)."""
    cdef Py_ssize_t d = x.shape[0]
    if out.shape[0] != d:
        raise ValueError(f"out has length {out.shape[0]}, x has length {d}")
    if kind != NOISE_GAUSSIAN and kind != NOISE_LAPLACE:
        raise ValueError(f"unknown noise kind {kind}")
    cdef Py_ssize_t n_blocks = n_blocks_for(d)
    cdef bitgen_t **gens = bitgen_array(bit_generators, n_blocks)
    cdef Py_ssize_t b, i, lo, hi
    try:
        for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
            lo = b * BLOCK_SIZE
            hi = min(lo + BLOCK_SIZE, d)
            for i in range(lo, hi):
                out[i] = x[i] + draw_noise(gens[b], kind, scale)
    finally:
        free(gens)
