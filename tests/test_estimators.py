"""scikit-learn estimators: conventions, privacy report, and scikit-learn's estimator checks."""

import math
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import Lasso, LogisticRegression  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

import dpsco_core as dp  # noqa: E402
from dpsco_core.estimators import DPElasticNet, DPLasso, DPLogisticRegression  # noqa: E402

# These estimators are fitted without public bounds (the constants come from the data): the
# PrivacyLeakWarning is expected.
pytestmark = pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.PrivacyLeakWarning")

# The only scikit-learn check that a private regressor fails at the default epsilon = 1: the
# check's small training set (n ~ 200) gets noise of the order of the signal, so the training
# R^2 stays below the check's threshold. At epsilon = 10 every applicable check passes.
NOISY_REGRESSOR = {"check_regressors_train": "DP noise at epsilon=1 on ~200 samples keeps the "
                                             "training R^2 below the check's threshold"}
# The classifier passes check_classifiers_train at epsilon = 1 since its selection scores
# trials on the training records (E[K] = 40, 80 since session 9; issue 19; before, trials on
# 80% of the check's ~150 samples scored on the other 20% could end below the check's 0.83
# training accuracy).
# Sample weights other than None / all ones are refused (they would scale the sensitivity the
# solvers calibrate to; see DPLasso.fit): these checks fit with other weights.
_WEIGHTS = ("sample_weight other than None or all ones is refused: weights up to w_max would "
            "multiply every release's sensitivity by w_max")
WEIGHTS = {name: _WEIGHTS for name in [
    "check_sample_weights_list", "check_sample_weights_not_overwritten",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_all_zero_sample_weights_error", "check_classifiers_one_label_sample_weights"]}
# The classes of DPLogisticRegression are public (issue 15, section 2): these checks fit labels
# outside the default convention ({1, 2}, strings, three classes) or expect a one-class fit to
# predict that class, which needs the label set read from the private data.
_OUTSIDE = "labels outside the public classes (default: 1 positive, 0 or -1 negative) are refused"
PUBLIC_CLASSES = {
    "check_estimators_dtypes": _OUTSIDE,
    "check_classifier_data_not_an_array": _OUTSIDE,
    "check_classifiers_classes": _OUTSIDE,
    "check_fit2d_1feature": _OUTSIDE,
    "check_sample_weights_not_an_array": _OUTSIDE,
    "check_sample_weights_shape": _OUTSIDE,
    # run only where pandas is installed (session 16: the suite failed there)
    "check_sample_weights_pandas_series": _OUTSIDE,
    "check_classifiers_one_label": "the classes are public, so a one-class fit still predicts "
                                   "either class (learning that one class is absent reads y); "
                                   "with fit_intercept=True the private intercept often does",
    **WEIGHTS,
}
# One-vs-rest with the public classes [0, 1, 2, 3]: the checks' binary data still get a
# K = 4 model (K comes from the arguments, never from y).
_K_PUBLIC = "K = 4 public classes: decision_function has 4 columns on the checks' binary data"
MULTICLASS = {
    "check_classifiers_classes": "string labels outside the public classes [0, 1, 2, 3]",
    "check_classifiers_train": _K_PUBLIC,
    "check_decision_proba_consistency": _K_PUBLIC,
    "check_classifiers_one_label": PUBLIC_CLASSES["check_classifiers_one_label"],
    **WEIGHTS,
}


@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no-intercept"])
@pytest.mark.parametrize("estimator, expected", [
    (DPLasso(alpha=0.1, random_state=0), {**NOISY_REGRESSOR, **WEIGHTS}),
    (DPElasticNet(alpha=0.1, random_state=0), {**NOISY_REGRESSOR, **WEIGHTS}),
    (DPLogisticRegression(random_state=0), PUBLIC_CLASSES),
    (DPLasso(alpha=0.1, epsilon=10.0, random_state=0), WEIGHTS),
    (DPLogisticRegression(epsilon=10.0, random_state=0), PUBLIC_CLASSES),
    # n_trials=10: an API check of four one-vs-rest fits per call (the default selection is
    # checked by the binary cases above); 40 trials made this check 16 s
    (DPLogisticRegression(classes=[0, 1, 2, 3], epsilon=10.0, n_trials=10, random_state=0),
     MULTICLASS),
], ids=["DPLasso", "DPElasticNet", "DPLogisticRegression", "DPLasso-eps10",
        "DPLogisticRegression-eps10", "DPLogisticRegression-ovr4-eps10"])
def test_sklearn_estimator_checks(estimator, expected, fit_intercept):
    check_estimator(sklearn.base.clone(estimator).set_params(fit_intercept=fit_intercept),
                    expected_failed_checks=expected)


def test_non_private_limit_matches_sklearn():
    # epsilon = inf, no clipping: the objective is scikit-learn's.
    X, y, _ = dp.datasets.make_imbalanced_regression(300, 6, scale_range=(0.5, 2),
                                                     random_state=1)
    ours = DPLasso(alpha=0.05, epsilon=np.inf, clip=np.inf, passes=300, fit_intercept=False,
                   random_state=0)
    ours.fit(X, y)
    ref = Lasso(alpha=0.05, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    assert ours.coef_.shape == (6,) and ours.intercept_ == 0.0
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(400, 5, scale_range=(0.5, 2),
                                                           random_state=2)
    clf = DPLogisticRegression(C=0.5, epsilon=np.inf, clip=np.inf, passes=300,
                               fit_intercept=False, random_state=0)
    clf.fit(Xc, (yc > 0).astype(int))
    ref = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12,
                             solver="newton-cholesky").fit(Xc, (yc > 0).astype(int))
    assert clf.coef_.shape == ref.coef_.shape == (1, 5)       # scikit-learn's shapes
    assert clf.intercept_.shape == (1,) and clf.intercept_[0] == 0.0
    np.testing.assert_allclose(clf.coef_, ref.coef_, atol=1e-5)
    assert set(clf.predict(Xc)) <= {0, 1}
    np.testing.assert_allclose(clf.predict_proba(Xc).sum(axis=1), 1.0)
    assert clf.decision_function(Xc).shape == (400,)


@pytest.mark.parametrize("scaling", [1.0, 3.0])
def test_intercept_is_the_constant_column(scaling):
    # The documented objective: the intercept is b = s * w_b for a column of constant s,
    # penalized like every coordinate (scikit-learn's fit_intercept=False on [X, s]).
    X, y, _ = dp.datasets.make_imbalanced_regression(300, 4, scale_range=(0.5, 2),
                                                     random_state=1)
    y = y + 3.0
    Xs = np.hstack([X, np.full((300, 1), scaling)])
    ours = DPLasso(alpha=0.05, epsilon=np.inf, clip=np.inf, passes=400, random_state=0,
                   intercept_scaling=scaling).fit(X, y)
    ref = Lasso(alpha=0.05, fit_intercept=False, tol=1e-12, max_iter=100000).fit(Xs, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_[:-1], atol=1e-5)
    assert ours.intercept_ == pytest.approx(scaling * ref.coef_[-1], abs=1e-5)
    np.testing.assert_allclose(ours.predict(X), Xs @ ref.coef_, atol=1e-4)
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(400, 3, random_state=2)
    labels = (yc + 0.8 * np.random.default_rng(0).normal(size=400) > 0.5).astype(int)
    clf = DPLogisticRegression(C=0.5, epsilon=np.inf, clip=np.inf, passes=300,
                               intercept_scaling=scaling, random_state=0).fit(Xc, labels)
    ref = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12, solver="newton-cholesky"
                             ).fit(np.hstack([Xc, np.full((400, 1), scaling)]), labels)
    np.testing.assert_allclose(clf.coef_, ref.coef_[:, :-1], atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, scaling * ref.coef_[:, -1], atol=1e-5)


def test_intercept_close_to_sklearn_lasso_in_a_scaled_pipeline():
    # The case: DPLasso in a StandardScaler pipeline on California scored R^2 from
    # -4.6 to -6.0 without an intercept (sklearn's Lasso: 0.60). Measured with the private
    # intercept: 0.580 to 0.586 for epsilon in {1, 10, 100} and seeds 0, 1 (clip 5); the
    # tolerance 0.05 leaves room for the noise of other seeds at epsilon = 10.
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from threadpoolctl import threadpool_limits

    X, y = dp.datasets.load_california()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    # sklearn's reference fit on one BLAS thread: its coordinate descent makes ~1,500 level-1
    # BLAS calls, and right after an OpenMP kernel each threaded call waits on the OpenBLAS
    # workers (1.5-13 s for this 10 ms fit on the 2-core CI host). Same reference, same check.
    with threadpool_limits(limits=1, user_api="blas"):
        ref = make_pipeline(StandardScaler(), Lasso(alpha=0.01)).fit(Xtr, ytr).score(Xte, yte)
    assert ref == pytest.approx(0.60, abs=0.01)
    for seed in range(2):
        model = make_pipeline(StandardScaler(), DPLasso(alpha=0.01, epsilon=10.0, clip=5.0,
                                                        random_state=seed)).fit(Xtr, ytr)
        assert model.score(Xte, yte) == pytest.approx(ref, abs=0.05)
        assert model[-1].privacy_.epsilon <= 10.0
    without = make_pipeline(StandardScaler(), DPLasso(alpha=0.01, epsilon=10.0, clip=5.0,
                                                      fit_intercept=False, random_state=0))
    assert without.fit(Xtr, ytr).score(Xte, yte) < 0


def test_privacy_report_and_default_delta():
    X, y = dp.datasets.load_california()
    model = DPLasso(alpha=0.01, epsilon=1.0, passes=5, clip=10.0, random_state=0).fit(X, y)
    assert model.privacy_.epsilon <= 1.0
    assert model.privacy_.delta == pytest.approx(1.0 / len(y) ** 2)
    assert model.n_iter_ == 5


def test_bad_estimator_parameters():
    X, y, _ = dp.datasets.make_imbalanced_regression(50, 3, random_state=0)
    with pytest.raises(ValueError, match="solver"):
        DPLasso(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="l1_ratio"):
        DPElasticNet(l1_ratio=2.0).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        DPLasso(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="labels outside.*classes="):
        DPLogisticRegression().fit(X, np.arange(50) % 3)
    with pytest.raises(TypeError, match="fit_intercept"):
        DPLasso(fit_intercept="yes").fit(X, y)
    with pytest.raises(ValueError, match="intercept_scaling"):
        DPLasso(intercept_scaling=0.0).fit(X, y)


def test_bad_penalty_strengths_are_named_as_the_user_passed_them():
    # review s19: DPLasso(alpha=-1) raised "lam must be in [0, inf)", the penalty's name
    X, y, _ = dp.datasets.make_imbalanced_regression(50, 3, random_state=0)
    for model in (DPLasso(alpha=-1.0), DPElasticNet(alpha=-1.0)):
        with pytest.raises(ValueError, match=r"^alpha must be in \[0, inf\)"):
            model.fit(X, y)
    with pytest.raises(TypeError, match="^alpha must be a real number"):
        DPLasso(alpha="0.1").fit(X, y)
    with pytest.raises(TypeError, match="^l1_ratio must be a real number"):
        DPElasticNet(l1_ratio="0.5").fit(X, y)
    with pytest.raises(ValueError, match=r"^l1_ratio must be in \[0, 1\]"):
        DPElasticNet(l1_ratio=-0.1).fit(X, y)


def test_label_error_names_the_public_classes_plainly():
    # review s19: the message quoted classes=[np.int64(0), np.int64(1)] and ran two sentences
    # together ("...with two classes; Pass classes=")
    X, y, _ = dp.datasets.make_imbalanced_regression(50, 3, random_state=0)
    labels = np.arange(50) % 3
    with pytest.raises(ValueError) as info:
        DPLogisticRegression(classes=np.array([0, 1])).fit(X, labels)
    message = str(info.value)
    assert "classes=[0, 1]." in message and "np." not in message
    assert "Only binary classification is supported with two classes. Pass classes=" in message
    with pytest.raises(ValueError, match="Only binary classification is supported with "
                                         "classes=None. Pass classes="):
        DPLogisticRegression().fit(X, labels)
    with pytest.raises(ValueError) as info:
        DPLogisticRegression(classes=np.array(["a", "b", "c"])).fit(X, labels)
    assert "classes=['a', 'b', 'c']." in str(info.value)
    assert "Only binary" not in str(info.value)


def test_sgd_solver():
    X, y, _ = dp.datasets.make_imbalanced_regression(600, 5, scale_range=(0.5, 2),
                                                     random_state=4)
    model = DPLasso(alpha=0.01, solver="sgd", epsilon=2.0, passes=5, batch_size=64, clip=5.0,
                    random_state=0).fit(X, y)
    assert model.privacy_.epsilon <= 2.0
    assert "Poisson-sampled Gaussian" in model.privacy_.mechanisms[0] or \
        any("Poisson" in m for m in model.privacy_.mechanisms)
    assert model.predict(X).shape == (600,)
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(600, 5, random_state=5)
    clf = DPLogisticRegression(solver="sgd", epsilon=2.0, passes=5, batch_size=64,
                               random_state=0).fit(Xc, yc)
    assert set(clf.predict(Xc)) <= {0, 1}         # the default convention's classes_
    clf = DPLogisticRegression(classes=(-1, 1), solver="sgd", epsilon=2.0, passes=5,
                               batch_size=64, random_state=0).fit(Xc, yc)
    assert set(clf.predict(Xc)) <= {-1.0, 1.0}


# --- Issue 15, section 2: the classes are public -------------------------------------------

def _spy_labels(monkeypatch):
    """Record the +-1 labels each fit hands to DP-CD."""
    import importlib

    dp_cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")

    seen, original = [], dp_cd_module.dp_cd

    def spy(problem, **kwargs):
        seen.append(np.array(problem.y))
        return original(problem, **kwargs)

    monkeypatch.setattr(dp_cd_module, "dp_cd", spy)
    return seen


@pytest.mark.parametrize("negative", [0, -1])
def test_single_record_class_replaced_keeps_the_encoding(monkeypatch, negative):
    # The distinguisher: one class holds a single record; its neighbour replaces that
    # record by one of the other class. With np.unique(y) every other label flipped sign.
    seen = _spy_labels(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.ones(200, dtype=int)
    y[0] = negative
    y_neighbour = y.copy()
    y_neighbour[0] = 1
    a = DPLogisticRegression(passes=1, random_state=0).fit(X, y)
    b = DPLogisticRegression(passes=1, random_state=0).fit(X, y_neighbour)
    np.testing.assert_array_equal(seen[0][1:], seen[1][1:])
    assert np.all(seen[0][1:] == 1.0) and seen[0][0] == -1.0
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_array_equal(a.classes_, [0, 1])


def test_one_class_fit_predicts_public_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    for labels, classes in [(np.ones(60), None), (np.full(60, "spam"), ("ham", "spam")),
                            (np.zeros(60, dtype=int), (0, 1))]:
        clf = DPLogisticRegression(classes=classes, passes=1, random_state=0).fit(X, labels)
        predicted = clf.predict(X)
        assert predicted.shape == (60,) and set(predicted) <= set(clf.classes_)
        assert clf.predict_proba(X).shape == (60, 2)


def test_explicit_classes_and_labels_outside():
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(300, 4, random_state=3)
    words = np.where(yc > 0, "yes", "no")
    clf = DPLogisticRegression(classes=["no", "yes"], epsilon=np.inf, clip=np.inf, passes=50,
                               random_state=0).fit(Xc, words)
    ref = DPLogisticRegression(classes=(-1, 1), epsilon=np.inf, clip=np.inf, passes=50,
                               random_state=0).fit(Xc, yc)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)      # the same +-1 encoding
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.score(Xc, words) == ref.score(Xc, yc)
    with pytest.raises(ValueError, match="classes="):
        DPLogisticRegression(classes=("no", "yes")).fit(Xc, np.where(yc > 0, "yes", "maybe"))
    with pytest.raises(ValueError, match="classes"):
        DPLogisticRegression(classes=(1, 1)).fit(Xc, yc)
    with pytest.raises(ValueError, match="classes"):
        DPLogisticRegression(classes=(0, 1, 2)).fit(Xc, yc)
    for scalar in (1, "yes"):     # a ValueError from the check, not a TypeError from the tags
        with pytest.raises(ValueError, match="classes must be"):
            DPLogisticRegression(classes=scalar).fit(Xc, yc)


def test_default_convention_accepts_both_encodings():
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(300, 4, random_state=3)
    kw = dict(epsilon=np.inf, clip=np.inf, passes=50, random_state=0)
    pm = DPLogisticRegression(**kw).fit(Xc, yc)
    zo = DPLogisticRegression(**kw).fit(Xc, (yc > 0).astype(int))
    np.testing.assert_array_equal(pm.coef_, zo.coef_)
    np.testing.assert_array_equal(pm.classes_, [0, 1])
    assert pm.score(Xc, yc) == zo.score(Xc, (yc > 0).astype(int)) > 0.5


# --- Issue 15, section 3: a fitted estimator holds only what its report covers --------------

def _diabetes():
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True)


@pytest.mark.parametrize("solver", ["cd", "sgd"])
def test_history_reconstruction_fails_by_default(solver):
    # The attack: F(0) = sum(y^2) / (2n); knowing the other rows gives back y_0.
    X, y = _diabetes()
    n = len(y)
    # One fit with given hyperparameters (a selection without refit keeps no history).
    kw = dict(alpha=0.1, solver=solver, passes=1, batch_size=64, random_state=0, step=1.0,
              clip=1.0)
    model = DPLasso(**kw).fit(X, y)
    assert not hasattr(model, "history_")
    assert dp.result.HISTORY_OBJECTIVE_CONDITION not in model.privacy_.conditions
    with pytest.warns(dp.exceptions.PrivacyLeakWarning, match="diagnostics=True") as record:
        leaky = DPLasso(diagnostics=True, **kw).fit(X, y)
    assert record[0].filename == __file__           # points at the user's call
    assert dp.result.HISTORY_OBJECTIVE_CONDITION in leaky.privacy_.conditions
    assert not leaky.privacy_.unconditional
    y0 = math.sqrt(2 * n * leaky.history_.objective[0] - np.sum(y[1:] ** 2))
    assert y0 == pytest.approx(y[0], abs=1e-6)      # why the opt-in is flagged
    # A refit without diagnostics drops the earlier history.
    leaky.set_params(diagnostics=False).fit(X, y)
    assert not hasattr(leaky, "history_")


def test_result_report_flags_objective_values():
    X, y, _ = dp.datasets.make_imbalanced_regression(200, 4, random_state=0)
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.01))
    res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=0)
    # A solver's history is a side output: listed as not covered, without weakening coef's
    # guarantee (the report stays unconditional when nothing else is data-dependent).
    assert dp.result.HISTORY_OBJECTIVE_CONDITION in res.privacy.non_private_outputs
    assert dp.result.HISTORY_OBJECTIVE_CONDITION not in res.privacy.conditions
    assert "Not covered" in str(res.privacy)
    unflagged = dp.result.Result(coef=res.coef, privacy=dp.result.without_objective_condition(
        res.privacy), history=dp.result.History(np.array([0.0]), np.array([np.nan])))
    assert dp.result.HISTORY_OBJECTIVE_CONDITION not in unflagged.privacy.non_private_outputs
    quiet = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=0,
                     record_history=False)
    assert quiet.history.objective.size == 0
    assert dp.result.HISTORY_OBJECTIVE_CONDITION not in quiet.privacy.non_private_outputs
    np.testing.assert_array_equal(quiet.coef, res.coef)
    grid = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, passes=1, steps=[1.0], clips=[1.0])
    assert dp.result.HISTORY_OBJECTIVE_CONDITION in grid.privacy.non_private_outputs
    grid = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, passes=1, steps=[1.0], clips=[1.0],
                         evaluate=False)
    assert dp.result.HISTORY_OBJECTIVE_CONDITION not in grid.privacy.non_private_outputs


# --- Issue 17: the private intercept, sample weights, one-vs-rest ---------------------------

def _spy_runs(monkeypatch):
    """Record (problem, result) of every dp_cd call the estimators make."""
    import importlib

    dp_cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")
    runs, original = [], dp_cd_module.dp_cd

    def spy(problem, **kwargs):
        result = original(problem, **kwargs)
        runs.append((problem, result))
        return result

    monkeypatch.setattr(dp_cd_module, "dp_cd", spy)
    return runs


def _intercept_release(problem, M):
    """Noiseless clipped gradient of the intercept's coordinate at w = 0, through DP-CD's own
    kernel: the intercept's column is moved first (a public permutation), and one cyclic
    update with step 1 from 0 gives w_b = -g_b / M_b."""
    Xp = np.roll(np.asarray(problem.X), 1, axis=1)
    Mp = np.roll(M, 1)
    res = dp.dp_cd(dp.Problem(Xp, problem.y, loss="half_squared"), epsilon=np.inf, delta=1e-5,
                   n_outer=1, n_inner=1, average=False, selection="cyclic", smoothness=Mp,
                   step=1.0, clip=1.0, random_state=0)
    return -res.coef[0] * Mp[0]


@pytest.mark.filterwarnings("error::dpsco_core.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("scaling", [1.0, 2.0])
def test_intercept_release_within_calibrated_sensitivity(monkeypatch, scaling):
    # D: every record's intercept term s (x_i w + b - y_i) at w = 0 is -10 s, clipped to -C_b;
    # its worst replace-one neighbour replaces record 0 by an outlier whose term is +C_b.
    runs = _spy_runs(monkeypatch)
    n, p, clip = 200, 3, 1.0
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (n, p))
    y = np.full(n, 10.0)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1e6, -1e6                     # clipped onto the public bounds
    kw = dict(alpha=0.0, epsilon=1.0, passes=1, step=1.0, clip=clip, bounds=(-1.0, 1.0),
              label_bound=10.0, intercept_scaling=scaling, random_state=0)
    a = DPLasso(**kw).fit(X, y)
    b = DPLasso(**kw).fit(X2, y2)
    (prob, res), (prob2, res2) = runs
    # Nothing read from the data: public constants, an unconditional report (no warning: the
    # filter above turns a PrivacyLeakWarning into an error).
    assert a.privacy_.unconditional and b.privacy_.unconditional
    M = prob.public_bounds.coordinate_smoothness(prob.loss, p + 1)
    np.testing.assert_array_equal(M, [1.0] * p + [scaling ** 2])   # s_l B_j^2, B_b = s
    np.testing.assert_array_equal(res.stats["clips"], res2.stats["clips"])
    # The augmented datasets are replace-one neighbours with the public column s.
    XA, XB = np.asarray(prob.X), np.asarray(prob2.X)
    np.testing.assert_array_equal(XA[:, -1], scaling)
    np.testing.assert_array_equal(XA[1:], XB[1:])
    np.testing.assert_array_equal(prob.y[1:], prob2.y[1:])
    # The sensitivity the calibration used for the intercept, from first principles:
    # C_b = sqrt(M_b / sum M) C, replace-one Delta_b = 2 C_b / n.
    c_b = clip * np.sqrt(M[-1] / M.sum())
    assert res.stats["clips"][-1] == pytest.approx(c_b, rel=1e-12)
    used = res.stats["noise_scales"][-1] / res.stats["noise_multiplier"]
    assert used == pytest.approx(2 * c_b / n, rel=1e-12)
    g, g2 = _intercept_release(prob, M), _intercept_release(prob2, M)
    assert g == pytest.approx(-c_b, rel=1e-12)
    assert abs(g2 - g) <= used * (1 + 1e-9)
    assert abs(g2 - g) == pytest.approx(used, rel=1e-9)     # the worst neighbour attains it
    # The released intercept is the post-processed last coordinate.
    assert a.intercept_ == scaling * res.coef[-1]


@pytest.mark.filterwarnings("error::dpsco_core.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("sparse", [False, True])
def test_intercept_with_row_norm_keeps_the_public_constants(sparse):
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = X @ [1.0, 0.0, -1.0, 0.5] + 2.0
    Xin = sp.csr_matrix(X) if sparse else X
    model = DPLasso(alpha=0.01, epsilon=5.0, row_norm=3.0, label_bound=6.0, clip=3.0,
                    random_state=0).fit(Xin, y)
    assert model.privacy_.unconditional
    assert model.predict(Xin).shape == (300,)
    clf = DPLogisticRegression(epsilon=5.0, row_norm=3.0, bounds=(-2.0, 2.0),
                               random_state=0).fit(Xin, (y > 2).astype(int))
    assert clf.privacy_.unconditional and clf.coef_.shape == (1, 4)


def test_sample_weight_refused_unless_ones():
    X, y, _ = dp.datasets.make_imbalanced_regression(100, 3, random_state=0)
    kw = dict(alpha=0.01, passes=2, random_state=0)
    plain = DPLasso(**kw).fit(X, y)
    ones = DPLasso(**kw).fit(X, y, sample_weight=np.ones(100))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)
    assert plain.intercept_ == ones.intercept_
    weights = np.ones(100)
    weights[0] = 2.0
    with pytest.raises(ValueError, match="sample_weight is not supported.*sensitivity"):
        DPLasso(**kw).fit(X, y, sample_weight=weights)
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        DPLogisticRegression().fit(X, (y > 0).astype(int), sample_weight=np.zeros(100))


def _three_blobs(n=900, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    labels = np.arange(n) % 3
    return centres[labels] + rng.normal(scale=0.6, size=(n, 2)), labels


def test_one_vs_rest_matches_sklearn_in_the_non_private_limit():
    from sklearn.multiclass import OneVsRestClassifier

    X, labels = _three_blobs()
    names = np.array(["a", "b", "c"])[labels]
    clf = DPLogisticRegression(C=0.5, classes=["a", "b", "c"], epsilon=np.inf, clip=np.inf,
                               passes=3000, fit_intercept=False, random_state=0).fit(X, names)
    ref = OneVsRestClassifier(LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12,
                                                 solver="newton-cholesky")).fit(X, names)
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)
    np.testing.assert_allclose(clf.coef_, np.vstack([e.coef_ for e in ref.estimators_]),
                               atol=1e-5)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    assert clf.decision_function(X).shape == (900, 3)
    assert clf.score(X, names) > 0.9


def test_one_vs_rest_budget_is_split_and_composed(monkeypatch):
    runs = _spy_runs(monkeypatch)
    X, labels = _three_blobs()
    delta = 1e-6
    clf = DPLogisticRegression(classes=[0, 1, 2, 3], epsilon=2.0, delta=delta, passes=5,
                               step=1.0, clip=2.0, bounds=(-5.0, 5.0),
                               random_state=0).fit(X, labels)
    # K = 4 comes from the public classes (label 3 never occurs in y).
    assert len(runs) == 4 and clf.coef_.shape == (4, 2)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2, 3])
    # each binary fit calibrated to (per_fit, delta / K), the largest share whose 4-fold
    # composition is epsilon (at epsilon / K = 0.5 each, the four spent 1.0 of 2)
    from dpsco_core.estimators import _iterative_one_vs_rest_epsilon

    per_fit = _iterative_one_vs_rest_epsilon(2.0, delta, 4, (
        "cd", X.shape[0], 3, 5.0, min(256, X.shape[0]), False, "poisson", None))
    assert 0.5 < per_fit < 2.0
    binary = DPLogisticRegression(epsilon=per_fit, delta=delta / 4, passes=5, step=1.0,
                                  clip=2.0, bounds=(-5.0, 5.0),
                                  random_state=0).fit(X, labels == 1)
    for _, result in runs[:4]:
        assert result.privacy.noise_multipliers == binary.privacy_.noise_multipliers
        assert result.privacy.epsilon <= per_fit
    report = clf.privacy_
    assert isinstance(report.event, dp.privacy.events.ComposedDpEvent)
    assert len(report.event.events) == 4
    assert report.releases == 4 * binary.privacy_.releases
    assert report.delta == delta
    # composed by the accountant: the whole budget, and less than the K-fold sum
    assert 0.99 * 2.0 <= report.epsilon <= 2.0 < 4 * per_fit
    assert report.unconditional
    assert clf.score(X, labels) > 0.8


@pytest.mark.parametrize("K", [3, 4, 10])
def test_one_vs_rest_ssp_spends_the_whole_budget(K):
    # epsilon / K per fit left most of the budget unspent (0.65, 0.57, 0.39 of epsilon at
    # K = 3, 4, 10): each SSP fit now gets the largest share whose composition is epsilon.
    from dpsco_core.estimators import _ssp_one_vs_rest_epsilon
    from dpsco_core.solvers.ssp import ssp_event

    rng = np.random.default_rng(0)
    X = np.clip(rng.standard_normal((2000, 4)), -3, 3)
    y = rng.integers(0, K, 2000)
    clf = DPLogisticRegression(classes=list(range(K)), epsilon=1.0, bounds=(-3.0, 3.0),
                               solver="ssp", random_state=0).fit(X, y)
    report, delta = clf.privacy_, 1.0 / 2000**2
    assert clf.solver_ == "ssp" and report.delta == delta
    assert 0.99 <= report.epsilon <= 1.0
    per_fit = _ssp_one_vs_rest_epsilon(1.0, delta, K, False)
    assert per_fit > 1.0 / K
    # The report is the accountant's composition of K events, each the public event of an
    # SSP fit at (per_fit, delta / K).
    event = ssp_event(per_fit, delta / K, logistic=True)
    assert report.event.events == (event,) * K
    acc = dp.privacy.RdpAccountant(None, report.neighboring_relation, conversion="mironov")
    assert acc.compose(report.event).get_epsilon(delta) == pytest.approx(report.epsilon,
                                                                         rel=1e-6)


def test_one_vs_rest_share_is_public():
    # The same events on a dataset and its worst neighbour (one record replaced by an extreme
    # one of another class): the share reads nothing from the records.
    X, labels = _three_blobs(300)
    X2, labels2 = X.copy(), labels.copy()
    X2[0], labels2[0] = [5.0, -5.0], 2
    kw = dict(classes=[0, 1, 2], epsilon=1.0, bounds=(-5.0, 5.0), solver="ssp",
              random_state=0)
    a = DPLogisticRegression(**kw).fit(X, labels)
    b = DPLogisticRegression(**kw).fit(X2, labels2)
    assert a.privacy_.event == b.privacy_.event and a.privacy_.epsilon == b.privacy_.epsilon
    # With a public clip too (no private quantile in the events).
    c = DPLogisticRegression(**(kw | dict(clip=3.0))).fit(X, labels)
    assert 0.99 <= c.privacy_.epsilon <= 1.0


# (solver, sampling, given step and clip): DP-CD and DP-SGD fits, with and without selection
ITERATIVE_OVR = [("cd", "poisson", True), ("cd", "poisson", False), ("sgd", "poisson", True),
                 ("sgd", "poisson", False), ("sgd", "shuffle", True), ("sgd", "shuffle", False)]


@pytest.mark.parametrize("solver,sampling,given", ITERATIVE_OVR)
def test_one_vs_rest_iterative_fits_spend_the_whole_budget(solver, sampling, given):
    # epsilon / K per fit spent 0.49 (DP-CD) and 0.56 (DP-SGD) of epsilon at K = 4 with given
    # hyperparameters, 0.89 with a selection: each fit now gets the largest share whose
    # K-fold composition is epsilon, from events of public arguments (the solver's own, or
    # tune_solver's search_event), identical on a dataset and its worst neighbour.
    from dpsco_core.tuning.search import DEFAULT_TRIALS_SHAPE, _solver_event, search_event

    X, labels = _three_blobs(300)
    X2, labels2 = X.copy(), labels.copy()
    X2[0], labels2[0] = [5.0, -5.0], 2
    K, delta = 3, 1e-6
    kw = dict(classes=[0, 1, 2], epsilon=1.0, delta=delta, bounds=(-5.0, 5.0), passes=2,
              solver=solver, sampling=sampling, random_state=0, n_trials=5.0,
              rms_row_norm=None)            # the selection, not the private rho's rule
    if given:
        kw |= dict(step=0.5, clip=1.0)
    X3 = X.copy()
    X3[0] = 0.0                      # the zero-out neighbour (Poisson DP-SGD's relation)
    a = DPLogisticRegression(**kw).fit(X, labels)
    b = DPLogisticRegression(**kw).fit(X2, labels2)
    c = DPLogisticRegression(**kw).fit(X3, labels)
    report = a.privacy_
    assert a.solver_ == solver and report.event == b.privacy_.event == c.privacy_.event
    assert 0.99 <= report.epsilon <= 1.0
    acc = dp.privacy.RdpAccountant(None, report.neighboring_relation, conversion="mironov")
    assert acc.compose(report.event).get_epsilon(delta) == pytest.approx(report.epsilon,
                                                                         rel=1e-6)
    # the per-fit event is the public one at the share
    from dpsco_core.estimators import _iterative_one_vs_rest_epsilon

    n, p = X.shape[0], 3
    from dpsco_core.tuning.grids import auto_batch_size

    b = auto_batch_size(n, 2.0)                          # batch_size="auto"
    search = None if given else (5.0, float(DEFAULT_TRIALS_SHAPE), False, 0.5)
    per_fit = _iterative_one_vs_rest_epsilon(1.0, delta, K, (
        solver, n, p, 2.0, b, False, sampling if solver == "sgd" else "poisson",
        search))
    assert per_fit > 1.0 / K
    expected = _solver_event(solver, per_fit, delta / K, n, p, 2.0, b, False,
                             sampling if solver == "sgd" else "poisson") if given else \
        search_event(epsilon=per_fit, delta=delta / K, solver=solver, n_samples=n,
                     n_features=p, passes=2.0, mean=5.0, sampling=sampling, batch_size=b)
    assert report.event.events == (expected,) * K


def test_one_vs_rest_refuses_a_share_the_first_fit_does_not_match(monkeypatch):
    # A share calibrated on another event than the one the solver reports would overspend:
    # the first fit's own event, composed K times, is checked before the other fits run.
    import dpsco_core.estimators as est

    runs = _spy_runs(monkeypatch)
    monkeypatch.setattr(est.DPLogisticRegression, "_fit_plan",
                        lambda self, problem, K, delta: est._FitPlan(self.epsilon, "cd"))
    X, labels = _three_blobs(300)
    clf = DPLogisticRegression(classes=[0, 1, 2], epsilon=1.0, delta=1e-6, bounds=(-5.0, 5.0),
                               step=1.0, clip=1.0, passes=2, random_state=0)
    with pytest.raises(RuntimeError, match="3 fits of the first fit's event"):
        clf.fit(X, labels)
    assert len(runs) == 1 and not hasattr(clf, "coef_")


def test_ssp_event_is_the_runs_event():
    from dpsco_core.solvers.ssp import dp_ssp, dp_ssp_logistic, ssp_event

    rng = np.random.default_rng(1)
    X = np.clip(rng.standard_normal((500, 3)), -2, 2)
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, 1.0, -1.0)
    logistic = dp.Problem(X, y, loss="logistic", penalty=dp.penalties.L2(1e-3), bounds=(-2, 2))
    linear = dp.Problem(X, X @ [1.0, 0.0, 2.0], loss="squared", bounds=(-2, 2),
                        label_bound=6.0)
    for clip in (None, 1.5):
        run = dp_ssp_logistic(logistic, epsilon=0.7, delta=1e-6, clip=clip, random_state=0)
        assert run.privacy.event == ssp_event(0.7, 1e-6, logistic=True,
                                              public_clip=clip is not None)
        run = dp_ssp(linear, epsilon=0.7, delta=1e-6, clip=clip, random_state=0)
        assert run.privacy.event == ssp_event(0.7, 1e-6, public_clip=clip is not None)
    with pytest.raises(ValueError):
        ssp_event(0.0, 1e-6)


def test_one_vs_rest_charges_the_budget_and_refuses_early():
    X, labels = _three_blobs(300)
    # One estimator fit (epsilon 0.6 at delta 1e-6) spends 0.43 of it at the budget's delta,
    # the next one's first binary fit brings it to 0.4998.
    budget = dp.privacy.Budget(0.5, 1e-5)
    kw = dict(classes=[0, 1, 2], epsilon=0.6, delta=1e-6, passes=2, bounds=(-5.0, 5.0),
              random_state=0, budget=budget, step=1.0, clip=1.0)
    DPLogisticRegression(**kw).fit(X, labels)
    assert len(budget.ledger) == 3 and budget.spent_epsilon <= 0.5
    # The second fit's first binary fit still fits in the budget, the other two would not: since
    # session 19 refused whole, before the first is charged (it used to pay the first).
    spent = budget.spent_epsilon
    with pytest.raises(dp.exceptions.PrivacyBudgetError):
        DPLogisticRegression(**kw).fit(X, labels)
    assert len(budget.ledger) == 3 and budget.spent_epsilon == spent


def test_one_vs_rest_fits_draw_independent_noise(monkeypatch):
    # The same seed for the K fits would add the same noise to each: the difference of two
    # binary models' first updates would then be noise-free.
    import importlib

    dp_cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")
    seeds, original = [], dp_cd_module.dp_cd

    def spy(problem, **kwargs):
        seeds.append(kwargs["random_state"])
        return original(problem, **kwargs)

    monkeypatch.setattr(dp_cd_module, "dp_cd", spy)
    X, labels = _three_blobs(300)
    for random_state in (0, None, np.random.default_rng(0)):
        seeds.clear()
        DPLogisticRegression(classes=[0, 1, 2], passes=1, bounds=(-5.0, 5.0), step=1.0,
                             clip=1.0, random_state=random_state).fit(X, labels)
        states = [np.random.SeedSequence.generate_state(s, 4).tolist() for s in seeds]
        assert len(seeds) == 3 and len({tuple(t) for t in states}) == 3
    a = DPLogisticRegression(classes=[0, 1, 2], passes=1, bounds=(-5.0, 5.0),
                             random_state=0).fit(X, labels)
    b = DPLogisticRegression(classes=[0, 1, 2], passes=1, bounds=(-5.0, 5.0),
                             random_state=0).fit(X, labels)
    np.testing.assert_array_equal(a.coef_, b.coef_)           # still reproducible


@pytest.mark.parametrize("name", ["DPLasso", "DPElasticNet", "DPLogisticRegression"])
def test_public_methods_have_numpydoc_docstrings(name):
    validate = pytest.importorskip("numpydoc.validate").validate
    # documented parameters and returns; no missing docstring
    codes = {"GL08", "PR01", "PR02", "PR03", "PR07", "RT01", "RT02", "RT03", "SS06"}
    methods = ["", ".fit", ".predict", ".score"]
    if name == "DPLogisticRegression":
        methods += [".decision_function", ".predict_proba", ".predict_log_proba"]
    for method in methods:
        errors = validate(f"dpsco_core.estimators.{name}{method}")["errors"]
        assert not [e for e in errors if e[0] in codes], (method, errors)


# -- issue 19: private hyperparameter selection inside the budget ------------------------------

def _standardized_regression(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X @ [1.0, -2.0, 0.0, 0.5] + 0.5 * rng.normal(size=n)
    return X, y


def test_default_fit_selects_hyperparameters_inside_the_budget():
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent
    from dpsco_core.tuning.search import SELECTION_ASSUMPTION

    X, y = _standardized_regression()
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4.0, 4.0), label_bound=10.0, passes=5,
              solver="cd", random_state=0, rms_row_norm=None)
    model = DPLasso(**kw).fit(X, y)
    report = model.privacy_
    assert isinstance(report.event, RepeatAndSelectDpEvent)
    assert report.event.mean == 80.0 and report.event.shape == 2.0
    assert 0.95 < report.epsilon <= 1.0 and report.unconditional
    assert SELECTION_ASSUMPTION in report.assumptions
    acc = dp.privacy.RdpAccountant(None, report.neighboring_relation)
    assert acc.compose(report.event).get_epsilon(report.delta) == pytest.approx(report.epsilon)
    again = DPLasso(**kw).fit(X, y)                    # reproducible from the seed
    np.testing.assert_array_equal(model.coef_, again.coef_)
    assert model.score(X, y) > 0.0


def test_selection_attribute_reports_the_selected_trial():
    """selection_ is the selection's release besides the model (a candidate of the public
    grid, its private score, the trial's epsilon, the fallback flag); None without one."""
    from dpsco_core.tuning.grids import PUBLIC_BOUND_CD_STEPS

    X, y = _standardized_regression()
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-4.0, 4.0), label_bound=10.0, passes=3,
              solver="cd", random_state=0, rms_row_norm=None)
    model = DPLasso(**kw).fit(X, y)
    sel = model.selection_
    assert set(sel) == {"step", "clip", "score", "trial_epsilon", "zero_fallback"}
    assert sel["step"] in PUBLIC_BOUND_CD_STEPS and sel["clip"] > 0.0
    assert sel["zero_fallback"] is False and math.isfinite(sel["score"])
    assert 0.3 < sel["trial_epsilon"] < 0.5
    # a fixed (step, clip) runs no selection, and a refit forgets an earlier one
    assert DPLasso(**kw, step=1.0, clip=3.0).fit(X, y).selection_ is None
    model.set_params(step=1.0, clip=3.0).fit(X, y)
    assert model.selection_ is None
    assert DPLasso(**{**kw, "solver": "ssp"}).fit(X, y).selection_ is None


def test_one_vs_rest_selection_attribute_has_one_entry_per_class():
    X, y = _standardized_regression(900)
    labels = np.digitize(y, [-1.0, 1.0])                     # three classes
    model = DPLogisticRegression(epsilon=3.0, bounds=(-4.0, 4.0), passes=2, n_trials=3,
                                 classes=[0, 1, 2], solver="cd", random_state=0,
                                 rms_row_norm=None).fit(X, labels)
    assert isinstance(model.selection_, list) and len(model.selection_) == 3
    assert all(set(s) >= {"step", "clip", "zero_fallback"} for s in model.selection_)


def test_fixed_hyperparameters_spend_nothing_on_selection():
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent

    X, y = _standardized_regression()
    model = DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-4.0, 4.0), label_bound=10.0, passes=5,
                    step=1.0, clip=3.0, random_state=0).fit(X, y)
    assert not isinstance(model.privacy_.event, RepeatAndSelectDpEvent)


def test_selection_with_refit_composes_both():
    from dpsco_core.privacy.events import ComposedDpEvent, RepeatAndSelectDpEvent

    X, y = _standardized_regression()
    budget = dp.privacy.Budget(1.0, 1e-6)
    model = DPLogisticRegression(epsilon=1.0, delta=1e-6, bounds=(-4.0, 4.0), passes=3,
                                 selection_share=0.3, n_trials=5, random_state=0, solver="cd",
                                 budget=budget, rms_row_norm=None).fit(X, np.where(y > 0, 1, 0))
    event = model.privacy_.event
    assert isinstance(event, ComposedDpEvent)
    assert isinstance(event.events[0], RepeatAndSelectDpEvent)
    assert budget.ledger == (event,) and model.privacy_.epsilon <= 1.0
    assert model.score(X, np.where(y > 0, 1, 0)) > 0.8


def test_selection_without_bounds_warns_and_is_conditional():
    from dpsco_core.estimators import GRID_FROM_DATA_CONDITION

    X, y = _standardized_regression(500)
    with pytest.warns(dp.exceptions.PrivacyLeakWarning, match="grid"):
        model = DPLasso(alpha=1e-3, passes=2, random_state=0).fit(X, y)
    assert GRID_FROM_DATA_CONDITION in model.privacy_.conditions
    assert not model.privacy_.unconditional


def test_sgd_sampling_shuffle_is_replace_one():
    """sampling="shuffle" runs DP-SGD on shuffled fixed-size batches under replace-one
    (DP-CD's relation), with fixed hyperparameters and with the private selection; Poisson
    (the default) stays zero-out; an unknown sampling is refused."""
    from dpsco_core.privacy import NeighboringRelation

    X, y, _ = dp.datasets.make_imbalanced_regression(600, 5, scale_range=(0.5, 2),
                                                     random_state=4)
    kw = dict(alpha=0.01, solver="sgd", epsilon=2.0, passes=2, batch_size=64,
              bounds=(-10, 10), label_bound=float(np.abs(y).max()), random_state=0)
    for fixed in [dict(step=1.0, clip=5.0), {}]:
        model = DPLasso(sampling="shuffle", **kw, **fixed).fit(X, y)
        assert model.privacy_.neighboring_relation is NeighboringRelation.REPLACE_ONE
        assert model.privacy_.epsilon <= 2.0
        assert any("shuffled fixed-size batches" in a for a in model.privacy_.assumptions)
        poisson = DPLasso(**kw, **fixed).fit(X, y)
        assert poisson.privacy_.neighboring_relation is NeighboringRelation.ZERO_OUT
    Xc, yc, _ = dp.datasets.make_imbalanced_classification(600, 5, random_state=5)
    clf = DPLogisticRegression(solver="sgd", sampling="shuffle", epsilon=2.0, passes=2,
                               batch_size=64, bounds=(-10, 10), random_state=0).fit(Xc, yc)
    assert clf.privacy_.neighboring_relation is NeighboringRelation.REPLACE_ONE
    with pytest.raises(ValueError, match="sampling must be"):
        DPLasso(solver="sgd", sampling="uniform", step=1.0, clip=1.0).fit(X, y)


def test_one_vs_rest_share_steps_over_per_fit_budgets_too_small_to_calibrate():
    # Below some per-fit epsilon a selection cannot be calibrated (trial_epsilon raises):
    # those values are within the budget (the composition is monotone), and the share found
    # is the one without them.
    from dpsco_core.estimators import _one_vs_rest_share
    from dpsco_core.privacy.events import GaussianDpEvent, NeighboringRelation

    def event_of(e, floor=0.0):
        if e < floor:
            raise ValueError("the selection cannot meet epsilon")
        return GaussianDpEvent(8.0 / e)

    relation = NeighboringRelation.REPLACE_ONE
    plain = _one_vs_rest_share(event_of, 1.0, 1e-6, 4, relation)
    assert 0.25 < plain < 1.0
    # the first probe, sqrt(epsilon / K * epsilon) = 0.5, falls below the floor
    floor = 0.9 * plain
    assert 0.5 < floor
    floored = _one_vs_rest_share(lambda e: event_of(e, floor=floor), 1.0, 1e-6, 4, relation)
    assert floored == plain
    acc = dp.privacy.RdpAccountant(None, relation, conversion="mironov")
    composed = dp.privacy.events.ComposedDpEvent((event_of(plain),) * 4)
    assert acc.compose(composed).get_epsilon(1e-6) <= 1.0


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_predict_maps_records_onto_the_public_bounds_as_fit_does(sparse):
    # The model is trained on records clipped onto the bounds (rows scaled onto row_norm):
    # predicting a raw outlier applies the same public map instead of extrapolating (session
    # 16: the README quickstart's model scored R^2 -0.26 on California's raw records, whose
    # occupancy reaches 1,243 against the bound 10; 0.29 with the map).
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3))
    y = X @ np.array([1.0, -1.0, 0.5])
    reg = DPLasso(alpha=1e-3, epsilon=2.0, bounds=(-1, 1), label_bound=3.0, rms_row_norm=1.0,
                  random_state=0).fit(X, y)
    raw = np.array([[50.0, -0.5, 0.2], [0.3, 0.1, -0.7]])
    clipped = np.clip(raw, -1, 1)
    as_input = sp.csr_matrix(raw) if sparse else raw
    np.testing.assert_array_equal(reg.predict(as_input), reg.predict(clipped))
    assert reg.predict(raw)[0] == pytest.approx(clipped[0] @ reg.coef_ + reg.intercept_)
    clf = DPLogisticRegression(epsilon=2.0, row_norm=1.0, rms_row_norm=0.8,
                               random_state=0).fit(X / 2, (y > 0).astype(int))
    scaled = raw / np.maximum(1.0, np.linalg.norm(raw, axis=1))[:, None]
    np.testing.assert_allclose(clf.decision_function(as_input), clf.decision_function(scaled),
                               rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(as_input), clf.predict_proba(scaled),
                               rtol=1e-12)
    # Without public bounds nothing is mapped (the fit read its constants from the data).
    free = DPLasso(alpha=1e-3, epsilon=np.inf, clip=np.inf, passes=5).fit(X, y)
    assert free.predict(raw)[0] == pytest.approx(raw[0] @ free.coef_ + free.intercept_)


def test_dense_features_are_centred_on_the_public_bounds_midpoints():
    # Session 16: features on [0, 1] share a large mean with the intercept's column and the
    # first-order solvers crawl (breast cancer mapped onto [0, 1] scored the majority class
    # even without noise). The estimators subtract the public midpoints (lo + hi) / 2 from
    # dense records, solve, and move <w, c> into the intercept: the same fit as on the
    # centred records with the centred bounds, the same guarantee.
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (500, 3))
    y = X @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.normal(size=500)
    kw = dict(alpha=1e-3, epsilon=1.0, label_bound=3.0, random_state=0, rms_row_norm=0.5)
    raw = DPLasso(bounds=(0.0, 1.0), **kw).fit(X, y)
    centred = DPLasso(bounds=(-0.5, 0.5), **kw).fit(X - 0.5, y)
    np.testing.assert_array_equal(raw.coef_, centred.coef_)
    assert raw.intercept_ == pytest.approx(centred.intercept_ - 0.5 * raw.coef_.sum(),
                                           rel=1e-12)
    np.testing.assert_allclose(raw.predict(X), centred.predict(X - 0.5), rtol=1e-12)
    assert raw.privacy_.epsilon == centred.privacy_.epsilon
    # classifier, per-feature bounds, one-vs-rest: each class's intercept absorbs its <w, c>
    labels = np.digitize(X[:, 0] - X[:, 1], [-0.2, 0.2])
    lo, hi = np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0])
    c = (lo + hi) / 2
    clf = DPLogisticRegression(classes=[0, 1, 2], bounds=(lo, hi), epsilon=2.0,
                               random_state=0).fit(X, labels)
    ref = DPLogisticRegression(classes=[0, 1, 2], bounds=(lo - c, hi - c), epsilon=2.0,
                               random_state=0).fit(X - c, labels)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_ - ref.coef_ @ c, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X - c), rtol=1e-12)
    # symmetric bounds and no intercept: nothing subtracted
    assert DPLasso(bounds=(-1.0, 1.0), **kw).fit(X, y)._feature_centre is None
    assert DPLasso(bounds=(0.0, 1.0), fit_intercept=False, **kw).fit(X, y)._feature_centre \
        is None


def test_sparse_features_are_not_centred_and_centred_rows_stay_in_their_bound():
    import scipy.sparse as sp

    from dpsco_core.estimators import _intercept_problem

    rng = np.random.default_rng(1)
    X = rng.uniform(0.0, 1.0, (200, 4)) * (rng.random((200, 4)) < 0.5)
    y = X.sum(axis=1)
    kw = dict(alpha=1e-3, label_bound=4.0, random_state=0, rms_row_norm=0.7)
    # said since session 19 (first-use review: digits on (0, 1), accuracy 0.19 to 0.28 sparse
    # against 0.40 to 0.50 dense), from public facts only; not for dense X or symmetric bounds
    with pytest.warns(dp.exceptions.DPSCOWarning, match="sparse X is not centred"):
        model = DPLasso(bounds=(0.0, 1.0), **kw).fit(sp.csr_matrix(X), y)  # it would densify X
    assert model._feature_centre is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", dp.exceptions.DPSCOWarning)
        DPLasso(bounds=(0.0, 1.0), **kw).fit(X, y)
        DPLasso(bounds=(-1.0, 1.0), **kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(model.predict(sp.csr_matrix(X)),
                               X @ model.coef_ + model.intercept_, rtol=1e-12)
    # With row_norm too, the centred rows' bound is min(R + ||c||, ||(hi - lo) / 2||), and the
    # problem's own enforcement moves no record.
    for R in (0.8, 1.5, 10.0):
        problem, centre, bound = _intercept_problem(
            X, y, loss="half_squared", penalty=None, bounds=(0.0, 1.0), row_norm=R,
            label_bound=4.0, fit_intercept=True, intercept_scaling=1.0)
        clipped = X * np.minimum(1.0, R / np.maximum(np.linalg.norm(X, axis=1), 1e-300))[:, None]
        np.testing.assert_allclose(problem.X[:, :4], clipped - centre, atol=1e-15)
        assert np.all(np.linalg.norm(problem.X[:, :4], axis=1) <= bound * (1 + 1e-12))
        assert bound <= min(R + np.linalg.norm(centre), 1.0) + 1e-12


def test_centred_worst_neighbours_stay_inside_the_bounds_the_sensitivity_uses():
    # The solver's sensitivity comes from the centred problem's bounds (+-(hi - lo) / 2 and
    # the row bound): a replaced outlier, a zeroed record and an added extreme record, mapped
    # and centred, must lie inside them, and the problem's own enforcement must move nothing.
    from dpsco_core.estimators import _intercept_problem

    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 1.0, (50, 3))
    y = X.sum(axis=1)
    lo, hi = np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0])
    outlier, zero = X.copy(), X.copy()
    outlier[7] = [1e6, -1e6, 1e6]
    zero[7] = 0.0
    added = np.vstack([X, [[-1e9, 1e9, -1e9]]])
    for data, labels in [(X, y), (outlier, y), (zero, y), (added, np.append(y, 3.0))]:
        for R in (None, 1.5):
            problem, centre, bound = _intercept_problem(
                data, labels, loss="half_squared", penalty=None, bounds=(lo, hi), row_norm=R,
                label_bound=4.0, fit_intercept=True, intercept_scaling=1.0)
            feats = problem.X[:, :3]
            half = (np.minimum(hi, np.inf if R is None else R)
                    - np.maximum(lo, -np.inf if R is None else -R)) / 2
            assert np.all(np.abs(feats) <= half * (1 + 1e-12))
            assert np.all(np.linalg.norm(feats, axis=1) <= bound * (1 + 1e-12))
            public = problem.public_bounds
            np.testing.assert_array_equal(public.enforce_features(problem.X), problem.X)
            assert public.feature_bounds(4)[:3] == pytest.approx(half)


@pytest.mark.parametrize("Model", [DPLasso, DPLogisticRegression])
def test_one_record_error_names_X(Model):
    """Pinned (session 17, hypothesis outside CI): "private training needs at least 2
    samples" named none of the caller's arguments; it names X now (and keeps scikit-learn's
    "n_samples=1" for check_fit2d_1sample)."""
    with pytest.raises(ValueError, match=r"^X must hold at least 2 samples .*n_samples=1\."):
        Model(epsilon=1.0).fit(np.ones((1, 2)), np.ones(1))


@pytest.mark.parametrize("solver, bounds, step", [("auto", None, None),
                                                  ("ssp", (-1, 1), None)])
def test_one_vs_rest_below_the_accountants_floor_names_epsilon(solver, bounds, step):
    """Pinned (session 17, hypothesis outside CI): K one-vs-rest fits at a large delta (1/n^2
    of 5 records) compose, however small each fit's share, to at least ~0.1 under the RDP
    accountant; _one_vs_rest_share found no share and raised RuntimeError("privacy
    calibration error"), as for a bug. A ValueError names epsilon and says what to do."""
    model = DPLogisticRegression(classes=(0, 1, 2), epsilon=0.01, solver=solver,
                                 bounds=bounds, step=step, clip=step, passes=1, random_state=0)
    with pytest.raises(ValueError, match=r"^epsilon=0\.01 is too small for 3 one-vs-rest fits"
                                         r" at delta=0\.04: .* or fewer classes\.$"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(np.zeros((5, 1)), np.zeros(5, dtype=int))
    assert not hasattr(model, "coef_")


def test_predictions_that_overflow_name_X():
    """Pinned (session 17, hypothesis outside CI): without public bounds (which clip X as in
    fit) a finite X near the float range's edge gave inf predictions (and an R^2 of -inf);
    predict and decision_function raise a ValueError naming X. Ordinary inputs unchanged."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.01, 0.01, (40, 2))        # small features: weights above 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = DPLasso(alpha=0.0, epsilon=math.inf, passes=2, random_state=0).fit(
            X, 100 * X[:, 0])
        clf = DPLogisticRegression(C=math.inf, epsilon=math.inf, passes=2,
                                   random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    assert abs(reg.coef_[0]) > 1 and abs(clf.coef_[0, 0]) > 1
    huge = np.array([[1.7e308, 0.0], [1.0, 1.0]])
    for call in (lambda: reg.predict(huge), lambda: reg.score(huge, np.ones(2)),
                 lambda: clf.decision_function(huge), lambda: clf.predict(huge),
                 lambda: clf.predict_proba(huge)):
        with pytest.raises(ValueError, match=r"overflow float64 on this X"):
            call()
    np.testing.assert_array_equal(reg.predict(X), X @ reg.coef_ + reg.intercept_)
    bounded = DPLasso(alpha=0.0, epsilon=math.inf, passes=2, bounds=(-1, 1), random_state=0)
    assert np.all(np.isfinite(bounded.fit(X, 100 * X[:, 0]).predict(huge)))   # clipped as in fit


@pytest.mark.parametrize("solver", ["auto", "cd", "sgd", "ssp"])
def test_epsilon_beyond_the_solvers_range_is_refused_before_anything_runs(solver):
    """Pinned (session 17, hypothesis outside CI): epsilon = 1e300 (above the solvers' 1e6)
    reached the one-vs-rest share and the private quantile's plan as inf, and a budget's check
    of the releases raised naming target_epsilon (an argument of nobody's call). fit checks
    the solvers' range first, naming epsilon, before anything is charged."""
    from dpsco_core.privacy import Budget

    budget = Budget(1.0, 1e-5)
    model = DPLasso(epsilon=1e300, solver=solver, bounds=(-1.0, 1.0), label_bound=1.0,
                    passes=1, random_state=0, budget=budget)
    with pytest.raises(ValueError, match=r"^epsilon must be in \(0, 1e\+06\] or inf"):
        model.fit(np.array([[1.0, 0.5], [-0.5, 1.0], [0.25, -1.0]]), np.array([1.0, -1.0, 0.5]))
    assert budget.ledger == ()


@pytest.mark.parametrize("options", [dict(rms_row_norm=None), dict(step=0.5, clip=1.0),
                                     dict(solver="ssp"), dict(rms_row_norm=2.0),
                                     dict(solver="sgd", step=0.5, clip=1.0), dict()])
def test_one_vs_rest_refused_whole_before_the_first_fit_is_charged(monkeypatch, options):
    """Session 19 (first-use review): with a budget too small for the K fits, every path but
    the private quantile's paid the first fit and refused the second (Budget(0.5) kept 0.33
    spent and returned no model). The K fits are now checked together before the first
    charge, from the first fit's own release (it runs up to its charge and stops there,
    before its first access to the data). With a budget that suffices,
    the fit is bitwise that without a budget, and the ledger holds the K fits (and the
    quantile's release where there is one)."""
    from dpsco_core.privacy import Budget
    from dpsco_core.privacy.budget import _planned_charge

    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (600, 4)), rng.integers(0, 3, 600)
    args = dict(classes=[0, 1, 2], epsilon=1.0, bounds=(-1, 1), random_state=0, **options)
    small = Budget(0.5, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(dp.exceptions.PrivacyBudgetError):
            DPLogisticRegression(budget=small, **args).fit(X, y)
        assert small.ledger == ()
        enough = Budget(1.0, 1e-5)
        with_budget = DPLogisticRegression(budget=enough, **args).fit(X, y)
        free = DPLogisticRegression(**args).fit(X, y)
    np.testing.assert_array_equal(with_budget.coef_, free.coef_)
    assert len(enough.ledger) == 3 + (options == {})
    # the planning mode is per thread and ends with its context
    with _planned_charge(enough) as planned:
        enough.charge(dp.privacy.GaussianDpEvent(10.0), neighboring_relation="replace_one")
    assert len(planned.releases) == 1 and len(enough.ledger) == 3 + (options == {})
