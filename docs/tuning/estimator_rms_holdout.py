# Issue 19, session 13 (diagnosis.md, section 14): the estimators' rms_row_norm on data the
# noise-level rule was NOT fitted on. Held-out score at epsilon = 1 over 10 random 80/20
# splits, features standardized with the training split's statistics (not charged, as in
# `reproduce tuning`) and clipped onto the public bounds [-5, 5]:
# (1) scikit-learn's diabetes data (n = 442, p = 10), DPLasso(alpha=1e-3), label range public
#     as (25, 346) (the data's documented range);
# (2) scikit-learn's breast cancer data (n = 569, p = 30), DPLogisticRegression (classes 0, 1);
# (3) a synthetic logistic regression (standardized Gaussian features, n = 10,000, p = 20).
# Columns: the defaults (solver="auto"), DP-CD and DP-SGD with the private selection, DP-CD and
# DP-SGD with rms_row_norm = sqrt(p) (the rule, no selection), the non-private scikit-learn
# model. 20 passes (the estimators' default). Session 14 re-ran it after DP-SGD's prediction step
# and batch_size="auto" and DP-CD's replace-one noise level (the two rule columns and DP-SGD's
# selection changed).
#   PYTHONPATH=. python docs/tuning/estimator_rms_holdout.py
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression, LogisticRegression

from dpsco_core.estimators import DPLasso, DPLogisticRegression

B = 5.0


def data():
    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((10_000, 20))
    w = rng.standard_normal(20) / math.sqrt(20) * 2
    ys = (rng.random(10_000) < 1 / (1 + np.exp(-Xs @ w))).astype(int)
    return {"diabetes (R^2)": (Xd, yd, "regression"),
            "breast cancer (accuracy)": (Xb, yb, "classification"),
            "synthetic logistic (accuracy)": (Xs, ys, "classification")}


def split(X, y, seed):
    perm = np.random.default_rng(seed).permutation(len(y))
    te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    Z = np.clip((X - mu) / sd, -B, B)
    return Z[tr], y[tr], Z[te], y[te]


columns = ["auto", "cd, selection", "sgd, selection", "cd, rms", "sgd, rms", "non-private"]
print("| data | " + " | ".join(columns) + " |")
print("|---" * (len(columns) + 1) + "|")
for name, (X, y, kind) in data().items():
    scores = {c: [] for c in columns}
    for seed in range(10):
        Xtr, ytr, Xte, yte = split(X, y, seed)
        p = Xtr.shape[1]
        if kind == "regression":
            base = DPLasso(alpha=1e-3, epsilon=1.0, bounds=(-B, B), label_bound=(25.0, 346.0),
                           random_state=seed)
            ref = LinearRegression()
        else:
            base = DPLogisticRegression(epsilon=1.0, bounds=(-B, B), random_state=seed)
            ref = LogisticRegression(max_iter=1000)
        fits = {"auto": base,
                "cd, selection": clone(base).set_params(solver="cd"),
                "sgd, selection": clone(base).set_params(solver="sgd"),
                "cd, rms": clone(base).set_params(solver="cd", rms_row_norm=math.sqrt(p)),
                "sgd, rms": clone(base).set_params(solver="sgd", rms_row_norm=math.sqrt(p)),
                "non-private": ref}
        for c, model in fits.items():
            model.fit(Xtr, ytr)
            scores[c].append(float(model.score(Xte, yte)))
    print(f"| {name} | " + " | ".join(f"{np.mean(v):.3f} ± {np.std(v):.3f}"
                                      for v in scores.values()) + " |", flush=True)
