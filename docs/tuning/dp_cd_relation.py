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
import types
import warnings

import numpy as np

warnings.simplefilter("ignore")
from sklearn.base import clone

from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND as B
from dpsco_core.experiments.tuning import _estimator_data, _split
from dpsco_core.tuning import grids

_src = open("docs/tuning/estimator_rms_holdout.py").read().split("columns = [")[0]
H = types.ModuleType("estimator_rms_holdout")
exec(_src, H.__dict__)
rule = grids.default_hyperparameters
state = {"c": 1.0}


def scaled(problem, solver, **kw):
    """The rule at c nu: zero-out's level (nu) at epsilon / c."""
    kw = dict(kw, neighboring_relation="zero_out")
    kw["epsilon"] = kw["epsilon"] / state["c"]
    return rule(problem, solver, **kw)


grids.default_hyperparameters = scaled
print("synthetic regressions (n, p): R^2 at c = 0.5 / 1 / 2 / 4 (3 seeds)")
for n, p in [(2000, 16), (20000, 16), (20000, 64), (5000, 24)]:
    out = []
    for c in (0.5, 1.0, 2.0, 4.0):
        state["c"] = c
        scores = []
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = np.clip(rng.standard_normal((2 * n, p)), -5, 5)
            beta = rng.standard_normal(p) / math.sqrt(p)
            y = np.clip(X @ beta + 0.7 * rng.standard_normal(2 * n), -3, 3)
            model = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=3.0,
                            solver="cd", random_state=seed, rms_row_norm=math.sqrt(p))
            scores.append(model.fit(X[:n], y[:n]).score(X[n:], y[n:]))
        out.append(f"c={c:g} {np.mean(scores):.3f}")
    print(f"  ({n}, {p}):", "  ".join(out), flush=True)
tasks = {}
for name, (X, y, kind) in _estimator_data().items():
    tasks[name] = (X, y, kind, dict(label_bound=(0.0, 5.0)), _split)
for name, (X, y, kind) in H.data().items():
    tasks[name] = (X, y, kind, dict(label_bound=(25.0, 346.0)) if kind == "regression" else {},
                   H.split)
print("real tasks: held-out score at c = 1 / 2 / 4 (mean ± standard error, 10 splits)")
for name, (X, y, kind, extra, split) in tasks.items():
    out = []
    for c in (1.0, 2.0, 4.0):
        state["c"] = c
        scores = []
        for seed in range(10):
            Xtr, ytr, Xte, yte = split(X, y, seed)
            base = (DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-B, B), random_state=seed, **extra)
                    if kind == "regression" else
                    DPLogisticRegression(epsilon=1.0, bounds=(-B, B), random_state=seed))
            model = clone(base).set_params(solver="cd", rms_row_norm=math.sqrt(Xtr.shape[1]))
            scores.append(model.fit(Xtr, ytr).score(Xte, yte))
        out.append(f"c={c:g} {np.mean(scores):.4f} ± {np.std(scores) / math.sqrt(10):.4f}")
    print(f"  {name}:", "  ".join(out), flush=True)
print("other budgets: c = 1 / 2")
for eps in (0.25, 4.0):
    for name in ("california (R^2)", "electricity (accuracy)"):
        X, y, kind, extra, split = tasks[name]
        out = []
        for c in (1.0, 2.0):
            state["c"] = c
            scores = []
            for seed in range(10):
                Xtr, ytr, Xte, yte = split(X, y, seed)
                base = (DPLasso(alpha=1e-4, epsilon=eps, bounds=(-B, B), random_state=seed,
                                **extra) if kind == "regression" else
                        DPLogisticRegression(epsilon=eps, bounds=(-B, B), random_state=seed))
                model = clone(base).set_params(solver="cd", rms_row_norm=math.sqrt(8))
                scores.append(model.fit(Xtr, ytr).score(Xte, yte))
            out.append(f"c={c:g} {np.mean(scores):.4f} ± {np.std(scores) / math.sqrt(10):.4f}")
        print(f"  epsilon {eps:g}, {name}:", "  ".join(out), flush=True)
for n, p in [(2000, 16), (20000, 16), (20000, 64), (5000, 24)]:
    out = []
    for c in (1.0, 2.0):
        state["c"] = c
        scores = []
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = np.clip(rng.standard_normal((2 * n, p)), -5, 5)
            beta = rng.standard_normal(p) / math.sqrt(p)
            y = np.clip(X @ beta + 0.7 * rng.standard_normal(2 * n), -3, 3)
            model = DPLasso(alpha=1e-4, epsilon=0.25, bounds=(-5, 5), label_bound=3.0,
                            solver="cd", random_state=seed, rms_row_norm=math.sqrt(p))
            scores.append(model.fit(X[:n], y[:n]).score(X[n:], y[n:]))
        out.append(f"c={c:g} {np.mean(scores):.3f}")
    print(f"  epsilon 0.25, synthetic ({n}, {p}):", "  ".join(out), flush=True)
