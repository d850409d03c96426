# Issue 19, session 14 (diagnosis.md, section 15): DP-SGD's step and batch for held-out
# prediction with rms_row_norm. Held-out score at epsilon = 1, 20 passes (the estimators'
# default), 10 random 80/20 splits, features standardized with the training split's statistics
# and clipped onto [-5, 5], rms_row_norm = sqrt(p):
#   step 0.1 / 0.3 / 1 with batch 256 (the noise-level rule's clip; 0.1 was the rule's step),
#   "rule, b 256": tuning.grids.prediction_sgd_step with batch 256,
#   "rule, auto": prediction_sgd_step with batch_size="auto" (tuning.grids.auto_batch_size),
#   the estimators' default since this session.
# Data: standardized California and Electricity (reproduce tuning's estimator rows), the three
# held-out sets of estimator_rms_holdout.py, and two synthetic standardized regressions.
#   PYTHONPATH=. python docs/tuning/prediction_step.py > docs/tuning/prediction_step.txt
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from _estimator_tasks import all_tasks
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, LogisticRegression

from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND as B

tasks = all_tasks()
variants = {"step 0.1, b 256": dict(step=0.1, batch_size=256),
            "step 0.3, b 256": dict(step=0.3, batch_size=256),
            "step 1, b 256": dict(step=1.0, batch_size=256),
            "rule, b 256": dict(batch_size=256),
            "rule, auto": dict()}
print("| data (training n, p) | " + " | ".join(variants) + " | non-private |")
print("|---" * (len(variants) + 2) + "|")
for name, (X, y, kind, extra, split) in tasks.items():
    scores = {k: [] for k in list(variants) + ["non-private"]}
    for seed in range(10):
        Xtr, ytr, Xte, yte = split(X, y, seed)
        p = Xtr.shape[1]
        if kind == "regression":
            base = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-B, B), random_state=seed, **extra)
            ref = LinearRegression()
        else:
            base = DPLogisticRegression(epsilon=1.0, bounds=(-B, B), random_state=seed)
            ref = LogisticRegression(max_iter=1000)
        for k, kw in variants.items():
            model = clone(base).set_params(solver="sgd", rms_row_norm=math.sqrt(p), **kw)
            scores[k].append(float(model.fit(Xtr, ytr).score(Xte, yte)))
        scores["non-private"].append(float(ref.fit(Xtr, ytr).score(Xte, yte)))
    cells = [f"{np.mean(v):.4f} ± {np.std(v) / math.sqrt(len(v)):.4f}" for v in scores.values()]
    print(f"| {name} ({len(ytr)}, {p}) | " + " | ".join(cells) + " |", flush=True)
