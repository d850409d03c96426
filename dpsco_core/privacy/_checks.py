"""Argument checks shared by the privacy modules (on top of ``dpsco_core._validation``)."""

import math
import weakref

import numpy as np

from .._validation import check_scalar, check_vector

__all__ = ["check_orders", "check_conversion", "check_sample_rate", "round_up",
           "immutable_orders", "is_immutable_orders"]

#: Order grids already validated by :func:`immutable_orders`, by ``id``; the entry goes when
#: the array dies, and a hit is also checked by identity (issue 18: validating and copying the
#: library's constant grid was a few per cent of a first ``dp_sgd`` call, three times over).
_VALIDATED: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()

#: RDP -> (epsilon, delta) conversions understood by every accountant and calibration function.
CONVERSIONS = ("improved", "mironov")


def check_orders(orders, name="orders"):
    """Return a fresh read-only float64 copy of ``orders``, each order checked to be in (1, inf).

    An array made by :func:`immutable_orders` is returned as is: it was checked when it was
    made and cannot be written to, so a copy would hold the same values.

    Raises
    ------
    TypeError
        If ``orders`` is not an array of real numbers.
    ValueError
        If it is empty, not 1-dimensional, holds NaN or inf, or holds an order <= 1.
    """
    if _VALIDATED.get(id(orders)) is orders:
        return orders
    arr = check_vector(orders, name, copy=True)
    if np.any(arr <= 1.0):
        bad = float(arr[arr <= 1.0][0])
        raise ValueError(f"{name} must all be in (1, inf); got {bad!r}.")
    arr.flags.writeable = False
    return arr


def immutable_orders(orders, name="orders"):
    """Return ``check_orders(orders)`` as an array that can never be made writeable, registered
    so that :func:`check_orders` returns it without a copy (for constant grids, built once).

    The array is a read-only view of a read-only copy: NumPy refuses to make a view writeable
    when its base is not, so its values are fixed for its lifetime.
    """
    view = check_orders(orders, name).view()
    view.flags.writeable = False
    _VALIDATED[id(view)] = view
    return view


def immutable_orders_of_checked(values):
    """:func:`immutable_orders` of a list of Python floats the caller has checked (each
    finite and > 1): the same read-only view of a read-only float64 array, registered, without
    the generic validation (a tenth of a millisecond for a 157-order grid; issue 18)."""
    arr = np.array(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or not (arr.min() > 1.0 and math.isfinite(arr.max())):
        return immutable_orders(arr)        # not what it claims: the generic checks decide
    arr.flags.writeable = False
    view = arr.view()
    view.flags.writeable = False
    _VALIDATED[id(view)] = view
    return view


def is_immutable_orders(orders):
    """Whether ``orders`` is an array made by :func:`immutable_orders` (values fixed)."""
    return _VALIDATED.get(id(orders)) is orders


def check_conversion(conversion, name="conversion"):
    """Return ``conversion`` after checking it names a known RDP -> DP conversion."""
    if not isinstance(conversion, str):
        raise TypeError(f"{name} must be a str in {set(CONVERSIONS)}; "
                        f"got {type(conversion).__name__} {conversion!r}.")
    if conversion not in CONVERSIONS:
        raise ValueError(f"{name} must be one of {set(CONVERSIONS)}; got {conversion!r}.")
    return conversion


def check_sample_rate(sample_rate, name="sample_rate"):
    """A Poisson sampling probability: a real number in (0, 1]."""
    return check_scalar(sample_rate, name, low=0.0, high=1.0, high_open=False)


def round_up(value):
    """Round a computed bound up (elementwise): the last step of every bound we report.

    Bounds are computed in float64 from a few transcendental functions, each correct to an ulp
    or two; a relative 1e-13 plus one ulp keeps the reported number above the exact value of the
    formula, in the spirit of OpenDP's upward casts. An exact zero stays zero.
    """
    if type(value) is float or type(value) is np.float64:
        # The scalar case (most calls), with the same IEEE operations as the array case below.
        if value == 0.0:
            return np.float64(0.0)
        return np.float64(math.nextafter(float(value) * (1.0 + 1e-13), math.inf))
    value = np.asarray(value, dtype=np.float64)
    with np.errstate(over="ignore"):
        up = np.nextafter(value * (1.0 + 1e-13), np.inf)
    out = np.where(value == 0.0, 0.0, up)
    return out[()] if out.ndim == 0 else out
