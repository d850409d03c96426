# Issue 19 diagnosis (see diagnosis.md); run from the repository root:
#   PYTHONPATH=. python docs/tuning/diagnose_split.py ARGS
import sys, math, warnings, time
warnings.simplefilter("ignore")
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _loss_clip, _relative
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import trial_epsilon, _split_problem, _run_solver
from dpsco_core.privacy.budget import _check_relation
rel = _check_relation("zero_out")
keys = sys.argv[1].split(",")
mean, shape, share = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
settings = dpcd.build_settings(keys)
for st in settings:
    P = st.problem; n, p = P.n_samples, P.n_features
    n_val = round(0.2*n); n_tr = n-n_val
    perm = np.random.default_rng(0).permutation(n)
    tr, va = _split_problem(P, np.sort(perm[n_val:])), _split_problem(P, np.sort(perm[:n_val]))
    B = _loss_clip(P)
    for solver in ["cd","sgd"]:
        e, tev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta, solver=solver, n_train=n_tr, n_features=p, passes=50, mean=mean, shape=shape, relation=rel, score_share=share)
        s = tev.events[1].noise_multiplier
        sd = s*B/n_val
        scale = _public_scale(P, solver)
        grid = grids.candidate_grid(P, solver, scale=scale)
        print(f"== {st.key} {solver} e_trial={e:.3f} F*={st.optimum:.4g} B={B:.3g} score_sd={sd:.3g} ({sd/abs(st.optimum):.3g} rel)", flush=True)
        for c in grid:
            errs=[]; vals=[]
            for seed in range(2):
                r = _run_solver(solver, tr, c, e, st.delta, 50, 256, False, rel, seed)
                errs.append(_relative(st, r.coef))
                m = np.asarray(va.X @ r.coef).ravel()
                L = np.minimum(va.loss.value(m, va.y), B).mean() + (0 if va.penalty is None else va.penalty.value(r.coef))
                vals.append(L)
            r1 = _run_solver(solver, P, c, st.epsilon, st.delta, 50, 256, False, rel, 7)
            print(f"  step={c.step:g} kappa={c.clip/scale:.3g}: err@e_trial={np.mean(errs):.4g} valloss={np.mean(vals):.5g} (sd across seeds {np.std(vals):.2g}) err@eps1,full={_relative(st, r1.coef):.4g}", flush=True)
