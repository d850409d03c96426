# Session 20: private standardization before a private fit, against the defaults with honest
# loose bounds. Held-out score (accuracy / R^2, 5 splits, 20% test) at total epsilon = 1 by
# basic composition: DPStandardScaler(epsilon=e) then the estimator at 1 - e on the
# standardized features clipped to [-3, 3], declared as its bounds. Baselines: the
# estimator with the raw bounds alone (feature_scaling=None), scikit-learn on raw features and after a
# (non-private) StandardScaler.
#   PYTHONPATH=. python docs/tuning/private_standardization.py > docs/tuning/private_standardization.txt
import math
import time
import warnings

import numpy as np
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import dpsco_core as dp
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.preprocessing import DPStandardScaler

warnings.simplefilter("ignore")
SPLITS = 5
SHARES = (0.05, 0.1, 0.2)


def run(name, X, y, lo, hi, cls, kw, non_private):
    rows = {}
    for seed in range(SPLITS):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed)
        add = lambda k, v: rows.setdefault(k, []).append(v)  # noqa: E731
        add("non-private, raw", non_private().fit(Xtr, ytr).score(Xte, yte))
        add("non-private, StandardScaler", make_pipeline(StandardScaler(), non_private())
            .fit(Xtr, ytr).score(Xte, yte))
        add("the raw bounds alone (feature_scaling=None), epsilon 1",
            cls(epsilon=1.0, bounds=(lo, hi), feature_scaling=None, random_state=seed, **kw)
            .fit(Xtr, ytr).score(Xte, yte))
        for e in SHARES:
            pipe = make_pipeline(
                DPStandardScaler(epsilon=e, bounds=(lo, hi), random_state=seed + 1000),
                cls(epsilon=1.0 - e, bounds=(-3, 3), feature_scaling=None, random_state=seed,
                    **kw))
            add(f"DPStandardScaler(epsilon={e}) + estimator(epsilon={1 - e:.2f})",
                pipe.fit(Xtr, ytr).score(Xte, yte))
    print(f"## {name} (n = {len(y)}, {SPLITS} splits)")
    for k, v in rows.items():
        se = np.std(v, ddof=1) / math.sqrt(len(v))
        print(f"  {k}: {np.mean(v):.4f} +- {se:.4f}  [" + " ".join(f"{a:.4f}" for a in v) + "]")


start = time.time()
X, y = dp.datasets.load_electricity()
X = X.copy()
X[:, 1] /= 7.0                              # day of week in [0, 1]: every feature in [0, 1]
run("Electricity, raw, bounds (0, 1)", X, y, 0.0, 1.0, DPLogisticRegression,
    dict(classes=(-1, 1)), lambda: LogisticRegression(max_iter=1000))
X, y = dp.datasets.load_california()
lo = np.array([0, 0, 0, 0, 0, 0, 0, -125.0])       # the README quickstart's public bounds
hi = np.array([15, 52, 20, 5, 10_000, 10, 42, 0.0])
lasso = dict(alpha=1e-4, label_bound=(0, 5))
run("California, raw, the quickstart's bounds", X, y, lo, hi, DPLasso, lasso,
    lambda: Lasso(alpha=1e-4))
run("California, first 2,500 records", X[:2500], y[:2500], lo, hi, DPLasso, lasso,
    lambda: Lasso(alpha=1e-4))
print(f"# {time.time() - start:.0f} s")
