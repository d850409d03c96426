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

import functools
import math
import numbers

import numpy as np

from .._validation import check_delta, check_scalar
from ..privacy.calibration import _report_orders  # noqa: F401 (the solvers' order grid)
from ..privacy.events import NeighboringRelation
from ..privacy.events import check_relation as _check_relation
from ..privacy.report import DEFAULT_ASSUMPTIONS, PrivacyReport, seed_assumptions
from ..problems import Problem

__all__ = ["check_problem", "check_relation", "check_privacy_budget", "check_solver_epsilon",
           "check_noise_scale", "objective_or_inf", "report_from_event", "sensitivity_factor",
           "MAX_EPSILON", "MAX_NOISE_SCALE", "normaliser", "public_n_assumptions"]

#: Largest finite epsilon a solver accepts. Beyond it a budget means nothing (e^epsilon
#: bounds the odds ratio) and the calibrations lose their precision (the optimal Renyi order
#: rounds to 1); epsilon=inf is the documented non-private run.
MAX_EPSILON = 1e6

#: Largest noise standard deviation a solver draws: iterates are sums of such draws times
#: steps, and from about 1e150 on they overflow float64 (squares, objectives); the release
#: would be noise only anyway.
MAX_NOISE_SCALE = 1e150

def check_problem(problem):
    if not isinstance(problem, Problem):
        raise TypeError("problem must be a dpsco_core.Problem; got "
                        f"{type(problem).__name__}. Build one with Problem(X, y, loss, penalty).")
    return problem


def check_relation(neighboring_relation):
    """Accept a NeighboringRelation or its name ("replace_one", "add_or_remove_one", "zero_out")."""
    return _check_relation(neighboring_relation)


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
    worst = array_max(values) if values.size else 0.0
    if not worst <= MAX_NOISE_SCALE:          # also catches NaN
        raise ValueError(f"epsilon={epsilon!r} is too small for this run: the {what} it "
                         f"needs is {worst!r}, beyond {MAX_NOISE_SCALE:g} (the output would "
                         "overflow to inf); use a larger epsilon (or delta, or a smaller clip "
                         "or fewer steps).")
    return noise_scale


def array_max(values):
    """``float(values.max())`` of a non-empty float64 array: NaN if it holds a NaN. A short
    vector on Python floats (a NumPy reduction is ~2.5 us, three per short ``dp_cd`` call;
    issue 18)."""
    if values.ndim == 1 and values.size <= 64:
        items = values.tolist()
        if all(v == v for v in items):      # no NaN: Python's max is NumPy's
            return max(items)
        return math.nan
    return float(values.max())


def report_from_event(event, *, delta, relation, budget_split, assumptions, target_epsilon,
                      random_state, extra_orders=(), conversion="mironov", conditions=(),
                      accountant="rdp", mode=None):
    """Run the RDP accountant over ``event`` and check the result against the target.

    ``random_state`` is the caller's argument as given (required, so that no solver forgets
    it): a supplied seed adds :data:`~dpsco_core.privacy.report.SEEDED_ASSUMPTION`.

    The Renyi order grid is dp-accounting's default plus ``extra_orders`` (for example the
    continuous optimum of a closed-form calibration, so that the accountant reproduces it).
    Memoized on its (public, hashable) arguments: the report is a pure function of them and
    immutable, and a repeated run configuration then pays no accountant (issue 18: the report
    was half of ``dp_cd``'s fixed cost per call).
    ``accountant="pld"`` runs :class:`~dpsco_core.privacy.accountants.PldAccountant` instead
    (default discretisation; orders and conversion unused). ``mode`` (``"certified"`` or
    ``"heuristic"``) is stated in the report (see :class:`~dpsco_core.privacy.PrivacyReport`).

    Raises
    ------
    RuntimeError
        If the accountant finds an epsilon above ``target_epsilon``: a calibration bug, never
        silently accepted.
    """
    if isinstance(extra_orders, (list, tuple)) and all(
            isinstance(a, (float, int)) and not isinstance(a, bool) for a in extra_orders):
        extra = tuple(float(a) for a in extra_orders)      # the common case, without numpy
    else:
        extra = tuple(float(a) for a in np.asarray(extra_orders, dtype=float).ravel())
    key = (event, float(delta), relation, tuple(dict(budget_split or {}).items()),
           tuple(assumptions) + seed_assumptions(random_state), extra, conversion,
           tuple(conditions), accountant, mode)
    try:
        report = _memo_report(*key)
    except TypeError:                 # an unhashable argument: no memo
        report = _memo_report.__wrapped__(*key)
    if math.isfinite(target_epsilon) and report.epsilon > target_epsilon:
        raise RuntimeError(f"privacy calibration error: the accountant gives epsilon="
                           f"{report.epsilon!r} > target {target_epsilon!r}.")
    return report


@functools.lru_cache(maxsize=256)
def _memo_report(event, delta, relation, budget_split, assumptions, extra_orders, conversion,
                 conditions, accountant="rdp", mode=None):
    orders = None if accountant == "pld" else _report_orders(extra_orders)
    return PrivacyReport.from_event(event, delta=delta, accountant=accountant,
                                    neighboring_relation=relation, orders=orders,
                                    conversion=conversion, budget_split=dict(budget_split),
                                    # each once: a composed report's runs carry the
                                    # defaults already
                                    assumptions=tuple(dict.fromkeys(
                                        tuple(DEFAULT_ASSUMPTIONS) + assumptions)),
                                    conditions=conditions, mode=mode)


def objective_or_inf(problem, w):
    """F(w) for a solver's history; ``inf`` for a diverged (non-finite) iterate, which the
    returned :class:`~dpsco_core.result.Result` then reports with a ``DivergenceWarning``."""
    w = np.asarray(w)
    if not np.all(np.isfinite(w)):
        return math.inf
    return problem.objective(w)
