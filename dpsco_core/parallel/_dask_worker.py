"""The worker side of :class:`~dpsco_core.parallel.dask_executor.DaskExecutor`'s direct rounds
(issue 21); imported only where Dask is used (it imports ``distributed``).

A direct round is one Dask comm message from the client to each worker holding blocks and one
back: the op :data:`ROUND_OP`, handled in the worker's event loop by :func:`serve_round`,
which :class:`RoundPlugin` installs on every worker of the cluster (present and future). The
message carries raw bytes (the client's pickle of the block keys, the function and its
arguments; the partials pickled back): plain msgpack for Dask's comm, none of its per-object
serialization, no thread hand-off on either side, the scheduler not involved.
"""

import time

from distributed.diagnostics.plugin import WorkerPlugin
from distributed.protocol import pickle

__all__ = ["ROUND_OP", "ROUND_STATS", "RoundPlugin", "run_group", "serve_round"]

#: The comm op of a direct round.
ROUND_OP = "dpsco_core_block_round"

#: [calls, seconds in the block functions] of this worker process's direct rounds (read by
#: ``bench/bench_dask.py`` through ``client.run(round_stats)``).
ROUND_STATS = [0, 0.0]


def run_group(fn, blocks, args):
    """``[fn(block, *a) ...]`` for the blocks of one worker, in order."""
    return [fn(block, *a) for block, a in zip(blocks, args)]


def serve_round(worker, payload=None):
    """One direct round on ``worker``: ``payload`` is the pickle of ``(keys, fn, args)``; runs
    ``fn`` on the blocks of ``keys`` (in this worker's memory) in order and returns
    ``{"status": "OK", "result": pickle of the partials}``, or ``{"status": "error", ...}``
    (a block not here, an error in a block: the client then runs the round as Dask tasks,
    which recover the block or raise the error)."""
    start = time.perf_counter()
    try:
        keys, fn, args = pickle.loads(payload)
        result = run_group(fn, [worker.data[key] for key in keys], args)
        return {"status": "OK", "result": pickle.dumps(result)}
    except Exception as exc:        # noqa: BLE001 - reported; the client re-runs as tasks
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        ROUND_STATS[0] += 1
        ROUND_STATS[1] += time.perf_counter() - start


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
