"""
MLMC optimum estimators
=======================

The multilevel Monte Carlo estimator of Asi et al. (Algorithm 1, OPTEST) turns a biased
stochastic optimizer (EpochSGD with 2^j steps) into a nearly unbiased estimate of the
minimizer at the cost of a random, logarithmic number of gradients. The first part is not
private: it checks the bias on a quadratic whose minimizer is known. The second runs the
private phased skeleton ``mlmc_dp_sco`` (clipped copies, Gaussian noise, replace-one).
"""

import numpy as np

import dpsco_core as dp
from dpsco_core import mlmc

# f(x) = E ||x - (b + noise)||^2 / 2 + (mu/2) ||x - c||^2, minimizer known in closed form
b = np.array([1.0, -2.0])
oracle = mlmc.QuadraticOracle(b, noise=1.0)
res = mlmc.optest(oracle, 1.0, np.zeros(2), j_max=8, n_copies=400, random_state=0)
print("OPTEST mean", res.x, "minimizer", b / 2)

# %%
# Private phased estimation on an absolute-loss regression (Algorithm 6 skeleton).
rng = np.random.default_rng(0)
n = 20_000           # the clipped copies need a large n: at n = 2,000 the noise dominates
A = rng.standard_normal((n, 3)) / np.sqrt(3)
y = A @ np.array([0.5, -0.2, 0.1]) + 0.05 * rng.standard_normal(n)
problem = dp.Problem(A, y, loss="absolute")
private = mlmc.mlmc_dp_sco(problem, epsilon=4.0, delta=1e-5, radius=1.0, lipschitz=1.0,
                           n_phases=3, random_state=0)
print(private.privacy)
print("objective %.4f, at zero %.4f" % (problem.objective(private.x),
                                         problem.objective(np.zeros(3))))
