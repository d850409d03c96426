r"""EpochSGD (Asi et al. 2021, Algorithm 8): the optimal-distance-convergence (ODC) method behind
the MLMC optimum estimator, with its epoch snapshots exposed.

For :math:`F = f + \psi` with :math:`\psi(x) = (\mu/2)\|x - c\|^2 + \langle a, x\rangle`, over a
closed convex domain X, and an unbiased stochastic subgradient oracle of f:

.. math::

    x_1^0 = \arg\min_X \psi = \Pi_X(c - a/\mu), \qquad
    x_k^{t+1} = \Pi_X\Big(\frac{x_k^t + \eta_k\mu c - \eta_k(\hat\nabla f(x_k^t) + a)}
                               {1 + \eta_k \mu}\Big),

with :math:`\eta_k = 1/(4\mu 2^{k-1})`, :math:`T_k = 16 \cdot 2^{k-1}` iterates per epoch (the
first one the prox step without a gradient), and the epoch average as the next start and the
k-th snapshot. Proposition 3: :math:`E\|x - x^*\|^2 \le 32 G^2/(\mu^2 T)` for budget T
(:math:`E\|\hat\nabla f\|^2 \le G^2`). Iterates are kept relative to c (note 001, 8.2).

Oracle protocol: ``oracle(x, rng) -> ndarray of shape (d,)`` returns an unbiased stochastic
subgradient of f at x, drawing its randomness only from the ``numpy.random.Generator`` rng.

References
----------
.. [1] H. Asi, Y. Carmon, A. Jambulapati, Y. Jin, A. Sidford, "Stochastic bias-reduced gradient
   methods", NeurIPS 2021 (arXiv 2106.09481), Algorithm 8 and Proposition 3.
"""

from dataclasses import dataclass

import numpy as np

from .._random import BIT_GENERATOR, check_random_state
from .._validation import check_int, check_positive, check_vector
from ._schedule import T1, epochs_for_budget, gradients_for_epochs
from .domains import check_domain

__all__ = ["EpochSGDResult", "epoch_sgd"]


@dataclass(frozen=True)
class EpochSGDResult:
    """Output of :func:`epoch_sgd`.

    Attributes
    ----------
    x : ndarray of shape (d,)
        The last snapshot (the ODC output for the budget).
    snapshots : ndarray of shape (n_epochs + 1, d)
        ``snapshots[0] = argmin_X psi``, ``snapshots[k]`` the average of epoch k.
    n_gradients : int
        Stochastic gradients used, ``16 (2^m - 1) - m`` for m epochs.
    """

    x: np.ndarray
    snapshots: np.ndarray
    n_gradients: int


def check_psi(mu, center, linear):
    """Validate (mu, c, a) of psi; returns (mu, c, a) with a a float64 vector (zeros if None)."""
    mu = check_positive(mu, "mu")
    center = check_vector(center, "center")
    if linear is None:
        linear = np.zeros_like(center)
    else:
        linear = check_vector(linear, "linear")
        if linear.shape != center.shape:
            raise ValueError(f"linear must have the length of center ({center.shape[0]}); got "
                             f"{linear.shape[0]}.")
    return mu, center, linear


def run_epochs(oracle, mu, center, linear, domain_rel, n_epochs, rng, keep=None):
    """EpochSGD for ``n_epochs`` epochs in coordinates relative to ``center``.

    Returns a dict {epoch index: snapshot relative to center} for the indices in ``keep``
    (all indices when None). ``domain_rel`` is the domain translated by ``-center``.
    """
    u = domain_rel.project(-linear / mu)
    snaps = {}
    if keep is None or 0 in keep:
        snaps[0] = u
    eta, t_k = 1.0 / (4.0 * mu), T1
    for k in range(1, n_epochs + 1):
        denom = 1.0 + eta * mu
        u = domain_rel.project((u - eta * linear) / denom)
        acc = u.copy()
        for _ in range(1, t_k):
            g = np.asarray(oracle(center + u, rng), dtype=np.float64)
            u = domain_rel.project((u - eta * (g + linear)) / denom)
            acc += u
        u = acc / float(t_k)
        if keep is None or k in keep:
            snaps[k] = u
        eta, t_k = eta * 0.5, 2 * t_k
    return snaps


def epoch_sgd(oracle, mu, center, *, budget=None, n_epochs=None, linear=None, domain=None,
              random_state=None):
    r"""Run EpochSGD on :math:`f + (\mu/2)\|x - c\|^2 + \langle a, x\rangle` over ``domain``.

    Parameters
    ----------
    oracle : callable
        ``oracle(x, rng)``: unbiased stochastic subgradient of f (module docstring).
    mu : float
        Strong convexity of psi, > 0 (sets the steps :math:`\eta_1 = 1/(4\mu)`).
    center : array-like of shape (d,)
        Prox centre c.
    budget : int, optional
        Gradient budget T: runs :math:`m(T) = \max\{m: 16(2^m - 1) \le T\}` epochs (none if
        T < 16). Exactly one of ``budget`` and ``n_epochs``.
    n_epochs : int, optional
        Number of epochs (0 to 40).
    linear : array-like of shape (d,), optional
        Linear term a of psi (default 0).
    domain : Domain, optional
        Closed convex domain (default the whole space); see :mod:`dpsco_core.mlmc.domains`.
    random_state : None, int, SeedSequence or Generator
        The run draws from ``PCG64DXSM`` seeded by ``check_random_state(random_state)``.

    Returns
    -------
    EpochSGDResult
        With the prefix property: a run with a smaller budget and the same seed gives the first
        snapshots bit for bit.
    """
    mu, center, linear = check_psi(mu, center, linear)
    if (budget is None) == (n_epochs is None):
        raise ValueError("give exactly one of budget and n_epochs.")
    if budget is not None:
        n_epochs = epochs_for_budget(check_int(budget, "budget", low=0))
    n_epochs = check_int(n_epochs, "n_epochs", low=0, high=40)
    domain = check_domain(domain, center.shape[0])
    rng = np.random.Generator(BIT_GENERATOR(check_random_state(random_state)))
    snaps = run_epochs(oracle, mu, center, linear, domain.translate(center), n_epochs, rng)
    snapshots = center + np.stack([snaps[k] for k in range(n_epochs + 1)])
    return EpochSGDResult(snapshots[-1].copy(), snapshots, gradients_for_epochs(n_epochs))
