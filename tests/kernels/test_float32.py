"""float32 and non-C layouts without copies (issue 18).

The kernels read float32 X by converting each value to float64 on load (exact) and doing every
operation in float64, so a run on float32 X must be bitwise the run on ``X.astype(np.float64)``;
``_batch`` reads any strides (each block's rows gathered into a float64 buffer), so a run on a
Fortran-ordered or strided X must be bitwise the run on the C-ordered float64 array. Both
``_cd`` inner-loop paths (AVX2 and scalar) and 1 and 2 threads are covered. The solver-level
tests check that ``Problem`` keeps float32 X as given and that ``dp_sgd`` / ``dp_cd`` make no
float64 copy (tracemalloc peak well below the size of one).
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core._kernels import _batch, _cd

SQUARED, LOGISTIC, HUBER = 0, 2, 3


@pytest.fixture(params=["avx2", "scalar"])
def path(request):
    before = _cd.simd_path()
    got = _cd.set_simd_path("auto" if request.param == "avx2" else "scalar")
    try:
        if got != request.param:
            pytest.skip("this CPU has no AVX2")
        yield got
    finally:
        _cd.set_simd_path("auto" if before == "avx2" else "scalar")


def _x32(seed, n, p, scale=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * (np.geomspace(0.1, 10, p) if scale else 0.3)
    return X.astype(np.float32), rng


def _layouts(X32):
    """Every dense input the row kernel reads in place, with the float64 C array it equals."""
    X64 = np.ascontiguousarray(X32, dtype=np.float64)
    wide32 = np.repeat(X32, 2, axis=1)
    return X64, {
        "float32 C": X32, "float32 F": np.asfortranarray(X32), "float32 strided": wide32[:, ::2],
        "float64 F": np.asfortranarray(X64), "float64 strided": np.repeat(X64, 2, axis=1)[:, ::2],
        "float64 reversed rows": np.ascontiguousarray(X64[::-1])[::-1],
    }


def _labels(rng, n, loss):
    return np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss == LOGISTIC else rng.standard_normal(n)


# ------------------------------------------------------------------------------ _batch


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC, HUBER], ids=["squared", "logistic", "huber"])
@pytest.mark.parametrize("n_threads", [1, 2, 0])
def test_batch_grad_and_diff_any_layout_equal_float64_c(loss, n_threads):
    X32, rng = _x32(0, 1200, 13)
    X64, layouts = _layouts(X32)
    y = _labels(rng, 1200, loss)
    norms = np.sqrt(np.einsum("ij,ij->i", X64, X64))
    # > BATCH_BLOCK * 2 rows and enough work for the parallel groups
    rows = np.sort(rng.choice(1200, 900, replace=False)).astype(np.int64)
    coef, prev = rng.standard_normal(13), rng.standard_normal(13)

    def grad(X):
        out = np.empty(13)
        count = _batch.batch_grad_dense(X, y, rows, coef, norms, loss, 1.0, 0.4, out, n_threads)
        return out, count

    def diff(X):
        out = np.empty(13)
        count = _batch.batch_diff_dense(X, y, rows, coef, prev, norms, loss, 1.0, 0.7, 0.3, 0.4,
                                        out, n_threads)
        return out, count

    for fn in (grad, diff):
        ref, ref_count = fn(X64)
        for name, X in layouts.items():
            got, count = fn(X)
            assert np.array_equal(got, ref) and count == ref_count, (fn.__name__, name)


@pytest.mark.parametrize("sampling", [_batch.POISSON, _batch.SHUFFLE], ids=["poisson", "shuffle"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_sgd_any_layout_equals_float64_c(sampling, n_threads):
    X32, rng = _x32(1, 3000, 9)
    X64, layouts = _layouts(X32)
    y = _labels(rng, 3000, LOGISTIC)
    norms = np.sqrt(np.einsum("ij,ij->i", X64, X64))

    def run(X):
        coef = np.zeros(9)
        counts = _batch.sgd_dense(X, y, norms, LOGISTIC, 1.0, 1, 0.01, 0.0, coef, 7, sampling,
                                  0.3, 700, 0.5, 0.8, 0.2, 700.0, np.random.PCG64(5),
                                  np.random.PCG64(6), n_threads)
        return coef, counts

    ref = run(X64)
    for name, X in layouts.items():
        got = run(X)
        assert np.array_equal(got[0], ref[0]) and got[1] == ref[1], name


def test_batch_rejects_other_dtypes():
    X = np.ones((4, 2), dtype=np.int64)
    with pytest.raises((TypeError, ValueError)):
        _batch.batch_grad_dense(X, np.ones(4), np.arange(4, dtype=np.int64), np.zeros(2),
                                np.ones(4), SQUARED, 1.0, 1.0, np.empty(2), 1)


# ------------------------------------------------------------------------------ _cd


def _cd_consts(X64, clip_scale):
    n = X64.shape[0]
    M = np.maximum((X64 ** 2).sum(axis=0) / n, 1e-12)
    clip = np.sqrt(M / M.sum()) * clip_scale
    return 0.5 / M, clip, 0.05 * np.minimum(clip, 1.0)


@pytest.mark.parametrize("n", [1, 3, 4, 37, 39, 517])
@pytest.mark.parametrize("clip_scale", [0.5, 1e12])
@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC, HUBER], ids=["squared", "logistic", "huber"])
@pytest.mark.parametrize("count", [True, False])
def test_cd_dense_and_csc_float32_equal_float64(path, n, clip_scale, loss, count):
    X32, rng = _x32(2, n, 6, scale=True)
    X32 = np.asfortranarray(X32)
    X64 = X32.astype(np.float64)
    y = _labels(rng, n, loss)
    step, clip, noise = _cd_consts(X64, clip_scale)

    def dense(X, cyclic):
        coef, z = np.zeros(6), np.empty(n)
        c = _cd.cd_dense(X, y, loss, 1.0, 1, 0.05, 0.0, step, clip, noise, coef, 3, 13, False,
                         cyclic, 0, np.random.PCG64DXSM(3), z, count_clipped=count)
        return coef, z, c

    def csc(A):
        coef, z = np.zeros(6), np.empty(n)
        c = _cd.cd_csc(A.data, A.indices, A.indptr, n, y, loss, 1.0, 1, 0.05, 0.0, step, clip,
                       noise, coef, 3, 13, True, False, 0, np.random.PCG64DXSM(3), z,
                       count_clipped=count)
        return coef, z, c

    for cyclic in (False, True):
        ref, got = dense(X64, cyclic), dense(X32, cyclic)
        assert all(np.array_equal(a, b) for a, b in zip(ref, got)), cyclic
    A32 = sp.csc_matrix(X32)
    A32.data[::3] = 0.0          # explicit zeros keep the structure of both
    A64 = sp.csc_matrix((A32.data.astype(np.float64), A32.indices, A32.indptr), shape=A32.shape)
    ref, got = csc(A64), csc(A32)
    assert all(np.array_equal(a, b) for a, b in zip(ref, got))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_cd_grid_float32_equals_float64(path, n_threads):
    X32, rng = _x32(4, 301, 7, scale=True)
    X32 = np.asfortranarray(X32)
    X64 = X32.astype(np.float64)
    y = _labels(rng, 301, SQUARED)
    step, clip, noise = _cd_consts(X64, 0.5)
    R = 5
    scale = np.linspace(0.5, 2.0, R)[:, None]

    def grid(X):
        coef = np.zeros((R, 7))
        counts = np.zeros(R, dtype=np.int64)
        _cd.cd_grid_dense(X, y, SQUARED, 1.0, 1, 0.05, 0.0, step * scale, clip * scale,
                          noise * scale, coef, 2, 11, True, False,
                          [np.random.PCG64DXSM(s) for s in range(R)], counts, n_threads)
        return coef, counts

    ref, got = grid(X64), grid(X32)
    assert np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1])


def test_cd_rejects_c_ordered_float32():
    X32 = np.ones((5, 2), dtype=np.float32)    # C-ordered: the solver copies to Fortran first
    with pytest.raises(ValueError):
        _cd.cd_dense(X32, np.ones(5), SQUARED, 1.0, 0, 0.0, 0.0, np.ones(2), np.ones(2),
                     np.zeros(2), np.zeros(2), 1, 2, False, False, 0, np.random.PCG64DXSM(0),
                     np.empty(5))


# ------------------------------------------------------------------------------ Problem


def _shares(a, b):
    return np.shares_memory(a, b)


@pytest.mark.parametrize("order", ["C", "F"])
def test_problem_keeps_float32_and_its_constants_are_float64_bitwise(order):
    X32, rng = _x32(5, 2003, 11)
    X32 = np.asarray(X32, order=order)
    X64 = X32.astype(np.float64, order="K")         # the same layout, upcast
    y = _labels(rng, 2003, LOGISTIC)
    prob = dp.Problem(X32, y, loss="logistic")
    ref = dp.Problem(X64, y, loss="logistic")
    assert prob.X_data.dtype == np.float32 and _shares(prob.X_data, X32)
    assert _shares(prob.X_kernel_rows(), X32)
    assert np.array_equal(prob.row_norms(), ref.row_norms())
    assert np.array_equal(prob.coordinate_smoothness(), ref.coordinate_smoothness())
    assert np.array_equal(prob.coordinate_lipschitz(), ref.coordinate_lipschitz())
    assert prob.smoothness() == pytest.approx(ref.smoothness(), rel=1e-12)
    w = rng.standard_normal(11)
    assert prob.objective(w) == pytest.approx(ref.objective(w), rel=1e-13)
    assert "X_float64" not in prob._cache          # none of the above converted X
    cols = prob.X_kernel_columns()
    assert cols.dtype == np.float32 and cols.flags.f_contiguous
    assert _shares(cols, X32) == (order == "F")
    # every other use sees float64, converted once and cached
    assert prob.X.dtype == np.float64 and prob.X is prob.X
    assert np.array_equal(prob.X, X64)


def _solve(prob, solver, beta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver == "dp_sgd":
            return dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, passes=2, batch_size=256,
                             random_state=0, smoothness="auto" if beta is None else beta).coef
        return dp.dp_cd(prob, epsilon=1.0, delta=1e-6, passes=3, random_state=0).coef


@pytest.mark.parametrize("solver", ["dp_sgd", "dp_cd"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_solvers_on_float32_equal_float64_bitwise(solver, order):
    X32, rng = _x32(6, 3000, 12)
    X32 = np.asarray(X32, order=order)
    X64 = X32.astype(np.float64, order="K")
    y = _labels(rng, 3000, LOGISTIC)
    ref = dp.Problem(X64, y, loss="logistic", penalty=dp.L2(1e-3))
    prob = dp.Problem(X32, y, loss="logistic", penalty=dp.L2(1e-3))
    beta = ref.smoothness()       # public here, so that the step is the same to the bit
    assert np.array_equal(_solve(prob, solver, beta), _solve(ref, solver, beta))
    assert "X_float64" not in prob._cache


@pytest.mark.parametrize("case", ["dp_sgd float32 C", "dp_sgd float32 F", "dp_sgd float64 F",
                                  "dp_cd float32 F"])
def test_no_copy_of_x(case):
    solver, dtype, order = case.split()
    n, p = 100_000, 50
    rng = np.random.default_rng(7)
    X = np.asarray((rng.standard_normal((n, p)) * 0.3).astype(dtype), order=order)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    tracemalloc.start()
    try:
        prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
        _solve(prob, solver, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a copy of X would be X.nbytes or more; the per-row vectors (norms, margins, the
    # sampling permutation) are a few times 8 n bytes
    assert peak < 0.5 * X.nbytes + 6 * 8 * n, (case, peak / X.nbytes)


def test_twins_take_float32_and_agree_with_the_kernels():
    """The NumPy twins upcast float32 the same way (exactly, elementwise): twin(X32) == kernel(X32)."""
    from dpsco_core.reference import batch as batch_twin
    from dpsco_core.reference import cd as cd_twin
    X32, rng = _x32(8, 700, 9, scale=True)
    y = _labels(rng, 700, SQUARED)
    X64 = X32.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", X64, X64))
    rows = np.sort(rng.choice(700, 400, replace=False)).astype(np.int64)
    coef = rng.standard_normal(9) * 0.1
    out_k, out_t = np.empty(9), np.empty(9)
    k = _batch.batch_grad_dense(X32, y, rows, coef, norms, SQUARED, 1.0, 0.5, out_k, 2)
    t = batch_twin.batch_grad_dense(X32, y, rows, coef, norms, SQUARED, 1.0, 0.5, out_t, 2)
    assert np.array_equal(out_k, out_t) and k == t
    XF = np.asfortranarray(X32)
    step, clip, noise = _cd_consts(X64, 0.5)
    res = []
    for impl in (_cd, cd_twin):
        coef, z = np.zeros(9), np.empty(700)
        impl.cd_dense(XF, y, SQUARED, 1.0, 1, 0.05, 0.0, step, clip, noise, coef, 2, 11, True,
                      False, 0, np.random.PCG64DXSM(3), z)
        res.append(coef)
    assert np.array_equal(res[0], res[1])
