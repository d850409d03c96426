# Issue 19, session 10 (diagnosis.md, section 11): the simulated search of
# stopping_candidates.py on chosen rows, with more seeds per candidate and without reusing a
# run within one search (each candidate's draws in a search take distinct seeds while it has
# any left): with 4 seeds and ~80 trials a search reused every run several times, which
# understates how often a lucky score of a worse candidate wins. Run from the repository root:
#   PYTHONPATH=. python docs/tuning/stopping_rows.py PROBLEM SOLVER N_SEEDS \
#       MEAN:SHAPE[:SCORE_SHARE],...
# (stopping_rows.txt: each of the eight rows with 32 "80:1,80:2"; then california_raw sgd and
# electricity_std cd with 32 "80:2:0.5,80:2:0.15", the score share at 0.5 and 0.15)
# Session 12: a fifth argument "centred" searches tuning.grids.noise_rule_grid at the trial's
# epsilon instead of the bounds' grid (stopping_rows_centred.txt, each row 32 "80:2").
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
from _search_simulation import run_candidates, simulate
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import (_label_bound, _loss_clip, _public_rms,
                                           _public_scale, _relative)
from dpsco_core.privacy.budget import _check_relation
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import trial_epsilon, zero_model_score_bound

key, solver, n_seeds, spec = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rel = _check_relation("zero_out")
st = dpcd.build_settings([key])[0]
P = st.problem
B = _loss_clip(P)
Z = zero_model_score_bound(P, B)
zero_err = _relative(st, np.zeros(P.n_features))
centred = sys.argv[5:6] == ["centred"]
grid = grids.candidate_grid(P, solver, scale=_public_scale(P, solver))
for item in spec.split(","):
    mean, shape, share = (float(v) for v in (item + ":0.3").split(":")[:3])
    e, ev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta, solver=solver,
                          n_train=P.n_samples, n_features=P.n_features, passes=50, mean=mean,
                          shape=shape, relation=rel, score_share=share)
    sd = ev.events[1].noise_multiplier * B / P.n_samples
    if centred:
        grid = grids.noise_rule_grid(P, solver, rms_row_norm=_public_rms(P), epsilon=e,
                                     delta=st.delta, passes=50, label_bound=_label_bound(P),
                                     neighboring_relation="zero_out")     # as rel
    err, loss = run_candidates(st, solver, grid, e, B, n_seeds, rel, 7000)
    plain, guarded = simulate(err, loss, sd, Z, zero_err, mean, shape, distinct=True)
    per = "  ".join(f"kappa-{i} {err[i].mean():.4f}" for i in range(len(grid)))
    print(f"{key} {solver} E[K]={mean:g} eta={shape:g} score share {share:g}: "
          f"trial eps {e:.3f}, score sd {sd:.4g} | "
          f"with the fallback mean {guarded.mean():.4f} median {np.median(guarded):.4f} "
          f"P[err > 3 x best] {np.mean(guarded > 3 * err.mean(1).min()):.3f} "
          f"99% {np.percentile(guarded, 99):.4f} | candidates: {per}", flush=True)
