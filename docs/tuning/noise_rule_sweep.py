# Issue 19, session 11 (diagnosis.md, section 12): the noise-level default rule
#   clip = Lambda_0 rho min(A / nu, c_max),  nu = sqrt(p passes log(1/delta)) / (n epsilon),
# swept over A (and DP-SGD's step) on the five problems of the DP-CD reproduction (Sparse LASSO
# at 5 and 50 passes), rho and max|y| read from the data and declared public as in
# `reproduce tuning`. 10 seeds (4 on Sparse LASSO), the run seeds of the table's defaults rows.
# The last lines: the geometric mean of the relative errors over the six rows per setting (the
# criterion A was chosen by).
#   PYTHONPATH=. python docs/tuning/noise_rule_sweep.py cd 0.004,0.005,0.007,0.01 1
#   PYTHONPATH=. python docs/tuning/noise_rule_sweep.py sgd 0.002,0.004,0.007 0.1,1
import math, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from dpsco_core.experiments.dpcd import build_settings
from dpsco_core.experiments.tuning import _label_bound, _public_rms, _relative, _run
from dpsco_core.tuning import grids

solver = sys.argv[1]
As = [float(a) for a in sys.argv[2].split(",")]
steps = [float(a) for a in sys.argv[3].split(",")]
res = {}
for s in build_settings(None, log=lambda *a: None):
    P = s.problem
    rho, Y = _public_rms(P), _label_bound(P)
    for passes in ((5, 50) if s.key == "sparse_lasso" else (50,)):
        seeds = range(4 if s.key == "sparse_lasso" else 10)
        nu = grids.noise_level(P.n_samples, P.n_features, epsilon=s.epsilon, delta=s.delta,
                               passes=passes)
        for step in steps:
            for A in As:
                c = min(A / nu, grids.NOISE_RULE_MAX_FACTOR)
                cand = grids.Candidate(step, grids._derivative_at_zero(P, Y) * rho * c)
                e = [_relative(s, _run(s, solver, cand, passes, 1000 + seed)) for seed in seeds]
                res[(s.key, passes, step, A)] = float(np.mean(e))
                print(f"{s.key} passes {passes} nu {nu:.3g} step {step:g} A {A:g}: "
                      f"c {c:.3g} error {np.mean(e):.4f} ± {np.std(e):.1e}", flush=True)
for step in steps:
    for A in As:
        v = [r for k, r in res.items() if k[2:] == (step, A)]
        print(f"step {step:g} A {A:g}: geometric mean {math.exp(np.mean(np.log(v))):.4g}")
