"""The Dask executor on a LocalCluster of two worker processes (issue 21).

Every run is compared bit for bit with the in-process BlockExecutor on the same blocking and
seed. The problems are small (a few rounds each): a Dask round trip costs milliseconds on an
idle machine and up to ~0.2 s on the loaded CI host.
"""

import gc
import logging
import math
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed: pip install 'dpsco-core[test]' "
    "(or the [distributed] extra) to test the Dask executor")
da = pytest.importorskip("dask.array", reason="dask.array is not installed")

import dpsco_core as dp  # noqa: E402
from dpsco_core.exceptions import PrivacyLeakWarning  # noqa: E402
from dpsco_core.parallel import BlockExecutor, DaskExecutor, SerialExecutor  # noqa: E402
from dpsco_core.parallel import blocks  # noqa: E402
from dpsco_core.parallel._dask_worker import round_stats  # noqa: E402

BLOCK = 700


# The client's connection pool retries a refused connection until its timeout (the Client's
# timeout=60 below, which is also its patience for the scheduler at start-up on a loaded host).
# A direct round to a worker the tests below just SIGKILLed connects to the dead address, so
# each such test waited the full 60 s before the round fell back to tasks whenever the kill
# landed between two rounds (one run in three; ~60 s of the suite's wall time). A live local
# worker answers a connect in milliseconds even on the loaded CI host, and a direct round that
# times out anyway falls back to tasks with the same bits: 10 s loses nothing.
POOL_CONNECT_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        with distributed.Client(cluster, timeout=60) as c:
            c.rpc.timeout = POOL_CONNECT_TIMEOUT
            yield c


@pytest.fixture(autouse=True)
def _no_leak_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def _data(n=2000, p=5, seed=0, classify=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) / math.sqrt(p)
    y = X @ np.linspace(-1, 1, p) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y >= 0, 1.0, -1.0) if classify else y)


def test_dp_sgd_and_dp_gd_same_bits_as_in_process(client):
    X, y = _data(classify=True)
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    local, remote = BlockExecutor(block_rows=BLOCK), DaskExecutor(client, block_rows=BLOCK)
    for kw in (dict(sample_rate=0.25, passes=1),                   # Poisson, 4 steps
               dict(batch_size=500, sampling="shuffle", passes=1),  # 4 steps
               dict(sample_rate=1.0, passes=2)):                    # full-batch DP-GD
        a = dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, random_state=5, executor=local, **kw)
        b = dp.dp_sgd(prob, epsilon=1.0, delta=1e-6, random_state=5, executor=remote, **kw)
        assert np.array_equal(a.coef, b.coef), kw
        assert np.array_equal(a.history.objective, b.history.objective), kw
        assert a.stats["mean_batch_size"] == b.stats["mean_batch_size"]
    assert remote.round_trips > 0


def test_task_rounds_and_actor_rounds_same_bits(client):
    # direct=False: every round as Dask tasks (one per worker); direct=True: one message
    # straight to each worker's round handler; both the bits of the in-process executor
    X, y = _data(classify=True)
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, random_state=5, sample_rate=0.25, passes=1)
    ref = dp.dp_sgd(prob, executor=BlockExecutor(block_rows=BLOCK), **kw).coef
    tasks = DaskExecutor(client, block_rows=BLOCK, direct=False)
    assert np.array_equal(dp.dp_sgd(prob, executor=tasks, **kw).coef, ref)
    assert not tasks._plugin
    before = client.run(round_stats)
    direct = DaskExecutor(client, block_rows=BLOCK)
    assert np.array_equal(dp.dp_sgd(prob, executor=direct, **kw).coef, ref)
    after = client.run(round_stats)
    # every round went to both workers' handlers (each holds blocks of the 3)
    assert all(after[w][0] - before.get(w, (0, 0))[0] >= direct.round_trips - 1 for w in after)


def test_poisson_batches_drawn_ahead_same_bits(client):
    # the workers draw step k+1's Poisson batches while the client takes step k; the rows are
    # those poisson_rows draws when the step comes, so the bits do not change
    from dpsco_core.parallel import _dask_worker

    def used():
        return _dask_worker.AHEAD_USED[0]

    def set_ahead(on, min_rows=4096):
        _dask_worker.DRAW_AHEAD[0], _dask_worker.AHEAD_MIN_ROWS[0] = on, min_rows
    X, y = _data(classify=True)
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, random_state=3, sample_rate=0.1, passes=1)
    ref = dp.dp_sgd(prob, executor=BlockExecutor(block_rows=BLOCK), **kw).coef
    ex = DaskExecutor(client, block_rows=BLOCK)
    client.run(set_ahead, True, 1)      # the batches here are small (70 rows per block)
    before = client.run(used)
    assert np.array_equal(dp.dp_sgd(prob, executor=ex, **kw).coef, ref)
    after = client.run(used)
    # 10 steps: the batches of steps 1-9 of each worker's blocks drawn ahead (a batch drawn
    # when its step comes, if its draw had not been scheduled yet, is the same batch)
    assert all(after[w] - before[w] >= 5 for w in after), (before, after)
    try:
        client.run(set_ahead, False)
        assert np.array_equal(dp.dp_sgd(prob, executor=ex, **kw).coef, ref)
    finally:
        client.run(set_ahead, True)


def _held(client):
    return sum(client.run(lambda dask_worker: len(dask_worker.data)).values())


def _wait_held(client, at_most, timeout=20.0):
    deadline = time.monotonic() + timeout
    while _held(client) > at_most and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    return _held(client)


def test_blocks_freed_when_problem_deleted_or_executor_closed(client):
    # nothing on the workers keeps a block alive but the client's futures: deleting a
    # BlockedProblem frees its blocks; close() (or leaving a with block) frees those of the
    # Problems the executor cut and cached
    gc.collect()
    base = _wait_held(client, 0, timeout=5.0)
    X, y = _data()
    kw = dict(epsilon=1.0, delta=1e-6, random_state=0, sample_rate=0.5, passes=1,
              record_history=False)
    with DaskExecutor(client, block_rows=BLOCK) as ex:
        prob = ex.problem(X, y, loss="squared")
        dp.dp_sgd(prob, **kw)
        assert _held(client) >= base + 3
        del prob
        assert _wait_held(client, base) <= base
        source = dp.Problem(X, y, loss="squared")
        dp.dp_sgd(source, executor=ex, **kw)
        assert _held(client) >= base + 3
    assert _wait_held(client, base) <= base
    # the executor stays usable after close(): the Problem is scattered again
    assert np.array_equal(dp.dp_sgd(source, executor=ex, **kw).coef,
                          dp.dp_sgd(source, executor=BlockExecutor(BLOCK), **kw).coef)
    ex.close()


def _fail_on_block(block, index):
    if index == 1:
        raise ValueError(f"block {index} refused")
    return index


def test_error_in_a_block_is_raised_not_swallowed(client):
    # the direct round fails, the round runs again as tasks, and the task's error reaches the
    # caller; the next round goes straight to the workers again
    X, y = _data(n=1500)
    ex = DaskExecutor(client, block_rows=BLOCK)
    prob = ex.problem(X, y, loss="squared")
    assert ex._map(_fail_on_block, prob.blocks, [(0,), (2,), (3,)]) == [0, 2, 3]
    assert ex._plugin
    with pytest.raises(ValueError, match="block 1 refused"):
        ex._map(_fail_on_block, prob.blocks, [(0,), (1,), (2,)])
    before = client.run(round_stats)
    assert ex._map(_fail_on_block, prob.blocks, [(0,), (2,), (3,)]) == [0, 2, 3]
    assert all(client.run(round_stats)[w][0] == before[w][0] + 1 for w in before)


def test_dp_cd_same_bits_margins_on_workers(client):
    X, y = _data()
    prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, n_outer=2, n_inner=6, random_state=1)
    a = dp.dp_cd(prob, executor=BlockExecutor(block_rows=BLOCK), **kw)
    b = dp.dp_cd(prob, executor=DaskExecutor(client, block_rows=BLOCK), **kw)
    assert np.array_equal(a.coef, b.coef)
    assert a.stats["clipped_fraction"] == b.stats["clipped_fraction"]
    fused = dp.dp_cd(prob, **kw)
    np.testing.assert_allclose(b.coef, fused.coef, rtol=0, atol=1e-12)
    # the margins were released on the workers at the end of the run
    held = client.run(lambda: len(blocks._CD_STATE))
    assert set(held.values()) == {0}


def test_dp_srgd_same_bits(client):
    X, y = _data(n=1200)
    prob = dp.Problem(X, y, loss="half_squared")
    kw = dict(epsilon=1.0, delta=1e-6, beta=1.0, radius=5.0, batch_size=300, random_state=2)
    a = dp.solvers.dp_srgd(prob, executor=BlockExecutor(block_rows=BLOCK), **kw)
    b = dp.solvers.dp_srgd(prob, executor=DaskExecutor(client, block_rows=BLOCK), **kw)
    assert np.array_equal(a.coef, b.coef) and a.stats["rounds"] == 4


def test_resque_grad_batch_one_round_same_bits(client):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((9000, 3))     # three QUERY_CHUNKs

    def oracle(Zc, seed):
        return Zc * np.random.default_rng(seed).standard_normal(Zc.shape[0])[:, None]

    ex = DaskExecutor(client)
    G = ex.grad_batch(oracle, Z, 11)
    assert np.array_equal(G, SerialExecutor().grad_batch(oracle, Z, 11))
    assert ex.stats.query_depth == 1 and ex.stats.total_queries == 9000
    assert ex.round_trips == 1


def _cd_run(problem, step, clip, random_state):
    return dp.dp_cd(problem, epsilon=1.0, delta=1e-6, passes=2, step=step, clip=clip,
                    smoothness="exact", random_state=random_state, record_history=False).coef


def test_map_runs_reproduces_dp_cd_grid(client):
    X, y = _data(n=500)
    prob = dp.Problem(X, y, loss="squared")
    grid = dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-6, steps=[0.5, 1.0], clips=[1.0],
                         passes=2, smoothness="exact", random_state=3, evaluate=False)
    items = [dict(step=s, clip=1.0, random_state=grid.seed_sequences[i])
             for i, s in enumerate([0.5, 1.0])]
    coefs = DaskExecutor(client).map_runs(_cd_run, items, shared={"problem": prob})
    assert np.array_equal(np.array(coefs), grid.coef.reshape(2, -1))


def test_files_and_dask_array_blocks(client, tmp_path):
    # .npy per block, one memory-mapped .npy, Parquet per block and a dask.array: the same
    # blocks, so bitwise the same run; X is read on the workers only
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
    import pyarrow as pa

    X, y = _data(n=2000, classify=True)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    x_files, y_files, parquet = [], [], []
    for b, lo in enumerate(range(0, 2000, BLOCK)):
        x_files.append(str(tmp_path / f"X{b}.npy"))
        y_files.append(str(tmp_path / f"y{b}.npy"))
        np.save(x_files[-1], X[lo:lo + BLOCK])
        np.save(y_files[-1], y[lo:lo + BLOCK])
        cols = {f"x{j}": X[lo:lo + BLOCK, j] for j in range(X.shape[1])}
        parquet.append(str(tmp_path / f"part{b}.parquet"))
        pq.write_table(pa.table({**cols, "label": y[lo:lo + BLOCK]}), parquet[-1])
    ex = DaskExecutor(client, block_rows=BLOCK)
    sources = [ex.problem(x_files, y_files, loss="logistic"),
               ex.problem(str(tmp_path / "X.npy"), str(tmp_path / "y.npy"), loss="logistic"),
               ex.problem(parquet, "label", loss="logistic"),
               ex.problem(da.from_array(X, chunks=(BLOCK, -1)), da.from_array(y, chunks=BLOCK),
                          loss="logistic")]
    kw = dict(epsilon=1.0, delta=1e-6, passes=1, sample_rate=0.5, random_state=0,
              smoothness=1.0, record_history=False)
    ref = dp.dp_sgd(BlockExecutor(block_rows=BLOCK).problem(X, y, loss="logistic"), **kw).coef
    for prob in sources:
        assert list(prob.block_sizes) == [700, 700, 600]
        assert np.array_equal(dp.dp_sgd(prob, **kw).coef, ref)
    gd = dp.dp_cd(sources[0], epsilon=1.0, delta=1e-6, n_outer=1, n_inner=3, random_state=0,
                  record_history=False)
    assert np.all(np.isfinite(gd.coef))


# ----------------------------------------------------------------------------- failures

def _run_and_kill(client, ex, solve, after=3):
    """Run ``solve()`` in a thread; SIGKILL one worker process once ``after`` rounds are done;
    return what ``solve`` returned or raised. The nanny restarts the worker."""
    pids = list(client.run(os.getpid).values())
    out = []

    def target():
        try:
            out.append(solve())
        except Exception as exc:       # noqa: BLE001 - handed to the test
            out.append(exc)
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while ex.round_trips < after and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert thread.is_alive(), "the run ended before a worker could be killed"
    os.kill(pids[0], signal.SIGKILL)
    thread.join(120)
    assert not thread.is_alive(), "the run hung after a worker was lost"
    client.wait_for_workers(2, timeout=60)
    return out[0]


def test_worker_lost_mid_run_same_result(client):
    # blocks made on the workers by tasks: Dask recomputes a lost block elsewhere, reruns the
    # lost round, and the DP-CD margins are replayed exactly from the client's log
    loss = dp.losses.check_loss("squared")
    args = [(7, b, 400, 4, loss) for b in range(4)]
    kw = dict(epsilon=1.0, delta=1e-6, n_outer=2, n_inner=10, random_state=0,
              smoothness=np.ones(4), record_history=False)
    ref = dp.dp_cd(BlockExecutor().load(blocks.synthetic_block, args), **kw).coef
    ex = DaskExecutor(client)
    prob = ex.load(blocks.synthetic_block, args)
    start = ex.round_trips
    coef = _run_and_kill(client, ex, lambda: dp.dp_cd(prob, **kw).coef, after=start + 4)
    assert not isinstance(coef, Exception), coef
    assert np.array_equal(coef, ref)
    assert ex.replays >= 1          # the killed worker's blocks rebuilt their margins


def test_worker_lost_mid_dp_sgd_same_result(client):
    # DP-SGD driven from the client's event loop: the failed direct round runs again through
    # the task path (the lost blocks recomputed elsewhere), then the loop resumes directly
    loss = dp.losses.check_loss("logistic")
    args = [(5, b, 500, 4, loss) for b in range(4)]
    kw = dict(epsilon=1.0, delta=1e-6, passes=30, sample_rate=0.2, smoothness=1.0,
              random_state=0, record_history=False)
    ref = dp.dp_sgd(BlockExecutor().load(blocks.synthetic_block, args, loss="logistic"),
                    **kw).coef
    ex = DaskExecutor(client)
    prob = ex.load(blocks.synthetic_block, args, loss="logistic")
    dp.dp_sgd(prob, **dict(kw, passes=1))
    start = ex.round_trips
    coef = _run_and_kill(client, ex, lambda: dp.dp_sgd(prob, **kw).coef, after=start + 20)
    assert not isinstance(coef, Exception), coef
    assert np.array_equal(coef, ref)


def test_lost_scattered_block_raises_clear_error(client):
    X, y = _data(n=1600)
    ex = DaskExecutor(client, block_rows=400)
    prob = ex.problem(X, y, loss="squared")
    start = ex.round_trips
    kw = dict(epsilon=1.0, delta=1e-6, passes=40, sample_rate=0.5, smoothness=1.0,
              random_state=0, record_history=False)
    err = _run_and_kill(client, ex, lambda: dp.dp_sgd(prob, **kw), after=start + 3)
    if not isinstance(err, Exception):     # the killed worker held none of the blocks
        pytest.skip("the killed worker held no scattered block")
    assert isinstance(err, RuntimeError) and "scattered" in str(err), err


def test_sparse_npz_files_loaded_on_the_workers(client, tmp_path):
    # a list of SciPy .npz files (one CSR block each, one stored as CSC) and .npy labels:
    # the blocks of the same sparse X cut in memory, so bitwise the same runs
    import scipy.sparse as sp
    X = sp.random(2000, 12, density=0.2, random_state=4, format="csr")
    y = np.where(X @ np.linspace(-1, 1, 12) >= 0, 1.0, -1.0)
    x_files, y_files = [], []
    for b, lo in enumerate(range(0, 2000, BLOCK)):
        x_files.append(str(tmp_path / f"X{b}.npz"))
        y_files.append(str(tmp_path / f"y{b}.npy"))
        part = X[lo:lo + BLOCK]
        sp.save_npz(x_files[-1], part.tocsc() if b == 1 else part)
        np.save(y_files[-1], y[lo:lo + BLOCK])
    ex = DaskExecutor(client, block_rows=BLOCK)
    prob = ex.problem(x_files, y_files, loss="logistic", penalty=dp.L2(1e-3))
    assert list(prob.block_sizes) == [700, 700, 600] and prob.n_features == 12
    assert not any(h.key in ex._scattered for h in prob.blocks)     # read by the workers
    local = BlockExecutor(block_rows=BLOCK).problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, random_state=5, sample_rate=0.25, passes=1)
    assert np.array_equal(dp.dp_sgd(prob, **kw).coef, dp.dp_sgd(local, **kw).coef)
    kw = dict(epsilon=1.0, delta=1e-6, n_outer=1, n_inner=6, random_state=1,
              smoothness=np.ones(12))
    assert np.array_equal(dp.dp_cd(prob, **kw).coef, dp.dp_cd(local, **kw).coef)
    with pytest.raises(ValueError, match="all .npy"):
        ex.problem([x_files[0], str(tmp_path / "X.npy")], y_files[:2], loss="logistic")


def test_sparse_csr_blocks_and_private_smoothness_same_bits(client):
    # CSR row blocks on the workers: DP-SGD (Poisson) and DP-CD (a sparse column's nonzero
    # rows, with smoothness="private": two reductions over the blocks) bitwise the in-process
    # BlockExecutor
    import scipy.sparse as sp
    X = sp.random(2000, 12, density=0.2, random_state=4, format="csr")
    w = np.linspace(-1, 1, 12)
    prob = dp.Problem(X, np.where(X @ w >= 0, 1.0, -1.0), loss="logistic",
                      penalty=dp.L2(1e-3))
    local, remote = BlockExecutor(block_rows=BLOCK), DaskExecutor(client, block_rows=BLOCK)
    kw = dict(epsilon=1.0, delta=1e-6, random_state=5, sample_rate=0.25, passes=1)
    a = dp.dp_sgd(prob, executor=local, **kw)
    b = dp.dp_sgd(prob, executor=remote, **kw)
    assert np.array_equal(a.coef, b.coef)
    assert np.array_equal(a.history.objective, b.history.objective)
    sq = dp.Problem(X, X @ w, loss="squared", penalty=dp.L1(1e-3))
    kw = dict(epsilon=1.0, delta=1e-6, n_outer=2, n_inner=6, random_state=1,
              smoothness="private")
    a = dp.dp_cd(sq, executor=local, **kw)
    b = dp.dp_cd(sq, executor=remote, **kw)
    assert np.array_equal(a.coef, b.coef)
    assert a.stats["clipped_fraction"] == b.stats["clipped_fraction"]


def test_interrupted_run_stops_its_rounds(client):
    # an exception in the calling thread while the rounds run from the event loop (as
    # KeyboardInterrupt would be): the loop stops before its next round, none runs on
    X, y = _data(n=1400, classify=True)
    ex = DaskExecutor(client, block_rows=BLOCK)
    prob = ex.problem(X, y, loss="logistic")
    kw = dict(epsilon=1.0, delta=1e-6, random_state=0, sample_rate=0.5, passes=2000,
              record_history=False)
    dp.dp_sgd(prob, **dict(kw, passes=1))      # holders cached: the next run drives directly
    done = []

    def interrupt():
        deadline = time.monotonic() + 30
        while ex.round_trips < start + 5 and time.monotonic() < deadline:
            time.sleep(0.002)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted
    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        start = ex.round_trips
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(Interrupted):
            dp.dp_sgd(prob, **kw)
        stopped = ex.round_trips
        time.sleep(0.5)
        done.append(ex.round_trips - stopped)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert stopped < start + 4000 and done[0] <= 1
