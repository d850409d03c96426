"""Where the l1 solvers' batch rows come from: a dense ``Problem`` or a stream of sign rows.

Both sources run the same leaf computation of :mod:`dpsco_core._kernels._frank_wolfe` (clipped
batch gradient, optional SPIDER correction, optional report-noisy-max) on a batch of row
indices:

* :class:`DenseRows`: ``vr_gradient_rnm`` on the C-ordered X of a :class:`~dpsco_core.Problem`;
* :class:`SignRows`: ``vr_gradient_rnm_signs`` on rows produced per batch by a stream such as
  :class:`~dpsco_core.datasets.RademacherLassoStream` (``sign_rows(indices) -> (packed
  signs, y)``; features +-1), so that X is never materialized as floats. On the same +-1
  rows the two kernels agree bitwise.

Clipping is enforced on the loss derivative per row: ``|l'| <= bound / ||a_i||`` with the
l-infinity norm (the Frank-Wolfe solvers: ``||grad f||_inf <= L``) or the l2 norm (DP-SGD:
``||grad f||_2 <= C``).
"""

import math

import numpy as np

from .._config import effective_n_threads
from .._kernels import _frank_wolfe
from ..penalties import PENALTY_NONE
from ._common import check_problem

__all__ = ["is_sign_stream", "row_source", "DenseRows", "SignRows"]

# Below this many entries (batch rows x features) a leaf runs on one thread: a parallel region
# costs a thread wake-up and join, which dominates small leaves (and takes milliseconds when
# the machine is oversubscribed). The results do not depend on the thread count.
MIN_PARALLEL_WORK = 1 << 18


class _Threads:
    """The thread count of each kernel call of a run (issue 18). ``n_threads`` given: used as
    given (a leaf below MIN_PARALLEL_WORK still runs on one thread); None: resolved per call
    by ``_config.effective_n_threads`` against the call's work, so that a call below
    ``SERIAL_WORK`` runs serial and a call on a busy machine uses only the idle CPUs.
    Results never depend on it."""

    def _set_threads(self, n_threads):
        self.n_threads = effective_n_threads(n_threads)     # validates; the run's count
        self._request = n_threads

    def threads(self, work, serial_below=0):
        """Threads of a kernel call touching ``work`` elements (1 below ``serial_below``)."""
        if work < serial_below:
            return 1
        if self._request is None:
            return effective_n_threads(None, work=work)
        return self.n_threads

    def leaf_threads(self, rows):
        """Threads of a batch-gradient leaf on ``rows`` rows (rows x features entries)."""
        return self.threads(rows * self.n_features, MIN_PARALLEL_WORK)


def is_sign_stream(problem):
    """True for an object that produces packed sign rows (``sign_rows`` and ``n_words``)."""
    return callable(getattr(problem, "sign_rows", None)) and hasattr(problem, "n_words")


def row_source(problem, n_threads):
    """The row source of ``problem`` (a dense ``Problem`` or a sign-row stream)."""
    if is_sign_stream(problem):
        return SignRows(problem, n_threads)
    return DenseRows(check_problem(problem), n_threads)


class DenseRows(_Threads):
    """Rows of a dense ``Problem`` (``X_c()``); per-row norms cached on the problem."""

    def __init__(self, problem, n_threads):
        self.problem = problem
        self._set_threads(n_threads)
        self.X, self.y = problem.X_c(), problem.y
        self.n_features = self.X.shape[1]

    def _row_max_abs(self):
        """max_j |a_ij| per row: one parallel pass (no n x d temporary), cached on the problem.

        The cache holds a public function of X (not of any private output), computed once
        per Problem: repeated runs (seeds, epsilons) on the same data skip the O(n d) pass.
        """
        def compute():
            out = np.empty(self.X.shape[0])
            _frank_wolfe.row_max_abs(self.X, self.threads(self.X.size), out)
            return out
        return self.problem._cached("row_max_abs", compute)

    def row_clip(self, bound, norm):
        """Per-row bound on |l'| so that ``||l' a_i|| <= bound`` (``norm`` "inf" or "2")."""
        size = self._row_max_abs() if norm == "inf" else self.problem.row_norms()
        with np.errstate(divide="ignore"):
            clip = np.where(size > 0, bound / np.where(size > 0, size, 1.0), np.inf)
        return np.ascontiguousarray(clip)

    def gradient(self, rows, clip, w, alpha, w_prev, alpha_prev, v_prev, correction, domain,
                 radius, scale, kind, bit_generators, resid, v_out):
        """The kernel leaf on ``rows``; returns the selection ``(coordinate, sign)``."""
        loss = self.problem.loss
        return _frank_wolfe.vr_gradient_rnm(
            self.X, self.y, rows, loss.kind, loss.param, clip, w, alpha, w_prev, alpha_prev,
            v_prev, correction, domain, radius, scale, kind, bit_generators,
            self.leaf_threads(len(rows)), resid, v_out)


class SignRows(_Threads):
    """Rows of a sign stream, generated (or gathered from its cache) batch by batch."""

    def __init__(self, stream, n_threads):
        if stream.penalty.kind != PENALTY_NONE:
            raise ValueError("a sign-row stream must have no penalty.")
        self.problem = stream
        self._set_threads(n_threads)
        self.n_features = stream.n_features

    def row_clip(self, bound, norm):
        """Every +-1 row has ``||a||_inf = 1`` and ``||a||_2 = sqrt(d)``: one scalar."""
        return float(bound) if norm == "inf" else float(bound) / math.sqrt(self.n_features)

    def gradient(self, rows, clip, w, alpha, w_prev, alpha_prev, v_prev, correction, domain,
                 radius, scale, kind, bit_generators, resid, v_out):
        """The kernel leaf on the generated rows; returns the selection ``(coordinate, sign)``."""
        signs, y = self.problem.sign_rows(rows)
        loss = self.problem.loss
        return _frank_wolfe.vr_gradient_rnm_signs(
            signs, self.n_features, np.ascontiguousarray(y, dtype=np.float64), loss.kind,
            loss.param, clip, w, alpha, w_prev, alpha_prev, v_prev, correction, domain, radius,
            scale, kind, bit_generators, self.leaf_threads(len(rows)),
            resid, v_out)
