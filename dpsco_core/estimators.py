"""scikit-learn-style private linear models: ``DPLasso``, ``DPElasticNet``, ``DPLogisticRegression``.

The objectives follow scikit-learn's conventions, so that a private model can replace its
non-private counterpart with the same hyperparameters:

- ``DPLasso(alpha)``: :math:`\\frac{1}{2n}\\|y - Xw\\|^2 + \\alpha \\|w\\|_1` (``Lasso``);
- ``DPElasticNet(alpha, l1_ratio)``: :math:`\\frac{1}{2n}\\|y - Xw\\|^2 + \\alpha\\rho\\|w\\|_1 +
  \\frac{\\alpha(1-\\rho)}{2}\\|w\\|^2` (``ElasticNet``);
- ``DPLogisticRegression(C)``: :math:`\\frac1n\\sum_i \\log(1 + e^{-y_i x_i^\\top w}) +
  \\frac{1}{2nC}\\|w\\|^2` (``LogisticRegression`` divided by :math:`nC`).

``fit`` trains with DP-CD (``solver="cd"``, default) or proximal DP-SGD (``solver="sgd"``) and
sets ``coef_``, ``privacy_`` (the :class:`~dpsco_core.privacy.PrivacyReport`) and ``n_iter_``
(data passes). A fitted estimator holds only what ``privacy_`` covers: the training objective
along the run (``history_``) is exact, not private, and is kept only with ``diagnostics=True``
(the report then says so). No intercept is fitted: an intercept learned from the data would need
its own privacy budget; centre the target with public knowledge or add a constant feature.

**Privacy.** Each ``fit`` is one private release, (epsilon, delta)-DP as the solver states
(``privacy_`` says which neighbouring relation, mechanisms and assumptions). Choosing
hyperparameters by cross-validation on the private data is not accounted. The steps and clips
come from the public bounds (``bounds``, ``row_norm``, ``label_bound``, passed to
:class:`~dpsco_core.Problem`; the data are clipped onto them) when given; without them they
are read from the data, ``fit`` warns with ``PrivacyLeakWarning`` and ``privacy_`` is
conditional (``privacy_.unconditional`` is False). The classes of
``DPLogisticRegression`` are public (an argument, or a fixed convention), never read from ``y``.

Requires scikit-learn >= 1.6 (``pip install "dpsco-core[sklearn]"``).
"""

from __future__ import annotations

import math
import re
import warnings
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
from ._validation import check_real_array, check_scalar, check_sparse  # noqa: E402
from .exceptions import PrivacyLeakWarning, external_stacklevel  # noqa: E402
from .penalties import L1, L2, ElasticNet  # noqa: E402
from .problems import Problem  # noqa: E402
from .result import (HISTORY_OBJECTIVE_CONDITION, as_held_condition,  # noqa: E402
                     without_objective_condition)

if TYPE_CHECKING:
    from typing_extensions import Self

    from .penalties import Penalty
    from .privacy.budget import Budget
    from .result import Result

__all__ = ["DPLasso", "DPElasticNet", "DPLogisticRegression"]


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


class _DPLinearModel(BaseEstimator):
    """Shared fitting logic; subclasses define the problem."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    def _solve(self, problem: Problem) -> Result:
        from .solvers.dp_cd import dp_cd

        n = problem.n_samples
        if n < 2:
            raise ValueError(f"private training needs at least 2 samples; got n_samples={n}.")
        delta = 1.0 / n**2 if self.delta is None else self.delta
        if self.solver == "cd":
            return dp_cd(problem, epsilon=self.epsilon, delta=delta, passes=self.passes,
                         step=self.step, clip=self.clip, average=self.average,
                         random_state=self.random_state, budget=self.budget)
        if self.solver == "sgd":
            from .solvers.dp_sgd import dp_sgd

            return dp_sgd(problem, epsilon=self.epsilon, delta=delta, passes=self.passes,
                          batch_size=min(self.batch_size, n), step=self.step, clip=self.clip,
                          random_state=self.random_state, budget=self.budget)
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {self.solver!r}.")

    def _fit_problem(self, problem: Problem) -> Self:
        if not isinstance(self.diagnostics, (bool, np.bool_)):
            raise TypeError(f"diagnostics must be a bool; got {self.diagnostics!r}.")
        diagnostics = bool(self.diagnostics)
        # The history is always recorded (its passes give n_iter_, a public fact of the
        # schedule) and dropped below unless diagnostics were asked for.
        result = self._solve(problem)
        self.coef_ = result.coef
        self.n_iter_ = float(result.history.passes[-1])
        self.intercept_ = 0.0
        if diagnostics:
            # Result added HISTORY_OBJECTIVE_CONDITION to the report: the kept history is
            # outside the guarantee, and the user is told so at the call.
            self.privacy_ = as_held_condition(result.privacy)
            self.history_ = result.history
            warnings.warn(f"diagnostics=True keeps history_ ({HISTORY_OBJECTIVE_CONDITION}); "
                          "privacy_ covers coef_ only. Do not release history_.",
                          PrivacyLeakWarning, stacklevel=external_stacklevel())
        else:
            # Nothing but coef_ (and public facts) is kept, so the report covers all of it.
            self.privacy_ = without_objective_condition(result.privacy)
            if hasattr(self, "history_"):
                del self.history_      # a refit must not keep an earlier diagnostic
        return self

    def _decision(self, X: MatrixLike) -> FloatArray:
        check_is_fitted(self)
        X = validate_data(self, _structure_checked(X), accept_sparse=["csr", "csc"],
                          reset=False,
                          dtype=np.float64)
        return np.asarray(X @ self.coef_).reshape(-1)


_COMMON_DOC = """
    epsilon : float, default=1.0
        Privacy budget in (0, inf].
    delta : float or None, default=None
        In (0, 1); None means 1 / n_samples^2 (the DP-CD paper's choice).
    solver : {"cd", "sgd"}, default="cd"
        DP-CD (:func:`dpsco_core.dp_cd`) or proximal DP-SGD (:func:`dpsco_core.dp_sgd`).
    passes : float, default=20
        Data passes.
    step : float, default=1.0
        Step scale (DP-CD: gamma_j = step / M_j; DP-SGD: step / beta).
    clip : float, default=1.0
        Clipping scale C (DP-CD: coordinate-wise C_j with sum C_j^2 = C^2; DP-SGD: l2 clip).
    batch_size : int, default=256
        Expected batch size of DP-SGD.
    average : bool, default=False
        DP-CD only: return the average of the iterates (Algorithm 1, the theory) instead of the
        last iterate (the practical choice; ``passes`` must then be a whole number).
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy (the right choice for a real release).
    bounds : (lower, upper), optional
        Public per-feature bounds (scalars or arrays of shape (n_features,), lower <= 0 <=
        upper), as diffprivlib's ``bounds``; X is clipped onto them. Give them (or
        ``row_norm``) for an unconditional guarantee: without, the solver's constants come
        from the data and ``fit`` warns (``PrivacyLeakWarning``).
    row_norm : float, optional
        Public bound on every row's l2 norm (diffprivlib's ``data_norm``); rows are scaled
        down to it.
    diagnostics : bool, default=False
        Keep ``history_``, the exact training objective along the run. It is **not private**
        (knowing every other row, one value gives back the remaining one), so ``fit`` then
        warns with :class:`~dpsco_core.exceptions.PrivacyLeakWarning` and ``privacy_.conditions``
        says so. False (default): the fitted estimator holds only what ``privacy_`` covers.
    budget : Budget or None, default=None
        A :class:`~dpsco_core.privacy.Budget` charged by every ``fit`` before the data are
        read; a fit that would exceed it raises
        :class:`~dpsco_core.exceptions.PrivacyBudgetError` and leaves the estimator unfitted.
        Not cloned by ``sklearn.base.clone``: every clone charges the same budget.
"""


class DPLasso(RegressorMixin, _DPLinearModel):
    __doc__ = """Differentially private LASSO: scikit-learn's ``Lasso`` objective, trained privately.

    Parameters
    ----------
    alpha : float, default=1.0
        L1 strength (scikit-learn's ``alpha``), >= 0.
""" + _COMMON_DOC + """    label_bound : float, optional
        Public bound on ``|y_i|``; the targets are clipped onto it.
""" + """
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    privacy_ : PrivacyReport
    history_ : History
        Only with ``diagnostics=True`` (not private).
    n_iter_ : float
        Data passes done.

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit``, as stated by ``privacy_``.
    """

    def __init__(self, alpha: float = 1.0, *, epsilon: float = 1.0, delta: float | None = None,
                 solver: str = "cd", passes: float = 20, step: float = 1.0, clip: float = 1.0,
                 batch_size: int = 256, average: bool = False,
                 random_state: RandomStateLike = None, bounds: Any = None,
                 row_norm: float | None = None, label_bound: float | None = None,
                 diagnostics: bool = False, budget: Budget | None = None) -> None:
        self.bounds = bounds
        self.row_norm = row_norm
        self.label_bound = label_bound
        self.alpha = alpha
        self.diagnostics = diagnostics
        self.budget = budget
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state

    def _penalty(self) -> Penalty:
        return L1(self.alpha)

    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        X, y = validate_data(self, _structure_checked(X), y, accept_sparse=["csr", "csc"],
                             dtype=np.float64,
                             y_numeric=True)
        return self._fit_problem(Problem(X, y, loss="half_squared", penalty=self._penalty(),
                                         bounds=self.bounds, row_norm=self.row_norm,
                                         label_bound=self.label_bound))

    def predict(self, X: MatrixLike) -> np.ndarray:
        return self._decision(X)


class DPElasticNet(DPLasso):
    __doc__ = """Differentially private elastic net: scikit-learn's ``ElasticNet`` objective.

    Parameters
    ----------
    alpha : float, default=1.0
    l1_ratio : float, default=0.5
        In [0, 1].
""" + _COMMON_DOC + """    label_bound : float, optional
        Public bound on ``|y_i|``; the targets are clipped onto it.
"""

    def __init__(self, alpha: float = 1.0, *, l1_ratio: float = 0.5, epsilon: float = 1.0,
                 delta: float | None = None, solver: str = "cd", passes: float = 20,
                 step: float = 1.0, clip: float = 1.0, batch_size: int = 256,
                 average: bool = False, random_state: RandomStateLike = None,
                 bounds: Any = None, row_norm: float | None = None,
                 label_bound: float | None = None, diagnostics: bool = False,
                 budget: Budget | None = None) -> None:
        super().__init__(alpha, epsilon=epsilon, delta=delta, solver=solver, passes=passes,
                         step=step, clip=clip, batch_size=batch_size, average=average,
                         random_state=random_state, bounds=bounds, row_norm=row_norm,
                         label_bound=label_bound, diagnostics=diagnostics, budget=budget)
        self.l1_ratio = l1_ratio

    def _penalty(self) -> Penalty:
        if not 0.0 <= self.l1_ratio <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1]; got {self.l1_ratio!r}.")
        return ElasticNet(self.alpha * self.l1_ratio, self.alpha * (1.0 - self.l1_ratio))


#: Labels of the default convention (``classes=None``): 1 is the positive class, 0 and -1 the
#: negative one; ``classes_`` is then ``[0, 1]``.
DEFAULT_CLASSES = (0, 1)
_DEFAULT_NEGATIVE_LABELS = (0, -1)


def _check_classes(classes):
    """The public ``(negative, positive)`` pair as an array of shape (2,)."""
    if classes is None:
        return np.array(DEFAULT_CLASSES)
    pair = np.asarray(classes)
    if pair.ndim != 1 or pair.shape[0] != 2 or pair[0] == pair[1]:
        raise ValueError("classes must be None or two distinct labels (negative, positive); "
                         f"got {classes!r}.")
    return pair.copy()


def _label_signs(y, classes):
    """+-1 labels of ``y``, each a function of its own record only (never of the label set).

    ``classes=None`` (the default convention): 1 -> +1, 0 and -1 -> -1. Otherwise
    ``classes[1]`` -> +1 and ``classes[0]`` -> -1. Any other label raises ValueError.
    """
    if classes is None:
        positive = np.isin(y, [1])
        negative = np.isin(y, _DEFAULT_NEGATIVE_LABELS)
        accepted = "{-1, 0, 1} (classes=None: 1 is the positive class, 0 and -1 the negative)"
    else:
        positive = y == classes[1]
        negative = y == classes[0]
        accepted = f"classes={list(classes)!r}"
    # The message names no label found in y: a validation error is seen by the caller too.
    if not np.all(positive | negative):
        raise ValueError(f"y holds labels outside {accepted}. Only binary classification is "
                         "supported. Pass classes=(negative, positive), chosen without "
                         "looking at the private labels.")
    return np.where(positive, 1.0, -1.0)


class DPLogisticRegression(ClassifierMixin, _DPLinearModel):
    __doc__ = """Differentially private L2-regularized logistic regression (binary).

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength (scikit-learn's ``C``): the penalty is
        ``||w||^2 / (2 n C)`` on the average loss. ``C=inf`` means no penalty.
    classes : array-like of shape (2,) or None, default=None
        The public labels ``(negative, positive)``; ``y`` must hold only these. They must be
        chosen without looking at the private labels. None: the fixed convention 1 = positive,
        0 or -1 = negative, with ``classes_ = [0, 1]``; see Notes.
""" + _COMMON_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The public classes ``(negative, positive)``; ``predict`` returns only these.
    coef_ : ndarray of shape (n_features,)
    privacy_ : PrivacyReport
    history_ : History
        Only with ``diagnostics=True`` (not private).
    n_iter_ : float

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit``, as stated by ``privacy_``,
    with the classes public. Encoding the labels from ``np.unique(y)`` would not be: when one
    class has a single record, replacing it changes the label set and flips the sign of every
    other record's encoded label, and ``classes_`` would tell which labels occur. Here each
    record's sign depends on that record alone, and ``classes_`` on the arguments alone.

    **The default convention.** Under either neighbouring relation any two datasets of the
    right labels are linked by a chain of neighbours, so no rule that reads ``y`` can choose
    ``classes_`` privately; it can only follow the arguments. ``classes=None`` accepts the two
    usual encodings as they are (1 positive; 0 or -1 negative) and reports scikit-learn's
    ``classes_ = [0, 1]``, so a model fitted on {-1, +1} labels predicts 0 for the negative
    class: pass ``classes=(-1, 1)`` to have it predict -1. ``score`` encodes the true labels
    with the same convention, so its accuracy is right for both encodings.
    """

    def __init__(self, C: float = 1.0, *, classes: Any = None, epsilon: float = 1.0,
                 delta: float | None = None, solver: str = "cd", passes: float = 20,
                 step: float = 1.0, clip: float = 1.0, batch_size: int = 256,
                 average: bool = False, random_state: RandomStateLike = None,
                 bounds: Any = None, row_norm: float | None = None, diagnostics: bool = False,
                 budget: Budget | None = None) -> None:
        self.bounds = bounds
        self.row_norm = row_norm
        self.C = C
        self.budget = budget
        self.classes = classes
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state
        self.diagnostics = diagnostics

    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        X, y = validate_data(self, _structure_checked(X), y, accept_sparse=["csr", "csc"],
                             dtype=np.float64)
        check_classification_targets(y)     # rejects continuous targets, as scikit-learn does
        classes = _check_classes(self.classes)
        signs = _label_signs(y, None if self.classes is None else classes)
        n = X.shape[0]
        C = check_scalar(self.C, "C", low=0.0, allow_inf=True)   # numpy scalars too
        penalty = None if math.isinf(C) else L2(1.0 / (n * C))
        self._fit_problem(Problem(X, signs, loss="logistic", penalty=penalty,
                                  bounds=self.bounds, row_norm=self.row_norm))
        self.classes_ = classes
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X: MatrixLike) -> FloatArray:
        return self._decision(X)

    def predict_proba(self, X: MatrixLike) -> FloatArray:
        z = self._decision(X)
        p1 = 0.5 * (1.0 + np.tanh(0.5 * z))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: MatrixLike) -> np.ndarray:
        positive = self._decision(X) > 0     # checks that the model is fitted first
        return self.classes_[positive.astype(int)]

    def score(self, X: MatrixLike, y: ArrayLike,
              sample_weight: ArrayLike | None = None) -> float:
        """Accuracy, with ``y`` encoded by the same public convention as in ``fit``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels in ``classes`` (or, with ``classes=None``, in {-1, 0, 1}).
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        from sklearn.metrics import accuracy_score

        check_is_fitted(self)
        y = np.asarray(y)
        signs = _label_signs(y, None if self.classes is None else self.classes_)
        predicted = np.where(self._decision(X) > 0, 1.0, -1.0)
        return float(accuracy_score(signs, predicted, sample_weight=sample_weight))
