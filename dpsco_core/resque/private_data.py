r"""Private data for the ReSQue private algorithms (Problem 2 of Carmon et al. 2023).

A dataset :math:`\mathcal D = \{s_i\}_{i \in [n]}` whose per-sample losses :math:`f(\cdot; s)`
are convex and L-Lipschitz **for every s** (a worst-case bound, used by the privacy proof
together with convexity: the drift argument of Lemma 5 needs the monotonicity of
:math:`\nabla \hat f^z_\rho`). Lipschitzness is therefore enforced **at the data level**, never
by clipping gradients (clipping a subgradient field breaks its monotonicity and with it the
proof; note 000, section 2):

- :class:`LipschitzGLM`: :math:`f(x; (a, b)) = \ell(\langle a, x\rangle, b)` with
  :math:`|\ell'| \le 1` (absolute loss :math:`|z - b|`, hinge :math:`\max(0, 1 - bz)`); every
  feature row is rescaled onto the ball of radius A (``feature_bound``, public), so
  :math:`L = A`. The rescaling of a record depends on that record only, so neighbouring
  datasets stay neighbours (replace-one) after it.
- :class:`GeometricMedianData`: :math:`f(x; s) = \|x - s\|`, 1-Lipschitz for every s.

Both answer ``subgradients(idx, Z)``: the rows :math:`\partial f^{idx_i}(Z_i)` (a batch over
pairs (index, point)); row i depends on record ``idx[i]`` only, which is what makes coupled runs
on neighbouring datasets bitwise identical when the differing record is never drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._validation import all_finite, check_positive, check_real_array, check_vector
from ..problems import _check_magnitude

if TYPE_CHECKING:
    from .._typing import ArrayLike

__all__ = ["LipschitzGLM", "GeometricMedianData"]


def _matrix(a, name):
    arr = check_real_array(a, name)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-dimensional array; got shape "
                         f"{arr.shape}.")
    out = np.array(arr, dtype=np.float64, order="C")
    if not all_finite(out):
        raise ValueError(f"{name} must contain only finite values; it has NaN or inf.")
    # as Problem: squared norms must stay finite (GeometricMedianData with entries of 1e200
    # returned zero subgradients, (x - s) / inf, and ran silently)
    _check_magnitude(out.max(), out.min(), name)
    return out


class LipschitzGLM:
    r"""GLM records :math:`(a_i, b_i)` with the loss :math:`\ell(\langle a, x\rangle, b)`,
    rows rescaled to :math:`\|a_i\| \le A` (L = A).

    Parameters
    ----------
    A : array-like of shape (n, d)
        Feature rows (private).
    b : array-like of shape (n,)
        Targets (absolute loss) or labels in {-1, +1} (hinge) (private).
    loss : {"absolute", "hinge"}
        :math:`|z - b|` or :math:`\max(0, 1 - bz)`; both have :math:`|\ell'| \le 1`.
    feature_bound : float, default=1.0
        A (public). Rows longer than A are scaled down to length A (per record).
    """

    def __init__(self, A: ArrayLike, b: ArrayLike, loss: str = "absolute",
                 feature_bound: float = 1.0) -> None:
        if loss not in ("absolute", "hinge"):
            raise ValueError(f"loss must be 'absolute' or 'hinge'; got {loss!r}.")
        self.loss = loss
        X = _matrix(A, "A")
        y = check_vector(b, "b")
        # named here: the ReSQue estimator built from this data would name it y
        _check_magnitude(y.max(), y.min(), "b")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"b must have one entry per row of A ({X.shape[0]}); got "
                             f"{y.shape[0]}.")
        if loss == "hinge" and not np.all(np.abs(y) == 1.0):
            raise ValueError("b must contain only -1 and +1 for the hinge loss.")
        self.feature_bound = check_positive(feature_bound, "feature_bound")
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        scale = np.minimum(1.0, self.feature_bound / np.maximum(norms, 1e-300))
        self.A = X * scale[:, None]
        self.b = y.copy()
        self.lipschitz = self.feature_bound

    @property
    def n_samples(self) -> int:
        """int: n."""
        return int(self.A.shape[0])

    @property
    def n_features(self) -> int:
        """int: d."""
        return int(self.A.shape[1])

    def _derivative(self, z, b):
        if self.loss == "absolute":
            return np.sign(z - b)
        return np.where(b * z < 1.0, -b, 0.0)

    def subgradients(self, idx: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """Rows :math:`\\ell'(\\langle a_{i}, z\\rangle, b_i)\\, a_i` for i = idx[k], z = Z[k].

        Parameters
        ----------
        idx : ndarray of int of shape (m,)
            Record indices.
        Z : ndarray of shape (m, d)
            Query points.

        Returns
        -------
        ndarray of shape (m, d)
        """
        rows = self.A[idx]
        z = np.einsum("ij,ij->i", rows, Z)
        return self._derivative(z, self.b[idx])[:, None] * rows

    def value(self, x: ArrayLike) -> float:
        """The empirical risk :math:`\\frac1n\\sum_i f(x; s_i)` (not private: evaluation only).

        Parameters
        ----------
        x : array-like of shape (d,)

        Returns
        -------
        float
        """
        z = self.A @ np.asarray(x, dtype=np.float64)
        if self.loss == "absolute":
            return float(np.mean(np.abs(z - self.b)))
        return float(np.mean(np.maximum(0.0, 1.0 - self.b * z)))

    def subset(self, rows: np.ndarray) -> LipschitzGLM:
        """The records ``rows`` (a disjoint batch of the phased reduction).

        Parameters
        ----------
        rows : ndarray of int

        Returns
        -------
        LipschitzGLM
        """
        return LipschitzGLM(self.A[rows], self.b[rows], self.loss, self.feature_bound)

    def replace(self, i: int, a: ArrayLike, b: float) -> LipschitzGLM:
        """A neighbouring dataset (replace-one): record i replaced by (a, b).

        Parameters
        ----------
        i : int
            The replaced index.
        a : array-like of shape (d,)
        b : float

        Returns
        -------
        LipschitzGLM
        """
        A, y = self.A.copy(), self.b.copy()
        A[i], y[i] = a, b
        return LipschitzGLM(A, y, self.loss, self.feature_bound)


class GeometricMedianData:
    r"""Records :math:`s_i \in \mathbb R^d` with :math:`f(x; s) = \|x - s\|` (L = 1).

    Parameters
    ----------
    S : array-like of shape (n, d)
        The points (private).
    """

    def __init__(self, S: ArrayLike) -> None:
        self.S = _matrix(S, "S")
        self.lipschitz = 1.0

    @property
    def n_samples(self) -> int:
        """int: n."""
        return int(self.S.shape[0])

    @property
    def n_features(self) -> int:
        """int: d."""
        return int(self.S.shape[1])

    def subgradients(self, idx: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """Unit vectors :math:`(z - s_i)/\\|z - s_i\\|` (0 where z = s_i).

        Parameters
        ----------
        idx : ndarray of int of shape (m,)
        Z : ndarray of shape (m, d)

        Returns
        -------
        ndarray of shape (m, d)
        """
        D = Z - self.S[idx]
        nrm = np.sqrt(np.einsum("ij,ij->i", D, D))
        return D / np.where(nrm > 0.0, nrm, 1.0)[:, None]

    def value(self, x: ArrayLike) -> float:
        """The empirical risk :math:`\\frac1n\\sum_i\\|x - s_i\\|` (not private).

        Parameters
        ----------
        x : array-like of shape (d,)

        Returns
        -------
        float
        """
        return float(np.mean(np.linalg.norm(np.asarray(x, dtype=np.float64) - self.S,
                                             axis=1)))

    def subset(self, rows: np.ndarray) -> GeometricMedianData:
        """The records ``rows`` (a disjoint batch of the phased reduction).

        Parameters
        ----------
        rows : ndarray of int

        Returns
        -------
        GeometricMedianData
        """
        return GeometricMedianData(self.S[rows])

    def replace(self, i: int, s: ArrayLike) -> GeometricMedianData:
        """A neighbouring dataset (replace-one): record i replaced by s.

        Parameters
        ----------
        i : int
        s : array-like of shape (d,)

        Returns
        -------
        GeometricMedianData
        """
        S = self.S.copy()
        S[i] = s
        return GeometricMedianData(S)
