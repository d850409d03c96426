# Issue 19, session 14 (diagnosis.md, section 15): the noise level of DP-SGD's rule with shuffled
# batches (sampling="shuffle", replace-one, not amplified). Held-out score at epsilon = 1,
# 20 passes, 5 random 80/20 splits, rms_row_norm = sqrt(p), batch_size="auto": Poisson batches,
# and shuffled batches with the rule at c sqrt(n / b) times Poisson's noise level nu for
# c = 0 (nu itself, the rule before this session), 1 (tuning.grids.sgd_noise_level) and 2.
#   PYTHONPATH=. python docs/tuning/shuffle_noise_level.py > docs/tuning/shuffle_noise_level.txt
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from _estimator_tasks import all_tasks
from sklearn.base import clone

from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND as B
from dpsco_core.tuning import grids

tasks = all_tasks()
exact = grids.sgd_noise_level


def scaled(c):
    def level(n, p, *, epsilon, delta, passes, sampling="poisson", batch_size=None):
        nu = grids.noise_level(n, p, epsilon=epsilon, delta=delta, passes=passes)
        if sampling == "poisson":
            return nu
        return nu * (c * math.sqrt(n / min(batch_size, n)) if c else 1.0)
    return level


variants = {"poisson": ("poisson", exact), "shuffle, nu": ("shuffle", scaled(0)),
            "shuffle, sqrt(n/b) nu": ("shuffle", exact),
            "shuffle, 2 sqrt(n/b) nu": ("shuffle", scaled(2))}
print("| data | " + " | ".join(variants) + " |")
print("|---" * (len(variants) + 1) + "|")
for name, (X, y, kind, extra, split) in tasks.items():
    scores = {k: [] for k in variants}
    for seed in range(5):
        Xtr, ytr, Xte, yte = split(X, y, seed)
        p = Xtr.shape[1]
        base = (DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-B, B), random_state=seed, **extra)
                if kind == "regression" else
                DPLogisticRegression(epsilon=1.0, bounds=(-B, B), random_state=seed))
        for k, (sampling, level) in variants.items():
            grids.sgd_noise_level = level
            try:
                model = clone(base).set_params(solver="sgd", sampling=sampling,
                                               rms_row_norm=math.sqrt(p))
                scores[k].append(float(model.fit(Xtr, ytr).score(Xte, yte)))
            finally:
                grids.sgd_noise_level = exact
    print(f"| {name} | " + " | ".join(f"{np.mean(v):.4f} ± {np.std(v) / math.sqrt(5):.4f}"
                                      for v in scores.values()) + " |", flush=True)
