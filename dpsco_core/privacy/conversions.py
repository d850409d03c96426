"""Conversions from Renyi DP and zero-concentrated DP to (epsilon, delta)-DP.

Two RDP conversions are offered, chosen by name everywhere in the library:

``"improved"`` (the default, and dp-accounting's)
    ``(alpha, r)``-RDP implies ``(epsilon, delta)``-DP with
    ``epsilon = r + log1p(-1/alpha) - (log(delta) + log(alpha)) / (alpha - 1)``
    (Canonne, Kamath and Steinke 2020, Proposition 12; Balle et al. 2020, Theorem 21;
    Asoodeh et al. 2020). As in dp-accounting it is used for ``alpha > 1.01`` (it is unstable as
    ``alpha -> 1``), and it is combined with the total-variation bound
    ``delta <= sqrt(1 - exp(-r))`` that follows from ``KL <= D_alpha`` (Bretagnolle-Huber).
``"mironov"``
    ``(alpha, r)``-RDP implies ``(r + log(1/delta) / (alpha - 1), delta)``-DP
    (Mironov 2017, Proposition 3). This is Lemma B.3 of the DP-CD paper (Mangold et al. 2022):
    use it for paper-faithful numbers.

Each function minimises over the given orders in one vectorised pass and rounds its result up
by one ulp. The optimal order is returned with the bound so that callers can warn when it sits at
the edge of the grid.
"""

import math

import numpy as np
from scipy import optimize

from .._kernels import _rdp
from .._validation import check_delta, check_scalar
from ._checks import check_conversion, check_orders, is_immutable_orders, round_up

__all__ = [
    "rdp_to_epsilon",
    "rdp_to_delta",
    "zcdp_to_epsilon",
    "zcdp_to_delta",
]

# Below this order the improved bound divides round-off by (alpha - 1); dp-accounting uses the
# same threshold. Mironov's bound, valid everywhere, is used instead for such orders.
_MIN_ORDER_IMPROVED = 1.01


def _check_curve(orders, rdp):
    orders = check_orders(orders)
    rdp = np.array(rdp, dtype=np.float64)  # a copy: the caller's array is never touched
    if rdp.shape != orders.shape:
        raise ValueError(f"rdp must have the shape of orders {orders.shape}; got {rdp.shape}.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("rdp must hold non-negative numbers or inf; it has NaN or a negative "
                         "value.")
    return orders, rdp


def _epsilons(orders, rdp, delta, conversion):
    """Per-order epsilon bounds (vectorised); inf where an order gives no bound.

    The loop is compiled (``dpsco_core._kernels._rdp.epsilons``: the same operations on the
    same order terms, bitwise :func:`_epsilons_numpy`, its twin); the total-variation rule
    runs in NumPy as before, whenever some order's RDP is small enough for it to hold."""
    return _epsilons_and_argmin(orders, rdp, delta, conversion)[0]


def _epsilons_and_argmin(orders, rdp, delta, conversion):
    """``(eps, int(np.argmin(eps)))`` of :func:`_epsilons`."""
    minus_one, _, log1p_inv, log_orders = _grid_terms(orders)
    if not (isinstance(rdp, np.ndarray) and rdp.dtype == np.float64 and rdp.ndim == 1
            and orders.dtype == np.float64 and rdp.shape == orders.shape):
        eps = _epsilons_numpy(orders, rdp, delta, conversion)     # anything else, as before
        return eps, int(np.argmin(eps))
    eps, tiny, k = _rdp.epsilons(orders, rdp, math.log(delta), delta,
                                 conversion == "improved", minus_one, log1p_inv, log_orders)
    if tiny:
        with np.errstate(invalid="ignore", over="ignore"):
            eps = np.where(delta * delta + np.expm1(-rdp) > 0.0, 0.0, eps)
        k = int(np.argmin(eps))
    return eps, k


def _epsilons_numpy(orders, rdp, delta, conversion):
    """:func:`_epsilons` in NumPy (the former code, and the compiled loop's twin)."""
    log_delta = math.log(delta)
    minus_one, use, log1p_inv, log_orders = _grid_terms(orders)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = rdp - log_delta / minus_one
        if conversion == "improved":
            improved = (rdp + log1p_inv - (log_delta + log_orders) / minus_one)
            eps = np.where(use, improved, eps)
            # delta >= sqrt(1 - exp(-r)) (total variation from KL <= D_alpha) gives epsilon 0.
            eps = np.where(delta * delta + np.expm1(-rdp) > 0.0, 0.0, eps)
    return np.where(np.isnan(eps), np.inf, eps)


#: The order-only terms of :func:`_epsilons` for immutable grids (``immutable_orders``), by
#: ``id``, the array held with them (so its id is not reused); at most 64 grids are kept.
_GRID_TERMS: dict = {}


def _grid_terms(orders):
    """``(orders - 1, orders > 1.01, log1p(-1 / orders), log(orders))``: the same NumPy
    operations on the same array as before, computed once per constant grid (issue 18)."""
    hit = _GRID_TERMS.get(id(orders))
    if hit is not None and hit[0] is orders:
        return hit[1]
    with np.errstate(invalid="ignore", over="ignore"):
        terms = (orders - 1.0, orders > _MIN_ORDER_IMPROVED, np.log1p(-1.0 / orders),
                 np.log(orders))
    if is_immutable_orders(orders):
        for term in terms:
            term.flags.writeable = False
        if len(_GRID_TERMS) >= 64:
            _GRID_TERMS.clear()
        _GRID_TERMS[id(orders)] = (orders, terms)
    return terms


def _log_deltas(orders, rdp, epsilon, conversion):
    """Per-order log-delta bounds (vectorised)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        log_d = (orders - 1.0) * (rdp - epsilon)
        if conversion == "improved":
            use = orders > _MIN_ORDER_IMPROVED
            improved = ((orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders))
                        - np.log(orders))
            log_d = np.where(use, improved, log_d)
            log_d = np.minimum(log_d, 0.5 * np.log1p(-np.exp(-rdp)))
    return np.where(np.isnan(log_d), np.inf, log_d)


def rdp_to_epsilon(orders, rdp, delta, *, conversion="improved"):
    """Smallest epsilon such that an RDP curve implies (epsilon, delta)-DP, over the given orders.

    Parameters
    ----------
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf).
    rdp : array_like of shape (n_orders,)
        RDP at each order (non-negative, ``inf`` allowed).
    delta : float
        Target delta, in (0, 1).
    conversion : {"improved", "mironov"}, default="improved"
        ``"improved"``: ``r + log1p(-1/alpha) - (log(delta) + log(alpha)) / (alpha - 1)``
        (Canonne, Kamath and Steinke 2020, Prop. 12), with the total-variation bound; this is
        what dp-accounting reports. ``"mironov"``: ``r + log(1/delta) / (alpha - 1)``
        (Mironov 2017, Prop. 3; DP-CD paper Lemma B.3).

    Returns
    -------
    epsilon : float
        The bound, minimised over orders, rounded up, and at least 0 (``inf`` if no order gives a
        finite bound).
    order : float
        The order attaining it.

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017, Proposition 3.
    Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy",
    NeurIPS 2020, Proposition 12. Balle, Barthe, Gaboardi, Hsu and Sato, "Hypothesis testing
    interpretations and Renyi differential privacy", AISTATS 2020, Theorem 21.
    """
    orders, rdp = _check_curve(orders, rdp)
    delta = check_delta(delta)
    conversion = check_conversion(conversion)
    return _rdp_to_epsilon(orders, rdp, delta, conversion)


def _rdp_to_epsilon(orders, rdp, delta, conversion):
    """:func:`rdp_to_epsilon` on validated input (the calibration search calls this)."""
    eps, k = _epsilons_and_argmin(orders, rdp, delta, conversion)
    return max(0.0, float(round_up(eps[k]))), float(orders[k])


def rdp_to_delta(orders, rdp, epsilon, *, conversion="improved"):
    """Smallest delta such that an RDP curve implies (epsilon, delta)-DP, over the given orders.

    Parameters
    ----------
    orders : array_like of shape (n_orders,)
        Renyi orders, each in (1, inf).
    rdp : array_like of shape (n_orders,)
        RDP at each order (non-negative, ``inf`` allowed).
    epsilon : float
        Target epsilon, in [0, inf).
    conversion : {"improved", "mironov"}, default="improved"
        ``"improved"``: ``log delta = (alpha - 1)(r - epsilon + log1p(-1/alpha)) - log(alpha)``
        (Canonne, Kamath and Steinke 2020, Prop. 12) combined with
        ``delta <= sqrt(1 - exp(-r))``. ``"mironov"``: ``log delta = (alpha - 1)(r - epsilon)``
        (Mironov 2017, Prop. 3).

    Returns
    -------
    delta : float
        The bound, minimised over orders, rounded up, at most 1.
    order : float
        The order attaining it.

    References
    ----------
    As :func:`rdp_to_epsilon`.
    """
    orders, rdp = _check_curve(orders, rdp)
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_open=False)
    conversion = check_conversion(conversion)
    return _rdp_to_delta(orders, rdp, epsilon, conversion)


def _rdp_to_delta(orders, rdp, epsilon, conversion):
    log_d = _log_deltas(orders, rdp, epsilon, conversion)
    k = int(np.argmin(log_d))
    return min(1.0, float(round_up(math.exp(min(log_d[k], 0.0))))), float(orders[k])


def zcdp_to_epsilon(rho, delta, *, conversion="bun-steinke"):
    """Epsilon such that ``rho``-zCDP implies (epsilon, delta)-DP.

    Parameters
    ----------
    rho : float
        zCDP parameter, in [0, inf).
    delta : float
        Target delta, in (0, 1).
    conversion : {"bun-steinke", "cks"}, default="bun-steinke"
        ``"bun-steinke"``: ``epsilon = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke 2016,
        Proposition 1.3). ``"cks"``: the tighter
        ``epsilon = inf_{alpha > 1} rho alpha + log(1/(alpha delta)) / (alpha - 1)
        + log(1 - 1/alpha)`` (Canonne, Kamath and Steinke 2020, Corollary 13), minimised over a
        continuous alpha; any alpha gives a valid bound, so the minimiser's accuracy only
        affects tightness.

    Returns
    -------
    float
        Epsilon, rounded up, at least 0.

    References
    ----------
    Bun and Steinke, "Concentrated differential privacy", TCC 2016, Proposition 1.3.
    Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy",
    NeurIPS 2020, Corollary 13.
    """
    rho = check_scalar(rho, "rho", low=0.0, low_open=False)
    delta = check_delta(delta)
    conversion = _check_zcdp_conversion(conversion)
    log_inv_delta = -math.log(delta)
    if rho == 0.0:
        return 0.0
    if conversion == "bun-steinke":
        return float(round_up(rho + 2.0 * math.sqrt(rho * log_inv_delta)))

    def bound(alpha):
        if not 1.0 < alpha < math.inf:      # see _one_plus_exp
            return math.inf
        return (rho * alpha + (log_inv_delta - math.log(alpha)) / (alpha - 1.0)
                + math.log1p(-1.0 / alpha))

    # The Bun-Steinke optimum alpha = 1 + sqrt(log(1/delta) / rho) is close; search around it.
    guess = 1.0 + math.sqrt(log_inv_delta / rho)
    if 1.0 < guess < math.inf:
        t0 = math.log(guess - 1.0)
    else:   # sqrt(log(1/delta) / rho) below 1.1e-16 or beyond the float range: its log
        t0 = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    res = optimize.minimize_scalar(lambda t: bound(_one_plus_exp(t)),
                                   bracket=(t0 - 1.0, t0 + 1.0))
    best = min(bound(_one_plus_exp(res.x)), bound(guess))
    # Never looser than Bun-Steinke's (valid) bound: it is the answer where no alpha near the
    # optimum is representable (best is inf), and where the CKS terms are below rho's ulp
    # (rho = 1e30: CKS came out 1 ulp above it); elsewhere CKS is smaller by a wide margin.
    best = min(best, rho + 2.0 * math.sqrt(rho * log_inv_delta))
    return max(0.0, float(round_up(best)))


def _one_plus_exp(t):
    """``1 + e^t``, the order alpha of the zCDP conversions' searches over ``t = log(alpha - 1)``;
    nan where ``e^t`` overflows. The bounds are inf at an alpha that is not in (1, inf): for
    extreme rho or delta (rho = 0.5 at delta = 0.99999, rho = 1e30 at delta = 1e-5) Brent's
    steps reach a t below -37, where 1 + e^t rounds to 1 (ZeroDivisionError from
    ``log(...) / (alpha - 1)``, ValueError "math domain error" from ``log1p(-1)``), or beyond
    709 (OverflowError); found by hypothesis (session 19, GaussianMechanism(epsilon=1.0,
    delta=0.99999) raised ZeroDivisionError). Any alpha > 1 gives a valid bound, so skipping
    these only affects tightness; ordinary inputs keep their bits."""
    try:
        return 1.0 + math.exp(t)
    except OverflowError:
        return math.nan


def zcdp_to_delta(rho, epsilon):
    """Delta such that ``rho``-zCDP implies (epsilon, delta)-DP.

    Uses ``delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - epsilon)) / alpha
    * (1 - 1/alpha)^(alpha - 1)`` (Canonne, Kamath and Steinke 2020, Proposition 12 applied to
    the RDP curve ``rho alpha``), minimised over a continuous alpha.

    Parameters
    ----------
    rho : float
        zCDP parameter, in [0, inf).
    epsilon : float
        Target epsilon, in [0, inf).

    Returns
    -------
    float
        Delta, rounded up, at most 1.

    References
    ----------
    Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy",
    NeurIPS 2020, Proposition 12 and Corollary 13.
    """
    rho = check_scalar(rho, "rho", low=0.0, low_open=False)
    epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_open=False)
    if rho == 0.0:
        return 0.0

    def log_bound(alpha):
        if not 1.0 < alpha < math.inf:      # see _one_plus_exp
            return math.inf
        return ((alpha - 1.0) * (alpha * rho - epsilon + math.log1p(-1.0 / alpha))
                - math.log(alpha))

    guess = max(1.0 + 1e-6, (epsilon + rho) / (2.0 * rho))  # minimiser of the leading term
    if guess < math.inf:
        t0 = math.log(guess - 1.0 + 1e-12)
    else:   # (epsilon + rho) / (2 rho) beyond the float range: its log
        t0 = math.log(epsilon) - math.log(rho) - math.log(2.0)
    res = optimize.minimize_scalar(lambda t: log_bound(_one_plus_exp(t)),
                                   bracket=(t0 - 1.0, t0 + 1.0))
    best = min(log_bound(_one_plus_exp(res.x)), log_bound(guess))
    return min(1.0, float(round_up(math.exp(min(best, 0.0)))))


def _check_zcdp_conversion(conversion):
    allowed = ("bun-steinke", "cks")
    if not isinstance(conversion, str):
        raise TypeError(f"conversion must be a str in {set(allowed)}; "
                        f"got {type(conversion).__name__} {conversion!r}.")
    if conversion not in allowed:
        raise ValueError(f"conversion must be one of {set(allowed)}; got {conversion!r}.")
    return conversion
