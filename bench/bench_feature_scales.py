"""The private feature scales (``private_feature_scales``, session 20) on raw California.

One release of a centre and a scale per feature (20,433 x 8, the README quickstart's public
bounds, epsilon = 1, delta = 1/n^2: two exact discrete Gaussian releases of 8 coordinates,
the calibration memoized as in repeated fits) against scikit-learn's ``StandardScaler.fit``
(non-private: exact means and deviations) on the same data. Ratios from one run.
"""

import numpy as np
import pytest

GROUP = "feature scales, raw California"
LOWER = np.array([0, 0, 0, 0, 0, 0, 0, -125.0])
UPPER = np.array([15, 52, 20, 5, 10_000, 10, 42, 0.0])


@pytest.fixture(scope="module")
def california():
    from dpsco_core.datasets import load_california

    X, _ = load_california()
    return X


def bench_private_feature_scales(benchmark, record, california):
    from dpsco_core.feature_scales import private_feature_scales

    record(benchmark, GROUP, "dpsco_core")
    n = california.shape[0]
    fs = benchmark(lambda X: private_feature_scales(X, bounds=(LOWER, UPPER), epsilon=1.0,
                                                    delta=1.0 / n**2, random_state=0),
                   california)
    assert fs.privacy.epsilon <= 1.0


def bench_sklearn_standard_scaler(benchmark, record, california):
    from sklearn.preprocessing import StandardScaler

    record(benchmark, GROUP, "scikit-learn StandardScaler.fit (non-private)")
    benchmark(lambda X: StandardScaler().fit(X), california)
