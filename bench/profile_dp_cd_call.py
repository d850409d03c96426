"""``dp_cd`` fixed cost per call on California (issue 18 target: at most 2 passes' time, for a
configuration's first call too), in process CPU time.

"cold" clears every privacy memo first (calibration, RDP curve, report): a configuration never
seen before; "warm" repeats one configuration; "kernel" is ``_cd.cd_dense`` alone for the same
single pass (the arguments the call computes, ``count_clipped=False`` as without a history).
Fixed cost in passes = (call - kernel) / per-pass time, the
per-pass time by a line fit of the kernel over 1 and 11 passes (as ``bench_dp_cd.py``). 20
rounds; in each, every case runs 10 times in a row (as a benchmark row repeats one call; a call
right after an 11-pass kernel pays for its evicted caches), medians (gc off while timing, as
pytest-benchmark). The bench rows are ``bench/bench_dp_cd.py``'s
``bench_california_fixed_cost_*`` (same calls).
Run: ``PYTHONPATH=$PWD python bench/profile_dp_cd_call.py [grid] [prof [tottime]]`` ("prof":
cProfile of 500 cold calls; "grid": "cold" also rebuilds the report's order grid, dp-accounting's
plus this configuration's optimal order, which the bench rows and the default keep).
"""
import cProfile
import gc
import importlib
import pstats
import sys
import time
import warnings

import numpy as np

import dpsco_core as dp
from dpsco_core._kernels import _cd
from dpsco_core.privacy import calibration, rdp
from dpsco_core.solvers import _common

X, y = dp.datasets.load_california()
lam_max = 2 * np.max(np.abs(X.T @ y)) / len(y)
prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(1e-3 * lam_max))
cd_module = importlib.import_module("dpsco_core.solvers.dp_cd")


def clear():
    cd_module._calibrate.cache_clear()
    calibration._sampled_gaussian_multiplier.cache_clear()
    rdp._sampled_gaussian_curve.cache_clear()
    rdp._sampled_gaussian_evaluator.cache_clear()
    _common._memo_report.cache_clear()
    if "grid" in sys.argv:      # the report's order grid too (its extra order is new)
        _common._report_orders.cache_clear()


def call():
    return dp.dp_cd(prob, epsilon=1.0, delta=1e-9, passes=1, clip=1e4, average=False,
                    random_state=0, record_history=False)


warnings.simplefilter("ignore")
res = call()
Xf, p, n = prob.X_fortran(), prob.n_features, prob.n_samples
steps, clips, noise = res.stats["steps"], res.stats["clips"], res.stats["noise_scales"]
margins = np.empty(n)


def kernel(passes=1):
    _cd.cd_dense(Xf, prob.y, prob.loss.kind, prob.loss.param, prob.penalty.kind,
                 *prob.penalty.params, steps, clips, noise, np.zeros(p), passes, p, False,
                 False, 0, np.random.PCG64DXSM(0), margins, normaliser=n, count_clipped=False)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    res = {"cold": [], "warm": [], "kernel": [], "kernel11": []}
    gc.disable()
    for _ in range(20):
        for k in res:
            for _ in range(10):     # 10 in a row, as a benchmark row repeats its call
                if k == "cold":
                    clear()
                t = time.process_time()
                kernel(11) if k == "kernel11" else kernel() if k == "kernel" else call()
                res[k].append(time.process_time() - t)
    gc.enable()
    med = {k: float(np.median(v)) for k, v in res.items()}
    for k, v in med.items():
        print(k, "%.3f ms" % (1e3 * v))
    per_pass = (med["kernel11"] - med["kernel"]) / 10
    print("per pass (line fit 1 -> 11 passes) %.3f ms" % (1e3 * per_pass))
    print("fixed cost (call - kernel) / per pass: cold %.2f warm %.2f" % (
        (med["cold"] - med["kernel"]) / per_pass, (med["warm"] - med["kernel"]) / per_pass))
    if "prof" in sys.argv:
        pr = cProfile.Profile()
        for _ in range(500):
            clear()
            pr.enable()
            call()
            pr.disable()
        pstats.Stats(pr).sort_stats("tottime" if "tottime" in sys.argv else "cumtime"
                                    ).print_stats(50)
