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

import math

import numpy as np

from ._config import effective_n_threads
from ._kernels import _prox
from ._validation import check_scalar, check_vector

__all__ = ["project_l2_ball", "project_l1_ball", "project_simplex"]

_ORIGIN = np.empty(0)
_EPS = float(np.finfo(np.float64).eps)


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
    # v's finiteness is read off the kernel's norm below (a non-finite v gives a non-finite
    # norm), which saves a pass over v; check_vector then raises the error.
    v = check_vector(v, "v", check_finite=False)
    radius = check_scalar(radius, "radius", low=0.0, low_open=False, allow_inf=True)
    if center is None:
        center = _ORIGIN
    else:
        center = check_vector(center, "center")
        if center.shape != v.shape:
            raise ValueError(f"center must have the length of v ({v.shape[0]}); got "
                             f"{center.shape[0]}.")
    n_threads = effective_n_threads(n_threads)
    out = np.empty_like(v)
    dist = _prox.project_l2_ball(v, center, radius, out, n_threads)
    # The kernel's result is exact to rounding when v is inside (a copy), or when ||v - c||
    # is finite (v - c did not overflow) and below 2^1000 and R / ||v - c|| is a normal
    # number; the other ends of the double range go to the scaled NumPy version.
    if math.isfinite(dist) and (dist <= radius or (
            _L2_KERNEL_SMALLEST <= dist < _L2_KERNEL_LARGEST
            and radius >= dist * _L2_KERNEL_SMALLEST)):
        return out
    if not math.isfinite(dist):
        check_vector(v, "v")                      # raises if v has NaN or inf
    return _project_l2_ball_scaled(v, center if center.size else None, radius)


#: Where the kernel is exact to rounding: ||v - c|| and R / ||v - c|| normal numbers, and
#: ||v - c|| well inside the double range.
_L2_KERNEL_SMALLEST, _L2_KERNEL_LARGEST = 2.0 ** -1000, 2.0 ** 1000


def _project_l2_ball_scaled(v, center, radius):
    r""":math:`c + (v - c) \min(1, R / \|v - c\|_2)` without overflow or underflow.

    :math:`u = v - c` is formed as :math:`v/2 - c/2` (exact up to subnormal rounding) when it
    overflows; with :math:`m = \max_i |u_i|` and :math:`s = \|u / m\|_2 \in [1, \sqrt d]`
    the result is :math:`c + (u / m) (R / s)` when :math:`m > R / s`: no intermediate
    overflows or underflows (``u / m`` stays exact where ``u * (1 / m)`` overflows for a
    subnormal m, and :math:`\|u\| = m s` itself may exceed the double range).
    """
    half = 1.0
    with np.errstate(over="ignore"):
        u = v.copy() if center is None else v - center
    if not np.all(np.isfinite(u)):
        half = 0.5
        u = 0.5 * v - 0.5 * center
    m = float(np.max(np.abs(u)))
    if m == 0.0:
        return v.copy()
    u /= m
    s = float(np.sqrt(np.sum(np.square(u))))    # ||v - c|| = m s (m s may overflow)
    target = half * radius / s                  # in [R / (2 sqrt(d)), R]: no over/underflow
    if m <= target:
        return v.copy()
    u *= target
    with np.errstate(over="ignore"):
        out = u * (1.0 / half) if center is None else center + u * (1.0 / half)
    if not np.all(np.isfinite(out)):
        raise ValueError("the projection of v onto the ball of this center and radius has "
                         "entries beyond the float64 range (about 1.8e308); rescale v, center "
                         "and radius.")
    return out


def _threshold_projection(y, total):
    r""":math:`\max(y - \tau, 0)` with :math:`\sum_i \max(y_i - \tau, 0) = a` (``total``
    > 0): the simplex projection, accurate over the whole double range.

    Computed on an exactly equivalent, well-scaled problem (the kernel's threshold search
    sums the entries, which cancels catastrophically when :math:`\max y \gg a`):

    - shift: :math:`P(y) = P(y - \max y)` (the threshold moves with the shift). The entries
      that can be in the support lie in :math:`[\max y - a, \max y]`, where the subtraction
      errs by at most :math:`\varepsilon a / 2` (exactly 0 when :math:`a \le \max y / 2`,
      by Sterbenz's lemma);
    - clamp: the threshold is at least :math:`-a` after the shift, so entries below
      :math:`-a` (or overflowing to -inf) are outside the support and become :math:`-a`;
    - scale: by the power of two :math:`2^k \ge a`, so that the kernel sees entries in
      [-2, 0] and a total in [1/2, 1) (exact up to subnormal rounding), and the result is
      scaled back exactly.
    """
    top = float(np.max(y))
    with np.errstate(over="ignore"):
        u = y - top
    np.maximum(u, -total, out=u)
    exponent = math.frexp(total)[1]
    u = np.ldexp(u, -exponent)
    out = np.empty_like(u)
    _prox.project_simplex(u, math.ldexp(total, -exponent), out)
    return np.ldexp(out, exponent)


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
    if radius == 0.0:
        return np.zeros_like(v)
    with np.errstate(over="ignore"):
        inside = float(np.sum(np.abs(v))) <= radius      # an overflowing sum is inf: outside
    if inside:
        return v.copy()
    # sign(v) max(|v| - tau, 0) is the simplex projection of |v| (tau > 0 as ||v||_1 > R).
    return np.copysign(_threshold_projection(np.abs(v), radius), v)


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
    if total == 0.0:
        return np.zeros_like(v)
    with np.errstate(over="ignore"):
        inside = v.min() >= 0.0 and abs(float(np.sum(v)) - total) <= v.size * _EPS * total
    if inside:
        return v.copy()
    return _threshold_projection(v, total)
