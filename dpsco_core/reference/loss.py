"""NumPy twin of ``dpsco_core._kernels._loss``: the same formulas and branches, vectorized.

Every entry point has the kernel's name, arguments and return value (it writes into the
``*_out`` buffers). The branches and cut-offs are those of ``src_cython/_loss.pxd``, so the
results agree bitwise wherever only +, -, *, /, abs and comparisons are involved (squared, half
squared, Huber, hinge, absolute). For the logistic loss NumPy's SIMD ``exp``/``log1p`` (AVX-512
builds) may differ from the C library's by an ulp or two, which is what the tests allow; the
kernel matches the ``math``-module evaluation of the same formulas bitwise.
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


def sigmoid(x):
    """1 / (1 + exp(-x)), evaluating exp at non-positive arguments only."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0.0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


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
        return -y * sigmoid(-(y * z))
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
