r"""The composite empirical risk every solver minimizes, with its data and constants.

.. math::

    F(w) = \frac1n \sum_{i=1}^n \ell(\langle x_i, w\rangle, y_i) + \psi(w)

with a per-sample loss :math:`\ell` (``dpsco_core.losses``) and a separable penalty
:math:`\psi` (``dpsco_core.penalties``). ``Problem`` validates and stores the data once (float64,
or dense float32 as given; never writing to the caller's arrays), keeps the layouts the kernels need (Fortran / CSC for
column kernels, C / CSR for row kernels; each at most one copy, cached), and computes the
constants of note 002, section 3.6:

- coordinate smoothness :math:`M_j = s_\ell \|X_{:,j}\|_2^2 / n` with :math:`s_\ell =
  \sup|\ell''|` (2 squared, 1 half squared and Huber, 1/4 logistic);
- coordinate Lipschitz bounds :math:`L_j = \Lambda_\ell \max_i |x_{ij}|` with
  :math:`\Lambda_\ell = \sup|\ell'|` (none for the squared losses);
- global smoothness :math:`\beta = s_\ell \lambda_{\max}(X^\top X) / n`;
- global Lipschitz constant :math:`\Lambda_\ell \max_i \|x_i\|_2`.

These constants are computed from the private data: a solver that uses them must either pay
privacy budget for them (note 002, section 3.4) or treat them as public, and say so in its
privacy report. A problem built with public bounds (``bounds=``, ``row_norm=``,
``label_bound=``; :mod:`dpsco_core.public_bounds`) holds the data mapped onto those bounds, and
``problem.public_bounds`` gives the same constants as worst-case bounds that read no data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from ._typing import ArrayLike, FloatArray, MatrixLike
from ._validation import all_finite, check_int, check_real_array, check_sparse, check_vector
from .losses import LOSS_HINGE, LOSS_LOGISTIC, check_loss
from .penalties import check_penalty
from .public_bounds import (_loss_lipschitz, _loss_smoothness, _row_sq_norms,
                            check_public_bounds)

if TYPE_CHECKING:
    from .losses import Loss
    from .optimum import Optimum
    from .penalties import Penalty

__all__ = ["Problem"]

#: Losses whose labels are in {-1, +1}: a label bound means nothing for them.
_CLASSIFICATION_KINDS = (LOSS_LOGISTIC, LOSS_HINGE)

# Largest min(n, p) for which beta is computed exactly from the Gram matrix (dense eigvalsh);
# beyond it, ARPACK (eigsh) on the operator v -> X^T (X v).
_EXACT_GRAM_MAX = 2000


def _largest_eigenvalue(G):
    """Largest eigenvalue of the symmetric positive semi-definite Gram matrix ``G``.

    LAPACK's ``dsyevr`` (asked for the top eigenvalue only) fails with "Internal Error." on
    some small reducible matrices, e.g. [[1, 1, 0], [1, 2, 0], [0, 0, 4]] with the bundled
    OpenBLAS 0.3.31 (found by the derandomized fuzz of ``dp_sgd``). Its answer is kept when it
    succeeds and lies in the interval every top eigenvalue of a PSD matrix lies in,
    ``[max_i G_ii, trace G]``; otherwise all eigenvalues are computed by the divide-and-conquer
    driver (``dsyevd``), which has no such failure.
    """
    m = G.shape[0]
    diagonal = np.diagonal(G)
    low, high = float(np.max(diagonal)), float(np.sum(diagonal))
    try:
        top = float(scipy.linalg.eigvalsh(G, subset_by_index=[m - 1, m - 1])[0])
    except np.linalg.LinAlgError:
        top = math.nan
    if low * (1.0 - 1e-9) <= top <= high * (1.0 + 1e-9):
        return top
    return float(scipy.linalg.eigvalsh(G, driver="evd")[-1])


def _read_only(a):
    v = a.view()
    v.flags.writeable = False
    return v


def _read_only_sparse(X):
    """A matrix of the same class sharing X's buffers through read-only views."""
    return type(X)((_read_only(X.data), _read_only(X.indices), _read_only(X.indptr)),
                   shape=X.shape, copy=False)


def _check_X(X):
    if sp.issparse(X):
        X = check_sparse(X, "X")   # structure first: SciPy and the kernels trust it
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_) or \
                np.iscomplexobj(X.data):
            raise TypeError(f"X must hold real numbers; got dtype {X.dtype}.")
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X must contain only finite values; it has NaN or inf.")
        if X.data.size:
            _check_magnitude(X.data.max(), X.data.min(), "X")
        n, p = X.shape
        if n == 0 or p == 0:
            raise ValueError(f"X must have at least one sample and one feature; got shape "
                             f"{X.shape}.")
        return _read_only_sparse(X), True
    arr = check_real_array(X, "X")
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features); got an array of "
                         f"shape {arr.shape}. Reshape with X.reshape(-1, 1) for one feature "
                         "or X.reshape(1, -1) for one sample.")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"X must have at least one sample and one feature; got shape "
                         f"{arr.shape}.")
    if arr.dtype not in (np.float64, np.float32):
        arr = arr.astype(np.float64, order="K")       # the one copy; keeps the layout
    if not all_finite(arr):
        raise ValueError("X must contain only finite values; it has NaN or inf.")
    _check_magnitude(arr.max(), arr.min(), "X")
    return _read_only(arr), False


#: Bytes of float64 temporaries per chunk when a float32 X is read in float64 (derived
#: constants, margins): at most 4 MB and 1/32 of X, large enough for BLAS and einsum to run at
#: speed and small against the data (a chunk and its square are the peak: <= 6% of X).
_CHUNK_BYTES = 4 << 20


def _chunk_bytes(X):
    return min(_CHUNK_BYTES, max(1 << 16, X.nbytes // 32))


def _row_chunks(X):
    """(start, float64 copy of rows start:start+k) over dense X, k rows of _chunk_bytes."""
    n, p = X.shape
    k = max(1, _chunk_bytes(X) // (8 * p))
    for a in range(0, n, k):
        yield a, X[a:a + k].astype(np.float64, order="K")


def _col_chunks(X):
    """(start, float64 copy of columns start:start+k) over dense X."""
    n, p = X.shape
    k = max(1, _chunk_bytes(X) // (8 * n))
    for a in range(0, p, k):
        yield a, X[:, a:a + k].astype(np.float64, order="K")


#: Largest |entry| accepted in X and y: squares and sums of squares (norms, smoothness
#: constants, the squared loss) must stay finite in float64 (max ~1.8e308).
MAX_MAGNITUDE = 1e150


def _check_magnitude(largest, smallest, name):
    """Reject entries whose squares would overflow (two reductions, no temporary array)."""
    if max(abs(float(largest)), abs(float(smallest))) > MAX_MAGNITUDE:
        raise ValueError(f"{name} has entries larger than {MAX_MAGNITUDE:g} in absolute value: "
                         "their squares overflow float64 (norms, smoothness constants, losses); "
                         f"rescale {name}.")


def _column_sq_norms32(X):
    """einsum("ij,ij->j") of float32 X in float64, bitwise that of X.astype(np.float64)
    (tests/kernels/test_float32.py): Fortran-like X by column chunks (each column's sum as in
    the full array); C-like X by row chunks added row after row onto the running sums, the
    order einsum takes over a C-ordered array."""
    if X.flags.f_contiguous or abs(X.strides[0]) < abs(X.strides[1]):
        return np.concatenate([np.einsum("ij,ij->j", c, c) for _, c in _col_chunks(X)])
    acc = np.zeros(X.shape[1])
    for _, chunk in _row_chunks(X):
        sq = np.empty((chunk.shape[0] + 1, X.shape[1]))
        sq[0] = acc
        np.multiply(chunk, chunk, out=sq[1:])
        acc = np.add.reduce(sq, axis=0)
    return acc


def _lambda_max32(X):
    """Largest eigenvalue of X^T X for float32 X, in float64 from chunks (Gram matrices summed
    chunk by chunk, or ARPACK on chunked products): no float64 copy of X."""
    n, p = X.shape
    if min(n, p) <= _EXACT_GRAM_MAX:
        if p <= n:
            G = np.zeros((p, p))
            for _, c in _row_chunks(X):
                G += c.T @ c
        else:
            G = np.zeros((n, n))
            for _, c in _col_chunks(X):
                G += c @ c.T
        return _largest_eigenvalue(G)

    def matvec(v):
        v = np.ravel(v)
        out = np.zeros(p)
        for _, c in _row_chunks(X):
            out += c.T @ (c @ v)
        return out
    op = scipy.sparse.linalg.LinearOperator((p, p), matvec=matvec, dtype=np.float64)
    v0 = np.random.default_rng(0).standard_normal(p)
    vals = scipy.sparse.linalg.eigsh(op, k=1, which="LA", v0=v0, tol=0.0,
                                     return_eigenvectors=False)
    return float(vals[0])


class Problem:
    """Regularized empirical risk minimization over a linear model.

    .. math::

        F(w) = \\frac1n \\sum_{i=1}^n \\ell(\\langle x_i, w\\rangle, y_i) + \\psi(w)

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or scipy.sparse matrix/array
        Features. Dense float64 and float32 input is kept as given (no copy, any memory
        order); other real dtypes are converted to float64 (one copy, keeping the memory
        order). Sparse CSR and CSC are used as they are (float64; other dtypes converted);
        other sparse formats are converted to CSR (one copy). X is never modified.

        Float32 X is read in float64 without a float64 copy by ``dp_sgd`` (any layout) and
        ``dp_cd`` (Fortran order; C order costs one float32 Fortran copy): their kernels
        convert each value on load (exact), so a run is bitwise the same kernel run on
        ``X.astype(np.float64)``. The constants they need (row and column norms, the
        smoothness, margins) are computed in float64 from chunks of a few MB; the column norms
        of Fortran-ordered X and the row norms are bitwise those of the float64 array, the
        smoothness constant beta can differ in the last bits (BLAS sums the Gram matrix in
        another order). Any other use of ``problem.X`` (the other solvers) converts float32
        X to float64 once, on first use, and caches the copy.
    y : array-like of shape (n_samples,)
        Targets, or labels in the loss's encoding (``Logistic(labels="01")`` maps {0, 1} to
        {-1, +1}).
    loss : str or Loss, default="squared"
        "squared" (:math:`(z - y)^2`, the DP-CD convention), "half_squared", "logistic",
        "huber", "hinge", "absolute", or a ``dpsco_core.losses.Loss`` instance.
    penalty : Penalty or None, default=None
        A ``dpsco_core.penalties`` penalty (``L1``, ``L2``, ``ElasticNet``, ``Box``); None means
        no penalty.
    bounds : (lower, upper) or PublicBounds, optional
        Public per-feature bounds (scalars or arrays of shape (n_features,), with
        ``lower <= 0 <= upper``), or a whole :class:`~dpsco_core.public_bounds.PublicBounds`.
    row_norm : float, optional
        Public bound on every row's Euclidean norm.
    label_bound : float, optional
        Public bound on ``|y_i|`` (regression losses only).

        With any of these the data are **mapped onto the bounds record by record** (features
        clipped, rows scaled down to ``row_norm``, labels clipped; a copy, the caller's arrays
        are untouched): the problem, and every solver run on it, then minimises the objective
        of the clipped data. The map keeps every privacy guarantee (it acts on each record
        alone), and the solvers take their steps, clips and smoothness constants from
        ``public_bounds`` instead of the data (:mod:`dpsco_core.public_bounds`). Without
        bounds those constants come from the data, and the solvers say so with a
        ``PrivacyLeakWarning``.

    Attributes
    ----------
    X : ndarray or sparse matrix
        The validated features as float64 (read-only view or converted copy; for float32
        input converted on first access and cached).
    X_data : ndarray or sparse matrix
        The validated features as stored: float64, or dense float32 as given (read-only).
    y : ndarray of shape (n_samples,)
        The validated labels as the kernels use them (read-only; logistic/hinge in {-1, +1}).
    loss : Loss
    penalty : Penalty
    n_samples, n_features : int
    is_sparse : bool
    public_bounds : PublicBounds or None
        The declared public bounds (None: none declared).

    Raises
    ------
    TypeError
        If X or y is not numeric, or loss / penalty has the wrong type.
    ValueError
        If X is not 2-d, is empty or has NaN/inf; if y is not 1-d, has NaN/inf, has a length
        other than n_samples, or has labels outside the loss's domain.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core import Problem
    >>> from dpsco_core.penalties import L1
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> prob = Problem(X, [1.0, 2.0, 2.0], loss="squared", penalty=L1(0.1))
    >>> prob.coordinate_smoothness()          # 2 ||X_j||^2 / n
    array([1.33333333, 3.33333333])
    >>> round(prob.objective(np.zeros(2)), 6)   # mean(y^2)
    3.0
    """

    def __init__(self, X: MatrixLike, y: ArrayLike, loss: str | Loss = "squared",
                 penalty: Penalty | None = None, *, bounds: Any = None,
                 row_norm: float | None = None, label_bound: float | None = None) -> None:
        self.loss = check_loss(loss)
        self.penalty = check_penalty(penalty)
        self._cache: dict = {}
        self.X, self.is_sparse = _check_X(X)
        self.n_samples, self.n_features = self.X_data.shape
        y_arr = check_vector(y, "y")
        _check_magnitude(y_arr.max(), y_arr.min(), "y")
        if y_arr.shape[0] != self.n_samples:
            raise ValueError(f"y must have one entry per row of X ({self.n_samples}); got "
                             f"{y_arr.shape[0]}.")
        self.y = _read_only(self.loss.check_labels(y_arr, "y"))
        self.public_bounds = self._enforce_public_bounds(bounds, row_norm, label_bound)

    def _enforce_public_bounds(self, bounds, row_norm, label_bound):
        """Validate the declared bounds and map X and y onto them (class docstring)."""
        public = check_public_bounds(bounds, row_norm, label_bound)
        if public is None:
            return None
        public.check_features(self.n_features)
        if public.label_bound is not None and self.loss.kind in _CLASSIFICATION_KINDS:
            raise ValueError(f"label_bound applies to regression losses; the {self.loss!r} "
                             "loss has labels in {-1, +1}.")
        X, y = public.enforce(self.X, self.y)
        if X is not self.X:
            self.X = _read_only_sparse(X) if self.is_sparse else _read_only(X)
        if y is not self.y:
            self.y = _read_only(y)
        return public

    @property
    def X(self) -> Any:
        """The features as float64 (float32 ``X_data`` is converted on first access; cached)."""
        X = self.X_data
        if X is None or X.dtype == np.float64:
            return X
        return self._cached("X_float64", lambda: X.astype(np.float64, order="K"))

    @X.setter
    def X(self, value: Any) -> None:
        self.X_data = value
        getattr(self, "_cache", {}).pop("X_float64", None)

    @property
    def _float32(self) -> bool:
        return getattr(self.X_data, "dtype", None) == np.float32

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        bounds = "" if self.public_bounds is None else f", {self.public_bounds!r}"
        return (f"Problem(n_samples={self.n_samples}, n_features={self.n_features}, {kind}, "
                f"loss={self.loss!r}, penalty={self.penalty!r}{bounds})")

    def _cached(self, key, compute):
        if key not in self._cache:
            value = compute()
            if isinstance(value, np.ndarray):
                value = _read_only(value)
            self._cache[key] = value
        return self._cache[key]

    # ---------------------------------------------------------------- layouts for kernels
    def X_fortran(self) -> FloatArray:
        """Dense X as a Fortran-ordered float64 array (for column kernels); cached, read-only."""
        self._require_dense("X_fortran", "X_csc")
        return self._cached("X_fortran", lambda: np.asfortranarray(self.X))

    def X_c(self) -> FloatArray:
        """Dense X as a C-ordered float64 array (for row kernels); cached, read-only."""
        self._require_dense("X_c", "X_csr")
        return self._cached("X_c", lambda: np.ascontiguousarray(self.X))

    def X_kernel_rows(self) -> FloatArray:
        """Dense X as the row kernels of ``dp_sgd`` read it, never copied: ``X_data``
        (float64 or float32, any memory order; ``_kernels._batch`` gathers each block's rows)."""
        self._require_dense("X_kernel_rows", "X_csr")
        return self.X_data

    def X_kernel_columns(self) -> FloatArray:
        """Dense X as the column kernels of ``dp_cd`` read it: Fortran-ordered, float64 or
        float32. ``X_data`` itself when Fortran-ordered; otherwise one Fortran-ordered copy in
        X's own dtype (float64: ``X_fortran()``; float32: a float32 copy, half the memory),
        cached. A row-major CD kernel was measured slower (bench/README.md, memory section)."""
        self._require_dense("X_kernel_columns", "X_csc")
        X = self.X_data
        if X.flags.f_contiguous:
            return X
        if X.dtype == np.float64:
            return self.X_fortran()
        return self._cached("X_fortran32", lambda: np.asfortranarray(X))

    def X_csc(self) -> Any:
        """Sparse X in CSC format with sorted, unique indices (column kernels); cached.

        The index arrays keep SciPy's dtype (int32 or int64). A copy is made only when X is
        CSR or its indices are not canonical; its buffers are read-only.
        """
        self._require_sparse("X_csc", "X_fortran")
        return self._cached("X_csc", lambda: self._canonical("csc"))

    def X_csr(self) -> Any:
        """Sparse X in CSR format with sorted, unique indices (row kernels); cached."""
        self._require_sparse("X_csr", "X_c")
        return self._cached("X_csr", lambda: self._canonical("csr"))

    def _canonical(self, fmt):
        X = self.X
        if X.format == fmt and X.has_canonical_format:
            return X
        # asformat of another format makes a new matrix; copy() otherwise, so that
        # sum_duplicates / sort_indices never touch the caller's buffers.
        Y = X.asformat(fmt) if X.format != fmt else X.copy()
        Y.sum_duplicates()
        Y.sort_indices()
        return _read_only_sparse(Y)

    def _require_dense(self, name, other):
        if self.is_sparse:
            raise ValueError(f"{name}() needs a dense X; this problem's X is sparse (use "
                             f"{other}()).")

    def _require_sparse(self, name, other):
        if not self.is_sparse:
            raise ValueError(f"{name}() needs a sparse X; this problem's X is dense (use "
                             f"{other}()).")

    # ---------------------------------------------------------------- objective and gradients
    def _check_w(self, w):
        w = check_vector(w, "w")
        if w.shape[0] != self.n_features:
            raise ValueError(f"w must have length n_features={self.n_features}; got "
                             f"{w.shape[0]}.")
        return w

    def _margins(self, w):
        if not self.is_sparse and self._float32:
            z = np.empty(self.n_samples)
            for a, chunk in _row_chunks(self.X_data):
                z[a:a + chunk.shape[0]] = chunk @ w
            return z
        return np.ascontiguousarray(self.X @ w, dtype=np.float64)

    def margins(self, w: ArrayLike) -> FloatArray:
        """The margins :math:`z = X w`, shape (n_samples,).

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._margins(self._check_w(w))

    def smooth_objective(self, w: ArrayLike) -> float:
        """:math:`f(w) = \\frac1n \\sum_i \\ell(\\langle x_i, w\\rangle, y_i)` (the loss part).

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.

        Returns
        -------
        float
            Exact, not private: a function of the training data.
        """
        w = self._check_w(w)
        return float(np.mean(self.loss._value(self._margins(w), self.y)))

    def objective(self, w: ArrayLike) -> float:
        """:math:`F(w) = f(w) + \\psi(w)`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.

        Returns
        -------
        float
            Exact, not private: a function of the training data.
        """
        w = self._check_w(w)
        return float(np.mean(self.loss._value(self._margins(w), self.y))) + \
            self.penalty.value(w)

    def _loss_derivs(self, w):
        return self.loss._deriv(self._margins(w), self.y)

    def gradient(self, w: ArrayLike) -> FloatArray:
        """:math:`\\nabla f(w) = X^\\top \\ell'(Xw, y) / n` (a subgradient for hinge/absolute).

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.

        Returns
        -------
        ndarray of shape (n_features,)
            Exact, not private.
        """
        w = self._check_w(w)
        return np.asarray(self.X.T @ self._loss_derivs(w)).ravel() / self.n_samples

    def per_sample_gradients(self, w: ArrayLike) -> Any:
        """Dense (n_samples, n_features) array of :math:`\\ell'(z_i, y_i) x_i` (for tests).

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        w = self._check_w(w)
        d = self._loss_derivs(w)
        Xd = self.X.toarray() if self.is_sparse else np.asarray(self.X)
        return Xd * d[:, None]

    def coordinate_gradient(self, w: ArrayLike, j: int) -> float:
        """:math:`\\nabla_j f(w) = X_{:,j}^\\top \\ell'(Xw, y) / n`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The coefficients.
        j : int
            The coordinate, in [0, n_features).

        Returns
        -------
        float
        """
        w = self._check_w(w)
        j = check_int(j, "j", low=0, high=self.n_features - 1)
        d = self._loss_derivs(w)
        if self.is_sparse:
            col = self.X_csc()[:, [j]]
            return float(col.data @ d[col.indices]) / self.n_samples
        return float(self.X[:, j] @ d) / self.n_samples

    # ---------------------------------------------------------------- norms and constants
    def _column_sq_norms(self):
        def compute():
            if self.is_sparse:
                return np.asarray(self.X.multiply(self.X).sum(axis=0), dtype=np.float64).ravel()
            if self._float32:
                return _column_sq_norms32(self.X_data)
            return np.einsum("ij,ij->j", self.X, self.X)
        return self._cached("column_sq_norms", compute)

    def _row_sq_norms(self):
        # in an order fixed by the values, not by X's layout (public_bounds._row_sq_norms)
        def compute():
            return _row_sq_norms(self.X if self.is_sparse else self.X_data)
        return self._cached("row_sq_norms", compute)

    def column_norms(self) -> FloatArray:
        """:math:`\\|X_{:,j}\\|_2` for every feature j, shape (n_features,)."""
        return self._cached("column_norms", lambda: np.sqrt(self._column_sq_norms()))

    def row_norms(self) -> FloatArray:
        """:math:`\\|x_i\\|_2` for every sample i, shape (n_samples,)."""
        return self._cached("row_norms", lambda: np.sqrt(self._row_sq_norms()))

    def _column_max_abs(self):
        def compute():
            if self.is_sparse:
                return abs(self.X).max(axis=0).toarray().ravel().astype(np.float64)
            # column chunks: max is exact in any order, and no |X| temporary of X's size
            X = self.X_data
            k = max(1, _chunk_bytes(X) // (X.itemsize * self.n_samples))
            return np.concatenate([np.max(np.abs(X[:, a:a + k]), axis=0)
                                   for a in range(0, self.n_features, k)]).astype(np.float64)
        return self._cached("column_max_abs", compute)

    def _loss_smoothness(self, what):
        return _loss_smoothness(self.loss, what)

    def _loss_lipschitz(self, what):
        return _loss_lipschitz(self.loss, what)

    def coordinate_smoothness(self) -> FloatArray:
        """:math:`M_j = s_\\ell \\|X_{:,j}\\|_2^2 / n`, shape (n_features,) (note 002, 3.6).

        Raises
        ------
        ValueError
            For the non-smooth losses (hinge, absolute).
        """
        s = self._loss_smoothness("coordinate smoothness")
        return self._cached("M", lambda: s * self._column_sq_norms() / self.n_samples)

    def coordinate_lipschitz(self) -> FloatArray:
        """:math:`L_j = \\Lambda_\\ell \\max_i |x_{ij}|`: bound on :math:`|\\nabla_j \\ell(\\cdot; x_i, y_i)|`.

        Raises
        ------
        ValueError
            For the squared losses (unbounded derivative).
        """
        lip = self._loss_lipschitz("a coordinate-wise Lipschitz bound")
        return self._cached("L", lambda: lip * self._column_max_abs())

    def _lambda_max(self):
        """Largest eigenvalue of :math:`X^\\top X`: exact (Gram + eigvalsh) when min(n, p) is
        at most 2000, else ARPACK on the operator (relative accuracy ~ machine precision)."""
        def compute():
            n, p = self.X_data.shape
            if not self.is_sparse and self._float32:
                return _lambda_max32(self.X_data)
            X = self.X
            if min(n, p) <= _EXACT_GRAM_MAX:
                G = (X.T @ X) if p <= n else (X @ X.T)
                G = G.toarray() if sp.issparse(G) else np.asarray(G)
                return _largest_eigenvalue(G)
            op = scipy.sparse.linalg.LinearOperator(
                (p, p), matvec=lambda v: X.T @ (X @ v), dtype=np.float64)
            # A fixed start vector: ARPACK's default is random, which would make beta vary.
            v0 = np.random.default_rng(0).standard_normal(p)
            vals = scipy.sparse.linalg.eigsh(op, k=1, which="LA", v0=v0, tol=0.0,
                                             return_eigenvectors=False)
            return float(vals[0])
        return self._cached("lambda_max", compute)

    def smoothness(self) -> float:
        """Global smoothness :math:`\\beta = s_\\ell \\lambda_{\\max}(X^\\top X) / n` of f."""
        s = self._loss_smoothness("the smoothness constant")
        return self._cached("beta", lambda: s * max(self._lambda_max(), 0.0) / self.n_samples)

    def lipschitz(self) -> float:
        """Lipschitz constant of every per-sample loss: :math:`\\Lambda_\\ell \\max_i \\|x_i\\|_2`."""
        lip = self._loss_lipschitz("a Lipschitz constant")
        return self._cached("lipschitz", lambda: lip * float(np.max(self.row_norms())))

    # ---------------------------------------------------------------- optimum
    def solve(self, tol: float | None = None) -> Optimum:
        """The non-private optimum :math:`w^*, F^*` to high precision (cached per ``tol``).

        Delegates to :func:`dpsco_core.optimum.solve`; see there for the certificates and
        default tolerances.

        Parameters
        ----------
        tol : float, optional
            Target certificate (duality gap or gradient norm); None: the defaults of
            :func:`dpsco_core.optimum.solve`.

        Returns
        -------
        dpsco_core.optimum.Optimum
            ``coef``, ``objective`` (:math:`F^*`), ``certificate``, ``certificate_kind``,
            ``n_iter``, ``converged``.
        """
        key = ("solve", tol)
        if key not in self._cache:
            from .optimum import solve
            self._cache[key] = solve(self, tol=tol)
        return self._cache[key]
