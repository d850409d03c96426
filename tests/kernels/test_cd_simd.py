"""Kernel ``_cd`` on both inner-loop paths (AVX2 of ``_cd_simd.h`` and scalar): bitwise equal to
the NumPy twin and to each other, for every thread count, with and without the clipped count.

``_cd.set_simd_path("scalar")`` forces the scalar loops, so both paths run on an AVX2 machine;
the AVX2 cases are skipped on a CPU without AVX2 (the auto path is then scalar too).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsco_core._kernels import _cd as kernel
from dpsco_core.reference import cd as twin

SQUARED, LOGISTIC = 0, 2
L1 = (1, 0.05, 0.0)


@pytest.fixture(params=["avx2", "scalar"])
def path(request):
    before = kernel.simd_path()
    got = kernel.set_simd_path("auto" if request.param == "avx2" else "scalar")
    try:
        if got != request.param:
            pytest.skip("this CPU has no AVX2")
        yield got
    finally:
        kernel.set_simd_path("auto" if before == "avx2" else "scalar")


def _data(seed, n, p=6, density=1.0, loss=SQUARED):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.geomspace(0.1, 10, p)
    X[rng.random((n, p)) > density] = 0.0
    y = rng.standard_normal(n) if loss == SQUARED else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.asfortranarray(X), y


def _consts(X, clip_scale):
    n, p = X.shape
    M = np.maximum((X ** 2).sum(axis=0) / n, 1e-12)
    clip = np.sqrt(M / M.sum()) * clip_scale
    return 0.5 / M, clip, 0.05 * np.minimum(clip, 1.0)


def _dense(impl, X, y, loss, clip_scale, seed=3, n_outer=3, n_inner=13, **kw):
    step, clip, noise = _consts(X, clip_scale)
    coef, z = np.zeros(X.shape[1]), np.empty(X.shape[0])
    count = impl.cd_dense(X, y, loss, 1.0, *L1, step, clip, noise, coef, n_outer, n_inner, False,
                          False, 0, np.random.PCG64DXSM(seed), z, **kw)
    return coef, z, count


def _csc(impl, X, y, loss, clip_scale, index_dtype, seed=3, **kw):
    step, clip, noise = _consts(X, clip_scale)
    Xs = sp.csc_matrix(X)
    coef, z = np.zeros(X.shape[1]), np.empty(X.shape[0])
    count = impl.cd_csc(Xs.data, Xs.indices.astype(index_dtype), Xs.indptr.astype(index_dtype),
                        X.shape[0], y, loss, 1.0, *L1, step, clip, noise, coef, 3, 13, False,
                        False, 0, np.random.PCG64DXSM(seed), z, **kw)
    return coef, z, count


def _same(a, b):
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
        assert np.signbit(np.asarray(u)).tolist() == np.signbit(np.asarray(v)).tolist()


# n covers every ragged tail (n mod 4) and short columns; clip scales: binding on every column
# (clipped loop), never binding (the unclipped first try), and in between (both, per column)
@pytest.mark.parametrize("n", [1, 3, 4, 37, 38, 39, 40, 517])
@pytest.mark.parametrize("clip_scale", [0.5, 30.0, 1e12])
@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_dense_equals_twin(path, n, clip_scale, loss):
    X, y = _data(n, n, loss=loss)
    got, want = _dense(kernel, X, y, loss, clip_scale), _dense(twin, X, y, loss, clip_scale)
    _same(got, want)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("clip_scale", [0.5, 1e12])
@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_csc_equals_twin(path, index_dtype, clip_scale, loss):
    X, y = _data(5, 301, p=7, density=0.3, loss=loss)
    got = _csc(kernel, X, y, loss, clip_scale, index_dtype)
    want = _csc(twin, X, y, loss, clip_scale, index_dtype)
    _same(got, want)


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_paths_agree_and_the_count_switch_changes_nothing_else(loss):
    X, y = _data(9, 2001, p=5, loss=loss)
    before = kernel.simd_path()
    try:
        out = {}
        for name in ("scalar", "auto"):
            kernel.set_simd_path(name)
            for count in (True, False):
                out[name, count] = _dense(kernel, X, y, loss, 3.0, count_clipped=count)
    finally:
        kernel.set_simd_path("auto" if before == "avx2" else "scalar")
    reference = out["scalar", True]
    assert reference[2] > 0
    for (name, count), got in out.items():
        _same(got[:2], reference[:2])
        assert got[2] == (reference[2] if count else 0)


def test_non_finite_terms_take_the_clipped_loop(path):
    # A NaN or inf term must be clipped (NaN -> +C, as `term < c ? term : c` does): the
    # unclipped first try sees a NaN sum or a maximum above C and falls back.
    X, y = _data(4, 64, p=3)
    X[5, 0], X[9, 1] = np.nan, np.inf
    X = np.asfortranarray(X)
    got, want = _dense(kernel, X, y, SQUARED, 1e12), _dense(twin, X, y, SQUARED, 1e12)
    _same(got, want)


@pytest.mark.parametrize("layout", ["dense", "csc"])
def test_grid_equals_twin_for_any_thread_count(path, layout):
    X, y = _data(6, 403, p=5, density=0.6)
    n, p = X.shape
    step, clip, noise = _consts(X, 2.0)
    R = 5
    scales = np.geomspace(0.1, 1e6, R)[:, None]
    args = (y, SQUARED, 1.0, *L1, step * scales, clip * scales, noise * scales)
    Xs = sp.csc_matrix(X)
    results = []
    for impl, n_threads in ((twin, 1), (kernel, 1), (kernel, 2), (kernel, 3)):
        coef, counts = np.zeros((R, p)), np.zeros(R, dtype=np.int64)
        gens = [np.random.PCG64DXSM(50 + r) for r in range(R)]
        if layout == "dense":
            impl.cd_grid_dense(X, *args, coef, 2, 11, True, False, gens, counts, n_threads)
        else:
            impl.cd_grid_csc(Xs.data, Xs.indices, Xs.indptr, n, *args, coef, 2, 11, True,
                             False, gens, counts, n_threads)
        results.append((coef, counts))
    for got in results[1:]:
        _same(got, results[0])


# CSC columns of every ragged length (nnz mod 4) at density 0.3; the squared loss has its own
# compiled loop without the clipped count (count_clipped=False), and an unrolled scatter axpy
@pytest.mark.parametrize("n", [1, 3, 37, 38, 39, 40, 517])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("clip_scale", [0.5, 1e12])
@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_csc_without_count_equals_twin(path, n, index_dtype, clip_scale, loss):
    X, y = _data(n + 11, n, p=7, density=0.3, loss=loss)
    want = _csc(twin, X, y, loss, clip_scale, index_dtype)
    got = _csc(kernel, X, y, loss, clip_scale, index_dtype, count_clipped=False)
    _same(got[:2], want[:2])
    assert got[2] == 0
    _same(_csc(kernel, X, y, loss, clip_scale, index_dtype), want)


def test_csc_grid_without_count_same_for_any_thread_count(path):
    X, y = _data(8, 517, p=9, density=0.2)
    n, p = X.shape
    step, clip, noise = _consts(X, 2.0)
    R = 4
    scales = np.geomspace(0.1, 1e6, R)[:, None]
    args = (y, SQUARED, 1.0, *L1, step * scales, clip * scales, noise * scales)
    Xs = sp.csc_matrix(X)
    results = []
    for impl, n_threads, kw in ((twin, 1, {}), (kernel, 1, {"count_clipped": False}),
                                (kernel, 2, {"count_clipped": False}),
                                (kernel, 3, {"count_clipped": False})):
        coef, counts = np.zeros((R, p)), np.zeros(R, dtype=np.int64)
        gens = [np.random.PCG64DXSM(70 + r) for r in range(R)]
        impl.cd_grid_csc(Xs.data, Xs.indices, Xs.indptr, n, *args, coef, 3, 2 * p, False,
                         False, gens, counts, n_threads, **kw)
        results.append(coef)
        if impl is kernel:
            assert not counts.any()
    for got in results[1:]:
        _same([got], [results[0]])


def test_set_simd_path_rejects_unknown():
    with pytest.raises(ValueError, match="path must be"):
        kernel.set_simd_path("avx512")
