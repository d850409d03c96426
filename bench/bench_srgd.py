"""Accelerated-DP-SRGD: the per-round kernels against their NumPy twins, and one whole run.

Targets (issue 6): the per-step kernel K1 (two-point difference + clip + batch reduce,
``_batch.batch_diff_dense``) at B = 1000, p = 100 at least 10x faster than its twin; the whole
single-epoch run at n = 1e6, p = 50 in under 2 seconds on 2 cores.

Implementations: ``dpsco_core`` is the kernel (or the public ``dp_srgd`` call, which also
draws the permutation and the tree noise and builds the privacy report), ``dpsco_core[1
thread]`` the kernel on one thread, ``reference`` the NumPy twin.
"""

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core._kernels import _batch, _tree
from dpsco_core.reference import batch as batch_twin
from dpsco_core.reference import tree as tree_twin
from dpsco_core.solvers.dp_srgd import dp_srgd
from dpsco_core.tree import TreeAggregation

K1_GROUP = "srgd K1 batch_diff_dense, logistic, B = 1000, p = 100"
TREE_GROUP = "srgd tree noise, 64 steps, p = 100000"
RUN_GROUP = "dp_srgd whole run, n = 1e6, p = 50, B = sqrt(n)"


@pytest.fixture(scope="module")
def k1_data():
    rng = np.random.default_rng(0)
    n, p = 5000, 100
    X = rng.standard_normal((n, p)) / np.sqrt(p)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    rows = rng.permutation(n)[:1000].astype(np.int64)
    coef, prev = rng.standard_normal((2, p))
    return X, y, rows, coef, prev, np.linalg.norm(X, axis=1)


@pytest.mark.parametrize("impl", ["dpsco_core", "dpsco_core[1 thread]", "reference"])
def bench_k1(benchmark, record, k1_data, impl):
    X, y, rows, coef, prev, norms = k1_data
    module = batch_twin if impl == "reference" else _batch
    n_threads = 1 if impl == "dpsco_core[1 thread]" else 2
    record(benchmark, K1_GROUP, impl)
    out = np.empty(X.shape[1])
    benchmark(lambda: module.batch_diff_dense(X, y, rows, coef, prev, norms, 2, 0.0, 50.0, 49.0,
                                              1.0, out, n_threads))


@pytest.mark.parametrize("impl", ["dpsco_core", "reference"])
@pytest.mark.parametrize("variance_reduced", [False, True], ids=["plain", "honaker"])
def bench_tree(benchmark, record, impl, variance_reduced):
    p = 100_000
    record(benchmark, TREE_GROUP + (" honaker" if variance_reduced else ""), impl)
    x = np.zeros(p)

    def run():
        tree = TreeAggregation(p, 64, noise_scale=1.0, variance_reduced=variance_reduced,
                               random_state=0, _impl=_tree if impl == "dpsco_core" else tree_twin)
        for _ in range(64):
            tree.next(x)
    benchmark(run)


@pytest.fixture(scope="module")
def big_problem():
    rng = np.random.default_rng(1)
    n, p = 1_000_000, 50
    s = 1.0 / np.arange(1, p + 1)
    X = rng.choice([-1.0, 1.0], size=(n, p)) * (s / np.linalg.norm(s))
    y = X @ np.full(p, 2.0 / np.sqrt(p)) + rng.uniform(-1, 1, n)
    prob = dp.Problem(X, y, loss="half_squared")
    prob.X_c(), prob.row_norms()
    return prob


def bench_whole_run(benchmark, record, big_problem):
    record(benchmark, RUN_GROUP, "dpsco_core")
    benchmark.pedantic(lambda: dp_srgd(big_problem, epsilon=1.0, delta=1e-7, beta=4.0,
                                       clip=3.0, radius=3.0, random_state=0,
                                       record_history=False), rounds=3, iterations=1)
