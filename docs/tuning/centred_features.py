# Issue 19, session 16 (diagnosis.md, section 17): the held-out tasks' standardized features
# mapped onto [0, 1] ((z + 5) / 10: mean 0.5, spread 0.1) or [-1, 1] (z / 5), bounds declared
# accordingly; the defaults, DP-SGD and SSP at epsilon = 1 and DP-CD's rule at epsilon = inf
# (no noise), 5 splits.  PYTHONPATH=. python docs/tuning/centred_features.py > docs/tuning/centred_features.txt
import sys, warnings, math
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLogisticRegression, DPLasso
from sklearn.linear_model import LogisticRegression
from _estimator_tasks import held_out_tasks
T = held_out_tasks()
for name in ["breast", "iris", "diabetes"]:
    X, y, kind, lb, split = T[name]
    for mapping, bounds in [("[0,1]", (0, 1)), ("[-1,1]", (-1, 1))]:
        res = {}
        for solver, eps in [("auto", 1.0), ("sgd", 1.0), ("ssp", 1.0), ("cd", np.inf)]:
            sc = []
            for seed in range(5):
                Xtr, ytr, Xte, yte = split(X, y, seed)
                f = (lambda Z: (Z + 5) / 10) if mapping == "[0,1]" else (lambda Z: Z / 5)
                Xtr, Xte = f(Xtr), f(Xte)
                kw = dict(epsilon=eps, bounds=bounds, random_state=seed, solver=solver)
                m = (DPLasso(alpha=1e-4, label_bound=lb, **kw) if kind == "r" else DPLogisticRegression(classes=np.unique(y), **kw))
                sc.append(m.fit(Xtr, ytr).score(Xte, yte))
            res[f"{solver}@{eps}"] = np.mean(sc)
        print(name, mapping, "  ".join(f"{k} {v:.3f}" for k, v in res.items()), flush=True)
