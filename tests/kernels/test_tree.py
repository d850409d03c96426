"""Kernel ``_tree`` (one streaming tree step) against its twin, threads, read-only inputs."""

import numpy as np
import pytest

from dpsco_core._kernels import _tree as kernel
from dpsco_core.reference import tree as twin
from dpsco_core.tree import TreeAggregation


def _run(impl, p, steps, variance_reduced, seed=0, n_threads=1):
    tree = TreeAggregation(p, steps, noise_scale=0.7, variance_reduced=variance_reduced,
                           random_state=seed, n_threads=n_threads, _impl=impl)
    rng = np.random.default_rng(seed + 100)
    prefix = np.cumsum(rng.standard_normal((steps, p)), axis=0)
    out = []
    for s in range(steps):
        x = prefix[s].copy()
        x.flags.writeable = False
        out.append(tree.next(x))
        np.testing.assert_array_equal(x, prefix[s])       # input left unchanged
    return np.array(out)


@pytest.mark.parametrize("variance_reduced", [False, True], ids=["plain", "honaker"])
@pytest.mark.parametrize("p", [1, 7, kernel.TREE_BLOCK_SIZE + 5])
def test_kernel_equals_twin(p, variance_reduced):
    steps = 13 if p < 100 else 5
    a = _run(kernel, p, steps, variance_reduced)
    b = _run(twin, p, steps, variance_reduced)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("variance_reduced", [False, True], ids=["plain", "honaker"])
def test_thread_count_does_not_change_bits(variance_reduced):
    p = kernel.PARALLEL_THRESHOLD + 3                     # the parallel path, a ragged block
    ref = _run(kernel, p, 4, variance_reduced, n_threads=1)
    for n_threads in (2, 4):
        out = _run(kernel, p, 4, variance_reduced, n_threads=n_threads)
        assert out.tobytes() == ref.tobytes()


def test_out_may_alias_x():
    tree_a = TreeAggregation(5, 6, noise_scale=1.0, random_state=3)
    tree_b = TreeAggregation(5, 6, noise_scale=1.0, random_state=3)
    for s in range(6):
        x = np.full(5, float(s))
        expected = tree_a.next(x)
        tree_b.next(x, out=x)
        np.testing.assert_array_equal(x, expected)


def test_bad_shapes_raise():
    state = np.zeros((2, 3))
    with pytest.raises(ValueError, match="bit_length"):
        kernel.tree_step(np.zeros(3), 4, 1.0, False, [np.random.PCG64DXSM(0)], state,
                         np.empty(3), 1)
    with pytest.raises(ValueError, match="step"):
        kernel.tree_step(np.zeros(3), 0, 1.0, False, [np.random.PCG64DXSM(0)], state,
                         np.empty(3), 1)
    with pytest.raises(ValueError, match="entries"):
        kernel.tree_step(np.zeros(3), 1, 1.0, False, [np.random.PCG64DXSM(0)], state,
                         np.empty(2), 1)
    with pytest.raises(ValueError, match="bit generators"):
        kernel.tree_step(np.zeros(3), 2, 1.0, True, [np.random.PCG64DXSM(0)], state,
                         np.empty(3), 1)
