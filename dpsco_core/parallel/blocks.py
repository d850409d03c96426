r"""Row blocks and the per-block operations of the blocked executors (issue 21).

The training data are cut into row blocks ``X[o_b : o_b + n_b]``; a block lives where it is
used (in the client's memory for :class:`~dpsco_core.parallel.dask_executor.BlockExecutor`, on
a Dask worker for :class:`~dpsco_core.parallel.dask_executor.DaskExecutor`) and every function
here runs on one block, with the compiled kernels, and returns a *partial*: a clipped sum, a
count, a loss sum. The client adds the partials **in block order** (starting from +0.0), so
both executors give bitwise the same result for the same blocking and seed.

Nothing here adds privacy noise, and no function receives the client's noise stream: the
workers see the data (they hold it) and, for Poisson sampling, the batches of their own block,
drawn from per-(step, block) streams whose entropy is a one-way function (SHA-256) of the
client's sampling stream (:func:`worker_entropy`), never of its noise stream.

The functions are module-level (picklable by reference) and stateless, except the DP-CD
margins (:func:`cd_column_sum`), which stay on the worker between the updates of an outer
iteration and are rebuilt exactly (same operations, same order) from the client's log when a
worker has lost them.
"""

import hashlib
import threading
import math

import numpy as np
import scipy.sparse as sp

from .._kernels import _batch, _loss
from ..losses import LOSS_HINGE, LOSS_LOGISTIC

__all__ = ["Block", "make_block", "block_shape", "load_npy_block", "load_npy_rows",
           "load_npz_block", "load_parquet_block", "synthetic_block", "poisson_rows",
           "worker_entropy",
           "grad_sum", "diff_sum", "loss_sum", "gram", "column_sq_norms", "max_row_norm",
           "column_max_abs", "clipped_sq_sums",
           "cd_column_sum", "cd_release", "LOST"]

#: Returned by :func:`cd_column_sum` when this worker does not hold the block's margins.
LOST = "lost"

# DP-CD margins kept between updates: {(token, block index): [outer, applied, z]}.
_CD_STATE: dict = {}
_CD_LOCK = threading.Lock()


class Block:
    """One row block: float64 ``X`` (n_b, p), C-ordered or SciPy CSR with sorted, unique
    indices; labels ``y`` in the kernels' encoding and the row norms ``row_norms``; a column
    copy for DP-CD (Fortran order, or CSC) is made on first use.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_b, p)
    y : ndarray of shape (n_b,)
    """

    def __init__(self, X, y):
        self.X = X
        self.y = y
        self.is_sparse = sp.issparse(X)
        if self.is_sparse:      # as Problem._row_sq_norms computes them
            self.row_norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1),
                                                dtype=np.float64).ravel())
        else:
            self.row_norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        self._X_f = None

    @property
    def shape(self):
        """(n_b, p)."""
        return self.X.shape

    def X_fortran(self):
        """Column-major copy of X (DP-CD reads columns): Fortran-ordered, or CSC for a CSR
        block; cached on the block."""
        if self._X_f is None:
            if self.is_sparse:
                self._X_f = _canonical(self.X.tocsc())
            else:
                self._X_f = np.asfortranarray(self.X)
        return self._X_f

    def column(self, j):
        """``(rows, values)`` of column j: the nonzero rows of a sparse block, every row
        (``slice(None)``) of a dense one."""
        X_f = self.X_fortran()
        if self.is_sparse:
            lo, hi = X_f.indptr[j], X_f.indptr[j + 1]
            return X_f.indices[lo:hi], X_f.data[lo:hi]
        return slice(None), X_f[:, j]

    def __getstate__(self):       # the column copy is a cache: never shipped
        return {"X": self.X, "y": self.y, "is_sparse": self.is_sparse,
                "row_norms": self.row_norms, "_X_f": None}


def _canonical(X):
    # sorted, unique indices, as the CSR kernels read them; a copy only when needed (never
    # writing to the caller's buffers)
    if X.has_canonical_format:
        return X
    X = X.copy()
    X.sum_duplicates()
    X.sort_indices()
    return X


def make_block(X, y, loss, bounds=None):
    """Validate one block as :class:`~dpsco_core.Problem` does the whole X (float64, finite,
    labels in the loss's encoding) and map it onto the public ``bounds`` record by record.

    Parameters
    ----------
    X : array-like of shape (n_b, p)
    y : array-like of shape (n_b,)
    loss : Loss
    bounds : PublicBounds or None

    Returns
    -------
    Block
    """
    if sp.issparse(X):          # CSR, float64, sorted unique indices (the CSR kernels)
        X = _canonical(sp.csr_matrix(X, dtype=np.float64))
        finite = np.isfinite(X.data).all()
    else:
        X = np.ascontiguousarray(np.asarray(X), dtype=np.float64)
        finite = None
    y = np.ascontiguousarray(np.asarray(y), dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"a row block of X must be 2-dimensional and non-empty; got shape "
                         f"{X.shape}.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"a row block of y must have one entry per row of its X block "
                         f"({X.shape[0]}); got {y.shape[0]}.")
    if finite is None:
        finite = np.isfinite(X).all()
    if not (finite and np.isfinite(y).all()):
        raise ValueError("X and y must contain only finite values; a row block has NaN or inf.")
    y = loss.check_labels(y, "y")
    if bounds is not None:
        X, y = bounds.enforce(X, y)
        X = _canonical(X.tocsr()) if sp.issparse(X) else np.ascontiguousarray(X)
        y = np.ascontiguousarray(y)
    return Block(X, y)


def block_shape(block):
    """(n_b, p) of a block (metadata, as ``X.shape`` is for an in-memory problem)."""
    return tuple(int(s) for s in block.shape)


# --------------------------------------------------------------------------------- loaders

def load_npy_block(x_path, y_path, loss, bounds=None):
    """A block from one ``.npy`` file of features and one of labels (read where it runs)."""
    return make_block(np.load(x_path, mmap_mode="r"), np.load(y_path, mmap_mode="r"), loss,
                      bounds)


def load_npy_rows(x_path, y_path, start, stop, loss, bounds=None):
    """Rows ``start:stop`` of memory-mapped ``.npy`` files (only those rows are read)."""
    X = np.load(x_path, mmap_mode="r")
    y = np.load(y_path, mmap_mode="r")
    return make_block(X[start:stop], y[start:stop], loss, bounds)


def load_npz_block(x_path, y_path, loss, bounds=None):
    """A sparse block from one SciPy ``.npz`` file (``scipy.sparse.save_npz``; converted to
    CSR with sorted, unique indices if stored otherwise) and one ``.npy`` file of labels,
    read where it runs."""
    return make_block(sp.load_npz(x_path).tocsr(), np.load(y_path, mmap_mode="r"), loss, bounds)


def load_parquet_block(path, label, features, loss, bounds=None):
    """A block from one Parquet file: the ``features`` columns (all others than ``label``
    when None) and the ``label`` column."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    table = pq.read_table(path)
    names = [c for c in table.column_names if c != label] if features is None else features
    X = np.column_stack([table.column(c).to_numpy(zero_copy_only=False) for c in names])
    return make_block(X, table.column(label).to_numpy(zero_copy_only=False), loss, bounds)


def synthetic_block(seed, index, rows, n_features, loss, noise=0.1):
    """Block ``index`` of a synthetic linear problem, generated where it runs.

    Rows ``x ~ N(0, I_p / p)``, the true coefficients ``w* ~ N(0, I_p)`` (from ``seed`` alone,
    the same in every block), ``y = <x, w*> + noise N(0, 1)`` for regression losses and
    ``sign(<x, w*> + noise N(0, 1))`` for classification ones; block ``index`` draws from the
    ``index``-th child of ``SeedSequence(seed)``, so a block is the same wherever it is made.
    """
    from .._random import BIT_GENERATOR, child_seed_sequences

    root = np.random.SeedSequence(seed)
    w = np.random.Generator(BIT_GENERATOR(child_seed_sequences(root, 1)[0])).standard_normal(
        n_features)
    gen = np.random.Generator(BIT_GENERATOR(child_seed_sequences(root, 1, offset=1 + index)[0]))
    X = gen.standard_normal((rows, n_features)) / math.sqrt(n_features)
    y = X @ w + noise * gen.standard_normal(rows)
    if loss.kind in (LOSS_LOGISTIC, LOSS_HINGE):
        y = np.where(y >= 0.0, 1.0, -1.0)
    return make_block(X, y, loss)


# --------------------------------------------------------------------------------- sampling

def worker_entropy(sampling_seed_seq):
    """Entropy of the workers' sampling streams: SHA-256 of the client's sampling stream.

    The hash is one-way, so a worker that sees it learns nothing of the client's root seed
    (shared by the noise stream's seed sequence); it is a function of the seed, so a run is
    reproducible.
    """
    state = sampling_seed_seq.generate_state(8, np.uint32).tobytes()
    digest = hashlib.sha256(b"dpsco-core/row-block-sampling/" + state).digest()
    return int.from_bytes(digest, "little")


def poisson_rows(entropy, step, index, n_rows, q):
    """The Poisson(q) batch of block ``index`` at ``step``: each of its ``n_rows`` rows joins
    independently with probability q (geometric gaps, as the ``_batch`` kernel draws them),
    from ``PCG64DXSM(SeedSequence(entropy, spawn_key=(step, index)))``. Sorted local rows."""
    if q >= 1.0:
        return np.arange(n_rows, dtype=np.int64)
    from .._random import BIT_GENERATOR

    gen = np.random.Generator(BIT_GENERATOR(np.random.SeedSequence(entropy,
                                                                   spawn_key=(step, index))))
    chunk = int(q * n_rows + 4.0 * math.sqrt(q * n_rows) + 16)
    pos, parts = -1, []
    while True:
        cum = pos + np.cumsum(gen.geometric(q, size=chunk))
        k = int(np.searchsorted(cum, n_rows))      # first position at or past the end
        parts.append(cum[:k])
        if k < chunk:
            return np.concatenate(parts).astype(np.int64, copy=False)
        pos = int(cum[-1])


def _rows(block, index, spec):
    if spec[0] == "poisson":
        _, entropy, step, q = spec
        return poisson_rows(entropy, step, index, block.shape[0], q)
    return np.ascontiguousarray(spec[1], dtype=np.int64)


# --------------------------------------------------------------------------------- operations

def grad_sum(block, index, coef, spec, loss_kind, loss_param, clip, n_threads=1):
    """``(S_b, n_clipped, n_rows)``: the clipped per-sample gradient sum of the block's batch
    rows (``_batch.batch_grad_dense``). ``spec``: ``("poisson", entropy, step, q)`` or
    ``("rows", local_rows)``."""
    rows = _rows(block, index, spec)
    out = np.empty(block.shape[1])
    if block.is_sparse:
        X = block.X
        clipped = _batch.batch_grad_csr(X.data, X.indices, X.indptr, block.y, rows, coef,
                                        block.row_norms, loss_kind, loss_param, clip, out,
                                        n_threads)
    else:
        clipped = _batch.batch_grad_dense(block.X, block.y, rows, coef, block.row_norms,
                                          loss_kind, loss_param, clip, out, n_threads)
    return out, int(clipped), int(rows.shape[0])


def diff_sum(block, rows, coef, coef_prev, eta, eta_prev, loss_kind, loss_param, clip,
             n_threads=1):
    """``(S_b, n_clipped)``: the clipped two-point differences of DP-SRGD on the block's rows
    (``_batch.batch_diff_dense``)."""
    out = np.empty(block.shape[1])
    rows = np.ascontiguousarray(rows)
    if block.is_sparse:
        X = block.X
        clipped = _batch.batch_diff_csr(X.data, X.indices, X.indptr, block.y, rows, coef,
                                        coef_prev, block.row_norms, loss_kind, loss_param, eta,
                                        eta_prev, clip, out, n_threads)
    else:
        clipped = _batch.batch_diff_dense(block.X, block.y, rows, coef, coef_prev,
                                          block.row_norms, loss_kind, loss_param, eta,
                                          eta_prev, clip, out, n_threads)
    return out, int(clipped)


def loss_sum(block, coef, loss_kind, loss_param):
    """sum_i l(<x_i, coef>, y_i) over the block (for the exact, non-private objective)."""
    z = np.ascontiguousarray(block.X @ coef)
    out = np.empty_like(z)
    _loss.loss_values(z, block.y, loss_kind, loss_param, out, 1)
    return float(np.sum(out))


def gram(block):
    """X_b^T X_b (the smoothness constant of DP-SGD's step, when read from the data)."""
    G = block.X.T @ block.X
    return G.toarray() if sp.issparse(G) else G


def column_sq_norms(block):
    """||X_b[:, j]||^2 for every j (DP-CD's coordinate smoothness, when read from the data)."""
    if block.is_sparse:
        return np.asarray(block.X.multiply(block.X).sum(axis=0), dtype=np.float64).ravel()
    return np.einsum("ij,ij->j", block.X, block.X)


def column_max_abs(block):
    """max_i |x_ij| for every j (the paper's data-dependent smoothness bounds)."""
    if block.is_sparse:
        return np.asarray(abs(block.X).max(axis=0).todense(), dtype=np.float64).ravel()
    return np.max(np.abs(block.X), axis=0)


def clipped_sq_sums(block, s_loss, b):
    """sum_i min(s_loss x_ij^2, b_j) for every j (the private smoothness release's clipped
    sums, :func:`dpsco_core.solvers.smoothness.private_coordinate_smoothness`)."""
    if block.is_sparse:
        terms = block.X_fortran().copy()
        terms.data = s_loss * terms.data ** 2
        cols = np.repeat(np.arange(block.shape[1]), np.diff(terms.indptr))
        terms.data = np.minimum(terms.data, b[cols])
        return np.asarray(terms.sum(axis=0), dtype=np.float64).ravel()
    return np.minimum(s_loss * block.X ** 2, b).sum(axis=0)


def max_row_norm(block):
    """max_i ||x_i||_2 over the block."""
    return float(np.max(block.row_norms))


# --------------------------------------------------------------------------------- DP-CD

def _margins(block, coef):
    # z = X coef column by column, as the _cd kernel's _margins: a fixed order of operations
    # (a sparse column adds to its nonzero rows only: the same values, x_ij = 0 adds +0.0)
    z = np.zeros(block.shape[0])
    for j in np.flatnonzero(coef):
        rows, values = block.column(j)
        z[rows] += coef[j] * values
    return z


def _apply(z, block, entry):
    j, delta = entry
    if delta != 0.0:
        rows, values = block.column(j)
        z[rows] += delta * values


def cd_column_sum(block, index, token, outer, k, message, j, clip_j, loss_kind, loss_param):
    r"""One DP-CD update on a block: bring the margins to update ``k`` of outer iteration
    ``outer``, then return ``(sum_i clip(x_ij l'(z_i, y_i), clip_j), n_clipped)``.

    ``message``: ``("start", coef)`` at ``k = 0`` (margins from scratch), ``("next", entry)``
    (the previous update's ``(j, delta)``) or ``("replay", coef, log)`` (margins rebuilt from
    the outer iteration's start and every ``(j, delta)`` since, in order: the same floating-
    point operations as the incremental path). Returns :data:`LOST` when this worker does not
    hold the margins at update ``k - 1`` (a new worker after a failure, or a moved task): the
    client then sends the replay.
    """
    with _CD_LOCK:      # a direct round (event loop) and a task (its thread): one at a time
        state = _cd_margins(block, (token, index), outer, k, message)
    if state is None:
        return LOST
    # the derivatives of the column's rows only (a sparse column: its nonzero rows; the
    # others' terms x_ij l' are 0, never clipped, and add nothing)
    rows, values = block.column(j)
    z = np.ascontiguousarray(state[2][rows])
    deriv = np.empty_like(z)
    _loss.loss_derivs(z, np.ascontiguousarray(block.y[rows]), loss_kind, loss_param, deriv, 1)
    terms = values * deriv
    clipped = int(np.count_nonzero(np.abs(terms) > clip_j))
    return float(np.sum(np.clip(terms, -clip_j, clip_j))), clipped


def _cd_margins(block, key, outer, k, message):
    if message[0] == "start":
        state = _CD_STATE[key] = [outer, 0, _margins(block, message[1])]
    elif message[0] == "replay":
        z = _margins(block, message[1])
        for entry in message[2]:
            _apply(z, block, entry)
        state = _CD_STATE[key] = [outer, len(message[2]), z]
    else:
        state = _CD_STATE.get(key)
        if state is None or state[0] != outer or state[1] not in (k - 1, k):
            return None
        if state[1] == k - 1:       # else: a re-run of an update already applied here
            _apply(state[2], block, message[1])
            state[1] = k
    return state


def cd_release(token):
    """Drop the DP-CD margins of run ``token`` held in this process."""
    for key in [key for key in _CD_STATE if key[0] == token]:
        del _CD_STATE[key]
