"""NumPy twin of ``dpsco_core._kernels._noise``."""

import numpy as np

#: Items per random block (equals the kernel's ``NOISE_BLOCK_SIZE``).
BLOCK_SIZE = 65536
GAUSSIAN = 0
LAPLACE = 1


def add_noise(x, scale, kind, bit_generators, out, n_threads):
    """Write ``x + noise`` into ``out``, drawing block by block as the kernel does."""
    d = x.shape[0]
    for b, bit_generator in enumerate(bit_generators):
        rng = np.random.Generator(bit_generator)
        lo, hi = b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, d)
        if kind == GAUSSIAN:
            noise = rng.normal(0.0, scale, hi - lo)
        elif kind == LAPLACE:
            noise = rng.laplace(0.0, scale, hi - lo)
        else:
            raise ValueError(f"unknown noise kind {kind}")
        out[lo:hi] = x[lo:hi] + noise
