# Issue 19, session 14 (diagnosis.md, section 15): the reproduction's rows (relative error of
# the objective, 50 passes; Sparse LASSO at 5 and 50) with the noise-level rule's DP-SGD clip
# (A = 0.004) and a step that grows as the number of steps falls,
#   step = min(1, K b / (n sqrt(passes))) = min(1, K sqrt(passes) / T),
# the form of tuning.grids.prediction_sgd_step (K = u / A, u = 0.4: K = 100). Same seeds as
# noise_rule_sweep.py (10, 4 on Sparse LASSO); the last lines: the geometric mean over the six
# rows per K (step 0.1, the rule's: 0.0760, noise_rule_sweep_sgd.txt).
#   PYTHONPATH=. python docs/tuning/sgd_step_reproduction.py 50,100,200   (then 25,35,70)
import math, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from dpsco_core.experiments.dpcd import build_settings
from dpsco_core.experiments.tuning import _label_bound, _public_rms, _relative, _run
from dpsco_core.tuning import grids
Ks = [float(a) for a in sys.argv[1].split(",")]
b = 256
res = {}
for s in build_settings(None, log=lambda *a: None):
    P = s.problem
    rho, Y = _public_rms(P), _label_bound(P)
    for passes in ((5, 50) if s.key == "sparse_lasso" else (50,)):
        seeds = range(4 if s.key == "sparse_lasso" else 10)
        nu = grids.noise_level(P.n_samples, P.n_features, epsilon=s.epsilon, delta=s.delta, passes=passes)
        c = min(0.004 / nu, grids.NOISE_RULE_MAX_FACTOR)
        for K in Ks:
            step = min(1.0, K * min(b, P.n_samples) / (P.n_samples * math.sqrt(passes)))
            cand = grids.Candidate(step, grids._derivative_at_zero(P, Y) * rho * c)
            e = [_relative(s, _run(s, "sgd", cand, passes, 1000 + seed)) for seed in seeds]
            res[(s.key, passes, K)] = float(np.mean(e))
            print(f"{s.key} passes {passes} K {K:g}: step {step:.3g} error {np.mean(e):.4f} ± {np.std(e):.1e}", flush=True)
for K in Ks:
    v = [r for k, r in res.items() if k[2] == K]
    print(f"K {K:g}: geometric mean {math.exp(np.mean(np.log(v))):.4g}")
