r"""Euclidean projections onto the l2 ball, the l1 ball and the (scaled) probability simplex.

:math:`P_K(v) = \arg\min_{x \in K} \|x - v\|_2` for

- the l2 ball :math:`\{x : \|x - c\|_2 \le R\}` (DP-SRGD's constraint set, note 003 section
  4.3): :math:`P(v) = c + (v - c) \min(1, R / \|v - c\|_2)`;
- the l1 ball :math:`\{x : \|x\|_1 \le R\}` (projected DP-SGD over the l1 ball, note 004
  section 9.5): :math:`P(v) = \mathrm{sign}(v) \max(|v| - \tau, 0)`;
- the simplex :math:`\{x \ge 0 : \sum_i x_i = a\}`: :math:`P(v) = \max(v - \tau, 0)`;

where :math:`\tau` solves :math:`\sum_i \max(y_i - \tau, 0) = R` (or ``a``) with
:math:`y = |v|` (or ``v``), found in expected O(d) time without sorting (Condat 2016's cleanup
after threshold-filter passes; see ``src_cython/_prox.pyx``). Points already in the set come
back unchanged, bit for bit. Projections touch no private data: applying them is
post-processing and costs no privacy.

References
----------
.. [1] L. Condat, "Fast projection onto the simplex and the l1 ball", Math. Program. 158
   (2016), 575-585.
.. [2] J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the
   l1-ball for learning in high dimensions", ICML 2008.
"""

import numpy as np

from ._config import effective_n_threads
from ._kernels import _prox
from ._validation import check_scalar, check_vector

__all__ = ["project_l2_ball", "project_l1_ball", "project_simplex"]

_ORIGIN = np.empty(0)


def project_l2_ball(v, radius, center=None, *, n_threads=None):
    r"""Project ``v`` onto the l2 ball of radius ``radius`` centred at ``center``.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project (finite).
    radius : float
        Radius :math:`R \ge 0`; ``inf`` means no constraint.
    center : array-like of shape (d,) or None, default=None
        Centre of the ball; None is the origin.
    n_threads : int or None, default=None
        OpenMP threads for the norm and the scaling (used only for d >= 131072); None means
        every core. The result does not depend on it.

    Returns
    -------
    ndarray of shape (d,)
        :math:`c + (v - c) \min(1, R / \|v - c\|_2)`, a new array (``v`` copied when inside).

    Raises
    ------
    TypeError
        If ``v``, ``center`` or ``radius`` is not real-valued.
    ValueError
        If ``v`` is not a non-empty finite vector, ``center`` has another length or non-finite
        values, or ``radius`` is negative or NaN.

    Examples
    --------
    >>> from dpsco_core.projections import project_l2_ball
    >>> project_l2_ball([3.0, 4.0], 1.0)
    array([0.6, 0.8])
    """
    v = check_vector(v, "v")
    radius = check_scalar(radius, "radius", low=0.0, low_open=False, allow_inf=True)
    if center is None:
        center = _ORIGIN
    else:
        center = check_vector(center, "center")
        if center.shape != v.shape:
            raise ValueError(f"center must have the length of v ({v.shape[0]}); got "
                             f"{center.shape[0]}.")
    out = np.empty_like(v)
    _prox.project_l2_ball(v, center, radius, out, effective_n_threads(n_threads))
    return out


def project_l1_ball(v, radius):
    r"""Project ``v`` onto the l1 ball :math:`\{x : \|x\|_1 \le R\}`.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project (finite).
    radius : float
        Radius :math:`R \ge 0` (0 gives the zero vector); ``inf`` means no constraint.

    Returns
    -------
    ndarray of shape (d,)
        ``v`` (a copy) when :math:`\|v\|_1 \le R`, else :math:`\mathrm{sign}(v) \max(|v| -
        \tau, 0)` with :math:`\|P(v)\|_1 = R` up to rounding. A new array.

    Raises
    ------
    TypeError
        If ``v`` or ``radius`` is not real-valued.
    ValueError
        If ``v`` is not a non-empty finite vector, or ``radius`` is negative or NaN.

    Notes
    -----
    Expected O(d) time and one scratch vector of d doubles (see the module docstring); the
    result agrees with the sort-based algorithm of Duchi et al. to rounding.

    Examples
    --------
    >>> from dpsco_core.projections import project_l1_ball
    >>> project_l1_ball([3.0, -1.0, 0.5], 2.0)
    array([ 2., -0.,  0.])
    """
    v = check_vector(v, "v")
    radius = check_scalar(radius, "radius", low=0.0, low_open=False, allow_inf=True)
    out = np.empty_like(v)
    _prox.project_l1_ball(v, radius, out)
    return out


def project_simplex(v, total=1.0):
    r"""Project ``v`` onto the simplex :math:`\{x : x \ge 0, \sum_i x_i = a\}`.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project (finite).
    total : float, default=1.0
        :math:`a \ge 0`, the sum of the simplex's points (1: the probability simplex; 0: the
        set {0}).

    Returns
    -------
    ndarray of shape (d,)
        :math:`\max(v - \tau, 0)`, a new array. ``v`` itself (a copy) when :math:`v \ge 0` and
        :math:`|\sum_i v_i - a| \le d \, \varepsilon \, a` (machine epsilon
        :math:`\varepsilon`): a point of the simplex up to the rounding of its sum.

    Raises
    ------
    TypeError
        If ``v`` or ``total`` is not real-valued.
    ValueError
        If ``v`` is not a non-empty finite vector, or ``total`` is negative, infinite or NaN.

    Examples
    --------
    >>> from dpsco_core.projections import project_simplex
    >>> project_simplex([0.5, 0.2, -1.0])
    array([0.65, 0.35, 0.  ])
    """
    v = check_vector(v, "v")
    total = check_scalar(total, "total", low=0.0, low_open=False)
    out = np.empty_like(v)
    _prox.project_simplex(v, total, out)
    return out
