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


@pytest.fixture(scope="module")
def run_problem():
    import dpsco_core as dp
    # Rademacher X built row block by row block as int8 -> float64 (no 8-byte index temporary
    # of make_rademacher_lasso's rng.choice: the peak stays at X itself, 8 GB at 1e5 x 1e4).
    rng = np.random.default_rng(0)
    X = np.empty((N_RUN, D_RUN))
    for lo in range(0, N_RUN, 4096):
        hi = min(lo + 4096, N_RUN)
        X[lo:hi] = rng.integers(0, 2, size=(hi - lo, D_RUN), dtype=np.int8) * 2 - 1
    x_true = np.zeros(D_RUN)
    x_true[:5] = 0.18
    y = X @ x_true + rng.uniform(-0.5, 0.5, N_RUN)
    return dp.Problem(X, y, loss="half_squared")


@pytest.mark.parametrize("cached", [False, True])
def bench_vr_frank_wolfe_run(benchmark, record, run_problem, cached):
    """A full Algorithm 3 run; ``cached``: the per-row max |a_ij| (the enforced clip) is
    already on the Problem, as for every run after the first on the same data."""
    from dpsco_core.solvers.frank_wolfe import vr_frank_wolfe

    prob = run_problem
    if not cached:
        prob._cache.pop("row_max_abs", None)
    record(benchmark, f"vr_frank_wolfe n={N_RUN:.0e} d={D_RUN:.0e}",
           "dpsco_core" + ("[clip cached]" if cached else ""))
    benchmark.pedantic(lambda: vr_frank_wolfe(prob, epsilon=1.0, lipschitz=2.5, random_state=0,
                                              record_history=False), rounds=1, iterations=1)


@pytest.fixture(scope="module")
def sign_case(step_case):
    """The step's +-1 rows packed as sign bits (the layout of RademacherLassoStream)."""
    X, y, rows, clip, w, w_prev, v_prev = step_case
    bits = np.packbits(X > 0, axis=1, bitorder="little")
    words = np.zeros((BATCH, 8 * -(-D_STEP // 64)), dtype=np.uint8)
    words[:, :bits.shape[1]] = bits
    return words.view("<u8"), y, w, w_prev, v_prev


@pytest.mark.parametrize("n_threads", [None, 1])
def bench_fused_step_signs(benchmark, record, sign_case, n_threads):
    """The same leaf on packed sign rows (bitwise the dense step's result)."""
    signs, y, w, w_prev, v_prev = sign_case
    record(benchmark, f"fw fused step d={D_STEP:.0e} b={BATCH}",
           "dpsco_core[signs]" if n_threads is None else "dpsco_core[signs, 1 thread]")

    def run():
        gens = block_bit_generators(np.random.SeedSequence(1),
                                    -(-2 * D_STEP // kernel.FW_BLOCK_SIZE))
        return kernel.vr_gradient_rnm_signs(signs, D_STEP, y, 1, 0.0, np.inf, w, 1.0, w_prev,
                                            1.0, v_prev, True, kernel.DOMAIN_L1_BALL, 1.0, 0.1,
                                            1, gens, effective_n_threads(n_threads),
                                            np.empty(BATCH), np.empty(D_STEP))
    benchmark(run)
