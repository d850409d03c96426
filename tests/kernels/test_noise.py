"""Kernel ``_noise`` against its NumPy twin, across thread counts, and in distribution."""

import numpy as np
import pytest

from dpsco_core._kernels import _noise as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.reference import noise as twin

BLOCK = kernel.NOISE_BLOCK_SIZE


def _add(impl, x, scale, kind, seed, n_threads=1):
    gens = block_bit_generators(np.random.SeedSequence(seed), max(1, -(-x.size // BLOCK)))
    out = np.empty_like(x)
    impl.add_noise(x, scale, kind, gens, out, n_threads)
    return out


def test_constants_match_twin():
    assert twin.BLOCK_SIZE == BLOCK
    assert (twin.GAUSSIAN, twin.LAPLACE) == (kernel.GAUSSIAN, kernel.LAPLACE)


@pytest.mark.parametrize("kind", [kernel.GAUSSIAN, kernel.LAPLACE])
@pytest.mark.parametrize("d", [1, 1000, 3 * BLOCK + 5])
def test_bitwise_equal_to_twin(kind, d, global_seed):
    x = np.random.default_rng(global_seed).standard_normal(d)
    np.testing.assert_array_equal(_add(kernel, x, 1.7, kind, 9), _add(twin, x, 1.7, kind, 9))


@pytest.mark.parametrize("kind", [kernel.GAUSSIAN, kernel.LAPLACE])
def test_same_result_for_any_thread_count(kind):
    x = np.zeros(4 * BLOCK + 3)
    outs = [_add(kernel, x, 1.0, kind, 1, n_threads=t) for t in (1, 2, 4)]
    for out in outs[1:]:
        np.testing.assert_array_equal(outs[0], out)


def test_read_only_input_and_shape_check():
    x = np.ones(10)
    x.flags.writeable = False
    out = _add(kernel, x, 1.0, kernel.GAUSSIAN, 0)
    assert np.all(x == 1.0) and not np.array_equal(out, x)
    with pytest.raises(ValueError, match="length"):
        kernel.add_noise(x, 1.0, kernel.GAUSSIAN,
                         block_bit_generators(np.random.SeedSequence(0), 1), np.empty(9), 1)


@pytest.mark.statistical
@pytest.mark.parametrize("kind, variance", [(kernel.GAUSSIAN, 2.5 ** 2),
                                            (kernel.LAPLACE, 2 * 2.5 ** 2)])
def test_moments(kind, variance):
    # Identity: mean 0 and variance sigma^2 (Gaussian) or 2 b^2 (Laplace); 4.5 standard errors.
    n = 400_000
    noise = _add(kernel, np.zeros(n), 2.5, kind, 123)
    assert abs(noise.mean()) <= 4.5 * np.sqrt(variance / n)
    # SE of the sample variance: sqrt((mu4 - sigma^4) / n); mu4 = 3 s^4 (Gaussian), 6 b^4 * 4 ...
    kurtosis = 3.0 if kind == kernel.GAUSSIAN else 6.0
    se_var = variance * np.sqrt((kurtosis - 1.0) / n)
    assert abs(noise.var() - variance) <= 4.5 * se_var
