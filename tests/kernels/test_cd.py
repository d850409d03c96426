"""Kernel ``_cd`` (DP-CD) against its NumPy twin, layouts, thread counts and lazy averaging."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsco_core._kernels import _cd as kernel
from dpsco_core.reference import cd as twin

LOSSES = {"squared": 0, "logistic": 2, "huber": 3}
PENALTIES = {"l1": (1, 0.1, 0.0), "l2": (2, 0.5, 0.0), "enet": (3, 0.1, 0.2),
             "box": (4, -0.3, 0.3), "none": (0, 0.0, 0.0)}


def _data(seed, n=203, p=9, density=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.geomspace(0.1, 10, p)
    X[rng.random((n, p)) > density] = 0.0
    y_reg = rng.standard_normal(n)
    y_cls = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.asfortranarray(X), y_reg, y_cls


def _args(X, loss):
    n, p = X.shape
    M = np.maximum((X ** 2).sum(axis=0) / n, 1e-12)
    step = 0.5 / M
    clip = np.sqrt(M / M.sum()) * 2.0
    return step, clip, 0.05 * clip


def _run_dense(impl, X, y, loss, penalty, average, cyclic, seed=7, n_outer=3, n_inner=40):
    step, clip, noise = _args(X, loss)
    coef = np.zeros(X.shape[1])
    margins = np.empty(X.shape[0])
    kind, p1, p2 = penalty
    n_clipped = impl.cd_dense(X, y, loss, 1.0, kind, p1, p2, step, clip, noise, coef, n_outer,
                              n_inner, average, cyclic, 0, np.random.PCG64DXSM(seed), margins)
    return coef, n_clipped, margins


@pytest.mark.parametrize("loss", LOSSES.values(), ids=LOSSES.keys())
@pytest.mark.parametrize("penalty", PENALTIES.values(), ids=PENALTIES.keys())
@pytest.mark.parametrize("average, cyclic", [(True, False), (False, True)])
def test_kernel_equals_twin(loss, penalty, average, cyclic):
    # Same draws, same four-lane sums: bitwise for every loss (the logistic derivative's exp
    # is the polynomial of _exp_poly.h, reproduced by the twin).
    X, y_reg, y_cls = _data(1)
    y = y_cls if loss == LOSSES["logistic"] else y_reg
    a = _run_dense(kernel, X, y, loss, penalty, average, cyclic)
    b = _run_dense(twin, X, y, loss, penalty, average, cyclic)
    assert a[1] == b[1]
    np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.parametrize("n", [3, 256, 515, 1031])
@pytest.mark.parametrize("index_dtype", [None, np.int32, np.int64])
def test_logistic_blocks_equal_twin(n, index_dtype):
    # the logistic lane sum runs in blocks of 256 terms (ragged last block); dense and CSC
    X, _, y = _data(5, n=n, p=4, density=0.6)
    step, clip, noise = _args(X, 2)
    clip = clip * 0.05                   # some terms clipped, some not
    outs = []
    for impl in (kernel, twin):
        coef = np.zeros(X.shape[1])
        if index_dtype is None:
            count = impl.cd_dense(X, y, 2, 1.0, 2, 0.1, 0.0, step, clip, noise, coef, 2, 9,
                                  False, False, 0, np.random.PCG64DXSM(3), np.empty(n))
        else:
            Xs = sp.csc_matrix(X)
            count = impl.cd_csc(Xs.data, Xs.indices.astype(index_dtype),
                                Xs.indptr.astype(index_dtype), n, y, 2, 1.0, 2, 0.1, 0.0, step,
                                clip, noise, coef, 2, 9, False, False, 0,
                                np.random.PCG64DXSM(3), np.empty(n))
        outs.append((coef, count))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1] > 0


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csc_equals_dense(index_dtype):
    X, y, _ = _data(2, density=0.3)
    Xs = sp.csc_matrix(X)
    indices, indptr = Xs.indices.astype(index_dtype), Xs.indptr.astype(index_dtype)
    step, clip, noise = _args(X, 0)
    for average in (True, False):
        dense = _run_dense(kernel, X, y, 0, PENALTIES["l1"], average, False)
        coef = np.zeros(X.shape[1])
        margins = np.empty(X.shape[0])
        n_clipped = kernel.cd_csc(Xs.data, indices, indptr, X.shape[0], y, 0, 1.0, 1, 0.1, 0.0,
                                  step, clip, noise, coef, 3, 40, average, False, 0,
                                  np.random.PCG64DXSM(7), margins)
        # zeros contribute exactly 0 to each lane of the dense sum but are absent from the CSC
        # lanes, so the lane assignment differs: equal up to rounding, same clipping count
        np.testing.assert_allclose(coef, dense[0], rtol=1e-12, atol=1e-14)
        coef_twin = np.zeros(X.shape[1])
        twin.cd_csc(Xs.data, indices, indptr, X.shape[0], y, 0, 1.0, 1, 0.1, 0.0, step, clip,
                    noise, coef_twin, 3, 40, average, False, 0, np.random.PCG64DXSM(7),
                    np.empty(X.shape[0]))
        np.testing.assert_array_equal(coef, coef_twin)


def test_margins_cache_invariant():
    # Oracle 4 of note 002: after any sequence of updates the cached margins equal X @ w.
    X, y, _ = _data(3)
    coef, _, margins = _run_dense(kernel, X, y, 0, PENALTIES["l1"], False, False, n_outer=1,
                                  n_inner=500)
    np.testing.assert_allclose(margins, X @ coef, rtol=0, atol=1e-10 * np.abs(X).max())


def test_lazy_average_equals_naive_mean():
    # Oracle 6 of note 002: the O(1) lazy average equals mean(theta^1..theta^K) (theta^0 out).
    X, y, _ = _data(4)
    step, clip, noise = _args(X, 0)
    p = X.shape[1]
    gen = np.random.PCG64DXSM(11)
    coef = np.zeros(p)
    iterates = []
    for k in range(60):          # one update per call, last iterate: the same stream
        kernel.cd_dense(X, y, 0, 1.0, 1, 0.1, 0.0, step, clip, noise, coef, 1, 1, False, False,
                        k, gen, np.empty(X.shape[0]))
        iterates.append(coef.copy())
    averaged = np.zeros(p)
    kernel.cd_dense(X, y, 0, 1.0, 1, 0.1, 0.0, step, clip, noise, averaged, 1, 60, True, False,
                    0, np.random.PCG64DXSM(11), np.empty(X.shape[0]))
    np.testing.assert_allclose(averaged, np.mean(iterates, axis=0), rtol=1e-10, atol=1e-12)


def test_one_noiseless_step_is_exact_coordinate_minimizer():
    # Oracle 3: with gamma_j = 1/M_j, M_j = 2 ||X_j||^2 / n, no noise, no clipping, an L1 step
    # on the squared loss is the soft-thresholded 1-d least-squares solution.
    X, y, _ = _data(5)
    n, p = X.shape
    M = 2 * (X ** 2).sum(axis=0) / n
    coef = np.zeros(p)
    lam = 0.05
    kernel.cd_dense(X, y, 0, 1.0, 1, lam, 0.0, 1.0 / M, np.full(p, np.inf), np.zeros(p), coef,
                    1, 1, False, True, 0, np.random.PCG64DXSM(0), np.empty(n))
    j = 0
    grid = np.linspace(-3, 3, 600001)
    values = ((X[:, [j]] * grid - y[:, None]) ** 2).mean(axis=0) + lam * np.abs(grid)
    assert coef[j] == pytest.approx(grid[np.argmin(values)], abs=2e-5)
    assert np.all(coef[1:] == 0.0)


@pytest.mark.parametrize("layout", ["dense", "csc"])
def test_grid_same_for_any_thread_count_and_equals_single_runs(layout):
    X, y, _ = _data(6, density=0.5)
    n, p = X.shape
    step, clip, noise = _args(X, 0)
    R = 7
    scales = np.geomspace(0.3, 3, R)[:, None]
    steps, clips, noises = step * scales, clip * scales, noise * scales
    results = []
    Xs = sp.csc_matrix(X)
    for n_threads in (1, 2, 4):
        coef = np.zeros((R, p))
        counts = np.zeros(R, dtype=np.int64)
        gens = [np.random.PCG64DXSM(100 + r) for r in range(R)]
        if layout == "dense":
            kernel.cd_grid_dense(X, y, 0, 1.0, 1, 0.1, 0.0, steps, clips, noises, coef, 2, 30,
                                 True, False, gens, counts, n_threads)
        else:
            kernel.cd_grid_csc(Xs.data, Xs.indices, Xs.indptr, n, y, 0, 1.0, 1, 0.1, 0.0, steps,
                               clips, noises, coef, 2, 30, True, False, gens, counts, n_threads)
        results.append((coef, counts))
    for coef, counts in results[1:]:
        np.testing.assert_array_equal(coef, results[0][0])
        np.testing.assert_array_equal(counts, results[0][1])
    for r in range(R):
        single = np.zeros(p)
        if layout == "dense":
            kernel.cd_dense(X, y, 0, 1.0, 1, 0.1, 0.0, steps[r], clips[r], noises[r], single, 2,
                            30, True, False, 0, np.random.PCG64DXSM(100 + r), np.empty(n))
        else:
            kernel.cd_csc(Xs.data, Xs.indices, Xs.indptr, n, y, 0, 1.0, 1, 0.1, 0.0, steps[r],
                          clips[r], noises[r], single, 2, 30, True, False, 0,
                          np.random.PCG64DXSM(100 + r), np.empty(n))
        np.testing.assert_array_equal(single, results[0][0][r])


def test_read_only_inputs_unchanged():
    X, y, _ = _data(7)
    step, clip, noise = _args(X, 0)
    for arr in (X, y, step, clip, noise):
        arr.flags.writeable = False
    before = X.copy()
    coef = np.zeros(X.shape[1])
    kernel.cd_dense(X, y, 0, 1.0, 1, 0.1, 0.0, step, clip, noise, coef, 1, 20, True, False, 0,
                    np.random.PCG64DXSM(0), np.empty(X.shape[0]))
    np.testing.assert_array_equal(X, before)


def test_shape_checks():
    X, y, _ = _data(8)
    step, clip, noise = _args(X, 0)
    p = X.shape[1]
    gen = np.random.PCG64DXSM(0)
    with pytest.raises(ValueError, match="y has length"):
        kernel.cd_dense(X, y[:-1], 0, 1.0, 1, 0.1, 0.0, step, clip, noise, np.zeros(p), 1, 1,
                        True, False, 0, gen, np.empty(X.shape[0]))
    with pytest.raises(ValueError, match="clip has length"):
        kernel.cd_dense(X, y, 0, 1.0, 1, 0.1, 0.0, step, clip[:-1], noise, np.zeros(p), 1, 1,
                        True, False, 0, gen, np.empty(X.shape[0]))
    with pytest.raises(ValueError, match="CSC"):
        Xs = sp.csc_matrix(X)
        kernel.cd_csc(Xs.data, Xs.indices[:-1], Xs.indptr, X.shape[0], y, 0, 1.0, 1, 0.1, 0.0,
                      step, clip, noise, np.zeros(p), 1, 1, True, False, 0, gen,
                      np.empty(X.shape[0]))


@pytest.mark.parametrize("layout", ["dense", "csc", "grid"])
def test_normaliser_divides_the_clipped_sum_as_the_twin_does(layout):
    # Issue 15: under add/remove-one the solver passes a public count m; the clipped sum is
    # divided by m (not the dataset's n), bitwise as in the twin; m = n is the default.
    X, y, _ = _data(3, n=57, p=4)
    step, clip, noise = _args(X, 0)
    out = {}
    for impl in (kernel, twin):
        for m in (None, 57, 80.0):
            coef = np.zeros((1, 4)) if layout == "grid" else np.zeros(4)
            gen = np.random.PCG64DXSM(11)
            if layout == "dense":
                impl.cd_dense(X, y, 0, 1.0, 0, 0.0, 0.0, step, clip, noise, coef, 2, 9, False,
                              False, 0, gen, np.empty(57), normaliser=m)
            elif layout == "csc":
                Xs = sp.csc_matrix(X)
                impl.cd_csc(Xs.data, Xs.indices, Xs.indptr, 57, y, 0, 1.0, 0, 0.0, 0.0, step,
                            clip, noise, coef, 2, 9, False, False, 0, gen, np.empty(57),
                            normaliser=m)
            else:
                impl.cd_grid_dense(X, y, 0, 1.0, 0, 0.0, 0.0, step[None], clip[None],
                                   noise[None], coef, 2, 9, False, False, [gen],
                                   np.zeros(1, dtype=np.int64), 1, normaliser=m)
            out[impl.__name__, m] = coef.ravel()
    for m in (None, 57, 80.0):
        np.testing.assert_array_equal(out[kernel.__name__, m], out[twin.__name__, m])
    np.testing.assert_array_equal(out[kernel.__name__, None], out[kernel.__name__, 57])
    assert not np.array_equal(out[kernel.__name__, 57], out[kernel.__name__, 80.0])
    with pytest.raises(ValueError, match="normaliser"):
        kernel.cd_dense(X, y, 0, 1.0, 0, 0.0, 0.0, step, clip, noise, np.zeros(4), 1, 1,
                        False, False, 0, np.random.PCG64DXSM(0), np.empty(57), normaliser=0.0)
