"""The estimators' feature_scaling="private" (session 20): the feature scales are released
inside the fit's (epsilon, delta), composed by the accountant with the fits, charged and
refused with them, and the model applies to the records as given."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from dpsco_core._random import check_random_state, child_seed_sequences  # noqa: E402
from dpsco_core.estimators import (FEATURE_SCALING_SHARE, DPElasticNet, DPLasso,  # noqa: E402
                                   DPLogisticRegression, _SCALING_STREAM)
from dpsco_core.exceptions import PrivacyBudgetError  # noqa: E402
from dpsco_core.feature_scales import release_feature_scales, scaling_event  # noqa: E402
from dpsco_core.privacy import Budget  # noqa: E402
from dpsco_core.privacy.accountants import RdpAccountant  # noqa: E402
from dpsco_core.privacy.calibration import _zcdp_rho  # noqa: E402

LOWER = np.array([0.0, 0.0, 0.0, -5.0])
UPPER = np.array([1.0, 42.0, 100.0, 5.0])


def _data(n=1_500, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0.0, 0.1, n), rng.normal(35.0, 2.0, n),
                         rng.exponential(5.0, n), rng.normal(0.0, 1.0, n)])
    signal = 20 * X[:, 0] + (X[:, 1] - 35) / 2 + X[:, 3]
    y_reg = signal + rng.normal(0, 0.5, n)
    if classes == 2:
        y = np.where(signal + rng.normal(0, 1, n) > 1, 1, -1)
    else:
        y = np.digitize(signal + rng.normal(0, 1, n), [0.0, 2.0])
    return X, y, y_reg


def _models(random_state=0):
    common = dict(epsilon=1.0, bounds=(LOWER, UPPER), random_state=random_state,
                  feature_scaling="private")
    return {
        "lasso-rule": lambda **k: DPLasso(alpha=1e-3, label_bound=(-10, 20), **common, **k),
        "lasso-selection": lambda **k: DPLasso(alpha=1e-3, label_bound=(-10, 20),
                                                rms_row_norm=None, n_trials=4, **common, **k),
        "lasso-ssp": lambda **k: DPLasso(alpha=1e-3, label_bound=(-10, 20), solver="ssp",
                                         **common, **k),
        "enet-sgd": lambda **k: DPElasticNet(alpha=1e-3, label_bound=(-10, 20), solver="sgd",
                                             **common, **k),
        "logistic": lambda **k: DPLogisticRegression(classes=(-1, 1), **common, **k),
        "logistic-ssp": lambda **k: DPLogisticRegression(classes=(-1, 1), solver="ssp",
                                                         **common, **k),
        "logistic-3-classes": lambda **k: DPLogisticRegression(classes=(0, 1, 2), **common,
                                                               **k),
        "logistic-3-classes-given": lambda **k: DPLogisticRegression(
            classes=(0, 1, 2), step=0.5, clip=1.0, **common, **k),
    }


def _xy(name, n=1_500, seed=0):
    X, y, y_reg = _data(n, seed, classes=3 if "3-classes" in name else 2)
    return X, (y if name.startswith("logistic") else y_reg)


def _delta(n):
    return 1.0 / n**2


@pytest.mark.parametrize("name", sorted(_models()))
def test_report_composes_the_scales_first_and_is_the_accountants(name):
    X, y = _xy(name)
    model = _models()[name]().fit(X, y)
    report = model.privacy_
    delta = _delta(len(y))
    z = 1.0 / math.sqrt(FEATURE_SCALING_SHARE * _zcdp_rho(1.0, delta))
    assert report.event.events[0] == scaling_event(z)
    again = RdpAccountant(report.orders, report.neighboring_relation,
                          conversion=report.conversion).compose(report.event).get_epsilon(delta)
    assert again == pytest.approx(report.epsilon, rel=1e-12)
    assert report.epsilon <= 1.0 and report.unconditional
    assert report.budget_split["feature scales (share of rho)"] == FEATURE_SCALING_SHARE
    assert any("feature_scaling='private'" in a for a in report.assumptions)


@pytest.mark.parametrize("name", ["lasso-rule", "logistic", "logistic-ssp", "enet-sgd"])
def test_released_scales_are_the_accounted_release(name):
    """feature_scales_ is release_feature_scales at the accounted multiplier, drawn from the
    fit's own scaling stream, under the fits' relation."""
    X, y = _xy(name)
    model = _models()[name]().fit(X, y)
    delta = _delta(len(y))
    z = 1.0 / math.sqrt(FEATURE_SCALING_SHARE * _zcdp_rho(1.0, delta))
    seed = child_seed_sequences(check_random_state(0), 1, offset=_SCALING_STREAM)[0]
    expected = release_feature_scales(X, bounds=(LOWER, UPPER), noise_multiplier=z,
                                      neighboring_relation=model.privacy_.neighboring_relation,
                                      random_state=seed)
    np.testing.assert_array_equal(model.feature_scales_.centre, expected.centre)
    np.testing.assert_array_equal(model.feature_scales_.scale, expected.scale)


@pytest.mark.parametrize("name", sorted(_models()))
def test_budget_charged_whole_or_refused_whole(name):
    X, y = _xy(name)
    delta = _delta(len(y))
    # the budget composes the charged releases with its own orders and conversion, tighter
    # than the report's: half the fit's epsilon cannot pay for it
    small = Budget(0.5, delta)
    with pytest.raises(PrivacyBudgetError):
        _models()[name](budget=small).fit(X, y)
    assert small.ledger == () and small.spent_epsilon == 0.0
    budget = Budget(1.0, delta)
    model = _models()[name](budget=budget).fit(X, y)
    assert budget.ledger[0] == model.privacy_.event.events[0]
    assert budget.spent_epsilon <= 1.0


@pytest.mark.parametrize("name", ["lasso-rule", "logistic", "logistic-3-classes"])
def test_model_applies_to_the_records_as_given(name):
    X, y = _xy(name)
    model = _models()[name]().fit(X, y)
    lo, hi = model.feature_bounds_
    fs = model.feature_scales_
    np.testing.assert_allclose(lo, np.maximum(LOWER, fs.centre - 3 * fs.scale))
    np.testing.assert_allclose(hi, np.minimum(UPPER, fs.centre + 3 * fs.scale))
    outlier = X[:3].copy()
    outlier[0, 2] = 1e6
    clipped = np.clip(outlier, lo, hi)
    margins = clipped @ np.atleast_2d(model.coef_).T + model.intercept_
    if name.startswith("lasso"):
        np.testing.assert_allclose(model.predict(outlier), margins.ravel())
    else:
        np.testing.assert_allclose(model.decision_function(outlier),
                                   margins.ravel() if margins.shape[1] == 1 else margins)
    # standardized, the same model: w_z = coef_ * scale on (clip(x) - centre) / scale
    Z = fs.transform(outlier)
    w_z = np.atleast_2d(model.coef_) * fs.scale
    b_z = model.intercept_ + np.atleast_2d(model.coef_) @ fs.centre
    np.testing.assert_allclose(Z @ w_z.T + b_z, margins, rtol=1e-9, atol=1e-9)


def test_scaling_beats_the_bounds_alone_on_a_feature_far_inside_its_bounds():
    X, y, _ = _data(4_000, seed=1)
    Xte, yte, _ = _data(4_000, seed=2)
    kw = dict(classes=(-1, 1), epsilon=1.0, bounds=(LOWER, UPPER), random_state=0)
    plain = DPLogisticRegression(**kw).fit(X, y).score(Xte, yte)
    scaled = DPLogisticRegression(feature_scaling="private", **kw).fit(X, y).score(Xte, yte)
    assert scaled > plain + 0.05, (plain, scaled)


def test_bounds_need_not_contain_zero():
    """The raw bounds go to the scales' release only (the problem's are (-3, 3)): a feature
    in (30, 42), such as latitude, is declared as it is."""
    X, y = _xy("logistic")
    lower = LOWER.copy()
    lower[1] = 30.0
    model = DPLogisticRegression(classes=(-1, 1), epsilon=1.0, bounds=(lower, UPPER),
                                 feature_scaling="private", random_state=0).fit(X, y)
    assert model.feature_bounds_[0][1] >= 30.0 and model.score(X, y) > 0.7


def test_same_seed_same_model_and_infinite_epsilon_is_exact():
    X, y = _xy("logistic")
    a = _models()["logistic"]().fit(X, y)
    b = _models()["logistic"]().fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = _models(random_state=1)["logistic"]().fit(X, y)
    assert not np.array_equal(a.feature_scales_.centre, c.feature_scales_.centre)
    exact = DPLogisticRegression(classes=(-1, 1), epsilon=math.inf, bounds=(LOWER, UPPER),
                                 feature_scaling="private", random_state=0).fit(X, y)
    V = (np.clip(X, LOWER, UPPER) - LOWER) / (UPPER - LOWER)
    np.testing.assert_allclose(exact.feature_scales_.centre,
                               LOWER + (UPPER - LOWER) * V.mean(axis=0))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(feature_scaling="yes"), ValueError, "feature_scaling"),
    (dict(fit_intercept=False), ValueError, "fit_intercept"),
    (dict(row_norm=10.0), ValueError, "row_norm"),
    (dict(bounds=None), ValueError, "bounds"),
])
def test_refused_before_anything_is_charged(kwargs, error, match):
    X, y = _xy("logistic")
    budget = Budget(10.0, 1e-3)
    params = dict(classes=(-1, 1), epsilon=1.0, bounds=(LOWER, UPPER),
                  feature_scaling="private", budget=budget, random_state=0)
    params.update(kwargs)
    with pytest.raises(error, match=match):
        DPLogisticRegression(**params).fit(X, y)
    assert budget.ledger == ()


def test_sparse_refused_before_anything_is_charged():
    X, y = _xy("logistic")
    budget = Budget(10.0, 1e-3)
    with pytest.raises(TypeError, match="sparse"):
        _models()["logistic"](budget=budget).fit(sp.csr_matrix(X), y)
    assert budget.ledger == ()


def test_refit_without_scaling_drops_the_scales():
    X, y = _xy("logistic")
    model = _models()["logistic"]().fit(X, y)
    assert model.feature_scales_ is not None
    model.set_params(feature_scaling=None).fit(X, y)
    assert model.feature_scales_ is None and not hasattr(model, "feature_bounds_")


def test_noise_is_public_and_warned_above_the_threshold():
    from dpsco_core.estimators import FEATURE_SCALING_MAX_NOISE, feature_scaling_noise
    from dpsco_core.exceptions import DPSCOWarning

    n, p = 1_500, 4
    z = 1.0 / math.sqrt(FEATURE_SCALING_SHARE * _zcdp_rho(1.0, 1 / n**2))
    assert feature_scaling_noise(n, p, 1.0) == pytest.approx(z * 2 / n, rel=1e-12)
    X, y = _xy("logistic")
    small = feature_scaling_noise(120, 4, 1.0)
    assert small > FEATURE_SCALING_MAX_NOISE
    with pytest.warns(DPSCOWarning, match="mostly noise"):
        _models()["logistic"]().fit(X[:120], y[:120])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DPSCOWarning)
        _models()["logistic"]().fit(X, y)


def test_auto_is_a_public_decision_on_the_noise():
    """feature_scaling="auto" (the default) scales exactly where feature_scaling_noise is at
    most FEATURE_SCALING_AUTO_NOISE and the options allow it; the fit is then bitwise the
    "private" one."""
    from dpsco_core.estimators import FEATURE_SCALING_AUTO_NOISE, feature_scaling_noise

    X, y, _ = _data(8_000, seed=3)
    assert feature_scaling_noise(8_000, 4, 1.0) <= FEATURE_SCALING_AUTO_NOISE
    kw = dict(classes=(-1, 1), epsilon=1.0, bounds=(LOWER, UPPER), random_state=0)
    auto = DPLogisticRegression(**kw).fit(X, y)
    explicit = DPLogisticRegression(feature_scaling="private", **kw).fit(X, y)
    assert auto.feature_scales_ is not None
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    assert auto.privacy_.event == explicit.privacy_.event
    small = X[:1_500], y[:1_500]
    assert feature_scaling_noise(1_500, 4, 1.0) > FEATURE_SCALING_AUTO_NOISE
    for model, data in [
            (DPLogisticRegression(**kw), small),                         # too few records
            (DPLogisticRegression(**dict(kw, epsilon=math.inf)), (X, y)),   # non-private
            (DPLogisticRegression(**dict(kw, fit_intercept=False)), (X, y)),
            (DPLogisticRegression(**dict(kw, bounds=(-100, 100), row_norm=100.0)), (X, y)),
            (DPLogisticRegression(**dict(kw, bounds=None)), (X, y)),
            (DPLogisticRegression(**kw), (sp.csr_matrix(X), y))]:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(*data)
        assert model.feature_scales_ is None
        assert "feature scales (share of rho)" not in model.privacy_.budget_split


def test_tiny_epsilon_is_refused_by_name_before_any_charge():
    """epsilon = 1e-300: the scales' rho underflows (hypothesis, session 20: "auto" raised
    ZeroDivisionError); "auto" then fits without scales, "private" is refused naming epsilon."""
    from dpsco_core.estimators import feature_scaling_noise

    assert feature_scaling_noise(100, 2, 1e-300, 1e-300) == math.inf
    X, y = _xy("logistic")
    budget = Budget(10.0, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        DPLogisticRegression(classes=(-1, 1), epsilon=1e-300, bounds=(LOWER, UPPER),
                             feature_scaling="private", budget=budget).fit(X, y)
    assert budget.ledger == ()


def test_noise_beyond_the_exact_samplers_grid_refused_before_any_charge():
    """epsilon = 1e-6 on 2 records: the scales' noise scale exceeds the exact sampler's
    grid; the fit was refused after the budget had been charged with the scales (review,
    session 20)."""
    X = np.array([[1.0, 5.0], [2.0, 5.0]])
    budget = Budget(10.0, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        DPLogisticRegression(classes=(-1, 1), epsilon=1e-6, bounds=([0, 3], [5, 5]),
                             feature_scaling="private", budget=budget).fit(X, [1, -1])
    assert budget.ledger == ()


@pytest.mark.parametrize("accountant", ["basic-composition", "pld"])
def test_auto_does_not_scale_under_a_budget_that_cannot_compose_the_scales(accountant):
    """The default feature_scaling="auto" refused every fit with a "basic-composition"
    (ValueError: the scales' zCDP event charged without a delta) or "pld" budget
    (UnsupportedEventError) where it applied (review, session 20): "auto" now standardizes
    only without a budget or with an "rdp" one (a public fact), and the fit is the
    feature_scaling=None one."""
    from dpsco_core.estimators import FEATURE_SCALING_AUTO_NOISE, feature_scaling_noise

    if accountant == "pld":
        pytest.importorskip("dp_accounting")
    X, y, _ = _data(8_000, seed=3)
    assert feature_scaling_noise(8_000, 4, 1.0) <= FEATURE_SCALING_AUTO_NOISE
    kw = dict(classes=(-1, 1), epsilon=1.0, bounds=(LOWER, UPPER), random_state=0)
    models, ledgers = [], []
    for scaling in ("auto", None):
        budget = Budget(3.0, 1e-6, accountant=accountant)
        models.append(DPLogisticRegression(feature_scaling=scaling, budget=budget,
                                           **kw).fit(X, y))
        ledgers.append(budget.ledger)
    assert models[0].feature_scales_ is None and ledgers[0] == ledgers[1]
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)


def test_private_under_basic_composition_charges_the_scales_at_the_fits_delta():
    """feature_scaling="private" with a "basic-composition" budget raised ValueError (the
    scales charged with delta=None; review, session 20): they are charged at the fit's delta,
    as their own release, and refused whole with the fit when the budget cannot pay both."""
    from dpsco_core.privacy.events import EpsilonDeltaDpEvent

    X, y = _xy("logistic")
    delta = _delta(len(y))
    small = Budget(1.0, 1.5 * delta, accountant="basic-composition")
    with pytest.raises(PrivacyBudgetError):
        _models()["logistic"](budget=small).fit(X, y)
    assert small.ledger == ()
    budget = Budget(10.0, 1e-3, accountant="basic-composition")
    model = _models()["logistic"](budget=budget).fit(X, y)
    assert model.feature_scales_ is not None
    scales = budget.ledger[0]
    assert isinstance(scales, EpsilonDeltaDpEvent) and scales.delta == delta
    assert budget.spent_delta == pytest.approx(2 * delta)


def test_bounds_of_tiny_positive_width_refused_before_any_charge():
    """bounds (0, 1e-310) on a feature: its released scale was subnormal and the fit
    returned coef_ = inf, intercept_ = -inf (review, session 20); such widths are refused by
    name ("private") or not scaled ("auto"), before anything is charged."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1e-310, 3_000), rng.normal(0, 1, 3_000)])
    y = np.where(X[:, 1] > 0, 1, -1)
    budget = Budget(10.0, 1e-3)
    for width in (1e-310, 1e-200):
        with pytest.raises(ValueError, match="bounds"):
            DPLogisticRegression(classes=(-1, 1), epsilon=1.0, bounds=([0, -5], [width, 5]),
                                 feature_scaling="private", budget=budget).fit(X, y)
    assert budget.ledger == ()
    auto = DPLogisticRegression(classes=(-1, 1), epsilon=1e3, bounds=([0, -5], [1e-310, 5]),
                                random_state=0).fit(X, y)
    assert auto.feature_scales_ is None and np.all(np.isfinite(auto.coef_))
    # widths of 0 (constant) and from 1e-150 are scaled, and the model is finite
    for lower, upper in (([0, -5], [0, 5]), ([0, -5], [1e-150, 5])):
        model = DPLogisticRegression(classes=(-1, 1), epsilon=1.0, bounds=(lower, upper),
                                     feature_scaling="private", random_state=0).fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_).all()
        assert np.all(np.isfinite(model.decision_function(X)))


@pytest.mark.parametrize("feature_scaling", ["private", None])
def test_private_rms_without_label_bound_refused_before_any_charge(feature_scaling):
    """DPLasso(rms_row_norm="private") without label_bound: the rule's refusal (its gradient
    scale needs label_bound) came after the row-norm quantile and, with feature_scaling=
    "private", the scales had been charged (2 releases in the ledger; hypothesis, review of
    session 20): it is now made from public facts before either."""
    X, _, y = _data(200)
    budget = Budget(100.0, 0.5)
    with pytest.raises(ValueError, match="label_bound"):
        DPLasso(alpha=0.1, epsilon=1.0, bounds=(LOWER, UPPER), rms_row_norm="private",
                feature_scaling=feature_scaling, budget=budget, random_state=0).fit(X, y)
    assert budget.ledger == ()


def test_auto_without_scales_explains_bounds_not_containing_zero():
    """bounds (30, 42) are accepted where "auto" scales; where it does not (few records), the
    refusal says why and names feature_scaling='private' (before any charge)."""
    X, y = _xy("logistic", n=300)
    lower = LOWER.copy()
    lower[1] = 30.0
    budget = Budget(10.0, 1e-3)
    with pytest.raises(ValueError, match="feature_scaling='private'") as info:
        DPLogisticRegression(classes=(-1, 1), epsilon=1.0, bounds=(lower, UPPER),
                             budget=budget, random_state=0).fit(X, y)
    assert "noise" in str(info.value) and budget.ledger == ()
