"""Extreme magnitudes through the public array functions not covered by
``test_extreme_inputs.py`` (issue 16, fuzzing): mirror maps, Gaussian smoothing, the MLMC
estimators and oracles, ball acceleration, the parallel executors and ``parallel_sco``, the
single-epoch / Frank-Wolfe / mirror-descent solvers and ``datasets.standardize``.

Same contract and helpers: each call returns finite, correct output or raises
ValueError/TypeError whose message names one of the call's arguments. Solvers run at tiny n, d
and few steps; examples are bounded so the file stays well under a minute.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsco_core as dp
from dpsco_core import mirror_maps as mm
from dpsco_core import smoothing as sm
from dpsco_core.datasets import standardize

from test_extreme_inputs import ANY, FINITE, MAX, _finite, run, vectors

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(max_examples=20, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
PS = st.sampled_from([1.0 + 1.0 / math.log(1e6), 1.2, 1.5, 2.0])
SCALES = st.one_of(st.none(), FINITE.map(abs), st.sampled_from([math.nan, math.inf, -1.0]))


def _pnorm(v, p):
    """||v||_p in high precision (longdouble ratios) for the checks."""
    m = float(np.max(np.abs(v))) if v.size else 0.0
    if m == 0.0:
        return 0.0
    return m * float(np.sum((np.abs(v) / m) ** p) ** (1.0 / p))


# ------------------------------------------------------------------ mirror maps

@SETTINGS
@given(vectors(), PS, SCALES)
def test_pnorm_link_and_inverse(u, p, scale):
    out = run(lambda: mm.pnorm_link(u, p, scale), ["u", "scale"])
    if out is None:
        return
    assert np.all(np.isfinite(u))
    _finite(out)
    a = 1.0 / (p - 1.0) if scale is None else scale
    q = p / (p - 1.0)
    # the dual norm of the link is a ||u||_p; the signs agree with u
    nu = _pnorm(u, p)
    assert np.all(np.sign(out) * np.sign(u) >= 0)
    if nu > 0 and 1e-250 < a * nu < 1e250 and np.min(np.abs(u[u != 0]) / nu) > 1e-100:
        assert _pnorm(out, q) == pytest.approx(a * nu, rel=1e-9)
        back = run(lambda: mm.pnorm_link_inverse(out, p, scale), ["theta", "scale"])
        if back is not None:
            np.testing.assert_allclose(back, u, rtol=1e-6, atol=1e-6 * nu)


@SETTINGS
@given(vectors(), PS, SCALES)
def test_pnorm_link_inverse(theta, p, scale):
    out = run(lambda: mm.pnorm_link_inverse(theta, p, scale), ["theta", "scale"])
    if out is not None:
        assert np.all(np.isfinite(theta))
        _finite(out)
        assert np.all(np.sign(out) * np.sign(theta) >= 0)


@SETTINGS
@given(st.integers(1, 4).flatmap(lambda d: st.tuples(*[vectors(min_size=d, max_size=d)] * 3)),
       PS, SCALES)
def test_bregman_divergence(xyc, p, scale):
    x, y, c = xyc
    out = run(lambda: mm.bregman_divergence(x, y, p, center=c, scale=scale),
              ["x", "y", "center", "scale"])
    if out is None:
        return
    assert all(np.all(np.isfinite(v)) for v in xyc)
    assert math.isfinite(out) and out >= 0.0
    if p == 2.0:
        a = 1.0 if scale is None else scale
        d = np.abs(x.astype(np.longdouble) - y)
        exact = 0.5 * a * float(np.sum(d * d)) if np.all(d < 1e150) else None
        if exact is not None and exact < 1e300:
            assert out == pytest.approx(exact, rel=1e-9, abs=1e-300)
    assert mm.bregman_divergence(x, x, p, center=c, scale=scale) == 0.0 or \
        run(lambda: mm.bregman_divergence(x, x, p, center=c, scale=scale), ["x"]) is None


@SETTINGS
@given(st.integers(1, 4).flatmap(lambda d: st.tuples(*[vectors(min_size=d, max_size=d)] * 3)),
       PS, st.sampled_from([1e-300, 1e-3, 1.0, 1e300, math.nan]),
       st.sampled_from([None, 1.0, 1e300]))
def test_mirror_step(xgc, p, step, l1_radius):
    x, g, c = xgc
    if l1_radius is not None:
        c = np.zeros_like(c)
    out = run(lambda: mm.mirror_step(x, g, step, p=p, scale=1.0, center=c, radius=math.inf,
                                     l1_radius=l1_radius),
              ["x", "grad", "step", "center", "l1_radius"])
    if out is not None:
        _finite(out)
        if l1_radius is not None:
            assert np.sum(np.abs(out)) <= l1_radius * (1 + 1e-9)


@SETTINGS
@given(st.integers(1, 3).flatmap(lambda d: st.tuples(vectors(min_size=2 * d, max_size=2 * d),
                                                     vectors(min_size=d, max_size=d))),
       st.sampled_from([1e-300, 1.0, 1e300, math.nan]), st.sampled_from([1.0, 1e300]))
def test_entropic_step(lg, step, radius):
    logw, grad = lg
    out = run(lambda: mm.entropic_step(logw, grad, step, radius),
              ["logw", "grad", "step", "radius"])
    if out is not None:
        new, x = out
        _finite(new)
        _finite(x)
        assert np.sum(np.abs(x)) <= radius * (1 + 1e-9)


@pytest.mark.parametrize("call, match", [
    (lambda: mm.pnorm_link([math.nan, 1.0], 1.5), "u"),
    (lambda: mm.pnorm_link([1e308, 5e-324], 1.5), "u"),
    (lambda: mm.pnorm_link([MAX, MAX, MAX], 1.5), "u"),
    (lambda: mm.pnorm_link_inverse([1.0, 1.0], 1.5, 1e-320), "scale"),
    (lambda: mm.pnorm_link([1.0], 1.5, -1.0), "scale"),
    (lambda: mm.bregman_divergence([1e200, 0.0], [0.0, 1.0], 1.5), "x"),
    (lambda: mm.bregman_divergence([1.0, 0.0], [0.0], 1.5), "y"),
    (lambda: mm.entropic_step(np.zeros(2), np.array([MAX]), 1e300, 1.0), "grad"),
])
def test_mirror_map_regressions(call, match):
    """Pinned cases (issue 16): NaN, overflow to inf/NaN and mismatched lengths all used to pass
    silently (``pnorm_link([nan, 1], 1.5)`` returned NaN; ``[1e308, 5e-324]`` gave an
    invalid-value warning and NaN; ``bregman_divergence`` returned inf)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            call()


def test_bregman_divergence_scaled_inputs_are_exact():
    """Entries near 1e200 used to overflow in h(x); D is 2-homogeneous, so it is computed on
    scaled inputs: D(1e150 x, 1e150 y) = 1e300 D(x, y)."""
    x, y = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    for p in (1.5, 2.0):
        small = mm.bregman_divergence(x, y, p)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            big = mm.bregman_divergence(1e150 * x, 1e150 * y, p)
        assert big == pytest.approx(1e300 * small, rel=1e-12)


# ------------------------------------------------------------------ smoothing

RHOS = st.one_of(FINITE.map(abs), st.sampled_from([math.nan, math.inf]))


@SETTINGS
@given(vectors(), RHOS, st.sampled_from(["linear", "quadratic", "l1"]))
def test_smoothing_vector_functions(x, rho, kind):
    if kind == "linear":
        call = lambda: sm.smoothed_linear(x, x[::-1].copy(), rho)  # noqa: E731
    else:
        call = lambda: getattr(sm, f"smoothed_{kind}")(x, rho)  # noqa: E731
    out = run(call, ["x", "c", "smoothing_radius"])
    if out is None:
        return
    value, grad = out
    assert math.isfinite(value)
    _finite(grad)
    if kind == "quadratic":
        np.testing.assert_array_equal(grad, x)
        assert value >= 0.0
    if kind == "l1":
        assert np.all(np.abs(grad) <= 1.0)
        # 0 <= f_rho - ||x||_1 <= rho sqrt(2/pi) d
        l1 = float(np.sum(np.abs(x.astype(np.longdouble))))
        assert value >= l1 * (1 - 1e-12) - 1e-300
        assert value <= l1 * (1 + 1e-12) + rho * math.sqrt(2 / math.pi) * x.size * (1 + 1e-12)


@st.composite
def rows_problem(draw):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    entries = st.one_of(ANY, st.floats(-3, 3))
    A = np.array(draw(st.lists(entries, min_size=n * d, max_size=n * d))).reshape(n, d)
    y = np.array(draw(st.lists(entries, min_size=n, max_size=n)))
    x = np.array(draw(st.lists(entries, min_size=d, max_size=d)))
    return x, A, y


@SETTINGS
@given(rows_problem(), RHOS, st.sampled_from(["hinge", "absolute"]))
def test_smoothing_row_functions(xay, rho, kind):
    x, A, y = xay
    fn = getattr(sm, f"smoothed_{kind}")
    out = run(lambda: fn(x, A, y, rho), ["x", "A", "y", "b", "smoothing_radius"])
    if out is None:
        return
    value, grad = out
    assert math.isfinite(value) and value >= -1e-12 * abs(value)
    _finite(grad)


@pytest.mark.parametrize("call, match", [
    (lambda: sm.smoothed_quadratic([1e200], 1.0), "x"),
    (lambda: sm.smoothed_quadratic([1.0], 1e200), "smoothing_radius"),
    (lambda: sm.smoothed_hinge([1.0], [[math.nan]], [1.0], 1.0), "A"),
    (lambda: sm.smoothed_absolute([1.0], [[1.0]], [math.inf], 1.0), "b"),
    (lambda: sm.smoothed_linear([MAX, MAX], [MAX, MAX], 1.0), "x"),
])
def test_smoothing_regressions(call, match):
    """Pinned (issue 16): ``smoothed_quadratic([1e200], 1)`` overflowed to inf; NaN in A or b
    reached the result."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            call()


def test_smoothing_zero_row_and_tiny_radius_are_limits():
    """A zero row (s = 0) at u = 0 used to give NaN (0/0); a tiny radius gave overflow
    warnings. Both are the unsmoothed limits."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sm.smoothed_absolute([1.0], [[0.0]], [0.0], 1.0) == (0.0, pytest.approx([0.0]))
        value, grad = sm.smoothed_l1([1e300, -2.0], 1e-300)
        assert value == 1e300 and list(grad) == [1.0, -1.0]
        value, grad = sm.smoothed_hinge([1e100], [[1e100]], [1.0], 1.0)
        assert value == 0.0 and list(grad) == [0.0]


# ------------------------------------------------------------------ standardize

@SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_standardize(n, d, data):
    X = np.array(data.draw(st.lists(st.one_of(ANY, st.floats(-3, 3)), min_size=n * d,
                                    max_size=n * d))).reshape(n, d)
    out = run(lambda: standardize(X), ["X"])
    if out is None:
        return
    Z, tr = out
    _finite(Z)
    _finite(tr.mean)
    _finite(tr.scale)
    assert np.all(np.abs(Z.mean(axis=0)) <= 1e-9 * max(1, n))
    sd = Z.std(axis=0)
    assert np.all((np.abs(sd - 1.0) <= 1e-9) | (sd == 0.0))


def test_standardize_huge_entries_regression():
    """Entries near 1.8e308 used to overflow the variance: std inf and every output 0."""
    Z, tr = standardize(np.array([[1e308, 1.0], [-1e308, 3.0]]))
    np.testing.assert_allclose(Z, [[1.0, -1.0], [-1.0, 1.0]])
    np.testing.assert_allclose(tr.scale, [1e308, 1.0])
