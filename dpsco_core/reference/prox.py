"""NumPy twin of ``dpsco_core._kernels._prox``: vectorized prox and Euclidean projections.

``prox_vector`` evaluates the same formulas, operation for operation, as the compiled scalar
prox (``src_cython/_prox.pxd``), so the two agree bitwise. The l1-ball and simplex projections
are the sort-based O(d log d) algorithm of Duchi et al. (2008), an independent check of the
kernel's Condat algorithm (agreement to rounding, not bitwise).
"""

import numpy as np

#: Coordinates per chunk and parallel threshold of the kernel (no effect on results).
CHUNK_SIZE = 16384
PARALLEL_THRESHOLD = 1048576
NONE = 0
L1 = 1
L2 = 2
ELASTIC_NET = 3
BOX = 4


def _soft_threshold(u, threshold):
    return np.sign(u) * np.maximum(np.abs(u) - threshold, 0.0)


def prox_vector(u, step, kind, p1, p2, out, n_threads):
    """``out[i] = prox_{step_i psi}(u[i])``; ``step`` of length d or 1. Returns None."""
    d = u.shape[0]
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if step.shape[0] not in (1, d):
        raise ValueError(f"step must have length 1 or {d}; got {step.shape[0]}")
    t = step if step.shape[0] == d else step[0]
    if kind == NONE:
        out[:] = u
    elif kind == L1:
        out[:] = _soft_threshold(u, t * p1)
    elif kind == L2:
        out[:] = u / (1.0 + t * p1)
    elif kind == ELASTIC_NET:
        out[:] = _soft_threshold(u, t * p1) / (1.0 + t * p2)
    elif kind == BOX:
        out[:] = np.clip(u, p1, p2)
    else:
        raise ValueError(f"unknown penalty kind {kind}")


def project_l2_ball(v, center, radius, out, n_threads):
    """``out = c + (v - c) min(1, radius / ||v - c||_2)``; ``v`` itself when inside.

    Returns ``||v - c||_2``, as the kernel does."""
    d = v.shape[0]
    if out.shape[0] != d:
        raise ValueError(f"out must have length {d}; got {out.shape[0]}")
    if center.shape[0] not in (0, d):
        raise ValueError(f"center must have length 0 or {d}; got {center.shape[0]}")
    diff = v - center if center.shape[0] else v
    m = np.max(np.abs(diff)) if d else 0.0
    dist = m * np.sqrt(np.dot(diff / m, diff / m)) if m > 0 else 0.0   # scaled: no overflow
    if dist <= radius:
        out[:] = v
    elif center.shape[0]:
        out[:] = center + (v - center) * (radius / dist)
    else:
        out[:] = v * (radius / dist)
    return float(dist)


def _simplex_threshold(y, a):
    """tau with sum(max(y - tau, 0)) = a > 0, by sorting (Duchi et al. 2008, Figure 1)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u)
    k = np.arange(1, y.size + 1)
    support = np.flatnonzero(u - (css - a) / k > 0)
    rho = support[-1] if support.size else 0     # empty only by rounding (a << max y)
    return (css[rho] - a) / (rho + 1)


def _check_out(v, out):
    if out.shape[0] != v.shape[0]:
        raise ValueError(f"out must have length {v.shape[0]}; got {out.shape[0]}")


def project_l1_ball(v, radius, out):
    """``out = argmin_{||x||_1 <= radius} ||x - v||_2`` by sorting |v|.

    Mirrors the compiled kernel bit for bit, including its range: when ``max |v|`` exceeds the
    radius by more than about ``2**52`` the threshold ``v_i - theta`` cancels (``[1e16, 0]``
    gives ``[0, 0]``). The public :mod:`dpsco_core.projections` functions detect such inputs and
    take an exact path (tested against mpmath over the whole double range); use those.
    """
    _check_out(v, out)
    if v.shape[0] == 0:
        return
    y = np.abs(v)
    if y.sum() <= radius:
        out[:] = v
    elif radius == 0.0:
        out[:] = 0.0
    else:
        out[:] = _soft_threshold(v, _simplex_threshold(y, radius))


def project_simplex(v, total, out):
    """``out = argmin {||x - v||_2 : x >= 0, sum(x) = total}`` by sorting v.

    Mirrors the compiled kernel bit for bit, including its range: when ``max |v|`` exceeds the
    radius by more than about ``2**52`` the threshold ``v_i - theta`` cancels (``[1e16, 0]``
    gives ``[0, 0]``). The public :mod:`dpsco_core.projections` functions detect such inputs and
    take an exact path (tested against mpmath over the whole double range); use those.
    """
    _check_out(v, out)
    d = v.shape[0]
    if d == 0:
        return
    if total == 0.0:
        out[:] = 0.0
    elif v.min() >= 0.0 and abs(v.sum() - total) <= d * np.finfo(float).eps * total:
        out[:] = v
    else:
        out[:] = np.maximum(v - _simplex_threshold(v, total), 0.0)
