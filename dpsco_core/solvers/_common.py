r"""Pieces every private solver shares: argument checks, the neighbouring relation, reports.

The normaliser rule (issue 15, part 1)
--------------------------------------
A solver releases noisy *means*: a clipped sum divided by a count m, plus Gaussian (or
Laplace) noise calibrated to the sensitivity of that mean. The count must be public.

* Under **replace-one** and **zero-out** the neighbouring datasets have the same size, so the
  dataset's own n is public: m = n, and the mean of n terms clipped to C moves by 2C/n
  (replace-one) or C/n (zero-out) between neighbours.
* Under **add/remove-one** the size is what differs between neighbours, so n is private.
  Dividing by it breaks the guarantee twice over: for D and D + one row the mean moves by up
  to :math:`|S/n - (S + c)/(n + 1)| \le 2C/(n + 1)`, not C/n (issue 15 measured 1.998 C/n,
  an exact epsilon of 1.61 for a claimed 1), and a noise scale computed from n differs between
  neighbours (two Gaussians of different variances; taking the replace-one sensitivity 2C/n
  with the private n is therefore not a fix either). The rule: the caller passes a public
  record count ``public_n`` (a positive int: a public bound or estimate, never computed from
  the data), every noisy sum is divided by it (DP-SGD: the expected batch ``q * public_n``),
  and every noise scale and derived count uses it. The sum of clipped terms then has
  sensitivity C under add/remove-one and the released ``sum / public_n`` has C / public_n
  whatever the true n. A wrong public_n costs accuracy (the mean is biased by n / public_n),
  never privacy. Without ``public_n`` the solver raises (:func:`normaliser`).

:func:`normaliser` is the one implementation of this rule; every solver calls it.
"""

import math
import numbers

import numpy as np

from .._validation import check_delta, check_scalar
from ..privacy.events import NeighboringRelation
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport
from ..problems import Problem

__all__ = ["check_problem", "check_relation", "check_privacy_budget", "objective_or_inf",
           "report_from_event", "sensitivity_factor", "normaliser", "public_n_assumptions"]

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
    null one term (C). Divided by the public count of :func:`normaliser` (never the private n
    under add/remove-one), the mean has sensitivity ``factor * C / m``.
    """
    return 2.0 if relation is NeighboringRelation.REPLACE_ONE else 1.0


def normaliser(relation, n, public_n):
    """The public record count m that noisy sums are divided by (module docstring).

    Parameters
    ----------
    relation : NeighboringRelation
    n : int
        The dataset's own number of records.
    public_n : int or None
        The caller's public record count. Required under add/remove-one (where n is
        private); under replace-one and zero-out it must be None or equal to n.

    Returns
    -------
    int
        ``public_n`` under add/remove-one, ``n`` otherwise.

    Raises
    ------
    ValueError
        ``public_n`` missing under add/remove-one, not a positive int, or different from n
        under replace-one / zero-out.
    """
    if public_n is not None:
        if isinstance(public_n, bool) or not isinstance(public_n, numbers.Integral):
            raise TypeError(f"public_n must be a positive int or None; got "
                            f"{type(public_n).__name__} {public_n!r}.")
        public_n = int(public_n)
        if public_n < 1:
            raise ValueError(f"public_n must be a positive int (>= 1); got {public_n}.")
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        if public_n is None:
            raise ValueError(
                "under add_or_remove_one the dataset size is private: pass public_n=<a public "
                "bound or estimate of the record count> (noisy sums are divided by it), or use "
                "neighboring_relation='replace_one' or 'zero_out' (where the dataset's own n is "
                "public).")
        return public_n
    if public_n is not None and public_n != n:
        raise ValueError(f"public_n must be None or the dataset's size n = {n} under "
                         f"{relation.name.lower()} (neighbours have the same size, so n is "
                         f"public); got public_n={public_n}. A different public count is only "
                         "meaningful under neighboring_relation='add_or_remove_one'.")
    return n


def public_n_assumptions(relation, m):
    """The report's statement of the normaliser (empty when it is the dataset's own n)."""
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        return (f"add/remove-one: noisy sums are normalised by the public record count "
                f"public_n = {m}, not by the private dataset size",)
    return ()


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
