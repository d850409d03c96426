"""Extreme and malformed inputs through the MLMC and ball-acceleration functions not fuzzed
by ``test_extreme_inputs*.py`` (issue 16, fuzzing): ``BoxDomain``, ``BallIntersection``,
``LambdaBisection``, ``FiniteSum``, ``ellipsoid_method``, ``exact_optimum_draws``,
``GLMOracle(rows=)``, ``moreau_agd``, ``composite_agd`` and ``mlmc_dp_sco``.

Same contract and helpers as ``test_extreme_inputs.py``: each call returns finite, correct
output or raises ValueError/TypeError whose message names one of the call's arguments (a
user-supplied oracle counts as an argument). No call may hang: default iteration counts that
an accuracy target makes astronomically large are refused. Tiny sizes and few examples keep
the file to seconds.
"""

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsco_core as dp
from dpsco_core.ball_acceleration import BallIntersection, LambdaBisection
from dpsco_core.mlmc._checks import MAX_DEFAULT_ITER
from dpsco_core.mlmc.composite_agd import composite_agd
from dpsco_core.mlmc.domains import BoxDomain, L2Ball
from dpsco_core.mlmc.exact_estimator import FiniteSum, ellipsoid_method, exact_optimum_draws
from dpsco_core.mlmc.moreau_agd import moreau_agd
from dpsco_core.mlmc.oracles import GLMOracle

from test_extreme_inputs import ANY, FINITE, _finite, run, vectors

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(max_examples=15, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
POSITIVE = st.one_of(FINITE.map(abs), st.sampled_from([math.nan, math.inf, -1.0, 0.0]))
#: what a careless caller passes where a number or a vector is expected
JUNK = st.sampled_from([1j, "a", "1.0", [1.0, "x"], [[1.0, 2.0]], [], None])
BOUNDS = st.one_of(ANY, vectors(min_size=2, max_size=2), JUNK)


def _vec2(elements=ANY):
    return vectors(elements, min_size=2, max_size=2)


# ------------------------------------------------------------------ domains

@SETTINGS
@given(BOUNDS, BOUNDS, st.one_of(_vec2(), vectors(), JUNK))
def test_box_domain(lower, upper, v):
    box = run(lambda: BoxDomain(lower, upper), ["lower", "upper"])
    if box is None:
        return
    out = run(lambda: box.project(v), ["v", "lower", "upper"])
    if out is None:
        return
    _finite(out)
    assert np.all(box.lower <= out) and np.all(out <= box.upper)
    np.testing.assert_array_equal(out, np.clip(np.asarray(v, dtype=float), box.lower, box.upper))


@SETTINGS
@given(st.sampled_from(["box", "ball", "space"]), POSITIVE, st.one_of(_vec2(), JUNK),
       st.sampled_from([1, 5, 0, -1, 2.5, "a"]), st.one_of(_vec2(), vectors(), JUNK))
def test_ball_intersection(kind, radius, center, n_iter, v):
    domain = {"box": BoxDomain(-1.0, 1.0), "ball": L2Ball(2.0, np.array([1.0, 0.0])),
              "space": dp.mlmc.domains.EuclideanSpace()}[kind]
    dom = run(lambda: BallIntersection(domain, radius, center, n_iter=n_iter),
              ["radius", "center", "n_iter", "domain"])
    if dom is None:
        return
    out = run(lambda: dom.project(v), ["v", "radius", "center"])
    if out is None:
        return
    _finite(out)
    c = np.asarray(center, dtype=float)
    dist = float(np.linalg.norm((out - c) / max(1.0, float(np.max(np.abs(c))))))
    scale = max(1.0, float(np.max(np.abs(c))))
    if kind == "box":
        assert np.all(np.abs(out) <= 1.0)          # Dykstra ends with the box's projection
    elif kind == "ball" and dom._exact is not None:
        assert np.linalg.norm(out - np.array([1.0, 0.0])) <= 2.0 * (1 + 1e-9)
        assert dist <= radius / scale * (1 + 1e-9) + 1e-12


# ------------------------------------------------------------------ lambda bisection

def _quadratic_ball_oracle(b):
    """argmin_x ||x - b||^2 / 2 + lam / 2 ||x - c||^2 over the domain (exact)."""
    def oracle(center, lam, phi, domain, random_state, linear=None):
        return domain.project((b + lam * center) / (1.0 + lam))
    return oracle


@FEW
@given(POSITIVE, POSITIVE, POSITIVE, st.one_of(_vec2(), JUNK), st.one_of(_vec2(), vectors()),
       st.one_of(FINITE.map(abs), st.sampled_from([math.nan, -1.0])),
       st.sampled_from([0.01, 0.0, math.nan, "a"]), st.sampled_from([20, 0, -1, 1.5]))
def test_lambda_bisection(radius, lam_min, lam_max, x, v, A, phi_fraction, max_bisections):
    b = np.array([3.0, -1.0])
    nl = run(lambda: LambdaBisection(_quadratic_ball_oracle(b), radius, lam_min, lam_max,
                                     phi_fraction=phi_fraction, max_bisections=max_bisections),
             ["radius", "lam_min", "lam_max", "phi_fraction", "max_bisections"])
    if nl is None:
        return
    lam = run(lambda: nl(x, v, A, 0), ["x", "v", "A", "ball_oracle"])
    if lam is None:
        return
    assert math.isfinite(lam) and nl.lam_min <= lam <= nl.lam_max


# ------------------------------------------------------------------ exact estimator

def _finite_sum(b, how="ok"):
    """F(x) = mean_i ||x - b_i||^2 / 2 (1-strongly convex, minimizer mean(b))."""
    def value(x, i):
        return 0.5 * float(np.sum((x - b[i]) ** 2))

    def subgradient(x, i):
        g = x - b[i]
        return {"ok": g, "nan": g * np.nan, "shape": np.append(g, 1.0), "str": "g"}[how]
    return FiniteSum(value, subgradient, len(b))


@SETTINGS
@given(st.one_of(_vec2(), vectors(min_size=1, max_size=3), JUNK), POSITIVE,
       st.sampled_from([0, 1, 4, -1, 2.5]), st.sampled_from(["ok"] * 4 + ["nan", "shape", "str"]))
def test_ellipsoid_method(center, radius, n_steps, how):
    F = _finite_sum(np.array([[1.0, 2.0], [3.0, -2.0]]) if np.size(center) != 3
                    else np.array([[1.0, 2.0, 0.0]]), how)
    out = run(lambda: ellipsoid_method(F.full_value, F.full_subgradient, center, radius,
                                       n_steps),
              ["center", "radius", "n_steps", "value", "subgradient"])
    if out is None:
        return
    _finite(out)
    c = np.asarray(center, dtype=float)
    assert out.shape == (n_steps + 1, c.shape[0])
    assert np.all(np.linalg.norm(out - c, axis=1) <= radius * (1 + 1e-9))
    values = [F.full_value(row) for row in out]
    assert all(b <= a for a, b in zip(values, values[1:]))     # best so far: non-increasing


@FEW
@given(st.one_of(_vec2(), vectors(min_size=1, max_size=1)), POSITIVE, POSITIVE,
       st.sampled_from([60, 0, "a"]), st.sampled_from(["ok"] * 4 + ["nan", "shape"]))
def test_exact_optimum_draws(x0, mu, radius, max_level, how):
    F = _finite_sum(np.array([[1.0, 2.0], [3.0, -2.0]]), how)
    out = run(lambda: exact_optimum_draws(F, mu, x0, radius, n_copies=1, j0=2,
                                          max_level=max_level, random_state=0),
              ["x0", "mu", "radius", "max_level", "subgradient", "value", "problem"])
    if out is not None:
        _finite(out.samples)


def test_exact_optimum_draws_rejects_non_finite_sums():
    with pytest.raises(TypeError, match="problem must be a FiniteSum"):
        exact_optimum_draws(np.ones(3), 1.0, np.zeros(2), 1.0)
    with pytest.raises(TypeError, match="value must be callable"):
        FiniteSum(1.0, lambda x, i: x, 2)


# ------------------------------------------------------------------ GLM oracle rows

ROW_PART = st.one_of(st.none(), st.integers(-8, 8), st.sampled_from([0.5, "1", True]))


@SETTINGS
@given(ROW_PART, ROW_PART, ROW_PART, st.one_of(_vec2(), vectors(), JUNK))
def test_glm_oracle_rows(start, stop, step, x):
    X = np.arange(12.0).reshape(6, 2) / 10.0 - 0.5
    problem = dp.Problem(X, np.array([1.0, -1.0] * 3), loss="logistic")
    rows = slice(start, stop, step)
    oracle = run(lambda: GLMOracle(problem, clip=1.0, rows=rows), ["rows", "rows.start",
                                                                    "rows.stop", "rows.step"])
    if oracle is None:
        return
    np.testing.assert_array_equal(oracle.X, X[rows])
    g = run(lambda: oracle(x, np.random.default_rng(0)), ["x"])
    if g is not None:
        _finite(g)
        assert np.linalg.norm(g) <= 1.0 * (1 + 1e-12)


# ------------------------------------------------------------------ AGD variants

def _prox_oracle(center, lam, delta, sigma, domain, random_state, linear=None):
    b = np.resize([1.0, -1.0], np.shape(center))     # any dimension: the oracle is valid
    a = 0.0 if linear is None else linear
    with np.errstate(over="ignore", invalid="ignore"):
        z = (b - a + lam * np.asarray(center)) / (1.0 + lam)
    # a NaN (lam ~ 1e308) is handed back as such: the caller must name the oracle
    return domain.project(z) if np.all(np.isfinite(z)) else z


def _ball_oracle(center, lam, phi, domain, random_state, linear=None):
    return _prox_oracle(center, lam, 0.0, 0.0, domain, random_state, linear)


def _iterations_or_small(default, n_iter):
    """The test runs at most a few iterations: a default count that is valid but large is
    replaced by n_iter = 3 (the cap itself is checked when the default exceeds it)."""
    if n_iter is None and 50 < default <= MAX_DEFAULT_ITER:
        return 3
    return n_iter


@SETTINGS
@given(st.one_of(_vec2(), vectors(), JUNK), POSITIVE, POSITIVE, POSITIVE,
       st.sampled_from([None, 1, 3, 0, 2.5]), st.sampled_from(["ok"] * 3 + ["nan", "shape"]))
def test_moreau_agd(x0, epsilon, lipschitz, radius, n_iter, how):
    try:
        default = 4.0 * math.sqrt(3.0) * lipschitz * 2.0 * radius / epsilon
    except (TypeError, ZeroDivisionError):
        default = math.nan
    n_iter = _iterations_or_small(default, n_iter)

    def prox(*args, **kw):
        out = _prox_oracle(*args, **kw)
        return {"ok": out, "nan": out * np.nan, "shape": out[:1]}[how]
    res = run(lambda: moreau_agd(prox, L2Ball(5.0), x0, epsilon=epsilon, lipschitz=lipschitz,
                                 radius=radius, n_iter=n_iter, random_state=0),
              ["x0", "epsilon", "lipschitz", "radius", "n_iter", "prox_oracle", "project"])
    if res is not None:
        _finite(res.x)
        _finite(res.v)
        assert np.linalg.norm(res.x) <= 5.0 * (1 + 1e-9)


@SETTINGS
@given(st.one_of(_vec2(), vectors(), JUNK), POSITIVE, POSITIVE,
       st.one_of(st.none(), POSITIVE), st.sampled_from([None, 1, 3, 0]),
       st.sampled_from(["ok"] * 3 + ["nan", "shape"]))
def test_composite_agd(x0, smoothness, radius, epsilon, n_iter, how):
    try:
        default = 2.0 * math.sqrt(smoothness / epsilon) * radius
    except (TypeError, ZeroDivisionError, ValueError):
        default = math.nan
    if epsilon is not None:
        n_iter = None if not 0 < default <= 50 and default <= MAX_DEFAULT_ITER * 10 else n_iter
        if n_iter is not None:
            epsilon = None

    def grad(y):
        g = np.asarray(y) * 0.5
        return {"ok": g, "nan": g * np.nan, "shape": g[:1]}[how]
    res = run(lambda: composite_agd(grad, _ball_oracle, _prox_oracle, x0, smoothness=smoothness,
                                    radius=radius, epsilon=epsilon, n_iter=n_iter,
                                    random_state=0),
              ["x0", "smoothness", "radius", "epsilon", "n_iter", "grad_smooth", "ball_oracle",
               "prox_oracle"])
    if res is not None:
        _finite(res.x)


def test_default_iteration_counts_are_capped_not_hung():
    # epsilon = 1e-300 used to start a loop of ~1e301 (moreau_agd) and ~2e150 (composite_agd)
    # iterations: a hang. Explicit n_iter is still honoured.
    with pytest.raises(ValueError, match="epsilon"):
        moreau_agd(_prox_oracle, L2Ball(5.0), np.ones(2), epsilon=1e-300, lipschitz=1.0,
                   radius=1.0, random_state=0)
    with pytest.raises(ValueError, match="epsilon"):
        composite_agd(lambda y: y, _ball_oracle, _prox_oracle, np.ones(2), smoothness=1.0,
                      radius=1.0, epsilon=1e-300, random_state=0)
    res = moreau_agd(_prox_oracle, L2Ball(5.0), np.ones(2), epsilon=1e-300, lipschitz=1.0,
                     radius=1.0, n_iter=2, random_state=0)
    _finite(res.x)


# ------------------------------------------------------------------ mlmc_dp_sco

@FEW
@given(st.one_of(st.none(), _vec2(), vectors(), JUNK),
       st.sampled_from([1.0, 1e-300, math.inf, 0.0, math.nan]), POSITIVE, POSITIVE,
       st.one_of(st.none(), POSITIVE), st.sampled_from([16.0, 1.0, 1e300, 0.5]),
       st.one_of(st.none(), POSITIVE))
def test_mlmc_dp_sco(coef_init, epsilon, radius, lipschitz, step, step_decay, clip_factor):
    X = np.random.default_rng(0).standard_normal((16, 2))
    problem = dp.Problem(X, np.sign(X[:, 0]), loss="logistic")
    res = run(lambda: dp.mlmc.mlmc_dp_sco(problem, epsilon=epsilon, delta=1e-5, radius=radius,
                                          lipschitz=lipschitz, step=step, step_decay=step_decay,
                                          clip_factor=clip_factor, coef_init=coef_init,
                                          random_state=0, record_history=False),
              ["coef_init", "epsilon", "radius", "lipschitz", "step", "step_decay",
               "clip_factor"])
    if res is None:
        return
    _finite(res.x)
    x0 = np.zeros(2) if coef_init is None else np.asarray(coef_init, dtype=float)
    span = max(radius, float(np.max(np.abs(x0))))
    assert np.linalg.norm((res.x - x0) / span) <= radius / span * (1 + 1e-9) + 1e-12


# ------------------------------------------------------------------ the cases found, one each

def _glm_problem():
    X = np.arange(12.0).reshape(6, 2) / 10.0 - 0.5
    return dp.Problem(X, np.array([1.0, -1.0] * 3), loss="logistic")


def _quadratic():
    return _finite_sum(np.array([[1.0, 2.0], [3.0, -2.0]]))


FOUND = {
    # raw NumPy messages ("float() argument must be ... not 'complex'", "could not convert
    # string to float")
    "box complex": (lambda: BoxDomain(1j, 2.0), TypeError, "lower"),
    "box str": (lambda: BoxDomain(0.0, "b"), TypeError, "upper"),
    # silently accepted: the box {+inf} (projections came back infinite), NaN projected to NaN
    "box at infinity": (lambda: BoxDomain(math.inf, math.inf), ValueError, "lower"),
    "box projects NaN": (lambda: BoxDomain(0.0, 1.0).project([math.nan]), ValueError, "v"),
    # n_iter = 0 (or -1) returned v itself, outside the set; "a" gave a raw TypeError
    "Dykstra n_iter 0": (lambda: BallIntersection(BoxDomain(0.0, 1.0), 1.0, np.zeros(2),
                                                  n_iter=0), ValueError, "n_iter"),
    "Dykstra v length": (lambda: BallIntersection(BoxDomain(0.0, 1.0), 1.0, np.zeros(2))
                         .project([1.0, 2.0, 3.0]), ValueError, "v"),
    # the closed-form two-ball projection overflowed and returned a point outside both balls
    "two balls v 1e161": (lambda: BallIntersection(L2Ball(2.0, np.array([1.0, 0.0])), 1.0,
                                                   np.array([0.0, 1.0]))
                          .project([1.0, 2.25e161]), ValueError, "v"),
    # 200 seeds for log2(lam_max / lam_min) ~ 2000 halvings: StopIteration escaped
    "bisection wide range": (
        lambda: LambdaBisection(_quadratic_ball_oracle(np.zeros(2)), 1.0, 1e-300, 1e300)(
            np.zeros(2), np.zeros(2), 1.0, 0), None, None),
    "bisection oracle NaN": (
        lambda: LambdaBisection(lambda *a: np.full(2, math.nan), 1.0, 1.0, 2.0)(
            np.zeros(2), np.zeros(2), 1.0, 0), ValueError, "ball_oracle"),
    "bisection phi_fraction": (lambda: LambdaBisection(_ball_oracle, 1.0, 1.0, 2.0,
                                                       phi_fraction=math.nan),
                               ValueError, "phi_fraction"),
    # radius^2 overflowed to inf: every cut was a no-op and the centre came back as optimum
    "ellipsoid radius 1e300": (lambda: ellipsoid_method(_quadratic().full_value,
                                                        _quadratic().full_subgradient,
                                                        [1.0, 1.0], 1e300, 5),
                               ValueError, "radius"),
    "ellipsoid NaN subgradient": (lambda: ellipsoid_method(
        lambda x: 0.0, lambda x: np.full(2, math.nan), [1.0, 1.0], 1.0, 5),
        ValueError, "subgradient"),
    "ellipsoid subgradient shape": (lambda: ellipsoid_method(
        lambda x: 0.0, lambda x: np.ones(3), [1.0, 1.0], 1.0, 5), ValueError, "subgradient"),
    "ellipsoid NaN value": (lambda: ellipsoid_method(
        lambda x: math.nan, lambda x: x, [1.0, 1.0], 1.0, 5), ValueError, "value"),
    "ellipsoid n_steps 1e12": (lambda: ellipsoid_method(
        lambda x: 0.0, lambda x: x, [1.0, 1.0], 1.0, 10 ** 12), ValueError, "n_steps"),
    "finite sum not callable": (lambda: FiniteSum(1, 2, 3), TypeError, "value"),
    "exact draws radius 1e300": (lambda: exact_optimum_draws(_quadratic(), 1.0, np.ones(2),
                                                             1e300, j0=2, random_state=0),
                                 ValueError, "radius"),
    "exact draws problem": (lambda: exact_optimum_draws("F", 1.0, np.ones(2), 1.0),
                            TypeError, "problem"),
    "exact draws max_level": (lambda: exact_optimum_draws(_quadratic(), 1.0, np.ones(2), 1.0,
                                                          max_level="a"),
                              TypeError, "max_level"),
    "exact draws d 1": (lambda: exact_optimum_draws(_quadratic(), 1.0, np.ones(1), 1.0),
                        ValueError, "x0"),
    "GLM rows step 0": (lambda: GLMOracle(_glm_problem(), rows=slice(None, None, 0)),
                        ValueError, "rows.step"),
    "GLM rows float": (lambda: GLMOracle(_glm_problem(), rows=slice(0.5, 2)),
                       TypeError, "rows.start"),
    "GLM x length": (lambda: GLMOracle(_glm_problem())(np.ones(3), np.random.default_rng(0)),
                     ValueError, "x"),
    # found by the CI profile: "ufunc 'matmul' did not contain a loop with signature ..."
    "GLM x str": (lambda: GLMOracle(_glm_problem())([1.0, "x"], np.random.default_rng(0)),
                  TypeError, "x"),
    "GLM x NaN": (lambda: GLMOracle(_glm_problem())(np.array([math.nan, 1.0]),
                                                    np.random.default_rng(0)),
                  ValueError, "x"),
    # lam = 2 G^2 / epsilon overflowed: "v must contain only finite values" (v internal)
    "moreau lipschitz 1e300": (lambda: moreau_agd(_prox_oracle, L2Ball(5.0), np.ones(2),
                                                  epsilon=1.0, lipschitz=1e300, radius=1.0),
                               ValueError, "lipschitz"),
    "moreau prox shape": (lambda: moreau_agd(lambda *a: np.ones(3), L2Ball(5.0), np.ones(2),
                                             epsilon=1.0, lipschitz=1.0, radius=1.0),
                          ValueError, "prox_oracle"),
    # a wrong-length or NaN gradient was silently ignored
    "composite grad shape": (lambda: composite_agd(lambda y: np.ones(3), _ball_oracle,
                                                   _prox_oracle, np.ones(2), smoothness=1.0,
                                                   radius=1.0, n_iter=3),
                             ValueError, "grad_smooth"),
    "composite grad NaN": (lambda: composite_agd(lambda y: y * math.nan, _ball_oracle,
                                                 _prox_oracle, np.ones(2), smoothness=1.0,
                                                 radius=1.0, n_iter=3),
                           ValueError, "grad_smooth"),
    # "mu must be a finite number in (0, inf); got inf" (mu is internal)
    "mlmc tiny step": (lambda: dp.mlmc.mlmc_dp_sco(
        dp.Problem(np.eye(4, 2), np.ones(4), loss="logistic"), epsilon=1.0, delta=1e-5,
        radius=1.0, lipschitz=1.0, step=1e-320, random_state=0), ValueError, "step"),
    "mlmc huge step_decay": (lambda: dp.mlmc.mlmc_dp_sco(
        dp.Problem(np.eye(4, 2), np.ones(4), loss="logistic"), epsilon=1.0, delta=1e-5,
        radius=1.0, lipschitz=1.0, step_decay=1e300, random_state=0), ValueError,
        "step_decay"),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", sorted(FOUND))
def test_found_case(case):
    call, error, name = FOUND[case]
    if error is None:
        out = call()
        assert math.isfinite(out)
        return
    with pytest.raises(error, match=rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])"):
        call()
