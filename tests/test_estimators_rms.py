"""Estimators given a public root-mean-square row norm (``rms_row_norm=``): the noise-level
rule's step and clip, the solvers' smoothness constants from rho, no selection (issue 19)."""

import importlib
import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

import dpsco_core as dp  # noqa: E402
from dpsco_core.estimators import DPElasticNet, DPLasso, DPLogisticRegression  # noqa: E402
from dpsco_core.losses import check_loss as get_loss  # noqa: E402
from dpsco_core.public_bounds import rms_smoothness  # noqa: E402
from dpsco_core.tuning import grids  # noqa: E402

BOUND = 4.0


def _data(n=2000, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -BOUND, BOUND)
    y = X @ np.linspace(1.0, -1.0, p) + 0.5 * rng.normal(size=n)
    return X, y


def _spy(monkeypatch, solver):
    """Record the keyword arguments of every dp_cd / dp_sgd call the estimators make."""
    name = {"cd": "dp_cd", "sgd": "dp_sgd"}[solver]
    module = importlib.import_module(f"dpsco_core.solvers.{name}")
    calls, original = [], getattr(module, name)

    def spy(problem, **kwargs):
        calls.append((problem, kwargs))
        return original(problem, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_rms_smoothness_one_scale_and_different_scales():
    rng = np.random.default_rng(1)
    n, p, s = 500, 5, 2.0
    X = rng.normal(size=(n, p)) * [1.0, 2.0, 0.5, 1.0, 3.0]
    rho = math.sqrt(np.mean(np.sum(X ** 2, axis=1)))
    for name in ("half_squared", "logistic"):
        loss = get_loss(name)
        # one scale (no bounds, or equal ones): equal second moments rho^2 / p
        for bounds in (None, np.full(p, 50.0)):
            M, beta = rms_smoothness(loss, rho, p + 1, feature_bounds=bounds,
                                     constant_column=s)
            assert M.shape == (p + 1,)
            assert M.sum() == pytest.approx(loss.smoothness * (rho ** 2 + s ** 2))
            assert M[-1] == pytest.approx(loss.smoothness * s ** 2)   # the intercept: exact
            np.testing.assert_allclose(M[:-1], loss.smoothness * rho ** 2 / p)
        # beta is the trace bound: at least the largest eigenvalue of the data's curvature
        Xa = np.hstack([X, np.full((n, 1), s)])
        top = np.linalg.eigvalsh(Xa.T @ Xa / n)[-1]
        assert beta == pytest.approx(M.sum()) and beta >= loss.smoothness * top
        # bounds that differ: upper bounds min(B_j^2, rho^2) of every column's true M_j
        B = np.abs(X).max(axis=0)
        M, beta = rms_smoothness(loss, rho, p + 1, feature_bounds=B, constant_column=s)
        np.testing.assert_allclose(M[:-1], loss.smoothness * np.minimum(B ** 2, rho ** 2))
        assert np.all(M[:-1] >= loss.smoothness * np.mean(X ** 2, axis=0))
    # a zero bound is a column fixed at 0 (M_j = 0, not counted in p); equal bounds cap rho
    M, _ = rms_smoothness(get_loss("half_squared"), 3.0, 3, feature_bounds=[2.0, 0.0, 2.0])
    np.testing.assert_allclose(M, [4.0, 0.0, 4.0])
    M, _ = rms_smoothness(get_loss("half_squared"), 3.0, 3, feature_bounds=[5.0, 0.0, 5.0])
    np.testing.assert_allclose(M, [4.5, 0.0, 4.5])


def test_rms_smoothness_is_safe_when_scales_differ():
    """The split of rho^2 by B_j^2 (tried first) under-estimates the M_j of a feature that
    fills its bound while a wider one does not; the upper bounds never do."""
    rng = np.random.default_rng(2)
    n = 2000
    X = np.column_stack([rng.uniform(30.0, 42.0, n),            # latitude-like: fills B
                         rng.exponential(1000.0, n).clip(0, 35000)])   # heavy tail
    B = np.array([42.0, 35000.0])
    rho = math.sqrt(np.mean(np.sum(X ** 2, axis=1)))
    loss = get_loss("half_squared")
    M, _ = rms_smoothness(loss, rho, 2, feature_bounds=B)
    truth = np.mean(X ** 2, axis=0)
    assert np.all(M >= truth)
    split = rho ** 2 * B ** 2 / np.sum(B ** 2)
    assert split[0] < truth[0] / 100                           # the old split: 100x short


@pytest.mark.parametrize("kwargs, match", [
    (dict(rms_row_norm=0.0), "rms_row_norm"), (dict(rms_row_norm=math.nan), "rms_row_norm"),
    (dict(rms_row_norm=1.0, feature_bounds=[1.0, -1.0]), "feature_bounds"),
    (dict(rms_row_norm=1.0, feature_bounds=[1.0, math.nan]), "feature_bounds"),
    (dict(rms_row_norm=1.0, feature_bounds=[1.0]), "feature_bounds"),
])
def test_rms_smoothness_validates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rms_smoothness(get_loss("half_squared"), n_features=2, **kwargs)
    with pytest.raises(ValueError, match="not smooth"):
        rms_smoothness(get_loss("hinge"), 1.0, 2)


def _expected(model, problem, solver, epsilon, delta):
    """The rule's (step, clip) and the constants, recomputed from public numbers only."""
    rho, s = model.rms_row_norm, model.intercept_scaling
    rule = grids.default_hyperparameters(problem, solver, rms_row_norm=math.hypot(rho, s),
                                         epsilon=epsilon, delta=delta, passes=model.passes)
    if solver == "sgd":
        rule = grids.Candidate(grids.prediction_sgd_step(
            problem.n_samples, problem.n_features, epsilon=epsilon, delta=delta,
            passes=model.passes, batch_size=grids.auto_batch_size(problem.n_samples,
                                                                  model.passes)), rule.clip)
    p = problem.n_features
    M, beta = rms_smoothness(problem.loss, rho, p, feature_bounds=np.full(p - 1, BOUND),
                             constant_column=s)
    return rule, M, beta


@pytest.mark.filterwarnings("error::dpsco_core.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("solver", ["cd", "sgd"])
@pytest.mark.parametrize("estimator", ["lasso", "logistic"])
def test_rule_fit_is_one_run_with_public_hyperparameters(monkeypatch, solver, estimator):
    """With rms_row_norm, fit runs the solver once at the whole budget, with the rule's step
    and clip and rho's constants: the same on a dataset and on its worst neighbours
    (an extreme record replacing one, or a record zeroed), nothing read from the data."""
    from dpsco_core.privacy.events import RepeatAndSelectDpEvent

    X, y = _data()
    if estimator == "lasso":
        make = lambda: DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND),  # noqa: E731
                               label_bound=10.0, passes=5, solver=solver, random_state=0,
                               rms_row_norm=2.0)
        labels = y
    else:
        make = lambda: DPLogisticRegression(epsilon=1.0, bounds=(-BOUND, BOUND),  # noqa: E731
                                            passes=5, solver=solver, random_state=0,
                                            rms_row_norm=2.0)
        labels = (y > 0).astype(int)
    X2, y2 = X.copy(), labels.copy()
    X2[3], y2[3] = BOUND, (10.0 if estimator == "lasso" else 1 - labels[3])
    X3 = X.copy()
    X3[3] = 0.0
    calls = _spy(monkeypatch, solver)
    models = [make().fit(A, b) for A, b in [(X, labels), (X2, y2), (X3, labels)]]
    assert len(calls) == 3                                 # one run per fit: no selection
    model = models[0]
    assert model.selection_ is None and model.solver_ == solver
    report = model.privacy_
    assert not isinstance(report.event, RepeatAndSelectDpEvent)
    assert report.unconditional and 0.99 <= report.epsilon <= 1.0
    acc = dp.privacy.RdpAccountant(report.orders, report.neighboring_relation,
                                   conversion=report.conversion)
    assert acc.compose(report.event).get_epsilon(report.delta) == pytest.approx(report.epsilon,
                                                                                rel=1e-9)
    assert all(m.privacy_.event == report.event for m in models[1:])
    problem, kwargs = calls[0]
    rule, M, beta = _expected(model, problem, solver, 1.0, 1.0 / X.shape[0] ** 2)
    assert kwargs["step"] == rule.step and kwargs["clip"] == pytest.approx(rule.clip,
                                                                           rel=1e-12)
    if solver == "cd":
        np.testing.assert_allclose(kwargs["smoothness"], M, rtol=1e-12)
    else:
        assert kwargs["smoothness"] == pytest.approx(beta, rel=1e-12)
    for _, other in calls[1:]:
        assert other["step"] == kwargs["step"] and other["clip"] == kwargs["clip"]
        np.testing.assert_array_equal(other["smoothness"], kwargs["smoothness"])
    again = make().fit(X, labels)                          # reproducible from the seed
    np.testing.assert_array_equal(again.coef_, model.coef_)


def test_given_step_or_clip_is_kept(monkeypatch):
    X, y = _data()
    calls = _spy(monkeypatch, "cd")
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=10.0, passes=2,
              solver="cd", random_state=0, rms_row_norm=2.0)
    DPLasso(**kw, clip=0.5).fit(X, y)
    DPLasso(**kw, step=0.3).fit(X, y)
    assert calls[0][1]["clip"] == 0.5 and calls[0][1]["step"] == 1.0
    assert calls[1][1]["step"] == 0.3 and calls[1][1]["clip"] != 0.5
    # both given: no rule, but rho's constants still set the steps
    DPLasso(**kw, step=0.3, clip=0.5).fit(X, y)
    assert calls[2][1]["step"] == 0.3 and calls[2][1]["clip"] == 0.5
    np.testing.assert_array_equal(calls[2][1]["smoothness"], calls[1][1]["smoothness"])


def test_rule_needs_a_label_bound_for_regression():
    X, y = _data(300)
    with pytest.raises(ValueError, match="label_bound"):
        DPLasso(epsilon=1.0, bounds=(-BOUND, BOUND), solver="cd", rms_row_norm=2.0).fit(X, y)


@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_bad_rms_row_norm(value):
    X, y = _data(300)
    with pytest.raises(ValueError, match="rms_row_norm"):
        DPLasso(epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=10.0, solver="cd",
                rms_row_norm=value).fit(X, y)


def test_rms_row_norm_is_a_parameter():
    from sklearn.base import clone

    for cls in (DPLasso, DPElasticNet, DPLogisticRegression):
        model = clone(cls(rms_row_norm=2.5))
        assert model.get_params()["rms_row_norm"] == 2.5


@pytest.mark.filterwarnings("error::dpsco_core.exceptions.PrivacyLeakWarning")
def test_without_bounds_the_rule_runs_unconditionally():
    """rho alone gives the constants and the rule the clip: no bound is read from the data
    (DP-CD's and DP-SGD's sensitivities come from their clips; a regressor's label bound
    needs feature bounds, so the classifier here)."""
    X, y = _data(1000)
    for solver in ("cd", "sgd"):
        model = DPLogisticRegression(epsilon=1.0, passes=2, solver=solver, random_state=0,
                                     rms_row_norm=2.0).fit(X, (y > 0).astype(int))
        assert model.privacy_.unconditional, model.privacy_.conditions


def test_one_vs_rest_rule_spends_the_whole_budget():
    from dpsco_core.estimators import _iterative_one_vs_rest_epsilon
    from dpsco_core.tuning.search import _solver_event

    X, y = _data(900)
    labels = np.digitize(y, [-1.0, 1.0])                   # three classes
    K, delta = 3, 1e-6
    model = DPLogisticRegression(classes=[0, 1, 2], epsilon=1.0, delta=delta, passes=2,
                                 bounds=(-BOUND, BOUND), solver="cd", random_state=0,
                                 rms_row_norm=2.0).fit(X, labels)
    assert model.selection_ is None and 0.99 <= model.privacy_.epsilon <= 1.0
    n, p = X.shape[0], X.shape[1] + 1
    per_fit = _iterative_one_vs_rest_epsilon(1.0, delta, K, ("cd", n, p, 2.0, 256, False,
                                                             "poisson", None))
    expected = _solver_event("cd", per_fit, delta / K, n, p, 2.0, 256, False, "poisson")
    assert model.privacy_.event.events == (expected,) * K


def test_rule_beats_the_selection_on_standardized_data():
    """The reason for the option (README, estimators table): on standardized features the
    rule's single run at the whole budget is better than a selection's trials at a third of
    it. Fixed seeds, held-out R^2 over 3 splits."""
    X, y = _data(4000, p=8, seed=3)
    rule, select = [], []
    for seed in range(3):
        idx = np.random.default_rng(seed).permutation(len(y))
        tr, te = idx[:3000], idx[3000:]
        kw = dict(alpha=1e-3, epsilon=0.5, bounds=(-BOUND, BOUND), label_bound=10.0,
                  passes=10, solver="cd", random_state=seed)
        rule.append(DPLasso(**kw, rms_row_norm=math.sqrt(8)).fit(X[tr], y[tr])
                    .score(X[te], y[te]))
        select.append(DPLasso(**kw, rms_row_norm=None).fit(X[tr], y[tr]).score(X[te], y[te]))
    assert np.mean(rule) > np.mean(select)


def test_bounds_that_differ_give_upper_bounds(monkeypatch):
    X, y = _data()
    X = X * [1.0, 10.0, 1.0, 100.0]
    B = np.array([BOUND, 10 * BOUND, BOUND, 100 * BOUND])
    calls = _spy(monkeypatch, "cd")
    DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-B, B), label_bound=10.0, passes=2, solver="cd",
            random_state=0, rms_row_norm=50.0).fit(X, y)
    problem, kwargs = calls[0]
    M, _ = rms_smoothness(problem.loss, 50.0, 5, feature_bounds=B, constant_column=1.0)
    np.testing.assert_array_equal(kwargs["smoothness"], M)
    np.testing.assert_allclose(M[:-1], np.minimum(B ** 2, 2500.0))


def test_batch_size_auto_and_given():
    """batch_size="auto" (default) is auto_batch_size(n, passes), a given one is kept (at most
    n): both read from the DP-SGD event's sampling rate b / n; bad values are refused."""
    X, y = _data()
    n = X.shape[0]
    kw = dict(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=4.0, solver="sgd",
              step=0.5, clip=1.0, passes=2, random_state=0)

    def rate(model):
        event = model.privacy_.event
        while not hasattr(event, "sampling_probability"):
            event = event.event
        return event.sampling_probability

    assert rate(DPLasso(**kw).fit(X, y)) == grids.auto_batch_size(n, 2) / n
    assert rate(DPLasso(**kw, batch_size=64).fit(X, y)) == 64 / n
    assert rate(DPLasso(**kw, batch_size=10 * n).fit(X, y)) == 1.0
    for bad, err in (("big", TypeError), (0, ValueError), (2.5, TypeError)):
        with pytest.raises(err, match="batch_size"):
            DPLasso(**kw, batch_size=bad).fit(X, y)


def test_shuffled_batches_take_the_unamplified_noise_level(monkeypatch):
    """sampling="shuffle" (replace-one, no amplification): the rule's clip and step at
    sgd_noise_level's sqrt(n / b) times Poisson's noise level (at Poisson's, the rule's clip
    was 8 times too large on California: held-out R^2 0.11)."""
    calls = _spy(monkeypatch, "sgd")
    X, y = _data()
    n = X.shape[0]
    model = DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=4.0,
                    solver="sgd", sampling="shuffle", rms_row_norm=2.0, passes=3,
                    random_state=0).fit(X, y)
    problem, kwargs = calls[0]
    b = grids.auto_batch_size(n, 3)
    rho = math.hypot(2.0, model.intercept_scaling)
    delta = 1.0 / n ** 2
    rule = grids.default_hyperparameters(problem, "sgd", rms_row_norm=rho, epsilon=1.0,
                                         delta=delta, passes=3, sampling="shuffle",
                                         batch_size=b)
    step = grids.prediction_sgd_step(n, problem.n_features, epsilon=1.0, delta=delta,
                                     passes=3, batch_size=b, sampling="shuffle")
    assert kwargs["clip"] == pytest.approx(rule.clip, rel=1e-12) and kwargs["step"] == step
    poisson = grids.default_hyperparameters(problem, "sgd", rms_row_norm=rho, epsilon=1.0,
                                            delta=delta, passes=3)
    assert rule.clip < poisson.clip
    assert model.privacy_.neighboring_relation.value == "replace_one"


def test_dp_cd_rule_takes_replace_one_noise_level(monkeypatch):
    """The estimators' DP-CD runs under replace-one (sensitivity 2C): the rule's clip is the one
    at twice the zero-out noise level its constant was fitted on."""
    calls = _spy(monkeypatch, "cd")
    X, y = _data()
    model = DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=4.0,
                    solver="cd", rms_row_norm=2.0, random_state=0).fit(X, y)
    problem, kwargs = calls[0]
    kw = dict(rms_row_norm=math.hypot(2.0, model.intercept_scaling), epsilon=1.0,
              delta=1.0 / X.shape[0] ** 2, passes=model.passes)
    replace = grids.default_hyperparameters(problem, "cd", neighboring_relation="replace_one",
                                            **kw)
    zero = grids.default_hyperparameters(problem, "cd", neighboring_relation="zero_out", **kw)
    assert model.privacy_.neighboring_relation.value == "replace_one"
    assert kwargs["clip"] == pytest.approx(replace.clip, rel=1e-12) and replace.clip < zero.clip


@pytest.mark.parametrize("kw", [dict(solver="sgd", sampling="shuffle"), dict(solver="auto")],
                         ids=["sgd-shuffle", "auto"])
def test_shuffle_and_auto_choices_read_nothing_from_the_records(monkeypatch, kw):
    """Session 14's choices (the shuffled batches' noise level, the batch "auto", the
    prediction step, auto_solver given rms_row_norm) on a dataset and its worst neighbours
    under replace-one (an extreme record replacing one) and zero-out (a record zeroed): the
    same solver, step, clip, batch and event; the report recomputed from the accountant."""
    X, y = _data()
    X2, y2 = X.copy(), y.copy()
    X2[3], y2[3] = BOUND, 10.0
    X3 = X.copy()
    X3[3] = 0.0
    solver = "sgd" if kw["solver"] == "sgd" else "cd"
    calls = _spy(monkeypatch, solver)
    models = [DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-BOUND, BOUND), label_bound=10.0,
                      passes=3, random_state=0, rms_row_norm=2.0, **kw).fit(A, b)
              for A, b in [(X, y), (X2, y2), (X3, y)]]
    assert len(calls) == 3 and {m.solver_ for m in models} == {solver}
    keys = ("step", "clip", "batch_size") if solver == "sgd" else ("step", "clip")
    for _, other in calls[1:]:
        assert all(other[k] == calls[0][1][k] for k in keys)
    report = models[0].privacy_
    assert report.neighboring_relation.value == "replace_one"
    assert all(m.privacy_.event == report.event for m in models[1:])
    acc = dp.privacy.RdpAccountant(report.orders, report.neighboring_relation,
                                   conversion=report.conversion)
    assert acc.compose(report.event).get_epsilon(report.delta) == pytest.approx(
        report.epsilon, rel=1e-9) and report.epsilon <= 1.0
