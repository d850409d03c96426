"""NumPy twin of ``dpsco_core._kernels._frank_wolfe`` (same entry points, arguments, returns).

Margins use the kernel's four-lane summation (``np.cumsum`` per lane); the batch sum adds the
rows in batch order (one vectorized ``+=`` per row), the kernel's per-coordinate order; the
selection builds the flattened candidate scores and calls the report-noisy-max twin, whose
blocks of ``BLOCK_SIZE`` candidates are the kernel's. Outputs are bitwise the kernel's.
``vr_gradient_rnm_signs`` unpacks the sign bits to the +-1 matrix and calls
``vr_gradient_rnm`` (the kernel skips zero terms of the margins, which is exact).
"""

import numpy as np

from .cd import _loss_deriv
from .noisy_max import BLOCK_SIZE, report_noisy_max

DOMAIN_L1_BALL = 0
DOMAIN_SIMPLEX = 1
DOMAIN_NONE = 2
FW_BLOCK_SIZE = BLOCK_SIZE
ACC_CHUNK = 1024


def _dot4(A, w):
    """Row-wise <a, w> with the kernel's lanes: lane k = left-to-right sum of j = k mod 4."""
    P = A * w
    lanes = [np.cumsum(P[:, k::4], axis=1)[:, -1] if P[:, k::4].shape[1] else
             np.zeros(P.shape[0]) for k in range(4)]
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


def vr_gradient_rnm(X, y, rows, loss_kind, loss_param, row_clip, w, alpha, w_prev, alpha_prev,
                    v_prev, correction, domain, radius, scale, kind, bit_generators, n_threads,
                    resid, v_out):
    """One leaf of Algorithm 3: the estimate ``v`` into ``v_out`` and the selected vertex."""
    rows = np.asarray(rows)
    A = X[rows]
    c = row_clip[rows]
    g = np.clip(_loss_deriv(loss_kind, alpha * _dot4(A, w), y[rows], loss_param), -c, c)
    if correction:
        g = g - np.clip(_loss_deriv(loss_kind, alpha_prev * _dot4(A, w_prev), y[rows],
                                    loss_param), -c, c)
    resid[:] = g
    acc = np.zeros(X.shape[1])
    for t in range(rows.size):
        acc += g[t] * A[t]
    v = v_prev + acc * (1.0 / rows.size) if correction else acc * (1.0 / rows.size)
    v_out[:] = v
    if domain == DOMAIN_NONE:
        return -1, 0
    s = radius * v
    if domain == DOMAIN_L1_BALL:
        scores = np.empty(2 * s.size)
        scores[0::2] = -s
        scores[1::2] = s
    else:
        scores = -s
    if np.all(np.isnan(scores)) or (scale == 0.0 and not np.any(scores > -np.inf)):
        # the kernel's strict ">" from -inf selects nothing: it raises (never index -1)
        raise ValueError("report-noisy-max selected no vertex: every noisy score is NaN or "
                         "-inf (the noise scale or the gradient estimate is not finite).")
    if scale > 0.0:
        cand, _ = report_noisy_max(scores, scale, kind, bit_generators, n_threads)
    else:
        # NaN scores never win (the kernel compares with strict ">"); ties: the lowest index
        cand = int(np.argmax(np.where(np.isnan(scores), -np.inf, scores)))
    if domain == DOMAIN_L1_BALL:
        return cand // 2, (1 if cand % 2 == 0 else -1)
    return cand, 1


def unpack_signs(signs, n_features):
    """The +-1 matrix of packed sign rows: entry j of row t is +1 iff bit ``j % 64`` of word
    ``j // 64`` is set (the layout of ``vr_gradient_rnm_signs``)."""
    signs = np.ascontiguousarray(signs, dtype="<u8")      # bytes in bit order on any host
    bits = np.unpackbits(signs.view(np.uint8), axis=1, bitorder="little")[:, :n_features]
    return bits.astype(np.float64) * 2.0 - 1.0


def vr_gradient_rnm_signs(signs, n_features, y, loss_kind, loss_param, clip, w, alpha, w_prev,
                          alpha_prev, v_prev, correction, domain, radius, scale, kind,
                          bit_generators, n_threads, resid, v_out):
    """``vr_gradient_rnm`` on the unpacked +-1 rows (the kernel is bitwise that)."""
    if signs.shape[1] != -(-n_features // 64):
        raise ValueError("signs must have ceil(n_features / 64) words per row")
    X = unpack_signs(signs, n_features)
    m = X.shape[0]
    return vr_gradient_rnm(X, np.asarray(y), np.arange(m), loss_kind, loss_param,
                           np.full(m, float(clip)), w, alpha, w_prev, alpha_prev, v_prev,
                           correction, domain, radius, scale, kind, bit_generators, n_threads,
                           resid, v_out)


def lazy_fw_step(w, alpha, coordinate, value, eta):
    """``x <- (1 - eta) x + eta value e_coordinate`` on ``x = alpha w``; return alpha."""
    if eta >= 1.0:
        w[:] = 0.0
        w[coordinate] = value
        return 1.0
    alpha = (1.0 - eta) * alpha
    w[coordinate] = w[coordinate] + eta * value / alpha
    if alpha < 1e-100:
        w *= alpha
        alpha = 1.0
    return alpha


def row_max_abs(X, n_threads, out):
    """``np.abs(X).max(axis=1)`` into ``out`` (the maximum is exact: bitwise the kernel's)."""
    out[:] = np.abs(X).max(axis=1) if X.shape[1] else 0.0
    return out
