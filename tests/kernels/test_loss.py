"""Kernel ``_loss`` against its NumPy twin and a ``math``-module scalar oracle, across threads."""

import math
import struct

import numpy as np
import pytest

from dpsco_core._kernels import _loss as kernel
from dpsco_core.reference import loss as twin

KINDS = twin.LOSS_KINDS
ENTRIES = ("loss_values", "loss_derivs", "loss_derivs2")


# Scalar oracle: the formulas of src_cython/_loss.pxd evaluated with Python's math module,
# which calls the same C library exp/log1p as the kernel.
def _log1pexp(x):
    if x <= -37.0:
        return math.exp(x)
    if x <= 18.0:
        return math.log1p(math.exp(x))
    if x <= 33.3:
        return x + math.exp(-x)
    return x


def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _exp_poly(x):
    """src_cython/_exp_poly.h's dpsco_exp, one float at a time (bits through struct)."""
    x = min(max(x, -708.0), 710.0)
    shift = 6755399441055744.0
    kd = x * 1.4426950408889634 + shift
    k = kd - shift
    r = x - k * 0.693145751953125
    r = r - k * 1.4286068203094173e-06
    p = 1.0 / 6227020800.0
    for c in (479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0,
              24.0, 6.0, 2.0, 1.0, 1.0):
        p = p * r + 1.0 / c
    bits = struct.unpack("<q", struct.pack("<d", kd))[0]
    scale = struct.unpack("<d", struct.pack("<q", (bits - 0x4338000000000000 + 1022) << 52))[0]
    return (p * 2.0) * scale


def _oracle(entry, kind, z, y, d):
    r = z - y
    if entry == "loss_values":
        return [(r * r), 0.5 * (r * r), _log1pexp(-(y * z)),
                0.5 * r * r if abs(r) <= d else d * (abs(r) - 0.5 * d),
                max(1.0 - y * z, 0.0) if 1.0 - y * z > 0.0 else 0.0, abs(r)][kind]
    if entry == "loss_derivs":
        return [2.0 * r, r, -y / (1.0 + _exp_poly(y * z)), min(max(r, -d), d),
                -y if 1.0 - y * z > 0.0 else 0.0, float(np.sign(r))][kind]
    e = math.exp(-abs(y * z))
    return [2.0, 1.0, e / ((1.0 + e) * (1.0 + e)), 1.0 if abs(r) <= d else 0.0, 0.0, 0.0][kind]


def _margins(rng, m):
    """Random margins plus the cut-offs, kinks and extremes of every loss."""
    special = [0.0, -0.0, 1.0, -1.0, 37.0, -37.0, 18.0, -18.0, 33.3, -33.3, 1e-300, 1e300,
               -1e300, 745.0, -745.0, 710.0, 2.0, 0.5, np.nextafter(18.0, 19), -np.nextafter(33.3, 34)]
    z = np.concatenate([special, rng.standard_normal(m) * rng.choice([0.1, 10.0, 1e3], m)])
    y = rng.choice([-1.0, 1.0], z.size)
    return z, y


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
@pytest.mark.parametrize("entry", ENTRIES)
def test_kernel_matches_math_oracle_bitwise(kind, entry, global_seed):
    z, y = _margins(np.random.default_rng(global_seed), 2000)
    if kind not in (twin.LOSS_LOGISTIC, twin.LOSS_HINGE):
        y = y * 1.5 + z * 0.25          # regression targets near the margins (Huber/abs kinks)
        y[:5] = z[:5]                   # exact kinks
    out = np.empty_like(z)
    getattr(kernel, entry)(z, y, kind, 1.0, out, 1)
    expected = np.array([_oracle(entry, kind, zi, yi, 1.0) for zi, yi in zip(z.tolist(), y.tolist())])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
@pytest.mark.parametrize("entry", ENTRIES)
def test_kernel_matches_twin(kind, entry, global_seed):
    # Bitwise where only IEEE-exact operations are involved (all derivatives: the logistic one
    # uses the polynomial exp); for the logistic value and second derivative NumPy's SIMD
    # exp/log1p (AVX-512 builds) may differ from the C library's by an ulp or two.
    z, y = _margins(np.random.default_rng(global_seed), 5000)
    param = 0.7
    out_k, out_t = np.empty_like(z), np.empty_like(z)
    getattr(kernel, entry)(z, y, kind, param, out_k, 2)
    getattr(twin, entry)(z, y, kind, param, out_t, 2)
    if kind == twin.LOSS_LOGISTIC and entry != "loss_derivs":
        np.testing.assert_array_max_ulp(out_k, out_t, maxulp=4)
    else:
        np.testing.assert_array_equal(out_k, out_t)


def test_exp_poly_within_one_ulp_of_libm():
    x = np.concatenate([np.linspace(-708.0, 709.78, 200_001), [0.0, -0.0, 1e-300, -1e-300,
                        np.log(2.0), -np.log(2.0), 0.5 * np.log(2.0), 707.99, -707.99, 709.44,
                        709.45, 709.7827]])
    got = twin.exp_poly(x)
    assert [_exp_poly(v) for v in x[::997].tolist()] == got[::997].tolist()
    expected = np.array([math.exp(v) for v in x.tolist()])
    np.testing.assert_array_max_ulp(got, expected, maxulp=1)
    assert twin.exp_poly(0.0) == 1.0
    # overflow as libm; clamped below -708 (1 / (1 + exp(u)) is 1 there either way)
    assert np.all(np.isinf(twin.exp_poly([709.79, 710.0, 745.0, 1e300])))
    np.testing.assert_array_equal(twin.exp_poly([-745.0, -1e300]), twin.exp_poly(-708.0))


def test_logistic_derivative_close_to_the_branchy_sigmoid():
    z, y = _margins(np.random.default_rng(11), 20_000)
    out = np.empty_like(z)
    kernel.loss_derivs(z, y, KINDS["logistic"], 1.0, out, 1)
    exact = np.array([-yi * _sigmoid(-(yi * zi)) for zi, yi in zip(z.tolist(), y.tolist())])
    np.testing.assert_allclose(out, exact, rtol=4 * np.finfo(float).eps, atol=4e-308)
    assert np.all(np.abs(out) <= 1.0)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_values_derivs_equals_separate_entries(kind):
    z, y = _margins(np.random.default_rng(3), 1000)
    v, d = np.empty_like(z), np.empty_like(z)
    kernel.loss_values_derivs(z, y, kind, 1.0, v, d, 2)
    v2, d2 = np.empty_like(z), np.empty_like(z)
    kernel.loss_values(z, y, kind, 1.0, v2, 1)
    kernel.loss_derivs(z, y, kind, 1.0, d2, 1)
    np.testing.assert_array_equal(v, v2)
    np.testing.assert_array_equal(d, d2)
    tv, td = np.empty_like(z), np.empty_like(z)
    twin.loss_values_derivs(z, y, kind, 1.0, tv, td, 1)
    np.testing.assert_array_max_ulp(v, tv, maxulp=4)


@pytest.mark.parametrize("entry", ENTRIES)
def test_same_result_for_any_thread_count(entry):
    z, y = _margins(np.random.default_rng(5), 100_000)
    for kind in KINDS.values():
        outs = []
        for n_threads in (1, 2, 4):
            out = np.empty_like(z)
            getattr(kernel, entry)(z, y, kind, 1.0, out, n_threads)
            outs.append(out)
        np.testing.assert_array_equal(outs[0], outs[1])
        np.testing.assert_array_equal(outs[0], outs[2])


def test_read_only_inputs_accepted_and_unchanged():
    z, y = _margins(np.random.default_rng(6), 100)
    z.flags.writeable = False
    y.flags.writeable = False
    z0, y0 = z.copy(), y.copy()
    out = np.empty_like(z)
    for entry in ENTRIES:
        getattr(kernel, entry)(z, y, twin.LOSS_LOGISTIC, 0.0, out, 2)
    np.testing.assert_array_equal(z, z0)
    np.testing.assert_array_equal(y, y0)


def test_constants_match_twin():
    assert kernel.LOSS_KINDS == twin.LOSS_KINDS
    from dpsco_core import losses
    assert [losses.LOSS_SQUARED, losses.LOSS_HALF_SQUARED, losses.LOSS_LOGISTIC,
            losses.LOSS_HUBER, losses.LOSS_HINGE, losses.LOSS_ABSOLUTE] == list(range(6))


def test_entry_points_reject_bad_shapes_and_kinds():
    z = np.zeros(3)
    with pytest.raises(ValueError, match="same length"):
        kernel.loss_values(z, np.zeros(2), 0, 0.0, np.empty(3), 1)
    with pytest.raises(ValueError, match="same length"):
        kernel.loss_derivs(z, z, 0, 0.0, np.empty(4), 1)
    with pytest.raises(ValueError, match="unknown loss kind"):
        kernel.loss_derivs2(z, z, 6, 0.0, np.empty(3), 1)
