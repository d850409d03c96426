"""NumPy twin of ``dpsco_core._kernels._batch``: clipped batch gradients (one- and two-point)
and the DP-SGD loop.

Same entry points, arguments, draws and summation orders as the kernel (see its module
docstring): margins in four lanes, each block's partial sum accumulated row by row from +0.0
(``np.cumsum`` over rows), partials added in block order, Poisson batches from geometric gaps,
shuffled batches from ``Generator.permutation``, noise from ``Generator.normal``. Results agree
bitwise for the squared losses (the logistic loss goes through ``exp``, where NumPy's SIMD
version may differ from the C library's by an ulp). Dense X of any dtype and layout is taken as
is: NumPy upcasts float32 exactly in every product with a float64 vector, as the kernel's
block gather does (``tests/kernels/test_float32.py``).
"""

import numpy as np

from .loss import _deriv
from .prox import prox_vector

#: Batch rows per block and blocks per group (the kernel's ``BLOCK_SIZE``, ``GROUP_SIZE``).
BLOCK_SIZE = 256
GROUP_SIZE = 32
POISSON = 0
SHUFFLE = 1


class _DenseRows:
    def __init__(self, X):
        self.X = np.asarray(X)
        self.n, self.p = self.X.shape

    def margins(self, rows, coef):
        """<x_i, coef> for i in rows, in the kernel's lanes (term t to lane t mod 4)."""
        terms = self.X[rows] * coef
        pad = (-self.p) % 4
        if pad:
            terms = np.hstack([terms, np.zeros((len(rows), pad))])
        lanes = terms.reshape(len(rows), -1, 4)
        acc = np.zeros((len(rows), 4))
        for k in range(lanes.shape[1]):       # each lane left to right, from +0.0
            acc = acc + lanes[:, k, :]
        return (acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])

    def partial(self, rows, weights):
        """sum_t weights[t] x_{rows[t]}, accumulated row by row from +0.0."""
        contrib = weights[:, None] * self.X[rows]
        return np.cumsum(np.vstack([np.zeros(self.p), contrib]), axis=0)[-1]


class _CsrRows:
    def __init__(self, data, indices, indptr, p):
        self.data, self.indices, self.indptr = (np.asarray(data), np.asarray(indices),
                                                np.asarray(indptr))
        self.n, self.p = len(indptr) - 1, p

    def _row(self, i):
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return self.data[lo:hi], self.indices[lo:hi]

    def margins(self, rows, coef):
        out = np.empty(len(rows))
        for t, i in enumerate(rows):
            vals, cols = self._row(i)
            terms = vals * coef[cols]
            lanes = [float(np.cumsum(np.concatenate([[0.0], terms[lane::4]]))[-1])
                     for lane in range(4)]
            out[t] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
        return out

    def partial(self, rows, weights):
        out = np.zeros(self.p)
        for t, i in enumerate(rows):
            vals, cols = self._row(i)
            np.add.at(out, cols, weights[t] * vals)   # unbuffered, in order
        return out


def _deriv_diff(z, dz, y, kind, param):
    """l'(z) - l'(z - dz), as the kernel's ``loss_deriv_diff`` (stable for the smooth losses)."""
    if kind == 0:
        return 2.0 * dz
    if kind == 1:
        return dz
    direct = _deriv(z, y, kind, param) - _deriv(z - dz, y, kind, param)
    if kind != 2:
        return direct
    with np.errstate(over="ignore", invalid="ignore"):
        stable = -y * (np.sinh(-0.5 * (y * dz))
                       / (2.0 * np.cosh(-0.5 * (y * z)) * np.cosh(-0.5 * (y * (z - dz)))))
    return np.where(np.abs(dz) <= 700.0, stable, direct)


def _weights(data, block, coef, y, loss_kind, loss_param, pair):
    z = data.margins(block, coef)
    if pair is None:
        return _deriv(z, y[block], loss_kind, loss_param)
    dx, eta, eta_prev = pair
    dz = data.margins(block, dx)
    return (eta_prev * _deriv_diff(z, dz, y[block], loss_kind, loss_param)
            + (eta - eta_prev) * _deriv(z, y[block], loss_kind, loss_param))


def _clipped_sum(data, y, rows, coef, row_norms, loss_kind, loss_param, clip, pair=None):
    rows = np.asarray(rows, dtype=np.int64)
    total = np.zeros(data.p)
    n_clipped = 0
    for lo in range(0, len(rows), BLOCK_SIZE):
        block = rows[lo:lo + BLOCK_SIZE]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            weights = _weights(data, block, coef, y, loss_kind, loss_param, pair)
            norms = np.abs(weights) * row_norms[block]
            over = ~(norms <= clip)
            weights = np.where(over, weights * (clip / norms), weights)
        n_clipped += int(over.sum())
        total = total + data.partial(block, weights)
    return n_clipped, total


def _check_rows(rows, n):
    rows = np.asarray(rows)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must be in [0, {n})")


def batch_grad_dense(X, y, rows, coef, row_norms, loss_kind, loss_param, clip, sum_out,
                     n_threads):
    """Twin of the kernel's ``batch_grad_dense``."""
    data = _DenseRows(X)
    _check_rows(rows, data.n)
    n_clipped, total = _clipped_sum(data, np.asarray(y), rows, np.asarray(coef),
                                    np.asarray(row_norms), loss_kind, loss_param, clip)
    sum_out[:] = total
    return n_clipped


def batch_grad_csr(data, indices, indptr, y, rows, coef, row_norms, loss_kind, loss_param, clip,
                   sum_out, n_threads):
    """Twin of the kernel's ``batch_grad_csr``."""
    rows_data = _CsrRows(data, indices, indptr, len(coef))
    _check_rows(rows, rows_data.n)
    n_clipped, total = _clipped_sum(rows_data, np.asarray(y), rows, np.asarray(coef),
                                    np.asarray(row_norms), loss_kind, loss_param, clip)
    sum_out[:] = total
    return n_clipped


def batch_diff_dense(X, y, rows, coef, coef_prev, row_norms, loss_kind, loss_param, eta, eta_prev,
                     clip, sum_out, n_threads):
    """Twin of the kernel's ``batch_diff_dense``."""
    data = _DenseRows(X)
    _check_rows(rows, data.n)
    coef = np.asarray(coef)
    pair = (coef - np.asarray(coef_prev), eta, eta_prev)
    n_clipped, total = _clipped_sum(data, np.asarray(y), rows, coef, np.asarray(row_norms),
                                    loss_kind, loss_param, clip, pair)
    sum_out[:] = total
    return n_clipped


def batch_diff_csr(data, indices, indptr, y, rows, coef, coef_prev, row_norms, loss_kind,
                   loss_param, eta, eta_prev, clip, sum_out, n_threads):
    """Twin of the kernel's ``batch_diff_csr``."""
    rows_data = _CsrRows(data, indices, indptr, len(coef))
    _check_rows(rows, rows_data.n)
    coef = np.asarray(coef)
    pair = (coef - np.asarray(coef_prev), eta, eta_prev)
    n_clipped, total = _clipped_sum(rows_data, np.asarray(y), rows, coef, np.asarray(row_norms),
                                    loss_kind, loss_param, clip, pair)
    sum_out[:] = total
    return n_clipped


def _poisson_batch(bit_generator, n, q):
    """The kernel's geometric-gap Poisson batch, consuming exactly the kernel's draws."""
    state = bit_generator.state
    rng = np.random.Generator(bit_generator)
    gaps = np.empty(0, dtype=np.int64)
    while True:
        more = rng.geometric(q, size=max(16, int(1.25 * q * n) + 16))
        # pos < n before each gap, so capping gaps at n + 1 keeps the crossing and the cumsum
        # from overflowing (numpy returns INT64_MAX for astronomically long gaps)
        gaps = np.concatenate([gaps, np.minimum(more, n + 1)])
        pos = np.cumsum(gaps) - 1
        end = int(np.searchsorted(pos, n, side="left"))   # first position >= n
        if end < len(pos):
            break
    bit_generator.state = state
    rng.geometric(q, size=end + 1)                        # consume exactly end + 1 draws
    return pos[:end]


def _sgd(data, y, row_norms, loss_kind, loss_param, penalty_kind, p1, p2, coef, n_steps,
         sampling, sample_rate, batch_size, step, clip, noise_scale, norm, sampling_generator,
         noise_generator):
    if sampling == POISSON and not 0.0 < sample_rate <= 1.0:
        raise ValueError(f"sample_rate must be in (0, 1]; got {sample_rate}")
    if sampling == SHUFFLE and not 1 <= batch_size <= data.n:
        raise ValueError(f"batch_size must be in [1, {data.n}]; got {batch_size}")
    if sampling not in (POISSON, SHUFFLE):
        raise ValueError(f"unknown sampling {sampling}")
    y, row_norms = np.asarray(y), np.asarray(row_norms)
    noise_rng = np.random.Generator(noise_generator)
    sampling_rng = np.random.Generator(sampling_generator)
    per_epoch = data.n // batch_size if sampling == SHUFFLE else 1
    step_array = np.array([step])
    n_clipped = n_sampled = 0
    perm = None
    for k in range(n_steps):
        if sampling == POISSON:
            rows = _poisson_batch(sampling_generator, data.n, sample_rate)
        else:
            if k % per_epoch == 0:
                perm = sampling_rng.permutation(data.n)
            start = (k % per_epoch) * batch_size
            rows = perm[start:start + batch_size]
        n_sampled += len(rows)
        clipped, total = _clipped_sum(data, y, rows, coef, row_norms, loss_kind, loss_param, clip)
        n_clipped += clipped
        g = (total + noise_rng.normal(0.0, noise_scale, size=data.p)) / norm
        prox_vector(coef - step * g, step_array, penalty_kind, p1, p2, coef, 1)
    return n_clipped, n_sampled


def sgd_dense(X, y, row_norms, loss_kind, loss_param, penalty_kind, penalty_p1, penalty_p2, coef,
              n_steps, sampling, sample_rate, batch_size, step, clip, noise_scale, norm,
              sampling_generator, noise_generator, n_threads):
    """Twin of the kernel's ``sgd_dense``."""
    return _sgd(_DenseRows(X), y, row_norms, loss_kind, loss_param, penalty_kind, penalty_p1,
                penalty_p2, coef, n_steps, sampling, sample_rate, batch_size, step, clip,
                noise_scale, norm, sampling_generator, noise_generator)


def sgd_csr(data, indices, indptr, y, row_norms, loss_kind, loss_param, penalty_kind, penalty_p1,
            penalty_p2, coef, n_steps, sampling, sample_rate, batch_size, step, clip, noise_scale,
            norm, sampling_generator, noise_generator, n_threads):
    """Twin of the kernel's ``sgd_csr``."""
    return _sgd(_CsrRows(data, indices, indptr, len(coef)), y, row_norms, loss_kind, loss_param,
                penalty_kind, penalty_p1, penalty_p2, coef, n_steps, sampling, sample_rate,
                batch_size, step, clip, noise_scale, norm, sampling_generator, noise_generator)
