"""
Sparse regression over the l1 ball: Frank-Wolfe and mirror descent
==================================================================

In l1 geometry the excess risk of private SCO grows with log(d), not sqrt(d) (Asi et al.).
Variance-reduced Frank-Wolfe (Algorithm 3) selects one vertex of the l1 ball per step with
report-noisy-max; localized noisy mirror descent (Algorithm 2) uses the p-norm mirror map with
p = 1 + 1/ln d. Frank-Wolfe is compared with DP-SGD projected onto the l1 ball, whose error
grows with sqrt(d), and with the zero vector.
"""

import numpy as np

import dpsco_core as dp
from dpsco_core.datasets import make_rademacher_lasso

X, y, x_true = make_rademacher_lasso(4_000, 400, random_state=0)
problem = dp.Problem(X, y, loss="half_squared")


def excess(coef):
    """Excess population loss of the Rademacher design: ||x - x*||^2 / 2."""
    return 0.5 * float(np.sum((coef - x_true) ** 2))


fw = dp.vr_frank_wolfe(problem, epsilon=1.0, delta=1e-5, lipschitz=0.3, random_state=0)
sgd = dp.solvers.projected_dp_sgd_l1(problem, epsilon=1.0, delta=1e-5, clip=0.3 * 400**0.5,
                                     random_state=0)
print(fw.privacy)
print(sgd.privacy)
print("excess loss: Frank-Wolfe %.3f (%d nonzeros), projected DP-SGD %.3f, x = 0 %.3f"
      % (excess(fw.coef), np.count_nonzero(fw.coef), excess(sgd.coef), excess(0 * x_true)))
