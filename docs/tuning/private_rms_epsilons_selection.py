# Issue 19, session 15 (diagnosis.md, section 16): at epsilon = 0.25, the private selection
# (rms_row_norm=None, solver="cd" and "auto") against the new default (rms_row_norm="auto":
# the private rho), held-out, 5 splits, the small tasks of private_rms_epsilons.py.
#   PYTHONPATH=. python docs/tuning/private_rms_epsilons_selection.py > docs/tuning/private_rms_epsilons_selection.txt
import math, sys, types, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from _estimator_tasks import held_out_tasks
M = types.SimpleNamespace(tasks=held_out_tasks())
for name in ["wine", "iris", "diabetes", "multi K10 n5000 p20"]:
    X, y, kind, lb, split = M.tasks[name]
    out = {}
    for label, kw in [("selection cd", dict(solver="cd", rms_row_norm=None)), ("former auto", dict(rms_row_norm=None)), ("new auto", dict())]:
        sc, ran = [], set()
        for seed in range(5):
            Xtr, ytr, Xte, yte = split(X, y, seed)
            kw2 = dict(epsilon=0.25, bounds=(-5, 5), random_state=seed, **kw)
            m = (DPLasso(alpha=1e-4, label_bound=lb, **kw2) if kind == "r" else DPLogisticRegression(classes=np.unique(y), **kw2))
            try:
                sc.append(m.fit(Xtr, ytr).score(Xte, yte)); ran.add(m.solver_)
            except ValueError:
                sc.append(np.nan)
        out[label] = f"{np.mean(sc):.3f}±{np.std(sc)/math.sqrt(5):.3f} [{'/'.join(sorted(ran))}]"
    print(name, "epsilon 0.25:", "  ".join(f"{k} {v}" for k, v in out.items()), flush=True)
