# Issue 19, session 14 (diagnosis.md, section 15): the estimators' private selection (DP-CD and
# DP-SGD, no rms_row_norm, step and clip left at None) against the worst-case rule's fixed
# step and clip at the whole budget (tuning.grids.default_hyperparameters without rms: step 1,
# clip kappa x the bounds' scale; the estimator run with its grid replaced by that one
# candidate). Held-out score at epsilon = 1, 20 passes, 5 splits (a nan: the selection was
# refused, its trials cannot be calibrated inside the one-vs-rest share).
#   PYTHONPATH=. python docs/tuning/selection_vs_fixed.py > docs/tuning/selection_vs_fixed.txt
import math, warnings, types, sys
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from sklearn.datasets import load_digits, load_wine, load_iris, load_breast_cancer, load_diabetes
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.tuning import grids
from dpsco_core.experiments.tuning import _estimator_data, _split
src = open("docs/tuning/rules_holdout_s14.py").read().split("data = {")[0]
M = types.ModuleType("m"); exec(src, M.__dict__)
orig = grids.candidate_grid
state = {"fixed": False}
def cg(problem, solver, *, n_clips=None, steps=None, scale=None):
    if state["fixed"]:
        return [grids.default_hyperparameters(problem, solver, scale=scale)]
    return orig(problem, solver, n_clips=n_clips, steps=steps, scale=scale)
grids.candidate_grid = cg
rng = np.random.default_rng(5)
def synth_multi(K, n, p):
    C = rng.standard_normal((K, p)); lab = rng.integers(0, K, n); return C[lab] + rng.standard_normal((n, p)), lab
def synth_bin(n, p):
    X = rng.standard_normal((n, p)); w = rng.standard_normal(p) / math.sqrt(p) * 2
    return X, (rng.random(n) < 1 / (1 + np.exp(-X @ w))).astype(int)
est = _estimator_data()
tasks = {"california": (*est["california (R^2)"][:2], "r", (0.0, 5.0), _split),
         "electricity": (*est["electricity (accuracy)"][:2], "c", None, _split),
         "california, 2,500 records": (*(a[np.random.default_rng(0).permutation(len(a))[:2500]]
                                         for a in est["california (R^2)"][:2]), "r", (0.0, 5.0), _split),
         "electricity, 2,500 records": (*(a[np.random.default_rng(0).permutation(len(a))[:2500]]
                                          for a in est["electricity (accuracy)"][:2]), "c", None, _split),
         "digits": (*load_digits(return_X_y=True), "c", None, M.split), "wine": (*load_wine(return_X_y=True), "c", None, M.split),
         "iris": (*load_iris(return_X_y=True), "c", None, M.split), "breast": (*load_breast_cancer(return_X_y=True), "c", None, M.split),
         "diabetes": (*load_diabetes(return_X_y=True), "r", (25.0, 346.0), M.split),
         "multi K10 n5000 p20": (*synth_multi(10, 5000, 20), "c", None, M.split),
         "bin n5000 p20": (*synth_bin(5000, 20), "c", None, M.split)}
only = sys.argv[1].split(",") if len(sys.argv) > 1 else None
for name, (X, y, kind, lb, split) in tasks.items():
    if only and name not in only: continue
    out = {}
    for solver in ("cd", "sgd"):
        for fixed in (False, True):
            state["fixed"] = fixed; sc = []
            for seed in range(5):
                Xtr, ytr, Xte, yte = split(X, y, seed)
                m = (DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=lb, random_state=seed, solver=solver) if kind == "r"
                     else DPLogisticRegression(epsilon=1.0, bounds=(-5, 5), random_state=seed, classes=np.unique(y), solver=solver))
                try:
                    m.fit(Xtr, ytr); sc.append(m.score(Xte, yte))
                except ValueError as e:
                    sc.append(np.nan)
            out[f"{solver} {'fixed' if fixed else 'selection'}"] = np.mean(sc)
    n, p = Xtr.shape
    K = 1 if kind == "r" or len(np.unique(y)) == 2 else len(np.unique(y))
    nu = grids.noise_level(n, p + 1, epsilon=1.0 / math.sqrt(K), delta=1.0 / n ** 2 / K, passes=20)
    print(f"{name} (n {n}, p {p}, K {K}, nu at epsilon / sqrt(K) {nu:.4f}):",
          "  ".join(f"{k} {v:.3f}" for k, v in out.items()), flush=True)
