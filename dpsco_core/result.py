"""What every solver returns: coefficients, the privacy report, the history and run statistics."""

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .exceptions import DivergenceWarning
from .privacy.report import PrivacyReport

__all__ = ["Result", "History"]


@dataclass(frozen=True)
class History:
    """Objective along a run, at the points where the solver records it.

    Attributes
    ----------
    passes : ndarray of shape (n_records,)
        Data passes done at each record (one pass = ``n_features`` coordinate updates for
        coordinate descent, ``n_samples`` per-sample gradients for SGD).
    objective : ndarray of shape (n_records,)
        :math:`F(w)` of the iterate the solver would return at that point.
    """

    passes: np.ndarray
    objective: np.ndarray

    def relative_error(self, optimum: float) -> np.ndarray:
        """:math:`(F(w) - F^*) / F^*` at each record, for a known optimum :math:`F^*`."""
        return (self.objective - optimum) / optimum


@dataclass(frozen=True)
class Result:
    """The outcome of a private solver.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The released coefficients.
    privacy : PrivacyReport
        The guarantee of the release, recomputed by an accountant from the event tree
        (``privacy.event``).
    history : History
        Objective along the run (computed from iterates, which are post-processing of the
        private releases; the objective itself uses the data and is not private).
    stats : Mapping
        Run statistics (wall time, updates, fraction of clipped terms, derived constants).
    """

    coef: np.ndarray
    privacy: PrivacyReport
    history: History
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        coef = np.asarray(self.coef)
        if coef.dtype.kind == "f" and not np.all(np.isfinite(coef)):
            # stacklevel 4: __post_init__ <- __init__ <- the solver <- the user's call
            warnings.warn(f"the solver diverged: {int(np.sum(~np.isfinite(coef)))} of "
                          f"{coef.size} coefficients are not finite. Lower the step size (or "
                          "the clip); the privacy guarantee is unaffected.", DivergenceWarning,
                          stacklevel=4)
