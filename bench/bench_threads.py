"""Short kernels, 1 vs 2 threads, while another process keeps a core busy (issue 18).

Target: no kernel slower with 2 threads than with 1 on a machine where another process keeps a
core busy. Before issue 18, libgomp's default wait policy (idle threads spin for milliseconds)
made a ~1 ms kernel 16-21x slower with 2 threads there. dpsco-core now asks for
``OMP_WAIT_POLICY=passive`` before the runtime starts (``show_config()`` prints the policy in
effect) and runs calls below a work threshold on one thread.

A module fixture starts ``python -c "while True: pass"`` for these benchmarks only and stops it
after them. ``dpsco_core`` is the default thread count (``n_threads=None``: 2 on a 2-core
machine), ``dpsco_core[1 thread]`` one thread. Both kernels are above their serial thresholds
(squared loss: 1e6 margins >= 200,000; prox: 2^21 coordinates >= 2^20), so the default really
runs 2 threads. Run under another wait policy to compare, for example
``GOMP_SPINCOUNT=300000 python bench/run.py -k competing`` (libgomp's default spin).
"""

import subprocess
import sys

import numpy as np
import pytest

from dpsco_core import L1
from dpsco_core._config import effective_n_threads
from dpsco_core._kernels import _loss as kernel
from dpsco_core.reference import loss as twin

M = 1_000_000
D = 1 << 21


@pytest.fixture(scope="module")
def competing_process():
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield proc
    proc.terminate()
    proc.wait(timeout=30)


def _label(n_threads):
    return "dpsco_core" if n_threads is None else "dpsco_core[1 thread]"


@pytest.mark.parametrize("n_threads", [None, 1])
def bench_squared_loss_competing(benchmark, record, competing_process, n_threads):
    rng = np.random.default_rng(0)
    z, y = rng.standard_normal(M) * 3.0, rng.choice([-1.0, 1.0], M)
    v, d = np.empty(M), np.empty(M)
    record(benchmark, "loss value+deriv squared m=1e6, competing process", _label(n_threads))
    threads = effective_n_threads(n_threads, work=M)
    benchmark(lambda: kernel.loss_values_derivs(z, y, twin.LOSS_SQUARED, 1.0, v, d, threads))


@pytest.mark.parametrize("n_threads", [None, 1])
def bench_prox_l1_competing(benchmark, record, competing_process, n_threads):
    v = np.random.default_rng(0).standard_normal(D)
    penalty = L1(0.5)
    record(benchmark, "prox L1 d=2^21, competing process", _label(n_threads))
    benchmark(lambda: penalty.prox(v, 0.3, n_threads=n_threads))
