"""Every parallel kernel, over n_threads in {1, 2, 4}: bitwise-equal results.

``KERNEL_CALLS`` holds one entry per (kernel entry point, variant): a function of
``n_threads`` returning the kernel's outputs. A compiled module whose source uses ``prange``
must appear here (``test_every_parallel_kernel_is_swept``): adding a parallel kernel means
adding its entry.
"""

import pathlib
import re

import numpy as np
import pytest

from dpsco_core._kernels import _noise, _noisy_max
from dpsco_core._random import block_bit_generators

SRC = pathlib.Path(__file__).resolve().parents[2] / "src_cython"
SIZE = 3 * _noise.NOISE_BLOCK_SIZE + 123   # several blocks, a ragged last one


def _gens(seed, n, block):
    return block_bit_generators(np.random.SeedSequence(seed), -(-n // block))


def _add_noise(kind):
    def call(n_threads):
        x = np.linspace(-5.0, 5.0, SIZE)
        out = np.empty_like(x)
        _noise.add_noise(x, 0.7, kind, _gens(11, SIZE, _noise.NOISE_BLOCK_SIZE), out, n_threads)
        return out
    return call


def _noisy_max_call(kind):
    def call(n_threads):
        scores = np.random.default_rng(3).standard_normal(SIZE)
        return np.array(_noisy_max.report_noisy_max(
            scores, 0.3, kind, _gens(12, SIZE, _noisy_max.NOISY_MAX_BLOCK_SIZE), n_threads))
    return call


KERNEL_CALLS = {
    "_noise.add_noise[gaussian]": _add_noise(_noise.GAUSSIAN),
    "_noise.add_noise[laplace]": _add_noise(_noise.LAPLACE),
    "_noisy_max.report_noisy_max[laplace]": _noisy_max_call(_noisy_max.LAPLACE),
    "_noisy_max.report_noisy_max[gumbel]": _noisy_max_call(_noisy_max.GUMBEL),
    "_noisy_max.report_noisy_max[exponential]": _noisy_max_call(_noisy_max.EXPONENTIAL),
}

try:   # secure (exact) samplers, when built
    from dpsco_core._kernels import _discrete

    def _discrete_call(which):
        def call(n_threads):
            x = np.arange(SIZE, dtype=np.int64) - SIZE // 2
            out = np.empty(SIZE, dtype=np.int64)
            gens = _gens(13, SIZE, _discrete.DISCRETE_BLOCK_SIZE)
            if which == "laplace":
                status = _discrete.add_discrete_laplace(x, 12345, gens, out, n_threads)
            else:
                status = _discrete.add_discrete_gaussian(x, 1 << 29, (1 << 29) + 7, gens, out,
                                                         n_threads)
            return np.append(out, status)
        return call

    KERNEL_CALLS["_discrete.add_discrete_laplace"] = _discrete_call("laplace")
    KERNEL_CALLS["_discrete.add_discrete_gaussian"] = _discrete_call("gaussian")
except ImportError:
    pass


@pytest.mark.parametrize("name", KERNEL_CALLS)
def test_bitwise_equal_for_any_thread_count(name):
    call = KERNEL_CALLS[name]
    reference = call(1)
    for n_threads in (2, 4):
        out = call(n_threads)
        assert out.dtype == reference.dtype
        assert out.tobytes() == reference.tobytes(), f"{name}: n_threads={n_threads} differs"


@pytest.mark.skipif(not SRC.is_dir(), reason="source tree not available")
def test_every_parallel_kernel_is_swept():
    swept = {name.split(".")[0] for name in KERNEL_CALLS}
    parallel = {p.stem for p in SRC.glob("*.pyx") if re.search(r"\bprange\s*\(", p.read_text())}
    missing = sorted(parallel - swept)
    assert not missing, f"parallel kernels missing from KERNEL_CALLS: {missing}"
