# Session 20: feature_scaling="private" on the held-out tasks of private_rms_holdout.py, whose
# features are already standardized (bounds (-5, 5)): does the release cost where the features
# already share one scale? Held-out score at epsilon = 1, 5 splits; the noise standard
# deviation of the scales' release in the unit box, sigma_u = z sqrt(p) / n, per task.
#   PYTHONPATH=. python docs/tuning/feature_scaling_standardized.py > docs/tuning/feature_scaling_standardized.txt
import math, sys, types, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLasso, DPLogisticRegression, FEATURE_SCALING_SHARE
from dpsco_core.privacy.calibration import _zcdp_rho
from _estimator_tasks import held_out_tasks
tasks = held_out_tasks()
columns = {"default": {}, "feature_scaling": dict(feature_scaling="private")}
for name, (X, y, kind, lb, split) in tasks.items():
    out = {}
    for col, kw in columns.items():
        sc = []
        for seed in range(5):
            Xtr, ytr, Xte, yte = split(X, y, seed)
            m = (DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=lb, random_state=seed, **kw) if kind == "r"
                 else DPLogisticRegression(epsilon=1.0, bounds=(-5, 5), random_state=seed, classes=np.unique(y), **kw))
            m.fit(Xtr, ytr); sc.append(m.score(Xte, yte))
        out[col] = (np.mean(sc), np.std(sc) / math.sqrt(len(sc)))
    n, p = Xtr.shape
    z = 1 / math.sqrt(FEATURE_SCALING_SHARE * _zcdp_rho(1.0, 1 / n**2))
    print(f"{name} (n {n}, p {p}, sigma_u {z * math.sqrt(p) / n:.3f}):", "  ".join(
        f"{k} {v[0]:.3f}±{v[1]:.3f}" for k, v in out.items()), flush=True)
