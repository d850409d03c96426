"""NumPy twin of ``dpsco_core._kernels._tree``: one step of the streaming tree mechanism.

Same entry points, arguments, draws and summation order as the kernel (see its module
docstring): node ``(k, j)`` block ``b`` draws ``Generator.normal(0.0, noise_scale, size)`` from
its own bit generator, ``N_s`` is summed from +0.0 over increasing levels, ``out = x + N_s``.
"""

import numpy as np

#: Coordinates per random block (equals the kernel's ``TREE_BLOCK_SIZE``).
BLOCK_SIZE = 65536


def prefix_variance_ratios(levels):
    """``r_k = 2^k / (2^{k+1} - 1)`` for k < levels."""
    return [(2.0 ** k) / (2.0 ** (k + 1) - 1.0) for k in range(levels)]


def _ctz(s):
    return (s & -s).bit_length() - 1


def tree_step(x, step, noise_scale, variance_reduced, bit_generators, state, out, n_threads):
    """Twin of the kernel's ``tree_step``."""
    x = np.asarray(x)
    p, levels = x.shape[0], state.shape[0]
    if step < 1:
        raise ValueError(f"step must be >= 1; got {step}")
    if levels < step.bit_length():
        raise ValueError(f"state must have at least bit_length(step) = {step.bit_length()} "
                         f"rows; got {levels}")
    k0 = _ctz(step)
    n_blocks = -(-p // BLOCK_SIZE)
    levels_new = range(k0 + 1) if variance_reduced else [k0]
    if len(bit_generators) != len(levels_new) * n_blocks:
        raise ValueError(f"expected {len(levels_new) * n_blocks} bit generators; got "
                         f"{len(bit_generators)}")
    ratios = prefix_variance_ratios(k0 + 1)
    fresh = np.empty((len(levels_new), p))
    for m in range(len(levels_new)):
        for b in range(n_blocks):
            lo, hi = b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, p)
            rng = np.random.Generator(bit_generators[m * n_blocks + b])
            fresh[m, lo:hi] = rng.normal(0.0, noise_scale, hi - lo)
    if variance_reduced:
        e = fresh[0]
        for k in range(1, k0 + 1):
            e = ratios[k] * fresh[k] + (1.0 - ratios[k]) * (state[k - 1] + e)
        state[k0] = e
    else:
        state[k0] = fresh[0]
    noise = np.zeros(p)
    for k in range(levels):
        if (step >> k) & 1:
            noise = noise + state[k]
    out[:] = x + noise
