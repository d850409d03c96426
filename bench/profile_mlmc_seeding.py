"""Process-CPU time of seeding the 625 block generators of a 10,000-copy MLMC call (issue 18):
numpy objects in Python (before) vs ``_random.seed_words`` + seeding in C (after), and the
whole 1-thread call. Run: ``PYTHONPATH=$PWD python bench/profile_mlmc_seeding.py``."""
import time

import numpy as np

from dpsco_core import Problem
from dpsco_core._kernels import _mlmc
from dpsco_core._random import block_bit_generators, seed_words
from dpsco_core.mlmc import GLMOracle, mlmc_draws

N_COPIES, D, J_MAX, N = 10_000, 100, 12, 2_000
N_BLOCKS = -(-N_COPIES // _mlmc.COPY_BLOCK)


def median_ms(f, rounds=30):
    times = []
    for _ in range(rounds):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return 1e3 * float(np.median(times))


seed = np.random.SeedSequence(1)
print("python seeding of %d generators: %.3f ms" % (
    N_BLOCKS, median_ms(lambda: block_bit_generators(seed, N_BLOCKS))))
print("C seeding of %d generators:      %.3f ms" % (
    N_BLOCKS, median_ms(lambda: _mlmc.seeded_block_draws(seed_words(seed), N_BLOCKS, 0))))
rs = np.random.default_rng(0)
X = rs.standard_normal((N, D)) / np.sqrt(D)
y = np.sign(X @ rs.standard_normal(D) + 0.1 * rs.standard_normal(N))
oracle = GLMOracle(Problem(X, y, loss="logistic"))
print("whole call, 1 thread:            %.3f ms" % median_ms(
    lambda: mlmc_draws(oracle, 1.0, np.zeros(D), j_max=J_MAX, n_copies=N_COPIES,
                       levels="paper", random_state=1, n_threads=1), rounds=10))
