"""Noise calibration: the smallest noise multiplier that meets an (epsilon, delta) budget.

Every search here is shown to be conservative rather than assumed to be: the noise multiplier is
bracketed (doubled until the budget holds), located by Brent's method on the monotone map
``noise_multiplier -> epsilon``, and then the returned value is checked again against the target;
if Brent's point overshoots the budget, the search moves to the safe side of the bracket, never
to a midpoint that overshoots. Arguments are keyword-only and use the names of Opacus and
dp-accounting (``target_epsilon``, ``target_delta``, ``sample_rate``, ``steps``, ``epochs``,
``epsilon_tolerance``). A noise multiplier is always ``noise_scale / sensitivity``.
"""

import bisect
import functools
import math
import warnings

import numpy as np
from scipy import optimize

from .._validation import check_delta, check_epsilon, check_int, check_positive
from ..exceptions import OrderGridWarning, PrivacyBudgetError
from ._checks import (check_conversion, check_orders, check_sample_rate, immutable_orders,
                      immutable_orders_of_checked, round_up)
from .accountants import (DEFAULT_PLD_DISCRETIZATION, DEFAULT_RDP_ORDERS, PldAccountant,
                          _warn_if_edge)
from .._kernels import _rdp
from .conversions import _epsilons_and_argmin, _rdp_to_epsilon
from .events import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
from .gdp import _gdp_mu, gdp_mu
from .rdp import RDP_ABS_SLACK, _finish, _orders_array, _sampled_gaussian_curve

__all__ = [
    "calibrate_sampled_gaussian",
    "calibrate_sampled_gaussian_pld",
    "calibrate_gaussian",
    "calibrate_analytic_gaussian",
    "calibrate_gdp_multiplier",
    "pure_share_epsilon",
    "zcdp_centred_orders",
    "dp_cd_noise_multiplier",
    "gdp_mu",
    "steps_from_epochs",
]

_DEFAULT_ORDERS = (immutable_orders(DEFAULT_RDP_ORDERS),
                   tuple(float(a) for a in DEFAULT_RDP_ORDERS))

#: Largest noise multiplier the searches try before declaring a budget infeasible.
MAX_NOISE_MULTIPLIER = 1e6
_MIN_NOISE_MULTIPLIER = 1e-6


def steps_from_epochs(epochs, sample_rate):
    """Number of steps of ``epochs`` passes at Poisson rate ``sample_rate``: ``ceil(epochs / q)``.

    Rounding is upward (more steps, more privacy cost charged), never a silent truncation. A
    quotient within 1e-9 (relative) of an integer is taken as that integer, so that floating-point
    noise in ``epochs / sample_rate`` (for example ``50 / (256 / 45312)``) does not add a step.

    Parameters
    ----------
    epochs : float
        In (0, inf).
    sample_rate : float
        In (0, 1].

    Returns
    -------
    int
    """
    epochs = check_positive(epochs, "epochs")
    sample_rate = check_sample_rate(sample_rate)
    x = epochs / sample_rate
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * max(1.0, x):
        return max(1, int(nearest))
    return max(1, math.ceil(x))


def _calibrate_decreasing(epsilon_and_order, target_epsilon, epsilon_tolerance,
                          max_noise_multiplier, describe, start=1.0):
    """Smallest noise multiplier ``s`` with ``epsilon(s) <= target_epsilon``, and its order.

    ``epsilon_and_order(s)`` returns the epsilon of noise multiplier ``s`` (non-increasing in
    ``s``) and the optimal order. The returned ``s`` satisfies
    ``target_epsilon - epsilon_tolerance <= epsilon(s) <= target_epsilon`` (the upper bound
    always; the lower one unless the map jumps). Returns ``(s, order)``.
    """
    cache = {}

    def gap(s):
        if s not in cache:  # the re-checks below reuse evaluations of the search
            cache[s] = epsilon_and_order(s)
        return cache[s][0] - target_epsilon

    def epsilon_of(s):
        return gap(s) + target_epsilon

    # Bracket: hi meets the budget, lo does not.
    hi = start
    if gap(hi) > 0.0:
        while True:
            if hi >= max_noise_multiplier:
                raise PrivacyBudgetError(
                    f"{describe}: even noise_multiplier={hi:g} gives epsilon="
                    f"{epsilon_of(hi):.6g} > target_epsilon={target_epsilon:g}; the budget "
                    f"cannot be met below max_noise_multiplier={max_noise_multiplier:g}.")
            lo, hi = hi, min(2.0 * hi, max_noise_multiplier)
            if gap(hi) <= 0.0:
                break
    else:
        lo = hi / 2.0
        while gap(lo) <= 0.0:
            hi = lo
            if lo <= _MIN_NOISE_MULTIPLIER:
                return hi, cache[hi][1]  # meets the budget with (almost) no noise
            lo /= 2.0
    root = optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-10, maxiter=200)
    # Re-check: keep Brent's point only if it meets the budget, else step to the safe side.
    for _ in range(8):
        if gap(root) <= 0.0:
            break
        root = float(np.nextafter(root, math.inf)) * (1.0 + 1e-12)
    else:
        root = hi
    # Tighten towards the budget if the answer is looser than epsilon_tolerance (only possible
    # after the fallback to ``hi``); bisection keeps the safe end.
    safe, unsafe = root, lo
    while -gap(safe) > epsilon_tolerance and safe - unsafe > 1e-12 * safe:
        mid = 0.5 * (safe + unsafe)
        if gap(mid) <= 0.0:
            safe = mid
        else:
            unsafe = mid
    gap(safe)
    return safe, cache[safe][1]


def _largest_within(within, lo, hi, rel_tol):
    """Largest ``v`` in ``[lo, hi]`` with ``within(v)``, to a relative ``rel_tol``, by geometric
    bisection; ``within`` is monotone (True up to a threshold) and ``within(lo)`` is assumed.
    Returns the conservative end (a value for which ``within`` held, or ``lo``). The budget
    shares of the private selection's trials and of one-vs-rest fits are found this way."""
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if within(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _zcdp_rho(epsilon, delta):
    """rho whose Bun-Steinke conversion rho + 2 sqrt(rho log(1/delta)) equals epsilon."""
    L = -math.log(delta)
    # (sqrt(L + eps) - sqrt(L))^2 without cancellation
    root = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
    return root * root


def _zcdp_order_offset(epsilon, delta):
    """``sqrt(log(1/delta) / rho)`` for the rho of :func:`_zcdp_rho`: rho-zCDP converts best
    to (epsilon, delta) at the Renyi order one plus this (Bun and Steinke's optimum)."""
    rho = _zcdp_rho(epsilon, delta)
    # rho underflows to 0 below epsilon ~ 1e-150: the optimum is beyond every float order
    return math.sqrt(-math.log(delta) / rho) if rho > 0.0 else math.inf


#: Factors of :func:`zcdp_centred_orders` around the zCDP optimum (a twelfth of an octave apart).
ZCDP_ORDER_FACTORS = tuple(float(f) for f in np.geomspace(0.25, 4.0, 49))


@functools.lru_cache(maxsize=64)
def zcdp_centred_orders(epsilon, delta):
    """49 Renyi orders ``1 + f sqrt(log(1/delta) / rho)``, ``f`` from 1/4 to 4 (``rho`` the
    zCDP parameter that converts to (epsilon, delta)): where a composition spending about
    (epsilon, delta) converts best. dp-accounting's default grid is too coarse there for
    near-Gaussian curves, and ends at 1024, below the optimum of small budgets. Added to that
    grid by the estimators' composed calibrations and reports and by
    :class:`~dpsco_core.privacy.Budget` (so a budget of the fit's own (epsilon, delta)
    accounts the fit as tightly as its report).

    Parameters
    ----------
    epsilon : float
        In (0, inf).
    delta : float
        In (0, 1).

    Returns
    -------
    tuple of float
        The orders in (1, inf): at degenerate budgets some or all fall outside and are left
        out (epsilon near 1e300 puts the optimum at order 1 + 1e-150, which rounds to 1;
        epsilon below about 1e-150 puts it beyond the float range).
    """
    half = _zcdp_order_offset(float(check_epsilon(epsilon)), float(check_delta(delta)))
    return tuple(a for a in (1.0 + half * f for f in ZCDP_ORDER_FACTORS) if 1.0 < a < math.inf)


def _sorted_default_orders():
    values = sorted(set(DEFAULT_RDP_ORDERS))
    assert all(a < b for a, b in zip(values, values[1:]))
    return tuple(values)


_SORTED_DEFAULT_ORDERS = _sorted_default_orders()


@functools.lru_cache(maxsize=256)
def _report_orders(extra_orders):
    """The report's order grid for ``extra_orders`` (a tuple of floats): dp-accounting's
    default grid and the extra orders, sorted without repeats; built once per tuple, immutable
    (the accountant then takes it without a copy)."""
    if all(type(a) is float and 1.0 < a < math.inf for a in extra_orders):
        # np.unique of the concatenation, without NumPy's set machinery: the same sorted
        # distinct values (issue 18: building the grid was ~0.2 ms of a first dp_cd call)
        values = list(_SORTED_DEFAULT_ORDERS)
        for a in extra_orders:
            at = bisect.bisect_left(values, a)
            if at == len(values) or values[at] != a:
                values.insert(at, a)
        return immutable_orders_of_checked(values)
    grid = np.concatenate([np.asarray(DEFAULT_RDP_ORDERS, dtype=float),
                           np.asarray(extra_orders, dtype=float)])
    return immutable_orders(np.unique(grid))


def pure_share_epsilon(epsilon, delta, share):
    r"""The epsilon of a pure-DP step given a ``share`` of an :math:`(\varepsilon,
    \delta)` run's zCDP budget: :math:`\sqrt{2 s \rho}`, with :math:`\rho =
    (\sqrt{\log(1/\delta) + \varepsilon} - \sqrt{\log(1/\delta)})^2` the zCDP
    parameter whose Bun-Steinke conversion is exactly :math:`(\varepsilon, \delta)` (a pure
    :math:`\varepsilon_q`-DP mechanism is :math:`\varepsilon_q^2/2`-zCDP, Bun and Steinke
    2016, Proposition 1.4). About 0.05 at :math:`\varepsilon = 1`, :math:`\delta = 10^{-8}`
    and :math:`s = 0.1`. The private quantiles of :func:`dpsco_core.solvers.ssp.dp_ssp` and of
    the estimators' ``rms_row_norm="private"`` take their epsilon from it; the rest of the
    budget is then calibrated by the accountant with the quantile in the composition.

    Parameters
    ----------
    epsilon : float
        The run's epsilon, in (0, inf).
    delta : float
        The run's delta, in (0, 1).
    share : float
        The share s in (0, 1).

    Returns
    -------
    float
    """
    share = check_positive(share, "share")
    if share >= 1.0:
        raise ValueError(f"share must be in (0, 1); got {share!r}.")
    return math.sqrt(2.0 * share * _zcdp_rho(check_epsilon(epsilon), check_delta(delta)))


def _check_steps_epochs(steps, epochs, sample_rate):
    if (steps is None) == (epochs is None):
        raise ValueError("exactly one of steps and epochs must be given; got "
                         f"steps={steps!r}, epochs={epochs!r}.")
    if steps is not None:
        return check_int(steps, "steps", low=1)
    return steps_from_epochs(epochs, sample_rate)


def calibrate_sampled_gaussian(*, target_epsilon, target_delta, sample_rate, steps=None,
                               epochs=None, orders=None, conversion="improved",
                               epsilon_tolerance=1e-6,
                               max_noise_multiplier=MAX_NOISE_MULTIPLIER):
    """Smallest noise multiplier making Poisson-sampled DP-SGD (target_epsilon, target_delta)-DP.

    The mechanism is ``steps`` adaptive compositions of the Poisson-subsampled Gaussian mechanism
    (``PoissonSampledDpEvent(sample_rate, GaussianDpEvent(noise_multiplier))``), accounted with
    RDP and converted to (epsilon, delta), under the add-or-remove-one relation (also valid for
    zero-out).

    Parameters
    ----------
    target_epsilon : float
        In (0, inf).
    target_delta : float
        In (0, 1).
    sample_rate : float
        Poisson sampling probability ``q``, in (0, 1].
    steps : int, optional
        Number of steps, at least 1. Exactly one of ``steps`` and ``epochs`` must be given.
    epochs : float, optional
        Number of passes; ``steps = ceil(epochs / sample_rate)`` (see :func:`steps_from_epochs`).
    orders : array_like of float, optional
        Renyi orders in (1, inf). Default: dp-accounting's grid.
    conversion : {"improved", "mironov"}, default="improved"
        RDP -> DP conversion (see :mod:`dpsco_core.privacy.conversions`); ``"improved"`` is
        dp-accounting's, ``"mironov"`` is Mironov 2017, Prop. 3.
    epsilon_tolerance : float, default=1e-6
        The epsilon of the result lies in ``[target_epsilon - epsilon_tolerance,
        target_epsilon]``.
    max_noise_multiplier : float, default=1e6
        Give up (PrivacyBudgetError) beyond this noise multiplier.

    Returns
    -------
    float
        The noise multiplier (noise standard deviation over the l2 sensitivity of the sum). Its
        epsilon, recomputed by :class:`~dpsco_core.privacy.accountants.RdpAccountant` with the
        same orders and conversion, is at most ``target_epsilon``.

    Raises
    ------
    PrivacyBudgetError
        If no noise multiplier up to ``max_noise_multiplier`` meets the budget.
    ValueError, TypeError
        On invalid arguments, or if both or neither of ``steps`` and ``epochs`` are given.

    Warns
    -----
    OrderGridWarning
        If the optimal order at the returned noise multiplier is at the edge of the grid.

    References
    ----------
    Mironov, Talwar and Zhang, "Renyi differential privacy of the sampled Gaussian mechanism",
    2019; Abadi et al., "Deep learning with differential privacy", CCS 2016.
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    sample_rate = check_sample_rate(sample_rate)
    steps = _check_steps_epochs(steps, epochs, sample_rate)
    if orders is None:      # validated once (a few per cent of a dp_sgd call otherwise)
        orders, key = _DEFAULT_ORDERS
    else:
        orders = check_orders(orders)
        key = tuple(float(a) for a in orders)
    conversion = check_conversion(conversion)
    epsilon_tolerance = check_positive(epsilon_tolerance, "epsilon_tolerance")
    max_noise_multiplier = check_positive(max_noise_multiplier, "max_noise_multiplier")

    s, order = _sampled_gaussian_multiplier(target_epsilon, target_delta, sample_rate, steps,
                                            key, conversion, epsilon_tolerance,
                                            max_noise_multiplier)
    _warn_if_edge(order, orders)
    return s


@functools.lru_cache(maxsize=512)
def _sampled_gaussian_multiplier(target_epsilon, target_delta, sample_rate, steps, orders,
                                 conversion, epsilon_tolerance, max_noise_multiplier):
    """The search of :func:`calibrate_sampled_gaussian` on validated, hashable arguments.

    Memoized: the result is a pure function of its arguments, and hyperparameter grids call
    it with the same (epsilon, delta, q, steps) for every step size and clip.

    Per-order roots (issue 18). At one order, the epsilon of ``steps`` compositions is
    non-increasing in the noise multiplier, so the smallest multiplier meeting the target on
    the grid is the smallest of the orders' roots, and an order ``b`` has a root below ``s``
    exactly when its epsilon at ``s`` is below the target. The search therefore: evaluates
    the integer orders (compiled, no fractional series) at the closed-form start
    :func:`_sampled_gaussian_start` and takes the best one; solves that order's root (a scalar
    problem, ``dpsco_core._kernels._rdp.order_root``); evaluates the whole grid there (the
    accountant's own curve, memoized in :mod:`~dpsco_core.privacy.rdp` so the run's report
    reuses it) and moves to a better order while one exists. The answer is accepted only if
    the full grid's epsilon, computed and rounded as the accountant does, lies in
    ``[target_epsilon - epsilon_tolerance, target_epsilon]``; otherwise (never seen in the
    tests) the Brent search on the full grid below decides. Typically two roots and one
    full-grid evaluation, against a dozen full evaluations for Brent's method.
    """
    grid = _orders_array(orders)   # immutable: its conversion terms are cached

    def full(s):
        rdp = _sampled_gaussian_curve(sample_rate, s, orders)
        return _rdp_to_epsilon(grid, steps * rdp, target_delta, conversion)

    describe = (f"sampled Gaussian with sample_rate={sample_rate:g}, steps={steps}, "
                f"target_delta={target_delta:g}")
    start = _sampled_gaussian_start(target_epsilon, target_delta, sample_rate, steps,
                                    max_noise_multiplier)
    if sample_rate < 1.0:
        found = _per_order_search(target_epsilon, target_delta, sample_rate, steps, orders,
                                  conversion, epsilon_tolerance, max_noise_multiplier, start)
        if found is not None:
            return found
    return _calibrate_decreasing(full, target_epsilon, epsilon_tolerance,
                                 max_noise_multiplier, describe, start=start)


def _per_order_search(target_epsilon, target_delta, sample_rate, steps, orders, conversion,
                      epsilon_tolerance, max_noise_multiplier, start):
    """``(s, order)`` of :func:`_sampled_gaussian_multiplier`'s per-order search, or None
    when it cannot certify an answer (the caller then runs the full-grid search)."""
    grid = _orders_array(orders)
    improved = conversion == "improved"
    # The roots aim a hair below the target, so that the accountant's rounded epsilon
    # (round_up: 1e-13 relative and one ulp) stays at or below it.
    aim = target_epsilon * (1.0 - 1e-11)
    root_tolerance = 1e-3 * epsilon_tolerance   # cheap (few iterations), and tight

    def order_eps(alpha, s):
        return _rdp.order_epsilon(sample_rate, alpha, s, float(steps), target_delta, improved)

    def smallest_root(candidates, s):
        alpha, s = _rdp.smallest_root(sample_rate, np.ascontiguousarray(candidates),
                                      float(steps), target_delta, improved, aim, root_tolerance,
                                      s, _MIN_NOISE_MULTIPLIER, max_noise_multiplier)
        return (None, None) if math.isnan(s) else (alpha, s)

    # Integer orders first (compiled, no fractional series): the order with the smallest root
    # among the integer orders, from the start.
    alpha, s = smallest_root(_integer_orders(orders), start)
    # Then the whole grid (fractional orders too), at the accountant's memoized curve: an
    # order whose epsilon there is below the current order's has a smaller root.
    for _ in range(3):
        if s is None:
            return None
        eps, k = _epsilons_and_argmin(
            grid, steps * _sampled_gaussian_curve(sample_rate, s, orders), target_delta,
            conversion)
        better = grid[eps < order_eps(alpha, s)]
        if not better.size:
            epsilon = max(0.0, float(round_up(eps[k])))
            if target_epsilon - epsilon_tolerance <= epsilon <= target_epsilon:
                return s, float(grid[k])
            return None
        alpha, s = smallest_root(better, s)
    return None


@functools.lru_cache(maxsize=8)
def _integer_orders(orders):
    """The integer orders of a hashable grid, contiguous, once per grid (read-only)."""
    grid = _orders_array(orders)
    out = np.ascontiguousarray(grid[grid == np.floor(grid)])
    out.flags.writeable = False
    return out


def _sampled_gaussian_start(target_epsilon, target_delta, sample_rate, steps,
                            max_noise_multiplier):
    r"""Closed-form first guess of the search (only a start: every answer is checked).

    For small q, one step is about :math:`\alpha q^2 (e^{1/s^2} - 1) / 2`-RDP (the
    :math:`k = 2` term of :math:`A_\alpha`); with Mironov's conversion the best order gives
    :math:`\varepsilon \approx c + 2\sqrt{c L}`, :math:`c = T q^2 (e^{1/s^2} - 1) / 2`,
    :math:`L = \log(1/\delta)`, solved for s. Within a factor 4 of the answer over
    q in [1e-5, 0.3], epsilon in [0.1, 8], 4 to 3e6 steps.
    """
    log_inv_delta = -math.log(target_delta)
    c = (target_epsilon / (math.sqrt(log_inv_delta + target_epsilon)
                           + math.sqrt(log_inv_delta))) ** 2
    try:
        s = (math.sqrt(steps / (2.0 * c)) if sample_rate == 1.0
             else 1.0 / math.sqrt(math.log1p(2.0 * c / (steps * sample_rate ** 2))))
    except (OverflowError, ValueError, ZeroDivisionError):
        return 1.0
    return min(max(s, _MIN_NOISE_MULTIPLIER), max_noise_multiplier) if math.isfinite(s) else 1.0


def calibrate_gdp_multiplier(*, target_epsilon, target_delta, event_of, sqrt_releases,
                             neighboring_relation=None):
    """Noise multiplier ``s`` of a mechanism whose composition is ``(sqrt_releases / s)``-GDP,
    such that the GDP accountant's report of ``event_of(s)`` is within ``target_epsilon``.

    ``s = sqrt_releases / gdp_mu(target_epsilon, target_delta)`` (Dong, Roth and Su 2019,
    Corollaries 2.13 and 3.3), rounded up; then raised by doubling relative steps from 2^-52
    while :class:`~dpsco_core.privacy.accountants.GdpAccountant`'s epsilon of the event (its
    own round-ups and the conservative side of its root: 1.6e-13 above the target before
    this check, on every noisy-GD baseline) exceeds the target. The report a solver states is
    the accountant's, so the calibration is checked against it, not against the formula.

    Parameters
    ----------
    target_epsilon, target_delta : float
    event_of : callable
        ``s -> DpEvent``: the released event at multiplier ``s``.
    sqrt_releases : float
        ``sqrt`` of the composition's count of unit-sensitivity Gaussians (``sqrt(steps)``, or
        ``sqrt(levels)`` of a tree).
    neighboring_relation : NeighboringRelation, optional
        The accountant's relation (events such as the single-epoch tree support only some).

    Returns
    -------
    float
    """
    from .accountants import GdpAccountant

    s = float(round_up(sqrt_releases / _gdp_mu(target_epsilon, target_delta)))
    kwargs = {} if neighboring_relation is None else {"neighboring_relation": neighboring_relation}
    step = 2.0 ** -52
    while True:
        if not s < math.inf:
            # sqrt(releases) / mu beyond the float range (epsilon = delta = 1e-300 with 2^62
            # releases): refused naming the target, not the internal event (review s19)
            raise PrivacyBudgetError(
                f"(target_epsilon={target_epsilon!r}, target_delta={target_delta!r}) needs a "
                "noise multiplier beyond the float range for this many releases; use a "
                "larger epsilon or delta, or fewer releases.")
        epsilon = GdpAccountant(**kwargs).compose(event_of(s)).get_epsilon(target_delta)
        if epsilon <= target_epsilon:
            return s
        s = float(round_up(s * (1.0 + step)))
        step *= 2.0


def calibrate_gaussian(*, target_epsilon, target_delta, steps=1, accountant="rdp", orders=None,
                       conversion="improved", epsilon_tolerance=1e-6,
                       max_noise_multiplier=MAX_NOISE_MULTIPLIER):
    """Smallest noise multiplier for ``steps`` composed Gaussian mechanisms (no sampling, q = 1).

    Parameters
    ----------
    target_epsilon : float
        In (0, inf).
    target_delta : float
        In (0, 1).
    steps : int, default=1
        Number of adaptive releases, each of sensitivity 1 relative to the noise multiplier.
    accountant : {"rdp", "gdp"}, default="rdp"
        ``"rdp"``: RDP curve ``steps alpha / (2 s^2)`` over ``orders`` with ``conversion``
        (matches dp-accounting). ``"gdp"``: exact; the composition is ``sqrt(steps)/s``-GDP
        (Dong, Roth and Su 2019, Cor. 3.3), so ``s = sqrt(steps) / gdp_mu(epsilon, delta)``;
        this is the smallest noise for which the composition is (epsilon, delta)-DP.
    orders : array_like of float, optional
        Renyi orders for ``accountant="rdp"``. Default: dp-accounting's grid.
    conversion : {"improved", "mironov"}, default="improved"
        RDP -> DP conversion for ``accountant="rdp"``.
    epsilon_tolerance : float, default=1e-6
        As in :func:`calibrate_sampled_gaussian`.
    max_noise_multiplier : float, default=1e6

    Returns
    -------
    float
        The noise multiplier (conservative end of the search).

    Raises
    ------
    PrivacyBudgetError
        If no noise multiplier up to ``max_noise_multiplier`` meets the budget.

    References
    ----------
    Mironov 2017, Prop. 7 (RDP of the Gaussian mechanism); Dong, Roth and Su 2019,
    Corollaries 2.13 and 3.3.
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    steps = check_int(steps, "steps", low=1)
    if accountant not in ("rdp", "gdp"):
        raise ValueError(f"accountant must be one of {{'rdp', 'gdp'}}; got {accountant!r}.")
    epsilon_tolerance = check_positive(epsilon_tolerance, "epsilon_tolerance")
    max_noise_multiplier = check_positive(max_noise_multiplier, "max_noise_multiplier")
    if accountant == "gdp":
        s = calibrate_gdp_multiplier(
            target_epsilon=target_epsilon, target_delta=target_delta,
            event_of=lambda m: SelfComposedDpEvent(GaussianDpEvent(m), steps),
            sqrt_releases=math.sqrt(steps))
        if s > max_noise_multiplier:
            raise PrivacyBudgetError(
                f"{steps} Gaussian releases at (target_epsilon={target_epsilon:g}, "
                f"target_delta={target_delta:g}) need noise_multiplier={s:g} > "
                f"max_noise_multiplier={max_noise_multiplier:g}.")
        return s
    orders = check_orders(DEFAULT_RDP_ORDERS if orders is None else orders)
    conversion = check_conversion(conversion)

    def epsilon_and_order(s):
        # Exactly the accountant's arithmetic for SelfComposedDpEvent(GaussianDpEvent(s), steps)
        # (steps x rdp_gaussian(s)): a reordered formula rounds differently, and the solvers'
        # re-check then sees epsilon one ulp above the target.
        rdp = steps * _finish(orders / (2.0 * s * s))
        return _rdp_to_epsilon(orders, rdp, target_delta, conversion)

    describe = f"{steps} Gaussian releases at target_delta={target_delta:g}"
    s, order = _calibrate_decreasing(epsilon_and_order, target_epsilon, epsilon_tolerance,
                                     max_noise_multiplier, describe)
    _warn_if_edge(order, orders)
    return s


def calibrate_analytic_gaussian(*, target_epsilon, target_delta, sensitivity=1.0, releases=1):
    """Analytic Gaussian mechanism: the smallest noise scale for (epsilon, delta)-DP, exactly.

    Returns the noise standard deviation ``sigma`` such that ``releases`` adaptive Gaussian
    releases, each of l2 sensitivity ``sensitivity`` with noise ``N(0, sigma^2 I)``, are
    together (target_epsilon, target_delta)-DP. They are ``mu``-GDP with
    ``mu = sqrt(releases) sensitivity / sigma``, and this is tight, so
    ``sigma = sqrt(releases) sensitivity / gdp_mu(target_epsilon, target_delta)``.

    Parameters
    ----------
    target_epsilon : float
        In (0, inf).
    target_delta : float
        In (0, 1).
    sensitivity : float, default=1.0
        l2 sensitivity of each release under the neighbouring relation in use, in (0, inf).
        With ``sensitivity=1`` the result is a noise multiplier.
    releases : int, default=1
        Number of composed releases, at least 1.

    Returns
    -------
    float
        The noise standard deviation, rounded up (the conservative end).

    Notes
    -----
    For one release this is Balle and Wang's calibration: the Gaussian mechanism is
    (epsilon, delta)-DP if and only if
    ``Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D) <= delta``
    with ``D`` the sensitivity (the GDP curve at ``mu = D / sigma``).

    References
    ----------
    Balle and Wang, "Improving the Gaussian mechanism for differential privacy: analytical
    calibration and optimal denoising", ICML 2018, Theorem 8. Dong, Roth and Su 2019,
    Corollaries 2.13 and 3.3.
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    sensitivity = check_positive(sensitivity, "sensitivity")
    releases = check_int(releases, "releases", low=1)
    multiplier = calibrate_gdp_multiplier(
        target_epsilon=target_epsilon, target_delta=target_delta,
        event_of=lambda m: SelfComposedDpEvent(GaussianDpEvent(m), releases),
        sqrt_releases=math.sqrt(releases))
    sigma = float(round_up(multiplier * sensitivity))
    if not 0.0 < sigma < math.inf:
        # Found by property-based testing: a huge epsilon with a tiny sensitivity underflowed
        # to sigma = 0, i.e. no noise at all.
        raise ValueError(
            f"the calibrated noise scale must be a finite positive number; got {sigma!r} "
            f"(target_epsilon={target_epsilon!r}, sensitivity={sensitivity!r}).")
    return sigma


def dp_cd_noise_multiplier(*, epsilon, delta, releases, method="tight"):
    """Noise multiplier of DP-CD: ``releases`` Gaussian releases under (epsilon, delta)-DP.

    Every coordinate update of DP-CD releases one gradient coordinate with noise
    ``sigma_j = s Delta_j`` (``Delta_j = 2 C_j / n`` under replace-one), so each release is
    ``(alpha, alpha / (2 s^2))``-RDP and ``N = T K`` of them compose to
    ``(alpha, N alpha / (2 s^2))``-RDP (Mangold et al. 2022, App. B).

    Parameters
    ----------
    epsilon : float
        In (0, inf).
    delta : float
        In (0, 1).
    releases : int
        ``N = T K``, the number of coordinate releases (passes times coordinates per pass).
    method : {"tight", "theorem"}, default="tight"
        ``"tight"``: exact inversion of the Prop. 3 conversion at the continuous optimum
        ``alpha* = 1 + sqrt(2 log(1/delta)) s / sqrt(N)`` (note 002, §5.2):
        ``b = sqrt(2 log(1/delta))``, ``x = -b + sqrt(b^2 + 2 epsilon)``, ``s = sqrt(N) / x``.
        The resulting epsilon, ``N/(2 s^2) + sqrt(2 N log(1/delta))/s``, equals ``epsilon``.
        ``"theorem"``: Theorem 3.1 / Lemma B.9, ``s = sqrt(3 N log(1/delta)) / epsilon``,
        whose epsilon is ``epsilon^2/(6 log(1/delta)) + sqrt(2/3) epsilon``; it is checked to be
        at most ``epsilon`` (the lemma assumes ``epsilon <= 1``, the true region is larger).

    Returns
    -------
    float
        The noise multiplier ``s``, rounded up.

    Raises
    ------
    PrivacyBudgetError
        For ``method="theorem"`` when the theorem's noise does not give (epsilon, delta)-DP.

    Notes
    -----
    Reference values (note 002, §5.2; California, ``epsilon = 1``, ``n = 20640``,
    ``delta = 1/n^2``, ``N = 16``): ``"theorem"`` 30.883, ``"tight"`` 25.529.

    References
    ----------
    Mangold, Bellet, Salmon and Tommasi, "Differentially private coordinate descent for
    composite empirical risk minimization", ICML 2022, Theorem 3.1, Lemma B.3, Corollary B.8
    and Lemma B.9.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    releases = check_int(releases, "releases", low=1)
    if method not in ("tight", "theorem"):
        raise ValueError(f"method must be one of {{'tight', 'theorem'}}; got {method!r}.")
    log_inv_delta = -math.log(delta)
    if method == "theorem":
        s = math.sqrt(3.0 * releases * log_inv_delta) / epsilon
        achieved = epsilon * epsilon / (6.0 * log_inv_delta) + math.sqrt(2.0 / 3.0) * epsilon
        if achieved > epsilon:
            raise PrivacyBudgetError(
                f"Theorem 3.1's noise gives epsilon={achieved:.6g} > epsilon={epsilon:g} at "
                f"delta={delta:g} (it needs epsilon <= 6 (1 - sqrt(2/3)) log(1/delta) = "
                f"{6 * (1 - math.sqrt(2 / 3)) * log_inv_delta:.6g}); use method='tight'.")
        return float(round_up(s))
    b = math.sqrt(2.0 * log_inv_delta)
    # x = -b + sqrt(b^2 + 2 eps), written without cancellation: 2 eps / (b + sqrt(b^2 + 2 eps)).
    x = 2.0 * epsilon / (b + math.sqrt(b * b + 2.0 * epsilon))
    # A relative 1e-12 covers the rounding of the closed form.
    return float(round_up(math.sqrt(releases) / x * (1.0 + 1e-12)))


def calibrate_sampled_gaussian_pld(*, target_epsilon, target_delta, sample_rate=1.0, steps=None,
                                   epochs=None,
                                   value_discretization_interval=DEFAULT_PLD_DISCRETIZATION,
                                   noise_rtol=1e-4, epsilon_tolerance=1e-4,
                                   max_noise_multiplier=MAX_NOISE_MULTIPLIER):
    """Smallest noise multiplier for DP-SGD under the PLD accountant (``accountant="pld"``).

    The mechanism of :func:`calibrate_sampled_gaussian` (``steps`` compositions of the
    Poisson-subsampled Gaussian, add-or-remove-one or zero-out; ``sample_rate=1``: unsampled
    Gaussian releases, any relation), but accounted with
    :class:`~dpsco_core.privacy.accountants.PldAccountant` (dp-accounting's pessimistic
    privacy loss distributions), which is tighter than RDP: for 50 epochs at
    ``q = 256/45312``, ``epsilon = 1``, ``delta = 1/45312^2``, RDP needs 3.2417 and PLD 3.094
    (4.6 % less noise). The search brackets the noise multiplier and narrows the bracket on
    the PLD epsilon (Opacus calibrates its PRV accountant by bisection; here false position
    with the Illinois safeguard, in ``log s``, which needs fewer evaluations): the bracket
    starts from a first search on a PLD ten times coarser (discretisation 1e-3, about ten
    times cheaper), itself started at the RDP noise multiplier (without sampling: just above
    the exact GDP one, below which no noise can meet the budget), and its upper end, which
    meets the budget by the accountant's own computation, is returned. Each evaluation
    builds and self-composes a PLD: 0.3 s for 8850 steps at ``s = 3`` but about 3 s at
    ``s = 1`` (the privacy loss spreads over more discretisation points); 5 to 10 evaluations
    are needed. Results are memoized.

    Parameters
    ----------
    target_epsilon : float
        In (0, inf).
    target_delta : float
        In (0, 1).
    sample_rate : float, default=1.0
        Poisson sampling probability ``q``, in (0, 1]; 1 is no sampling.
    steps : int, optional
        Number of steps, at least 1. Exactly one of ``steps`` and ``epochs`` must be given.
    epochs : float, optional
        Number of passes; ``steps = ceil(epochs / sample_rate)``.
    value_discretization_interval : float, default=1e-4
        The PLD's discretisation of the privacy loss (pessimistic rounding), in (0, 1].
    noise_rtol : float, default=1e-4
        Stop when the bracket is this narrow (relative): the result is within a factor
        ``1 + noise_rtol`` of the smallest noise multiplier the accountant accepts...
    epsilon_tolerance : float, default=1e-4
        ... or when its epsilon is within ``epsilon_tolerance`` of the target (whichever
        comes first). The result's epsilon never exceeds the target.
    max_noise_multiplier : float, default=1e6
        Give up (PrivacyBudgetError) beyond this noise multiplier.

    Returns
    -------
    float
        The noise multiplier. Its epsilon, recomputed by ``PldAccountant`` with the same
        discretisation, is at most ``target_epsilon``.

    Raises
    ------
    ImportError
        If dp-accounting is not installed (``pip install 'dpsco-core[pld]'``).
    PrivacyBudgetError
        If no noise multiplier up to ``max_noise_multiplier`` meets the budget.

    References
    ----------
    Koskela, Jalko and Honkela, AISTATS 2020; Doroshenko et al., PETS 2022; Gopi, Lee and
    Wutschitz, "Numerical composition of differential privacy", NeurIPS 2021 (Opacus' PRV).
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    sample_rate = check_sample_rate(sample_rate)
    steps = _check_steps_epochs(steps, epochs, sample_rate)
    interval = check_positive(value_discretization_interval, "value_discretization_interval")
    noise_rtol = check_positive(noise_rtol, "noise_rtol")
    epsilon_tolerance = check_positive(epsilon_tolerance, "epsilon_tolerance")
    max_noise_multiplier = check_positive(max_noise_multiplier, "max_noise_multiplier")
    return _pld_multiplier(target_epsilon, target_delta, sample_rate, steps, interval,
                           noise_rtol, epsilon_tolerance, max_noise_multiplier)


#: Discretisation of the cheap first pass of the PLD calibration.
_PLD_COARSE_INTERVAL = 1e-3


@functools.lru_cache(maxsize=128)
def _pld_multiplier(target_epsilon, target_delta, sample_rate, steps, interval, noise_rtol,
                    epsilon_tolerance, max_noise_multiplier):
    """The search of :func:`calibrate_sampled_gaussian_pld` on validated arguments."""
    PldAccountant(value_discretization_interval=interval)   # ImportError before any work
    cache = {}

    def gap(s):     # PLD epsilon minus the target: <= 0 meets the budget
        if s not in cache:
            event = SelfComposedDpEvent(PoissonSampledDpEvent(sample_rate, GaussianDpEvent(s)),
                                        steps)
            acc = PldAccountant(value_discretization_interval=interval).compose(event)
            cache[s] = acc.get_epsilon(target_delta) - target_epsilon
        return cache[s]

    factor = 1.1
    if sample_rate == 1.0:
        # Unsampled: the composition is exactly a Gaussian of multiplier s / sqrt(steps), whose
        # exact epsilon (GDP) the pessimistic PLD can only over-estimate: below the GDP
        # multiplier no s meets the budget, so the bracket starts just around it.
        s_exact = math.sqrt(steps) / _gdp_mu(target_epsilon, target_delta)
        hi, lo = s_exact * (1.0 + 1e-3), s_exact * (1.0 - 1e-6)
    elif interval < _PLD_COARSE_INTERVAL:
        # A PLD ten times coarser is about ten times cheaper to build and lands within a few
        # per cent (both are upper bounds): its answer brackets the fine search closely.
        hi = _pld_multiplier(target_epsilon, target_delta, sample_rate, steps,
                             _PLD_COARSE_INTERVAL, 1e-3, 1e-3, max_noise_multiplier)
        factor = 1.02
        lo = hi / factor
    else:
        try:   # RDP is looser, so its answer (cheap) is a good upper end of the bracket
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OrderGridWarning)
                hi = calibrate_sampled_gaussian(
                    target_epsilon=target_epsilon, target_delta=target_delta,
                    sample_rate=sample_rate, steps=steps,
                    max_noise_multiplier=max_noise_multiplier)
        except PrivacyBudgetError:
            hi = max_noise_multiplier
        lo = hi / factor
    while gap(hi) > 0.0:
        if hi >= max_noise_multiplier:
            raise PrivacyBudgetError(
                f"PLD: sampled Gaussian with sample_rate={sample_rate:g}, steps={steps}, "
                f"target_delta={target_delta:g}: even noise_multiplier={hi:g} gives epsilon "
                f"above target_epsilon={target_epsilon:g}; the budget cannot be met below "
                f"max_noise_multiplier={max_noise_multiplier:g}.")
        lo, hi = hi, min(hi * factor, max_noise_multiplier)
    while gap(lo) <= 0.0:
        hi = lo
        if lo <= _MIN_NOISE_MULTIPLIER:
            return hi
        lo /= factor
    # Bracketed search in log(s), invariant gap(hi) <= 0 < gap(lo): false position with the
    # Illinois modification (the end kept twice in a row has its gap halved), falling back to
    # the midpoint, so the bracket always shrinks; the safe end ``hi`` is returned.
    g_lo, g_hi, kept = gap(lo), gap(hi), None
    for _ in range(100):
        if hi / lo - 1.0 <= noise_rtol or -g_hi <= epsilon_tolerance:
            break
        x_lo, x_hi = math.log(lo), math.log(hi)
        x = (x_hi - g_hi * (x_hi - x_lo) / (g_hi - g_lo) if math.isfinite(g_lo)
             else 0.5 * (x_lo + x_hi))
        if not x_lo < x < x_hi:
            x = 0.5 * (x_lo + x_hi)
        s = math.exp(x)
        if gap(s) <= 0.0:
            hi, g_hi = s, gap(s)
            if kept == "lo":
                g_lo *= 0.5
            kept = "lo"
        else:
            lo, g_lo = s, gap(s)
            if kept == "hi":
                g_hi *= 0.5
            kept = "hi"
    return hi
