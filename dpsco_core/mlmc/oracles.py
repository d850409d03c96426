r"""Stochastic subgradient oracles for the MLMC estimators.

An oracle is a callable ``oracle(x, rng) -> ndarray of shape (d,)``: an unbiased stochastic
subgradient of f at x, drawing only from the ``numpy.random.Generator`` rng (so that a copy's
randomness is its own stream). :class:`GLMOracle` is the concrete family the compiled batch
kernel ``_mlmc`` runs: :math:`\hat\nabla f(x) = \ell'(\langle a_s, x\rangle, b_s) a_s` with s
uniform in [n] (optionally clipped to norm ``clip``, which a.s.-bounds it as DP needs). The
test oracles have known minimizers (note 001, section 9).
"""

import math
import numbers

import numpy as np

from .._validation import check_int, check_positive, check_scalar, check_vector
from ..penalties import NoPenalty

__all__ = ["GLMOracle", "QuadraticOracle", "KinkOracle", "NormOracle"]


class GLMOracle:
    r"""Per-sample subgradient of :math:`f(x) = \frac1n\sum_s \ell(\langle a_s, x\rangle, b_s)`.

    Parameters
    ----------
    problem : dpsco_core.Problem
        Dense problem; its loss is used, its penalty must be ``NoPenalty`` (put strongly convex
        or linear terms into psi instead).
    clip : float or None, default=None
        Per-sample gradient norm bound: :math:`g \leftarrow g \min(1, C/\|g\|)`. Clipping
        changes f for non-Lipschitz losses; with it, :math:`\|\hat\nabla f\| \le C` a.s.
    rows : slice, optional
        Use only these rows: f is then the average loss over them and s is uniform among them
        (the disjoint per-phase blocks of :mod:`dpsco_core.mlmc.dp_sco`).

    Notes
    -----
    Draw order: one ``rng.integers(0, n)`` per call, as the kernel draws it, so a Python run
    and a kernel run consume the same stream (their iterates differ only in rounding: the
    kernel stores them relative to the prox centre).
    """

    def __init__(self, problem, clip=None, rows=None):
        if getattr(problem, "is_sparse", False):
            raise ValueError("GLMOracle needs a dense problem; got sparse X.")
        if not isinstance(problem.penalty, NoPenalty):
            raise ValueError(f"GLMOracle uses the loss only: problem.penalty must be NoPenalty; "
                             f"got {problem.penalty!r}.")
        rows = slice(None) if rows is None else rows
        if not isinstance(rows, slice):
            raise TypeError(f"rows must be a slice or None; got {type(rows).__name__}.")
        for part in ("start", "stop", "step"):
            value = getattr(rows, part)
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, numbers.Integral)):
                raise TypeError(f"rows.{part} must be an integer or None; got "
                                f"{type(value).__name__} {value!r}.")
        if rows.step is not None and rows.step == 0:
            raise ValueError("rows.step must not be zero.")
        self.problem = problem
        self.X = np.ascontiguousarray(problem.X_c()[rows])
        if self.X.shape[0] == 0:
            raise ValueError(f"rows={rows!r} selects no row of the problem "
                             f"({problem.n_samples} rows).")
        self.y = np.ascontiguousarray(problem.y[rows], dtype=np.float64)
        self.loss_kind = int(problem.loss.kind)
        self.loss_param = float(problem.loss.param)
        self.row_norms = np.ascontiguousarray(problem.row_norms()[rows], dtype=np.float64)
        self.clip = np.inf if clip is None else check_positive(clip, "clip")

    @property
    def n_features(self):
        """int: the dimension d."""
        return self.X.shape[1]

    def __call__(self, x, rng):
        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise TypeError(f"x must be a vector of real numbers; got dtype {x.dtype}.")
        if x.shape != (self.X.shape[1],):
            raise ValueError(f"x must be a vector of length n_features={self.X.shape[1]}; got "
                             f"shape {x.shape}.")
        s = int(rng.integers(0, self.X.shape[0]))
        z = float(self.X[s] @ x)
        if not math.isfinite(z):
            raise ValueError(f"x gives a non-finite margin <a_s, x> = {z!r} (x has NaN or inf, "
                             "or its entries overflow with the data): rescale x.")
        g = float(self.problem.loss.deriv(np.array([z]), self.y[s:s + 1], n_threads=1)[0])
        gn = abs(g) * self.row_norms[s]
        if gn > self.clip:
            g *= self.clip / gn
        return g * self.X[s]


class QuadraticOracle:
    r"""(P1) :math:`f(x) = \frac12\|x - b\|^2` with :math:`\hat\nabla f = x - b + \xi`,
    :math:`\xi \sim N(0, s^2 I)`.

    Parameters
    ----------
    b : array-like of shape (d,)
        The minimizer of f.
    noise : float, default=1.0
        s.
    """

    def __init__(self, b, noise=1.0):
        self.b = check_vector(b, "b", copy=True)
        self.noise = check_scalar(noise, "noise", low=0.0, low_open=False)

    def __call__(self, x, rng):
        return x - self.b + self.noise * rng.standard_normal(self.b.shape[0])


class KinkOracle:
    r"""(P2) :math:`f(x) = \sum_i |x_i|` with :math:`\hat\nabla f = \mathrm{sign}(x) + \xi`,
    :math:`\xi \sim N(0, s^2 I)`; with :math:`\psi = (\mu/2)\|x-c\|^2`, :math:`|\mu c_i| \le 1`,
    the minimizer is 0. ``noise=0`` gives a deterministic oracle.

    Parameters
    ----------
    d : int
        Dimension.
    noise : float, default=1.0
        s.
    """

    def __init__(self, d, noise=1.0):
        self.d = check_int(d, "d", low=1)
        self.noise = check_scalar(noise, "noise", low=0.0, low_open=False)

    def __call__(self, x, rng):
        g = np.sign(x)
        if self.noise:
            g = g + self.noise * rng.standard_normal(self.d)
        return g


class NormOracle:
    r"""(P4) :math:`f(x) = G_0\|x - a\|_2` with :math:`\hat\nabla f = G_0 u + \xi` (u the unit
    vector of x - a, 0 at a), :math:`\xi \sim N(0, s^2 I)`.

    Closed forms: the prox :math:`P_{f,\lambda}(y) = a + (y - a)\max(0, 1 - G_0/(\lambda\|y -
    a\|))` and the Moreau gradient :meth:`moreau_gradient`.

    Parameters
    ----------
    a : array-like of shape (d,)
        The centre.
    scale : float, default=1.0
        :math:`G_0`.
    noise : float, default=0.0
        s.
    """

    def __init__(self, a, scale=1.0, noise=0.0):
        self.a = check_vector(a, "a", copy=True)
        self.scale = check_scalar(scale, "scale", low=0.0, low_open=False)
        self.noise = check_scalar(noise, "noise", low=0.0, low_open=False)

    def __call__(self, x, rng):
        v = x - self.a
        nrm = np.linalg.norm(v)
        g = self.scale * v / nrm if nrm > 0 else np.zeros_like(v)
        if self.noise:
            g = g + self.noise * rng.standard_normal(v.shape[0])
        return g

    def value(self, x):
        r""":math:`f(x) = G_0 \|x - a\|_2`.

        Parameters
        ----------
        x : ndarray of shape (d,)
            The point.

        Returns
        -------
        float
        """
        return self.scale * float(np.linalg.norm(np.asarray(x) - self.a))

    def prox(self, y, lam):
        r"""The prox point :math:`P_{f,\lambda}(y)`, closed form.

        Parameters
        ----------
        y : ndarray of shape (d,)
            The point.
        lam : float
            λ > 0.

        Returns
        -------
        ndarray of shape (d,)
        """
        v = np.asarray(y, dtype=np.float64) - self.a
        nrm = np.linalg.norm(v)
        return self.a + v * max(0.0, 1.0 - self.scale / (lam * nrm)) if nrm > 0 else self.a.copy()

    def moreau_gradient(self, y, lam):
        """:math:`\\nabla f_\\lambda(y) = \\lambda(y - P_{f,\\lambda}(y))` (Fact 1.2).

        Parameters
        ----------
        y : ndarray of shape (d,)
            The point.
        lam : float
            λ > 0.

        Returns
        -------
        ndarray of shape (d,)
        """
        return lam * (np.asarray(y, dtype=np.float64) - self.prox(y, lam))
