r"""Penalties (the separable regularizer :math:`\psi` of composite problems) and their prox.

Every solver of dpsco-core minimizes :math:`F(w) = f(w) + \psi(w)` with :math:`f` the average
loss and :math:`\psi(w) = \sum_j \psi_j(w_j)` one of the penalties below. Each penalty offers

- ``value(w)``: :math:`\psi(w)`;
- ``prox(u, step)``: :math:`\mathrm{prox}_{t \psi}(u) = \arg\min_w \tfrac12 \|w - u\|^2 +
  t\,\psi(w)`, where ``step`` is a scalar :math:`t > 0` or a vector of per-coordinate steps
  (DP-CD uses :math:`t_j = \gamma / M_j`), computed by the compiled kernel
  ``_prox.prox_vector`` (its NumPy twin, ``dpsco_core.reference.prox.prox_vector``, holds the
  formulas in NumPy and gives the same bits);
- ``kind`` and ``params``: the code and the two parameters with which compiled kernels call
  the scalar prox of ``src_cython/_prox.pxd`` (one prox implementation for every solver).

Conventions follow the DP-CD paper (note 002, sections 3.6 and 3.7): ``L1(lam)`` is
:math:`\lambda \|w\|_1` and ``L2(lam)`` is :math:`(\lambda/2) \|w\|_2^2`, so that
``Problem(X, y, "squared", L1(lam))`` matches scikit-learn's ``Lasso(alpha=lam / 2)`` and
``Problem(X, y, "logistic", L2(lam))`` matches ``LogisticRegression(C=1 / (n lam))``.
Penalties are data-independent: applying them is post-processing and costs no privacy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._typing import ArrayLike, FloatArray

from ._config import effective_n_threads
from ._kernels import _prox as _prox_kernel
from ._validation import all_finite, check_real_array, check_scalar

__all__ = ["Penalty", "NoPenalty", "L1", "L2", "ElasticNet", "Box", "check_penalty",
           "PENALTY_NONE", "PENALTY_L1", "PENALTY_L2", "PENALTY_ELASTIC_NET", "PENALTY_BOX"]

# Codes shared with src_cython/_prox.pxd (enum PenaltyKind); never renumber.
PENALTY_NONE = 0
PENALTY_L1 = 1
PENALTY_L2 = 2
PENALTY_ELASTIC_NET = 3
PENALTY_BOX = 4


def _check_step(step: float | ArrayLike, size: int) -> FloatArray:
    arr: FloatArray = check_real_array(step, "step").astype(np.float64)
    if arr.ndim not in (0, 1) or (arr.ndim == 1 and arr.shape[0] != size):
        raise ValueError(f"step must be a scalar or a vector of length {size}; got shape "
                         f"{arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError("step must be finite and in (0, inf).")
    return arr


class Penalty:
    """Base class: a separable penalty :math:`\\psi(w) = \\sum_j \\psi_j(w_j)`."""

    kind: int | None = None

    @property
    def params(self) -> tuple[Any, ...]:
        """The two scalar parameters passed to the compiled scalar prox."""
        return (0.0, 0.0)

    def value(self, w: ArrayLike) -> float:
        r"""The penalty :math:`\psi(w)` (``inf`` outside its domain).

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        raise NotImplementedError

    def prox(self, u: ArrayLike, step: float | ArrayLike, *,
             n_threads: int | None = None) -> FloatArray:
        """:math:`\\arg\\min_w \\frac12 \\|w - u\\|^2 + t \\psi(w)`, a new array.

        Parameters
        ----------
        u : array-like
            The point (any shape; a vector in the solvers). Never modified.
        step : float or array-like of shape (u.shape[-1],)
            The step :math:`t > 0`, one for all coordinates or one per coordinate (broadcast
            along the last axis of ``u``).
        n_threads : int or None, default=None
            OpenMP threads (used only for at least 131072 values); None means every core.
            The result does not depend on it.

        Returns
        -------
        ndarray of shape ``np.broadcast_shapes(u.shape, step.shape)``
            The prox, computed coordinate-wise by the compiled kernel; a penalty without a
            compiled ``kind`` (a user subclass) uses its own ``_prox``.
        """
        # no copy: the kernel reads u and writes a new array (a user's _prox gets a copy)
        u_arr: FloatArray = check_real_array(u, "u").astype(np.float64, copy=False)
        if not all_finite(u_arr):
            raise ValueError("u must contain only finite values; it has NaN or inf.")
        step_arr = _check_step(step, u_arr.shape[-1] if u_arr.ndim else 1)
        # t * lambda = inf would turn u / (1 + t lambda) into 0 instead of a small value
        # (a box's parameters are bounds, not multiplied by the step)
        strength = 0.0 if self.kind == PENALTY_BOX else max(map(abs, self.params), default=0.0)
        if step_arr.size and not np.isfinite(float(np.max(step_arr)) * strength):
            largest = np.finfo(np.float64).max / strength
            raise ValueError(f"step must be at most {largest:.3g} for this penalty (step times "
                             f"its parameters {self.params} overflows float64).")
        if self.kind is None:
            return self._prox(u_arr.copy(), step_arr)
        shape = np.broadcast_shapes(u_arr.shape, step_arr.shape)
        if step_arr.ndim == 0:
            steps = step_arr.reshape(1)
        else:
            steps = np.ascontiguousarray(np.broadcast_to(step_arr, shape)).reshape(-1)
        flat = np.ascontiguousarray(np.broadcast_to(u_arr, shape)).reshape(-1)
        out = np.empty(flat.shape[0])
        p1, p2 = self.params
        _prox_kernel.prox_vector(flat, steps, self.kind, p1, p2, out,
                                 effective_n_threads(n_threads, work=flat.shape[0]))
        return out.reshape(shape)

    def _prox(self, u: FloatArray, step: FloatArray) -> FloatArray:
        """The prox of a penalty without a compiled ``kind``; subclasses override it."""
        raise NotImplementedError

    @property
    def strong_convexity(self) -> float:
        """Modulus of strong convexity of :math:`\\psi` in the l2 norm (0 if none)."""
        return 0.0

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.params == other.params

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.params))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NoPenalty(Penalty):
    """:math:`\\psi = 0`; the prox is the identity."""

    kind = PENALTY_NONE

    def value(self, w: ArrayLike) -> float:
        r""":math:`\psi(w) = 0`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point (validated, otherwise unused).

        Returns
        -------
        float
        """
        return 0.0


class L1(Penalty):
    """:math:`\\psi(w) = \\lambda \\|w\\|_1`; prox: soft-thresholding at :math:`t \\lambda`.

    Parameters
    ----------
    lam : float
        :math:`\\lambda \\ge 0`, the weight of the l1 norm (scikit-learn's ``Lasso(alpha)`` on the
        DP-CD scaling :math:`\\frac1n\\|Xw - y\\|^2` of the squared loss is ``L1(2 * alpha)``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core import L1
    >>> L1(0.5).value(np.array([1.0, -2.0]))
    1.5
    """

    kind = PENALTY_L1

    def __init__(self, lam: float) -> None:
        self.lam = check_scalar(lam, "lam", low=0.0, low_open=False)

    @property
    def params(self) -> tuple[Any, ...]:
        """The constructor's argument ``(lam,)``, as passed to the compiled prox."""
        return (self.lam, 0.0)

    def value(self, w: ArrayLike) -> float:
        r""":math:`\psi(w) = \lambda \|w\|_1`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        return self.lam * float(np.abs(w).sum())

    def __repr__(self) -> str:
        return f"L1(lam={self.lam!r})"


class L2(Penalty):
    """:math:`\\psi(w) = (\\lambda/2) \\|w\\|_2^2`; prox: :math:`u / (1 + t \\lambda)`.

    Parameters
    ----------
    lam : float
        :math:`\\lambda \\ge 0`; the penalty is :math:`(\\lambda/2)\\|w\\|_2^2`, hence
        :math:`\\lambda`-strongly convex.
    """

    kind = PENALTY_L2

    def __init__(self, lam: float) -> None:
        self.lam = check_scalar(lam, "lam", low=0.0, low_open=False)

    @property
    def params(self) -> tuple[Any, ...]:
        """The constructor's argument ``(lam,)``, as passed to the compiled prox."""
        return (self.lam, 0.0)

    @property
    def strong_convexity(self) -> float:
        r""":math:`\lambda`: the penalty is :math:`\lambda`-strongly convex."""
        return self.lam

    def value(self, w: ArrayLike) -> float:
        r""":math:`\psi(w) = (\lambda/2) \|w\|_2^2`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        return 0.5 * self.lam * float(np.dot(np.ravel(w), np.ravel(w)))

    def __repr__(self) -> str:
        return f"L2(lam={self.lam!r})"


class ElasticNet(Penalty):
    """:math:`\\psi(w) = \\lambda_1 \\|w\\|_1 + (\\lambda_2/2) \\|w\\|_2^2`.

    Prox: soft-threshold at :math:`t \\lambda_1`, then divide by :math:`1 + t \\lambda_2`.
    scikit-learn's ``ElasticNet(alpha, l1_ratio)`` on the DP-CD scaling of the squared loss
    corresponds to ``l1 = 2 alpha l1_ratio`` and ``l2 = 2 alpha (1 - l1_ratio)``.

    Parameters
    ----------
    l1 : float
        :math:`\\lambda_1 \\ge 0`, the weight of the l1 norm.
    l2 : float
        :math:`\\lambda_2 \\ge 0`, the weight of the squared l2 norm.
    """

    kind = PENALTY_ELASTIC_NET

    def __init__(self, l1: float, l2: float) -> None:
        self.l1 = check_scalar(l1, "l1", low=0.0, low_open=False)
        self.l2 = check_scalar(l2, "l2", low=0.0, low_open=False)

    @property
    def params(self) -> tuple[Any, ...]:
        """The constructor's arguments ``(l1, l2)``, as passed to the compiled prox."""
        return (self.l1, self.l2)

    @property
    def strong_convexity(self) -> float:
        r""":math:`\lambda_2`: the penalty is :math:`\lambda_2`-strongly convex."""
        return self.l2

    def value(self, w: ArrayLike) -> float:
        r""":math:`\psi(w) = \lambda_1 \|w\|_1 + (\lambda_2/2) \|w\|_2^2`.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        w = np.ravel(w)
        return self.l1 * float(np.abs(w).sum()) + 0.5 * self.l2 * float(np.dot(w, w))

    def __repr__(self) -> str:
        return f"ElasticNet(l1={self.l1!r}, l2={self.l2!r})"


class Box(Penalty):
    """Indicator of the box :math:`[\\mathrm{lower}, \\mathrm{upper}]^p` (scalar bounds).

    :math:`\\psi(w) = 0` inside, :math:`+\\infty` outside; the prox is the clip.

    Parameters
    ----------
    lower, upper : float
        The bounds, ``lower <= upper`` (finite or infinite), shared by every coordinate.
    """

    kind = PENALTY_BOX

    def __init__(self, lower: float, upper: float) -> None:
        self.lower = check_scalar(lower, "lower", allow_inf=True)
        self.upper = check_scalar(upper, "upper", allow_inf=True)
        if not self.lower <= self.upper:
            raise ValueError(f"lower must be <= upper; got lower={self.lower!r}, "
                             f"upper={self.upper!r}.")

    @property
    def params(self) -> tuple[Any, ...]:
        """The constructor's arguments ``(lower, upper)``, as passed to the compiled prox."""
        return (self.lower, self.upper)

    def value(self, w: ArrayLike) -> float:
        r""":math:`\psi(w)`: 0 if every coordinate of ``w`` is in the box, ``inf`` otherwise.

        Parameters
        ----------
        w : array-like of shape (n_features,)
            The point.

        Returns
        -------
        float
        """
        w = np.asarray(w)
        inside = np.all((w >= self.lower) & (w <= self.upper))
        return 0.0 if inside else float("inf")

    def __repr__(self) -> str:
        return f"Box(lower={self.lower!r}, upper={self.upper!r})"


def check_penalty(penalty: Penalty | None) -> Penalty:
    """Return a Penalty: None means no penalty; anything else must be a Penalty instance.

    Parameters
    ----------
    penalty : Penalty or None
        The penalty to check.

    Returns
    -------
    Penalty
        ``penalty``, or ``NoPenalty()`` for None.

    Raises
    ------
    TypeError
        If ``penalty`` is neither None nor a :class:`Penalty`.
    """
    if penalty is None:
        return NoPenalty()
    if not isinstance(penalty, Penalty):
        raise TypeError("penalty must be a dpsco_core.penalties.Penalty (L1, L2, ElasticNet, "
                        f"Box, NoPenalty) or None; got {type(penalty).__name__}.")
    return penalty
