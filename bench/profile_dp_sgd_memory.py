"""Peak memory of ``dp_sgd`` and ``dp_cd`` over the data's own size, for float64 / float32 input in
C and Fortran order (issue 18 target: at most 1.1x the data, any layout).

Each case runs in a fresh interpreter. The child builds X in the case's dtype and layout (the
float64 draw it came from is freed first), then measures ``Problem(...)`` + the solver call
(``dp_sgd``: one epoch, B = 256; ``dp_cd``: one pass; logistic + L2, no history) two ways:
tracemalloc (numpy's allocations; kernels' ``malloc`` scratch is not traced) and the resident
set's high-water mark (``VmHWM`` after resetting it through ``/proc/self/clear_refs``: every
allocation, Linux only). Reported: (data + extra) / data with the larger of the two extras.
Run: ``PYTHONPATH=$PWD python bench/profile_dp_sgd_memory.py [n_rows] [solver ...]``
(default 1e6 x 100, both solvers).
"""
import json
import subprocess
import sys

CHILD = r"""
import json, sys, tracemalloc, warnings
import numpy as np
import dpsco_core as dp

n, p, solver, dtype, order = int(sys.argv[1]), 100, sys.argv[2], sys.argv[3], sys.argv[4]
rng = np.random.default_rng(0)
X = rng.standard_normal((n, p)) / 10.0
if dtype == "float32":
    X = X.astype(np.float32)
if order == "F":
    X = np.asfortranarray(X)
y = np.sign(rng.standard_normal(n))
warnings.simplefilter("ignore")

def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key))

# warm-up on a small problem: lazy imports and per-configuration caches are not the data's
small = dp.Problem(np.asarray(X[:2000]), y[:2000], loss="logistic", penalty=dp.L2(1e-3))
if solver == "dp_sgd":
    dp.dp_sgd(small, epsilon=1.0, delta=1.0 / n ** 2, passes=1, batch_size=256,
              record_history=False, random_state=0)
else:
    dp.dp_cd(small, epsilon=1.0, delta=1.0 / n ** 2, passes=1, record_history=False,
             random_state=0)
del small
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")                       # reset VmHWM to the current RSS
rss0 = status("VmRSS:")
tracemalloc.start()
prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
if solver == "dp_sgd":
    dp.dp_sgd(prob, epsilon=1.0, delta=1.0 / n ** 2, passes=1, batch_size=256,
              record_history=False, random_state=0)
else:
    dp.dp_cd(prob, epsilon=1.0, delta=1.0 / n ** 2, passes=1, record_history=False,
             random_state=0)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"data": X.nbytes, "traced": peak, "rss": status("VmHWM:") - rss0}))
"""


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000
    solvers = sys.argv[2:] or ["dp_sgd", "dp_cd"]
    print("| solver | input | data | extra peak: tracemalloc / RSS | (data + extra) / data "
          "| <= 1.1x |")
    print("|---|---|---|---|---|---|")
    for solver in solvers:
        for dtype in ("float64", "float32"):
            for order in ("C", "F"):
                out = subprocess.run([sys.executable, "-c", CHILD, str(n), solver, dtype, order],
                                     check=True, capture_output=True, text=True).stdout
                r = json.loads(out.strip().splitlines()[-1])
                ratio = (r["data"] + max(r["traced"], r["rss"])) / r["data"]
                print(f"| {solver} | {dtype} {order} | {r['data'] / 1e6:.0f} MB | "
                      f"{r['traced'] / 1e6:.1f} / {r['rss'] / 1e6:.1f} MB | {ratio:.2f}x | "
                      f"{'yes' if ratio <= 1.1 else '**no**'} |", flush=True)


if __name__ == "__main__":
    main()
