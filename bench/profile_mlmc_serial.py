"""Serial part of an MLMC call (issue 18: 1 -> 2 threads at least 1.8x): the process CPU time
of a 1-thread ``mlmc_draws`` call outside the compiled kernel ``_mlmc.mlmc_glm_batch`` (timed
by wrapping it), on ``bench/bench_mlmc.py``'s configuration (M = 10,000, d = 100, j_max = 12,
paper levels). CPU time at 1 thread is what a loaded machine distorts least; with the serial
part S and the 1-thread call T, Amdahl gives T / (S + (T - S) / 2) for 2 threads.
Run: ``PYTHONPATH=<tree> python bench/profile_mlmc_serial.py`` (25 calls, medians).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_mlmc as b  # noqa: E402
import dpsco_core._kernels._mlmc as kernel  # noqa: E402
from dpsco_core.mlmc import mlmc_draws  # noqa: E402

_inner = []
_kernel = kernel.mlmc_glm_batch


def _timed(*args, **kwargs):
    start = time.process_time()
    out = _kernel(*args, **kwargs)
    _inner.append(time.process_time() - start)
    return out


kernel.mlmc_glm_batch = _timed
oracle, center = b._oracle(), np.zeros(b.D)
total = []
for _ in range(25):
    start = time.process_time()
    mlmc_draws(oracle, 1.0, center, j_max=b.J_MAX, n_copies=b.N_COPIES, levels="paper",
               random_state=1, n_threads=1)
    total.append(time.process_time() - start)
total, inner = np.array(total), np.array(_inner[-25:])
T, S = np.median(total), np.median(total - inner)
print(f"load {open('/proc/loadavg').read().split()[:3]}: call {T * 1e3:.2f} ms, kernel call "
      f"{np.median(inner) * 1e3:.2f} ms, outside the kernel {S * 1e3:.2f} ms (1 thread, CPU); "
      f"Amdahl 2 threads {T / (S + (T - S) / 2):.2f}x if the kernel scaled perfectly")
