# The one scalar prox of dpsco-core: every kernel that applies a separable penalty (coordinate
# descent, batch proximal gradient, mirror descent) cimports it from here, absolute cimport:
#
#     from _prox cimport PenaltyKind, prox_scalar, penalty_scalar
#
# Codes and parameters match dpsco_core.penalties (PENALTY_* and Penalty.params); never
# renumber. step is the prox step t > 0 (DP-CD: t_j = gamma / M_j); prox_t(u) =
# argmin_w (w - u)^2 / 2 + t psi_j(w).
#
# Rounding: each formula is written as the NumPy twin (dpsco_core.reference.prox) evaluates it,
# operation for operation, so kernel and twin agree bitwise (setup.py turns FMA contraction off).
# NaN in u propagates (as in NumPy) instead of being thresholded to 0.

from libc.math cimport INFINITY, fabs

cdef enum PenaltyKind:
    PENALTY_NONE = 0
    PENALTY_L1 = 1           # p1 = lam:           prox(u) = sign(u) max(|u| - step*lam, 0)
    PENALTY_L2 = 2           # p1 = lam:           prox(u) = u / (1 + step*lam)
    PENALTY_ELASTIC_NET = 3  # p1 = l1, p2 = l2:   soft-threshold at step*l1, then / (1 + step*l2)
    PENALTY_BOX = 4          # p1 = lower, p2 = upper: clip(u, lower, upper)


cdef inline double _soft_threshold(double u, double threshold) noexcept nogil:
    """sign(u) * max(|u| - threshold, 0), exactly as np.sign(u) * np.maximum(np.abs(u) - t, 0).

    Same operations, so the same bits, signed zeros included: sign(-0.0) = +0.0, a negative u
    below the threshold gives -1 * 0 = -0.0, and a NaN (u NaN, or inf - inf) propagates through
    the max as in np.maximum. Branch-free: the signs of u are coin flips for the CPU.
    """
    cdef double r = fabs(u) - threshold
    cdef double m = r if not (r <= 0.0) else 0.0     # np.maximum(r, 0): NaN stays NaN
    cdef double s = <double> (u > 0.0) - <double> (u < 0.0)   # np.sign, NaN handled by m
    return s * m


cdef inline double _clip(double u, double lower, double upper) noexcept nogil:
    """min(max(u, lower), upper); NaN passes through (as np.clip)."""
    if u < lower:
        return lower
    if u > upper:
        return upper
    return u


cdef inline double prox_scalar(int kind, double u, double step, double p1,
                               double p2) noexcept nogil:
    """prox_{step * psi_j}(u) for the penalty ``kind`` with parameters (p1, p2).

    Unknown kinds return u (the identity); entry points reject them before any loop.
    """
    if kind == PENALTY_L1:
        return _soft_threshold(u, step * p1)
    if kind == PENALTY_L2:
        return u / (1.0 + step * p1)
    if kind == PENALTY_ELASTIC_NET:
        return _soft_threshold(u, step * p1) / (1.0 + step * p2)
    if kind == PENALTY_BOX:
        return _clip(u, p1, p2)
    return u


cdef inline double penalty_scalar(int kind, double w, double p1, double p2) noexcept nogil:
    """psi_j(w): lam |w|, (lam / 2) w^2, l1 |w| + (l2 / 2) w^2, 0 or +inf (box), 0 (none)."""
    if kind == PENALTY_L1:
        return p1 * fabs(w)
    if kind == PENALTY_L2:
        return 0.5 * p1 * w * w
    if kind == PENALTY_ELASTIC_NET:
        return p1 * fabs(w) + 0.5 * p2 * w * w
    if kind == PENALTY_BOX:
        if w >= p1 and w <= p2:
            return 0.0
        return INFINITY
    return 0.0
