"""Where SSP beats DP-CD with private selection: the measurement behind
dpsco_core.estimators.SSP_MAX_RIDGE_RATIO (issue 19).

Synthetic standardized regressions (features N(0, 1) clipped to the public bounds [-5, 5],
y = X beta + 0.7 noise clipped to [-3, 3], beta ~ N(0, I/p)), epsilon = 1, replace-one,
3 seeds: held-out R^2 of DPLasso(solver="ssp") and DPLasso(solver="cd") (private selection),
against the ridge ratio of dpsco_core.solvers.ssp.ssp_ridge_ratio.

    PYTHONPATH=. python docs/tuning/auto_solver.py > docs/tuning/auto_solver.txt
"""
import math
import time
import warnings

import numpy as np

from dpsco_core.estimators import DPLasso
from dpsco_core.solvers.ssp import ssp_ridge_ratio

warnings.simplefilter("ignore")
print("| n | p | ridge ratio | SSP R^2 | DP-CD R^2 | non-private R^2 | better |")
print("|---|---|---|---|---|---|---|")
for n, p in [(2000, 4), (20000, 4), (5000, 8), (20000, 16), (2000, 8), (20000, 32),
             (5000, 16), (20000, 48), (5000, 24), (2000, 16), (20000, 64), (2000, 64)]:
    scores = {"ssp": [], "cd": [], "np": []}
    t0 = time.time()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = np.clip(rng.standard_normal((2 * n, p)), -5, 5)
        beta = rng.standard_normal(p) / math.sqrt(p)
        y = np.clip(X @ beta + 0.7 * rng.standard_normal(2 * n), -3, 3)
        Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
        for solver in ("ssp", "cd"):
            m = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=3.0, solver=solver,
                        random_state=seed).fit(Xtr, ytr)
            scores[solver].append(m.score(Xte, yte))
        Z = np.hstack([Xtr, np.ones((n, 1))])
        w = np.linalg.lstsq(Z, ytr, rcond=None)[0]
        pred = np.hstack([Xte, np.ones((n, 1))]) @ w
        scores["np"].append(1 - np.mean((pred - yte) ** 2) / np.var(yte))
    ratio = ssp_ridge_ratio(p + 1, n_samples=n, epsilon=1.0, delta=1.0 / n ** 2)
    s, c, r = (float(np.mean(scores[k])) for k in ("ssp", "cd", "np"))
    print(f"| {n} | {p} | {ratio:.3f} | {s:.3f} | {c:.3f} | {r:.3f} | "
          f"{'SSP' if s > c + 0.01 else 'DP-CD' if c > s + 0.01 else 'tie'} |", flush=True)
