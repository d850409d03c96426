r"""Per-sample losses :math:`\ell(z, y)` of linear models, with margin :math:`z = \langle x, w\rangle`.

Each loss offers its value, derivative and second derivative in :math:`z` (vectorized, through
the compiled kernel ``dpsco_core._kernels._loss``), the constants that the solvers derive
step sizes and sensitivities from, and the validation of labels. The scalar formulas live in
``src_cython/_loss.pxd``, which every kernel cimports, so there is one implementation.

=================  ====================================  ===========  ======================
loss               :math:`\ell(z, y)`                    smoothness   Lipschitz in :math:`z`
=================  ====================================  ===========  ======================
``Squared()``      :math:`(z - y)^2` (DP-CD convention)  2            none
``Squared(True)``  :math:`(z - y)^2 / 2`                 1            none
``Logistic()``     :math:`\log(1 + e^{-y z})`            1/4          1
``Huber(d)``       :math:`r^2/2` if :math:`|r| \le d`,   1            d
                   else :math:`d(|r| - d/2)`, r = z - y
``Hinge()``        :math:`\max(0, 1 - y z)`              none         1
``Absolute()``     :math:`|z - y|`                       none         1
=================  ====================================  ===========  ======================

``smoothness`` is :math:`\sup |\ell''|` and ``lipschitz_in_margin`` is :math:`\sup |\ell'|`
(None when unbounded); with them ``Problem`` computes :math:`M_j`, :math:`L_j` and
:math:`\beta` (note 002, section 3.6). Logistic and hinge labels are in {-1, +1}; labels in
{0, 1} are accepted only with ``labels="01"``, which maps 0 to -1 explicitly. At kinks the
derivative is the subgradient 0.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ._validation import all_finite, check_positive, check_real_array, check_vector

__all__ = ["Loss", "Squared", "Logistic", "Huber", "Hinge", "Absolute", "check_loss",
           "LOSS_SQUARED", "LOSS_HALF_SQUARED", "LOSS_LOGISTIC", "LOSS_HUBER", "LOSS_HINGE",
           "LOSS_ABSOLUTE"]

# Codes shared with src_cython/_loss.pxd (enum LossKind); never renumber.
LOSS_SQUARED = 0
LOSS_HALF_SQUARED = 1
LOSS_LOGISTIC = 2
LOSS_HUBER = 3
LOSS_HINGE = 4
LOSS_ABSOLUTE = 5

def _kernel():
    from ._kernels import _loss
    return _loss


def _threads(n, n_threads):
    # n_threads=None: one thread below _config.SERIAL_WORK margins (an element-wise pass over
    # 200,000 doubles takes 0.2 ms to 2 ms; the measurement is at that constant).
    from ._config import effective_n_threads
    return effective_n_threads(n_threads, work=n)


class Loss:
    """Base class of the per-sample losses (see the module docstring for the table).

    Attributes
    ----------
    kind : int
        The ``LossKind`` code of ``src_cython/_loss.pxd``.
    param : float
        The scalar parameter passed to the kernels (Huber threshold; 0 otherwise).
    smoothness : float or None
        :math:`\\sup_z |\\ell''(z, y)|`, None for the non-smooth losses.
    lipschitz_in_margin : float or None
        :math:`\\sup_z |\\ell'(z, y)|`, None when unbounded (squared losses).
    """

    kind: int | None = None
    param: float = 0.0
    smoothness: float | None = None
    lipschitz_in_margin: float | None = None
    name: str | None = None

    def check_labels(self, y, name="y"):
        """Return ``y`` as a finite 1-d float64 array in the loss's label domain.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Targets (regression losses) or labels (classification losses).
        name : str, default="y"
            Argument name used in error messages.

        Returns
        -------
        ndarray of shape (n_samples,)
            float64 labels as the kernels expect them (a new array whenever they differ from
            ``y``'s values or type; ``y`` itself is never modified).

        Raises
        ------
        ValueError
            If ``y`` is not 1-d, is empty, has NaN or inf, or has labels outside the domain.
        """
        return check_vector(y, name)

    # Private paths take labels already returned by check_labels and contiguous arrays.
    def _run(self, entry, z, y, n_threads):
        out = np.empty(z.shape[0])
        getattr(_kernel(), entry)(z, y, self.kind, self.param, out,
                                  _threads(z.shape[0], n_threads))
        return out

    def _value(self, z, y, n_threads=None):
        return self._run("loss_values", z, y, n_threads)

    def _deriv(self, z, y, n_threads=None):
        return self._run("loss_derivs", z, y, n_threads)

    def _deriv2(self, z, y, n_threads=None):
        return self._run("loss_derivs2", z, y, n_threads)

    def _public(self, private, z, y, n_threads):
        # no copy: the kernels read z (a read-only view below) and write new arrays
        z_arr = check_real_array(z, "z").astype(np.float64, copy=False)
        if not all_finite(z_arr):
            raise ValueError("z must contain only finite values; it has NaN or inf.")
        y_arr = np.asarray(y)
        shape = np.broadcast_shapes(z_arr.shape, y_arr.shape)
        zb = np.ascontiguousarray(np.broadcast_to(z_arr, shape)).ravel()
        yb = self.check_labels(np.broadcast_to(y_arr, shape).ravel()) if zb.size else \
            np.empty(0)
        with np.errstate(over="ignore", invalid="ignore"):
            out = private(zb, yb, n_threads).reshape(shape)
        if not all_finite(out):
            raise ValueError(f"the {self!r} loss overflows float64 at these z and y (its value "
                             "exceeds about 1.8e308); rescale z and y.")
        return float(out) if out.ndim == 0 else out

    def value(self, z, y, n_threads=None):
        """:math:`\\ell(z, y)` element-wise (arrays broadcast; a float for scalars).

        Parameters
        ----------
        z : array-like
            Margins :math:`\\langle x_i, w\\rangle`.
        y : array-like
            Labels or targets in the user's encoding (validated by :meth:`check_labels`).
        n_threads : int or None, default=None
            Kernel threads (None: all cores for large inputs). Results never depend on it.
        """
        return self._public(self._value, z, y, n_threads)

    def deriv(self, z, y, n_threads=None):
        """:math:`\\partial \\ell / \\partial z` element-wise (subgradient 0 at kinks).

        Parameters
        ----------
        z : array-like of shape (n,)
            Margins :math:`\\langle x_i, w\\rangle`.
        y : array-like of shape (n,)
            Targets or labels.
        n_threads : int, optional
            Threads of the kernel (None: all cores); the result does not depend on it.

        Returns
        -------
        ndarray of shape (n,)
        """
        return self._public(self._deriv, z, y, n_threads)

    def deriv2(self, z, y, n_threads=None):
        """:math:`\\partial^2 \\ell / \\partial z^2` element-wise (0 where piecewise linear).

        Parameters
        ----------
        z : array-like of shape (n,)
            Margins :math:`\\langle x_i, w\\rangle`.
        y : array-like of shape (n,)
            Targets or labels.
        n_threads : int, optional
            Threads of the kernel (None: all cores); the result does not depend on it.

        Returns
        -------
        ndarray of shape (n,)
        """
        return self._public(self._deriv2, z, y, n_threads)

    def __eq__(self, other):
        return type(self) is type(other) and (self.kind, self.param) == (other.kind,
                                                                        other.param)

    def __hash__(self):
        return hash((type(self).__name__, self.kind, self.param))

    def __repr__(self):
        return f"{type(self).__name__}()"


class Squared(Loss):
    """Squared loss :math:`(z - y)^2` (DP-CD paper, no 1/2), or :math:`(z - y)^2/2` with ``half``.

    With ``L1(lam)``, ``half=False`` matches scikit-learn's ``Lasso(alpha=lam / 2)`` and
    ``half=True`` matches ``Lasso(alpha=lam)`` (``fit_intercept=False``).

    Parameters
    ----------
    half : bool, default=False
        Use the 1/2 convention.
    """

    lipschitz_in_margin: float | None = None

    def __init__(self, half=False):
        if not isinstance(half, (bool, np.bool_)):
            raise TypeError(f"half must be a bool; got {type(half).__name__} {half!r}.")
        self.half = bool(half)
        self.kind = LOSS_HALF_SQUARED if self.half else LOSS_SQUARED
        self.smoothness = 1.0 if self.half else 2.0
        self.name = "half_squared" if self.half else "squared"

    def __repr__(self):
        return "Squared(half=True)" if self.half else "Squared()"


def _check_pm1(y, name, labels, loss_name):
    y = check_vector(y, name)
    if labels == "01":
        ok = (y == 0.0) | (y == 1.0)
        if not ok.all():
            raise ValueError(f"{name} must contain labels in {{0, 1}} for the {loss_name} loss "
                             f"with labels='01'; {_BAD_LABELS}")
        return 2.0 * y - 1.0
    ok = (y == 1.0) | (y == -1.0)
    if not ok.all():
        hint = (" Pass labels='01' to map {0, 1} labels to {-1, +1}."
                if np.all((y == 0.0) | (y == 1.0)) else "")
        raise ValueError(f"{name} must contain labels in {{-1, +1}} for the {loss_name} loss; "
                         f"{_BAD_LABELS}{hint}")
    return y


#: The label errors name no label: the values are private data, and exception texts end up in
#: logs (session 16; the estimators' label errors already named none).
_BAD_LABELS = "some are not (their values are not shown: they are private data)."


def _check_label_option(labels):
    if labels not in ("pm1", "01"):
        raise ValueError(f"labels must be 'pm1' or '01'; got {labels!r}.")
    return labels


class _PlusMinusOneLoss(Loss):
    """A classification loss with labels in {-1, +1} ({0, 1} with ``labels="01"``)."""

    def __init__(self, labels="pm1"):
        self.labels = _check_label_option(labels)

    def check_labels(self, y, name="y"):
        return _check_pm1(y, name, self.labels, self.name)

    def __eq__(self, other):
        return super().__eq__(other) and self.labels == other.labels

    def __hash__(self):
        return hash((type(self).__name__, self.labels))

    def __repr__(self):
        return f"{type(self).__name__}(labels={self.labels!r})"


class Logistic(_PlusMinusOneLoss):
    """Logistic loss :math:`\\log(1 + e^{-y z})` with labels :math:`y \\in \\{-1, +1\\}`.

    Evaluated without overflow for any finite margin (``log1pexp`` with Maechler's cut-offs,
    ``src_cython/_loss.pxd``). With ``L2(lam)`` it matches scikit-learn's
    ``LogisticRegression(C=1 / (n lam), fit_intercept=False)``.

    Parameters
    ----------
    labels : {"pm1", "01"}, default="pm1"
        Encoding of the labels passed in: "pm1" for {-1, +1}; "01" maps {0, 1} to {-1, +1}.
        Labels outside the chosen set raise ValueError (never silently reinterpreted).
    """

    kind = LOSS_LOGISTIC
    smoothness = 0.25
    lipschitz_in_margin = 1.0
    name = "logistic"


class Huber(Loss):
    """Huber loss in :math:`r = z - y`: :math:`r^2/2` if :math:`|r| \\le d`, else :math:`d(|r| - d/2)`.

    Parameters
    ----------
    threshold : float, default=1.0
        :math:`d > 0`; also the Lipschitz constant in the margin.
    """

    kind = LOSS_HUBER
    smoothness = 1.0
    name = "huber"

    def __init__(self, threshold=1.0):
        self.threshold = check_positive(threshold, "threshold")
        self.param = self.threshold
        self.lipschitz_in_margin = self.threshold

    def __repr__(self):
        return f"Huber(threshold={self.threshold!r})"


class Hinge(_PlusMinusOneLoss):
    """Hinge loss :math:`\\max(0, 1 - y z)`, labels in {-1, +1} (or {0, 1} with ``labels="01"``).

    Not smooth; the derivative at :math:`y z = 1` is the subgradient 0.

    Parameters
    ----------
    labels : {"pm1", "01"}, default="pm1"
        The label coding: {-1, +1} or {0, 1}.
    """

    kind = LOSS_HINGE
    lipschitz_in_margin = 1.0
    name = "hinge"


class Absolute(Loss):
    """Absolute loss :math:`|z - y|` (median regression); derivative 0 at :math:`z = y`."""

    kind = LOSS_ABSOLUTE
    lipschitz_in_margin = 1.0
    name = "absolute"


_BY_NAME: dict[str, Callable[[], Loss]] = {
    "squared": Squared,
    "half_squared": lambda: Squared(half=True),
    "logistic": Logistic,
    "huber": Huber,
    "hinge": Hinge,
    "absolute": Absolute,
}

#: Names of the losses with a smoothness constant (``smoothness`` not None), in the order of
#: ``check_loss``'s list: what an error for a non-smooth loss offers instead.
_SMOOTH_LOSS_NAMES = tuple(name for name, make in _BY_NAME.items()
                           if make().smoothness is not None)


def check_loss(loss):
    """Return a :class:`Loss` from an instance or a name.

    Parameters
    ----------
    loss : Loss or str
        An instance, or one of "squared", "half_squared", "logistic", "huber" (threshold 1),
        "hinge", "absolute".

    Raises
    ------
    TypeError
        If ``loss`` is neither a string nor a Loss.
    ValueError
        If ``loss`` is an unknown name.
    """
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        if loss not in _BY_NAME:
            raise ValueError(f"loss must be one of {sorted(_BY_NAME)} or a Loss instance; "
                             f"got {loss!r}.")
        return _BY_NAME[loss]()
    raise TypeError(f"loss must be a str or a dpsco_core.losses.Loss; got "
                    f"{type(loss).__name__}.")
