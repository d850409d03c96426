r"""Parallel stochastic convex optimization with ReSQue (Carmon et al. 2023, §III).

Ball optimization oracles for :math:`\Psi(x) = \hat f_\rho(x) + \frac\lambda2\|x - \bar x\|^2`
over :math:`B_{\bar x}(r)`, each issuing ALL its oracle queries as one batch (query depth 1)
before optimizing with ReSQue estimates:

- :class:`ReSQueEpochSGD`: Algorithm 1 (EpochSGD; :math:`T = \lceil 48L^2/(\lambda\varphi)\rceil`,
  epochs of :math:`T_k = 16\cdot 2^{k-1}` iterates with step :math:`1/(4\lambda 2^{k-1})`);
- :class:`ReSQueACSA`: Algorithm 2 (AC-SA with restarts) with the corrections of note 000,
  section 4.2 (γ_t uses L/ρ + λ; x^md's second coefficient α((1-α)λ + γ); minibatch t of stage k
  uses its own samples; α_t multiplies the whole gradient of Ψ in the prox step).

Both follow the :class:`~dpsco_core.ball_acceleration.BallOptimizationOracle` protocol,
``oracle(center, lam, phi, domain, random_state) -> x``, and plug into
:func:`~dpsco_core.ball_acceleration.ball_acceleration` unchanged. :func:`parallel_sco`
assembles Theorems 1 and 2: BallAccel on :math:`F = \hat f_\rho` with
:math:`r = \rho = \varepsilon/(\sqrt d L)` (``smoothing="dimension"``, the paper) or
:math:`\rho = \varepsilon/L` (``smoothing="glm"``: the smoothing bias of a GLM with
:math:`\|a\| \le 1` is :math:`L\rho\sqrt{2/\pi}`, dimension-free; an extension, note 000 §9).

The stochastic proximal oracle is a ball oracle run to accuracy
:math:`\varphi = \min(\delta, \sigma)^2/(2\lambda)`: by λ-strong convexity
:math:`E\|x - x^*\|^2 \le 2\varphi/\lambda`, which gives both the bias and the variance bound of
Definition 5 (a simpler stand-in for the MLMC levels of Proposition 2; its cost is one more
ball-oracle batch per iteration).

Every run reports, from its executor, query depth (sequential oracle batches), total queries and
computational depth (sequential optimizer steps + batches).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._random import check_random_state
from .._validation import check_positive, check_vector
from ..ball_acceleration import ConstantLambda, LambdaBisection, ball_acceleration
from ..exceptions import external_stacklevel
from ..parallel.executors import SerialExecutor
from .estimator import ReSQueBatch, ReSQueWarning

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike

__all__ = ["ReSQueEpochSGD", "ReSQueACSA", "BallProximalOracle", "parallel_sco",
           "ParallelSCOResult", "epoch_sgd_schedule", "ac_sa_schedule"]


def epoch_sgd_schedule(lipschitz, lam, phi):
    """Algorithm 1's schedule: (T, [T_1, T_2, ...]) with sum T_k <= T; samples used
    sum (T_k - 1).

    Parameters
    ----------
    lipschitz : float
        L.
    lam : float
        λ of the ball oracle.
    phi : float
        Target accuracy φ.

    Returns
    -------
    tuple
        (T, [T_1, T_2, ...]).
    """
    T = math.ceil(48.0 * lipschitz ** 2 / (lam * phi))
    lengths, t_k, total = [], 16, 0
    while total + t_k <= T:
        lengths.append(t_k)
        total += t_k
        t_k *= 2
    return T, lengths


def ac_sa_schedule(lipschitz, lam, phi, radius, smoothing_radius):
    """Algorithm 2's schedule: (K, T, [N_1..N_K]).

    Parameters
    ----------
    lipschitz : float
        L.
    lam : float
        λ of the ball oracle.
    phi : float
        Target accuracy φ.
    radius, smoothing_radius : float
        r and ρ.

    Returns
    -------
    tuple
        (K, T, [N_1, ..., N_K]).
    """
    K = max(1, math.ceil(math.log2(lam * radius ** 2 / phi)))
    T = math.ceil(4.0 * math.sqrt(lipschitz / (smoothing_radius * lam)) + 1.0)
    N = [math.ceil(48.0 * 2 ** k * lipschitz ** 2 / (lam ** 2 * radius ** 2 * T))
         for k in range(1, K + 1)]
    return K, T, N


class _ReSQueBallOracle:
    def __init__(self, grad_batch, lipschitz, radius, smoothing_radius, executor=None,
                 max_queries=10 ** 7):
        self.grad_batch = grad_batch
        self.lipschitz = check_positive(lipschitz, "lipschitz")
        self.radius = check_positive(radius, "radius")
        self.smoothing_radius = check_positive(smoothing_radius, "smoothing_radius")
        if self.radius > self.smoothing_radius * (1 + 1e-12):
            warnings.warn(f"radius {radius} > smoothing_radius {smoothing_radius}: ReSQue's "
                          f"variance grows like exp(r^2/rho^2) (Lemma 1 needs r <= rho).",
                          ReSQueWarning, stacklevel=external_stacklevel())
        self.executor = SerialExecutor() if executor is None else executor
        self.max_queries = max_queries

    def _batch(self, center, n, random_state):
        if n > self.max_queries:
            raise ValueError(f"the oracle needs {n} queries, above max_queries="
                             f"{self.max_queries}; raise phi (accuracy_scale) or max_queries.")
        return ReSQueBatch.query(self.grad_batch, center, self.smoothing_radius, n,
                                 executor=self.executor, random_state=random_state,
                                 n_threads=1)


class ReSQueEpochSGD(_ReSQueBallOracle):
    r"""Algorithm 1: a (φ, λ)-ball optimization oracle for :math:`\hat f_\rho` (Prop. 3).

    Parameters
    ----------
    grad_batch : callable
        ``grad_batch(Z, random_state) -> G``: stochastic subgradients of f at the rows of Z,
        second moment :math:`\le L^2`.
    lipschitz : float
        L.
    radius, smoothing_radius : float
        r <= ρ (a warning beyond).
    executor : SerialExecutor or ThreadExecutor, optional
        Runs and counts the queries (default: a new :class:`SerialExecutor`).
    max_queries : int, default=10_000_000
        Refuse a call that would need more queries.
    """

    def __call__(self, center, lam, phi, domain, random_state):
        c = check_vector(center, "center")
        _, lengths = epoch_sgd_schedule(self.lipschitz, lam, phi)
        if not lengths:
            return c.copy()
        batch = self._batch(c, sum(t - 1 for t in lengths), random_state)
        zeta, G, rho = batch.zeta, batch.gradients, self.smoothing_radius
        eta, i, x0 = 1.0 / (4.0 * lam), 0, c.copy()
        for t_k in lengths:
            denom = 1.0 + eta * lam
            x = domain.project((x0 + eta * lam * c) / denom)
            acc = x.copy()
            for _ in range(t_k - 1):
                v = (x - c) / rho
                w = math.exp(float(zeta[i] @ v) - 0.5 * float(v @ v))   # ReSQue weight (1.2)
                x = domain.project((x + eta * lam * c - eta * w * G[i]) / denom)
                acc += x
                i += 1
            x0 = acc / t_k
            eta *= 0.5
        self.executor.add_depth(i + len(lengths))
        return x0


class ReSQueACSA(_ReSQueBallOracle):
    r"""Algorithm 2 (AC-SA with restarts, corrected; module docstring): a (φ, λ)-ball oracle for
    :math:`\hat f_\rho` with computational depth :math:`O(\sqrt{1 + L/(\rho\lambda)}
    \log(\lambda r^2/\varphi))` (Prop. 4). Parameters as :class:`ReSQueEpochSGD`.

    Parameters
    ----------
    grad_batch : callable
        ``grad_batch(Z, random_state) -> G``.
    lipschitz : float
        L.
    radius, smoothing_radius : float
        r <= ρ.
    executor : SerialExecutor or ThreadExecutor, optional
        Runs and counts the queries.
    max_queries : int, default=10_000_000
        Refuse a call that would need more queries.
    """

    def __call__(self, center, lam, phi, domain, random_state):
        c = check_vector(center, "center")
        K, T, N = ac_sa_schedule(self.lipschitz, lam, phi, self.radius, self.smoothing_radius)
        batch = self._batch(c, T * sum(N), random_state)
        L, rho = self.lipschitz, self.smoothing_radius
        x_ag, x, offset = c.copy(), c.copy(), 0
        for k in range(K):
            for t in range(1, T + 1):
                alpha = 2.0 / (t + 1)
                gamma = 4.0 * (L / rho + lam) / (t * (t + 1))
                x_md = (((1 - alpha) * (lam + gamma)) * x_ag
                        + (alpha * ((1 - alpha) * lam + gamma)) * x) / (gamma
                                                                        + (1 - alpha ** 2) * lam)
                rows = slice(offset + (t - 1) * N[k], offset + t * N[k])
                grad = batch.estimate(x_md, rows=rows) + lam * (x_md - c)
                x = domain.project(((gamma + lam * (1 - alpha)) * x + lam * alpha * x_md
                                    - alpha * grad) / (gamma + lam))
                x_ag = alpha * x + (1 - alpha) * x_ag
            offset += T * N[k]
            x = x_ag.copy()
        self.executor.add_depth(K * T)          # the batch itself counted 1 in the executor
        return x_ag


class BallProximalOracle:
    r"""Stochastic proximal oracle from a ball oracle run to :math:`\varphi =
    \min(\delta, \sigma)^2/(2\lambda)` (module docstring).

    Parameters
    ----------
    ball_oracle : ReSQueEpochSGD or ReSQueACSA
        The ball oracle.
    """

    def __init__(self, ball_oracle):
        self.ball_oracle = ball_oracle

    def __call__(self, center, lam, delta, sigma, domain, random_state):
        return self.ball_oracle(center, lam, min(delta, sigma) ** 2 / (2.0 * lam), domain,
                                random_state)


class _IterationOracles:
    r"""The ball and proximal oracles of one BallAccel iteration, sharing one query round.

    Both oracles' query points depend only on :math:`(y_k, \lambda_{k+1})` and fresh samples,
    known before either batch is answered, so a parallel machine issues the two batches
    together: the proximal oracle's batch joins the ball oracle's round (one unit of query
    depth per iteration, as the iteration counts of Propositions 1-2 assume). After each
    iteration the executor's counters are appended to ``trace``.
    """

    def __init__(self, ball_oracle, share_round=True):
        self.ball = ball_oracle
        self.prox = BallProximalOracle(ball_oracle)
        self.share_round = share_round
        self.trace = []
        self._issued = False

    def ball_oracle(self, center, lam, phi, domain, random_state):
        st = self.ball.executor.stats
        before = st.query_depth
        out = self.ball(center, lam, phi, domain, random_state)
        self._issued = st.query_depth > before
        return out

    def prox_oracle(self, center, lam, delta, sigma, domain, random_state):
        if self.share_round and self._issued:
            self.ball.executor.continue_round()
        out = self.prox(center, lam, delta, sigma, domain, random_state)
        st = self.ball.executor.stats
        self.trace.append((st.query_depth, st.total_queries, st.computational_depth))
        return out


@dataclass(frozen=True)
class ParallelSCOResult:
    """Output of :func:`parallel_sco`: x, the BallAccel result, the radii, the counters
    (query depth, total queries, computational depth), the smoothing error bound, and
    ``trace`` (n_iter, 3): the three counters after each BallAccel iteration.

    Attributes
    ----------
    x : ndarray of shape (d,)
        The solution.
    accel : BallAccelerationResult
        The outer loop's result.
    smoothing_radius, radius : float
        ρ and r.
    query_depth, total_queries, computational_depth : int
        The counters.
    smoothing_error_bound : float
        Bound on :math:`\\hat f_\\rho - f`.
    trace : ndarray of shape (n_iter, 3) or None
        The counters after each iteration.
    """

    x: np.ndarray
    accel: object
    smoothing_radius: float
    radius: float
    query_depth: int
    total_queries: int
    computational_depth: int
    smoothing_error_bound: float
    trace: np.ndarray | None = field(repr=False, default=None)


def parallel_sco(grad_batch: Callable[..., Any], x0: ArrayLike, *, lipschitz: float,
                 radius_bound: float, epsilon: float, inner: str = "ac_sa",
                 smoothing: str = "dimension", line_search: str = "constant",
                 executor: Any = None, max_iter: int = 200, accuracy_scale: float = 1.0,
                 max_queries: int = 10 ** 7, share_rounds: bool = True,
                 callback: Callable[[int, np.ndarray], bool] | None = None,
                 lambda_factor: float = 1.0, ball_accel_constant: float = 1.0,
                 random_state: RandomStateLike = None) -> ParallelSCOResult:
    r"""Theorems 1 (``inner="epoch_sgd"``) and 2 (``inner="ac_sa"``): minimize f to accuracy ε
    over :math:`B_R(x_0)` with a batched stochastic subgradient oracle.

    Parameters
    ----------
    grad_batch : callable
        ``grad_batch(Z, random_state) -> G`` (second moment :math:`\le L^2`).
    x0 : array-like of shape (d,)
    lipschitz, radius_bound, epsilon : float
        L, R and ε_opt.
    inner : {"ac_sa", "epoch_sgd"}
    smoothing : {"dimension", "glm"}
        r = ρ = ε/(√d L) (the paper; smoothing error ≤ ε) or ε/L (GLMs with unit-norm rows:
        error ≤ ε sqrt(2/π); an extension).
    line_search : {"constant", "bisection"}
        λ fixed at ``lambda_factor`` L/r (rate d^{1/4}/ε as DBW12), or BallAccel's
        λ-bisection (Algorithm 10 of the ball-acceleration module) on
        [min(λ_*/C, λ_c), max(C L/ε, λ_c)], C = ``ball_accel_constant``, λ_c the constant
        choice (Proposition 1's range; the d^{1/3} ε^{-2/3} rate, with more sequential
        ball-oracle calls per iteration). For ε above about d^{-1/4}/log³κ and C = 1 the
        range is the single point λ_c, and both choices coincide.
    lambda_factor : float, default=1.0
        The constant λ is lambda_factor · L/r. With 1, the unconstrained prox step of the
        L-Lipschitz :math:`\hat f_\rho` moves at most :math:`\|\nabla \hat f_\rho\|/\lambda
        \le r` (optimality of the prox point), so the ball constraint is inactive; the
        paper's Lemma 8 states the looser 2L/λ (use 2 to follow it).
    ball_accel_constant : float, default=1.0
        C_ba of Proposition 1, widening the bisection's λ range (unspecified in the paper).
    executor : SerialExecutor or ThreadExecutor, optional
    max_iter : int, default=200
    accuracy_scale : float, default=1.0
        Multiplies BallAccel's φ, δ, σ² (> 1 is outside the theory; fewer queries).
    max_queries : int
        Refuse ball-oracle batches above this size.
    share_rounds : bool, default=True
        Issue the ball and proximal oracle batches of an iteration in one round
        (:class:`_IterationOracles`); False counts them as two rounds.
    callback : callable, optional
        ``callback(k, x) -> bool`` after each BallAccel iteration; True stops the run.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ParallelSCOResult

    Notes
    -----
    **Not private.** ``epsilon`` is the optimization accuracy, not a privacy parameter: this is
    the parallel algorithm of Section III of Carmon et al., which releases its output with no
    privacy guarantee under any neighbouring relation (the private algorithms of Section IV are
    :func:`~dpsco_core.resque.private_sco.resque_private_erm` and
    :func:`~dpsco_core.resque.private_sco.resque_private_sco`).
    """
    x: np.ndarray = check_vector(x0, "x0")
    L = check_positive(lipschitz, "lipschitz")
    R = check_positive(radius_bound, "radius_bound")
    eps = check_positive(epsilon, "epsilon")
    d = x.shape[0]
    if smoothing == "dimension":
        rho = eps / (math.sqrt(d) * L)
        bias = L * rho * math.sqrt(d)
    elif smoothing == "glm":
        rho = eps / L
        bias = L * rho * math.sqrt(2.0 / math.pi)
    else:
        raise ValueError(f"smoothing must be 'dimension' or 'glm'; got {smoothing!r}.")
    cls = {"ac_sa": ReSQueACSA, "epoch_sgd": ReSQueEpochSGD}.get(inner)
    if cls is None:
        raise ValueError(f"inner must be 'ac_sa' or 'epoch_sgd'; got {inner!r}.")
    executor = SerialExecutor() if executor is None else executor
    ball = cls(grad_batch, L, rho, rho, executor, max_queries)
    lam_const = check_positive(lambda_factor, "lambda_factor") * L / rho
    # rho = eps/(sqrt(d) L) and lambda = L/rho = sqrt(d) L^2/eps must be positive floats: a
    # lipschitz/epsilon ratio far from 1 under- or overflows them (lambda = inf or 0 used to
    # surface as an internal "lam must be in (0, inf)").
    if not (0.0 < rho < math.inf and 0.0 < lam_const < math.inf and 0.0 < R / rho < math.inf):
        raise ValueError(f"lipschitz = {L!r}, epsilon = {eps!r} and radius_bound = {R!r} are "
                         f"out of range: the smoothing radius epsilon/(sqrt(d) lipschitz) = "
                         f"{rho!r}, lambda = lambda_factor lipschitz/radius = {lam_const!r} and "
                         f"radius_bound/radius = {R / rho!r} must be positive finite floats.")
    c_ba = check_positive(ball_accel_constant, "ball_accel_constant")
    next_lambda: ConstantLambda | LambdaBisection
    if line_search == "constant":
        next_lambda = ConstantLambda(lam_const)
    elif line_search == "bisection":
        K = (R / rho) ** (2.0 / 3.0)
        kappa = max(L * R / eps, math.e)
        lam_star = eps * K ** 2 * math.log(kappa) ** 2 / R ** 2
        next_lambda = LambdaBisection(ball, rho, min(lam_star / c_ba, lam_const),
                                      max(c_ba * L / eps, lam_const), max_bisections=8)
    else:
        raise ValueError(f"line_search must be 'constant' or 'bisection'; got {line_search!r}.")
    oracles = _IterationOracles(ball, share_rounds)
    res = ball_acceleration(oracles.ball_oracle, oracles.prox_oracle, next_lambda, x,
                            epsilon=eps, radius_bound=R, lipschitz=L, movement=rho,
                            max_iter=max_iter, accuracy_scale=accuracy_scale,
                            callback=callback, random_state=check_random_state(random_state))
    st = executor.stats
    return ParallelSCOResult(res.x, res, rho, rho, st.query_depth, st.total_queries,
                             st.computational_depth, bias,
                             np.array(oracles.trace, dtype=np.int64).reshape(-1, 3))
