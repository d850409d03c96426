"""MLMC optimum-estimator copies: compiled batch kernel vs its NumPy twin, 1 vs 2 threads.

Target (issue 8): 10,000 copies (d = 100, j_max = 12, paper levels, logistic loss) at least 10x
faster than the twin, and at least 1.8x from 1 to 2 threads.
"""

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core._random import block_bit_generators
from dpsco_core.mlmc import GLMOracle, level_epochs, mlmc_draws
from dpsco_core.reference import mlmc as twin

N_COPIES, D, J_MAX, N = 10_000, 100, 12, 2_000
GROUP = f"mlmc copies M={N_COPIES} d={D} j_max={J_MAX}"


def _oracle():
    rs = np.random.default_rng(0)
    X = rs.standard_normal((N, D)) / np.sqrt(D)
    y = np.sign(X @ rs.standard_normal(D) + 0.1 * rs.standard_normal(N))
    return GLMOracle(Problem(X, y, loss="logistic"))


@pytest.mark.parametrize("n_threads", [2, 1])
def bench_mlmc_copies_dpsco_core(benchmark, record, n_threads):
    oracle = _oracle()
    record(benchmark, GROUP, "dpsco_core" if n_threads == 2 else "dpsco_core[1 thread]")
    center = np.zeros(D)
    benchmark(lambda: mlmc_draws(oracle, 1.0, center, j_max=J_MAX, n_copies=N_COPIES,
                                 levels="paper", random_state=1, n_threads=n_threads))


def bench_mlmc_copies_reference(benchmark, record):
    oracle = _oracle()
    record(benchmark, GROUP, "reference")
    table = np.array([level_epochs(j, "paper") for j in range(J_MAX + 1)], dtype=np.int64)

    def run():
        out = np.empty((N_COPIES, D))
        ks = np.empty(N_COPIES, dtype=np.int64)
        ng = np.empty(N_COPIES, dtype=np.int64)
        twin.mlmc_glm_batch(oracle.X, oracle.y, np.zeros(N), oracle.row_norms,
                            oracle.loss_kind, 0.0, np.inf, np.zeros(D), 1.0, 0, np.zeros(D),
                            np.zeros(D), np.inf, table, 0,
                            block_bit_generators(np.random.SeedSequence(1),
                                                 -(-N_COPIES // twin.COPY_BLOCK)), out, ks,
                            ng, 1)
    benchmark.pedantic(run, rounds=1, iterations=1)
