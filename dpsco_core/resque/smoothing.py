r"""Closed-form Gaussian smoothing :math:`\hat f_\rho(x) = E_{Z \sim N(0,\rho^2 I)} f(x + Z)`
(Carmon et al. 2023, Definition 1; note 000, section 12.3), with gradients.

Each function returns ``(value, gradient)`` at one point x. With :math:`\Phi, \varphi` the
standard normal cdf and pdf, a margin or residual u and :math:`s = \rho\|a\|`:

- linear :math:`\langle c, x\rangle`: unchanged;
- quadratic :math:`\frac12\|x\|^2`: :math:`\frac12\|x\|^2 + \rho^2 d/2`, gradient x;
- hinge :math:`\max(0, 1 - y\langle a, x\rangle)`, u = 1 - y<a, x>:
  :math:`u\Phi(u/s) + s\varphi(u/s)`, gradient :math:`-y a \Phi(u/s)`;
- absolute :math:`|\langle a, x\rangle - b|`, u = <a, x> - b:
  :math:`u(2\Phi(u/s) - 1) + 2s\varphi(u/s)`, gradient :math:`a(2\Phi(u/s) - 1)`;
- :math:`\|x\|_1`: coordinatewise :math:`x_j(1 - 2\Phi(-x_j/\rho)) + 2\rho\varphi(x_j/\rho)`,
  gradient :math:`\mathrm{erf}(x_j/(\rho\sqrt2))`.

Hinge and absolute take rows ``A`` (n, d) and labels/targets (n,) and average over rows (the
smoothed empirical risk). For convex L-Lipschitz f, :math:`0 \le \hat f_\rho - f \le L\rho\sqrt d`
(and :math:`\le L_\ell\|a\|\rho\sqrt{2/\pi}` for a GLM row: dimension-free).
"""

import math

import numpy as np
from scipy.special import erf, ndtr

from .._validation import all_finite, check_positive, check_real_array, check_vector

__all__ = ["smoothed_linear", "smoothed_quadratic", "smoothed_hinge", "smoothed_absolute",
           "smoothed_l1", "smoothing_error_bound"]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _pdf(t):
    return _INV_SQRT_2PI * np.exp(-0.5 * t * t)


def _rows(A, y, d, y_name="y"):
    A = check_real_array(A, "A")
    y = check_real_array(y, y_name)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    y = np.atleast_1d(np.asarray(y, dtype=np.float64))
    if A.ndim != 2 or y.ndim != 1 or A.shape[1] != d or y.shape[0] != A.shape[0]:
        raise ValueError(f"A must have shape (n, {d}) and {y_name} shape (n,); got {A.shape} "
                         f"and {y.shape}.")
    if A.shape[0] == 0:
        raise ValueError("A must have at least one row.")
    if not all_finite(A):
        raise ValueError("A must contain only finite values; it has NaN or inf.")
    if not all_finite(y):
        raise ValueError(f"{y_name} must contain only finite values; it has NaN or inf.")
    return A, y


def _scaled_norms(A):
    """Row norms of A computed as m ||a / m|| (no overflow of the squares, m = max |a_ij|)."""
    m = np.max(np.abs(A), axis=1)
    safe = np.where(m > 0.0, m, 1.0)
    return m * np.sqrt(np.sum((A / safe[:, None]) ** 2, axis=1))


def _ratio(u, s):
    """u / s with s = 0 (a zero row: no smoothing) read as the limit: sign(u) inf, 0 at u = 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = u / np.where(s > 0.0, s, 1.0)
    return np.where(s > 0.0, t, np.where(u > 0.0, np.inf, np.where(u < 0.0, -np.inf, 0.0)))


def _checked(value, grad, names):
    """(value, grad) if all finite, else a ValueError naming the arguments."""
    if math.isfinite(value) and np.all(np.isfinite(grad)):
        return value, grad
    raise ValueError(f"{names} too large: the smoothed value or its gradient exceeds the "
                     "float64 range (1.8e308); rescale them.")


def smoothed_linear(x, c, smoothing_radius):
    """Smoothed <c, x>: itself.

    Parameters
    ----------
    x : ndarray of shape (d,)
        The point.
    c : ndarray of shape (d,)
        The linear coefficients.
    smoothing_radius : float
        :math:`\\rho > 0`.

    Returns
    -------
    value : float
    gradient : ndarray of shape (d,)
    """
    x, c = check_vector(x, "x"), check_vector(c, "c")
    if c.shape != x.shape:
        raise ValueError(f"c must have the length of x, {x.shape[0]}; got {c.shape[0]}.")
    check_positive(smoothing_radius, "smoothing_radius")
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(c @ x)
    return _checked(value, c, "x and c are")[0], c.copy()


def smoothed_quadratic(x, smoothing_radius):
    """Smoothed ||x||^2 / 2 = ||x||^2 / 2 + rho^2 d / 2, gradient x.

    Parameters
    ----------
    x : ndarray of shape (d,)
        The point.
    smoothing_radius : float
        :math:`\\rho > 0`.

    Returns
    -------
    value : float
    gradient : ndarray of shape (d,)
    """
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    m = float(np.max(np.abs(x)))
    with np.errstate(over="ignore"):
        half_sq = 0.5 * m * (float((x / m) @ (x / m)) * m) if m > 0.0 else 0.0
        value = half_sq + 0.5 * rho * (rho * x.shape[0])
    return _checked(value, x, "x and smoothing_radius are")[0], x.copy()


def smoothed_hinge(x, A, y, smoothing_radius):
    """Smoothed mean hinge loss (1/n) sum_i max(0, 1 - y_i <a_i, x>).

    Parameters
    ----------
    x : ndarray of shape (d,)
        The point.
    A : ndarray of shape (n, d)
        Rows :math:`a_i`.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    smoothing_radius : float
        :math:`\\rho > 0`.

    Returns
    -------
    value : float
    gradient : ndarray of shape (d,)
    """
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    A, y = _rows(A, y, x.shape[0])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        s = rho * _scaled_norms(A)
        u = 1.0 - y * (A @ x)
        t = _ratio(u, s)
        pdf = np.where(np.isfinite(t), _pdf(np.where(np.isfinite(t), t, 0.0)), 0.0)
        value = float(np.mean(u * ndtr(t) + s * pdf))
        grad = -(y * ndtr(t)) @ A / A.shape[0]
    return _checked(value, grad, "x, A, y and smoothing_radius are")


def smoothed_absolute(x, A, b, smoothing_radius):
    """Smoothed mean absolute loss ``(1/n) sum_i |<a_i, x> - b_i|``.

    Parameters
    ----------
    x : ndarray of shape (d,)
        The point.
    A : ndarray of shape (n, d)
        Rows :math:`a_i`.
    b : ndarray of shape (n,)
        Targets.
    smoothing_radius : float
        :math:`\\rho > 0`.

    Returns
    -------
    value : float
    gradient : ndarray of shape (d,)
    """
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    A, b = _rows(A, b, x.shape[0], "b")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        s = rho * _scaled_norms(A)
        u = A @ x - b
        t = _ratio(u, s)
        pdf = np.where(np.isfinite(t), _pdf(np.where(np.isfinite(t), t, 0.0)), 0.0)
        value = float(np.mean(u * (2.0 * ndtr(t) - 1.0) + 2.0 * s * pdf))
        grad = (2.0 * ndtr(t) - 1.0) @ A / A.shape[0]
    return _checked(value, grad, "x, A, b and smoothing_radius are")


def smoothed_l1(x, smoothing_radius):
    """Smoothed ||x||_1, coordinatewise; gradient erf(x_j / (rho sqrt 2)).

    Parameters
    ----------
    x : ndarray of shape (d,)
        The point.
    smoothing_radius : float
        :math:`\\rho > 0`.

    Returns
    -------
    value : float
    gradient : ndarray of shape (d,)
    """
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        t = x / rho                       # +-inf for tiny rho: the limits below are exact
        pdf = np.where(np.isfinite(t), _pdf(np.where(np.isfinite(t), t, 0.0)), 0.0)
        value = float(np.sum(x * (1.0 - 2.0 * ndtr(-t)) + 2.0 * rho * pdf))
        grad = erf(x / rho / math.sqrt(2.0))
    return _checked(value, grad, "x and smoothing_radius are")


def smoothing_error_bound(lipschitz, smoothing_radius, n_features):
    """L rho sqrt(d): 0 <= f_rho - f <= this for convex L-Lipschitz f (BJL+19, Lemma 8).

    Parameters
    ----------
    lipschitz : float
        L.
    smoothing_radius : float
        :math:`\\rho`.
    n_features : int
        d.

    Returns
    -------
    float
    """
    return (check_positive(lipschitz, "lipschitz") * check_positive(smoothing_radius,
            "smoothing_radius") * math.sqrt(n_features))
