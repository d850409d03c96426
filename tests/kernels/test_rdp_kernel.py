"""The compiled sampled-Gaussian RDP kernel (``_kernels._rdp``) against its NumPy twin
(``reference.rdp``): the fractional-order series bitwise, the integer orders to a few ulps
(sequential vs pairwise sums), which ``RDP_SLACK`` covers; ``order_root`` brackets a root."""

import math

import numpy as np
import pytest

from dpsco_core._kernels import _rdp
from dpsco_core.privacy import DEFAULT_RDP_ORDERS
from dpsco_core.reference import rdp as twin

ORDERS = np.array(DEFAULT_RDP_ORDERS)
IS_INT = ORDERS == np.floor(ORDERS)


@pytest.mark.parametrize("q", [1e-5, 1e-4, 256 / 45312, 0.01, 0.1, 0.5, 0.9, 0.999])
@pytest.mark.parametrize("s", [0.2, 0.5, 0.8, 1.0, 1.39, 3.0, 20.0, 500.0])
def test_log_a_matches_twin(q, s):
    got = _rdp.log_a_sampled_gaussian(q, ORDERS, s)
    ref = twin.log_a_sampled_gaussian(q, ORDERS, s)
    # fractional orders: the same operations in the same order, bitwise (inf: unconverged)
    np.testing.assert_array_equal(got[~IS_INT], ref[~IS_INT])
    # integer orders: |log A| relative 1e-13, or an absolute error of a few ulps of the
    # summands (size alpha |log(1 - q)|), what RDP_ABS_SLACK (1e-15) covers after / (alpha-1)
    a = ORDERS[IS_INT]
    tol = 1e-13 * np.abs(ref[IS_INT]) + 8 * np.finfo(float).eps * a * (-math.log1p(-q))
    assert np.all(np.abs(got[IS_INT] - ref[IS_INT]) <= tol)
    assert np.all(np.abs(got[IS_INT] - ref[IS_INT]) / (a - 1.0)
                  <= 1e-12 * np.abs(ref[IS_INT]) / (a - 1.0) + 1e-15)


def test_large_and_unusual_orders():
    orders = np.array([1.0001, 1.5, 2.0, 2000.0, 2048.5, 70.25])
    for q, s in [(0.01, 1.0), (0.3, 4.0)]:
        got = _rdp.log_a_sampled_gaussian(q, orders, s)
        ref = twin.log_a_sampled_gaussian(q, orders, s)
        frac = orders != np.floor(orders)
        np.testing.assert_array_equal(got[frac], ref[frac])
        np.testing.assert_allclose(got[~frac], ref[~frac], rtol=1e-13)


@pytest.mark.parametrize("improved", [True, False])
@pytest.mark.parametrize("alpha", [2.0, 7.5, 20.0, 64.0])
def test_order_epsilon_matches_twin(improved, alpha):
    for q, s, steps in [(0.01, 1.0, 1000), (256 / 45312, 1.39, 177)]:
        got = _rdp.order_epsilon(q, alpha, s, float(steps), 1e-8, improved)
        ref = twin.order_epsilon(q, alpha, s, steps, 1e-8, improved)
        assert got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("alpha", [3.5, 12.0, 20.0])
def test_order_root_keeps_the_safe_end(alpha):
    q, steps, delta, target = 0.01, 1000.0, 1e-6, 8.0
    assert _rdp.order_epsilon(q, alpha, 0.3, steps, delta, True) > target   # a bracket
    s, eps = _rdp.order_root(q, alpha, steps, delta, True, target, 1e-9, 0.3, 20.0)
    assert eps == _rdp.order_epsilon(q, alpha, s, steps, delta, True)
    assert target - 1e-9 <= eps <= target
    assert _rdp.order_epsilon(q, alpha, s * (1 - 1e-6), steps, delta, True) > target - 1e-9


@pytest.mark.parametrize("q, steps, target, delta", [(0.01, 1000.0, 2.0, 1e-6),
                                                     (256 / 45312, 177.0, 1.0, 45312.0 ** -2),
                                                     (0.3, 10.0, 8.0, 1e-5)])
def test_smallest_root_is_the_smallest_order_root(q, steps, target, delta):
    orders = np.ascontiguousarray(ORDERS[IS_INT])
    alpha, s = _rdp.smallest_root(q, orders, steps, delta, True, target, 1e-10, 1.0, 1e-6, 1e6)
    roots = []
    for a in orders:
        if _rdp.order_epsilon(q, a, math.inf, steps, delta, True) >= target:
            continue             # no noise meets the target at this order
        lo, hi = 1e-3, 1e4
        roots.append((_rdp.order_root(q, a, steps, delta, True, target, 1e-10, lo, hi)[0], a))
    best, best_alpha = min(roots)
    assert s == pytest.approx(best, rel=1e-9) and alpha == best_alpha
    assert _rdp.order_epsilon(q, alpha, s, steps, delta, True) <= target


def _log_a_int_two_pass(alpha, q, s):
    # The integer-order sum as the kernel computed it before the underflow skip (issue 18):
    # every term's exp added, in order, in scalar double arithmetic.
    from scipy.special import gammaln

    a, log_q, log_1mq, inv2s2 = int(alpha), math.log(q), math.log1p(-q), 1.0 / (2.0 * s * s)
    g = [float(gammaln(k + 1.0)) for k in range(a + 1)]
    terms = [(g[a] - g[k] - g[a - k] + k * log_q + (alpha - k) * log_1mq)
             + (k * k - k) * inv2s2 for k in range(a + 1)]
    kmax = max(range(a + 1), key=lambda k: (terms[k], -k))
    total = 0.0
    for k in range(a + 1):
        if k != kmax:
            total += math.exp(terms[k] - terms[kmax])
    return math.log1p(total) + terms[kmax]


@pytest.mark.parametrize("q, s", [(1e-5, 0.5), (256 / 45312, 1.39), (0.1, 3.0), (0.9, 20.0)])
def test_integer_orders_skip_only_exact_zeros(q, s):
    # Terms more than 746 below the largest have exp == 0.0 exactly: skipping them keeps the
    # sum bitwise, on the kept-terms path (orders up to 1024) and the recomputed one (above).
    orders = np.array([2.0, 17.0, 63.0, 128.0, 1024.0, 1025.0, 1500.0])
    got = _rdp.log_a_sampled_gaussian(q, orders, s)
    want = np.array([_log_a_int_two_pass(a, q, s) for a in orders])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("conversion", ["improved", "mironov"])
@pytest.mark.parametrize("delta", [1e-12, 45312.0 ** -2, 1e-5, 0.3, 0.5, 0.9])
def test_compiled_epsilons_are_bitwise_the_numpy_conversion(conversion, delta):
    # dpsco_core.privacy.conversions._epsilons (compiled loop, NumPy total-variation rule when
    # it can hold) against _epsilons_numpy, its twin, on curves with every kind of value:
    # 0, tiny (where the rule sets 0), ordinary, huge, inf, NaN; strided arrays too
    from dpsco_core.privacy.conversions import _epsilons, _epsilons_numpy

    rng = np.random.default_rng(7)
    orders = np.concatenate([ORDERS, [1.001, 1.01, 1.0100000000000002, 5000.0]])
    for _ in range(40):
        rdp = np.exp(rng.uniform(-60, 8, orders.size))
        pick = rng.integers(0, 8, orders.size)
        rdp[pick == 0] = 0.0
        rdp[pick == 1] = np.inf
        rdp[pick == 2] = np.nan
        rdp[pick == 3] = delta * delta * rng.uniform(0, 8, (pick == 3).sum())
        got = _epsilons(orders, rdp, delta, conversion)
        ref = _epsilons_numpy(orders, rdp, delta, conversion)
        assert got.tobytes() == ref.tobytes()
        wide = np.repeat(rdp, 2)[::2]                       # a strided view
        assert _epsilons(orders, wide, delta, conversion).tobytes() == ref.tobytes()


@pytest.mark.parametrize("improved", [True, False])
def test_order_epsilon_floor_is_below_the_epsilon(improved):
    # smallest_root skips an order whose floor is not below the epsilon it must beat: the
    # floor must never exceed the order's epsilon (and is -inf for fractional orders)
    for q in (1e-5, 256 / 45312, 0.01, 0.3, 0.9):
        for s in (0.2, 0.6, 1.0, 1.39, 3.0, 20.0, 1e3):
            for steps in (1.0, 177.0, 1e5):
                for delta in (1e-12, 1e-6, 0.4):
                    for a in ORDERS:
                        floor = _rdp.order_epsilon_floor(q, a, s, steps, delta, improved)
                        eps = _rdp.order_epsilon(q, a, s, steps, delta, improved)
                        assert floor <= eps, (q, s, steps, delta, a)
                        if a != math.floor(a):
                            assert floor == -math.inf
    assert _rdp.order_epsilon_floor(0.01, 1024.0, 1.0, 100.0, 1e-6, True) > 1e4   # it prunes


def test_compiled_gaussian_curve_is_bitwise_the_numpy_expression():
    # rdp_gaussian (compiled loop) against _rdp_gaussian_numpy, its twin
    from dpsco_core.privacy.rdp import _rdp_gaussian_numpy, rdp_gaussian

    rng = np.random.default_rng(3)
    orders = np.concatenate([ORDERS, [1.0000001, 1e6, 1e300]])
    for s in np.concatenate([np.exp(rng.uniform(-12, 12, 200)), [1e-160, 1e160, 1.0, 3]]):
        got = rdp_gaussian(s, orders)
        with np.errstate(divide="ignore", over="ignore"):     # s = 1e-160: 2 s^2 is 0
            ref = _rdp_gaussian_numpy(float(s), orders)
        assert got.tobytes() == ref.tobytes()
        assert rdp_gaussian(s, orders[::2]).tobytes() == got[::2].tobytes()


def test_conversion_takes_the_numpy_path_for_other_inputs():
    # float32 curves and mismatched shapes keep the former NumPy behaviour (a broadcasting
    # error, not an out-of-bounds read)
    from dpsco_core.privacy.conversions import _epsilons, _epsilons_numpy

    orders = np.array([1.5, 2.0, 8.0])
    r32 = np.array([0.1, 0.2, 0.5], dtype=np.float32)
    assert _epsilons(orders, r32, 1e-6, "improved").tobytes() == _epsilons_numpy(
        orders, r32, 1e-6, "improved").tobytes()
    assert _epsilons(orders, r32, 1e-6, "mironov").tobytes() == _epsilons_numpy(
        orders, r32, 1e-6, "mironov").tobytes()
    with pytest.raises(ValueError):
        _epsilons(orders, np.ones(5), 1e-6, "improved")
