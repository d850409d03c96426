r"""Algorithm 5 of Asi et al. 2021: stochastic composite accelerated gradient descent, efficient
in the gradients of the smooth part (note 001, section 3.4).

Problem (5): :math:`\min_{x \in X} \Psi(x) = A(x) + f(x)` with A convex and L-smooth (exact
but expensive :math:`\nabla A`) and f convex with a cheap stochastic subgradient oracle
(:math:`E\|\hat\nabla f\|^2 \le G^2`); :math:`\|x_0 - x^*\| \le R`, :math:`\bar X = X \cap
B_R(x_0)`. Iteration k (:math:`\beta_k = 2L/k`, :math:`\gamma_k = 2/(k+1)`):

.. math::

    c_k &= \Pi_{\bar X}(v_{k-1}), \qquad y_k = (1 - \gamma_k) x_{k-1} + \gamma_k c_k, \qquad
    A_k(z) = A(y_k) + \langle \nabla A(y_k), z - y_k\rangle,\\
    \tilde v_k &\approx_{\varepsilon_k} \arg\min_{z \in \bar X} A_k(z) + f(z)
        + \tfrac{\beta_k}2\|z - c_k\|^2 \quad\text{(EpochSGD, in function value, eq. (4))},\\
    v_k &= \text{OPTEST of the same minimizer (bias } \delta_k\text{, MSE } \sigma_k^2),\qquad
    x_k = (1 - \gamma_k) x_{k-1} + \gamma_k \tilde v_k,

one exact :math:`\nabla A` per iteration. The paper centres the prox terms at
:math:`v_{k-1}`; its analysis uses :math:`\Pi_{\bar X}(v_{k-1})`, which is what is done here
(note 3.4; they agree when :math:`v_{k-1} \in \bar X`).

Theorem 5 / Proposition 5 (:math:`\varepsilon_k` [RECON]: the OCR's "LR/2kN" lacks the square
the units need): :math:`\varepsilon_k = LR^2/(2kN)`, :math:`\delta_k = R/(16N)`,
:math:`\sigma_k^2 = R^2/(4N)` give :math:`E\Psi(x_N) - \Psi^* \le 4LR^2/(N(N+1))`, so
:math:`N = \lceil 2\sqrt{LR^2/\varepsilon}\rceil` reaches ε, with N gradients of A and
:math:`O((GR/\varepsilon)^2\log^2(GR/\varepsilon) + \sqrt{LR^2/\varepsilon}\log(GR/\varepsilon))`
stochastic gradients of f.

The two prox computations are the oracles of :mod:`dpsco_core.ball_acceleration` with a linear
term: a ball optimization oracle (:class:`~dpsco_core.ball_acceleration.EpochSGDBallOracle`)
and a stochastic proximal oracle
(:class:`~dpsco_core.ball_acceleration.MLMCProximalOracle`), both called with
``linear=`` :math:`\nabla A(y_k)`. Gradient sliding (Lan) achieves this without logarithms.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_vector
from ._checks import default_iterations, oracle_vector
from .domains import check_domain

__all__ = ["CompositeAGDResult", "composite_agd"]


@dataclass(frozen=True)
class CompositeAGDResult:
    """Output of :func:`composite_agd`: ``x`` (:math:`x_N`), ``v``, ``iterates`` (x_0..x_N)
    and ``n_grad_smooth``, the exact gradients of A used (exactly N).

    Attributes
    ----------
    x, v : ndarray
        The last iterates.
    iterates : ndarray
        :math:`x_0, \\dots, x_N`.
    n_grad_smooth : int
        Exact gradients of A used.
    """

    x: np.ndarray
    v: np.ndarray
    iterates: np.ndarray = field(repr=False)
    n_grad_smooth: int

    @property
    def n_iter(self):
        """int: the number of iterations N."""
        return self.iterates.shape[0] - 1


def composite_agd(grad_smooth, ball_oracle, prox_oracle, x0, *, smoothness, radius,
                  epsilon=None, n_iter=None, domain=None, random_state=None):
    r"""Algorithm 5: stochastic composite AGD for :math:`A + f` (module docstring).

    Parameters
    ----------
    grad_smooth : callable
        ``grad_smooth(y) -> ndarray``: the exact :math:`\nabla A(y)` (counted).
    ball_oracle : BallOptimizationOracle accepting ``linear=``
        ``ball_oracle(center, lam, phi, domain, random_state, linear=a)``: a φ-approximate
        minimizer (in expected value) of :math:`f + \langle a, \cdot\rangle +
        \frac\lambda2\|\cdot - c\|^2` over domain.
    prox_oracle : StochasticProximalOracle accepting ``linear=``
        ``prox_oracle(center, lam, delta, sigma, domain, random_state, linear=a)``: estimate of
        the same minimizer with bias δ/λ and MSE σ²/λ².
    x0 : array-like of shape (d,)
    smoothness : float
        L.
    radius : float
        R with :math:`\|x_0 - x^*\| \le R`.
    epsilon : float, optional
        Target ε: N = ceil(2 sqrt(L R² / ε)). Give exactly one of ``epsilon`` and ``n_iter``.
    n_iter : int, optional
        N.
    domain : Domain, optional
        X (default the whole space); the oracles work on :math:`X \cap B_R(x_0)`.
    random_state : None, int, SeedSequence or Generator
        Iteration k uses children 2k (ball oracle) and 2k + 1 (proximal oracle).

    Returns
    -------
    CompositeAGDResult
    """
    from ..ball_acceleration import ball_domain   # the package imports mlmc first

    x = check_vector(x0, "x0", copy=True)
    L = check_positive(smoothness, "smoothness")
    R = check_positive(radius, "radius")
    if (epsilon is None) == (n_iter is None):
        raise ValueError("give exactly one of epsilon and n_iter.")
    if epsilon is not None:
        eps = check_positive(epsilon, "epsilon")
        N = default_iterations(2.0 * math.sqrt(L / eps) * R,
                               ["smoothness", "radius", "epsilon"])
    else:
        N = check_int(n_iter, "n_iter", low=1)
    for name, fn in (("grad_smooth", grad_smooth), ("ball_oracle", ball_oracle),
                     ("prox_oracle", prox_oracle)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable; got {type(fn).__name__}.")
    if not (math.isfinite(L * R * R) and L * R * R > 0.0):
        raise ValueError(f"smoothness * radius^2 = {L * R * R!r} is outside (0, inf) (the "
                         "ball oracles' accuracy targets): rescale smoothness or radius.")
    domain = check_domain(domain, x.shape[0])
    x_bar = ball_domain(domain, R, x.copy())
    seed = check_random_state(random_state)
    v = x.copy()
    iterates = [x.copy()]
    delta, sigma = R / (16.0 * N), R / (2.0 * math.sqrt(N))
    for k in range(1, N + 1):
        beta, gamma = 2.0 * L / k, 2.0 / (k + 1.0)
        center = x_bar.project(v)
        y = (1.0 - gamma) * x + gamma * center
        a = oracle_vector(grad_smooth(y), "grad_smooth", x.shape)
        s_ball, s_prox = child_seed_sequences(seed, 2, offset=2 * k)
        eps_k = L * R * R / (2.0 * k * N)
        v_tilde = oracle_vector(ball_oracle(center, beta, eps_k, x_bar, s_ball, linear=a),
                                "ball_oracle", x.shape)
        # OPTEST's targets are in x units (delta_k, sigma_k); the oracle takes gradient units.
        v = oracle_vector(prox_oracle(center, beta, beta * delta, beta * sigma, x_bar, s_prox,
                                      linear=a), "prox_oracle", x.shape)
        x = (1.0 - gamma) * x + gamma * v_tilde
        iterates.append(x)
    return CompositeAGDResult(x, v, np.array(iterates), N)
