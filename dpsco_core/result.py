"""What every solver returns: coefficients, the privacy report, the history and run statistics."""

import dataclasses
import math
import warnings
from collections import abc
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .exceptions import DivergenceWarning, external_stacklevel
from .privacy.report import PrivacyReport

__all__ = ["Result", "History", "HISTORY_OBJECTIVE_CONDITION", "with_objective_condition",
           "without_objective_condition", "as_held_condition", "NON_PRIVATE_STATS",
           "with_stats_conditions"]

#: The statement a report carries when the run's output holds exact objective values of the
#: private data (``Result.history.objective``, ``GridResult.objective``): knowing every other
#: row, one exact value of ``F`` can give back the remaining one (issue 15, section 3). A solver
#: lists it in ``privacy.non_private_outputs`` (the guarantee of ``coef`` is unaffected); a
#: fitted estimator that keeps the history (``diagnostics=True``) lists it as a condition.
HISTORY_OBJECTIVE_CONDITION = "history.objective: exact training objective values, not private"


def _holds_objective_values(objective: Any) -> bool:
    """True if ``objective`` holds at least one value computed from the data (not NaN)."""
    if objective is None:
        return False
    if type(objective) is np.ndarray and objective.size == 0:     # record_history=False
        return False
    values = np.asarray(objective, dtype=np.float64).reshape(-1)
    # an empty history (record_history=False) is the common case of a short call: no ufunc
    return values.size > 0 and not np.isnan(values).all()


def with_objective_condition(report: Any, objective: Any) -> Any:
    """``report`` with :data:`HISTORY_OBJECTIVE_CONDITION` in ``non_private_outputs`` if
    ``objective`` holds values.

    The single place where a release that carries exact objective values of the training data
    says so: a value of :math:`F(w) = \\frac1n \\sum_i \\ell_i(w) + \\psi(w)` at a released
    :math:`w` is a deterministic function of the data, not covered by (epsilon, delta).

    Parameters
    ----------
    report : PrivacyReport
        The run's report.
    objective : sequence of float or None
        The objective values the release carries (empty or None: nothing to say).

    Returns
    -------
    PrivacyReport
    """
    if (isinstance(report, PrivacyReport) and _holds_objective_values(objective)
            and HISTORY_OBJECTIVE_CONDITION not in report.non_private_outputs):
        return dataclasses.replace(
            report, non_private_outputs=report.non_private_outputs + (HISTORY_OBJECTIVE_CONDITION,))
    return report


#: Run statistics computed from the private data beside the privatized releases (issue 15,
#: section 3): a solver puts them in ``stats`` only on request (``record_history=True``, the
#: switch of the other non-private diagnostic, ``history.objective``; ``evaluate=True`` for
#: :func:`~dpsco_core.dp_cd_grid`), and the report then lists each one it holds in
#: ``non_private_outputs`` (:func:`with_stats_conditions`, called by :class:`Result`). Every other
#: stat is public (a function of the public arguments), a function of the privatized releases,
#: or a constant the report's conditions already declare as taken from the data.
NON_PRIVATE_STATS = {
    "clipped_fraction": "stats clipped_fraction: fraction of clipped per-sample terms, computed "
                        "from the data, not private",
    "clipped": "stats clipped: counts of clipped per-sample terms, computed from the data, not "
               "private",
    "mean_batch_size": "stats mean_batch_size: mean size of the sampled batches (under "
                       "add/remove-one it depends on the private record count), not private",
}


#: Values that hold no keys: skipped before the (slow) abstract ``Mapping`` check.
_LEAF_STATS = (np.ndarray, np.generic, float, int, str, bytes, type(None))
#: Exact types of leaf values (no subclass): the flat-dict fast path of :func:`_stat_keys`.
_LEAF_TYPES = frozenset({np.ndarray, np.float64, np.int64, float, int, bool, str, bytes,
                         type(None)})


def _all_finite(coef: np.ndarray) -> bool:
    """``np.isfinite(coef).all()``; a short float vector on Python floats (two ufunc calls were
    ~3 us of a short solver call; issue 18)."""
    if coef.ndim == 1 and coef.size <= 64 and coef.dtype.itemsize <= 8:   # exact as floats
        return all(map(math.isfinite, coef.tolist()))
    return bool(np.isfinite(coef).all())


def _stat_keys(stats: Any) -> set:
    """Every key of ``stats``, also inside nested dicts, lists and tuples (per-phase stats)."""
    if type(stats) is dict and all(type(v) in _LEAF_TYPES for v in stats.values()):
        return set(stats)       # a flat dict (a solver's stats): no recursion, no ABC checks
    keys: set = set()
    if isinstance(stats, _LEAF_STATS):
        return keys
    if isinstance(stats, dict) or isinstance(stats, abc.Mapping):
        for key, value in stats.items():
            keys.add(key)
            if not isinstance(value, _LEAF_STATS):
                keys |= _stat_keys(value)
    elif isinstance(stats, (list, tuple)):
        for value in stats:
            if not isinstance(value, _LEAF_STATS):
                keys |= _stat_keys(value)
    return keys


def with_stats_conditions(report: Any, stats: Any) -> Any:
    """``report`` with the statement of every :data:`NON_PRIVATE_STATS` key that ``stats``
    holds (at any depth) added to ``non_private_outputs``: the single place where a run whose
    statistics carry data-derived diagnostics says so.

    Parameters
    ----------
    report : PrivacyReport or None
        The run's report (anything else is returned unchanged).
    stats : mapping
        The run's statistics, possibly nested (per-phase lists of dicts).

    Returns
    -------
    PrivacyReport
    """
    if not isinstance(report, PrivacyReport):
        return report
    held = _stat_keys(stats)
    extra = tuple(text for key, text in NON_PRIVATE_STATS.items()
                  if key in held and text not in report.non_private_outputs)
    if not extra:
        return report
    return dataclasses.replace(report, non_private_outputs=report.non_private_outputs + extra)


def without_objective_condition(report: PrivacyReport) -> PrivacyReport:
    """``report`` without :data:`HISTORY_OBJECTIVE_CONDITION` (nor the statements of
    :data:`NON_PRIVATE_STATS`), for a holder that keeps neither the objective values nor the
    run statistics (an estimator fitted with ``diagnostics=False``).

    Parameters
    ----------
    report : PrivacyReport
        The run's report.

    Returns
    -------
    PrivacyReport
    """
    dropped = {HISTORY_OBJECTIVE_CONDITION, *NON_PRIVATE_STATS.values()}
    return dataclasses.replace(
        report,
        non_private_outputs=tuple(c for c in report.non_private_outputs if c not in dropped),
        conditions=tuple(c for c in report.conditions if c != HISTORY_OBJECTIVE_CONDITION))


def as_held_condition(report: PrivacyReport) -> PrivacyReport:
    """``report`` for an object that keeps the objective values as part of what it holds (a
    fitted estimator with ``diagnostics=True``): the statement becomes a condition too.

    Parameters
    ----------
    report : PrivacyReport
        The run's report.

    Returns
    -------
    PrivacyReport
    """
    if HISTORY_OBJECTIVE_CONDITION in report.conditions:
        return report
    return dataclasses.replace(report,
                               conditions=report.conditions + (HISTORY_OBJECTIVE_CONDITION,))


@dataclass(frozen=True)
class History:
    """Objective along a run, at the points where the solver records it.

    Attributes
    ----------
    passes : ndarray of shape (n_records,)
        Data passes done at each record (one pass = ``n_features`` coordinate updates for
        coordinate descent, ``n_samples`` per-sample gradients for SGD).
    objective : ndarray of shape (n_records,)
        :math:`F(w)` of the iterate the solver would return at that point: exact values of
        the training objective, **not private** (NaN where not recorded).
    """

    passes: np.ndarray
    objective: np.ndarray

    def relative_error(self, optimum: float) -> np.ndarray:
        """:math:`(F(w) - F^*) / F^*` at each record, for a known optimum :math:`F^*`.

        Parameters
        ----------
        optimum : float
            :math:`F^* \\ne 0`, for example ``problem.solve().objective``.

        Returns
        -------
        ndarray
        """
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
        (``privacy.event``). When ``history.objective`` holds values, the report's
        ``conditions`` include :data:`HISTORY_OBJECTIVE_CONDITION` (added here, for every
        solver): the guarantee covers ``coef`` and the iterates, not the objective values.
    history : History
        Objective along the run. The iterates are post-processing of the private releases, but
        :math:`F(w)` is an exact function of the training data and is **not private**: with
        every other row known, one value gives back the remaining row. Release only ``coef``
        (and ``privacy``), or run with ``record_history=False`` where the solver offers it.
    stats : Mapping
        Run statistics: wall time, updates, public or released constants. Diagnostics computed
        from the data (:data:`NON_PRIVATE_STATS`, e.g. the fraction of clipped terms) are
        there only on request (``record_history=True``), and then listed in
        ``privacy.non_private_outputs``.
    """

    coef: np.ndarray
    privacy: PrivacyReport
    history: History
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "privacy",
                           with_stats_conditions(with_objective_condition(
                               self.privacy, self.history.objective), self.stats))
        coef = np.asarray(self.coef)
        if coef.dtype.kind == "f" and not _all_finite(coef):
            # past the dataclass's generated __init__ (file <string>), then past the
            # library's frames: a solver that builds its Result in a helper still points at
            # the user's call
            warnings.warn(f"the solver diverged: {int(np.sum(~np.isfinite(coef)))} of "
                          f"{coef.size} coefficients are not finite. Lower the step size (or "
                          "the clip); the privacy guarantee is unaffected.", DivergenceWarning,
                          stacklevel=external_stacklevel(skip=2))
