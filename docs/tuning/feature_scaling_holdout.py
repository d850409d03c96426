# Session 20: the estimators' feature_scaling="private" on raw features with declared bounds.
# Held-out score (accuracy / R^2) at epsilon = 1, 5 splits (80/20), default settings
# otherwise. Bounds: digits [0, 16] (public: the pixel range); the others the data's own
# range widened outward to round numbers, as the README quickstart declares California's
# (a stand-in for bounds a user would fix from public knowledge: the same for every column).
# Columns: the raw bounds alone (widened to contain 0, which the estimators require without
# feature scaling; feature_scaling=None), the defaults with those bounds (feature_scaling=
# "auto": private scales where their noise is at most 0.01 of the bounds' widths, on the two
# large tasks); feature_scaling="private" at FEATURE_SCALING_SHARE 0.05,
# 0.1 (the default) and 0.2 of the zCDP budget; DPStandardScaler(epsilon=0.2) + estimator
# (epsilon=0.8) by basic composition; scikit-learn after a (non-private) StandardScaler.
#   PYTHONPATH=. python docs/tuning/feature_scaling_holdout.py > docs/tuning/feature_scaling_holdout.txt
import math
import sys
import time
import warnings

import numpy as np
from sklearn import datasets as skd
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import dpsco_core as dp
from dpsco_core import estimators as est
from dpsco_core.preprocessing import DPStandardScaler

warnings.simplefilter("ignore")
SPLITS = 5


def round_out(lo, hi):
    """The range widened to round numbers (one significant digit of the width)."""
    step = 10.0 ** np.floor(np.log10(np.maximum(hi - lo, 1e-12)))
    return np.floor(lo / step) * step, np.ceil(hi / step) * step


def tasks():
    out = {}
    X, y = dp.datasets.load_california()
    out["california"] = (X, y, "r", (0.0, 5.0), ([0, 0, 0, 0, 0, 0, 0, -125.0],
                                                  [15, 52, 20, 5, 10_000, 10, 42, 0.0]))
    X, y = dp.datasets.load_electricity()
    out["electricity"] = (X, y, "c", None, (0.0, [1, 7, 1, 1, 1, 1, 1, 1]))
    for name in ("california", "electricity"):
        X, y, k, lb, b = out[name]
        out[name + ", 2,500 records"] = (X[:2500], y[:2500], k, lb, b)
    X, y = skd.load_digits(return_X_y=True)
    out["digits"] = (X, y, "c", None, (0.0, 16.0))
    for name, loader in [("wine", skd.load_wine), ("iris", skd.load_iris),
                         ("breast", skd.load_breast_cancer)]:
        X, y = loader(return_X_y=True)
        out[name] = (X, y, "c", None, round_out(X.min(0), X.max(0)))
    X, y = skd.load_diabetes(return_X_y=True, scaled=False)
    out["diabetes"] = (X, y, "r", (25.0, 346.0), round_out(X.min(0), X.max(0)))
    return out


def model(kind, y, **kw):
    if kind == "r":
        return est.DPLasso(alpha=1e-4, **kw)
    return est.DPLogisticRegression(classes=np.unique(y), **kw)


def score_all(name, X, y, kind, lb, bounds):
    lo, hi = (np.broadcast_to(np.asarray(b, float), (X.shape[1],)) for b in bounds)
    raw = (np.minimum(lo, 0.0), np.maximum(hi, 0.0))
    label = {} if lb is None else dict(label_bound=lb)
    rows = {}
    for seed in range(SPLITS):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed)

        def add(key, make):
            try:
                rows.setdefault(key, []).append(make().fit(Xtr, ytr).score(Xte, yte))
            except ValueError:
                rows.setdefault(key, []).append(np.nan)

        common = dict(epsilon=1.0, random_state=seed, **label)
        add("bounds alone (feature_scaling=None)", lambda: model(
            kind, y, bounds=raw, feature_scaling=None, **common))
        add("defaults (feature_scaling='auto')", lambda: model(kind, y, bounds=raw, **common))
        for share in (0.05, 0.1, 0.2):
            est.FEATURE_SCALING_SHARE = share
            add(f"feature_scaling {share}", lambda: model(
                kind, y, bounds=(lo, hi), feature_scaling="private", **common))
        est.FEATURE_SCALING_SHARE = 0.1
        add("DPStandardScaler(0.2) + 0.8", lambda: make_pipeline(
            DPStandardScaler(epsilon=0.2, bounds=(lo, hi), random_state=seed + 1000),
            model(kind, y, bounds=(-3, 3), feature_scaling=None,
                  **dict(common, epsilon=0.8))))
        add("non-private", lambda: make_pipeline(StandardScaler(), Lasso(alpha=1e-4)
                                                 if kind == "r" else
                                                 LogisticRegression(max_iter=5000)))
    n, p = Xtr.shape
    print(f"{name} (n {n}, p {p}): " + "  ".join(
        f"{k} {np.nanmean(v):.3f}±{np.nanstd(v) / math.sqrt(len(v)):.3f}"
        + (f" ({int(np.isnan(v).sum())} refused)" if np.isnan(v).any() else "")
        for k, v in rows.items()), flush=True)


start = time.time()
only = sys.argv[1].split(";") if len(sys.argv) > 1 else None
for name, task in tasks().items():
    if only is None or name in only:
        score_all(name, *task)
print(f"# {time.time() - start:.0f} s")
