r"""Private coordinate-wise smoothness constants (Mangold et al. 2022, section 5.2 and App. F).

For a linear model the per-sample coordinate smoothness is :math:`M_j^{(i)} = s_\ell\,x_{ij}^2`
(:math:`s_\ell = \sup |\ell''|`) and :math:`M_j = \frac1n \sum_i M_j^{(i)}`. Given public bounds
:math:`b_j`, each term is clipped to :math:`[0, b_j]` and the mean released with Laplace noise:

.. math::

    \hat M_j = \frac1n \sum_i \min(M_j^{(i)}, b_j) + \mathrm{Lap}\Big(\frac{p\, b_j}{n\,\varepsilon'}\Big),
    \qquad j = 1, \dots, p,

followed by the floor :math:`\hat M_j \leftarrow \max(\hat M_j,\ b_j / n,\ c\, \lambda_j)`, with
:math:`\lambda_j` the scale of the Laplace noise drawn (:math:`p b_j / (n \varepsilon')`, twice
that with ``conservative=True``) and :math:`c` = ``floor_scales`` (default 3). The floor is
post-processing and does not change the guarantee; the paper does not say how it handles small
or non-positive estimates (note 002 section 3.4). Why :math:`c` noise scales and not only
:math:`b_j / n`: DP-CD steps by :math:`1 / \hat M_j`, so an estimate pushed far below the true
:math:`M_j` by the noise makes that coordinate's step diverge. Where the noise dominates the
signal (features much smaller than their bound, the imbalanced problems of section 6) the floor
:math:`b_j / n` let single seeds diverge: on imbalanced Electricity at 50 passes the mean
relative error over 10 seeds at the tuned configuration was 0.56 (median 0.009), on imbalanced
California at 10 passes 7,600 (median 0.011). With the floor at 3 scales the means are 0.0094
and 0.0023 (largest seed 0.015 and 0.0072); a Laplace draw falls below :math:`-3` scales with
probability :math:`e^{-3}/2 = 2.5\%`. One scale gave 0.0056 and 0.032 (largest 0.011 and 0.22);
adding 1 or 3 scales to every estimate instead of flooring still diverged on some seeds.

**Privacy.** Each clipped term lies in :math:`[0, b_j]`, so under replace-one and zero-out
coordinate :math:`j` of the mean has sensitivity :math:`b_j / n`; under add/remove-one the sum
is divided by the caller's public count :math:`m` instead of the private n (``normaliser``,
the rule of :mod:`dpsco_core.solvers._common`) and :math:`n` reads :math:`m` below; its
Laplace noise of scale :math:`p b_j / (n \varepsilon')` makes it
:math:`\varepsilon'/p`-DP, and the :math:`p` coordinates compose to :math:`\varepsilon'`-DP
(pure). The paper uses the conservative sensitivity :math:`2 b_j / n`
(``conservative=True`` reproduces it, with twice the noise).

The bounds :math:`b_j` must be public. With public bounds on the problem
(:mod:`dpsco_core.public_bounds`: :math:`|x_{ij}| \le B_j`, enforced), :math:`b_j = s_\ell
B_j^2` reads no data; that is ``bounds="auto"`` (the default) on such a problem. The paper's
rule, "twice the maximal absolute value of each feature", :math:`b_j = s_\ell (2 \max_i
|x_{ij}|)^2`, reads the data: it is ``bounds="twice_max"``, and ``"auto"`` on a problem without
public bounds; it warns (``PrivacyLeakWarning``) and makes the report conditional.
"""

import numpy as np

from .._random import block_bit_generators
from .._validation import check_epsilon, check_scalar
from ..privacy.events import LaplaceDpEvent, SelfComposedDpEvent
from ._public_constants import data_constant

__all__ = ["smoothness_bounds", "private_coordinate_smoothness", "SmoothnessRelease",
           "FLOOR_SCALES"]

#: Default floor of the released constants, in Laplace noise scales (module docstring).
FLOOR_SCALES = 3.0

TWICE_MAX_CONDITION = ("smoothness bounds b_j = s_loss (2 max_i |x_ij|)^2 are read from the data "
                       "and not accounted (the paper's rule); declare public bounds on the "
                       "Problem or pass smoothness_bounds for an unconditional guarantee")
#: Former name (the statement moved from the report's assumptions to its conditions).
TWICE_MAX_ASSUMPTION = TWICE_MAX_CONDITION
PUBLIC_SMOOTHNESS_BOUNDS_ASSUMPTION = "the smoothness bounds b_j are public"


def _column_max_abs(problem):
    from ..parallel.blocked import BlockedProblem
    if isinstance(problem, BlockedProblem):     # X in row blocks: a reduction over them
        return problem._column_max_abs()
    X = problem.X_csc() if problem.is_sparse else problem.X_fortran()
    if problem.is_sparse:
        return np.asarray(abs(X).max(axis=0).todense()).ravel()
    return np.max(np.abs(X), axis=0)


def smoothness_bounds(problem, bounds):
    """Per-coordinate bounds b_j on M_j^(i), and whether they were read from the data.

    Parameters
    ----------
    problem : Problem
    bounds : "auto", "twice_max" or array-like of shape (n_features,)
        ``"auto"``: the problem's public bounds (:math:`B_j` of
        ``problem.public_bounds.feature_bounds``) when it has them, else ``"twice_max"``.
        ``"twice_max"``: the paper's data-dependent rule. An array: public bounds
        :math:`B_j \\ge |x_{ij}|` on the features, giving :math:`b_j = s_\\ell B_j^2`.
    """
    s_loss = problem.loss.smoothness
    if s_loss is None:
        raise ValueError(f"the {problem.loss!r} loss has no smoothness constants.")
    if isinstance(bounds, str) and bounds == "auto":
        if problem.public_bounds is not None:
            return s_loss * problem.public_bounds.feature_bounds(problem.n_features) ** 2, False
        bounds = "twice_max"
    if isinstance(bounds, str):
        if bounds != "twice_max":
            raise ValueError(f"smoothness_bounds must be 'auto', 'twice_max' or an array of "
                             f"public feature bounds; got {bounds!r}.")
        return s_loss * (2.0 * _column_max_abs(problem)) ** 2, True
    arr = np.asarray(bounds, dtype=np.float64)
    if arr.shape != (problem.n_features,):
        raise ValueError(f"smoothness_bounds must have shape ({problem.n_features},); got "
                         f"{arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError("smoothness_bounds must be finite and in (0, inf).")
    return s_loss * arr**2, False


def _clipped_means(problem, b, n):
    from ..parallel.blocked import BlockedProblem
    s_loss = problem.loss.smoothness
    if isinstance(problem, BlockedProblem):     # X in row blocks: a reduction over them
        return problem._clipped_sq_sums(s_loss, b) / n
    if problem.is_sparse:
        X = problem.X_csc()
        terms = X.copy()
        terms.data = s_loss * terms.data**2
        # Column j of the sparse terms, clipped to b_j; zeros stay zero.
        cols = np.repeat(np.arange(problem.n_features), np.diff(terms.indptr))
        terms.data = np.minimum(terms.data, b[cols])
        return np.asarray(terms.sum(axis=0)).ravel() / n
    X = problem.X_fortran()
    return np.minimum(s_loss * X**2, b).sum(axis=0) / n


def smoothness_event(n_features, epsilon):
    """Event of the private release of ``n_features`` constants with budget ``epsilon``.

    ``SelfComposedDpEvent(LaplaceDpEvent(p / epsilon'), p)`` (pure epsilon'-DP): a function of
    public arguments only, so a solver can charge it to a budget before reading the data.
    """
    return SelfComposedDpEvent(LaplaceDpEvent(n_features / epsilon), n_features)


def private_coordinate_smoothness(problem, *, epsilon, bounds="auto", conservative=False,
                                  floor_scales=FLOOR_SCALES, random_state=None, normaliser=None):
    """Release :math:`\\hat M_j` with the Laplace mechanism (see the module docstring).

    Parameters
    ----------
    problem : Problem
    epsilon : float
        The budget :math:`\\varepsilon'` spent on the constants, in (0, inf).
    bounds : "auto", "twice_max" or array-like, default="auto"
        See :func:`smoothness_bounds`. Data-dependent bounds warn (``PrivacyLeakWarning``).
    conservative : bool, default=False
        Use the paper's sensitivity :math:`2 b_j / n` instead of :math:`b_j / n`.
    floor_scales : float, default=3.0
        Floor of the estimates in Laplace scales, in [0, inf) (post-processing; module
        docstring). 0 keeps only the floor :math:`b_j / n`.
    random_state : None, int, SeedSequence or Generator
    normaliser : int, optional
        The public count m the clipped sums are divided by (sensitivity :math:`b_j / m`): the
        solver's :func:`~dpsco_core.solvers._common.normaliser`, which is the caller's
        ``public_n`` under add/remove-one; None: the dataset's n (replace-one, zero-out).

    Returns
    -------
    M : ndarray of shape (n_features,)
        The floored private estimates.
    event : DpEvent
        ``SelfComposedDpEvent(LaplaceDpEvent(p / epsilon'), p)``: pure epsilon'-DP.
    data_dependent_bounds : bool
        True when the bounds were read from the data (a condition the report must state).
    """
    release = SmoothnessRelease(problem, epsilon=epsilon, bounds=bounds,
                                conservative=conservative, floor_scales=floor_scales,
                                normaliser=normaliser)
    return release.draw(random_state), release.event, release.data_dependent


class SmoothnessRelease:
    """The private smoothness release, prepared once and drawn many times.

    The clipped means do not depend on the noise: grids of runs (``dp_cd_grid``) compute them
    once and draw each run's Laplace noise from the run's own stream. ``draw(random_state)`` is
    bitwise :func:`private_coordinate_smoothness` with the same ``random_state``.
    ``assumptions`` and ``conditions`` are the lines the run's privacy report adds;
    data-dependent bounds warn (``PrivacyLeakWarning``) once, here.

    Parameters
    ----------
    problem : Problem
        The data.
    epsilon : float
        The Laplace release's budget (pure DP).
    bounds : "auto" or array-like, default="auto"
        Public bounds on the :math:`M_j` (see :func:`private_coordinate_smoothness`).
    conservative : bool, default=False
        See :func:`private_coordinate_smoothness`.
    floor_scales : float, default=3.0
        See :func:`private_coordinate_smoothness`.
    normaliser : int, optional
        Public record count (add/remove-one).

    Notes
    -----
    **Privacy guarantee.** Each :meth:`draw` is the release of
    :func:`private_coordinate_smoothness`: pure :math:`\\varepsilon`-DP (Laplace noise on the p
    clipped means, ``SelfComposedDpEvent(LaplaceDpEvent(p / epsilon), p)``) under the relation
    of the run that uses it (sensitivity :math:`b_j / m` with the public count m, or
    :math:`2 b_j / n` with ``conservative=True``). Every draw is a separate release.
    """

    def __init__(self, problem, *, epsilon, bounds="auto", conservative=False,
                 floor_scales=FLOOR_SCALES, normaliser=None):
        epsilon = check_epsilon(epsilon)
        floor_scales = check_scalar(floor_scales, "floor_scales", low=0.0, low_open=False)
        b, self.data_dependent = smoothness_bounds(problem, bounds)
        if self.data_dependent:
            self.assumptions = []
            self.conditions = [data_constant("the smoothness bounds b_j = s (2 max_i |x_ij|)^2 "
                                             "(smoothness_bounds='twice_max')",
                                             TWICE_MAX_CONDITION)]
        else:
            self.assumptions, self.conditions = [PUBLIC_SMOOTHNESS_BOUNDS_ASSUMPTION], []
        # n: the public normaliser (never the private size under add/remove-one; see
        # dpsco_core.solvers._common).
        n = problem.n_samples if normaliser is None else normaliser
        p = problem.n_features
        sensitivity = (2.0 if conservative else 1.0) * b / n
        self._scale = p * sensitivity / epsilon
        self._means = _clipped_means(problem, b, n)
        self._floor = np.maximum(b / n, floor_scales * self._scale)
        self.event = smoothness_event(p, epsilon)

    def draw(self, random_state):
        r"""One private release of the :math:`M_j`, bitwise :func:`private_coordinate_smoothness`.

        Parameters
        ----------
        random_state : None, int, SeedSequence or Generator
            Seeds the Laplace noise.

        Returns
        -------
        ndarray of shape (n_features,)
            :math:`\varepsilon`-DP (pure, Laplace) under the problem's relation.
        """
        from .._random import check_random_state
        rng = np.random.Generator(block_bit_generators(check_random_state(random_state), 1)[0])
        estimate = self._means + rng.laplace(0.0, 1.0, self._means.size) * self._scale
        return np.maximum(estimate, self._floor)
