"""optimum.py keeps its per-coordinate level-1 products off the BLAS thread pool.

Why: OpenBLAS runs dot / axpy on more than 10,000 elements on its pthread pool, whose caller
and workers busy-wait; on a busy machine a worker woken onto its caller's CPU makes each call
cost scheduler time slices (measured up to ~9 ms per 20,000-element dot instead of ~30 us).
The property tested: the column coordinate descent and ``_cd_quadratic`` give bitwise the same
result with 1 and 2 BLAS threads (a threaded dot sums in another order, so equal bits mean the
threaded path was not taken), and show_config names the pools and the user-side setting.
No timing here: bench/bench_blas_after_kernel.py measures the speed.
"""

import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import dpsco_core
from dpsco_core import _openmp_env, optimum
from dpsco_core.penalties import L1
from dpsco_core.problems import Problem

threadpoolctl = pytest.importorskip("threadpoolctl")

# Above OpenBLAS's 10,000-element single-thread limit for level-1 calls, so that a BLAS dot
# of this length runs on 2 threads when 2 are allowed.
N_LONG = 12_000


def _under(limit, fn):
    with threadpoolctl.threadpool_limits(limits=limit, user_api="blas"):
        return fn()


def test_blas_serial_max_is_below_openblas_threading_limit():
    # The rows _cd_quadratic hands to daxpy are p <= _GRAM_MAX_FEATURES long (optimum) and
    # the length <= _BLAS_SERIAL_MAX test guards other callers (ssp): both must stay at or
    # below OpenBLAS's n <= 10,000 single-thread rule for axpy and dot.
    assert optimum._GRAM_MAX_FEATURES <= optimum._BLAS_SERIAL_MAX <= 10_000


@pytest.mark.parametrize("n", [100, optimum._BLAS_SERIAL_MAX, optimum._BLAS_SERIAL_MAX + 1,
                               N_LONG, 50_000])
def test_dot_is_independent_of_blas_threads(n):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    one, two = _under(1, lambda: optimum._dot(a, b)), _under(2, lambda: optimum._dot(a, b))
    assert one == two
    # a correct dot: within n eps sum|a b| of the correctly rounded sum
    exact = math.fsum(a * b)
    assert abs(one - exact) <= n * np.finfo(float).eps * float(np.sum(np.abs(a * b)))
    assert isinstance(one, float)


def test_dot_never_calls_blas_beyond_the_limit(monkeypatch):
    # Mechanism: beyond _BLAS_SERIAL_MAX the product is numpy's einsum without BLAS
    # (optimize=False: no tensordot/BLAS dispatch).
    calls = []
    real = np.einsum

    def spy(*args, **kwargs):
        calls.append(kwargs.get("optimize"))
        return real(*args, **kwargs)

    monkeypatch.setattr(optimum.np, "einsum", spy)
    a = np.ones(optimum._BLAS_SERIAL_MAX + 1)
    assert optimum._dot(a, a) == a.size
    assert calls == [False]
    optimum._dot(a[:10], a[:10])
    assert calls == [False]


def test_column_descent_is_bitwise_independent_of_blas_threads(monkeypatch, global_seed):
    # The column path (beyond _GRAM_MAX_FEATURES features) on n > 10,000 samples: before the
    # fix its dots ran on OpenBLAS's pool and 1 vs 2 threads differed in the last bit.
    monkeypatch.setattr(optimum, "_GRAM_MAX_FEATURES", 0)
    rng = np.random.default_rng(global_seed)
    X = rng.standard_normal((N_LONG, 6))
    y = X @ rng.standard_normal(6) + 0.5 * rng.standard_normal(N_LONG)
    problem = Problem(X, y, "squared", L1(0.05))
    one = _under(1, lambda: optimum.solve(problem))
    two = _under(2, lambda: optimum.solve(problem))
    assert one.method == two.method == "coordinate descent (columns)"
    assert one.converged and two.converged
    np.testing.assert_array_equal(one.coef, two.coef)
    assert one.n_iter == two.n_iter


def test_cd_quadratic_long_rows_do_not_call_daxpy(monkeypatch, global_seed):
    # Rows longer than _BLAS_SERIAL_MAX update the gradient with numpy, never BLAS (a p x p
    # matrix beyond 8,192 is 0.5 GB: the limit is lowered here): the same minimizer as the
    # daxpy path to rounding.
    rng = np.random.default_rng(global_seed)
    p = 40
    u = rng.standard_normal((p, p)) / np.sqrt(p)
    A = u @ u.T + np.eye(p)
    b = rng.standard_normal(p)
    pen = L1(0.3)
    w_blas, _ = optimum._cd_quadratic(A, b, pen, np.zeros(p), max_sweeps=10_000)

    def no_blas(*args, **kwargs):
        raise AssertionError("daxpy called on a row longer than _BLAS_SERIAL_MAX")

    monkeypatch.setattr(optimum, "_BLAS_SERIAL_MAX", p - 1)
    monkeypatch.setattr(optimum, "daxpy", no_blas)
    w_numpy, _ = optimum._cd_quadratic(A, b, pen, np.zeros(p), max_sweeps=10_000)
    np.testing.assert_allclose(w_numpy, w_blas, rtol=0, atol=1e-12)
    assert np.array_equal(w_numpy == 0, w_blas == 0)


def test_show_config_names_the_blas_pools_and_the_setting():
    buf = io.StringIO()
    import scipy.linalg  # noqa: F401  (maps scipy's OpenBLAS too)
    dpsco_core.show_config(file=buf)
    line = [ln for ln in buf.getvalue().splitlines() if ln.startswith("  BLAS threads")]
    assert len(line) == 1
    if _openmp_env._openblas_libraries():
        assert "OpenBLAS" in line[0]


def test_blas_note_with_one_thread_and_two():
    # Fresh processes: OpenBLAS reads OPENBLAS_NUM_THREADS when numpy loads it.
    code = ("import dpsco_core._openmp_env as e, numpy, scipy.linalg\n"
            "print(e.blas_note())\n")
    env_one = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env_two = {k: v for k, v in env_one.items()
               if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env_two["OPENBLAS_NUM_THREADS"] = "2"
    one = subprocess.run([sys.executable, "-c", code], env=env_one, capture_output=True,
                         text=True, check=True).stdout
    two = subprocess.run([sys.executable, "-c", code], env=env_two, capture_output=True,
                         text=True, check=True).stdout
    if "no OpenBLAS" in one:
        pytest.skip("numpy/scipy not linked to OpenBLAS here")
    assert "OPENBLAS_NUM_THREADS=1" in one and "no busy-waiting pool" in one
    assert "busy-wait" in two and "threadpool_limits(1, user_api='blas')" in two


def _openblas_threads():
    return sorted({info["num_threads"] for info in threadpoolctl.threadpool_info()
                   if info["internal_api"] == "openblas"})


def test_solve_runs_blas_on_one_thread_and_restores(monkeypatch, global_seed):
    # Mechanism: inside solve() every OpenBLAS pool is at 1 thread (threadpoolctl installed),
    # outside it the caller's counts are back; also when the solver raises.
    if not _openblas_threads():
        pytest.skip("no OpenBLAS loaded")
    before = _openblas_threads()
    seen = []
    real_finish = optimum._finish

    def spy(*args, **kwargs):
        seen.append(_openblas_threads())
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(optimum, "_finish", spy)
    rng = np.random.default_rng(global_seed)
    X = rng.standard_normal((200, 5))
    y = np.sign(X @ rng.standard_normal(5) + 0.1)
    Problem(X, X @ np.ones(5), "squared", L1(0.1)).solve()
    Problem(X, y, "logistic", L1(0.01)).solve()
    assert seen == [[1], [1]]
    assert _openblas_threads() == before
    with pytest.raises(NotImplementedError):
        Problem(X, y, "hinge").solve()
    assert _openblas_threads() == before


def test_one_blas_thread_without_threadpoolctl_is_a_no_op(monkeypatch, global_seed):
    monkeypatch.setattr(_openmp_env, "_BLAS_CONTROLLER", False)
    before = _openblas_threads()
    with _openmp_env.one_blas_thread():
        assert _openblas_threads() == before
    rng = np.random.default_rng(global_seed)
    X = rng.standard_normal((100, 4))
    assert Problem(X, X @ np.ones(4), "squared", L1(0.1)).solve().converged
