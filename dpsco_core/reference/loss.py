"""NumPy twin of ``dpsco_core._kernels._loss``: the same formulas and branches, vectorized.

Every entry point has the kernel's name, arguments and return value (it writes into the
``*_out`` buffers). The branches and cut-offs are those of ``src_cython/_loss.pxd``, so the
results agree bitwise wherever only +, -, *, /, abs and comparisons are involved (squared, half
squared, Huber, hinge, absolute, and the logistic derivative, whose exp is the kernels'
polynomial :func:`exp_poly`). For the logistic value and second derivative NumPy's SIMD
``exp``/``log1p`` (AVX-512 builds) may differ from the C library's by an ulp or two, which is
what the tests allow.
"""

import numpy as np

from ..losses import (LOSS_ABSOLUTE, LOSS_HALF_SQUARED, LOSS_HINGE, LOSS_HUBER, LOSS_LOGISTIC,
                      LOSS_SQUARED)

LOSS_KINDS = {
    "squared": LOSS_SQUARED,
    "half_squared": LOSS_HALF_SQUARED,
    "logistic": LOSS_LOGISTIC,
    "huber": LOSS_HUBER,
    "hinge": LOSS_HINGE,
    "absolute": LOSS_ABSOLUTE,
}


def log1pexp(x):
    """log(1 + exp(x)) with Maechler's cut-offs (-37, 18, 33.3), as in ``_loss.pxd``."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()                                   # x > 33.3
    low = x <= -37.0
    mid = (x > -37.0) & (x <= 18.0)
    high = (x > 18.0) & (x <= 33.3)
    out[low] = np.exp(x[low])
    out[mid] = np.log1p(np.exp(x[mid]))
    out[high] = x[high] + np.exp(-x[high])
    return out


# dpsco_exp of src_cython/_exp_poly.h, operation for operation (constants rounded alike).
_SHIFT = 6755399441055744.0                  # 1.5 * 2^52
_LOG2E = 1.4426950408889634
_LN2_HI = 0.693145751953125
_LN2_LO = 1.4286068203094173e-06
_EXP_TAYLOR = [1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
               1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
               1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0]


def exp_poly(x):
    """exp(x) for x clamped to [-708, 710]: the kernels' branch-free exp, bitwise.

    Cody-Waite reduction ``x = k ln 2 + r`` (|r| <= ln 2 / 2), the degree-13 Taylor polynomial of
    exp(r) by Horner, times 2 * 2^(k-1) built from its exponent bits; within one ulp of the C
    library on [-708, 709.78], +inf above, exp(-708) below.
    """
    x = np.clip(np.asarray(x, dtype=np.float64), -708.0, 710.0)
    kd = np.asarray(x * _LOG2E + _SHIFT)
    k = kd - _SHIFT
    r = x - k * _LN2_HI
    r = r - k * _LN2_LO
    p = np.full_like(r, _EXP_TAYLOR[0])
    for coef in _EXP_TAYLOR[1:]:
        p = p * r + coef
    bits = (kd.view(np.int64) - 0x4338000000000000 + 1022) << 52
    with np.errstate(over="ignore"):
        return (p * 2.0) * bits.view(np.float64)


def logistic_deriv(z, y):
    """d/dz log(1 + exp(-y z)) = -y / (1 + exp(y z)) with :func:`exp_poly`, as the kernels."""
    return -y / (1.0 + exp_poly(y * z))


def _value(z, y, kind, param):
    if kind == LOSS_SQUARED:
        r = z - y
        return r * r
    if kind == LOSS_HALF_SQUARED:
        r = z - y
        return 0.5 * (r * r)
    if kind == LOSS_LOGISTIC:
        return log1pexp(-(y * z))
    if kind == LOSS_HUBER:
        r = z - y
        a = np.abs(r)
        return np.where(a <= param, 0.5 * r * r, param * (a - 0.5 * param))
    if kind == LOSS_HINGE:
        r = 1.0 - y * z
        return np.where(r > 0.0, r, 0.0)
    if kind == LOSS_ABSOLUTE:
        return np.abs(z - y)
    raise ValueError(f"unknown loss kind {kind}")


def _deriv(z, y, kind, param):
    if kind == LOSS_SQUARED:
        return 2.0 * (z - y)
    if kind == LOSS_HALF_SQUARED:
        return z - y
    if kind == LOSS_LOGISTIC:
        return logistic_deriv(z, y)
    if kind == LOSS_HUBER:
        return np.clip(z - y, -param, param)
    if kind == LOSS_HINGE:
        return np.where(1.0 - y * z > 0.0, -y, 0.0)
    if kind == LOSS_ABSOLUTE:
        return np.sign(z - y)
    raise ValueError(f"unknown loss kind {kind}")


def _deriv2(z, y, kind, param):
    if kind == LOSS_SQUARED:
        return np.full_like(z, 2.0)
    if kind == LOSS_HALF_SQUARED:
        return np.ones_like(z)
    if kind == LOSS_LOGISTIC:
        e = np.exp(-np.abs(y * z))
        return e / ((1.0 + e) * (1.0 + e))
    if kind == LOSS_HUBER:
        return np.where(np.abs(z - y) <= param, 1.0, 0.0)
    if kind in (LOSS_HINGE, LOSS_ABSOLUTE):
        return np.zeros_like(z)
    raise ValueError(f"unknown loss kind {kind}")


def _quiet(func):
    """The kernel overflows silently to inf (as IEEE arithmetic does); so does the twin."""
    def wrapper(*args):
        with np.errstate(over="ignore"):
            return func(*args)
    wrapper.__name__, wrapper.__doc__ = func.__name__, func.__doc__
    return wrapper


def _check(z, y, out):
    if y.shape[0] != z.shape[0] or out.shape[0] != z.shape[0]:
        raise ValueError(f"z, y and the output must have the same length; got {z.shape[0]}, "
                         f"{y.shape[0]}, {out.shape[0]}")


@_quiet
def loss_values(z, y, kind, param, value_out, n_threads):
    """Write ``l(z[i], y[i])`` into ``value_out``."""
    _check(z, y, value_out)
    value_out[:] = _value(z, y, kind, param)


@_quiet
def loss_derivs(z, y, kind, param, deriv_out, n_threads):
    """Write ``dl/dz (z[i], y[i])`` into ``deriv_out``."""
    _check(z, y, deriv_out)
    deriv_out[:] = _deriv(z, y, kind, param)


@_quiet
def loss_derivs2(z, y, kind, param, deriv2_out, n_threads):
    """Write ``d2l/dz2 (z[i], y[i])`` into ``deriv2_out``."""
    _check(z, y, deriv2_out)
    deriv2_out[:] = _deriv2(z, y, kind, param)


@_quiet
def loss_values_derivs(z, y, kind, param, value_out, deriv_out, n_threads):
    """Write the values and the derivatives."""
    _check(z, y, value_out)
    _check(z, y, deriv_out)
    value_out[:] = _value(z, y, kind, param)
    deriv_out[:] = _deriv(z, y, kind, param)
