"""DPStandardScaler (dpsco_core.preprocessing, session 20): the release is
private_feature_scales', the map is fixed once fitted, and a pipeline with a private
estimator composes both releases in one budget."""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from dpsco_core.estimators import DPLogisticRegression  # noqa: E402
from dpsco_core.feature_scales import private_feature_scales  # noqa: E402
from dpsco_core.preprocessing import DPStandardScaler  # noqa: E402
from dpsco_core.privacy import Budget  # noqa: E402
from dpsco_core.privacy.accountants import RdpAccountant  # noqa: E402
from dpsco_core.privacy.events import ComposedDpEvent  # noqa: E402

LOWER, UPPER = np.array([0.0, 30.0, 0.0]), np.array([1.0, 42.0, 100.0])


def _data(n=3_000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0.0, 0.1, n), rng.normal(35.0, 2.0, n),
                         rng.exponential(5.0, n)])
    y = np.where(X[:, 0] * 40 + (X[:, 1] - 35) + rng.normal(0, 1, n) > 2, 1, -1)
    return X, y


def test_fit_is_the_private_feature_scales_release():
    X, _ = _data()
    scaler = DPStandardScaler(epsilon=0.3, bounds=(LOWER, UPPER), random_state=7).fit(X)
    fs = private_feature_scales(X, bounds=(LOWER, UPPER), epsilon=0.3, delta=1 / 3_000**2,
                                random_state=7)
    np.testing.assert_array_equal(scaler.mean_, fs.centre)
    np.testing.assert_array_equal(scaler.scale_, fs.scale)
    assert scaler.privacy_.epsilon == fs.privacy.epsilon <= 0.3
    assert scaler.privacy_.delta == 1 / 3_000**2
    np.testing.assert_array_equal(scaler.transform(X), fs.transform(X))
    assert scaler.n_features_in_ == 3
    assert list(scaler.get_feature_names_out()) == ["x0", "x1", "x2"]


def test_pipeline_with_a_shared_budget_composes_both_releases():
    X, y = _data()
    delta = 1e-6
    budget = Budget(1.0, delta)
    pipe = make_pipeline(
        DPStandardScaler(epsilon=0.2, delta=delta / 2, bounds=(LOWER, UPPER), random_state=0,
                         budget=budget),
        DPLogisticRegression(epsilon=0.8, delta=delta / 2, bounds=(-3, 3), classes=(-1, 1),
                             random_state=0, budget=budget))
    pipe.fit(X, y)
    scaler, model = pipe[0], pipe[1]
    # the ledger holds the scaler's event first, then the model's release(s)
    assert budget.ledger[0] == scaler.privacy_.event
    composed = RdpAccountant(budget.orders, "replace_one").compose(
        ComposedDpEvent(budget.ledger)).get_epsilon(delta)
    assert composed == pytest.approx(budget.spent_epsilon, rel=1e-9)
    assert budget.spent_epsilon <= 1.0
    assert model.privacy_.epsilon <= 0.8
    assert pipe.score(X, y) > 0.8


def test_transform_is_fixed_after_fit_and_clips():
    X, _ = _data()
    scaler = DPStandardScaler(epsilon=1.0, bounds=(LOWER, UPPER), random_state=0).fit(X)
    Z = scaler.transform(X)
    assert np.abs(Z).max() <= 3.0
    outlier = X[:1].copy()
    outlier[0, 2] = 1e9
    assert scaler.transform(outlier)[0, 2] == 3.0
    np.testing.assert_array_equal(scaler.transform(X), Z)
    free = DPStandardScaler(epsilon=1.0, bounds=(LOWER, UPPER), clip=None, random_state=0)
    assert np.abs(free.fit_transform(X)).max() > 3.0


def test_refusals():
    X, _ = _data(50)
    with pytest.raises(ValueError, match="bounds"):
        DPStandardScaler().fit(X)
    with pytest.raises((TypeError, ValueError), match="[Ss]parse"):
        DPStandardScaler(bounds=(LOWER, UPPER)).fit(sp.csr_matrix(X))
    with pytest.raises(ValueError, match="at least 2"):
        DPStandardScaler(bounds=(LOWER, UPPER)).fit(X[:1])
    scaler = DPStandardScaler(bounds=(LOWER, UPPER), random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        scaler.transform(X[:, :2])
    secret = X.copy()
    secret[0, 0] = 123.456789
    with pytest.raises(ValueError) as info:
        scaler.transform(secret[:, 0])          # 1-d: scikit-learn's message quotes values
    assert "123.45" not in str(info.value)


def test_clone_keeps_the_parameters_and_the_budget():
    budget = Budget(1.0, 1e-6)
    scaler = DPStandardScaler(epsilon=0.2, bounds=(0, 1), random_state=3, budget=budget)
    twin = clone(scaler)
    assert twin.get_params()["epsilon"] == 0.2 and twin.budget is budget


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(DPStandardScaler(bounds=(-10, 10), random_state=0))


def test_infinite_epsilon_fits_without_noise():
    X, _ = _data(200)
    scaler = DPStandardScaler(epsilon=np.inf, bounds=(LOWER, UPPER)).fit(X)
    assert scaler.privacy_.epsilon == np.inf
    np.testing.assert_allclose(scaler.mean_, np.clip(X, LOWER, UPPER).mean(axis=0))
