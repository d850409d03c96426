r"""Dask executor: the row blocks on the workers of a ``dask.distributed`` cluster (issue 21).

:class:`DaskExecutor` is :class:`~dpsco_core.parallel.blocked.BlockExecutor` with each block
held by a Dask worker: scattered once from the client (:meth:`~BlockExecutor.bind`, or
:meth:`~BlockExecutor.problem` on an ndarray), or made on the workers by a task (``.npy``
files, memory-mapped and read row range by row range; Parquet files; the row chunks of a
``dask.array``; a generator such as :func:`~dpsco_core.parallel.blocks.synthetic_block`).
Every batched operation is one round of tasks, one per block, each on the worker that holds
its block, running the compiled kernels there; the partials come back to the client, which
adds them in block order, draws the noise from its own stream and takes the step. The same
blocking and seed give bitwise the result of the in-process ``BlockExecutor``.

Failure. Tasks are pure functions of their block and arguments (DP-CD's margins are a cache
that a block rebuilds exactly from the client's log), so Dask's own machinery recovers a lost
worker: its running tasks are rescheduled, blocks made by a task are recomputed on another
worker, and the run completes with the same bits. Blocks scattered from the client cannot be
recomputed (unless ``replicas`` > 1 kept a copy); a run that loses one, or a task that kills
``distributed.scheduler.allowed-failures`` workers, raises :class:`RuntimeError` naming the
operation: a partial sum is never silently left out.

Privacy: see :mod:`dpsco_core.parallel.blocked`. The workers receive iterates, batch
specifications and, for Poisson sampling, the entropy of their sampling streams (a SHA-256
hash of the client's sampling stream); never the noise stream or the noise.

Example (a real cluster: ``Client("tcp://scheduler:8786")``; each worker must see the files)::

    from dask.distributed import Client
    from dpsco_core.parallel import DaskExecutor
    ex = DaskExecutor(Client("tcp://scheduler:8786"))
    prob = ex.problem(["part-0.npy", "part-1.npy"], ["y-0.npy", "y-1.npy"], loss="logistic",
                      bounds=(-1, 1))
    res = dp.dp_sgd(prob, epsilon=1, delta=1e-6, passes=2, sample_rate=0.01, random_state=0)
"""

from typing import Any

import numpy as np

from . import blocks as _blocks
from .blocked import DEFAULT_BLOCK_ROWS, BlockExecutor, _make_from_delayed

__all__ = ["DaskExecutor"]

_LOST_SCATTERED = (
    "a row block scattered from the client was lost with its worker during {op}; scattered "
    "blocks cannot be recomputed, so the run stops rather than sum without it. Load the data "
    "on the workers (files, a dask.array) or scatter with replicas=2 to survive a lost worker.")
_KILLED = ("{op} failed: a task was running on workers that died ({exc}); Dask retried it "
           "(distributed.scheduler.allowed-failures) and gave up. No partial sum was used.")


def _call_oracle(oracle, Z, seed):
    return np.asarray(oracle(Z, seed), dtype=np.float64)


class DaskExecutor(BlockExecutor):
    """Row-blocked executor on a ``dask.distributed`` cluster (module docstring).

    Parameters
    ----------
    client : distributed.Client
        A client of the cluster (``Client("tcp://scheduler:8786")``, or of a
        ``LocalCluster``).
    block_rows : int, default=65536
        Rows per block when the client cuts an array (``bind``, ``problem`` on an ndarray or a
        single ``.npy`` file).
    retries : int, default=2
        Dask retries of a task that raised (on top of the scheduler's rescheduling of tasks
        whose worker died).
    replicas : int, default=1
        Copies of each scattered block kept on distinct workers (2 survives one lost worker).

    Attributes
    ----------
    round_trips : int
        Rounds of tasks run so far (one per batched operation).
    replays : int
        DP-CD block margins rebuilt from the client's log (after a lost worker).
    """

    def __init__(self, client: Any, block_rows: int = DEFAULT_BLOCK_ROWS, retries: int = 2,
                 replicas: int = 1) -> None:
        super().__init__(block_rows=block_rows, n_threads=1)
        self.client = client
        self.retries = int(retries)
        self.replicas = int(replicas)
        self._oracles: dict[int, Any] = {}
        self._scattered: set[Any] = set()
        self._holder: dict[Any, str] = {}
        self.poll_seconds = 2.0

    def __repr__(self):
        return f"DaskExecutor({self.client!r}, block_rows={self.block_rows})"

    # ------------------------------------------------------------- backend
    def _put(self, blocks):
        futures = self.client.scatter(list(blocks), hash=False)
        if self.replicas > 1:
            self.client.replicate(futures, n=self.replicas)
        self._scattered.update(f.key for f in futures)
        return futures

    def _load(self, calls):
        import dask

        futures = []
        for fn, args in calls:
            if fn is _make_from_delayed:
                xb, yb, loss, bounds = args
                futures.append(self.client.compute(
                    dask.delayed(_blocks.make_block)(xb, yb, loss, bounds)))
            else:
                futures.append(self.client.submit(fn, *args, pure=False, retries=self.retries))
        return futures

    def _gather(self, futures, op, handles=()):
        from distributed import KilledWorker

        try:
            return self.client.gather(futures)
        except KilledWorker as exc:
            raise RuntimeError(_KILLED.format(op=op, exc=exc)) from exc
        except Exception as exc:
            lost = [h for h in handles if h.key in self._scattered and h.status != "finished"]
            if lost or type(exc).__name__ in ("CancelledError", "FutureCancelledError",
                                                "FuturesCancelledError"):
                raise RuntimeError(_LOST_SCATTERED.format(op=op)) from exc
            raise

    def _alive(self):
        return set(self.client.scheduler_info().get("workers", {}))

    def _holders(self, handles):
        """The worker of each block (cached; asked again for a block whose worker is gone)."""
        alive = self._alive()
        missing = [h for h in handles if self._holder.get(h.key) not in alive]
        if missing:
            for key, workers in self.client.who_has(missing).items():
                workers = [w for w in workers if w in alive]
                if workers:
                    self._holder[key] = sorted(workers)[0]
                else:
                    self._holder.pop(key, None)
        return [self._holder.get(h.key) for h in handles]

    def _submit(self, fn, handle, args, holder):
        # A task runs where its block is: pinned (strictly, so that the scheduler's work
        # stealing never moves a block of hundreds of MB to an idle worker); a block without a
        # live holder (lost, to be recomputed) goes wherever the scheduler puts it.
        if holder is None:
            return self.client.submit(fn, handle, *args, pure=False, retries=self.retries)
        return self.client.submit(fn, handle, *args, pure=False, retries=self.retries,
                                  workers=[holder], allow_other_workers=False)

    def _map(self, fn, handles, args):
        from distributed import wait

        self.round_trips += 1
        holders = self._holders(handles)
        futures = [self._submit(fn, h, a, w) for h, a, w in zip(handles, args, holders)]
        while True:
            try:
                wait(futures, timeout=self.poll_seconds)
                break
            except TimeoutError:
                # a task pinned to a worker that died waits for it forever: send it again,
                # unpinned (its block is recomputed or reported lost)
                alive = self._alive()
                for b, fut in enumerate(futures):
                    if holders[b] is not None and holders[b] not in alive and not fut.done():
                        fut.cancel()
                        self._holder.pop(handles[b].key, None)
                        holders[b] = None
                        futures[b] = self._submit(fn, handles[b], args[b], None)
            except Exception:       # noqa: BLE001 - errors and cancellations: see _gather
                break
        return self._gather(futures, fn.__name__, handles)

    def _release(self, fn, *args):
        try:
            self.client.run(fn, *args)
        except Exception:       # a worker gone since: its state went with it
            pass

    def _threads(self):
        return 1

    # ------------------------------------------------------------- independent runs
    def map_runs(self, fn: Any, items: list[dict[str, Any]],
                 shared: dict[str, Any] | None = None) -> list[Any]:
        shared = {k: self.client.scatter(v, hash=False) for k, v in (shared or {}).items()}
        self.round_trips += 1
        futures = [self.client.submit(fn, **shared, **item, pure=False, retries=self.retries)
                   for item in items]
        return self._gather(futures, getattr(fn, "__name__", "map_runs"))

    map_runs.__doc__ = BlockExecutor.map_runs.__doc__

    # ------------------------------------------------------------- ReSQue query batches
    def _oracle_parts(self, oracle, Z, seeds, n_chunks, chunk):
        # the oracle (and the data it holds) is sent once, then referenced by its future
        entry = self._oracles.get(id(oracle))
        if entry is None or entry[0] is not oracle:
            if len(self._oracles) >= 8:
                self._oracles.pop(next(iter(self._oracles)))
            entry = self._oracles[id(oracle)] = (
                oracle, self.client.scatter(oracle, hash=False, broadcast=True))
        self.round_trips += 1
        futures = [self.client.submit(_call_oracle, entry[1], Z[c * chunk:(c + 1) * chunk],
                                      seeds[c], pure=False, retries=self.retries)
                   for c in range(n_chunks)]
        return self._gather(futures, "grad_batch")
