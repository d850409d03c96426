r"""Public bounds on the data, and the constants that follow from them without reading the data.

A private solver needs steps and clip thresholds, and those come from the smoothness and
Lipschitz constants of the loss on the data (note 002, section 3.6). Computed from the private
data, they are releases that no accountant sees: one outlier row scaled by 1e6 moves every step
and clip, and a black-box audit then measures epsilon above 6 for a claimed 1 (issue 15,
section 4). :class:`PublicBounds` holds bounds the user declares public, in the spirit of
diffprivlib's ``bounds=(lower, upper)`` and ``data_norm``:

- per-feature bounds :math:`\mathrm{lo}_j \le x_{ij} \le \mathrm{hi}_j`;
- a row-norm bound :math:`\|x_i\|_2 \le R`;
- a label bound :math:`|y_i| \le b_y` (regression losses only).

**Enforcement.** :meth:`PublicBounds.enforce` maps every record on its own: each feature is
clipped into :math:`[\mathrm{lo}_j, \mathrm{hi}_j]`, then the row is scaled down to norm
:math:`R` (:math:`x_i \leftarrow x_i \min(1, R / \|x_i\|_2)`), and the label is clipped into
:math:`[-b_y, b_y]`. A per-record map sends neighbouring datasets to neighbouring datasets of
the same relation, so a mechanism that is DP on the mapped data is DP on the raw data with the
same (epsilon, delta). Every bound must contain 0 (:math:`\mathrm{lo}_j \le 0 \le
\mathrm{hi}_j`): the all-zero record, the null record of the zero-out relation, is then a fixed
point of the map (the relation is preserved) and sparse matrices keep their structure; nothing
is lost for the constants, which depend only on :math:`B_j = \max(|\mathrm{lo}_j|,
|\mathrm{hi}_j|)`. The solvers then minimise the objective **of the clipped data**, which is
the objective of the raw data only when the bounds hold.

**Constants.** After enforcement :math:`|x_{ij}| \le B_j^R = \min(B_j, R)` and
:math:`\|x_i\|_2 \le R' = \min(R, \|B\|_2)` (a missing bound is :math:`+\infty`). With the
library's normalisation :math:`f(w) = \frac1n \sum_i \ell(\langle x_i, w\rangle, y_i)`,
:math:`s_\ell = \sup|\ell''|` and :math:`\Lambda_\ell = \sup|\ell'|`
(:mod:`dpsco_core.problems`):

- coordinate smoothness :math:`M_j = s_\ell \frac1n\sum_i x_{ij}^2 \le s_\ell (B_j^R)^2`;
- global smoothness :math:`\beta = s_\ell \lambda_{\max}(\frac1n\sum_i x_i x_i^\top) \le
  s_\ell \frac1n \sum_i \|x_i\|_2^2 \le s_\ell R'^2`;
- coordinate Lipschitz bounds :math:`L_j = \Lambda_\ell \max_i |x_{ij}| \le \Lambda_\ell B_j^R`;
- Lipschitz constant :math:`\Lambda_\ell \max_i \|x_i\|_2 \le \Lambda_\ell R'`.

They are worst-case upper bounds: a step :math:`1/M_j` from them is smaller than one from the
data when the features sit well inside their bounds (``dp_cd(smoothness="private")`` spends a
share of epsilon to estimate :math:`M_j` inside the same public bounds).
"""

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from ._validation import check_scalar
from .losses import _SMOOTH_LOSS_NAMES

__all__ = ["PublicBounds", "check_public_bounds", "rms_smoothness"]


def _as_bound_array(value, name):
    arr = np.array(value, dtype=np.float64, copy=True)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-d array of per-feature bounds; got "
                         f"shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    arr.flags.writeable = False
    return arr


#: Rows per chunk of :func:`_row_sq_norms` on dense X not already C-ordered float64: chunks of
#: about 4 MiB of float64.
_ROW_CHUNK_BYTES = 4 << 20


def _row_sq_norms(X: Any) -> np.ndarray:
    """``||x_i||_2^2`` for every row of X, summed in an order fixed by the values alone, not by
    X's layout or dtype, so that runs on C- or Fortran-ordered, float64 or float32 X (or on
    CSR or CSC X) clip and scale with the same bits.

    Dense X: einsum's per-row sum on C-ordered float64 rows (the whole array when it is one,
    else row chunks of :data:`_ROW_CHUNK_BYTES`: the same bits). Sparse X (canonical CSR or
    CSC: sorted, unique indices): ``bincount`` adds each row's squares in column order in
    both formats. (einsum of a Fortran array and ``multiply().sum(axis=1)`` of a CSC matrix
    sum in other orders: DP-SGD's coefficients differed in their last bits by layout, found in
    session 16, fixed in session 18.)
    """
    n = X.shape[0]
    if sp.issparse(X):
        rows = X.indices if X.format == "csc" else np.repeat(np.arange(n), np.diff(X.indptr))
        return np.bincount(rows, weights=np.square(X.data, dtype=np.float64),
                           minlength=n).astype(np.float64, copy=False)
    if X.dtype == np.float64 and X.flags.c_contiguous:
        return np.einsum("ij,ij->i", X, X)
    out = np.empty(n)
    k = max(1, _ROW_CHUNK_BYTES // (8 * max(1, X.shape[1])))
    for a in range(0, n, k):
        chunk = np.ascontiguousarray(X[a:a + k], dtype=np.float64)
        out[a:a + chunk.shape[0]] = np.einsum("ij,ij->i", chunk, chunk)
    return out


@dataclass(frozen=True, eq=False)
class PublicBounds:
    """Bounds on the data, declared public by the user (module docstring).

    Parameters
    ----------
    bounds : tuple (lower, upper) or None
        Per-feature bounds, each a scalar or an array of shape (n_features,), with
        ``lower <= 0 <= upper`` (finite). None: no per-feature bound.
    row_norm : float or None
        Bound R in (0, inf) on the Euclidean norm of every row. None: no row bound.
    label_bound : float or None
        Bound in (0, inf) on ``|y_i|`` (regression losses). None: no label bound.

    At least one of ``bounds`` and ``row_norm`` must be given: the constants need a bound on
    the features. Instances compare by identity (the bounds are arrays).
    """

    bounds: Optional[tuple] = None
    row_norm: Optional[float] = None
    label_bound: Optional[float] = None

    def __post_init__(self):
        if self.bounds is None and self.row_norm is None:
            raise ValueError("public bounds need bounds=(lower, upper) or row_norm (or both); "
                             "got neither.")
        if self.bounds is not None:
            if not (isinstance(self.bounds, (tuple, list)) and len(self.bounds) == 2):
                raise ValueError("bounds must be a pair (lower, upper) of scalars or per-feature "
                                 f"arrays; got {self.bounds!r}.")
            lower = _as_bound_array(self.bounds[0], "bounds lower")
            upper = _as_bound_array(self.bounds[1], "bounds upper")
            crossed = (np.flatnonzero(lower > upper) if lower.shape == upper.shape
                       or lower.ndim == 0 or upper.ndim == 0 else np.empty(0))
            if crossed.size:
                # named first: "must contain 0" misdirected a user whose pair was swapped
                # (session 19 first-use review)
                raise ValueError(f"bounds must have lower <= upper for every feature; got "
                                 f"lower={self.bounds[0]!r}, upper={self.bounds[1]!r} (lower "
                                 f"> upper at feature {int(crossed[0])}"
                                 f"{' and others' if crossed.size > 1 else ''}).")
            if np.any(lower > 0) or np.any(upper < 0):
                raise ValueError("bounds must contain 0 (lower <= 0 <= upper for every feature: "
                                 "the map onto the bounds must keep the all-zero record and "
                                 "sparse zeros; a feature in [1, 7] takes the bounds (0, 7)); "
                                 f"got lower={self.bounds[0]!r}, upper={self.bounds[1]!r}.")
            object.__setattr__(self, "bounds", (lower, upper))
        if self.row_norm is not None:
            object.__setattr__(self, "row_norm", check_scalar(self.row_norm, "row_norm",
                                                              low=0.0))
        if self.label_bound is not None:
            object.__setattr__(self, "label_bound",
                               check_scalar(self.label_bound, "label_bound", low=0.0))

    def __repr__(self):
        parts = []
        if self.bounds is not None:
            parts.append(f"bounds=({_short(self.bounds[0])}, {_short(self.bounds[1])})")
        if self.row_norm is not None:
            parts.append(f"row_norm={self.row_norm:g}")
        if self.label_bound is not None:
            parts.append(f"label_bound={self.label_bound:g}")
        return f"PublicBounds({', '.join(parts)})"

    # ---------------------------------------------------------------- checks and enforcement
    def check_features(self, n_features: int) -> None:
        """Raise ValueError unless the per-feature bounds fit ``n_features`` columns.

        Parameters
        ----------
        n_features : int
            Number of columns of the data.

        Raises
        ------
        ValueError
            If per-feature bounds were given for another number of features.
        """
        if self.bounds is None:
            return
        for side, arr in zip(("lower", "upper"), self.bounds):
            if arr.ndim == 1 and arr.shape[0] != n_features:
                raise ValueError(f"bounds {side} must be a scalar or have shape "
                                 f"({n_features},) (one per feature); got {arr.shape}.")

    def enforce(self, X: Any, y: np.ndarray) -> tuple[Any, np.ndarray]:
        """The data mapped record by record onto the bounds (module docstring).

        ``X`` (float64 ndarray, or CSR/CSC float64) and ``y`` are never written to: the result
        is a new array whenever an entry changes, else the input itself.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
            The features (float64).
        y : ndarray of shape (n_samples,)
            The targets (clipped to ``label_bound`` when given).

        Returns
        -------
        X, y
            The clipped data. A function of each record alone: it does not weaken any guarantee.
        """
        X = self.enforce_features(X)
        if self.label_bound is not None:
            b = self.label_bound
            if np.any(np.abs(y) > b):
                y = np.clip(y, -b, b)
        return X, y

    def enforce_features(self, X: Any) -> Any:
        """The features mapped record by record onto the bounds: clipped onto ``bounds``,
        then rows scaled down onto ``row_norm``; :meth:`enforce` without the targets (the
        estimators apply it to the records they predict on, as to those they fit).

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
            The features (float64); never written to.

        Returns
        -------
        ndarray or scipy.sparse matrix
            A new array whenever an entry changes, else ``X`` itself.
        """
        if sp.issparse(X) and not X.has_canonical_format:
            # Duplicate entries add up to one x_ij: clip their sum, not each part.
            X = X.copy()
            X.sum_duplicates()
        return self._scale_rows(self._clip_features(X))

    def _clip_features(self, X):
        if self.bounds is None:
            return X
        lower, upper = self.bounds
        if sp.issparse(X):
            cols = (X.indices if X.format == "csr"
                    else np.repeat(np.arange(X.shape[1]), np.diff(X.indptr)))
            lo = lower if lower.ndim == 0 else lower[cols]
            hi = upper if upper.ndim == 0 else upper[cols]
            if np.any(X.data < lo) or np.any(X.data > hi):
                X = X.copy()
                X.data = np.clip(X.data, lo, hi)
            return X
        if np.any(X < lower) or np.any(X > upper):
            X = np.clip(X, lower, upper)
        return X

    def _scale_rows(self, X):
        if self.row_norm is None:
            return X
        norms = np.sqrt(_row_sq_norms(X))
        over = norms > self.row_norm
        if not np.any(over):
            return X
        scale = np.ones_like(norms)
        scale[over] = self.row_norm / norms[over]
        if sp.issparse(X):
            # The stored entries scaled in place of a copy: the structure (and the index order)
            # stays the input's. ``diags(scale) @ X`` returned rows with unsorted indices
            # (after an empty row), which the read-only Problem could then not canonicalise:
            # abs(problem.X) raised "WRITEBACKIFCOPY base is read-only" (found by hypothesis,
            # session 17).
            rows = (np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)) if X.format == "csr"
                    else X.indices)
            X = X.copy()
            X.data = X.data * scale[rows]
            return X
        return X * scale[:, None]

    # ---------------------------------------------------------------- constants
    def feature_bounds(self, n_features: int) -> np.ndarray:
        """:math:`B_j^R = \\min(\\max(|lo_j|, |hi_j|), R)`, shape (n_features,).

        Parameters
        ----------
        n_features : int
            Number of columns.

        Returns
        -------
        ndarray of shape (n_features,)
        """
        B = np.full(n_features, math.inf)
        if self.bounds is not None:
            lower, upper = self.bounds
            B = np.minimum(B, np.maximum(np.abs(lower), np.abs(upper)))
        if self.row_norm is not None:
            B = np.minimum(B, self.row_norm)
        return B

    def row_bound(self, n_features: int) -> float:
        """:math:`R' = \\min(R, \\|B\\|_2)`: a bound on every row's Euclidean norm.

        Parameters
        ----------
        n_features : int
            Number of columns.

        Returns
        -------
        float
        """
        R = math.inf if self.row_norm is None else self.row_norm
        if self.bounds is not None:
            B = self.feature_bounds(n_features)
            top = float(np.max(B, initial=0.0))
            if 1e-150 <= top <= 1e150 or top in (0.0, math.inf):
                norm = float(np.sqrt(np.sum(B ** 2)))
            else:
                # sum(B^2) underflowed (R = 0 at bounds of 1e-300, refused after dp_ssp's
                # charge; too small, so too little noise, from 1e-154) or overflowed to inf
                # at 1e300 (session 18): scaled by the largest bound
                with np.errstate(under="ignore"):
                    norm = top * float(np.sqrt(np.sum((B / top) ** 2)))
            R = min(R, norm)
        return R

    def coordinate_smoothness(self, loss: Any, n_features: int) -> np.ndarray:
        """:math:`M_j \\le s_\\ell (B_j^R)^2` (module docstring).

        Parameters
        ----------
        loss : Loss
            The loss (its curvature bound :math:`s_\\ell`).
        n_features : int
            Number of columns.

        Returns
        -------
        ndarray of shape (n_features,)
            Public, data-independent bounds.
        """
        return _loss_smoothness(loss, "coordinate smoothness") * \
            self.feature_bounds(n_features) ** 2

    def smoothness(self, loss: Any, n_features: int) -> float:
        """:math:`\\beta \\le s_\\ell R'^2` (module docstring).

        Parameters
        ----------
        loss : Loss
            The loss (its curvature bound :math:`s_\\ell`).
        n_features : int
            Number of columns.

        Returns
        -------
        float
        """
        return _loss_smoothness(loss, "the smoothness constant") * \
            self.row_bound(n_features) ** 2

    def coordinate_lipschitz(self, loss: Any, n_features: int) -> np.ndarray:
        """:math:`L_j \\le \\Lambda_\\ell B_j^R` (module docstring).

        Parameters
        ----------
        loss : Loss
            The loss (its derivative bound :math:`\\Lambda_\\ell`).
        n_features : int
            Number of columns.

        Returns
        -------
        ndarray of shape (n_features,)
        """
        return _loss_lipschitz(loss, "a coordinate-wise Lipschitz bound") * \
            self.feature_bounds(n_features)

    def lipschitz(self, loss: Any, n_features: int) -> float:
        """:math:`\\Lambda_\\ell \\max_i \\|x_i\\|_2 \\le \\Lambda_\\ell R'` (module docstring).

        Parameters
        ----------
        loss : Loss
            The loss (its derivative bound :math:`\\Lambda_\\ell`).
        n_features : int
            Number of columns.

        Returns
        -------
        float
        """
        return _loss_lipschitz(loss, "a Lipschitz constant") * self.row_bound(n_features)


def rms_smoothness(loss: Any, rms_row_norm: float, n_features: int, *,
                   feature_bounds: Any = None, constant_column: Optional[float] = None
                   ) -> tuple[np.ndarray, float]:
    r"""DP-CD's :math:`M_j` and DP-SGD's :math:`\beta` from a public root-mean-square row norm.

    With :math:`\rho^2` a public value of :math:`\frac1n \sum_i \|x_i\|_2^2` over the
    features (``p`` for standardized features), the second moments :math:`m_j =
    \frac1n\sum_i x_{ij}^2` of the :math:`p` features sum to :math:`\rho^2`, and a last
    column equal to the public constant ``s`` in every row (an intercept's) has :math:`m =
    s^2` exactly. Then :math:`M_j = s_\ell m_j` with

    - **one scale** (no ``feature_bounds``, or all equal: the standardized case):
      :math:`m_j = \min(\rho^2 / p, B_j^2)`, exact when the features have equal second
      moments, which is what standardized features have;
    - **different scales** (the bounds differ): :math:`m_j = \min(B_j^2, \rho^2)`, upper
      bounds of the true :math:`m_j` (each is at most :math:`B_j^2` and at most
      :math:`\rho^2`). Splitting :math:`\rho^2` in proportion to :math:`B_j^2` instead is
      exact only when every feature fills the same fraction of its bound, and on raw
      California with its largest values as bounds it under-estimated latitude's
      :math:`m_j` 270 times, so DP-CD's step ``1 / M_j`` diverged (held-out R^2 -700);

    and :math:`\beta = s_\ell\,(\rho^2 + s^2) \ge s_\ell\,\lambda_{\max}(\frac1n
    \sum_i x_i x_i^\top)`, the trace bound, an upper bound on the smoothness whenever
    :math:`\rho` is at least the true root-mean-square row norm. :math:`s_\ell` is the
    loss's curvature bound. Against the bounds' worst cases :math:`s_\ell B_j^2` (25 times
    :math:`s_\ell` for standardized features bounded at +-5), DP-CD's steps ``step / M_j``
    and DP-SGD's ``step / beta`` are then the theory's for typical rows.

    **Privacy.** A function of public numbers only (the loss, ``rho``, the bounds, ``s``):
    the solvers' sensitivities come from their clips, not from these constants, which set
    the steps and the clip's split over the coordinates; passing them as ``smoothness=``
    keeps the guarantee unconditional.

    Parameters
    ----------
    loss : Loss
        A smooth loss (its ``smoothness`` :math:`s_\ell`).
    rms_row_norm : float
        :math:`\rho > 0`, over the columns other than the constant one.
    n_features : int
        Number of columns, the constant one included.
    feature_bounds : array-like of shape (n_features - [constant column],), optional
        Public bounds :math:`B_j \ge 0` on :math:`|x_{ij}|` (inf: none; 0: a column fixed
        at 0, whose :math:`M_j` is 0 and which does not count in :math:`p`).
    constant_column : float, optional
        ``s`` of a last column equal to ``s`` in every row (an intercept's scaling).

    Returns
    -------
    (ndarray of shape (n_features,), float)
        ``(M, beta)``.
    """
    s_l = _loss_smoothness(loss, "a smoothness constant")
    rho = check_scalar(rms_row_norm, "rms_row_norm", low=0.0)
    p = int(n_features) - (constant_column is not None)
    if p < 1:
        raise ValueError(f"rms_smoothness needs a feature besides the constant column; got "
                         f"n_features={n_features!r}.")
    B = np.full(p, math.inf) if feature_bounds is None else \
        np.asarray(feature_bounds, dtype=np.float64)
    if B.shape != (p,) or np.any(np.isnan(B)) or np.any(B < 0):
        raise ValueError(f"feature_bounds must be {p} numbers >= 0 (inf for none).")
    live = B[B > 0]                 # a zero bound is a column fixed at 0: m_j = 0
    if live.size == 0 or np.all(live == live[0]):
        m = np.minimum(rho ** 2 / max(live.size, 1), B ** 2)
    else:
        m = np.minimum(B ** 2, rho ** 2)
    total = rho ** 2
    if constant_column is not None:
        s = check_scalar(constant_column, "constant_column", low=0.0)
        m = np.append(m, s ** 2)
        total += s ** 2
    return s_l * m, s_l * total


def _short(arr):
    return f"{float(arr):g}" if arr.ndim == 0 else f"array of {arr.shape[0]}"


def _loss_smoothness(loss, what, fix=""):
    """``loss.smoothness``; ValueError naming the loss, ``what`` needs it and the smooth losses
    (then ``fix``, another way out) when the loss has none."""
    if loss.smoothness is None:
        names = ", ".join(repr(name) for name in _SMOOTH_LOSS_NAMES)
        raise ValueError(f"the {loss!r} loss is not smooth: {what} does not exist. Use a smooth "
                         f"loss ({names}){fix}.")
    return loss.smoothness


def _loss_lipschitz(loss, what):
    if loss.lipschitz_in_margin is None:
        raise ValueError(f"the {loss!r} loss is not Lipschitz (its derivative is unbounded): "
                         f"{what} does not exist; clip the gradients instead.")
    return loss.lipschitz_in_margin


def check_public_bounds(bounds=None, row_norm=None, label_bound=None):
    """A :class:`PublicBounds` from the keyword form, or None when nothing is declared.

    ``bounds`` may itself be a :class:`PublicBounds` (then ``row_norm`` and ``label_bound``
    must be None).

    Parameters
    ----------
    bounds : tuple (lower, upper), PublicBounds or None
        Per-feature bounds.
    row_norm : float or None
        Bound on every row's Euclidean norm.
    label_bound : float or None
        Bound on ``|y_i|``.

    Returns
    -------
    PublicBounds or None
    """
    if isinstance(bounds, PublicBounds):
        if row_norm is not None or label_bound is not None:
            raise ValueError("give either a PublicBounds as bounds, or bounds=(lower, upper) "
                             "with row_norm / label_bound, not both.")
        return bounds
    if bounds is None and row_norm is None:
        if label_bound is not None:
            raise ValueError("label_bound needs a bound on the features too (bounds=(lower, "
                             "upper) or row_norm).")
        return None
    return PublicBounds(bounds=bounds, row_norm=row_norm, label_bound=label_bound)
