"""Issue 19, session 14 (diagnosis.md, section 15): the synthetic standardized regressions of
auto_solver.py (features N(0, 1) clipped to [-5, 5], y = X beta + 0.7 noise clipped to
[-3, 3], epsilon = 1), held-out R^2 of SSP (solver="ssp"), DP-CD and DP-SGD with the noise-level
rule (rms_row_norm = sqrt(p), no selection; DP-SGD's step prediction_sgd_step and
batch_size="auto"), mean ± standard error over 5 seeds.

    PYTHONPATH=. python docs/tuning/auto_solver_rule.py 5 > docs/tuning/auto_solver_rule.txt
"""
import math
import sys
import warnings

import numpy as np

from dpsco_core.estimators import DPLasso
from dpsco_core.solvers.ssp import ssp_ridge_ratio
warnings.simplefilter("ignore")
print("| n | p | ridge ratio | SSP R^2 | DP-CD rule R^2 | DP-SGD rule R^2 | non-private R^2 |")
print("|---|---|---|---|---|---|---|")
seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for n, p in [(2000, 4), (20000, 4), (5000, 8), (20000, 16), (2000, 8), (20000, 32),
             (5000, 16), (20000, 48), (5000, 24), (2000, 16), (20000, 64), (2000, 64)]:
    scores = {"ssp": [], "cd": [], "sgd": [], "np": []}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        X = np.clip(rng.standard_normal((2 * n, p)), -5, 5)
        beta = rng.standard_normal(p) / math.sqrt(p)
        y = np.clip(X @ beta + 0.7 * rng.standard_normal(2 * n), -3, 3)
        Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
        for solver in ("ssp", "cd", "sgd"):
            kw = {} if solver == "ssp" else {"rms_row_norm": math.sqrt(p)}
            m = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=3.0, solver=solver,
                        random_state=seed, **kw).fit(Xtr, ytr)
            scores[solver].append(m.score(Xte, yte))
        Z = np.hstack([Xtr, np.ones((n, 1))])
        w = np.linalg.lstsq(Z, ytr, rcond=None)[0]
        pred = np.hstack([Xte, np.ones((n, 1))]) @ w
        scores["np"].append(1 - np.mean((pred - yte) ** 2) / np.var(yte))
    ratio = ssp_ridge_ratio(p + 1, n_samples=n, epsilon=1.0, delta=1.0 / n ** 2)
    f = lambda k: f"{np.mean(scores[k]):.3f} ± {np.std(scores[k]) / math.sqrt(seeds):.3f}"
    print(f"| {n} | {p} | {ratio:.3f} | {f('ssp')} | {f('cd')} | {f('sgd')} | {f('np')} |", flush=True)
