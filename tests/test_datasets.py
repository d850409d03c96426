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
