"""``dp_sgd`` public call vs its kernel on Electricity (one epoch, B = 256), in process CPU time
(issue 18 target: the call at most 1.3x the kernel, on a configuration's first call too).

"cold" clears every memo first (calibration, RDP curve, evaluator, privacy report): a
configuration never seen before; "cached" is a repeated configuration; "kernel" is
``_batch.sgd_dense`` alone at 1 thread. 30 alternating rounds, medians.
Run: ``PYTHONPATH=$PWD python bench/profile_dp_sgd_call.py cpu [prof]`` ("prof": cProfile of
20 cold calls; without "cpu": wall-clock).
"""
import cProfile
import pstats
import sys
import time
import warnings

import numpy as np

import dpsco_core as dp
from dpsco_core._kernels import _batch
from dpsco_core.privacy import calibration as cal
from dpsco_core.privacy import rdp
from dpsco_core.solvers import _common, dp_sgd

X, y = dp.datasets.load_electricity()
prob = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))
n = prob.n_samples
q = 256 / n
prob.smoothness(), prob.row_norms(), prob.X_c()
warnings.simplefilter("ignore")


def clear():
    cal._sampled_gaussian_multiplier.cache_clear()
    rdp._sampled_gaussian_curve.cache_clear()
    rdp._sampled_gaussian_evaluator.cache_clear()
    _common._memo_report.cache_clear()


def call():
    dp_sgd(prob, epsilon=1.0, delta=1 / n ** 2, passes=1, batch_size=256,
           record_history=False)


s = cal.calibrate_sampled_gaussian(target_epsilon=1.0, target_delta=1 / n ** 2,
                                   sample_rate=q, steps=round(1 / q))
eta = 1 / prob.smoothness()


def kernel():
    coef = np.zeros(prob.n_features)
    return _batch.sgd_dense(prob.X_c(), prob.y, prob.row_norms(), prob.loss.kind,
                            prob.loss.param, prob.penalty.kind, *prob.penalty.params, coef,
                            round(1 / q), _batch.POISSON, q, 0, eta, 1.0, s, q * n,
                            np.random.PCG64DXSM(1), np.random.PCG64DXSM(2), 1)


clock = time.process_time if "cpu" in sys.argv else time.perf_counter
res = {"cold": [], "cached": [], "kernel": []}
for _ in range(30):
    for k in res:
        if k == "cold":
            clear()
        t = clock()
        kernel() if k == "kernel" else call()
        res[k].append(clock() - t)
for k, v in res.items():
    print(k, "%.3f ms" % (1e3 * np.median(v)))
med = {k: np.median(v) for k, v in res.items()}
print("cold/kernel %.2f cached/kernel %.2f" % (med["cold"] / med["kernel"],
                                                med["cached"] / med["kernel"]))
if "prof" in sys.argv:
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(20):
        clear()
        call()
    pr.disable()
    pstats.Stats(pr).sort_stats(sys.argv[-1] if sys.argv[-1] in ("tottime", "cumtime") else "cumtime").print_stats(45)
