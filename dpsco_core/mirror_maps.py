r"""The p-norm mirror map of l1/lp-geometry mirror descent: link, inverse, Bregman steps.

Implementation notes: ``shared/notes/004_l1.md``, sections 2.2 and 9.4. With
:math:`u = x - c` (c the center) and a scale :math:`a > 0`,

.. math::

    h(u) = \frac a2 \|u\|_p^2, \qquad \nabla h(u) = a \|u\|_p^{2-p}\, \mathrm{sign}(u) |u|^{p-1},
    \qquad \nabla h^*(\theta) = \frac1a \|\theta\|_q^{2-q}\, \mathrm{sign}(\theta)
    |\theta|^{q-1},

with :math:`1/p + 1/q = 1`. :math:`a = 1/(p-1)` makes h 1-strongly convex w.r.t.
:math:`\|\cdot\|_p` (Algorithms 5 and 6); for l1 geometry :math:`p = 1 + 1/\ln d`, so that
:math:`\|z\|_1 \le c_d \|z\|_p` with :math:`c_d = d^{1 - 1/p} < e`.

Numerics (note 9.4): q - 1 = ln d is about 14 at d = 1e6, so :math:`|\theta_j|^{q-1}` over- or
underflows for entries far from 1. Both maps divide by :math:`m = \max_j |\cdot_j|` first
(both are positively 1-homogeneous), take powers as ``exp(e * log|t|)`` of numbers in [0, 1]
(underflow to 0 is harmless there) and multiply m back: no inf or NaN for any finite input.

Bregman steps (note 2.2). The composite mirror step
:math:`\arg\min_{x \in K} \langle g, x\rangle + \lambda h(x - c) + \frac1\eta D_h(x, x_k)` is
:math:`\arg\min_{u} \frac{a(1+\eta\lambda)}2 \|u\|_p^2 - \langle \theta, u\rangle` with
:math:`\theta = \nabla h(x_k - c) - \eta g`:

* :math:`K = \{\|u\|_p \le R\}`: the exact solution is the radial clip of the unconstrained
  point :math:`\nabla h^*(\theta) / (1 + \eta\lambda)` (for fixed :math:`r = \|u\|_p` the best u
  is aligned with :math:`\nabla h^*(\theta)`, and the problem in r is a clipped parabola).
* :math:`K = \{\|u\|_p \le R\} \cap \{\|c + u\|_1 \le D\}`: :func:`bregman_project_l1`, an exact
  nested bisection. For a multiplier :math:`\mu \ge 0` of the l1 constraint and a scalar
  :math:`\kappa = 1 / (A \|u\|_p^{2-p})`, each coordinate solves
  :math:`\min_t |t|^p/(p\kappa) - \theta_j t + \mu |c_j + t|` in closed form; :math:`\kappa`
  solves :math:`\kappa A \|u(\kappa)\|_p^{2-p} = 1` (or :math:`\|u(\kappa)\|_p = R` when the
  ball binds, whichever :math:`\kappa` is smaller: both sides increase in :math:`\kappa`), and
  :math:`\mu` is bisected until :math:`\|c + u\|_1 = D`.
* :math:`K = \{\|u\|_p \le R\} \cap \{\|c + u\|_p \le D\}` (Algorithm 6's
  :math:`X_i = X \cap \{\|x - x_{i-1}\|_p \le R_i\}` with X the lp ball of radius D):
  :func:`bregman_project_lp`, the same nested search with the X constraint written as
  :math:`\frac1p\|c + u\|_p^p \le \frac1p D^p` (multiplier :math:`\nu \ge 0`), so that for
  fixed :math:`(\kappa, \nu)` each coordinate solves the strictly convex
  :math:`\min_t |t|^p/(p\kappa) + \nu |c_j + t|^p/p - \theta_j t`, i.e. the increasing
  equation :math:`\varphi(t)/\kappa + \nu\varphi(c_j + t) = \theta_j`
  (:math:`\varphi(s) = \mathrm{sign}(s)|s|^{p-1}`), whose root lies between
  :math:`\varphi^{-1}(\kappa\theta_j)` and :math:`-c_j` and between :math:`-c_j +
  \varphi^{-1}(\theta_j/\nu)` and 0 (safeguarded root finding in that bracket). For fixed
  :math:`\nu`, :math:`|t_j|` does not decrease in :math:`\kappa` (a smaller weight on
  :math:`|t|^p`), so :math:`\kappa` is found as above; :math:`\|c + u(\nu)\|_p` does not
  increase in :math:`\nu` (a larger weight on the penalty), so :math:`\nu` is bisected until
  :math:`\|c + u\|_p = D`. This is the exact Bregman projection of the paper's Algorithm 5
  step over :math:`X_i` (KKT: :math:`\theta = a\varphi(u) + b\varphi(c + u)` with scalars
  :math:`a > 0`, :math:`b \ge 0`).
"""

import math

import numpy as np

from ._validation import check_int, check_positive, check_scalar, check_vector

__all__ = ["pnorm_exponent", "l1_norm_constant", "pnorm_link", "pnorm_link_inverse",
           "bregman_divergence", "bregman_project_ball", "bregman_project_l1",
           "bregman_project_lp",
           "mirror_step", "entropic_step", "check_p"]


def pnorm_exponent(n_features):
    """p = 1 + 1/ln d for l1 geometry (note 2.2), clamped to 2 (Euclidean) for d <= e.

    Parameters
    ----------
    n_features : int
        d >= 1.

    Returns
    -------
    float
    """
    d = check_int(n_features, "n_features", low=1)
    return 2.0 if d <= math.e else min(2.0, 1.0 + 1.0 / math.log(d))


def l1_norm_constant(n_features, p):
    """c_d = d^(1 - 1/p): ||z||_1 <= c_d ||z||_p for z in R^d (Hoelder).

    Parameters
    ----------
    n_features : int
        d.
    p : float
        In (1, 2].

    Returns
    -------
    float
    """
    return float(n_features) ** (1.0 - 1.0 / p)


def check_p(p, name="p"):
    """p in (1, 2]: the exponents the p-norm map is strongly convex for.

    Parameters
    ----------
    p : float
        The exponent.
    name : str, default="p"
        The argument's name in the error message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If p is not in (1, 2].
    """
    return check_scalar(p, name, low=1.0, high=2.0, high_open=False)


def _scaled_power(v, e):
    """(m, sign(v) |v / m|^e, ||v / m||) pieces: m = max |v| (0 for v = 0)."""
    m = float(np.max(np.abs(v))) if v.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return m, np.zeros_like(v)
    t = np.abs(v) / m
    with np.errstate(divide="ignore"):
        powered = np.where(t > 0.0, np.exp(e * np.log(t)), 0.0)
    return m, np.sign(v) * powered


def _norm_scaled(v, p):
    """||v||_p computed as m ||v / m||_p (no overflow for p up to ~50)."""
    m = float(np.max(np.abs(v))) if v.size else 0.0
    if m == 0.0:
        return 0.0
    t = np.abs(v) / m
    with np.errstate(divide="ignore"):
        s = np.sum(np.where(t > 0.0, np.exp(p * np.log(t)), 0.0))
    return m * s ** (1.0 / p)


#: bregman_divergence at p = 2: below this ||x - y|| / M the entries of (x - y) / M may be
#: subnormal and the square underflows, so D is recomputed on x - y scaled by its own size.
_P2_RESCALE_BELOW = 2.0 ** -500


def _check_scale(scale, p):
    """a = ``scale`` in (0, inf), default 1/(p-1)."""
    return 1.0 / (p - 1.0) if scale is None else check_positive(scale, "scale")


def _finite_or_raise(out, names, what):
    """``out`` if every entry is finite, else a ValueError naming the arguments responsible."""
    if np.all(np.isfinite(out)):
        return out
    raise ValueError(f"{names} too large: {what} exceeds the float64 range (1.8e308); "
                     "rescale the inputs.")


def pnorm_link(u, p, scale=None):
    r""":math:`\nabla h(u) = a \|u\|_p^{2-p} \mathrm{sign}(u)|u|^{p-1}` (a = ``scale``,
    default 1/(p-1)); :math:`\nabla h(0) = 0`.

    ``u`` must be a finite 1-d vector and ``scale`` in (0, inf). The output has dual norm
    :math:`a\|u\|_p`: when that exceeds the float64 range a ValueError names ``u`` and
    ``scale`` (no inf or NaN is returned).

    Parameters
    ----------
    u : ndarray of shape (d,)
        The point.
    p : float
        In (1, 2].
    scale : float, optional
        a (default 1/(p-1)).

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    a = _check_scale(scale, p)
    u = check_vector(u, "u", allow_empty=True)
    return _link(u, p, a)


def _link(u, p, a):
    m, powered = _scaled_power(u, p - 1.0)
    if m == 0.0:
        return np.zeros_like(u)
    # (a ||u/m||^(2-p) sign|u/m|^(p-1)) * m: a * m alone may overflow (a = 2, m = 1e308).
    with np.errstate(over="ignore", invalid="ignore"):
        out = (a * _norm_scaled(u / m, p) ** (2.0 - p) * powered) * m
    return _finite_or_raise(out, "u and scale are", "a ||u||_p, the size of the link,")


def pnorm_link_inverse(theta, p, scale=None):
    r""":math:`\nabla h^*(\theta) = \frac1a \|\theta\|_q^{2-q} \mathrm{sign}(\theta)
    |\theta|^{q-1}`, the inverse of :func:`pnorm_link` (q = p/(p-1); max-scaled, note 9.4).

    ``theta`` must be a finite 1-d vector and ``scale`` in (0, inf); a result beyond the
    float64 range raises a ValueError naming ``theta`` and ``scale``.

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The dual point.
    p : float
        In (1, 2].
    scale : float, optional
        a (default 1/(p-1)).

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    a = _check_scale(scale, p)
    theta = check_vector(theta, "theta", allow_empty=True)
    return _link_inverse(theta, p, a)


def _link_inverse(theta, p, a):
    with np.errstate(over="ignore", invalid="ignore"):
        if p == 2.0:
            out = theta / a
        else:
            q = p / (p - 1.0)
            m, powered = _scaled_power(theta, q - 1.0)
            if m == 0.0:
                return np.zeros_like(theta)
            out = (_norm_scaled(theta / m, q) ** (2.0 - q) * powered) * m / a
    return _finite_or_raise(out, "theta is too large or scale too small:",
                            "||theta||_q / a, the size of the inverse link,")


def _same_length(v, n, name):
    if v.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (the length of x); got {v.shape[0]}.")
    return v


def bregman_divergence(x, y, p, center=None, scale=None):
    """D_h(x, y) = h(x - c) - h(y - c) - <grad h(y - c), x - y> for h = (a/2)||. - c||_p^2.

    ``x``, ``y`` and ``center`` are finite vectors of one length, ``scale`` in (0, inf).
    Computed on the inputs divided by their largest entry M (D is 2-homogeneous in (x, y, c)),
    so no intermediate overflows; when D itself exceeds the float64 range a ValueError names
    ``x`` and ``y``. For p = 2, D = (a/2)||x - y||^2 exactly; for p < 2 the absolute error is
    about 1e-16 (h(x - c) + h(y - c)) (the defining difference cancels).

    Parameters
    ----------
    x, y : ndarray of shape (d,)
        The points.
    p : float
        In (1, 2].
    center : ndarray of shape (d,), optional
        c (default 0).
    scale : float, optional
        a (default 1/(p-1)).

    Returns
    -------
    float
    """
    p = check_p(p)
    a = _check_scale(scale, p)
    x = check_vector(x, "x")
    y = _same_length(check_vector(y, "y"), x.shape[0], "y")
    c = (np.zeros_like(x) if center is None
         else _same_length(check_vector(center, "center"), x.shape[0], "center"))
    M = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), float(np.max(np.abs(c))))
    if M == 0.0:
        return 0.0
    xs, ys, cs = x / M, y / M, c / M
    if p == 2.0:
        n = _norm_scaled(xs - ys, 2.0)
        if n < _P2_RESCALE_BELOW and np.any(x != y):
            # D = (a/2)||x - y||^2 does not depend on c, but M does: a far centre (or one far
            # coordinate of x and y) leaves ||x - y|| / M subnormal, and D came out 0 or
            # inexact (x = [1], y = [0], center = [1.8e308] gave 0, not 0.5). Here x - y is
            # finite (|x_i - y_i| <= 2^-500 M), so scale by its own largest entry.
            d = x - y
            Md = float(np.max(np.abs(d)))
            with np.errstate(over="ignore"):
                out = ((0.5 * a * _norm_scaled(d / Md, 2.0) ** 2) * Md) * Md
            return float(_finite_or_raise(np.float64(out), "x and y are",
                                          "the divergence D_h(x, y)"))
        ds = 0.5 * a * n ** 2
    else:
        hx = 0.5 * a * _norm_scaled(xs - cs, p) ** 2
        hy = 0.5 * a * _norm_scaled(ys - cs, p) ** 2
        ds = max(0.0, hx - hy - float(_link(ys - cs, p, a) @ (xs - ys)))
    with np.errstate(over="ignore"):
        out = (ds * M) * M
    return float(_finite_or_raise(np.float64(out), "x and y are",
                                  "the divergence D_h(x, y)"))


def bregman_project_ball(theta, p, scale, radius):
    r"""argmin over :math:`\|u\|_p \le R` of :math:`\frac a2\|u\|_p^2 - \langle\theta,u\rangle`:
    the radial clip of :math:`\nabla h^*(\theta)` (exact; module docstring).

    ``theta`` a finite vector, ``scale`` in (0, inf), ``radius`` in (0, inf].

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The dual point.
    p : float
        In (1, 2].
    scale : float
        a.
    radius : float
        R.

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    a = check_positive(scale, "scale")
    radius = check_positive(radius, "radius", allow_inf=True)
    theta = check_vector(theta, "theta", allow_empty=True)
    return _project_ball(theta, p, a, radius)


def _project_ball(theta, p, scale, radius):
    u = _link_inverse(theta, p, scale)
    if math.isfinite(radius):
        r = _norm_scaled(u, p)
        if r > radius:
            u = u * (radius / r)
    return u


def _coordinates(theta, c, p, log_kappa, mu):
    """Per-coordinate minimizer t of |t|^p/(p kappa) - theta_j t + mu |c_j + t| (x = c + t).

    The subdifferential at t = -c_j is psi'(-c_j) + [-mu, mu] with psi'(t) = sign(t)|t|^(p-1)
    / kappa - theta_j: the minimizer lies right of -c_j (x > 0, t = phi(kappa (theta_j - mu)))
    iff kappa (theta_j - mu) > sign(-c_j)|c_j|^(p-1), left (t = phi(kappa (theta_j + mu))) iff
    kappa (theta_j + mu) < sign(-c_j)|c_j|^(p-1), else t = -c_j (x_j = 0); phi(s) =
    sign(s)|s|^(q-1). Powers in log space: kappa may be far from 1.
    """
    q = p / (p - 1.0)
    kappa = math.exp(log_kappa)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ref = -np.sign(c) * np.exp((p - 1.0) * np.log(np.abs(c)))   # sign(-c)|c|^(p-1)
        hi, lo = theta - mu, theta + mu
        right = kappa * hi > ref
        left = kappa * lo < ref

        def phi(s):
            return np.sign(s) * np.exp((q - 1.0) * (log_kappa + np.log(np.abs(s))))
        t = np.where(right, phi(hi), np.where(left, phi(lo), -c))
    return np.where(np.isfinite(t), t, -c)


def _solve_kappa(theta, c, p, A, R, mu, tol):
    """kappa = min(kappa_free, kappa_R) by bisection on log kappa (both maps increase)."""
    def norm(lk):
        return _norm_scaled(_coordinates(theta, c, p, lk, mu), p)

    def bad(lk):
        # kappa A ||u||^(2-p) > 1 (past the free root), or the ball violated
        r = norm(lk)
        return (r > R) or (r > 0 and lk + math.log(A) + (2.0 - p) * math.log(r) > 0.0)
    # kappa stays within exp(+-700): beyond, the coordinates are 0 or saturated anyway.
    lo, hi = -5.0, 5.0
    while bad(lo) and lo > -690.0:
        lo -= 10.0
    while not bad(hi) and hi < 690.0:
        hi += 10.0
    if not bad(hi):
        return hi
    for _ in range(200):
        if hi - lo <= tol:
            break
        mid = 0.5 * (lo + hi)
        if bad(mid):
            hi = mid
        else:
            lo = mid
    return lo


def bregman_project_l1(theta, *, p, scale, center, radius=math.inf, l1_radius, tol=1e-12):
    r"""Exact argmin of :math:`\frac a2\|u\|_p^2 - \langle\theta,u\rangle` over
    :math:`\|u\|_p \le R`, :math:`\|c + u\|_1 \le D`; returns :math:`x = c + u`.

    Nested bisection (module docstring): :math:`\mu = 0` when the ball solution is already in
    the l1 ball; otherwise :math:`\mu` is bisected until :math:`\|x\|_1 = D` within ``tol``
    (relative), keeping the feasible end. The center must lie in the l1 ball.

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The dual point.
    p : float
        In (1, 2].
    scale : float
        a.
    center : ndarray of shape (d,)
        c, inside the l1 ball.
    radius : float, default=inf
        R of the p-norm ball around c.
    l1_radius : float
        D.
    tol : float, default=1e-12
        Relative tolerance of the bisection.

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    scale = check_positive(scale, "scale")
    radius = check_positive(radius, "radius", allow_inf=True)
    D = check_positive(l1_radius, "l1_radius")
    tol = check_scalar(tol, "tol", low=0.0, high=1.0)
    theta = check_vector(theta, "theta")
    c = check_vector(center, "center")
    if c.shape[0] != theta.shape[0]:
        raise ValueError(f"center must have length {theta.shape[0]} (the length of theta); "
                         f"got {c.shape[0]}.")
    with np.errstate(over="ignore"):
        c_norm = float(np.abs(c).sum())
    if not c_norm <= D:
        raise ValueError(f"center must lie in the l1 ball of radius l1_radius = {D!r}; got "
                         f"||center||_1 = {c_norm!r}.")
    return _project_l1(theta, p, scale, c, radius, D, tol)


def _project_l1(theta, p, scale, c, radius, D, tol):
    u = _project_ball(theta, p, scale, radius)
    if np.abs(c + u).sum() <= D:
        return c + u
    if p == 2.0:
        p = 2.0 - 1e-12        # the closed forms below need q finite; p = 2 is the limit
    ltol = 1e-13

    def point(mu):
        lk = _solve_kappa(theta, c, p, scale, radius, mu, ltol)
        return c + _coordinates(theta, c, p, lk, mu)
    lo, hi = 0.0, max(float(np.max(np.abs(theta))), 1e-300)
    while np.abs(point(hi)).sum() > D:
        hi *= 2.0
    x_hi = point(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        x = point(mid)
        if np.abs(x).sum() > D:
            lo = mid
        else:
            hi, x_hi = mid, x
        if hi - lo <= tol * hi:
            break
    norm = np.abs(x_hi).sum()
    if norm > D:                # rounding only
        x_hi = x_hi * (D / norm)
    return x_hi


def _lp_coordinates(theta, c, p, log_kappa, nu, t0=None):
    """Per-coordinate root t of G(t) = phi(t)/kappa + nu phi(c_j + t) - theta_j (nu > 0).

    phi(s) = sign(s)|s|^(p-1), so G increases: the root lies in [min(t1, -c), max(t1, -c)]
    with t1 = phi^-1(kappa theta) (there the first term is theta and the second has the sign
    of t + c) and in [min(t2, 0), max(t2, 0)] with t2 = -c + phi^-1(theta / nu). Newton
    steps in the intersection of the two brackets (a bisection step whenever Newton leaves
    it), from ``t0`` (a warm start) or the bracket's midpoint, until the residual is below
    1e-14 of the terms' size or the bracket is a few ulps wide (vectorized).
    """
    e = 1.0 / (p - 1.0)                   # q - 1
    kappa = math.exp(log_kappa)
    big = np.finfo(float).max
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        la = np.log(np.abs(theta))
        t1 = np.sign(theta) * np.exp(e * (log_kappa + la))
        t2 = -c + np.sign(theta) * np.exp(e * (la - math.log(nu)))
    t1 = np.clip(np.where(np.isnan(t1), 0.0, t1), -big, big)
    t2 = np.clip(np.where(np.isnan(t2), -c, t2), -big, big)
    lo = np.maximum(np.minimum(t1, -c), np.minimum(t2, 0.0))
    hi = np.minimum(np.maximum(t1, -c), np.maximum(t2, 0.0))
    hi = np.maximum(hi, lo)
    t = 0.5 * (lo + hi) if t0 is None else np.clip(t0, lo, hi)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        for _ in range(100):
            at, ac = np.abs(t), np.abs(c + t)
            f1 = at ** (p - 1.0) / kappa
            f2 = nu * ac ** (p - 1.0)
            g = np.sign(t) * f1 + np.sign(c + t) * f2 - theta
            done = (np.abs(g) <= 1e-14 * (f1 + f2 + np.abs(theta))) | \
                (hi - lo <= 1e-15 * (np.abs(lo) + np.abs(hi)) + 1e-300)
            if np.all(done):
                break
            pos = g > 0.0
            hi = np.where(pos & ~done, t, hi)
            lo = np.where(~pos & ~done, t, lo)
            dg = (p - 1.0) * (at ** (p - 2.0) / kappa + nu * ac ** (p - 2.0))
            tn = t - g / dg
            bad = ~((tn > lo) & (tn < hi))
            t = np.where(done, t, np.where(bad, 0.5 * (lo + hi), tn))
    return t


def _illinois(lo, hi, f_lo, f_hi):
    """Regula falsi point of a bracket with f_lo <= 0 < f_hi (the midpoint as a safeguard)."""
    if not (math.isfinite(f_lo) and math.isfinite(f_hi)) or f_hi - f_lo <= 0.0:
        return 0.5 * (lo + hi)
    x = lo - f_lo * (hi - lo) / (f_hi - f_lo)
    return x if lo < x < hi else 0.5 * (lo + hi)


def _solve_kappa_lp(theta, c, p, A, R, nu, tol, t0=None):
    """(log kappa, t): kappa = min(kappa_free, kappa_R) for the lp penalty nu, the largest
    log kappa with gap <= 0, gap = max(lk + log A + (2-p) log||t||, log||t|| - log R)
    (increasing in lk; as :func:`_solve_kappa`), by Illinois steps in a bracket."""
    lrm = math.log(R) if math.isfinite(R) else math.inf
    state = {"t": t0}

    def gap(lk):
        t = _lp_coordinates(theta, c, p, lk, nu, state["t"])
        state["t"] = t
        r = _norm_scaled(t, p)
        if r == 0.0:
            return -math.inf, t
        lr = math.log(r)
        return max(lk + math.log(A) + (2.0 - p) * lr, lr - lrm), t
    lo, hi = -5.0, 5.0
    f_lo, t_lo = gap(lo)
    while f_lo > 0.0 and lo > -690.0:
        lo -= 10.0
        f_lo, t_lo = gap(lo)
    f_hi, _ = gap(hi)
    while not f_hi > 0.0 and hi < 690.0:
        hi += 10.0
        f_hi, t_hi = gap(hi)
        if not f_hi > 0.0:
            lo, f_lo, t_lo = hi, f_hi, t_hi
    if not f_hi > 0.0:
        return hi, t_lo
    side = 0
    for _ in range(200):
        # the gap grows at least as fast as lk: f_lo >= -tol puts lo within tol of the root
        if hi - lo <= tol or f_lo >= -tol:
            break
        mid = _illinois(lo, hi, f_lo, f_hi)
        f_mid, t_mid = gap(mid)
        if f_mid > 0.0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo *= 0.5
            side = 1
        else:
            lo, f_lo, t_lo = mid, f_mid, t_mid
            if side == -1:
                f_hi *= 0.5
            side = -1
    return lo, t_lo


def bregman_project_lp(theta, *, p, scale, center, radius=math.inf, lp_radius, tol=1e-12):
    r"""Exact argmin of :math:`\frac a2\|u\|_p^2 - \langle\theta,u\rangle` over
    :math:`\|u\|_p \le R`, :math:`\|c + u\|_p \le D`; returns :math:`x = c + u`.

    The Bregman projection of Algorithm 5's step onto Algorithm 6's
    :math:`X_i = \{\|x\|_p \le D\} \cap \{\|x - c\|_p \le R\}` (module docstring): the radial
    clip when it lies in X, else the nested search over the X multiplier :math:`\nu` (kept at
    the feasible end, relative ``tol``). The center must lie in X.

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The dual point.
    p : float
        In (1, 2]: the exponent of the map and of both balls.
    scale : float
        a.
    center : ndarray of shape (d,)
        c, with :math:`\|c\|_p \le D`.
    radius : float, default=inf
        R of the localization ball around c.
    lp_radius : float
        D, the radius of X around 0.
    tol : float, default=1e-12
        Relative tolerance of the search on :math:`\nu`.

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    scale = check_positive(scale, "scale")
    radius = check_positive(radius, "radius", allow_inf=True)
    D = check_positive(lp_radius, "lp_radius")
    tol = check_scalar(tol, "tol", low=0.0, high=1.0)
    theta = check_vector(theta, "theta")
    c = check_vector(center, "center")
    if c.shape[0] != theta.shape[0]:
        raise ValueError(f"center must have length {theta.shape[0]} (the length of theta); "
                         f"got {c.shape[0]}.")
    c_norm = _norm_scaled(c, p)
    if not c_norm <= D * (1 + 1e-12):
        raise ValueError(f"center must lie in the lp ball of radius lp_radius = {D!r}; got "
                         f"||center||_p = {c_norm!r}.")
    return _project_lp(theta, p, scale, c, radius, D, tol)


def _project_lp(theta, p, scale, c, radius, D, tol):
    u = _project_ball(theta, p, scale, radius)
    f_lo = _norm_scaled(c + u, p) - D
    if f_lo <= 0.0:
        return c + u
    state = {"t": None}

    def point(nu):
        _, t = _solve_kappa_lp(theta, c, p, scale, radius, nu, 1e-13, state["t"])
        state["t"] = t
        x = c + t
        return x, _norm_scaled(x, p) - D
    # phi(nu) = ||x(nu)||_p - D decreases: bracket phi(lo) > 0 >= phi(hi), Illinois steps on
    # -nu, the feasible end kept (as the l1 kernel).
    lo, hi = 0.0, max(float(np.max(np.abs(theta))), 1e-300)
    x_hi, f_hi = point(hi)
    while f_hi > 0.0:
        lo, f_lo = hi, f_hi
        hi *= 2.0
        x_hi, f_hi = point(hi)
    side = 0
    for _ in range(200):
        if hi - lo <= tol * hi or f_hi >= -tol * D:
            break
        mid = -_illinois(-hi, -lo, f_hi, f_lo)
        x, f_mid = point(mid)
        if f_mid > 0.0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi *= 0.5
            side = 1
        else:
            hi, f_hi, x_hi = mid, f_mid, x
            if side == 1:
                f_lo *= 0.5
            side = -1
    norm = _norm_scaled(x_hi, p)
    if norm > D:                # rounding only
        x_hi = x_hi * (D / norm)
    return x_hi


def mirror_step(x, grad, step, *, p, scale, center, reg=0.0, radius=math.inf,
                l1_radius=None, lp_radius=None):
    r"""One composite mirror-descent step (note 2.2): the argmin over K of
    :math:`\langle g, x\rangle + \lambda h(x - c) + \frac1\eta D_h(x, x_k)`.

    K is the ball :math:`\|x - c\|_p \le R`, intersected with :math:`\|x\|_1 \le D` when
    ``l1_radius`` is given, or with :math:`\|x\|_p \le D` when ``lp_radius`` is given
    (Algorithm 6's :math:`X_i`; :func:`bregman_project_lp`). Returns the new x. ``x``, ``grad``, ``center``: finite vectors of
    one length; ``step``, ``scale`` in (0, inf); ``reg`` in [0, inf); ``radius`` in (0, inf];
    ``l1_radius`` in (0, inf). A step whose result leaves the float64 range raises a
    ValueError naming ``x``, ``grad`` and ``step``.

    Parameters
    ----------
    x : ndarray of shape (d,)
        The current iterate.
    grad : ndarray of shape (d,)
        The (noisy) gradient g.
    step : float
        :math:`\eta`.
    p : float
        In (1, 2].
    scale : float
        a.
    center : ndarray of shape (d,)
        c.
    reg : float, default=0.0
        :math:`\lambda`.
    radius : float, default=inf
        R.
    l1_radius : float, optional
        D of the l1 ball X.
    lp_radius : float, optional
        D of the lp ball X (p the map's exponent); not with ``l1_radius``.

    Returns
    -------
    ndarray of shape (d,)
    """
    p = check_p(p)
    if l1_radius is not None and lp_radius is not None:
        raise ValueError("give at most one of l1_radius and lp_radius (X is one ball).")
    step = check_positive(step, "step")
    scale = check_positive(scale, "scale")
    reg = check_scalar(reg, "reg", low=0.0, low_open=False)
    radius = check_positive(radius, "radius", allow_inf=True)
    x = check_vector(x, "x")
    grad = _same_length(check_vector(grad, "grad"), x.shape[0], "grad")
    center = _same_length(check_vector(center, "center"), x.shape[0], "center")
    with np.errstate(over="ignore", invalid="ignore"):
        u0 = x - center
        try:
            link = _link(_finite_or_raise(u0, "x and center are", "x - center"), p, scale)
        except ValueError as exc:   # name this function's arguments, not the link's
            raise ValueError(f"x, center and scale are too large for the mirror map: {exc}") \
                from None
        theta = link - step * grad
        A = scale * (1.0 + step * reg)
    theta = _finite_or_raise(theta, "x, grad and step are", "the dual point")
    if not math.isfinite(A):
        raise ValueError(f"step * reg too large: scale * (1 + step * reg) exceeds the float64 "
                         f"range; got step={step!r}, reg={reg!r}.")
    if lp_radius is not None:
        D = check_positive(lp_radius, "lp_radius")
        c_norm = _norm_scaled(center, p)
        if not c_norm <= D * (1 + 1e-12):
            raise ValueError(f"center must lie in the lp ball of radius lp_radius = {D!r}; "
                             f"got ||center||_p = {c_norm!r}.")
        return _project_lp(theta, p, A, center, radius, D, 1e-12)
    if l1_radius is None:
        with np.errstate(over="ignore"):
            out = center + _project_ball(theta, p, A, radius)
        return _finite_or_raise(out, "x, grad and step are", "the new point")
    D = check_positive(l1_radius, "l1_radius")
    with np.errstate(over="ignore"):
        c_norm = float(np.abs(center).sum())
    if not c_norm <= D:
        raise ValueError(f"center must lie in the l1 ball of radius l1_radius = {D!r}; got "
                         f"||center||_1 = {c_norm!r}.")
    return _project_l1(theta, p, A, center, radius, D, 1e-12)


def entropic_step(logw, grad, step, radius):
    r"""EG+- on the l1 ball (note 2.2, 9.6): log-weights of the 2d vertices :math:`\pm D e_j`.

    ``logw`` (2d,) holds :math:`(\log w^+, \log w^-)`; returns the normalized new log-weights
    (log-sum-exp) and :math:`x = D (w^+ - w^-)`.

    Parameters
    ----------
    logw : ndarray of shape (2 d,)
        The log-weights.
    grad : ndarray of shape (d,)
        The gradient.
    step : float
        :math:`\eta`.
    radius : float
        D.

    Returns
    -------
    logw : ndarray of shape (2 d,)
    x : ndarray of shape (d,)
    """
    step = check_positive(step, "step")
    radius = check_positive(radius, "radius")
    grad = check_vector(grad, "grad")
    logw = check_vector(logw, "logw")
    if logw.shape[0] != 2 * grad.shape[0]:
        raise ValueError(f"logw must have length {2 * grad.shape[0]} (twice the length of "
                         f"grad); got {logw.shape[0]}.")
    with np.errstate(over="ignore", invalid="ignore"):
        shift = step * radius * np.concatenate([grad, -grad])
        logw = logw - shift
    if not np.all(np.isfinite(logw)):
        raise ValueError("grad, step and radius are too large: step * radius * grad exceeds "
                         "the float64 range.")
    return _entropic_step(logw, grad.size, radius)


def _entropic_step(logw, d, radius):
    """The normalization of :func:`entropic_step` on already shifted log-weights."""
    top = logw.max()
    with np.errstate(over="ignore"):
        logw = (logw - top) - np.log(np.sum(np.exp(logw - top)))
    # a weight below exp(-1.8e308) is 0 either way; keep its log finite (-1.8e308)
    logw = np.maximum(logw, -np.finfo(np.float64).max)
    w = np.exp(logw)
    return logw, radius * (w[:d] - w[d:])
