# cython: language_level=3
"""Noisy p-norm mirror descent (Algorithm 1/5 of Asi, Feldman, Koren and Talwar 2021): the
inner loop of ``localized_mirror_descent`` and ``noisy_mirror_descent`` (note 004, sections
2.1-2.3 and 9.4).

Design
- ``md_run_dense`` runs T steps on the rows ``rows`` of a dense C-ordered X, serially (one
  random stream, no ``prange``): per step k = 1..T,

      batch  = {i in rows : U_i < q}                      (Poisson; one uniform per row)
      g      = sum_{i in batch} clip(l'(<a_i, x>, y_i)) a_i  (clip_weight: l2 norm <= C)
      g      = (g + N(0, noise_scale^2 I)) / expected_batch
      theta  = grad h(x - c) - eta_k g,  A = scale (1 + eta_k reg)
      x      = c + argmin_{||u||_p <= R, ||c + u||_1 <= D} A/2 ||u||_p^2 - <theta, u>
               (or ||c + u||_p <= D with ``lp_radius``: bregman_project_lp)
      avg   += w_k (x - avg)

  with eta_k = 2 / (lambda (k + 1)) and w_k = 2 / (k + 1) when ``strongly_convex`` = lambda
  > 0, else eta_k = ``step`` and w_k = 1 / k. The projection is the radial clip of
  grad h*(theta) / ... when the result lies in the l1 ball, else the exact nested bisection of
  ``dpsco_core.mirror_maps.bregman_project_l1`` (same brackets, tolerances and iteration
  caps).
- Draw order (one bit generator): per step, ``len(rows)`` standard uniforms in row order, then
  (if noise_scale > 0) d normals in coordinate order: what ``rng.random(len(rows))`` and
  ``rng.normal(0, noise_scale, d)`` draw, so the twin ``dpsco_core.reference.mirror`` (the
  same loop on ``mirror_maps``) sees the same batches and the same noise. Its results agree
  to rounding only (numpy's exp/log and BLAS sums are not libm's and these loops), so the
  tests compare with a relative tolerance.
- Powers follow note 9.4: ``|t|^e = exp(e log|t|)`` on max-scaled vectors (entries in [0, 1]),
  so nothing overflows for q - 1 = ln d.
- Ctrl-C: signals are polled between steps (``_interrupt.pxd``); an interrupted call raises
  with ``x_out`` and ``avg_out`` partly written.
- Margins, the l2 clip and the gradient accumulation are ``_batch.pxd``'s ``dot_row``,
  ``clip_weight`` and ``axpy_row``.
"""

from libc.math cimport INFINITY, exp, fabs, fmax, fmin, isfinite, log, log1p, pow, sqrt
import numpy as np
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_normal, random_standard_uniform
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t

from _interrupt cimport Interrupt, POLL_WORK, interrupt_init, poll, raise_if_interrupted

from _batch cimport axpy_row, clip_weight, dot_row
from _loss cimport loss_deriv


cdef inline double _sign(double v) noexcept nogil:
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


cdef double _max_abs(const double *v, Py_ssize_t d) noexcept nogil:
    cdef double m = 0.0
    cdef Py_ssize_t j
    for j in range(d):
        if fabs(v[j]) > m:
            m = fabs(v[j])
    return m


cdef void _scaled_link(const double *v, Py_ssize_t d, double e, double a_norm_exp,
                       double p_norm, double coef, double *out) noexcept nogil:
    """out = coef m ||v / m||_{p_norm}^{a_norm_exp} sign(v) |v / m|^e (0 for v = 0).

    pnorm_link: e = p - 1, p_norm = p, a_norm_exp = 2 - p, coef = a. pnorm_link_inverse:
    e = q - 1, p_norm = q, a_norm_exp = 2 - q, coef = 1 / a (``_scaled_power`` and
    ``_norm_scaled`` of mirror_maps).
    """
    cdef double m = _max_abs(v, d), s = 0.0, t, factor
    cdef Py_ssize_t j
    if m == 0.0 or not isfinite(m):
        for j in range(d):
            out[j] = 0.0
        return
    for j in range(d):
        t = fabs(v[j]) / m
        if t > 0.0:
            s += exp(p_norm * log(t))
    factor = coef * m * pow(pow(s, 1.0 / p_norm), a_norm_exp)
    for j in range(d):
        t = fabs(v[j]) / m
        out[j] = factor * (_sign(v[j]) * exp(e * log(t))) if t > 0.0 else 0.0


cdef double _project_ball(const double *theta, Py_ssize_t d, double p, double A, double R,
                          double *u) noexcept nogil:
    """Radial clip of grad h*(theta) to ||u||_p <= R (mirror_maps.bregman_project_ball);
    returns the clip factor (1 when the ball does not bind).

    One log and two exps per coordinate: ``|t|^(q-1)`` and ``|t|^q`` share ``log|t|``, and
    ``||grad h*(theta)||_p = ||theta||_q / A`` (note 2.2) needs no second pass.
    """
    cdef double q, m, s = 0.0, lt, qnorm, factor, r, clip = 1.0
    cdef Py_ssize_t j
    m = _max_abs(theta, d)
    if m == 0.0 or not isfinite(m):
        for j in range(d):
            u[j] = 0.0
        qnorm = 0.0
    elif p == 2.0:
        for j in range(d):
            u[j] = theta[j] / A
            s += (theta[j] / m) * (theta[j] / m)
        qnorm = m * sqrt(s)
    else:
        q = p / (p - 1.0)
        for j in range(d):
            if theta[j] != 0.0:
                lt = log(fabs(theta[j]) / m)
                u[j] = _sign(theta[j]) * exp((q - 1.0) * lt)
                s += exp(q * lt)
            else:
                u[j] = 0.0
        qnorm = m * pow(s, 1.0 / q)
        factor = m * pow(pow(s, 1.0 / q), 2.0 - q) / A
        for j in range(d):
            u[j] = factor * u[j]
    r = qnorm / A
    if isfinite(R) and r > R:
        clip = R / r
        for j in range(d):
            u[j] = u[j] * clip
    return clip


# The l1-ball projection (mirror_maps.bregman_project_l1) bisects mu, and for each mu bisects
# log kappa on ||t(kappa, mu)||_p. Everything that does not depend on kappa is computed once
# per mu (_MuTables), so that each kappa evaluation is O(d) comparisons and additions, no
# powers: t_j = sign(s_j) (kappa |s_j|)^(q-1) for a free coordinate (s_j = theta_j -+ mu),
# hence |t_j|^p = kappa^q |s_j|^q ((q - 1) p = q), and t_j = -c_j for a clamped one.

cdef struct _MuTables:
    double *ref      # sign(-c_j) |c_j|^(p-1)           (per projection)
    double *cp       # |c_j|^p                          (per projection)
    double *hq       # (|theta_j - mu| / M)^q            (per mu)
    double *lq       # (|theta_j + mu| / M)^q            (per mu)
    double log_m     # log M, M = max_j max(|theta_j - mu|, |theta_j + mu|)


cdef void _tables_c(const double *c, Py_ssize_t d, double p, _MuTables *tb) noexcept nogil:
    cdef Py_ssize_t j
    cdef double lc
    for j in range(d):
        lc = log(fabs(c[j]))
        tb.ref[j] = -_sign(c[j]) * exp((p - 1.0) * lc)
        tb.cp[j] = exp(p * lc)


cdef void _tables_mu(const double *theta, Py_ssize_t d, double q, double mu,
                     _MuTables *tb) noexcept nogil:
    cdef Py_ssize_t j
    cdef double m = 0.0, a, b
    for j in range(d):
        a = fabs(theta[j] - mu)
        b = fabs(theta[j] + mu)
        if a > m:
            m = a
        if b > m:
            m = b
    if m == 0.0:
        m = 1.0
    tb.log_m = log(m)
    for j in range(d):
        tb.hq[j] = exp(q * log(fabs(theta[j] - mu) / m))
        tb.lq[j] = exp(q * log(fabs(theta[j] + mu) / m))


cdef double _log_norm(const double *theta, Py_ssize_t d, double p, double q, double lk,
                      double mu, const _MuTables *tb) noexcept nogil:
    """log ||t(kappa, mu)||_p (-inf for t = 0), from the tables: no powers."""
    cdef double kappa = exp(lk), free = 0.0, clamped = 0.0, a, b
    cdef Py_ssize_t j
    for j in range(d):
        if kappa * (theta[j] - mu) > tb.ref[j]:
            free += tb.hq[j]
        elif kappa * (theta[j] + mu) < tb.ref[j]:
            free += tb.lq[j]
        else:
            clamped += tb.cp[j]
    # ||t||_p^p = exp(q (lk + log M)) free + clamped, added in log space
    a = q * (lk + tb.log_m) + log(free) if free > 0.0 else -INFINITY
    b = log(clamped) if clamped > 0.0 else -INFINITY
    if a == -INFINITY and b == -INFINITY:
        return -INFINITY
    if a < b:
        a, b = b, a
    return (a + log1p(exp(b - a))) / p


cdef void _coordinates(const double *theta, const double *c, Py_ssize_t d, double p,
                       double log_kappa, double mu, double *t) noexcept nogil:
    """Per-coordinate minimizer of |t|^p/(p kappa) - theta_j t + mu |c_j + t| (x = c + t);
    mirror_maps._coordinates."""
    cdef double q = p / (p - 1.0), kappa = exp(log_kappa), ref, hi, lo, s, v
    cdef Py_ssize_t j
    for j in range(d):
        ref = -_sign(c[j]) * exp((p - 1.0) * log(fabs(c[j])))
        hi = theta[j] - mu
        lo = theta[j] + mu
        if kappa * hi > ref:
            s = hi
        elif kappa * lo < ref:
            s = lo
        else:
            t[j] = -c[j]
            continue
        v = _sign(s) * exp((q - 1.0) * (log_kappa + log(fabs(s))))
        t[j] = v if isfinite(v) else -c[j]


cdef double _kappa_gap(const double *theta, Py_ssize_t d, double p, double q, double A,
                       double log_r_max, double mu, double lk, const _MuTables *tb) noexcept nogil:
    """max(lk + log A + (2 - p) log ||t||, log ||t|| - log R): increasing in lk, positive
    exactly where mirror_maps._solve_kappa's ``bad`` holds (past the free root, or outside
    the ball); -inf for t = 0."""
    cdef double lr = _log_norm(theta, d, p, q, lk, mu, tb)
    if lr == -INFINITY:
        return -INFINITY
    return fmax(lk + log(A) + (2.0 - p) * lr, lr - log_r_max)


cdef inline double _illinois(double lo, double hi, double f_lo, double f_hi) noexcept nogil:
    """Regula falsi point of a bracket with f_lo <= 0 < f_hi; the midpoint when a value is
    infinite or the point is not strictly inside the bracket (safeguards)."""
    cdef double x
    if not (isfinite(f_lo) and isfinite(f_hi)) or f_hi - f_lo <= 0.0:
        return 0.5 * (lo + hi)
    x = lo - f_lo * (hi - lo) / (f_hi - f_lo)
    if not (lo < x < hi):
        return 0.5 * (lo + hi)
    return x


cdef double _solve_kappa(const double *theta, Py_ssize_t d, double p, double A, double R,
                         double mu, double tol, const _MuTables *tb) noexcept nogil:
    """log kappa = min(kappa_free, kappa_R): the largest lk with gap <= 0, to ``tol``.

    The brackets of mirror_maps._solve_kappa, then Illinois (regula falsi) steps instead of
    bisection: the gap is continuous and increasing, so the root is the same to the tolerance,
    in far fewer evaluations.
    """
    cdef double lo = -5.0, hi = 5.0, mid, q = p / (p - 1.0), f_lo, f_hi, f_mid
    cdef double lrm = log(R) if isfinite(R) else INFINITY
    cdef int it, side = 0
    f_lo = _kappa_gap(theta, d, p, q, A, lrm, mu, lo, tb)
    while f_lo > 0.0 and lo > -690.0:
        lo -= 10.0
        f_lo = _kappa_gap(theta, d, p, q, A, lrm, mu, lo, tb)
    f_hi = _kappa_gap(theta, d, p, q, A, lrm, mu, hi, tb)
    while not (f_hi > 0.0) and hi < 690.0:
        hi += 10.0
        f_hi = _kappa_gap(theta, d, p, q, A, lrm, mu, hi, tb)
    if not (f_hi > 0.0):
        return hi
    for it in range(200):
        # the gap grows at least as fast as lk (slope >= 1): f_lo >= -tol puts lo within tol
        if hi - lo <= tol or f_lo >= -tol:
            break
        mid = _illinois(lo, hi, f_lo, f_hi)
        f_mid = _kappa_gap(theta, d, p, q, A, lrm, mu, mid, tb)
        if f_mid > 0.0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo = 0.5 * f_lo
            side = 1
        else:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi = 0.5 * f_hi
            side = -1
    return lo


cdef double _l1_point(const double *theta, const double *c, Py_ssize_t d, double p, double A,
                      double R, double mu, double *x, _MuTables *tb) noexcept nogil:
    """x = c + t(kappa(mu), mu); returns ||x||_1."""
    cdef double lk, s = 0.0
    cdef Py_ssize_t j
    _tables_mu(theta, d, p / (p - 1.0), mu, tb)
    lk = _solve_kappa(theta, d, p, A, R, mu, 1e-13, tb)
    _coordinates(theta, c, d, p, lk, mu, x)
    for j in range(d):
        x[j] = c[j] + x[j]
        s += fabs(x[j])
    return s


cdef bint _project_l1(const double *theta, const double *c, Py_ssize_t d, double p, double A,
                      double R, double D, double *x, double *scratch) noexcept nogil:
    """Exact Bregman projection onto the ball and the l1 ball (mirror_maps.bregman_project_l1:
    the same bracket and tolerance 1e-12 on mu, Illinois steps on the decreasing
    ||x(mu)||_1 - D, the feasible end kept); ``x`` holds the radial-clip point c + u on entry,
    the result on exit. ``scratch`` has 5 d doubles. Returns whether the l1 constraint bound
    (x is then not the radial-clip point)."""
    cdef double s = 0.0, lo = 0.0, hi, mid, norm, f_lo, f_hi, f_mid
    cdef Py_ssize_t j
    cdef int it, side = 0
    cdef _MuTables tb
    cdef double *trial = scratch
    for j in range(d):
        s += fabs(x[j])
    if s <= D:
        return False
    f_lo = s - D                  # mu = 0: the radial-clip point (no l1 multiplier)
    if p == 2.0:
        p = 2.0 - 1e-12
    tb.ref = scratch + d
    tb.cp = scratch + 2 * d
    tb.hq = scratch + 3 * d
    tb.lq = scratch + 4 * d
    _tables_c(c, d, p, &tb)
    hi = _max_abs(theta, d)
    if hi < 1e-300:
        hi = 1e-300
    f_hi = _l1_point(theta, c, d, p, A, R, hi, x, &tb) - D
    while f_hi > 0.0:
        lo, f_lo = hi, f_hi
        hi *= 2.0
        f_hi = _l1_point(theta, c, d, p, A, R, hi, x, &tb) - D
    # phi(mu) = ||x(mu)||_1 - D decreases: bracket with phi(lo) > 0 >= phi(hi); x = x(hi).
    for it in range(200):
        # stop on the bisection's bracket width, or once x(hi) is feasible and within a
        # relative 1e-12 of the boundary
        if hi - lo <= 1e-12 * hi or f_hi >= -1e-12 * D:
            break
        mid = _illinois(-hi, -lo, f_hi, f_lo)      # increasing in -mu
        mid = -mid
        f_mid = _l1_point(theta, c, d, p, A, R, mid, trial, &tb) - D
        if f_mid > 0.0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi = 0.5 * f_hi
            side = 1
        else:
            hi, f_hi = mid, f_mid
            for j in range(d):
                x[j] = trial[j]
            if side == 1:
                f_lo = 0.5 * f_lo
            side = -1
    norm = 0.0
    for j in range(d):
        norm += fabs(x[j])
    if norm > D:
        for j in range(d):
            x[j] = x[j] * (D / norm)
    return True


# The lp-ball projection (mirror_maps.bregman_project_lp): the X constraint ||c + u||_p <= D
# with multiplier nu on (1/p)||c + u||_p^p; for fixed (kappa, nu) each coordinate solves the
# increasing equation phi(t)/kappa + nu phi(c_j + t) = theta_j (phi(s) = sign(s)|s|^(p-1)) by
# safeguarded Newton in the bracket of mirror_maps._lp_coordinates, warm-started at the
# previous evaluation's root (``t`` in and out).

cdef void _lp_coordinates(const double *theta, const double *c, Py_ssize_t d, double p,
                          double lk, double nu, double *t, bint warm) noexcept nogil:
    cdef double e = 1.0 / (p - 1.0), kappa = exp(lk), la, t1, t2, lo, hi, tj, at, ac, f1, f2
    cdef double g, dg, tn, big = 1.7976931348623157e308
    cdef Py_ssize_t j
    cdef int it
    for j in range(d):
        if theta[j] != 0.0:
            la = log(fabs(theta[j]))
            t1 = _sign(theta[j]) * exp(e * (lk + la))
            t2 = -c[j] + _sign(theta[j]) * exp(e * (la - log(nu)))
        else:
            t1 = 0.0
            t2 = -c[j]
        t1 = fmin(fmax(t1, -big), big)
        t2 = fmin(fmax(t2, -big), big)
        lo = fmax(fmin(t1, -c[j]), fmin(t2, 0.0))
        hi = fmin(fmax(t1, -c[j]), fmax(t2, 0.0))
        hi = fmax(hi, lo)
        tj = fmin(fmax(t[j], lo), hi) if warm else 0.5 * (lo + hi)
        for it in range(100):
            at = fabs(tj)
            ac = fabs(c[j] + tj)
            f1 = pow(at, p - 1.0) / kappa
            f2 = nu * pow(ac, p - 1.0)
            g = _sign(tj) * f1 + _sign(c[j] + tj) * f2 - theta[j]
            if fabs(g) <= 1e-14 * (f1 + f2 + fabs(theta[j])) or \
                    hi - lo <= 1e-15 * (fabs(lo) + fabs(hi)) + 1e-300:
                break
            if g > 0.0:
                hi = tj
            else:
                lo = tj
            dg = (p - 1.0) * (pow(at, p - 2.0) / kappa + nu * pow(ac, p - 2.0))
            tn = tj - g / dg
            if not (tn > lo and tn < hi):
                tn = 0.5 * (lo + hi)
            tj = tn
        t[j] = tj


cdef double _pnorm(const double *v, Py_ssize_t d, double p) noexcept nogil:
    """||v||_p = m ||v / m||_p (mirror_maps._norm_scaled)."""
    cdef double m = _max_abs(v, d), s = 0.0, a
    cdef Py_ssize_t j
    if m == 0.0:
        return 0.0
    for j in range(d):
        a = fabs(v[j]) / m
        if a > 0.0:
            s += exp(p * log(a))
    return m * pow(s, 1.0 / p)


cdef double _lp_gap(const double *theta, const double *c, Py_ssize_t d, double p, double A,
                    double lrm, double nu, double lk, double *t, bint warm) noexcept nogil:
    cdef double r, lr
    _lp_coordinates(theta, c, d, p, lk, nu, t, warm)
    r = _pnorm(t, d, p)
    if r == 0.0:
        return -INFINITY
    lr = log(r)
    return fmax(lk + log(A) + (2.0 - p) * lr, lr - lrm)


cdef void _solve_kappa_lp(const double *theta, const double *c, Py_ssize_t d, double p,
                          double A, double R, double nu, double tol, double *t, double *t_lo,
                          bint warm) noexcept nogil:
    """mirror_maps._solve_kappa_lp: t_lo holds the coordinates at the returned log kappa;
    ``t`` is the warm start and scratch."""
    cdef double lo = -5.0, hi = 5.0, mid, f_lo, f_hi, f_mid
    cdef double lrm = log(R) if isfinite(R) else INFINITY
    cdef int it, side = 0
    cdef Py_ssize_t j
    f_lo = _lp_gap(theta, c, d, p, A, lrm, nu, lo, t, warm)
    while f_lo > 0.0 and lo > -690.0:
        lo -= 10.0
        f_lo = _lp_gap(theta, c, d, p, A, lrm, nu, lo, t, True)
    for j in range(d):
        t_lo[j] = t[j]
    f_hi = _lp_gap(theta, c, d, p, A, lrm, nu, hi, t, True)
    while not (f_hi > 0.0) and hi < 690.0:
        for j in range(d):
            t_lo[j] = t[j]
        lo, f_lo = hi, f_hi
        hi += 10.0
        f_hi = _lp_gap(theta, c, d, p, A, lrm, nu, hi, t, True)
    if not (f_hi > 0.0):
        for j in range(d):
            t_lo[j] = t[j]
        return
    for it in range(200):
        if hi - lo <= tol or f_lo >= -tol:
            break
        mid = _illinois(lo, hi, f_lo, f_hi)
        f_mid = _lp_gap(theta, c, d, p, A, lrm, nu, mid, t, True)
        if f_mid > 0.0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo = 0.5 * f_lo
            side = 1
        else:
            lo, f_lo = mid, f_mid
            for j in range(d):
                t_lo[j] = t[j]
            if side == -1:
                f_hi = 0.5 * f_hi
            side = -1


cdef double _lp_point(const double *theta, const double *c, Py_ssize_t d, double p, double A,
                      double R, double D, double nu, double *x, double *t, bint warm) noexcept nogil:
    """x = c + t(kappa(nu), nu); returns ||x||_p - D."""
    cdef Py_ssize_t j
    _solve_kappa_lp(theta, c, d, p, A, R, nu, 1e-13, t, x, warm)
    for j in range(d):
        t[j] = x[j]             # the warm start of the next nu
        x[j] = c[j] + x[j]
    return _pnorm(x, d, p) - D


cdef bint _project_lp(const double *theta, const double *c, Py_ssize_t d, double p, double A,
                      double R, double D, double *x, double *scratch) noexcept nogil:
    """Exact Bregman projection onto the ball and the lp ball of radius D around 0
    (mirror_maps.bregman_project_lp: the same brackets, Illinois steps and tolerances);
    ``x`` holds the radial-clip point on entry, the result on exit; ``scratch`` 2 d doubles.
    Returns whether the X constraint bound."""
    cdef double lo = 0.0, hi, mid, norm, f_lo, f_hi, f_mid
    cdef Py_ssize_t j
    cdef int it, side = 0
    cdef double *t = scratch
    cdef double *trial = scratch + d
    f_lo = _pnorm(x, d, p) - D
    if f_lo <= 0.0:
        return False
    hi = _max_abs(theta, d)
    if hi < 1e-300:
        hi = 1e-300
    f_hi = _lp_point(theta, c, d, p, A, R, D, hi, x, t, False)
    while f_hi > 0.0:
        lo, f_lo = hi, f_hi
        hi *= 2.0
        f_hi = _lp_point(theta, c, d, p, A, R, D, hi, x, t, True)
    for it in range(200):
        if hi - lo <= 1e-12 * hi or f_hi >= -1e-12 * D:
            break
        mid = -_illinois(-hi, -lo, f_hi, f_lo)
        f_mid = _lp_point(theta, c, d, p, A, R, D, mid, trial, t, True)
        if f_mid > 0.0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi = 0.5 * f_hi
            side = 1
        else:
            hi, f_hi = mid, f_mid
            for j in range(d):
                x[j] = trial[j]
            if side == 1:
                f_lo = 0.5 * f_lo
            side = -1
    norm = _pnorm(x, d, p)
    if norm > D:
        for j in range(d):
            x[j] = x[j] * (D / norm)
    return True


def project_lp(const double[::1] theta, const double[::1] center, double p, double scale,
               double radius, double lp_radius):
    """The radial clip, then :func:`_project_lp` (tests and timing; mirror_maps.
    bregman_project_lp without its argument checks)."""
    cdef Py_ssize_t d = theta.shape[0], j
    cdef double[::1] x = np.empty(d)
    cdef double[::1] u = np.empty(d)
    cdef double[::1] scratch = np.empty(2 * max(d, 1))
    with nogil:
        _project_ball(&theta[0], d, p, scale, radius, &u[0])
        for j in range(d):
            x[j] = center[j] + u[j]
        _project_lp(&theta[0], &center[0], d, p, scale, radius, lp_radius, &x[0], &scratch[0])
    return np.asarray(x)


def md_run_dense(const double[:, ::1] X,        # IN  (n, d) C-ordered
                 const double[::1] y,           # IN  (n,)
                 const Py_ssize_t[::1] rows,    # IN  the chunk's rows (Poisson candidates)
                 int loss_kind, double loss_param,
                 const double[::1] row_norms,   # IN  (n,) ||a_i||_2
                 double clip,                   # C: ||clip(l') a_i||_2 <= C
                 const double[::1] x_start,     # IN  (d,) x_1
                 const double[::1] center,      # IN  (d,) c (the phase's center)
                 double p, double scale, double reg, double ball_radius, double l1_radius,
                 Py_ssize_t steps, double q, double expected_batch, double noise_scale,
                 double step, double strongly_convex,
                 object bit_generator,          # IN  one numpy BitGenerator (the step stream)
                 double[::1] x_out,             # OUT (d,) last iterate
                 double[::1] avg_out,           # OUT (d,) the (weighted) average
                 double lp_radius=INFINITY):    # D of X = {||x||_p <= D} (Algorithm 6)
    """T noisy composite p-norm mirror steps (module docstring); returns the batch-size sum.

    ``l1_radius = inf``: no l1 constraint; ``ball_radius = inf``: no localization ball;
    ``lp_radius`` finite: X is the lp ball of radius ``lp_radius`` (p the map's exponent;
    not with a finite ``l1_radius``).
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = rows.shape[0], k, j, t, i
    cdef Py_ssize_t total = 0, n_clipped = 0, budget = POLL_WORK
    cdef Interrupt it
    cdef double eta, A, w, r, link_factor = 1.0
    cdef bint explicit_link = True
    cdef bitgen_t *gen
    cdef double *g = NULL
    cdef double *theta = NULL
    cdef double *u = NULL
    cdef double *xs = NULL
    cdef double *scratch = NULL
    if x_start.shape[0] != d or center.shape[0] != d or x_out.shape[0] != d or \
            avg_out.shape[0] != d or y.shape[0] != n or row_norms.shape[0] != n:
        raise ValueError("x_start, center, x_out and avg_out need one entry per feature; y "
                         "and row_norms one per row of X")
    for t in range(m):
        if rows[t] < 0 or rows[t] >= n:
            raise ValueError("rows must index rows of X")
    gen = <bitgen_t *> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
    g = <double *> malloc(max(d, 1) * sizeof(double))
    theta = <double *> malloc(max(d, 1) * sizeof(double))
    u = <double *> malloc(max(d, 1) * sizeof(double))
    xs = <double *> malloc(max(d, 1) * sizeof(double))
    scratch = <double *> malloc(5 * max(d, 1) * sizeof(double))
    interrupt_init(&it)
    try:
        if g == NULL or theta == NULL or u == NULL or xs == NULL or scratch == NULL:
            raise MemoryError()
        with nogil:
            for j in range(d):
                xs[j] = x_start[j]
                avg_out[j] = 0.0
            for k in range(1, steps + 1):
                if poll(&it, &budget, m + 8 * d):
                    break
                # g = sum over the Poisson batch of the clipped per-row gradients
                for j in range(d):
                    g[j] = 0.0
                for t in range(m):
                    if random_standard_uniform(gen) < q:
                        i = rows[t]
                        total += 1
                        r = loss_deriv(loss_kind,
                                       dot_row[int64_t](&X[i, 0], NULL, d, xs), y[i],
                                       loss_param)
                        r = clip_weight(r, row_norms[i], clip, &n_clipped)
                        axpy_row[int64_t](r, &X[i, 0], NULL, d, g)
                        budget -= 2 * d
                if noise_scale > 0.0:
                    for j in range(d):
                        g[j] = g[j] + random_normal(gen, 0.0, noise_scale)
                for j in range(d):
                    g[j] = g[j] / expected_batch
                eta = 2.0 / (strongly_convex * (k + 1)) if strongly_convex > 0.0 else step
                # theta = grad h(x - c) - eta g, h = (scale / 2) ||.||_p^2. After a radial
                # clip, x - c = clip grad h*_A(theta_prev), so grad h(x - c) = (scale / A)
                # clip theta_prev (the maps are inverse and 1-homogeneous): no powers.
                if explicit_link:
                    for j in range(d):
                        u[j] = xs[j] - center[j]
                    _scaled_link(u, d, p - 1.0, 2.0 - p, p, scale, theta)
                else:
                    for j in range(d):
                        theta[j] = link_factor * theta[j]
                for j in range(d):
                    theta[j] = theta[j] - eta * g[j]
                A = scale * (1.0 + eta * reg)
                link_factor = scale / A * _project_ball(theta, d, p, A, ball_radius, u)
                for j in range(d):
                    xs[j] = center[j] + u[j]
                explicit_link = False
                if isfinite(l1_radius):
                    explicit_link = _project_l1(theta, &center[0], d, p, A, ball_radius,
                                                l1_radius, xs, scratch)
                elif isfinite(lp_radius):
                    explicit_link = _project_lp(theta, &center[0], d, p, A, ball_radius,
                                                lp_radius, xs, scratch)
                w = 2.0 / (k + 1) if strongly_convex > 0.0 else 1.0 / k
                for j in range(d):
                    avg_out[j] = avg_out[j] + w * (xs[j] - avg_out[j])
            for j in range(d):
                x_out[j] = xs[j]
    finally:
        free(g)
        free(theta)
        free(u)
        free(xs)
        free(scratch)
    raise_if_interrupted(&it)
    return total
