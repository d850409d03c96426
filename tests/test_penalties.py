"""Penalties: the compiled prox equals the NumPy formulas (the twin), shapes, validation."""

import numpy as np
import pytest

from dpsco_core.penalties import (Box, ElasticNet, L1, L2, NoPenalty, Penalty, check_penalty)
from dpsco_core.reference import prox as twin

PENALTIES = [NoPenalty(), L1(0.7), L2(0.7), ElasticNet(0.3, 0.9), Box(-0.5, 0.2),
             Box(-np.inf, 0.0), L1(0.0)]


def _numpy_prox(penalty, u, step):
    """The NumPy formulas of the penalties before the kernel (now the twin), broadcast."""
    p1, p2 = penalty.params
    if penalty.kind == 0:
        return u.copy()
    if penalty.kind == 1:
        return np.sign(u) * np.maximum(np.abs(u) - step * p1, 0.0)
    if penalty.kind == 2:
        return u / (1.0 + step * p1)
    if penalty.kind == 3:
        return np.sign(u) * np.maximum(np.abs(u) - step * p1, 0.0) / (1.0 + step * p2)
    return np.clip(u, p1, p2)


@pytest.mark.parametrize("penalty", PENALTIES, ids=repr)
def test_prox_unchanged_from_numpy_behaviour(penalty, rng):
    u = rng.standard_normal((3, 40)) * 2
    u[0, :4] = [0.0, -0.0, 0.35, -0.35]
    step = rng.uniform(0.1, 2.0, 40)
    step[:4] = 0.5
    for uu, ss in [(u, step), (u, 0.5), (u[0], step), (u[0], 1.3), (np.asarray(0.4), 0.3),
                   (u[1, ::2], step[::2]), (u.T[:, 0], 0.7)]:
        got = penalty.prox(uu, ss)
        expected = _numpy_prox(penalty, np.asarray(uu), np.asarray(ss))
        assert got.shape == np.shape(expected)
        np.testing.assert_array_equal(got.view(np.int64),
                                      np.asarray(expected, dtype=np.float64).view(np.int64))
        if np.ndim(uu) == 1:
            out = np.empty(uu.shape[0])
            p1, p2 = penalty.params
            twin.prox_vector(np.ascontiguousarray(uu), np.atleast_1d(np.asarray(ss, float)),
                             penalty.kind, p1, p2, out, 1)
            np.testing.assert_array_equal(got.view(np.int64), out.view(np.int64))


def test_prox_leaves_input_unchanged_and_accepts_lists(rng):
    u = rng.standard_normal(300_000)
    u.flags.writeable = False
    before = u.copy()
    a = L1(0.5).prox(u, 0.1, n_threads=1)
    np.testing.assert_array_equal(a, L1(0.5).prox(u, 0.1, n_threads=2))
    np.testing.assert_array_equal(u, before)
    assert not np.shares_memory(NoPenalty().prox(u, 1.0), u)
    np.testing.assert_array_equal(L1(1.0).prox([3, -0.5], [1, 1]), [2.0, 0.0])


def test_prox_bad_step():
    with pytest.raises(ValueError, match="step must be a scalar or a vector of length 3"):
        L1(1.0).prox(np.ones(3), np.ones(2))
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="step must be finite"):
            L2(1.0).prox(np.ones(3), bad)


def test_user_subclass_without_kind_uses_its_prox():
    class Half(Penalty):
        def value(self, w):
            return 0.0

        def _prox(self, u, step):
            return u / 2

    np.testing.assert_array_equal(Half().prox([2.0, 4.0], 1.0), [1.0, 2.0])
    with pytest.raises(NotImplementedError):
        Penalty().prox([1.0], 1.0)


def test_user_prox_gets_a_copy():
    # prox no longer copies its float64 input for the kernels (they read it and write a new
    # array); a user's _prox may write into u, so it gets a copy.
    class InPlace(Penalty):
        def value(self, w):
            return 0.0

        def _prox(self, u, step):
            u *= 0.5
            return u

    u = np.array([2.0, 4.0])
    out = InPlace().prox(u, 1.0)
    np.testing.assert_array_equal(out, [1.0, 2.0])
    np.testing.assert_array_equal(u, [2.0, 4.0])


def test_values_params_and_validation():
    w = np.array([1.0, -2.0])
    assert L1(0.5).value(w) == 1.5
    assert L2(0.5).value(w) == 1.25
    assert ElasticNet(0.5, 0.5).value(w) == 2.75
    assert Box(-2, 1).value(w) == 0.0 and Box(-1, 1).value(w) == np.inf
    assert ElasticNet(0.1, 0.2).params == (0.1, 0.2) and ElasticNet(0.1, 0.2).strong_convexity == 0.2
    assert L1(0.3) == L1(0.3) and hash(L1(0.3)) == hash(L1(0.3)) and L1(0.3) != L2(0.3)
    with pytest.raises(ValueError, match="lam must be in"):
        L1(-1.0)
    with pytest.raises(ValueError, match="lower must be <= upper"):
        Box(1.0, 0.0)
    assert isinstance(check_penalty(None), NoPenalty)
    with pytest.raises(TypeError, match="penalty must be"):
        check_penalty("l1")
