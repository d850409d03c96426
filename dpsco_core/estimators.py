"""scikit-learn-style private linear models: ``DPLasso``, ``DPElasticNet``, ``DPLogisticRegression``.

The objectives follow scikit-learn's conventions, so that a private model can replace its
non-private counterpart with the same hyperparameters (:math:`b` the intercept):

- ``DPLasso(alpha)``: :math:`\\frac{1}{2n}\\|y - Xw - b\\|^2 + \\alpha \\|w\\|_1` (``Lasso``);
- ``DPElasticNet(alpha, l1_ratio)``: :math:`\\frac{1}{2n}\\|y - Xw - b\\|^2 +
  \\alpha\\rho\\|w\\|_1 + \\frac{\\alpha(1-\\rho)}{2}\\|w\\|^2` (``ElasticNet``);
- ``DPLogisticRegression(C)``: :math:`\\frac1n\\sum_i \\log(1 + e^{-y_i (x_i^\\top w + b)}) +
  \\frac{1}{2nC}\\|w\\|^2` (``LogisticRegression`` divided by :math:`nC`), one-vs-rest for
  K > 2 public classes.

``fit`` trains with DP-CD (``solver="cd"``), proximal DP-SGD (``solver="sgd"``) or sufficient
statistics perturbation (``solver="ssp"``; the classifier on the logistic loss's second-order
surrogate); the default ``solver="auto"`` picks SSP or DP-CD by a public rule
(:func:`auto_solver`). ``fit`` sets ``coef_`` and ``intercept_`` (shaped as scikit-learn's), ``privacy_`` (the
:class:`~dpsco_core.privacy.PrivacyReport`) and ``n_iter_`` (data passes). A fitted estimator
holds only what ``privacy_`` covers: the training objective along the run (``history_``) is
exact, not private, and is kept only with ``diagnostics=True`` (the report then says so).

**Intercept** (``fit_intercept=True``, default). The solver trains it as the weight of one more
column, the public constant ``intercept_scaling`` appended to every record: its clipping and
noise are the solver's, so ``privacy_`` covers it at no extra budget; the cost is a penalty on
the intercept divided by ``intercept_scaling`` and, in DP-CD, its share of the clipping budget
(class docstrings, Notes). Dense records are first centred on the public midpoints of their
``bounds`` (the intercept takes the shift back; session 16), and ``predict`` maps records onto
the bounds as ``fit`` does. ``sample_weight`` other than None or all ones is refused: weights
would scale the sensitivity the solvers calibrate to.

**Privacy.** Each ``fit`` is one private release, (epsilon, delta)-DP as the solver states
(``privacy_`` says which neighbouring relation, mechanisms and assumptions).

**Hyperparameters** (issue 19). SSP (``solver="ssp"``, and ``"auto"`` when it picks SSP) has
none to select: its row clip is a private quantile inside the budget (or ``clip=``). DP-CD and
DP-SGD with ``step`` and ``clip`` left at None (default) take them from the noise-level rule
of :func:`dpsco_core.tuning.grids.default_hyperparameters` given a root-mean-square row norm
:math:`\rho` (``rms_row_norm``): by default (``rms_row_norm="auto"``, session 15) the fit
releases :math:`\rho` itself, as a private quantile of the row norms at 2% to 25% of the
zCDP budget (:func:`rms_quantile_epsilon`), wherever the public bounds allow (a row bound,
one scale for all features, and a label bound for the regressors), and the rest pays one
fit; a public value (``sqrt(n_features)`` for standardized features) costs nothing. With
``rms_row_norm=None`` (the default where the bounds do not allow it) ``fit`` selects step and clip privately inside the same (epsilon,
delta): by default (``selection_share=1``) the whole budget pays a random-stopping
selection over a public grid (:func:`dpsco_core.tuning.search.tune_solver`: on average
``n_trials`` = 80 trials on all the records, each scored by its noisy clipped training
objective) whose selected trial's model is released; with ``selection_share < 1`` that
share pays the selection and the rest one refit on all the records with the selected
values, ``privacy_`` being the RDP composition of both. Give ``step`` and ``clip`` to spend
the whole budget on one fit. The rule is better than the selection on every data set
measured, by far on small and many-class data (scikit-learn's digits, 10 classes: 0.609
with DP-CD's rule and the private :math:`\rho`, 0.826 with DP-SGD's, against 0.155 with the
selection; ``docs/tuning/private_rms_holdout.txt``, ``docs/tuning/rules_holdout_s14.txt``,
README). ``GridSearchCV`` (or any cross-validation) over these estimators is **not**
private as a whole: every ``fit`` it makes is one release of (epsilon, delta) on (a fold of)
the private data, the releases compose
(with ``budget=`` the total is charged and enforced: a grid of G values and k folds costs
G k + 1 fits, about ``sqrt(G k)`` to ``G k`` times epsilon under RDP composition), and the
choice of the best is made on exact, non-private scores. Use it on public data, or pass a
shared ``budget=`` to see the cost. The steps and clips
come from the public bounds (``bounds``, ``row_norm``, ``label_bound``, passed to
:class:`~dpsco_core.Problem`; the data are clipped onto them) when given; without them they
are read from the data, ``fit`` warns with ``PrivacyLeakWarning`` and ``privacy_`` is
conditional (``privacy_.unconditional`` is False). The classes of
``DPLogisticRegression`` are public (an argument, or a fixed convention), never read from ``y``.

Requires scikit-learn >= 1.6 (``pip install "dpsco-core[sklearn]"``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

# scikit-learn >= 1.6: validate_data (sklearn.utils.validation) and the __sklearn_tags__
# protocol are both new in 1.6. Checked before importing them, so that an older scikit-learn
# gets this message instead of "cannot import name 'validate_data'".
SKLEARN_MIN_VERSION = (1, 6)
_INSTALL_HINT = "pip install 'dpsco-core[sklearn]' (or: pip install 'scikit-learn>=1.6')"


def _check_sklearn_version(version: object) -> None:
    """Raise ImportError naming the minimum when scikit-learn ``version`` is older than 1.6."""
    match = re.match(r"\s*(\d+)\.(\d+)", str(version))
    if match is None or (int(match[1]), int(match[2])) < SKLEARN_MIN_VERSION:
        minimum = ".".join(map(str, SKLEARN_MIN_VERSION))
        raise ImportError(f"dpsco_core.estimators needs scikit-learn >= {minimum}; found "
                          f"scikit-learn {version}. Upgrade: {_INSTALL_HINT}")


try:
    import sklearn
except ImportError as exc:  # exercised without scikit-learn (tests/test_packaging.py)
    raise ImportError(f"dpsco_core.estimators needs scikit-learn >= 1.6: {_INSTALL_HINT}") \
        from exc
_check_sklearn_version(getattr(sklearn, "__version__", "unknown"))

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin  # noqa: E402
from sklearn.utils.multiclass import check_classification_targets  # noqa: E402
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: E402

from ._typing import ArrayLike, FloatArray, MatrixLike, RandomStateLike  # noqa: E402
from ._validation import check_int, check_real_array, check_scalar, check_sparse  # noqa: E402
from .exceptions import DPSCOWarning, PrivacyLeakWarning, external_stacklevel  # noqa: E402
from .losses import LOSS_LOGISTIC  # noqa: E402
from .penalties import L1, L2, PENALTY_L2, PENALTY_NONE, ElasticNet  # noqa: E402
from .problems import _CLASSIFICATION_KINDS, Problem  # noqa: E402
from .solvers.ssp import logistic_quadratic_surrogate  # noqa: E402
from .result import (HISTORY_OBJECTIVE_CONDITION, as_held_condition,  # noqa: E402
                     without_objective_condition)

if TYPE_CHECKING:
    from typing_extensions import Self

    from .penalties import Penalty
    from .privacy.budget import Budget
    from .result import Result

__all__ = ["DPLasso", "DPElasticNet", "DPLogisticRegression", "auto_solver",
           "rms_quantile_epsilon", "logistic_quadratic_surrogate", "feature_scaling_noise"]


def _structure_checked(X):
    """X with its sparse structure validated (scikit-learn's checks would run SciPy's unchecked
    C++ conversions on it first) and dense dtypes scikit-learn accepts but we do not (masked
    arrays, timedelta64) rejected."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return check_sparse(X, "X")
    if isinstance(X, np.ndarray) and (isinstance(X, np.ma.MaskedArray) or X.dtype.kind in "mM"):
        check_real_array(X, "X")     # raises; other dtypes get scikit-learn's own errors
    return X


#: What replaces the data values that scikit-learn's and NumPy's input errors quote.
_WITHHELD = " (the values are withheld from this message: the data are private)"
_RESHAPE_HINT = ("Reshape your data either using array.reshape(-1, 1) if your data has a "
                 "single feature or array.reshape(1, -1) if it contains a single sample.")


def _without_values(message: str) -> str | None:
    """``message`` with the data values it quotes removed, or None when it quotes none that
    scikit-learn or NumPy are known to quote.

    Known quoting messages: scikit-learn's "Expected 2D array, got 1D array instead:
    array=[...]" and "Complex data not supported\n[...]", its parameter validation's
    "... Got <value> instead.", NumPy's "could not convert string to float: '<entry>'" and
    "invalid literal for int() ...: '<entry>'". The prefixes name the problem; the values are
    dropped, including the traceback's chained exception (``from None``).
    """
    if "array=" in message:
        head = message.split("array=", 1)[0].rstrip(" :\n")
        return f"{head}{_WITHHELD}. {_RESHAPE_HINT}"
    if message.startswith("Complex data not supported"):
        return f"Complex data not supported{_WITHHELD}."
    if re.match(r"(could not convert|invalid literal)", message):
        return ("an entry of the data does not convert to a number" + _WITHHELD
                + ": pass real numbers (bool, integer or float).")
    if re.search(r"\bGot\b.*\binstead\b", message, flags=re.DOTALL):
        head = re.split(r"\s*\bGot\b", message, maxsplit=1)[0].rstrip(" .")
        return f"{head}{_WITHHELD}."
    return None


@contextlib.contextmanager
def _values_withheld() -> Iterator[None]:
    """Re-raise input errors of scikit-learn and NumPy without the data values they quote.

    An error message is an output: it reaches logs, notebooks and whoever queries a service
    built on these estimators, none of which ``privacy_`` accounts for. Messages of
    dpsco-core's own checks name shapes and dtypes, never values; this keeps the third-party
    ones to the same rule (tests/privacy/test_error_messages.py feeds sentinel values
    through every entry point). Errors quoting no values are re-raised unchanged.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        message = _without_values(str(exc))
        if message is None:
            raise
        try:
            withheld = type(exc)(message)
        except Exception:  # noqa: BLE001 - a type whose constructor takes other arguments
            withheld = ValueError(message) if isinstance(exc, ValueError) else TypeError(message)
        raise withheld from None


def _validate_private(estimator: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data`` on our structure check, its errors quoting no data."""
    with _values_withheld():
        return validate_data(estimator, _structure_checked(X), *args, **kwargs)


def _check_sample_weight(sample_weight, n_samples):
    """Refuse sample weights other than None or all ones (see the estimators' ``fit``).

    A weight ``w_i`` multiplies record i's term of the objective, hence its contribution to
    every clipped gradient sum: with weights up to ``w_max`` the sensitivity of each release
    is ``w_max`` times the one the solvers calibrate to, and weights computed from the data
    are themselves a release. The solvers take no weights, so weighting is refused rather
    than calibrated wrongly. All ones (what meta-estimators pass by default) is the
    unweighted fit. The message names no weight (the check reads them).
    """
    if sample_weight is None:
        return
    weights = np.asarray(sample_weight)
    if weights.shape != (n_samples,) or not np.all(weights == 1):
        raise ValueError(
            "sample_weight is not supported (only None or all ones): weighting record i by "
            "w_i scales its contribution to every clipped gradient sum, so the sensitivity "
            "the solvers calibrate their noise to would no longer hold. Fit without weights, "
            "or resample the records with weights fixed from public information.")


#: The condition a fit without public bounds adds when it selects hyperparameters.
GRID_FROM_DATA_CONDITION = ("the hyperparameter grid's clip scale and the validation loss "
                            "clip were read from the data (no public bounds)")


@dataclasses.dataclass(frozen=True)
class _TunedFit:
    """What the estimators need of a tuned fit: the model, its report and the refit's history."""

    coef: Any
    privacy: Any
    history: Any
    selection: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class _FitPlan:
    """A fit's public plan (:meth:`_DPLinearModel._fit_plan`): each of its K binary fits'
    epsilon and solver, and with ``rms_row_norm="private"`` the row-norm quantile's event
    (pure epsilon_q-DP) and the fits' relation."""

    epsilon: float
    solver: str
    quantile: Any = None
    relation: Any = None
    scaling: Any = None


def _selection_summary(tuned: Any) -> dict[str, Any]:
    """``selection_``: what the private selection released besides the model."""
    return {"step": float(tuned.candidate.step), "clip": float(tuned.candidate.clip),
            "score": float(tuned.score), "trial_epsilon": float(tuned.trial_epsilon),
            "zero_fallback": bool(tuned.zero_fallback)}


def _data_scale(problem: Problem, solver: str) -> tuple[float, float]:
    """Clip scale and validation loss clip read from the data (not private: a condition).

    The scale of :mod:`dpsco_core.tuning.grids` with the data's largest absolute feature
    values and labels in place of the public bounds."""
    import scipy.sparse as sp

    from .tuning.score import regression_loss_clip
    from .tuning.search import CLASSIFICATION_LOSS_CLIP

    X = problem.X
    absX = abs(X) if sp.issparse(X) else np.abs(X)
    big = np.asarray(absX.max(axis=0).todense() if sp.issparse(X) else absX.max(axis=0)).ravel()
    rows = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X)
                   else np.einsum("ij,ij->i", X, X))
    y = np.asarray(problem.y, dtype=np.float64)
    lam = float(np.max(np.abs(problem.loss.deriv(np.zeros_like(y), y)))) if y.size else 1.0
    scale = lam * (float(np.linalg.norm(big)) if solver == "cd" else float(rows.max()))
    if problem.loss.kind in _CLASSIFICATION_KINDS:
        loss_clip = CLASSIFICATION_LOSS_CLIP * float(np.max(problem.loss.value(np.zeros_like(y),
                                                                               y)))
    else:       # the public rule with the data's largest |y| as the label bound
        loss_clip = regression_loss_clip(problem.loss,
                                         max(float(np.max(np.abs(y), initial=0.0)), 1e-12))
    return max(scale, 1e-12), max(loss_clip, 1e-12)


#: ``solver="auto"`` runs SSP when its ridge is at most this fraction of the clipped Gram
#: matrix's mean eigenvalue (:func:`dpsco_core.solvers.ssp.ssp_ridge_ratio`), else DP-CD.
#: Measured (issue 19, ``docs/tuning/auto_solver.py`` / ``.txt``: synthetic standardized
#: regressions, epsilon = 1, 3 seeds, held-out R^2 of each solver): SSP better by 0.015 to
#: 0.07 at ratios 0.013 to 0.22, a tie at 0.30, DP-CD better by 0.03 to 0.14 from 0.27 on.
SSP_MAX_RIDGE_RATIO = 0.2

#: With a public ``rms_row_norm`` DP-CD runs the noise-level rule instead of a selection and
#: ``solver="auto"`` prefers it to SSP above this much smaller ratio (issue 19, session 14,
#: :func:`auto_solver`; ``docs/tuning/auto_solver_rms.txt``).
SSP_MAX_RIDGE_RATIO_WITH_RMS = 0.02

#: ... and when the public per-feature bounds (the intercept's column included) span at most
#: this factor. SSP clips rows and adds noise isotropically: with feature scales spread over
#: orders of magnitude the wide features set the clip and the noise swamps the narrow ones.
#: Measured (issue 19): raw California with the README's bounds (0 to 10,000 for the
#: population, 5 for the rooms per household, spread 10,000), epsilon = 1, 3 splits: SSP
#: R^2 -0.06, -0.05, -0.04 against DP-CD's -0.15, 0.26, 0.26; standardized data with bounds
#: [-5, 5] and the intercept's [0, 1] spread 5.
SSP_MAX_BOUND_SPREAD = 100.0


#: ``rms_row_norm="private"``: the quantile of the feature rows' l2 norms released as
#: :math:`\rho` (issue 19, session 15; ``docs/tuning/private_rms_feasibility.txt``, at a
#: fixed epsilon_q = 0.05: on 11 held-out tasks the 0.75-quantile scored within 0.015 of the
#: declared ``sqrt(n_features)`` on 10 (wine, 143 records: 0.800 against 0.891), and above
#: the median on the two smallest, wine and iris, by 0.04).
RMS_QUANTILE = 0.75

#: ... and its pure epsilon_q (:func:`rms_quantile_epsilon`): the one whose rank error
#: ``2 log(G) / epsilon_q`` (G = 37 grid points) is this fraction of the n records, kept
#: between these shares of the fit's zCDP budget (:func:`dpsco_core.privacy.pure_share_epsilon`;
#: at epsilon = 1: 0.25 gives 0.08 at delta = 1e-8, 0.02 gives 0.023).
RMS_QUANTILE_RANK_FRACTION = 0.1
RMS_QUANTILE_MIN_SHARE = 0.02
RMS_QUANTILE_MAX_SHARE = 0.25

#: ... and its base measure ``(g / R)^RMS_QUANTILE_BASE_POWER`` on the grid (session 16): where
#: few records at a small epsilon_q cannot tell the grid points apart, a rho drawn too low makes
#: DP-CD's steps too long (normalized rows, whose rho is the grid's top R: diabetes R^2 -22.7
#: at epsilon = 0.25 and 0.25 at 1 with the uniform base, -0.15 and 0.37 with this one; the
#: declared R 0.13 and 0.40), while one drawn too high only shortens them (standardized data:
#: within 0.01 of the uniform base at epsilon = 1; 30 splits,
#: ``docs/tuning/private_rms_base_measure_30.txt``).
RMS_QUANTILE_BASE_POWER = 1.0

#: The noise-level rule's refusal for a regression without a public label bound.
_RULE_NEEDS_LABEL_BOUND = ("rms_row_norm= sets step and clip by the noise-level rule, whose "
                           "gradient scale at w = 0 needs the public label_bound= of the "
                           "targets.")

#: ``feature_scaling="private"`` (session 20): the share of the fit's zCDP budget (the rho
#: of (epsilon, delta), Bun and Steinke) that the feature scales' two Gaussian releases take
#: (:mod:`dpsco_core.feature_scales`); the fits get the largest epsilon whose composition
#: with them the accountant puts at epsilon. The standardized features are clipped onto
#: [-FEATURE_SCALING_CLIP, FEATURE_SCALING_CLIP], the problem's public bounds.
FEATURE_SCALING_SHARE = 0.1
FEATURE_SCALING_CLIP = 3.0
#: Above this noise (:func:`feature_scaling_noise`, in widths of the bounds) the fit warns:
#: measured at epsilon = 1 (``docs/tuning/feature_scaling_holdout.txt``, raw features with
#: declared bounds; ``feature_scaling_standardized.txt``, standardized ones), 0.002 to 0.035
#: gained on raw California and Electricity (R^2 0.52 to 0.66, accuracy 0.64 to 0.76; 2,500
#: records: 0.54 to 0.65, 0.61 to 0.73) and cost nothing to 0.04 on standardized data with
#: bounds (-5, 5); at 0.14 to 0.5 (digits, wine, iris, breast cancer, diabetes) the scales
#: are mostly noise: breast cancer fell from 0.81 to 0.64 on raw data, every such task by
#: 0.3 to 0.5 on standardized data.
FEATURE_SCALING_MAX_NOISE = 0.1
#: ``feature_scaling="auto"`` (the default) standardizes privately up to this noise: at most
#: 0.01 the release cost at most 0.005 on standardized data (California +0.04, Electricity
#: +0.001, synthetic regressions n = 10,000 to 50,000: -0.0005 to -0.005; session 20,
#: ``docs/tuning/feature_scaling_standardized.txt``) and gained 0.1 or more on raw data.
FEATURE_SCALING_AUTO_NOISE = 0.01
#: The largest noise multiplier of the scales' release (beyond it the release is noise).
MAX_NOISE_MULTIPLIER = 1e150
#: The smallest positive width of ``bounds`` with feature scaling: ``coef_`` is the
#: standardized weight over the released scale (at least ``width * 1.25e-9``), which
#: overflowed to inf from widths near 1e-300 (review, session 20).
FEATURE_SCALING_MIN_WIDTH = 1e-150
#: The spawn key of the scaling's noise under the fit's random_state: a child no other
#: stream of the fit uses (they use children 0 .. K).
_SCALING_STREAM = 2**32 - 1


def rms_quantile_epsilon(epsilon: float, delta: float, n_samples: int) -> float:
    """The pure epsilon_q of ``rms_row_norm="private"``'s quantile: a function of public
    numbers.

    The exponential mechanism's quantile over G grid points misses the target rank by more
    than ``2 (log G + t) / epsilon_q`` records with probability at most ``exp(-t)``. The
    quantile is asked for a rank error of ``RMS_QUANTILE_RANK_FRACTION`` = 0.1 of the n
    records, ``epsilon_q = 2 log(G) / (0.1 n)``, within ``RMS_QUANTILE_MIN_SHARE`` = 0.02 and
    ``RMS_QUANTILE_MAX_SHARE`` = 0.25 of the fit's zCDP budget: small data get up to a
    quarter of it (wine, 143 records, held-out accuracy 0.857 with a tenth and 0.886 with a
    quarter; the declared rho 0.891), large data almost none (California, 16,512 records:
    R^2 unchanged between a tenth and a quarter, so the fit keeps the rest); measured in
    ``docs/tuning/private_rms_holdout.txt`` (issue 19, session 15).

    Parameters
    ----------
    epsilon, delta : float
        The fit's budget.
    n_samples : int
        The public record count n.

    Returns
    -------
    float
    """
    from .privacy.calibration import pure_share_epsilon
    from .solvers.ssp import CLIP_GRID_POINTS

    n = check_int(n_samples, "n_samples", low=1)
    target = 2.0 * math.log(CLIP_GRID_POINTS) / (RMS_QUANTILE_RANK_FRACTION * n)
    low = pure_share_epsilon(epsilon, delta, RMS_QUANTILE_MIN_SHARE)
    high = pure_share_epsilon(epsilon, delta, RMS_QUANTILE_MAX_SHARE)
    return min(max(target, low), high)


def feature_scaling_noise(n_samples: int, n_features: int, epsilon: float,
                          delta: float | None = None) -> float:
    r"""The noise of ``feature_scaling="private"``'s release, in widths of the bounds.

    :math:`\sigma_u = z \sqrt{p} / n` with :math:`z = 1 / \sqrt{s \rho}`, :math:`s` =
    ``FEATURE_SCALING_SHARE`` and :math:`\rho` the zCDP parameter of (epsilon, delta) (Bun and
    Steinke): the standard deviation of the noise on each feature's released centre and mean
    absolute deviation, as a fraction of the width of its bounds. A function of public
    numbers only. Below about 0.04 the scales are accurate (measured gains on raw data with
    loose bounds); above ``FEATURE_SCALING_MAX_NOISE`` (0.1) the fit warns.

    Parameters
    ----------
    n_samples, n_features : int
        The record count and the number of features.
    epsilon : float
        The fit's epsilon.
    delta : float, optional
        The fit's delta (default ``1 / n_samples**2``, the estimators').

    Returns
    -------
    float

    Examples
    --------
    >>> from dpsco_core.estimators import feature_scaling_noise
    >>> round(feature_scaling_noise(16_000, 8, epsilon=1.0), 3)
    0.005
    """
    from .privacy.calibration import _zcdp_rho

    n = check_int(n_samples, "n_samples", low=2)
    p = check_int(n_features, "n_features", low=1)
    epsilon = check_scalar(epsilon, "epsilon", low=0.0)
    delta = 1.0 / n**2 if delta is None else check_scalar(delta, "delta", low=0.0, high=1.0)
    rho = FEATURE_SCALING_SHARE * _zcdp_rho(float(epsilon), float(delta))
    if not rho > 0.0:
        return math.inf          # rho underflows (epsilon near 1e-300): no finite noise
    return math.sqrt(p) / (n * math.sqrt(rho))


def _narrow_feature(lower: FloatArray, upper: FloatArray) -> int | None:
    """The first feature whose public bounds' width is positive but below
    ``FEATURE_SCALING_MIN_WIDTH``, or None."""
    width = upper - lower
    narrow = np.flatnonzero((width > 0) & (width < FEATURE_SCALING_MIN_WIDTH))
    return int(narrow[0]) if narrow.size else None


def auto_solver(problem: Problem, *, epsilon: float, delta: float,
                hyperparameters_given: bool = False, rms_row_norm_given: bool = False) -> str:
    """The solver of ``solver="auto"``: ``"ssp"`` or ``"cd"``, by a rule on public facts only.

    Given ``rms_row_norm`` (a public value, or released privately by the fit: ``"private"``
    and the default ``"auto"`` where the bounds allow it), DP-CD (which then runs the
    noise-level rule, no selection) unless SSP's ridge ratio is at most
    ``SSP_MAX_RIDGE_RATIO_WITH_RMS`` = 0.02, where SSP's noise is negligible. Measured (issue
    19, session 14, held-out, replace-one like SSP; ``docs/tuning/auto_solver_rms.txt``):
    DP-CD's rule above SSP at ratios 0.026 to 0.15 (standardized California R^2 0.617
    against 0.608 at epsilon = 1, 0.576 against 0.546 at 0.25; Electricity accuracy 0.7533
    against 0.7513 at epsilon = 1; synthetic regressions by up to 0.18), within 0.005 at
    0.082 and 0.097, and SSP above at 0.010 (California at epsilon = 4: 0.630 against
    0.619). Otherwise:

    SSP (:func:`dpsco_core.solvers.ssp.dp_ssp`) when the loss is a squared loss with public
    row and label bounds, or the logistic loss (L2 penalty or none; its quadratic surrogate,
    :func:`logistic_quadratic_surrogate`) with public row bounds, no DP-CD/DP-SGD
    hyperparameter was given, the public per-feature bounds span at most a factor
    ``SSP_MAX_BOUND_SPREAD`` = 100 (SSP's clip and noise are isotropic), and SSP's
    data-independent ridge is small against the Gram matrix:
    ``ssp_ridge_ratio(p, n, epsilon, delta) <= SSP_MAX_RIDGE_RATIO`` (the ratio depends on
    the dimension, the record count, epsilon and delta alone: about
    ``2 sqrt(2) s p^1.5 / n`` with ``s`` SSP's noise multiplier). Otherwise DP-CD.

    **Privacy guarantee.** The choice releases nothing about the records: it reads the
    loss, the shape, the public bounds and the budget, never ``problem.X`` or ``problem.y``
    (n is public under replace-one and zero-out, the relations of both solvers here), so it
    is 0-DP under every neighbouring relation; the fit's (epsilon, delta)-DP guarantee is the
    chosen solver's.

    Parameters
    ----------
    problem : Problem
        The training problem (its loss, shape and public bounds are read, never its data).
    epsilon, delta : float
        The fit's budget.
    hyperparameters_given : bool, default=False
        True when ``step`` or ``clip`` was given (DP-CD's hyperparameters): DP-CD then.
    rms_row_norm_given : bool, default=False
        True when the fit has an ``rms_row_norm`` (public, or released privately): DP-CD
        then, unless SSP's ridge ratio is at most ``SSP_MAX_RIDGE_RATIO_WITH_RMS`` (or
        epsilon is infinite). A fact of the estimator's options and the public bounds.

    Returns
    -------
    str
        ``"ssp"`` or ``"cd"``.
    """
    from .solvers.ssp import ssp_ridge_ratio

    if hyperparameters_given:
        return "cd"
    public = problem.public_bounds
    classification = problem.loss.kind in _CLASSIFICATION_KINDS
    if public is None or (public.label_bound is None and not classification):
        return "cd"
    if classification and (problem.loss.kind != LOSS_LOGISTIC or
                           problem.penalty.kind not in (PENALTY_L2, PENALTY_NONE)):
        return "cd"
    B = public.feature_bounds(problem.n_features)
    B = B[B > 0]
    if B.size and float(B.max()) > SSP_MAX_BOUND_SPREAD * float(B.min()):
        return "cd"
    if not math.isfinite(epsilon):
        return "ssp"
    # dp_ssp_logistic's four releases (surrogate and Newton step) share one multiplier
    ratio = ssp_ridge_ratio(problem.n_features, n_samples=problem.n_samples, epsilon=epsilon,
                            delta=delta, releases=4 if classification else 2)
    limit = SSP_MAX_RIDGE_RATIO_WITH_RMS if rms_row_norm_given else SSP_MAX_RIDGE_RATIO
    return "ssp" if ratio <= limit else "cd"


def _feature_row_norms(problem: Problem, p: int) -> FloatArray:
    """The l2 norms of the rows' first ``p`` columns (the features, without the intercept's
    column), after the problem's public bounds were enforced."""
    import scipy.sparse as sp

    X = problem.X
    if p == problem.n_features:
        return problem.row_norms()
    X = X[:, :p]
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def _private_rho_applies(problem: Problem, constant_column: bool) -> bool:
    """``rms_row_norm="auto"`` releases rho privately (as ``"private"``) when the problem
    has a finite public row bound (the quantile's grid lies below it), the features share
    one public scale (equal per-feature bounds, or a row bound alone: the standardized case
    the rule was fitted on; with bounds that differ rho's smoothness constants are upper
    bounds and the rule was slower than the selection on raw California, README) and, for a
    regression, a public label bound (the rule's gradient scale needs it): public facts
    only, ``constant_column`` saying that the last column is the intercept's. Otherwise
    ``"auto"`` is None (the private selection)."""
    bounds = problem.public_bounds
    p = problem.n_features
    # R^2 finite too: rho^2 (the smoothness constants' total) overflowed past R ~ 1.3e154
    # after the quantile's charge (bounds +-1e300; found in the session-20 review)
    if bounds is None or not bounds.row_bound(p) < 1e154:
        return False
    B = bounds.feature_bounds(p)[:p - 1 if constant_column else p]
    live = B[B > 0]
    if live.size == 0 or not np.all(live == live[0]):
        return False
    return problem.loss.kind in _CLASSIFICATION_KINDS or bounds.label_bound is not None


def _label_range(label_bound: Any, fit_intercept: bool) -> tuple[float, float | None]:
    """(centre, half-width) of the public label bound: ``Y`` means [-Y, Y], ``(lo, hi)``
    the range [lo, hi], whose centre is subtracted from the labels (a public shift: the
    bound the solvers see, and their sensitivities, halve with ``hi - lo``)."""
    if label_bound is None or np.ndim(label_bound) == 0:
        return 0.0, label_bound
    if np.shape(label_bound) != (2,):
        raise ValueError("label_bound must be a number Y (|y| <= Y) or a pair (lo, hi); got "
                         f"{label_bound!r}.")
    lo, hi = (check_scalar(v, "label_bound") for v in label_bound)
    if not lo < hi:
        raise ValueError(f"label_bound=(lo, hi) needs lo < hi; got {label_bound!r}.")
    if not fit_intercept:
        raise ValueError("label_bound=(lo, hi) centres the labels on (lo + hi) / 2, which is "
                         "an intercept: it needs fit_intercept=True (or pass the half-width "
                         "and centre the labels yourself).")
    return 0.5 * (lo + hi), 0.5 * (hi - lo)


def _intercept_problem(X: Any, y: Any, *, loss: str, penalty: Any, bounds: Any,
                       row_norm: float | None, label_bound: float | None, fit_intercept: bool,
                       intercept_scaling: float) -> tuple[Problem, FloatArray | None, float]:
    """The solver's :class:`~dpsco_core.Problem`, with the intercept column when asked for;
    the public centre subtracted from the features (None: none); the public bound on the
    norm of the features' part of its rows (the intercept's column excluded; ``inf``
    without public bounds).

    With ``fit_intercept``, every record ``x_i`` becomes ``(x_i - c, s)`` for the public
    constant ``s = intercept_scaling``, after the user's public bounds have been enforced on
    ``x_i``. The declared bounds are extended so that the solver's constants for the old
    coordinates are unchanged and the new coordinate gets the bound ``s``: per-feature bounds
    ``[max(lo_j, -R), min(hi_j, R)]`` (R the row norm, if given; ``[-R, R]`` with ``row_norm``
    alone) and ``[0, s]`` for the column; row norm ``sqrt(R^2 + s^2)``. The records already
    lie within these, so the problem's own enforcement changes nothing.

    ``c`` (session 16): for dense ``X`` the midpoints ``(lo_j + hi_j) / 2`` of those
    per-feature bounds, which then become ``[-(hi_j - lo_j) / 2, (hi_j - lo_j) / 2]`` (the row
    norm ``min(R + ||c||, ||(hi - lo) / 2||)``); 0 for symmetric bounds, for ``row_norm``
    alone and for sparse ``X`` (it would densify it). A public map of each record alone,
    absorbed by the intercept (``b - <w, c>``, :meth:`_DPLinearModel._split`): the first-order
    solvers are slow on features that share a large mean with the intercept's column (the
    held-out tasks mapped onto [0, 1] scored the majority class even without noise,
    ``docs/tuning/centred_features.txt``).
    """
    from .public_bounds import check_public_bounds

    import scipy.sparse as sp

    if not fit_intercept:
        public = check_public_bounds(bounds, row_norm, None)
        return (Problem(X, y, loss=loss, penalty=penalty, bounds=bounds, row_norm=row_norm,
                        label_bound=label_bound), None,
                math.inf if public is None else public.row_bound(X.shape[1]))

    s = intercept_scaling
    n, p = X.shape
    public = check_public_bounds(bounds, row_norm, label_bound)
    kwargs: dict[str, Any] = {}
    centre, feature_row_bound = None, math.inf
    if public is not None:
        public.check_features(p)
        if public.label_bound is not None and loss == "logistic":
            raise ValueError("label_bound applies to regression losses; logistic labels are "
                             "in {-1, +1}.")
        X, y = public.enforce(X, y)
        R = public.row_norm
        if public.bounds is not None:
            lower = np.broadcast_to(public.bounds[0], (p,))
            upper = np.broadcast_to(public.bounds[1], (p,))
            if R is not None:
                lower, upper = np.maximum(lower, -R), np.minimum(upper, R)
        else:
            lower, upper = np.full(p, -R), np.full(p, R)
        mid = (lower + upper) / 2.0
        if sp.issparse(X) and np.any(mid != 0.0):
            # public facts only (the input's format and the bounds); measured in session 19:
            # digits / 16, bounds (0, 1), 10 classes, epsilon 1, 3 splits: accuracy 0.19 to
            # 0.28 sparse against 0.40 to 0.50 dense
            warnings.warn("sparse X is not centred on the midpoints of its bounds (centring "
                          "would densify it): with bounds not symmetric about 0, such as "
                          "(0, 1), the features share the intercept's direction and the fit "
                          "can be much worse than on the same X dense. Pass a dense X if it "
                          "fits in memory.", DPSCOWarning, stacklevel=external_stacklevel())
        if not sp.issparse(X) and np.any(mid != 0.0):
            centre = mid
            X = X - centre
            half = (upper - lower) / 2.0
            lower, upper = -half, half
            if R is not None:
                R = min(R + float(np.linalg.norm(centre)), float(np.linalg.norm(half)))
        feature_row_bound = check_public_bounds((lower, upper), R, None).row_bound(p)
        kwargs = dict(bounds=(np.append(lower, 0.0), np.append(upper, s)),
                      row_norm=None if R is None else math.hypot(R, s),
                      label_bound=public.label_bound)
    column = np.full((n, 1), s)
    if sp.issparse(X):
        X = sp.hstack([X, sp.csr_array(column) if isinstance(X, sp.sparray)
                       else sp.csr_matrix(column)], format=X.format)
    else:
        X = np.hstack([X, column])
    return Problem(X, y, loss=loss, penalty=penalty, **kwargs), centre, feature_row_bound


class _DPLinearModel(BaseEstimator):
    """Shared fitting logic; subclasses define the problem."""

    # Fitted attributes (declared for the type checker; set by fit).
    coef_: Any
    intercept_: Any

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: sparse input accepted; non-deterministic without a seed.

        Returns
        -------
        sklearn.utils.Tags
        """
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    def _check_intercept_options(self) -> float:
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be a bool; got {self.fit_intercept!r}.")
        return check_scalar(self.intercept_scaling, "intercept_scaling", low=0.0)

    def _problem(self, X: Any, y: Any, loss: str, penalty: Any,
                 label_bound: float | None = None) -> Problem:
        s = self._check_intercept_options()
        bounds, row_norm = ((-FEATURE_SCALING_CLIP, FEATURE_SCALING_CLIP), None) \
            if self._scaling_mode() else (self.bounds, self.row_norm)
        problem, self._feature_centre, self._feature_row_bound = _intercept_problem(
            X, y, loss=loss, penalty=penalty, bounds=bounds, row_norm=row_norm,
            label_bound=label_bound, fit_intercept=bool(self.fit_intercept),
            intercept_scaling=s)
        return problem

    def _scaling_mode(self) -> bool:
        """Whether this fit standardizes its features privately (decided by :meth:`_scaled`
        from ``feature_scaling`` and public facts)."""
        return getattr(self, "_scaling_on", False)

    def _check_feature_scaling(self) -> str | None:
        """``feature_scaling`` validated: None, "auto" or "private"."""
        if self.feature_scaling is None:
            return None
        if not (isinstance(self.feature_scaling, str) and
                self.feature_scaling in ("auto", "private")):
            raise ValueError("feature_scaling must be 'auto', 'private' or None; got "
                             f"{self.feature_scaling!r}.")
        return str(self.feature_scaling)

    def _scaling_auto_applies(self, X: Any, delta: float) -> bool:
        """``feature_scaling="auto"``: whether to standardize privately, from public facts
        only (X's format and shape, the options, the budget): dense X, an intercept,
        per-feature ``bounds`` without ``row_norm``, a finite epsilon, no budget or an
        ``"rdp"`` one, and
        :func:`feature_scaling_noise` at most ``FEATURE_SCALING_AUTO_NOISE``."""
        import scipy.sparse as sp

        from .feature_scales import _bounds
        from .privacy.budget import Budget

        if (sp.issparse(X) or not self.fit_intercept or self.row_norm is not None
                or self.bounds is None or not math.isfinite(self.epsilon)):
            return False
        if isinstance(self.budget, Budget) and self.budget.accountant != "rdp":
            # the scales' zCDP releases: a "gdp" or "pld" budget cannot compose them, and
            # "basic-composition" charges them their own delta besides the fits' (the default
            # refused every such fit, ValueError or UnsupportedEventError)
            return False
        try:
            lower, upper = _bounds(self.bounds, X.shape[1])
        except (ValueError, TypeError):
            return False                  # the problem's own checks name the error
        if not np.any(upper > lower) or _narrow_feature(lower, upper) is not None:
            return False
        noise = feature_scaling_noise(X.shape[0], X.shape[1], float(self.epsilon), delta)
        return noise <= FEATURE_SCALING_AUTO_NOISE

    def _scaling_noise_multiplier(self, delta: float) -> float:
        """z of the feature scales' releases: their two Gaussians take FEATURE_SCALING_SHARE
        of the zCDP rho of (epsilon, delta) (public arguments only)."""
        from .privacy.calibration import _zcdp_rho

        rho = FEATURE_SCALING_SHARE * _zcdp_rho(float(self.epsilon), delta)
        z = 1.0 / math.sqrt(rho) if rho > 0.0 else math.inf
        if not z <= MAX_NOISE_MULTIPLIER:
            # public arguments only; refused before anything is charged
            raise ValueError(f"epsilon={self.epsilon!r} (delta={delta!r}) is too small for the "
                             f"private feature scales: their noise multiplier would be {z:.3g}."
                             " Give a larger epsilon, or feature_scaling=None.")
        return z

    def _scaling_event(self, delta: float) -> Any:
        """The feature scales' event (None without ``feature_scaling`` or at an infinite
        epsilon, where the exact scales are used: nothing to protect)."""
        from .feature_scales import scaling_event

        if not self._scaling_mode() or not math.isfinite(self.epsilon):
            return None
        return scaling_event(self._scaling_noise_multiplier(delta))

    def _scaled(self, X: Any, standin: Any, K: int, delta: float) -> Any:
        """X standardized by privately released feature scales (``feature_scaling=
        "private"``), or X itself.

        ``standin(Z)`` builds the fit's first problem on features ``Z``: called on zeros of
        X's shape (public facts: the shape, the standardized bounds, the options), it gives
        the plan and, with a ``budget``, every release the fit will charge, which the budget
        checks together with the scales' before the scales are charged (the fit is refused
        whole, nothing spent). The scales are then released
        (:func:`dpsco_core.feature_scales.release_feature_scales`, from the fit's own stream
        ``_SCALING_STREAM``) under the fits' relation, and kept for ``predict`` and
        ``coef_``.
        """
        import scipy.sparse as sp

        from ._random import check_random_state, child_seed_sequences
        from .feature_scales import _bounds, release_feature_scales
        from .privacy.budget import Budget
        from .tuning.search import _default_relation

        from .solvers._common import check_solver_epsilon

        self._feature_scales = None
        self._scaling_on = False
        mode = self._check_feature_scaling()
        if mode is None:
            return X
        check_solver_epsilon(self.epsilon)         # named here, before it is used
        if mode == "auto" and not self._scaling_auto_applies(X, delta):
            self._hint_bounds_without_zero(X, delta)
            return X
        if sp.issparse(X):
            raise TypeError("feature_scaling='private' centres the features, which makes a "
                            "sparse X dense: pass X.toarray(), or leave feature_scaling=None.")
        if not self.fit_intercept:
            raise ValueError("feature_scaling='private' centres the features on released "
                             "centres, which the intercept absorbs: it needs "
                             "fit_intercept=True.")
        if self.row_norm is not None:
            raise ValueError("feature_scaling='private' takes per-feature bounds=(lower, "
                             "upper), not row_norm (the standardized rows are bounded by the "
                             "clip instead).")
        if self.bounds is None:
            raise ValueError("feature_scaling='private' needs public per-feature "
                             "bounds=(lower, upper), declared without looking at the data: "
                             "their widths are the release's sensitivity.")
        n, p = X.shape
        lower, upper = _bounds(self.bounds, p)
        narrow = _narrow_feature(lower, upper)
        if narrow is not None:
            # public bounds only; before anything is charged
            raise ValueError(f"feature_scaling='private' needs bounds whose widths upper - "
                             f"lower are 0 (a constant feature) or at least "
                             f"{FEATURE_SCALING_MIN_WIDTH:g} (feature {narrow}'s is smaller): "
                             "coef_ on the records as given would overflow. Declare lower == "
                             "upper, or rescale the feature.")
        self._scaling_on = True
        if math.isfinite(self.epsilon):
            noise = feature_scaling_noise(n, p, float(self.epsilon), delta)
            if noise > FEATURE_SCALING_MAX_NOISE:
                # public facts only (n, p, epsilon, delta)
                warnings.warn(f"feature_scaling='private': the scales' noise is {noise:.2g} "
                              f"of the bounds' widths ({n} records, {p} features, epsilon "
                              f"{float(self.epsilon):g}); above {FEATURE_SCALING_MAX_NOISE:g} "
                              "the released scales are mostly noise and the fit was worse "
                              "than with the bounds alone on every data set measured. "
                              "Consider feature_scaling=None.", DPSCOWarning,
                              stacklevel=external_stacklevel())
        first = standin(np.zeros((n, p)))
        plan = self._fit_plan(first, K, delta)
        relation = ("replace_one" if plan.solver != "sgd" else
                    _default_relation("sgd", self._sampling()))
        if isinstance(self.budget, Budget) and plan.scaling is not None:
            # the scales' own delta: the fit's (charged only by "basic-composition", which
            # cannot convert their zCDP event without one)
            self.budget.check_releases([(plan.scaling, delta)] +
                                       self._planned_releases(first, plan, K, delta),
                                       neighboring_relation=relation)
        root = check_random_state(self.random_state)
        seed = child_seed_sequences(root, 1, offset=_SCALING_STREAM)[0]
        z = 0.0 if plan.scaling is None else self._scaling_noise_multiplier(delta)
        scales = release_feature_scales(X, bounds=(lower, upper), noise_multiplier=z,
                                        clip=FEATURE_SCALING_CLIP,
                                        neighboring_relation=relation, random_state=seed,
                                        budget=self.budget, delta=delta)
        self._feature_scales = scales
        return scales.transform(X)

    def _hint_bounds_without_zero(self, X: Any, delta: float) -> None:
        """``"auto"`` that does not scale, given bounds not containing 0 (accepted only with
        the private scales): the problem would refuse them with "must contain 0"; say why
        "auto" did not scale and that ``"private"`` accepts them (public facts only)."""
        from .feature_scales import _bounds

        try:
            lower, upper = _bounds(self.bounds, X.shape[1])
        except (ValueError, TypeError):
            return                        # the problem's own checks name the error
        if not (np.any(lower > 0) or np.any(upper < 0)):
            return
        why = "no finite epsilon"
        if math.isfinite(self.epsilon):
            noise = feature_scaling_noise(X.shape[0], X.shape[1], float(self.epsilon), delta)
            why = (f"their noise would be {noise:.2g} of the bounds' widths (above "
                   f"{FEATURE_SCALING_AUTO_NOISE:g})" if noise > FEATURE_SCALING_AUTO_NOISE
                   else "the options or the input do not allow them (dense X, "
                   "fit_intercept=True, no row_norm, no budget or an 'rdp' one)")
        raise ValueError("bounds must contain 0 (lower <= 0 <= upper for every feature) unless "
                         "the fit standardizes privately; feature_scaling='auto' did not ("
                         f"{why}). Pass feature_scaling='private' to accept these bounds, or "
                         "bounds containing 0 (a feature in [1, 7] takes (0, 7)).")

    def _planned_releases(self, problem: Problem, plan: _FitPlan, K: int,
                          delta: float) -> list:
        """The releases the fit will charge after the feature scales, from public facts
        (``problem`` a stand-in of the right shape): the quantile and K fits of the rule's
        event, or K of the first fit's planned charge (:meth:`_check_all_fits`)."""
        from .privacy.budget import _planned_charge

        if plan.quantile is not None:
            return ([(plan.quantile, None)] +
                    [(self._fit_event(problem, plan, K, delta), delta / K)] * K)
        with _planned_charge(self.budget) as planned, warnings.catch_warnings():
            # the stand-in's zeros, not the data: the real fit warns for what it reads
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            self._solve(problem, plan.epsilon, delta / K, self.random_state, plan.solver)
        if len(planned.releases) != 1:
            raise RuntimeError("feature scaling: the first fit's run did not stop at a single "
                               f"charge ({len(planned.releases)} recorded).")
        event, _, release_delta = planned.releases[0]
        return [(event, release_delta)] * K

    def _solve(self, problem: Problem, epsilon: float, delta: float,
               random_state: Any = None, solver: str | None = None) -> Any:
        """One private release on ``problem``: the solver (``solver``, resolved here when
        None) with the given hyperparameters, or a private selection of the missing ones and
        a refit (``tune_solver``)."""
        from .tuning.search import DEFAULT_TRIALS_SHAPE, tune_solver

        if random_state is None:
            random_state = self.random_state
        if solver is None:
            solver = self._resolved_solver(problem, epsilon, delta)
        # Not solver_ yet: a fit that raises (a refused budget) must leave no fitted attribute.
        self._solver_ran = solver
        if solver == "ssp":
            return self._run_ssp(problem, epsilon, delta, random_state)
        candidates, conditions, loss_clip = self._candidates(problem, epsilon, delta, solver)
        if len(candidates) == 1:
            return self._run(problem, candidates[0], epsilon, delta, random_state, solver)
        n_trials = check_scalar(self.n_trials, "n_trials", low=1.0, low_open=False)
        share = check_scalar(self.selection_share, "selection_share", low=0.0, high=1.0,
                             high_open=False)
        tuned = tune_solver(problem, epsilon=epsilon, delta=delta, solver=solver,
                            passes=self.passes, candidates=candidates, mean=n_trials,
                            shape=DEFAULT_TRIALS_SHAPE, loss_clip=loss_clip, refit=share < 1.0,
                            selection_share=min(share, 0.5), average=self.average,
                            batch_size=self._batch_size(problem.n_samples),
                            sampling=self._sampling(), random_state=random_state,
                            budget=self.budget,
                            conditions=conditions)
        return _TunedFit(tuned.coef, tuned.privacy, tuned.history, _selection_summary(tuned))

    def _resolved_solver(self, problem: Problem, epsilon: float, delta: float) -> str:
        """``solver``, with ``"auto"`` resolved by the public rule of :func:`auto_solver`."""
        allowed = ("auto", "cd", "sgd", "ssp")
        if self.solver not in allowed:
            raise ValueError(f"solver must be one of {allowed}; got {self.solver!r}.")
        if self.solver == "ssp" and self.step is not None:
            raise ValueError("solver='ssp' has no step; leave step=None (clip= is its public "
                             "row-norm clip).")
        if self.solver != "auto":
            return str(self.solver)
        return auto_solver(problem, epsilon=epsilon, delta=delta,
                           hyperparameters_given=self.step is not None or self.clip is not None,
                           rms_row_norm_given=self._rms_mode(problem) is not None)

    def _run_ssp(self, problem: Problem, epsilon: float, delta: float,
                 random_state: Any) -> Result:
        from .solvers.ssp import dp_ssp, dp_ssp_logistic

        clip = None if self.clip is None else check_scalar(self.clip, "clip", low=0.0)
        if problem.loss.kind in _CLASSIFICATION_KINDS:
            return dp_ssp_logistic(problem, epsilon=epsilon, delta=delta, clip=clip,
                                   random_state=random_state, budget=self.budget)
        return dp_ssp(problem, epsilon=epsilon, delta=delta, clip=clip,
                      random_state=random_state, budget=self.budget)

    def _run(self, problem: Problem, candidate: Any, epsilon: float, delta: float,
             random_state: Any, solver: str) -> Result:
        from .solvers.dp_cd import dp_cd

        constants = self._rms_constants(problem)
        if solver == "cd":
            return dp_cd(problem, epsilon=epsilon, delta=delta, passes=self.passes,
                         step=candidate.step, clip=candidate.clip, average=self.average,
                         random_state=random_state, budget=self.budget,
                         smoothness="auto" if constants is None else constants[0])
        from .solvers.dp_sgd import dp_sgd

        return dp_sgd(problem, epsilon=epsilon, delta=delta, passes=self.passes,
                      batch_size=self._batch_size(problem.n_samples), step=candidate.step,
                      clip=candidate.clip, sampling=self._sampling(), random_state=random_state,
                      budget=self.budget,
                      smoothness="auto" if constants is None else constants[1])

    def _rms_mode(self, problem: Problem) -> str | None:
        """``"public"`` (a number), ``"private"`` or None, with ``rms_row_norm`` validated;
        ``"auto"`` is ``"private"`` where :func:`_private_rho_applies` to ``problem`` (public
        facts only), else None."""
        if self.rms_row_norm is None:
            return None
        if isinstance(self.rms_row_norm, str):
            if self.rms_row_norm not in ("auto", "private"):
                raise ValueError("rms_row_norm must be a positive number, 'auto', 'private' or "
                                 f"None; got {self.rms_row_norm!r}.")
            if self.rms_row_norm == "auto" and not _private_rho_applies(
                    problem, bool(self.fit_intercept)):
                return None
            return "private"
        check_scalar(self.rms_row_norm, "rms_row_norm", low=0.0)
        return "public"

    def _rms_row_norm(self, problem: Problem) -> float | None:
        """rho: the public ``rms_row_norm``, the value this fit released for ``"private"``
        (None before the release), or None."""
        mode = self._rms_mode(problem)
        if mode == "private":
            return getattr(self, "_rho_released", None)
        return None if mode is None else check_scalar(self.rms_row_norm, "rms_row_norm",
                                                      low=0.0)

    def _fit_plan(self, problem: Problem, K: int, delta: float) -> _FitPlan:
        """Each of the K fits' epsilon and solver, and the private row-norm quantile's plan,
        from public facts only (``problem``'s shape and bounds, the budget, the options).

        One fit without a quantile: the whole epsilon. Otherwise each fit gets the largest
        epsilon whose K-fold composition, with the quantile's pure ``epsilon_q`` when
        ``rms_row_norm="private"``, the accountant puts at ``epsilon``
        (:func:`_one_vs_rest_share`). ``"auto"`` runs SSP (no quantile: its clip quantile is
        its own) when :func:`auto_solver` picks it at SSP's share. DP-CD and DP-SGD fits'
        events (their own, or a private selection's) come from public arguments: the
        schedule, ``n``, ``p`` and the hyperparameters' count (one pair, or the grid). Where
        no share applies (an infinite epsilon), ``epsilon / K``."""
        from .privacy.events import EpsilonDeltaDpEvent
        from .solvers._common import check_solver_epsilon
        from .tuning.search import DEFAULT_TRIALS_SHAPE, _default_relation

        # the solvers' range, checked before the quantile or a share is computed from it (an
        # epsilon of 1e300 reached the calibration of the K fits' share as inf, and a budget's
        # check of the quantile and the fits raised naming target_epsilon; found by hypothesis,
        # session 17)
        check_solver_epsilon(self.epsilon)
        base = self.epsilon / K
        if not math.isfinite(self.epsilon):
            return _FitPlan(base, self._resolved_solver(problem, base, delta / K))
        # the feature scales' event (feature_scaling="private"), composed before every fit
        prior = self._scaling_event(delta)
        ssp_epsilon = None
        if self.solver in ("auto", "ssp"):
            ssp_epsilon = (self.epsilon if K == 1 and prior is None else
                           _ssp_one_vs_rest_epsilon(float(self.epsilon), float(delta), K,
                                                    self.clip is not None, prior))
            if self._resolved_solver(problem, ssp_epsilon, delta / K) == "ssp":
                return _FitPlan(ssp_epsilon, "ssp", scaling=prior)
        solver = self._resolved_solver(problem, base, delta / K)
        if solver not in ("cd", "sgd"):
            if prior is not None:
                # SSP at the basic share but not at SSP's composed share: any epsilon below
                # the largest within the budget is within it
                within = ssp_epsilon if ssp_epsilon is not None else _ssp_one_vs_rest_epsilon(
                    float(self.epsilon), float(delta), K, self.clip is not None, prior)
                return _FitPlan(min(base, within), solver, scaling=prior)
            return _FitPlan(base, solver)
        rule = ((self.step is not None and self.clip is not None) or
                self._rms_mode(problem) is not None)
        quantile = (self._rms_mode(problem) == "private" and
                    not (self.step is not None and self.clip is not None))
        if quantile and problem.loss.kind not in _CLASSIFICATION_KINDS and (
                problem.public_bounds is None or problem.public_bounds.label_bound is None):
            # _candidates' refusal, made here from public facts: it came after the quantile
            # (and the feature scales) had been charged (review, session 20)
            raise ValueError(_RULE_NEEDS_LABEL_BOUND)
        if K == 1 and not quantile and prior is None:
            return _FitPlan(self.epsilon, solver)
        eps_q = (rms_quantile_epsilon(self.epsilon, delta, problem.n_samples) if quantile
                 else 0.0)
        n = problem.n_samples
        if rule:       # one fit, no selection
            search = None
        else:
            share = check_scalar(self.selection_share, "selection_share", low=0.0, high=1.0,
                                 high_open=False)
            search = (float(check_scalar(self.n_trials, "n_trials", low=1.0,
                                         low_open=False)),
                      float(DEFAULT_TRIALS_SHAPE), share < 1.0, min(share, 0.5))
        sampling = self._sampling() if solver == "sgd" else "poisson"
        plan = (solver, n, problem.n_features, float(self.passes), self._batch_size(n),
                bool(self.average), sampling, search)
        epsilon_fit = _iterative_one_vs_rest_epsilon(float(self.epsilon), float(delta), K,
                                                     plan, eps_q, prior)
        if not quantile:
            if prior is not None:
                # the share is this solver's (its events were composed): kept whatever auto
                # would resolve at it
                return _FitPlan(epsilon_fit, solver, scaling=prior)
            if self._resolved_solver(problem, epsilon_fit, delta / K) != solver:
                return _FitPlan(base, self._resolved_solver(problem, base, delta / K))
            return _FitPlan(epsilon_fit, solver)
        return _FitPlan(epsilon_fit, solver, EpsilonDeltaDpEvent(eps_q, 0.0),
                        _default_relation(solver, sampling), scaling=prior)

    def _rms_constants(self, problem: Problem) -> tuple[FloatArray, float] | None:
        """DP-CD's M_j and DP-SGD's beta from the public ``rms_row_norm``
        (:func:`~dpsco_core.public_bounds.rms_smoothness`: equal second moments rho^2 / p
        under one public scale, upper bounds min(B_j^2, rho^2) under bounds that differ, the
        intercept's column exact), or None without it."""
        from .public_bounds import rms_smoothness

        rho = self._rms_row_norm(problem)
        if rho is None:
            return None
        s = float(self.intercept_scaling) if self.fit_intercept else None
        p = problem.n_features
        B = None
        if problem.public_bounds is not None:
            B = problem.public_bounds.feature_bounds(p)[:p - (s is not None)]
        return rms_smoothness(problem.loss, rho, p, feature_bounds=B, constant_column=s)

    def _batch_size(self, n: int) -> int:
        """DP-SGD's batch size for n public records: ``batch_size`` (at most n), or
        :func:`~dpsco_core.tuning.grids.auto_batch_size` for ``"auto"``."""
        from .tuning import grids

        if isinstance(self.batch_size, str) and self.batch_size == "auto":
            return grids.auto_batch_size(n, check_scalar(self.passes, "passes", low=0.0))
        return min(check_int(self.batch_size, "batch_size", low=1), n)

    def _sampling(self) -> str:
        if self.sampling not in ("poisson", "shuffle"):
            raise ValueError(f"sampling must be 'poisson' or 'shuffle'; got {self.sampling!r}.")
        return str(self.sampling)

    def _candidates(self, problem: Problem, epsilon: float, delta: float,
                    solver: str) -> tuple[list, tuple, Any]:
        """The public candidates (step, clip), the conditions of their scale, the loss clip.

        Given ``step`` and ``clip``: that pair alone. Given ``rms_row_norm``: the missing
        ones from the noise-level rule (:func:`dpsco_core.tuning.grids.default_hyperparameters`
        with the intercept's column in the row norm, at this fit's epsilon, delta and passes),
        one pair, no selection. Otherwise the grid of
        :func:`dpsco_core.tuning.grids.candidate_grid` on the missing ones (a single pair,
        the default rule, when epsilon is infinite: there is nothing to protect and no
        selection runs). The grid's scale comes from the public bounds; without them (or
        without ``label_bound`` for regression) it is read from the data, which ``fit``
        announces with a PrivacyLeakWarning and the report lists as a condition.
        """
        from .tuning import grids

        step = None if self.step is None else check_scalar(self.step, "step", low=0.0)
        clip = None if self.clip is None else check_scalar(self.clip, "clip", low=0.0,
                                                           allow_inf=True)
        if step is not None and clip is not None:
            return [grids.Candidate(step, clip)], (), None
        rho = self._rms_row_norm(problem)
        if rho is not None:
            s = float(self.intercept_scaling) if self.fit_intercept else 0.0
            if problem.loss.kind not in _CLASSIFICATION_KINDS and (
                    problem.public_bounds is None or problem.public_bounds.label_bound is None):
                raise ValueError(_RULE_NEEDS_LABEL_BOUND)
            from .tuning.search import _default_relation

            batch = self._batch_size(problem.n_samples)
            sampling = self._sampling() if solver == "sgd" else "poisson"
            # the run's relation: replace-one for DP-CD and shuffled DP-SGD, zero-out for
            # Poisson DP-SGD (the solvers' defaults, which _run keeps)
            rule = grids.default_hyperparameters(
                problem, solver, rms_row_norm=math.hypot(rho, s), epsilon=epsilon,
                delta=delta, passes=float(self.passes), sampling=sampling, batch_size=batch,
                neighboring_relation=_default_relation(solver, sampling))
            if solver == "sgd" and step is None:
                # the step for prediction: the reproduction's 0.1 takes too few effective
                # steps on small data (diagnosis.md, section 15)
                rule = grids.Candidate(grids.prediction_sgd_step(
                    problem.n_samples, problem.n_features, epsilon=epsilon, delta=delta,
                    passes=float(self.passes), batch_size=batch, sampling=sampling), rule.clip)
            return [grids.Candidate(rule.step if step is None else step,
                                    rule.clip if clip is None else clip)], (), None
        conditions: tuple = ()
        try:
            scale = grids.gradient_scale(problem, solver)
            loss_clip = None
        except ValueError:
            scale, loss_clip = _data_scale(problem, solver)
            conditions = (GRID_FROM_DATA_CONDITION,)
            warnings.warn(f"{GRID_FROM_DATA_CONDITION}: pass bounds= (and label_bound= for "
                          "regression), or step= and clip=.", PrivacyLeakWarning,
                          stacklevel=external_stacklevel())
        if not math.isfinite(epsilon):
            default = grids.default_hyperparameters(problem, solver, scale=scale)
            return [grids.Candidate(default.step if step is None else step,
                                    default.clip if clip is None else clip)], conditions, \
                loss_clip
        # Public bounds make DP-CD's M_j worst cases: larger steps are candidates too.
        public_cd = solver == "cd" and not conditions and problem.public_bounds is not None
        grid = grids.candidate_grid(problem, solver, scale=scale,
                                    steps=grids.PUBLIC_BOUND_CD_STEPS if public_cd else None)
        steps = sorted({c.step for c in grid}) if step is None else [step]
        clips = sorted({c.clip for c in grid}) if clip is None else [clip]
        return [grids.Candidate(a, b) for a in steps for b in clips], conditions, loss_clip

    def _delta(self, n: int) -> float:
        if n < 2:
            raise ValueError(f"X must hold at least 2 samples (records) for private training; "
                             f"got n_samples={n}.")
        return 1.0 / n**2 if self.delta is None else self.delta

    def _check_diagnostics(self) -> bool:
        if not isinstance(self.diagnostics, (bool, np.bool_)):
            raise TypeError(f"diagnostics must be a bool; got {self.diagnostics!r}.")
        return bool(self.diagnostics)

    def _split(self, coef: FloatArray) -> tuple[FloatArray, float]:
        """(weights, intercept) of a solver's coefficient vector (last entry: b / s) on the
        records as given: the features' public centre, if any, moves into the intercept."""
        if self.fit_intercept:
            w, b = coef[:-1], float(coef[-1]) * float(self.intercept_scaling)
            centre = getattr(self, "_feature_centre", None)
            if centre is not None:
                b -= float(w @ centre)
            scales = getattr(self, "_feature_scales", None)
            if scales is not None:
                # z = (x - c) / s on the clipped records: w z + b = (w / s) x + b - <w / s, c>
                w = w / scales.scale
                b -= float(w @ scales.centre)
            return w, b
        return coef, 0.0

    def _fit_problem(self, problem: Problem) -> Self:
        """One private release: the solver on ``problem`` (after the private row-norm
        quantile with ``rms_row_norm="private"``); sets the fitted attributes."""
        diagnostics = self._check_diagnostics()
        delta = self._delta(problem.n_samples)
        plan = self._fit_plan(problem, 1, delta)
        seed = self._release_row_norm(problem, plan, 1, delta)[0]
        # The history is always recorded (its passes give n_iter_, a public fact of the
        # schedule) and dropped below unless diagnostics were asked for.
        result = self._solve(problem, plan.epsilon, delta, seed, plan.solver)
        if plan.quantile is not None or plan.scaling is not None:
            _check_one_vs_rest(_event(result), 1, delta, self.epsilon,
                               result.privacy.neighboring_relation, plan.quantile, plan.solver,
                               plan.scaling)
        report = self._composed_report(plan, [result], delta)
        self.coef_, self.intercept_ = self._split(result.coef)
        self.solver_ = self._solver_ran
        self.n_iter_ = self._n_iter(result)
        self.selection_ = getattr(result, "selection", None)
        self.rms_row_norm_ = self._rms_row_norm(problem)
        self._keep(report, result.history, diagnostics)
        return self

    def _release_row_norm(self, problem: Problem, plan: _FitPlan, K: int,
                          delta: float) -> list:
        """With ``plan.quantile``: release rho, the ``RMS_QUANTILE``-quantile of the feature
        rows' norms (the intercept's public column excluded) by
        :func:`dpsco_core.mechanisms.grid_quantile` on ``dp_ssp``'s public grid below the
        features' row bound (pure epsilon_q-DP, one release for all K fits), after checking
        that ``budget`` can pay it and the K fits. Returns the K fits' seeds (independent of
        the quantile's stream)."""
        from ._random import check_random_state, child_seed_sequences
        from .mechanisms import grid_quantile
        from .privacy.budget import Budget
        from .solvers.ssp import clip_grid

        self._rho_released = None
        if plan.quantile is None:
            if K == 1:
                return [self.random_state]
            # One independent stream per binary fit: the same seed for all K would add the
            # same noise to every fit, and differences of the K models would cancel it (the
            # composition of the report assumes independent noise).
            return child_seed_sequences(check_random_state(self.random_state), K)
        # the features' own public bounds and rows: the intercept's public column is not
        # part of rho (subtracting s^2 from the rows' squared norms would cancel for large s)
        p = problem.n_features - (1 if self.fit_intercept else 0)
        # the bound of the features as the solver sees them (centred, _intercept_problem)
        R = self._feature_row_bound
        if not (math.isfinite(R) and R > 0):
            raise ValueError("rms_row_norm='private' releases a quantile of the row norms on "
                             "a public grid below the row bound: pass bounds=(lower, upper) "
                             "or row_norm=R.")
        if not R < 1e154:
            # public: rho^2 of a quantile near R would overflow the smoothness constants
            raise ValueError(f"rms_row_norm='private': the features' public row bound {R:.3g} "
                             "(from bounds= / row_norm=) is too large (its square overflows); "
                             "rescale the features, or pass rms_row_norm=None.")
        seeds = child_seed_sequences(check_random_state(self.random_state), K + 1)
        if isinstance(self.budget, Budget):
            # the quantile and the K fits, refused together before any record is read (each
            # its own release, as they will be charged: at delta / K each)
            fit = self._fit_event(problem, plan, K, delta)
            self.budget.check_releases([(plan.quantile, None)] + [(fit, delta / K)] * K,
                                       neighboring_relation=plan.relation)
        grid = clip_grid(R)
        self._rho_released = grid_quantile(
            _feature_row_norms(problem, p), grid, q=RMS_QUANTILE,
            n_public=problem.n_samples,
            epsilon=plan.quantile.epsilon, random_state=seeds[K], budget=self.budget,
            neighboring_relation=plan.relation,
            log_base=RMS_QUANTILE_BASE_POWER * np.log(grid / R))
        return seeds[:K]

    def _check_all_fits(self, problem: Problem, plan: _FitPlan, K: int, delta: float,
                        seed: Any) -> None:
        """Refuse the K one-vs-rest fits together, before the first is charged: the first
        fit runs up to its charge (``_planned_charge``: it stops there, before reading the
        data) to learn its exact release, and the budget checks K such releases. The K fits
        have the same public arguments, hence the same event (``_check_one_vs_rest`` checks
        the first fit's actual one). Before session 19 only the quantile path was checked up
        front: with ``rms_row_norm=None``, given ``step``/``clip`` or ``solver="ssp"``, a
        budget too small for K fits paid the first and refused the second (found in the
        session-19 first-use review)."""
        from .privacy.budget import _planned_charge

        with _planned_charge(self.budget) as planned:
            self._solve(problem, plan.epsilon, delta / K, seed, plan.solver)
        if len(planned.releases) != 1:
            raise RuntimeError("one-vs-rest: the first fit's run did not stop at a single "
                               f"charge ({len(planned.releases)} recorded).")
        event, relation, release_delta = planned.releases[0]
        self.budget.check_releases([(event, release_delta)] * K,
                                   neighboring_relation=relation)

    def _fit_event(self, problem: Problem, plan: _FitPlan, K: int, delta: float) -> Any:
        """One of the K fits' event (the noise-level rule's single run) from public
        arguments, as the solver will report it."""
        from .tuning.search import _solver_event

        n = problem.n_samples
        return _solver_event(plan.solver, plan.epsilon, delta / K, n, problem.n_features,
                             float(self.passes), self._batch_size(n), bool(self.average),
                             self._sampling() if plan.solver == "sgd" else "poisson")

    def _composed_report(self, plan: _FitPlan, results: list, delta: float) -> Any:
        """The fit's report: the solver's own for one fit without quantile, else the RDP
        composition of the quantile's event (if any) and the K fits' events (the
        accountant's, never a sum by hand), checked against ``epsilon``."""
        from .privacy.calibration import _zcdp_rho
        from .privacy.events import ComposedDpEvent
        from .privacy.report import SEEDED_ASSUMPTION, seed_assumptions
        from .solvers._common import report_from_event

        if len(results) == 1 and plan.quantile is None and plan.scaling is None:
            return results[0].privacy
        from .feature_scales import BOUNDS_ASSUMPTION

        first = results[0].privacy
        fixed = (((plan.scaling,) if plan.scaling is not None else ()) +
                 (() if plan.quantile is None else (plan.quantile,)))
        composite = plan.quantile is not None or plan.scaling is not None
        extra_orders = sorted({a for r in results for a in (r.privacy.orders or ())} |
                              set(_quantile_extra_orders(float(self.epsilon), float(delta))
                                  if composite else ()))
        split = {}
        if composite:
            scaling_share = FEATURE_SCALING_SHARE if plan.scaling is not None else 0.0
            share = (0.0 if plan.quantile is None else
                     plan.quantile.epsilon ** 2 / (2.0 * _zcdp_rho(self.epsilon, delta)))
            if plan.scaling is not None:
                split["feature scales (share of rho)"] = scaling_share
            if plan.quantile is not None:
                split["rms_row_norm quantile (share of rho)"] = share
            split["fits (share of rho)"] = 1.0 - share - scaling_share
        # the fits ran on child seeds of random_state: whether the fit is seeded is the
        # estimator's random_state, not theirs
        assumptions = tuple(dict.fromkeys(a for r in results for a in r.privacy.assumptions
                                          if a != SEEDED_ASSUMPTION))
        assumptions += seed_assumptions(self.random_state)
        if plan.scaling is not None:
            assumptions += (BOUNDS_ASSUMPTION,
                            "feature_scaling='private': the fits ran on the features "
                            "standardized by released centres and scales (clipped means and "
                            "mean absolute deviations inside the bounds, two Gaussian "
                            f"releases) and clipped onto [-{FEATURE_SCALING_CLIP:g}, "
                            f"{FEATURE_SCALING_CLIP:g}]",)
        if plan.quantile is not None:
            assumptions += (f"rms_row_norm: the {RMS_QUANTILE}-quantile of the feature rows' "
                            "l2 norms, released by the exponential mechanism (pure epsilon "
                            f"{plan.quantile.epsilon:.4g}) on a public grid; the fits' "
                            "constants come from it",)
        report = report_from_event(
            ComposedDpEvent(fixed + tuple(_event(r) for r in results)), delta=delta,
            relation=first.neighboring_relation, budget_split=split, assumptions=assumptions,
            target_epsilon=self.epsilon, random_state=None, extra_orders=extra_orders,
            conversion=_composition_conversion(0.0 if plan.quantile is None
                                               else plan.quantile.epsilon, plan.solver,
                                               plan.scaling is not None),
            conditions=tuple(dict.fromkeys(c for r in results for c in r.privacy.conditions)))
        return dataclasses.replace(report, non_private_outputs=tuple(dict.fromkeys(
            o for r in results for o in r.privacy.non_private_outputs)))

    def _n_iter(self, result: Any) -> float:
        """Data passes of the released model's run (the schedule's: a public fact)."""
        if self.solver_ == "ssp":           # one pass forms the statistics
            return 1.0
        if result.history is None:          # a selected trial, released without refit
            return float(self.passes)
        return float(result.history.passes[-1])

    def _keep(self, report: Any, history: Any, diagnostics: bool) -> None:
        # the feature scales of this fit (feature_scaling="private"), published with the model
        scales = getattr(self, "_feature_scales", None)
        self.feature_scales_ = scales
        if scales is not None:
            self.feature_bounds_ = (np.maximum(scales.lower, scales.centre - scales.clip *
                                               scales.scale),
                                    np.minimum(scales.upper, scales.centre + scales.clip *
                                               scales.scale))
        elif hasattr(self, "feature_bounds_"):
            del self.feature_bounds_
        if diagnostics:
            # Result added HISTORY_OBJECTIVE_CONDITION to the report: the kept history is
            # outside the guarantee, and the user is told so at the call.
            self.privacy_ = as_held_condition(report)
            self.history_ = history
            warnings.warn(f"diagnostics=True keeps history_ ({HISTORY_OBJECTIVE_CONDITION}); "
                          "privacy_ covers coef_ and intercept_ only. Do not release "
                          "history_.", PrivacyLeakWarning, stacklevel=external_stacklevel())
        else:
            # Nothing but coef_, intercept_ (and public facts) is kept, so the report covers
            # all of it.
            self.privacy_ = without_objective_condition(report)
            if hasattr(self, "history_"):
                del self.history_      # a refit must not keep an earlier diagnostic

    def _validated(self, X: MatrixLike) -> Any:
        """``X`` checked against the fit and mapped onto the public bounds as ``fit`` maps
        its records (clipped onto ``bounds``, rows scaled onto ``row_norm``): the model is a
        function of the mapped record, and a raw outlier far outside the bounds would
        otherwise extrapolate it (California's occupancy of 1,243 against the bound 10)."""
        from .public_bounds import check_public_bounds

        check_is_fitted(self)
        X = _validate_private(self, X, accept_sparse=["csr", "csc"],
                          reset=False, dtype=np.float64)
        if getattr(self, "feature_scales_", None) is not None:
            import scipy.sparse as sp

            if sp.issparse(X):
                X = X.toarray()
            # clip onto the bounds, then onto centre +- clip * scale (the standardized clip):
            # the records the raw coef_ applies to
            return np.clip(X, self.feature_bounds_[0], self.feature_bounds_[1])
        public = check_public_bounds(self.bounds, self.row_norm, None)
        return X if public is None else public.enforce_features(X)


def _finite_output(values: Any, what: str, X: Any) -> Any:
    """``values`` (the model applied to ``X``), or a ValueError naming X when they overflowed:
    without public bounds (which clip X as in ``fit``) a finite X near the float range's edge
    (|x| ~ 1e308) gives inf or NaN, never a prediction (found by hypothesis, session 17)."""
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.all(np.isfinite(values)))
    if not finite:
        # the message names no entry of X (private data, as in fit)
        raise ValueError(f"the model's {what} overflow float64 on this X (its entries are too "
                         "large in absolute value): rescale X, or fit with public bounds= or "
                         "row_norm= (X is then clipped onto them, as in fit).")
    return values


_COMMON_DOC = r"""
    epsilon : float, default=1.0
        Privacy budget in (0, inf].
    delta : float or None, default=None
        In (0, 1); None means 1 / n_samples^2 (the DP-CD paper's choice).
    fit_intercept : bool, default=True
        Fit a private intercept as one more coordinate of the private solver (see Notes:
        no extra budget; the intercept is penalized with strength divided by
        ``intercept_scaling``). False: ``intercept_`` is 0 (centre the data with public
        knowledge).
    intercept_scaling : float, default=1.0
        The public value ``s`` > 0 of the synthetic constant feature, as in scikit-learn's
        ``LogisticRegression(solver="liblinear")``: a larger ``s`` weakens the penalty on
        the intercept (by ``1 / s``) but, in DP-CD, gives the intercept a larger share of the
        clipping budget (see Notes).
    solver : {"auto", "cd", "sgd", "ssp"}, default="auto"
        DP-CD (:func:`dpsco_core.dp_cd`), proximal DP-SGD (:func:`dpsco_core.dp_sgd`) or
        sufficient statistics perturbation (:func:`dpsco_core.solvers.ssp.dp_ssp`: one noisy
        release of the clipped Gram matrix and of :math:`X^\top y`, then an exact solve; for
        ``DPLogisticRegression`` on the logistic loss's second-order surrogate,
        :func:`logistic_quadratic_surrogate`, then one private Newton step,
        :func:`dpsco_core.solvers.ssp.dp_ssp_logistic`). ``"auto"``: SSP when the public bounds
        (``bounds`` or ``row_norm``, and ``label_bound`` for the regressors) are given,
        ``step``, ``clip`` and ``rms_row_norm`` are not (given ``rms_row_norm``: DP-CD with
        the noise-level rule), and SSP's data-independent ridge is small for this
        dimension, record count and budget (:func:`auto_solver`, a rule on public facts
        only); otherwise DP-CD. The fitted ``solver_`` says which ran. Measured at epsilon = 1
        (issue 19, ``reproduce tuning``, ``README.md``): SSP lifts California's held-out R^2
        from DP-CD's 0.48 to 0.58-0.61 (non-private 0.63) and Electricity's accuracy from
        0.730 to 0.751 (non-private 0.753).
    passes : float, default=20
        Data passes. DP-CD makes ``passes * (n_features + 1)`` coordinate updates with
        ``fit_intercept`` (the intercept's coordinate), ``passes * n_features`` without:
        a whole number (any ``passes`` that is one).
    step : float or None, default=None
        Step scale (DP-CD: gamma_j = step / M_j; DP-SGD: step / beta). None: selected
        privately (see ``n_trials``; DP-CD's grid: 1, 5 and 25 with public bounds, whose
        worst-case M_j make step 1 too short, else the theory's step 1 alone), or by the
        noise-level rule given ``rms_row_norm``.
    clip : float or None, default=None
        Clipping scale C (DP-CD: coordinate-wise C_j with sum C_j^2 = C^2; DP-SGD: l2 clip;
        SSP: the public row-norm clip, None choosing it privately as a quantile of the row
        norms inside the same budget).
        None: selected privately on a grid spanning [1e-3, 1] times the public gradient
        scale (:mod:`dpsco_core.tuning.grids`), or by the noise-level rule given
        ``rms_row_norm``. When ``step`` and ``clip`` are both given, no budget is spent on
        selection.
    batch_size : int or "auto", default="auto"
        (Expected) batch size of DP-SGD (at most n). ``"auto"``:
        :func:`~dpsco_core.tuning.grids.auto_batch_size`, ``min(256, floor(passes n /
        200))``: 256 from n = 2,560 records at 20 passes, smaller below so that DP-SGD takes
        about 200 steps (on scikit-learn's diabetes data, 354 records: held-out R^2 0.48
        against 0.09 with 256).
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batches (:func:`dpsco_core.dp_sgd`; ignored by DP-CD). ``"poisson"``:
        Poisson sampling, amplified, under zero-out. ``"shuffle"``: shuffled fixed-size
        batches under replace-one, DP-CD's relation (sensitivity 2 clip, one Gaussian release
        per epoch, no amplification claimed): measured at epsilon = 1 on the data of
        ``reproduce tuning`` (issue 19), a tie with DP-CD (California R^2 0.478 against
        0.477, Electricity accuracy 0.742 against 0.738) and below Poisson (0.562, 0.755),
        hence not the default (``docs/tuning/diagnosis.md``, section 5). With
        ``rms_row_norm`` the rule takes the unamplified noise level of shuffled batches
        (:func:`dpsco_core.tuning.grids.sgd_noise_level`; California R^2 0.604, Poisson's
        0.634).
    average : bool, default=False
        DP-CD only: return the average of the iterates (Algorithm 1, the theory) instead of the
        last iterate (the practical choice; ``passes`` must then be a whole number).
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy (the right choice for a real release).
    bounds : (lower, upper), optional
        Public per-feature bounds (scalars or arrays of shape (n_features,), lower <= 0 <=
        upper unless the fit standardizes privately, ``feature_scaling``), as diffprivlib's
        ``bounds``; X is clipped onto them. Give them (or
        ``row_norm``) for an unconditional guarantee: without, the solver's constants come
        from the data and ``fit`` warns (``PrivacyLeakWarning``). They bound the features
        only; the intercept's column gets the bound ``intercept_scaling``.
    row_norm : float, optional
        Public bound on every row's l2 norm (diffprivlib's ``data_norm``); rows are scaled
        down to it (before the intercept's column is appended).
    rms_row_norm : float, "auto", "private" or None, default="auto"
        The root-mean-square row norm :math:`\rho = \sqrt{\frac1n\sum_i \|x_i\|^2}` of the
        features (not the intercept's column) that sets DP-CD's and DP-SGD's step and clip by
        the noise-level rule instead of a private selection. A number: a public value, known
        without reading the data (``sqrt(n_features)`` for standardized features).
        ``"private"``: released by the fit itself, as the 0.75-quantile
        (``RMS_QUANTILE``) of the row norms chosen by the exponential mechanism
        (:func:`dpsco_core.mechanisms.grid_quantile`) on ``dp_ssp``'s public grid of 37
        points from 1/64 of the features' public row bound R to R, with the base measure
        :math:`g / R` (``RMS_QUANTILE_BASE_POWER``: where the counts cannot tell the points
        apart, a rho drawn too low costs DP-CD more than one drawn too high), at the pure
        :math:`\varepsilon_q` of :func:`rms_quantile_epsilon` (a rank error of a tenth of
        the records, within 2% and 25% of the fit's zCDP budget: at epsilon = 1 and the
        default delta = 1/n^2, 0.11 to 0.08 up to about 900 records, 0.05 at 1,438, 0.022
        to 0.025 from about 3,100 on), once for all one-vs-rest classes; the fits then get
        the largest epsilon whose composition with the quantile the accountant puts at epsilon
        (``privacy_`` is that composition; needs ``bounds`` or ``row_norm``). ``"auto"``
        (default): ``"private"`` when the problem has a public row bound, the features
        share one public scale (equal ``bounds``, or ``row_norm`` alone: the standardized
        case) and, for the regressors, ``label_bound`` is given; else None. None: the private selection
        (``n_trials``, ``selection_share``).
        With :math:`\rho`, a missing ``step`` / ``clip`` comes from the noise-level rule
        (:func:`dpsco_core.tuning.grids.default_hyperparameters`, with
        :math:`\sqrt{\rho^2 + s^2}` for the intercept's column, at this fit's epsilon,
        delta and passes; DP-SGD's step from
        :func:`dpsco_core.tuning.grids.prediction_sgd_step`, which grows as the number of
        steps falls), and the budget pays one fit (after the quantile); the solvers'
        smoothness constants come from :math:`\rho`
        (:func:`dpsco_core.public_bounds.rms_smoothness`: DP-CD's :math:`M_j` from equal
        second moments :math:`\rho^2 / p` when the features share one public scale, the
        standardized case, and from the upper bounds :math:`\min(B_j^2, \rho^2)` when
        their bounds differ; DP-SGD's :math:`\beta` the trace bound) instead of the bounds'
        worst cases, so step 1 is the theory's step for typical rows. Meant for
        standardized features: equal bounds declare one scale, and features whose second
        moments differ widely under one bound make DP-CD's steps too long for the widest.
        Regressors need ``label_bound`` (a number or a pair ``(lo, hi)``: ValueError without).
        SSP ignores it; ``solver="auto"`` runs DP-CD with the rule when :math:`\rho` is
        given or released (:func:`auto_solver`). Measured at epsilon = 1, held-out, 5 splits
        (``docs/tuning/private_rms_holdout.txt``, session 16's base measure): the private
        :math:`\rho` scores within 0.015 of the declared ``sqrt(p)`` on 9 of 11 tasks (wine,
        143 records: 0.857 against 0.891; diabetes, 354: 0.337 against 0.415 with DP-CD) and
        the default (``"auto"``) beats the former default (None: SSP or the selection) on all
        11: standardized California R^2 0.616 against SSP's 0.604, scikit-learn's digits 0.609
        against 0.155, wine 0.857 against 0.486, diabetes 0.337 against 0.192; with
        ``solver="sgd"`` 0.633, 0.826, 0.966 and 0.412 (README).
    diagnostics : bool, default=False
        Keep ``history_``, the exact training objective along the run. It is **not private**
        (knowing every other row, one value gives back the remaining one), so ``fit`` then
        warns with :class:`~dpsco_core.exceptions.PrivacyLeakWarning` and ``privacy_.conditions``
        says so. False (default): the fitted estimator holds only what ``privacy_`` covers.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged by every ``fit`` before the data are
        read; a fit that would exceed it raises
        :class:`~dpsco_core.exceptions.PrivacyBudgetError` and leaves the estimator unfitted.
        Not cloned by ``sklearn.base.clone``: every clone charges the same budget. A Budget
        refuses to be pickled (a copy in another process could spend it again), so an
        estimator holding one cannot be pickled either, nor sent to worker processes
        (``cross_val_score(..., n_jobs=2)`` raises a ``PicklingError``): run such searches
        with threads or ``n_jobs=None``, and ``set_params(budget=None)`` before saving a
        fitted model.
    n_trials : float, default=80.0
        With ``step`` or ``clip`` None: the expected number of trials of the private
        selection (random stopping with a truncated negative binomial K, eta = 2, Papernot
        and Steinke 2022, Theorem 2; :func:`dpsco_core.tuning.search.tune_solver`, whose
        ``DEFAULT_MEAN_TRIALS`` and ``DEFAULT_TRIALS_SHAPE`` it uses).
    selection_share : float, default=1.0
        With ``step`` or ``clip`` None: the share of epsilon spent on the selection, in
        (0, 1]. 1: the whole budget pays the selection, and the model released is the
        selected trial's (trained on all the records). Below 1 (at most 0.5 is used):
        the rest pays one refit on all the records with the selected values; both shares
        are scaled up together while the RDP composition stays within (epsilon, delta).
        Measured on standardized California (issue 19, when trials still trained on 80% of
        the records), the refit lost more to the noisier selection than it gained, hence the
        default.
"""

_FEATURE_SCALING_DOC = r"""    feature_scaling : "auto", "private" or None, default="auto"
        ``"private"`` (session 20): standardize the features by centres and scales released
        inside the same (epsilon, delta), then fit on them, clipped onto [-3, 3] (the
        problem's public bounds then). The release
        (:func:`dpsco_core.feature_scales.release_feature_scales`: the clipped means and mean
        absolute deviations of the features mapped into the unit box of ``bounds``, two
        exact discrete Gaussian releases) takes ``FEATURE_SCALING_SHARE`` (10%) of the fit's
        zCDP budget, and the rest is the largest epsilon whose composition with it the
        accountant puts at epsilon. Needs per-feature ``bounds`` (which then need not contain
        0), ``fit_intercept=True``, dense X, no ``row_norm``. ``coef_`` and ``intercept_``
        apply to the records as given, after ``predict`` clips them onto ``feature_bounds_``
        (the bounds, narrowed to 3 released scales around the released centres);
        ``feature_scales_`` holds the released numbers (part of the release ``privacy_``
        covers). The penalty applies to the standardized weights, as in a ``StandardScaler``
        pipeline. Measured at epsilon = 1 on raw data with honest loose bounds, where the
        bounds alone are a poor scale (README, "Private standardization"). ``"auto"``
        (default): ``"private"`` where it applies (dense X, ``fit_intercept``, per-feature
        ``bounds`` without ``row_norm``, a finite epsilon, no ``budget`` or one in the
        ``"rdp"`` mode) and its noise
        (:func:`feature_scaling_noise`, public) is at most ``FEATURE_SCALING_AUTO_NOISE``
        (0.01 of the bounds' widths: about 7,700 records for 8 features at epsilon = 1),
        else None. None: the features as given, clipped onto ``bounds``.
"""

_LABEL_BOUND_DOC = """    label_bound : float or (float, float), optional
        Public bound on the targets: ``Y`` means ``|y_i| <= Y``, ``(lo, hi)`` means
        ``lo <= y_i <= hi``; the targets are clipped onto it. With ``(lo, hi)`` the labels
        are centred on the public ``(lo + hi) / 2`` (added back to ``intercept_``), so the
        solvers see the half-width ``(hi - lo) / 2``: the sensitivities that scale with the
        label bound halve against ``max(|lo|, |hi|)`` for labels in [0, hi]. Needs
        ``fit_intercept=True``. SSP and ``solver="auto"``'s SSP need a label bound.
"""

_SELECTION_DOC = """    selection_ : dict or None
        The private selection's release besides the model, or None when no selection ran
        (SSP, or ``step`` and ``clip`` both given): ``step`` and ``clip`` selected,
        ``score`` (the selected trial's private score), ``trial_epsilon`` (each trial's
        solver epsilon) and ``zero_fallback`` (True when the selected model was certified
        worse than w = 0 and the zero model was released instead). Covered by ``privacy_``.
    rms_row_norm_ : float or None
        The rho the noise-level rule used: the public ``rms_row_norm``, or the value
        released privately (``"private"``, and ``"auto"`` where it applies; a point of the
        public grid, covered by ``privacy_``); None when no rule ran (SSP, a selection, or
        ``step`` and ``clip`` both given).
    feature_scales_ : FeatureScales or None
        With ``feature_scaling="private"``: the released centres and scales
        (:class:`dpsco_core.feature_scales.FeatureScales`, covered by ``privacy_``; its own
        ``privacy`` is None); else None.
    feature_bounds_ : (ndarray, ndarray)
        With ``feature_scaling="private"`` only: the bounds ``predict`` clips records onto,
        the public ``bounds`` narrowed to ``centre +- 3 scale``.
"""

_INTERCEPT_NOTES = r"""
    **The intercept** (``fit_intercept=True``). The solver itself trains it, as one more
    coordinate: each record :math:`x_i` (after the public bounds are enforced) becomes
    :math:`\tilde x_i = (x_i, s)` with the public constant :math:`s` = ``intercept_scaling``,
    and the model :math:`\langle x, w\rangle + b` is :math:`\langle \tilde x, \tilde w\rangle`
    with :math:`\tilde w = (w, b / s)`. Privacy: :math:`\tilde x_i` is a function of record i
    alone, so replace-one neighbours stay replace-one neighbours (and zero-out neighbours stay
    zero-out neighbours: the null record, which contributes nothing, stays null; note that a
    raw all-zero record is *not* null once the column is appended, since it moves the
    intercept), and the column's public
    bound :math:`s` (the declared bounds are extended by :math:`[0, s]`, the row norm to
    :math:`\sqrt{R^2 + s^2}`) enters the solver's constants like any feature's: the clipping
    and noise of every release cover the intercept's coordinate, :math:`b` is
    post-processing of :math:`\tilde w`, and ``privacy_`` is the solver's report unchanged.
    No budget is split off and nothing else is read from the data. Costs: (1) the penalty
    applies to :math:`b / s` like any coordinate (the kernels' prox is the same for every
    coordinate), so the intercept is penalized with strength divided by :math:`s`
    (:math:`\alpha |b| / s` for the L1 part, :math:`\lambda b^2 / (2 s^2)` for the L2 part), as
    in liblinear; (2) DP-CD: the intercept's coordinate has :math:`M = s_\ell s^2` and takes
    :math:`C_b^2 = C^2 s_\ell s^2 / \sum_k M_k` of the clipping budget (with
    standardized features, a share :math:`1 / (p + 1)` at :math:`s = 1`), and a pass is
    :math:`p + 1` coordinate updates; DP-SGD: the per-sample gradient gains one coordinate,
    inside the same l2 clip.

    **Centring** (session 16). With the intercept, dense records are centred on the public
    midpoints :math:`c_j = (lo_j + hi_j) / 2` of their per-feature bounds (after the bounds and
    the row norm are enforced): the solver sees :math:`x_i - c` with the bounds
    :math:`\pm (hi_j - lo_j) / 2` and the row norm :math:`\min(R + \|c\|, \|(hi - lo) / 2\|)`,
    and ``intercept_`` is :math:`b - \langle w, c \rangle`, so ``coef_`` and ``intercept_``
    apply to the records as given (the penalty on the intercept applies to the centred
    records' intercept :math:`b`, that is ``intercept_`` :math:`+ \langle w, c \rangle`). A
    public map of each record: the guarantee is unchanged.
    Features that share a large mean with the intercept's column (bounds [0, 1]) otherwise
    leave the first-order solvers crawling. Symmetric bounds, ``row_norm`` alone and sparse
    input (which centring would densify) are not shifted.
"""


class DPLasso(RegressorMixin, _DPLinearModel):
    __doc__ = """Differentially private LASSO: scikit-learn's ``Lasso`` objective, trained privately.

    Minimizes :math:`\\frac{1}{2n}\\|y - Xw - b\\|^2 + \\alpha \\|w\\|_1` (plus
    :math:`\\alpha |b| / s` with ``fit_intercept``; see Notes) with DP-CD or DP-SGD.

    Parameters
    ----------
    alpha : float, default=1.0
        L1 strength (scikit-learn's ``alpha``), >= 0.
""" + _COMMON_DOC + _LABEL_BOUND_DOC + _FEATURE_SCALING_DOC + """
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        0.0 with ``fit_intercept=False``.
    privacy_ : PrivacyReport
        Covers ``coef_`` and ``intercept_``.
    history_ : History
        Only with ``diagnostics=True`` (not private).
    n_iter_ : float
        Data passes done (1 for SSP, whose one pass forms the statistics).
    solver_ : str
        The solver that ran (``"auto"`` resolved): ``"cd"``, ``"sgd"`` or ``"ssp"``.
""" + _SELECTION_DOC + """    n_features_in_ : int

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit`` under the relation stated by
    ``privacy_`` (the solver's default: replace-one for ``solver="cd"``, ``"ssp"`` (so for
    ``"auto"``) and for ``solver="sgd"`` with ``sampling="shuffle"``, zero-out for
    ``solver="sgd"`` with Poisson batches, the default ``sampling``), for ``coef_`` and
    ``intercept_`` together.
""" + _INTERCEPT_NOTES + """
    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.estimators import DPLasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3))
    >>> y = X @ [1.0, -2.0, 0.0] + 5.0
    >>> model = DPLasso(alpha=0.01, epsilon=10.0, clip=5.0, bounds=(-1, 1),
    ...                 label_bound=10.0, random_state=0).fit(X, y)
    >>> model.coef_.shape, round(model.intercept_)
    ((3,), 5)
    """

    def __init__(self, alpha: float = 1.0, *, epsilon: float = 1.0, delta: float | None = None,
                 fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 solver: str = "auto", passes: float = 20, step: float | None = None,
                 clip: float | None = None,
                 batch_size: int | str = "auto", sampling: str = "poisson",
                 average: bool = False,
                 random_state: RandomStateLike = None, bounds: Any = None,
                 row_norm: float | None = None, rms_row_norm: float | str | None = "auto",
                 diagnostics: bool = False,
                 budget: Budget | None = None, n_trials: float = 80.0,
                 selection_share: float = 1.0, label_bound: Any = None,
                 feature_scaling: str | None = "auto") -> None:
        self.feature_scaling = feature_scaling
        self.sampling = sampling
        self.rms_row_norm = rms_row_norm
        self.n_trials = n_trials
        self.selection_share = selection_share
        self.bounds = bounds
        self.row_norm = row_norm
        self.label_bound = label_bound
        self.alpha = alpha
        self.diagnostics = diagnostics
        self.budget = budget
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state

    def _penalty(self) -> Penalty:
        # checked under its own name (the penalty's message would name its ``lam``)
        return L1(check_scalar(self.alpha, "alpha", low=0.0, low_open=False))

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Train privately; one (epsilon, delta)-DP release (``privacy_``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data (private). Clipped onto ``bounds`` / ``row_norm`` when given.
        y : array-like of shape (n_samples,)
            Targets (private). Clipped onto ``label_bound`` when given.
        sample_weight : None, default=None
            Not supported: only None or all ones are accepted, anything else raises
            ValueError. Weights up to a public ``w_max`` would multiply the sensitivity of
            every release by ``w_max``, which the solvers do not calibrate for.

        Returns
        -------
        object
            ``self``, fitted.

        Raises
        ------
        ValueError
            For invalid parameters or data, weights other than None / all ones, fewer than 2
            samples.
        PrivacyBudgetError
            If ``budget`` cannot pay for the fit (nothing is read from the data).

        Warns
        -----
        PrivacyLeakWarning
            Without public ``bounds`` / ``row_norm`` (the solver's constants are then read
            from the data), and with ``diagnostics=True``.
        """
        X, y = _validate_private(self, X, y, accept_sparse=["csr", "csc"],
                             dtype=np.float64,
                             y_numeric=True)
        _check_sample_weight(sample_weight, X.shape[0])
        centre, bound = _label_range(self.label_bound, bool(self.fit_intercept))
        if centre:
            y = np.asarray(y, dtype=np.float64) - centre
        penalty = self._penalty()
        X = self._scaled(X, lambda Z: self._problem(Z, np.zeros(Z.shape[0]), "half_squared",
                                                    penalty, label_bound=bound),
                         1, self._delta(X.shape[0]))
        self._fit_problem(self._problem(X, y, "half_squared", penalty, label_bound=bound))
        self.intercept_ = self.intercept_ + centre
        return self

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted targets :math:`Xw + b` (post-processing of the private model).

        ``X`` is first mapped onto the public ``bounds`` / ``row_norm`` as in ``fit``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        X = self._validated(X)
        return _finite_output(np.asarray(X @ self.coef_).reshape(-1) + self.intercept_,
                              "predictions", X)

    def score(self, X: MatrixLike, y: ArrayLike,
              sample_weight: ArrayLike | None = None) -> float:
        """Coefficient of determination :math:`R^2` of :meth:`predict` (scikit-learn's).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Test data, with the features seen in ``fit``.
        y : array-like of shape (n_samples,)
            True targets. Evaluating on the private training data is a further release,
            outside ``privacy_``.
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the score (evaluation only: no private training happens here).

        Returns
        -------
        float
            :math:`1 - \\sum_i (y_i - \\hat y_i)^2 / \\sum_i (y_i - \\bar y)^2`.
        """
        with _values_withheld():
            return float(super().score(X, y, sample_weight=sample_weight))



class DPElasticNet(DPLasso):
    __doc__ = """Differentially private elastic net: scikit-learn's ``ElasticNet`` objective.

    Minimizes :math:`\\frac{1}{2n}\\|y - Xw - b\\|^2 + \\alpha\\rho\\|w\\|_1 +
    \\frac{\\alpha(1-\\rho)}{2}\\|w\\|^2` (the penalty applies to :math:`b / s` too with
    ``fit_intercept``; see :class:`DPLasso`'s Notes).

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty strength, >= 0.
    l1_ratio : float, default=0.5
        :math:`\\rho`, in [0, 1].
""" + _COMMON_DOC + _LABEL_BOUND_DOC + _FEATURE_SCALING_DOC + """
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    privacy_ : PrivacyReport
    history_ : History
        Only with ``diagnostics=True`` (not private).
    n_iter_ : float
    solver_ : str
        The solver that ran (``"auto"`` resolved).
""" + _SELECTION_DOC + """    n_features_in_ : int

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit`` under the relation stated by
    ``privacy_``, for ``coef_`` and ``intercept_`` together; the intercept as in
    :class:`DPLasso`.
"""

    def __init__(self, alpha: float = 1.0, *, l1_ratio: float = 0.5, epsilon: float = 1.0,
                 delta: float | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, solver: str = "auto", passes: float = 20,
                 step: float | None = None, clip: float | None = None,
                 batch_size: int | str = "auto",
                 sampling: str = "poisson", average: bool = False,
                 random_state: RandomStateLike = None, bounds: Any = None,
                 row_norm: float | None = None, rms_row_norm: float | str | None = "auto",
                 diagnostics: bool = False,
                 budget: Budget | None = None, n_trials: float = 80.0,
                 selection_share: float = 1.0, label_bound: Any = None,
                 feature_scaling: str | None = "auto") -> None:
        super().__init__(alpha, epsilon=epsilon, delta=delta, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, solver=solver, passes=passes,
                         step=step, clip=clip, batch_size=batch_size, average=average,
                         random_state=random_state, bounds=bounds, row_norm=row_norm,
                         label_bound=label_bound, diagnostics=diagnostics, budget=budget,
                         n_trials=n_trials, selection_share=selection_share,
                         sampling=sampling, rms_row_norm=rms_row_norm,
                         feature_scaling=feature_scaling)
        self.l1_ratio = l1_ratio

    def _penalty(self) -> Penalty:
        alpha = check_scalar(self.alpha, "alpha", low=0.0, low_open=False)
        l1_ratio = check_scalar(self.l1_ratio, "l1_ratio", low=0.0, high=1.0, low_open=False,
                                high_open=False)
        return ElasticNet(alpha * l1_ratio, alpha * (1.0 - l1_ratio))


#: Labels of the default convention (``classes=None``): 1 is the positive class, 0 and -1 the
#: negative one; ``classes_`` is then ``[0, 1]``.
DEFAULT_CLASSES = (0, 1)
_DEFAULT_NEGATIVE_LABELS = (0, -1)


def _check_classes(classes):
    """The public classes as an array of shape (K,), K >= 2 distinct labels."""
    if classes is None:
        return np.array(DEFAULT_CLASSES)
    labels = np.asarray(classes)
    if labels.ndim != 1 or labels.shape[0] < 2 or len(set(labels.tolist())) != labels.shape[0]:
        raise ValueError("classes must be None, two distinct labels (negative, positive) or "
                         f"K > 2 distinct labels (one-vs-rest); got {classes!r}.")
    return labels.copy()


def _label_index(y, classes):
    """Index in ``classes`` of every label of ``y``, each a function of its own record only.

    ``classes=None`` (the default binary convention): 1 -> 1, 0 and -1 -> 0. Otherwise the
    position of ``y_i`` in ``classes``. Any other label raises ValueError.
    """
    if classes is None:
        index = np.where(np.isin(y, [1]), 1, np.where(np.isin(y, _DEFAULT_NEGATIVE_LABELS), 0,
                                                      -1))
        accepted = "{-1, 0, 1} (classes=None: 1 is the positive class, 0 and -1 the negative)"
    else:
        index = np.full(np.shape(y), -1)
        for k, label in enumerate(classes):
            index[y == label] = k
        # the public classes as plain Python values ([0, 1], not [np.int64(0), ...])
        accepted = f"classes={np.asarray(classes).tolist()!r}"
    # The message names no label found in y: a validation error is seen by the caller too.
    if np.any(index < 0):
        # scikit-learn's check_estimator matches "Only binary classification is supported."
        binary = ("Only binary classification is supported "
                  + ("with classes=None" if classes is None else "with two classes") + ". "
                  if classes is None or len(classes) == 2 else "")
        raise ValueError(f"y holds labels outside {accepted}. {binary}Pass classes=[...] (two "
                         "labels (negative, positive), or every one of K > 2 labels for "
                         "one-vs-rest), chosen without looking at the private labels.")
    return index


def _one_vs_rest_share(event_of: Any, epsilon: float, delta: float, K: int,
                       relation: Any, quantile_epsilon: float = 0.0,
                       solver: str = "cd", prior: Any = None) -> float:
    """Each of K fits' epsilon: the largest ``t base``, ``base = (epsilon - quantile_epsilon)
    / K`` and t in [1, epsilon / base] (bisection to a relative 1e-3, conservative end; t
    halved below 1 should the accountant not confirm basic composition's share), whose
    K-fold composition, after the pure ``quantile_epsilon``-DP row-norm quantile when it is
    positive, the RDP accountant (default orders) converts to at most ``epsilon`` at
    ``delta``, with ``event_of(e)`` the event of one fit at ``(e, delta / K)``. The
    conversion is the composed report's (:func:`_composed_report`, whose added orders can
    only lower it, :func:`_composition_conversion`). ``prior``: the feature scales' event
    (``feature_scaling="private"``), composed first. The
    events must be functions of public arguments (no record is read)."""
    from .exceptions import PrivacyBudgetError
    from .privacy.accountants import RdpAccountant
    from .privacy.calibration import _largest_within
    from .privacy.events import ComposedDpEvent

    fixed = ((prior,) if prior is not None else ()) + _quantile_events(quantile_epsilon)
    conversion = _composition_conversion(quantile_epsilon, solver, prior is not None)
    orders = _composition_orders(epsilon, delta, quantile_epsilon, prior is not None)
    base = (epsilon - quantile_epsilon) / K

    def composed(t: float) -> float:
        acc = RdpAccountant(orders, relation, conversion=conversion)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # order-grid edges of trial values
            return float(acc.compose(ComposedDpEvent(fixed + (event_of(t * base),) * K))
                         .get_epsilon(delta))

    def within(t: float) -> bool:
        try:
            return composed(t) <= epsilon
        except (ValueError, PrivacyBudgetError):
            # a per-fit epsilon too small to calibrate a fit at (a selection's trials below
            # what the solver reaches): within the budget, and the share lies above it
            return True

    top = epsilon / base
    if composed(top) <= epsilon:
        return epsilon
    low = 1.0
    while not within(low):
        low *= 0.5
        if low < 1e-6:
            # At a large delta (1 / n^2 of a few records) each fit is calibrated by a
            # conversion that reaches small epsilons with finite noise, but the accountant's
            # composition of K such fits has a floor (its largest order's log(1/delta) / (a - 1)
            # term): no share of epsilon, however small, composes within it. A fact of the
            # public arguments, not a calibration bug.
            fits = f"{K} one-vs-rest fits" if K > 1 else "one fit"
            after = " after the private row-norm quantile" if quantile_epsilon > 0 else ""
            if prior is not None:
                after = " after the private feature scales" + (" and" + after[6:] if after
                                                               else "")
            raise ValueError(
                f"epsilon={epsilon!r} is too small for {fits}{after} at delta={delta!r}: "
                f"the RDP accountant puts {'them' if K > 1 or after else 'it'} at epsilon "
                f"{composed(low):.3g} or more, however small each fit's share. Give a larger "
                "epsilon (or a smaller delta)"
                + (", or fewer classes." if K > 1 else "."))
    return base * _largest_within(within, low, top, 1e-3)


def _quantile_events(quantile_epsilon: float) -> tuple:
    """The row-norm quantile's event, pure ``quantile_epsilon``-DP, or nothing at 0."""
    from .privacy.events import EpsilonDeltaDpEvent

    return (EpsilonDeltaDpEvent(quantile_epsilon, 0.0),) if quantile_epsilon > 0 else ()


def _composition_orders(epsilon: float, delta: float, quantile_epsilon: float,
                        prior: bool = False) -> Any:
    """The Renyi orders of the estimators' composed calibrations and reports: the default
    grid (None) for one-vs-rest alone; with the row-norm quantile also 49 orders around the
    zCDP optimum ``1 + sqrt(log(1/delta) / rho)`` (``rho`` of (epsilon, delta),
    factors 1/4 to 4), where the default grid is too coarse for the fits' near-Gaussian
    curves (DP-CD's report took 0.90 of epsilon = 1 without them). The same with the
    feature scales' Gaussian releases (``prior``)."""
    from .solvers._common import _report_orders

    if quantile_epsilon <= 0 and not prior:
        return None
    return _report_orders(_quantile_extra_orders(float(epsilon), float(delta)))


def _quantile_extra_orders(epsilon: float, delta: float) -> tuple:
    from .privacy.calibration import zcdp_centred_orders

    return zcdp_centred_orders(epsilon, delta)


def _composition_conversion(quantile_epsilon: float, solver: str, prior: bool = False) -> str:
    """The RDP conversion of the estimators' composed calibrations and reports: Mironov's
    for one-vs-rest fits alone (their reports since issue 19's first one-vs-rest); with the
    row-norm quantile, the fits' own calibration's: Mironov's for DP-CD (the paper's
    Proposition 3, :func:`~dpsco_core.privacy.dp_cd_noise_multiplier`), the improved one
    for DP-SGD. So the quantile never gives a fit more than its own calibration would at
    the same epsilon (under the improved conversion DP-CD's fit alone would have about 1.12
    at epsilon = 1: a change for every DP-CD fit, not made here). The feature scales
    (``prior``) count as the quantile does."""
    return ("mironov" if (quantile_epsilon <= 0 and not prior) or solver == "cd"
            else "improved")


@functools.lru_cache(maxsize=64)
def _ssp_one_vs_rest_epsilon(epsilon: float, delta: float, K: int, public_clip: bool,
                             prior: Any = None) -> float:
    """The one-vs-rest share (:func:`_one_vs_rest_share`) of K SSP fits, whose events are
    :func:`dpsco_core.solvers.ssp.ssp_event` of public arguments, after the feature scales'
    event ``prior`` if any."""
    from .privacy.events import NeighboringRelation
    from .solvers.ssp import ssp_event

    return _one_vs_rest_share(
        lambda e: ssp_event(e, delta / K, logistic=True, public_clip=public_clip),
        epsilon, delta, K, NeighboringRelation.REPLACE_ONE,
        solver="cd" if prior is None else "ssp", prior=prior)


@functools.lru_cache(maxsize=64)
def _iterative_one_vs_rest_epsilon(epsilon: float, delta: float, K: int,
                                   plan: tuple, quantile_epsilon: float = 0.0,
                                   prior: Any = None) -> float:
    """The share (:func:`_one_vs_rest_share`) of K DP-CD or DP-SGD fits after the row-norm
    quantile's pure ``quantile_epsilon`` (0: none):
    ``plan = (solver, n, p, passes, batch_size, average, sampling, search)`` with ``search``
    None (one fit: given step and clip, or the noise-level rule; the solver's event,
    ``tune_solver``'s ``_solver_event``) or ``(mean, shape, refit, selection_share)`` (a
    private selection: :func:`dpsco_core.tuning.search.search_event`). All public
    arguments."""
    from .privacy.budget import _check_relation
    from .tuning.search import _default_relation, _solver_event, search_event

    solver, n, p, passes, batch_size, average, sampling, search = plan
    if solver == "cd":
        sampling = "poisson"
    relation = _default_relation(solver, sampling)
    if search is None:
        def event_of(e: float) -> Any:
            return _solver_event(solver, e, delta / K, n, p, passes, batch_size, average,
                                 sampling)
    else:
        mean, shape, refit, share = search

        def event_of(e: float) -> Any:
            return search_event(epsilon=e, delta=delta / K, solver=solver, n_samples=n,
                                n_features=p, passes=passes, mean=mean, shape=shape,
                                refit=refit, selection_share=share,
                                neighboring_relation=relation, batch_size=batch_size,
                                average=average, sampling=sampling)
    return _one_vs_rest_share(event_of, epsilon, delta, K, _check_relation(relation),
                              quantile_epsilon, solver, prior)


def _check_one_vs_rest(event: Any, K: int, delta: float, epsilon: float,
                       relation: Any, quantile: Any = None, solver: str = "cd",
                       prior: Any = None) -> None:
    """Raise if K fits of ``event``, after the feature scales' event ``prior`` and the
    row-norm ``quantile``'s event when there are, compose to more than ``epsilon`` (a
    calibration bug)."""
    from .privacy.accountants import RdpAccountant
    from .privacy.events import ComposedDpEvent

    fixed = ((prior,) if prior is not None else ()) + (() if quantile is None else (quantile,))
    eps_q = 0.0 if quantile is None else quantile.epsilon
    conversion = _composition_conversion(eps_q, solver, prior is not None)
    orders = _composition_orders(epsilon, delta, eps_q, prior is not None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spent = RdpAccountant(orders, relation, conversion=conversion).compose(
            ComposedDpEvent(fixed + (event,) * K)).get_epsilon(delta)
    if spent > epsilon * (1.0 + 1e-9):
        raise RuntimeError(f"privacy calibration error: {K} fits of the first fit's event"
                           f"{' after the scales or the row-norm quantile' if fixed else ''} "
                           "compose to "
                           f"epsilon {spent!r} > {epsilon!r}.")


def _label_signs(y, classes):
    """+-1 labels of ``y`` for a binary fit (``classes`` None or a pair)."""
    return np.where(_label_index(y, classes) == 1, 1.0, -1.0)


def _event(result: Result) -> Any:
    """The event tree of a solver's report (every solver's report has one)."""
    event = result.privacy.event
    if event is None:
        raise RuntimeError("a solver returned a privacy report without its event tree.")
    return event


class DPLogisticRegression(ClassifierMixin, _DPLinearModel):
    __doc__ = """Differentially private L2-regularized logistic regression (binary or one-vs-rest).

    Minimizes :math:`\\frac1n\\sum_i \\log(1 + e^{-y_i (x_i^\\top w + b)}) +
    \\frac{1}{2nC}\\|w\\|^2` (scikit-learn's ``LogisticRegression`` divided by :math:`nC`;
    with ``fit_intercept`` the penalty applies to :math:`b / s` too, see Notes), for each
    class against the rest when there are K > 2 public classes.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength (scikit-learn's ``C``): the penalty is
        ``||w||^2 / (2 n C)`` on the average loss. ``C=inf`` means no penalty.
    classes : array-like of shape (K,) or None, default=None
        The public labels, chosen without looking at the private labels; ``y`` must hold only
        these. K = 2: ``(negative, positive)``. K > 2: one-vs-rest, one binary fit per class
        each at the largest epsilon whose K-fold composition stays within epsilon (see
        Notes). None: the fixed binary convention 1 = positive, 0 or -1 = negative, with
        ``classes_ = [0, 1]``: ``predict`` then returns 0 and 1 even for labels in {-1, +1}
        (the shipped ``load_electricity``'s), and metrics that compare ``predict(X)`` with
        ``y`` (``accuracy_score``, ``scoring="accuracy"``) count every -1 as an error; pass
        ``classes=(-1, 1)`` for such labels. ``score`` is right for both encodings.
""" + _COMMON_DOC + _FEATURE_SCALING_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The public classes; ``predict`` returns only these.
    coef_ : ndarray of shape (1, n_features) or (K, n_features)
        As scikit-learn's: one row for a binary problem (the positive class), one per class
        for K > 2.
    intercept_ : ndarray of shape (1,) or (K,)
        Zeros with ``fit_intercept=False``.
    privacy_ : PrivacyReport
        Covers ``coef_`` and ``intercept_`` (for K > 2, the composition of the K fits).
    history_ : History or list of History
        Only with ``diagnostics=True`` (not private); one per binary fit for K > 2.
    n_iter_ : float
        Data passes done (of each binary fit).
    solver_ : str
        The solver that ran (``"auto"`` resolved): ``"cd"``, ``"sgd"`` or ``"ssp"``.
""" + _SELECTION_DOC + """        For K > 2 classes, a list with one dict per binary fit.
    n_features_in_ : int

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit`` under the relation stated by
    ``privacy_``, with the classes public. Encoding the labels from ``np.unique(y)`` would not
    be: when one class has a single record, replacing it changes the label set and flips the
    sign of every other record's encoded label, and ``classes_`` would tell which labels
    occur. Here each record's sign depends on that record alone, and ``classes_`` (hence K)
    on the arguments alone.

    **One-vs-rest** (K > 2 public classes). Binary fit k separates class k from the rest with
    budget (epsilon_K, delta / K); every record takes part in all K fits, so the K releases
    are composed (adaptively) by the RDP accountant into ``privacy_``, whose epsilon is at most
    epsilon. With SSP (``solver="ssp"``, or ``"auto"`` resolved to it) epsilon_K is the
    largest value whose K-fold composition the accountant converts to at most epsilon (the
    fits' events are functions of public arguments, :func:`dpsco_core.solvers.ssp.ssp_event`):
    for example 0.44 at K = 4 and epsilon = 1 on 4,000 records, against epsilon / K = 0.25,
    whose composition spent 0.57 of the budget. With DP-CD or DP-SGD likewise (session 12),
    from their events as functions of public arguments (the solver's calibration with given
    ``step`` and ``clip``, :func:`dpsco_core.tuning.search.search_event` for a private
    selection): at K = 4, epsilon / K had spent 0.49 (DP-CD) and 0.56 (DP-SGD) of epsilon
    with given hyperparameters and 0.89 with a selection. After the first binary fit, its
    own event composed K times is checked against epsilon before the others run (a
    calibration error raises). The composition needs
    independent noise: fit k draws from the k-th child stream of ``random_state`` (the same
    seed for all K would add the same noise to every fit, and differences of the K models
    would cancel it). With ``budget=``, each
    binary fit is charged before it reads the data, and the K fits (with a private
    ``rms_row_norm``, the default where the bounds allow it, the quantile too) are checked
    together before any record is read: a budget that cannot pay for them all refuses with
    nothing spent and the estimator stays unfitted (since session 19; before, outside the
    quantile's path, the first fit's charge stayed spent).

    **The default convention.** Under either neighbouring relation any two datasets of the
    right labels are linked by a chain of neighbours, so no rule that reads ``y`` can choose
    ``classes_`` privately; it can only follow the arguments. ``classes=None`` accepts the two
    usual encodings as they are (1 positive; 0 or -1 negative) and reports scikit-learn's
    ``classes_ = [0, 1]``, so a model fitted on {-1, +1} labels predicts 0 for the negative
    class: pass ``classes=(-1, 1)`` to have it predict -1. ``score`` encodes the true labels
    with the same convention, so its accuracy is right for both encodings.
""" + _INTERCEPT_NOTES

    def __init__(self, C: float = 1.0, *, classes: Any = None, epsilon: float = 1.0,
                 delta: float | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, solver: str = "auto", passes: float = 20,
                 step: float | None = None, clip: float | None = None,
                 batch_size: int | str = "auto",
                 sampling: str = "poisson", average: bool = False,
                 random_state: RandomStateLike = None, bounds: Any = None,
                 row_norm: float | None = None, rms_row_norm: float | str | None = "auto",
                 diagnostics: bool = False,
                 budget: Budget | None = None, n_trials: float = 80.0,
                 selection_share: float = 1.0, feature_scaling: str | None = "auto") -> None:
        self.feature_scaling = feature_scaling
        self.sampling = sampling
        self.rms_row_norm = rms_row_norm
        self.n_trials = n_trials
        self.selection_share = selection_share
        self.bounds = bounds
        self.row_norm = row_norm
        self.C = C
        self.budget = budget
        self.classes = classes
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state
        self.diagnostics = diagnostics

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Train privately; one (epsilon, delta)-DP release (``privacy_``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data (private). Clipped onto ``bounds`` / ``row_norm`` when given.
        y : array-like of shape (n_samples,)
            Labels (private), all in the public ``classes``.
        sample_weight : None, default=None
            Not supported: only None or all ones are accepted, anything else raises
            ValueError. Weights up to a public ``w_max`` would multiply the sensitivity of
            every release by ``w_max``, which the solvers do not calibrate for.

        Returns
        -------
        object
            ``self``, fitted.

        Raises
        ------
        ValueError
            For invalid parameters or data, labels outside ``classes``, weights other than
            None / all ones, fewer than 2 samples.
        PrivacyBudgetError
            If ``budget`` cannot pay for the fit.

        Warns
        -----
        PrivacyLeakWarning
            Without public ``bounds`` / ``row_norm``, and with ``diagnostics=True``.
        """
        from .privacy.budget import Budget

        X, y = _validate_private(self, X, y, accept_sparse=["csr", "csc"],
                             dtype=np.float64)
        check_classification_targets(y)     # rejects continuous targets, as scikit-learn does
        _check_sample_weight(sample_weight, X.shape[0])
        classes = _check_classes(self.classes)
        index = _label_index(y, None if self.classes is None else classes)
        n = X.shape[0]
        C = check_scalar(self.C, "C", low=0.0, allow_inf=True)   # numpy scalars too
        penalty = None if math.isinf(C) else L2(1.0 / (n * C))
        diagnostics = self._check_diagnostics()
        delta = self._delta(n)
        # K is len(classes), an argument: never read from y.
        targets = [1] if classes.shape[0] == 2 else list(range(classes.shape[0]))
        K = len(targets)
        coefs: list[FloatArray] = []
        intercepts: list[float] = []
        results: list[Result] = []
        X = self._scaled(X, lambda Z: self._problem(Z, np.ones(n), "logistic", penalty), K,
                         delta)

        def problem_of(k: int) -> Problem:
            return self._problem(X, np.where(index == k, 1.0, -1.0), "logistic", penalty)

        first = problem_of(targets[0])
        # the features (hence the row-norm quantile) are the same for every class
        plan = self._fit_plan(first, K, delta)
        seeds = self._release_row_norm(first, plan, K, delta)
        if K > 1 and plan.quantile is None and isinstance(self.budget, Budget):
            self._check_all_fits(first, plan, K, delta, seeds[0])
        for i, k in enumerate(targets):
            problem = first if i == 0 else problem_of(k)
            result = self._solve(problem, plan.epsilon, delta / K, seeds[i], plan.solver)
            if (K > 1 or plan.quantile is not None or plan.scaling is not None) and \
                    len(results) == 0:
                # The fits' composition, from the first fit's own event (the others have
                # the same public arguments): a share calibrated on another event than the
                # one the solver reported refuses here, before the other fits read the data.
                _check_one_vs_rest(_event(result), K, delta, self.epsilon,
                                   result.privacy.neighboring_relation, plan.quantile,
                                   plan.solver, plan.scaling)
            if K > 1 and len(results) == 0 and isinstance(self.budget, Budget):
                # The other K - 1 fits have the same event (same public arguments): refuse
                # now rather than after more of the data were used.
                self.budget.check_releases(
                    [(_event(result), delta / K)] * (K - 1),
                    neighboring_relation=result.privacy.neighboring_relation)
            coef, intercept = self._split(result.coef)
            coefs.append(coef)
            intercepts.append(intercept)
            results.append(result)
        report = self._composed_report(plan, results, delta)
        history: Any = results[0].history if K == 1 else [r.history for r in results]
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.array(intercepts)
        self.solver_ = self._solver_ran
        self.n_iter_ = self._n_iter(results[0])
        selections = [getattr(r, "selection", None) for r in results]
        self.selection_ = selections[0] if K == 1 else (
            None if selections[0] is None else selections)
        self.rms_row_norm_ = self._rms_row_norm(first)
        self._keep(report, history, diagnostics)
        self.classes_ = classes
        return self

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: multiclass only with K > 2 public ``classes``.

        Returns
        -------
        sklearn.utils.Tags
        """
        tags = super().__sklearn_tags__()
        # np.ndim: a scalar `classes` (invalid) must reach fit's clear error, not fail here
        tags.classifier_tags.multi_class = (self.classes is not None
                                            and np.ndim(self.classes) == 1
                                            and len(self.classes) > 2)
        return tags

    def decision_function(self, X: MatrixLike) -> FloatArray:
        """Margins :math:`Xw + b`: of the positive class (binary), or one per class (K > 2).

        ``X`` is first mapped onto the public ``bounds`` / ``row_norm`` as in ``fit``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, K)
            The margins: shape (n_samples,) for a binary problem, (n_samples, K) for K > 2.
        """
        X = self._validated(X)
        scores = np.asarray(X @ self.coef_.T).reshape(X.shape[0], -1) + self.intercept_
        _finite_output(scores, "margins", X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """Class probabilities, one column per class of ``classes_``.

        Binary: the logistic model's. K > 2: the one-vs-rest probabilities normalized to sum
        to one, as scikit-learn's ``OneVsRestClassifier``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, K)
            Columns in the order of ``classes_``.
        """
        z = self.decision_function(X)
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        if z.ndim == 1:
            return np.column_stack([1.0 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)

    def predict_log_proba(self, X: MatrixLike) -> FloatArray:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, K)
            Log-probabilities, columns in the order of ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _predicted_index(self, X: MatrixLike) -> np.ndarray:
        z = self.decision_function(X)     # checks that the model is fitted first
        return (z > 0).astype(int) if z.ndim == 1 else np.argmax(z, axis=1)

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted labels, from ``classes_`` only.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            One label of ``classes_`` per sample.
        """
        index = self._predicted_index(X)     # checks that the model is fitted first
        return self.classes_[index]

    def score(self, X: MatrixLike, y: ArrayLike,
              sample_weight: ArrayLike | None = None) -> float:
        """Accuracy, with ``y`` encoded by the same public convention as in ``fit``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data, with the features seen in ``fit``.
        y : array-like of shape (n_samples,)
            Labels in ``classes`` (or, with ``classes=None``, in {-1, 0, 1}). Evaluating on
            the private training data is a further release, outside ``privacy_``.
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the accuracy (evaluation only: no private training happens here).

        Returns
        -------
        float
            The fraction of correctly predicted samples (weighted).
        """
        from sklearn.metrics import accuracy_score

        check_is_fitted(self)
        with _values_withheld():
            y = np.asarray(y)
            truth = _label_index(y, None if self.classes is None else self.classes_)
            return float(accuracy_score(truth, self._predicted_index(X),
                                        sample_weight=sample_weight))
