r"""Algorithm 3 of Asi et al. 2021: stochastic accelerated gradient descent on the Moreau
envelope, for a constraint set X whose projection is expensive (note 001, section 3.1).

For f convex on :math:`B_R(c_0) \supseteq X` with a stochastic subgradient oracle
(:math:`E\|\hat\nabla f\|^2 \le G^2`), Nesterov's method runs on the λ-smooth envelope
:math:`f_\lambda(y) = \min_{x \in B_R(c_0)} f(x) + \frac\lambda2\|x - y\|^2`, whose gradient
:math:`\lambda(y - P_{f,\lambda}(y))` is estimated by MORGRADEST (Algorithm 2) over the *ball*,
so that :math:`\Pi_X` is called once per iteration:

.. math::

    y_{k-1} &= \tfrac{k-1}{k+1} x_{k-1} + \tfrac{2}{k+1} v_{k-1},\qquad
    g_k = \lambda\big(y_{k-1} - \hat P(y_{k-1})\big),\\
    x_k &= \Pi_X\big(y_{k-1} - g_k/(3\lambda)\big),\qquad
    v_k = \Pi_{B_R(c_0)}\big(v_{k-1} - \tfrac{k}{6\lambda} g_k\big).

Theorem 3 (constants [RECON] from the proof, note 10): with :math:`\lambda = 2G^2/\varepsilon`,
:math:`\delta_k = \varepsilon/(8R)`, :math:`\sigma_k^2 = 2\lambda\varepsilon/(k+1)` and
:math:`T = \lceil 4\sqrt3\, G D/\varepsilon \rceil` (:math:`D \ge \|x_0 - x^*\|`),
:math:`E f(x_T) \le f(x^*) + \varepsilon` with :math:`O(GD/\varepsilon)` projections onto X and
:math:`O((GD/\varepsilon)^2 \log^2(GR/\varepsilon))` stochastic gradients in expectation.

The estimate :math:`\hat P` comes from any stochastic proximal oracle of
:mod:`dpsco_core.ball_acceleration` (``oracle(center, lam, delta, sigma, domain,
random_state)``: bias δ/λ and MSE σ²/λ² of the prox point), typically
:class:`~dpsco_core.ball_acceleration.MLMCProximalOracle` (OPTEST; its ``max_copies`` /
``c`` presets trade the theory's constants for speed). The paper notes that gradient sliding has
the same bounds up to logarithms and is as simple (§1.5): this is not expected to beat it.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_vector
from ._checks import default_iterations, oracle_vector
from .domains import L2Ball

__all__ = ["MoreauAGDResult", "moreau_agd"]


@dataclass(frozen=True)
class MoreauAGDResult:
    """Output of :func:`moreau_agd`.

    Attributes
    ----------
    x : ndarray of shape (d,)
        :math:`x_T` (in X).
    v : ndarray of shape (d,)
    iterates : ndarray of shape (T + 1, d)
        :math:`x_0, \\dots, x_T`.
    n_projections : int
        Calls to the projection onto X (exactly T).
    lam, n_iter : float, int
        λ and T used.
    """

    x: np.ndarray
    v: np.ndarray
    iterates: np.ndarray = field(repr=False)
    n_projections: int
    lam: float
    n_iter: int


def _projector(project):
    if callable(getattr(project, "project", None)):
        return project.project
    if callable(project):
        return project
    raise TypeError(f"project must be callable or have a project(v) method; got "
                    f"{type(project).__name__}.")


def moreau_agd(prox_oracle, project, x0, *, epsilon, lipschitz, radius, distance=None,
               ball_center=None, lam=None, n_iter=None, random_state=None):
    r"""Algorithm 3: projection-efficient stochastic AGD on the Moreau envelope.

    Parameters
    ----------
    prox_oracle : StochasticProximalOracle
        ``prox_oracle(center, lam, delta, sigma, domain, random_state)`` (module docstring).
    project : callable or Domain
        :math:`\Pi_X` (``project(v)`` or an object with ``project``); counted.
    x0 : array-like of shape (d,)
        :math:`x_0 = v_0 \in X`.
    epsilon : float
        Target accuracy ε.
    lipschitz : float
        G (second-moment bound of the stochastic subgradients on the ball).
    radius : float
        R with :math:`X \subseteq B_R(c_0)`.
    distance : float, optional
        D with :math:`\|x_0 - x^*\| \le D` (default 2R).
    ball_center : array-like of shape (d,), optional
        :math:`c_0` (default the origin, as in the paper).
    lam, n_iter : optional
        Override λ and T (default: Theorem 3).
    random_state : None, int, SeedSequence or Generator
        Iteration k calls the oracle with child k of the run's SeedSequence.

    Returns
    -------
    MoreauAGDResult
    """
    x = check_vector(x0, "x0", copy=True)
    eps = check_positive(epsilon, "epsilon")
    G = check_positive(lipschitz, "lipschitz")
    R = check_positive(radius, "radius")
    D = 2.0 * R if distance is None else check_positive(distance, "distance")
    if lam is None:
        lam = 2.0 * G * G / eps
        if not 0.0 < lam < math.inf:
            raise ValueError(f"lipschitz and epsilon give lam = 2 G^2 / epsilon = {lam!r}, "
                             "outside (0, inf): rescale them or pass lam.")
    else:
        lam = check_positive(lam, "lam")
    if n_iter is None:
        T = default_iterations(4.0 * math.sqrt(3.0) * G * D / eps,
                               ["lipschitz", "distance" if distance is not None else "radius",
                                "epsilon"])
    else:
        T = check_int(n_iter, "n_iter", low=1)
    proj = _projector(project)
    if not callable(prox_oracle):
        raise TypeError(f"prox_oracle must be callable; got {type(prox_oracle).__name__}.")
    if ball_center is not None:
        ball_center = check_vector(ball_center, "ball_center")
        if ball_center.shape != x.shape:
            raise ValueError(f"ball_center must have the length of x0 ({x.shape[0]}); got "
                             f"{ball_center.shape[0]}.")
    ball = L2Ball(R, ball_center)
    seed = check_random_state(random_state)
    delta = eps / (8.0 * R)
    v = x.copy()
    iterates = [x.copy()]
    for k in range(1, T + 1):
        y = ((k - 1.0) / (k + 1.0)) * x + (2.0 / (k + 1.0)) * v
        sigma = math.sqrt(2.0 * lam * eps / (k + 1.0))
        (s_k,) = child_seed_sequences(seed, 1, offset=k)
        x_hat = oracle_vector(prox_oracle(y, lam, delta, sigma, ball, s_k), "prox_oracle",
                              x.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            g = lam * (y - x_hat)
            step = v - (k / (6.0 * lam)) * g
        if not (np.all(np.isfinite(g)) and np.all(np.isfinite(step))):
            raise ValueError("the Moreau gradient lam (y - prox) overflowed: lam (from lipschitz "
                             "and epsilon) times the distances of x0, radius and the oracle's "
                             "answers exceeds the float64 range; rescale the problem.")
        x = oracle_vector(proj(y - g / (3.0 * lam)), "project", x.shape)
        v = ball.project(step)
        iterates.append(x)
    return MoreauAGDResult(x, v, np.array(iterates), T, lam, T)
