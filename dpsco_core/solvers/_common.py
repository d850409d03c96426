"""Pieces every private solver shares: argument checks, the neighbouring relation, reports."""

import math

import numpy as np

from .._validation import check_delta, check_scalar
from ..privacy.events import NeighboringRelation
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport
from ..problems import Problem

__all__ = ["check_problem", "check_relation", "check_privacy_budget", "check_solver_epsilon",
           "check_noise_scale", "objective_or_inf", "report_from_event", "sensitivity_factor",
           "MAX_EPSILON", "MAX_NOISE_SCALE"]

#: Largest finite epsilon a solver accepts. Beyond it a budget means nothing (e^epsilon
#: bounds the odds ratio) and the calibrations lose their precision (the optimal Renyi order
#: rounds to 1); epsilon=inf is the documented non-private run.
MAX_EPSILON = 1e6

#: Largest noise standard deviation a solver draws: iterates are sums of such draws times
#: steps, and from about 1e150 on they overflow float64 (squares, objectives); the release
#: would be noise only anyway.
MAX_NOISE_SCALE = 1e150

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
    epsilon = check_solver_epsilon(epsilon)
    delta = check_delta(delta)
    return epsilon, delta


def check_solver_epsilon(epsilon, *, allow_inf=True):
    """epsilon in (0, MAX_EPSILON], or inf (the non-private run) when ``allow_inf``."""
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, allow_inf=allow_inf)
    if MAX_EPSILON < epsilon < math.inf:
        also = " or inf (the non-private run)" if allow_inf else ""
        raise ValueError(f"epsilon must be in (0, {MAX_EPSILON:g}]{also}; got {epsilon!r}.")
    return epsilon


def check_noise_scale(noise_scale, epsilon, what="noise standard deviation"):
    """Reject a calibrated noise scale (scalar or array) that is not finite or exceeds
    ``MAX_NOISE_SCALE``, naming epsilon: a tiny epsilon overflows the noise, and infinite or
    astronomically large noise turns the output into inf/NaN instead of a release."""
    values = np.asarray(noise_scale, dtype=np.float64)
    worst = float(np.max(values)) if values.size else 0.0
    if not worst <= MAX_NOISE_SCALE:          # also catches NaN
        raise ValueError(f"epsilon={epsilon!r} is too small for this run: the {what} it "
                         f"needs is {worst!r}, beyond {MAX_NOISE_SCALE:g} (the output would "
                         "overflow to inf); use a larger epsilon (or delta, or a smaller clip "
                         "or fewer steps).")
    return noise_scale


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
