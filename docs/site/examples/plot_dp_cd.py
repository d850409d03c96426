"""
DP-CD and DP-SGD on a private LASSO
===================================

Differentially private coordinate descent (Mangold et al. 2022, Algorithm 1) against proximal
DP-SGD on the same LASSO problem and the same budget, epsilon = 1 under replace-one
neighbours. The bounds on the data are public (declared, not read from the data), so both
guarantees are unconditional.
"""

import matplotlib.pyplot as plt
import numpy as np

import dpsco_core as dp

rng = np.random.default_rng(0)
n, p = 2_000, 10
X = rng.uniform(-1.0, 1.0, size=(n, p))
w_true = np.zeros(p)
w_true[:3] = [1.0, -0.5, 0.25]
y = np.clip(X @ w_true + 0.1 * rng.standard_normal(n), -2.0, 2.0)

# Public bounds: each feature in [-1, 1], |y| <= 2. Records outside are clipped onto them.
problem = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.01),
                     bounds=([-1.0] * p, [1.0] * p), label_bound=2.0)
optimum = problem.solve().objective       # non-private F*, for the plot only

cd = dp.dp_cd(problem, epsilon=1.0, delta=1 / n**2, passes=10, step=1.0, clip=1.0,
              average=False, random_state=0)
sgd = dp.dp_sgd(problem, epsilon=1.0, delta=1 / n**2, passes=10, batch_size=64, clip=1.0,
                neighboring_relation="replace_one", sampling="shuffle", random_state=0)
print("DP-CD :", cd.privacy)
print("DP-SGD:", sgd.privacy)

# %%
# The history holds exact training objectives: diagnostics, not private (see the privacy
# page); release ``coef`` and ``privacy`` only.
fig, ax = plt.subplots(figsize=(5, 3.2))
for name, res in [("DP-CD", cd), ("DP-SGD", sgd)]:
    objective = np.asarray(res.history.objective)
    ax.semilogy(np.linspace(0, 10, objective.size), (objective - optimum) / optimum,
                label=name)
ax.set_xlabel("passes over the data")
ax.set_ylabel("relative error")
ax.legend()
fig.tight_layout()
