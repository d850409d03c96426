# Issue 19 diagnosis (see diagnosis.md); run from the repository root:
#   PYTHONPATH=. python docs/tuning/diagnose.py ARGS
import sys, math, warnings, time
warnings.simplefilter("ignore")
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _loss_clip, _relative
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import trial_epsilon, _run_solver
from dpsco_core.privacy.budget import _check_relation
rel = _check_relation("zero_out")
keys = sys.argv[1].split(",")
mean, shape = float(sys.argv[2]), float(sys.argv[3])
shares=[float(x) for x in sys.argv[4].split(",")]
settings = dpcd.build_settings(keys)
for st in settings:
    P = st.problem; n, p = P.n_samples, P.n_features
    B = _loss_clip(P)
    for solver in ["cd","sgd"]:
        out=[]
        for share in shares:
            e, tev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta, solver=solver, n_train=n, n_features=p, passes=50, mean=mean, shape=shape, relation=rel, score_share=share)
            sd = tev.events[1].noise_multiplier*B/n
            out.append((share,e,sd))
        print(f"== {st.key} {solver} F*={st.optimum:.4g} " + " ".join(f"share={a}: e={b:.3f} score_sd_rel={c/abs(st.optimum):.2g}" for a,b,c in out), flush=True)
        scale = _public_scale(P, solver)
        for c in grids.candidate_grid(P, solver, scale=scale):
            line=[]
            for share,e,sd in out:
                errs=[_relative(st, _run_solver(solver, P, c, e, st.delta, 50, 256, False, rel, seed).coef) for seed in range(2)]
                line.append(f"{np.mean(errs):.3g}")
            print(f"  step={c.step:g} kappa={c.clip/scale:.3g}: err " + " / ".join(line), flush=True)
