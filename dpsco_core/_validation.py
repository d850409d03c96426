"""Validation at the public boundary.

Every public function of dpsco-core validates its arguments here, once, and the kernels assume
valid input. Messages follow one pattern: the argument's name, the accepted set in interval
notation, and the value received ("delta must be in (0, 1); got 1.5."). A wrong type raises
``TypeError``, a wrong value ``ValueError``. Nothing here modifies its input.
"""

import math
import numbers

import numpy as np

__all__ = [
    "check_scalar",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_int",
    "check_vector",
    "check_n_threads",
]


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_scalar(value, name, *, low=None, high=None, low_open=True, high_open=True,
                 allow_inf=False):
    """Return ``value`` as a float after checking it is a real number in the stated interval.

    Parameters
    ----------
    value : object
        The value received.
    name : str
        The argument's name, used in the error message.
    low, high : float or None
        Bounds of the accepted interval (None: unbounded on that side).
    low_open, high_open : bool
        Whether the bound itself is excluded.
    allow_inf : bool
        Accept +inf (for example an infinite clip meaning "no clipping").

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans are rejected).
    ValueError
        If ``value`` is NaN, infinite (unless ``allow_inf``) or outside the interval.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}.")
    value = float(value)
    interval = "{}{}, {}{}".format(
        "(" if low_open or low is None else "[",
        "-inf" if low is None else f"{low:g}",
        "inf" if high is None else f"{high:g}",
        ")" if high_open or high is None else "]",
    )
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be a finite number in {interval}; got {value!r}.")
    bad_low = low is not None and (value < low or (low_open and value == low))
    bad_high = high is not None and (value > high or (high_open and value == high))
    if bad_low or bad_high:
        raise ValueError(f"{name} must be in {interval}; got {value!r}.")
    return value


def check_epsilon(epsilon, name="epsilon"):
    """Privacy parameter epsilon: a finite real number in (0, inf)."""
    return check_scalar(epsilon, name, low=0.0)


def check_delta(delta, name="delta", *, allow_zero=False):
    """Privacy parameter delta: a real number in (0, 1) (or [0, 1) with ``allow_zero``)."""
    return check_scalar(delta, name, low=0.0, high=1.0, low_open=not allow_zero)


def check_positive(value, name, *, allow_inf=False):
    """A real number in (0, inf): sensitivities, scales, clipping norms."""
    return check_scalar(value, name, low=0.0, allow_inf=allow_inf)


def check_int(value, name, *, low=None, high=None):
    """Return ``value`` as a Python int after checking it lies in [low, high]."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}.")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        interval = "[{}, {}]".format("-inf" if low is None else low, "inf" if high is None else high)
        raise ValueError(f"{name} must be an integer in {interval}; got {value}.")
    return value


def check_vector(x, name, *, allow_empty=False, copy=False):
    """Return a 1-d C-contiguous float64 array made from ``x``, checked finite.

    A new array is made only when ``x`` is not already a contiguous float64 vector (or when
    ``copy`` is set): the caller's array is never written to. NaN and inf are rejected with the
    sum-first test (one cheap reduction, the element-wise test only if the sum is not finite).

    Raises
    ------
    TypeError
        If ``x`` is not numeric (strings, objects, complex numbers).
    ValueError
        If ``x`` is not 1-dimensional, is empty (unless ``allow_empty``), or has NaN or inf.
    """
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}.")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be an array of real numbers; got complex dtype {arr.dtype}.")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty.")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if copy and np.shares_memory(out, arr):
        out = out.copy()
    if out.size and not math.isfinite(float(np.sum(out))):
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{name} must contain only finite values; it has NaN or inf.")
    return out


def check_n_threads(n_threads):
    """Resolve ``n_threads``: None means every core OpenMP reports, an int >= 1 is used as is."""
    from ._config import effective_n_threads

    return effective_n_threads(n_threads)
