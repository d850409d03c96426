"""scikit-learn-style private linear models: ``DPLasso``, ``DPElasticNet``, ``DPLogisticRegression``.

The objectives follow scikit-learn's conventions, so that a private model can replace its
non-private counterpart with the same hyperparameters:

- ``DPLasso(alpha)``: :math:`\\frac{1}{2n}\\|y - Xw\\|^2 + \\alpha \\|w\\|_1` (``Lasso``);
- ``DPElasticNet(alpha, l1_ratio)``: :math:`\\frac{1}{2n}\\|y - Xw\\|^2 + \\alpha\\rho\\|w\\|_1 +
  \\frac{\\alpha(1-\\rho)}{2}\\|w\\|^2` (``ElasticNet``);
- ``DPLogisticRegression(C)``: :math:`\\frac1n\\sum_i \\log(1 + e^{-y_i x_i^\\top w}) +
  \\frac{1}{2nC}\\|w\\|^2` (``LogisticRegression`` divided by :math:`nC`).

``fit`` trains with DP-CD (``solver="cd"``, default) or proximal DP-SGD (``solver="sgd"``) and
sets ``coef_``, ``privacy_`` (the :class:`~dpsco_core.privacy.PrivacyReport`), ``history_`` and
``n_iter_`` (data passes). No intercept is fitted: an intercept learned from the data would need
its own privacy budget; centre the target with public knowledge or add a constant feature.

**Privacy.** Each ``fit`` is one private release, (epsilon, delta)-DP as the solver states
(``privacy_`` says which neighbouring relation, mechanisms and assumptions). Choosing
hyperparameters by cross-validation on the private data is not accounted.

Requires scikit-learn (``pip install scikit-learn``).
"""

import math

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import type_of_target
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("dpsco_core.estimators needs scikit-learn: pip install scikit-learn") \
        from exc

from ._validation import check_real_array, check_scalar, check_sparse
from .penalties import L1, L2, ElasticNet
from .problems import Problem

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    def _solve(self, problem):
        from .solvers.dp_cd import dp_cd

        n = problem.n_samples
        if n < 2:
            raise ValueError(f"private training needs at least 2 samples; got n_samples={n}.")
        delta = 1.0 / n**2 if self.delta is None else self.delta
        if self.solver == "cd":
            return dp_cd(problem, epsilon=self.epsilon, delta=delta, passes=self.passes,
                         step=self.step, clip=self.clip, average=self.average,
                         random_state=self.random_state)
        if self.solver == "sgd":
            from .solvers.dp_sgd import dp_sgd

            return dp_sgd(problem, epsilon=self.epsilon, delta=delta, passes=self.passes,
                          batch_size=min(self.batch_size, n), step=self.step, clip=self.clip,
                          random_state=self.random_state)
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {self.solver!r}.")

    def _fit_problem(self, problem):
        result = self._solve(problem)
        self.coef_ = result.coef
        self.privacy_ = result.privacy
        self.history_ = result.history
        self.n_iter_ = float(result.history.passes[-1])
        self.intercept_ = 0.0
        return self

    def _decision(self, X):
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
"""


class DPLasso(RegressorMixin, _DPLinearModel):
    __doc__ = """Differentially private LASSO: scikit-learn's ``Lasso`` objective, trained privately.

    Parameters
    ----------
    alpha : float, default=1.0
        L1 strength (scikit-learn's ``alpha``), >= 0.
""" + _COMMON_DOC + """
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    privacy_ : PrivacyReport
    history_ : History
    n_iter_ : float
        Data passes done.

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP for one ``fit``, as stated by ``privacy_``.
    """

    def __init__(self, alpha=1.0, *, epsilon=1.0, delta=None, solver="cd", passes=20,
                 step=1.0, clip=1.0, batch_size=256, average=False, random_state=None):
        self.alpha = alpha
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state

    def _penalty(self):
        return L1(self.alpha)

    def fit(self, X, y):
        X, y = validate_data(self, _structure_checked(X), y, accept_sparse=["csr", "csc"],
                             dtype=np.float64,
                             y_numeric=True)
        return self._fit_problem(Problem(X, y, loss="half_squared", penalty=self._penalty()))

    def predict(self, X):
        return self._decision(X)


class DPElasticNet(DPLasso):
    __doc__ = """Differentially private elastic net: scikit-learn's ``ElasticNet`` objective.

    Parameters
    ----------
    alpha : float, default=1.0
    l1_ratio : float, default=0.5
        In [0, 1].
""" + _COMMON_DOC

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, epsilon=1.0, delta=None, solver="cd",
                 passes=20, step=1.0, clip=1.0, batch_size=256, average=False,
                 random_state=None):
        super().__init__(alpha, epsilon=epsilon, delta=delta, solver=solver, passes=passes,
                         step=step, clip=clip, batch_size=batch_size, average=average,
                         random_state=random_state)
        self.l1_ratio = l1_ratio

    def _penalty(self):
        if not 0.0 <= self.l1_ratio <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1]; got {self.l1_ratio!r}.")
        return ElasticNet(self.alpha * self.l1_ratio, self.alpha * (1.0 - self.l1_ratio))


class DPLogisticRegression(ClassifierMixin, _DPLinearModel):
    __doc__ = """Differentially private L2-regularized logistic regression (binary).

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularization strength (scikit-learn's ``C``): the penalty is
        ``||w||^2 / (2 n C)`` on the average loss. ``C=inf`` means no penalty.
""" + _COMMON_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (n_features,)
    privacy_ : PrivacyReport
    history_ : History
    n_iter_ : float
    """

    def __init__(self, C=1.0, *, epsilon=1.0, delta=None, solver="cd", passes=20, step=1.0,
                 clip=1.0, batch_size=256, average=False, random_state=None):
        self.C = C
        self.average = average
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.passes = passes
        self.step = step
        self.clip = clip
        self.batch_size = batch_size
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, _structure_checked(X), y, accept_sparse=["csr", "csc"],
                             dtype=np.float64)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError("Only binary classification is supported. The type of the target "
                             f"is {y_type}.")
        self.classes_, encoded = np.unique(y, return_inverse=True)
        signs = np.where(encoded == 1, 1.0, -1.0)
        n = X.shape[0]
        C = check_scalar(self.C, "C", low=0.0, allow_inf=True)   # numpy scalars too
        penalty = None if math.isinf(C) else L2(1.0 / (n * C))
        return self._fit_problem(Problem(X, signs, loss="logistic", penalty=penalty))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X):
        return self._decision(X)

    def predict_proba(self, X):
        z = self._decision(X)
        p1 = 0.5 * (1.0 + np.tanh(0.5 * z))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        positive = self._decision(X) > 0     # checks that the model is fitted first
        return self.classes_[positive.astype(int)]
