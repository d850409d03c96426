# Session 12: one-vs-rest DP-CD and DP-SGD fits at epsilon / K each (before) against the
# largest per-fit epsilon whose K-fold composition is epsilon (now): privacy_.epsilon and
# held-out accuracy, the data of ovr_budget.py (four Gaussian classes, n = 4,000 train and
# test, p = 5, features clipped to [-3, 3]), epsilon = 0.5, 20 passes, 8 seeds; given
# step and clip (DP-CD step 1 clip 1, DP-SGD step 0.1 clip 1) and private selection
# (n_trials 20, to keep the run short).
#   PYTHONPATH=. python docs/tuning/ovr_budget_iterative.py
import warnings
import numpy as np
warnings.simplefilter("ignore")
import dpsco_core.estimators as E
from ovr_budget import gaussian_classes

rng, n, K, X, y, Xt, yt = gaussian_classes()
now = E._iterative_one_vs_rest_epsilon
configs = [("DP-CD, step 1, clip 1", dict(solver="cd", step=1.0, clip=1.0)),
           ("DP-SGD, step 0.1, clip 1", dict(solver="sgd", step=0.1, clip=1.0)),
           ("DP-CD, private selection", dict(solver="cd", n_trials=20.0)),
           ("DP-SGD, private selection", dict(solver="sgd", n_trials=20.0))]
for label, kw in configs:
    for name, share in (("before: epsilon / K", lambda e, d, k, plan: e / k), ("now", now)):
        E._iterative_one_vs_rest_epsilon = share
        acc, eps = [], []
        try:
            for seed in range(8):
                m = E.DPLogisticRegression(epsilon=0.5, classes=list(range(K)),
                                           bounds=(-3, 3), passes=20, random_state=seed,
                                           **kw).fit(X, y)
                acc.append(np.mean(m.predict(Xt) == yt)); eps.append(m.privacy_.epsilon)
        except ValueError as exc:          # a selection too costly for its per-fit epsilon
            print(f"{label}, {name}: refused: {exc}", flush=True)
            continue
        print(f"{label}, {name}: accuracy {np.mean(acc):.4f} ± {np.std(acc) / np.sqrt(8):.4f} "
              f"(standard error), privacy_.epsilon {np.mean(eps):.4f} of 0.5", flush=True)
    E._iterative_one_vs_rest_epsilon = now
