"""Batched ReSQue: m = 64 queries, N = 100,000 samples, d = 100 (kernel vs NumPy twins)."""

import numpy as np
import pytest

from dpsco_core._kernels import _resque as kernel
from dpsco_core.reference import resque as twin

M, N, D = 64, 100_000, 100


@pytest.fixture(scope="module")
def data():
    rs = np.random.default_rng(0)
    return (0.1 * rs.standard_normal((M, D)), rs.standard_normal((N, D)),
            rs.standard_normal((N, D)))


def _blas(V, Z, G, gens, out, n_threads):
    lw = Z @ V.T - 0.5 * np.einsum("ij,ij->i", V, V)
    out[...] = (np.exp(lw).T @ G) / Z.shape[0]
    return out


@pytest.mark.parametrize("impl", ["dpsco_core[1 thread]", "dpsco_core", "reference", "numpy"])
def bench_resque_batch(benchmark, record, data, impl):
    """dpsco_core: the kernel with 2 threads (register-blocked, bitwise the twin's order);
    numpy: the BLAS one-liner (two GEMMs, another summation order)."""
    V, Z, G = data
    out = np.empty((M, D))
    fn = {"dpsco_core[1 thread]": lambda: kernel.resque_batch(V, Z, G, [], out, 1),
          "dpsco_core": lambda: kernel.resque_batch(V, Z, G, [], out, 2),
          "reference": lambda: twin.resque_batch(V, Z, G, [], out, 1),
          "numpy": lambda: _blas(V, Z, G, [], out, 1)}[impl]
    record(benchmark, "resque_batch m=64 N=1e5 d=100", impl)
    benchmark.pedantic(fn, rounds=2, iterations=1)
