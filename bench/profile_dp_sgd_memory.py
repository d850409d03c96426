"""Peak memory of ``dp_sgd`` (one epoch, B = 256, logistic) over the data's own size, for float64
C-ordered, float64 F-ordered and float32 input (issue 18 target: at most 1.1x the data).
tracemalloc counts numpy's allocations; the data are allocated before tracing starts, and the
peak counts everything the call (including ``Problem``) allocates on top of them.
Run: ``PYTHONPATH=$PWD python bench/profile_dp_sgd_memory.py [n_rows]`` (default 1e6 x 100)."""
import sys
import tracemalloc
import warnings

import numpy as np

import dpsco_core as dp

n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
p = 100
rng = np.random.default_rng(0)
base = rng.standard_normal((n, p)) / 10.0
y = np.sign(rng.standard_normal(n))
warnings.simplefilter("ignore")
for name, X in [("float64 C", base), ("float64 F", np.asfortranarray(base)),
                ("float32 C", base.astype(np.float32))]:
    tracemalloc.start()
    prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
    dp.dp_sgd(prob, epsilon=1.0, delta=1.0 / n ** 2, passes=1, batch_size=256,
              record_history=False, random_state=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del prob
    print(f"{name}: data {X.nbytes / 1e6:.0f} MB, extra peak {peak / 1e6:.1f} MB, "
          f"(data + peak) / data = {(X.nbytes + peak) / X.nbytes:.2f}")
