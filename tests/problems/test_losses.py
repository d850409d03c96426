"""Losses: derivatives against finite differences, stability, labels, constants."""

import warnings

import mpmath
import numpy as np
import pytest

from dpsco_core.losses import (Absolute, Hinge, Huber, Logistic, Squared, check_loss)

ALL = [Squared(), Squared(half=True), Logistic(), Huber(0.8), Hinge(), Absolute()]
IDS = [repr(loss) for loss in ALL]


def _points(loss, rng, m=400):
    z = rng.standard_normal(m) * 3.0
    if isinstance(loss, (Logistic, Hinge)):
        y = rng.choice([-1.0, 1.0], m)
        kink = 1.0 - y * z
    else:
        y = rng.standard_normal(m) * 2.0
        kink = z - y
        if isinstance(loss, Huber):
            kink = np.minimum(np.abs(np.abs(z - y) - loss.threshold), np.abs(kink))
    keep = np.abs(kink) > 1e-3                    # central differences away from the kinks
    return z[keep], y[keep]


@pytest.mark.parametrize("loss", ALL, ids=IDS)
def test_derivatives_match_finite_differences(loss, global_seed):
    z, y = _points(loss, np.random.default_rng(global_seed))
    h = 1e-6
    fd1 = (loss.value(z + h, y) - loss.value(z - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.deriv(z, y), fd1, rtol=1e-6, atol=1e-7)
    fd2 = (loss.deriv(z + h, y) - loss.deriv(z - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.deriv2(z, y), fd2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", ALL, ids=IDS)
def test_constants_bound_the_derivatives(loss, global_seed):
    z, y = _points(loss, np.random.default_rng(global_seed))
    if loss.smoothness is not None:
        assert np.all(np.abs(loss.deriv2(z, y)) <= loss.smoothness)
    if loss.lipschitz_in_margin is not None:
        assert np.all(np.abs(loss.deriv(z, y)) <= loss.lipschitz_in_margin)


def test_constants_table():
    table = [(loss.smoothness, loss.lipschitz_in_margin, loss.kind) for loss in ALL]
    assert table == [(2.0, None, 0), (1.0, None, 1), (0.25, 1.0, 2), (1.0, 0.8, 3),
                     (None, 1.0, 4), (None, 1.0, 5)]
    assert Huber(2.5).param == 2.5 and Logistic().param == 0.0


def test_subgradients_at_kinks_are_zero():
    assert Hinge().deriv(1.0, 1.0) == 0.0 and Hinge().deriv(-1.0, -1.0) == 0.0
    assert Absolute().deriv(2.0, 2.0) == 0.0
    assert Huber(1.0).deriv2(2.0, 1.0) == 1.0 and Huber(1.0).deriv2(2.5, 1.0) == 0.0


def test_logistic_is_stable_for_huge_margins():
    loss = Logistic()
    z = np.array([1e300, -1e300, 1e300, -1e300, 800.0, -800.0])
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v, d, d2 = loss.value(z, y), loss.deriv(z, y), loss.deriv2(z, y)
    np.testing.assert_array_equal(v, [0.0, 1e300, 1e300, 0.0, 0.0, 800.0])
    np.testing.assert_array_equal(d, [-0.0, -1.0, 1.0, 0.0, -0.0, -1.0])
    np.testing.assert_array_equal(d2, np.zeros(6))


@pytest.mark.parametrize("t", [-745.0, -40.0, -37.0, -20.0, -1e-10, 0.0, 1e-8, 5.0, 18.0,
                               25.0, 33.3, 34.0, 700.0])
def test_logistic_value_accurate_against_mpmath(t):
    # value(z, y) = log(1 + exp(-y z)); take y = -1, z = t.
    mpmath.mp.dps = 50
    exact = float(mpmath.log1p(mpmath.exp(mpmath.mpf(t))))
    sig = float(1 / (1 + mpmath.exp(-mpmath.mpf(t))))
    assert Logistic().value(t, -1.0) == pytest.approx(exact, rel=4e-16, abs=0)
    # The derivative's branch-free exp (src_cython/_exp_poly.h) overflows to inf above 709.78,
    # so beyond that it is 0 instead of a subnormal (|error| < 5e-308).
    assert Logistic().deriv(t, -1.0) == pytest.approx(sig, rel=4e-16, abs=5e-308)


def test_logistic_labels_01_explicit_only():
    with pytest.raises(ValueError, match=r"y must contain labels in \{-1, \+1\}.*labels='01'"):
        Logistic().check_labels([0, 1, 1])
    mapped = Logistic(labels="01").check_labels(np.array([0, 1, 1]))
    np.testing.assert_array_equal(mapped, [-1.0, 1.0, 1.0])
    assert Logistic(labels="01").value(0.0, 0) == pytest.approx(np.log(2.0))
    assert Logistic(labels="01").deriv(0.0, 1) == Logistic().deriv(0.0, 1)
    with pytest.raises(ValueError, match=r"y must contain labels in \{0, 1\}"):
        Logistic(labels="01").check_labels([-1.0, 1.0])
    with pytest.raises(ValueError, match=r"\{-1, \+1\}.*not shown: they are private data"
                       ) as refused:
        Logistic().check_labels([1.0, 2.0, 0.123456])
    assert "2.0" not in str(refused.value) and "0.123456" not in str(refused.value)
    with pytest.raises(ValueError, match=r"labels must be 'pm1' or '01'"):
        Logistic(labels="binary")
    with pytest.raises(ValueError, match=r"hinge"):
        Hinge().value(np.zeros(2), [0.5, 1.0])
    with pytest.raises(ValueError, match="y must contain only finite values"):
        Squared().value(np.zeros(2), [np.nan, 1.0])


def test_check_labels_never_modifies_input():
    y = np.array([0.0, 1.0, 1.0])
    y.flags.writeable = False
    Logistic(labels="01").check_labels(y)
    np.testing.assert_array_equal(y, [0.0, 1.0, 1.0])


def test_value_broadcasts_and_returns_float_for_scalars():
    assert isinstance(Squared().value(1.0, 3.0), float)
    assert Squared().value(1.0, 3.0) == 4.0
    assert Squared(half=True).deriv(1.0, 3.0) == -2.0
    out = Huber().value(np.zeros((2, 3)), 1.0)
    assert out.shape == (2, 3)


def test_large_arrays_use_threads_identically():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(50_000)
    y = rng.choice([-1.0, 1.0], z.size)
    loss = Logistic()
    np.testing.assert_array_equal(loss.value(z, y, n_threads=1), loss.value(z, y, n_threads=2))


def test_check_loss():
    assert check_loss("squared") == Squared()
    assert check_loss("half_squared") == Squared(half=True)
    assert check_loss("huber") == Huber(1.0)
    assert check_loss("logistic") == Logistic()
    assert isinstance(check_loss("hinge"), Hinge) and isinstance(check_loss("absolute"), Absolute)
    loss = Huber(3.0)
    assert check_loss(loss) is loss
    with pytest.raises(ValueError, match="loss must be one of"):
        check_loss("quadratic")
    with pytest.raises(TypeError, match="loss must be a str"):
        check_loss(2)
    with pytest.raises(ValueError, match=r"threshold must be in \(0, inf\)"):
        Huber(0.0)
    with pytest.raises(TypeError, match="half must be a bool"):
        Squared(half=1)
