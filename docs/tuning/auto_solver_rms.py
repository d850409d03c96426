# Issue 19, session 14 (diagnosis.md, section 15): solver="auto" given rms_row_norm. SSP against
# DP-CD with the noise-level rule (rms_row_norm = sqrt(p), replace-one both) on standardized
# California and Electricity at epsilon = 0.25, 1 and 4 (10 splits, 20 passes), with SSP's
# ridge ratio (dpsco_core.solvers.ssp.ssp_ridge_ratio) and the solver "auto" now picks
# (SSP at ratio <= estimators.SSP_MAX_RIDGE_RATIO_WITH_RMS = 0.02). The synthetic regressions
# are in auto_solver_rule.txt.
#   PYTHONPATH=. python docs/tuning/auto_solver_rms.py > docs/tuning/auto_solver_rms.txt
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND as B
from dpsco_core.experiments.tuning import _estimator_data, _split
from dpsco_core.solvers.ssp import ssp_ridge_ratio

print("| data | epsilon | ridge ratio | SSP | DP-CD, rule | auto given rms_row_norm |")
print("|---|---|---|---|---|---|")
for name, (X, y, kind) in _estimator_data().items():
    for eps in (0.25, 1.0, 4.0):
        scores, picked = {"ssp": [], "cd": []}, set()
        for seed in range(10):
            Xtr, ytr, Xte, yte = _split(X, y, seed)
            p = Xtr.shape[1]
            if kind == "regression":
                make = lambda **kw: DPLasso(alpha=1e-4, epsilon=eps, bounds=(-B, B),  # noqa
                                            label_bound=(0.0, 5.0), random_state=seed, **kw)
            else:
                make = lambda **kw: DPLogisticRegression(epsilon=eps, bounds=(-B, B),  # noqa
                                                         random_state=seed, **kw)
            scores["ssp"].append(make(solver="ssp").fit(Xtr, ytr).score(Xte, yte))
            scores["cd"].append(make(solver="cd", rms_row_norm=math.sqrt(p))
                                .fit(Xtr, ytr).score(Xte, yte))
            picked.add(make(rms_row_norm=math.sqrt(p)).fit(Xtr, ytr).solver_)
        n = len(ytr)
        ratio = ssp_ridge_ratio(p + 1, n_samples=n, epsilon=eps, delta=1.0 / n ** 2,
                                releases=2 if kind == "regression" else 4)
        cells = [f"{np.mean(v):.4f} ± {np.std(v) / math.sqrt(10):.4f}" for v in scores.values()]
        print(f"| {name} | {eps:g} | {ratio:.4f} | " + " | ".join(cells) +
              f" | {', '.join(sorted(picked))} |", flush=True)
