r"""Algorithm 7 of Asi et al. 2021 (App. A.1): an *unbiased* optimum estimator for a finite sum
with exact first-order oracles, by handing the deep MLMC levels to the ellipsoid method (note
001, section 2.7). Theoretical / small-d machinery, kept for tests and experiments.

Setting: :math:`F = \frac1n\sum_i F(\cdot; i)` μ-strongly convex on :math:`X = B_R(x_0)`,
:math:`E_i\|\nabla F(x; i)\|^2 \le G^2`, exact values and subgradients of every
:math:`F(\cdot; i)`. Levels

.. math::

    x_j = \begin{cases} \text{EpochSGD}(\nabla F(\cdot; i),\ 2^j) & j \le J_0,\\
          \text{ELLIPSOID}(x_0, F, \lceil 2^{j/2}\rceil) & j > J_0, \end{cases}
    \qquad J_0 = \lceil 4\log_2(14(nd^2 + d^4))\rceil \ \text{[RECON]},

and one draw is :math:`x_0 + 2^J(x_J - x_{J-1})`, :math:`P(J = j) = 2^{-j}`, **without
truncation** (the OCR's :math:`2^J(x_{J-1} - x_J)` has the sign wrong; the proof needs
:math:`E\hat x = \lim_j x_j`). Since the ellipsoid converges linearly (Lemma 2:
:math:`\|\hat x - x^*\|^2 \le (8G^2/\mu^2)e^{-T/(2d^2)}`), :math:`E\hat x = x^*` exactly
(Theorem 7), with :math:`E\|\hat x - x^*\|^2 = O((G^2/\mu^2)\log(nd))` and
:math:`O(\log(nd))` expected oracle queries; an ellipsoid step costs n queries (one full
subgradient) and :math:`O(d^2)` time.

EpochSGD needs ψ = (μ/2)‖x − x_0‖² explicitly, so the stochastic oracle is
:math:`\nabla F(x; i) - \mu(x - x_0)` (the gradient of the convex :math:`F(\cdot; i) -
\psi`); the levels :math:`j \le J_0` are snapshots :math:`m(2^j)` of *one* EpochSGD run (the
snapshot rule of note 2.3), and the levels above :math:`J_0` prefixes of one ellipsoid run.
"""

import math
from dataclasses import dataclass

import numpy as np

from .._random import BIT_GENERATOR, check_random_state, child_seed_sequences
from .._validation import check_int, check_positive, check_vector
from ._checks import oracle_value, oracle_vector
from ._schedule import epochs_for_budget, level_from_raw
from .domains import L2Ball
from .epoch_sgd import epoch_sgd

__all__ = ["FiniteSum", "ellipsoid_method", "exact_j0", "ExactOptimumDraws",
           "exact_optimum_draws", "exact_levels"]


class FiniteSum:
    r""":math:`F(x) = \frac1n \sum_i F(x; i)` from per-component callables.

    ``value(x, i)`` and ``subgradient(x, i)`` are exact oracles of component i; every call is
    counted in ``n_queries`` (a full value or subgradient costs n).

    Parameters
    ----------
    value, subgradient : callable
        ``value(x, i)`` and ``subgradient(x, i)`` of component i.
    n_components : int
        n.
    """

    def __init__(self, value, subgradient, n_components):
        for name, fn in (("value", value), ("subgradient", subgradient)):
            if not callable(fn):
                raise TypeError(f"{name} must be callable as {name}(x, i); got "
                                f"{type(fn).__name__}.")
        self._value = value
        self._subgradient = subgradient
        self.n = check_int(n_components, "n_components", low=1)
        self.n_queries = 0

    def _component_subgradient(self, x, i):
        return oracle_vector(self._subgradient(x, i), "subgradient", np.shape(x))

    def component_subgradient(self, x, i):
        """Subgradient of component ``i`` at ``x`` (one query).

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.
        i : int
            The component.

        Returns
        -------
        ndarray of shape (d,)
        """
        self.n_queries += 1
        return self._component_subgradient(x, i)

    def full_value(self, x):
        """:math:`F(x)` (n queries).

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        float
        """
        self.n_queries += self.n
        total = math.fsum(oracle_value(self._value(x, i), "value") for i in range(self.n))
        if not math.isfinite(total):
            raise ValueError(f"value's components sum beyond the float64 range at x: got "
                             f"{total!r}; rescale the problem.")
        return total / self.n

    def full_subgradient(self, x):
        """A subgradient of :math:`F` at ``x`` (n queries).

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        ndarray of shape (d,)
        """
        self.n_queries += self.n
        with np.errstate(over="ignore", invalid="ignore"):
            out = sum(self._component_subgradient(x, i) for i in range(self.n)) / self.n
        if not np.all(np.isfinite(out)):
            raise ValueError("subgradient's components sum beyond the float64 range at x; "
                             "rescale the problem.")
        return out


def exact_j0(n, d):
    """J_0 = ceil(4 log2(14 (n d^2 + d^4))) (note 2.7, [RECON]).

    Parameters
    ----------
    n : int
        Components.
    d : int
        Dimension.

    Returns
    -------
    int
    """
    return math.ceil(4.0 * math.log2(14.0 * (n * d * d + d ** 4)))


#: radius range of the ellipsoid method: R^2 (the initial P) and the cuts' g^T P g normal.
_R_LOW, _R_HIGH = 2.0 ** -250, 2.0 ** 250
#: n_steps above this is a run that never ends (and an output array beyond memory).
_MAX_ELLIPSOID_STEPS = 2 ** 32


def ellipsoid_method(value, subgradient, center, radius, n_steps):
    r"""Central-cut ellipsoid method on :math:`B_R(c)` with exact oracles (Lemma 2).

    Starts from the ball (:math:`P = R^2 I`); a step queries the centre z if it lies in the
    ball (cut :math:`g = \partial F(z)`) or cuts with the ball's separating hyperplane
    :math:`g = z - c` otherwise, then

    .. math::

        z \leftarrow z - \frac{1}{d+1}\frac{Pg}{\sqrt{g^\top P g}},\qquad
        P \leftarrow \frac{d^2}{d^2 - 1}\Big(P - \frac{2}{d+1}
        \frac{Pg g^\top P}{g^\top P g}\Big).

    Returns the array ``best`` of shape (n_steps + 1, d): ``best[t]`` the feasible centre of
    lowest value among the first t queries (``best[0] = c``), so that any shorter run is a
    prefix of a longer one. Needs d >= 2.

    Parameters
    ----------
    value, subgradient : callable
        Exact oracles of F.
    center : ndarray of shape (d,)
        c.
    radius : float
        R.
    n_steps : int
        Number of steps.

    Returns
    -------
    ndarray of shape (n_steps + 1, d)
    """
    c = check_vector(center, "center", copy=True)
    d = c.shape[0]
    if d < 2:
        raise ValueError(f"the ellipsoid method needs d >= 2; got center of length {d}.")
    R = check_positive(radius, "radius")
    if not (_R_LOW <= R <= _R_HIGH and np.all(np.abs(c) <= _R_HIGH)):
        # P = R^2 I must be a normal float matrix: R^2 overflowing to inf made every step a
        # no-op (the centre came back as the "optimum"), underflowing to 0 likewise
        raise ValueError(f"radius must be in [{_R_LOW:.3g}, {_R_HIGH:.3g}] and center's "
                         f"entries at most {_R_HIGH:.3g} in magnitude (P = radius^2 I and the "
                         f"cuts must not overflow); got radius={R!r}; rescale the problem.")
    n_steps = check_int(n_steps, "n_steps", low=0, high=_MAX_ELLIPSOID_STEPS)
    for name, fn in (("value", value), ("subgradient", subgradient)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable; got {type(fn).__name__}.")
    z = c.copy()
    P = np.eye(d) * R * R
    best, best_val = c.copy(), oracle_value(value(c), "value")
    out = np.empty((n_steps + 1, d))
    out[0] = best
    for t in range(1, n_steps + 1):
        if np.linalg.norm(z - c) <= R:
            val = oracle_value(value(z), "value")
            if val < best_val:
                best, best_val = z.copy(), val
            g = oracle_vector(subgradient(z), "subgradient", (d,))
        else:
            g = z - c
        Pg = P @ g
        gPg = float(g @ Pg)
        if not gPg > 0.0:      # 0 subgradient: z is optimal; keep it for the remaining steps
            out[t:] = best
            break
        z = z - Pg / ((d + 1.0) * math.sqrt(gPg))
        P = (d * d / (d * d - 1.0)) * (P - (2.0 / (d + 1.0)) * np.outer(Pg, Pg) / gPg)
        P = 0.5 * (P + P.T)     # keep it symmetric against round-off
        out[t] = best
    return out


def _stochastic_oracle(problem, mu, x0):
    def oracle(x, rng):
        i = int(rng.integers(0, problem.n))
        return problem.component_subgradient(x, i) - mu * (x - x0)
    return oracle


def exact_levels(problem, mu, x0, radius, J, *, j0, random_state):
    r""":math:`(x_{J-1}, x_J)` of Algorithm 7 for one draw's randomness ``random_state``.

    The same ``random_state`` gives consistent levels for every J (EpochSGD's prefix property,
    the ellipsoid's prefix outputs), so :math:`\sum_j 2^{-j}\hat x(j)` telescopes exactly.

    Parameters
    ----------
    problem : FiniteSum
        The objective.
    mu : float
        Strong convexity.
    x0 : ndarray of shape (d,)
        Centre.
    radius : float
        R.
    J : int
        The level.
    j0 : int
        :math:`J_0`.
    random_state : None, int, SeedSequence or Generator
        The draw's randomness.

    Returns
    -------
    tuple of ndarray
    """
    x0 = check_vector(x0, "x0")
    J = check_int(J, "J", low=1)
    ball = L2Ball(radius, x0)

    def odc(j):
        res = epoch_sgd(_stochastic_oracle(problem, mu, x0), mu, x0, budget=2 ** min(j, j0),
                        domain=ball, random_state=random_state)
        return res.snapshots

    def ellipsoid(steps):
        return ellipsoid_method(problem.full_value, problem.full_subgradient, x0, radius,
                                steps)

    if J <= j0:
        snaps = odc(J)
        return snaps[epochs_for_budget(2 ** (J - 1))], snaps[epochs_for_budget(2 ** J)]
    top = ellipsoid(math.ceil(2.0 ** (J / 2.0)))
    x_j = top[-1]
    if J == j0 + 1:
        return odc(j0)[-1], x_j
    return top[math.ceil(2.0 ** ((J - 1) / 2.0))], x_j


@dataclass(frozen=True)
class ExactOptimumDraws:
    """Draws of Algorithm 7: ``samples`` (n_copies, d), levels ``J`` and the oracle
    ``n_queries`` of each copy.

    Attributes
    ----------
    samples : ndarray of shape (n_copies, d)
        The draws.
    J : ndarray of shape (n_copies,)
        Their levels.
    n_queries : ndarray of shape (n_copies,)
        Oracle queries of each.
    """

    samples: np.ndarray
    J: np.ndarray
    n_queries: np.ndarray

    @property
    def mean(self):
        """ndarray: the average of the draws."""
        return self.samples.mean(axis=0)


def exact_optimum_draws(problem, mu, x0, radius, *, n_copies=1, j0=None, max_level=60,
                        random_state=None):
    r"""``n_copies`` independent draws of Algorithm 7 (module docstring).

    Parameters
    ----------
    problem : FiniteSum
        Exact component oracles of a μ-strongly convex F.
    mu : float
    x0 : array-like of shape (d,)
        Initial point and centre of the domain :math:`B_R(x_0)`.
    radius : float
    n_copies : int, default=1
    j0 : int, optional
        :math:`J_0` (default :func:`exact_j0`); smaller values hand more levels to the
        ellipsoid (still unbiased).
    max_level : int, default=60
        A draw with J above it raises (probability :math:`2^{-60}`: the ellipsoid would need
        :math:`2^{30}` steps).
    random_state : None, int, SeedSequence or Generator
        Copy m draws J from one raw word of ``PCG64DXSM(child m)`` and runs EpochSGD on
        child m's child.
    """
    if not (isinstance(getattr(problem, "n", None), int)
            and callable(getattr(problem, "component_subgradient", None))
            and callable(getattr(problem, "full_subgradient", None))
            and callable(getattr(problem, "full_value", None))):
        raise TypeError(f"problem must be a FiniteSum (n, component_subgradient, full_value, "
                        f"full_subgradient); got {type(problem).__name__}.")
    x0 = check_vector(x0, "x0")
    mu = check_positive(mu, "mu")
    radius = check_positive(radius, "radius")
    n_copies = check_int(n_copies, "n_copies", low=1)
    max_level = check_int(max_level, "max_level", low=1)
    if x0.shape[0] < 2:
        raise ValueError(f"x0 must have length d >= 2 (the ellipsoid levels need it); got "
                         f"{x0.shape[0]}.")
    if not (_R_LOW <= radius <= _R_HIGH and np.all(np.abs(x0) <= _R_HIGH)):
        raise ValueError(f"radius must be in [{_R_LOW:.3g}, {_R_HIGH:.3g}] and x0's entries at "
                         f"most {_R_HIGH:.3g} in magnitude (the ellipsoid levels' P = radius^2 "
                         f"I must not overflow); got radius={radius!r}; rescale the problem.")
    j0 = exact_j0(problem.n, x0.shape[0]) if j0 is None else check_int(j0, "j0", low=1)
    seed = check_random_state(random_state)
    out = np.empty((n_copies, x0.shape[0]))
    Js = np.empty(n_copies, dtype=np.int64)
    queries = np.empty(n_copies, dtype=np.int64)
    for m, s in enumerate(child_seed_sequences(seed, n_copies)):
        J = level_from_raw(BIT_GENERATOR(s).random_raw())
        if J > max_level:
            raise RuntimeError(f"drew J = {J} > max_level = {max_level} (probability "
                               f"2^-{max_level}).")
        before = problem.n_queries
        prev, cur = exact_levels(problem, mu, x0, radius, J, j0=j0,
                                 random_state=child_seed_sequences(s, 1)[0])
        with np.errstate(over="ignore", invalid="ignore"):
            out[m] = x0 + 2.0 ** J * (cur - prev)
        if not np.all(np.isfinite(out[m])):
            raise ValueError(f"draw {m} overflowed the float64 range (J = {J}): rescale x0, "
                             "radius and the problem (mu, the subgradients).")
        Js[m] = J
        queries[m] = problem.n_queries - before
    return ExactOptimumDraws(out, Js, queries)
