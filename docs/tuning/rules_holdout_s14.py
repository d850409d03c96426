# Issue 19, session 14 (diagnosis.md, section 15): session 14's rules on data none of them was
# fitted or checked on. Held-out score at epsilon = 1, 20 passes, 10 random 80/20 splits,
# features standardized with the training split's statistics and clipped onto [-5, 5],
# rms_row_norm = sqrt(p):
# (1) scikit-learn's digits (n = 1,797, p = 64, 10 classes, one-vs-rest), DPLogisticRegression;
# (2) scikit-learn's wine (n = 178, p = 13, 3 classes);
# (3) a synthetic regression with correlated features (Toeplitz covariance 0.8^|i-j|, p = 20,
#     n = 5,000) and heavy-tailed label noise (Student t, 3 degrees of freedom), labels
#     clipped to the public [-6, 6].
# Columns: solver="auto" without and with rms_row_norm, DP-CD's rule, DP-SGD's rule (the
# prediction step, batch_size="auto"), DP-SGD's rule as in session 13 (step 0.1, batch 256),
# the non-private scikit-learn model.
#   PYTHONPATH=. python docs/tuning/rules_holdout_s14.py > docs/tuning/rules_holdout_s14.txt
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from sklearn.base import clone
from sklearn.datasets import load_digits, load_wine
from sklearn.linear_model import LinearRegression, LogisticRegression

from _estimator_tasks import holdout

from dpsco_core.estimators import DPLasso, DPLogisticRegression

B = 5.0
split = holdout.split          # estimator_rms_holdout.py's: standardize, clip onto [-5, 5]


def correlated(n=6250, p=20, seed=0):
    rng = np.random.default_rng(seed)
    cov = 0.8 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    X = rng.multivariate_normal(np.zeros(p), cov, size=n)
    beta = rng.standard_normal(p) / math.sqrt(p)
    return X, np.clip(X @ beta + rng.standard_t(3, size=n), -6.0, 6.0)


data = {"digits (accuracy, 10 classes)": (*load_digits(return_X_y=True), "classification"),
        "wine (accuracy, 3 classes)": (*load_wine(return_X_y=True), "classification"),
        "correlated regression, t(3) noise (R^2)": (*correlated(), "regression")}
columns = ["auto", "auto, rms", "cd, rms", "sgd, rms", "sgd, rms, session 13", "non-private"]
print("| data | " + " | ".join(columns) + " |")
print("|---" * (len(columns) + 1) + "|")
for name, (X, y, kind) in data.items():
    scores = {c: [] for c in columns}
    solvers = {c: set() for c in columns}
    for seed in range(10):
        Xtr, ytr, Xte, yte = split(X, y, seed)
        rho = math.sqrt(Xtr.shape[1])
        if kind == "regression":
            base = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-B, B), label_bound=6.0,
                           random_state=seed)
            ref = LinearRegression()
        else:
            base = DPLogisticRegression(epsilon=1.0, bounds=(-B, B), random_state=seed,
                                        classes=np.unique(y))
            ref = LogisticRegression(max_iter=2000)
        fits = {"auto": base,
                "auto, rms": clone(base).set_params(rms_row_norm=rho),
                "cd, rms": clone(base).set_params(solver="cd", rms_row_norm=rho),
                "sgd, rms": clone(base).set_params(solver="sgd", rms_row_norm=rho),
                "sgd, rms, session 13": clone(base).set_params(solver="sgd", rms_row_norm=rho,
                                                               step=0.1, batch_size=256),
                "non-private": ref}
        for c, model in fits.items():
            model.fit(Xtr, ytr)
            scores[c].append(float(model.score(Xte, yte)))
            solvers[c].add(getattr(model, "solver_", "-"))
    print(f"| {name} | " + " | ".join(
        f"{np.mean(v):.3f} ± {np.std(v) / math.sqrt(len(v)):.3f}"
        + (f" ({', '.join(sorted(solvers[c]))})" if c.startswith("auto") else "")
        for c, v in scores.items()) + " |", flush=True)
