r"""Baselines for ReSQue's private SCO (Table II of Carmon et al. 2023): about n² gradients.

- :func:`noisy_projected_gd`: full-batch noisy projected (sub)gradient descent on
  :math:`\frac1m\sum_i f^i + \frac\lambda2\|\cdot - c\|^2` over B(R), T steps (n T gradients;
  T = n gives the n² of BFGT20's noisy SGD), averaged iterates. Each step releases the mean
  subgradient plus :math:`N(0, \sigma^2 I)`; under replace-one its sensitivity is 2L/m (every
  record's subgradient has norm ≤ L, enforced at the data level), so the T steps are T
  adaptive Gaussian mechanisms with noise multiplier s = σ m/(2L), calibrated exactly by
  Gaussian DP (:func:`~dpsco_core.privacy.calibration.calibrate_gaussian` with
  ``accountant="gdp"``). The report is recomputed by the library's accountant from the event.
- :func:`phased_erm`: the FKT20 phased-ERM (iterative localization) reduction of
  :func:`~dpsco_core.resque.private_sco.resque_private_sco` with :func:`noisy_projected_gd` as
  the private regularized ERM solver on each disjoint batch (λ_i = 1/(η_i n_i), η_i = 4^{-i}η,
  T_i = n_i steps): (ε, δ)-DP by parallel composition over the disjoint batches; about
  :math:`\sum_i n_i^2 \approx n^2/3` gradients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_scalar, check_vector

if TYPE_CHECKING:
    from .._typing import ArrayLike, RandomStateLike

__all__ = ["BaselineResult", "noisy_projected_gd", "phased_erm"]


@dataclass(frozen=True)
class BaselineResult:
    """Output of a baseline: x, the privacy report, the gradient count. ``x`` is
    (epsilon, delta)-DP under replace-one neighbours (the report's accounting).

    Attributes
    ----------
    x : ndarray of shape (d,)
    privacy : PrivacyReport
        The library's report (phased ERM: the worst phase's, by parallel composition over
        disjoint batches, :func:`~dpsco_core.privacy.report.disjoint_batches_report`).
    epsilon, delta : float
        The guarantee.
    n_gradients : int
        Per-sample subgradients evaluated.
    phases : list of dict
        Per-phase sizes, λ and ε (phased ERM).
    """

    x: np.ndarray
    privacy: Any
    epsilon: float
    delta: float
    n_gradients: int
    phases: list = field(default_factory=list)


def _project(x, R):
    nrm = float(np.linalg.norm(x))
    return x * (R / nrm) if nrm > R else x


def noisy_projected_gd(data: Any, *, epsilon: float, delta: float, radius_bound: float,
                       n_steps: int | None = None, reg: float = 0.0,
                       reg_center: ArrayLike | None = None, x0: ArrayLike | None = None,
                       step_scale: float = 1.0,
                       random_state: RandomStateLike = None) -> BaselineResult:
    r"""Full-batch noisy projected subgradient descent (module docstring), (ε, δ)-DP under
    replace-one neighbours.

    Parameters
    ----------
    data : LipschitzGLM, GeometricMedianData or compatible
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    radius_bound : float
        R.
    n_steps : int, optional
        T (default n).
    reg : float, default=0
        λ ≥ 0.
    reg_center : array-like of shape (d,), optional
        c (default 0).
    x0 : array-like of shape (d,), optional
        Start (default c projected on B(R)).
    step_scale : float, default=1
        η = step_scale · 2R / sqrt(T (G² + d σ²)), G = L + 2λR.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    BaselineResult
    """
    from ..privacy.calibration import calibrate_gaussian
    from ..privacy.events import GaussianDpEvent, NeighboringRelation, SelfComposedDpEvent
    from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport, seed_assumptions
    from .private_erm import _gaussian_noise

    eps = check_positive(epsilon, "epsilon")
    dlt = check_scalar(delta, "delta", low=0.0, high=1.0)
    R = check_positive(radius_bound, "radius_bound")
    lam = check_scalar(reg, "reg", low=0.0, low_open=False)
    m, d, L = data.n_samples, data.n_features, float(data.lipschitz)
    T = m if n_steps is None else check_int(n_steps, "n_steps", low=1)
    c = np.zeros(d) if reg_center is None else check_vector(reg_center, "reg_center")
    x = _project(c.copy() if x0 is None else check_vector(x0, "x0", copy=True), R)
    s = calibrate_gaussian(target_epsilon=eps, target_delta=dlt, steps=T, accountant="gdp")
    sigma = s * 2.0 * L / m
    G = L + 2.0 * lam * R
    eta = check_positive(step_scale, "step_scale") * 2.0 * R / math.sqrt(
        T * (G * G + d * sigma * sigma))
    seeds = child_seed_sequences(check_random_state(random_state), T)
    idx = np.arange(m)
    acc = np.zeros(d)
    for t in range(T):
        g = data.subgradients(idx, np.broadcast_to(x, (m, d))).mean(axis=0)
        g = _gaussian_noise(g, sigma, seeds[t])
        x = _project(x - eta * (g + lam * (x - c)), R)
        acc += x
    event = SelfComposedDpEvent(GaussianDpEvent(s), T)
    report = PrivacyReport.from_event(event, delta=dlt, accountant="gdp",
                                      neighboring_relation=NeighboringRelation.REPLACE_ONE,
                                      assumptions=DEFAULT_ASSUMPTIONS
                                      + seed_assumptions(random_state))
    return BaselineResult(acc / T, report, report.epsilon, report.delta, m * T)


def phased_erm(data: Any, *, epsilon: float, delta: float, radius_bound: float,
               steps_per_record: float = 1.0, min_batch: int = 16,
               random_state: RandomStateLike = None) -> BaselineResult:
    r"""FKT20 phased ERM with a noisy-GD inner solver (module docstring), (ε, δ)-DP under
    replace-one neighbours (disjoint batches: parallel composition).

    Parameters
    ----------
    data : LipschitzGLM, GeometricMedianData or compatible (with ``subset``)
    epsilon, delta : float
    radius_bound : float
        R.
    steps_per_record : float, default=1
        T_i = ceil(steps_per_record · n_i).
    min_batch : int, default=16
        Last batch size.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    BaselineResult
    """
    eps = check_positive(epsilon, "epsilon")
    dlt = check_scalar(delta, "delta", low=0.0, high=1.0)
    R = check_positive(radius_bound, "radius_bound")
    n, d, L = data.n_samples, data.n_features, float(data.lipschitz)
    eta = (R / L) * min(1.0 / math.sqrt(n), eps / math.sqrt(d * math.log(1.0 / dlt)))
    seeds = iter(child_seed_sequences(check_random_state(random_state), 64))
    x, start, i, phases, reports, n_grad = np.zeros(d), 0, 1, [], [], 0
    min_batch = check_int(min_batch, "min_batch", low=1)
    while (n >> i) >= min_batch:
        n_i = n >> i
        lam_i = 1.0 / (eta * 4.0 ** (-i) * n_i)
        res = noisy_projected_gd(data.subset(np.arange(start, start + n_i)), epsilon=eps,
                                 delta=dlt, radius_bound=R,
                                 n_steps=max(1, math.ceil(steps_per_record * n_i)), reg=lam_i,
                                 reg_center=x, x0=x, random_state=next(seeds))
        x, start, n_grad = res.x, start + n_i, n_grad + res.n_gradients
        reports.append(res.privacy)
        phases.append({"n": n_i, "lam": lam_i, "epsilon": res.epsilon})
        i += 1
    if not phases:
        raise ValueError(f"data must have at least {2 * min_batch} records (the first phase "
                         f"uses n/2 >= min_batch = {min_batch}); got {n}.")
    from ..privacy.report import disjoint_batches_report

    report = disjoint_batches_report(reports, random_state)
    return BaselineResult(x, report, report.epsilon, report.delta, n_grad, phases)
