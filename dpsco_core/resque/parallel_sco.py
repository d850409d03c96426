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

The stochastic proximal oracle (Definition 5) comes in two versions, ``prox_oracle=``:

- ``"ball"`` (default, :class:`BallProximalOracle`): a stand-in, one ball-oracle run to accuracy
  :math:`\varphi = \min(\delta, \sigma)^2/(2\lambda)` with BallAccel's (δ, σ): by λ-strong
  convexity :math:`E\|x - x^*\|^2 \le 2\varphi/\lambda`, which gives both the bias and the
  variance bound of Definition 5. Its cost, :math:`48L^2/(\lambda\varphi) \ge 96L^2/\delta^2`
  queries with BallAccel's :math:`\delta = \varepsilon/(120R)`, is :math:`O(\kappa^2)` per
  iteration whatever λ.
- ``"mlmc"`` (:class:`ReSQueMLMCProximalOracle`): **Proposition 2** (the paper's, after [CH22]
  Algorithm 2; the parallel twin of Algorithm 6): a multilevel Monte Carlo estimate over
  independent ball-oracle runs at the accuracies :math:`\varphi_j = \lambda r^2/(C_{ba} 2^j
  \log^2(R\kappa/r))`, :math:`j \le j_{\max} = \lceil \log_2 K + C_{ba}\rceil`; unbiased for
  the top level, at an expected cost of :math:`O(j_{\max} L^2 \log^2(R\kappa/r)/(\lambda^2
  r^2))` queries, i.e. :math:`O(\kappa^2/K)` polylog at :math:`\lambda = \lambda_*`.

Every run reports, from its executor, query depth (sequential oracle batches), total queries and
computational depth (sequential optimizer steps + batches).
"""

from __future__ import annotations

import contextlib
import math
import traceback
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._random import BIT_GENERATOR, check_random_state, child_seed_sequences
from .._validation import check_positive, check_vector
from ..mlmc._schedule import level_from_raw
from .. import ball_acceleration as _ball_acceleration_module
from ..ball_acceleration import ConstantLambda, LambdaBisection, ball_acceleration
from ..exceptions import external_stacklevel
from ..parallel.executors import SerialExecutor
from .estimator import ReSQueBatch, ReSQueWarning

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike

__all__ = ["ReSQueEpochSGD", "ReSQueACSA", "BallProximalOracle", "ReSQueMLMCProximalOracle",
           "proposition2_levels", "parallel_sco", "ParallelSCOResult", "epoch_sgd_schedule",
           "ac_sa_schedule"]


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

    def n_queries(self, lam, phi):
        r"""Queries of one call, :math:`\sum_k (T_k - 1) \le T = \lceil 48L^2/(\lambda\varphi)
        \rceil` (Proposition 3).

        Parameters
        ----------
        lam, phi : float
            λ and the accuracy φ of the call.

        Returns
        -------
        int
        """
        return sum(t - 1 for t in epoch_sgd_schedule(self.lipschitz, lam, phi)[1])

    def n_steps(self, lam, phi):
        """Sequential optimizer steps of one call (the batch itself not included).

        Parameters
        ----------
        lam, phi : float
            λ and the accuracy φ of the call.

        Returns
        -------
        int
        """
        lengths = epoch_sgd_schedule(self.lipschitz, lam, phi)[1]
        return sum(t - 1 for t in lengths) + len(lengths)

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

    def n_queries(self, lam, phi):
        r"""Queries of one call, :math:`T\sum_k N_k \le 192L^2/(\lambda\varphi) + TK`
        (Proposition 4).

        Parameters
        ----------
        lam, phi : float
            λ and the accuracy φ of the call.

        Returns
        -------
        int
        """
        _, T, N = ac_sa_schedule(self.lipschitz, lam, phi, self.radius, self.smoothing_radius)
        return T * sum(N)

    def n_steps(self, lam, phi):
        """Sequential optimizer steps of one call, K T (the batch itself not included).

        Parameters
        ----------
        lam, phi : float
            λ and the accuracy φ of the call.

        Returns
        -------
        int
        """
        K, T, _ = ac_sa_schedule(self.lipschitz, lam, phi, self.radius, self.smoothing_radius)
        return K * T

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


def proposition2_levels(lam, radius, radius_bound, kappa, ball_accel_constant=1.0,
                        accuracy_scale=1.0):
    r"""The MLMC levels of Proposition 2: ``(j_max, [phi_0, ..., phi_jmax])``.

    .. math::

        \varphi_j = \frac{\lambda r^2}{C_{ba}\, 2^j \log^2(R\kappa/r)},\qquad
        j = 0, 1, \dots, j_{\max} = \lceil \log_2 K + C_{ba} \rceil,\quad K = (R/r)^{2/3}

    (Proposition 2, item 2, for j >= 1; :math:`j_{\max}` as in the proof of Theorems 1-2; the
    base level :math:`\varphi_0` is the same formula at j = 0, the one consistent with the
    :math:`\log^2` term of that proof's query count). ``accuracy_scale`` multiplies every
    :math:`\varphi_j` (1 = the paper). The logarithm is natural and floored at 1 (it is below 1
    only when :math:`R\kappa/r < e`, outside Proposition 1's range of interest).

    Parameters
    ----------
    lam : float
        λ of the call.
    radius, radius_bound : float
        r and R.
    kappa : float
        κ = L R / ε.
    ball_accel_constant : float, default=1.0
        :math:`C_{ba}`.
    accuracy_scale : float, default=1.0
        Multiplies every level's accuracy.

    Returns
    -------
    tuple
        (j_max, list of j_max + 1 accuracies).
    """
    lam = check_positive(lam, "lam")
    r = check_positive(radius, "radius")
    R = check_positive(radius_bound, "radius_bound")
    kappa = check_positive(kappa, "kappa")
    c_ba = check_positive(ball_accel_constant, "ball_accel_constant")
    scale = check_positive(accuracy_scale, "accuracy_scale")
    K = (R / r) ** (2.0 / 3.0)
    j_max = max(1, math.ceil(math.log2(K) + c_ba))
    ell = max(1.0, math.log(R * kappa / r))
    phi0 = scale * lam * r * r / (c_ba * ell * ell)
    return j_max, [phi0 * 2.0 ** (-j) for j in range(j_max + 1)]


class ReSQueMLMCProximalOracle:
    r"""Proposition 2's stochastic proximal oracle: multilevel Monte Carlo over ball-oracle runs.

    One call at centre :math:`\bar x` and λ draws :math:`J \sim \mathrm{Geom}(1/2)`
    (:math:`P(J = j) = 2^{-j}`, j >= 1) and returns

    .. math::

        \hat x = x_0 + 2^J (x_J - x_{J-1})\, 1\{J \le j_{\max}\},

    :math:`x_j` an independent run of the ball oracle (Algorithm 1 or 2) at the accuracy
    :math:`\varphi_j` of :func:`proposition2_levels`; so for each j >= 1 an iteration queries
    a :math:`(\varphi_j, \lambda)`-ball oracle with probability :math:`2^{-j}` (Proposition 2,
    item 2, counted per iteration; [CH22] Algorithm 2, the same estimator as this paper's
    Algorithm 6 with one copy and ball-oracle levels). The estimate is not projected (that
    would bias it).

    **Guarantees** (exact telescoping; :math:`x^*` the ball-constrained prox point (8)):

    - unbiased for the top level, :math:`E\hat x = E x_{j_{\max}}`, hence by λ-strong
      convexity :math:`\|E\hat x - x^*\| \le \sqrt{2\varphi_{j_{\max}}/\lambda}`;
    - :math:`E\|\hat x - x^*\|^2 \le 2E\|x_0 - x^*\|^2 + 2\sum_j 2^j E\|x_j - x_{j-1}\|^2
      \le (4 + 24 j_{\max})\varphi_0/\lambda`;
    - expected queries :math:`n(\varphi_0) + \sum_{j=1}^{j_{\max}} 2^{-j}(n(\varphi_j) +
      n(\varphi_{j-1}))` with n the ball oracle's exact count; for EpochSGD
      (:math:`n(\varphi) \le 48L^2/(\lambda\varphi)`) this is at most
      :math:`(1 + \tfrac32 j_{\max})\, 48 C_{ba} L^2\log^2(R\kappa/r)/(\lambda^2 r^2)` plus
      rounding, the summand of the proof of Theorems 1-2; AC-SA has 192 for 48 plus
      :math:`TK` per run (Proposition 4). :meth:`guarantees` returns all of these.

    **Depth and work charged.** The runs' query points depend only on :math:`(\bar x, \lambda)`
    and fresh samples, so their batches form ONE round of queries (joined to the iteration's
    ball-oracle round by :func:`parallel_sco` when ``share_rounds``); total queries are the
    sum over the runs; computational depth is the SUM of the runs' sequential steps (the
    charge of the proof of Theorems 1-2; a machine running the three runs side by side would
    need only the largest).

    Randomness: the call's SeedSequence has children 0 (J: one raw 64-bit word of
    ``PCG64DXSM(child 0)``, :math:`J = \mathrm{ctz} + 1`, the level draw of
    :mod:`dpsco_core.mlmc`), 1 (:math:`x_0`), 2 (:math:`x_J`) and 3 (:math:`x_{J-1}`).

    Parameters
    ----------
    ball_oracle : ReSQueEpochSGD or ReSQueACSA
        The ball oracle (its ``radius`` is r, its executor counts the queries).
    radius_bound : float
        R.
    kappa : float
        κ = L R / ε.
    ball_accel_constant : float, default=1.0
        :math:`C_{ba}`.
    accuracy_scale : float, default=1.0
        Multiplies every :math:`\varphi_j` (> 1 is outside the theory).

    Attributes
    ----------
    levels_drawn : list of int
        J of every call (J > j_max: the base level only).
    round_open : bool
        Set by the caller before a call when a batch of the current round was already issued:
        the first batch of the call then joins it. Reset after each call.
    """

    def __init__(self, ball_oracle, radius_bound, kappa, ball_accel_constant=1.0,
                 accuracy_scale=1.0):
        self.ball_oracle = ball_oracle
        self.radius_bound = check_positive(radius_bound, "radius_bound")
        self.kappa = check_positive(kappa, "kappa")
        self.ball_accel_constant = check_positive(ball_accel_constant, "ball_accel_constant")
        self.accuracy_scale = check_positive(accuracy_scale, "accuracy_scale")
        self.levels_drawn = []
        self.round_open = False

    def levels(self, lam):
        """:func:`proposition2_levels` at λ.

        Parameters
        ----------
        lam : float
            λ of the call.

        Returns
        -------
        tuple
            (j_max, accuracies φ_0..φ_jmax).
        """
        return proposition2_levels(lam, self.ball_oracle.radius, self.radius_bound, self.kappa,
                                   self.ball_accel_constant, self.accuracy_scale)

    @staticmethod
    def draw_level(random_state):
        """J ~ Geom(1/2) of one call (child 0 of the call's SeedSequence; class docstring).

        Parameters
        ----------
        random_state : None, int, SeedSequence or Generator
            The call's seed.

        Returns
        -------
        int
        """
        seed = check_random_state(random_state)
        return level_from_raw(BIT_GENERATOR(child_seed_sequences(seed, 1)[0]).random_raw())

    def guarantees(self, lam):
        r"""Proposition 2's numbers at λ (class docstring).

        Parameters
        ----------
        lam : float
            λ of the call.

        Returns
        -------
        dict
            ``j_max``, ``phis``, ``bias_bound`` and ``mse_bound`` (of :math:`\hat x - x^*`, in
            distance units), ``expected_queries`` and ``expected_steps`` (exact, from the
            ball oracle's schedule).
        """
        j_max, phis = self.levels(lam)
        b = self.ball_oracle

        def expect(count):
            return count(lam, phis[0]) + sum(
                2.0 ** (-j) * (count(lam, phis[j]) + count(lam, phis[j - 1]))
                for j in range(1, j_max + 1))

        return {"j_max": j_max, "phis": phis,
                "bias_bound": math.sqrt(2.0 * phis[j_max] / lam),
                "mse_bound": (4.0 + 24.0 * j_max) * phis[0] / lam,
                "expected_queries": expect(b.n_queries), "expected_steps": expect(b.n_steps)}

    def __call__(self, center, lam, delta, sigma, domain, random_state):
        # delta, sigma: BallAccel's (Proposition 1) targets; Proposition 2 sets the levels from
        # (lam, r, R, kappa, C_ba) instead and meets them up to its universal constants.
        seed = check_random_state(random_state)
        s_level, s_base, s_hi, s_lo = child_seed_sequences(seed, 4)
        J = level_from_raw(BIT_GENERATOR(s_level).random_raw())
        j_max, phis = self.levels(lam)
        runs = [(phis[0], s_base)]
        if J <= j_max:
            runs += [(phis[J], s_hi), (phis[J - 1], s_lo)]
        ex, open_, outs = self.ball_oracle.executor, self.round_open, []
        self.round_open = False
        for phi, s in runs:
            issues = self.ball_oracle.n_queries(lam, phi) > 0
            if issues and open_:
                ex.continue_round()        # same centre and λ: queries known in advance
            outs.append(np.asarray(self.ball_oracle(center, lam, phi, domain, s),
                                   dtype=np.float64))
            open_ = open_ or issues
        self.levels_drawn.append(J)
        if J <= j_max:
            return outs[0] + 2.0 ** J * (outs[1] - outs[2])
        return outs[0]


class _IterationOracles:
    r"""The ball and proximal oracles of one BallAccel iteration, sharing one query round.

    Both oracles' query points depend only on :math:`(y_k, \lambda_{k+1})` and fresh samples,
    known before either batch is answered, so a parallel machine issues the two batches
    together: the proximal oracle's batch joins the ball oracle's round (one unit of query
    depth per iteration, as the iteration counts of Propositions 1-2 assume). After each
    iteration the executor's counters are appended to ``trace``.
    """

    def __init__(self, ball_oracle, share_round=True, prox=None):
        self.ball = ball_oracle
        self.prox = BallProximalOracle(ball_oracle) if prox is None else prox
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
        if isinstance(self.prox, ReSQueMLMCProximalOracle):
            self.prox.round_open = self.share_round and self._issued
        elif self.share_round and self._issued:
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
    prox_levels : ndarray of shape (n_iter,) or None
        ``prox_oracle="mlmc"``: the level J drawn at each iteration (J > j_max: base only).
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
    prox_levels: np.ndarray | None = field(repr=False, default=None)


#: The range of lipschitz, radius_bound and epsilon that parallel_sco's schedules handle.
_MIN_SCALE, _MAX_SCALE = 1e-100, 1e100


_SCHEDULE_FILES = (__file__, _ball_acceleration_module.__file__)


@contextlib.contextmanager
def _schedule_range(L, R, eps, lambda_factor, c_ba):
    """Turn a float over- or underflow of the schedules' own arithmetic (lambda^2 r^2, r^2,
    log2(lambda r^2/phi): "math domain error", ...) into a ValueError naming the arguments:
    each scale within [1e-100, 1e100] does not keep their products in range (lipschitz=1e100
    with epsilon=1 overflowed lambda^2 with an OverflowError, lambda_factor=1e-300 divided by
    zero; session 20 hypothesis seed 681). An error raised in grad_batch or a callback passes
    unchanged."""
    try:
        yield
    except (OverflowError, ZeroDivisionError, ValueError) as exc:
        if (isinstance(exc, ValueError) and str(exc) != "math domain error"
                or traceback.extract_tb(exc.__traceback__)[-1].filename not in _SCHEDULE_FILES):
            raise
        raise _range_error(L, R, eps, lambda_factor, c_ba,
                           f"{type(exc).__name__}: {exc}") from exc


def _range_error(L, R, eps, lambda_factor, c_ba, why):
    return ValueError(f"lipschitz = {L!r}, radius_bound = {R!r}, epsilon = {eps!r}, "
                      f"lambda_factor = {lambda_factor!r} and ball_accel_constant = {c_ba!r} "
                      f"put parallel_sco's schedules beyond the float range ({why}); bring "
                      "lipschitz * radius_bound / epsilon and lambda_factor nearer to 1.")


def parallel_sco(grad_batch: Callable[..., Any], x0: ArrayLike, *, lipschitz: float,
                 radius_bound: float, epsilon: float, inner: str = "ac_sa",
                 smoothing: str = "dimension", line_search: str = "constant",
                 executor: Any = None, max_iter: int = 200, accuracy_scale: float = 1.0,
                 max_queries: int = 10 ** 7, share_rounds: bool = True,
                 callback: Callable[[int, np.ndarray], bool] | None = None,
                 lambda_factor: float = 1.0, ball_accel_constant: float = 1.0,
                 prox_oracle: str = "ball", prox_accuracy_scale: float = 1.0,
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
        C_ba of Propositions 1-2, widening the bisection's λ range and setting the MLMC levels
        of ``prox_oracle="mlmc"`` (unspecified in the paper).
    prox_oracle : {"ball", "mlmc"}, default="ball"
        The stochastic proximal oracle (module docstring): ``"ball"`` one ball-oracle run at
        :math:`\min(\delta, \sigma)^2/(2\lambda)` (the stand-in; :math:`O(\kappa^2)`
        queries per iteration at ``accuracy_scale=1``), ``"mlmc"`` Proposition 2's multilevel
        estimator (:class:`ReSQueMLMCProximalOracle`; levels :math:`\varphi_j = \lambda r^2/
        (C_{ba}2^j\log^2(R\kappa/r))`, :math:`j_{\max} = \lceil\log_2 K + C_{ba}\rceil`).
        ``"ball"`` stays the default: in ``reproduce resque-parallel`` (part 5, README) the
        stand-in at ``accuracy_scale=3000`` reaches ε with 76 to 223 times fewer queries and
        6.7 to 7.6 times less computational depth than Proposition 2 at its own accuracies, which
        takes about 20% fewer rounds (Nemirovski, d = 16, ε = 0.2 to 0.05).
    prox_accuracy_scale : float, default=1.0
        ``prox_oracle="mlmc"`` only: multiplies every level accuracy :math:`\varphi_j`
        (1 = the paper; > 1 is outside the theory). ``accuracy_scale`` does not apply to
        them: scaled to the ball oracle's accuracy floor, all levels would coincide and the
        :math:`2^J` weights would only amplify noise.
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
    # The schedules square and invert these scales (L^2, R^2, lambda phi): beyond 1e100 they
    # overflowed or underflowed inside (OverflowError, ZeroDivisionError, math domain error).
    for name, value in (("lipschitz", L), ("radius_bound", R), ("epsilon", eps),
                        ("lambda_factor", check_positive(lambda_factor, "lambda_factor"))):
        if not _MIN_SCALE <= value <= _MAX_SCALE:
            raise ValueError(f"{name} = {value!r} is outside [{_MIN_SCALE:g}, "
                             f"{_MAX_SCALE:g}]: parallel_sco's schedules would over- or "
                             "underflow; rescale the problem (lipschitz, radius_bound and "
                             "epsilon together).")
    cls = ({"ac_sa": ReSQueACSA, "epoch_sgd": ReSQueEpochSGD}.get(inner)
           if isinstance(inner, str) else None)
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
        with _schedule_range(L, R, eps, lambda_factor, c_ba):
            K = (R / rho) ** (2.0 / 3.0)
            kappa = max(L * R / eps, math.e)
            lam_star = eps * K ** 2 * math.log(kappa) ** 2 / R ** 2
            lam_lo, lam_hi = min(lam_star / c_ba, lam_const), max(c_ba * L / eps, lam_const)
        if not 0.0 < lam_lo <= lam_hi < math.inf:
            raise _range_error(L, R, eps, lambda_factor, c_ba,
                               f"lambda range [{lam_lo!r}, {lam_hi!r}]")
        next_lambda = LambdaBisection(ball, rho, lam_lo, lam_hi, max_bisections=8)
    else:
        raise ValueError(f"line_search must be 'constant' or 'bisection'; got {line_search!r}.")
    prox: BallProximalOracle | ReSQueMLMCProximalOracle
    if prox_oracle == "ball":
        prox = BallProximalOracle(ball)
    elif prox_oracle == "mlmc":
        # kappa = L R / eps (Proposition 1); it only enters log(R kappa / r)
        prox = ReSQueMLMCProximalOracle(ball, R, L * R / eps, c_ba,
                                        check_positive(prox_accuracy_scale,
                                                       "prox_accuracy_scale"))
    else:
        raise ValueError(f"prox_oracle must be 'ball' or 'mlmc'; got {prox_oracle!r}.")
    oracles = _IterationOracles(ball, share_rounds, prox)
    with _schedule_range(L, R, eps, lambda_factor, c_ba):
        res = ball_acceleration(oracles.ball_oracle, oracles.prox_oracle, next_lambda, x,
                                epsilon=eps, radius_bound=R, lipschitz=L, movement=rho,
                                max_iter=max_iter, accuracy_scale=accuracy_scale,
                                callback=callback, random_state=check_random_state(random_state))
    st = executor.stats
    return ParallelSCOResult(res.x, res, rho, rho, st.query_depth, st.total_queries,
                             st.computational_depth, bias,
                             np.array(oracles.trace, dtype=np.int64).reshape(-1, 3),
                             np.array(prox.levels_drawn, dtype=np.int64)
                             if isinstance(prox, ReSQueMLMCProximalOracle) else None)
