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

from ._validation import check_positive, check_vector

__all__ = ["smoothed_linear", "smoothed_quadratic", "smoothed_hinge", "smoothed_absolute",
           "smoothed_l1", "smoothing_error_bound"]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _pdf(t):
    return _INV_SQRT_2PI * np.exp(-0.5 * t * t)


def _rows(A, y, d):
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    y = np.atleast_1d(np.asarray(y, dtype=np.float64))
    if A.shape[1] != d or y.shape[0] != A.shape[0]:
        raise ValueError(f"A must have shape (n, {d}) and y shape (n,); got {A.shape} and "
                         f"{y.shape}.")
    return A, y


def smoothed_linear(x, c, smoothing_radius):
    """Smoothed <c, x>: itself."""
    x, c = check_vector(x, "x"), check_vector(c, "c")
    check_positive(smoothing_radius, "smoothing_radius")
    return float(c @ x), c.copy()


def smoothed_quadratic(x, smoothing_radius):
    """Smoothed ||x||^2 / 2 = ||x||^2 / 2 + rho^2 d / 2, gradient x."""
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    return 0.5 * float(x @ x) + 0.5 * rho ** 2 * x.shape[0], x.copy()


def smoothed_hinge(x, A, y, smoothing_radius):
    """Smoothed mean hinge loss (1/n) sum_i max(0, 1 - y_i <a_i, x>)."""
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    A, y = _rows(A, y, x.shape[0])
    s = rho * np.linalg.norm(A, axis=1)
    u = 1.0 - y * (A @ x)
    t = u / s
    value = np.mean(u * ndtr(t) + s * _pdf(t))
    grad = -(y * ndtr(t)) @ A / A.shape[0]
    return float(value), grad


def smoothed_absolute(x, A, b, smoothing_radius):
    """Smoothed mean absolute loss (1/n) sum_i |<a_i, x> - b_i|."""
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    A, b = _rows(A, b, x.shape[0])
    s = rho * np.linalg.norm(A, axis=1)
    u = A @ x - b
    t = u / s
    value = np.mean(u * (2.0 * ndtr(t) - 1.0) + 2.0 * s * _pdf(t))
    grad = (2.0 * ndtr(t) - 1.0) @ A / A.shape[0]
    return float(value), grad


def smoothed_l1(x, smoothing_radius):
    """Smoothed ||x||_1, coordinatewise; gradient erf(x_j / (rho sqrt 2))."""
    x = check_vector(x, "x")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    value = np.sum(x * (1.0 - 2.0 * ndtr(-x / rho)) + 2.0 * rho * _pdf(x / rho))
    return float(value), erf(x / (rho * math.sqrt(2.0)))


def smoothing_error_bound(lipschitz, smoothing_radius, n_features):
    """L rho sqrt(d): 0 <= f_rho - f <= this for convex L-Lipschitz f (BJL+19, Lemma 8)."""
    return (check_positive(lipschitz, "lipschitz") * check_positive(smoothing_radius,
            "smoothing_radius") * math.sqrt(n_features))
