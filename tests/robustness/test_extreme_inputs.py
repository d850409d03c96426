"""Extreme magnitudes through every public function that takes arrays (issue 16, fuzzing).

Contract, for inputs drawn with every binary exponent equally likely (subnormals to 1.8e308,
both signs, NaN and inf among them) and tiny privacy budgets:

- the call returns finite output that is *correct* (checked against a closed form or the
  function's defining property where one exists), or
- it raises ValueError/TypeError whose message names one of the call's arguments (a
  ``ValueError`` with any other message fails: accepting any error would let a function that
  rejects everything pass).

Projections are checked to high precision in ``test_projections_extreme.py``; sparse
structures in ``test_sparse_validation.py``.
"""

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsco_core as dp
from dpsco_core import losses, mechanisms
from dpsco_core.penalties import L1, L2, Box, ElasticNet
from dpsco_core.projections import project_l1_ball, project_l2_ball, project_simplex
from dpsco_core.tree import TreeAggregation

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MAX = float(np.finfo(np.float64).max)


def _magnitude(m, e, sign):
    return sign * math.ldexp(m, e)


FINITE = st.one_of(
    st.builds(_magnitude, st.floats(0.5, 1.0), st.integers(-1074, 1023),
              st.sampled_from([1.0, -1.0])).map(lambda x: x if math.isfinite(x) else MAX),
    st.sampled_from([0.0, -0.0, 5e-324, MAX, -MAX, 1.0, -1.0, 1e150, 1e-150]))
ANY = st.one_of(FINITE, FINITE, FINITE, st.sampled_from([math.nan, math.inf, -math.inf]))


def vectors(elements=ANY, min_size=1, max_size=5):
    return st.lists(elements, min_size=min_size, max_size=max_size).map(np.array)


def _names_an_argument(exc, names):
    message = str(exc)
    return any(re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", message) for n in names)


def run(call, names):
    """call() -> output, or None after checking the error names one of ``names``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()
    except (ValueError, TypeError) as exc:
        assert _names_an_argument(exc, names), f"{type(exc).__name__} names none of {names}: {exc}"
        return None


def _finite(out):
    assert np.all(np.isfinite(np.asarray(out, dtype=np.float64))), out


# ------------------------------------------------------------------ projections, prox, losses

@SETTINGS
@given(vectors(), st.one_of(FINITE.map(abs), st.sampled_from([math.nan, -1.0, math.inf])),
       st.sampled_from(["l1", "l2", "simplex"]))
def test_projections(v, radius, kind):
    fn = {"l1": project_l1_ball, "l2": project_l2_ball, "simplex": project_simplex}[kind]
    out = run(lambda: fn(v, radius), ["v", "radius", "total", "center"])
    if out is None:
        assert not np.all(np.isfinite(v)) or not 0 <= radius <= (MAX if kind == "simplex"
                                                                  else math.inf) or \
            kind == "l2", "a valid projection was rejected"
        return
    _finite(out)
    if kind == "l1":
        assert np.sum(np.abs(out)) <= radius * (1 + 1e-12) or np.sum(np.abs(out)) == 0
    elif kind == "simplex":
        assert np.all(out >= 0)
        assert abs(np.sum(out) - radius) <= 1e-12 * radius * len(v) + len(v) * 5e-324


@pytest.mark.parametrize("v", [[math.nan], [math.nan, math.nan], [math.nan, 1.0]])
@pytest.mark.parametrize("radius", [0.0, 1.0, math.inf])
def test_project_l2_ball_all_nan_regression(v, radius):
    """Pinned (session 17, hypothesis outside CI): the kernel's rescaled norm skipped NaN in
    its max-abs scan, so a v of NaNs only had distance 0 from the centre and came back as
    "inside" ([nan] returned for project_l2_ball([nan], 0.0); likewise [nan, 1] about the
    centre [1, 1]); the kernel now returns a NaN distance and the wrapper raises."""
    from dpsco_core._kernels import _prox
    v = np.array(v)
    with pytest.raises(ValueError, match=r"\bv must contain only finite values"):
        project_l2_ball(v, radius)
    with pytest.raises(ValueError, match=r"\bv must contain only finite values"):
        project_l2_ball(v, radius, np.ones(v.size))
    assert math.isnan(_prox.project_l2_ball(v, np.empty(0), radius, np.empty_like(v), 1))


PENALTIES = st.sampled_from([L1(0.5), L1(1e300), L2(2.0), L2(1e-300), ElasticNet(1.0, 1e200),
                             Box(-1.0, 1.0), Box(-MAX, MAX)])


@SETTINGS
@given(vectors(), st.one_of(FINITE.map(abs), st.just(math.nan)), PENALTIES)
def test_prox(u, step, penalty):
    out = run(lambda: penalty.prox(u, step), ["u", "step"])
    if out is None:
        return
    _finite(out)
    t = step
    if isinstance(penalty, L1):
        expected = np.sign(u) * np.maximum(np.abs(u) - t * penalty.lam, 0.0)
    elif isinstance(penalty, L2):
        expected = u / (1.0 + t * penalty.lam)
    elif isinstance(penalty, Box):
        expected = np.clip(u, *penalty.params)
    else:
        expected = None
    if expected is not None:
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-300)
    assert np.all(np.abs(out) <= np.abs(u))      # every prox here shrinks towards 0 or a box


@SETTINGS
@given(vectors(), st.sampled_from(["squared", "half_squared", "logistic", "huber", "hinge",
                                   "absolute"]), st.data())
def test_losses(z, name, data):
    loss = losses.check_loss(name)
    labels = st.sampled_from([-1.0, 1.0]) if name in ("logistic", "hinge") else ANY
    y = data.draw(st.lists(labels, min_size=z.size, max_size=z.size).map(np.array))
    for method in ("value", "deriv"):
        out = run(lambda: getattr(loss, method)(z, y), ["z", "y"])
        if out is not None:
            _finite(out)
            if method == "value":
                assert np.all(out >= 0)
            if name in ("squared", "half_squared") and method == "deriv":
                factor = 2.0 if name == "squared" else 1.0
                np.testing.assert_allclose(out, factor * (z - y), rtol=1e-12)


# ------------------------------------------------------------------ mechanisms

BUDGETS = st.sampled_from([1e-300, 1e-30, 1e-3, 1.0, 50.0, math.nan, -1.0, 0.0])


@SETTINGS
@given(vectors(), st.one_of(FINITE.map(abs), st.just(math.inf)), BUDGETS,
       st.sampled_from(["gaussian", "laplace"]))
def test_additive_mechanisms(x, sensitivity, epsilon, kind):
    if kind == "gaussian":
        call = lambda: mechanisms.gaussian_mechanism(x, sensitivity=sensitivity,  # noqa: E731
                                                     epsilon=epsilon, delta=1e-6,
                                                     random_state=0)
    else:
        call = lambda: mechanisms.laplace_mechanism(x, sensitivity=sensitivity,  # noqa: E731
                                                    epsilon=epsilon, random_state=0)
    out = run(call, ["x", "sensitivity", "epsilon", "delta", "noise scale"])
    if out is not None:
        _finite(out)
        assert out.shape == x.shape


@SETTINGS
@given(vectors(min_size=1), st.one_of(FINITE.map(abs)), BUDGETS,
       st.sampled_from(["report_noisy_max", "exponential_mechanism", "permute_and_flip"]))
def test_selection_mechanisms(scores, sensitivity, epsilon, name):
    out = run(lambda: getattr(mechanisms, name)(scores, sensitivity=sensitivity, epsilon=epsilon,
                                                random_state=0),
              ["scores", "sensitivity", "epsilon", "noise scale"])
    if out is not None:
        assert 0 <= int(out) < scores.size


@SETTINGS
@given(vectors(min_size=3, max_size=3), st.sampled_from([0.0, 1.0, 1e300]))
def test_tree_aggregation(x, noise_scale):
    tree = TreeAggregation(3, 2, noise_scale=noise_scale, random_state=0)
    out = run(lambda: tree.next(x), ["x", "noise_scale"])
    if out is not None:
        assert np.all(np.isfinite(x))
        if noise_scale == 0.0:
            np.testing.assert_array_equal(out, x)


# ------------------------------------------------------------------ Problem and solvers

@st.composite
def problems(draw):
    n, p = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.one_of(ANY, st.floats(-3, 3)), min_size=n * p,
                               max_size=n * p))).reshape(n, p)
    y = np.array(draw(st.lists(st.one_of(ANY, st.floats(-3, 3)), min_size=n, max_size=n)))
    return X, y


@SETTINGS
@given(problems(), st.sampled_from([1e-300, 1e-100, 1e-30, 1e-3, 1.0, 1e5, 1e300]),
       st.sampled_from(["dp_cd", "dp_sgd"]))
def test_problem_and_solvers_at_tiny_budgets(data, epsilon, solver):
    X, y = data
    prob = run(lambda: dp.Problem(X, y), ["X", "y"])
    if prob is None:
        return
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    assert np.max(np.abs(X)) <= 1e150 and np.max(np.abs(y)) <= 1e150
    kwargs = dict(epsilon=epsilon, delta=1e-5, passes=1, random_state=0)
    if solver == "dp_sgd":
        kwargs["batch_size"] = 2
    res = run(lambda: getattr(dp, solver)(prob, **kwargs),
              ["epsilon", "X", "step", "clip", "beta", "smoothness"])
    if res is not None:
        _finite(res.coef)
        assert res.privacy.epsilon <= epsilon


@pytest.mark.parametrize("epsilon", [1e-300, 1e-200])
def test_dp_cd_tiny_budget_error_names_epsilon(epsilon):
    prob = dp.Problem(np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="epsilon"):
        dp.dp_cd(prob, epsilon=epsilon, delta=1e-5, passes=1, random_state=0)


@SETTINGS
@given(vectors(min_size=2, max_size=2), st.one_of(FINITE.map(abs), st.just(math.nan)),
       st.sampled_from([1.0, 1e300, 1e-300]))
def test_resque_queries(x, smoothing_radius, gradient_scale):
    from dpsco_core.resque import resque_estimate, resque_log_weights

    zeta = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 0.0]])
    names = ["x", "center", "smoothing_radius", "gradients", "zeta"]
    logw = run(lambda: resque_log_weights(x, np.zeros(2), smoothing_radius, zeta), names)
    if logw is not None:
        _finite(logw)
        v = x / smoothing_radius
        np.testing.assert_allclose(logw, zeta @ v - 0.5 * v @ v, rtol=1e-9,
                                   atol=1e-9 * max(1.0, float(v @ v)))
    est = run(lambda: resque_estimate(x, np.zeros(2), smoothing_radius, zeta,
                                      np.full((3, 2), gradient_scale)), names)
    if est is not None:
        _finite(est)
