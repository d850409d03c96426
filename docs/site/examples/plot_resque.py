"""
ReSQue estimators and parallel SCO
==================================

ReSQue (Carmon et al.) reweights gradients queried at Gaussian samples around a centre c so
that they estimate the gradient of the Gaussian-smoothed function at any nearby point x. This
example checks the estimate against the closed-form smoothed gradient, then runs the parallel
SCO method of Theorem 2 (ball acceleration with AC-SA inner solves). Neither part is private:
the private algorithms of the paper's Section IV are not implemented yet.
"""

import numpy as np

import dpsco_core as dp
from dpsco_core import resque, smoothing

d, rho, N = 4, 0.5, 20_000
center = np.zeros(d)
x = np.full(d, 0.1)
zeta = resque.draw_resque_samples(N, d, random_state=0)
gradients = center + rho * zeta            # gradient of ||u||^2 / 2 at the queried points u
estimate = resque.resque_estimate(x, center, rho, zeta, gradients)
_, exact = smoothing.smoothed_quadratic(x, rho)
print("ReSQue estimate", estimate.round(3), "smoothed gradient", np.asarray(exact).round(3))

# %%
# Parallel SCO (Theorem 2): the geometric median of one point s, f(x) = ||x - s||_2, from a
# batched subgradient oracle; the method needs few *rounds* of queries (query depth).
s = np.array([0.3, -0.2, 0.1])


def grad_batch(Z, random_state):
    """Subgradients of ||z - s||_2, one per row of Z (the oracle is deterministic)."""
    diff = Z - s
    return diff / np.maximum(np.linalg.norm(diff, axis=1, keepdims=True), 1e-300)


res = dp.parallel_sco(grad_batch, np.zeros(3), lipschitz=1.0, radius_bound=1.0, epsilon=0.2,
                      accuracy_scale=300.0, random_state=1)
print("solution", res.x.round(3), "target", s, "query rounds", res.query_depth,
      "queries", res.total_queries)
