r"""Row-blocked execution of the solvers' batched operations (issue 21), in process.

:class:`BlockExecutor` cuts the data in row blocks and runs every batched operation block by
block (:mod:`dpsco_core.parallel.blocks`), adding the partials in block order on the client.
:class:`~dpsco_core.parallel.dask_executor.DaskExecutor` is the same class with the blocks on
Dask workers: it overrides only where a block is kept and how a list of per-block calls runs,
so the two give **bitwise the same result** for the same blocking and seed (the in-process one
is the exact reference of the distributed one).

Operations (each one round trip of the distributed executor); X is dense or CSR (a sparse X
is cut into CSR row blocks and runs through the CSR kernels):

* :meth:`BlockExecutor.grad_sum`: clipped per-sample gradient sums at an iterate over a batch
  (DP-SGD, and full-batch DP-GD: ``dp_sgd(..., sample_rate=1.0)``);
* :meth:`BlockExecutor.diff_sum`: DP-SRGD's clipped two-point differences;
* ``grad_batch(oracle, Z, random_state)``: ReSQue query batches (the interface of
  :class:`~dpsco_core.parallel.executors.SerialExecutor`, the same ``QUERY_CHUNK`` seeding);
* :meth:`BlockExecutor.map_runs`: independent runs (DP-CD grid configurations, MLMC copies);
* DP-CD's coordinate update: one scalar per block, the margins kept with the block.

Privacy: noise is drawn on the client, from the solver's noise stream, after the partials are
added; the workers never receive that stream. Every noisy sum is divided by the solver's
public normaliser (:func:`~dpsco_core.solvers._common.normaliser`: the dataset's n under
replace-one and zero-out, where it is public, ``public_n`` under add/remove-one), never by a
count returned by the blocks (the batch sizes the blocks return feed only the non-private
diagnostics that the solvers already list as such).

Solvers take ``executor=`` (default None: the in-process fused kernels, unchanged). With an
executor, the problem is bound to it (:meth:`BlockExecutor.bind`): a :class:`~dpsco_core.Problem`
is cut into blocks of ``block_rows`` rows once (cached per problem), and a
:class:`BlockedProblem` made by :meth:`BlockExecutor.problem` (from an ndarray, a row-chunked
``dask.array``, ``.npy`` files or Parquet files) already is.
"""

import itertools
import math
import os
import time
import weakref

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .._config import SERIAL_WORK, effective_n_threads
from .._kernels import _prox
from ..problems import Problem, _largest_eigenvalue
from ..public_bounds import check_public_bounds
from ..losses import check_loss
from ..penalties import check_penalty
from . import blocks as _blocks
from .executors import SerialExecutor

__all__ = ["BlockExecutor", "BlockedProblem", "DEFAULT_BLOCK_ROWS", "resolve_executor"]

#: Rows per block when a Problem in memory is cut by an executor.
DEFAULT_BLOCK_ROWS = 1 << 16

_TOKENS = itertools.count()


class BlockedProblem(Problem):
    """A :class:`~dpsco_core.Problem` whose X lives in row blocks held by an executor.

    Made by :meth:`BlockExecutor.problem` or :meth:`BlockExecutor.bind`; accepted by
    ``dp_sgd``, ``dp_srgd`` and ``dp_cd`` (``executor=`` may then be omitted). The objective and
    the data constants (smoothness, column norms) are reductions over the blocks; X itself is
    never gathered on the client, so the layout accessors (``X_c``, ``margins``, ...) raise.

    Parameters
    ----------
    executor : BlockExecutor
        The executor holding the blocks.
    handles : list
        One handle per block, in row order.
    shapes : list of tuple
        ``(n_b, p)`` of each block.
    loss : Loss
    penalty : Penalty
    public_bounds : PublicBounds or None
        Public bounds the blocks were mapped onto.

    Attributes
    ----------
    executor : BlockExecutor
    blocks : list
        The executor's handles (Blocks in process, Futures on a cluster), in row order.
    block_sizes : ndarray of int64
        Rows per block; ``offsets`` their starts (length n_blocks + 1).
    """

    def __init__(self, executor, handles, shapes, loss, penalty, public_bounds):
        p = {s[1] for s in shapes}
        if len(p) != 1:
            raise ValueError(f"every row block must have the same number of columns; got "
                             f"{sorted(p)}.")
        self.executor = executor
        self.blocks = list(handles)
        self.block_sizes = np.array([s[0] for s in shapes], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.block_sizes)])
        self.loss = loss
        self.penalty = penalty
        self.public_bounds = public_bounds
        self.n_samples, self.n_features = int(self.offsets[-1]), p.pop()
        self.is_sparse = False      # no X on the client (its blocks may be CSR: blocks.Block)
        self.X = self.y = None
        self._cache = {}

    def __repr__(self):
        return (f"BlockedProblem(n_samples={self.n_samples}, n_features={self.n_features}, "
                f"n_blocks={len(self.blocks)}, loss={self.loss!r}, penalty={self.penalty!r})")

    def _not_here(self, *args, **kwargs):
        """Not available: X lives in row blocks held by the executor (raises TypeError).

        Parameters
        ----------
        *args, **kwargs
            Ignored.
        """
        raise TypeError("the X of a BlockedProblem lives in row blocks held by its executor "
                        "and is never gathered on the client; use the solvers with it.")

    X_fortran = X_c = X_csc = X_csr = margins = gradient = per_sample_gradients = _not_here
    coordinate_gradient = row_norms = solve = _not_here

    def smooth_objective(self, w):
        w = self._check_w(w)
        ex = self.executor
        parts = ex._map(_blocks.loss_sum, self.blocks,
                        [(w, self.loss.kind, self.loss.param)] * len(self.blocks))
        return math.fsum(parts) / self.n_samples

    def objective(self, w):
        return self.smooth_objective(w) + self.penalty.value(self._check_w(w))

    def _column_sq_norms(self):
        return self._cached("column_sq_norms", lambda: _reduce(self.executor._map(
            _blocks.column_sq_norms, self.blocks, [()] * len(self.blocks))))

    def _lambda_max(self):
        return self._cached("lambda_max", lambda: _largest_eigenvalue(_reduce(
            self.executor._map(_blocks.gram, self.blocks, [()] * len(self.blocks)))))

    def _column_max_abs(self):
        return self._cached("column_max_abs", lambda: np.max(self.executor._map(
            _blocks.column_max_abs, self.blocks, [()] * len(self.blocks)), axis=0))

    def _clipped_sq_sums(self, s_loss, b):
        """sum_i min(s_loss x_ij^2, b_j), the blocks' sums added in block order (the private
        smoothness release of ``dp_cd(..., smoothness="private")``)."""
        b = np.asarray(b, dtype=np.float64)
        return _reduce(self.executor._map(_blocks.clipped_sq_sums, self.blocks,
                                          [(s_loss, b)] * len(self.blocks)))

    def lipschitz(self):
        lip = self._loss_lipschitz("a Lipschitz constant")
        return self._cached("lipschitz", lambda: lip * max(self.executor._map(
            _blocks.max_row_norm, self.blocks, [()] * len(self.blocks))))

    def split_rows(self, rows):
        """Global row indices -> per-block local indices (the batch order kept in a block).

        Parameters
        ----------
        rows : array-like of int
            Row indices in [0, n_samples).

        Returns
        -------
        list of ndarray
            The local indices of each block's rows, in their order in ``rows``.
        """
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.searchsorted(self.offsets, rows, side="right") - 1
        order = np.argsort(ids, kind="stable")
        counts = np.bincount(ids, minlength=len(self.blocks))
        local = rows[order] - self.offsets[ids[order]]
        return np.split(local, np.cumsum(counts)[:-1])


def _reduce(parts):
    """Sum of the partials in block order, from +0.0: the same bits on every executor."""
    total = np.zeros(np.shape(parts[0]))
    for part in parts:
        total += part
    return total


def _grad_reduce(parts):
    """``(S, n_clipped, n_rows)`` of :func:`~dpsco_core.parallel.blocks.grad_sum` partials."""
    return (_reduce([s for s, _, _ in parts]), sum(c for _, c, _ in parts),
            sum(m for _, _, m in parts))


def resolve_executor(executor, problem):
    """The executor a solver runs with: ``executor``, else the one a :class:`BlockedProblem`
    is bound to, else None (the in-process fused kernels)."""
    if executor is None and isinstance(problem, BlockedProblem):
        return problem.executor
    if executor is not None and not isinstance(executor, BlockExecutor):
        raise TypeError(f"executor must be None, a BlockExecutor or a DaskExecutor; got "
                        f"{type(executor).__name__}.")
    return executor


def _prox_vector(penalty, u, step):
    if penalty.kind is None or not np.all(np.isfinite(u)):
        return penalty.prox(u, step) if np.all(np.isfinite(u)) else u
    out = np.empty_like(u)
    p1, p2 = penalty.params
    _prox.prox_vector(u, np.array([step], dtype=np.float64), penalty.kind, p1, p2, out, 1)
    return out


class BlockExecutor(SerialExecutor):
    """In-process row-blocked executor: the exact reference of the Dask executor.

    Runs each batched operation block by block in the calling process, with the compiled
    kernels, and adds the partials in block order. For the same blocking and seed it gives
    bitwise the result of :class:`~dpsco_core.parallel.dask_executor.DaskExecutor`. (It does
    not give the bits of the default fused kernels, which sample and sum the whole batch at
    once.) ReSQue batches run as in :class:`~dpsco_core.parallel.executors.SerialExecutor`.

    Parameters
    ----------
    block_rows : int, default=65536
        Rows per block when a Problem in memory is cut (:meth:`bind`, :meth:`problem` on an
        ndarray).
    n_threads : int or None, default=None
        OpenMP threads of the block kernels (results do not depend on it).
    """

    def __init__(self, block_rows: int = DEFAULT_BLOCK_ROWS,
                 n_threads: int | None = None) -> None:
        super().__init__()
        if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or \
                block_rows < 1:
            raise ValueError(f"block_rows must be an int >= 1; got {block_rows!r}.")
        self.block_rows = int(block_rows)
        self.n_threads = effective_n_threads(n_threads)
        self._n_threads_request = n_threads
        self.round_trips = 0
        self.replays = 0
        self._bound: Any = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------- backend (overridden)
    def _put(self, blocks):
        return list(blocks)

    def _load(self, calls):
        return [fn(*args) for fn, args in calls]

    def _map(self, fn, handles, args):
        """``[fn(block_b, *args[b]) for b]``, in block order: one round trip."""
        self.round_trips += 1
        return [fn(h, *a) for h, a in zip(handles, args)]

    def _release(self, fn, *args):
        fn(*args)

    def _drive(self, rounds):
        """Run a solver loop written as a generator of rounds: it yields ``(fn, handles,
        args)`` and is sent the partials of that round (``_map``); returns its value. (The
        Dask executor runs the same generator from its event loop.)"""
        try:
            request = next(rounds)
            while True:
                request = rounds.send(self._map(*request))
        except StopIteration as stop:
            return stop.value

    def _threads(self):
        # A default count is resolved per call (issue 18): the idle CPUs only on a busy
        # machine; the block kernels run small groups serial by their own thresholds.
        if self._n_threads_request is None:
            return effective_n_threads(None, work=SERIAL_WORK)
        return self.n_threads

    def close(self) -> None:
        """Drop the blocks of the Problems this executor cut (the per-problem cache of
        :meth:`bind`); it stays usable. ``with BlockExecutor() as ex:`` calls it."""
        self._bound = weakref.WeakKeyDictionary()

    def __enter__(self) -> "BlockExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------- data
    def problem(self, X: Any, y: Any = None, loss: Any = "squared", penalty: Any = None, *,
                bounds: Any = None, row_norm: float | None = None,
                label_bound: float | None = None,
                features: list[str] | None = None) -> "BlockedProblem":
        """Blocks of a dataset held by this executor, as a :class:`BlockedProblem`.

        Parameters
        ----------
        X : ndarray, scipy.sparse matrix, dask.array, str or list of str
            Features: an array (cut into ``block_rows`` rows; a sparse matrix into CSR row
            blocks), a row-chunked ``dask.array``
            (one block per row chunk; computed where the block lives), the path of one
            ``.npy`` file (memory-mapped; rows ``block_rows`` at a time, read where the block
            lives), a list of ``.npy`` paths (one block per file), a list of SciPy sparse
            ``.npz`` paths (``scipy.sparse.save_npz``; one CSR block per file) or a list of
            ``.parquet`` paths (one block per file).
        y : ndarray, dask.array, str or list of str
            Labels in the same form (``.npy`` path(s), also for ``.npz`` features); for
            Parquet, the label column's name.
        loss, penalty, bounds, row_norm, label_bound
            As in :class:`~dpsco_core.Problem`; public bounds are enforced on each block.
        features : list of str, optional
            Parquet feature columns (default: every column but the label).

        Returns
        -------
        BlockedProblem
        """
        loss = check_loss(loss)
        penalty = check_penalty(penalty)
        public = check_public_bounds(bounds, row_norm, label_bound)
        calls = _block_calls(X, y, loss, public, features, self.block_rows)
        if calls is None:       # an array in memory: cut here, then put
            X = X.tocsr() if sp.issparse(X) else np.asarray(X)
            y = np.asarray(y)
            if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
                raise ValueError(f"X must be 2-d and y 1-d with as many rows; got shapes "
                                 f"{X.shape} and {y.shape}.")
            handles = self._put([_blocks.make_block(X[lo:lo + self.block_rows],
                                                    y[lo:lo + self.block_rows], loss, public)
                                 for lo in range(0, X.shape[0], self.block_rows)])
        else:
            handles = self._load(calls)
        if public is not None:
            public.check_features(self._shapes(handles[:1])[0][1])
        return BlockedProblem(self, handles, self._shapes(handles), loss, penalty, public)

    def _shapes(self, handles):
        return self._map(_blocks.block_shape, handles, [()] * len(handles))

    def load(self, fn: Callable[..., Any], args_list: list[Any], loss: Any = "squared",
             penalty: Any = None, *, bounds: Any = None) -> "BlockedProblem":
        """Blocks made by ``fn(*args)`` where they live (e.g. :func:`~dpsco_core.parallel.
        blocks.synthetic_block`); ``fn`` returns a :class:`~dpsco_core.parallel.blocks.Block`
        (build it with :func:`~dpsco_core.parallel.blocks.make_block`).

        Parameters
        ----------
        fn : callable
        args_list : list of tuple
            One argument tuple per block, in row order.
        loss, penalty : as in :class:`~dpsco_core.Problem`
        bounds : PublicBounds, optional
            Public bounds the blocks were mapped onto by ``fn`` (declared, not enforced here).

        Returns
        -------
        BlockedProblem
        """
        handles = self._load([(fn, tuple(a)) for a in args_list])
        return BlockedProblem(self, handles, self._shapes(handles), check_loss(loss),
                              check_penalty(penalty), bounds)

    def bind(self, problem: Problem) -> "BlockedProblem":
        """``problem`` held by this executor: a :class:`BlockedProblem` of this executor as
        is; a :class:`~dpsco_core.Problem` cut into ``block_rows`` blocks (once per problem).

        Parameters
        ----------
        problem : Problem or BlockedProblem

        Returns
        -------
        BlockedProblem
        """
        if isinstance(problem, BlockedProblem):
            if problem.executor is not self:
                raise ValueError("this BlockedProblem is held by another executor; pass "
                                 "executor=problem.executor (or none).")
            return problem
        bound = self._bound.get(problem)
        if bound is None:
            # sparse X: CSR row blocks (each a copy of its rows, sorted unique indices)
            X, y = (problem.X_csr() if problem.is_sparse else problem.X_c()), problem.y
            handles = self._put([_blocks.Block(X[lo:lo + self.block_rows],
                                               y[lo:lo + self.block_rows])
                                 for lo in range(0, problem.n_samples, self.block_rows)])
            bound = BlockedProblem(self, handles, self._shapes(handles), problem.loss,
                                   problem.penalty, problem.public_bounds)
            bound._cache = problem._cache        # the data constants are the same
            self._bound[problem] = bound
        return bound

    # ------------------------------------------------------------- operations
    def grad_sum(self, problem: "BlockedProblem", coef: np.ndarray, specs: list[Any],
                 clip: float) -> tuple[np.ndarray, int, int]:
        """``(S, n_clipped, n_rows)``: the clipped gradient sum over the batch, the blocks'
        partials added in block order.

        Parameters
        ----------
        problem : BlockedProblem
        coef : ndarray of shape (n_features,)
            The iterate.
        specs : list
            One batch spec per block (see :func:`~dpsco_core.parallel.blocks.grad_sum`).
        clip : float
            Per-sample l2 clip C.

        Returns
        -------
        tuple
            ``(S, n_clipped, n_rows)``.
        """
        parts = self._map(_blocks.grad_sum, problem.blocks,
                          self._grad_args(problem, coef, specs, clip))
        return _grad_reduce(parts)

    def _grad_args(self, problem, coef, specs, clip):
        loss = problem.loss
        return [(b, coef, spec, loss.kind, loss.param, clip, self._threads())
                for b, spec in enumerate(specs)]

    def diff_sum(self, problem: "BlockedProblem", rows: np.ndarray, coef: np.ndarray,
                 coef_prev: np.ndarray, eta: float, eta_prev: float, clip: float,
                 out: np.ndarray) -> int:
        """DP-SRGD's clipped two-point difference sum over the global ``rows`` into ``out``
        (the ``_batch.batch_diff_*`` contract).

        Parameters
        ----------
        problem : BlockedProblem
        rows : ndarray of int64
            Global batch rows.
        coef, coef_prev : ndarray of shape (n_features,)
            x_t and x_{t-1}.
        eta, eta_prev : float
            eta_t and eta_{t-1}.
        clip : float
            The clip of each difference.
        out : ndarray of shape (n_features,)
            Receives the sum.

        Returns
        -------
        int
            The number of clipped differences.
        """
        loss = problem.loss
        local = problem.split_rows(rows)
        args = [(r, coef, coef_prev, eta, eta_prev, loss.kind, loss.param, clip,
                 self._threads()) for r in local]
        parts = self._map(_blocks.diff_sum, problem.blocks, args)
        out[:] = _reduce([s for s, _ in parts])
        return sum(c for _, c in parts)

    def map_runs(self, fn: Callable[..., Any], items: list[dict[str, Any]],
                 shared: dict[str, Any] | None = None) -> list[Any]:
        """``[fn(**shared, **item) for item in items]``: independent runs (DP-CD grid
        configurations, MLMC estimator copies), each whole on one worker.

        Each run draws its own noise from the seed it is given: it is a whole private
        mechanism delegated to where it runs (unlike the row-block operations, whose noise
        stays on the client).

        Parameters
        ----------
        fn : callable
        items : list of dict
            Keyword arguments of each run.
        shared : dict, optional
            Keyword arguments common to every run (e.g. the problem), sent once.

        Returns
        -------
        list
            The runs' results, in the order of ``items``.
        """
        shared = dict(shared or {})
        self.round_trips += 1
        return [fn(**shared, **item) for item in items]

    # ------------------------------------------------------------- solver runners
    def sgd_runner(self, problem: Problem, coef: np.ndarray, *, sampling: str, q: float,
                   batch_size: int, eta: float, clip: float, noise_scale: float, norm: float,
                   sampling_generator: Any, noise_generator: Any) -> Callable[[int], Any]:
        """``run(k) -> (n_clipped, n_sampled)``: k proximal DP-SGD steps on ``coef`` in place
        (the contract of ``_batch.sgd_dense``), noise from ``noise_generator`` on the client.

        Poisson batches are drawn per block from streams keyed by (step, block) whose entropy
        is a one-way hash of ``sampling_generator``'s seed (:func:`~dpsco_core.parallel.
        blocks.worker_entropy`): each row joins each step independently with probability q,
        the analysed mechanism. Shuffled batches: the client draws the permutation of each
        epoch from ``sampling_generator`` and sends each block its rows.

        Parameters
        ----------
        problem : Problem or BlockedProblem
        coef : ndarray of shape (n_features,)
            Updated in place.
        sampling, q, batch_size, eta, clip, noise_scale, norm
            As ``_batch.sgd_dense`` takes them (``norm``: the public normaliser).
        sampling_generator, noise_generator : numpy BitGenerator
            The run's streams (advanced in place).

        Returns
        -------
        callable
        """
        problem = self.bind(problem)
        return _SGDRun(self, problem, coef, sampling, q, batch_size, eta, clip, noise_scale,
                       norm, sampling_generator, noise_generator)

    def diff_kernel(self, problem: Problem) -> Callable[..., int]:
        """The DP-SRGD batch kernel ``kernel(rows, x, x_prev, eta, eta_prev, clip, out)`` on
        the blocks (``_single_epoch``'s contract).

        Parameters
        ----------
        problem : Problem or BlockedProblem

        Returns
        -------
        callable
        """
        problem = self.bind(problem)

        def kernel(rows, x, x_prev, eta, eta_prev, clip, out):
            return self.diff_sum(problem, rows, x, x_prev, eta, eta_prev, clip, out)
        return kernel

    def cd_runner(self, problem: Problem, *, steps: np.ndarray, clips: np.ndarray,
                  noise_scales: np.ndarray, coef: np.ndarray, n_inner: int, average: bool,
                  cyclic: bool, bit_generator: Any,
                  normaliser: float) -> Callable[[int, int], int]:
        """``run(k_outer, offset) -> n_clipped``: DP-CD outer iterations on ``coef`` in place
        (the contract of ``_cd.cd_dense``; same draw order: the coordinate, then one standard
        normal, from ``bit_generator`` on the client). Each update is one round trip: the
        blocks return their clipped column sums at their margins (kept with the block), the
        client adds them in block order, adds the noise, divides by the public ``normaliser``
        and sends the coordinate change with the next update.

        Parameters
        ----------
        problem : Problem or BlockedProblem
        steps, clips, noise_scales : ndarray of shape (n_features,)
            gamma_j, C_j and sigma_j.
        coef : ndarray of shape (n_features,)
            Updated in place.
        n_inner : int
            Updates per outer iteration.
        average, cyclic : bool
            As ``_cd.cd_dense``.
        bit_generator : numpy BitGenerator
            The run's stream (coordinates and noise), advanced in place.
        normaliser : float
            The public record count m.

        Returns
        -------
        callable
        """
        problem = self.bind(problem)
        return _CDRun(self, problem, steps, clips, noise_scales, coef, n_inner, average, cyclic,
                      bit_generator, normaliser)


class _SGDRun:
    def __init__(self, ex, problem, coef, sampling, q, batch_size, eta, clip, noise_scale,
                 norm, sampling_generator, noise_generator):
        self.ex, self.problem, self.coef = ex, problem, coef
        self.sampling, self.q, self.b = sampling, q, batch_size
        self.eta, self.clip, self.noise_scale, self.norm = eta, clip, noise_scale, norm
        self.noise = np.random.Generator(noise_generator)
        if sampling == "poisson":
            self.entropy = _blocks.worker_entropy(sampling_generator.seed_seq)
        else:
            self.perm_gen = np.random.Generator(sampling_generator)
            self.per_epoch = problem.n_samples // batch_size
        self.k = 0

    def _specs(self):
        """The batch spec of each block at step ``k`` (a shuffled epoch's permutation is drawn
        at its first step: call once per step, and keep the specs if the round is re-run)."""
        pr = self.problem
        if self.sampling == "poisson":
            return [("poisson", self.entropy, self.k, self.q)] * len(pr.blocks)
        t = self.k % self.per_epoch
        if t == 0:
            self.perm = self.perm_gen.permutation(pr.n_samples)
        rows = self.perm[t * self.b:(t + 1) * self.b]
        return [("rows", r) for r in pr.split_rows(rows)]

    def _step(self, parts, counts):
        """Step ``k`` from the blocks' partials: add them in block order, add the noise (drawn
        here, on the client), divide by the public normaliser, take the proximal step."""
        S, clipped, sampled = _grad_reduce(parts)
        # g = (S + N(0, noise_scale^2 I)) / norm
        g = (S + self.noise.normal(0.0, self.noise_scale, self.problem.n_features)) / self.norm
        self.coef[:] = _prox_vector(self.problem.penalty, self.coef - self.eta * g, self.eta)
        counts[0], counts[1], self.k = counts[0] + clipped, counts[1] + sampled, self.k + 1

    def _steps(self, n_steps):
        counts = [0, 0]
        for _ in range(n_steps):
            specs = self._specs()       # kept if the round is run again (see _drive)
            parts = yield (_blocks.grad_sum, self.problem.blocks,
                           self.ex._grad_args(self.problem, self.coef, specs, self.clip))
            self._step(parts, counts)
        return counts[0], counts[1]

    def __call__(self, n_steps):
        return self.ex._drive(self._steps(n_steps))


class _CDRun:
    def __init__(self, ex, problem, steps, clips, noise_scales, coef, n_inner, average, cyclic,
                 bit_generator, normaliser):
        self.ex, self.problem, self.coef = ex, problem, coef
        self.steps, self.clips, self.noise_scales = steps, clips, noise_scales
        self.n_inner, self.average, self.cyclic = n_inner, average, cyclic
        self.gen = np.random.Generator(bit_generator)
        self.inv_m = 1.0 / float(normaliser)
        self.token = (os.getpid(), id(self), next(_TOKENS))
        self.outer = 0
        self.round_trip_times = []

    def _sums(self, k, message, j):
        pr, loss = self.problem, self.problem.loss
        nb = len(pr.blocks)
        args = [(b, self.token, self.outer, k, message, j, float(self.clips[j]), loss.kind,
                 loss.param) for b in range(nb)]
        start = time.perf_counter()
        parts = yield (_blocks.cd_column_sum, pr.blocks, args)
        lost = [b for b, part in enumerate(parts) if isinstance(part, str)]
        if lost:     # margins lost with a worker: rebuild them exactly from the log
            self.ex.replays += len(lost)
            replay = ("replay", self.start, list(self.log))
            again = yield (_blocks.cd_column_sum, [pr.blocks[b] for b in lost],
                           [args[b][:4] + (replay,) + args[b][5:] for b in lost])
            for b, part in zip(lost, again):
                parts[b] = part
        self.round_trip_times.append(time.perf_counter() - start)
        return float(_reduce([s for s, _ in parts])), sum(c for _, c in parts)

    def __call__(self, k_outer, offset):
        try:
            return self.ex._drive(self._updates(k_outer, offset))
        finally:
            self.ex._release(_blocks.cd_release, self.token)

    def _updates(self, k_outer, offset):
        pr, p, coef = self.problem, self.problem.n_features, self.coef
        penalty = pr.penalty
        n_clipped, update = 0, offset
        for _ in range(k_outer):
            self.start, self.log = coef.copy(), []
            sums, last = np.zeros(p), np.ones(p, dtype=np.int64)
            for k in range(self.n_inner):
                j = update % p if self.cyclic else int(self.gen.integers(0, p))
                update += 1
                g = self.noise_scales[j] * self.gen.standard_normal()
                message = ("start", self.start) if k == 0 else ("next", self.log[-1])
                acc, clipped = yield from self._sums(k, message, j)
                n_clipped += clipped
                g = acc * self.inv_m + g
                w_new = _prox_vector(penalty, np.array([coef[j] - self.steps[j] * g]),
                                     self.steps[j])[0]
                delta = w_new - coef[j]
                self.log.append((j, delta))
                if delta == 0.0:
                    continue
                if self.average:
                    sums[j] += coef[j] * (k + 1 - last[j])
                    last[j] = k + 1
                coef[j] = w_new
            if self.average:
                coef[:] = (sums + coef * (self.n_inner + 1 - last)) / self.n_inner
            self.outer += 1
        return n_clipped


def _block_calls(X, y, loss, bounds, features, block_rows):
    """The loader calls of a dataset given as files or a dask.array; None for an array."""
    if isinstance(X, (str, os.PathLike)) and os.fspath(X).endswith(".npz"):
        X, y = [X], [y]         # a sparse file is one block (CSR rows are not memory-mapped)
    if isinstance(X, (str, os.PathLike)):
        path = os.fspath(X)
        n = np.load(path, mmap_mode="r").shape[0]
        return [(_blocks.load_npy_rows, (path, os.fspath(y), lo, min(n, lo + block_rows), loss,
                                         bounds)) for lo in range(0, n, block_rows)]
    if isinstance(X, (list, tuple)) and X and all(isinstance(x, (str, os.PathLike)) for x in X):
        paths = [os.fspath(x) for x in X]
        if all(p.endswith(".parquet") for p in paths):
            if not isinstance(y, str):
                raise TypeError("with Parquet files, y must be the label column's name; got "
                                f"{type(y).__name__}.")
            return [(_blocks.load_parquet_block, (p, y, features, loss, bounds)) for p in paths]
        if not isinstance(y, (list, tuple)) or len(y) != len(paths):
            raise ValueError(f"with a list of {len(paths)} .npy or .npz feature files, y must "
                             "be a list of as many .npy label files.")
        sparse = [p.endswith(".npz") for p in paths]
        if any(sparse) and not all(sparse):
            raise ValueError("the feature files must be all .npy (dense) or all .npz (SciPy "
                             "sparse); got a mix.")
        load = _blocks.load_npz_block if all(sparse) else _blocks.load_npy_block
        return [(load, (p, os.fspath(q), loss, bounds)) for p, q in zip(paths, y)]
    if type(X).__module__.startswith("dask"):
        if len(X.chunks) != 2 or len(X.chunks[1]) != 1:
            raise ValueError("a dask.array X must be chunked by rows only (one column chunk); "
                             f"got chunks {X.chunks}. Use X.rechunk({{1: -1}}).")
        y_arr = y.rechunk((X.chunks[0],)) if type(y).__module__.startswith("dask") else None
        if y_arr is None:
            raise TypeError("with a dask.array X, y must be a dask.array too.")
        xs, ys = X.to_delayed().ravel(), y_arr.to_delayed().ravel()
        return [(_make_from_delayed, (xb, yb, loss, bounds)) for xb, yb in zip(xs, ys)]
    return None


def _make_from_delayed(xb, yb, loss, bounds):
    # in process: compute the chunk here (DaskExecutor hands the delayed objects to the graph)
    return _blocks.make_block(np.asarray(xb.compute()), np.asarray(yb.compute()), loss, bounds)
