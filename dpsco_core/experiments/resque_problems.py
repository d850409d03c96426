r"""Non-smooth test problems with a known optimum for ``reproduce resque-parallel`` (note 000,
section 8.2).

Each problem is an :class:`SCOProblem`: f on :math:`B_R(0)` (R = 1), a stochastic subgradient
oracle with second moment :math:`\le L^2`, the exact value f(x) and the exact optimum
:math:`f^* = \min_{B_R(0)} f`. Two oracle entry points:

- ``grad_batch(Z, random_state) -> G``: one independent oracle answer per row of Z (what the
  parallel methods and randomized smoothing query, through an executor);
- ``mean_grad(x, batch, rng)``: the mean of ``batch`` oracle answers at ONE point x, drawn
  exactly in distribution in O(d + n) instead of O(batch d) (Gaussian noise: one draw with
  variance divided by the batch; sampled rows: one multinomial draw of the row counts). The
  minibatch SGD baseline uses it; its cost is still counted as ``batch`` queries.

Problems (their initial gap :math:`f(0) - f^*` is between 0.1 and 0.3 for every d, so that an
accuracy ε in the paper's regime :math:`[d^{-1}, d^{-1/4}]` is meaningful):

- :func:`nemirovski`: :math:`f(x) = \max_{i \le k}(\langle a_i, x\rangle - i\gamma)` with k
  orthonormal random :math:`a_i` (k = min(d, 32)), :math:`\gamma = 1/(4k^{3/2})`, and an oracle
  :math:`a_{i^*(x)} + \sigma\,N(0, I_d/d)` (σ = 0.5, :math:`L = \sqrt{1 + \sigma^2}`). A method
  whose queries stay in the span of the revealed :math:`a_i` learns one new index per round,
  and :math:`f - f^* \ge (1 - (j+1)\gamma\sqrt k)/\sqrt k` until all k are revealed
  (Nemirovski's resisting-oracle argument; BJL+19 for parallel methods).
  :math:`f^* = \min\{t : \sum_i (t + i\gamma)_-^2 \le R^2\}` (the minimizer has coordinates
  :math:`\min(0, t + i\gamma)` on the :math:`a_i`), found by bisection to 1e-15.
- :func:`absolute_regression`: ERM :math:`\frac1n\sum_s |\langle a_s, x\rangle - b_s|`, rows
  uniform on the unit sphere of a random k-dimensional subspace (k = min(d, 8)),
  :math:`b_s = \langle a_s, x^\circ\rangle + \mathrm{Laplace}(0.05)`, :math:`\|x^\circ\| = 0.6`;
  oracle: a uniform row's subgradient (L = 1). f* by the linear program in the subspace
  coordinates (HiGHS), checked to lie inside the ball.
- :func:`geometric_median`: :math:`\sum_j w_j\|x - s_j\|` with an atom of weight 1/4 at
  :math:`s_0` (:math:`\|s_0\| = 1/2`) and the rest on pairs :math:`s_0 \pm u_j`: the pairs'
  gradients cancel at :math:`s_0`, so :math:`s_0` is the minimizer and f is sharp there
  (:math:`f(x) - f^* \ge \|x - s_0\|/4`). Oracle: the unit vector from a sampled point (L = 1).
"""

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._random import check_random_state
from .._validation import check_int

__all__ = ["SCOProblem", "nemirovski", "absolute_regression", "geometric_median", "PROBLEMS"]


@dataclass(frozen=True)
class SCOProblem:
    """A test problem: ``value(x)``, ``f_star``, ``grad_batch``, ``mean_grad``, L and R."""

    name: str
    n_features: int
    value: Callable
    f_star: float
    grad_batch: Callable
    mean_grad: Callable
    lipschitz: float
    radius: float = 1.0

    def excess(self, x):
        """f(x) - f*, x projected on the ball first (outputs are post-processed that way)."""
        x = np.asarray(x, dtype=np.float64)
        nrm = float(np.linalg.norm(x))
        if nrm > self.radius:
            x = x * (self.radius / nrm)
        return self.value(x) - self.f_star


def _rng(random_state):
    return np.random.default_rng(check_random_state(random_state))


def nemirovski(n_features, *, n_pieces=None, noise=0.5, random_state=0):
    """Max of k linear functions with a noisy oracle (module docstring)."""
    d = check_int(n_features, "n_features", low=1)
    k = min(d, 32) if n_pieces is None else check_int(n_pieces, "n_pieces", low=1, high=d)
    rs = _rng(random_state)
    A = np.ascontiguousarray(np.linalg.qr(rs.standard_normal((d, k)))[0].T)
    offsets = np.arange(1, k + 1) / (4.0 * k ** 1.5)
    lo, hi = -2.0, 0.0
    while hi - lo > 1e-15:
        t = 0.5 * (lo + hi)
        if np.sum(np.minimum(0.0, t + offsets) ** 2) <= 1.0:
            hi = t
        else:
            lo = t
    scale = noise / math.sqrt(d)

    def value(x):
        return float(np.max(A @ x - offsets))

    def grad_batch(Z, random_state):
        G = _rng(random_state).standard_normal(Z.shape)
        G *= scale
        G += A[np.argmax(Z @ A.T - offsets, axis=1)]
        return G

    def mean_grad(x, batch, rng):
        return A[np.argmax(A @ x - offsets)] + (scale / math.sqrt(batch)) * rng.standard_normal(d)

    return SCOProblem("nemirovski", d, value, hi, grad_batch, mean_grad,
                      math.sqrt(1.0 + noise ** 2))


def absolute_regression(n_features, *, n_samples=200, rank=None, noise=0.05, random_state=0):
    """Least absolute deviations on n rows of a k-dimensional subspace (module docstring)."""
    from scipy.optimize import linprog

    d = check_int(n_features, "n_features", low=1)
    n = check_int(n_samples, "n_samples", low=1)
    k = min(d, 8) if rank is None else check_int(rank, "rank", low=1, high=d)
    rs = _rng(random_state)
    U = np.linalg.qr(rs.standard_normal((d, k)))[0]          # d x k orthonormal columns
    C = rs.standard_normal((n, k))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    A = np.ascontiguousarray(C @ U.T)
    c_true = rs.standard_normal(k)
    c_true *= 0.6 / np.linalg.norm(c_true)
    b = C @ c_true + rs.laplace(0.0, noise, n)
    # min (1/n) sum t_s  s.t.  -t <= C c - b <= t, over (c, t): the optimum in the subspace
    cost = np.concatenate([np.zeros(k), np.full(n, 1.0 / n)])
    eye = np.eye(n)
    lp = linprog(cost, A_ub=np.block([[C, -eye], [-C, -eye]]), b_ub=np.concatenate([b, -b]),
                 bounds=[(None, None)] * k + [(0, None)] * n, method="highs")
    if not lp.success or np.linalg.norm(lp.x[:k]) > 1.0:
        raise RuntimeError("the LAD optimum is not inside the unit ball; change the seed.")
    f_star = float(np.mean(np.abs(C @ lp.x[:k] - b)))

    def value(x):
        return float(np.mean(np.abs(A @ x - b)))

    def grad_batch(Z, random_state):
        i = _rng(random_state).integers(0, n, Z.shape[0])
        return np.sign(np.einsum("ij,ij->i", Z, A[i]) - b[i])[:, None] * A[i]

    def mean_grad(x, batch, rng):
        counts = rng.multinomial(batch, np.full(n, 1.0 / n))
        return (counts * np.sign(A @ x - b)) @ A / batch

    return SCOProblem("absolute", d, value, f_star, grad_batch, mean_grad, 1.0)


def geometric_median(n_features, *, n_pairs=32, atom=0.25, random_state=0):
    """Weighted geometric median with a known, sharp minimizer (module docstring)."""
    d = check_int(n_features, "n_features", low=1)
    m = check_int(n_pairs, "n_pairs", low=1)
    rs = _rng(random_state)
    s0 = rs.standard_normal(d)
    s0 *= 0.5 / np.linalg.norm(s0)
    U = rs.standard_normal((m, d))
    U *= (0.2 + 0.6 * rs.random((m, 1))) / np.linalg.norm(U, axis=1, keepdims=True)
    S = np.vstack([s0[None], s0 + U, s0 - U])
    w = np.concatenate([[atom], np.full(2 * m, (1.0 - atom) / (2 * m))])
    f_star = float(w @ np.linalg.norm(S - s0, axis=1))

    def value(x):
        return float(w @ np.linalg.norm(x - S, axis=1))

    def _units(D):
        return D / np.maximum(np.linalg.norm(D, axis=-1, keepdims=True), 1e-300)

    def grad_batch(Z, random_state):
        i = _rng(random_state).choice(w.shape[0], size=Z.shape[0], p=w)
        return _units(Z - S[i])

    def mean_grad(x, batch, rng):
        counts = rng.multinomial(batch, w)
        return counts @ _units(x - S) / batch

    return SCOProblem("median", d, value, f_star, grad_batch, mean_grad, 1.0)


#: name -> constructor(n_features, random_state=...)
PROBLEMS = {"nemirovski": nemirovski, "absolute": absolute_regression, "median": geometric_median}
