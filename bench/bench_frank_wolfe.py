"""Frank-Wolfe in l1 geometry: the fused gradient + report-noisy-max step, and Algorithm 3.

Targets (issue 7): the fused step at d = 1,000,000, batch 256, at least 4x faster than the NumPy
twin; a full Algorithm 3 run at n = 1e5, d = 1e4 under 5 s on 2 cores. Set
``DPSCO_BENCH_FW_D`` / ``DPSCO_BENCH_FW_N`` to shrink the problems (memory: the step's X is
256 x d doubles, the run's n x d).
"""

import os

import numpy as np
import pytest

from dpsco_core._config import effective_n_threads
from dpsco_core._kernels import _frank_wolfe as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.reference import frank_wolfe as twin

D_STEP = int(os.environ.get("DPSCO_BENCH_FW_D", 1_000_000))
N_RUN, D_RUN = (int(v) for v in os.environ.get("DPSCO_BENCH_FW_N", "100000,10000").split(","))
BATCH = 256


@pytest.fixture(scope="module")
def step_case():
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(BATCH, D_STEP))
    y = rng.standard_normal(BATCH)
    w = np.zeros(D_STEP)
    w[rng.integers(D_STEP, size=50)] = 0.01
    return X, y, np.arange(BATCH, dtype=np.intp), np.full(BATCH, np.inf), w, w * 0.5, \
        rng.standard_normal(D_STEP) * 1e-3


def _step(impl, case, n_threads):
    X, y, rows, clip, w, w_prev, v_prev = case
    gens = block_bit_generators(np.random.SeedSequence(1), -(-2 * D_STEP // kernel.FW_BLOCK_SIZE))
    return impl.vr_gradient_rnm(X, y, rows, 1, 0.0, clip, w, 1.0, w_prev, 1.0, v_prev, True,
                                kernel.DOMAIN_L1_BALL, 1.0, 0.1, 1, gens, n_threads,
                                np.empty(BATCH), np.empty(D_STEP))


@pytest.mark.parametrize("n_threads", [None, 1])
def bench_fused_step_dpsco_core(benchmark, record, step_case, n_threads):
    record(benchmark, f"fw fused step d={D_STEP:.0e} b={BATCH}",
           "dpsco_core" if n_threads is None else "dpsco_core[1 thread]")
    benchmark(lambda: _step(kernel, step_case, effective_n_threads(n_threads)))


def bench_fused_step_reference(benchmark, record, step_case):
    record(benchmark, f"fw fused step d={D_STEP:.0e} b={BATCH}", "reference")
    benchmark.pedantic(lambda: _step(twin, step_case, 1), rounds=2, iterations=1)


def bench_vr_frank_wolfe_run(benchmark, record):
    import dpsco_core as dp
    from dpsco_core.datasets import make_rademacher_lasso
    from dpsco_core.solvers.frank_wolfe import vr_frank_wolfe

    X, y, _ = make_rademacher_lasso(N_RUN, D_RUN, 5, radius=1.0, random_state=0)
    prob = dp.Problem(X, y, loss="half_squared")
    record(benchmark, f"vr_frank_wolfe n={N_RUN:.0e} d={D_RUN:.0e}", "dpsco_core")
    benchmark.pedantic(lambda: vr_frank_wolfe(prob, epsilon=1.0, lipschitz=2.5, random_state=0,
                                              record_history=False), rounds=1, iterations=1)
