# Issue 19, session 7 (see diagnosis.md): which bounded score ranks DP-SGD's California
# candidates like their objective? Run from the repository root:
#   PYTHONPATH=. python docs/tuning/score_choice.py california_raw,california_std 4 [sgd|cd]
# For every candidate of the grid, two seeds at the trial's epsilon: the exact objective and
# the noiseless scores  min(l, c B)  for c in (1, 4, 16)  and the loss of the prediction
# clipped onto [-Y, Y] (bounded by 4B); and the score noise (std) of each at the trial's score
# multiplier (B = the loss of w = 0 at |y| = Y, Y the label bound).
import sys
import warnings; warnings.simplefilter("ignore")
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _relative
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import _run_solver, trial_epsilon, DEFAULT_SCORE_SHARE
from dpsco_core.privacy.budget import _check_relation

rel = _check_relation("zero_out")
keys = sys.argv[1].split(",") if len(sys.argv) > 1 else ["california_raw"]
n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
solver = sys.argv[3] if len(sys.argv) > 3 else "sgd"
for st in dpcd.build_settings(keys):
    P = st.problem
    y = np.asarray(P.y, float)
    Y = float(np.abs(y).max())
    B = float(np.max(P.loss.value(np.zeros(2), np.array([-Y, Y]))))   # the loss of w = 0
    e, ev = trial_epsilon(target_epsilon=st.epsilon, target_delta=st.delta, solver=solver,
                          n_train=P.n_samples, n_features=P.n_features, passes=50, mean=40.0,
                          shape=1.0, relation=rel, score_share=DEFAULT_SCORE_SHARE)
    s = ev.events[1].noise_multiplier
    n = P.n_samples
    print(f"{st.key} {solver}: F*={st.optimum:.4f} Y={Y:.3g} B={B:.3g} trial eps={e:.3f} "
          f"score noise std: B {s*B/n:.4f}, 4B {4*s*B/n:.4f}, 16B {16*s*B/n:.4f}")
    grid = grids.candidate_grid(P, solver, scale=_public_scale(P, solver))
    rows = []
    for c in grid:
        for seed in range(n_seeds):
            w = _run_solver(solver, P, c, e, st.delta, 50, 256, False, rel, seed).coef
            m = np.asarray(P.X @ w).ravel()
            l = P.loss.value(m, y)
            lc = P.loss.value(np.clip(m, -Y, Y), y)
            pen = P.penalty.value(w)
            ar = np.abs(m - y)
            r = [_relative(st, w)] + [np.minimum(l, k * B).mean() + pen for k in (1, 4, 16)] \
                + [lc.mean() + pen, (l > B).mean(), l.max()] \
                + [np.minimum(ar, k * Y).mean() for k in (1, 2, 4)] \
                + [np.minimum(l, k * B).mean() + pen for k in (2, 8)] + [l.mean() + pen]
            rows.append((c.step, c.clip, seed, *r))
            print("step %g clip %.3g seed %d err %.4g  B %.4f 4B %.4f 16B %.4f predclip %.4f "
                  "frac>B %.4f max %.3g abs Y %.4f 2Y %.4f 4Y %.4f 2B %.4f 8B %.4f obj %.4f" % rows[-1], flush=True)
    a = np.array([r[3:] for r in rows])
    from scipy.stats import spearmanr
    # (column, name, sensitivity times n / s): the clipped-loss scores and the clipped
    # absolute residuals; the simulated selection draws K ~ geometric(E[K] = 40) trials of
    # uniformly drawn (candidate, seed) pairs, adds the score noise, and keeps the best.
    variants = [(12, "objective, no noise", 0.0), (1, "B", B), (10, "2B", 2 * B),
                (2, "4B", 4 * B), (11, "8B", 8 * B), (3, "16B", 16 * B),
                (4, "predclip", 4 * B), (7, "|r| Y", Y), (8, "|r| 2Y", 2 * Y),
                (9, "|r| 4Y", 4 * Y)]
    rng = np.random.default_rng(0)
    for j, name, sens in variants:
        rho = spearmanr(a[:, 0], a[:, j]).correlation
        best = np.argmax(-a[:, j])
        picks = []
        for _ in range(20000):
            K = rng.geometric(1.0 / 40.0)
            idx = rng.integers(len(a), size=K)
            noisy = a[idx, j] + rng.normal(0.0, s * sens / n, size=K)
            picks.append(a[idx[np.argmin(noisy)], 0])
        picks = np.array(picks)
        print(f"  {name}: spearman with error {rho:.3f}; noiseless pick error "
              f"{a[best, 0]:.4g}; simulated selection error: mean {np.mean(picks):.4g}, "
              f"median {np.median(picks):.4g}, P[> 3x best] "
              f"{np.mean(picks > 3 * a[:, 0].min()):.3f}; noise std {s * sens / n:.4f}")
    print(f"  best error {a[:, 0].min():.4g}")
