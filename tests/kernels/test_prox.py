"""Kernel ``_prox``: prox optimality, twin agreement (bitwise), projections against the sort-based
twin, KKT conditions and a generic solver, thread counts and read-only inputs."""

import numpy as np
import pytest
from scipy import optimize

from dpsco_core._kernels import _prox as kernel
from dpsco_core.reference import prox as twin

# (kind, p1, p2, psi_j) for every penalty.
PENALTIES = {
    "none": (kernel.NONE, 0.0, 0.0, lambda w: 0.0 * w),
    "l1": (kernel.L1, 0.7, 0.0, lambda w: 0.7 * np.abs(w)),
    "l2": (kernel.L2, 0.7, 0.0, lambda w: 0.35 * w * w),
    "elastic_net": (kernel.ELASTIC_NET, 0.4, 1.3, lambda w: 0.4 * np.abs(w) + 0.65 * w * w),
    "box": (kernel.BOX, -0.5, 0.25, None),
}
IDS = list(PENALTIES)
SPECIAL = np.array([0.0, -0.0, 1e-300, -1e-300, 0.35, -0.35, 1e300, -1e300, np.inf, -np.inf,
                    np.nan, 0.5, -0.5, 0.25, -0.25])


def _prox(impl, u, step, kind, p1, p2, n_threads=1):
    out = np.full(u.shape[0], 12345.0)
    assert impl.prox_vector(u, np.atleast_1d(np.asarray(step, float)), kind, p1, p2, out,
                            n_threads) is None
    return out


def _bits(x):
    return np.ascontiguousarray(x).view(np.int64)


def test_constants_match_twin():
    for name in ("NONE", "L1", "L2", "ELASTIC_NET", "BOX", "CHUNK_SIZE", "PARALLEL_THRESHOLD"):
        assert getattr(kernel, name) == getattr(twin, name)
    from dpsco_core import penalties
    assert (penalties.PENALTY_NONE, penalties.PENALTY_L1, penalties.PENALTY_L2,
            penalties.PENALTY_ELASTIC_NET, penalties.PENALTY_BOX) == (0, 1, 2, 3, 4)
    assert (kernel.NONE, kernel.L1, kernel.L2, kernel.ELASTIC_NET, kernel.BOX) == (0, 1, 2, 3, 4)


@pytest.mark.parametrize("name", IDS)
def test_prox_bitwise_equal_to_twin(name, rng):
    kind, p1, p2, _ = PENALTIES[name]
    u = np.concatenate([SPECIAL, rng.standard_normal(500) * rng.choice([1e-3, 1.0, 1e3], 500)])
    steps = rng.uniform(0.01, 3.0, u.size)
    steps[:SPECIAL.size] = 0.5          # thresholds land exactly on some special values
    for step in (steps, 0.5, 1e300):
        a, b = _prox(kernel, u, step, kind, p1, p2), _prox(twin, u, step, kind, p1, p2)
        np.testing.assert_array_equal(_bits(a), _bits(b))   # signed zeros and NaN included


@pytest.mark.parametrize("name", IDS)
def test_prox_same_bits_for_any_thread_count(name, rng):
    kind, p1, p2, _ = PENALTIES[name]
    d = kernel.PARALLEL_THRESHOLD + 3 * kernel.CHUNK_SIZE + 7
    u = rng.standard_normal(d)
    for step in (rng.uniform(0.1, 2.0, d), 0.8):
        results = [_prox(kernel, u, step, kind, p1, p2, n_threads=t) for t in (1, 2, 4)]
        for r in results[1:]:
            np.testing.assert_array_equal(_bits(r), _bits(results[0]))
        np.testing.assert_array_equal(_bits(results[0]), _bits(_prox(twin, u, step, kind, p1,
                                                                      p2)))


@pytest.mark.parametrize("name", IDS)
def test_prox_optimality_condition(name, rng):
    # p = prox_{t psi}(u)  <=>  (u - p) / t is a subgradient of psi_j at p.
    kind, p1, p2, _ = PENALTIES[name]
    u = rng.standard_normal(2000) * 2.0
    t = rng.uniform(0.05, 3.0, u.size)
    p = _prox(kernel, u, t, kind, p1, p2)
    g = (u - p) / t
    tol = 1e-12 * (1.0 + np.abs(u) / t)
    if kind == kernel.NONE:
        np.testing.assert_allclose(g, 0.0, atol=1e-15)
    elif kind == kernel.BOX:
        assert np.all((p >= p1) & (p <= p2))
        inside = (p > p1) & (p < p2)
        np.testing.assert_allclose(g[inside], 0.0, atol=1e-15)     # normal cone: {0} inside,
        assert np.all(g[p == p1] <= tol[p == p1])                  # (-inf, 0] at lower,
        assert np.all(g[p == p2] >= -tol[p == p2])                 # [0, inf) at upper
    else:
        lam1 = p1 if kind in (kernel.L1, kernel.ELASTIC_NET) else 0.0
        lam2 = p1 if kind == kernel.L2 else (p2 if kind == kernel.ELASTIC_NET else 0.0)
        smooth = g - lam2 * p                     # must lie in lam1 * d|.|(p)
        nz = p != 0
        np.testing.assert_allclose(smooth[nz], lam1 * np.sign(p[nz]), atol=1e-12, rtol=1e-12)
        assert np.all(np.abs(smooth[~nz]) <= lam1 + tol[~nz])
        assert lam1 > 0 or not np.any(~nz & (u != 0))


@pytest.mark.parametrize("name", IDS)
def test_prox_is_non_expansive(name, rng):
    kind, p1, p2, _ = PENALTIES[name]
    a, b = rng.standard_normal((2, 5000)) * 3.0
    t = rng.uniform(0.01, 2.0, 5000)
    pa, pb = _prox(kernel, a, t, kind, p1, p2), _prox(kernel, b, t, kind, p1, p2)
    # |p(a) - p(b)| <= |a - b|, up to the rounding of (a - t) - (b - t) (a few ulps of a, b).
    assert np.all(np.abs(pa - pb) <= np.abs(a - b) + 1e-15 * (np.abs(a) + np.abs(b)))


@pytest.mark.parametrize("name", IDS)
def test_prox_agrees_with_generic_solver(name, rng):
    kind, p1, p2, psi = PENALTIES[name]
    for _ in range(20):
        u = rng.standard_normal(4) * 2.0
        t = rng.uniform(0.1, 2.0, 4)
        p = _prox(kernel, u, t, kind, p1, p2)
        for j in range(4):
            if kind == kernel.BOX:
                res = optimize.minimize_scalar(lambda w: 0.5 * (w - u[j]) ** 2, bounds=(p1, p2),
                                               method="bounded", options={"xatol": 1e-12})
            else:
                res = optimize.minimize_scalar(lambda w: 0.5 * (w - u[j]) ** 2
                                               + t[j] * psi(w), bracket=(-10.0, 10.0),
                                               method="brent", tol=1e-12)
            assert abs(res.x - p[j]) <= 1e-6


def test_prox_read_only_inputs_and_bad_arguments():
    u = np.linspace(-2, 2, 11)
    step = np.full(11, 0.5)
    u.flags.writeable = step.flags.writeable = False
    out = _prox(kernel, u, step, kernel.L1, 1.0, 0.0)
    np.testing.assert_array_equal(out, np.sign(u) * np.maximum(np.abs(u) - 0.5, 0))
    with pytest.raises(ValueError, match="out"):
        kernel.prox_vector(u, step, kernel.L1, 1.0, 0.0, np.empty(3), 1)
    with pytest.raises(ValueError, match="step"):
        kernel.prox_vector(u, np.ones(3), kernel.L1, 1.0, 0.0, np.empty(11), 1)
    with pytest.raises(ValueError, match="kind"):
        kernel.prox_vector(u, step, 7, 1.0, 0.0, np.empty(11), 1)
    kernel.prox_vector(np.empty(0), np.ones(1), kernel.L1, 1.0, 0.0, np.empty(0), 1)


# ---------------------------------------------------------------- projections

def _l1(impl, v, radius):
    out = np.full(v.size, 12345.0)
    assert impl.project_l1_ball(v, radius, out) is None
    return out


def _simplex(impl, v, total):
    out = np.full(v.size, 12345.0)
    assert impl.project_simplex(v, total, out) is None
    return out


def _l2(impl, v, radius, center=np.empty(0), n_threads=1):
    out = np.full(v.size, 12345.0)
    dist = impl.project_l2_ball(v, center, radius, out, n_threads)
    # both return ||v - c||, the norm they projected with
    diff = v - center if center.size else v
    m = float(np.max(np.abs(diff))) if diff.size else 0.0
    norm = m * float(np.linalg.norm(diff / m)) if m > 0 else 0.0     # scaled: no overflow
    assert dist == pytest.approx(norm, rel=1e-12, abs=1e-300)
    return out


def _random_vectors(rng, count=40):
    for trial in range(count):
        d = int(rng.choice([1, 2, 3, 7, 50, 1000, 20000]))
        v = rng.standard_normal(d) * rng.choice([1e-6, 1.0, 1e6])
        if trial % 4 == 0:
            v = np.round(v)                 # ties and zeros
        if trial % 5 == 0:
            v = rng.exponential(size=d) ** 3   # heavy tail
        yield trial, v


def test_l1_ball_and_simplex_agree_with_sort_based_twin(rng):
    for trial, v in _random_vectors(rng):
        scale = max(np.abs(v).max(), 1e-300)
        radius = rng.uniform(0.0, 1.5) * np.abs(v).sum()
        np.testing.assert_allclose(_l1(kernel, v, radius), _l1(twin, v, radius), rtol=0,
                                   atol=1e-12 * scale)
        total = rng.uniform(0.01, 2.0) * scale
        np.testing.assert_allclose(_simplex(kernel, v, total), _simplex(twin, v, total),
                                   rtol=0, atol=1e-12 * max(scale, total))


def test_l1_ball_feasibility_and_kkt(rng):
    # KKT of min ||x - v||^2 / 2 over ||x||_1 <= r: x = sign(v) max(|v| - tau, 0), tau >= 0,
    # and tau > 0 only if ||x||_1 = r.
    for trial, v in _random_vectors(rng):
        r = rng.uniform(0.01, 0.9) * np.abs(v).sum()
        if r == 0:
            continue
        x = _l1(kernel, v, r)
        assert np.abs(x).sum() <= r * (1 + 1e-12)
        np.testing.assert_allclose(np.abs(x).sum(), r, rtol=1e-12)
        assert np.all(np.sign(x[x != 0]) == np.sign(v[x != 0]))
        shrink = np.abs(v) - np.abs(x)
        tau = np.median(shrink[x != 0])
        assert tau >= 0
        np.testing.assert_allclose(shrink[x != 0], tau, atol=1e-12 * np.abs(v).max())
        assert np.all(np.abs(v[x == 0]) <= tau + 1e-12 * np.abs(v).max())


def test_simplex_feasibility_and_kkt(rng):
    for trial, v in _random_vectors(rng):
        total = rng.uniform(0.1, 3.0)
        x = _simplex(kernel, v, total)
        assert np.all(x >= 0)
        np.testing.assert_allclose(x.sum(), total, rtol=1e-12 * max(1, np.abs(v).max()))
        shift = v - x                            # = tau on the support, >= v - 0 off it
        tau = np.median(shift[x > 0])
        np.testing.assert_allclose(shift[x > 0], tau, atol=1e-12 * max(1, np.abs(v).max()))
        assert np.all(v[x == 0] <= tau + 1e-12 * max(1, np.abs(v).max()))


def _generic_projection(v, constraints, x0):
    res = optimize.minimize(lambda x: 0.5 * np.sum((x - v) ** 2), x0, jac=lambda x: x - v,
                            constraints=constraints, method="SLSQP",
                            options={"ftol": 1e-12, "maxiter": 1000})
    return res.x


def test_projections_agree_with_generic_solver(rng):
    # SLSQP on smooth formulations: the l1 ball as x = p - q, p, q >= 0, sum(p + q) <= r.
    d = 5
    for _ in range(10):
        v = rng.standard_normal(d) * 2
        c = rng.standard_normal(d)
        pq = optimize.minimize(
            lambda z: 0.5 * np.sum((z[:d] - z[d:] - v) ** 2),
            np.zeros(2 * d), jac=lambda z: np.concatenate([z[:d] - z[d:] - v,
                                                           -(z[:d] - z[d:] - v)]),
            constraints=[{"type": "ineq", "fun": lambda z: 1.0 - z.sum()},
                         {"type": "ineq", "fun": lambda z: z}],
            method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
        np.testing.assert_allclose(_l1(kernel, v, 1.0), pq.x[:d] - pq.x[d:], atol=1e-5)
        simplex = _generic_projection(v, [{"type": "eq", "fun": lambda x: x.sum() - 1.5},
                                          {"type": "ineq", "fun": lambda x: x}], np.zeros(d))
        np.testing.assert_allclose(_simplex(kernel, v, 1.5), simplex, atol=1e-5)
        ball = _generic_projection(v, [{"type": "ineq",
                                        "fun": lambda x: 0.49 - np.sum((x - c) ** 2)}], c)
        np.testing.assert_allclose(_l2(kernel, v, 0.7, c), ball, atol=1e-5)


def test_points_inside_are_returned_exactly(rng):
    v = rng.standard_normal(1000)
    n1, n2 = np.abs(v).sum(), np.linalg.norm(v)
    for r in (n1, n1 * 1.5, np.inf):
        np.testing.assert_array_equal(_bits(_l1(kernel, v, r)), _bits(v))
    for r in (n2 * (1 + 1e-9), 1e6, np.inf):
        np.testing.assert_array_equal(_bits(_l2(kernel, v, r)), _bits(v))
        np.testing.assert_array_equal(_bits(_l2(kernel, v + 3.0, r, np.full(1000, 3.0))),
                                      _bits(v + 3.0))
    p = rng.dirichlet(np.ones(1000)) * 2.0
    np.testing.assert_array_equal(_bits(_simplex(kernel, p, 2.0)), _bits(p))
    e = np.zeros(10)
    e[3] = 1.0
    np.testing.assert_array_equal(_simplex(kernel, e, 1.0), e)


def test_edge_cases():
    v = np.array([3.0, -1.0, 0.5])
    np.testing.assert_array_equal(_l1(kernel, v, 0.0), 0.0)
    np.testing.assert_array_equal(_simplex(kernel, v, 0.0), 0.0)
    np.testing.assert_array_equal(_l2(kernel, v, 0.0), 0.0)
    np.testing.assert_array_equal(_l2(kernel, v, 0.0, np.ones(3)), 1.0)
    np.testing.assert_allclose(_l1(kernel, np.ones(4), 1.0), 0.25)          # all tied
    np.testing.assert_allclose(_simplex(kernel, np.full(4, -7.0), 2.0), 0.5)
    np.testing.assert_allclose(_l1(kernel, np.array([-5.0]), 2.0), [-2.0])
    np.testing.assert_allclose(_simplex(kernel, np.array([-5.0]), 2.0), [2.0])
    for f in (lambda o: kernel.project_l1_ball(v, 1.0, o),
              lambda o: kernel.project_simplex(v, 1.0, o),
              lambda o: kernel.project_l2_ball(v, np.empty(0), 1.0, o, 1)):
        with pytest.raises(ValueError, match="out"):
            f(np.empty(2))
    with pytest.raises(ValueError, match="center"):
        kernel.project_l2_ball(v, np.ones(2), 1.0, np.empty(3), 1)


def test_l2_ball_twin_threads_and_scaling(rng):
    d = kernel.PARALLEL_THRESHOLD + 2 * kernel.CHUNK_SIZE + 5
    v = rng.standard_normal(d)
    c = rng.standard_normal(d) * 0.1
    for center in (np.empty(0), c):
        results = [_l2(kernel, v, 10.0, center, n_threads=t) for t in (1, 2, 4)]
        for r in results[1:]:
            np.testing.assert_array_equal(_bits(r), _bits(results[0]))
        np.testing.assert_allclose(results[0], _l2(twin, v, 10.0, center), rtol=1e-12,
                                   atol=1e-15)
        dist = np.linalg.norm(results[0] - (center if center.size else 0))
        assert dist <= 10.0 * (1 + 1e-12)
    # Sums of squares that overflow or underflow: the scaled path.
    for scale in (1e200, 1e-200):
        w = rng.standard_normal(100) * scale
        x = _l2(kernel, w, 0.5 * scale)
        np.testing.assert_allclose(np.linalg.norm(x / scale), 0.5, rtol=1e-12)
        np.testing.assert_allclose(x, _l2(twin, w, 0.5 * scale), rtol=1e-12)


def test_projection_read_only_inputs():
    v = np.linspace(-3, 3, 101)
    c = np.full(101, 0.5)
    v.flags.writeable = c.flags.writeable = False
    assert np.abs(_l1(kernel, v, 1.0)).sum() == pytest.approx(1.0)
    assert _simplex(kernel, v, 1.0).sum() == pytest.approx(1.0)
    assert np.linalg.norm(_l2(kernel, v, 1.0, c) - c) == pytest.approx(1.0)
    np.testing.assert_array_equal(v, np.linspace(-3, 3, 101))
