"""Exact projection onto the intersection of two balls (ball_acceleration's X ∩ B_r(y))."""

import numpy as np
import pytest
from scipy.optimize import minimize

from dpsco_core.ball_acceleration import BallIntersection, ball_domain
from dpsco_core.mlmc import BoxDomain, L2Ball
from dpsco_core.mlmc.domains import TwoBallIntersection, _orthogonal_unit, project_two_balls


def _scipy_projection(v, c1, r1, c2, r2):
    cons = [{"type": "ineq", "fun": lambda x, c=c, r=r: r * r - (x - c) @ (x - c),
             "jac": lambda x, c=c: -2.0 * (x - c)} for c, r in ((c1, r1), (c2, r2))]
    start = c1 + (c2 - c1) * r1 / (r1 + r2)     # a feasible point on the segment
    res = minimize(lambda x: 0.5 * (x - v) @ (x - v), start, jac=lambda x: x - v,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    return res.x


def _cases():
    rs = np.random.default_rng(0)
    for d in (2, 3, 5):
        for _ in range(12):
            c1, c2 = rs.standard_normal(d), rs.standard_normal(d)
            dist = np.linalg.norm(c2 - c1)
            r1 = rs.uniform(0.3, 1.5) * dist
            r2 = rs.uniform(max(dist - r1, 0.0) + 0.05 * dist, dist + r1)
            yield rs.standard_normal(d) * 3.0, c1, r1, c2, r2


@pytest.mark.parametrize("case", list(_cases()))
def test_matches_scipy_and_is_a_projection(case):
    v, c1, r1, c2, r2 = case
    x = project_two_balls(v, c1, r1, c2, r2)
    assert np.linalg.norm(x - c1) <= r1 * (1 + 1e-12)
    assert np.linalg.norm(x - c2) <= r2 * (1 + 1e-12)
    np.testing.assert_allclose(x, _scipy_projection(v, c1, r1, c2, r2), atol=2e-6)
    # variational inequality <v - x, z - x> <= 0 for feasible z (the exact optimality test)
    rs = np.random.default_rng(1)
    z = c1 + rs.standard_normal((400, v.shape[0])) * r1
    z = z[(np.linalg.norm(z - c1, axis=1) <= r1) & (np.linalg.norm(z - c2, axis=1) <= r2)]
    assert np.all((z - x) @ (v - x) <= 1e-9 * (1 + np.linalg.norm(v - x)))


def test_special_cases():
    c1, c2 = np.zeros(3), np.array([2.0, 0.0, 0.0])
    x = project_two_balls(np.array([1.0, 0.2, 0.0]), c1, 1.5, c2, 1.5)
    np.testing.assert_array_equal(x, [1.0, 0.2, 0.0])           # inside: unchanged
    x = project_two_balls(np.array([1.0, 5.0, 0.0]), c1, 1.5, c2, 1.5)
    np.testing.assert_allclose(x, [1.0, np.sqrt(1.25), 0.0], rtol=1e-14)   # on the circle
    x = project_two_balls(np.array([-3.0, 0.0, 0.0]), c1, 1.5, c2, 1.5)
    np.testing.assert_allclose(x, [0.5, 0.0, 0.0])              # on the axis: B2's point
    x = project_two_balls(np.array([1.0, 3.0, 0.0]), c1, 1.0, c2, 1.0)
    np.testing.assert_allclose(x, [1.0, 0.0, 0.0], atol=1e-15)  # tangent: a single point
    x = project_two_balls(np.array([0.0, 9.0, 0.0]), c1, 5.0, c2, 1.0)   # B2 inside B1
    np.testing.assert_allclose(x, c2 + np.array([-2.0, 9.0, 0.0]) / np.sqrt(85.0))
    e = np.array([0.6, 0.8, 0.0])
    w = _orthogonal_unit(e)
    assert abs(w @ e) < 1e-15 and np.linalg.norm(w) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="empty"):
        project_two_balls(np.zeros(3), c1, 0.5, c2, 1.0)
    with pytest.raises(ValueError, match="empty"):
        TwoBallIntersection(L2Ball(0.5), L2Ball(1.0, c2), 3)


def test_ball_intersection_uses_the_closed_form_and_dykstra_agrees():
    y = np.array([0.8, 0.3])
    exact = BallIntersection(L2Ball(1.0), 0.5, y)
    assert exact._exact is not None
    assert isinstance(ball_domain(L2Ball(1.0), 0.5, y), BallIntersection)
    rs = np.random.default_rng(2)
    for v in rs.standard_normal((8, 2)) * 2:
        x = exact.project(v)
        ref = project_two_balls(v, np.zeros(2), 1.0, y, 0.5)
        np.testing.assert_array_equal(x, ref)
        # Dykstra (the fallback for other domains) converges to the same point
        dyk = BallIntersection(L2Ball(1.0), 0.5, y, n_iter=1500)
        dyk._exact = None
        np.testing.assert_allclose(dyk.project(v), x, atol=1e-6)
        # translated copies project consistently
        off = np.array([0.2, -0.1])
        np.testing.assert_allclose(exact.translate(off).project(v - off), x - off, atol=1e-14)
    box = BallIntersection(BoxDomain(-0.5, 0.5), 0.5, y)
    assert box._exact is None
    p = box.project(np.array([2.0, 2.0]))
    assert np.all(np.abs(p) <= 0.5 + 1e-9) and np.linalg.norm(p - y) <= 0.5 + 1e-6
