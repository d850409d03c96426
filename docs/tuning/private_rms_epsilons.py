# Issue 19, session 15 (diagnosis.md, section 16): rms_row_norm="private" (with
# estimators.rms_quantile_epsilon, fitted at epsilon = 1) against the declared sqrt(p) at
# epsilon = 0.25 and 4, DP-CD and DP-SGD, held-out score over 5 splits, on the tasks of
# private_rms_holdout.py where the private rho matters most (small and many-class data).
#   PYTHONPATH=. python docs/tuning/private_rms_epsilons.py > docs/tuning/private_rms_epsilons.txt
import math, sys, types, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLasso, DPLogisticRegression, rms_quantile_epsilon
from _estimator_tasks import held_out_tasks
M = types.SimpleNamespace(tasks=held_out_tasks())
names = ["california, 2,500 records", "digits", "wine", "iris", "diabetes", "multi K10 n5000 p20"]
for name in names:
    X, y, kind, lb, split = M.tasks[name]
    for eps in (0.25, 4.0):
        out = {}
        for solver in ("cd", "sgd"):
            for label in ("private", "declared"):
                sc = []
                for seed in range(5):
                    Xtr, ytr, Xte, yte = split(X, y, seed)
                    rho = "private" if label == "private" else math.sqrt(Xtr.shape[1])
                    kw = dict(epsilon=eps, bounds=(-5, 5), random_state=seed, solver=solver, rms_row_norm=rho)
                    m = (DPLasso(alpha=1e-4, label_bound=lb, **kw) if kind == "r"
                         else DPLogisticRegression(classes=np.unique(y), **kw))
                    sc.append(m.fit(Xtr, ytr).score(Xte, yte))
                out[f"{solver} {label}"] = (np.mean(sc), np.std(sc) / math.sqrt(len(sc)))
        n = Xtr.shape[0]
        eq = rms_quantile_epsilon(eps, 1.0 / n**2, n)
        print(f"{name} (n {n}) epsilon {eps} (epsilon_q {eq:.3f}):", "  ".join(
            f"{k} {v[0]:.3f}±{v[1]:.3f}" for k, v in out.items()), flush=True)
