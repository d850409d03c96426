"""DP-CD: kernel vs its NumPy twin, plain NumPy DP-CD and scikit-learn's coordinate descent.

Targets (issue 18), all as ratios from one run:
- California (20,433 x 8, LASSO): time per pass at most 1.0x one epoch of scikit-learn's
  ``Lasso`` coordinate descent, and at least 5x faster than plain NumPy DP-CD with residual
  caching;
- dense 1e6 x 100 and sparse CSC (n = 100,000, p = 10,000, 0.1% density): per pass at most
  1.3x a scikit-learn ``Lasso`` epoch on the same matrix;
- grid mode, 1,000 configurations: 2 threads at least 1.8x faster than 1, identical results.
Each timed call does PASSES passes (scikit-learn: PASSES epochs with tol=0, so it never stops
early, checked by ``n_iter_``), so fixed overheads are shared by all implementations; the
``[kernel]`` rows time the compiled kernel alone. scikit-learn runs with one BLAS thread
(``threadpoolctl``): its fastest setting on the 2-core benchmark machine (with OpenBLAS's
threads its California epoch took 6x longer under load).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core.reference import cd as twin

PASSES = 50


# lambda = 1e-3 lambda_max: with a larger lambda scikit-learn's CD reaches a computed duality
# gap <= 0 within a few epochs and stops, even with tol=0 (at 0.1 lambda_max: after 2 of 50
# epochs), which would time 2 epochs against our 50 passes.
LAMBDA_FRACTION = 1e-3


@pytest.fixture(scope="module")
def california():
    X, y = dp.datasets.load_california()
    lam_max = 2 * np.max(np.abs(X.T @ y)) / len(y)
    return dp.Problem(X, y, loss="squared", penalty=dp.L1(LAMBDA_FRACTION * lam_max))


@pytest.fixture(scope="module")
def sparse_problem():
    rng = np.random.default_rng(0)
    X = sp.random(100_000, 10_000, density=0.001, format="csc", random_state=rng)
    y = X @ rng.standard_normal(10_000) + 0.1 * rng.standard_normal(100_000)
    lam_max = 2 * np.max(np.abs(X.T @ y)) / X.shape[0]
    return dp.Problem(X, y, loss="squared", penalty=dp.L1(LAMBDA_FRACTION * lam_max))


def _dp_cd(problem, passes):
    return dp.dp_cd(problem, epsilon=1.0, delta=1e-9, passes=passes, clip=1e4, average=False,
                    random_state=0, record_history=False)


def _sklearn_lasso(problem, epochs, selection="cyclic"):
    # scikit-learn's code path: Lasso.fit -> enet_coordinate_descent (dense, Cython with BLAS
    # ddot/daxpy per coordinate) or sparse_enet_coordinate_descent (CSC), precompute=False
    from sklearn.linear_model import Lasso
    from threadpoolctl import threadpool_limits
    X = problem.X_csc() if problem.is_sparse else problem.X_fortran()
    model = Lasso(alpha=problem.penalty.lam / 2, fit_intercept=False, max_iter=epochs, tol=0.0,
                  selection=selection, copy_X=False, random_state=0)
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        model.fit(X, problem.y)
    # the comparison is per epoch: scikit-learn must not have stopped early
    assert model.n_iter_ == epochs, (model.n_iter_, epochs)


def bench_california_dpsco_core(benchmark, record, california):
    record(benchmark, f"dp_cd California LASSO, {PASSES} passes", "dpsco_core", passes=PASSES)
    benchmark(_dp_cd, california, PASSES)


def bench_california_sklearn(benchmark, record, california):
    pytest.importorskip("sklearn")
    record(benchmark, f"dp_cd California LASSO, {PASSES} passes",
           "scikit-learn Lasso (non-private CD)", passes=PASSES)
    benchmark(_sklearn_lasso, california, PASSES)


def _kernel_runner(problem, passes, cyclic=False):
    """The compiled kernel alone for ``passes`` passes (the constants a dp_cd call computes);
    ``cyclic=True`` selects coordinates in order (not dp_cd's rule: a speed reference only)."""
    from dpsco_core._kernels import _cd

    res = _dp_cd(problem, 1)
    steps, clips, noise = res.stats["steps"], res.stats["clips"], res.stats["noise_scales"]
    p, n = problem.n_features, problem.n_samples
    margins = np.empty(n)
    head = (problem.y, problem.loss.kind, problem.loss.param, problem.penalty.kind,
            *problem.penalty.params, steps, clips, noise)

    def run():
        gen = np.random.PCG64DXSM(0)
        if problem.is_sparse:
            X = problem.X_csc()
            _cd.cd_csc(X.data, X.indices, X.indptr, n, *head, np.zeros(p), passes, p, False,
                       cyclic, 0, gen, margins, normaliser=n, count_clipped=False)
        else:
            _cd.cd_dense(problem.X_fortran(), *head, np.zeros(p), passes, p, False, False, 0,
                         gen, margins, normaliser=n, count_clipped=False)
    return run


def bench_california_kernel(benchmark, record, california):
    record(benchmark, f"dp_cd California LASSO, {PASSES} passes", "dpsco_core[kernel]",
           passes=PASSES)
    benchmark(_kernel_runner(california, PASSES))


def _numpy_dp_cd(X, y, lam, steps, clips, noise, passes, seed=0):
    """Plain NumPy DP-CD (squared loss, L1 penalty, last iterate) with residual caching: the
    residual r = Xw - y is updated in O(n) per coordinate step, as a user would write it."""
    rng = np.random.default_rng(seed)
    n, p = X.shape
    w = np.zeros(p)
    r = X @ w - y
    for _ in range(passes):
        for j in rng.integers(0, p, size=p):
            g = np.clip(X[:, j] * (2.0 * r), -clips[j], clips[j]).sum() / n
            g += noise[j] * rng.standard_normal()
            u = w[j] - steps[j] * g
            w_new = np.sign(u) * max(abs(u) - steps[j] * lam, 0.0)
            if w_new != w[j]:
                r += (w_new - w[j]) * X[:, j]
                w[j] = w_new
    return w


def bench_california_numpy(benchmark, record, california):
    record(benchmark, f"dp_cd California LASSO, {PASSES} passes", "numpy", passes=PASSES)
    res = _dp_cd(california, 1)
    args = (california.X_fortran(), california.y, california.penalty.lam, res.stats["steps"],
            res.stats["clips"], res.stats["noise_scales"], PASSES)
    benchmark.pedantic(_numpy_dp_cd, args=args, rounds=3, iterations=1)


def bench_california_reference(benchmark, record, california):
    record(benchmark, f"dp_cd California LASSO, {PASSES} passes", "reference", passes=PASSES)
    res = _dp_cd(california, 1)           # the kernel's constants, reused by the twin
    X = california.X_fortran()
    steps, clips, noise = res.stats["steps"], res.stats["clips"], res.stats["noise_scales"]
    p = california.n_features

    def run():
        twin.cd_dense(X, california.y, 0, 1.0, 1, california.penalty.lam, 0.0, steps, clips,
                      noise, np.zeros(p), PASSES, p, False, False, 0, np.random.PCG64DXSM(0),
                      np.empty(california.n_samples))
    benchmark.pedantic(run, rounds=3, iterations=1)


SPARSE_PASSES = 3


def bench_sparse_dpsco_core(benchmark, record, sparse_problem):
    record(benchmark, f"dp_cd sparse CSC 1e5 x 1e4 (0.1%), {SPARSE_PASSES} passes", "dpsco_core")
    benchmark.pedantic(_dp_cd, args=(sparse_problem, SPARSE_PASSES), rounds=3, iterations=1)


def bench_sparse_sklearn(benchmark, record, sparse_problem):
    pytest.importorskip("sklearn")
    record(benchmark, f"dp_cd sparse CSC 1e5 x 1e4 (0.1%), {SPARSE_PASSES} passes",
           "scikit-learn Lasso (non-private CD)")
    benchmark.pedantic(_sklearn_lasso, args=(sparse_problem, SPARSE_PASSES), rounds=3,
                       iterations=1)


@pytest.fixture(scope="module")
def dense_big():
    rng = np.random.default_rng(0)
    n, p = 1_000_000, 100
    X = np.asfortranarray(rng.standard_normal((n, p)))
    y = X @ rng.standard_normal(p) + rng.standard_normal(n)
    lam_max = 2 * np.max(np.abs(X.T @ y)) / n
    return dp.Problem(X, y, loss="squared", penalty=dp.L1(LAMBDA_FRACTION * lam_max))


BIG_PASSES = 3
GROUP_BIG = f"dp_cd dense 1e6 x 100, {BIG_PASSES} passes"


def bench_dense_big_dpsco_core(benchmark, record, dense_big):
    record(benchmark, GROUP_BIG, "dpsco_core", passes=BIG_PASSES)
    benchmark.pedantic(_dp_cd, args=(dense_big, BIG_PASSES), rounds=3, iterations=1)


def bench_dense_big_kernel(benchmark, record, dense_big):
    record(benchmark, GROUP_BIG, "dpsco_core[kernel]", passes=BIG_PASSES)
    benchmark.pedantic(_kernel_runner(dense_big, BIG_PASSES), rounds=3, iterations=1)


def bench_dense_big_sklearn(benchmark, record, dense_big):
    pytest.importorskip("sklearn")
    record(benchmark, GROUP_BIG, "scikit-learn Lasso (non-private CD)", passes=BIG_PASSES)
    benchmark.pedantic(_sklearn_lasso, args=(dense_big, BIG_PASSES), rounds=3, iterations=1)


def bench_sparse_kernel(benchmark, record, sparse_problem):
    record(benchmark, f"dp_cd sparse CSC 1e5 x 1e4 (0.1%), {SPARSE_PASSES} passes",
           "dpsco_core[kernel]")
    benchmark.pedantic(_kernel_runner(sparse_problem, SPARSE_PASSES), rounds=3, iterations=1)


GRID = dict(steps=np.geomspace(0.01, 10, 10), clips=np.geomspace(1e-3, 1e6, 20), n_seeds=5)


@pytest.mark.parametrize("n_threads", [2, 1])
def bench_grid(benchmark, record, california, n_threads):
    record(benchmark, "dp_cd_grid California, 1,000 configurations x 2 passes",
           "dpsco_core" if n_threads == 2 else "dpsco_core[1 thread]")
    out = {}

    def run():
        out["grid"] = dp.dp_cd_grid(california, epsilon=1.0, delta=1e-9, passes=2,
                                    average=False, random_state=0, n_threads=n_threads,
                                    evaluate=False, **GRID)
    benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["kernel_seconds"] = out["grid"].stats["time"]


# Fixed cost of a dp_cd call (issue 18: at most 2 passes' time on California): the public call
# for one pass against the kernel alone for the same pass (``_cd.cd_dense``, the arguments the
# call computes). fixed cost in passes = (call - kernel) / kernel. "warm" repeats one
# configuration (the calibration and the privacy report are memoized on their public
# arguments); "cold" clears those memos before every call.
GROUP_FIXED = "dp_cd California, 1 pass: public call vs kernel (fixed cost)"


def _clear_privacy_memos():
    import importlib

    from dpsco_core.privacy import calibration, rdp
    from dpsco_core.solvers import _common

    importlib.import_module("dpsco_core.solvers.dp_cd")._calibrate.cache_clear()
    calibration._sampled_gaussian_multiplier.cache_clear()
    rdp._sampled_gaussian_curve.cache_clear()
    rdp._sampled_gaussian_evaluator.cache_clear()
    _common._memo_report.cache_clear()


@pytest.mark.parametrize("memo", ["warm", "cold"])
def bench_california_fixed_cost_call(benchmark, record, california, memo):
    record(benchmark, GROUP_FIXED, "dpsco_core" if memo == "warm" else "dpsco_core[cold memos]")
    _dp_cd(california, 1)

    def run():
        if memo == "cold":
            _clear_privacy_memos()
        _dp_cd(california, 1)
    benchmark(run)


def bench_california_fixed_cost_kernel(benchmark, record, california):
    from dpsco_core._kernels import _cd

    record(benchmark, GROUP_FIXED, "dpsco_core[kernel, 1 pass]")
    res = _dp_cd(california, 1)
    X, p, n = california.X_fortran(), california.n_features, california.n_samples
    steps, clips, noise = res.stats["steps"], res.stats["clips"], res.stats["noise_scales"]
    margins = np.empty(n)

    def run():
        _cd.cd_dense(X, california.y, california.loss.kind, california.loss.param,
                     california.penalty.kind, *california.penalty.params, steps, clips, noise,
                     np.zeros(p), 1, p, False, False, 0, np.random.PCG64DXSM(0), margins,
                     normaliser=n, count_clipped=False)   # as the call without a history
    benchmark(run)


def _per_pass(problems, rounds=7):
    """Per-pass process CPU time by a two-point line fit (passes lo and hi, so fixed costs
    cancel), the implementations interleaved round by round; medians. Also prints the call's
    fixed cost in passes, (call(1) - kernel(1)) / kernel per pass."""
    import time

    from dpsco_core._kernels import _cd

    def clock(fn):
        start = time.process_time()
        fn()
        return time.process_time() - start

    print(f"load average {open('/proc/loadavg').read().split()[:3]}, kernel path "
          f"{_cd.simd_path()}")
    for name, problem, lo, hi in problems:
        kernels = {P: _kernel_runner(problem, P) for P in (lo, hi)}
        impls = {"dpsco_core[kernel]": lambda P: kernels[P](),
                 "dpsco_core": lambda P: _dp_cd(problem, P),
                 "scikit-learn": lambda P: _sklearn_lasso(problem, P)}
        if problem.is_sparse:
            # the same coordinate rule on both sides, to separate the cost of DP-CD's uniform
            # random coordinates (a cold column per update) from the kernel's per-entry cost
            cyclic_kernels = {P: _kernel_runner(problem, P, cyclic=True) for P in (lo, hi)}
            impls["dpsco_core[kernel, cyclic]"] = lambda P: cyclic_kernels[P]()
            impls["scikit-learn random"] = lambda P: _sklearn_lasso(problem, P, "random")
        if name == "California":
            res = _dp_cd(problem, 1)
            impls["numpy"] = lambda P: _numpy_dp_cd(
                problem.X_fortran(), problem.y, problem.penalty.lam, res.stats["steps"],
                res.stats["clips"], res.stats["noise_scales"], P)
        times = {key: {lo: [], hi: []} for key in impls}
        for _ in range(rounds):
            for key, fn in impls.items():
                for P in (lo, hi):
                    times[key][P].append(clock(lambda: fn(P)))
        med = {key: {P: float(np.median(v)) for P, v in t.items()} for key, t in times.items()}
        per = {key: (m[hi] - m[lo]) / (hi - lo) for key, m in med.items()}
        base = per["scikit-learn"]
        for key, value in per.items():
            print(f"{name}: {key:20s} {value * 1e3:9.3f} ms per pass, {value / base:5.2f}x "
                  f"scikit-learn; medians {med[key][lo] * 1e3:.3f} ms ({lo} passes), "
                  f"{med[key][hi] * 1e3:.3f} ms ({hi} passes)")
        fixed = (med["dpsco_core"][lo] - med["dpsco_core[kernel]"][lo]) / per["dpsco_core[kernel]"]
        print(f"{name}: dp_cd fixed cost {fixed:.2f} passes (at {lo} pass)")


if __name__ == "__main__":
    # python bench/bench_dp_cd.py [california] [sparse] [dense]: per-pass line fits
    import sys

    warnings.simplefilter("ignore")
    which = sys.argv[1:] or ["california", "sparse", "dense"]
    X, y = dp.datasets.load_california()
    lam_max = 2 * np.max(np.abs(X.T @ y)) / len(y)
    cases = []
    if "california" in which:
        cases.append(("California", dp.Problem(X, y, loss="squared",
                                               penalty=dp.L1(LAMBDA_FRACTION * lam_max)), 1, 101))
    if "sparse" in which:
        cases.append(("sparse CSC 1e5 x 1e4", sparse_problem.__wrapped__(), 1, 4))
    if "dense" in which:
        cases.append(("dense 1e6 x 100", dense_big.__wrapped__(), 1, 5))
    _per_pass(cases, rounds=5 if "dense" in which else 7)
