r"""Dask executor: the row blocks on the workers of a ``dask.distributed`` cluster (issue 21).

:class:`DaskExecutor` is :class:`~dpsco_core.parallel.blocked.BlockExecutor` with each block
held by a Dask worker: scattered once from the client (:meth:`~BlockExecutor.bind`, or
:meth:`~BlockExecutor.problem` on an ndarray), or made on the workers by a task (``.npy``
files, memory-mapped and read row range by row range; Parquet files; the row chunks of a
``dask.array``; a generator such as :func:`~dpsco_core.parallel.blocks.synthetic_block`).
Every batched operation is one round: one call per worker, running the compiled kernels on
each of the blocks that worker holds; the partials come back to the client, which adds them
in block order, draws the noise from its own stream and takes the step. The same blocking and
seed give bitwise the result of the in-process ``BlockExecutor``.

Rounds. By default (``direct=True``) a round goes from the client's connection pool straight
to one Dask actor per worker (:class:`_BlockServer`, created once, holding references to that
worker's blocks) and back: two messages per worker, the scheduler not involved. A round of
tasks (``direct=False``, and the fallback) is one task per worker (not per block), pinned to
it; the client then fetches the results from those workers directly; the previous round's
results are released in the same batch as the next round's tasks. Measured on the 2-core test
machine at load 13 (``bench/bench_dask.py``, n = 20,000, p = 20, 2 blocks): 12.9 ms per
DP-SGD step through the actors, 89.6 ms as tasks (172.7 ms before, one task per block).

Failure. The block functions are pure functions of their block and arguments (DP-CD's
margins are a cache that a block rebuilds exactly from the client's log, and an update
re-run is not applied twice), so a round whose actor call fails (a worker lost, an error in a
block) is run again as tasks, and Dask's own machinery recovers a lost worker: its running
tasks are rescheduled, blocks made by a task are recomputed on another worker, and the run
completes with the same bits. Blocks scattered from the client cannot be recomputed (unless
``replicas`` > 1 kept a copy); a run that loses one, or a task that kills
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

import time

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


def _run_group(fn, blocks, args):
    """``[fn(block, *a) ...]`` for the blocks of one worker, in order (one task)."""
    return [fn(block, *a) for block, a in zip(blocks, args)]


class _BlockServer:
    """A Dask actor on one worker holding references to the blocks that worker holds: a
    round is then one message from the client to each worker and one back (the scheduler is
    not involved), instead of a task's client -> scheduler -> worker -> scheduler -> client
    plus the fetch of its result."""

    calls = 0           # class attributes: an actor's proxy reads only those its class has
    seconds = 0.0       # time in the block functions (benchmarks read it)

    def __init__(self, blocks):
        self.blocks = blocks

    def run(self, fn, args):
        start = time.perf_counter()
        try:
            return _run_group(fn, self.blocks, args)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start


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
    direct : bool, default=True
        Run the rounds through one Dask actor per worker (client -> worker -> client, the
        scheduler not involved: about a quarter of a task round's messages). A round whose
        actor call fails (a worker lost, a task error) is run again as Dask tasks, with
        Dask's recovery; False: tasks always. Both give the same bits.

    Attributes
    ----------
    round_trips : int
        Rounds run so far (one per batched operation).
    replays : int
        DP-CD block margins rebuilt from the client's log (after a lost worker).
    """

    def __init__(self, client: Any, block_rows: int = DEFAULT_BLOCK_ROWS, retries: int = 2,
                 replicas: int = 1, direct: bool = True) -> None:
        super().__init__(block_rows=block_rows, n_threads=1)
        self.client = client
        self.retries = int(retries)
        self.replicas = int(replicas)
        self._oracles: dict[int, Any] = {}
        self._scattered: set[Any] = set()
        self._holder: dict[Any, str] = {}
        self._previous: list[Any] = []
        self.direct = bool(direct)
        self._actors: dict[tuple, Any] = {}
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
        """The worker of each block, cached: the scheduler is asked only about blocks without a
        known holder (the first round, or after their worker died: see :meth:`_map`), so a
        round costs no extra message."""
        missing = [h for h in handles if h.key not in self._holder]
        if missing:
            alive = self._alive()
            for key, workers in self.client.who_has(missing).items():
                workers = [w for w in workers if w in alive]
                if workers:
                    self._holder[key] = sorted(workers)[0]
        return [self._holder.get(h.key) for h in handles]

    def _submit(self, fn, handles, args, holder):
        # One task runs the blocks of one worker (_run_group): a round is one task per worker,
        # not one per block. It runs where its blocks are: pinned (strictly, so that the
        # scheduler's work stealing never moves a block of hundreds of MB to an idle worker);
        # a block without a live holder (lost, to be recomputed) goes alone wherever the
        # scheduler puts it.
        if holder is None:
            return self.client.submit(_run_group, fn, handles, args, pure=False,
                                      retries=self.retries)
        return self.client.submit(_run_group, fn, handles, args, pure=False,
                                  retries=self.retries, workers=[holder],
                                  allow_other_workers=False)

    def _groups(self, handles):
        """``[(holder or None, block indices)]``: the blocks of each worker, in block order;
        a block without a known live holder alone."""
        tasks: list = []
        by_worker: dict = {}
        for b, w in enumerate(self._holders(handles)):
            if w is None:
                tasks.append((None, [b]))
            elif w in by_worker:
                by_worker[w][1].append(b)
            else:
                by_worker[w] = (w, [b])
                tasks.append(by_worker[w])
        return tasks

    def _map(self, fn, handles, args):
        self.round_trips += 1
        tasks = self._groups(handles)
        if self.direct and all(w is not None for w, _ in tasks):
            parts = self._actor_round(fn, handles, args, tasks)
            if parts is not None:
                return parts
        return self._task_round(fn, handles, args, tasks)

    def _actor_round(self, fn, handles, args, tasks):
        """The round through the workers' actors (the client's connection pool straight to
        each worker, all workers at once); None if anything failed (the caller then runs the
        round as tasks: the functions are pure, or idempotent for DP-CD's margins)."""
        from distributed import wait

        keys = [(w, tuple(handles[b].key for b in idx)) for w, idx in tasks]
        try:
            # an actor keeps its blocks alive: beyond 16 (or this round's number), the oldest
            # of other rounds go (made again on their next round if still in use)
            new = [key for key in keys if key not in self._actors]
            stale = [key for key in self._actors if key not in keys]
            for key in stale[:max(0, len(self._actors) + len(new) - max(16, len(keys)))]:
                del self._actors[key]
            for key, (w, idx) in zip(keys, tasks):
                if key not in self._actors:
                    self._actors[key] = self.client.submit(
                        _BlockServer, [handles[b] for b in idx], actor=True, workers=[w],
                        allow_other_workers=False, pure=False)
            actors = [self._actors[key] for key in keys]
            while not all(a.done() for a in actors):
                try:
                    wait(actors, timeout=self.poll_seconds)
                except TimeoutError:
                    if not {w for w, _ in tasks} <= self._alive():
                        raise
            if not all(a.status == "finished" for a in actors):
                raise RuntimeError("an actor was not created")
            parts = self.client.sync(self._actor_calls, [
                (w, a.key, fn, [args[b] for b in idx]) for a, (w, idx) in zip(actors, tasks)])
        except Exception:       # noqa: BLE001 - a lost worker, or an error the tasks re-raise
            for key in keys:
                self._actors.pop(key, None)
            self._holder.clear()
            return None
        out: list = [None] * len(handles)
        for (_, idx), res in zip(tasks, parts):
            for b, r in zip(idx, res):
                out[b] = r
        return out

    async def _actor_calls(self, calls):
        import asyncio

        from distributed.protocol import to_serialize

        async def call(address, key, fn, args):
            reply = await self.client.rpc(address).actor_execute(
                function="run", actor=key, args=[to_serialize(fn), to_serialize(args)],
                kwargs={})
            if reply["status"] != "OK":
                raise RuntimeError("a block call failed on its worker")
            return reply["result"]
        # every call has ended (returned or failed) before the round is run again as tasks:
        # no call of this round is still running beside them
        replies = await asyncio.gather(*(call(*c) for c in calls), return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        return replies

    def _task_round(self, fn, handles, args, tasks):
        from distributed import wait

        futures = [self._submit(fn, [handles[b] for b in idx], [args[b] for b in idx], w)
                   for w, idx in tasks]
        # The previous round's results are released only now: their release messages then go
        # to the scheduler in the same batch as this round's tasks (the client's and the
        # scheduler's batched streams send at most once per 10 ms and 5 ms: a release sent
        # alone just before the next round's tasks would hold those tasks back that long).
        self._previous = futures
        while True:
            try:
                wait(futures, timeout=self.poll_seconds)
                break
            except TimeoutError:
                # a task pinned to a worker that died waits for it forever: send its blocks
                # again, one task each, unpinned (each block is recomputed or reported lost)
                alive = self._alive()
                again, again_futures = [], []
                for (w, idx), fut in zip(tasks, futures):
                    if w is None or w in alive or fut.done():
                        again.append((w, idx))
                        again_futures.append(fut)
                        continue
                    fut.cancel()
                    for b in idx:
                        self._holder.pop(handles[b].key, None)
                        again.append((None, [b]))
                        again_futures.append(self._submit(fn, [handles[b]], [args[b]], None))
                tasks, futures = again, again_futures
                self._previous = futures
            except Exception:       # noqa: BLE001 - errors and cancellations: see _gather
                break
        parts = self._fetch(futures, tasks, fn.__name__, handles)
        out: list = [None] * len(handles)
        for (_, idx), res in zip(tasks, parts):
            for b, r in zip(idx, res):
                out[b] = r
        return out

    def _fetch(self, futures, tasks, op, handles):
        """The results of a round: straight from the workers that computed them (the client
        knows them: the tasks were pinned), one message each way instead of the client ->
        scheduler -> worker relay of ``Client.gather``; that relay (with its error and
        lost-data handling) whenever a task failed, was not pinned, or a fetch misses."""
        if all(w is not None for w, _ in tasks) and all(f.status == "finished" for f in futures):
            from distributed.utils_comm import gather_from_workers

            try:
                data, missing, failed, _ = self.client.sync(
                    gather_from_workers, {f.key: [w] for f, (w, _) in zip(futures, tasks)},
                    rpc=self.client.rpc)
            except Exception:       # noqa: BLE001 - the relay below reports what went wrong
                data, missing = {}, [None]
            if not missing and not failed:
                return [data[f.key] for f in futures]
        return self._gather(futures, op, handles)

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
