# Issue 19, session 10 (diagnosis.md, section 11): every DP-CD candidate of the tuning grid on
# Sparse LASSO at the private selection's trial epsilon (E[K] = 80; SHAPE 1, the geometric K of the
# session-9 code the table was run with, by default), 4 seeds: relative error and clipped score.
#   PYTHONPATH=. python docs/tuning/sparse_candidates.py [PASSES] [SHAPE]
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _loss_clip, _public_scale, _relative
from dpsco_core.privacy.budget import _check_relation
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import _run_solver, trial_epsilon, zero_model_score_bound
passes = int(sys.argv[1]) if len(sys.argv) > 1 else 5
shape = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
rel = _check_relation("zero_out")
st = dpcd.build_settings(["sparse_lasso"])[0]
P = st.problem; B = _loss_clip(P); y = np.asarray(P.y, float)
print("B", B, "Z", zero_model_score_bound(P, B), "max|y|", np.abs(y).max(), "F*", st.optimum)
for solver in ("cd",):
    grid = grids.candidate_grid(P, solver, scale=_public_scale(P, solver))
    e, ev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta, solver=solver,
                          n_train=P.n_samples, n_features=P.n_features, passes=passes, mean=80.0,
                          shape=shape, relation=rel)
    sd = ev.events[1].noise_multiplier * B / P.n_samples
    print(solver, "trial eps %.3f score noise sd %.4f" % (e, sd))
    for c in grid:
        errs, scores, exact = [], [], []
        for s in range(4):
            w = _run_solver(solver, P, c, e, st.delta, passes, 256, False, rel, 5000 + s).coef
            m = np.asarray(P.X @ w).ravel()
            scores.append(np.minimum(P.loss.value(m, y), B).mean() + P.penalty.value(w))
            exact.append(P.objective(w))
            errs.append(_relative(st, w))
        print("  clip %8.3g  err %.4f ± %.4f  clipped score %.4f  objective %.4f"
              % (c.clip, np.mean(errs), np.std(errs), np.mean(scores), np.mean(exact)))
