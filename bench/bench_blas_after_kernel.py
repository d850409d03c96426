"""Level-1 BLAS loops right after a dpsco-core kernel, on a machine with one busy CPU.

The slowdown measured here is OpenBLAS's, not a kernel's: its pool (numpy's and scipy's
wheels, pthreads, ``OMP_WAIT_POLICY`` ignored) runs dot/axpy on more than 10,000 elements on
2 threads, and both the caller (``exec_blas_async_wait``) and the workers
(``blas_thread_server``) wait by spinning on ``nop``. After ~0.1 s without BLAS work (any
kernel, or a ``time.sleep``) a worker sleeps; the next call wakes it, the scheduler places it
on the caller's CPU when the other CPU is busy, and the two spinners then hand over only at
preemption: each call costs one or two time slices. ``perf`` in the report of the session-10
``blas`` task. The remedies compared: one BLAS thread (``threadpoolctl``), and, for
dpsco-core's own loops, :func:`dpsco_core.optimum._dot` (no BLAS beyond 8,192 elements).

Each timed call runs right after ``setup``: a dpsco-core OpenMP kernel (the L1 prox on 2^21
coordinates, 2 threads) repeated for 0.3 s, or ``time.sleep(0.3)``, or nothing. A
``python -c "while True: pass"`` process keeps one CPU busy for the whole module (the effect
needs a busy CPU; ``DPSCO_BENCH_NO_COMPETITOR=1`` for the idle baseline). Ratios to the ``dpsco_core`` row (> 1:
that many times slower): in the Lasso group that row is the fit right after the kernel with
one BLAS thread (``threadpoolctl``, the setting show_config recommends); in the dot group it is
``optimum._dot``; in the optimum group, ``optimum.solve`` as shipped (one BLAS thread inside).
The slow mode is bimodal and sticky: a fit lands in it (~2 s instead of ~10 ms) when the woken
worker is placed on its caller's CPU, and stays in it while the worker keeps spinning, so any
row with default BLAS threads may show it, also "back-to-back"; one BLAS thread never did.
Say the machine's load with the numbers: on an idle machine all rows are close.

Run: ``python -m pytest bench/bench_blas_after_kernel.py`` or
``PYTHONPATH=. python bench/run.py -k blas_after``.
"""

import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core import optimum

ROUNDS = 7
GAP = 0.3                # > OpenBLAS's default thread timeout (2^28 cycles, ~0.1 s)
N_DOT, DOTS = 20_000, 1_000


@pytest.fixture(scope="module", autouse=True)
def busy_cpu():
    if os.environ.get("DPSCO_BENCH_NO_COMPETITOR") == "1":
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)
    yield
    proc.terminate()
    proc.wait()


@pytest.fixture(scope="module")
def california():
    X, y = dp.datasets.load_california()
    X = np.asfortranarray((X - X.mean(0)) / X.std(0))
    return X, y - y.mean()


_U = np.random.default_rng(0).standard_normal(1 << 21)
_L1 = dp.L1(0.5)


def _kernel():
    end = time.perf_counter() + GAP
    while time.perf_counter() < end:
        _L1.prox(_U, 0.3, n_threads=2)


def _sleep():
    time.sleep(GAP)


def _nothing():
    pass


def _lasso(X, y):
    # scikit-learn's dense coordinate descent: per coordinate one ddot and one daxpy on
    # n = 20,433 elements (threaded OpenBLAS); 10 epochs = ~160 level-1 calls
    from sklearn.linear_model import Lasso
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Lasso(alpha=0.01, tol=0.0, max_iter=10).fit(X, y)


def _lasso_one_blas_thread(X, y):
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1, user_api="blas"):
        _lasso(X, y)


LASSO_CASES = {
    # the "dpsco_core" row is the setting dpsco-core recommends (show_config): one BLAS thread
    "dpsco_core": (_kernel, _lasso_one_blas_thread),
    "after a kernel, default BLAS threads": (_kernel, _lasso),
    "after time.sleep(0.3), no kernel": (_sleep, _lasso),
    "back-to-back, no gap": (_nothing, _lasso),
}


@pytest.mark.parametrize("impl", list(LASSO_CASES))
def bench_lasso_after_kernel(benchmark, record, california, impl):
    pytest.importorskip("sklearn")
    if impl == "dpsco_core":
        pytest.importorskip("threadpoolctl")
    setup, fit = LASSO_CASES[impl]
    X, y = california
    fit(X, y)                                       # warm: pools created
    record(benchmark, "sklearn Lasso California, 10 epochs, after a 0.3 s gap (busy CPU)",
           impl, gap=GAP)
    benchmark.pedantic(fit, args=(X, y), setup=setup, rounds=ROUNDS, iterations=1)


_A = np.random.default_rng(1).standard_normal(N_DOT)
_B = np.random.default_rng(2).standard_normal(N_DOT)


def _dots_ours():
    for _ in range(DOTS):
        optimum._dot(_A, _B)


def _dots_blas():
    for _ in range(DOTS):
        float(_A @ _B)


@pytest.mark.parametrize("impl", ["dpsco_core", "numpy a @ b (OpenBLAS, default threads)"])
def bench_level1_dots_after_kernel(benchmark, record, impl):
    run = _dots_ours if impl == "dpsco_core" else _dots_blas
    run()
    record(benchmark, f"{DOTS:,} dots of {N_DOT:,} after a dpsco-core kernel (busy CPU)", impl)
    benchmark.pedantic(run, setup=_kernel, rounds=ROUNDS, iterations=1)


@pytest.mark.parametrize("impl", ["dpsco_core", "without threadpoolctl (BLAS threads as set)"])
def bench_optimum_after_kernel(benchmark, record, california, impl, monkeypatch):
    # optimum.solve's ~100 short BLAS calls (Gram path: certificates and support solves) under
    # dpsco-core's one_blas_thread(), and as they run when threadpoolctl is not installed
    from dpsco_core import _openmp_env
    if impl == "dpsco_core":
        pytest.importorskip("threadpoolctl")
    else:
        monkeypatch.setattr(_openmp_env, "_BLAS_CONTROLLER", False)
    X, y = california
    problem = dp.Problem(X, y, "squared", dp.L1(0.01))
    optimum.solve(problem)
    record(benchmark, "optimum.solve California LASSO (Gram path), after a 0.3 s kernel "
           "(busy CPU)", impl)
    benchmark.pedantic(optimum.solve, args=(problem,), setup=_kernel, rounds=ROUNDS,
                       iterations=1)
