# Issue 19, session 14 (diagnosis.md, section 15), a feasibility check for the next session:
# the noise-level rule with rho taken from a PRIVATE quantile of the row norms instead of a
# declared rms_row_norm. The quantile: the exponential mechanism at epsilon_q = 0.05 over the
# public grid R geomspace(1/64, 1, 37) (R = 5 sqrt(p), the bounds' row bound; utility
# -|#{||x_i|| <= g} - q n|, sensitivity 1, as dp_ssp's clip quantile), q = 0.5 and 0.75; then
# the estimator with solver="cd" and rms_row_norm = that value at epsilon 0.95 (total 1 by
# basic composition; the one quantile serves every one-vs-rest class). Against the declared
# rms_row_norm = sqrt(p) at epsilon 1. The tasks of selection_vs_fixed.py, 5 splits.
# A sketch of the measurement; built in session 15 as the estimators' rms_row_norm="private"
# (diagnosis.md, section 16; private_rms_holdout.py measures the built option).
#   PYTHONPATH=. python docs/tuning/private_rms_feasibility.py > docs/tuning/private_rms_feasibility.txt
import math, warnings, types, sys
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.mechanisms import exponential_mechanism
src = open("docs/tuning/selection_vs_fixed.py").read()
src = src.split("only = sys.argv")[0].replace("grids.candidate_grid = cg", "")
M = types.ModuleType("m"); exec(src, M.__dict__)
for name, (X, y, kind, lb, split) in M.tasks.items():
    out = {"declared": [], "private median": [], "private q75": []}
    for seed in range(5):
        Xtr, ytr, Xte, yte = split(X, y, seed)
        n, p = Xtr.shape
        norms = np.sqrt(np.einsum("ij,ij->i", Xtr, Xtr))
        R = 5.0 * math.sqrt(p)
        grid = R * np.geomspace(1 / 64, 1, 37)
        counts = np.searchsorted(np.sort(norms), grid, side="right")
        for label, q, rho, eps in (("declared", None, math.sqrt(p), 1.0),
                                   ("private median", 0.5, None, 0.95), ("private q75", 0.75, None, 0.95)):
            if rho is None:
                k = exponential_mechanism(-np.abs(counts - q * n), sensitivity=1.0, epsilon=0.05, random_state=seed)
                rho = float(grid[k])
            m = (DPLasso(alpha=1e-4, epsilon=eps, bounds=(-5, 5), label_bound=lb, random_state=seed, solver="cd", rms_row_norm=rho) if kind == "r"
                 else DPLogisticRegression(epsilon=eps, bounds=(-5, 5), random_state=seed, classes=np.unique(y), solver="cd", rms_row_norm=rho))
            out[label].append(m.fit(Xtr, ytr).score(Xte, yte))
    print(name, "  ".join(f"{k} {np.mean(v):.3f}" for k, v in out.items()), f"(sqrt p {math.sqrt(p):.2f}, rms {math.sqrt(np.mean(norms**2)):.2f})", flush=True)
