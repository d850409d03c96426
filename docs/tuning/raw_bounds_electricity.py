# Session 19: what honest but loose public bounds cost the default estimator. Raw Electricity
# with day-of-week divided by 7 (every feature in [0, 1]); held-out accuracy at epsilon = 1,
# 2 splits: no bounds (constants read from the data: a conditional guarantee), bounds (0, 1)
# and (-1, 1) with the defaults, DP-SGD, SSP, and scikit-learn's non-private model; then the
# features' means and spreads.
#   PYTHONPATH=. python docs/tuning/raw_bounds_electricity.py > docs/tuning/raw_bounds_electricity.txt
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import dpsco_core as dp
from dpsco_core.estimators import DPLogisticRegression

warnings.simplefilter("ignore")
X, y = dp.datasets.load_electricity()
X = X.copy()
X[:, 1] /= 7.0
for seed in range(2):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed)
    print(f"split {seed}: non-private {LogisticRegression(max_iter=1000).fit(Xtr, ytr).score(Xte, yte):.4f}")
    for name, kw in [("no bounds", {}), ("bounds (0, 1)", dict(bounds=(0, 1))),
                     ("bounds (-1, 1)", dict(bounds=(-1, 1))),
                     ("bounds (0, 1), sgd", dict(bounds=(0, 1), solver="sgd")),
                     ("bounds (0, 1), rms_row_norm=None", dict(bounds=(0, 1), rms_row_norm=None))]:
        m = DPLogisticRegression(classes=(-1, 1), epsilon=1.0, random_state=seed, **kw)
        m.fit(Xtr, ytr)
        print(f"  {name}: {m.score(Xte, yte):.4f} (solver {m.solver_})")
print("feature means", X.mean(0).round(3), "stds", X.std(0).round(3))
