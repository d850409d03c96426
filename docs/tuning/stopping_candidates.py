# Issue 19, session 9 (diagnosis.md, section 9): the expected error of the private selection
# under two distributions of the number of trials K, tails included, on the four problems of
# the tuning reproduction. Run from the repository root:
#   PYTHONPATH=. python docs/tuning/stopping_candidates.py [N_SEEDS] [MEAN:SHAPE,...]
# (stopping_candidates.txt: 4 "40:1,14:inf"; stopping_candidates_g80.txt: 4 "80:1";
# stopping_candidates_tnb.txt: 4 "80:2,40:2,80:0.5", K drawn by the library's sampler since
# session 10; before, any shape other than 1 was drawn as Poisson)
# For each problem, solver and distribution (geometric E[K] = 40, the default; Poisson
# E[K] = 14): every candidate of the reproduction's grid run at that distribution's trial
# epsilon (zero-out, 50 passes, the reproduction's public bounds and score clip) for N_SEEDS
# seeds, its relative error and noiseless clipped score; then a simulated selection (K drawn,
# a uniformly drawn (candidate, seed) per trial, the score noise of the trial added, the best
# noisy score kept; 40,000 draws), plain and with tune_solver's zero-model fallback.
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
from _search_simulation import run_candidates, simulate
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _loss_clip, _public_scale, _relative
from dpsco_core.privacy.budget import _check_relation
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import trial_epsilon, zero_model_score_bound

n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
rel = _check_relation("zero_out")
spec = sys.argv[2] if len(sys.argv) > 2 else "40:1,14:inf"
DISTRIBUTIONS = {}
for item in spec.split(","):
    mean, shape = (float(v) for v in item.split(":"))
    DISTRIBUTIONS[f"{'geometric' if shape == 1.0 else 'Poisson' if shape == float('inf') else f'TNB eta={shape:g}'} {mean:g}"] = (mean, shape)
for st in dpcd.build_settings(["electricity_raw", "electricity_std", "california_raw",
                               "california_std"]):
    P = st.problem
    B = _loss_clip(P)
    Z = zero_model_score_bound(P, B)
    zero_err = _relative(st, np.zeros(P.n_features))
    for solver in ("cd", "sgd"):
        grid = grids.candidate_grid(P, solver, scale=_public_scale(P, solver))
        for name, (mean, shape) in DISTRIBUTIONS.items():
            e, ev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta,
                                  solver=solver, n_train=P.n_samples,
                                  n_features=P.n_features, passes=50, mean=mean,
                                  shape=shape, relation=rel)
            sd = ev.events[1].noise_multiplier * B / P.n_samples
            err, loss = run_candidates(st, solver, grid, e, B, n_seeds, rel, 5000)
            plain, guarded = simulate(err, loss, sd, Z, zero_err, mean, shape, distinct=False)
            best = err.mean(1).min()
            print(f"{st.key} {solver} {name}: trial eps {e:.3f}, best candidate {best:.4f}, "
                  f"zero model {zero_err:.3f} | selection mean {plain.mean():.4f} "
                  f"(median {np.median(plain):.4f}, 99% {np.percentile(plain, 99):.4f}) | "
                  f"with the fallback mean {guarded.mean():.4f} (99% "
                  f"{np.percentile(guarded, 99):.4f}, fallback {np.mean(guarded != plain):.4f})",
                  flush=True)
