"""Kernel ``_batch`` (clipped batch gradients, DP-SGD loop) against its twin, layouts, threads,
and the clipping oracles of note 002 (17: sensitivity, 19: GLM scalar-rescale clipping)."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsco_core._kernels import _batch as kernel
from dpsco_core.reference import batch as twin

SQUARED, LOGISTIC, HUBER = 0, 2, 3
PENALTIES = {"l1": (1, 0.05, 0.0), "l2": (2, 0.5, 0.0), "enet": (3, 0.05, 0.2),
             "box": (4, -0.3, 0.3), "none": (0, 0.0, 0.0)}


def _data(seed, n=600, p=13, density=0.6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.geomspace(0.2, 5, p)
    X[rng.random((n, p)) > density] = 0.0
    X[3] = 0.0                                    # a zero row: norm 0, no division
    y_reg = rng.standard_normal(n)
    y_cls = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return X, y_reg, y_cls, np.sqrt((X ** 2).sum(axis=1))


def _read_only(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _grad(impl, X, y, rows, coef, norms, loss, clip, layout="dense", index_dtype=np.int32,
          n_threads=1):
    out = np.full(X.shape[1], np.nan)
    if layout == "dense":
        k = impl.batch_grad_dense(X, y, rows, coef, norms, loss, 1.0, clip, out, n_threads)
    else:
        Xs = sp.csr_matrix(X)
        k = impl.batch_grad_csr(Xs.data, Xs.indices.astype(index_dtype),
                                Xs.indptr.astype(index_dtype), y, rows, coef, norms, loss, 1.0,
                                clip, out, n_threads)
    return out, k


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC, HUBER], ids=["squared", "logistic", "huber"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_batch_grad_equals_twin(loss, layout):
    X, y_reg, y_cls, norms = _data(0)
    y = y_cls if loss == LOGISTIC else y_reg
    rng = np.random.default_rng(1)
    rows = rng.integers(0, X.shape[0], 700)       # repeats and 3 blocks of 256
    coef = rng.standard_normal(X.shape[1]) * 0.3
    X, y, rows, coef, norms = _read_only(X.copy(), y.copy(), rows, coef, norms.copy())
    a, ka = _grad(kernel, X, y, rows, coef, norms, loss, 1.5, layout)
    b, kb = _grad(twin, X, y, rows, coef, norms, loss, 1.5, layout)
    assert ka == kb > 0
    if loss == LOGISTIC:       # exp: NumPy's SIMD version may differ by an ulp
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_equals_dense(index_dtype):
    X, y, _, norms = _data(2, density=0.3)
    rows = np.arange(X.shape[0], dtype=np.int64)
    coef = np.linspace(-1, 1, X.shape[1])
    a, ka = _grad(kernel, X, y, rows, coef, norms, SQUARED, 2.0)
    b, kb = _grad(kernel, X, y, rows, coef, norms, SQUARED, 2.0, "csr", index_dtype)
    assert ka == kb
    # zeros shift the margin lanes of CSR rows: equal up to rounding
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_thread_count_does_not_change_bits(layout):
    # 10,000 rows x 20 features: a first group of 32 blocks above the parallel threshold, then
    # a group below it, so both paths run.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((10_000, 20))
    y = rng.standard_normal(10_000)
    norms = np.sqrt((X ** 2).sum(axis=1))
    rows = rng.permutation(10_000).astype(np.int64)
    coef = rng.standard_normal(20) * 0.1
    results = [_grad(kernel, X, y, rows, coef, norms, SQUARED, 3.0, layout, n_threads=t)
               for t in (1, 2, 4)]
    for out, k in results[1:]:
        np.testing.assert_array_equal(out, results[0][0])
        assert k == results[0][1]
    np.testing.assert_array_equal(results[0][0], _grad(twin, X, y, rows, coef, norms, SQUARED,
                                                       3.0, layout)[0])


@pytest.mark.parametrize("clip", [0.05, 1.0, 30.0, np.inf])
def test_scalar_rescale_equals_explicit_per_sample_clipping(clip):
    # Oracle 19: for a GLM, clipping l'(z_i) x_i by rescaling the scalar equals clipping the
    # materialised per-sample gradient vector; ||clip(v)|| = min(||v||, C); zero rows give no NaN.
    X, _, y, norms = _data(4)
    rng = np.random.default_rng(5)
    coef = rng.standard_normal(X.shape[1]) * 0.5
    rows = np.arange(X.shape[0], dtype=np.int64)
    z = X @ coef
    G = (-y / (1.0 + np.exp(y * z)))[:, None] * X          # per-sample logistic gradients
    g_norms = np.linalg.norm(G, axis=1)
    factor = np.minimum(1.0, clip / np.where(g_norms > 0, g_norms, 1.0))
    clipped = G * factor[:, None]
    np.testing.assert_allclose(np.linalg.norm(clipped, axis=1), np.minimum(g_norms, clip),
                               rtol=1e-12)
    out, k = _grad(kernel, X, y, rows, coef, norms, LOGISTIC, clip)
    assert np.all(np.isfinite(out))
    assert k == int(np.sum(g_norms > clip * (1 + 1e-12)))
    np.testing.assert_allclose(out, clipped.sum(axis=0), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC])
def test_sensitivity_brute_force(loss):
    # Oracle 17: ||S(D) - S(D')|| <= C for D' = D minus one row (add/remove) and <= 2C for D'
    # = D with one row replaced by an arbitrary (here huge) row.
    rng = np.random.default_rng(6)
    clip = 0.7
    for trial in range(20):
        X, y_reg, y_cls, norms = _data(100 + trial, n=80, p=5)
        y = y_cls if loss == LOGISTIC else y_reg
        coef = rng.standard_normal(5) * 3
        all_rows = np.arange(80, dtype=np.int64)
        full, _ = _grad(kernel, X, y, all_rows, coef, norms, loss, clip)
        k = int(rng.integers(80))
        removed, _ = _grad(kernel, X, y, np.delete(all_rows, k), coef, norms, loss, clip)
        assert np.linalg.norm(full - removed) <= clip * (1 + 1e-12)
        X2, y2 = X.copy(), y.copy()
        X2[k] = rng.standard_normal(5) * 1e3
        y2[k] = -y[k] if loss == LOGISTIC else 1e4
        replaced, _ = _grad(kernel, X2, y2, all_rows, coef, np.sqrt((X2 ** 2).sum(axis=1)),
                            loss, clip)
        assert np.linalg.norm(full - replaced) <= 2 * clip * (1 + 1e-12)


def test_empty_batch_and_bad_input():
    X, y, _, norms = _data(7)
    coef = np.zeros(X.shape[1])
    out, k = _grad(kernel, X, y, np.empty(0, dtype=np.int64), coef, norms, SQUARED, 1.0)
    assert k == 0 and np.all(out == 0.0)
    with pytest.raises(ValueError, match="rows must be in"):
        _grad(kernel, X, y, np.array([0, X.shape[0]], dtype=np.int64), coef, norms, SQUARED, 1.0)
    Xs = sp.csr_matrix(X)
    bad = Xs.indices.copy()
    bad[0] = X.shape[1]
    with pytest.raises(ValueError, match="column indices"):
        kernel.batch_grad_csr(Xs.data, bad, Xs.indptr, y, np.zeros(1, dtype=np.int64), coef,
                              norms, SQUARED, 1.0, 1.0, np.empty(X.shape[1]), 1)
    with pytest.raises(ValueError, match="coef and sum_out"):
        kernel.batch_grad_dense(X, y, np.zeros(1, dtype=np.int64), coef[:-1], norms, SQUARED,
                                1.0, 1.0, np.empty(X.shape[1]), 1)


def _sgd(impl, X, y, norms, loss, penalty, sampling, layout="dense", n_threads=1, calls=(25, 9),
         q=0.05, b=50, noise=0.5, seeds=(1, 2)):
    coef = np.zeros(X.shape[1])
    sgen, ngen = np.random.PCG64DXSM(seeds[0]), np.random.PCG64DXSM(seeds[1])
    kind, p1, p2 = penalty
    counts = []
    for steps in calls:    # two calls: the streams continue from where the first one stopped
        args = (loss, 1.0, kind, p1, p2, coef, steps, sampling, q, b, 0.01, 1.0, noise, q * 600,
                sgen, ngen, n_threads)
        if layout == "dense":
            counts.append(impl.sgd_dense(X, y, norms, *args))
        else:
            Xs = sp.csr_matrix(X)
            counts.append(impl.sgd_csr(Xs.data, Xs.indices, Xs.indptr, y, norms, *args))
    return coef, counts, sgen.random_raw(), ngen.random_raw()


@pytest.mark.parametrize("sampling", [kernel.POISSON, kernel.SHUFFLE], ids=["poisson", "shuffle"])
@pytest.mark.parametrize("penalty", PENALTIES.values(), ids=PENALTIES.keys())
def test_sgd_equals_twin(sampling, penalty):
    X, y, _, norms = _data(8)
    a = _sgd(kernel, X, y, norms, SQUARED, penalty, sampling)
    b = _sgd(twin, X, y, norms, SQUARED, penalty, sampling)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]          # counts, and both streams left at the same position


@pytest.mark.parametrize("sampling", [kernel.POISSON, kernel.SHUFFLE], ids=["poisson", "shuffle"])
def test_sgd_csr_equals_twin_and_dense(sampling):
    X, _, y, norms = _data(9, density=0.4)
    a = _sgd(kernel, X, y, norms, LOGISTIC, PENALTIES["l2"], sampling, "csr")
    b = _sgd(twin, X, y, norms, LOGISTIC, PENALTIES["l2"], sampling, "csr")
    c = _sgd(kernel, X, y, norms, LOGISTIC, PENALTIES["l2"], sampling, "dense")
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a[0], c[0], rtol=1e-11, atol=1e-13)
    assert a[1:] == b[1:] and a[1][0][1] == c[1][0][1]


def test_sgd_thread_count_does_not_change_bits():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((6000, 16))
    y = rng.standard_normal(6000)
    norms = np.sqrt((X ** 2).sum(axis=1))
    runs = [_sgd(kernel, X, y, norms, SQUARED, PENALTIES["l1"], kernel.POISSON, n_threads=t,
                 calls=(4,), q=0.9) for t in (1, 2, 4)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r[0], runs[0][0])
        assert r[1:] == runs[0][1:]


def test_poisson_batch_sizes_and_shuffle_epochs():
    # Poisson: sum of batch sizes over T steps is Binomial(T n, q): within 5 standard errors.
    X, y, _, norms = _data(11)
    n, q, steps = X.shape[0], 0.03, 400
    _, counts, _, _ = _sgd(kernel, X, y, norms, SQUARED, PENALTIES["none"], kernel.POISSON,
                           calls=(steps,), q=q)
    sampled = counts[0][1]
    assert abs(sampled - steps * n * q) <= 5 * np.sqrt(steps * n * q * (1 - q))
    # Twin's batches are sorted, distinct, in range; shuffle: n // b batches of b per epoch.
    gen = np.random.PCG64DXSM(3)
    for _ in range(20):
        rows = twin._poisson_batch(gen, n, q)
        assert np.all(np.diff(rows) > 0) and (rows.size == 0 or (rows[0] >= 0 and rows[-1] < n))
    _, counts, _, _ = _sgd(kernel, X, y, norms, SQUARED, PENALTIES["none"], kernel.SHUFFLE,
                           calls=(30,), b=70)
    assert counts[0][1] == 30 * 70


def test_sgd_bad_input():
    X, y, _, norms = _data(12)
    coef = np.zeros(X.shape[1])
    gens = (np.random.PCG64DXSM(0), np.random.PCG64DXSM(1))
    for sampling, q, b, match in [(0, 0.0, 10, "sample_rate"), (0, 1.5, 10, "sample_rate"),
                                  (1, 0.1, 0, "batch_size"), (1, 0.1, 601, "batch_size"),
                                  (7, 0.1, 10, "unknown sampling")]:
        with pytest.raises(ValueError, match=match):
            kernel.sgd_dense(X, y, norms, 0, 1.0, 0, 0.0, 0.0, coef, 1, sampling, q, b, 0.1, 1.0,
                             0.0, 10.0, *gens, 1)
    assert np.all(coef == 0.0)
