"""
Accelerated DP-SRGD: one epoch with tree-aggregated noise
=========================================================

Accelerated DP-SRGD (Choquette-Choo et al., Algorithm 1) makes one pass over the data in
large batches; its noise is the prefix noise of a binary tree (continual counting), and the
guarantee is mu-GDP, reported as (epsilon, delta). Compared with single-epoch DP-SGD at the
same budget.
"""

import numpy as np

import dpsco_core as dp

rng = np.random.default_rng(1)
n, p = 4_096, 5
X = rng.standard_normal((n, p)) / np.sqrt(p)
X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))   # rows in the unit ball
y = np.where(X @ np.ones(p) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
problem = dp.Problem(X, y, loss="logistic", penalty=dp.L2(1e-3))

# beta = 1/4 + lambda bounds the smoothness of the logistic loss on unit rows (public).
srgd = dp.dp_srgd(problem, epsilon=1.0, delta=1e-6, beta=0.25 + 1e-3, batch_size=128,
                  clip=1.0, random_state=0)
base = dp.solvers.dp_sgd_single_epoch(problem, epsilon=1.0, delta=1e-6, beta=0.25 + 1e-3,
                                      batch_size=128, clip=1.0, random_state=0)
print(srgd.privacy)
print("objective: DP-SRGD %.4f, single-epoch DP-SGD %.4f, w = 0 %.4f" % (
    problem.objective(srgd.coef), problem.objective(base.coef), problem.objective(np.zeros(p))))
