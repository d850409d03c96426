r"""Black-box audit of a whole solver call against an outlier neighbour.

The kernel-replay cases of :mod:`~dpsco_core.audit.solver_cases` fix the steps and clips and
so cannot see constants read from the data. Here the sampler runs the **public solver call**
end to end on each input: a dataset :math:`D` and its neighbour :math:`D'` in which one row
(features and label) is scaled by ``scale`` (default 1e6). A step or clip computed from the
data then differs by orders of magnitude between :math:`D` and :math:`D'` (the outlier's
:math:`x_{ij}^2` dominates :math:`M_j` and :math:`\beta`), the run on :math:`D'` barely
moves, and the statistic, the l2 norm of the released coefficients, tells the two apart far
beyond the claimed epsilon (issue 15, section 4). With public bounds the outlier is clipped
onto them, the constants are the same on both inputs, and the claim must hold.

Each run costs a full solver call (milliseconds): keep ``n_trials`` in the hundreds.
"""

import warnings

import numpy as np

from .._random import child_seed_sequences
from .._validation import check_int, check_scalar
from ..exceptions import PrivacyLeakWarning
from .cases import AuditCase

__all__ = ["outlier_neighbour_case"]


def outlier_neighbour_case(solver, X, y, *, scale=1e6, row=0, problem_kwargs=None, name=None):
    """The pair (D, D with row ``row`` scaled by ``scale``) and a sampler running ``solver``.

    Parameters
    ----------
    solver : callable
        ``solver(problem, random_state) -> Result``: the private call under audit, with its
        budget, relation and hyperparameters bound (for example a ``functools.partial``).
    X, y : array-like
        The dataset D (dense); never modified.
    scale : float, default=1e6
        Factor applied to row ``row`` of X and to ``y[row]`` in D' (replace-one neighbours).
    row : int, default=0
    problem_kwargs : dict, optional
        Passed to :class:`~dpsco_core.Problem` for both inputs (loss, penalty, public
        bounds).
    name : str, optional

    Returns
    -------
    AuditCase
        The claim is the report of ``solver`` on D. The sampler's statistic is
        :math:`\\|w\\|_2` of each run (capped at 1e300 so that a diverged run stays finite).
    """
    from ..problems import Problem

    scale = check_scalar(scale, "scale", low=0.0)
    X = np.array(X, dtype=np.float64, copy=True)
    y = np.array(y, dtype=np.float64, copy=True)
    row = check_int(row, "row", low=0, high=X.shape[0] - 1)
    X_out, y_out = X.copy(), y.copy()
    X_out[row] *= scale
    y_out[row] *= scale
    kwargs = dict(problem_kwargs or {})
    inputs = [Problem(X, y, **kwargs), Problem(X_out, y_out, **kwargs)]
    claim = solver(inputs[0], 0).privacy

    def sampler(problem, n, seed_seq):
        out = np.empty(n)
        with warnings.catch_warnings():
            # The warning was shown once when the claim was computed; n repeats add nothing.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            for i, seq in enumerate(child_seed_sequences(seed_seq, n)):
                coef = solver(problem, seq).coef
                norm = float(np.linalg.norm(coef)) if np.all(np.isfinite(coef)) else 1e300
                out[i] = min(norm, 1e300)
        return out

    return AuditCase(name=name or f"outlier neighbour (row {row} x {scale:g})", sampler=sampler,
                     input0=inputs[0], input1=inputs[1], epsilon=claim.epsilon,
                     delta=claim.delta)
