"""NumPy twin of ``dpsco_core._kernels._noisy_max``: draw every variate, then ``argmax``."""

import numpy as np

#: Candidates per random block (equals the kernel's ``NOISY_MAX_BLOCK_SIZE``).
BLOCK_SIZE = 65536
LAPLACE = 1
GUMBEL = 2
EXPONENTIAL = 3


def report_noisy_max(scores, scale, kind, bit_generators, n_threads):
    """Return ``(index, noisy_value)`` of ``max_i scores[i] + Z_i``, ties to the lowest index."""
    m = scores.shape[0]
    noisy = np.empty(m)
    for b, bit_generator in enumerate(bit_generators):
        rng = np.random.Generator(bit_generator)
        lo, hi = b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, m)
        if kind == LAPLACE:
            noise = rng.laplace(0.0, scale, hi - lo)
        elif kind == GUMBEL:
            noise = rng.gumbel(0.0, scale, hi - lo)
        elif kind == EXPONENTIAL:
            noise = rng.exponential(scale, hi - lo)
        else:
            raise ValueError(f"unknown noise kind {kind}")
        noisy[lo:hi] = scores[lo:hi] + noise
    if not np.any(noisy > -np.inf):        # all NaN or -inf: the kernel raises too
        raise ValueError("report-noisy-max selected no index: every noisy score is NaN or "
                         "-inf (the scores must be finite).")
    index = int(np.argmax(np.where(np.isnan(noisy), -np.inf, noisy)))   # NaN never wins
    return index, float(noisy[index])
