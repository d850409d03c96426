"""Property-based robustness (hypothesis) of the estimators, the Budget API and the tuning
entry points: the surfaces ``test_properties_solvers.py`` and ``test_extreme_inputs*.py`` do
not reach.

Same contract as there (``run`` / ``_names_an_argument`` of ``test_extreme_inputs.py``): every
public call either returns finite output or raises ValueError/TypeError whose message names
one of the caller's arguments; never another exception, a hang, NaN/inf output, or a
mutation of the caller's arrays. Besides:

- estimators: a fit that returns has finite ``coef_`` / ``intercept_`` and ``privacy_``
  within its epsilon; on valid inputs (finite data within 1e100, consistent options) a fit
  may be refused only for its budget (naming epsilon or delta, or PrivacyBudgetError) or
  for data at the float range's edge (naming X); predictions on awkward inputs (wrong width,
  NaN, far outside the bounds, sparse, lists) are finite or refused naming ``X``; a fit
  refused by its budget leaves the estimator unfitted and (but for one-vs-rest, whose first
  fit stays charged) the budget's ledger unchanged;
- Budget: after any sequence of charges (``spend``, ``charge``, a mechanism or a solver with
  ``budget=``) the spent budget never exceeds the total, a refused charge leaves the ledger
  unchanged, ``check`` / ``check_releases`` charge nothing and agree with the charges that
  follow them;
- ``tune_solver`` / ``trial_epsilon``: awkward but valid arguments (tiny epsilon and n,
  extreme bounds) give a finite model within epsilon, or an error naming an argument.

Every fit is tiny (n <= 6, p <= 3, passes <= 2) so that the file runs in well under a minute.
"""

import math
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("sklearn")

from dpsco_core import Problem, mechanisms, solvers  # noqa: E402
from dpsco_core.estimators import DPElasticNet, DPLasso, DPLogisticRegression  # noqa: E402
from dpsco_core.exceptions import PrivacyBudgetError, UnsupportedEventError  # noqa: E402
from dpsco_core.penalties import L1, L2  # noqa: E402
from dpsco_core.privacy import budget as budget_module  # noqa: E402
from dpsco_core.privacy.budget import Budget, spend  # noqa: E402
from dpsco_core.privacy.events import (ComposedDpEvent, EpsilonDeltaDpEvent,  # noqa: E402
                                       GaussianDpEvent, LaplaceDpEvent, NoOpDpEvent,
                                       NonPrivateDpEvent, PoissonSampledDpEvent,
                                       SelfComposedDpEvent, ZCDpEvent)
from dpsco_core.tuning.search import tune_solver, trial_epsilon  # noqa: E402

from test_extreme_inputs import _names_an_argument  # noqa: E402
from test_properties_solvers import _same, _snapshot  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")

FIT_SETTINGS = settings(max_examples=500, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow,
                                               HealthCheck.filter_too_much])
BUDGET_SETTINGS = settings(max_examples=400, deadline=None,
                           suppress_health_check=[HealthCheck.too_slow])
TUNING_SETTINGS = settings(max_examples=200, deadline=None,
                           suppress_health_check=[HealthCheck.too_slow])

#: The estimators' constructor and fit arguments: what an estimator error may name.
ESTIMATOR_ARGS = ["X", "y", "classes", "sample_weight", "alpha", "l1_ratio", "C", "epsilon",
                  "delta", "fit_intercept", "intercept_scaling", "solver", "passes", "step",
                  "clip", "batch_size", "sampling", "average", "random_state", "bounds",
                  "row_norm", "rms_row_norm", "diagnostics", "budget", "n_trials",
                  "selection_share", "label_bound"]

NAN, INF = math.nan, math.inf
MAXF = float(np.finfo(np.float64).max)
FINITE_ODD = [0.0, -0.0, 1.0, -1.0, 5e-324, 1e-300, -1e-150, 1e100, -1e150, 1e300, -1e300,
              MAXF]
VALUES = st.one_of(st.floats(-3, 3), st.floats(-3, 3), st.sampled_from(FINITE_ODD))
POISON = st.sampled_from([NAN, INF, -INF])


#: scikit-learn's own input checks (``validate_data``), which the estimators keep as they
#: are (scikit-learn's conventions; ``check_estimator`` matches some of them): they name no
#: argument, but each is about the one array a prediction takes, or about X in ``fit``.
SKLEARN_MESSAGES = re.compile(r"^(Expected 2D array, got 1D array instead"
                              r"|Found array with 0 (sample|feature)\(s\))")


def _call(fn, names):
    """fn() -> (output, None), or (None, exc) after checking the contract on ``exc``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (ValueError, TypeError) as exc:
        event(f"{type(exc).__name__}: {str(exc)[:50]}")
        assert _names_an_argument(exc, names) or SKLEARN_MESSAGES.match(str(exc)), \
            f"{type(exc).__name__} names none of {names}: {exc}"
        return None, exc


def _finite(a):
    a = np.asarray(a, dtype=np.float64)
    assert np.all(np.isfinite(a)), a


# ------------------------------------------------------------------ data strategies

#: Finite values an estimator must accept (|x| <= 1e100: Problem refuses beyond 1e150).
VALID_VALUES = st.one_of(st.floats(-3, 3), st.floats(-3, 3),
                         st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, 1e-300, -1e-150, 1e100]))


@st.composite
def matrices(draw, n, p, valid=False):
    """An (n, p) X in an awkward layout: plain values, extreme finite ones, or a NaN / inf
    (``valid``: plain or extreme values an estimator must accept)."""
    mode = draw(st.sampled_from(["plain"] * 4 + ["odd"] * 3 + ([] if valid else ["poison"])))
    elements = st.floats(-3, 3) if mode == "plain" else (VALID_VALUES if valid else VALUES)
    X = np.array(draw(st.lists(elements, min_size=n * p, max_size=n * p)),
                 dtype=np.float64).reshape(n, p)
    if mode == "poison":
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = draw(POISON)
    if draw(st.integers(0, 2)) == 0:                       # a constant column
        X[:, draw(st.integers(0, p - 1))] = draw(st.sampled_from(
            [0.0, 1.0, -2.5] + ([] if valid else [1e120])))
    layouts = ["C", "C", "F", "int", "bool", "csr", "csc", "list", "readonly", "strided"]
    layout = draw(st.sampled_from(layouts + (["float32"] if mode == "plain" or not valid
                                             else [])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if layout == "F":
            return np.asfortranarray(X)
        if layout == "float32":
            return X.astype(np.float32)
        if layout == "int":
            return np.nan_to_num(np.clip(X, -100, 100)).round().astype(np.int64)
        if layout == "bool":
            return X > 0
        if layout in ("csr", "csc"):
            return getattr(sp, f"{layout}_matrix")(X)
        if layout == "list":
            return X.tolist()
        if layout == "readonly":
            X.flags.writeable = False
            return X
        if layout == "strided":
            return np.repeat(X, 2, axis=0)[::2]
    return X


@st.composite
def targets(draw, n, valid=False):
    """Regression targets: plain, extreme finite or with a NaN / inf; constant sometimes;
    an array, a list or float32 (``valid``: values an estimator must accept)."""
    mode = draw(st.sampled_from(["plain"] * 6 + ["odd"] * 2 + ([] if valid else ["poison"])))
    odd = VALID_VALUES if valid else VALUES
    y = np.array(draw(st.lists(st.floats(-3, 3) if mode == "plain" else odd,
                               min_size=n, max_size=n)))
    if mode == "poison":
        y[-1] = draw(POISON)
    if draw(st.integers(0, 3)) == 0:
        y[:] = y[0]                                        # constant labels
    container = draw(st.sampled_from(["array"] * 4 + ["list"] + (
        ["float32"] if mode == "plain" or not valid else [])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return y.tolist() if container == "list" else (
            y.astype(np.float32) if container == "float32" else y)


def _dense(X):
    if sp.issparse(X):
        return X.toarray().astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(X, dtype=np.float64)


#: Public bounds: valid ones (symmetric, one-sided, wide, tiny, per feature), invalid ones.
VALID_BOUNDS = ["none"] * 2 + ["unit"] * 3 + ["pos"] * 2 + ["wide", "tiny"] + ["arrays"] * 2
INVALID_BOUNDS = ["wrong_len", "reversed", "nan"]


def _bounds(kind, p):
    return {"none": None, "unit": (-1.0, 1.0), "pos": (0.0, 5.0), "wide": (-1e100, 1e100),
            "tiny": (-1e-100, 1e-100),
            "arrays": (-np.arange(1.0, p + 1.0), np.arange(1.0, p + 1.0) * 2.0),
            "wrong_len": (np.zeros(p + 1), np.ones(p + 1)), "reversed": (1.0, -1.0),
            "nan": (NAN, 1.0)}[kind]


@st.composite
def estimator_options(draw, p, valid=False, classifier=False):
    """Constructor arguments: awkward, sometimes invalid; ``valid``: a consistent set (the
    public bounds every option asks for are given)."""
    options = dict(
        epsilon=draw(st.sampled_from([1e-6, 1e-3, 0.1, 0.1, 1.0, 1.0, 1.0, 10.0, 10.0, INF])),
        # None: 1 / n^2, large for these few records (one-vs-rest then refuses small epsilons)
        delta=draw(st.sampled_from([None, None, 1e-5])),
        solver=draw(st.sampled_from(["auto", "auto", "cd", "sgd", "ssp"])),
        passes=draw(st.sampled_from([1, 2])),
        fit_intercept=draw(st.sampled_from([True, True, True, False])),
        bounds=_bounds(draw(st.sampled_from(VALID_BOUNDS + ([] if valid else INVALID_BOUNDS))),
                       p),
        row_norm=draw(st.sampled_from([None, None, None, 1.0, 3.0, 1e-100])),
        rms_row_norm=draw(st.sampled_from(["auto", "auto", None, 1.0, "private"])),
        # session 20: the private feature scales ("auto" rarely scales on these few records)
        feature_scaling=draw(st.sampled_from(["auto", "auto", None, "private"])),
        random_state=0,
    )
    if not classifier:
        label_bounds = [None, None, 1.0, 1.0, 1e-100, 1e100]
        if options["fit_intercept"] or not valid:
            label_bounds += [(0.0, 5.0), (0.0, 5.0), (-1e100, 1e100)]
        options["label_bound"] = draw(st.sampled_from(label_bounds + ([] if valid
                                                                      else [(2.0, 1.0)])))
    hyper = draw(st.sampled_from(["none", "none", "both", "step", "clip"]))
    if hyper in ("both", "step") and options["solver"] != "ssp":
        options["step"] = draw(st.sampled_from([0.1, 1.0]))
    if hyper in ("both", "clip"):
        options["clip"] = draw(st.sampled_from([0.5, 1.0, 1e3]))
    if options["solver"] == "sgd":
        options["batch_size"] = draw(st.sampled_from(["auto", 1, 2]))
        options["sampling"] = draw(st.sampled_from(["poisson", "shuffle"]))
    if draw(st.integers(0, 3)):
        # short selections (the default E[K] = 80 takes half a second on these records)
        options["n_trials"] = draw(st.sampled_from([1.0, 3.0]))
    if valid:
        if options["feature_scaling"] == "private" and (
                options["bounds"] is None or options["row_norm"] is not None
                or not options["fit_intercept"]):
            options["feature_scaling"] = "auto"      # its requirements, unmet: refused
        public = options["bounds"] is not None or options["row_norm"] is not None
        if not public:       # the options that need public bounds, without them
            options.update(solver=options["solver"].replace("ssp", "cd"), rms_row_norm=draw(
                st.sampled_from(["auto", None])))
            options.pop("label_bound", None)
        if not classifier and options.get("label_bound") is None:
            if options["solver"] == "ssp":
                options["solver"] = "cd"
            if options["rms_row_norm"] not in ("auto", None):
                options["rms_row_norm"] = "auto"
    return options


# ------------------------------------------------------------------ estimators

def _predict_inputs(draw, X, p):
    """Inputs for the fitted model's prediction methods, with whether each is valid."""
    base = np.asarray(draw(st.lists(st.floats(-3, 3), min_size=2 * p, max_size=2 * p)))
    base = base.reshape(2, p)
    kind = draw(st.sampled_from(["train", "ok", "wide", "narrow", "nan", "inf", "far", "huge",
                                 "csr", "list", "float32", "empty", "1d"]))
    if kind == "train":
        return X, kind
    if kind == "wide":
        return np.hstack([base, base[:, :1]]), kind
    if kind == "narrow":
        return base[:, :p - 1], kind
    if kind == "nan":
        base[0, 0] = NAN
    elif kind == "inf":
        base[-1, -1] = -INF
    elif kind == "far":
        base *= 1e150
    elif kind == "huge":
        base[:, 0] = MAXF
    elif kind == "csr":
        return sp.csr_matrix(base), kind
    elif kind == "list":
        return base.tolist(), kind
    elif kind == "float32":
        return base.astype(np.float32), kind
    elif kind == "empty":
        return np.empty((0, p)), kind
    elif kind == "1d":
        return base[0], kind
    return base, kind


def _check_fitted_model(model, data, X, classifier):
    p = model.n_features_in_
    Xp, kind = _predict_inputs(data.draw, X, p)
    before = _snapshot(Xp) if not isinstance(Xp, list) else None
    methods = (["decision_function", "predict_proba", "predict"] if classifier
               else ["predict"])
    for method in methods:
        out, exc = _call(lambda: getattr(model, method)(Xp), ["X"])
        if before is not None:
            _same(Xp, before)
        if out is None:
            # a finite input of the right width must be accepted, but for a model without
            # public bounds (which would clip X) whose outputs overflow (|x| near 1e308)
            unbounded = model.bounds is None and model.row_norm is None
            assert kind in ("wide", "narrow", "nan", "inf", "empty", "1d") or (
                kind == "train" and not np.all(np.isfinite(_dense(X)))) or (
                unbounded and "overflow float64" in str(exc)), (kind, exc)
            return
        n_rows = np.shape(_dense(Xp))[0]
        if method == "predict" and classifier:
            assert np.all(np.isin(out, model.classes_))
            assert len(out) == n_rows
            continue
        _finite(out)
        assert np.shape(out)[0] == n_rows
        if method == "predict_proba":
            assert np.all(out >= 0) and np.all(out <= 1)
            np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-12)
    # score on finite inputs of the right width
    if kind in ("ok", "far", "huge", "csr", "list", "float32"):
        n_rows = np.shape(_dense(Xp))[0]
        if classifier:
            labels = model.classes_[np.arange(n_rows) % len(model.classes_)]
        else:
            labels = np.linspace(-1.0, 1.0, n_rows)
        out, _ = _call(lambda: model.score(Xp, labels), ["X", "y"])
        assert out is not None, kind
        if out == -math.inf and not classifier:
            # R^2 below -1.8e308: predictions beyond 1e154 (their squared residuals overflow)
            assert np.max(np.abs(model.predict(Xp))) > 1e150, out
        else:
            assert math.isfinite(out), out


#: What a fit on valid inputs may still be refused for: a budget too small for these few
#: records (epsilon, delta), data at the edge of the float range (X: a column near 0 makes
#: DP-CD's step / M_j overflow), or the budget= (PrivacyBudgetError).
VALID_REFUSALS = ["epsilon", "delta", "X"]


def _fit_and_check(model, X, y, options, data, classifier, valid=False):
    X_before = _snapshot(X) if not isinstance(X, list) else None
    y_before = _snapshot(np.asarray(y)) if isinstance(y, np.ndarray) else None
    budget = data.draw(st.sampled_from([None, None, "small", "ample"]))
    if budget is not None:
        budget = Budget(epsilon=1e-3 if budget == "small" else 100.0, delta=0.5,
                        accountant=data.draw(st.sampled_from(["rdp", "basic-composition"])))
        model.set_params(budget=budget)
    charged_before = 0 if budget is None else len(budget.ledger)
    fitted, exc = _call(lambda: model.fit(X, y), ESTIMATOR_ARGS)
    if X_before is not None:
        _same(X, X_before)
    if y_before is not None:
        _same(y, y_before)
    if fitted is None:
        if budget is not None and isinstance(exc, PrivacyBudgetError):
            assert not hasattr(model, "coef_")
            # refused before any charge, but for one-vs-rest, whose first fit stays charged
            # when the budget cannot pay for the others (the estimators' Notes)
            assert len(budget.ledger) == charged_before or (
                classifier and np.ndim(model.classes) == 1 and len(model.classes) > 2)
        elif valid:
            assert _names_an_argument(exc, VALID_REFUSALS), f"valid input refused: {exc!r}"
        return
    event("fitted")
    if budget is not None:
        assert budget.spent_epsilon <= budget.epsilon * (1 + 1e-10)
    _finite(fitted.coef_)
    _finite(fitted.intercept_)
    eps = float(options["epsilon"])
    if math.isfinite(eps):
        assert fitted.privacy_.epsilon <= eps * (1 + 1e-9), (fitted.privacy_.epsilon, eps)
    assert fitted.solver_ in ("cd", "sgd", "ssp")
    _check_fitted_model(fitted, data, X, classifier)


@FIT_SETTINGS
@given(data=st.data(), n=st.sampled_from([1, 2, 2, 3, 5, 6]), p=st.integers(1, 3),
       kind=st.sampled_from(["lasso", "enet"]))
def test_regressors_on_awkward_inputs(data, n, p, kind):
    valid = n >= 2 and data.draw(st.sampled_from([True, True, False]))
    X = data.draw(matrices(n, p, valid))
    y = data.draw(targets(n, valid))
    options = data.draw(estimator_options(p, valid))
    if kind == "lasso":
        model = DPLasso(alpha=data.draw(st.sampled_from([0.0, 0.1, 1e3])), **options)
    else:
        model = DPElasticNet(alpha=0.1, l1_ratio=data.draw(st.sampled_from([0.0, 0.5, 1.0])),
                             **options)
    _fit_and_check(model, X, y, options, data, classifier=False, valid=valid)


CLASSES = st.sampled_from([None, None, None, (0, 1), (0, 1), (-1, 1), ("neg", "pos"),
                           (0, 1, 2), (0, 1, 2), (1, 2, 3, 4), (0, 0), (5,), 3])


@FIT_SETTINGS
@given(data=st.data(), n=st.sampled_from([1, 2, 2, 3, 5, 6]), p=st.integers(1, 3),
       classes=CLASSES)
def test_classifier_on_awkward_inputs(data, n, p, classes):
    valid = (n >= 2 and classes not in ((0, 0), (5,), 3) and
             data.draw(st.sampled_from([True, True, False])))
    X = data.draw(matrices(n, p, valid))
    labels = ([0, 1, -1] if classes is None else
              list(classes) if isinstance(classes, tuple) else [0, 1])
    pool = labels + ([] if valid else data.draw(st.sampled_from(
        [[]] * 6 + [[7], ["other"], [0.5], [NAN]])))
    y = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
                 dtype=object)
    if data.draw(st.integers(0, 3)) == 0:
        y[:] = y[0]                                        # a single class
    try:
        y = np.array(y.tolist())                           # the natural dtype
    except (TypeError, ValueError):
        pass
    options = data.draw(estimator_options(p, valid, classifier=True))
    model = DPLogisticRegression(C=data.draw(st.sampled_from([1.0, 1e-3, INF])),
                                 classes=classes, **options)
    _fit_and_check(model, X, y, options, data, classifier=True, valid=valid)


# ------------------------------------------------------------------ Budget

MULTIPLIERS = st.sampled_from([0.0, 1e-300, 1e-3, 0.5, 1.0, 5.0, 100.0, 1e150, 1e300, INF,
                               NAN, -1.0])
EPSILONS = st.sampled_from([0.0, 1e-300, 1e-6, 0.01, 0.3, 1.0, 5.0, 1e300, INF, NAN, -1.0])
DELTAS = st.sampled_from([None, 0.0, 1e-300, 1e-9, 1e-5, 0.5, 1.0, NAN, -1e-5])
RELATIONS = st.sampled_from([None, "replace_one", "zero_out", "add_or_remove_one",
                             "replace_one", "zero_out", "bogus"])


def _events(depth=2):
    leaves = st.one_of(
        st.tuples(st.just(GaussianDpEvent), MULTIPLIERS),
        st.tuples(st.just(LaplaceDpEvent), MULTIPLIERS),
        st.tuples(st.just(EpsilonDeltaDpEvent), EPSILONS,
                  st.sampled_from([0.0, 0.0, 1e-9, 1e-6, 0.5, NAN, -1.0, 2.0])),
        st.tuples(st.just(ZCDpEvent), EPSILONS),
        st.tuples(st.just(NoOpDpEvent)),
        st.tuples(st.just(NonPrivateDpEvent)),
        st.tuples(st.just("not an event")),
    )
    if depth == 0:
        return leaves
    inner = _events(depth - 1)
    return st.one_of(
        leaves, leaves,
        st.tuples(st.just(PoissonSampledDpEvent),
                  st.sampled_from([0.0, 1e-6, 0.01, 0.5, 1.0, 1.5, NAN]), inner),
        st.tuples(st.just(SelfComposedDpEvent), inner,
                  st.sampled_from([0, 1, 3, 1000, 10**9, -1])),
        st.tuples(st.just(ComposedDpEvent), st.lists(inner, max_size=3).map(tuple)))


def _build(spec):
    """An event from a nested (class, args...) spec; plain values pass through."""
    if not isinstance(spec, tuple) or not spec:
        return spec
    cls, *args = spec
    if cls == "not an event":
        return "not an event"
    if cls is ComposedDpEvent:
        return ComposedDpEvent(tuple(_build(a) for a in spec[1]))
    return cls(*[_build(a) for a in args])


BUDGET_ARGS = ["event", "neighboring_relation", "delta", "releases", "epsilon", "budget",
               "noise_multiplier", "sampling_probability", "count", "rho", "x", "values",
               "sensitivity", "accountant", "orders", "conversion"] + ESTIMATOR_ARGS


def _ledger(budget):
    return budget.ledger, budget.neighboring_relation


def _same_ledger(budget, before):
    events, relation = _ledger(budget)
    assert len(events) == len(before[0]) and all(a is b for a, b in zip(events, before[0]))
    assert relation is before[1]


OPERATIONS = st.sampled_from(["spend", "spend", "charge", "check", "check_releases",
                              "gaussian", "laplace", "noisy_max", "quantile", "dp_cd", "dp_sgd",
                              "estimator"])
SMALL_X = np.array([[1.0, 0.5], [-0.5, 1.0], [0.25, -1.0]])
SMALL_Y = np.array([1.0, -1.0, 0.5])


def _operation(data, budget):
    """One operation on ``budget``: ``(name, call)``; for ``"check_releases"`` the call is
    ``(releases, relation)``."""
    op = data.draw(OPERATIONS)
    relation = data.draw(RELATIONS)
    delta = data.draw(DELTAS)
    if op in ("spend", "charge", "check"):
        ev = _build(data.draw(_events()))
        if op == "spend":
            return op, lambda: spend(budget, ev, neighboring_relation=relation, delta=delta)
        return op, lambda: getattr(budget, op)(ev, neighboring_relation=relation, delta=delta)
    if op == "check_releases":
        releases = [(_build(data.draw(_events(1))), data.draw(DELTAS))
                    for _ in range(data.draw(st.integers(0, 3)))]
        return op, (releases, relation)
    eps = data.draw(EPSILONS)
    x = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=1, max_size=3)))
    if op == "gaussian":
        return op, lambda: mechanisms.gaussian_mechanism(
            x, sensitivity=1.0, epsilon=eps, delta=1e-6 if delta is None else delta,
            random_state=0, budget=budget, neighboring_relation=relation)
    if op == "laplace":
        return op, lambda: mechanisms.laplace_mechanism(
            x, sensitivity=1.0, epsilon=eps, random_state=0, budget=budget,
            neighboring_relation=relation)
    if op == "noisy_max":
        return op, lambda: mechanisms.report_noisy_max(
            x, sensitivity=1.0, epsilon=eps, random_state=0, budget=budget,
            neighboring_relation=relation)
    if op == "quantile":
        return op, lambda: mechanisms.grid_quantile(
            np.abs(x), np.array([0.5, 1.0, 2.0, 4.0]), q=0.5, n_public=x.size, epsilon=eps,
            random_state=0, budget=budget, neighboring_relation=relation)
    d = 1e-6 if delta is None else delta
    if op == "estimator":
        model = DPLasso(alpha=0.1, epsilon=eps, delta=d, bounds=(-1.0, 1.0), label_bound=1.0,
                        passes=1, random_state=0, budget=budget,
                        solver=data.draw(st.sampled_from(["auto", "cd", "sgd", "ssp"])),
                        rms_row_norm=data.draw(st.sampled_from(["auto", None])),
                        n_trials=2.0)
        return op, lambda: model.fit(SMALL_X, SMALL_Y)
    problem = Problem(SMALL_X, SMALL_Y, penalty=L1(0.1), bounds=(-1.0, 1.0), label_bound=1.0)
    if op == "dp_sgd":
        return op, lambda: solvers.dp_sgd(
            problem, epsilon=eps, delta=d, passes=1, batch_size=1, step=0.1, clip=1.0,
            sampling=data.draw(st.sampled_from(["poisson", "shuffle"])), random_state=0,
            record_history=False, budget=budget, neighboring_relation=relation)
    return op, lambda: solvers.dp_cd(
        problem, epsilon=eps, delta=d, passes=1, step=1.0, clip=1.0, random_state=0,
        record_history=False, budget=budget, neighboring_relation=relation or "replace_one")


@pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.OrderGridWarning")
@BUDGET_SETTINGS
@given(data=st.data(), epsilon=st.sampled_from([1e-300, 1e-3, 0.5, 1.0, 10.0, 1e300]),
       delta=st.sampled_from([0.0, 1e-300, 1e-9, 1e-5, 0.1]),
       accountant=st.sampled_from(["rdp", "rdp", "gdp", "basic-composition", "pld"]),
       relation=st.sampled_from([None, "replace_one", "zero_out"]))
def test_budget_charge_sequences(data, epsilon, delta, accountant, relation):
    made, _ = _call(lambda: Budget(epsilon, delta, accountant=accountant,
                                   neighboring_relation=relation),
                    ["epsilon", "delta", "accountant", "neighboring_relation"])
    if made is None:      # delta = 0 is a budget of pure releases, basic composition only
        assert delta == 0.0 and accountant != "basic-composition", (epsilon, delta, accountant)
        return
    budget = made
    tolerance = 1.0 + budget_module.ROUNDING_TOLERANCE
    for _ in range(data.draw(st.integers(1, 6))):
        op, call = _operation(data, budget)
        before = _ledger(budget)
        spent_before = budget.spent_epsilon
        if op == "check_releases":
            releases, rel = call
            value, exc = _call_budget(lambda: budget.check_releases(
                releases, neighboring_relation=rel))
            _same_ledger(budget, before)
            if value is not None and data.draw(st.booleans()):
                # the releases checked together are charged one by one: each must fit, and
                # the total must be what check_releases said
                for ev, d in releases:
                    budget.charge(ev, neighboring_relation=rel, delta=d)
                assert budget.spent_epsilon == pytest.approx(value, rel=1e-9, abs=1e-300)
        else:
            value, exc = _call_budget(call)
            if exc is not None or op == "check":
                _same_ledger(budget, before)
                assert budget.spent_epsilon == spent_before
            if op == "charge" and value is not None:
                assert value == budget.spent_epsilon
        spent = budget.spent_epsilon
        assert 0.0 <= spent <= budget.epsilon * tolerance, (spent, budget.epsilon)
        assert 0.0 <= budget.spent_delta <= budget.delta * tolerance
        assert budget.remaining_epsilon >= -budget.epsilon * budget_module.ROUNDING_TOLERANCE


def _call_budget(fn):
    """As ``_call``; a refusal by the budget (PrivacyBudgetError, UnsupportedEventError) may
    name nothing (it names the budget's state)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (PrivacyBudgetError, UnsupportedEventError) as exc:
        event(f"refused: {type(exc).__name__}")
        return None, exc
    except (ValueError, TypeError) as exc:
        event(f"{type(exc).__name__}: {str(exc)[:50]}")
        assert _names_an_argument(exc, BUDGET_ARGS), \
            f"{type(exc).__name__} names none of {BUDGET_ARGS}: {exc}"
        return None, exc


# ------------------------------------------------------------------ tuning

TUNING_ARGS = ["problem", "epsilon", "delta", "solver", "passes", "candidates", "mean",
               "shape", "validation_fraction", "loss_clip", "score_share", "refit",
               "selection_share", "neighboring_relation", "public_n", "batch_size", "average",
               "sampling", "random_state", "budget", "conditions", "rms_row_norm",
               "label_bound", "n_samples", "n_train", "target_epsilon", "target_delta", "relation",
               "n_features"]


@st.composite
def tuning_problems(draw):
    n, p = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.floats(-3, 3), min_size=n * p, max_size=n * p))).reshape(n, p)
    loss = draw(st.sampled_from(["squared", "logistic"]))
    if loss == "logistic":
        y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    else:
        y = np.array(draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n)))
    B = draw(st.sampled_from([1e-100, 1e-3, 1.0, 1e3, 1e100]))
    Y = None if loss == "logistic" else draw(st.sampled_from([1e-100, 1.0, 1e100]))
    bounds = draw(st.sampled_from([(-B, B), (0.0, B), None]))
    row_norm = draw(st.sampled_from([None, B]))
    if bounds is None and row_norm is None:
        bounds = (-B, B)
    penalty = draw(st.sampled_from([None, L1(0.1), L2(1.0)]))
    return Problem(X, y, loss=loss, penalty=penalty, bounds=bounds, row_norm=row_norm,
                   label_bound=Y)


@TUNING_SETTINGS
@given(problem=tuning_problems(), data=st.data(),
       epsilon=st.sampled_from([1e-4, 1e-2, 1.0, 10.0]),
       delta=st.sampled_from([1e-9, 1e-5, 0.1]), solver=st.sampled_from(["cd", "sgd"]))
def test_tune_solver_awkward_arguments(problem, data, epsilon, delta, solver):
    kwargs = dict(
        passes=data.draw(st.sampled_from([1.0, 2.0])),
        mean=data.draw(st.sampled_from([1.0, 2.0, 5.0])),
        shape=data.draw(st.sampled_from([0.0, 1.0, 2.0, INF])),
        validation_fraction=data.draw(st.sampled_from([0.0, 0.0, 0.2, 0.5])),
        refit=data.draw(st.booleans()),
        batch_size=data.draw(st.sampled_from([1, 2, 256])),
        sampling=data.draw(st.sampled_from(["poisson", "shuffle"])),
        rms_row_norm=data.draw(st.sampled_from([None, None, 1.0, 1e-100])),
        loss_clip=data.draw(st.sampled_from([None, None, 1e-300, 1e300])),
        random_state=0)
    budget = data.draw(st.sampled_from([None, Budget(epsilon, max(delta, 1e-3))]))
    X_before, y_before = _snapshot(problem.X), _snapshot(problem.y)
    res, exc = _call(lambda: tune_solver(problem, epsilon=epsilon, delta=delta, solver=solver,
                                         budget=budget, **kwargs), TUNING_ARGS)
    _same(problem.X, X_before)
    _same(problem.y, y_before)
    if budget is not None:
        assert budget.spent_epsilon <= epsilon * (1 + 1e-10)
    if res is None:
        return
    event("tuned")
    _finite(res.coef)
    assert res.coef.shape == (problem.n_features,)
    assert res.privacy.epsilon <= epsilon * (1 + 1e-9)
    assert 0 < res.trial_epsilon <= epsilon
    assert math.isfinite(res.candidate.step) and math.isfinite(res.candidate.clip)


@TUNING_SETTINGS
@given(target_epsilon=st.sampled_from([1e-6, 1e-3, 0.1, 1.0, 100.0]),
       target_delta=st.sampled_from([1e-12, 1e-6, 0.1]), solver=st.sampled_from(["cd", "sgd"]),
       n_train=st.sampled_from([1, 2, 5, 10**6]), n_features=st.sampled_from([1, 3, 1000]),
       passes=st.sampled_from([0.5, 1.0, 3.0]), mean=st.sampled_from([1.0, 3.0, 80.0]),
       shape=st.sampled_from([0.0, 1.0, 2.0, INF]),
       relation=st.sampled_from(["replace_one", "zero_out", "add_or_remove_one"]),
       batch_size=st.sampled_from([1, 256]), sampling=st.sampled_from(["poisson", "shuffle"]),
       score_share=st.sampled_from([1e-3, 0.3, 0.99]))
def test_trial_epsilon_awkward_arguments(target_epsilon, target_delta, solver, n_train,
                                         n_features, passes, mean, shape, relation,
                                         batch_size, sampling, score_share):
    from dpsco_core.privacy.accountants import RdpAccountant
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent, check_relation

    rel = check_relation(relation)
    out, exc = _call(lambda: trial_epsilon(
        target_epsilon=target_epsilon, target_delta=target_delta, solver=solver,
        n_train=n_train, n_features=n_features, passes=passes, mean=mean, shape=shape,
        relation=rel, batch_size=batch_size, score_share=score_share, sampling=sampling),
        TUNING_ARGS)
    if out is None:
        return
    e, trial = out
    assert 0 < e <= target_epsilon
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spent = RdpAccountant(None, rel).compose(
            RepeatAndSelectDpEvent(trial, mean, shape)).get_epsilon(target_delta)
    assert spent <= target_epsilon * (1 + 1e-9)
