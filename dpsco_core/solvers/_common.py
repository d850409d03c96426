"""Pieces every private solver shares: argument checks, the neighbouring relation, reports."""

import math

import numpy as np

from .._validation import check_delta, check_scalar
from ..privacy.events import NeighboringRelation
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport
from ..problems import Problem

__all__ = ["check_problem", "check_relation", "check_privacy_budget", "objective_or_inf",
           "report_from_event", "sensitivity_factor"]

_RELATIONS = {
    "replace_one": NeighboringRelation.REPLACE_ONE,
    "add_or_remove_one": NeighboringRelation.ADD_OR_REMOVE_ONE,
    "zero_out": NeighboringRelation.ZERO_OUT,
}


def check_problem(problem):
    if not isinstance(problem, Problem):
        raise TypeError("problem must be a dpsco_core.Problem; got "
                        f"{type(problem).__name__}. Build one with Problem(X, y, loss, penalty).")
    return problem


def check_relation(neighboring_relation):
    """Accept a NeighboringRelation or its name ("replace_one", "add_or_remove_one", "zero_out")."""
    if isinstance(neighboring_relation, NeighboringRelation):
        return neighboring_relation
    if isinstance(neighboring_relation, str) and neighboring_relation in _RELATIONS:
        return _RELATIONS[neighboring_relation]
    raise ValueError("neighboring_relation must be one of "
                     f"{sorted(_RELATIONS)} or a NeighboringRelation; got {neighboring_relation!r}.")


def sensitivity_factor(relation):
    """Sensitivity of a sum of terms clipped to norm C, in units of C.

    Replace-one changes one term arbitrarily (2C); add/remove-one and zero-out add, remove or
    null one term (C). A solver that divides by n treats n as a public constant under the
    latter two relations (as DP-SGD implementations divide by the expected batch size).
    """
    return 2.0 if relation is NeighboringRelation.REPLACE_ONE else 1.0


def check_privacy_budget(epsilon, delta):
    """(epsilon, delta) with epsilon in (0, inf] (inf: the non-private run) and delta in (0, 1)."""
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, allow_inf=True)
    delta = check_delta(delta)
    return epsilon, delta


def report_from_event(event, *, delta, relation, budget_split, assumptions, target_epsilon,
                      extra_orders=(), conversion="mironov", conditions=()):
    """Run the RDP accountant over ``event`` and check the result against the target.

    The Renyi order grid is dp-accounting's default plus ``extra_orders`` (for example the
    continuous optimum of a closed-form calibration, so that the accountant reproduces it).

    Raises
    ------
    RuntimeError
        If the accountant finds an epsilon above ``target_epsilon``: a calibration bug, never
        silently accepted.
    """
    from ..privacy.accountants import DEFAULT_RDP_ORDERS

    orders = np.unique(np.concatenate([np.asarray(DEFAULT_RDP_ORDERS, dtype=float),
                                       np.asarray(extra_orders, dtype=float)]))
    report = PrivacyReport.from_event(event, delta=delta, accountant="rdp",
                                      neighboring_relation=relation, orders=orders,
                                      conversion=conversion, budget_split=budget_split,
                                      assumptions=tuple(DEFAULT_ASSUMPTIONS) + tuple(assumptions),
                                      conditions=tuple(conditions))
    if math.isfinite(target_epsilon) and report.epsilon > target_epsilon:
        raise RuntimeError(f"privacy calibration error: the accountant gives epsilon="
                           f"{report.epsilon!r} > target {target_epsilon!r}.")
    return report


def objective_or_inf(problem, w):
    """F(w) for a solver's history; ``inf`` for a diverged (non-finite) iterate, which the
    returned :class:`~dpsco_core.result.Result` then reports with a ``DivergenceWarning``."""
    w = np.asarray(w)
    if not np.all(np.isfinite(w)):
        return math.inf
    return problem.objective(w)
