r"""Private per-feature centres and scales: standardization without reading the data for free.

Standardizing features with their exact means and deviations (scikit-learn's
``StandardScaler``) reads the private data: those ``2p`` numbers are a release outside any
model's guarantee. Public bounds alone make a poor scale when the data sit in a small part
of them (raw Electricity: ``nswprice`` has mean 0.058 and spread 0.04 in [0, 1]; raw
California: latitude spreads 2 degrees in [0, 42]). This module releases a centre and a scale
per feature privately, from the public bounds, so that the features can be standardized
before a private fit at a small share of its budget (session 20).

**Mechanism.** With public bounds :math:`l_j \le u_j` and widths :math:`w_j = u_j - l_j`,
every record is mapped into the unit box, :math:`v_{ij} = (\mathrm{clip}(x_{ij}, l_j, u_j) -
l_j) / w_j \in [0, 1]` (features of width 0 are constant and left out). Two Gaussian releases
over the :math:`p'` features of positive width and the public count :math:`n`:

.. math::

    \hat\mu = \frac1n \sum_i v_i + N(0, \sigma^2 I_{p'}), \qquad
    \hat a = \frac1n \sum_i |v_i - \mathrm{clip}(\hat\mu, 0, 1)| + N(0, \sigma^2 I_{p'}),

:math:`\sigma = z \sqrt{p'} / n`, then the centre :math:`c_j = l_j + w_j\,\mathrm{clip}(\hat
\mu_j, 0, 1)` and the scale :math:`s_j = w_j \sqrt{\pi/2}\,\mathrm{clip}(\hat a_j, 3\sigma,
1/2)`. :math:`\hat a_j` is the mean absolute deviation (MAD), and :math:`\sqrt{\pi/2}` times it
is the standard deviation of a Gaussian feature. Why the MAD and not the variance: its terms
lie in :math:`[0, 1]`, so its noise is linear in the width; a variance's terms lie in
:math:`[0, w_j^2]`, so its noise grows with :math:`w_j^2`, and it is the difference of two
large numbers when the data sit far from the bounds' middle (latitude: the released
deviation came out 0.42 for a true 2.1 at epsilon 0.1, measured in ``docs/tuning``). The
floor of 3 noise standard deviations keeps a feature whose MAD drowns in the noise from
being scaled up by the noise.

**Transform.** :math:`t_{ij} = \mathrm{clip}((\mathrm{clip}(x_{ij}, l_j, u_j) - c_j) / s_j,
-k, k)` with ``clip`` :math:`k` (default 3; None: no clip), a fixed map of each record given
the released numbers, so a model fitted on the transformed records with bounds
:math:`(-k, k)` keeps its own guarantee, composed with this release's.

**Privacy.** Each :math:`v_{ij}` and each :math:`|v_{ij} - \bar\mu_j|` lies in :math:`[0, 1]`:
replacing one record (replace-one), or replacing it by the null record that adds nothing to
the sums (zero-out), moves each coordinate of either mean by at most :math:`1/n`, so each
release has l2 sensitivity :math:`\Delta_2 = \sqrt{p'} / n` (public :math:`n`; under
add/remove-one the count is private and no release is offered). Each is the exact discrete
Gaussian mechanism of :class:`~dpsco_core.mechanisms.GaussianMechanism` (``secure=True``), so
:math:`1/(2z^2)`-zCDP; the second reads :math:`\hat\mu`, a released value (adaptive
composition). Their composition is :math:`1/z^2`-zCDP, and :math:`z` is the smallest (to a
relative 1e-4) for which the RDP accountant's report of the two events is at most the target
epsilon at delta (where the best Renyi order lies beyond the accountant's grid, epsilon near
1e6, z is larger: more noise, a report below the target). The report is returned; a test
recomputes it from its event.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from ._random import check_random_state, child_seed_sequences
from ._validation import check_delta, check_real_array, check_scalar, check_sparse
from .privacy.budget import spend
from .privacy.events import check_relation

__all__ = ["FeatureScales", "private_feature_scales", "release_feature_scales", "scaling_event",
           "DEFAULT_STANDARDIZED_CLIP", "MAD_FLOOR_SCALES"]

#: Default clip ``k`` of the standardized features (module docstring): records beyond three
#: released deviations are clipped, which on raw California (population up to 35,682 against
#: a median of 1,166) is what made the standardized fit better than the raw non-private one.
DEFAULT_STANDARDIZED_CLIP = 3.0

#: The floor of the released MAD, in noise standard deviations (module docstring).
MAD_FLOOR_SCALES = 3.0
#: ... and an absolute floor in the unit box: a feature constant inside its bounds keeps a
#: positive scale without noise.
_MAD_MIN = 1e-9

_RELATIONS = ("replace_one", "zero_out")
#: The smallest 1 / z the calibration goes down to (z = 1e150: beyond, the release is noise).
_MIN_MU = 1e-150

#: The report's assumption: the bounds are public.
BOUNDS_ASSUMPTION = ("the feature bounds (lower, upper) of the scaling are public (declared "
                     "without looking at the data); the records are clipped onto them")


@dataclasses.dataclass(frozen=True, eq=False)
class FeatureScales:
    """Released centres and scales of the features, and the map they define.

    Attributes
    ----------
    lower, upper : ndarray of shape (n_features,)
        The public bounds the records are clipped onto first.
    centre, scale : ndarray of shape (n_features,)
        The released centre and scale (``scale > 0``; 1 for a feature of width 0).
    clip : float or None
        ``k``: the standardized values are clipped onto ``[-k, k]``; None: not clipped.
    privacy : PrivacyReport
        The release's report (``event`` the two Gaussian releases).
    """

    lower: np.ndarray
    upper: np.ndarray
    centre: np.ndarray
    scale: np.ndarray
    clip: float | None
    privacy: Any

    def transform(self, X: Any) -> np.ndarray:
        r"""The records standardized: :math:`\mathrm{clip}((\mathrm{clip}(x, l, u) - c) / s,
        -k, k)` (a new float64 array; dense X only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        X = _dense_matrix(X, self.lower.size)
        Z = (np.clip(X, self.lower, self.upper) - self.centre) / self.scale
        if self.clip is not None:
            np.clip(Z, -self.clip, self.clip, out=Z)
        return Z


def _dense_matrix(X: Any, p: int | None = None) -> np.ndarray:
    """X as a finite 2-d float64 array; sparse X refused (centring would make it dense). The
    messages name shapes, never values."""
    import scipy.sparse as sp

    if sp.issparse(X):
        check_sparse(X, "X")
        raise TypeError("private standardization centres the features, which makes a sparse X "
                        "dense: pass X.toarray() if it fits in memory, or scale sparse "
                        "features by public constants instead.")
    X = check_real_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features); got an array of "
                         f"{X.ndim} dimension(s).")
    if p is not None and X.shape[1] != p:
        raise ValueError(f"X has {X.shape[1]} features; the scales were released for {p}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must be finite (no NaN or infinity).")
    return X.astype(np.float64, copy=False)


def _bounds(bounds: Any, p: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) as finite float64 arrays of shape (p,), lower <= upper."""
    if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
        raise ValueError("bounds must be a pair (lower, upper) of scalars or per-feature arrays "
                         "declared public (chosen without looking at the data).")
    out = []
    for name, value in zip(("lower", "upper"), bounds):
        arr = np.asarray(check_real_array(value, f"bounds {name}"), dtype=np.float64)
        if arr.ndim == 0:
            arr = np.full(p, float(arr))
        if arr.shape != (p,):
            raise ValueError(f"bounds {name} must be a scalar or have shape ({p},); got shape "
                             f"{arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"bounds {name} must be finite.")
        out.append(arr)
    lower, upper = out
    crossed = np.flatnonzero(lower > upper)
    if crossed.size:
        raise ValueError(f"bounds must have lower <= upper for every feature (lower > upper at "
                         f"feature {int(crossed[0])}{' and others' if crossed.size > 1 else ''}).")
    if not np.all(np.isfinite(upper - lower)):
        raise ValueError("bounds' widths upper - lower overflow: rescale the features.")
    return lower, upper


def unit_box(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The records mapped into the unit box, ``(clip(x, lower, upper) - lower) / (upper -
    lower)`` (widths > 0): the first query is its column means."""
    return (np.clip(X, lower, upper) - lower) / (upper - lower)


def mean_absolute_deviation(V: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The second query, ``mean_i |v_i - centre|`` per column, ``centre`` in the unit box."""
    return np.abs(V - centre).mean(axis=0)


def _sensitivity(p_live: int, n: int) -> float:
    """l2 sensitivity of either query under replace-one and zero-out: each of the ``p_live``
    coordinates is a mean over the public ``n`` of terms in [0, 1] (module docstring)."""
    return math.sqrt(p_live) / n


@functools.lru_cache(maxsize=64)
def _noise_multiplier(epsilon: float, delta: float) -> tuple[float, Any]:
    """(z, event): the smallest z (relative 1e-4) whose two exact discrete Gaussian releases
    the RDP accountant puts at most at ``epsilon`` at ``delta``; the event of the two."""
    from .privacy.calibration import _largest_within, _zcdp_rho, zcdp_centred_orders
    from .solvers._common import _report_orders
    from .privacy.accountants import RdpAccountant

    orders = _report_orders(zcdp_centred_orders(epsilon, delta))

    def event_of(mu: float) -> Any:
        return scaling_event(1.0 / mu)

    def within(mu: float) -> bool:
        acc = RdpAccountant(orders, "replace_one", conversion="improved")
        return acc.compose(event_of(mu)).get_epsilon(delta) <= epsilon

    # Bun and Steinke's conversion is looser than the accountant's: 1/z^2 = rho_BS is within,
    # but for the order grid's ends (at epsilon near 1e6 the best order is below the grid's
    # smallest, 1.1): then mu halves until the accountant confirms it (more noise, a report
    # below the target)
    mu0 = math.sqrt(_zcdp_rho(epsilon, delta))
    while mu0 > _MIN_MU and not within(mu0):
        mu0 *= 0.5
    if not mu0 > _MIN_MU:
        raise ValueError(f"epsilon={epsilon!r} at delta={delta!r} is outside what the feature "
                         "scales' calibration reaches (the noise multiplier would exceed "
                         f"{1 / _MIN_MU:g}): give a larger epsilon.")
    # ... and grows while the accountant allows (at delta near 1 the zCDP start is far
    # too noisy: epsilon 0.05 at delta 0.1 reported 0.0; review s20)
    while mu0 < 1.0 / _MIN_MU and within(4.0 * mu0):
        mu0 *= 4.0
    mu = _largest_within(within, mu0, 4.0 * mu0, 1e-4)
    return 1.0 / mu, event_of(mu)


def private_feature_scales(X: Any, *, bounds: Any, epsilon: float, delta: float,
                           clip: float | None = DEFAULT_STANDARDIZED_CLIP,
                           neighboring_relation: str = "replace_one", random_state: Any = None,
                           budget: Any = None) -> FeatureScales:
    r"""Release a centre and a scale for each feature, (epsilon, delta)-DP (module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The private records (dense; the count ``n_samples`` is public).
    bounds : tuple (lower, upper)
        Public per-feature bounds (scalars or arrays of shape (n_features,)), declared without
        looking at the data; records are clipped onto them. Unlike a model's bounds they need
        not contain 0 (latitude's (32, 42) is fine).
    epsilon : float
        In (0, inf], inf: the exact statistics, not private (a budget refuses it).
    delta : float
        In (0, 1).
    clip : float or None, default=3.0
        ``k`` of :meth:`FeatureScales.transform` (> 0), or None.
    neighboring_relation : {"replace_one", "zero_out"}, default="replace_one"
        The relation of the guarantee (the sensitivity is the same under both; the record
        count must be public, so add/remove-one is not offered).
    random_state : None, int, SeedSequence or Generator
        Seeds the noise (None: fresh entropy, for a release).
    budget : Budget, optional
        Charged with the two releases before the data are read.

    Returns
    -------
    FeatureScales
        With ``privacy`` the report: **(epsilon, delta)-DP** under ``neighboring_relation``,
        unconditional given public bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.feature_scales import private_feature_scales
    >>> X = np.random.default_rng(0).normal(35.0, 2.0, size=(20_000, 1))
    >>> fs = private_feature_scales(X, bounds=(0, 42), epsilon=0.5, delta=1e-9,
    ...                             random_state=0)
    >>> bool(abs(fs.centre[0] - 35.0) < 0.2 and abs(fs.scale[0] - 2.0) < 0.2)
    True
    """
    from .privacy.calibration import zcdp_centred_orders
    from .solvers._common import report_from_event

    epsilon = check_scalar(epsilon, "epsilon", low=0.0, allow_inf=True)
    delta = check_delta(delta)
    relation = check_scaling_relation(neighboring_relation)
    if math.isinf(epsilon):
        # the non-private run (the estimators' epsilon = inf): exact statistics, no noise
        from .privacy.events import NonPrivateDpEvent

        report = report_from_event(
            NonPrivateDpEvent(), delta=delta, relation=relation, budget_split={},
            assumptions=(BOUNDS_ASSUMPTION,), target_epsilon=math.inf,
            random_state=random_state)
        return release_feature_scales(X, bounds=bounds, noise_multiplier=0.0, clip=clip,
                                      neighboring_relation=relation,
                                      random_state=random_state, budget=budget, delta=delta,
                                      report=report)
    z, event = _noise_multiplier(float(epsilon), float(delta))
    report = report_from_event(
        event, delta=delta, relation=relation, budget_split={},
        assumptions=(BOUNDS_ASSUMPTION,), target_epsilon=epsilon, random_state=random_state,
        extra_orders=zcdp_centred_orders(epsilon, delta), conversion="improved")
    return release_feature_scales(X, bounds=bounds, noise_multiplier=z, clip=clip,
                                  neighboring_relation=relation, random_state=random_state,
                                  budget=budget, delta=delta, report=report)


def check_scaling_relation(neighboring_relation: Any) -> Any:
    """The :class:`~dpsco_core.privacy.events.NeighboringRelation` of a release, replace-one
    or zero-out (the record count must be public)."""
    relation = check_relation(neighboring_relation)
    if relation.name.lower() not in _RELATIONS:
        raise ValueError(f"neighboring_relation must be one of {_RELATIONS} (the record count "
                         f"must be public); got {neighboring_relation!r}.")
    return relation


def scaling_event(noise_multiplier: float) -> Any:
    """The event of the two releases at ``noise_multiplier`` z (each an exact discrete
    Gaussian, :math:`1/(2z^2)`-zCDP), as :func:`release_feature_scales` charges it.

    Parameters
    ----------
    noise_multiplier : float
        z > 0.

    Returns
    -------
    ComposedDpEvent
    """
    from .mechanisms import GaussianMechanism
    from .privacy.events import ComposedDpEvent

    e = GaussianMechanism(sensitivity=1.0, noise_multiplier=noise_multiplier).event
    return ComposedDpEvent((e, e))


def release_feature_scales(X: Any, *, bounds: Any, noise_multiplier: float,
                           clip: float | None = DEFAULT_STANDARDIZED_CLIP,
                           neighboring_relation: Any = "replace_one", random_state: Any = None,
                           budget: Any = None, delta: float | None = None,
                           report: Any = None) -> FeatureScales:
    r"""The release of :func:`private_feature_scales` at a given noise multiplier.

    For callers that account the release inside a larger one (the estimators'
    ``feature_scaling="private"``): the event is :func:`scaling_event` of ``noise_multiplier``
    (:math:`1/z^2`-zCDP in all, under ``neighboring_relation``), charged to ``budget`` before
    the data are read.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The private records (dense).
    bounds : tuple (lower, upper)
        Public per-feature bounds.
    noise_multiplier : float
        z >= 0: each release's noise standard deviation is :math:`z \sqrt{p'} / n`; 0: the
        exact statistics, for a non-private run (a ``budget`` is charged a non-private
        release, which a finite budget refuses before the data are read).
    clip : float or None, default=3.0
        See :func:`private_feature_scales`.
    neighboring_relation : {"replace_one", "zero_out"}, default="replace_one"
    random_state : None, int, SeedSequence or Generator
    budget : Budget, optional
        Charged with :func:`scaling_event` before the data are read.
    delta : float, optional
        The delta the budget charges the release at (basic composition only).
    report : PrivacyReport, optional
        Kept as the result's ``privacy`` (None: the caller accounts the release).

    Returns
    -------
    FeatureScales
        **Privacy**: :math:`1/z^2`-zCDP under ``neighboring_relation`` (module docstring).
    """
    from .mechanisms import GaussianMechanism

    z = check_scalar(noise_multiplier, "noise_multiplier", low=0.0, low_open=False)
    if clip is not None:
        clip = check_scalar(clip, "clip", low=0.0)
    relation = check_scaling_relation(neighboring_relation)
    X = _dense_matrix(X)
    n, p = X.shape
    if n < 2:
        raise ValueError(f"X must hold at least 2 samples; got n_samples={n}.")
    lower, upper = _bounds(bounds, p)
    width = upper - lower
    live = width > 0
    if not np.any(live):
        raise ValueError("every feature's bounds have width 0 (lower == upper): nothing to "
                         "standardize.")
    p_live = int(np.count_nonzero(live))
    if z == 0.0:
        # the exact statistics: a non-private run (epsilon = inf). A budget is charged a
        # non-private release, which any finite budget refuses before the data are read.
        from .privacy.events import NonPrivateDpEvent

        spend(budget, NonPrivateDpEvent(), neighboring_relation=relation, delta=delta)
        V = unit_box(X[:, live], lower[live], upper[live])
        mu = V.mean(axis=0)
        mad = np.clip(mean_absolute_deviation(V, mu), _MAD_MIN, 0.5)
    else:
        from ._secure import gaussian_parameters

        mechanism = GaussianMechanism(sensitivity=_sensitivity(p_live, n), noise_multiplier=z)
        # the exact sampler's grid (public: the sensitivity, z and p'): a noise scale it
        # cannot hold is refused here, before the charge (it raised after it)
        gaussian_parameters(mechanism.sensitivity, mechanism.noise_multiplier, p_live)
        # both releases charged before the first read of the data
        spend(budget, scaling_event(z), neighboring_relation=relation, delta=delta)
        seeds = child_seed_sequences(check_random_state(random_state), 2)
        V = unit_box(X[:, live], lower[live], upper[live])
        mu = np.clip(mechanism(V.mean(axis=0), random_state=seeds[0]), 0.0, 1.0)
        mad = mechanism(mean_absolute_deviation(V, mu), random_state=seeds[1])
        mad = np.clip(mad, max(MAD_FLOOR_SCALES * mechanism.noise_scale, _MAD_MIN), 0.5)
    centre = lower.copy()
    scale = np.ones(p)
    centre[live] = lower[live] + width[live] * mu
    scale[live] = width[live] * math.sqrt(math.pi / 2.0) * mad
    for a in (lower, upper, centre, scale):
        a.flags.writeable = False
    return FeatureScales(lower, upper, centre, scale, clip, report)
