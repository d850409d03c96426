"""The Dask executor (issue 21): DP-SGD epochs on 2 worker processes vs 1, and its per-round
overhead against the in-process executors.

Usage: ``python bench/bench_dask.py [--n 2000000] [--p 100] [--quick] [--overhead-only]``.
Prints two Markdown tables (recorded in ``bench/README.md``) and the load average around each
measurement: the speed-up of 2 workers over 1 needs two idle cores, and the round-trip latency
of Dask grows with the machine's load.

1. **Scaling.** A synthetic logistic problem (n rows, p features, 4 row blocks) generated on
   the workers (:func:`dpsco_core.parallel.blocks.synthetic_block`; nothing is sent from the
   client), then DP-SGD (Poisson rate q, public beta) and full-batch DP-GD (q = 1) on a
   ``LocalCluster`` of 1 and of 2 worker processes (one thread each). The same blocking and
   seed give the same bits on both clusters: the script checks it. Time per epoch from
   ``Result.stats["time"]`` (the optimisation loop, without calibration or data loading).
2. **Overhead.** A small problem (n = 20,000, p = 20, 2 blocks): time per DP-SGD step (q =
   0.01) and per DP-CD update with the fused in-process kernel, the in-process
   ``BlockExecutor`` and the ``DaskExecutor`` (2 workers) with its direct rounds (default: a
   message straight to each worker's round handler) and as Dask tasks (``direct=False``); the
   difference is the cost of one round (client -> workers -> client; through the scheduler
   for tasks), and the CPU time per DP-SGD step of the client's process (with the
   ``LocalCluster``'s scheduler) and of the busiest worker, their idle rates subtracted: CPU
   time hardly depends on the machine's load, the wall time does.

This file has no pytest-benchmark functions (``bench/run.py`` does not run it): starting
clusters of 1.6 GB of data does not fit a timing loop.
"""

import argparse
import logging
import os
import time
import warnings


def _load():
    return "%.1f" % os.getloadavg()[0]


def _cluster(n_workers):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.CRITICAL,
                           memory_limit="8GB")
    return cluster, Client(cluster)


def _busy(ex):
    """(calls, seconds) in the workers' direct-round handlers (the block functions), summed
    over the workers."""
    from dpsco_core.parallel._dask_worker import round_stats

    stats = ex.client.run(round_stats).values()
    return sum(s[0] for s in stats), sum(s[1] for s in stats)


def scaling(n_workers, n, p, n_blocks, q, epochs, gd_steps):
    import numpy as np

    import dpsco_core as dp
    from dpsco_core.losses import check_loss
    from dpsco_core.parallel import DaskExecutor
    from dpsco_core.parallel.blocks import synthetic_block

    cluster, client = _cluster(n_workers)
    try:
        ex = DaskExecutor(client)
        loss = check_loss("logistic")
        start = time.perf_counter()
        prob = ex.load(synthetic_block, [(0, b, n // n_blocks, p, loss) for b in range(n_blocks)],
                       loss="logistic", penalty=dp.L2(1e-4))
        load_time = time.perf_counter() - start
        placement = {}
        for workers in client.who_has(prob.blocks).values():
            for w in workers:
                placement[w] = placement.get(w, 0) + 1
        kw = dict(epsilon=1.0, delta=1.0 / n ** 2, smoothness=0.25, random_state=0,
                  record_history=False)
        dp.dp_sgd(prob, passes=q, sample_rate=q, **kw)          # warm-up: one step
        load_before = _load()
        sgd_calls, sgd_seconds = _busy(ex)
        sgd = dp.dp_sgd(prob, passes=epochs, sample_rate=q, **kw)
        gd_calls, gd_seconds = _busy(ex)
        gd = dp.dp_sgd(prob, passes=gd_steps, sample_rate=1.0, **kw)
        end_calls, end_seconds = _busy(ex)
        # busy: the workers' time in the block functions over the wall time (the number of
        # workers computing at once, on average); per block: that time per block and step
        per_block = len(prob.blocks)
        return {"workers": n_workers, "load_data": load_time, "placement": placement,
                "sgd_epoch": sgd.stats["time"] / epochs, "sgd_steps": sgd.stats["steps"],
                "gd_step": gd.stats["time"] / gd_steps, "coef": (sgd.coef, gd.coef),
                "busy": (end_seconds - gd_seconds) / gd.stats["time"],
                "task": (end_seconds - gd_seconds) / (gd_steps * per_block),
                "sgd_busy": (gd_seconds - sgd_seconds) / sgd.stats["time"],
                "sgd_task": (gd_seconds - sgd_seconds) / (sgd.stats["steps"] * per_block),
                "load": f"{load_before} -> {_load()}"}
    finally:
        client.close()
        cluster.close()


def overhead(steps, updates):
    import numpy as np

    import dpsco_core as dp
    from dpsco_core.parallel import BlockExecutor, DaskExecutor

    rng = np.random.default_rng(0)
    n, p = 20_000, 20
    X = rng.standard_normal((n, p)) / np.sqrt(p)
    y = np.where(X @ rng.standard_normal(p) >= 0, 1.0, -1.0)
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-4))
    sq = dp.Problem(X, X @ np.ones(p), loss="squared", penalty=dp.L1(1e-3))
    cluster, client = _cluster(2)
    try:
        # CPU per round: the client's process (with the LocalCluster's scheduler) and each
        # worker's, minus their idle rates (heartbeats, ticks) measured first over 3 s
        def cpu():
            return time.process_time(), client.run(time.process_time)
        c0, w0 = cpu()
        t0 = time.perf_counter()
        time.sleep(3.0)
        c1, w1 = cpu()
        idle = (c1 - c0) / (time.perf_counter() - t0), {
            w: (w1[w] - w0[w]) / (time.perf_counter() - t0) for w in w0}
        rows = {}
        for name, ex in (("fused kernel (executor=None)", None),
                         ("BlockExecutor (in process, 2 blocks)", BlockExecutor(n // 2)),
                         ("DaskExecutor (2 workers, 2 blocks)", DaskExecutor(client, n // 2)),
                         ("DaskExecutor, direct=False (rounds as tasks)",
                          DaskExecutor(client, n // 2, direct=False))):
            kw = dict(epsilon=1.0, delta=1e-8, smoothness=0.25, random_state=0,
                      record_history=False, executor=ex)
            dp.dp_sgd(prob, passes=0.01, sample_rate=0.01, **kw)    # warm-up (binds blocks)
            (c0, w0), t0 = cpu(), time.perf_counter()
            res = dp.dp_sgd(prob, passes=steps * 0.01, sample_rate=0.01, **kw)
            (c1, w1), t1 = cpu(), time.perf_counter()
            n_steps = res.stats["steps"]
            client_cpu = ((c1 - c0) - idle[0] * (t1 - t0)) / n_steps
            worker_cpu = max(((w1[w] - w0[w]) - idle[1][w] * (t1 - t0)) / n_steps for w in w0)
            cd_kw = dict(epsilon=1.0, delta=1e-8, n_outer=1, random_state=0,
                         smoothness=np.ones(p), record_history=False, executor=ex)
            dp.dp_cd(sq, n_inner=2, **cd_kw)
            cd = dp.dp_cd(sq, n_inner=updates, **cd_kw)
            rows[name] = (res.stats["time"] / res.stats["steps"], cd.stats["time"] / updates,
                          client_cpu, worker_cpu, _load())
        return rows
    finally:
        client.close()
        cluster.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--q", type=float, default=0.1)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="n = 200,000 (a smoke run)")
    parser.add_argument("--overhead-only", action="store_true",
                        help="only the per-round overhead table (no 1.6 GB clusters)")
    args = parser.parse_args()
    n = 200_000 if args.quick else args.n
    warnings.simplefilter("ignore")
    print(f"load average at start: {_load()} on {os.cpu_count()} cores")
    if not args.overhead_only:
        scaling_table(n, args)
    rows = overhead(steps=100, updates=100)
    print("\nPer-round overhead, n = 20,000, p = 20 (DP-SGD q = 0.01: ~200 rows per step)\n")
    print("| executor | DP-SGD step | DP-CD update | DP-SGD step: client CPU (with the "
          "scheduler) | DP-SGD step: busiest worker's CPU | load (1 min) |")
    print("|---|---|---|---|---|---|")
    for name, (step, update, client_cpu, worker_cpu, load) in rows.items():
        print(f"| {name} | {step * 1e3:.2f} ms | {update * 1e3:.2f} ms | "
              f"{client_cpu * 1e3:.2f} ms | {worker_cpu * 1e3:.2f} ms | {load} |")


def scaling_table(n, args):
    import numpy as np

    results = [scaling(w, n, args.p, 4, args.q, args.epochs, 3) for w in (1, 2)]
    same = all(np.array_equal(a, b) for a, b in zip(results[0]["coef"], results[1]["coef"]))
    print(f"\nDP-SGD / DP-GD, n = {n:,}, p = {args.p}, 4 blocks generated on the workers, "
          f"q = {args.q} ({results[0]['sgd_steps']} steps in {args.epochs:g} epochs); "
          f"same bits on 1 and 2 workers: {same}\n")
    print("| workers | data generated in | DP-SGD epoch | DP-SGD block compute per step | "
          "workers busy (DP-SGD) | DP-GD step | DP-GD block compute | workers busy (DP-GD) | "
          "blocks per worker | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['workers']} | {r['load_data']:.1f} s | {r['sgd_epoch']:.3f} s | "
              f"{r['sgd_task'] * 1e3:.1f} ms | {r['sgd_busy']:.2f} | "
              f"{r['gd_step']:.3f} s | {r['task']:.3f} s | {r['busy']:.2f} | "
              f"{sorted(r['placement'].values())} | {r['load']} |")
    print(f"| speed-up | | {results[0]['sgd_epoch'] / results[1]['sgd_epoch']:.2f}x | | | "
          f"{results[0]['gd_step'] / results[1]['gd_step']:.2f}x | | | | |")


if __name__ == "__main__":
    main()
