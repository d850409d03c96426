"""Shipped datasets: shapes, provenance checksums, conventions of the DP-CD paper."""

import gzip
import hashlib
from importlib import resources

import numpy as np
import pytest

from dpsco_core import datasets


@pytest.mark.parametrize("name, sha", [("california_housing.csv.gz", datasets.CALIFORNIA_SHA256),
                                       ("electricity.csv.gz", datasets.ELECTRICITY_SHA256)])
def test_checksums(name, sha):
    raw = gzip.decompress(resources.files("dpsco_core.data").joinpath(name).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == sha


def test_california():
    X, y = datasets.load_california()
    assert X.shape == (20433, 8) and y.shape == (20433,)
    assert X.dtype == np.float64 and X.flags.c_contiguous and np.all(np.isfinite(X))
    assert 0.14 < y.min() and y.max() <= 5.00001          # 100k-dollar units, capped at 500,001
    np.testing.assert_allclose(X[0, :2], [8.3252, 41.0])
    np.testing.assert_allclose(X[0, 2], 880.0 / 126.0)
    Xr, yr = datasets.load_california(raw=True)
    assert Xr.shape == (20433, 8) and yr[0] == 452600.0


def test_electricity():
    X, y = datasets.load_electricity()
    assert X.shape == (45312, 8) and set(np.unique(y)) == {-1.0, 1.0}
    assert np.all(np.isfinite(X))


def test_sparse_lasso_generator():
    X, y, coef = datasets.make_sparse_lasso(random_state=0)
    assert X.shape == (1000, 1000) and np.count_nonzero(coef) == 10
    X2, y2, _ = datasets.make_sparse_lasso(random_state=0)
    np.testing.assert_array_equal(y, y2)
    assert np.std(y - X @ coef) == pytest.approx(0.1, rel=0.1)


def test_imbalanced_generators():
    X, y, coef = datasets.make_imbalanced_regression(500, 6, scale_range=(0.01, 100),
                                                     random_state=1)
    ratio = X.std(axis=0)[-1] / X.std(axis=0)[0]
    assert 5e3 < ratio < 2e4
    Xc, yc, _ = datasets.make_imbalanced_classification(500, 6, random_state=1)
    assert set(np.unique(yc)) == {-1.0, 1.0}


def test_rademacher_lasso_excess_loss_identity():
    # F(x) - F* = ||x - x_true||^2 / 2 for the population loss (note 004, 7.1 A): check on a
    # large sample to 4.5 standard errors of the empirical average.
    X, y, x_true = datasets.make_rademacher_lasso(200_000, 20, 3, radius=2.0, random_state=2)
    assert np.abs(x_true).sum() == pytest.approx(1.8)
    x = x_true + np.random.default_rng(0).standard_normal(20) * 0.1
    diff = 0.5 * (X @ x - y) ** 2 - 0.5 * (X @ x_true - y) ** 2
    assert abs(diff.mean() - 0.5 * np.sum((x - x_true) ** 2)) <= 4.5 * diff.std() / np.sqrt(diff.size)


def test_standardize():
    X, _, _ = datasets.make_imbalanced_regression(300, 4, random_state=3)
    X[:, 2] = 5.0
    Xs, tr = datasets.standardize(X)
    np.testing.assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Xs[:, [0, 1, 3]].std(axis=0), 1.0)
    coef = np.array([1.0, -2.0, 0.0, 0.5])
    orig, intercept = tr.coef_to_original(coef)
    np.testing.assert_allclose(X @ orig + intercept, Xs @ coef)
    with pytest.raises(ValueError, match="2-dimensional"):
        datasets.standardize(np.ones(3))


@pytest.mark.parametrize("kwargs, match", [(dict(n_informative=2000), "n_informative"),
                                           (dict(n_samples=0), "n_samples"),
                                           (dict(noise=-1.0), "noise")])
def test_generator_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        datasets.make_sparse_lasso(**kwargs)


def test_rademacher_lasso_stream_rows_deterministic_any_order():
    from dpsco_core.datasets import RademacherLassoStream
    s = RademacherLassoStream(1000, 37, 3, radius=2.0, noise=0.5, random_state=4)
    X, y = s.rows(np.arange(10))
    X2, y2 = s.rows([7, 3])
    assert np.array_equal(X2, X[[7, 3]]) and np.array_equal(y2, y[[7, 3]])
    assert set(np.unique(X)) == {-1.0, 1.0} and X.shape == (10, 37)
    assert np.abs(s.x_true).sum() == pytest.approx(1.8)
    assert np.all(np.abs(y - X @ s.x_true) <= 0.5)
    assert s.excess_loss(s.x_true) == 0.0
    # The cache gives the generated rows.
    signs, y3 = s.sign_rows([7, 3])
    s.materialize()
    signs4, y4 = s.sign_rows([7, 3])
    assert np.array_equal(signs4, signs) and np.array_equal(y4, y3)
    with pytest.raises(ValueError, match="indices"):
        s.sign_rows([1000])


def test_rademacher_lasso_stream_row_streams_do_not_overlap():
    # Row i's words come from Philox counters (c, i, 0, 0): rows are not shifted copies of
    # each other (with counters (i, 0, 0, 0), row i + 1 would be row i shifted by 4 words).
    from dpsco_core.datasets import RademacherLassoStream
    s = RademacherLassoStream(50, 64 * 12, 3, random_state=0)
    signs, _ = s.sign_rows(np.arange(50))
    assert not np.any(signs[1:, :-4] == signs[:-1, 4:])
    word = np.random.Philox(key=s._key, counter=[0, 17, 0, 0]).random_raw(1)[0]
    assert signs[17, 0] == word


@pytest.mark.statistical
def test_rademacher_lasso_stream_moments():
    # E a = 0, E a a^T = I, and y - <a, x_true> ~ Unif[-s, s]: means within 4.5 s.e.
    from dpsco_core.datasets import RademacherLassoStream
    s = RademacherLassoStream(4000, 20, 3, noise=0.5, random_state=1)
    X, y = s.rows(np.arange(4000))
    n = 4000
    assert np.all(np.abs(X.mean(axis=0)) <= 4.5 / np.sqrt(n))
    off = (X.T @ X / n)[~np.eye(20, dtype=bool)]
    assert np.all(np.abs(off) <= 4.5 / np.sqrt(n))
    xi = y - X @ s.x_true
    assert abs(xi.mean()) <= 4.5 * 0.5 / np.sqrt(3 * n)
    assert abs((xi ** 2).mean() - 0.25 / 3) <= 4.5 * 0.25 * np.sqrt(4 / 45) / np.sqrt(n)