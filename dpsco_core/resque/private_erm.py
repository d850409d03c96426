r"""Private ERM in a ball with ReSQue (Carmon et al. 2023, Section IV: Algorithms 3 to 7).

All the algorithms solve (parts of) Problem 2 on a private dataset :math:`\mathcal D` of n
records whose losses are convex and L-Lipschitz for every record (enforced at the data level:
:mod:`dpsco_core.resque.private_data`), on the Gaussian smoothing
:math:`\hat f^{erm}_\rho = \frac1n\sum_i f^i * \gamma_\rho` restricted to a ball
:math:`B_{\bar x}(r)`, with :math:`r \ll \rho`.

- :func:`resque_erm_ball`: **Algorithm 3** (λ = 0) and **Algorithm 4** (λ > 0, with the start
  x_0, the distance bound r' and, for Lemma 9, a regularization centre x' outside the ball).
  :math:`\hat T = 2^{\lfloor\log_2 T\rfloor}` (so the :math:`\hat T - 1` index draws never exceed
  T; note 000, 5.2), :math:`k = \log_2\hat T` phases of :math:`T_i = 2^{-i}\hat T` projected SGD
  steps with step :math:`\eta_i = 4^{-i}\eta`, :math:`\eta = (r'/L)\min(1/\sqrt{\hat T},
  \beta/\sqrt d)`, on the ReSQue estimate :math:`w(y - \bar x; \xi)\,\partial f^{z}(\bar x +
  \xi)` with z drawn **with replacement** (uniform, unbiased: numpy's bounded-integer sampler,
  Lemire's multiply-shift rejection method) and :math:`\xi \sim N(0, \rho^2 I)`; the phase
  average is released with Gaussian noise :math:`\sigma_i = L\eta_i/\beta` (the only privacy
  noise). All draws are independent of the iterates, so the :math:`\hat T - 1` subgradients are
  ONE batch (for GLMs the compiled ReSQue GLM query kernel,
  :class:`~dpsco_core.resque.estimator.GLMReSQueBatch`). The output is projected onto
  :math:`B_{\bar x}(r)` (post-processing).
- :func:`resque_erm_strongly_convex`: **Algorithm 5** (restarts of Algorithm 4 with
  :math:`\beta_{i-1} = 2^{(k-i+1)/2}\beta`, :math:`T_{i-1} = 2^{i-1-k}T`, :math:`r_{i-1} =
  \min(2r, \sqrt{2D_{i-1}/\lambda})`, eq. (28)); returns :math:`x_k` (the paper prints
  :math:`x_{k+1}`, an off-by-one: note 000, 11.6).
- :func:`resque_prox_mlmc`: **Algorithm 6** (the bias-reduced stochastic proximal estimator by
  multilevel Monte Carlo, the telescoping of :mod:`dpsco_core.mlmc`).
- :func:`aggregate` (**Lemma 11**, [KLL+22] Claim 1) and :func:`resque_line_search`
  (**Algorithm 7**).

Privacy (replace-one neighbours, datasets of the same size n differing in one record): one call
of Algorithm 3/4 is :math:`(\alpha, \alpha\tau, \delta)`-approximate-RDP with the constants of
:mod:`dpsco_core.resque._private_accounting` (Lemmas 5 and 7, Proposition 7); Algorithms 5-7
compose their calls (Lemma 3). Each result carries its :class:`~._private_accounting.Charge`.
``mode="certified"`` enforces the proofs' conditions (ρ/r, T/n, β) and raises when they fail;
``mode="heuristic"`` runs anyway and the charge says ``certified=False``: **not a DP
guarantee**. The noise is not calibrated to a worst-case sensitivity (there is none: a single
step can move the iterate by :math:`\eta L w` with an unbounded weight w); the guarantee rests on
the high-probability drift bound of Lemma 5, which needs convexity and the L-Lipschitz bound of
every record.

Randomness: the call's SeedSequence has children 0 (queries: indices, then ζ, as in
:class:`GLMReSQueBatch`) and 1 (noise; phase i uses its child i). The draws do not depend on
the data, so two runs with the same seed on neighbouring datasets use the same indices, ζ and
noise: if the differing index is never drawn they are bitwise identical.

References
----------
.. [1] Y. Carmon et al., "ReSQueing parallel and private stochastic convex optimization",
   FOCS 2023, Section IV, Algorithms 3-7, Propositions 6-10, Lemmas 3-11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_scalar, check_vector
from ._private_accounting import MODES, Charge, resque_call_charge

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike

__all__ = ["ResqueERMResult", "resque_erm_ball", "resque_erm_strongly_convex",
           "resque_prox_mlmc", "resque_line_search", "aggregate", "algorithm3_schedule",
           "algorithm5_schedule", "C_CVX_CERTIFIED"]

#: C_cvx of Proposition 6 from the proof of Lemma 4 (eq. (13): 10.5 L r/√T + 16 L r √d/(βT)).
C_CVX_CERTIFIED = 16.0


@dataclass(frozen=True)
class ResqueERMResult:
    """Output of a private ReSQue ERM call.

    Attributes
    ----------
    x : ndarray of shape (d,)
        The private output (projected onto the ball).
    charge : Charge
        Its approximate-RDP charge (τ, α_max, δ, certified).
    n_gradients : int
        Per-sample subgradients evaluated.
    query_depth : int
        Sequential batches of subgradient queries.
    phases : ndarray
        Per-phase released points (local coordinates x_i - x̄), for diagnostics of the run.
    """

    x: np.ndarray
    charge: Charge
    n_gradients: int
    query_depth: int
    phases: np.ndarray = field(repr=False, default_factory=lambda: np.empty((0, 0)))


def _check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
    return mode


def _check_call_delta(delta):
    return check_scalar(delta, "delta", low=0.0, high=1.0 / 6.0)


def algorithm3_schedule(n_steps: int, radius: float, lipschitz: float, beta: float,
                        n_features: int) -> dict[str, Any]:
    r"""Algorithm 3's schedule: :math:`\hat T = 2^{\lfloor\log_2 T\rfloor}`, k phases,
    :math:`T_i = 2^{-i}\hat T`, :math:`\eta_i = 4^{-i}\eta`, :math:`\sigma_i = L\eta_i/\beta`.

    Parameters
    ----------
    n_steps : int
        T ≥ 2.
    radius : float
        r (or r' for Algorithm 4).
    lipschitz : float
        L.
    beta : float
        β.
    n_features : int
        d.

    Returns
    -------
    dict
        ``T_hat``, ``k``, ``eta``, ``steps`` (T_i), ``etas`` (η_i), ``sigmas`` (σ_i),
        ``n_gradients`` (:math:`\hat T - 1`).
    """
    T = check_int(n_steps, "n_steps", low=2)
    k = T.bit_length() - 1
    T_hat = 1 << k
    eta = (radius / lipschitz) * min(1.0 / math.sqrt(T_hat), beta / math.sqrt(n_features))
    steps = [T_hat >> i for i in range(1, k + 1)]
    etas = [eta * 4.0 ** (-i) for i in range(1, k + 1)]
    return {"T_hat": T_hat, "k": k, "eta": eta, "steps": steps, "etas": etas,
            "sigmas": [lipschitz * e / beta for e in etas], "n_gradients": T_hat - 1}


def _draw_queries(data, center, rho, m, seed):
    """(idx, zeta, G): m draws (index with replacement, ζ) and their subgradients, one batch.

    The same (idx, ζ) for any data of the same n and d (children 0 and 1 of ``seed``, as in
    GLMReSQueBatch); GLM data go through the compiled query kernel."""
    from .estimator import GLMReSQueBatch, draw_resque_samples
    from .private_data import LipschitzGLM

    if isinstance(data, LipschitzGLM):
        batch = GLMReSQueBatch(data.A, data.b, data.loss, center, rho, m, store_samples=True,
                               random_state=seed, n_threads=1)
        G = batch.coefs[:, None] * data.A[batch.idx]
        return batch.idx, batch.zeta, G
    s_idx, s_zeta = child_seed_sequences(seed, 2)
    idx = np.random.Generator(np.random.PCG64DXSM(s_idx)).integers(
        0, data.n_samples, size=m).astype(np.int64)
    zeta = draw_resque_samples(m, center.shape[0], random_state=s_zeta, n_threads=1)
    G = np.asarray(data.subgradients(idx, center + rho * zeta), dtype=np.float64)
    return idx, zeta, G


def _phase(v, zeta, G, eta, lam, c_loc, radius, rho):
    """One phase of Algorithm 3/4 line 8 in local coordinates v = y - x̄; returns (v, ȳ).

    Composite step :math:`\\Pi_{B(r)}((v + \\eta\\lambda c - \\eta w G)/(1 + \\eta\\lambda))`
    (c = x' - x̄, 0 for Algorithm 3/4 without Lemma 9); w in log space."""
    inv_rho = 1.0 / rho
    shrink = 1.0 / (1.0 + eta * lam)
    pull = eta * lam * c_loc
    acc = np.zeros_like(v)
    for j in range(zeta.shape[0]):
        vt = v * inv_rho
        lw = float(vt @ zeta[j]) - 0.5 * float(vt @ vt)
        w = math.exp(min(lw, 700.0))
        u = (v + pull - (eta * w) * G[j]) * shrink
        nu = math.sqrt(float(u @ u))
        if nu > radius:
            u *= radius / nu
        v = u
        acc += v
    return v, acc / zeta.shape[0]


def _gaussian_noise(x, sigma, seed):
    from .._kernels import _noise
    from ..mechanisms import _noisy_array

    return _noisy_array(x, "phase average", sigma, _noise.GAUSSIAN, seed, 1)


def _check_data(data):
    for attr in ("subgradients", "n_samples", "n_features", "lipschitz"):
        if not hasattr(data, attr):
            raise TypeError(f"data must provide {attr} (a LipschitzGLM, GeometricMedianData "
                            f"or an object with subgradients(idx, Z), n_samples, n_features "
                            f"and lipschitz); got {type(data).__name__}.")
    return data


def resque_erm_ball(data: Any, center: ArrayLike, *, radius: float, smoothing_radius: float,
                    beta: float, n_steps: int, delta: float, lam: float = 0.0,
                    start: ArrayLike | None = None, distance_bound: float | None = None,
                    reg_center: ArrayLike | None = None, mode: str = "certified",
                    random_state: RandomStateLike = None) -> ResqueERMResult:
    r"""Algorithm 3 (λ = 0) / Algorithm 4 (λ > 0): private projected ReSQue SGD in
    :math:`B_{\bar x}(r)` on :math:`\hat f^{erm}_\rho + \frac\lambda2\|\cdot - x'\|^2`.

    Utility (Proposition 6, Corollary 2): :math:`E[F(x)] - F(x^*) \le C_{cvx} L r'
    (\sqrt d/(\beta T) + 1/\sqrt T)`, C_cvx = 16 from the proof. Privacy: one
    :math:`(\alpha, \alpha\tau, \delta)`-approximate-RDP call under replace-one neighbours,
    :math:`\tau = 78{,}000\,\beta^2\log^2(2/\delta)s^2`, :math:`s = 1 - (1 - 1/n)^T`, for
    :math:`\alpha <
    1/(2000\beta^2\log^2(2/\delta))`, certified when :math:`T/n \le 1/60`,
    :math:`\beta^2\log^2(2/\delta) \le 1/18000` and ρ/r is at least
    :func:`~dpsco_core.resque._private_accounting.certified_radius_ratio` (doubled for λ > 0).

    Parameters
    ----------
    data : LipschitzGLM, GeometricMedianData or compatible
        The private dataset (L = ``data.lipschitz``).
    center : array-like of shape (d,)
        :math:`\bar x` (public).
    radius : float
        r, the ball radius.
    smoothing_radius : float
        ρ.
    beta : float
        β > 0, the privacy parameter (smaller is more private).
    n_steps : int
        T ≥ 2 (the run uses :math:`\hat T - 1 \le T` draws).
    delta : float
        δ of the call, in (0, 1/6).
    lam : float, default=0.0
        λ ≥ 0 (Algorithm 4 when > 0).
    start : array-like of shape (d,), optional
        :math:`x_0` (default :math:`\Pi_{B_{\bar x}(r)}(x')`, or :math:`\bar x`).
    distance_bound : float, optional
        r' ∈ (0, 2r] with :math:`E\|x_0 - x^*\|^2 \le r'^2` (default r).
    reg_center : array-like of shape (d,), optional
        x' (Lemma 9; default :math:`\bar x`).
    mode : {"certified", "heuristic"}
        See the module docstring.
    random_state : None, int, SeedSequence or Generator
        None (OS entropy) for a real release.

    Returns
    -------
    ResqueERMResult
    """
    data = _check_data(data)
    mode = _check_mode(mode)
    xbar = check_vector(center, "center")
    d = xbar.shape[0]
    if d != data.n_features:
        raise ValueError(f"center must have length {data.n_features}; got {d}.")
    r = check_positive(radius, "radius")
    rho = check_positive(smoothing_radius, "smoothing_radius")
    beta = check_positive(beta, "beta")
    delta = _check_call_delta(delta)
    lam = check_scalar(lam, "lam", low=0.0, low_open=False)
    r_prime = r if distance_bound is None else check_scalar(distance_bound, "distance_bound",
                                                            low=0.0, high=2.0 * r,
                                                            high_open=False)
    L = float(data.lipschitz)
    sched = algorithm3_schedule(n_steps, r_prime, L, beta, d)
    c_loc = (np.zeros(d) if reg_center is None
             else check_vector(reg_center, "reg_center") - xbar)
    if c_loc.shape[0] != d:
        raise ValueError(f"reg_center must have length {d}; got {c_loc.shape[0]}.")
    if start is None:
        nrm = float(np.linalg.norm(c_loc))
        v = c_loc * min(1.0, r / nrm) if nrm > 0 else np.zeros(d)
    else:
        v = check_vector(start, "start") - xbar
        if v.shape[0] != d:
            raise ValueError(f"start must have length {d}; got {v.shape[0]}.")
    charge = resque_call_charge(beta, int(n_steps), data.n_samples, delta,
                                radius_ratio=rho / r,
                                regularized=lam > 0 or distance_bound is not None, mode=mode)
    seed = check_random_state(random_state)
    s_query, s_noise = child_seed_sequences(seed, 2)
    m = sched["n_gradients"]
    _, zeta, G = _draw_queries(data, xbar, rho, m, s_query)
    noise_seeds = child_seed_sequences(s_noise, sched["k"])
    offset, released = 0, []
    for i, (Ti, eta_i, sigma_i) in enumerate(zip(sched["steps"], sched["etas"],
                                                  sched["sigmas"])):
        _, ybar = _phase(v, zeta[offset:offset + Ti], G[offset:offset + Ti], eta_i, lam,
                         c_loc, r, rho)
        offset += Ti
        v = _gaussian_noise(ybar, sigma_i, noise_seeds[i])
        released.append(v)
    nrm = float(np.linalg.norm(v))
    x = xbar + (v * (r / nrm) if nrm > r else v)
    return ResqueERMResult(x, charge, m, 1, np.array(released))


def algorithm5_schedule(n_steps: int, beta: float, lipschitz: float, lam: float,
                        radius: float, n_features: int,
                        c_cvx: float = C_CVX_CERTIFIED) -> list[tuple[int, float, float]]:
    r"""Algorithm 5's restarts, eq. (28): for i = 1..k, :math:`k = \lceil\log_2\log_2 T\rceil`,
    :math:`(T_{i-1}, \beta_{i-1}, r_{i-1})` with :math:`T_{i-1} = 2^{i-1-k}T` (rounded down to a
    power of 2, at least 2), :math:`\beta_{i-1} = 2^{(k-i+1)/2}\beta` and :math:`r_{i-1} =
    \min(2r, \sqrt{2D_{i-1}/\lambda})`, :math:`D_0 = 2L^2/\lambda`, :math:`D_{i+1} =
    \sqrt{D_iE_i}`, :math:`E_i = (2C_{cvx}^2L^2/\lambda)(\sqrt d/(\beta_iT_i) +
    1/\sqrt{T_i})^2`. :math:`\sum T_{i-1} \le T` and :math:`\beta_{i-1}^2T_{i-1}^2` doubles
    with i (before rounding).

    Parameters
    ----------
    n_steps : int
        T ≥ 4.
    beta, lipschitz, lam, radius : float
        β, L, λ > 0, r.
    n_features : int
        d.
    c_cvx : float, default=16
        C_cvx (Proposition 6; the value enters r_{i-1}).

    Returns
    -------
    list of (int, float, float)
    """
    T = check_int(n_steps, "n_steps", low=4)
    k = max(1, math.ceil(math.log2(math.log2(T))))
    D = 2.0 * lipschitz ** 2 / lam
    out = []
    for i in range(1, k + 1):
        T_exact = 2.0 ** (i - 1 - k) * T
        beta_i = 2.0 ** ((k - i + 1) / 2.0) * beta
        E = (2.0 * c_cvx ** 2 * lipschitz ** 2 / lam) * (
            math.sqrt(n_features) / (beta_i * T_exact) + 1.0 / math.sqrt(T_exact)) ** 2
        r_i = min(2.0 * radius, math.sqrt(2.0 * D / lam))
        T_i = max(2, 1 << (max(int(T_exact), 2).bit_length() - 1))
        out.append((T_i, beta_i, r_i))
        D = math.sqrt(D * E)
    return out


def resque_erm_strongly_convex(data: Any, center: ArrayLike, *, radius: float,
                               smoothing_radius: float, beta: float, lam: float,
                               n_steps: int, delta: float, reg_center: ArrayLike | None = None,
                               c_cvx: float = C_CVX_CERTIFIED, mode: str = "certified",
                               random_state: RandomStateLike = None) -> ResqueERMResult:
    r"""Algorithm 5: restarted Algorithm 4 for :math:`\hat f^{erm}_\rho +
    \frac\lambda2\|\cdot - x'\|^2` on :math:`B_{\bar x}(r)`.

    Utility (Proposition 8): :math:`E F^\lambda(x) - F^\lambda(x^*) \le (C_{sc}L^2/\lambda)
    (d/(\beta^2T^2) + 1/T)`, :math:`C_{sc} = 32C_{cvx}^2`. Privacy: the k calls of Algorithm 4
    compose (Lemma 3), each with slack δ/k; the returned charge is their sum (replace-one).

    Parameters
    ----------
    data : LipschitzGLM, GeometricMedianData or compatible
    center : array-like of shape (d,)
        :math:`\bar x`.
    radius, smoothing_radius, beta, lam : float
        r, ρ, β, λ > 0.
    n_steps : int
        T ≥ 4.
    delta : float
        δ of the whole call, in (0, 1/6).
    reg_center : array-like of shape (d,), optional
        x' (Lemma 9).
    c_cvx : float, default=16
    mode : {"certified", "heuristic"}
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ResqueERMResult
        ``x`` is :math:`x_k`, the last restart's output (the paper's :math:`x_{k+1}` does not
        exist).
    """
    lam = check_positive(lam, "lam")
    delta = _check_call_delta(delta)
    sched = algorithm5_schedule(n_steps, check_positive(beta, "beta"), float(data.lipschitz),
                                lam, check_positive(radius, "radius"), data.n_features,
                                check_positive(c_cvx, "c_cvx"))
    xbar = check_vector(center, "center")
    seeds = child_seed_sequences(check_random_state(random_state), len(sched))
    x = None
    charge = Charge.zero()
    n_grad = 0
    for (T_i, beta_i, r_i), s in zip(sched, seeds):
        res = resque_erm_ball(data, xbar, radius=radius, smoothing_radius=smoothing_radius,
                              beta=beta_i, n_steps=T_i, delta=delta / len(sched), lam=lam,
                              start=x, distance_bound=r_i, reg_center=reg_center, mode=mode,
                              random_state=s)
        x, charge, n_grad = res.x, charge + res.charge, n_grad + res.n_gradients
    assert x is not None
    return ResqueERMResult(x, charge, n_grad, len(sched))


def aggregate(points: ArrayLike, accuracy: float) -> np.ndarray:
    r"""Aggregate (Lemma 11, [KLL+22] Claim 1): if at least 0.51k of the k points lie within
    Δ/3 of some y, the output lies within Δ of y.

    Returns the first point with at least 0.51k points (itself included) within 2Δ/3; such a
    point shares a neighbour with the good cluster, so it is within 2Δ/3 + Δ/3 of y. Falls back
    to the point with the most neighbours when none qualifies (the guarantee's premise fails).
    Post-processing: no privacy cost. O(k²d).

    Parameters
    ----------
    points : array-like of shape (k, d)
    accuracy : float
        Δ.

    Returns
    -------
    ndarray of shape (d,)
    """
    P = np.asarray(points, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] == 0:
        raise ValueError(f"points must be a non-empty (k, d) array; got shape {P.shape}.")
    delta = check_positive(accuracy, "accuracy")
    # direct differences (no Gram-matrix cancellation near the threshold)
    dist = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(axis=-1))
    counts = (dist <= 2.0 * delta / 3.0).sum(axis=1)
    need = 0.51 * P.shape[0]
    ok = np.flatnonzero(counts >= need)
    return P[ok[0] if ok.size else int(np.argmax(counts))].copy()


def resque_line_search(data: Any, center: ArrayLike, *, radius: float,
                       smoothing_radius: float, beta: float, lam: float, n_steps: int,
                       delta: float, failure_probability: float,
                       reg_center: ArrayLike | None = None, c_sc: float | None = None,
                       mode: str = "certified",
                       random_state: RandomStateLike = None) -> ResqueERMResult:
    r"""Algorithm 7: :math:`k = \lceil 20\log(1/\zeta)\rceil` independent runs of Algorithm 5
    combined by :func:`aggregate` with :math:`\Delta = 9\sqrt{2C_{sc}}(L/\lambda)
    (d/(\beta^2T^2) + 1/T)^{1/2}`: with probability ≥ 1 - ζ the output is within
    :math:`(C_{ls}L/\lambda)(\sqrt d/(\beta T) + 1/\sqrt T)` of :math:`x^*_{\bar x,\lambda}`
    (Proposition 10). Privacy: k compositions of Algorithm 5 (each with slack δ/k).

    Parameters
    ----------
    data, center, radius, smoothing_radius, beta, lam, n_steps
        As :func:`resque_erm_strongly_convex`.
    delta : float
        δ of the whole call, in (0, 1/6).
    failure_probability : float
        ζ ∈ (0, 1).
    reg_center : array-like of shape (d,), optional
    c_sc : float, optional
        C_sc (default 32 · 16², the proof's value).
    mode : {"certified", "heuristic"}
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ResqueERMResult
    """
    zeta = check_scalar(failure_probability, "failure_probability", low=0.0, high=1.0)
    delta = _check_call_delta(delta)
    k = math.ceil(20.0 * math.log(1.0 / zeta))
    c_sc = 32.0 * C_CVX_CERTIFIED ** 2 if c_sc is None else check_positive(c_sc, "c_sc")
    lam = check_positive(lam, "lam")
    L, d, T = float(data.lipschitz), data.n_features, int(n_steps)
    acc = 9.0 * math.sqrt(2.0 * c_sc) * (L / lam) * math.sqrt(d / (beta * T) ** 2 + 1.0 / T)
    seeds = child_seed_sequences(check_random_state(random_state), k)
    runs = [resque_erm_strongly_convex(data, center, radius=radius,
                                       smoothing_radius=smoothing_radius, beta=beta, lam=lam,
                                       n_steps=n_steps, delta=delta / k,
                                       reg_center=reg_center, mode=mode, random_state=s)
            for s in seeds]
    charge = Charge.zero()
    for res in runs:
        charge = charge + res.charge
    x = aggregate(np.array([res.x for res in runs]), acc)
    return ResqueERMResult(x, charge, sum(res.n_gradients for res in runs),
                           max(res.query_depth for res in runs))


def _mlmc_level_caps(j_max):
    """Caps on #{J = j}: twice the expected count j_max 2^{-j}, at least 1."""
    return [max(1, math.ceil(2.0 * j_max * 2.0 ** (-j))) for j in range(1, j_max + 1)]


def resque_prox_mlmc(data: Any, center: ArrayLike, *, radius: float, smoothing_radius: float,
                     beta: float, lam: float, n_steps: int, delta: float,
                     c_priv: float = 60.0, reg_center: ArrayLike | None = None,
                     mode: str = "certified",
                     random_state: RandomStateLike = None) -> ResqueERMResult:
    r"""Algorithm 6: a low-bias estimate of :math:`x^*_{\bar x,\lambda}` by multilevel Monte
    Carlo over Algorithm 5 runs: :math:`j_{\max} = \lfloor\log_2(\lfloor n/C_{priv}\rfloor/T)
    \rfloor` independent copies :math:`\hat x_k = x_0 + 2^J(x_J - x_{J-1})` (J ~ Geom(1/2),
    :math:`x_j` = Algorithm 5 with :math:`(2^{-j/2}\beta, 2^jT)`; :math:`\hat x_k = x_0` if
    :math:`J > j_{\max}`), averaged. :math:`E\hat x_k = E x_{j_{\max}}` (telescoping).

    **Proposition 9 (checked against the proof; note 000, 11.7).** The proof bounds the bias by
    applying Proposition 8 to :math:`x_{j_{\max}}` as if it ran with β and :math:`n/C_{priv}`
    steps, but it runs with :math:`\beta_{j_{\max}} = 2^{-j_{\max}/2}\beta`, so
    :math:`\beta_{j_{\max}}T_{j_{\max}} = 2^{j_{\max}/2}\beta T \approx \beta\sqrt{nT/C_{priv}}`
    and Proposition 8 gives :math:`\|E\hat x - x^*\| \le \sqrt{2C_{sc}C_{priv}}(L/\lambda)
    (\sqrt d/(\beta\sqrt{nT}) + 1/\sqrt n)`: the privacy term is larger than the stated
    :math:`\sqrt d/(\beta n)` by :math:`\sqrt{n/T}`. The stated bias bound is not supported by
    the proof; this implementation assumes only the safe bound above (nothing here depends on
    the bias constant; Theorem 3's callers choose T with it).

    Privacy (Lemma 10): a copy with level J costs the calls it makes (τ of Algorithm 5 at
    :math:`(2^{-j/2}\beta, 2^jT)` is :math:`2^j` times the base one). The J's are data-independent;
    to make the charge deterministic they are drawn together and redrawn until
    :math:`\#\{J = j\} \le \lceil 2j_{\max}2^{-j}\rceil` for every j (note 000, 6.3: a public
    event, a small change of the telescoping weights' law, so :math:`E\hat x` is no longer
    exactly :math:`E x_{j_{\max}}`), and the charge is the worst case over every draw allowed
    by the caps (filled from the top level down).

    Parameters
    ----------
    data, center, radius, smoothing_radius, beta, lam, n_steps, reg_center, mode
        As :func:`resque_erm_strongly_convex`; requires :math:`T \le n/(2C_{priv})`.
    delta : float
        δ of the whole call, in (0, 1/6), split evenly over the worst-case number of calls.
    c_priv : float, default=60
        C_priv of :math:`T_{\max} = \lfloor n/C_{priv}\rfloor` (60: Lemma 7's T/n ≤ 1/60).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    ResqueERMResult
    """
    delta = _check_call_delta(delta)
    T = check_int(n_steps, "n_steps", low=4)
    c_priv = check_positive(c_priv, "c_priv")
    t_max = math.floor(data.n_samples / c_priv)
    if T > t_max // 2:
        raise ValueError(f"n_steps must be <= floor(n / c_priv) / 2 = {t_max // 2} "
                         f"(Algorithm 6 needs j_max >= 1); got {T}.")
    j_max = int(math.floor(math.log2(t_max / T)))
    caps = _mlmc_level_caps(j_max)
    seed = check_random_state(random_state)
    s_geom, s_runs = child_seed_sequences(seed, 2)
    rng = np.random.Generator(np.random.PCG64DXSM(s_geom))
    while True:
        J = rng.geometric(0.5, size=j_max)
        counts = [int(np.sum(J == j)) for j in range(1, j_max + 1)]
        if all(c <= cap for c, cap in zip(counts, caps)):
            break
    # worst case allowed by the caps: levels filled from the top
    worst_levels, left = [], j_max
    for j in range(j_max, 0, -1):
        take = min(caps[j - 1], left)
        worst_levels += [j] * take
        left -= take
    n_calls = j_max + 2 * len(worst_levels)
    d_call = delta / n_calls

    def run(b, t, s):
        return resque_erm_strongly_convex(data, center, radius=radius,
                                          smoothing_radius=smoothing_radius, beta=b, lam=lam,
                                          n_steps=t, delta=d_call, reg_center=reg_center,
                                          mode=mode, random_state=s)

    # the deterministic worst-case charge (every call's τ is computed without running it)
    def charge_of(b, t):
        total = Charge.zero()
        for T_i, beta_i, _ in algorithm5_schedule(t, b, float(data.lipschitz), lam, radius,
                                                  data.n_features):
            k = len(algorithm5_schedule(t, b, float(data.lipschitz), lam, radius,
                                        data.n_features))
            total = total + resque_call_charge(beta_i, T_i, data.n_samples, d_call / k,
                                               radius_ratio=smoothing_radius / radius,
                                               regularized=True, mode=mode)
        return total

    charge = charge_of(beta, T).times(j_max)
    for j in worst_levels:
        charge = charge + charge_of(2.0 ** (-j / 2.0) * beta, 2 ** j * T) + charge_of(
            2.0 ** (-(j - 1) / 2.0) * beta, 2 ** (j - 1) * T)
    seeds = child_seed_sequences(s_runs, 3 * j_max)
    est, n_grad = [], 0
    for c in range(j_max):
        base = run(beta, T, seeds[3 * c])
        xk, n_grad = base.x, n_grad + base.n_gradients
        j = int(J[c])
        if j <= j_max:
            hi = run(2.0 ** (-j / 2.0) * beta, 2 ** j * T, seeds[3 * c + 1])
            lo = run(2.0 ** (-(j - 1) / 2.0) * beta, 2 ** (j - 1) * T, seeds[3 * c + 2])
            xk = base.x + 2.0 ** j * (hi.x - lo.x)
            n_grad += hi.n_gradients + lo.n_gradients
        est.append(xk)
    return ResqueERMResult(np.mean(est, axis=0), charge, n_grad, 1)
