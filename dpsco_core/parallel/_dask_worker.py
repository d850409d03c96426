"""The worker side of :class:`~dpsco_core.parallel.dask_executor.DaskExecutor`'s direct rounds
(issue 21); imported only where Dask is used (it imports ``distributed``).

A direct round is one Dask comm message from the client to each worker holding blocks and one
back: the op :data:`ROUND_OP`, handled in the worker's event loop by :func:`serve_round`,
which :class:`RoundPlugin` installs on every worker of the cluster (present and future). The
message carries raw bytes (the client's pickle of the block keys, the function and its
arguments; the partials pickled back): plain msgpack for Dask's comm, none of its per-object
serialization, no thread hand-off on either side, the scheduler not involved.

Trust and privacy: the payload is unpickled on the worker, as every Dask task is (the same
comm, with Dask's TLS when the cluster is so configured): the handler opens no other channel.
It receives what a task round would (block keys, iterates, batch specs), never the client's
noise stream. The batches it draws ahead are the worker's own Poisson batches (from the
hashed sampling entropy it already receives).

Cost: the block functions run in the worker's event loop, which does nothing else meanwhile
(heartbeats wait; Dask logs a warning beyond ``distributed.admin.tick.limit``, 3 s): blocks
are sized so that one round takes milliseconds to a second (``block_rows``).
"""

import asyncio
import threading
import time

from concurrent.futures import ThreadPoolExecutor

from distributed.diagnostics.plugin import WorkerPlugin
from distributed.protocol import pickle

from . import blocks as _blocks

__all__ = ["ROUND_OP", "ROUND_STATS", "RoundPlugin", "clear_ahead", "round_stats", "run_group",
           "serve_round"]

#: The comm op of a direct round.
ROUND_OP = "dpsco_core_block_round"

#: [calls, wall seconds, CPU seconds] of this worker process's direct round handler (read by
#: ``bench/bench_dask.py`` through ``client.run(round_stats)``).
ROUND_STATS = [0, 0.0, 0.0]


# The Poisson batches of the next DP-SGD step, drawn ahead while the client takes its step:
# {(entropy, step, block index, n_rows, q): concurrent Future of the sorted local rows}, the
# entries of one step only (a run that stops or changes leaves at most one step's batches).
_AHEAD: dict = {}
DRAW_AHEAD = [True]      # [False]: draw every batch when its step comes (benchmarks compare)
AHEAD_MIN_ROWS = [4096]  # expected batch rows of a block from which its batch is drawn ahead
AHEAD_USED = [0]         # batches taken from _AHEAD (tests check the path runs)
_AHEAD_LOCK = threading.Lock()
_AHEAD_POOL: list = []


def _ahead_pool():
    if not _AHEAD_POOL:
        _AHEAD_POOL.append(ThreadPoolExecutor(1, thread_name_prefix="dpsco-core-ahead"))
    return _AHEAD_POOL[0]


def _poisson_key(block, args):
    # args of blocks.grad_sum: (index, coef, spec, ...); spec ("poisson", entropy, step, q)
    spec = args[2] if len(args) > 2 else None
    # small batches are drawn when their step comes: the hand-off to the thread (~0.2 ms of
    # CPU on the test machine) would cost more than the draw (~30 ns per batch row)
    if isinstance(spec, tuple) and spec and spec[0] == "poisson" and spec[3] < 1.0 and \
            spec[3] * block.shape[0] >= AHEAD_MIN_ROWS[0]:
        return (spec[1], spec[2], args[0], block.shape[0], spec[3])
    return None


def _with_rows_ahead(fn, blocks, args):
    """``args`` with each Poisson batch spec replaced by its rows when they were drawn ahead
    (the same rows: :func:`~dpsco_core.parallel.blocks.poisson_rows` of the same key), and the
    keys of the next step's batches to draw ahead."""
    if fn is not _blocks.grad_sum or not DRAW_AHEAD[0]:
        return args, []
    out, keys = list(args), []
    for i, (block, a) in enumerate(zip(blocks, args)):
        key = _poisson_key(block, a)
        if key is None:
            continue
        with _AHEAD_LOCK:
            fut = _AHEAD.pop(key, None)
        if fut is not None:
            AHEAD_USED[0] += 1
            out[i] = (a[0], a[1], ("rows", fut.result())) + tuple(a[3:])
        keys.append(key[:1] + (key[1] + 1,) + key[2:])
    return out, keys


def _draw_ahead(keys):
    """Draw the next step's batches in the background thread (called after the reply went)."""
    with _AHEAD_LOCK:
        for fut in _AHEAD.values():
            fut.cancel()        # a step not taken (a run stopped or changed): not drawn
        _AHEAD.clear()
        for key in keys:
            entropy, step, index, n_rows, q = key
            _AHEAD[key] = _ahead_pool().submit(_blocks.poisson_rows, entropy, step, index,
                                               n_rows, q)


def clear_ahead():
    """Drop the batches drawn ahead in this worker process (``DaskExecutor.close``)."""
    with _AHEAD_LOCK:
        for fut in _AHEAD.values():
            fut.cancel()
        _AHEAD.clear()


def run_group(fn, blocks, args):
    """``[fn(block, *a) ...]`` for the blocks of one worker, in order."""
    return [fn(block, *a) for block, a in zip(blocks, args)]


def serve_round(worker, payload=None):
    """One direct round on ``worker``: ``payload`` is the pickle of ``(keys, fn, args)``; runs
    ``fn`` on the blocks of ``keys`` (in this worker's memory) in order and returns
    ``{"status": "OK", "result": pickle of the partials}``, or ``{"status": "error", ...}``
    (a block not here, an error in a block: the client then runs the round as Dask tasks,
    which recover the block or raise the error)."""
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        keys, fn, args = pickle.loads(payload)
        blocks = [worker.data[key] for key in keys]
        args, ahead = _with_rows_ahead(fn, blocks, args)
        result = run_group(fn, blocks, args)
        if ahead:       # after this handler's reply is written (the loop's next iteration)
            asyncio.get_running_loop().call_soon(_draw_ahead, ahead)
        return {"status": "OK", "result": pickle.dumps(result)}
    except Exception as exc:        # noqa: BLE001 - reported; the client re-runs as tasks
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        ROUND_STATS[0] += 1
        ROUND_STATS[1] += time.perf_counter() - start
        ROUND_STATS[2] += time.thread_time() - cpu


def round_stats():
    """``(calls, seconds)`` of this worker process's direct rounds."""
    return tuple(ROUND_STATS)


class RoundPlugin(WorkerPlugin):
    """Installs :func:`serve_round` as the comm handler of :data:`ROUND_OP` on each worker."""

    name = ROUND_OP

    def setup(self, worker):
        def dpsco_core_block_round(payload=None):      # Dask logs a handler's __name__
            return serve_round(worker, payload)
        worker.handlers[ROUND_OP] = dpsco_core_block_round
