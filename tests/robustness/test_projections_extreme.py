"""Projections over the whole finite double range, against a high-precision (mpmath) reference.

Issue 16: on main (9cdba7a) ``project_l1_ball([1e16, 0], 1)`` and ``project_simplex([1e16, 0],
1)`` returned [0, 0], ``project_l1_ball([5e15, 5e15], 1)`` returned [1, 1] (outside the ball)
and ``project_l2_ball([0, 5e-324], 1)`` returned NaN.

Contract checked (the tolerance the projections' docstrings state): with :math:`a` the radius
(l1, l2) or the total (simplex) and :math:`\\varepsilon` the machine epsilon,

- in the set: l1 :math:`\\|P\\|_1 \\le a (1 + 4 d \\varepsilon)`, l2 :math:`\\|P - c\\|_2 \\le a (1 +
  4 \\varepsilon)`, simplex :math:`P \\ge 0` and :math:`|\\sum P - a| \\le 4 d \\varepsilon a`;
- optimal: every coordinate within :math:`8 d \\varepsilon a` (l1, simplex) or
  :math:`4 \\varepsilon (a + |c_i|)` (l2) of the exact projection, computed with mpmath at 2200
  bits (every sum of doubles is then exact) plus the tiniest subnormal.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpsco_core.projections import project_l1_ball, project_l2_ball, project_simplex

EPS = float(np.finfo(np.float64).eps)
TINY = 5e-324
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _extreme_floats():
    """Finite doubles with every exponent equally likely, plus the special values."""
    magnitudes = st.builds(lambda m, e: math.ldexp(m, e), st.floats(0.5, 1.0),
                           st.integers(-1074, 1023))
    signed = st.builds(lambda x, s: s * x, magnitudes, st.sampled_from([1.0, -1.0]))
    return st.one_of(signed, st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308,
                                              -1.7976931348623157e308, 1e16, 5e15, 1.0]))


def _finite(x):
    return x if math.isfinite(x) else math.copysign(1.7976931348623157e308, x)


VECTORS = st.lists(_extreme_floats().map(_finite), min_size=1, max_size=6)
RADII = st.one_of(_extreme_floats().map(abs).map(_finite), st.sampled_from([1.0, 0.0]))


def _exact_simplex(y, a):
    """max(y - tau, 0) with sum = a, by sorting, in exact (2200-bit) arithmetic."""
    with mpmath.workprec(2200):
        ys = sorted((mpmath.mpf(v) for v in y), reverse=True)
        a = mpmath.mpf(a)
        acc, tau = mpmath.mpf(0), None
        for k, v in enumerate(ys, start=1):
            acc += v
            t = (acc - a) / k
            if v > t:
                tau = t
        return [max(mpmath.mpf(v) - tau, 0) for v in y]


def _close(got, exact, tol):
    with mpmath.workprec(2200):
        return all(abs(mpmath.mpf(float(g)) - e) <= tol for g, e in zip(got, exact))


@SETTINGS
@given(VECTORS, RADII)
@example([1e16, 0.0], 1.0)
@example([5e15, 5e15], 1.0)
@example([1.7976931348623157e308, -1.7976931348623157e308], 1e308)
def test_l1_ball_in_set_and_optimal(v, radius):
    out = project_l1_ball(v, radius)
    assert np.all(np.isfinite(out))
    d = len(v)
    with mpmath.workprec(2200):
        norm1 = sum(abs(mpmath.mpf(x)) for x in v)
        if norm1 <= radius:
            exact = [mpmath.mpf(x) for x in v]
        elif radius == 0:
            exact = [mpmath.mpf(0)] * d
        else:
            exact = [mpmath.sign(mpmath.mpf(x)) * p
                     for x, p in zip(v, _exact_simplex([abs(x) for x in v], radius))]
        assert sum(abs(mpmath.mpf(float(x))) for x in out) <= radius * (1 + 4 * d * EPS) + TINY
    assert _close(out, exact, 8 * d * EPS * radius + TINY)


@SETTINGS
@given(VECTORS, RADII)
@example([1e16, 0.0], 1.0)
@example([1e-300, 0.0], 1e-310)
def test_simplex_in_set_and_optimal(v, total):
    out = project_simplex(v, total)
    d = len(v)
    assert np.all(np.isfinite(out)) and np.all(out >= 0)
    with mpmath.workprec(2200):
        if total == 0:
            exact = [mpmath.mpf(0)] * d
        else:
            exact = _exact_simplex(v, total)
        assert abs(sum(mpmath.mpf(float(x)) for x in out) - total) <= 4 * d * EPS * total + \
            d * TINY
    assert _close(out, exact, 8 * d * EPS * total + TINY)


@SETTINGS
@given(VECTORS, RADII, st.booleans(), st.data())
@example([0.0, 5e-324], 1.0, False, None)
@example([5e-324, 5e-324], 1.0, False, None)
def test_l2_ball_in_set_and_optimal(v, radius, centred, data):
    d = len(v)
    center = None
    if centred and data is not None:
        center = data.draw(st.lists(_extreme_floats().map(_finite), min_size=d, max_size=d))
    with mpmath.workprec(2200):
        c = [mpmath.mpf(0)] * d if center is None else [mpmath.mpf(x) for x in center]
        diff = [mpmath.mpf(x) - ci for x, ci in zip(v, c)]
        dist = mpmath.sqrt(sum(t * t for t in diff))
        scale = 1 if dist <= radius else mpmath.mpf(radius) / dist
        exact = [ci + t * scale for ci, t in zip(c, diff)]
        representable = all(abs(e) <= 1.7976931348623157e308 for e in exact)
    if not representable:
        with pytest.raises(ValueError, match="center and radius"):
            project_l2_ball(v, radius, center)
        return
    out = project_l2_ball(v, radius, center)
    assert np.all(np.isfinite(out))
    with mpmath.workprec(2200):
        got = [mpmath.mpf(float(x)) for x in out]
        gdist = mpmath.sqrt(sum((g - ci) ** 2 for g, ci in zip(got, c)))
        # rounding c + u to doubles moves each coordinate by up to eps |c_i|
        slack = sum(4 * EPS * abs(ci) for ci in c) + d * TINY
        assert gdist <= radius * (1 + 4 * EPS) + slack
        assert all(abs(g - e) <= 4 * EPS * (radius + abs(ci)) + TINY
                   for g, e, ci in zip(got, exact, c))


@pytest.mark.parametrize("project, v, a, expected", [
    (project_l1_ball, [1e16, 0.0], 1.0, [1.0, 0.0]),
    (project_simplex, [1e16, 0.0], 1.0, [1.0, 0.0]),
    (project_l1_ball, [5e15, 5e15], 1.0, [0.5, 0.5]),
    (project_l2_ball, [0.0, 5e-324], 1.0, [0.0, 5e-324]),
])
def test_issue_cases(project, v, a, expected):
    np.testing.assert_array_equal(project(v, a), expected)


def test_points_inside_come_back_bit_for_bit():
    v = np.array([0.25, -0.5, 5e-324, 1e-300])
    for out in (project_l1_ball(v, 1.0), project_l2_ball(v, 1.0),
                project_simplex(np.abs(v) / np.abs(v).sum(), 1.0)):
        assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(project_l1_ball(v, 1.0), v)
    np.testing.assert_array_equal(project_l2_ball(v, 1.0), v)


# The compiled kernel itself (not only the public wrapper, which routes the ends of the double
# range to a scaled NumPy version): its norm rescaled by 1 / max|v - c|, which is inf for a
# subnormal maximum, and project_l2_ball([0, 5e-324], r) came back [nan, nan]. It divides by
# the maximum now. Checked against mpmath to subnormal rounding (a few units of 5e-324 per
# entry) where the wrapper would not even call it.
SUBNORMAL = st.sampled_from([0.0, 5e-324, -5e-324, 1e-323, 3e-320, -4e-320, 1e-310, -2e-309])


@settings(max_examples=60, deadline=None)
@given(st.lists(SUBNORMAL, min_size=1, max_size=5),
       st.sampled_from([0.0, 5e-324, 1e-322, 1e-315, 1e-309, 1.0]),
       st.booleans())
@example([0.0, 5e-324], 1e-330 + 5e-324, False)
@example([0.0, 5e-324], 0.0, False)
def test_l2_kernel_on_subnormal_input(v, radius, centered):
    from dpsco_core._kernels import _prox
    v = np.array(v)
    center = np.full(v.size, -1e-320) if centered else np.empty(0)
    out = np.empty_like(v)
    _prox.project_l2_ball(v, center, radius, out, 1)
    assert np.all(np.isfinite(out)), out
    c = center if centered else np.zeros(v.size)
    with mpmath.workprec(2200):
        diff = [mpmath.mpf(x) - mpmath.mpf(y) for x, y in zip(v, c)]
        norm = mpmath.sqrt(sum(x * x for x in diff))
        factor = 1 if norm <= radius else mpmath.mpf(radius) / norm
        exact = [mpmath.mpf(y) + x * factor for x, y in zip(diff, c)]
    assert _close(out, exact, 8 * 5e-324 + 4 * EPS * max(abs(float(e)) for e in exact))
