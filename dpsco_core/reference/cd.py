"""NumPy twin of ``dpsco_core._kernels._cd`` (DP-CD): same entry points, same draws, same sums.

Written for clarity, not speed: one Python iteration per coordinate update. The per-sample terms
are summed in the kernel's four lanes (``_lane_sum``), so iterates agree bit for bit
wherever NumPy's elementwise functions round like the C library's (always for the squared
losses; ``exp`` may differ in the last bit on CPUs where NumPy uses its own SIMD ``exp``).
float32 X or CSC data is taken as is: every product with a float64 array upcasts it exactly, as
the kernel does on load.
"""

import numpy as np

from . import loss
from ..penalties import (PENALTY_BOX, PENALTY_ELASTIC_NET, PENALTY_L1, PENALTY_L2,
                         PENALTY_NONE)



def _loss_deriv(kind, z, y, param):
    """d l / dz, elementwise: the loss twin's formulas (``reference.loss``, ``_loss.pxd``)."""
    out = np.empty(z.shape[0])
    loss.loss_derivs(np.ascontiguousarray(z), np.ascontiguousarray(y), kind, param, out, 1)
    return out


def _lane_sum(terms):
    """The kernel's summation: term t to lane t mod 4, lanes left to right, (a0+a1)+(a2+a3)."""
    # Each lane starts from +0.0 as in the kernel (a cumsum starting from its first term would
    # keep a -0.0 that the kernel's 0.0 + (-0.0) turns into +0.0).
    lanes = [float(np.cumsum(np.concatenate(([0.0], terms[lane::4])))[-1]) for lane in range(4)]
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


def _prox_scalar(kind, u, step, p1, p2):
    if kind == PENALTY_NONE:
        return u
    if kind == PENALTY_L1:
        return np.sign(u) * max(abs(u) - step * p1, 0.0)
    if kind == PENALTY_L2:
        return u / (1.0 + step * p1)
    if kind == PENALTY_ELASTIC_NET:
        return np.sign(u) * max(abs(u) - step * p1, 0.0) / (1.0 + step * p2)
    if kind == PENALTY_BOX:
        return min(max(u, p1), p2)
    raise ValueError(f"unknown penalty kind {kind}")


class _Columns:
    """Column access for dense Fortran data or CSC arrays: (row indices, values) of column j."""

    def __init__(self, n, p, dense=None, data=None, indices=None, indptr=None):
        self.n, self.p = n, p
        self.dense, self.data, self.indices, self.indptr = dense, data, indices, indptr
        self.all_rows = np.arange(n)

    def column(self, j):
        if self.dense is not None:
            return self.all_rows, self.dense[:, j]
        lo, hi = self.indptr[j], self.indptr[j + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def margins(self, coef):
        z = np.zeros(self.n)
        for j in range(self.p):
            if coef[j] != 0.0:
                rows, vals = self.column(j)
                z[rows] += coef[j] * vals         # rows are distinct within a column
        return z


def _run(cols, y, loss_kind, loss_param, penalty_kind, p1, p2, step, clip, noise_scale, coef,
         n_outer, n_inner, average, cyclic, update_offset, rng, normaliser=None):
    n, p = cols.n, cols.p
    m = float(n if normaliser is None else normaliser)
    if not 0.0 < m < np.inf:
        raise ValueError(f"normaliser must be in (0, inf); got {normaliser!r}")
    n_clipped = 0
    update = update_offset
    z = np.zeros(n)
    for _ in range(n_outer):
        z = cols.margins(coef)
        sums = np.zeros(p)
        last = np.ones(p, dtype=np.int64)
        for k in range(n_inner):
            j = update % p if cyclic else int(rng.integers(0, p))
            update += 1
            g = noise_scale[j] * rng.standard_normal()
            rows, vals = cols.column(j)
            terms = vals * _loss_deriv(loss_kind, z[rows], y[rows], loss_param)
            over = np.abs(terms) > clip[j]
            n_clipped += int(over.sum())
            terms = np.where(over, np.where(terms > 0.0, clip[j], -clip[j]), terms)
            acc = _lane_sum(terms)
            g = acc * (1.0 / m) + g
            w_new = _prox_scalar(penalty_kind, coef[j] - step[j] * g, step[j], p1, p2)
            delta = w_new - coef[j]
            if delta == 0.0:
                continue
            z[rows] += delta * vals
            if average:
                sums[j] += coef[j] * (k + 1 - last[j])
                last[j] = k + 1
            coef[j] = w_new
        if average:
            coef[:] = (sums + coef * (n_inner + 1 - last)) / n_inner
    return n_clipped, z


def cd_dense(X, y, loss_kind, loss_param, penalty_kind, penalty_p1, penalty_p2, step, clip,
             noise_scale, coef, n_outer, n_inner, average, cyclic, update_offset, bit_generator,
             margin_out, normaliser=None):
    """Twin of the kernel's ``cd_dense``."""
    cols = _Columns(X.shape[0], X.shape[1], dense=np.asarray(X))
    n_clipped, z = _run(cols, np.asarray(y), loss_kind, loss_param, penalty_kind, penalty_p1,
                        penalty_p2, step, clip, noise_scale, coef, n_outer, n_inner, average,
                        cyclic, update_offset, np.random.Generator(bit_generator), normaliser)
    margin_out[:] = z
    return n_clipped


def cd_csc(data, indices, indptr, n_rows, y, loss_kind, loss_param, penalty_kind, penalty_p1,
           penalty_p2, step, clip, noise_scale, coef, n_outer, n_inner, average, cyclic,
           update_offset, bit_generator, margin_out, normaliser=None):
    """Twin of the kernel's ``cd_csc``."""
    cols = _Columns(n_rows, len(indptr) - 1, data=np.asarray(data), indices=np.asarray(indices),
                    indptr=np.asarray(indptr))
    n_clipped, z = _run(cols, np.asarray(y), loss_kind, loss_param, penalty_kind, penalty_p1,
                        penalty_p2, step, clip, noise_scale, coef, n_outer, n_inner, average,
                        cyclic, update_offset, np.random.Generator(bit_generator), normaliser)
    margin_out[:] = z
    return n_clipped


def cd_grid_dense(X, y, loss_kind, loss_param, penalty_kind, penalty_p1, penalty_p2, step, clip,
                  noise_scale, coef, n_outer, n_inner, average, cyclic, bit_generators,
                  n_clipped_out, n_threads, normaliser=None):
    """Twin of the kernel's ``cd_grid_dense``: the runs one after the other."""
    margin = np.empty(X.shape[0])
    for r, bit_generator in enumerate(bit_generators):
        n_clipped_out[r] = cd_dense(X, y, loss_kind, loss_param, penalty_kind, penalty_p1,
                                    penalty_p2, step[r], clip[r], noise_scale[r], coef[r],
                                    n_outer, n_inner, average, cyclic, 0, bit_generator, margin,
                                    normaliser)


def cd_grid_csc(data, indices, indptr, n_rows, y, loss_kind, loss_param, penalty_kind,
                penalty_p1, penalty_p2, step, clip, noise_scale, coef, n_outer, n_inner,
                average, cyclic, bit_generators, n_clipped_out, n_threads, normaliser=None):
    """Twin of the kernel's ``cd_grid_csc``."""
    margin = np.empty(n_rows)
    for r, bit_generator in enumerate(bit_generators):
        n_clipped_out[r] = cd_csc(data, indices, indptr, n_rows, y, loss_kind, loss_param,
                                  penalty_kind, penalty_p1, penalty_p2, step[r], clip[r],
                                  noise_scale[r], coef[r], n_outer, n_inner, average, cyclic,
                                  0, bit_generator, margin, normaliser)
