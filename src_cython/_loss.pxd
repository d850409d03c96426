# Per-sample losses of linear models, l(z, y) with margin z = <x, w>: the one implementation
# that every kernel (coordinate descent, batch gradients, ReSQue) cimports with
#     from _loss cimport LossKind, loss_value, loss_deriv, loss_deriv2
# Codes are shared with dpsco_core.losses (Loss.kind); never renumber.
#
# Conventions (note 002, section 3.6):
#   LOSS_SQUARED       (z - y)^2                  DP-CD paper, no 1/2 factor
#   LOSS_HALF_SQUARED  (z - y)^2 / 2
#   LOSS_LOGISTIC      log(1 + exp(-y z))         y in {-1, +1}
#   LOSS_HUBER         r = z - y, d = param:      r^2 / 2 if |r| <= d else d (|r| - d / 2)
#   LOSS_HINGE         max(0, 1 - y z)            y in {-1, +1}
#   LOSS_ABSOLUTE      |z - y|
# Subgradients at kinks (hinge at y z = 1, absolute at z = y) are 0; second derivatives are 0
# where the loss is piecewise linear and 1 for Huber at |r| = d (the quadratic piece).
# Only +, -, *, /, fabs, exp and log1p are used (and sinh, cosh in loss_deriv_diff), so with
# -ffp-contract=off (setup.py) the results are bitwise those of the same formulas evaluated
# with Python's math module.

from libc.math cimport cosh, exp, fabs, log1p, sinh


cdef enum LossKind:
    LOSS_SQUARED = 0
    LOSS_HALF_SQUARED = 1
    LOSS_LOGISTIC = 2
    LOSS_HUBER = 3
    LOSS_HINGE = 4
    LOSS_ABSOLUTE = 5


cdef inline double log1pexp(double x) noexcept nogil:
    """log(1 + exp(x)) without overflow or cancellation, for any finite x.

    Cut-offs from M. Maechler, "Accurately Computing log(1 - exp(-|a|))", Rmpfr vignette
    (2012), eq. (10), also used by scikit-learn's ``_loss.pyx.tp``: below -37 exp(x) is the
    answer to double precision; above 33.3 x is (exp(-x) < eps x); in between log1p(exp(x)) or
    x + exp(-x).
    """
    if x <= -37.0:
        return exp(x)
    elif x <= 18.0:
        return log1p(exp(x))
    elif x <= 33.3:
        return x + exp(-x)
    return x


cdef extern from "_exp_poly.h" nogil:
    # Branch-free exp (clamped to [-708, 708]) and -y / (1 + exp(y z)); see the header for the
    # accuracy (one ulp) and why: every sample loop over the logistic derivative vectorizes,
    # and the NumPy twin (reference.loss.exp_poly) reproduces it bitwise.
    double dpsco_exp(double x) noexcept
    double dpsco_logistic_deriv(double z, double y) noexcept


cdef inline double logistic_value(double z, double y) noexcept nogil:
    # y z is exact for y in {-1, +1}.
    return log1pexp(-(y * z))


cdef inline double logistic_deriv(double z, double y) noexcept nogil:
    # d/dz log(1 + exp(-y z)) = -y sigmoid(-y z) = -y / (1 + exp(y z))
    return dpsco_logistic_deriv(z, y)


cdef inline double logistic_deriv2(double z, double y) noexcept nogil:
    # sigmoid(u) sigmoid(-u) = e / (1 + e)^2 with e = exp(-|u|) <= 1 (symmetric in u; y^2 = 1)
    cdef double e = exp(-fabs(y * z))
    return e / ((1.0 + e) * (1.0 + e))


cdef inline double huber_value(double r, double d) noexcept nogil:
    cdef double a = fabs(r)
    if a <= d:
        return 0.5 * r * r
    return d * (a - 0.5 * d)


cdef inline double huber_deriv(double r, double d) noexcept nogil:
    if r > d:
        return d
    elif r < -d:
        return -d
    return r


cdef inline double sign0(double x) noexcept nogil:
    """sign(x) with sign(0) = 0 (the subgradient chosen at a kink)."""
    if x > 0.0:
        return 1.0
    elif x < 0.0:
        return -1.0
    return 0.0


cdef inline double loss_value(int kind, double z, double y, double param) noexcept nogil:
    """l(z, y) for the loss ``kind`` (``param``: Huber threshold, ignored otherwise)."""
    cdef double r
    if kind == LOSS_SQUARED:
        r = z - y
        return r * r
    elif kind == LOSS_HALF_SQUARED:
        r = z - y
        return 0.5 * (r * r)
    elif kind == LOSS_LOGISTIC:
        return logistic_value(z, y)
    elif kind == LOSS_HUBER:
        return huber_value(z - y, param)
    elif kind == LOSS_HINGE:
        r = 1.0 - y * z
        return r if r > 0.0 else 0.0
    return fabs(z - y)


cdef inline double loss_deriv(int kind, double z, double y, double param) noexcept nogil:
    """d l(z, y) / dz (a subgradient, 0 at the kink, for hinge and absolute)."""
    if kind == LOSS_SQUARED:
        return 2.0 * (z - y)
    elif kind == LOSS_HALF_SQUARED:
        return z - y
    elif kind == LOSS_LOGISTIC:
        return logistic_deriv(z, y)
    elif kind == LOSS_HUBER:
        return huber_deriv(z - y, param)
    elif kind == LOSS_HINGE:
        return -y if 1.0 - y * z > 0.0 else 0.0
    return sign0(z - y)


cdef inline double loss_deriv2(int kind, double z, double y, double param) noexcept nogil:
    """d^2 l(z, y) / dz^2 (0 where the loss is piecewise linear, including at kinks)."""
    if kind == LOSS_SQUARED:
        return 2.0
    elif kind == LOSS_HALF_SQUARED:
        return 1.0
    elif kind == LOSS_LOGISTIC:
        return logistic_deriv2(z, y)
    elif kind == LOSS_HUBER:
        return 1.0 if fabs(z - y) <= param else 0.0
    return 0.0


cdef inline double loss_deriv_diff(int kind, double z, double dz, double y,
                                   double param) noexcept nogil:
    """l'(z, y) - l'(z - dz, y) without cancellation for the smooth losses (note 003, s. 12).

    Squared losses: exactly 2 dz (dz). Logistic: l'(z) = -y sigmoid(-y z) and, exactly,
    sigmoid(a) - sigmoid(b) = sinh((a - b) / 2) / (2 cosh(a / 2) cosh(b / 2)) with
    a - b = -y dz (checked against 50-digit mpmath in the note); for |dz| > 700 sinh would
    overflow and there is no cancellation to avoid, so the difference is taken directly (cosh
    overflowing alone gives the correct limit 0). Other losses: the direct difference.
    """
    if kind == LOSS_SQUARED:
        return 2.0 * dz
    elif kind == LOSS_HALF_SQUARED:
        return dz
    elif kind == LOSS_LOGISTIC and fabs(dz) <= 700.0:
        return -y * (sinh(-0.5 * (y * dz))
                     / (2.0 * cosh(-0.5 * (y * z)) * cosh(-0.5 * (y * (z - dz)))))
    return loss_deriv(kind, z, y, param) - loss_deriv(kind, z - dz, y, param)
