"""Property-based robustness (hypothesis) of private standardization (session 20):
:func:`~dpsco_core.feature_scales.private_feature_scales`,
:class:`~dpsco_core.preprocessing.DPStandardScaler` and the estimators' ``feature_scaling``.

Same contract as ``test_properties_estimators.py`` (``run`` / ``_names_an_argument`` of
``test_extreme_inputs.py``): every call either returns finite output or raises
ValueError/TypeError whose message names one of the caller's arguments (or
PrivacyBudgetError / UnsupportedEventError for a budget); never another exception type, NaN
or inf output, or a mutation of the caller's arrays. Besides:

- a release that returns reports at most its target epsilon, and the report recomputed from
  its event by the accountant (its orders and conversion) is at most the target too;
- with a Budget, a refusal (of any kind) leaves the ledger unchanged: nothing is charged
  before the whole release is known to fit; a success charges exactly the reported events;
- the released centres lie in the bounds, the scales are positive, the standardized records
  lie in [-clip, clip];
- estimators: the scales' event is the first of ``privacy_.event`` and the budget's ledger
  (when the scales were released), ``coef_`` / ``intercept_`` and the predictions on dense
  and sparse records are finite.

Awkward inputs: 1 to 6 records, 1 to 3 features, float32 / Fortran / list / sparse / int /
bool layouts, NaN and extreme finite values, bounds with lower == upper on some features,
tiny or overflowing widths, bounds away from 0, epsilon from 1e-300 to 1e300 and inf, delta
from 1e-300 to 0.99, the three neighbouring relations, budgets too small or ample in the
"rdp" and "basic-composition" modes. Every fit is tiny so that the file runs in well under
30 s under ``CI=true``.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("sklearn")

from dpsco_core.estimators import (FEATURE_SCALING_SHARE, DPElasticNet, DPLasso,  # noqa: E402
                                   DPLogisticRegression)
from dpsco_core.exceptions import PrivacyBudgetError, UnsupportedEventError  # noqa: E402
from dpsco_core.feature_scales import private_feature_scales, scaling_event  # noqa: E402
from dpsco_core.preprocessing import DPStandardScaler  # noqa: E402
from dpsco_core.privacy.accountants import RdpAccountant  # noqa: E402
from dpsco_core.privacy.budget import Budget  # noqa: E402
from dpsco_core.privacy.calibration import _zcdp_rho  # noqa: E402
from dpsco_core.privacy.events import ComposedDpEvent  # noqa: E402

from test_extreme_inputs import _names_an_argument  # noqa: E402
from test_properties_estimators import _call as _checked_call  # noqa: E402
from test_properties_estimators import matrices  # noqa: E402
from test_properties_solvers import _same, _snapshot  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")


def _settings(n):
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


NAN, INF = math.nan, math.inf
VALID_EPSILONS = [1e-300, 1e-8, 1e-3, 0.1, 1.0, 1.0, 4.0, 1e3, 1e6, 1e300]
VALID_DELTAS = [None, 1e-300, 1e-12, 1e-5, 1e-5, 0.1, 0.5, 0.99]
VALID_RELATIONS = ["replace_one", "replace_one", "zero_out"]
VALID_CLIPS = [3.0, 3.0, None, 1e-300, 1e300]


def _maybe_invalid(draw, valid, values, invalid):
    return draw(st.sampled_from(values + ([] if valid else invalid)))

#: What a standalone release may name when it refuses.
RELEASE_ARGS = ["X", "bounds", "epsilon", "delta", "clip", "neighboring_relation",
                "random_state", "budget"]
#: What an estimator may name (test_properties_estimators' ESTIMATOR_ARGS and the scaling).
ESTIMATOR_ARGS = ["X", "y", "classes", "alpha", "l1_ratio", "C", "epsilon", "delta",
                  "fit_intercept", "intercept_scaling", "solver", "passes", "step", "clip",
                  "batch_size", "sampling", "random_state", "bounds", "row_norm",
                  "rms_row_norm", "budget", "n_trials", "selection_share", "label_bound",
                  "feature_scaling"]


VALID_SCALING_BOUNDS = ["unit", "unit", "away", "away", "arrays", "arrays", "constant",
                        "constant", "tiny", "huge"]
INVALID_SCALING_BOUNDS = ["all_constant", "crossed", "nan", "overflow", "wrong_len",
                          "scalar"]


@st.composite
def scaling_bounds(draw, p, valid=False):
    """Public bounds for the scales: scalars or per-feature arrays, with features of width
    0, bounds away from 0 (latitude's (30, 42)), tiny and huge widths; unless ``valid``,
    sometimes invalid (all constant, crossed, NaN, an overflowing width, the wrong length,
    not a pair)."""
    kind = draw(st.sampled_from(VALID_SCALING_BOUNDS +
                                ([] if valid else INVALID_SCALING_BOUNDS)))
    if kind == "constant" and p == 1 and valid:
        kind = "away"                            # a single constant feature is invalid
    lower = -np.arange(1.0, p + 1.0)
    upper = np.arange(1.0, p + 1.0) * 2.0
    if kind == "unit":
        return (-1.0, 1.0)
    if kind == "away":
        return (30.0, 42.0)
    if kind == "arrays":
        return (lower, upper)
    if kind == "constant":                       # lower == upper on one feature
        j = draw(st.integers(0, p - 1))
        lower[j] = upper[j] = draw(st.sampled_from([0.0, 2.5, -1e10]))
        return (lower, upper)
    if kind == "all_constant":
        return (1.0, 1.0)
    if kind == "tiny":
        w = draw(st.sampled_from([1e-310, 1e-200, 1e-150, 1e-100]))
        return (np.zeros(p), np.full(p, w))
    if kind == "huge":
        return (-1e300, 1e300)
    if kind == "crossed":
        return (1.0, -1.0)
    if kind == "nan":
        return (NAN, 1.0)
    if kind == "overflow":
        return (-1.7e308, 1.7e308)
    if kind == "wrong_len":
        return (np.zeros(p + 1), np.ones(p + 1))
    return 5.0


def _budget(draw, target_epsilon):
    """None, or a Budget too small or ample for a release at ``target_epsilon``, in the
    "rdp" or "basic-composition" mode."""
    kind = draw(st.sampled_from([None, None, "small", "half", "ample"]))
    if kind is None:
        return None
    eps = (1e-3 if kind == "small" else 100.0 if kind == "ample" else
           0.5 * target_epsilon if math.isfinite(target_epsilon) and target_epsilon > 0
           else 1.0)
    eps = min(max(eps, 1e-6), 1e6)
    return Budget(eps, 0.5, accountant=draw(st.sampled_from(["rdp", "rdp",
                                                             "basic-composition"])))


def _call(fn, names):
    """The estimators' property files' ``_call`` (other ValueError / TypeError name an
    argument), with a budget's refusal, or an event its accountant cannot charge, returned as
    (None, exc) first (both subclass ValueError / TypeError and name the budget's state)."""
    refused = []

    def guarded():
        try:
            return fn()
        except (PrivacyBudgetError, UnsupportedEventError) as exc:
            refused.append(exc)
            return None

    out, exc = _checked_call(guarded, names)
    if refused:
        event(type(refused[0]).__name__)
        return None, refused[0]
    return out, exc


def _finite(a):
    a = np.asarray(a, dtype=np.float64)
    assert np.all(np.isfinite(a)), a


def _flat(e):
    if isinstance(e, ComposedDpEvent):
        return [x for inner in e.events for x in _flat(inner)]
    return [e]


def _check_report(report, epsilon, delta):
    """The report at most its target, and recomputed from its event by the accountant."""
    assert report.epsilon <= epsilon * (1 + 1e-9), (report.epsilon, epsilon)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = RdpAccountant(report.orders, report.neighboring_relation,
                              conversion=report.conversion).compose(
                                  report.event).get_epsilon(delta)
    assert again <= epsilon * (1 + 1e-9), (again, epsilon)


def _check_scales(fs, p, clip, X):
    lower, upper = fs.lower, fs.upper
    _finite(fs.centre)
    _finite(fs.scale)
    assert fs.centre.shape == fs.scale.shape == (p,)
    assert np.all(fs.scale > 0)
    assert np.all(fs.centre >= lower) and np.all(fs.centre <= upper)
    Z = fs.transform(X)
    _finite(Z)
    if clip is not None:
        assert np.all(np.abs(Z) <= clip)
    # a feature of width 0 is constant: centre lower, scale 1, standardized 0
    const = upper == lower
    assert np.all(fs.scale[const] == 1.0) and np.all(Z[:, const] == 0.0)


# ------------------------------------------------------------------ private_feature_scales

#: What a release on valid arguments may still be refused for: an epsilon whose noise the
#: calibration or the exact sampler's grid cannot reach (naming epsilon), a sparse X.
VALID_REFUSALS = ["epsilon", "X"]


def _draw_release_arguments(data, n, p):
    """(valid, X, bounds, epsilon, delta, clip, relation): mostly valid."""
    valid = n >= 2 and data.draw(st.sampled_from([True, True, True, False]))
    return (valid, data.draw(matrices(n, p, valid)), data.draw(scaling_bounds(p, valid)),
            _maybe_invalid(data.draw, valid, VALID_EPSILONS, [INF, 0.0, -1.0, NAN]),
            _maybe_invalid(data.draw, valid, VALID_DELTAS, [0.0, 1.0, NAN]),
            _maybe_invalid(data.draw, valid, VALID_CLIPS, [0.0, -1.0, INF]),
            _maybe_invalid(data.draw, valid, VALID_RELATIONS, ["add_or_remove_one", "bogus"]))


@_settings(300)
@given(data=st.data(), n=st.sampled_from([1, 2, 2, 3, 5, 6]), p=st.integers(1, 3))
def test_private_feature_scales_contract(data, n, p):
    valid, X, bounds, epsilon, delta, clip, relation = _draw_release_arguments(data, n, p)
    delta = 1e-5 if delta is None else delta
    budget = _budget(data.draw, epsilon)
    before = _snapshot(X) if not isinstance(X, list) else None
    fs, exc = _call(lambda: private_feature_scales(
        X, bounds=bounds, epsilon=epsilon, delta=delta, clip=clip,
        neighboring_relation=relation, random_state=data.draw(st.sampled_from([0, 7, None])),
        budget=budget), RELEASE_ARGS)
    if before is not None:
        _same(X, before)
    if fs is None:
        # refused before anything was charged, whatever the reason
        assert budget is None or budget.ledger == (), (exc, budget.ledger)
        if valid and not isinstance(exc, (PrivacyBudgetError, UnsupportedEventError)):
            assert _names_an_argument(exc, VALID_REFUSALS), f"valid input refused: {exc!r}"
        return
    event("released")
    _check_report(fs.privacy, epsilon, delta)
    if budget is not None:
        # exactly the reported release, within the budget
        if budget.accountant == "rdp":
            assert budget.ledger == (fs.privacy.event,)
        else:
            assert len(budget.ledger) == 1
        assert budget.spent_epsilon <= budget.epsilon * (1 + 1e-10)
    _check_scales(fs, p, clip, np.asarray(X.toarray() if sp.issparse(X) else X,
                                          dtype=np.float64))


# ------------------------------------------------------------------ DPStandardScaler

@_settings(200)
@given(data=st.data(), n=st.sampled_from([1, 2, 2, 3, 5, 6]), p=st.integers(1, 3))
def test_dp_standard_scaler_contract(data, n, p):
    valid, X, bounds, epsilon, delta, clip, relation = _draw_release_arguments(data, n, p)
    if not valid and data.draw(st.integers(0, 5)) == 0:
        bounds = None                                      # required
    budget = _budget(data.draw, epsilon)
    scaler = DPStandardScaler(epsilon=epsilon, delta=delta, bounds=bounds, clip=clip,
                              neighboring_relation=relation, random_state=0, budget=budget)
    before = _snapshot(X) if not isinstance(X, list) else None
    fitted, exc = _call(lambda: scaler.fit(X), RELEASE_ARGS)
    if before is not None:
        _same(X, before)
    if fitted is None:
        assert budget is None or budget.ledger == (), (exc, budget.ledger)
        assert not hasattr(scaler, "privacy_")
        if valid and not isinstance(exc, (PrivacyBudgetError, UnsupportedEventError)):
            assert _names_an_argument(exc, VALID_REFUSALS) or "Sparse data" in str(exc), \
                f"valid input refused: {exc!r}"
        return
    event("fitted")
    delta = 1.0 / n**2 if scaler.delta is None else scaler.delta
    _check_report(fitted.privacy_, epsilon, delta)
    if budget is not None:
        assert budget.spent_epsilon <= budget.epsilon * (1 + 1e-10)
    dense = np.asarray(X, dtype=np.float64)
    _check_scales(fitted._scales, p, clip, dense)
    out, exc = _call(lambda: fitted.transform(X), ["X"])
    _finite(out)
    np.testing.assert_array_equal(out, fitted._scales.transform(dense))
    # the wrong width and a sparse X are refused naming X
    for bad in (np.zeros((2, p + 1)), sp.csr_matrix(np.zeros((2, p)))):
        out, exc = _call(lambda: fitted.transform(bad), ["X"])
        assert out is None


# ------------------------------------------------------------------ estimators

@st.composite
def finite_matrices(draw, n, p):
    """A finite (n, p) X, plain or with extreme finite values, in a dense layout."""
    values = st.one_of(st.floats(-3, 3), st.floats(25, 45),
                       st.sampled_from([0.0, 1.0, -1.0, 1e-300, 1e10, -1e100]))
    X = np.array(draw(st.lists(values, min_size=n * p, max_size=n * p))).reshape(n, p)
    if draw(st.integers(0, 2)) == 0:
        X[:, draw(st.integers(0, p - 1))] = draw(st.sampled_from([0.0, 35.0]))
    layout = draw(st.sampled_from(["C", "C", "F", "float32", "list"]))
    if layout == "F":
        return np.asfortranarray(X)
    if layout == "float32":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return X.astype(np.float32)
    return X.tolist() if layout == "list" else X


def _estimator_bounds(bounds):
    """(-1e300, 1e300) made (-1e100, 1e100) for the estimators: unscaled ("auto" on these
    few records), rms_row_norm's smoothness squares the released row norm, which overflows
    beyond 1e154 (an OverflowError of public_bounds.rms_smoothness older than the scales,
    outside this file's scope; test_properties_estimators' widest bounds are 1e100 too)."""
    if isinstance(bounds, tuple) and all(np.ndim(b) == 0 for b in bounds) and \
            bounds == (-1e300, 1e300):
        return (-1e100, 1e100)
    return bounds


@_settings(200)
@given(data=st.data(), n=st.sampled_from([2, 2, 3, 5, 8]), p=st.integers(1, 3),
       kind=st.sampled_from(["lasso", "enet", "logistic", "logistic", "logistic3"]))
def test_estimators_with_feature_scaling(data, n, p, kind):
    X = data.draw(finite_matrices(n, p))
    epsilon = data.draw(st.sampled_from([1e-300, 1e-6, 0.1, 1.0, 10.0, 10.0, 1e3, 1e3, 1e6,
                                         INF]))
    options = dict(
        epsilon=epsilon, delta=data.draw(st.sampled_from([None, None, 1e-5, 0.3])),
        bounds=_estimator_bounds(data.draw(scaling_bounds(
            p, data.draw(st.sampled_from([True, True, False]))))),
        feature_scaling=data.draw(st.sampled_from(["private", "private", "auto"])),
        solver=data.draw(st.sampled_from(["auto", "auto", "cd", "sgd", "ssp"])),
        passes=1, random_state=data.draw(st.sampled_from([0, 3])),
        fit_intercept=data.draw(st.sampled_from([True] * 7 + [False])),
        rms_row_norm=data.draw(st.sampled_from(["auto", "private", None])),
        n_trials=data.draw(st.sampled_from([1.0, 3.0])))
    if options["solver"] == "sgd":
        options.update(sampling=data.draw(st.sampled_from(["poisson", "shuffle"])),
                       batch_size=data.draw(st.sampled_from(["auto", 2])))
    if data.draw(st.integers(0, 3)) == 0 and options["solver"] != "ssp":
        options.update(step=0.5, clip=1.0)
    budget = _budget(data.draw, epsilon)
    options["budget"] = budget
    if kind.startswith("logistic"):
        classes = (0, 1, 2) if kind == "logistic3" else (-1, 1)
        y = np.array(data.draw(st.lists(st.sampled_from(classes), min_size=n, max_size=n)))
        model = DPLogisticRegression(classes=classes, **options)
    else:
        y = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n)))
        options["label_bound"] = data.draw(st.sampled_from([None, 3.0, (-3.0, 3.0)]))
        model = (DPLasso(alpha=0.1, **options) if kind == "lasso"
                 else DPElasticNet(alpha=0.1, l1_ratio=0.5, **options))
    before = _snapshot(X) if not isinstance(X, list) else None
    fitted, exc = _call(lambda: model.fit(X, y), ESTIMATOR_ARGS)
    if before is not None:
        _same(X, before)
    if fitted is None:
        assert not hasattr(model, "coef_")
        # with the scales, every refusal comes before the first charge (the scales, the
        # quantile and the K fits are checked together)
        if budget is not None and getattr(model, "_scaling_on", False):
            assert budget.ledger == (), (exc, budget.ledger)
        return
    scaled = fitted.feature_scales_ is not None
    event(f"fitted, scaled={scaled}")
    _finite(fitted.coef_)
    _finite(fitted.intercept_)
    report = fitted.privacy_
    delta = 1.0 / n**2 if options["delta"] is None else options["delta"]
    if math.isfinite(epsilon):
        _check_report(report, epsilon, delta)
    if scaled:
        _check_scales(fitted.feature_scales_, p, 3.0, np.asarray(X, dtype=np.float64))
        if math.isfinite(epsilon):
            # the accounted release: FEATURE_SCALING_SHARE of the zCDP rho, composed first
            z = 1.0 / math.sqrt(FEATURE_SCALING_SHARE * _zcdp_rho(epsilon, delta))
            assert report.event.events[0] == scaling_event(z)
            assert report.budget_split["feature scales (share of rho)"] == \
                FEATURE_SCALING_SHARE
            if budget is not None and budget.accountant == "rdp":
                ledger = [e for charged in budget.ledger for e in _flat(charged)]
                assert ledger == _flat(report.event)
    if budget is not None:
        assert budget.spent_epsilon <= budget.epsilon * (1 + 1e-10)
    dense = np.asarray(X, dtype=np.float64)
    for Xp in (dense, sp.csr_matrix(dense), dense * 1e150):
        out, exc = _call(lambda: (fitted.decision_function(Xp) if kind.startswith("logistic")
                                  else fitted.predict(Xp)), ["X"])
        # a scaled model clips every record onto feature_bounds_: always a finite output
        assert out is not None or not scaled, exc
        if out is not None:
            _finite(out)
