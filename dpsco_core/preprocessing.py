"""A differentially private ``StandardScaler`` for scikit-learn pipelines (session 20).

:class:`DPStandardScaler` releases a centre and a scale per feature with
:func:`dpsco_core.feature_scales.private_feature_scales` (two Gaussian releases inside public
bounds, (epsilon, delta)-DP) and standardizes records with them, clipped to ``[-clip, clip]``,
so that the private estimators that follow can take the public bounds ``(-clip, clip)``::

    make_pipeline(DPStandardScaler(epsilon=0.2, bounds=(lower, upper)),
                  DPLogisticRegression(epsilon=0.8, bounds=(-3, 3), feature_scaling=None))

(``feature_scaling=None``: the estimators' default would release scales again on large data.)
The pipeline's guarantee is the composition of the two releases: (1.0, delta_1 + delta_2) by
basic composition, or what a shared :class:`~dpsco_core.privacy.Budget` passed to both
(``budget=``) accounts, which is tighter (RDP). scikit-learn's ``StandardScaler`` in its place
reads the exact means and deviations: a release outside every ``privacy_``.

Requires scikit-learn >= 1.6, as :mod:`dpsco_core.estimators`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .estimators import _validate_private  # checks scikit-learn's version first
from .feature_scales import DEFAULT_STANDARDIZED_CLIP, private_feature_scales

from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

__all__ = ["DPStandardScaler"]


class DPStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardize features with privately released centres and scales.

    ``fit`` releases, inside the public ``bounds``, a centre ``mean_`` and a scale ``scale_``
    per feature (:func:`dpsco_core.feature_scales.private_feature_scales`: the clipped mean and
    :math:`\\sqrt{\\pi/2}` times the mean absolute deviation, each with Gaussian noise);
    ``transform`` maps a record to ``clip((clip(x, lower, upper) - mean_) / scale_, -clip,
    clip)``. The map is fixed once fitted (public post-processing of the release), so a
    private model fitted on its output with ``bounds=(-clip, clip)`` keeps its own guarantee.

    Parameters
    ----------
    epsilon : float, default=0.1
        The release's epsilon, in (0, inf]; inf: the exact statistics, not private (as the
        estimators' epsilon = inf). A fifth of a pipeline's total of 1 was the best
        of 0.05, 0.1 and 0.2 by basic composition on the data measured (raw California with
        2,500 or all records, raw Electricity; README, "Private standardization",
        ``docs/tuning/private_standardization.txt``); a tenth on 2,500 records was unstable.
    delta : float or None, default=None
        In (0, 1); None: ``1 / n_samples**2``.
    bounds : tuple (lower, upper)
        Public bounds on the features, scalars or arrays of shape (n_features,), declared
        without looking at the data (required: the sensitivity is their width). They need not
        contain 0.
    clip : float or None, default=3.0
        Standardized values are clipped onto ``[-clip, clip]`` (the bounds to declare to the
        next estimator); None: no clip (then the output has no public bound).
    neighboring_relation : {"replace_one", "zero_out"}, default="replace_one"
        The relation of the guarantee; use the next estimator's when they share a budget
        (DP-SGD with Poisson batches: ``"zero_out"``).
    random_state : None, int or SeedSequence, default=None
        Seeds the noise (None for a release). A seeded pipeline must give the next
        estimator another seed: the same seed would draw the scaler's noise and the
        estimator's from the same streams.
    budget : Budget or None, default=None
        Charged with the release before the data are read.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The released centres.
    scale_ : ndarray of shape (n_features,)
        The released scales (> 0).
    privacy_ : PrivacyReport
        (epsilon, delta)-DP under ``neighboring_relation``, unconditional.
    n_features_in_ : int

    Notes
    -----
    **Privacy.** Each release is a mean over the public count n of per-record terms in [0, 1]
    (the record mapped into the unit box by the bounds, then its absolute deviation from the
    released centre), so its l2 sensitivity is :math:`\\sqrt{p}/n` under replace-one and
    zero-out; the two exact discrete Gaussian releases compose to the calibrated
    (epsilon, delta) (:mod:`dpsco_core.feature_scales`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).normal(35.0, 2.0, size=(20_000, 1))
    >>> scaler = DPStandardScaler(epsilon=0.5, bounds=(0, 42), random_state=0).fit(X)
    >>> bool(np.abs(scaler.transform(X)).max() <= 3.0)
    True
    """

    def __init__(self, *, epsilon: float = 0.1, delta: float | None = None,
                 bounds: Any = None, clip: float | None = DEFAULT_STANDARDIZED_CLIP,
                 neighboring_relation: str = "replace_one", random_state: Any = None,
                 budget: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.clip = clip
        self.neighboring_relation = neighboring_relation
        self.random_state = random_state
        self.budget = budget

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.non_deterministic = self.random_state is None
        return tags

    def fit(self, X: Any, y: Any = None) -> DPStandardScaler:
        """Release ``mean_`` and ``scale_`` from ``X`` ((epsilon, delta)-DP, see Notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense records.
        y : ignored

        Returns
        -------
        self
        """
        if self.bounds is None:
            raise ValueError("DPStandardScaler needs public bounds=(lower, upper) on the "
                             "features, declared without looking at the data: their widths "
                             "are the release's sensitivity.")
        X = _validate_private(self, X, accept_sparse=False, dtype=np.float64, reset=True)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"X must hold at least 2 samples; got n_samples={n}.")
        scales = private_feature_scales(X, bounds=self.bounds, epsilon=self.epsilon,
                                        delta=1.0 / n**2 if self.delta is None else self.delta,
                                        clip=self.clip,
                                        neighboring_relation=self.neighboring_relation,
                                        random_state=self.random_state, budget=self.budget)
        self._scales = scales
        self.mean_ = scales.centre
        self.scale_ = scales.scale
        self.privacy_ = scales.privacy
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Standardize ``X`` with the released centres and scales (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense records with the features seen in ``fit`` (any records: the map is fixed).

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            The standardized records, in ``[-clip, clip]`` unless ``clip`` is None.
        """
        check_is_fitted(self, "_scales")
        X = _validate_private(self, X, accept_sparse=False, dtype=np.float64, reset=False)
        return self._scales.transform(X)
