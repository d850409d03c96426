# Issue 19, session 9 (diagnosis.md, section 9): what the distribution of the number of trials K
# costs in *expected* error, tails included. Run from the repository root:
#   PYTHONPATH=. python docs/tuning/stopping_tail.py
# Part 1, the accounting (public numbers only): the solver epsilon of one trial when the whole
# search is (1, 1/n^2)-DP (zero-out, n = 20,640, 8 features, 50 passes, score share 0.3),
# P[K <= 2], and P[a given one of m candidates is never drawn] = E[(1 - 1/m)^K].
# Part 2, a simulated selection over the per-candidate runs of score_choice_{sgd,cd}.txt
# (every candidate of the grid at the geometric trial's epsilon, 4 seeds, raw and
# standardized California; section 4): K drawn from the distribution, a uniformly drawn
# (candidate, seed) per trial, its noiseless score (clip 2B, the default) plus the score noise
# of that trial's epsilon (std scaled by eps_geometric / eps), the lowest noisy score
# selected; 40,000 draws. The candidates' errors are those at the geometric trial's epsilon
# (not rescaled: the distributions compared have trial epsilons within 12% of it). "guarded":
# tune_solver's zero-model fallback, the zero model (its relative error computed here)
# released when the selected noisy score exceeds the public bound Z = B of the zero model's
# clipped loss by 3 noise std.
import collections
import re
import warnings

import numpy as np

warnings.simplefilter("ignore")
from dpsco_core.experiments import dpcd
from dpsco_core.privacy.budget import _check_relation
from dpsco_core.tuning.search import DEFAULT_SCORE_SHARE, trial_epsilon
from dpsco_core.tuning.stopping import num_trials_pmf

INF = float("inf")
DISTRIBUTIONS = [(40.0, 1.0), (10.0, INF), (12.0, INF), (14.0, INF), (16.0, INF), (20.0, INF)]
rel = _check_relation("zero_out")
n = 20640
k = np.arange(0, 3000)
eps = {}
print("part 1: accounting (trial's solver epsilon; P[K <= 2]; miss probabilities)")
for solver in ("cd", "sgd"):
    for mean, shape in DISTRIBUTIONS:
        e, _ = trial_epsilon(target_epsilon=1.0, target_delta=1 / n**2, solver=solver,
                             n_train=n, n_features=8, passes=50, mean=mean, shape=shape,
                             relation=rel, score_share=DEFAULT_SCORE_SHARE)
        eps[solver, mean, shape] = e
        pmf = num_trials_pmf(k, mean, shape)
        miss = {m: float((pmf * (1 - 1 / m) ** k).sum()) for m in (6, 7, 14)}
        name = "geometric" if shape == 1.0 else "Poisson"
        print(f"  {solver} {name:9s} E[K]={mean:4.0f}: trial eps {e:.3f}  "
              f"P[K<=2] {pmf[:3].sum():.2e}  miss6 {miss[6]:.3f}  miss7 {miss[7]:.3f}  "
              f"miss14 {miss[14]:.3f}")

print("part 2: simulated selection, relative error of the released model")
zero_error = {}
for st in dpcd.build_settings(["california_raw", "california_std"]):
    P = st.problem
    F0 = float(np.mean(P.loss.value(np.zeros(P.n_samples), np.asarray(P.y, float))))
    zero_error[st.key] = (F0 - st.optimum) / st.optimum
    print(f"  {st.key}: relative error of the zero model {zero_error[st.key]:.4f}")
pattern = re.compile(r"step (\S+) clip (\S+) seed (\d) err (\S+)\s+B (\S+) 4B (\S+).* 2B (\S+) 8B")
for solver in ("sgd", "cd"):
    runs, meta, problem = collections.defaultdict(list), {}, None
    for line in open(f"docs/tuning/score_choice_{solver}.txt"):
        m = re.match(r"(california_\w+).*B=([\d.]+) trial eps=([\d.]+) score noise std: "
                     r"B ([\d.]+),", line)
        if m:
            problem = m[1]
            # the zero model's bound B, trial eps, noise std at the default clip 2B
            meta[problem] = (float(m[2]), float(m[3]), 2 * float(m[4]))
            continue
        m = pattern.match(line)
        if m:
            runs[problem, (float(m[1]), float(m[2]))].append((float(m[4]), float(m[7])))
    for problem, (Z, eps0, sd0) in meta.items():
        cands = [key[1] for key in runs if key[0] == problem]
        err = np.array([[e for e, _ in runs[problem, c]] for c in cands])
        score = np.array([[s for _, s in runs[problem, c]] for c in cands])
        for mean, shape in DISTRIBUTIONS:
            rng = np.random.default_rng(0)
            sd = sd0 * eps0 / eps[solver, mean, shape]
            out, guarded = [], []
            for _ in range(40000):
                K = rng.geometric(1 / mean) if shape == 1.0 else rng.poisson(mean)
                if K == 0:
                    continue          # the zero model (probability e^-mean, below 5e-5)
                c = rng.integers(len(cands), size=K)
                s = rng.integers(err.shape[1], size=K)
                noisy = score[c, s] + rng.normal(0.0, sd, K)
                j = np.argmin(noisy)
                out.append(err[c[j], s[j]])
                guarded.append(zero_error[problem] if noisy[j] > Z + 3 * sd else out[-1])
            out, guarded = np.array(out), np.array(guarded)
            name = "geometric" if shape == 1.0 else "Poisson"
            print(f"  {problem} {solver} {name:9s} E[K]={mean:4.0f}: mean {out.mean():.4f}  "
                  f"median {np.median(out):.4f}  90% {np.percentile(out, 90):.4f}  "
                  f"99% {np.percentile(out, 99):.4f}  max {out.max():.3g} | guarded: mean "
                  f"{guarded.mean():.4f}  99% {np.percentile(guarded, 99):.4f}  max "
                  f"{guarded.max():.3g}  (fallback {np.mean(guarded != out):.4f})")
