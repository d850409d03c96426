"""Kernel ``_batch.batch_diff_*`` (DP-SRGD two-point differences, note 003 section 12 K1):
twin, direct formula, stability of the logistic difference, layouts, threads, oracle 22."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpsco_core._kernels import _batch as kernel
from dpsco_core.reference import batch as twin
from dpsco_core.reference.loss import _deriv

SQUARED, LOGISTIC, HUBER = 0, 2, 3


def _data(seed, n=700, p=13):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.geomspace(0.2, 3, p)
    X[rng.random((n, p)) > 0.6] = 0.0
    X[3] = 0.0
    y_reg = rng.standard_normal(n)
    y_cls = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return X, y_reg, y_cls, np.sqrt((X ** 2).sum(axis=1))


def _diff(impl, X, y, rows, coef, prev, norms, loss, eta, eta_prev, clip, layout="dense",
          n_threads=1):
    out = np.full(X.shape[1], np.nan)
    if layout == "dense":
        k = impl.batch_diff_dense(X, y, rows, coef, prev, norms, loss, 1.0, eta, eta_prev, clip,
                                  out, n_threads)
    else:
        Xs = sp.csr_matrix(X)
        k = impl.batch_diff_csr(Xs.data, Xs.indices, Xs.indptr, y, rows, coef, prev, norms, loss,
                                1.0, eta, eta_prev, clip, out, n_threads)
    return out, k


def _setup(loss):
    X, y_reg, y_cls, norms = _data(0)
    y = y_cls if loss == LOGISTIC else y_reg
    rng = np.random.default_rng(1)
    rows = rng.permutation(X.shape[0])[:600].astype(np.int64)
    coef = rng.standard_normal(X.shape[1]) * 0.3
    prev = coef + rng.standard_normal(X.shape[1]) * 0.02
    for a in (X, y, rows, coef, prev, norms):
        a.flags.writeable = False
    return X, y, rows, coef, prev, norms


@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC, HUBER], ids=["squared", "logistic", "huber"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_equals_twin_and_direct_formula(loss, layout):
    X, y, rows, coef, prev, norms = _setup(loss)
    a, ka = _diff(kernel, X, y, rows, coef, prev, norms, loss, 6.0, 5.0, 0.8, layout)
    b, kb = _diff(twin, X, y, rows, coef, prev, norms, loss, 6.0, 5.0, 0.8, layout)
    assert ka == kb > 0
    if loss == LOGISTIC:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    else:
        np.testing.assert_array_equal(a, b)
    # direct: clip(eta g(coef) - eta_prev g(prev), C) per row, summed
    A = X[rows]
    w = 6.0 * _deriv(A @ coef, y[rows], loss, 1.0) - 5.0 * _deriv(A @ prev, y[rows], loss, 1.0)
    norm = np.abs(w) * norms[rows]
    w = np.where(norm > 0.8, w * 0.8 / np.where(norm > 0, norm, 1.0), w)
    np.testing.assert_allclose(a, w @ A, rtol=1e-9, atol=1e-11)


def test_step_zero_is_the_clipped_gradient_sum():
    X, y, rows, coef, prev, norms = _setup(LOGISTIC)
    a, ka = _diff(kernel, X, y, rows, coef, prev, norms, LOGISTIC, 1.0, 0.0, 0.5)
    out = np.empty(X.shape[1])
    kb = kernel.batch_grad_dense(X, y, rows, coef, norms, LOGISTIC, 1.0, 0.5, out, 1)
    assert ka == kb
    np.testing.assert_array_equal(a, out)


def test_logistic_difference_is_stable():
    # u = 25 and du = 1e-9: the naive sigmoid difference loses most digits; the identity
    # sinh(du/2) / (2 cosh(u1/2) cosh(u0/2)) keeps full precision (note 003, section 12).
    import mpmath
    mpmath.mp.dps = 50
    X = np.array([[1.0]])
    for u, du in [(25.0, 1e-9), (-3.0, 1e-7), (0.5, 2.0), (40.0, 1e-3)]:
        out = np.empty(1)
        kernel.batch_diff_dense(X, np.array([1.0]), np.array([0], dtype=np.int64),
                                np.array([u]), np.array([u - du]), np.array([1.0]), LOGISTIC,
                                0.0, 1.0, 1.0, np.inf, out, 1)
        sig = lambda t: 1 / (1 + mpmath.exp(-t))                      # noqa: E731
        u0 = u - du                                   # the float the kernel is given
        dx = u - u0                                   # exact in floating point (Sterbenz)
        exact = -(sig(-mpmath.mpf(u)) - sig(-(mpmath.mpf(u) - mpmath.mpf(dx))))
        assert abs(out[0] - float(exact)) <= 1e-14 * abs(float(exact))


def test_oracle22_every_contribution_clipped():
    X, y, rows, coef, prev, norms = _setup(SQUARED)
    for r in rows[:50]:
        out, _ = _diff(kernel, X, y, np.array([r]), coef, prev, norms, SQUARED, 40.0, 39.0,
                       0.3)
        assert np.linalg.norm(out) <= 0.3 * (1 + 1e-12)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_thread_count_does_not_change_bits(layout):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((10_000, 20))
    y = rng.standard_normal(10_000)
    norms = np.linalg.norm(X, axis=1)
    rows = rng.permutation(10_000).astype(np.int64)
    coef, prev = rng.standard_normal((2, 20)) * 0.1
    ref, k = _diff(kernel, X, y, rows, coef, prev, norms, SQUARED, 3.0, 2.0, 1.0, layout, 1)
    for n_threads in (2, 4):
        out, k2 = _diff(kernel, X, y, rows, coef, prev, norms, SQUARED, 3.0, 2.0, 1.0, layout,
                        n_threads)
        assert k2 == k and out.tobytes() == ref.tobytes()


def test_bad_shapes_raise():
    X, y, rows, coef, prev, norms = _setup(SQUARED)
    with pytest.raises(ValueError, match="entries"):
        kernel.batch_diff_dense(X, y, rows, coef, prev[:-1], norms, 0, 1.0, 1.0, 0.0, 1.0,
                                np.empty(X.shape[1]), 1)
    with pytest.raises(ValueError, match="rows"):
        kernel.batch_diff_dense(X, y, np.array([X.shape[0]], dtype=np.int64), coef, prev, norms,
                                0, 1.0, 1.0, 0.0, 1.0, np.empty(X.shape[1]), 1)
