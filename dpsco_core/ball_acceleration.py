r"""Ball acceleration: the stochastic accelerated proximal point method (Asi et al. 2021,
Algorithm 4; "BallAccel" of Carmon et al. 2023, ReSQue), written against small oracle
interfaces so that other estimators (ReSQue, paper 000) plug in unchanged.

For a convex F on a closed convex X (:math:`X \subseteq B_R(x_0)`), iteration k does

.. math::

    \lambda_{k+1} &= \text{NEXTLAMBDA}(x_k, v_k, A_k), \qquad
    a_{k+1} = \frac{1 + \sqrt{1 + 4\lambda_{k+1}A_k}}{2\lambda_{k+1}}, \quad
    A_{k+1} = A_k + a_{k+1} \;(\Leftrightarrow \lambda a^2 = A_{k+1}),\\
    y_k &= \frac{A_k}{A_{k+1}} x_k + \frac{a_{k+1}}{A_{k+1}} v_k, \qquad
    X_k = X \cap B_r(y_k),\\
    x_{k+1} &= \text{ball oracle}(y_k, \lambda_{k+1}, \varphi_{k+1}, X_k), \qquad
    \hat x_{k+1} = \text{stochastic proximal oracle}(y_k, \lambda_{k+1}, \delta_{k+1},
    \sigma_{k+1}, X_k),\\
    g_{k+1} &= \lambda_{k+1}(y_k - \hat x_{k+1}), \qquad
    v_{k+1} = \Pi_X(v_k - \tfrac12 a_{k+1} g_{k+1}),

until :math:`A_{k+1} \ge A_{\max}` or ``max_iter``. Proposition 2 (note 001, 3.2; constants
[RECON]): :math:`A_0 = R/G`, :math:`A_{\max} = 9R^2/\varepsilon`,
:math:`\varphi = \varepsilon/(60\lambda a)`, :math:`\sigma^2 = \varepsilon/(60 a)`,
:math:`\delta = \varepsilon/(120R)`.

Oracle interfaces (``typing.Protocol``; any callable with the signature works):

``BallOptimizationOracle``
    ``oracle(center, lam, phi, domain, random_state) -> x``: a point of ``domain`` with
    :math:`E[F(x) + \frac\lambda2\|x - c\|^2] \le \min_{z \in \text{domain}} \{F(z) +
    \frac\lambda2\|z - c\|^2\} + \varphi` (eq. (4); ReSQue Definition 4).
``StochasticProximalOracle``
    ``oracle(center, lam, delta, sigma, domain, random_state) -> x_hat``: with :math:`x^*` that
    minimizer, :math:`\|E\hat x - x^*\| \le \delta/\lambda` and :math:`E\|\hat x - x^*\|^2 \le
    \sigma^2/\lambda^2` (so :math:`\lambda(c - \hat x)` is a (δ, σ)-accurate Moreau gradient;
    ReSQue Definition 5 with Δ = δ).
``NextLambda`` (the line search)
    ``next_lambda(x, v, A, random_state) -> lam``: must keep the prox movement
    :math:`\|P_{F,\lambda}(y) - y\| \le r`. :class:`ConstantLambda` (r = inf) and
    :class:`LambdaBisection` (Algorithm 10, on a ball optimization oracle).

``domain`` arguments are :mod:`dpsco_core.mlmc.domains` objects (``project``, ``translate``).
Randomness: call k gets children ``3k`` (line search), ``3k + 1`` (ball oracle) and ``3k + 2``
(proximal oracle) of the run's SeedSequence. Everything data-dependent in the loop (λ, A, stop)
is post-processing of oracle outputs, so a private variant only has to account for the oracles.

The paper calls this method impractical (§1.5): with its constants each iteration costs
:math:`O(G^2 a/\varepsilon)` gradients and :math:`O(G^2 a j_{\max}/\varepsilon)` MLMC copies.
``accuracy_scale`` (default 1, the paper) multiplies φ, δ and σ² for experiments; values > 1
are outside the theory.

References
----------
.. [1] H. Asi, Y. Carmon, A. Jambulapati, Y. Jin, A. Sidford, "Stochastic bias-reduced gradient
   methods", NeurIPS 2021, Algorithm 4, Proposition 2, Algorithm 10.
.. [2] Y. Carmon, A. Jambulapati, Y. Jin, A. Sidford, "Thinking inside the ball: near-optimal
   minimization of the maximal loss", COLT 2021.
"""

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ._random import check_random_state, child_seed_sequences
from ._validation import all_finite, check_int, check_positive, check_scalar, check_vector
from .mlmc._schedule import epochs_for_budget
from .mlmc.domains import Domain, EuclideanSpace, L2Ball, TwoBallIntersection, check_domain
from .mlmc.estimator import mlmc_draws, optest
from .mlmc.oracles import GLMOracle

__all__ = ["BallOptimizationOracle", "StochasticProximalOracle", "NextLambda",
           "EpochSGDBallOracle", "MLMCProximalOracle", "ConstantLambda", "LambdaBisection",
           "BallIntersection", "ball_domain", "ball_acceleration", "BallAccelerationResult"]


class BallOptimizationOracle(Protocol):
    r"""Protocol of a (φ, λ)-ball optimization oracle.

    ``oracle(center, lam, phi, domain, random_state)`` returns a point whose objective
    :math:`F(x) + \frac\lambda2\|x - c\|^2` over ``domain`` is within φ of the minimum
    (in expectation).
    """
    def __call__(self, center, lam, phi, domain, random_state): ...


class StochasticProximalOracle(Protocol):
    """Protocol of a stochastic proximal oracle.

    ``oracle(center, lam, delta, sigma, domain, random_state)`` estimates the prox point of
    F at ``center`` with bias at most δ and mean squared error at most σ².
    """
    def __call__(self, center, lam, delta, sigma, domain, random_state): ...


class NextLambda(Protocol):
    """Protocol of NEXTLAMBDA (Algorithm 4): ``rule(x, v, A, random_state)`` returns λ."""
    def __call__(self, x, v, A, random_state): ...


#: Largest distance or radius the closed-form two-ball projection handles (squares stay finite
#: with room for sums).
_TWO_BALL_MAX = 1e150


class BallIntersection(Domain):
    """X ∩ B_r(c).

    Exact when X is an :class:`L2Ball` (closed form of
    :func:`dpsco_core.mlmc.domains.project_two_balls`; ValueError if the intersection is
    empty) or the whole space; otherwise Dykstra's alternating projections (``n_iter``
    rounds), an approximation of the projection (note 001, 8.2 pitfall 12: no closed form in
    general).

    Parameters
    ----------
    domain : Domain
        X.
    radius : float
        r.
    center : ndarray of shape (d,)
        c.
    n_iter : int, default=100
        Dykstra rounds (when X is not a ball or the whole space).
    """

    def __init__(self, domain, radius, center, n_iter=100):
        if not callable(getattr(domain, "project", None)):
            raise TypeError(f"domain must have a project(v) method; got "
                            f"{type(domain).__name__}.")
        self.domain = domain
        self.ball = L2Ball(radius, check_vector(center, "center"))
        # n_iter = 0 would return v itself, a point outside the set
        self.n_iter = check_int(n_iter, "n_iter", low=1)
        d = self.ball.center.shape[0]
        self._exact = (TwoBallIntersection(domain, self.ball, d) if isinstance(domain, L2Ball)
                       else None)

    def project(self, v):
        x = check_vector(v, "v")
        if x.shape != self.ball.center.shape:
            raise ValueError(f"v must have the length of the ball's center "
                             f"({self.ball.center.shape[0]}); got {x.shape[0]}.")
        if self._exact is not None:
            # The closed form squares distances and radii: beyond ~1e150 they overflow and the
            # answer left both balls (found by fuzzing with |v| ~ 1e161).
            with np.errstate(over="ignore"):
                scale = max(float(np.max(np.abs(x - self.ball.center))), self.ball.radius,
                            self.domain.radius,
                            float(np.max(np.abs(self.domain._center(x.shape[0])
                                                - self.ball.center))))
            if not scale <= _TWO_BALL_MAX:
                raise ValueError(f"v, the radii and the centres must lie within "
                                 f"{_TWO_BALL_MAX:.3g} of the ball's center (the two-ball "
                                 f"projection squares them); got a distance or radius of "
                                 f"{scale:.3g}: rescale v or the balls.")
            return self._exact.project(x)
        p = np.zeros_like(x)
        q = np.zeros_like(x)
        for _ in range(self.n_iter):
            y = self.ball.project(x + p)
            p = x + p - y
            x = self.domain.project(y + q)
            q = y + q - x
        return x

    def translate(self, offset):
        if self._exact is not None:
            return self._exact.translate(offset)
        return super().translate(offset)


def ball_domain(domain, radius, center):
    """X ∩ B_r(center): the ball itself for X = R^d, X for r = inf, else
    :class:`BallIntersection` (exact for a ball X, Dykstra otherwise).

    Parameters
    ----------
    domain : Domain
        X.
    radius : float
        r (inf: X itself).
    center : ndarray of shape (d,)
        c.

    Returns
    -------
    Domain
    """
    if not math.isfinite(radius):
        return domain
    if isinstance(domain, EuclideanSpace):
        return L2Ball(radius, center)
    return BallIntersection(domain, radius, center)


class EpochSGDBallOracle:
    r"""Ball optimization oracle by EpochSGD (eq. (4), Proposition 3): budget
    :math:`T = \lceil 16 G^2/(\lambda\varphi) \rceil` on :math:`F + \frac\lambda2\|\cdot - c\|^2`.

    ``oracle`` is a stochastic subgradient oracle of F (``oracle(x, rng)``, second moment
    :math:`\le G^2`); a :class:`GLMOracle` runs in the compiled kernel when the domain allows.
    ``max_epochs`` caps the epochs (outside the theory when it binds). The optional ``linear``
    argument a of a call adds :math:`\langle a, x\rangle` to the objective (the partially
    linearized composite steps of Algorithm 5).

    Parameters
    ----------
    oracle : callable
        ``oracle(x, rng)``: a stochastic subgradient of F.
    lipschitz : float
        G.
    max_epochs : int, default=40
        Cap on the epochs.
    """

    def __init__(self, oracle, lipschitz, max_epochs=40):
        self.oracle = oracle
        self.lipschitz = check_positive(lipschitz, "lipschitz")
        self.max_epochs = check_int(max_epochs, "max_epochs", low=1, high=40)
        self.n_gradients = 0

    def __call__(self, center, lam, phi, domain, random_state, linear=None):
        den = lam * phi
        budget = 16.0 * (self.lipschitz * self.lipschitz) / den if den > 0.0 else math.inf
        if math.isfinite(budget):
            epochs = min(max(1, epochs_for_budget(math.ceil(budget))), self.max_epochs)
        else:       # lam phi underflows (tiny epsilon): the budget is past any cap
            epochs = self.max_epochs
        draws = mlmc_draws(self.oracle, lam, center, j_max=epochs, base_level=epochs,
                           n_copies=1, linear=linear, domain=domain, random_state=random_state)
        self.n_gradients += int(draws.n_gradients.sum())
        return draws.samples[0]


class MLMCProximalOracle:
    r"""Stochastic proximal oracle by OPTEST (MORGRADEST's inner step): bias δ/λ and MSE
    σ²/λ² in prox units; j_max and copies from the rules of Algorithm 1 with ODC constant
    ``c`` (32: EpochSGD's proven constant; ~1 fits typical problems, note 001 section 7).
    ``max_copies`` and ``max_level`` cap the work (outside the theory when they bind). The
    optional ``linear`` argument a of a call adds :math:`\langle a, x\rangle` to the prox
    objective (OPTEST with :math:`\psi = \frac\lambda2\|x - c\|^2 + \langle a, x\rangle`).

    Parameters
    ----------
    oracle : callable
        ``oracle(x, rng)``: a stochastic subgradient of F.
    lipschitz : float
        G.
    c : float, default=32.0
        The ODC constant.
    levels : {"epoch", "paper"}, default="epoch"
        The level scheme.
    base_level : int, default=0
        :math:`\ell_0`.
    max_copies : int, optional
        Cap on the copies.
    max_level : int, default=40
        Cap on j_max.
    n_threads : int, optional
        Threads; the result does not depend on it.
    """

    def __init__(self, oracle, lipschitz, c=32.0, levels="epoch", base_level=0,
                 max_copies=None, max_level=40, n_threads=None):
        self.oracle = oracle
        self.lipschitz = check_positive(lipschitz, "lipschitz")
        self.c = check_positive(c, "c")
        self.levels = levels
        self.base_level = base_level
        self.max_copies = max_copies
        self.max_level = max_level
        self.n_threads = n_threads
        self.n_gradients = 0

    def __call__(self, center, lam, delta, sigma, domain, random_state, linear=None):
        from .mlmc._schedule import j_max_from_bias, n_copies_from_variance

        bias = min(delta, sigma / math.sqrt(2.0)) / lam
        try:
            j_max = j_max_from_bias(bias, self.lipschitz, lam, c=self.c, levels=self.levels)
        except ValueError:
            j_max = self.max_level
        j_max = max(min(j_max, self.max_level), self.base_level + 1)
        try:
            n = n_copies_from_variance((sigma / lam) ** 2, self.lipschitz, lam, j_max,
                                       base_level=self.base_level, c=self.c)
        except ValueError:
            if self.max_copies is None:
                # lam may come from a line search on the private oracle: not quoted
                raise ValueError("epsilon is too small for this proximal oracle: the variance "
                                 "target (sigma / lam)^2 needs more copies than float64 "
                                 "counts; set max_copies or increase epsilon.") from None
            n = self.max_copies
        if self.max_copies is not None:
            n = min(n, self.max_copies)
        res = optest(self.oracle, lam, center, j_max=j_max, n_copies=n, levels=self.levels,
                     base_level=self.base_level, linear=linear, domain=domain,
                     random_state=random_state, n_threads=self.n_threads)
        self.n_gradients += res.n_gradients
        return res.x


class ConstantLambda:
    """NEXTLAMBDA returning a fixed λ (plain accelerated proximal point; movement bound inf).

    Parameters
    ----------
    lam : float
        λ > 0.
    """

    def __init__(self, lam):
        self.lam = check_positive(lam, "lam")

    def __call__(self, x, v, A, random_state):
        return self.lam


class LambdaBisection:
    r"""NEXTLAMBDA by λ-bisection (Algorithm 10), on a ball optimization oracle.

    :math:`\Delta(\lambda) = \|O_\lambda(y_\lambda) - y_\lambda\|` with :math:`y_\lambda` the
    Algorithm 4 point for λ. Halve λ from λ_max while Δ < r/2 (return λ_min if it gets there),
    then bisect geometrically for Δ in [r/2, 11r/12], at most ``max_bisections`` steps. The
    answer always lies in [λ_min, λ_max]: if λ_max itself moves more than 11r/12, no λ in the
    range reaches the window and λ_max (the smallest movement available) is returned. The
    thresholds and the BROO accuracy ``phi_fraction`` (φ = fraction · λ r²) are [UNSURE] in
    the paper's OCR (note 001, 3.3); they follow Carmon et al. 2021.

    Parameters
    ----------
    ball_oracle : BallOptimizationOracle
        The oracle :math:`O_\lambda`.
    radius : float
        r.
    lam_min, lam_max : float
        The range of λ.
    domain : Domain, optional
        X (default: the whole space).
    phi_fraction : float, default=0.01
        φ = fraction · λ r².
    max_bisections : int, default=20
        Cap on the bisection steps.
    """

    def __init__(self, ball_oracle, radius, lam_min, lam_max, domain=None, phi_fraction=0.01,
                 max_bisections=20):
        self.ball_oracle = ball_oracle
        self.radius = check_positive(radius, "radius")
        self.lam_min = check_positive(lam_min, "lam_min")
        self.lam_max = check_positive(lam_max, "lam_max")
        if self.lam_max < self.lam_min:
            raise ValueError(f"lam_max must be >= lam_min; got {lam_max} < {lam_min}.")
        self.domain = domain
        self.phi_fraction = check_positive(phi_fraction, "phi_fraction")
        self.max_bisections = check_int(max_bisections, "max_bisections", low=0)
        # one seed per oracle call: the halvings from lam_max to lam_min, then the bisections
        self._n_seeds = (math.ceil(math.log2(self.lam_max) - math.log2(self.lam_min)) + 1
                         + self.max_bisections)
        if not callable(ball_oracle):
            raise TypeError(f"ball_oracle must be callable; got {type(ball_oracle).__name__}.")

    def _move(self, x, v, A, lam, seed):
        a = (1.0 + math.sqrt(1.0 + 4.0 * lam * A)) / (2.0 * lam)
        y = (A * x + a * v) / (A + a)
        if not np.all(np.isfinite(y)):
            raise ValueError("x, v and A give a non-finite Algorithm 4 point y (overflow): "
                             "rescale x, v or A.")
        dom = ball_domain(check_domain(self.domain, y.shape[0]), self.radius, y)
        z = np.asarray(self.ball_oracle(y, lam, self.phi_fraction * lam * self.radius ** 2,
                                        dom, seed), dtype=np.float64)
        if z.shape != y.shape or not np.all(np.isfinite(z)):
            raise ValueError(f"ball_oracle must return a finite vector of length {y.shape[0]}; "
                             f"got shape {z.shape} with non-finite entries: "
                             f"{not np.all(np.isfinite(z))}.")
        return float(np.linalg.norm(z - y))

    def __call__(self, x, v, A, random_state):
        x, v = check_vector(x, "x"), check_vector(v, "v")
        if x.shape != v.shape:
            raise ValueError(f"x and v must have the same length; got {x.shape[0]} and "
                             f"{v.shape[0]}.")
        A = check_scalar(A, "A", low=0.0, low_open=False)
        # as many children as calls can be made (the first 200 as before: same draws)
        seeds = iter(child_seed_sequences(check_random_state(random_state),
                                          max(200, self._n_seeds)))
        r = self.radius
        lam = self.lam_max
        while lam > self.lam_min:
            move = self._move(x, v, A, lam, next(seeds))
            if move >= r / 2:
                break
            lam /= 2.0
        if lam <= self.lam_min:
            return self.lam_min
        # Δ(lam) >= r/2 was just measured; lam_u = 2 lam (Δ < r/2 there) exists only after a
        # halving: at lam_max nothing larger is allowed.
        if move <= 11 * r / 12 or lam == self.lam_max:
            return lam
        lam_u, lam_l = 2.0 * lam, lam
        lam_m = math.sqrt(lam_u * lam_l)
        for _ in range(self.max_bisections):
            move = self._move(x, v, A, lam_m, next(seeds))
            if r / 2 <= move <= 11 * r / 12:
                break
            if move < r / 2:
                lam_u = lam_m
            else:
                lam_l = lam_m
            lam_m = math.sqrt(lam_u * lam_l)
        return lam_m


@dataclass(frozen=True)
class BallAccelerationResult:
    """Output of :func:`ball_acceleration`: the last x, the momentum point v, and per-iteration
    ``lambdas``, ``A`` and ``iterates`` (x_k).

    Attributes
    ----------
    x, v : ndarray of shape (d,)
        The last iterate and the momentum point.
    lambdas, A : ndarray
        Per-iteration λ and :math:`A_k`.
    iterates : ndarray
        :math:`x_k`.
    """

    x: np.ndarray
    v: np.ndarray
    lambdas: np.ndarray
    A: np.ndarray
    iterates: np.ndarray = field(repr=False)

    @property
    def n_iter(self):
        """int: the number of iterations."""
        return self.lambdas.shape[0]


#: max|x0| + radius_bound must stay below this: the iterates, queries and their noise need
#: headroom below the float64 maximum 1.8e308.
_REACH_LIMIT = 1e300


def ball_acceleration(ball_oracle, prox_oracle, next_lambda, x0, *, epsilon, radius_bound,
                      lipschitz, movement=np.inf, domain=None, A0=None, A_max=None,
                      max_iter=100, accuracy_scale=1.0, callback=None, random_state=None):
    r"""Algorithm 4: stochastic accelerated proximal point with ball-restricted prox steps.

    Parameters
    ----------
    ball_oracle : BallOptimizationOracle
    prox_oracle : StochasticProximalOracle
    next_lambda : NextLambda
    x0 : array-like of shape (d,)
        Start :math:`x_0 = v_0 \in X`.
    epsilon : float
        Target accuracy ε (sets φ, δ, σ² and A_max).
    radius_bound : float
        R with :math:`X \subseteq B_R(x_0)` (or :math:`\|x_0 - x^*\| \le R`).
    lipschitz : float
        G, the Lipschitz / second-moment bound of F (A_0 = R/G).
    movement : float, default=inf
        Movement bound r: the oracles work on :math:`X \cap B_r(y_k)`.
    domain : Domain, optional
        X (default the whole space).
    A0, A_max : float, optional
        Defaults R/G and 9R²/ε (Proposition 2).
    max_iter : int, default=100
    accuracy_scale : float, default=1.0
        Multiplies φ, δ and σ² (values > 1 are outside the theory; module docstring).
    callback : callable, optional
        ``callback(k, x) -> bool`` after iteration k (0-based) with the new :math:`x_{k+1}`;
        returning True stops the run (the first k iterations do not depend on ``max_iter``,
        so stopping there equals ``max_iter = k + 1``).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    BallAccelerationResult
    """
    x = check_vector(x0, "x0", copy=True)
    x0_arr = x.copy()
    eps = check_positive(epsilon, "epsilon")
    R = check_positive(radius_bound, "radius_bound")
    G = check_positive(lipschitz, "lipschitz")
    r = check_positive(movement, "movement", allow_inf=True)
    scale = check_positive(accuracy_scale, "accuracy_scale")
    max_iter = check_int(max_iter, "max_iter", low=1)
    domain = check_domain(domain, x.shape[0])
    # The iterates explore B_R(x0) (and the oracles query around them): keep headroom below
    # the float64 maximum, or the queries overflow to inf deep inside an oracle.
    reach = float(np.max(np.abs(x))) + R
    if not reach < _REACH_LIMIT:
        raise ValueError(f"x0 and radius_bound are too large: max|x0| + radius_bound must be "
                         f"below {_REACH_LIMIT:g} (the iterates explore B_R(x0)); got {reach!r}.")
    A = R / G if A0 is None else check_positive(A0, "A0")
    if A0 is None and not 0.0 < A < math.inf:
        raise ValueError(f"radius_bound / lipschitz must be a positive finite float (A0); got "
                         f"radius_bound={R!r}, lipschitz={G!r}.")
    if A_max is None:
        A_max = 9.0 * R * (R / eps)
        if not 0.0 < A_max < math.inf:
            raise ValueError(f"9 radius_bound^2 / epsilon (A_max) must be a positive finite "
                             f"float; got radius_bound={R!r}, epsilon={eps!r}.")
    else:
        A_max = check_positive(A_max, "A_max")
    seed = check_random_state(random_state)
    v = x.copy()
    lambdas, As, iterates = [], [], []
    for k in range(max_iter):
        s_line, s_ball, s_prox = child_seed_sequences(seed, 3, offset=3 * k)
        lam = float(next_lambda(x, v, A, s_line))
        a = (1.0 + math.sqrt(1.0 + 4.0 * lam * A)) / (2.0 * lam)
        A_new = A + a
        y = (A / A_new) * x + (a / A_new) * v
        dom_k = ball_domain(domain, r, y)
        phi = scale * eps / (60.0 * lam * a)
        sigma = math.sqrt(scale * eps / (60.0 * a))
        delta = scale * eps / (120.0 * R)
        x = np.asarray(ball_oracle(y, lam, phi, dom_k, s_ball), dtype=np.float64)
        x_hat = np.asarray(prox_oracle(y, lam, delta, sigma, dom_k, s_prox), dtype=np.float64)
        g = lam * (y - x_hat)
        v = domain.project(v - 0.5 * a * g)
        if not (all_finite(x) and all_finite(v)):
            # a tiny epsilon or radius makes lambda huge (Proposition 2's lambda grows as
            # R / epsilon): against a far x0 the step overflows, and the next oracle call
            # would fail on an argument the caller never passed
            # neither the iteration nor lambda is quoted: both may depend on the private
            # oracle (a line search, the iterates); x0, epsilon and radius_bound are public
            raise ValueError(
                f"the accelerated step overflowed (max |x0| = "
                f"{float(np.max(np.abs(x0_arr))):.3g}): epsilon={eps!r} and "
                f"radius_bound={R!r} are too small for the scale of x0; rescale the problem "
                "so that x0, the radius and the accuracy are within a few hundred orders of "
                "magnitude of each other.")
        A = A_new
        lambdas.append(lam)
        As.append(A)
        iterates.append(x)
        if A >= A_max or (callback is not None and callback(k, x)):
            break
    return BallAccelerationResult(x, v, np.array(lambdas), np.array(As), np.array(iterates))
