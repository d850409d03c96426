"""SSP (``dp_ssp``) on California: the private fit against the non-private ones.

One fit of standardized California (16,512 x 8 after the 80/20 split of ``reproduce tuning``,
features clipped to [-5, 5], intercept column, labels centred on the public range [0, 5])
at epsilon = 1, as ``DPLasso(solver="auto")`` runs it, against scikit-learn's
``LinearRegression`` and ``Lasso`` on the same data (non-private), and against
``DPLasso(solver="cd")``, the estimators' default before issue 19's session 8 (DP-CD with a
private selection of about 80 trials of 20 passes) and ``DPLasso(solver="cd",
rms_row_norm=sqrt(p))`` (one DP-CD fit with the noise-level rule), and the defaults since
session 15 (``rms_row_norm="auto"``: rho released as a private quantile, then that fit) and
since session 20 (``feature_scaling="auto"``: private feature scales first; the other rows pass
``feature_scaling=None``).
Ratios from one run; the utility of each
is in the README (section "Private hyperparameter selection").
"""

import warnings

import numpy as np
import pytest

from dpsco_core.experiments.tuning import PUBLIC_BOUND, _estimator_data, _split

GROUP = "SSP California fit, epsilon = 1"


@pytest.fixture(scope="module")
def california():
    X, y, _ = _estimator_data()["california (R^2)"]
    Xtr, ytr, _, _ = _split(X, y, 0)
    return Xtr, ytr


def _dplasso(X, y, solver, rms_row_norm=None, feature_scaling=None):
    # feature_scaling=None but for the defaults: the rows as before session 20
    from dpsco_core.estimators import DPLasso

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                       label_bound=(0.0, 5.0), solver=solver, random_state=0,
                       rms_row_norm=rms_row_norm, feature_scaling=feature_scaling).fit(X, y)


def bench_ssp_estimator(benchmark, record, california):
    record(benchmark, GROUP, "dpsco_core")  # DPLasso(solver='ssp')
    model = benchmark(_dplasso, *california, "ssp")
    assert model.solver_ == "ssp"


def bench_cd_estimator(benchmark, record, california):
    record(benchmark, GROUP, "dpsco_core DPLasso(solver='cd'), private selection")
    benchmark.pedantic(_dplasso, args=(*california, "cd"), rounds=3, iterations=1)


def bench_cd_estimator_rms(benchmark, record, california):
    # the noise-level rule (session 13): one DP-CD fit of 20 passes, no selection
    record(benchmark, GROUP, "dpsco_core DPLasso(solver='cd', rms_row_norm=sqrt(p))")
    model = benchmark(_dplasso, *california, "cd", np.sqrt(california[0].shape[1]))
    assert model.selection_ is None


def bench_default_estimator_private_rho(benchmark, record, california):
    # session 15's defaults: rho released privately, then DP-CD's rule
    record(benchmark, GROUP, "dpsco_core DPLasso(feature_scaling=None) (private rho, DP-CD rule)")
    model = benchmark(_dplasso, *california, "auto", "auto")
    assert model.solver_ == "cd" and model.rms_row_norm_ is not None


def bench_default_estimator(benchmark, record, california):
    # the defaults since session 20: private feature scales, rho, then DP-CD's rule
    record(benchmark, GROUP, "dpsco_core DPLasso() defaults (private scales and rho, DP-CD rule)")
    model = benchmark(_dplasso, *california, "auto", "auto", "auto")
    assert model.feature_scales_ is not None


def bench_sklearn_linear_regression(benchmark, record, california):
    from sklearn.linear_model import LinearRegression

    record(benchmark, GROUP, "scikit-learn LinearRegression (non-private)")
    benchmark(lambda X, y: LinearRegression().fit(X, y), *california)


def bench_sklearn_lasso(benchmark, record, california):
    from sklearn.linear_model import Lasso

    record(benchmark, GROUP, "scikit-learn Lasso (non-private)")
    benchmark(lambda X, y: Lasso(alpha=1e-4).fit(X, y), *california)
