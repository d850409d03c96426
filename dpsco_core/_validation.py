"""Validation at the public boundary.

Every public function of dpsco-core validates its arguments here, once, and the kernels assume
valid input. Messages follow one pattern: the argument's name, the accepted set in interval
notation, and the value received ("delta must be in (0, 1); got 1.5."). A wrong type raises
``TypeError``, a wrong value ``ValueError``. Nothing here modifies its input.

Values are quoted for public arguments only (privacy parameters, bounds, options). Checks of
the data (X, y, scores, sparse structures) name shapes, dtypes and the failed property, never
an entry, an index or a count read from the data: an error message is an output that no privacy
report accounts for (tests/privacy/test_error_messages.py).
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
    "check_real_array",
    "all_finite",
    "check_sparse",
    "check_n_threads",
    "exception_summary",
]


def _is_real(value):
    if type(value) is float or type(value) is int:     # the common case, before the ABC check
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: NumPy's and SciPy's conversion messages known to quote nothing but shapes.
_SHAPE_ONLY_MESSAGES = ("setting an array element with a sequence",)


def exception_summary(exc):
    """``exc``'s message when it is one NumPy is known to write without the data's values (a
    ragged array's shapes), else only its type: a third-party message on malformed input may
    quote the entries or indices it rejected ("could not convert string to float: '...'",
    "index 17 is out of bounds ..."), and the input may be private data."""
    message = str(exc)
    if message.startswith(_SHAPE_ONLY_MESSAGES):
        return message
    return f"{type(exc).__name__}; its message is withheld as it may quote the data"


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
    if type(value) is not float:     # a Python float as is (issue 18: a dozen calls a solve)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if not _is_real(value):
            raise TypeError(f"{name} must be a real number; got {type(value).__name__} "
                            f"{value!r}.")
        value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be a finite number in "
                         f"{_interval(low, high, low_open, high_open)}; got {value!r}.")
    bad_low = low is not None and (value < low or (low_open and value == low))
    bad_high = high is not None and (value > high or (high_open and value == high))
    if bad_low or bad_high:
        raise ValueError(f"{name} must be in {_interval(low, high, low_open, high_open)}; "
                         f"got {value!r}.")
    return value


def _interval(low, high, low_open, high_open):
    """The accepted interval in interval notation, for messages (built only on failure: the
    formatting was a noticeable part of a short solver call's fixed cost; issue 18)."""
    return "{}{}, {}{}".format(
        "(" if low_open or low is None else "[",
        "-inf" if low is None else f"{low:g}",
        "inf" if high is None else f"{high:g}",
        ")" if high_open or high is None else "]",
    )


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
    if type(value) is not int:      # a plain int skips the (slow) abstract Integral check
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an integer; got {type(value).__name__} "
                            f"{value!r}.")
        value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        interval = "[{}, {}]".format("-inf" if low is None else low, "inf" if high is None else high)
        raise ValueError(f"{name} must be an integer in {interval}; got {value}.")
    return value


def check_vector(x, name, *, allow_empty=False, copy=False, check_finite=True):
    """Return a 1-d C-contiguous float64 array made from ``x``, checked finite.

    A new array is made only when ``x`` is not already a contiguous float64 vector (or when
    ``copy`` is set): the caller's array is never written to. NaN and inf are rejected with the
    sum-first test (one cheap reduction, the element-wise test only if the sum is not finite).
    ``check_finite=False`` skips that pass, for a caller whose own pass over ``x`` shows
    non-finite values (and then calls this again to raise).

    Raises
    ------
    TypeError
        If ``x`` is not numeric (strings, objects, complex numbers).
    ValueError
        If ``x`` is not 1-dimensional, is empty (unless ``allow_empty``), or has NaN or inf.
    """
    arr = check_real_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got an array of shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty.")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if copy and np.shares_memory(out, arr):
        out = out.copy()
    if check_finite and not all_finite(out):
        raise ValueError(f"{name} must contain only finite values; it has NaN or inf.")
    return out


def all_finite(arr):
    """Whether every entry of the float array ``arr`` is finite: one cheap reduction, and the
    element-wise test only when the sum is not finite (large finite entries may overflow it;
    that is not an error, so the overflow warning is silenced)."""
    if arr.size == 0:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if math.isfinite(float(np.sum(arr))):
            return True
    return bool(np.all(np.isfinite(arr)))


#: dtype kinds accepted as real numbers: bool, signed and unsigned integers, floats. Not
#: timedelta64 / datetime64 (NumPy files timedelta64 under np.signedinteger, so an
#: ``issubdtype(dtype, np.number)`` test lets it through), complex, strings or objects.
_REAL_KINDS = "biuf"


def check_real_array(x, name):
    """Return ``np.asarray(x)`` after checking that it holds real numbers.

    No conversion and no copy: the caller converts (to float64, to its layout) afterwards.

    Raises
    ------
    TypeError
        If ``x`` is a masked array (``np.asarray`` would drop the mask and use the masked
        values), a sparse matrix, or its dtype is not bool, integer or floating (complex,
        timedelta64, datetime64, strings, objects).
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} must be a plain array, not a masked array: its mask would be "
                        "ignored; fill the masked entries (x.filled(value)) or drop them first.")
    if _is_sparse(x):
        raise TypeError(f"{name} must be a dense array; got a sparse {type(x).__name__}.")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{name} must be an array of real numbers; got {type(x).__name__} "
                        f"that NumPy cannot convert ({exception_summary(exc)}).") from None
    if arr.dtype.kind not in _REAL_KINDS:
        raise TypeError(f"{name} must be an array of real numbers (bool, integer or float); "
                        f"got dtype {arr.dtype}.")
    return arr


def _is_sparse(x):
    import scipy.sparse as sp
    return sp.issparse(x)


def _index_array(a, name, what):
    """A structure array of a sparse matrix: a 1-d ndarray of integers (not yet range-checked)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}.{what} must be a numpy array; got {type(a).__name__}.")
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}.{what} must hold integers (int32 or int64); got dtype "
                        f"{a.dtype}.")
    if a.ndim != 1:
        raise ValueError(f"{name}.{what} must be 1-dimensional; got shape {a.shape}.")
    return a


def _check_range(a, high, name, what):
    """Every entry of the integer array ``a`` in [0, high).

    The message names neither the offending entries nor their positions: the indices of a
    sparse matrix say which entries of the private data are nonzero."""
    if a.size and (a.min() < 0 or a.max() >= high):
        raise ValueError(f"{name}.{what} must be in [0, {high}) (the matrix's shape); some "
                         "are not (their values are not shown: they locate private entries).")


def _index_dtype(*bounds):
    """int32 when every index and offset fits (SciPy's choice), else int64."""
    return np.int32 if max(bounds) <= np.iinfo(np.int32).max else np.int64


def _compressed_parts(X, name):
    """Validated (data, indices, indptr) of a CSR/CSC matrix, checked with NumPy only.

    SciPy's own routines (``has_sorted_indices``, ``tocsc``, ``sum_duplicates``, products)
    run C++ loops that trust this structure: on a malformed matrix they read and write out of
    bounds. So every property they rely on is checked here first, on the raw arrays.
    """
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    data = X.data
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise ValueError(f"{name}.data must be a 1-d numpy array; got "
                         f"{type(data).__name__} of {np.ndim(data)} dimension(s).")
    indices = _index_array(X.indices, name, "indices")
    indptr = _index_array(X.indptr, name, "indptr")
    if indptr.shape[0] != major + 1:
        raise ValueError(f"{name}.indptr must have {major + 1} entries (one per "
                         f"{'row' if X.format == 'csr' else 'column'}, plus one); got "
                         f"{indptr.shape[0]}.")
    if indices.shape[0] != data.shape[0]:
        raise ValueError(f"{name}.indices and {name}.data must have the same length (the "
                         "number of stored entries); they differ.")
    if indptr[0] != 0:
        raise ValueError(f"{name}.indptr must start at 0; it does not.")
    if major and np.any(indptr[1:] < indptr[:-1]):
        raise ValueError(f"{name}.indptr must be non-decreasing.")
    nnz = int(indptr[-1])
    if nnz > indices.shape[0]:
        raise ValueError(f"{name}.indptr must end at most at len({name}.indices) (the number "
                         "of stored entries); it ends beyond.")
    # Entries past indptr[-1] are not part of the matrix (SciPy's prune drops them).
    data, indices = data[:nnz], indices[:nnz]
    _check_range(indices, minor, name, "indices")
    return data, indices, indptr


def _is_canonical(indices, indptr):
    """Indices strictly increasing within each row (CSR) / column (CSC): sorted, no duplicates."""
    if indices.shape[0] < 2:
        return True
    increasing = indices[1:] > indices[:-1]
    # A slice boundary at position k (0 < k < nnz) lets indices[k] <= indices[k - 1].
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    increasing[starts - 1] = True
    return bool(increasing.all())


def check_sparse(X, name="X"):
    """Return a structurally valid, canonical CSR or CSC copy of the sparse matrix ``X``.

    Validated before any SciPy or kernel code reads it (both index without bounds checks):

    - ``shape`` is two non-negative integers;
    - CSR/CSC: ``indptr`` has ``major + 1`` integer entries, starts at 0, is non-decreasing
      and ends at most at ``len(indices) == len(data)``; every index lies in ``[0, minor)``;
    - COO: ``row``/``col`` are integer vectors as long as ``data``, within the shape;
    - other formats (LIL, DOK, DIA, BSR) are converted to COO by SciPy's array code, then
      checked the same way.

    CSR and CSC keep their format, other formats become CSR. Duplicate entries are summed and
    indices sorted (on a copy). The index arrays of the result are always new arrays owned by
    it (int32 when they fit, else int64), so that a later write to the caller's matrix cannot
    break what was checked; ``data`` is shared read-only when it needs no change. ``X`` is
    never modified. The values are not checked here (dtype, finiteness): callers do that.

    Raises
    ------
    TypeError
        If ``X`` is not a scipy.sparse matrix/array, or its index arrays are not integer
        numpy arrays.
    ValueError
        If ``X`` is not 2-dimensional or its structure is malformed (the message names the
        array and the accepted range).
    """
    import scipy.sparse as sp

    if not sp.issparse(X):
        raise TypeError(f"{name} must be a scipy.sparse matrix or array; got "
                        f"{type(X).__name__}.")
    shape = X.shape
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-dimensional; got a sparse array of shape {shape}.")
    if not all(isinstance(s, numbers.Integral) and s >= 0 for s in shape):
        raise ValueError(f"{name}.shape must be two integers >= 0; got {shape!r}.")
    n_rows, n_cols = int(shape[0]), int(shape[1])
    if np.dtype(X.dtype).kind not in _REAL_KINDS:
        raise TypeError(f"{name} must hold real numbers (bool, integer or float); got dtype "
                        f"{X.dtype}.")
    caller_data = X.data if isinstance(getattr(X, "data", None), np.ndarray) else None
    if X.format in ("csr", "csc"):
        data, indices, indptr = _compressed_parts(X, name)
        dtype = _index_dtype(n_rows, n_cols, indices.shape[0])
        # The copies this library owns (astype copies even when the dtype already matches).
        indices, indptr = indices.astype(dtype), indptr.astype(dtype)
        Y = type(X)((data, indices, indptr), shape=(n_rows, n_cols), copy=False)
        canonical = _is_canonical(indices, indptr)
    else:
        if X.format != "coo":
            try:
                X = X.tocoo()
            except (ValueError, TypeError, IndexError) as exc:
                raise ValueError(f"{name} is a malformed {X.format.upper()} matrix "
                                 f"({exception_summary(exc)}).") from None
        data = X.data
        if not isinstance(data, np.ndarray) or data.ndim != 1:
            raise ValueError(f"{name}.data must be a 1-d numpy array.")
        coords = []
        for what, a, high in (("row", X.row, n_rows), ("col", X.col, n_cols)):
            a = _index_array(a, name, what)
            if a.shape[0] != data.shape[0]:
                raise ValueError(f"{name}.{what} and {name}.data must have the same length "
                                 "(the number of stored entries); they differ.")
            _check_range(a, high, name, what)
            coords.append(a.astype(_index_dtype(n_rows, n_cols, data.shape[0])))
        coo = type(X)((data, tuple(coords)), shape=(n_rows, n_cols), copy=False)
        Y = coo.tocsr()              # new arrays; SciPy sums duplicates here
        canonical = False
    if canonical:
        Y.has_canonical_format = True
    else:
        if caller_data is not None and np.may_share_memory(Y.data, caller_data):
            Y.data = Y.data.copy()   # sum_duplicates permutes data in place
        Y.sum_duplicates()           # safe now: the structure is valid; sorts as well
    return Y


def check_n_threads(n_threads):
    """Resolve ``n_threads``: None means every core OpenMP reports, an int >= 1 is used as is."""
    from ._config import effective_n_threads

    return effective_n_threads(n_threads)
