# Issue 19, session 14 (diagnosis.md, section 15): the noise level of DP-CD's rule under
# replace-one. The estimators' DP-CD (replace-one, sensitivity 2C) with rms_row_norm = sqrt(p)
# and the rule's clip at c times the zero-out noise level nu its constant A was fitted on
# (c = 2 is the rule since this session), held-out score at epsilon = 1, 20 passes:
# (1) the synthetic standardized regressions of auto_solver.py (3 seeds) at c = 0.5, 1, 2, 4;
# (2) the real tasks of estimator_rms_holdout.py and reproduce tuning (10 splits) at c = 1, 2, 4;
# (3) at epsilon = 0.25 and 4: standardized California and Electricity (10 splits) and the
#     synthetic regressions at epsilon = 0.25 (3 seeds), c = 1, 2.
#   PYTHONPATH=. python docs/tuning/dp_cd_relation.py > docs/tuning/dp_cd_relation.txt
import math
import warnings

import numpy as np

warnings.simplefilter("ignore")
from _estimator_tasks import real_tasks
from sklearn.base import clone

from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND as B
from dpsco_core.tuning import grids

rule = grids.default_hyperparameters
state = {"c": 1.0}


def scaled(problem, solver, **kw):
    """The rule at c nu: zero-out's level (nu) at epsilon / c."""
    kw = dict(kw, neighboring_relation="zero_out")
    kw["epsilon"] = kw["epsilon"] / state["c"]
    return rule(problem, solver, **kw)


def synthetic_row(n, p, epsilon, cs):
    """R^2 at each c on auto_solver.py's synthetic regression (n, p), 3 seeds."""
    out = []
    for c in cs:
        state["c"] = c
        scores = []
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = np.clip(rng.standard_normal((2 * n, p)), -5, 5)
            beta = rng.standard_normal(p) / math.sqrt(p)
            y = np.clip(X @ beta + 0.7 * rng.standard_normal(2 * n), -3, 3)
            model = DPLasso(alpha=1e-4, epsilon=epsilon, bounds=(-5, 5), label_bound=3.0,
                            solver="cd", random_state=seed, rms_row_norm=math.sqrt(p))
            scores.append(model.fit(X[:n], y[:n]).score(X[n:], y[n:]))
        out.append(f"c={c:g} {np.mean(scores):.3f}")
    return "  ".join(out)


def real_row(task, epsilon, cs):
    """Held-out score at each c on a real task, 10 splits (mean ± standard error)."""
    X, y, kind, extra, split = task
    out = []
    for c in cs:
        state["c"] = c
        scores = []
        for seed in range(10):
            Xtr, ytr, Xte, yte = split(X, y, seed)
            base = (DPLasso(alpha=1e-4, epsilon=epsilon, bounds=(-B, B), random_state=seed,
                            **extra) if kind == "regression" else
                    DPLogisticRegression(epsilon=epsilon, bounds=(-B, B), random_state=seed))
            model = clone(base).set_params(solver="cd", rms_row_norm=math.sqrt(Xtr.shape[1]))
            scores.append(model.fit(Xtr, ytr).score(Xte, yte))
        out.append(f"c={c:g} {np.mean(scores):.4f} ± {np.std(scores) / math.sqrt(10):.4f}")
    return "  ".join(out)


grids.default_hyperparameters = scaled
SYNTHETIC = [(2000, 16), (20000, 16), (20000, 64), (5000, 24)]
print("synthetic regressions (n, p): R^2 at c = 0.5 / 1 / 2 / 4 (3 seeds)")
for n, p in SYNTHETIC:
    print(f"  ({n}, {p}):", synthetic_row(n, p, 1.0, (0.5, 1.0, 2.0, 4.0)), flush=True)
tasks = real_tasks()
print("real tasks: held-out score at c = 1 / 2 / 4 (mean ± standard error, 10 splits)")
for name, task in tasks.items():
    print(f"  {name}:", real_row(task, 1.0, (1.0, 2.0, 4.0)), flush=True)
print("other budgets: c = 1 / 2")
for eps in (0.25, 4.0):
    for name in ("california (R^2)", "electricity (accuracy)"):
        print(f"  epsilon {eps:g}, {name}:", real_row(tasks[name], eps, (1.0, 2.0)), flush=True)
for n, p in SYNTHETIC:
    print(f"  epsilon 0.25, synthetic ({n}, {p}):", synthetic_row(n, p, 0.25, (1.0, 2.0)),
          flush=True)
